//! Grading as Cube grades its eval questions: the agent's result set
//! against the ground truth's, by execution. Row order never matters (the
//! rows are multisets: duplicates count), numbers compare to 4 significant
//! figures (also numbers sent as strings), column names are ignored and
//! extra agent columns allowed: each ground-truth column must be matched,
//! by its values, by a distinct agent column. The failure reasons come in
//! Cube's order: missing columns, too few rows, too many rows, then values.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// A table to grade: its column names (for the analysis only) and rows.
#[derive(Clone, Copy, Debug)]
pub struct ResultSet<'a> {
    /// The column names, in order.
    pub columns: &'a [String],
    /// The rows, values in column order.
    pub rows: &'a [Vec<Value>],
}

impl ResultSet<'_> {
    /// How many columns: the names', or the widest row's when there are none.
    fn width(&self) -> usize {
        self.columns
            .len()
            .max(self.rows.iter().map(Vec::len).max().unwrap_or(0))
    }
}

/// A value as graded: null, a number rounded to 4 significant figures
/// (its digits and power of ten: `6646.4` is 6646 × 10^0), or text (by its
/// number in the [`Texts`] of the grading). Small and `Copy`: a table of a
/// million cells costs 16 MB, whatever its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Cell {
    Null,
    Number { digits: i32, power: i32 },
    Text(u32),
}

/// The texts of a grading, each distinct one kept once.
#[derive(Default)]
struct Texts(HashMap<String, u32>);

impl Texts {
    /// The cell of `value`: a number sent as a string is a number.
    fn cell(&mut self, value: Option<&Value>) -> Cell {
        let text = match value {
            None | Some(Value::Null) => return Cell::Null,
            Some(Value::String(text)) => text.as_str(),
            Some(Value::Number(number)) => return number_cell(&number.to_string()).unwrap_or(Cell::Null),
            Some(other) => return self.text(&other.to_string()),
        };
        number_cell(text.trim()).unwrap_or_else(|| self.text(text))
    }

    fn text(&mut self, text: &str) -> Cell {
        let next = self.0.len() as u32;
        Cell::Text(*self.0.entry(text.to_string()).or_insert(next))
    }
}

/// A finite number to 4 significant figures (`-0` is `0`), rounded as its
/// exact decimal value rounds.
fn number_cell(text: &str) -> Option<Cell> {
    let number: f64 = text.parse().ok().filter(|n: &f64| n.is_finite())?;
    if number == 0.0 {
        return Some(Cell::Number { digits: 0, power: 0 });
    }
    let written = format!("{number:.3e}");
    let (mantissa, power) = written.split_once('e')?;
    Some(Cell::Number {
        digits: mantissa.replace('.', "").parse().ok()?,
        power: power.parse().ok()?,
    })
}

