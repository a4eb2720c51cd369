//! `rows -o parquet`: the rows as a Parquet file with typed columns.
//!
//! A column's Parquet type is its service type when every value of it
//! parses as that type, and every value is kept exactly: an integer or
//! decimal type (`Int64`, `Int128`, `Decimal`, `number`, a DECIMAL labelled
//! `Int32`) is INT64 when every value is an integer that fits, else
//! DECIMAL(precision, scale) when every value is a plain decimal of at most
//! 38 digits, never a rounded DOUBLE; `Double`/`Float` → DOUBLE, `Boolean` →
//! BOOLEAN, `Date` → DATE, `Timestamp` → TIMESTAMP in milliseconds; else
//! UTF8 with the values as sent: nothing is lost or guessed. Knowing that
//! needs every value first, so rows are spooled to a private temporary
//! file as they come (memory stays flat), then written in row groups of
//! [`ROW_GROUP`] rows.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, Write};
use std::sync::Arc;

use anyhow::{Context, Result};
use chrono::{NaiveDate, NaiveDateTime};
use parquet::basic::{Compression, DecimalType, LogicalType, Repetition, TimeUnit, Type as PhysicalType};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::{ByteArray, FixedLenByteArray};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use serde_json::value::RawValue;

use crate::results::{Column, RowSink};

/// Rows a row group holds (and the writer keeps in memory at once).
pub const ROW_GROUP: usize = 65_536;

/// What separates the values of a spooled row (ASCII unit separator).
const UNIT: u8 = 0x1f;
/// What ends a spooled row (ASCII record separator).
const RECORD: u8 = 0x1e;

/// What a column's service type asks its values to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wanted {
    /// Integers and decimals, kept exactly.
    Exact,
    /// Floating point.
    Double,
    Boolean,
    Date,
    Timestamp,
    Text,
}

/// What a column's values are written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ColumnKind {
    Int64,
    /// DECIMAL(precision, scale) in 16 bytes.
    Decimal {
        precision: u32,
        scale: u32,
    },
    Double,
    Boolean,
    Date,
    Timestamp,
    Text,
}

/// The most digits a DECIMAL in 16 bytes holds.
const DECIMAL_DIGITS: u32 = 38;

/// The digits of a plain decimal (`-12.50`: no exponent): how many before
/// the point (leading zeros aside) and after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Digits {
    whole: u32,
    scale: u32,
}

impl Digits {
    fn of(text: &str) -> Option<Digits> {
        let (whole, fraction) = unsigned(text).split_once('.').unwrap_or((unsigned(text), ""));
        let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
        if (whole.is_empty() && fraction.is_empty()) || !digits(whole) || !digits(fraction) {
            return None;
        }
        let count = |part: &str| u32::try_from(part.len()).unwrap_or(u32::MAX);
        Some(Digits {
            whole: count(whole.trim_start_matches('0')),
            scale: count(fraction),
        })
    }

    /// Room for both.
    fn widest(self, other: Digits) -> Digits {
        Digits {
            whole: self.whole.max(other.whole),
            scale: self.scale.max(other.scale),
        }
    }
}

/// `text` without its sign.
fn unsigned(text: &str) -> &str {
    text.strip_prefix(['-', '+']).unwrap_or(text)
}

/// A plain decimal as the integer of its digits at `scale` (`1.5` at scale
/// 2 is 150), when it fits.
fn unscaled(text: &str, scale: u32) -> Option<i128> {
    let (whole, fraction) = unsigned(text).split_once('.').unwrap_or((unsigned(text), ""));
    let digits = format!("{whole}{fraction:0<width$}", width = scale as usize);
    let magnitude: i128 = match digits.is_empty() {
        true => 0,
        false => digits.parse().ok()?,
    };
    Some(if text.starts_with('-') { -magnitude } else { magnitude })
}

