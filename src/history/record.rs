//! What a turn writes in the history (once it has ended), and the names of
//! `ask --thread`. A history that cannot be written is a warning: the
//! command goes on.

use anyhow::Result;
use reqwest::Url;
use rusqlite::{params, OptionalExtension};

use super::{now, History, ThreadRecord, TurnRecord};
use crate::output::Notes;

/// The chat URL as recorded: without credentials, query or fragment.
pub fn chat_url(url: &Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// Writes `turn` in the database at `db` (`keep` prunes turns older than
/// it); a failure is a warning.
pub fn write(db: &std::path::Path, keep: Option<std::time::Duration>, turn: &TurnRecord, notes: &Notes) {
    let written = History::open(db).and_then(|mut history| history.record(turn, keep));
    if let Err(why) = written {
        notes.warn(&format!("the turn was not recorded: {why:#}"));
    }
}

impl History {
    /// Records `turn` with its queries; `keep` prunes turns older than it.
    pub fn record(&mut self, turn: &TurnRecord, keep: Option<std::time::Duration>) -> Result<i64> {
        let path = self.path.display().to_string();
        let failed =
            |err: rusqlite::Error| crate::error::fail(crate::error::Kind::Usage, format!("history {path}: {err}"));
        let transaction = self
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(failed)?;
        let usage = turn.usage.clone().unwrap_or_default();
        let has_usage = turn.usage.is_some();
        let counts = usage.counts;
        let count = |n: u64| has_usage.then_some(n as i64);
        transaction
            .execute(
                "INSERT INTO turns (at, command, chat_url, identity, thread, chat_id, message_id, question, answer,
                    status, exit_code, suite, case_name, input_tokens, output_tokens, cache_read_tokens,
                    cache_write_tokens, total_tokens, llm_calls, models, first_byte_ms, answer_ms, total_ms,
                    verdict_exit_code)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20,
                    ?21, ?22, ?23, ?24)",
                params![
                    turn.at,
                    turn.command,
                    turn.chat_url,
                    turn.identity,
                    turn.thread,
                    turn.chat_id,
                    turn.message_id,
                    turn.question,
                    turn.answer,
                    turn.status,
                    turn.exit_code,
                    turn.suite,
                    turn.case,
                    count(counts.input_tokens),
                    count(counts.output_tokens),
                    count(counts.cache_read_tokens),
                    count(counts.cache_write_tokens),
                    count(counts.total_tokens),
                    count(counts.llm_calls),
                    has_usage.then(|| usage.models_json()),
                    turn.first_byte_ms.map(|ms| ms as i64),
                    turn.answer_ms.map(|ms| ms as i64),
                    turn.total_ms as i64,
                    turn.verdict_exit_code,
                ],
            )
            .map_err(failed)?;
        let id = transaction.last_insert_rowid();
        for (position, query) in turn.queries.iter().enumerate() {
            transaction
                .execute(
                    "INSERT INTO queries (turn_id, position, title, sql, columns, rows_returned, total_rows, error)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![
                        id,
                        position as i64,
                        query.title,
                        query.sql,
                        serde_json::to_string(&query.columns).unwrap_or_default(),
                        query.rows_returned as i64,
                        query.total_rows.map(|n| n as i64),
                        query.error,
                    ],
                )
                .map_err(failed)?;
        }
        if let Some(keep) = keep {
            transaction
                .execute(
                    "DELETE FROM turns WHERE at < ?1 AND id <> ?2",
                    params![super::before(keep), id],
                )
                .map_err(failed)?;
        }
        transaction.commit().map_err(failed)?;
        Ok(id)
    }

    /// The chat of thread `name` for this chat URL and identity.
    pub fn thread(&self, name: &str, chat_url: &str, identity: &str) -> Result<Option<ThreadRecord>> {
        self.connection
            .query_row(
                "SELECT chat_id, last_turn_at FROM threads WHERE name = ?1 AND chat_url = ?2 AND identity = ?3",
                params![name, chat_url, identity],
                |row| {
                    Ok(ThreadRecord {
                        chat_id: row.get(0)?,
                        last_turn_at: row.get(1)?,
                    })
                },
            )
            .optional()
            .map_err(|err| self.failed(err))
    }

    /// Points thread `name` at `chat_id`, its last turn now.
    pub fn set_thread(&self, name: &str, chat_url: &str, identity: &str, chat_id: &str) -> Result<()> {
        let at = now();
        self.connection
            .execute(
                "INSERT INTO threads (name, chat_url, identity, chat_id, created_at, last_turn_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)
                 ON CONFLICT (name, chat_url, identity) DO UPDATE SET
                    chat_id = excluded.chat_id,
                    created_at = CASE WHEN chat_id = excluded.chat_id THEN created_at ELSE excluded.created_at END,
                    last_turn_at = excluded.last_turn_at",
                params![name, chat_url, identity, chat_id, at],
            )
            .map(drop)
            .map_err(|err| self.failed(err))
    }
}
