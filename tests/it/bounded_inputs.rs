//! Limits that hold over every input (cli.md: `--timeout` is the whole
//! command's limit; signals abort and exit 130/143): a question on a
//! standard input left open, an image, a security context, SQL, a saved
//! stream (`--replay`, `rows --from`), a key file, a Vega config, a
//! report read by `check`, a suite, a suite's image or the config file in a
//! FIFO whose writer never comes, a profile's secret command that never
//! ends; and inputs are never
//! outputs: no report of `check` is written over a file its suite reads.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::*;

/// Variables set for one run: a name and its value.
type Env<'a> = Vec<(&'a str, &'a Path)>;

/// A FIFO at `dir/name` that nobody writes.
fn fifo(dir: &Scratch, name: &str) -> PathBuf {
    let path = dir.join(name);
    let status = std::process::Command::new("mkfifo").arg(&path).status().unwrap();
    assert!(status.success(), "mkfifo");
    path
}

/// Runs `analyst ARGS` against `emu` with standard input open and never
/// written, and `env` set; kills it after 20 s. Returns its exit code,
/// stderr and how long it ran.
fn run_waiting(emu: &Emulator, env: &[(&str, &Path)], args: &[&str]) -> (Option<i32>, String, Duration) {
    let started = Instant::now();
    let (mut child, _open) = spawn_waiting(emu, env, args);
    let status = exit_within(&mut child, Duration::from_secs(20));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (status.code(), stderr, started.elapsed())
}

/// Starts `analyst ARGS` against `emu` (with the data query API) and
/// `env`, its standard input open and never written (the returned end
/// keeps it so), stderr piped, without a controlling terminal (setsid: as
/// in CI, wherever the tests run; it execs analyst, whose pid signals
/// reach).
fn spawn_waiting(
    emu: &Emulator,
    env: &[(&str, &Path)],
    args: &[&str],
) -> (std::process::Child, Option<std::process::ChildStdin>) {
    let mut child = emu
        .command_for("setsid")
        .arg("-w")
        .arg(assert_cmd::cargo::cargo_bin("analyst"))
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .envs(env.iter().copied())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take();
    (child, stdin)
}

