//! One typed struct per stream line, read by [`scan`](super::scan) with
//! only the fields a renderer needs. Strings are borrowed from the line where
//! they have no escapes; values no renderer reads in full (like
//! `state.messages` of a large `__state__` line) are checked and kept as
//! [`Raw`] text. Unknown fields are checked and ignored.

use std::borrow::Cow;

use serde_json::Value;

use super::scan::{Kind, ScanError, Scanner};
use crate::results::ResultHead;

/// The id of the initial state message that carries `state.chatId`.
pub const CUTOFF_ID: &str = "__cutoff__";
/// The id of the final state message that carries `state.messages`.
pub const STATE_ID: &str = "__state__";
/// The id of the message a newer service sends after an abort.
pub const ABORTED_ID: &str = "__aborted__";
/// The id of the message sent when the server restarted mid-answer.
pub const SUSPENDED_ID: &str = "__suspended__";
/// The id of the token-usage message, the last line when present.
pub const USAGE_ID: &str = "__usage__";

/// The text of one JSON value of a line, checked but not parsed (never
/// `null`: a `null` field is absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raw<'a>(&'a str);

impl<'a> Raw<'a> {
    /// The value's JSON text.
    pub fn get(&self) -> &'a str {
        self.0
    }
}

/// A line of the chat stream (API document 2.3, plus the service's extra
/// special ids and `{"error": …}` lines). A field that is `null` on the
/// wire is `None`.
#[derive(Debug, Default)]
pub struct Message<'a> {
    /// Message id; tool-call start and result share one.
    pub id: Option<Cow<'a, str>>,
    /// `user` or `assistant`.
    pub role: Option<Cow<'a, str>>,
    /// Text: a chunk when `isDelta` is true, the whole text otherwise.
    pub content: Option<Cow<'a, str>>,
    /// Whether the line carries the agent's reasoning (its text is not kept).
    pub thinking: bool,
    /// A tool call (start or result), boxed as it is rare.
    pub tool_call: Option<Box<ToolCall<'a>>>,
    /// Whether `graphPath` marks the final consolidated answer: an array
    /// whose first element is `final`, of length at most 2.
    pub final_node: bool,
    /// Whether `content` is an increment.
    pub is_delta: Option<bool>,
    /// Whether the message is still being generated.
    pub is_in_process: Option<bool>,
    /// The fields only special lines carry, boxed so that the common
    /// message stays small to move; `None` when the line has none of them.
    pub special: Option<Box<Special<'a>>>,
}

/// The fields of special lines (`__cutoff__`, `__state__`, `__usage__`,
/// `__suspended__`, `{"error": …}`).
#[derive(Debug, Default)]
pub struct Special<'a> {
    /// State object of `__cutoff__` / `__state__`, parsed only when needed.
    pub state: Option<Raw<'a>>,
    /// An in-stream error (`{"error": …}`), or the text of `__suspended__`.
    pub error: Option<Raw<'a>>,
    /// Token usage of `__usage__`.
    pub usage: Option<Raw<'a>>,
    /// For `__suspended__`: the message to resend.
    pub message_id: Option<Cow<'a, str>>,
}

/// The `toolCall` object (API document 2.4). `input` and `result` are
/// JSON-encoded strings on the wire; both are kept raw until needed.
#[derive(Debug, Default)]
pub struct ToolCall<'a> {
    /// Tool name, e.g. `semanticSqlApi` or `cubeSqlApi`.
    pub name: Option<Cow<'a, str>>,
    /// Tool input (a JSON string, or JSON directly).
    pub input: Option<Raw<'a>>,
    /// Tool result, present when the call is complete.
    pub result: Option<Raw<'a>>,
    /// The result decoded (every field, its rows only when asked for), read
    /// with the line so that either parsing thread does it. A transcript
    /// takes it out when it folds the message in.
    pub head: Option<ResultHead>,
}

/// Why a line could not be read as a message.
#[derive(Debug)]
pub enum ParseError {
    /// Not JSON, or JSON of the wrong shape; the text says what.
    Invalid(String),
    /// JSON, but not an object (an array, a number…).
    NotAnObject,
}

impl From<ScanError> for ParseError {
    fn from(err: ScanError) -> Self {
        ParseError::Invalid(err.to_string())
    }
}

/// The fields of a line that [`Message`] reads; any other is skipped.
#[derive(Clone, Copy)]
enum Field {
    Id,
    Role,
    Content,
    Thinking,
    ToolCall,
    GraphPath,
    IsDelta,
    IsInProcess,
    State,
    Error,
    Usage,
    MessageId,
}

