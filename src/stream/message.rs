//! One typed struct per stream line, read by serde with only the fields an
//! output needs. Strings are borrowed from the line where they have no
//! escapes ([`Text`]); values kept as they are (a tool's input and result,
//! `state`, `error`, `usage`) are borrowed [`RawValue`]s, checked but not
//! built. Unknown fields are checked and ignored. How a line is read —
//! the common line (a delta) without serde by [`super::quick`], every
//! other line, and every malformed one, by serde_json — is decided in
//! [`super::parse`].

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::results::lone_surrogates_replaced;

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

/// A string field, borrowed from the line when it has no escapes. (A bare
/// `Option<Cow<str>>` would always be copied: serde borrows a `Cow` only
/// as a field of its own.)
#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(transparent)]
pub struct Text<'a>(#[serde(borrow)] pub Cow<'a, str>);

/// A string field that may be `null`: `None` for `null`; the string is
/// borrowed when it has no escapes. (A line with a lone surrogate escape
/// is repaired by [`super::parse::lenient`].)
struct MaybeText<'a>(Option<Text<'a>>);

impl<'de> Deserialize<'de> for MaybeText<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<MaybeText<'de>, D::Error> {
        struct MaybeTextVisitor;

        impl<'de> Visitor<'de> for MaybeTextVisitor {
            type Value = MaybeText<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or null")
            }

            fn visit_none<E: de::Error>(self) -> Result<MaybeText<'de>, E> {
                Ok(MaybeText(None))
            }

            fn visit_unit<E: de::Error>(self) -> Result<MaybeText<'de>, E> {
                Ok(MaybeText(None))
            }

            fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<MaybeText<'de>, D::Error> {
                deserializer
                    .deserialize_str(TextVisitor)
                    .map(|text| MaybeText(Some(text)))
            }
        }

        deserializer.deserialize_option(MaybeTextVisitor)
    }
}

/// A string serde_json unescaped leniently (WTF-8: a lone surrogate is the
/// three bytes `ED A0..BF xx`) as UTF-8, each lone surrogate one U+FFFD.
fn without_surrogates(bytes: &[u8]) -> String {
    let mut text = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at..] {
            [0xed, 0xa0..=0xbf, _, ..] => {
                text.extend_from_slice("\u{fffd}".as_bytes());
                at += 3;
            }
            _ => {
                text.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8(text).unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

/// A string read as its bytes (see [`MaybeText`]).
struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or null")
    }

    fn visit_borrowed_bytes<E: de::Error>(self, bytes: &'de [u8]) -> Result<Text<'de>, E> {
        Ok(Text(match simdutf8::basic::from_utf8(bytes) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => Cow::Owned(without_surrogates(bytes)),
        }))
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(match simdutf8::basic::from_utf8(bytes) {
            Ok(text) => text.to_string(),
            Err(_) => without_surrogates(bytes),
        })))
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Borrowed(text)))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Text<'de>, E> {
        Ok(Text(Cow::Owned(text.to_string())))
    }
}

impl std::ops::Deref for Text<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

/// A line of the chat stream (API document 2.3, plus the service's extra
/// special ids and `{"error": …}` lines). A field that is `null` on the
/// wire is `None`; a key that comes twice takes its last value, as jq and
/// JSON.parse read it.
#[derive(Debug, Default)]
pub struct Message<'a> {
    /// Message id; tool-call start and result share one.
    pub id: Option<Text<'a>>,
    /// `user` or `assistant`.
    pub role: Option<Text<'a>>,
    /// Text: a chunk when `isDelta` is true, the whole text otherwise.
    pub content: Option<Text<'a>>,
    /// Whether the line carries the agent's reasoning (its text is not kept).
    pub thinking: bool,
    /// Whether `graphPath` marks the final consolidated answer: an array
    /// whose first element is `final`, of length at most 2.
    pub final_node: bool,
    /// Whether `content` is an increment.
    pub is_delta: Option<bool>,
    /// Whether the message is still being generated.
    pub is_in_process: Option<bool>,
    /// The fields few lines carry, apart: the message of a line without
    /// them (nearly every line) is small to move, and allocates nothing.
    rare: Option<Box<Rare<'a>>>,
}

/// The fields of a [`Message`] that few lines carry.
#[derive(Debug, Default)]
struct Rare<'a> {
    /// A tool call (start or result).
    tool_call: Option<ToolCall<'a>>,
    /// State object of `__cutoff__` / `__state__`, parsed only when needed.
    state: Option<&'a RawValue>,
    /// An in-stream error (`{"error": …}`), or the text of `__suspended__`.
    error: Option<&'a RawValue>,
    /// Token usage of `__usage__`.
    usage: Option<&'a RawValue>,
    /// For `__suspended__`: the message to resend.
    message_id: Option<Text<'a>>,
}