/// The value as the analysis shows it.
fn shown(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "null".to_string(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// Grades `agent` against `truth`: `None` when it passes, else the reason
/// and the analysis.
pub fn grade(agent: ResultSet<'_>, truth: ResultSet<'_>) -> Option<Miss> {
    let (agent_width, truth_width) = (agent.width(), truth.width());
    if agent_width < truth_width {
        return Some(Miss::new(
            Reason::MissingColumns,
            format!(
                "the agent returned {agent_width} column{}, the ground truth has {truth_width}",
                plural(agent_width)
            ),
        ));
    }
    let (got, want) = (agent.rows.len(), truth.rows.len());
    if got != want {
        let reason = match got < want {
            true => Reason::RowCountMismatch,
            false => Reason::UnexpectedRows,
        };
        return Some(Miss::new(
            reason,
            format!(
                "the agent returned {got} row{}, the ground truth has {want}",
                plural(got)
            ),
        ));
    }
    let mut texts = Texts::default();
    let agent_columns = columns(agent.rows, agent_width, &mut texts);
    let truth_columns = columns(truth.rows, truth_width, &mut texts);
    let tables = Tables {
        agent,
        truth,
        agent_columns: &agent_columns,
        truth_columns: &truth_columns,
    };
    let mut candidates: Vec<Vec<usize>> = truth_columns
        .iter()
        .map(|column| {
            (0..agent_width)
                .filter(|&a| {
                    agent_columns[a].fingerprint == column.fingerprint && agent_columns[a].sorted == column.sorted
                })
                .collect()
        })
        .collect();
    loop {
        let matching = match match_columns(&candidates, agent_width) {
            Ok(matching) => matching,
            Err(unmatched) => return Some(tables.value_mismatch(&candidates, unmatched)),
        };
        // None: every row pairs, the question passes.
        let row = tables.first_unpaired_row(&matching)?;
        // Columns that match one by one may still pair their values in
        // other rows: keep only candidates that pair with every column
        // that has a single candidate, and match again.
        if !refine(&mut candidates, &agent_columns, &truth_columns) {
            return Some(tables.rows_do_not_pair(row));
        }
    }
}

fn plural(count: usize) -> &'static str {
    if count == 1 {
        ""
    } else {
        "s"
    }
}

/// A column's cells in row order, sorted, and a hash of the sorted cells.
struct Column {
    cells: Vec<Cell>,
    sorted: Vec<Cell>,
    fingerprint: u64,
}

fn columns(rows: &[Vec<Value>], width: usize, texts: &mut Texts) -> Vec<Column> {
    (0..width)
        .map(|index| {
            let cells: Vec<Cell> = rows.iter().map(|row| texts.cell(row.get(index))).collect();
            let mut sorted = cells.clone();
            sorted.sort_unstable();
            let mut hasher = DefaultHasher::new();
            sorted.hash(&mut hasher);
            Column {
                cells,
                sorted,
                fingerprint: hasher.finish(),
            }
        })
        .collect()
}

/// A maximum matching of ground-truth columns to distinct agent columns
/// among `candidates` (augmenting paths: polynomial, and two equal
/// ground-truth columns cannot both claim one agent column). `Err` is the
/// first ground-truth column left without one.
fn match_columns(candidates: &[Vec<usize>], agent_width: usize) -> Result<Vec<usize>, usize> {
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
    for truth in 0..candidates.len() {
        let mut seen = vec![false; agent_width];
        if !augment(truth, candidates, &mut owner, &mut seen) {
            return Err(truth);
        }
    }
    let mut matching = vec![0; candidates.len()];
    for (agent, truth) in owner.iter().enumerate() {
        if let Some(truth) = truth {
            matching[*truth] = agent;
        }
    }
    Ok(matching)
}

/// The ground-truth columns with a single candidate, each with it.
fn settled(candidates: &[Vec<usize>]) -> Vec<(usize, usize)> {
    candidates
        .iter()
        .enumerate()
        .filter(|(_, found)| found.len() == 1)
        .map(|(truth, found)| (truth, found[0]))
        .collect()
}

/// Drops each candidate that does not pair with a column already settled
/// (one candidate): the pairs of values, row by row, must be the same
/// multiset. True when a candidate was dropped.
fn refine(candidates: &mut [Vec<usize>], agent: &[Column], truth: &[Column]) -> bool {
    let pairs = |a: &[Cell], b: &[Cell]| {
        let mut pairs: Vec<(Cell, Cell)> = a.iter().copied().zip(b.iter().copied()).collect();
        pairs.sort_unstable();
        pairs
    };
    let settled = settled(candidates);
    let mut dropped = false;
    for (truth_index, found) in candidates.iter_mut().enumerate() {
        if found.len() < 2 {
            continue;
        }
        let before = found.len();
        // The ground truth's pairs, once for all the candidates.
        let wanted: Vec<(usize, Vec<(Cell, Cell)>)> = settled
            .iter()
            .map(|&(anchor, anchor_agent)| (anchor_agent, pairs(&truth[anchor].cells, &truth[truth_index].cells)))
            .collect();
        found.retain(|&agent_index| {
            wanted.iter().all(|(anchor_agent, pairs_wanted)| {
                pairs(&agent[*anchor_agent].cells, &agent[agent_index].cells) == *pairs_wanted
            })
        });
        dropped |= found.len() < before;
    }
    dropped
}

/// Both sides of a grading: the rows as sent (for the analysis) and their
/// cells by column.
struct Tables<'a> {
    agent: ResultSet<'a>,
    truth: ResultSet<'a>,
    agent_columns: &'a [Column],
    truth_columns: &'a [Column],
}

