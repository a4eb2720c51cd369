//! `analyst ask`: send a question (or read a saved stream), fold the NDJSON
//! answer as it arrives, render the chosen output, check expectations, and
//! pick the exit code. The turn itself is [`crate::chat`]'s.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::time::Instant;

use anyhow::Result;
use clap::ArgMatches;

use crate::chat::{
    abort_after_stop, chat_failure, read_stream, ChatClient, ChatRequest, EventNotes, Observer, StreamEnd,
};
use crate::cli::{AskArgs, GlobalArgs, OutputMode, QuerySelector};
use crate::commands::rows::{data_client, shortfall};
use crate::config::{api_key, chat_url, parse_security_context, read_stdin};
use crate::data::{Collected, DataClient, QueryOptions};
use crate::exit::{bad_stream, is_broken_pipe, usage, ExitCode, Fault};
use crate::expect::Expectations;
use crate::feed::{Feed, Limits, OpenError, Stop};
use crate::http::Http;
use crate::output::{Notes, Out};
use crate::render::live::Live;
use crate::render::table::{TableFormat, TableWriter};
use crate::render::{self, Status};
use crate::results::SqlResult;
use crate::signals;
use crate::stream::lines::Line;
use crate::stream::message::Message;
use crate::stream::transcript::{AnswerSource, Event, Retention, Transcript};

/// Runs `ask`. `matches` are the subcommand's clap matches, used to let a
/// flag win over the environment between `--external-id` and `--internal-id`.
pub fn run(args: AskArgs, matches: Option<&ArgMatches>, global: &GlobalArgs, notes: &Notes) -> Result<ExitCode> {
    let started = Instant::now();
    signals::watch();
    let expectations = Expectations::new(
        args.expect_answer.as_deref(),
        args.expect_sql.as_deref(),
        &args.expect_tool,
        args.min_rows,
        args.query,
        "--",
    )?;
    let mut tee = match &args.tee {
        Some(path) => Some(BufWriter::new(File::create(path).map_err(|err| {
            usage(format!("cannot create the --tee file {}: {err}", path.display()))
        })?)),
        None => None,
    };
    let limits = Limits {
        timeout: global.timeout,
        idle: Some(global.idle_timeout),
    };
    let (mut feed, client) = match &args.replay {
        Some(path) => {
            let source = open_replay(path)?;
            (Feed::start(move || Ok(source), limits, started), None)
        }
        None => {
            let (client, body) = prepare_request(&args, matches, global, notes)?;
            (client.start(body, limits, started), Some(client))
        }
    };
    let mut out = Out::stdout();
    let mut transcript = Transcript::new(retention(&args, &expectations));
    match feed.wait_open() {
        Ok(()) => {}
        Err(OpenError::Failed(err)) => return fail_before_stream(err, &args, &transcript, &mut out),
        Err(OpenError::Stopped(stop)) => return stopped(stop, client.as_ref(), &args, &transcript, &mut out),
    }
    let stdout_is_terminal = io::stdout().is_terminal();
    let live = (notes.show_progress() && (args.output == OutputMode::Answer || !stdout_is_terminal))
        .then(|| Live::start(args.output == OutputMode::Answer && stdout_is_terminal));
    let mut observer = AskObserver {
        output: args.output,
        out: &mut out,
        notes: EventNotes::new(notes),
        live,
    };
    let (end, _) = read_stream(
        feed,
        &mut transcript,
        tee.as_mut().map(|tee| tee as &mut dyn Write),
        &mut observer,
        started,
    )?;
    let mut live = observer.live.take();
    if let Some(live) = &live {
        live.stop();
    }
    if let Some(tee) = tee.as_mut() {
        tee.flush()
            .map_err(|err| Fault::new(ExitCode::Unexpected, format!("writing the --tee file: {err}")))?;
    }
    match end {
        StreamEnd::Ended(failure) => {
            let ask = Ask {
                args: &args,
                global,
                notes,
                started,
                expectations,
            };
            let code = ask.finish(&mut transcript, failure, live.as_mut(), &mut out);
            // Freeing a long chat's transcript piece by piece (every result
            // of `-o json`) takes a while; the process ends next, so that
            // is done beside it rather than before it.
            // (Should no thread be had, it is freed here, as before.)
            let _ = std::thread::Builder::new().spawn(move || drop(transcript));
            code
        }
        StreamEnd::Stopped(stop) => stopped(stop, client.as_ref(), &args, &transcript, &mut out),
        StreamEnd::ReaderGone => {
            if let (Some(client), Some(chat_id)) = (&client, transcript.chat_id()) {
                match client.abort(chat_id) {
                    Ok(()) => notes.debug(&format!("stdout was closed: chat {chat_id} aborted")),
                    Err(err) => notes.debug(&format!("stdout was closed; aborting chat {chat_id} failed: {err:#}")),
                }
            }
            Ok(ExitCode::Success)
        }
    }
}

