//! The GitHub Action (`action.yml`), its steps run as GitHub runs a
//! composite step's `shell: bash`: the check step's report, page and job
//! summary; and `comment: true`, whose step drives Debian's real `gh`
//! against a loopback stand-in of GitHub's REST API — one comment per suite
//! and shard on the pull request, created once and edited after.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::ci_reports::{bytes_of, hostile_emulator, HOSTILE};
use crate::support::github::{GitHub, GITHUB_TOKEN};
use crate::support::*;

/// action.yml, read.
fn action() -> Value {
    let action = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    serde_saphyr::from_str(&action).unwrap()
}

/// The shell of the Action's step `id`, as action.yml has it.
fn action_step(id: &str) -> String {
    let action = action();
    let steps = action["runs"]["steps"].as_array().unwrap();
    let step = steps
        .iter()
        .find(|step| step["id"] == id)
        .unwrap_or_else(|| panic!("a step {id}"));
    step["run"].as_str().unwrap().to_string()
}

/// A job's runner: its temporary folder, and what the steps run so far
/// wrote to `$GITHUB_OUTPUT`.
struct Runner {
    temp: Scratch,
    summary: PathBuf,
}

impl Runner {
    fn new() -> Runner {
        let temp = Scratch::new();
        let summary = temp.write("step-summary.md", "");
        Runner { temp, summary }
    }

    /// Runs the Action's step `id` as GitHub would, in `command` (which
    /// has the step's `env:`), with the job's own variables; its outputs
    /// are the second value.
    fn step(&self, id: &str, mut command: std::process::Command) -> (Output, Vec<(String, String)>) {
        let outputs = self.temp.write("outputs", "");
        let bin = assert_cmd::cargo::cargo_bin("analyst");
        let path = format!("{}:{}", bin.parent().unwrap().display(), std::env::var("PATH").unwrap());
        let output = command
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &action_step(id)])
            .env("PATH", path)
            .env("RUNNER_TEMP", &*self.temp)
            .env("GITHUB_STEP_SUMMARY", &self.summary)
            .env("GITHUB_OUTPUT", &outputs)
            .env("GITHUB_SERVER_URL", "https://github.com")
            .env("GITHUB_REPOSITORY", "acme/agents")
            .env("GITHUB_RUN_ID", "4242")
            .output()
            .unwrap();
        let outputs = std::fs::read_to_string(&outputs).unwrap();
        let outputs = outputs
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        (output, outputs)
    }
}

/// The value of output `name`.
fn output_of(outputs: &[(String, String)], name: &str) -> String {
    outputs
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.clone())
        .unwrap_or_else(|| panic!("{name} in {outputs:?}"))
}

#[test]
fn the_github_action_puts_the_summary_on_the_job_page_and_renders_the_page() {
    let emu = hostile_emulator();
    let suite = ScratchFile::new("smoke.toml", HOSTILE);
    for (write_summary, summarised) in [("true", true), ("false", false)] {
        let runner = Runner::new();
        let mut check = emu.command_for("bash");
        check
            .env("SUITE", &*suite)
            .env("SHARD", "")
            .env("ARGS", "--jobs 2")
            .env("WRITE_SUMMARY", write_summary);
        let (output, outputs) = runner.step("check", check);
        exits(&output, 9);
        let written = std::fs::read_to_string(&runner.summary).unwrap();
        assert_eq!(written.contains("## analyst check"), summarised, "{written}");
        assert_eq!(output_of(&outputs, "exit-code"), "9");
        let report: Value = serde_json::from_slice(&bytes_of(Path::new(&output_of(&outputs, "report")))).unwrap();
        assert_eq!(report["failed"], 2);
        let page = String::from_utf8(bytes_of(Path::new(&output_of(&outputs, "page")))).unwrap();
        assert!(
            page.starts_with("<!DOCTYPE html>") && page.contains("never | matches"),
            "{page}"
        );
        let summary = std::fs::read_to_string(output_of(&outputs, "summary")).unwrap();
        assert!(summary.starts_with("## analyst check"), "{summary}");
    }
}

/// The pull request the comment tests comment on.
const PULL_REQUEST: u64 = 17;

