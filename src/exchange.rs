//! One turn asked of the service, from question to record: the one owner
//! of a turn. [`Exchange::ask`] continues a `--thread`, sends the question
//! (resuming the turn when its connection drops or it is suspended),
//! saves the stream (`--tee`, `--save`), reads it into a [`TurnObserver`]
//! (the output and what is kept of the turn), concludes how it ended and
//! settles it (the chat aborted when it may still run), and returns a
//! [`Settled`] turn, which records itself in the history once the command
//! knows the exit code it ends with. `ask` and `check` call it; [`replay`]
//! reads a saved stream the same way, asking nothing.

use std::io::{Read, Write};
use std::time::Instant;

use anyhow::Result;
use reqwest::Url;

use crate::api::chat::ChatClient;
use crate::domain::{Network, Question};
use crate::error::{exit_code, fail, kind_of, Kind};
use crate::expect::Check;
use crate::files::LazyFile;
use crate::history::{chat_url, History, QueryRecord, TurnRecord, ANSWER_CUT_MARKER, MAX_RECORDED_ANSWER};
use crate::net::source::Source;
use crate::output::{Notes, Output};
use crate::redact::redact;
use crate::results::SqlResult;
use crate::settings::{Recording, ThreadSettings};
use crate::stream::lines::Line;
use crate::stream::message::Message;
use crate::stream::transcript::{Event, Keep, Transcript};
use crate::stream::turn::{Ending, Observer, Renderer, Sinks, Status, Turn};
use crate::text::head;

/// Where a turn is asked, by whom, and where it is recorded.
pub struct Exchange<'a> {
    /// The chat service, as the user who asks.
    pub client: ChatClient,
    /// The chat URL (recorded without credentials).
    pub url: &'a Url,
    /// Who asks, as the history records it (see
    /// [`crate::settings::ChatSettings::asker`]).
    pub asker: String,
    /// Where turns are recorded; `None`: not recorded.
    pub recording: Option<&'a Recording>,
    /// Where notes go.
    pub notes: &'a Notes,
}

/// What a turn is: the question, where it goes on, its limits, what of it
/// is kept, and where its stream goes.
pub struct Asked<'a, 'o> {
    /// The question (and the chat it continues).
    pub question: Question,
    /// `ask --thread`: the thread it continues or starts.
    pub thread: Option<&'a ThreadSettings>,
    /// When the turn (or the command) began, for `--timeout`.
    pub started: Instant,
    /// Timeouts and retries.
    pub network: Network,
    /// What of the turn the transcript keeps.
    pub keep: Keep,
    /// The saved stream (`--tee`, `--save`), created with its first line.
    pub tee: Option<&'a mut LazyFile>,
    /// The output and what is kept of the turn as it goes.
    pub observer: &'a mut TurnObserver<'o>,
    /// Where the output writes.
    pub out: &'a mut dyn Output,
    /// Says why a timeout that ended the turn expired (`check`: the case's
    /// timeout or the whole run's), before the chat is aborted.
    pub explain_timeout: Option<&'a dyn Fn(anyhow::Error) -> anyhow::Error>,
}

/// What hears a turn as it goes: the output, and what is kept of the
/// turn — its expectations, its last SQL result, the queries the history
/// records. Each is a named field, none a renderer of its own.
pub struct TurnObserver<'o> {
    /// The output (`ask -o …`); none for a `check` turn.
    pub output: Option<&'o mut dyn Renderer>,
    /// The expectations checked when the turn is over.
    pub check: Check,
    /// The turn's last SQL result, failed or not (what Cube grades), when
    /// kept.
    pub last_query: LastQuery,
    /// What the history records of each SQL query.
    pub queries: QueryLog,
}

impl<'o> TurnObserver<'o> {
    /// An observer of a turn written to `output`, checked against `check`;
    /// `recorded`: its queries are kept for the history.
    pub fn new(output: Option<&'o mut dyn Renderer>, check: Check, recorded: bool) -> Self {
        TurnObserver {
            output,
            check,
            last_query: LastQuery::default(),
            queries: QueryLog::new(recorded),
        }
    }
}

impl Renderer for TurnObserver<'_> {
    fn line(
        &mut self,
        line: &Line<'_>,
        message: Option<&Message<'_>>,
        transcript: &Transcript,
        out: &mut dyn Output,
    ) -> std::io::Result<()> {
        match &mut self.output {
            Some(output) => output.line(line, message, transcript, out),
            None => Ok(()),
        }
    }

    fn event(&mut self, event: &Event) {
        if let Some(output) = &mut self.output {
            output.event(event);
        }
        self.check.event(event);
        self.last_query.event(event);
        self.queries.event(event);
    }

    fn end(&mut self, transcript: &Transcript, ending: &Ending<'_>, out: &mut dyn Output) -> Result<()> {
        match &mut self.output {
            Some(output) => output.end(transcript, ending, out),
            None => Ok(()),
        }
    }
}

/// Keeps a turn's last SQL result, failed or not: what Cube grades.
#[derive(Default)]
pub struct LastQuery {
    /// Whether to keep it at all.
    pub on: bool,
    /// The result.
    pub result: Option<SqlResult>,
}

