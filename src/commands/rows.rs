//! `analyst rows`: the complete data of a SQL result. The SQL comes from
//! `--sql`, `--sql-file`, or a stream saved by `ask -o raw`/`-o events`; a
//! result already complete in the stream is printed as it is, anything else
//! runs through the data query API with rows streamed to stdout (through a
//! temporary file when the result may turn out short: a failure writes
//! nothing).

use std::io::{self, Seek, Write};
use std::time::Instant;

use anyhow::Result;
use indicatif::{HumanCount, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use serde_json::value::RawValue;

use crate::api::data::{limit_of, DataClient, Plan, SERVER_ROW_CAP};
use crate::cli::RowsOutput;
use crate::domain::{Network, Question};
use crate::error::{fail, usage, Fault, Kind};
use crate::exchange::{query, Exchange, Origin, Plan as TurnPlan, RecordAs, Trace, TurnObserver};
use crate::expect::{Check, Expectations};
use crate::input::Input;
use crate::net::http::Http;
use crate::net::source::SavedStream;
use crate::output::{Notes, Out};
use crate::render::parquet::ParquetWriter;
use crate::render::table::{write_result, TableFormat, TableWriter};
use crate::results::{shortfall, Column, Pick, Picker, RowSink, SqlResult};
use crate::settings::{read_stdin, read_text, RowsSettings, SqlSource};
use crate::signals;
use crate::stream::transcript::Keep;

/// Runs `analyst rows`.
pub fn run(settings: RowsSettings, notes: &Notes, out: &mut Out) -> Result<()> {
    let started = Instant::now();
    signals::watch();
    let (sql, saved) = sql_to_run(&settings.sql, settings.pick, settings.network, started, notes)?;
    let format = match settings.output {
        RowsOutput::Csv => Some(TableFormat::Csv),
        RowsOutput::Tsv => Some(TableFormat::Tsv),
        RowsOutput::Json => Some(TableFormat::Json),
        RowsOutput::Ndjson => Some(TableFormat::Ndjson),
        RowsOutput::Table => Some(TableFormat::Aligned(settings.width)),
        RowsOutput::Parquet => None,
    };
    if let Some(result) = saved
        .as_ref()
        .filter(|result| !result.may_lack_rows() && !settings.always)
    {
        notes.info(&format!(
            "the result is complete in the stream ({} rows): printed without a query (--always runs it)",
            result.rows().len()
        ));
        return match format {
            Some(format) => write_result(result, format, out),
            None => {
                let mut writer = ParquetWriter::new(out)?;
                writer.columns(result.columns())?;
                for row in result.raw_rows() {
                    writer.rows(std::slice::from_ref(&row))?;
                }
                writer.finish().map(drop)
            }
        };
    }
    let http = Http::new(settings.network.connect_timeout)?;
    let client = DataClient::new(http, &settings.data, settings.network, started)?;
    let expected = saved.as_ref().and_then(|result| result.total_rows);
    let plan = Plan::of(&sql, settings.page_size, settings.order_by.as_deref())?;
    // Rows that may turn out to be part of a result (fewer than the saved
    // result's totalRows, or one answer cut at the server's cap) go to a
    // temporary file first: a result found short writes nothing.
    let may_fall_short = !settings.allow_partial && (expected.is_some() || matches!(plan, Plan::AsIs(_)));
    let spool = may_fall_short.then(tempfile::tempfile).transpose()?;
    let target: Box<dyn Write + '_> = match &spool {
        Some(file) => Box::new(io::BufWriter::new(file)),
        None => Box::new(&mut *out),
    };
    let writer = match format {
        Some(format) => Writer::Table(TableWriter::new(format, target)),
        None => Writer::Parquet(ParquetWriter::new(target)?),
    };
    let mut progress = RowsProgress::new(writer, expected, notes);
    let fetched = query::fetch(
        &client,
        &sql,
        &plan,
        expected,
        &mut progress,
        settings.otlp.as_ref(),
        notes,
    )?;
    let (count, requests) = match fetched {
        Ok(fetched) => fetched,
        // No row came before the failure (or they went to the spool):
        // nothing on stdout, not even a header or an empty document.
        Err(err) if !progress.begun() || spool.is_some() => {
            progress.finish();
            return Err(err);
        }
        // Rows already written: the document is closed (a `-o json` array
        // stays valid JSON); the failure is the exit code.
        Err(err) => {
            progress.given_whole()?.finish()?;
            return Err(err);
        }
    };
    notes.debug(&format!("{count} rows in {requests} request(s)"));
    let cut = match &plan {
        // One answer of exactly the server's cap, when the SQL asked for
        // more, was cut there: nothing in it says so.
        Plan::AsIs(sql) if count == SERVER_ROW_CAP && limit_of(sql).is_none_or(|limit| limit > SERVER_ROW_CAP) => {
            Some(format!(
                "got exactly {SERVER_ROW_CAP} rows, the most the data query API returns in one answer: there may be more (drop --no-paging to page through them)"
            ))
        }
        _ => None,
    };
    match cut.or_else(|| shortfall(expected, count)) {
        Some(why) if settings.allow_partial => notes.warn(&why),
        Some(why) => {
            progress.finish();
            return Err(fail(Kind::Partial, format!("{why}, or pass --allow-partial")));
        }
        None => {}
    }
    progress.given_whole()?.finish()?;
    if let Some(mut spooled) = spool {
        spooled.seek(io::SeekFrom::Start(0))?;
        io::copy(&mut spooled, out)?;
    }
    Ok(())
}

