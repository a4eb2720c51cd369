//! Reports of a `check` run. A [`Report`] is the run as data: what the JSON
//! report holds and what `check merge` and `--baseline` read back. Every
//! other form comes from it: here the lines for people (stderr), in
//! `baseline.rs` the comparison with a baseline; JUnit XML, TAP and JSON in `formats.rs`,
//! the Markdown summary in `summary.rs`, the HTML page in `page.rs`.

use crate::evals::figures::Figure;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::budget::BudgetReport;
use super::context::RunContext;
use super::grade::{Comparison, CubeGrade, Verdict};
use super::quarantine::Quarantine;
use super::shard::parse_shard;
pub use crate::domain::Usage;
use crate::error::{usage, Kind, SUCCESS};
use crate::input::{read_text_at_most, Input};
use crate::output::Destination;
use crate::redact::redact;

/// The largest report read (`--baseline`, `--retry-errors`, `check
/// merge`): far above any real one, low enough that a wrong file (a
/// device, an endless pipe) cannot eat the memory.
const MAX_REPORT: u64 = 1 << 30;

mod baseline;
mod stored;

pub use baseline::{comparison_line, Baseline, Regression, DURATION_NOISE, GROWTH_ALLOWED};

/// The report a `check` run (or merge) writes on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    /// `--tap`: TAP version 13.
    Tap,
    /// `-o json`: the report as one document.
    Json,
    /// `-o markdown`: the summary `--summary` appends.
    Markdown,
    /// `-o html`: one inert page.
    Html,
}
/// How old a baseline may be before it is unreliable (14 days).
pub const DEFAULT_BASELINE_MAX_AGE: Duration = Duration::from_secs(14 * 86_400);

/// Where a `check` report goes, and what it is compared with.
#[derive(Debug)]
pub struct ReportSettings {
    /// `--junit FILE`.
    pub junit: Option<PathBuf>,
    /// `--summary FILE`: the Markdown summary appended to it.
    pub summary: Option<PathBuf>,
    /// The report on stdout (or `--output-file`): `--tap` or `-o MODE`.
    pub format: Option<ReportFormat>,
    /// `--baseline REPORT`.
    pub baseline: Option<PathBuf>,
    /// `--fail-on-regression`.
    pub fail_on_regression: bool,
    /// `--baseline-max-age`: an older baseline is unreliable.
    pub baseline_max_age: Duration,
    /// `--baseline-any`: trust the baseline whatever it measured.
    pub baseline_any: bool,
    /// `--min-accuracy`: the share of cases that must pass (default: all).
    pub min_accuracy: Option<f64>,
    /// `--jq`, `--output-file`.
    pub destination: Destination,
}
impl ReportSettings {
    /// The files the report is written to, each with its flag.
    pub fn written(&self) -> Vec<(&'static str, &Path)> {
        [
            ("--output-file", self.destination.file.as_deref()),
            ("--junit", self.junit.as_deref()),
            ("--summary", self.summary.as_deref()),
        ]
        .into_iter()
        .filter_map(|(flag, file)| Some((flag, file?)))
        .collect()
    }
}

/// How a run, or a case, ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Every turn ended well and met its expectations (a case: enough runs did).
    Passed,
    /// The chat worked but an expectation, a comparison or a budget was not met.
    Failed,
    /// The request or the stream failed, or the time ran out.
    Error,
    /// Not asked: the run's budget was spent before it (`--budget-tokens`,
    /// `--budget-usd`).
    Skipped,
}

/// One run of a case: one fresh thread, its turns in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "stored::StoredRun")]
pub struct RunReport {
    /// Which run of the case (from 1).
    pub run: usize,
    /// How it ended.
    pub status: Outcome,
    /// Why it did not pass, one line each.
    pub messages: Vec<String>,
    /// The exit code this run alone would have given.
    pub exit_code: u8,
    /// The chat it used, when the service said.
    pub chat_id: Option<String>,
    /// The message id of its last turn asked.
    pub message_id: Option<String>,
    /// The message id of every turn asked, in order.
    pub message_ids: Vec<String>,
    /// The question of its last turn asked.
    pub question: Option<String>,
    /// The agent's final answer to it, as [`crate::domain::kept_answer`]
    /// keeps it.
    pub answer: Option<String>,
    /// When things happened, in seconds from the run's start.
    pub seconds: RunSeconds,
    /// Tokens and LLM calls, when a turn sent a `__usage__` line.
    pub usage: Option<Usage>,
    /// US dollars, when the config file's `[prices]` priced every turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The raw streams kept with `--save` (of a re-grade: those it read).
    pub saved: Vec<String>,
    /// How Cube would grade it (a question of Cube's eval files).
    #[serde(flatten, default)]
    pub cube: CubeGrade,
    /// Of a question graded that did not pass: both results side by side
    /// (the first rows of each, with their counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Box<Comparison>>,
    /// The figures of its last answer, each checked against its rows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figure>,
    /// The agent asked back instead of answering.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub asks_back: bool,
    /// The attempts this run replaced (`--retry-errors`), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<RunReport>,
}

