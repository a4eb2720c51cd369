//! The history: every turn of `ask` and `check` recorded in a real SQLite
//! database (read back here with rusqlite and with `analyst history`),
//! each way to turn it off, replays never recorded, threads that go on,
//! expire and start afresh when the service forgot their chat, many
//! writers at once, usage and cost, export, forget, and a database of a
//! newer schema refused without failing `ask`.

use std::path::{Path, PathBuf};

use crate::support::*;
use rusqlite::Connection;
use serde_json::Value;

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
    // A turn that carries every secret the process knows in every field
    // the history records: the question, the answer, a query's title and
    // SQL, a tool's error.
    let call = SqlCall {
        sql: format!("SELECT '{API_KEY}', '{DATA_SECRET}'"),
        title: format!("Revenue for {API_KEY}"),
        ..SqlCall::revenue_by_month(2)
    };
    emu.script(Reply::stream(
        &ChatStream::new("chat-0002", Family::Semantic)
            .user_echo("Q", None)
            .sql_call(&call)
            .failed_sql_call("SELECT 1", &format!("Error: bad key {API_KEY}"))
            .final_answer(&[&format!("The key is {API_KEY} and the secret {DATA_SECRET}.")])
            .usage(),
    ));
    analyst_into(&emu, &db)
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .args(["ask", "-o", "csv", &format!("Is {DATA_SECRET} right?")])
        .assert()
        .success();
    let turn = history_json(&db, &["show", "2"]);
    assert!(turn["answer"].as_str().unwrap().contains("The key is ***"), "{turn}");
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
    assert_whole(
        stderr.to_string(),
        str![[r#"
thread morning: the service no longer knows chat chat-0001: starting afresh
message: [..]-message
chat: chat-0002

"#]],
    );
    ask("Fourth?", &[]);
    let bodies = emu.chat_bodies();
    assert_eq!(bodies.last().unwrap()["chatId"], "chat-0002");
    // Older than --thread-ttl: afresh.
    let stderr = ask("Fifth?", &["--thread-ttl", "0s"]);
    assert_whole(
        stderr.to_string(),
        str![[r#"
thread morning: its last turn ([..]) is older than --thread-ttl: starting afresh
message: [..]-message
chat: chat-0003

"#]],
    );
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
    // The whole export, its times aside.
    let turn = |question: &str, n: u8| {
        format!(
            "## {question}\n\n*[..]Z · completed*\n\n> Answer {n}: revenue rose every month; December was the best month (€2.4M).\n\n\
             **Revenue by month**\n\n```sql\nSELECT orders_view.month, MEASURE(orders_view.revenue), MEASURE(orders_view.count) \
             FROM orders_view GROUP BY 1 ORDER BY 1\n```\n\n"
        )
    };
    let expected = format!(
        "# ticket-42\n\n{}\n{}",
        turn("Revenue by month?", 1),
        turn("And by quarter?", 2)
    );
    snapbox::assert_data_eq!(markdown, expected);
    let html = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "export", "ticket-42", "-o", "html"])
        .output()
        .unwrap();
    let html = String::from_utf8(html.stdout).unwrap();
    assert!(html.contains("Content-Security-Policy") && html.contains("<h2>Revenue by month?</h2>"));
    let listed = history_json(&db, &["list", "--thread", "ticket-42"]);
    assert_eq!(listed.as_array().unwrap().len(), 2);
    // Forget what? One line in our words, and nothing deleted.
    let unsaid = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "forget"])
        .output()
        .unwrap();
    exits(&unsaid, 2);
    assert_eq!(
        String::from_utf8_lossy(&unsaid.stderr),
        "analyst: error: forget what? give --before DATE|DURATION, --thread NAME or --all (nothing was deleted)\n"
    );
    assert_eq!(turns(&db), 2);
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
    exits(&output, 0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0001
analyst: warning: the turn was not recorded: history [..] has schema version 99, newer than this analyst's 6: upgrade analyst (history is off for this run)

"#]],
    );
    // A database that cannot be written is a warning too.
    let output = analyst_into(&emu, Path::new("/proc/no/such/history.db"))
        .args(["ask", "Q?"])
        .output()
        .unwrap();
    exits(&output, 0);
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
    assert_eq!(version, 6);
    // Version 6 records check runs, for `history trend`: none yet.
    let trend = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "trend"])
        .output()
        .unwrap();
    assert_eq!(trend.status.code(), Some(5));
    // Version 4 keeps the spans a collector did not take; version 5 the
    // claims and refusals of a push, and which turns a batch describes.
    let unsent: i64 = connection
        .query_row(
            "SELECT count(*) FROM unsent_spans WHERE claimed_until IS NULL AND refused IS NULL",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(unsent, 0);
    let linked: i64 = connection
        .query_row("SELECT count(*) FROM unsent_turns", [], |row| row.get(0))
        .unwrap();
    assert_eq!(linked, 0);
    let column: i64 = connection
        .query_row(
            "SELECT count(*) FROM pragma_table_info('turns') WHERE name = 'verdict_exit_code'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(column, 1, "version 3's column");
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

#[test]
fn no_output_is_written_over_the_history_database() {
    let emu = Emulator::start();
    let (dir, db) = database();
    analyst_into(&emu, &db).args(["ask", "Q?"]).assert().success();
    let before = std::fs::read(&db).unwrap();
    let suite = dir.write("s.toml", "[[case]]\nname = \"a\"\nquestion = \"A?\"\n");
    let tries: Vec<Vec<std::ffi::OsString>> = vec![
        vec![
            "history".into(),
            "-o".into(),
            "json".into(),
            "--output-file".into(),
            db.clone().into(),
        ],
        vec!["ask".into(), "--tee".into(), db.clone().into(), "Q?".into()],
        vec![
            "ask".into(),
            "-o".into(),
            "csv".into(),
            "--output-file".into(),
            db.clone().into(),
            "Q?".into(),
        ],
        vec![
            "check".into(),
            "--junit".into(),
            db.clone().into(),
            suite.clone().into(),
        ],
        // Another spelling of the same file, and its write-ahead log.
        vec![
            "history".into(),
            "-o".into(),
            "json".into(),
            "--output-file".into(),
            db.parent().unwrap().join("../state/history.db").into(),
        ],
        vec![
            "ask".into(),
            "--tee".into(),
            db.with_extension("db-wal").into(),
            "Q?".into(),
        ],
    ];
    for args in tries {
        let output = analyst_into(&emu, &db).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        exits(&output, 2);
        assert!(stderr.contains("the history database"), "{args:?}: {stderr}");
    }
    assert_eq!(std::fs::read(&db).unwrap(), before, "the database is untouched");
    assert_eq!(emu.requests_on(Route::Chat).len(), 1, "nothing more was sent");
}

#[test]
fn with_cube_tokens_each_user_has_their_own_threads_and_records() {
    let emu = Emulator::start();
    let (_dir, db) = database();
    let ask = |user: &str, question: &str| {
        analyst_into(&emu, &db)
            .env("ANALYST_CHAT_URL", emu.deployment_chat_url())
            .env("ANALYST_CUBE_TOKEN", cube_token(user))
            .env_remove("ANALYST_API_KEY")
            .env_remove("ANALYST_EXTERNAL_ID")
            .args(["ask", "--thread", "daily", question])
            .assert()
            .success();
    };
    ask("alice", "Alice's first?");
    ask("bob", "Bob's first?");
    ask("alice", "Alice's second?");
    let bodies = emu.chat_bodies();
    assert_eq!(bodies[1].get("chatId"), None, "bob does not continue alice's chat");
    assert_eq!(bodies[2]["chatId"], "chat-0001", "alice continues her own");
    let listed = history_json(&db, &["list"]);
    let who: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|turn| turn["identity"].as_str().unwrap())
        .collect();
    assert_eq!(who, ["external:alice", "external:bob", "external:alice"]);
}

#[test]
fn many_processes_on_a_new_database_lose_no_turn() {
    let emu = Emulator::start();
    for round in 0..10 {
        let (_dir, db) = database();
        let children: Vec<std::process::Child> = (0..16)
            .map(|i| {
                emu.command()
                    .env("ANALYST_HISTORY_DB", &db)
                    // A thread opens the database as the command starts:
                    // all of them at once, on a file none has made yet.
                    .args([
                        "ask",
                        "--thread",
                        &format!("t{i}"),
                        &format!("Round {round}, question {i}?"),
                    ])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let output = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(output.status.success(), "{stderr}");
            assert!(!stderr.contains("not recorded"), "round {round}: {stderr}");
        }
        assert_eq!(turns(&db), 16, "round {round}");
    }
}

#[test]
fn every_secret_the_process_sees_is_redacted_also_when_the_service_echoes_it() {
    let emu = Emulator::start();
    let (_dir, db) = database();
    const DATA_TOKEN: &str = "eyJhbGciOiJIUzI1NiJ9.data-token-payload.signature-77";
    const KEY_SHAPED: &str = "sk-live-4f2a9c81d7e6b3a05c1d";
    let echoed = format!("Your secret is {DATA_SECRET}, your token {DATA_TOKEN}, a key {KEY_SHAPED}.");
    for output_mode in ["answer", "json", "raw"] {
        emu.script(Reply::stream(
            &ChatStream::new("chat-0001", Family::Cube)
                .user_echo(&format!("What is {KEY_SHAPED}?"), None)
                .error_line(&format!("echo of {DATA_SECRET}"))
                .final_answer(&[&echoed])
                .usage(),
        ));
        let output = analyst_into(&emu, &db)
            .env("ANALYST_DATA_SECRET", DATA_SECRET)
            .env("ANALYST_DATA_TOKEN", DATA_TOKEN)
            .args(["ask", "-o", output_mode, &format!("What is {KEY_SHAPED}?")])
            .output()
            .unwrap();
        let shown = [output.stdout, output.stderr].concat();
        let shown = String::from_utf8_lossy(&shown);
        for secret in [DATA_SECRET, DATA_TOKEN, KEY_SHAPED] {
            assert!(!shown.contains(secret), "{output_mode}: {secret} in {shown}");
        }
        assert!(shown.contains("***"), "{output_mode}: {shown}");
    }
    // Nor does the history hold one.
    let folder = db.parent().unwrap();
    for entry in std::fs::read_dir(folder).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        for secret in [DATA_SECRET, DATA_TOKEN, KEY_SHAPED] {
            assert!(
                !bytes.windows(secret.len()).any(|window| window == secret.as_bytes()),
                "{secret}"
            );
        }
    }
    assert_eq!(turns(&db), 3);
}

#[test]
fn forgetting_erases_what_was_forgotten_from_the_file_and_its_log() {
    let emu = Emulator::start();
    let (_dir, db) = database();
    const MARK: &str = "zanzibar-quartz-0451";
    analyst_into(&emu, &db)
        .args(["ask", "--thread", "secret-plans", &format!("Revenue of {MARK}?")])
        .assert()
        .success();
    analyst_into(&emu, &db)
        .args(["ask", "Kept question?"])
        .assert()
        .success();
    let holds = |needle: &str| {
        std::fs::read_dir(db.parent().unwrap()).unwrap().any(|entry| {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            bytes.windows(needle.len()).any(|window| window == needle.as_bytes())
        })
    };
    assert!(holds(MARK), "recorded first");
    analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "forget", "--thread", "secret-plans"])
        .assert()
        .success();
    assert!(!holds(MARK), "readable after forget");
    assert!(!holds("secret-plans"), "the thread's name too");
    assert!(holds("Kept question?"), "the rest is kept");
}

