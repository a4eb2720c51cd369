//! `analyst ask`: send a question (or read a saved stream), read the turn
//! into the chosen output, and decide how it ended: the chat's failure,
//! then unmet expectations, then tool errors with `--fail-on-tool-error`.
//! A turn stopped early (a signal, the deadline, a stall, stdout closed)
//! aborts the chat first.

use std::cell::OnceCell;
use std::fs::File;
use std::io::{self, Read, Write};
use std::time::Instant;

use anyhow::Result;

use super::record::{self, QueryLog};
use crate::api::chat::ChatClient;
use crate::api::data::DataClient;
use crate::cli::OutputMode;
use crate::error::{fail, kind_of, usage, Kind, SUCCESS};
use crate::expect::Check;
use crate::files::LazyFile;
use crate::history::{chat_url, History, TurnRecord, MAX_RECORDED_ANSWER};
use crate::net::http::Http;
use crate::net::signals;
use crate::net::source::Source;
use crate::output::{Notes, Out};
use crate::render::live::{Mode, Watched};
use crate::render::table::TableFormat;
use crate::render::vega::ChartFormat;
use crate::render::{answer, csv, events, html, json, raw, vega};
use crate::results::{RowSink, RowSource};
use crate::settings::{AskSettings, AskSource, ChatSettings, DataSettings, Network, ThreadSettings};
use crate::stream::transcript::{AnswerText, Keep, Transcript};
use crate::stream::turn::{Ending, Failure, Renderer, Sinks, Status, Turn};

/// Runs `analyst ask`, and records the turn in the history (with the exit
/// code it ends with) when it was asked of the service.
pub fn run(settings: AskSettings, notes: &Notes, out: &mut Out) -> Result<()> {
    let mut recorded = None;
    let result = ask(&settings, notes, out, &mut recorded);
    if let (Some(recording), Some(mut turn)) = (&settings.recording, recorded) {
        turn.exit_code = match &result {
            Ok(()) => SUCCESS,
            Err(err) => kind_of(err).exit_code(),
        };
        record::write(recording, &turn, notes);
    }
    result
}

/// The thread `--thread` names: its history database (none when it cannot
/// be opened: a warning, and the question starts a new chat) and the chat
/// it continues, unless it is new or older than `--thread-ttl`.
fn thread_chat(thread: &ThreadSettings, chat: &ChatSettings, notes: &Notes) -> (Option<History>, Option<String>) {
    let history = match History::open(&thread.db) {
        Ok(history) => history,
        Err(why) => {
            notes.warn(&format!(
                "--thread {}: {why:#}; the question starts a new chat",
                thread.name
            ));
            return (None, None);
        }
    };
    let known = history.thread(&thread.name, &chat_url(&chat.url), &chat.asker(None));
    let chat_id = match known {
        Ok(Some(known)) if known.last_turn_at >= crate::history::before(thread.ttl) => Some(known.chat_id),
        Ok(Some(known)) => {
            notes.info(&format!(
                "thread {}: its last turn ({}) is older than --thread-ttl: starting afresh",
                thread.name, known.last_turn_at
            ));
            None
        }
        Ok(None) => None,
        Err(why) => {
            notes.warn(&format!("--thread {}: {why:#}", thread.name));
            None
        }
    };
    (Some(history), chat_id)
}

