//! `analyst ask`: send a question (or read a saved stream), fold the NDJSON
//! answer as it arrives, render the chosen output, and pick the exit code.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::ArgMatches;
use serde::Serialize;

use crate::cli::{AskArgs, GlobalArgs, OutputMode, QuerySelector};
use crate::commands::abort::abort_chat;
use crate::commands::rows::{data_client, shortfall};
use crate::config::{
    abort_url, load_api_key, parse_security_context, read_stdin, service_url, Secret, SessionSettings,
};
use crate::data::{Collected, DataClient, QueryOptions};
use crate::exit::{bad_stream, is_broken_pipe, usage, ExitCode, Fault};
use crate::feed::{stop_of, Feed, Limits, OpenError, Stop};
use crate::http::{root_causes, shorten, Credential, Http, Retry};
use crate::output::{Notes, Out};
use crate::render::table::{TableFormat, TableWriter};
use crate::render::{self, Status};
use crate::results::SqlResult;
use crate::signals;
use crate::stream::lines::LineReader;
use crate::stream::message::{Message, ParseError};
use crate::stream::transcript::{AnswerSource, Event, Retention, Transcript};

/// The chat request body (API document 2.2); unset fields are omitted.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ChatRequest<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    chat_id: Option<&'a str>,
    session_settings: &'a SessionSettings,
    #[serde(skip_serializing_if = "Option::is_none")]
    active_branch_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_default_branch: Option<bool>,
}

/// The time an abort may take when `ask` stops early, retries included;
/// the process is gone soon after, answered or not.
const ABORT_BUDGET: Duration = Duration::from_secs(5);

/// What `ask` accepts as the chat stream's content type.
const ACCEPT_STREAM: &str = "application/x-ndjson, application/json";

/// How reading the stream ended.
enum StreamEnd {
    /// The stream ended, well or with the failure given (cut, malformed).
    Ended(Option<anyhow::Error>),
    /// Stopped early: a signal, `--timeout`, or a stall.
    Stopped(Stop),
    /// The reader of stdout went away (`| head`).
    ReaderGone,
}

/// Runs `ask`. `matches` are the subcommand's clap matches, used to let a
/// flag win over the environment between `--external-id` and `--internal-id`.
pub fn run(args: AskArgs, matches: Option<&ArgMatches>, global: &GlobalArgs, notes: &Notes) -> Result<ExitCode> {
    let started = Instant::now();
    signals::watch();
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
    let (mut feed, live) = match &args.replay {
        Some(path) => {
            let source = open_replay(path)?;
            (Feed::start(move || Ok(source), limits, started), None)
        }
        None => {
            let live = prepare_request(&args, matches, global, notes)?;
            let (http, url, key, body) = (live.http.clone(), live.url.clone(), live.key.clone(), live.body.clone());
            let send = move || -> Result<Box<dyn Read + Send>> {
                Ok(Box::new(http.post_json(
                    &url,
                    Credential::ApiKey(&key),
                    &body,
                    ACCEPT_STREAM,
                )?))
            };
            (Feed::start(send, limits, started), Some(live))
        }
    };
    let mut out = Out::stdout();
    let mut transcript = Transcript::new(retention(&args));
    match feed.wait_open() {
        Ok(()) => {}
        Err(OpenError::Failed(err)) => return fail_before_stream(err, &args, &transcript, &mut out),
        Err(OpenError::Stopped(stop)) => return stopped(stop, live.as_ref(), &args, &transcript, &mut out),
    }
    let end = read_stream(feed, &args, &mut transcript, tee.as_mut(), &mut out, notes)?;
    if let Some(tee) = tee.as_mut() {
        tee.flush()
            .map_err(|err| Fault::new(ExitCode::Unexpected, format!("writing the --tee file: {err}")))?;
    }
    match end {
        StreamEnd::Ended(failure) => {
            let all_rows = args.all_rows.then_some(AllRows {
                args: &args,
                global,
                notes,
                started,
            });
            finish(&args, &mut transcript, failure, all_rows.as_ref(), &mut out, notes)
        }
        StreamEnd::Stopped(stop) => stopped(stop, live.as_ref(), &args, &transcript, &mut out),
        StreamEnd::ReaderGone => {
            if let (Some(live), Some(chat_id)) = (&live, transcript.chat_id()) {
                match live.abort(chat_id) {
                    Ok(()) => notes.debug(&format!("stdout was closed: chat {chat_id} aborted")),
                    Err(err) => notes.debug(&format!("stdout was closed; aborting chat {chat_id} failed: {err:#}")),
                }
            }
            Ok(ExitCode::Success)
        }
    }
}