/// How `child` exited, killed after `limit` when it had not.
fn exit_within(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            return child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A suite of one case that sends `image`.
fn suite_with_image(dir: &Scratch, image: &Path) -> PathBuf {
    dir.write(
        "suite.toml",
        format!(
            "[[case]]\nname = \"pictured\"\nquestion = \"What is in it?\"\nimages = [{:?}]\n",
            image.display().to_string()
        ),
    )
}

#[test]
fn every_read_of_an_input_ends_at_the_timeout() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let image = fifo(&dir, "image.png");
    let context = format!("@{}", fifo(&dir, "context.json").display());
    let sql = fifo(&dir, "query.sql");
    let saved = fifo(&dir, "saved.ndjson");
    let saved = saved.to_str().unwrap();
    let suite_in_fifo = fifo(&dir, "fifo-suite.toml");
    let cube_in_fifo = fifo(&dir, "eval_questions.yaml");
    let suite = suite_with_image(&dir, &image);
    let image = image.to_str().unwrap();
    let key = fifo(&dir, "key");
    let key = key.to_str().unwrap();
    let vega_config = fifo(&dir, "config.json");
    let vega_config = vega_config.to_str().unwrap();
    let report = fifo(&dir, "report.json");
    let report = report.to_str().unwrap();
    let plain_suite = dir.write("plain.toml", "[[case]]\nname = \"one\"\nquestion = \"Q\"\n");
    let plain_suite = plain_suite.to_str().unwrap();
    let runs: [(&str, Vec<&str>); 15] = [
        ("the question from standard input", vec!["ask", "--timeout", "2s", "-"]),
        ("--image", vec!["ask", "--timeout", "2s", "--image", image, "Q"]),
        (
            "the --security-context file",
            vec!["ask", "--timeout", "2s", "--security-context", &context, "Q"],
        ),
        (
            "--sql-file",
            vec!["rows", "--timeout", "2s", "--sql-file", sql.to_str().unwrap()],
        ),
        ("images", vec!["check", "--timeout", "2s", suite.to_str().unwrap()]),
        ("--replay", vec!["ask", "--timeout", "2s", "--replay", saved]),
        (
            "--api-key-file",
            vec!["ask", "--timeout", "2s", "--api-key-file", key, "Q"],
        ),
        (
            "--api-key-file -",
            vec!["abort", "--timeout", "2s", "--api-key-file", "-", "--chat-id", "c1"],
        ),
        (
            "--vega-config",
            vec!["ask", "--timeout", "2s", "--vega-config", vega_config, "Q"],
        ),
        (
            "--baseline",
            vec!["check", "--timeout", "2s", "--baseline", report, plain_suite],
        ),
        (
            "--retry-errors",
            vec!["check", "--timeout", "2s", "--retry-errors", report, plain_suite],
        ),
        ("rows --from", vec!["rows", "--timeout", "2s", "--from", saved]),
        ("rows --from -", vec!["rows", "--timeout", "2s", "--from", "-"]),
        (
            "the suite",
            vec!["check", "--timeout", "2s", suite_in_fifo.to_str().unwrap()],
        ),
        (
            "Cube's eval questions",
            vec!["check", "--timeout", "2s", cube_in_fifo.to_str().unwrap()],
        ),
    ];
    // A profile's secret command that never ends, and a config file in a
    // FIFO; the key of the environment would win over the profile's.
    let config = dir.write(
        "config.toml",
        "[profiles.slow]\napi_key_command = \"sleep 30\"\ndata_token_command = \"sleep 30\"\n",
    );
    let config_fifo = fifo(&dir, "config-fifo.toml");
    let no_key: (&str, &Path) = ("ANALYST_API_KEY", Path::new(""));
    let slow: [(&str, &Path); 3] = [
        ("ANALYST_CONFIG", &config),
        ("ANALYST_PROFILE", Path::new("slow")),
        no_key,
    ];
    let mut runs: Vec<(&str, Env, Vec<&str>)> = runs.into_iter().map(|(what, args)| (what, Vec::new(), args)).collect();
    runs.extend([
        ("api_key_command", slow.to_vec(), vec!["ask", "--timeout", "2s", "Q"]),
        (
            "data_token_command",
            slow.to_vec(),
            vec!["rows", "--timeout", "2s", "--sql", "SELECT 1"],
        ),
        (
            "the config file",
            vec![("ANALYST_CONFIG", config_fifo.as_path())],
            vec!["--timeout", "2s", "abort", "--chat-id", "c1"],
        ),
    ]);
    for (what, env, args) in runs {
        let (code, stderr, took) = run_waiting(&emu, &env, &args);
        assert_eq!(code, Some(124), "{what}: {stderr}");
        assert!(stderr.contains("--timeout 2s expired"), "{what}: {stderr}");
        assert!(took < Duration::from_secs(10), "{what}: took {took:?}");
        let errors = stderr
            .lines()
            .filter(|line| line.starts_with("analyst: error:"))
            .count();
        assert_eq!(errors, 1, "{what}: one error: {stderr}");
    }
    assert!(emu.chat_bodies().is_empty(), "nothing was asked");
}

