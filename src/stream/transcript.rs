//! Folds the stream's messages into what the outputs and the exit code
//! need: chat id, final answer (with the fallback rule), tool calls paired
//! start → result, in-stream errors, suspension, abort, usage, and the
//! thread's messages in the no-question mode. A finished tool call is not
//! kept: it is handed out as an [`Event`], and each output keeps what it
//! needs of it, so memory does not grow with the length of the stream.

use std::borrow::Cow;

use indexmap::{IndexMap, IndexSet};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use super::message::{
    decode_embedded_json, json_text, Message, ToolCall, ABORTED_ID, CUTOFF_ID, STATE_ID, SUSPENDED_ID, USAGE_ID,
};
use crate::domain::UsageRecord;
use crate::redact::redact;
use crate::results::{is_sql_call, tool_error, SqlResult, ToolResult, SQL_INPUT_KEYS};

/// A tool call, with input and result decoded from their JSON strings
/// (serialized as an entry of `-o json`'s `toolCalls`).
#[derive(Clone, Debug, Serialize)]
pub struct ToolCallRecord {
    /// The tool call's message id.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The parsed input.
    pub input: Value,
    /// The result; `None` when the call never finished.
    pub result: Option<ToolResult>,
    /// The result's `error`, when the tool failed.
    pub error: Option<String>,
}

/// Decodes a tool's result (see [`decode_embedded_json`]) into a
/// [`ToolResult`]; its rows are not parsed into values.
fn decode_result(raw: &RawValue) -> ToolResult {
    ToolResult::new(json_text(raw.get()).into_owned())
}

/// A message of the thread, from `__state__` in the no-question mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadMessage {
    /// `user` or `assistant`.
    pub role: &'static str,
    /// The message text.
    pub content: String,
}

/// A tool call that just finished, and its SQL result when it ran a query.
#[derive(Clone, Debug)]
pub struct FinishedTool {
    /// The call, its input and result parsed.
    pub call: ToolCallRecord,
    /// For a SQL call: its 1-based number among the stream's SQL results
    /// (`--query N`) and its table.
    pub sql: Option<(usize, SqlResult)>,
}

/// Something a line changed that the outputs, the notes and the checks
/// hear about now.
#[derive(Clone, Debug)]
pub enum Event {
    /// `__cutoff__` after replayed history: what came before belongs to the
    /// thread's past, and whatever was kept of it must be dropped.
    TurnStarts,
    /// The chat id became known (from `__cutoff__`).
    ChatId(String),
    /// A tool call finished.
    ToolFinished(Box<FinishedTool>),
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
    /// A pending suspension, in a thread read's `__cutoff__`.
    #[serde(default)]
    suspended: Option<PendingSuspension>,
}

#[derive(Deserialize)]
struct PendingSuspension {
    #[serde(rename = "messageId")]
    message_id: Option<String>,
}

#[derive(Deserialize)]
struct StateMessages<'a> {
    #[serde(borrow, default)]
    messages: Option<Vec<&'a RawValue>>,
}

/// What of the turn a transcript keeps beyond what every output needs
/// (its ids, status, SQL results as events): an output that does not
/// show the answer or every tool call's input spares their memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keep {
    /// How much of the answer's text: its first bytes (what the history
    /// records, and enough to tell a question back), or all of it.
    pub answer_text: AnswerText,
    /// The whole input of a tool call waiting for its result (else only
    /// the keys a SQL result is read from: see [`SQL_INPUT_KEYS`]).
    pub tool_inputs: bool,
}

impl Default for Keep {
    fn default() -> Self {
        Keep {
            answer_text: AnswerText::Whole,
            tool_inputs: true,
        }
    }
}

/// How much of the answer's text a transcript keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerText {
    /// At most this many bytes (cut at a character's boundary): memory
    /// stays bounded however long the answer.
    Head(usize),
    /// All of it.
    Whole,
}

