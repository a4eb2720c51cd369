//! Grading as Cube grades its eval questions: the agent's result set
//! against the ground truth's, by execution. Row order never matters (the
//! rows are multisets: duplicates count), numbers compare to 4 significant
//! figures (also numbers sent as strings), column names are ignored and
//! extra agent columns allowed: each ground-truth column must be matched,
//! by its values, by a distinct agent column. The failure reasons come in
//! Cube's order: missing columns, too few rows, too many rows, then values.
//!
//! Rows go from the stream and the data query API straight into a
//! [`Sheet`]: each distinct value is kept once, as the text it was sent
//! in, and a cell is its four-byte number. Numbers compare by their
//! decimal digits, so none turns into NULL or infinity on the way.
//!
//! The verdict is exact: when several agent columns hold the same values
//! (a month and its rank), every assignment of agent columns to the
//! ground truth's that the values allow is tried, refining a partition
//! of the rows one column at a time, until one makes the rows equal.
//! Identical columns are tried once, so 500 equal columns cost what one
//! does; a search that could still explode stops at a bound and says so.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::time::Instant;

use anyhow::Result;
use hashbrown::HashTable;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::{fail, Kind};
use crate::results::{Column, RowSink, SqlResult};

/// A question's verdict, with Cube's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The agent's result reproduces the ground truth.
    Pass,
    /// Both ran; the results differ.
    Fail,
    /// Nothing to compare: the agent ran no query.
    Review,
    /// The agent's turn, its query or the ground truth failed (or the
    /// certified query was not found).
    Error,
}

/// Why a question did not pass: Cube's score reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reason {
    /// The agent's result has fewer columns than the ground truth.
    #[serde(rename = "Missing columns")]
    MissingColumns,
    /// The agent's result has fewer rows.
    #[serde(rename = "Row count mismatch")]
    RowCountMismatch,
    /// The agent's result has more rows.
    #[serde(rename = "Unexpected rows")]
    UnexpectedRows,
    /// Same shape, but no matching of columns makes the rows equal.
    #[serde(rename = "Value mismatch")]
    ValueMismatch,
    /// The agent's own last query failed.
    #[serde(rename = "Query error")]
    QueryError,
    /// The ground truth's SQL failed.
    #[serde(rename = "Ground truth query failed")]
    GroundTruthQueryFailed,
    /// The question names a certified query there is none of.
    #[serde(rename = "Ground truth not found")]
    GroundTruthNotFound,
    /// The agent's turn failed (an in-stream error, cut, timed out).
    #[serde(rename = "Agent error")]
    AgentError,
}

impl Reason {
    /// The reason as Cube shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::MissingColumns => "Missing columns",
            Reason::RowCountMismatch => "Row count mismatch",
            Reason::UnexpectedRows => "Unexpected rows",
            Reason::ValueMismatch => "Value mismatch",
            Reason::QueryError => "Query error",
            Reason::GroundTruthQueryFailed => "Ground truth query failed",
            Reason::GroundTruthNotFound => "Ground truth not found",
            Reason::AgentError => "Agent error",
        }
    }

    /// The verdict a question with this reason gets.
    pub fn verdict(self) -> Verdict {
        match self {
            Reason::MissingColumns | Reason::RowCountMismatch | Reason::UnexpectedRows | Reason::ValueMismatch => {
                Verdict::Fail
            }
            Reason::QueryError | Reason::GroundTruthQueryFailed | Reason::GroundTruthNotFound | Reason::AgentError => {
                Verdict::Error
            }
        }
    }
}

/// Why a question did not pass: its verdict, Cube's score reason (none
/// for `review`) and one sentence a person can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Miss {
    /// `fail`, `review` or `error`.
    pub verdict: Verdict,
    /// Cube's score reason; `None` for `review`.
    pub reason: Option<Reason>,
    /// What differs, first: the counts, or a row, a column and both values.
    pub analysis: String,
}

impl Miss {
    /// A miss for `reason` (its verdict follows), told by `analysis`.
    pub fn new(reason: Reason, analysis: impl Into<String>) -> Miss {
        Miss {
            verdict: reason.verdict(),
            reason: Some(reason),
            analysis: analysis.into(),
        }
    }

    /// Cube's `review`: nothing to compare, as `analysis` says.
    pub fn review(analysis: impl Into<String>) -> Miss {
        Miss {
            verdict: Verdict::Review,
            reason: None,
            analysis: analysis.into(),
        }
    }
}

/// A value as graded: null, a number rounded to 4 significant figures
/// (its signed digits and power of ten: `6646.4` is 6646 × 10^0), or text
/// (by its number among a sheet's values). Eight bytes, `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Key {
    Null,
    Number { digits: i16, power: i32 },
    Text(u32),
}

