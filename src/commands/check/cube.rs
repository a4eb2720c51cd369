//! Cube's own eval files as a `check` suite: `agents/eval_questions.yml`
//! and `agents/eval_questions/*.yml` (each a top-level `eval_questions`
//! list and an optional `space`), their ground truth inline (`sql`) or a
//! certified query (`certifiedQuery`) from `certified_queries/`,
//! `certified-queries/` or `queries/` (Markdown: YAML frontmatter, the SQL
//! in `sql_query` or the body) and from `config.yml`'s `certified_queries`.
//! Everything is read and validated before anything is sent; each error
//! names the file and the line. Keys Cube may add later are accepted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::suite::{Budgets, Case, CaseTurn, ExpectedRows, GroundTruth, RowsSource, DEFAULT_CASE_TIMEOUT};
use crate::error::usage;
use crate::expect::Comparison;
use crate::settings::{DataSettings, Expectations, IdentityInput};

/// The folders certified queries are kept in, under `agents/`.
const CERTIFIED_FOLDERS: [&str; 3] = ["certified_queries", "certified-queries", "queries"];

/// The space whose questions keep their bare names.
const DEFAULT_SPACE: &str = "auto";

/// True when `path` is Cube's eval files rather than a TOML suite: a
/// folder, or a `.yml`/`.yaml` file.
pub fn is_cube_suite(path: &Path) -> bool {
    path.is_dir()
        || path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("yml") || ext.eq_ignore_ascii_case("yaml"))
}

/// One eval questions file.
#[derive(Deserialize)]
struct QuestionsFile {
    #[serde(default)]
    space: Option<String>,
    eval_questions: Option<Vec<Spanned<QuestionItem>>>,
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

/// A certified query's fields, from Markdown frontmatter or `config.yml`.
#[derive(Deserialize)]
struct CertifiedFields {
    name: Option<String>,
    user_request: Option<String>,
    sql_query: Option<String>,
}

/// `config.yml`: only its `certified_queries` list is read.
#[derive(Deserialize)]
struct AgentsConfig {
    #[serde(default)]
    certified_queries: Vec<Spanned<CertifiedFields>>,
}

/// A certified query: its name, the request it answers and its SQL (with
/// Markdown comments taken out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertifiedQuery {
    /// Its name (else its file's, without `.md`).
    pub name: String,
    /// `user_request`: the question it answers.
    pub user_request: String,
    /// The SQL, run as the ground truth.
    pub sql: String,
}

/// Reads Cube's eval files at `path` (a YAML file, an `agents/` folder or
/// a folder holding one) into cases; with `certified`, every certified
/// query is also a case (`certified/NAME`). `base` is who asks; `data` is
/// the data query API, which runs every ground truth.
pub fn load(path: &Path, certified: bool, base: &IdentityInput, data: &DataSettings) -> Result<Vec<Case>> {
    let (agents, question_files) = question_files(path)?;
    let queries = certified_queries(&agents)?;
    let settings = base.validate()?;
    let mut cases: Vec<Case> = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut add = |name: String, place: String, question: String, truth: GroundTruth| -> Result<()> {
        if let Some(first) = seen.get(&name) {
            return Err(usage(format!(
                "{place}: the question name {name:?} is used twice in its space (first at {first})"
            )));
        }
        seen.insert(name.clone(), place);
        cases.push(Case {
            index: cases.len() + 1,
            name,
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
            }],
            budgets: Budgets::default(),
            repeat: 1,
            pass_rate: 1.0,
        });
        Ok(())
    };
    for file in &question_files {
        let text = read(file)?;
        let shown = file.display().to_string();
        let parsed: QuestionsFile = parse_yaml(&text, &shown)?;
        let space = parsed
            .space
            .filter(|space| !space.trim().is_empty() && space != DEFAULT_SPACE);
        let items = parsed
            .eval_questions
            .ok_or_else(|| usage(format!("{shown}:1: no eval_questions list")))?;
        for item in items {
            let place = format!("{shown}:{}", item.referenced.line());
            let item = item.value;
            let name = item
                .name
                .map(|name| name.trim().to_string())
                .filter(|name| !name.is_empty())
                .ok_or_else(|| usage(format!("{place}: a question needs a name")))?;
            let question = item
                .question
                .map(|question| question.trim().to_string())
                .filter(|question| !question.is_empty())
                .ok_or_else(|| usage(format!("{place}: question {name:?} has no question")))?;
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
                (None, Some(wanted)) => match queries.iter().find(|query| query.name == wanted.trim()) {
                    Some(query) => GroundTruth::Sql(query.sql.clone()),
                    None => GroundTruth::NotFound(wanted.trim().to_string()),
                },
            };
            let name = match &space {
                Some(space) => format!("{space}/{name}"),
                None => name,
            };
            add(name, place, question, truth)?;
        }
    }
    if certified {
        for query in &queries {
            add(
                format!("certified/{}", query.name),
                format!("certified query {}", query.name),
                query.user_request.clone(),
                GroundTruth::Sql(query.sql.clone()),
            )?;
        }
    }
    if cases.is_empty() {
        return Err(usage(format!("{}: no eval question to run", path.display())));
    }
    data.check().map_err(|err| {
        usage(format!(
            "{}: the ground truth runs through the data query API: {err:#}",
            path.display()
        ))
    })?;
    Ok(cases)
}

