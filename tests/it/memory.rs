//! Memory stays flat however long the input: `rows` of 1 million rows
//! through the emulator peaks at about the same resident memory as 100
//! thousand, and a replay of millions of lines stays small. Peak RSS is
//! GNU time's (`%M`): a child's own peak also counts the pages of the
//! process that spawned it, so the small `time` spawns it, not this test
//! process, whose other tests may hold large buffers.

use std::io::Read;
use std::process::Stdio;

use crate::support::*;

/// Runs `analyst rows` for `count` generated rows; returns the child's peak
/// RSS in KiB and the number of CSV lines it wrote.
fn rows_peak_rss(emu: &Emulator, count: usize) -> (i64, usize) {
    let sql = format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count}) \
         SELECT i AS n, i * 2 AS twice, 'row number ' || i AS label FROM n LIMIT {count}"
    );
    let mut command = emu.command();
    command
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .args(["rows", "-q", "--sql", &sql]);
    let mut measured = Measured::new(command);
    let mut child = measured.command.stdout(Stdio::piped()).spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let counter = std::thread::spawn(move || {
        let (mut lines, mut buffer) = (0, vec![0; 1 << 16]);
        loop {
            match stdout.read(&mut buffer) {
                Ok(0) | Err(_) => return lines,
                Ok(n) => lines += buffer[..n].iter().filter(|&&b| b == b'\n').count(),
            }
        }
    });
    let rss = measured.peak_rss(child);
    (rss, counter.join().unwrap())
}

/// A command run under GNU time, which reports its peak RSS.
struct Measured {
    command: std::process::Command,
    report: Scratch,
}

impl Measured {
    /// `command` (its program, arguments and environment) under
    /// `/usr/bin/time -f %M`.
    fn new(command: std::process::Command) -> Measured {
        let report = Scratch::new();
        let mut timed = std::process::Command::new("/usr/bin/time");
        timed
            .args(["-f", "%M", "-o"])
            .arg(report.join("rss"))
            .arg(command.get_program())
            .args(command.get_args());
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => timed.env(key, value),
                None => timed.env_remove(key),
            };
        }
        Measured { command: timed, report }
    }

    /// Waits for the child, which must succeed; its peak RSS in KiB.
    fn peak_rss(&self, mut child: std::process::Child) -> i64 {
        let status = child.wait().unwrap();
        assert!(status.success(), "the command failed: {status}");
        let text = std::fs::read_to_string(self.report.join("rss")).unwrap();
        text.split_whitespace().last().unwrap().parse().unwrap()
    }

    /// Runs it with stdout discarded; its peak RSS in KiB.
    fn run(mut self) -> i64 {
        let child = self.command.stdout(Stdio::null()).spawn().unwrap();
        self.peak_rss(child)
    }
}

#[test]
fn a_million_rows_take_no_more_memory_than_a_hundred_thousand() {
    let emu = Emulator::start();
    let (small, small_lines) = rows_peak_rss(&emu, 100_000);
    let (large, large_lines) = rows_peak_rss(&emu, 1_000_000);
    assert_eq!((small_lines, large_lines), (100_001, 1_000_001));
    eprintln!("peak RSS: 100k rows {small} KiB, 1M rows {large} KiB");
    assert!(
        large - small < 8 * 1024,
        "memory grew with the rows: {small} KiB for 100k, {large} KiB for 1M"
    );
}

#[test]
fn a_replay_of_millions_of_blank_lines_stays_small() {
    // Lines are parsed a bounded number at a time, so even a file of tiny
    // lines (all in one batch of the line reader) costs no memory per line.
    let dir = Scratch::new();
    let saved = dir.join("blank.ndjson");
    let mut stream = vec![b'\n'; 3_000_000];
    stream.extend(std::fs::read(fixture("revenue-by-month.ndjson")).unwrap());
    std::fs::write(&saved, stream).unwrap();
    let mut command = Emulator::start().command();
    command.args(["ask", "-q", "--replay"]).arg(&saved);
    let rss = Measured::new(command).run();
    eprintln!("peak RSS: {rss} KiB");
    assert!(rss < 32 * 1024, "3 million blank lines took {rss} KiB");
}