/// The number a text is, to 4 significant figures, when it is one: JSON's
/// grammar, leniently (`+5`, `0012`, `.5`, `5.`), rounded half away from
/// zero on its decimal digits as written, so a number no double holds
/// (`1e400`, forty digits) keeps what it was. `-0` is `0`. An exponent too
/// large for the key is no number (the text compares as text).
fn number_key(text: &str) -> Option<Key> {
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
struct Values {
    text: String,
    spans: Vec<(u32, u32)>,
    keys: Vec<Key>,
    index: HashTable<u32>,
    hasher: std::hash::RandomState,
}

/// The value of every NULL.
const NULL: u32 = 0;

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
    fn shown(&self, id: u32) -> &str {
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

    /// The value of a cell as sent (its JSON text).
    fn of_raw(&mut self, raw: &RawValue) -> Result<u32> {
        let json = raw.get();
        match json.as_bytes().first() {
            None | Some(b'n') => Ok(NULL),
            Some(b'"') => {
                let text: std::borrow::Cow<'_, str> = serde_json::from_str(json).unwrap_or_default();
                self.intern(&text)
            }
            Some(b'[' | b'{') => {
                // Compact, whatever blanks it was sent with.
                let value: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
                self.intern(&value.to_string())
            }
            Some(_) => self.intern(json),
        }
    }

    /// The id of `text` when this sheet has it.
    fn find(&self, text: &str) -> Option<u32> {
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
    names: Vec<String>,
    /// Each column's cells, in row order.
    columns: Vec<Vec<u32>>,
    rows: usize,
    values: Values,
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
    fn width(&self) -> usize {
        self.names.len().max(self.columns.len())
    }

    /// Adds a row: a cell beyond the columns so far makes a new column
    /// (NULL in the rows before it); a short row ends in NULLs.
    fn push(&mut self, row: &[&RawValue]) -> Result<()> {
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
    fn shown(&self, column: usize, row: usize) -> &str {
        self.values.shown(self.cell(column, row))
    }

    fn cell(&self, column: usize, row: usize) -> u32 {
        self.columns.get(column).map_or(NULL, |cells| cells[row])
    }

    /// The name of column `index`, when it has one.
    fn name(&self, index: usize) -> Option<&str> {
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

/// How much work the search for a column assignment may do, in cells
/// looked at: about a second.
const SEARCH_BUDGET: u64 = 50_000_000;

/// Why grading stopped before its verdict.
#[derive(Debug, PartialEq, Eq)]
pub struct OutOfTime;

/// Grades `agent` against `truth`: `None` when it passes, else the reason
/// and the analysis. `Err` when `deadline` passed first.
pub fn grade(agent: &Sheet, truth: &Sheet, deadline: Option<Instant>) -> Result<Option<Miss>, OutOfTime> {
    grade_within(agent, truth, deadline, SEARCH_BUDGET)
}

/// [`grade`] with the search bounded by `budget` cells looked at.
fn grade_within(
    agent: &Sheet,
    truth: &Sheet,
    deadline: Option<Instant>,
    budget: u64,
) -> Result<Option<Miss>, OutOfTime> {
    let (agent_width, truth_width) = (agent.width(), truth.width());
    if agent_width < truth_width {
        return Ok(Some(Miss::new(
            Reason::MissingColumns,
            format!(
                "the agent returned {agent_width} column{}, the ground truth has {truth_width}",
                plural(agent_width)
            ),
        )));
    }
    let (got, want) = (agent.rows, truth.rows);
    if got != want {
        let reason = match got < want {
            true => Reason::RowCountMismatch,
            false => Reason::UnexpectedRows,
        };
        return Ok(Some(Miss::new(
            reason,
            format!(
                "the agent returned {got} row{}, the ground truth has {want}",
                plural(got)
            ),
        )));
    }
    let grading = Grading::new(agent, truth);
    let candidates = grading.candidates(deadline)?;
    let matching = match_columns(&candidates, agent_width);
    if let Some(column) = matching.iter().position(Option::is_none) {
        return Ok(Some(grading.value_mismatch(&candidates, &matching, column)));
    }
    let mut search = Search::new(&grading, &candidates, deadline, budget);
    match search.run()? {
        Found::Assignment => Ok(None),
        Found::Nothing => Ok(Some(grading.rows_do_not_pair(&matching))),
        Found::OutOfBudget => Ok(Some(Miss::review(format!(
            "undecided: {} ground-truth columns share their values with {} agent columns, and the search for an assignment that makes the rows equal stopped after {} steps; compare the results by hand",
            search.ambiguous_truth(),
            search.ambiguous_agent(),
            search.steps
        )))),
    }
}

fn plural(count: usize) -> &'static str {
    if count == 1 {
        ""
    } else {
        "s"
    }
}

/// Both sheets, their values keyed alike: the agent's texts take the
/// ground truth's numbers where the ground truth has them.
struct Grading<'a> {
    agent: &'a Sheet,
    truth: &'a Sheet,
    agent_keys: Vec<Key>,
}

impl<'a> Grading<'a> {
    fn new(agent: &'a Sheet, truth: &'a Sheet) -> Self {
        let foreign = truth.values.keys.len() as u32;
        let agent_keys = agent
            .values
            .keys
            .iter()
            .enumerate()
            .map(|(id, key)| match key {
                Key::Text(_) => {
                    let text = agent.values.shown(id as u32);
                    match truth.values.find(text) {
                        Some(same) => Key::Text(same),
                        None => Key::Text(foreign.saturating_add(id as u32)),
                    }
                }
                other => *other,
            })
            .collect();
        Grading {
            agent,
            truth,
            agent_keys,
        }
    }

    fn agent_key(&self, column: usize, row: usize) -> Key {
        self.agent_keys[self.agent.cell(column, row) as usize]
    }

    fn truth_key(&self, column: usize, row: usize) -> Key {
        self.truth.values.keys[self.truth.cell(column, row) as usize]
    }

    /// The keys of a column in row order.
    fn agent_column(&self, column: usize) -> Vec<Key> {
        (0..self.agent.rows).map(|row| self.agent_key(column, row)).collect()
    }

    fn truth_column(&self, column: usize) -> Vec<Key> {
        (0..self.truth.rows).map(|row| self.truth_key(column, row)).collect()
    }

    /// For each ground-truth column, the agent columns holding the same
    /// multiset of values; `Err` when `deadline` passed first.
    fn candidates(&self, deadline: Option<Instant>) -> Result<Vec<Vec<usize>>, OutOfTime> {
        let sorted = |mut keys: Vec<Key>| {
            keys.sort_unstable();
            keys
        };
        let truth: Vec<(u64, Vec<Key>)> = (0..self.truth.width())
            .map(|column| fingerprinted(sorted(self.truth_column(column))))
            .collect();
        let mut candidates = vec![Vec::new(); truth.len()];
        for agent_column in 0..self.agent.width() {
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(OutOfTime);
            }
            let (print, keys) = fingerprinted(sorted(self.agent_column(agent_column)));
            for (found, (truth_print, truth_keys)) in candidates.iter_mut().zip(&truth) {
                if print == *truth_print && keys == *truth_keys {
                    found.push(agent_column);
                }
            }
        }
        Ok(candidates)
    }

    /// The analysis of a ground-truth column no agent column matches (in
    /// `matching`, a largest matching of the columns): its first row whose
    /// value differs from the agent's row with the same values in the
    /// matched columns, else what the two columns hold that the other
    /// lacks.
    fn value_mismatch(&self, candidates: &[Vec<usize>], matching: &[Option<usize>], column: usize) -> Miss {
        let name = self
            .truth
            .name(column)
            .map_or(String::new(), |name| format!(" ({name})"));
        let head = format!("column {} of the ground truth{name} has no match", column + 1);
        let matched: Vec<(usize, usize)> = matching
            .iter()
            .enumerate()
            .filter_map(|(truth_index, agent)| Some((truth_index, (*agent)?)))
            .collect();
        // The agent column to show: one that matches no ground-truth column
        // (the one that differs, most likely), else one not matched.
        let order = || (column..self.agent.width()).chain(0..column);
        let unmatched = |agent_index: &usize| !matched.iter().any(|(_, used)| used == agent_index);
        let compared = order()
            .find(|agent_index| unmatched(agent_index) && !candidates.iter().any(|found| found.contains(agent_index)))
            .or_else(|| order().find(unmatched));
        let Some(compared) = compared else {
            return Miss::new(Reason::ValueMismatch, head);
        };
        // A row is found by the values of the matched columns only where
        // they name one row on each side.
        let mut agent_by_key: HashMap<Vec<Key>, Option<usize>> = HashMap::new();
        for row in 0..self.agent.rows {
            let key: Vec<Key> = matched.iter().map(|&(_, a)| self.agent_key(a, row)).collect();
            agent_by_key
                .entry(key)
                .and_modify(|found| *found = None)
                .or_insert(Some(row));
        }
        let mut truth_keys: HashMap<Vec<Key>, usize> = HashMap::new();
        let keys: Vec<Vec<Key>> = (0..self.truth.rows)
            .map(|row| matched.iter().map(|&(t, _)| self.truth_key(t, row)).collect())
            .collect();
        for key in &keys {
            *truth_keys.entry(key.clone()).or_default() += 1;
        }
        for (row, key) in keys.iter().enumerate().filter(|_| !matched.is_empty()) {
            let Some(&Some(other)) = agent_by_key.get(key) else {
                continue;
            };
            if truth_keys[key] == 1 && self.truth_key(column, row) != self.agent_key(compared, other) {
                let label = matched.first().map_or(String::new(), |&(truth_index, _)| {
                    format!("{} ", self.truth.shown(truth_index, row))
                });
                return Miss::new(
                    Reason::ValueMismatch,
                    format!(
                        "{head}: row {label}{} vs {}",
                        self.truth.shown(column, row),
                        self.agent.shown(compared, other)
                    ),
                );
            }
        }
        match self.differences(column, compared) {
            Some((want, got)) => Miss::new(
                Reason::ValueMismatch,
                format!("{head}: the ground truth has {want} where the agent has {got}"),
            ),
            None => Miss::new(Reason::ValueMismatch, head),
        }
    }

    /// A value ground-truth column `truth_column` holds that agent column
    /// `agent_column` lacks, and one the agent's holds that it lacks (as
    /// multisets, shown as sent).
    fn differences(&self, truth_column: usize, agent_column: usize) -> Option<(String, String)> {
        let sorted = |keys: Vec<Key>, shown: &dyn Fn(usize) -> String| {
            let mut keyed: Vec<(Key, usize)> = keys.into_iter().zip(0..).collect();
            keyed.sort_unstable();
            keyed
                .into_iter()
                .map(|(key, row)| (key, row, shown(row)))
                .collect::<Vec<_>>()
        };
        let want = sorted(self.truth_column(truth_column), &|row| {
            self.truth.shown(truth_column, row).to_string()
        });
        let got = sorted(self.agent_column(agent_column), &|row| {
            self.agent.shown(agent_column, row).to_string()
        });
        let (mut only_want, mut only_got) = (None, None);
        let (mut i, mut j) = (0, 0);
        while i < want.len() && j < got.len() && (only_want.is_none() || only_got.is_none()) {
            match want[i].0.cmp(&got[j].0) {
                std::cmp::Ordering::Equal => (i, j) = (i + 1, j + 1),
                std::cmp::Ordering::Less => {
                    only_want.get_or_insert_with(|| want[i].2.clone());
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    only_got.get_or_insert_with(|| got[j].2.clone());
                    j += 1;
                }
            }
        }
        let only_want = only_want.or_else(|| want.get(i).map(|(_, _, shown)| shown.clone()))?;
        let only_got = only_got.or_else(|| got.get(j).map(|(_, _, shown)| shown.clone()))?;
        Some((only_want, only_got))
    }

    /// The analysis when every column has a match but no assignment pairs
    /// the rows: a ground-truth row the agent's result lacks under the
    /// assignment `matching`.
    fn rows_do_not_pair(&self, matching: &[Option<usize>]) -> Miss {
        let matching: Vec<usize> = matching.iter().flatten().copied().collect();
        let mut counts: HashMap<Vec<Key>, i64> = HashMap::with_capacity(self.agent.rows);
        for row in 0..self.agent.rows {
            *counts
                .entry(matching.iter().map(|&a| self.agent_key(a, row)).collect())
                .or_default() += 1;
        }
        let missing = (0..self.truth.rows).find(|&row| {
            let key: Vec<Key> = (0..matching.len()).map(|t| self.truth_key(t, row)).collect();
            match counts.get_mut(&key) {
                Some(count) if *count > 0 => {
                    *count -= 1;
                    false
                }
                _ => true,
            }
        });
        let Some(row) = missing else {
            return Miss::new(Reason::ValueMismatch, "every column has a match, but not row by row");
        };
        let shown: Vec<&str> = (0..self.truth.width())
            .map(|column| self.truth.shown(column, row))
            .collect();
        Miss::new(
            Reason::ValueMismatch,
            format!(
                "every column has a match, but not row by row: the ground truth's row ({}) is not in the agent's result",
                shown.join(", ")
            ),
        )
    }
}

/// A hash of `keys` (a column sorted), and the keys.
fn fingerprinted(keys: Vec<Key>) -> (u64, Vec<Key>) {
    let mut hasher = std::hash::DefaultHasher::new();
    keys.hash(&mut hasher);
    (hasher.finish(), keys)
}

/// A largest matching of ground-truth columns to distinct agent columns
/// among `candidates` (augmenting paths: polynomial, and two equal
/// ground-truth columns cannot both claim one agent column), columns
/// kept in their own places where they can be. `None` for a
/// ground-truth column left without one.
fn match_columns(candidates: &[Vec<usize>], agent_width: usize) -> Vec<Option<usize>> {
    fn augment(truth: usize, candidates: &[Vec<usize>], owner: &mut [Option<usize>], seen: &mut [bool]) -> bool {
        for &agent in &candidates[truth] {
            if seen[agent] {
                continue;
            }
            seen[agent] = true;
            if owner[agent].is_none_or(|other| augment(other, candidates, owner, seen)) {
                owner[agent] = Some(truth);
                return true;
            }
        }
        false
    }
    let mut owner: Vec<Option<usize>> = vec![None; agent_width];
    // Columns in their own places first; the others find room around them.
    for (truth, found) in candidates.iter().enumerate() {
        if found.contains(&truth) {
            owner[truth] = Some(truth);
        }
    }
    for truth in 0..candidates.len() {
        if !owner.contains(&Some(truth)) {
            let mut seen = vec![false; agent_width];
            augment(truth, candidates, &mut owner, &mut seen);
        }
    }
    let mut matching = vec![None; candidates.len()];
    for (agent, truth) in owner.iter().enumerate() {
        if let Some(truth) = truth {
            matching[*truth] = Some(agent);
        }
    }
    matching
}

/// Columns that hold the same values in the same rows: one of them stands
/// for all (`members` of them).
struct Class {
    column: usize,
    members: usize,
}

/// Groups `columns` into classes of identical columns (keys in row order).
fn classes(columns: impl Iterator<Item = (usize, Vec<Key>)>) -> Vec<(Class, Vec<Key>)> {
    let mut classes: Vec<(Class, Vec<Key>)> = Vec::new();
    let mut by_print: HashMap<u64, Vec<usize>> = HashMap::new();
    for (column, keys) in columns {
        let (print, keys) = fingerprinted(keys);
        let same = by_print.entry(print).or_default();
        match same.iter().find(|&&class| classes[class].1 == keys) {
            Some(&class) => classes[class].0.members += 1,
            None => {
                same.push(classes.len());
                classes.push((Class { column, members: 1 }, keys));
            }
        }
    }
    classes
}

/// How a search ended.
enum Found {
    Assignment,
    Nothing,
    OutOfBudget,
}

/// The search for an assignment of agent columns to the ground truth's
/// that makes the two multisets of rows equal. It works on classes of
/// identical columns: identical ground-truth columns need as many
/// identical agent columns, and one class of agent columns serves one
/// class of the ground truth's. Each step refines a partition of both
/// sides' rows by one more pair of columns and checks that every part
/// holds as many rows on each side.
struct Search<'a> {
    grading: &'a Grading<'a>,
    /// The ground truth's classes, most constrained first, each with the
    /// agent classes it may take.
    truth: Vec<(Class, Vec<usize>)>,
    /// The agent's classes of candidate columns.
    agent: Vec<Class>,
    used: Vec<bool>,
    deadline: Option<Instant>,
    budget: u64,
    /// Cells looked at so far.
    steps: u64,
}

impl<'a> Search<'a> {
    fn new(grading: &'a Grading<'a>, candidates: &[Vec<usize>], deadline: Option<Instant>, budget: u64) -> Self {
        let mut wanted: Vec<usize> = candidates.iter().flatten().copied().collect();
        wanted.sort_unstable();
        wanted.dedup();
        let agent_classes = classes(wanted.iter().map(|&column| (column, grading.agent_column(column))));
        let truth_classes = classes((0..candidates.len()).map(|column| (column, grading.truth_column(column))));
        let mut truth: Vec<(Class, Vec<usize>, usize)> = truth_classes
            .into_iter()
            .map(|(class, keys)| {
                let distinct = {
                    let mut sorted = keys;
                    sorted.sort_unstable();
                    sorted.dedup();
                    sorted.len()
                };
                let allowed: Vec<usize> = agent_classes
                    .iter()
                    .enumerate()
                    .filter(|(_, (agent, _))| {
                        agent.members >= class.members && candidates[class.column].contains(&agent.column)
                    })
                    .map(|(index, _)| index)
                    .collect();
                (class, allowed, distinct)
            })
            .collect();
        // Fewest choices first, then the columns that split the rows most.
        truth.sort_by_key(|(_, allowed, distinct)| (allowed.len(), std::cmp::Reverse(*distinct)));
        Search {
            grading,
            truth: truth.into_iter().map(|(class, allowed, _)| (class, allowed)).collect(),
            used: vec![false; agent_classes.len()],
            agent: agent_classes.into_iter().map(|(class, _)| class).collect(),
            deadline,
            budget,
            steps: 0,
        }
    }

    /// How many ground-truth columns had more than one agent class to choose from.
    fn ambiguous_truth(&self) -> usize {
        self.truth
            .iter()
            .filter(|(_, allowed)| allowed.len() > 1)
            .map(|(class, _)| class.members)
            .sum()
    }

    /// How many agent columns those could take.
    fn ambiguous_agent(&self) -> usize {
        let mut classes: Vec<usize> = self
            .truth
            .iter()
            .filter(|(_, allowed)| allowed.len() > 1)
            .flat_map(|(_, allowed)| allowed.iter().copied())
            .collect();
        classes.sort_unstable();
        classes.dedup();
        classes.iter().map(|&class| self.agent[class].members).sum()
    }

    fn run(&mut self) -> Result<Found, OutOfTime> {
        let rows = self.grading.truth.rows;
        let start = Partition {
            truth: vec![0; rows],
            agent: vec![0; rows],
        };
        self.descend(0, &start)
    }

    /// Assigns the ground truth's class `depth` and the ones after it,
    /// given the partition the classes before it made.
    fn descend(&mut self, depth: usize, partition: &Partition) -> Result<Found, OutOfTime> {
        let Some((class, allowed)) = self.truth.get(depth) else {
            return Ok(Found::Assignment);
        };
        let (truth_column, allowed) = (class.column, allowed.clone());
        let mut out_of_budget = false;
        for agent_class in allowed {
            if self.used[agent_class] {
                continue;
            }
            if self.steps >= self.budget {
                out_of_budget = true;
                break;
            }
            if self.deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(OutOfTime);
            }
            self.steps += partition.truth.len() as u64 + 1;
            let agent_column = self.agent[agent_class].column;
            let Some(refined) = partition.refined(self.grading, truth_column, agent_column) else {
                continue;
            };
            self.used[agent_class] = true;
            let found = self.descend(depth + 1, &refined)?;
            self.used[agent_class] = false;
            match found {
                Found::Nothing => {}
                other => return Ok(other),
            }
        }
        Ok(match out_of_budget {
            true => Found::OutOfBudget,
            false => Found::Nothing,
        })
    }
}

