//! `-o raw`: the stream's bytes as received, each line flushed as soon as
//! no further line is already waiting.

use std::io;

use crate::output::Output;
use crate::stream::lines::Line;

/// The `raw` output.
pub struct Raw;

impl Raw {
    /// Writes a line's bytes as they came.
    pub fn line(&mut self, line: &Line<'_>, out: &mut dyn Output) -> io::Result<()> {
        out.write_all(line.bytes)?;
        // Flushed before the reader would wait for more: each line leaves
        // as soon as it came, without a syscall per line.
        if !line.more_buffered {
            out.flush()?;
        }
        Ok(())
    }
}
