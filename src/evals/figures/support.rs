//! What a figure may be read from: the numbers of a turn's SQL results
//! (the first [`ROWS_CHECKED`] rows of each), and the search for one
//! that supports a figure — a cell, a column's sum, mean, min or max, a
//! row count, or the difference, ratio, percent change or share of two
//! cells — by binary search over each column's sorted values, so a
//! figure costs a few thousand steps however the cells pair.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::find::Written;
use crate::results::SqlResult;
use crate::stream::transcript::Event;
use crate::stream::turn::Observer;

/// How many rows of a result are read for figures: pairs of cells are
/// bounded by them.
pub const ROWS_CHECKED: usize = 1_000;

/// What a value of the results is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Basis {
    /// A cell.
    Cell,
    /// The number of rows of a result.
    Rows,
    /// A column's sum.
    Sum,
    /// A column's mean.
    Mean,
    /// A column's least value.
    Min,
    /// A column's greatest value.
    Max,
    /// One cell minus another.
    Difference,
    /// One cell divided by another.
    Ratio,
    /// The percent change from one cell to another.
    Change,
    /// One cell's share of its column's sum, in percent.
    Share,
}

/// A cell a value is built from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Its row, from 1.
    pub row: usize,
    /// Its column's name.
    pub column: String,
    /// Its value.
    pub value: f64,
}

/// A value of the results, and what it is built from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Support {
    /// What it is.
    pub basis: Basis,
    /// Which SQL result of the turn, from 1.
    pub query: usize,
    /// The column it is of, when one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// Its value (a share or change in percent).
    pub value: f64,
    /// The cells it is built from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<Cell>,
}

/// A column of a result: its numeric cells in row order and sorted, and
/// their sum (none for a column of text).
struct Column {
    name: String,
    /// (row from 0, value), in row order.
    cells: Vec<(usize, f64)>,
    /// The same, by value.
    sorted: Vec<(f64, usize)>,
    sum: f64,
}

/// The numbers of one SQL result.
struct Numbers {
    query: usize,
    columns: Vec<Column>,
    /// Each row's numeric cells: (column, value).
    rows: Vec<Vec<(usize, f64)>>,
    /// How many rows the result has (`totalRows` when it says).
    row_count: u64,
    /// All its rows were read: sums, means and extremes are the result's.
    whole: bool,
}

/// The numbers of a turn's SQL results, that figures are checked against.
#[derive(Default)]
pub struct Evidence {
    results: Vec<Numbers>,
    /// Results the turn returned, failed ones included (their place is
    /// their number).
    seen: usize,
}

/// Reads a turn's SQL results as the turn goes.
impl Observer for Evidence {
    fn event(&mut self, event: &Event) {
        match event {
            Event::ToolFinished(finished) => {
                if let Some((_, result)) = &finished.sql {
                    self.add(result);
                }
            }
            Event::TurnStarts => self.clear(),
            _ => {}
        }
    }
}

/// The number a cell holds: a JSON number, or a string that is one.
fn number(value: &Value) -> Option<f64> {
    let number = match value {
        Value::Number(number) => number.to_string().parse::<f64>().ok(),
        Value::String(text) => text.trim().parse::<f64>().ok(),
        _ => None,
    }?;
    number.is_finite().then_some(number)
}

impl Evidence {
    /// No evidence yet.
    pub fn new() -> Self {
        Evidence::default()
    }

    /// True when no SQL result succeeded.
    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    /// Forgets every result (a turn starts again).
    pub fn clear(&mut self) {
        *self = Evidence::default();
    }

