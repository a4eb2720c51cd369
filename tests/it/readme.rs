//! Every example of the README runs: each `sh` block in order, in one
//! scratch folder, against the emulator (whose agent answers with SQL that
//! really runs on the warehouse); the TOML blocks are the shipped example
//! suite and a config that loads. `export ANALYST_…` lines are the README's
//! placeholders: the emulator's values stand in for them. The two `cargo`
//! commands are run by `.ci/run`, which this test checks too.

use std::path::Path;

use crate::support::*;

/// The agent's SQL: 250 orders, of which the stream carries 100.
const AGENT_SQL: &str =
    "SELECT id, created_at AS day, region, amount AS revenue FROM orders WHERE id <= 250 ORDER BY id LIMIT 250";

pub(crate) fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// The pages of the guide in `docs/`, in the order its contents page
/// (`docs/README.md`) lists them.
pub(crate) fn guide_pages() -> Vec<String> {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let contents = std::fs::read_to_string(docs.join("README.md")).unwrap();
    let mut pages: Vec<String> = Vec::new();
    for event in pulldown_cmark::Parser::new(&contents) {
        if let pulldown_cmark::Event::Start(pulldown_cmark::Tag::Link { dest_url, .. }) = event {
            let page = dest_url.split('#').next().unwrap_or_default().to_string();
            if page.ends_with(".md") && !page.starts_with("..") && !pages.contains(&page) {
                pages.push(page);
            }
        }
    }
    assert!(pages.len() >= 10, "the guide's pages: {pages:?}");
    pages
}

/// The manual: the README, then every page of the guide in order (their
/// examples run in that order, in one folder).
pub(crate) fn manual() -> String {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut text = readme();
    for page in guide_pages() {
        text.push_str("\n\n");
        text.push_str(&std::fs::read_to_string(docs.join(&page)).unwrap());
    }
    text
}

/// The fenced code blocks of `language`, in order, as a Markdown reader
/// (pulldown-cmark) sees them: fences of any length, inside lists too.
pub(crate) fn blocks(text: &str, language: &str) -> Vec<String> {
    use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for event in Parser::new(text) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) if info.trim() == language => {
                current = Some(String::new());
            }
            Event::Text(code) => {
                if let Some(block) = &mut current {
                    block.push_str(&code);
                }
            }
            Event::End(TagEnd::CodeBlock) => found.extend(current.take()),
            _ => {}
        }
    }
    found
}

