//! The HTML page of a `check` report (`-o html`): one self-contained,
//! offline and inert page, under the rules of `ask -o html` (no script,
//! nothing loaded from anywhere, a Content-Security-Policy that forbids
//! both): the run in one line, the comparison with a baseline, a chart
//! of the verdicts per space drawn by the same Vega engine as `-o svg`
//! (600 px wide, 11 px text), then the cases in triage order (regressions,
//! then what did not pass, then the passes, collapsed; a checkbox shows
//! failures only, with CSS alone): a table with each case's median time,
//! tokens, cost (when the config file's `[prices]` knows the model) and
//! chat id, then each case with its question, the agent's
//! answer (Markdown made inert), its SQL, the ground truth, both results
//! side by side (differing cells marked), the verdict and the analysis.

use std::fmt::Write;

use serde_json::json;

use super::grade::Comparison;
use super::report::{self, Baseline, CaseReport, Outcome, Report};
use super::verdicts;
use crate::output::Notes;
use crate::render::draw;
use crate::render::html::{inert_page, markdown};
use crate::text::escape_markup;

/// The verdicts in the chart, in order, with their colours.
const VERDICTS: [(&str, &str); 7] = [
    ("pass", "#1a7f37"),
    ("fail", "#cf222e"),
    ("asked back", "#bc4c00"),
    ("review", "#9a6700"),
    ("error", "#8250df"),
    ("quarantined", "#57606a"),
    ("skipped", "#8c959f"),
];

/// The width of the verdicts chart's plot, in pixels.
const CHART_WIDTH: u32 = 600;

/// The size of the chart's text, in pixels.
const CHART_TEXT: u32 = 11;

/// The page's own styles, beside those of every inert page.
const STYLE: &str = "<style>.tag{font-weight:600;font-size:.8rem;padding:.1rem .4rem;border-radius:4px;color:#fff}\
.tag.pass{background:#1a7f37}.tag.fail{background:#cf222e}.tag.review{background:#9a6700}.tag.error{background:#8250df}.tag.quarantined{background:#57606a}.tag.skipped{background:#8c959f}\
section.case{border-top:1px solid #d0d7de;margin-top:1.5rem}.question{font-weight:600}\
details.passed>summary{cursor:pointer;margin-top:.8rem}\
#failures-only:checked~.cases .passed{display:none}\
.sides{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start}.sides caption{text-align:left;font-weight:600}\
td.chat{white-space:nowrap}.sides td.differs{background:#ffebe9}.sides tr.alone td{background:#fff8c5}</style>\n";

/// The page of `report`; a chart that cannot be drawn is a note on the
/// page and a warning through `notes`.
pub fn html(report: &Report, notes: &Notes) -> String {
    let mut body = String::from(STYLE);
    let _ = writeln!(
        body,
        "<h1>analyst check: {}</h1>\n<p><strong>{}</strong>: {} cases, {}</p>",
        escape_markup(&report.suite),
        escape_markup(&verdicts::headline(report)),
        report.cases.len(),
        escape_markup(&verdicts::counts(report))
    );
    if report.consistent.is_some() {
        let _ = writeln!(body, "<p>{}</p>", escape_markup(verdicts::CONSISTENT_MEANS));
    }
    if let Some(run) = &report.run {
        let job = run
            .ci
            .as_ref()
            .and_then(|ci| ci.run_url.as_deref())
            // A link only to a web page: never a script's scheme.
            .filter(|url| url.starts_with("https://") || url.starts_with("http://"))
            .map(|url| format!(" (<a href=\"{}\">the CI job</a>)", escape_markup(url)))
            .unwrap_or_default();
        let _ = writeln!(
            body,
            "<p class=\"tested\">Tested: {}{job}</p>",
            escape_markup(&verdicts::tested(run))
        );
    }
    for line in verdicts::spending(report) {
        let _ = writeln!(body, "<p class=\"spending\">{}</p>", escape_markup(&line));
    }
    body.push_str(&against_baseline(report));
    body.push_str(&chart(report, notes));
    body.push_str(&quarantined(report));
    // Triage order: regressions first, then what did not pass, then the
    // passes (collapsed); within each, suite order. A checkbox hides the
    // passes with CSS alone.
    let mut cases: Vec<(usize, &CaseReport)> = report
        .cases
        .iter()
        .enumerate()
        .map(|(at, case)| (at + 1, case))
        .collect();
    cases.sort_by_key(|(_, case)| triage_rank(report, case));
    body.push_str(
        "<input type=\"checkbox\" id=\"failures-only\"/> <label for=\"failures-only\">failures only</label>\n<div class=\"cases\">\n",
    );
    // The cost column when the config file's prices priced a case.
    let priced = report.cases.iter().any(|case| case.medians.cost.is_some());
    let _ = writeln!(
        body,
        "<table>\n<thead><tr><th>case</th><th>verdict</th><th>reason</th><th>analysis</th><th>median time</th><th>tokens</th>{}<th>chat</th></tr></thead>\n<tbody>",
        if priced { "<th>cost</th>" } else { "" }
    );
    for &(number, case) in &cases {
        let chat = report::shown_run(case)
            .and_then(|run| run.chat_id.as_deref())
            .unwrap_or("");
        let cost = match priced {
            true => format!(
                "<td>{}</td>",
                case.medians.cost.map(crate::domain::dollars).unwrap_or_default()
            ),
            false => String::new(),
        };
        let _ = writeln!(
            body,
            "<tr{}><td><a href=\"#case-{number}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}s</td><td>{}</td>{cost}<td class=\"chat\">{}</td></tr>",
            passed_class(case),
            escape_markup(&case.name),
            tag(case),
            escape_markup(&verdicts::reason(case)),
            escape_markup(&verdicts::analysis(case)),
            case.medians.duration,
            case.medians.total_tokens.map_or(String::new(), |tokens| format!("{tokens}")),
            short_chat_id(chat)
        );
    }
    body.push_str("</tbody>\n</table>\n");
    for &(number, case) in &cases {
        let section = case_section(number, case);
        match case.status {
            Outcome::Passed => {
                let _ = write!(
                    body,
                    "<details class=\"passed\"><summary>{} {}</summary>\n{section}</details>\n",
                    tag(case),
                    escape_markup(&case.name)
                );
            }
            _ => body.push_str(&section),
        }
    }
    body.push_str("</div>\n");
    inert_page(&format!("analyst check: {}", report.suite), &body)
}