impl Observer for LastQuery {
    fn event(&mut self, event: &Event) {
        match event {
            Event::ToolFinished(finished) if self.on => {
                if let Some((_, result)) = &finished.sql {
                    self.result = Some(result.clone());
                }
            }
            Event::TurnStarts => self.result = None,
            _ => {}
        }
    }
}

/// Keeps what the history records of each SQL query of a turn, when the
/// turn is recorded (else it reads nothing of the results).
pub struct QueryLog {
    on: bool,
    queries: Vec<QueryRecord>,
}

impl QueryLog {
    /// A log that keeps the queries when `on` (the turn is recorded).
    pub fn new(on: bool) -> Self {
        QueryLog {
            on,
            queries: Vec::new(),
        }
    }
}

impl Observer for QueryLog {
    fn event(&mut self, event: &Event) {
        match event {
            Event::ToolFinished(finished) if self.on => {
                if let Some((_, result)) = &finished.sql {
                    self.queries.push(QueryRecord {
                        title: result.title.clone(),
                        sql: result.sql.clone(),
                        columns: result.columns().iter().map(|column| column.name.clone()).collect(),
                        rows_returned: result.rows().len() as u64,
                        total_rows: result.total_rows,
                        error: result.error.clone(),
                    });
                }
            }
            Event::TurnStarts => self.queries.clear(),
            _ => {}
        }
    }
}

/// A turn that is over: how it ended (the chat aborted first when it may
/// still have been running), its transcript and timings, and what the
/// history will record of it.
#[must_use = "a settled turn is recorded by Settled::record, with the exit code its command ends with"]
pub struct Settled {
    /// The turn as read: its transcript and timings.
    pub turn: Turn,
    /// How it ended, as `-o json`'s `status` says.
    pub status: Status,
    /// Why it failed, when it did.
    pub failure: Option<anyhow::Error>,
    /// What the history records, when the turn is recorded.
    record: Option<(TurnRecord, Recording)>,
}

/// What only the command knows of a settled turn, for its record.
#[derive(Clone, Debug, Default)]
pub struct RecordAs {
    /// `ask` or `check`.
    pub command: &'static str,
    /// The exit code the command (or the check run of the case) ended with.
    pub exit_code: u8,
    /// For `check`: the exit code of the case's verdict on the turn.
    pub verdict_exit_code: Option<u8>,
    /// For `check`: the suite and the case.
    pub suite: Option<String>,
    /// For `check`: the case's name.
    pub case: Option<String>,
}

impl Settled {
    /// The exit code the turn alone ends with.
    pub fn exit_code(&self) -> u8 {
        exit_code(self.failure.as_ref())
    }

    /// Records the turn in the history (when it is recorded) as `how`
    /// says; a history that cannot be written is a warning.
    pub fn record(&mut self, how: RecordAs, notes: &Notes) {
        let Some((mut record, recording)) = self.record.take() else {
            return;
        };
        record.command = how.command.to_string();
        record.exit_code = how.exit_code;
        record.verdict_exit_code = how.verdict_exit_code;
        record.suite = how.suite;
        record.case = how.case;
        crate::history::write(&recording.db, recording.keep, &record, notes);
    }
}

