//! Regression or noise: how a run compares with a baseline once chance is
//! accounted for. An agent answers differently from run to run, so a drop
//! from 4 of 5 passes to 3 of 5 says nothing, while 10 of 10 to 2 of 10
//! says a lot. Each case is classed by Fisher's exact test on its passed
//! and failed runs (baseline against now, one-sided), the suite by an
//! exact sign test over the cases both runs had (a case counts as worse
//! or better by its pass rate; with one run a case, this is McNemar's exact
//! test). A tier is claimed only where the runs could have reached it:
//! with too few runs for p < 0.05 whatever happened, the tier is
//! `insufficient data`, with the repeats that would do.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, DiscreteCDF, Hypergeometric};

/// Below this p-value a change is a `regression` (or an `improvement`).
pub const SIGNIFICANT: f64 = 0.05;

/// Below this p-value a drop is a `possible regression`.
pub const SUGGESTIVE: f64 = 0.20;

/// Whether `p` is below `threshold`, a p-value computed as exactly the
/// threshold (1/C(6,3) = 0.05) not counting as below it for the rounding
/// of its computation.
fn below(p: f64, threshold: f64) -> bool {
    p < threshold * (1.0 - 1e-9)
}

/// What a comparison with the baseline concludes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Tier {
    /// Worse, p < 0.05: gates the run with `--fail-on-regression`.
    #[serde(rename = "regression")]
    Regression,
    /// Worse, p < 0.20: worth a look, gates nothing.
    #[serde(rename = "possible regression")]
    PossibleRegression,
    /// Better, p < 0.05.
    #[serde(rename = "improvement")]
    Improvement,
    /// No change chance does not explain.
    #[serde(rename = "stable")]
    Stable,
    /// Too few runs for p < 0.05 whatever happened.
    #[serde(rename = "insufficient data")]
    InsufficientData,
}

impl Tier {
    /// Every tier, worst first: the order they are counted in.
    pub const ALL: [Tier; 5] = [
        Tier::Regression,
        Tier::PossibleRegression,
        Tier::Improvement,
        Tier::Stable,
        Tier::InsufficientData,
    ];

    /// The tier as people and the JSON report spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Regression => "regression",
            Tier::PossibleRegression => "possible regression",
            Tier::Improvement => "improvement",
            Tier::Stable => "stable",
            Tier::InsufficientData => "insufficient data",
        }
    }

    /// The tier of p-values reached with runs that could reach p < 0.05.
    fn of(p_worse: f64, p_better: f64) -> Tier {
        match () {
            _ if below(p_worse, SIGNIFICANT) => Tier::Regression,
            _ if below(p_better, SIGNIFICANT) => Tier::Improvement,
            _ if below(p_worse, SUGGESTIVE) => Tier::PossibleRegression,
            _ => Tier::Stable,
        }
    }
}

/// A case's runs that say something about the agent: passed and failed
/// (a run that errored, for a cause outside the answer, counts in neither).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Runs that passed.
    pub passed: u64,
    /// Runs that passed or failed.
    pub runs: u64,
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.passed, self.runs)
    }
}

/// How one case compares with the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseTier {
    /// The case.
    pub name: String,
    /// What the runs conclude.
    pub tier: Tier,
    /// Its runs in the baseline.
    pub before: Counts,
    /// Its runs now.
    pub now: Counts,
    /// Fisher's exact test, one-sided: the chance of a drop at least this
    /// large if the agent had not changed.
    pub p_worse: f64,
    /// The same for a rise.
    pub p_better: f64,
    /// For `insufficient data`: how many runs now, against the baseline's,
    /// could reach p < 0.05 (none when the baseline has too few for any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_needed: Option<u64>,
    /// What else changed, for people (newly failing, a median grown).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
}

impl CaseTier {
    /// Classes a case by its runs before and now.
    pub fn new(name: &str, before: Counts, now: Counts) -> CaseTier {
        let (p_worse, p_better) = fisher(before, now);
        let reachable = below(lowest_p(before.runs, now.runs), SIGNIFICANT);
        CaseTier {
            name: name.to_string(),
            tier: if reachable {
                Tier::of(p_worse, p_better)
            } else {
                Tier::InsufficientData
            },
            before,
            now,
            p_worse,
            p_better,
            runs_needed: (!reachable).then(|| runs_needed(before.runs)).flatten(),
            changes: Vec::new(),
        }
    }

