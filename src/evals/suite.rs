//! A `check` suite file: TOML with `[defaults]` and `[[case]]` tables, read
//! and validated whole before anything runs. Every error names the file, the
//! line and the field.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use serde::Deserialize;
use serde_json::{Map, Value};
use toml::Spanned;

use crate::api::data::DataSettings;
use crate::domain::UsageRecord;
use crate::error::usage;
use crate::evals::quarantine::{today, Quarantine, Written};
use crate::expect::Comparison;
use crate::expect::Expectations;
use crate::identity::{IdentityInput, SessionSettings};
use crate::image::ImageFile;
use crate::input::Input;
use crate::results::Pick;
use crate::text::{did_you_mean, parse_duration};

/// What `check`'s flags override in every case of the suite, applied in
/// one place ([`Case::overridden`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CaseOverrides {
    /// `--repeat`: every case's runs.
    pub repeat: Option<usize>,
    /// `--pass-rate`: the share of runs that must pass.
    pub pass_rate: Option<f64>,
    /// `--max-seconds`: each turn's time budget.
    pub max_seconds: Option<Duration>,
    /// `--max-tokens`: each turn's token budget.
    pub max_tokens: Option<u64>,
    /// `--max-llm-calls`: each turn's LLM call budget.
    pub max_llm_calls: Option<u64>,
    /// `--expect-faithful`: every figure of every answer supported by
    /// its rows.
    pub faithful: bool,
}

/// The most runs a case may ask for (`repeat`).
pub const MAX_REPEAT: i64 = 1000;

/// A case's timeout when neither it nor `[defaults]` sets one.
pub const DEFAULT_CASE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The fields a case may set; `[defaults]` may set all but `name`,
/// `question` and `chat`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    name: Option<Spanned<String>>,
    question: Option<Spanned<String>>,
    #[serde(default)]
    chat: Vec<FollowUp>,
    timeout: Option<Spanned<String>>,
    external_id: Option<String>,
    internal_id: Option<String>,
    email: Option<String>,
    attributes: Option<BTreeMap<String, String>>,
    groups: Option<Vec<String>>,
    security_context: Option<Map<String, Value>>,
    branch: Option<String>,
    default_branch: Option<bool>,
    expect_answer: Option<Spanned<String>>,
    expect_sql: Option<Spanned<String>>,
    expect_tool: Option<Vec<String>>,
    min_rows: Option<u64>,
    expect_faithful: Option<bool>,
    expect_question: Option<bool>,
    max_seconds: Option<Spanned<f64>>,
    max_tokens: Option<u64>,
    max_llm_calls: Option<u64>,
    repeat: Option<Spanned<i64>>,
    pass_rate: Option<Spanned<f64>>,
    reference_sql: Option<Spanned<String>>,
    expect_rows: Option<Spanned<Vec<Vec<toml::Value>>>>,
    ordered: Option<bool>,
    tolerance: Option<Spanned<f64>>,
    images: Option<Spanned<Vec<String>>>,
    quarantine: Option<Spanned<Written>>,
}

/// A follow-up question: a string, or a table with its own expectations.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum FollowUp {
    Question(String),
    Turn(TurnFields),
}

/// A follow-up with expectations. (Spans do not survive an untagged enum,
/// so its errors point at the case.)
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnFields {
    question: String,
    expect_answer: Option<String>,
    expect_sql: Option<String>,
    expect_tool: Option<Vec<String>>,
    min_rows: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    #[serde(default)]
    defaults: Option<Spanned<Fields>>,
    #[serde(default, rename = "case")]
    cases: Vec<Spanned<Fields>>,
}

/// One question of a case and what its answer must show.
#[derive(Clone, Debug)]
pub struct CaseTurn {
    /// The question.
    pub question: String,
    /// What the answer must show.
    pub expectations: Expectations,
    /// The rows its selected result must hold.
    pub rows: Option<ExpectedRows>,
    /// `expect_question` (the case's first question): the agent must ask
    /// back, and answering fails.
    pub asks_back: bool,
    /// Images sent with the question (`images`, with the first question),
    /// read when the case runs.
    pub images: Vec<ImageFile>,
}

/// The rows a turn's selected result must hold, and how they are compared.
#[derive(Clone, Debug)]
pub struct ExpectedRows {
    /// Where they come from.
    pub source: RowsSource,
    /// In order or sorted; the tolerance for numbers.
    pub how: Comparison,
}

