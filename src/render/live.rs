//! What a person sees on stderr beside any output of `ask`, the fields of
//! its [`Printer`](super::Printer): notes about events ([`EventNotes`]:
//! the chat id, a tool's failure, a truncated result),
//! and, on a terminal only, a spinner saying what the agent is doing
//! (thinking, searching the data model, running "<query title>"), the answer
//! streamed to stdout as it arrives (its Markdown rendered, a block at a
//! time), and afterwards a short summary of the SQL results. Never in
//! pipes, never with `-q` (the settings decide).

use std::io;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::domain::Display;
use crate::modes::Mode;
use crate::output::{Notes, Output};
use crate::redact::redact;
use crate::render::markdown::{complete_blocks, Blocks, Markdown};
use crate::results::same_tool;
use crate::stream::message::{decode_embedded_json, Message};
use crate::stream::transcript::{Event, FinishedTool, Transcript};
use crate::text::{shorten, visible};

/// The facts about a SQL result that the summary shows.
#[derive(Clone, Debug)]
struct SqlSummary {
    number: usize,
    title: Option<String>,
    rows: usize,
    total_rows: Option<u64>,
}

/// The live display of one `ask`.
pub(super) struct Live {
    spinner: ProgressBar,
    /// What the output shows.
    mode: Mode,
    /// Where notes go, above the spinner while it turns.
    notes: Notes,
    /// The spinner and the summary are shown (stderr is a terminal, no `-q`).
    pub(super) on_stderr: bool,
    stream_answer: bool,
    /// The answer's Markdown for the terminal.
    markdown: Markdown,
    /// The prefix of the answer shown so far (whole blocks).
    printed: String,
    /// Where the blocks after `printed` end, read as the answer grows.
    blocks: Blocks,
    /// The `final` message streamed, while its deltas only extend it.
    extending: Option<String>,
    /// The service revised what was shown: the rest waits for the end.
    revised: bool,
    results: Vec<SqlSummary>,
}

impl Live {
    /// Starts the spinner (`notes` go above it); with
    /// `display.stream_answer` the final answer is also written to stdout
    /// as it arrives, rendered. The summary's hints suit `mode`.
    pub(super) fn start(display: Display, mode: Mode, notes: &Notes) -> Live {
        let spinner = match display.spinner {
            true => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
            false => ProgressBar::hidden(),
        };
        if display.spinner {
            notes.above(Some(&spinner));
        }
        if let Ok(style) = ProgressStyle::with_template("{spinner} {wide_msg} {elapsed}") {
            spinner.set_style(style);
        }
        spinner.set_message("waiting for the agent");
        if display.spinner {
            spinner.enable_steady_tick(Duration::from_millis(100));
        }
        Live {
            spinner,
            mode,
            notes: notes.clone(),
            on_stderr: display.spinner,
            stream_answer: display.stream_answer,
            markdown: Markdown::new(display.styled),
            printed: String::new(),
            blocks: Blocks::default(),
            extending: None,
            revised: false,
            results: Vec::new(),
        }
    }

    /// Remembers finished SQL results for the summary (of this turn only).
    pub(super) fn event(&mut self, event: &Event) {
        if let Event::TurnStarts = event {
            self.results.clear();
        }
        if let Event::ToolFinished(tool) = event {
            if let Some((number, sql)) = tool.sql.as_ref().filter(|_| tool.call.error.is_none()) {
                self.results.push(SqlSummary {
                    number: *number,
                    title: sql.title.clone(),
                    rows: sql.rows().len(),
                    total_rows: sql.total_rows,
                });
            }
        }
    }

