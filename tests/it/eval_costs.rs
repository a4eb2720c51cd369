//! What a CI eval costs, and how to spend less, against the emulator:
//! `--regrade DIR` grades saved streams again asking no turn (the
//! requests are counted), a run's budget stops it at the turn that
//! reaches it (unknown usage included) with every report written, a
//! quarantined failure gates nothing until its date, and `history trend`
//! shows a suite's runs in order.

use std::path::Path;

use serde_json::Value;

use crate::support::*;

/// A suite of three one-turn cases; `extra` is added to the last.
fn three_cases(extra: &str) -> String {
    format!(
        r#"
[defaults]
timeout = "30s"

[[case]]
name = "revenue"
question = "What was our revenue by month?"
expect_answer = "(?i)december"

[[case]]
name = "orders"
question = "How many orders?"

[[case]]
name = "margin"
question = "What is our margin?"
{extra}
"#
    )
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn json_of(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| panic!("{err}: {}", stderr(output)))
}

fn statuses(report: &Value) -> Vec<String> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            format!(
                "{}={}",
                case["name"].as_str().unwrap(),
                case["status"].as_str().unwrap()
            )
        })
        .collect()
}

/// Every run of every case of a JSON report, in order.
fn runs_of(report: &Value) -> Vec<Value> {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|case| case["runs"].as_array().unwrap().clone())
        .collect()
}