/// Where expected rows come from.
#[derive(Clone, Debug)]
pub enum RowsSource {
    /// `expect_rows`: written in the suite.
    Inline(Vec<Vec<Value>>),
    /// `reference_sql`: run through the data query API, once per case.
    Sql(String),
    /// The ground truth of one of Cube's eval questions: graded as Cube
    /// grades (see [`super::grade`]), not compared cell by cell.
    GroundTruth(GroundTruth),
}

/// The ground truth of one of Cube's eval questions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroundTruth {
    /// Its SQL (inline, or the certified query's), run through the data
    /// query API once per case.
    Sql(String),
    /// The certified query it names, which does not exist (Cube's verdict
    /// `error`, "Ground truth not found").
    NotFound(String),
}

impl RowsSource {
    /// The suite field that gave the rows, as failure lines name it.
    pub fn field(&self) -> &'static str {
        match self {
            RowsSource::Inline(_) => "expect_rows",
            RowsSource::Sql(_) => "reference_sql",
            RowsSource::GroundTruth(_) => "the ground truth",
        }
    }
}

/// A validated case: who asks, where, how long it may take, and its turns
/// (later ones continue the first one's chat).
#[derive(Clone, Debug)]
pub struct Case {
    /// Its place in the suite file (from 1).
    pub index: usize,
    /// The case's name, unique in the suite.
    pub name: String,
    /// Where the suite defines it: `file:line`.
    pub source: String,
    /// The space of one of Cube's eval questions (`auto` unless its file
    /// says); none for a TOML case.
    pub space: Option<String>,
    /// Who asks.
    pub settings: SessionSettings,
    /// `activeBranchName`.
    pub branch: Option<String>,
    /// `isDefaultBranch` (with a branch).
    pub default_branch: bool,
    /// The whole case's time limit; the chat is aborted when it expires.
    pub timeout: Duration,
    /// The questions, in order.
    pub turns: Vec<CaseTurn>,
    /// What each turn may spend.
    pub budgets: Budgets,
    /// How many times the case is asked, each run on a fresh thread.
    pub repeat: usize,
    /// The fraction of runs that must pass for the case to pass.
    pub pass_rate: f64,
    /// Its quarantine, when it is set aside until a date (it runs, and
    /// gates nothing while the quarantine holds).
    pub quarantine: Option<Quarantine>,
}

impl Case {
    /// The case with what the flags override (`--repeat`, `--pass-rate`,
    /// the budgets): the one place they are applied.
    pub fn overridden(mut self, overrides: &CaseOverrides) -> Case {
        self.repeat = overrides.repeat.unwrap_or(self.repeat);
        self.pass_rate = overrides.pass_rate.unwrap_or(self.pass_rate);
        let budgets = &mut self.budgets;
        budgets.seconds = overrides.max_seconds.or(budgets.seconds);
        budgets.tokens = overrides.max_tokens.or(budgets.tokens);
        budgets.llm_calls = overrides.max_llm_calls.or(budgets.llm_calls);
        if overrides.faithful {
            for turn in &mut self.turns {
                turn.expectations.faithful = true;
            }
        }
        self
    }

    /// The SQL its answer is compared with (a ground truth or a
    /// `reference_sql`), when it has one.
    pub fn ground_truth(&self) -> Option<&str> {
        self.turns.iter().find_map(|turn| match &turn.rows.as_ref()?.source {
            RowsSource::Sql(sql) | RowsSource::GroundTruth(GroundTruth::Sql(sql)) => Some(sql.as_str()),
            RowsSource::Inline(_) | RowsSource::GroundTruth(GroundTruth::NotFound(_)) => None,
        })
    }

