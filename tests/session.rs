//! `analyst session`: the identity flags become the generate-session body
//! (unset fields omitted, the sessionSettings rules checked before sending);
//! prints the sessionId; statuses map to the contract's exit codes.

mod support;

use predicates::prelude::*;
use serde_json::json;
use support::*;

fn session(emu: &Emulator) -> assert_cmd::Command {
    let mut command = emu.analyst();
    command
        .env("ANALYST_BASE_URL", emu.base())
        .env_remove("ANALYST_EXTERNAL_ID")
        .arg("session");
    command
}

#[test]
fn an_external_user_gets_a_session_id_and_the_body_carries_every_field() {
    let emu = Emulator::start();
    session(&emu)
        .args([
            "--external-id",
            "customer-42",
            "--email",
            "c42@example.com",
            "--attr",
            "region=EMEA",
        ])
        .args(["--group", "buyers", "--security-context", r#"{"tenant":"t9"}"#])
        .assert()
        .success()
        .stdout("sess-0001\n");
    let request = &emu.requests_on(Route::Session)[0];
    assert_eq!(
        request.header("authorization"),
        Some(format!("Api-Key {API_KEY}").as_str())
    );
    assert_eq!(
        request.json(),
        json!({
            "externalId": "customer-42", "email": "c42@example.com",
            "userAttributes": [{"name": "region", "value": "EMEA"}],
            "groups": ["buyers"], "securityContext": {"tenant": "t9"}
        })
    );
}

#[test]
fn an_internal_user_is_sent_alone_and_json_output_is_an_object() {
    let emu = Emulator::start();
    session(&emu)
        .args(["--internal-id", "ana@acme.example", "-o", "json"])
        .assert()
        .success()
        .stdout("{\"sessionId\":\"sess-0001\"}\n");
    assert_eq!(
        emu.requests_on(Route::Session)[0].json(),
        json!({"internalId": "ana@acme.example"})
    );
}

#[test]
fn rules_are_refused_before_sending() {
    let emu = Emulator::start();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--internal-id", "ana@acme.example", "--attr", "a=b"],
            "cannot be used with --internal-id",
        ),
        (&["--external-id", "Customer 42"], "contains spaces"),
        (
            &["--external-id", "c", "--persistent"],
            "generate-session does not take them",
        ),
        (&[], "--external-id"),
    ];
    for (args, message) in cases {
        session(&emu)
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
    }
    emu.analyst()
        .env_remove("ANALYST_BASE_URL")
        .args(["session", "--external-id", "c"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("ANALYST_BASE_URL"));
    assert!(emu.requests().is_empty());
}

#[test]
fn statuses_map_to_exit_codes() {
    let emu = Emulator::start();
    session(&emu)
        .args(["--internal-id", "ghost@acme.example"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "400 Bad Request: Internal user ghost@acme.example does not exist",
        ));
    session(&emu)
        .env("ANALYST_API_KEY", "sk-nope-nope")
        .args(["--external-id", "c"])
        .assert()
        .code(3);
    emu.script_on(
        Route::Session,
        Reply::status(404, "application/json", r#"{"error":"Not found"}"#),
    );
    session(&emu).args(["--external-id", "c"]).assert().code(5);
    emu.script_on(
        Route::Session,
        Reply::status(500, "application/json", r#"{"error":"boom"}"#),
    );
    session(&emu).args(["--external-id", "c"]).assert().code(6);
    emu.script_on(
        Route::Session,
        Reply::status(200, "application/json", r#"{"unexpected":true}"#),
    );
    session(&emu)
        .args(["--external-id", "c"])
        .assert()
        .code(6)
        .stderr(predicate::str::contains("without a sessionId"));
}

#[test]
fn transient_failures_are_retried() {
    let emu = Emulator::start();
    emu.script_on(Route::Session, Reply::status(503, "text/plain", "busy"));
    emu.script_on(Route::Session, Reply::Drop);
    session(&emu)
        .args(["--external-id", "c"])
        .assert()
        .success()
        .stdout("sess-0001\n");
    emu.expect(Route::Session, 3);
}
