//! The lines a `check` run prints for people on stderr: a verdict per run
//! (`PASS  name  2.1s (first byte …; 1280 tokens, 3 LLM calls)`) and per
//! repeated case, with their reasons, the first word painted.

use super::report::{tag, CaseReport, RunReport, Usage};
use crate::output::{Notes, Tone};

/// Prints a verdict's lines, its first word (`PASS`, `FAIL`, `REVIEW`,
/// `ERROR`) painted: a pass unless `-q`, anything else always.
pub fn tell(notes: &Notes, lines: &[String]) {
    let Some((head, reasons)) = lines.split_first() else {
        return;
    };
    let (word, rest) = head.split_at(head.find(' ').unwrap_or(head.len()));
    match word {
        "PASS" => notes.painted(Tone::Good, word, rest, false),
        "REVIEW" => notes.painted(Tone::Warning, word, rest, true),
        _ => notes.painted(Tone::Bad, word, rest, true),
    }
    for reason in reasons {
        notes.always(reason);
    }
}

fn short_seconds(seconds: f64) -> String {
    format!("{seconds:.1}s")
}

/// What a run spent, for people: `1280 tokens, 3 LLM calls`.
fn spent(usage: Option<Usage>) -> Option<String> {
    usage.map(|usage| format!("{} tokens, {} LLM calls", usage.total_tokens, usage.llm_calls))
}

/// The people's line(s) for a finished run: `PASS  name  2.1s (first byte …;
/// 1280 tokens, 3 LLM calls)`, or `FAIL`, `REVIEW` or `ERROR` (see [`tag`])
/// with the reasons on the following lines. `of` is the number of runs of
/// the case.
pub fn run_summary(name: &str, run: &RunReport, of: usize) -> Vec<String> {
    let mut parts = Vec::new();
    for (label, at) in [
        ("first byte", run.seconds.first_byte),
        ("first SQL", run.seconds.first_sql),
        ("answer", run.seconds.answer),
    ] {
        if let Some(at) = at {
            parts.push(format!("{label} {}", short_seconds(at)));
        }
    }
    let mut details = parts.join(", ");
    if let Some(spent) = spent(run.usage) {
        details = if details.is_empty() {
            spent
        } else {
            format!("{details}; {spent}")
        };
    }
    let timing = if details.is_empty() {
        short_seconds(run.seconds.total)
    } else {
        format!("{} ({details})", short_seconds(run.seconds.total))
    };
    let name = if of > 1 {
        format!("{name} (run {} of {of})", run.run)
    } else {
        name.to_string()
    };
    let tag = tag(run.status, run.cube.verdict);
    verdict_lines(tag, &name, &timing, &run.messages, run.exit_code)
}

/// The people's line(s) for a repeated case once all its runs are in.
pub fn case_summary(case: &CaseReport) -> Vec<String> {
    let mut figures = format!("median {}", short_seconds(case.medians.duration));
    if let Some(tokens) = case.medians.total_tokens {
        figures.push_str(&format!(", {tokens} tokens"));
    }
    let what = format!("{} of {} runs passed ({figures})", case.passed_runs, case.runs.len());
    let tag = tag(case.status, case.cube.verdict);
    verdict_lines(tag, &case.name, &what, &case.messages, case.exit_code)
}

/// A case's lines for people: its run's when it ran once, else the case's
/// summary.
pub fn case_lines(case: &CaseReport) -> Vec<String> {
    match case.runs.as_slice() {
        [run] => run_summary(&case.name, run, 1),
        _ => case_summary(case),
    }
}

/// A verdict's lines on stderr: `TAG  NAME  WHAT`, then each reason
/// indented; an error's last line ends with the exit code.
fn verdict_lines(tag: &str, name: &str, what: &str, messages: &[String], exit_code: u8) -> Vec<String> {
    /// The width tags are padded to (`PASS` and `FAIL` line up with `ERROR`).
    const TAG_WIDTH: usize = "ERROR".len();
    let mut lines = vec![format!("{tag:<TAG_WIDTH$} {name}  {what}")];
    if tag != "PASS" {
        lines.extend(messages.iter().map(|line| format!("      {line}")));
        if tag == "ERROR" {
            if messages.is_empty() {
                lines.push(String::new());
            }
            if let Some(last) = lines.last_mut() {
                last.push_str(&format!(" (exit {exit_code})"));
            }
        }
    }
    lines
}
