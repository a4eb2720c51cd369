//! The history: every turn of `ask` and `check` recorded in a real SQLite
//! database (read back here with rusqlite and with `analyst history`),
//! each way to turn it off, replays never recorded, threads that go on,
//! expire and start afresh when the service forgot their chat, many
//! writers at once, usage and cost, export, forget, and a database of a
//! newer schema refused without failing `ask`.

mod support;

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;
use support::*;

/// A fresh folder and the history database in it.
fn database() -> (Scratch, PathBuf) {
    let dir = Scratch::new();
    let db = dir.join("state/history.db");
    (dir, db)
}

/// `analyst` against `emu`, recording into `db`.
fn analyst_into(emu: &Emulator, db: &Path) -> assert_cmd::Command {
    let mut command = emu.analyst();
    command.env("ANALYST_HISTORY_DB", db);
    command
}

/// How many turns `db` holds (0 when it does not exist).
fn turns(db: &Path) -> i64 {
    if !db.exists() {
        return 0;
    }
    Connection::open(db)
        .unwrap()
        .query_row("SELECT count(*) FROM turns", [], |row| row.get(0))
        .unwrap()
}

/// `analyst history ARGS -o json` of `db`, parsed.
fn history_json(db: &Path, args: &[&str]) -> Value {
    let output = analyst()
        .env("ANALYST_HISTORY_DB", db)
        .arg("history")
        .args(args)
        .args(["-o", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn every_field_of_a_turn_is_recorded_and_no_secret() {
    let emu = Emulator::start();
    let (_dir, db) = database();
    analyst_into(&emu, &db)
        .args(["ask", "-o", "csv", "Revenue by month?"])
        .assert()
        .success();
    let turn = history_json(&db, &["show", "1"]);
    assert_eq!(turn["command"], "ask");
    assert_eq!(turn["question"], "Revenue by month?");
    assert!(turn["answer"].as_str().unwrap().contains("revenue rose"), "{turn}");
    assert_eq!(
        (&turn["status"], &turn["exitCode"]),
        (&Value::from("completed"), &Value::from(0))
    );
    assert_eq!(turn["chatId"], "chat-0001");
    assert!(turn["messageId"].as_str().unwrap().ends_with("-message"));
    assert_eq!(turn["identity"], "external:ci-bot");
    assert_eq!(turn["chatUrl"], emu.chat_url());
    let usage = &turn["usage"];
    assert_eq!(
        (usage["inputTokens"].as_u64(), usage["totalTokens"].as_u64()),
        (Some(1000), Some(1280))
    );
    assert_eq!(usage["models"], serde_json::json!(["m"]));
    assert!(turn["totalMs"].as_u64().is_some() && turn["firstByteMs"].as_u64().is_some());
    let query = &turn["queries"][0];
    assert_eq!(query["title"], "Revenue by month");
    assert!(query["sql"].as_str().unwrap().starts_with("SELECT"));
    assert_eq!(query["columns"].as_array().unwrap().len(), 3);
    assert_eq!(
        (query["rowsReturned"].as_u64(), query["totalRows"].as_u64()),
        (Some(12), Some(12))
    );
    // Neither the database nor its write-ahead log holds a secret.
    let folder = db.parent().unwrap();
    for entry in std::fs::read_dir(folder).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        for secret in [API_KEY, DATA_SECRET] {
            assert!(!bytes.windows(secret.len()).any(|window| window == secret.as_bytes()));
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&db), mode(folder)), (0o600, 0o700));
    }
}

#[test]
fn each_way_to_turn_recording_off_records_nothing_and_replays_are_never_recorded() {
    let emu = Emulator::start();
    let (dir, db) = database();
    analyst_into(&emu, &db)
        .args(["ask", "--no-history", "Q?"])
        .assert()
        .success();
    analyst_into(&emu, &db)
        .env("ANALYST_HISTORY", "0")
        .args(["ask", "Q?"])
        .assert()
        .success();
    let config = dir.write("config.toml", "[profiles.default]\nhistory = false\n");
    analyst_into(&emu, &db)
        .env("ANALYST_CONFIG", &config)
        .args(["ask", "Q?"])
        .assert()
        .success();
    analyst_into(&emu, &db)
        .args(["ask", "--replay"])
        .arg(fixture("revenue-by-month.ndjson"))
        .assert()
        .success();
    assert_eq!(turns(&db), 0);
    analyst_into(&emu, &db).args(["ask", "Q?"]).assert().success();
    assert_eq!(turns(&db), 1);
    // history_keep prunes older turns as a new one is recorded.
    let keeping = dir.write("keep.toml", "[profiles.default]\nhistory_keep = \"0s\"\n");
    analyst_into(&emu, &db)
        .env("ANALYST_CONFIG", &keeping)
        .args(["ask", "Latest?"])
        .assert()
        .success();
    assert_eq!(turns(&db), 1);
    assert_eq!(history_json(&db, &["list"])[0]["question"], "Latest?");
}

