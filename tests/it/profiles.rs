//! Profiles in the config file: endpoints, a default identity and secrets
//! from a command or a file; a flag wins over the environment, which wins
//! over the profile; a malformed file is an error naming the line.

use std::path::Path;

use assert_cmd::Command;

use crate::support::*;
use predicates::prelude::*;
use serde_json::json;

/// A fresh config home holding `analyst/config.toml` with `text`.
fn config_home(text: &str) -> Scratch {
    let home = Scratch::new();
    home.write("analyst/config.toml", text);
    home
}

/// `analyst` reading its configuration from the config home `home`.
fn analyst_in(home: &Path) -> Command {
    let mut command = analyst();
    command.env("XDG_CONFIG_HOME", home);
    command
}

fn profile_text(emu: &Emulator) -> String {
    format!(
        r#"
default = "emu"

[profiles.emu]
chat_url = "{}"
external_id = "profile-user"
api_key_command = "printf '%s' {API_KEY}"

[profiles.other]
chat_url = "http://127.0.0.1:9/nowhere/chat/stream-chat-state"
internal_id = "ana@acme.example"
api_key_file = "~/no-such-key"
"#,
        emu.chat_url()
    )
}

#[test]
fn a_profile_with_api_key_command_runs_ask_without_any_environment() {
    let emu = Emulator::start();
    let home = config_home(&profile_text(&emu));
    analyst_in(&home)
        .args(["ask", "Q"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("Answer 1:"));
    assert_eq!(
        emu.chat_bodies()[0]["sessionSettings"],
        json!({"externalId": "profile-user"})
    );
    assert_eq!(
        emu.requests()[0].header("authorization"),
        Some(format!("Api-Key {API_KEY}").as_str())
    );
}

#[test]
fn flags_win_over_the_environment_which_wins_over_the_profile() {
    let emu = Emulator::start();
    let home = config_home(&profile_text(&emu));
    analyst_in(&home)
        .env("ANALYST_EXTERNAL_ID", "env-user")
        .args(["ask", "Q"])
        .assert()
        .success();
    analyst_in(&home)
        .env("ANALYST_EXTERNAL_ID", "env-user")
        .args(["ask", "Q", "--external-id", "flag-user"])
        .assert()
        .success();
    let ids: Vec<_> = emu
        .chat_bodies()
        .iter()
        .map(|b| b["sessionSettings"]["externalId"].clone())
        .collect();
    assert_eq!(ids, [json!("env-user"), json!("flag-user")]);
    // The environment's key wins over the profile's command.
    analyst_in(&home)
        .env("ANALYST_API_KEY", "sk-from-the-environment")
        .args(["ask", "Q"])
        .assert()
        .code(3);
}

#[test]
fn profile_selection_by_flag_environment_and_file() {
    let emu = Emulator::start();
    let home = config_home(&profile_text(&emu));
    // --profile other: its URL and key file are used (and fail as they should).
    analyst_in(&home)
        .args(["ask", "Q", "--profile", "other"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read the API key file").and(predicate::str::contains("no-such-key")));
    analyst_in(&home)
        .env("ANALYST_PROFILE", "missing")
        .args(["ask", "Q"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no profile \"missing\"").and(predicate::str::contains("it has: emu, other")));
    // ANALYST_CONFIG names the file directly.
    let file = home.join("analyst/config.toml");
    analyst()
        .env("ANALYST_CONFIG", &file)
        .args(["ask", "Q"])
        .assert()
        .success();
}

#[test]
fn a_malformed_config_is_an_error_naming_the_line() {
    let home = config_home("[profiles.a]\nchat_url = \"x\"\napi_key = \"sk-plain\"\n");
    analyst_in(&home)
        .args(["ask", "Q"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("config.toml:3: unknown field `api_key`"));
    let home = config_home("[profiles.a\n");
    analyst_in(&home)
        .args(["ask", "Q"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("config.toml:1:"));
}

#[test]
fn a_failing_key_command_is_a_usage_error() {
    let emu = Emulator::start();
    let home = config_home(&format!(
        "[profiles.default]\nchat_url = \"{}\"\nexternal_id = \"u\"\napi_key_command = \"exit 3\"\n",
        emu.chat_url()
    ));
    analyst_in(&home)
        .args(["ask", "Q"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "profile default: api_key_command failed (exit 3)",
        ));
    assert!(emu.requests().is_empty());
}

#[test]
fn a_refused_key_names_where_it_came_from() {
    let emu = Emulator::start();
    let home = config_home(&format!(
        "[profiles.default]\nchat_url = \"{}\"\nexternal_id = \"u\"\napi_key_command = \"echo sk-wrong-key-1\"\n",
        emu.chat_url()
    ));
    let output = analyst_in(&home)
        .env_remove("ANALYST_API_KEY")
        .args(["ask", "Q"])
        .output()
        .unwrap();
    exits(&output, 3);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("check the API key (from api_key_command of profile default (")
            && !stderr.contains("ANALYST_API_KEY"),
        "{stderr}"
    );
    // A key file named by the flag: the flag.
    let key = home.write("key", "sk-wrong-key-2\n");
    let output = analyst_in(&home)
        .env_remove("ANALYST_API_KEY")
        .args(["ask", "--api-key-file"])
        .arg(&key)
        .arg("Q")
        .output()
        .unwrap();
    exits(&output, 3);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: warning: the API key file [..] can be read by other users (mode 644): chmod 600 [..]
analyst: error: the service answered 401 Unauthorized: Invalid API key; check the API key (from --api-key-file)

"#]],
    );
}

#[cfg(unix)]
#[test]
fn a_key_file_other_users_can_read_draws_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    let emu = Emulator::start();
    let home = config_home("");
    let key = home.join("key");
    std::fs::write(&key, API_KEY).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    emu.analyst()
        .env_remove("ANALYST_API_KEY")
        .args(["ask", "Q", "--api-key-file"])
        .arg(&key)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "can be read by other users (mode 644): chmod 600",
        ));
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    emu.analyst()
        .env_remove("ANALYST_API_KEY")
        .args(["ask", "Q", "--api-key-file"])
        .arg(&key)
        .assert()
        .success()
        .stderr(predicate::str::contains("other users").not());
}

