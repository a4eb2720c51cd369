//! What `analyst history` reads — list, show, a thread's turns, usage —
//! and `forget`, which erases. Each reads only what it prints: a list of
//! turns with 20 MB answers costs what a list of short ones does, and
//! `--grep` looks at one turn at a time.

use anyhow::Result;
use regex::Regex;
use rusqlite::{params, OptionalExtension, ToSql};
use serde::Serialize;

use super::{History, QueryRecord, TurnRecord};
use crate::domain::{Usage, UsageRecord};

/// What `history list` picks.
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    /// At most this many, newest first.
    pub limit: usize,
    /// Of this thread.
    pub thread: Option<String>,
    /// At or after this time (RFC 3339).
    pub since: Option<String>,
    /// Of this status.
    pub status: Option<String>,
    /// Asked by this command.
    pub kind: Option<TurnKind>,
}

/// Which command asked a turn (`history --kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnKind {
    /// `analyst ask`.
    Ask,
    /// `analyst check`.
    Check,
}

impl TurnKind {
    /// The turn's `command` column.
    fn command(self) -> &'static str {
        match self {
            TurnKind::Ask => "ask",
            TurnKind::Check => "check",
        }
    }
}

/// A turn as `history list` shows it: what its line prints, no more.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListedTurn {
    /// Its number.
    pub id: i64,
    /// When it started.
    pub at: String,
    /// Its thread's name.
    pub thread: Option<String>,
    /// How it ended.
    pub status: String,
    /// Its exit code: its command's, or for a turn of `check`, its
    /// verdict's (9 for a turn that did not pass, however it ended).
    pub exit_code: u8,
    /// `totalTokens`, when a usage line came.
    pub total_tokens: Option<u64>,
    /// The question's first 2,048 characters (a line is cut to the
    /// terminal).
    pub question: Option<String>,
}

/// How `history usage` groups turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UsageBy {
    /// Calendar day (UTC).
    Day,
    /// ISO 8601 week (`2026-W48`).
    Week,
    /// Calendar month.
    Month,
    /// Thread name.
    Thread,
    /// Chat URL (the agent).
    Agent,
    /// Model.
    Model,
}

/// One group of `history usage`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageGroup {
    /// The day, week, month, thread, agent or model.
    pub key: String,
    /// Turns.
    pub turns: u64,
    /// Tokens and LLM calls, summed.
    #[serde(flatten)]
    pub spent: Usage,
    /// Seconds of turns, summed.
    pub seconds: f64,
}

/// What `history forget` deletes.
#[derive(Clone, Debug)]
pub enum Forget {
    /// Turns before this time (RFC 3339).
    Before(String),
    /// A thread's turns and its name.
    Thread(String),
    /// Everything.
    All,
}

/// The `WHERE` of the turns `filter` picks (parameters 1 to 3).
const PICKED: &str = "(?1 IS NULL OR thread = ?1) AND (?2 IS NULL OR at >= ?2) AND (?3 IS NULL OR status = ?3) \
     AND (?5 IS NULL OR command = ?5)";

impl History {
    /// The numbers of the turns `filter` picks whose question or answer
    /// `grep` matches, newest first: matched one turn at a time, never
    /// all loaded.
    fn picked(&self, filter: &ListFilter, grep: Option<&Regex>) -> Result<Vec<i64>> {
        let failed = |err| self.failed(err);
        let kind = filter.kind.map(|kind| kind.command());
        let filters: [&dyn ToSql; 3] = [&filter.thread, &filter.since, &filter.status];
        let Some(grep) = grep else {
            let mut statement = self
                .connection
                .prepare(&format!(
                    "SELECT id FROM turns WHERE {PICKED} ORDER BY at DESC, id DESC LIMIT ?4"
                ))
                .map_err(failed)?;
            let limit = filter.limit as i64;
            let ids = statement
                .query_map(params![filters[0], filters[1], filters[2], limit, kind], |row| {
                    row.get(0)
                })
                .map_err(failed)?;
            return ids.collect::<Result<Vec<i64>, _>>().map_err(failed);
        };
        let mut statement = self
            .connection
            .prepare(&format!(
                "SELECT id, question, answer FROM turns WHERE {PICKED} ORDER BY at DESC, id DESC"
            ))
            .map_err(failed)?;
        let no_limit: Option<i64> = None;
        let mut rows = statement
            .query(params![filters[0], filters[1], filters[2], no_limit, kind])
            .map_err(failed)?;
        let mut ids = Vec::new();
        while ids.len() < filter.limit {
            let Some(row) = rows.next().map_err(failed)? else { break };
            let matches = (1..=2).any(|column| {
                row.get_ref(column)
                    .ok()
                    .and_then(|value| value.as_str_or_null().ok().flatten())
                    .is_some_and(|text| grep.is_match(text))
            });
            if matches {
                ids.push(row.get(0).map_err(failed)?);
            }
        }
        Ok(ids)
    }