impl Exchange<'_> {
    /// Asks `asked`'s question and reads the turn: see the module's
    /// documentation.
    pub fn ask(&self, asked: Asked<'_, '_>) -> Settled {
        let Asked {
            mut question,
            thread,
            started,
            network,
            keep,
            mut tee,
            observer,
            out,
            explain_timeout,
        } = asked;
        let at = crate::history::now();
        let thread = thread.map(|thread| {
            let (history, chat_id) = self.thread_chat(thread);
            question.chat_id = chat_id.clone();
            (thread, history, chat_id)
        });
        let read_turn = |question: &Question,
                         tee: &mut Option<&mut LazyFile>,
                         observer: &mut TurnObserver<'_>,
                         out: &mut dyn Output| {
            let mut turn = Turn::of(question, started);
            turn.transcript.keep(keep);
            let mut sinks = Sinks {
                tee: tee.as_deref_mut().map(|tee| tee as &mut dyn Write),
                renderer: observer,
                out,
            };
            let read = self.client.read_turn(question, network, &mut turn, &mut sinks);
            (turn, read)
        };
        let (mut turn, mut read) = read_turn(&question, &mut tee, observer, out);
        // A thread whose chat the service forgot starts afresh.
        if let Some((thread, _, Some(chat_id))) = &thread {
            if read.as_ref().is_err_and(|err| kind_of(err) == Kind::NotFound) && turn.transcript.chat_id().is_none() {
                self.notes.info(&format!(
                    "thread {}: the service no longer knows chat {chat_id}: starting afresh",
                    thread.name
                ));
                question.chat_id = None;
                (turn, read) = read_turn(&question, &mut tee, observer, out);
            }
        }
        if let (Some((thread, Some(history), _)), Some(chat_id)) = (&thread, turn.transcript.chat_id()) {
            let kept = history.set_thread(&thread.name, &chat_url(self.url), &self.asker, chat_id);
            if let Err(why) = kept {
                self.notes
                    .warn(&format!("--thread {}: the chat id was not kept: {why:#}", thread.name));
            }
        }
        let saved = match tee.map(Write::flush) {
            Some(Err(err)) => Err(fail(Kind::CannotWrite, format!("cannot write the saved stream: {err}"))),
            _ => Ok(()),
        };
        let mut conclusion = turn.conclude(read, saved);
        if let Some(explain) = explain_timeout {
            conclusion.failure = conclusion.failure.map(explain);
        }
        let status = conclusion.status;
        let failure = self.client.settle(conclusion, turn.transcript.chat_id());
        let record = self.recording.map(|recording| {
            let mut record = self.draft(at, &question, &turn, status);
            record.queries = std::mem::take(&mut observer.queries.queries);
            record.thread = thread.map(|(thread, ..)| thread.name.clone());
            (record, recording.clone())
        });
        Settled {
            turn,
            status,
            failure,
            record,
        }
    }

    /// The thread `--thread` names: its history database (none when it
    /// cannot be opened: a warning, and the question starts a new chat)
    /// and the chat it continues, unless it is new or older than
    /// `--thread-ttl`.
    fn thread_chat(&self, thread: &ThreadSettings) -> (Option<History>, Option<String>) {
        let history = match History::open(&thread.db) {
            Ok(history) => history,
            Err(why) => {
                self.notes.warn(&format!(
                    "--thread {}: {why:#}; the question starts a new chat",
                    thread.name
                ));
                return (None, None);
            }
        };
        let chat_id = match history.thread(&thread.name, &chat_url(self.url), &self.asker) {
            Ok(Some(known)) if known.last_turn_at >= crate::history::before(thread.ttl) => Some(known.chat_id),
            Ok(Some(known)) => {
                self.notes.info(&format!(
                    "thread {}: its last turn ({}) is older than --thread-ttl: starting afresh",
                    thread.name, known.last_turn_at
                ));
                None
            }
            Ok(None) => None,
            Err(why) => {
                self.notes.warn(&format!("--thread {}: {why:#}", thread.name));
                None
            }
        };
        (Some(history), chat_id)
    }

    /// A turn asked at `at` as the history records it (what only the
    /// command knows is set when it is recorded: see [`RecordAs`]).
    fn draft(&self, at: String, question: &Question, turn: &Turn, status: Status) -> TurnRecord {
        let transcript = &turn.transcript;
        let millis = |duration: std::time::Duration| duration.as_millis() as u64;
        TurnRecord {
            at,
            chat_url: Some(chat_url(self.url)),
            identity: Some(self.asker.clone()),
            chat_id: transcript.chat_id().map(str::to_string),
            message_id: transcript.message_id().map(str::to_string),
            question: question.input.as_deref().map(|question| redact(question).into_owned()),
            answer: transcript
                .answer()
                .map(|(answer, _)| recorded_answer(&answer, transcript.answer_is_cut())),
            status: status.as_str().to_string(),
            usage: transcript.usage().cloned(),
            first_byte_ms: turn.timings.first_byte.map(millis),
            answer_ms: turn.timings.answer.map(millis),
            total_ms: millis(turn.timings.total),
            ..TurnRecord::default()
        }
    }
}

/// The answer as the history keeps it: its first [`MAX_RECORDED_ANSWER`]
/// bytes, and [`ANSWER_CUT_MARKER`] when there was more.
fn recorded_answer(answer: &str, cut: bool) -> String {
    let mut kept = head(answer, MAX_RECORDED_ANSWER).to_string();
    if cut || kept.len() < answer.len() {
        kept.push_str(ANSWER_CUT_MARKER);
    }
    kept
}

/// Reads a saved stream (`ask --replay`) into `observer` as a turn asked
/// of the service would be read, asking nothing: the turn concludes, and
/// nothing is aborted or recorded.
pub fn replay(
    file: Box<dyn Read + Send>,
    network: Network,
    started: Instant,
    keep: Keep,
    tee: Option<&mut LazyFile>,
    observer: &mut TurnObserver<'_>,
    out: &mut dyn Output,
) -> Settled {
    let mut source = Source::start(move || Ok(file), network.limits, started);
    let mut turn = Turn::new(started);
    turn.transcript.keep(keep);
    let mut tee = tee;
    let mut sinks = Sinks {
        tee: tee.as_deref_mut().map(|tee| tee as &mut dyn Write),
        renderer: observer,
        out,
    };
    let read = source.wait_open().and_then(|()| turn.read(source, &mut sinks));
    let saved = match tee.map(Write::flush) {
        Some(Err(err)) => Err(fail(Kind::CannotWrite, format!("cannot write the saved stream: {err}"))),
        _ => Ok(()),
    };
    let conclusion = turn.conclude(read, saved);
    Settled {
        status: conclusion.status,
        failure: conclusion.failure,
        turn,
        record: None,
    }
}
