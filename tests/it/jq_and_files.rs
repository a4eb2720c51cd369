//! `--jq EXPR` on every JSON output (a jq in the binary, as `gh --jq`) and
//! `--output-file FILE` on every command that writes data (atomic, 0600,
//! untouched on failure).

use crate::support::*;
use predicates::prelude::*;

/// The permission bits of the file at `path`.
fn mode_of(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The names in `dir`, sorted.
fn names_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn jq_filters_ask_json_and_events_strings_raw_and_numbers_exact() {
    let replay = fixture("revenue-by-month.ndjson");
    analyst()
        .args(["ask", "-q", "--replay", &replay, "-o", "json", "--jq"])
        .arg(".queries[0].rows[0], .queries[0].title, (.queries | length)")
        .assert()
        .success()
        .stdout(
            "{\"month\":\"2024-01-01T00:00:00.000\",\"orders_view.total_revenue\":1804250.5}\nRevenue by month, 2024\n1\n",
        );
    analyst()
        .args(["ask", "-q", "--replay", &replay, "-o", "events", "--jq"])
        .arg("select(.toolCall.result.data) | .toolCall.result.data | length")
        .assert()
        .success()
        .stdout("12\n");
    // Every digit survives the filter.
    let stream = ChatStream::new("c-digits", Family::Cube)
        .user("Q")
        .sql_call(&SqlCall {
            rows: vec![vec![
                serde_json::json!("2024"),
                serde_json::json!("12345678901234.56789"),
            ]],
            ..SqlCall::revenue_by_month(1)
        })
        .final_answer(&["Done"]);
    let saved = ScratchFile::new("digits.ndjson", stream.bytes());
    analyst()
        .args(["ask", "-q", "--replay"])
        .arg(&*saved)
        .args(["-o", "json", "--jq", ".queries[0].rows[0][\"orders_view.revenue\"]"])
        .assert()
        .success()
        .stdout("12345678901234.56789\n");
}

#[test]
fn jq_filters_rows_session_and_check_reports() {
    let replay = fixture("revenue-by-month.ndjson");
    analyst()
        .args(["rows", "--from", &replay, "-o", "ndjson", "--jq", ".month"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "2024-01-01T00:00:00.000\n2024-02-01T00:00:00.000\n",
        ));
    analyst()
        .args(["rows", "--from", &replay, "-o", "json", "--jq", "length"])
        .assert()
        .success()
        .stdout("12\n");
    let emu = Emulator::start();
    emu.analyst()
        .env("ANALYST_BASE_URL", emu.base())
        .env("ANALYST_DEPLOYMENT_ID", "42")
        .args(["session", "-o", "json", "--jq", ".sessionId | length > 0"])
        .assert()
        .success()
        .stdout("true\n");
    let suite = ScratchFile::new("suite.toml", "[[case]]\nname = \"one\"\nquestion = \"Q\"\n");
    emu.analyst()
        .args(["check", "-o", "json", "--jq", ".cases[] | [.name, .status] | @tsv"])
        .arg(&*suite)
        .assert()
        .success()
        .stdout("one\tpassed\n");
}

#[test]
fn a_bad_or_misplaced_jq_expression_is_exit_2_before_anything_is_sent() {
    let emu = Emulator::start();
    for (args, message) in [
        (
            vec!["ask", "Q", "-o", "json", "--jq", ".["],
            "--jq \".[\" is not a jq expression",
        ),
        (
            vec!["ask", "Q", "-o", "json", "--jq", "nosuchfilter"],
            "nosuchfilter is not defined",
        ),
        (
            vec!["ask", "Q", "-o", "csv", "--jq", "."],
            "--jq filters JSON, and -o csv is not JSON",
        ),
    ] {
        emu.analyst()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
    }
    // A filter that fails on the data is a usage error too, said once.
    let replay = fixture("revenue-by-month.ndjson");
    analyst()
        .args(["ask", "-q", "--replay", &replay, "-o", "json", "--jq", ".answer.x"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("analyst: error: --jq: cannot index"));
    emu.expect(Route::Chat, 0);
}

#[test]
fn output_file_is_written_whole_and_private_or_not_at_all() {
    let replay = fixture("revenue-by-month.ndjson");
    let dir = Scratch::new();
    let target = dir.join("revenue.csv");
    let piped = analyst()
        .args(["ask", "-q", "--replay", &replay, "-o", "csv"])
        .output()
        .unwrap();
    analyst()
        .args(["ask", "-q", "--replay", &replay, "-o", "csv", "--output-file"])
        .arg(&target)
        .assert()
        .success()
        .stdout("");
    assert_eq!(std::fs::read(&target).unwrap(), piped.stdout);
    assert_eq!(mode_of(&target), 0o600);
    assert_eq!(names_in(&dir), ["revenue.csv"], "no temporary file is left");

    // A failure leaves the earlier file as it was, and no temporary file.
    std::fs::write(&target, "yesterday's rows\n").unwrap();
    let emu = Emulator::start();
    emu.script(Reply::status(500, "application/json", r#"{"error":"boom"}"#));
    emu.analyst()
        .args(["--retries", "0", "ask", "Q", "-o", "csv", "--output-file"])
        .arg(&target)
        .assert()
        .code(6);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "yesterday's rows\n");
    assert_eq!(names_in(&dir), ["revenue.csv"]);
    // A truncated result without --allow-partial: exit 10, file untouched.
    emu.agent(|a| a.returned = 5);
    emu.analyst()
        .args(["ask", "Q", "-o", "csv", "--output-file"])
        .arg(&target)
        .assert()
        .code(10);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "yesterday's rows\n");

    // rows and check write there too; --jq output as well.
    let rows = dir.join("rows.ndjson");
    analyst()
        .args([
            "rows",
            "--from",
            &replay,
            "-o",
            "ndjson",
            "--jq",
            ".month",
            "--output-file",
        ])
        .arg(&rows)
        .assert()
        .success()
        .stdout("");
    assert_eq!(std::fs::read_to_string(&rows).unwrap().lines().count(), 12);

    // A folder that does not exist, or a folder as the file: exit 2, nothing sent.
    for bad in [dir.join("missing/out.csv"), dir.to_path_buf()] {
        emu.analyst()
            .args(["ask", "Q", "-o", "csv", "--output-file"])
            .arg(&bad)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--output-file"));
    }
    emu.expect(Route::Chat, 2);
}

/// Runs `analyst ARGS | head -1` in bash; returns analyst's exit code,
/// what head printed, and how long it took.
fn into_head(args: &str) -> (i32, String, std::time::Duration) {
    let started = std::time::Instant::now();
    let binary = assert_cmd::cargo::cargo_bin("analyst");
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -v 4000000; {} {args} | head -1; exit ${{PIPESTATUS[0]}}",
            binary.display()
        ))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        started.elapsed(),
    )
}