    /// Reads a SQL result of the turn (the next one); a failed one holds
    /// no numbers.
    pub fn add(&mut self, result: &SqlResult) {
        self.seen += 1;
        if result.error.is_some() {
            return;
        }
        let names = result.columns();
        let mut columns: Vec<Column> = names
            .iter()
            .map(|column| Column {
                name: column.name.clone(),
                cells: Vec::new(),
                sorted: Vec::new(),
                sum: 0.0,
            })
            .collect();
        let mut rows = Vec::new();
        for (row, values) in result.row_values().take(ROWS_CHECKED).enumerate() {
            let cells: Vec<(usize, f64)> = values
                .iter()
                .enumerate()
                .filter_map(|(column, value)| number(value).map(|number| (column, number)))
                .filter(|(column, _)| *column < columns.len())
                .collect();
            for &(column, value) in &cells {
                columns[column].cells.push((row, value));
                columns[column].sum += value;
            }
            rows.push(cells);
        }
        for column in &mut columns {
            column.sorted = column.cells.iter().map(|&(row, value)| (value, row)).collect();
            column.sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        let row_count = result
            .total_rows
            .unwrap_or(result.rows().len() as u64)
            .max(rows.len() as u64);
        let whole = !result.is_truncated() && row_count <= ROWS_CHECKED as u64;
        let query = self.seen;
        self.results.push(Numbers {
            query,
            columns,
            rows,
            row_count,
            whole,
        });
    }

    /// True when some result has rows beyond those read.
    pub fn bounded(&self) -> Option<String> {
        self.results.iter().find(|numbers| !numbers.whole).map(|numbers| {
            format!(
                "result {} has {} rows; the first {} were checked",
                numbers.query,
                numbers.row_count,
                (numbers.row_count as usize).min(ROWS_CHECKED)
            )
        })
    }

    /// What supports `figure`, if anything does.
    pub fn support(&self, figure: &Written) -> Option<Support> {
        self.results.iter().find_map(|numbers| numbers.support(figure))
    }

    /// The value of the results nearest `figure`: a cell, a row count or
    /// a column's sum, mean, min or max.
    pub fn nearest(&self, figure: &Written) -> Option<Support> {
        let target = figure.value.abs();
        self.results
            .iter()
            .flat_map(Numbers::direct)
            .map(|support| {
                let value = if figure.percent && support.value.abs() <= 1.0 {
                    support.value * 100.0
                } else {
                    support.value
                };
                ((value.abs() - target).abs(), support)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, support)| support)
    }
}

/// True when `value` is what `figure` says: within half its last digit
/// (by magnitude, unless the figure is written with a sign).
fn says(figure: &Written, value: f64) -> bool {
    let value = if figure.signed { value } else { value.abs() };
    let target = if figure.signed {
        figure.value
    } else {
        figure.value.abs()
    };
    (value - target).abs() <= figure.half + 8.0 * f64::EPSILON * target.abs().max(1.0)
}

/// The values of `sorted` (by value) within `low..=high`.
fn within(sorted: &[(f64, usize)], low: f64, high: f64) -> &[(f64, usize)] {
    let from = sorted.partition_point(|(value, _)| *value < low);
    let to = sorted.partition_point(|(value, _)| *value <= high);
    &sorted[from..to.max(from)]
}

impl Numbers {
    fn cell(&self, column: usize, row: usize, value: f64) -> Cell {
        Cell {
            row: row + 1,
            column: self.columns[column].name.clone(),
            value,
        }
    }

    /// The cells, the row count and each column's aggregates.
    fn direct(&self) -> Vec<Support> {
        let mut direct = vec![Support {
            basis: Basis::Rows,
            query: self.query,
            column: None,
            value: self.row_count as f64,
            cells: Vec::new(),
        }];
        for (index, column) in self.columns.iter().enumerate() {
            let name = Some(column.name.clone());
            for &(row, value) in &column.cells {
                direct.push(Support {
                    basis: Basis::Cell,
                    query: self.query,
                    column: name.clone(),
                    value,
                    cells: vec![self.cell(index, row, value)],
                });
            }
            if !self.whole || column.cells.is_empty() {
                continue;
            }
            let count = column.cells.len() as f64;
            let (min, max) = (column.sorted[0].0, column.sorted[column.sorted.len() - 1].0);
            for (basis, value) in [
                (Basis::Sum, column.sum),
                (Basis::Mean, column.sum / count),
                (Basis::Min, min),
                (Basis::Max, max),
            ] {
                direct.push(Support {
                    basis,
                    query: self.query,
                    column: name.clone(),
                    value,
                    cells: Vec::new(),
                });
            }
        }
        direct
    }

    /// What of this result supports `figure`, if anything does.
    fn support(&self, figure: &Written) -> Option<Support> {
        self.direct_support(figure)
            .or_else(|| self.column_pairs(figure))
            .or_else(|| self.row_pairs(figure))
    }

    fn direct_support(&self, figure: &Written) -> Option<Support> {
        self.direct().into_iter().find(|support| {
            let direct = support.basis == Basis::Cell || !figure.times;
            direct && (says(figure, support.value) || figure.percent && says(figure, support.value * 100.0))
        })
    }

