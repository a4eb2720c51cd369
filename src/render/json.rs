//! `-o json`: one document for `jq`, written when the stream ends, also on
//! failure (`status`, `errors` and `failure` say what went wrong). In the no-question
//! mode it is `{"chatId", "messages": [{"role", "content"}]}`.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::Result;
use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::Value;

use super::Truncation;
use crate::error::{kind_of, Kind};
use crate::evals::figures::Figure;
use crate::output::Output;
use crate::results::{Column, SqlResult, ToolResult, TypedRows};
use crate::stream::transcript::{Event, ToolCallRecord, Transcript};
use crate::stream::turn::Ended;

/// The `json` output. It keeps every finished tool call (its result as
/// compact text) and which of them ran SQL; each query's table is built
/// again from its call while the document is written, one at a time.
#[derive(Default)]
pub struct Json {
    tool_calls: Vec<ToolCallRecord>,
    /// The positions in `tool_calls` of the SQL calls.
    sql_calls: Vec<usize>,
    /// Truncated results completed with `--all-rows`, by position.
    completed: BTreeMap<usize, SqlResult>,
    /// The results that may lack rows, as they came: position in
    /// `tool_calls`, SQL result number, rows in the stream, `totalRows`
    /// (`None` when it is no count of rows).
    truncated: Vec<(usize, usize, usize, Option<u64>)>,
    /// The answer's figures, checked against the results.
    figures: Vec<Figure>,
}

impl Json {
    /// The answer's figures, checked, for the document's `figures`.
    pub fn set_figures(&mut self, figures: Vec<Figure>) {
        self.figures = figures;
    }

    /// Keeps every finished tool call, and which ran SQL.
    pub fn event(&mut self, event: &Event) {
        if let Event::TurnStarts = event {
            *self = Json::default();
        }
        if let Event::ToolFinished(finished) = event {
            if let Some((number, sql)) = &finished.sql {
                let position = self.tool_calls.len();
                self.sql_calls.push(position);
                if sql.may_lack_rows() && sql.error.is_none() {
                    self.truncated
                        .push((position, *number, sql.rows().len(), sql.total_rows));
                }
            }
            self.tool_calls.push(finished.call.clone());
        }
    }

    /// Writes the document; with `--all-rows`, truncated results are
    /// completed first (fewer rows than `totalRows` still writes it, then
    /// fails with [`Kind::Partial`]). `errors` holds the service's
    /// in-stream errors only; `failure` is analyst's reason for a non-zero
    /// exit (its code and message), null on success.
    pub fn end(
        &mut self,
        transcript: &Transcript,
        ended: &Ended,
        truncation: &Truncation,
        out: &mut dyn Output,
    ) -> Result<()> {
        let mut partial = None;
        if let (Some(source), true) = (truncation.every_row.as_ref(), ended.failure.is_none()) {
            for &(position, ..) in &self.truncated {
                let mut result = table(&self.tool_calls[position]);
                match result.complete(source) {
                    Err(err) if kind_of(&err) == Kind::Partial => partial = partial.or(Some(err)),
                    other => other?,
                }
                self.completed.insert(position, result);
            }
        }
        if transcript.is_thread_state() && ended.failure.is_none() {
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
                suspended: transcript.pending_suspension(),
            };
            write(&document, out)?;
        } else {
            let answer = transcript.answer();
            // A turn that ran no SQL: the tables of its answer are its results.
            let inline = match self.sql_calls.is_empty() {
                true => super::answer_tables(transcript),
                false => Vec::new(),
            };
            let document = Document {
                chat_id: transcript.chat_id(),
                message_id: transcript.message_id(),
                status: ended.status.as_str(),
                answer: answer.as_ref().map(|(text, _)| text.as_ref()),
                queries: Queries(self, &inline),
                tool_calls: ToolCalls {
                    finished: &self.tool_calls,
                    transcript,
                },
                figures: &self.figures,
                asks_back: ended.asks_back.is_some(),
                question: ended.asks_back.as_deref(),
                errors: transcript.errors(),
                usage: transcript.usage_sent(),
                failure: ended.failure.as_ref().map(|failure| FailureMember {
                    code: failure.kind.exit_code(),
                    message: failure.message(),
                }),
            };
            write(&document, out)?;
        }
        if let Some(err) = partial {
            return Err(err);
        }
        self.accept_truncated(transcript, ended, truncation)
    }

    /// Whether the results left truncated (not completed with
    /// `--all-rows`) are accepted: see [`Truncation::accept`]. Only
    /// results the document holds, of a turn (not a thread read), count.
    fn accept_truncated(&self, transcript: &Transcript, ended: &Ended, truncation: &Truncation) -> Result<()> {
        if ended.failure.is_some() || transcript.is_thread_state() {
            return Ok(());
        }
        let truncated = self
            .truncated
            .iter()
            .find(|&&(position, .., total)| total.is_some() && !self.completed.contains_key(&position));
        match truncated {
            Some(&(_, number, rows, Some(total))) => truncation.accept(&format!("SQL result {number}"), rows, total),
            _ => Ok(()),
        }
    }
}

