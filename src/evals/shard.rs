//! A shard `K/N` of a suite (`--shard`, a CI matrix): the K-th of N
//! deterministic, disjoint slices of its cases, dealt by name, so that the
//! N shards together run every case exactly once. What `check` selects by,
//! and what `check merge` reads back from the shards' reports.

/// Parses a shard `K/N`: 1 ≤ K ≤ N.
pub fn parse_shard(text: &str) -> Result<(u32, u32), String> {
    let shard = text
        .split_once('/')
        .and_then(|(k, n)| Some((k.trim().parse::<u32>().ok()?, n.trim().parse::<u32>().ok()?)));
    match shard {
        Some((k, n)) if k >= 1 && k <= n => Ok((k, n)),
        _ => Err(format!("{text:?} is not a shard K/N with 1 ≤ K ≤ N, such as 1/4")),
    }
}

/// The names of `names` (a suite's cases) that shard `k` of `n` runs:
/// sorted by name and dealt round-robin, so that no shard has more than
/// one case more than another.
pub fn dealt<'a>(names: impl Iterator<Item = &'a str>, (k, n): (u32, u32)) -> Vec<String> {
    let mut names: Vec<&str> = names.collect();
    names.sort_unstable();
    names
        .iter()
        .enumerate()
        .filter(|(position, _)| *position as u32 % n + 1 == k)
        .map(|(_, name)| name.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_deal_every_case_once() {
        let names = ["e", "a", "d", "b", "c"];
        let shards: Vec<Vec<String>> = (1..=2).map(|k| dealt(names.iter().copied(), (k, 2))).collect();
        assert_eq!(shards, [vec!["a", "c", "e"], vec!["b", "d"]]);
        assert_eq!(parse_shard(" 2/4 "), Ok((2, 4)));
        assert!(parse_shard("5/4").is_err() && parse_shard("0/1").is_err() && parse_shard("x").is_err());
    }
}
