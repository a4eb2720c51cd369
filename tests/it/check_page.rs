//! The page of a `check` run, built for triage (`cli.md`, "Decisions"):
//! `docs/example-report.json` is a real run of `examples/agents/` against
//! the emulator — a baseline that passed, then a change that regressed
//! three questions, priced, in a CI job — and the README's screenshot
//! `docs/check-report.png` is that report's page as Debian's Chromium
//! draws it. The test that takes it also checks, in the same browser, the
//! triage order, both result tables and that nothing is fetched.
//! `SNAPSHOTS=overwrite` writes both files again.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::cube_evals::answers;
use crate::support::browser::{asked, chromium_dom, chromium_screenshot, serve};
use crate::support::*;

const REGENERATE: &str = "SNAPSHOTS=overwrite cargo test --test it check_page";

fn docs(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").join(file)
}

/// The agent before the change: [`answers`], with the three questions it
/// will get wrong answered right.
fn answers_before() -> Vec<(String, Answer)> {
    let right = |phrase: &str, sql: &str| (phrase.to_string(), Answer::Sql(sql.to_string()));
    let mut before = vec![
        right("each status?", "SELECT status, COUNT(*) FROM orders GROUP BY status"),
        right(
            "every region included",
            "SELECT region, COUNT(*) FROM orders GROUP BY region",
        ),
        right(
            "region and count",
            "SELECT region, COUNT(*) FROM orders GROUP BY region",
        ),
    ];
    before.extend(answers());
    before
}

/// The example run: the baseline, then the run compared with it, in a
/// GitHub Actions job, priced: its JSON report.
fn example_run() -> Value {
    let runner = Scratch::new();
    let config = runner.write(
        "config.toml",
        "[prices.\"m\"]\ninput = 3.0\noutput = 15.0\ncache_read = 0.3\ncache_write = 3.75\n",
    );
    let baseline = runner.write("baseline.json", "");
    let emu = Emulator::start();
    let run = |answers: Vec<(String, Answer)>, args: &[&str]| {
        emu.agent(|agent| agent.answers = answers);
        let mut all = vec!["--certified", "--repeat", "4", "-o", "json", "--no-history"];
        all.extend(args);
        let command_env = [
            ("ANALYST_CONFIG", config.to_str().unwrap()),
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "acme/analytics-agents"),
            ("GITHUB_SHA", "4f2a9c81d7e64b0e9d1c3a5b7f9e1d3c5a7b9d1f"),
            ("GITHUB_REF", "refs/pull/17/merge"),
            ("GITHUB_RUN_ID", "4242"),
        ];
        let (code, stdout, stderr) = check_with(&emu, &all, &command_env);
        assert!(matches!(code, Some(0 | 9)), "{stderr}");
        stdout
    };
    std::fs::write(&baseline, run(answers_before(), &[])).unwrap();
    let report = run(answers(), &["--baseline", baseline.to_str().unwrap()]);
    // As a team would see it: the agent's address, not the emulator's
    // port; the baseline by its name.
    let report = report
        .replace(&emu.base(), "https://acme.cubecloud.dev")
        .replace(&format!("{}/", runner.display()), "");
    serde_json::from_str(&report).unwrap()
}

/// `check` of Cube's example files (`examples/agents`, from the
/// repository's root) against `emu`, with `env` set.
fn check_with(emu: &Emulator, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut command = emu.analyst();
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .arg("check")
        .args(args)
        .arg("examples/agents");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// What a run of the example decides: each case's verdict and tier.
fn decisions(report: &Value) -> Vec<(String, Value, Value)> {
    let tiers = &report["baseline"]["cases"];
    report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let name = case["name"].as_str().unwrap().to_string();
            let tier = tiers
                .as_array()
                .and_then(|tiers| tiers.iter().find(|tier| tier["case"] == name))
                .map_or(Value::Null, |tier| tier["tier"].clone());
            (name, case["verdict"].clone(), tier)
        })
        .collect()
}

#[test]
fn the_example_report_is_a_real_run_of_the_example_files() {
    let fresh = example_run();
    let path = docs("example-report.json");
    if overwriting() {
        std::fs::write(&path, serde_json::to_string_pretty(&fresh).unwrap() + "\n").unwrap();
        return;
    }
    let committed: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(decisions(&committed), decisions(&fresh), "run {REGENERATE}");
    assert_eq!(committed["baseline"]["suite"]["tier"], "possible regression");
    assert!(committed["cost"].as_f64().is_some(), "priced: {}", committed["cost"]);
}

/// The width of the README's screenshot, in CSS pixels.
const SHOT_WIDTH: u32 = 1200;

#[test]
fn the_check_page_in_chromium_puts_regressions_first_and_is_the_readmes_screenshot() {
    let report = std::fs::read_to_string(docs("example-report.json")).unwrap();
    let (port, log) = serve(check_page(&report).into_bytes());
    let url = format!("http://127.0.0.1:{port}/page.html");
    let dom = chromium_dom(&url);
    // Triage order: the three regressions, then what else did not pass,
    // then the passes, collapsed.
    let at = |needle: &str| dom.find(needle).unwrap_or_else(|| panic!("{needle} in {dom}"));
    let sections: Vec<usize> = ["orders_by_status", "biggest_order", "orders_by_region"]
        .iter()
        .map(|name| at(&format!("</span> {name}</h2>")))
        .collect();
    assert!(sections.windows(2).all(|pair| pair[0] < pair[1]), "{sections:?}");
    assert!(at("<details class=\"passed\">") < sections[2]);
    // The accuracy and the tiers before any case.
    assert!(at("accuracy 50% (6/12)") < at("Against the baseline"));
    // `consistent K/N` is said, and said what it means, before any case.
    assert!(at("consistent 6/12") < at("consistent K/N: of the N cases asked more than once"));
    assert!(at("<td>regression</td>") < sections[0]);
    assert!(
        dom.contains("<caption>The ground truth: 4 of 4 rows</caption>"),
        "{dom}"
    );
    assert!(dom.contains("<mark>7575</mark>"), "{dom}");
    assert!(dom.contains("Tested: asked https://acme.cubecloud.dev/"), "{dom}");

    let taken = chromium_screenshot(&url, SHOT_WIDTH, 2100);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        asked(&log),
        ["/page.html", "/page.html"],
        "the page twice, nothing else"
    );
    assert_eq!(png_width(&taken), SHOT_WIDTH);
    if overwriting() {
        std::fs::write(docs("check-report.png"), &taken).unwrap();
        return;
    }
    // The screenshot committed is one this test took (pixels differ with
    // fonts: its size says which page it is).
    let committed = std::fs::read(docs("check-report.png")).unwrap();
    assert_eq!(png_width(&committed), SHOT_WIDTH, "run {REGENERATE}");
}

/// The width of a PNG, from its header.
fn png_width(png: &[u8]) -> u32 {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    u32::from_be_bytes(png[16..20].try_into().unwrap())
}