/// A tool call waiting for its result: what its result line may leave
/// out (kept small: a turn may start very many).
#[derive(Debug)]
struct Started {
    name: Box<str>,
    /// The input, unless it is null.
    input: Option<Box<Value>>,
}

/// A message that can still be the answer, its content folded.
#[derive(Debug)]
struct Draft {
    id: String,
    /// The content so far; left empty when the text is not kept.
    text: String,
    /// Some of the content was not kept ([`AnswerText::Head`]).
    cut: bool,
    /// No content came yet (or a whole message replaced it with none).
    empty: bool,
}

impl Draft {
    /// Adds `content` to the text, as much as `keep` allows.
    fn push(&mut self, content: &str, keep: AnswerText) {
        let room = match keep {
            AnswerText::Head(limit) => limit.saturating_sub(self.text.len()),
            AnswerText::Whole => usize::MAX,
        };
        if content.len() <= room {
            self.text.push_str(content);
            return;
        }
        let mut end = room;
        while !content.is_char_boundary(end) {
            end -= 1;
        }
        self.text.push_str(&content[..end]);
        self.cut = true;
    }
}

/// The folded stream. Feed it every message with [`Transcript::apply`].
#[derive(Default)]
pub struct Transcript {
    chat_id: Option<String>,
    keep: Keep,
    /// The few messages that can still be the answer (a short list: a
    /// linear search beats hashing every line).
    drafts: Vec<Draft>,
    final_id: Option<String>,
    /// The `final` message's last line completed it (`isDelta: false`, or
    /// not in process).
    final_complete: bool,
    complete_id: Option<String>,
    latest_id: Option<String>,
    /// Started tool calls still waiting for their result.
    pending: IndexMap<String, Started>,
    sql_seen: usize,
    tool_errors: usize,
    errors: Vec<String>,
    suspended: Option<String>,
    aborted: bool,
    /// The `__usage__` object as sent, and read once into its counts.
    usage: Option<(Value, UsageRecord)>,
    saw_question: bool,
    /// Whether the request was a thread read (no question), when known;
    /// `None` for a saved stream, whose request is not known.
    thread_read: Option<bool>,
    /// A `__cutoff__` arrived: what follows is the turn.
    cutoff_seen: bool,
    /// The message of a pending suspension a thread read reports.
    pending_suspension: Option<String>,
    /// The `messageId` the question was sent with (or `__suspended__` named).
    message_id: Option<String>,
    thread: Option<Vec<ThreadMessage>>,
    tools_called: IndexSet<String>,
    sql_queries: Vec<String>,
}

impl Transcript {
    /// An empty transcript.
    pub fn new() -> Self {
        Transcript::default()
    }

    /// Says what was sent: a thread read (no question) or a turn. Without
    /// it (a saved stream), a stream with the thread's state and no user
    /// message is taken as a thread read.
    pub fn set_thread_read(&mut self, thread_read: bool) {
        self.thread_read = Some(thread_read);
    }

    /// Says what to keep beyond what every output needs (all of it
    /// unless told).
    pub fn keep(&mut self, keep: Keep) {
        self.keep = keep;
    }

    /// Says which `messageId` the question was sent with.
    pub fn set_message_id(&mut self, message_id: Option<String>) {
        self.message_id = message_id;
    }

    /// The turn goes on in a new connection: a suspension is over.
    pub fn resumed(&mut self) {
        self.suspended = None;
    }

    /// The question's `messageId`: as sent, or as `__suspended__` named it.
    pub fn message_id(&self) -> Option<&str> {
        self.message_id.as_deref()
    }