impl Tables<'_> {
    /// The cells of row `row` of `columns`, in the order of `indexes`.
    fn key(columns: &[Column], indexes: impl Iterator<Item = usize>, row: usize) -> Vec<Cell> {
        indexes.map(|index| columns[index].cells[row]).collect()
    }

    /// The first ground-truth row the agent's rows, cut to the matched
    /// columns in ground-truth order, lack (as multisets); `None` when
    /// they are the same rows.
    fn first_unpaired_row(&self, matching: &[usize]) -> Option<usize> {
        let mut counts: HashMap<Vec<Cell>, i64> = HashMap::with_capacity(self.agent.rows.len());
        for row in 0..self.agent.rows.len() {
            *counts
                .entry(Tables::key(self.agent_columns, matching.iter().copied(), row))
                .or_default() += 1;
        }
        (0..self.truth.rows.len()).find(|&row| {
            match counts.get_mut(&Tables::key(self.truth_columns, 0..matching.len(), row)) {
                Some(count) if *count > 0 => {
                    *count -= 1;
                    false
                }
                _ => true,
            }
        })
    }

    /// The analysis of a ground-truth column no agent column matches: its
    /// first row whose value differs from the agent's row with the same
    /// values in the matched columns, else the first difference of the two
    /// columns sorted.
    fn value_mismatch(&self, candidates: &[Vec<usize>], column: usize) -> Miss {
        let name = self
            .truth
            .columns
            .get(column)
            .map_or(String::new(), |name| format!(" ({name})"));
        let head = format!("column {} of the ground truth{name} has no match", column + 1);
        let matched: Vec<(usize, usize)> = settled(candidates)
            .into_iter()
            .filter(|&(truth_index, _)| truth_index != column)
            .collect();
        let compared = (column..self.agent_columns.len())
            .chain(0..column)
            .find(|agent_index| !matched.iter().any(|(_, used)| used == agent_index));
        let Some(compared) = compared else {
            return Miss::new(Reason::ValueMismatch, head);
        };
        let agent_by_key: HashMap<Vec<Cell>, usize> = (0..self.agent.rows.len())
            .map(|row| {
                let key = Tables::key(self.agent_columns, matched.iter().map(|&(_, agent)| agent), row);
                (key, row)
            })
            .collect();
        for row in 0..self.truth.rows.len() {
            let key = Tables::key(self.truth_columns, matched.iter().map(|&(truth, _)| truth), row);
            let Some(&other) = agent_by_key.get(&key) else {
                continue;
            };
            if self.truth_columns[column].cells[row] != self.agent_columns[compared].cells[other] {
                let label = matched.first().map_or(String::new(), |&(truth_index, _)| {
                    format!("{} ", shown(self.truth.rows[row].get(truth_index)))
                });
                return Miss::new(
                    Reason::ValueMismatch,
                    format!(
                        "{head}: row {label}{} vs {}",
                        shown(self.truth.rows[row].get(column)),
                        shown(self.agent.rows[other].get(compared))
                    ),
                );
            }
        }
        let sorted = |rows: &[Vec<Value>], cells: &[Cell], index: usize| {
            let mut values: Vec<(Cell, usize)> = cells.iter().copied().zip(0..).collect();
            values.sort_unstable();
            values
                .into_iter()
                .map(|(cell, row)| (cell, shown(rows[row].get(index))))
                .collect::<Vec<_>>()
        };
        let difference = sorted(self.truth.rows, &self.truth_columns[column].cells, column)
            .into_iter()
            .zip(sorted(self.agent.rows, &self.agent_columns[compared].cells, compared))
            .find(|((a, _), (b, _))| a != b);
        match difference {
            Some(((_, want), (_, got))) => Miss::new(
                Reason::ValueMismatch,
                format!("{head}: {want} vs {got} (the columns sorted)"),
            ),
            None => Miss::new(Reason::ValueMismatch, head),
        }
    }

    /// The analysis when every column has a match but the rows do not
    /// pair: the ground-truth row `row` the agent's result lacks.
    fn rows_do_not_pair(&self, row: usize) -> Miss {
        let shown: Vec<String> = (0..self.truth_columns.len())
            .map(|index| shown(self.truth.rows[row].get(index)))
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows(value: Value) -> Vec<Vec<Value>> {
        serde_json::from_value(value).unwrap()
    }

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    /// Grades agent rows against truth rows (columns named `c1…`).
    fn graded(agent: Value, truth: Value) -> Option<Miss> {
        let (agent, truth) = (rows(agent), rows(truth));
        let width = |rows: &[Vec<Value>]| rows.iter().map(Vec::len).max().unwrap_or(0);
        let truth_names: Vec<String> = (1..=width(&truth)).map(|i| format!("c{i}")).collect();
        let agent_names: Vec<String> = (1..=width(&agent)).map(|i| format!("a{i}")).collect();
        grade(
            ResultSet {
                columns: &agent_names,
                rows: &agent,
            },
            ResultSet {
                columns: &truth_names,
                rows: &truth,
            },
        )
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
        assert_eq!(graded(json!([[0.0001234]]), json!([[0.00012344]])), None);
        assert_eq!(graded(json!([[-12.341]]), json!([[-12.34]])), None);
        assert_eq!(graded(json!([[-0.0]]), json!([[0]])), None);
        assert_eq!(
            reason(graded(json!([[6656]]), json!([[6646]]))),
            Some(Reason::ValueMismatch),
            "the 3rd figure differs"
        );
        assert_eq!(
            reason(graded(json!([[6647]]), json!([[6646]]))),
            Some(Reason::ValueMismatch),
            "the 4th figure differs"
        );
        assert_eq!(
            graded(json!([[66460.4]]), json!([[66461]])),
            None,
            "the 5th figure differs"
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
        // Fewer columns wins over fewer rows.
        let miss = graded(json!([["a"]]), json!([["a", 1], ["b", 2]])).unwrap();
        assert_eq!(miss.reason, Some(Reason::MissingColumns));
        assert_eq!(miss.analysis, "the agent returned 1 column, the ground truth has 2");
    }

    #[test]
    fn empty_and_one_column_results() {
        assert_eq!(graded(json!([]), json!([])), None);
        assert_eq!(graded(json!([[1]]), json!([[1]])), None);
        // An empty result still has its columns (from its schema).
        let one = names(&["n"]);
        let (none, some) = (rows(json!([])), rows(json!([[1]])));
        let set = |rows| ResultSet { columns: &one, rows };
        assert_eq!(reason(grade(set(&none), set(&some))), Some(Reason::RowCountMismatch));
        assert_eq!(reason(grade(set(&some), set(&none))), Some(Reason::UnexpectedRows));
        assert_eq!(reason(graded(json!([]), json!([[1]]))), Some(Reason::MissingColumns));
    }

    #[test]
    fn two_equal_truth_columns_need_two_agent_columns() {
        let truth = json!([[1, 1], [2, 2]]);
        assert_eq!(graded(json!([[1, 1], [2, 2]]), truth.clone()), None);
        // One agent column cannot answer both (first-fit would let it).
        assert_eq!(
            reason(graded(json!([[1, "x"], [2, "y"]]), truth)),
            Some(Reason::ValueMismatch)
        );
    }

    #[test]
    fn columns_that_match_alone_must_also_pair_row_by_row() {
        let truth = json!([["East", 1], ["West", 2]]);
        // The agent's second column has the right values in the wrong rows,
        // its third the right ones in the right rows.
        assert_eq!(graded(json!([["East", 2, 1], ["West", 1, 2]]), truth.clone()), None);
        let miss = graded(json!([["East", 2], ["West", 1]]), truth).unwrap();
        assert_eq!(miss.reason, Some(Reason::ValueMismatch));
        assert!(miss.analysis.contains("not row by row"), "{}", miss.analysis);
    }

    #[test]
    fn the_analysis_names_the_row_the_column_and_both_values() {
        let truth = json!([["East", 6646], ["West", 10787]]);
        let agent = json!([["East", 6646], ["West", 10900]]);
        let truth_rows = rows(truth);
        let agent_rows = rows(agent);
        let miss = grade(
            ResultSet {
                columns: &names(&["region", "rev"]),
                rows: &agent_rows,
            },
            ResultSet {
                columns: &names(&["region", "revenue"]),
                rows: &truth_rows,
            },
        )
        .unwrap();
        assert_eq!(miss.reason, Some(Reason::ValueMismatch));
        assert_eq!(
            miss.analysis,
            "column 2 of the ground truth (revenue) has no match: row West 10787 vs 10900"
        );
    }

    #[test]
    fn wide_results_are_matched_without_trying_every_assignment() {
        // 50 columns of equal values on both sides: every agent column is a
        // candidate for every truth column (50! assignments); augmenting
        // paths find one at once.
        let row: Vec<Value> = (0..50).map(|_| json!(1)).collect();
        let rows_of = |count: usize| vec![row.clone(); count];
        let (agent, truth) = (rows_of(200), rows_of(200));
        let agent_names: Vec<String> = (0..50).map(|i| format!("a{i}")).collect();
        let miss = grade(
            ResultSet {
                columns: &agent_names,
                rows: &agent,
            },
            ResultSet {
                columns: &agent_names,
                rows: &truth,
            },
        );
        assert_eq!(miss, None);
    }
}
