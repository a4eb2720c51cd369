//! Cube's own eval files as a `check` suite, read where and as Cube reads
//! them. The agents folder is `CUBE_CLOUD_AGENTS_CONFIG_PATH` under the
//! repository root, else `agents/` (a folder named `agents` inside it holds
//! agent definitions, never the root). Questions come from
//! `eval_questions.yml` and `eval_questions/*.yml` (each a top-level
//! `eval_questions` list and an optional `space`); a single question file
//! is read with its enclosing agents folder. Certified queries come from
//! every YAML file under the folder (a flat `certified_queries` list, or
//! `spaces: [{name, certified_queries}]` and `agents: [{space,
//! certified_queries}]`) and from Markdown files (`.md`, `.markdown`) whose
//! kind is a certified query: by `kind:`, by a `certified_queries/`,
//! `certified-queries/` or `queries/` folder (nested ones too), or by
//! frontmatter holding `user_request` or `sql_query`. A question's
//! `certifiedQuery` is looked up in its space, then in `auto`. Everything
//! else Cube keeps there (rules, skills, agent settings, files that are not
//! YAML or Markdown) is not ours and never an error. Everything is read and
//! validated before anything is sent; each error names the file and line.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::quarantine::{parse_file, today, QUARANTINE_FILE};
use super::suite::{read_text, Budgets, Case, CaseTurn, ExpectedRows, GroundTruth, RowsSource, DEFAULT_CASE_TIMEOUT};
use crate::api::data::DataSettings;
use crate::error::usage;
use crate::expect::Comparison;
use crate::expect::Expectations;
use crate::identity::IdentityInput;
use crate::text::did_you_mean;

/// The folders whose Markdown files are certified queries, at any depth
/// under the agents folder.
const CERTIFIED_FOLDERS: [&str; 3] = ["certified_queries", "certified-queries", "queries"];

/// The folders whose Markdown files are rules or skills, not ours.
const OTHER_FOLDERS: [&str; 2] = ["rules", "skills"];

/// The folder where Cube looks for its agents config, under a repository root.
const DEFAULT_AGENTS_FOLDER: &str = "agents";

/// The space whose questions keep their bare names.
const DEFAULT_SPACE: &str = "auto";

/// True when `path` is Cube's eval files rather than a TOML suite: a
/// folder, or a `.yml`/`.yaml` file.
pub fn is_cube_suite(path: &Path) -> bool {
    path.is_dir() || has_extension(path, &["yml", "yaml"])
}

fn has_extension(path: &Path, extensions: &[&str]) -> bool {
    path.extension()
        .and_then(|ext| ext.to_str())
        .is_some_and(|ext| extensions.iter().any(|wanted| ext.eq_ignore_ascii_case(wanted)))
}

/// One eval questions file.
#[derive(Deserialize)]
struct QuestionsFile {
    #[serde(default)]
    space: Option<String>,
    eval_questions: Option<Vec<Spanned<Option<QuestionItem>>>>,
}

/// One question as the file gives it (other keys are ignored).
#[derive(Deserialize)]
struct QuestionItem {
    name: Option<String>,
    question: Option<String>,
    sql: Option<String>,
    #[serde(rename = "certifiedQuery")]
    certified_query: Option<String>,
}

/// A certified query's fields, from Markdown frontmatter or YAML.
#[derive(Deserialize)]
struct CertifiedFields {
    name: Option<String>,
    user_request: Option<String>,
    sql_query: Option<String>,
}

/// A Markdown file's frontmatter: what tells its kind and space, and a
/// certified query's fields. Each field is named here, not flattened in:
/// a flattened field reads what YAML types (`user_request: yes`, `name:
/// 2024`) as a boolean or a number, where Cube reads text.
#[derive(Deserialize)]
struct Frontmatter {
    kind: Option<String>,
    space: Option<String>,
    name: Option<String>,
    user_request: Option<String>,
    sql_query: Option<String>,
}

