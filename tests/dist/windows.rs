//! The Windows artifacts `scripts/dist` builds on Linux with MinGW
//! (`x86_64-pc-windows-gnu`), used as a Windows user would, under Wine
//! (Debian's `wine64`): the zip and the wheel hold one `analyst.exe` that
//! asks only for DLLs Windows has; under Wine it runs the README's main job,
//! asks the loopback emulator with the same answer as the Linux build,
//! checks a suite, keeps non-ASCII questions, answers and file names whole
//! (in a pipe and on Wine's console), records the turn under
//! `%LOCALAPPDATA%`, writes a report file, and aborts the chat when Ctrl-C
//! reaches it (Wine turns a SIGINT into the console's `CTRL_C_EVENT`).
//!
//! The harness puts `tests/wine/bcryptprimitives.dll` beside the `.exe`:
//! Debian 12's Wine 8.0 lacks `ProcessPrng`, which Rust's standard library
//! calls and every Windows since 10 has (see that file).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use super::{artifact, root, run, version};
use crate::support::*;

/// Wine's 64-bit loader, from Debian's `wine64`.
const WINE64: &str = "/usr/lib/wine/wine64";

/// What the non-ASCII tests ask and are answered: accents, the euro sign,
/// CJK and an emoji (a character outside UTF-16's first plane).
const QUESTION: &str = "Umsatz im Café in € für 漢字 😀?";
const ANSWER: &str = "Café: 1 234 € — 漢字 😀 done";

/// `analyst.exe` unpacked from the zip into `target/test-tools/windows/`
/// (with the harness's shim DLL beside it), and the Wine prefix it runs in:
/// both made anew once per test run.
struct Windows {
    exe: PathBuf,
    prefix: PathBuf,
}

fn windows() -> &'static Windows {
    static READY: OnceLock<Windows> = OnceLock::new();
    READY.get_or_init(|| {
        let home = root().join("target/test-tools/windows");
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).unwrap();
        run(Command::new("python3")
            .args(["-m", "zipfile", "-e"])
            .arg(windows_zip())
            .arg(&home));
        let folder = home.join(format!("analyst-{}-x86_64-pc-windows-gnu", version()));
        run(Command::new("x86_64-w64-mingw32-gcc")
            .args(["-shared", "-O2", "-o"])
            .arg(folder.join("bcryptprimitives.dll"))
            .arg(root().join("tests/wine/bcryptprimitives.c"))
            .arg("-ladvapi32"));
        let windows = Windows {
            exe: folder.join("analyst.exe"),
            prefix: home.join("prefix"),
        };
        // The first program run makes the prefix (C:, the registry, the
        // user's folders): some seconds, once.
        run(windows.analyst(clean_command(WINE64)).arg("--version"));
        windows
    })
}

impl Windows {
    /// `command` (made for [`WINE64`], e.g. by `emu.command_for`) running
    /// `analyst.exe` in the prefix. The XDG variables of the tests are
    /// removed: config and history go where Windows keeps them.
    fn analyst(&self, mut command: Command) -> Command {
        command
            .arg(&self.exe)
            .env("WINEPREFIX", &self.prefix)
            .env("WINEDEBUG", "-all")
            // No Mono or Gecko installer is offered while the prefix is made.
            .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("ANALYST_HISTORY_DB");
        command
    }

    /// The history database under the prefix's `%LOCALAPPDATA%`, if made.
    fn history_database(&self) -> Option<PathBuf> {
        let users = std::fs::read_dir(self.prefix.join("drive_c/users")).ok()?;
        users
            .filter_map(Result::ok)
            .map(|user| user.path().join("AppData/Local/analyst/history.db"))
            .find(|path| path.is_file())
    }
}