    /// The turns `filter` and `grep` pick, newest first, as `history list`
    /// shows them.
    pub fn list(&self, filter: &ListFilter, grep: Option<&Regex>) -> Result<Vec<ListedTurn>> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT id, at, thread, status, COALESCE(verdict_exit_code, exit_code), total_tokens,
                        substr(question, 1, 2048)
                 FROM turns WHERE id = ?1",
            )
            .map_err(|err| self.failed(err))?;
        let mut listed = Vec::new();
        for id in self.picked(filter, grep)? {
            let turn = statement.query_row(params![id], |row| {
                Ok(ListedTurn {
                    id: row.get(0)?,
                    at: row.get(1)?,
                    thread: row.get(2)?,
                    status: row.get(3)?,
                    exit_code: row.get::<_, i64>(4)? as u8,
                    total_tokens: row.get::<_, Option<i64>>(5)?.map(|n| n as u64),
                    question: row.get(6)?,
                })
            });
            listed.push(turn.map_err(|err| self.failed(err))?);
        }
        Ok(listed)
    }

    /// The turns `filter` and `grep` pick, newest first, whole (`history
    /// list -o json`).
    pub fn list_whole(&self, filter: &ListFilter, grep: Option<&Regex>) -> Result<Vec<TurnRecord>> {
        self.picked(filter, grep)?
            .into_iter()
            .map(|id| self.show(&id.to_string()).map(Option::unwrap_or_default))
            .collect()
    }

    /// The turn numbered `id`, or asked with the message id `id`.
    pub fn show(&self, id: &str) -> Result<Option<TurnRecord>> {
        let turn = self
            .connection
            .query_row(
                "SELECT * FROM turns WHERE CAST(id AS TEXT) = ?1 OR message_id = ?1 ORDER BY id DESC LIMIT 1",
                params![id],
                turn_of_row,
            )
            .optional()
            .map_err(|err| self.failed(err))?;
        turn.map(|turn| self.with_queries(turn)).transpose()
    }

    /// Every turn of thread (or chat id) `thread`, oldest first.
    pub fn thread_turns(&self, thread: &str) -> Result<Vec<TurnRecord>> {
        let mut statement = self
            .connection
            .prepare("SELECT * FROM turns WHERE thread = ?1 OR chat_id = ?1 ORDER BY at, id")
            .map_err(|err| self.failed(err))?;
        let turns = statement
            .query_map(params![thread], turn_of_row)
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|err| self.failed(err))?;
        turns.into_iter().map(|turn| self.with_queries(turn)).collect()
    }

    fn with_queries(&self, mut turn: TurnRecord) -> Result<TurnRecord> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT title, sql, columns, rows_returned, total_rows, error FROM queries WHERE turn_id = ?1 ORDER BY position",
            )
            .map_err(|err| self.failed(err))?;
        turn.queries = statement
            .query_map(params![turn.id], |row| {
                let columns: Option<String> = row.get(2)?;
                Ok(QueryRecord {
                    tool: String::new(),
                    title: row.get(0)?,
                    sql: row.get(1)?,
                    columns: columns
                        .and_then(|text| serde_json::from_str::<Vec<String>>(&text).ok())
                        .unwrap_or_default(),
                    rows_returned: row.get::<_, i64>(3)? as u64,
                    total_rows: row.get::<_, Option<i64>>(4)?.map(|n| n as u64),
                    error: row.get(5)?,
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|err| self.failed(err))?;
        Ok(turn)
    }

    /// Each turn since `since`, one at a time, with the key `by` groups it
    /// under (a model is a key of its own: see [`UsageRecord::models`]), its
    /// usage (none without a usage line) and how long it took.
    pub fn usage(
        &self,
        by: UsageBy,
        since: Option<&str>,
        mut each: impl FnMut(String, Option<UsageRecord>, u64),
    ) -> Result<()> {
        let key = match by {
            UsageBy::Day => "substr(at, 1, 10)",
            // ISO 8601: the year of the week's Thursday, weeks from 01.
            UsageBy::Week => "strftime('%G-W%V', at)",
            UsageBy::Month => "substr(at, 1, 7)",
            UsageBy::Thread => "coalesce(thread, '(no thread)')",
            UsageBy::Agent => "coalesce(chat_url, '(unknown)')",
            UsageBy::Model => "''",
        };
        let failed = |err| self.failed(err);
        let mut statement = self
            .connection
            .prepare(&format!(
                "SELECT {key}, coalesce(total_ms, 0), models, input_tokens, output_tokens, cache_read_tokens,
                        cache_write_tokens, total_tokens, llm_calls
                 FROM turns WHERE (?1 IS NULL OR at >= ?1) ORDER BY at"
            ))
            .map_err(failed)?;
        let mut rows = statement.query(params![since]).map_err(failed)?;
        while let Some(row) = rows.next().map_err(failed)? {
            let count = |index: usize| row.get::<_, Option<i64>>(index).map(|n| n.unwrap_or(0) as u64);
            let read = || -> rusqlite::Result<(String, u64, Option<UsageRecord>)> {
                let counts = Usage {
                    input_tokens: count(3)?,
                    output_tokens: count(4)?,
                    cache_read_tokens: count(5)?,
                    cache_write_tokens: count(6)?,
                    total_tokens: count(7)?,
                    llm_calls: count(8)?,
                };
                let usage = row
                    .get::<_, Option<String>>(2)?
                    .map(|models| UsageRecord::recorded(counts, &models));
                Ok((row.get(0)?, count(1)?, usage))
            };
            let (key, ms, usage) = read().map_err(failed)?;
            each(key, usage, ms);
        }
        Ok(())
    }

    /// Deletes what `what` names, and erases it: the turns, their thread
    /// names, and the kept spans that describe them (never pushed), in one
    /// transaction; the deleted text is overwritten (`secure_delete`) and
    /// the write-ahead log emptied into the file, so none of it can be
    /// read back from either. How many turns went.
    pub fn forget(&self, what: &Forget) -> Result<usize> {
        let failed = |err| self.failed(err);
        self.connection
            .pragma_update(None, "secure_delete", "ON")
            .map_err(failed)?;
        let (turns, key) = match what {
            Forget::Before(at) => ("at < ?1", Some(at.as_str())),
            Forget::Thread(name) => ("thread = ?1", Some(name.as_str())),
            Forget::All => ("1", None),
        };
        let key = rusqlite::params_from_iter(key);
        let transaction = self.connection.unchecked_transaction().map_err(failed)?;
        // The kept spans of the turns that go, so that no push sends them.
        transaction
            .execute(
                &format!(
                    "DELETE FROM unsent_spans WHERE id IN (SELECT unsent_id FROM unsent_turns
                     WHERE message_id IN (SELECT message_id FROM turns WHERE {turns}))"
                ),
                key.clone(),
            )
            .map_err(failed)?;
        match what {
            Forget::Before(at) => transaction
                .execute("DELETE FROM unsent_spans WHERE at < ?1", params![at])
                .and_then(|_| transaction.execute("DELETE FROM check_runs WHERE at < ?1", params![at])),
            Forget::Thread(name) => transaction.execute("DELETE FROM threads WHERE name = ?1", params![name]),
            Forget::All => transaction
                .execute("DELETE FROM unsent_spans", [])
                .and_then(|_| transaction.execute("DELETE FROM check_runs", []))
                .and_then(|_| transaction.execute("DELETE FROM threads", [])),
        }
        .map_err(failed)?;
        let deleted = transaction
            .execute(&format!("DELETE FROM turns WHERE {turns}"), key)
            .map_err(failed)?;
        transaction.commit().map_err(failed)?;
        self.connection
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(failed)?;
        Ok(deleted)
    }
}

