//! What `ask` and `check` record of a turn in the history: the queries it
//! ran (kept as they finish, without their rows), and the turn itself,
//! written once it has ended. A history that cannot be written is a
//! warning: the command goes on.

use crate::history::{History, QueryRecord, TurnRecord, UsageRecord};
use crate::output::Notes;
use reqwest::Url;

use crate::settings::{Recording, SessionSettings};
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

/// The chat URL as recorded: without credentials, query or fragment.
pub fn chat_url(url: &Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// Who asks, as recorded and as threads are keyed: `external:ID`,
/// `internal:NAME`, or `cube-token` (no identity: the token names the
/// user).
pub fn identity(identity: Option<&SessionSettings>) -> String {
    match (
        identity.and_then(|identity| identity.external_id.as_deref()),
        identity.and_then(|identity| identity.internal_id.as_deref()),
    ) {
        (Some(id), _) => format!("external:{id}"),
        (None, Some(name)) => format!("internal:{name}"),
        (None, None) => "cube-token".to_string(),
    }
}

/// A turn asked at `at` of the chat at `url` as `asker`, as the history
/// records it (the caller sets what only it knows: the command, its
/// queries, its exit code once the command has ended).
pub fn turn(
    at: String,
    url: &Url,
    asker: Option<&SessionSettings>,
    question: Option<&str>,
    transcript: &Transcript,
    status: Status,
    timings: &Timings,
) -> TurnRecord {
    let millis = |duration: std::time::Duration| duration.as_millis() as u64;
    TurnRecord {
        at,
        chat_url: Some(chat_url(url)),
        identity: Some(identity(asker)),
        chat_id: transcript.chat_id().map(str::to_string),
        message_id: transcript.message_id().map(str::to_string),
        question: question.map(str::to_string),
        answer: transcript.answer().map(|(answer, _)| answer.to_string()),
        status: status.as_str().to_string(),
        usage: transcript.usage().map(UsageRecord::of),
        first_byte_ms: timings.first_byte.map(millis),
        answer_ms: timings.answer.map(millis),
        total_ms: millis(timings.total),
        ..TurnRecord::default()
    }
}

/// Writes `turn` where `recording` says; a failure is a warning.
pub fn write(recording: &Recording, turn: &TurnRecord, notes: &Notes) {
    let written = History::open(&recording.db).and_then(|mut history| history.record(turn, recording.keep));
    if let Err(why) = written {
        notes.warn(&format!("the turn was not recorded in the history: {why}"));
    }
}
