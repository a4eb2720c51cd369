//! `analyst rows`: the complete data of a SQL result. The SQL comes from
//! `--sql`, `--sql-file`, or a stream saved by `ask -o raw`/`-o events`; a
//! result already complete in the stream is printed as it is, anything else
//! runs through the data query API with rows streamed to stdout.

use std::fs::File;
use std::io::{self, IsTerminal, Read};
use std::time::Instant;

use anyhow::Result;
use indicatif::{HumanCount, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::cli::{DataEndpointArgs, GlobalArgs, QuerySelector, RowsArgs, RowsOutput};
use crate::config::{parse_security_context, read_stdin};
use crate::data::{DataAuth, DataClient, QueryOptions, RowSink};
use crate::exit::{bad_stream, usage, ExitCode, Fault};
use crate::feed::Limits;
use crate::http::Http;
use crate::output::{Notes, Out};
use crate::render::table::{TableFormat, TableWriter};
use crate::results::{Column, SqlResult};
use crate::signals;
use crate::stream::lines::LineReader;
use crate::stream::message::{Message, ParseError};
use crate::stream::transcript::{Retention, Transcript};

/// Runs `analyst rows`.
pub fn run(args: RowsArgs, global: &GlobalArgs, notes: &Notes) -> Result<ExitCode> {
    let started = Instant::now();
    signals::watch();
    let (sql, saved) = sql_to_run(&args)?;
    let format = match args.output {
        RowsOutput::Csv => TableFormat::Csv,
        RowsOutput::Tsv => TableFormat::Tsv,
        RowsOutput::Json => TableFormat::Json,
        RowsOutput::Ndjson => TableFormat::Ndjson,
    };
    let mut writer = TableWriter::new(format, Out::stdout());
    if let Some(result) = saved.as_ref().filter(|result| !result.is_truncated() && !args.always) {
        notes.info(&format!(
            "the result is complete in the stream ({} rows): printed without a query (--always runs it)",
            result.rows.len()
        ));
        writer.columns(&result.columns)?;
        writer.values(&result.rows)?;
        writer.finish()?;
        return Ok(ExitCode::Success);
    }
    let context = args
        .security_context
        .as_deref()
        .map(parse_security_context)
        .transpose()?;
    let options = QueryOptions {
        timezone: args.timezone.clone(),
        cache: args.cache.map(|mode| mode.as_str().to_string()),
    };
    let client = data_client(&args.data, context, options, global, notes)?;
    let expected = saved.as_ref().and_then(|result| result.total_rows);
    let mut progress = Progress::new(writer, expected, notes);
    let limits = Limits {
        timeout: global.timeout,
        idle: Some(global.idle_timeout),
    };
    let fetched = client.run(&sql, &mut progress, limits, started);
    let writer = progress.finish();
    let count = fetched?;
    writer.finish()?;
    match shortfall(expected, count) {
        Some(why) if args.allow_partial => notes.warn(&why),
        Some(why) => return Err(Fault::new(ExitCode::Partial, format!("{why}, or pass --allow-partial")).into()),
        None => {}
    }
    Ok(ExitCode::Success)
}

/// The data query client for `--data-url` and the credential in the
/// environment; `security_context` is the payload of a signed token.
pub fn data_client(
    data: &DataEndpointArgs,
    security_context: Option<Map<String, Value>>,
    options: QueryOptions,
    global: &GlobalArgs,
    notes: &Notes,
) -> Result<DataClient> {
    let url = data.data_url.as_deref().ok_or_else(|| {
        usage("no data query URL: set ANALYST_DATA_URL or pass --data-url (e.g. https://<deployment>.cubecloudapp.dev/cubejs-api)")
    })?;
    let auth = DataAuth::from_env(security_context, global.loaded_profile.as_ref())?;
    DataClient::new(Http::new(global.connect_timeout, notes)?, url, auth, options, notes)
}

/// Why fewer rows came than `totalRows` says, when they did.
pub fn shortfall(expected: Option<u64>, got: u64) -> Option<String> {
    let total = expected.filter(|&total| got < total)?;
    Some(format!(
        "got {got} of {total} rows: the data query API returns at most 10,000 rows for a query without LIMIT by default (50,000 at most, a server setting); page through the rest with LIMIT and OFFSET"
    ))
}

/// The SQL to run, and the saved result it came from (when it did).
fn sql_to_run(args: &RowsArgs) -> Result<(String, Option<SqlResult>)> {
    let sql = match (&args.sql, &args.sql_file) {
        (Some(sql), _) => Some(sql.clone()),
        (None, Some(path)) if path == "-" => Some(read_stdin("the SQL")?),
        (None, Some(path)) => {
            Some(std::fs::read_to_string(path).map_err(|err| usage(format!("cannot read --sql-file {path}: {err}")))?)
        }
        (None, None) => None,
    };
    if let Some(sql) = sql {
        let sql = sql.trim().to_string();
        if sql.is_empty() {
            return Err(usage("the SQL is empty"));
        }
        return Ok((sql, None));
    }
    let source: Box<dyn Read> = match args.from.as_deref() {
        Some("-") => Box::new(io::stdin()),
        Some(path) => {
            Box::new(File::open(path).map_err(|err| usage(format!("cannot read --from file {path}: {err}")))?)
        }
        None if !io::stdin().is_terminal() => Box::new(io::stdin()),
        None => return Err(usage(
            "where is the SQL? give --sql, --sql-file or --from FILE, or pipe a stream saved by 'analyst ask -o raw'",
        )),
    };
    let result = saved_result(source, args.query)?;
    let sql = result
        .sql
        .clone()
        .ok_or_else(|| bad_stream("the selected SQL result carries no SQL to run"))?;
    Ok((sql, Some(result)))
}

/// The SQL result `which` of a saved stream (`ask -o raw` or `-o events`).
fn saved_result(source: impl Read, which: QuerySelector) -> Result<SqlResult> {
    let mut reader = LineReader::new(source);
    let mut transcript = Transcript::new(Retention::Selected(which));
    while let Some(line) = reader
        .next_line()
        .map_err(|err| bad_stream(format!("reading the saved stream: {err}")))?
    {
        match Message::parse(line.content()) {
            Ok(Some(mut message)) => {
                transcript.apply(&mut message);
            }
            Ok(None) => {}
            Err(ParseError::Invalid(text)) => {
                return Err(bad_stream(format!(
                "the saved stream is not NDJSON from 'ask -o raw' or '-o events': line {} is not valid JSON: {text}",
                line.number
            )))
            }
            Err(ParseError::NotAnObject) => {
                return Err(bad_stream(format!(
                    "the saved stream is not NDJSON from 'ask -o raw' or '-o events': line {} is not an object",
                    line.number
                )))
            }
        }
    }
    Ok(transcript.select(which)?.clone())
}

/// Counts rows on their way to `inner` and shows them on a terminal: rows
/// so far, of `totalRows` when known, and the rate.
struct Progress<S> {
    inner: S,
    bar: Option<ProgressBar>,
}

impl<S: RowSink> Progress<S> {
    fn new(inner: S, total: Option<u64>, notes: &Notes) -> Self {
        let bar = notes.show_progress().then(|| {
            let (bar, template) = match total {
                Some(total) => (
                    ProgressBar::new(total),
                    "{bar:30} {human_pos}/{human_len} rows  {rate}  {elapsed}",
                ),
                None => (
                    ProgressBar::new_spinner(),
                    "{spinner} {human_pos} rows  {rate}  {elapsed}",
                ),
            };
            bar.set_draw_target(ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(
                    style.with_key("rate", |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{} rows/s", HumanCount(state.per_sec() as u64));
                    }),
                );
            }
            bar
        });
        Progress { inner, bar }
    }

    fn finish(self) -> S {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        self.inner
    }
}

impl<S: RowSink> RowSink for Progress<S> {
    fn columns(&mut self, columns: &[Column]) -> Result<()> {
        self.inner.columns(columns)
    }

    fn rows(&mut self, rows: &[Vec<&RawValue>]) -> Result<()> {
        self.inner.rows(rows)?;
        if let Some(bar) = &self.bar {
            bar.inc(rows.len() as u64);
        }
        Ok(())
    }
}
