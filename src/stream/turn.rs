//! One turn: lines → `--tee` → message → transcript → renderer, and how it
//! ended. [`read_lines`] is the one line loop of the crate: the chat stream
//! ([`Turn::read`]) and the data query API's NDJSON answer both go through
//! it. The [`Renderer`] trait is declared here, beside the loop that drives
//! it, so that `render/` (its implementations) depends on the stream and
//! not the other way round.

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::lines::{Chunks, Line, LineReader};
use super::message::{Message, ParseError};
use super::resume::{Resumed, TurnLines};
use super::transcript::{AnswerSource, Event, Transcript};
use crate::domain::Question;
use crate::error::{bad_stream, fail, fault_of_io, root_causes, stops_the_chat, Fault, Kind};
use crate::output::Output;
use crate::redact::redact_bytes;
use crate::results::Picker;
use crate::text::{shell_quote, shorten};

/// How a chat ended, as `-o json`'s `status` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// A final answer arrived.
    Completed,
    /// No `final` answer: the fallback answer (or none) was used.
    Incomplete,
    /// The chat was suspended by the service (it can be resumed).
    Suspended,
    /// The chat was aborted.
    Aborted,
    /// The stream ended while the agent was still writing.
    Cut,
    /// The request or the stream failed.
    Error,
}

impl Status {
    /// The word used in the JSON document.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Incomplete => "incomplete",
            Status::Suspended => "suspended",
            Status::Aborted => "aborted",
            Status::Cut => "cut",
            Status::Error => "error",
        }
    }
}

/// An output of a turn: it hears of each line and event as they come, and
/// writes what it writes at the end.
pub trait Renderer {
    /// The turn begins (before its request is sent): a live display starts.
    fn begin(&mut self) {}

    /// A line arrived; `message` is its parse, already folded into
    /// `transcript`. A `BrokenPipe` error means the reader of `out` left.
    fn line(
        &mut self,
        _line: &Line<'_>,
        _message: Option<&Message<'_>>,
        _transcript: &Transcript,
        _out: &mut dyn Output,
    ) -> io::Result<()> {
        Ok(())
    }

    /// Something happened that outputs may keep or show (a chat id, a
    /// finished tool call and its SQL result).
    fn event(&mut self, _event: &Event) {}

    /// The turn is over, as `ended` says: write the output (on failure,
    /// only what is still written then).
    fn end(&mut self, _transcript: &Transcript, _ended: &Ended, _out: &mut dyn Output) -> Result<()> {
        Ok(())
    }
}

/// What keeps something of a turn as it goes, writing nothing: it hears
/// of each event (a SQL result that finished, the turn's start after the
/// thread's replayed past).
pub trait Observer {
    /// Something happened that may be kept.
    fn event(&mut self, event: &Event);
}

/// A turn read only to keep something of it (`rows --from`: the SQL result
/// picked): its observer hears every event, and nothing is written.
pub struct Observing<'a>(pub &'a mut dyn Observer);

impl Renderer for Observing<'_> {
    fn event(&mut self, event: &Event) {
        self.0.event(event);
    }
}

/// A picker keeps the SQL result its pick selects as the turn goes (and
/// none of the thread's replayed past).
impl Observer for Picker {
    fn event(&mut self, event: &Event) {
        match event {
            Event::ToolFinished(finished) => {
                if let Some((_, sql)) = &finished.sql {
                    self.offer(sql);
                }
            }
            Event::TurnStarts => self.forget(),
            Event::ChatId(_) => {}
        }
    }
}

