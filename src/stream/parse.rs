//! A line of the stream into a [`Message`]: the common line (an
//! assistant's delta) read in one pass by [`super::quick`], any other or
//! malformed line by serde_json, which reads it or says what is wrong and
//! where; and the one repair a real stream needs (a lone surrogate escape,
//! half of an emoji the service split). The one place that decides how a
//! line is read, so that `message` (the types) and `quick` (the fast path)
//! depend on neither each other nor it.

use std::borrow::Cow;

use serde::de::IgnoredAny;

use super::message::{invalid, Message, ParseError};
use crate::results::lone_surrogates_replaced;

/// Parses one line's content (without its terminator). `Ok(None)` for a
/// blank line, which carries no message.
pub fn message(content: &[u8]) -> Result<Option<Message<'_>>, ParseError> {
    let content = content.strip_prefix("\u{feff}".as_bytes()).unwrap_or(content);
    // One check of the whole line: serde does not check the UTF-8 of
    // the strings it skips. (Where it fails is looked for only then.)
    let text = simdutf8::basic::from_utf8(content).map_err(|_| {
        let valid_up_to = simdutf8::compat::from_utf8(content).map_or_else(|err| err.valid_up_to(), str::len);
        ParseError::Invalid(format!("invalid UTF-8 at column {}", valid_up_to + 1))
    })?;
    let start = text.trim_start_matches([' ', '\t', '\n', '\r']);
    if start.is_empty() {
        return Ok(None);
    }
    if !start.starts_with('{') {
        return match serde_json::from_str::<IgnoredAny>(text) {
            Ok(_) => Err(ParseError::NotAnObject),
            Err(err) => Err(invalid(&err)),
        };
    }
    // Most lines are read in one pass; serde_json reads the others (and
    // says what is wrong with a malformed one).
    if let Some(message) = super::quick::read(start) {
        return Ok(Some(message));
    }
    serde_json::from_str(text).map(Some).map_err(|err| invalid(&err))
}

/// [`message`], and when that fails on a lone surrogate escape (`\ud83d`,
/// half of an emoji the service split), the line parsed again with each
/// written `\ufffd` (kept in `spare`), as `JSON.parse` and jq read it.
/// Only a line that fails pays for the repair.
pub fn lenient<'a>(content: &'a [u8], spare: &'a mut Option<String>) -> Result<Option<Message<'a>>, ParseError> {
    let refused = match message(content) {
        Err(ParseError::Invalid(why)) => why,
        parsed => return parsed,
    };
    let repaired = std::str::from_utf8(content)
        .ok()
        .and_then(|text| match lone_surrogates_replaced(text) {
            Cow::Owned(repaired) => Some(repaired),
            Cow::Borrowed(_) => None,
        });
    match repaired {
        Some(repaired) => message(spare.insert(repaired).as_bytes()),
        None => Err(ParseError::Invalid(refused)),
    }
}