impl Frontmatter {
    /// Its certified query's fields.
    fn fields(&self) -> CertifiedFields {
        CertifiedFields {
            name: self.name.clone(),
            user_request: self.user_request.clone(),
            sql_query: self.sql_query.clone(),
        }
    }
}

/// A YAML file of the agents folder: only what holds certified queries is
/// read — the flat form (space `auto` or the file's `space`) or the
/// `spaces` and `agents` arrays, not both. An empty item of a list (Cube's
/// own templates leave `- # Certified query definitions...` as a
/// placeholder) is valid YAML and is skipped, as Cube's loader skips it.
#[derive(Deserialize)]
struct ConfigFile {
    space: Option<String>,
    certified_queries: Option<Vec<Spanned<Option<CertifiedFields>>>>,
    spaces: Option<Vec<Spanned<Option<SpaceItem>>>>,
    agents: Option<Vec<Spanned<Option<SpaceItem>>>>,
}

/// An item of `spaces:` (its `name` is the space) or `agents:` (its
/// `space` is).
#[derive(Deserialize)]
struct SpaceItem {
    name: Option<String>,
    space: Option<String>,
    certified_queries: Option<Vec<Spanned<Option<CertifiedFields>>>>,
}

/// A certified query: its space and name, the request it answers, its SQL
/// (Markdown comments taken out) and where it is defined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertifiedQuery {
    /// Its space (`auto` unless it says).
    pub space: String,
    /// Its name (else its file's, without the extension).
    pub name: String,
    /// `user_request`: the question it answers.
    pub user_request: String,
    /// The SQL, run as the ground truth.
    pub sql: String,
    /// `file:line` of its definition.
    pub place: String,
}

/// Where Cube's files of a suite are: the agents folder and the question
/// files, in name order.
struct Layout {
    /// None for a question file outside any agents folder.
    agents: Option<PathBuf>,
    questions: Vec<PathBuf>,
}

