//! The completion scripts and man pages committed in `completions/` are
//! what `analyst completions …` makes now, the bash script completes in a
//! real bash, and every man page renders with `man -l` with its sections.

use std::path::PathBuf;

use crate::support::*;

/// Each target and the file it is committed as.
const FILES: [(&str, &str); 6] = [
    ("bash", "analyst.bash"),
    ("zsh", "_analyst"),
    ("fish", "analyst.fish"),
    ("elvish", "analyst.elv"),
    ("powershell", "_analyst.ps1"),
    ("man", "man/analyst.1"),
];

const REGENERATE: &str = "SNAPSHOTS=overwrite cargo test --test it completions";

fn committed(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("completions").join(file)
}

#[test]
fn committed_completions_and_man_page_are_fresh() {
    let regenerate = overwriting();
    for (target, file) in FILES {
        let output = analyst().args(["completions", target]).output().unwrap();
        assert!(output.status.success(), "{target}");
        assert!(!output.stdout.is_empty(), "{target}");
        assert_pinned(output.stdout, &committed(file));
    }
    // Every man page, as `completions man --dir` writes them.
    let made = Scratch::new();
    analyst()
        .args(["completions", "man", "--dir"])
        .arg(&*made)
        .assert()
        .success();
    let committed_dir = committed("man");
    if regenerate {
        let _ = std::fs::remove_dir_all(&committed_dir);
        std::fs::create_dir_all(&committed_dir).unwrap();
    }
    let names = |dir: &std::path::Path| {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    for name in names(&made) {
        let page = std::fs::read(made.join(&name)).unwrap();
        assert_pinned(page, &committed_dir.join(&name));
    }
    assert_eq!(
        names(&committed_dir),
        names(&made),
        "completions/man has exactly the pages: `{REGENERATE}`"
    );
}

/// What man(1) printed, without the overstrikes of bold and underline
/// (`X\bX`, `_\bX`).
fn plain(rendered: &[u8]) -> String {
    let text = String::from_utf8_lossy(rendered);
    let mut out: Vec<char> = Vec::new();
    for c in text.chars() {
        if c == '\u{8}' {
            out.pop();
        } else {
            out.push(c);
        }
    }
    out.into_iter().collect()
}

/// Every man page, written by `analyst completions man --dir`.
fn man_pages() -> Scratch {
    let dir = Scratch::new();
    analyst()
        .args(["completions", "man", "--dir"])
        .arg(&*dir)
        .assert()
        .success();
    dir
}

#[test]
fn every_man_page_renders_with_its_sections_and_names_pages_that_exist() {
    let dir = man_pages();
    let mut pages: Vec<String> = std::fs::read_dir(&*dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for command in [
        "ask",
        "abort",
        "session",
        "session-revoke",
        "rows",
        "check",
        "check-merge",
        "doctor",
        "config",
        "completions",
    ] {
        assert!(
            pages.contains(&format!("analyst-{command}.1")),
            "analyst-{command}.1 in {pages:?}"
        );
    }
    for page in &pages {
        let output = std::process::Command::new("man")
            .arg("-l")
            .arg(dir.join(page))
            .env("MANWIDTH", "100")
            .env("PAGER", "cat")
            .output()
            .expect("man(1) runs");
        assert!(output.status.success(), "{page}");
        let text = plain(&output.stdout);
        for section in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "ENVIRONMENT",
            "EXIT STATUS",
            "FILES",
            "SEE ALSO",
        ] {
            assert!(
                text.lines().any(|line| line == section),
                "{page} has no {section}:\n{text}"
            );
        }
        // Every page it names exists.
        for named in text.split("analyst-").skip(1) {
            let name: String = named
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                .collect();
            if named[name.len()..].starts_with("(1)") {
                assert!(
                    pages.contains(&format!("analyst-{name}.1")),
                    "{page} names analyst-{name}(1)"
                );
            }
        }
        assert!(
            text.contains("ANALYST_CHAT_URL") && text.contains("api_key_command"),
            "{page}"
        );
    }
    // Literal blocks stay as written: the suite example keeps its columns.
    let check = std::process::Command::new("man")
        .arg("-l")
        .arg(dir.join("analyst-check.1"))
        .env("MANWIDTH", "100")
        .env("PAGER", "cat")
        .output()
        .unwrap();
    let text = plain(&check.stdout);
    assert!(text.contains("EXAMPLES"), "{text}");
    assert!(
        text.contains("timeout = \"2m\"           # per case (default 5m)"),
        "the suite example is not reflowed:\n{text}"
    );
    let top = std::process::Command::new("man")
        .arg("-l")
        .arg(dir.join("analyst.1"))
        .env("PAGER", "cat")
        .output()
        .unwrap();
    let text = plain(&top.stdout);
    assert!(text.contains("EXAMPLES") && text.contains("analyst-ask(1)"), "{text}");
}

/// Completes `words` (the last one being completed) in bash with what
/// `analyst completions bash` prints; returns the candidates.
fn bash_complete(words: &[&str]) -> Vec<String> {
    bash_complete_with(words, &[])
}

/// [`bash_complete`] with `env` set for bash (and what the script runs).
fn bash_complete_with(words: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Vec<String> {
    let generated = analyst().args(["completions", "bash"]).output().unwrap().stdout;
    let path = ScratchFile::new("analyst.bash", generated);
    let script = format!(
        "source {}\nCOMP_WORDS=({})\nCOMP_CWORD={}\n_analyst analyst \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display(),
        words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(" "),
        words.len() - 1
    );
    let output = std::process::Command::new("bash")
        .args(["--norc", "-c", &script])
        .envs(env.iter().copied())
        .output()
        .expect("bash runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_commands_flags_and_values() {
    assert_eq!(bash_complete(&["analyst", "as"]), ["ask"]);
    let commands = bash_complete(&["analyst", ""]);
    for command in ["ask", "abort", "session", "rows", "check", "completions"] {
        assert!(commands.iter().any(|c| c == command), "{command} in {commands:?}");
    }
    assert!(bash_complete(&["analyst", "ask", "--out"]).contains(&"--output".to_string()));
    let modes = bash_complete(&["analyst", "ask", "-o", ""]);
    assert_eq!(
        modes,
        ["answer", "raw", "events", "json", "csv", "table", "vega", "svg", "png", "html"]
    );
    assert_eq!(bash_complete(&["analyst", "completions", "po"]), ["powershell"]);
}

#[test]
fn profile_completes_to_the_profiles_of_the_config_file() {
    let dir = Scratch::new();
    dir.write(
        "analyst/config.toml",
        "[profiles.prod]\nexternal_id = \"a\"\n[profiles.staging]\nexternal_id = \"b\"\n",
    );
    analyst()
        .env("XDG_CONFIG_HOME", &*dir)
        .args(["config", "profiles"])
        .assert()
        .success()
        .stdout("prod\nstaging\n");
    let binary = assert_cmd::cargo::cargo_bin("analyst");
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [
        ("XDG_CONFIG_HOME", dir.as_os_str()),
        ("PATH", std::ffi::OsStr::new(&path)),
    ];
    assert_eq!(
        bash_complete_with(&["analyst", "--profile", ""], &env),
        ["prod", "staging"]
    );
    assert_eq!(
        bash_complete_with(&["analyst", "ask", "--profile", "st"], &env),
        ["staging"]
    );
    // zsh and fish get the same completion (their scripts are edited as
    // text: a change of clap_complete's output must not silently undo it).
    for shell in ["zsh", "fish"] {
        let script = analyst().args(["completions", shell]).output().unwrap().stdout;
        assert!(
            String::from_utf8_lossy(&script).contains("analyst config profiles 2>/dev/null"),
            "{shell}"
        );
    }
}

#[test]
fn the_man_pages_files_name_every_key_the_config_file_takes() {
    // The config file's reader lists what it takes when a key is unknown.
    let dir = Scratch::new();
    let keys = |text: &str| -> Vec<String> {
        let config = dir.write("config.toml", text);
        let output = analyst()
            .env("ANALYST_CONFIG", &config)
            .args(["config", "list"])
            .output()
            .unwrap();
        exits(&output, 2);
        let stderr = String::from_utf8(output.stderr).unwrap();
        let (_, expected) = stderr.split_once("expected one of ").expect(&stderr);
        expected
            .split(", ")
            .map(|key| key.trim().trim_matches('`').to_string())
            .collect()
    };
    let mut taken = keys("[profiles.p]\nno_such_key = 1\n");
    taken.extend(keys("no_such_key = 1\n"));
    taken.extend(keys("[prices.m]\nno_such_key = 1\n"));
    assert!(taken.len() > 20, "{taken:?}");
    let output = analyst().args(["completions", "man"]).output().unwrap();
    let page = String::from_utf8(output.stdout).unwrap();
    let files = &page[page.find(".SH FILES").expect("a FILES section")..];
    let files = files.replace("\\_", "_").replace("\\-", "-");
    for key in taken {
        assert!(files.contains(&key), "analyst(1)'s FILES leaves out {key}:\n{files}");
    }
}

#[test]
fn the_help_footers_notes_are_paragraphs_of_their_own() {
    let help = analyst().arg("--help").output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    for note in [
        "\n\n  A variable set to the empty string counts as unset.\n\n",
        "\n\n  Doctor exits with the code of its first failing check.\n\n",
    ] {
        assert!(help.contains(note), "{note:?} in {help}");
    }
    assert!(
        !help.contains("the proxy\n                          a variable"),
        "{help}"
    );
}

#[test]
fn every_man_page_is_clean_at_manwidth_80_with_one_examples_heading() {
    let dir = man_pages();
    let mut pages = 0;
    for page in std::fs::read_dir(&*dir).unwrap() {
        let page = page.unwrap().path();
        let output = std::process::Command::new("man")
            .arg("-l")
            .arg(&page)
            .env("MANWIDTH", "80")
            .env("MAN_KEEP_FORMATTING", "0")
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("man(1) runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && stderr.is_empty(),
            "{}: {stderr}",
            page.display()
        );
        let text = plain(&output.stdout).replace('\t', "        ");
        assert_fits(&page.display().to_string(), &text, 80);
        let headings = text.lines().filter(|line| line.trim() == "EXAMPLES").count();
        assert!(headings <= 1, "{}:\n{text}", page.display());
        assert!(!text.contains("Examples:"), "{}:\n{text}", page.display());
        pages += 1;
    }
    assert!(pages >= 18);
    // analyst-ask(1): the examples, then the notes as filled prose.
    let ask = std::fs::read_to_string(dir.join("analyst-ask.1")).unwrap();
    let examples = ask.find(".SH EXAMPLES").unwrap();
    let notes = ask.find(".SH NOTES").unwrap();
    assert!(examples < notes && ask[examples..notes].contains("analyst ask --replay"));
    assert!(!ask[notes..ask.find(".SH ENVIRONMENT").unwrap()].contains(".nf"));
}

#[test]
fn every_option_on_every_man_page_says_what_it_does_and_mandoc_finds_nothing_to_lint() {
    let dir = man_pages();
    let mut pages: Vec<std::path::PathBuf> = std::fs::read_dir(&*dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    pages.sort();
    assert!(pages.len() > 10, "{pages:?}");
    for page in &pages {
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let lint = std::process::Command::new("mandoc")
            .args(["-Tlint", "-W", "warning"])
            .arg(page)
            .output()
            .expect("mandoc runs (scripts/test installs it)");
        assert_whole(String::from_utf8_lossy(&lint.stdout).into_owned(), str![""]);
        let roff = std::fs::read_to_string(page).unwrap();
        assert!(roff.contains(".TH ") && !roff.contains("\n.SH OPTIONS\n.PP"), "{name}");
        // Each option (a tagged paragraph of OPTIONS or GLOBAL OPTIONS) has
        // a line of text under its names.
        for section in ["\n.SH OPTIONS\n", "\n.SH \"GLOBAL OPTIONS\"\n"] {
            let Some(start) = roff.find(section) else {
                continue;
            };
            let body = &roff[start + section.len()..];
            let body = &body[..body.find("\n.SH ").unwrap_or(body.len())];
            for item in body.split(".TP\n").skip(1) {
                let mut lines = item.lines();
                let names = lines.next().unwrap_or_default();
                let said = lines.any(|line| !line.trim().is_empty() && !line.starts_with('.'));
                assert!(said, "{name}: {names} has no text");
            }
        }
        if name != "analyst.1" {
            assert!(
                roff.contains(".SH \"GLOBAL OPTIONS\"\n.TP\n\\fB\\-q\\fR, \\fB\\-\\-quiet\\fR"),
                "{name} lists the global options"
            );
        }
    }
    // A man page asked for as a command is pointed at the pages.
    let output = analyst().arg("man").output().unwrap();
    exits(&output, 2);
    assert_whole(
        one_error_line(&output),
        str!["analyst: error: unrecognized subcommand 'man'; the man pages: analyst completions man (analyst(1) on stdout; --dir DIR writes every page) (see 'analyst --help')"],
    );
}
