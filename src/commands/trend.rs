//! `analyst history trend [SUITE]`: the accuracy of a suite over time, one
//! row per recorded `check` run, oldest first — a table for a person
//! (columns left out to fit a narrow terminal), CSV, JSON, or an SVG line
//! chart of accuracy drawn offline by the same Vega as `ask -o svg`.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;
use serde_json::{json, Value};

use crate::cli::TrendOutput;
use crate::domain::dollars;
use crate::error::{fail, Kind};
use crate::evals::verdicts::percent_of;
use crate::history::{CheckRunRecord, History, TrendFilter};
use crate::output::{Notes, Out};
use crate::render::draw;
use crate::render::json;
use crate::render::table::{self, Shown, TableFormat, TableWriter};
use crate::results::{Column, RowSink};

/// The columns a trend table leaves out, in this order, until it fits a
/// narrow terminal (`-o csv` and `-o json` have them all).
const LEFT_OUT_FIRST: [&str; 5] = ["COST", "CONSISTENT", "ERRORS", "COMMIT", "BRANCH"];

/// A run as `-o json` and `-o csv` give it: the record and its accuracy.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TrendRow<'a> {
    #[serde(flatten)]
    run: &'a CheckRunRecord,
    /// The share of the cases that gate that passed.
    accuracy: Option<f64>,
}

/// Writes the trend of the runs `filter` picks in `output`; no run of the
/// suite recorded is exit 4, naming it.
pub fn write(
    history: &History,
    filter: &TrendFilter,
    output: TrendOutput,
    width: Option<u16>,
    notes: &Notes,
    out: &mut Out,
) -> Result<()> {
    let (suite, runs) = history.check_runs(filter)?;
    let Some(suite) = suite else {
        return Err(fail(
            Kind::NotFound,
            "no check run is recorded in the history (check records each run while the history is on)",
        ));
    };
    if runs.is_empty() {
        let within = match filter.since.is_some() {
            true => " since then",
            false => "",
        };
        return Err(fail(
            Kind::NotFound,
            format!("no recorded check run of {suite}{within}"),
        ));
    }
    if filter.suite_path.is_none() {
        notes.info(&format!("suite {suite} (the latest run's; name a SUITE for another)"));
    }
    match output {
        TrendOutput::Json => {
            let rows: Vec<TrendRow<'_>> = runs
                .iter()
                .map(|run| TrendRow {
                    run,
                    accuracy: run.accuracy(),
                })
                .collect();
            json::write(&rows, out)?;
        }
        TrendOutput::Csv => csv(&runs, out)?,
        TrendOutput::Table => {
            let (text, left_out) = table_of(&runs, width);
            if !left_out.is_empty() {
                notes.info(&format!(
                    "left out to fit the terminal: {} (-o csv has every column)",
                    left_out.join(", ")
                ));
            }
            out.write_all(text.as_bytes())?;
        }
        TrendOutput::Svg => out.write_all(chart(&suite, &runs)?.as_bytes())?,
    }
    Ok(())
}

/// A commit as a person reads it: its first 7 characters.
fn short_commit(commit: Option<&str>) -> String {
    commit.map_or("-".to_string(), |commit| commit.chars().take(7).collect())
}

/// The table for a person: a row per run (a shard of a CI matrix is a
/// run of its own, its `K/N` after its time); skipped and quarantined
/// columns only when a run has some.
fn table_of(runs: &[CheckRunRecord], width: Option<u16>) -> (String, Vec<&'static str>) {
    let skipped = runs.iter().any(|run| run.skipped > 0);
    let quarantined = runs.iter().any(|run| run.quarantined > 0);
    let mut headers = vec![
        "TIME (UTC)",
        "BRANCH",
        "COMMIT",
        "ACCURACY",
        "PASSED",
        "FAILED",
        "ERRORS",
    ];
    if skipped {
        headers.push("SKIPPED");
    }
    if quarantined {
        headers.push("QUARANTINED");
    }
    headers.extend(["CONSISTENT", "COST"]);
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|run| {
            let mut time = run.at.get(..16).unwrap_or(&run.at).replace('T', " ");
            if let Some(shard) = &run.shard {
                time.push_str(&format!(" [{shard}]"));
            }
            if run.regraded {
                time.push_str(" (regraded)");
            }
            let mut row = vec![
                time,
                run.branch.clone().unwrap_or_else(|| "-".to_string()),
                short_commit(run.commit.as_deref()),
                run.accuracy().map_or("-".to_string(), percent_of),
                run.passed.to_string(),
                run.failed.to_string(),
                run.errors.to_string(),
            ];
            if skipped {
                row.push(run.skipped.to_string());
            }
            if quarantined {
                row.push(run.quarantined.to_string());
            }
            row.push(match (run.consistent_passed, run.consistent_cases) {
                (Some(passed), Some(cases)) => format!("{passed}/{cases}"),
                _ => "-".to_string(),
            });
            row.push(run.cost.map_or("-".to_string(), dollars));
            row
        })
        .collect();
    let mut shown = vec![Shown::Number; headers.len()];
    shown[..3].fill(Shown::Whole);
    table::plain_fitted(&headers, &rows, &shown, width, &LEFT_OUT_FIRST)
}