fn turn_of_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<TurnRecord> {
    let count = |name: &str| row.get::<_, Option<i64>>(name).map(|n| n.map(|n| n as u64));
    let usage = match row.get::<_, Option<String>>("models")? {
        Some(models) => Some(UsageRecord::recorded(
            Usage {
                input_tokens: count("input_tokens")?.unwrap_or(0),
                output_tokens: count("output_tokens")?.unwrap_or(0),
                cache_read_tokens: count("cache_read_tokens")?.unwrap_or(0),
                cache_write_tokens: count("cache_write_tokens")?.unwrap_or(0),
                total_tokens: count("total_tokens")?.unwrap_or(0),
                llm_calls: count("llm_calls")?.unwrap_or(0),
            },
            &models,
        )),
        None => None,
    };
    Ok(TurnRecord {
        id: row.get("id")?,
        at: row.get("at")?,
        command: row.get("command")?,
        chat_url: row.get("chat_url")?,
        identity: row.get("identity")?,
        thread: row.get("thread")?,
        chat_id: row.get("chat_id")?,
        message_id: row.get("message_id")?,
        question: row.get("question")?,
        answer: row.get("answer")?,
        status: row.get("status")?,
        exit_code: row.get::<_, i64>("exit_code")? as u8,
        verdict_exit_code: row.get::<_, Option<i64>>("verdict_exit_code")?.map(|code| code as u8),
        suite: row.get("suite")?,
        case: row.get("case_name")?,
        usage,
        first_byte_ms: count("first_byte_ms")?,
        answer_ms: count("answer_ms")?,
        total_ms: count("total_ms")?.unwrap_or(0),
        queries: Vec::new(),
    })
}