impl RunReport {
    /// The `run`th run (from 1) of a case, before it starts: passed until
    /// something fails.
    pub fn new(run: usize) -> RunReport {
        RunReport {
            run,
            status: Outcome::Passed,
            messages: Vec::new(),
            exit_code: SUCCESS,
            chat_id: None,
            message_id: None,
            message_ids: Vec::new(),
            question: None,
            answer: None,
            seconds: RunSeconds::default(),
            usage: None,
            cost: None,
            saved: Vec::new(),
            cube: CubeGrade::default(),
            comparison: None,
            figures: Vec::new(),
            asks_back: false,
            earlier: Vec::new(),
        }
    }

    /// The run with no secret in any of its texts (question, answer,
    /// reasons, analysis, SQL, the results' cells), however they were
    /// written.
    fn redacted(mut self) -> RunReport {
        let clean = |text: &mut String| {
            if let std::borrow::Cow::Owned(redacted) = redact(text) {
                *text = redacted;
            }
        };
        self.messages.iter_mut().for_each(clean);
        let cube = &mut self.cube;
        [
            &mut self.question,
            &mut self.answer,
            &mut cube.analysis,
            &mut cube.ground_truth,
            &mut cube.agent_sql,
        ]
        .into_iter()
        .flatten()
        .chain(self.comparison.iter_mut().flat_map(|comparison| comparison.cells_mut()))
        .for_each(clean);
        self
    }
}

/// When a run's moments came, in seconds from its start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSeconds {
    /// The first byte of the stream.
    pub first_byte: Option<f64>,
    /// The first SQL result.
    pub first_sql: Option<f64>,
    /// The start of the last turn's final answer.
    pub answer: Option<f64>,
    /// The end of the run.
    pub total: f64,
}

/// A case's medians over its runs (a figure no run has is null).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Medians {
    /// Seconds.
    pub duration: f64,
    /// Seconds to the first byte.
    pub first_byte: Option<f64>,
    /// `totalTokens`.
    pub total_tokens: Option<f64>,
    /// `llmCalls`.
    pub llm_calls: Option<f64>,
    /// US dollars (runs the config file's `[prices]` priced).
    #[serde(default)]
    pub cost: Option<f64>,
}

/// A case: its runs and what they add up to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseReport {
    /// Its place in the suite (from 1): merged shards keep the suite's order.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// The space of one of Cube's eval questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<String>,
    /// The case's fingerprint as graded (see
    /// [`Case::fingerprint`](super::suite::Case::fingerprint)): a later
    /// run of a case whose fingerprint changed is another case's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// Passed when at least the required share of runs passed.
    pub status: Outcome,
    /// Why it did not pass: the count of runs, then each failing run's reasons.
    pub messages: Vec<String>,
    /// The exit code this case alone would have given.
    pub exit_code: u8,
    /// How many runs passed.
    pub passed_runs: usize,
    /// The share of runs that passed.
    pub pass_rate: f64,
    /// The share that must pass (`pass_rate` of the suite).
    pub required_pass_rate: f64,
    /// Medians over the runs.
    pub medians: Medians,
    /// Of a case run more than once: whether every run passed (pass^N).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed_every_run: Option<bool>,
    /// Every run, in order.
    pub runs: Vec<RunReport>,
    /// Runs not asked because the case was decided before them
    /// (`--stop-when-decided`), and their turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved: Option<Saved>,
    /// Its quarantine: while it holds, the case is reported and gates nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quarantine: Option<Quarantine>,
    /// Cube's grade of the case: its first run that did not pass, else
    /// its last run.
    #[serde(flatten, default)]
    pub cube: CubeGrade,
}

