//! One chat turn, shared by `ask` and `check`: the request (sent from a
//! feed's worker), the stream read line by line (teed, forwarded, folded
//! into a transcript, with notes and timings), and the abort when a turn is
//! stopped before it ends.

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use anyhow::Result;
use reqwest::Url;
use serde::Serialize;
use serde_json::Value;

use crate::commands::abort::abort_chat;
use crate::config::{abort_url, Secret, SessionSettings};
use crate::exit::{bad_stream, ExitCode, Fault};
use crate::feed::{stop_of, Feed, Limits, Stop};
use crate::http::{root_causes, shorten, Credential, Http, Retry};
use crate::output::Notes;
use crate::stream::lines::{Line, LineReader};
use crate::stream::message::{Message, ParseError};
use crate::stream::parallel::fold_batch;
use crate::stream::transcript::{Event, ToolSummary, Transcript};

/// The time an abort may take when a turn stops early, retries included;
/// the process moves on soon after, answered or not.
pub const ABORT_BUDGET: Duration = Duration::from_secs(5);

/// What is accepted as the chat stream's content type.
const ACCEPT_STREAM: &str = "application/x-ndjson, application/json";

/// The chat request body (API document 2.2); unset fields are omitted.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatRequest<'a> {
    /// The question; none asks for the thread's state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<&'a str>,
    /// The thread to continue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<&'a str>,
    /// Who asks.
    pub session_settings: &'a SessionSettings,
    /// A development branch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_branch_name: Option<&'a str>,
    /// Whether that branch is the default one (sent only with a branch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_default_branch: Option<bool>,
}

/// Where the chat service is and who asks: what every turn and its abort need.
#[derive(Clone)]
pub struct ChatClient {
    http: Http,
    url: Url,
    key: Secret,
    settings: SessionSettings,
}

impl ChatClient {
    /// A client of the chat at `url` (validated), as the user `settings`.
    pub fn new(http: Http, url: Url, key: Secret, settings: SessionSettings) -> Self {
        ChatClient {
            http,
            url,
            key,
            settings,
        }
    }

    /// The identity every request of this client carries.
    pub fn settings(&self) -> &SessionSettings {
        &self.settings
    }

    /// Starts a turn: the request is sent from the feed's worker, so a
    /// signal, the deadline or a stall stop it even before the answer starts.
    pub fn start(&self, body: Value, limits: Limits, started: Instant) -> Feed {
        let (http, url, key) = (self.http.clone(), self.url.clone(), self.key.clone());
        let send = move || -> Result<Box<dyn Read + Send>> {
            Ok(Box::new(http.post_json(
                &url,
                Credential::ApiKey(&key),
                &body,
                ACCEPT_STREAM,
            )?))
        };
        Feed::start(send, limits, started)
    }

    /// Aborts `chat_id` as the user who asked, within [`ABORT_BUDGET`].
    pub fn abort(&self, chat_id: &str) -> Result<()> {
        let url = abort_url(&self.url)?;
        abort_chat(
            &self.http,
            &url,
            &self.key,
            chat_id,
            &self.settings,
            Retry::short_call(3, Some(ABORT_BUDGET)),
        )
    }
}

/// How reading a stream ended.
pub enum StreamEnd {
    /// The stream ended, well or with the failure given (cut, malformed).
    Ended(Option<anyhow::Error>),
    /// Stopped early: a signal, the deadline, or a stall.
    Stopped(Stop),
    /// The reader of the forwarded lines went away (`| head`).
    ReaderGone,
}

/// When things happened in a turn, counted from its start.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    /// The first line of the stream arrived.
    pub first_byte: Option<Duration>,
    /// The first SQL result arrived.
    pub first_sql: Option<Duration>,
    /// The final answer began.
    pub answer: Option<Duration>,
    /// The stream ended (or was stopped).
    pub total: Duration,
}

/// What the reader of a stream is told as it goes.
pub trait Observer {
    /// Something a person should hear about happened (see [`Event`]).
    fn event(&mut self, _event: &Event) {}

    /// A line arrived, with its message when it is one, after the message
    /// was folded into `transcript`. A `BrokenPipe` error ends the read as
    /// [`StreamEnd::ReaderGone`].
    fn line(&mut self, _line: &Line<'_>, _message: Option<&Message<'_>>, _transcript: &Transcript) -> io::Result<()> {
        Ok(())
    }
}

/// An observer that ignores everything (`check` runs cases silently).
pub struct Silent;

impl Observer for Silent {}