/// Asks (or replays) and renders; `recorded` receives the turn as the
/// history records it, when it was asked of the service.
fn ask(settings: &AskSettings, notes: &Notes, out: &mut Out, recorded: &mut Option<TurnRecord>) -> Result<()> {
    let started = Instant::now();
    let at = crate::history::now();
    signals::watch();
    let network = settings.network;
    // Created when the first line arrives: a refused request leaves an
    // earlier file as it was.
    let mut tee = settings.tee.clone().map(LazyFile::new);
    let output = Watched::new(
        renderer(settings, notes),
        mode(settings.output),
        notes,
        settings.display,
        settings.all_rows,
    );
    let mut renderer = (
        (output, Check::new(settings.expectations.clone())),
        QueryLog::new(settings.recording.is_some()),
    );
    let mut sinks = Sinks {
        tee: tee.as_mut().map(|tee| tee as &mut dyn Write),
        renderer: &mut renderer,
        out,
    };
    let (turn, client, read) = match &settings.source {
        AskSource::Replay(path) => {
            let file = open_replay(path)?;
            let mut source = Source::start(move || Ok(file), network.limits, started);
            let mut turn = Turn::new(started);
            turn.transcript.keep(keep(settings));
            let read = source.wait_open().and_then(|()| turn.read(source, &mut sinks));
            (turn, None, read)
        }
        AskSource::Chat { chat, question } => {
            if let Some(id) = &question.message_id {
                notes.info(&format!("message: {id}"));
            }
            let mut question = question.clone();
            let thread = settings.thread.as_ref().map(|thread| {
                let (history, chat_id) = thread_chat(thread, chat, notes);
                question.chat_id = chat_id.clone();
                (thread, history, chat_id)
            });
            let client = ChatClient::new(Http::new(network.connect_timeout, notes)?, chat);
            let mut turn = Turn::of(&question, started);
            turn.transcript.keep(keep(settings));
            let mut read = client.read_turn(&question, network, &mut turn, &mut sinks);
            // A thread whose chat the service forgot starts afresh.
            if let Some((thread, _, Some(chat_id))) = &thread {
                if read.as_ref().is_err_and(|err| kind_of(err) == Kind::NotFound) && turn.transcript.chat_id().is_none()
                {
                    notes.info(&format!(
                        "thread {}: the service no longer knows chat {chat_id}: starting afresh",
                        thread.name
                    ));
                    question.chat_id = None;
                    turn = Turn::of(&question, started);
                    turn.transcript.keep(keep(settings));
                    read = client.read_turn(&question, network, &mut turn, &mut sinks);
                }
            }
            if let Some((thread, Some(history), _)) = &thread {
                if let Some(chat_id) = turn.transcript.chat_id() {
                    let kept = history.set_thread(&thread.name, &chat_url(&chat.url), &chat.asker(None), chat_id);
                    if let Err(why) = kept {
                        notes.warn(&format!("--thread {}: the chat id was not kept: {why:#}", thread.name));
                    }
                }
            }
            (turn, Some((client, chat, question)), read)
        }
    };
    let tee_flushed = match tee.as_mut().map(Write::flush) {
        Some(Err(err)) => Err(fail(Kind::CannotWrite, format!("cannot write the --tee file: {err}"))),
        _ => Ok(()),
    };
    let transcript = &turn.transcript;
    let conclusion = turn.conclude(read, tee_flushed);
    let status = conclusion.status;
    let failure = match &client {
        Some((client, ..)) => client.settle(conclusion, transcript.chat_id()),
        None => conclusion.failure,
    };
    let (mut renderer, queries) = renderer;
    if let (Some((_, chat, question)), Some(_)) = (&client, &settings.recording) {
        let mut turn_record = record::turn(
            at,
            &chat.url,
            chat.asker(None),
            question.input.as_deref(),
            transcript,
            status,
            &turn.timings,
        );
        turn_record.command = "ask".into();
        turn_record.queries = queries.into_queries();
        turn_record.thread = settings.thread.as_ref().map(|thread| thread.name.clone());
        *recorded = Some(turn_record);
    }
    if let Some(err) = failure {
        let kind = kind_of(&err);
        if kind == Kind::ReaderGone {
            notes.debug(&format!("stdout was closed: {err:#}"));
            return Ok(());
        }
        let message = format!("{err:#}");
        write_failure(&mut renderer, transcript, status, kind, &message, out);
        return Err(fail(kind, message));
    }
    let all_rows = AllRows {
        settings: &settings.data,
        network,
        started,
        notes,
        client: OnceCell::new(),
    };
    let ending = Ending {
        status,
        failure: None,
        all_rows: settings.all_rows.then_some(&all_rows as &dyn RowSource),
        allow_partial: settings.allow_partial,
    };
    let rendered = renderer.end(transcript, &ending, out).and_then(|()| Ok(out.flush()?));
    // A signal that came while the output was written (fetching every
    // row, a slow reader) is not ignored.
    if let Some(signal) = signals::received() {
        return Err(signal.fault().into());
    }
    if let Err(err) = &rendered {
        if kind_of(err) != Kind::ReaderGone {
            return rendered;
        }
    }
    let unmet = renderer.1.unmet(transcript);
    for line in &unmet {
        notes.expectation(line);
    }
    if !unmet.is_empty() {
        return Err(fail(
            Kind::Expectation,
            format!("{} expectation(s) not met", unmet.len()),
        ));
    }
    if settings.fail_on_tool_error && transcript.tool_errors() > 0 {
        let count = transcript.tool_errors();
        return Err(fail(
            Kind::ToolError,
            format!("{count} tool call(s) failed (--fail-on-tool-error)"),
        ));
    }
    rendered
}

