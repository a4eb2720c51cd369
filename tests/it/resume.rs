//! Reconnect and resume (`cli.md`, "The turn, as the service runs it
//! now"): a connection that drops, a stream that ends mid-message, and a
//! turn the service suspends are resumed with the same `chatId` and
//! `messageId`; the resumed turn reads the same as an uninterrupted one;
//! when `--retries` run out, exit 7 with the command that resumes by hand.

use crate::support::*;
use serde_json::Value;

/// `-o json` of `analyst ask ARGS`, its exit code and stderr.
fn ask_json(emu: &Emulator, args: &[&str]) -> (Option<i32>, Value, String) {
    let output = emu.analyst().args(["ask", "-o", "json"]).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let doc = serde_json::from_slice(&output.stdout).unwrap_or_else(|err| panic!("{err}: {stderr}"));
    (output.status.code(), doc, stderr)
}

/// The document without what differs from one chat to the next.
fn without_ids(mut doc: Value) -> Value {
    let object = doc.as_object_mut().unwrap();
    object.remove("chatId");
    object.remove("messageId");
    doc
}

/// The `-o json` document of the same question answered without a break.
fn uninterrupted(question: &str) -> Value {
    let emu = Emulator::start();
    let (code, doc, stderr) = ask_json(&emu, &[question]);
    assert_eq!(code, Some(0), "{stderr}");
    without_ids(doc)
}

#[test]
fn a_dropped_connection_is_resumed_and_reads_as_if_it_never_dropped() {
    for mid_line in [false, true] {
        let emu = Emulator::start();
        emu.interrupt(Interruption::Drop { after: 4, mid_line });
        let (code, doc, stderr) = ask_json(&emu, &["Revenue by month?"]);
        assert_eq!(code, Some(0), "{stderr}");
        assert!(
            stderr.contains("the connection dropped; resuming chat chat-0001 (message "),
            "{stderr}"
        );
        assert_eq!(without_ids(doc.clone()), uninterrupted("Revenue by month?"));
        let bodies = emu.chat_bodies();
        assert_eq!(bodies.len(), 2);
        assert_eq!(bodies[0]["messageId"], bodies[1]["messageId"], "the same message");
        assert_eq!(doc["messageId"], bodies[0]["messageId"]);
        assert_eq!(
            (&bodies[0]["chatId"], &bodies[1]["chatId"]),
            (&Value::Null, &doc["chatId"])
        );
    }
}

