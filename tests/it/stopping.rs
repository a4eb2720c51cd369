//! Every way out of a running `ask` aborts the chat on the service, with the
//! right owner, and exits with the right code promptly: Ctrl-C, SIGTERM,
//! `--timeout`, a stalled stream, a closed stdout; a second Ctrl-C exits at
//! once; an abort that gets no answer is given up after 5 s.

use std::time::Duration;

use crate::support::*;
use serde_json::{json, Value};

/// A chat that would stream for about a minute unless aborted.
fn slow_chat() -> Emulator {
    let emu = Emulator::start();
    emu.agent(|a| {
        a.padding = 300;
        a.delay = Duration::from_millis(200);
    });
    emu
}

/// The bodies of the abort requests the emulator received.
fn aborts(emu: &Emulator) -> Vec<Value> {
    emu.requests_on(Route::Abort).iter().map(Recorded::json).collect()
}

const OWNER_ABORT: fn(&str) -> Value = |chat| json!({"chatId": chat, "sessionSettings": {"externalId": "ci-bot"}});

#[test]
fn ctrl_c_aborts_the_chat_as_its_owner_and_exits_130() {
    let emu = slow_chat();
    let mut running = Running::start(&emu, &["ask", "Revenue?"]);
    running.wait_for_stderr("chat: chat-0001");
    running.signal("INT");
    let (code, stdout, stderr, waited) = running.finish(Duration::from_secs(10));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(waited < Duration::from_secs(3), "took {waited:?}");
    assert_eq!(aborts(&emu), [OWNER_ABORT("chat-0001")]);
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0001
analyst: error: interrupted by SIGINT; chat chat-0001 aborted
"#]],
    );
    assert!(stdout.is_empty());
}