    /// Updates the spinner from a message, and streams the final answer.
    pub(super) fn line(
        &mut self,
        message: Option<&Message<'_>>,
        transcript: &Transcript,
        out: &mut dyn Output,
    ) -> io::Result<()> {
        let Some(message) = message else { return Ok(()) };
        if let Some(call) = message.tool_call().filter(|call| call.result.is_none()) {
            let name: &str = call.name.as_deref().unwrap_or("a tool");
            let activity = if same_tool(name, "semanticMeta") {
                "searching the data model".to_string()
            } else if same_tool(name, "semanticSqlApi") {
                let title = call
                    .input
                    .map(decode_embedded_json)
                    .and_then(|input| input.get("queryTitle").and_then(|t| t.as_str()).map(str::to_string));
                title.map_or_else(
                    || "running a SQL query".to_string(),
                    |title| format!("running \"{title}\""),
                )
            } else {
                format!("calling {name}")
            };
            // The title came from the service: its control characters
            // must not act on the terminal.
            self.spinner.set_message(visible(&activity).into_owned());
        } else if message.thinking {
            self.spinner.set_message("thinking");
        } else if message.final_node && self.stream_answer {
            self.stream(message, transcript, out)?;
        } else if message.is_assistant() && message.content().is_some_and(|c| !c.is_empty()) {
            self.spinner.set_message("writing the answer");
        }
        Ok(())
    }

    /// Writes the blocks the final answer completed since the last call,
    /// rendered; the block still being written waits. A delta of the
    /// message being streamed only extends it, so only its new bytes are
    /// read; any other line of the `final` message (a new one, a complete
    /// copy) is compared with what was shown first; once the service
    /// revised that, the rest waits for the end ([`Live::finish_answer`]).
    fn stream(&mut self, message: &Message<'_>, transcript: &Transcript, out: &mut dyn Output) -> io::Result<()> {
        let Some(text) = transcript.final_so_far().filter(|_| !self.revised) else {
            return Ok(());
        };
        let extends = message.is_delta() && self.extending.as_deref() == Some(message.id());
        if !extends {
            if !text.starts_with(self.printed.as_str()) {
                self.revised = true;
                return Ok(());
            }
            self.blocks = Blocks::from(self.printed.len());
            self.extending = Some(message.id().to_string());
        }
        let complete = self.blocks.complete(text);
        if complete <= self.printed.len() {
            return Ok(());
        }
        self.spinner.finish_and_clear();
        self.show(&text[self.printed.len()..complete], out)?;
        self.printed.push_str(&text[self.printed.len()..complete]);
        Ok(())
    }

    /// Writes `blocks` of the answer, rendered, after a blank line when
    /// blocks came before.
    fn show(&self, blocks: &str, out: &mut dyn Output) -> io::Result<()> {
        if blocks.trim().is_empty() {
            return Ok(());
        }
        let separator = if self.printed.is_empty() { "" } else { "\n" };
        // Whole blocks: a secret split between deltas is whole here.
        out.write_styled(&format!("{separator}{}", self.markdown.render(&redact(blocks))))
    }

    /// Clears the spinner (before the final output and any message).
    pub(super) fn stop(&self) {
        self.notes.above(None);
        self.spinner.finish_and_clear();
    }

    /// Shows the rest of the answer, rendered, once: when the service
    /// revised the text already shown, only what follows the last block it
    /// still shares is shown, with a warning. Returns false when the answer
    /// is not streamed here (a pipe, or a thread's messages).
    pub(super) fn finish_answer(
        &mut self,
        transcript: &Transcript,
        notes: &Notes,
        out: &mut dyn Output,
    ) -> io::Result<bool> {
        self.stop();
        if !self.stream_answer || transcript.is_thread_state() {
            return Ok(false);
        }
        let Some((answer, _)) = transcript.answer() else {
            return Ok(false);
        };
        // The answer is redacted; so is what was shown, block by block.
        let printed = redact(&self.printed);
        let rest = match answer.strip_prefix(printed.as_ref()) {
            Some(rest) => rest,
            None => {
                notes.warn("the service revised the answer after part of it was shown; what follows is the final text from where they differ");
                let shared = answer
                    .char_indices()
                    .zip(printed.chars())
                    .find(|((_, a), b)| a != b)
                    .map_or(answer.len().min(printed.len()), |((at, _), _)| at);
                &answer[complete_blocks(&answer[..shared])..]
            }
        };
        self.show(rest, out)?;
        Ok(true)
    }

