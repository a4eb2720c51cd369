//! The answer's Markdown rendered for a terminal: headings, emphasis,
//! lists, block quotes, code and tables (aligned with `comfy-table`), with
//! styles only when colour is on. Text from the service is made visible
//! first, so only our own escape sequences reach the terminal. Rendered a
//! block at a time ([`complete_blocks`]), so an answer streams as it comes.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::text::visible;

/// True when the Markdown `text` holds a table: an agent that put its
/// results inline (Cube's `chassis` runtime) rather than as a SQL tool
/// result.
pub fn has_table(text: &str) -> bool {
    Parser::new_ext(text, Options::ENABLE_TABLES).any(|event| matches!(event, Event::Start(Tag::Table(_))))
}

/// A table of an answer's Markdown: its header cells and its rows, each
/// cell's text without its formatting (`**12**` is `12`).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AnswerTable {
    /// The header row's cells.
    pub header: Vec<String>,
    /// The body's rows.
    pub rows: Vec<Vec<String>>,
}

/// The tables of the Markdown `text`, in order: an agent that put its
/// results inline (Cube's `chassis` runtime) gave its rows here.
pub fn tables(text: &str) -> Vec<AnswerTable> {
    let mut tables = Vec::new();
    let mut table: Option<AnswerTable> = None;
    let mut row: Vec<String> = Vec::new();
    let mut cell: Option<String> = None;
    for event in Parser::new_ext(text, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Table(_)) => table = Some(AnswerTable::default()),
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::Text(text) | Event::Code(text) => {
                if let Some(cell) = &mut cell {
                    cell.push_str(&text);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(cell) = &mut cell {
                    cell.push(' ');
                }
            }
            Event::End(TagEnd::TableCell) => row.extend(cell.take().map(|text| text.trim().to_string())),
            Event::End(TagEnd::TableHead) => {
                if let Some(table) = &mut table {
                    table.header = std::mem::take(&mut row);
                }
            }
            Event::End(TagEnd::TableRow) => {
                if let Some(table) = &mut table {
                    table.rows.push(std::mem::take(&mut row));
                }
            }
            Event::End(TagEnd::Table) => tables.extend(table.take()),
            _ => {}
        }
    }
    tables
}

/// The styles used, as SGR sequences.
const BOLD: &str = "\x1b[1m";
const ITALIC: &str = "\x1b[3m";
const UNDERLINE: &str = "\x1b[4m";
const DIM: &str = "\x1b[2m";
const CODE: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// How many levels of quotes, and of lists, are indented: deeper ones are
/// shown at this depth, so an answer's layout costs at most a few bytes a
/// line however it nests.
const DEEPEST_SHOWN: usize = 8;

/// How long a prefix of `text` ends at a block boundary: a blank line
/// outside a fenced code block. What comes after may still change.
pub fn complete_blocks(text: &str) -> usize {
    Blocks::from(0).complete(text)
}

/// Where the blocks of a growing text end, each byte read once however
/// many times the text grows: what a terminal uses while the answer
/// arrives, so showing it stays linear in its length.
#[derive(Debug, Default)]
pub struct Blocks {
    /// Where the line being read starts.
    line_start: usize,
    /// How far the text is known to hold no newline after `line_start`.
    searched: usize,
    /// Inside a fenced code block at `line_start`.
    fenced: bool,
    /// The end of the last complete block found.
    end: usize,
}

impl Blocks {
    /// A scanner of a text whose first `start` bytes end at a block
    /// boundary (what was already shown).
    pub fn from(start: usize) -> Self {
        Blocks {
            line_start: start,
            searched: start,
            fenced: false,
            end: start,
        }
    }

    /// The end of the complete blocks of `text`, which must extend the text
    /// given before (the same bytes, more after them).
    pub fn complete(&mut self, text: &str) -> usize {
        while let Some(newline) = memchr::memchr(b'\n', &text.as_bytes()[self.searched..]) {
            let end = self.searched + newline + 1;
            let trimmed = text[self.line_start..end].trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                self.fenced = !self.fenced;
            } else if !self.fenced && trimmed.trim().is_empty() {
                self.end = end;
            }
            self.line_start = end;
            self.searched = end;
        }
        self.searched = text.len();
        self.end
    }
}

