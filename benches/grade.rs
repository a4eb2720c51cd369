//! Grading as Cube grades, at scale: `cargo bench --bench grade`.
//!
//! 200,000 rows × 3 columns a side, read as `check` reads them — the
//! agent's result from its tool result's text (one line of the stream),
//! the ground truth from the data query API's `data` lines — into compact
//! cells, then graded (the agent's columns renamed and reordered, rows in
//! another order, numbers sent as strings). The target: a few seconds and
//! under 128 MiB for the whole `check` process (`tests/memory.rs` measures
//! the process against the emulator, 103 MiB; this bench measures the
//! grading's part: the most it allocates beyond the texts it reads, counted
//! by the allocator). Before the compact cells (rows held as JSON values),
//! the whole process peaked at 232 MiB for this size.
//!
//! A second case is 50,000 rows × 10 columns (the earlier bench's size);
//! a third, 2,000 rows of 500 columns that all hold the same values.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use analyst::evals::grade::{grade, Sheet};
use analyst::results::{Column, RowSink, SqlResult, ToolResult};
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// The system allocator, counting the bytes allocated now and at most.
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only
// counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Starts counting the peak afresh; returns the bytes allocated now.
fn reset_peak() -> usize {
    let now = NOW.load(Ordering::Relaxed);
    PEAK.store(now, Ordering::Relaxed);
    now
}

/// The ground truth's rows as the data query API sends them: numbers as
/// strings, 8,192 rows a `data` line.
fn data_lines(rows: &[Vec<Value>]) -> Vec<String> {
    rows.chunks(8192)
        .map(|chunk| json!({ "data": chunk }).to_string())
        .collect()
}

/// The agent's result as the stream's tool result carries it.
fn tool_result(columns: &[String], rows: &[Vec<Value>]) -> SqlResult {
    let schema: Vec<Value> = columns
        .iter()
        .map(|name| json!({"name": name, "column_type": "String"}))
        .collect();
    let text = json!({"sqlQuery": "SELECT …", "schema": schema, "data": rows, "totalRows": rows.len()}).to_string();
    SqlResult::from_tool_call("t1", "cubeSqlApi", &json!({}), &ToolResult::new(text))
}

/// Reads the ground truth's lines into a sheet, as the data client does.
fn truth_sheet(names: &[String], lines: &[String]) -> Sheet {
    #[derive(serde::Deserialize)]
    struct Data<'a> {
        #[serde(borrow)]
        data: Vec<Vec<&'a RawValue>>,
    }
    let mut sheet = Sheet::default();
    let columns: Vec<Column> = names.iter().map(|name| Column::new(name.clone(), "String")).collect();
    sheet.columns(&columns).unwrap();
    for line in lines {
        let data: Data<'_> = serde_json::from_str(line).unwrap();
        sheet.rows(&data.data).unwrap();
    }
    sheet
}

/// Grades an agent result made of `truth` (columns reversed and renamed,
/// rows reversed, an extra column) against `truth`: the best time of
/// `runs` and the most memory the grading allocated beyond its inputs'
/// texts, in KiB.
fn measure(truth: &[Vec<Value>], runs: usize) -> (f64, u64) {
    let width = truth.first().map_or(0, Vec::len);
    let truth_names: Vec<String> = (0..width).map(|c| format!("c{c}")).collect();
    let agent_names: Vec<String> = (0..=width).map(|c| format!("a{c}")).collect();
    let agent_rows: Vec<Vec<Value>> = truth
        .iter()
        .rev()
        .map(|row| {
            let mut cells: Vec<Value> = row.iter().rev().cloned().collect();
            cells.push(json!("extra"));
            cells
        })
        .collect();
    let lines = data_lines(truth);
    let result = tool_result(&agent_names, &agent_rows);
    drop(agent_rows);
    let mut best = f64::MAX;
    let mut grown = 0;
    for _ in 0..runs {
        let before = reset_peak();
        let started = Instant::now();
        let agent = Sheet::of_result(&result).unwrap();
        let truth = truth_sheet(&truth_names, &lines);
        let miss = grade(&agent, &truth, None).unwrap();
        best = best.min(started.elapsed().as_secs_f64());
        assert_eq!(miss, None, "the agent's result reproduces the ground truth");
        grown = grown.max(PEAK.load(Ordering::Relaxed).saturating_sub(before));
    }
    (best, grown as u64 / 1024)
}

fn main() {
    let long: Vec<Vec<Value>> = (0..200_000)
        .map(|i| {
            vec![
                json!(i.to_string()),
                json!(format!("{}", i as f64 * 0.5)),
                json!(format!("region {}", i % 97)),
            ]
        })
        .collect();
    let wide: Vec<Vec<Value>> = (0..50_000)
        .map(|i| {
            (0..10)
                .map(|c| match c {
                    0 => json!(format!("region {}", i % 17)),
                    1 => json!(format!("2024-{:02}-{:02}", i % 12 + 1, i % 28 + 1)),
                    _ => json!(format!("{}", (i * (c + 3)) as f64 / 7.0)),
                })
                .collect()
        })
        .collect();
    let equal: Vec<Vec<Value>> = (0..2_000).map(|i| vec![json!((i % 10).to_string()); 500]).collect();
    println!("| grading (read into cells, then graded) | time | peak allocated | before the compact cells |");
    println!("|---|---|---|---|");
    let (time, grown) = measure(&long, 3);
    println!(
        "| 200,000 rows × 3 columns a side | {:.0} ms | {} MiB | whole process 232 MiB |",
        time * 1000.0,
        grown / 1024
    );
    let long_met = time < 5.0 && grown < 128 * 1024;
    drop(long);
    let (time, grown) = measure(&wide, 3);
    println!(
        "| 50,000 rows × 10 columns | {:.0} ms | {} MiB | |",
        time * 1000.0,
        grown / 1024
    );
    let (equal_time, grown) = measure(&equal, 3);
    println!(
        "| 2,000 rows × 500 equal columns | {:.0} ms | {} MiB | |",
        equal_time * 1000.0,
        grown / 1024
    );
    println!();
    println!("| target | met |");
    println!("|---|---|");
    println!(
        "| 200,000 × 3 in a few seconds, under 128 MiB | {} |",
        if long_met { "yes" } else { "**no**" }
    );
    println!(
        "| 500 equal columns not exponential (under 5 s) | {} |",
        if equal_time < 5.0 { "yes" } else { "**no**" }
    );
}
