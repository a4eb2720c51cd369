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
        let content = line.content();
        let Some(call) = &message.tool_call else {
            out.write_all(content)?;
            return out.write_all(b"\n");
        };
        let mut event: Value = serde_json::from_slice(content).map_err(io::Error::other)?;
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
}
