//! An answer's figures checked against its rows: every number the final
//! answer states ([`find`]) is supported when, rounded to the precision
//! it is written with, it equals a value of the turn's SQL results — a
//! cell, a column's sum, mean, min or max, a row count, or the
//! difference, ratio, percent change or share of two cells ([`support`]).
//! One implementation for `ask --expect-faithful`, `-o json`'s `figures`
//! and `check`'s `expect_faithful`; deterministic and offline.

pub mod find;
pub mod support;

use serde::{Deserialize, Serialize};

pub use support::{Basis, Evidence, Support};

/// How the line of an unsupported figure begins.
const UNSUPPORTED: &str = "Unsupported figure: ";

/// How the line of figures with no rows to support them begins.
const NO_ROWS: &str = "no rows to support the answer's figures: ";

/// True when `line` (a reason a run failed) is one of [`unfaithful`]'s.
pub fn is_unfaithful_line(line: &str) -> bool {
    [UNSUPPORTED, NO_ROWS].iter().any(|start| line.contains(start))
}

/// One figure of an answer, checked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Figure {
    /// As the answer writes it: `1,234`, `€2.4M`, `40%`.
    pub text: String,
    /// Its value (a percentage in percent).
    pub value: f64,
    /// Whether a value of the results supports it; `null` when the rows
    /// it may come from were not all read ([`Figure::unchecked`] says).
    pub supported: Option<bool>,
    /// What supports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Support>,
    /// The value of the results nearest it, when none supports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nearest: Option<Support>,
    /// Why it was not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unchecked: Option<String>,
}

impl Figure {
    /// True when nothing supports it and every row it may come from was
    /// read.
    pub fn is_unsupported(&self) -> bool {
        self.supported == Some(false)
    }

    /// The line that says so: `Unsupported figure: 1,300 (nearest: 1,234
    /// in orders)`.
    pub fn unsupported_line(&self) -> String {
        match &self.nearest {
            Some(nearest) => format!("{UNSUPPORTED}{} (nearest: {})", self.text, describe(nearest)),
            None => format!("{UNSUPPORTED}{}", self.text),
        }
    }
}

/// A value of the results as a person reads it: `1,234 in orders`,
/// `5,000, the sum of orders`, `12 rows of result 1`.
pub fn describe(support: &Support) -> String {
    let value = grouped(support.value);
    let column = support.column.as_deref().unwrap_or("its row");
    match support.basis {
        Basis::Cell => format!("{value} in {column}"),
        Basis::Rows => format!("{value} rows of result {}", support.query),
        Basis::Sum => format!("{value}, the sum of {column}"),
        Basis::Mean => format!("{value}, the mean of {column}"),
        Basis::Min => format!("{value}, the least of {column}"),
        Basis::Max => format!("{value}, the greatest of {column}"),
        Basis::Difference => format!("{value}, a difference in {column}"),
        Basis::Ratio => format!("{value}x, a ratio in {column}"),
        Basis::Change => format!("{value}%, a change in {column}"),
        Basis::Share => format!("{value}%, a share of {column}"),
    }
}

/// A number with thousands grouped and at most four decimals:
/// `1234.5` is `1,234.5`.
pub fn grouped(value: f64) -> String {
    let text = format!("{:.4}", value.abs());
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let fraction = fraction.trim_end_matches('0');
    let mut digits = String::new();
    for (place, digit) in whole.chars().enumerate() {
        if place > 0 && (whole.len() - place) % 3 == 0 {
            digits.push(',');
        }
        digits.push(digit);
    }
    let sign = if value < 0.0 && (whole != "0" || !fraction.is_empty()) {
        "-"
    } else {
        ""
    };
    match fraction {
        "" => format!("{sign}{digits}"),
        fraction => format!("{sign}{digits}.{fraction}"),
    }
}

/// The figures of `answer` (leaving out the numbers of `question`), each
/// checked against `evidence`.
pub fn check(evidence: &Evidence, answer: &str, question: &str) -> Vec<Figure> {
    let bounded = evidence.bounded();
    find::figures(answer, question)
        .into_iter()
        .map(|written| {
            let by = evidence.support(&written);
            let unchecked = match &by {
                Some(_) => None,
                None => bounded.clone(),
            };
            Figure {
                supported: match (&by, &unchecked) {
                    (Some(_), _) => Some(true),
                    (None, Some(_)) => None,
                    (None, None) => Some(false),
                },
                nearest: match by {
                    Some(_) => None,
                    None => evidence.nearest(&written),
                },
                by,
                unchecked,
                text: written.text,
                value: written.value,
            }
        })
        .collect()
}

/// The lines that fail a turn whose figures must be faithful: one per
/// unsupported figure, or one naming the figures when the turn returned
/// no rows to support them.
pub fn unfaithful(figures: &[Figure], no_rows: bool) -> Vec<String> {
    if figures.is_empty() {
        return Vec::new();
    }
    if no_rows {
        let texts: Vec<&str> = figures.iter().map(|figure| figure.text.as_str()).collect();
        return vec![format!("{NO_ROWS}{}", texts.join(", "))];
    }
    figures
        .iter()
        .filter(|figure| figure.is_unsupported())
        .map(Figure::unsupported_line)
        .collect()
}

#[cfg(test)]
mod tests;
