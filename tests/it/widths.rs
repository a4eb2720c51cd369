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
fn every_short_help_fits_forty_lines_with_examples() {
    let paths = command_paths();
    assert!(paths.len() > 15, "{paths:?}");
    let written = regex::Regex::new(r"\[env:\s+[A-Z_]+=").unwrap();
    for path in &paths {
        let output = analyst().args(path).arg("-h").output().unwrap();
        exits(&output, 0);
        let help = String::from_utf8(output.stdout).unwrap();
        let shown = format!("analyst {} -h", path.join(" "));
        assert!(
            help.lines().count() <= 40,
            "{shown}: {} lines\n{help}",
            help.lines().count()
        );
        assert!(help.contains("\nExample"), "{shown} has no example:\n{help}");
        assert!(
            !help.contains("Environment:") && !help.contains("Exit codes:\n"),
            "{shown}"
        );
        // A variable is named alike everywhere, its value never shown.
        let long = analyst().args(path).arg("--help").output().unwrap();
        let long = String::from_utf8(long.stdout).unwrap().replace("\n", " ");
        assert!(!written.is_match(&long), "{shown}: {long}");
    }
    // `analyst` alone is the short help, on stderr.
    let output = analyst().output().unwrap();
    exits(&output, 2);
    let help = String::from_utf8_lossy(&output.stderr);
    assert!(
        help.lines().count() <= 40 && help.contains("Cube's AI agents"),
        "{help}"
    );
    // --help keeps the environment and the exit codes.
    let long = String::from_utf8(analyst().arg("--help").output().unwrap().stdout).unwrap();
    assert!(long.contains("Environment:") && long.contains("Exit codes:"), "{long}");
    // Where the config file is depends on the system: no Unix path here.
    assert!(
        long.contains("Use this profile of the config file (analyst config path prints"),
        "{long}"
    );
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
        // A truncated result: said once, by the summary of the results
        // under the answer (no warning beside it), with the advice.
        emu.script(Reply::stream(
            &ChatStream::new("c-wide", Family::Semantic)
                .sql_call(&SqlCall::revenue_by_month(30).truncated_to(20))
                .final_answer(&["Revenue grew."]),
        ));
        let screen = on_a_terminal_of(width, &emu, "ask 'Revenue by month?'", &env);
        assert_fits(&format!("a truncated result at {width} columns"), &screen, width);
        assert_eq!(screen.matches("20 of 30 rows").count(), 1, "{screen}");
        assert!(
            screen.contains("1. \"Revenue by month\": 20 of 30 rows (truncated)") && screen.contains("--all-rows"),
            "{screen}"
        );
        assert!(!screen.contains("warning:"), "{screen}");
        // A warning, wrapped at spaces, the rest indented under it: every
        // word whole.
        emu.script(Reply::stream(
            &ChatStream::new("c-wide", Family::Semantic).assistant(&["Revenue grew, ", "and grew."]),
        ));
        let screen = on_a_terminal_of(width, &emu, "ask 'Revenue by month?'", &env);
        assert_fits(&format!("a warning at {width} columns"), &screen, width);
        let joined = plain_text(&screen).replace("\r\n", "\n").replace("\n  ", " ");
        assert!(
            joined.contains("warning: no final answer in the stream: using the last complete assistant message"),
            "{screen}"
        );
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

#[test]
fn a_terminal_with_columns_but_no_rows_still_wraps_at_its_width() {
    // `stty cols 80` alone: the size says no rows. The spinner takes 80
    // columns; so do the notes.
    let emu = Emulator::start();
    emu.script(Reply::stream(
        &ChatStream::new("c-rows", Family::Semantic).assistant(&["Revenue grew, ", "and grew."]),
    ));
    let screen = on_a_terminal_sized("cols 80", &emu, "ask --no-history 'Revenue by month?'", &[]);
    assert!(plain_text(&screen).contains("warning: no final answer"), "{screen}");
    assert_fits("a warning on an 80x0 terminal", &screen, 80);
}

#[test]
fn a_table_of_rows_breaks_its_headers_between_words_at_60_columns() {
    let emu = Emulator::start();
    let sql = "SELECT id AS order_identifier, created_at AS creation_timestamp_of_the_order, \
               region AS sales_region_name, amount AS revenue_in_euros FROM orders WHERE id <= 3";
    let data = emu.data_url();
    let env = [
        ("ANALYST_DATA_URL", data.as_str()),
        ("ANALYST_DATA_SECRET", DATA_SECRET),
    ];
    let screen = on_a_terminal_of(60, &emu, &format!("rows -o table --sql '{sql}'"), &env);
    assert_fits("rows -o table at 60 columns", &screen, 60);
    // Each header's words whole, one under the other in its column.
    let header: Vec<String> = screen
        .lines()
        .skip_while(|line| !line.contains('┌'))
        .skip(1)
        .take_while(|line| !line.contains('╞'))
        .map(str::to_string)
        .collect();
    let cells = |column: usize| -> String {
        header
            .iter()
            .map(|line| {
                line.split(['│', '┆'])
                    .nth(column + 1)
                    .unwrap_or_default()
                    .trim()
                    .to_string()
            })
            .collect()
    };
    for (column, name) in [
        "order_identifier",
        "creation_timestamp_of_the_order",
        "sales_region_name",
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(cells(column), *name, "{screen}");
    }
    for line in &header {
        for piece in line.split(['│', '┆']).map(str::trim).filter(|piece| !piece.is_empty()) {
            assert!(
                [
                    "order_",
                    "identifier",
                    "creation_",
                    "timestamp_",
                    "of_the_order",
                    "sales_",
                    "region_name",
                    "sales_region_name",
                    "revenue_in_",
                    "euros",
                    "revenue_in_euros",
                    "order_identifier"
                ]
                .contains(&piece),
                "a header broken inside a word: {piece:?} in\n{screen}"
            );
        }
    }
}

/// `screen` without its colour and cursor escapes.
fn plain_text(screen: &str) -> String {
    regex::Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]")
        .unwrap()
        .replace_all(screen, "")
        .into_owned()
}
