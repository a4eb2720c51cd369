//! The schema of the history, versioned with `PRAGMA user_version`: an
//! older database is migrated when opened, a newer one is refused (history
//! is off for that run).

use anyhow::Result;

use super::History;
use crate::error::{fail, Kind};

/// The schema's version, in `PRAGMA user_version`.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Each migration takes the database from the version before it (its
/// index) to the next: version 1 made the tables; version 2 indexes turns
/// by chat id (`history export CHAT_ID`); version 3 keeps a `check` turn's
/// verdict-level exit code beside the turn's; version 4 keeps the spans a
/// collector did not take, for `history push`; version 5 lets a push claim
/// one batch at a time, mark one refused for good, and `history forget`
/// find the batches of the turns it forgets; version 6 records each
/// `check` run as one row beside its turns, for `history trend`.
const MIGRATIONS: [&str; 6] = [
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
    "
ALTER TABLE turns ADD COLUMN verdict_exit_code INTEGER;
",
    "
CREATE TABLE unsent_spans (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    spans INTEGER NOT NULL,
    request BLOB NOT NULL
);
",
    "
ALTER TABLE unsent_spans ADD COLUMN claimed_until TEXT;
ALTER TABLE unsent_spans ADD COLUMN refused TEXT;
CREATE TABLE unsent_turns (
    unsent_id INTEGER NOT NULL REFERENCES unsent_spans (id) ON DELETE CASCADE,
    message_id TEXT NOT NULL
);
CREATE INDEX unsent_turns_message ON unsent_turns (message_id);
CREATE INDEX unsent_turns_batch ON unsent_turns (unsent_id);
",
    "
CREATE TABLE check_runs (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    suite_path TEXT NOT NULL,
    suite TEXT NOT NULL,
    shard TEXT,
    chat_url TEXT,
    git_ref TEXT,
    git_commit TEXT,
    ci_url TEXT,
    cases INTEGER NOT NULL,
    passed INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    skipped INTEGER NOT NULL,
    quarantined INTEGER NOT NULL,
    consistent_passed INTEGER,
    consistent_cases INTEGER,
    cost REAL,
    seconds REAL NOT NULL,
    regraded INTEGER NOT NULL,
    exit_code INTEGER NOT NULL
);
CREATE INDEX check_runs_suite ON check_runs (suite_path, at);
",
];

/// Brings the schema of `history` to [`SCHEMA_VERSION`]; a newer one is
/// refused, naming the file.
pub(super) fn migrate(history: &mut History) -> Result<()> {
    let path = history.path.display().to_string();
    let transaction = history
        .connection
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(|err| fail(Kind::Usage, format!("history {path}: {err}")))?;
    let failed = |err: rusqlite::Error| fail(Kind::Usage, format!("history {path}: {err}"));
    let version: i64 = transaction
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(failed)?;
    if version > SCHEMA_VERSION {
        return Err(fail(
            Kind::Usage,
            format!(
                "history {path} has schema version {version}, newer than this analyst's {SCHEMA_VERSION}: upgrade analyst (history is off for this run)"
            ),
        ));
    }
    for migration in &MIGRATIONS[version.max(0) as usize..] {
        transaction.execute_batch(migration).map_err(failed)?;
    }
    transaction
        .pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(failed)?;
    transaction.commit().map_err(failed)
}
