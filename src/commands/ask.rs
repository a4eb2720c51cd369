//! `analyst ask`: send a question (or read a saved stream), fold the NDJSON
//! answer as it arrives, render the chosen output, and pick the exit code.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};

use anyhow::Result;
use clap::ArgMatches;
use serde::Serialize;

use crate::cli::{AskArgs, GlobalArgs, OutputMode, QuerySelector};
use crate::config::{load_api_key, read_stdin, service_url, SessionSettings};
use crate::exit::{bad_stream, usage, ExitCode, Fault};
use crate::http::{root_causes, shorten, Http};
use crate::output::{Notes, Out};
use crate::render::{self, Status};
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

/// Runs `ask`. `matches` are the subcommand's clap matches, used to let a
/// flag win over the environment between `--external-id` and `--internal-id`.
pub fn run(args: AskArgs, matches: Option<&ArgMatches>, global: &GlobalArgs, notes: &Notes) -> Result<ExitCode> {
    let mut tee = match &args.tee {
        Some(path) => Some(BufWriter::new(File::create(path).map_err(|err| {
            usage(format!("cannot create the --tee file {}: {err}", path.display()))
        })?)),
        None => None,
    };
    let mut out = Out::stdout();
    let mut transcript = Transcript::new(retention(&args));
    let source: Box<dyn Read> = match &args.replay {
        Some(path) => open_replay(path)?,
        None => {
            let request = prepare_request(&args, matches, global, notes)?;
            match request.send() {
                Ok(response) => Box::new(response),
                Err(err) => return fail_before_stream(err, &args, &transcript, &mut out),
            }
        }
    };
    let stream_failure = read_stream(source, &args, &mut transcript, tee.as_mut(), &mut out, notes)?;
    if let Some(tee) = tee.as_mut() {
        tee.flush()
            .map_err(|err| Fault::new(ExitCode::Unexpected, format!("writing the --tee file: {err}")))?;
    }
    finish(&args, &transcript, stream_failure, &mut out, notes)
}

/// What each output keeps of the stream (only `json` keeps every result).
fn retention(args: &AskArgs) -> Retention {
    match args.output {
        OutputMode::Json => Retention::All,
        OutputMode::Csv | OutputMode::Vega => Retention::Selected(args.query),
        OutputMode::Answer | OutputMode::Raw | OutputMode::Events => Retention::Nothing,
    }
}

fn open_replay(path: &str) -> Result<Box<dyn Read>> {
    if path == "-" {
        return Ok(Box::new(io::stdin()));
    }
    let file = File::open(path).map_err(|err| usage(format!("cannot read --replay file {path}: {err}")))?;
    Ok(Box::new(file))
}

/// A validated chat request, ready to send.
struct PreparedRequest {
    http: Http,
    url: reqwest::Url,
    key: crate::config::Secret,
    body: serde_json::Value,
}

impl PreparedRequest {
    fn send(&self) -> Result<reqwest::blocking::Response> {
        self.http.post_json(
            &self.url,
            &self.key,
            &self.body,
            "application/x-ndjson, application/json",
        )
    }
}

/// Checks everything the request needs before anything is sent: the URL,
/// the identity rules, the question and the key.
fn prepare_request(
    args: &AskArgs,
    matches: Option<&ArgMatches>,
    global: &GlobalArgs,
    notes: &Notes,
) -> Result<PreparedRequest> {
    let url_text = args.endpoint.chat_url.as_deref().ok_or_else(|| {
        usage("no chat URL: set ANALYST_CHAT_URL or pass --chat-url (the Chat API URL from the agent settings)")
    })?;
    let url = service_url(url_text, "--chat-url")?;
    let settings = args.identity.to_input(matches).validate()?;
    if args.question.as_deref() == Some("-") && args.endpoint.api_key_file.as_deref() == Some("-") {
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
        args.endpoint.api_key_file.as_deref(),
        std::env::var("ANALYST_API_KEY").ok(),
    )?;
    let body = serde_json::to_value(ChatRequest {
        input: question.as_deref(),
        chat_id,
        session_settings: &settings,
        active_branch_name: branch,
        is_default_branch: branch.map(|_| args.default_branch),
    })?;
    Ok(PreparedRequest {
        http: Http::new(global.connect_timeout, notes)?,
        url,
        key,
        body,
    })
}

