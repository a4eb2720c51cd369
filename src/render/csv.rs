//! `-o csv` and `-o table`: the picked SQL result as RFC 4180 CSV with a
//! header row, or as an aligned table; with `--all-rows`, a truncated
//! result's every row from the data query API.

use std::io::{self, Seek};

use anyhow::Result;

use super::table::{write_result, TableFormat, TableWriter};
use super::Truncation;
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
    /// one is completed or accepted as `truncation` says, or nothing is
    /// written: a failure leaves stdout empty.
    pub fn end(&mut self, transcript: &Transcript, truncation: &Truncation, out: &mut dyn Output) -> Result<()> {
        let result = super::picked(&mut self.picker, transcript)?;
        let Some(source) = truncation.every_row.as_ref().filter(|_| result.may_lack_rows()) else {
            if let Some(total) = result.total_rows.filter(|_| result.is_truncated()) {
                truncation.accept(&self.pick.describe(), result.rows().len(), total)?;
            }
            return write_result(result, self.format, out);
        };
        // Every row, spooled to a temporary file on the way (memory holds
        // one row at a time): fewer than totalRows writes nothing.
        let mut spool = io::BufWriter::new(tempfile::tempfile()?);
        let mut writer = TableWriter::new(self.format, &mut spool);
        result.fetch_all(source, &mut writer)?;
        writer.finish()?;
        let mut spooled = spool.into_inner().map_err(io::IntoInnerError::into_error)?;
        spooled.seek(io::SeekFrom::Start(0))?;
        io::copy(&mut spooled, out)?;
        Ok(())
    }
}
