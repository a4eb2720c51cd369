//! `-o json`: one document for `jq`, written when the stream ends, also on
//! failure (`status` and `errors` say what went wrong). In the no-question
//! mode it is `{"chatId", "messages": [{"role", "content"}]}`.

use std::io::{self, Write};

use serde_json::{json, Value};

use super::Status;
use crate::results::SqlResult;
use crate::stream::transcript::Transcript;

/// Writes the document. `failure`, when the run failed, is appended to
/// `errors` after the in-stream error lines.
pub fn write(transcript: &Transcript, status: Status, failure: Option<&str>, out: &mut impl Write) -> io::Result<()> {
    let document = if transcript.is_thread_state() && failure.is_none() {
        json!({
            "chatId": transcript.chat_id(),
            "messages": transcript.thread().iter()
                .map(|m| json!({"role": m.role, "content": m.content}))
                .collect::<Vec<_>>(),
        })
    } else {
        let errors: Vec<&str> = transcript.errors().iter().map(String::as_str).chain(failure).collect();
        json!({
            "chatId": transcript.chat_id(),
            "status": status.as_str(),
            "answer": transcript.answer().map(|(text, _)| text),
            "queries": transcript.queries().iter().map(query).collect::<Vec<_>>(),
            "toolCalls": transcript.tool_calls().map(|call| json!({
                "id": call.id, "name": call.name, "input": call.input,
                "result": call.result, "error": call.error,
            })).collect::<Vec<_>>(),
            "errors": errors,
            "usage": transcript.usage(),
        })
    };
    serde_json::to_writer_pretty(&mut *out, &document).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

fn query(result: &SqlResult) -> Value {
    json!({
        "id": result.id,
        "tool": result.tool,
        "title": result.title,
        "description": result.description,
        "sql": result.sql,
        "columns": result.columns.iter().map(|c| json!({"name": c.name, "type": c.column_type})).collect::<Vec<_>>(),
        "rows": typed_values(result),
        "rowCount": result.rows.len(),
        "totalRows": result.total_rows,
        "truncated": result.is_truncated(),
        "uuid": result.uuid,
        "vegaSpec": result.vega_spec,
        "error": result.error,
    })
}

/// Shared with `vega`: the rows of `result` as typed objects.
pub fn typed_values(result: &SqlResult) -> Vec<Value> {
    result.typed_rows().map(Value::Object).collect()
}