#[test]
fn a_thread_goes_on_expires_and_starts_afresh_when_the_service_forgot_it() {
    let emu = Emulator::start();
    let (_dir, db) = database();
    let ask = |question: &str, extra: &[&str]| {
        let output = analyst_into(&emu, &db)
            .env("ANALYST_HISTORY", "0") // thread names are kept even so
            .args(["ask", "--thread", "morning"])
            .args(extra)
            .arg(question)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    ask("First?", &[]);
    ask("Second?", &[]);
    let bodies = emu.chat_bodies();
    assert_eq!(bodies[0].get("chatId"), None);
    assert_eq!(bodies[1]["chatId"], "chat-0001");
    // The service forgot the chat: a 404, then a new chat, with a note.
    emu.forget_chats();
    let stderr = ask("Third?", &[]);
    assert!(stderr.contains("no longer knows chat chat-0001"), "{stderr}");
    ask("Fourth?", &[]);
    let bodies = emu.chat_bodies();
    assert_eq!(bodies.last().unwrap()["chatId"], "chat-0002");
    // Older than --thread-ttl: afresh.
    let stderr = ask("Fifth?", &["--thread-ttl", "0s"]);
    assert!(stderr.contains("older than --thread-ttl"), "{stderr}");
    assert_eq!(emu.chat_bodies().last().unwrap().get("chatId"), None);
    assert_eq!(turns(&db), 0, "ANALYST_HISTORY=0 records no turn");
    // --thread with --chat-id is a usage error.
    analyst_into(&emu, &db)
        .args(["ask", "--thread", "morning", "--chat-id", "chat-0001", "Q?"])
        .assert()
        .code(2);
}

#[test]
fn sixteen_processes_record_at_once_and_none_loses_a_turn() {
    let emu = Emulator::start();
    let (_dir, db) = database();
    let children: Vec<std::process::Child> = (0..16)
        .map(|i| {
            emu.command()
                .env("ANALYST_HISTORY_DB", &db)
                .args(["ask", "-q", &format!("Question {i}?")])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    assert_eq!(turns(&db), 16);
    // check records every case's turn too, with its suite and case.
    let suite = ScratchFile::new(
        "s.toml",
        "[[case]]\nname = \"a\"\nquestion = \"A?\"\n[[case]]\nname = \"b\"\nquestion = \"B?\"\n",
    );
    analyst_into(&emu, &db)
        .args(["check", "--jobs", "2"])
        .arg(&*suite)
        .assert()
        .success();
    let listed = history_json(&db, &["list", "--limit", "2"]);
    let cases: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|turn| turn["case"].as_str().unwrap())
        .collect();
    assert_eq!(cases.len(), 2);
    assert!(cases.contains(&"a") && cases.contains(&"b"));
    assert!(listed[0]["suite"].as_str().unwrap().ends_with("s.toml"));
}

#[test]
fn usage_and_cost_by_model_with_a_price_table() {
    let emu = Emulator::start();
    let (dir, db) = database();
    for _ in 0..2 {
        analyst_into(&emu, &db).args(["ask", "Q?"]).assert().success();
    }
    let config = dir.write(
        "config.toml",
        "[prices.\"m\"]\ninput = 3.0\noutput = 15.0\ncache_read = 0.3\ncache_write = 3.75\n",
    );
    let output = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .env("ANALYST_CONFIG", &config)
        .args(["history", "usage", "--by", "model", "-o", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let usage: Value = serde_json::from_slice(&output.stdout).unwrap();
    let model = &usage[0];
    assert_eq!((model["key"].as_str(), model["turns"].as_u64()), (Some("m"), Some(2)));
    assert_eq!(model["inputTokens"], 2000);
    // 2 turns × (1000 × 3 + 80 × 15 + 150 × 0.3 + 50 × 3.75) per million.
    let expected = 2.0 * (1000.0 * 3.0 + 80.0 * 15.0 + 150.0 * 0.3 + 50.0 * 3.75) / 1e6;
    assert!((model["cost"].as_f64().unwrap() - expected).abs() < 1e-9, "{usage}");
    let csv = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "usage", "--by", "day", "-o", "csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(csv.starts_with("key,turns,input_tokens"), "{csv}");
    assert_eq!(csv.lines().count(), 2, "{csv}");
}

#[test]
fn a_thread_exports_and_forget_deletes_it() {
    let emu = Emulator::start();
    let (_dir, db) = database();
    for question in ["Revenue by month?", "And by quarter?"] {
        analyst_into(&emu, &db)
            .args(["ask", "--thread", "ticket-42", question])
            .assert()
            .success();
    }
    let markdown = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "export", "ticket-42"])
        .output()
        .unwrap();
    let markdown = String::from_utf8(markdown.stdout).unwrap();
    assert!(markdown.starts_with("# ticket-42\n"), "{markdown}");
    assert!(markdown.contains("## Revenue by month?") && markdown.contains("## And by quarter?"));
    assert!(markdown.contains("```sql\nSELECT"), "{markdown}");
    let html = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "export", "ticket-42", "-o", "html"])
        .output()
        .unwrap();
    let html = String::from_utf8(html.stdout).unwrap();
    assert!(html.contains("Content-Security-Policy") && html.contains("<h2>Revenue by month?</h2>"));
    let listed = history_json(&db, &["list", "--thread", "ticket-42"]);
    assert_eq!(listed.as_array().unwrap().len(), 2);
    analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "forget", "--thread", "ticket-42"])
        .assert()
        .success();
    assert_eq!(turns(&db), 0);
    // The name went too: the next turn starts a new chat.
    analyst_into(&emu, &db)
        .args(["ask", "--thread", "ticket-42", "Again?"])
        .assert()
        .success();
    assert_eq!(emu.chat_bodies().last().unwrap().get("chatId"), None);
}