#[test]
fn jq_results_are_written_as_they_come_and_a_gone_reader_ends_it_with_exit_0() {
    let replay = fixture("revenue-by-month.ndjson");
    let (code, printed, took) = into_head(&format!("ask -q --replay {replay} -o json --jq 'range(1e9)'"));
    assert_eq!((code, printed.as_str()), (0, "0\n"));
    assert!(took < std::time::Duration::from_secs(20), "took {took:?}");
}

#[test]
fn jq_keeps_no_secret_nesting_or_exit_code_of_its_own() {
    let emu = Emulator::start();
    for (expression, why) in [
        ("env.ANALYST_API_KEY", "env and $ENV are not available"),
        ("$ENV.ANALYST_API_KEY", "env and $ENV are not available"),
        (&"[".repeat(5000), "nest deeper than 256 levels"),
    ] {
        let output = emu
            .analyst()
            .args(["ask", "-o", "json", "--jq", expression, "Q"])
            .output()
            .unwrap();
        exits(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(why), "{stderr}");
        assert!(!stderr.contains(API_KEY) && !String::from_utf8_lossy(&output.stdout).contains(API_KEY));
    }
    assert!(emu.requests().is_empty(), "nothing was sent");
    let replay = fixture("revenue-by-month.ndjson");
    // halt ends the output, exit 0; halt_error says its message, exit 9.
    analyst()
        .args(["ask", "-q", "--replay", &replay, "-o", "json", "--jq", "1, halt, 2"])
        .assert()
        .code(0)
        .stdout("1\n");
    analyst()
        .args(["ask", "-q", "--replay", &replay, "-o", "json", "--jq"])
        .arg("\"no rows\\u001b[31m\" | halt_error(3)")
        .assert()
        .code(9)
        .stderr(predicate::str::contains("no rows\\x1b[31m"));
    // -o vega is JSON too.
    analyst()
        .args([
            "ask",
            "-q",
            "--replay",
            &replay,
            "-o",
            "vega",
            "--jq",
            ".data.values | length",
        ])
        .assert()
        .success()
        .stdout("12\n");
}

