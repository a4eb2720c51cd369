//! A secret however the service writes it (cli.md, Security): split
//! between two answer deltas at any byte, written with JSON escapes
//! (`\u002d`, every character escaped, a tool result's JSON inside a JSON
//! string), and text shaped like a Cube key after an escaped line break or
//! tab: never whole on stdout, stderr, `--tee`, the history or `check`'s
//! reports.

use std::path::Path;

use crate::support::*;

/// Text shaped like a Cube API key (not a registered secret).
const KEY_SHAPED: &str = "sk-live-4f2a9c81d7e6b3a05c1d";

/// `text` as the contents of a JSON string, every character escaped
/// (`\u0073\u006b…`), as a serializer that escapes everything writes it.
fn every_char_escaped(text: &str) -> String {
    text.chars().map(|c| format!("\\u{:04x}", u32::from(c))).collect()
}

/// `text` as the contents of a JSON string, its dashes escaped.
fn dashes_escaped(text: &str) -> String {
    text.replace('-', "\\u002d")
}

/// A line of the final answer whose `content` is `contents` (the inside of
/// a JSON string, escapes as given); `done` ends the message.
fn final_delta(contents: &str, done: bool) -> String {
    format!(
        r#"{{"id":"final-1","role":"assistant","content":"{contents}","graphPath":["final"],"isDelta":true,"isInProcess":{},"isStructuredResponse":true}}"#,
        !done
    )
}

/// A stream whose final answer comes as `deltas` (JSON string contents).
fn answered(deltas: &[String]) -> ChatStream {
    let mut stream = ChatStream::new("c-split", Family::Cube).user("Q");
    for (i, delta) in deltas.iter().enumerate() {
        stream = stream.raw_line(&final_delta(delta, i + 1 == deltas.len()));
    }
    stream
}

/// What `files` hold (a missing one holds nothing).
fn files_text(files: &[&Path]) -> String {
    let all: Vec<u8> = files
        .iter()
        .flat_map(|file| std::fs::read(file).unwrap_or_default())
        .collect();
    String::from_utf8_lossy(&all).into_owned()
}

/// Everything a finished command left: stdout, stderr, and the files.
fn shown(output: &std::process::Output, files: &[&Path]) -> String {
    let streams = [output.stdout.clone(), output.stderr.clone()].concat();
    String::from_utf8_lossy(&streams).into_owned() + &files_text(files)
}

/// Fails when `text` holds the API key or the key-shaped text whole.
fn assert_no_secret(text: &str, context: &str) {
    assert!(!text.contains(API_KEY), "{context}: the API key is whole in {text}");
    assert!(
        !text.contains(KEY_SHAPED),
        "{context}: the key-shaped text is whole in {text}"
    );
    assert!(
        !text.contains(&API_KEY[3..]),
        "{context}: the API key's body is whole in {text}"
    );
}

#[test]
fn an_api_key_split_between_two_deltas_at_any_byte_is_never_whole() {
    let dir = Scratch::new();
    for at in 1..API_KEY.len() {
        let (head, tail) = API_KEY.split_at(at);
        let stream = answered(&[format!("the key is {head}"), format!("{tail}, kept safe")]);
        let saved = dir.write(&format!("split-{at}.ndjson"), stream.bytes());
        for mode in ["answer", "json", "html"] {
            let output = analyst()
                .env("ANALYST_API_KEY", API_KEY)
                .args(["ask", "-o", mode, "--replay"])
                .arg(&saved)
                .output()
                .unwrap();
            exits(&output, 0);
            let text = shown(&output, &[]);
            assert_no_secret(&text, &format!("split at {at}, -o {mode}"));
            assert!(text.contains("***"), "split at {at}, -o {mode}: {text}");
        }
    }
}