#[test]
fn a_database_of_a_newer_schema_is_refused_and_ask_still_works() {
    let emu = Emulator::start();
    let (_dir, db) = database();
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    Connection::open(&db)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let output = analyst_into(&emu, &db).args(["ask", "Q?"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("newer than this analyst's"), "{stderr}");
    // A database that cannot be written is a warning too.
    let output = analyst_into(&emu, Path::new("/proc/no/such/history.db"))
        .args(["ask", "Q?"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stderr).contains("was not recorded"));
}

#[test]
fn list_shows_the_latest_turns_filtered_and_through_jq() {
    let emu = Emulator::start();
    let (_dir, db) = database();
    for question in ["Revenue by month?", "Orders by region?", "Revenue by week?"] {
        analyst_into(&emu, &db).args(["ask", question]).assert().success();
    }
    let listed = history_json(&db, &["list", "--grep", "Revenue", "--limit", "1"]);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["question"], "Revenue by week?", "newest first");
    let table = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .arg("history")
        .output()
        .unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    assert_eq!(table.lines().count(), 4, "{table}");
    assert!(table.lines().next().unwrap().starts_with("ID"), "{table}");
    let jq = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "list", "-o", "json", "--jq", ".[].question"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(jq.stdout).unwrap(),
        "Revenue by week?\nOrders by region?\nRevenue by month?\n"
    );
}

#[test]
fn a_database_of_the_first_version_is_migrated_and_keeps_its_turns() {
    let (_dir, db) = database();
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::copy(fixture("history-v1.db"), &db).unwrap();
    let listed = history_json(&db, &["list"]);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["question"], "Revenue yesterday?");
    assert_eq!(listed[0]["queries"][0]["sql"], "SELECT 1");
    let connection = Connection::open(&db).unwrap();
    let version: i64 = connection
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, 2);
    let index: i64 = connection
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'turns_chat'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(index, 1, "version 2's index");
    // Its thread goes on under the name it had.
    let exported = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "export", "chat-0042"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&exported.stdout).contains("Revenue was $1.2M."));
}
