//! One chat turn, shared by `ask` and `check`: the request (sent from a
//! feed's worker), the stream read line by line (teed, forwarded, folded
//! into a transcript, with notes and timings), and the abort when a turn is
//! stopped before it ends.

use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
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
    let end = 'stream: loop {
        let batch = match reader.next_batch() {
            Ok(Some(batch)) => batch,
            Ok(None) => break StreamEnd::Ended(None),
            Err(err) => break stream_error(&err, transcript),
        };
        timings.first_byte.get_or_insert_with(|| started.elapsed());
        let mut batch_lines = batch.lines();
        // A bounded number of lines at a time: a batch of blank lines
        // must not cost memory per line.
        loop {
            let lines: Vec<Line<'_>> = batch_lines.by_ref().take(LINES_PER_PARSE).collect();
            if lines.is_empty() {
                break;
            }
            let end = parse_and_fold(&lines, with_rows, |line, parsed| {
                let tee = tee.as_deref_mut();
                fold_line(line, parsed, transcript, tee, observer, &mut timings, started)
            })?;
            if let Some(end) = end {
                break 'stream end;
            }
        }
    };
    timings.total = started.elapsed();
    Ok((end, timings))
}

/// Below this many bytes a group of lines is parsed on the calling thread;
/// from it up, on two cores (a replay or a fast connection delivers
/// megabytes at once). See [`parse_and_fold`].
const PARALLEL_FROM: usize = 256 << 10;

/// A line read as a message (`None` for a blank line), or why it is not one.
type Parsed<'a> = Result<Option<Message<'a>>, ParseError>;

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

/// Lines parsed in one go at most: about a megabyte of messages, and enough
/// lines of a real stream to reach [`PARALLEL_FROM`].
const LINES_PER_PARSE: usize = 4096;

/// The share of a group that one thread parses in one go: small enough
/// that two threads finish a group together, large enough that handing
/// pieces over costs nothing next to parsing them.
const PIECE_BYTES: usize = 32 << 10;

