//! The one owner of a turn, from question to record. [`Exchange::turn`]
//! takes a [`Plan`] — the question, its limits, what of it is kept, where
//! its stream and output go — and does it all: continues a `--thread`,
//! sends the question and resumes the turn when its connection drops or it
//! is suspended (the wire, `api::chat`, only starts and aborts), saves the
//! stream (`--tee`, `--save`), reads it into a [`TurnObserver`], concludes
//! how it [`Ended`], aborts the chat when it may still run, hands the
//! turn to the command's judge, records it in the history with the exit
//! code the judge gives — no command can forget the record — and traces
//! it: a turn's spans are sent by its owner when it owns them ([`Trace`]),
//! else collected for the run that does. A saved stream (`ask --replay`,
//! `rows --from`) goes through the same owner, as a source of chunks read
//! like any other, asking, aborting, recording and tracing nothing.
//! [`query`] owns `rows`' query of the data query API the same way.

mod observer;
pub mod query;

use std::cell::Cell;
use std::io::Write;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;
use reqwest::Url;

use crate::api::chat::{ChatClient, ChatSettings};
use crate::domain::{kept_answer, Network, Question};
use crate::error::{fail, Fault, Kind};
use crate::files::LazyFile;
use crate::history::{chat_url, History, Recording, ThreadSettings, TurnRecord};
use crate::net::http::{backoff, Http, Retry};
use crate::net::source::SavedStream;
use crate::output::{Notes, Output};
use crate::redact::redact;
use crate::signals::Stop;
use crate::stream::transcript::Keep;
use crate::stream::turn::{Ended, Resumable, Sinks, Turn};
use crate::telemetry::{OtlpSettings, SpanIds, Spans};
use crate::text::human;

pub use observer::{LastQuery, QueryLog, TurnObserver};

/// The time an abort may take when a turn stops early, retries included;
/// the process moves on soon after, answered or not.
const ABORT_BUDGET: Duration = Duration::from_secs(5);

/// What `ask` asks of: the service, or a saved stream.
#[derive(Debug)]
pub enum Asked {
    /// A saved stream (`--replay FILE`, `-` = stdin).
    Replay(String),
    /// The service: a question sent as the user of `chat`.
    Chat {
        /// The service and the identity.
        chat: Box<ChatSettings>,
        /// What is asked.
        question: Question,
    },
}

impl Asked {
    /// The message id of the question asked of the service, if any.
    pub fn message_id(&self) -> Option<String> {
        match self {
            Asked::Chat { question, .. } => question.message_id.clone(),
            Asked::Replay(_) => None,
        }
    }
}

/// The chat service a turn is asked of.
pub struct Service<'a> {
    /// The chat service, as the user who asks.
    pub client: ChatClient,
    /// The chat URL (recorded without credentials).
    pub url: &'a Url,
    /// Who asks, as the history records it (see
    /// [`ChatSettings::asker`](crate::api::chat::ChatSettings::asker)).
    pub asker: String,
}

/// Where a turn's stream comes from.
pub enum Origin<'a> {
    /// Asked of the chat service.
    Service(Box<Service<'a>>),
    /// A saved stream (`ask --replay`, `rows --from`), read once.
    Saved(Cell<Option<SavedStream>>),
}

impl<'a> Origin<'a> {
    /// Where `asked` is asked (the service reached through a client with
    /// `network`'s connect timeout), and the question.
    pub fn of(asked: &'a Asked, network: Network) -> Result<(Origin<'a>, Question)> {
        match asked {
            Asked::Replay(path) => Ok((Origin::saved(SavedStream::open(path, "--replay")?), Question::default())),
            Asked::Chat { chat, question } => {
                let service = Service {
                    client: ChatClient::new(Http::new(network.connect_timeout)?, chat),
                    url: &chat.url,
                    asker: chat.asker(None),
                };
                Ok((Origin::Service(Box::new(service)), question.clone()))
            }
        }
    }

    /// A saved stream, read once.
    pub fn saved(stream: SavedStream) -> Origin<'a> {
        Origin::Saved(Cell::new(Some(stream)))
    }
}

