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
/// the transcript, with no copy of the results built. A long chat's queries
/// and tool calls are serialized on two threads (the helper's half into a
/// buffer), in the layout `serde_json::to_writer_pretty` gives.
pub fn write(transcript: &Transcript, status: Status, failure: Option<&str>, out: &mut impl Write) -> io::Result<()> {
    if transcript.is_thread_state() && failure.is_none() {
        let document = json!({
            "chatId": transcript.chat_id(),
            "messages": transcript.thread().iter()
                .map(|m| json!({"role": m.role, "content": m.content}))
                .collect::<Vec<_>>(),
        });
        serde_json::to_writer_pretty(&mut *out, &document).map_err(io::Error::other)?;
        return out.write_all(b"\n");
    }
    let queries: Vec<Query> = transcript.queries().iter().map(Query::of).collect();
    let tool_calls: Vec<&ToolCallRecord> = transcript.tool_calls().collect();
    let errors: Vec<&str> = transcript.errors().iter().map(String::as_str).chain(failure).collect();
    // The members in the order of cli.md.
    out.write_all(b"{\n")?;
    member(out, "chatId", |out| write_pretty(out, &transcript.chat_id(), 1))?;
    member(out, "status", |out| write_pretty(out, &status.as_str(), 1))?;
    member(out, "answer", |out| {
        write_pretty(out, &transcript.answer().map(|(text, _)| text), 1)
    })?;
    member(out, "queries", |out| write_array(out, &queries))?;
    member(out, "toolCalls", |out| write_array(out, &tool_calls))?;
    member(out, "errors", |out| write_pretty(out, &errors, 1))?;
    write!(out, "  \"usage\": ")?;
    write_pretty(out, &transcript.usage(), 1)?;
    out.write_all(b"\n}\n")
}

/// Below this many elements an array is serialized on one thread.
const TWO_THREADS_FROM: usize = 64;

/// One member of the document's object but the last, as `serde_json` lays
/// it out; `value` writes its value.
fn member<W: Write>(out: &mut W, name: &str, value: impl FnOnce(&mut W) -> io::Result<()>) -> io::Result<()> {
    write!(out, "  \"{name}\": ")?;
    value(out)?;
    out.write_all(b",\n")
}

/// Writes `value` as pretty JSON `depth` levels deep: every line but the
/// first indented by two spaces a level (in JSON text a newline only ever
/// ends a line: inside strings it is escaped).
fn write_pretty(out: &mut impl Write, value: &impl Serialize, depth: usize) -> io::Result<()> {
    let text = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
    write_indented(out, &text, depth)
}

/// Writes pretty JSON `text` `depth` levels deep (see [`write_pretty`]).
fn write_indented(out: &mut impl Write, text: &[u8], depth: usize) -> io::Result<()> {
    for (index, line) in text.split(|&byte| byte == b'\n').enumerate() {
        if index > 0 {
            out.write_all(b"\n")?;
            for _ in 0..depth {
                out.write_all(b"  ")?;
            }
        }
        out.write_all(line)?;
    }
    Ok(())
}

/// An array member of the document. The second half of a long one is
/// serialized by a helper thread while this one writes the first.
fn write_array<T: Serialize + Sync>(out: &mut impl Write, items: &[T]) -> io::Result<()> {
    if items.is_empty() {
        return out.write_all(b"[]");
    }
    let half = if items.len() < TWO_THREADS_FROM {
        items.len()
    } else {
        items.len() / 2
    };
    let (first, second) = items.split_at(half);
    std::thread::scope(|scope| {
        // Without a helper (the system has no thread to give), this thread
        // writes both halves.
        let helper = match second.is_empty() {
            true => None,
            false => std::thread::Builder::new()
                .spawn_scoped(scope, || {
                    let mut text = Vec::new();
                    write_elements(&mut text, second).map(|()| text)
                })
                .ok(),
        };
        out.write_all(b"[\n    ")?;
        write_elements(out, first)?;
        if !second.is_empty() {
            out.write_all(b",\n    ")?;
            match helper {
                Some(helper) => {
                    out.write_all(&helper.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?)?
                }
                None => write_elements(out, second)?,
            }
        }
        out.write_all(b"\n  ]")
    })
}