/// One run of the Action on a pull request: the check step of `suite`
/// (with `args`, and `api_key`), then the comment step as the workflow's
/// `comment: true` runs it, with Debian's `gh` sent to `github`. The
/// comment step's output is returned.
fn run_on_pull_request(emu: &Emulator, github: &GitHub, suite: &Path, args: &str, api_key: &str) -> Output {
    let runner = Runner::new();
    let mut check = emu.command_for("bash");
    check
        .env("ANALYST_API_KEY", api_key)
        .env("SUITE", suite)
        .env("SHARD", "")
        .env("ARGS", args)
        .env("WRITE_SUMMARY", "true");
    let (_, outputs) = runner.step("check", check);
    let gh_config = Scratch::new();
    let mut comment = clean_command("bash");
    for proxy in [
        "http_proxy",
        "https_proxy",
        "HTTPS_PROXY",
        "NO_PROXY",
        "no_proxy",
        "ALL_PROXY",
    ] {
        comment.env_remove(proxy);
    }
    comment
        .env("GH_HOST", "github.localhost")
        .env("HTTP_PROXY", github.proxy())
        .env("GH_CONFIG_DIR", &*gh_config)
        .env("GH_NO_UPDATE_NOTIFIER", "1")
        .env("GH_TOKEN", GITHUB_TOKEN)
        .env("EVENT", "pull_request")
        .env("PULL_REQUEST", PULL_REQUEST.to_string())
        .env("SUITE", suite)
        .env("SHARD", "")
        .env(
            "SUMMARY",
            outputs
                .iter()
                .find(|(k, _)| k == "summary")
                .map(|(_, v)| v.as_str())
                .unwrap_or(""),
        )
        .env("CODE", output_of(&outputs, "exit-code"));
    let (output, _) = runner.step("comment", comment);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!said.contains(GITHUB_TOKEN), "{said}");
    exits(&output, 0);
    output
}

/// The comments the Action wrote (not the reviewers').
fn ours(github: &GitHub) -> Vec<Value> {
    github
        .comments()
        .into_iter()
        .filter(|comment| comment["user"]["login"] == "github-actions[bot]")
        .collect()
}

#[test]
fn the_github_action_comments_once_on_a_pull_request_and_edits_that_comment_on_later_runs() {
    let emu = hostile_emulator();
    let suite = ScratchFile::new("smoke.toml", HOSTILE);
    // More comments than one page holds: the marker is looked for on every
    // page, or the second run would comment again.
    let github = GitHub::start(PULL_REQUEST, 130);

    run_on_pull_request(&emu, &github, &suite, "--jobs 2", API_KEY);
    let first = ours(&github);
    assert_eq!(first.len(), 1, "{first:?}");
    let body = first[0]["body"].as_str().unwrap();
    assert!(body.starts_with("<!-- analyst check: "), "{body}");
    assert!(body.contains("## analyst check") && body.contains("inline"), "{body}");
    let calls = github.calls();
    assert_eq!(
        calls,
        [
            "GET /user",
            "GET /repos/acme/agents/issues/17/comments?per_page=100",
            "GET /repos/acme/agents/issues/17/comments?per_page=100&page=2",
            "POST /repos/acme/agents/issues/17/comments",
        ],
        "{calls:?}"
    );

    // A later run edits the same comment: only the filtered case now.
    run_on_pull_request(&emu, &github, &suite, "--filter never", API_KEY);
    let second = ours(&github);
    assert_eq!(second.len(), 1, "never a second comment: {second:?}");
    assert_eq!(second[0]["id"], first[0]["id"]);
    let edited = second[0]["body"].as_str().unwrap();
    assert!(edited.contains("never") && !edited.contains("inline"), "{edited}");
    let id = first[0]["id"].as_u64().unwrap();
    assert_eq!(
        github.calls().last().unwrap(),
        &format!("PATCH /repos/acme/agents/issues/comments/{id}")
    );

    // A run that wrote no report says so in the same comment, rather than
    // leaving the last results standing.
    run_on_pull_request(&emu, &github, &suite, "", "sk-refused-key");
    let third = ours(&github);
    assert_eq!(third.len(), 1, "{third:?}");
    let refused = third[0]["body"].as_str().unwrap();
    assert!(refused.contains("The latest run wrote no report (exit 3)"), "{refused}");
    assert!(
        refused.contains("https://github.com/acme/agents/actions/runs/4242"),
        "{refused}"
    );

    // Another suite has a comment of its own.
    let other = ScratchFile::new("other.toml", "[[case]]\nname = \"other\"\nquestion = \"Revenue?\"\n");
    run_on_pull_request(&emu, &github, &other, "", API_KEY);
    assert_eq!(ours(&github).len(), 2);
    assert_eq!(github.comments().len(), 132, "the reviewers' comments stay");
}

