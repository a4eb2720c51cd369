//! `analyst ask`: every output mode against the emulator and offline replay,
//! both result shapes, both input keys, both tool-name families.

use crate::support::*;
use predicates::prelude::*;
use serde_json::{json, Value};

fn stdout_json(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON document")
}

#[test]
fn answer_mode_prints_the_final_answer_and_the_chat_id_on_stderr() {
    let emu = Emulator::start();
    emu.analyst()
        .args(["ask", "Revenue by month?"])
        .assert()
        .success()
        .stdout("Answer 1: revenue rose every month; December was the best month (€2.4M).\n")
        .stderr(predicate::str::contains("chat: chat-0001"));
}

#[test]
fn the_request_carries_the_key_the_question_and_session_settings() {
    let emu = Emulator::start();
    emu.analyst()
        .args([
            "ask",
            "Revenue?",
            "--email",
            "bot@acme.example",
            "--attr",
            "region=EMEA",
            "--attr",
            "tier=gold",
        ])
        .args([
            "--group",
            "sales",
            "--security-context",
            r#"{"tenant":"t1"}"#,
            "--ttl",
            "12h",
        ])
        .assert()
        .success();
    let request = &emu.requests()[0];
    assert_eq!(request.method, "POST");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Api-Key {API_KEY}").as_str())
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    let mut body = request.json();
    let message_id = body["messageId"].take();
    let digits = message_id.as_str().unwrap().strip_suffix("-message").unwrap();
    assert!(
        digits.len() >= 13 && digits.bytes().all(|b| b.is_ascii_digit()),
        "{message_id}"
    );
    assert_eq!(
        body,
        json!({
            "input": "Revenue?",
            "messageId": null,
            "sessionSettings": {
                "externalId": "ci-bot", "email": "bot@acme.example",
                "userAttributes": [{"name": "region", "value": "EMEA"}, {"name": "tier", "value": "gold"}],
                "groups": ["sales"], "securityContext": {"tenant": "t1"}, "ephemeralTtlSeconds": 43200
            }
        })
    );
}

#[test]
fn unset_identity_fields_are_omitted_and_persistent_maps_to_is_ephemeral_false() {
    let emu = Emulator::start();
    emu.analyst().args(["ask", "Q", "--persistent"]).assert().success();
    assert_eq!(
        emu.chat_bodies()[0]["sessionSettings"],
        json!({"externalId": "ci-bot", "isEphemeral": false})
    );
}

#[test]
fn an_internal_user_is_sent_as_internal_id_and_the_flag_wins_over_the_environment() {
    let emu = Emulator::start();
    // ANALYST_EXTERNAL_ID is set by the helper; the --internal-id flag wins.
    emu.analyst()
        .args(["ask", "Q", "--internal-id", "ana@acme.example"])
        .assert()
        .success();
    assert_eq!(
        emu.chat_bodies()[0]["sessionSettings"],
        json!({"internalId": "ana@acme.example"})
    );
}

#[test]
fn the_time_zone_and_authoring_switch_go_in_the_session_settings() {
    let emu = Emulator::start();
    emu.analyst()
        .args(["ask", "Q", "--timezone", "Europe/Berlin", "--no-authoring"])
        .assert()
        .success();
    emu.analyst()
        .env("ANALYST_TIMEZONE", "Asia/Tokyo")
        .args(["ask", "Q"])
        .assert()
        .success();
    let bodies = emu.chat_bodies();
    assert_eq!(
        bodies[0]["sessionSettings"],
        json!({"externalId": "ci-bot", "timezone": "Europe/Berlin", "allowChatWorkspaceAuthoring": false})
    );
    assert_eq!(
        bodies[1]["sessionSettings"],
        json!({"externalId": "ci-bot", "timezone": "Asia/Tokyo"})
    );
}

#[test]
fn an_internal_user_is_named_by_username_not_only_by_email() {
    let emu = Emulator::start();
    emu.analyst()
        .args(["ask", "Q", "--internal-id", "admin"])
        .assert()
        .success();
    assert_eq!(emu.chat_bodies()[0]["sessionSettings"], json!({"internalId": "admin"}));
}

