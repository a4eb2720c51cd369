//! One side of a grading held compactly: each distinct value kept once as
//! the text it was sent in, with its key (null, a number to 4 significant
//! figures on its decimal digits, or text), and a cell its value's
//! four-byte number.

use std::hash::BuildHasher;

use anyhow::Result;
use hashbrown::HashTable;
use serde_json::value::RawValue;

use crate::error::{fail, Kind};
use crate::results::{Column, RowSink, SqlResult};

/// A value as graded: null, a number rounded to 4 significant figures
/// (its signed digits and power of ten: `6646.4` is 6646 × 10^0), or text
/// (by its number among a sheet's values). Eight bytes, `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Key {
    Null,
    Number { digits: i16, power: i32 },
    Text(u32),
}

/// The number a text is, to 4 significant figures, when it is one: JSON's
/// grammar, leniently (`+5`, `0012`, `.5`, `5.`), rounded half away from
/// zero on its decimal digits as written, so a number no double holds
/// (`1e400`, forty digits) keeps what it was. `-0` is `0`. An exponent too
/// large for the key is no number (the text compares as text).
pub(super) fn number_key(text: &str) -> Option<Key> {
    let bytes = text.as_bytes();
    let (negative, rest) = match bytes.first() {
        Some(b'-') => (true, &bytes[1..]),
        Some(b'+') => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    let mantissa_end = rest.iter().position(|&b| b == b'e' || b == b'E').unwrap_or(rest.len());
    let (mantissa, exponent) = rest.split_at(mantissa_end);
    let (whole, fraction) = match mantissa.iter().position(|&b| b == b'.') {
        Some(point) => (&mantissa[..point], &mantissa[point + 1..]),
        None => (mantissa, &mantissa[..0]),
    };
    let all_digits = |part: &[u8]| part.iter().all(u8::is_ascii_digit);
    if whole.len() + fraction.len() == 0 || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let exponent: i64 = match exponent {
        [] => 0,
        [_, rest @ ..] => {
            let (negative, digits) = match rest {
                [b'-', digits @ ..] => (true, digits),
                [b'+', digits @ ..] => (false, digits),
                digits => (false, digits),
            };
            if digits.is_empty() || !all_digits(digits) {
                return None;
            }
            // Up to 18 digits always fit; a longer exponent is no number we keep.
            let digits = &digits[digits.iter().position(|&d| d != b'0').unwrap_or(digits.len())..];
            let magnitude: i64 = match digits.len() {
                0 => 0,
                1..=18 => std::str::from_utf8(digits).ok()?.parse().ok()?,
                _ => return None,
            };
            if negative {
                -magnitude
            } else {
                magnitude
            }
        }
    };
    // The significant digits: whole and fraction without leading zeros.
    let significant: Vec<u8> = whole
        .iter()
        .chain(fraction)
        .copied()
        .skip_while(|&digit| digit == b'0')
        .collect();
    if significant.is_empty() {
        return Some(Key::Number { digits: 0, power: 0 });
    }
    let length = significant.len() as i64;
    let digit = |index: usize| significant.get(index).map_or(0, |d| i32::from(d - b'0'));
    let mut digits = (0..4).fold(0, |value, index| value * 10 + digit(index));
    let mut power = exponent - fraction.len() as i64 + length - 4;
    if digit(4) >= 5 {
        digits += 1;
        if digits == 10_000 {
            digits = 1000;
            power += 1;
        }
    }
    let digits = i16::try_from(if negative { -digits } else { digits }).ok()?;
    Some(Key::Number {
        digits,
        power: i32::try_from(power).ok()?,
    })
}

/// The distinct values of a sheet, each kept once as the text it is shown
/// with (a string's contents, a number's digits as sent, JSON for the
/// rest), with its key. Value 0 is NULL.
pub(super) struct Values {
    text: String,
    spans: Vec<(u32, u32)>,
    pub(super) keys: Vec<Key>,
    index: HashTable<u32>,
    hasher: std::hash::RandomState,
}

/// The value of every NULL.
pub(super) const NULL: u32 = 0;

impl Default for Values {
    fn default() -> Self {
        Values {
            text: "null".to_string(),
            spans: vec![(0, 4)],
            keys: vec![Key::Null],
            index: HashTable::new(),
            hasher: std::hash::RandomState::new(),
        }
    }
}

impl Values {
    /// The text value `id` is shown with.
    pub(super) fn shown(&self, id: u32) -> &str {
        let (start, end) = self.spans[id as usize];
        &self.text[start as usize..end as usize]
    }

    /// The value shown as `text`, a number when `text` reads as one
    /// (surrounding blanks allowed), else text.
    fn intern(&mut self, text: &str) -> Result<u32> {
        let hash = self.hasher.hash_one(text);
        let (spans, whole) = (&self.spans, &self.text);
        let same = |id: &u32| {
            let (start, end) = spans[*id as usize];
            *id != NULL && &whole[start as usize..end as usize] == text
        };
        if let Some(&id) = self.index.find(hash, same) {
            return Ok(id);
        }
        let too_big = || {
            fail(
                Kind::Partial,
                "the result is too large to grade: over 4 GiB of distinct values",
            )
        };
        let id = u32::try_from(self.keys.len()).map_err(|_| too_big())?;
        let start = u32::try_from(self.text.len()).map_err(|_| too_big())?;
        self.text.push_str(text);
        let end = u32::try_from(self.text.len()).map_err(|_| too_big())?;
        self.spans.push((start, end));
        self.keys.push(number_key(text.trim()).unwrap_or(Key::Text(id)));
        let (spans, whole, hasher) = (&self.spans, &self.text, &self.hasher);
        self.index.insert_unique(hash, id, |id| {
            let (start, end) = spans[*id as usize];
            hasher.hash_one(&whole[start as usize..end as usize])
        });
        Ok(id)
    }

    /// The value of a cell as sent (its JSON text). A string or array that
    /// holds what no Rust string can (a lone surrogate escape such as
    /// `"Burger \ud83c"`, a name cut inside an emoji) is kept as its JSON
    /// text, quotes and escapes included: it equals only itself, never an
    /// empty string or `null`.
    fn of_raw(&mut self, raw: &RawValue) -> Result<u32> {
        let json = raw.get();
        match json.as_bytes().first() {
            None | Some(b'n') => Ok(NULL),
            Some(b'"') => match serde_json::from_str::<std::borrow::Cow<'_, str>>(json) {
                Ok(text) => self.intern(&text),
                Err(_) => self.intern(json),
            },
            // Compact, whatever blanks it was sent with.
            Some(b'[' | b'{') => match serde_json::from_str::<serde_json::Value>(json) {
                Ok(value) => self.intern(&value.to_string()),
                Err(_) => self.intern(json),
            },
            Some(_) => self.intern(json),
        }
    }

    /// The id of `text` when this sheet has it.
    pub(super) fn find(&self, text: &str) -> Option<u32> {
        let (spans, whole) = (&self.spans, &self.text);
        self.index
            .find(self.hasher.hash_one(text), |id| {
                let (start, end) = spans[*id as usize];
                &whole[start as usize..end as usize] == text
            })
            .copied()
    }
}