/// Where a turn's spans go.
pub enum Trace<'a> {
    /// Nowhere: no collector is set.
    Off,
    /// The turn's owner sends them once the turn is recorded (`ask`).
    Sent(Box<Spans>),
    /// Into the spans of the run it belongs to, which sends them (`check`).
    Into(&'a Spans),
}

impl Trace<'_> {
    /// Spans the turn's owner sends once the turn is recorded, to the
    /// collector of `otlp`; none without one.
    pub fn sent(otlp: Option<OtlpSettings>) -> Self {
        otlp.map_or(Trace::Off, |otlp| Trace::Sent(Box::new(Spans::new(otlp))))
    }

    /// The spans a turn's are added to, if any.
    fn spans(&self) -> Option<&Spans> {
        match self {
            Trace::Off => None,
            Trace::Sent(spans) => Some(spans),
            Trace::Into(spans) => Some(spans),
        }
    }
}

/// Where turns are asked (or read), where they are recorded and traced.
pub struct Exchange<'a> {
    /// Where the stream comes from.
    pub origin: Origin<'a>,
    /// Where turns asked of the service are recorded; `None`: not recorded.
    pub recording: Option<&'a Recording>,
    /// Where the spans of turns asked of the service go.
    pub trace: Trace<'a>,
    /// Where notes go.
    pub notes: &'a Notes,
}

/// What a turn is: the question, where it goes on, its limits, what of it
/// is kept, where its stream and output go, and how it is recorded.
pub struct Plan<'a, 'o> {
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
    pub explain_timeout: Option<&'a dyn Fn(Fault) -> Fault>,
    /// What the record says of the command that asked.
    pub record_as: RecordAs,
    /// The span the turn's span is a child of (a `check` case); `None`: a
    /// trace of its own.
    pub parent: Option<SpanIds>,
}

/// What only the command knows of a turn, for its record.
#[derive(Clone, Debug, Default)]
pub struct RecordAs {
    /// `ask` or `check`.
    pub command: &'static str,
    /// For `check`: the suite.
    pub suite: Option<String>,
    /// For `check`: the case's name.
    pub case: Option<String>,
    /// The judge gives a verdict kept beside the turn's own exit code
    /// (`check`); else the record keeps the judge's code as the turn's
    /// (`ask`).
    pub verdict_apart: bool,
}

/// A turn that is over, as the command's judge gets it: the turn read, how
/// it ended, what the history records of it, the observer that heard it,
/// and the output.
pub struct Judging<'t, 'o> {
    /// The turn as read: its transcript and timings.
    pub turn: &'t Turn,
    /// How it ended (the chat aborted first when it may still have run).
    pub ended: Ended,
    /// The turn as recorded (its answer cut as every record cuts it).
    pub record: &'t TurnRecord,
    /// What heard the turn: the output, the expectations, the last result.
    pub observer: &'t mut TurnObserver<'o>,
    /// Where the output writes.
    pub out: &'t mut dyn Output,
}

