//! Reports of a `check` run: a line per case for people (stderr), JUnit XML
//! for CI systems, TAP, and one JSON document.

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use crate::error::Kind;
use crate::output::{escape_markup, visible};
use crate::stream::turn::Timings;

/// How a case ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Every turn ended well and met its expectations.
    Passed,
    /// The chat worked but expectations were not met: one line each.
    Failed(Vec<String>),
    /// The request or the stream failed, or the case timed out.
    Error {
        /// The kind of failure (and so its exit code).
        kind: Kind,
        /// What went wrong.
        message: String,
    },
}

/// The result of one case.
#[derive(Clone, Debug)]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// How it ended.
    pub verdict: Verdict,
    /// The chat it used, when the service said.
    pub chat_id: Option<String>,
    /// When things happened, from the case's start; `total` is its duration.
    pub timings: Timings,
    /// The raw streams kept with `--save`.
    pub saved: Vec<PathBuf>,
    /// Which run of how many this is, when the case repeats.
    pub run: Option<(usize, usize)>,
    /// A repeated case's runs, in order (the case's verdict is from their
    /// pass rate); empty for a case asked once.
    pub runs: Vec<CaseResult>,
}

fn seconds(duration: Duration) -> String {
    format!("{:.3}", duration.as_secs_f64())
}

fn short_seconds(duration: Duration) -> String {
    format!("{:.1}s", duration.as_secs_f64())
}

/// The people's line(s) for a finished case: `PASS name 2.1s (first byte …)`,
/// or `FAIL`/`ERROR` with the reasons on the following lines.
pub fn summary(result: &CaseResult) -> String {
    let t = &result.timings;
    let mut parts = Vec::new();
    for (label, at) in [
        ("first byte", t.first_byte),
        ("first SQL", t.first_sql),
        ("answer", t.answer),
    ] {
        if let Some(at) = at {
            parts.push(format!("{label} {}", short_seconds(at)));
        }
    }
    let timing = if parts.is_empty() {
        short_seconds(t.total)
    } else {
        format!("{} ({})", short_seconds(t.total), parts.join(", "))
    };
    let name = match result.run {
        Some((run, runs)) => format!("{} (run {run} of {runs})", result.name),
        None => result.name.clone(),
    };
    match &result.verdict {
        Verdict::Passed => format!("PASS  {name}  {timing}"),
        Verdict::Failed(lines) => {
            let reasons: Vec<String> = lines.iter().map(|line| format!("      {line}")).collect();
            format!("FAIL  {name}  {timing}\n{}", reasons.join("\n"))
        }
        Verdict::Error { kind, message } => {
            format!("ERROR {name}  {timing}\n      {message} (exit {})", kind.exit_code())
        }
    }
}

/// Counts of passed, failed and errored cases.
pub fn counts(results: &[CaseResult]) -> (usize, usize, usize) {
    results.iter().fold((0, 0, 0), |(p, f, e), r| match r.verdict {
        Verdict::Passed => (p + 1, f, e),
        Verdict::Failed(_) => (p, f + 1, e),
        Verdict::Error { .. } => (p, f, e + 1),
    })
}

