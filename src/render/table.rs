//! Rows as CSV, TSV, a JSON array or NDJSON, written as they arrive, or as
//! an aligned table for a person (which needs them all first): one writer
//! for `ask -o csv|table` and for `rows`, whatever the number of rows.

use std::io::Write;

use anyhow::Result;
use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::output::Tone;
use crate::results::{Column, RowSink, SqlResult};
use crate::text::{fit, one_line, pad, visible, width as text_width, wrap, Breaks};

/// The formats rows can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFormat {
    /// RFC 4180 CSV (CRLF line ends) with a header row; values as sent.
    Csv,
    /// Tab-separated, header row; tab, newline, CR and backslash escaped as `\t`, `\n`, `\r`, `\\`.
    Tsv,
    /// One JSON array of objects keyed by column, values typed by column.
    Json,
    /// One JSON object per line, values typed by column.
    Ndjson,
    /// An aligned table for a person, numbers right-aligned; with a width
    /// (a terminal's), cells are cut to fit with `…`, one line each.
    Aligned(Option<u16>),
}

enum Sink<W: Write> {
    Csv(Box<csv::Writer<W>>),
    Plain(W),
    /// Every row's cells as text, kept to align them when the rows end.
    Aligned {
        out: W,
        rows: Vec<Vec<String>>,
    },
}

/// Writes rows in one [`TableFormat`] as they arrive; [`TableWriter::finish`]
/// closes the document (the JSON array) and flushes.
pub struct TableWriter<W: Write> {
    format: TableFormat,
    sink: Sink<W>,
    columns: Vec<Column>,
    /// Each column's name as a JSON object key, `"name":`, serialised once.
    keys: Vec<Vec<u8>>,
    rows_written: u64,
}

impl<W: Write> TableWriter<W> {
    /// A writer of `format` on `out`.
    pub fn new(format: TableFormat, out: W) -> Self {
        let sink = match format {
            TableFormat::Csv => Sink::Csv(Box::new(
                csv::WriterBuilder::new()
                    .terminator(csv::Terminator::CRLF)
                    .from_writer(out),
            )),
            TableFormat::Aligned(_) => Sink::Aligned { out, rows: Vec::new() },
            _ => Sink::Plain(out),
        };
        TableWriter {
            format,
            sink,
            columns: Vec::new(),
            keys: Vec::new(),
            rows_written: 0,
        }
    }

    /// Ends the document and flushes; returns the underlying writer.
    pub fn finish(mut self) -> Result<W> {
        if let Sink::Plain(out) = &mut self.sink {
            if self.format == TableFormat::Json {
                out.write_all(if self.rows_written == 0 { b"[]\n" } else { b"\n]\n" })?;
            }
        }
        let mut out = match self.sink {
            Sink::Csv(writer) => writer.into_inner().map_err(|err| err.into_error())?,
            Sink::Plain(out) => out,
            Sink::Aligned { mut out, rows } => {
                let width = match self.format {
                    TableFormat::Aligned(width) => width,
                    _ => None,
                };
                writeln!(out, "{}", aligned(&self.columns, rows, width))?;
                out
            }
        };
        out.flush()?;
        Ok(out)
    }

    /// Writes one row, values in column order.
    pub fn row(&mut self, row: &[Value]) -> Result<()> {
        self.write_row(row)
    }

    /// Writes the rows of a SQL result of the stream, one at a time.
    pub fn rows_of(&mut self, result: &SqlResult) -> Result<()> {
        result.raw_rows().try_for_each(|row| self.write_row(&row))
    }