#[test]
fn the_github_action_edits_only_a_comment_its_own_user_wrote() {
    let emu = hostile_emulator();
    let suite = ScratchFile::new("smoke.toml", HOSTILE);
    let github = GitHub::start(PULL_REQUEST, 2);
    // Someone else's comment that starts with this suite's marker.
    let key: String = format!("{} ", suite.display())
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || "._/-".contains(c) {
            true => c,
            false => '_',
        })
        .collect();
    let forged = format!("<!-- analyst check: {key} -->\nall green, merge it");
    let stranger = github.comment_as("mallory", PULL_REQUEST, &forged);
    run_on_pull_request(&emu, &github, &suite, "--jobs 2", API_KEY);
    let comments = github.comments();
    let theirs = comments.iter().find(|comment| comment["id"] == stranger["id"]).unwrap();
    assert_eq!(theirs["body"], forged, "never edited");
    assert_eq!(ours(&github).len(), 1, "a comment of its own instead");
    assert!(
        github.calls().iter().all(|call| !call.starts_with("PATCH")),
        "{:?}",
        github.calls()
    );
    // The next run edits its own, still not theirs.
    run_on_pull_request(&emu, &github, &suite, "--filter never", API_KEY);
    let id = ours(&github)[0]["id"].as_u64().unwrap();
    assert_eq!(
        github.calls().last().unwrap(),
        &format!("PATCH /repos/acme/agents/issues/comments/{id}")
    );
    assert_eq!(
        github.comments().iter().find(|c| c["id"] == stranger["id"]).unwrap()["body"],
        forged
    );
}

#[test]
fn the_github_action_splits_args_without_globbing_and_each_use_writes_its_own_files() {
    let emu = hostile_emulator();
    let folder = Scratch::new();
    folder.write(".gitignore", "target\n");
    std::fs::create_dir_all(folder.join(".github")).unwrap();
    let suites = [
        folder.write("smoke.toml", HOSTILE),
        folder.write("other.toml", "[[case]]\nname = \"other\"\nquestion = \"Revenue?\"\n"),
    ];
    let runner = Runner::new();
    let mut reports = Vec::new();
    for suite in &suites {
        let mut check = emu.command_for("bash");
        check
            .current_dir(&*folder)
            .env("SUITE", suite)
            .env("SHARD", "")
            .env("ARGS", "--filter .*  --jobs 2")
            .env("WRITE_SUMMARY", "true");
        let (output, outputs) = runner.step("check", check);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("unexpected argument"), "{stderr}");
        reports.push((
            output_of(&outputs, "report"),
            output_of(&outputs, "page"),
            output_of(&outputs, "summary"),
        ));
    }
    let (first, second) = (&reports[0], &reports[1]);
    assert!(
        first.0 != second.0 && first.1 != second.1 && first.2 != second.2,
        "{reports:?}"
    );
    let report = |path: &str| -> Value { serde_json::from_slice(&bytes_of(Path::new(path))).unwrap() };
    // --filter .* selected every case of the first suite, and its report
    // is still its own after the second use.
    assert_eq!(report(&first.0)["cases"].as_array().unwrap().len(), 3);
    assert!(report(&first.0)["suite"].as_str().unwrap().ends_with("smoke.toml"));
    assert!(report(&second.0)["suite"].as_str().unwrap().ends_with("other.toml"));
}

