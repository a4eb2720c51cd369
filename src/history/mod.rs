//! The local record of turns and thread names, in SQLite (`history.db`):
//! what `ask` and `check` record, what `ask --thread` continues, and what
//! `analyst history` reads. Nothing else in `analyst` writes SQL.
//!
//! - this file: the one database type, [`History`], opened safely — the
//!   file and its folder created 0600/0700, a symbolic link at either
//!   refused, many processes at once (WAL, and a busy wait also while the
//!   first of them switches a new file to WAL) — and what a turn is;
//! - [`schema`]: the versions of the schema and their migrations;
//! - [`record`]: what a turn writes, and the thread names of `--thread`;
//! - [`runs`]: each `check` run as one row, for `history trend`;
//! - [`query`]: what `analyst history` reads: list, show, export, usage,
//!   and `forget`, which erases.
//!
//! Every failure names the file: for `analyst history` it is exit 2 (a
//! damaged, unreadable or foreign file is the user's to look at), for a
//! command that records it is a warning.

mod query;
mod record;
mod runs;
mod schema;
mod unsent;

pub use query::{Forget, ListFilter, ListedTurn, TurnKind, UsageBy, UsageGroup};
pub use record::{chat_url, write};
pub use runs::{CheckRunRecord, TrendFilter};
pub use schema::SCHEMA_VERSION;
pub use unsent::{Delivery, Pushed};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use rusqlite::{Connection, ErrorCode, OpenFlags};
use serde::Serialize;

use crate::domain::UsageRecord;
use crate::error::{fail, Kind};
use crate::files::{create_private_folder, is_link, is_link_metadata, LINK};

/// Where turns are recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct Recording {
    /// The database.
    pub db: PathBuf,
    /// `history_keep`: turns older than this are pruned as new ones come.
    pub keep: Option<std::time::Duration>,
}

/// `ask --thread NAME`.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadSettings {
    /// The thread's name.
    pub name: String,
    /// `--thread-ttl`: a thread whose last turn is older starts afresh.
    pub ttl: std::time::Duration,
    /// The database that keeps thread names (also when recording is off).
    pub db: PathBuf,
}

/// How long a writer waits for another to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// An open history database.
pub struct History {
    connection: Connection,
    path: PathBuf,
}

/// One SQL query of a turn: what it was, not its rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryRecord {
    /// The tool that ran it (`cubeSqlApi`, …); not kept in the history.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tool: String,
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
    /// Who asked: `external:ID` or `internal:NAME`, or the Cube token's
    /// user (`token:ID`).
    pub identity: Option<String>,
    /// `--thread NAME`.
    pub thread: Option<String>,
    /// The chat.
    pub chat_id: Option<String>,
    /// The question's message id.
    pub message_id: Option<String>,
    /// The question.
    pub question: Option<String>,
    /// The final answer, as [`crate::domain::kept_answer`] keeps it.
    pub answer: Option<String>,
    /// `completed`, `incomplete`, `cut`, `error`, …
    pub status: String,
    /// The exit code of the turn.
    pub exit_code: u8,
    /// For `check`: the exit code of the case's verdict (9 for a `fail`,
    /// `review` or `error` verdict of a turn that itself went well).
    pub verdict_exit_code: Option<u8>,
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

/// The time now, as the history writes times.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Now and `span` later, as the history writes times.
pub fn after(span: Duration) -> String {
    let span = chrono::Duration::from_std(span).unwrap_or(chrono::Duration::MAX);
    let then = chrono::Utc::now()
        .checked_add_signed(span)
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MAX_UTC);
    then.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `time` less `age`, as the history writes times.
pub fn before(age: Duration) -> String {
    let age = chrono::Duration::from_std(age).unwrap_or(chrono::Duration::MAX);
    let then = chrono::Utc::now()
        .checked_sub_signed(age)
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
    then.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl History {
    /// Opens (creating it, its folder 0700 and the file 0600) and migrates
    /// the database at `path`. A symbolic link (on Windows, any reparse
    /// point) at the path or its folder is refused, never followed; a
    /// damaged file, one of a newer schema, or one that cannot be opened is
    /// refused, naming the file.
    pub fn open(path: &Path) -> Result<History> {
        let refuse = |why: String| fail(Kind::Usage, format!("history {}: {why}", path.display()));
        let folder = path.parent().filter(|folder| !folder.as_os_str().is_empty());
        if let Some(folder) = folder {
            if is_link(folder) {
                return Err(refuse(format!(
                    "its folder {} is {LINK}: refused, never followed",
                    folder.display()
                )));
            }
            create_private_folder(folder).map_err(|err| refuse(format!("cannot create its folder: {err}")))?;
        }
        if is_link(path) {
            return Err(refuse(format!("it is {LINK}: refused, never followed")));
        }
        create_file(path).map_err(|err| refuse(format!("cannot create it: {err}")))?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection =
            Connection::open_with_flags(path, flags).map_err(|err| refuse(format!("cannot open it: {err}")))?;
        let mut history = History {
            connection,
            path: path.to_path_buf(),
        };
        history
            .connection
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|err| history.failed(err))?;
        history.use_wal()?;
        // In WAL, NORMAL never corrupts the file; a power cut may lose the
        // last turns, which is a history's fair trade for fast records.
        for (name, value) in [("synchronous", "NORMAL"), ("foreign_keys", "ON")] {
            history
                .connection
                .pragma_update(None, name, value)
                .map_err(|err| history.failed(err))?;
        }
        schema::migrate(&mut history)?;
        Ok(history)
    }

    /// Switches the file to WAL (once per file; a no-op after). The
    /// switch of a new file takes a lock SQLite's busy handler does not
    /// wait for: it is tried again until [`BUSY_TIMEOUT`].
    fn use_wal(&self) -> Result<()> {
        let started = Instant::now();
        loop {
            let mode = self
                .connection
                .query_row("PRAGMA journal_mode = WAL", [], |row| row.get::<_, String>(0));
            match mode {
                Ok(_) => return Ok(()),
                Err(err) if is_busy(&err) && started.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(Duration::from_millis(5 + fastrand::u64(0..20)));
                }
                Err(err) => return Err(self.failed(err)),
            }
        }
    }

    /// A failure of the database, naming its file: a full disk is
    /// [`Kind::CannotWrite`], anything else (damaged, locked too long, not
    /// a database) [`Kind::Usage`].
    fn failed(&self, err: rusqlite::Error) -> anyhow::Error {
        let kind = match err.sqlite_error_code() {
            Some(ErrorCode::DiskFull) => Kind::CannotWrite,
            _ => Kind::Usage,
        };
        fail(kind, format!("history {}: {err}", self.path.display()))
    }
}

/// True for SQLite's "the database is busy (or locked)".
fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Creates the database file 0600 when it does not exist, never through a
/// symbolic link (on Windows, a reparse point: opened as itself, then
/// refused) and without failing when another process creates it at the
/// same moment.
fn create_file(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
        options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
    }
    let file = options.open(path)?;
    if is_link_metadata(&file.metadata()?) {
        return Err(std::io::Error::other(format!("it is {LINK}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_database_opens_while_another_process_holds_it_locked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        // Another process made the file and holds it locked (as the first
        // of two cron jobs does while it makes the schema).
        let other = Connection::open(&path).unwrap();
        other.execute_batch("BEGIN EXCLUSIVE; CREATE TABLE t (x);").unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(700));
            other.execute_batch("COMMIT").unwrap();
        });
        let opened = History::open(&path);
        release.join().unwrap();
        let mut history = opened.expect("it waits for the lock, then opens");
        history.record(&TurnRecord::default(), None).unwrap();
    }
}
