//! `analyst check` as an agent eval: answers compared with a reference
//! query run through the data query API (or rows in the suite), per-run
//! reports with ids, timings and usage, baselines, shards merged into one
//! report, and the validation of the new suite fields.

use crate::support::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The query the emulated agent answers with: five regions.
const BY_REGION: &str =
    "SELECT region, COUNT(*) AS orders, ROUND(SUM(amount), 2) AS revenue FROM orders GROUP BY region ORDER BY region";

/// Writes `text` as a suite file in a fresh folder.
fn suite(text: &str) -> ScratchFile {
    ScratchFile::new("evals.toml", text)
}

/// `analyst` against the emulator, with its data query API set up.
fn analyst_with_data(emu: &Emulator) -> assert_cmd::Command {
    let mut command = emu.analyst();
    command
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET);
    command
}

/// Runs `check -o json` with `args`; the exit code, the report and stderr.
fn check_json(mut command: assert_cmd::Command, args: &[&str], path: &Path) -> (Option<i32>, Value, String) {
    let output = command
        .args(["check", "-o", "json"])
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|err| panic!("{err}: {stderr}"));
    (output.status.code(), report, stderr)
}

#[test]
fn answers_are_compared_with_the_reference_query_once_per_case() {
    let emu = Emulator::start();
    emu.agent(|a| a.warehouse_sql = Some(BY_REGION.into()));
    // The reference has other aliases and no ORDER BY: rows are compared
    // sorted and by position, whatever the columns are called.
    let path = suite(
        r#"
[defaults]
reference_sql = "SELECT region, COUNT(*), ROUND(SUM(amount), 2) FROM orders GROUP BY region"

[[case]]
name = "right"
question = "Revenue by region?"
repeat = 3

[[case]]
name = "aliased"
question = "Revenue by region, aliased?"

[[case]]
name = "shuffled"
question = "Revenue by region, shuffled?"

[[case]]
name = "shuffled but ordered"
question = "Revenue by region, shuffled?"
ordered = true

[[case]]
name = "slightly off"
question = "Revenue by region, slightly?"

[[case]]
name = "slightly off within tolerance"
question = "Revenue by region, slightly?"
tolerance = 0.001

[[case]]
name = "badly off"
question = "Revenue by region, badly?"
tolerance = 0.001
"#,
    );
    let (code, report, stderr) = check_json(analyst_with_data(&emu), &[], &path);
    assert_eq!(code, Some(9), "{stderr}");
    for name in ["right", "aliased", "shuffled", "slightly off within tolerance"] {
        assert_eq!(case(&report, name)["status"], "passed", "{name}: {stderr}");
    }
    let (_, reference) = warehouse::query(BY_REGION);
    let first = &reference[0];
    let messages = |name: &str| case(&report, name)["messages"][0].as_str().unwrap().to_string();
    assert_eq!(
        messages("shuffled but ordered"),
        format!(
            "rows differ from reference_sql: row 1, column 1: the agent's result has {}, expected {}",
            reference[4][0], first[0]
        )
    );
    let slightly = messages("slightly off");
    assert!(
        slightly
            .starts_with("rows differ from reference_sql: row 1 (both sorted), column 3: the agent's result has \""),
        "{slightly}"
    );
    assert!(slightly.ends_with(&format!("expected {}", first[2])), "{slightly}");
    assert!(messages("badly off").contains("column 3"), "{}", messages("badly off"));
    // One reference query per case, however often it runs.
    let queries = emu.requests_on(Route::Data);
    assert_eq!(queries.len(), 7, "once per case, not per run");
}