#[test]
fn a_symbolic_link_at_the_database_or_its_folder_is_refused_never_followed() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    // A dangling link: its target is not created.
    let target = dir.join("elsewhere.db");
    let link = dir.join("history.db");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let output = analyst_into(&emu, &link).args(["ask", "Q?"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 0);
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0001
analyst: warning: the turn was not recorded: history [..]: it is a symbolic link: refused, never followed

"#]],
    );
    assert!(!target.exists(), "the link's target was created");
    // A link to an empty file: the file keeps its bytes and its mode.
    let victim = dir.write("victim.txt", "");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    let link2 = dir.join("history2.db");
    std::os::unix::fs::symlink(&victim, &link2).unwrap();
    analyst_into(&emu, &link2).args(["ask", "Q?"]).assert().success();
    assert_eq!(std::fs::read(&victim).unwrap(), b"");
    assert_eq!(std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777, 0o644);
    // A linked folder.
    let real = dir.join("real");
    std::fs::create_dir(&real).unwrap();
    let folder = dir.join("linked");
    std::os::unix::fs::symlink(&real, &folder).unwrap();
    let output = analyst_into(&emu, &folder.join("history.db"))
        .args(["ask", "Q?"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("symbolic link"));
    assert!(
        std::fs::read_dir(&real).unwrap().next().is_none(),
        "nothing written through it"
    );
    // analyst history refuses it: exit 2, one line.
    let output = analyst()
        .env("ANALYST_HISTORY_DB", &link)
        .arg("history")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 2);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_bad_grep_or_a_damaged_database_is_one_line_and_exit_2() {
    let emu = Emulator::start();
    let (_dir, db) = database();
    analyst_into(&emu, &db).args(["ask", "Q?"]).assert().success();
    let output = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "--grep", "("])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 2);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: error: --grep "(" is not a valid regular expression: unclosed group at character 1

