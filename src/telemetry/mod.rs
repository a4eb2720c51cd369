//! Turns and `check` runs as OpenTelemetry traces, for the tracing system
//! a team already runs: spans named as the GenAI semantic conventions
//! ([`CONVENTIONS`]) name an agent's work — a turn an `invoke_agent` span,
//! each SQL call a child `execute_tool` span, a `check` run a span with a
//! child per case holding its turns — collected while the command runs
//! ([`Spans`]) and sent once at its end over OTLP/HTTP ([`send`]),
//! protobuf or JSON, within the export timeout. Questions, answers and SQL
//! are content: in a span only when the conventions' switch says so, and
//! then redacted as every output is.

pub mod proto;

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use prost::Message;
use serde_json::{json, Value as Json};
use url::Url;

use crate::domain::{without_credentials, Agent, Prices};
use crate::error::{fail, kind_of, status_of, Fault, Kind, SUCCESS};
use crate::history::{History, Recording, TurnRecord};
use crate::net::http::{Credential, Http, Peer, Request, Retry};
use crate::output::Notes;
use crate::redact::{redact, Secret};
use proto::{AnyValue, KeyValue, Value};

/// The version of OpenTelemetry's semantic conventions the spans follow.
pub const CONVENTIONS: &str = "1.37.0";