/// Every figure of every run, one CSV row each.
fn csv(runs: &[CheckRunRecord], out: &mut Out) -> Result<()> {
    let names = [
        "at",
        "branch",
        "commit",
        "accuracy",
        "cases",
        "passed",
        "failed",
        "errors",
        "skipped",
        "quarantined",
        "consistent_passed",
        "consistent_cases",
        "cost",
        "seconds",
        "regraded",
        "exit_code",
        "shard",
        "chat_url",
        "ci_url",
        "suite_path",
    ];
    let columns: Vec<Column> = names.iter().map(|name| Column::new(*name, "String")).collect();
    let mut writer = TableWriter::new(TableFormat::Csv, &mut *out);
    writer.columns(&columns)?;
    for run in runs {
        let text = |value: Option<&str>| value.unwrap_or_default().to_string();
        let number = |value: Option<u64>| value.map_or(String::new(), |n| n.to_string());
        let cells = [
            run.at.clone(),
            text(run.branch.as_deref()),
            text(run.commit.as_deref()),
            run.accuracy().map_or(String::new(), |share| format!("{share:.4}")),
            run.cases.to_string(),
            run.passed.to_string(),
            run.failed.to_string(),
            run.errors.to_string(),
            run.skipped.to_string(),
            run.quarantined.to_string(),
            number(run.consistent_passed),
            number(run.consistent_cases),
            run.cost.map_or(String::new(), |cost| format!("{cost:.4}")),
            format!("{:.3}", run.seconds),
            run.regraded.to_string(),
            run.exit_code.to_string(),
            text(run.shard.as_deref()),
            text(run.chat_url.as_deref()),
            text(run.ci_url.as_deref()),
            run.suite_path.clone(),
        ];
        writer.row(&cells.into_iter().map(Value::String).collect::<Vec<_>>())?;
    }
    writer.finish()?;
    Ok(())
}

/// Accuracy over time as a line chart (SVG), each run a point with its
/// counts in its tooltip, drawn offline.
fn chart(suite: &str, runs: &[CheckRunRecord]) -> Result<String> {
    let values: Vec<Value> = runs
        .iter()
        .filter_map(|run| {
            Some(json!({
                "time": run.at,
                "accuracy": run.accuracy()?,
                "passed": run.passed,
                "cases": run.cases,
                "commit": short_commit(run.commit.as_deref()),
                "run": if run.regraded { "regraded" } else { "asked" },
            }))
        })
        .collect();
    let spec = json!({
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "title": format!("Accuracy of {suite}"),
        "width": 600,
        "height": 240,
        "data": {"values": values},
        "mark": {"type": "line", "point": true},
        "encoding": {
            "x": {"field": "time", "type": "temporal", "title": "run (UTC)"},
            "y": {
                "field": "accuracy",
                "type": "quantitative",
                "title": "accuracy",
                "scale": {"domain": [0, 1]},
                "axis": {"format": ".0%"}
            },
            "tooltip": [
                {"field": "time", "type": "temporal", "timeUnit": "utcyearmonthdatehoursminutes"},
                {"field": "accuracy", "type": "quantitative", "format": ".1%"},
                {"field": "passed"}, {"field": "cases"}, {"field": "commit"}, {"field": "run"}
            ]
        }
    });
    draw::svg(&spec.to_string())
}
