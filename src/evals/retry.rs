//! Pay only for what is unknown. `check --retry-errors REPORT`: of an
//! earlier run's report, only the runs that ended in an error for a cause
//! outside the agent's answer (the service failing or unreachable, a reset
//! connection, the case's own timeout, the agent crashing) are asked
//! again; every other run keeps its verdict, and each run asked again
//! keeps the attempts it replaces. `--stop-when-decided`: a case's repeats
//! end once its verdict cannot change ([`Tally`]).

use std::sync::atomic::{AtomicUsize, Ordering};

use super::grade::Reason;
use super::report::{runs_to_pass, CaseReport, Outcome, RunReport};
use super::suite::Case;
use crate::error::Kind;

/// Whether `run` ended in an error that says nothing of the agent's
/// answer: asking again may give it a verdict. Not a failed expectation,
/// a query of the agent's that failed, or a ground truth that failed or
/// does not exist.
pub fn is_retryable(run: &RunReport) -> bool {
    if run.status != Outcome::Error {
        return false;
    }
    match run.cube.score_reason {
        Some(reason) => reason == Reason::AgentError,
        None => matches!(
            Kind::from_exit_code(run.exit_code),
            Kind::Service | Kind::BadStream | Kind::Timeout
        ),
    }
}

/// A case of the earlier report, and which of its runs to ask again.
#[derive(Debug)]
pub struct Earlier {
    /// The case as the earlier report has it.
    pub case: CaseReport,
    /// The runs to ask again, 0-based, in order.
    pub again: Vec<usize>,
}

impl Earlier {
    /// The case and the runs of it to ask again.
    pub fn of(case: CaseReport) -> Earlier {
        let again = case
            .runs
            .iter()
            .enumerate()
            .filter(|(_, run)| is_retryable(run))
            .map(|(at, _)| at)
            .collect();
        Earlier { case, again }
    }

    /// The case's runs with each run asked again (`asked`, in the order
    /// of [`Earlier::again`]) in place of the one it replaces, which it
    /// keeps among its `earlier` attempts.
    pub fn merged(self, asked: Vec<RunReport>) -> Vec<RunReport> {
        let mut runs = self.case.runs;
        for (at, mut run) in self.again.into_iter().zip(asked) {
            let Some(slot) = runs.get_mut(at) else { continue };
            let mut replaced = std::mem::replace(slot, RunReport::new(0));
            run.earlier = std::mem::take(&mut replaced.earlier);
            run.earlier.push(replaced);
            *slot = run;
        }
        runs
    }
}

/// How a case's runs came out so far, for `--stop-when-decided` and the
/// run's budget: its passes, its other runs, and the runs not asked
/// because the case was decided, or because the budget was spent.
#[derive(Default)]
pub struct Tally {
    passed: AtomicUsize,
    missed: AtomicUsize,
    skipped: AtomicUsize,
    unasked: AtomicUsize,
}

impl Tally {
    /// Counts a run not asked: its case was decided before it.
    pub fn skip(&self) {
        self.skipped.fetch_add(1, Ordering::SeqCst);
    }

    /// How many runs were not asked.
    pub fn skipped(&self) -> usize {
        self.skipped.load(Ordering::SeqCst)
    }

    /// Counts a run not asked: the run's budget was spent.
    pub fn leave_unasked(&self) {
        self.unasked.fetch_add(1, Ordering::SeqCst);
    }

    /// How many runs the budget left unasked.
    pub fn unasked(&self) -> usize {
        self.unasked.load(Ordering::SeqCst)
    }

    /// Counts a finished run (one the budget cut short says nothing).
    pub fn count(&self, status: Outcome) {
        let counter = match status {
            Outcome::Passed => &self.passed,
            Outcome::Skipped => return,
            _ => &self.missed,
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }

    /// True when the runs so far decide `case` at its pass rate: enough
    /// passes, or too many misses for the remaining runs to make up. A
    /// case is always asked at least once (`pass_rate = 0` needs no pass).
    pub fn decides(&self, case: &Case) -> bool {
        let needed = runs_to_pass(case.pass_rate, case.repeat);
        let (passed, missed) = (self.passed.load(Ordering::SeqCst), self.missed.load(Ordering::SeqCst));
        passed + missed > 0 && (passed >= needed || missed > case.repeat - needed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evals::grade::Verdict;

    fn run(number: usize, status: Outcome, kind: Option<Kind>, reason: Option<Reason>) -> RunReport {
        let mut run = RunReport::new(number);
        run.status = status;
        run.exit_code = kind.map_or(crate::error::SUCCESS, Kind::exit_code);
        if let Some(reason) = reason {
            run.cube.verdict = Some(Verdict::Error);
            run.cube.score_reason = Some(reason);
        }
        run
    }

    #[test]
    fn pass_rates_are_counted_as_the_fractions_they_are_written_as() {
        // Each pair is a float product that lands a hair above a whole number.
        for (rate, runs, needed) in [
            (0.28, 25, 7),
            (0.56, 25, 14),
            (0.14, 50, 7),
            (0.55, 100, 55),
            (0.07, 100, 7),
        ] {
            assert!(
                rate * runs as f64 > needed as f64,
                "{rate} × {runs} is above {needed} as a float"
            );
            assert_eq!(runs_to_pass(rate, runs), needed, "{rate} of {runs}");
        }
        assert_eq!(runs_to_pass(0.8, 5), 4);
        assert_eq!(runs_to_pass(1.0, 3), 3);
        assert_eq!(runs_to_pass(0.0, 3), 0);
        assert_eq!(runs_to_pass(1.0 / 3.0, 3), 1, "a third, however many digits");
        assert_eq!(crate::evals::report::fraction(0.333), (333, 1000));
    }

    #[test]
    fn only_errors_outside_the_answer_are_asked_again() {
        let error = |kind: Kind, reason: Option<Reason>| run(1, Outcome::Error, Some(kind), reason);
        assert!(is_retryable(&error(Kind::Service, None)));
        assert!(is_retryable(&error(Kind::Timeout, None)));
        assert!(is_retryable(&error(Kind::BadStream, None)));
        assert!(is_retryable(&error(Kind::Expectation, Some(Reason::AgentError))));
        for reason in [
            Reason::QueryError,
            Reason::GroundTruthQueryFailed,
            Reason::GroundTruthNotFound,
        ] {
            assert!(!is_retryable(&error(Kind::Expectation, Some(reason))), "{reason:?}");
        }
        assert!(!is_retryable(&run(1, Outcome::Failed, Some(Kind::Expectation), None)));
        assert!(!is_retryable(&error(Kind::Auth, None)));
    }

    #[test]
    fn a_run_asked_again_keeps_the_attempts_it_replaces() {
        let runs = vec![
            run(1, Outcome::Passed, None, None),
            run(2, Outcome::Error, Some(Kind::Service), None),
            run(3, Outcome::Failed, Some(Kind::Expectation), None),
        ];
        let case = CaseReport::new(1, "c", 1.0, 1, runs);
        let earlier = Earlier::of(case);
        assert_eq!(earlier.again, [1]);
        let merged = earlier.merged(vec![run(2, Outcome::Passed, None, None)]);
        let statuses: Vec<Outcome> = merged.iter().map(|run| run.status).collect();
        assert_eq!(statuses, [Outcome::Passed, Outcome::Passed, Outcome::Failed]);
        let replaced = &merged[1].earlier;
        assert_eq!(replaced.len(), 1);
        let attempt = replaced.first().expect("the attempt replaced");
        assert_eq!(attempt.run, 2);
        assert_eq!(Kind::from_exit_code(attempt.exit_code), Kind::Service);
    }
}
