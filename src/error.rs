//! How things fail: one enum of failure kinds, the [`Fault`] that carries a
//! kind and a message through `anyhow` chains, and the one map from kinds to
//! the exit codes of `cli.md` ([`Kind::exit_code`]). No other file names an
//! exit number.

use std::fmt;
use std::io;

/// The exit code of a command that succeeded.
pub const SUCCESS: u8 = 0;

/// What kind of failure ended a command; each maps to one exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Bad flags, invalid identity, unreadable input, or a 400 from the service.
    Usage,
    /// The API key (or data token) was rejected: 401.
    Auth,
    /// 403: for example aborting a chat you do not own.
    Forbidden,
    /// 404: agent, account or chat not found.
    NotFound,
    /// The service failed: a 5xx, a connection reset once made, an answer
    /// that is not the service's.
    Service,
    /// The service could not be reached at all: connection refused, DNS,
    /// TLS, the proxy's tunnel. (Exit 6, as [`Kind::Service`]; a `check`
    /// run stops for it, as no case can be asked.)
    Unreachable,
    /// A bad stream: malformed line, in-stream error, suspended or cut stream, no answer.
    BadStream,
    /// A tool reported an error (with `--fail-on-tool-error`, or the chosen query failed).
    ToolError,
    /// An `--expect-*` / `--min-rows` check (or a `check` case) failed.
    Expectation,
    /// Fewer rows than `totalRows`.
    Partial,
    /// The stream was good but holds nothing the output can render: no SQL
    /// result (`csv`), no chart that draws (`vega`).
    NothingToRender,
    /// The agent asked back instead of answering (a turn that called no
    /// tool and whose answer ends in a question).
    AskedBack,
    /// An output could not be written: stdout or a file (a full disk, an
    /// unwritable `--tee`).
    CannotWrite,
    /// `--timeout` expired or the stream stalled.
    Timeout,
    /// SIGINT (Ctrl-C) arrived.
    Interrupted,
    /// SIGTERM arrived.
    Terminated,
    /// SIGHUP arrived (the terminal went away).
    HungUp,
    /// The reader of stdout went away (`| head`): not a failure to report.
    ReaderGone,
    /// Anything no other kind describes (a bug, or the machine failing).
    Unexpected,
}

impl Kind {
    /// The process exit code of this kind: the table of `cli.md`.
    pub fn exit_code(self) -> u8 {
        match self {
            Kind::ReaderGone => SUCCESS,
            Kind::Unexpected => 1,
            Kind::Usage => 2,
            Kind::Auth => 3,
            Kind::Forbidden => 4,
            Kind::NotFound => 5,
            Kind::Service | Kind::Unreachable => 6,
            Kind::BadStream => 7,
            Kind::ToolError => 8,
            Kind::Expectation => 9,
            Kind::Partial => 10,
            Kind::NothingToRender => 11,
            Kind::AskedBack => 12,
            Kind::CannotWrite => 74,
            Kind::Timeout => 124,
            Kind::HungUp => 129,
            Kind::Interrupted => 130,
            Kind::Terminated => 143,
        }
    }

    /// Every kind.
    pub const ALL: [Kind; 19] = [
        Kind::Usage,
        Kind::Auth,
        Kind::Forbidden,
        Kind::NotFound,
        Kind::Service,
        Kind::Unreachable,
        Kind::BadStream,
        Kind::ToolError,
        Kind::Expectation,
        Kind::Partial,
        Kind::NothingToRender,
        Kind::AskedBack,
        Kind::CannotWrite,
        Kind::Timeout,
        Kind::HungUp,
        Kind::Interrupted,
        Kind::Terminated,
        Kind::ReaderGone,
        Kind::Unexpected,
    ];

    /// The kind whose exit code is `code` (a report read back names only
    /// the code); [`Kind::Unexpected`] for a code no kind has.
    pub fn from_exit_code(code: u8) -> Kind {
        Kind::ALL
            .into_iter()
            .find(|kind| kind.exit_code() == code)
            .unwrap_or(Kind::Unexpected)
    }

    /// True for the kinds that end a running turn early on our side (a
    /// signal, the deadline, a stall, stdout closed): the chat must then be
    /// aborted on the service.
    pub fn stops_the_chat(self) -> bool {
        matches!(
            self,
            Kind::Timeout | Kind::Interrupted | Kind::Terminated | Kind::HungUp | Kind::ReaderGone
        )
    }
}

/// A failure with its kind and a one-line message. It travels inside
/// `anyhow::Error` chains (and inside `io::Error`s out of a stream source);
/// [`kind_of`] finds it again.
#[derive(Clone, Debug)]
pub struct Fault {
    /// What kind of failure it is.
    pub kind: Kind,
    message: String,
    /// It stops a running turn on our side (see [`stops_the_chat`]).
    stop: bool,
    /// The HTTP status that said it, when one did.
    status: Option<u16>,
}

impl Fault {
    /// A failure of `kind` with a one-line message.
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Fault {
            kind,
            message: message.into(),
            stop: kind.stops_the_chat(),
            status: None,
        }
    }

    /// The same failure, said by an answer of HTTP `status`.
    pub fn answered(self, status: u16) -> Self {
        Fault {
            status: Some(status),
            ..self
        }
    }

    /// `err` as one fault: its kind (as [`kind_of`] finds it), its whole
    /// message (`{err:#}`, the context that says what was being done
    /// included), whether it stops a running turn, and the HTTP status that
    /// said it.
    pub fn of(err: &anyhow::Error) -> Fault {
        Fault {
            kind: kind_of(err),
            message: format!("{err:#}"),
            stop: stops_the_chat(err),
            status: status_of(err),
        }
    }

    /// The same failure, its message followed by `more` (`; chat X
    /// aborted`).
    pub fn saying(self, more: impl AsRef<str>) -> Self {
        Fault {
            message: format!("{}{}", self.message, more.as_ref()),
            ..self
        }
    }

    /// What went wrong, in analyst's words.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The HTTP status that said it, when one did (a collector's 413).
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// A failure of `kind` that stops a running turn on our side, whatever
    /// its kind: the chat is aborted (a `check` run stopped because the
    /// service refused the credentials).
    pub fn stop(kind: Kind, message: impl Into<String>) -> Self {
        Fault {
            stop: true,
            ..Fault::new(kind, message)
        }
    }
}