    /// Folds one message in; returns what the outputs should hear about
    /// now, in order (most lines make no event).
    pub fn apply(&mut self, msg: &Message<'_>) -> Vec<Event> {
        let mut events = Vec::new();
        // In a turn asked of the service, the messages before `__cutoff__`
        // are the thread's past: not even noted. (In a saved stream, whose
        // request is not known, they are told apart when the cutoff comes.)
        if self.thread_read == Some(false) && !self.cutoff_seen && msg.role.is_some() && msg.id() != CUTOFF_ID {
            return events;
        }
        if msg.id() == CUTOFF_ID {
            self.cutoff_seen = true;
        }
        if msg.id() == CUTOFF_ID && self.thread_read != Some(false) && self.has_history() {
            self.forget_history();
            events.push(Event::TurnStarts);
        }
        events.extend(self.apply_line(msg));
        events
    }

    /// True when lines of a turn came before (`__cutoff__` then marks them
    /// as the thread's replayed past).
    fn has_history(&self) -> bool {
        self.saw_question || !self.drafts.is_empty() || !self.tools_called.is_empty() || !self.errors.is_empty()
    }

    /// Forgets the turn folded so far, keeping the chat id and the thread.
    fn forget_history(&mut self) {
        let (chat_id, thread, message_id) = (self.chat_id.take(), self.thread.take(), self.message_id.take());
        *self = Transcript {
            chat_id,
            thread,
            message_id,
            keep: self.keep,
            thread_read: self.thread_read,
            cutoff_seen: self.cutoff_seen,
            ..Transcript::default()
        };
    }

    fn apply_line(&mut self, msg: &Message<'_>) -> Option<Event> {
        match msg.id() {
            CUTOFF_ID | STATE_ID => return self.apply_state(msg),
            SUSPENDED_ID => {
                self.suspended = Some(msg.error_text().unwrap_or_else(|| "the chat was suspended".into()));
                if let Some(id) = msg.message_id() {
                    self.message_id = Some(id.to_string());
                }
                return None;
            }
            ABORTED_ID => {
                self.aborted = true;
                return None;
            }
            USAGE_ID => {
                self.usage = msg
                    .usage()
                    .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
                    .map(|sent| {
                        let record = UsageRecord::of(&sent);
                        (sent, record)
                    });
                return None;
            }
            _ => {}
        }
        if let Some(call) = msg.tool_call() {
            return self.apply_tool_call(msg.id(), call);
        }
        if msg.role.is_none() {
            if let Some(error) = msg.error_text() {
                self.errors.push(error);
                return None;
            }
        }
        if msg.is_user() {
            self.saw_question = true;
        } else if msg.is_assistant() {
            if let Some(content) = msg.content() {
                self.fold_content(msg, content);
            }
        }
        None
    }

    fn apply_state(&mut self, msg: &Message<'_>) -> Option<Event> {
        let state = msg.state()?;
        if msg.id() == STATE_ID && (self.thread_read == Some(true) || !self.saw_question) {
            self.thread = Some(thread_messages(state));
        }
        if self.chat_id.is_some() && msg.id() != CUTOFF_ID {
            return None;
        }
        let head: StateHead = serde_json::from_str(state.get()).ok()?;
        if let Some(message_id) = head.suspended.and_then(|s| s.message_id) {
            self.pending_suspension = Some(message_id);
        }
        if self.chat_id.is_some() {
            return None;
        }
        let id = head.chat_id.filter(|id| !id.is_empty())?;
        self.chat_id = Some(id.clone());
        Some(Event::ChatId(id))
    }