#[test]
fn the_first_signal_ends_the_wait_for_an_input() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let image = fifo(&dir, "image.png");
    let saved = fifo(&dir, "saved.ndjson");
    let suite_in_fifo = fifo(&dir, "fifo-suite.toml");
    let suite = suite_with_image(&dir, &image);
    let config = dir.write("config.toml", "[profiles.slow]\napi_key_command = \"sleep 30\"\n");
    let config_fifo = fifo(&dir, "config-fifo.toml");
    let slow: Env = vec![
        ("ANALYST_CONFIG", &config),
        ("ANALYST_PROFILE", Path::new("slow")),
        ("ANALYST_API_KEY", Path::new("")),
    ];
    let fifo_config: Env = vec![("ANALYST_CONFIG", &config_fifo)];
    let none = Vec::new();
    for (env, args, signal, code) in [
        (&slow, vec!["ask", "Q"], "INT", 130),
        (&fifo_config, vec!["history", "list"], "TERM", 143),
    ]
    .into_iter()
    .chain(
        [
            (vec!["check", suite.to_str().unwrap()], "TERM", 143),
            (vec!["check", suite_in_fifo.to_str().unwrap()], "INT", 130),
            (vec!["ask", "--replay", saved.to_str().unwrap()], "INT", 130),
            (vec!["rows", "--from", saved.to_str().unwrap()], "TERM", 143),
            (vec!["check", "merge", saved.to_str().unwrap()], "TERM", 143),
            (vec!["ask", "-"], "INT", 130),
            (vec!["ask", "--image", image.to_str().unwrap(), "Q"], "TERM", 143),
        ]
        .map(|(args, signal, code)| (&none, args, signal, code)),
    ) {
        let (mut child, _open) = spawn_waiting(&emu, env, &args);
        std::thread::sleep(Duration::from_millis(700));
        let sent = Instant::now();
        let killed = std::process::Command::new("kill")
            .args(["-s", signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = exit_within(&mut child, Duration::from_secs(10));
        assert!(
            sent.elapsed() < Duration::from_secs(10),
            "{args:?}: still waiting after one SIG{signal}"
        );
        assert_eq!(status.code(), Some(code), "{args:?}");
    }
}

#[test]
fn no_report_of_check_is_written_over_a_file_its_suite_reads() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let agents = dir.join("agents");
    std::fs::create_dir_all(agents.join("certified_queries")).unwrap();
    let questions = dir.write(
        "agents/eval_questions.yml",
        "eval_questions:\n  - name: q\n    question: Q?\n    certifiedQuery: revenue\n",
    );
    let certified = dir.write(
        "agents/certified_queries/revenue.md",
        "---\nuser_request: Revenue?\n---\nSELECT 1\n",
    );
    let png = dir.write("chart.png", b"\x89PNG\r\n\x1a\n0000000000000000");
    let toml = dir.write(
        "suite.toml",
        "[[case]]\nname = \"pictured\"\nquestion = \"Q\"\nimages = [\"chart.png\"]\n",
    );
    let runs: [(&Path, &str, &Path); 4] = [
        (&agents, "--output-file", &questions),
        (&dir, "--junit", &certified),
        (&toml, "--summary", &png),
        (&toml, "--output-file", &png),
    ];
    for (suite, flag, file) in runs {
        let before = std::fs::read(file).unwrap();
        let output = emu
            .analyst()
            .env("ANALYST_DATA_URL", emu.data_url())
            .env("ANALYST_DATA_SECRET", DATA_SECRET)
            .args(["check", "-o", "json", flag])
            .arg(file)
            .arg(suite)
            .output()
            .unwrap();
        exits(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("which this command reads"), "{flag}: {stderr}");
        assert_eq!(
            std::fs::read(file).unwrap(),
            before,
            "{flag} {}: untouched",
            file.display()
        );
    }
    assert!(emu.chat_bodies().is_empty(), "nothing was asked");
    // --list too, and the config file for any command.
    let output = analyst()
        .args(["check", "--list", "--output-file"])
        .arg(&questions)
        .arg(&agents)
        .output()
        .unwrap();
    exits(&output, 2);
    let config_home = Scratch::new();
    let config = config_home.write("analyst/config.toml", "");
    let output = analyst()
        .env("XDG_CONFIG_HOME", config_home.join(""))
        .args(["check", "--list", "--output-file"])
        .arg(&config)
        .arg(&toml)
        .output()
        .unwrap();
    exits(&output, 2);
    assert!(String::from_utf8_lossy(&output.stderr).contains("the config file"));
}