/// Reads Cube's eval files at `path` (a YAML file, an agents folder or a
/// repository holding one) into cases; with `certified`, every certified
/// query is also a case (`certified/NAME`). `agents_path` is
/// `CUBE_CLOUD_AGENTS_CONFIG_PATH`; `base` is who asks; `data` is the data
/// query API, which runs every ground truth (`None` when nothing will run:
/// `--list`).
pub fn load(
    path: &Path,
    agents_path: Option<&Path>,
    certified: bool,
    base: &IdentityInput,
    data: Option<&DataSettings>,
    limit: Option<Duration>,
) -> Result<Vec<Case>> {
    let layout = layout(path, agents_path)?;
    let queries = certified_queries(&layout)?;
    let settings = base.validate()?;
    let mut cases: Vec<Case> = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut add = |name: String, space: &str, place: String, question: String, truth: GroundTruth| -> Result<()> {
        if let Some(first) = seen.get(&name) {
            return Err(usage(format!(
                "{place}: the question name {name:?} is used twice in its space (first at {first})"
            )));
        }
        seen.insert(name.clone(), place.clone());
        cases.push(Case {
            index: cases.len() + 1,
            name,
            source: place,
            space: Some(space.to_string()),
            settings: settings.clone(),
            branch: None,
            default_branch: false,
            timeout: DEFAULT_CASE_TIMEOUT,
            turns: vec![CaseTurn {
                question,
                expectations: Expectations::default(),
                rows: Some(ExpectedRows {
                    source: RowsSource::GroundTruth(truth),
                    how: Comparison::default(),
                }),
                asks_back: false,
                images: Vec::new(),
            }],
            budgets: Budgets::default(),
            repeat: 1,
            pass_rate: 1.0,
            quarantine: None,
        });
        Ok(())
    };
    for file in &layout.questions {
        let text = read_text(file, limit)?;
        let shown = file.display().to_string();
        let parsed: QuestionsFile = parse_yaml(&text, &shown, 0)?;
        let space = non_blank(parsed.space).unwrap_or_else(|| DEFAULT_SPACE.to_string());
        let items = parsed
            .eval_questions
            .ok_or_else(|| usage(format!("{shown}:1: no eval_questions list")))?;
        for item in items {
            let place = format!("{shown}:{}", item.referenced.line());
            // An empty item (`- ` with a comment only) asks nothing.
            let Some(item) = item.value else { continue };
            let name = non_blank(item.name).ok_or_else(|| usage(format!("{place}: a question needs a name")))?;
            let question =
                non_blank(item.question).ok_or_else(|| usage(format!("{place}: question {name:?} has no question")))?;
            let truth = match (item.sql, item.certified_query) {
                (Some(_), Some(_)) => {
                    return Err(usage(format!(
                        "{place}: question {name:?} gives both sql and certifiedQuery: give one ground truth"
                    )))
                }
                (None, None) => {
                    return Err(usage(format!(
                        "{place}: question {name:?} has no ground truth: give sql or certifiedQuery"
                    )))
                }
                (Some(sql), None) if sql.trim().is_empty() => {
                    return Err(usage(format!("{place}: question {name:?}: the sql is empty")))
                }
                (Some(sql), None) => GroundTruth::Sql(sql.trim().to_string()),
                (None, Some(wanted)) => {
                    let wanted = wanted.trim();
                    let found = [space.as_str(), DEFAULT_SPACE].iter().find_map(|space| {
                        queries
                            .iter()
                            .find(|query| query.space == *space && query.name == wanted)
                    });
                    match found {
                        Some(query) => GroundTruth::Sql(query.sql.clone()),
                        None => GroundTruth::NotFound(wanted.to_string()),
                    }
                }
            };
            let name = match space.as_str() {
                DEFAULT_SPACE => name,
                space => format!("{space}/{name}"),
            };
            add(name, &space, place, question, truth)?;
        }
    }
    if certified {
        for query in &queries {
            let name = match query.space.as_str() {
                DEFAULT_SPACE => format!("certified/{}", query.name),
                space => format!("certified/{space}/{}", query.name),
            };
            add(
                name,
                &query.space,
                query.place.clone(),
                query.user_request.clone(),
                GroundTruth::Sql(query.sql.clone()),
            )?;
        }
    }
    quarantine(&mut cases, &quarantine_file(&layout), certified, limit)?;
    if cases.is_empty() {
        let hint = match certified {
            true => "",
            false => " (--certified also asks every certified query)",
        };
        return Err(usage(format!("{}: no eval question to run{hint}", path.display())));
    }
    if let Some(data) = data {
        data.check().map_err(|err| {
            usage(format!(
                "{}: the ground truth runs through the data query API: {err:#}",
                path.display()
            ))
        })?;
    }
    Ok(cases)
}

/// Where the quarantine of a suite's questions is kept: beside its agents
/// folder (or, for a question file outside one, beside the file).
fn quarantine_file(layout: &Layout) -> PathBuf {
    let beside = match &layout.agents {
        Some(agents) => std::path::absolute(agents)
            .ok()
            .and_then(|agents| agents.parent().map(Path::to_path_buf)),
        None => layout
            .questions
            .first()
            .and_then(|file| file.parent().map(Path::to_path_buf)),
    };
    beside.unwrap_or_default().join(QUARANTINE_FILE)
}

/// Sets each case's quarantine from `file` (`analyst-quarantine.toml`),
/// whose keys name a case as `space/name` or by its name as reports show
/// it. A key that names no question is an error (a quarantine that
/// quietly misses its case would gate it); one naming a certified query
/// is let be when `--certified` is off.
fn quarantine(cases: &mut [Case], file: &Path, certified: bool, limit: Option<Duration>) -> Result<()> {
    if !file.exists() {
        return Ok(());
    }
    let text = read_text(file, limit)?;
    let mut quarantines = parse_file(&file.display().to_string(), &text, today())?;
    for case in cases.iter_mut() {
        let bare = case.name.rsplit('/').next().unwrap_or(&case.name);
        let spaced = format!("{}/{bare}", case.space.as_deref().unwrap_or(DEFAULT_SPACE));
        case.quarantine = quarantines.remove(&case.name).or_else(|| quarantines.remove(&spaced));
    }
    let unknown: Vec<&String> = quarantines
        .keys()
        .filter(|key| certified || !key.starts_with("certified/"))
        .collect();
    match unknown.first() {
        None => Ok(()),
        Some(key) => Err(usage(format!(
            "{}: {key:?} names no question of the suite: write \"space/name\" (or the name a report shows)",
            file.display()
        ))),
    }
}

