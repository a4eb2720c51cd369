//! The plain types every layer shares, below all of them — a leaf, so the
//! resolver can sit on top: the limits of a command's network calls and
//! streams and what the terminal shows while `ask` runs (here); a turn's
//! question, images and kept answer ([`question`]); what a turn spent and
//! cost ([`usage`]); where requests go ([`url`]). The settings resolve
//! them; the layers below only read them.

mod question;
mod url;
mod usage;

pub use self::url::{is_loopback, service_url, without_credentials, Agent, UrlError};
pub use question::{is_message_id, kept_answer, new_message_id, Image, Question, ANSWER_CUT_MARKER, MAX_KEPT_ANSWER};
pub use usage::{dollars, ModelUsage, Price, Prices, Usage, UsageRecord};

use std::time::Duration;

/// When to give up on a stream: the whole command's `--timeout` and the
/// longest silence accepted (`--idle-timeout`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// `--timeout`: the whole command's wall-clock limit.
    pub timeout: Option<Duration>,
    /// `--idle-timeout`: the longest silence accepted from a source.
    pub idle: Option<Duration>,
}

/// How to reach the network: what every command that sends a request needs.
#[derive(Clone, Copy, Debug)]
pub struct Network {
    /// `--connect-timeout`.
    pub connect_timeout: Duration,
    /// `--timeout` and `--idle-timeout`.
    pub limits: Limits,
    /// `--retries`: how many times a transient failure is tried again.
    pub retries: u32,
}

impl Network {
    /// Tries in all for a request that is safe to repeat: the first and
    /// `--retries` more.
    pub fn attempts(&self) -> u32 {
        self.retries.saturating_add(1)
    }
}

/// What the terminal shows while `ask` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Display {
    /// A spinner on stderr (a terminal, and no `-q`).
    pub spinner: bool,
    /// The answer streamed to stdout as it arrives (`-o answer` to a terminal).
    pub stream_answer: bool,
    /// The terminal's width in columns, when stdout is a terminal (`-o table`).
    pub width: Option<u16>,
    /// The streamed answer's Markdown rendered with styles (bold, colour),
    /// not only laid out.
    pub styled: bool,
}
