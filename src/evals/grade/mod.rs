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

mod compare;
mod refine;
mod search;
mod sheet;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::time::Instant;

use serde::{Deserialize, Serialize};

pub use compare::{ColumnPair, Comparison, RowPair, SHOWN_ROWS};
use search::{Found, Search};
use sheet::Key;
pub use sheet::Sheet;

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

/// Cube's grade of a question: its verdict, Cube's score reason (for
/// `fail` and `error`), one sentence a person can act on, the SQL of both
/// sides; and, beside it, both results side by side (which a report keeps
/// on the run). All absent for cases that are not Cube's eval questions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CubeGrade {
    /// `pass`, `fail`, `review` or `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Cube's score reason, for `fail` and `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_reason: Option<Reason>,
    /// What differs, first: the counts, or a row, a column and both values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis: Option<String>,
    /// The ground truth's SQL, as run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ground_truth: Option<String>,
    /// The SQL of the agent's last query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_sql: Option<String>,
    /// Both results side by side, when the question had both (kept on the
    /// run in a report, not here).
    #[serde(skip)]
    pub comparison: Option<Box<Comparison>>,
}

impl CubeGrade {
    /// The grade of a question that did not pass for `reason` (its verdict
    /// follows), told by `analysis`.
    pub fn missed(reason: Reason, analysis: impl Into<String>) -> CubeGrade {
        CubeGrade {
            verdict: Some(reason.verdict()),
            score_reason: Some(reason),
            analysis: Some(analysis.into()),
            ..CubeGrade::default()
        }
    }

    /// Cube's `review`: nothing to compare, as `analysis` says.
    pub fn review(analysis: impl Into<String>) -> CubeGrade {
        CubeGrade {
            verdict: Some(Verdict::Review),
            analysis: Some(analysis.into()),
            ..CubeGrade::default()
        }
    }
}

/// How much work the search for a column assignment may do, in cells
/// looked at: about a second.
const SEARCH_BUDGET: u64 = 50_000_000;

/// Why grading stopped before its verdict.
#[derive(Debug, PartialEq, Eq)]
pub struct OutOfTime;

/// Grades `agent` against `truth`: `None` when it passes, else its grade:
/// the reason, the analysis and both results side by side (columns paired as the
/// grader paired them). `Err` when `deadline` passed first.
pub fn grade(agent: &Sheet, truth: &Sheet, deadline: Option<Instant>) -> Result<Option<CubeGrade>, OutOfTime> {
    let graded = grade_within(agent, truth, deadline, SEARCH_BUDGET)?;
    // A verdict reached after the deadline does not count: --timeout is
    // the limit of the whole command, grading included.
    match deadline.is_some_and(|deadline| Instant::now() >= deadline) {
        true => Err(OutOfTime),
        false => Ok(graded),
    }
}

