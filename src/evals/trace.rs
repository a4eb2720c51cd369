//! A `check` run as one trace: the run's span, a child per case (from its
//! first run's start to its last run's end) holding the `invoke_agent`
//! spans of its turns, with the verdicts, the accuracy and the regression
//! tiers as attributes once the report is made.

use std::sync::Mutex;
use std::time::SystemTime;

use super::report::{case_tag, Outcome, Report};
use crate::error::SUCCESS;
use crate::telemetry::{Attr, OtlpSettings, SpanData, SpanIds, Spans};

/// The trace of a run while its cases run.
pub struct RunTrace {
    /// The turns' spans so far (and, once finished, the run's and cases').
    pub spans: Spans,
    run: SpanIds,
    cases: Vec<SpanIds>,
    /// When each case's first run started and its last ended.
    times: Mutex<Vec<Option<(SystemTime, SystemTime)>>>,
    started: SystemTime,
}

impl RunTrace {
    /// The trace of a run of `cases` cases, begun now.
    pub fn new(settings: OtlpSettings, cases: usize) -> RunTrace {
        let run = SpanIds::root();
        RunTrace {
            spans: Spans::new(settings),
            run,
            cases: (0..cases).map(|_| run.child()).collect(),
            times: Mutex::new(vec![None; cases]),
            started: SystemTime::now(),
        }
    }

    /// The span the turns of case `case` are children of.
    pub fn case_span(&self, case: usize) -> SpanIds {
        self.cases[case]
    }

    /// A run of case `case` ran from `start` to `end`.
    pub fn case_ran(&self, case: usize, start: SystemTime, end: SystemTime) {
        let mut times = self.times.lock().unwrap_or_else(|e| e.into_inner());
        times[case] = Some(match times[case] {
            Some((first, last)) => (first.min(start), last.max(end)),
            None => (start, end),
        });
    }

    /// Every span of the run, the run's and its cases' made from `report`
    /// (`names`: the run's cases in the order their spans were made).
    pub fn finish(self, report: &Report, names: &[String]) -> Spans {
        let ended = SystemTime::now();
        let times = self.times.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut spans = Vec::new();
        for (index, name) in names.iter().enumerate() {
            let Some(case) = report.cases.iter().find(|case| &case.name == name) else {
                continue;
            };
            let (start, end) = times[index].unwrap_or((ended, ended));
            let verdict = case_tag(case).to_lowercase();
            let mut attributes = vec![
                ("analyst.case.name", Attr::Text(case.name.clone())),
                ("analyst.case.verdict", Attr::Text(verdict)),
                ("analyst.case.pass_rate", Attr::Float(case.pass_rate)),
                ("analyst.case.runs", Attr::Int(case.runs.len() as i64)),
            ];
            if let Some(space) = &case.space {
                attributes.push(("analyst.case.space", Attr::Text(space.clone())));
            }
            if let Some(reason) = case.cube.score_reason {
                attributes.push(("analyst.case.score_reason", Attr::Text(reason.as_str().into())));
            }
            if let Some(tier) = report
                .baseline
                .as_ref()
                .and_then(|baseline| baseline.cases.iter().find(|tier| &tier.name == name))
            {
                attributes.push(("analyst.case.tier", Attr::Text(tier.tier.as_str().into())));
            }
            spans.push(SpanData {
                ids: self.cases[index],
                parent: Some(self.run.span),
                name: format!("case {name}"),
                client: false,
                start,
                end,
                attributes,
                error: (case.status != Outcome::Passed).then(|| {
                    let reason = case
                        .cube
                        .score_reason
                        .map_or_else(|| reason(case.status), |reason| reason.as_str());
                    self.spans.content_or(&case.messages.join("; "), reason)
                }),
            });
        }
        let mut attributes = vec![
            ("analyst.suite", Attr::Text(report.suite.clone())),
            ("analyst.passed", Attr::Int(report.passed as i64)),
            ("analyst.failed", Attr::Int(report.failed as i64)),
            ("analyst.errors", Attr::Int(report.errors as i64)),
            ("analyst.exit_code", Attr::Int(i64::from(report.exit_code))),
        ];
        let mut optional = |key: &'static str, value: Option<Attr>| {
            if let Some(value) = value {
                attributes.push((key, value));
            }
        };
        optional("analyst.shard", report.shard.clone().map(Attr::Text));
        optional("analyst.accuracy", report.accuracy.clone().map(Attr::Text));
        optional("analyst.cost_usd", report.cost.map(Attr::Float));
        if let Some(baseline) = &report.baseline {
            optional(
                "analyst.baseline.tier",
                Some(Attr::Text(baseline.suite.tier.as_str().into())),
            );
            optional("analyst.baseline.gates", Some(Attr::Bool(baseline.gates)));
            optional(
                "analyst.regressions",
                Some(Attr::Texts(
                    baseline.regressions.iter().map(|r| r.name.clone()).collect(),
                )),
            );
        }
        spans.push(SpanData {
            ids: self.run,
            parent: None,
            name: format!("check {}", report.suite),
            client: false,
            start: self.started,
            end: ended,
            attributes,
            error: (report.exit_code != SUCCESS).then(|| format!("exit {}", report.exit_code)),
        });
        self.spans.add(spans);
        self.spans
    }
}

/// Why a case did not pass, named without its text (which quotes the
/// answer and the SQL).
fn reason(status: Outcome) -> &'static str {
    match status {
        Outcome::Passed => "passed",
        Outcome::Failed => "an expectation, a comparison or a budget was not met",
        Outcome::Error => "the run ended in an error",
        Outcome::Skipped => "not asked: the run's budget was spent",
    }
}