/// A whole `check` run (or the merge of shards' runs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The suite file, as named on the command line.
    pub suite: String,
    /// `K/N` when this is one shard's report.
    pub shard: Option<String>,
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed an expectation, a comparison or a budget.
    pub failed: usize,
    /// Cases that ended in an error.
    pub errors: usize,
    /// The exit code of the run (before regressions, which `--fail-on-regression` adds).
    pub exit_code: u8,
    /// Seconds the run took (a merge: its longest shard's).
    pub time: f64,
    /// Every case, in suite order.
    pub cases: Vec<CaseReport>,
    /// Of Cube's eval questions, the share that passed as Cube shows it:
    /// `80% (8/10)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<String>,
    /// What was tested, where and when (reports before it have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunContext>,
    /// The comparison with `--baseline`, when one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    /// `--min-accuracy`: the share of cases that had to pass, when the run
    /// was gated on it rather than on every case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_accuracy: Option<f64>,
    /// Of the cases run more than once, how many passed every run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistent: Option<Consistency>,
    /// Runs not asked because their case was decided before them
    /// (`--stop-when-decided`), and the turns they would have asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved: Option<Saved>,
    /// What the runs the config file's `[prices]` priced cost, in US
    /// dollars (earlier attempts included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Runs asked that could not be priced (not in `cost`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unpriced_runs: usize,
    /// Cases not asked: the run's budget was spent before them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped: usize,
    /// Cases whose quarantine holds: reported, gating nothing (counted in
    /// none of `passed`, `failed`, `errors`, `skipped`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub quarantined: usize,
    /// The run's budget (`--budget-tokens`, `--budget-usd`): what it spent
    /// and what it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetReport>,
    /// Of a re-grade (`--regrade DIR`): the saved run it graded again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regraded: Option<Regraded>,
}

/// The saved run a re-grade graded again (`check --regrade DIR`): no turn
/// was asked; the answers are those of the run that saved them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Regraded {
    /// The folder the streams were read from.
    pub folder: String,
    /// The run that asked and saved them, as its own report said it.
    pub saved_run: RunContext,
    /// The saved streams graded (a case's runs and turns).
    pub streams: usize,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// What `--stop-when-decided` spared: runs not asked, and their turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Saved {
    /// Runs not asked.
    pub runs: usize,
    /// The turns those runs would have asked.
    pub turns: usize,
}

/// How consistent the agent was over repeated runs: of the `cases` run
/// more than once, how many passed every run (`consistent 7/10`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Consistency {
    /// Cases whose every run passed.
    pub passed_every_run: usize,
    /// Cases run more than once.
    pub cases: usize,
}

impl std::fmt::Display for Consistency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "consistent {}/{}", self.passed_every_run, self.cases)
    }
}

/// How a case (or a run) is tagged for people: `PASS`, `FAIL`, `ERROR`,
/// or, for one of Cube's eval questions, `REVIEW` when Cube would leave
/// it to a person.
pub fn tag(status: Outcome, verdict: Option<Verdict>) -> &'static str {
    match (verdict, status) {
        (_, Outcome::Skipped) => "SKIPPED",
        (Some(Verdict::Review), _) => "REVIEW",
        (_, Outcome::Passed) => "PASS",
        (_, Outcome::Failed) => "FAIL",
        (_, Outcome::Error) => "ERROR",
    }
}

/// How a case is tagged for people: `QUARANTINED` while its quarantine
/// holds, else as [`tag`] tags its status.
pub fn case_tag(case: &CaseReport) -> &'static str {
    match case.gates() {
        true => tag(case.status, case.cube.verdict),
        false => "QUARANTINED",
    }
}

/// Seconds, to the millisecond.
pub fn seconds(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1000.0).round() / 1000.0
}

/// The median of `values` (the mean of the middle two for an even count);
/// None when there are none.
fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    let median = if values.len().is_multiple_of(2) {
        (values[middle - 1] + values[middle]) / 2.0
    } else {
        values[middle]
    };
    // Kept to four decimals: written as short as it is, it reads back as
    // itself (a report merged again gives the same figures).
    Some((median * 10_000.0).round() / 10_000.0)
}