impl Exchange<'_> {
    /// Does the turn `plan` describes (see the module's documentation),
    /// hands it to `judge`, records it with the judge's exit code, traces
    /// it, and returns the judge's verdict (a signal that ended the export
    /// of the turn's spans instead, when the owner sends them).
    pub fn turn<J>(
        &self,
        plan: Plan<'_, '_>,
        judge: impl FnOnce(Judging<'_, '_>) -> Result<J, Fault>,
    ) -> Result<J, Fault> {
        let Plan {
            mut question,
            thread,
            started,
            network,
            keep,
            mut tee,
            observer,
            out,
            explain_timeout,
            record_as,
            parent,
        } = plan;
        let at = crate::history::now();
        let service = match &self.origin {
            Origin::Service(service) => Some(&**service),
            Origin::Saved(_) => None,
        };
        let thread = thread.zip(service).map(|(thread, service)| {
            let (history, chat_id) = self.thread_chat(service, thread);
            question.chat_id.clone_from(&chat_id);
            (thread, history, chat_id)
        });
        // A saved stream says itself whether it is a thread read.
        let fresh = |question: &Question| {
            let mut turn = match service {
                Some(_) => Turn::of(question, started),
                None => Turn::new(started),
            };
            turn.transcript.keep(keep);
            turn
        };
        let mut turn = fresh(&question);
        crate::stream::turn::Renderer::begin(&mut *observer);
        let mut sinks = Sinks {
            tee: tee.as_deref_mut().map(|tee| tee as &mut dyn Write),
            renderer: &mut *observer,
            out: &mut *out,
        };
        let read = match &self.origin {
            Origin::Service(service) => {
                let mut read = self.read(service, &question, network, &mut turn, &mut sinks);
                // A thread whose chat the service forgot starts afresh.
                if let Some((thread, _, Some(chat_id))) = &thread {
                    if read
                        .as_ref()
                        .is_err_and(|err| crate::error::kind_of(err) == Kind::NotFound)
                        && turn.transcript.chat_id().is_none()
                    {
                        self.notes.info(&format!(
                            "thread {}: the service no longer knows chat {chat_id}: starting afresh",
                            thread.name
                        ));
                        question.chat_id = None;
                        turn = fresh(&question);
                        read = self.read(service, &question, network, &mut turn, &mut sinks);
                    }
                }
                if let (Some((thread, Some(history), _)), Some(chat_id)) = (&thread, turn.transcript.chat_id()) {
                    let kept = history.set_thread(&thread.name, &chat_url(service.url), &service.asker, chat_id);
                    if let Err(why) = kept {
                        self.notes
                            .warn(&format!("--thread {}: the chat id was not kept: {why:#}", thread.name));
                    }
                }
                read
            }
            Origin::Saved(saved) => replay(saved.take(), network, &mut turn, &mut sinks),
        };
        let saved = match tee.map(Write::flush) {
            Some(Err(err)) => Err(fail(Kind::CannotWrite, format!("cannot write the saved stream: {err}"))),
            _ => Ok(()),
        };
        let mut ended = turn.conclude(read, saved);
        if let Some(explain) = explain_timeout {
            ended.failure = ended.failure.map(explain);
        }
        if let Some(service) = service {
            ended = settle(&service.client, ended, turn.transcript.chat_id());
        }
        let mut record = draft(at, &question, &turn, &ended, service);
        record.queries = observer.queries.take();
        record.thread = thread.map(|(thread, ..)| thread.name.clone());
        let turn_exit_code = ended.exit_code();
        let judged = judge(Judging {
            turn: &turn,
            ended,
            record: &record,
            observer,
            out,
        });
        let judged_code = judged
            .as_ref()
            .err()
            .map_or(crate::error::SUCCESS, |fault| fault.kind.exit_code());
        (record.exit_code, record.verdict_exit_code) = match record_as.verdict_apart {
            true => (turn_exit_code, Some(judged_code)),
            false => (judged_code, None),
        };
        record.command = record_as.command.to_string();
        record.suite = record_as.suite;
        record.case = record_as.case;
        // A read of the thread so far (no question, no turn resumed) asks
        // nothing: it is neither recorded nor traced.
        let asked = service.is_some() && !question.reads_thread();
        if let (Some(recording), true) = (self.recording, asked) {
            crate::history::write(&recording.db, recording.keep, &record, self.notes);
        }
        if let (Some(spans), true) = (self.trace.spans(), asked) {
            spans.add_turn(&record, &turn.sql_results, SystemTime::now(), parent);
        }
        match &self.trace {
            Trace::Sent(spans) => {
                crate::telemetry::export(spans, network.connect_timeout, self.notes, self.recording).and(judged)
            }
            Trace::Off | Trace::Into(_) => judged,
        }
    }

    /// Asks `question` of `service` and reads the turn into `turn` through
    /// `sinks`. When the connection drops, the service suspends the turn,
    /// or the stream ends while the agent is still writing, the same
    /// `chatId` and `messageId` are sent again after a pause (the service
    /// attaches to the running turn or resumes the suspended one,
    /// replaying what was read, which the turn does not take in twice), up
    /// to `network.retries` times and within `--timeout`. The result is
    /// how the last read ended.
    fn read(
        &self,
        service: &Service<'_>,
        question: &Question,
        network: Network,
        turn: &mut Turn,
        sinks: &mut Sinks<'_>,
    ) -> Result<()> {
        let mut question = question.clone();
        loop {
            let mut source = service
                .client
                .start(&question, network, turn.started())?
                .holding_stops_until(turn.chat_id_known());
            let read = source.wait_open().and_then(|()| turn.read(source, sinks));
            let Some(resumable) = turn.resumable(&read) else {
                return read;
            };
            let attempt = turn.resumes() + 1;
            let pause = backoff(attempt);
            let out_of_time = network
                .limits
                .timeout
                .is_some_and(|limit| turn.started().elapsed() + pause >= limit);
            if attempt > network.retries || out_of_time {
                return read;
            }
            let Resumable {
                why,
                chat_id,
                message_id,
            } = resumable;
            self.notes.warn(&format!(
                "{why}; resuming chat {chat_id} (message {message_id}) in {} ({attempt} of {})",
                human(pause),
                network.retries
            ));
            service.client.stop().pause(pause)?;
            question.chat_id = Some(chat_id);
            question.message_id = Some(message_id);
            turn.resume();
        }
    }

    /// The thread `--thread` names: its history database (none when it
    /// cannot be opened: a warning, and the question starts a new chat)
    /// and the chat it continues, unless it is new or older than
    /// `--thread-ttl`.
    fn thread_chat(&self, service: &Service<'_>, thread: &ThreadSettings) -> (Option<History>, Option<String>) {
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
        let chat_id = match history.thread(&thread.name, &chat_url(service.url), &service.asker) {
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
}

/// Reads a saved stream (`saved`, taken from its [`Origin::Saved`]) into
/// `turn` through `sinks`, as a source of chunks like any other, stopped as
/// a [`Source`](crate::net::source::Source) is; none left (a second turn of
/// one saved stream) is a failure.
fn replay(saved: Option<SavedStream>, network: Network, turn: &mut Turn, sinks: &mut Sinks<'_>) -> Result<()> {
    let saved = saved.ok_or_else(|| fail(Kind::Unexpected, "a saved stream is read once"))?;
    let chunks = saved.chunks(network.limits, turn.started(), &Stop::default())?;
    turn.read(chunks, sinks)
}

/// Ends a turn as `ended` says: when the chat may still be running, it is
/// aborted first (within [`ABORT_BUDGET`]) and the failure's message says
/// how that went (`…; chat X aborted`).
fn settle(client: &ChatClient, mut ended: Ended, chat_id: Option<&str>) -> Ended {
    let Some(fault) = ended.failure.take() else {
        return ended;
    };
    if !ended.aborted {
        ended.failure = Some(fault);
        return ended;
    }
    let aborted = match chat_id {
        Some(chat_id) => match client.abort_stopped(chat_id, Retry::short_call(3, Some(ABORT_BUDGET))) {
            Ok(()) => format!("; chat {chat_id} aborted"),
            Err(err) => format!("; aborting chat {chat_id} failed: {err:#}"),
        },
        None => " before the chat started; nothing to abort".to_string(),
    };
    ended.failure = Some(fault.saying(aborted));
    ended
}

/// A turn asked at `at` as the history records it (what only the command
/// knows is set when it is recorded: see [`RecordAs`]); `service`: where it
/// was asked, none for a saved stream.
fn draft(at: String, question: &Question, turn: &Turn, ended: &Ended, service: Option<&Service<'_>>) -> TurnRecord {
    let transcript = &turn.transcript;
    let millis = |duration: Duration| duration.as_millis() as u64;
    TurnRecord {
        at,
        chat_url: service.map(|service| chat_url(service.url)),
        identity: service.map(|service| service.asker.clone()),
        chat_id: transcript.chat_id().map(str::to_string),
        message_id: transcript.message_id().map(str::to_string),
        question: question.input.as_deref().map(|question| redact(question).into_owned()),
        answer: transcript
            .answer()
            .map(|(answer, _)| kept_answer(&answer, transcript.answer_is_cut())),
        status: ended.status.as_str().to_string(),
        usage: transcript.usage().cloned(),
        first_byte_ms: turn.timings.first_byte.map(millis),
        answer_ms: turn.timings.answer.map(millis),
        total_ms: millis(turn.timings.total),
        ..TurnRecord::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Limits, ANSWER_CUT_MARKER, MAX_KEPT_ANSWER};
    use crate::expect::Check;
    use crate::expect::Expectations;
    use crate::stream::turn::Status;

    /// A stream of one chat: its id, then a final answer.
    fn saved_stream(answer: &str) -> Vec<u8> {
        let answer = serde_json::to_string(answer).unwrap();
        format!(
            "{{\"id\":\"__cutoff__\",\"role\":\"assistant\",\"state\":{{\"chatId\":\"chat-1\",\"isStreaming\":false}},\"sort\":0}}\n\
             {{\"id\":\"m-1\",\"role\":\"assistant\",\"content\":{answer},\"graphPath\":[\"final\"],\"isDelta\":false,\"isInProcess\":false,\"sort\":1}}\n"
        )
        .into_bytes()
    }

    fn plan<'a, 'o>(observer: &'a mut TurnObserver<'o>, out: &'a mut Vec<u8>) -> Plan<'a, 'o> {
        Plan {
            question: Question::default(),
            thread: None,
            started: Instant::now(),
            network: Network {
                connect_timeout: Duration::from_secs(1),
                limits: Limits::default(),
                retries: 0,
            },
            keep: Keep::default(),
            tee: None,
            observer,
            out,
            explain_timeout: None,
            record_as: RecordAs::default(),
            parent: None,
        }
    }

    fn saved(bytes: Vec<u8>) -> Exchange<'static> {
        static NOTES: std::sync::OnceLock<Notes> = std::sync::OnceLock::new();
        Exchange {
            origin: Origin::Saved(Cell::new(Some(SavedStream::File(Box::new(std::io::Cursor::new(
                bytes,
            )))))),
            recording: None,
            trace: Trace::Off,
            notes: NOTES.get_or_init(|| Notes::new(true, false, false, false)),
        }
    }

    #[test]
    fn the_owner_hands_the_judge_the_whole_ended_turn_and_returns_its_verdict() {
        let exchange = saved(saved_stream("Revenue rose."));
        let mut observer = TurnObserver::new(None, Check::new(Expectations::default()), false);
        let mut out = Vec::new();
        let verdict: Result<(), Fault> = exchange.turn(plan(&mut observer, &mut out), |judging| {
            assert_eq!(judging.ended.status, Status::Completed);
            assert!(judging.ended.failure.is_none());
            assert_eq!(judging.record.chat_id.as_deref(), Some("chat-1"));
            assert_eq!(judging.record.answer.as_deref(), Some("Revenue rose."));
            assert_eq!(judging.record.status, "completed");
            assert_eq!(judging.record.chat_url, None, "a saved stream was asked of no service");
            Err(Fault::new(Kind::Expectation, "judged"))
        });
        let fault = verdict.unwrap_err();
        assert_eq!((fault.kind, fault.to_string().as_str()), (Kind::Expectation, "judged"));
    }

    #[test]
    fn a_saved_stream_is_read_once_and_a_malformed_one_is_a_bad_stream() {
        let exchange = saved(b"{\"id\":\n".to_vec());
        let mut observer = TurnObserver::new(None, Check::new(Expectations::default()), false);
        let mut out = Vec::new();
        let kind = |judging: Judging<'_, '_>| Ok(judging.ended.failure.as_ref().map(|fault| fault.kind));
        assert_eq!(
            exchange.turn(plan(&mut observer, &mut out), kind).unwrap(),
            Some(Kind::BadStream)
        );
        assert_eq!(
            exchange.turn(plan(&mut observer, &mut out), kind).unwrap(),
            Some(Kind::Unexpected)
        );
    }

    #[test]
    fn every_record_cuts_a_long_answer_the_same_way() {
        let long = "é".repeat(MAX_KEPT_ANSWER);
        let exchange = saved(saved_stream(&long));
        let mut observer = TurnObserver::new(None, Check::new(Expectations::default()), false);
        let mut out = Vec::new();
        let answer = exchange.turn(plan(&mut observer, &mut out), |ended| Ok(ended.record.answer.clone()));
        let answer = answer.unwrap().unwrap();
        assert!(answer.ends_with(ANSWER_CUT_MARKER));
        assert_eq!(answer.len(), MAX_KEPT_ANSWER + ANSWER_CUT_MARKER.len());
        assert_eq!(kept_answer("short", false), "short");
        assert!(
            kept_answer("short", true).ends_with(ANSWER_CUT_MARKER),
            "a cut stream says so"
        );
    }
}
