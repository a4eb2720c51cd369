//! `cli.md`'s "Security" and the end of `ask`: secrets never shown or saved
//! (redacted before anything is shortened), private files created only
//! when there is something to keep, a config others can write refused,
//! no core dumps; every early end of a running `ask` (a malformed line, a
//! full disk, SIGHUP, an in-stream error) aborts the chat first.

use std::time::Duration;

use crate::support::*;
use serde_json::Value;

/// The chat ids of the abort requests the emulator received.
fn aborted(emu: &Emulator) -> Vec<String> {
    emu.requests_on(Route::Abort)
        .iter()
        .map(|r| r.json()["chatId"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_secret_the_service_echoes_is_redacted_from_every_output_and_file() {
    let emu = Emulator::start();
    let echo = format!("Unauthorized: API key {API_KEY} is not valid for this agent");
    let stream = ChatStream::new("c-key", Family::Cube).user("Q").error_line(&echo);
    let dir = Scratch::new();
    for mode in ["json", "raw", "events", "answer"] {
        emu.script(Reply::stream(&stream));
        let tee = dir.join(format!("{mode}.ndjson"));
        let output = emu
            .analyst()
            .args(["ask", "-o", mode, "--tee"])
            .arg(&tee)
            .arg("Q")
            .output()
            .unwrap();
        exits(&output, 3);
        let shown = [
            output.stdout.clone(),
            output.stderr.clone(),
            std::fs::read(&tee).unwrap(),
        ]
        .concat();
        let shown = String::from_utf8_lossy(&shown);
        assert!(!shown.contains(&API_KEY[3..]), "{mode}: {shown}");
        assert!(shown.contains("API key *** is not valid"), "{mode}: {shown}");
    }
}

#[test]
fn an_error_body_echoing_the_key_near_the_cut_shows_none_of_it() {
    let emu = Emulator::start();
    let body = format!(r#"{{"error":"{} {API_KEY} {API_KEY}"}}"#, "x".repeat(185));
    emu.script(Reply::status(401, "application/json", &body));
    let output = emu.analyst().args(["ask", "Q"]).output().unwrap();
    exits(&output, 3);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("sk-t"), "{stderr}");
}

#[test]
fn tee_files_are_private_and_left_alone_when_the_request_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let emu = Emulator::start();
    let dir = Scratch::new();
    let tee = dir.write("saved.ndjson", "yesterday's stream\n");
    emu.script(Reply::status(401, "application/json", r#"{"error":"Invalid API key"}"#));
    let ask_with_tee = || {
        emu.analyst()
            .args(["ask", "--tee"])
            .arg(&tee)
            .arg("Q")
            .output()
            .unwrap()
    };
    assert_eq!(ask_with_tee().status.code(), Some(3));
    assert_eq!(std::fs::read_to_string(&tee).unwrap(), "yesterday's stream\n");
    assert_eq!(ask_with_tee().status.code(), Some(0));
    let mode = std::fs::metadata(&tee).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    assert!(std::fs::read_to_string(&tee).unwrap().contains("__cutoff__"));
}

#[test]
fn tee_onto_the_replayed_file_is_refused() {
    let dir = Scratch::new();
    let saved = dir.write("s.ndjson", std::fs::read(fixture("revenue-by-month.ndjson")).unwrap());
    let before = std::fs::read(&saved).unwrap();
    let same = dir.join("./s.ndjson");
    let output = analyst()
        .args(["ask", "--replay"])
        .arg(&saved)
        .arg("--tee")
        .arg(&same)
        .output()
        .unwrap();
    exits(&output, 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains("is the --replay file"));
    assert_eq!(std::fs::read(&saved).unwrap(), before);
}

#[test]
fn a_full_disk_is_its_own_failure_and_the_chat_is_aborted() {
    let emu = Emulator::start();
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let output = emu
        .command()
        .args(["ask", "-o", "raw", "Q"])
        .stdout(full)
        .output()
        .unwrap();
    exits(&output, 74);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0001
analyst: error: cannot write to stdout: No space left on device (os error 28); chat chat-0001 aborted

"#]],
    );

    let output = emu.analyst().args(["ask", "--tee", "/dev/full", "Q"]).output().unwrap();
    exits(&output, 74);
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot write the saved stream"));
    assert_eq!(aborted(&emu), ["chat-0001", "chat-0002"]);
}

#[test]
fn a_malformed_line_or_an_in_stream_error_aborts_the_chat() {
    let emu = Emulator::start();
    let malformed = ChatStream::new("c-bad", Family::Cube)
        .user("Q")
        .raw_line("{not json")
        .final_answer(&["never"]);
    emu.script(Reply::stream(&malformed));
    let output = emu.analyst().args(["ask", "Q"]).output().unwrap();
    exits(&output, 7);
    let errored = ChatStream::new("c-err", Family::Cube)
        .user("Q")
        .error_line("BadRequestError: Bad branch");
    emu.script(Reply::stream(&errored));
    let output = emu.analyst().args(["ask", "Q"]).output().unwrap();
    exits(&output, 7);
    assert_eq!(aborted(&emu), ["c-bad", "c-err"]);
}

#[test]
fn sighup_aborts_the_chat_flushes_the_tee_and_exits_129() {
    let emu = Emulator::start();
    emu.agent(|a| {
        a.padding = 300;
        a.delay = Duration::from_millis(200);
    });
    let dir = Scratch::new();
    let tee = dir.join("partial.ndjson");
    let mut running = Running::start(&emu, &["ask", "--tee", tee.to_str().unwrap(), "Q"]);
    running.wait_for_stderr("chat: chat-0001");
    // No core dump can carry the key out of the process.
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", running.child.id())).unwrap();
    let core = limits.lines().find(|l| l.starts_with("Max core file size")).unwrap();
    assert_eq!(core.split_whitespace().nth(4), Some("0"), "{core}");
    running.signal("HUP");
    let (code, _, stderr, _) = running.finish(Duration::from_secs(10));
    assert_eq!(code, Some(129), "{stderr}");
    assert_eq!(aborted(&emu), ["chat-0001"]);
    assert!(std::fs::read_to_string(&tee)
        .unwrap()
        .starts_with("{\"id\":\"__cutoff__\""));
}

#[test]
fn a_url_that_does_not_parse_never_repeats_its_password() {
    let output = analyst()
        .env("ANALYST_API_KEY", API_KEY)
        .env("ANALYST_EXTERNAL_ID", "ci-bot")
        .args([
            "ask",
            "--chat-url",
            "https://user:hunter2@exa mple.com/chat/stream-chat-state",
            "Q",
        ])
        .output()
        .unwrap();
    exits(&output, 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("hunter2") && stderr.contains("https://***@exa mple.com"),
        "{stderr}"
    );
}

#[test]
fn a_secret_in_any_url_or_collector_header_is_on_no_output() {
    let emu = Emulator::start();
    const SECRET: &str = "url-pass-3e8b1d7c";
    let with = |url: &str| url.replacen("://", &format!("://user:{SECRET}@"), 1);
    let config = ScratchFile::new(
        "config.toml",
        format!(
            "default = \"p\"\n[profiles.p]\nchat_url = \"{}\"\ndata_url = \"{}\"\nbase_url = \"{}\"\notlp_endpoint = \"{}\"\n",
            with(&emu.chat_url()),
            with(&emu.data_url()),
            with(&emu.base()),
            with("https://collector.example:4318")
        ),
    );
    // Each source: a flag, a variable, a profile key; and the collector's
    // headers however they are written.
    /// Flags, and variables, that give the secret.
    type Source<'a> = (Vec<String>, Vec<(&'a str, String)>);
    let sources: Vec<Source<'_>> = vec![
        (vec!["--chat-url".into(), with(&emu.chat_url())], vec![]),
        (vec!["--data-url".into(), with(&emu.data_url())], vec![]),
        (vec![], vec![("ANALYST_CHAT_URL", with(&emu.chat_url()))]),
        (vec![], vec![("ANALYST_DATA_URL", with(&emu.data_url()))]),
        (vec![], vec![("ANALYST_BASE_URL", with(&emu.base()))]),
        (vec![], vec![("ANALYST_CONFIG", config.display().to_string())]),
        (
            vec![],
            vec![("OTEL_EXPORTER_OTLP_ENDPOINT", with("https://collector.example:4318"))],
        ),
        (
            vec![],
            vec![(
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                with("https://collector.example:4318/v1/traces"),
            )],
        ),
        (
            vec![],
            vec![
                ("OTEL_EXPORTER_OTLP_ENDPOINT", emu.base()),
                ("OTEL_EXPORTER_OTLP_HEADERS", format!("authorization=Bearer {SECRET}")),
            ],
        ),
        (
            vec![],
            vec![
                ("OTEL_EXPORTER_OTLP_ENDPOINT", emu.base()),
                ("OTEL_EXPORTER_OTLP_HEADERS", format!("authorization: {SECRET}")),
            ],
        ),
    ];
    for (flags, env) in &sources {
        for command in [
            &["config", "list"][..],
            &["doctor", "--offline"],
            &["doctor", "-v"],
            &["ask", "-v", "Revenue?"],
            &["rows", "-v", "--sql", "SELECT 1"],
        ] {
            let takes_flags = !flags.is_empty() && command[0] != "config" && command[0] != "doctor";
            let output = emu
                .command()
                .env("ANALYST_DATA_SECRET", DATA_SECRET)
                .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
                .args(command)
                .args(if takes_flags { flags.as_slice() } else { &[] })
                .output()
                .unwrap();
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(!all.contains(SECRET), "{flags:?} {env:?} {command:?}: {all}");
        }
    }
}

#[test]
fn json_is_still_written_when_the_disk_fills_and_says_why() {
    let emu = Emulator::start();
    let output = emu
        .analyst()
        .args(["ask", "-o", "json", "--tee", "/dev/full", "Q"])
        .output()
        .unwrap();
    exits(&output, 74);
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["failure"]["code"], 74);
}