/// A SQL result of a million tiny rows on one line: every mode but `json`
/// (whose document is the output) peaks within three times the line above
/// what the binary takes to replay a small stream. The rows stay in the
/// result's text and are read one at a time.
#[test]
fn a_huge_line_of_tiny_rows_peaks_within_three_times_the_line() {
    // Written straight to the file, escaped by hand: the test holds no
    // large string.
    let dir = Scratch::new();
    let path = dir.join("tiny.ndjson");
    let line = {
        use std::io::Write;
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let head = ChatStream::new("c-tiny", Family::Cube).user("Q").bytes();
        out.write_all(&head).unwrap();
        let start = r#"{"id":"t","role":"assistant","toolCall":{"name":"cubeSqlApi","input":"{\"sqlQuery\":\"SELECT k\"}","result":"{\"schema\":[{\"name\":\"k\",\"column_type\":\"String\"},{\"name\":\"v\",\"column_type\":\"Int64\"}],\"totalRows\":1000000,\"vegaSpec\":{\"mark\":\"bar\",\"encoding\":{\"x\":{\"field\":\"k\",\"type\":\"nominal\"},\"y\":{\"field\":\"v\",\"type\":\"quantitative\"}}},\"data\":["#;
        let mut length = start.len();
        out.write_all(start.as_bytes()).unwrap();
        for i in 0..1_000_000 {
            let row = format!(r#"{}[\"a\",\"{}\"]"#, if i > 0 { "," } else { "" }, i % 10);
            length += row.len();
            out.write_all(row.as_bytes()).unwrap();
        }
        let end = "]}\"}}\n";
        out.write_all(end.as_bytes()).unwrap();
        out.write_all(&ChatStream::empty().final_answer(&["Done"]).bytes())
            .unwrap();
        (length + end.len()) as i64
    };
    let replay = |mode: &str, path: &std::path::Path| {
        let mut command = analyst_process();
        command.args(["ask", "-q", "-o", mode, "--replay"]).arg(path);
        Measured::new(command).run()
    };
    let idle = replay("answer", std::path::Path::new(&fixture("revenue-by-month.ndjson")));
    let bound = 3 * line / 1024 + idle;
    for mode in ["answer", "raw", "events", "csv", "vega"] {
        let rss = replay(mode, &path);
        eprintln!("-o {mode}: peak RSS {rss} KiB for a {line}-byte line ({idle} KiB for a small stream)");
        assert!(rss <= bound, "-o {mode} peaked at {rss} KiB, over {bound} KiB");
    }
}

/// Writes a stream to `path` whose middle is `count` lines made by `line`
/// (a user line before, a final answer after); the test holds no large
/// string.
fn write_stream(path: &std::path::Path, count: usize, line: impl Fn(usize) -> String) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    out.write_all(&ChatStream::new("c-many", Family::Cube).user("Q").bytes())
        .unwrap();
    for i in 0..count {
        out.write_all(line(i).as_bytes()).unwrap();
        out.write_all(b"\n").unwrap();
    }
    out.write_all(&ChatStream::empty().final_answer(&["Done"]).bytes())
        .unwrap();
}

/// Peak RSS (KiB) of `ask -q -o MODE --replay PATH`, and how many bytes it
/// wrote.
fn replay_peak(mode: &str, path: &std::path::Path) -> (i64, u64) {
    let mut command = analyst_process();
    command.args(["ask", "-q", "-o", mode, "--replay"]).arg(path);
    let mut measured = Measured::new(command);
    let mut child = measured.command.stdout(Stdio::piped()).spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let counter = std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()).unwrap());
    let rss = measured.peak_rss(child);
    (rss, counter.join().unwrap())
}

