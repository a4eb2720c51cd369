//! `-o events`: one JSON object per stream line, in order, with
//! `toolCall.input` and `toolCall.result` decoded from their JSON strings so
//! that `jq` needs no `fromjson`. Lines without a tool call are passed on as
//! they are (they already are one JSON object each).

use std::io::{self, Write};

use serde_json::Value;

use crate::stream::lines::Line;
use crate::stream::message::{decode_embedded_json, Message};
use crate::stream::transcript::Transcript;
use crate::stream::turn::Renderer;

/// The `events` output.
pub struct Events;

impl Renderer for Events {
    fn line(
        &mut self,
        line: &Line<'_>,
        message: Option<&Message<'_>>,
        _transcript: &Transcript,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let Some(message) = message else { return Ok(()) };
        write_event(line, message, out)?;
        // Flushed like `raw`: each event leaves as soon as it came.
        if !line.more_buffered {
            out.flush()?;
        }
        Ok(())
    }
}

/// Writes one line as its event: as it is, or with a tool call's input and
/// result decoded.
fn write_event(line: &Line<'_>, message: &Message<'_>, out: &mut dyn Write) -> io::Result<()> {
    let content = line.content();
    // A line that cannot be rebuilt as a value (a number beyond f64, nesting
    // deeper than serde_json goes) is passed on as it came: it already is
    // one JSON object.
    let event = message
        .tool_call
        .as_ref()
        .and_then(|call| Some((call, serde_json::from_slice::<Value>(content).ok()?)));
    let Some((call, mut event)) = event else {
        out.write_all(content)?;
        return out.write_all(b"\n");
    };
    if let Some(tool_call) = event.get_mut("toolCall").and_then(Value::as_object_mut) {
        if let Some(raw) = call.input {
            tool_call.insert("input".into(), decode_embedded_json(raw));
        }
        if let Some(raw) = call.result {
            tool_call.insert("result".into(), decode_embedded_json(raw));
        }
    }
    serde_json::to_writer(&mut *out, &event).map_err(io::Error::other)?;
    out.write_all(b"\n")
}
