//! Folds the stream's messages into what the renderers and the exit code
//! need: chat id, final answer (with the fallback rule), tool calls paired
//! start → result, SQL results, in-stream errors, suspension, abort, usage,
//! and the thread's messages in the no-question mode. It keeps only what the
//! chosen output needs ([`Retention`]), so memory does not grow with the
//! length of the stream.

use std::cell::OnceCell;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::message::{
    self, decode_embedded_json, json_text, Message, Raw, ABORTED_ID, CUTOFF_ID, STATE_ID, SUSPENDED_ID, USAGE_ID,
};
use crate::cli::QuerySelector;
use crate::exit::{ExitCode, Fault};
use crate::results::{is_sql_call, tool_error, ResultHead, SqlResult};

/// Which SQL results and tool calls the transcript keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retention {
    /// Every tool call and SQL result (for `-o json`).
    All,
    /// Only the SQL result the selector will pick (for `csv`, `vega`).
    Selected(QuerySelector),
    /// None: the output needs only the answer (`answer`, `raw`, `events`).
    Nothing,
}

/// A tool call, with input and result parsed from their JSON strings
/// (serialized as an entry of `-o json`'s `toolCalls`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCallRecord {
    /// The tool call's message id.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The parsed input.
    pub input: Value,
    /// The parsed result; `None` when the call never finished.
    pub result: Option<Value>,
    /// The result's `error`, when the tool failed.
    pub error: Option<String>,
}

/// A message of the thread, from `__state__` in the no-question mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadMessage {
    /// `user` or `assistant`.
    pub role: &'static str,
    /// The message text.
    pub content: String,
}

/// What a finished tool call looked like, for the notes on stderr.
#[derive(Clone, Debug)]
pub struct ToolSummary {
    /// The tool name.
    pub name: String,
    /// The tool's error, if it failed.
    pub error: Option<String>,
    /// For a SQL call: its 1-based number among the stream's SQL results,
    /// title, rows returned and `totalRows`.
    pub sql: Option<SqlSummary>,
}

/// The facts about a SQL result that a note needs.
#[derive(Clone, Debug)]
pub struct SqlSummary {
    /// 1-based position among the stream's SQL results (`--query N`).
    pub number: usize,
    /// `queryTitle`.
    pub title: Option<String>,
    /// Rows returned in the stream.
    pub rows: usize,
    /// `totalRows`.
    pub total_rows: Option<u64>,
}

/// Something a line changed that a person should hear about now.
#[derive(Clone, Debug)]
pub enum Event {
    /// The chat id became known (from `__cutoff__`).
    ChatId(String),
    /// A tool call finished.
    ToolFinished(ToolSummary),
}

/// How the final answer was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerSource {
    /// A `final`-node message: the answer proper.
    Final,
    /// No `final` node arrived; the last complete assistant content message.
    Fallback,
}

/// The three ways a message can be the answer's candidate.
#[derive(Clone, Copy)]
enum Candidate {
    /// The last `final`-node message.
    Final,
    /// The last complete assistant content message.
    Complete,
    /// The last assistant content at all.
    Latest,
}

#[derive(Deserialize)]
struct StateHead {
    #[serde(default, rename = "chatId")]
    chat_id: Option<String>,
}

#[derive(Deserialize)]
struct StateMessages<'a> {
    #[serde(borrow, default)]
    messages: Option<Vec<&'a RawValue>>,
}

/// A SQL result kept unbuilt: a later one may replace it, and most are.
/// Its rows are parsed the first time it is asked for.
struct LatestSql {
    id: String,
    tool: String,
    input: Value,
    head: ResultHead,
    built: OnceCell<SqlResult>,
}

impl LatestSql {
    fn build(&self) -> SqlResult {
        SqlResult::from_tool_call(&self.id, &self.tool, &self.input, &self.head.full())
    }

    fn result(&self) -> &SqlResult {
        self.built.get_or_init(|| self.build())
    }

    fn into_result(mut self) -> SqlResult {
        match self.built.take() {
            Some(result) => result,
            None => self.build(),
        }
    }
}

