//! Both results side by side, for a person deciding why a question
//! failed: the ground truth's first rows, each beside the agent's row it
//! pairs with, the cells that differ marked — what the page shows and the
//! JSON report carries for a run that did not pass.
//!
//! The columns are paired as the grader paired them (a ground-truth
//! column with the agent column holding the same values), a column left
//! without one with an agent column no other took (its own place first);
//! when the grader stopped before pairing columns (a missing column, a
//! row count that differs), by name, then by place. Rows pair when every
//! compared cell is equal, else when the columns the grader matched are,
//! else with the agent row sharing the most cells (among the first
//! [`NEAR_SCAN`]): equality is the grader's (numbers to 4 significant
//! figures, text as sent).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::sheet::Key;
use super::{Grading, Sheet};
use crate::text::shorten_to;

/// The most rows of each side a comparison holds.
pub const SHOWN_ROWS: usize = 50;

/// The most characters of a cell a comparison keeps.
const CELL_CHARS: usize = 200;

/// How many of the agent's rows are searched for the nearest row of a
/// ground-truth row that pairs with none exactly.
const NEAR_SCAN: usize = 100_000;

/// The two results of a question that did not pass, side by side.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// Each ground-truth column and the agent column compared with it.
    pub columns: Vec<ColumnPair>,
    /// The agent's column names.
    pub agent_columns: Vec<String>,
    /// Up to [`SHOWN_ROWS`] rows of each result: each of the ground
    /// truth's first rows with the agent's row it pairs with, then agent
    /// rows that pair with none of them.
    pub rows: Vec<RowPair>,
    /// How many rows the ground truth has.
    pub ground_truth_rows: usize,
    /// How many rows the agent's result has.
    pub agent_rows: usize,
}

/// A ground-truth column and the agent column its cells are compared with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ColumnPair {
    /// The ground truth's name for it (`column N` when it has none).
    pub ground_truth: String,
    /// The agent column (from 0) compared with it; `None` when the agent
    /// has no column left.
    pub agent: Option<usize>,
    /// The grader matched the two: they hold the same values.
    pub matched: bool,
}

/// A row of the ground truth beside the agent's row it pairs with (either
/// may be absent); cells are text as sent, `None` for NULL.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RowPair {
    /// The ground truth's row, in its column order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ground_truth: Option<Vec<Option<String>>>,
    /// The agent's row, in its column order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<Vec<Option<String>>>,
    /// The ground-truth columns (from 0) whose cell differs from the
    /// agent's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differs: Vec<usize>,
}

impl Comparison {
    /// Every cell, for redaction.
    pub fn cells_mut(&mut self) -> impl Iterator<Item = &mut String> {
        self.rows
            .iter_mut()
            .flat_map(|row| row.ground_truth.iter_mut().chain(row.agent.iter_mut()))
            .flatten()
            .flatten()
    }
}

/// Both sheets of `grading` side by side; `matching` is the grader's
/// pairing of the columns (empty when it stopped before pairing them).
pub(super) fn side_by_side(grading: &Grading<'_>, matching: &[Option<usize>]) -> Comparison {
    let (agent, truth) = (grading.agent, grading.truth);
    let columns = column_pairs(grading, matching);
    let compared: Vec<(usize, usize)> = columns
        .iter()
        .enumerate()
        .filter_map(|(t, pair)| Some((t, pair.agent?)))
        .collect();
    let matched: Vec<(usize, usize)> = columns
        .iter()
        .enumerate()
        .filter(|(_, pair)| pair.matched)
        .filter_map(|(t, pair)| Some((t, pair.agent?)))
        .collect();
    let shown = truth.rows.min(SHOWN_ROWS);
    let mut partner: Vec<Option<usize>> = vec![None; shown];
    let mut taken = vec![false; agent.rows];
    pair_equal(grading, &compared, &mut partner, &mut taken);
    if !matched.is_empty() && matched.len() < compared.len() {
        pair_equal(grading, &matched, &mut partner, &mut taken);
    }
    pair_nearest(grading, &compared, &mut partner, &mut taken);
    let cells = |sheet: &Sheet, row: usize| -> Vec<Option<String>> {
        (0..sheet.width())
            .map(|column| match sheet.cell(column, row) {
                super::sheet::NULL => None,
                _ => Some(shorten_to(sheet.shown(column, row), CELL_CHARS)),
            })
            .collect()
    };
    let mut rows: Vec<RowPair> = partner
        .iter()
        .enumerate()
        .map(|(row, other)| RowPair {
            ground_truth: Some(cells(truth, row)),
            agent: other.map(|other| cells(agent, other)),
            differs: match other {
                Some(other) => (0..truth.width())
                    .filter(|&t| {
                        columns[t]
                            .agent
                            .is_none_or(|a| grading.truth_key(t, row) != grading.agent_key(a, *other))
                    })
                    .collect(),
                None => Vec::new(),
            },
        })
        .collect();
    let paired = partner.iter().flatten().count();
    let unpaired = (0..agent.rows).filter(|&row| !taken[row]);
    rows.extend(unpaired.take(SHOWN_ROWS.saturating_sub(paired)).map(|row| RowPair {
        ground_truth: None,
        agent: Some(cells(agent, row)),
        differs: Vec::new(),
    }));
    Comparison {
        columns,
        agent_columns: (0..agent.width()).map(|column| name_of(agent, column)).collect(),
        rows,
        ground_truth_rows: truth.rows,
        agent_rows: agent.rows,
    }
}