fn scratch() -> Scratch {
    let dir = Scratch::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for example in [
        "examples/smoke.toml",
        "examples/evals.toml",
        "examples/agents/eval_questions.yml",
        "examples/agents/eval_questions/sales.yml",
        "examples/agents/certified_queries/revenue_by_region.md",
        "examples/agents/config.yml",
    ] {
        dir.write(example, std::fs::read(root.join(example)).unwrap());
    }
    // mail(1) stands in for the real one: it reads the message and succeeds.
    let mail = dir.write("stubs/mail", "#!/bin/sh\ncat > /dev/null\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&mail, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// Runs `script` with bash (`-e -o pipefail`) in `dir`, `analyst` and the
/// stubs on the PATH, the service and the data query API the emulator's.
fn bash(emu: &Emulator, dir: &Path, script: &str) -> std::process::Output {
    let binary = assert_cmd::cargo::cargo_bin("analyst");
    let path = format!(
        "{}:{}:{}",
        binary.parent().unwrap().display(),
        dir.join("stubs").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::process::Command::new("bash")
        .args(["--norc", "-e", "-o", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", &path)
        .env("ANALYST_CHAT_URL", emu.chat_url())
        .env("ANALYST_API_KEY", API_KEY)
        .env("ANALYST_EXTERNAL_ID", "ci-bot")
        .env("ANALYST_BASE_URL", emu.base())
        .env("ANALYST_DEPLOYMENT_ID", "42")
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .env("XDG_CONFIG_HOME", no_config_home())
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// Runs `script` as [`bash`] does, and fails the test unless it succeeds.
fn succeeds(emu: &Emulator, dir: &Path, script: &str) {
    let output = bash(emu, dir, script);
    assert!(
        output.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs a workflow step's `script` as GitHub Actions would, its step
/// summary going to `summary`; it must succeed.
fn run_step(emu: &Emulator, dir: &Path, script: &str, summary: &Path) {
    succeeds(
        emu,
        dir,
        &format!("export GITHUB_STEP_SUMMARY={}\n{script}", summary.display()),
    );
}

#[test]
fn every_shell_example_runs_against_the_emulator() {
    let emu = Emulator::start();
    emu.agent(|a| a.warehouse_sql = Some(AGENT_SQL.into()));
    let dir = scratch();
    let examples = blocks(&manual(), "sh");
    assert!(examples.len() >= 12, "found only {} sh examples", examples.len());
    let mut ran = 0;
    for example in &examples {
        if example
            .lines()
            .any(|line| line.trim_start().starts_with("cargo ") || line.trim_start().starts_with("scripts/test"))
        {
            continue;
        }
        let script: String = example
            .lines()
            .filter(|line| !line.trim_start().starts_with("export ANALYST_"))
            .map(|line| format!("{line}\n"))
            .collect();
        let output = bash(&emu, &dir, &script);
        assert!(
            output.status.success(),
            "this example of the README or the guide failed:\n{example}\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 11, "ran {ran} examples");
    // What the examples made is what they promise.
    let all = std::fs::read_to_string(dir.join("all.csv")).unwrap();
    assert_eq!(
        all,
        warehouse::csv(AGENT_SQL),
        "all.csv holds every row of the agent's query"
    );
    assert!(std::fs::read_to_string(dir.join("orders.svg"))
        .unwrap()
        .starts_with("<svg"));
    assert!(std::fs::read_to_string(dir.join("chart.vl.json"))
        .unwrap()
        .contains("\"values\""));
    assert!(dir.join("exports/revenue.csv").exists() && dir.join("smoke.xml").exists());
}

#[test]
fn the_ci_matrix_in_the_readme_runs_its_shards_and_merges_them() {
    let emu = Emulator::start();
    emu.agent(|a| a.warehouse_sql = Some(AGENT_SQL.into()));
    let dir = scratch();
    let workflow = blocks(&manual(), "yaml")
        .into_iter()
        .find(|block| block.contains("check merge") && block.contains("matrix:"))
        .expect("a workflow with a merge job");
    let commands: Vec<&str> = workflow
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("run: "))
        .filter(|command| command.starts_with("analyst check"))
        .collect();
    let [shard, merge] = commands[..] else {
        panic!("a shard command and a merge command: {commands:?}")
    };
    let shards = workflow
        .lines()
        .find_map(|line| line.trim_start().strip_prefix("shard: ["))
        .expect("the matrix of shards");
    let shards: Vec<&str> = shards.trim_end_matches(']').split(", ").collect();
    assert_eq!(shards, ["1", "2", "3", "4"]);
    for k in &shards {
        succeeds(&emu, &dir, &shard.replace("${{ matrix.shard }}", k));
    }
    succeeds(&emu, &dir, merge);
    let suite = shard.split_whitespace().nth(2).unwrap();
    let whole = bash(&emu, &dir, &format!("analyst check {suite} -o json"));
    let cases = |report: &[u8]| -> Vec<(String, String)> {
        let report: serde_json::Value = serde_json::from_slice(report).unwrap();
        report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|case| (case["name"].to_string(), case["status"].to_string()))
            .collect()
    };
    let merged = std::fs::read(dir.join("evals.json")).unwrap();
    assert_eq!(cases(&merged), cases(&whole.stdout));
    assert!(dir.join("evals.xml").exists());
}

#[test]
fn the_smoke_check_workflow_writes_the_step_summary_and_the_page() {
    let emu = Emulator::start();
    let dir = scratch();
    let steps = blocks(&manual(), "yaml")
        .into_iter()
        .find(|block| block.contains("GITHUB_STEP_SUMMARY") && block.contains("smoke.toml"))
        .expect("the smoke check's steps");
    let steps: serde_json::Value = serde_saphyr::from_str(&steps).unwrap();
    let summary = dir.write("step-summary.md", "");
    let mut ran = 0;
    for step in steps.as_array().unwrap() {
        let Some(script) = step["run"].as_str() else { continue };
        run_step(&emu, &dir, script, &summary);
        ran += 1;
    }
    assert_eq!(ran, 2, "the check and the page");
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(
        summary.contains("## analyst check") && summary.contains("Every case passed."),
        "{summary}"
    );
    let page = std::fs::read_to_string(dir.join("smoke.html")).unwrap();
    assert!(page.contains("revenue by month") && page.contains("<svg"), "{page}");
    assert!(dir.join("smoke.xml").exists() && dir.join("smoke-streams").is_dir());
}

#[test]
fn the_suite_in_the_readme_is_the_shipped_example() {
    let shipped = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/smoke.toml")).unwrap();
    let suites: Vec<String> = blocks(&manual(), "toml")
        .into_iter()
        .filter(|block| block.contains("[[case]]"))
        .collect();
    assert_eq!(suites.first(), Some(&shipped));
}

#[test]
fn the_config_in_the_readme_loads() {
    let config = blocks(&manual(), "toml")
        .into_iter()
        .find(|block| block.contains("[profiles."))
        .expect("a config file in the guide");
    let path = ScratchFile::new("config.toml", config);
    // Each profile's settings are the ones `config list` resolves, each
    // said to come from that profile.
    for (profile, settings) in [
        (
            "prod",
            &[
                "https://ai.us.cubecloud.dev/api/v1/public/acme/agents/7/chat/stream-chat-state",
                "https://acme.cubecloud.dev",
                "https://acme-prod.cubecloudapp.dev/cubejs-api",
                "ci-bot",
            ][..],
        ),
        (
            "staging",
            &[
                "https://ai.eu.cubecloud.dev/api/v1/public/acme/agents/9/chat/stream-chat-state",
                "ana@acme.example",
            ][..],
        ),
    ] {
        let output = analyst()
            .env("ANALYST_CONFIG", &path)
            .env("COLUMNS", "400")
            .args(["--profile", profile, "config", "list"])
            .output()
            .unwrap();
        exits(&output, 0);
        let table = String::from_utf8(output.stdout).unwrap();
        for setting in settings {
            let row = table
                .lines()
                .find(|row| row.contains(setting))
                .unwrap_or_else(|| panic!("{profile}: {setting} in\n{table}"));
            assert!(row.contains(&format!("profile {profile}")), "{row}");
        }
        analyst()
            .env("ANALYST_CONFIG", &path)
            .args([
                "--profile",
                profile,
                "ask",
                "--replay",
                &fixture("revenue-by-month.ndjson"),
            ])
            .assert()
            .success();
    }
}

#[test]
fn ci_runs_the_readme_commands() {
    let commands: Vec<String> = blocks(&readme(), "sh")
        .iter()
        .flat_map(|block| block.lines().map(str::to_string).collect::<Vec<_>>())
        .filter(|line| line.starts_with("cargo ") || line.starts_with("scripts/test"))
        .map(|line| line.split('#').next().unwrap().trim().to_string())
        .collect();
    assert_eq!(commands.len(), 2, "the README names exactly two commands: {commands:?}");
    let ci = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run")).unwrap();
    for command in commands {
        assert!(ci.contains(&command), ".ci/run does not run `{command}`");
    }
}

/// The long flags (`--name`) in `text`, in order of first appearance.
fn long_flags(text: &str) -> Vec<String> {
    let mut flags: Vec<String> = Vec::new();
    for (at, _) in text.match_indices("--") {
        let name: String = text[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-')
            .collect();
        let starts_a_word = at == 0 || !text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '-');
        if starts_a_word && name.starts_with(|c: char| c.is_ascii_lowercase()) && !flags.contains(&name) {
            flags.push(name);
        }
    }
    flags
}

/// The flags `analyst ARGS --help` lists for that command itself (not its
/// global options, `--help` nor `--version`): each long name with its short
/// one, if any.
fn own_flags(args: &[&str]) -> Vec<(String, Option<char>)> {
    let output = analyst().args(args).arg("--help").output().unwrap();
    exits(&output, 0);
    let help = String::from_utf8(output.stdout).unwrap();
    let mut own = Vec::new();
    let mut global = false;
    for line in help.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            global = line == "Global options:";
            continue;
        }
        let spelled = line.trim_start().split("  ").next().unwrap_or_default();
        if global || !spelled.starts_with('-') {
            continue;
        }
        let short = spelled
            .strip_prefix('-')
            .and_then(|rest| rest.chars().next())
            .filter(|c| c.is_ascii_alphabetic());
        for long in long_flags(spelled) {
            if long != "help" && long != "version" {
                own.push((long, short));
            }
        }
    }
    own
}

#[test]
fn every_flag_table_of_the_readme_is_the_commands_help() {
    let manual = manual();
    let global: Vec<String> = own_flags(&[]).into_iter().map(|(long, _)| long).collect();
    // A section: its heading (any level) to the next heading of its level
    // or above, outside code blocks.
    let section_of = |heading: &str| -> String {
        let lines: Vec<&str> = manual.lines().collect();
        let level = |line: &str| line.len() - line.trim_start_matches('#').len();
        let start = lines
            .iter()
            .position(|line| line.trim_start_matches('#').trim() == heading && level(line) > 0)
            .unwrap_or_else(|| panic!("{heading} in the guide"));
        let depth = level(lines[start]);
        let mut fenced = false;
        let mut section = Vec::new();
        for line in &lines[start..] {
            if line.starts_with("```") {
                fenced = !fenced;
            }
            let ends = !fenced && !section.is_empty() && level(line) > 0 && level(line) <= depth && line.contains("# ");
            if ends {
                break;
            }
            section.push(*line);
        }
        section.join("\n")
    };
    // The flags every command that writes data shares are said once, and
    // so are those a command shares with ask (the endpoint, who asks, the
    // connection): in ask's section.
    let ask_heading = "`analyst ask [QUESTION]`";
    let shared = long_flags(&section_of("Every command that writes data"));
    let ask_section = section_of(ask_heading);
    let ask_flags: Vec<String> = own_flags(&["ask"]).into_iter().map(|(long, _)| long).collect();
    for (heading, command) in [
        (ask_heading, &["ask"][..]),
        ("`analyst abort --chat-id ID`", &["abort"][..]),
        ("`analyst session`", &["session"][..]),
        ("`analyst rows`", &["rows"][..]),
        ("`analyst check SUITE.toml`", &["check"][..]),
        ("`analyst history`", &["history", "list"][..]),
    ] {
        let section = section_of(heading);
        let own = own_flags(command);
        let table_flags: Vec<String> = section
            .lines()
            .filter(|line| line.starts_with("| `-"))
            .flat_map(|line| long_flags(line.split(" | ").next().unwrap_or_default()))
            .collect();
        for flag in &table_flags {
            assert!(
                own.iter().any(|(long, _)| long == flag) || global.contains(flag),
                "the guide's {heading}: --{flag} is not a flag of analyst {}",
                command.join(" ")
            );
        }
        let said = long_flags(&section);
        for (flag, short) in &own {
            let in_ask = command != ["ask"] && ask_flags.contains(flag) && long_flags(&ask_section).contains(flag);
            let by_short = short.is_some_and(|short| section.contains(&format!("`-{short} ")));
            assert!(
                said.contains(flag) || shared.contains(flag) || in_ask || by_short,
                "analyst {} --{flag} is not in the guide's {heading}",
                command.join(" ")
            );
        }
    }
}

#[test]
fn the_nightly_budget_and_pull_request_regrade_workflow_runs_and_the_regrade_asks_nothing() {
    let emu = Emulator::start();
    emu.agent(|a| a.warehouse_sql = Some(AGENT_SQL.into()));
    let dir = scratch();
    let workflow = blocks(&manual(), "yaml")
        .into_iter()
        .find(|block| block.contains("--regrade") && block.contains("--budget-tokens"))
        .expect("the workflow of the nightly budget and the re-grade");
    let workflow: serde_json::Value = serde_saphyr::from_str(&workflow).unwrap();
    let summary = dir.write("step-summary.md", "");
    let mut asked = Vec::new();
    for job in ["nightly", "regrade"] {
        for step in workflow["jobs"][job]["steps"].as_array().unwrap() {
            let Some(script) = step["run"].as_str() else { continue };
            run_step(&emu, &dir, script, &summary);
        }
        asked.push(emu.requests_on(Route::Chat).len());
    }
    assert!(asked[0] > 0, "the nightly asks");
    assert_eq!(asked[1], asked[0], "the re-grade asks no turn");
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(summary.contains("Budget\\: spent"), "{summary}");
    assert!(summary.contains("no turn was asked"), "{summary}");
    assert!(dir.join("nightly.xml").exists() && dir.join("regrade.xml").exists());
}