#[test]
fn a_filter_still_computing_stops_for_the_timeout_and_ctrl_c_aborting_the_chat() {
    let emu = Emulator::start();
    emu.agent(|a| {
        a.padding = 300;
        a.delay = std::time::Duration::from_millis(100);
    });
    let started = std::time::Instant::now();
    let output = emu
        .analyst()
        .args([
            "ask",
            "-o",
            "events",
            "--timeout",
            "2s",
            "--jq",
            "last(range(1e12))",
            "Q",
        ])
        .output()
        .unwrap();
    exits(&output, 124);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(emu.requests_on(Route::Abort).len(), 1, "the chat was aborted");
    let emu = Emulator::start();
    emu.agent(|a| {
        a.padding = 300;
        a.delay = std::time::Duration::from_millis(100);
    });
    let mut running = Running::start(&emu, &["ask", "-o", "events", "--jq", "last(range(1e12))", "Q"]);
    running.wait_for_stderr("chat: chat-0001");
    std::thread::sleep(std::time::Duration::from_millis(500));
    running.signal("INT");
    let (code, _, stderr, _) = running.finish(std::time::Duration::from_secs(10));
    assert_eq!(code, Some(130), "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0001
analyst: error: interrupted by SIGINT; chat chat-0001 aborted
"#]],
    );
}

#[test]
fn no_command_writes_over_a_file_it_reads() {
    let dir = Scratch::new();
    let saved = dir.write("s.ndjson", std::fs::read(fixture("revenue-by-month.ndjson")).unwrap());
    let stream = std::fs::read(&saved).unwrap();
    std::os::unix::fs::symlink(&saved, dir.join("link.ndjson")).unwrap();
    let emu = Emulator::start();
    let suite = dir.write("suite.toml", "[[case]]\nname = \"one\"\nquestion = \"Q\"\n");
    let report = dir.join("report.json");
    emu.analyst()
        .args(["check", "-q", "-o", "json", "--output-file"])
        .arg(&report)
        .arg(&suite)
        .assert()
        .success();
    let files = [&saved, &suite, &report].map(|path| std::fs::read(path).unwrap());
    let saved = saved.display().to_string();
    let suite = suite.display().to_string();
    let report = report.display().to_string();
    let link = dir.join("link.ndjson").display().to_string();
    let respelled = dir.join("./s.ndjson").display().to_string();
    for (args, message) in [
        // The README's nightly recipe, pointed at its own saved stream.
        (
            vec!["ask", "--replay", &saved, "-o", "raw", "--output-file", &respelled],
            "is the --replay file",
        ),
        (
            vec!["ask", "--replay", &saved, "-o", "csv", "--output-file", &link],
            "is the --replay file",
        ),
        (vec!["ask", "--replay", &saved, "--tee", &link], "is the --replay file"),
        (
            vec!["rows", "--from", &saved, "-o", "csv", "--output-file", &saved],
            "is the --from file",
        ),
        (
            vec!["check", &suite, "-o", "json", "--output-file", &suite],
            "is the suite",
        ),
        (
            vec![
                "check",
                &suite,
                "--baseline",
                &report,
                "-o",
                "json",
                "--output-file",
                &report,
            ],
            "is the --baseline report",
        ),
        (
            vec!["check", &suite, "--junit", &report, "--baseline", &report],
            "is the --baseline report",
        ),
        (
            vec!["check", "merge", &report, "-o", "json", "--output-file", &report],
            "is a report it merges",
        ),
        (
            vec!["ask", "Q", "--tee", &saved, "-o", "raw", "--output-file", &link],
            "is also the --output-file file",
        ),
    ] {
        emu.analyst()
            .args(&args)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(message));
    }
    let after = [&saved, &suite, &report].map(|path| std::fs::read(path).unwrap());
    assert_eq!(after, files, "nothing was written");
    assert_eq!(std::fs::read(&saved).unwrap(), stream);
    emu.expect(Route::Chat, 1);
}

#[test]
fn check_save_creates_private_folders() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let suite = dir.write("suite.toml", "[[case]]\nname = \"one\"\nquestion = \"Q\"\n");
    let save = dir.join("runs/nightly");
    emu.analyst()
        .args(["check", "-q", "--save"])
        .arg(&save)
        .arg(&suite)
        .assert()
        .success();
    assert_eq!(mode_of(&dir.join("runs")), 0o700);
    assert_eq!(mode_of(&save), 0o700);
    assert_eq!(
        names_in(&save).len(),
        2,
        "the run's stream is kept, and what a re-grade reads"
    );
    assert_eq!(mode_of(&save.join("analyst-save.json")), 0o600);
}