/// The command was stopped before the stream ended: abort the chat if one
/// is running, still write the `-o json` document (`status: "aborted"`),
/// and fail with the stop's exit code (130, 143, 124).
fn stopped(
    stop: Stop,
    live: Option<&LiveChat>,
    args: &AskArgs,
    transcript: &Transcript,
    out: &mut Out,
) -> Result<ExitCode> {
    let mut message = stop.to_string();
    match (live, transcript.chat_id()) {
        (Some(live), Some(chat_id)) => match live.abort(chat_id) {
            Ok(()) => message.push_str(&format!("; chat {chat_id} aborted")),
            Err(err) => message.push_str(&format!("; aborting chat {chat_id} failed: {err:#}")),
        },
        (Some(_), None) => message.push_str(" before the chat started; nothing to abort"),
        (None, _) => {}
    }
    if args.output == OutputMode::Json {
        write_failure_document(transcript, Status::Aborted, &message, out);
    } else {
        let _ = out.flush();
    }
    Err(Fault::new(stop.exit_code(), message).into())
}

/// What each output keeps of the stream (only `json` keeps every result).
fn retention(args: &AskArgs) -> Retention {
    match args.output {
        OutputMode::Json => Retention::All,
        OutputMode::Csv | OutputMode::Vega => Retention::Selected(args.query),
        OutputMode::Answer | OutputMode::Raw | OutputMode::Events => Retention::Nothing,
    }
}

fn open_replay(path: &str) -> Result<Box<dyn Read + Send>> {
    if path == "-" {
        return Ok(Box::new(io::stdin()));
    }
    let file = File::open(path).map_err(|err| usage(format!("cannot read --replay file {path}: {err}")))?;
    Ok(Box::new(file))
}

/// A validated chat request, and what it takes to abort the chat it starts.
struct LiveChat {
    http: Http,
    url: reqwest::Url,
    key: Secret,
    settings: SessionSettings,
    body: serde_json::Value,
}

impl LiveChat {
    /// Aborts `chat_id` as the user who asked, within [`ABORT_BUDGET`].
    fn abort(&self, chat_id: &str) -> Result<()> {
        let url = abort_url(&self.url)?;
        let retry = Retry::short_call(3, Some(ABORT_BUDGET));
        abort_chat(&self.http, &url, &self.key, chat_id, &self.settings, retry)
    }
}

/// Checks everything the request needs before anything is sent: the URL,
/// the identity rules, the question and the key.
fn prepare_request(
    args: &AskArgs,
    matches: Option<&ArgMatches>,
    global: &GlobalArgs,
    notes: &Notes,
) -> Result<LiveChat> {
    let url_text = args.endpoint.chat_url.as_deref().ok_or_else(|| {
        usage("no chat URL: set ANALYST_CHAT_URL or pass --chat-url (the Chat API URL from the agent settings)")
    })?;
    let url = service_url(url_text, "--chat-url")?;
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
    let key = load_api_key(
        args.endpoint.key.api_key_file.as_deref(),
        std::env::var("ANALYST_API_KEY").ok(),
    )?;
    let body = serde_json::to_value(ChatRequest {
        input: question.as_deref(),
        chat_id,
        session_settings: &settings,
        active_branch_name: branch,
        is_default_branch: branch.map(|_| args.default_branch),
    })?;
    Ok(LiveChat {
        http: Http::new(global.connect_timeout, notes)?,
        url,
        key,
        settings,
        body,
    })
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

/// Reads the stream line by line: tees and forwards bytes (`raw`), folds
/// each message, writes `events`, and prints notes as things happen. Says
/// how the stream ended; only unexpected errors (writing `--tee`) are errors.
fn read_stream(
    source: impl Read,
    args: &AskArgs,
    transcript: &mut Transcript,
    mut tee: Option<&mut BufWriter<File>>,
    out: &mut Out,
    notes: &Notes,
) -> Result<StreamEnd> {
    let mut reader = LineReader::new(source);
    loop {
        let line = match reader.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => return Ok(StreamEnd::Ended(None)),
            Err(err) => return Ok(stream_error(&err, transcript)),
        };
        if let Some(tee) = tee.as_mut() {
            tee.write_all(line.bytes)
                .map_err(|err| Fault::new(ExitCode::Unexpected, format!("writing the --tee file: {err}")))?;
        }
        if args.output == OutputMode::Raw && reader_gone(out.write_all(line.bytes).and_then(|()| out.flush()))? {
            return Ok(StreamEnd::ReaderGone);
        }
        if let Some(stop) = line.followed_by.and_then(stop_of) {
            return Ok(StreamEnd::Stopped(stop));
        }
        let message = match Message::parse(line.content()) {
            Ok(Some(message)) => message,
            Ok(None) => continue,
            Err(err) => {
                return Ok(StreamEnd::Ended(Some(parse_failure(
                    err,
                    line.number,
                    line.is_terminated(),
                    transcript,
                ))))
            }
        };
        if let Some(event) = transcript.apply(&message) {
            note_event(&event, notes);
        }
        if args.output == OutputMode::Events && reader_gone(render::events::write_line(line.content(), &message, out))?
        {
            return Ok(StreamEnd::ReaderGone);
        }
    }
}

