//! The search for an assignment of agent columns to the ground truth's
//! that makes the rows equal, over classes of identical columns, bounded.

use std::collections::HashMap;
use std::time::Instant;

use super::sheet::Key;
use super::{fingerprinted, Grading, OutOfTime};

/// Columns that hold the same values in the same rows: one of them stands
/// for all (`members` of them).
pub(super) struct Class {
    pub(super) column: usize,
    pub(super) members: usize,
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
pub(super) enum Found {
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
pub(super) struct Search<'a> {
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
    pub(super) steps: u64,
}

impl<'a> Search<'a> {
    pub(super) fn new(
        grading: &'a Grading<'a>,
        candidates: &[Vec<usize>],
        deadline: Option<Instant>,
        budget: u64,
    ) -> Self {
        let mut wanted: Vec<usize> = candidates.iter().flatten().copied().collect();
        wanted.sort_unstable();
        wanted.dedup();
        let agent_classes = classes(wanted.iter().map(|&column| (column, grading.agent_column(column))));
        let truth_classes = classes((0..candidates.len()).map(|column| (column, grading.truth_column(column))));
        let mut truth: Vec<(Class, Vec<usize>, usize)> = truth_classes
            .into_iter()
            .map(|(class, keys)| {
                let distinct = {
                    let mut sorted = keys.clone();
                    sorted.sort_unstable();
                    sorted.dedup();
                    sorted.len()
                };
                let mut allowed: Vec<usize> = agent_classes
                    .iter()
                    .enumerate()
                    .filter(|(_, (agent, _))| {
                        agent.members >= class.members && candidates[class.column].contains(&agent.column)
                    })
                    .map(|(index, _)| index)
                    .collect();
                // The agent's columns holding the same values in the same
                // rows are tried first: an identical result never searches.
                if let Some(same) = allowed.iter().position(|&index| agent_classes[index].1 == keys) {
                    allowed[..=same].rotate_right(1);
                }
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
    pub(super) fn ambiguous_truth(&self) -> usize {
        self.truth
            .iter()
            .filter(|(_, allowed)| allowed.len() > 1)
            .map(|(class, _)| class.members)
            .sum()
    }

    /// How many agent columns those could take.
    pub(super) fn ambiguous_agent(&self) -> usize {
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

    pub(super) fn run(&mut self) -> Result<Found, OutOfTime> {
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