/// True when `err` ended a running turn early on our side (a signal, the
/// deadline, a stall, stdout closed, a stop of the whole command): the
/// chat must then be aborted on the service.
pub fn stops_the_chat(err: &anyhow::Error) -> bool {
    kind_of(err).stops_the_chat()
        || err.chain().any(|cause| {
            cause
                .downcast_ref::<Fault>()
                .or_else(|| fault_in_io(cause))
                .is_some_and(|fault| fault.stop)
        })
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Fault {}

/// The exit code of a command (or a turn) that ended with `failure`
/// ([`SUCCESS`] without one): the one place a failure becomes a number.
pub fn exit_code(failure: Option<&anyhow::Error>) -> u8 {
    failure.map_or(SUCCESS, |err| kind_of(err).exit_code())
}

/// A usage failure (bad flags or input) as an `anyhow::Error`.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    Fault::new(Kind::Usage, message).into()
}

/// A bad-stream failure as an `anyhow::Error`.
pub fn bad_stream(message: impl Into<String>) -> anyhow::Error {
    Fault::new(Kind::BadStream, message).into()
}

/// A failure of `kind` as an `anyhow::Error`.
pub fn fail(kind: Kind, message: impl Into<String>) -> anyhow::Error {
    Fault::new(kind, message).into()
}

/// The kind of an error: [`Kind::ReaderGone`] when a `BrokenPipe` is
/// anywhere in its chain (the reader of stdout left), else the first
/// [`Fault`]'s, else [`Kind::Unexpected`].
pub fn kind_of(err: &anyhow::Error) -> Kind {
    let broken_pipe = err
        .chain()
        .any(|cause| io_error_kind(cause) == Some(io::ErrorKind::BrokenPipe));
    if broken_pipe {
        return Kind::ReaderGone;
    }
    err.chain()
        .find_map(|cause| cause.downcast_ref::<Fault>().or_else(|| fault_in_io(cause)))
        .map_or(Kind::Unexpected, |fault| fault.kind)
}

/// The HTTP status that said `err`, when an answer did (see
/// [`Fault::answered`]).
pub fn status_of(err: &anyhow::Error) -> Option<u16> {
    err.chain()
        .find_map(|cause| cause.downcast_ref::<Fault>())
        .and_then(Fault::status)
}

/// The kind of the I/O failure `cause` is or wraps: an `io::Error`, or the
/// writers' errors (serde_json, csv) that carry one without showing it as
/// their source.
fn io_error_kind(cause: &(dyn std::error::Error + 'static)) -> Option<io::ErrorKind> {
    if let Some(io) = cause.downcast_ref::<io::Error>() {
        // `io::Error::other(inner)` hides `inner` from the chain.
        return match (io.kind(), io.get_ref()) {
            (io::ErrorKind::Other, Some(inner)) => io_error_kind(inner).or(Some(io.kind())),
            (kind, _) => Some(kind),
        };
    }
    if let Some(json) = cause.downcast_ref::<serde_json::Error>() {
        return json.io_error_kind();
    }
    match cause.downcast_ref::<csv::Error>().map(csv::Error::kind) {
        Some(csv::ErrorKind::Io(io)) => Some(io.kind()),
        _ => None,
    }
}

/// True when some cause of `err` says what kind it is (a [`Fault`]), so
/// the error is one we expected, not a bug.
pub fn is_known(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|cause| cause.downcast_ref::<Fault>().is_some() || fault_in_io(cause).is_some())
}

/// The [`Fault`] an `io::Error` carries, when a stream source put one there
/// (a stop: a signal, the deadline, a stall).
pub fn fault_of_io(err: &io::Error) -> Option<&Fault> {
    err.get_ref()?.downcast_ref::<Fault>()
}

fn fault_in_io<'a>(cause: &'a (dyn std::error::Error + 'static)) -> Option<&'a Fault> {
    cause.downcast_ref::<io::Error>().and_then(fault_of_io)
}

/// The causes of an error, innermost details included, without repeating
/// reqwest's "error sending request for url (…)" wrapper.
pub fn root_causes(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cause = err.source();
    while let Some(inner) = cause {
        let text = inner.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cause = inner.source();
    }
    if parts.is_empty() {
        parts.push(err.to_string());
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_are_found_anywhere_in_a_chain() {
        let err = fail(Kind::NotFound, "no such chat").context("aborting chat c1");
        assert_eq!(kind_of(&err), Kind::NotFound);
        let io = io::Error::other(Fault::new(Kind::Timeout, "--timeout 1s expired"));
        assert_eq!(kind_of(&anyhow::Error::new(io)), Kind::Timeout);
        let pipe = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe)).context("writing");
        assert_eq!(kind_of(&pipe), Kind::ReaderGone);
        assert_eq!(kind_of(&anyhow::anyhow!("bug")), Kind::Unexpected);
        assert!(!is_known(&anyhow::anyhow!("bug")));
    }
}