#[test]
fn a_suspended_turn_is_resumed_even_several_times() {
    let emu = Emulator::start();
    emu.interrupt(Interruption::Suspend { after: 3 });
    emu.interrupt(Interruption::Drop {
        after: 2,
        mid_line: true,
    });
    emu.interrupt(Interruption::Suspend { after: 4 });
    let (code, doc, stderr) = ask_json(&emu, &["Revenue by month?"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0001
analyst: warning: the service suspended the turn (The server restarted while answering); resuming chat chat-0001 (message [..]-message) in [..] (1 of 3)
analyst: warning: the connection dropped; resuming chat chat-0001 (message [..]-message) in [..] (2 of 3)
analyst: warning: the service suspended the turn (The server restarted while answering); resuming chat chat-0001 (message [..]-message) in [..] (3 of 3)

"#]],
    );
    assert_eq!(without_ids(doc), uninterrupted("Revenue by month?"));
    emu.expect(Route::Chat, 4);
}

#[test]
fn every_output_of_a_resumed_turn_is_the_uninterrupted_one() {
    let plain = Emulator::start();
    for mode in ["answer", "csv", "events", "vega"] {
        let expected = plain.analyst().args(["ask", "-o", mode, "Q"]).output().unwrap();
        exits(&expected, 0);
        let emu = Emulator::start();
        emu.interrupt(Interruption::Drop {
            after: 5,
            mid_line: true,
        });
        let output = emu.analyst().args(["ask", "-o", mode, "Q"]).output().unwrap();
        exits(&output, 0);
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).replace("chat-0002", "chat-0001");
        let expected = text(&expected.stdout).replace("chat-0003", "chat-0001");
        let got = text(&output.stdout);
        if mode == "events" {
            // The message id is in the echo; the rest is line for line the same.
            let strip = |s: &str| {
                s.lines()
                    .filter(|l| !l.contains("-message\""))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            assert_eq!(strip(&got), strip(&expected), "{mode}");
        } else {
            assert_eq!(got, expected, "{mode}");
        }
    }
}

#[test]
fn raw_and_tee_hold_every_connections_bytes_in_order() {
    let emu = Emulator::start();
    emu.interrupt(Interruption::Drop {
        after: 3,
        mid_line: true,
    });
    let dir = Scratch::new();
    let tee = dir.join("saved.ndjson");
    let output = emu
        .analyst()
        .args(["ask", "-o", "raw", "--tee"])
        .arg(&tee)
        .arg("Q")
        .output()
        .unwrap();
    exits(&output, 0);
    assert_eq!(std::fs::read(&tee).unwrap(), output.stdout);
    let raw = String::from_utf8(output.stdout).unwrap();
    assert_eq!(raw.matches("\"__cutoff__\"").count(), 2, "two connections: {raw}");
    assert!(!raw.ends_with("}\n{"), "each connection's bytes whole");
}

#[test]
fn when_retries_run_out_the_error_says_how_to_resume_and_that_works() {
    let emu = Emulator::start();
    emu.interrupt(Interruption::Suspend { after: 3 });
    emu.interrupt(Interruption::Suspend { after: 2 });
    let (code, doc, stderr) = ask_json(&emu, &["--retries", "1", "Q"]);
    assert_eq!(code, Some(7), "{stderr}");
    assert_eq!(doc["status"], "suspended");
    let chat = doc["chatId"].as_str().unwrap().to_string();
    let message = doc["messageId"].as_str().unwrap().to_string();
    let error = stderr.lines().find(|l| l.starts_with("analyst: error:")).unwrap();
    assert_whole(error.to_string(), str!["analyst: error: resumed once: the chat was suspended by the service: The server restarted while answering; the turn can be resumed for 24 hours: analyst ask --chat-id chat-0001 --resume [..]-message"]);
    let hint = format!("analyst ask --chat-id {chat} --resume {message}");
    assert!(error.contains(&hint), "{error}");

    // A read of the thread shows the pending suspension.
    let (code, thread, _) = ask_json(&emu, &["--chat-id", &chat]);
    assert_eq!(code, Some(0));
    assert_eq!(thread["suspended"], message.as_str());

    // The hint's command finishes the turn: no question needed.
    let (code, resumed, stderr) = ask_json(&emu, &["--chat-id", &chat, "--resume", &message]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(resumed["status"], "completed");
    assert_eq!(resumed["answer"], uninterrupted("Q")["answer"]);
    let last = emu.chat_bodies().pop().unwrap();
    assert_eq!(
        (&last["chatId"], &last["messageId"]),
        (&Value::from(chat), &Value::from(message))
    );
}

#[test]
fn a_cut_with_no_retries_left_is_exit_7_status_cut() {
    let emu = Emulator::start();
    emu.interrupt(Interruption::Drop {
        after: 6,
        mid_line: true,
    });
    let (code, doc, stderr) = ask_json(&emu, &["--retries", "0", "Q"]);
    assert_eq!(code, Some(7), "{stderr}");
    assert_eq!(doc["status"], "cut");
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0001
analyst: error: the stream was cut in the middle of line 8 (EOF while parsing a string at column 1462); resume it with: analyst ask --chat-id chat-0001 --resume [..]-message

"#]],
    );
    emu.expect(Route::Chat, 1);
}

#[test]
fn transient_failures_before_any_answer_are_tried_again_with_the_same_message() {
    let emu = Emulator::start();
    emu.script_on(
        Route::Chat,
        Reply::status(503, "application/json", r#"{"error":"busy"}"#),
    );
    emu.script_on(Route::Chat, Reply::Busy { retry_after: 0 });
    let (code, doc, stderr) = ask_json(&emu, &["Q"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(doc["status"], "completed");
    let bodies = emu.chat_bodies();
    assert_eq!(bodies.len(), 3);
    assert!(bodies.iter().all(|body| body["messageId"] == doc["messageId"]));
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: warning: the service answered 503 Service Unavailable: busy; the service failed; try again later; trying again in [..] (2 of 4)
analyst: warning: the service answered 429 Too Many Requests; the service is busy; try again later; trying again in [..] (3 of 4)
message: [..]-message
chat: chat-0001

"#]],
    );
}

#[test]
fn a_new_question_to_a_thread_still_streaming_is_refused() {
    let emu = Emulator::start();
    emu.interrupt(Interruption::Drop {
        after: 3,
        mid_line: false,
    });
    let (code, doc, _) = ask_json(&emu, &["--retries", "0", "Q"]);
    assert_eq!(code, Some(7));
    let chat = doc["chatId"].as_str().unwrap();
    let output = emu
        .analyst()
        .args(["ask", "--chat-id", chat, "Another question"])
        .output()
        .unwrap();
    exits(&output, 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains("Streaming for thread is in progress"));
}

#[test]
fn a_follow_up_replays_the_thread_first_and_none_of_it_is_this_turn() {
    let emu = Emulator::start();
    let first = emu
        .analyst()
        .args(["ask", "--branch", "broken", "Q1"])
        .output()
        .unwrap();
    exits(&first, 7);
    let (code, doc, stderr) = ask_json(&emu, &["--chat-id", "chat-0001", "Q2"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        !stderr.contains("failed"),
        "the past's tool failure is not noted: {stderr}"
    );
    assert_eq!(
        doc["answer"],
        uninterrupted("Q")["answer"]
            .as_str()
            .unwrap()
            .replace("Answer 1", "Answer 2")
    );
    assert_eq!(doc["toolCalls"].as_array().unwrap().len(), 2, "this turn's calls only");
    // The replay is there in raw: the first turn's failed call, then the cutoff.
    let raw = emu
        .analyst()
        .args(["ask", "-o", "raw", "--chat-id", "chat-0001", "Q3"])
        .output()
        .unwrap();
    let raw = String::from_utf8(raw.stdout).unwrap();
    let cutoff = raw.find("__cutoff__").unwrap();
    assert!(raw[..cutoff].contains("Bad branch"), "{raw}");
}

/// A turn whose final answer stops half way: the stream ends while its
/// last line is still in process, with no `__usage__` after it.
fn half_answer() -> Reply {
    Reply::stream(
        &ChatStream::new("chat-h", Family::Cube)
            .user("Orders by region?")
            .final_answer_cut(&["Orders by region: ", "East le"]),
    )
}

#[test]
fn half_a_final_answer_is_no_answer_in_any_mode() {
    for mode in ["answer", "json", "table", "csv"] {
        let emu = Emulator::start();
        emu.script(half_answer());
        let output = emu
            .analyst()
            .args(["ask", "--retries", "0", "-o", mode, "Orders by region?"])
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
        );
        exits(&output, 7);
        assert!(
            !stdout.contains("East le"),
            "{mode}: no partial text on stdout: {stdout}"
        );
        assert!(
            stderr.contains("the stream ended while the agent was still writing") && stderr.contains("--resume"),
            "{mode}: {stderr}"
        );
        if mode == "json" {
            let doc: Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!((&doc["status"], &doc["answer"]), (&Value::from("cut"), &Value::Null));
        }
    }
}

#[test]
fn half_a_final_answer_is_resumed_with_the_same_ids() {
    let emu = Emulator::start();
    emu.script(half_answer());
    // The resumed turn replays what was sent, then goes on.
    emu.script(Reply::stream(
        &ChatStream::new("chat-h", Family::Cube)
            .user("Orders by region?")
            .final_answer_then_whole(
                &["Orders by region: ", "East le", "ads with 10, West 5."],
                "Orders by region: East leads with 10, West 5.",
            )
            .usage(),
    ));
    let output = emu.analyst().args(["ask", "Orders by region?"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 0);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Orders by region: East leads with 10, West 5.\n"
    );
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-h
analyst: warning: the stream ended while the agent was still writing; resuming chat chat-h (message [..]-message) in [..] (1 of 3)

"#]],
    );
    let bodies = emu.chat_bodies();
    assert_eq!(bodies[1]["chatId"], "chat-h");
    assert_eq!(bodies[0]["messageId"], bodies[1]["messageId"]);
}

#[test]
fn check_does_not_pass_half_an_answer() {
    let emu = Emulator::start();
    emu.script(half_answer());
    let suite = ScratchFile::new(
        "half.toml",
        "[[case]]\nname = \"half\"\nquestion = \"Orders by region?\"\n",
    );
    let output = emu
        .analyst()
        .args(["check", "--retries", "0", "-o", "json"])
        .arg(&*suite)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    exits(&output, 9);
    assert_eq!(report["cases"][0]["status"], "error");
    assert_eq!(report["cases"][0]["exitCode"], 7, "the case keeps its failure's code");
}
