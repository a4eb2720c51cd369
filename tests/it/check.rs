//! `analyst check SUITE.toml`: parallel cases, follow-up conversations,
//! expectations of each kind, a case that times out (its chat aborted), a
//! malformed suite refused before anything runs, and the reports: JUnit XML
//! parsed as XML, TAP, JSON, saved streams that replay.

use std::time::Duration;

use crate::support::*;
use predicates::prelude::*;
use serde_json::{json, Value};

/// The permission bits of the file at `path`.
fn mode_of(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Writes `text` as a suite file in a fresh folder.
fn suite(text: &str) -> ScratchFile {
    ScratchFile::new("smoke.toml", text)
}

const PASSING: &str = r#"
[defaults]
timeout = "30s"
expect_tool = ["semanticSqlApi"]

[[case]]
name = "revenue by month"
question = "What was our revenue by month?"
expect_answer = "(?i)december"
expect_sql = "FROM orders_view"
min_rows = 12

[[case]]
name = "meta search"
question = "Which views are there?"
expect_tool = ["cubeMeta"]

[[case]]
name = "follow-up"
question = "Revenue by month?"
chat = ["And by quarter?", { question = "Which was best?", expect_answer = "Answer 3" }]

[[case]]
name = "internal user"
question = "Revenue?"
internal_id = "ana@acme.example"
"#;

#[test]
fn a_passing_suite_runs_cases_in_parallel_and_exits_0() {
    let emu = Emulator::start();
    emu.agent(|a| a.delay = Duration::from_millis(100));
    let path = suite(PASSING);
    let output = emu
        .analyst()
        .args(["check", "--jobs", "3"])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 0);
    // The cases finish in any order.
    assert_whole(
        stderr.as_ref(),
        str![[r#"
START revenue by month
START meta search
START follow-up
PASS  meta search  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
START internal user
PASS  revenue by month  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
PASS  internal user  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
PASS  follow-up  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 3840 tokens, 9 LLM calls
4 cases: 4 passed, 0 failed, 0 errors in [..], accuracy 100% (4/4)

"#]]
        .unordered(),
    );
    assert!(output.stdout.is_empty(), "stdout stays empty without --tap or -o json");
    let most = emu.most_open_chats();
    assert!(
        (2..=3).contains(&most),
        "at most --jobs chats at once, and more than one: {most}"
    );
    // The follow-up turns continued the first turn's chat.
    let bodies = emu.chat_bodies();
    let follow_ups: Vec<&Value> = bodies.iter().filter(|b| b.get("chatId").is_some()).collect();
    assert_eq!(follow_ups.len(), 2);
    assert_eq!(follow_ups[0]["chatId"], follow_ups[1]["chatId"]);
    assert!(bodies
        .iter()
        .any(|b| b["sessionSettings"] == json!({"internalId": "ana@acme.example"})));
}

#[test]
fn unmet_expectations_fail_their_case_with_the_reason_and_exit_9() {
    let emu = Emulator::start();
    let path = suite(
        r#"
[[case]]
name = "wrong answer"
question = "Revenue?"
expect_answer = "churn"

[[case]]
name = "wrong sql and tool"
question = "Revenue?"
expect_sql = "FROM customers"
expect_tool = ["semanticSearch"]

[[case]]
name = "too few rows"
question = "Revenue?"
min_rows = 1000

[[case]]
name = "fine"
question = "Revenue?"
"#,
    );
    // One case at a time, so that stderr is one text, compared whole (the
    // timings aside): a line too many, missing or reworded fails.
    let output = emu
        .analyst()
        .args(["check", "--jobs", "1"])
        .arg(&path)
        .output()
        .unwrap();
    exits(&output, 9);
    // The timings go on a line of their own under the verdict.
    let timing = "[..]s\n      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls";
    let expected = format!(
        r#"START wrong answer
FAIL  wrong answer  {timing}
      expected the answer to match /churn/, got "Answer 1: revenue rose every month; December was the best month (€2.4M)."
START wrong sql and tool
FAIL  wrong sql and tool  {timing}
      expected a SQL query matching /FROM customers/; the query was "SELECT orders_view.month, MEASURE(orders_view.revenue), MEASURE(orders_view.count) FROM orders_view GROUP BY 1 ORDER BY …"
      expected a call to tool semanticSearch; the agent called: semanticMeta, semanticSqlApi
START too few rows
FAIL  too few rows  {timing}
      expected at least 1000 rows in the last SQL result; it has 12 (totalRows)
START fine
PASS  fine  {timing}
4 cases: 1 passed, 3 failed, 0 errors in [..], accuracy 25% (1/4)
analyst: error: 3 of 4 cases did not pass
"#
    );
    snapbox::assert_data_eq!(String::from_utf8_lossy(&output.stderr).into_owned(), expected);
}

#[test]
fn a_case_that_times_out_is_aborted_and_is_an_error() {
    let emu = Emulator::start();
    emu.agent(|a| {
        a.padding = 200;
        a.delay = Duration::from_millis(100);
    });
    let path = suite("[[case]]\nname = \"slow\"\nquestion = \"Q\"\ntimeout = \"1s\"\n");
    let output = emu.analyst().arg("check").arg(&path).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The case's own timeout is its error verdict: exit 9, as in Cube's folders.
    exits(&output, 9);
    assert_whole(
        stderr.as_ref(),
        str![[r#"
START slow
ERROR slow  [..]s
      first byte [..]s
      timed out after 1s (the case's timeout); chat chat-[..] aborted (exit 124)
1 cases: 0 passed, 0 failed, 1 errors in [..], accuracy 0% (0/1)
analyst: error: 1 of 1 cases did not pass

"#]]
        .unordered(),
    );
    let aborts: Vec<Value> = emu.requests_on(Route::Abort).iter().map(Recorded::json).collect();
    assert_eq!(
        aborts,
        [json!({"chatId": "chat-0001", "sessionSettings": {"externalId": "ci-bot"}})]
    );
}

#[test]
fn when_every_case_fails_the_same_way_that_is_the_exit_code() {
    let emu = Emulator::start();
    let path = suite("[[case]]\nname = \"a\"\nquestion = \"Q\"\n[[case]]\nname = \"b\"\nquestion = \"Q\"\n");
    emu.analyst()
        .env("ANALYST_API_KEY", "sk-revoked-key")
        .arg("check")
        .arg(&path)
        .assert()
        .code(3)
        .stderr(predicate::str::contains("401 Unauthorized").and(predicate::str::contains("sk-revoked-key").not()));
}

#[test]
fn a_malformed_suite_is_refused_before_anything_runs() {
    let emu = Emulator::start();
    let cases = [
        (
            "[[case]]\nname = \"a\"\nquestion = \"Q\"\nmin_rows = \"many\"\n",
            "smoke.toml:4: field min_rows: invalid type",
        ),
        (
            "[[case]]\nname = \"a\"\nqestion = \"Q\"\n",
            "smoke.toml:3: field qestion: unknown field `qestion`",
        ),
        (
            "[[case]]\nname = \"a\"\nquestion = \"Q\"\nexpect_answer = \"([\"\n",
            "smoke.toml:4: field expect_answer:",
        ),
        ("[[case]]\nname = \"a\"\n", "case \"a\": missing field question"),
        (
            "[[case]]\nname = \"a\"\nquestion = \"Q\"\n[[case]]\nname = \"a\"\nquestion = \"R\"\n",
            "another case has the same name",
        ),
        (
            "[defaults]\nquestion = \"Q\"\n[[case]]\nname = \"a\"\nquestion = \"Q\"\n",
            "[defaults] cannot set question",
        ),
        ("[[case]\nname = \"a\"\n", "smoke.toml:1:"),
    ];
    for (text, message) in cases {
        let path = suite(text);
        emu.analyst()
            .arg("check")
            .arg(&path)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message).and(predicate::str::contains(path.display().to_string())));
    }
    emu.analyst().args(["check", "/no/such/suite.toml"]).assert().code(2);
    assert!(emu.requests().is_empty(), "nothing ran");
}

#[test]
fn junit_xml_has_one_testcase_per_case_with_failures_errors_and_times() {
    let emu = Emulator::start();
    let path = suite(
        r#"
[[case]]
name = "passes"
question = "Q"
[[case]]
name = "fails <on purpose>"
question = "Q"
expect_answer = "never & nowhere"
[[case]]
name = "errors"
question = "Q"
branch = "broken"
"#,
    );
    let junit = path.with_file_name("report.xml");
    let output = emu
        .analyst()
        .args(["check", "--junit"])
        .arg(&junit)
        .arg(&path)
        .output()
        .unwrap();
    exits(&output, 9);
    assert_eq!(mode_of(&junit), 0o600, "a report is private");
    let xml = std::fs::read_to_string(&junit).unwrap();
    let document = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let root = document.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    assert_eq!(
        (
            root.attribute("tests"),
            root.attribute("failures"),
            root.attribute("errors")
        ),
        (Some("3"), Some("1"), Some("1"))
    );
    let cases: Vec<_> = document.descendants().filter(|n| n.has_tag_name("testcase")).collect();
    assert_eq!(cases.len(), 3);
    assert_eq!(cases[1].attribute("name"), Some("fails <on purpose>"));
    for case in &cases {
        let time: f64 = case.attribute("time").unwrap().parse().unwrap();
        assert!(time >= 0.0);
    }
    assert!(cases[0]
        .children()
        .all(|c| !c.has_tag_name("failure") && !c.has_tag_name("error")));
    let failure = cases[1]
        .children()
        .find(|c| c.has_tag_name("failure"))
        .expect("a failure element");
    assert!(failure.attribute("message").unwrap().contains("/never & nowhere/"));
    let error = cases[2]
        .children()
        .find(|c| c.has_tag_name("error"))
        .expect("an error element");
    assert!(error
        .attribute("message")
        .unwrap()
        .contains("BadRequestError: Bad branch"));
    assert_eq!(error.attribute("type"), Some("exit 7"));
    // The figures are testcase properties: the run's ids, timings and usage.
    let properties: std::collections::HashMap<&str, &str> = cases[0]
        .descendants()
        .filter(|n| n.has_tag_name("property"))
        .map(|n| (n.attribute("name").unwrap(), n.attribute("value").unwrap()))
        .collect();
    assert!(properties["run.1.chatId"].starts_with("chat-"), "{properties:?}");
    assert!(properties["run.1.messageId"].ends_with("-message"), "{properties:?}");
    assert!(properties["run.1.firstByte"].parse::<f64>().unwrap() >= 0.0);
    assert_eq!(properties["run.1.totalTokens"], "1280");
    assert_eq!(properties["run.1.cacheReadTokens"], "150");
    assert_eq!(properties["median.llmCalls"], "3");
    assert_eq!(properties["passRate"], "1");
}

#[test]
fn tap_and_json_go_to_stdout() {
    let emu = Emulator::start();
    let path =
        suite("[[case]]\nname = \"ok\"\nquestion = \"Q\"\n[[case]]\nname = \"no\"\nquestion = \"Q\"\nmin_rows = 99\n");
    let tap = emu.analyst().args(["check", "--tap"]).arg(&path).output().unwrap();
    let tap = String::from_utf8(tap.stdout).unwrap();
    assert!(tap.starts_with("TAP version 13\n1..2\nok 1 - ok\n  ---\n"), "{tap}");
    assert!(
        tap.contains("\nnot ok 2 - no\n  ---\n  message: \"expected at least 99 rows"),
        "{tap}"
    );
    assert!(tap.contains("  exitCode: 9\n"), "{tap}");
    // Each YAML block is YAML, each figure once, numbers as numbers.
    for block in tap.split("  ---\n").skip(1) {
        let block = block.split("  ...\n").next().unwrap();
        let mut keys: Vec<&str> = block.lines().map(|line| line.split(':').next().unwrap()).collect();
        let all = keys.len();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), all, "a key repeated:\n{block}");
        let figures: Value = serde_saphyr::from_str(block).unwrap_or_else(|err| panic!("{err}:\n{block}"));
        assert_eq!(figures["run.1.totalTokens"], json!(1280), "{block}");
        assert!(
            figures["passRate"].is_number() && figures["median.duration"].is_number(),
            "{block}"
        );
        assert!(figures["run.1.chatId"].is_string(), "{block}");
    }
    // And the whole document, times and ids aside: a figure added, lost or
    // renamed fails here.
    let case = |head: &str, fields: &[&str], status: &str, exit: &str| {
        let run = [
            "median.duration: [..]",
            "median.firstByte: [..]",
            "median.totalTokens: 1280.0",
            "median.llmCalls: 3.0",
            &format!("run.1.status: \"{status}\""),
            &format!("run.1.exitCode: {exit}"),
            "run.1.duration: [..]",
            "run.1.chatId: \"chat-[..]\"",
            "run.1.messageId: \"[..]-message\"",
            "run.1.firstByte: [..]",
            "run.1.firstSql: [..]",
            "run.1.answer: [..]",
            "run.1.inputTokens: 1000",
            "run.1.outputTokens: 80",
            "run.1.cacheReadTokens: 150",
            "run.1.cacheWriteTokens: 50",
            "run.1.totalTokens: 1280",
            "run.1.llmCalls: 3",
        ];
        let block: Vec<String> = fields
            .iter()
            .chain(run.iter())
            .map(|line| format!("  {line}\n"))
            .collect();
        format!("{head}\n  ---\n{}  ...\n", block.concat())
    };
    let expected = format!(
        "TAP version 13\n1..2\n{}{}",
        case(
            "ok 1 - ok",
            &[
                "verdict: \"pass\"",
                "passRate: 1.0",
                "requiredPassRate: 1.0",
                "passedRuns: 1",
                "runs: 1"
            ],
            "passed",
            "0"
        ),
        case(
            "not ok 2 - no",
            &[
                "message: \"expected at least 99 rows in the last SQL result; it has 12 (totalRows)\"",
                "exitCode: 9",
                "verdict: \"fail\"",
                "passRate: 0.0",
                "requiredPassRate: 1.0",
                "passedRuns: 0",
                "runs: 1",
            ],
            "failed",
            "9"
        ),
    );
    snapbox::assert_data_eq!(tap, expected);
    let output = emu.analyst().args(["check", "-o", "json"]).arg(&path).output().unwrap();
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (&doc["passed"], &doc["failed"], &doc["errors"]),
        (&json!(1), &json!(1), &json!(0))
    );
    assert_eq!(doc["cases"][0]["status"], "passed");
    assert_eq!(doc["cases"][1]["exitCode"], 9);
    let run = &doc["cases"][0]["runs"][0];
    let seconds = &run["seconds"];
    assert!(seconds["total"].as_f64().unwrap() >= seconds["firstByte"].as_f64().unwrap());
    assert!(run["chatId"].as_str().unwrap().starts_with("chat-"));
    // The question asked and the answer's text, for a person to review.
    assert_eq!(run["question"], "Q");
    assert!(run["answer"].as_str().unwrap().contains("revenue rose"), "{run}");
    emu.analyst()
        .args(["check", "--tap", "-o", "json"])
        .arg(&path)
        .assert()
        .code(2);
}

