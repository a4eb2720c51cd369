//! Every request takes the one way out (`net::http::Http`): chat, data,
//! session, abort, the span export and `history push` each end within what
//! `--timeout` has left when nothing answers, and at once at the first
//! signal with the command's code; `-v` logs each request and its status;
//! a secret of the collector — its headers, credentials in its URL —
//! appears on no output; plain `http://` to a host that is not loopback
//! never carries a secret and never goes through a proxy.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::collector::{Answer, Collector};
use crate::support::*;

/// The collector's key, which no output may show.
const COLLECTOR_KEY: &str = "otel-key-7c1e5a9f3b";

/// `command` exporting to `collector` with a secret header.
fn exporting(mut command: Command, collector: &Collector) -> Command {
    command.env("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint()).env(
        "OTEL_EXPORTER_OTLP_HEADERS",
        format!("authorization=Bearer%20{COLLECTOR_KEY}"),
    );
    command
}

/// `command` with the emulator's data query API.
fn with_data(mut command: Command, emu: &Emulator) -> Command {
    command
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET);
    command
}

/// Spans kept for a push in `db`: an `ask` whose collector was down.
fn kept_spans(emu: &Emulator, db: &std::path::Path, asks: usize) {
    let down = format!("http://127.0.0.1:{}", crate::support::browser::unused_port());
    for _ in 0..asks {
        let output = emu
            .command()
            .env("ANALYST_HISTORY_DB", db)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &down)
            .args(["ask", "-q", "Revenue by month?"])
            .output()
            .unwrap();
        exits(&output, 0);
    }
}

/// Each kind of request, as a command that sends it to a peer that never
/// answers (its second element says which route or collector hangs), and
/// what that command's wait ends with at the deadline.
fn hanging_requests(emu: &Emulator, collector: &Collector, db: &std::path::Path) -> Vec<(&'static str, Command, i32)> {
    let mut requests = Vec::new();
    let mut chat = emu.command();
    chat.args(["ask", "--timeout", "2s", "Revenue?"]);
    requests.push(("chat", chat, 124));
    let mut data = with_data(emu.command(), emu);
    data.args(["rows", "--timeout", "2s", "--sql", "SELECT 1"]);
    requests.push(("data", data, 124));
    let mut session = emu.command();
    session
        .env("ANALYST_BASE_URL", emu.base())
        .env("ANALYST_DEPLOYMENT_ID", "42")
        .args(["session", "--timeout", "2s"]);
    requests.push(("session", session, 124));
    let mut abort = emu.command();
    abort.args(["abort", "--timeout", "2s", "--chat-id", "chat-1"]);
    requests.push(("abort", abort, 124));
    // The export's own limit is 20 s: the command's --timeout wins, and
    // the export never costs the command its exit code.
    let mut export = exporting(emu.command(), collector);
    export
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "20000")
        .env("ANALYST_HISTORY", "0")
        .args(["ask", "--timeout", "2s", "Revenue by month?"]);
    requests.push(("export", export, 0));
    // history push has no --timeout: each request is bounded by the
    // export's limit.
    let mut push = exporting(analyst_process(), collector);
    push.env("ANALYST_HISTORY_DB", db)
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "2000")
        .args(["history", "push"]);
    requests.push(("push", push, 6));
    requests
}

#[test]
fn every_request_kind_ends_within_the_deadline_when_nothing_answers() {
    let emu = Emulator::start();
    let collector = Collector::start(Answer::Silent);
    let folder = Scratch::new();
    let db = folder.join("history.db");
    kept_spans(&emu, &db, 1);
    for route in [Route::Chat, Route::Data, Route::Session, Route::Abort] {
        emu.script_on(route, Reply::Hang(Duration::from_secs(30)));
    }
    for (what, mut command, code) in hanging_requests(&emu, &collector, &db) {
        let started = Instant::now();
        let output = command.output().unwrap();
        let took = started.elapsed();
        exits(&output, code);
        assert!(took < Duration::from_millis(3500), "{what}: {took:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains(COLLECTOR_KEY), "{what}: {stderr}");
        let said: Vec<&str> = stderr.lines().filter(|line| line.starts_with("analyst:")).collect();
        assert_eq!(said.len(), 1, "{what}: one line: {stderr}");
    }
}

#[test]
fn every_request_kind_ends_at_the_first_signal_with_the_commands_code() {
    let emu = Emulator::start();
    let collector = Collector::start(Answer::Silent);
    let folder = Scratch::new();
    let db = folder.join("history.db");
    kept_spans(&emu, &db, 1);
    for (signal, code) in [("TERM", 143), ("INT", 130)] {
        for route in [Route::Chat, Route::Data, Route::Session, Route::Abort] {
            emu.script_on(route, Reply::Hang(Duration::from_secs(30)));
        }
        for (what, command, _) in hanging_requests(&emu, &collector, &db) {
            let route = match what {
                "chat" => Some(Route::Chat),
                "data" => Some(Route::Data),
                "session" => Some(Route::Session),
                "abort" => Some(Route::Abort),
                _ => None,
            };
            let count = || match route {
                Some(route) => emu.requests_on(route).len(),
                None => collector.received().len(),
            };
            let before = count();
            let running = Running::spawn(command);
            // The request is on the wire once its peer has read it.
            let deadline = Instant::now() + Duration::from_secs(10);
            while count() == before {
                assert!(Instant::now() < deadline, "{what}: no request arrived");
                std::thread::sleep(Duration::from_millis(20));
            }
            std::thread::sleep(Duration::from_millis(200));
            let signalled = Instant::now();
            running.signal(signal);
            let (exit, _, stderr, _) = running.finish(Duration::from_secs(10));
            assert_eq!(exit, Some(code), "{what} {signal}: {stderr}");
            // A chat stopped before its id came is read on for its grace
            // (3 s), so that the chat it started can be aborted.
            let allowed = match what {
                "chat" => Duration::from_secs(4),
                _ => Duration::from_secs(2),
            };
            assert!(
                signalled.elapsed() < allowed,
                "{what} {signal}: {:?}",
                signalled.elapsed()
            );
            assert!(!stderr.contains(COLLECTOR_KEY), "{what}: {stderr}");
        }
    }
}
