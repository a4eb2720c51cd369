//! `ask --expect-answer/--expect-sql/--expect-tool/--min-rows`: met
//! expectations leave stdout and the exit code alone; each unmet one prints
//! a line with what was expected and what came, and the exit code is 9.

use crate::support::*;
use predicates::prelude::*;

fn expectation_lines(output: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|l| l.starts_with("analyst: expectation failed: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn met_expectations_change_nothing_in_any_mode() {
    let emu = Emulator::start();
    // Chat ids and message ids differ from run to run.
    let chat_ids = regex::Regex::new(r"chat-\d{4}|\d{13,}-message").unwrap();
    for mode in ["answer", "csv", "json", "raw"] {
        let plain = emu.analyst().args(["ask", "-o", mode, "Revenue?"]).output().unwrap();
        let checked = emu
            .analyst()
            .args(["ask", "-o", mode, "Revenue?", "--expect-answer", "(?i)december"])
            .args(["--expect-sql", "FROM orders_view", "--expect-tool", "semanticMeta"])
            .args(["--expect-tool", "cubeSqlApi", "--min-rows", "12"])
            .output()
            .unwrap();
        assert!(
            checked.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&checked.stderr)
        );
        let normalise = |bytes: &[u8]| {
            chat_ids
                .replace_all(&String::from_utf8_lossy(bytes), "CHAT")
                .into_owned()
        };
        assert_eq!(
            normalise(&checked.stdout),
            normalise(&plain.stdout),
            "{mode}: stdout unchanged"
        );
    }
}

#[test]
fn each_unmet_expectation_is_one_line_and_exit_9() {
    let emu = Emulator::start();
    let output = emu
        .analyst()
        .args([
            "ask",
            "-o",
            "csv",
            "Revenue?",
            "--expect-answer",
            "churn",
            "--expect-sql",
            "FROM customers",
        ])
        .args(["--expect-tool", "semanticSearch", "--min-rows", "500"])
        .output()
        .unwrap();
    exits(&output, 9);
    let lines = expectation_lines(&output);
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(
        lines[0].contains("expected the answer to match /churn/, got \"Answer 1: revenue rose every month"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("expected a SQL query matching /FROM customers/; the query was \"SELECT orders_view.month"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains("expected a call to tool semanticSearch; the agent called: semanticMeta, semanticSqlApi"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains("expected at least 500 rows in the last SQL result; it has 12 (totalRows)"),
        "{}",
        lines[3]
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).starts_with("orders_view.month,"),
        "stdout is unchanged"
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("analyst: error: 4 expectation(s) not met"));
}

#[test]
fn min_rows_counts_total_rows_of_the_selected_result() {
    let emu = Emulator::start();
    emu.agent(|a| {
        a.rows = 250;
        a.returned = 100;
    });
    emu.analyst().args(["ask", "Q", "--min-rows", "250"]).assert().success();
    emu.analyst().args(["ask", "Q", "--min-rows", "251"]).assert().code(9);
    let stream = ChatStream::new("c", Family::Semantic)
        .user("Q")
        .final_answer(&["No data needed."]);
    emu.script(Reply::stream(&stream));
    emu.analyst()
        .args(["ask", "Q", "--min-rows", "1"])
        .assert()
        .code(9)
        .stderr(predicate::str::contains(
            "expected at least 1 rows in the last SQL result; the stream has no SQL result",
        ));
}

#[test]
fn a_failed_chat_keeps_its_own_exit_code() {
    let emu = Emulator::start();
    emu.analyst()
        .args(["ask", "Q", "--branch", "broken", "--expect-answer", "anything"])
        .assert()
        .code(7)
        .stderr(predicate::str::contains("expectation failed").not());
}

#[test]
fn a_bad_regular_expression_is_a_usage_error() {
    let emu = Emulator::start();
    emu.analyst()
        .args(["ask", "Q", "--expect-sql", "SELECT ("])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--expect-sql \"SELECT (\" is not a valid regular expression: unclosed group at character 8",
        ));
    assert!(emu.requests().is_empty());
}

#[test]
fn expectations_work_offline_on_a_replay() {
    let replay = |expectations: &[&str]| {
        analyst()
            .args(["ask", "--replay", &fixture("revenue-by-month.ndjson")])
            .args(expectations)
            .assert()
    };
    let met = replay(&[
        "--expect-answer",
        "Q4",
        "--min-rows",
        "12",
        "--expect-sql",
        "orders_view",
    ]);
    let answer = String::from_utf8(met.get_output().stdout.clone()).unwrap();
    met.success();
    assert!(answer.contains("Q4"), "the answer is printed: {answer}");
    // The same replay fails each expectation it does not meet.
    for (flag, value, said) in [
        (
            "--expect-answer",
            "no such phrase",
            "expected the answer to match /no such phrase/",
        ),
        ("--min-rows", "13", "expected at least 13 rows"),
        (
            "--expect-sql",
            "FROM customers",
            "expected a SQL query matching /FROM customers/",
        ),
    ] {
        replay(&[flag, value])
            .code(9)
            .stderr(predicate::str::contains("expectation failed"))
            .stderr(predicate::str::contains(said));
    }
}
