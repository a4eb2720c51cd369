//! Spans a collector did not take wait in the history, and never make the
//! history wait on a collector: `history push` sends them a batch at a
//! time, each deleted in its own short transaction as soon as it is taken
//! (a push stopped at any moment sends again at most the batch in flight,
//! with the same span ids); no write lock is held while a request is on
//! the wire (another process records meanwhile); a batch refused for good
//! is kept, marked, and passed over; `history forget` deletes the kept
//! spans of what it forgets.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::collector::{Answer, Collector};
use crate::support::*;

/// A history database in a folder of its own, and the emulator.
struct Kept {
    emu: Emulator,
    _folder: Scratch,
    db: PathBuf,
}

impl Kept {
    fn new() -> Kept {
        let folder = Scratch::new();
        let db = folder.join("history.db");
        Kept {
            emu: Emulator::start(),
            _folder: folder,
            db,
        }
    }

    /// An `ask` (with `args` before the question) whose collector is
    /// down: its spans are kept. Returns its message id.
    fn ask(&self, args: &[&str]) -> String {
        let down = format!("http://127.0.0.1:{}", crate::support::browser::unused_port());
        let output = self
            .emu
            .command()
            .env("ANALYST_HISTORY_DB", &self.db)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &down)
            .args(["ask"])
            .args(args)
            .arg("Revenue by month?")
            .output()
            .unwrap();
        exits(&output, 0);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("kept in the history"), "{stderr}");
        stderr
            .lines()
            .find_map(|line| line.strip_prefix("message: "))
            .unwrap()
            .to_string()
    }

    /// `history push` to `collector`, each request bounded by 1 s.
    fn push(&self, collector: &Collector) -> Command {
        let mut command = analyst_process();
        command
            .env("ANALYST_HISTORY_DB", &self.db)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint())
            .env("OTEL_EXPORTER_OTLP_TIMEOUT", "1000")
            .args(["history", "push"]);
        command
    }
}

/// The bodies `collector` received, in order.
fn bodies(collector: &Collector) -> Vec<Vec<u8>> {
    collector.received().into_iter().map(|request| request.body).collect()
}

/// Every byte of the database and its write-ahead log.
fn database_bytes(db: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(db).unwrap();
    if let Ok(wal) = std::fs::read(db.with_extension("db-wal")) {
        bytes.extend(wal);
    }
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle.as_bytes())
}