impl CaseReport {
    /// A case from its runs (of the `asked_for` it was to be asked): it
    /// passes when at least `required_pass_rate`
    /// of them passed. Otherwise it failed with the count and each run's
    /// reasons; or, when no run failed an expectation, it errored as its
    /// first erroring run did.
    /// Every text of the case and its runs is redacted here, once, for
    /// every report and output made from it.
    pub fn new(
        index: usize,
        name: &str,
        required_pass_rate: f64,
        asked_for: usize,
        runs: Vec<RunReport>,
    ) -> CaseReport {
        let runs: Vec<RunReport> = runs.into_iter().map(RunReport::redacted).collect();
        // A run the budget cut short says nothing of the agent.
        let total = runs.iter().filter(|run| run.status != Outcome::Skipped).count();
        let passed = runs.iter().filter(|run| run.status == Outcome::Passed).count();
        let needed = runs_to_pass(required_pass_rate, total);
        let first_error = runs.iter().find(|run| run.status == Outcome::Error);
        let any_failed = runs.iter().any(|run| run.status == Outcome::Failed);
        // An error keeps the code of what happened (the run's exit code is
        // 9 all the same: see `Report::failure`).
        let (status, exit_code) = match (passed >= needed, any_failed, first_error) {
            (true, ..) => (Outcome::Passed, SUCCESS),
            (false, false, Some(run)) => (Outcome::Error, run.exit_code),
            _ => (Outcome::Failed, Kind::Expectation.exit_code()),
        };
        let messages = match (status, runs.len()) {
            (Outcome::Passed, _) => Vec::new(),
            (_, 1) => runs[0].messages.clone(),
            _ => std::iter::once(format!(
                "{passed} of {total} runs passed; pass_rate {required_pass_rate} needs {needed}"
            ))
            .chain(
                runs.iter()
                    .filter(|run| !matches!(run.status, Outcome::Passed | Outcome::Skipped))
                    .map(|run| format!("run {}: {}", run.run, run.messages.join("; "))),
            )
            .collect(),
        };
        let of_runs = |figure: fn(&RunReport) -> Option<f64>| median(runs.iter().filter_map(figure).collect());
        let medians = Medians {
            duration: of_runs(|run| Some(run.seconds.total)).unwrap_or(0.0),
            first_byte: of_runs(|run| run.seconds.first_byte),
            total_tokens: of_runs(|run| run.usage.map(|usage| usage.total_tokens as f64)),
            llm_calls: of_runs(|run| run.usage.map(|usage| usage.llm_calls as f64)),
            cost: of_runs(|run| run.cost),
        };
        let mut case = CaseReport {
            cube: CubeGrade::default(),
            index,
            name: redact(name).into_owned(),
            space: None,
            hash: None,
            status,
            messages,
            exit_code,
            passed_runs: passed,
            pass_rate: if total == 0 { 0.0 } else { passed as f64 / total as f64 },
            required_pass_rate,
            medians,
            // A case meant to be asked more than once, whether or not
            // --stop-when-decided spared some of its runs.
            passed_every_run: (asked_for.max(total) > 1).then_some(passed == total),
            runs,
            saved: None,
            quarantine: None,
        };
        case.cube = shown_run(&case).map(|run| run.cube.clone()).unwrap_or_default();
        if total == 0 {
            case.skipped_by_budget(asked_for);
        }
        case
    }

    /// Marks the case `skipped` (exit 9): the run's budget was spent before
    /// its runs could decide it; its line says how many of the `asked_for`
    /// finished.
    pub fn skipped_by_budget(&mut self, asked_for: usize) {
        let finished = self.runs.iter().filter(|run| run.status != Outcome::Skipped).count();
        self.status = Outcome::Skipped;
        self.exit_code = Kind::Expectation.exit_code();
        self.messages = vec![format!(
            "not asked: the run's budget was spent (budget): {finished} of {asked_for} runs finished"
        )];
    }

    /// True when the case gates the run: no quarantine holds it.
    pub fn gates(&self) -> bool {
        self.quarantine.as_ref().is_none_or(|quarantine| !quarantine.holds())
    }
}

/// How many of `runs` must pass at `pass_rate` (a case passes with at
/// least that many), counted exactly: 7 of 25 meets 0.28.
pub fn runs_to_pass(pass_rate: f64, runs: usize) -> usize {
    let (over, under) = fraction(pass_rate);
    (runs as u128 * over).div_ceil(under) as usize
}

/// `rate` as the exact fraction it was written as: the shortest decimal
/// that reads back as the same number (`0.28` → 28/100), never its binary
/// approximation (0.28 × 25 is 7.000000000000001 in floating point). A
/// rate is between 0 and 1, so the digits are few.
pub fn fraction(rate: f64) -> (u128, u128) {
    let written = format!("{}", rate.clamp(0.0, 1.0));
    let (whole, decimals) = written.split_once('.').unwrap_or((&written, ""));
    let decimals = &decimals[..decimals.len().min(30)];
    let digits = format!("{whole}{decimals}");
    let over = digits.parse::<u128>().unwrap_or(0);
    (over, 10u128.pow(decimals.len() as u32))
}