#[test]
fn rows_written_in_the_suite_compare_too_and_a_truncated_result_is_fetched_whole() {
    let emu = Emulator::start();
    let (_, rows) = warehouse::query(BY_REGION);
    // Numbers written as numbers compare with the strings the agent sends.
    let inline: Vec<String> = rows
        .iter()
        .map(|row| {
            format!(
                "[{}, {}, {}]",
                row[0],
                row[1].as_str().unwrap(),
                row[2].as_str().unwrap()
            )
        })
        .collect();
    emu.agent(|a| a.warehouse_sql = Some(BY_REGION.into()));
    let path = suite(&format!(
        "[[case]]\nname = \"inline\"\nquestion = \"Q\"\nexpect_rows = [{}]\n\n[[case]]\nname = \"one row short\"\nquestion = \"Q\"\nexpect_rows = [{}]\n",
        inline.join(", "),
        inline[..4].join(", ")
    ));
    let (code, report, stderr) = check_json(emu.analyst(), &[], &path);
    assert_eq!(code, Some(9), "{stderr}");
    assert_eq!(case(&report, "inline")["status"], "passed", "{stderr}");
    assert_eq!(
        case(&report, "one row short")["messages"][0],
        "rows differ from expect_rows: the agent's result has 5 rows, expected 4"
    );
    emu.expect(Route::Data, 0);

    // 250 rows, of which the stream holds 100: the rest comes from the
    // data query API before the comparison.
    let emu = Emulator::start();
    let sql = "SELECT id, amount FROM orders WHERE id <= 250 ORDER BY id";
    emu.agent(|a| a.warehouse_sql = Some(sql.into()));
    let path = suite(&format!(
        "[[case]]\nname = \"long\"\nquestion = \"Q\"\nreference_sql = \"{sql}\"\nordered = true\n"
    ));
    let (code, report, stderr) = check_json(analyst_with_data(&emu), &[], &path);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(case(&report, "long")["status"], "passed");
    assert_eq!(
        emu.requests_on(Route::Data).len(),
        2,
        "the reference, and the agent's rows"
    );

    // Without the data query API, a truncated result cannot be compared.
    let path = suite("[[case]]\nname = \"long\"\nquestion = \"Q\"\nexpect_rows = [[1, 2]]\n");
    let (code, report, _) = check_json(emu.analyst(), &[], &path);
    assert_eq!(code, Some(9));
    let message = case(&report, "long")["messages"][0].as_str().unwrap();
    assert!(
        message.contains("the stream holds 100 of the result's 250 rows and no data query API"),
        "{message}"
    );
}

#[test]
fn the_json_report_gives_every_run_with_ids_timings_usage_and_medians() {
    let emu = Emulator::start();
    emu.agent(|a| a.tokens = 2000);
    let path = suite(
        "[[case]]\nname = \"twice\"\nquestion = \"Q\"\nrepeat = 2\nchat = [\"And then?\"]\n[[case]]\nname = \"once\"\nquestion = \"Q\"\n",
    );
    let (code, report, stderr) = check_json(emu.analyst(), &["--jobs", "1"], &path);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!((&report["passed"], &report["exitCode"]), (&json!(2), &json!(0)));
    let twice = case(&report, "twice");
    assert_eq!(
        (&twice["index"], &twice["passRate"], &twice["requiredPassRate"]),
        (&json!(1), &json!(1.0), &json!(1.0))
    );
    let bodies = emu.chat_bodies();
    let runs = twice["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (i, run) in runs.iter().enumerate() {
        assert_eq!(run["run"], i + 1);
        // Two turns a run: each message id is the one sent.
        let ids = run["messageIds"].as_array().unwrap();
        assert_eq!(ids.len(), 2);
        assert_eq!(ids[0], bodies[2 * i]["messageId"]);
        assert_eq!(ids[1], bodies[2 * i + 1]["messageId"]);
        assert_eq!(run["messageId"], ids[1]);
        assert_eq!(bodies[2 * i + 1]["chatId"], run["chatId"]);
        // Both turns' usage, summed.
        assert_eq!(
            run["usage"],
            json!({"inputTokens": 4000, "outputTokens": 160, "cacheReadTokens": 300,
                   "cacheWriteTokens": 100, "totalTokens": 4560, "llmCalls": 6})
        );
        let seconds = &run["seconds"];
        let first_byte = seconds["firstByte"].as_f64().unwrap();
        assert!(first_byte <= seconds["answer"].as_f64().unwrap());
        assert!(seconds["answer"].as_f64().unwrap() <= seconds["total"].as_f64().unwrap());
        assert_eq!((&run["status"], &run["exitCode"]), (&json!("passed"), &json!(0)));
    }
    assert_eq!(twice["medians"]["totalTokens"], 4560.0);
    assert_eq!(twice["medians"]["llmCalls"], 6.0);
    assert!(stderr.contains("PASS  twice (run 2 of 2)  "), "{stderr}");
    assert!(stderr.contains("4560 tokens, 6 LLM calls"), "{stderr}");
}

