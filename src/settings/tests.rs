//! The resolver, from a command line to a command's settings: flags win,
//! and each flag lands once where the command reads it.

use std::time::Duration;

use super::{resolve, CaseOverrides, Command};
use crate::error::{kind_of, Kind};
use crate::exchange::Asked;
use crate::modes::Mode;

/// The command `args` (after `analyst`) resolve to.
fn resolved(args: &[&str]) -> anyhow::Result<Command> {
    let matches = crate::cli::command()
        .try_get_matches_from(std::iter::once("analyst").chain(args.iter().copied()))
        .expect("the command line parses");
    resolve(&matches, &super::notes(&matches))
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
    let key = folder.path().join("key");
    std::fs::write(&key, "sk-resolver-test-key").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let key = key.to_str().unwrap();
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
    };
    assert_eq!(check.overrides, expected);
}

#[test]
fn a_bad_flag_value_is_a_usage_failure_naming_the_flag() {
    let err = resolved(&["ask", "--replay", "s.ndjson", "--timeout", "soon"]).unwrap_err();
    assert_eq!(kind_of(&err), Kind::Usage);
    assert!(format!("{err:#}").contains("soon"), "{err:#}");
}
