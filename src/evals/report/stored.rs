//! A run as a report on disk holds it, in this version's form or the
//! earlier one, read into a [`RunReport`].

use serde::Deserialize;
use serde_json::Value;

use super::{Outcome, RunReport, RunSeconds};
use crate::domain::Usage;
use crate::evals::figures::Figure;
use crate::evals::grade::{Comparison, CubeGrade};

/// A run as a report on disk holds it: this form, or the form before
/// the durations moved under `seconds` (`duration`, `firstByte`,
/// `firstSql`, and `answer` a number of seconds), which `--baseline` and
/// `check merge` still read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct StoredRun {
    run: usize,
    status: Outcome,
    messages: Vec<String>,
    exit_code: u8,
    chat_id: Option<String>,
    message_id: Option<String>,
    #[serde(default)]
    message_ids: Vec<String>,
    #[serde(default)]
    question: Option<String>,
    /// The answer's text, or (the earlier form) seconds to it.
    #[serde(default)]
    answer: Option<Value>,
    #[serde(default)]
    seconds: Option<RunSeconds>,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    first_byte: Option<f64>,
    #[serde(default)]
    first_sql: Option<f64>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    cost: Option<f64>,
    #[serde(default)]
    saved: Vec<String>,
    #[serde(flatten, default)]
    cube: CubeGrade,
    #[serde(default)]
    comparison: Option<Box<Comparison>>,
    #[serde(default)]
    figures: Vec<Figure>,
    #[serde(default)]
    asks_back: bool,
    #[serde(default)]
    earlier: Vec<RunReport>,
}

impl From<StoredRun> for RunReport {
    fn from(stored: StoredRun) -> RunReport {
        let (answer, answer_at) = match stored.answer {
            Some(Value::String(text)) => (Some(text), None),
            Some(Value::Number(at)) => (None, at.as_f64()),
            _ => (None, None),
        };
        let seconds = stored.seconds.unwrap_or(RunSeconds {
            first_byte: stored.first_byte,
            first_sql: stored.first_sql,
            answer: answer_at,
            total: stored.duration.unwrap_or(0.0),
        });
        RunReport {
            run: stored.run,
            status: stored.status,
            messages: stored.messages,
            exit_code: stored.exit_code,
            chat_id: stored.chat_id,
            message_id: stored.message_id,
            message_ids: stored.message_ids,
            question: stored.question,
            answer,
            seconds,
            usage: stored.usage,
            cost: stored.cost,
            saved: stored.saved,
            cube: stored.cube,
            comparison: stored.comparison,
            figures: stored.figures,
            asks_back: stored.asks_back,
            earlier: stored.earlier,
        }
    }
}