    /// A short summary of the SQL results on stderr: title, rows of total,
    /// and how to get CSV or every row.
    pub(super) fn summary(&self, notes: &Notes) {
        if self.results.is_empty() {
            return;
        }
        let mut lines = vec![String::new()];
        for sql in &self.results {
            let title = sql
                .title
                .as_deref()
                .map_or_else(|| "SQL result".to_string(), |t| format!("\"{t}\""));
            let rows = match sql.total_rows {
                Some(total) if total > sql.rows as u64 => format!("{} of {total} rows (truncated)", sql.rows),
                Some(total) => format!("{total} rows"),
                None => format!("{} rows", sql.rows),
            };
            lines.push(format!("  {}. {title}: {rows}", sql.number));
        }
        let truncated = self
            .results
            .iter()
            .any(|sql| sql.total_rows.is_some_and(|t| t > sql.rows as u64));
        let every_row = if truncated { ", --all-rows for every row" } else { "" };
        lines.push(match self.mode {
            Mode::Rows => format!("  --query N picks a result{every_row}"),
            _ => format!("  -o csv for CSV (--query N picks a result){every_row}"),
        });
        for line in &lines {
            notes.info(line);
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Notes of one kind (tool failures, truncated results) printed before the
/// rest are summed up in one line, so a long chat does not flood stderr.
const NOTES_OF_A_KIND: usize = 5;

/// Prints the note each event deserves: the chat id, a tool's failure, a
/// truncated result and how to get all its rows. Past
/// [`NOTES_OF_A_KIND`] failures or truncated results, one line says that
/// more are not listed.
pub(super) struct EventNotes {
    pub(super) notes: Notes,
    mode: Mode,
    note_truncated: bool,
    /// `--jq` rewrites the output: nothing can read it back.
    filtered: bool,
    /// The question's message id, said before the first chat id.
    pub(super) message_id: Option<String>,
    failures: usize,
    truncated: usize,
}

impl EventNotes {
    /// Notes of the events of a turn shown in `mode`.
    pub(super) fn new(notes: &Notes, mode: Mode, note_truncated: bool, filtered: bool) -> Self {
        EventNotes {
            notes: notes.clone(),
            mode,
            filtered,
            note_truncated,
            message_id: None,
            failures: 0,
            truncated: 0,
        }
    }

    /// The note `event` deserves, if any.
    pub(super) fn note(&mut self, event: &Event) {
        match event {
            Event::ChatId(id) => {
                if let Some(message) = self.message_id.take() {
                    self.notes.info(&format!("message: {message}"));
                }
                self.notes.info(&format!("chat: {id}"));
            }
            Event::ToolFinished(tool) => self.tool_finished(tool),
            Event::TurnStarts => {}
        }
    }

    fn tool_finished(&mut self, tool: &FinishedTool) {
        if let Some(error) = &tool.call.error {
            let text = format!("tool {} failed: {}", tool.call.name, shorten(error));
            limited(
                &self.notes,
                &mut self.failures,
                &text,
                "further tool failures are not listed; -o json has them all",
            );
        }
        if let Some((number, sql)) = &tool.sql {
            if let Some(sent) = &sql.unreadable_total {
                self.notes.warn(&format!(
                    "SQL result {number}: totalRows is {}, not a count of rows: whether every row is in the stream is unknown; {}",
                    shorten(sent),
                    self.mode.every_row(*number, self.filtered)
                ));
            }
        }
        // Whether a result is truncated is worked out (its rows counted)
        // only while such a note can still be shown.
        let wanted = self.notes.warns() && self.truncated <= NOTES_OF_A_KIND;
        if let Some((number, sql)) = tool
            .sql
            .as_ref()
            .filter(|_| wanted && tool.call.error.is_none() && self.note_truncated)
        {
            if let Some(total) = sql.total_rows.filter(|&total| total > sql.rows().len() as u64) {
                let title = sql.title.as_deref().map(|t| format!(" \"{t}\"")).unwrap_or_default();
                let text = format!(
                    "SQL result {number}{title} is truncated: {} of {total} rows in the stream; {}",
                    sql.rows().len(),
                    self.mode.every_row(*number, self.filtered)
                );
                let more = "further truncated SQL results are not listed; -o json marks each one";
                limited(&self.notes, &mut self.truncated, &text, more);
            }
        }
    }
}

/// Warns `text` while fewer than [`NOTES_OF_A_KIND`] of its kind were
/// printed (`count`), then `more` once, then nothing.
fn limited(notes: &Notes, count: &mut usize, text: &str, more: &str) {
    match *count {
        n if n < NOTES_OF_A_KIND => notes.warn(text),
        NOTES_OF_A_KIND => notes.warn(more),
        _ => {}
    }
    *count += 1;
}
