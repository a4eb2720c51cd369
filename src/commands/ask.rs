//! `analyst ask`: send a question (or read a saved stream), through the
//! owner of a turn, [`Exchange::turn`], which asks, reads, records and
//! traces it; this command judges how it ended: the chat's failure, then
//! the output written to its end, then unmet expectations, then tool
//! errors with `--fail-on-tool-error`.

use std::time::Instant;

use anyhow::Result;

use crate::error::{Fault, Kind};
use crate::exchange::{Exchange, Judging, Origin, Plan, RecordAs, Trace, TurnObserver};
use crate::expect::Check;
use crate::files::LazyFile;
use crate::output::{Notes, Out};
use crate::settings::AskSettings;
use crate::signals;
use crate::stream::turn::Renderer as _;

/// Runs `analyst ask`: origin → plan → the turn, judged.
pub fn run(mut settings: AskSettings, notes: &Notes, out: &mut Out) -> Result<()> {
    let started = Instant::now();
    signals::watch();
    let (origin, question) = Origin::of(&settings.asked, settings.network)?;
    // Created when the first line arrives: a refused request leaves an
    // earlier file as it was.
    let mut tee = settings.tee.clone().map(LazyFile::new);
    let recorded = settings.recording.is_some() || settings.otlp.is_some();
    let keep = settings.printer.keep(settings.expectations.answer.is_some());
    let judge = Judge {
        fail_on_tool_error: settings.fail_on_tool_error,
        allow_questions: settings.printer.allows_questions(),
        thread: settings.thread.as_ref().map(|thread| thread.name.clone()),
        notes,
    };
    let mut check = Check::new(settings.expectations.clone());
    if settings.expectations.faithful || settings.printer.reports_figures() {
        check = check.reading_figures(question.input.as_deref().unwrap_or_default());
    }
    let mut observer = TurnObserver::new(Some(&mut settings.printer), check, recorded);
    let exchange = Exchange {
        origin,
        recording: settings.recording.as_ref(),
        trace: Trace::sent(settings.otlp.clone()),
        notes,
    };
    let plan = Plan {
        question,
        thread: settings.thread.as_ref(),
        started,
        network: settings.network,
        keep,
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
    Ok(exchange.turn(plan, |judging| judge.judge(judging))?)
}

/// How `ask` ends once its turn is over.
struct Judge<'n> {
    /// `--fail-on-tool-error`.
    fail_on_tool_error: bool,
    /// `--allow-questions`.
    allow_questions: bool,
    /// `--thread`: how to reply to an agent that asks back.
    thread: Option<String>,
    notes: &'n Notes,
}

impl Judge<'_> {
    /// The chat's failure (`-o json` still writes its document; a closed
    /// stdout is success), else the output written to its end (every row
    /// fetched with `--all-rows`), a signal that came meanwhile, the agent
    /// asking back (unless `--allow-questions`), unmet expectations, and
    /// tool errors with `--fail-on-tool-error`, in that order.
    fn judge(&self, judging: Judging<'_, '_>) -> Result<(), Fault> {
        let Judging {
            turn,
            ended,
            observer,
            out,
            ..
        } = judging;
        let transcript = &turn.transcript;
        let rendered = observer.end(transcript, &ended, out).and_then(|()| Ok(out.flush()?));
        if let Some(fault) = ended.failure {
            return match fault.kind {
                Kind::ReaderGone => {
                    self.notes.debug(&format!("stdout was closed: {fault}"));
                    Ok(())
                }
                _ => Err(fault),
            };
        }
        // A signal that came while the output was written (fetching every
        // row, a slow reader) is not ignored.
        if let Some(signal) = signals::received() {
            return Err(signal.fault());
        }
        let rendered = rendered.map_err(|err| Fault::of(&err));
        if let Err(fault) = &rendered {
            if fault.kind != Kind::ReaderGone {
                return rendered;
            }
        }
        if let (Some(question), false) = (&ended.asks_back, self.allow_questions) {
            return Err(self.asked_back(question, transcript.chat_id()));
        }
        let unmet = observer.check.unmet(transcript);
        for line in &unmet {
            self.notes.expectation(line);
        }
        if !unmet.is_empty() {
            return Err(Fault::new(
                Kind::Expectation,
                format!("{} expectation(s) not met", unmet.len()),
            ));
        }
        let tool_errors = transcript.tool_errors();
        if self.fail_on_tool_error && tool_errors > 0 {
            let message = format!("{tool_errors} tool call(s) failed (--fail-on-tool-error)");
            return Err(Fault::new(Kind::ToolError, message));
        }
        Ok(())
    }

    /// Shows the agent's question on stderr, with how to reply; the
    /// failure (exit 12).
    fn asked_back(&self, question: &str, chat_id: Option<&str>) -> Fault {
        self.notes.always("the agent asks back instead of answering:");
        for line in question.lines() {
            self.notes.always(&format!("  {line}"));
        }
        let reply = match (&self.thread, chat_id) {
            (Some(thread), _) => format!("analyst ask --thread {thread} 'your answer'"),
            (None, Some(chat_id)) => format!("analyst ask --chat-id {chat_id} 'your answer'"),
            (None, None) => "analyst ask --chat-id ID 'your answer'".to_string(),
        };
        Fault::new(
            Kind::AskedBack,
            format!("the agent asked back; to reply: {reply} (--allow-questions takes the question as the answer)"),
        )
    }
}