    /// What it asks and how it is graded, as a short hash (16 hex digits):
    /// its name and space, and each turn's question, images,
    /// expectations (`expect_faithful` and `expect_question` included) and
    /// expected rows (or ground truth) with how they are compared. How often it is asked, its pass rate and its time limits
    /// are not in it: a report's runs stand for the case whatever those.
    pub fn fingerprint(&self) -> String {
        let turns: Vec<Value> = self
            .turns
            .iter()
            .map(|turn| {
                let expected = &turn.expectations;
                let rows = turn.rows.as_ref().map(|rows| {
                    let source = match &rows.source {
                        RowsSource::Inline(rows) => serde_json::json!({ "inline": rows }),
                        RowsSource::Sql(sql) => serde_json::json!({ "sql": sql }),
                        RowsSource::GroundTruth(GroundTruth::Sql(sql)) => serde_json::json!({ "groundTruth": sql }),
                        RowsSource::GroundTruth(GroundTruth::NotFound(name)) => serde_json::json!({ "notFound": name }),
                    };
                    serde_json::json!({
                        "source": source,
                        "ordered": rows.how.ordered,
                        "tolerance": rows.how.tolerance.to_string(),
                    })
                });
                let mut graded = serde_json::json!({
                    "question": turn.question,
                    "images": turn.images.iter().map(|image| image.path.display().to_string()).collect::<Vec<_>>(),
                    "expectAnswer": expected.answer.as_ref().map(regex::Regex::as_str),
                    "expectSql": expected.sql.as_ref().map(regex::Regex::as_str),
                    "expectTool": expected.tools,
                    "minRows": expected.min_rows.map(|(min, pick)| format!("{min} of {}", pick.describe())),
                    "rows": rows,
                });
                // Named only when set, so a case that sets neither keeps the
                // hash it had before they existed.
                for (name, set) in [
                    ("expectFaithful", expected.faithful),
                    ("expectQuestion", turn.asks_back),
                ] {
                    if set {
                        graded[name] = Value::Bool(true);
                    }
                }
                graded
            })
            .collect();
        let budgets = &self.budgets;
        let graded = serde_json::json!({
            "name": self.name,
            "space": self.space,
            "branch": self.branch,
            "turns": turns,
            "budgets": [budgets.seconds.map(|limit| limit.as_millis().to_string()), budgets.tokens.map(|n| n.to_string()), budgets.llm_calls.map(|n| n.to_string())],
        });
        short_hash(graded.to_string().as_bytes())
    }

    /// The certified query its `certifiedQuery` names, when none has that
    /// name: the case gets Cube's verdict `error` without the agent being asked.
    pub fn missing_ground_truth(&self) -> Option<&str> {
        self.turns.iter().find_map(|turn| match &turn.rows.as_ref()?.source {
            RowsSource::GroundTruth(GroundTruth::NotFound(name)) => Some(name.as_str()),
            _ => None,
        })
    }
}

/// The first 8 bytes of the SHA-256 of `bytes`, in hex: a fingerprint.
pub fn short_hash(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
    digest.as_ref()[..8].iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The fingerprint of a suite's cases as graded (all of them, before
/// `--filter` and `--shard` pick: every slice of a suite has its suite's).
pub fn suite_fingerprint(cases: &[Case]) -> String {
    let mut each: Vec<String> = cases.iter().map(Case::fingerprint).collect();
    each.sort_unstable();
    short_hash(each.join("\n").as_bytes())
}

/// What names a suite across checkouts and working folders: its path
/// relative to the root of the repository it is in (the nearest folder
/// above it that holds `.git`), else its absolute path; `./s.toml`,
/// `s.toml` and `/home/me/repo/s.toml` are one suite. A path that does not
/// exist is named as given, without `./`.
pub fn suite_identity(path: &Path) -> String {
    let Ok(absolute) = std::path::absolute(path) else {
        return path.display().to_string();
    };
    let absolute: std::path::PathBuf = absolute.components().collect();
    let root = absolute.ancestors().skip(1).find(|folder| folder.join(".git").exists());
    let named = match root.and_then(|root| absolute.strip_prefix(root).ok()) {
        Some(inside) => inside.to_path_buf(),
        None => absolute,
    };
    named
        .to_string_lossy()
        .replace('\\', "/")
        .trim_end_matches('/')
        .to_string()
}

/// What a turn may spend: its wall time, and the tokens and LLM calls of
/// its `__usage__` line. A budget not met fails the case (exit 9).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Budgets {
    /// `max_seconds`.
    pub seconds: Option<Duration>,
    /// `max_tokens`: the usage's `totalTokens`.
    pub tokens: Option<u64>,
    /// `max_llm_calls`: the usage's `llmCalls`.
    pub llm_calls: Option<u64>,
}

