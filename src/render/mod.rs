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

/// The result `picker` selected for an output of `ask`, or why there is
/// none; with no SQL result at all, the outputs that have the answer are
/// named.
fn picked(picker: &mut Picker) -> Result<&mut SqlResult, Fault> {
    let none = picker.is_empty();
    picker.picked_mut().map_err(|fault| match none {
        true => Fault::new(fault.kind, format!("{fault} (try -o answer or -o json)")),
        false => fault,
    })
}