/// Modes that do not show the answer do not keep its text, and a tool call
/// waiting for its result keeps what a SQL result is read from, not its
/// whole input: 40 MB of one message's deltas, or 40,000 tool calls with a
/// kilobyte of input each, stay within 24 MiB of a small stream's peak.
#[test]
fn what_an_output_does_not_show_is_not_kept() {
    let dir = Scratch::new();
    let filler = "x".repeat(1000);
    let deltas = dir.join("deltas.ndjson");
    write_stream(&deltas, 40_000, |_| {
        format!(
            r#"{{"id":"m-long","role":"assistant","content":"{filler}","graphPath":["final"],"isDelta":true,"isInProcess":true}}"#
        )
    });
    let calls = dir.join("calls.ndjson");
    write_stream(&calls, 40_000, |i| {
        let input = serde_json::json!({ "question": filler }).to_string();
        serde_json::json!({"id": format!("t{i}"), "role": "assistant",
            "toolCall": {"name": "cubeMeta", "input": input}, "isInProcess": true})
        .to_string()
    });
    let (idle, _) = replay_peak("raw", std::path::Path::new(&fixture("revenue-by-month.ndjson")));
    let bound = idle + 24 * 1024;
    for path in [&deltas, &calls] {
        for mode in ["raw", "events"] {
            let (rss, _) = replay_peak(mode, path);
            eprintln!(
                "-o {mode} of {}: peak RSS {rss} KiB ({idle} KiB for a small stream)",
                path.display()
            );
            assert!(
                rss <= bound,
                "-o {mode} of {} peaked at {rss} KiB, over {bound} KiB",
                path.display()
            );
        }
    }
}

/// `-o json` holds at most the document it writes plus 64 MiB: the rows of
/// a result are written into `toolCalls` from the line they came in, one
/// at a time, not built as a tree of values (a line of 2 million tiny rows
/// took ten times its document before).
#[test]
fn json_holds_at_most_its_document_and_64_mib() {
    let dir = Scratch::new();
    let path = dir.join("tiny.ndjson");
    write_stream(&path, 1, |_| {
        let mut line = String::from(
            r#"{"id":"t","role":"assistant","toolCall":{"name":"cubeSqlApi","input":"{\"sqlQuery\":\"SELECT k\"}","result":"{\"schema\":[{\"name\":\"k\",\"column_type\":\"Int64\"}],\"totalRows\":2000000,\"data\":["#,
        );
        for i in 0..2_000_000 {
            line.push_str(if i > 0 { ",[1]" } else { "[1]" });
        }
        line.push_str(r#"]}"}}"#);
        line
    });
    let (rss, written) = replay_peak("json", &path);
    let bound = written as i64 / 1024 + 64 * 1024;
    eprintln!("-o json: peak RSS {rss} KiB for a {written}-byte document");
    assert!(rss <= bound, "-o json peaked at {rss} KiB, over {bound} KiB");
}

#[test]
fn grading_200_000_rows_of_3_columns_a_side_stays_under_128_mib() {
    // The agent's result comes whole in the stream (one line of 200,000
    // rows), the ground truth's through the data query API, page by page;
    // both go straight into compact cells.
    const ROWS: usize = 200_000;
    let rows = |select: &str| {
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {ROWS}) SELECT {select} FROM n"
        )
    };
    let truth = rows("i AS id, i * 0.5 AS half, 'region ' || (i % 97) AS region");
    let answer = rows("'region ' || (i % 97) AS r, i AS n, i * 0.5 AS h");
    let dir = Scratch::new();
    dir.write(
        "eval_questions.yml",
        format!(
            "eval_questions:\n  - name: big\n    question: All of it?\n    sql: {}\n",
            serde_json::to_string(&truth).unwrap()
        ),
    );
    let emu = Emulator::start();
    emu.agent(|agent| {
        agent.answers = vec![("All of it".to_string(), Answer::Sql(answer))];
        agent.returned_rows = ROWS;
    });
    let mut command = emu.command();
    command
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .args(["check", "-q", "--no-history"])
        .arg(&*dir);
    let peak_kib = Measured::new(command).run();
    eprintln!("grading 200,000 × 3 a side: peak {} MiB", peak_kib / 1024);
    assert!(peak_kib < 128 * 1024, "peak {} MiB", peak_kib / 1024);
}

