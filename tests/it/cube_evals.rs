//! `analyst check` on Cube's own eval files (`examples/agents/`): read and
//! validated as Cube reads them, and graded as Cube grades — each verdict
//! and score reason reached by an emulated agent whose queries run on the
//! emulator's warehouse, as do the ground truths.

use std::path::{Path, PathBuf};

use crate::support::*;
use serde_json::{json, Value};

use crate::support::warehouse;

/// The example `agents/` folder of the repository.
pub(crate) fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agents")
}

/// The question a copy of the example folder adds: its certifiedQuery
/// names no certified query there is.
const MARGIN: &str = "
  - name: margin_by_region
    question: What is the margin of each region?
    certifiedQuery: margin_by_region
";

/// A copy of the example `agents/` folder in `dir`, with one question
/// more whose certified query does not exist ([`MARGIN`]).
fn examples_and_a_missing_ground_truth(dir: &Scratch) -> PathBuf {
    let root = examples();
    for file in [
        "eval_questions.yml",
        "eval_questions/sales.yml",
        "certified_queries/revenue_by_region.md",
        "config.yml",
    ] {
        let mut text = std::fs::read_to_string(root.join(file)).unwrap();
        if file == "eval_questions.yml" {
            text.push_str(MARGIN);
        }
        dir.write(&format!("agents/{file}"), text);
    }
    dir.join("agents")
}

/// The agent's answer to each question of `examples/agents/`, by a phrase
/// of the question: right ones with other names, order and an extra
/// column; numbers off in the 5th figure (a pass) and the 3rd (a fail); a
/// missing row and column; no query; an in-stream error; a failing query.
pub(crate) fn answers() -> Vec<(String, Answer)> {
    let sql = |text: &str| Answer::Sql(text.to_string());
    vec![
        (
            "did each region place".into(),
            sql("SELECT COUNT(*) AS n, 'note' AS extra, region AS r FROM orders GROUP BY region ORDER BY n DESC"),
        ),
        (
            "each sales region".into(),
            sql("SELECT region, COUNT(*) FROM orders GROUP BY region"),
        ),
        (
            "revenue of each region".into(),
            sql("SELECT region, ROUND(SUM(amount), 2) FROM orders GROUP BY region"),
        ),
        (
            "each status?".into(),
            sql("SELECT status, COUNT(*) * 1.01 FROM orders GROUP BY status"),
        ),
        (
            "every region included".into(),
            sql("SELECT region, COUNT(*) FROM orders WHERE region <> 'ANZ' GROUP BY region"),
        ),
        (
            "region and count".into(),
            sql("SELECT COUNT(*) FROM orders GROUP BY region"),
        ),
        (
            "Roughly".into(),
            sql("SELECT status, COUNT(*) * 1.00001 FROM orders GROUP BY status"),
        ),
        ("biggest order".into(), Answer::NoQuery),
        (
            "returned".into(),
            Answer::StreamError("RateLimitError: the model is overloaded".into()),
        ),
        (
            "refund".into(),
            Answer::FailingSql(
                "SELECT SUM(refund) FROM refunds".into(),
                "Error: no such table: refunds".into(),
            ),
        ),
        ("margin".into(), sql("SELECT region, 1 FROM orders GROUP BY region")),
        (
            "does each status have".into(),
            sql("SELECT status, COUNT(*) FROM orders GROUP BY status"),
        ),
    ]
}

