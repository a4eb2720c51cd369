//! What a turn spent, typed once from its `__usage__` line (which the
//! stream reads, the history records, `check` budgets and reports), and
//! what it cost at the config file's prices, written in dollars.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a turn spent, from its `__usage__` line (or several turns',
/// summed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// `inputTokens`.
    pub input_tokens: u64,
    /// `outputTokens`.
    pub output_tokens: u64,
    /// `cacheReadTokens`.
    pub cache_read_tokens: u64,
    /// `cacheWriteTokens`.
    pub cache_write_tokens: u64,
    /// `totalTokens`.
    pub total_tokens: u64,
    /// `llmCalls`.
    pub llm_calls: u64,
}

impl Usage {
    /// The counts of a `__usage__` line's `usage` object (a count it lacks is 0).
    pub fn of(usage: &Value) -> Usage {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        Usage {
            input_tokens: count("inputTokens"),
            output_tokens: count("outputTokens"),
            cache_read_tokens: count("cacheReadTokens"),
            cache_write_tokens: count("cacheWriteTokens"),
            total_tokens: count("totalTokens"),
            llm_calls: count("llmCalls"),
        }
    }

    /// Adds another's counts.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.total_tokens += other.total_tokens;
        self.llm_calls += other.llm_calls;
    }
}

/// A model's price in US dollars per million tokens (`[prices."MODEL"]`).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Per million input tokens.
    #[serde(default)]
    pub input: f64,
    /// Per million output tokens.
    #[serde(default)]
    pub output: f64,
    /// Per million cache-read tokens.
    #[serde(default)]
    pub cache_read: f64,
    /// Per million cache-write tokens.
    #[serde(default)]
    pub cache_write: f64,
}

impl Price {
    /// What `spent` costs at this price.
    pub fn of(&self, spent: &Usage) -> f64 {
        (spent.input_tokens as f64 * self.input
            + spent.output_tokens as f64 * self.output
            + spent.cache_read_tokens as f64 * self.cache_read
            + spent.cache_write_tokens as f64 * self.cache_write)
            / 1e6
    }
}

/// The config file's price table (`[prices]`), by model name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prices(pub Vec<(String, Price)>);

impl Prices {
    /// Whether no model has a price.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The price of `model`, when the table has one.
    pub fn of(&self, model: &str) -> Option<Price> {
        self.0.iter().find(|(name, _)| name == model).map(|(_, price)| *price)
    }

    /// What a turn cost in US dollars: each model's counts at its price,
    /// or the turn's counts at its one model's price (or at the price all
    /// its models share); `None` when a price is missing or the split is
    /// not known.
    pub fn turn(&self, usage: &UsageRecord) -> Option<f64> {
        if !usage.by_model.is_empty() {
            return usage
                .by_model
                .iter()
                .map(|part| self.of(&part.model).map(|price| price.of(&part.counts)))
                .sum();
        }
        let prices: Vec<Price> = usage.models.iter().map(|model| self.of(model)).collect::<Option<_>>()?;
        let first = prices.first()?;
        prices
            .iter()
            .all(|price| price == first)
            .then(|| first.of(&usage.counts))
    }
}

/// What a turn's `__usage__` reported: its counts and models.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRecord {
    /// The token and call counts.
    #[serde(flatten)]
    pub counts: Usage,
    /// `models`, their names.
    pub models: Vec<String>,
    /// Each model's own counts, when the usage line gave them (entries of
    /// `models` that are objects): what a turn of several models is
    /// priced by.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_model: Vec<ModelUsage>,
}

/// One model's part of a turn's usage.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    /// The model's name.
    pub model: String,
    /// What it spent.
    #[serde(flatten)]
    pub counts: Usage,
}

impl UsageRecord {
    /// The counts and models of a `__usage__` line's `usage` object: a
    /// model is a name, or an object with its name (`model`, `name` or
    /// `id`) and its own counts.
    pub fn of(usage: &Value) -> UsageRecord {
        let mut record = UsageRecord {
            counts: Usage::of(usage),
            ..UsageRecord::default()
        };
        record.read_models(usage.get("models"));
        record
    }

    /// Reads `models` (as sent, or as recorded by [`UsageRecord::models_json`]).
    fn read_models(&mut self, models: Option<&Value>) {
        for model in models.and_then(Value::as_array).into_iter().flatten() {
            match model {
                Value::String(name) => self.models.push(name.clone()),
                Value::Object(fields) => {
                    let name = ["model", "name", "id"]
                        .iter()
                        .find_map(|key| fields.get(*key).and_then(Value::as_str));
                    let Some(name) = name else { continue };
                    self.models.push(name.to_string());
                    self.by_model.push(ModelUsage {
                        model: name.to_string(),
                        counts: Usage::of(model),
                    });
                }
                _ => {}
            }
        }
    }

    /// The models as the history keeps them: their names, or each with its
    /// counts when the usage line gave them.
    pub fn models_json(&self) -> String {
        let models = match self.by_model.is_empty() {
            true => serde_json::to_value(&self.models),
            false => serde_json::to_value(&self.by_model),
        };
        models.map(|models| models.to_string()).unwrap_or_default()
    }

    /// The usage of a recorded turn: its counts and its `models` column
    /// (as [`UsageRecord::models_json`] wrote it).
    pub fn recorded(counts: Usage, models: &str) -> UsageRecord {
        let mut record = UsageRecord {
            counts,
            ..UsageRecord::default()
        };
        record.read_models(serde_json::from_str::<Value>(models).ok().as_ref());
        record
    }
}

/// US dollars for people: cents from a dollar up (`$1.24`), else four
/// decimals (`$0.0042`), as an agent's turn often costs less than a cent:
/// the one way `check` and `history usage` write money.
pub fn dollars(amount: f64) -> String {
    match amount >= 1.0 {
        true => format!("${amount:.2}"),
        false => format!("${amount:.4}"),
    }
}
