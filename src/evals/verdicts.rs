//! What a `check` run says to people: on stderr a verdict per run
//! (`PASS  name  2.1s`, its timings and tokens indented below) and per
//! repeated case, with their reasons, the first word painted; and the
//! phrases the stderr lines, the summary and the page share (the run's
//! headline and counts, a case's reason and analysis).

use std::time::Duration;

use super::context::RunContext;
use super::figures::{describe, is_unfaithful_line};
use super::grade::Verdict;
use super::quarantine::Quarantine;
use super::report::{accuracy_of, case_tag, tag, CaseReport, Outcome, Report, RunReport, Usage};
use crate::domain::dollars;
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
        "REVIEW" | "QUARANTINED" | "SKIPPED" => notes.painted(Tone::Warning, word, rest, true),
        _ => notes.painted(Tone::Bad, word, rest, true),
    }
    // A pass's timings are as quiet as its line.
    if word != "PASS" || notes.warns() {
        for reason in reasons {
            notes.always(reason);
        }
    }
}

fn short_seconds(seconds: f64) -> String {
    format!("{seconds:.1}s")
}

/// What a run spent, for people: `1280 tokens, 3 LLM calls`.
fn spent(usage: Option<Usage>) -> Option<String> {
    usage.map(|usage| format!("{} tokens, {} LLM calls", usage.total_tokens, usage.llm_calls))
}

/// The people's lines for a finished run: `PASS  name  2.1s`, then
/// indented under it `first byte …; 1280 tokens, 3 LLM calls` (so a line
/// fits 80 columns), or `FAIL`, `REVIEW` or `ERROR` (see [`tag`]) with the
/// reasons on the following lines. `of` is the number of runs of the case;
/// `quarantine`, the case's: while it holds the run is `QUARANTINED`, its
/// verdict and date said under it; once expired, the note says so.
pub fn run_summary(name: &str, run: &RunReport, of: usize, quarantine: Option<&Quarantine>) -> Vec<String> {
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
    let name = if of > 1 {
        format!("{name} (run {} of {of})", run.run)
    } else {
        name.to_string()
    };
    let verdict = tag(run.status, run.cube.verdict);
    let held = quarantine.filter(|quarantine| quarantine.holds());
    let shown = match held {
        Some(_) => "QUARANTINED",
        None => verdict,
    };
    let mut lines = verdict_lines(
        shown,
        &name,
        &short_seconds(run.seconds.total),
        &run.messages,
        run.exit_code,
    );
    if !details.is_empty() {
        lines.insert(1, format!("{DETAIL_INDENT}{details}"));
    }
    match (held, quarantine) {
        (Some(held), _) => lines.insert(
            1,
            format!(
                "{DETAIL_INDENT}{verdict}, quarantined {}: gates nothing",
                held.describe()
            ),
        ),
        (None, Some(expired)) => lines.push(format!("{DETAIL_INDENT}{}", expired.expired_note(&name))),
        (None, None) => {}
    }
    lines
}

/// How far the lines under a verdict (its timings, its reasons) are
/// indented: under the case's name.
const DETAIL_INDENT: &str = "      ";

/// The people's line(s) for a repeated case once all its runs are in.
pub fn case_summary(case: &CaseReport) -> Vec<String> {
    let mut figures = format!("median {}", short_seconds(case.medians.duration));
    if let Some(tokens) = case.medians.total_tokens {
        figures.push_str(&format!(", {tokens} tokens"));
    }
    let what = format!("{} of {} runs passed ({figures})", case.passed_runs, case.runs.len());
    verdict_lines(case_tag(case), &case.name, &what, &case.messages, case.exit_code)
}

