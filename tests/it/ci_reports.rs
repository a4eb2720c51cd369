//! What `check` leaves for the page a CI job shows (`cli.md`, "`check` in
//! CI"): every report of a run where cases fail, none of a run that failed
//! as a whole; the Markdown summary, whose table hostile names and answers
//! cannot break; the HTML page, inert in a real Chromium; a saved report
//! rendered again by `check merge`; verdict tags, error counts and
//! consistency across repeats; reports of the earlier form still read; a
//! line in the log when a case starts.

use std::path::Path;

use pulldown_cmark::{html, Options, Parser};
use serde_json::Value;

use crate::cube_evals::{answers, check, examples};
use crate::support::browser::{chromium_dom, serve, unused_port};
use crate::support::*;

/// A string shaped like a Cube API key, which no report may show.
const KEY_SHAPED: &str = "sk-live-9b3e7d1c4a2f60e8d5b7";

/// A suite whose names and questions try to break a table and add markup;
/// one case passes, two fail.
pub(crate) const HOSTILE: &str = r#"
[[case]]
name = "revenue | <script>alert(1)</script> [home](https://evil.example)"
question = "What was our revenue by month? <b>now</b> | ok"
expect_answer = "(?i)december"

[[case]]
name = "never | matches"
question = "Revenue by month, in a phrase no answer holds?"
expect_answer = "a phrase no answer holds"

[[case]]
name = "inline ](javascript:alert(2))"
question = "Show the table inline"
expect_answer = "never said"
"#;

/// The answer of the agent to "Show the table inline": a Markdown table
/// whose cells try to run a script, link and show an image, and a key.
fn hostile_inline() -> String {
    format!(
        "| region | note |\n|---|---|\n| EMEA | <script>alert(3)</script> |\n| APAC | [x](javascript:alert(4)) ![i](http://127.0.0.1:{}/i.png) {KEY_SHAPED} |\n",
        unused_port()
    )
}

/// An emulator whose agent answers [`HOSTILE`]'s inline question with
/// [`hostile_inline`].
pub(crate) fn hostile_emulator() -> Emulator {
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = vec![("table inline".into(), Answer::Inline(hostile_inline()))]);
    emu
}

/// The bytes of `path`, or an empty vector when there is no such file.
pub(crate) fn bytes_of(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_default()
}

#[test]
fn a_run_where_cases_fail_writes_every_report_and_a_run_that_failed_none() {
    let emu = hostile_emulator();
    let suite = ScratchFile::new("smoke.toml", HOSTILE);
    let dir = Scratch::new();
    let (report, junit, summary, saved) = (
        dir.join("report.json"),
        dir.join("junit.xml"),
        dir.join("summary.md"),
        dir.join("streams"),
    );
    std::fs::write(&summary, "# Earlier step\n\n").unwrap();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let args = [
        "check".to_string(),
        "-o".into(),
        "json".into(),
        "--output-file".into(),
        path(&report),
        "--junit".into(),
        path(&junit),
        "--summary".into(),
        path(&summary),
        "--save".into(),
        path(&saved),
        path(&suite),
    ];
    let output = emu.analyst().args(&args).output().unwrap();
    exits(&output, 9);
    assert!(output.stdout.is_empty(), "the report went to its file");
    let json: Value = serde_json::from_slice(&bytes_of(&report)).expect("the report of a failing run");
    assert_eq!(json["cases"].as_array().unwrap().len(), 3, "{json}");
    assert_eq!(json["failed"], 2, "{json}");
    let xml = String::from_utf8(bytes_of(&junit)).unwrap();
    assert!(
        xml.contains("<testsuite") && xml.matches("<failure").count() == 2,
        "{xml}"
    );
    let markdown = String::from_utf8(bytes_of(&summary)).unwrap();
    assert!(
        markdown.starts_with("# Earlier step\n\n## analyst check"),
        "appended: {markdown}"
    );
    assert_eq!(
        std::fs::read_dir(&saved).unwrap().count(),
        4,
        "a stream per case, and analyst-save.json"
    );
    for written in [&report, &junit, &summary] {
        let text = String::from_utf8(bytes_of(written)).unwrap();
        assert!(!text.contains(KEY_SHAPED), "{}: {text}", written.display());
    }

    // A run that fails as a whole (a refused key) leaves the report and
    // the JUnit file as they were, and adds no summary.
    let before = [bytes_of(&report), bytes_of(&junit), bytes_of(&summary)];
    let output = emu
        .analyst()
        .env("ANALYST_API_KEY", "sk-revoked-key")
        .args(&args)
        .output()
        .unwrap();
    exits(&output, 3);
    assert_eq!(
        [bytes_of(&report), bytes_of(&junit), bytes_of(&summary)],
        before,
        "untouched by a failed run"
    );
}