/// The run of a case a person reads: its first that did not pass (the
/// one its verdict is from), else its last.
pub fn shown_run(case: &CaseReport) -> Option<&RunReport> {
    case.runs
        .iter()
        .find(|run| run.status != Outcome::Passed)
        .or(case.runs.last())
}

/// The accuracy of Cube's eval questions among `cases`, as Cube shows it
/// (`80% (8/10)`); `None` when there are none.
fn accuracy(cases: &[CaseReport]) -> Option<String> {
    let graded: Vec<&CaseReport> = cases
        .iter()
        .filter(|case| case.cube.verdict.is_some() && case.gates())
        .collect();
    if graded.is_empty() {
        return None;
    }
    let passed = graded.iter().filter(|case| case.status == Outcome::Passed).count();
    Some(accuracy_of(passed, graded.len()))
}

/// `passed` of `total` as an accuracy, as Cube shows it: a whole
/// percentage and the counts (`80% (8/10)`, `45% (5/11)`; `0% (0/0)`), the
/// one way every output writes an accuracy.
pub fn accuracy_of(passed: usize, total: usize) -> String {
    let percent = match total {
        0 => 0.0,
        _ => (passed as f64 * 100.0 / total as f64).round(),
    };
    format!("{percent}% ({passed}/{total})")
}

/// Of the `cases` run more than once, how many passed every run; `None`
/// when none was repeated.
fn consistency(cases: &[CaseReport]) -> Option<Consistency> {
    let repeated: Vec<bool> = cases.iter().filter_map(|case| case.passed_every_run).collect();
    (!repeated.is_empty()).then(|| Consistency {
        passed_every_run: repeated.iter().filter(|&&every| every).count(),
        cases: repeated.len(),
    })
}

impl Report {
    /// The report of `cases` (any order: they are put in suite order).
    pub fn new(suite: &str, shard: Option<String>, mut cases: Vec<CaseReport>, time: f64) -> Report {
        cases.sort_by_key(|case| case.index);
        let count = |status: Outcome| {
            cases
                .iter()
                .filter(|case| case.status == status && case.gates())
                .count()
        };
        let mut report = Report {
            suite: suite.to_string(),
            shard,
            passed: count(Outcome::Passed),
            failed: count(Outcome::Failed),
            errors: count(Outcome::Error),
            skipped: count(Outcome::Skipped),
            quarantined: cases.iter().filter(|case| !case.gates()).count(),
            exit_code: SUCCESS,
            time,
            accuracy: accuracy(&cases),
            consistent: consistency(&cases),
            cases,
            run: None,
            baseline: None,
            min_accuracy: None,
            saved: None,
            cost: None,
            unpriced_runs: 0,
            budget: None,
            regraded: None,
        };
        (report.cost, report.unpriced_runs) = report.total_cost();
        let saved: Vec<Saved> = report.cases.iter().filter_map(|case| case.saved).collect();
        report.saved = (!saved.is_empty()).then(|| Saved {
            runs: saved.iter().map(|saved| saved.runs).sum(),
            turns: saved.iter().map(|saved| saved.turns).sum(),
        });
        report.exit_code = report.failure().map_or(SUCCESS, Kind::exit_code);
        report
    }

    /// What the turns asked cost, a retry's replaced attempts too: the sum
    /// of the runs priced (`None` when none was), and how many asked runs
    /// could not be priced (a model without a price, no `__usage__`).
    fn total_cost(&self) -> (Option<f64>, usize) {
        let runs = self.cases.iter().flat_map(|case| &case.runs);
        let asked: Vec<&RunReport> = runs
            .flat_map(|run| std::iter::once(run).chain(&run.earlier))
            .filter(|run| !run.message_ids.is_empty())
            .collect();
        let priced: Vec<f64> = asked.iter().filter_map(|run| run.cost).collect();
        let total = (!priced.is_empty()).then(|| (priced.iter().sum::<f64>() * 1e6).round() / 1e6);
        (total, asked.len() - priced.len())
    }