/// One value as sent, read from its JSON text without building a value:
/// null, a boolean, a number's text, or a string's contents.
enum SpooledCell<'a> {
    Null,
    Bool(bool),
    Number(&'a str),
    Text(Cow<'a, str>),
}

impl<'a> SpooledCell<'a> {
    fn of(raw: &'a str) -> SpooledCell<'a> {
        match raw.as_bytes().first() {
            // Without escapes a string's contents are its text within the quotes.
            Some(b'"') if raw.len() >= 2 && !raw.contains('\\') => {
                SpooledCell::Text(Cow::Borrowed(&raw[1..raw.len() - 1]))
            }
            Some(b'"') => SpooledCell::Text(
                serde_json::from_str::<String>(raw)
                    .map(Cow::Owned)
                    .unwrap_or(Cow::Borrowed(raw)),
            ),
            _ => match raw {
                "null" => SpooledCell::Null,
                "true" => SpooledCell::Bool(true),
                "false" => SpooledCell::Bool(false),
                number => SpooledCell::Number(number),
            },
        }
    }

    /// The text of a non-null value: a string's contents, anything else
    /// as its JSON.
    fn text(&self) -> &str {
        match self {
            SpooledCell::Null => "",
            SpooledCell::Bool(true) => "true",
            SpooledCell::Bool(false) => "false",
            SpooledCell::Number(text) => text,
            SpooledCell::Text(text) => text,
        }
    }
}

/// What a column's values, seen so far, allow: the kind its service type
/// asks for, kept only while every value parses as it.
#[derive(Clone, Copy, Debug)]
struct Seen {
    wanted: Wanted,
    /// Every value is an integer that fits INT64.
    int: bool,
    /// Every value is a plain decimal, needing these digits.
    decimal: Option<Digits>,
    /// Every value parses as the wanted kind (other than `Exact`).
    parses: bool,
}

impl Seen {
    /// The kind `column`'s service type asks for.
    fn of(column: &Column) -> Seen {
        let named = column.column_type.to_ascii_lowercase();
        let wanted = if column.is_boolean() {
            Wanted::Boolean
        } else if named.starts_with("date") && !named.starts_with("datetime") {
            Wanted::Date
        } else if named.starts_with("timestamp") || named.starts_with("datetime") || named == "time" {
            Wanted::Timestamp
        } else if ["double", "float", "real"]
            .iter()
            .any(|prefix| named.starts_with(prefix))
        {
            Wanted::Double
        } else if column.is_numeric() {
            Wanted::Exact
        } else {
            Wanted::Text
        };
        Seen {
            wanted,
            int: true,
            decimal: Some(Digits::default()),
            parses: true,
        }
    }

    /// Narrows what the column allows by one value; only the wanted kind
    /// is tried.
    fn check(&mut self, cell: &SpooledCell<'_>) {
        if matches!(cell, SpooledCell::Null) {
            return;
        }
        let text = cell.text();
        let number = matches!(cell, SpooledCell::Number(_) | SpooledCell::Text(_));
        match self.wanted {
            Wanted::Exact => {
                // An integer is a decimal too: the second look only when needed.
                self.int &= number && text.parse::<i64>().is_ok();
                if !self.int {
                    self.decimal = self
                        .decimal
                        .zip(Digits::of(text).filter(|_| number))
                        .map(|(seen, digits)| seen.widest(digits));
                }
            }
            Wanted::Double => self.parses &= number && text.parse::<f64>().is_ok_and(f64::is_finite),
            Wanted::Boolean => self.parses &= matches!(text, "true" | "false"),
            Wanted::Date => self.parses &= matches!(cell, SpooledCell::Text(_)) && date(text).is_some(),
            Wanted::Timestamp => self.parses &= matches!(cell, SpooledCell::Text(_)) && timestamp(text).is_some(),
            Wanted::Text => {}
        }
    }

    /// The kind the column is written as: the wanted one when every value
    /// parsed as it (integers that do not all fit INT64 are a DECIMAL),
    /// else text.
    fn kind(&self) -> ColumnKind {
        match (self.wanted, self.decimal) {
            (Wanted::Exact, _) if self.int => ColumnKind::Int64,
            (Wanted::Exact, Some(Digits { whole, scale })) if whole + scale <= DECIMAL_DIGITS => ColumnKind::Decimal {
                precision: (whole + scale).max(1),
                scale,
            },
            (Wanted::Double, _) if self.parses => ColumnKind::Double,
            (Wanted::Boolean, _) if self.parses => ColumnKind::Boolean,
            (Wanted::Date, _) if self.parses => ColumnKind::Date,
            (Wanted::Timestamp, _) if self.parses => ColumnKind::Timestamp,
            _ => ColumnKind::Text,
        }
    }
}

fn date(text: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()
}

fn timestamp(text: &str) -> Option<NaiveDateTime> {
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.fZ"]
        .iter()
        .find_map(|format| NaiveDateTime::parse_from_str(text, format).ok())
}

/// Writes rows as Parquet to `out` when they end ([`ParquetWriter::finish`]).
pub struct ParquetWriter<W: Write> {
    out: W,
    columns: Vec<Column>,
    seen: Vec<Seen>,
    spool: BufWriter<File>,
}

impl<W: Write> ParquetWriter<W> {
    /// A writer to `out`, spooling in a private temporary file.
    pub fn new(out: W) -> Result<Self> {
        let spool = tempfile::tempfile().context("cannot create a temporary file for -o parquet")?;
        Ok(ParquetWriter {
            out,
            columns: Vec::new(),
            seen: Vec::new(),
            spool: BufWriter::with_capacity(1 << 20, spool),
        })
    }

    /// Spools one row: each value's JSON text, then [`UNIT`] between
    /// values and [`RECORD`] after the row (bytes no JSON text holds, so
    /// reading it back needs no JSON parser).
    fn spool_row<'a>(&mut self, row: impl Iterator<Item = &'a str>) -> Result<()> {
        for (index, raw) in row.enumerate() {
            if index > 0 {
                self.spool.write_all(&[UNIT])?;
            }
            if let Some(seen) = self.seen.get_mut(index) {
                seen.check(&SpooledCell::of(raw));
            }
            self.spool.write_all(raw.as_bytes())?;
        }
        self.spool.write_all(&[RECORD])?;
        Ok(())
    }

    /// Writes the Parquet file: the schema from the columns and their
    /// values, then the spooled rows a row group at a time. Returns `out`.
    pub fn finish(self) -> Result<W> {
        let ParquetWriter {
            mut out,
            columns,
            seen,
            spool,
        } = self;
        let kinds: Vec<ColumnKind> = seen.iter().map(Seen::kind).collect();
        let mut spool = spool.into_inner().map_err(|err| err.into_error())?;
        spool.rewind()?;
        let mut file = tempfile::tempfile().context("cannot create a temporary file for -o parquet")?;
        {
            let properties = WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .set_dictionary_enabled(false)
                .build();
            let mut writer = SerializedFileWriter::new(&mut file, schema(&columns, &kinds)?, Arc::new(properties))?;
            let mut spooled = BufReader::with_capacity(1 << 20, spool);
            let mut group: Vec<u8> = Vec::new();
            loop {
                group.clear();
                let mut records = 0;
                while records < ROW_GROUP && spooled.read_until(RECORD, &mut group)? > 0 {
                    records += 1;
                }
                if records == 0 {
                    break;
                }
                // Column by column: each column's values of the group. The
                // strings are handed to Parquet as slices of one buffer.
                let shared = bytes::Bytes::copy_from_slice(&group);
                let text = std::str::from_utf8(&shared)?;
                let mut values: Vec<Vec<&str>> = vec![Vec::with_capacity(records); kinds.len()];
                for record in text.split_terminator(RECORD as char) {
                    let mut cells = record.split(UNIT as char);
                    for column in values.iter_mut() {
                        column.push(cells.next().unwrap_or("null"));
                    }
                }
                write_group(&mut writer, &kinds, &values, &shared)?;
            }
            writer.close()?;
        }
        file.rewind()?;
        std::io::copy(&mut file, &mut out)?;
        out.flush()?;
        Ok(out)
    }
}

/// The Parquet schema: one optional column per column, typed by its kind.
fn schema(columns: &[Column], kinds: &[ColumnKind]) -> Result<Arc<Type>> {
    let fields = columns
        .iter()
        .zip(kinds)
        .map(|(column, kind)| {
            let (physical, logical) = match *kind {
                ColumnKind::Int64 => (PhysicalType::INT64, None),
                ColumnKind::Decimal { precision, scale } => {
                    let (precision, scale) = (precision as i32, scale as i32);
                    let decimal = Type::primitive_type_builder(&column.name, PhysicalType::FIXED_LEN_BYTE_ARRAY)
                        .with_repetition(Repetition::OPTIONAL)
                        .with_length(16)
                        .with_logical_type(Some(LogicalType::Decimal(DecimalType { scale, precision })))
                        .with_precision(precision)
                        .with_scale(scale);
                    return decimal.build().map(Arc::new);
                }
                ColumnKind::Double => (PhysicalType::DOUBLE, None),
                ColumnKind::Boolean => (PhysicalType::BOOLEAN, None),
                ColumnKind::Date => (PhysicalType::INT32, Some(LogicalType::Date)),
                ColumnKind::Timestamp => (
                    PhysicalType::INT64,
                    Some(LogicalType::timestamp(false, TimeUnit::MILLIS)),
                ),
                ColumnKind::Text => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
            };
            Type::primitive_type_builder(&column.name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Arc::new(Type::group_type_builder("rows").with_fields(fields).build()?))
}

/// Writes one row group from each column's values (their JSON texts): the
/// non-null values, and definition levels (1 a value, 0 a null). Every
/// value parses as its column's kind (the first pass saw them all), so the
/// fallbacks below are never taken.
fn write_group(
    writer: &mut SerializedFileWriter<&mut File>,
    kinds: &[ColumnKind],
    values: &[Vec<&str>],
    shared: &bytes::Bytes,
) -> Result<()> {
    let mut group = writer.next_row_group()?;
    let mut index = 0;
    while let Some(mut column) = group.next_column()? {
        let cells: Vec<SpooledCell<'_>> = values[index].iter().map(|raw| SpooledCell::of(raw)).collect();
        let levels: Vec<i16> = cells
            .iter()
            .map(|cell| i16::from(!matches!(cell, SpooledCell::Null)))
            .collect();
        let present = cells
            .iter()
            .filter(|cell| !matches!(cell, SpooledCell::Null))
            .map(SpooledCell::text);
        match (column.untyped(), kinds[index]) {
            (ColumnWriter::Int64ColumnWriter(writer), ColumnKind::Timestamp) => {
                let millis: Vec<i64> = present
                    .map(|text| timestamp(text).map_or(0, |at| at.and_utc().timestamp_millis()))
                    .collect();
                writer.write_batch(&millis, Some(&levels), None)?;
            }
            (ColumnWriter::Int64ColumnWriter(writer), _) => {
                let numbers: Vec<i64> = present.map(|text| text.parse().unwrap_or(0)).collect();
                writer.write_batch(&numbers, Some(&levels), None)?;
            }
            (ColumnWriter::FixedLenByteArrayColumnWriter(writer), ColumnKind::Decimal { scale, .. }) => {
                let numbers: Vec<FixedLenByteArray> = present
                    .map(|text| FixedLenByteArray::from(unscaled(text, scale).unwrap_or(0).to_be_bytes().to_vec()))
                    .collect();
                writer.write_batch(&numbers, Some(&levels), None)?;
            }
            (ColumnWriter::DoubleColumnWriter(writer), _) => {
                let numbers: Vec<f64> = present.map(|text| text.parse().unwrap_or(0.0)).collect();
                writer.write_batch(&numbers, Some(&levels), None)?;
            }
            (ColumnWriter::BoolColumnWriter(writer), _) => {
                let flags: Vec<bool> = present.map(|text| text == "true").collect();
                writer.write_batch(&flags, Some(&levels), None)?;
            }
            (ColumnWriter::Int32ColumnWriter(writer), _) => {
                let epoch = chrono::DateTime::UNIX_EPOCH.date_naive();
                let days: Vec<i32> = present
                    .map(|text| date(text).map_or(0, |day| (day - epoch).num_days() as i32))
                    .collect();
                writer.write_batch(&days, Some(&levels), None)?;
            }
            (ColumnWriter::ByteArrayColumnWriter(writer), _) => {
                // A text that lies in the group's buffer is a slice of it;
                // one that was unescaped is copied.
                let texts: Vec<ByteArray> = present
                    .map(|text| match shared.as_ptr_range().contains(&text.as_ptr()) {
                        true => ByteArray::from(shared.slice_ref(text.as_bytes())),
                        false => ByteArray::from(text.as_bytes().to_vec()),
                    })
                    .collect();
                writer.write_batch(&texts, Some(&levels), None)?;
            }
            _ => anyhow::bail!("a Parquet column of an unexpected type"),
        }
        column.close()?;
        index += 1;
    }
    group.close()?;
    Ok(())
}

impl<W: Write> RowSink for ParquetWriter<W> {
    fn columns(&mut self, columns: &[Column]) -> Result<()> {
        self.columns = columns.to_vec();
        self.seen = columns.iter().map(Seen::of).collect();
        Ok(())
    }

    fn rows(&mut self, rows: &[Vec<&RawValue>]) -> Result<()> {
        for row in rows {
            self.spool_row(row.iter().map(|raw| raw.get()))?;
        }
        Ok(())
    }
}
