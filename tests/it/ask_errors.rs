//! `analyst ask`: exit codes and error messages for every way a request or a
//! stream can fail, usage errors refused before anything is sent, and
//! secrets that never show.

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use crate::support::*;
use predicates::prelude::*;
use serde_json::{json, Value};

fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `command`, asserts its exit code and that its one error line
/// contains `message`; returns the output for further checks.
fn fails(command: &mut assert_cmd::Command, code: i32, message: &str) -> std::process::Output {
    let output = command.output().unwrap();
    exits(&output, code);
    let line = one_error_line(&output);
    assert!(line.contains(message), "expected {message:?} in: {line}");
    output
}

#[test]
fn status_400_exits_2_with_the_service_message() {
    let emu = Emulator::start();
    let output = emu
        .analyst()
        .args(["ask", "Q", "--internal-id", "nobody@acme.example"])
        .output()
        .unwrap();
    exits(&output, 2);
    let line = one_error_line(&output);
    assert_whole(line.to_string(), str!["analyst: error: the service answered 400 Bad Request: Internal user nobody@acme.example does not exist; the service refused the request"]);
}

#[test]
fn status_401_exits_3_and_never_shows_the_key() {
    let emu = Emulator::start();
    let wrong = "sk-wrong-key-0000";
    let output = emu
        .analyst()
        .env("ANALYST_API_KEY", wrong)
        .args(["ask", "-v", "Q"])
        .output()
        .unwrap();
    exits(&output, 3);
    let line = one_error_line(&output);
    assert_whole(line.to_string(), str!["analyst: error: the service answered 401 Unauthorized: Invalid API key; check the API key (from ANALYST_API_KEY)"]);
    let stderr = stderr_of(&output);
    assert!(!stderr.contains(wrong), "the key leaked: {stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
> POST http://127.0.0.1:[..]/api/v1/public/acme/agents/agent-7/chat/stream-chat-state
> authorization: Api-Key ***
> content-type: application/json
> accept: application/x-ndjson, application/json
> {"input":"Q","messageId":"[..]-message","sessionSettings":{"externalId":"ci-bot"}}
< HTTP/1.1 401 Unauthorized
< content-type: application/json
analyst: error: the service answered 401 Unauthorized: Invalid API key; check the API key (from ANALYST_API_KEY)

"#]],
    );
    // Refused, the question was never a turn: no `message:` note, only
    // the error.
    let output = emu
        .analyst()
        .env("ANALYST_API_KEY", wrong)
        .args(["ask", "Q"])
        .output()
        .unwrap();
    assert_eq!(stderr_of(&output).lines().count(), 1, "{}", stderr_of(&output));
}

#[test]
fn status_404_exits_5_for_an_unknown_agent_or_chat() {
    let emu = Emulator::start();
    let bad_agent = emu.chat_url().replace("agent-7", "agent-9");
    let output = emu
        .analyst()
        .args(["ask", "Q", "--chat-url", &bad_agent])
        .output()
        .unwrap();
    exits(&output, 5);
    assert!(one_error_line(&output).contains("404 Not Found: Agent not found; check --chat-url"));
    fails(
        emu.analyst().args(["ask", "Q", "--chat-id", "no-such-chat"]),
        5,
        "Chat not found",
    );
}

