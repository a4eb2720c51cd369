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

use serde_json::{Map, Value};

use crate::error::Fault;
use crate::modes::{Mode, OnTerminal};
use crate::output::{JqInput, Notes};
use crate::results::{Pick, Picker, SqlResult};
use crate::stream::transcript::Transcript;
use crate::stream::turn::Renderer;

/// One `-o` mode of `ask`, described whole: what it shows, what the turn
/// must keep for it, how `--jq` reads it, what it does on a terminal, and
/// its renderer. The settings give each mode its descriptor in one
/// exhaustive match (`settings::mode_traits`): a new mode is its renderer's
/// file plus its `cli.rs` variant, and does not compile until each of these
/// is said.
#[derive(Clone, Copy, Debug)]
pub struct ModeTraits {
    /// What it shows, as the notes see it.
    pub shows: Mode,
    /// It shows the final answer's text, so the turn keeps all of it.
    pub answer_text: bool,
    /// It shows every tool call's input, so the turn keeps them.
    pub tool_inputs: bool,
    /// How `--jq` reads it; `None`: `--jq` is refused with it.
    pub jq: Option<JqInput>,
    /// What it does when stdout is a terminal.
    pub on_terminal: OnTerminal,
    /// Builds its renderer.
    pub renderer: MakeRenderer,
}

/// What a renderer of `ask` is built with: the result `--query` picks, a
/// chart's `--vega-config` and `--scale` (`png`), the terminal's width
/// (`table`).
#[derive(Clone, Debug)]
pub struct RenderOptions {
    /// The SQL result `--query` picks.
    pub pick: Pick,
    /// `--scale` of `-o png`.
    pub scale: f32,
    /// `--vega-config`.
    pub vega_config: Option<Map<String, Value>>,
    /// The terminal's width, when stdout is one (`-o table`).
    pub width: Option<u16>,
}

/// Builds a mode's renderer; its warnings go to the notes.
pub type MakeRenderer = fn(&RenderOptions, &Notes) -> Box<dyn Renderer>;

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
