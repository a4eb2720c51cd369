//! `-o events`: one JSON object per stream line, in order, with
//! `toolCall.input` and `toolCall.result` decoded from their JSON strings so
//! that `jq` needs no `fromjson`. The line is passed on as it came, with
//! only those two strings replaced by the JSON they hold (written compact,
//! straight from the text: a result of millions of rows is never a tree of
//! values).

use std::io::{self, Write};

use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use crate::output::Output;
use crate::stream::lines::Line;
use crate::stream::message::{json_text, Message};

/// The `events` output.
pub struct Events;

impl Events {
    /// Writes a line's event: as it came, with its tool call's input and
    /// result decoded.
    pub fn line(&mut self, line: &Line<'_>, message: Option<&Message<'_>>, out: &mut dyn Output) -> io::Result<()> {
        let Some(message) = message else { return Ok(()) };
        write_event(line.content(), message, out)?;
        out.write_all(b"\n")?;
        // Flushed like `raw`: each event leaves as soon as it came.
        if !line.more_buffered {
            out.flush()?;
        }
        Ok(())
    }
}

/// Writes one line as its event: as it came, with a tool call's input and
/// result that are JSON strings holding JSON written as that JSON.
fn write_event(content: &[u8], message: &Message<'_>, out: &mut dyn Write) -> io::Result<()> {
    let mut fields: Vec<&RawValue> = message
        .tool_call()
        .into_iter()
        .flat_map(|call| [call.input, call.result])
        .flatten()
        .collect();
    fields.sort_by_key(|raw| raw.get().as_ptr());
    let mut written = 0;
    for raw in fields {
        let Some(start) = (raw.get().as_ptr() as usize).checked_sub(content.as_ptr() as usize) else {
            continue;
        };
        let Some(decoded) = embedded_json(raw) else { continue };
        out.write_all(&content[written..start])?;
        write_compact(decoded.as_bytes(), out)?;
        written = start + raw.get().len();
    }
    out.write_all(&content[written..])
}

/// The JSON a field holds when it is a JSON string whose text is JSON
/// (how the service sends a tool's input and result); `None` otherwise.
fn embedded_json(raw: &RawValue) -> Option<String> {
    if !raw.get().starts_with('"') {
        return None;
    }
    let text = json_text(raw.get()).into_owned();
    serde_json::from_str::<IgnoredAny>(&text).is_ok().then_some(text)
}

/// Writes valid JSON without the whitespace between its tokens (strings
/// are copied as they are), so an event stays on one line.
fn write_compact(json: &[u8], out: &mut dyn Write) -> io::Result<()> {
    let (mut in_string, mut escaped, mut run) = (false, false, 0);
    for (i, &byte) in json.iter().enumerate() {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b' ' | b'\t' | b'\n' | b'\r' => {
                out.write_all(&json[run..i])?;
                run = i + 1;
            }
            _ => {}
        }
    }
    out.write_all(&json[run..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(line: &str) -> String {
        let message = crate::stream::parse::message(line.as_bytes()).unwrap().unwrap();
        let mut out = Vec::new();
        write_event(line.as_bytes(), &message, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn embedded_json_is_written_as_json_on_one_line() {
        let line = r#"{"id":"t","toolCall":{"name":"x","input":"{\"q\": \"a b\"}","result":"{\n  \"data\": [[1e2, \"x y\"]]\n}"},"sort":1}"#;
        assert_eq!(
            event(line),
            r#"{"id":"t","toolCall":{"name":"x","input":{"q":"a b"},"result":{"data":[[1e2,"x y"]]}},"sort":1}"#
        );
        let plain = r#"{"id":"t","toolCall":{"name":"x","input":"not json","result":{"already":true}}}"#;
        assert_eq!(
            event(plain),
            plain,
            "a string that is not JSON, and JSON as it is, stay"
        );
        let other = r#"{"id":"m","content":"hi"}"#;
        assert_eq!(event(other), other);
    }
}