/// The SQL to run, and the saved result it came from (when it did); a
/// file, a saved stream or standard input is read within the limits of
/// `network`, counted from `started`.
fn sql_to_run(
    source: &SqlSource,
    pick: Pick,
    network: Network,
    started: Instant,
    notes: &Notes,
) -> Result<(String, Option<SqlResult>)> {
    let limit = network.limits.timeout;
    let sql = match source {
        SqlSource::Text(sql) => sql.clone(),
        SqlSource::File(path) if path == "-" => read_stdin("the SQL", limit)?,
        SqlSource::File(path) => read_text(Input::File(path.into()), limit, &format!("--sql-file {path}"))?,
        SqlSource::Saved(path) => {
            let result = saved_result(path, pick, network, started, notes)?;
            let sql = result.sql_to_fetch()?.to_string();
            return Ok((sql, Some(result)));
        }
    };
    let sql = sql.trim().to_string();
    if sql.is_empty() {
        return Err(usage("the SQL is empty"));
    }
    Ok((sql, None))
}

/// The SQL result `pick` of a stream saved by `ask -o raw` or `-o events`
/// (`-` = stdin), read within `limits` of the command begun at `started`
/// by the owner of a turn, as `ask --replay` reads one, keeping only the
/// result picked.
fn saved_result(path: &str, pick: Pick, network: Network, started: Instant, notes: &Notes) -> Result<SqlResult> {
    let exchange = Exchange {
        origin: Origin::saved(SavedStream::open(path, "--from")?),
        recording: None,
        trace: Trace::Off,
        notes,
    };
    let mut observer = TurnObserver::new(None, Check::new(Expectations::default()), false);
    observer.picked = Some(Picker::new(pick));
    let plan = TurnPlan {
        question: Question::default(),
        thread: None,
        started,
        network,
        keep: Keep::default(),
        tee: None,
        observer: &mut observer,
        out: &mut io::sink(),
        explain_timeout: None,
        record_as: RecordAs::default(),
        parent: None,
    };
    let picked = exchange.turn(plan, |judging| {
        // Nothing at all (`</dev/null` in cron) is not a stream: ask for
        // the SQL.
        if judging.ended.read_whole && judging.turn.timings.first_byte.is_none() {
            let what = match path {
                "-" => "standard input is empty".to_string(),
                path => format!("--from {path} is empty"),
            };
            return Err(Fault::new(
                Kind::Usage,
                format!("{what}: where is the SQL? give --sql or --sql-file, or a stream saved by 'analyst ask -o raw' (--from FILE or a pipe)"),
            ));
        }
        // A stream that cannot be read to its end is not what ask saves; one
        // whose chat failed (no answer, an in-stream error) still holds its
        // SQL results. A stop (a signal, --timeout) says so as it is.
        if let (false, Some(fault)) = (judging.ended.read_whole, judging.ended.failure) {
            return Err(match fault.kind {
                Kind::BadStream => {
                    Fault::new(Kind::BadStream, format!("the saved stream is not NDJSON from 'ask -o raw' or '-o events': {fault}"))
                }
                _ => fault,
            });
        }
        Ok(judging.observer.picked.take())
    })?;
    // A --query past the stream's results is a mistake on the command
    // line (cli.md: exit 2), not a stream with nothing to render.
    let picker = picked.unwrap_or_else(|| Picker::new(pick));
    let picked = picker.picked().map_err(|fault| match (pick, fault.kind) {
        (Pick::Index(_), Kind::NothingToRender) => Fault::new(Kind::Usage, fault.to_string()),
        _ => fault,
    })?;
    Ok(picked.clone())
}