/// Runs `check -o json` with `args` into `report`, returning the exit code
/// and stderr.
fn check_into(emu: &Emulator, args: &[&str], path: &Path, report: &Path) -> (Option<i32>, String) {
    let output = emu
        .analyst()
        .args(["check", "-o", "json"])
        .args(args)
        .arg(path)
        .output()
        .unwrap();
    std::fs::write(report, &output.stdout).unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_baseline_shows_what_regressed_and_can_fail_the_run() {
    let cases = |min_rows: u32| {
        format!(
            r#"
[[case]]
name = "flaky"
question = "Q"
expect_answer = "revenue rose"
repeat = 5
pass_rate = 0.6

[[case]]
name = "tokens"
question = "Q"

[[case]]
name = "rows"
question = "Q"
min_rows = {min_rows}
"#
        )
    };
    let emu = Emulator::start();
    let path = suite(&cases(1));
    let baseline = path.with_file_name("baseline.json");
    assert_eq!(check_into(&emu, &["--jobs", "1"], &path, &baseline).0, Some(0));

    // The same suite against a flaky agent that spends twice the tokens,
    // one case now asking for more rows than come.
    let emu = Emulator::start();
    emu.agent(|a| {
        a.flaky = true;
        a.tokens = 2000;
    });
    let path = suite(&cases(99));
    let report = path.with_file_name("report.json");
    let baseline_arg = baseline.to_str().unwrap();
    let (code, stderr) = check_into(&emu, &["--jobs", "1", "--baseline", baseline_arg], &path, &report);
    assert_eq!(code, Some(9), "the rows case fails: {stderr}");
    assert!(stderr.contains("3 cases regressed against"), "{stderr}");
    assert!(
        stderr.contains("  flaky: pass rate dropped from 1.00 to 0.60; median tokens up 78% (1280 to 2280)"),
        "{stderr}"
    );
    assert!(stderr.contains("  rows: newly failing;"), "{stderr}");
    let document: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let regressions = document["baseline"]["regressions"].as_array().unwrap();
    assert_eq!(regressions.len(), 3);
    assert_eq!(regressions[1]["name"], "tokens");
    assert_eq!(
        regressions[1]["reasons"],
        json!(["median tokens up 78% (1280 to 2280)"])
    );

    // Regressions alone exit 0, or 9 with --fail-on-regression.
    let passing = suite(&cases(1));
    let run = |extra: &[&str]| {
        let emu = Emulator::start();
        emu.agent(|a| a.tokens = 2000);
        let output = emu
            .analyst()
            .args(["check", "--baseline", baseline_arg])
            .args(extra)
            .arg(&passing)
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    assert_eq!(run(&[]).0, Some(0));
    let (code, stderr) = run(&["--fail-on-regression"]);
    assert_eq!(code, Some(9), "{stderr}");
    assert!(
        stderr.contains("3 of 3 cases regressed against the baseline (--fail-on-regression)"),
        "{stderr}"
    );

    // A baseline that is not a report is refused before anything runs.
    let emu = Emulator::start();
    let output = emu
        .analyst()
        .args(["check", "--baseline"])
        .arg(&path)
        .arg(&path)
        .output()
        .unwrap();
    exits(&output, 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a report of 'analyst check -o json'"));
    emu.expect(Route::Chat, 0);
}

/// Eight cases: some pass, one fails, one errors; names spread over shards.
const SHARDED: &str = r#"
[[case]]
name = "revenue"
question = "Revenue?"
expect_answer = "revenue"
[[case]]
name = "orders"
question = "Orders?"
[[case]]
name = "too many rows wanted"
question = "Q"
min_rows = 500
[[case]]
name = "broken branch"
question = "Q"
branch = "broken"
[[case]]
name = "customers"
question = "Customers?"
[[case]]
name = "regions"
question = "Regions?"
[[case]]
name = "months"
question = "Months?"
[[case]]
name = "products"
question = "Products?"
"#;

/// What a report says of its cases, without timings and ids: name, index,
/// verdict, reasons, exit code, pass rate.
fn verdicts(report: &Value) -> Vec<Value> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            json!([
                case["name"],
                case["index"],
                case["status"],
                // The chat a run used differs from run to run (an error's
                // message names the chat it aborted).
                case["messages"][0].as_str().map(|m| {
                    let message = m.split(" (exit").next().unwrap();
                    regex::Regex::new(r"chat-\d+")
                        .unwrap()
                        .replace_all(message, "chat-N")
                        .into_owned()
                }),
                case["exitCode"],
                case["passRate"]
            ])
        })
        .collect()
}

