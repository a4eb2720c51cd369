//! The local record of turns and thread names, in SQLite (`history.db`):
//! what `ask` and `check` record, what `ask --thread` continues, and what
//! `analyst history` reads. Nothing else in `analyst` writes SQL.
//!
//! The schema is versioned with `PRAGMA user_version`: an older database
//! is migrated when opened, a newer one is refused (history is off for
//! that run). WAL and a busy timeout let many processes record at once.

use std::path::Path;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::output::{create_private, create_private_folder};

/// The schema's version, in `PRAGMA user_version`.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Each migration takes the database from the version before it (its index)
/// to the next: version 1 made the tables; version 2 indexes turns by chat
/// id (`history export CHAT_ID`).
const MIGRATIONS: [&str; 2] = [
    "
CREATE TABLE turns (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    command TEXT NOT NULL,
    chat_url TEXT,
    identity TEXT,
    thread TEXT,
    chat_id TEXT,
    message_id TEXT,
    question TEXT,
    answer TEXT,
    status TEXT NOT NULL,
    exit_code INTEGER NOT NULL,
    suite TEXT,
    case_name TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cache_read_tokens INTEGER,
    cache_write_tokens INTEGER,
    total_tokens INTEGER,
    llm_calls INTEGER,
    models TEXT,
    first_byte_ms INTEGER,
    answer_ms INTEGER,
    total_ms INTEGER
);
CREATE INDEX turns_at ON turns (at);
CREATE INDEX turns_thread ON turns (thread, at);
CREATE INDEX turns_message ON turns (message_id);
CREATE TABLE queries (
    turn_id INTEGER NOT NULL REFERENCES turns (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    title TEXT,
    sql TEXT,
    columns TEXT,
    rows_returned INTEGER NOT NULL,
    total_rows INTEGER,
    error TEXT,
    PRIMARY KEY (turn_id, position)
);
CREATE TABLE threads (
    name TEXT NOT NULL,
    chat_url TEXT NOT NULL,
    identity TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_turn_at TEXT NOT NULL,
    PRIMARY KEY (name, chat_url, identity)
);
",
    "
CREATE INDEX turns_chat ON turns (chat_id, at);
",
];

/// How long a writer waits for another to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// An open history database.
pub struct History {
    connection: Connection,
}

/// One SQL query of a turn: what it was, not its rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryRecord {
    /// `queryTitle`.
    pub title: Option<String>,
    /// The SQL.
    pub sql: Option<String>,
    /// The column names.
    pub columns: Vec<String>,
    /// Rows in the stream.
    pub rows_returned: u64,
    /// `totalRows`.
    pub total_rows: Option<u64>,
    /// The query's error, when it failed.
    pub error: Option<String>,
}

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

/// What a turn's `__usage__` reported: its counts and models.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRecord {
    /// The token and call counts.
    #[serde(flatten)]
    pub counts: Usage,
    /// `models`.
    pub models: Vec<String>,
}