/// `path` as a Windows program under Wine names it (drive Z: is `/`).
fn windows_path(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

/// The Windows zip of `target/dist/`.
fn windows_zip() -> PathBuf {
    let zip = artifact(".zip");
    let name = zip.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(name, format!("analyst-{}-x86_64-pc-windows-gnu.zip", version()));
    zip
}

/// The names in the zip file at `zip`, and the bytes of `member`.
fn zip_contents(zip: &Path, member: &str) -> (Vec<String>, Vec<u8>) {
    let script = "import sys, zipfile\n\
                  z = zipfile.ZipFile(sys.argv[1])\n\
                  sys.stderr.write('\\n'.join(z.namelist()))\n\
                  sys.stdout.buffer.write(z.read(sys.argv[2]))\n";
    let output = run(Command::new("python3").args(["-c", script]).arg(zip).arg(member));
    let names = String::from_utf8(output.stderr).unwrap();
    (names.lines().map(str::to_string).collect(), output.stdout)
}

#[test]
fn the_zip_and_the_wheel_hold_one_analyst_exe_that_needs_only_dlls_windows_has() {
    let folder = format!("analyst-{}-x86_64-pc-windows-gnu", version());
    let (names, exe) = zip_contents(&windows_zip(), &format!("{folder}/analyst.exe"));
    for member in [
        "analyst.exe",
        "README.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "man/analyst.1",
        "man/analyst-ask.1",
        "completions/_analyst.ps1",
        "completions/analyst.bash",
        "licences/LICENSE-vega",
    ] {
        assert!(names.contains(&format!("{folder}/{member}")), "{member} in {names:?}");
    }
    assert_eq!(&exe[..2], b"MZ", "a Windows executable");

    let wheel = artifact("-win_amd64.whl");
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(name, format!("analyst_cli-{}-py3-none-win_amd64.whl", version()));
    let (_, wheel_exe) = zip_contents(&wheel, &format!("analyst_cli-{}.data/scripts/analyst.exe", version()));
    assert!(wheel_exe == exe, "the wheel's analyst.exe is the zip's");

    // Every DLL it imports is one Windows has: Wine's system32 holds it
    // (bcryptprimitives.dll, in Windows since 10, is the one Wine 8 lacks),
    // or it is an API set the loader resolves itself (api-ms-win-…, since
    // Windows 8); none is MinGW's runtime (libgcc_s, libwinpthread, libstdc++).
    let unpacked = Scratch::new();
    let exe_path = unpacked.write("analyst.exe", &exe);
    let headers = run(Command::new("x86_64-w64-mingw32-objdump").arg("-p").arg(&exe_path)).stdout;
    let headers = String::from_utf8_lossy(&headers);
    let dlls: Vec<String> = headers
        .lines()
        .filter_map(|line| line.trim().strip_prefix("DLL Name: "))
        .map(str::to_ascii_lowercase)
        .collect();
    assert!(dlls.contains(&"kernel32.dll".to_string()), "{dlls:?}");
    let system32 = windows().prefix.join("drive_c/windows/system32");
    for dll in &dlls {
        assert!(!dll.starts_with("lib"), "MinGW's runtime {dll} is not shipped");
        assert!(
            dll == "bcryptprimitives.dll" || dll.starts_with("api-ms-win-") || system32.join(dll).exists(),
            "{dll} is not a Windows DLL"
        );
    }
}

#[test]
fn analyst_exe_prints_its_version_finds_its_config_under_appdata_and_runs_the_main_job() {
    let windows = windows();
    let shown = run(windows.analyst(clean_command(WINE64)).arg("version"));
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains(&version()), "{shown}");
    assert!(shown.contains("x86_64-pc-windows-gnu"), "{shown}");
    // The config file is where Windows keeps a user's settings.
    let config = run(windows.analyst(clean_command(WINE64)).args(["config", "path"]));
    let config = String::from_utf8_lossy(&config.stdout);
    assert!(
        config.trim_end().ends_with("\\AppData\\Roaming\\analyst\\config.toml"),
        "{config}"
    );
    let sample = windows_path(Path::new(&fixture("revenue-by-month.ndjson")));
    let output = run(windows
        .analyst(clean_command(WINE64))
        .args(["ask", "--replay", &sample, "-o", "csv"]));
    let csv = String::from_utf8(output.stdout).unwrap();
    assert!(csv.starts_with("month,orders_view.total_revenue\r\n"), "{csv}");
    assert_eq!(csv.lines().count(), 13, "{csv}");
}

#[test]
fn analyst_exe_asks_the_emulator_as_the_linux_build_does() {
    let emu = Emulator::start();
    let windows = windows();
    let on_windows = run(windows
        .analyst(emu.command_for(WINE64))
        .args(["ask", "-o", "csv", "Revenue by month?"]));
    let on_linux = run(emu.command().args(["ask", "-o", "csv", "Revenue by month?"]));
    assert!(
        on_windows.stdout.len() > 100,
        "{}",
        String::from_utf8_lossy(&on_windows.stdout)
    );
    assert_eq!(
        String::from_utf8_lossy(&on_windows.stdout),
        String::from_utf8_lossy(&on_linux.stdout)
    );
    assert_eq!(emu.chat_bodies().len(), 2);
}

