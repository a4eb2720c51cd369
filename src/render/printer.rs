//! The output of `ask`, one closed type: [`Printer`] holds the `-o`
//! mode's own printer ([`ModePrinter`], an enum over the modes: no
//! dynamic stack of wrappers), the notes about events and the live
//! display as its fields, and what a truncated result becomes. The
//! settings build it once, from the mode's descriptor, the render options
//! and the display; the owner of the turn drives it, line by line and
//! event by event, and the command's judge ends it.

use std::io;

use anyhow::Result;

use super::answer::Answer;
use super::csv::Csv;
use super::events::Events;
use super::html::Html;
use super::json::Json;
use super::live::{EventNotes, Live};
use super::raw::Raw;
use super::vega::Vega;
use super::{markdown, ModeTraits, RenderOptions, Truncation};
use crate::domain::Display;
use crate::evals::figures::Figure;
use crate::modes::Mode;
use crate::output::{Notes, Output};
use crate::stream::lines::Line;
use crate::stream::message::Message;
use crate::stream::transcript::{Event, Keep, Transcript};
use crate::stream::turn::{Ended, Renderer, Status};

/// The printer of one `-o` mode.
pub enum ModePrinter {
    /// `-o answer`.
    Answer(Answer),
    /// `-o raw`.
    Raw(Raw),
    /// `-o events`.
    Events(Events),
    /// `-o json`.
    Json(Box<Json>),
    /// `-o csv` and `-o table`.
    Rows(Csv),
    /// `-o vega`, `-o svg` and `-o png`.
    Chart(Vega),
    /// `-o html`.
    Html(Box<Html>),
}

impl ModePrinter {
    /// A line arrived (the streaming modes write it).
    fn line(&mut self, line: &Line<'_>, message: Option<&Message<'_>>, out: &mut dyn Output) -> io::Result<()> {
        match self {
            ModePrinter::Raw(raw) => raw.line(line, out),
            ModePrinter::Events(events) => events.line(line, message, out),
            ModePrinter::Html(html) => {
                html.line(message);
                Ok(())
            }
            ModePrinter::Answer(_) | ModePrinter::Json(_) | ModePrinter::Rows(_) | ModePrinter::Chart(_) => Ok(()),
        }
    }

    /// Something happened that the mode keeps.
    fn event(&mut self, event: &Event) {
        match self {
            ModePrinter::Json(json) => json.event(event),
            ModePrinter::Rows(rows) => rows.event(event),
            ModePrinter::Chart(chart) => chart.event(event),
            ModePrinter::Html(html) => html.event(event),
            ModePrinter::Answer(_) | ModePrinter::Raw(_) | ModePrinter::Events(_) => {}
        }
    }
}

/// The whole output of `ask`: the mode's printer, the notes each event
/// deserves where they help that mode, the live display on a terminal,
/// and what a truncated result becomes.
pub struct Printer {
    mode: ModePrinter,
    traits: ModeTraits,
    notes: EventNotes,
    /// Started when the turn begins (a terminal only).
    live: Option<Live>,
    display: Display,
    truncation: Truncation,
    /// `--allow-questions`: an agent that asks back is answered by its
    /// question.
    allow_questions: bool,
}

impl Printer {
    /// The output of the mode `traits` describes, built with `options`;
    /// notes through `notes`, the live `display`; a truncated result
    /// completed or accepted as `truncation` says; `filtered`: `--jq`
    /// rewrites the output, which nothing reads back.
    pub fn new(
        traits: ModeTraits,
        options: &RenderOptions,
        notes: &Notes,
        display: Display,
        truncation: Truncation,
        filtered: bool,
    ) -> Printer {
        // On a terminal, the live display's summary of the results says
        // which are truncated, once, with the advice.
        let note_truncated = !display.spinner
            && traits
                .shows
                .notes_truncated(truncation.every_row.is_some(), truncation.allow_partial);
        Printer {
            mode: (traits.printer)(options, notes),
            traits,
            notes: EventNotes::new(notes, traits.shows, note_truncated, filtered),
            live: None,
            display,
            truncation,
            allow_questions: false,
        }
    }

    /// `--allow-questions`: when the agent asks back, its question is the
    /// answer; else only `-o json` writes (with `asksBack`).
    pub fn allowing_questions(mut self, allowed: bool) -> Self {
        self.allow_questions = allowed;
        self
    }

