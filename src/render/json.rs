//! `-o json`: one document for `jq`, written when the stream ends, also on
//! failure (`status` and `errors` say what went wrong). In the no-question
//! mode it is `{"chatId", "messages": [{"role", "content"}]}`.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;
use serde_json::Value;

use crate::error::{kind_of, Kind};
use crate::results::{Column, SqlResult, TypedRows};
use crate::stream::transcript::{Event, ToolCallRecord, Transcript};
use crate::stream::turn::{Ending, Renderer};

/// The `json` output: it keeps every finished tool call and SQL result.
#[derive(Default)]
pub struct Json {
    queries: Vec<SqlResult>,
    tool_calls: Vec<ToolCallRecord>,
}

impl Renderer for Json {
    fn event(&mut self, event: &Event) {
        if let Event::ToolFinished(finished) = event {
            self.tool_calls.push(finished.call.clone());
            if let Some((_, sql)) = &finished.sql {
                self.queries.push(sql.clone());
            }
        }
    }

    /// Writes the document; with `--all-rows`, truncated results are
    /// completed first (fewer rows than `totalRows` still writes it, then
    /// fails with [`Kind::Partial`]). `ending.failure` is appended to
    /// `errors` after the in-stream error lines.
    fn end(&mut self, transcript: &Transcript, ending: &Ending<'_>, out: &mut dyn Write) -> Result<()> {
        let mut partial = None;
        if let (Some(source), None) = (ending.all_rows, ending.failure) {
            for result in self
                .queries
                .iter_mut()
                .filter(|q| q.is_truncated() && q.error.is_none())
            {
                match result.complete(source) {
                    Err(err) if kind_of(&err) == Kind::Partial => partial = partial.or(Some(err)),
                    other => other?,
                }
            }
        }
        if transcript.is_thread_state() && ending.failure.is_none() {
            let messages = transcript
                .thread()
                .iter()
                .map(|m| ThreadMessage {
                    role: m.role,
                    content: &m.content,
                })
                .collect();
            let document = Thread {
                chat_id: transcript.chat_id(),
                messages,
            };
            write(&document, out)?;
        } else {
            let document = Document {
                chat_id: transcript.chat_id(),
                status: ending.status.as_str(),
                answer: transcript.answer().map(|(text, _)| text),
                queries: self.queries.iter().map(Query::of).collect(),
                tool_calls: self.tool_calls.iter().chain(transcript.unfinished()).collect(),
                errors: transcript
                    .errors()
                    .iter()
                    .map(String::as_str)
                    .chain(ending.failure)
                    .collect(),
                usage: transcript.usage(),
            };
            write(&document, out)?;
        }
        partial.map_or(Ok(()), Err)
    }
}

fn write(document: &impl Serialize, out: &mut dyn Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, document)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// The document, its members in the order of `cli.md`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Document<'a> {
    chat_id: Option<&'a str>,
    status: &'static str,
    answer: Option<&'a str>,
    queries: Vec<Query<'a>>,
    tool_calls: Vec<&'a ToolCallRecord>,
    errors: Vec<&'a str>,
    usage: Option<&'a Value>,
}

/// The document of the no-question mode: the thread so far.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Thread<'a> {
    chat_id: Option<&'a str>,
    messages: Vec<ThreadMessage<'a>>,
}

#[derive(Serialize)]
struct ThreadMessage<'a> {
    role: &'a str,
    content: &'a str,
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
            rows: result.typed_rows(),
            row_count: result.rows.len(),
            total_rows: result.total_rows,
            truncated: result.is_truncated(),
            uuid: result.uuid.as_deref(),
            vega_spec: result.vega_spec.as_ref(),
            error: result.error.as_deref(),
        }
    }
}
