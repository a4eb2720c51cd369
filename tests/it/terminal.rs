//! On a terminal (a pseudo-terminal made by script(1)), `ask` shows what the
//! agent is doing, streams the answer, and summarises the SQL results; with
//! NO_COLOR, -q, or in a pipe, none of that.

use std::time::Duration;

use serde_json::json;

use crate::support::*;

/// Runs `analyst ARGS` in a pseudo-terminal, which must succeed; returns
/// everything the terminal showed (stdout and stderr together).
fn on_a_terminal(emu: &Emulator, args: &str, extra_env: &[(&str, &str)]) -> String {
    let (success, screen) = run_on_a_terminal(emu, args, extra_env);
    assert!(success, "{screen}");
    screen
}

/// Runs `analyst ARGS` in a pseudo-terminal made by script(1); returns
/// whether it succeeded and everything the terminal showed.
fn run_on_a_terminal(emu: &Emulator, args: &str, extra_env: &[(&str, &str)]) -> (bool, String) {
    let binary = assert_cmd::cargo::cargo_bin("analyst");
    let prepared = emu.command();
    // script(1) gives the command a terminal; -e returns its exit code.
    let mut script = std::process::Command::new("script");
    script
        .args(["-q", "-e", "-c", &format!("{} {args}", binary.display()), "/dev/null"])
        .envs(
            prepared
                .get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .env_remove("NO_COLOR")
        .envs(extra_env.iter().copied());
    let output = script.output().expect("script(1) from util-linux runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

fn slow_agent() -> Emulator {
    let emu = Emulator::start();
    emu.agent(|a| a.delay = Duration::from_millis(250));
    emu
}

#[test]
fn a_terminal_shows_activity_streams_the_answer_and_summarises_results() {
    let emu = slow_agent();
    let screen = on_a_terminal(&emu, "ask Q", &[]);
    for shown in [
        "thinking",
        "searching the data model",
        "running \"Revenue by month\"",
        "Answer 1: revenue rose every month; December was the best month (€2.4M).",
        "1. \"Revenue by month\": 12 rows",
        "-o csv for CSV",
    ] {
        assert!(screen.contains(shown), "{shown:?} not on the screen:\n{screen}");
    }
    assert_eq!(
        screen.matches("Answer 1:").count(),
        1,
        "the answer is shown once:\n{screen}"
    );
}

/// True when `screen` holds a colour or text style (an SGR sequence).
fn has_colour(screen: &str) -> bool {
    screen.split("\x1b[").skip(1).any(|rest| {
        let code: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == ';').collect();
        rest[code.len()..].starts_with('m')
    })
}

#[test]
fn quiet_keeps_the_terminal_plain_and_no_color_only_drops_colour() {
    let emu = slow_agent();
    let screen = on_a_terminal(&emu, "ask -q Q", &[]);
    assert!(screen.contains("Answer 1:"), "{screen}");
    assert!(
        !screen.contains("searching the data model") && !screen.contains("-o csv for CSV"),
        "{screen}"
    );
    // NO_COLOR (not empty) turns colour off, not the activity line, as
    // the help, the man page and the README say.
    let help = analyst().args(["ask", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains("(never in pipes or with -q; NO_COLOR turns off colour only) a spinner"),
        "{help}"
    );
    let emu = Emulator::start();
    emu.agent(|a| a.returned = 5);
    let (_, screen) = run_on_a_terminal(&emu, "ask -o csv Q", &[("NO_COLOR", "1")]);
    assert!(screen.contains("analyst: error: "), "{screen}");
    assert!(!has_colour(&screen), "{screen:?}");
    for (args, env) in [
        ("ask -o csv Q", vec![("NO_COLOR", "")]),
        ("--color always ask -o csv Q", vec![("NO_COLOR", "1")]),
    ] {
        let (_, screen) = run_on_a_terminal(&emu, args, &env);
        assert!(
            screen.contains("\x1b[1m\x1b[31merror:\x1b[0m"),
            "{args} {env:?}: {screen:?}"
        );
    }
    // In a pipe: no colour unless asked for.
    let piped = emu.analyst().args(["ask", "-o", "csv", "Q"]).output().unwrap();
    assert!(!has_colour(&String::from_utf8_lossy(&piped.stderr)));
    let piped = emu
        .analyst()
        .args(["--color", "always", "ask", "-o", "csv", "Q"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&piped.stderr).contains("\x1b[1m\x1b[31merror:\x1b[0m"));
}

#[test]
fn a_pipe_gets_no_spinner_and_no_summary() {
    let emu = Emulator::start();
    let output = emu
        .command()
        .args(["ask", "Q"])
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        matches!(lines[..], [message, "chat: chat-0001"] if message.starts_with("message: ") && message.ends_with("-message")),
        "{stderr}"
    );
}

/// A stream that tries to act on the terminal: the answer writes the
/// clipboard (OSC 52), a query title retitles the window, a tool error
/// clears the screen, the chat id carries an escape.
fn hostile_stream() -> ChatStream {
    let mut call = SqlCall::revenue_by_month(3);
    call.title = "Revenue\u{1b}]0;pwned\u{7}".into();
    ChatStream::new("chat\u{1b}[2J-id", Family::Cube)
        .user("Q")
        .sql_call(&call)
        .failed_sql_call("SELECT 1", "Error: \u{1b}[2Jboom")
        .final_answer(&["Sure\u{1b}]52;c;ZXZpbA==\u{7}", " thing\u{9b}2J\tdone\n"])
}

#[test]
fn escape_sequences_from_the_service_never_reach_the_terminal_live() {
    let emu = Emulator::start();
    for args in [
        "ask Q",
        "ask -q Q",
        "ask -o raw Q",
        "ask -o csv --query 1 Q",
        "ask -o events Q",
    ] {
        emu.script(Reply::stream(&hostile_stream()));
        let screen = run_on_a_terminal(&emu, args, &[]).1;
        for live in ["\u{1b}]52", "\u{1b}]0;pwned", "\u{1b}[2J", "\u{9b}2J"] {
            assert!(
                !screen.contains(live),
                "{args}: {live:?} reached the terminal:\n{screen:?}"
            );
        }
    }
    emu.script(Reply::stream(&hostile_stream()));
    let screen = run_on_a_terminal(&emu, "ask -q Q", &[]).1;
    assert!(
        screen.contains("Sure\\x1b]52;c;ZXZpbA==\\x07 thing\\u{9b}2J\tdone"),
        "shown, harmless, tabs kept:\n{screen:?}"
    );
}

#[test]
fn a_png_is_never_written_to_a_terminal() {
    let emu = Emulator::start();
    let (success, screen) = run_on_a_terminal(
        &emu,
        &format!("ask -o png --replay {}", fixture("revenue-by-month.ndjson")),
        &[],
    );
    assert!(!success);
    assert!(screen.contains("-o png writes a picture, not text"), "{screen}");
    assert!(!screen.contains("PNG"), "no picture bytes: {screen}");
}

#[test]
fn check_shows_live_progress_on_a_terminal_and_none_in_a_pipe() {
    let emu = Emulator::start();
    emu.agent(|a| a.delay = Duration::from_millis(60));
    let suite = ScratchFile::new(
        "progress.toml",
        "[[case]]\nname = \"first\"\nquestion = \"Q\"\n[[case]]\nname = \"second\"\nquestion = \"Q\"\nrepeat = 2\n",
    );
    let screen = on_a_terminal(&emu, &format!("check --jobs 2 {}", suite.display()), &[]);
    // PASS in green, bold.
    let pass = "\x1b[1m\x1b[32mPASS\x1b[0m  first  ";
    for shown in ["/3 runs", "passing, 0 failing", "slowest running: ", pass] {
        assert!(screen.contains(shown), "{shown:?} not on the screen:\n{screen}");
    }
    let output = emu.analyst().arg("check").arg(&*suite).output().unwrap();
    assert!(!String::from_utf8_lossy(&output.stderr).contains("runs  "));
}

#[test]
fn the_answer_is_rendered_markdown_on_a_terminal_shown_once_and_raw_in_a_pipe() {
    let markdown =
        "# Revenue\n\n**Up** 5% in May.\n\n- EMEA\n- AMER\n\n| region | revenue |\n|---|--:|\n| EMEA | 10 |\n";
    let stream = || {
        ChatStream::new("c-md", Family::Cube).user("Q").final_answer_then_whole(
            &[
                "# Revenue\n\n**Up** 5%",
                " in May.\n\n- EMEA\n- AMER\n\n",
                "| region | revenue |\n|---|--:|\n| EMEA | 10 |\n",
            ],
            // The complete message differs from the deltas by its end.
            markdown.trim_end(),
        )
    };
    let emu = Emulator::start();
    emu.agent(|a| a.delay = Duration::from_millis(20));
    emu.script(Reply::stream(&stream()));
    let screen = on_a_terminal(&emu, "ask Q", &[("NO_COLOR", "1")]);
    assert_eq!(screen.matches("Revenue").count(), 1, "shown once:\n{screen}");
    for shown in ["Up 5% in May.", "• EMEA", "• AMER", "│ EMEA   ┆      10 │"] {
        assert!(screen.contains(shown), "{shown:?} not on the screen:\n{screen}");
    }
    assert!(!screen.contains("**Up**") && !screen.contains("|---|"), "{screen}");
    // With colour, the heading is bold; the text from the service is not
    // a live escape sequence.
    emu.script(Reply::stream(&stream()));
    let screen = on_a_terminal(&emu, "ask Q", &[]);
    assert!(screen.contains("\x1b[1m\x1b[4mRevenue\x1b[0m"), "{screen:?}");
    // A pipe gets the service's text exactly.
    emu.script(Reply::stream(&stream()));
    emu.analyst()
        .args(["ask", "-q", "Q"])
        .assert()
        .success()
        .stdout(format!("{}\n", markdown.trim_end()));
}

#[test]
fn parquet_is_never_written_to_a_terminal() {
    let emu = Emulator::start();
    let (success, screen) = run_on_a_terminal(
        &emu,
        &format!("rows --from {} -o parquet", fixture("revenue-by-month.ndjson")),
        &[],
    );
    assert!(!success, "{screen}");
    assert!(screen.contains("-o parquet writes a binary file, not text"), "{screen}");
}

/// What stands on the screen's line before `at` (after the last newline or
/// carriage return), escape sequences included.
fn line_before(screen: &str, at: usize) -> &str {
    let before = &screen[..at];
    &before[before.rfind(['\n', '\r']).map_or(0, |i| i + 1)..]
}

#[test]
fn the_spinner_is_erased_before_each_note() {
    let emu = slow_agent();
    let screen = on_a_terminal(&emu, "ask Q", &[]);
    for note in ["message: ", "chat: chat-0001"] {
        let at = screen
            .find(note)
            .unwrap_or_else(|| panic!("{note:?} not shown:\n{screen}"));
        let line = line_before(&screen, at);
        assert!(
            line.is_empty() || line == "\x1b[2K",
            "{note:?} follows {line:?} on its line:\n{screen}"
        );
    }
}

#[test]
fn a_hint_never_names_the_mode_in_use() {
    let emu = slow_agent();
    let file = Scratch::new();
    let csv = file.join("out.csv");
    let screen = on_a_terminal(&emu, &format!("ask -o csv Q > {}", csv.display()), &[]);
    assert!(
        screen.contains("\"Revenue by month\": 12 rows"),
        "the summary is shown:\n{screen}"
    );
    assert!(!screen.contains("-o csv"), "{screen}");
    assert!(
        std::fs::read_to_string(&csv).unwrap().contains("month"),
        "the CSV went to the file"
    );
}

/// A stream whose text would read other than it is: bidirectional
/// controls in the answer, a tool's error (a note), a cell and a column
/// name, and a cell spanning lines.
fn reordering_stream() -> ChatStream {
    let mut call = SqlCall::revenue_by_month(2);
    call.columns[0].0 = "month\u{202e}txt.exe".into();
    call.rows[0][0] = json!("2024\u{2066}-01\nsecond line\rthird");
    ChatStream::new("c-bidi", Family::Cube)
        .user("Q")
        .sql_call(&call)
        .failed_sql_call("SELECT 1", "Error: \u{202e}gnorw")
        .final_answer(&["Total: \u{202e}001 \u{200f}\u{61c}done"])
}

#[test]
fn bidirectional_controls_are_shown_not_obeyed() {
    let emu = Emulator::start();
    for args in ["ask Q", "ask -o table --query 1 Q", "ask -o raw Q"] {
        emu.script(Reply::stream(&reordering_stream()));
        let screen = run_on_a_terminal(&emu, args, &[]).1;
        for live in ['\u{202e}', '\u{2066}', '\u{200f}', '\u{61c}'] {
            assert!(
                !screen.contains(live),
                "{args}: {live:?} reached the terminal:\n{screen}"
            );
        }
    }
    emu.script(Reply::stream(&reordering_stream()));
    let screen = on_a_terminal(&emu, "ask Q", &[("NO_COLOR", "1")]);
    assert!(screen.contains("Total: \\u{202e}001 \\u{200f}\\u{61c}done"), "{screen}");
    assert!(screen.contains("Error: \\u{202e}gnorw"), "the note too:\n{screen}");
    emu.script(Reply::stream(&reordering_stream()));
    let screen = on_a_terminal(&emu, "ask -o table --query 1 Q", &[("NO_COLOR", "1")]);
    assert!(screen.contains("month\\u{202e}txt.exe"), "the column name:\n{screen}");
}

#[test]
fn a_table_cell_never_breaks_its_row_in_a_pipe_either() {
    let emu = Emulator::start();
    emu.script(Reply::stream(&reordering_stream()));
    let output = emu
        .analyst()
        .args(["ask", "-q", "-o", "table", "--query", "1", "Q"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let table = String::from_utf8(output.stdout).unwrap();
    // Top border, header, separator, two rows, bottom border.
    assert_eq!(table.lines().count(), 6, "{table}");
    assert_whole(
        table.to_string(),
        str![[r#"
┌─────────────────────────────────────┬─────────────────────┬───────────────────┐
│ month\u{202e}txt.exe                ┆ orders_view.revenue ┆ orders_view.count │
╞═════════════════════════════════════╪═════════════════════╪═══════════════════╡
│ 2024\u{2066}-01\nsecond line\rthird ┆           1500000.5 ┆               900 │
│ 2024-02                             ┆           1537813.5 ┆               901 │
└─────────────────────────────────────┴─────────────────────┴───────────────────┘

"#]],
    );
}

#[test]
fn markdown_on_a_terminal_is_linear_in_the_answer() {
    // 16 KB of list markers nest 8,000 lists deep; so do block quotes.
    for marker in ["- ", "> "] {
        let answer = marker.repeat(8 * 1024) + "x";
        let emu = Emulator::start();
        emu.script(Reply::stream(
            &ChatStream::new("c-deep", Family::Cube)
                .user("Q")
                .final_answer(&[&answer]),
        ));
        let screen = on_a_terminal(&emu, "ask Q", &[("NO_COLOR", "1")]);
        assert!(screen.contains('x'), "{marker:?}: the answer is shown");
        assert!(
            screen.len() < 20 * answer.len(),
            "{marker:?}: {} bytes on the terminal for a {}-byte answer",
            screen.len(),
            answer.len()
        );
    }
}

#[test]
fn history_on_a_terminal_is_coloured_and_plain_with_no_color() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let db = dir.join("history.db");
    let db = db.to_str().unwrap();
    let question = format!("Revenue {}?", "by month and region ".repeat(10));
    emu.analyst()
        .env("ANALYST_HISTORY_DB", db)
        .args(["ask", &question])
        .assert()
        .success();
    let screen = on_a_terminal(&emu, "history", &[("ANALYST_HISTORY_DB", db)]);
    assert!(has_colour(&screen), "{screen:?}");
    let line = screen.lines().find(|line| line.contains("completed")).unwrap();
    assert!(line.starts_with("1 ") && line.contains("1280"), "{screen}");
    // Headers in the terminal's ordinary bold, none red like an error.
    assert!(screen.contains("\x1b[1mEXIT  \x1b[0m"), "{screen:?}");
    assert!(!screen.contains("\x1b[31mEXIT"), "{screen:?}");
    let plain = on_a_terminal(&emu, "history", &[("ANALYST_HISTORY_DB", db), ("NO_COLOR", "1")]);
    assert!(!has_colour(&plain), "{plain:?}");
}

#[test]
fn a_profile_command_keeps_the_terminal_and_runs_apart_without_one() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    // The key is printed only when the command's process group is the
    // one asked for: the terminal's foreground group (where a password
    // manager may prompt without being stopped), or a group of its own.
    let profile = |wanted: &str| {
        format!(
            "[profiles.default]\napi_key_command = \"read -r _ _ _ _ group _ _ foreground _ < /proc/$$/stat; [ {wanted} ] && printf %s {API_KEY}\"\n"
        )
    };
    let on_terminal = dir.write("terminal.toml", profile("$group = $foreground"));
    let apart = dir.write("apart.toml", profile("$group = $$"));
    let config = |file: &std::path::Path| {
        [
            ("ANALYST_CONFIG", file.to_str().unwrap().to_string()),
            ("ANALYST_API_KEY", String::new()),
        ]
    };
    let env = config(&on_terminal);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (success, screen) = run_on_a_terminal(&emu, "ask -q Q", &env);
    assert!(success, "{screen}");
    // Without a controlling terminal (setsid), only the command apart gets
    // the key: each condition is false in the other place.
    let binary = assert_cmd::cargo::cargo_bin("analyst");
    for (file, code) in [(&apart, 0), (&on_terminal, 2)] {
        let output = emu
            .command_for("setsid")
            .arg("-w")
            .arg(&binary)
            .envs(config(file))
            .args(["ask", "Q"])
            .output()
            .unwrap();
        exits(&output, code);
    }
    assert_eq!(emu.chat_bodies().len(), 2);
}