/// A case's lines for people: its run's when it ran once, else the case's
/// summary.
pub fn case_lines(case: &CaseReport) -> Vec<String> {
    match case.runs.as_slice() {
        [run] => run_summary(&case.name, run, 1, case.quarantine.as_ref()),
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
        lines.extend(messages.iter().map(|line| format!("{DETAIL_INDENT}{line}")));
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

/// The run in one line, as the summary and the page head it: `accuracy
/// 80% (8/10)` (Cube's accuracy when the suite is Cube's eval files),
/// and whether it met `--min-accuracy`.
pub fn headline(report: &Report) -> String {
    let total = report.cases.len();
    let mut line = match &report.accuracy {
        Some(accuracy) => format!("accuracy {accuracy}"),
        None => format!("accuracy {}", accuracy_of(report.passed, total)),
    };
    if let Some(min) = report.min_accuracy {
        let meets = match report.meets_min_accuracy() {
            true => "meets",
            false => "below",
        };
        line.push_str(&format!(", {meets} --min-accuracy {}", percent_of(min)));
    }
    line
}

/// Why a case did not pass, in a few words, for a TOML suite as for
/// Cube's eval files: Cube's score reason, else the exit code of an error,
/// how many runs passed of a repeated case, or how many expectations
/// (budgets included) a run did not meet; empty for a pass.
pub fn reason(case: &CaseReport) -> String {
    let runs = case.runs.len();
    match (case.cube.score_reason, case.status) {
        (Some(reason), _) => reason.as_str().to_string(),
        (None, Outcome::Error) => format!("exit {}", case.exit_code),
        (None, Outcome::Failed) if runs > 1 => format!("{} of {runs} runs passed", case.passed_runs),
        (None, Outcome::Failed) => match case.messages.len() {
            0 | 1 => "Expectation not met".to_string(),
            n => format!("{n} expectations not met"),
        },
        (None, Outcome::Skipped) => "budget".to_string(),
        (None, Outcome::Passed) => String::new(),
    }
}

/// What differs, for people: Cube's analysis, else the case's messages.
pub fn analysis(case: &CaseReport) -> String {
    case.cube.analysis.clone().unwrap_or_else(|| case.messages.join("; "))
}

/// What `consistent K/N` in the counts means, said where people read it.
pub const CONSISTENT_MEANS: &str =
    "consistent K/N: of the N cases asked more than once, the K that passed every one of their runs (pass^N).";

/// What the cases came to, for people: `7 passed, 2 failed (1 to
/// review), 1 errors in 2m10s, consistent 7/10, 6 runs (6 turns) saved by
/// --stop-when-decided` (`took`: how long).
pub fn counts(report: &Report) -> String {
    let took = crate::text::human(Duration::from_millis((report.time * 1000.0) as u64));
    let reviews = report
        .cases
        .iter()
        .filter(|case| case.cube.verdict == Some(Verdict::Review))
        .count();
    let asked_back = report.cases.iter().filter(|case| asked_back(case)).count();
    let reviews = match (reviews, asked_back) {
        (0, 0) => String::new(),
        (0, n) => format!(" ({n} asked back)"),
        (n, 0) => format!(" ({n} to review)"),
        (n, m) => format!(" ({n} to review, {m} asked back)"),
    };
    let consistent = report.consistent.map(|c| format!(", {c}")).unwrap_or_default();
    let saved = report
        .saved
        .map(|saved| {
            format!(
                ", {} runs ({} turns) saved by --stop-when-decided",
                saved.runs, saved.turns
            )
        })
        .unwrap_or_default();
    let cost = match (report.cost, report.unpriced_runs) {
        (None, _) => String::new(),
        (Some(cost), 0) => format!(", cost {}", dollars(cost)),
        (Some(cost), 1) => format!(", cost {} (1 run not priced)", dollars(cost)),
        (Some(cost), n) => format!(", cost {} ({n} runs not priced)", dollars(cost)),
    };
    let mut apart = String::new();
    if report.skipped > 0 {
        apart.push_str(&format!(", {} skipped (budget)", report.skipped));
    }
    if report.quarantined > 0 {
        apart.push_str(&format!(", {} quarantined", report.quarantined));
    }
    format!(
        "{} passed, {} failed{reviews}, {} errors{apart} in {took}{consistent}{saved}{cost}",
        report.passed, report.failed, report.errors
    )
}

/// What the run spent and spared, one sentence each, where a person reads
/// the run: what a re-grade graded again (and that it asked nothing),
/// the budget and what it stopped, and what `--stop-when-decided` saved
/// beside it.
pub fn spending(report: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(regraded) = &report.regraded {
        let saved = &regraded.saved_run;
        lines.push(format!(
            "Regraded: {} saved streams of the run of {} ({}, analyst {}) from {}; no turn was asked.",
            regraded.streams, saved.started_at, saved.chat_url, saved.analyst_version, regraded.folder
        ));
    }
    if let Some(budget) = &report.budget {
        let mut limits = Vec::new();
        if let Some(tokens) = budget.tokens {
            limits.push(format!("{} of {tokens} tokens", budget.spent_tokens));
        }
        if let Some(usd) = budget.usd {
            limits.push(format!("{} of {}", dollars(budget.spent_usd), dollars(usd)));
        }
        let mut line = format!("Budget: spent {}", limits.join(", "));
        match &budget.reached {
            Some(why) => line.push_str(&format!(
                "; reached: {why}; {} runs ({} turns) not asked",
                budget.skipped_runs, budget.skipped_turns
            )),
            None => line.push_str("; every turn was asked"),
        }
        line.push('.');
        lines.push(line);
        if let Some(saved) = report.saved {
            lines.push(format!(
                "--stop-when-decided saved {} runs ({} turns) before the budget counted them.",
                saved.runs, saved.turns
            ));
        }
    }
    lines
}

/// The head of [`quarantine_table`].
pub const QUARANTINE_COLUMNS: [&str; 4] = ["case", "verdict", "until", "reason"];

/// The quarantined cases as the page and the summary list them, a row of
/// [`QUARANTINE_COLUMNS`] each, as plain text: the name, its own verdict
/// (`FAIL`), its date (once expired, `expired on DATE: gates again`) and
/// its reason.
pub fn quarantine_table(report: &Report) -> Vec<[String; 4]> {
    report
        .cases
        .iter()
        .filter_map(|case| {
            let quarantine = case.quarantine.as_ref()?;
            let until = match quarantine.holds() {
                true => quarantine.until.clone(),
                false => format!("expired on {}: gates again", quarantine.until),
            };
            Some([
                case.name.clone(),
                tag(case.status, case.cube.verdict).to_string(),
                until,
                quarantine.reason.clone().unwrap_or_default(),
            ])
        })
        .collect()
}

/// The quarantined cases, one phrase each: `NAME (FAIL, until DATE:
/// reason)`, or, once it expired, the note that it did.
pub fn quarantines(report: &Report) -> Vec<String> {
    report
        .cases
        .iter()
        .filter_map(|case| {
            let quarantine = case.quarantine.as_ref()?;
            Some(match quarantine.holds() {
                true => format!(
                    "{} ({}, {})",
                    case.name,
                    tag(case.status, case.cube.verdict),
                    quarantine.describe()
                ),
                false => quarantine.expired_note(&case.name),
            })
        })
        .collect()
}

/// True when a case failed because its agent asked back instead of
/// answering.
pub fn asked_back(case: &CaseReport) -> bool {
    case.status == Outcome::Failed && super::report::shown_run(case).is_some_and(|run| run.asks_back)
}

/// The figures of a case that failed on them (an unsupported figure, or
/// figures and no rows), as a person reads them: `1,234 ✓ 1,234 in
/// orders`, `1,300 ✗ nearest 1,234 in orders`; none for any other case.
pub fn figures(case: &CaseReport) -> Vec<String> {
    let Some(run) = super::report::shown_run(case).filter(|run| failed_on_figures(run)) else {
        return Vec::new();
    };
    run.figures
        .iter()
        .map(|figure| match (&figure.by, &figure.nearest, &figure.unchecked) {
            (Some(by), _, _) => format!("{} ✓ {}", figure.text, describe(by)),
            (None, _, Some(why)) => format!("{} ? not checked: {why}", figure.text),
            (None, Some(nearest), None) => format!("{} ✗ nearest {}", figure.text, describe(nearest)),
            (None, None, None) => format!("{} ✗", figure.text),
        })
        .collect()
}

/// True when a run failed on its figures (`expect_faithful`).
fn failed_on_figures(run: &RunReport) -> bool {
    run.status == Outcome::Failed && run.messages.iter().any(|line| is_unfaithful_line(line))
}

/// A share as a percentage: `90%`, `87.5%`.
pub fn percent_of(share: f64) -> String {
    let percent = (share * 1000.0).round() / 10.0;
    format!("{percent}%")
}

/// What a run tested, where and when, in one sentence: `asked
/// https://…/agents/7/chat/stream-chat-state on branch dev as external user
/// ci-bot, from 2026-11-27T09:00:00Z for 42.1s, with analyst 1.0.0; in
/// github-actions acme/agents at 0123abc (refs/pull/7/merge)`.
pub fn tested(run: &RunContext) -> String {
    let mut sentence = format!("asked {}", run.chat_url);
    if let Some(branch) = &run.branch {
        sentence.push_str(&format!(" on branch {branch}"));
    }
    if let Some(identity) = &run.identity {
        sentence.push_str(&format!(" as {identity}"));
    }
    sentence.push_str(&format!(
        ", from {} for {:.1}s, with analyst {}",
        run.started_at, run.seconds, run.analyst_version
    ));
    if let Some(shard) = &run.shard {
        sentence.push_str(&format!(", shard {shard}"));
    }
    if let Some(ci) = &run.ci {
        sentence.push_str(&format!("; in {}", ci.provider));
        for (before, part) in [(" ", &ci.repository), (" at ", &ci.commit)] {
            if let Some(part) = part {
                sentence.push_str(&format!("{before}{part}"));
            }
        }
        if let Some(git_ref) = &ci.git_ref {
            sentence.push_str(&format!(" ({git_ref})"));
        }
    }
    sentence
}
