//! The history at scale: recording a turn into a database that already
//! holds 100,000 turns (p99 of 10,000 records, target under 5 ms), and
//! `history list` and `history usage` over them (target under 100 ms each),
//! with the bytes a turn takes: `cargo bench --bench history`.

use std::time::{Duration, Instant};

use analyst::domain::{Usage, UsageRecord};
use analyst::history::{History, ListFilter, QueryRecord, TurnRecord, UsageBy};

/// A turn as `ask` records one: a question, an answer of a few sentences,
/// one query.
fn turn(i: usize) -> TurnRecord {
    TurnRecord {
        at: analyst::history::now(),
        command: "ask".into(),
        chat_url: Some("https://example.cubecloud.dev/api/v1/public/acme/agents/7/chat/stream-chat-state".into()),
        identity: Some("external:ci-bot".into()),
        thread: Some(format!("thread-{}", i % 50)),
        chat_id: Some(format!("chat-{i:08}")),
        message_id: Some(format!("{}-message", 1_700_000_000_000u64 + i as u64)),
        question: Some(format!("What was our revenue by month in 2024, region {}?", i % 7)),
        answer: Some("Revenue grew through 2024, from $1.80M in January to $2.89M in December — a 60% rise. The strongest quarter was Q4 ($7.65M).".into()),
        status: "completed".into(),
        usage: Some(UsageRecord {
            counts: Usage {
                input_tokens: 18_000,
                output_tokens: 600,
                cache_read_tokens: 1_000,
                cache_write_tokens: 200,
                total_tokens: 19_800,
                llm_calls: 4,
            },
            models: vec![["large", "small"][i % 2].into()],
            by_model: Vec::new(),
        }),
        first_byte_ms: Some(300),
        answer_ms: Some(9_000),
        total_ms: 11_000,
        queries: vec![QueryRecord {
            tool: "cubeSqlApi".into(),
            title: Some("Revenue by month, 2024".into()),
            sql: Some("SELECT DATE_TRUNC('month', created_at) AS month, MEASURE(total_revenue) FROM orders_view GROUP BY 1 ORDER BY 1".into()),
            columns: vec!["month".into(), "total_revenue".into()],
            rows_returned: 12,
            total_rows: Some(12),
            error: None,
        }],
        ..TurnRecord::default()
    }
}

fn best_of(runs: usize, mut work: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed()
        })
        .min()
        .unwrap()
}

fn main() {
    let dir = std::env::temp_dir().join(format!("analyst-bench-history-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let db = dir.join("history.db");
    let mut history = History::open(&db).expect("a database");
    eprintln!("filling 100,000 turns …");
    for i in 0..100_000 {
        history.record(&turn(i), None).unwrap();
    }
    let mut times: Vec<Duration> = (100_000..110_000)
        .map(|i| {
            let record = turn(i);
            let started = Instant::now();
            history.record(&record, None).unwrap();
            started.elapsed()
        })
        .collect();
    times.sort();
    let p99 = times[times.len() * 99 / 100];
    // The latest 20 turns, of one thread or of all.
    let latest = |thread: Option<&str>| {
        best_of(5, || {
            let filter = ListFilter {
                limit: 20,
                thread: thread.map(str::to_string),
                ..ListFilter::default()
            };
            assert_eq!(history.list(&filter, None).unwrap().len(), 20);
        })
    };
    let list = latest(None);
    let thread = latest(Some("thread-7"));
    let usage = best_of(5, || {
        let mut turns = 0;
        history.usage(UsageBy::Model, None, |_, _, _| turns += 1).unwrap();
        assert!(turns > 0);
    });
    drop(history);
    let bytes: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().metadata().unwrap().len())
        .sum();
    let _ = std::fs::remove_dir_all(&dir);
    let ms = |duration: Duration| duration.as_secs_f64() * 1000.0;
    let met = |ok: bool| if ok { "yes" } else { "**no**" };
    println!("| target | measured | met |");
    println!("|---|---|---|");
    println!(
        "| record a turn, p99 of 10,000, 100k in the database, under 5 ms | {:.2} ms | {} |",
        ms(p99),
        met(ms(p99) < 5.0)
    );
    println!(
        "| history list (20 of 110k), under 100 ms | {:.2} ms | {} |",
        ms(list),
        met(ms(list) < 100.0)
    );
    println!(
        "| history list --thread (20 of 110k), under 100 ms | {:.2} ms | {} |",
        ms(thread),
        met(ms(thread) < 100.0)
    );
    println!(
        "| history usage --by model (110k turns), under 100 ms | {:.2} ms | {} |",
        ms(usage),
        met(ms(usage) < 100.0)
    );
    println!("| bytes per turn (with its query) | {} | |", bytes / 110_000);
}