"#]],
    );
    let (_dir, damaged) = database();
    std::fs::create_dir_all(damaged.parent().unwrap()).unwrap();
    std::fs::write(&damaged, vec![0x5a; 8192]).unwrap();
    for args in [&["history"][..], &["history", "usage"], &["history", "show", "1"]] {
        let output = analyst()
            .env("ANALYST_HISTORY_DB", &damaged)
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        exits(&output, 2);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(&damaged.display().to_string()), "{stderr}");
        assert!(output.stdout.is_empty());
    }
}

/// Sets the time of the turns of `db`, oldest first, to `times`.
fn set_times(db: &Path, times: &[&str]) {
    let connection = Connection::open(db).unwrap();
    for (id, at) in times.iter().enumerate() {
        connection
            .execute(
                "UPDATE turns SET at = ?1 WHERE id = ?2",
                rusqlite::params![at, id as i64 + 1],
            )
            .unwrap();
    }
}

#[test]
fn usage_by_week_is_by_iso_week() {
    let emu = Emulator::start();
    let (_dir, db) = database();
    for _ in 0..5 {
        analyst_into(&emu, &db).args(["ask", "Q?"]).assert().success();
    }
    set_times(
        &db,
        &[
            "2024-12-30T09:00:00.000Z", // a Monday: 2025's week 1
            "2026-01-01T09:00:00.000Z", // a Thursday: 2026's week 1
            "2026-11-26T09:00:00.000Z", // a Thursday: week 48
            "2027-01-01T09:00:00.000Z", // a Friday: 2026's week 53
            "2027-01-03T09:00:00.000Z", // the Sunday after: the same week
        ],
    );
    let usage = history_json(&db, &["usage", "--by", "week"]);
    let weeks: Vec<(&str, u64)> = usage
        .as_array()
        .unwrap()
        .iter()
        .map(|group| (group["key"].as_str().unwrap(), group["turns"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        weeks,
        [("2025-W01", 1), ("2026-W01", 1), ("2026-W48", 1), ("2026-W53", 2)]
    );
}

#[test]
fn a_threads_export_keeps_each_answer_inside_its_turn() {
    let (_dir, db) = database();
    let emu = Emulator::start();
    let answers = [
        "Here is code:\n```sql\nSELECT 1\n(the fence never closes)",
        "## Forged question?\n\nAnd a <script>alert(1)</script>.",
        "A plain answer.",
    ];
    for (i, answer) in answers.iter().enumerate() {
        emu.script(Reply::stream(
            &ChatStream::new("chat-0001", Family::Cube)
                .user_echo(&format!("Question {i}?"), None)
                .final_answer(&[answer])
                .usage(),
        ));
        analyst_into(&emu, &db)
            .args(["ask", "--thread", "t", &format!("Question {i}?")])
            .assert()
            .success();
    }
    let output = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "export", "t", "-o", "html"])
        .output()
        .unwrap();
    let html = String::from_utf8(output.stdout).unwrap();
    let headings: Vec<&str> = html
        .split("<h2>")
        .skip(1)
        .map(|rest| rest.split("</h2>").next().unwrap())
        .collect();
    assert_eq!(headings, ["Question 0?", "Question 1?", "Question 2?"], "{html}");
    assert!(!html.contains("<script>"), "{html}");
    let markdown = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "export", "t"])
        .output()
        .unwrap();
    let markdown = String::from_utf8(markdown.stdout).unwrap();
    let top_headings = markdown.lines().filter(|line| line.starts_with("## ")).count();
    assert_eq!(top_headings, 3, "{markdown}");
}