/// The `toolCall` object (API document 2.4). `input` and `result` are
/// JSON-encoded strings on the wire; both are kept raw until needed.
#[derive(Debug, Default)]
pub struct ToolCall<'a> {
    /// Tool name, e.g. `semanticSqlApi` or `cubeSqlApi`.
    pub name: Option<Text<'a>>,
    /// Tool input (a JSON string, or JSON directly).
    pub input: Option<&'a RawValue>,
    /// Tool result, present when the call is complete.
    pub result: Option<&'a RawValue>,
}

/// The keys of a message that outputs read; any other is skipped.
enum Key {
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
    Name,
    Input,
    Result,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        struct KeyVisitor;

        impl Visitor<'_> for KeyVisitor {
            type Value = Key;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }

            /// Matched by length first: most keys of a line are told apart
            /// without comparing a byte.
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                let key = key.as_bytes();
                Ok(match (key.len(), key) {
                    (2, b"id") => Key::Id,
                    (4, b"role") => Key::Role,
                    (4, b"name") => Key::Name,
                    (5, b"state") => Key::State,
                    (5, b"error") => Key::Error,
                    (5, b"usage") => Key::Usage,
                    (5, b"input") => Key::Input,
                    (6, b"result") => Key::Result,
                    (7, b"content") => Key::Content,
                    (7, b"isDelta") => Key::IsDelta,
                    (8, b"thinking") => Key::Thinking,
                    (8, b"toolCall") => Key::ToolCall,
                    (9, b"graphPath") => Key::GraphPath,
                    (9, b"messageId") => Key::MessageId,
                    (11, b"isInProcess") => Key::IsInProcess,
                    _ => Key::Other,
                })
            }
        }

        deserializer.deserialize_identifier(KeyVisitor)
    }
}

/// Reads a message's fields as they come, by hand rather than derived, so
/// that a repeated key is taken (the last wins) instead of refused, and each
/// key is matched once.
impl<'de: 'a, 'a> Deserialize<'de> for Message<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Message<'a>, D::Error> {
        struct MessageVisitor<'a>(PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for MessageVisitor<'a> {
            type Value = Message<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a message object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message<'a>, A::Error> {
                let mut message = Message::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Id => message.id = map.next_value::<MaybeText>()?.0,
                        Key::Role => message.role = map.next_value::<MaybeText>()?.0,
                        Key::Content => message.content = map.next_value::<MaybeText>()?.0,
                        // The field's presence is what counts.
                        Key::Thinking => message.thinking = map.next_value::<Option<IgnoredAny>>()?.is_some(),
                        Key::ToolCall => message.rare_mut().tool_call = map.next_value()?,
                        Key::GraphPath => {
                            message.final_node = map.next_value::<Option<FinalNode>>()?.is_some_and(|node| node.0)
                        }
                        Key::IsDelta => message.is_delta = map.next_value()?,
                        Key::IsInProcess => message.is_in_process = map.next_value()?,
                        Key::State => message.rare_mut().state = map.next_value()?,
                        Key::Error => message.rare_mut().error = map.next_value()?,
                        Key::Usage => message.rare_mut().usage = map.next_value()?,
                        Key::MessageId => message.rare_mut().message_id = map.next_value::<MaybeText>()?.0,
                        Key::Name | Key::Input | Key::Result | Key::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(message)
            }
        }

        deserializer.deserialize_map(MessageVisitor(PhantomData))
    }
}

/// A `toolCall` object, read as a [`Message`] is (a repeated key's last
/// value wins).
impl<'de: 'a, 'a> Deserialize<'de> for ToolCall<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ToolCall<'a>, D::Error> {
        struct ToolCallVisitor<'a>(PhantomData<&'a ()>);

        impl<'de: 'a, 'a> Visitor<'de> for ToolCallVisitor<'a> {
            type Value = ToolCall<'a>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a toolCall object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ToolCall<'a>, A::Error> {
                let mut call = ToolCall::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Name => call.name = map.next_value::<MaybeText>()?.0,
                        Key::Input => call.input = map.next_value()?,
                        Key::Result => call.result = map.next_value()?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(call)
            }
        }

        deserializer.deserialize_map(ToolCallVisitor(PhantomData))
    }
}

/// Why a line could not be read as a message.
#[derive(Debug)]
pub enum ParseError {
    /// Not JSON, or JSON of the wrong shape; the text says what.
    Invalid(String),
    /// JSON, but not an object (an array, a number…).
    NotAnObject,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Invalid(text) => f.write_str(text),
            ParseError::NotAnObject => f.write_str("not a JSON object"),
        }
    }
}

