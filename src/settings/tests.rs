//! The resolver, from a command line to a command's settings: flags win,
//! and each flag lands once where the command reads it.

use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::{resolve, CaseOverrides, Command};
use crate::error::{kind_of, Kind};
use crate::exchange::Asked;
use crate::modes::Mode;

/// The process's environment, which clap reads as it parses: a test that
/// sets variables holds it, as does every resolution.
static ENVIRONMENT: Mutex<()> = Mutex::new(());

/// The command `args` (after `analyst`) resolve to.
fn resolved(args: &[&str]) -> anyhow::Result<Command> {
    resolved_with(&[], args)
}

/// The command `args` resolve to with the variables `env` set.
fn resolved_with(env: &[(&str, &str)], args: &[&str]) -> anyhow::Result<Command> {
    let _held = ENVIRONMENT.lock().unwrap_or_else(PoisonError::into_inner);
    for (name, value) in env {
        std::env::set_var(name, value);
    }
    let matches = crate::cli::command()
        .try_get_matches_from(std::iter::once("analyst").chain(args.iter().copied()))
        .expect("the command line parses");
    let command = resolve(&matches, &super::notes(&matches));
    for (name, _) in env {
        std::env::remove_var(name);
    }
    command
}

/// Writes `text` as a file of the owner's alone (as credentials and
/// configs must be) in `folder`.
fn private_file(folder: &Path, name: &str, text: &str) -> String {
    let path = folder.join(name);
    std::fs::write(&path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    path.to_str().unwrap().to_string()
}

#[test]
fn ask_flags_land_in_its_plan() {
    let args = [
        "ask",
        "--replay",
        "saved.ndjson",
        "-o",
        "csv",
        "--timeout",
        "5s",
        "--idle-timeout",
        "3s",
        "--retries",
        "2",
        "--allow-partial",
        "--no-history",
    ];
    let Command::Ask(ask) = resolved(&args).unwrap() else {
        panic!("not an ask");
    };
    assert!(matches!(&ask.asked, Asked::Replay(path) if path == "saved.ndjson"));
    assert_eq!(ask.printer.traits().shows, Mode::Rows);
    assert_eq!(ask.network.limits.timeout, Some(Duration::from_secs(5)));
    assert_eq!(ask.network.limits.idle, Some(Duration::from_secs(3)));
    assert_eq!(ask.network.retries, 2);
    let printer = format!("{:?}", ask.printer);
    assert!(
        printer.contains("Truncation { all_rows: false, allow_partial: true }"),
        "{printer}"
    );
    assert!(ask.recording.is_none(), "--no-history records nothing");
}

#[test]
fn check_overrides_are_resolved_once_into_one_group() {
    let folder = tempfile::tempdir().unwrap();
    let key = private_file(folder.path(), "key", "sk-resolver-test-key");
    let key = key.as_str();
    let args = [
        "check",
        "suite.toml",
        "--chat-url",
        "https://h.example/api/v1/public/a/agents/1/chat/stream-chat-state",
        "--api-key-file",
        key,
        "--external-id",
        "ci",
        "--repeat",
        "3",
        "--pass-rate",
        "0.5",
        "--max-seconds",
        "1.5",
        "--max-tokens",
        "100",
        "--max-llm-calls",
        "4",
        "--no-history",
    ];
    let Command::Check(check) = resolved(&args).unwrap() else {
        panic!("not a check");
    };
    let expected = CaseOverrides {
        repeat: Some(3),
        pass_rate: Some(0.5),
        max_seconds: Some(Duration::from_millis(1500)),
        max_tokens: Some(100),
        max_llm_calls: Some(4),
        faithful: false,
    };
    assert_eq!(check.overrides, expected);
}

#[test]
fn a_bad_flag_value_is_a_usage_failure_naming_the_flag() {
    let err = resolved(&["ask", "--replay", "s.ndjson", "--timeout", "soon"]).unwrap_err();
    assert_eq!(kind_of(&err), Kind::Usage);
    assert!(format!("{err:#}").contains("soon"), "{err:#}");
}

/// Where the chat URL and who asks came from, for `check` run with the
/// variables `env` and the extra `flags`, and a profile that sets both.
fn chat_and_asker(env: &[(&str, &str)], flags: &[&str]) -> (String, String, String) {
    let folder = tempfile::tempdir().unwrap();
    let key = private_file(folder.path(), "key", "sk-precedence-key");
    let config = private_file(
        folder.path(),
        "config.toml",
        &format!(
            "default = \"p\"\n[profiles.p]\nchat_url = \"https://profile.example/api/v1/public/a/agents/1/chat/stream-chat-state\"\nexternal_id = \"from-profile\"\napi_key_file = \"{key}\"\n"
        ),
    );
    let mut args = vec!["check", "suite.toml", "--no-history"];
    args.extend(flags);
    let mut env = env.to_vec();
    env.push(("ANALYST_CONFIG", config.as_str()));
    let Command::Check(check) = resolved_with(&env, &args).unwrap() else {
        panic!("not a check");
    };
    let crate::settings::types::Answers::Asked(chat) = &check.answers else {
        panic!("a check that asks");
    };
    let host = chat.url.host_str().unwrap().to_string();
    let asker = check.identity.external_id.clone().unwrap_or_default();
    (host, asker, check.identity.names.external_id.clone())
}

#[test]
fn a_flag_wins_over_its_variable_which_wins_over_the_profile() {
    let chat = |host: &str| format!("https://{host}/api/v1/public/a/agents/1/chat/stream-chat-state");
    // The profile alone.
    let (host, asker, named) = chat_and_asker(&[], &[]);
    assert_eq!((host.as_str(), asker.as_str()), ("profile.example", "from-profile"));
    assert!(named.contains("profile p"), "{named}");
    // The variables over the profile.
    let env_url = chat("env.example");
    let env = [
        ("ANALYST_CHAT_URL", env_url.as_str()),
        ("ANALYST_EXTERNAL_ID", "from-env"),
    ];
    let (host, asker, named) = chat_and_asker(&env, &[]);
    assert_eq!(
        (host.as_str(), asker.as_str(), named.as_str()),
        ("env.example", "from-env", "ANALYST_EXTERNAL_ID")
    );
    // The flags over both.
    let flag_url = chat("flag.example");
    let flags = ["--chat-url", flag_url.as_str(), "--external-id", "from-flag"];
    let (host, asker, named) = chat_and_asker(&env, &flags);
    assert_eq!(
        (host.as_str(), asker.as_str(), named.as_str()),
        ("flag.example", "from-flag", "--external-id")
    );
}
