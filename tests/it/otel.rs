//! Turns and `check` runs as OpenTelemetry traces (`cli.md`, "Send turns
//! to your tracing system"), read back from a real receiver, Arize
//! Phoenix: names, parent links and attributes as the GenAI semantic
//! conventions have them, no content without the switch and content
//! redacted with it, nothing with `OTEL_SDK_DISABLED`; OTLP/JSON as the
//! specification writes it; and a collector that is down or silent
//! costing one warning line and the export's timeout at most, never the
//! exit code or stdout.

use std::io::Write;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::phoenix::Phoenix;
use crate::support::*;

/// A project of its own in the shared Phoenix.
fn project(name: &str) -> String {
    format!("{name}-{}", fastrand::u32(..))
}

/// The collector's key, which no span, note or output may show.
const COLLECTOR_KEY: &str = "phx-key-5b1f0c9e7a3d";

/// `command` sending its spans to `project` in Phoenix, with a key.
fn traced(mut command: std::process::Command, project: &str) -> std::process::Command {
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", Phoenix::shared().endpoint())
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            format!("authorization=Bearer%20{COLLECTOR_KEY}"),
        )
        .env(
            "OTEL_RESOURCE_ATTRIBUTES",
            format!("openinference.project.name={project}"),
        );
    command
}

/// The span named starting with `name`.
fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans
        .iter()
        .filter(|span| span["name"].as_str().is_some_and(|n| n.starts_with(name)))
        .collect()
}

fn id(span: &Value) -> &str {
    span["context"]["span_id"].as_str().unwrap()
}