impl<'a> Message<'a> {
    /// The rare fields, made when the first one comes.
    fn rare_mut(&mut self) -> &mut Rare<'a> {
        self.rare.get_or_insert_default()
    }

    /// The tool call (start or result), when the line carries one.
    pub fn tool_call(&self) -> Option<&ToolCall<'a>> {
        self.rare.as_ref()?.tool_call.as_ref()
    }

    /// The state object of `__cutoff__` / `__state__`, as sent.
    pub fn state(&self) -> Option<&'a RawValue> {
        self.rare.as_ref()?.state
    }

    /// The in-stream error (`{"error": …}`), or the text of `__suspended__`.
    pub fn error(&self) -> Option<&'a RawValue> {
        self.rare.as_ref()?.error
    }

    /// The token usage of `__usage__`, as sent.
    pub fn usage(&self) -> Option<&'a RawValue> {
        self.rare.as_ref()?.usage
    }

    /// For `__suspended__`: the message to resend.
    pub fn message_id(&self) -> Option<&str> {
        self.rare.as_ref()?.message_id.as_deref()
    }

    /// The message id, or `""` when it has none.
    pub fn id(&self) -> &str {
        self.id.as_deref().unwrap_or("")
    }

    /// The text of `content`, when there is one.
    pub fn content(&self) -> Option<&str> {
        self.content.as_deref()
    }

    /// True for `role: "assistant"`.
    pub fn is_assistant(&self) -> bool {
        self.role.as_deref() == Some("assistant")
    }

    /// True for `role: "user"`.
    pub fn is_user(&self) -> bool {
        self.role.as_deref() == Some("user")
    }

    /// `isDelta`, false when absent.
    pub fn is_delta(&self) -> bool {
        self.is_delta.unwrap_or(false)
    }

    /// `isInProcess`, false when absent.
    pub fn is_in_process(&self) -> bool {
        self.is_in_process.unwrap_or(false)
    }

    /// The text of an `error` field: the string itself; the `message` of
    /// an object (a JSON-RPC error, `{"code", "message"}`); else the JSON of
    /// the value.
    pub fn error_text(&self) -> Option<String> {
        #[derive(Deserialize)]
        struct WithMessage {
            message: String,
        }
        let raw = self.error()?;
        Some(match serde_json::from_str::<WithMessage>(raw.get()) {
            Ok(error) => error.message,
            Err(_) => json_text(raw.get()).into_owned(),
        })
    }
}

/// serde_json's error as one clause: what is wrong and at which column
/// (the line's number is the reader's to give).
pub(super) fn invalid(err: &serde_json::Error) -> ParseError {
    let text = err.to_string();
    let what = text.rsplit_once(" at line ").map_or(text.as_str(), |(what, _)| what);
    ParseError::Invalid(format!("{what} at column {}", err.column()))
}

/// Whether a node name is `final` (compared where it lies, not copied).
struct IsFinal(bool);

impl<'de> Deserialize<'de> for IsFinal {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<IsFinal, D::Error> {
        struct IsFinalVisitor;

        impl Visitor<'_> for IsFinalVisitor {
            type Value = IsFinal;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a node name")
            }

            fn visit_str<E: de::Error>(self, name: &str) -> Result<IsFinal, E> {
                Ok(IsFinal(name == "final"))
            }
        }

        deserializer.deserialize_str(IsFinalVisitor)
    }
}

/// Whether `graphPath` (an array of node names, or null) marks the final
/// answer: first element `final`, at most 2 elements.
struct FinalNode(bool);

impl<'de> Deserialize<'de> for FinalNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<FinalNode, D::Error> {
        struct FinalNodeVisitor;

        impl<'de> Visitor<'de> for FinalNodeVisitor {
            type Value = FinalNode;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of node names or null")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FinalNode, A::Error> {
                let first_is_final = match seq.next_element::<IsFinal>()? {
                    Some(IsFinal(first)) => first,
                    None => return Ok(FinalNode(false)),
                };
                let mut length = 1;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    length += 1;
                }
                Ok(FinalNode(first_is_final && length <= 2))
            }
        }

        deserializer.deserialize_seq(FinalNodeVisitor)
    }
}

/// The text a JSON value stands for: a string's contents (a lone surrogate
/// escape as U+FFFD), or the JSON itself for any other value (an `error` field, a tool's `input` or
/// `result`, which are JSON-encoded strings on the wire).
pub fn json_text(json: &str) -> Cow<'_, str> {
    let mut reader = serde_json::Deserializer::from_str(json);
    match reader
        .deserialize_bytes(TextVisitor)
        .and_then(|text| reader.end().map(|()| text))
    {
        Ok(Text(text)) => text,
        Err(_) => Cow::Borrowed(json),
    }
}

