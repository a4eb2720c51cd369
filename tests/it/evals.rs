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
    assert_whole(message.to_string(), str!["cannot compare with expect_rows: the stream holds 100 of the result's 250 rows and no data query API to fetch the rest with (set ANALYST_DATA_URL and a credential)"]);
}

#[test]
fn the_json_report_gives_every_run_with_ids_timings_usage_cost_and_medians() {
    let emu = Emulator::start();
    emu.agent(|a| a.tokens = 2000);
    let path = suite(
        "[[case]]\nname = \"twice\"\nquestion = \"Q\"\nrepeat = 2\nchat = [\"And then?\"]\n[[case]]\nname = \"once\"\nquestion = \"Q\"\n",
    );
    let config = ScratchFile::new(
        "config.toml",
        "[prices.\"m\"]\ninput = 3.0\noutput = 15.0\ncache_read = 0.3\ncache_write = 3.75\n",
    );
    let mut priced = emu.analyst();
    priced.env("ANALYST_CONFIG", &*config);
    let (code, report, stderr) = check_json(priced, &["--jobs", "1"], &path);
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
        // Both turns at the model's price: (2000 × 3 + 80 × 15 + 150 × 0.3
        // + 50 × 3.75) per million tokens, twice.
        let turn = (2000.0 * 3.0 + 80.0 * 15.0 + 150.0 * 0.3 + 50.0 * 3.75) / 1e6;
        assert!((run["cost"].as_f64().unwrap() - 2.0 * turn).abs() < 1e-9, "{run}");
    }
    assert_eq!(twice["medians"]["totalTokens"], 4560.0);
    assert_eq!(twice["medians"]["llmCalls"], 6.0);
    assert_eq!(twice["medians"]["cost"], 0.0149);
    // Five turns in all (two runs of two, one of one).
    assert_eq!(report["cost"], 0.037163);
    assert_whole(
        stderr.to_string(),
        str![[r#"
START twice (run 1 of 2)
PASS  twice (run 1 of 2)  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 4560 tokens, 6 LLM calls
START twice (run 2 of 2)
PASS  twice (run 2 of 2)  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 4560 tokens, 6 LLM calls
START once
PASS  once  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 2280 tokens, 3 LLM calls
PASS  twice  2 of 2 runs passed (median [..]s, 4560 tokens)
2 cases: 2 passed, 0 failed, 0 errors in [..], consistent 1/1, cost $0.0372, accuracy 100% (2/2)

"#]]
        .unordered(),
    );
    let page = check_page(&report.to_string());
    assert!(
        page.contains("<th>cost</th>") && page.contains("<td>$0.0149</td>"),
        "{page}"
    );
    // Without a price, no cost anywhere.
    let (_, unpriced, stderr) = check_json(emu.analyst(), &["--jobs", "1"], &path);
    assert!(unpriced.get("cost").is_none() && !stderr.contains("cost"), "{stderr}");
    assert_eq!(case(&unpriced, "once")["medians"]["cost"], Value::Null);
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

/// Runs `check` with `args` on the emulator, its agent answering on
/// `schedule` (every run of the suite below asks 11 chats: a schedule of
/// 11 starts afresh with each run), returning the exit code, stderr and
/// the JSON report.
fn check_against(
    emu: &Emulator,
    schedule: &[bool],
    tokens: u64,
    args: &[&str],
    path: &Path,
) -> (Option<i32>, String, Value) {
    emu.agent(|a| {
        a.schedule = schedule.to_vec();
        a.tokens = tokens;
    });
    let report = path.with_file_name("report.json");
    let (code, stderr) = check_into(emu, &[&["--jobs", "1"], args].concat(), path, &report);
    let document = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap_or(Value::Null);
    (code, stderr, document)
}

#[test]
fn stop_when_decided_asks_only_until_a_verdict_cannot_change() {
    let path = suite(
        r#"
[[case]]
name = "good"
question = "Q"
expect_answer = "revenue rose"
repeat = 5
pass_rate = 0.6

[[case]]
name = "bad"
question = "Q"
expect_answer = "revenue rose"
repeat = 5
pass_rate = 0.6
"#,
    );
    // Chats 1-3 answer well, the next three not: with --jobs 1, three
    // passes decide the first case and three failures the second.
    let emu = Emulator::start();
    emu.agent(|a| a.schedule = [[true; 3], [false; 3]].concat());
    let report_file = path.with_file_name("decided.json");
    let (code, stderr) = check_into(&emu, &["--jobs", "1", "--stop-when-decided"], &path, &report_file);
    assert_eq!(code, Some(9), "{stderr}");
    assert_eq!(emu.requests_on(Route::Chat).len(), 3 + 3, "{stderr}");
    let report: Value = serde_json::from_slice(&std::fs::read(&report_file).unwrap()).unwrap();
    assert_eq!(report["saved"], json!({"runs": 4, "turns": 4}));
    let good = &report["cases"][0];
    assert_eq!(
        (&good["status"], &good["passedRuns"], &good["saved"]),
        (&json!("passed"), &json!(3), &json!({"runs": 2, "turns": 2}))
    );
    assert_eq!(report["cases"][1]["status"], "failed");
    assert_eq!(report["cases"][1]["runs"].as_array().unwrap().len(), 3);
    assert_whole(
        stderr.to_string(),
        str![[r#"
...
2 cases: 1 passed, 1 failed, 0 errors in [..], consistent 1/2, 4 runs (4 turns) saved by --stop-when-decided, accuracy 50% (1/2)
analyst: error: 1 of 2 cases did not pass

"#]],
    );
}

#[test]
fn a_report_says_what_was_tested_where_and_in_which_ci_job() {
    let emu = Emulator::start();
    let path = suite(
        r#"
[[case]]
name = "on dev"
question = "Q"
branch = "dev"
"#,
    );
    let output = emu
        .analyst()
        .args(["check", "-o", "json"])
        .arg(&path)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "acme/agents")
        .env("GITHUB_SHA", "0123abc")
        .env("GITHUB_REF", "refs/pull/7/merge")
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_RUN_ID", "42")
        .output()
        .unwrap();
    exits(&output, 0);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let run = &report["run"];
    assert_eq!(
        (&run["branch"], &run["identity"], &run["shard"]),
        (&json!("dev"), &json!("external user ci-bot"), &Value::Null)
    );
    assert_eq!(
        run["ci"],
        json!({"provider": "github-actions", "repository": "acme/agents", "commit": "0123abc",
               "ref": "refs/pull/7/merge", "runUrl": "https://github.com/acme/agents/actions/runs/42"})
    );
    assert!(run["seconds"].as_f64().unwrap() >= 0.0);
    let started = chrono::DateTime::parse_from_rfc3339(run["startedAt"].as_str().unwrap()).unwrap();
    assert!((chrono::Utc::now() - started.with_timezone(&chrono::Utc)).num_minutes() < 5);
    // The summary and the page say it in one sentence, the page with a
    // link to the CI job.
    let report_file = path.with_file_name("tested.json");
    std::fs::write(&report_file, &output.stdout).unwrap();
    let render = |mode: &str| {
        let output = emu
            .analyst()
            .args(["check", "merge", "-o", mode])
            .arg(&report_file)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let page = render("html");
    assert!(page.contains(" on branch dev as external user ci-bot, from "), "{page}");
    assert!(
        page.contains("; in github-actions acme/agents at 0123abc (refs/pull/7/merge) (<a href=\"https://github.com/acme/agents/actions/runs/42\">the CI job</a>)</p>"),
        "{page}"
    );
    assert!(
        render("markdown").contains("Tested: asked http"),
        "the summary says it too"
    );
    // Outside CI, no job.
    let output = emu.analyst().args(["check", "-o", "json"]).arg(&path).output().unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["run"]["ci"], Value::Null);
}

#[test]
fn a_baseline_tells_a_regression_from_noise_and_gates_on_regressions_only() {
    let path = suite(
        r#"
[[case]]
name = "flaky"
question = "Q"
expect_answer = "revenue rose"
repeat = 5
pass_rate = 0.6

[[case]]
name = "broken"
question = "Q"
expect_answer = "revenue rose"
repeat = 5

[[case]]
name = "once"
question = "Q"
expect_answer = "revenue rose"
"#,
    );
    // The baseline: every run of every case passes.
    let emu = Emulator::start();
    let (code, _, baseline) = check_against(&emu, &[], 1000, &[], &path);
    assert_eq!(code, Some(0));
    let run = &baseline["run"];
    assert!(run["startedAt"].as_str().unwrap().ends_with('Z'), "{run}");
    assert_eq!(run["analystVersion"], env!("CARGO_PKG_VERSION"));
    assert!(
        run["chatUrl"].as_str().unwrap().ends_with("/chat/stream-chat-state"),
        "{run}"
    );
    assert_eq!(run["suite"], path.to_str().unwrap());
    let baseline_file = path.with_file_name("baseline.json");
    std::fs::write(&baseline_file, baseline.to_string()).unwrap();
    let baseline_arg = baseline_file.to_str().unwrap();

    // Now the agent answers well in the 1st, 2nd and 3rd of every five
    // chats (flaky 3/5: noise), then never (broken: 5/5 → 0/5; once: 1/1
    // → 0/1, which one run each side can never tell).
    let schedule = [true, true, true, false, false, false, false, false, false, false, false];
    let gate = [
        "--baseline",
        baseline_arg,
        "--fail-on-regression",
        "--min-accuracy",
        "0",
    ];
    let junit = path.with_file_name("junit.xml");
    let summary = path.with_file_name("summary.md");
    let files = [
        "--junit",
        junit.to_str().unwrap(),
        "--summary",
        summary.to_str().unwrap(),
    ];
    let (code, stderr, report) = check_against(&emu, &schedule, 2000, &[&gate[..], &files].concat(), &path);
    assert_eq!(code, Some(9), "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
...
regression against [..]: 1 regression, 1 stable, 1 insufficient data
  suite: insufficient data (3 of 3 cases worse, 0 better, p = 0.12); 5 cases in both runs could tell
  flaky: stable (5/5 → 3/5, p = 0.22); median tokens up 78% (1280 to 2280)
  broken: regression (5/5 → 0/5, p = 0.004); newly failing; median tokens up 78% (1280 to 2280)
  once: insufficient data (1/1 → 0/1, p = 0.5); 20 runs now, or 4 on both sides, could tell; newly failing; median tokens up 78% (1280 to 2280)
3 cases: 1 passed, 2 failed, 0 errors in [..], consistent 0/2, accuracy 33% (1/3), meets --min-accuracy 0%
analyst: error: 1 of 3 cases regressed against the baseline (--fail-on-regression)

"#]],
    );
    let compared = &report["baseline"];
    assert_eq!(compared["gates"], true);
    assert_eq!(compared["suite"]["tier"], "insufficient data");
    let broken = &compared["cases"][1];
    assert_eq!(
        (&broken["name"], &broken["tier"], &broken["before"], &broken["now"]),
        (
            &json!("broken"),
            &json!("regression"),
            &json!({"passed": 5, "runs": 5}),
            &json!({"passed": 0, "runs": 5})
        )
    );
    assert!((broken["pWorse"].as_f64().unwrap() - 1.0 / 252.0).abs() < 1e-9);
    assert_eq!(compared["regressions"][0]["name"], "broken");
    // The same tiers in JUnit properties, the summary and the page.
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(r#"<property name="baseline.suite.tier" value="insufficient data"/>"#),
        "{xml}"
    );
    let broken_case = &xml[xml.find(r#"<testcase name="broken""#).unwrap()..];
    assert!(
        broken_case.contains(r#"<property name="baseline.tier" value="regression"/>"#),
        "{xml}"
    );
    assert!(
        broken_case.contains(r#"<property name="baseline.before" value="5/5"/>"#),
        "{xml}"
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.contains(r"**Against the baseline**: suite\: insufficient data \(3 of 3 cases worse"),
        "{md}"
    );
    assert!(
        md.contains(
            r"| broken | regression | 5/5 → 0/5 | 0\.004 | newly failing; median tokens up 78% \(1280 to 2280\) |"
        ),
        "{md}"
    );
    let report_file = path.with_file_name("report.json");
    let page = emu
        .analyst()
        .args(["check", "merge", "-o", "html", "--baseline", baseline_arg])
        .arg(&report_file)
        .output()
        .unwrap();
    let page = String::from_utf8_lossy(&page.stdout);
    assert!(page.contains("<h2>Against the baseline</h2>"), "{page}");
    assert!(
        page.contains(r#"<tr><td>broken</td><td>regression</td><td>5/5 → 0/5</td><td>0.004</td>"#),
        "{page}"
    );

    // Noise alone never fails the run.
    let noise = [true, true, true, false, false, true, true, true, false, false, true];
    let (code, stderr, _) = check_against(&emu, &noise, 1000, &gate, &path);
    assert_eq!(code, Some(0), "{stderr}");

    // A baseline of another agent gates nothing, unless --baseline-any.
    let mut other = baseline.clone();
    other["run"]["chatUrl"] = json!("https://elsewhere.example/api/v1/public/x/agents/9/chat/stream-chat-state");
    std::fs::write(&baseline_file, other.to_string()).unwrap();
    let (code, stderr, report) = check_against(&emu, &schedule, 1000, &gate, &path);
    assert_eq!(code, Some(0), "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
...
unreliable baseline [..]: it asked https://elsewhere.example/api/v1/public/x/agents/9/chat/stream-chat-state, this run http://127.0.0.1:[..]/api/v1/public/acme/agents/agent-7/chat/stream-chat-state; it gates nothing (--baseline-any trusts it)
regression against [..]: 1 regression, 1 stable, 1 insufficient data
  suite: insufficient data (3 of 3 cases worse, 0 better, p = 0.12); 5 cases in both runs could tell
  flaky: stable (5/5 → 3/5, p = 0.22)
  broken: regression (5/5 → 0/5, p = 0.004); newly failing
  once: insufficient data (1/1 → 0/1, p = 0.5); 20 runs now, or 4 on both sides, could tell; newly failing
3 cases: 1 passed, 2 failed, 0 errors in [..], consistent 0/2, accuracy 33% (1/3), meets --min-accuracy 0%

"#]],
    );
    assert_eq!(report["baseline"]["gates"], false);
    let (code, _, _) = check_against(&emu, &schedule, 1000, &[&gate[..], &["--baseline-any"]].concat(), &path);
    assert_eq!(code, Some(9));

    // Too old a baseline, and one from before reports said what they ran.
    let mut old = baseline.clone();
    old["run"]["startedAt"] = json!("2026-01-01T00:00:00Z");
    std::fs::write(&baseline_file, old.to_string()).unwrap();
    let (code, stderr, _) = check_against(&emu, &schedule, 1000, &gate, &path);
    assert_eq!(code, Some(0), "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
...
unreliable baseline [..]: it is 331d old (--baseline-max-age 14d); it gates nothing (--baseline-any trusts it)
regression against [..]: 1 regression, 1 stable, 1 insufficient data
  suite: insufficient data (3 of 3 cases worse, 0 better, p = 0.12); 5 cases in both runs could tell
  flaky: stable (5/5 → 3/5, p = 0.22)
  broken: regression (5/5 → 0/5, p = 0.004); newly failing
  once: insufficient data (1/1 → 0/1, p = 0.5); 20 runs now, or 4 on both sides, could tell; newly failing
3 cases: 1 passed, 2 failed, 0 errors in [..], consistent 0/2, accuracy 33% (1/3), meets --min-accuracy 0%

"#]],
    );
    let (code, _, _) = check_against(
        &emu,
        &schedule,
        1000,
        &[&gate[..], &["--baseline-max-age", "3650d"]].concat(),
        &path,
    );
    assert_eq!(code, Some(9));
    let mut before_run = baseline.clone();
    before_run.as_object_mut().unwrap().remove("run");
    std::fs::write(&baseline_file, before_run.to_string()).unwrap();
    let (code, stderr, _) = check_against(&emu, &schedule, 1000, &gate, &path);
    assert_eq!(code, Some(0), "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
...
unreliable baseline [..]: it does not say when or against which agent it ran (written before reports had `run`); it gates nothing (--baseline-any trusts it)
regression against [..]: 1 regression, 1 stable, 1 insufficient data
  suite: insufficient data (3 of 3 cases worse, 0 better, p = 0.12); 5 cases in both runs could tell
  flaky: stable (5/5 → 3/5, p = 0.22)
  broken: regression (5/5 → 0/5, p = 0.004); newly failing
  once: insufficient data (1/1 → 0/1, p = 0.5); 20 runs now, or 4 on both sides, could tell; newly failing
3 cases: 1 passed, 2 failed, 0 errors in [..], consistent 0/2, accuracy 33% (1/3), meets --min-accuracy 0%

"#]],
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
    assert_whole(
        stderr.to_string(),
        str![[r#"
PASS  revenue  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
PASS  orders  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
FAIL  too many rows wanted  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
      expected at least 500 rows in the last SQL result; it has 12 (totalRows)
ERROR broken branch  [..]s
      first byte [..]s, first SQL [..]s; 1280 tokens, 3 LLM calls
      the stream reported an error: BadRequestError: Bad branch; chat chat-[..] aborted (exit 7)
PASS  customers  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
PASS  regions  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
PASS  months  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
PASS  products  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
8 cases: 6 passed, 1 failed, 1 errors in [..], accuracy 75% (6/8)
analyst: error: 2 of 8 cases did not pass

"#]]
        .unordered(),
    );
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
