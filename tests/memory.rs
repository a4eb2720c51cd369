//! Memory stays flat however long the input: `rows` of 1 million rows
//! through the emulator peaks at about the same resident memory as 100
//! thousand, and a replay of millions of lines stays small. Peak RSS is read
//! per child with wait4(2).

mod support;

use std::io::Read;
use std::process::Stdio;

use support::*;

/// Runs `analyst rows` for `count` generated rows; returns the child's peak
/// RSS in KiB and the number of CSV lines it wrote.
fn rows_peak_rss(emu: &Emulator, count: usize) -> (i64, usize) {
    let sql = format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count}) \
         SELECT i AS n, i * 2 AS twice, 'row number ' || i AS label FROM n LIMIT {count}"
    );
    let mut child = emu
        .command()
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .args(["rows", "-q", "--sql", &sql])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
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
    let rss = wait_peak_rss(child);
    (rss, counter.join().unwrap())
}

/// Waits for a child that must succeed (reaping it with wait4, which also
/// reports its peak RSS); returns that peak in KiB.
fn wait_peak_rss(child: std::process::Child) -> i64 {
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid, and wait4 only writes into the
    // two out-parameters; the child is ours and not yet reaped.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the command failed: {status}"
    );
    usage.ru_maxrss
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
    let child = Emulator::start()
        .command()
        .args(["ask", "-q", "--replay"])
        .arg(&saved)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let rss = wait_peak_rss(child);
    eprintln!("peak RSS: {rss} KiB");
    assert!(rss < 32 * 1024, "3 million blank lines took {rss} KiB");
}

/// A SQL result of a million tiny rows on one line: every mode but `json`
/// (whose document is the output) peaks within three times the line plus
/// 16 MiB. The rows stay in the result's text and are read one at a time.
#[test]
fn a_huge_line_of_tiny_rows_peaks_within_three_times_the_line() {
    // Written straight to the file, escaped by hand: a child's peak counts
    // the pages its parent had at fork, so the test holds no large string.
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
    let bound = 3 * line / 1024 + 16 * 1024;
    for mode in ["answer", "raw", "events", "csv", "vega"] {
        let child = analyst_process()
            .args(["ask", "-q", "-o", mode, "--replay"])
            .arg(&path)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let rss = wait_peak_rss(child);
        eprintln!("-o {mode}: peak RSS {rss} KiB for a {line}-byte line");
        assert!(rss <= bound, "-o {mode} peaked at {rss} KiB, over {bound} KiB");
    }
}
