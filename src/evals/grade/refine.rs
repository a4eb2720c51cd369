//! Columns told apart by what no row order can change. Two columns that
//! hold the same values (a month and its rank, ranks by several measures)
//! are candidates for each other; which agent column stands for which
//! ground-truth column is then decided by how their values sit in rows
//! beside the other columns' values, which is the same in any row order.
//! Colours are refined on both sheets alike (colour refinement, as graph
//! isomorphism tests do it): a row's colour is the multiset of its
//! columns' colours with its values, a column's the multiset of its rows'
//! colours with its values, until the colours stop splitting. A
//! ground-truth column keeps as candidates only the agent columns of its
//! colour: the column an identical result in any column and row order
//! holds in its place always has it, so no right answer is lost.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::sheet::Key;
use super::{Candidates, Grading, OutOfTime};

/// The most rounds of refinement (the colours of n columns settle in
/// fewer than n, and in a few rounds in practice).
const MOST_ROUNDS: usize = 16;

/// A colour: a hash of what tells a row or a column apart.
type Colour = u64;

fn colour_of(parts: &mut [(Colour, Key)], before: Colour) -> Colour {
    parts.sort_unstable();
    let mut hasher = DefaultHasher::new();
    before.hash(&mut hasher);
    parts.hash(&mut hasher);
    hasher.finish()
}

/// `candidates` narrowed to the agent columns of each ground-truth
/// column's colour; `None` where the agent's columns cannot stand for the
/// ground truth's one for one (as many of each multiset of values on both
/// sides, agent columns of values no ground-truth column holds left
/// aside). `Err` when the grading's deadline passed first.
pub(super) fn refined(grading: &Grading<'_>, candidates: &Candidates) -> Result<Option<Candidates>, OutOfTime> {
    let (truth_width, agent_width, rows) = (grading.truth.width(), grading.agent.width(), grading.truth.rows);
    if rows != grading.agent.rows || rows == 0 {
        return Ok(None);
    }
    let multiset = |mut keys: Vec<Key>| {
        keys.sort_unstable();
        let mut hasher = DefaultHasher::new();
        keys.hash(&mut hasher);
        hasher.finish()
    };
    let mut truth: Vec<Colour> = (0..truth_width).map(|t| multiset(grading.truth_column(t))).collect();
    let agent_all: Vec<Colour> = (0..agent_width).map(|a| multiset(grading.agent_column(a))).collect();
    let in_truth: HashSet<Colour> = truth.iter().copied().collect();
    let included: Vec<usize> = (0..agent_width).filter(|&a| in_truth.contains(&agent_all[a])).collect();
    let mut counts: Vec<Colour> = truth.clone();
    let mut agent_counts: Vec<Colour> = included.iter().map(|&a| agent_all[a]).collect();
    counts.sort_unstable();
    agent_counts.sort_unstable();
    if counts != agent_counts {
        return Ok(None);
    }
    let mut agent: Vec<Colour> = included.iter().map(|&a| agent_all[a]).collect();
    let distinct = |truth: &[Colour], agent: &[Colour]| truth.iter().chain(agent).collect::<HashSet<_>>().len();
    let mut classes = distinct(&truth, &agent);
    for _ in 0..MOST_ROUNDS {
        if grading.out_of_time() {
            return Err(OutOfTime);
        }
        let truth_rows: Vec<Colour> = (0..rows)
            .map(|row| {
                let mut parts: Vec<(Colour, Key)> = (0..truth_width)
                    .map(|t| (truth[t], grading.truth_key(t, row)))
                    .collect();
                colour_of(&mut parts, 0)
            })
            .collect();
        let agent_rows: Vec<Colour> = (0..rows)
            .map(|row| {
                let mut parts: Vec<(Colour, Key)> = included
                    .iter()
                    .zip(&agent)
                    .map(|(&a, &colour)| (colour, grading.agent_key(a, row)))
                    .collect();
                colour_of(&mut parts, 0)
            })
            .collect();
        truth = (0..truth_width)
            .map(|t| {
                let mut parts: Vec<(Colour, Key)> = (0..rows)
                    .map(|row| (truth_rows[row], grading.truth_key(t, row)))
                    .collect();
                colour_of(&mut parts, truth[t])
            })
            .collect();
        agent = included
            .iter()
            .zip(&agent)
            .map(|(&a, &before)| {
                let mut parts: Vec<(Colour, Key)> = (0..rows)
                    .map(|row| (agent_rows[row], grading.agent_key(a, row)))
                    .collect();
                colour_of(&mut parts, before)
            })
            .collect();
        let now = distinct(&truth, &agent);
        if now == classes {
            break;
        }
        classes = now;
    }
    let mut colour_of_agent = vec![None; agent_width];
    for (&a, &colour) in included.iter().zip(&agent) {
        colour_of_agent[a] = Some(colour);
    }
    let mut refined = candidates.clone();
    for (t, &colour) in truth.iter().enumerate() {
        refined.all[t].retain(|&a| colour_of_agent[a] == Some(colour));
        refined.in_order[t].retain(|&a| colour_of_agent[a] == Some(colour));
    }
    Ok(Some(refined))
}