/// Decodes a tool's `input` or `result`: on the wire a JSON-encoded string,
/// parsed into the JSON value it holds. A string that is not JSON stays a
/// string; a field that is already JSON (not a string) is taken as it is.
pub fn decode_embedded_json(raw: &RawValue) -> Value {
    let text = json_text(raw.get());
    serde_json::from_str::<Value>(&lone_surrogates_replaced(&text)).unwrap_or_else(|_| Value::String(text.into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_fields_are_read_and_unknown_ones_ignored() {
        let line = br#"{"id":"m1","role":"assistant","content":"Hi \u00e9","graphPath":["final"],"isDelta":true,"isInProcess":false,"sort":3,"brandNew":{"x":[1]}}"#;
        let message = crate::stream::parse::message(line).unwrap().unwrap();
        assert_eq!(message.id(), "m1");
        assert!(message.is_assistant());
        assert_eq!(message.content(), Some("Hi é"));
        assert!(message.final_node);
        assert!(message.is_delta());
        assert!(!message.is_in_process());
    }

    #[test]
    fn strings_without_escapes_are_borrowed_from_the_line() {
        let message = crate::stream::parse::message(br#"{"id":"m1","content":"a\nb"}"#)
            .unwrap()
            .unwrap();
        assert!(matches!(message.id, Some(Text(Cow::Borrowed("m1")))));
        assert!(matches!(message.content, Some(Text(Cow::Owned(_)))));
    }

    #[test]
    fn final_node_needs_final_first_and_length_at_most_two() {
        for (path, expected) in [
            (r#"["final"]"#, true),
            (r#"["final","x"]"#, true),
            (r#"["final","x","y"]"#, false),
            (r#"["semantic_data_analyst_agent"]"#, false),
            (r#"[]"#, false),
            ("null", false),
        ] {
            let line = format!(r#"{{"graphPath":{path}}}"#);
            assert_eq!(
                crate::stream::parse::message(line.as_bytes())
                    .unwrap()
                    .unwrap()
                    .final_node,
                expected,
                "{path}"
            );
        }
        assert!(crate::stream::parse::message(br#"{"graphPath":"final"}"#).is_err());
    }

    #[test]
    fn blank_lines_are_skipped_and_non_objects_refused() {
        assert!(crate::stream::parse::message(b"   ").unwrap().is_none());
        assert!(matches!(
            crate::stream::parse::message(b"[1,2]"),
            Err(ParseError::NotAnObject)
        ));
        assert!(matches!(
            crate::stream::parse::message(b"{\"id\":"),
            Err(ParseError::Invalid(_))
        ));
        assert!(matches!(
            crate::stream::parse::message(b"not json"),
            Err(ParseError::Invalid(_))
        ));
        assert!(matches!(
            crate::stream::parse::message(b"{\"id\":1}"),
            Err(ParseError::Invalid(_))
        ));
    }

    #[test]
    fn invalid_utf8_is_refused_with_its_column() {
        let column = |line: &[u8]| match crate::stream::parse::message(line) {
            Err(ParseError::Invalid(text)) => text,
            other => panic!("{other:?}"),
        };
        assert_eq!(column(b"{\"a\":\"\xff\"}"), "invalid UTF-8 at column 7");
        assert_eq!(column(b"{\"id\":"), "EOF while parsing a value at column 6");
    }

    #[test]
    fn an_error_is_its_text_or_its_message() {
        let text = |line: &str| {
            crate::stream::parse::message(line.as_bytes())
                .unwrap()
                .unwrap()
                .error_text()
        };
        assert_eq!(text(r#"{"error":"Bad branch"}"#).as_deref(), Some("Bad branch"));
        assert_eq!(
            text(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Agent does not have a deployment associated"}}"#)
                .as_deref(),
            Some("Agent does not have a deployment associated")
        );
        assert_eq!(text(r#"{"error":{"code":1}}"#).as_deref(), Some(r#"{"code":1}"#));
        assert_eq!(text(r#"{"id":"x"}"#), None);
    }

    #[test]
    fn embedded_json_is_decoded_and_plain_text_kept() {
        let raw = |text: &str| RawValue::from_string(text.to_string()).unwrap();
        assert_eq!(
            decode_embedded_json(&raw(r#""{\"a\":1}""#)),
            serde_json::json!({"a": 1})
        );
        assert_eq!(
            decode_embedded_json(&raw(r#""plain text""#)),
            serde_json::json!("plain text")
        );
        assert_eq!(decode_embedded_json(&raw(r#"{"b":2}"#)), serde_json::json!({"b": 2}));
    }
}