/// The folded stream. Feed it every message with [`Transcript::apply`].
pub struct Transcript {
    retention: Retention,
    chat_id: Option<String>,
    /// Content folded by message id, for the few messages that can still be
    /// the answer (a short list: a linear search beats hashing every line).
    drafts: Vec<(String, String)>,
    final_id: Option<String>,
    complete_id: Option<String>,
    latest_id: Option<String>,
    /// Started tool calls still waiting for their result.
    pending: Vec<ToolCallRecord>,
    tool_calls: Vec<ToolCallRecord>,
    queries: Vec<SqlResult>,
    /// Under `--query last`, the latest successful SQL result (then
    /// `queries` is empty).
    latest_sql: Option<LatestSql>,
    sql_seen: usize,
    last_sql_error: Option<String>,
    tool_errors: usize,
    errors: Vec<String>,
    suspended: Option<String>,
    aborted: bool,
    usage: Option<Value>,
    saw_question: bool,
    thread: Option<Vec<ThreadMessage>>,
    tools_called: Vec<String>,
    sql_queries: Vec<String>,
}

impl Transcript {
    /// An empty transcript that keeps what `retention` says.
    pub fn new(retention: Retention) -> Self {
        Transcript {
            retention,
            chat_id: None,
            drafts: Vec::new(),
            final_id: None,
            complete_id: None,
            latest_id: None,
            pending: Vec::new(),
            tool_calls: Vec::new(),
            queries: Vec::new(),
            latest_sql: None,
            sql_seen: 0,
            last_sql_error: None,
            tool_errors: 0,
            errors: Vec::new(),
            suspended: None,
            aborted: false,
            usage: None,
            saw_question: false,
            thread: None,
            tools_called: Vec::new(),
            sql_queries: Vec::new(),
        }
    }

    /// Folds one message in; returns what a person should hear about now.
    /// A tool call's decoded result is taken out of the message, not copied.
    pub fn apply(&mut self, msg: &mut Message<'_>) -> Option<Event> {
        match msg.id() {
            CUTOFF_ID | STATE_ID => return self.apply_state(msg),
            SUSPENDED_ID => {
                let mut text = msg.error_text().unwrap_or_else(|| "the chat was suspended".into());
                if let Some(id) = msg.message_id() {
                    text.push_str(&format!(" (message {id})"));
                }
                self.suspended = Some(text);
                return None;
            }
            ABORTED_ID => {
                self.aborted = true;
                return None;
            }
            USAGE_ID => {
                self.usage = msg.usage().and_then(|raw| serde_json::from_str(raw.get()).ok());
                return None;
            }
            _ => {}
        }
        if let Some(call) = &mut msg.tool_call {
            return self.apply_tool_call(msg.id.as_deref().unwrap_or(""), call);
        }
        if msg.role.is_none() {
            if let Some(error) = msg.error() {
                self.errors.push(json_text(error.get()).into_owned());
                return None;
            }
        }
        if msg.is_user() {
            self.saw_question = true;
        } else if msg.is_assistant() {
            if let Some(content) = &msg.content {
                self.fold_content(msg, content);
            }
        }
        None
    }

    fn apply_state(&mut self, msg: &Message<'_>) -> Option<Event> {
        let state = msg.state()?;
        if msg.id() == STATE_ID && !self.saw_question {
            self.thread = Some(thread_messages(state));
        }
        if self.chat_id.is_some() {
            return None;
        }
        let head: StateHead = serde_json::from_str(state.get()).ok()?;
        let id = head.chat_id.filter(|id| !id.is_empty())?;
        self.chat_id = Some(id.clone());
        Some(Event::ChatId(id))
    }

    fn fold_content(&mut self, msg: &Message<'_>, content: &str) {
        let id = msg.id();
        let is_empty = match self.draft_mut(id) {
            Some(text) if msg.is_delta() => {
                text.push_str(content);
                text.is_empty()
            }
            Some(text) => {
                text.clear();
                text.push_str(content);
                text.is_empty()
            }
            None if content.is_empty() => true,
            None => {
                self.drafts.push((id.to_string(), content.to_string()));
                false
            }
        };
        if msg.is_final_node() {
            self.make_candidate(Candidate::Final, id);
        } else if !msg.is_in_process() && !is_empty {
            self.make_candidate(Candidate::Complete, id);
        }
        if !is_empty {
            self.make_candidate(Candidate::Latest, id);
        }
    }

