//! What hears a turn as it goes besides its output: its expectations,
//! its last SQL result (what Cube grades), the result `--query` picks
//! (`rows --from`), the queries the history records.

use anyhow::Result;

use crate::expect::Check;
use crate::history::QueryRecord;
use crate::output::Output;
use crate::render::Printer;
use crate::results::{Picker, SqlResult};
use crate::stream::lines::Line;
use crate::stream::message::Message;
use crate::stream::transcript::{Event, Transcript};
use crate::stream::turn::{Ended, Observer, Renderer};

/// What hears a turn as it goes: the output, and what is kept of the
/// turn — its expectations, its last SQL result, the result `--query`
/// picks, the queries the history records. Each is a named field, none a
/// renderer of its own.
pub struct TurnObserver<'o> {
    /// The output (`ask -o …`); none for a `check` turn.
    pub output: Option<&'o mut Printer>,
    /// The expectations checked when the turn is over.
    pub check: Check,
    /// The turn's last SQL result, failed or not (what Cube grades), when
    /// kept.
    pub last_query: LastQuery,
    /// The result `--query` picks, when one is wanted (`rows --from`).
    pub picked: Option<Picker>,
    /// What the history records of each SQL query.
    pub queries: QueryLog,
}

impl<'o> TurnObserver<'o> {
    /// An observer of a turn written to `output`, checked against `check`;
    /// `recorded`: its queries are kept for the history.
    pub fn new(output: Option<&'o mut Printer>, check: Check, recorded: bool) -> Self {
        TurnObserver {
            output,
            check,
            last_query: LastQuery::default(),
            picked: None,
            queries: QueryLog::new(recorded),
        }
    }
}

impl Renderer for TurnObserver<'_> {
    fn begin(&mut self) {
        if let Some(output) = &mut self.output {
            output.begin();
        }
    }

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
        if let Some(picked) = &mut self.picked {
            picked.event(event);
        }
        self.queries.event(event);
    }

    fn end(&mut self, transcript: &Transcript, ended: &Ended, out: &mut dyn Output) -> Result<()> {
        match &mut self.output {
            Some(output) => {
                if let Some(figures) = self.check.figures(transcript) {
                    output.set_figures(figures);
                }
                output.end(transcript, ended, out)
            }
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

    /// The queries kept, leaving none.
    pub fn take(&mut self) -> Vec<QueryRecord> {
        std::mem::take(&mut self.queries)
    }
}

impl Observer for QueryLog {
    fn event(&mut self, event: &Event) {
        match event {
            Event::ToolFinished(finished) if self.on => {
                if let Some((_, result)) = &finished.sql {
                    self.queries.push(QueryRecord {
                        tool: result.tool.clone(),
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