#[test]
fn saved_streams_replay_to_the_same_answer() {
    let emu = Emulator::start();
    let path = suite("[[case]]\nname = \"Revenue, by month!\"\nquestion = \"Q\"\nchat = [\"And by quarter?\"]\n");
    let dir = path.with_file_name("streams");
    emu.analyst()
        .args(["check", "--save"])
        .arg(&dir)
        .arg(&path)
        .assert()
        .success();
    let first = dir.join("01-revenue-by-month.1.ndjson");
    let second = dir.join("01-revenue-by-month.2.ndjson");
    assert_eq!(
        (mode_of(&first), mode_of(&second)),
        (0o600, 0o600),
        "saved streams are private"
    );
    analyst()
        .args(["ask", "--replay"])
        .arg(&first)
        .assert()
        .success()
        .stdout(predicate::str::starts_with("Answer 1:"));
    analyst()
        .args(["ask", "--replay"])
        .arg(&second)
        .assert()
        .success()
        .stdout(predicate::str::starts_with("Answer 2:"));
}

#[test]
fn saved_streams_of_long_names_are_cut_and_told_apart() {
    let emu = Emulator::start();
    let long = "revenue by month and region for every store ".repeat(7);
    let path = suite(&format!(
        "[[case]]\nname = \"{long} A\"\nquestion = \"Q\"\n\n[[case]]\nname = \"{long} B\"\nquestion = \"Q\"\n"
    ));
    let dir = path.with_file_name("long-streams");
    let output = emu
        .analyst()
        .args(["check", "--save"])
        .arg(&dir)
        .arg(&path)
        .output()
        .unwrap();
    exits(&output, 0);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names.pop().as_deref(),
        Some("analyst-save.json"),
        "what a re-grade reads"
    );
    assert_eq!(names.len(), 2, "{names:?}");
    for name in &names {
        assert!(name.len() <= 90, "{name}");
        assert!(name.starts_with("0") && name.ends_with(".ndjson"), "{name}");
    }
    let stems: Vec<&str> = names.iter().map(|name| &name[3..]).collect();
    assert_ne!(stems[0], stems[1], "told apart by their hashes");
}