/// What reads the lines of a stream.
pub trait LineFold {
    /// Takes one line; an error ends the stream with it.
    fn line(&mut self, line: &Line<'_>) -> Result<()>;

    /// The failure of a source that broke off: cut (the connection dropped)
    /// or a line over the length limit (`err` is `InvalidData`).
    fn broken(&mut self, err: &io::Error) -> anyhow::Error;
}

/// Reads `source` line by line into `fold` until the end, the first error,
/// or a stop (a signal, the deadline, a stall: its fault is the error).
/// Every known secret is redacted from each line before `fold` sees it.
pub fn read_lines(source: impl Chunks, fold: &mut dyn LineFold) -> Result<()> {
    let mut reader = LineReader::new(source);
    loop {
        let line = match reader.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => return Ok(()),
            Err(err) => {
                return Err(match fault_of_io(&err) {
                    Some(stop) => stop.clone().into(),
                    None => fold.broken(&err),
                })
            }
        };
        // Secrets are redacted as the line arrives, so no output, note or
        // saved stream can hold one.
        let redacted = redact_bytes(line.bytes);
        let line = match &redacted {
            Cow::Borrowed(_) => line,
            Cow::Owned(bytes) => Line { bytes, ..line },
        };
        let folded = fold.line(&line);
        // A stop right after this (partial) line is why the stream ended.
        if let Some(stop) = line.followed_by.and_then(fault_of_io) {
            return Err(stop.clone().into());
        }
        folded?;
    }
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

/// One chat turn being read, over one connection or more: the transcript
/// it folds into and its timings.
pub struct Turn {
    /// What the stream said so far.
    pub transcript: Transcript,
    /// When things happened.
    pub timings: Timings,
    /// When each SQL result of the turn arrived, in order.
    pub sql_results: Vec<Duration>,
    started: Instant,
    /// The turn's lines read so far, over all connections.
    lines: TurnLines,
    /// The connection being read resumes the turn: what it repeats.
    resumed: Option<Resumed>,
    /// The last connection broke off (dropped, or cut in a line).
    dropped: bool,
    /// How many times the turn was resumed.
    resumes: u32,
    /// Set once the chat id is known (the source holds a stop back until
    /// it is, so that the chat can be aborted).
    chat_id_known: Arc<AtomicBool>,
}

impl Turn {
    /// A turn that began at `started`.
    pub fn new(started: Instant) -> Self {
        Turn {
            transcript: Transcript::new(),
            timings: Timings::default(),
            sql_results: Vec::new(),
            started,
            lines: TurnLines::default(),
            resumed: None,
            dropped: false,
            resumes: 0,
            chat_id_known: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The flag set once the turn's chat id is known.
    pub fn chat_id_known(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.chat_id_known)
    }

    /// A read of what `question` asked: a thread read when it has neither a
    /// question nor a message to resume, else a turn (decided by what was
    /// sent, not by the stream).
    pub fn of(question: &Question, started: Instant) -> Self {
        let mut turn = Turn::new(started);
        turn.transcript.set_thread_read(question.reads_thread());
        turn.transcript.set_message_id(question.message_id.clone());
        turn
    }

    /// When the turn began (for `--timeout`).
    pub fn started(&self) -> Instant {
        self.started
    }

    /// How many times the turn was resumed on a new connection.
    pub fn resumes(&self) -> u32 {
        self.resumes
    }

    /// Reads one connection's stream to its end: every line's bytes go to
    /// the tee, every message new to the turn into the transcript, and the
    /// renderer hears of each line and event (writing to `out`). The error
    /// says how the stream broke off: cut or malformed
    /// ([`Kind::BadStream`]), stopped (a signal, the deadline, a stall), the
    /// reader of `out` gone ([`Kind::ReaderGone`]), or the tee failing.
    pub fn read(&mut self, source: impl Chunks, sinks: &mut Sinks<'_>) -> Result<()> {
        let mut fold = ChatFold { turn: self, sinks };
        let read = read_lines(source, &mut fold);
        self.timings.total = self.started.elapsed();
        read
    }

    /// Whether the turn, as read so far, could be finished by resuming it
    /// on a new connection, and why: the connection dropped, the service
    /// suspended the turn, or the stream ended while the agent was still
    /// writing. `None` when it ended any other way (`read` is how the last
    /// read ended), or when the turn cannot be named (no chat id or no
    /// message id).
    pub fn resumable(&self, read: &Result<()>) -> Option<Resumable> {
        let transcript = &self.transcript;
        let (chat_id, message_id) = (transcript.chat_id()?, transcript.message_id()?);
        let stopped = read.as_ref().err().is_some_and(stops_the_chat);
        if stopped || !transcript.errors().is_empty() || transcript.aborted() {
            return None;
        }
        let why = match (read, transcript.suspended()) {
            (Err(_), _) if self.dropped => "the connection dropped".to_string(),
            (Ok(()), Some(text)) => format!("the service suspended the turn ({text})"),
            (Ok(()), None) if transcript.cut_mid_message() => {
                "the stream ended while the agent was still writing".to_string()
            }
            _ => return None,
        };
        Some(Resumable {
            why,
            chat_id: chat_id.to_string(),
            message_id: message_id.to_string(),
        })
    }

    /// Gets ready to read the turn again on a new connection, which will
    /// replay what was read: those lines are not taken in twice.
    pub fn resume(&mut self) {
        self.resumes += 1;
        self.dropped = false;
        self.resumed = Some(self.lines.resume(self.transcript.message_id()));
        self.transcript.resumed();
    }

    /// A failure of the turn, saying how many times it was resumed first.
    fn after_resumes(&self, err: anyhow::Error) -> anyhow::Error {
        match self.resumes {
            0 => err,
            1 => err.context("resumed once"),
            n => err.context(format!("resumed {n} times")),
        }
    }

    /// How the turn ended, all told, from how its read ended (`read`) and
    /// what failed after it (`afterwards`: the saved stream's last flush).
    /// The one rule of `cli.md`: every early end of a running turn on our
    /// side (a signal, the deadline, a stall, a closed or full stdout, an
    /// unwritable `--tee`, a malformed line) and every in-stream error
    /// leave a chat that may still be running, which is aborted; a stream
    /// that ended by itself (cut, suspended: the hint resumes it) is not.
    pub fn conclude(&self, read: Result<()>, afterwards: Result<()>) -> Ended {
        let transcript = &self.transcript;
        let stopped = read.as_ref().err().is_some_and(stops_the_chat);
        let ended_early = stopped || (read.is_err() && !self.dropped) || !transcript.errors().is_empty();
        let read_whole = read.is_ok();
        let failure = match (read, afterwards) {
            (Err(err), _) => Some(self.after_resumes(err)),
            (Ok(()), Err(err)) => Some(err),
            (Ok(()), Ok(())) => chat_failure(transcript).map(|err| self.after_resumes(err)),
        };
        let status = match (&failure, transcript.answer_source()) {
            _ if transcript.aborted() || stopped => Status::Aborted,
            (Some(_), _) if transcript.suspended().is_some() => Status::Suspended,
            (Some(_), _) if self.dropped || transcript.cut_mid_message() => Status::Cut,
            (Some(_), _) => Status::Error,
            (None, Some(AnswerSource::Final)) => Status::Completed,
            (None, _) if transcript.is_thread_state() => Status::Completed,
            (None, _) => Status::Incomplete,
        };
        Ended {
            asks_back: match failure {
                None => transcript.asks_back(),
                Some(_) => None,
            },
            status,
            failure: failure.as_ref().map(Fault::of),
            aborted: ended_early && (stopped || transcript.chat_id().is_some()),
            read_whole,
        }
    }
}

/// How a turn ended — the one name for it, which the owner of the turn
/// concludes ([`Turn::conclude`]), settles (the chat aborted when it may
/// still run) and hands to the outputs and the command's judge: its
/// status, why it failed, whether the chat was ended early on our side.
#[derive(Clone, Debug)]
pub struct Ended {
    /// `-o json`'s `status`.
    pub status: Status,
    /// Why it failed, when it did (its kind, so its exit code, and
    /// analyst's message): then only `-o json` writes anything.
    pub failure: Option<Fault>,
    /// The chat was ended early on our side (a stop, a malformed line, an
    /// in-stream error…) and may still run on the service: its owner aborts
    /// it, and the failure says how that went.
    pub aborted: bool,
    /// The stream was read to its end (not cut, malformed or stopped).
    pub read_whole: bool,
    /// The agent's question, when it asked back instead of answering
    /// ([`Transcript::asks_back`]): decided here, once, for every command.
    pub asks_back: Option<String>,
}

impl Ended {
    /// The exit code the turn alone ends with.
    pub fn exit_code(&self) -> u8 {
        self.failure
            .as_ref()
            .map_or(crate::error::SUCCESS, |fault| fault.kind.exit_code())
    }
}

/// A turn that can be resumed: why, and the ids to send again.
#[derive(Clone, Debug)]
pub struct Resumable {
    /// Why the last connection did not finish the turn.
    pub why: String,
    /// The chat to send again.
    pub chat_id: String,
    /// The message to send again.
    pub message_id: String,
}

/// Where a turn's lines go as they are read.
pub struct Sinks<'a> {
    /// The saved stream (`--tee`): every connection's bytes, in order.
    pub tee: Option<&'a mut dyn Write>,
    /// The output (and the checks) hearing of lines and events.
    pub renderer: &'a mut dyn Renderer,
    /// Where the renderer writes.
    pub out: &'a mut dyn Output,
}

/// The chat stream's [`LineFold`].
struct ChatFold<'a, 's> {
    turn: &'a mut Turn,
    sinks: &'a mut Sinks<'s>,
}

impl LineFold for ChatFold<'_, '_> {
    fn line(&mut self, line: &Line<'_>) -> Result<()> {
        let turn = &mut *self.turn;
        turn.timings.first_byte.get_or_insert_with(|| turn.started.elapsed());
        let mut spare = None;
        let parsed = crate::stream::parse::lenient(line.content(), &mut spare);
        let message = parsed.as_ref().ok().and_then(Option::as_ref);
        let repeated = match (message, turn.resumed.as_mut()) {
            (Some(message), Some(resumed)) => resumed.repeats(message),
            _ => false,
        };
        // A line the turn already read is only passed on as bytes.
        let message = message.filter(|_| !repeated);
        if let Some(message) = message {
            turn.lines.took(message);
            for event in turn.transcript.apply(message) {
                if matches!(event, Event::ChatId(_)) {
                    turn.chat_id_known.store(true, Ordering::SeqCst);
                }
                match &event {
                    Event::ToolFinished(tool) if tool.sql.is_some() => {
                        let at = turn.started.elapsed();
                        turn.timings.first_sql.get_or_insert(at);
                        turn.sql_results.push(at);
                    }
                    // The thread's earlier turns were replayed: this one starts.
                    Event::TurnStarts => turn.sql_results.clear(),
                    _ => {}
                }
                self.sinks.renderer.event(&event);
            }
            if turn.timings.answer.is_none() && message.final_node && turn.transcript.final_so_far().is_some() {
                turn.timings.answer = Some(turn.started.elapsed());
            }
        }
        // Saved after the line was folded in, so that a failure to save it
        // knows the chat to abort.
        if let Some(tee) = self.sinks.tee.as_deref_mut() {
            // Flushed like `raw`, before the reader would wait: what arrived
            // is saved at once, and a full disk is noticed at once.
            let saved = tee.write_all(line.bytes).and_then(|()| match line.more_buffered {
                true => Ok(()),
                false => tee.flush(),
            });
            saved.map_err(|err| fail(Kind::CannotWrite, format!("cannot write the saved stream: {err}")))?;
        }
        self.sinks
            .renderer
            .line(line, message, &turn.transcript, self.sinks.out)?;
        match parsed {
            Ok(_) => Ok(()),
            Err(err) => {
                turn.dropped = !line.is_terminated();
                Err(not_a_message(&err, line, &resume_hint(&turn.transcript)))
            }
        }
    }

