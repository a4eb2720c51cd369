//! The small habits of a shell: `analyst version`, and error messages that
//! are one `analyst: error:` line naming the flag, variable, profile key or
//! API the value really came from.

use crate::support::*;
use predicates::prelude::*;

#[test]
fn version_is_short_and_the_version_command_says_what_was_built() {
    analyst()
        .arg("--version")
        .assert()
        .success()
        .stdout(format!("analyst {}\n", env!("CARGO_PKG_VERSION")));
    let output = analyst().arg("version").output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("analyst {}", env!("CARGO_PKG_VERSION")));
    assert!(
        lines[1].starts_with("commit: ") && lines[1].len() > "commit: ".len(),
        "{text}"
    );
    assert!(lines[2].starts_with("commit date: "), "{text}");
    assert!(lines[3].starts_with("target: ") && lines[3].contains("linux"), "{text}");
}

#[test]
fn command_line_mistakes_are_one_prefixed_line_naming_the_help_to_read() {
    for (args, expected) in [
        (
            vec!["ask", "--bogus"],
            vec!["unexpected argument '--bogus' found", "(see 'analyst ask --help')"],
        ),
        (
            vec!["abort"],
            vec![
                "required arguments were not provided: --chat-id <ID>",
                "(see 'analyst abort --help')",
            ],
        ),
        (
            vec!["check", "merge"],
            vec!["<REPORT>", "(see 'analyst check merge --help')"],
        ),
        (
            vec!["ask", "-o", "nope"],
            vec!["invalid value 'nope' for '--output <MODE>'", "possible values"],
        ),
        (
            vec!["nosuch"],
            vec!["unrecognized subcommand 'nosuch'", "(see 'analyst --help')"],
        ),
        // A swap of two letters, which clap's own suggestion misses.
        (
            vec!["aks"],
            vec!["unrecognized subcommand 'aks'; did you mean 'analyst ask'? (see 'analyst --help')"],
        ),
        (
            vec!["What's revenue?"],
            vec!["; to ask it: analyst ask 'What'\\''s revenue?' (see 'analyst --help')"],
        ),
    ] {
        fails_in_one_line(&analyst().args(&args).output().unwrap(), 2, &expected);
    }
}

#[test]
fn a_command_alone_lists_what_it_can_do() {
    for (args, listed) in [
        (vec![], ["ask", "check", "history", "doctor"]),
        (vec!["config"], ["list", "path", "profiles", "help"]),
    ] {
        let output = analyst().args(&args).output().unwrap();
        exits(&output, 2);
        assert!(output.stdout.is_empty());
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains("Commands:"), "{args:?}: {stderr}");
        for command in listed {
            assert!(
                stderr
                    .lines()
                    .any(|line| line.trim_start().starts_with(&format!("{command} "))),
                "{args:?} lists {command}: {stderr}"
            );
        }
    }
}

#[test]
fn values_are_blamed_on_where_they_came_from() {
    let emu = Emulator::start();
    // The environment's external id, not the flag.
    fails_in_one_line(
        &emu.analyst()
            .env("ANALYST_EXTERNAL_ID", "Ana Smith")
            .args(["ask", "Q"])
            .output()
            .unwrap(),
        2,
        &["ANALYST_EXTERNAL_ID \"Ana Smith\" contains spaces"],
    );
    fails_in_one_line(
        &emu.analyst()
            .args(["ask", "--external-id", "Ana", "Q"])
            .output()
            .unwrap(),
        2,
        &["--external-id \"Ana\" has uppercase letters"],
    );
    // A chat URL that is not one is refused before sending, naming its source;
    // a trailing slash is forgiven.
    let url = emu.chat_url();
    fails_in_one_line(
        &emu.analyst()
            .env("ANALYST_CHAT_URL", url.trim_end_matches("/stream-chat-state"))
            .args(["ask", "Q"])
            .output()
            .unwrap(),
        2,
        &[
            "ANALYST_CHAT_URL",
            "is not a Chat API URL: a Chat API URL ends in /chat/stream-chat-state",
        ],
    );
    emu.analyst()
        .env("ANALYST_CHAT_URL", format!("{url}/"))
        .args(["ask", "Q"])
        .assert()
        .success();
    // A URL without its scheme: say what to add.
    fails_in_one_line(&
        emu.analyst()
            .env("ANALYST_CHAT_URL", "acme.cubecloud.dev/api/v1/public/acme/agents/7/chat/stream-chat-state")
            .args(["ask", "Q"])
            .output()
            .unwrap(),
        2,
        &[
            "ANALYST_CHAT_URL",
            "has no scheme: add https:// (https://acme.cubecloud.dev/api/v1/public/acme/agents/7/chat/stream-chat-state)",
        ],
    );
    // A bad pattern: one line, with where it went wrong.
    fails_in_one_line(
        &emu.analyst()
            .args(["ask", "Q", "--expect-answer", "(oops"])
            .output()
            .unwrap(),
        2,
        &["--expect-answer \"(oops\" is not a valid regular expression: unclosed group at character 1"],
    );
    emu.expect(Route::Chat, 1);
}