#[test]
fn the_readme_example_suite_passes_against_the_emulator() {
    let emu = Emulator::start();
    let example = format!("{}/examples/smoke.toml", env!("CARGO_MANIFEST_DIR"));
    let dir = Scratch::new();
    let report = dir.join("junit.xml");
    emu.analyst()
        .args(["check", &example, "--junit"])
        .arg(&report)
        .assert()
        .success()
        .stderr(predicate::str::contains("2 cases: 2 passed, 0 failed, 0 errors"));
    roxmltree::Document::parse(&std::fs::read_to_string(&report).unwrap()).unwrap();
}

#[test]
fn budgets_fail_a_case_that_spends_too_much_time_tokens_or_calls() {
    let emu = Emulator::start();
    emu.agent(|a| a.delay = Duration::from_millis(20));
    // The emulated agent reports 1280 tokens and 3 LLM calls a turn.
    let path = suite(
        r#"
[defaults]
max_llm_calls = 3

[[case]]
name = "within"
question = "Q"
max_tokens = 1280
max_seconds = 60

[[case]]
name = "too many tokens"
question = "Q"
max_tokens = 1000

[[case]]
name = "too slow"
question = "Q"
max_seconds = 0.05

[[case]]
name = "too many calls"
question = "Q"
max_llm_calls = 2
"#,
    );
    let output = emu.analyst().args(["check", "-o", "json"]).arg(&path).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 9);
    assert_whole(
        stderr.to_string(),
        str![[r#"
START within
START too many tokens
START too slow
START too many calls
FAIL  too many calls  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
      the turn used 3 llmCalls, over max_llm_calls 2
FAIL  too slow  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
      the turn took [..]s, over max_seconds 0.05
PASS  within  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
FAIL  too many tokens  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
      the turn used 1280 totalTokens, over max_tokens 1000
4 cases: 1 passed, 3 failed, 0 errors in [..], accuracy 25% (1/4)
analyst: error: 3 of 4 cases did not pass

"#]]
        .unordered(),
    );

    // No usage line: a budget on tokens cannot be met.
    emu.script(Reply::stream(
        &ChatStream::new("c-free", Family::Cube)
            .user("Q")
            .final_answer(&["Done"]),
    ));
    let path = suite("[[case]]\nname = \"no usage\"\nquestion = \"Q\"\nmax_tokens = 10\n");
    let output = emu.analyst().args(["check"]).arg(&path).output().unwrap();
    exits(&output, 9);
    assert!(String::from_utf8_lossy(&output.stderr).contains("reported no totalTokens"));

    let bad = suite("[[case]]\nname = \"bad\"\nquestion = \"Q\"\nmax_seconds = 0\n");
    let output = emu.analyst().args(["check"]).arg(&bad).output().unwrap();
    exits(&output, 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains(":4: field max_seconds: max_seconds must be"));
}

#[test]
fn repeated_cases_pass_by_their_pass_rate_and_report_every_run() {
    // The flaky agent answers nothing useful in 2 of every 5 new chats.
    let emu = Emulator::start();
    emu.agent(|a| a.schedule = FLAKY.to_vec());
    let path = suite(
        r#"
[defaults]
repeat = 5

[[case]]
name = "three of five will do"
question = "Q"
expect_answer = "revenue rose"
pass_rate = 0.6
"#,
    );
    let output = emu
        .analyst()
        .args(["check", "--jobs", "1", "-o", "json"])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 0);
    let verdicts = stderr
        .lines()
        .filter(|line| line.starts_with("PASS") || line.starts_with("FAIL"));
    assert_eq!(
        verdicts.filter(|line| line.contains("(run ")).count(),
        5,
        "every run is reported: {stderr}"
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let case = &report["cases"][0];
    assert_eq!((&case["status"], &case["passedRuns"]), (&json!("passed"), &json!(3)));
    let runs = case["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 5);
    let chats: std::collections::HashSet<&str> = runs.iter().map(|r| r["chatId"].as_str().unwrap()).collect();
    assert_eq!(chats.len(), 5, "each run is a fresh thread");

    // The same runs against a stricter rate, and --repeat overriding the suite.
    let emu = Emulator::start();
    emu.agent(|a| a.schedule = FLAKY.to_vec());
    let strict =
        suite("[[case]]\nname = \"most\"\nquestion = \"Q\"\nexpect_answer = \"revenue rose\"\npass_rate = 0.8\n");
    let output = emu
        .analyst()
        .args(["check", "--jobs", "2", "--repeat", "5"])
        .arg(&strict)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 9);
    assert_whole(
        stderr.to_string(),
        str![[r#"
START most (run [..] of 5)
START most (run [..] of 5)
PASS  most (run [..] of 5)  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
START most (run [..] of 5)
PASS  most (run [..] of 5)  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
START most (run [..] of 5)
PASS  most (run [..] of 5)  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
START most (run [..] of 5)
FAIL  most (run [..] of 5)  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
      expected the answer to match /revenue rose/, got "I could not work that out."
FAIL  most (run [..] of 5)  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
      expected the answer to match /revenue rose/, got "I could not work that out."
FAIL  most  3 of 5 runs passed (median [..]s, 1280 tokens)
      3 of 5 runs passed; pass_rate 0.8 needs 4
      run [..]: expected the answer to match /revenue rose/, got "I could not work that out."
      run [..]: expected the answer to match /revenue rose/, got "I could not work that out."
1 cases: 0 passed, 1 failed, 0 errors in [..], consistent 0/1, accuracy 0% (0/1)
analyst: error: 1 of 1 cases did not pass

"#]]
        .unordered(),
    );
    emu.expect(Route::Chat, 5);

    for (field, message) in [
        ("repeat = 0", "repeat must be from 1 to 1000"),
        ("pass_rate = 1.5", "pass_rate must be from 0 to 1"),
    ] {
        let bad = suite(&format!("[[case]]\nname = \"bad\"\nquestion = \"Q\"\n{field}\n"));
        let output = emu.analyst().args(["check"]).arg(&bad).output().unwrap();
        exits(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(":4: field") && stderr.contains(message),
            "{field}: {stderr}"
        );
    }
}

#[test]
fn shards_together_run_every_case_once_and_filter_picks_by_name() {
    let emu = Emulator::start();
    let text: String = (1..=8)
        .map(|i| format!("[[case]]\nname = \"case {i}\"\nquestion = \"Q{i}\"\n\n"))
        .collect();
    let path = suite(&text);
    let names_run = |args: &[&str]| -> Vec<String> {
        let output = emu
            .analyst()
            .args(["check", "-o", "json"])
            .args(args)
            .arg(&path)
            .output()
            .unwrap();
        exits(&output, 0);
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    let mut all: Vec<String> = Vec::new();
    for shard in ["1/3", "2/3", "3/3"] {
        let names = names_run(&["--shard", shard]);
        assert!(names.iter().all(|name| !all.contains(name)), "disjoint: {names:?}");
        all.extend(names);
    }
    all.sort();
    let mut every: Vec<String> = (1..=8).map(|i| format!("case {i}")).collect();
    every.sort();
    assert_eq!(all, every, "together, every case once");
    assert_eq!(names_run(&["--filter", "^case [12]$"]), ["case 1", "case 2"]);
    for bad in [["--shard", "5/4"], ["--filter", "(unclosed"]] {
        let output = emu.analyst().args(["check"]).args(bad).arg(&path).output().unwrap();
        exits(&output, 2);
    }
    emu.expect(Route::Chat, 10);
}

/// A suite of cases named `case 1` … `case N`.
/// The `status` of each case of a JSON report, in order.
fn case_statuses(report: &Value) -> Vec<&str> {
    let cases = report["cases"].as_array().map(Vec::as_slice).unwrap_or_default();
    cases.iter().filter_map(|case| case["status"].as_str()).collect()
}

fn numbered(count: usize) -> ScratchFile {
    let text: String = (1..=count)
        .map(|i| format!("[[case]]\nname = \"case {i}\"\nquestion = \"Q{i}\"\n\n"))
        .collect();
    suite(&text)
}

#[test]
fn list_prints_what_would_run_and_sends_nothing() {
    let path = suite(
        "[[case]]\nname = \"first\"\nquestion = \"Revenue\\tby month?\"\n\n[[case]]\nname = \"second\"\nquestion = \"Orders?\"\nreference_sql = \"SELECT 1\"\n",
    );
    // No URL, no key, no identity, no data query API.
    let output = analyst().args(["check", "--list"]).arg(&path).output().unwrap();
    exits(&output, 0);
    let file = path.display().to_string();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("first\t{file}:1\tRevenue\\tby month?\nsecond\t{file}:5\tOrders?\n")
    );
    let output = analyst()
        .args(["check", "--list", "-o", "json", "--filter", "sec"])
        .arg(&path)
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        listed,
        json!([{"name": "second", "space": null, "question": "Orders?", "source": format!("{file}:5"), "groundTruth": "SELECT 1"}])
    );
    // An invalid suite is exit 2, as a run would be.
    let bad = suite("[[case]]\nname = \"a\"\n");
    analyst().args(["check", "--list"]).arg(&*bad).assert().code(2);
    // A report of a run that does not happen is refused, not left unwritten.
    for report in [&["--summary", "summary.md"][..], &["-o", "html"], &["-o", "markdown"]] {
        let output = analyst()
            .args(["check", "--list"])
            .args(report)
            .arg(&path)
            .output()
            .unwrap();
        exits(&output, 2);
    }
}

#[test]
fn shards_are_dealt_evenly_by_name() {
    let counts = |cases: usize, shards: u32| -> Vec<usize> {
        let path = numbered(cases);
        (1..=shards)
            .map(|k| {
                let output = analyst()
                    .args(["check", "--list", "--shard", &format!("{k}/{shards}")])
                    .arg(&path)
                    .output()
                    .unwrap();
                exits(&output, 0);
                String::from_utf8_lossy(&output.stdout).lines().count()
            })
            .collect()
    };
    assert_eq!(counts(4, 4), [1, 1, 1, 1]);
    assert_eq!(counts(10, 4), [3, 3, 2, 2]);
    assert_eq!(counts(5, 2), [3, 2]);
    // Fewer cases than shards: an empty shard runs nothing, says so, exit 0.
    let emu = Emulator::start();
    let output = emu
        .analyst()
        .args(["check", "--shard", "3/3"])
        .arg(&*numbered(2))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 0);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: warning: shard 3/3 is empty: 2 cases are dealt to 3 shards; nothing runs
0 cases: 0 passed, 0 failed, 0 errors in [..], accuracy 0% (0/0)

"#]],
    );
    assert!(emu.requests().is_empty());
}