    /// Makes `id` the given candidate for the answer. A draft that is no
    /// longer any candidate is dropped, so memory holds the answer, not the
    /// whole conversation. Nothing is allocated when `id` already is it.
    fn make_candidate(&mut self, which: Candidate, id: &str) {
        let slot = match which {
            Candidate::Final => &mut self.final_id,
            Candidate::Complete => &mut self.complete_id,
            Candidate::Latest => &mut self.latest_id,
        };
        if slot.as_deref() == Some(id) {
            return;
        }
        if let Some(old) = slot.replace(id.to_string()) {
            if !self.is_candidate(&old) {
                self.drafts.retain(|(draft, _)| *draft != old);
            }
        }
    }

    fn draft_mut(&mut self, id: &str) -> Option<&mut String> {
        self.drafts
            .iter_mut()
            .rev()
            .find(|(draft, _)| draft == id)
            .map(|(_, text)| text)
    }

    fn draft(&self, id: &str) -> Option<&str> {
        self.drafts
            .iter()
            .rev()
            .find(|(draft, _)| draft == id)
            .map(|(_, text)| text.as_str())
    }

    fn is_candidate(&self, id: &str) -> bool {
        [&self.final_id, &self.complete_id, &self.latest_id]
            .iter()
            .any(|candidate| candidate.as_deref() == Some(id))
    }

    fn apply_tool_call(&mut self, id: &str, call: &mut message::ToolCall<'_>) -> Option<Event> {
        let position = self.pending.iter().position(|p| p.id == id);
        let Some(head) = call.head.take() else {
            if position.is_none() {
                self.pending.push(ToolCallRecord {
                    id: id.to_string(),
                    name: call.name.as_deref().unwrap_or_default().to_string(),
                    input: call.input.map_or(Value::Null, decode_embedded_json),
                    result: None,
                    error: None,
                });
            }
            return None;
        };
        let started = position.map(|i| self.pending.remove(i));
        let name = call
            .name
            .as_deref()
            .map(str::to_string)
            .or_else(|| started.as_ref().map(|p| p.name.clone()))
            .unwrap_or_default();
        let mut input = match (call.input, started) {
            (Some(raw), _) => decode_embedded_json(raw),
            (None, Some(started)) => started.input,
            (None, None) => Value::Null,
        };
        let error = tool_error(&head.fields);
        if !self.tools_called.contains(&name) {
            self.tools_called.push(name.clone());
        }
        if error.is_some() {
            self.tool_errors += 1;
        }
        let is_sql = is_sql_call(&name, &head);
        let keeps_sql = is_sql && self.keeps_next_sql(error.is_some());
        // Under `--query last` each successful result replaces the one
        // before, so it is kept unbuilt until the output asks for it.
        let latest = keeps_sql && self.retention == Retention::Selected(QuerySelector::Last);
        // Rows are built only when something keeps them now (a kept SQL
        // result, or every tool call's record with `Retention::All`);
        // otherwise they are only counted, and only the latest result keeps
        // its head, to build later.
        let builds_rows = (keeps_sql && !latest) || self.retention == Retention::All;
        let row_count = (!builds_rows).then(|| head.row_count());
        let (result, unbuilt) = match (builds_rows, latest) {
            (true, _) => (head.into_full(), None),
            (false, true) => (head.fields.clone(), Some(head)),
            (false, false) => (head.fields, None),
        };
        let mut sql = None;
        if is_sql {
            let built = SqlResult::from_tool_call(id, &name, &input, &result);
            sql = Some(self.count_sql(&built, row_count.unwrap_or(built.rows.len())));
            if let (true, Some(head)) = (latest, unbuilt) {
                self.latest_sql = Some(LatestSql {
                    id: id.to_string(),
                    tool: name.clone(),
                    input: std::mem::take(&mut input),
                    head,
                    built: OnceCell::new(),
                });
            } else if keeps_sql {
                self.queries.push(built);
            }
        }
        if self.retention == Retention::All {
            self.tool_calls.push(ToolCallRecord {
                id: id.to_string(),
                name: name.clone(),
                input,
                result: Some(result),
                error: error.clone(),
            });
        }
        Some(Event::ToolFinished(ToolSummary { name, error, sql }))
    }