#[test]
fn four_shards_merge_into_the_report_of_one_unsharded_run() {
    let emu = Emulator::start();
    let path = suite(SHARDED);
    let dir = path.parent().unwrap().to_path_buf();
    let (code, whole, _) = check_json(emu.analyst(), &[], &path);
    assert_eq!(code, Some(9));
    let mut shards: Vec<PathBuf> = Vec::new();
    for k in 1..=4 {
        let report = dir.join(format!("shard-{k}.json"));
        let shard = format!("{k}/4");
        check_into(&emu, &["--shard", &shard], &path, &report);
        shards.push(report);
    }
    let junit = dir.join("merged.xml");
    let output = emu
        .analyst()
        .args(["check", "merge", "--junit"])
        .arg(&junit)
        .args(&shards)
        .args(["-o", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), code, "the unsharded run's exit code: {stderr}");
    let merged: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(verdicts(&merged), verdicts(&whole));
    for count in ["passed", "failed", "errors", "exitCode"] {
        assert_eq!(merged[count], whole[count], "{count}");
    }
    assert_eq!(merged["shard"], Value::Null);
    assert!(stderr.contains("8 cases: 6 passed, 1 failed, 1 errors"), "{stderr}");
    assert!(stderr.contains("FAIL  too many rows wanted"), "{stderr}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    let document = roxmltree::Document::parse(&xml).unwrap();
    let names: Vec<&str> = document
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|n| n.attribute("name").unwrap())
        .collect();
    assert_eq!(names[..3], ["revenue", "orders", "too many rows wanted"], "suite order");
    // TAP of the merge, too.
    let tap = emu
        .analyst()
        .args(["check", "merge", "--tap"])
        .args(&shards)
        .output()
        .unwrap();
    exits(&tap, 9);
    assert!(String::from_utf8_lossy(&tap.stdout).starts_with("TAP version 13\n1..8\nok 1 - revenue\n"));

    // A missing or repeated shard is refused.
    let refused = |reports: &[&PathBuf], message: &str| {
        let output = emu.analyst().args(["check", "merge"]).args(reports).output().unwrap();
        exits(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{message}: {stderr}");
    };
    refused(
        &[&shards[0], &shards[1], &shards[3]],
        "shard 3/4 missing: merge the reports of all 4 shards",
    );
    refused(&[&shards[0], &shards[0]], "are both shard 1/4");
    let whole_report = dir.join("whole.json");
    std::fs::write(&whole_report, whole.to_string()).unwrap();
    refused(&[&whole_report, &whole_report], "is in another report too");
}

#[test]
fn new_fields_are_validated_with_file_line_and_field_before_anything_runs() {
    let emu = Emulator::start();
    for (field, message) in [
        (
            "tolerance = -0.1",
            ":4: field tolerance: tolerance must be a relative difference of 0 or more",
        ),
        (
            "reference_sql = \"SELECT 1\"",
            ":4: field reference_sql: it runs through the data query API: no data query URL",
        ),
        (
            "reference_sql = \"SELECT 1\"\nexpect_rows = [[1]]",
            ":4: field reference_sql: give reference_sql or expect_rows, not both",
        ),
        ("expect_rows = [1, 2]", ":4: field expect_rows: invalid type"),
        ("pass_rate = -1", ":4: field pass_rate: pass_rate must be from 0 to 1"),
        ("orderd = true", ":4: field orderd: unknown field `orderd`"),
    ] {
        let bad = suite(&format!("[[case]]\nname = \"bad\"\nquestion = \"Q\"\n{field}\n"));
        let output = emu.analyst().arg("check").arg(&bad).output().unwrap();
        exits(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{field}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    }
    // With the data query API set up, the same reference is fine, and the
    // secret never shows.
    let with_reference = suite("[[case]]\nname = \"ok\"\nquestion = \"Q\"\nreference_sql = \"SELECT 1\"\n");
    let output = analyst_with_data(&emu)
        .args(["check", "--shard", "5/4"])
        .arg(&with_reference)
        .output()
        .unwrap();
    exits(&output, 2);
    assert!(!String::from_utf8_lossy(&output.stderr).contains(DATA_SECRET));
    emu.expect(Route::Chat, 0);
    emu.expect(Route::Data, 0);
}