impl Budgets {
    /// Why a turn that took `took` and reported `usage` went over its
    /// budgets, one line each (none when within them).
    pub fn exceeded(&self, took: Duration, usage: Option<&UsageRecord>) -> Vec<String> {
        let mut over = Vec::new();
        if let Some(limit) = self.seconds.filter(|&limit| took > limit) {
            over.push(format!(
                "the turn took {:.1}s, over max_seconds {}",
                took.as_secs_f64(),
                limit.as_secs_f64()
            ));
        }
        let counts = usage.map(|usage| usage.counts);
        for (limit, spent, key, field) in [
            (
                self.tokens,
                counts.map(|counts| counts.total_tokens),
                "totalTokens",
                "max_tokens",
            ),
            (
                self.llm_calls,
                counts.map(|counts| counts.llm_calls),
                "llmCalls",
                "max_llm_calls",
            ),
        ] {
            let Some(limit) = limit else { continue };
            match spent {
                Some(spent) if spent > limit => over.push(format!("the turn used {spent} {key}, over {field} {limit}")),
                Some(_) => {}
                None => over.push(format!(
                    "the turn reported no {key} (no __usage__ line), so {field} is not met"
                )),
            }
        }
        over
    }
}

/// Reads a suite file as text: `file: not UTF-8 (byte N)` when it is not
/// (N counted from 0), a byte-order mark left out. The read ends at
/// `limit` (the command's `--timeout`) or the first signal, whatever it
/// waits on (a FIFO's writer).
pub fn read_text(path: &Path, limit: Option<Duration>) -> Result<String> {
    let text = crate::input::read_text(Input::File(path.to_path_buf()), limit, &path.display().to_string())?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// Reads and validates the suite at `path`. `base` is the identity from the
/// command line and environment, which `[defaults]` and cases override;
/// `data` is the data query API, which a `reference_sql` needs (`None`
/// when nothing will run: `--list`); `limit`, the command's `--timeout`,
/// bounds the wait for the file.
pub fn load(
    path: &Path,
    base: &IdentityInput,
    data: Option<&DataSettings>,
    limit: Option<Duration>,
) -> Result<Vec<Case>> {
    let text = read_text(path, limit)?;
    let file = path.display().to_string();
    let at = |span: Range<usize>| Place {
        file: &file,
        text: &text,
        span,
    };
    let suite: SuiteFile = toml::from_str(&text).map_err(|err| {
        let place = at(err.span().unwrap_or(0..0));
        usage(format!("{}{}", place, did_you_mean(err.message())))
    })?;
    let defaults = suite.defaults.map(|d| (d.span(), d.into_inner()));
    if let Some((span, fields)) = &defaults {
        for (set, field) in [
            (fields.name.is_some(), "name"),
            (fields.question.is_some(), "question"),
            (!fields.chat.is_empty(), "chat"),
            (fields.quarantine.is_some(), "quarantine"),
        ] {
            if set {
                return Err(usage(format!(
                    "{}[defaults] cannot set {field}: it belongs to a [[case]]",
                    at(span.clone())
                )));
            }
        }
    }
    if suite.cases.is_empty() {
        return Err(usage(format!("{file}: the suite has no [[case]]")));
    }
    let defaults = defaults.map(|(_, fields)| fields).unwrap_or_default();
    let mut cases: Vec<Case> = Vec::new();
    for (index, spanned) in suite.cases.into_iter().enumerate() {
        let span = spanned.span();
        let case = spanned.into_inner();
        let place = at(span.clone());
        let name = case
            .name
            .as_ref()
            .map(|n| n.get_ref().trim().to_string())
            .filter(|n| !n.is_empty());
        let name = name.ok_or_else(|| usage(format!("{place}a [[case]] needs a name")))?;
        let context = |message: String| usage(format!("{place}case \"{name}\": {message}"));
        if cases.iter().any(|c| c.name == name) {
            return Err(context("another case has the same name".into()));
        }
        let question = case
            .question
            .as_ref()
            .ok_or_else(|| context("missing field question".into()))?;
        let timeout_field = case.timeout.as_ref().or(defaults.timeout.as_ref());
        let timeout = match timeout_field {
            Some(text) => parse_duration(text.get_ref()).map_err(|err| usage(format!("{}{err}", at(text.span()))))?,
            None => DEFAULT_CASE_TIMEOUT,
        };
        let answer = first_set([&case.expect_answer, &defaults.expect_answer]);
        let sql = first_set([&case.expect_sql, &defaults.expect_sql]);
        let first_place = answer
            .or(sql)
            .map_or_else(|| place.to_string(), |field| at(field.span()).to_string());
        let mut turns = vec![CaseTurn {
            question: non_empty(question.get_ref(), &at(question.span()).to_string())?,
            expectations: expectations(
                answer.map(|a| a.get_ref().as_str()),
                sql.map(|s| s.get_ref().as_str()),
                case.expect_tool.as_ref().or(defaults.expect_tool.as_ref()),
                case.min_rows.or(defaults.min_rows),
                &first_place,
            )?,
            rows: expected_rows(&case, &defaults, data, &at)?,
            asks_back: case.expect_question.or(defaults.expect_question).unwrap_or(false),
            images: match case.images.as_ref().or(defaults.images.as_ref()) {
                Some(images) => read_images(images, path, &at(images.span()).to_string())?,
                None => Vec::new(),
            },
        }];
        let follow_up_place = format!("{place}case \"{name}\", chat: ");
        for follow_up in &case.chat {
            turns.push(match follow_up {
                FollowUp::Question(question) => CaseTurn {
                    question: non_empty(question, &follow_up_place)?,
                    expectations: Expectations::default(),
                    rows: None,
                    asks_back: false,
                    images: Vec::new(),
                },
                FollowUp::Turn(turn) => CaseTurn {
                    question: non_empty(&turn.question, &follow_up_place)?,
                    expectations: expectations(
                        turn.expect_answer.as_deref(),
                        turn.expect_sql.as_deref(),
                        turn.expect_tool.as_ref(),
                        turn.min_rows,
                        &follow_up_place,
                    )?,
                    rows: None,
                    asks_back: false,
                    images: Vec::new(),
                },
            });
        }
        if case.expect_faithful.or(defaults.expect_faithful).unwrap_or(false) {
            for turn in &mut turns {
                turn.expectations.faithful = true;
            }
        }
        let seconds = match case.max_seconds.as_ref().or(defaults.max_seconds.as_ref()) {
            Some(seconds) if !(seconds.get_ref().is_finite() && *seconds.get_ref() > 0.0) => {
                return Err(usage(format!(
                    "{}max_seconds must be a number of seconds above 0",
                    at(seconds.span())
                )))
            }
            Some(seconds) => Some(Duration::from_secs_f64(*seconds.get_ref())),
            None => None,
        };
        let budgets = Budgets {
            seconds,
            tokens: case.max_tokens.or(defaults.max_tokens),
            llm_calls: case.max_llm_calls.or(defaults.max_llm_calls),
        };
        let repeat = match case.repeat.as_ref().or(defaults.repeat.as_ref()) {
            Some(repeat) if !(1..=MAX_REPEAT).contains(repeat.get_ref()) => {
                return Err(usage(format!(
                    "{}repeat must be from 1 to {MAX_REPEAT}",
                    at(repeat.span())
                )))
            }
            Some(repeat) => *repeat.get_ref() as usize,
            None => 1,
        };
        let pass_rate = match case.pass_rate.as_ref().or(defaults.pass_rate.as_ref()) {
            Some(rate) if !(0.0..=1.0).contains(rate.get_ref()) => {
                return Err(usage(format!("{}pass_rate must be from 0 to 1", at(rate.span()))))
            }
            Some(rate) => *rate.get_ref(),
            None => 1.0,
        };
        let identity = identity(base, &defaults, &case);
        let settings = identity.validate().map_err(|err| context(format!("{err:#}")))?;
        let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
        let quarantine = case
            .quarantine
            .as_ref()
            .map(|written| {
                Quarantine::of(written.get_ref(), today()).map_err(|err| usage(format!("{}{err}", at(written.span()))))
            })
            .transpose()?;
        cases.push(Case {
            index: index + 1,
            name,
            source: format!("{file}:{line}"),
            space: None,
            settings,
            branch: case
                .branch
                .clone()
                .or(defaults.branch.clone())
                .filter(|b| !b.trim().is_empty()),
            default_branch: case.default_branch.or(defaults.default_branch).unwrap_or(false),
            timeout,
            turns,
            budgets,
            repeat,
            pass_rate,
            quarantine,
        });
    }
    Ok(cases)
}

/// The images of a case (`images`, at `place`), each path relative to the
/// suite file `suite`, checked now, before anything is sent, and read
/// when the case runs.
fn read_images(images: &Spanned<Vec<String>>, suite: &Path, place: &str) -> Result<Vec<ImageFile>> {
    let folder = suite.parent().unwrap_or(Path::new("."));
    images
        .get_ref()
        .iter()
        .map(|image| ImageFile::checked(folder.join(image), format!("{place}images: {image}")))
        .collect()
}

/// The rows a case's first turn must hold (`reference_sql` or
/// `expect_rows`, the case's own before `[defaults]`'s), with `ordered`
/// and `tolerance`; checked: not both, a tolerance of 0 or more, and the
/// data query API set up for a `reference_sql`.
fn expected_rows<'a>(
    case: &Fields,
    defaults: &Fields,
    data: Option<&DataSettings>,
    at: &impl Fn(Range<usize>) -> Place<'a>,
) -> Result<Option<ExpectedRows>> {
    let tolerance = match case.tolerance.as_ref().or(defaults.tolerance.as_ref()) {
        Some(tolerance) if !(tolerance.get_ref().is_finite() && *tolerance.get_ref() >= 0.0) => {
            return Err(usage(format!(
                "{}tolerance must be a relative difference of 0 or more (0.001 = 0.1%)",
                at(tolerance.span())
            )))
        }
        Some(tolerance) => *tolerance.get_ref(),
        None => 0.0,
    };
    let how = Comparison {
        ordered: case.ordered.or(defaults.ordered).unwrap_or(false),
        tolerance,
    };
    let sql = case.reference_sql.as_ref().or(defaults.reference_sql.as_ref());
    let inline = case.expect_rows.as_ref().or(defaults.expect_rows.as_ref());
    let source = match (sql, inline) {
        (Some(sql), Some(_)) => {
            return Err(usage(format!(
                "{}give reference_sql or expect_rows, not both",
                at(sql.span())
            )))
        }
        (Some(sql), None) => {
            if sql.get_ref().trim().is_empty() {
                return Err(usage(format!("{}the SQL is empty", at(sql.span()))));
            }
            if let Some(data) = data {
                data.check()
                    .map_err(|err| usage(format!("{}it runs through the data query API: {err:#}", at(sql.span()))))?;
            }
            RowsSource::Sql(sql.get_ref().trim().to_string())
        }
        (None, Some(rows)) => RowsSource::Inline(
            serde_json::to_value(rows.get_ref())
                .and_then(serde_json::from_value)
                .map_err(|err| usage(format!("{}{err}", at(rows.span()))))?,
        ),
        (None, None) => return Ok(None),
    };
    Ok(Some(ExpectedRows { source, how }))
}

