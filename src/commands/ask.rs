//! `analyst ask`: send a question (or read a saved stream), read the turn
//! into the chosen output, and decide how it ended: the chat's failure,
//! then unmet expectations, then tool errors with `--fail-on-tool-error`.
//! A turn stopped early (a signal, the deadline, a stall, stdout closed)
//! aborts the chat first.

use std::cell::{Cell, OnceCell};
use std::time::Instant;

use anyhow::Result;

use crate::api::chat::ChatClient;
use crate::api::data::DataClient;
use crate::domain::{Question, MAX_KEPT_ANSWER};
use crate::error::{fail, kind_of, Fault, Kind};
use crate::exchange::{Ended, Exchange, Origin, Plan, RecordAs, Service, TurnObserver};
use crate::expect::Check;
use crate::files::LazyFile;
use crate::modes::Mode;
use crate::net::http::Http;
use crate::net::source::SavedStream;
use crate::otel::Spans;
use crate::output::{Notes, Out, Output};
use crate::render::live::Watched;
use crate::render::RenderOptions;
use crate::results::{RowSink, RowSource};
use crate::settings::{AskSettings, AskSource, DataSettings, Network};
use crate::signals;
use crate::stream::transcript::{AnswerText, Keep, Transcript};
use crate::stream::turn::{Finish, Renderer, Status};

/// Runs `analyst ask`: the turn is asked (or replayed) and recorded by its
/// owner, [`Exchange::turn`]; this command judges how it ended.
pub fn run(settings: AskSettings, notes: &Notes, out: &mut Out) -> Result<()> {
    let started = Instant::now();
    signals::watch();
    // Created when the first line arrives: a refused request leaves an
    // earlier file as it was.
    let mut tee = settings.tee.clone().map(LazyFile::new);
    let shows = settings.mode.shows;
    let notes_truncated = shows.notes_truncated(settings.all_rows, settings.allow_partial);
    let mut output = Watched::new(
        renderer(&settings, notes),
        shows,
        notes,
        settings.display,
        notes_truncated,
        settings.filtered,
    )
    .announcing(match &settings.source {
        AskSource::Chat { question, .. } => question.message_id.clone(),
        AskSource::Replay(_) => None,
    });
    let check = Check::new(settings.expectations.clone());
    let spans = settings.otlp.clone().map(Spans::new);
    let queries_kept = settings.recording.is_some() || spans.is_some();
    let mut observer = TurnObserver::new(Some(&mut output), check, queries_kept);
    let (origin, question) = origin(&settings)?;
    let exchange = Exchange {
        origin,
        recording: settings.recording.as_ref(),
        spans: spans.as_ref(),
        notes,
    };
    let plan = Plan {
        question,
        thread: settings.thread.as_ref(),
        started,
        network: settings.network,
        keep: keep(&settings),
        tee: tee.as_mut(),
        observer: &mut observer,
        out,
        explain_timeout: None,
        record_as: RecordAs {
            command: "ask",
            ..RecordAs::default()
        },
        parent: None,
    };
    let asked = exchange.turn(plan, |ended| judge(&settings, ended, started, notes));
    let exported = super::send_spans(spans, &settings.network, notes, settings.recording.as_ref());
    exported.and(asked)
}

/// Where the turn comes from — the saved stream of `--replay`, else the
/// chat service — and the question asked of it.
fn origin(settings: &AskSettings) -> Result<(Origin<'_>, Question)> {
    match &settings.source {
        AskSource::Replay(path) => Ok((
            Origin::Saved(Cell::new(Some(SavedStream::open(path, "--replay")?))),
            Question::default(),
        )),
        AskSource::Chat { chat, question } => {
            let service = Service {
                client: ChatClient::new(Http::new(settings.network.connect_timeout)?, chat),
                url: &chat.url,
                asker: chat.asker(None),
            };
            Ok((Origin::Service(Box::new(service)), question.clone()))
        }
    }
}