#[test]
fn an_ask_turn_reaches_phoenix_as_invoke_agent_with_its_sql_calls() {
    let emu = Emulator::start();
    let project = project("ask");
    let output = traced(emu.command(), &project)
        .args(["ask", "What was revenue by month?"])
        .output()
        .unwrap();
    exits(&output, 0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("spans"), "no warning: {stderr}");
    let spans = Phoenix::shared().spans(&project, 2);
    let text = serde_json::to_string(&spans).unwrap();
    for secret in [COLLECTOR_KEY, API_KEY] {
        assert!(!text.contains(secret) && !stderr.contains(secret), "{secret}");
    }
    let [turn] = named(&spans, "invoke_agent ")[..] else {
        panic!("{text}")
    };
    let [tool] = named(&spans, "execute_tool ")[..] else {
        panic!("{text}")
    };
    assert_eq!(turn["name"], "invoke_agent acme/agents/agent-7");
    assert_eq!(turn["parent_id"], Value::Null);
    assert_eq!(tool["parent_id"], id(turn));
    assert_eq!(tool["context"]["trace_id"], turn["context"]["trace_id"]);
    let said = &turn["attributes"];
    assert_eq!(said["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(said["gen_ai.agent.id"], "agent-7");
    assert_eq!(said["gen_ai.conversation.id"], "chat-0001");
    assert_whole(
        stderr.to_string(),
        str![[r#"
message: [..]-message
chat: chat-0001

"#]],
    );
    assert_eq!(said["gen_ai.usage.input_tokens"], 1000);
    assert_eq!(said["gen_ai.usage.output_tokens"], 80);
    assert_eq!(said["gen_ai.response.model"], "m");
    assert_eq!(said["analyst.llm_calls"], 3);
    assert_eq!(said["analyst.exit_code"], 0);
    assert_eq!(said["analyst.stream.status"], "completed");
    let tool_said = &tool["attributes"];
    assert_eq!(tool_said["gen_ai.operation.name"], "execute_tool");
    assert_eq!(tool_said["analyst.rows_returned"], 12);
    assert_eq!(tool_said["analyst.truncated"], false);
    // Content is not sent without the switch.
    for content in [
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
    ] {
        assert!(!text.contains(content), "{content}: {text}");
    }
    assert!(!text.contains("revenue by month?"), "{text}");
}

#[test]
fn content_goes_only_with_the_switch_and_redacted() {
    let emu = Emulator::start();
    let project = project("content");
    let question = format!("Revenue by month? (my key is {API_KEY})");
    let output = traced(emu.command(), &project)
        .env("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
        .args(["ask", &question])
        .output()
        .unwrap();
    exits(&output, 0);
    let spans = Phoenix::shared().spans(&project, 2);
    let text = serde_json::to_string(&spans).unwrap();
    assert!(!text.contains(API_KEY), "{text}");
    let [turn] = named(&spans, "invoke_agent ")[..] else {
        panic!("{text}")
    };
    let input = turn["attributes"]["gen_ai.input.messages"].as_str().unwrap();
    let input: Value = serde_json::from_str(input).unwrap();
    let asked = input[0]["parts"][0]["content"].as_str().unwrap();
    assert!(
        asked.starts_with("Revenue by month? (my key is ") && !asked.contains(API_KEY),
        "{asked}"
    );
    let output = turn["attributes"]["gen_ai.output.messages"].as_str().unwrap();
    assert!(output.contains("assistant"), "{output}");
    let [tool] = named(&spans, "execute_tool ")[..] else {
        panic!("{text}")
    };
    assert!(
        tool["attributes"]["gen_ai.tool.call.arguments"]
            .as_str()
            .unwrap()
            .contains("SELECT"),
        "{tool}"
    );
}

#[test]
fn a_check_run_is_one_trace_of_the_run_its_cases_and_their_turns() {
    let emu = Emulator::start();
    let project = project("check");
    let suite = ScratchFile::new(
        "three.toml",
        "[[case]]\nname = \"one\"\nquestion = \"Revenue?\"\n\n[[case]]\nname = \"two\"\nquestion = \"Revenue by month?\"\n\n[[case]]\nname = \"three\"\nquestion = \"Orders?\"\nexpect_answer = \"never said\"\n",
    );
    let output = traced(emu.command(), &project)
        .args(["check", "--jobs", "2"])
        .arg(&*suite)
        .output()
        .unwrap();
    exits(&output, 9);
    let spans = Phoenix::shared().spans(&project, 1 + 3 + 3 + 3);
    let text = serde_json::to_string(&spans).unwrap();
    let [run] = named(&spans, "check ")[..] else {
        panic!("{text}")
    };
    assert_eq!(run["parent_id"], Value::Null);
    assert_eq!(
        (
            &run["attributes"]["analyst.passed"],
            &run["attributes"]["analyst.failed"]
        ),
        (&Value::from(2), &Value::from(1))
    );
    let cases = named(&spans, "case ");
    assert_eq!(cases.len(), 3, "{text}");
    for case in &cases {
        assert_eq!(case["parent_id"], id(run));
        assert_eq!(case["context"]["trace_id"], run["context"]["trace_id"]);
    }
    let three = cases.iter().find(|case| case["name"] == "case three").unwrap();
    assert_eq!(three["attributes"]["analyst.case.verdict"], "fail");
    assert_eq!(three["attributes"]["analyst.case.pass_rate"], 0.0);
    assert_eq!(three["status_code"], "ERROR");
    let turns = named(&spans, "invoke_agent ");
    assert_eq!(turns.len(), 3, "{text}");
    for turn in turns {
        assert!(cases.iter().any(|case| turn["parent_id"] == id(case)), "{turn}");
        assert_eq!(turn["attributes"]["analyst.command"], "check");
    }
}

#[test]
fn nothing_is_sent_with_otel_sdk_disabled() {
    let emu = Emulator::start();
    let project = project("disabled");
    let output = traced(emu.command(), &project)
        .env("OTEL_SDK_DISABLED", "true")
        .args(["ask", "Revenue?"])
        .output()
        .unwrap();
    exits(&output, 0);
    std::thread::sleep(Duration::from_secs(2));
    assert!(Phoenix::shared().spans_now(&project).is_empty());
}

/// A collector that takes connections and never answers.
fn silent_collector() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for connection in listener.incoming().flatten() {
            held.push(connection);
        }
    });
    port
}

#[test]
fn a_collector_down_or_silent_costs_one_warning_and_the_timeout_at_most() {
    let emu = Emulator::start();
    let plain = emu
        .command()
        .args(["ask", "-o", "csv", "Revenue by month?"])
        .output()
        .unwrap();
    exits(&plain, 0);
    let down = format!("http://127.0.0.1:{}", crate::support::browser::unused_port());
    let silent = format!("http://127.0.0.1:{}", silent_collector());
    for collector in [down, silent] {
        let started = Instant::now();
        let output = emu
            .command()
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector)
            .env("OTEL_EXPORTER_OTLP_HEADERS", format!("x-key={COLLECTOR_KEY}"))
            .env("OTEL_EXPORTER_OTLP_TIMEOUT", "1000")
            .args(["ask", "-o", "csv", "Revenue by month?"])
            .output()
            .unwrap();
        let took = started.elapsed();
        exits(&output, 0);
        assert_eq!(output.stdout, plain.stdout, "stdout as without spans");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let warnings: Vec<&str> = stderr.lines().filter(|line| line.contains("spans")).collect();
        assert_eq!(warnings.len(), 1, "{stderr}");
        assert!(
            warnings[0].contains(&format!("the spans were not sent to {collector}/v1/traces")),
            "{stderr}"
        );
        assert!(!stderr.contains(COLLECTOR_KEY), "{stderr}");
        assert!(took < Duration::from_secs(15), "{took:?}");
    }
}

#[test]
fn otlp_json_is_sent_as_the_specification_writes_it() {
    let emu = Emulator::start();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = std::thread::spawn(move || {
        let (mut connection, _) = listener.accept().unwrap();
        let request = read_request(&mut connection).unwrap();
        let _ =
            connection.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
        request
    });
    let config = ScratchFile::new("config.toml", "[prices.\"m\"]\ninput = 3.0\noutput = 15.0\n");
    let output = emu
        .command()
        .env(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            format!("http://127.0.0.1:{port}/custom/traces"),
        )
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("OTEL_SERVICE_NAME", "nightly-evals")
        .env("ANALYST_CONFIG", &*config)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_REPOSITORY", "acme/agents")
        .env("GITHUB_SHA", "4f2a9c81d7e6")
        .env("GITHUB_RUN_ID", "77")
        .args(["ask", "Revenue by month?"])
        .output()
        .unwrap();
    exits(&output, 0);
    let request = received.join().unwrap();
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/custom/traces")
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    let body = request.json();
    let resource = &body["resourceSpans"][0];
    let service = resource["resource"]["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|kv| kv["key"] == "service.name")
        .unwrap();
    assert_eq!(service["value"]["stringValue"], "nightly-evals");
    // The CI job, as the CICD and VCS conventions name it.
    let resource_attribute = |key: &str| {
        resource["resource"]["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|kv| kv["key"] == key)
            .map(|kv| kv["value"]["stringValue"].clone())
    };
    assert_eq!(
        resource_attribute("cicd.system"),
        None,
        "not in the conventions' registry"
    );
    assert_eq!(
        resource_attribute("analyst.ci.provider"),
        Some(Value::from("github-actions"))
    );
    assert_eq!(resource_attribute("vcs.provider.name"), Some(Value::from("github")));
    assert_eq!(
        resource_attribute("vcs.repository.name"),
        Some(Value::from("acme/agents"))
    );
    assert_eq!(
        resource_attribute("vcs.ref.head.revision"),
        Some(Value::from("4f2a9c81d7e6"))
    );
    assert_eq!(
        resource_attribute("cicd.pipeline.run.url.full"),
        Some(Value::from("https://github.com/acme/agents/actions/runs/77"))
    );
    let spans = resource["scopeSpans"][0]["spans"].as_array().unwrap();
    assert_eq!(spans.len(), 2);
    let turn = &spans[0];
    assert_eq!(turn["traceId"].as_str().unwrap().len(), 32);
    assert_eq!(turn["spanId"].as_str().unwrap().len(), 16);
    assert!(turn["startTimeUnixNano"].is_string() && turn["kind"] == 3, "{turn}");
    let tokens = turn["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|kv| kv["key"] == "gen_ai.usage.input_tokens")
        .unwrap();
    assert_eq!(tokens["value"]["intValue"], "1000");
    // Its cost at the config file's price: 1000 × 3 + 80 × 15 per million.
    let cost = turn["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|kv| kv["key"] == "analyst.cost_usd")
        .unwrap();
    assert!(
        (cost["value"]["doubleValue"].as_f64().unwrap() - 0.0042).abs() < 1e-12,
        "{cost}"
    );
    assert_eq!(spans[1]["parentSpanId"], turn["spanId"]);
}

#[test]
fn a_rows_query_is_an_execute_tool_span_with_its_rows() {
    let emu = Emulator::start();
    let project = project("rows");
    let output = traced(emu.command(), &project)
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .args([
            "rows",
            "--sql",
            "SELECT id, region FROM orders WHERE id <= 30 ORDER BY id LIMIT 30",
        ])
        .output()
        .unwrap();
    exits(&output, 0);
    let spans = Phoenix::shared().spans(&project, 1);
    let text = serde_json::to_string(&spans).unwrap();
    let [query] = named(&spans, "execute_tool data query")[..] else {
        panic!("{text}")
    };
    assert_eq!(query["attributes"]["analyst.command"], "rows");
    assert_eq!(query["attributes"]["analyst.rows_returned"], 30);
    assert!(!text.contains("SELECT") && !text.contains(DATA_SECRET), "{text}");
}

#[test]
fn doctor_calls_the_collector_and_config_list_says_where_it_came_from() {
    let doctor = |endpoint: &str| -> Vec<Value> {
        let output = analyst_process()
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
            .env("OTEL_EXPORTER_OTLP_HEADERS", format!("authorization={COLLECTOR_KEY}"))
            .args(["doctor", "-o", "json"])
            .output()
            .unwrap();
        assert!(!String::from_utf8_lossy(&output.stdout).contains(COLLECTOR_KEY));
        let findings: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
        findings
            .into_iter()
            .filter(|finding| finding["check"].as_str().unwrap().to_lowercase().contains("otlp"))
            .collect()
    };
    let up = doctor(&Phoenix::shared().endpoint());
    let checks: Vec<(&Value, &Value, &Value)> = up
        .iter()
        .map(|finding| (&finding["check"], &finding["result"], &finding["found"]))
        .collect();
    let endpoint = Value::from(format!("{}/v1/traces", Phoenix::shared().endpoint()));
    let (ok, set) = (Value::from("ok"), Value::from("set"));
    let answers = Value::from("took an export of no span");
    assert_eq!(
        checks,
        [
            (&Value::from("otlp endpoint"), &ok, &endpoint),
            (&Value::from("otlp headers"), &ok, &set),
            (&Value::from("OTLP collector answers"), &ok, &answers),
        ]
    );
    let down = doctor(&format!("http://127.0.0.1:{}", crate::support::browser::unused_port()));
    assert_eq!(
        (&down[2]["result"], &down[2]["exitCode"]),
        (&Value::from("failed"), &Value::from(6))
    );

    // The profile's otlp_endpoint, named as its origin.
    let config = ScratchFile::new(
        "config.toml",
        "default = \"ci\"\n[profiles.ci]\notlp_endpoint = \"http://collector.example:4318\"\n",
    );
    let listed = analyst_process()
        .env("ANALYST_CONFIG", &*config)
        .env("COLUMNS", "200")
        .args(["config", "list"])
        .output()
        .unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    let row = listed
        .lines()
        .find(|line| line.contains("otlp endpoint"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(
        row.contains("http://collector.example:4318/v1/traces") && row.contains("otlp_endpoint of profile ci"),
        "{row}"
    );
}

#[test]
fn spans_a_collector_missed_are_kept_and_history_push_delivers_them_once() {
    let emu = Emulator::start();
    let project = project("push");
    let folder = Scratch::new();
    let db = folder.join("history.db");
    let down = format!("http://127.0.0.1:{}", crate::support::browser::unused_port());
    let with_collector = |mut command: std::process::Command, endpoint: &str| {
        command
            .env("ANALYST_HISTORY_DB", &db)
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
            .env(
                "OTEL_RESOURCE_ATTRIBUTES",
                format!("openinference.project.name={project}"),
            );
        command
    };
    // The collector is down: the command is not, and keeps its spans.
    let output = with_collector(emu.command(), &down)
        .args(["ask", "Revenue by month?"])
        .output()
        .unwrap();
    exits(&output, 0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warnings: Vec<&str> = stderr.lines().filter(|line| line.contains("spans")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].ends_with("; kept in the history for 'analyst history push'"),
        "{stderr}"
    );
    let push = |endpoint: &str| {
        with_collector(analyst_process(), endpoint)
            .args(["history", "push"])
            .output()
            .unwrap()
    };
    // Still down: nothing delivered, the spans kept, exit 6.
    let refused = push(&down);
    exits(&refused, 6);
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("pushed 0 span(s) in 0 request(s)"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(Phoenix::shared().spans_now(&project).is_empty());
    // Up again: delivered, once.
    let pushed = push(&Phoenix::shared().endpoint());
    exits(&pushed, 0);
    let said = String::from_utf8_lossy(&pushed.stderr);
    assert!(
        said.contains("pushed 2 span(s) in 1 request(s)") && said.contains("0 request(s) left"),
        "{said}"
    );
    let spans = Phoenix::shared().spans(&project, 2);
    assert_eq!(spans.len(), 2);
    assert_eq!(named(&spans, "invoke_agent ").len(), 1);
    let again = push(&Phoenix::shared().endpoint());
    exits(&again, 0);
    assert!(String::from_utf8_lossy(&again.stderr).contains("pushed 0 span(s) in 0 request(s)"));
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(Phoenix::shared().spans_now(&project).len(), 2, "nothing sent twice");
}

#[test]
fn the_readmes_phoenix_screenshot_is_a_check_runs_trace() {
    let emu = Emulator::start();
    let project = project("screenshot");
    let suite = ScratchFile::new(
        "smoke.toml",
        "[[case]]\nname = \"revenue by month\"\nquestion = \"What was our revenue by month?\"\n\n[[case]]\nname = \"revenue\"\nquestion = \"Revenue?\"\n\n[[case]]\nname = \"orders\"\nquestion = \"Orders?\"\nexpect_answer = \"never said\"\n",
    );
    // From its folder, so that the trace names the suite as a team would.
    let output = traced(emu.command(), &project)
        .current_dir(suite.parent().unwrap())
        .args(["check", "--jobs", "1", "smoke.toml"])
        .output()
        .unwrap();
    exits(&output, 9);
    let phoenix = Phoenix::shared();
    let spans = phoenix.spans(&project, 10);
    let [run] = named(&spans, "check ")[..] else {
        panic!("{spans:?}")
    };
    let trace = run["context"]["trace_id"].as_str().unwrap();
    let url = format!(
        "{}/projects/{}/traces/{trace}",
        phoenix.endpoint(),
        phoenix.project_id(&project)
    );
    let shot = crate::support::browser::chromium_page_screenshot(&url, 1400, 900);
    assert!(shot.starts_with(b"\x89PNG\r\n\x1a\n"));
    let committed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/phoenix-trace.png");
    if crate::support::overwriting() {
        std::fs::write(&committed, &shot).unwrap();
    }
    assert!(
        committed.exists(),
        "SNAPSHOTS=overwrite cargo test --test it otel::the_readmes_phoenix_screenshot"
    );
}