/// Reads a stream to its end: every line's bytes go to `tee`, every message
/// into `transcript`, and `observer` hears of each event and line. Only
/// unexpected errors (writing the tee or the observer's output) are errors.
pub fn read_stream(
    source: impl Read,
    transcript: &mut Transcript,
    mut tee: Option<&mut dyn Write>,
    observer: &mut dyn Observer,
    started: Instant,
) -> Result<(StreamEnd, Timings)> {
    let mut reader = LineReader::new(source);
    let mut timings = Timings::default();
    let with_rows = transcript.keeps_every_result();
    let end = loop {
        let batch = match reader.next_batch() {
            Ok(Some(batch)) => batch,
            Ok(None) => break StreamEnd::Ended(None),
            Err(err) => break stream_error(&err, transcript),
        };
        timings.first_byte.get_or_insert_with(|| started.elapsed());
        let end = fold_batch(
            batch,
            |line| parse_line(line, with_rows),
            |line, parsed| {
                let tee = tee.as_deref_mut();
                fold_line(line, parsed, transcript, tee, observer, &mut timings, started).transpose()
            },
        );
        if let Some(end) = end {
            break end?;
        }
    };
    timings.total = started.elapsed();
    Ok((end, timings))
}

/// A line read as a message (`None` for a blank line), or why it is not one.
type Parsed<'a> = Result<Option<Message<'a>>, ParseError>;

/// Reads a line as a message, with its tool result's rows when `with_rows`
/// (the transcript keeps every result).
fn parse_line<'a>(line: &Line<'a>, with_rows: bool) -> Parsed<'a> {
    match with_rows {
        true => Message::parse_with_rows(line.content()),
        false => Message::parse(line.content()),
    }
}

/// Folds one line in: its bytes to `tee`, its message into `transcript`
/// and `timings`, then `observer` hears of it. `Some` when the stream ends
/// with this line (a stop after it, a reader gone, a line that is not a
/// message).
fn fold_line<'t>(
    line: &Line<'_>,
    parsed: Parsed<'_>,
    transcript: &mut Transcript,
    tee: Option<&mut (dyn Write + 't)>,
    observer: &mut dyn Observer,
    timings: &mut Timings,
    started: Instant,
) -> Result<Option<StreamEnd>> {
    if let Some(tee) = tee {
        tee.write_all(line.bytes)
            .map_err(|err| Fault::new(ExitCode::Unexpected, format!("writing the saved stream: {err}")))?;
    }
    let (mut message, failure) = match parsed {
        Ok(message) => (message, None),
        Err(err) => (None, Some(err)),
    };
    if let Some(message) = &mut message {
        if let Some(event) = transcript.apply(message) {
            if matches!(&event, Event::ToolFinished(tool) if tool.sql.is_some()) {
                timings.first_sql.get_or_insert_with(|| started.elapsed());
            }
            observer.event(&event);
        }
        if timings.answer.is_none() && message.is_final_node() && transcript.answer().is_some() {
            timings.answer = Some(started.elapsed());
        }
    }
    match observer.line(line, message.as_ref(), transcript) {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => return Ok(Some(StreamEnd::ReaderGone)),
        Err(err) => return Err(err.into()),
        Ok(()) => {}
    }
    if let Some(stop) = line.followed_by.and_then(stop_of) {
        return Ok(Some(StreamEnd::Stopped(stop)));
    }
    Ok(failure.map(|err| StreamEnd::Ended(Some(parse_failure(&err, line.number, line.is_terminated(), transcript)))))
}

/// How a read error ends the stream: a stop, a line over the limit, or a cut.
fn stream_error(err: &io::Error, transcript: &Transcript) -> StreamEnd {
    if let Some(stop) = stop_of(err) {
        return StreamEnd::Stopped(stop);
    }
    if err.kind() == io::ErrorKind::InvalidData {
        return StreamEnd::Ended(Some(bad_stream(format!("malformed stream: {err}"))));
    }
    let cause = err
        .get_ref()
        .map_or_else(|| err.to_string(), |inner| root_causes(inner));
    StreamEnd::Ended(Some(bad_stream(format!(
        "the stream was cut before it ended ({cause}){}",
        resume_hint(transcript)
    ))))
}

/// The failure for a line that is not a message: a cut when it is the
/// unterminated last line, a malformed stream otherwise.
fn parse_failure(err: &ParseError, number: u64, terminated: bool, transcript: &Transcript) -> anyhow::Error {
    match (err, terminated) {
        (err, false) => {
            let detail = match err {
                ParseError::Invalid(text) => text,
                ParseError::NotAnObject => "not a JSON object",
            };
            bad_stream(format!(
                "the stream was cut in the middle of line {number} ({detail}){}",
                resume_hint(transcript)
            ))
        }
        (ParseError::Invalid(text), true) => {
            bad_stream(format!("malformed stream: line {number} is not valid JSON: {text}"))
        }
        (ParseError::NotAnObject, true) => {
            bad_stream(format!("malformed stream: line {number} is JSON but not an object"))
        }
    }
}

