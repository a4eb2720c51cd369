//! One module per output mode of `ask`, each a
//! [`Renderer`](crate::stream::turn::Renderer) (`ask` picks one per `-o`
//! mode): the streaming modes
//! ([`raw`], [`events`]) write each line as it arrives, the others keep
//! what they need of the turn's events and write when it ends. [`live`]
//! adds what a person sees on stderr beside any of them (and streams the
//! answer to a terminal, its Markdown rendered by [`markdown`]); [`table`]
//! writes rows for `csv`, `table` and for `rows`.

pub mod answer;
pub mod csv;
pub mod draw;
pub mod events;
pub mod html;
pub mod json;
pub mod live;
pub mod markdown;
pub mod parquet;
pub mod raw;
pub mod table;
pub mod vega;

use crate::error::Fault;
use crate::results::{Picker, SqlResult};
use crate::stream::transcript::Transcript;

/// The result `picker` selected for an output of `ask`, or why there is
/// none; with no SQL result at all, the outputs that have the answer are
/// named, and an answer of `transcript` that holds a Markdown table is
/// said to be where the results went.
fn picked<'a>(picker: &'a mut Picker, transcript: &Transcript) -> Result<&'a mut SqlResult, Fault> {
    let none = picker.is_empty();
    picker.picked_mut().map_err(|fault| {
        let inline = transcript
            .answer()
            .is_some_and(|(answer, _)| markdown::has_table(&answer));
        match (none, inline) {
            (true, true) => Fault::new(fault.kind, INLINE_RESULTS),
            (true, false) => Fault::new(fault.kind, format!("{fault} (try -o answer or -o json)")),
            (false, _) => fault,
        }
    })
}

/// Why a turn whose answer holds a table has no SQL result.
pub const INLINE_RESULTS: &str = "the stream has no SQL result: the agent put its results inline, as a Markdown table in its answer (as agents on Cube's chassis runtime do); -o answer or -o json shows it";
