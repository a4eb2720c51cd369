//! `analyst check` on Cube's own eval files (`examples/agents/`): read and
//! validated as Cube reads them, and graded as Cube grades — each verdict
//! and score reason reached by an emulated agent whose queries run on the
//! emulator's warehouse, as do the ground truths.

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::*;

/// The example `agents/` folder of the repository.
fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agents")
}

/// The agent's answer to each question of `examples/agents/`, by a phrase
/// of the question: right ones with other names, order and an extra
/// column; numbers off in the 5th figure (a pass) and the 3rd (a fail); a
/// missing row and column; no query; an in-stream error; a failing query.
fn answers() -> Vec<(String, Answer)> {
    let sql = |text: &str| Answer::Sql(text.to_string());
    vec![
        (
            "did each region place".into(),
            sql("SELECT COUNT(*) AS n, 'note' AS extra, region AS r FROM orders GROUP BY region ORDER BY n DESC"),
        ),
        (
            "each sales region".into(),
            sql("SELECT region, COUNT(*) FROM orders GROUP BY region"),
        ),
        (
            "revenue of each region".into(),
            sql("SELECT region, ROUND(SUM(amount), 2) FROM orders GROUP BY region"),
        ),
        (
            "each status?".into(),
            sql("SELECT status, COUNT(*) * 1.01 FROM orders GROUP BY status"),
        ),
        (
            "every region included".into(),
            sql("SELECT region, COUNT(*) FROM orders WHERE region <> 'ANZ' GROUP BY region"),
        ),
        (
            "region and count".into(),
            sql("SELECT COUNT(*) FROM orders GROUP BY region"),
        ),
        (
            "Roughly".into(),
            sql("SELECT status, COUNT(*) * 1.00001 FROM orders GROUP BY status"),
        ),
        ("biggest order".into(), Answer::NoQuery),
        (
            "returned".into(),
            Answer::StreamError("RateLimitError: the model is overloaded".into()),
        ),
        (
            "refund".into(),
            Answer::FailingSql(
                "SELECT SUM(refund) FROM refunds".into(),
                "Error: no such table: refunds".into(),
            ),
        ),
        ("margin".into(), sql("SELECT region, 1 FROM orders GROUP BY region")),
        (
            "does each status have".into(),
            sql("SELECT status, COUNT(*) FROM orders GROUP BY status"),
        ),
    ]
}

