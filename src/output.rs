//! Where bytes go: [`Out`] is the one buffered writer on stdout (data only),
//! [`Notes`] writes the human notes, warnings and errors on stderr, and
//! [`human`] writes a duration the way people do.

use std::io::{self, BufWriter, Stdout, Write};
use std::time::Duration;

/// The buffered stdout every renderer writes through. Errors are returned,
/// never panicked on; a `BrokenPipe` means the reader left (see `exit`).
pub struct Out {
    writer: BufWriter<Stdout>,
}

impl Out {
    /// A writer on the process's stdout with a buffer sized for bulk output.
    pub fn stdout() -> Self {
        Out {
            writer: BufWriter::with_capacity(64 * 1024, io::stdout()),
        }
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

/// Writes to stderr what a person needs and a script can ignore. Honors `-q`
/// (only errors) and `-v` (debug lines). Failures to write stderr are ignored:
/// there is nowhere left to report them.
#[derive(Clone, Debug)]
pub struct Notes {
    quiet: bool,
    verbose: bool,
    progress: bool,
}

impl Notes {
    /// Notes for the given `-q` / `-v` settings (`-q` wins over `-v`);
    /// `progress` says whether a progress display may be drawn on stderr
    /// (the settings decide: a terminal, neither `-q` nor `NO_COLOR`).
    pub fn new(quiet: bool, verbose: bool, progress: bool) -> Self {
        Notes {
            quiet,
            verbose: verbose && !quiet,
            progress: progress && !quiet,
        }
    }

    /// True when a progress display may be drawn.
    pub fn show_progress(&self) -> bool {
        self.progress
    }

    /// True when `-v` asked for the HTTP exchange to be logged.
    pub fn verbose(&self) -> bool {
        self.verbose
    }

    /// An informational line such as `chat: <id>`; silenced by `-q`.
    pub fn info(&self, line: &str) {
        if !self.quiet {
            emit(line);
        }
    }

    /// `analyst: warning: …`; silenced by `-q`.
    pub fn warn(&self, message: &str) {
        if !self.quiet {
            emit(&format!("analyst: warning: {message}"));
        }
    }

    /// A `-v` debug line (requests, statuses); never carries secrets.
    pub fn debug(&self, line: &str) {
        if self.verbose {
            emit(line);
        }
    }

    /// A line that matters even with `-q` (a failed `check` case), as it is.
    pub fn always(&self, line: &str) {
        emit(line);
    }

    /// `analyst: expectation failed: …`; always printed, even with `-q`.
    pub fn expectation(&self, line: &str) {
        emit(&format!("analyst: expectation failed: {line}"));
    }

    /// `analyst: error: …`; always printed, even with `-q`.
    pub fn error(&self, message: &str) {
        emit(&format!("analyst: error: {message}"));
    }
}

fn emit(line: &str) {
    let mut stderr = io::stderr().lock();
    let _ = writeln!(stderr, "{line}");
}

/// A duration as people write it: `90s`, `5m`, `1.5s`, `250ms`.
pub fn human(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms % 60_000 == 0 && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.1}s", duration.as_secs_f64())
    }
}

/// How long a quoted piece of text (an error body, a tool's error) may be,
/// in characters.
pub const SUMMARY_CHARS: usize = 200;

/// `text` trimmed and cut to [`SUMMARY_CHARS`] characters with `…` when longer.
pub fn shorten(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(SUMMARY_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// `text` as one shell word: as it is when it holds only characters no
/// shell treats specially, else in single quotes (an id the service chose
/// can then never run as a command when a hint is pasted).
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,:/@%+=".contains(c));
    match plain {
        true => text.to_string(),
        false => format!("'{}'", text.replace('\'', r"'\''")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_quoted_for_the_shell_only_when_needed() {
        assert_eq!(shell_quote("chat-0001"), "chat-0001");
        assert_eq!(shell_quote("1732512345678-message"), "1732512345678-message");
        assert_eq!(shell_quote("abc; curl x | sh #"), "'abc; curl x | sh #'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
