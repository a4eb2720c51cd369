//! The loopback emulator of the Chat API, faithful to the API document and
//! `service-facts.md`, plus helpers to run the real `analyst` binary against
//! it. A hand-rolled `std::net` server: a thread per connection,
//! `Connection: close`, chunked framing written by hand so a test can cut the
//! stream at any byte, slow it down, end it cleanly or drop the connection.

#![allow(dead_code)]

pub mod browser;
pub mod collector;
mod emulator;
pub mod github;
pub mod phoenix;
mod replies;
mod running;
mod service;
pub mod stream;
pub mod warehouse;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

pub use emulator::*;
pub use replies::*;
#[allow(unused_imports)]
pub use running::*;
pub(crate) use service::*;
#[allow(unused_imports)] // the dist tests compare no whole output inline
pub use snapbox::{str, IntoData};
pub use stream::{ChatStream, Distortion, Family, Shape, SpecForm, SqlCall};

/// The API key the emulator accepts.
pub const API_KEY: &str = "sk-test-4f2a9c81d7e6";
/// The account and agent of the emulated Chat API URL.
pub const ACCOUNT: &str = "acme";
pub const AGENT: &str = "agent-7";
/// The deployment of the deployment-scoped chat URL.
pub const DEPLOYMENT: &str = "42";
/// The secret that signs Cube tokens (`X-Cube-Auth-Token`) for the chat.
pub const CUBE_TOKEN_SECRET: &str = "cube-token-secret-5b1c";
/// The deployment's API secret, which signs data query API tokens.
pub const DATA_SECRET: &str = "data-secret-7f3e19a2";
/// The most rows the data query API returns in one answer, with or without
/// LIMIT (a real Cube server's default; nothing in the answer says so).
pub const SERVER_ROW_CAP: usize = 50_000;
/// Rows per `data` line of the data query API's answer.
pub(crate) const DATA_CHUNK_ROWS: usize = 1_000;
/// Internal users that exist on the emulated account.
pub const INTERNAL_USERS: [&str; 2] = ["ana@acme.example", "admin"];

/// The `analyst` binary with a clean `ANALYST_*` environment.
pub fn analyst() -> Command {
    Command::from_std(analyst_process())
}

/// The `analyst` binary as a plain `std::process::Command` (for tests that
/// manage its pipes), with the clean environment of [`analyst`].
pub fn analyst_process() -> std::process::Command {
    clean_command(assert_cmd::cargo::cargo_bin("analyst"))
}

/// `program` with no stray `ANALYST_*` variable, no colour, no config file
/// and the tests' own data folder.
pub fn clean_command(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    // No stray setting, and no CI job of the machine running the tests
    // (the tests that want one set it).
    let ci_jobs = ["GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "CIRCLECI", "JENKINS_URL"];
    for (key, _) in std::env::vars() {
        if key.starts_with("ANALYST_") || ci_jobs.contains(&key.as_str()) {
            command.env_remove(key);
        }
    }
    command
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", no_config_home())
        .env("XDG_DATA_HOME", test_data_home());
    command
}

/// A fresh directory under the system's temporary directory (tempfile's),
/// removed with its contents when dropped (a failing test's too), so test
/// runs leave nothing behind.
pub struct Scratch(tempfile::TempDir);

impl Scratch {
    /// Creates the directory.
    pub fn new() -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix("analyst-test-")
            .tempdir()
            .expect("create a scratch directory");
        Scratch(dir)
    }

    /// Writes `contents` to the file `name` in it (folders created) and
    /// returns the file's path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create a scratch folder");
        }
        std::fs::write(&path, contents).expect("write a scratch file");
        path
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.path().as_os_str()
    }
}

/// A file in a [`Scratch`] directory of its own, removed with it; it stands
/// for the file's path (`.arg(&file)`, `file.with_file_name(…)`).
pub struct ScratchFile {
    path: PathBuf,
    _dir: Scratch,
}

impl ScratchFile {
    /// Writes `contents` to a new file called `name`.
    pub fn new(name: &str, contents: impl AsRef<[u8]>) -> ScratchFile {
        let dir = Scratch::new();
        ScratchFile {
            path: dir.write(name, contents),
            _dir: dir,
        }
    }
}

impl std::ops::Deref for ScratchFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for ScratchFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<std::ffi::OsStr> for ScratchFile {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

/// Where the history of the tests' runs goes (`XDG_DATA_HOME`): one
/// folder of the tests, never the user's (a test that reads the history
/// gives its own `ANALYST_HISTORY_DB`).
pub fn test_data_home() -> PathBuf {
    std::env::temp_dir().join("analyst-tests-data")
}

/// A config home with no `analyst/config.toml`, so a developer's own
/// profiles never leak into tests.
pub fn no_config_home() -> PathBuf {
    std::env::temp_dir().join("analyst-tests-no-config-home")
}

/// The folder of the Vega-Lite renderer used by tests (`tests/vega`), its
/// npm packages installed on first use from the committed lock file.
pub fn vega_renderer() -> PathBuf {
    static READY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    READY
        .get_or_init(|| {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vega");
            if !dir.join("node_modules/vega-lite").exists() {
                let status = std::process::Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                    .current_dir(&dir)
                    .status()
                    .expect("npm is needed to install the Vega-Lite renderer (tests/vega): install Node.js");
                assert!(status.success(), "npm ci in tests/vega failed");
            }
            dir
        })
        .clone()
}

/// A Cube token for the external user `user`, with the chat scope.
pub fn cube_token(user: &str) -> String {
    let claims = serde_json::json!({ "externalId": user, "scope": ["chat"] });
    analyst::api::data::sign_hs256(
        CUBE_TOKEN_SECRET.as_bytes(),
        claims.as_object().unwrap(),
        std::time::SystemTime::now(),
    )
}

/// A path in the crate's tests/fixtures.
pub fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The case named `name` of a `check -o json` report.
pub fn case<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|case| case["name"] == name)
        .unwrap_or_else(|| panic!("no case {name}: {report}"))
}