/// What `ask` does with each event and line: forwards `raw` and `events`
/// output, prints notes, and drives the terminal display.
struct AskObserver<'a> {
    output: OutputMode,
    out: &'a mut Out,
    notes: EventNotes<'a>,
    live: Option<Live>,
}

impl Observer for AskObserver<'_> {
    fn event(&mut self, event: &Event) {
        match &mut self.live {
            Some(live) => {
                live.event(event);
                live.suspend(|| self.notes.note(event));
            }
            None => self.notes.note(event),
        }
    }

    fn line(&mut self, line: &Line<'_>, message: Option<&Message<'_>>, transcript: &Transcript) -> io::Result<()> {
        match (self.output, message) {
            (OutputMode::Raw, _) => {
                // Flushed before the reader would wait for more: each line
                // leaves as soon as it came, without a syscall per line.
                self.out.write_all(line.bytes)?;
                if !line.more_buffered {
                    self.out.flush()?;
                }
            }
            (OutputMode::Events, Some(message)) => render::events::write_line(line.content(), message, self.out)?,
            _ => {}
        }
        match &mut self.live {
            Some(live) => live.line(message, transcript, self.out),
            None => Ok(()),
        }
    }
}

/// The command was stopped before the stream ended: abort the chat if one
/// is running, still write the `-o json` document (`status: "aborted"`),
/// and fail with the stop's exit code (130, 143, 124).
fn stopped(
    stop: Stop,
    client: Option<&ChatClient>,
    args: &AskArgs,
    transcript: &Transcript,
    out: &mut Out,
) -> Result<ExitCode> {
    let message = format!("{stop}{}", abort_after_stop(client, transcript));
    if args.output == OutputMode::Json {
        write_failure_document(transcript, Status::Aborted, &message, out);
    } else {
        let _ = out.flush();
    }
    Err(Fault::new(stop.exit_code(), message).into())
}

/// What each output keeps of the stream: only `json` keeps every result;
/// `--min-rows` needs the selected one.
fn retention(args: &AskArgs, expectations: &Expectations) -> Retention {
    match (args.output, expectations.needs_query()) {
        (OutputMode::Json, _) => Retention::All,
        (OutputMode::Csv | OutputMode::Vega, _) => Retention::Selected(args.query),
        (_, Some(query)) => Retention::Selected(query),
        (OutputMode::Answer | OutputMode::Raw | OutputMode::Events, None) => Retention::Nothing,
    }
}

fn open_replay(path: &str) -> Result<Box<dyn Read + Send>> {
    if path == "-" {
        return Ok(Box::new(io::stdin()));
    }
    let file = File::open(path).map_err(|err| usage(format!("cannot read --replay file {path}: {err}")))?;
    Ok(Box::new(file))
}