/// A renderer's state across the blocks of one answer.
#[derive(Debug, Default)]
pub struct Markdown {
    /// Styles (bold, colours) on; else plain text with the same layout.
    styled: bool,
}

/// A table being collected: its alignments, header and rows.
#[derive(Default)]
struct TableBuilder {
    alignments: Vec<Alignment>,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    in_header: bool,
    cell: String,
}

impl Markdown {
    /// A renderer, with styles when `styled`.
    pub fn new(styled: bool) -> Self {
        Markdown { styled }
    }

    fn style(&self, style: &'static str) -> &'static str {
        if self.styled {
            style
        } else {
            ""
        }
    }

    /// `markdown` as text for a terminal, each block followed by a blank
    /// line, ending in one newline.
    pub fn render(&self, markdown: &str) -> String {
        let mut out = String::new();
        let mut lists: Vec<Option<u64>> = Vec::new();
        let mut quote = 0;
        let mut table: Option<TableBuilder> = None;
        let mut in_code_block = false;
        let mut link: Vec<String> = Vec::new();
        let prefix = |quote: usize, lists: usize| {
            format!(
                "{}{}",
                "│ ".repeat(quote.min(DEEPEST_SHOWN)),
                "  ".repeat(lists.saturating_sub(1).min(DEEPEST_SHOWN))
            )
        };
        let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
        for event in Parser::new_ext(markdown, options) {
            if let Some(builder) = table.as_mut() {
                match event {
                    Event::End(TagEnd::Table) => {
                        out.push_str(&self.table(table.take().unwrap_or_default()));
                        out.push('\n');
                    }
                    Event::Start(Tag::TableHead) => builder.in_header = true,
                    Event::End(TagEnd::TableHead) => builder.in_header = false,
                    Event::Start(Tag::TableRow) => builder.rows.push(Vec::new()),
                    Event::End(TagEnd::TableCell) => {
                        let cell = std::mem::take(&mut builder.cell);
                        match (builder.in_header, builder.rows.last_mut()) {
                            (true, _) | (false, None) => builder.header.push(cell),
                            (false, Some(row)) => row.push(cell),
                        }
                    }
                    Event::Text(text) | Event::Code(text) => builder.cell.push_str(&visible(&text)),
                    Event::SoftBreak | Event::HardBreak => builder.cell.push(' '),
                    _ => {}
                }
                continue;
            }
            match event {
                Event::Start(Tag::Heading { level, .. }) => {
                    out.push_str(&prefix(quote, lists.len()));
                    out.push_str(self.style(BOLD));
                    if level == HeadingLevel::H1 {
                        out.push_str(self.style(UNDERLINE));
                    }
                }
                Event::End(TagEnd::Heading(_)) => {
                    out.push_str(self.style(RESET));
                    out.push_str("\n\n");
                }
                Event::Start(Tag::Paragraph) if lists.is_empty() => out.push_str(&prefix(quote, 0)),
                Event::End(TagEnd::Paragraph) => {
                    out.push('\n');
                    if lists.is_empty() {
                        out.push('\n');
                    }
                }
                Event::Start(Tag::BlockQuote(_)) => quote += 1,
                Event::End(TagEnd::BlockQuote(_)) => quote -= 1,
                Event::Start(Tag::List(start)) => lists.push(start),
                Event::End(TagEnd::List(_)) => {
                    lists.pop();
                    if lists.is_empty() {
                        out.push('\n');
                    }
                }
                Event::Start(Tag::Item) => {
                    if !out.is_empty() && !out.ends_with('\n') {
                        out.push('\n');
                    }
                    out.push_str(&prefix(quote, lists.len()));
                    let marker = match lists.last_mut() {
                        Some(Some(number)) => {
                            *number += 1;
                            format!("{}. ", *number - 1)
                        }
                        _ => "• ".to_string(),
                    };
                    out.push_str(&marker);
                }
                Event::End(TagEnd::Item) if !out.ends_with('\n') => out.push('\n'),
                Event::Start(Tag::CodeBlock(kind)) => {
                    in_code_block = true;
                    if let CodeBlockKind::Fenced(language) = kind {
                        if !language.is_empty() {
                            out.push_str(&format!(
                                "{}{}{}\n",
                                self.style(DIM),
                                visible(&language),
                                self.style(RESET)
                            ));
                        }
                    }
                }
                Event::End(TagEnd::CodeBlock) => {
                    in_code_block = false;
                    out.push('\n');
                }
                Event::Start(Tag::Emphasis) => out.push_str(self.style(ITALIC)),
                Event::Start(Tag::Strong) => out.push_str(self.style(BOLD)),
                Event::Start(Tag::Strikethrough) => out.push_str(self.style(DIM)),
                Event::End(TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough) => {
                    out.push_str(self.style(RESET));
                }
                Event::Start(Tag::Link { dest_url, .. }) => {
                    out.push_str(self.style(UNDERLINE));
                    link.push(dest_url.to_string());
                }
                Event::End(TagEnd::Link) => {
                    out.push_str(self.style(RESET));
                    if let Some(url) = link.pop() {
                        out.push_str(&format!(" ({})", visible(&url)));
                    }
                }
                Event::Start(Tag::Table(alignments)) => {
                    table = Some(TableBuilder {
                        alignments,
                        ..TableBuilder::default()
                    });
                }
                Event::Text(text) if in_code_block => {
                    for line in text.lines() {
                        out.push_str(&format!(
                            "{}    {}{}{}\n",
                            prefix(quote, lists.len()),
                            self.style(CODE),
                            visible(line),
                            self.style(RESET)
                        ));
                    }
                }
                Event::Text(text) => out.push_str(&visible(&text)),
                Event::Code(code) => {
                    out.push_str(&format!("{}{}{}", self.style(CODE), visible(&code), self.style(RESET)));
                }
                Event::SoftBreak => out.push(' '),
                Event::HardBreak => {
                    out.push('\n');
                    out.push_str(&prefix(quote, lists.len()));
                }
                Event::Rule => out.push_str(&format!("{}\n\n", "─".repeat(40))),
                Event::Html(html) | Event::InlineHtml(html) => out.push_str(&visible(&html)),
                _ => {}
            }
        }
        let trimmed = out.trim_end_matches('\n').len();
        out.truncate(trimmed);
        out.push('\n');
        out
    }

    /// A table, aligned as its Markdown says.
    fn table(&self, builder: TableBuilder) -> String {
        use comfy_table::{CellAlignment, Table};
        let mut table = Table::new();
        table.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
        table.set_header(builder.header);
        for row in builder.rows {
            table.add_row(row);
        }
        for (index, alignment) in builder.alignments.iter().enumerate() {
            let aligned = match alignment {
                Alignment::Right => CellAlignment::Right,
                Alignment::Center => CellAlignment::Center,
                Alignment::Left | Alignment::None => continue,
            };
            if let Some(column) = table.column_mut(index) {
                column.set_cell_alignment(aligned);
            }
        }
        format!("{table}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_end_at_blank_lines_outside_code() {
        assert_eq!(complete_blocks("# Title\n\nSome text"), 9);
        assert_eq!(complete_blocks("```\na\n\nb\n"), 0, "inside a fence");
        assert_eq!(complete_blocks("```\na\n\nb\n```\n\nc"), 14);
        assert_eq!(complete_blocks("no newline yet"), 0);
    }

    #[test]
    fn markdown_becomes_terminal_text() {
        let plain = Markdown::new(false);
        let text = "# Revenue\n\n**Up** 5% in *May*.\n\n- one\n- two\n\n1. first\n2. second\n\n| region | revenue |\n|---|--:|\n| EMEA | 10 |\n| AMER | 200 |\n\n`code` and [docs](https://x.example)\n";
        let rendered = plain.render(text);
        assert!(
            rendered.starts_with("Revenue\n\nUp 5% in May.\n\n• one\n• two\n\n1. first\n2. second\n"),
            "{rendered}"
        );
        assert!(rendered.contains("│ EMEA   ┆      10 │"), "{rendered}");
        assert!(rendered.ends_with("code and docs (https://x.example)\n"), "{rendered}");
        let styled = Markdown::new(true).render("**Up** `x`");
        assert_eq!(styled, "\x1b[1mUp\x1b[0m \x1b[36mx\x1b[0m\n");
        // The service's escape sequences are shown, not obeyed.
        assert_eq!(plain.render("a\x1b[2Jb"), "a\\x1b[2Jb\n");
    }
}