#[test]
fn a_profile_data_token_command_serves_rows() {
    let emu = Emulator::start();
    let token = analyst::api::data::sign_hs256(
        DATA_SECRET.as_bytes(),
        &serde_json::Map::new(),
        std::time::SystemTime::now(),
    );
    let home = config_home(&format!(
        "[profiles.default]\ndata_url = \"{}\"\ndata_token_command = \"printf '%s' {token}\"\n",
        emu.data_url()
    ));
    analyst_in(&home)
        .args(["rows", "--sql", "SELECT 5 AS five"])
        .assert()
        .success()
        .stdout("five\r\n5\r\n");
}

#[test]
fn a_config_others_can_write_is_refused_when_it_runs_a_command() {
    use std::os::unix::fs::PermissionsExt;
    let emu = Emulator::start();
    let home = config_home(&profile_text(&emu));
    let file = home.join("analyst/config.toml");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    analyst_in(&home)
        .args(["ask", "Q"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is writable by others (mode 666)"))
        .stderr(predicate::str::contains("chmod go-w"));
    assert!(emu.requests_on(Route::Chat).is_empty(), "nothing was sent");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    analyst_in(&home).args(["ask", "Q"]).assert().success();
}

#[test]
fn a_profile_command_does_not_see_the_other_secrets() {
    let emu = Emulator::start();
    // The key command first probes its environment: it fails (exit 9,
    // so analyst cannot get the key) when it sees any of `variables`.
    let probing = |variables: &str| {
        let original = profile_text(&emu);
        let text = original.replace(
            "api_key_command = \"printf '%s' ",
            &format!("api_key_command = \"env | grep -q {variables} && exit 9; printf '%s' "),
        );
        assert_ne!(text, original, "the probe is in the profile");
        config_home(&text)
    };
    // The probe can fail: HOME is in every command's environment.
    let sees_home = probing("-e ^HOME=");
    analyst_in(&sees_home)
        .args(["ask", "Q"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("api_key_command"));
    assert!(emu.requests_on(Route::Chat).is_empty());
    // It does not see the data secret, the data token or a Cube token.
    let home = probing("-e ^ANALYST_DATA -e ^ANALYST_CUBE");
    analyst_in(&home)
        .env("ANALYST_DATA_SECRET", "data-secret-never-shared")
        .env("ANALYST_DATA_TOKEN", "data-token-never-shared")
        .env("ANALYST_CUBE_TOKEN", "cube-token-never-shared")
        .args(["ask", "Q"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("Answer 1:"));
    assert_eq!(emu.requests_on(Route::Chat).len(), 1);
}