    /// The case's line for people: `flaky: regression (5/5 → 1/5, p = 0.024)`.
    pub fn line(&self) -> String {
        format!("{}: {}", self.name, self.verdict())
    }

    /// What the runs conclude, with the counts and the p-value:
    /// `regression (5/5 → 1/5, p = 0.024)`; for `insufficient data`, the
    /// runs that could tell.
    pub fn verdict(&self) -> String {
        let mut verdict = format!(
            "{} ({} → {}, p = {})",
            self.tier.as_str(),
            self.before,
            self.now,
            p_value(self.p())
        );
        if self.tier == Tier::InsufficientData {
            verdict.push_str(&match self.runs_needed {
                Some(runs) => format!("; {runs} runs now, or {BOTH_SIDES} on both sides, could tell"),
                None => format!("; {BOTH_SIDES} runs on both sides could tell"),
            });
        }
        verdict
    }

    /// The p-value its tier is told with: of a rise for an improvement,
    /// else of a drop.
    pub fn p(&self) -> f64 {
        tier_p(self.tier, self.p_worse, self.p_better)
    }

    /// Whether people should read about it: a tier other than `stable`
    /// and `insufficient data`, something else changed, or a pass rate
    /// that dropped however little the runs tell.
    pub fn worth_telling(&self) -> bool {
        let dropped = change(self.before, self.now) == Ordering::Less;
        !matches!(self.tier, Tier::Stable | Tier::InsufficientData) || !self.changes.is_empty() || dropped
    }
}

/// The fewest runs on both sides that can reach p < 0.05 (1/C(8,4) = 0.014).
pub const BOTH_SIDES: u64 = 4;

/// How the suite compares with the baseline, over the cases both had.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SuiteTier {
    /// What the cases conclude together.
    pub tier: Tier,
    /// Cases both runs had (with a run that passed or failed).
    pub cases: u64,
    /// Of them, those whose pass rate dropped.
    pub worse: u64,
    /// Those whose pass rate rose.
    pub better: u64,
    /// The exact sign test, one-sided: the chance of this many drops
    /// against rises if nothing had changed.
    pub p_worse: f64,
    /// The same for rises.
    pub p_better: f64,
}

/// The fewest cases a sign test needs to reach p < 0.05 (0.5⁵ = 0.031).
pub const CASES_NEEDED: u64 = 5;

impl SuiteTier {
    /// Classes the suite by the cases' pass rates before and now.
    pub fn new(cases: &[(Counts, Counts)]) -> SuiteTier {
        let compared: Vec<Ordering> = cases
            .iter()
            .filter(|(before, now)| before.runs > 0 && now.runs > 0)
            .map(|(before, now)| change(*before, *now))
            .collect();
        let count_of = |wanted: Ordering| compared.iter().filter(|&&change| change == wanted).count() as u64;
        let (worse, better) = (count_of(Ordering::Less), count_of(Ordering::Greater));
        let (p_worse, p_better) = sign_test(worse, better);
        let count = compared.len() as u64;
        SuiteTier {
            tier: match count >= CASES_NEEDED {
                true => Tier::of(p_worse, p_better),
                false => Tier::InsufficientData,
            },
            cases: count,
            worse,
            better,
            p_worse,
            p_better,
        }
    }

    /// The suite's line for people: `suite: stable (2 of 11 cases worse,
    /// 1 better, p = 0.5)`.
    pub fn line(&self) -> String {
        let p = tier_p(self.tier, self.p_worse, self.p_better);
        let mut line = format!(
            "suite: {} ({} of {} cases worse, {} better, p = {})",
            self.tier.as_str(),
            self.worse,
            self.cases,
            self.better,
            p_value(p)
        );
        if self.tier == Tier::InsufficientData {
            line.push_str(&format!("; {CASES_NEEDED} cases in both runs could tell"));
        }
        line
    }
}

/// The p-value a tier is told with: of a rise for an improvement, else of a drop.
fn tier_p(tier: Tier, p_worse: f64, p_better: f64) -> f64 {
    match tier {
        Tier::Improvement => p_better,
        _ => p_worse,
    }
}

/// How the pass rate changed from `before` to `now` (`Less`: it
/// dropped), compared in whole numbers: `passed / runs` crosswise.
fn change(before: Counts, now: Counts) -> Ordering {
    (now.passed * before.runs).cmp(&(before.passed * now.runs))
}

