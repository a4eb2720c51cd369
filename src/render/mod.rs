//! The output of `ask`, one closed type ([`Printer`], in [`printer`]):
//! built once by the settings from the `-o` mode's descriptor
//! ([`ModeTraits`]), the render options and the display, it holds the
//! mode's own printer — one module per mode: the streaming modes ([`raw`],
//! [`events`]) write each line as it arrives, the others keep what they
//! need of the turn's events and write when it ends — with the notes and
//! the live display of [`live`] as its fields (the answer streamed to a
//! terminal is rendered by [`markdown`]). [`table`] writes rows for `csv`,
//! `table` and for `rows`.

pub mod answer;
pub mod csv;
pub mod draw;
pub mod events;
pub mod html;
pub mod json;
pub mod live;
pub mod markdown;
pub mod parquet;
pub mod printer;
pub mod raw;
pub mod table;
pub mod vega;

use anyhow::Result;
use serde_json::{Map, Value};

use crate::api::data::OnDemand;
use crate::error::{fail, Fault, Kind};
use crate::modes::{Mode, OnTerminal};
use crate::output::{JqInput, Notes};
use crate::results::{Pick, Picker, SqlResult};
use crate::stream::transcript::{AnswerText, Keep, Transcript};

pub use printer::{ModePrinter, Printer};

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
    /// Builds its printer.
    pub printer: MakePrinter,
}

impl ModeTraits {
    /// What of the turn the output, the expectations and the history read:
    /// the answer's text where it is shown or matched (`matched`:
    /// `--expect-answer`); else its head, bounded however long the
    /// answer: what the history records, and enough to tell an agent that
    /// asks back from one that answers; every tool call's input where the
    /// mode shows them.
    pub fn keep(&self, matched: bool) -> Keep {
        Keep {
            answer_text: match self.answer_text || matched {
                true => AnswerText::Whole,
                false => AnswerText::Head(crate::domain::MAX_KEPT_ANSWER),
            },
            tool_inputs: self.tool_inputs,
        }
    }
}

/// What a printer of `ask` is built with: the result `--query` picks, a
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

/// Builds a mode's printer; its warnings go to the notes.
pub type MakePrinter = fn(&RenderOptions, &Notes) -> ModePrinter;

/// What the outputs do with a truncated result: complete it with every
/// row (`--all-rows`, from the data query API, its client made on first
/// use), else accept the part (`--allow-partial`), else fail with
/// [`Kind::Partial`].
#[derive(Default)]
pub struct Truncation {
    /// Where every row of a truncated result comes from (`--all-rows`).
    pub every_row: Option<OnDemand>,
    /// A truncated result is accepted (`--allow-partial`).
    pub allow_partial: bool,
}

impl std::fmt::Debug for Truncation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Truncation")
            .field("all_rows", &self.every_row.is_some())
            .field("allow_partial", &self.allow_partial)
            .finish()
    }
}

impl Truncation {
    /// Whether a result left truncated (`what`: `total` rows, `rows` of
    /// them here) is accepted; when not, the [`Kind::Partial`] failure
    /// saying so.
    pub fn accept(&self, what: &str, rows: usize, total: u64) -> Result<()> {
        if self.allow_partial {
            return Ok(());
        }
        Err(fail(
            Kind::Partial,
            format!(
                "{what} is truncated: {rows} of {total} rows; --all-rows fetches every row, --allow-partial accepts the part"
            ),
        ))
    }
}

/// The result `picker` picks of the turn of `transcript`; a turn that ran
/// no SQL offers the tables of its final answer instead (an agent on
/// Cube's `chassis` runtime puts its results inline), cells as text.
fn picked<'a>(picker: &'a mut Picker, transcript: &Transcript) -> Result<&'a mut SqlResult, Fault> {
    if picker.is_empty() {
        for result in answer_tables(transcript) {
            picker.offer(&result);
        }
    }
    let none = picker.is_empty();
    picker.picked_mut().map_err(|fault| match none {
        true => Fault::new(fault.kind, format!("{fault} (try -o answer or -o json)")),
        false => fault,
    })
}

/// The tables of the final answer of a turn, as results (see
/// [`SqlResult::from_answer_table`]).
pub fn answer_tables(transcript: &Transcript) -> Vec<SqlResult> {
    let Some((answer, _)) = transcript.answer() else {
        return Vec::new();
    };
    markdown::tables(&answer)
        .iter()
        .enumerate()
        .map(|(index, table)| SqlResult::from_answer_table(index + 1, &table.header, &table.rows))
        .collect()
}