#[test]
fn a_push_stopped_part_way_sends_again_at_most_the_batch_in_flight() {
    let kept = Kept::new();
    for _ in 0..3 {
        kept.ask(&[]);
    }
    // Stopped by SIGTERM while the second batch waits for its answer.
    let first = Collector::start(Answer::Status(200));
    first.then(Answer::Status(200)).then(Answer::Silent);
    let running = Running::spawn(kept.push(&first));
    first.wait_for(2);
    running.signal("TERM");
    let (exit, _, stderr, _) = running.finish(Duration::from_secs(10));
    assert_eq!(exit, Some(143), "{stderr}");
    assert!(
        stderr.contains("pushed 1 span(s)") || stderr.contains("in 1 request(s)"),
        "{stderr}"
    );
    // The next push sends the batch that was in flight and the last one.
    let second = Collector::start(Answer::Status(200));
    exits(&kept.push(&second).output().unwrap(), 0);
    let (sent, again) = (bodies(&first), bodies(&second));
    assert_eq!(again.len(), 2, "the batch in flight and the one after it");
    assert_eq!(
        again[0], sent[1],
        "the batch in flight, sent again whole (same span ids)"
    );
    assert_ne!(again[1], sent[0]);
    // Killed outright: the batch in flight is claimed until its request's
    // time has passed (1 s, and 5 more), then sent by the next push.
    for _ in 0..2 {
        kept.ask(&[]);
    }
    let third = Collector::start(Answer::Status(200));
    third.then(Answer::Status(200)).then(Answer::Silent);
    let mut running = kept.push(&third).spawn().unwrap();
    third.wait_for(2);
    running.kill().unwrap();
    let _ = running.wait();
    let fourth = Collector::start(Answer::Status(200));
    let output = kept.push(&fourth).output().unwrap();
    exits(&output, 0);
    assert_eq!(bodies(&fourth).len(), 0, "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("1 request(s) left"));
    std::thread::sleep(Duration::from_millis(6500));
    exits(&kept.push(&fourth).output().unwrap(), 0);
    assert_eq!(
        bodies(&fourth),
        [bodies(&third)[1].clone()],
        "sent once more, and only it"
    );
}

#[test]
fn a_push_to_a_slow_collector_costs_no_other_process_its_turn() {
    let kept = Kept::new();
    for _ in 0..3 {
        kept.ask(&[]);
    }
    let slow = Collector::start(Answer::Slow(Duration::from_secs(4), 200));
    let mut push = kept.push(&slow);
    push.env("OTEL_EXPORTER_OTLP_TIMEOUT", "10000");
    let running = Running::spawn(push);
    slow.wait_for(1);
    // The push waits on the collector; another process records at once.
    let started = Instant::now();
    let output = kept
        .emu
        .command()
        .env("ANALYST_HISTORY_DB", &kept.db)
        .args(["ask", "--timeout", "5s", "Orders?"])
        .output()
        .unwrap();
    exits(&output, 0);
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("locked"), "{stderr}");
    let listed = analyst()
        .env("ANALYST_HISTORY_DB", &kept.db)
        .args(["history", "--grep", "Orders", "-o", "json"])
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1, "the turn was recorded");
    let (exit, _, stderr, _) = running.finish(Duration::from_secs(30));
    assert_eq!(exit, Some(0), "{stderr}");
    assert_eq!(slow.received().len(), 3);
}

#[test]
fn a_batch_refused_for_good_is_kept_marked_and_passed_over() {
    let kept = Kept::new();
    for _ in 0..2 {
        kept.ask(&[]);
    }
    let collector = Collector::start(Answer::Status(200));
    collector.then(Answer::Status(413));
    let output = kept.push(&collector).output().unwrap();
    exits(&output, 0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: warning: a kept batch of spans was refused for good: the spans were not sent to http://127.0.0.1:[..]/v1/traces: the collector answered 413 Payload Too Large: {}; the collector refused the request; it stays in the history, marked, and is not sent again
pushed 2 span(s) in 1 request(s) to http://127.0.0.1:[..]/v1/traces; 1 request(s) left (1 refused for good by the collector)

"#]],
    );
    // It is not sent again.
    let again = kept.push(&collector).output().unwrap();
    exits(&again, 0);
    assert_eq!(
        collector.received().len(),
        2,
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

#[test]
fn forget_deletes_the_kept_spans_of_what_it_forgets() {
    let kept = Kept::new();
    let forgotten = kept.ask(&["--thread", "weekly"]);
    let other = kept.ask(&[]);
    assert!(contains(&database_bytes(&kept.db), &forgotten));
    exits(
        &analyst()
            .env("ANALYST_HISTORY_DB", &kept.db)
            .args(["history", "forget", "--thread", "weekly"])
            .output()
            .unwrap(),
        0,
    );
    let bytes = database_bytes(&kept.db);
    assert!(
        !contains(&bytes, &forgotten),
        "the forgotten turn's spans are gone from the file and its WAL"
    );
    assert!(contains(&bytes, &other));
    let collector = Collector::start(Answer::Status(200));
    exits(&kept.push(&collector).output().unwrap(), 0);
    let sent = bodies(&collector);
    assert_eq!(sent.len(), 1);
    assert!(!contains(&sent[0], &forgotten) && contains(&sent[0], &other));
    // --all leaves nothing to push.
    kept.ask(&[]);
    exits(
        &analyst()
            .env("ANALYST_HISTORY_DB", &kept.db)
            .args(["history", "forget", "--all"])
            .output()
            .unwrap(),
        0,
    );
    exits(&kept.push(&collector).output().unwrap(), 0);
    assert_eq!(bodies(&collector).len(), 1, "nothing more sent");
}
