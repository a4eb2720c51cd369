//! Expectations on a chat, for CI smoke checks (`ask --expect-*`, `check`):
//! the final answer matches, some SQL query matches, a tool was called, the
//! selected result has enough rows, or the very rows expected
//! ([`Check::compare_rows`]). Each unmet one is a line saying what was
//! expected and what came.

use std::cell::OnceCell;
use std::cmp::Ordering;

use anyhow::Result;
use regex::Regex;
use serde_json::Value;

use crate::error::usage;
use crate::evals::figures::{check, unfaithful, Evidence, Figure};

use crate::results::{same_tool, Pick, Picker, RowSource};
use crate::stream::transcript::{Event, Transcript};
use crate::stream::turn::Observer;
use crate::text::shorten;

/// What a chat must show to pass (`ask --expect-*`, a `check` turn): the
/// patterns compiled, the tools and the row count.
#[derive(Clone, Debug, Default)]
pub struct Expectations {
    /// `--expect-answer`.
    pub answer: Option<Regex>,
    /// `--expect-sql`.
    pub sql: Option<Regex>,
    /// `--expect-tool`, in order.
    pub tools: Vec<String>,
    /// `--min-rows`, and the SQL result it counts.
    pub min_rows: Option<(u64, Pick)>,
    /// `--expect-faithful`: every figure of the answer supported by the
    /// rows.
    pub faithful: bool,
}

impl Expectations {
    /// Compiles the expectations; a bad regular expression is a usage error
    /// naming `what` gave it (a flag prefix, or a suite field's place).
    pub fn new(
        answer: Option<&str>,
        sql: Option<&str>,
        tools: &[String],
        min_rows: Option<u64>,
        pick: Pick,
        what: &str,
    ) -> Result<Self> {
        let compile =
            |pattern: Option<&str>, name: &str| pattern.map(|p| regex(p, &format!("{what}{name}"))).transpose();
        Ok(Expectations {
            answer: compile(answer, "expect-answer")?,
            sql: compile(sql, "expect-sql")?,
            tools: tools.to_vec(),
            min_rows: min_rows.map(|min| (min, pick)),
            faithful: false,
        })
    }
}

/// Compiles the regular expression `pattern` that `what` gave; an error
/// is one line: what is wrong, and where in the pattern.
pub fn regex(pattern: &str, what: &str) -> Result<Regex> {
    Regex::new(pattern).map_err(|err| {
        let why = match &err {
            regex::Error::Syntax(text) => {
                let lines: Vec<&str> = text.lines().collect();
                let column = lines
                    .iter()
                    .find_map(|line| line.find('^'))
                    .map(|at| at.saturating_sub(4) + 1);
                let reason = lines
                    .iter()
                    .rev()
                    .find_map(|line| line.strip_prefix("error: "))
                    .unwrap_or(text.as_str());
                match column {
                    Some(column) => format!("{reason} at character {column}"),
                    None => reason.to_string(),
                }
            }
            other => other.to_string(),
        };
        usage(format!("{what} {pattern:?} is not a valid regular expression: {why}"))
    })
}

/// How much of what came is quoted in a failure line.
const QUOTE_CHARS: usize = 120;

/// The expectations of a turn, and the SQL result `--min-rows` counts and
/// rows are compared with, kept as the turn goes; and, when they are
/// reported or must be faithful, the numbers of its results that the
/// answer's figures are checked against.
pub struct Check {
    expectations: Expectations,
    picker: Option<Picker>,
    figures: Option<Figures>,
}

/// A turn's figures as they are checked: the numbers of its results,
/// the question whose numbers are not figures, and the figures once
/// found.
struct Figures {
    evidence: Evidence,
    question: String,
    found: OnceCell<Vec<Figure>>,
}

impl Observer for Check {
    fn event(&mut self, event: &Event) {
        if let Some(picker) = &mut self.picker {
            picker.event(event);
        }
        if let Some(figures) = &mut self.figures {
            figures.evidence.event(event);
        }
    }
}

