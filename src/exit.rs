//! Exit codes of the command-line contract and the one place where an error is
//! turned into a code and a message (`analyst: error: …`).

use std::fmt;
use std::io;

use crate::output::Notes;

/// The exit codes promised by `cli.md`; scripts rely on these numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitCode {
    /// Everything worked.
    Success = 0,
    /// Something failed that no other code describes.
    Unexpected = 1,
    /// Bad flags, invalid identity, unreadable input, or a 400 from the service.
    Usage = 2,
    /// The API key (or data token) was rejected: 401.
    Auth = 3,
    /// 403: for example aborting a chat you do not own.
    Forbidden = 4,
    /// 404: agent, account or chat not found.
    NotFound = 5,
    /// The service failed or could not be reached: 5xx, connection, TLS, DNS.
    Service = 6,
    /// A bad stream: malformed line, in-stream error, suspended or cut stream, no answer.
    BadStream = 7,
    /// A tool reported an error and `--fail-on-tool-error` was given.
    ToolError = 8,
    /// An `--expect-*` / `--min-rows` check (or a `check` case) failed.
    Expectation = 9,
    /// `rows` got fewer rows than `totalRows`.
    Partial = 10,
    /// `--timeout` expired or the stream stalled; the chat was aborted.
    Timeout = 124,
    /// Interrupted by SIGINT (Ctrl-C); the chat was aborted.
    Interrupted = 130,
    /// Terminated by SIGTERM; the chat was aborted.
    Terminated = 143,
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code as u8)
    }
}

/// An error that knows its exit code. It travels inside `anyhow::Error`
/// chains; [`code_of`] finds it again.
#[derive(Debug)]
pub struct Fault {
    /// The exit code this failure maps to.
    pub code: ExitCode,
    message: String,
}

impl Fault {
    /// A failure with the given code and a one-line message.
    pub fn new(code: ExitCode, message: impl Into<String>) -> Self {
        Fault {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Fault {}

/// Shorthand for a usage error (exit 2) as an `anyhow::Error`.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    Fault::new(ExitCode::Usage, message).into()
}

/// Shorthand for a bad-stream error (exit 7) as an `anyhow::Error`.
pub fn bad_stream(message: impl Into<String>) -> anyhow::Error {
    Fault::new(ExitCode::BadStream, message).into()
}

/// True when the reader of our stdout went away (`| head`): not an error.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// The exit code for an error: the first [`Fault`] in its chain, success for a
/// closed stdout, and [`ExitCode::Unexpected`] for anything else.
pub fn code_of(err: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(err) {
        return ExitCode::Success;
    }
    err.chain()
        .find_map(|cause| cause.downcast_ref::<Fault>())
        .map_or(ExitCode::Unexpected, |fault| fault.code)
}

/// Prints `analyst: error: …` for `err` (nothing for a closed stdout) and
/// returns its exit code.
pub fn report_error(err: &anyhow::Error, notes: &Notes) -> ExitCode {
    let code = code_of(err);
    if code == ExitCode::Success {
        return code;
    }
    let known = err.chain().any(|cause| cause.downcast_ref::<Fault>().is_some());
    let mut line = format!("{err:#}");
    if !known {
        line.push_str(" (unexpected: if this looks like a bug in analyst, please report it)");
    }
    notes.error(&line);
    code
}

/// Prints a clap parse error (or `--help`/`--version`, which clap models as
/// errors) and returns the matching exit code: 0 for help, 2 for bad usage.
pub fn report_clap_error(err: clap::Error) -> ExitCode {
    let code = if err.use_stderr() {
        ExitCode::Usage
    } else {
        ExitCode::Success
    };
    // clap writes to stdout for --help and stderr for errors; a closed pipe
    // while printing help is not worth a panic or a message.
    let _ = err.print();
    code
}