    fn write_row<C: Cell>(&mut self, row: &[C]) -> Result<()> {
        let width = self.columns.len().max(row.len());
        match &mut self.sink {
            Sink::Aligned { rows, .. } => {
                rows.push(
                    (0..width)
                        .map(|i| {
                            row.get(i)
                                .map_or(String::new(), |cell| one_line(&cell.text()).into_owned())
                        })
                        .collect(),
                );
            }
            Sink::Csv(writer) => {
                for i in 0..width {
                    writer.write_field(row.get(i).map_or(Cow::Borrowed(""), Cell::text).as_bytes())?;
                }
                writer.write_record(None::<&[u8]>)?;
            }
            Sink::Plain(out) if self.format == TableFormat::Tsv => {
                for i in 0..width {
                    if i > 0 {
                        out.write_all(b"\t")?;
                    }
                    if let Some(cell) = row.get(i) {
                        write_tsv_field(out, &cell.text())?;
                    }
                }
                out.write_all(b"\n")?;
            }
            Sink::Plain(out) => {
                if self.format == TableFormat::Json {
                    out.write_all(if self.rows_written == 0 { b"[\n" } else { b",\n" })?;
                }
                out.write_all(b"{")?;
                for (i, ((column, key), cell)) in self.columns.iter().zip(&self.keys).zip(row).enumerate() {
                    if i > 0 {
                        out.write_all(b",")?;
                    }
                    out.write_all(key)?;
                    cell.write_json(column, out)?;
                }
                out.write_all(b"}")?;
                if self.format == TableFormat::Ndjson {
                    out.write_all(b"\n")?;
                }
            }
        }
        self.rows_written += 1;
        Ok(())
    }
}

/// A value of a row, as the writers need it: its text for CSV and TSV
/// (a string's contents, null as nothing, anything else as JSON), and its
/// JSON typed by the column.
pub trait Cell {
    /// The value as text.
    fn text(&self) -> Cow<'_, str>;
    /// The value as JSON, numbers and booleans typed by `column`.
    fn write_json(&self, column: &Column, out: &mut dyn Write) -> Result<()>;
}

impl Cell for Value {
    fn text(&self) -> Cow<'_, str> {
        match self {
            Value::String(text) => Cow::Borrowed(text),
            Value::Null => Cow::Borrowed(""),
            other => Cow::Owned(other.to_string()),
        }
    }

    fn write_json(&self, column: &Column, out: &mut dyn Write) -> Result<()> {
        serde_json::to_writer(out, &column.typed(self))?;
        Ok(())
    }
}

/// A value borrowed from the data query API's answer line: no allocation
/// unless the text has escapes or the column needs typing.
impl Cell for &RawValue {
    fn text(&self) -> Cow<'_, str> {
        let raw = self.get();
        match raw.as_bytes().first() {
            Some(b'"') => serde_json::from_str::<&str>(raw)
                .map(Cow::Borrowed)
                .or_else(|_| serde_json::from_str::<String>(raw).map(Cow::Owned))
                .unwrap_or(Cow::Borrowed(raw)),
            _ if raw == "null" => Cow::Borrowed(""),
            _ => Cow::Borrowed(raw),
        }
    }

    fn write_json(&self, column: &Column, out: &mut dyn Write) -> Result<()> {
        let raw = self.get();
        if raw.starts_with('"') && (column.is_numeric() || column.is_boolean()) {
            let value: Value = serde_json::from_str(raw)?;
            serde_json::to_writer(out, &column.typed(&value))?;
        } else {
            out.write_all(raw.as_bytes())?;
        }
        Ok(())
    }
}

fn write_tsv_field(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    if !text.contains(['\t', '\n', '\r', '\\']) {
        return out.write_all(text.as_bytes());
    }
    for c in text.chars() {
        match c {
            '\t' => out.write_all(b"\\t")?,
            '\n' => out.write_all(b"\\n")?,
            '\r' => out.write_all(b"\\r")?,
            '\\' => out.write_all(b"\\\\")?,
            other => write!(out, "{other}")?,
        }
    }
    Ok(())
}

impl<W: Write> RowSink for TableWriter<W> {
    fn columns(&mut self, columns: &[Column]) -> Result<()> {
        self.columns = columns.to_vec();
        self.keys = columns
            .iter()
            .map(|c| {
                let mut key = serde_json::to_vec(&c.name).unwrap_or_default();
                key.push(b':');
                key
            })
            .collect();
        match &mut self.sink {
            Sink::Csv(writer) => writer.write_record(columns.iter().map(|c| c.name.as_str()))?,
            Sink::Plain(out) if self.format == TableFormat::Tsv => {
                let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
                for (i, name) in names.iter().enumerate() {
                    if i > 0 {
                        out.write_all(b"\t")?;
                    }
                    write_tsv_field(out, name)?;
                }
                out.write_all(b"\n")?;
            }
            Sink::Plain(_) | Sink::Aligned { .. } => {}
        }
        Ok(())
    }

    fn rows(&mut self, rows: &[Vec<&RawValue>]) -> Result<()> {
        rows.iter().try_for_each(|row| self.write_row(row))
    }
}

