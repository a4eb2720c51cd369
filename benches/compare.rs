//! Speed and memory of `analyst` side by side with `cat`, `jq` and `curl`,
//! in one run on one machine: `cargo bench --bench compare [-- --size MB
//! --runs N --only replay|raw|rows|scale|chart|check|version]`.
//!
//! It generates realistic inputs (a long chat stream with thousands of
//! deltas, 100-row SQL results and a large `__state__` line; a data query
//! answer of a million rows), serves them from the loopback emulator of
//! `tests/support`, and prints a table of ratios (what holds on a noisy
//! machine) with the absolute figures beside them, and each target as met
//! or missed: replay ≥ 20× jq in CPU time (answer, csv; json ≥ 10×) and
//! `-o answer` ≥ 1 GB/s of CPU time, peak RSS within the
//! longest line + 16 MiB (json: the larger of the longest line and the
//! document, + 16 MiB), `rows` ≥ 10×
//! `curl | jq`, `--version` under 5 ms; and at scale: 100,000 tool calls
//! that never finish (or 100,000 tool names) read in linear time (no slower
//! than `jq -c .` over the same stream), and a 48 MB line of tiny rows read
//! within 3× the line + 16 MiB in every mode but `json`; `-o raw` of
//! 100 MB of deltas of one message under 40 MiB and of 100,000 waiting
//! tool calls under 16 MiB; `-o json` of a 16 MB line of 4 million rows
//! within its document + 64 MiB; `-o svg` and
//! `-o png` of a 100-row chart under 400 ms end to end; `check` of 500
//! cases × 3 runs with `--jobs 16` within 5% of the wall time the
//! service's own pace allows, its memory flat from 100 to 500 cases. Times are the best of the runs;
//! peak RSS is from GNU time (`%M`, the largest process of a pipeline).

#[path = "../tests/it/support/mod.rs"]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use support::{Chunking, Emulator, Ending, Reply, Route, API_KEY, DATA_SECRET};

struct Options {
    size_mb: usize,
    runs: usize,
    /// `--only replay|raw|rows|scale|chart|check|version`: just that part of the table.
    only: Option<String>,
}

impl Options {
    fn wants(&self, part: &str) -> bool {
        self.only.as_deref().is_none_or(|only| only == part)
    }
}

fn options() -> Options {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str, default: usize| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let options = Options {
        size_mb: value("--size", 200),
        runs: value("--runs", 3).max(1),
        only: args
            .iter()
            .position(|a| a == "--only")
            .and_then(|i| args.get(i + 1))
            .cloned(),
    };
    if let Some(only) = &options.only {
        if !["replay", "raw", "rows", "scale", "chart", "check", "version"].contains(&only.as_str()) {
            eprintln!("--only takes replay, raw, rows, scale, chart, check or version, not {only}");
            std::process::exit(2);
        }
    }
    options
}

/// One run of a shell command line: wall time (seconds, to the
/// microsecond: GNU time's `%e` has only 10 ms, too coarse for a 0.13 s
/// run), CPU time (user + system seconds, from GNU time: steadier than
/// wall time on a shared machine) and peak RSS (KiB, from GNU time).
fn run_once(command: &str) -> (f64, f64, u64) {
    let report = std::env::temp_dir().join(format!("analyst-bench-time-{}", std::process::id()));
    let started = Instant::now();
    let status = Command::new("/usr/bin/time")
        .args(["-f", "%U %S %M", "-o"])
        .arg(&report)
        .args(["bash", "-c", command])
        .status()
        .expect("GNU time (/usr/bin/time) runs");
    let seconds = started.elapsed().as_secs_f64();
    assert!(status.success(), "failed: {command}");
    let text = std::fs::read_to_string(&report).unwrap();
    let _ = std::fs::remove_file(&report);
    let fields: Vec<&str> = text.split_whitespace().rev().take(3).collect();
    let rss = fields[0].parse().unwrap();
    let cpu = fields[2].parse::<f64>().unwrap() + fields[1].parse::<f64>().unwrap();
    (seconds, cpu, rss)
}

/// A command's best wall time and best CPU time (seconds) and largest
/// peak RSS (KiB) over its runs.
#[derive(Clone, Copy)]
struct Timing {
    best: f64,
    cpu: f64,
    rss: u64,
}

impl Timing {
    fn new() -> Timing {
        Timing {
            best: f64::MAX,
            cpu: f64::MAX,
            rss: 0,
        }
    }

    fn add(&mut self, (seconds, cpu, rss): (f64, f64, u64)) {
        self.best = self.best.min(seconds);
        self.cpu = self.cpu.min(cpu);
        self.rss = self.rss.max(rss);
    }
}