/// Asserts that `output` exited with `code`; when it did not, the failure
/// shows what it wrote on stderr and stdout.
#[track_caller]
pub fn exits(output: &std::process::Output, code: i32) {
    assert!(
        output.status.code() == Some(code),
        "exit {:?}, not {code}\n--- stderr\n{}--- stdout\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
}

/// True when the tests are asked to write their pinned files again:
/// `SNAPSHOTS=overwrite`, snapbox's own switch, also for the files no
/// exact comparison fits (a screenshot, a report with timings).
pub fn overwriting() -> bool {
    std::env::var("SNAPSHOTS").is_ok_and(|action| action == "overwrite")
}

/// Compares `actual` with the pinned file `path`, byte for byte (no
/// wildcards), showing a diff when they differ; `SNAPSHOTS=overwrite`
/// writes the file instead.
#[track_caller]
pub fn assert_pinned(actual: impl snapbox::IntoData, path: &Path) {
    let pinned = snapbox::Data::read_from(path, Some(snapbox::data::DataFormat::Text)).raw();
    snapbox::assert_data_eq!(actual, pinned);
}

/// Compares a whole output with what is expected of it, showing a diff
/// when they differ: in `expected`, `[..]` stands for any text within a
/// line (a port, a folder, a time) and `...` on a line of its own for any
/// lines; `SNAPSHOTS=overwrite` writes an inline `str![]` again.
#[track_caller]
pub fn assert_whole(actual: impl snapbox::IntoData, expected: impl snapbox::IntoData) {
    // Backslashes are text here (Markdown escapes, Windows paths quoted).
    snapbox::Assert::new()
        .action_env(snapbox::assert::DEFAULT_ACTION_ENV)
        .normalize_paths(false)
        .eq(actual, expected);
}

/// The one `analyst: error:` line of `output` (warnings may come before
/// it): exactly one there is.
#[track_caller]
pub fn one_error_line(output: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("analyst: error: ")).collect();
    assert_eq!(errors.len(), 1, "exactly one error line: {stderr}");
    errors[0].to_string()
}

/// Asserts that `output` failed with `code` and wrote nothing on stderr
/// but one `analyst: error:` line holding every piece of `expected`.
#[track_caller]
pub fn fails_in_one_line(output: &std::process::Output, code: i32, expected: &[&str]) {
    exits(output, code);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    let line = one_error_line(output);
    for piece in expected {
        assert!(line.contains(piece), "{piece:?} not in: {line}");
    }
}

/// The page `check merge -o html` makes of the JSON report `report`.
pub fn check_page(report: &str) -> String {
    let saved = ScratchFile::new("report.json", report);
    let output = analyst()
        .args(["check", "merge", "-o", "html"])
        .arg(&*saved)
        .output()
        .unwrap();
    assert!(
        matches!(output.status.code(), Some(0 | 9)),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// What `analyst ARGS` shows on a terminal of `width` columns and 40 rows
/// (stdout and stderr together), with the emulator's settings and `env`.
pub fn on_a_terminal_of(width: usize, emu: &Emulator, args: &str, env: &[(&str, &str)]) -> String {
    on_a_terminal_sized(&format!("rows 40 cols {width}"), emu, args, env)
}

/// [`on_a_terminal_of`] a terminal `stty` sets as `size` says (`cols 80`
/// alone leaves it no rows).
pub fn on_a_terminal_sized(size: &str, emu: &Emulator, args: &str, env: &[(&str, &str)]) -> String {
    let binary = assert_cmd::cargo::cargo_bin("analyst");
    let mut script = std::process::Command::new("script");
    script
        .args([
            "-q",
            "-c",
            &format!("stty rows 0 cols 0; stty {size}; {} {args}", binary.display()),
            "/dev/null",
        ])
        .envs(
            emu.command()
                .get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .env_remove("NO_COLOR")
        .envs(env.iter().copied());
    String::from_utf8_lossy(&script.output().expect("script(1) runs").stdout).into_owned()
}

/// How many columns `line` takes on a terminal once colour and cursor
/// escapes are gone: display columns (an East Asian wide character two,
/// a combining mark none), as the terminal draws them.
pub fn columns(line: &str) -> usize {
    use unicode_width::UnicodeWidthStr;
    let escapes = regex::Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07").unwrap();
    escapes.replace_all(line, "").width()
}

/// Fails with every line of `text` (split at line feeds and carriage
/// returns, as a terminal draws it) wider than `width`.
pub fn assert_fits(what: &str, text: &str, width: usize) {
    let wide: Vec<String> = text
        .split(['\n', '\r'])
        .filter(|line| columns(line) > width)
        .map(|line| format!("{:>3} {line}", columns(line)))
        .collect();
    assert!(
        wide.is_empty(),
        "{what}: lines over {width} columns:\n{}",
        wide.join("\n")
    );
}
