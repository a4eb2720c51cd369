//! One module per output mode of `ask`. Streaming modes (`raw`, `events`)
//! write each line as it arrives; the others render the finished
//! [`Transcript`](crate::stream::transcript::Transcript) once.

pub mod answer;
pub mod events;
pub mod json;
pub mod live;
pub mod report;
pub mod table;
pub mod vega;

/// How a chat ended, as reported by `-o json`'s `status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// A final answer arrived.
    Completed,
    /// No `final` answer: the fallback answer (or none) was used.
    Incomplete,
    /// The chat was aborted.
    Aborted,
    /// The request or the stream failed.
    Error,
}

impl Status {
    /// The word used in the JSON document.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Incomplete => "incomplete",
            Status::Aborted => "aborted",
            Status::Error => "error",
        }
    }
}