/// Times one command `runs` times; `before` runs first each time (to
/// script the emulator's next answer).
fn measure(command: &str, runs: usize, mut before: impl FnMut()) -> Timing {
    let mut timing = Timing::new();
    for _ in 0..runs {
        before();
        timing.add(run_once(command));
    }
    timing
}

/// Times `ours` and `theirs` in turn, `runs` times for ours and at most
/// `their_runs` for theirs (slow references), so that a slow minute of a
/// shared machine falls on both sides of a ratio rather than on one.
fn measure_pair(
    ours: &str,
    theirs: &str,
    runs: usize,
    their_runs: usize,
    mut before: impl FnMut(),
) -> (Timing, Timing) {
    let (mut our_timing, mut their_timing) = (Timing::new(), Timing::new());
    for run in 0..runs {
        before();
        our_timing.add(run_once(ours));
        if run < their_runs {
            before();
            their_timing.add(run_once(theirs));
        }
    }
    (our_timing, their_timing)
}

/// A realistic chat stream of about `size_mb` MB: per agent turn 400
/// thinking deltas, a SQL call with 100 rows, 300 content deltas; a final
/// answer; then a `__state__` line of about a quarter of the size.
fn chat_stream(path: &Path, size_mb: usize) -> usize {
    let target = size_mb << 20;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut written = 0usize;
    let line = |value: serde_json::Value, out: &mut std::io::BufWriter<std::fs::File>| {
        let text = value.to_string();
        writeln!(out, "{text}").unwrap();
        text.len() + 1
    };
    let words = [
        "revenue", "grew", "steadily", "across", "regions", "while", "margins", "held", "firm", "in", "the", "fourth",
        "quarter",
    ];
    let phrase = |seed: usize, n: usize| {
        (0..n)
            .map(|i| words[(seed * 7 + i * 3) % words.len()])
            .collect::<Vec<_>>()
            .join(" ")
    };
    written += line(
        json!({"id": "__cutoff__", "role": "assistant", "state": {"chatId": "bench", "isStreaming": false}, "sort": 0}),
        &mut out,
    );
    written += line(
        json!({"id": "u1", "role": "user", "content": "Revenue?", "isDelta": false, "sort": 1}),
        &mut out,
    );
    let mut turn = 0;
    let mut state_messages = Vec::new();
    while written < target * 3 / 4 {
        turn += 1;
        for i in 0..400 {
            written += line(
                json!({"id": format!("t{turn}"), "role": "assistant", "thinking": phrase(i, 8), "content": "",
                "graphPath": ["semantic_data_analyst_agent"], "isDelta": true, "isInProcess": true, "sort": i}),
                &mut out,
            );
        }
        let rows: Vec<_> = (0..100)
            .map(|m| {
                json!([
                    format!("2024-{:02}", m % 12 + 1),
                    format!("{}.{}", 1_000_000 + m * 7919, m),
                    (m * 37).to_string()
                ])
            })
            .collect();
        let input =
            json!({"sqlQuery": "SELECT month, SUM(revenue) FROM orders_view GROUP BY 1", "queryTitle": "Revenue"})
                .to_string();
        let result = json!({"sqlQuery": "SELECT month, SUM(revenue) FROM orders_view GROUP BY 1",
            "schema": [{"name": "orders_view.month", "column_type": "String"}, {"name": "orders_view.revenue", "column_type": "Double"}, {"name": "orders_view.count", "column_type": "Int64"}],
            "data": rows, "totalRows": 250, "vegaSpec": json!({"mark": "bar"}).to_string()}).to_string();
        written += line(
            json!({"id": format!("s{turn}"), "role": "assistant", "toolCall": {"name": "semanticSqlApi", "input": input}, "isInProcess": true}),
            &mut out,
        );
        written += line(
            json!({"id": format!("s{turn}"), "role": "assistant", "toolCall": {"name": "semanticSqlApi", "input": input, "result": result}, "isInProcess": false}),
            &mut out,
        );
        for i in 0..300 {
            written += line(
                json!({"id": format!("m{turn}"), "role": "assistant", "content": phrase(i, 5) + " ",
                "graphPath": ["semantic_data_analyst_agent"], "isDelta": true, "isInProcess": true, "sort": i}),
                &mut out,
            );
        }
        state_messages.push(json!({"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "AIMessage"], "kwargs": {"content": phrase(turn, 60)}}));
    }
    for i in 0..50 {
        written += line(
            json!({"id": "final", "role": "assistant", "content": format!("part {i} "), "graphPath": ["final"], "isDelta": true}),
            &mut out,
        );
    }
    let mut messages = Vec::new();
    let mut size = 0;
    while written + size < target {
        for message in &state_messages {
            size += message.to_string().len() + 1;
            messages.push(message.clone());
        }
    }
    let longest = line(
        json!({"id": "__state__", "role": "assistant", "state": {"chatId": "bench", "messages": messages}}),
        &mut out,
    );
    line(
        json!({"id": "__usage__", "type": "usage", "usage": {"totalTokens": 1}}),
        &mut out,
    );
    // On disk before anything is timed: writing back a fresh file would
    // otherwise slow the first command measured.
    out.into_inner().unwrap().sync_all().unwrap();
    longest
}

/// The data query API's answer with `rows` rows, in chunks of 1000.
fn data_answer(rows: usize) -> Vec<u8> {
    let mut body =
        json!({"schema": [{"name": "n", "column_type": "Int64"}, {"name": "amount", "column_type": "Double"},
        {"name": "label", "column_type": "String"}], "lastRefreshTime": "2026-11-01T00:00:00Z"})
        .to_string()
        .into_bytes();
    body.push(b'\n');
    for start in (0..rows).step_by(1000) {
        let chunk: Vec<_> = (start..(start + 1000).min(rows))
            .map(|i| json!([i.to_string(), format!("{}.25", i * 3), format!("row {i}")]))
            .collect();
        body.extend(json!({ "data": chunk }).to_string().into_bytes());
        body.push(b'\n');
    }
    body
}

/// Forwarding delays (µs) of `command`'s stdout for timestamped lines.
fn delays(emu: &Emulator, program: &str, args: &[String], lines: usize) -> Vec<u64> {
    emu.script(Reply::Timestamped {
        lines,
        interval: Duration::from_millis(5),
    });
    let mut child = emu
        .command_for(program)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut delays = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
    {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if let Some(sent) = value["content"].as_str().and_then(|s| s.parse::<u128>().ok()) {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            delays.push(((now - sent) / 1000) as u64);
        }
    }
    let _ = child.wait();
    delays.sort_unstable();
    delays
}

/// The size in bytes of what `command` writes on stdout.
fn document_size(command: &str) -> u64 {
    let output = Command::new("bash").args(["-c", command]).output().unwrap();
    assert!(output.status.success(), "failed: {command}");
    output.stdout.len() as u64
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted
        .get(((sorted.len() as f64 - 1.0) * p).round() as usize)
        .copied()
        .unwrap_or(0)
}

/// A row of the table for `rows` of `count` rows: ours against `curl | jq`.
fn rows_row(name: String, ours: Timing, jq: Timing, count: usize) -> (String, String, String, f64, String) {
    (
        name,
        format!(
            "{:.2}s {:.2}M rows/s {}MiB",
            ours.best,
            count as f64 / ours.best / 1e6,
            ours.rss / 1024
        ),
        format!("curl \\| jq {:.2}s {}MiB", jq.best, jq.rss / 1024),
        jq.best / ours.best,
        String::new(),
    )
}

/// A suite of `cases` cases, each asked 3 times and checked.
fn eval_suite(dir: &Path, cases: usize) -> PathBuf {
    let path = dir.join(format!("evals-{cases}.toml"));
    let mut text = String::from("[defaults]\nrepeat = 3\nexpect_answer = \"revenue\"\nmax_llm_calls = 5\n");
    for i in 1..=cases {
        text.push_str(&format!(
            "\n[[case]]\nname = \"case {i}\"\nquestion = \"Revenue by month, take {i}?\"\n"
        ));
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// `check` at scale: 500 cases × 3 runs with `--jobs 16` against an agent
/// that takes its time, compared with the wall time the service's pace
/// allows (a turn's time through curl × the rounds of 16), and its peak
/// RSS compared with 100 cases'.
fn check_at_scale(
    emu: &Emulator,
    dir: &Path,
    analyst: &str,
    runs: usize,
    table: &mut Vec<(String, String, String, f64, String)>,
    targets: &mut Vec<(String, bool)>,
) {
    const JOBS: usize = 16;
    emu.agent(|a| a.delay = Duration::from_millis(5));
    let env = format!(
        "ANALYST_CHAT_URL='{}' ANALYST_API_KEY='{API_KEY}' ANALYST_EXTERNAL_ID=bench",
        emu.chat_url()
    );
    let turn = measure(
        &format!(
            "curl -sN -X POST -H 'Authorization: Api-Key {API_KEY}' -H 'Content-Type: application/json' -d '{{\"input\":\"Q\",\"sessionSettings\":{{\"externalId\":\"bench\"}}}}' '{}' > /dev/null",
            emu.chat_url()
        ),
        runs,
        || {},
    )
    .best;
    let mut peaks = Vec::new();
    for cases in [100, 500] {
        let suite = eval_suite(dir, cases);
        let report = dir.join("check-time");
        let command = format!(
            "{env} /usr/bin/time -f '%e %U %S %M' -o {} {analyst} check -q --jobs {JOBS} {} > /dev/null",
            report.display(),
            suite.display()
        );
        let mut best: Option<(f64, f64, u64)> = None;
        for _ in 0..runs.min(2) {
            let status = Command::new("bash").args(["-c", &command]).status().unwrap();
            assert!(status.success(), "failed: {command}");
            let text = std::fs::read_to_string(&report).unwrap();
            let fields: Vec<&str> = text.split_whitespace().rev().take(4).collect();
            let (rss, sys, user, wall) = (
                fields[0].parse::<u64>().unwrap(),
                fields[1].parse::<f64>().unwrap(),
                fields[2].parse::<f64>().unwrap(),
                fields[3].parse::<f64>().unwrap(),
            );
            if best.is_none_or(|(best_wall, ..)| wall < best_wall) {
                best = Some((wall, user + sys, rss));
            }
        }
        let (wall, cpu, rss) = best.unwrap();
        peaks.push(rss);
        let total_runs = cases * 3;
        let paced = total_runs.div_ceil(JOBS) as f64 * turn;
        let overhead = (wall - paced).max(0.0) / wall;
        table.push((
            format!("check: {cases} cases × 3 runs, --jobs {JOBS}"),
            format!("{wall:.2}s {}MiB, CPU {cpu:.2}s", rss / 1024),
            format!("service pace {paced:.2}s ({turn:.3}s a turn)"),
            0.0,
            format!(
                "overhead {:.1}% of the wall time; CPU {:.1}% of it",
                overhead * 100.0,
                cpu / wall * 100.0
            ),
        ));
        if cases == 500 {
            targets.push((
                format!(
                    "check 500×3: overhead under 5% of the wall time ({:.1}%)",
                    overhead * 100.0
                ),
                overhead < 0.05,
            ));
        }
    }
    let (small, large) = (peaks[0], peaks[1]);
    targets.push((
        format!(
            "check memory flat: 500 cases peak within 10% + 4 MiB of 100 cases' ({} vs {} MiB)",
            large / 1024,
            small / 1024
        ),
        large as f64 <= small as f64 * 1.1 + 4096.0,
    ));
}

fn main() {
    let options = options();
    let analyst = assert_cmd::cargo::cargo_bin("analyst");
    let analyst = analyst.display();
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&data).unwrap();
    let stream = data.join(format!("chat-{}MB.ndjson", options.size_mb));
    eprintln!("generating {} …", stream.display());
    let longest = chat_stream(&stream, options.size_mb);
    let bytes = std::fs::metadata(&stream).unwrap().len();
    let file = stream.display();
    let runs = options.runs;
    let mut table: Vec<(String, String, String, f64, String)> = Vec::new();
    let mut targets: Vec<(String, bool)> = Vec::new();
    let mb = bytes as f64 / 1e6;

    if options.wants("replay") {
        let cat = measure(&format!("cat {file} > /dev/null"), runs, || {}).best;
        let jq_programs = [
            ("answer", r#"jq -rj 'select(.graphPath[0]? == "final") | .content'"#),
            (
                "json",
                r#"jq -s '{answer: (map(select(.graphPath[0]? == "final") | .content) | join("")), queries: [.[] | select(.toolCall.result) | .toolCall.result | fromjson]}'"#,
            ),
            (
                "csv",
                r#"jq -r 'select(.toolCall.result) | .toolCall.result | fromjson | select(.data) | .data[] | @csv'"#,
            ),
            (
                "events",
                r#"jq -c 'if .toolCall then (.toolCall.input |= (fromjson? // .)) | (.toolCall.result |= (fromjson? // .)) else . end'"#,
            ),
        ];
        for (mode, program) in jq_programs {
            let (ours, jq) = measure_pair(
                &format!("{analyst} ask -q --allow-partial --replay {file} -o {mode} > /dev/null"),
                &format!("{program} {file} > /dev/null"),
                runs,
                2,
                || {},
            );
            // Ratios in CPU time (user + system): steadier than wall time
            // on a shared machine.
            let (cpu, rss, ratio) = (ours.cpu, ours.rss, jq.cpu / ours.cpu);
            table.push((
                format!("replay -o {mode} ({mb:.0} MB), CPU time"),
                format!(
                    "{cpu:.3}s ({:.0} MB/s), wall {:.3}s, {}MiB",
                    mb / cpu,
                    ours.best,
                    rss / 1024
                ),
                format!("jq {:.3}s, wall {:.3}s, {}MiB", jq.cpu, jq.best, jq.rss / 1024),
                ratio,
                format!("cat {cat:.2}s wall"),
            ));
            let aim = match mode {
                "answer" | "csv" => Some(20.0),
                "json" => Some(10.0),
                _ => None,
            };
            if let Some(aim) = aim {
                targets.push((
                    format!("replay -o {mode} ≥ {aim}× jq in CPU time (×{ratio:.1})"),
                    ratio >= aim,
                ));
            }
            if mode == "answer" {
                targets.push((
                    format!("replay -o answer ≥ 1 GB/s of CPU time ({:.2} GB/s)", mb / cpu / 1000.0),
                    mb / cpu >= 1000.0,
                ));
            }
            // -o json holds what its document is made of, and, while it
            // reads it, the longest line: the larger of the two is its base.
            let (what, base) = match mode {
                "json" => {
                    let document = document_size(&format!("{analyst} ask -q --allow-partial --replay {file} -o json"));
                    (
                        "the larger of the longest line and the document",
                        document.max(longest as u64),
                    )
                }
                _ => ("longest line", longest as u64),
            };
            let bound = (base >> 10) + 16 * 1024;
            targets.push((
                format!(
                    "replay -o {mode} peak RSS ≤ {what} + 16 MiB ({} ≤ {} MiB)",
                    rss / 1024,
                    bound / 1024
                ),
                rss <= bound,
            ));
        }
    }

    let emu = Emulator::start();
    if options.wants("raw") {
        let body = std::fs::read(&stream).unwrap();
        let serve = || {
            emu.script(Reply::Stream {
                body: body.clone(),
                chunking: Chunking::Sizes(vec![65536]),
                delay: Duration::ZERO,
                ending: Ending::Clean,
            })
        };
        let env = format!(
            "ANALYST_CHAT_URL='{}' ANALYST_API_KEY='{API_KEY}' ANALYST_EXTERNAL_ID=bench",
            emu.chat_url()
        );
        let curl_command = format!(
            "curl -sN -X POST -H 'Authorization: Api-Key {API_KEY}' -H 'Content-Type: application/json' -d '{{\"input\":\"Q\",\"sessionSettings\":{{\"externalId\":\"bench\"}}}}' '{}' > /dev/null",
            emu.chat_url()
        );
        let (ours, curl) = measure_pair(
            &format!("{env} {analyst} ask -q -o raw Q > /dev/null"),
            &curl_command,
            runs,
            runs,
            serve,
        );
        let (ours, rss, theirs, curl_rss) = (ours.best, ours.rss, curl.best, curl.rss);
        table.push((
            format!("ask -o raw through the emulator ({mb:.0} MB)"),
            format!("{ours:.2}s {:.0}MB/s {}MiB", mb / ours, rss / 1024),
            format!("curl -N {theirs:.2}s {}MiB", curl_rss / 1024),
            theirs / ours,
            String::new(),
        ));

        let raw_args = ["ask".to_string(), "-q".into(), "-o".into(), "raw".into(), "Q".into()];
        let ours_delay = delays(&emu, &analyst.to_string(), &raw_args, 400);
        let curl_args: Vec<String> = [
            "-sN",
            "-X",
            "POST",
            "-H",
            &format!("Authorization: Api-Key {API_KEY}"),
            "-H",
            "Content-Type: application/json",
            "-d",
            r#"{"input":"Q","sessionSettings":{"externalId":"bench"}}"#,
            &emu.chat_url(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let curl_delay = delays(&emu, "curl", &curl_args, 400);
        table.push((
            "line forwarding delay, p50 / p99 / max".into(),
            format!(
                "{} / {} / {} µs",
                percentile(&ours_delay, 0.5),
                percentile(&ours_delay, 0.99),
                ours_delay.last().unwrap_or(&0)
            ),
            format!(
                "curl {} / {} / {} µs",
                percentile(&curl_delay, 0.5),
                percentile(&curl_delay, 0.99),
                curl_delay.last().unwrap_or(&0)
            ),
            0.0,
            String::new(),
        ));
        targets.push((
            format!(
                "each line forwarded within 1 ms (p99 {} µs)",
                percentile(&ours_delay, 0.99)
            ),
            percentile(&ours_delay, 0.99) <= 1000,
        ));
    }

    if options.wants("rows") {
        let rows = 1_000_000;
        let page = 50_000;
        let pages = rows / page;
        let token = analyst::api::data::sign_hs256(
            DATA_SECRET.as_bytes(),
            &serde_json::Map::new(),
            std::time::SystemTime::now(),
        );
        let curl = format!(
            "curl -s -X POST -H 'Authorization: {token}' -H 'Content-Type: application/json' -d '{{\"query\":\"x\"}}' '{}/v1/cubesql'",
            emu.data_url()
        );
        let ours = |flags: &str| {
            format!(
                "ANALYST_DATA_URL='{}' ANALYST_DATA_SECRET='{DATA_SECRET}' {analyst} rows -q {flags} > /dev/null",
                emu.data_url()
            )
        };
        let serve = |body: &Vec<u8>| {
            emu.script_on(
                Route::Data,
                Reply::Stream {
                    body: body.clone(),
                    chunking: Chunking::Sizes(vec![65536]),
                    delay: Duration::ZERO,
                    ending: Ending::Clean,
                },
            )
        };
        // One answer of a million rows (a server with stream mode on).
        let answer = data_answer(rows);
        let (one, jq) = measure_pair(
            &ours("--no-paging --sql x"),
            &format!("{curl} | jq -r '.data[]? | @csv' > /dev/null"),
            runs,
            2,
            || serve(&answer),
        );
        table.push(rows_row("rows, 1M rows in one answer to CSV".into(), one, jq, rows));
        // The same million rows as a real server gives them: 20 pages of
        // 50,000 (and an empty one that ends them), every page fetched.
        let page_answer = data_answer(page);
        let empty = data_answer(0);
        let serve_pages = || {
            for _ in 0..pages {
                serve(&page_answer);
            }
            serve(&empty);
        };
        let (paged, jq) = measure_pair(
            &ours("--sql 'SELECT n, amount, label FROM big ORDER BY n'"),
            &format!("for k in $(seq 0 {pages}); do {curl} | jq -r '.data[]? | @csv'; done > /dev/null"),
            runs,
            2,
            serve_pages,
        );
        table.push(rows_row(
            format!("rows, 1M rows paged ({pages} pages of {page}) to CSV"),
            paged,
            jq,
            rows,
        ));
        targets.push((
            format!(
                "rows ≥ 5× faster than curl \\| jq, paged (×{:.1})",
                jq.best / paged.best
            ),
            jq.best / paged.best >= 5.0,
        ));
        let parquet = measure(
            &ours("-o parquet --sql 'SELECT n, amount, label FROM big ORDER BY n'"),
            runs,
            serve_pages,
        );
        table.push((
            "rows, 1M rows paged to Parquet".to_string(),
            format!("{:.2}s {}MiB", parquet.best, parquet.rss / 1024),
            format!("CSV {:.2}s", paged.best),
            0.0,
            format!("×{:.1} of CSV's time", parquet.best / paged.best),
        ));
        targets.push((
            format!("Parquet within 2× of CSV's time (×{:.1})", parquet.best / paged.best),
            parquet.best <= 2.0 * paged.best,
        ));
        targets.push((
            format!(
                "rows peak RSS flat, ≤ 32 MiB ({} and {} MiB)",
                one.rss / 1024,
                paged.rss / 1024
            ),
            one.rss.max(paged.rss) <= 32 * 1024,
        ));
        targets.push((
            format!("Parquet peak RSS flat, ≤ 64 MiB ({} MiB)", parquet.rss / 1024),
            parquet.rss <= 64 * 1024,
        ));
    }

    if options.wants("scale") {
        for (what, path) in [
            (
                "100k tool calls that never finish",
                scale_stream(&data, ScaleShape::Pending),
            ),
            ("100k tool names", scale_stream(&data, ScaleShape::Names)),
        ] {
            let file = path.display();
            let (ours, jq) = measure_pair(
                &format!("{analyst} ask -q --replay {file} -o json > /dev/null; true"),
                &format!("jq -c . {file} > /dev/null"),
                runs,
                runs,
                || {},
            );
            table.push((
                format!("replay -o json, {what}"),
                format!("{:.2}s {}MiB", ours.best, ours.rss / 1024),
                format!("jq -c . {:.2}s", jq.best),
                jq.best / ours.best,
                String::new(),
            ));
            targets.push((
                format!("{what}: linear, no slower than jq -c . (×{:.1})", jq.best / ours.best),
                ours.best <= jq.best,
            ));
        }
        // Modes that do not show the answer do not keep its text, and a
        // call waiting for its result keeps only what a SQL result needs.
        for (what, shape, modes, target_mib) in [
            (
                "100 MB of 1 KB deltas of one message",
                ScaleShape::Deltas,
                &["raw", "answer"][..],
                40,
            ),
            (
                "100k tool calls of 1 KB inputs that never finish",
                ScaleShape::Pending,
                &["raw", "json"][..],
                16,
            ),
        ] {
            let path = scale_stream(&data, shape);
            for mode in modes {
                let ours = replay_once(&analyst, &path, mode, format!("replay -o {mode}, {what}"), &mut table);
                // The answer and the document hold what they write.
                if *mode == "raw" {
                    targets.push((
                        format!(
                            "-o raw of {what} peaks under {target_mib} MiB ({} MiB)",
                            ours.rss / 1024
                        ),
                        ours.rss < target_mib * 1024,
                    ));
                }
            }
        }
        let document = document_size(&format!(
            "{analyst} ask -q --replay {} -o json; true",
            tiny_document(&data).display()
        ));
        let ours = replay_once(
            &analyst,
            &tiny_document(&data),
            "json",
            format!(
                "replay -o json, 4M tiny rows on one line, a {} MB document",
                document / 1_000_000
            ),
            &mut table,
        );
        targets.push((
            format!(
                "-o json holds at most its document + 64 MiB ({} ≤ {} MiB)",
                ours.rss / 1024,
                (document >> 20) + 64
            ),
            ours.rss <= (document >> 10) + 64 * 1024,
        ));
        let tiny = scale_stream(&data, ScaleShape::TinyRows);
        let line = std::fs::metadata(&tiny).unwrap().len();
        let bound = 3 * (line >> 10) + 16 * 1024;
        for mode in ["answer", "raw", "events", "csv", "vega"] {
            let ours = replay_once(
                &analyst,
                &tiny,
                mode,
                format!("replay -o {mode}, one {} MB line of tiny rows", line / 1_000_000),
                &mut table,
            );
            targets.push((
                format!(
                    "-o {mode} of a {} MB line peaks within 3× it + 16 MiB ({} ≤ {} MiB)",
                    line / 1_000_000,
                    ours.rss / 1024,
                    bound / 1024
                ),
                ours.rss <= bound,
            ));
        }
    }

    if options.wants("chart") {
        let chart = chart_stream(&data);
        for mode in ["svg", "png"] {
            let ours = measure(
                &format!("{analyst} ask -q --replay {} -o {mode} > /dev/null", chart.display()),
                runs,
                || {},
            );
            table.push((
                format!("replay -o {mode}, a 100-row bar chart"),
                format!("{:.0} ms {}MiB", ours.best * 1000.0, ours.rss / 1024),
                String::new(),
                0.0,
                String::new(),
            ));
            targets.push((
                format!(
                    "-o {mode} of a 100-row chart under 400 ms ({:.0} ms)",
                    ours.best * 1000.0
                ),
                ours.best < 0.4,
            ));
        }
    }

    if options.wants("check") {
        check_at_scale(&emu, &data, &analyst.to_string(), runs, &mut table, &mut targets);
    }

    if options.wants("version") {
        let started = Instant::now();
        for _ in 0..50 {
            Command::new(analyst.to_string())
                .arg("--version")
                .stdout(Stdio::null())
                .status()
                .unwrap();
        }
        let startup = started.elapsed().as_secs_f64() / 50.0 * 1000.0;
        table.push((
            "analyst --version".into(),
            format!("{startup:.2} ms"),
            String::new(),
            0.0,
            String::new(),
        ));
        targets.push((format!("analyst --version under 5 ms ({startup:.2} ms)"), startup < 5.0));
    }

    println!("\n| benchmark | analyst | reference | speed-up | notes |\n|---|---|---|---|---|");
    for (name, ours, theirs, ratio, note) in &table {
        let ratio = if *ratio > 0.0 {
            format!("×{ratio:.1}")
        } else {
            String::new()
        };
        println!("| {name} | {ours} | {theirs} | {ratio} | {note} |");
    }
    println!(
        "\nlongest line: {:.1} MiB; machine: {} cores, {}",
        longest as f64 / 1048576.0,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        machine()
    );
    println!("\n| target | met |\n|---|---|");
    for (target, met) in &targets {
        println!("| {target} | {} |", if *met { "yes" } else { "**no**" });
    }
}

/// A stream whose one SQL result is a 100-row bar chart, written under
/// `data` (once); returns its path.
fn chart_stream(data: &Path) -> PathBuf {
    let path = data.join("chart-100-rows.ndjson");
    let rows: Vec<serde_json::Value> = (0..100)
        .map(|i| json!([format!("2024-{i:03}"), (1000 + i * 37 % 500).to_string()]))
        .collect();
    let spec = json!({"mark": "bar", "encoding": {"x": {"field": "orders.day", "type": "ordinal"},
        "y": {"field": "orders.revenue", "type": "quantitative"}}});
    let result = json!({"schema": [{"name": "orders.day", "column_type": "String"}, {"name": "orders.revenue", "column_type": "Double"}],
        "data": rows, "totalRows": 100, "vegaSpec": spec.to_string()});
    let lines = [
        json!({"id": "__cutoff__", "state": {"chatId": "chart"}}),
        json!({"id": "t", "role": "assistant", "toolCall": {"name": "cubeSqlApi",
            "input": json!({"sqlQuery": "SELECT 1"}).to_string(), "result": result.to_string()}}),
        json!({"id": "f", "role": "assistant", "content": "done", "graphPath": ["final"], "isDelta": false}),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// The adversarial shapes of the `scale` part.
#[derive(Clone, Copy)]
enum ScaleShape {
    /// 100,000 tool calls that start and never finish.
    Pending,
    /// 100,000 finished calls, each of a tool of its own name.
    Names,
    /// One SQL result line of about 48 MB of two-cell rows.
    TinyRows,
    /// 100 MB of 1 KB deltas of one message (the answer, never finished).
    Deltas,
}

/// Writes the stream of `shape` under `data` (once) and returns its path.
fn scale_stream(data: &Path, shape: ScaleShape) -> PathBuf {
    let name = match shape {
        ScaleShape::Pending => "scale-pending.ndjson",
        ScaleShape::Names => "scale-names.ndjson",
        ScaleShape::TinyRows => "scale-tiny-rows.ndjson",
        ScaleShape::Deltas => "scale-deltas.ndjson",
    };
    let path = data.join(name);
    if path.exists() {
        return path;
    }
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(out, "{}", json!({"id": "__cutoff__", "state": {"chatId": "scale"}})).unwrap();
    match shape {
        ScaleShape::Pending | ScaleShape::Names => {
            for i in 0..100_000 {
                let line = match shape {
                    ScaleShape::Pending => {
                        let input = json!({"question": "x".repeat(1000)}).to_string();
                        json!({"id": format!("t{i}"), "role": "assistant", "toolCall": {"name": "cubeMeta", "input": input}})
                    }
                    _ => {
                        json!({"id": format!("t{i}"), "role": "assistant", "toolCall": {"name": format!("tool{i}"), "input": "{}", "result": "{}"}})
                    }
                };
                writeln!(out, "{line}").unwrap();
            }
        }
        ScaleShape::TinyRows => {
            let rows: Vec<serde_json::Value> = (0..3_500_000).map(|i| json!(["a", (i % 10).to_string()])).collect();
            let result = json!({"schema": [{"name": "k", "column_type": "String"}, {"name": "v", "column_type": "Int64"}],
                "data": rows, "totalRows": 3_500_000,
                "vegaSpec": {"mark": "bar", "encoding": {"x": {"field": "k", "type": "nominal"}, "y": {"field": "v", "type": "quantitative"}}}});
            let input = json!({"sqlQuery": "SELECT k, v FROM t"}).to_string();
            let line = json!({"id": "t", "role": "assistant", "toolCall": {"name": "cubeSqlApi", "input": input, "result": result.to_string()}});
            writeln!(out, "{line}").unwrap();
        }
        ScaleShape::Deltas => {
            let delta = json!({"id": "m", "role": "assistant", "content": "x".repeat(1000),
                "graphPath": ["final"], "isDelta": true, "isInProcess": true});
            for _ in 0..100_000 {
                writeln!(out, "{delta}").unwrap();
            }
        }
    }
    let answer = json!({"id": "f", "role": "assistant", "content": "done", "graphPath": ["final"], "isDelta": false});
    writeln!(out, "{answer}").unwrap();
    out.flush().unwrap();
    path
}

/// One replay of `path` in `mode` (whatever its exit code), measured once
/// and added to `table` as `label`.
fn replay_once(
    analyst: &impl std::fmt::Display,
    path: &Path,
    mode: &str,
    label: String,
    table: &mut Vec<(String, String, String, f64, String)>,
) -> Timing {
    let ours = measure(
        &format!(
            "{analyst} ask -q --replay {} -o {mode} > /dev/null; true",
            path.display()
        ),
        1,
        || {},
    );
    table.push((
        label,
        format!("{:.2}s {}MiB", ours.best, ours.rss / 1024),
        String::new(),
        0.0,
        String::new(),
    ));
    ours
}

/// A stream whose one SQL result is a 16 MB line of 4 million one-cell
/// rows (under `data`, written once): its `-o json` document is about
/// 300 MB.
fn tiny_document(data: &Path) -> PathBuf {
    let path = data.join("scale-json-document.ndjson");
    if path.exists() {
        return path;
    }
    let mut result = String::from(r#"{"schema":[{"name":"k","column_type":"Int64"}],"totalRows":4000000,"data":["#);
    for i in 0..4_000_000 {
        result.push_str(if i > 0 { ",[1]" } else { "[1]" });
    }
    result.push_str("]}");
    let input = json!({"sqlQuery": "SELECT k FROM t"}).to_string();
    let lines = [
        json!({"id": "__cutoff__", "state": {"chatId": "scale"}}),
        json!({"id": "t", "role": "assistant", "toolCall": {"name": "cubeSqlApi", "input": input, "result": result}}),
        json!({"id": "f", "role": "assistant", "content": "done", "graphPath": ["final"], "isDelta": false}),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn machine() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}