impl Field {
    const ALL: [Field; 12] = [
        Field::Id,
        Field::Role,
        Field::Content,
        Field::Thinking,
        Field::ToolCall,
        Field::GraphPath,
        Field::IsDelta,
        Field::IsInProcess,
        Field::State,
        Field::Error,
        Field::Usage,
        Field::MessageId,
    ];

    /// The field a key names, if `Message` reads it (by [`Field::name`], the
    /// one table of names).
    fn named(key: &str) -> Option<Field> {
        Field::ALL.into_iter().find(|field| field.name() == key)
    }

    /// The key on the wire.
    fn name(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Role => "role",
            Field::Content => "content",
            Field::Thinking => "thinking",
            Field::ToolCall => "toolCall",
            Field::GraphPath => "graphPath",
            Field::IsDelta => "isDelta",
            Field::IsInProcess => "isInProcess",
            Field::State => "state",
            Field::Error => "error",
            Field::Usage => "usage",
            Field::MessageId => "messageId",
        }
    }
}

/// Fields met so far in one object, to refuse a repeated one.
#[derive(Default)]
struct Seen(u16);

impl Seen {
    fn first(&mut self, scanner: &Scanner<'_>, bit: u16, key: &str) -> Result<(), ScanError> {
        if self.0 & bit != 0 {
            return Err(scanner.error(format!("duplicate field `{key}`")));
        }
        self.0 |= bit;
        Ok(())
    }
}

impl<'a> Message<'a> {
    /// Parses one line's content (without its terminator). `Ok(None)` for a
    /// blank line, which carries no message. A tool result's rows are
    /// counted, not built.
    pub fn parse(content: &'a [u8]) -> Result<Option<Message<'a>>, ParseError> {
        Message::parse_as(content, false)
    }

    /// Parses a line as [`Message::parse`] does, and also builds a tool
    /// result's rows, for a transcript that keeps every result: then that
    /// is done by whichever thread parses the line.
    pub fn parse_with_rows(content: &'a [u8]) -> Result<Option<Message<'a>>, ParseError> {
        Message::parse_as(content, true)
    }

    fn parse_as(content: &'a [u8], with_rows: bool) -> Result<Option<Message<'a>>, ParseError> {
        let content = content.strip_prefix("\u{feff}".as_bytes()).unwrap_or(content);
        let text = simdutf8::compat::from_utf8(content)
            .map_err(|err| ParseError::Invalid(format!("invalid UTF-8 at column {}", err.valid_up_to() + 1)))?;
        let mut scanner = Scanner::new(text);
        let message = match scanner.peek() {
            None => return Ok(None),
            Some(Kind::Object) => Message::read(&mut scanner, with_rows)?,
            Some(_) => {
                scanner.skip_value(0)?;
                scanner.finish()?;
                return Err(ParseError::NotAnObject);
            }
        };
        scanner.finish()?;
        Ok(Some(message))
    }

    /// Reads the line's object, field by field.
    fn read(scanner: &mut Scanner<'a>, with_rows: bool) -> Result<Message<'a>, ScanError> {
        let mut message = Message::default();
        let mut seen = Seen::default();
        scanner.object(1, |s, key| {
            let Some(field) = Field::named(&key) else {
                return s.skip_value(1).map(drop);
            };
            let name = field.name();
            seen.first(s, 1 << field as u16, name)?;
            match field {
                Field::Id => message.id = optional_string(s, name)?,
                Field::Role => message.role = optional_string(s, name)?,
                Field::Content => message.content = optional_string(s, name)?,
                Field::Thinking => message.thinking = optional_raw(s, 1)?.is_some(),
                Field::ToolCall => message.tool_call = ToolCall::read(s, with_rows)?.map(Box::new),
                Field::GraphPath => message.final_node = final_node(s)?,
                Field::IsDelta => message.is_delta = optional_bool(s, name)?,
                Field::IsInProcess => message.is_in_process = optional_bool(s, name)?,
                Field::MessageId => message.special_mut().message_id = optional_string(s, name)?,
                Field::State => message.special_mut().state = optional_raw(s, 1)?,
                Field::Error => message.special_mut().error = optional_raw(s, 1)?,
                Field::Usage => message.special_mut().usage = optional_raw(s, 1)?,
            }
            Ok(())
        })?;
        Ok(message)
    }

    fn special_mut(&mut self) -> &mut Special<'a> {
        self.special.get_or_insert_with(Box::default)
    }

    /// `state` (of `__cutoff__` / `__state__`).
    pub fn state(&self) -> Option<Raw<'a>> {
        self.special.as_ref()?.state
    }

    /// `error`: an in-stream error, or the text of `__suspended__`.
    pub fn error(&self) -> Option<Raw<'a>> {
        self.special.as_ref()?.error
    }

    /// `usage` (of `__usage__`).
    pub fn usage(&self) -> Option<Raw<'a>> {
        self.special.as_ref()?.usage
    }