/// The agents folder of `path` and its question files. A file is read
/// with the agents folder that encloses it; a folder is the agents folder
/// when it holds Cube's files itself, else its `agents_path` or `agents/`.
fn layout(path: &Path, agents_path: Option<&Path>) -> Result<Layout> {
    if !path.is_dir() {
        let folder = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = agents_path
            .and_then(Path::file_name)
            .unwrap_or(std::ffi::OsStr::new(DEFAULT_AGENTS_FOLDER));
        let agents = enclosing_agents(folder, name);
        return Ok(Layout {
            agents,
            questions: vec![path.to_path_buf()],
        });
    }
    // The folder named is the agents folder when it holds Cube's files;
    // else the variable says where, and a wrong place is an error, never a
    // quiet fall back to agents/ (CI would grade other questions than Cube).
    let configured = match agents_path {
        Some(relative) if !holds_agents_config(path) => {
            let configured = path.join(relative);
            if !holds_agents_config(&configured) {
                return Err(usage(format!(
                    "CUBE_CLOUD_AGENTS_CONFIG_PATH={}: {} is not Cube's agents folder (it holds no eval_questions.yml, eval_questions/, certified queries, spaces/ or config.yml); set it to the agents folder's path under {}",
                    relative.display(),
                    configured.display(),
                    path.display()
                )));
            }
            Some(configured)
        }
        _ => None,
    };
    let candidates: Vec<PathBuf> = configured
        .iter()
        .cloned()
        .chain([path.to_path_buf(), path.join(DEFAULT_AGENTS_FOLDER)])
        .collect();
    let agents = candidates
        .iter()
        .find(|folder| holds_agents_config(folder))
        .cloned()
        .ok_or_else(|| {
            let looked: Vec<String> = candidates.iter().map(|folder| folder.display().to_string()).collect();
            usage(format!(
                "{}: no eval questions and no certified queries in {}: give Cube's agents folder (eval_questions.yml, eval_questions/, certified_queries/…) or the repository that holds it",
                path.display(),
                looked.join(" or ")
            ))
        })?;
    let mut questions: Vec<PathBuf> = ["eval_questions.yml", "eval_questions.yaml"]
        .iter()
        .map(|name| agents.join(name))
        .filter(|file| file.is_file())
        .collect();
    questions.extend(files_ending(&agents.join("eval_questions"), &["yml", "yaml"])?);
    Ok(Layout {
        agents: Some(agents),
        questions,
    })
}

/// Every file of Cube's eval files at `path` that [`load`] reads: the
/// question files and each YAML and Markdown file of the agents folder.
pub fn files_read(path: &Path, agents_path: Option<&Path>) -> Result<Vec<PathBuf>> {
    let layout = layout(path, agents_path)?;
    let mut files = Vec::new();
    if let Some(agents) = &layout.agents {
        files_under(agents, &mut files)?;
    }
    files.retain(|file| has_extension(file, &["yml", "yaml", "md", "markdown"]));
    let quarantine = quarantine_file(&layout);
    files.extend(layout.questions);
    if quarantine.exists() {
        files.push(quarantine);
    }
    Ok(files)
}

/// True when `folder` holds what Cube keeps in an agents folder: eval
/// questions, certified queries, spaces or its config.
fn holds_agents_config(folder: &Path) -> bool {
    let files = ["eval_questions.yml", "eval_questions.yaml", "config.yml", "config.yaml"];
    let folders = ["eval_questions", "spaces"].iter().chain(CERTIFIED_FOLDERS.iter());
    folder.is_dir()
        && (files.iter().any(|name| folder.join(name).is_file())
            || folders.into_iter().any(|name| folder.join(name).is_dir()))
}