/// One side of a grading: a result's column names and its rows as compact
/// cells, filled from a SQL result of the stream ([`Sheet::of_result`]) or
/// as a [`RowSink`] of the data query API.
#[derive(Default)]
pub struct Sheet {
    pub(super) names: Vec<String>,
    /// Each column's cells, in row order.
    pub(super) columns: Vec<Vec<u32>>,
    pub(super) rows: usize,
    pub(super) values: Values,
}

impl Sheet {
    /// The sheet of a SQL result of the stream, read from its text.
    pub fn of_result(result: &SqlResult) -> Result<Sheet> {
        let mut sheet = Sheet {
            names: result.columns().iter().map(|column| column.name.clone()).collect(),
            ..Sheet::default()
        };
        for row in result.raw_rows() {
            sheet.push(&row)?;
        }
        Ok(sheet)
    }

    /// How many columns: the names', or the widest row's when wider.
    pub(super) fn width(&self) -> usize {
        self.names.len().max(self.columns.len())
    }

    /// Adds a row: a cell beyond the columns so far makes a new column
    /// (NULL in the rows before it); a short row ends in NULLs.
    pub(super) fn push(&mut self, row: &[&RawValue]) -> Result<()> {
        let width = self.width().max(row.len());
        while self.columns.len() < width {
            self.columns.push(vec![NULL; self.rows]);
        }
        for (index, column) in self.columns.iter_mut().enumerate() {
            column.push(match row.get(index) {
                Some(raw) => self.values.of_raw(raw)?,
                None => NULL,
            });
        }
        self.rows += 1;
        Ok(())
    }

    /// The value of row `row` of column `column` as sent.
    pub(super) fn shown(&self, column: usize, row: usize) -> &str {
        self.values.shown(self.cell(column, row))
    }

    pub(super) fn cell(&self, column: usize, row: usize) -> u32 {
        self.columns.get(column).map_or(NULL, |cells| cells[row])
    }

    /// The name of column `index`, when it has one.
    pub(super) fn name(&self, index: usize) -> Option<&str> {
        self.names.get(index).map(String::as_str)
    }
}

impl RowSink for Sheet {
    fn columns(&mut self, columns: &[Column]) -> Result<()> {
        self.names = columns.iter().map(|column| column.name.clone()).collect();
        Ok(())
    }

    fn rows(&mut self, rows: &[Vec<&RawValue>]) -> Result<()> {
        rows.iter().try_for_each(|row| self.push(row))
    }
}