/// How `ask` ends once its turn is over: the chat's failure (`-o json`
/// still writes its document), else the output written to its end (every
/// row fetched with `--all-rows`), a signal that came meanwhile, unmet
/// expectations, and tool errors with `--fail-on-tool-error`, in that
/// order.
fn judge(settings: &AskSettings, ended: Ended<'_, '_>, started: Instant, notes: &Notes) -> Result<()> {
    let Ended {
        turn,
        ending,
        observer,
        out,
        ..
    } = ended;
    let transcript = &turn.transcript;
    if let Some(err) = &ending.failure {
        return failed(err, observer, transcript, ending.status, notes, out);
    }
    let all_rows = AllRows {
        settings: &settings.data,
        network: settings.network,
        started,
        client: OnceCell::new(),
    };
    let finish = Finish {
        status: ending.status,
        failure: None,
        all_rows: settings.all_rows.then_some(&all_rows as &dyn RowSource),
        allow_partial: settings.allow_partial,
    };
    let rendered = observer.end(transcript, &finish, out).and_then(|()| Ok(out.flush()?));
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
    let unmet = observer.check.unmet(transcript);
    for line in &unmet {
        notes.expectation(line);
    }
    if !unmet.is_empty() {
        return Err(fail(
            Kind::Expectation,
            format!("{} expectation(s) not met", unmet.len()),
        ));
    }
    let tool_errors = transcript.tool_errors();
    if settings.fail_on_tool_error && tool_errors > 0 {
        let message = format!("{tool_errors} tool call(s) failed (--fail-on-tool-error)");
        return Err(fail(Kind::ToolError, message));
    }
    rendered
}

/// The renderer of the `-o` mode `settings` chose, built as its
/// descriptor says (with the SQL result `--query` picks; for charts,
/// `--vega-config`, and `--scale` for `png`); `notes` is where its warnings
/// go.
fn renderer(settings: &AskSettings, notes: &Notes) -> Box<dyn Renderer> {
    let options = RenderOptions {
        pick: settings.pick,
        scale: settings.scale,
        vega_config: settings.vega_config.clone(),
        width: settings.display.width,
    };
    (settings.mode.renderer)(&options, notes)
}

/// What of the turn the output, the expectations and the history read:
/// the answer's text where it is shown or matched; its head where it is
/// recorded, or where a mode that shows a result says, when none came,
/// that the answer holds the results as a Markdown table; every tool
/// call's input where the mode shows them.
fn keep(settings: &AskSettings) -> Keep {
    let mode = settings.mode;
    let shown = mode.answer_text || settings.expectations.answer.is_some();
    let looked_into = matches!(mode.shows, Mode::Rows | Mode::Chart);
    Keep {
        answer_text: match (shown, settings.recording.is_some() || looked_into) {
            (true, _) => AnswerText::Whole,
            // The head, so that recording never changes what the command
            // costs, and memory stays bounded however long the answer.
            (false, true) => AnswerText::Head(MAX_KEPT_ANSWER),
            (false, false) => AnswerText::None,
        },
        tool_inputs: mode.tool_inputs,
    }
}

/// How `ask` ends when its turn failed with `err`: success when stdout
/// was closed (the reader left), else the failure, told to the renderer
/// first (only `-o json` writes then). Best effort: the failure's exit
/// code is what a script must see, even when stdout is gone.
fn failed(
    err: &anyhow::Error,
    renderer: &mut dyn Renderer,
    transcript: &Transcript,
    status: Status,
    notes: &Notes,
    out: &mut dyn Output,
) -> Result<()> {
    let kind = kind_of(err);
    if kind == Kind::ReaderGone {
        notes.debug(&format!("stdout was closed: {err:#}"));
        return Ok(());
    }
    let failure = Fault::new(kind, format!("{err:#}"));
    let finish = Finish {
        status,
        failure: Some(&failure),
        all_rows: None,
        allow_partial: true,
    };
    let _ = renderer.end(transcript, &finish, out);
    let _ = out.flush();
    Err(failure.into())
}

/// Every row of a truncated result, through the data query API (whose URL
/// and credential the settings checked); its client is made on first use,
/// so a chat with no truncated result never calls the API, nor runs a
/// profile's `data_token_command`.
struct AllRows<'a> {
    settings: &'a DataSettings,
    network: Network,
    started: Instant,
    client: OnceCell<DataClient>,
}

impl RowSource for AllRows<'_> {
    /// One request, as the agent's query was run (not paged: no page can
    /// repeat, so `totalRows` is checked by the caller).
    fn fetch(&self, sql: &str, _expected: Option<u64>, sink: &mut dyn RowSink) -> Result<u64> {
        let client = match self.client.get() {
            Some(client) => client,
            None => {
                let http = Http::new(self.network.connect_timeout)?;
                let client = DataClient::new(http, self.settings, self.network, self.started)?;
                self.client.get_or_init(|| client)
            }
        };
        client.run(sql, sink)
    }
}