#[test]
fn branch_flags_map_to_active_branch_name_and_is_default_branch() {
    let emu = Emulator::start();
    emu.analyst()
        .args(["ask", "Q", "--branch", "dev-anna"])
        .assert()
        .success();
    emu.analyst()
        .args(["ask", "Q", "--branch", "main", "--default-branch"])
        .assert()
        .success();
    emu.analyst().args(["ask", "Q"]).assert().success();
    let bodies = emu.chat_bodies();
    assert_eq!(
        (&bodies[0]["activeBranchName"], &bodies[0]["isDefaultBranch"]),
        (&json!("dev-anna"), &json!(false))
    );
    assert_eq!(
        (&bodies[1]["activeBranchName"], &bodies[1]["isDefaultBranch"]),
        (&json!("main"), &json!(true))
    );
    assert!(bodies[2].get("activeBranchName").is_none() && bodies[2].get("isDefaultBranch").is_none());
}

#[test]
fn a_question_dash_is_read_from_stdin() {
    let emu = Emulator::start();
    emu.analyst()
        .args(["ask", "-"])
        .write_stdin("What is our churn?\n")
        .assert()
        .success();
    assert_eq!(emu.chat_bodies()[0]["input"], "What is our churn?");
}

#[test]
fn with_no_question_a_piped_stdin_is_the_question_and_an_empty_one_asks_nothing() {
    let emu = Emulator::start();
    emu.analyst()
        .args(["ask"])
        .write_stdin("What is our churn?\n")
        .assert()
        .success();
    assert_eq!(emu.chat_bodies()[0]["input"], "What is our churn?");
    // An empty pipe asks nothing: exit 2, and nothing is sent.
    let output = emu.analyst().args(["ask"]).write_stdin("").output().unwrap();
    exits(&output, 2);
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("ask what? give a QUESTION (or pipe it in"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(emu.chat_bodies().len(), 1);
}

#[test]
fn raw_mode_is_byte_exact_even_when_chunks_split_characters() {
    let emu = Emulator::start();
    let stream = ChatStream::new("c-raw", Family::Semantic)
        .user("Ümsatz? 😀")
        .final_answer(&["Größer: ", "€ 1,2 Mio 😀"])
        .usage();
    emu.script(Reply::Stream {
        body: stream.bytes(),
        chunking: Chunking::Sizes(vec![1, 2, 3, 5, 7]),
        delay: std::time::Duration::ZERO,
        ending: Ending::Clean,
    });
    let output = emu.analyst().args(["ask", "-o", "raw", "Q"]).output().unwrap();
    assert!(output.status.success());
    assert_eq!(output.stdout, stream.bytes());
}

#[test]
fn raw_and_events_forward_each_line_while_the_stream_is_still_open() {
    for mode in ["raw", "events"] {
        forwards_each_line_while_the_stream_is_open(mode);
    }
}

fn forwards_each_line_while_the_stream_is_open(mode: &str) {
    use std::io::BufRead;
    let emu = Emulator::start();
    let stream = ChatStream::new("c-live", Family::Semantic)
        .user("Q")
        .final_answer(&["done"])
        .usage();
    let gate = Gate::default();
    emu.script(Reply::Held {
        body: stream.bytes(),
        after_lines: 2,
        gate: gate.clone(),
    });
    let mut child = emu
        .command()
        .args(["ask", "-o", mode, "Q"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let (sent, received) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut first_two = String::new();
        stdout.read_line(&mut first_two).unwrap();
        stdout.read_line(&mut first_two).unwrap();
        sent.send(first_two).unwrap();
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut rest).unwrap();
        rest
    });
    // The emulator holds the rest of the stream until these two lines are read:
    // buffered output would never get here.
    let first_two = received
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("lines forwarded while the stream is open");
    let expected = stream.bytes();
    assert_eq!(first_two.as_bytes(), &expected[..first_two.len()]);
    assert_eq!(first_two.lines().count(), 2);
    gate.open();
    let rest = reader.join().unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!([first_two.as_bytes(), &rest].concat(), expected);
}