/// Parses `lines` and folds each one in order with `fold`, stopping at the
/// first that ends the stream. A group of [`PARALLEL_FROM`] bytes or more
/// is cut into pieces that this thread and a helper take in turn, parsing
/// and keeping ahead: this thread folds each piece as soon as it is parsed,
/// and parses the next unclaimed one while its turn has not come. Smaller
/// groups (a live stream's few lines) are parsed and folded line by line.
fn parse_and_fold<'a>(
    lines: &[Line<'a>],
    with_rows: bool,
    mut fold: impl FnMut(&Line<'a>, Parsed<'a>) -> Result<Option<StreamEnd>>,
) -> Result<Option<StreamEnd>> {
    let parse_line = |line: &Line<'a>| match with_rows {
        true => Message::parse_with_rows(line.content()),
        false => Message::parse(line.content()),
    };
    let parse = |lines: &[Line<'a>]| -> Vec<Parsed<'a>> { lines.iter().map(parse_line).collect() };
    let bytes: usize = lines.iter().map(|line| line.bytes.len()).sum();
    if bytes < PARALLEL_FROM || lines.len() < 2 {
        for line in lines {
            if let Some(end) = fold(line, parse_line(line))? {
                return Ok(Some(end));
            }
        }
        return Ok(None);
    }
    let pieces = pieces(lines, PIECE_BYTES);
    let unclaimed = AtomicUsize::new(0);
    let claim = || unclaimed.fetch_add(1, Ordering::Relaxed);
    let (sender, parsed_by_helper) = mpsc::channel::<(usize, Vec<Parsed<'a>>)>();
    std::thread::scope(|scope| {
        let helper = scope.spawn(|| {
            let mut index = claim();
            while let Some(piece) = pieces.get(index) {
                if sender.send((index, parse(piece))).is_err() {
                    return;
                }
                index = claim();
            }
        });
        let mut ready: Vec<Option<Vec<Parsed<'a>>>> = pieces.iter().map(|_| None).collect();
        let mut outcome = Ok(None);
        'fold: for (turn, piece) in pieces.iter().enumerate() {
            let parsed = loop {
                if let Some(parsed) = ready[turn].take() {
                    break parsed;
                }
                let next = claim();
                if let Some(unparsed) = pieces.get(next) {
                    ready[next] = Some(parse(unparsed));
                } else if let Ok((index, parsed)) = parsed_by_helper.recv() {
                    ready[index] = Some(parsed);
                } else {
                    // The helper is gone without this piece: it panicked.
                    break 'fold;
                }
            };
            for (line, parsed) in piece.iter().zip(parsed) {
                match fold(line, parsed) {
                    Ok(None) => {}
                    end => {
                        outcome = end;
                        break 'fold;
                    }
                }
            }
        }
        // Whatever is left unclaimed is not needed any more.
        unclaimed.store(pieces.len(), Ordering::Relaxed);
        drop(parsed_by_helper);
        match helper.join() {
            Ok(()) => outcome,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
/// `lines` cut into runs of at least `bytes` bytes each (the last may be
/// shorter), in order.
fn pieces<'l, 'a>(lines: &'l [Line<'a>], bytes: usize) -> Vec<&'l [Line<'a>]> {
    let mut pieces = Vec::new();
    let (mut start, mut size) = (0, 0);
    for (index, line) in lines.iter().enumerate() {
        size += line.bytes.len();
        if size >= bytes {
            pieces.push(&lines[start..=index]);
            (start, size) = (index + 1, 0);
        }
    }
    if start < lines.len() {
        pieces.push(&lines[start..]);
    }
    pieces
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

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered_lines(count: usize) -> Vec<u8> {
        (0..count)
            .flat_map(|i| format!("{{\"id\":\"{i}\",\"content\":\"{}\"}}\n", "x".repeat(i % 50)).into_bytes())
            .collect()
    }

    fn lines_of(bytes: &[u8]) -> Vec<Line<'_>> {
        let mut number = 0;
        bytes
            .split_inclusive(|&b| b == b'\n')
            .map(|bytes| {
                number += 1;
                Line {
                    bytes,
                    number,
                    followed_by: None,
                    more_buffered: true,
                }
            })
            .collect()
    }

    #[test]
    fn pieces_cover_every_line_once_in_order() {
        let bytes = numbered_lines(5000);
        let lines = lines_of(&bytes);
        let pieces = pieces(&lines, PIECE_BYTES);
        assert!(pieces.len() > 4);
        assert!(pieces
            .iter()
            .rev()
            .skip(1)
            .all(|piece| piece.iter().map(|l| l.bytes.len()).sum::<usize>() >= PIECE_BYTES));
        let numbers: Vec<u64> = pieces
            .iter()
            .flat_map(|piece| piece.iter().map(|line| line.number))
            .collect();
        assert_eq!(numbers, (1..=5000).collect::<Vec<u64>>());
    }

    #[test]
    fn lines_parsed_on_two_threads_are_folded_in_order_until_one_ends_the_stream() {
        let bytes = numbered_lines(20_000);
        let lines = lines_of(&bytes);
        assert!(bytes.len() >= PARALLEL_FROM);
        let mut folded = Vec::new();
        let end = parse_and_fold(&lines, false, |line, parsed| {
            let message = parsed.as_ref().ok().and_then(Option::as_ref);
            folded.push((line.number, message.map(|m| m.id().to_string())));
            Ok((line.number == 12_345).then_some(StreamEnd::ReaderGone))
        })
        .unwrap();
        assert!(matches!(end, Some(StreamEnd::ReaderGone)));
        let expected: Vec<(u64, Option<String>)> = (1..=12_345).map(|n| (n, Some((n - 1).to_string()))).collect();
        assert_eq!(folded, expected);
    }
}
