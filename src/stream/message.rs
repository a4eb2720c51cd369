//! One typed struct per stream line. Strings are borrowed from the line where
//! they have no escapes; fields no renderer needs (like `state.messages` of a
//! large `__state__` line) stay unparsed [`RawValue`]s. Unknown fields are
//! ignored.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

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

/// A line of the chat stream (API document 2.3, plus the service's extra
/// special ids and `{"error": …}` lines).
#[derive(Debug, Default, Deserialize)]
pub struct Message<'a> {
    /// Message id; tool-call start and result share one.
    #[serde(borrow, default)]
    pub id: Option<Cow<'a, str>>,
    /// `user` or `assistant`.
    #[serde(borrow, default)]
    pub role: Option<Cow<'a, str>>,
    /// Text: a chunk when `isDelta` is true, the whole text otherwise.
    #[serde(borrow, default)]
    pub content: Option<Cow<'a, str>>,
    /// The agent's reasoning, when the line carries some (only its presence
    /// is kept).
    #[serde(default)]
    pub thinking: Option<serde::de::IgnoredAny>,
    /// A tool call (start or result).
    #[serde(borrow, default, rename = "toolCall")]
    pub tool_call: Option<ToolCall<'a>>,
    /// Whether `graphPath` marks the final consolidated answer: an array
    /// whose first element is `final`, of length at most 2. Decided while
    /// parsing, without allocating.
    #[serde(default, rename = "graphPath", deserialize_with = "final_node")]
    pub final_node: bool,
    /// Whether `content` is an increment.
    #[serde(default, rename = "isDelta")]
    pub is_delta: Option<bool>,
    /// Whether the message is still being generated.
    #[serde(default, rename = "isInProcess")]
    pub is_in_process: Option<bool>,
    /// State object of `__cutoff__` / `__state__`, parsed only when needed.
    #[serde(borrow, default)]
    pub state: Option<&'a RawValue>,
    /// An in-stream error (`{"error": …}`), or the text of `__suspended__`.
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
    /// Token usage of `__usage__`.
    #[serde(borrow, default)]
    pub usage: Option<&'a RawValue>,
    /// For `__suspended__`: the message to resend.
    #[serde(borrow, default, rename = "messageId")]
    pub message_id: Option<Cow<'a, str>>,
}

/// The `toolCall` object (API document 2.4). `input` and `result` are
/// JSON-encoded strings on the wire; both are kept raw until needed.
#[derive(Debug, Default, Deserialize)]
pub struct ToolCall<'a> {
    /// Tool name, e.g. `semanticSqlApi` or `cubeSqlApi`.
    #[serde(borrow, default)]
    pub name: Option<Cow<'a, str>>,
    /// Tool input (a JSON string, or JSON directly).
    #[serde(borrow, default)]
    pub input: Option<&'a RawValue>,
    /// Tool result, present when the call is complete.
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
}

/// Why a line could not be read as a message.
#[derive(Debug)]
pub enum ParseError {
    /// Not JSON, or JSON of the wrong shape; the text says what.
    Invalid(String),
    /// JSON, but not an object (an array, a number…).
    NotAnObject,
}

impl<'a> Message<'a> {
    /// Parses one line's content (without its terminator). `Ok(None)` for a
    /// blank line, which carries no message.
    pub fn parse(content: &'a [u8]) -> Result<Option<Message<'a>>, ParseError> {
        let content = content.strip_prefix("\u{feff}".as_bytes()).unwrap_or(content);
        match content.iter().find(|b| !b.is_ascii_whitespace()) {
            None => Ok(None),
            Some(b'{') => serde_json::from_slice(content)
                .map(Some)
                .map_err(|err| ParseError::Invalid(err.to_string())),
            Some(_) => match serde_json::from_slice::<&RawValue>(content) {
                Ok(_) => Err(ParseError::NotAnObject),
                Err(err) => Err(ParseError::Invalid(err.to_string())),
            },
        }
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
        self.error.map(raw_to_text)
    }
}

/// Reads `graphPath` (an array of node names, or null) into whether it marks
/// the final answer: first element `final`, at most 2 elements.
fn final_node<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    struct Path;
    impl<'de> serde::de::Visitor<'de> for Path {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an array of node names")
        }
        fn visit_unit<E>(self) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
            let Some(IsFinal(first)) = seq.next_element()? else {
                return Ok(false);
            };
            let mut length = 1;
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                length += 1;
            }
            Ok(first && length <= 2)
        }
    }
    deserializer.deserialize_any(Path)
}

/// A node name, reduced to whether it is `final`.
struct IsFinal(bool);

impl<'de> Deserialize<'de> for IsFinal {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = IsFinal;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a node name")
            }
            fn visit_str<E>(self, name: &str) -> Result<IsFinal, E> {
                Ok(IsFinal(name == "final"))
            }
        }
        deserializer.deserialize_str(Name)
    }
}

/// The text of a raw JSON value: a string's contents, or the JSON itself.
pub fn raw_to_text(raw: &RawValue) -> String {
    match serde_json::from_str::<Cow<'_, str>>(raw.get()) {
        Ok(text) => text.into_owned(),
        Err(_) => raw.get().to_string(),
    }
}

/// Decodes a tool's `input` or `result`: on the wire a JSON-encoded string,
/// parsed into the JSON value it holds. A string that is not JSON stays a
/// string; a field that is already JSON (not a string) is taken as it is.
pub fn decode_embedded_json(raw: &RawValue) -> Value {
    match serde_json::from_str::<Cow<'_, str>>(raw.get()) {
        Ok(text) => serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text.into_owned())),
        Err(_) => serde_json::from_str::<Value>(raw.get()).unwrap_or(Value::Null),
    }
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
    fn embedded_json_is_decoded_and_plain_text_kept() {
        let raw: Box<RawValue> = serde_json::from_str(r#""{\"a\":1}""#).unwrap();
        assert_eq!(decode_embedded_json(&raw), serde_json::json!({"a": 1}));
        let raw: Box<RawValue> = serde_json::from_str(r#""plain text""#).unwrap();
        assert_eq!(decode_embedded_json(&raw), serde_json::json!("plain text"));
        let raw: Box<RawValue> = serde_json::from_str(r#"{"b":2}"#).unwrap();
        assert_eq!(decode_embedded_json(&raw), serde_json::json!({"b": 2}));
    }
}
