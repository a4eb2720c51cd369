//! Re-grading saved runs: `cargo bench --bench regrade`.
//!
//! 200 cases saved as `check --save` saves them (each a real stream of the
//! service: 86 rows of store revenue, its answer in Vietnamese, 26 KB),
//! graded again by the `analyst` binary as a user runs it — `check SUITE
//! --regrade DIR` — with an answer pattern, `min_rows` and
//! `expect_faithful` on every case, no network and no history. The
//! target: under 2 s for the whole process (cli.md, "Cost and flake
//! control"). Best of three runs.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

/// The cases saved and graded again.
const CASES: usize = 200;

/// The stream every case saved.
const STREAM: &str = include_str!("../tests/fixtures/real-streams/hybrid-cubechat-store-revenue-86rows.ndjson");

/// Writes a suite of [`CASES`] cases and the folder a run saved of them.
fn saved_run(dir: &Path) {
    let mut suite =
        String::from("[defaults]\nexpect_answer = \"(?i)doanh thu\"\nmin_rows = 80\nexpect_faithful = true\n");
    let saved = dir.join("saved");
    std::fs::create_dir_all(&saved).unwrap();
    let mut streams = Vec::new();
    for case in 1..=CASES {
        let name = format!("store revenue {case}");
        suite.push_str(&format!(
            "\n[[case]]\nname = \"{name}\"\nquestion = \"Doanh thu năm 2025 theo cửa hàng?\"\n"
        ));
        let file = format!("{case:02}-store-revenue-{case}.ndjson");
        std::fs::write(saved.join(&file), STREAM).unwrap();
        streams.push(json!({
            "case": name, "run": 1, "turn": 1, "question": "Doanh thu năm 2025 theo cửa hàng?",
            "file": file, "millis": {"firstByte": 900, "answer": 41000, "total": 52000}
        }));
    }
    let manifest = json!({
        "version": 1,
        "run": {
            "startedAt": "2026-11-28T09:00:00Z", "seconds": 1800.0, "analystVersion": "0.1.0",
            "chatUrl": "https://acme.cubecloud.dev/api/v1/public/acme/agents/7/chat/stream-chat-state",
            "suite": "suite.toml"
        },
        "streams": streams,
    });
    std::fs::write(saved.join("analyst-save.json"), manifest.to_string()).unwrap();
    std::fs::write(dir.join("suite.toml"), suite).unwrap();
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    saved_run(dir.path());
    let mut best = Duration::MAX;
    let mut report = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let output = Command::new(env!("CARGO_BIN_EXE_analyst"))
            .args(["check", "--no-history", "--jobs", "4", "-o", "json", "--regrade"])
            .arg(dir.path().join("saved"))
            .arg(dir.path().join("suite.toml"))
            .env("ANALYST_EXTERNAL_ID", "bench")
            .env_remove("ANALYST_CHAT_URL")
            .output()
            .unwrap();
        best = best.min(started.elapsed());
        report = output.stdout;
        assert!(
            matches!(output.status.code(), Some(0 | 9)),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let report: serde_json::Value = serde_json::from_slice(&report).unwrap();
    let graded = report["cases"].as_array().map_or(0, Vec::len);
    assert_eq!(graded, CASES, "every case graded");
    println!(
        "regrade: {CASES} saved cases ({} KB each) graded again in {:.2} s (best of 3; target < 2 s); {} passed",
        STREAM.len() / 1024,
        best.as_secs_f64(),
        report["passed"]
    );
}