    /// `messageId` (of `__suspended__`).
    pub fn message_id(&self) -> Option<&str> {
        self.special.as_ref()?.message_id.as_deref()
    }

    /// The message id, or `""` when it has none.
    pub fn id(&self) -> &str {
        self.id.as_deref().unwrap_or("")
    }

    /// True for `role: "assistant"`.
    pub fn is_assistant(&self) -> bool {
        self.role.as_deref() == Some("assistant")
    }

    /// True for `role: "user"`.
    pub fn is_user(&self) -> bool {
        self.role.as_deref() == Some("user")
    }

    /// True when `graphPath` marks the final consolidated answer.
    pub fn is_final_node(&self) -> bool {
        self.final_node
    }

    /// `isDelta`, false when absent.
    pub fn is_delta(&self) -> bool {
        self.is_delta.unwrap_or(false)
    }

    /// `isInProcess`, false when absent.
    pub fn is_in_process(&self) -> bool {
        self.is_in_process.unwrap_or(false)
    }

    /// The text of an `error` field: the string itself, or the JSON of any
    /// other value.
    pub fn error_text(&self) -> Option<String> {
        self.error().map(|raw| json_text(raw.get()).into_owned())
    }
}

impl<'a> ToolCall<'a> {
    /// Reads a `toolCall` object, or `null`.
    fn read(scanner: &mut Scanner<'a>, with_rows: bool) -> Result<Option<ToolCall<'a>>, ScanError> {
        match scanner.peek() {
            Some(Kind::Null) => return scanner.null().map(|()| None),
            Some(Kind::Object) => {}
            _ => return Err(scanner.error("field `toolCall` must be an object or null")),
        }
        let mut call = ToolCall::default();
        let mut seen = Seen::default();
        // The result's contents, decoded as the scan checks them (on the
        // wire it is a JSON-encoded string).
        let mut contents = None;
        scanner.object(2, |s, key| {
            match &*key {
                "name" => {
                    seen.first(s, 1, "name")?;
                    call.name = optional_string(s, "name")?;
                }
                "input" => {
                    seen.first(s, 2, "input")?;
                    call.input = optional_raw(s, 2)?;
                }
                "result" => {
                    seen.first(s, 4, "result")?;
                    if s.peek() == Some(Kind::String) {
                        let (json, text) = s.string_and_json()?;
                        call.result = Some(Raw(json));
                        contents = Some(text);
                    } else {
                        call.result = optional_raw(s, 2)?;
                    }
                }
                _ => {
                    s.skip_value(2)?;
                }
            }
            Ok(())
        })?;
        call.head = call.result.map(|raw| {
            // A result that is JSON already (not a string) is read as it is.
            let head = ResultHead::read(&contents.unwrap_or(Cow::Borrowed(raw.get())));
            if with_rows {
                head.with_rows()
            } else {
                head
            }
        });
        Ok(Some(call))
    }
}

/// A string field, or `None` for `null`.
fn optional_string<'a>(scanner: &mut Scanner<'a>, key: &str) -> Result<Option<Cow<'a, str>>, ScanError> {
    match scanner.peek() {
        Some(Kind::String) => scanner.string().map(Some),
        Some(Kind::Null) => scanner.null().map(|()| None),
        _ => Err(scanner.error(format!("field `{key}` must be a string or null"))),
    }
}

/// A boolean field, or `None` for `null`.
fn optional_bool(scanner: &mut Scanner<'_>, key: &str) -> Result<Option<bool>, ScanError> {
    match scanner.peek() {
        Some(Kind::Bool) => scanner.bool().map(Some),
        Some(Kind::Null) => scanner.null().map(|()| None),
        _ => Err(scanner.error(format!("field `{key}` must be true, false or null"))),
    }
}

/// Any value kept as its text, or `None` for `null`; `depth` is its
/// object's.
fn optional_raw<'a>(scanner: &mut Scanner<'a>, depth: usize) -> Result<Option<Raw<'a>>, ScanError> {
    let text = scanner.skip_value(depth)?;
    Ok((text != "null").then_some(Raw(text)))
}

