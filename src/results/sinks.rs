//! Where a query's rows go as they stream from the data query API: the
//! [`RowSink`] and [`RowSource`] traits, and the sinks that keep rows:
//! [`Collected`] (as values) and `Gathered` (as the text they came in, for
//! a result made whole).

use anyhow::Result;
use serde_json::value::RawValue;
use serde_json::Value;

use super::Column;
use crate::error::{Fault, Kind};

/// Receives a query's answer as it streams from the data query API.
pub trait RowSink {
    /// The columns, once, before any row.
    fn columns(&mut self, columns: &[Column]) -> Result<()>;
    /// A batch of rows, values in column order as the service sent them,
    /// borrowed from the answer line.
    fn rows(&mut self, rows: &[Vec<&RawValue>]) -> Result<()>;
    /// Page `number` (from 1) of a paged query starts; progress displays
    /// show it, writers ignore it.
    fn page(&mut self, _number: u64) {}
}

/// Runs a SQL query and streams every row of its answer into a sink;
/// returns how many rows came (`ask --all-rows`).
pub trait RowSource {
    /// Runs `sql` into `sink`; `expected` is how many rows the result has
    /// (its `totalRows`), when known: paging stops with an error past it.
    fn fetch(&self, sql: &str, expected: Option<u64>, sink: &mut dyn RowSink) -> Result<u64>;
}

/// A sink that keeps every row, for outputs that need them all at once.
#[derive(Debug, Default)]
pub struct Collected {
    /// The answer's columns.
    pub columns: Vec<Column>,
    /// Every row, values as sent.
    pub rows: Vec<Vec<Value>>,
}

impl RowSink for Collected {
    fn columns(&mut self, columns: &[Column]) -> Result<()> {
        self.columns = columns.to_vec();
        Ok(())
    }

    fn rows(&mut self, rows: &[Vec<&RawValue>]) -> Result<()> {
        for row in rows {
            let values = row
                .iter()
                .map(|cell| serde_json::from_str(cell.get()))
                .collect::<Result<Vec<Value>, _>>()?;
            self.rows.push(values);
        }
        Ok(())
    }
}

/// A sink that keeps every row as the text it came in, one JSON array
/// after another, for a result made whole ([`SqlResult::complete`]): the
/// values stay as sent, and cost their text, not a tree of values.
#[derive(Debug, Default)]
pub(super) struct Gathered {
    pub(super) columns: Vec<Column>,
    pub(super) text: String,
    pub(super) starts: Vec<u32>,
}

impl RowSink for Gathered {
    fn columns(&mut self, columns: &[Column]) -> Result<()> {
        self.columns = columns.to_vec();
        Ok(())
    }

    fn rows(&mut self, rows: &[Vec<&RawValue>]) -> Result<()> {
        for row in rows {
            let start = u32::try_from(self.text.len()).map_err(|_| {
                Fault::new(
                    Kind::Partial,
                    "the rows fetched are more than 4 GiB of text, more than can be held: -o csv streams them instead",
                )
            })?;
            self.starts.push(start);
            self.text.push('[');
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    self.text.push(',');
                }
                self.text.push_str(cell.get());
            }
            self.text.push(']');
        }
        Ok(())
    }
}
