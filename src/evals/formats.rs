//! A check report in the forms other tools read: JUnit XML (one testcase
//! per case, the figures as properties), TAP with a YAML block of the same
//! figures, and the JSON document. Markdown is `summary.rs`, HTML
//! `page.rs`.

use std::io::{self, Write};

use serde_json::{json, Value};

use super::report::{case_tag, status_name, CaseReport, Outcome, Report};
use crate::text::{escape_markup, visible};

/// The figures of a case as `name`, typed value pairs: its pass rate and
/// medians, its tier against the baseline (`baseline.…`), then each run's
/// ids, timings and usage (`run.K.…`).
fn properties(case: &CaseReport, report: &Report) -> Vec<(String, Value)> {
    let mut properties = vec![
        ("verdict".to_string(), json!(case_tag(case).to_lowercase())),
        ("passRate".to_string(), json!(case.pass_rate)),
        ("requiredPassRate".to_string(), json!(case.required_pass_rate)),
        ("passedRuns".to_string(), json!(case.passed_runs)),
        ("runs".to_string(), json!(case.runs.len())),
        ("median.duration".to_string(), json!(case.medians.duration)),
    ];
    let optional = [
        ("median.firstByte", case.medians.first_byte),
        ("median.totalTokens", case.medians.total_tokens),
        ("median.llmCalls", case.medians.llm_calls),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            properties.push((name.to_string(), json!(value)));
        }
    }
    if let Some(every) = case.passed_every_run {
        properties.push(("passedEveryRun".to_string(), json!(every)));
    }
    let tier = report
        .baseline
        .as_ref()
        .and_then(|baseline| baseline.cases.iter().find(|tier| tier.name == case.name));
    if let Some(tier) = tier {
        for (name, value) in [
            ("tier", json!(tier.tier.as_str())),
            ("before", json!(tier.before.to_string())),
            ("now", json!(tier.now.to_string())),
            ("pWorse", json!(tier.p_worse)),
            ("pBetter", json!(tier.p_better)),
        ] {
            properties.push((format!("baseline.{name}"), value));
        }
    }
    for run in &case.runs {
        let mut add = |name: &str, value: Value| properties.push((format!("run.{}.{name}", run.run), value));
        add("status", json!(status_name(run.status)));
        add("exitCode", json!(run.exit_code));
        add("duration", json!(run.seconds.total));
        for (name, value) in [("chatId", &run.chat_id), ("messageId", &run.message_id)] {
            if let Some(value) = value {
                add(name, json!(value));
            }
        }
        for (name, value) in [
            ("firstByte", run.seconds.first_byte),
            ("firstSql", run.seconds.first_sql),
            ("answer", run.seconds.answer),
        ] {
            if let Some(value) = value {
                add(name, json!(value));
            }
        }
        if let Some(usage) = run.usage {
            for (name, value) in [
                ("inputTokens", usage.input_tokens),
                ("outputTokens", usage.output_tokens),
                ("cacheReadTokens", usage.cache_read_tokens),
                ("cacheWriteTokens", usage.cache_write_tokens),
                ("totalTokens", usage.total_tokens),
                ("llmCalls", usage.llm_calls),
            ] {
                add(name, json!(value));
            }
        }
    }
    properties
}

/// Why a case is `skipped` for CI: its quarantine while it holds, or the
/// budget that left it unasked; `None` for a case that gates.
fn skipped_because(case: &CaseReport) -> Option<String> {
    match (&case.quarantine, case.status) {
        (Some(quarantine), _) if quarantine.holds() => Some(format!("quarantined {}", quarantine.describe())),
        (_, Outcome::Skipped) => Some("budget: the run's budget was spent before it".to_string()),
        _ => None,
    }
}

