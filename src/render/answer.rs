//! `-o answer`: the final answer's text and a newline; in the no-question
//! mode, the thread's messages as `role: content` paragraphs.

use std::io::{self, Write};

use crate::stream::transcript::Transcript;

/// Writes the answer (or the thread). Writes nothing when there is no answer:
/// the caller reports that and sets the exit code.
pub fn write(transcript: &Transcript, out: &mut impl Write) -> io::Result<()> {
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
