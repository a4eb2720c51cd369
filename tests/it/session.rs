//! `analyst session`: the identity flags become the generate-session body
//! (unset fields omitted, the sessionSettings rules checked before sending);
//! prints the sessionId; statuses map to the contract's exit codes.

use crate::support::*;
use predicates::prelude::*;
use serde_json::json;

fn session(emu: &Emulator) -> assert_cmd::Command {
    let mut command = emu.analyst();
    command
        .env("ANALYST_BASE_URL", emu.base())
        .env("ANALYST_DEPLOYMENT_ID", "42")
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
            "groups": ["buyers"], "securityContext": {"tenant": "t9"}, "deploymentId": 42
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
        json!({"internalId": "ana@acme.example", "deploymentId": 42})
    );
}

#[test]
fn rules_are_refused_before_sending() {
    let emu = Emulator::start();
    let cases: [(&[&str], &str); 11] = [
        (&["--external-id", "c", "--timezone", "UTC"], "are chat settings"),
        (&["--external-id", "c", "--no-authoring"], "are chat settings"),
        (
            &["--internal-id", "ana@acme.example", "--attr", "a=b"],
            "cannot be used with --internal-id",
        ),
        (
            &["--external-id", "c", "--embed-tenant", "Acme"],
            "--embed-tenant \"Acme\" must be 5-36",
        ),
        (
            &["--external-id", "c", "--embed-tenant", "9tenant"],
            "starting with a letter",
        ),
        (
            &["--external-id", "c", "--picture", "ana.png"],
            "must be an absolute http(s) URL",
        ),
        (
            &["--internal-id", "admin", "--display-name", "A"],
            "are for external users",
        ),
        (&["--external-id", "c", "--setting", "=1"], "must be KEY=VALUE"),
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

#[test]
fn the_embedding_fields_of_the_current_service_are_sent_typed() {
    let emu = Emulator::start();
    session(&emu)
        .env("ANALYST_TIMEZONE", "Asia/Tokyo")
        .args(["--external-id", "c42", "--deployment-id", "7", "--branch", "dev-anna"])
        .args(["--embed-tenant", "acme-eu", "--creator-mode"])
        .args(["--display-name", "Ana B.", "--picture", "https://cdn.example/ana.png"])
        .args([
            "--setting",
            "allowAi=false",
            "--setting",
            "locale=de-DE",
            "--setting",
            "limit=3",
        ])
        .args([
            "--attr",
            "region=EMEA",
            "--attr",
            "level=3",
            "--attr",
            r#"teams=["a","b"]"#,
        ])
        .assert()
        .success()
        .stdout("sess-0001\n");
    assert_eq!(
        emu.requests_on(Route::Session)[0].json(),
        json!({
            "externalId": "c42",
            "userAttributes": [
                {"name": "region", "value": "EMEA"},
                {"name": "level", "value": 3},
                {"name": "teams", "value": ["a", "b"]}
            ],
            "deploymentId": 7, "branchName": "dev-anna", "embedTenantName": "acme-eu",
            "creatorMode": true,
            "userProfile": {"displayName": "Ana B.", "picture": "https://cdn.example/ana.png"},
            "settings": {"allowAi": false, "locale": "de-DE", "limit": 3}
        }),
        "--deployment-id wins over ANALYST_DEPLOYMENT_ID; ANALYST_TIMEZONE is for chats"
    );
}

#[test]
fn a_missing_deployment_is_named_and_a_refusal_explained() {
    let emu = Emulator::start();
    session(&emu)
        .env_remove("ANALYST_DEPLOYMENT_ID")
        .args(["--external-id", "c"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("deploymentId is required"))
        .stderr(predicate::str::contains("pass --deployment-id N"));
    emu.script_on(
        Route::Session,
        Reply::status(403, "application/json", r#"{"error":"Forbidden"}"#),
    );
    session(&emu)
        .args(["--external-id", "c"])
        .assert()
        .code(4)
        .stderr(predicate::str::contains("a personal (non-admin) API key"));
}

#[test]
fn sessions_are_revoked_one_or_many_and_revoking_is_idempotent() {
    let emu = Emulator::start();
    let revoke = || {
        let mut command = emu.analyst();
        command.env("ANALYST_BASE_URL", emu.base()).args(["session", "revoke"]);
        command
    };
    revoke()
        .arg("sess-0001")
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains("session sess-0001 revoked"));
    revoke()
        .arg("-")
        .write_stdin("sess-0002\n\n  sess-0003  \n")
        .assert()
        .success();
    let bodies: Vec<_> = emu.requests_on(Route::Revoke).iter().map(Recorded::json).collect();
    assert_eq!(
        bodies,
        [
            json!({"sessionId": "sess-0001"}),
            json!({"sessionId": "sess-0002"}),
            json!({"sessionId": "sess-0003"})
        ]
    );
    emu.script_on(
        Route::Revoke,
        Reply::status(403, "application/json", r#"{"error":"Embedding is not enabled"}"#),
    );
    revoke()
        .arg("sess-0004")
        .assert()
        .code(4)
        .stderr(predicate::str::contains("embedding is not enabled for this account"));
    revoke().arg("-").write_stdin("\n").assert().code(2);
    emu.expect(Route::Revoke, 4);
}