    /// Two cells of one column: their difference, ratio, percent change,
    /// or one's share of the column's sum.
    fn column_pairs(&self, figure: &Written) -> Option<Support> {
        let target = figure.value;
        let half = figure.half;
        for (index, column) in self.columns.iter().enumerate() {
            let pair = |a: (f64, usize), b: (f64, usize), basis: Basis, value: f64| {
                Some(Support {
                    basis,
                    query: self.query,
                    column: Some(column.name.clone()),
                    value,
                    cells: vec![self.cell(index, a.1, a.0), self.cell(index, b.1, b.0)],
                })
            };
            if figure.percent && self.whole && column.sum != 0.0 {
                let (low, high) = bounds(
                    column.sum * (target.abs() - half) / 100.0,
                    column.sum * (target.abs() + half) / 100.0,
                );
                if let Some(&(value, row)) = within(&column.sorted, low, high).first() {
                    return Some(Support {
                        basis: Basis::Share,
                        query: self.query,
                        column: Some(column.name.clone()),
                        value: value / column.sum * 100.0,
                        cells: vec![self.cell(index, row, value)],
                    });
                }
            }
            for &a in &column.sorted {
                if !figure.percent && !figure.times {
                    // a - b = ±target
                    for sign in [1.0, -1.0] {
                        let b = a.0 - sign * target;
                        if let Some(&found) = within(&column.sorted, b - half, b + half).iter().find(|b| b.1 != a.1) {
                            if says(figure, a.0 - found.0) {
                                return pair(a, found, Basis::Difference, a.0 - found.0);
                            }
                        }
                    }
                }
                if a.0 == 0.0 {
                    continue;
                }
                // b / a within the ratio the figure says.
                for ratio in ratios(figure) {
                    let (low, high) = bounds(a.0 * (ratio - ratio_half(figure)), a.0 * (ratio + ratio_half(figure)));
                    if let Some(&b) = within(&column.sorted, low, high).iter().find(|b| b.1 != a.1) {
                        let (basis, value) = relation(figure, a.0, b.0);
                        if says(figure, value) {
                            return pair(a, b, basis, value);
                        }
                    }
                }
            }
        }
        None
    }

    /// Two numeric cells of one row: their difference, ratio or percent
    /// change.
    fn row_pairs(&self, figure: &Written) -> Option<Support> {
        for (row, cells) in self.rows.iter().enumerate() {
            for &(x, a) in cells {
                for &(y, b) in cells {
                    if x == y {
                        continue;
                    }
                    let (basis, value) = match (figure.percent || figure.times, a) {
                        (false, _) => (Basis::Difference, b - a),
                        (true, 0.0) => continue,
                        (true, _) => relation(figure, a, b),
                    };
                    if says(figure, value) {
                        return Some(Support {
                            basis,
                            query: self.query,
                            column: None,
                            value,
                            cells: vec![self.cell(x, row, a), self.cell(y, row, b)],
                        });
                    }
                }
            }
        }
        None
    }
}

/// `low..=high`, whichever way round they came.
fn bounds(a: f64, b: f64) -> (f64, f64) {
    (a.min(b), a.max(b))
}

/// The ratios `b / a` a figure may say: a multiple (`2.3x`), or a
/// percent change either way (`12%`: 1.12 or 0.88).
fn ratios(figure: &Written) -> Vec<f64> {
    match (figure.times, figure.percent) {
        (true, _) => vec![figure.value.abs()],
        (_, true) if figure.signed => vec![1.0 + figure.value / 100.0],
        (_, true) => vec![1.0 + figure.value.abs() / 100.0, 1.0 - figure.value.abs() / 100.0],
        _ => Vec::new(),
    }
}

/// Half the last digit of a figure, as a ratio.
fn ratio_half(figure: &Written) -> f64 {
    if figure.percent {
        figure.half / 100.0
    } else {
        figure.half
    }
}

/// What `b` is to `a` as the figure writes it: a ratio, or a percent
/// change.
fn relation(figure: &Written, a: f64, b: f64) -> (Basis, f64) {
    if figure.times {
        (Basis::Ratio, b / a)
    } else {
        (Basis::Change, (b - a) / a.abs() * 100.0)
    }
}
