//! The OTLP trace messages `analyst` sends, as OpenTelemetry's protobuf
//! definitions (`opentelemetry-proto`, `collector/trace/v1`, `trace/v1`,
//! `resource/v1`, `common/v1`) declare them: the same field numbers and
//! types, the fields `analyst` never sets left out (a receiver reads them
//! as their defaults). Encoded with `prost`.

/// `ExportTraceServiceRequest`: what `POST /v1/traces` takes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ExportTraceServiceRequest {
    /// Spans, by the resource that made them.
    #[prost(message, repeated, tag = "1")]
    pub resource_spans: Vec<ResourceSpans>,
}

/// `ResourceSpans`: a resource and its spans.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResourceSpans {
    /// The process that made the spans.
    #[prost(message, optional, tag = "1")]
    pub resource: Option<Resource>,
    /// Its spans, by instrumentation scope.
    #[prost(message, repeated, tag = "2")]
    pub scope_spans: Vec<ScopeSpans>,
    /// The semantic conventions' schema the attributes follow.
    #[prost(string, tag = "3")]
    pub schema_url: String,
}

/// `Resource`: what made the spans, as attributes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Resource {
    /// `service.name` and the others.
    #[prost(message, repeated, tag = "1")]
    pub attributes: Vec<KeyValue>,
}

/// `ScopeSpans`: the spans of one instrumentation scope.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ScopeSpans {
    /// The instrumentation: `analyst` and its version.
    #[prost(message, optional, tag = "1")]
    pub scope: Option<InstrumentationScope>,
    /// The spans.
    #[prost(message, repeated, tag = "2")]
    pub spans: Vec<Span>,
    /// The semantic conventions' schema the attributes follow.
    #[prost(string, tag = "3")]
    pub schema_url: String,
}

/// `InstrumentationScope`: the library that made the spans.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InstrumentationScope {
    /// Its name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Its version.
    #[prost(string, tag = "2")]
    pub version: String,
}

/// `Span`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Span {
    /// 16 bytes.
    #[prost(bytes = "vec", tag = "1")]
    pub trace_id: Vec<u8>,
    /// 8 bytes.
    #[prost(bytes = "vec", tag = "2")]
    pub span_id: Vec<u8>,
    /// The parent's span id; empty for a root span.
    #[prost(bytes = "vec", tag = "4")]
    pub parent_span_id: Vec<u8>,
    /// Its name.
    #[prost(string, tag = "5")]
    pub name: String,
    /// `SpanKind`: 1 internal, 3 client.
    #[prost(int32, tag = "6")]
    pub kind: i32,
    /// When it started, nanoseconds since the Unix epoch.
    #[prost(fixed64, tag = "7")]
    pub start_time_unix_nano: u64,
    /// When it ended.
    #[prost(fixed64, tag = "8")]
    pub end_time_unix_nano: u64,
    /// What it says.
    #[prost(message, repeated, tag = "9")]
    pub attributes: Vec<KeyValue>,
    /// How it ended.
    #[prost(message, optional, tag = "15")]
    pub status: Option<Status>,
}

/// `Status`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Status {
    /// Why it failed.
    #[prost(string, tag = "2")]
    pub message: String,
    /// `StatusCode`: 0 unset, 1 ok, 2 error.
    #[prost(int32, tag = "3")]
    pub code: i32,
}

/// `KeyValue`: an attribute.
#[derive(Clone, PartialEq, prost::Message)]
pub struct KeyValue {
    /// Its name.
    #[prost(string, tag = "1")]
    pub key: String,
    /// Its value.
    #[prost(message, optional, tag = "2")]
    pub value: Option<AnyValue>,
}

/// `AnyValue`: one of the value types.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AnyValue {
    /// The value.
    #[prost(oneof = "Value", tags = "1, 2, 3, 4, 5")]
    pub value: Option<Value>,
}

/// `AnyValue.value`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Value {
    /// `string_value`.
    #[prost(string, tag = "1")]
    String(String),
    /// `bool_value`.
    #[prost(bool, tag = "2")]
    Bool(bool),
    /// `int_value`.
    #[prost(int64, tag = "3")]
    Int(i64),
    /// `double_value`.
    #[prost(double, tag = "4")]
    Double(f64),
    /// `array_value`.
    #[prost(message, tag = "5")]
    Array(ArrayValue),
}

/// `ArrayValue`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ArrayValue {
    /// The values.
    #[prost(message, repeated, tag = "1")]
    pub values: Vec<AnyValue>,
}