/// The quarantined cases in a place of their own: each one's verdict,
/// date and reason (an expired one says it gates again).
fn quarantined(report: &Report) -> String {
    let rows = verdicts::quarantine_table(report);
    if rows.is_empty() {
        return String::new();
    }
    let mut html = format!(
        "<section class=\"quarantined\">\n<h2>Quarantined</h2>\n<p class=\"note\">They run and are reported, and gate nothing until their date.</p>\n<table>\n<thead><tr><th>{}</th></tr></thead>\n<tbody>\n",
        verdicts::QUARANTINE_COLUMNS.join("</th><th>")
    );
    for [name, verdict, until, reason] in rows {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td><span class=\"tag {}\">{verdict}</span></td><td>{}</td><td>{}</td></tr>",
            escape_markup(&name),
            verdict.to_lowercase(),
            escape_markup(&until),
            escape_markup(&reason)
        );
    }
    html.push_str("</tbody>\n</table>\n</section>\n");
    html
}

/// Where a case comes in triage: 0 a regression against the baseline, 1
/// any other case that did not pass and gates, 2 a quarantined one, 3 a
/// pass.
fn triage_rank(report: &Report, case: &CaseReport) -> u8 {
    let regressed = report.baseline.as_ref().is_some_and(|baseline| {
        baseline
            .regressions
            .iter()
            .any(|regression| regression.name == case.name)
    });
    match (regressed, case.gates(), case.status) {
        (true, ..) => 0,
        (false, _, Outcome::Passed) => 3,
        (false, false, _) => 2,
        (false, true, _) => 1,
    }
}

/// ` class="passed"` for a case that passed (the view of failures only hides it).
fn passed_class(case: &CaseReport) -> &'static str {
    match case.status {
        Outcome::Passed => " class=\"passed\"",
        _ => "",
    }
}

/// The comparison with the baseline, when there is one: the suite's tier,
/// whether the baseline is trusted, and the cases worth a look, each with
/// its tier, runs passed before and now, p-value and what else changed.
fn against_baseline(report: &Report) -> String {
    let Some(baseline) = &report.baseline else {
        return String::new();
    };
    let mut html = format!(
        "<section class=\"baseline\">\n<h2>Against the baseline</h2>\n<p>{}</p>\n",
        escape_markup(&baseline.suite.line())
    );
    if let Some(distrust) = baseline.distrust() {
        let _ = writeln!(html, "<p class=\"note\">{}</p>", escape_markup(&distrust));
    }
    let table = baseline.table();
    if !table.is_empty() {
        let _ = writeln!(
            html,
            "<table>\n<thead><tr><th>{}</th></tr></thead>\n<tbody>",
            Baseline::COLUMNS.join("</th><th>")
        );
        for row in table {
            let cells: Vec<String> = row.iter().map(|text| escape_markup(text)).collect();
            let _ = writeln!(html, "<tr><td>{}</td></tr>", cells.join("</td><td>"));
        }
        html.push_str("</tbody>\n</table>\n");
    }
    html.push_str("</section>\n");
    html
}

