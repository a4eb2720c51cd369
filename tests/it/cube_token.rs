//! Cube tokens: `ANALYST_CUBE_TOKEN` / `--cube-token-file` is sent as
//! `X-Cube-Auth-Token`; it is the only credential the deployment-scoped chat
//! URL takes (an API key alone is refused before sending); on the agent URL
//! it works alone or beside the key; the token names the user, and identity
//! flags given anyway are sent as `sessionSettings`. Abort works on both
//! URL forms. The token is never printed.

use crate::support::*;
use predicates::prelude::*;
use serde_json::json;

/// `analyst` pointed at the deployment URL with a Cube token and no key
/// or identity.
fn on_the_deployment(emu: &Emulator, token: &str) -> assert_cmd::Command {
    let mut command = emu.analyst();
    command
        .env("ANALYST_CHAT_URL", emu.deployment_chat_url())
        .env("ANALYST_CUBE_TOKEN", token)
        .env_remove("ANALYST_API_KEY")
        .env_remove("ANALYST_EXTERNAL_ID");
    command
}

#[test]
fn the_deployment_url_takes_a_cube_token_and_the_token_names_the_user() {
    let emu = Emulator::start();
    let token = cube_token("c42");
    on_the_deployment(&emu, &token)
        .args(["ask", "-v", "Revenue?"])
        .assert()
        .success()
        .stdout(predicate::str::contains("revenue rose"))
        .stderr(predicate::str::contains("> x-cube-auth-token: ***"))
        .stderr(predicate::str::contains(token.as_str()).not());
    let request = &emu.requests_on(Route::Chat)[0];
    assert_eq!(request.header("x-cube-auth-token"), Some(token.as_str()));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.json().get("sessionSettings"), None);
    on_the_deployment(&emu, &token)
        .args(["abort", "--chat-id", "chat-0001"])
        .assert()
        .success();
    assert!(emu.requests_on(Route::Abort)[0]
        .path
        .contains("/deployments/42/chat/abort"));
    on_the_deployment(&emu, &cube_token("someone-else"))
        .args(["abort", "--chat-id", "chat-0001"])
        .assert()
        .code(4);
}

#[test]
fn an_api_key_alone_is_refused_for_the_deployment_url_before_sending() {
    let emu = Emulator::start();
    emu.analyst()
        .env("ANALYST_CHAT_URL", emu.deployment_chat_url())
        .args(["ask", "Q"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "takes only a Cube token: set ANALYST_CUBE_TOKEN",
        ));
    assert!(emu.requests().is_empty(), "nothing was sent");
}

#[test]
fn on_the_agent_url_a_token_works_alone_or_beside_the_key() {
    let emu = Emulator::start();
    let scratch = Scratch::new();
    let token = cube_token("c42");
    let file = scratch.write("token.jwt", format!("{token}\n"));
    emu.analyst()
        .env_remove("ANALYST_API_KEY")
        .env_remove("ANALYST_EXTERNAL_ID")
        .args(["ask", "Q", "--cube-token-file"])
        .arg(&file)
        .assert()
        .success();
    emu.analyst()
        .env("ANALYST_CUBE_TOKEN", &token)
        .args(["ask", "Q"])
        .assert()
        .success();
    let requests = emu.requests_on(Route::Chat);
    assert_eq!(requests[0].header("authorization"), None);
    assert_eq!(requests[0].header("x-cube-auth-token"), Some(token.as_str()));
    assert_eq!(
        requests[1].header("authorization"),
        Some(format!("Api-Key {API_KEY}").as_str())
    );
    assert_eq!(requests[1].header("x-cube-auth-token"), Some(token.as_str()));
    assert_eq!(
        requests[1].json()["sessionSettings"],
        json!({"externalId": "ci-bot"}),
        "identity flags given with a token are sent"
    );
}

#[test]
fn a_rejected_token_is_an_authentication_failure_without_the_token_in_it() {
    let emu = Emulator::start();
    let forged = analyst::api::data::sign_hs256(
        b"not-the-secret",
        json!({"externalId": "c42", "scope": ["chat"]}).as_object().unwrap(),
        std::time::SystemTime::now(),
    );
    on_the_deployment(&emu, &forged)
        .args(["ask", "Q"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(forged.as_str()).not());
}

#[cfg(unix)]
#[test]
fn a_token_file_others_can_read_is_named_as_the_token_file() {
    use std::os::unix::fs::PermissionsExt;
    let emu = Emulator::start();
    let scratch = Scratch::new();
    let file = scratch.write("token.jwt", cube_token("c42"));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    emu.analyst()
        .env_remove("ANALYST_API_KEY")
        .env_remove("ANALYST_EXTERNAL_ID")
        .args(["ask", "Q", "--cube-token-file"])
        .arg(&file)
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "the Cube token file {} can be read by other users (mode 644)",
            file.display()
        )))
        .stderr(predicate::str::contains("API key").not());
    let missing = scratch.join("missing.jwt");
    emu.analyst()
        .env_remove("ANALYST_API_KEY")
        .args(["ask", "Q", "--cube-token-file"])
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read the Cube token file"));
}
