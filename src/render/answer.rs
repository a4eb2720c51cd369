//! `-o answer`: the final answer's text and a newline; in the no-question
//! mode, the thread's messages as `role: content` paragraphs.

use anyhow::Result;

use crate::output::Output;
use crate::stream::transcript::Transcript;

/// The `answer` output.
pub struct Answer;

impl Answer {
    /// Writes the answer (or the thread's messages) of a turn that ended
    /// well.
    pub fn end(&mut self, transcript: &Transcript, out: &mut dyn Output) -> Result<()> {
        if transcript.is_thread_state() {
            for (i, message) in transcript.thread().iter().enumerate() {
                if i > 0 {
                    out.write_all(b"\n")?;
                }
                writeln!(out, "{}: {}", message.role, message.content.trim_end_matches('\n'))?;
            }
            return Ok(());
        }
        if let Some((text, _)) = transcript.answer() {
            writeln!(out, "{}", text.trim_end_matches('\n'))?;
        }
        Ok(())
    }
}
