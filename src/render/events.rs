//! `-o events`: one JSON object per stream line, in order, with
//! `toolCall.input` and `toolCall.result` decoded from their JSON strings so
//! that `jq` needs no `fromjson`. Lines without a tool call are passed on as
//! they are (they already are one JSON object each).

use std::io::{self, Write};

use serde_json::Value;

use crate::stream::message::{decode_embedded_json, Message};

/// Writes one event for a parsed line. `content` is the line without its
/// terminator; `message` is its parse.
pub fn write_line(content: &[u8], message: &Message<'_>, out: &mut impl Write) -> io::Result<()> {
    let Some(call) = &message.tool_call else {
        out.write_all(content)?;
        return out.write_all(b"\n");
    };
    let mut line: Value = serde_json::from_slice(content).map_err(io::Error::other)?;
    if let Some(tool_call) = line.get_mut("toolCall").and_then(Value::as_object_mut) {
        if let Some(raw) = call.input {
            tool_call.insert("input".into(), decode_embedded_json(raw));
        }
        if let Some(raw) = call.result {
            tool_call.insert("result".into(), decode_embedded_json(raw));
        }
    }
    serde_json::to_writer(&mut *out, &line).map_err(io::Error::other)?;
    out.write_all(b"\n")
}