    /// Gates the run on `--min-accuracy` (when given) instead of on every
    /// case: its exit code follows.
    pub fn gate(&mut self, min_accuracy: Option<f64>) {
        self.min_accuracy = min_accuracy;
        self.exit_code = self.failure().map_or(SUCCESS, Kind::exit_code);
    }

    /// True when at least `--min-accuracy` of the cases passed (a run of
    /// no case meets any).
    pub fn meets_min_accuracy(&self) -> bool {
        // A quarantined case counts neither way.
        let total = self.cases.len() - self.quarantined;
        self.min_accuracy.is_none_or(|min| {
            let (over, under) = fraction(min);
            total == 0 || self.passed as u128 * under >= over * total as u128
        })
    }

    /// None when every case passed (with `--min-accuracy`: when enough
    /// did); otherwise an expectation failure (exit 9), for a case whose
    /// verdict is `fail`, `review` or `error` alike, in TOML suites and
    /// Cube's folders: a case's own failure (a bad stream, a 5xx after
    /// retries, its timeout) is its `error` verdict, never the run's code.
    /// What stops the whole run gives no report.
    pub fn failure(&self) -> Option<Kind> {
        // A case the budget left unasked fails the run whatever passed.
        if self.skipped > 0 {
            return Some(Kind::Expectation);
        }
        if self.min_accuracy.is_some() {
            return (!self.meets_min_accuracy()).then_some(Kind::Expectation);
        }
        (self.failed > 0 || self.errors > 0).then_some(Kind::Expectation)
    }

    /// Reads a JSON report written by `check -o json` (or `check merge`),
    /// waiting no longer than `limit` (the command's `--timeout`) or the
    /// first signal (a FIFO, `<(gh run download …)`).
    pub fn read(path: &std::path::Path, flag: &str, limit: Option<Duration>) -> Result<Report> {
        let shown = format!("{flag} {}", path.display());
        let text = read_text_at_most(Input::File(path.to_path_buf()), MAX_REPORT, limit, &shown)?;
        serde_json::from_str(&text).map_err(|err| {
            usage(format!(
                "{flag} {}: not a report of 'analyst check -o json': {err}",
                path.display()
            ))
        })
    }

    /// One report of the shards' reports, as one unsharded run would have
    /// given it. Refused: a case in two reports, a shard given twice, and
    /// a set of `K/N` shards with one missing.
    pub fn merge(reports: Vec<(String, Report)>) -> Result<Report> {
        let mut shards: Vec<(u32, u32, &str)> = Vec::new();
        for (file, report) in &reports {
            if let Some(shard) = &report.shard {
                let (k, n) = parse_shard(shard).map_err(|err| usage(format!("{file}: shard {shard:?}: {err}")))?;
                if let Some((_, _, other)) = shards.iter().find(|(other_k, ..)| *other_k == k) {
                    return Err(usage(format!("{file} and {other} are both shard {shard}")));
                }
                if let Some((_, other_n, other)) = shards.iter().find(|(_, other_n, _)| *other_n != n) {
                    return Err(usage(format!(
                        "{file} is a shard of {n}, {other} a shard of {other_n}: merge the shards of one run"
                    )));
                }
                shards.push((k, n, file));
            }
        }
        if let Some(&(_, n, _)) = shards.first() {
            let missing: Vec<String> = (1..=n)
                .filter(|k| !shards.iter().any(|(other, ..)| other == k))
                .map(|k| format!("{k}/{n}"))
                .collect();
            if !missing.is_empty() {
                return Err(usage(format!(
                    "shard {} missing: merge the reports of all {n} shards",
                    missing.join(", ")
                )));
            }
        }
        let suite = reports
            .first()
            .map(|(_, report)| report.suite.clone())
            .unwrap_or_default();
        let time = reports.iter().map(|(_, report)| report.time).fold(0.0, f64::max);
        let mut cases: Vec<CaseReport> = Vec::new();
        for (file, report) in reports {
            for case in report.cases {
                if cases.iter().any(|other| other.name == case.name) {
                    return Err(usage(format!(
                        "{file}: case {:?} is in another report too: merge each shard's report once",
                        case.name
                    )));
                }
                cases.push(case);
            }
        }
        Ok(Report::new(&suite, None, cases, time))
    }
}

/// A status as the JSON report spells it.
pub(super) fn status_name(status: Outcome) -> &'static str {
    match status {
        Outcome::Passed => "passed",
        Outcome::Failed => "failed",
        Outcome::Error => "error",
        Outcome::Skipped => "skipped",
    }
}