/// [`grade`] with the search bounded by `budget` cells looked at.
fn grade_within(
    agent: &Sheet,
    truth: &Sheet,
    deadline: Option<Instant>,
    budget: u64,
) -> Result<Option<CubeGrade>, OutOfTime> {
    let (agent_width, truth_width) = (agent.width(), truth.width());
    // Both results side by side, columns paired as far as the grader got.
    let beside = |miss: CubeGrade, grading: &Grading<'_>, matching: &[Option<usize>]| CubeGrade {
        comparison: Some(Box::new(compare::side_by_side(grading, matching))),
        ..miss
    };
    if agent_width < truth_width {
        let miss = CubeGrade::missed(
            Reason::MissingColumns,
            format!(
                "the agent returned {agent_width} column{}, the ground truth has {truth_width}",
                plural(agent_width)
            ),
        );
        return Ok(Some(beside(miss, &Grading::new(agent, truth, deadline), &[])));
    }
    let (got, want) = (agent.rows, truth.rows);
    if got != want {
        let reason = match got < want {
            true => Reason::RowCountMismatch,
            false => Reason::UnexpectedRows,
        };
        let miss = CubeGrade::missed(
            reason,
            format!(
                "the agent returned {got} row{}, the ground truth has {want}",
                plural(got)
            ),
        );
        return Ok(Some(beside(miss, &Grading::new(agent, truth, deadline), &[])));
    }
    let grading = Grading::new(agent, truth, deadline);
    let candidates = grading.candidates(deadline)?;
    // Columns told apart by how their values sit in rows: an identical
    // result in any column and row order passes here, with no search.
    // (A result that does not pass is analysed with every candidate.)
    if let Some(refined) = refine::refined(&grading, &candidates)? {
        let matching = match_columns(&refined, agent_width);
        if matching.iter().all(Option::is_some) && grading.first_unpaired_row(&matching).is_none() {
            return Ok(None);
        }
    }
    let matching = match_columns(&candidates, agent_width);
    if let Some(column) = matching.iter().position(Option::is_none) {
        let miss = grading.value_mismatch(&candidates.all, &matching, column);
        return Ok(Some(beside(miss, &grading, &matching)));
    }
    // The matching found first (columns in their places, else ones holding
    // the same values in the same rows) is the answer when it pairs the
    // rows: a result identical but for its column order passes at once.
    if grading.first_unpaired_row(&matching).is_none() {
        return Ok(None);
    }
    let mut search = Search::new(&grading, &candidates.all, deadline, budget);
    let miss = match search.run()? {
        Found::Assignment => return Ok(None),
        Found::Nothing => grading.rows_do_not_pair(&matching),
        Found::OutOfBudget => CubeGrade::review(format!(
            "undecided: {} ground-truth columns share their values with {} agent columns, and the search for an assignment that makes the rows equal stopped after {} steps; compare the results by hand",
            search.ambiguous_truth(),
            search.ambiguous_agent(),
            search.steps
        )),
    };
    Ok(Some(beside(miss, &grading, &matching)))
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
    /// When grading must stop (its long loops look).
    deadline: Option<Instant>,
}