/// `analyst check` against the emulator (with the data query API) of
/// `suite`, with `args`: exit code, stdout and stderr.
fn check(emu: &Emulator, suite: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = emu
        .analyst()
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .arg("check")
        .args(args)
        .arg(suite)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn every_verdict_and_reason_is_reached_as_cube_grades() {
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = answers());
    let (code, stdout, stderr) = check(&emu, &examples(), &["-o", "json", "--certified"]);
    assert_eq!(code, Some(9), "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|err| panic!("{err}: {stderr}"));
    let expected: [(&str, &str, Option<&str>); 13] = [
        ("orders_by_region", "pass", None),
        ("revenue_by_region", "pass", None),
        ("orders_by_status", "fail", Some("Value mismatch")),
        ("regions_without_anz", "fail", Some("Row count mismatch")),
        ("order_count_with_region", "fail", Some("Missing columns")),
        ("status_counts_estimate", "pass", None),
        ("biggest_order", "review", None),
        ("returned_orders", "error", Some("Agent error")),
        ("refunds", "error", Some("Query error")),
        ("margin_by_region", "error", Some("Ground truth not found")),
        ("sales/orders_by_region", "pass", None),
        ("certified/revenue_by_region", "pass", None),
        ("certified/orders_per_status", "pass", None),
    ];
    for (name, verdict, reason) in expected {
        let case = case(&report, name);
        assert_eq!(case["verdict"], verdict, "{name}: {case}");
        assert_eq!(case["scoreReason"].as_str(), reason, "{name}: {case}");
        assert_eq!(case["status"] == "passed", verdict == "pass", "{name}: {case}");
    }
    assert_eq!(report["cases"].as_array().unwrap().len(), expected.len());
    assert_eq!(report["accuracy"], "46% (6/13)");
    assert!(stderr.contains("accuracy 46% (6/13)"), "{stderr}");

    // The analysis names the counts, or the column, row and both values.
    let analysis = |name: &str| case(&report, name)["analysis"].as_str().unwrap().to_string();
    assert_eq!(
        analysis("regions_without_anz"),
        "the agent returned 4 rows, the ground truth has 5"
    );
    assert!(
        analysis("orders_by_status").starts_with("column 2 of the ground truth (orders) has no match: row "),
        "{}",
        analysis("orders_by_status")
    );
    assert!(analysis("refunds").contains("no such table: refunds"));
    // What ran on each side is in the report; Markdown comments are not SQL.
    let certified = case(&report, "revenue_by_region");
    assert_eq!(
        certified["groundTruth"],
        "SELECT region, ROUND(SUM(amount), 2) AS revenue\nFROM orders\nGROUP BY region"
    );
    assert_eq!(
        certified["agentSql"],
        "SELECT region, ROUND(SUM(amount), 2) FROM orders GROUP BY region"
    );
}

#[test]
fn a_failing_ground_truth_is_an_error_verdict_and_the_others_still_run() {
    let dir = Scratch::new();
    std::fs::write(
        dir.join("eval_questions.yml"),
        "eval_questions:\n  - name: broken\n    question: How many orders did each region place?\n    sql: SELECT nope FROM nowhere\n  - name: fine\n    question: How many orders did each region place, again?\n    sql: SELECT region, COUNT(*) FROM orders GROUP BY region\n",
    )
    .unwrap();
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = answers());
    let junit = dir.join("junit.xml");
    let (code, stdout, stderr) = check(
        &emu,
        &dir.join("eval_questions.yml"),
        &["-o", "json", "--junit", junit.to_str().unwrap()],
    );
    assert_eq!(code, Some(9), "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(case(&report, "broken")["scoreReason"], "Ground truth query failed");
    assert_eq!(case(&report, "fine")["verdict"], "pass");
    let xml = std::fs::read_to_string(junit).unwrap();
    assert!(xml.contains("Ground truth query failed: the ground truth"), "{xml}");
}

/// Writes `files` (path, text) under a fresh `agents/` folder; returns the
/// folder that holds it (a repository root).
fn repository(files: &[(&str, &str)]) -> Scratch {
    let dir = Scratch::new();
    for (path, text) in files {
        let path = dir.join("agents").join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn what_the_rules_forbid_is_refused_with_file_and_line_before_anything_is_sent() {
    let cases: [(&str, &str, &str); 5] = [
        (
            "eval_questions:\n  - name: a\n    question: Q?\n    sql: SELECT 1\n    certifiedQuery: b\n",
            "eval_questions.yml:2:",
            "both sql and certifiedQuery",
        ),
        (
            "eval_questions:\n  - name: a\n    question: Q?\n",
            "eval_questions.yml:2:",
            "no ground truth",
        ),
        (
            "eval_questions:\n  - name: a\n    sql: SELECT 1\n",
            "eval_questions.yml:2:",
            "has no question",
        ),
        (
            "eval_questions:\n  - name: a\n    question: Q?\n    sql: SELECT 1\n  - name: a\n    question: R?\n    sql: SELECT 2\n",
            "eval_questions.yml:5:",
            "used twice in its space",
        ),
        (
            "eval_questions:\n  - name: a\n    question: [unclosed\n",
            "eval_questions.yml:",
            "not valid eval YAML",
        ),
    ];
    let emu = Emulator::start();
    for (text, place, message) in cases {
        let root = repository(&[("eval_questions.yml", text)]);
        let (code, _, stderr) = check(&emu, &root, &[]);
        assert_eq!(code, Some(2), "{text}: {stderr}");
        assert!(stderr.contains(place) && stderr.contains(message), "{text}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    }
    assert!(emu.requests().is_empty(), "nothing was sent");
    // The same name in two spaces is two questions.
    let root = repository(&[
        (
            "eval_questions.yml",
            "eval_questions:\n  - name: a\n    question: Q?\n    sql: SELECT 1\n",
        ),
        (
            "eval_questions/other.yml",
            "space: other\neval_questions:\n  - name: a\n    question: Q?\n    sql: SELECT 1\n",
        ),
    ]);
    let (code, stdout, stderr) = check(&emu, &root, &["-o", "json", "--filter", "^nothing$"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("\"cases\": []"), "{stdout}");
    let (_, stdout, _) = check(&emu, &root, &["-o", "json"]);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let names: Vec<&str> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| case["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "other/a"]);
}

#[test]
fn shards_repeats_and_merge_keep_the_verdicts_and_the_accuracy() {
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = answers());
    let dir = Scratch::new();
    let mut shards = Vec::new();
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let (code, stdout, stderr) = check(
            &emu,
            &examples(),
            &["-o", "json", "--repeat", "2", "--pass-rate", "0.5", "--shard", &shard],
        );
        assert!(matches!(code, Some(0 | 9)), "{stderr}");
        let path = dir.join(format!("shard-{k}.json"));
        std::fs::write(&path, stdout).unwrap();
        shards.push(path);
    }
    let output = emu
        .analyst()
        .args(["check", "merge", "-o", "json"])
        .args(&shards)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(9));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["cases"].as_array().unwrap().len(), 11);
    assert_eq!(report["accuracy"], "36% (4/11)");
    let status = case(&report, "orders_by_status");
    assert_eq!(status["runs"].as_array().unwrap().len(), 2);
    assert_eq!(status["verdict"], "fail");
    assert_eq!(status["runs"][1]["scoreReason"], "Value mismatch");
}