#[test]
fn a_check_turn_records_its_verdict_and_a_turn_of_several_models_is_priced_per_model() {
    let emu = Emulator::start();
    let (dir, db) = database();
    let suite = dir.write(
        "s.toml",
        "[[case]]\nname = \"unmet\"\nquestion = \"Q?\"\nexpect_answer = \"never said\"\n",
    );
    analyst_into(&emu, &db).args(["check"]).arg(&suite).assert().code(9);
    let turn = &history_json(&db, &["list"])[0];
    assert_eq!(
        (turn["exitCode"].as_u64(), turn["verdictExitCode"].as_u64()),
        (Some(0), Some(9))
    );
    // Several models: each priced by its own counts when the usage line
    // gives them; by names alone, the split is unknown and so the cost.
    let (dir, db) = database();
    let usage = |models: serde_json::Value| {
        serde_json::json!({"id": "__usage__", "type": "usage", "usage": {
            "inputTokens": 3000, "outputTokens": 300, "cacheReadTokens": 0, "cacheWriteTokens": 0,
            "totalTokens": 3300, "llmCalls": 3, "models": models}})
        .to_string()
    };
    for models in [
        serde_json::json!([{"model": "big", "inputTokens": 1000, "outputTokens": 100},
                           {"model": "small", "inputTokens": 2000, "outputTokens": 200}]),
        serde_json::json!(["big", "small"]),
    ] {
        emu.script(Reply::stream(
            &ChatStream::new("chat-0001", Family::Cube)
                .user_echo("Q?", None)
                .final_answer(&["A."])
                .raw_line(&usage(models)),
        ));
        analyst_into(&emu, &db).args(["ask", "Q?"]).assert().success();
    }
    set_times(&db, &["2026-11-25T09:00:00.000Z", "2026-11-26T09:00:00.000Z"]);
    let config = dir.write(
        "config.toml",
        "[prices.\"big\"]\ninput = 10.0\noutput = 50.0\n[prices.\"small\"]\ninput = 1.0\noutput = 5.0\n",
    );
    let output = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .env("ANALYST_CONFIG", &config)
        .args(["history", "usage", "--by", "day", "-o", "json"])
        .output()
        .unwrap();
    let days: Value = serde_json::from_slice(&output.stdout).unwrap();
    let priced = (1000.0 * 10.0 + 100.0 * 50.0 + 2000.0 * 1.0 + 200.0 * 5.0) / 1e6;
    assert!((days[0]["cost"].as_f64().unwrap() - priced).abs() < 1e-12, "{days}");
    assert_eq!(days[1]["cost"], Value::Null, "{days}");
    // By model, each model's own tokens.
    let output = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .env("ANALYST_CONFIG", &config)
        .args([
            "history",
            "usage",
            "--by",
            "model",
            "--since",
            "2026-11-25",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    let models: Value = serde_json::from_slice(&output.stdout).unwrap();
    let big = models
        .as_array()
        .unwrap()
        .iter()
        .find(|group| group["key"] == "big")
        .unwrap();
    assert_eq!(big["inputTokens"], 1000 + 3000);
}

#[test]
fn doctor_and_config_list_show_the_history_settings_and_their_origin() {
    let (dir, db) = database();
    let config = dir.write("config.toml", "[profiles.default]\nhistory_keep = \"90d\"\n");
    let output = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .env("ANALYST_CONFIG", &config)
        .args(["config", "list"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&output.stdout);
    assert!(
        listed.contains("history database") && listed.contains(&db.display().to_string()),
        "{listed}"
    );
    assert_whole(
        listed.to_string(),
        str![[r#"
┌──────────────────┬─────────────────────────────────────────────────────────────────────────────────────────────┬────────────────────────────────────────────────────────────────────────┐
│ setting          ┆ value                                                                                       ┆ from                                                                   │
╞══════════════════╪═════════════════════════════════════════════════════════════════════════════════════════════╪════════════════════════════════════════════════════════════════════════╡
│ config file      ┆ [..], profile default (chosen by the profile named default) ┆ ANALYST_CONFIG                                                         │
│ chat URL         ┆ unset                                                                                       ┆                                                                        │
│ account URL      ┆ unset                                                                                       ┆                                                                        │
│ deployment id    ┆ unset                                                                                       ┆                                                                        │
│ data URL         ┆ unset                                                                                       ┆                                                                        │
│ external id      ┆ unset                                                                                       ┆                                                                        │
│ internal id      ┆ unset                                                                                       ┆                                                                        │
│ email            ┆ unset                                                                                       ┆                                                                        │
│ time zone        ┆ unset                                                                                       ┆                                                                        │
│ timeout          ┆ unset                                                                                       ┆                                                                        │
│ API key          ┆ unset                                                                                       ┆                                                                        │
│ Cube token       ┆ unset                                                                                       ┆                                                                        │
│ data token       ┆ unset                                                                                       ┆                                                                        │
│ data secret      ┆ unset                                                                                       ┆                                                                        │
│ history          ┆ on (every ask and check turn is recorded; --no-history turns it off)                        ┆ default                                                                │
│ history database ┆ [..] (created 0600 by the first turn)                  ┆ ANALYST_HISTORY_DB                                                     │
│ history keep     ┆ 90d                                                                                         ┆ history_keep of profile default ([..]) │
│ otlp endpoint    ┆ no spans are sent                                                                           ┆                                                                        │
│ otlp headers     ┆ unset                                                                                       ┆                                                                        │
└──────────────────┴─────────────────────────────────────────────────────────────────────────────────────────────┴────────────────────────────────────────────────────────────────────────┘

"#]],
    );
    let output = analyst()
        .env("ANALYST_HISTORY", "0")
        .args(["doctor", "--offline"])
        .output()
        .unwrap();
    let doctor = String::from_utf8_lossy(&output.stdout);
    assert!(doctor.contains("off (ANALYST_HISTORY=0)"), "{doctor}");
}

#[test]
fn the_list_shows_the_exit_code_beside_how_the_stream_ended() {
    let emu = Emulator::start();
    let (_dir, db) = database();
    emu.agent(|a| {
        a.rows = 250;
        a.returned = 100;
    });
    let output = analyst_into(&emu, &db)
        .args(["ask", "-q", "-o", "csv", "Revenue?"])
        .output()
        .unwrap();
    exits(&output, 10);
    analyst_into(&emu, &db)
        .args(["ask", "-q", "Revenue?"])
        .assert()
        .success();
    let output = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "list"])
        .output()
        .unwrap();
    let table = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header[..6],
        ["ID", "TIME", "(UTC)", "THREAD", "STATUS", "EXIT"],
        "{table}"
    );
    let row = |id: &str| -> Vec<&str> {
        let line = lines.iter().find(|line| line.starts_with(id)).unwrap();
        line.split_whitespace().collect()
    };
    // ID, date, time, thread, status, exit code.
    assert_eq!(row("1")[4..6], ["completed", "10"], "{table}");
    assert_eq!(row("2")[4..6], ["completed", "0"], "{table}");
}

#[test]
fn history_names_agents_totals_usage_lists_one_command_and_skips_thread_reads() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let db = dir.join("history.db");
    let db = db.to_str().unwrap();
    let analyst = || {
        let mut command = emu.analyst();
        command.env("ANALYST_HISTORY_DB", db);
        command
    };
    analyst().args(["ask", "Revenue by month?"]).assert().success();
    let suite = dir.write(
        "one.toml",
        "[[case]]\nname = \"one\"\nquestion = \"Orders?\"\nrepeat = 2\n",
    );
    analyst().arg("check").arg(&suite).assert().success();
    // A read of the thread so far asks nothing: not a turn.
    emu.script(Reply::stream(
        &ChatStream::empty().state("c-read", &[("user", "Revenue?"), ("assistant", "Revenue rose.")]),
    ));
    analyst().args(["ask", "--chat-id", "c-read"]).assert().success();

    let listed = |kind: &str| {
        let output = analyst()
            .args(["history", "-o", "json", "--kind", kind])
            .output()
            .unwrap();
        let turns: Value = serde_json::from_slice(&output.stdout).unwrap();
        turns
            .as_array()
            .unwrap()
            .iter()
            .map(|turn| turn["question"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(listed("ask"), ["Revenue by month?"]);
    assert_eq!(listed("check"), ["Orders?", "Orders?"]);

    // By agent: ACCOUNT/agents/ID, whole in a pipe, then the total.
    let output = analyst().args(["history", "usage", "--by", "agent"]).output().unwrap();
    let table = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 2, "one agent, so no total row:\n{table}");
    assert!(lines[0].starts_with("GROUP") && lines[0].contains("TOKENS"), "{table}");
    assert!(lines[1].starts_with(&format!("{ACCOUNT}/agents/{AGENT} ")), "{table}");
    assert!(
        lines[1].contains(" 3 ") && lines[1].contains("3840"),
        "3 turns of 1280 tokens:\n{table}"
    );
    let csv = analyst().args(["history", "usage", "-o", "csv"]).output().unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",cost,total_tokens"), "{csv}");
    assert!(csv.lines().nth(1).unwrap().ends_with(",3840"), "{csv}");
    // The same agent on another host is the same agent; two threads are
    // two groups, then TOTAL summing both.
    let elsewhere = Emulator::start();
    let mut command = elsewhere.analyst();
    command
        .env("ANALYST_HISTORY_DB", db)
        .args(["ask", "--thread", "morning", "Q?"]);
    command.assert().success();
    let output = analyst().args(["history", "usage", "--by", "agent"]).output().unwrap();
    let table = String::from_utf8(output.stdout).unwrap();
    assert_eq!(table.lines().count(), 2, "{table}");
    assert_whole(
        table.to_string(),
        str![[r#"
GROUP                TURNS  TOKENS  INPUT  OUTPUT  CACHE READ  CACHE WRITE  LLM CALLS  SECONDS
acme/agents/agent-7      4    5120   4000     320         600          200         12  [..]

"#]],
    );
    let output = analyst().args(["history", "usage", "--by", "thread"]).output().unwrap();
    let table = String::from_utf8(output.stdout).unwrap();
    let total = table.lines().last().unwrap();
    assert!(table.lines().any(|line| line.starts_with("morning ")), "{table}");
    assert!(
        total.starts_with("TOTAL") && total.contains(" 4 ") && total.contains("5120"),
        "{table}"
    );
}

#[test]
fn a_check_turn_is_listed_with_its_verdicts_exit_code_and_show_labels_the_models() {
    let emu = Emulator::start();
    let (_dir, db) = database();
    let suite = ScratchFile::new(
        "verdicts.toml",
        "[[case]]\nname = \"passes\"\nquestion = \"Revenue?\"\n\
         [[case]]\nname = \"fails\"\nquestion = \"Orders?\"\nexpect_answer = \"never said\"\n",
    );
    let output = analyst_into(&emu, &db)
        .args(["check", "--jobs", "1"])
        .arg(&*suite)
        .output()
        .unwrap();
    exits(&output, 9);
    let output = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .arg("history")
        .output()
        .unwrap();
    exits(&output, 0);
    // The turn completed; its verdict made the run exit 9, which is what
    // its row says, as `check` exited.
    assert_whole(
        String::from_utf8(output.stdout).unwrap(),
        str![[r#"
ID  TIME (UTC)        THREAD  STATUS     EXIT  TOKENS  QUESTION
2   [..]  -       completed     9    1280  Orders?
1   [..]  -       completed     0    1280  Revenue?

"#]],
    );
    let output = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "show", "2"])
        .output()
        .unwrap();
    let shown = String::from_utf8(output.stdout).unwrap();
    let fields: Vec<&str> = shown
        .lines()
        .filter(|line| {
            ["status ", "usage ", "models "]
                .iter()
                .any(|name| line.starts_with(name))
        })
        .collect();
    assert_eq!(
        fields,
        [
            "status      completed (exit 0; its verdict exit 9)",
            "usage       1280 tokens (1000 in, 80 out), 3 LLM calls",
            "models      m"
        ],
        "{shown}"
    );
}
