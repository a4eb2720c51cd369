//! `-o html`: one self-contained page to read offline: the question, the
//! answer (its Markdown rendered, any HTML in it shown as text), the chart
//! drawn inline as SVG, and each SQL result's title, SQL and first rows.
//! The page is inert and offline: styles are inline; there is no script,
//! no link but `http`, `https` and `mailto` (others are shown as text), no
//! image (a Markdown image is shown as its alt text and URL), and a
//! Content-Security-Policy forbids scripts and every load besides.

use std::fmt::Write as _;

use anyhow::Result;
use pulldown_cmark::{CowStr, Event as Markdown, Options, Parser, Tag, TagEnd};
use serde_json::{Map, Value};

use super::vega::{complete_picked, configured_chart};
use super::Truncation;
use crate::output::{Notes, Output};
use crate::results::{Pick, Picker, SqlResult};
use crate::stream::message::Message;
use crate::stream::transcript::{Event, Transcript};
use crate::stream::turn::Observer;
use crate::text::escape_markup;

/// Rows shown of each SQL result; the page says how many more exist.
const ROWS_SHOWN: usize = 100;

/// The page's style: readable on screen and on paper, no external font.
const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1f2328;line-height:1.5}\
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}\
pre{background:#f6f8fa;padding:.75rem;overflow-x:auto;border-radius:6px}\
table{border-collapse:collapse;font-size:.9rem}th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left}\
th{background:#f6f8fa}td.number{text-align:right;font-variant-numeric:tabular-nums}\
.note{color:#59636e;font-size:.9rem}.chart svg{max-width:100%;height:auto}";

/// The `html` output.
pub struct Html {
    pick: Pick,
    picker: Picker,
    notes: Notes,
    config: Option<Map<String, Value>>,
    question: Option<String>,
    results: Vec<SqlResult>,
}

impl Html {
    /// A page whose chart is that of the result `pick` selects, styled with
    /// `config` (`--vega-config`); warnings go through `notes`.
    pub fn new(pick: Pick, notes: &Notes, config: Option<Map<String, Value>>) -> Self {
        Html {
            pick,
            picker: Picker::new(pick),
            notes: notes.clone(),
            config,
            question: None,
            results: Vec::new(),
        }
    }
}

impl Html {
    /// Keeps the question the user's message asks.
    pub fn line(&mut self, message: Option<&Message<'_>>) {
        if let Some(question) = message.filter(|m| m.is_user()).and_then(Message::content) {
            self.question = Some(question.to_string());
        }
    }

    /// Keeps the results, and the one picked.
    pub fn event(&mut self, event: &Event) {
        self.picker.event(event);
        match event {
            Event::ToolFinished(finished) => {
                if let Some((_, sql)) = &finished.sql {
                    self.results.push(sql.clone());
                }
            }
            Event::TurnStarts => {
                self.question = None;
                self.results.clear();
            }
            Event::ChatId(_) => {}
        }
    }

    /// Writes the page (with `--all-rows`, the chart's result complete);
    /// a truncated chart result is [`Kind::Partial`](crate::error::Kind::Partial)
    /// unless accepted, as in `vega`: then no page is written.
    pub fn end(&mut self, transcript: &Transcript, truncation: &Truncation, out: &mut dyn Output) -> Result<()> {
        // A page needs no SQL result; a picked one is completed and judged
        // as for `vega`.
        if self.picker.picked().is_ok() {
            complete_picked(&mut self.picker, &self.pick.describe(), transcript, truncation)?;
        }
        let page = self.page(transcript);
        out.write_all(page.as_bytes())?;
        Ok(())
    }
}

impl Html {
    /// The whole page.
    fn page(&self, transcript: &Transcript) -> String {
        let title = self.question.as_deref().unwrap_or("analyst");
        let mut page = String::new();
        if transcript.is_thread_state() {
            for message in transcript.thread() {
                let _ = write!(
                    page,
                    "<h2>{}</h2>\n{}",
                    escape_markup(message.role),
                    markdown(&message.content)
                );
            }
        } else {
            if let Some(question) = &self.question {
                let _ = writeln!(page, "<h1>{}</h1>", escape_markup(question));
            }
            if let Some((answer, _)) = transcript.answer() {
                let _ = write!(page, "<section class=\"answer\">\n{}</section>\n", markdown(&answer));
            }
            page.push_str(&self.chart());
            for (number, result) in self.results.iter().enumerate() {
                page.push_str(&self.result(number + 1, result));
            }
        }
        inert_page(title, &page)
    }

    /// The chart of the picked result, drawn inline; a note when it
    /// cannot be (the page is still worth having).
    fn chart(&self) -> String {
        let Ok(result) = self.picker.picked() else {
            return String::new();
        };
        if result.vega_spec.is_none() {
            return String::new();
        }
        let drawn = configured_chart(result, &self.pick.describe(), self.config.as_ref(), &self.notes)
            .and_then(|spec| spec.svg(&self.notes));
        match drawn {
            Ok(svg) => format!("<section class=\"chart\">\n{svg}\n</section>\n"),
            Err(err) => {
                let why = format!("{err:#}");
                self.notes.warn(&why);
                format!("<p class=\"note\">{}</p>\n", escape_markup(&why))
            }
        }
    }

    /// One SQL result: its title, SQL, and a table of its first rows.
    fn result(&self, number: usize, result: &SqlResult) -> String {
        let title = result.title.clone().unwrap_or_else(|| format!("SQL result {number}"));
        let mut html = format!("<h2>{}</h2>\n", escape_markup(&title));
        if let Some(sql) = &result.sql {
            let _ = writeln!(html, "<pre><code>{}</code></pre>", escape_markup(sql));
        }
        if let Some(error) = &result.error {
            let _ = writeln!(html, "<p class=\"note\">The query failed: {}</p>", escape_markup(error));
            return html;
        }
        html.push_str("<table>\n<thead><tr>");
        for column in result.columns() {
            let _ = write!(html, "<th>{}</th>", escape_markup(&column.name));
        }
        html.push_str("</tr></thead>\n<tbody>\n");
        for row in result.row_values().take(ROWS_SHOWN) {
            html.push_str("<tr>");
            for (column, value) in result.columns().iter().zip(&row) {
                let text = match value {
                    Value::String(text) => text.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                let class = if column.is_numeric() { " class=\"number\"" } else { "" };
                let _ = write!(html, "<td{class}>{}</td>", escape_markup(&text));
            }
            html.push_str("</tr>\n");
        }
        html.push_str("</tbody>\n</table>\n");
        let shown = result.rows().len().min(ROWS_SHOWN);
        let total = result
            .total_rows
            .unwrap_or(result.rows().len() as u64)
            .max(result.rows().len() as u64);
        if total > shown as u64 {
            let _ = writeln!(
                html,
                "<p class=\"note\">{shown} of {total} rows shown; -o csv --query {number} (with --all-rows) gives every row.</p>"
            );
        }
        html
    }
}

/// What the page may do: show its own inline styles, and nothing else (no
/// script, no load from anywhere).
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

/// A whole page of `body` (HTML) titled `title`: inline styles, and a
/// Content-Security-Policy that forbids scripts and every load.
pub fn inert_page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\"/>\n<meta name=\"generator\" content=\"analyst {}\"/>\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        escape_markup(title)
    )
}

/// Markdown as HTML, inert: HTML written in the Markdown is shown as text,
/// never run or rendered; a link whose scheme is not `http`, `https` or
/// `mailto` is only its text; an image is its alt text and its URL, as
/// words.
pub fn markdown(text: &str) -> String {
    let mut events = Vec::new();
    let mut image: Option<CowStr<'_>> = None;
    let mut inert_link = false;
    for event in Parser::new_ext(text, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
        match event {
            Markdown::Html(html) | Markdown::InlineHtml(html) => events.push(Markdown::Text(html)),
            Markdown::Start(Tag::Image { dest_url, .. }) => image = Some(dest_url),
            Markdown::End(TagEnd::Image) => {
                if let Some(url) = image.take() {
                    events.push(Markdown::Text(format!(" ({url})").into()));
                }
            }
            Markdown::Start(Tag::Link { dest_url, .. }) if !is_safe_link(&dest_url) => inert_link = true,
            Markdown::End(TagEnd::Link) if inert_link => inert_link = false,
            other => events.push(other),
        }
    }
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    html
}

/// True for a link a page may hold: `http`, `https` or `mailto`, nothing
/// that runs (`javascript:`), embeds (`data:`) or opens a local file.
fn is_safe_link(url: &str) -> bool {
    let url = url.to_ascii_lowercase();
    ["http://", "https://", "mailto:"]
        .iter()
        .any(|scheme| url.starts_with(scheme))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_that_run_or_load_are_text_and_images_are_words() {
        let html = markdown("[a](javascript:alert(1)) [b](data:text/html,x) [c](vbscript:x) [d](JaVa\tScRiPt:x) [e](https://cube.dev) [f](mailto:a@b.c) ![chart](http://127.0.0.1/x.png)");
        for inert in ["javascript", "data:", "vbscript", "<img"] {
            assert!(!html.to_lowercase().contains(inert), "{inert}: {html}");
        }
        assert!(html.contains("<a href=\"https://cube.dev\">e</a>"), "{html}");
        assert!(html.contains("<a href=\"mailto:a@b.c\">f</a>"), "{html}");
        assert!(html.contains("chart (http://127.0.0.1/x.png)"), "{html}");
    }

    #[test]
    fn markdown_is_rendered_and_html_in_it_is_text() {
        let html = markdown("**Revenue** rose <script>alert(1)</script> in <b>Q4</b>");
        assert!(html.contains("<strong>Revenue</strong>"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        assert!(!html.contains("<script>") && !html.contains("<b>"), "{html}");
    }
}