/// The agents folder a question file in `folder` belongs to: that folder
/// (the parent of an `eval_questions/` folder), or the nearest folder up
/// from it named as Cube names the agents folder (`name`), when it holds
/// Cube's agents config.
fn enclosing_agents(folder: &Path, name: &std::ffi::OsStr) -> Option<PathBuf> {
    let folder = std::fs::canonicalize(folder).ok()?;
    let own = match folder.file_name().is_some_and(|last| last == "eval_questions") {
        true => folder.parent()?.to_path_buf(),
        false => folder.clone(),
    };
    let named = folder.ancestors().find(|ancestor| ancestor.file_name() == Some(name));
    let found = [Some(own.as_path()), named]
        .into_iter()
        .flatten()
        .find(|candidate| holds_agents_config(candidate))
        .map(Path::to_path_buf);
    found
}

/// The files of `folder` whose extension is one of `extensions` (none
/// when the folder does not exist), in name order.
fn files_ending(folder: &Path, extensions: &[&str]) -> Result<Vec<PathBuf>> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Ok(Vec::new());
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|err| usage(format!("cannot read {}: {err}", folder.display())))?
            .path();
        if has_extension(&path, extensions) && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Every file under `folder` at any depth, in name order: hidden entries
/// and links to folders left out (a link could lead in a circle).
fn files_under(folder: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Ok(());
    };
    let mut paths: Vec<PathBuf> = entries
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<_, _>>()
        .map_err(|err| usage(format!("cannot read {}: {err}", folder.display())))?;
    paths.sort();
    for path in paths {
        if path
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with('.'))
        {
            continue;
        }
        if path.is_dir() && !crate::files::is_link(&path) {
            files_under(&path, files)?;
        } else if path.is_file() {
            files.push(path);
        }
    }
    Ok(())
}

/// Every certified query of the agents folder, from its YAML and Markdown
/// files (the question files aside). A name given twice in one space is
/// refused.
fn certified_queries(layout: &Layout) -> Result<Vec<CertifiedQuery>> {
    let Some(agents) = &layout.agents else {
        return Ok(Vec::new());
    };
    let mut files = Vec::new();
    files_under(agents, &mut files)?;
    let question_folder = agents.join("eval_questions");
    let mut queries: Vec<CertifiedQuery> = Vec::new();
    for file in files {
        let is_question_file = file.starts_with(&question_folder)
            || layout.questions.iter().any(|question| same_file(question, &file))
            || file.parent() == Some(agents.as_path()) && file.file_stem().is_some_and(|stem| stem == "eval_questions");
        if is_question_file {
            continue;
        }
        let relative = file.strip_prefix(agents).unwrap_or(&file);
        if has_extension(&file, &["yml", "yaml"]) {
            queries.extend(yaml_queries(&file)?);
        } else if has_extension(&file, &["md", "markdown"]) {
            queries.extend(markdown_query(&file, relative)?);
        }
    }
    let mut seen: HashMap<(&str, &str), &str> = HashMap::new();
    for query in &queries {
        if let Some(first) = seen.insert((&query.space, &query.name), &query.place) {
            return Err(usage(format!(
                "{}: the certified query name {:?} is used twice in space {} (first at {first})",
                query.place, query.name, query.space
            )));
        }
    }
    Ok(queries)
}

fn same_file(a: &Path, b: &Path) -> bool {
    same_file::is_same_file(a, b).unwrap_or(false)
}

