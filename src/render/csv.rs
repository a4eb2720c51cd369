//! `-o csv`: the picked SQL result as RFC 4180 CSV with a header row; with
//! `--all-rows`, a truncated result's every row streamed from the data
//! query API.

use std::io::Write;

use anyhow::Result;

use super::table::{write_result, TableFormat, TableWriter};
use crate::error::{Fault, Kind};
use crate::results::{shortfall, Pick, Picker};
use crate::stream::transcript::{Event, Transcript};
use crate::stream::turn::{Ending, Renderer};

/// The `csv` output.
pub struct Csv {
    pick: Pick,
    picker: Picker,
}

impl Csv {
    /// CSV of the result `pick` selects.
    pub fn new(pick: Pick) -> Self {
        Csv {
            pick,
            picker: Picker::new(pick),
        }
    }
}

impl Renderer for Csv {
    fn event(&mut self, event: &Event) {
        self.picker.event(event);
    }

    fn end(&mut self, _transcript: &Transcript, ending: &Ending<'_>, out: &mut dyn Write) -> Result<()> {
        if ending.failure.is_some() {
            return Ok(());
        }
        let result = self.picker.picked()?;
        let Some(source) = ending.all_rows.filter(|_| result.is_truncated()) else {
            write_result(result, TableFormat::Csv, out)?;
            return match result.total_rows.filter(|_| result.is_truncated()) {
                Some(total) => ending.accept_truncated(&self.pick.describe(), result.rows.len(), total),
                None => Ok(()),
            };
        };
        let mut writer = TableWriter::new(TableFormat::Csv, &mut *out);
        let got = source.fetch(result.sql_to_fetch()?, &mut writer)?;
        writer.finish()?;
        match shortfall(result.total_rows, got) {
            Some(why) => Err(Fault::new(Kind::Partial, why).into()),
            None => Ok(()),
        }
    }
}