/// The renderer of the `-o` mode `settings` chose (with the SQL result
/// `--query` picks; for charts, `--vega-config`, and `--scale` for `png`);
/// `notes` is where its warnings go.
fn renderer(settings: &AskSettings, notes: &Notes) -> Box<dyn Renderer> {
    let (pick, scale, config) = (settings.pick, settings.scale, settings.vega_config.clone());
    match settings.output {
        OutputMode::Answer => Box::new(answer::Answer),
        OutputMode::Raw => Box::new(raw::Raw),
        OutputMode::Events => Box::new(events::Events),
        OutputMode::Json => Box::new(json::Json::default()),
        OutputMode::Csv => Box::new(csv::Csv::new(pick, TableFormat::Csv)),
        OutputMode::Table => Box::new(csv::Csv::new(pick, TableFormat::Aligned(settings.display.width))),
        OutputMode::Vega => Box::new(vega::Vega::new(pick, notes, ChartFormat::Spec, config)),
        OutputMode::Svg => Box::new(vega::Vega::new(pick, notes, ChartFormat::Svg, config)),
        OutputMode::Png => Box::new(vega::Vega::new(pick, notes, ChartFormat::Png(scale), config)),
        OutputMode::Html => Box::new(html::Html::new(pick, notes, config)),
    }
}

/// What of the turn the output, the expectations and the history read:
/// the answer's text where it is shown, matched or recorded, every tool
/// call's input in `json`.
fn keep(settings: &AskSettings) -> Keep {
    let output = settings.output;
    let shown = matches!(output, OutputMode::Answer | OutputMode::Json | OutputMode::Html)
        || settings.expectations.answer.is_some();
    Keep {
        answer_text: match (shown, settings.recording.is_some()) {
            (true, _) => AnswerText::Whole,
            // What the history records: the head, so that recording never
            // changes what the command costs.
            (false, true) => AnswerText::Head(MAX_RECORDED_ANSWER),
            (false, false) => AnswerText::None,
        },
        tool_inputs: output == OutputMode::Json,
    }
}

/// What `-o mode` shows, as the notes see it.
fn mode(output: OutputMode) -> Mode {
    match output {
        OutputMode::Answer => Mode::Answer,
        OutputMode::Json => Mode::Json,
        OutputMode::Raw | OutputMode::Events => Mode::Stream,
        OutputMode::Csv | OutputMode::Table => Mode::Rows,
        OutputMode::Vega | OutputMode::Svg | OutputMode::Png | OutputMode::Html => Mode::Chart,
    }
}

/// Tells the renderer the turn failed (only `-o json` writes then). Best
/// effort: the failure's exit code is what a script must see, even when
/// stdout is gone.
fn write_failure(
    renderer: &mut dyn Renderer,
    transcript: &Transcript,
    status: Status,
    kind: Kind,
    message: &str,
    out: &mut Out,
) {
    let ending = Ending {
        status,
        failure: Some(Failure { kind, message }),
        all_rows: None,
        allow_partial: true,
    };
    let _ = renderer.end(transcript, &ending, out);
    let _ = out.flush();
}

fn open_replay(path: &str) -> Result<Box<dyn Read + Send>> {
    if path == "-" {
        return Ok(Box::new(io::stdin()));
    }
    let file = File::open(path).map_err(|err| usage(format!("cannot read --replay file {path}: {err}")))?;
    Ok(Box::new(file))
}

/// Every row of a truncated result, through the data query API (whose URL
/// and credential the settings checked); its client is made on first use,
/// so a chat with no truncated result never calls the API, nor runs a
/// profile's `data_token_command`.
struct AllRows<'a> {
    settings: &'a DataSettings,
    network: Network,
    started: Instant,
    notes: &'a Notes,
    client: OnceCell<DataClient>,
}

impl RowSource for AllRows<'_> {
    fn fetch(&self, sql: &str, sink: &mut dyn RowSink) -> Result<u64> {
        let client = match self.client.get() {
            Some(client) => client,
            None => {
                let http = Http::new(self.network.connect_timeout, self.notes)?;
                let client = DataClient::new(http, self.settings, self.network, self.started, self.notes)?;
                self.client.get_or_init(|| client)
            }
        };
        client.run(sql, sink)
    }
}