/// Which part each row of both sides is in, after the columns assigned so
/// far: rows with the same values in them share a part.
struct Partition {
    truth: Vec<u32>,
    agent: Vec<u32>,
}

impl Partition {
    /// The partition one more pair of columns makes, when every part still
    /// holds as many rows on each side; `None` when one does not.
    fn refined(&self, grading: &Grading<'_>, truth_column: usize, agent_column: usize) -> Option<Partition> {
        let mut parts: HashMap<(u32, Key), (u32, i64)> = HashMap::new();
        let mut truth = Vec::with_capacity(self.truth.len());
        for (row, &part) in self.truth.iter().enumerate() {
            let next = parts.len() as u32;
            let entry = parts
                .entry((part, grading.truth_key(truth_column, row)))
                .or_insert((next, 0));
            entry.1 += 1;
            truth.push(entry.0);
        }
        let mut agent = Vec::with_capacity(self.agent.len());
        for (row, &part) in self.agent.iter().enumerate() {
            let entry = parts.get_mut(&(part, grading.agent_key(agent_column, row)))?;
            entry.1 -= 1;
            if entry.1 < 0 {
                return None;
            }
            agent.push(entry.0);
        }
        Some(Partition { truth, agent })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    /// A sheet of `rows` (JSON arrays), its columns named `prefix1…`.
    fn sheet(prefix: &str, rows: &Value) -> Sheet {
        let rows = rows.as_array().unwrap();
        let width = rows.iter().map(|row| row.as_array().unwrap().len()).max().unwrap_or(0);
        let mut sheet = Sheet {
            names: (1..=width).map(|i| format!("{prefix}{i}")).collect(),
            ..Sheet::default()
        };
        let texts: Vec<Vec<String>> = rows
            .iter()
            .map(|row| row.as_array().unwrap().iter().map(Value::to_string).collect())
            .collect();
        push_texts(&mut sheet, &texts);
        sheet
    }

    /// Pushes rows of cells given as their JSON text.
    fn push_texts(sheet: &mut Sheet, rows: &[Vec<String>]) {
        for row in rows {
            let raws: Vec<Box<RawValue>> = row
                .iter()
                .map(|text| RawValue::from_string(text.clone()).unwrap())
                .collect();
            let refs: Vec<&RawValue> = raws.iter().map(AsRef::as_ref).collect();
            sheet.push(&refs).unwrap();
        }
    }

    /// Grades agent rows against truth rows (columns named `a…` and `c…`).
    fn graded(agent: Value, truth: Value) -> Option<Miss> {
        grade(&sheet("a", &agent), &sheet("c", &truth), None).unwrap()
    }

    /// Grades sheets whose cells are given as the JSON text sent.
    fn graded_texts(agent: &[&str], truth: &[&str]) -> Option<Miss> {
        let column = |cells: &[&str]| {
            let mut sheet = Sheet::default();
            push_texts(
                &mut sheet,
                &cells.iter().map(|cell| vec![cell.to_string()]).collect::<Vec<_>>(),
            );
            sheet
        };
        grade(&column(agent), &column(truth), None).unwrap()
    }

    fn reason(miss: Option<Miss>) -> Option<Reason> {
        miss.and_then(|miss| miss.reason)
    }

    #[test]
    fn order_names_and_extra_columns_do_not_matter() {
        let truth = json!([["East", 6646], ["West", 10787]]);
        let agent = json!([[10787.0, "West", "x"], ["6646.4", "East", "y"]]);
        assert_eq!(graded(agent, truth), None);
    }

    #[test]
    fn numbers_compare_to_four_significant_figures() {
        assert_eq!(graded(json!([[6646.0]]), json!([[6646]])), None);
        assert_eq!(graded(json!([[6646.4]]), json!([[6646]])), None);
        assert_eq!(
            graded(json!([["6646"]]), json!([[6646.0]])),
            None,
            "a number sent as a string"
        );
        assert_eq!(graded(json!([[" 6646 "]]), json!([[6646]])), None, "blanks around it");
        assert_eq!(graded(json!([[0.0001234]]), json!([[0.00012344]])), None);
        assert_eq!(graded(json!([[-12.341]]), json!([[-12.34]])), None);
        assert_eq!(graded(json!([[9999.6]]), json!([[10000]])), None, "rounding carries");
        assert_eq!(
            reason(graded(json!([[6656]]), json!([[6646]]))),
            Some(Reason::ValueMismatch)
        );
        assert_eq!(
            reason(graded(json!([[6647]]), json!([[6646]]))),
            Some(Reason::ValueMismatch)
        );
        assert_eq!(
            reason(graded(json!([[-6646]]), json!([[6646]]))),
            Some(Reason::ValueMismatch)
        );
        assert_eq!(
            graded(json!([[66460.4]]), json!([[66461]])),
            None,
            "the 5th figure differs"
        );
        assert_eq!(graded(json!([["+5"]]), json!([["5."]])), None);
        assert_eq!(graded(json!([[".5"]]), json!([[0.5]])), None);
    }

    #[test]
    fn values_keep_what_they_were_sent_as() {
        // A number no double holds is no NULL and no infinity.
        assert_eq!(reason(graded_texts(&["1e400"], &["null"])), Some(Reason::ValueMismatch));
        assert_eq!(
            reason(graded_texts(&["1e400"], &["1e401"])),
            Some(Reason::ValueMismatch)
        );
        assert_eq!(
            reason(graded_texts(&["-1e400"], &["1e400"])),
            Some(Reason::ValueMismatch)
        );
        assert_eq!(graded_texts(&["1e400"], &["1.0000E+400"]), None);
        assert_eq!(graded_texts(&["\"1e400\""], &["1e400"]), None, "as a string too");
        assert_eq!(graded_texts(&["1e-400"], &["1.00001e-400"]), None);
        // Forty digits, by their digits.
        let forty = "1234567890123456789012345678901234567890";
        assert_eq!(graded_texts(&[forty], &["1.2345e39"]), None);
        assert_eq!(
            reason(graded_texts(&[forty], &["1.2355e39"])),
            Some(Reason::ValueMismatch)
        );
        assert_eq!(
            reason(graded_texts(&[forty], &["1234567890123456789012345678901234567890000"])),
            Some(Reason::ValueMismatch)
        );
        // Zero has no sign.
        assert_eq!(graded_texts(&["-0"], &["0"]), None);
        assert_eq!(graded_texts(&["-0.0e7"], &["\"0\""]), None);
        // NULL equals only NULL.
        assert_eq!(graded_texts(&["null"], &["null"]), None);
        for other in ["0", "\"\"", "\"null\"", "false"] {
            assert_eq!(
                reason(graded_texts(&["null"], &[other])),
                Some(Reason::ValueMismatch),
                "{other}"
            );
            assert_eq!(
                reason(graded_texts(&[other], &["null"])),
                Some(Reason::ValueMismatch),
                "{other}"
            );
        }
        // NaN and Infinity sent as strings are text: equal to themselves
        // only, never a number or NULL.
        assert_eq!(graded_texts(&["\"NaN\""], &["\"NaN\""]), None);
        assert_eq!(graded_texts(&["\"Infinity\""], &["\"Infinity\""]), None);
        for (agent, truth) in [
            ("\"NaN\"", "null"),
            ("\"Infinity\"", "1e400"),
            ("\"-Infinity\"", "\"Infinity\""),
            ("\"inf\"", "\"Infinity\""),
        ] {
            assert_eq!(
                reason(graded_texts(&[agent], &[truth])),
                Some(Reason::ValueMismatch),
                "{agent} {truth}"
            );
        }
        // An exponent no key holds compares as its text.
        assert_eq!(
            graded_texts(&["1e99999999999999999999"], &["1e99999999999999999999"]),
            None
        );
        assert_eq!(
            reason(graded_texts(&["1e99999999999999999999"], &["1E99999999999999999999"])),
            Some(Reason::ValueMismatch)
        );
    }

    #[test]
    fn nulls_dates_and_text_compare_as_they_are() {
        assert_eq!(
            graded(json!([[null, "2024-01-01"]]), json!([[null, "2024-01-01"]])),
            None
        );
        assert_eq!(
            reason(graded(json!([["2024-01-01T00:00:00.000"]]), json!([["2024-01-01"]]))),
            Some(Reason::ValueMismatch)
        );
        assert_eq!(
            reason(graded(json!([[null]]), json!([[0]]))),
            Some(Reason::ValueMismatch)
        );
        assert_eq!(
            reason(graded(json!([[""]]), json!([[null]]))),
            Some(Reason::ValueMismatch)
        );
        assert_eq!(graded(json!([[true, [1, 2]]]), json!([["true", [1, 2]]])), None);
    }

    #[test]
    fn rows_are_a_multiset() {
        let truth = json!([["a"], ["a"], ["b"]]);
        assert_eq!(graded(json!([["b"], ["a"], ["a"]]), truth.clone()), None);
        assert_eq!(
            reason(graded(json!([["a"], ["b"], ["b"]]), truth.clone())),
            Some(Reason::ValueMismatch)
        );
        let miss = graded(json!([["a"], ["b"]]), truth.clone()).unwrap();
        assert_eq!(miss.reason, Some(Reason::RowCountMismatch));
        assert_eq!(miss.analysis, "the agent returned 2 rows, the ground truth has 3");
        let miss = graded(json!([["a"], ["b"], ["a"], ["a"]]), truth).unwrap();
        assert_eq!(miss.reason, Some(Reason::UnexpectedRows));
    }

    #[test]
    fn reasons_come_in_cubes_order() {
        let miss = graded(json!([["a"]]), json!([["a", 1], ["b", 2]])).unwrap();
        assert_eq!(miss.reason, Some(Reason::MissingColumns));
        assert_eq!(miss.analysis, "the agent returned 1 column, the ground truth has 2");
    }

    #[test]
    fn empty_and_one_column_results() {
        assert_eq!(graded(json!([]), json!([])), None);
        assert_eq!(graded(json!([[1]]), json!([[1]])), None);
        // An empty result still has its columns (from its schema).
        let named = |rows: &Value| Sheet {
            names: vec!["n".into()],
            ..sheet("n", rows)
        };
        let (none, some) = (named(&json!([])), named(&json!([[1]])));
        assert_eq!(
            reason(grade(&none, &some, None).unwrap()),
            Some(Reason::RowCountMismatch)
        );
        assert_eq!(reason(grade(&some, &none, None).unwrap()), Some(Reason::UnexpectedRows));
        assert_eq!(reason(graded(json!([]), json!([[1]]))), Some(Reason::MissingColumns));
    }

    #[test]
    fn two_equal_truth_columns_need_two_agent_columns() {
        let truth = json!([[1, 1], [2, 2]]);
        assert_eq!(graded(json!([[1, 1], [2, 2]]), truth.clone()), None);
        assert_eq!(
            reason(graded(json!([[1, "x"], [2, "y"]]), truth)),
            Some(Reason::ValueMismatch)
        );
    }

    #[test]
    fn columns_that_match_alone_must_also_pair_row_by_row() {
        let truth = json!([["East", 1], ["West", 2]]);
        assert_eq!(graded(json!([["East", 2, 1], ["West", 1, 2]]), truth.clone()), None);
        let miss = graded(json!([["East", 2], ["West", 1]]), truth).unwrap();
        assert_eq!(miss.reason, Some(Reason::ValueMismatch));
        assert!(miss.analysis.contains("not row by row"), "{}", miss.analysis);
    }

    #[test]
    fn a_month_and_its_rank_are_told_apart() {
        // Both columns hold 1..12, nothing else tells the rows apart, and
        // the first pairing tried is the wrong one.
        let truth: Vec<Value> = (1..=12).map(|m| json!([m, (m * 5) % 12 + 1])).collect();
        let agent: Vec<Value> = (1..=12).map(|m| json!([(m * 5) % 12 + 1, m])).collect();
        assert_eq!(graded(Value::Array(agent), Value::Array(truth)), None);
        // With a third column.
        let rows: Vec<Value> = (1..=12).map(|m| json!([m, 13 - m, m * 100])).collect();
        let truth = Value::Array(rows.clone());
        assert_eq!(graded(truth.clone(), truth.clone()), None);
        let swapped: Vec<Value> = (1..=12).map(|m| json!([13 - m, m * 100, m])).collect();
        assert_eq!(graded(Value::Array(swapped), truth.clone()), None);
        // Origin and destination cities.
        let trips = json!([
            ["Oslo", "Rome", 3],
            ["Rome", "Oslo", 5],
            ["Oslo", "Paris", 2],
            ["Paris", "Rome", 1]
        ]);
        let reordered = json!([
            [1, "Rome", "Paris"],
            [2, "Paris", "Oslo"],
            [5, "Oslo", "Rome"],
            [3, "Rome", "Oslo"]
        ]);
        assert_eq!(graded(reordered, trips.clone()), None);
        let wrong = json!([
            [1, "Paris", "Rome"],
            [2, "Oslo", "Paris"],
            [5, "Rome", "Oslo"],
            [3, "Oslo", "Rome"]
        ]);
        assert_eq!(graded(wrong, trips), None, "the same trips, columns swapped");
    }

    #[test]
    fn the_analysis_names_the_row_the_column_and_both_values() {
        let truth = Sheet {
            names: vec!["region".into(), "revenue".into()],
            ..sheet("c", &json!([["East", 6646], ["West", 10787]]))
        };
        let agent = sheet("a", &json!([["East", 6646], ["West", 10900]]));
        let miss = grade(&agent, &truth, None).unwrap().unwrap();
        assert_eq!(miss.reason, Some(Reason::ValueMismatch));
        assert_eq!(
            miss.analysis,
            "column 2 of the ground truth (revenue) has no match: row West 10787 vs 10900"
        );
        // Without a column to find the row by, what each side lacks.
        let miss = graded(json!([[1], [5], [3]]), json!([[1], [2], [3]])).unwrap();
        assert_eq!(
            miss.analysis,
            "column 1 of the ground truth (c1) has no match: the ground truth has 2 where the agent has 5"
        );
    }

    #[test]
    fn wide_results_of_equal_columns_are_matched_at_once() {
        // 500 columns of equal values on both sides: every agent column is
        // a candidate for every truth column (500! assignments).
        let row = Value::Array(vec![json!(1); 500]);
        let rows = Value::Array(vec![row; 200]);
        let agent = sheet("a", &rows);
        let truth = sheet("c", &rows);
        assert_eq!(grade_within(&agent, &truth, None, 10_000).unwrap(), None);
    }

    #[test]
    fn a_search_past_its_bound_says_so() {
        let rows: Vec<Value> = (0..12)
            .map(|m| json!([m, (m * 5) % 12, (m * 7) % 12, 11 - m]))
            .collect();
        let truth = sheet("c", &Value::Array(rows.clone()));
        let reversed: Vec<Value> = rows
            .iter()
            .map(|row| {
                let cells = row.as_array().unwrap();
                Value::Array(cells.iter().rev().cloned().collect())
            })
            .collect();
        let agent = sheet("a", &Value::Array(reversed));
        assert_eq!(grade_within(&agent, &truth, None, SEARCH_BUDGET).unwrap(), None);
        let miss = grade_within(&agent, &truth, None, 20).unwrap().unwrap();
        assert_eq!(miss.verdict, Verdict::Review);
        assert!(
            miss.analysis
                .starts_with("undecided: 4 ground-truth columns share their values with 4 agent columns"),
            "{}",
            miss.analysis
        );
    }

    #[test]
    fn grading_stops_at_the_deadline() {
        let rows: Vec<Value> = (0..12).map(|m| json!([m, 11 - m])).collect();
        let truth = sheet("c", &Value::Array(rows.clone()));
        let past = Instant::now();
        assert_eq!(grade(&truth, &truth, Some(past)), Err(OutOfTime));
    }

    /// A table of small values (so columns often share them), as rows of
    /// JSON texts.
    fn table() -> impl Strategy<Value = Vec<Vec<String>>> {
        let cell = prop_oneof![
            (0..4i32).prop_map(|n| n.to_string()),
            (0..3i32).prop_map(|n| format!("\"{n}\"")),
            prop::sample::select(vec!["\"a\"", "\"b\"", "null", "1.0", "-0"]).prop_map(str::to_string),
        ];
        (1..5usize, 0..14usize)
            .prop_flat_map(move |(width, rows)| prop::collection::vec(prop::collection::vec(cell.clone(), width), rows))
    }

    /// A table whose columns all hold the same values in other orders (a
    /// month and its rank), so most pairings of columns are wrong.
    fn ambiguous_table() -> impl Strategy<Value = Vec<Vec<String>>> {
        (2..6usize, 2..10usize).prop_flat_map(|(width, rows)| {
            let base = prop::collection::vec(0..4i32, rows);
            (base, prop::collection::vec(any::<u64>(), width)).prop_map(move |(base, seeds)| {
                let columns: Vec<Vec<i32>> = seeds
                    .iter()
                    .map(|&seed| {
                        let mut column = base.clone();
                        fastrand::Rng::with_seed(seed).shuffle(&mut column);
                        column
                    })
                    .collect();
                (0..base.len())
                    .map(|row| columns.iter().map(|column| column[row].to_string()).collect())
                    .collect()
            })
        })
    }

    /// Grades tables given as rows of JSON texts.
    fn graded_rows(agent: &[Vec<String>], truth: &[Vec<String>]) -> Option<Miss> {
        let of = |rows: &[Vec<String>]| {
            let mut sheet = Sheet {
                names: (0..rows.first().map_or(0, Vec::len)).map(|i| format!("c{i}")).collect(),
                ..Sheet::default()
            };
            push_texts(&mut sheet, rows);
            sheet
        };
        grade(&of(agent), &of(truth), None).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn any_result_passes_against_itself_reordered_renamed_and_widened(
            truth in prop_oneof![table(), ambiguous_table()],
            seed in any::<u64>(),
            extra in prop::collection::vec(prop::sample::select(vec!["0", "1", "\"a\"", "null"]), 0..3),
        ) {
            let width = truth.first().map_or(0, Vec::len);
            let mut rng = fastrand::Rng::with_seed(seed);
            let mut order: Vec<usize> = (0..width + extra.len()).collect();
            rng.shuffle(&mut order);
            let mut rows = truth.clone();
            rng.shuffle(&mut rows);
            let agent: Vec<Vec<String>> = rows
                .iter()
                .enumerate()
                .map(|(row, cells)| {
                    order
                        .iter()
                        .map(|&column| match cells.get(column) {
                            Some(cell) => cell.clone(),
                            // An extra column: any value, not one per row.
                            None => extra[(column - width + row) % extra.len()].to_string(),
                        })
                        .collect()
                })
                .collect();
            prop_assert_eq!(graded_rows(&truth, &truth), None);
            prop_assert_eq!(graded_rows(&agent, &truth), None);
        }

        #[test]
        fn a_changed_cell_fails_with_a_value_mismatch_naming_it(
            truth in table().prop_filter("a row", |rows| !rows.is_empty()),
            row in any::<prop::sample::Index>(),
            column in any::<prop::sample::Index>(),
        ) {
            let mut agent = truth.clone();
            let row = row.index(agent.len());
            let column = column.index(agent[row].len());
            agent[row][column] = "\"changed\"".to_string();
            let miss = graded_rows(&agent, &truth).expect("a changed cell fails");
            prop_assert_eq!(miss.reason, Some(Reason::ValueMismatch));
            let original = serde_json::from_str::<Value>(&truth[row][column]).unwrap();
            let original = original.as_str().map_or(original.to_string(), str::to_string);
            prop_assert!(
                miss.analysis.contains("changed") || miss.analysis.contains(&original),
                "{}", miss.analysis
            );
        }
    }
}
