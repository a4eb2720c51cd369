//! The Markdown summary of a `check` report, for the page a CI job shows
//! (`--summary "$GITHUB_STEP_SUMMARY"`, `-o markdown`): the run in one
//! line, the comparison with a baseline, a table of the cases that did not pass, then every case (its
//! question and the start of its answer) in a collapsed block. Every piece of text from the service or the suite goes
//! through [`markdown_text`]: a case name or an answer cannot close a
//! table cell, open a link or add HTML.

use std::fmt::Write;

use super::report::{self, Baseline, CaseReport, Outcome, Report};
use super::verdicts;
use crate::text::{markdown_text, shorten_to};

/// How many characters of a reason, an analysis or a question a cell
/// shows: a summary is read on a page, and GitHub keeps 1 MiB of it.
const CELL_CHARS: usize = 300;

/// The summary of `report`.
pub fn markdown(report: &Report) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## analyst check: {}\n", cell(&report.suite));
    let _ = writeln!(
        md,
        "**{}**: {} cases, {}\n",
        cell(&verdicts::headline(report)),
        report.cases.len(),
        cell(&verdicts::counts(report))
    );
    if let Some(run) = &report.run {
        let _ = writeln!(md, "Tested: {}\n", cell(&verdicts::tested(run)));
    }
    for line in verdicts::spending(report) {
        let _ = writeln!(md, "{}\n", cell(&line));
    }
    md.push_str(&against_baseline(report));
    let missed: Vec<&CaseReport> = report
        .cases
        .iter()
        .filter(|case| case.status != Outcome::Passed && case.gates())
        .collect();
    if missed.is_empty() {
        md.push_str("Every case passed.\n\n");
    } else {
        md.push_str("| case | verdict | reason | analysis |\n|---|---|---|---|\n");
        for case in missed {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                cell(&case.name),
                report::case_tag(case),
                cell(&verdicts::reason(case)),
                cell(&verdicts::analysis(case))
            );
        }
        md.push('\n');
    }
    let quarantined = verdicts::quarantine_table(report);
    if !quarantined.is_empty() {
        let _ = writeln!(
            md,
            "Quarantined cases (they run, and gate nothing until their date):\n\n| {} |\n|---|---|---|---|",
            verdicts::QUARANTINE_COLUMNS.join(" | ")
        );
        for row in quarantined {
            let cells: Vec<String> = row.iter().map(|text| cell(text)).collect();
            let _ = writeln!(md, "| {} |", cells.join(" | "));
        }
        md.push('\n');
    }
    let figured: Vec<(&CaseReport, Vec<String>)> = report
        .cases
        .iter()
        .map(|case| (case, verdicts::figures(case)))
        .filter(|(_, figures)| !figures.is_empty())
        .collect();
    if !figured.is_empty() {
        md.push_str("Figures of the cases that did not pass (✓ supported by the rows, ✗ not):\n\n| case | figures |\n|---|---|\n");
        for (case, figures) in figured {
            let _ = writeln!(md, "| {} | {} |", cell(&case.name), cell(&figures.join("; ")));
        }
        md.push('\n');
    }
    let _ = writeln!(
        md,
        "<details><summary>Every case ({})</summary>\n\n| case | verdict | runs passed | median | question | answer |\n|---|---|---|---|---|---|",
        report.cases.len()
    );
    for case in &report.cases {
        let run = report::shown_run(case);
        let question = run.and_then(|run| run.question.as_deref()).unwrap_or("");
        let answer = run.and_then(|run| run.answer.as_deref()).unwrap_or("");
        let _ = writeln!(
            md,
            "| {} | {} | {}/{} | {:.1}s | {} | {} |",
            cell(&case.name),
            report::case_tag(case),
            case.passed_runs,
            case.runs.len(),
            case.medians.duration,
            cell(question),
            cell(answer)
        );
    }
    md.push_str("\n</details>\n\n");
    md
}

/// The comparison with the baseline, when there is one: the suite's tier,
/// whether the baseline is trusted, and a table of the cases worth a look
/// (tier, runs passed before and now, p-value, what else changed).
fn against_baseline(report: &Report) -> String {
    let Some(baseline) = &report.baseline else {
        return String::new();
    };
    let mut md = format!("**Against the baseline**: {}\n\n", cell(&baseline.suite.line()));
    if let Some(distrust) = baseline.distrust() {
        let _ = writeln!(md, "{}\n", cell(&distrust));
    }
    let table = baseline.table();
    if !table.is_empty() {
        let _ = writeln!(md, "| {} |\n|---|---|---|---|---|", Baseline::COLUMNS.join(" | "));
        for row in table {
            let cells: Vec<String> = row.iter().map(|text| cell(text)).collect();
            let _ = writeln!(md, "| {} |", cells.join(" | "));
        }
        md.push('\n');
    }
    md
}

/// `text` in a table cell: shortened (secrets redacted), on one line, and
/// shown as itself.
fn cell(text: &str) -> String {
    markdown_text(&shorten_to(text, CELL_CHARS))
}