/// The certified queries of a YAML file of the agents folder.
fn yaml_queries(file: &Path) -> Result<Vec<CertifiedQuery>> {
    // Found by walking a folder: a regular file, nothing to wait on.
    let text = read_text(file, None)?;
    let shown = file.display().to_string();
    if text
        .lines()
        .all(|line| line.trim().is_empty() || line.trim_start().starts_with('#'))
    {
        return Ok(Vec::new());
    }
    let config: ConfigFile = parse_yaml(&text, &shown, 0)?;
    let file_space = non_blank(config.space).unwrap_or_else(|| DEFAULT_SPACE.to_string());
    if config.certified_queries.is_some() && (config.spaces.is_some() || config.agents.is_some()) {
        return Err(usage(format!(
            "{shown}:1: the file has both a top-level certified_queries list and spaces:/agents: arrays: Cube reads one style per file"
        )));
    }
    let mut queries = Vec::new();
    let mut take = |items: Option<Vec<Spanned<Option<CertifiedFields>>>>, space: &str| -> Result<()> {
        for item in items.into_iter().flatten() {
            let place = format!("{shown}:{}", item.referenced.line());
            let Some(fields) = item.value else { continue };
            let name = fields.name.clone().unwrap_or_default();
            queries.push(certified(fields, None, space, &place, &name)?);
        }
        Ok(())
    };
    take(config.certified_queries, &file_space)?;
    for (items, names_space) in [(config.spaces, true), (config.agents, false)] {
        for item in items.into_iter().flatten() {
            let place = format!("{shown}:{}", item.referenced.line());
            let Some(item) = item.value else { continue };
            let space = non_blank(match names_space {
                true => item.name,
                false => item.space,
            });
            let space = match (space, names_space) {
                (Some(space), _) => space,
                (None, false) => DEFAULT_SPACE.to_string(),
                (None, true) if item.certified_queries.is_none() => continue,
                (None, true) => return Err(usage(format!("{place}: a space needs a name"))),
            };
            take(item.certified_queries, &space)?;
        }
    }
    Ok(queries)
}

/// The certified query of a Markdown file, when it is one (`relative` is
/// its path under the agents folder): its `kind`, else a certified folder
/// it is in, else frontmatter holding `user_request` or `sql_query`, says
/// so. Rules, skills and other Markdown are not ours.
fn markdown_query(file: &Path, relative: &Path) -> Result<Option<CertifiedQuery>> {
    let in_folder = |names: &[&str]| {
        relative.parent().is_some_and(|parent| {
            parent
                .components()
                .any(|part| names.iter().any(|name| part.as_os_str() == *name))
        })
    };
    let in_certified = in_folder(&CERTIFIED_FOLDERS);
    // Found by walking a folder: a regular file, nothing to wait on.
    let text = read_text(file, None)?;
    let shown = file.display().to_string();
    let Some((front, body, body_line)) = frontmatter(&text) else {
        return match in_certified {
            true => Err(usage(format!(
                "{shown}:1: a certified query starts with YAML frontmatter between --- lines"
            ))),
            false => Ok(None),
        };
    };
    let front = front.ok_or_else(|| usage(format!("{shown}:1: the frontmatter has no closing --- line")))?;
    let parsed: Frontmatter = match parse_yaml(front, &shown, 1) {
        Ok(parsed) => parsed,
        // Markdown that is not ours may hold any frontmatter.
        Err(_) if !in_certified && !front.contains("user_request") && !front.contains("sql_query") => return Ok(None),
        Err(err) => return Err(err),
    };
    let is_certified = match parsed.kind.as_deref().map(str::trim) {
        Some(kind) => ["certified_query", "certified-query", "certified_queries"].contains(&kind),
        None if in_certified => true,
        None if in_folder(&OTHER_FOLDERS) => false,
        None => parsed.user_request.is_some() || parsed.sql_query.is_some(),
    };
    if !is_certified {
        return Ok(None);
    }
    let stem = file
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = parsed
        .name
        .clone()
        .filter(|name| !name.trim().is_empty())
        .unwrap_or(stem);
    let space = non_blank(parsed.space.clone()).unwrap_or_else(|| DEFAULT_SPACE.to_string());
    let body_place = format!("{shown}:{body_line}");
    let query = certified(
        parsed.fields(),
        Some((body, &body_place)),
        &space,
        &format!("{shown}:1"),
        &name,
    )?;
    Ok(Some(query))
}