    fn fold_content(&mut self, msg: &Message<'_>, content: &str) {
        let id = msg.id();
        let keep = self.keep.answer_text;
        let is_empty = match self.draft_mut(id) {
            Some(draft) => {
                if !msg.is_delta() {
                    draft.text.clear();
                    draft.cut = false;
                    draft.empty = true;
                }
                draft.push(content, keep);
                draft.empty &= content.is_empty();
                draft.empty
            }
            None if content.is_empty() => true,
            None => {
                let mut draft = Draft {
                    id: id.to_string(),
                    text: String::new(),
                    cut: false,
                    empty: false,
                };
                draft.push(content, keep);
                self.drafts.push(draft);
                false
            }
        };
        // A message is completed by a line that is whole (`isDelta: false`)
        // or no longer in process.
        let completed = !msg.is_delta() || !msg.is_in_process();
        if msg.final_node {
            self.make_candidate(Candidate::Final, id);
            self.final_complete = completed;
        } else if completed && !is_empty {
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
                self.drafts.retain(|draft| draft.id != old);
            }
        }
    }

    fn draft_mut(&mut self, id: &str) -> Option<&mut Draft> {
        self.drafts.iter_mut().rev().find(|draft| draft.id == id)
    }

    /// The text of the draft `id` (empty when the text is not kept).
    fn draft(&self, id: &str) -> Option<&str> {
        self.find_draft(id).map(|draft| draft.text.as_str())
    }

    fn find_draft(&self, id: &str) -> Option<&Draft> {
        self.drafts.iter().rev().find(|draft| draft.id == id)
    }

    fn is_candidate(&self, id: &str) -> bool {
        [&self.final_id, &self.complete_id, &self.latest_id]
            .iter()
            .any(|candidate| candidate.as_deref() == Some(id))
    }

    fn apply_tool_call(&mut self, id: &str, call: &ToolCall<'_>) -> Option<Event> {
        let Some(raw_result) = call.result else {
            if !self.pending.contains_key(id) {
                let mut input = call.input.map_or(Value::Null, decode_embedded_json);
                if let (false, Value::Object(fields)) = (self.keep.tool_inputs, &mut input) {
                    fields.retain(|key, _| SQL_INPUT_KEYS.contains(&key.as_str()));
                    if fields.is_empty() {
                        input = Value::Null;
                    }
                }
                let started = Started {
                    name: call.name.as_deref().unwrap_or_default().into(),
                    input: (!input.is_null()).then(|| Box::new(input)),
                };
                self.pending.insert(id.to_string(), started);
            }
            return None;
        };
        // Removed keeping the order of the others (by hash: no quadratic
        // time however many calls are waiting).
        let started = self.pending.shift_remove(id);
        let name = call
            .name
            .as_deref()
            .map(str::to_string)
            .or_else(|| started.as_ref().map(|started| started.name.to_string()))
            .unwrap_or_default();
        let input = match (call.input, started.and_then(|started| started.input)) {
            (Some(raw), _) => decode_embedded_json(raw),
            (None, Some(input)) => *input,
            (None, None) => Value::Null,
        };
        let result = decode_result(raw_result);
        let error = tool_error(&result);
        if !self.tools_called.contains(&name) {
            self.tools_called.insert(name.clone());
        }
        if error.is_some() {
            self.tool_errors += 1;
        }
        let is_sql = is_sql_call(&name, &result);
        let sql = is_sql.then(|| {
            self.sql_seen += 1;
            let table = SqlResult::from_tool_call(id, &name, &input, &result);
            if let Some(sql) = &table.sql {
                self.sql_queries.push(sql.clone());
            }
            (self.sql_seen, table)
        });
        let call = ToolCallRecord {
            id: id.to_string(),
            name,
            input,
            result: Some(result),
            error,
        };
        Some(Event::ToolFinished(Box::new(FinishedTool { call, sql })))
    }

    /// The chat id from `__cutoff__`, once seen.
    pub fn chat_id(&self) -> Option<&str> {
        self.chat_id.as_deref()
    }

    /// The final answer (empty when its text is not kept: see [`Keep`])
    /// and how it was found: the last `final`-node
    /// message once it is complete (or the turn's `__usage__` came: the
    /// service finished), else, when no `final` message came, the last
    /// completed assistant content message. A message still in process is
    /// never the answer: half an answer is none. Every secret is redacted
    /// from the text as assembled (one split between two deltas too).
    pub fn answer(&self) -> Option<(Cow<'_, str>, AnswerSource)> {
        self.answer_as_sent().map(|(text, source)| (redact(text), source))
    }

    /// How the answer was found, when there is one (see
    /// [`Transcript::answer`]), told without redacting its text.
    pub fn answer_source(&self) -> Option<AnswerSource> {
        self.answer_as_sent().map(|(_, source)| source)
    }

    /// The answer's text as the deltas made it, not yet redacted.
    fn answer_as_sent(&self) -> Option<(&str, AnswerSource)> {
        let text = |id: &Option<String>| id.as_deref().and_then(|id| self.draft(id));
        match &self.final_id {
            Some(_) if self.final_finished() => text(&self.final_id).map(|answer| (answer, AnswerSource::Final)),
            Some(_) => None,
            None => text(&self.complete_id).map(|answer| (answer, AnswerSource::Fallback)),
        }
    }

    /// True when the answer's text was kept only in part
    /// ([`AnswerText::Head`]).
    pub fn answer_is_cut(&self) -> bool {
        let id = match &self.final_id {
            Some(id) => Some(id),
            None => self.complete_id.as_ref(),
        };
        id.and_then(|id| self.find_draft(id)).is_some_and(|draft| draft.cut)
    }

    /// The `final` message's text so far, finished or not (what a terminal
    /// shows as it arrives).
    pub fn final_so_far(&self) -> Option<&str> {
        self.final_id.as_deref().and_then(|id| self.draft(id))
    }

    /// True when the `final` message is finished: its last line completed
    /// it, or the turn's `__usage__` (the last line) came after it.
    fn final_finished(&self) -> bool {
        self.final_complete || self.usage.is_some()
    }

    /// True when the stream ended while the agent was still writing: the
    /// `final` message never finished, or, with none, the last content
    /// message never completed.
    pub fn cut_mid_message(&self) -> bool {
        match &self.final_id {
            Some(_) => !self.final_finished(),
            None => self.latest_id.is_some() && self.latest_id != self.complete_id,
        }
    }

    /// True when the stream answered no question but showed the thread's
    /// state (the no-`input` mode of the API).
    pub fn is_thread_state(&self) -> bool {
        match self.thread_read {
            Some(thread_read) => thread_read,
            None => self.thread.is_some() && !self.saw_question,
        }
    }

    /// The message id of a suspended turn a thread read reports
    /// (`state.suspended.messageId` of `__cutoff__`).
    pub fn pending_suspension(&self) -> Option<&str> {
        self.pending_suspension.as_deref()
    }

    /// The thread's messages, in the no-question mode.
    pub fn thread(&self) -> &[ThreadMessage] {
        self.thread.as_deref().unwrap_or_default()
    }

    /// Tool calls that started but never finished (result `None`), in order.
    pub fn unfinished(&self) -> impl Iterator<Item = ToolCallRecord> + '_ {
        self.pending.iter().map(|(id, started)| ToolCallRecord {
            id: id.clone(),
            name: started.name.to_string(),
            input: started.input.as_deref().cloned().unwrap_or_default(),
            result: None,
            error: None,
        })
    }

    /// The agent's question, when the turn asks back instead of answering:
    /// it called no tool at all (no SQL, no other call) and the last
    /// sentence of its final answer ends in `?` (emphasis, quotes and
    /// brackets after it aside).
    pub fn asks_back(&self) -> Option<String> {
        if self.answer_is_cut()
            || !self.tools_called.is_empty()
            || !self.sql_queries.is_empty()
            || self.is_thread_state()
        {
            return None;
        }
        let (answer, source) = self.answer()?;
        let last = answer
            .trim_end()
            .trim_end_matches(['*', '_', '"', '\'', ')', ']', '”', '’', '`', '»', ' ']);
        let asks = source == AnswerSource::Final && (last.ends_with('?') || last.ends_with('？'));
        asks.then(|| answer.trim().to_string())
    }

    /// The tools the agent called (finished calls), each name once, in order.
    pub fn tools_called(&self) -> &IndexSet<String> {
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

    /// What the turn's `__usage__` line reported: its counts and models,
    /// read once as the line came.
    pub fn usage(&self) -> Option<&UsageRecord> {
        self.usage.as_ref().map(|(_, record)| record)
    }

    /// The `__usage__` object as the service sent it (`-o json` shows it
    /// whole, fields unknown to analyst too).
    pub fn usage_sent(&self) -> Option<&Value> {
        self.usage.as_ref().map(|(sent, _)| sent)
    }
}