    fn broken(&mut self, err: &io::Error) -> anyhow::Error {
        if err.kind() == io::ErrorKind::InvalidData {
            return bad_stream(format!("malformed stream: {err}"));
        }
        self.turn.dropped = true;
        let cause = err
            .get_ref()
            .map_or_else(|| err.to_string(), |inner| root_causes(inner));
        bad_stream(format!(
            "the stream was cut before it ended ({cause}){}",
            resume_hint(&self.turn.transcript)
        ))
    }
}

/// The hint that ends a message about a broken turn: how to resume it
/// (or, for a read of the thread, to read it again).
fn resume_hint(transcript: &Transcript) -> String {
    match (transcript.chat_id(), resume_command(transcript)) {
        (Some(_), Some(command)) => format!("; resume it with: {command}"),
        (Some(chat), None) => format!(
            "; see where the thread stands with: analyst ask --chat-id {}",
            shell_quote(chat)
        ),
        (None, _) => String::new(),
    }
}

/// The command that resumes the turn by hand, when its chat and message
/// are known (their ids quoted for the shell).
fn resume_command(transcript: &Transcript) -> Option<String> {
    Some(format!(
        "analyst ask --chat-id {} --resume {}",
        shell_quote(transcript.chat_id()?),
        shell_quote(transcript.message_id()?)
    ))
}

/// The failure for a line that is not a message: a cut when it is the
/// unterminated last line, a malformed stream otherwise.
fn not_a_message(err: &ParseError, line: &Line<'_>, resume_hint: &str) -> anyhow::Error {
    let number = line.number;
    match (err, line.is_terminated()) {
        (err, false) => bad_stream(format!(
            "the stream was cut in the middle of line {number} ({err}){resume_hint}"
        )),
        (ParseError::Invalid(text), true) => {
            bad_stream(format!("malformed stream: line {number} is not valid JSON: {text}"))
        }
        (ParseError::NotAnObject, true) => {
            bad_stream(format!("malformed stream: line {number} is JSON but not an object"))
        }
    }
}

/// True when an in-stream error says a credential was refused: it speaks
/// of authentication or authorization, of an API key, a credential or a
/// JWT, or of a token that is invalid, expired, missing, rejected or not
/// accepted (or a Cube, data or access token) — not of the LLM's tokens,
/// budgets or quotas.
fn refuses_credentials(error: &str) -> bool {
    let lower = error.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |wanted: &[&str]| words.iter().any(|word| wanted.contains(word));
    let about_usage = has(&[
        "budget", "quota", "quotas", "limit", "llm", "context", "usage", "rate", "tokens",
    ]);
    let names_credential = words.iter().any(|word| {
        ["authenticat", "authoriz", "unauthori", "credential"]
            .iter()
            .any(|stem| word.starts_with(stem))
    }) || has(&["jwt", "apikey"])
        || words.windows(2).any(|pair| pair == ["api", "key"]);
    let refused_token = has(&["token"])
        && has(&[
            "invalid",
            "expired",
            "missing",
            "malformed",
            "revoked",
            "rejected",
            "accepted",
            "signature",
            "bearer",
            "cube",
            "data",
            "access",
            "auth",
        ]);
    names_credential || (refused_token && !about_usage)
}

/// The failure the chat itself reported, in order of gravity: suspended,
/// in-stream error, aborted, no answer at all.
fn chat_failure(transcript: &Transcript) -> Option<anyhow::Error> {
    if let Some(text) = transcript.suspended() {
        let resume = match (resume_command(transcript), transcript.message_id()) {
            (Some(command), _) => format!("; the turn can be resumed for 24 hours: {command}"),
            (None, Some(message)) => format!(" (message {message})"),
            (None, None) => String::new(),
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
        // The service reports some refusals of the credentials in the
        // stream, with status 200.
        let (kind, hint) = match transcript.errors().iter().any(|error| refuses_credentials(error)) {
            true => (Kind::Auth, "; check the API key or Cube token"),
            false => (Kind::BadStream, ""),
        };
        return Some(fail(
            kind,
            format!("the stream reported an error: {}{more}{hint}", shorten(first)),
        ));
    }
    if transcript.aborted() {
        return Some(bad_stream("the chat was aborted before it finished"));
    }
    if transcript.cut_mid_message() && !transcript.is_thread_state() {
        return Some(bad_stream(format!(
            "the stream ended while the agent was still writing: its last message never completed{}",
            resume_hint(transcript)
        )));
    }
    if transcript.answer_source().is_none() && !transcript.is_thread_state() {
        return Some(bad_stream("the stream ended without an answer"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_refusals_are_told_from_other_errors() {
        for refusal in [
            "Authentication failed",
            "Unauthorized",
            "Invalid API key",
            "Api-Key is not valid",
            "the token expired",
            "User is not authorized to use this agent",
        ] {
            assert!(refuses_credentials(refusal), "{refusal}");
        }
        for refusal in [
            "Invalid token",
            "Cube token expired",
            "the token is missing",
            "JWT signature mismatch",
        ] {
            assert!(refuses_credentials(refusal), "{refusal}");
        }
        for other in [
            "Agent does not have a deployment associated",
            "BadRequestError: Bad branch",
            "too many tokens in the context",
            "QuotaError: the daily token budget is spent",
            "Token limit exceeded for this model",
            "token rate limit reached",
        ] {
            assert!(!refuses_credentials(other), "{other}");
        }
    }
}
