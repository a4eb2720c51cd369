//! Log lines nobody can forge (cli.md, Exit codes: "Every failure prints
//! one line"): a case name, a question, an in-stream error, a tool's
//! error, a suspension and a chat id holding line breaks never start a
//! line of their own on stderr, so a CI log never reads a workflow command
//! (`::error::`, `::add-mask::`, `::stop-commands::`) from a suite or the
//! service.

use crate::support::*;

/// What a hostile suite or service puts after a line break.
const FORGED: &str = "::error::FORGED";

/// Fails when a line of `stderr` starts with foreign text (anything from
/// the marker on), or the marker is missing (the path printed nothing).
fn assert_no_forged_line(stderr: &str, context: &str) {
    assert!(
        stderr.contains("FORGED"),
        "{context}: the hostile text was not printed: {stderr}"
    );
    for line in stderr.lines() {
        assert!(
            !line.trim_start().starts_with("::") && !line.starts_with("FORGED"),
            "{context}: a line starts with foreign text: {line:?} in\n{stderr}"
        );
    }
}

#[test]
fn service_text_with_line_breaks_stays_inside_its_line_on_stderr() {
    let emu = Emulator::start();
    let hostile = format!("bad\n{FORGED}\r\n{FORGED}");
    let streams = [
        (
            "an in-stream error",
            ChatStream::new("c-1", Family::Cube).user("Q").error_line(&hostile),
        ),
        (
            "a JSON-RPC error",
            ChatStream::empty().raw_line(
                &serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": hostile}})
                    .to_string(),
            ),
        ),
        (
            "a tool's error",
            ChatStream::new("c-2", Family::Cube)
                .user("Q")
                .failed_sql_call("SELECT 1", &hostile)
                .final_answer(&["Done."])
                .usage(),
        ),
        (
            "a suspension",
            ChatStream::new("c-3", Family::Cube).user("Q").raw_line(
                &serde_json::json!({"id": "__suspended__", "type": "suspend", "code": "chat_suspended",
                    "retryable": false, "error": hostile, "messageId": "m-1"})
                .to_string(),
            ),
        ),
        (
            "a chat id",
            ChatStream::new(&format!("c-4\n{FORGED}"), Family::Cube)
                .user("Q")
                .final_answer(&["Done."])
                .usage(),
        ),
    ];
    for (what, stream) in &streams {
        emu.script(Reply::stream(stream));
        let output = emu.analyst().args(["ask", "--retries", "0", "Q"]).output().unwrap();
        assert_no_forged_line(&String::from_utf8_lossy(&output.stderr), what);
    }
}

#[test]
fn a_hostile_suite_cannot_start_a_line_of_check_s_log() {
    let emu = Emulator::start();
    emu.script(Reply::stream(
        &ChatStream::new("c-5", Family::Cube)
            .user("Q")
            .error_line(&format!("refused\n{FORGED}")),
    ));
    let dir = Scratch::new();
    let suite = dir.write(
        "suite.toml",
        "[[case]]\nname = \"one\\n::error::FORGED name\\r\\n::add-mask::FORGED\"\nquestion = \"Q\\n::stop-commands::FORGED\"\n\n\
         [[case]]\nname = \"two\\n::error::FORGED\"\nquestion = \"Q\"\nexpect_answer = \"x\\n::error::FORGED\"\n",
    );
    let output = emu
        .analyst()
        .args(["check", "--jobs", "1"])
        .arg(&suite)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_no_forged_line(&stderr, "check");
    assert!(stderr.contains("START one\\n::error::FORGED name"), "{stderr}");
    let listed = emu.analyst().args(["check", "--list"]).arg(&suite).output().unwrap();
    exits(&listed, 0);
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert_eq!(stdout.lines().count(), 2, "one line a case: {stdout}");
}