/// A column's name, or `column N`.
fn name_of(sheet: &Sheet, column: usize) -> String {
    sheet
        .name(column)
        .map_or_else(|| format!("column {}", column + 1), str::to_string)
}

/// The agent column compared with each ground-truth column: the
/// grader's (`matching`), else by name, else the same place, else the
/// first left.
fn column_pairs(grading: &Grading<'_>, matching: &[Option<usize>]) -> Vec<ColumnPair> {
    let (agent, truth) = (grading.agent, grading.truth);
    let mut owner: Vec<bool> = vec![false; agent.width()];
    let mut agent_of: Vec<(Option<usize>, bool)> = (0..truth.width())
        .map(|t| match matching.get(t).copied().flatten() {
            Some(a) => {
                owner[a] = true;
                (Some(a), true)
            }
            None => (None, false),
        })
        .collect();
    // A column's last dotted part is its name (`orders.month` is `month`).
    let bare = |name: &str| name.rsplit('.').next().unwrap_or(name).to_lowercase();
    let named = |t: usize, owner: &[bool]| {
        let want = bare(truth.name(t)?);
        (0..agent.width()).find(|&a| !owner[a] && agent.name(a).is_some_and(|name| bare(name) == want))
    };
    for pick in [
        &named as &dyn Fn(usize, &[bool]) -> Option<usize>,
        &|t, owner: &[bool]| (t < owner.len() && !owner[t]).then_some(t),
        &|_, owner: &[bool]| owner.iter().position(|taken| !taken),
    ] {
        for (t, (agent_column, _)) in agent_of.iter_mut().enumerate() {
            if agent_column.is_none() {
                *agent_column = pick(t, &owner);
                if let Some(a) = *agent_column {
                    owner[a] = true;
                }
            }
        }
    }
    agent_of
        .into_iter()
        .enumerate()
        .map(|(t, (agent, matched))| ColumnPair {
            ground_truth: name_of(truth, t),
            agent,
            matched,
        })
        .collect()
}

/// Pairs each ground-truth row still without a partner with the first
/// free agent row equal to it in `columns` (ground truth, agent).
fn pair_equal(grading: &Grading<'_>, columns: &[(usize, usize)], partner: &mut [Option<usize>], taken: &mut [bool]) {
    let mut waiting: HashMap<Vec<Key>, Vec<usize>> = HashMap::new();
    for row in (0..partner.len()).rev().filter(|&row| partner[row].is_none()) {
        let key = columns.iter().map(|&(t, _)| grading.truth_key(t, row)).collect();
        waiting.entry(key).or_default().push(row);
    }
    let mut left = partner.iter().filter(|other| other.is_none()).count();
    for (row, taken) in taken.iter_mut().enumerate() {
        if left == 0 {
            break;
        }
        if *taken {
            continue;
        }
        let key: Vec<Key> = columns.iter().map(|&(_, a)| grading.agent_key(a, row)).collect();
        if let Some(truth_row) = waiting.get_mut(&key).and_then(Vec::pop) {
            partner[truth_row] = Some(row);
            *taken = true;
            left -= 1;
        }
    }
}

/// Pairs each ground-truth row still without a partner with the free
/// agent row (of the first [`NEAR_SCAN`]) that shares the most cells in
/// `columns`, at least one.
fn pair_nearest(grading: &Grading<'_>, columns: &[(usize, usize)], partner: &mut [Option<usize>], taken: &mut [bool]) {
    for (row, partner) in partner.iter_mut().enumerate() {
        // Past the deadline the comparison stops (the verdict is dropped).
        if grading.out_of_time() {
            return;
        }
        if partner.is_some() {
            continue;
        }
        let shared = |other: usize| {
            columns
                .iter()
                .filter(|&&(t, a)| grading.truth_key(t, row) == grading.agent_key(a, other))
                .count()
        };
        let nearest = (0..taken.len().min(NEAR_SCAN))
            .filter(|&other| !taken[other])
            .map(|other| (shared(other), other))
            .filter(|&(shared, _)| shared > 0)
            // The most shared; of equals, the first.
            .max_by_key(|&(shared, other)| (shared, std::cmp::Reverse(other)));
        if let Some((_, other)) = nearest {
            *partner = Some(other);
            taken[other] = true;
        }
    }
}
