//! Grading as Cube grades, at scale: a 50,000-row agent result against a
//! 50,000-row ground truth of 10 columns (the agent's columns aliased,
//! reordered, one extra, rows in another order) must take under 1 second
//! and under 100 MiB: `cargo bench --bench grade`. Memory is the growth of
//! this process's peak resident size (`VmHWM`) over the grading, time the
//! best of 5 runs.

use std::time::Instant;

use analyst::commands::check::grade::{grade, ResultSet};
use serde_json::{json, Value};

/// This process's peak resident size, in KiB.
fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmHWM:"))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|kib| kib.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    const ROWS: usize = 50_000;
    const COLUMNS: usize = 10;
    let truth: Vec<Vec<Value>> = (0..ROWS)
        .map(|i| {
            (0..COLUMNS)
                .map(|c| match c {
                    0 => json!(format!("region {}", i % 17)),
                    1 => json!(format!("2024-{:02}-{:02}", i % 12 + 1, i % 28 + 1)),
                    _ => json!((i * (c + 3)) as f64 / 7.0),
                })
                .collect()
        })
        .collect();
    // The agent's: rows reversed, columns reversed, numbers as strings, an
    // extra column at the end.
    let agent: Vec<Vec<Value>> = truth
        .iter()
        .rev()
        .map(|row| {
            let mut cells: Vec<Value> = row
                .iter()
                .rev()
                .map(|cell| match cell {
                    Value::Number(n) => json!(n.to_string()),
                    other => other.clone(),
                })
                .collect();
            cells.push(json!("extra"));
            cells
        })
        .collect();
    let truth_names: Vec<String> = (0..COLUMNS).map(|c| format!("c{c}")).collect();
    let agent_names: Vec<String> = (0..=COLUMNS).map(|c| format!("a{c}")).collect();
    let before = peak_kib();
    let mut best = f64::MAX;
    for _ in 0..5 {
        let started = Instant::now();
        let miss = grade(
            ResultSet {
                columns: &agent_names,
                rows: &agent,
            },
            ResultSet {
                columns: &truth_names,
                rows: &truth,
            },
        );
        best = best.min(started.elapsed().as_secs_f64());
        assert_eq!(miss, None, "the agent's result reproduces the ground truth");
    }
    let grown = peak_kib().saturating_sub(before);
    println!("| benchmark | time | peak growth |");
    println!("|---|---|---|");
    println!(
        "| grade {ROWS} rows × {COLUMNS} columns | {:.0} ms | {} MiB |",
        best * 1000.0,
        grown / 1024
    );
    println!();
    println!("| target | met |");
    println!("|---|---|");
    println!(
        "| under 1 s ({:.0} ms) | {} |",
        best * 1000.0,
        if best < 1.0 { "yes" } else { "**no**" }
    );
    println!(
        "| under 100 MiB ({} MiB) | {} |",
        grown / 1024,
        if grown < 100 * 1024 { "yes" } else { "**no**" }
    );
}