#[test]
fn sigterm_aborts_the_chat_and_exits_143() {
    let emu = slow_chat();
    let mut running = Running::start(&emu, &["ask", "-o", "raw", "Revenue?"]);
    running.wait_for_stderr("chat: chat-0001");
    running.signal("TERM");
    let (code, stdout, stderr, waited) = running.finish(Duration::from_secs(10));
    assert_eq!(code, Some(143), "{stderr}");
    assert!(waited < Duration::from_secs(3), "took {waited:?}");
    assert_eq!(aborts(&emu), [OWNER_ABORT("chat-0001")]);
    assert!(stdout.starts_with(br#"{"id":"__cutoff__""#), "what arrived was written");
}

#[test]
fn timeout_aborts_the_chat_and_exits_124_with_json_status_aborted_and_tee_flushed() {
    let emu = slow_chat();
    let dir = Scratch::new();
    let tee = dir.join("partial.ndjson");
    let running = Running::start(
        &emu,
        &[
            "ask",
            "-o",
            "json",
            "--timeout",
            "1500ms",
            "--tee",
            tee.to_str().unwrap(),
            "Q",
        ],
    );
    let (code, stdout, stderr, _) = running.finish(Duration::from_secs(10));
    assert_eq!(code, Some(124), "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0001
analyst: error: --timeout [..]s expired; chat chat-0001 aborted
"#]],
    );
    assert_eq!(aborts(&emu), [OWNER_ABORT("chat-0001")]);
    let doc: Value = serde_json::from_slice(&stdout).expect("the JSON document is still written");
    assert_eq!(doc["status"], "aborted");
    assert_eq!(doc["chatId"], "chat-0001");
    let saved = std::fs::read_to_string(&tee).unwrap();
    assert!(
        saved.lines().count() >= 3 && saved.ends_with('\n'),
        "the tee holds the lines received: {saved}"
    );
}

#[test]
fn a_stalled_stream_is_aborted_after_the_idle_timeout_with_exit_124() {
    let emu = Emulator::start();
    emu.agent(|a| a.delay = Duration::from_secs(30));
    let running = Running::start(&emu, &["ask", "--idle-timeout", "1s", "Q"]);
    let (code, _, stderr, waited) = running.finish(Duration::from_secs(10));
    assert_eq!(code, Some(124), "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0001
analyst: error: the stream stalled: nothing received for 1s (--idle-timeout); chat chat-0001 aborted
"#]],
    );
    assert!(waited < Duration::from_secs(5), "took {waited:?}");
    assert_eq!(aborts(&emu), [OWNER_ABORT("chat-0001")]);
}

#[test]
fn a_closed_stdout_aborts_the_chat_and_exits_0() {
    let emu = slow_chat();
    let mut running = Running::start(&emu, &["ask", "-o", "raw", "Q"]);
    running.wait_for_stderr("chat: chat-0001");
    // Close our end of stdout: a later line analyst writes meets a broken pipe.
    running.close_stdout();
    let (code, _, stderr, waited) = running.finish(Duration::from_secs(10));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(waited < Duration::from_secs(5), "took {waited:?}");
    assert!(!stderr.contains("error"), "{stderr}");
    assert_eq!(aborts(&emu), [OWNER_ABORT("chat-0001")]);
}

#[test]
fn interrupting_before_the_chat_started_sends_no_abort() {
    let emu = Emulator::start();
    emu.script(Reply::Hang(Duration::from_secs(30)));
    let running = Running::start(&emu, &["ask", "Q"]);
    // The request goes out after the signal handlers are in place.
    emu.wait_for_request(Route::Chat);
    running.signal("INT");
    let (code, _, stderr, waited) = running.finish(Duration::from_secs(10));
    assert_eq!(code, Some(130), "{stderr}");
    assert_whole(
        stderr.to_string(),
        str!["analyst: error: interrupted by SIGINT before the chat started; nothing to abort"],
    );
    // The chat id is awaited a few seconds, in vain here: then it exits.
    assert!(waited < Duration::from_secs(5), "took {waited:?}");
    assert!(aborts(&emu).is_empty());
}

#[test]
fn a_second_ctrl_c_exits_at_once_while_the_abort_hangs() {
    let emu = slow_chat();
    emu.script_on(Route::Abort, Reply::Hang(Duration::from_secs(30)));
    let mut running = Running::start(&emu, &["ask", "Q"]);
    running.wait_for_stderr("chat: chat-0001");
    running.signal("INT");
    emu.wait_for_request(Route::Abort);
    running.signal("INT");
    let (code, _, _, waited) = running.finish(Duration::from_secs(10));
    assert_eq!(code, Some(130));
    assert!(waited < Duration::from_secs(2), "took {waited:?}");
}

#[test]
fn an_abort_without_answer_is_given_up_after_five_seconds() {
    let emu = slow_chat();
    emu.script_on(Route::Abort, Reply::Hang(Duration::from_secs(30)));
    let mut running = Running::start(&emu, &["ask", "Q"]);
    running.wait_for_stderr("chat: chat-0001");
    running.signal("INT");
    let (code, _, stderr, waited) = running.finish(Duration::from_secs(15));
    assert_eq!(code, Some(130), "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0001
analyst: error: interrupted by SIGINT; aborting chat chat-0001 failed: aborting chat chat-0001: no answer in time from 127.0.0.1:[..]: operation timed out
"#]],
    );
    assert!(
        waited >= Duration::from_secs(4) && waited < Duration::from_secs(8),
        "took {waited:?}"
    );
}

/// Runs `command`, reads the first bytes of its stdout and closes it, as
/// `| head -c 10` does: later writes meet a broken pipe. Returns the exit
/// code and stderr.
fn with_stdout_closed_early(mut command: std::process::Command) -> (Option<i32>, String) {
    use std::io::Read;
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    let _ = child.stdout.as_mut().unwrap().read_exact(&mut first);
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_closed_stdout_is_exit_0_in_every_mode_of_ask_and_rows() {
    let dir = Scratch::new();
    let big = ChatStream::new("c-big", Family::Cube)
        .user("Q")
        .sql_call(&SqlCall::revenue_by_month(20_000))
        .final_answer(&["Done"]);
    let saved = dir.write("big.ndjson", big.bytes());
    let saved = saved.to_str().unwrap();
    for mode in ["answer", "raw", "events", "json", "csv", "vega"] {
        let mut command = analyst_process();
        command.args(["ask", "-o", mode, "--allow-partial", "--replay", saved]);
        let (code, stderr) = with_stdout_closed_early(command);
        assert_eq!(code, Some(0), "ask -o {mode}: {stderr}");
        assert!(!stderr.contains("error"), "ask -o {mode}: {stderr}");
    }
    for mode in ["csv", "tsv", "json", "ndjson"] {
        let mut command = analyst_process();
        command.args(["rows", "-o", mode, "--from", saved]);
        let (code, stderr) = with_stdout_closed_early(command);
        assert_eq!(code, Some(0), "rows -o {mode}: {stderr}");
        assert!(!stderr.contains("error"), "rows -o {mode}: {stderr}");
    }
}

#[test]
fn a_closed_stdout_stops_a_running_chat_in_every_streaming_mode() {
    let emu = slow_chat();
    for (i, mode) in ["raw", "events"].iter().enumerate() {
        let mut command = emu.command();
        command.args(["ask", "-o", mode, "Q"]);
        let (code, stderr) = with_stdout_closed_early(command);
        assert_eq!(code, Some(0), "{mode}: {stderr}");
        let chat = format!("chat-{:04}", i + 1);
        assert!(
            aborts(&emu).iter().any(|abort| abort["chatId"] == chat.as_str()),
            "{mode}: {stderr}"
        );
    }
}

#[test]
fn a_check_run_interrupted_exits_as_the_signal_says() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let emu = slow_chat();
        let suite = ScratchFile::new(
            "suite.toml",
            "[[case]]\nname = \"fails fast\"\nquestion = \"Q\"\nexpect_answer = \"never\"\ntimeout = \"1s\"\n\n[[case]]\nname = \"slow\"\nquestion = \"Q\"\n",
        );
        let mut running = Running::start(&emu, &["check", "--jobs", "1", suite.to_str().unwrap()]);
        running.wait_for_stderr("fails fast");
        emu.wait_for_request(Route::Chat);
        std::thread::sleep(Duration::from_millis(300));
        running.signal(signal);
        let (exit, _, stderr, _) = running.finish(Duration::from_secs(20));
        assert_eq!(exit, Some(code), "{signal}: {stderr}");
    }
}

#[test]
fn a_timeout_that_expires_during_abort_or_session_is_exit_124() {
    let emu = Emulator::start();
    emu.script_on(Route::Abort, Reply::Hang(Duration::from_secs(5)));
    let output = emu
        .analyst()
        .args(["abort", "--chat-id", "c1", "--timeout", "700ms"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 124);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: error: aborting chat c1: --timeout 700ms expired[..]

"#]],
    );
    emu.script_on(Route::Session, Reply::Hang(Duration::from_secs(5)));
    let output = emu
        .analyst()
        .env("ANALYST_BASE_URL", emu.base())
        .env("ANALYST_DEPLOYMENT_ID", "42")
        .args(["session", "--timeout", "700ms"])
        .output()
        .unwrap();
    exits(&output, 124);
}

#[test]
fn a_signal_while_the_output_is_written_is_not_ignored() {
    use std::io::Read;
    let dir = Scratch::new();
    let big = ChatStream::new("c-big", Family::Cube)
        .user("Q")
        .sql_call(&SqlCall::revenue_by_month(50_000))
        .final_answer(&["Done"]);
    let saved = dir.write("big.ndjson", big.bytes());
    let mut child = analyst_process()
        .args(["ask", "-o", "csv", "--allow-partial", "--replay"])
        .arg(&saved)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The CSV is larger than a pipe holds: analyst waits in a write.
    std::thread::sleep(Duration::from_millis(500));
    let status = std::process::Command::new("kill")
        .args(["-s", "INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut csv = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut csv).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
}

/// One way a running turn ends early, the same for `ask` and `check`.
struct Fault {
    name: &'static str,
    /// What the emulator answers the question with (`None`: its own slow chat).
    reply: Option<Reply>,
    /// Extra arguments of both commands.
    args: &'static [&'static str],
}

/// Runs `fault` through `ask` and through a one-case `check` against fresh
/// emulators, and returns, for each, the exit code and the chats aborted.
fn through_ask_and_check(fault: &Fault) -> [(Option<i32>, Vec<Value>); 2] {
    let suite = ScratchFile::new("endings.toml", "[[case]]\nname = \"q\"\nquestion = \"Revenue?\"\n");
    let run = |check: bool| {
        let emu = slow_chat();
        if let Some(reply) = &fault.reply {
            emu.script(reply.clone());
        }
        let mut command = emu.analyst();
        match check {
            false => command.args(["ask", "-q", "Revenue?"]),
            true => command.args(["check", "-q"]).arg(&*suite),
        };
        let output = command.args(fault.args).output().unwrap();
        (output.status.code(), aborts(&emu))
    };
    [run(false), run(true)]
}

#[test]
fn every_early_end_of_a_turn_aborts_the_chat_in_ask_and_in_check_alike() {
    let stream = |tail: ChatStream| Reply::stream(&tail);
    let faults = [
        Fault {
            name: "a malformed line",
            reply: Some(stream(
                ChatStream::new("chat-m", Family::Semantic)
                    .user("Revenue?")
                    .raw_line("{not json")
                    .assistant(&["More."]),
            )),
            args: &[],
        },
        Fault {
            name: "an in-stream error",
            reply: Some(stream(
                ChatStream::new("chat-e", Family::Semantic)
                    .user("Revenue?")
                    .error_line("BadRequestError: Bad branch"),
            )),
            args: &[],
        },
        Fault {
            name: "the deadline",
            reply: None,
            args: &["--timeout", "1s"],
        },
        Fault {
            name: "a stall",
            reply: Some(Reply::Held {
                body: ChatStream::new("chat-s", Family::Semantic)
                    .user("Revenue?")
                    .assistant(&["Thinking"])
                    .bytes(),
                after_lines: 2,
                gate: Gate::default(),
            }),
            args: &["--idle-timeout", "1s"],
        },
    ];
    for fault in &faults {
        let [(ask_code, ask_aborts), (check_code, check_aborts)] = through_ask_and_check(fault);
        assert_ne!(ask_code, Some(0), "{}: ask", fault.name);
        assert_ne!(check_code, Some(0), "{}: check", fault.name);
        assert_eq!(
            ask_aborts.len(),
            1,
            "{}: ask aborts its chat once: {ask_aborts:?}",
            fault.name
        );
        assert_eq!(ask_aborts, check_aborts, "{}: check aborts as ask does", fault.name);
    }
    // A stream that ended by itself (cut, with no retry left) is left as it
    // is by both: the hint resumes it.
    let cut = Fault {
        name: "a cut stream",
        reply: Some(Reply::Stream {
            body: ChatStream::new("chat-c", Family::Semantic).user("Revenue?").bytes(),
            chunking: Chunking::Lines,
            delay: Duration::ZERO,
            ending: Ending::DropAfter(60),
        }),
        args: &["--retries", "0"],
    };
    let [(_, ask_aborts), (_, check_aborts)] = through_ask_and_check(&cut);
    assert!(
        ask_aborts.is_empty() && check_aborts.is_empty(),
        "{ask_aborts:?} {check_aborts:?}"
    );
}

/// A slow chat whose lines arrive in pieces (a stop often finds half a
/// line read), and `count` cases of it.
fn chat_in_pieces() -> Emulator {
    let emu = Emulator::start();
    emu.agent(|a| {
        a.padding = 300;
        a.delay = Duration::from_millis(40);
        a.chunking = Chunking::Sizes(vec![7, 31, 3, 64]);
    });
    emu
}

#[test]
fn a_signal_at_any_moment_aborts_every_chat_the_service_started() {
    let suite = ScratchFile::new(
        "suite.toml",
        (1..=4)
            .map(|i| format!("[[case]]\nname = \"case {i}\"\nquestion = \"Q{i}\"\n\n"))
            .collect::<String>(),
    );
    let mut rng = fastrand::Rng::with_seed(0x5eed_0051);
    let mut aborted_before_the_id = 0;
    for run in 0..32 {
        let (signal, code) = if run % 2 == 0 { ("TERM", 143) } else { ("INT", 130) };
        let check = run % 4 >= 2;
        let emu = chat_in_pieces();
        let args: Vec<&str> = match check {
            true => vec!["check", "--jobs", "4", suite.to_str().unwrap()],
            false => vec!["ask", "-o", "raw", "Q"],
        };
        let running = Running::start(&emu, &args);
        emu.wait_for_request(Route::Chat);
        // Anywhere from before the first line to well into the stream.
        std::thread::sleep(Duration::from_millis(rng.u64(0..1500)));
        running.signal(signal);
        let (exit, _, stderr, _) = running.finish(Duration::from_secs(30));
        assert_eq!(exit, Some(code), "run {run} ({args:?}, SIG{signal}): {stderr}");
        let mut aborted: Vec<String> = aborts(&emu)
            .iter()
            .map(|abort| abort["chatId"].as_str().unwrap().to_string())
            .collect();
        aborted.sort();
        let started = emu.chats_started();
        assert_eq!(
            aborted, started,
            "run {run} ({args:?}, SIG{signal}): every chat started is aborted: {stderr}"
        );
        if !check && stderr.contains("aborted") && !stderr.contains("chat: chat-0001") {
            aborted_before_the_id += 1;
        }
    }
    eprintln!("{aborted_before_the_id} runs were signalled before the chat id was printed");
}