/// A Markdown text's frontmatter (`None` inside when it is not closed),
/// its body and the body's first line; `None` when the text does not
/// start with a `---` line.
fn frontmatter(text: &str) -> Option<(Option<&str>, &str, usize)> {
    let rest = text.strip_prefix("---\n").or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            let body = &rest[offset + line.len()..];
            let body_line = rest[..offset].matches('\n').count() + 3;
            return Some((Some(&rest[..offset]), body, body_line));
        }
        offset += line.len();
    }
    Some((None, "", 1))
}

/// A certified query from its fields (and its Markdown `body`, with the
/// place it starts): the request is required, and SQL from `sql_query` or
/// the body, its Markdown comments and any code fence taken out.
fn certified(
    fields: CertifiedFields,
    body: Option<(&str, &str)>,
    space: &str,
    place: &str,
    name: &str,
) -> Result<CertifiedQuery> {
    let name = name.trim();
    if name.is_empty() {
        return Err(usage(format!("{place}: a certified query needs a name")));
    }
    let user_request = non_blank(fields.user_request)
        .ok_or_else(|| usage(format!("{place}: certified query {name:?} has no user_request")))?;
    let (sql, sql_place) = match (fields.sql_query.as_deref(), body) {
        (Some(sql), _) => (sql_of(sql), place),
        (None, Some((body, body_place))) => (sql_of(body), body_place),
        (None, None) => (String::new(), place),
    };
    if sql.is_empty() {
        return Err(usage(format!(
            "{sql_place}: certified query {name:?} has no SQL (sql_query, or the Markdown body)"
        )));
    }
    Ok(CertifiedQuery {
        space: space.to_string(),
        name: name.to_string(),
        user_request,
        sql,
        place: place.to_string(),
    })
}

/// `text` trimmed, when some is left.
fn non_blank(text: Option<String>) -> Option<String> {
    text.map(|text| text.trim().to_string()).filter(|text| !text.is_empty())
}

/// The SQL of a certified query's text: Markdown comments (`<!-- … -->`,
/// notes for the agent, not SQL) and a surrounding code fence removed.
pub fn sql_of(text: &str) -> String {
    let mut sql = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        sql.push_str(&rest[..start]);
        rest = match rest[start..].find("-->") {
            Some(end) => &rest[start + end + 3..],
            None => "",
        };
    }
    sql.push_str(rest);
    let lines: Vec<&str> = sql
        .lines()
        .filter(|line| !line.trim_start().starts_with("```"))
        .collect();
    lines.join("\n").trim().to_string()
}

/// Parses YAML `text` of the file `shown` that starts `skipped` lines into
/// it (a Markdown file's frontmatter starts after its `---`); an error is
/// `file:line: …`, the line counted from the file's first.
fn parse_yaml<T: for<'de> Deserialize<'de>>(text: &str, shown: &str, skipped: usize) -> Result<T> {
    serde_saphyr::from_str(text).map_err(|err| {
        let line = err.location().map_or(1, |location| location.line() as usize) + skipped;
        let message = err.without_snippet().to_string();
        let message = message.lines().next().unwrap_or("not YAML");
        usage(format!(
            "{shown}:{line}: not valid eval YAML: {}",
            did_you_mean(message)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_comments_and_fences_are_not_sql() {
        let text = "<!-- Use this for weekly revenue -->\n```sql\nSELECT 1 <!-- inline -->\nFROM t\n```\n";
        assert_eq!(sql_of(text), "SELECT 1 \nFROM t");
    }

    #[test]
    fn frontmatter_and_body_are_found_with_the_body_line() {
        let (front, body, line) = frontmatter("---\nname: a\nuser_request: b\n---\nSELECT 1\n").unwrap();
        assert_eq!(front, Some("name: a\nuser_request: b\n"));
        assert_eq!((body, line), ("SELECT 1\n", 5));
        assert_eq!(frontmatter("---\r\nname: a\r\n---\r\nx").unwrap().1, "x");
        assert_eq!(frontmatter("---\nname: a\n").unwrap().0, None);
        assert!(frontmatter("# Title\n").is_none());
    }
}