/// The `agents/` folder and its question files, in name order: the file
/// itself, or the folder's `eval_questions.yml` and `eval_questions/*.yml`.
fn question_files(path: &Path) -> Result<(PathBuf, Vec<PathBuf>)> {
    if !path.is_dir() {
        let parent = path.parent().unwrap_or(Path::new("."));
        let agents = match parent.file_name().is_some_and(|name| name == "eval_questions") {
            true => parent.parent().unwrap_or(Path::new(".")),
            false => parent,
        };
        return Ok((agents.to_path_buf(), vec![path.to_path_buf()]));
    }
    let agents = match path.join("agents").is_dir() {
        true => path.join("agents"),
        false => path.to_path_buf(),
    };
    let mut files: Vec<PathBuf> = ["eval_questions.yml", "eval_questions.yaml"]
        .iter()
        .map(|name| agents.join(name))
        .filter(|file| file.is_file())
        .collect();
    files.extend(files_ending(&agents.join("eval_questions"), &["yml", "yaml"])?);
    if files.is_empty() {
        return Err(usage(format!(
            "{}: no eval_questions.yml and no eval_questions/*.yml: is this Cube's agents/ folder?",
            agents.display()
        )));
    }
    Ok((agents, files))
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
        let wanted = path
            .extension()
            .and_then(|ext| ext.to_str())
            .is_some_and(|ext| extensions.iter().any(|wanted| ext.eq_ignore_ascii_case(wanted)));
        if wanted && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Every certified query of `agents`: the Markdown files of its certified
/// folders, then `config.yml`'s list. A name given twice is refused.
fn certified_queries(agents: &Path) -> Result<Vec<CertifiedQuery>> {
    let mut queries: Vec<(CertifiedQuery, String)> = Vec::new();
    for folder in CERTIFIED_FOLDERS {
        for file in files_ending(&agents.join(folder), &["md"])? {
            let text = read(&file)?;
            let shown = file.display().to_string();
            let stem = file
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_default();
            let query = markdown_query(&text, &shown, &stem)?;
            queries.push((query, format!("{shown}:1")));
        }
    }
    for name in ["config.yml", "config.yaml"] {
        let file = agents.join(name);
        if !file.is_file() {
            continue;
        }
        let text = read(&file)?;
        let shown = file.display().to_string();
        let config: AgentsConfig = parse_yaml(&text, &shown)?;
        for item in config.certified_queries {
            let place = format!("{shown}:{}", item.referenced.line());
            let name = item.value.name.clone().unwrap_or_default();
            let query = certified(item.value, None, &place, &name)?;
            queries.push((query, place));
        }
    }
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for (query, place) in &queries {
        if let Some(first) = seen.insert(&query.name, place) {
            return Err(usage(format!(
                "{place}: the certified query name {:?} is used twice (first at {first})",
                query.name
            )));
        }
    }
    Ok(queries.into_iter().map(|(query, _)| query).collect())
}

/// A certified query from a Markdown file: YAML frontmatter between `---`
/// lines, the SQL in `sql_query` or else the body.
fn markdown_query(text: &str, shown: &str, stem: &str) -> Result<CertifiedQuery> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or_else(|| {
            usage(format!(
                "{shown}:1: a certified query starts with YAML frontmatter between --- lines"
            ))
        })?;
    let end = rest
        .find("\n---")
        .ok_or_else(|| usage(format!("{shown}:1: the frontmatter has no closing --- line")))?;
    let (front, body) = (&rest[..end], &rest[end + 4..]);
    let body = body.split_once('\n').map_or("", |(_, body)| body);
    let fields: CertifiedFields = parse_yaml(front, shown)?;
    let name = fields
        .name
        .clone()
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| stem.to_string());
    certified(fields, Some(body), &format!("{shown}:1"), &name)
}

/// A certified query from its fields (and its Markdown `body`): the
/// request is required, and SQL from `sql_query` or the body, its Markdown
/// comments and any code fence taken out.
fn certified(fields: CertifiedFields, body: Option<&str>, place: &str, name: &str) -> Result<CertifiedQuery> {
    let name = name.trim();
    if name.is_empty() {
        return Err(usage(format!("{place}: a certified query needs a name")));
    }
    let user_request = fields
        .user_request
        .map(|request| request.trim().to_string())
        .filter(|request| !request.is_empty())
        .ok_or_else(|| usage(format!("{place}: certified query {name:?} has no user_request")))?;
    let sql = sql_of(fields.sql_query.as_deref().or(body).unwrap_or_default());
    if sql.is_empty() {
        return Err(usage(format!(
            "{place}: certified query {name:?} has no SQL (sql_query, or the Markdown body)"
        )));
    }
    Ok(CertifiedQuery {
        name: name.to_string(),
        user_request,
        sql,
    })
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

fn read(file: &Path) -> Result<String> {
    std::fs::read_to_string(file).map_err(|err| usage(format!("cannot read {}: {err}", file.display())))
}

/// Parses YAML `text` of the file `shown`; an error is `file:line: …`.
fn parse_yaml<T: for<'de> Deserialize<'de>>(text: &str, shown: &str) -> Result<T> {
    serde_saphyr::from_str(text).map_err(|err| {
        let line = err.location().map_or(1, |location| location.line());
        let message = err.without_snippet().to_string();
        let message = message.lines().next().unwrap_or("not YAML");
        usage(format!("{shown}:{line}: not valid eval YAML: {message}"))
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
    fn a_certified_query_takes_its_name_from_the_file_when_not_given() {
        let text = "---\nuser_request: Revenue by month?\n---\nSELECT 1\n";
        let query = markdown_query(text, "q.md", "monthly").unwrap();
        assert_eq!(query.name, "monthly");
        assert_eq!(query.sql, "SELECT 1");
        let text = "---\nname: given\nuser_request: Revenue?\nsql_query: SELECT 2\nowner: x\n---\nignored\n";
        let query = markdown_query(text, "q.md", "monthly").unwrap();
        assert_eq!((query.name.as_str(), query.sql.as_str()), ("given", "SELECT 2"));
    }
}
