//! `-o csv` and `-o table`: the picked SQL result as RFC 4180 CSV with a
//! header row, or as an aligned table; with `--all-rows`, a truncated
//! result's every row from the data query API.

use anyhow::Result;

use super::table::{write_result, TableFormat, TableWriter};
use super::Truncation;
use crate::error::{kind_of, Kind};
use crate::output::Output;
use crate::results::{Pick, Picker};
use crate::stream::transcript::{Event, Transcript};
use crate::stream::turn::Observer;

/// The `csv` and `table` outputs.
pub struct Csv {
    pick: Pick,
    picker: Picker,
    format: TableFormat,
}

impl Csv {
    /// The result `pick` selects, in `format`.
    pub fn new(pick: Pick, format: TableFormat) -> Self {
        Csv {
            pick,
            picker: Picker::new(pick),
            format,
        }
    }
}

impl Csv {
    /// Keeps the result its pick selects.
    pub fn event(&mut self, event: &Event) {
        self.picker.event(event);
    }

    /// Writes the picked result of a turn that ended well; a truncated
    /// one is completed or accepted as `truncation` says.
    pub fn end(&mut self, transcript: &Transcript, truncation: &Truncation, out: &mut dyn Output) -> Result<()> {
        let result = super::picked(&mut self.picker, transcript)?;
        let Some(source) = truncation.every_row.as_ref().filter(|_| result.may_lack_rows()) else {
            write_result(result, self.format, out)?;
            return match result.total_rows.filter(|_| result.is_truncated()) {
                Some(total) => truncation.accept(&self.pick.describe(), result.rows().len(), total),
                None => Ok(()),
            };
        };
        // Rows go straight to the output; fewer than totalRows still end
        // the table before the failure is told.
        let mut writer = TableWriter::new(self.format, &mut *out);
        let fetched = result.fetch_all(source, &mut writer);
        if fetched.as_ref().is_err_and(|err| kind_of(err) != Kind::Partial) {
            return fetched;
        }
        writer.finish()?;
        fetched
    }
}