impl<'a> Grading<'a> {
    fn new(agent: &'a Sheet, truth: &'a Sheet, deadline: Option<Instant>) -> Self {
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
            deadline,
        }
    }

    /// True once the deadline has passed.
    fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|deadline| Instant::now() >= deadline)
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
    /// multiset of values, those holding them in the same rows first;
    /// `Err` when `deadline` passed first.
    fn candidates(&self, deadline: Option<Instant>) -> Result<Candidates, OutOfTime> {
        let sorted = |mut keys: Vec<Key>| {
            keys.sort_unstable();
            keys
        };
        // The ground truth's columns grouped by their values, sorted and in
        // row order: an agent column is compared once with each group, so
        // many columns of the same values cost no more than a few.
        let (mut by_values, mut by_rows) = (Groups::default(), Groups::default());
        for column in 0..self.truth.width() {
            let keys = self.truth_column(column);
            by_rows.add(fingerprinted(keys.clone()), column);
            by_values.add(fingerprinted(sorted(keys)), column);
        }
        let width = self.truth.width();
        let mut candidates = Candidates {
            all: vec![Vec::new(); width],
            in_order: vec![Vec::new(); width],
        };
        for agent_column in 0..self.agent.width() {
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(OutOfTime);
            }
            let keys = self.agent_column(agent_column);
            let in_order = fingerprinted(keys.clone());
            let of_values = fingerprinted(sorted(keys));
            for &column in by_values.of(&of_values) {
                candidates.all[column].push(agent_column);
            }
            for &column in by_rows.of(&in_order) {
                candidates.in_order[column].push(agent_column);
            }
        }
        for (all, in_order) in candidates.all.iter_mut().zip(&candidates.in_order) {
            all.sort_by_key(|column| !in_order.contains(column));
        }
        Ok(candidates)
    }

    /// The analysis of a ground-truth column no agent column matches (in
    /// `matching`, a largest matching of the columns): its first row whose
    /// value differs from the agent's row with the same values in the
    /// matched columns, else what the two columns hold that the other
    /// lacks.
    fn value_mismatch(&self, candidates: &[Vec<usize>], matching: &[Option<usize>], column: usize) -> CubeGrade {
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
            return CubeGrade::missed(Reason::ValueMismatch, head);
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
                return CubeGrade::missed(
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
            Some((want, got)) => CubeGrade::missed(
                Reason::ValueMismatch,
                format!("{head}: the ground truth has {want} where the agent has {got}"),
            ),
            None => CubeGrade::missed(Reason::ValueMismatch, head),
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
    fn rows_do_not_pair(&self, matching: &[Option<usize>]) -> CubeGrade {
        let Some(row) = self.first_unpaired_row(matching) else {
            return CubeGrade::missed(Reason::ValueMismatch, "every column has a match, but not row by row");
        };
        let shown: Vec<&str> = (0..self.truth.width())
            .map(|column| self.truth.shown(column, row))
            .collect();
        CubeGrade::missed(
            Reason::ValueMismatch,
            format!(
                "every column has a match, but not row by row: the ground truth's row ({}) is not in the agent's result",
                shown.join(", ")
            ),
        )
    }

    /// The first ground-truth row the agent's result lacks when its
    /// columns are assigned as `matching` says; `None` when every row pairs.
    fn first_unpaired_row(&self, matching: &[Option<usize>]) -> Option<usize> {
        let matching: Vec<usize> = matching.iter().flatten().copied().collect();
        let mut counts: HashMap<Vec<Key>, i64> = HashMap::with_capacity(self.agent.rows);
        for row in 0..self.agent.rows {
            *counts
                .entry(matching.iter().map(|&a| self.agent_key(a, row)).collect())
                .or_default() += 1;
        }
        (0..self.truth.rows).find(|&row| {
            let key: Vec<Key> = (0..matching.len()).map(|t| self.truth_key(t, row)).collect();
            match counts.get_mut(&key) {
                Some(count) if *count > 0 => {
                    *count -= 1;
                    false
                }
                _ => true,
            }
        })
    }
}

/// A hash of `keys` (a column sorted), and the keys.
fn fingerprinted(keys: Vec<Key>) -> Print {
    let mut hasher = std::hash::DefaultHasher::new();
    keys.hash(&mut hasher);
    (hasher.finish(), keys)
}

/// A column's keys with their hash ([`fingerprinted`]).
type Print = (u64, Vec<Key>);

/// Columns grouped by their keys: each distinct print once, with the
/// columns that have it.
#[derive(Default)]
struct Groups(Vec<(Print, Vec<usize>)>);

impl Groups {
    /// Puts `column`, whose keys are `print`, in its group.
    fn add(&mut self, print: Print, column: usize) {
        match self.0.iter_mut().find(|(known, _)| *known == print) {
            Some((_, columns)) => columns.push(column),
            None => self.0.push((print, vec![column])),
        }
    }

    /// The columns whose keys are `print`.
    fn of(&self, print: &Print) -> &[usize] {
        self.0
            .iter()
            .find(|(known, _)| known == print)
            .map_or(&[], |(_, columns)| columns.as_slice())
    }
}

/// The agent columns each ground-truth column may take.
#[derive(Clone)]
struct Candidates {
    /// Those holding the same multiset of values, the ones in `in_order`
    /// first.
    all: Vec<Vec<usize>>,
    /// Those holding the same values in the same rows.
    in_order: Vec<Vec<usize>>,
}

/// A largest matching of ground-truth columns to distinct agent columns
/// among `candidates` (augmenting paths: polynomial, and two equal
/// ground-truth columns cannot both claim one agent column), columns
/// kept in their own places where they can be, else given one that holds
/// the same values in the same rows. `None` for a ground-truth column
/// left without one.
fn match_columns(candidates: &Candidates, agent_width: usize) -> Vec<Option<usize>> {
    let (in_order, candidates) = (&candidates.in_order, &candidates.all);
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
    // Columns identical to the agent's in their own places first, then
    // each in the first free column identical to it, then in its own place
    // by its values; the others find room around them.
    let mut settle = |truth: usize, pick: &dyn Fn(&[Option<usize>]) -> Option<usize>| {
        if !owner.contains(&Some(truth)) {
            if let Some(agent) = pick(&owner) {
                owner[agent] = Some(truth);
            }
        }
    };
    for (truth, same) in in_order.iter().enumerate() {
        settle(truth, &|owner| {
            (same.contains(&truth) && owner[truth].is_none()).then_some(truth)
        });
    }
    for (truth, same) in in_order.iter().enumerate() {
        settle(truth, &|owner| {
            same.iter().copied().find(|&agent| owner[agent].is_none())
        });
    }
    for (truth, found) in candidates.iter().enumerate() {
        settle(truth, &|owner| {
            (found.contains(&truth) && owner[truth].is_none()).then_some(truth)
        });
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

#[cfg(test)]
mod tests;