/// A case's verdict as a coloured tag.
fn tag(case: &CaseReport) -> String {
    let tag = report::case_tag(case);
    format!("<span class=\"tag {}\">{tag}</span>", tag.to_lowercase())
}

/// One case: its verdict and name, then its question, the answer, the
/// SQL, the ground truth and what differs, from the run its verdict is of.
fn case_section(number: usize, case: &CaseReport) -> String {
    let mut html = format!(
        "<section class=\"case\" id=\"case-{number}\">\n<h2>{} {}</h2>\n",
        tag(case),
        escape_markup(&case.name)
    );
    if let Some(space) = &case.space {
        let _ = writeln!(html, "<p class=\"note\">space {}</p>", escape_markup(space));
    }
    let run = report::shown_run(case);
    if let Some(question) = run.and_then(|run| run.question.as_deref()) {
        let _ = writeln!(html, "<p class=\"question\">{}</p>", escape_markup(question));
    }
    match run.and_then(|run| run.answer.as_deref()) {
        Some(answer) => html.push_str(&markdown(answer)),
        None => html.push_str("<p class=\"note\">No answer.</p>\n"),
    }
    for (label, sql) in [
        ("The agent's SQL", case.cube.agent_sql.as_deref()),
        ("The ground truth", case.cube.ground_truth.as_deref()),
    ] {
        if let Some(sql) = sql {
            let _ = writeln!(html, "<h3>{label}</h3>\n<pre><code>{}</code></pre>", escape_markup(sql));
        }
    }
    if let Some(comparison) = run.and_then(|run| run.comparison.as_deref()) {
        html.push_str(&side_by_side(comparison));
    }
    let figures = verdicts::figures(case);
    if !figures.is_empty() {
        html.push_str("<h3>The answer's figures (✓ supported by the rows, ✗ not)</h3>\n<ul class=\"figures\">\n");
        for figure in figures {
            let _ = writeln!(html, "<li>{}</li>", escape_markup(&figure));
        }
        html.push_str("</ul>\n");
    }
    let analysis = verdicts::analysis(case);
    if !analysis.is_empty() {
        let reason = verdicts::reason(case);
        let reason = match reason.is_empty() {
            true => String::new(),
            false => format!("{}: ", escape_markup(&reason)),
        };
        let _ = writeln!(html, "<p>{reason}{}</p>", escape_markup(&analysis));
    }
    if case.runs.len() > 1 {
        let _ = writeln!(
            html,
            "<p class=\"note\">{} of {} runs passed; median {:.1}s.</p>",
            case.passed_runs,
            case.runs.len(),
            case.medians.duration
        );
    }
    html.push_str("</section>\n");
    html
}