    /// True when an agent that asks back is answered by its question.
    pub fn allows_questions(&self) -> bool {
        self.allow_questions
    }

    /// True when the output reports the answer's figures (`-o json`).
    pub fn reports_figures(&self) -> bool {
        matches!(self.mode, ModePrinter::Json(_))
    }

    /// The answer's figures, checked, for `-o json`'s `figures`.
    pub fn set_figures(&mut self, figures: &[Figure]) {
        if let ModePrinter::Json(json) = &mut self.mode {
            json.set_figures(figures.to_vec());
        }
    }

    /// Says `message: ID` (how to resume the turn by hand) with the chat
    /// id, once the service has taken the question: never before a
    /// refusal such as a 401.
    pub fn announcing(mut self, message_id: Option<String>) -> Self {
        self.notes.message_id = message_id;
        self
    }

    /// The mode's descriptor.
    pub fn traits(&self) -> &ModeTraits {
        &self.traits
    }

    /// What of the turn it, the expectations and the history read (see
    /// [`ModeTraits::keep`]).
    pub fn keep(&self, matched: bool) -> Keep {
        self.traits.keep(matched)
    }
}

impl std::fmt::Debug for Printer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Printer")
            .field("traits", &self.traits)
            .field("display", &self.display)
            .field("truncation", &self.truncation)
            .finish_non_exhaustive()
    }
}

impl Renderer for Printer {
    fn begin(&mut self) {
        if self.live.is_none() && (self.display.spinner || self.display.stream_answer) {
            self.live = Some(Live::start(self.display, self.traits.shows, &self.notes.notes));
        }
    }

    fn line(
        &mut self,
        line: &Line<'_>,
        message: Option<&Message<'_>>,
        transcript: &Transcript,
        out: &mut dyn Output,
    ) -> io::Result<()> {
        self.mode.line(line, message, out)?;
        match &mut self.live {
            Some(live) => live.line(message, transcript, out),
            None => Ok(()),
        }
    }

    fn event(&mut self, event: &Event) {
        self.mode.event(event);
        if let Some(live) = &mut self.live {
            live.event(event);
        }
        self.notes.note(event);
    }

    fn end(&mut self, transcript: &Transcript, ended: &Ended, out: &mut dyn Output) -> Result<()> {
        if let Some(live) = &self.live {
            live.stop();
        }
        let truncation = &self.truncation;
        let asked_back = ended.asks_back.is_some() && !self.allow_questions;
        if ended.failure.is_some() || asked_back {
            // Only -o json writes a document of a failed turn, or of one
            // that asked back.
            return match &mut self.mode {
                ModePrinter::Json(json) => json.end(transcript, ended, truncation, out),
                _ => Ok(()),
            };
        }
        let notes = &self.notes.notes;
        if ended.status == Status::Incomplete && self.traits.shows.shows_answer() {
            notes.warn("no final answer in the stream: using the last complete assistant message");
        }
        let reads_results = matches!(self.traits.shows, Mode::Rows | Mode::Chart | Mode::Json);
        let inline = reads_results && !transcript.is_thread_state() && transcript.sql_queries().is_empty();
        if inline
            && transcript
                .answer()
                .is_some_and(|(answer, _)| markdown::has_table(&answer))
        {
            notes
                .info("the stream has no SQL result: the results are the Markdown tables of the answer, cells as text");
        }
        let streamed = match &mut self.live {
            Some(live) => live.finish_answer(transcript, notes, out)?,
            None => false,
        };
        let rendered = match (&mut self.mode, streamed) {
            (_, true) | (ModePrinter::Raw(_) | ModePrinter::Events(_), _) => Ok(()),
            (ModePrinter::Answer(answer), false) => answer.end(transcript, out),
            (ModePrinter::Json(json), false) => json.end(transcript, ended, truncation, out),
            (ModePrinter::Rows(rows), false) => rows.end(transcript, truncation, out),
            (ModePrinter::Chart(chart), false) => chart.end(transcript, truncation, out),
            (ModePrinter::Html(html), false) => html.end(transcript, truncation, out),
        };
        let rendered = rendered.and_then(|()| Ok(out.flush()?));
        if let Some(live) = self.live.as_ref().filter(|live| live.on_stderr) {
            live.summary(notes);
        }
        rendered
    }
}