/// The rows as a table: a header of the column names, numeric columns
/// right-aligned; with a `width`, fitted to it, each cell on one line and
/// cut with `…`.
fn aligned(columns: &[Column], rows: Vec<Vec<String>>, width: Option<u16>) -> comfy_table::Table {
    use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Row, Table, Width};
    let mut table = Table::new();
    table.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    table.set_header(columns.iter().map(|column| one_line(&column.name)));
    for cells in rows {
        let mut row = Row::from(cells);
        if width.is_some() {
            row.max_height(1);
        }
        table.add_row(row);
    }
    if let Some(width) = width {
        table.set_width(width).set_truncation_indicator("…");
        match name_widths(columns, table.column_max_content_widths().as_slice(), width) {
            // Each header wrapped inside its column at `_`, `.` and spaces.
            Some(widths) => {
                let headers = columns
                    .iter()
                    .zip(&widths)
                    .map(|(column, &width)| wrap(&one_line(&column.name), width, Breaks::SpacesAndNames, 0).join("\n"));
                table.set_header(headers);
                table.set_constraints(widths.iter().map(|&width| {
                    let padded = u16::try_from(width + 2).unwrap_or(u16::MAX);
                    ColumnConstraint::Absolute(Width::Fixed(padded))
                }));
            }
            None => {
                table.set_content_arrangement(ContentArrangement::Dynamic);
            }
        }
    }
    for (index, column) in columns.iter().enumerate() {
        if column.is_numeric() {
            if let Some(shown) = table.column_mut(index) {
                shown.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    table
}

/// The widths of `columns` (their cells at most `widest` wide) within
/// `width`: the widest narrowed first, none below the longest word of its
/// name (split at `_`, `.` and spaces) or three columns for its cells,
/// which are cut with `…`; `None` when even that does not fit.
fn name_widths(columns: &[Column], widest: &[u16], width: u16) -> Option<Vec<usize>> {
    let mut widths: Vec<usize> = widest.iter().map(|&widest| usize::from(widest)).collect();
    let least: Vec<usize> = columns
        .iter()
        .map(|column| {
            wrap(&one_line(&column.name), 1, Breaks::SpacesAndNames, 0)
                .iter()
                .map(|word| text_width(word.trim_end()))
                .max()
                .unwrap_or(0)
                .max(3)
        })
        .collect();
    for (width, least) in widths.iter_mut().zip(&least) {
        *width = (*width).max(*least);
    }
    // Each column has a bar and a space either side of its text.
    let room = usize::from(width).saturating_sub(3 * columns.len() + 1);
    while widths.iter().sum::<usize>() > room {
        let widest = (0..widths.len())
            .filter(|&column| widths[column] > least[column])
            .max_by_key(|&column| widths[column])?;
        widths[widest] -= 1;
    }
    Some(widths)
}

/// A boxed table for a person whose every cell must be read whole (the
/// findings of `doctor`, the settings of `config list`): cells made
/// visible; with a `width` (a terminal's), long cells wrap onto more lines
/// so that the table fits it, at spaces and path separators only: a
/// variable name, a word or a path segment is never split. Where even
/// that cannot fit, each row is a block of `HEADER: cell` lines instead.
pub fn wrapped(headers: &[&str], rows: &[Vec<String>], width: Option<u16>) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| visible(cell).into_owned()).collect())
        .collect();
    let widths = match width.map(usize::from) {
        Some(width) => match column_widths(headers, &rows, width) {
            Some(widths) => Some(widths),
            None => return stacked(headers, &rows, width),
        },
        None => None,
    };
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    table.set_header(headers.iter().copied());
    for row in rows {
        table.add_row(row.iter().enumerate().map(|(column, cell)| match &widths {
            Some(widths) => wrap(cell, widths[column], Breaks::SpacesAndPaths, 0).join("\n"),
            None => cell.clone(),
        }));
    }
    format!("{table}\n")
}

/// Each row as a block of `HEADER: cell` lines wrapped to `width` at
/// spaces and path separators, a blank line between blocks: a table for a
/// terminal too narrow for columns.
fn stacked(headers: &[&str], rows: &[Vec<String>], width: usize) -> String {
    let blocks: Vec<String> = rows
        .iter()
        .map(|row| {
            headers
                .iter()
                .zip(row)
                .flat_map(|(header, cell)| wrap(&format!("{header}: {cell}"), width, Breaks::SpacesAndPaths, 2))
                .map(|line| line + "\n")
                .collect()
        })
        .collect();
    blocks.join("\n")
}

