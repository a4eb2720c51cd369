//! A budget for a whole `check` run (`--budget-tokens N`, `--budget-usd
//! X`): no new turn starts once the finished turns' tokens (or dollars, at
//! the config file's `[prices]`) reach it; turns in flight finish. A turn
//! whose usage is unknown (no `__usage__` line; for dollars, a model with
//! no price) counts as reaching it: the budget fails closed, and says
//! which turn and why. The cases not asked are `skipped` (`budget`).

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::domain::{dollars, Prices, UsageRecord};

/// The limits of a run's budget, from the flags.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BudgetLimits {
    /// `--budget-tokens`: the finished turns' `totalTokens`.
    pub tokens: Option<u64>,
    /// `--budget-usd`: the finished turns' cost at `[prices]`.
    pub usd: Option<f64>,
}

impl BudgetLimits {
    /// True when a budget is set.
    pub fn is_set(&self) -> bool {
        self.tokens.is_some() || self.usd.is_some()
    }
}

/// What a run's budget spent, and why it stopped the run (in every report).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetReport {
    /// `--budget-tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// `--budget-usd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd: Option<f64>,
    /// The `totalTokens` of the finished turns that reported usage.
    pub spent_tokens: u64,
    /// The dollars of the finished turns that could be priced.
    pub spent_usd: f64,
    /// Why no new turn started (the turn that reached the budget); none
    /// when the run ended within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reached: Option<String>,
    /// Runs not asked because the budget was spent, and their turns.
    pub skipped_runs: usize,
    /// The turns those runs (and runs cut short) would have asked.
    pub skipped_turns: usize,
}

/// A run's budget as its turns finish: shared by the run's threads.
#[derive(Debug)]
pub struct RunBudget {
    limits: BudgetLimits,
    spent: Mutex<BudgetReport>,
}

impl RunBudget {
    /// The budget `limits` set; `None` when none is.
    pub fn new(limits: BudgetLimits) -> Option<RunBudget> {
        limits.is_set().then(|| RunBudget {
            limits,
            spent: Mutex::new(BudgetReport {
                tokens: limits.tokens,
                usd: limits.usd,
                ..BudgetReport::default()
            }),
        })
    }

    /// Counts a finished turn (`turn` names it for people: `case "revenue",
    /// run 2, turn 1`) that reported `usage`, priced at `prices`. Returns
    /// why the budget is now reached when this turn reached it, once.
    pub fn spend(&self, turn: &str, usage: Option<&UsageRecord>, prices: &Prices) -> Option<String> {
        let mut spent = self.spent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut unknown = None;
        match usage {
            Some(usage) => spent.spent_tokens += usage.counts.total_tokens,
            None => unknown = Some(format!("{turn} reported no usage (no __usage__ line)")),
        }
        if self.limits.usd.is_some() {
            match usage.and_then(|usage| prices.turn(usage)) {
                Some(cost) => spent.spent_usd += cost,
                None if unknown.is_none() => {
                    let models = usage.map(|usage| usage.models.join(", ")).unwrap_or_default();
                    unknown = Some(format!(
                        "{turn} could not be priced (a model with no price in [prices]: {models})"
                    ));
                }
                None => {}
            }
        }
        if spent.reached.is_some() {
            return None;
        }
        let over_tokens = self.limits.tokens.filter(|&limit| spent.spent_tokens >= limit);
        let over_usd = self.limits.usd.filter(|&limit| spent.spent_usd >= limit);
        let why = match (unknown, over_tokens, over_usd) {
            (Some(unknown), ..) => format!("{unknown}: its usage is unknown, so it counts as reaching the budget"),
            (None, Some(limit), _) => format!(
                "{turn} brought the tokens to {}, reaching --budget-tokens {limit}",
                spent.spent_tokens
            ),
            (None, None, Some(limit)) => format!(
                "{turn} brought the cost to {}, reaching --budget-usd {}",
                dollars(spent.spent_usd),
                dollars(limit)
            ),
            (None, None, None) => return None,
        };
        spent.reached = Some(why.clone());
        Some(why)
    }

    /// True once the finished turns reached the budget: no new turn starts.
    pub fn reached(&self) -> bool {
        self.spent.lock().map_or(true, |spent| spent.reached.is_some())
    }

    /// Counts `runs` runs not asked and `turns` turns not asked because the
    /// budget was spent.
    pub fn skipped(&self, runs: usize, turns: usize) {
        if let Ok(mut spent) = self.spent.lock() {
            spent.skipped_runs += runs;
            spent.skipped_turns += turns;
        }
    }

    /// What the budget spent and stopped, for the report.
    pub fn report(&self) -> BudgetReport {
        let spent = self.spent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        BudgetReport {
            spent_usd: (spent.spent_usd * 1e6).round() / 1e6,
            ..spent.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Price, Usage};

    fn used(tokens: u64, model: &str) -> UsageRecord {
        UsageRecord {
            counts: Usage {
                total_tokens: tokens,
                input_tokens: tokens,
                ..Usage::default()
            },
            models: vec![model.to_string()],
            by_model: Vec::new(),
        }
    }

    #[test]
    fn the_turn_that_reaches_the_budget_is_named_once() {
        let budget = RunBudget::new(BudgetLimits {
            tokens: Some(1000),
            usd: None,
        })
        .unwrap();
        let prices = Prices::default();
        assert_eq!(budget.spend("turn a", Some(&used(600, "m")), &prices), None);
        assert!(!budget.reached());
        let why = budget.spend("turn b", Some(&used(400, "m")), &prices).unwrap();
        assert_eq!(why, "turn b brought the tokens to 1000, reaching --budget-tokens 1000");
        assert!(budget.reached());
        assert_eq!(budget.spend("turn c", Some(&used(5, "m")), &prices), None, "said once");
        assert_eq!(budget.report().spent_tokens, 1005, "turns in flight still count");
    }

    #[test]
    fn unknown_usage_fails_closed_for_tokens_and_an_unpriced_model_for_dollars() {
        let tokens = RunBudget::new(BudgetLimits {
            tokens: Some(1_000_000),
            usd: None,
        })
        .unwrap();
        let why = tokens.spend("turn a", None, &Prices::default()).unwrap();
        assert_eq!(
            why,
            "turn a reported no usage (no __usage__ line): its usage is unknown, so it counts as reaching the budget"
        );
        let prices = Prices(vec![(
            "priced".into(),
            Price {
                input: 1.0,
                ..Price::default()
            },
        )]);
        let usd = RunBudget::new(BudgetLimits {
            tokens: None,
            usd: Some(100.0),
        })
        .unwrap();
        assert_eq!(usd.spend("turn a", Some(&used(1000, "priced")), &prices), None);
        let why = usd.spend("turn b", Some(&used(10, "free-model")), &prices).unwrap();
        assert!(why.contains("a model with no price in [prices]: free-model"), "{why}");
        assert!(RunBudget::new(BudgetLimits::default()).is_none());
    }
}