/// Where the rows go: a text format, or Parquet.
enum Writer<'a> {
    Table(TableWriter<Box<dyn Write + 'a>>),
    Parquet(ParquetWriter<Box<dyn Write + 'a>>),
}

impl Writer<'_> {
    /// Ends the output (the JSON array closed, the Parquet file written)
    /// and flushes it.
    fn finish(self) -> Result<()> {
        let mut out = match self {
            Writer::Table(writer) => writer.finish()?,
            Writer::Parquet(writer) => writer.finish()?,
        };
        Ok(out.flush()?)
    }
}

impl RowSink for Writer<'_> {
    fn columns(&mut self, columns: &[Column]) -> Result<()> {
        match self {
            Writer::Table(writer) => writer.columns(columns),
            Writer::Parquet(writer) => writer.columns(columns),
        }
    }

    fn rows(&mut self, rows: &[Vec<&RawValue>]) -> Result<()> {
        match self {
            Writer::Table(writer) => writer.rows(rows),
            Writer::Parquet(writer) => writer.rows(rows),
        }
    }
}

/// Counts rows on their way to `inner` and shows them on a terminal: rows
/// so far, of `totalRows` when known, the rate, and the page.
struct RowsProgress<S> {
    inner: S,
    /// The answer's columns, held until its first row comes (or the query
    /// ends well): a query that fails first writes nothing.
    columns: Option<Vec<Column>>,
    /// A row was handed on: the output has begun.
    begun: bool,
    bar: Option<ProgressBar>,
    /// Where notes go: above the bar while it is drawn.
    notes: Notes,
}

impl<S: RowSink> RowsProgress<S> {
    fn new(inner: S, total: Option<u64>, notes: &Notes) -> Self {
        let bar = notes.show_progress().then(|| {
            let (bar, template) = match total {
                Some(total) => (
                    ProgressBar::new(total),
                    "{bar:30} {human_pos}/{human_len} rows  {rate}  {elapsed}  {msg}",
                ),
                None => (
                    ProgressBar::new_spinner(),
                    "{spinner} {human_pos} rows  {rate}  {elapsed}  {msg}",
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
            notes.above(Some(&bar));
            bar
        });
        RowsProgress {
            inner,
            columns: None,
            begun: false,
            bar,
            notes: notes.clone(),
        }
    }

    /// True once a row was handed on.
    fn begun(&self) -> bool {
        self.begun
    }

    /// The progress display gone, the inner sink back.
    fn finish(self) -> S {
        self.notes.above(None);
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        self.inner
    }

    /// The inner sink, after the columns of a result that came without a
    /// row (an empty result still has its header) are given.
    fn given_whole(mut self) -> Result<S> {
        if let Some(columns) = self.columns.take() {
            self.inner.columns(&columns)?;
        }
        Ok(self.finish())
    }
}

impl<S: RowSink> RowSink for RowsProgress<S> {
    fn columns(&mut self, columns: &[Column]) -> Result<()> {
        self.columns = Some(columns.to_vec());
        Ok(())
    }

    fn rows(&mut self, rows: &[Vec<&RawValue>]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        if let Some(columns) = self.columns.take() {
            self.inner.columns(&columns)?;
        }
        self.begun = true;
        self.inner.rows(rows)?;
        if let Some(bar) = &self.bar {
            bar.inc(rows.len() as u64);
        }
        Ok(())
    }

    fn page(&mut self, number: u64) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("page {number}"));
        }
    }
}