    /// Whether the output keeps the next SQL result (it has not been
    /// counted yet), given whether it failed.
    fn keeps_next_sql(&self, failed: bool) -> bool {
        match self.retention {
            Retention::All => true,
            Retention::Selected(QuerySelector::Last) => !failed,
            Retention::Selected(QuerySelector::Index(n)) => n == self.sql_seen + 1,
            Retention::Nothing => false,
        }
    }

    /// Counts a SQL result of `rows` rows in the stream, and returns what a
    /// note says of it.
    fn count_sql(&mut self, result: &SqlResult, rows: usize) -> SqlSummary {
        self.sql_seen += 1;
        if let Some(sql) = &result.sql {
            self.sql_queries.push(sql.clone());
        }
        if let Some(error) = &result.error {
            self.last_sql_error = Some(error.clone());
        }
        SqlSummary {
            number: self.sql_seen,
            title: result.title.clone(),
            rows,
            total_rows: result.total_rows,
        }
    }

    /// The chat id from `__cutoff__`, once seen.
    pub fn chat_id(&self) -> Option<&str> {
        self.chat_id.as_deref()
    }

    /// The final answer and how it was found: the last `final`-node
    /// message, else the last complete assistant content message, else the
    /// last assistant content at all.
    pub fn answer(&self) -> Option<(&str, AnswerSource)> {
        let text = |id: &Option<String>| id.as_deref().and_then(|id| self.draft(id));
        if let Some(answer) = text(&self.final_id) {
            return Some((answer, AnswerSource::Final));
        }
        text(&self.complete_id)
            .or_else(|| text(&self.latest_id))
            .map(|answer| (answer, AnswerSource::Fallback))
    }

    /// True when the stream answered no question but showed the thread's
    /// state (the no-`input` mode of the API).
    pub fn is_thread_state(&self) -> bool {
        self.thread.is_some() && !self.saw_question
    }

    /// The thread's messages, in the no-question mode.
    pub fn thread(&self) -> &[ThreadMessage] {
        self.thread.as_deref().unwrap_or_default()
    }

    /// Whether every tool result is kept with its rows ([`Retention::All`]):
    /// then the rows are best parsed with the line, on either thread (see
    /// [`Message::parse_with_rows`]).
    pub fn keeps_every_result(&self) -> bool {
        self.retention == Retention::All
    }

    /// The SQL results kept (all of them with [`Retention::All`]).
    pub fn queries(&self) -> &[SqlResult] {
        match &self.latest_sql {
            Some(latest) => std::slice::from_ref(latest.result()),
            None => &self.queries,
        }
    }

    /// The SQL results kept, to complete them (`--all-rows`).
    pub fn queries_mut(&mut self) -> impl Iterator<Item = &mut SqlResult> {
        if let Some(latest) = self.latest_sql.take() {
            self.queries = vec![latest.into_result()];
        }
        self.queries.iter_mut()
    }

    /// Finished tool calls, then the ones that never finished (result
    /// `None`); empty unless [`Retention::All`].
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCallRecord> {
        let keep_unfinished = self.retention == Retention::All;
        self.tool_calls
            .iter()
            .chain(self.pending.iter().filter(move |_| keep_unfinished))
    }

    /// The SQL result `selector` picks, or a fault saying why there is none:
    /// no SQL result or index out of range (exit 7), the chosen query
    /// failed (exit 8).
    pub fn select(&self, selector: QuerySelector) -> Result<&SqlResult, Fault> {
        let none = || {
            Fault::new(
                ExitCode::BadStream,
                "the stream has no SQL result: the agent ran no query (try -o answer or -o json)",
            )
        };
        match selector {
            QuerySelector::Last => {
                let found = match self.retention {
                    Retention::All => self.queries.iter().rev().find(|q| q.error.is_none()),
                    _ => self.queries().last(),
                };
                found.ok_or_else(|| match &self.last_sql_error {
                    None => none(),
                    Some(error) => Fault::new(
                        ExitCode::ToolError,
                        format!("every SQL query of the stream failed; the last error: {error}"),
                    ),
                })
            }
            QuerySelector::Index(n) => {
                if self.sql_seen == 0 {
                    return Err(none());
                }
                let found = match self.retention {
                    Retention::All => self.queries.get(n - 1),
                    _ => self.queries.first(),
                };
                let result = found.ok_or_else(|| {
                    Fault::new(
                        ExitCode::BadStream,
                        format!("--query {n}: the stream has only {} SQL result(s)", self.sql_seen),
                    )
                })?;
                match &result.error {
                    Some(error) => Err(Fault::new(
                        ExitCode::ToolError,
                        format!("SQL query {n} failed: {error}"),
                    )),
                    None => Ok(result),
                }
            }
        }
    }