/// Where and how spans are sent: the standard `OTEL_*` variables (or the
/// config file's `otlp_endpoint`), resolved by the settings.
#[derive(Clone, Debug)]
pub struct OtlpSettings {
    /// Where `POST` goes: the traces endpoint (`…/v1/traces`).
    pub endpoint: Url,
    /// `OTEL_EXPORTER_OTLP_HEADERS`: a collector's key, kept secret.
    pub headers: Vec<(String, Secret)>,
    /// `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`: JSON rather than protobuf.
    pub json: bool,
    /// `OTEL_EXPORTER_OTLP_TIMEOUT`: the most the export may take.
    pub timeout: Duration,
    /// `OTEL_SERVICE_NAME` (`analyst`).
    pub service_name: String,
    /// `OTEL_RESOURCE_ATTRIBUTES`, then the CI job's.
    pub resource: Vec<(String, String)>,
    /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`: questions,
    /// answers and SQL go in the spans (redacted).
    pub capture_content: bool,
    /// The config file's `[prices]`: a turn's cost.
    pub prices: Prices,
}

/// A span's place in its trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpanIds {
    /// The trace's id.
    pub trace: [u8; 16],
    /// The span's own id.
    pub span: [u8; 8],
}

impl SpanIds {
    /// A span that starts a trace of its own.
    pub fn root() -> SpanIds {
        SpanIds {
            trace: fastrand::u128(1..).to_be_bytes(),
            span: fastrand::u64(1..).to_be_bytes(),
        }
    }

    /// A new span in this one's trace.
    pub fn child(&self) -> SpanIds {
        SpanIds {
            trace: self.trace,
            span: fastrand::u64(1..).to_be_bytes(),
        }
    }
}

/// An attribute's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    /// Text.
    Text(String),
    /// A whole number.
    Int(i64),
    /// A number.
    Float(f64),
    /// Yes or no.
    Bool(bool),
    /// A list of texts.
    Texts(Vec<String>),
}

/// One finished span.
#[derive(Clone, Debug)]
pub struct SpanData {
    /// Its trace and id.
    pub ids: SpanIds,
    /// Its parent's id; `None` for a trace's root.
    pub parent: Option<[u8; 8]>,
    /// `invoke_agent AGENT`, `execute_tool TOOL`, …
    pub name: String,
    /// A call to the service (client), else work of its own (internal).
    pub client: bool,
    /// When it started.
    pub start: SystemTime,
    /// When it ended.
    pub end: SystemTime,
    /// What it says.
    pub attributes: Vec<(&'static str, Attr)>,
    /// Why it failed (`error.type` says what kind).
    pub error: Option<String>,
}

impl SpanData {
    /// The message id of the turn it describes, when it describes one.
    pub fn message_id(&self) -> Option<&str> {
        self.attributes.iter().find_map(|(key, value)| match (*key, value) {
            ("analyst.message.id", Attr::Text(id)) => Some(id.as_str()),
            _ => None,
        })
    }
}

/// The spans a command collects until it ends (shared by `check`'s jobs).
pub struct Spans {
    /// How they are sent, and what they may hold.
    pub settings: OtlpSettings,
    collected: Mutex<Vec<SpanData>>,
}

impl Spans {
    /// Nothing collected yet.
    pub fn new(settings: OtlpSettings) -> Spans {
        Spans {
            settings,
            collected: Mutex::new(Vec::new()),
        }
    }

    /// Adds finished spans.
    pub fn add(&self, spans: impl IntoIterator<Item = SpanData>) {
        self.collected.lock().unwrap_or_else(|e| e.into_inner()).extend(spans);
    }

    /// Every span collected, taken.
    pub fn take(&self) -> Vec<SpanData> {
        std::mem::take(&mut *self.collected.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The spans of a turn that ended at `ended` with `record`, as a child
    /// of `parent` (a `check` case) or a trace of its own: `invoke_agent`,
    /// with an `execute_tool` child per SQL call, each ending when its
    /// result arrived (`tool_ends`, from the turn's start) and starting
    /// when the step before it ended (the stream does not say when a call
    /// began).
    pub fn add_turn(&self, record: &TurnRecord, tool_ends: &[Duration], ended: SystemTime, parent: Option<SpanIds>) {
        let total = Duration::from_millis(record.total_ms);
        let start = ended.checked_sub(total).unwrap_or(ended);
        let ids = parent.map_or_else(SpanIds::root, |parent| parent.child());
        let agent = record.chat_url.as_deref().and_then(Agent::of);
        let (agent_id, agent_name) = (
            agent.as_ref().map(|agent| agent.id.clone()),
            agent.map(|agent| agent.name()),
        );
        let content = self.settings.capture_content;
        let mut attributes = vec![
            ("gen_ai.operation.name", Attr::Text("invoke_agent".into())),
            ("gen_ai.provider.name", Attr::Text("cube".into())),
            ("analyst.command", Attr::Text(record.command.clone())),
            ("analyst.stream.status", Attr::Text(record.status.clone())),
            ("analyst.exit_code", Attr::Int(i64::from(record.exit_code))),
        ];
        let mut optional = |key: &'static str, value: Option<Attr>| {
            if let Some(value) = value {
                attributes.push((key, value));
            }
        };
        optional("gen_ai.agent.id", agent_id.map(Attr::Text));
        optional("gen_ai.agent.name", agent_name.clone().map(Attr::Text));
        optional("gen_ai.conversation.id", record.chat_id.clone().map(Attr::Text));
        optional("analyst.message.id", record.message_id.clone().map(Attr::Text));
        optional("analyst.identity", record.identity.clone().map(Attr::Text));
        optional("analyst.suite", record.suite.clone().map(Attr::Text));
        optional("analyst.case", record.case.clone().map(Attr::Text));
        optional(
            "analyst.time_to_first_byte",
            record.first_byte_ms.map(|ms| Attr::Float(ms as f64 / 1000.0)),
        );
        if let Some(usage) = &record.usage {
            let counts = usage.counts;
            optional("gen_ai.response.model", usage.models.first().cloned().map(Attr::Text));
            optional(
                "analyst.models",
                (!usage.models.is_empty()).then(|| Attr::Texts(usage.models.clone())),
            );
            for (key, count) in [
                ("gen_ai.usage.input_tokens", counts.input_tokens),
                ("gen_ai.usage.output_tokens", counts.output_tokens),
                ("gen_ai.usage.cache_read.input_tokens", counts.cache_read_tokens),
                ("gen_ai.usage.cache_creation.input_tokens", counts.cache_write_tokens),
                ("analyst.usage.total_tokens", counts.total_tokens),
                ("analyst.llm_calls", counts.llm_calls),
            ] {
                optional(key, Some(Attr::Int(count as i64)));
            }
            optional("analyst.cost_usd", self.settings.prices.turn(usage).map(Attr::Float));
        }
        if content {
            optional(
                "gen_ai.input.messages",
                record.question.as_deref().map(|q| messages("user", q)),
            );
            optional(
                "gen_ai.output.messages",
                record.answer.as_deref().map(|a| messages("assistant", a)),
            );
        }
        let error = (record.exit_code != SUCCESS).then(|| format!("{} (exit {})", record.status, record.exit_code));
        if error.is_some() {
            attributes.push(("error.type", Attr::Text(record.status.clone())));
        }
        let mut spans = vec![SpanData {
            ids,
            parent: parent.map(|parent| parent.span),
            name: format!("invoke_agent {}", agent_name.as_deref().unwrap_or("agent")),
            client: true,
            start,
            end: ended,
            attributes,
            error,
        }];
        let first_byte = Duration::from_millis(record.first_byte_ms.unwrap_or(0));
        let mut step_ended = first_byte;
        for (index, query) in record.queries.iter().enumerate() {
            let ended_at = tool_ends.get(index).copied().unwrap_or(total).min(total);
            let began = step_ended.min(ended_at);
            step_ended = ended_at;
            // The tool's name: its title is the agent's prose, content.
            let tool = match query.tool.is_empty() {
                true => "sql".to_string(),
                false => query.tool.clone(),
            };
            let mut attributes = vec![
                ("gen_ai.operation.name", Attr::Text("execute_tool".into())),
                ("gen_ai.tool.name", Attr::Text(tool.clone())),
                ("gen_ai.tool.type", Attr::Text("datastore".into())),
                ("analyst.rows_returned", Attr::Int(query.rows_returned as i64)),
            ];
            if let Some(total_rows) = query.total_rows {
                attributes.push(("analyst.total_rows", Attr::Int(total_rows as i64)));
                attributes.push(("analyst.truncated", Attr::Bool(total_rows > query.rows_returned)));
            }
            if let (true, Some(sql)) = (content, &query.sql) {
                attributes.push(("gen_ai.tool.call.arguments", Attr::Text(redact(sql).into_owned())));
            }
            if let (true, Some(title)) = (content, &query.title) {
                attributes.push(("analyst.tool.title", Attr::Text(title.clone())));
            }
            if query.error.is_some() {
                attributes.push(("error.type", Attr::Text("query_error".into())));
            }
            spans.push(SpanData {
                ids: ids.child(),
                parent: Some(ids.span),
                name: format!("execute_tool {tool}"),
                client: false,
                start: start + began,
                end: start + ended_at,
                attributes,
                error: query
                    .error
                    .as_deref()
                    .map(|error| self.content_or(error, "the query failed")),
            });
        }
        self.add(spans);
    }
}

impl Spans {
    /// What a span's status says of a failure: its text (`message`,
    /// redacted) when content is captured, else only `what` failed — an
    /// error text quotes SQL and answers.
    pub fn content_or(&self, message: &str, what: &str) -> String {
        match self.settings.capture_content {
            true => redact(message).into_owned(),
            false => what.to_string(),
        }
    }

    /// The span of `rows`' query through the data query API, from `start`
    /// to now: an `execute_tool` of its own trace, with the rows it
    /// fetched and the requests it took, or why it failed.
    pub fn add_query(&self, sql: &str, fetched: std::result::Result<(u64, u64), String>, start: SystemTime) {
        let mut attributes = vec![
            ("gen_ai.operation.name", Attr::Text("execute_tool".into())),
            ("gen_ai.tool.name", Attr::Text("data query".into())),
            ("gen_ai.tool.type", Attr::Text("datastore".into())),
            ("analyst.command", Attr::Text("rows".into())),
        ];
        if let Ok((rows, requests)) = &fetched {
            attributes.push(("analyst.rows_returned", Attr::Int(*rows as i64)));
            attributes.push(("analyst.requests", Attr::Int(*requests as i64)));
        }
        if self.settings.capture_content {
            attributes.push(("gen_ai.tool.call.arguments", Attr::Text(redact(sql).into_owned())));
        }
        let error = fetched.err().map(|error| self.content_or(&error, "the query failed"));
        if error.is_some() {
            attributes.push(("error.type", Attr::Text("query_error".into())));
        }
        self.add([SpanData {
            ids: SpanIds::root(),
            parent: None,
            name: "execute_tool data query".into(),
            client: true,
            start,
            end: SystemTime::now(),
            attributes,
            error,
        }]);
    }
}

/// A message as the conventions' `gen_ai.*.messages` hold it (JSON text),
/// redacted.
fn messages(role: &str, text: &str) -> Attr {
    let message = json!([{ "role": role, "parts": [{ "type": "text", "content": redact(text) }] }]);
    Attr::Text(message.to_string())
}

/// Nanoseconds since the Unix epoch.
fn nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64)
}

fn any_value(attr: &Attr) -> AnyValue {
    let value = match attr {
        Attr::Text(text) => Value::String(redact(text).into_owned()),
        Attr::Int(number) => Value::Int(*number),
        Attr::Float(number) => Value::Double(*number),
        Attr::Bool(yes) => Value::Bool(*yes),
        Attr::Texts(texts) => Value::Array(proto::ArrayValue {
            values: texts.iter().map(|text| any_value(&Attr::Text(text.clone()))).collect(),
        }),
    };
    AnyValue { value: Some(value) }
}

fn key_value(key: &str, attr: &Attr) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: Some(any_value(attr)),
    }
}

/// The request that carries `spans` from the resource `settings` name.
pub fn request(settings: &OtlpSettings, spans: &[SpanData]) -> proto::ExportTraceServiceRequest {
    let schema = format!("https://opentelemetry.io/schemas/{CONVENTIONS}");
    let mut resource = vec![
        key_value("service.name", &Attr::Text(settings.service_name.clone())),
        key_value("service.version", &Attr::Text(env!("CARGO_PKG_VERSION").into())),
        key_value("telemetry.sdk.name", &Attr::Text("analyst".into())),
        key_value("telemetry.sdk.language", &Attr::Text("rust".into())),
    ];
    resource.extend(
        settings
            .resource
            .iter()
            .filter(|(key, _)| key != "service.name")
            .map(|(key, value)| key_value(key, &Attr::Text(value.clone()))),
    );
    let spans = spans
        .iter()
        .map(|span| proto::Span {
            trace_id: span.ids.trace.to_vec(),
            span_id: span.ids.span.to_vec(),
            parent_span_id: span.parent.map(|parent| parent.to_vec()).unwrap_or_default(),
            name: redact(&span.name).into_owned(),
            kind: if span.client { 3 } else { 1 },
            start_time_unix_nano: nanos(span.start),
            end_time_unix_nano: nanos(span.end).max(nanos(span.start)),
            attributes: span.attributes.iter().map(|(key, attr)| key_value(key, attr)).collect(),
            status: Some(match &span.error {
                Some(message) => proto::Status {
                    message: redact(message).into_owned(),
                    code: 2,
                },
                None => proto::Status {
                    message: String::new(),
                    code: 0,
                },
            }),
        })
        .collect();
    proto::ExportTraceServiceRequest {
        resource_spans: vec![proto::ResourceSpans {
            resource: Some(proto::Resource { attributes: resource }),
            scope_spans: vec![proto::ScopeSpans {
                scope: Some(proto::InstrumentationScope {
                    name: "analyst".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                }),
                spans,
                schema_url: schema.clone(),
            }],
            schema_url: schema,
        }],
    }
}

/// The request as OTLP/JSON: ids in hex, 64-bit numbers as strings, enums
/// as numbers, field names in lower camel case.
pub fn request_json(request: &proto::ExportTraceServiceRequest) -> Json {
    fn value(any: &AnyValue) -> Json {
        match &any.value {
            Some(Value::String(text)) => json!({ "stringValue": text }),
            Some(Value::Bool(yes)) => json!({ "boolValue": yes }),
            Some(Value::Int(number)) => json!({ "intValue": number.to_string() }),
            Some(Value::Double(number)) => json!({ "doubleValue": number }),
            Some(Value::Array(array)) => {
                json!({ "arrayValue": { "values": array.values.iter().map(value).collect::<Vec<_>>() } })
            }
            None => json!({}),
        }
    }
    let attributes = |attributes: &[KeyValue]| -> Json {
        attributes
            .iter()
            .map(|kv| json!({ "key": kv.key, "value": kv.value.as_ref().map_or(json!({}), value) }))
            .collect()
    };
    let hex = |bytes: &[u8]| bytes.iter().map(|byte| format!("{byte:02x}")).collect::<String>();
    let resource_spans: Vec<Json> = request
        .resource_spans
        .iter()
        .map(|resource_spans| {
            let scope_spans: Vec<Json> = resource_spans
                .scope_spans
                .iter()
                .map(|scope_spans| {
                    let spans: Vec<Json> = scope_spans
                        .spans
                        .iter()
                        .map(|span| {
                            json!({
                                "traceId": hex(&span.trace_id),
                                "spanId": hex(&span.span_id),
                                "parentSpanId": hex(&span.parent_span_id),
                                "name": span.name,
                                "kind": span.kind,
                                "startTimeUnixNano": span.start_time_unix_nano.to_string(),
                                "endTimeUnixNano": span.end_time_unix_nano.to_string(),
                                "attributes": attributes(&span.attributes),
                                "status": span.status.as_ref().map_or(json!({}), |status| json!({ "message": status.message, "code": status.code })),
                            })
                        })
                        .collect();
                    let scope = scope_spans.scope.as_ref();
                    json!({
                        "scope": { "name": scope.map(|s| s.name.as_str()), "version": scope.map(|s| s.version.as_str()) },
                        "spans": spans,
                        "schemaUrl": scope_spans.schema_url,
                    })
                })
                .collect();
            json!({
                "resource": { "attributes": attributes(resource_spans.resource.as_ref().map_or(&[][..], |r| r.attributes.as_slice())) },
                "scopeSpans": scope_spans,
                "schemaUrl": resource_spans.schema_url,
            })
        })
        .collect();
    json!({ "resourceSpans": resource_spans })
}

/// Sends an export of no span (what `doctor` asks a collector): a
/// receiver answers it as any other and stores nothing.
pub fn export_nothing(settings: &OtlpSettings, http: &Http) -> Result<()> {
    send(settings, http, &proto::ExportTraceServiceRequest::default())
}

/// A request as kept for a later push (protobuf).
pub fn encode(request: &proto::ExportTraceServiceRequest) -> Vec<u8> {
    request.encode_to_vec()
}

/// A request kept by [`encode`].
pub fn decode(kept: &[u8]) -> Result<proto::ExportTraceServiceRequest> {
    proto::ExportTraceServiceRequest::decode(kept)
        .map_err(|err| fail(Kind::Usage, format!("a kept export of spans cannot be read: {err}")))
}

/// Sends `request` to the collector as protobuf or OTLP/JSON, in one try
/// of at most `settings.timeout` through the one way out (which also
/// bounds it by what `--timeout` has left and ends it at a signal): `Err`
/// (one line, no secret) when it could not be reached or refused it, or
/// the stop that ended the wait.
pub fn send(settings: &OtlpSettings, http: &Http, request: &proto::ExportTraceServiceRequest) -> Result<()> {
    let (body, content_type) = match settings.json {
        true => (request_json(request).to_string().into_bytes(), "application/json"),
        false => (request.encode_to_vec(), "application/x-protobuf"),
    };
    let credential = match settings.headers.is_empty() {
        true => Credential::None,
        false => Credential::Headers(settings.headers.clone()),
    };
    let request = Request {
        url: settings.endpoint.clone(),
        peer: Peer::Collector,
        credential,
        body: body.into(),
        content_type,
        accept: "*/*",
        retry: Retry::once(settings.timeout),
        cleanup: false,
    };
    http.send(&request).map(drop).map_err(|err| {
        let kind = match kind_of(&err) {
            kind if kind.stops_the_chat() => kind,
            _ => Kind::Unreachable,
        };
        let message = format!(
            "the spans were not sent to {}: {err:#}",
            without_credentials(settings.endpoint.as_str())
        );
        let fault = Fault::new(kind, message);
        match status_of(&err) {
            Some(status) => fault.answered(status).into(),
            None => fault.into(),
        }
    })
}

/// Sends the spans collected in `spans` (those not sent yet) at the end of
/// what owns them (a turn, a run, a query), through the one way out:
/// within the export's timeout and what `--timeout` has left, ended at
/// once by a signal. A collector that cannot take them is one warning,
/// never the command's exit code or output; with the history on
/// (`recording`), what it did not take is kept there for `analyst history
/// push`. `Err` only for a signal that came (the command then ends as the
/// signal says).
pub fn export(
    spans: &Spans,
    connect_timeout: Duration,
    notes: &Notes,
    recording: Option<&Recording>,
) -> std::result::Result<(), Fault> {
    let collected = spans.take();
    if collected.is_empty() {
        return Ok(());
    }
    let request = request(&spans.settings, &collected);
    let sent =
        Http::new(connect_timeout.min(spans.settings.timeout)).and_then(|http| send(&spans.settings, &http, &request));
    let Err(err) = sent else { return Ok(()) };
    let kept = recording.map(|recording| {
        let message_ids: Vec<String> = collected
            .iter()
            .filter_map(|span| span.message_id().map(str::to_string))
            .collect();
        History::open(&recording.db)
            .and_then(|history| history.keep_unsent(collected.len(), &encode(&request), &message_ids))
    });
    match kept {
        Some(Ok(())) => notes.warn(&format!("{err:#}; kept in the history for 'analyst history push'")),
        Some(Err(why)) => notes.warn(&format!("{err:#}; not kept either: {why:#}")),
        None => notes.warn(&format!("{err:#}")),
    }
    match crate::signals::received() {
        Some(signal) => Err(signal.fault()),
        None => Ok(()),
    }
}