#[test]
fn a_secret_written_with_json_escapes_is_redacted_in_every_output_and_the_history() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let db = dir.join("history.db");
    let forms = [
        dashes_escaped(API_KEY),
        every_char_escaped(API_KEY),
        // Text shaped like a key starting a line of the answer, or after a tab.
        format!("first line\\n{KEY_SHAPED}"),
        format!("a\\t{KEY_SHAPED}"),
        format!("split\\n{}", every_char_escaped(KEY_SHAPED)),
    ];
    for (i, form) in forms.iter().enumerate() {
        // The secret in the answer, in a SQL result's cell (the tool's
        // result is JSON inside a JSON string: escaped twice), and in an
        // in-stream error at the end.
        let call = warehouse::given_call(
            "SELECT 1",
            &[("secret", "string")],
            vec![vec![serde_json::json!("CELL-PLACEHOLDER")]],
        );
        let cell = form.replace('\\', "\\\\");
        let lines: Vec<String> = ChatStream::new(&format!("c-esc-{i}"), Family::Cube)
            .user("Q")
            .sql_call(&call)
            .lines()
            .into_iter()
            .map(|line| line.replace("CELL-PLACEHOLDER", &cell))
            .collect();
        let mut stream = ChatStream::empty();
        for line in &lines {
            stream = stream.raw_line(line);
        }
        let stream = stream
            .raw_line(&final_delta(&format!("the key: {form} and more"), true))
            .usage();
        for mode in ["answer", "json", "csv", "raw"] {
            emu.script(Reply::stream(&stream));
            let tee = dir.join(format!("tee-{i}-{mode}.ndjson"));
            let output = emu
                .analyst()
                .env("ANALYST_HISTORY_DB", &db)
                .args(["ask", "-o", mode, "--tee"])
                .arg(&tee)
                .arg("Q")
                .output()
                .unwrap();
            exits(&output, 0);
            let text = shown(&output, &[&tee]);
            assert_no_secret(&text, &format!("form {form}, -o {mode}"));
        }
        emu.script(Reply::stream(
            &ChatStream::new("c-err", Family::Cube)
                .user("Q")
                .raw_line(&format!(r#"{{"error":"refused: {form}"}}"#)),
        ));
        let output = emu.analyst().args(["ask", "-o", "json", "Q"]).output().unwrap();
        assert_no_secret(&shown(&output, &[]), &format!("form {form}, an in-stream error"));
    }
    let wal = dir.join("history.db-wal");
    let recorded = files_text(&[&db, &wal]);
    assert!(!recorded.is_empty(), "the turns were recorded");
    assert_no_secret(&recorded, "the history database");
}

#[test]
fn a_secret_in_a_suite_or_split_in_an_answer_is_in_no_report_of_check() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let (head, tail) = API_KEY.split_at(9);
    emu.script(Reply::stream(
        &answered(&[
            format!("echo {head}"),
            format!("{tail} and {}", dashes_escaped(KEY_SHAPED)),
        ])
        .usage(),
    ));
    let suite = dir.write(
        "suite.toml",
        format!(
            "[[case]]\nname = \"leaks {API_KEY} and {KEY_SHAPED}\"\nquestion = \"Is {API_KEY} or {KEY_SHAPED} valid?\"\nexpect_answer = \"never matches\"\n"
        ),
    );
    let (junit, summary) = (dir.join("junit.xml"), dir.join("summary.md"));
    let output = emu
        .analyst()
        .args(["check", "-o", "json", "--junit"])
        .arg(&junit)
        .arg("--summary")
        .arg(&summary)
        .arg(&suite)
        .output()
        .unwrap();
    exits(&output, 9);
    assert_no_secret(&shown(&output, &[&junit, &summary]), "check's reports");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report.to_string().contains("***"), "{report}");
    for list in [&["check", "--list"][..], &["check", "--list", "-o", "json"]] {
        let listed = emu.analyst().args(list).arg(&suite).output().unwrap();
        exits(&listed, 0);
        assert_no_secret(&shown(&listed, &[]), &list.join(" "));
    }
    let saved = dir.write("report.json", &output.stdout);
    for format in [&["--tap"][..], &["-o", "html"], &["-o", "markdown"]] {
        let merged = emu
            .analyst()
            .args(["check", "merge"])
            .args(format)
            .arg(&saved)
            .output()
            .unwrap();
        exits(&merged, 9);
        assert_no_secret(&shown(&merged, &[]), &format.join(" "));
    }
}