#[test]
fn the_github_action_takes_only_a_version_or_latest() {
    for (version, taken) in [
        ("1.2.3", true),
        ("v1.4.0-rc.1", true),
        ("1.2.3\nevil=1", false),
        ("1.2", false),
        ("../1.2.3", false),
    ] {
        let runner = Runner::new();
        let mut step = clean_command("bash");
        step.env("VERSION", version)
            .env("GH_TOKEN", "unused")
            .env("RUNNER_TOOL_CACHE", &*runner.temp);
        let (output, outputs) = runner.step("version", step);
        assert_eq!(
            output.status.success(),
            taken,
            "{version:?}: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        assert!(
            outputs.iter().all(|(name, _)| name == "version" || name == "dir"),
            "{version:?}: {outputs:?}"
        );
        if !taken {
            assert!(outputs.is_empty(), "{version:?}: {outputs:?}");
            assert!(String::from_utf8_lossy(&output.stdout).contains("::error::analyst: version must be"));
        }
    }
}

#[test]
fn the_github_action_comment_step_warns_and_passes_when_it_may_not_comment() {
    let emu = hostile_emulator();
    let suite = ScratchFile::new("smoke.toml", HOSTILE);
    let github = GitHub::start(PULL_REQUEST, 1);
    github.read_only();
    let output = run_on_pull_request(&emu, &github, &suite, "", API_KEY);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_whole(
        stdout.to_string(),
        str![[r#"
::warning::analyst: cannot comment on the pull request (the job needs pull-requests: write; a pull request from a fork gets a read-only token)

"#]],
    );
    assert!(ours(&github).is_empty());
}

#[test]
fn the_github_action_comment_step_does_nothing_outside_a_pull_request() {
    let runner = Runner::new();
    let mut comment = clean_command("bash");
    comment
        .env("GH_TOKEN", GITHUB_TOKEN)
        .env("EVENT", "push")
        .env("PULL_REQUEST", "")
        .env("SUITE", "agents/")
        .env("SHARD", "1/4")
        .env("SUMMARY", "")
        .env("CODE", "0")
        // Nothing may be reached: no proxy would answer.
        .env("GH_HOST", "github.localhost")
        .env(
            "HTTP_PROXY",
            format!("http://127.0.0.1:{}", crate::support::browser::unused_port()),
        );
    let (output, _) = runner.step("comment", comment);
    exits(&output, 0);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "::notice::analyst: comment: true comments on a pull request only, and this run is a push event\n"
    );
}

#[test]
fn the_github_action_steps_are_shellcheck_clean() {
    let action = action();
    for step in action["runs"]["steps"].as_array().unwrap() {
        let Some(script) = step["run"].as_str() else { continue };
        let checked = ScratchFile::new("step.sh", format!("#!/usr/bin/env bash\n{script}"));
        // SC2153 takes a variable of the step's `env:` (VERSION) for a
        // misspelling of one the script assigns (version).
        let output = std::process::Command::new("shellcheck")
            .args(["--exclude", "SC2153"])
            .arg(&*checked)
            .output()
            .expect("shellcheck (Debian's) runs");
        assert!(
            output.status.success(),
            "{}: {}",
            step["name"],
            String::from_utf8_lossy(&output.stdout)
        );
    }
}

#[test]
fn the_readme_gives_the_action_only_inputs_it_has() {
    let action = action();
    let inputs = action["inputs"].as_object().unwrap();
    let mut given = Vec::new();
    for block in crate::readme::blocks(&crate::readme::manual(), "yaml") {
        let block: Value = serde_saphyr::from_str(&block).unwrap();
        let steps = match &block {
            Value::Array(steps) => steps.clone(),
            Value::Object(job) => job.get("steps").and_then(Value::as_array).cloned().unwrap_or_default(),
            _ => Vec::new(),
        };
        for step in steps.iter().filter(|step| {
            step["uses"]
                .as_str()
                .is_some_and(|uses| uses.starts_with("analyst-cli/analyst@"))
        }) {
            for name in step["with"].as_object().unwrap().keys() {
                assert!(inputs.contains_key(name), "the README gives the Action `{name}`");
                given.push(name.clone());
            }
        }
    }
    assert!(given.contains(&"comment".to_string()), "{given:?}");
}