impl Check {
    /// A check of `expectations`; it keeps a SQL result only when
    /// `--min-rows` counts one.
    pub fn new(expectations: Expectations) -> Self {
        let picker = expectations.min_rows.map(|(_, pick)| Picker::new(pick));
        let mut check = Check {
            picker,
            figures: None,
            expectations,
        };
        if check.expectations.faithful {
            check = check.reading_figures("");
        }
        check
    }

    /// The same check, reading the turn's results for the figures of its
    /// answer to `question` (whose own numbers are not figures).
    pub fn reading_figures(mut self, question: &str) -> Self {
        self.figures = Some(Figures {
            evidence: Evidence::new(),
            question: question.to_string(),
            found: OnceCell::new(),
        });
        self
    }

    /// The answer's figures, each checked against the turn's results;
    /// `None` when they are not read. Found once.
    pub fn figures(&self, transcript: &Transcript) -> Option<&[Figure]> {
        let figures = self.figures.as_ref()?;
        let found = figures.found.get_or_init(|| match transcript.answer() {
            Some((answer, _)) => check(&figures.evidence, &answer, &figures.question),
            None => Vec::new(),
        });
        Some(found)
    }

    /// The same check, keeping the selected result (`--min-rows`'s pick,
    /// else the last that succeeded) for [`Check::compare_rows`].
    pub fn keeping_result(mut self) -> Self {
        self.picker.get_or_insert_with(|| Picker::new(Pick::Last));
        self
    }

    /// One line per unmet expectation; empty when all are met.
    pub fn unmet(&self, transcript: &Transcript) -> Vec<String> {
        let expectations = &self.expectations;
        let mut unmet = Vec::new();
        if let Some(pattern) = &expectations.answer {
            match transcript.answer() {
                Some((text, _)) if pattern.is_match(&text) => {}
                Some((text, _)) => unmet.push(format!(
                    "expected the answer to match /{pattern}/, got {:?}",
                    quote(&text)
                )),
                None => unmet.push(format!("expected the answer to match /{pattern}/, got no answer")),
            }
        }
        if let Some(pattern) = &expectations.sql {
            let queries = transcript.sql_queries();
            if !queries.iter().any(|sql| pattern.is_match(sql)) {
                let came = match queries {
                    [] => "the agent ran no SQL query".to_string(),
                    [one] => format!("the query was {:?}", quote(one)),
                    many => format!(
                        "none of its {} queries did; the last was {:?}",
                        many.len(),
                        quote(&many[many.len() - 1])
                    ),
                };
                unmet.push(format!("expected a SQL query matching /{pattern}/; {came}"));
            }
        }
        let called = transcript.tools_called();
        for tool in &expectations.tools {
            if !called.iter().any(|name| same_tool(name, tool)) {
                let came = if called.is_empty() {
                    "none".to_string()
                } else {
                    called.iter().map(String::as_str).collect::<Vec<_>>().join(", ")
                };
                unmet.push(format!("expected a call to tool {tool}; the agent called: {came}"));
            }
        }
        if expectations.faithful {
            if let (Some(figures), Some(reading)) = (self.figures(transcript), &self.figures) {
                unmet.extend(unfaithful(figures, reading.evidence.is_empty()));
            }
        }
        if let (Some((min, pick)), Some(picker)) = (expectations.min_rows, &self.picker) {
            let which = pick.describe();
            match picker.picked() {
                Ok(result) => {
                    let rows = result.total_rows.unwrap_or(result.rows().len() as u64);
                    if rows < min {
                        unmet.push(format!(
                            "expected at least {min} rows in {which}; it has {rows} (totalRows)"
                        ));
                    }
                }
                Err(err) => unmet.push(format!("expected at least {min} rows in {which}; {err}")),
            }
        }
        unmet
    }