/// The request was sent but no stream came back (a status, a refused
/// connection): `-o json` still gets its document (`status: "error"`), then
/// the error goes up with its code.
fn fail_before_stream(err: anyhow::Error, args: &AskArgs, transcript: &Transcript, out: &mut Out) -> Result<ExitCode> {
    if args.output == OutputMode::Json {
        render::json::write(transcript, Status::Error, Some(&format!("{err:#}")), out)?;
        out.flush()?;
    }
    Err(err)
}

/// Reads the stream line by line: tees and forwards bytes (`raw`), folds
/// each message, writes `events`, and prints notes as things happen. Returns
/// the stream's failure (cut, malformed line) if there was one; output
/// errors (a closed stdout) are returned as errors.
fn read_stream(
    source: Box<dyn Read>,
    args: &AskArgs,
    transcript: &mut Transcript,
    mut tee: Option<&mut BufWriter<File>>,
    out: &mut Out,
    notes: &Notes,
) -> Result<Option<anyhow::Error>> {
    let mut reader = LineReader::new(source);
    loop {
        let line = match reader.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => return Ok(None),
            Err(err) if err.kind() == io::ErrorKind::InvalidData => {
                return Ok(Some(bad_stream(format!("malformed stream: {err}"))))
            }
            Err(err) => {
                let cause = err
                    .get_ref()
                    .map_or_else(|| err.to_string(), |inner| root_causes(inner));
                return Ok(Some(bad_stream(format!(
                    "the stream was cut before it ended ({cause}){}",
                    resume_hint(transcript)
                ))));
            }
        };
        if let Some(tee) = tee.as_mut() {
            tee.write_all(line.bytes)
                .map_err(|err| Fault::new(ExitCode::Unexpected, format!("writing the --tee file: {err}")))?;
        }
        if args.output == OutputMode::Raw {
            out.write_all(line.bytes)?;
            out.flush()?;
        }
        let message = match Message::parse(line.content()) {
            Ok(Some(message)) => message,
            Ok(None) => continue,
            Err(err) if !line.is_terminated() => {
                let detail = match err {
                    ParseError::Invalid(text) => text,
                    ParseError::NotAnObject => "not a JSON object".into(),
                };
                return Ok(Some(bad_stream(format!(
                    "the stream was cut in the middle of line {} ({detail}){}",
                    line.number,
                    resume_hint(transcript)
                ))));
            }
            Err(ParseError::Invalid(text)) => {
                return Ok(Some(bad_stream(format!(
                    "malformed stream: line {} is not valid JSON: {text}",
                    line.number
                ))))
            }
            Err(ParseError::NotAnObject) => {
                return Ok(Some(bad_stream(format!(
                    "malformed stream: line {} is JSON but not an object",
                    line.number
                ))))
            }
        };
        if let Some(event) = transcript.apply(&message) {
            note_event(&event, notes);
        }
        if args.output == OutputMode::Events {
            render::events::write_line(line.content(), &message, out)?;
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
                        "SQL result {}{title} is truncated: {} of {total} rows in the stream; its SQL is in -o json (.queries[{}].sql) to fetch every row through the data query API",
                        sql.number,
                        sql.rows,
                        sql.number - 1
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
    transcript: &Transcript,
    stream_failure: Option<anyhow::Error>,
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
    match args.output {
        OutputMode::Json => {
            let text = failure.as_ref().map(|err| format!("{err:#}"));
            render::json::write(transcript, status, text.as_deref(), out)?;
        }
        _ if failure.is_some() => {}
        OutputMode::Answer => render::answer::write(transcript, out)?,
        OutputMode::Csv => render::csv::write(transcript.select(args.query)?, out)?,
        OutputMode::Vega => {
            let which = match args.query {
                QuerySelector::Last => "the last SQL result".to_string(),
                QuerySelector::Index(n) => format!("SQL result {n}"),
            };
            render::vega::write(transcript.select(args.query)?, &which, out)?;
        }
        OutputMode::Raw | OutputMode::Events => {}
    }
    out.flush()?;
    if let Some(err) = failure {
        return Err(err);
    }
    if args.fail_on_tool_error && transcript.tool_errors() > 0 {
        return Err(Fault::new(
            ExitCode::ToolError,
            format!(
                "{} tool call(s) failed (--fail-on-tool-error)",
                transcript.tool_errors()
            ),
        )
        .into());
    }
    Ok(ExitCode::Success)
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