/// JUnit XML: one `testsuite` of one `testcase` per case, `failure` for
/// unmet expectations, `error` for failed requests and streams, `time` in
/// seconds, and the chat id and timings in `system-out`.
pub fn junit(suite: &str, results: &[CaseResult], total: Duration, out: &mut impl Write) -> io::Result<()> {
    let (_, failed, errors) = counts(results);
    let tests = results.len();
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="analyst check" tests="{tests}" failures="{failed}" errors="{errors}" time="{}">"#,
        seconds(total)
    )?;
    writeln!(
        out,
        r#"  <testsuite name="{}" tests="{tests}" failures="{failed}" errors="{errors}" skipped="0" time="{}">"#,
        escape_markup(suite),
        seconds(total)
    )?;
    for result in results {
        write!(
            out,
            r#"    <testcase name="{}" classname="{}" time="{}">"#,
            escape_markup(&result.name),
            escape_markup(suite),
            seconds(result.timings.total)
        )?;
        match &result.verdict {
            Verdict::Passed => {}
            Verdict::Failed(lines) => write!(
                out,
                "\n      <failure type=\"expectation\" message=\"{}\">{}</failure>",
                escape_markup(lines.first().map_or("", String::as_str)),
                escape_markup(&lines.join("\n"))
            )?,
            Verdict::Error { kind, message } => write!(
                out,
                "\n      <error type=\"exit {}\" message=\"{}\">{}</error>",
                kind.exit_code(),
                escape_markup(message),
                escape_markup(message)
            )?,
        }
        let t = &result.timings;
        let mut system_out = format!("time to first byte: {}", t.first_byte.map_or("-".into(), seconds));
        system_out.push_str(&format!(
            "\ntime to first SQL result: {}",
            t.first_sql.map_or("-".into(), seconds)
        ));
        system_out.push_str(&format!(
            "\ntime to final answer: {}",
            t.answer.map_or("-".into(), seconds)
        ));
        if let Some(chat) = &result.chat_id {
            system_out.push_str(&format!("\nchat: {chat}"));
        }
        for path in &result.saved {
            system_out.push_str(&format!("\nsaved: {}", path.display()));
        }
        write!(
            out,
            "\n      <system-out>{}</system-out>\n    </testcase>\n",
            escape_markup(&system_out)
        )?;
    }
    writeln!(out, "  </testsuite>\n</testsuites>")
}

/// TAP version 13: `ok`/`not ok` per case, with a YAML block of reasons.
pub fn tap(results: &[CaseResult], out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "TAP version 13\n1..{}", results.len())?;
    for (i, result) in results.iter().enumerate() {
        // One line, nothing that acts on a terminal, `#` not a directive.
        let name = visible(&result.name).replace('#', "\\#").replace('\n', "\\n");
        let reasons: Vec<String> = match &result.verdict {
            Verdict::Passed => {
                writeln!(out, "ok {} - {name}", i + 1)?;
                continue;
            }
            Verdict::Failed(lines) => lines.clone(),
            Verdict::Error { kind, message } => vec![format!("{message} (exit {})", kind.exit_code())],
        };
        writeln!(out, "not ok {} - {name}", i + 1)?;
        writeln!(out, "  ---")?;
        writeln!(out, "  message: {}", json!(reasons.join("; ")))?;
        writeln!(out, "  duration_ms: {}", result.timings.total.as_millis())?;
        writeln!(out, "  ...")?;
    }
    Ok(())
}

/// A case (or one run of it) in the JSON report.
fn case_json(r: &CaseResult) -> serde_json::Value {
    let secs = |d: Option<Duration>| d.map(|d| (d.as_secs_f64() * 1000.0).round() / 1000.0);
    let (status, messages, code) = match &r.verdict {
        Verdict::Passed => ("passed", vec![], 0),
        Verdict::Failed(lines) => ("failed", lines.clone(), Kind::Expectation.exit_code()),
        Verdict::Error { kind, message } => ("error", vec![message.clone()], kind.exit_code()),
    };
    json!({
        "name": r.name, "status": status, "messages": messages, "exitCode": code,
        "chatId": r.chat_id,
        "timings": {
            "firstByte": secs(r.timings.first_byte), "firstSql": secs(r.timings.first_sql),
            "answer": secs(r.timings.answer), "total": secs(Some(r.timings.total)),
        },
        "saved": r.saved.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
    })
}

/// One JSON document of the run: counts, and per case its status, reasons,
/// exit code, chat id, timings (seconds) and saved streams.
pub fn json(suite: &str, results: &[CaseResult], total: Duration, out: &mut impl Write) -> io::Result<()> {
    let (passed, failed, errors) = counts(results);
    let secs = |d: Option<Duration>| d.map(|d| (d.as_secs_f64() * 1000.0).round() / 1000.0);
    let cases: Vec<_> = results
        .iter()
        .map(|r| {
            let mut case = case_json(r);
            if !r.runs.is_empty() {
                let passed = r.runs.iter().filter(|run| run.verdict == Verdict::Passed).count();
                case["passedRuns"] = json!(passed);
                case["runs"] = json!(r.runs.iter().map(case_json).collect::<Vec<_>>());
            }
            case
        })
        .collect();
    let document = json!({
        "suite": suite, "passed": passed, "failed": failed, "errors": errors,
        "time": secs(Some(total)), "cases": cases,
    });
    serde_json::to_writer_pretty(&mut *out, &document).map_err(io::Error::other)?;
    writeln!(out)
}