#[test]
fn min_accuracy_gates_the_run_on_the_share_of_cases_that_pass() {
    let emu = Emulator::start();
    let path = suite(
        "[[case]]\nname = \"a\"\nquestion = \"Q\"\n[[case]]\nname = \"b\"\nquestion = \"Q\"\n[[case]]\nname = \"c\"\nquestion = \"Q\"\n[[case]]\nname = \"never\"\nquestion = \"Q\"\nexpect_answer = \"never said\"\n",
    );
    for (min, code) in [("0.75", 0), ("75%", 0), ("90%", 9), ("1", 9)] {
        let output = emu
            .analyst()
            .args(["check", "-o", "json", "--min-accuracy", min])
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        exits(&output, code);
        // The failing case is listed either way.
        assert!(stderr.contains("FAIL  never"), "{min}: {stderr}");
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["exitCode"], code);
        assert_eq!(report["minAccuracy"].as_f64(), Some(cli_share(min)));
        let verdict = if code == 0 { "meets" } else { "below" };
        assert!(
            stderr.contains(&format!("accuracy 75% (3/4), {verdict} --min-accuracy")),
            "{min}: {stderr}"
        );
    }
    emu.analyst()
        .args(["check", "--min-accuracy", "120%"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a share of cases"));
}

/// `--min-accuracy`'s value as a share.
fn cli_share(text: &str) -> f64 {
    match text.strip_suffix('%') {
        Some(percent) => percent.parse::<f64>().unwrap() / 100.0,
        None => text.parse().unwrap(),
    }
}

/// The lines of a `check` run's stderr besides those saying a run started
/// (a log hears of each): for a failure of the whole run, the one line.
pub(crate) fn failure_lines(stderr: &str) -> usize {
    stderr.lines().filter(|line| !line.starts_with("START ")).count()
}

#[test]
fn refused_credentials_stop_the_run_at_once_and_abort_what_runs() {
    // One case at a time: the first refusal ends the run; no other case
    // is asked.
    let emu = Emulator::start();
    let output = emu
        .analyst()
        .env("ANALYST_API_KEY", "sk-revoked-key")
        .args(["check", "--jobs", "1", "-o", "json"])
        .arg(&*numbered(4))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 3);
    assert_eq!(failure_lines(&stderr), 1, "one line: {stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
START case 1
analyst: error: the service answered 401 Unauthorized: Invalid API key; check the API key (from ANALYST_API_KEY); the run stopped: 1 of 4 runs finished

"#]],
    );
    assert_eq!(emu.requests_on(Route::Chat).len(), 1);
    assert!(output.stdout.is_empty(), "no report");
    // Two at a time: the one still streaming is aborted.
    let emu = Emulator::start();
    emu.agent(|agent| {
        agent.padding = 100;
        agent.delay = Duration::from_millis(50);
    });
    emu.script(Reply::status(401, "application/json", r#"{"error":"Invalid API key"}"#));
    let output = emu
        .analyst()
        .args(["check", "--jobs", "2"])
        .arg(&*numbered(4))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 3);
    assert_eq!(failure_lines(&stderr), 1, "one line: {stderr}");
    let aborts: Vec<Value> = emu.requests_on(Route::Abort).iter().map(Recorded::json).collect();
    assert_eq!(aborts.len(), 1, "{aborts:?}: {stderr}");
    assert_eq!(aborts[0]["chatId"], "chat-0001");
    assert_eq!(emu.requests_on(Route::Chat).len(), 2, "no third case started");
}

#[test]
fn a_failing_service_or_a_reset_is_one_cases_error_and_the_run_goes_on() {
    // One case at a time: the first gets a 503 (no retries left), the
    // second a connection reset; the others are asked as usual, and the
    // report of every case is written.
    let emu = Emulator::start();
    emu.script(Reply::status(503, "text/plain", "upstream down"));
    emu.script(Reply::Drop);
    let suite_file = numbered(4);
    let junit = suite_file.with_file_name("junit.xml");
    let output = emu
        .analyst()
        .args(["check", "--jobs", "1", "--retries", "0", "-o", "json", "--junit"])
        .arg(&junit)
        .arg(&*suite_file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Each case's own failure is its error verdict; the run exits 9.
    exits(&output, 9);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|err| panic!("{err}: {stderr}"));
    let statuses = case_statuses(&report);
    assert_eq!(statuses, ["error", "error", "passed", "passed"], "{stderr}");
    assert!(
        report["cases"][0]["messages"][0].as_str().unwrap().contains("503"),
        "{report}"
    );
    assert_eq!(emu.requests_on(Route::Chat).len(), 4);
    assert!(!stderr.contains("the run stopped"), "{stderr}");
    assert!(std::fs::read_to_string(&junit).unwrap().contains("<testcase"));
}

#[test]
fn retry_errors_asks_again_only_the_runs_that_errored_outside_the_answer() {
    let path = suite(
        "[[case]]\nname = \"unlucky\"\nquestion = \"Q1\"\n\n[[case]]\nname = \"fine\"\nquestion = \"Q2\"\n\n[[case]]\nname = \"wrong\"\nquestion = \"Q3\"\nmin_rows = 500\n",
    );
    let emu = Emulator::start();
    emu.script(Reply::status(503, "text/plain", "upstream down"));
    let first = path.with_file_name("first.json");
    let output = emu
        .analyst()
        .args(["check", "--jobs", "1", "--retries", "0", "-o", "json", "--output-file"])
        .arg(&first)
        .arg(&path)
        .output()
        .unwrap();
    exits(&output, 9);
    assert_eq!(emu.requests_on(Route::Chat).len(), 3);
    // Only the run the 503 ended is asked again; the failed expectation
    // and the pass keep their verdicts without a turn.
    let output = emu
        .analyst()
        .args(["check", "--jobs", "1", "-o", "json", "--retry-errors"])
        .arg(&first)
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 9);
    assert_eq!(emu.requests_on(Route::Chat).len(), 4, "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
--retry-errors: 1 runs ended in an error outside the answer; only they are asked again
START unlucky
PASS  unlucky  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
3 cases: 2 passed, 1 failed, 0 errors in [..], accuracy 67% (2/3)
analyst: error: 1 of 3 cases did not pass

"#]]
        .unordered(),
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let statuses = case_statuses(&report);
    assert_eq!(statuses, ["passed", "passed", "failed"]);
    let unlucky = &report["cases"][0]["runs"][0];
    assert_eq!(
        (&unlucky["status"], &unlucky["earlier"][0]["exitCode"]),
        (&json!("passed"), &json!(6))
    );
    assert!(unlucky["earlier"][0]["messages"][0].as_str().unwrap().contains("503"));
    assert_eq!(report["cases"][2]["runs"][0]["earlier"], Value::Null);
    // A report of another agent is refused: its verdicts would stand for this one's.
    let mut other: Value = serde_json::from_slice(&std::fs::read(&first).unwrap()).unwrap();
    other["run"]["chatUrl"] = json!("https://elsewhere.example/api/v1/public/x/agents/9/chat/stream-chat-state");
    std::fs::write(&first, other.to_string()).unwrap();
    let output = emu
        .analyst()
        .args(["check", "--retry-errors"])
        .arg(&first)
        .arg(&path)
        .output()
        .unwrap();
    exits(&output, 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("analyst: error: --retry-errors: that report asked https://elsewhere.example/"),
        "{stderr}"
    );
    assert_eq!(emu.requests_on(Route::Chat).len(), 4);
}

#[test]
fn an_unreachable_service_stops_the_run_at_once() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let emu = Emulator::start();
    let output = emu
        .analyst()
        .env(
            "ANALYST_CHAT_URL",
            format!("http://127.0.0.1:{port}/api/v1/public/acme/agents/agent-7/chat/stream-chat-state"),
        )
        .args(["check", "--jobs", "1", "--retries", "0"])
        .arg(&*numbered(3))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 6);
    assert_eq!(failure_lines(&stderr), 1, "one line: {stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
START case 1
analyst: error: cannot connect to 127.0.0.1:[..]: client error (Connect): tcp connect error: Connection refused (os error 111); the run stopped: 1 of 3 runs finished

"#]],
    );
}
