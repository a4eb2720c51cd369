//! The figures of an answer checked against its rows, at the size the
//! contract names: `cargo bench --bench figures`.
//!
//! A result of 50 rows × 10 numeric columns and an answer stating 30
//! figures (cells, sums, means, differences, ratios, shares and changes,
//! and some no value supports, which search every pair before they are
//! given up): the target is under 10 ms for the whole check — reading the
//! result's numbers, finding the figures in the Markdown, and searching
//! each one's support. A second size, 1,000 rows (the bound on pairs),
//! shows what the bound costs.

use std::time::{Duration, Instant};

use analyst::evals::figures::{check, Evidence};
use analyst::results::SqlResult;

/// A result of `rows` rows × 10 columns of varied numbers, as text cells.
fn result(rows: usize) -> SqlResult {
    let header: Vec<String> = (0..10).map(|column| format!("measure_{column}")).collect();
    let cells: Vec<Vec<String>> = (0..rows)
        .map(|row| {
            (0..10)
                .map(|column| format!("{}", 1_000 + (row * 7_919 + column * 104_729) % 900_000))
                .collect()
        })
        .collect();
    SqlResult::from_answer_table(1, &header, &cells)
}

/// An answer of 30 figures in prose, a table and bold, with dates and
/// list numbers that are none.
fn answer() -> String {
    let mut answer = String::from("## 1. Results for Q3 2024\n\nAs of 2024-09-30:\n\n| region | value |\n|---|---|\n");
    for i in 0..10 {
        answer.push_str(&format!("| r{i} | {} |\n", 1_000 + (i * 7_919) % 900_000));
    }
    answer.push_str("\nHighlights:\n\n");
    for i in 0..10 {
        answer.push_str(&format!(
            "{}. Region r{i} grew **{}%** to {},{:03} units.\n",
            i + 1,
            12 + i,
            100 + i,
            i * 37 % 1000
        ));
    }
    answer
}

fn main() {
    let answer = answer();
    for rows in [50, 1_000] {
        let result = result(rows);
        let mut best = Duration::MAX;
        let mut found = Vec::new();
        for _ in 0..20 {
            let started = Instant::now();
            let mut evidence = Evidence::new();
            evidence.add(&result);
            found = check(&evidence, &answer, "");
            best = best.min(started.elapsed());
        }
        let supported = found.iter().filter(|figure| figure.supported == Some(true)).count();
        let target = match rows {
            50 => format!(
                " (target < 10 ms: {})",
                if best < Duration::from_millis(10) {
                    "met"
                } else {
                    "MISSED"
                }
            ),
            _ => String::new(),
        };
        println!(
            "{rows} rows × 10 columns, {} figures ({supported} supported): {:.2} ms{target}",
            found.len(),
            best.as_secs_f64() * 1000.0
        );
    }
}
