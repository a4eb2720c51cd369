//! A report stands only for the suite that produced it: its `run` names
//! the suite by its path and a hash of its cases as graded, so that
//! `--retry-errors` refuses another suite's report (and asks again a case
//! that changed) and `--baseline` marks another suite, an edited one or a
//! report dated in the future `unreliable baseline`; pass rates compare as
//! exact fractions; `consistent` counts every case meant to repeat.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::*;

/// `suite` written at `folder/name`.
fn suite_at(folder: &Scratch, name: &str, suite: &str) -> PathBuf {
    std::fs::create_dir_all(folder.join(name).parent().unwrap()).unwrap();
    folder.write(name, suite)
}

/// `analyst check SUITE ARGS… -o json`: the exit, the report and stderr.
fn check(emu: &Emulator, suite: &Path, args: &[&str]) -> (i32, Value, String) {
    let output = emu
        .analyst()
        .args(["check", "-o", "json"])
        .args(args)
        .arg(suite)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let report = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    (output.status.code().unwrap(), report, stderr)
}

const PASSING: &str = "[[case]]\nname = \"revenue\"\nquestion = \"Revenue?\"\n";
const FAILING: &str = "[[case]]\nname = \"revenue\"\nquestion = \"Revenue?\"\nexpect_answer = \"never said\"\n";

