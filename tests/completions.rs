//! The completion scripts and man page committed in `completions/` are what
//! `analyst completions …` prints now, and the bash script completes in a
//! real bash.

mod support;

use std::path::PathBuf;

use support::*;

/// Each target and the file it is committed as.
const FILES: [(&str, &str); 6] = [
    ("bash", "analyst.bash"),
    ("zsh", "_analyst"),
    ("fish", "analyst.fish"),
    ("elvish", "analyst.elv"),
    ("powershell", "_analyst.ps1"),
    ("man", "analyst.1"),
];

const REGENERATE: &str = "ANALYST_REGENERATE=1 cargo test --test completions";

fn committed(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("completions").join(file)
}

#[test]
fn committed_completions_and_man_page_are_fresh() {
    let regenerate = std::env::var_os("ANALYST_REGENERATE").is_some();
    for (target, file) in FILES {
        let output = analyst().args(["completions", target]).output().unwrap();
        assert!(output.status.success(), "{target}");
        assert!(!output.stdout.is_empty(), "{target}");
        let path = committed(file);
        if regenerate {
            std::fs::write(&path, &output.stdout).unwrap();
            continue;
        }
        let on_disk = std::fs::read(&path).unwrap_or_default();
        assert!(
            on_disk == output.stdout,
            "completions/{file} is stale: regenerate them all with `{REGENERATE}`"
        );
    }
}

/// Completes `words` (the last one being completed) in bash with what
/// `analyst completions bash` prints; returns the candidates.
fn bash_complete(words: &[&str]) -> Vec<String> {
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
