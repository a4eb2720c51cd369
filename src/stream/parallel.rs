//! Lines parsed on two cores and folded in order on this thread. A replay
//! or a fast connection delivers megabytes at once; parsing them is most of
//! the work, and the lines of a batch do not depend on each other until
//! they are folded. A live stream's few lines at a time are parsed and
//! folded one by one, so nothing waits for a second thread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use super::lines::{Batch, Line};

/// Below this many bytes a group of lines is parsed on the calling thread;
/// from it up, on two cores.
const PARALLEL_FROM: usize = 256 << 10;

/// Lines parsed in one go at most: about a megabyte of chat messages, and
/// enough lines of a real stream to reach [`PARALLEL_FROM`]. Parsed lines
/// wait for their fold, so this bounds their memory (a batch of blank lines
/// must not cost memory per line).
const LINES_PER_GROUP: usize = 4096;

/// The share of a group that one thread parses in one go: small enough
/// that two threads finish a group together, large enough that handing
/// pieces over costs nothing next to parsing them.
const PIECE_BYTES: usize = 32 << 10;

/// Parses every line of `batch` with `parse` and folds each one in order
/// with `fold`, group by group (see `parse_and_fold`). Stops at the first
/// line whose fold gives `Some`, and returns that.
pub fn fold_batch<'a, T: Send, R>(
    batch: Batch<'a>,
    parse: impl Fn(&Line<'a>) -> T + Sync,
    mut fold: impl FnMut(&Line<'a>, T) -> Option<R>,
) -> Option<R> {
    let mut lines = batch.lines();
    loop {
        let group: Vec<Line<'a>> = lines.by_ref().take(LINES_PER_GROUP).collect();
        if group.is_empty() {
            return None;
        }
        if let Some(end) = parse_and_fold(&group, &parse, &mut fold) {
            return Some(end);
        }
    }
}

/// Parses `lines` and folds each one in order, stopping at the first whose
/// fold gives `Some`. A group of [`PARALLEL_FROM`] bytes or more is cut
/// into pieces that this thread and a helper take in turn, parsing and
/// keeping ahead: this thread folds each piece as soon as it is parsed,
/// and parses the next unclaimed one while its turn has not come. Smaller
/// groups are parsed and folded line by line.
fn parse_and_fold<'a, T: Send, R>(
    lines: &[Line<'a>],
    parse: impl Fn(&Line<'a>) -> T + Sync,
    mut fold: impl FnMut(&Line<'a>, T) -> Option<R>,
) -> Option<R> {
    let bytes: usize = lines.iter().map(|line| line.bytes.len()).sum();
    if bytes < PARALLEL_FROM || lines.len() < 2 {
        return lines.iter().find_map(|line| fold(line, parse(line)));
    }
    let parse_piece = |piece: &[Line<'a>]| -> Vec<T> { piece.iter().map(&parse).collect() };
    let pieces = pieces(lines, PIECE_BYTES);
    let unclaimed = AtomicUsize::new(0);
    let claim = || unclaimed.fetch_add(1, Ordering::Relaxed);
    let (sender, parsed_by_helper) = mpsc::channel::<(usize, Vec<T>)>();
    std::thread::scope(|scope| {
        let (pieces, claim, parse_piece) = (&pieces, &claim, &parse_piece);
        // Without a second thread (the system has none to give), this one
        // parses every piece: the loop below claims them all.
        let helper = std::thread::Builder::new().spawn_scoped(scope, move || {
            let mut index = claim();
            while let Some(piece) = pieces.get(index) {
                if sender.send((index, parse_piece(piece))).is_err() {
                    return;
                }
                index = claim();
            }
        });
        let mut ready: Vec<Option<Vec<T>>> = pieces.iter().map(|_| None).collect();
        let mut outcome = None;
        'fold: for (turn, piece) in pieces.iter().enumerate() {
            let parsed = loop {
                if let Some(parsed) = ready[turn].take() {
                    break parsed;
                }
                let next = claim();
                if let Some(unparsed) = pieces.get(next) {
                    ready[next] = Some(parse_piece(unparsed));
                } else if let Ok((index, parsed)) = parsed_by_helper.recv() {
                    ready[index] = Some(parsed);
                } else {
                    // The helper is gone without this piece: it panicked.
                    break 'fold;
                }
            };
            for (line, parsed) in piece.iter().zip(parsed) {
                outcome = fold(line, parsed);
                if outcome.is_some() {
                    break 'fold;
                }
            }
        }
        // Whatever is left unclaimed is not needed any more.
        unclaimed.store(pieces.len(), Ordering::Relaxed);
        drop(parsed_by_helper);
        match helper.map(|helper| helper.join()) {
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            _ => outcome,
        }
    })
}

/// `lines` cut into runs of at least `bytes` bytes each (the last may be
/// shorter), in order.
fn pieces<'l, 'a>(lines: &'l [Line<'a>], bytes: usize) -> Vec<&'l [Line<'a>]> {
    let mut pieces = Vec::new();
    let (mut start, mut size) = (0, 0);
    for (index, line) in lines.iter().enumerate() {
        size += line.bytes.len();
        if size >= bytes {
            pieces.push(&lines[start..=index]);
            (start, size) = (index + 1, 0);
        }
    }
    if start < lines.len() {
        pieces.push(&lines[start..]);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered_lines(count: usize) -> Vec<u8> {
        (0..count)
            .flat_map(|i| format!("{i} {}\n", "x".repeat(i % 50)).into_bytes())
            .collect()
    }

    fn lines_of(bytes: &[u8]) -> Vec<Line<'_>> {
        let mut number = 0;
        bytes
            .split_inclusive(|&b| b == b'\n')
            .map(|bytes| {
                number += 1;
                Line {
                    bytes,
                    number,
                    followed_by: None,
                    more_buffered: true,
                }
            })
            .collect()
    }

    /// What a line says its number is, as a parse that can run anywhere.
    fn parse(line: &Line<'_>) -> (std::thread::ThreadId, u64) {
        let text = std::str::from_utf8(line.content()).unwrap();
        let said = text.split(' ').next().unwrap().parse::<u64>().unwrap();
        (std::thread::current().id(), said)
    }

    #[test]
    fn pieces_cover_every_line_once_in_order() {
        let bytes = numbered_lines(5000);
        let lines = lines_of(&bytes);
        let pieces = pieces(&lines, PIECE_BYTES);
        assert!(pieces.len() > 4);
        assert!(pieces
            .iter()
            .rev()
            .skip(1)
            .all(|piece| piece.iter().map(|l| l.bytes.len()).sum::<usize>() >= PIECE_BYTES));
        let numbers: Vec<u64> = pieces
            .iter()
            .flat_map(|piece| piece.iter().map(|line| line.number))
            .collect();
        assert_eq!(numbers, (1..=5000).collect::<Vec<u64>>());
    }

    #[test]
    fn lines_parsed_on_two_threads_are_folded_in_order_until_one_ends_the_fold() {
        let bytes = numbered_lines(40_000);
        let lines = lines_of(&bytes);
        assert!(bytes.len() >= PARALLEL_FROM);
        let mut folded = Vec::new();
        let end = parse_and_fold(&lines, parse, |line, (_, said)| {
            folded.push((line.number, said));
            (line.number == 32_345).then_some("stop")
        });
        assert_eq!(end, Some("stop"));
        let expected: Vec<(u64, u64)> = (1..=32_345).map(|n| (n, n - 1)).collect();
        assert_eq!(folded, expected);
    }

    #[test]
    fn small_groups_are_folded_line_by_line_on_this_thread() {
        let bytes = numbered_lines(100);
        let lines = lines_of(&bytes);
        let mut folded = 0;
        let end: Option<()> = parse_and_fold(&lines, parse, |_, (thread, _)| {
            assert_eq!(thread, std::thread::current().id());
            folded += 1;
            None
        });
        assert_eq!((end, folded), (None, 100));
    }
}
