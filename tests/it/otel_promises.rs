//! The span export keeps the core's promises: a collector's secrets (its
//! header values, credentials in its URL) are on no output, however the
//! header list is written; an `OTEL_*` value the exporter cannot use turns
//! the export off with one warning (the command runs; `doctor` fails that
//! check); `OTEL_RESOURCE_ATTRIBUTES` may name the service; with the
//! capture switch off no span carries an answer, a question or SQL, in
//! attributes or status; `-v` logs the export like every request; plain
//! `http://` to a host that is not loopback carries no secret and never
//! goes through a proxy.

use std::process::Command;

use serde_json::Value;

use crate::support::collector::{Answer, Collector};
use crate::support::*;

/// A secret of the collector's, which no output may show.
const KEY: &str = "otel-key-52d9c0e7a1";

/// Every span a collector received as OTLP/JSON, flattened.
fn spans_of(collector: &Collector) -> Vec<Value> {
    collector
        .received()
        .iter()
        .flat_map(|request| {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            body["resourceSpans"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .flat_map(|resource| resource["scopeSpans"].as_array().cloned().unwrap_or_default())
                .flat_map(|scope| scope["spans"].as_array().cloned().unwrap_or_default())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// What `command` printed on stdout and stderr, as one text.
fn everything(output: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn a_malformed_header_list_turns_the_export_off_and_is_never_quoted() {
    let emu = Emulator::start();
    let collector = Collector::start(Answer::Status(200));
    for headers in [
        format!("authorization: Bearer {KEY}"),
        format!("x-team=a,authorization=Bearer {KEY},x"),
    ] {
        let command = |args: &[&str]| {
            let mut command = emu.command();
            command
                .env("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint())
                .env("OTEL_EXPORTER_OTLP_HEADERS", &headers)
                .env("ANALYST_HISTORY", "0")
                .args(args);
            command.output().unwrap()
        };
        let asked = command(&["ask", "Revenue?"]);
        exits(&asked, 0);
        let stderr = String::from_utf8_lossy(&asked.stderr);
        let warnings: Vec<&str> = stderr.lines().filter(|line| line.contains("warning")).collect();
        assert_eq!(warnings.len(), 1, "{stderr}");
        assert!(
            warnings[0].contains("OTEL_EXPORTER_OTLP_HEADERS: entry") && warnings[0].ends_with("no spans are sent"),
            "{stderr}"
        );
        let doctor = command(&["doctor", "--offline"]);
        exits(&doctor, 2);
        let config = command(&["config", "list"]);
        for output in [&asked, &doctor, &config] {
            let all = everything(output);
            assert!(!all.contains(KEY) && !all.contains("Bearer"), "{all}");
        }
    }
    assert!(collector.received().is_empty(), "the export was off");
}

#[test]
fn credentials_in_the_endpoint_are_used_and_shown_nowhere() {
    let emu = Emulator::start();
    let collector = Collector::start(Answer::Status(500));
    let endpoint = format!("http://spans:{KEY}@127.0.0.1:{}", collector.port());
    let folder = Scratch::new();
    let db = folder.join("history.db");
    let command = |args: &[&str]| {
        let mut command = emu.command();
        command
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
            .env("ANALYST_HISTORY_DB", &db)
            .args(args);
        command.output().unwrap()
    };
    let asked = command(&["ask", "-v", "Revenue?"]);
    exits(&asked, 0);
    let stderr = String::from_utf8_lossy(&asked.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
> POST http://127.0.0.1:[..]/api/v1/public/acme/agents/agent-7/chat/stream-chat-state
> authorization: Api-Key ***
> content-type: application/json
> accept: application/x-ndjson, application/json
> {"input":"Revenue?","messageId":"[..]-message","sessionSettings":{"externalId":"ci-bot"}}
< HTTP/1.1 200 OK
< content-type: application/json
message: [..]-message
chat: chat-0001
> POST http://***@127.0.0.1:[..]/v1/traces
> content-type: application/x-protobuf
> accept: */*
> (1281 bytes of application/x-protobuf)
< HTTP/1.1 500 Internal Server Error
< content-type: application/json
analyst: warning: the spans were not sent to http://***@127.0.0.1:[..]/v1/traces: the collector answered 500 Internal Server Error: {}; the collector failed; try again later; kept in the history for 'analyst history push'

"#]],
    );
    // The credentials go as HTTP's basic authentication, nowhere else.
    let sent = &collector.received()[0];
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("spans:{KEY}"));
    assert_eq!(sent.header("authorization"), Some(format!("Basic {basic}").as_str()));
    let outputs = [
        asked,
        command(&["config", "list"]),
        command(&["doctor"]),
        command(&["history", "push"]),
    ];
    for output in &outputs {
        let all = everything(output);
        assert!(!all.contains(KEY), "{all}");
    }
    assert!(
        everything(&outputs[1]).contains("http://***@127.0.0.1"),
        "config list shows where"
    );
}

#[test]
fn an_otel_value_the_exporter_cannot_use_is_one_warning_and_a_failed_doctor_check() {
    let emu = Emulator::start();
    let collector = Collector::start(Answer::Status(200));
    for (name, value) in [
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "10s"),
        ("OTEL_RESOURCE_ATTRIBUTES", "team"),
    ] {
        let run = |args: &[&str]| {
            let mut command = emu.command();
            command
                .env("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint())
                .env("ANALYST_HISTORY", "0")
                .env(name, value)
                .args(args);
            command.output().unwrap()
        };
        let suite = ScratchFile::new("smoke.toml", "[[case]]\nname = \"r\"\nquestion = \"Revenue?\"\n");
        for args in [vec!["ask", "Revenue?"], vec!["check", suite.to_str().unwrap()]] {
            let output = run(&args);
            exits(&output, 0);
            let stderr = String::from_utf8_lossy(&output.stderr);
            let warnings: Vec<&str> = stderr.lines().filter(|line| line.contains("warning")).collect();
            assert_eq!(warnings.len(), 1, "{name}: {stderr}");
            assert!(
                warnings[0].contains(name) && warnings[0].ends_with("no spans are sent"),
                "{stderr}"
            );
        }
        let doctor = run(&["doctor", "--offline", "-o", "json"]);
        exits(&doctor, 2);
        let findings: Vec<Value> = serde_json::from_slice(&doctor.stdout).unwrap();
        let endpoint = findings
            .iter()
            .find(|finding| finding["check"] == "otlp endpoint")
            .unwrap();
        assert_eq!(endpoint["result"], "failed", "{name}: {endpoint}");
        assert!(endpoint["found"].as_str().unwrap().contains(name), "{endpoint}");
    }
    assert!(collector.received().is_empty(), "every export was off");
}

#[test]
fn the_service_name_may_come_from_the_resource_attributes() {
    let emu = Emulator::start();
    let collector = Collector::start(Answer::Status(200));
    let output = emu
        .command()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("OTEL_RESOURCE_ATTRIBUTES", "service.name=nightly,team=data")
        .env("ANALYST_HISTORY", "0")
        .args(["ask", "Revenue?"])
        .output()
        .unwrap();
    exits(&output, 0);
    collector.wait_for(1);
    let body: Value = serde_json::from_slice(&collector.received()[0].body).unwrap();
    let attributes = body["resourceSpans"][0]["resource"]["attributes"]
        .as_array()
        .unwrap()
        .clone();
    let value = |key: &str| -> Vec<Value> {
        attributes
            .iter()
            .filter(|kv| kv["key"] == key)
            .map(|kv| kv["value"]["stringValue"].clone())
            .collect()
    };
    assert_eq!(value("service.name"), [Value::from("nightly")]);
    assert_eq!(value("team"), [Value::from("data")]);
}

#[test]
fn with_capture_off_no_span_carries_the_answer_the_question_or_sql() {
    let emu = Emulator::start();
    let collector = Collector::start(Answer::Status(200));
    let answer = "Revenue was 4,815,162 in the quiet quarter";
    let sql = "SELECT secret_column_6a1f FROM orders";
    let stream = |id: &str| {
        ChatStream::new(id, Family::Semantic)
            .failed_sql_call(sql, &format!("column secret_column_6a1f does not exist in {sql}"))
            .final_answer(&[answer])
    };
    emu.script(Reply::stream(&stream("c-1")));
    let suite = ScratchFile::new(
        "content.toml",
        "[[case]]\nname = \"quiet quarter\"\nquestion = \"What happened in the quiet quarter 9f0e?\"\nexpect_answer = \"never said\"\nexpect_sql = \"never run\"\n",
    );
    let output = emu
        .command()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("ANALYST_HISTORY", "0")
        .args(["check", suite.to_str().unwrap()])
        .output()
        .unwrap();
    exits(&output, 9);
    collector.wait_for(1);
    let spans = spans_of(&collector);
    assert!(spans.len() >= 3, "{spans:?}");
    let text = serde_json::to_string(&spans).unwrap();
    for content in [
        "4,815,162",
        "secret_column_6a1f",
        "quiet quarter 9f0e",
        "never said",
        "SELECT",
        "Failing query",
    ] {
        assert!(!text.contains(content), "{content} in {text}");
    }
    let case = spans.iter().find(|span| span["name"] == "case quiet quarter").unwrap();
    assert_eq!(case["status"]["code"], 2);
    assert_eq!(
        case["status"]["message"],
        "an expectation, a comparison or a budget was not met"
    );
}

#[test]
fn verbose_logs_the_export_request_and_its_status() {
    let emu = Emulator::start();
    let collector = Collector::start(Answer::Status(200));
    let output = emu
        .command()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint())
        .env("OTEL_EXPORTER_OTLP_HEADERS", format!("authorization={KEY}"))
        .env("ANALYST_HISTORY", "0")
        .args(["ask", "-v", "Revenue?"])
        .output()
        .unwrap();
    exits(&output, 0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let export = format!("> POST {}/v1/traces", collector.endpoint());
    let at = stderr.find(&export).unwrap_or_else(|| panic!("{stderr}"));
    let after: Vec<&str> = stderr[at..].lines().collect();
    assert_eq!(after[1], "> authorization: ***", "{stderr}");
    assert!(after.iter().any(|line| line.starts_with("< HTTP/1.1 200")), "{stderr}");
    assert!(!stderr.contains(KEY), "{stderr}");
}

#[test]
fn plain_http_to_another_host_carries_no_secret_and_no_proxy_sees_it() {
    let emu = Emulator::start();
    let proxy = Collector::start(Answer::Status(502));
    let run = |headers: Option<&str>| {
        let mut command: Command = emu.command();
        command
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector.invalid:4318")
            .env("OTEL_EXPORTER_OTLP_TIMEOUT", "2000")
            .env("HTTP_PROXY", proxy.endpoint())
            .env("http_proxy", proxy.endpoint())
            .env("ALL_PROXY", proxy.endpoint())
            .env("ANALYST_HISTORY", "0")
            .args(["ask", "Revenue?"]);
        if let Some(headers) = headers {
            command.env("OTEL_EXPORTER_OTLP_HEADERS", headers);
        }
        command.output().unwrap()
    };
    // With a secret header: the export is off, said once.
    let with_key = run(Some(&format!("authorization={KEY}")));
    exits(&with_key, 0);
    let stderr = String::from_utf8_lossy(&with_key.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: warning: OTEL_EXPORTER_OTLP_ENDPOINT: refusing to send the collector's credentials over plain http:// to collector.invalid: use https:// (plain http goes to a collector only without secret headers, and never through a proxy); no spans are sent
message: [..]-message
chat: chat-0001

"#]],
    );
    // Without: sent directly (the host does not resolve), never to the proxy.
    let without = run(None);
    exits(&without, 0);
    let stderr = String::from_utf8_lossy(&without.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0002
analyst: warning: the spans were not sent to http://collector.invalid:4318/v1/traces: cannot connect to collector.invalid:4318: client error (Connect): dns error: failed to lookup address information: Name or service not known

"#]],
    );
    assert!(proxy.received().is_empty(), "the proxy saw {:?}", proxy.received());
    assert!(!everything(&with_key).contains(KEY));
}