/// The elements of an array of the document, separated as `serde_json`
/// separates them two levels deep.
fn write_elements<T: Serialize>(out: &mut impl Write, items: &[T]) -> io::Result<()> {
    let mut text = Vec::new();
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.write_all(b",\n    ")?;
        }
        text.clear();
        serde_json::to_writer_pretty(&mut text, item).map_err(io::Error::other)?;
        write_indented(out, &text, 2)?;
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::message::Message;
    use crate::stream::transcript::Retention;

    /// A transcript of `results` SQL results (with an error line, a usage
    /// line and the final answer), folded as `ask -o json` folds it.
    fn transcript(results: usize) -> Transcript {
        let mut lines = vec![
            r#"{"id":"__cutoff__","role":"assistant","state":{"chatId":"c-1"}}"#.to_string(),
            r#"{"id":"u","role":"user","content":"Revenue?"}"#.to_string(),
        ];
        for n in 0..results {
            let result = serde_json::json!({
                "schema": [{"name": "orders.month", "column_type": "String"}, {"name": "orders.revenue", "column_type": "Double"}],
                "data": [["2024-01", format!("{n}.5")], ["2024-02", null]],
                "totalRows": 250,
                "vegaSpec": "{\"mark\":\"bar\",\"encoding\":{\"x\":{\"field\":\"orders.month\"}}}",
            });
            let call = serde_json::json!({"id": format!("s{n}"), "role": "assistant", "toolCall": {
                "name": "semanticSqlApi", "input": "{\"sqlQuery\":\"SELECT 1\",\"queryTitle\":\"T \\\"q\\\"\\nx\"}",
                "result": result.to_string()}});
            lines.push(call.to_string());
        }
        lines.push(r#"{"id":"e","error":"boom\n\"quoted\""}"#.to_string());
        lines.push(
            r#"{"id":"f","role":"assistant","content":"Done.\nTwo lines","graphPath":["final"],"isDelta":false}"#
                .to_string(),
        );
        lines.push(
            r#"{"id":"__usage__","type":"usage","usage":{"totalTokens":7,"parts":[{},[],{"a":[1]}]}}"#.to_string(),
        );
        let mut transcript = Transcript::new(Retention::All);
        for line in &lines {
            let mut message = Message::parse(line.as_bytes()).unwrap().unwrap();
            transcript.apply(&mut message);
        }
        transcript
    }

    /// The document's bytes must be serde_json's own pretty layout, also
    /// when its arrays were serialized on two threads.
    #[test]
    fn the_document_is_laid_out_as_serde_json_lays_it_out() {
        for results in [0, 1, 3, TWO_THREADS_FROM - 1, TWO_THREADS_FROM * 2 + 1] {
            let transcript = transcript(results);
            assert_eq!(transcript.queries().len(), results);
            for failure in [None, Some("the stream was cut")] {
                let mut written = Vec::new();
                write(&transcript, Status::Completed, failure, &mut written).unwrap();
                let value: Value = serde_json::from_slice(&written).unwrap();
                let mut expected = serde_json::to_vec_pretty(&value).unwrap();
                expected.push(b'\n');
                assert_eq!(
                    String::from_utf8(written).unwrap(),
                    String::from_utf8(expected).unwrap(),
                    "{results}"
                );
                let keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
                assert_eq!(
                    keys,
                    ["chatId", "status", "answer", "queries", "toolCalls", "errors", "usage"]
                );
                assert_eq!(value["queries"].as_array().unwrap().len(), results);
                assert_eq!(value["toolCalls"].as_array().unwrap().len(), results);
                if results > 1 {
                    assert_eq!(value["queries"][results - 1]["id"], format!("s{}", results - 1));
                    assert_eq!(
                        value["queries"][results / 2]["rows"][0]["orders.revenue"],
                        (results / 2) as f64 + 0.5
                    );
                }
            }
        }
    }
}
