//! `analyst abort`: the owner's sessionSettings authenticate the request to
//! the abort URL derived from the chat URL; 204 → 0, 403 → 4, 404 → 5,
//! 401 → 3; transient failures are retried, others are not.

use std::time::Duration;

use crate::support::*;
use predicates::prelude::*;
use serde_json::json;

/// An emulator with one finished chat, `chat-0001`, owned by `ci-bot`.
fn with_a_chat() -> Emulator {
    let emu = Emulator::start();
    emu.analyst().args(["ask", "Q"]).assert().success();
    emu
}

#[test]
fn the_owner_aborts_with_exit_0_and_a_note() {
    let emu = with_a_chat();
    emu.analyst()
        .args(["abort", "--chat-id", "chat-0001"])
        .assert()
        .success()
        .stdout("")
        .stderr("chat chat-0001 aborted\n");
    let request = &emu.requests_on(Route::Abort)[0];
    assert_eq!(
        request.path,
        format!("/api/v1/public/{ACCOUNT}/agents/{AGENT}/chat/abort")
    );
    assert_eq!(
        request.header("authorization"),
        Some(format!("Api-Key {API_KEY}").as_str())
    );
    assert_eq!(
        request.json(),
        json!({"chatId": "chat-0001", "sessionSettings": {"externalId": "ci-bot"}})
    );
}

#[test]
fn someone_elses_chat_is_forbidden_with_exit_4() {
    let emu = with_a_chat();
    let output = emu
        .analyst()
        .args(["abort", "--chat-id", "chat-0001", "--external-id", "mallory"])
        .output()
        .unwrap();
    exits(&output, 4);
    // One thing, said once: whose chat it is not, and what to give.
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "analyst: error: chat chat-0001 is not yours (403 Forbidden): give the identity that started it\n"
    );
}

#[test]
fn an_unknown_chat_exits_5_and_a_bad_key_exits_3() {
    let emu = with_a_chat();
    emu.analyst()
        .args(["abort", "--chat-id", "chat-9999"])
        .assert()
        .code(5)
        .stderr(predicate::str::contains("chat chat-9999 was not found"));
    emu.analyst()
        .env("ANALYST_API_KEY", "sk-wrong-key")
        .args(["abort", "--chat-id", "chat-0001"])
        .assert()
        .code(3);
}

#[test]
fn transient_failures_are_retried() {
    let emu = with_a_chat();
    emu.script_on(
        Route::Abort,
        Reply::status(503, "text/html", "<title>Service Unavailable</title>"),
    );
    emu.script_on(Route::Abort, Reply::Drop);
    emu.script_on(Route::Abort, Reply::Busy { retry_after: 1 });
    emu.analyst()
        .args(["abort", "--chat-id", "chat-0001"])
        .assert()
        .success()
        .stderr(predicate::str::contains("trying again"));
    emu.expect(Route::Abort, 4);
}

#[test]
fn retries_are_bounded_and_other_failures_are_not_retried() {
    let emu = with_a_chat();
    for _ in 0..4 {
        emu.script_on(Route::Abort, Reply::status(502, "text/plain", "bad gateway"));
    }
    emu.analyst().args(["abort", "--chat-id", "chat-0001"]).assert().code(6);
    assert_eq!(emu.requests_on(Route::Abort).len(), 4);
    emu.script_on(
        Route::Abort,
        Reply::status(500, "application/json", r#"{"error":"boom"}"#),
    );
    emu.analyst()
        .args(["abort", "--chat-id", "chat-0001"])
        .assert()
        .code(6)
        .stderr(predicate::str::contains("500 Internal Server Error: boom"));
    // A 500 is not retried: one request after the four 502s.
    emu.expect(Route::Abort, 5);
}

#[test]
fn the_timeout_bounds_the_retries() {
    let emu = with_a_chat();
    // One try only: waiting the 5 s the service asks for would overrun the
    // 2 s budget (a second try would get the emulator's 204 and exit 0).
    emu.script_on(Route::Abort, Reply::Busy { retry_after: 5 });
    emu.expect(Route::Abort, 1);
    let started = std::time::Instant::now();
    emu.analyst()
        .args(["abort", "--chat-id", "chat-0001", "--timeout", "2s"])
        .assert()
        .code(6);
    assert!(started.elapsed() < Duration::from_secs(4), "gave up within the budget");
}

#[test]
fn usage_errors_send_nothing() {
    let emu = with_a_chat();
    let requests = emu.requests().len();
    emu.analyst().args(["abort"]).assert().code(2);
    emu.analyst().args(["abort", "--chat-id", " "]).assert().code(2);
    emu.analyst()
        .args([
            "abort",
            "--chat-id",
            "c",
            "--chat-url",
            "https://ai.example.dev/api/v1/public/a/agents/b/chat",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is not a Chat API URL: a Chat API URL ends in /chat/stream-chat-state",
        ));
    emu.analyst()
        .args([
            "abort",
            "--chat-id",
            "c",
            "--internal-id",
            "ana@acme.example",
            "--group",
            "g",
        ])
        .assert()
        .code(2);
    assert_eq!(emu.requests().len(), requests);
}