/// `analyst check` of `suite` against `emu`, one case at a time, history off.
fn check(emu: &Emulator, suite: &Path, args: &[&str]) -> std::process::Output {
    emu.analyst()
        .args(["check", "--no-history", "--jobs", "1"])
        .arg(suite)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn regrade_sends_no_chat_request_and_grades_the_saved_answers_as_the_suite_is_now() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let suite = dir.write("smoke.toml", three_cases("repeat = 2"));
    let saved = dir.join("saved");
    let live = check(&emu, &suite, &["--save", saved.to_str().unwrap(), "-o", "json"]);
    assert_eq!(live.status.code(), Some(0), "{}", stderr(&live));
    let asked = emu.requests_on(Route::Chat).len();
    assert_eq!(asked, 4, "three cases, the last asked twice");
    let manifest: Value = serde_json::from_slice(&std::fs::read(saved.join("analyst-save.json")).unwrap()).unwrap();
    assert_eq!(manifest["version"], 1);
    assert_eq!(manifest["streams"].as_array().unwrap().len(), 4);
    // Unchanged, the suite grades the saved answers as the live run did.
    let same = check(&emu, &suite, &["--regrade", saved.to_str().unwrap(), "-o", "json"]);
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    let graded = |report: &Value| -> Vec<Value> {
        runs_of(report)
            .into_iter()
            .map(|run| {
                serde_json::json!([
                    run["status"],
                    run["answer"],
                    run["usage"],
                    run["figures"],
                    run["chatId"],
                    run["messageIds"]
                ])
            })
            .collect()
    };
    let (same, live) = (json_of(&same), json_of(&live));
    assert_eq!(graded(&same), graded(&live));
    // A run's time is its turns' as they were asked (the live run's adds
    // the few milliseconds of its own around them).
    let totals = |report: &Value| -> Vec<f64> {
        runs_of(report)
            .iter()
            .map(|run| run["seconds"]["total"].as_f64().unwrap())
            .collect()
    };
    for (regraded, asked) in totals(&same).into_iter().zip(totals(&live)) {
        assert!(
            regraded <= asked && asked - regraded < 0.05,
            "{regraded} s re-graded, {asked} s asked"
        );
    }
    assert_eq!(emu.requests_on(Route::Chat).len(), asked, "no chat request");
    // The grader changes: an expectation the saved answers do not meet.
    dir.write(
        "smoke.toml",
        three_cases("repeat = 2\nexpect_answer = \"(?i)no such words\"").replace(
            "[[case]]\nname = \"orders\"",
            "[[case]]\nname = \"new case\"\nquestion = \"Never asked?\"\n\n[[case]]\nname = \"orders\"",
        ),
    );
    // No chat URL, no key: a re-grade asks nothing.
    let output = emu
        .command()
        .args(["check", "--no-history", "--jobs", "1"])
        .arg(&suite)
        .args(["--regrade", saved.to_str().unwrap(), "-o", "json"])
        .env_remove("ANALYST_CHAT_URL")
        .env_remove("ANALYST_API_KEY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(9), "{}", stderr(&output));
    assert_eq!(emu.requests_on(Route::Chat).len(), asked, "no chat request");
    let report = json_of(&output);
    assert_eq!(
        statuses(&report),
        ["revenue=passed", "new case=error", "orders=passed", "margin=failed"]
    );
    let cases = report["cases"].as_array().unwrap();
    assert_eq!(
        cases[1]["messages"][0].as_str().unwrap(),
        format!("no saved stream in {} (--regrade)", saved.display())
    );
    let margin = &cases[3];
    assert_eq!(margin["runs"].as_array().unwrap().len(), 2, "every saved run graded");
    assert_eq!(margin["passedRuns"], 0);
    // The saved run's answers, timings and usage are the report's.
    let run = &margin["runs"][0];
    assert!(run["answer"].as_str().unwrap().len() > 10, "{run}");
    assert_eq!(run["usage"]["totalTokens"], 1280);
    assert!(run["seconds"]["total"].as_f64().unwrap() > 0.0);
    let regraded = &report["regraded"];
    assert_eq!(regraded["folder"].as_str().unwrap(), saved.display().to_string());
    assert_eq!(regraded["streams"], 4);
    assert_eq!(regraded["savedRun"]["chatUrl"].as_str().unwrap(), emu.chat_url());
    assert_eq!(report["run"]["chatUrl"].as_str().unwrap(), emu.chat_url());
    assert!(
        stderr(&output).contains("Regraded: 4 saved streams of the run of "),
        "{}",
        stderr(&output)
    );
    // Every report format works as for a live run.
    let junit = dir.join("regraded.xml");
    let page = emu
        .command()
        .args(["check", "--no-history"])
        .arg(&suite)
        .args(["--regrade", saved.to_str().unwrap(), "-o", "html", "--junit"])
        .arg(&junit)
        .output()
        .unwrap();
    assert_eq!(page.status.code(), Some(9));
    let html = String::from_utf8_lossy(&page.stdout);
    assert!(html.contains("no turn was asked"), "the page says it was regraded");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(r#"tests="4" failures="1" errors="1""#), "{xml}");
    assert_eq!(emu.requests_on(Route::Chat).len(), asked);
}

#[test]
fn a_folder_that_is_not_a_saved_run_is_refused_before_anything_runs() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let suite = dir.write("smoke.toml", three_cases(""));
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let output = check(&emu, &suite, &["--regrade", empty.to_str().unwrap()]);
    fails_in_one_line(
        &output,
        2,
        &[&format!(
            "--regrade {}: it holds no analyst-save.json: give a folder 'check --save' wrote, of a run that ended",
            empty.display()
        )],
    );
    dir.write("empty/analyst-save.json", r#"{"version": 7, "run": {}, "streams": []}"#);
    let output = check(&emu, &suite, &["--regrade", empty.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("saved by a newer analyst (version 7); this one reads version 1"));
    assert!(emu.requests().is_empty());
}

#[test]
fn a_budget_stops_the_run_at_the_turn_that_reaches_it_and_every_report_is_written() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let suite = dir.write("smoke.toml", three_cases(""));
    let junit = dir.join("report.xml");
    // Each turn spends 1280 tokens: the second reaches 2000.
    let output = check(
        &emu,
        &suite,
        &[
            "--budget-tokens",
            "2000",
            "-o",
            "json",
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(9), "{}", stderr(&output));
    assert_eq!(emu.requests_on(Route::Chat).len(), 2, "no turn after the budget");
    let errors = stderr(&output);
    assert!(
        errors.contains("budget reached: case \"orders\" brought the tokens to 2560, reaching --budget-tokens 2000; no new turn starts"),
        "{errors}"
    );
    assert!(
        errors.ends_with("analyst: error: budget spent after 2 of 3 cases (1 not asked)\n"),
        "{errors}"
    );
    let report = json_of(&output);
    assert_eq!(statuses(&report), ["revenue=passed", "orders=passed", "margin=skipped"]);
    assert_eq!(report["skipped"], 1);
    assert_eq!(report["budget"]["spentTokens"], 2560);
    assert_eq!(report["budget"]["skippedRuns"], 1);
    assert_eq!(
        report["cases"][2]["messages"][0],
        "not asked: the run's budget was spent (budget): 0 of 1 runs finished"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(r#"skipped="1""#), "{xml}");
    // The page and the summary too, also when --min-accuracy would pass.
    let summary = dir.join("summary.md");
    let output = check(
        &emu,
        &suite,
        &[
            "--budget-tokens",
            "2000",
            "--min-accuracy",
            "50%",
            "-o",
            "html",
            "--summary",
            summary.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(9), "{}", stderr(&output));
    let page = String::from_utf8_lossy(&output.stdout);
    assert!(page.contains("<span class=\"tag skipped\">SKIPPED</span>"), "{page}");
    assert!(page.contains("Budget: spent 2560 of 2000 tokens"), "{page}");
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(summary.contains("| margin | SKIPPED | budget |"), "{summary}");
    assert!(
        xml.contains(r#"<skipped message="budget: the run&#39;s budget was spent before it"/>"#),
        "{xml}"
    );
}

#[test]
fn a_turn_with_unknown_usage_reaches_any_budget_and_says_which() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let suite = dir.write("smoke.toml", three_cases(""));
    // The first turn sends no __usage__ line.
    emu.script(Reply::stream(
        &ChatStream::new("c-1", Family::Semantic)
            .sql_call(&SqlCall::revenue_by_month(12))
            .final_answer(&["December led."]),
    ));
    let output = check(&emu, &suite, &["--budget-tokens", "1000000", "--tap"]);
    assert_eq!(output.status.code(), Some(9), "{}", stderr(&output));
    assert_eq!(emu.requests_on(Route::Chat).len(), 1);
    assert!(stderr(&output).contains(
        "budget reached: case \"revenue\" reported no usage (no __usage__ line): its usage is unknown, so it counts as reaching the budget"
    ));
    let tap = String::from_utf8_lossy(&output.stdout);
    assert!(tap.contains("ok 2 - orders # SKIP budget"), "{tap}");
    assert!(tap.contains("ok 3 - margin # SKIP budget"), "{tap}");
    // Dollars need prices: without them the budget cannot be counted.
    let output = check(&emu, &suite, &["--budget-usd", "5"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--budget-usd counts dollars at the config file's [prices], and it has none"));
}

#[test]
fn a_conversation_stops_before_its_next_turn_once_the_budget_is_reached() {
    let emu = Emulator::start();
    let suite = ScratchFile::new(
        "smoke.toml",
        "[[case]]\nname = \"talk\"\nquestion = \"Revenue?\"\nchat = [\"And by quarter?\", \"Which was best?\"]\n",
    );
    let output = check(&emu, &suite, &["--budget-tokens", "1", "-o", "json"]);
    assert_eq!(output.status.code(), Some(9), "{}", stderr(&output));
    assert_eq!(
        emu.requests_on(Route::Chat).len(),
        1,
        "the turn in flight finished, no other started"
    );
    let report = json_of(&output);
    assert_eq!(report["cases"][0]["status"], "skipped");
    assert_eq!(
        report["cases"][0]["runs"][0]["messages"][0],
        "the run's budget was spent before turn 2 of 3 (budget)"
    );
    assert_eq!(report["budget"]["skippedTurns"], 2);
}

#[test]
fn budgets_and_stop_when_decided_each_say_what_they_saved() {
    let emu = Emulator::start();
    let suite = ScratchFile::new(
        "smoke.toml",
        "[[case]]\nname = \"a\"\nquestion = \"Revenue?\"\nrepeat = 3\npass_rate = 0.5\n\n[[case]]\nname = \"b\"\nquestion = \"Orders?\"\nrepeat = 3\n",
    );
    let output = check(
        &emu,
        &suite,
        &["--stop-when-decided", "--budget-tokens", "3000", "-o", "markdown"],
    );
    let errors = stderr(&output);
    assert_eq!(output.status.code(), Some(9), "{}", stderr(&output));
    // a: two passes decide it (one run saved); b: asked once, then the budget.
    assert_eq!(emu.requests_on(Route::Chat).len(), 3);
    assert!(
        errors.contains("Budget: spent 3840 of 3000 tokens; reached: case \"b\" (run 1) brought the tokens to 3840, reaching --budget-tokens 3000; 2 runs (2 turns) not asked.\n--stop-when-decided saved 1 runs (1 turns) before the budget counted them.\n"),
        "{errors}"
    );
    // The summary says the same, escaped as Markdown.
    let summary = String::from_utf8_lossy(&output.stdout);
    assert!(summary.contains("Budget\\: spent 3840 of 3000 tokens"), "{summary}");
    assert!(
        summary.contains("\\-\\-stop\\-when\\-decided saved 1 runs"),
        "{summary}"
    );
}

/// A suite whose one case fails, quarantined as `quarantine` says.
fn quarantined(quarantine: &str) -> ScratchFile {
    ScratchFile::new(
        "smoke.toml",
        format!("[[case]]\nname = \"flaky\"\nquestion = \"Revenue?\"\nexpect_answer = \"no such words\"\nquarantine = {quarantine}\n\n[[case]]\nname = \"steady\"\nquestion = \"Orders?\"\n"),
    )
}

#[test]
fn a_quarantined_failure_gates_nothing_until_its_date_and_gates_again_on_it() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let junit = dir.join("report.xml");
    let suite = quarantined(r#"{ until = "2099-12-31", reason = "upstream flaky, see #12" }"#);
    let output = check(&emu, &suite, &["--junit", junit.to_str().unwrap(), "--tap"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let errors = stderr(&output);
    assert!(errors.contains("QUARANTINED flaky  "), "{errors}");
    assert!(
        errors.contains("FAIL, quarantined until 2099-12-31: upstream flaky, see #12: gates nothing"),
        "{errors}"
    );
    assert!(
        errors.contains("2 cases: 1 passed, 0 failed, 0 errors, 1 quarantined in"),
        "{errors}"
    );
    let tap = String::from_utf8_lossy(&output.stdout);
    assert!(
        tap.contains("not ok 1 - flaky # TODO quarantined until 2099-12-31: upstream flaky, see \\#12"),
        "{tap}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(r#"<skipped message="quarantined until 2099-12-31: upstream flaky, see #12"/>"#),
        "{xml}"
    );
    assert!(xml.contains(r#"failures="0" errors="0" skipped="1""#), "{xml}");
    // The page and the summary give it a place of its own.
    let page = check(&emu, &suite, &["-o", "html"]);
    let html = String::from_utf8_lossy(&page.stdout);
    assert!(html.contains("<h2>Quarantined</h2>"), "its own place on the page");
    let summary = check(&emu, &suite, &["-o", "markdown"]);
    let summary = String::from_utf8_lossy(&summary.stdout);
    assert!(
        summary.contains("| flaky | FAIL | 2099\\-12\\-31 | upstream flaky, see \\#12 |"),
        "{summary}"
    );
    // On and after its date it gates again, and says so.
    let expired = quarantined(r#""2020-01-31""#);
    let output = check(&emu, &expired, &[]);
    assert_eq!(output.status.code(), Some(9));
    let errors = stderr(&output);
    assert!(
        errors.contains("smoke.toml:1: quarantine of flaky expired on 2020-01-31"),
        "{errors}"
    );
    assert!(errors.contains("FAIL  flaky"), "{errors}");
    // A date that is not one is refused where it is written.
    let output = check(&emu, &quarantined(r#""next week""#), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        one_error_line(&output).ends_with(
            "smoke.toml:5: field quarantine: quarantine: \"next week\" is not a date: write it YYYY-MM-DD (2026-12-31)"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn list_shows_each_quarantine_and_cubes_folder_takes_a_quarantine_file_beside_it() {
    let suite = quarantined(r#"{ until = "2099-12-31", reason = "flaky" }"#);
    let output = analyst().args(["check", "--list"]).arg(&*suite).output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(stderr(&output).contains(": flaky: quarantined until 2099-12-31: flaky: it runs and gates nothing"));
    let output = analyst()
        .args(["check", "--list", "-o", "json"])
        .arg(&*suite)
        .output()
        .unwrap();
    let listed = json_of(&output);
    assert_eq!(
        listed[0]["quarantine"],
        serde_json::json!({"until": "2099-12-31", "reason": "flaky", "expired": false})
    );
    // Cube's agents folder: analyst-quarantine.toml beside it.
    let repo = Scratch::new();
    repo.write(
        "agents/eval_questions.yml",
        "eval_questions:\n  - name: revenue\n    question: Revenue?\n    sql: SELECT 1\n",
    );
    repo.write(
        "analyst-quarantine.toml",
        "[quarantine]\n\"auto/revenue\" = { until = \"2099-01-01\", reason = \"model swap\" }\n",
    );
    let output = analyst()
        .args(["check", "--list", "-o", "json"])
        .arg(repo.join("agents"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(json_of(&output)[0]["quarantine"]["until"], "2099-01-01");
    repo.write(
        "analyst-quarantine.toml",
        "[quarantine]\n\"auto/revenu\" = \"2099-01-01\"\n",
    );
    let output = analyst()
        .args(["check", "--list"])
        .arg(repo.join("agents"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("\"auto/revenu\" names no question of the suite"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn history_trend_shows_a_suites_runs_in_order_with_their_accuracy() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let db = dir.join("history.db");
    let suite = dir.write("smoke.toml", three_cases(""));
    let saved = dir.join("saved");
    let run = |args: &[&str]| {
        let output = emu
            .analyst()
            .env("ANALYST_HISTORY_DB", &db)
            .args(["check", "--jobs", "1"])
            .arg(&suite)
            .args(args)
            .output()
            .unwrap();
        assert!(matches!(output.status.code(), Some(0 | 9)), "{}", stderr(&output));
    };
    // 1: every case passes; 2: the first fails; 3: the second run re-graded.
    run(&["--save", saved.to_str().unwrap()]);
    emu.script(Reply::stream(
        &ChatStream::new("c-2", Family::Semantic)
            .final_answer(&["Revenue was flat."])
            .usage(),
    ));
    run(&[]);
    dir.write("smoke.toml", three_cases("expect_answer = \"never said\""));
    run(&["--regrade", saved.to_str().unwrap()]);
    // Another suite's runs are not this one's.
    let other = dir.write("other.toml", "[[case]]\nname = \"x\"\nquestion = \"Revenue?\"\n");
    let output = emu
        .analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["check"])
        .arg(&other)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let trend = |args: &[&str]| {
        analyst()
            .env("ANALYST_HISTORY_DB", &db)
            .args(["history", "trend"])
            .arg(&suite)
            .args(args)
            .output()
            .unwrap()
    };
    let rows = json_of(&trend(&["-o", "json"]));
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3, "{rows:?}");
    let accuracy: Vec<String> = rows
        .iter()
        .map(|row| {
            format!(
                "{:.3} {}/{} regraded={}",
                row["accuracy"].as_f64().unwrap(),
                row["passed"],
                row["cases"],
                row["regraded"]
            )
        })
        .collect();
    assert_eq!(
        accuracy,
        [
            "1.000 3/3 regraded=false",
            "0.667 2/3 regraded=false",
            "0.667 2/3 regraded=true"
        ]
    );
    let times: Vec<&str> = rows.iter().map(|row| row["at"].as_str().unwrap()).collect();
    assert!(
        times.windows(2).all(|pair| pair[0] <= pair[1]),
        "oldest first: {times:?}"
    );
    assert!(rows
        .iter()
        .all(|row| row["suitePath"].as_str().unwrap().ends_with("smoke.toml")));
    // CSV is the default off a terminal; --last keeps the latest.
    let csv = String::from_utf8(trend(&["--last", "2"]).stdout).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("at,branch,commit,accuracy,cases,passed,failed,errors,skipped,quarantined"));
    assert!(lines[1].contains(",0.6667,3,2,1,0,0,0,"), "{csv}");
    assert!(lines[2].contains(",true,9,"), "the re-grade, exit 9: {csv}");
    // A table for a person, the default on a terminal, within its 60 columns.
    let table = on_a_terminal_of(
        60,
        &emu,
        &format!("history trend {}", suite.display()),
        &[("ANALYST_HISTORY_DB", db.to_str().unwrap())],
    );
    assert!(table.contains("TIME (UTC)"), "{table}");
    assert!(table.contains("(regraded)"), "{table}");
    assert!(table.contains("left out to fit the terminal: COST"), "{table}");
    assert_fits("history trend", &table, 60);
    // The chart: accuracy over time, drawn offline.
    let svg = trend(&["-o", "svg"]);
    assert_eq!(svg.status.code(), Some(0), "{}", stderr(&svg));
    let svg = String::from_utf8(svg.stdout).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("Accuracy of"),
        "{}",
        &svg[..svg.len().min(300)]
    );
    // Without a suite: the latest run's, said on stderr.
    let latest = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "trend", "-o", "json"])
        .output()
        .unwrap();
    assert_eq!(json_of(&latest).as_array().unwrap().len(), 1);
    assert!(stderr(&latest).contains("other.toml (the latest run's; name a SUITE for another)"));
    // --since keeps the runs since then; one in the future, none.
    assert_eq!(
        json_of(&trend(&["-o", "json", "--since", "1d"]))
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let future = trend(&["--since", "2099-01-01"]);
    fails_in_one_line(&future, 5, &["no recorded check run of ", "smoke.toml since then"]);
    // A suite never run is exit 5, named.
    let never = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "trend", "never.toml"])
        .output()
        .unwrap();
    fails_in_one_line(&never, 5, &["no recorded check run of never.toml"]);
    // Forgetting the history forgets the runs too.
    let forget = analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["history", "forget", "--all"])
        .output()
        .unwrap();
    assert_eq!(forget.status.code(), Some(0), "{}", stderr(&forget));
    assert_eq!(trend(&[]).status.code(), Some(5));
}

#[test]
fn a_secret_in_a_question_or_a_quarantine_reason_reaches_no_report_or_saved_folder() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let suite = dir.write(
        "smoke.toml",
        format!(
            "[[case]]\nname = \"leaky\"\nquestion = \"Revenue for key {API_KEY}?\"\nexpect_answer = \"never\"\nquarantine = {{ until = \"2099-01-01\", reason = \"rotate {API_KEY} first\" }}\n"
        ),
    );
    let saved = dir.join("saved");
    let junit = dir.join("report.xml");
    let summary = dir.join("summary.md");
    let output = check(
        &emu,
        &suite,
        &[
            "--save",
            saved.to_str().unwrap(),
            "-o",
            "json",
            "--junit",
            junit.to_str().unwrap(),
            "--summary",
            summary.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "quarantined: {}", stderr(&output));
    let regraded = check(&emu, &suite, &["--regrade", saved.to_str().unwrap(), "-o", "html"]);
    assert_eq!(regraded.status.code(), Some(0), "{}", stderr(&regraded));
    let manifest = std::fs::read_to_string(saved.join("analyst-save.json")).unwrap();
    for (what, text) in [
        ("stdout", String::from_utf8_lossy(&output.stdout).into_owned()),
        ("stderr", stderr(&output)),
        (
            "the re-graded page",
            String::from_utf8_lossy(&regraded.stdout).into_owned(),
        ),
        ("the re-grade's stderr", stderr(&regraded)),
        ("analyst-save.json", manifest.clone()),
        ("JUnit", std::fs::read_to_string(&junit).unwrap()),
        ("the summary", std::fs::read_to_string(&summary).unwrap()),
    ] {
        assert!(!text.contains(API_KEY), "{what} holds the key: {text}");
    }
    assert!(manifest.contains("Revenue for key"), "{manifest}");
    assert!(
        !stderr(&regraded).contains("the question changed"),
        "a redacted question is the same question"
    );
}

#[test]
fn a_trend_of_wide_branch_names_fits_the_terminal() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let db = dir.join("history.db");
    let suite = dir.write("smoke.toml", "[[case]]\nname = \"a\"\nquestion = \"Revenue?\"\n");
    for (branch, shard) in [("功能分支-收入报表-第二季度", "1/1"), ("main", "1/2")] {
        let output = emu
            .analyst()
            .env("ANALYST_HISTORY_DB", &db)
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_REF", format!("refs/heads/{branch}"))
            .env("GITHUB_SHA", "0123456789abcdef")
            .args(["check", "--shard", shard])
            .arg(&suite)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    }
    for width in [80, 50] {
        let table = on_a_terminal_of(
            width,
            &emu,
            &format!("history trend {}", suite.display()),
            &[("ANALYST_HISTORY_DB", db.to_str().unwrap())],
        );
        assert!(table.contains("100%") && table.contains("[1/2]"), "{table}");
        assert_fits("history trend", &table, width);
    }
}

#[test]
fn a_run_that_stopped_keeps_its_finished_turns_re_gradable() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let suite = dir.write("smoke.toml", three_cases(""));
    let saved = dir.join("saved");
    emu.script(Reply::stream(
        &ChatStream::new("c-1", Family::Semantic)
            .sql_call(&SqlCall::revenue_by_month(12))
            .final_answer(&["December led."])
            .usage(),
    ));
    emu.script(Reply::status(401, "application/json", r#"{"error":"Unauthorized"}"#));
    let output = check(&emu, &suite, &["--save", saved.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let output = check(&emu, &suite, &["--regrade", saved.to_str().unwrap(), "-o", "json"]);
    assert_eq!(output.status.code(), Some(9), "{}", stderr(&output));
    assert_eq!(
        statuses(&json_of(&output)),
        ["revenue=passed", "orders=error", "margin=error"],
        "the turn paid for is graded, the others were never saved"
    );
}

#[test]
fn a_regrade_of_cubes_eval_files_gives_every_verdict_and_reason_the_live_run_gave() {
    use crate::cube_evals::{answers, check as check_cube, examples};
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = answers());
    let dir = Scratch::new();
    let saved = dir.join("saved");
    let folder = saved.to_str().unwrap();
    let graded = |how: &str| {
        let (code, report, stderr) = check_cube(
            &emu,
            &examples(),
            &["--certified", "--no-history", "-o", "json", how, folder],
        );
        assert_eq!(code, Some(9), "{how}: {stderr}");
        report
    };
    let live = graded("--save");
    let asked = emu.requests_on(Route::Chat).len();
    let fetched = emu.requests_on(Route::Data).len();
    let regraded = graded("--regrade");
    assert_eq!(emu.requests_on(Route::Chat).len(), asked, "no chat request");
    assert!(
        emu.requests_on(Route::Data).len() > fetched,
        "the ground truths fetched as usual"
    );
    // The same verdicts, reasons and analyses; only the live run aborted
    // the chat of the agent's error (a re-grade has no chat to abort).
    let aborted = regex::Regex::new(r"; chat \S+ aborted$").unwrap();
    let verdicts = |report: &str| -> Vec<Value> {
        let report: Value = serde_json::from_str(report).unwrap();
        report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|case| {
                let analysis = case["analysis"]
                    .as_str()
                    .map(|text| aborted.replace(text, "").into_owned());
                serde_json::json!([
                    case["name"],
                    case["status"],
                    case["verdict"],
                    case["scoreReason"],
                    analysis
                ])
            })
            .collect()
    };
    let live = verdicts(&live);
    assert!(live.len() >= 12, "{live:?}");
    assert_eq!(verdicts(&regraded), live);
}