/// The HTML GitHub would make of `markdown` (CommonMark with GFM tables
/// and strikethrough).
fn rendered(markdown: &str) -> String {
    let mut page = String::new();
    html::push_html(
        &mut page,
        Parser::new_ext(markdown, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH),
    );
    page
}

/// The names of the HTML elements opened in `page`.
fn elements(page: &str) -> Vec<String> {
    page.split('<')
        .skip(1)
        .filter(|tag| !tag.starts_with('/'))
        .map(|tag| {
            tag.chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
        })
        .collect()
}

/// Fails unless `page` holds only the summary's own elements: no script,
/// link, image or bold from a name, a question or an answer (the empty
/// comments after an `@` are no element).
fn assert_only_summary_elements(page: &str) {
    let allowed = [
        "h2", "p", "strong", "table", "thead", "tbody", "tr", "th", "td", "details", "summary",
    ];
    for element in elements(&page.replace("<!-- -->", "")) {
        assert!(allowed.contains(&element.as_str()), "<{element}> in {page}");
    }
}

#[test]
fn the_summary_keeps_hostile_names_questions_and_answers_as_text() {
    let emu = hostile_emulator();
    let suite = ScratchFile::new("smoke.toml", HOSTILE);
    let output = emu
        .analyst()
        .args(["check", "-o", "markdown"])
        .arg(&*suite)
        .output()
        .unwrap();
    exits(&output, 9);
    let markdown = String::from_utf8(output.stdout).unwrap();
    assert!(!markdown.contains(KEY_SHAPED), "{markdown}");
    assert_only_summary_elements(&rendered_by_cmark_gfm(&markdown));
    let page = rendered(&markdown);
    assert_only_summary_elements(&page);
    // The table of cases that did not pass: a header and two rows, each of
    // four cells; every case below, each of six.
    let tables: Vec<&str> = page.split("<table>").skip(1).collect();
    assert_eq!(tables.len(), 2, "{page}");
    assert_eq!(tables[0].matches("<tr>").count(), 3, "{}", tables[0]);
    assert_eq!(tables[0].matches("<td").count(), 2 * 4, "{}", tables[0]);
    assert_eq!(tables[1].matches("<tr>").count(), 4, "{}", tables[1]);
    assert_eq!(tables[1].matches("<td").count(), 3 * 6, "{}", tables[1]);
    // The text is there, as text.
    for text in [
        "revenue | &lt;script&gt;alert(1)&lt;/script&gt; [home](https://evil.example)",
        "never | matches",
        "inline ](javascript:alert(2))",
        "&lt;b&gt;now&lt;/b&gt; | ok",
        "&lt;script&gt;alert(3)&lt;/script&gt;",
    ] {
        assert!(page.contains(text), "{text} in {page}");
    }
    assert!(page.contains("<strong>"), "the accuracy line: {page}");
    // A TOML suite gives its accuracy and its reasons as Cube's eval files
    // do: the failed cases' reason cells are not empty.
    assert!(page.contains("accuracy 33% (1/3)"), "{page}");
    assert!(tables[0].contains("<td>Expectation not met</td>"), "{}", tables[0]);

    // --summary appends: two runs, two summaries.
    let summary = ScratchFile::new("summary.md", "");
    for _ in 0..2 {
        let output = emu
            .analyst()
            .arg("check")
            .arg("--summary")
            .arg(&*summary)
            .arg(&*suite)
            .output()
            .unwrap();
        exits(&output, 9);
    }
    let twice = std::fs::read_to_string(&*summary).unwrap();
    assert_eq!(twice.matches("## analyst check").count(), 2, "{twice}");
}