fn resume_hint(transcript: &Transcript) -> String {
    match transcript.chat_id() {
        Some(id) => format!("; see where the thread stands with: analyst ask --chat-id {id}"),
        None => String::new(),
    }
}

/// Notes of one kind (tool failures, truncated results) printed before the
/// rest are summed up in one line, so a long chat does not flood stderr.
const NOTES_OF_A_KIND: usize = 5;

/// Prints the note each event deserves: the chat id, a tool's failure, a
/// truncated result and how to get all its rows. Past
/// [`NOTES_OF_A_KIND`] failures or truncated results, one line says that
/// more are not listed.
pub struct EventNotes<'a> {
    notes: &'a Notes,
    failures: usize,
    truncated: usize,
}

impl<'a> EventNotes<'a> {
    /// Notes printed through `notes` (so `-q` silences them).
    pub fn new(notes: &'a Notes) -> Self {
        EventNotes {
            notes,
            failures: 0,
            truncated: 0,
        }
    }

    /// Prints what `event` deserves.
    pub fn note(&mut self, event: &Event) {
        match event {
            Event::ChatId(id) => self.notes.info(&format!("chat: {id}")),
            Event::ToolFinished(tool) => self.tool_finished(tool),
        }
    }

    fn tool_finished(&mut self, tool: &ToolSummary) {
        if let Some(error) = &tool.error {
            let text = format!("tool {} failed: {}", tool.name, shorten(error));
            limited(
                self.notes,
                &mut self.failures,
                &text,
                "further tool failures are not listed; -o json has them all",
            );
        }
        if let Some(sql) = tool.sql.as_ref().filter(|_| tool.error.is_none()) {
            if let Some(total) = sql.total_rows.filter(|&total| total > sql.rows as u64) {
                let title = sql.title.as_deref().map(|t| format!(" \"{t}\"")).unwrap_or_default();
                let text = format!(
                    "SQL result {}{title} is truncated: {} of {total} rows in the stream; --all-rows fetches every row (or pipe -o raw into 'analyst rows --query {}')",
                    sql.number, sql.rows, sql.number
                );
                let more = "further truncated SQL results are not listed; -o json marks each one";
                limited(self.notes, &mut self.truncated, &text, more);
            }
        }
    }
}

/// Warns `text` while fewer than [`NOTES_OF_A_KIND`] of its kind were
/// printed (`count`), then `more` once, then nothing.
fn limited(notes: &Notes, count: &mut usize, text: &str, more: &str) {
    match *count {
        n if n < NOTES_OF_A_KIND => notes.warn(text),
        NOTES_OF_A_KIND => notes.warn(more),
        _ => {}
    }
    *count += 1;
}

/// Aborts the turn's chat when there is one to abort (`client` is `None`
/// for a replayed stream) and says what happened, as a clause to append to
/// the reason of the stop: `"; chat X aborted"`.
pub fn abort_after_stop(client: Option<&ChatClient>, transcript: &Transcript) -> String {
    match (client, transcript.chat_id()) {
        (Some(client), Some(chat_id)) => match client.abort(chat_id) {
            Ok(()) => format!("; chat {chat_id} aborted"),
            Err(err) => format!("; aborting chat {chat_id} failed: {err:#}"),
        },
        (Some(_), None) => " before the chat started; nothing to abort".to_string(),
        (None, _) => String::new(),
    }
}

/// The failure the chat itself reported, in order of gravity: suspended,
/// in-stream error, aborted, no answer at all.
pub fn chat_failure(transcript: &Transcript) -> Option<anyhow::Error> {
    if let Some(text) = transcript.suspended() {
        let resume = match transcript.chat_id() {
            Some(id) => format!("; the turn can be resumed for 24 hours: analyst ask --chat-id {id} QUESTION"),
            None => String::new(),
        };
        return Some(bad_stream(format!(
            "the chat was suspended by the service: {text}{resume}"
        )));
    }
    if let Some(first) = transcript.errors().first() {
        let more = match transcript.errors().len() {
            1 => String::new(),
            n => format!(" (and {} more; see -o json .errors)", n - 1),
        };
        return Some(bad_stream(format!(
            "the stream reported an error: {}{more}",
            shorten(first)
        )));
    }
    if transcript.aborted() {
        return Some(bad_stream("the chat was aborted before it finished"));
    }
    if transcript.answer().is_none() && !transcript.is_thread_state() {
        return Some(bad_stream("the stream ended without an answer"));
    }
    None
}