/// The width of each column of a boxed table `width` columns wide: each
/// as wide as its widest cell when that fits; else the widest columns
/// narrowed, one column at a time, never below their longest word; `None`
/// when even their longest words do not fit.
fn column_widths(headers: &[&str], rows: &[Vec<String>], width: usize) -> Option<Vec<usize>> {
    let cells = |column: usize| {
        rows.iter()
            .filter_map(move |row| row.get(column).map(String::as_str))
            .chain([headers[column]])
    };
    let mut widths: Vec<usize> = (0..headers.len())
        .map(|column| cells(column).map(text_width).max().unwrap_or(0))
        .collect();
    let least: Vec<usize> = (0..headers.len())
        .map(|column| {
            cells(column)
                .flat_map(|cell| wrap(cell, 1, Breaks::SpacesAndPaths, 0))
                .map(|word| text_width(word.trim_end()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    // Each column has a bar and a space either side of its text.
    let room = width.saturating_sub(3 * headers.len() + 1);
    while widths.iter().sum::<usize>() > room {
        let Some(widest) = (0..widths.len())
            .filter(|&column| widths[column] > least[column])
            .max_by_key(|&column| widths[column])
        else {
            break;
        };
        widths[widest] -= 1;
    }
    (widths.iter().sum::<usize>() <= room && room > 0).then_some(widths)
}

/// What colours a body cell of a [`plain`] table: given its column and
/// text, a tone or none.
pub type Painter = dyn Fn(usize, &str) -> Option<Tone>;

/// How a column of a [`plain`] table is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    /// Text read whole (a time, a status): never cut.
    Whole,
    /// Text that may be cut with `…` to make room (a name, a question).
    Cut,
    /// A number: right-aligned, never cut.
    Number,
}

/// The least a [`Shown::Cut`] column is narrowed to (its header, if wider).
const NARROWEST_CUT: usize = 8;
/// The room a [`plain`] table's last column is given before it is cut,
/// when its cells need that much: other [`Shown::Cut`] columns give way.
const LAST_COLUMN_ROOM: usize = 24;

/// A [`plain`] table (unstyled, nothing cut) that fits `width`: while it
/// is wider, the columns `left_out_first` names are left out, in that
/// order. Returns the table and the columns left out (for a note).
pub fn plain_fitted<'h>(
    headers: &[&'h str],
    rows: &[Vec<String>],
    shown: &[Shown],
    width: Option<u16>,
    left_out_first: &[&str],
) -> (String, Vec<&'h str>) {
    let (mut headers, mut rows, mut shown) = (headers.to_vec(), rows.to_vec(), shown.to_vec());
    let fits = |text: &str| width.is_none_or(|width| text.lines().all(|line| text_width(line) <= usize::from(width)));
    let mut text = plain(&headers, &rows, &shown, None, None);
    let mut left_out = Vec::new();
    for name in left_out_first {
        if fits(&text) {
            break;
        }
        let Some(column) = headers.iter().position(|header| header == name) else {
            continue;
        };
        left_out.push(headers.remove(column));
        shown.remove(column);
        for row in &mut rows {
            row.remove(column);
        }
        text = plain(&headers, &rows, &shown, None, None);
    }
    (text, left_out)
}

/// A plain table for a person, without borders: each column as wide as its
/// widest cell (two spaces between, widths in display columns), numbers
/// right-aligned, every cell on one line. Within `width` (a terminal's),
/// the [`Shown::Cut`] columns are narrowed, widest first, to leave the
/// last column room, and every cut cell ends in `…`; the last column is
/// cut to what is left. Styled (`paint` given, on a terminal), the headers
/// are in the terminal's ordinary bold and `paint` may colour a body cell
/// (its padding with it).
pub fn plain(
    headers: &[&str],
    rows: &[Vec<String>],
    shown: &[Shown],
    width: Option<u16>,
    paint: Option<&Painter>,
) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| one_line(cell).into_owned()).collect())
        .collect();
    let how = |column: usize| shown.get(column).copied().unwrap_or(Shown::Whole);
    let widest = |column: usize| {
        rows.iter()
            .map(|row| row.get(column).map_or(0, |cell| text_width(cell)))
            .chain([text_width(headers[column])])
            .max()
            .unwrap_or(0)
    };
    let last = headers.len().saturating_sub(1);
    let mut widths: Vec<usize> = (0..last).map(widest).collect();
    if let Some(width) = width.map(usize::from) {
        let wanted = widest(last).min(LAST_COLUMN_ROOM);
        let used = |widths: &[usize]| widths.iter().map(|width| width + 2).sum::<usize>();
        while used(&widths) + wanted > width {
            let narrowest = |column: usize| text_width(headers[column]).max(NARROWEST_CUT);
            let Some(column) = (0..last)
                .filter(|&column| how(column) == Shown::Cut && widths[column] > narrowest(column))
                .max_by_key(|&column| widths[column])
            else {
                break;
            };
            widths[column] -= 1;
        }
    }
    let used: usize = widths.iter().map(|width| width + 2).sum();
    // The last column's room, its `…` included.
    let room = width.map_or(usize::MAX, |width| (width as usize).saturating_sub(used).max(1));
    let mut text = String::new();
    let mut line = |cells: Vec<&str>, header: bool| {
        let tone = |column: usize, cell: &str| match (paint, header) {
            (Some(_), true) => Some(Tone::Strong),
            (Some(paint), false) => paint(column, cell),
            (None, _) => None,
        };
        for (column, (cell, &width)) in cells.iter().zip(&widths).enumerate() {
            let padded = pad(&fit(cell, width), width, how(column) == Shown::Number) + "  ";
            match tone(column, cell) {
                Some(tone) => text.push_str(&tone.paint(&padded)),
                None => text.push_str(&padded),
            }
        }
        let cell = cells.get(last).copied().unwrap_or("");
        let cut = fit(cell, room);
        match tone(last, cell) {
            Some(tone) if header => text.push_str(&tone.paint(&cut)),
            _ => text.push_str(&cut),
        }
        text.push('\n');
    };
    line(headers.to_vec(), true);
    for row in &rows {
        line(row.iter().map(String::as_str).collect(), false);
    }
    text
}