/// Reads `state.messages` (LangChain-serialised, or plain `role`/`content`
/// objects) into user and assistant messages with text; others are skipped.
fn thread_messages(state: &RawValue) -> Vec<ThreadMessage> {
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

    fn fold(lines: &[&str]) -> (Transcript, Vec<Event>) {
        let mut transcript = Transcript::new();
        let mut events = Vec::new();
        for line in lines {
            let msg = crate::stream::parse::message(line.as_bytes()).unwrap().unwrap();
            events.extend(transcript.apply(&msg));
        }
        (transcript, events)
    }

    #[test]
    fn deltas_fold_by_id_and_a_whole_message_replaces_them() {
        let mut lines = vec![
            r#"{"id":"a","role":"assistant","content":"Rev","graphPath":["final"],"isDelta":true,"isInProcess":true}"#,
            r#"{"id":"b","role":"assistant","content":"noise","isDelta":true,"isInProcess":true}"#,
            r#"{"id":"a","role":"assistant","content":"enue","graphPath":["final"],"isDelta":true,"isInProcess":true}"#,
        ];
        let (t, _) = fold(&lines);
        assert_eq!(
            t.answer(),
            None,
            "a final message still in process is half an answer: none"
        );
        assert!(t.cut_mid_message());
        assert_eq!(t.final_so_far(), Some("Revenue"));
        // The turn's __usage__, its last line, says the service finished.
        lines.push(r#"{"id":"__usage__","type":"usage","usage":{"totalTokens":1}}"#);
        let (t, _) = fold(&lines);
        assert_eq!(t.answer(), Some(("Revenue".into(), AnswerSource::Final)));
        let (t, _) = fold(&[
            r#"{"id":"a","role":"assistant","content":"Rev","graphPath":["final"],"isDelta":true}"#,
            r#"{"id":"a","role":"assistant","content":"Whole text","graphPath":["final"],"isDelta":false}"#,
        ]);
        assert_eq!(t.answer(), Some(("Whole text".into(), AnswerSource::Final)));
    }

    #[test]
    fn without_a_final_node_the_last_complete_message_is_the_answer() {
        let (t, _) = fold(&[
            r#"{"id":"x","role":"assistant","content":"first","isInProcess":false}"#,
            r#"{"id":"y","role":"assistant","content":"second","isInProcess":false}"#,
            r#"{"id":"z","role":"assistant","content":"still typing","isDelta":true,"isInProcess":true}"#,
        ]);
        assert_eq!(t.answer(), Some(("second".into(), AnswerSource::Fallback)));
        assert_eq!(t.drafts.len(), 2, "superseded drafts are dropped");
        assert!(t.cut_mid_message(), "z never completed");
        let (t, _) = fold(&[r#"{"id":"z","role":"assistant","content":"half a","isDelta":true,"isInProcess":true}"#]);
        assert_eq!(t.answer(), None, "a message in process is never the answer");
    }

    #[test]
    fn tool_calls_pair_start_and_result_and_errors_are_counted() {
        let (t, events) = fold(&[
            r#"{"id":"t1","role":"assistant","toolCall":{"name":"cubeSqlApi","input":"{\"query\":\"SELECT 1\"}"},"isInProcess":true}"#,
            r#"{"id":"t2","role":"assistant","toolCall":{"name":"cubeMeta","input":"{}"},"isInProcess":true}"#,
            r#"{"id":"t1","role":"assistant","toolCall":{"name":"cubeSqlApi","result":"{\"error\":\"Error: BadRequestError: Bad branch\"}"},"isInProcess":false}"#,
        ]);
        let [Event::ToolFinished(finished)] = &events[..] else {
            panic!("{events:?}")
        };
        assert_eq!(finished.call.input, serde_json::json!({"query": "SELECT 1"}));
        assert_eq!(
            finished.call.error.as_deref(),
            Some("Error: BadRequestError: Bad branch")
        );
        let (number, sql) = finished.sql.as_ref().unwrap();
        assert_eq!((*number, sql.sql.as_deref()), (1, Some("SELECT 1")));
        assert_eq!(t.tool_errors(), 1);
        let unfinished: Vec<String> = t.unfinished().map(|call| call.name).collect();
        assert_eq!(unfinished, ["cubeMeta"]);
    }

    #[test]
    fn lines_before_the_cutoff_are_the_threads_past() {
        let (t, events) = fold(&[
            r#"{"id":"old-q","role":"user","content":"Yesterday's question"}"#,
            r#"{"id":"old-a","role":"assistant","content":"Yesterday's answer","isDelta":false}"#,
            r#"{"id":"s1","role":"assistant","toolCall":{"name":"cubeSqlApi","input":"{}","result":"{\"error\":\"old\"}"}}"#,
            r#"{"id":"__cutoff__","role":"assistant","state":{"chatId":"c9"}}"#,
            r#"{"id":"new-q","role":"user","content":"Today's question"}"#,
            r#"{"id":"new-a","role":"assistant","content":"Today's answer","isDelta":false}"#,
        ]);
        assert_eq!(t.answer(), Some(("Today's answer".into(), AnswerSource::Fallback)));
        assert_eq!((t.tool_errors(), t.tools_called().len()), (0, 0));
        assert_eq!(t.chat_id(), Some("c9"));
        assert!(matches!(
            events[..],
            [Event::ToolFinished(_), Event::TurnStarts, Event::ChatId(_)]
        ));
        let (_, events) = fold(&[r#"{"id":"__cutoff__","role":"assistant","state":{"chatId":"c9"}}"#]);
        assert!(matches!(events[..], [Event::ChatId(_)]), "no past, no new start");
    }

    #[test]
    fn in_a_turn_asked_of_the_service_the_past_is_not_even_noted() {
        let mut transcript = Transcript::new();
        transcript.set_thread_read(false);
        let mut events = Vec::new();
        for line in [
            r#"{"id":"s1","role":"assistant","toolCall":{"name":"cubeSqlApi","input":"{}","result":"{\"error\":\"old\"}"}}"#,
            r#"{"error":"BadRequestError: Bad branch"}"#,
            r#"{"id":"__cutoff__","role":"assistant","state":{"chatId":"c9"}}"#,
            r#"{"id":"s2","role":"assistant","toolCall":{"name":"cubeMeta","input":"{}","result":"{}"}}"#,
        ] {
            events.extend(transcript.apply(&crate::stream::parse::message(line.as_bytes()).unwrap().unwrap()));
        }
        assert!(
            matches!(events[..], [Event::ChatId(_), Event::ToolFinished(_)]),
            "{events:?}"
        );
        assert_eq!(
            transcript.errors(),
            ["BadRequestError: Bad branch"],
            "an error line is never the past"
        );
    }

    #[test]
    fn thread_state_reads_langchain_messages() {
        let (t, _) = fold(&[
            r#"{"id":"__cutoff__","role":"assistant","state":{"chatId":"c1","isStreaming":false}}"#,
            r#"{"id":"__state__","state":{"messages":[{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"Hi?"}},{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],"kwargs":{"content":[{"type":"text","text":"Hello."}]}},{"lc":1,"type":"constructor","id":["langchain_core","messages","ToolMessage"],"kwargs":{"content":"{}"}}]}}"#,
        ]);
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