/// True when a write failed because stdout was closed; other write errors
/// are returned.
fn reader_gone(written: io::Result<()>) -> Result<bool> {
    match written {
        Ok(()) => Ok(false),
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(true),
        Err(err) => Err(err.into()),
    }
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
fn parse_failure(err: ParseError, number: u64, terminated: bool, transcript: &Transcript) -> anyhow::Error {
    match (err, terminated) {
        (err, false) => {
            let detail = match err {
                ParseError::Invalid(text) => text,
                ParseError::NotAnObject => "not a JSON object".into(),
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

fn note_event(event: &Event, notes: &Notes) {
    match event {
        Event::ChatId(id) => notes.info(&format!("chat: {id}")),
        Event::ToolFinished(tool) => {
            if let Some(error) = &tool.error {
                notes.warn(&format!("tool {} failed: {}", tool.name, shorten(error)));
            }
            if let Some(sql) = tool.sql.as_ref().filter(|_| tool.error.is_none()) {
                if let Some(total) = sql.total_rows.filter(|&total| total > sql.rows as u64) {
                    let title = sql.title.as_deref().map(|t| format!(" \"{t}\"")).unwrap_or_default();
                    notes.warn(&format!(
                        "SQL result {}{title} is truncated: {} of {total} rows in the stream; --all-rows fetches every row (or pipe -o raw into 'analyst rows --query {}')",
                        sql.number,
                        sql.rows,
                        sql.number
                    ));
                }
            }
        }
    }
}

/// Decides status and exit code, renders the finishing outputs, and reports
/// the failure (if any) as an error carrying its code.
fn finish(
    args: &AskArgs,
    transcript: &mut Transcript,
    stream_failure: Option<anyhow::Error>,
    all_rows: Option<&AllRows<'_>>,
    out: &mut Out,
    notes: &Notes,
) -> Result<ExitCode> {
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
    let rendered = render_final(args, transcript, status, all_rows, out).and_then(|()| Ok(out.flush()?));
    match rendered {
        Err(err) if !is_broken_pipe(&err) => return Err(err),
        _ if args.fail_on_tool_error && transcript.tool_errors() > 0 => {
            return Err(Fault::new(
                ExitCode::ToolError,
                format!(
                    "{} tool call(s) failed (--fail-on-tool-error)",
                    transcript.tool_errors()
                ),
            )
            .into())
        }
        rendered => rendered?,
    }
    Ok(ExitCode::Success)
}

/// Writes the outputs rendered when the stream has ended well.
fn render_final(
    args: &AskArgs,
    transcript: &mut Transcript,
    status: Status,
    all_rows: Option<&AllRows<'_>>,
    out: &mut Out,
) -> Result<()> {
    let mut short = Vec::new();
    match args.output {
        OutputMode::Json => {
            if let Some(all_rows) = all_rows {
                let mut truncated = transcript
                    .queries_mut()
                    .filter(|q| q.is_truncated() && q.error.is_none())
                    .peekable();
                if truncated.peek().is_some() {
                    let client = all_rows.client()?;
                    for result in truncated {
                        short.extend(all_rows.complete(&client, result)?);
                    }
                }
            }
            render::json::write(transcript, status, None, out)?;
        }
        OutputMode::Answer => render::answer::write(transcript, out)?,
        OutputMode::Csv => {
            let result = transcript.select(args.query)?;
            match all_rows.filter(|_| result.is_truncated()) {
                Some(all_rows) => short.extend(all_rows.stream_csv(result, out)?),
                None => render::table::write_result(result, TableFormat::Csv, out)?,
            }
        }
        OutputMode::Vega => {
            let which = match args.query {
                QuerySelector::Last => "the last SQL result".to_string(),
                QuerySelector::Index(n) => format!("SQL result {n}"),
            };
            let mut result = transcript.select(args.query)?.clone();
            if let Some(all_rows) = all_rows.filter(|_| result.is_truncated()) {
                short.extend(all_rows.complete(&all_rows.client()?, &mut result)?);
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

/// What `--all-rows` needs to complete truncated results through the data
/// query API; the client is made only when a result is truncated, so a
/// complete chat needs no data credentials.
struct AllRows<'a> {
    args: &'a AskArgs,
    global: &'a GlobalArgs,
    notes: &'a Notes,
    started: Instant,
}

impl AllRows<'_> {
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
}

/// The failure the chat itself reported, in order of gravity: suspended,
/// in-stream error, aborted, no answer at all.
fn chat_failure(transcript: &Transcript) -> Option<anyhow::Error> {
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
