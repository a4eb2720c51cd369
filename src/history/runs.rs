//! `check` runs as the history keeps them: one row per run beside its
//! turns (its suite by path, counts, accuracy, cost, where it ran), for
//! `analyst history trend`. Written in one short transaction when the run
//! has its report; read oldest first.

use anyhow::Result;
use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use super::History;

/// One recorded `check` run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckRunRecord {
    /// When it started, RFC 3339 in UTC.
    pub at: String,
    /// The suite as named across checkouts (its path in its repository).
    pub suite_path: String,
    /// The suite as named on the command line.
    pub suite: String,
    /// `K/N` for one shard's run.
    pub shard: Option<String>,
    /// The chat URL asked, without credentials.
    pub chat_url: Option<String>,
    /// The git branch (or ref) of the checkout, when known.
    pub branch: Option<String>,
    /// The commit of the checkout, when known.
    pub commit: Option<String>,
    /// The CI job's page, when it ran in one.
    pub ci_url: Option<String>,
    /// Cases in the run.
    pub cases: u64,
    /// Cases that passed.
    pub passed: u64,
    /// Cases that failed.
    pub failed: u64,
    /// Cases that errored.
    pub errors: u64,
    /// Cases the budget left unasked.
    pub skipped: u64,
    /// Cases whose quarantine held.
    pub quarantined: u64,
    /// Of the cases asked more than once, those that passed every run.
    pub consistent_passed: Option<u64>,
    /// The cases asked more than once.
    pub consistent_cases: Option<u64>,
    /// What the priced runs cost, in US dollars.
    pub cost: Option<f64>,
    /// How long the run took.
    pub seconds: f64,
    /// A re-grade of saved streams (no turn asked).
    pub regraded: bool,
    /// The run's exit code.
    pub exit_code: u8,
}

impl CheckRunRecord {
    /// The share of the cases that gate (not quarantined) that passed;
    /// `None` for a run with none.
    pub fn accuracy(&self) -> Option<f64> {
        let gating = self.cases.saturating_sub(self.quarantined);
        (gating > 0).then(|| self.passed as f64 / gating as f64)
    }
}

/// Which recorded runs `history trend` reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrendFilter {
    /// The suite, by [`CheckRunRecord::suite_path`]; `None`: the suite of
    /// the latest recorded run.
    pub suite_path: Option<String>,
    /// Only runs since this time (RFC 3339).
    pub since: Option<String>,
    /// Only the latest N runs.
    pub last: Option<usize>,
}

impl History {
    /// Records a `check` run, in one short transaction.
    pub fn record_check_run(&self, run: &CheckRunRecord) -> Result<()> {
        self.connection
            .execute(
                "INSERT INTO check_runs (at, suite_path, suite, shard, chat_url, git_ref, git_commit, ci_url, cases,
                    passed, failed, errors, skipped, quarantined, consistent_passed, consistent_cases, cost, seconds,
                    regraded, exit_code)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
                params![
                    run.at,
                    run.suite_path,
                    run.suite,
                    run.shard,
                    run.chat_url,
                    run.branch,
                    run.commit,
                    run.ci_url,
                    run.cases as i64,
                    run.passed as i64,
                    run.failed as i64,
                    run.errors as i64,
                    run.skipped as i64,
                    run.quarantined as i64,
                    run.consistent_passed.map(|n| n as i64),
                    run.consistent_cases.map(|n| n as i64),
                    run.cost,
                    run.seconds,
                    run.regraded,
                    i64::from(run.exit_code),
                ],
            )
            .map_err(|err| self.failed(err))?;
        Ok(())
    }

    /// The recorded runs `filter` picks, oldest first, and the suite they
    /// are of (`None` when no run is recorded at all).
    pub fn check_runs(&self, filter: &TrendFilter) -> Result<(Option<String>, Vec<CheckRunRecord>)> {
        let failed = |err| self.failed(err);
        let suite = match &filter.suite_path {
            Some(suite) => Some(suite.clone()),
            None => self
                .connection
                .query_row(
                    "SELECT suite_path FROM check_runs ORDER BY at DESC, id DESC LIMIT 1",
                    [],
                    |row| row.get::<_, String>(0),
                )
                .optional()
                .map_err(failed)?,
        };
        let Some(suite) = suite else {
            return Ok((None, Vec::new()));
        };
        let mut statement = self
            .connection
            .prepare(
                "SELECT * FROM (SELECT * FROM check_runs WHERE suite_path = ?1 AND at >= ?2
                 ORDER BY at DESC, id DESC LIMIT ?3) ORDER BY at, id",
            )
            .map_err(failed)?;
        let last = filter.last.map_or(-1, |last| last as i64);
        let since = filter.since.as_deref().unwrap_or("");
        let runs = statement
            .query_map(params![suite, since, last], |row| {
                let count = |name: &str| row.get::<_, i64>(name).map(|n| n.max(0) as u64);
                let maybe = |name: &str| row.get::<_, Option<i64>>(name).map(|n| n.map(|n| n.max(0) as u64));
                Ok(CheckRunRecord {
                    at: row.get("at")?,
                    suite_path: row.get("suite_path")?,
                    suite: row.get("suite")?,
                    shard: row.get("shard")?,
                    chat_url: row.get("chat_url")?,
                    branch: row.get("git_ref")?,
                    commit: row.get("git_commit")?,
                    ci_url: row.get("ci_url")?,
                    cases: count("cases")?,
                    passed: count("passed")?,
                    failed: count("failed")?,
                    errors: count("errors")?,
                    skipped: count("skipped")?,
                    quarantined: count("quarantined")?,
                    consistent_passed: maybe("consistent_passed")?,
                    consistent_cases: maybe("consistent_cases")?,
                    cost: row.get("cost")?,
                    seconds: row.get("seconds")?,
                    regraded: row.get("regraded")?,
                    exit_code: u8::try_from(row.get::<_, i64>("exit_code")?).unwrap_or(u8::MAX),
                })
            })
            .map_err(failed)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(failed)?;
        Ok((Some(suite), runs))
    }
}