/// Recording a turn costs no more than not recording it: over 40 MB of
/// deltas of one final answer, `ask -o raw` with the history on stays
/// within 24 MiB of a small turn's peak, and the history keeps the
/// answer's first MiB with a marker.
#[test]
fn recording_a_turn_changes_not_what_it_costs() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let db = dir.join("history.db");
    let filler = "y".repeat(1000);
    let pieces: Vec<&str> = (0..40_000).map(|_| filler.as_str()).collect();
    let peak = |stream: &ChatStream| {
        emu.script(Reply::stream(stream));
        let mut command = emu.command();
        command
            .env("ANALYST_HISTORY_DB", &db)
            .args(["ask", "-q", "-o", "raw", "Long answer?"]);
        Measured::new(command).run()
    };
    let small = peak(
        &ChatStream::new("chat-0001", Family::Cube)
            .user("Long answer?")
            .final_answer(&["Short."])
            .usage(),
    );
    let long = peak(
        &ChatStream::new("chat-0001", Family::Cube)
            .user("Long answer?")
            .final_answer(&pieces)
            .usage(),
    );
    eprintln!("-o raw, recorded: {long} KiB for 40 MB of answer, {small} KiB for a short one");
    assert!(long <= small + 24 * 1024, "{long} KiB, over {small} + 24 MiB");
    let recorded: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT answer FROM turns ORDER BY id DESC LIMIT 1", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert!(recorded.starts_with(&filler), "the answer's head is recorded");
    assert!(recorded.ends_with("its first 1 MiB is kept]"), "with the marker");
    assert!(recorded.len() < (1 << 20) + 200, "{} bytes", recorded.len());
}

/// `history list` reads only what it prints: ten turns with 20 MB answers
/// cost what ten short ones do, and `--grep` reads one turn at a time.
#[test]
fn listing_turns_with_huge_answers_costs_what_short_ones_do() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let db = dir.join("history.db");
    for i in 0..10 {
        emu.analyst()
            .env("ANALYST_HISTORY_DB", &db)
            .args(["ask", &format!("Question {i}?")])
            .assert()
            .success();
    }
    let peak = |args: &[&str]| {
        let mut command = analyst_process();
        command.env("ANALYST_HISTORY_DB", &db).args(args);
        Measured::new(command).run()
    };
    let short_list = peak(&["history"]);
    let short_grep = peak(&["history", "--grep", "needle"]);
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE turns SET answer = replace(hex(zeroblob(10000000)), '00', 'zz')",
            [],
        )
        .unwrap();
    let long_list = peak(&["history"]);
    let long_grep = peak(&["history", "--grep", "needle"]);
    let long_json = peak(&["history", "-o", "json", "--limit", "1"]);
    eprintln!("history list: {long_list} KiB ({short_list} short); --grep: {long_grep} KiB ({short_grep} short); -o json --limit 1: {long_json} KiB");
    assert!(long_list <= short_list + 8 * 1024, "list: {long_list} KiB");
    assert!(long_grep <= short_grep + 3 * 20 * 1024, "grep: {long_grep} KiB");
    assert!(
        long_json <= short_list + 4 * 20 * 1024,
        "one whole turn: {long_json} KiB"
    );
}

/// Peak RSS in KiB of `check --jobs 2` on `cases` cases that all send
/// the one image `image`.
fn check_peak_rss(emu: &Emulator, dir: &Scratch, cases: usize) -> i64 {
    let suite: String = (0..cases)
        .map(|case| {
            format!("[[case]]\nname = \"case {case}\"\nquestion = \"What is in it?\"\nimages = [\"big.png\"]\n\n")
        })
        .collect();
    let suite = dir.write(&format!("suite-{cases}.toml"), suite);
    let mut command = emu.command();
    command.args(["check", "-q", "--jobs", "2"]).arg(&suite);
    Measured::new(command).run()
}

#[test]
fn one_image_named_by_ten_cases_is_held_once_and_only_while_they_run() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    // 20 MiB less a byte: the largest image the service takes.
    let mut image = b"\x89PNG\r\n\x1a\n".to_vec();
    image.resize((20 << 20) - 1, b'x');
    dir.write("big.png", &image);
    drop(image);
    let two = check_peak_rss(&emu, &dir, 2);
    let ten = check_peak_rss(&emu, &dir, 10);
    eprintln!("peak RSS: 2 cases {two} KiB, 10 cases {ten} KiB");
    // Read up front, each case's copy would add 27 MiB (its base64).
    assert!(
        ten - two < 48 * 1024,
        "memory grew with the cases: {two} KiB for 2, {ten} KiB for 10"
    );
}