/// Checks everything the request needs before anything is sent (the URL,
/// the identity rules, the question, the key) and returns the client and
/// the request body.
fn prepare_request(
    args: &AskArgs,
    matches: Option<&ArgMatches>,
    global: &GlobalArgs,
    notes: &Notes,
) -> Result<(ChatClient, serde_json::Value)> {
    let url = chat_url(&args.endpoint)?;
    let settings = args.identity.to_input(matches).validate()?;
    if args.question.as_deref() == Some("-") && args.endpoint.key.api_key_file.as_deref() == Some("-") {
        return Err(usage(
            "standard input cannot hold both the question ('-') and the API key (--api-key-file -)",
        ));
    }
    let question = match args.question.as_deref() {
        Some("-") => Some(read_stdin("the question")?),
        Some(text) => Some(text.to_string()),
        None => None,
    };
    let question = question.map(|q| q.trim().to_string());
    if question.as_deref() == Some("") {
        return Err(usage("the question is empty"));
    }
    let chat_id = args.chat_id.as_deref().map(str::trim);
    if chat_id == Some("") {
        return Err(usage("--chat-id is empty"));
    }
    if question.is_none() && chat_id.is_none() {
        return Err(usage(
            "ask what? give a QUESTION ('-' reads it from stdin), or --chat-id ID alone to print that thread",
        ));
    }
    let branch = args.branch.as_deref().map(str::trim);
    if branch == Some("") {
        return Err(usage("--branch is empty"));
    }
    let key = api_key(&args.endpoint.key, global, notes)?;
    let body = serde_json::to_value(ChatRequest {
        input: question.as_deref(),
        chat_id,
        session_settings: &settings,
        active_branch_name: branch,
        is_default_branch: branch.map(|_| args.default_branch),
    })?;
    let client = ChatClient::new(Http::new(global.connect_timeout, notes)?, url, key, settings);
    Ok((client, body))
}

/// The request was sent but no stream came back (a status, a refused
/// connection): `-o json` still gets its document (`status: "error"`), then
/// the error goes up with its code.
fn fail_before_stream(err: anyhow::Error, args: &AskArgs, transcript: &Transcript, out: &mut Out) -> Result<ExitCode> {
    if args.output == OutputMode::Json {
        write_failure_document(transcript, Status::Error, &format!("{err:#}"), out);
    }
    Err(err)
}

/// Writes `-o json` for a run that failed or stopped. Best effort: the
/// failure's exit code is what a script must see, even when stdout is gone.
fn write_failure_document(transcript: &Transcript, status: Status, failure: &str, out: &mut Out) {
    let _ = render::json::write(transcript, status, Some(failure), out).and_then(|()| out.flush());
}

/// One run of `ask` once the stream has ended: what it was asked for, and
/// how to finish (render, `--all-rows` through the data query API — its
/// client made only when a result is truncated, so a complete chat needs no
/// data credentials — and the expectations).
struct Ask<'a> {
    args: &'a AskArgs,
    global: &'a GlobalArgs,
    notes: &'a Notes,
    started: Instant,
    expectations: Expectations,
}