/// The HTML GitHub's own renderer (cmark-gfm, PyPI's `cmarkgfm`, with its
/// extensions: autolinks, tables, strikethrough, tag filter; raw HTML
/// kept, as GitHub keeps it before its sanitizer) makes of `markdown`.
fn rendered_by_cmark_gfm(markdown: &str) -> String {
    use std::io::Write;
    let mut python = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, cmarkgfm; from cmarkgfm.cmark import Options; \
             sys.stdout.write(cmarkgfm.github_flavored_markdown_to_html(sys.stdin.read(), options=Options.CMARK_OPT_UNSAFE))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 (scripts/test installs cmarkgfm)");
    python.stdin.take().unwrap().write_all(markdown.as_bytes()).unwrap();
    let output = python.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "cmarkgfm failed: is it installed? (scripts/test installs it)"
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn addresses_and_mentions_in_names_and_answers_are_no_links_on_github() {
    let emu = Emulator::start();
    emu.agent(|agent| {
        agent.answers = vec![(
            "contact".into(),
            Answer::Inline(
                "Write to ops@acme.example, mailto:a@b.example or xmpp:bot@chat.example/x; cc @acme/team\n".into(),
            ),
        )]
    });
    let suite = ScratchFile::new(
        "people.toml",
        "[[case]]\nname = \"ask ana@acme.example or @octocat (mailto:x@y.example)\"\nquestion = \"Who is the contact?\"\nexpect_answer = \"never said\"\n",
    );
    let output = emu
        .analyst()
        .args(["check", "-o", "markdown"])
        .arg(&*suite)
        .output()
        .unwrap();
    exits(&output, 9);
    let markdown = String::from_utf8(output.stdout).unwrap();
    let page = rendered_by_cmark_gfm(&markdown);
    assert_only_summary_elements(&page);
    assert!(!page.contains("<a ") && !page.contains("href"), "{page}");
    for text in [
        "ana@<!-- -->acme.example",
        "ops@<!-- -->acme.example",
        "@<!-- -->octocat",
    ] {
        assert!(page.contains(text), "{text} in {page}");
    }
}

#[test]
fn the_html_report_is_one_inert_page_with_every_case_in_a_real_browser() {
    let emu = Emulator::start();
    let mut scripted = answers();
    // The question answered without a query is answered inline, hostile.
    for (phrase, answer) in &mut scripted {
        if phrase == "biggest order" {
            *answer = Answer::Inline(hostile_inline());
        }
    }
    emu.agent(|agent| agent.answers = scripted);
    let (code, page, stderr) = check(&emu, &examples(), &["-o", "html", "--certified"]);
    assert_eq!(code, Some(9), "{stderr}");
    assert!(
        page.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'"),
        "{page}"
    );
    assert!(!page.contains(KEY_SHAPED), "no key in the page");
    let (server, log) = serve(page.into_bytes());
    let dom = chromium_dom(&format!("http://127.0.0.1:{server}/page.html"));
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(
        *log.lock().unwrap(),
        ["/page.html"],
        "nothing but the page was asked for"
    );
    assert!(!dom.contains("<script") && !dom.contains("<img"), "{dom}");
    assert!(dom.contains("50% (6/12)"), "the accuracy: {dom}");
    // The chart of verdicts per space, drawn inline.
    let chart = dom.split("<section class=\"chart\">").nth(1).expect("a chart");
    assert!(
        chart.contains("<svg") && chart.contains("Verdicts per space"),
        "{chart}"
    );
    // Wide enough to read, with text of at least 11 px.
    let width: f64 = chart
        .split("width=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|width| width.parse().ok())
        .expect("the chart's width");
    assert!(width >= 600.0, "{width} px wide");
    assert!(
        !chart.contains("font-size=\"10px\"") && chart.contains("font-size=\"11px\""),
        "{chart}"
    );

    // Triage order: what did not pass first, the passes after it,
    // collapsed, and a view of failures only that needs no script.
    let sections: Vec<&str> = dom.split("<section class=\"case\"").skip(1).collect();
    let passed_from = sections
        .iter()
        .position(|section| section.contains(">PASS</span>"))
        .expect("a passing case");
    assert!(passed_from > 0, "a case that did not pass comes first");
    assert!(
        sections[passed_from..]
            .iter()
            .all(|section| section.contains(">PASS</span>")),
        "every pass after every failure"
    );
    assert!(dom.contains("<details class=\"passed\"><summary>"), "{dom}");
    assert!(dom.contains("<input type=\"checkbox\" id=\"failures-only\""), "{dom}");
    // Every case, with its question, the SQL on both sides and the verdict.
    for (name, tag) in [
        ("orders_by_region", "PASS"),
        ("orders_by_status", "FAIL"),
        ("biggest_order", "REVIEW"),
        ("refunds", "ERROR"),
        ("certified/orders_per_status", "PASS"),
    ] {
        let section = dom
            .split("<section class=\"case\"")
            .find(|section| section.contains(&format!("</span> {name}</h2>")))
            .unwrap_or_else(|| panic!("no section of {name}: {dom}"));
        assert!(section.contains(&format!(">{tag}</span>")), "{name}: {section}");
        assert!(section.contains("class=\"question\""), "{name}: {section}");
        assert!(section.contains("The ground truth"), "{name}: {section}");
    }
    let status = dom
        .split("<section class=\"case\"")
        .find(|section| section.contains("</span> orders_by_status</h2>"))
        .unwrap();
    assert!(
        status.contains("The agent's SQL") && status.contains("Value mismatch: column 2"),
        "{status}"
    );
    // The inline answer is a table, its script and image left out.
    let inline = dom
        .split("<section class=\"case\"")
        .find(|section| section.contains("</span> biggest_order</h2>"))
        .unwrap();
    assert!(inline.contains("<table>") && inline.contains("EMEA"), "{inline}");
    assert!(inline.contains("inline"), "the analysis names inline results: {inline}");
}

#[test]
fn tags_errors_and_consistency_reach_every_report_and_merge_renders_one_again() {
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = answers());
    let dir = Scratch::new();
    let junit = dir.join("junit.xml");
    // The suite as the README names it (the tests run in the crate's root).
    let args = [
        "-o",
        "json",
        "--certified",
        "--repeat",
        "2",
        "--junit",
        junit.to_str().unwrap(),
    ];
    let (code, stdout, stderr) = check(&emu, Path::new("examples/agents"), &args);
    assert_eq!(code, Some(9), "{stderr}");
    // Each verdict's own tag on stderr.
    for (tag, name) in [
        ("PASS", "orders_by_region (run 2 of 2)"),
        ("FAIL", "orders_by_status (run 1 of 2)"),
        ("REVIEW", "biggest_order (run 1 of 2)"),
        ("ERROR", "refunds (run 2 of 2)"),
        ("ERROR", "returned_orders (run 1 of 2)"),
    ] {
        assert!(stderr.contains(&format!("{tag:<5} {name}  ")), "{tag} {name}: {stderr}");
    }
    assert_whole(
        stderr.to_string(),
        str![[r#"
...
12 cases: 6 passed, 4 failed (1 to review), 2 errors in [..], consistent 6/12, accuracy 50% (6/12)
analyst: error: 6 of 12 cases did not pass

"#]],
    );
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (&report["passed"], &report["failed"], &report["errors"]),
        (&Value::from(6), &Value::from(4), &Value::from(2)),
    );
    let consistent = serde_json::json!({"passedEveryRun": 6, "cases": 12});
    assert_eq!(report["consistent"], consistent);
    assert_eq!(case(&report, "orders_by_region")["passedEveryRun"], true);
    assert_eq!(case(&report, "orders_by_status")["passedEveryRun"], false);
    let run = &case(&report, "orders_by_region")["runs"][0];
    assert_eq!(run["question"], "How many orders did each region place?", "{run}");
    assert!(run["answer"].as_str().unwrap().contains("December"), "{run}");
    for moment in ["firstByte", "firstSql", "answer", "total"] {
        assert!(run["seconds"][moment].is_number(), "{moment}: {run}");
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<error ").count(), 2, "{xml}");
    assert_eq!(xml.matches("<failure ").count(), 4, "{xml}");
    assert!(xml.contains("<property name=\"consistent\" value=\"6/12\"/>"), "{xml}");

    // The saved report, rendered again in every format, asks nothing.
    let saved = ScratchFile::new("report.json", stdout.as_bytes());
    let asked = emu.requests().len();
    let again = |args: &[&str]| {
        let output = analyst()
            .args(["check", "merge"])
            .args(args)
            .arg(&*saved)
            .output()
            .unwrap();
        exits(&output, 9);
        String::from_utf8(output.stdout).unwrap()
    };
    let json: Value = serde_json::from_str(&again(&["-o", "json"])).unwrap();
    assert_eq!(json["cases"], report["cases"], "the cases as they were");
    assert_eq!(json["consistent"], consistent);
    let tap = again(&["--tap"]);
    assert!(tap.starts_with("TAP version 13\n1..12\n"), "{tap}");
    assert_eq!(tap.matches("\nnot ok ").count(), 6, "{tap}");
    let markdown = again(&["-o", "markdown"]);
    assert_whole(
        markdown.to_string(),
        str![[r#"
## analyst check: examples/agents

**accuracy 50% \(6/12\)**: 12 cases, 6 passed, 4 failed \(1 to review\), 2 errors in [..], consistent 6/12

Tested: asked http\://127\.0\.0\.1\:[..]/api/v1/public/acme/agents/agent\-7/chat/stream\-chat\-state as external user ci\-bot, from [..] for [..]s, with analyst [..]

| case | verdict | reason | analysis |
|---|---|---|---|
| orders\_by\_status | FAIL | Value mismatch | column 2 of the ground truth \(orders\) has no match\: row completed 7500 vs 7575 |
| regions\_without\_anz | FAIL | Row count mismatch | the agent returned 4 rows, the ground truth has 5 |
| order\_count\_with\_region | FAIL | Missing columns | the agent returned 1 column, the ground truth has 2 |
| biggest\_order | REVIEW | 0 of 2 runs passed | the agent ran no query\: nothing to compare |
| returned\_orders | ERROR | Agent error | the stream reported an error\: RateLimitError\: the model is overloaded; chat chat\-[..] aborted |
| refunds | ERROR | Query error | the agent's query failed\: Error\: no such table\: refunds |

<details><summary>Every case (12)</summary>

| case | verdict | runs passed | median | question | answer |
|---|---|---|---|---|---|
| orders\_by\_region | PASS | 2/2 | [..]s | How many orders did each region place? | Answer 1\: revenue rose every month; December was the best month \(€2\.4M\)\. |
| revenue\_by\_region | PASS | 2/2 | [..]s | What is the total revenue of each region? | Answer 1\: revenue rose every month; December was the best month \(€2\.4M\)\. |
| orders\_by\_status | FAIL | 0/2 | [..]s | How many orders are there in each status? | Answer 1\: revenue rose every month; December was the best month \(€2\.4M\)\. |
| regions\_without\_anz | FAIL | 0/2 | [..]s | How many orders per region, every region included? | Answer 1\: revenue rose every month; December was the best month \(€2\.4M\)\. |
| order\_count\_with\_region | FAIL | 0/2 | [..]s | Which region has how many orders, region and count? | Answer 1\: revenue rose every month; December was the best month \(€2\.4M\)\. |
| status\_counts\_estimate | PASS | 2/2 | [..]s | Roughly how many orders per status? | Answer 1\: revenue rose every month; December was the best month \(€2\.4M\)\. |
| biggest\_order | REVIEW | 0/2 | [..]s | What was our biggest order? | Answer 1\: revenue rose every month; December was the best month \(€2\.4M\)\. |
| returned\_orders | ERROR | 0/2 | [..]s | How many orders were returned? |  |
| refunds | ERROR | 0/2 | [..]s | How much did we refund? | Answer 1\: revenue rose every month; December was the best month \(€2\.4M\)\. |
| sales/orders\_by\_region | PASS | 2/2 | [..]s | How many orders did each sales region place? | Answer 1\: revenue rose every month; December was the best month \(€2\.4M\)\. |
| certified/revenue\_by\_region | PASS | 2/2 | [..]s | What is the revenue of each region? | Answer 1\: revenue rose every month; December was the best month \(€2\.4M\)\. |
| certified/orders\_per\_status | PASS | 2/2 | [..]s | How many orders does each status have? | Answer 1\: revenue rose every month; December was the best month \(€2\.4M\)\. |

</details>


"#]],
    );
    let page = again(&["-o", "html"]);
    assert!(page.contains("consistent 6/12") && page.contains("<svg"), "{page}");
    let junit_again = dir.join("again.xml");
    again(&["--junit", junit_again.to_str().unwrap()]);
    assert_eq!(
        std::fs::read_to_string(&junit_again)
            .unwrap()
            .matches("<error ")
            .count(),
        2
    );
    assert_eq!(emu.requests().len(), asked, "nothing asked of the service");
}

/// The example report of the README (`docs/`): the run `check_page`
/// pins (a baseline, then a change that regressed).
fn example_report() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/example-report.json")
}

#[test]
fn the_readmes_example_report_is_of_this_form_and_renders() {
    let text = std::fs::read_to_string(example_report()).unwrap();
    let report: Value = serde_json::from_str(&text).unwrap();
    let run = &case(&report, "orders_by_region")["runs"][0];
    assert!(
        run["seconds"]["total"].is_number() && run["answer"].is_string(),
        "{run}"
    );
    let output = analyst()
        .args(["check", "merge", "-o", "html"])
        .arg(example_report())
        .output()
        .unwrap();
    exits(&output, 9);
    let page = String::from_utf8(output.stdout).unwrap();
    assert!(page.contains("consistent 6/12") && page.contains("<svg"), "{page}");
}

/// `report` as the earlier `-o json` wrote it: each run's durations as
/// `duration`, `firstByte`, `firstSql` and `answer` (seconds), no question,
/// no answer text.
fn earlier_form(report: &Value) -> Value {
    let mut old = report.clone();
    for case in old["cases"].as_array_mut().unwrap() {
        for run in case["runs"].as_array_mut().unwrap() {
            let run = run.as_object_mut().unwrap();
            let seconds = run.remove("seconds").unwrap();
            run.remove("question");
            run.insert("duration".into(), seconds["total"].clone());
            run.insert("firstByte".into(), seconds["firstByte"].clone());
            run.insert("firstSql".into(), seconds["firstSql"].clone());
            run.insert("answer".into(), seconds["answer"].clone());
        }
    }
    old
}

#[test]
fn reports_of_the_earlier_form_are_read_by_merge_and_baseline() {
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = answers());
    let (code, stdout, stderr) = check(&emu, &examples(), &["-o", "json"]);
    assert_eq!(code, Some(9), "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let old = ScratchFile::new("old.json", earlier_form(&report).to_string());
    let output = analyst()
        .args(["check", "merge", "-o", "json"])
        .arg(&*old)
        .output()
        .unwrap();
    exits(&output, 9);
    let read: Value = serde_json::from_slice(&output.stdout).unwrap();
    let run = &case(&read, "orders_by_region")["runs"][0];
    let was = &case(&report, "orders_by_region")["runs"][0];
    assert_eq!(run["seconds"], was["seconds"], "the durations moved under seconds");
    assert_eq!(run["answer"], Value::Null, "no answer text in the earlier form");
    assert_eq!(read["accuracy"], report["accuracy"]);
    let (code, _, stderr) = check(&emu, &examples(), &["--baseline", old.to_str().unwrap()]);
    assert_eq!(code, Some(9), "{stderr}");
    assert!(!stderr.contains("newly fail"), "the same verdicts: {stderr}");
    assert!(
        !stderr.contains("error:") || stderr.contains("did not pass"),
        "{stderr}"
    );
}

#[test]
fn a_log_hears_when_each_case_starts_and_a_quiet_one_does_not() {
    let emu = Emulator::start();
    let suite = ScratchFile::new(
        "smoke.toml",
        "[[case]]\nname = \"first\"\nquestion = \"Revenue?\"\nrepeat = 2\n\n[[case]]\nname = \"second\"\nquestion = \"Revenue by month?\"\n",
    );
    let output = emu
        .analyst()
        .args(["check", "--jobs", "1"])
        .arg(&*suite)
        .output()
        .unwrap();
    exits(&output, 0);
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|line| line.starts_with(needle))
            .unwrap_or_else(|| panic!("{needle}: {stderr}"))
    };
    assert!(
        at("START first (run 1 of 2)") < at("PASS  first (run 1 of 2)"),
        "{stderr}"
    );
    assert!(
        at("PASS  first (run 1 of 2)") < at("START first (run 2 of 2)"),
        "{stderr}"
    );
    assert!(at("START second") < at("PASS  second"), "{stderr}");
    let quiet = emu.analyst().args(["check", "-q"]).arg(&*suite).output().unwrap();
    exits(&quiet, 0);
    assert!(quiet.stderr.is_empty(), "{}", String::from_utf8_lossy(&quiet.stderr));
}

#[test]
fn the_page_counts_cases_in_whole_numbers_and_gives_a_chat_id_little_room() {
    let emu = Emulator::start();
    emu.script(Reply::stream(
        &ChatStream::new("0b6f7a52-9c1e-4d3a-8e2f-1a2b3c4d5e6f", Family::Semantic).final_answer(&["Revenue rose."]),
    ));
    let suite = ScratchFile::new("one.toml", "[[case]]\nname = \"one\"\nquestion = \"Revenue?\"\n");
    let output = emu
        .analyst()
        .args(["check", "-o", "html"])
        .arg(&*suite)
        .output()
        .unwrap();
    exits(&output, 0);
    let page = String::from_utf8(output.stdout).unwrap();
    // One case: the axis says 0 and 1, not 0.2, 0.4…
    let chart = page.split("<section class=\"chart\">").nth(1).expect("a chart");
    let labels = regex::Regex::new(r">(\d+(?:\.\d+)?)</text>").unwrap();
    let ticks: Vec<&str> = labels
        .captures_iter(chart)
        .map(|found| found.get(1).unwrap().as_str())
        .collect();
    assert!(
        !ticks.is_empty() && ticks.iter().all(|tick| !tick.contains('.')),
        "{ticks:?}"
    );
    // A UUID is shown by its first group, whole in its tooltip.
    assert!(
        page.contains("<td class=\"chat\"><span title=\"0b6f7a52-9c1e-4d3a-8e2f-1a2b3c4d5e6f\">0b6f7a52…</span></td>"),
        "{page}"
    );
}