/// Both results of a question side by side: the ground truth's first
/// rows beside the agent's rows they pair with, differing cells marked
/// (`<mark>`, and a colour), a row with no partner on a yellow ground.
fn side_by_side(comparison: &Comparison) -> String {
    let cell = |value: &Option<String>, differs: bool| {
        let text = value.as_deref().map_or("<em>null</em>".to_string(), escape_markup);
        match differs {
            true => format!("<td class=\"differs\"><mark>{text}</mark></td>"),
            false => format!("<td>{text}</td>"),
        }
    };
    let (width, agent_width) = (comparison.columns.len(), comparison.agent_columns.len());
    let alone = |columns: usize| {
        format!(
            "<tr class=\"alone\"><td colspan=\"{}\">no row pairs with it</td></tr>",
            columns.max(1)
        )
    };
    let (mut truth, mut agent) = (String::new(), String::new());
    for row in &comparison.rows {
        let differs_in_agent: Vec<usize> = row
            .differs
            .iter()
            .filter_map(|&t| comparison.columns[t].agent)
            .collect();
        match &row.ground_truth {
            Some(cells) => {
                let cells: Vec<String> = (0..cells.len())
                    .map(|t| cell(&cells[t], row.differs.contains(&t)))
                    .collect();
                let _ = writeln!(truth, "<tr>{}</tr>", cells.concat());
            }
            None => truth.push_str(&alone(width)),
        }
        match &row.agent {
            Some(cells) => {
                let cells: Vec<String> = (0..cells.len())
                    .map(|a| cell(&cells[a], differs_in_agent.contains(&a)))
                    .collect();
                let _ = writeln!(agent, "<tr>{}</tr>", cells.concat());
            }
            None => agent.push_str(&alone(agent_width)),
        }
    }
    let truth_head: Vec<String> = comparison
        .columns
        .iter()
        .map(|column| format!("<th>{}</th>", escape_markup(&column.ground_truth)))
        .collect();
    let agent_head: Vec<String> = (0..agent_width)
        .map(|a| {
            let name = escape_markup(&comparison.agent_columns[a]);
            let paired = comparison.columns.iter().find(|column| column.agent == Some(a));
            match paired {
                Some(column) if column.matched => format!(
                    "<th>{name} <small>= {}</small></th>",
                    escape_markup(&column.ground_truth)
                ),
                Some(column) => format!(
                    "<th>{name} <small>vs {}</small></th>",
                    escape_markup(&column.ground_truth)
                ),
                None => format!("<th>{name}</th>"),
            }
        })
        .collect();
    let shown_truth = comparison.rows.iter().filter(|row| row.ground_truth.is_some()).count();
    let shown_agent = comparison.rows.iter().filter(|row| row.agent.is_some()).count();
    format!(
        "<h3>The results side by side</h3>\n<p class=\"note\">Each of the ground truth's first rows beside the agent's row it pairs with (columns paired as the grader paired them: <small>=</small> same values, <small>vs</small> compared); cells that differ are marked.</p>\n<div class=\"sides\">\n<table><caption>The ground truth: {shown_truth} of {} rows</caption>\n<thead><tr>{}</tr></thead>\n<tbody>\n{truth}</tbody>\n</table>\n<table><caption>The agent: {shown_agent} of {} rows</caption>\n<thead><tr>{}</tr></thead>\n<tbody>\n{agent}</tbody>\n</table>\n</div>\n",
        comparison.ground_truth_rows,
        truth_head.concat(),
        comparison.agent_rows,
        agent_head.concat()
    )
}

/// The chart of the verdicts per space (the suite's cases outside Cube's
/// spaces under `suite`), drawn as inline SVG.
fn chart(report: &Report, notes: &Notes) -> String {
    let mut values = Vec::new();
    for case in &report.cases {
        let space = case.space.as_deref().unwrap_or("suite");
        let verdict = match verdicts::asked_back(case) {
            true => "asked back".to_string(),
            false => report::case_tag(case).to_lowercase(),
        };
        values.push(json!({"space": space, "verdict": verdict}));
    }
    if values.is_empty() {
        return String::new();
    }
    let spec = json!({
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "title": "Verdicts per space",
        // Wide enough, and text large enough, to read on a page.
        "width": CHART_WIDTH,
        "config": {
            "axis": {"labelFontSize": CHART_TEXT, "titleFontSize": CHART_TEXT},
            "legend": {"labelFontSize": CHART_TEXT, "titleFontSize": CHART_TEXT},
            "title": {"fontSize": CHART_TEXT + 2},
        },
        "data": {"values": values},
        "mark": "bar",
        "encoding": {
            "y": {"field": "space", "type": "nominal", "title": "space"},
            "x": {
                "aggregate": "count",
                "type": "quantitative",
                "title": "cases",
                "axis": {"tickMinStep": 1, "format": "d"}
            },
            "color": {
                "field": "verdict",
                "type": "nominal",
                "scale": {
                    "domain": VERDICTS.map(|(verdict, _)| verdict),
                    "range": VERDICTS.map(|(_, colour)| colour),
                },
            },
            "order": {"field": "verdict"},
        },
    });
    match draw::svg(&spec.to_string()) {
        Ok(svg) => format!("<section class=\"chart\">\n{svg}\n</section>\n"),
        Err(err) => {
            let why = format!("the chart of verdicts cannot be drawn: {err:#}");
            notes.warn(&why);
            format!("<p class=\"note\">{}</p>\n", escape_markup(&why))
        }
    }
}

/// A chat id in the summary table: a long one (a UUID) by its first 8
/// characters, the whole id in its tooltip, so the case name keeps the
/// room.
fn short_chat_id(chat: &str) -> String {
    match chat.char_indices().nth(8).filter(|_| chat.chars().count() > 12) {
        Some((cut, _)) => format!(
            "<span title=\"{}\">{}…</span>",
            escape_markup(chat),
            escape_markup(&chat[..cut])
        ),
        None => escape_markup(chat),
    }
}