/// Writes a whole SQL result in `format`.
pub fn write_result(result: &SqlResult, format: TableFormat, out: &mut dyn Write) -> Result<()> {
    let mut writer = TableWriter::new(format, out);
    writer.columns(result.columns())?;
    writer.rows_of(result)?;
    writer.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn render(format: TableFormat, rows: &[Vec<Value>]) -> String {
        let mut writer = TableWriter::new(format, Vec::new());
        writer
            .columns(&[Column::new("a.name", "String"), Column::new("n", "Int64")])
            .unwrap();
        for row in rows {
            writer.write_row(row).unwrap();
        }
        String::from_utf8(writer.finish().unwrap()).unwrap()
    }

    #[test]
    fn every_format_writes_header_and_rows() {
        let rows = vec![vec![json!("x\ty"), json!("12")], vec![json!(null), json!("n/a")]];
        assert_eq!(render(TableFormat::Csv, &rows), "a.name,n\r\nx\ty,12\r\n,n/a\r\n");
        assert_eq!(render(TableFormat::Tsv, &rows), "a.name\tn\nx\\ty\t12\n\tn/a\n");
        assert_eq!(
            render(TableFormat::Ndjson, &rows),
            "{\"a.name\":\"x\\ty\",\"n\":12}\n{\"a.name\":null,\"n\":\"n/a\"}\n"
        );
        let json: Value = serde_json::from_str(&render(TableFormat::Json, &rows)).unwrap();
        assert_eq!(json, json!([{"a.name": "x\ty", "n": 12}, {"a.name": null, "n": "n/a"}]));
    }

    #[test]
    fn an_aligned_cell_never_breaks_its_row() {
        let rows = vec![vec![json!("two\r\nlines\there"), json!("\u{202e}1")]];
        let table = render(TableFormat::Aligned(None), &rows);
        assert_eq!(table.lines().count(), 5, "{table}");
        assert!(table.contains("two\\r\\nlines\\there"), "{table}");
        assert!(table.contains("\\u{202e}1"), "{table}");
    }

    #[test]
    fn an_empty_result_is_still_a_document() {
        assert_eq!(render(TableFormat::Json, &[]), "[]\n");
        assert_eq!(render(TableFormat::Csv, &[]), "a.name,n\r\n");
        assert_eq!(render(TableFormat::Ndjson, &[]), "");
    }
}
