//! One module per output mode of `ask`, each a
//! [`Renderer`](crate::stream::turn::Renderer): the streaming modes
//! ([`raw`], [`events`]) write each line as it arrives, the others keep
//! what they need of the turn's events and write when it ends. [`live`]
//! adds what a person sees on stderr beside any of them; [`table`] writes
//! rows for `csv` and for `rows`.

pub mod answer;
pub mod csv;
pub mod events;
pub mod json;
pub mod live;
pub mod raw;
pub mod table;
pub mod vega;

use crate::cli::OutputMode;
use crate::output::Notes;
use crate::results::Pick;
use crate::stream::turn::Renderer;

/// The renderer of an output mode; `pick` is the SQL result `csv` and
/// `vega` use, `notes` where a renderer's warnings go.
pub fn for_mode(mode: OutputMode, pick: Pick, notes: &Notes) -> Box<dyn Renderer> {
    match mode {
        OutputMode::Answer => Box::new(answer::Answer),
        OutputMode::Raw => Box::new(raw::Raw),
        OutputMode::Events => Box::new(events::Events),
        OutputMode::Json => Box::new(json::Json::default()),
        OutputMode::Csv => Box::new(csv::Csv::new(pick)),
        OutputMode::Vega => Box::new(vega::Vega::new(pick, notes)),
    }
}