#[test]
fn files_and_stdin_that_are_not_what_they_should_be_are_usage_errors() {
    let dir = Scratch::new();
    fails_in_one_line(
        &analyst().arg("ask").arg("--replay").arg(&*dir).output().unwrap(),
        2,
        &["that is a folder, not a saved stream"],
    );
    fails_in_one_line(
        &analyst().arg("rows").arg("--from").arg(&*dir).output().unwrap(),
        2,
        &["--from", "that is a folder, not a saved stream"],
    );
    fails_in_one_line(
        &analyst_process()
            .args(["rows"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap(),
        2,
        &["standard input is empty: where is the SQL?", "--sql"],
    );
}

#[test]
fn a_404_names_the_flags_of_the_api_that_answered() {
    let emu = Emulator::start();
    emu.script_on(
        Route::Session,
        Reply::status(404, "application/json", r#"{"error":"Not found"}"#),
    );
    emu.analyst()
        .env("ANALYST_BASE_URL", emu.base())
        .env("ANALYST_DEPLOYMENT_ID", "42")
        .arg("session")
        .assert()
        .code(5)
        .stderr(
            predicate::str::contains("check --base-url (ANALYST_BASE_URL")
                .and(predicate::str::contains("--chat-id").not()),
        );
    emu.script_on(
        Route::Data,
        Reply::status(404, "application/json", r#"{"error":"Not found"}"#),
    );
    emu.analyst()
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .args(["rows", "--sql", "SELECT 1"])
        .assert()
        .code(5)
        .stderr(
            predicate::str::contains("check --data-url (ANALYST_DATA_URL")
                .and(predicate::str::contains("--chat-url").not()),
        );
}

#[test]
fn table_aligns_the_rows_right_aligns_numbers_and_fits_a_terminal() {
    let replay = fixture("revenue-by-month.ndjson");
    let output = analyst()
        .args(["ask", "-q", "--replay", &replay, "-o", "table"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let table = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines.len(),
        12 + 4,
        "a header, its rule, 12 rows, two borders:\n{table}"
    );
    assert!(lines[1].contains("month") && lines[1].contains("orders_view.total_revenue"));
    assert!(
        lines[3].contains("│ 2024-01-01T00:00:00.000 ┆                 1804250.5 │"),
        "{table}"
    );
    let widths: Vec<usize> = lines.iter().map(|line| line.chars().count()).collect();
    assert!(widths.iter().all(|&w| w == widths[0]), "aligned: {table}");
    // rows -o table is the same table.
    let rows = analyst()
        .args(["rows", "--from", &replay, "-o", "table"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(rows.stdout).unwrap(), table);

    // On a 40-column terminal, every line fits and long cells are cut.
    let binary = assert_cmd::cargo::cargo_bin("analyst");
    let output = std::process::Command::new("script")
        .args([
            "-q",
            "-e",
            "-c",
            &format!(
                "stty rows 24 cols 40; {} ask -q --replay {replay} -o table",
                binary.display()
            ),
            "/dev/null",
        ])
        .env("XDG_CONFIG_HOME", no_config_home())
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&output.stdout);
    assert!(screen.contains("2024-01-01T00:00…"), "{screen}");
    assert!(
        screen.lines().all(|line| line.trim_end().chars().count() <= 40),
        "{screen}"
    );
}

/// `analyst` against the emulator with its data query API and account host.
fn analyst_everywhere(emu: &Emulator) -> assert_cmd::Command {
    let mut command = emu.analyst();
    command
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .env("ANALYST_BASE_URL", emu.base())
        .env("ANALYST_DEPLOYMENT_ID", "42");
    command
}

/// The row of `check` in a doctor or config table.
fn row<'a>(table: &'a str, check: &str) -> &'a str {
    table
        .lines()
        .find(|line| line.starts_with(&format!("│ {check} ")))
        .unwrap_or_else(|| panic!("no row {check}:\n{table}"))
}

#[test]
fn doctor_checks_every_setting_and_calls_each_endpoint_harmlessly() {
    let emu = Emulator::start();
    let output = analyst_everywhere(&emu).arg("doctor").output().unwrap();
    exits(&output, 0);
    let table = String::from_utf8(output.stdout).unwrap();
    for (check, shown) in [
        ("chat URL", "(an agent URL)"),
        ("chat URL", "ANALYST_CHAT_URL"),
        ("chat credential", "an API key: set"),
        ("chat credential", "ANALYST_API_KEY"),
        ("identity", "external user ci-bot"),
        ("identity", "ANALYST_EXTERNAL_ID"),
        ("data query API", "ANALYST_DATA_URL"),
        ("chat API answers", "404 for a made-up chat"),
        ("data query API answers", "SELECT 1 answered"),
        ("account host answers", "nothing minted"),
    ] {
        assert!(row(&table, check).contains(shown), "{check}: {shown}:\n{table}");
    }
    assert!(!table.contains(API_KEY) && !table.contains(DATA_SECRET), "{table}");
    // Nothing was asked or minted.
    emu.expect(Route::Chat, 0);
    emu.expect(Route::Session, 0);
    emu.expect(Route::Abort, 1);
    emu.expect(Route::Revoke, 1);
    emu.expect(Route::Data, 1);

    // A rejected key: the chat check fails with exit 3.
    let emu = Emulator::start();
    let output = emu
        .analyst()
        .env("ANALYST_API_KEY", "sk-wrong-key")
        .arg("doctor")
        .output()
        .unwrap();
    exits(&output, 3);
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(row(&table, "chat API answers").contains("FAIL (exit 3)"), "{table}");
    assert!(row(&table, "data query API").contains("not set"), "{table}");
    // The same findings for a script: -o json, the same exit code.
    let output = emu
        .analyst()
        .env("ANALYST_API_KEY", "sk-wrong-key")
        .args(["doctor", "-o", "json"])
        .output()
        .unwrap();
    exits(&output, 3);
    let findings: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let finding = |check: &str| {
        findings
            .as_array()
            .unwrap()
            .iter()
            .find(|finding| finding["check"] == check)
            .unwrap_or_else(|| panic!("no {check} in {findings}"))
            .clone()
    };
    let answers = finding("chat API answers");
    assert_eq!(
        (&answers["result"], &answers["exitCode"]),
        (&"failed".into(), &3.into())
    );
    assert_eq!(finding("data query API")["result"], "unset");
    assert_eq!(finding("chat URL")["from"], "ANALYST_CHAT_URL");
    assert!(!String::from_utf8_lossy(&output.stdout).contains("sk-wrong-key"));

    // --offline calls nothing; a bad setting is its exit code.
    let emu = Emulator::start();
    let output = emu
        .analyst()
        .env("ANALYST_EXTERNAL_ID", "Not Valid")
        .args(["doctor", "--offline"])
        .output()
        .unwrap();
    exits(&output, 2);
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(row(&table, "identity").contains("FAIL (exit 2)"), "{table}");
    assert!(row(&table, "identity").contains("ANALYST_EXTERNAL_ID"), "{table}");
    assert!(!table.contains("answers"), "{table}");
    assert!(emu.requests().is_empty());
}

#[test]
fn config_shows_its_path_and_every_setting_with_its_source() {
    let dir = Scratch::new();
    let path = dir.write(
        "analyst/config.toml",
        "default = \"prod\"\n[profiles.prod]\nchat_url = \"https://ai.example.dev/api/v1/public/acme/agents/7/chat/stream-chat-state\"\nexternal_id = \"ci-bot\"\napi_key_command = \"echo sk-secret-from-command\"\n",
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    analyst()
        .env("XDG_CONFIG_HOME", &*dir)
        .args(["config", "path"])
        .assert()
        .success()
        .stdout(format!("{}\n", path.display()));
    let output = analyst()
        .env("XDG_CONFIG_HOME", &*dir)
        .env("ANALYST_DATA_TOKEN", "data-token-abcdef")
        .env("ANALYST_TIMEZONE", "Europe/Berlin")
        .args(["config", "list"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let table = String::from_utf8(output.stdout).unwrap();
    let in_profile = format!("of profile prod ({})", path.display());
    assert!(row(&table, "config file").contains("profile prod"), "{table}");
    assert!(
        row(&table, "chat URL").contains(&format!("chat_url {in_profile}")),
        "{table}"
    );
    assert!(row(&table, "external id").contains("ci-bot"), "{table}");
    assert!(
        row(&table, "API key").contains("set") && row(&table, "API key").contains("api_key_command"),
        "{table}"
    );
    assert!(row(&table, "data token").contains("ANALYST_DATA_TOKEN"), "{table}");
    assert!(row(&table, "time zone").contains("Europe/Berlin"), "{table}");
    assert!(row(&table, "data secret").contains("unset"), "{table}");
    assert!(
        !table.contains("sk-secret") && !table.contains("data-token-abcdef"),
        "the command is not run, no secret shown: {table}"
    );
    // The environment wins over the profile, and says so.
    let output = analyst()
        .env("XDG_CONFIG_HOME", &*dir)
        .env("ANALYST_CHAT_URL", "https://other.example.dev/x/chat/stream-chat-state")
        .args(["config", "list"])
        .output()
        .unwrap();
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(row(&table, "chat URL").contains("ANALYST_CHAT_URL"), "{table}");
    // -v names the profile and its file.
    analyst()
        .env("XDG_CONFIG_HOME", &*dir)
        .args(["-v", "config", "list"])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "profile prod of {} (chosen by default in",
            path.display()
        )));
}

#[test]
fn suite_mistakes_are_one_line_naming_the_suite_field() {
    let emu = Emulator::start();
    for (field, expected) in [
        ("expect_answer = \"(oops\"", ":4: field expect_answer: expect-answer \"(oops\" is not a valid regular expression: unclosed group at character 1"),
        ("internal_id = \"ana@acme.example\"\ngroups = [\"g\"]", "groups cannot be used with internal_id"),
        ("external_id = \"Ana Smith\"", "external_id \"Ana Smith\" contains spaces"),
    ] {
        let suite = ScratchFile::new("suite.toml", format!("[[case]]\nname = \"a\"\nquestion = \"Q\"\n{field}\n"));
        fails_in_one_line(&emu.analyst().arg("check").arg(&*suite).output().unwrap(), 2, &[expected]);
    }
    // The report of a check goes to --output-file too, whole.
    let suite = ScratchFile::new("suite.toml", "[[case]]\nname = \"a\"\nquestion = \"Q\"\n");
    let report = suite.with_file_name("report.json");
    emu.analyst()
        .args(["check", "-o", "json", "--output-file"])
        .arg(&report)
        .arg(&*suite)
        .assert()
        .success()
        .stdout("");
    let document: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(document["passed"], 1);
    emu.expect(Route::Chat, 1);
}

#[test]
fn network_options_belong_to_the_commands_that_call_the_service() {
    let help = |args: &[&str]| {
        let output = analyst().args(args).arg("--help").output().unwrap();
        exits(&output, 0);
        String::from_utf8(output.stdout).unwrap()
    };
    for args in [
        &["history", "list"][..],
        &["check", "merge"],
        &["config", "list"],
        &["completions"],
        &[],
    ] {
        let shown = help(args);
        for flag in ["--retries", "--timeout", "--idle-timeout", "--connect-timeout"] {
            let offered = format!("{flag} <");
            assert!(!shown.contains(&offered), "{args:?} --help offers {flag}:\n{shown}");
        }
    }
    for args in [
        &["ask"][..],
        &["abort"],
        &["session"],
        &["session", "revoke"],
        &["rows"],
        &["check"],
        &["doctor"],
    ] {
        let shown = help(args);
        assert!(
            shown.contains("Network:") && shown.contains("--retries"),
            "{args:?}:\n{shown}"
        );
    }
    // Not taken by a command that calls nothing; still taken before the
    // command, as earlier versions took them, and after it the command's own win.
    let output = analyst().args(["history", "list", "--retries", "0"]).output().unwrap();
    exits(&output, 2);
    let emu = Emulator::start();
    emu.analyst()
        .args(["--retries", "0", "ask", "-q", "Q"])
        .assert()
        .success();
    let output = emu
        .analyst()
        .args(["--timeout", "1h", "ask", "--timeout", "nonsense", "Q"])
        .output()
        .unwrap();
    exits(&output, 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains("--timeout"));
    let output = emu
        .analyst()
        .env("ANALYST_TIMEOUT", "nonsense")
        .args(["--timeout", "1h", "ask", "-q", "Q"])
        .output()
        .unwrap();
    exits(&output, 0);
}

#[test]
fn no_command_writes_a_header_or_an_empty_document_before_it_fails() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let damaged = dir.write("damaged.db", "this is not a SQLite database, it is text");
    let suite = dir.write("one.toml", "[[case]]\nname = \"one\"\nquestion = \"Q\"\n");
    let bad_report = dir.write("report.json", "{\"not\": \"a report\"}");
    let stream_error = ChatStream::new("c-err", Family::Semantic)
        .sql_call(&SqlCall::revenue_by_month(3))
        .error_line("the agent crashed");
    let wrong_key = [("ANALYST_API_KEY", "sk-wrong-key-0000")];
    let history = [("ANALYST_HISTORY_DB", damaged.to_str().unwrap())];
    let base = emu.base();
    let account = [
        ("ANALYST_API_KEY", "sk-wrong-key-0000"),
        ("ANALYST_BASE_URL", base.as_str()),
        ("ANALYST_DEPLOYMENT_ID", "42"),
    ];
    // The command line, its environment, whether the stream breaks off
    // with an error line, and the exit code.
    type Failing<'a> = (Vec<&'a str>, &'a [(&'a str, &'a str)], bool, i32);
    let cases: Vec<Failing> = vec![
        (vec!["ask", "-o", "csv", "Q"], &wrong_key, false, 3),
        (vec!["ask", "-o", "table", "Q"], &wrong_key, false, 3),
        (vec!["ask", "-o", "vega", "Q"], &wrong_key, false, 3),
        (vec!["ask", "-o", "csv", "--query", "1", "Q"], &[], true, 7),
        (vec!["ask", "-o", "events", "--jq", ".", "Q"], &wrong_key, false, 3),
        (
            vec!["check", "-o", "json", suite.to_str().unwrap()],
            &wrong_key,
            false,
            3,
        ),
        (vec!["check", "--tap", suite.to_str().unwrap()], &wrong_key, false, 3),
        (
            vec!["check", "merge", "-o", "json", bad_report.to_str().unwrap()],
            &[],
            false,
            2,
        ),
        (vec!["session", "--external-id", "c42"], &account, false, 3),
        (vec!["history", "-o", "json"], &history, false, 2),
        (vec!["history", "usage", "-o", "csv"], &history, false, 2),
        (vec!["history", "export", "morning", "-o", "json"], &history, false, 2),
    ];
    for (args, env, scripted, code) in cases {
        if scripted {
            emu.script(Reply::stream(&stream_error));
        }
        let output = emu.analyst().args(&args).envs(env.iter().copied()).output().unwrap();
        exits(&output, code);
        assert!(
            output.stdout.is_empty(),
            "analyst {}: {:?}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout)
        );
    }
}

#[test]
fn habits_of_gh_and_jq_get_what_they_mean_here() {
    let error = |args: &[&str]| {
        let output = analyst().args(args).output().unwrap();
        exits(&output, 2);
        one_error_line(&output)
    };
    assert_whole(
        error(&["ask", "--json", "Q"]),
        str!["analyst: error: unexpected argument '--json' found; did you mean '-o json'? (analyst's outputs are chosen with -o) (see 'analyst ask --help')"],
    );
    assert_whole(
        error(&["ask", "--format=csv", "Q"]),
        str!["analyst: error: unexpected argument '--format' found; did you mean '-o csv'? (analyst's outputs are chosen with -o) (see 'analyst ask --help')"],
    );
    assert_whole(
        error(&["ask", "--api-key", "sk-1", "Q"]),
        str!["analyst: error: unexpected argument '--api-key' found; a key is never taken from the command line (other processes can read it): set ANALYST_API_KEY, or pass --api-key-file PATH ('-' reads stdin) (see 'analyst ask --help')"],
    );
    assert_whole(
        error(&["ask", "-o", "cvs", "Q"]),
        str!["analyst: error: invalid value 'cvs' for '--output <MODE>' [possible values: answer, raw, events, json, csv, table, vega, svg, png, html]; did you mean 'csv'? (see 'analyst ask --help')"],
    );
    assert_whole(
        error(&["revenue"]),
        str!["analyst: error: unrecognized subcommand 'revenue'; to ask it: analyst ask 'revenue' (see 'analyst --help')"],
    );
    // --jq without -o reads -o json; with another -o it is still refused.
    let sample = fixture("revenue-by-month.ndjson");
    analyst()
        .args(["ask", "--replay", &sample, "--jq", ".queries[0].rowCount"])
        .assert()
        .success()
        .stdout("12\n");
    assert_whole(
        error(&["ask", "--replay", &sample, "-o", "answer", "--jq", ".answer"]),
        str!["analyst: error: --jq filters JSON, and -o answer is not JSON: use it with -o events, -o json or -o vega"],
    );
}