#[test]
fn events_mode_parses_tool_input_and_result() {
    let emu = Emulator::start();
    let output = emu
        .analyst()
        .args(["ask", "-o", "events", "Revenue?"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let events: Vec<Value> = output
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(events[0]["id"], "__cutoff__");
    let sql_result = events
        .iter()
        .find(|e| e["toolCall"]["name"] == "semanticSqlApi" && e["isInProcess"] == false)
        .expect("the SQL result event");
    assert_eq!(sql_result["toolCall"]["input"]["queryTitle"], "Revenue by month");
    assert_eq!(sql_result["toolCall"]["result"]["data"][0][0], "2024-01");
    assert_eq!(sql_result["toolCall"]["result"]["totalRows"], 12);
    assert_eq!(events.last().unwrap()["id"], "__usage__");
}

#[test]
fn json_mode_writes_the_envelope_with_typed_rows() {
    let emu = Emulator::start();
    emu.agent(|a| {
        a.rows = 250;
        a.returned = 100;
    });
    let output = emu
        .analyst()
        .args(["ask", "-o", "json", "--allow-partial", "Revenue?"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let doc = stdout_json(&output);
    assert_eq!(doc["chatId"], "chat-0001");
    assert_eq!(doc["status"], "completed");
    assert_eq!(
        doc["answer"],
        "Answer 1: revenue rose every month; December was the best month (€2.4M)."
    );
    let query = &doc["queries"][0];
    assert_eq!(query["tool"], "semanticSqlApi");
    assert_eq!(query["title"], "Revenue by month");
    assert!(query["sql"].as_str().unwrap().starts_with("SELECT orders_view.month"));
    assert_eq!(
        query["columns"][1],
        json!({"name": "orders_view.revenue", "type": "Double"})
    );
    assert_eq!(
        query["rows"][0],
        json!({"orders_view.month": "2024-01", "orders_view.revenue": 1500000.5, "orders_view.count": 900})
    );
    assert_eq!(
        (
            query["rowCount"].as_u64(),
            query["totalRows"].as_u64(),
            &query["truncated"]
        ),
        (Some(100), Some(250), &json!(true))
    );
    assert_eq!(query["vegaSpec"]["mark"], "bar");
    assert_eq!(query["error"], Value::Null);
    let tools: Vec<&str> = doc["toolCalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["semanticMeta", "semanticSqlApi"]);
    assert_eq!(doc["toolCalls"][0]["input"], json!({"searchQuery": "Revenue?"}));
    assert_eq!(doc["errors"], json!([]));
    assert_eq!(doc["usage"]["totalTokens"], 1280);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0001
analyst: warning: SQL result 1 "Revenue by month" is truncated: 100 of 250 rows in the stream; --all-rows fetches every row (or pipe -o raw into 'analyst rows --query 1')

"#]],
    );
}

#[test]
fn csv_mode_prints_rfc4180_with_a_header_row() {
    let emu = Emulator::start();
    emu.agent(|a| a.rows = 3);
    emu.analyst()
        .args(["ask", "-o", "csv", "Revenue?"])
        .assert()
        .success()
        .stdout("orders_view.month,orders_view.revenue,orders_view.count\r\n2024-01,1500000.5,900\r\n2024-02,1537813.5,901\r\n2024-03,1575626.5,902\r\n");
}

#[test]
fn csv_quotes_fields_with_commas_quotes_and_newlines() {
    let emu = Emulator::start();
    let mut call = SqlCall::revenue_by_month(1);
    call.rows = vec![vec![json!("a,b"), json!("say \"hi\""), json!("line1\nline2")]];
    emu.script(Reply::stream(
        &ChatStream::new("c1", Family::Semantic)
            .user("Q")
            .sql_call(&call)
            .final_answer(&["ok"]),
    ));
    emu.analyst().args(["ask", "-o", "csv", "Q"]).assert().success().stdout(
        "orders_view.month,orders_view.revenue,orders_view.count\r\n\"a,b\",\"say \"\"hi\"\"\",\"line1\nline2\"\r\n",
    );
}

#[test]
fn query_picks_a_result_by_index_and_last_skips_failed_queries() {
    let emu = Emulator::start();
    let mut first = SqlCall::revenue_by_month(1);
    first.columns[0].0 = "first.month".into();
    let second = SqlCall::revenue_by_month(2);
    let stream = ChatStream::new("c1", Family::Semantic)
        .user("Q")
        .sql_call(&first)
        .sql_call(&second)
        .failed_sql_call("SELECT x", "Error: no such member")
        .final_answer(&["ok"]);
    for args in [vec!["--query", "1"], vec![], vec!["--query", "3"], vec!["--query", "4"]] {
        emu.script(Reply::stream(&stream));
        let output = emu
            .analyst()
            .args(["ask", "-o", "csv", "Q"])
            .args(&args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        match args.get(1).copied() {
            Some("1") => assert!(stdout.starts_with("first.month,"), "{stdout}"),
            None => assert_eq!(stdout.lines().count(), 3, "last = the second query: {stdout}"),
            Some("3") => {
                exits(&output, 8);
                assert!(stderr.contains("SQL query 3 failed: Error: no such member"), "{stderr}");
            }
            Some(_) => {
                exits(&output, 11);
                assert!(stderr.contains("only 3 SQL result"), "{stderr}");
            }
        }
    }
}

#[test]
fn vega_mode_merges_typed_rows_and_escapes_dotted_fields() {
    let emu = Emulator::start();
    emu.agent(|a| a.rows = 2);
    let output = emu.analyst().args(["ask", "-o", "vega", "Revenue?"]).output().unwrap();
    assert!(output.status.success());
    let spec = stdout_json(&output);
    assert_eq!(spec["$schema"], "https://vega.github.io/schema/vega-lite/v5.json");
    assert_eq!(spec["encoding"]["x"]["field"], "orders_view\\.month");
    assert_eq!(spec["encoding"]["y"]["field"], "orders_view\\.revenue");
    assert_eq!(
        spec["data"]["values"][1],
        json!({"orders_view.month": "2024-02", "orders_view.revenue": 1537813.5, "orders_view.count": 901})
    );
}

#[test]
fn cube_names_object_rows_and_the_query_key_give_the_same_outputs() {
    let emu = Emulator::start();
    let modes = ["csv", "vega", "json", "answer"];
    let run = |emu: &Emulator, mode: &str| {
        emu.analyst()
            .args(["ask", "-o", mode, "Revenue?"])
            .output()
            .unwrap()
            .stdout
    };
    let reference: Vec<Vec<u8>> = modes.iter().map(|m| run(&emu, m)).collect();
    let other = Emulator::start();
    other.agent(|a| {
        a.family = Family::Cube;
        a.shape = Shape::Objects;
        a.query_key = true;
    });
    for (mode, expected) in modes.iter().zip(&reference) {
        let mut got = run(&other, mode);
        let mut expected = expected.clone();
        if *mode == "json" {
            let normalise = |bytes: &[u8]| {
                let mut doc: Value = serde_json::from_slice(bytes).unwrap();
                doc["toolCalls"] = Value::Null;
                doc["messageId"] = Value::Null;
                doc["queries"][0]["tool"] = Value::Null;
                doc["queries"][0]["columns"] = Value::Null;
                serde_json::to_vec(&doc).unwrap()
            };
            got = normalise(&got);
            expected = normalise(&expected);
        }
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected),
            "mode {mode}"
        );
    }
}

#[test]
fn without_a_final_node_the_answer_falls_back_with_a_warning() {
    let emu = Emulator::start();
    emu.agent(|a| a.final_node = false);
    emu.analyst()
        .args(["ask", "Q"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("Answer 1:"))
        .stderr(predicate::str::contains("no final answer in the stream"));
    let output = emu.analyst().args(["ask", "-o", "json", "Q"]).output().unwrap();
    assert_eq!(stdout_json(&output)["status"], "incomplete");
}

#[test]
fn follow_ups_continue_the_thread_and_no_question_prints_its_state() {
    let emu = Emulator::start();
    emu.analyst().args(["ask", "Revenue by month?"]).assert().success();
    emu.analyst()
        .args(["ask", "--chat-id", "chat-0001", "And by quarter?"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("Answer 2:"));
    assert_eq!(emu.chat_bodies()[1]["chatId"], "chat-0001");
    emu.analyst()
        .args(["ask", "--chat-id", "chat-0001"])
        .assert()
        .success()
        .stdout(
            "user: Revenue by month?\n\nassistant: Answer 1: revenue rose every month; December was the best month (€2.4M).\n\n\
             user: And by quarter?\n\nassistant: Answer 2: revenue rose every month; December was the best month (€2.4M).\n",
        );
    assert!(emu.chat_bodies()[2].get("input").is_none());
    let output = emu
        .analyst()
        .args(["ask", "--chat-id", "chat-0001", "-o", "json"])
        .output()
        .unwrap();
    let doc = stdout_json(&output);
    assert_eq!(doc["chatId"], "chat-0001");
    assert_eq!(
        doc["messages"][0],
        json!({"role": "user", "content": "Revenue by month?"})
    );
    assert_eq!(doc["messages"].as_array().unwrap().len(), 4);
}

#[test]
fn tee_saves_the_raw_stream_byte_for_byte() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let tee = dir.join("saved.ndjson");
    emu.analyst()
        .args(["ask", "-o", "csv", "Q", "--tee"])
        .arg(&tee)
        .assert()
        .success();
    let saved = std::fs::read(&tee).unwrap();
    // The saved stream replays offline to the same answer.
    emu.script(Reply::Stream {
        body: saved.clone(),
        chunking: Chunking::Lines,
        delay: std::time::Duration::ZERO,
        ending: Ending::Clean,
    });
    let live = emu.analyst().args(["ask", "-o", "raw", "Q"]).output().unwrap().stdout;
    assert_eq!(saved, live);
    analyst()
        .args(["ask", "--replay"])
        .arg(&tee)
        .assert()
        .success()
        .stdout(predicate::str::starts_with("Answer 1:"));
}

#[test]
fn replay_works_offline_in_every_mode_without_key_or_url() {
    let sample = fixture("revenue-by-month.ndjson");
    analyst()
        .args(["ask", "--replay", &sample])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("Revenue grew through 2024"));
    let csv = analyst()
        .args(["ask", "--replay", &sample, "-o", "csv"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&csv.stdout).lines().count(), 13);
    let raw = analyst()
        .args(["ask", "--replay", &sample, "-o", "raw"])
        .output()
        .unwrap();
    assert_eq!(raw.stdout, std::fs::read(&sample).unwrap());
    let json = analyst()
        .args(["ask", "--replay", "-", "-o", "json"])
        .pipe_stdin(&sample)
        .unwrap()
        .output()
        .unwrap();
    assert_eq!(
        stdout_json(&json)["queries"][0]["rows"][11]["orders_view.total_revenue"],
        json!(2890440.75)
    );
    for mode in ["events", "vega"] {
        analyst()
            .args(["ask", "--replay", &sample, "-o", mode])
            .assert()
            .success();
    }
}

#[test]
fn quiet_silences_notes_and_warnings() {
    let emu = Emulator::start();
    emu.agent(|a| {
        a.final_node = false;
        a.rows = 200;
        a.returned = 100;
    });
    emu.analyst().args(["ask", "-q", "Q"]).assert().success().stderr("");
}

#[test]
fn a_truncated_result_is_exit_10_unless_all_rows_or_allow_partial() {
    let emu = Emulator::start();
    emu.agent(|a| {
        a.rows = 250;
        a.returned = 100;
    });
    for mode in ["csv", "table", "json", "vega", "svg", "png", "html"] {
        let output = emu
            .analyst()
            .args(["ask", "-q", "-o", mode, "Revenue?"])
            .output()
            .unwrap();
        exits(&output, 10);
        // A mode whose output is the rows writes nothing of a part; the
        // JSON document says `truncated` itself.
        assert_eq!(output.stdout.is_empty(), mode != "json", "{mode}: what is written");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(
                "is truncated: 100 of 250 rows; --all-rows fetches every row, --allow-partial accepts the part"
            ),
            "{mode}: not hidden by -q: {stderr}"
        );
        let loud = emu.analyst().args(["ask", "-o", mode, "Revenue?"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&loud.stderr);
        assert_eq!(
            stderr.matches("truncated").count(),
            1,
            "{mode}: said once, by the error, not also by a warning: {stderr}"
        );
        let partial = emu
            .analyst()
            .args(["ask", "-o", mode, "--allow-partial", "Revenue?"])
            .output()
            .unwrap();
        exits(&partial, 0);
        assert!(!partial.stdout.is_empty(), "{mode}: the part, asked for");
        let stderr = String::from_utf8_lossy(&partial.stderr);
        assert_eq!(stderr.matches("truncated").count(), 1, "{mode}: one note: {stderr}");
    }
}

#[test]
fn the_truncation_note_of_a_filtered_stream_names_no_way_to_read_it_back() {
    let emu = Emulator::start();
    emu.agent(|a| {
        a.rows = 250;
        a.returned = 100;
    });
    let note = |args: &[&str]| {
        let output = emu.analyst().args(args).output().unwrap();
        exits(&output, 0);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        stderr
            .lines()
            .find(|line| line.contains("is truncated"))
            .unwrap_or_else(|| panic!("{stderr}"))
            .to_string()
    };
    // The stream as written: 'analyst rows' reads it back.
    let plain = note(&["ask", "-o", "events", "Revenue?"]);
    assert!(
        plain.ends_with("'analyst rows --query 1' reads this output and fetches every row"),
        "{plain}"
    );
    // Filtered by --jq it cannot be: the note says how else.
    let filtered = note(&["ask", "-o", "events", "--jq", ".id", "Revenue?"]);
    assert!(
        filtered.ends_with("-o csv --all-rows --query 1 gives every row"),
        "{filtered}"
    );
}

#[test]
fn all_rows_checks_the_data_credentials_before_asking_and_drops_the_hint() {
    let emu = Emulator::start();
    emu.analyst()
        .env_remove("ANALYST_DATA_URL")
        .args(["ask", "-o", "csv", "--all-rows", "Revenue?"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("ANALYST_DATA_URL"));
    emu.analyst()
        .env("ANALYST_DATA_URL", emu.data_url())
        .env_remove("ANALYST_DATA_TOKEN")
        .env_remove("ANALYST_DATA_SECRET")
        .args(["ask", "-o", "csv", "--all-rows", "Revenue?"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("ANALYST_DATA_TOKEN"));
    assert!(emu.requests().is_empty(), "no question was sent");
    emu.agent(|a| a.returned = 5);
    emu.analyst()
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .args(["ask", "-o", "json", "--all-rows", "Revenue?"])
        .assert()
        .stderr(predicate::str::contains("--all-rows fetches every row").not());
}

#[test]
fn a_turn_or_a_thread_read_is_decided_by_what_was_sent() {
    let emu = Emulator::start();
    // A turn's stream with no user echo and the thread's state at the end.
    let stream = ChatStream::new("c-t", Family::Cube)
        .assistant(&["Revenue rose."])
        .state("c-t", &[("user", "Revenue?"), ("assistant", "Revenue rose.")]);
    emu.script(Reply::stream(&stream));
    emu.analyst()
        .args(["ask", "Revenue?"])
        .assert()
        .success()
        .stdout("Revenue rose.\n");
    emu.script(Reply::stream(&stream));
    let doc = stdout_json(&emu.analyst().args(["ask", "-o", "json", "Revenue?"]).output().unwrap());
    assert_eq!(doc["answer"], "Revenue rose.");
    assert!(doc.get("messages").is_none(), "a turn's document: {doc}");

    // A thread read (no question) reports a pending suspension to resume.
    let read = [
        r#"{"id":"__cutoff__","role":"assistant","state":{"chatId":"c-t","isStreaming":false,"suspended":{"messageId":"1732512345678-message"}}}"#,
        r#"{"id":"__state__","role":"assistant","state":{"messages":[]}}"#,
    ]
    .join("\n")
        + "\n";
    emu.script(Reply::Stream {
        body: read.into_bytes(),
        chunking: Chunking::Lines,
        delay: std::time::Duration::ZERO,
        ending: Ending::Clean,
    });
    let doc = stdout_json(
        &emu.analyst()
            .args(["ask", "-o", "json", "--chat-id", "c-t"])
            .output()
            .unwrap(),
    );
    assert_eq!(
        doc,
        json!({"chatId": "c-t", "messages": [], "suspended": "1732512345678-message"})
    );
}

#[test]
fn every_question_has_a_message_id_and_resume_sends_the_suspended_one() {
    let emu = Emulator::start();
    let output = emu.analyst().args(["ask", "-o", "json", "Q"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let sent = emu.chat_bodies()[0]["messageId"].as_str().unwrap().to_string();
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0001

"#]],
    );
    assert_eq!(stdout_json(&output)["messageId"], sent.as_str());

    let stream = ChatStream::new("chat-0001", Family::Cube).assistant(&["The rest of the answer."]);
    emu.script(Reply::stream(&stream));
    emu.analyst()
        .args(["ask", "--chat-id", "chat-0001", "--resume", "1732512345678-message"])
        .assert()
        .success()
        .stdout("The rest of the answer.\n");
    let body = &emu.chat_bodies()[1];
    assert_eq!(
        (&body["chatId"], &body["messageId"], body.get("input")),
        (&json!("chat-0001"), &json!("1732512345678-message"), None)
    );
    emu.analyst()
        .args(["ask", "--chat-id", "chat-0001", "--resume", "yesterday"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a message id"));
    emu.analyst()
        .args(["ask", "--resume", "1732512345678-message"])
        .assert()
        .code(2);
    assert_eq!(emu.chat_bodies().len(), 2, "nothing sent for a bad --resume");
}