/// Reads `graphPath` (an array of node names, or null) into whether it marks
/// the final answer: first element `final`, at most 2 elements.
fn final_node(scanner: &mut Scanner<'_>) -> Result<bool, ScanError> {
    match scanner.peek() {
        Some(Kind::Null) => return scanner.null().map(|()| false),
        Some(Kind::Array) => {}
        _ => return Err(scanner.error("field `graphPath` must be an array or null")),
    }
    let (mut first_is_final, mut length) = (false, 0);
    scanner.array(2, |s, index| {
        length = index + 1;
        if index == 0 {
            if s.peek() != Some(Kind::String) {
                return Err(s.error("field `graphPath` must hold node names (strings)"));
            }
            first_is_final = s.string()? == "final";
        } else {
            s.skip_value(2)?;
        }
        Ok(())
    })?;
    Ok(first_is_final && length <= 2)
}

/// The text a JSON value stands for: a string's contents, or the JSON
/// itself for any other value (an `error` field, a tool's `input` or
/// `result`, which are JSON-encoded strings on the wire).
pub fn json_text(json: &str) -> Cow<'_, str> {
    serde_json::from_str::<Cow<'_, str>>(json).unwrap_or(Cow::Borrowed(json))
}

/// Decodes a tool's `input` or `result`: on the wire a JSON-encoded string,
/// parsed into the JSON value it holds. A string that is not JSON stays a
/// string; a field that is already JSON (not a string) is taken as it is.
pub fn decode_embedded_json(raw: Raw<'_>) -> Value {
    let text = json_text(raw.get());
    serde_json::from_str::<Value>(&text).unwrap_or_else(|_| Value::String(text.into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_fields_are_read_and_unknown_ones_ignored() {
        let line = br#"{"id":"m1","role":"assistant","content":"Hi \u00e9","graphPath":["final"],"isDelta":true,"isInProcess":false,"sort":3,"brandNew":{"x":[1]}}"#;
        let message = Message::parse(line).unwrap().unwrap();
        assert_eq!(message.id(), "m1");
        assert!(message.is_assistant());
        assert_eq!(message.content.as_deref(), Some("Hi é"));
        assert!(message.is_final_node());
        assert!(message.is_delta());
        assert!(!message.is_in_process());
    }

    #[test]
    fn every_field_is_found_by_its_key_and_no_other() {
        for field in Field::ALL {
            assert_eq!(Field::named(field.name()).map(Field::name), Some(field.name()));
        }
        for key in [
            "",
            "ID",
            "sort",
            "roles",
            "stats",
            "usagE",
            "contents",
            "isdelta",
            "thinkinG",
            "graphpath",
            "x".repeat(11).as_str(),
        ] {
            assert!(Field::named(key).is_none(), "{key}");
        }
    }

    #[test]
    fn final_node_needs_final_first_and_length_at_most_two() {
        for (path, expected) in [
            (r#"["final"]"#, true),
            (r#"["final","x"]"#, true),
            (r#"["final","x","y"]"#, false),
            (r#"["semantic_data_analyst_agent"]"#, false),
            (r#"[]"#, false),
        ] {
            let line = format!(r#"{{"graphPath":{path}}}"#);
            assert_eq!(
                Message::parse(line.as_bytes()).unwrap().unwrap().is_final_node(),
                expected,
                "{path}"
            );
        }
    }

    #[test]
    fn blank_lines_are_skipped_and_non_objects_refused() {
        assert!(Message::parse(b"   ").unwrap().is_none());
        assert!(matches!(Message::parse(b"[1,2]"), Err(ParseError::NotAnObject)));
        assert!(matches!(Message::parse(b"{\"id\":"), Err(ParseError::Invalid(_))));
        assert!(matches!(Message::parse(b"not json"), Err(ParseError::Invalid(_))));
    }

    #[test]
    fn invalid_utf8_is_refused_with_its_column() {
        let column = |line: &[u8]| match Message::parse(line) {
            Err(ParseError::Invalid(text)) => text,
            other => panic!("{other:?}"),
        };
        assert_eq!(column(b"{\"a\":\"\xff\"}"), "invalid UTF-8 at column 7");
        let mut long = format!("{{\"content\":\"{}", "é".repeat(100)).into_bytes();
        long.extend(b"\xe2\x82\"}");
        assert_eq!(column(&long), "invalid UTF-8 at column 213");
    }

    #[test]
    fn embedded_json_is_decoded_and_plain_text_kept() {
        assert_eq!(decode_embedded_json(Raw(r#""{\"a\":1}""#)), serde_json::json!({"a": 1}));
        assert_eq!(
            decode_embedded_json(Raw(r#""plain text""#)),
            serde_json::json!("plain text")
        );
        assert_eq!(decode_embedded_json(Raw(r#"{"b":2}"#)), serde_json::json!({"b": 2}));
    }
}
