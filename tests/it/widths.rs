//! Where a person reads it: every help page and man page, and what
//! `doctor`, `config list`, `check`, `history` and a warning show on a
//! terminal, fit its width: 80 columns in a pipe and on an 80-column
//! terminal, 60 on a 60-column one (a real pty, made by script(1)). Short
//! help starts with examples. (The man pages at MANWIDTH=80: in
//! completions.rs, with the other man page tests.)

use std::time::Duration;

use crate::support::*;

/// Every command path: `[]`, `["ask"]`, `["check", "merge"]`, …, read
/// from the help's own "Commands:" lists.
fn command_paths() -> Vec<Vec<String>> {
    let mut paths = vec![Vec::new()];
    let mut at = 0;
    while at < paths.len() {
        let path = paths[at].clone();
        let output = analyst().args(&path).arg("--help").output().unwrap();
        let help = String::from_utf8(output.stdout).unwrap();
        let commands = help
            .split("\nCommands:\n")
            .nth(1)
            .map(|rest| rest.split("\n\n").next().unwrap_or_default().to_string())
            .unwrap_or_default();
        for line in commands.lines() {
            let name = line.split_whitespace().next().unwrap_or_default();
            if line.starts_with("  ") && !line.starts_with("   ") && name != "help" {
                paths.push(path.iter().cloned().chain([name.to_string()]).collect());
            }
        }
        at += 1;
    }
    paths
}

#[test]
fn every_help_page_fits_80_columns_in_a_pipe() {
    let paths = command_paths();
    assert!(paths.len() >= 18, "{paths:?}");
    for path in paths {
        for flag in ["-h", "--help"] {
            let output = analyst().args(&path).arg(flag).output().unwrap();
            assert!(output.status.success());
            let help = String::from_utf8(output.stdout).unwrap();
            assert_fits(&format!("analyst {} {flag}", path.join(" ")), &help, 80);
        }
    }
}

#[test]
fn short_help_of_ask_and_check_is_forty_lines_that_end_in_five_examples() {
    for command in ["ask", "check"] {
        let output = analyst().args([command, "-h"]).output().unwrap();
        let help = String::from_utf8(output.stdout).unwrap();
        assert!(help.lines().count() <= 40, "{command} -h:\n{help}");
        let examples = help.split("\nExamples:\n").nth(1).expect("an Examples block");
        let commands = examples
            .lines()
            .take_while(|line| !line.is_empty())
            .filter(|line| line.starts_with(&format!("  analyst {command} ")))
            .count();
        assert_eq!(commands, 5, "{help}");
        assert!(help.contains(&format!("'analyst {command} --help'")), "{help}");
        // The long help is complete: every option, the short help's too.
        let long = String::from_utf8(analyst().args([command, "--help"]).output().unwrap().stdout).unwrap();
        for option in ["--timeout", "--chat-url", "--external-id", "--color"] {
            assert!(
                long.contains(option) && !help.contains(&format!("{option} <")),
                "{option}"
            );
        }
        assert!(long.lines().count() > 3 * help.lines().count() / 2);
    }
}

#[test]
fn what_a_person_reads_on_a_terminal_fits_80_and_60_columns() {
    let emu = Emulator::start();
    emu.agent(|a| a.delay = Duration::from_millis(40));
    let dir = Scratch::new();
    let db = dir.join("history.db");
    let db = db.to_str().unwrap();
    let long_name = "revenue by month and region for every quarter of the year";
    let suite = dir.write(
        "widths.toml",
        format!(
            "[[case]]\nname = \"{long_name}\"\nquestion = \"Revenue by month?\"\nrepeat = 2\n\
             [[case]]\nname = \"expects what never comes\"\nquestion = \"Q\"\nexpect_answer = \"{}\"\n",
            "never ".repeat(20)
        ),
    );
    let env = [("ANALYST_HISTORY_DB", db)];
    for width in [80, 60] {
        let mut screens = Vec::new();
        for args in [
            "doctor --offline".to_string(),
            "config list".to_string(),
            format!("check --jobs 1 {}", suite.display()),
            "history".to_string(),
            "history usage --by agent".to_string(),
            "ask --help".to_string(),
            "check -h".to_string(),
        ] {
            let screen = on_a_terminal_of(width, &emu, &args, &env);
            assert_fits(&format!("analyst {args} at {width} columns"), &screen, width);
            screens.push(screen);
        }
        // What was measured is what a person reads: the table, the verdicts
        // with their timings under them, the progress, the history.
        let all = screens.join("\n");
        for shown in [
            "chat URL",
            "ANALYST_EXTERNAL_ID",
            "first byte",
            "runs ",
            "FAIL",
            "Revenue by",
        ] {
            assert!(all.contains(shown), "{shown:?} at {width} columns:\n{all}");
        }
        // A truncated result's warning, wrapped at spaces.
        emu.script(Reply::stream(
            &ChatStream::new("c-wide", Family::Semantic)
                .sql_call(&SqlCall::revenue_by_month(30).truncated_to(20))
                .final_answer(&["Revenue grew."]),
        ));
        let screen = on_a_terminal_of(width, &emu, "ask 'Revenue by month?'", &env);
        assert_fits(&format!("a truncation warning at {width} columns"), &screen, width);
        assert!(screen.contains("warning:"), "{screen}");
        // Wrapped at spaces, the rest indented under it: every word whole.
        let joined = screen.replace("\r\n", "\n").replace("\n  ", " ");
        assert!(joined.contains("is truncated: 20 of 30 rows"), "{screen}");
        assert!(screen.contains("\n  ") && screen.contains("--all-rows"), "{screen}");
    }
}

#[test]
fn cjk_text_on_a_terminal_fits_80_columns_measured_in_display_columns() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let db = dir.join("history.db");
    let db = db.to_str().unwrap();
    let env = [("ANALYST_HISTORY_DB", db)];
    // A thread named in Japanese, long: history and usage by thread.
    let thread = "毎月の地域別売上レポートを定期的に作成するための夜間スレッド";
    let asked = on_a_terminal_of(80, &emu, &format!("ask --thread {thread} 'Revenue by month?'"), &env);
    assert!(asked.contains("Revenue"), "{asked}");
    for args in ["history", "history usage --by thread"] {
        let screen = on_a_terminal_of(80, &emu, args, &env);
        assert_fits(&format!("analyst {args}"), &screen, 80);
        assert!(screen.contains("毎月の"), "{args}: {screen}");
    }
    // A check case named in Japanese: its verdict lines.
    let name = "先月の地域別売上を月ごとに集計し前年同月と比較した結果を確認するケース";
    let suite = dir.write(
        "cjk.toml",
        format!("[[case]]\nname = \"{name}\"\nquestion = \"Q\"\nexpect_answer = \"決してない\"\n"),
    );
    let screen = on_a_terminal_of(80, &emu, &format!("check {}", suite.display()), &env);
    assert_fits("check with a case named in Japanese", &screen, 80);
    assert!(screen.contains("FAIL") && screen.contains("先月の"), "{screen}");
    // A warning that quotes a Japanese message of the service.
    let message = "ツールの実行中にエラーが発生しました。データベースへの接続がタイムアウトしたため、クエリを完了できませんでした。";
    emu.script(Reply::stream(
        &ChatStream::new("c-cjk", Family::Semantic)
            .failed_sql_call("SELECT 1", message)
            .final_answer(&["失敗しました。"]),
    ));
    let screen = on_a_terminal_of(80, &emu, "ask 'Q'", &env);
    assert_fits("a warning quoting a Japanese message", &screen, 80);
    assert!(screen.contains("warning:") && screen.contains("ツールの"), "{screen}");
}