/// Where something is in the suite: `file:line: ` (1-based).
struct Place<'a> {
    file: &'a str,
    text: &'a str,
    span: Range<usize>,
}

impl std::fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let start = self.span.start.min(self.text.len());
        let line = self.text[..start].matches('\n').count() + 1;
        let source = self.text.lines().nth(line - 1).unwrap_or("");
        match source
            .split_once('=')
            .map(|(key, _)| key.trim())
            .filter(|key| !key.is_empty() && !key.starts_with('['))
        {
            Some(key) => write!(f, "{}:{line}: field {key}: ", self.file),
            None => write!(f, "{}:{line}: ", self.file),
        }
    }
}

fn non_empty(question: &str, place: &str) -> Result<String> {
    let text = question.trim();
    if text.is_empty() {
        return Err(usage(format!("{place}the question is empty")));
    }
    Ok(text.to_string())
}

/// A turn's expectations; `place` prefixes an error (a bad pattern).
fn expectations(
    answer: Option<&str>,
    sql: Option<&str>,
    tools: Option<&Vec<String>>,
    min_rows: Option<u64>,
    place: &str,
) -> Result<Expectations> {
    Expectations::new(
        answer,
        sql,
        tools.map(Vec::as_slice).unwrap_or_default(),
        min_rows,
        Pick::Last,
        "",
    )
    .map_err(|err| usage(format!("{place}{err:#}")))
}