impl UsageRecord {
    /// The counts and models of a `__usage__` line's `usage` object.
    pub fn of(usage: &Value) -> UsageRecord {
        UsageRecord {
            counts: Usage::of(usage),
            models: usage
                .get("models")
                .and_then(Value::as_array)
                .map(|models| {
                    models
                        .iter()
                        .filter_map(|model| model.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// One turn, as recorded and as `history show` gives it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnRecord {
    /// Its number (0 before it is recorded).
    pub id: i64,
    /// When it started, RFC 3339 in UTC.
    pub at: String,
    /// `ask` or `check`.
    pub command: String,
    /// The chat URL, without credentials or query.
    pub chat_url: Option<String>,
    /// Who asked: `external:ID` or `internal:NAME`, or the Cube token's user.
    pub identity: Option<String>,
    /// `--thread NAME`.
    pub thread: Option<String>,
    /// The chat.
    pub chat_id: Option<String>,
    /// The question's message id.
    pub message_id: Option<String>,
    /// The question.
    pub question: Option<String>,
    /// The final answer.
    pub answer: Option<String>,
    /// `completed`, `incomplete`, `cut`, `error`, …
    pub status: String,
    /// The exit code of the turn.
    pub exit_code: u8,
    /// For `check`: the suite.
    pub suite: Option<String>,
    /// For `check`: the case.
    pub case: Option<String>,
    /// The `__usage__` line, when one came.
    pub usage: Option<UsageRecord>,
    /// Milliseconds to the first byte.
    pub first_byte_ms: Option<u64>,
    /// Milliseconds to the final answer.
    pub answer_ms: Option<u64>,
    /// Milliseconds in all.
    pub total_ms: u64,
    /// Each SQL query, in order.
    pub queries: Vec<QueryRecord>,
}

/// A thread name's chat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadRecord {
    /// The chat it continues.
    pub chat_id: String,
    /// When its last turn was recorded (RFC 3339, UTC).
    pub last_turn_at: String,
}

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
}

/// How `history usage` groups turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UsageBy {
    /// Calendar day (UTC).
    Day,
    /// Week.
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

/// The time now, as the history writes times.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `time` less `age`, as the history writes times.
pub fn before(age: Duration) -> String {
    let age = chrono::Duration::from_std(age).unwrap_or(chrono::Duration::MAX);
    let then = chrono::Utc::now()
        .checked_sub_signed(age)
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
    then.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn sql_error(err: rusqlite::Error) -> String {
    err.to_string()
}

impl History {
    /// Opens (creating it, its folder 0700 and the file 0600) and migrates
    /// the database at `path`. `Err` says why history is off.
    pub fn open(path: &Path) -> Result<History, String> {
        if let Some(folder) = path.parent().filter(|folder| !folder.as_os_str().is_empty()) {
            create_private_folder(folder).map_err(|err| format!("cannot create {}: {err}", folder.display()))?;
        }
        if !path.exists() {
            create_private(path).map_err(|err| format!("cannot create {}: {err}", path.display()))?;
        }
        let connection = Connection::open(path).map_err(|err| format!("cannot open {}: {err}", path.display()))?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(sql_error)?;
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(|err| format!("{}: {err}", path.display()))?;
        // In WAL, NORMAL never corrupts the file; a power cut may lose the
        // last turns, which is a history's fair trade for fast records.
        connection
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(sql_error)?;
        connection
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(sql_error)?;
        let mut history = History { connection };
        history.migrate(path)?;
        Ok(history)
    }

    /// Brings the schema to [`SCHEMA_VERSION`]; a newer one is refused.
    fn migrate(&mut self, path: &Path) -> Result<(), String> {
        let transaction = self
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql_error)?;
        let version: i64 = transaction
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(sql_error)?;
        if version > SCHEMA_VERSION {
            return Err(format!(
                "{} has schema version {version}, newer than this analyst's {SCHEMA_VERSION}: upgrade analyst (history is off for this run)",
                path.display()
            ));
        }
        for migration in &MIGRATIONS[version.max(0) as usize..] {
            transaction.execute_batch(migration).map_err(sql_error)?;
        }
        transaction
            .pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(sql_error)?;
        transaction.commit().map_err(sql_error)
    }

    /// Records `turn` with its queries; `keep` prunes turns older than it.
    pub fn record(&mut self, turn: &TurnRecord, keep: Option<Duration>) -> Result<i64, String> {
        let transaction = self
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql_error)?;
        let usage = turn.usage.clone().unwrap_or_default();
        let has_usage = turn.usage.is_some();
        let counts = usage.counts;
        let count = |n: u64| has_usage.then_some(n as i64);
        transaction
            .execute(
                "INSERT INTO turns (at, command, chat_url, identity, thread, chat_id, message_id, question, answer,
                    status, exit_code, suite, case_name, input_tokens, output_tokens, cache_read_tokens,
                    cache_write_tokens, total_tokens, llm_calls, models, first_byte_ms, answer_ms, total_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)",
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
                    has_usage.then(|| serde_json::to_string(&usage.models).unwrap_or_default()),
                    turn.first_byte_ms.map(|ms| ms as i64),
                    turn.answer_ms.map(|ms| ms as i64),
                    turn.total_ms as i64,
                ],
            )
            .map_err(sql_error)?;
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
                .map_err(sql_error)?;
        }
        if let Some(keep) = keep {
            transaction
                .execute(
                    "DELETE FROM turns WHERE at < ?1 AND id <> ?2",
                    params![before(keep), id],
                )
                .map_err(sql_error)?;
        }
        transaction.commit().map_err(sql_error)?;
        Ok(id)
    }

    /// The chat of thread `name` for this chat URL and identity.
    pub fn thread(&self, name: &str, chat_url: &str, identity: &str) -> Result<Option<ThreadRecord>, String> {
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
            .map_err(sql_error)
    }

    /// Points thread `name` at `chat_id`, its last turn now.
    pub fn set_thread(&self, name: &str, chat_url: &str, identity: &str, chat_id: &str) -> Result<(), String> {
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
            .map_err(sql_error)
    }

    /// The turns `filter` picks, newest first, with their queries.
    pub fn list(&self, filter: &ListFilter) -> Result<Vec<TurnRecord>, String> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT * FROM turns
                 WHERE (?1 IS NULL OR thread = ?1) AND (?2 IS NULL OR at >= ?2) AND (?3 IS NULL OR status = ?3)
                 ORDER BY at DESC, id DESC LIMIT ?4",
            )
            .map_err(sql_error)?;
        let turns = statement
            .query_map(
                params![filter.thread, filter.since, filter.status, filter.limit as i64],
                turn_of_row,
            )
            .map_err(sql_error)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(sql_error)?;
        turns.into_iter().map(|turn| self.with_queries(turn)).collect()
    }

    /// The turn numbered `id`, or asked with the message id `id`.
    pub fn show(&self, id: &str) -> Result<Option<TurnRecord>, String> {
        let turn = self
            .connection
            .query_row(
                "SELECT * FROM turns WHERE CAST(id AS TEXT) = ?1 OR message_id = ?1 ORDER BY id DESC LIMIT 1",
                params![id],
                turn_of_row,
            )
            .optional()
            .map_err(sql_error)?;
        turn.map(|turn| self.with_queries(turn)).transpose()
    }

    /// Every turn of thread (or chat id) `thread`, oldest first.
    pub fn thread_turns(&self, thread: &str) -> Result<Vec<TurnRecord>, String> {
        let mut statement = self
            .connection
            .prepare("SELECT * FROM turns WHERE thread = ?1 OR chat_id = ?1 ORDER BY at, id")
            .map_err(sql_error)?;
        let turns = statement
            .query_map(params![thread], turn_of_row)
            .map_err(sql_error)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(sql_error)?;
        turns.into_iter().map(|turn| self.with_queries(turn)).collect()
    }

    fn with_queries(&self, mut turn: TurnRecord) -> Result<TurnRecord, String> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT title, sql, columns, rows_returned, total_rows, error FROM queries WHERE turn_id = ?1 ORDER BY position",
            )
            .map_err(sql_error)?;
        turn.queries = statement
            .query_map(params![turn.id], |row| {
                let columns: Option<String> = row.get(2)?;
                Ok(QueryRecord {
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
            .map_err(sql_error)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(sql_error)?;
        Ok(turn)
    }

    /// Turns since `since`, summed by `by` and by each turn's first model
    /// (for its price); by model, a turn of several models counts in each
    /// model's group.
    pub fn usage(&self, by: UsageBy, since: Option<&str>) -> Result<Vec<(UsageGroup, Option<String>)>, String> {
        let key = match by {
            UsageBy::Day => "substr(at, 1, 10)",
            UsageBy::Week => "strftime('%Y-W%W', at)",
            UsageBy::Month => "substr(at, 1, 7)",
            UsageBy::Thread => "coalesce(thread, '(no thread)')",
            UsageBy::Agent => "coalesce(chat_url, '(unknown)')",
            UsageBy::Model => "coalesce(model.value, '(unknown)')",
        };
        let models = match by {
            UsageBy::Model => "LEFT JOIN json_each(turns.models) AS model",
            _ => "",
        };
        let sql = format!(
            "SELECT {key} AS grouped, count(*), sum(coalesce(input_tokens, 0)), sum(coalesce(output_tokens, 0)),
                    sum(coalesce(cache_read_tokens, 0)), sum(coalesce(cache_write_tokens, 0)),
                    sum(coalesce(llm_calls, 0)), sum(total_ms), json_extract(turns.models, '$[0]') AS first_model,
                    sum(coalesce(total_tokens, 0))
             FROM turns {models} WHERE (?1 IS NULL OR at >= ?1) GROUP BY grouped, first_model ORDER BY grouped"
        );
        let mut statement = self.connection.prepare(&sql).map_err(sql_error)?;
        let groups = statement
            .query_map(params![since], |row| {
                let count = |index: usize| row.get::<_, i64>(index).map(|n| n as u64);
                let group = UsageGroup {
                    key: row.get(0)?,
                    turns: count(1)?,
                    spent: Usage {
                        input_tokens: count(2)?,
                        output_tokens: count(3)?,
                        cache_read_tokens: count(4)?,
                        cache_write_tokens: count(5)?,
                        total_tokens: count(9)?,
                        llm_calls: count(6)?,
                    },
                    seconds: count(7)? as f64 / 1000.0,
                };
                Ok((group, row.get::<_, Option<String>>(8)?))
            })
            .map_err(sql_error)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(sql_error)?;
        Ok(groups)
    }

    /// Deletes what `what` names; how many turns went.
    pub fn forget(&self, what: &Forget) -> Result<usize, String> {
        let deleted = match what {
            Forget::Before(at) => self.connection.execute("DELETE FROM turns WHERE at < ?1", params![at]),
            Forget::Thread(name) => self
                .connection
                .execute("DELETE FROM threads WHERE name = ?1", params![name])
                .and_then(|_| {
                    self.connection
                        .execute("DELETE FROM turns WHERE thread = ?1", params![name])
                }),
            Forget::All => self
                .connection
                .execute("DELETE FROM threads", [])
                .and_then(|_| self.connection.execute("DELETE FROM turns", [])),
        };
        deleted.map_err(sql_error)
    }
}

fn turn_of_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<TurnRecord> {
    let count = |name: &str| row.get::<_, Option<i64>>(name).map(|n| n.map(|n| n as u64));
    let usage = match row.get::<_, Option<String>>("models")? {
        Some(models) => Some(UsageRecord {
            counts: Usage {
                input_tokens: count("input_tokens")?.unwrap_or(0),
                output_tokens: count("output_tokens")?.unwrap_or(0),
                cache_read_tokens: count("cache_read_tokens")?.unwrap_or(0),
                cache_write_tokens: count("cache_write_tokens")?.unwrap_or(0),
                total_tokens: count("total_tokens")?.unwrap_or(0),
                llm_calls: count("llm_calls")?.unwrap_or(0),
            },
            models: serde_json::from_str(&models).unwrap_or_default(),
        }),
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
        suite: row.get("suite")?,
        case: row.get("case_name")?,
        usage,
        first_byte_ms: count("first_byte_ms")?,
        answer_ms: count("answer_ms")?,
        total_ms: count("total_ms")?.unwrap_or(0),
        queries: Vec::new(),
    })
}