    /// Compares the selected result's rows with `expected` as `how` says;
    /// `what` names where the expected rows came from (`reference_sql`).
    /// A result the stream holds only part of is fetched whole from
    /// `source` first. None when they are equal; else a line that says
    /// where they first differ.
    pub fn compare_rows(
        &mut self,
        expected: &[Vec<Value>],
        how: Comparison,
        what: &str,
        source: Option<&dyn RowSource>,
    ) -> Option<String> {
        let picked = match &mut self.picker {
            Some(picker) => picker.picked_mut(),
            None => return Some(format!("expected the rows of {what}; the check kept no SQL result")),
        };
        let result = match picked {
            Ok(result) => result,
            Err(err) => return Some(format!("expected the rows of {what}; {err}")),
        };
        if result.is_truncated() {
            let got = result.rows().len();
            let total = result.total_rows.unwrap_or_default();
            let fetched = match source {
                Some(source) => result.complete(source).map_err(|err| format!("{err:#}")),
                None => Err("no data query API to fetch the rest with (set ANALYST_DATA_URL and a credential)".into()),
            };
            if let Err(why) = fetched {
                return Some(format!(
                    "cannot compare with {what}: the stream holds {got} of the result's {total} rows and {why}"
                ));
            }
        }
        let got: Vec<Vec<Value>> = result.row_values().collect();
        compare(got, expected, how)
            .err()
            .map(|why| format!("rows differ from {what}: {why}"))
    }
}

/// How rows are compared: in order or sorted, numbers exactly or within a
/// relative tolerance.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Comparison {
    /// Compare the rows in the order they came (`ordered = true`); else both
    /// sides are sorted first.
    pub ordered: bool,
    /// The relative difference allowed between two numbers (0: exact).
    pub tolerance: f64,
}

/// A value as compared: null, a number (also one sent as a string), or
/// text (a boolean or anything else as its JSON).
#[derive(Debug)]
enum Compared {
    Null,
    Number { value: f64, integer: Option<i128> },
    Text(String),
}

impl Compared {
    fn of(value: &Value) -> Compared {
        let text = match value {
            Value::Null => return Compared::Null,
            Value::String(text) => text.trim().to_string(),
            Value::Number(number) => number.to_string(),
            other => return Compared::Text(other.to_string()),
        };
        match text.parse::<f64>() {
            Ok(number) if number.is_finite() => Compared::Number {
                value: number,
                integer: text.parse::<i128>().ok(),
            },
            _ => Compared::Text(match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            }),
        }
    }

    /// The order rows are sorted in: nulls, then numbers, then text.
    fn order(&self, other: &Compared) -> Ordering {
        match (self, other) {
            (Compared::Null, Compared::Null) => Ordering::Equal,
            (Compared::Null, _) => Ordering::Less,
            (_, Compared::Null) => Ordering::Greater,
            (Compared::Number { value: a, .. }, Compared::Number { value: b, .. }) => a.total_cmp(b),
            (Compared::Number { .. }, Compared::Text(_)) => Ordering::Less,
            (Compared::Text(_), Compared::Number { .. }) => Ordering::Greater,
            (Compared::Text(a), Compared::Text(b)) => a.cmp(b),
        }
    }

    fn equals(&self, other: &Compared, tolerance: f64) -> bool {
        match (self, other) {
            (Compared::Null, Compared::Null) => true,
            (Compared::Text(a), Compared::Text(b)) => a == b,
            (Compared::Number { integer: Some(x), .. }, Compared::Number { integer: Some(y), .. })
                if tolerance == 0.0 =>
            {
                x == y
            }
            (Compared::Number { value: a, .. }, Compared::Number { value: b, .. }) => {
                a == b || (a - b).abs() <= tolerance * a.abs().max(b.abs())
            }
            _ => false,
        }
    }
}

fn order_rows(a: &[Compared], b: &[Compared]) -> Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.order(y))
        .find(|order| order.is_ne())
        .unwrap_or_else(|| a.len().cmp(&b.len()))
}