    /// The tools the agent called (finished calls), each name once, in order.
    pub fn tools_called(&self) -> &[String] {
        &self.tools_called
    }

    /// The SQL of every SQL tool call, in order.
    pub fn sql_queries(&self) -> &[String] {
        &self.sql_queries
    }

    /// How many tool results carried an error.
    pub fn tool_errors(&self) -> usize {
        self.tool_errors
    }

    /// In-stream `{"error": …}` lines, in order.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// The `__suspended__` text, if the chat was suspended.
    pub fn suspended(&self) -> Option<&str> {
        self.suspended.as_deref()
    }

    /// True after `__aborted__`.
    pub fn aborted(&self) -> bool {
        self.aborted
    }

    /// The `__usage__` object, when the service sent one.
    pub fn usage(&self) -> Option<&Value> {
        self.usage.as_ref()
    }
}

/// Reads `state.messages` (LangChain-serialised, or plain `role`/`content`
/// objects) into user and assistant messages with text; others are skipped.
fn thread_messages(state: Raw<'_>) -> Vec<ThreadMessage> {
    let Ok(parsed) = serde_json::from_str::<StateMessages<'_>>(state.get()) else {
        return Vec::new();
    };
    parsed
        .messages
        .unwrap_or_default()
        .into_iter()
        .filter_map(|raw| serde_json::from_str::<Value>(raw.get()).ok())
        .filter_map(|value| {
            let role = thread_role(&value)?;
            let body = value.get("kwargs").or_else(|| value.get("data")).unwrap_or(&value);
            let content = content_text(body.get("content")?);
            (!content.trim().is_empty()).then_some(ThreadMessage { role, content })
        })
        .collect()
}

fn thread_role(value: &Value) -> Option<&'static str> {
    let class = value
        .get("id")
        .and_then(Value::as_array)
        .and_then(|path| path.last())
        .and_then(Value::as_str);
    let name = class
        .or_else(|| value.get("role").and_then(Value::as_str))
        .or_else(|| value.get("type").and_then(Value::as_str))?;
    match name {
        "HumanMessage" | "HumanMessageChunk" | "user" | "human" => Some("user"),
        "AIMessage" | "AIMessageChunk" | "assistant" | "ai" => Some("assistant"),
        _ => None,
    }
}