#[test]
fn retry_errors_refuses_another_suites_report_and_asks_a_changed_case_again() {
    let emu = Emulator::start();
    let folder = Scratch::new();
    let team_a = suite_at(&folder, "teamA/smoke.toml", PASSING);
    let evals = suite_at(&folder, "teamB/evals.toml", FAILING);
    let report = folder.join("a.json");
    let (code, _, stderr) = check(&emu, &team_a, &["--output-file", report.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let first: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let run = &first["run"];
    assert!(
        run["suitePath"].as_str().unwrap().ends_with("teamA/smoke.toml"),
        "{run}"
    );
    assert_eq!(run["suiteHash"].as_str().unwrap().len(), 16, "{run}");
    assert_eq!(first["cases"][0]["hash"].as_str().unwrap().len(), 16);
    // Alone, the other suite fails; with the first suite's report it is
    // refused, naming both, and nothing is asked.
    let asked = emu.requests_on(Route::Chat).len();
    let (code, _, _) = check(&emu, &evals, &[]);
    assert_eq!(code, 9);
    let (code, _, stderr) = check(&emu, &evals, &["--retry-errors", report.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: error: --retry-errors: that report ran the suite [..], this run [..]: retry a report of the same suite

"#]],
    );
    assert_eq!(
        emu.requests_on(Route::Chat).len(),
        asked + 1,
        "only the run alone asked"
    );
    // The same file edited: the case whose hash changed is asked again, and
    // fails as it now should.
    std::fs::write(&team_a, FAILING).unwrap();
    let (code, edited, stderr) = check(&emu, &team_a, &["--retry-errors", report.to_str().unwrap()]);
    assert_eq!(code, 9, "{stderr}");
    assert_whole(stderr.to_string(), str![[r#"
--retry-errors: 1 case(s) changed since that report, asked again whole: revenue
--retry-errors: 0 runs ended in an error outside the answer; only they are asked again
START revenue
FAIL  revenue  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
      expected the answer to match /never said/, got "Answer 1: revenue rose every month; December was the best month (€2.4M)."
1 cases: 0 passed, 1 failed, 0 errors in [..], accuracy 0% (0/1)
analyst: error: 1 of 1 cases did not pass

"#]].unordered());
    assert_eq!(edited["cases"][0]["status"], "failed");
    assert_eq!(emu.requests_on(Route::Chat).len(), asked + 2);
    // ./s.toml and s.toml and the absolute path are one suite.
    let output = emu
        .analyst()
        .current_dir(folder.join("teamA"))
        .args(["check", "--retry-errors"])
        .arg(&report)
        .arg("./smoke.toml")
        .output()
        .unwrap();
    assert_ne!(
        output.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_baseline_of_another_suite_an_edited_one_or_the_future_is_unreliable() {
    let emu = Emulator::start();
    let folder = Scratch::new();
    let team_a = suite_at(&folder, "teamA/smoke.toml", PASSING);
    let team_b = suite_at(&folder, "teamB/smoke.toml", PASSING);
    let baseline = folder.join("a.json");
    let (code, _, _) = check(&emu, &team_a, &["--output-file", baseline.to_str().unwrap()]);
    assert_eq!(code, 0);
    let unreliable = |suite: &Path, baseline: &Path| {
        let (_, report, stderr) = check(&emu, suite, &["--baseline", baseline.to_str().unwrap()]);
        let compared = report["baseline"].clone();
        (
            compared["unreliable"].as_str().map(str::to_string),
            compared["gates"].clone(),
            stderr,
        )
    };
    // The same suite: a trusted baseline.
    let (why, gates, _) = unreliable(&team_a, &baseline);
    assert_eq!((why, gates), (None, json!(true)));
    // Another folder's smoke.toml.
    let (why, gates, stderr) = unreliable(&team_b, &baseline);
    let why = why.unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        why.starts_with("it ran the suite") && why.contains("teamA/smoke.toml") && why.contains("teamB/smoke.toml"),
        "{why}"
    );
    assert_eq!(gates, json!(false));
    assert_whole(
        stderr.to_string(),
        str![[r#"
START revenue
PASS  revenue  [..]s
      first byte [..]s, first SQL [..]s, answer [..]s; 1280 tokens, 3 LLM calls
unreliable baseline [..]: it ran the suite [..], this run [..] it gates nothing (--baseline-any trusts it)
against [..]: 1 insufficient data
  suite: insufficient data (0 of 1 cases worse, 0 better, p = 1); 5 cases in both runs could tell
1 cases: 1 passed, 0 failed, 0 errors in [..], accuracy 100% (1/1)

"#]]
        .unordered(),
    );
    // The same file, edited.
    std::fs::write(&team_a, FAILING).unwrap();
    let (why, _, _) = unreliable(&team_a, &baseline);
    assert_eq!(
        why.as_deref(),
        Some("the suite changed since it ran: case revenue is asked or graded differently")
    );
    std::fs::write(&team_a, PASSING).unwrap();
    // Dated in the future.
    let mut future: Value = serde_json::from_slice(&std::fs::read(&baseline).unwrap()).unwrap();
    future["run"]["startedAt"] = json!("2999-01-01T00:00:00Z");
    let dated = folder.write("future.json", future.to_string());
    let (why, gates, _) = unreliable(&team_a, &dated);
    assert!(why.unwrap().contains("in the future"));
    assert_eq!(gates, json!(false));
}

#[test]
fn pass_rates_compare_as_exact_fractions() {
    let emu = Emulator::start();
    let folder = Scratch::new();
    // 7 of 25 runs pass: exactly 0.28 (0.28 × 25 is 7.000000000000001 in
    // floating point, which asked for 8).
    let suite = suite_at(
        &folder,
        "rate.toml",
        "[[case]]\nname = \"flaky\"\nquestion = \"Q\"\nrepeat = 25\npass_rate = 0.28\nexpect_answer = \"^yes$\"\n",
    );
    for run in 0..25 {
        let answer = if run < 7 { "yes" } else { "no" };
        emu.script(Reply::stream(
            &ChatStream::new(&format!("c-{run}"), Family::Semantic).final_answer(&[answer]),
        ));
    }
    let (code, report, stderr) = check(&emu, &suite, &["--jobs", "1"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(report["cases"][0]["passedRuns"], 7);
    // And 7 of 25 cases meet --min-accuracy 0.28 and 28%, not 0.29.
    let cases: String = (0..25)
        .map(|case| match case < 7 {
            true => format!("[[case]]\nname = \"c{case:02}\"\nquestion = \"Q\"\n\n"),
            false => format!("[[case]]\nname = \"c{case:02}\"\nquestion = \"Q\"\nexpect_answer = \"never said\"\n\n"),
        })
        .collect();
    let suite = suite_at(&folder, "fractions.toml", &cases);
    for min in ["0.28", "28%"] {
        let (code, report, stderr) = check(&emu, &suite, &["--jobs", "8", "--min-accuracy", min]);
        assert_eq!(code, 0, "--min-accuracy {min}: {stderr}");
        assert_eq!(report["passed"], 7);
    }
    let (code, _, _) = check(&emu, &suite, &["--jobs", "8", "--min-accuracy", "0.29"]);
    assert_eq!(code, 9);
}

#[test]
fn a_case_decided_after_its_first_run_counts_in_consistency() {
    let emu = Emulator::start();
    let folder = Scratch::new();
    let suite = suite_at(
        &folder,
        "consistency.toml",
        "[[case]]\nname = \"steady\"\nquestion = \"Q\"\nrepeat = 2\n\n[[case]]\nname = \"wrong\"\nquestion = \"Q\"\nrepeat = 2\nexpect_answer = \"never said\"\n",
    );
    for jobs in ["1", "4"] {
        let (code, report, stderr) = check(&emu, &suite, &["--stop-when-decided", "--jobs", jobs]);
        assert_eq!(code, 9, "{stderr}");
        assert_eq!(
            report["consistent"],
            json!({"passedEveryRun": 1, "cases": 2}),
            "--jobs {jobs}: {}",
            report["consistent"]
        );
        assert!(stderr.contains("consistent 1/2"), "--jobs {jobs}: {stderr}");
    }
}