/// `analyst check` against the emulator (with the data query API) of
/// `suite`, with `args`: exit code, stdout and stderr.
pub(crate) fn check(emu: &Emulator, suite: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = emu
        .analyst()
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .arg("check")
        .args(args)
        .arg(suite)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn every_verdict_and_reason_is_reached_as_cube_grades() {
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = answers());
    let dir = Scratch::new();
    let folder = examples_and_a_missing_ground_truth(&dir);
    let (code, stdout, stderr) = check(&emu, &folder, &["-o", "json", "--certified"]);
    assert_eq!(code, Some(9), "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|err| panic!("{err}: {stderr}"));
    let expected: [(&str, &str, Option<&str>); 13] = [
        ("orders_by_region", "pass", None),
        ("revenue_by_region", "pass", None),
        ("orders_by_status", "fail", Some("Value mismatch")),
        ("regions_without_anz", "fail", Some("Row count mismatch")),
        ("order_count_with_region", "fail", Some("Missing columns")),
        ("status_counts_estimate", "pass", None),
        ("biggest_order", "review", None),
        ("returned_orders", "error", Some("Agent error")),
        ("refunds", "error", Some("Query error")),
        ("margin_by_region", "error", Some("Ground truth not found")),
        ("sales/orders_by_region", "pass", None),
        ("certified/revenue_by_region", "pass", None),
        ("certified/orders_per_status", "pass", None),
    ];
    for (name, verdict, reason) in expected {
        let case = case(&report, name);
        assert_eq!(case["verdict"], verdict, "{name}: {case}");
        assert_eq!(case["scoreReason"].as_str(), reason, "{name}: {case}");
        assert_eq!(case["status"] == "passed", verdict == "pass", "{name}: {case}");
    }
    assert_eq!(report["cases"].as_array().unwrap().len(), expected.len());
    // The question whose certifiedQuery names nothing is not asked: no
    // chat, no turn paid for; every other case asked once.
    let missing = case(&report, "margin_by_region");
    assert_eq!(missing["runs"][0]["chatId"], Value::Null, "{missing}");
    assert_eq!(
        missing["analysis"],
        "no certified query is named \"margin_by_region\"; the agent was not asked"
    );
    assert_eq!(emu.requests_on(Route::Chat).len(), expected.len() - 1);
    assert_eq!(report["accuracy"], "46% (6/13)");
    assert_whole(
        stderr.to_string(),
        str![[r#"
...
13 cases: 6 passed, 4 failed (1 to review), 3 errors in [..], accuracy 46% (6/13)
analyst: error: 7 of 13 cases did not pass

"#]],
    );

    // The analysis names the counts, or the column, row and both values.
    let analysis = |name: &str| case(&report, name)["analysis"].as_str().unwrap().to_string();
    assert_eq!(
        analysis("regions_without_anz"),
        "the agent returned 4 rows, the ground truth has 5"
    );
    assert!(
        analysis("orders_by_status").starts_with("column 2 of the ground truth (orders) has no match: row "),
        "{}",
        analysis("orders_by_status")
    );
    assert!(analysis("refunds").contains("no such table: refunds"));
    // What ran on each side is in the report; Markdown comments are not SQL.
    let certified = case(&report, "revenue_by_region");
    assert_eq!(
        certified["groundTruth"],
        "SELECT region, ROUND(SUM(amount), 2) AS revenue\nFROM orders\nGROUP BY region"
    );
    assert_eq!(
        certified["agentSql"],
        "SELECT region, ROUND(SUM(amount), 2) FROM orders GROUP BY region"
    );
}

#[test]
fn a_failing_ground_truth_is_an_error_verdict_and_the_others_still_run() {
    let dir = Scratch::new();
    std::fs::write(
        dir.join("eval_questions.yml"),
        "eval_questions:\n  - name: broken\n    question: How many orders did each region place?\n    sql: SELECT nope FROM nowhere\n  - name: fine\n    question: How many orders did each region place, again?\n    sql: SELECT region, COUNT(*) FROM orders GROUP BY region\n",
    )
    .unwrap();
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = answers());
    let junit = dir.join("junit.xml");
    let (code, stdout, stderr) = check(
        &emu,
        &dir.join("eval_questions.yml"),
        &["-o", "json", "--junit", junit.to_str().unwrap()],
    );
    assert_eq!(code, Some(9), "{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(case(&report, "broken")["scoreReason"], "Ground truth query failed");
    assert_eq!(case(&report, "fine")["verdict"], "pass");
    let xml = std::fs::read_to_string(junit).unwrap();
    assert!(xml.contains("Ground truth query failed: the ground truth"), "{xml}");
}

/// Writes `files` (path, text) under a fresh `agents/` folder; returns the
/// folder that holds it (a repository root).
fn repository(files: &[(&str, &str)]) -> Scratch {
    let dir = Scratch::new();
    for (path, text) in files {
        let path = dir.join("agents").join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn what_the_rules_forbid_is_refused_with_file_and_line_before_anything_is_sent() {
    let cases: [(&str, &str, &str); 5] = [
        (
            "eval_questions:\n  - name: a\n    question: Q?\n    sql: SELECT 1\n    certifiedQuery: b\n",
            "eval_questions.yml:2:",
            "both sql and certifiedQuery",
        ),
        (
            "eval_questions:\n  - name: a\n    question: Q?\n",
            "eval_questions.yml:2:",
            "no ground truth",
        ),
        (
            "eval_questions:\n  - name: a\n    sql: SELECT 1\n",
            "eval_questions.yml:2:",
            "has no question",
        ),
        (
            "eval_questions:\n  - name: a\n    question: Q?\n    sql: SELECT 1\n  - name: a\n    question: R?\n    sql: SELECT 2\n",
            "eval_questions.yml:5:",
            "used twice in its space",
        ),
        (
            "eval_questions:\n  - name: a\n    question: [unclosed\n",
            "eval_questions.yml:",
            "not valid eval YAML",
        ),
    ];
    let emu = Emulator::start();
    for (text, place, message) in cases {
        let root = repository(&[("eval_questions.yml", text)]);
        let (code, _, stderr) = check(&emu, &root, &[]);
        assert_eq!(code, Some(2), "{text}: {stderr}");
        assert!(stderr.contains(place) && stderr.contains(message), "{text}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    }
    assert!(emu.requests().is_empty(), "nothing was sent");
    // The same name in two spaces is two questions.
    let root = repository(&[
        (
            "eval_questions.yml",
            "eval_questions:\n  - name: a\n    question: Q?\n    sql: SELECT 1\n",
        ),
        (
            "eval_questions/other.yml",
            "space: other\neval_questions:\n  - name: a\n    question: Q?\n    sql: SELECT 1\n",
        ),
    ]);
    // A filter that selects nothing is a mistake, not a green run.
    let (code, stdout, stderr) = check(&emu, &root, &["-o", "json", "--filter", "^nothing$"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: error: --filter "^nothing$" matches none of the 2 cases of [..]: see them with --list

"#]],
    );
    let (_, stdout, _) = check(&emu, &root, &["-o", "json"]);
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let names: Vec<&str> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| case["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "other/a"]);
}

#[test]
fn shards_repeats_and_merge_keep_the_verdicts_and_the_accuracy() {
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = answers());
    let dir = Scratch::new();
    let mut shards = Vec::new();
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let (code, stdout, stderr) = check(
            &emu,
            &examples(),
            &["-o", "json", "--repeat", "2", "--pass-rate", "0.5", "--shard", &shard],
        );
        assert!(matches!(code, Some(0 | 9)), "{stderr}");
        let path = dir.join(format!("shard-{k}.json"));
        std::fs::write(&path, stdout).unwrap();
        shards.push(path);
    }
    let output = emu
        .analyst()
        .args(["check", "merge", "-o", "json"])
        .args(&shards)
        .output()
        .unwrap();
    exits(&output, 9);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["cases"].as_array().unwrap().len(), 10);
    assert_eq!(report["accuracy"], "40% (4/10)");
    let status = case(&report, "orders_by_status");
    assert_eq!(status["runs"].as_array().unwrap().len(), 2);
    assert_eq!(status["verdict"], "fail");
    assert_eq!(status["runs"][1]["scoreReason"], "Value mismatch");
}

/// `analyst check --list -o json ARGS`, with no credential, no URL and no
/// identity: the cases as a JSON array.
fn listed(args: &[&str], env: &[(&str, &str)]) -> Vec<Value> {
    let output = analyst()
        .args(["check", "--list", "-o", "json"])
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    exits(&output, 0);
    serde_json::from_slice::<Value>(&output.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn list_marks_a_certified_query_that_names_nothing() {
    // The shipped example warns of nothing.
    let shipped = analyst().args(["check", "--list"]).arg(examples()).output().unwrap();
    exits(&shipped, 0);
    assert_whole(String::from_utf8_lossy(&shipped.stderr).into_owned(), str![""]);
    let dir = Scratch::new();
    let output = analyst()
        .args(["check", "--list", "-o", "json"])
        .arg(examples_and_a_missing_ground_truth(&dir))
        .output()
        .unwrap();
    exits(&output, 0);
    let cases: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let marked: Vec<(&str, &str)> = cases
        .iter()
        .filter_map(|case| Some((case["name"].as_str()?, case["groundTruthNotFound"].as_str()?)))
        .collect();
    assert_eq!(marked, [("margin_by_region", "margin_by_region")]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: warning: [..]/agents/eval_questions.yml:44: margin_by_region: certifiedQuery "margin_by_region" names no certified query: a run gives it verdict error (Ground truth not found) without asking the agent

"#]],
    );
}

/// Each listed case's name and the SQL of its ground truth.
fn truths(cases: &[Value]) -> Vec<(String, String)> {
    cases
        .iter()
        .map(|case| {
            (
                case["name"].as_str().unwrap().to_string(),
                case["groundTruth"].as_str().unwrap_or("(none)").to_string(),
            )
        })
        .collect()
}

/// The repository laid out as Cube's docs show it.
fn cube_repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cube-repo")
}

#[test]
fn a_cube_repository_is_read_whole_as_cube_reads_it() {
    let repo = cube_repo();
    let root = repo.to_str().unwrap();
    // The repository root, its agents folder (which holds a folder named
    // agents: agent definitions, not the root), and --certified.
    let from_root = truths(&listed(&[root], &[]));
    let agents = repo.join("agents");
    assert_eq!(from_root, truths(&listed(&[agents.to_str().unwrap()], &[])));
    let expected = [
        ("orders", "SELECT COUNT(*) AS orders FROM orders"),
        (
            "revenue",
            "SELECT region, ROUND(SUM(amount), 2) AS revenue\nFROM orders\nGROUP BY region",
        ),
        (
            "returned",
            "SELECT COUNT(*) AS returned FROM orders WHERE status = 'returned'",
        ),
        ("biggest", "SELECT MAX(amount) AS biggest FROM orders"),
        // A space's questions find its certified queries first, then auto's.
        (
            "sales/orders",
            "SELECT COUNT(*) AS orders FROM orders WHERE status <> 'returned'",
        ),
        (
            "sales/by_region",
            "SELECT region, COUNT(*) AS orders\nFROM orders\nGROUP BY region",
        ),
        (
            "sales/by_status",
            "SELECT status, COUNT(*) AS orders FROM orders GROUP BY status",
        ),
        ("sales/biggest", "SELECT MAX(amount) AS biggest FROM orders"),
    ];
    let expected: Vec<(String, String)> = expected.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    assert_eq!(from_root, expected);
    // Every certified query, wherever Cube keeps it: config.yml's flat
    // list, a space file's spaces: array, Markdown in nested certified
    // folders (.md and .markdown), and Markdown whose kind says so. Rules,
    // skills, agent definitions, a README and config.yml.example are not.
    let certified: Vec<String> = listed(&[root, "--certified"], &[])
        .iter()
        .map(|case| case["name"].as_str().unwrap().to_string())
        .filter(|name| name.starts_with("certified/"))
        .collect();
    assert_eq!(
        certified,
        [
            "certified/biggest-order",
            "certified/quarterly-revenue",
            "certified/sales/by-status",
            "certified/total-orders",
            "certified/sales/regions",
            "certified/returned",
            "certified/sales/orders-by-region",
            "certified/sales/total-orders",
        ]
    );
    // Each case says where it is defined and in which space.
    let cases = listed(&[root, "--certified"], &[]);
    let case = |name: &str| cases.iter().find(|case| case["name"] == name).unwrap().clone();
    assert!(case("sales/by_region")["source"]
        .as_str()
        .unwrap()
        .ends_with("agents/eval_questions/sales.yaml:7"));
    assert_eq!(case("sales/by_region")["space"], "sales");
    assert_eq!(case("orders")["space"], "auto");
    assert!(case("certified/sales/orders-by-region")["source"]
        .as_str()
        .unwrap()
        .ends_with("agents/spaces/sales/sales.yml:9"));
    assert_eq!(case("certified/sales/regions")["question"], "Which regions are there?");
}

#[test]
fn cubes_own_templates_with_empty_list_items_are_read_as_cube_reads_them() {
    // Cube's docs' config.yml leaves list items empty as placeholders.
    let repo = repository(&[
        (
            "config.yml",
            "spaces:\n  - name: analytics\n    rules:\n      - # Rule definitions...\n    certified_queries:\n      - # Certified query definitions...\n      - name: total\n        user_request: How many orders?\n        sql_query: SELECT COUNT(*) AS orders FROM orders\n",
        ),
        (
            "spaces/sales/sales.yml",
            "spaces:\n  - # Space definitions...\n  - name: sales\n    certified_queries:\n      -\n",
        ),
        (
            "eval_questions.yml",
            "space: analytics\neval_questions:\n  - # Questions...\n  - name: total\n    question: How many orders?\n    certifiedQuery: total\n",
        ),
    ]);
    let cases = listed(&[repo.to_str().unwrap(), "--certified"], &[]);
    let names: Vec<&str> = cases.iter().map(|case| case["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["analytics/total", "certified/analytics/total"]);
    assert_eq!(cases[0]["groundTruth"], "SELECT COUNT(*) AS orders FROM orders");
}

#[test]
fn a_question_file_alone_resolves_from_its_agents_folder() {
    // Cube's one-file runs: the certified queries of the whole folder.
    let file = cube_repo().join("agents/eval_questions/sales.yaml");
    let cases = truths(&listed(&[file.to_str().unwrap()], &[]));
    assert_eq!(
        cases,
        [
            (
                "sales/orders",
                "SELECT COUNT(*) AS orders FROM orders WHERE status <> 'returned'"
            ),
            (
                "sales/by_region",
                "SELECT region, COUNT(*) AS orders\nFROM orders\nGROUP BY region"
            ),
            (
                "sales/by_status",
                "SELECT status, COUNT(*) AS orders FROM orders GROUP BY status"
            ),
            ("sales/biggest", "SELECT MAX(amount) AS biggest FROM orders"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
}

#[test]
fn the_agents_folder_is_where_cube_cloud_agents_config_path_says() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cube-repo-moved");
    let root = repo.to_str().unwrap();
    let moved = truths(&listed(&[root], &[("CUBE_CLOUD_AGENTS_CONFIG_PATH", "ai/config")]));
    assert_eq!(
        moved,
        [(
            "revenue".to_string(),
            "SELECT region, ROUND(SUM(amount), 2) AS revenue FROM orders GROUP BY region".to_string()
        )]
    );
    let default = truths(&listed(&[root], &[]));
    assert_eq!(default[0].0, "default_folder");
}

#[test]
fn a_cube_agents_config_path_that_names_no_agents_folder_is_an_error() {
    let root = repository(&[(
        "eval_questions.yml",
        "eval_questions:\n  - name: q\n    question: Q?\n    sql: SELECT 1\n",
    )]);
    std::fs::write(root.join("a-file.yml"), "x: 1\n").unwrap();
    std::fs::create_dir_all(root.join("empty")).unwrap();
    let list = |named: &str, suite: &Path| {
        analyst()
            .env("CUBE_CLOUD_AGENTS_CONFIG_PATH", named)
            .args(["check", "--list"])
            .arg(suite)
            .output()
            .unwrap()
    };
    for named in ["missing/folder", "a-file.yml", "/", "empty"] {
        let output = list(named, &root);
        exits(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("CUBE_CLOUD_AGENTS_CONFIG_PATH={named}: "))
                && stderr.contains("is not Cube's agents folder"),
            "{named}: {stderr}"
        );
        assert!(output.stdout.is_empty(), "{named}: nothing listed");
    }
    // The agents folder itself, named as the suite, needs no variable.
    exits(&list("missing/folder", &root.join("agents")), 0);
}

#[test]
fn frontmatter_values_yaml_types_are_read_as_text_as_cube_reads_them() {
    let root = repository(&[
        (
            "certified_queries/year.md",
            "---\nname: 2024\nuser_request: yes\n---\nSELECT 1\n",
        ),
        (
            "certified_queries/flat.yml",
            "certified_queries:\n  - name: 2025\n    user_request: no\n    sql_query: SELECT 2\n",
        ),
    ]);
    let cases = listed(&["--certified", root.to_str().unwrap()], &[]);
    let names: Vec<(&str, &str)> = cases
        .iter()
        .map(|case| (case["name"].as_str().unwrap(), case["question"].as_str().unwrap()))
        .collect();
    assert_eq!(names, [("certified/2025", "no"), ("certified/2024", "yes")]);
    // A real error on the frontmatter's first line is the file's second.
    std::fs::write(
        root.join("agents/certified_queries/broken.md"),
        "---\nname: [unclosed\nuser_request: x\n---\nSELECT 1\n",
    )
    .unwrap();
    let output = analyst()
        .args(["check", "--list", "--certified"])
        .arg(&*root)
        .output()
        .unwrap();
    exits(&output, 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: error: [..]:2: not valid eval YAML: expected string scalar at line 1, column 7

"#]],
    );
}

#[test]
fn errors_name_the_line_counted_from_the_files_first() {
    let cases: [(&str, &str, &str); 4] = [
        // YAML broken on the frontmatter's 2nd line: the file's 3rd.
        (
            "certified_queries/broken.md",
            "---\nuser_request: Revenue?\nname: [unclosed\n---\nSELECT 1\n",
            "certified_queries/broken.md:3: not valid eval YAML",
        ),
        (
            "certified_queries/no-sql.md",
            "---\nuser_request: Revenue?\n---\n<!-- only a note -->\n",
            "certified_queries/no-sql.md:4: certified query \"no-sql\" has no SQL",
        ),
        (
            "spaces/sales/sales.yml",
            "spaces:\n  - name: sales\n    certified_queries:\n      - name: a\n        sql_query: SELECT 1\n",
            "spaces/sales/sales.yml:4: certified query \"a\" has no user_request",
        ),
        (
            "eval_questions/bad.yml",
            "eval_questions:\n  - name: a\n    question: \"Caf\u{e9}\"\n    sql: SELECT 1\n",
            "eval_questions/bad.yml: not UTF-8 (byte 46)",
        ),
    ];
    for (path, text, message) in cases {
        let mut bytes = text.as_bytes().to_vec();
        if path.ends_with("bad.yml") {
            // Latin-1, as an old editor saves it: é is the byte 0xE9.
            bytes = text.replace('\u{e9}', "\u{1}").into_bytes();
            let at = bytes.iter().position(|&b| b == 1).unwrap();
            bytes[at] = 0xe9;
        }
        let root = repository(&[(
            "eval_questions.yml",
            "eval_questions:\n  - name: q\n    question: Q?\n    sql: SELECT 1\n",
        )]);
        std::fs::create_dir_all(root.join("agents").join(path).parent().unwrap()).unwrap();
        std::fs::write(root.join("agents").join(path), bytes).unwrap();
        let output = analyst().args(["check", "--list"]).arg(&*root).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        exits(&output, 2);
        assert!(stderr.contains(message), "{path}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{path}: one line: {stderr}");
    }
}

/// A Cube suite of one question whose ground truth is `truth` (SQL on
/// the emulator's warehouse), answered by the agent with `answer`.
fn one_question(truth: &str, answer: Answer) -> (Emulator, Scratch) {
    let dir = Scratch::new();
    let text = format!(
        "eval_questions:\n  - name: q\n    question: The question?\n    sql: {}\n",
        serde_json::to_string(truth).unwrap()
    );
    dir.write("eval_questions.yml", text);
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = vec![("The question".to_string(), answer)]);
    (emu, dir)
}

/// The verdict, score reason and analysis of the one question of `dir`.
fn verdict_of(emu: &Emulator, dir: &Path) -> (String, Option<String>, Option<String>) {
    let (code, stdout, stderr) = check(emu, dir, &["-o", "json"]);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|err| panic!("{err}: {stderr}"));
    let case = case(&report, "q");
    let verdict = case["verdict"].as_str().unwrap().to_string();
    assert_eq!(code, Some(if verdict == "pass" { 0 } else { 9 }), "{stderr}");
    (
        verdict,
        case["scoreReason"].as_str().map(str::to_string),
        case["analysis"].as_str().map(str::to_string),
    )
}

#[test]
fn an_agent_result_equal_to_the_ground_truth_passes_whatever_its_columns_hold() {
    // A month and its rank both hold 1 to 12; origin and destination both
    // hold the same cities; nothing else tells the rows apart.
    let months: Vec<String> = (1..=12).map(|m| format!("({m}, {})", (m * 5) % 12 + 1)).collect();
    let truth = format!(
        "SELECT column1 AS month, column2 AS rank FROM (VALUES {})",
        months.join(", ")
    );
    let swapped = format!("SELECT column2 AS r, column1 AS m FROM (VALUES {})", months.join(", "));
    for answer in [truth.clone(), swapped] {
        let (emu, dir) = one_question(&truth, Answer::Sql(answer.clone()));
        assert_eq!(verdict_of(&emu, &dir).0, "pass", "{answer}");
    }
    let trips = "SELECT column1 AS origin, column2 AS destination, column3 AS trips FROM (VALUES ('Oslo', 'Rome', 3), ('Rome', 'Oslo', 5), ('Oslo', 'Paris', 2), ('Paris', 'Rome', 1))";
    let reordered = "SELECT column3, column2, column1, 'extra' FROM (VALUES ('Oslo', 'Rome', 3), ('Rome', 'Oslo', 5), ('Oslo', 'Paris', 2), ('Paris', 'Rome', 1))";
    let (emu, dir) = one_question(trips, Answer::Sql(reordered.to_string()));
    assert_eq!(verdict_of(&emu, &dir).0, "pass");
    // A trip reversed is a difference the search must still find.
    let wrong =
        "SELECT * FROM (VALUES ('Oslo', 'Rome', 3), ('Oslo', 'Rome', 5), ('Oslo', 'Paris', 2), ('Paris', 'Rome', 1))";
    let (emu, dir) = one_question(trips, Answer::Sql(wrong.to_string()));
    let (verdict, reason, analysis) = verdict_of(&emu, &dir);
    assert_eq!(
        (verdict.as_str(), reason.as_deref()),
        ("fail", Some("Value mismatch")),
        "{analysis:?}"
    );
}

#[test]
fn values_are_graded_as_they_were_sent() {
    let given = |value: Value| {
        Answer::Result(warehouse::given_call(
            "SELECT v FROM t",
            &[("v", "Double")],
            vec![vec![value]],
        ))
    };
    let number = |text: &str| serde_json::from_str::<Value>(text).unwrap();
    let cases: [(&str, Value, &str); 7] = [
        // A number no double holds is not NULL, and equals its digits.
        ("SELECT NULL AS v", number("1e400"), "fail"),
        ("SELECT '1e400' AS v", number("1e400"), "pass"),
        ("SELECT '1E+400' AS v", json_string("1e400"), "pass"),
        // Forty digits, to four significant figures.
        (
            "SELECT '1234567890123456789012345678901234567890' AS v",
            number("1.2345e39"),
            "pass",
        ),
        (
            "SELECT '1234567890123456789012345678901234567890' AS v",
            number("1.2355e39"),
            "fail",
        ),
        // Zero has no sign; NaN sent as a string is text, not NULL.
        ("SELECT '0' AS v", number("-0"), "pass"),
        ("SELECT NULL AS v", json_string("NaN"), "fail"),
    ];
    for (truth, value, verdict) in cases {
        let (emu, dir) = one_question(truth, given(value.clone()));
        assert_eq!(verdict_of(&emu, &dir).0, verdict, "{truth} vs {value}");
    }
}

fn json_string(text: &str) -> Value {
    Value::String(text.to_string())
}

#[test]
fn the_timeout_is_the_whole_commands_also_while_the_ground_truth_runs() {
    let (emu, dir) = one_question(
        "SELECT region, COUNT(*) FROM orders GROUP BY region",
        Answer::Sql("SELECT region, COUNT(*) FROM orders GROUP BY region".to_string()),
    );
    // The ground truth's query keeps answering "Continue wait".
    emu.continue_waits(1000);
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = check(&emu, &dir, &["-o", "json", "--timeout", "2s"]);
    assert_eq!(code, Some(124), "{stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert!(!stderr.contains("Ground truth query failed"), "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
START q
analyst: error: --timeout 2s expired while the query was still running; the run stopped: 1 of 1 runs finished

"#]],
    );
    assert!(stdout.is_empty(), "no report of a run that did not finish: {stdout}");
}

#[test]
fn refused_data_api_credentials_stop_the_run_at_once() {
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = answers());
    let output = emu
        .analyst()
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", "not-the-deployments-secret")
        .args(["check", "--jobs", "1", "-o", "json"])
        .arg(examples())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 3);
    assert_eq!(crate::check::failure_lines(&stderr), 1, "one line: {stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
START orders_by_region
analyst: error: the service answered 403 Forbidden: Invalid token; check the data query API's credential (from ANALYST_DATA_SECRET, which signed the token); the run stopped: 1 of 10 runs finished

"#]],
    );
    assert_eq!(emu.requests_on(Route::Chat).len(), 1, "no further case started");
    assert!(output.stdout.is_empty());
}

#[test]
fn a_failed_question_shows_both_results_side_by_side() {
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = answers());
    let (_, stdout, stderr) = check(&emu, &examples(), &["-o", "json", "--certified"]);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|err| panic!("{err}: {stderr}"));
    let comparison = |name: &str| case(&report, name)["runs"][0]["comparison"].clone();

    // A value mismatch: the rows pair by the column the grader matched
    // (status), and the count that differs is marked in each.
    let values = comparison("orders_by_status");
    assert_eq!(
        values["columns"],
        json!([
            {"groundTruth": "status", "agent": 0, "matched": true},
            {"groundTruth": "orders", "agent": 1, "matched": false},
        ])
    );
    let rows = values["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for row in rows {
        assert_eq!(row["groundTruth"][0], row["agent"][0], "{row}");
        assert_eq!(row["differs"], json!([1]), "{row}");
    }
    assert_eq!(rows[0]["groundTruth"], json!(["completed", "7500"]));
    assert_eq!(rows[0]["agent"], json!(["completed", "7575"]));

    // A row missing: every other row pairs with its equal, the missing one
    // with nothing; the counts say how many rows each side has.
    let missing = comparison("regions_without_anz");
    assert_eq!(
        (&missing["groundTruthRows"], &missing["agentRows"]),
        (&json!(5), &json!(4))
    );
    let rows = missing["rows"].as_array().unwrap();
    let alone: Vec<&Value> = rows.iter().filter(|row| row.get("agent").is_none()).collect();
    assert_eq!(alone.len(), 1);
    assert_eq!(alone[0]["groundTruth"][0], "ANZ");
    assert!(rows
        .iter()
        .filter(|row| row.get("agent").is_some())
        .all(|row| row.get("differs").is_none() && row["agent"] == row["groundTruth"]));

    // A missing column: the one there is compared by its place.
    let narrow = comparison("order_count_with_region");
    assert_eq!(narrow["agentColumns"].as_array().unwrap().len(), 1);
    assert_eq!(narrow["columns"].as_array().unwrap().len(), 2);

    // Passes, reviews and errors carry none.
    for name in ["orders_by_region", "biggest_order", "refunds"] {
        assert_eq!(comparison(name), Value::Null, "{name}");
    }

    // The page shows both tables, the differing cells marked.
    let page = check_page(&stdout);
    assert!(
        page.contains("<caption>The ground truth: 4 of 4 rows</caption>"),
        "{page}"
    );
    assert!(
        page.contains("<caption>The ground truth: 5 of 5 rows</caption>"),
        "{page}"
    );
    assert!(page.contains("<caption>The agent: 4 of 4 rows</caption>"), "{page}");
    assert!(page.contains("<td class=\"differs\"><mark>7575</mark></td>"), "{page}");
    assert!(page.contains("<td colspan=\"2\">no row pairs with it</td>"), "{page}");
}