/// A LangChain content: a string, or a list of blocks whose `text` parts are joined.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block.as_str().or_else(|| block.get("text").and_then(Value::as_str)))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(lines: &[&str], retention: Retention) -> Transcript {
        let mut transcript = Transcript::new(retention);
        for line in lines {
            let mut msg = Message::parse(line.as_bytes()).unwrap().unwrap();
            transcript.apply(&mut msg);
        }
        transcript
    }

    #[test]
    fn deltas_fold_by_id_and_a_whole_message_replaces_them() {
        let t = fold(
            &[
                r#"{"id":"a","role":"assistant","content":"Rev","graphPath":["final"],"isDelta":true,"isInProcess":true}"#,
                r#"{"id":"b","role":"assistant","content":"noise","isDelta":true,"isInProcess":true}"#,
                r#"{"id":"a","role":"assistant","content":"enue","graphPath":["final"],"isDelta":true,"isInProcess":true}"#,
            ],
            Retention::Nothing,
        );
        assert_eq!(t.answer(), Some(("Revenue", AnswerSource::Final)));
        let t = fold(
            &[
                r#"{"id":"a","role":"assistant","content":"Rev","graphPath":["final"],"isDelta":true}"#,
                r#"{"id":"a","role":"assistant","content":"Whole text","graphPath":["final"],"isDelta":false}"#,
            ],
            Retention::Nothing,
        );
        assert_eq!(t.answer(), Some(("Whole text", AnswerSource::Final)));
    }

    #[test]
    fn without_a_final_node_the_last_complete_message_is_the_answer() {
        let t = fold(
            &[
                r#"{"id":"x","role":"assistant","content":"first","isInProcess":false}"#,
                r#"{"id":"y","role":"assistant","content":"second","isInProcess":false}"#,
                r#"{"id":"z","role":"assistant","content":"still typing","isDelta":true,"isInProcess":true}"#,
            ],
            Retention::Nothing,
        );
        assert_eq!(t.answer(), Some(("second", AnswerSource::Fallback)));
        assert_eq!(t.drafts.len(), 2, "superseded drafts are dropped");
    }

    #[test]
    fn tool_calls_pair_start_and_result_and_errors_are_counted() {
        let t = fold(
            &[
                r#"{"id":"t1","role":"assistant","toolCall":{"name":"cubeSqlApi","input":"{\"query\":\"SELECT 1\"}"},"isInProcess":true}"#,
                r#"{"id":"t1","role":"assistant","toolCall":{"name":"cubeSqlApi","result":"{\"error\":\"Error: BadRequestError: Bad branch\"}"},"isInProcess":false}"#,
            ],
            Retention::All,
        );
        let calls: Vec<_> = t.tool_calls().collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].input, serde_json::json!({"query": "SELECT 1"}));
        assert_eq!(calls[0].error.as_deref(), Some("Error: BadRequestError: Bad branch"));
        assert_eq!(t.tool_errors(), 1);
        assert_eq!(t.queries()[0].sql.as_deref(), Some("SELECT 1"));
        assert_eq!(t.select(QuerySelector::Last).unwrap_err().code, ExitCode::ToolError);
    }

    #[test]
    fn the_last_result_is_built_only_when_asked_for_and_equals_the_kept_one() {
        let sql = |id: &str, month: &str, error: bool| {
            let result = if error {
                r#"{\"error\":\"Error: no such member\"}"#.to_string()
            } else {
                format!(
                    r#"{{\"schema\":[{{\"name\":\"m\",\"column_type\":\"String\"}},{{\"name\":\"n\",\"column_type\":\"Int64\"}}],\"data\":[[\"{month}\",\"1\"],[\"{month}\",\"2\"]],\"totalRows\":5}}"#
                )
            };
            format!(
                r#"{{"id":"{id}","role":"assistant","toolCall":{{"name":"semanticSqlApi","input":"{{\"sqlQuery\":\"SELECT {id}\"}}","result":"{result}"}}}}"#
            )
        };
        let lines = [
            sql("s1", "2024-01", false),
            sql("s2", "2024-02", false),
            sql("s3", "", true),
        ];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let mut last = fold(&lines, Retention::Selected(QuerySelector::Last));
        let all = fold(&lines, Retention::All);
        let expected = all.select(QuerySelector::Last).unwrap();
        assert_eq!(expected.rows[0][0], "2024-02");
        assert_eq!(last.select(QuerySelector::Last).unwrap(), expected);
        assert_eq!(last.queries(), std::slice::from_ref(expected));
        assert_eq!(last.queries_mut().collect::<Vec<_>>(), vec![&mut expected.clone()]);
        assert_eq!(last.sql_queries(), ["SELECT s1", "SELECT s2", "SELECT s3"]);
    }

    #[test]
    fn thread_state_reads_langchain_messages() {
        let t = fold(
            &[
                r#"{"id":"__cutoff__","role":"assistant","state":{"chatId":"c1","isStreaming":false}}"#,
                r#"{"id":"__state__","state":{"messages":[{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"Hi?"}},{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],"kwargs":{"content":[{"type":"text","text":"Hello."}]}},{"lc":1,"type":"constructor","id":["langchain_core","messages","ToolMessage"],"kwargs":{"content":"{}"}}]}}"#,
            ],
            Retention::Nothing,
        );
        assert_eq!(t.chat_id(), Some("c1"));
        assert!(t.is_thread_state());
        assert_eq!(
            t.thread(),
            &[
                ThreadMessage {
                    role: "user",
                    content: "Hi?".into()
                },
                ThreadMessage {
                    role: "assistant",
                    content: "Hello.".into()
                }
            ]
        );
    }
}
