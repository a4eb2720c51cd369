//! The words of an `-o` mode of `ask` that the layers below the renderers
//! need: what it shows, as the notes see it ([`Mode`]), and what it does on
//! a terminal ([`OnTerminal`]). A mode's whole descriptor, its renderer
//! with it, is `render::ModeTraits`.

/// What a mode does when stdout is a terminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnTerminal {
    /// Writes its text as in a pipe (made visible), with the spinner on
    /// stderr until it is done.
    Text,
    /// Streams the answer as it comes, rendered, in place of the spinner.
    Live,
    /// Refused: it is not text (a picture).
    Refused,
}

/// What an output of `ask` shows, as far as notes care: a note about the
/// answer is given only where the answer is shown, and a hint never names
/// the mode in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `-o answer`: the answer.
    Answer,
    /// `-o json`: the answer and every result.
    Json,
    /// `-o raw` or `-o events`: the stream itself, which `rows` reads.
    Stream,
    /// `-o csv` or `-o table`: a result's rows.
    Rows,
    /// `-o vega`, `svg`, `png`, `html`: a result drawn.
    Chart,
}

impl Mode {
    /// True for the outputs that show the answer.
    pub fn shows_answer(self) -> bool {
        matches!(self, Mode::Answer | Mode::Json)
    }

    /// Whether a truncated result is worth a note as it arrives: not when
    /// every row will be fetched (`all_rows`), nor when this mode ends in
    /// an error naming the truncated result it shows (its rows, its chart
    /// or the JSON of every result, unless `allow_partial`): the error
    /// says it once.
    pub fn notes_truncated(self, all_rows: bool, allow_partial: bool) -> bool {
        let refuses = matches!(self, Mode::Json | Mode::Rows | Mode::Chart) && !allow_partial;
        !all_rows && !refuses
    }

    /// How to get every row of truncated SQL result `number` from here
    /// (`filtered`: `--jq` rewrites the output, which nothing reads back).
    pub fn every_row(self, number: usize, filtered: bool) -> String {
        match self {
            Mode::Stream if !filtered => {
                format!("'analyst rows --query {number}' reads this output and fetches every row")
            }
            Mode::Answer | Mode::Stream => format!("-o csv --all-rows --query {number} gives every row"),
            Mode::Json | Mode::Rows | Mode::Chart => {
                format!("--all-rows fetches every row (or pipe -o raw into 'analyst rows --query {number}')")
            }
        }
    }
}
