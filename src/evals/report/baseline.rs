//! A report compared with a baseline report (`--baseline`): each case's
//! tier by its runs, the suite's, what else changed, and whether the
//! comparison gates the run.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{CaseReport, Outcome, Report};
use crate::evals::context::unreliable;
use crate::evals::decide::{p_value, CaseTier, Counts, SuiteTier, Tier};

/// The comparison with a baseline report: each case's tier and the
/// suite's, and whether the baseline measured the same thing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Baseline {
    /// The baseline report's file.
    pub file: String,
    /// Why the baseline is no fair measure of this run (another agent,
    /// branch or suite; too old; it does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreliable: Option<String>,
    /// Whether the comparison may fail the run (`--fail-on-regression`):
    /// not with an unreliable baseline, unless `--baseline-any`.
    pub gates: bool,
    /// The suite's tier, over the cases both runs had.
    pub suite: SuiteTier,
    /// The tier of each case both runs had, in suite order.
    pub cases: Vec<CaseTier>,
    /// The cases whose tier is `regression`.
    pub regressions: Vec<Regression>,
}

impl Baseline {
    /// The head of the table of cases worth a look ([`Baseline::table`]).
    pub const COLUMNS: [&'static str; 5] = ["case", "tier", "passed before → now", "p", "also"];

    /// Why it is unreliable and whether it gates all the same, as one
    /// sentence; `None` when it is reliable.
    pub fn distrust(&self) -> Option<String> {
        let why = self.unreliable.as_ref()?;
        Some(format!("Unreliable baseline: {why}; {}.", self.trust()))
    }

    /// Whether an unreliable baseline gates all the same, for people.
    pub fn trust(&self) -> &'static str {
        match self.gates {
            true => "trusted with --baseline-any",
            false => "it gates nothing (--baseline-any trusts it)",
        }
    }

    /// The cases worth a look (see [`CaseTier::worth_telling`]), a row of
    /// [`Baseline::COLUMNS`] each, as plain text.
    pub fn table(&self) -> Vec<[String; 5]> {
        self.cases
            .iter()
            .filter(|case| case.worth_telling())
            .map(|case| {
                [
                    case.name.clone(),
                    case.tier.as_str().to_string(),
                    format!("{} → {}", case.before, case.now),
                    p_value(case.p()),
                    case.changes.join("; "),
                ]
            })
            .collect()
    }
}

/// A case whose tier is `regression`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Regression {
    /// The case.
    pub name: String,
    /// What got worse, one phrase each: the tier with its counts and
    /// p-value, then what else changed.
    pub reasons: Vec<String>,
}

/// How one case compares with the baseline, for people: its tier line,
/// then what else changed.
pub fn comparison_line(tier: &CaseTier) -> String {
    std::iter::once(tier.line())
        .chain(tier.changes.iter().cloned())
        .collect::<Vec<_>>()
        .join("; ")
}

/// How much a median may grow before it is a regression (20%).
pub const GROWTH_ALLOWED: f64 = 0.2;

/// How many seconds a median duration must also grow by to be a
/// regression: finer changes are the noise of a shared CI machine.
pub const DURATION_NOISE: f64 = 0.5;

impl Report {
    /// Compares with a `baseline` run: each case both had is classed by
    /// its passed and failed runs ([`CaseTier`]), the suite by the cases'
    /// pass rates ([`SuiteTier`]); a case newly failing, or whose median
    /// duration or tokens grew by more than [`GROWTH_ALLOWED`] (a duration
    /// also by more than [`DURATION_NOISE`]), says so beside its tier.
    /// The baseline gates the run unless it is unreliable (another agent,
    /// branch or suite, older than `max_age`) and `trust_any` is false.
    pub fn compare_with(&mut self, file: &str, baseline: &Report, max_age: Duration, trust_any: bool) {
        let mut cases = Vec::new();
        for case in &self.cases {
            let Some(before) = baseline.cases.iter().find(|before| before.name == case.name) else {
                continue;
            };
            let mut tier = CaseTier::new(&case.name, run_counts(before), run_counts(case));
            if before.status == Outcome::Passed && case.status != Outcome::Passed {
                tier.changes.push(format!("newly {}", status_word(case.status)));
            }
            let grew = |what: &str, was: Option<f64>, now: Option<f64>, unit: &str, noise: f64| match (was, now) {
                (Some(was), Some(now)) if was > 0.0 && now > was * (1.0 + GROWTH_ALLOWED) && now - was > noise => {
                    Some(format!(
                        "median {what} up {:.0}% ({was}{unit} to {now}{unit})",
                        (now / was - 1.0) * 100.0
                    ))
                }
                _ => None,
            };
            tier.changes.extend(grew(
                "duration",
                Some(before.medians.duration),
                Some(case.medians.duration),
                "s",
                DURATION_NOISE,
            ));
            tier.changes.extend(grew(
                "tokens",
                before.medians.total_tokens,
                case.medians.total_tokens,
                "",
                0.0,
            ));
            cases.push(tier);
        }
        // The cases both ran whose fingerprint changed: what makes an
        // edited suite's baseline unreliable, by name.
        let changed: Vec<&str> = self
            .cases
            .iter()
            .filter(|case| {
                baseline
                    .cases
                    .iter()
                    .any(|before| before.name == case.name && before.hash != case.hash)
            })
            .map(|case| case.name.as_str())
            .collect();
        let unreliable = self
            .run
            .as_ref()
            .and_then(|now| unreliable(baseline.run.as_ref(), now, &changed, max_age, chrono::Utc::now()));
        let pairs: Vec<(Counts, Counts)> = cases.iter().map(|case| (case.before, case.now)).collect();
        self.baseline = Some(Baseline {
            file: file.to_string(),
            gates: unreliable.is_none() || trust_any,
            unreliable,
            suite: SuiteTier::new(&pairs),
            regressions: cases
                .iter()
                .filter(|case| case.tier == Tier::Regression)
                .map(|case| Regression {
                    name: case.name.clone(),
                    reasons: std::iter::once(case.verdict())
                        .chain(case.changes.iter().cloned())
                        .collect(),
                })
                .collect(),
            cases,
        });
    }

    /// What fails the run under `--fail-on-regression`: the cases whose
    /// tier is `regression`, and the suite's when it is, as one phrase;
    /// `None` without a baseline that gates.
    pub fn gating_regression(&self) -> Option<String> {
        let baseline = self.baseline.as_ref().filter(|baseline| baseline.gates)?;
        let cases = baseline.regressions.len();
        let suite = baseline.suite.tier == Tier::Regression;
        match (cases, suite) {
            (0, false) => None,
            (0, true) => Some("the suite regressed against the baseline".into()),
            (n, suite) => Some(format!(
                "{n} of {} cases regressed against the baseline{}",
                self.cases.len(),
                if suite { ", and the suite" } else { "" }
            )),
        }
    }
}

/// A case's runs that say something of the agent: passed, and passed or
/// failed (a run that errored counts in neither).
fn run_counts(case: &CaseReport) -> Counts {
    let count = |wanted: &[Outcome]| case.runs.iter().filter(|run| wanted.contains(&run.status)).count() as u64;
    Counts {
        passed: count(&[Outcome::Passed]),
        runs: count(&[Outcome::Passed, Outcome::Failed]),
    }
}

/// A status as a word of a sentence: `passing`, `failing`, `erroring`.
fn status_word(status: Outcome) -> &'static str {
    match status {
        Outcome::Passed => "passing",
        Outcome::Failed => "failing",
        Outcome::Error => "erroring",
        Outcome::Skipped => "skipped",
    }
}