/// A p-value for people: two significant figures (`0.024`, `0.5`, `1`).
pub fn p_value(p: f64) -> String {
    if p >= 0.995 {
        return "1".to_string();
    }
    if p < 0.0001 {
        return "< 0.0001".to_string();
    }
    let digits = (-p.log10()).floor() as usize + 2;
    let text = format!("{p:.digits$}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Fisher's exact test on the 2×2 table of passed and failed runs, before
/// (a row) against now (the other), one-sided both ways: the chance, with
/// the margins fixed, of the baseline having at least (for a drop) or at
/// most (for a rise) the passes it had. As R's `fisher.test(…,
/// alternative = "greater")` and `"less"`. An empty side gives 1.
pub fn fisher(before: Counts, now: Counts) -> (f64, f64) {
    if before.runs == 0 || now.runs == 0 {
        return (1.0, 1.0);
    }
    let population = before.runs + now.runs;
    let passes = before.passed + now.passed;
    let Ok(passes_in_baseline) = Hypergeometric::new(population, passes, before.runs) else {
        return (1.0, 1.0);
    };
    let at_least = match before.passed {
        0 => 1.0,
        passed => passes_in_baseline.sf(passed - 1),
    };
    let at_most = passes_in_baseline.cdf(before.passed);
    (at_least.min(1.0), at_most.min(1.0))
}

/// The smallest one-sided p-value `before` runs against `now` runs can
/// reach: every run passing on one side, failing on the other.
pub fn lowest_p(before: u64, now: u64) -> f64 {
    fisher(
        Counts {
            passed: before,
            runs: before,
        },
        Counts { passed: 0, runs: now },
    )
    .0
}

/// How many runs now could reach p < 0.05 against `before` runs; `None`
/// when no number up to 1000 could (a baseline without runs).
pub fn runs_needed(before: u64) -> Option<u64> {
    (1..=1000).find(|&now| below(lowest_p(before, now), SIGNIFICANT))
}

/// The exact sign test: with `worse` drops and `better` rises, the chance
/// of at least this many drops (and of at least this many rises) if each
/// change were a fair coin. As R's `binom.test(worse, worse + better,
/// alternative = "greater")`.
pub fn sign_test(worse: u64, better: u64) -> (f64, f64) {
    let changed = worse + better;
    let Ok(coin) = Binomial::new(0.5, changed) else {
        return (1.0, 1.0);
    };
    let at_least = |count: u64| match count {
        0 => 1.0,
        count => coin.sf(count - 1).min(1.0),
    };
    (at_least(worse), at_least(better))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn counts(passed: u64, runs: u64) -> Counts {
        Counts { passed, runs }
    }

    fn close(got: f64, published: f64) {
        assert!(
            (got - published).abs() <= published * 1e-3,
            "{got} is not R's {published}"
        );
    }

    /// Published values of R's `fisher.test` (its own help page's
    /// examples, and two tables worked by hand: 1/C(10,5) and 1/C(2,1)).
    #[test]
    fn fisher_matches_rs_published_values() {
        // TeaTasting <- matrix(c(3, 1, 1, 3), nrow = 2);
        // fisher.test(TeaTasting, alternative = "greater"): p-value = 0.2429
        close(fisher(counts(3, 4), counts(1, 4)).0, 0.2429);
        // Convictions <- matrix(c(2, 10, 15, 3), nrow = 2);
        // fisher.test(Convictions, alternative = "less"): p-value = 0.0004652
        close(fisher(counts(2, 17), counts(10, 13)).1, 0.0004652);
        // fisher.test(matrix(c(5, 0, 0, 5), 2), alternative = "greater"): 0.003968
        close(fisher(counts(5, 5), counts(0, 5)).0, 1.0 / 252.0);
        close(fisher(counts(1, 1), counts(0, 1)).0, 0.5);
    }

    /// R's `binom.test(9, 10, alternative = "greater")`: p-value = 0.01074.
    #[test]
    fn the_sign_test_matches_rs_binom_test() {
        close(sign_test(9, 1).0, 0.01074);
        close(sign_test(1, 9).1, 0.01074);
        close(sign_test(5, 0).0, 0.03125);
        assert_eq!(sign_test(0, 0), (1.0, 1.0));
    }

    #[test]
    fn four_of_five_to_three_of_five_is_not_a_regression() {
        let case = CaseTier::new("flaky", counts(4, 5), counts(3, 5));
        assert_eq!(case.tier, Tier::Stable, "{case:?}");
        let case = CaseTier::new("broken", counts(10, 10), counts(2, 10));
        assert_eq!(case.tier, Tier::Regression, "{case:?}");
        assert_eq!(case.line(), "broken: regression (10/10 → 2/10, p = 0.00036)");
        let case = CaseTier::new("better", counts(1, 8), counts(7, 8));
        assert_eq!(case.tier, Tier::Improvement);
        let case = CaseTier::new("once", counts(1, 1), counts(0, 1));
        assert_eq!(case.tier, Tier::InsufficientData);
        assert_eq!(case.runs_needed, Some(20));
        assert_eq!(
            case.line(),
            "once: insufficient data (1/1 → 0/1, p = 0.5); 20 runs now, or 4 on both sides, could tell"
        );
        let case = CaseTier::new("possible", counts(5, 5), counts(2, 5));
        assert_eq!(
            (case.tier, p_value(case.p_worse)),
            (Tier::PossibleRegression, "0.083".into())
        );
    }

    #[test]
    fn the_fewest_runs_that_can_tell_are_as_stated() {
        assert!(below(lowest_p(BOTH_SIDES, BOTH_SIDES), SIGNIFICANT));
        assert!(!below(lowest_p(BOTH_SIDES - 1, BOTH_SIDES - 1), SIGNIFICANT));
        assert_eq!(runs_needed(0), None);
        assert_eq!(runs_needed(3), Some(4));
        assert!(0.5f64.powi(CASES_NEEDED as i32) < SIGNIFICANT);
        assert!(0.5f64.powi(CASES_NEEDED as i32 - 1) >= SIGNIFICANT);
    }

    #[test]
    fn the_suite_is_judged_by_the_cases_that_changed() {
        let same = (counts(1, 1), counts(1, 1));
        let dropped = (counts(1, 1), counts(0, 1));
        let mut cases = vec![same; 6];
        let suite = SuiteTier::new(&cases);
        assert_eq!((suite.tier, suite.worse, suite.cases), (Tier::Stable, 0, 6));
        cases.extend([dropped; 5]);
        let suite = SuiteTier::new(&cases);
        assert_eq!(suite.tier, Tier::Regression, "{suite:?}");
        assert_eq!(
            suite.line(),
            "suite: regression (5 of 11 cases worse, 0 better, p = 0.031)"
        );
        assert_eq!(SuiteTier::new(&[dropped; 4]).tier, Tier::InsufficientData);
    }

    #[test]
    fn p_values_read_to_two_figures() {
        for (p, shown) in [
            (1.0, "1"),
            (0.5, "0.5"),
            (0.2429, "0.24"),
            (0.0241, "0.024"),
            (0.00036, "0.00036"),
        ] {
            assert_eq!(p_value(p), shown);
        }
        assert_eq!(p_value(1e-9), "< 0.0001");
    }

    proptest! {
        /// No tier but `insufficient data` is claimed by runs that could
        /// not reach p < 0.05, and `regression` always has p < 0.05.
        #[test]
        fn no_tier_is_claimed_with_fewer_runs_than_it_needs(
            before_runs in 0u64..12, now_runs in 0u64..12, a in 0u64..12, b in 0u64..12,
        ) {
            let before = counts(a.min(before_runs), before_runs);
            let now = counts(b.min(now_runs), now_runs);
            let case = CaseTier::new("c", before, now);
            let reachable = below(lowest_p(before_runs, now_runs), SIGNIFICANT);
            prop_assert_eq!(case.tier == Tier::InsufficientData, !reachable);
            if case.tier == Tier::Regression {
                prop_assert!(below(case.p_worse, SIGNIFICANT) && now.passed * before.runs < before.passed * now.runs);
            }
            if case.tier == Tier::Improvement {
                prop_assert!(below(case.p_better, SIGNIFICANT) && now.passed * before.runs > before.passed * now.runs);
            }
            if let Some(needed) = case.runs_needed {
                prop_assert!(below(lowest_p(before_runs, needed), SIGNIFICANT));
                prop_assert!(!below(lowest_p(before_runs, needed - 1), SIGNIFICANT));
            }
        }
    }
}