/// Compares `got` with `expected`: the same number of rows, each of the
/// same width and equal column by column (after sorting both, unless
/// `how.ordered`). `Err` says where they first differ, with both values.
pub fn compare(got: Vec<Vec<Value>>, expected: &[Vec<Value>], how: Comparison) -> Result<(), String> {
    if got.len() != expected.len() {
        return Err(format!(
            "the agent's result has {} rows, expected {}",
            got.len(),
            expected.len()
        ));
    }
    let cells = |rows: &[Vec<Value>]| -> Vec<(usize, Vec<Compared>)> {
        let mut cells: Vec<(usize, Vec<Compared>)> = rows
            .iter()
            .map(|row| row.iter().map(Compared::of).collect())
            .enumerate()
            .collect();
        if !how.ordered {
            cells.sort_by(|(_, a), (_, b)| order_rows(a, b));
        }
        cells
    };
    let (got_cells, expected_cells) = (cells(&got), cells(expected));
    let sorted = if how.ordered { "" } else { " (both sorted)" };
    for (place, ((g, got_row), (e, expected_row))) in got_cells.iter().zip(&expected_cells).enumerate() {
        if got_row.len() != expected_row.len() {
            return Err(format!(
                "row {}{sorted} has {} columns, expected {}",
                place + 1,
                got_row.len(),
                expected_row.len()
            ));
        }
        if let Some(column) = got_row
            .iter()
            .zip(expected_row)
            .position(|(a, b)| !a.equals(b, how.tolerance))
        {
            return Err(format!(
                "row {}{sorted}, column {}: the agent's result has {}, expected {}",
                place + 1,
                column + 1,
                quote(&got[*g][column].to_string()),
                quote(&expected[*e][column].to_string())
            ));
        }
    }
    Ok(())
}

fn quote(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => shorten(&one_line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows(value: Value) -> Vec<Vec<Value>> {
        serde_json::from_value(value).unwrap()
    }

    const EXACT: Comparison = Comparison {
        ordered: false,
        tolerance: 0.0,
    };

    #[test]
    fn sorted_rows_with_numbers_sent_as_strings_are_equal() {
        let got = rows(json!([["EMEA", "100.0"], ["AMER", "25"], [null, "7"]]));
        let expected = rows(json!([[null, 7], ["AMER", 25], ["EMEA", 100]]));
        assert_eq!(compare(got, &expected, EXACT), Ok(()));
    }

    #[test]
    fn the_first_difference_is_named_with_both_values() {
        let got = rows(json!([["AMER", "25"], ["EMEA", "100.5"]]));
        let expected = rows(json!([["EMEA", 100], ["AMER", 25]]));
        assert_eq!(
            compare(got.clone(), &expected, EXACT),
            Err("row 2 (both sorted), column 2: the agent's result has \"100.5\", expected 100".into())
        );
        let ordered = Comparison { ordered: true, ..EXACT };
        assert_eq!(
            compare(got.clone(), &expected, ordered),
            Err("row 1, column 1: the agent's result has \"AMER\", expected \"EMEA\"".into())
        );
        let loose = Comparison {
            tolerance: 0.01,
            ..EXACT
        };
        assert_eq!(compare(got, &expected, loose), Ok(()));
    }

    #[test]
    fn counts_widths_and_big_integers_are_compared_exactly() {
        let expected = rows(json!([[1, 2]]));
        assert_eq!(
            compare(rows(json!([[1, 2], [3, 4]])), &expected, EXACT),
            Err("the agent's result has 2 rows, expected 1".into())
        );
        assert_eq!(
            compare(rows(json!([[1]])), &expected, EXACT),
            Err("row 1 (both sorted) has 1 columns, expected 2".into())
        );
        let big = rows(json!([["9007199254740993"]]));
        assert!(compare(big, &rows(json!([[9007199254740992_u64]])), EXACT).is_err());
        assert!(compare(rows(json!([["x"]])), &rows(json!([[null]])), EXACT).is_err());
        assert!(compare(rows(json!([[true]])), &rows(json!([["true"]])), EXACT).is_ok());
    }
}