/// JUnit XML: one `testsuite` of one `testcase` per case (its runs
/// together; `time` is their sum), `failure` for unmet expectations,
/// `error` for failed requests and streams, `skipped` with its reason for
/// a quarantined case (its verdict among its properties) or one the
/// budget left unasked, the figures as `properties`, and the saved
/// streams in `system-out`.
pub fn junit(report: &Report, out: &mut impl Write) -> io::Result<()> {
    let Report {
        failed, errors, time, ..
    } = report;
    let tests = report.cases.len();
    let skipped = report.skipped + report.quarantined;
    let suite = escape_markup(&report.suite);
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="analyst check" tests="{tests}" failures="{failed}" errors="{errors}" time="{time:.3}">"#
    )?;
    writeln!(
        out,
        r#"  <testsuite name="{suite}" tests="{tests}" failures="{failed}" errors="{errors}" skipped="{skipped}" time="{time:.3}">"#
    )?;
    let baseline = report.baseline.as_ref();
    let run_properties: Vec<(&str, String)> = [
        ("accuracy", report.accuracy.clone()),
        (
            "consistent",
            report.consistent.map(|c| format!("{}/{}", c.passed_every_run, c.cases)),
        ),
        (
            "baseline.suite.tier",
            baseline.map(|b| b.suite.tier.as_str().to_string()),
        ),
        ("baseline.suite.pWorse", baseline.map(|b| b.suite.p_worse.to_string())),
        ("baseline.gates", baseline.map(|b| b.gates.to_string())),
        ("baseline.unreliable", baseline.and_then(|b| b.unreliable.clone())),
    ]
    .into_iter()
    .filter_map(|(name, value)| value.map(|value| (name, value)))
    .collect();
    if !run_properties.is_empty() {
        writeln!(out, "    <properties>")?;
        for (name, value) in run_properties {
            writeln!(
                out,
                r#"      <property name="{name}" value="{}"/>"#,
                escape_markup(&value)
            )?;
        }
        writeln!(out, "    </properties>")?;
    }
    for case in &report.cases {
        let time: f64 = case.runs.iter().map(|run| run.seconds.total).sum();
        writeln!(
            out,
            r#"    <testcase name="{}" classname="{suite}" time="{time:.3}">"#,
            escape_markup(&case.name)
        )?;
        writeln!(out, "      <properties>")?;
        for (name, value) in properties(case, report) {
            // As Rust writes them: `3`, not `3.0`.
            let value = match value {
                Value::String(text) => text,
                Value::Number(number) => match (number.as_u64(), number.as_f64()) {
                    (Some(whole), _) => whole.to_string(),
                    (None, Some(real)) => real.to_string(),
                    _ => number.to_string(),
                },
                other => other.to_string(),
            };
            writeln!(
                out,
                r#"        <property name="{}" value="{}"/>"#,
                escape_markup(&name),
                escape_markup(&value)
            )?;
        }
        writeln!(out, "      </properties>")?;
        let first = escape_markup(case.messages.first().map_or("", String::as_str));
        let all = escape_markup(&case.messages.join("\n"));
        match (skipped_because(case), case.status) {
            (Some(why), _) => writeln!(out, r#"      <skipped message="{}"/>"#, escape_markup(&why))?,
            (None, Outcome::Passed | Outcome::Skipped) => {}
            (None, Outcome::Failed) => writeln!(
                out,
                r#"      <failure type="expectation" message="{first}">{all}</failure>"#
            )?,
            (None, Outcome::Error) => writeln!(
                out,
                r#"      <error type="exit {}" message="{first}">{all}</error>"#,
                case.exit_code
            )?,
        }
        let saved: Vec<String> = case
            .runs
            .iter()
            .flat_map(|run| run.saved.iter().map(|path| format!("saved: {path}")))
            .collect();
        if !saved.is_empty() {
            writeln!(
                out,
                "      <system-out>{}</system-out>",
                escape_markup(&saved.join("\n"))
            )?;
        }
        writeln!(out, "    </testcase>")?;
    }
    writeln!(out, "  </testsuite>\n</testsuites>")
}

/// TAP version 13: `ok`/`not ok` per case, each with a YAML block of its
/// figures (and its reasons when it did not pass); a quarantined case
/// carries the `TODO` directive (its failure counts for nothing), a case
/// the budget left unasked `SKIP`.
pub fn tap(report: &Report, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "TAP version 13\n1..{}", report.cases.len())?;
    for (i, case) in report.cases.iter().enumerate() {
        // One line, nothing that acts on a terminal, `#` not a directive.
        let one_line = |text: &str| visible(text).replace('#', "\\#").replace('\n', "\\n");
        let name = one_line(&case.name);
        let ok = match case.status {
            Outcome::Passed | Outcome::Skipped => "ok",
            _ => "not ok",
        };
        let directive = match (&case.quarantine, case.status) {
            (Some(quarantine), _) if quarantine.holds() => {
                format!(" # TODO quarantined {}", one_line(&quarantine.describe()))
            }
            (_, Outcome::Skipped) => " # SKIP budget".to_string(),
            _ => String::new(),
        };
        writeln!(out, "{ok} {} - {name}{directive}", i + 1)?;
        writeln!(out, "  ---")?;
        if case.status != Outcome::Passed {
            writeln!(out, "  message: {}", json!(case.messages.join("; ")))?;
            writeln!(out, "  exitCode: {}", case.exit_code)?;
        }
        // Each figure once, as JUnit names it; numbers as numbers, text
        // quoted (a JSON string is a YAML one).
        for (name, value) in properties(case, report) {
            writeln!(out, "  {name}: {value}")?;
        }
        writeln!(out, "  ...")?;
    }
    Ok(())
}

/// The report as one JSON document.
pub fn json(report: &Report, out: &mut impl Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::other)?;
    writeln!(out)
}