#[test]
fn server_errors_exit_6_and_html_bodies_are_summarised() {
    let emu = Emulator::start();
    let page = format!(
        "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>{}</body></html>",
        "<p>upstream failed</p>".repeat(500)
    );
    emu.script(Reply::status(502, "text/html", &page));
    let output = emu.analyst().args(["ask", "--retries", "0", "Q"]).output().unwrap();
    exits(&output, 6);
    let line = one_error_line(&output);
    assert_whole(line.to_string(), str!["analyst: error: the service answered 502 Bad Gateway: HTML page: 502 Bad Gateway; the service failed; try again later"]);
    assert!(line.len() < 300, "the page is not dumped: {line}");
    for code in [500, 503, 504, 429] {
        emu.script(Reply::status(code, "application/json", r#"{"error":"boom"}"#));
        let output = emu.analyst().args(["ask", "--retries", "0", "Q"]).output().unwrap();
        exits(&output, 6);
        assert!(one_error_line(&output).contains(&format!("answered {code}")));
    }
}

#[test]
fn other_client_errors_exit_2_and_redirects_are_not_followed() {
    let emu = Emulator::start();
    emu.script(Reply::status(422, "application/json", r#"{"message":"unprocessable"}"#));
    let output = emu.analyst().args(["ask", "Q"]).output().unwrap();
    exits(&output, 2);
    emu.script(Reply::status(301, "text/plain", ""));
    let output = emu.analyst().args(["ask", "Q"]).output().unwrap();
    exits(&output, 6);
    assert_eq!(emu.requests().len(), 2, "no request was re-sent");
}

#[test]
fn a_refused_connection_exits_6() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/api/v1/public/a/agents/b/chat/stream-chat-state");
    fails(
        analyst()
            .env("ANALYST_API_KEY", API_KEY)
            .args(["ask", "Q", "--external-id", "x", "--chat-url", &url]),
        6,
        "cannot connect to 127.0.0.1",
    );
}

#[test]
fn a_tls_failure_exits_6() {
    let emu = Emulator::start();
    let url = emu.chat_url().replace("http://", "https://");
    let output = emu.analyst().args(["ask", "Q", "--chat-url", &url]).output().unwrap();
    exits(&output, 6);
}

#[test]
fn a_malformed_line_exits_7_naming_its_line_number() {
    let emu = Emulator::start();
    let stream = ChatStream::new("c1", Family::Semantic)
        .user("Q")
        .raw_line("{\"id\": oops}")
        .final_answer(&["never"]);
    emu.script(Reply::stream(&stream));
    let output = fails(emu.analyst().args(["ask", "Q"]), 7, "line 3 is not valid JSON");
    assert!(output.stdout.is_empty());
}

#[test]
fn an_in_stream_error_line_exits_7_with_the_service_message() {
    let emu = Emulator::start();
    let output = fails(
        emu.analyst().args(["ask", "Q", "--branch", "broken"]),
        7,
        "the stream reported an error: BadRequestError: Bad branch",
    );
    assert!(stderr_of(&output).contains("warning: tool semanticSqlApi failed: Error: BadRequestError: Bad branch"));
}

#[test]
fn an_in_stream_error_about_llm_tokens_is_no_credential_refused() {
    let emu = Emulator::start();
    emu.script(Reply::stream(
        &ChatStream::new("c-quota", Family::Cube)
            .user("Q")
            .error_line("QuotaError: the daily token budget is spent")
            .usage(),
    ));
    let output = fails(emu.analyst().args(["ask", "Q"]), 7, "the daily token budget is spent");
    assert!(
        !one_error_line(&output).contains("API key"),
        "{}",
        one_error_line(&output)
    );
    // A refused credential in the stream is exit 3, and says what to check.
    emu.script(Reply::stream(
        &ChatStream::new("c-auth", Family::Cube)
            .user("Q")
            .error_line("AuthenticationError: the Cube token expired")
            .usage(),
    ));
    let output = fails(emu.analyst().args(["ask", "Q"]), 3, "the Cube token expired");
    assert!(one_error_line(&output).contains("check the API key or Cube token"));
}

#[test]
fn a_suspended_chat_exits_7_and_says_how_to_resume() {
    let emu = Emulator::start();
    emu.script(Reply::stream(
        &ChatStream::new("c-susp", Family::Cube)
            .user("Q")
            .assistant(&["Part"])
            .suspended("msg-9"),
    ));
    let output = emu.analyst().args(["ask", "--retries", "0", "Q"]).output().unwrap();
    exits(&output, 7);
    let line = one_error_line(&output);
    assert_whole(line.to_string(), str!["analyst: error: the chat was suspended by the service: The server restarted while answering; the turn can be resumed for 24 hours: analyst ask --chat-id c-susp --resume msg-9"]);
}

#[test]
fn a_stream_aborted_by_the_service_exits_7_with_status_aborted() {
    let emu = Emulator::start();
    emu.script(Reply::stream(
        &ChatStream::new("c-ab", Family::Semantic).user("Q").aborted(),
    ));
    let output = emu.analyst().args(["ask", "-o", "json", "Q"]).output().unwrap();
    exits(&output, 7);
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["status"], "aborted");
}

#[test]
fn a_dropped_connection_is_a_cut_stream_exit_7_and_raw_keeps_what_arrived() {
    let emu = Emulator::start();
    let stream = ChatStream::new("c-cut", Family::Semantic)
        .user("Q")
        .meta_call("q")
        .final_answer(&["The answer"])
        .usage();
    let body = stream.bytes();
    let cut = body.len() / 2;
    for mode in ["raw", "answer"] {
        emu.script(Reply::Stream {
            body: body.clone(),
            chunking: Chunking::Sizes(vec![13]),
            delay: Duration::ZERO,
            ending: Ending::DropAfter(cut),
        });
        let output = emu
            .analyst()
            .args(["ask", "--retries", "0", "-o", mode, "Q"])
            .output()
            .unwrap();
        exits(&output, 7);
        let line = one_error_line(&output);
        assert!(line.contains("the stream was cut"), "{line}");
        assert!(line.contains("analyst ask --chat-id c-cut"), "{line}");
        if mode == "raw" {
            assert_eq!(output.stdout, &body[..cut]);
        } else {
            assert!(output.stdout.is_empty());
        }
    }
}

#[test]
fn a_replayed_file_cut_mid_line_exits_7() {
    let dir = Scratch::new();
    let path = dir.join("cut.ndjson");
    let body = ChatStream::new("c", Family::Semantic)
        .user("Q")
        .final_answer(&["Hello"])
        .bytes();
    std::fs::write(&path, &body[..body.len() - 5]).unwrap();
    fails(
        analyst().args(["ask", "--replay"]).arg(&path),
        7,
        "cut in the middle of line 3",
    );
}

#[test]
fn a_stream_without_any_answer_exits_7() {
    let emu = Emulator::start();
    emu.script(Reply::stream(
        &ChatStream::new("c", Family::Semantic).user("Q").meta_call("q").usage(),
    ));
    fails(emu.analyst().args(["ask", "Q"]), 7, "ended without an answer");
}

#[test]
fn tool_errors_warn_and_exit_8_only_with_fail_on_tool_error() {
    let emu = Emulator::start();
    let stream = ChatStream::new("c", Family::Semantic)
        .user("Q")
        .failed_sql_call("SELECT x", "Error: unknown member x")
        .final_answer(&["Sorry."]);
    emu.script(Reply::stream(&stream));
    emu.analyst()
        .args(["ask", "Q"])
        .assert()
        .success()
        .stdout("Sorry.\n")
        .stderr(predicate::str::contains(
            "warning: tool semanticSqlApi failed: Error: unknown member x",
        ));
    emu.script(Reply::stream(&stream));
    let output = emu
        .analyst()
        .args(["ask", "Q", "--fail-on-tool-error"])
        .output()
        .unwrap();
    exits(&output, 8);
    assert_eq!(output.stdout, b"Sorry.\n");
}

#[test]
fn json_is_written_even_when_the_request_or_stream_fails() {
    let emu = Emulator::start();
    let output = emu
        .analyst()
        .env("ANALYST_API_KEY", "sk-bad-but-long")
        .args(["ask", "-o", "json", "Q"])
        .output()
        .unwrap();
    exits(&output, 3);
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["status"], "error");
    assert_eq!(doc["answer"], Value::Null);
    assert_eq!(doc["errors"], json!([]), "the service sent no in-stream error");
    assert_eq!(doc["failure"]["code"], 3);
    assert!(doc["failure"]["message"].as_str().unwrap().contains("401"));

    let output = emu
        .analyst()
        .args(["ask", "-o", "json", "Q", "--branch", "broken"])
        .output()
        .unwrap();
    exits(&output, 7);
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["status"], "error");
    assert_eq!(doc["errors"], json!(["BadRequestError: Bad branch"]));
    assert_eq!(doc["failure"]["code"], 7);
    assert_eq!(doc["queries"][0]["error"], "Error: BadRequestError: Bad branch");
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    let emu = Emulator::start();
    let mut stream = ChatStream::new("c-pipe", Family::Semantic).user("Q");
    for _ in 0..400 {
        stream = stream.assistant(&["a fairly long piece of text to fill the pipe quickly "; 20]);
    }
    emu.script(Reply::Stream {
        body: stream.final_answer(&["done"]).bytes(),
        chunking: Chunking::Lines,
        delay: Duration::from_micros(200),
        ending: Ending::Clean,
    });
    let mut child = emu
        .command()
        .args(["ask", "-o", "raw", "Q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    exits(&output, 0);
    assert!(!stderr_of(&output).contains("error"), "{}", stderr_of(&output));
}

#[test]
fn a_missing_key_is_a_usage_error_naming_analyst_api_key_and_nothing_is_sent() {
    let emu = Emulator::start();
    fails(
        emu.analyst().env_remove("ANALYST_API_KEY").args(["ask", "Q"]),
        2,
        "ANALYST_API_KEY",
    );
    assert!(emu.requests().is_empty());
}

#[test]
fn the_key_can_come_from_a_file_or_stdin() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let file = dir.join("key");
    std::fs::write(&file, format!("{API_KEY}\n")).unwrap();
    emu.analyst()
        .env_remove("ANALYST_API_KEY")
        .args(["ask", "Q", "--api-key-file"])
        .arg(&file)
        .assert()
        .success();
    emu.analyst()
        .env_remove("ANALYST_API_KEY")
        .args(["ask", "Q", "--api-key-file", "-"])
        .write_stdin(API_KEY)
        .assert()
        .success();
    // A pipe (`ANALYST_API_KEY_FILE=<(pass show cube)`) is read once, by
    // the command: its one writer writes the key and goes.
    let pipe = dir.join("key-pipe");
    assert!(std::process::Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .unwrap()
        .success());
    std::thread::spawn({
        let pipe = pipe.clone();
        move || std::fs::write(pipe, format!("{API_KEY}\n"))
    });
    emu.analyst()
        .env_remove("ANALYST_API_KEY")
        .env("ANALYST_API_KEY_FILE", &pipe)
        .args(["ask", "Q"])
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .success();
    let output = emu
        .analyst()
        .args(["ask", "-", "--api-key-file", "-"])
        .write_stdin("x")
        .output()
        .unwrap();
    exits(&output, 2);
    fails(
        emu.analyst().args(["ask", "Q", "--api-key-file", "/no/such/file"]),
        2,
        "cannot read the API key file /no/such/file",
    );
}

#[test]
fn plain_http_to_a_remote_host_is_refused() {
    fails(
        analyst().env("ANALYST_API_KEY", API_KEY).args([
            "ask",
            "Q",
            "--external-id",
            "x",
            "--chat-url",
            "http://ai.example.com/api/v1/public/a/agents/b/chat/stream-chat-state",
        ]),
        2,
        "refusing to send the API key over plain http:// to ai.example.com",
    );
}

#[test]
fn identity_rules_are_checked_before_anything_is_sent() {
    let emu = Emulator::start();
    let cases: [(&[&str], &str); 8] = [
        (
            &["--internal-id", "ana@acme.example", "--group", "g"],
            "--group cannot be used with --internal-id",
        ),
        (
            &[
                "--internal-id",
                "ana@acme.example",
                "--attr",
                "a=b",
                "--security-context",
                "{}",
            ],
            "--attr, --security-context cannot be used with --internal-id",
        ),
        (&["--external-id", "Ana Smith"], "contains spaces"),
        (&["--external-id", "AnaSmith"], "has uppercase letters"),
        (&["--internal-id", "two words"], "is not a username"),
        (&["--attr", "novalue"], "must be NAME=VALUE"),
        (&["--security-context", "[1,2]"], "must be a JSON object"),
        (&["--persistent", "--ttl", "1h"], "cannot be combined with --persistent"),
    ];
    for (args, message) in cases {
        let output = emu.analyst().args(["ask", "Q"]).args(args).output().unwrap();
        exits(&output, 2);
        let line = one_error_line(&output);
        assert!(line.contains(message), "{args:?}: {line}");
    }
    fails(
        emu.analyst().env_remove("ANALYST_EXTERNAL_ID").args(["ask", "Q"]),
        2,
        "--external-id",
    );
    fails(
        emu.analyst()
            .args(["ask", "Q", "--external-id", "a", "--internal-id", "ana@acme.example"]),
        2,
        "exactly one of --external-id and --internal-id",
    );
    assert!(emu.requests().is_empty(), "nothing was sent");
}

#[test]
fn bad_flags_exit_2() {
    analyst().args(["ask", "--output", "pdf", "Q"]).assert().code(2);
    analyst().args(["ask", "--query", "0", "Q"]).assert().code(2);
    analyst().args(["ask", "--default-branch", "Q"]).assert().code(2);
    analyst().args(["ask", "--replay", "x.ndjson", "Q"]).assert().code(2);
    analyst()
        .args(["ask", "--replay", "/no/such.ndjson"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read --replay file /no/such.ndjson"));
    analyst()
        .args(["ask", "--connect-timeout", "soon", "Q"])
        .assert()
        .code(2);
}

#[test]
fn verbose_logs_the_request_and_status_without_secrets() {
    let emu = Emulator::start();
    let output = emu.analyst().args(["ask", "-v", "Q"]).output().unwrap();
    assert!(output.status.success());
    let stderr = stderr_of(&output);
    assert_whole(
        stderr.to_string(),
        str![[r#"
> POST http://127.0.0.1:[..]/api/v1/public/acme/agents/agent-7/chat/stream-chat-state
> authorization: Api-Key ***
> content-type: application/json
> accept: application/x-ndjson, application/json
> {"input":"Q","messageId":"[..]-message","sessionSettings":{"externalId":"ci-bot"}}
< HTTP/1.1 200 OK
< content-type: application/json
message: [..]-message
chat: chat-0001

"#]],
    );
    assert!(!stderr.contains(API_KEY), "{stderr}");
}

#[test]
fn a_line_of_many_mebibytes_is_read_whole() {
    let emu = Emulator::start();
    let call = SqlCall::revenue_by_month(60_000);
    let stream = ChatStream::new("c-big", Family::Semantic)
        .user("Q")
        .sql_call(&call)
        .final_answer(&["ok"]);
    let body = stream.bytes();
    let longest = body.split(|&b| b == b'\n').map(<[u8]>::len).max().unwrap();
    assert!(longest > 4 << 20, "the test needs a line of several MiB, got {longest}");
    emu.script(Reply::Stream {
        body,
        chunking: Chunking::Sizes(vec![65_521]),
        delay: Duration::ZERO,
        ending: Ending::Clean,
    });
    let output = emu.analyst().args(["ask", "-o", "csv", "Q"]).output().unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout).lines().count(), 60_001);
}

#[test]
fn vega_without_a_chart_spec_exits_11_and_says_so() {
    let emu = Emulator::start();
    let mut call = SqlCall::revenue_by_month(2);
    call.vega_spec = None;
    emu.script(Reply::stream(
        &ChatStream::new("c", Family::Semantic)
            .user("Q")
            .sql_call(&call)
            .final_answer(&["ok"]),
    ));
    let output = fails(
        emu.analyst().args(["ask", "-o", "vega", "Q"]),
        11,
        "the last SQL result has no chart (no vegaSpec)",
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn with_stdout_closed_a_failed_chat_still_exits_with_its_code() {
    let emu = Emulator::start();
    let run = |args: &[&str]| {
        let mut child = emu
            .command()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        child.wait().unwrap().code()
    };
    assert_eq!(run(&["ask", "-o", "json", "Q", "--branch", "broken"]), Some(7));
    // `events` writes the first line at once: the reader left before the
    // failure came, and that is no failure.
    assert_eq!(run(&["ask", "-o", "events", "Q", "--branch", "broken"]), Some(0));
    assert_eq!(run(&["ask", "-o", "json", "Q"]), Some(0));
    assert_eq!(run(&["ask", "-o", "csv", "Q"]), Some(0));
}

#[test]
fn many_tool_errors_and_truncated_results_are_summed_up_after_five() {
    let emu = Emulator::start();
    let mut stream = ChatStream::new("c", Family::Semantic).user("Q");
    for i in 0..8 {
        stream = stream
            .failed_sql_call(&format!("SELECT x{i}"), &format!("Error: unknown member x{i}"))
            .sql_call(&SqlCall::revenue_by_month(30).truncated_to(20));
    }
    emu.script(Reply::stream(&stream.final_answer(&["Done."])));
    let output = emu.analyst().args(["ask", "Q"]).output().unwrap();
    assert!(output.status.success());
    let stderr = stderr_of(&output);
    let count = |needle: &str| stderr.lines().filter(|line| line.contains(needle)).count();
    assert_eq!(count("failed: Error: unknown member"), 5, "{stderr}");
    assert_eq!(count("is truncated: 20 of 30 rows"), 5, "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: c
analyst: warning: tool semanticSqlApi failed: Error: unknown member x0
analyst: warning: SQL result 2 "Revenue by month" is truncated: 20 of 30 rows in the stream; -o csv --all-rows --query 2 gives every row
analyst: warning: tool semanticSqlApi failed: Error: unknown member x1
analyst: warning: SQL result 4 "Revenue by month" is truncated: 20 of 30 rows in the stream; -o csv --all-rows --query 4 gives every row
analyst: warning: tool semanticSqlApi failed: Error: unknown member x2
analyst: warning: SQL result 6 "Revenue by month" is truncated: 20 of 30 rows in the stream; -o csv --all-rows --query 6 gives every row
analyst: warning: tool semanticSqlApi failed: Error: unknown member x3
analyst: warning: SQL result 8 "Revenue by month" is truncated: 20 of 30 rows in the stream; -o csv --all-rows --query 8 gives every row
analyst: warning: tool semanticSqlApi failed: Error: unknown member x4
analyst: warning: SQL result 10 "Revenue by month" is truncated: 20 of 30 rows in the stream; -o csv --all-rows --query 10 gives every row
analyst: warning: further tool failures are not listed; -o json has them all
analyst: warning: further truncated SQL results are not listed; -o json marks each one

"#]],
    );
    assert_eq!(
        stderr.lines().count(),
        2 + 5 + 5 + 2,
        "message:, chat:, 5 + 5 notes, 2 summing up: {stderr}"
    );
}

#[test]
fn an_in_band_json_rpc_error_shows_its_message_and_a_refused_credential_exits_3() {
    let emu = Emulator::start();
    let line = |message: &str| {
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": message}}).to_string()
    };
    // As the live service sends it: status 200, one line, no final newline.
    for (message, code) in [
        ("Agent does not have a deployment associated", 7),
        ("Authentication failed: invalid API key", 3),
    ] {
        emu.script(Reply::Stream {
            body: line(message).into_bytes(),
            chunking: Chunking::Lines,
            delay: std::time::Duration::ZERO,
            ending: Ending::Clean,
        });
        let output = emu.analyst().args(["ask", "-o", "json", "Q"]).output().unwrap();
        exits(&output, code);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("the stream reported an error: {message}")),
            "{stderr}"
        );
        assert!(!stderr.contains("jsonrpc"), "the raw object is not shown: {stderr}");
        let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(doc["errors"], json!([message]));
        assert_eq!(doc["failure"]["code"], code);
    }
}

#[test]
fn a_stream_that_ends_mid_message_is_cut_not_answered() {
    let emu = Emulator::start();
    let stream = ChatStream::new("c-cut", Family::Cube)
        .user("Q")
        .raw_line(r#"{"id":"m1","role":"assistant","content":"Revenue ro","isDelta":true,"isInProcess":true}"#);
    emu.script(Reply::stream(&stream));
    let output = fails(
        emu.analyst().args(["ask", "--retries", "0", "Q"]),
        7,
        "its last message never completed",
    );
    assert!(output.stdout.is_empty(), "no partial text as an answer");
    emu.script(Reply::stream(&stream));
    let output = emu
        .analyst()
        .args(["ask", "--retries", "0", "-o", "json", "Q"])
        .output()
        .unwrap();
    exits(&output, 7);
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((&doc["status"], &doc["answer"]), (&json!("cut"), &Value::Null));
}