impl Ask<'_> {
    /// The client, with `--security-context` as a signed token's payload.
    fn client(&self) -> Result<DataClient> {
        let context = self
            .args
            .identity
            .security_context
            .as_deref()
            .map(parse_security_context)
            .transpose()?;
        data_client(
            &self.args.data,
            context,
            QueryOptions::default(),
            self.global,
            self.notes,
        )
    }

    fn limits(&self) -> Limits {
        Limits {
            timeout: self.global.timeout,
            idle: Some(self.global.idle_timeout),
        }
    }

    fn sql<'r>(&self, result: &'r SqlResult) -> Result<&'r str> {
        result
            .sql
            .as_deref()
            .ok_or_else(|| bad_stream("a truncated SQL result carries no SQL to fetch its rows with"))
    }

    /// Replaces the rows of `result` with every row of its query; returns
    /// `(totalRows, rows got)` when fewer came than `totalRows` says.
    fn complete(&self, client: &DataClient, result: &mut SqlResult) -> Result<Option<(u64, u64)>> {
        let mut collected = Collected::default();
        let got = client.run(self.sql(result)?, &mut collected, self.limits(), self.started)?;
        result.columns = collected.columns;
        result.rows = collected.rows;
        Ok(result.total_rows.filter(|&total| got < total).map(|total| (total, got)))
    }

    /// Streams every row of `result`'s query to `out` as CSV; returns
    /// `(totalRows, rows got)` when fewer came than `totalRows` says.
    fn stream_csv(&self, result: &SqlResult, out: &mut Out) -> Result<Option<(u64, u64)>> {
        let mut writer = TableWriter::new(TableFormat::Csv, &mut *out);
        let got = self
            .client()?
            .run(self.sql(result)?, &mut writer, self.limits(), self.started)?;
        writer.finish()?;
        Ok(result.total_rows.filter(|&total| got < total).map(|total| (total, got)))
    }

    /// Decides status and exit code, renders the finishing outputs, checks
    /// the expectations, and reports the failure (if any) as an error
    /// carrying its code: the chat's failure, then unmet expectations (9),
    /// then tool errors with `--fail-on-tool-error` (8). A closed stdout
    /// alone is success.
    fn finish(
        &self,
        transcript: &mut Transcript,
        stream_failure: Option<anyhow::Error>,
        live: Option<&mut Live>,
        out: &mut Out,
    ) -> Result<ExitCode> {
        let (args, notes, expectations) = (self.args, self.notes, &self.expectations);
        let failure = stream_failure.or_else(|| chat_failure(transcript));
        let status = match (&failure, transcript.answer()) {
            _ if transcript.aborted() => Status::Aborted,
            (Some(_), _) => Status::Error,
            (None, Some((_, AnswerSource::Final))) => Status::Completed,
            (None, _) if transcript.is_thread_state() => Status::Completed,
            (None, _) => Status::Incomplete,
        };
        if failure.is_none() && status == Status::Incomplete {
            notes.warn("no final answer in the stream: using the last complete assistant message");
        }
        if let Some(err) = failure {
            if args.output == OutputMode::Json {
                write_failure_document(transcript, status, &format!("{err:#}"), out);
            } else {
                let _ = out.flush();
            }
            return Err(err);
        }
        let mut live = live;
        let streamed = match live.as_deref_mut() {
            Some(live) if args.output == OutputMode::Answer => live.finish_answer(transcript, out)?,
            _ => false,
        };
        let rendered = if streamed {
            Ok(())
        } else {
            self.render_final(transcript, status, out)
        };
        let rendered = rendered.and_then(|()| Ok(out.flush()?));
        if let (Some(live), OutputMode::Answer) = (&live, args.output) {
            live.summary(notes);
        }
        if let Err(err) = &rendered {
            if !is_broken_pipe(err) {
                return rendered.map(|()| ExitCode::Success);
            }
        }
        let unmet = expectations.unmet(transcript);
        for line in &unmet {
            notes.expectation(line);
        }
        if !unmet.is_empty() {
            return Err(Fault::new(ExitCode::Expectation, format!("{} expectation(s) not met", unmet.len())).into());
        }
        if args.fail_on_tool_error && transcript.tool_errors() > 0 {
            let count = transcript.tool_errors();
            return Err(Fault::new(
                ExitCode::ToolError,
                format!("{count} tool call(s) failed (--fail-on-tool-error)"),
            )
            .into());
        }
        rendered.map(|()| ExitCode::Success)
    }

    /// Writes the outputs rendered when the stream has ended well.
    fn render_final(&self, transcript: &mut Transcript, status: Status, out: &mut Out) -> Result<()> {
        let args = self.args;
        let mut short = Vec::new();
        match args.output {
            OutputMode::Json => {
                if args.all_rows {
                    let mut truncated = transcript
                        .queries_mut()
                        .filter(|q| q.is_truncated() && q.error.is_none())
                        .peekable();
                    if truncated.peek().is_some() {
                        let client = self.client()?;
                        for result in truncated {
                            short.extend(self.complete(&client, result)?);
                        }
                    }
                }
                render::json::write(transcript, status, None, out)?;
            }
            OutputMode::Answer => render::answer::write(transcript, out)?,
            OutputMode::Csv => {
                let result = transcript.select(args.query)?;
                if args.all_rows && result.is_truncated() {
                    short.extend(self.stream_csv(result, out)?);
                } else {
                    render::table::write_result(result, TableFormat::Csv, out)?;
                }
            }
            OutputMode::Vega => {
                let which = match args.query {
                    QuerySelector::Last => "the last SQL result".to_string(),
                    QuerySelector::Index(n) => format!("SQL result {n}"),
                };
                let mut result = transcript.select(args.query)?.clone();
                if args.all_rows && result.is_truncated() {
                    short.extend(self.complete(&self.client()?, &mut result)?);
                }
                render::vega::write(&result, &which, out)?;
            }
            OutputMode::Raw | OutputMode::Events => {}
        }
        match short.into_iter().find_map(|(total, got)| shortfall(Some(total), got)) {
            Some(why) => Err(Fault::new(ExitCode::Partial, why).into()),
            None => Ok(()),
        }
    }
}
