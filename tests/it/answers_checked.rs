//! Answers read as a person reads them: an agent that asks back instead
//! of answering (exit 12, nothing on stdout, `--allow-questions`), and
//! the figures of an answer checked against its rows (`-o json`'s
//! `figures`, `--expect-faithful`), against the emulator.

use serde_json::Value;

use crate::support::*;

const QUESTION_BACK: &str = "Do you mean the **order date** or the ship date?";

fn asking_back(emu: &Emulator) {
    emu.script(Reply::stream(
        &ChatStream::new("c-back", Family::Semantic).final_answer(&["I can break revenue down. ", QUESTION_BACK]),
    ));
}

/// `analyst ask --no-history ARGS` against `emu`.
fn ask(emu: &Emulator, args: &[&str]) -> std::process::Output {
    emu.analyst().args(["ask", "--no-history"]).args(args).output().unwrap()
}

fn assert_stderr_has(output: &std::process::Output, piece: &str) {
    assert!(stderr(output).contains(piece), "{}", stderr(output));
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn an_agent_that_asks_back_writes_nothing_and_exits_12() {
    let emu = Emulator::start();
    for mode in ["answer", "csv", "table", "html"] {
        asking_back(&emu);
        let output = ask(&emu, &["-o", mode, "Revenue?"]);
        assert_eq!(output.status.code(), Some(12), "{mode}: {}", stderr(&output));
        assert_eq!(stdout(&output), "", "{mode}");
        assert_whole(
            stderr(&output),
            str![[r#"
message: [..]-message
chat: c-back
the agent asks back instead of answering:
  I can break revenue down. Do you mean the **order date** or the ship date?
analyst: error: the agent asked back; to reply: analyst ask --chat-id c-back 'your answer' (--allow-questions takes the question as the answer)

"#]],
        );
    }
    // With a thread, the reply continues the thread.
    asking_back(&emu);
    let dir = Scratch::new();
    let db = dir.join("history.db");
    let output = emu
        .analyst()
        .env("ANALYST_HISTORY_DB", &db)
        .args(["ask", "--thread", "monthly", "Revenue?"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(12));
    assert_stderr_has(&output, "to reply: analyst ask --thread monthly 'your answer'");
}

#[test]
fn allow_questions_takes_the_question_as_the_answer_and_json_and_raw_still_say_so() {
    let emu = Emulator::start();
    asking_back(&emu);
    let output = ask(&emu, &["--allow-questions", "Revenue?"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains("ship date?"), "{}", stdout(&output));
    // -o json: its document, marked, and exit 12.
    asking_back(&emu);
    let output = ask(&emu, &["-o", "json", "Revenue?"]);
    assert_eq!(output.status.code(), Some(12));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["asksBack"], true);
    assert_eq!(
        document["question"],
        "I can break revenue down. Do you mean the **order date** or the ship date?"
    );
    // -o raw passes the stream through, and still exits 12.
    asking_back(&emu);
    let output = ask(&emu, &["-o", "raw", "Revenue?"]);
    assert_eq!(output.status.code(), Some(12));
    assert!(stdout(&output).contains("ship date?"));
}

#[test]
fn rows_followed_by_an_offer_are_an_answer() {
    let emu = Emulator::start();
    emu.script(Reply::stream(
        &ChatStream::new("c-offer", Family::Semantic)
            .sql_call(&SqlCall::revenue_by_month(3))
            .final_answer(&["Revenue grew each month. Would you like a chart?"]),
    ));
    let output = ask(&emu, &["Revenue?"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout(&output), "Revenue grew each month. Would you like a chart?\n");
}

/// A turn with three months of revenue (1,500,000.5, 1,537,813.5 and
/// 1,575,626.5) and orders (900, 901, 902), answered with `answer`.
fn three_months(emu: &Emulator, answer: &str) {
    emu.script(Reply::stream(
        &ChatStream::new("c-figures", Family::Semantic)
            .sql_call(&SqlCall::revenue_by_month(3))
            .final_answer(&[answer]),
    ));
}

#[test]
fn json_reports_each_figure_with_what_supports_it_or_its_nearest() {
    let emu = Emulator::start();
    three_months(
        &emu,
        "Over the 3 months, revenue reached **$1.58M** in March 2024, 2,703 orders in all; the peak was 950 orders.",
    );
    let output = emu
        .analyst()
        .args([
            "ask",
            "--no-history",
            "-o",
            "json",
            "--jq",
            ".figures",
            "Revenue by month?",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_whole(
        stdout(&output),
        str![[r#"
[{"text":"3","value":3.0,"supported":true,"by":{"basis":"rows","query":1,"value":3.0}},{"text":"$1.58M","value":1580000.0,"supported":true,"by":{"basis":"cell","query":1,"column":"orders_view.revenue","value":1575626.5,"cells":[{"row":3,"column":"orders_view.revenue","value":1575626.5}]}},{"text":"2,703","value":2703.0,"supported":true,"by":{"basis":"sum","query":1,"column":"orders_view.count","value":2703.0}},{"text":"950","value":950.0,"supported":false,"nearest":{"basis":"cell","query":1,"column":"orders_view.count","value":902.0,"cells":[{"row":3,"column":"orders_view.count","value":902.0}]}}]

"#]],
    );
}

#[test]
fn expect_faithful_fails_on_exactly_the_unsupported_figures() {
    let emu = Emulator::start();
    three_months(&emu, "Orders rose from 900 to 902, 2,703 in all.");
    let output = ask(&emu, &["--expect-faithful", "Orders by month?"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    three_months(&emu, "Orders rose from 900 to 950, 2,703 in all, up 5.6%.");
    let output = ask(&emu, &["--expect-faithful", "Orders by month?"]);
    assert_eq!(output.status.code(), Some(9));
    assert_whole(
        stderr(&output),
        str![[r#"
message: [..]-message
chat: c-figures
analyst: expectation failed: Unsupported figure: 950 (nearest: 902 in orders_view.count)
analyst: expectation failed: Unsupported figure: 5.6% (nearest: 3 rows of result 1)
analyst: error: 2 expectation(s) not met

"#]],
    );
    // No SQL result: nothing supports a figure.
    emu.script(Reply::stream(
        &ChatStream::new("c-none", Family::Semantic).final_answer(&["Revenue was $1.2M."]),
    ));
    let output = ask(&emu, &["--expect-faithful", "Revenue?"]);
    assert_eq!(output.status.code(), Some(9));
    assert_stderr_has(
        &output,
        "expectation failed: no rows to support the answer's figures: $1.2M",
    );
}

#[test]
fn check_fails_a_case_that_asks_back_unless_it_expects_a_question_and_grades_figures() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let suite = dir.write(
        "answers.toml",
        "[[case]]\nname = \"ambiguous\"\nquestion = \"Revenue by date?\"\n\n\
         [[case]]\nname = \"clarifying is right\"\nquestion = \"Revenue by date?\"\nexpect_question = true\n\n\
         [[case]]\nname = \"answering is wrong\"\nquestion = \"Revenue?\"\nexpect_question = true\n\n\
         [[case]]\nname = \"faithful\"\nquestion = \"Orders by month?\"\nexpect_faithful = true\n",
    );
    asking_back(&emu);
    asking_back(&emu);
    three_months(&emu, "Orders rose from 900 to 902.");
    three_months(&emu, "Orders rose from 900 to 950.");
    let summary = dir.join("summary.md");
    let output = emu
        .analyst()
        .args(["check", "--no-history", "--jobs", "1", "-o", "json", "--summary"])
        .arg(&summary)
        .arg(&suite)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(9), "{}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let verdicts: Vec<(String, String, String)> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            (
                case["name"].as_str().unwrap().to_string(),
                case["status"].as_str().unwrap().to_string(),
                case["messages"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| m.as_str().unwrap())
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            (
                "ambiguous".to_string(),
                "failed".to_string(),
                "Asked back: I can break revenue down. Do you mean the **order date** or the ship date?".to_string()
            ),
            ("clarifying is right".to_string(), "passed".to_string(), String::new()),
            (
                "answering is wrong".to_string(),
                "failed".to_string(),
                "expected the agent to ask back (expect_question); it answered".to_string()
            ),
            (
                "faithful".to_string(),
                "failed".to_string(),
                "Unsupported figure: 950 (nearest: 902 in orders_view.count)".to_string()
            ),
        ]
    );
    assert_eq!(report["cases"][0]["runs"][0]["asksBack"], true);
    let figures = &report["cases"][3]["runs"][0]["figures"];
    assert_eq!(figures[0]["text"], "900");
    assert_eq!(figures[0]["supported"], true);
    assert_eq!(figures[1]["supported"], false);
    assert_eq!(figures[1]["nearest"]["value"], 902.0);
    // The page, rendered again from the report: the failed case's figures
    // beside its answer, the case that asked back drawn apart.
    let report_file = dir.write("report.json", &output.stdout);
    let page = emu
        .analyst()
        .args(["check", "merge", "-o", "html"])
        .arg(&report_file)
        .output()
        .unwrap();
    let page = stdout(&page);
    assert!(
        page.contains("<li>900 ✓ 900 in orders_view.count</li>\n<li>950 ✗ nearest 902 in orders_view.count</li>"),
        "{page}"
    );
    assert!(page.contains("asked back</text>"), "the chart counts it apart: {page}");
    let summary = std::fs::read_to_string(summary).unwrap();
    assert!(summary.contains(r"3 failed \(1 asked back\)"), "{summary}");
    assert!(
        summary.contains(r"| faithful | 900 ✓ 900 in orders\_view\.count; 950 ✗ nearest 902 in orders\_view\.count |"),
        "{summary}"
    );
}
