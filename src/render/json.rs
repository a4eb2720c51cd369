//! `-o json`: one document for `jq`, written when the stream ends, also on
//! failure (`status` and `errors` say what went wrong). In the no-question
//! mode it is `{"chatId", "messages": [{"role", "content"}]}`.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{json, Value};

use super::Status;
use crate::results::{Column, SqlResult, TypedRows};
use crate::stream::transcript::{ToolCallRecord, Transcript};

/// Writes the document. `failure`, when the run failed, is appended to
/// `errors` after the in-stream error lines. It is serialized straight from
/// the transcript, so writing it costs no copy of the results.
pub fn write(transcript: &Transcript, status: Status, failure: Option<&str>, out: &mut impl Write) -> io::Result<()> {
    if transcript.is_thread_state() && failure.is_none() {
        let document = json!({
            "chatId": transcript.chat_id(),
            "messages": transcript.thread().iter()
                .map(|m| json!({"role": m.role, "content": m.content}))
                .collect::<Vec<_>>(),
        });
        serde_json::to_writer_pretty(&mut *out, &document).map_err(io::Error::other)?;
    } else {
        let document = Document {
            chat_id: transcript.chat_id(),
            status: status.as_str(),
            answer: transcript.answer().map(|(text, _)| text),
            queries: transcript.queries().iter().map(Query::of).collect(),
            tool_calls: transcript.tool_calls().collect(),
            errors: transcript.errors().iter().map(String::as_str).chain(failure).collect(),
            usage: transcript.usage(),
        };
        serde_json::to_writer_pretty(&mut *out, &document).map_err(io::Error::other)?;
    }
    out.write_all(b"\n")
}

/// The document of cli.md, borrowing everything from the transcript.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Document<'a> {
    chat_id: Option<&'a str>,
    status: &'a str,
    answer: Option<&'a str>,
    queries: Vec<Query<'a>>,
    tool_calls: Vec<&'a ToolCallRecord>,
    errors: Vec<&'a str>,
    usage: Option<&'a Value>,
}

/// One SQL result of the document, rows typed by their columns.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Query<'a> {
    id: &'a str,
    tool: &'a str,
    title: Option<&'a str>,
    description: Option<&'a str>,
    sql: Option<&'a str>,
    columns: &'a [Column],
    rows: TypedRows<'a>,
    row_count: usize,
    total_rows: Option<u64>,
    truncated: bool,
    uuid: Option<&'a str>,
    vega_spec: Option<&'a Value>,
    error: Option<&'a str>,
}

impl<'a> Query<'a> {
    fn of(result: &'a SqlResult) -> Self {
        Query {
            id: &result.id,
            tool: &result.tool,
            title: result.title.as_deref(),
            description: result.description.as_deref(),
            sql: result.sql.as_deref(),
            columns: &result.columns,
            rows: result.typed_rows_view(),
            row_count: result.rows.len(),
            total_rows: result.total_rows,
            truncated: result.is_truncated(),
            uuid: result.uuid.as_deref(),
            vega_spec: result.vega_spec.as_ref(),
            error: result.error.as_deref(),
        }
    }
}
