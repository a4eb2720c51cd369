//! Memory stays flat however many rows come back: `rows` of 1 million rows
//! through the emulator peaks at about the same resident memory as 100
//! thousand. Peak RSS is read per child with wait4(2).

mod support;

use std::io::Read;
use std::process::Stdio;

use support::*;

/// Runs `analyst rows` for `count` generated rows; returns the child's peak
/// RSS in KiB and the number of CSV lines it wrote.
#[allow(
    clippy::zombie_processes,
    reason = "the child is reaped by wait4, which also reports its peak RSS"
)]
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
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid, and wait4 only writes into the
    // two out-parameters; the child is ours and not yet reaped.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "rows failed: {status}"
    );
    (usage.ru_maxrss, counter.join().unwrap())
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