/// The table of a SQL call, built from the call as the transcript built it.
fn table(call: &ToolCallRecord) -> SqlResult {
    match &call.result {
        Some(result) => SqlResult::from_tool_call(&call.id, &call.name, &call.input, result),
        None => SqlResult::from_tool_call(&call.id, &call.name, &call.input, &ToolResult::new("null".into())),
    }
}

/// The document's `queries`: each built (or taken completed) as it is
/// written.
/// With no SQL call, the answer's tables, marked as taken from it.
struct Queries<'a>(&'a Json, &'a [SqlResult]);

impl Serialize for Queries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (json, inline) = (self.0, self.1);
        let mut seq = serializer.serialize_seq(Some(json.sql_calls.len() + inline.len()))?;
        for &position in &json.sql_calls {
            match json.completed.get(&position) {
                Some(result) => seq.serialize_element(&Query::of(result))?,
                None => seq.serialize_element(&Query::of(&table(&json.tool_calls[position])))?,
            }
        }
        for result in inline {
            seq.serialize_element(&Query::of(result))?;
        }
        seq.end()
    }
}

/// Writes `document` as pretty JSON and a newline: every JSON document
/// of `analyst` but the check report.
pub fn write(document: &impl Serialize, out: &mut dyn Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, document)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// The document, its members in the order of `cli.md`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Document<'a> {
    chat_id: Option<&'a str>,
    message_id: Option<&'a str>,
    status: &'static str,
    answer: Option<&'a str>,
    queries: Queries<'a>,
    tool_calls: ToolCalls<'a>,
    /// Present when the answer states any.
    #[serde(skip_serializing_if = "<[Figure]>::is_empty")]
    figures: &'a [Figure],
    /// Present when the agent asked back.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    asks_back: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    question: Option<&'a str>,
    errors: &'a [String],
    usage: Option<&'a Value>,
    failure: Option<FailureMember<'a>>,
}

/// The document's `toolCalls`: the finished calls, then those that never
/// finished, each made as it is written.
struct ToolCalls<'a> {
    finished: &'a [ToolCallRecord],
    transcript: &'a Transcript,
}

impl Serialize for ToolCalls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut calls = serializer.serialize_seq(None)?;
        for call in self.finished {
            calls.serialize_element(call)?;
        }
        for call in self.transcript.unfinished() {
            calls.serialize_element(&call)?;
        }
        calls.end()
    }
}

/// The document's `failure`: the exit code and analyst's reason.
#[derive(Serialize)]
struct FailureMember<'a> {
    code: u8,
    message: &'a str,
}

/// The document of the no-question mode: the thread so far.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Thread<'a> {
    chat_id: Option<&'a str>,
    messages: Vec<ThreadMessage<'a>>,
    /// The message id of a suspended turn, which `--resume` takes.
    suspended: Option<&'a str>,
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
    /// A table of the final answer, not a SQL result (present only then).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    from_answer: bool,
}

impl<'a> Query<'a> {
    fn of(result: &'a SqlResult) -> Self {
        Query {
            id: &result.id,
            tool: &result.tool,
            title: result.title.as_deref(),
            description: result.description.as_deref(),
            sql: result.sql.as_deref(),
            columns: result.columns(),
            rows: result.typed_rows(),
            row_count: result.rows().len(),
            total_rows: result.total_rows,
            truncated: result.is_truncated(),
            uuid: result.uuid.as_deref(),
            vega_spec: result.vega_spec.as_ref(),
            error: result.error.as_deref(),
            from_answer: result.is_from_answer(),
        }
    }
}
