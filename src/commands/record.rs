//! What `ask` and `check` record of a turn in the history: the queries it
//! ran (kept as they finish, without their rows), and the turn itself,
//! written once it has ended. A history that cannot be written is a
//! warning: the command goes on.

use crate::history::{QueryRecord, TurnRecord, UsageRecord, ANSWER_CUT_MARKER, MAX_RECORDED_ANSWER};
use crate::output::Notes;
use crate::redact::redact;
use reqwest::Url;

use crate::settings::Recording;
use crate::stream::transcript::{Event, Transcript};
use crate::stream::turn::{Renderer, Status, Timings};

/// Keeps what the history records of each SQL query of a turn, when the
/// turn is recorded (else it reads nothing of the results).
pub struct QueryLog {
    on: bool,
    queries: Vec<QueryRecord>,
}

impl QueryLog {
    /// A log that keeps the queries when `on` (the turn is recorded).
    pub fn new(on: bool) -> Self {
        QueryLog {
            on,
            queries: Vec::new(),
        }
    }

    /// The queries kept, in order.
    pub fn into_queries(self) -> Vec<QueryRecord> {
        self.queries
    }
}

impl Renderer for QueryLog {
    fn event(&mut self, event: &Event) {
        match event {
            Event::ToolFinished(finished) if self.on => {
                if let Some((_, result)) = &finished.sql {
                    self.queries.push(QueryRecord {
                        title: result.title.clone(),
                        sql: result.sql.clone(),
                        columns: result.columns().iter().map(|column| column.name.clone()).collect(),
                        rows_returned: result.rows().len() as u64,
                        total_rows: result.total_rows,
                        error: result.error.clone(),
                    });
                }
            }
            Event::TurnStarts => self.queries.clear(),
            _ => {}
        }
    }
}

/// A turn asked at `at` of the chat at `url` by `asker` (see
/// [`crate::settings::ChatSettings::asker`]), as the history records it
/// (the caller sets what only it knows: the command, its queries, its exit
/// code once the command has ended).
pub fn turn(
    at: String,
    url: &Url,
    asker: String,
    question: Option<&str>,
    transcript: &Transcript,
    status: Status,
    timings: &Timings,
) -> TurnRecord {
    let millis = |duration: std::time::Duration| duration.as_millis() as u64;
    TurnRecord {
        at,
        chat_url: Some(crate::history::chat_url(url)),
        identity: Some(asker),
        chat_id: transcript.chat_id().map(str::to_string),
        message_id: transcript.message_id().map(str::to_string),
        question: question.map(|question| redact(question).into_owned()),
        answer: transcript
            .answer()
            .map(|(answer, _)| recorded_answer(answer, transcript.answer_is_cut())),
        status: status.as_str().to_string(),
        usage: transcript.usage().map(UsageRecord::of),
        first_byte_ms: timings.first_byte.map(millis),
        answer_ms: timings.answer.map(millis),
        total_ms: millis(timings.total),
        ..TurnRecord::default()
    }
}

/// The answer as the history keeps it: its first [`MAX_RECORDED_ANSWER`]
/// bytes, and [`ANSWER_CUT_MARKER`] when there was more.
fn recorded_answer(answer: &str, cut: bool) -> String {
    let mut end = answer.len().min(MAX_RECORDED_ANSWER);
    while !answer.is_char_boundary(end) {
        end -= 1;
    }
    let mut kept = answer[..end].to_string();
    if cut || end < answer.len() {
        kept.push_str(ANSWER_CUT_MARKER);
    }
    kept
}

/// Writes `turn` where `recording` says; a failure is a warning.
pub fn write(recording: &Recording, turn: &TurnRecord, notes: &Notes) {
    crate::history::write(&recording.db, recording.keep, turn, notes);
}