#[test]
fn non_ascii_questions_answers_and_file_names_stay_whole_and_the_turn_is_kept_under_localappdata() {
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers.push(("Café".into(), Answer::Inline(ANSWER.into()))));
    let windows = windows();
    let folder = Scratch::new();
    let tee = folder.join("Ström 漢字.ndjson");
    let output = run(windows.analyst(emu.command_for(WINE64)).args([
        "ask",
        "-o",
        "answer",
        "--tee",
        &windows_path(&tee),
        QUESTION,
    ]));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), format!("{ANSWER}\n"));
    assert_eq!(emu.chat_bodies()[0]["input"], QUESTION);
    // The --tee file was created, under its non-ASCII name, with the stream.
    let saved = std::fs::read_to_string(&tee).unwrap();
    assert!(saved.lines().count() > 3 && saved.contains("chat-0001"), "{saved}");

    let database = windows
        .history_database()
        .expect("a history under %LOCALAPPDATA%\\analyst");
    assert!(database.ends_with("AppData/Local/analyst/history.db"));
    let listed = run(windows
        .analyst(clean_command(WINE64))
        .args(["history", "-o", "json", "--limit", "1000"]));
    let turns: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let turn = turns
        .as_array()
        .unwrap()
        .iter()
        .find(|turn| turn["question"] == QUESTION)
        .unwrap_or_else(|| panic!("the turn is listed: {turns}"));
    let shown =
        run(windows
            .analyst(clean_command(WINE64))
            .args(["history", "show", &turn["id"].to_string(), "-o", "json"]));
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["answer"], ANSWER);
}

#[test]
fn wine_s_console_shows_non_ascii_answers_right() {
    let windows = windows();
    let stream = Scratch::new();
    let escaped = serde_json::to_string(&ANSWER).unwrap();
    let path = stream.write(
        "answer.ndjson",
        format!(
            "{{\"id\":\"a1\",\"role\":\"assistant\",\"content\":{escaped},\"isDelta\":false,\
             \"isInProcess\":false,\"sort\":1,\"state\":{{\"finalAnswer\":true}}}}\n"
        ),
    );
    let command = windows.analyst(clean_command(WINE64));
    let line: Vec<String> = std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|part| format!("'{}'", part.to_string_lossy()))
        .collect();
    // script(1) gives Wine a terminal: analyst.exe writes to a console
    // (WriteConsoleW), which Wine shows on the terminal in UTF-8.
    let output = run(Command::new("script")
        .args(["-q", "-e", "-c"])
        .arg(format!("{} ask -q --replay '{}'", line.join(" "), windows_path(&path)))
        .arg("/dev/null")
        .envs(command.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .env("LANG", "C.UTF-8"));
    let screen = String::from_utf8_lossy(&output.stdout);
    // Wine 8's console turns each half of a surrogate pair into U+FFFD
    // (a C program calling WriteConsoleW shows the same): the emoji is
    // checked in a pipe, above, and everything else here.
    let (before_emoji, _) = ANSWER.split_once('😀').unwrap();
    assert!(screen.contains(before_emoji), "{screen:?}");
    assert!(screen.contains(" done"), "{screen:?}");
}

#[test]
fn analyst_exe_checks_a_suite_and_writes_its_report() {
    let emu = Emulator::start();
    let windows = windows();
    let folder = Scratch::new();
    let suite = folder.write(
        "smoke.toml",
        "[[case]]\nname = \"revenue\"\nquestion = \"Revenue by month?\"\nexpect_sql = \"FROM orders_view\"\n\
         min_rows = 12\n\n[[case]]\nname = \"café\"\nquestion = \"Café?\"\nexpect_answer = \"漢字\"\n",
    );
    emu.agent(|agent| agent.answers.push(("Café".into(), Answer::Inline(ANSWER.into()))));
    let report = folder.join("junit.xml");
    let output = windows
        .analyst(emu.command_for(WINE64))
        .args(["check", &windows_path(&suite), "--junit", &windows_path(&report)])
        .output()
        .unwrap();
    exits(&output, 0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("PASS  revenue  "), "{stderr}");
    assert!(stderr.contains("PASS  café  "), "{stderr}");
    assert!(stderr.contains("2 cases: 2 passed, 0 failed, 0 errors"), "{stderr}");
    let junit = std::fs::read_to_string(&report).unwrap();
    assert!(
        junit.contains("tests=\"2\"") && junit.contains("failures=\"0\""),
        "{junit}"
    );
}

#[test]
fn ctrl_c_under_wine_aborts_the_chat_and_exits_130() {
    let emu = Emulator::start();
    emu.agent(|agent| {
        agent.padding = 300;
        agent.delay = Duration::from_millis(200);
    });
    let mut command = windows().analyst(emu.command_for(WINE64));
    command.args(["ask", "Revenue?"]);
    let mut running = Running::spawn(command);
    running.wait_for_stderr("chat: chat-0001");
    // Wine delivers a SIGINT to a Windows program as the console's
    // CTRL_C_EVENT, to the handlers ctrlc installed.
    running.signal("INT");
    let (code, stdout, stderr, _) = running.finish(Duration::from_secs(20));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("analyst: error: interrupted by Ctrl-C; chat chat-0001 aborted"),
        "{stderr}"
    );
    let aborts = emu.requests_on(Route::Abort);
    assert_eq!(aborts.len(), 1);
    assert_eq!(aborts[0].json()["chatId"], "chat-0001");
    assert!(stdout.is_empty());
}
