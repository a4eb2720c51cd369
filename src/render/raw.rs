//! `-o raw`: the stream's bytes as received, each line flushed as soon as
//! no further line is already waiting.

use std::io;

use crate::output::Output;
use crate::stream::lines::Line;
use crate::stream::message::Message;
use crate::stream::transcript::Transcript;
use crate::stream::turn::Renderer;

/// The `raw` output.
pub struct Raw;

impl Renderer for Raw {
    fn line(
        &mut self,
        line: &Line<'_>,
        _message: Option<&Message<'_>>,
        _transcript: &Transcript,
        out: &mut dyn Output,
    ) -> io::Result<()> {
        out.write_all(line.bytes)?;
        // Flushed before the reader would wait for more: each line leaves
        // as soon as it came, without a syscall per line.
        if !line.more_buffered {
            out.flush()?;
        }
        Ok(())
    }
}
