//! What a person sees on a terminal while `ask` runs: a spinner on stderr
//! saying what the agent is doing (thinking, searching the data model,
//! running "<query title>"), the answer streamed to stdout as it arrives, and
//! afterwards a short summary of the SQL results. Only on a terminal: never
//! in pipes, never with `-q` or `NO_COLOR` (the caller decides).

use std::io::{self, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::expect::same_tool;
use crate::output::Notes;
use crate::stream::message::{decode_embedded_json, Message};
use crate::stream::transcript::{AnswerSource, Event, SqlSummary, Transcript};

/// The live display of one `ask`.
pub struct Live {
    spinner: ProgressBar,
    stream_answer: bool,
    printed: String,
    results: Vec<SqlSummary>,
}

impl Live {
    /// Starts the spinner; with `stream_answer` the final answer is also
    /// written to stdout as it arrives.
    pub fn start(stream_answer: bool) -> Live {
        let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}  {elapsed}") {
            spinner.set_style(style);
        }
        spinner.set_message("waiting for the agent");
        spinner.enable_steady_tick(Duration::from_millis(100));
        Live {
            spinner,
            stream_answer,
            printed: String::new(),
            results: Vec::new(),
        }
    }

    /// Runs `print` (a note on stderr) with the spinner out of the way.
    pub fn suspend(&self, print: impl FnOnce()) {
        self.spinner.suspend(print);
    }

    /// Remembers finished SQL results for the summary.
    pub fn event(&mut self, event: &Event) {
        if let Event::ToolFinished(tool) = event {
            if let Some(sql) = tool.sql.as_ref().filter(|_| tool.error.is_none()) {
                self.results.push(sql.clone());
            }
        }
    }

    /// Updates the spinner from a message, and streams the final answer.
    pub fn line(
        &mut self,
        message: Option<&Message<'_>>,
        transcript: &Transcript,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let Some(message) = message else { return Ok(()) };
        if let Some(call) = message.tool_call.as_ref().filter(|call| call.result.is_none()) {
            let name = call.name.as_deref().unwrap_or("a tool");
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
            self.spinner.set_message(activity);
        } else if message.thinking {
            self.spinner.set_message("thinking");
        } else if message.is_final_node() && self.stream_answer {
            self.stream(transcript, out)?;
        } else if message.is_assistant() && message.content.as_deref().is_some_and(|c| !c.is_empty()) {
            self.spinner.set_message("writing the answer");
        }
        Ok(())
    }

    /// Writes what the final answer gained since the last call.
    fn stream(&mut self, transcript: &Transcript, out: &mut impl Write) -> io::Result<()> {
        let Some((text, AnswerSource::Final)) = transcript.answer() else {
            return Ok(());
        };
        let Some(new) = text.strip_prefix(self.printed.as_str()).filter(|new| !new.is_empty()) else {
            return Ok(());
        };
        self.spinner.finish_and_clear();
        out.write_all(new.as_bytes())?;
        out.flush()?;
        self.printed.push_str(new);
        Ok(())
    }

    /// Clears the spinner (before the final output and any message).
    pub fn stop(&self) {
        self.spinner.finish_and_clear();
    }

    /// Finishes the streamed answer: the rest of it and a newline. Returns
    /// false when nothing was streamed, so the caller prints it as usual.
    pub fn finish_answer(&mut self, transcript: &Transcript, out: &mut impl Write) -> io::Result<bool> {
        self.stop();
        if self.printed.is_empty() {
            return Ok(false);
        }
        let answer = transcript.answer().map_or("", |(text, _)| text);
        match answer.strip_prefix(self.printed.as_str()) {
            Some(rest) => out.write_all(rest.trim_end_matches('\n').as_bytes())?,
            None => write!(out, "\n{}", answer.trim_end_matches('\n'))?,
        }
        out.write_all(b"\n")?;
        Ok(true)
    }

    /// A short summary of the SQL results on stderr: title, rows of total,
    /// and how to get CSV or every row.
    pub fn summary(&self, notes: &Notes) {
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
                Some(total) if total > sql.rows as u64 => format!("{} of {total} rows", sql.rows),
                Some(total) => format!("{total} rows"),
                None => format!("{} rows", sql.rows),
            };
            lines.push(format!("  {}. {title}: {rows}", sql.number));
        }
        let truncated = self
            .results
            .iter()
            .any(|sql| sql.total_rows.is_some_and(|t| t > sql.rows as u64));
        lines.push(format!(
            "  -o csv for CSV (--query N picks a result){}",
            if truncated { ", --all-rows for every row" } else { "" }
        ));
        notes.info(&lines.join("\n"));
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.stop();
    }
}