fn first_set(pair: [&Option<Spanned<String>>; 2]) -> Option<&Spanned<String>> {
    pair.into_iter().find_map(Option::as_ref)
}

/// The case's identity: the command line's, then `[defaults]`, then the
/// case's own; naming one kind of id drops the other. The suite's fields
/// are typed as the flags' are, and errors name them.
fn identity(base: &IdentityInput, defaults: &Fields, case: &Fields) -> IdentityInput {
    let mut identity = base.clone();
    identity.names = identity.names.in_suite();
    for level in [defaults, case] {
        if let Some(id) = &level.external_id {
            identity.external_id = Some(id.clone());
            identity.internal_id = None;
            identity.names.external_id = "external_id".into();
        }
        if let Some(name) = &level.internal_id {
            identity.internal_id = Some(name.clone());
            identity.external_id = None;
            identity.names.internal_id = "internal_id".into();
        }
        if let Some(email) = &level.email {
            identity.email = Some(email.clone());
        }
        if let Some(attributes) = &level.attributes {
            identity.attributes = attributes.clone().into_iter().collect();
        }
        if let Some(groups) = &level.groups {
            identity.groups = groups.clone();
        }
        if let Some(context) = &level.security_context {
            identity.security_context = Some(context.clone());
        }
    }
    identity
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> Result<Vec<Case>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("smoke.toml");
        std::fs::write(&path, text).unwrap();
        let base = IdentityInput {
            external_id: Some("ci-bot".into()),
            ..IdentityInput::default()
        };
        load(&path, &base, Some(&DataSettings::default()), None)
    }

    #[test]
    fn grading_the_figures_or_a_question_back_is_part_of_a_cases_hash() {
        let hash = |extra: &str| {
            load_text(&format!("[[case]]\nname = \"a\"\nquestion = \"q\"\n{extra}")).unwrap()[0].fingerprint()
        };
        let plain = hash("");
        assert_eq!(hash("expect_faithful = false\n"), plain, "unset is as before");
        assert_ne!(hash("expect_faithful = true\n"), plain);
        assert_ne!(hash("expect_question = true\n"), plain);
        assert_ne!(hash("expect_question = true\n"), hash("expect_faithful = true\n"));
    }

    #[test]
    fn cases_inherit_defaults_and_follow_ups_become_turns() {
        let cases = load_text(
            r#"
[defaults]
timeout = "90s"
branch = "dev"
[[case]]
name = "one"
question = "Revenue?"
[[case]]
name = "two"
question = "Orders?"
internal_id = "ana@acme.example"
timeout = "10s"
chat = ["And by region?", { question = "Top one?", expect_answer = "EMEA" }]
"#,
        )
        .unwrap();
        assert_eq!(cases[0].timeout, Duration::from_secs(90));
        assert_eq!(cases[0].branch.as_deref(), Some("dev"));
        assert_eq!(cases[0].settings.external_id.as_deref(), Some("ci-bot"));
        assert_eq!(cases[1].settings.internal_id.as_deref(), Some("ana@acme.example"));
        assert_eq!(cases[1].settings.external_id, None);
        assert_eq!(cases[1].turns.len(), 3);
        assert!(cases[1].turns[2].expectations.answer.is_some());
    }

    #[test]
    fn errors_name_the_file_line_and_field() {
        let err = load_text("[[case]]\nname = \"a\"\nquestion = \"q\"\nmin_rows = \"ten\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("smoke.toml:4: field min_rows: invalid type"), "{err}");
        let err = load_text("[[case]]\nname = \"a\"\nquestion = \"q\"\nexpect_sql = \"(\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("smoke.toml:4: field expect_sql: expect-sql \"(\" is not a valid regular expression"),
            "{err}"
        );
        let err = load_text("[[case]]\nname = \"a\"\nquestoin = \"q\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("smoke.toml:3: field questoin: unknown field `questoin`: did you mean `question`?"),
            "{err}"
        );
        let err = load_text("[[case]]\nname = \"a\"\nquestion = \"q\"\ntimeout = \"soon\"\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("smoke.toml:4: field timeout: invalid duration"), "{err}");
        let err = load_text(
            "[[case]]\nname = \"a\"\nquestion = \"q\"\ngroups = [\"g\"]\ninternal_id = \"ana@acme.example\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("case \"a\": groups cannot be used with internal_id"),
            "{err}"
        );
        assert!(load_text("[defaults]\ntimeout = \"1m\"\n")
            .unwrap_err()
            .to_string()
            .contains("no [[case]]"));
    }
}
