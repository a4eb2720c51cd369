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
