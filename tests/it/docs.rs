//! The README and the guide in `docs/` hold: the README is short and says
//! on its first screen what `analyst` is for, how to install it and where
//! the URL and the key come from; its tour prints what it shows (every
//! `console` block is run and its output compared whole); every link of
//! the README, the guide and CONTRIBUTING leads to a file that exists and,
//! with an anchor, to a heading of it. (The examples themselves run in
//! `readme.rs`.)

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::readme::{guide_pages, readme};
use crate::support::*;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every Markdown file a reader is sent to: the README, CONTRIBUTING and
/// each page of the guide (its contents page too).
fn documents() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md"), root().join("CONTRIBUTING.md")];
    files.push(root().join("docs/README.md"));
    files.extend(guide_pages().iter().map(|page| root().join("docs").join(page)));
    files
}

#[test]
fn the_readme_is_short_and_its_first_screen_says_what_how_and_where() {
    let readme = readme();
    let lines = readme.lines().count();
    assert!(lines <= 300, "the README has {lines} lines");
    let first_screen: String = readme.lines().take(45).collect::<Vec<_>>().join("\n");
    for said in [
        "Cube",
        "AI agents",
        "pipx install analyst-cli",
        "install.sh",
        "cargo install",
        "Chat API URL",
        "Admin → API Keys",
    ] {
        assert!(first_screen.contains(said), "{said:?} on the README's first screen");
    }
}

/// Each `$ command` of the `console` blocks of `text`, with the output
/// under it.
fn console_commands(text: &str) -> Vec<(String, String)> {
    let mut commands: Vec<(String, String)> = Vec::new();
    for block in crate::readme::blocks(text, "console") {
        for line in block.lines() {
            match line.strip_prefix("$ ") {
                Some(command) => commands.push((command.to_string(), String::new())),
                None => {
                    let (_, output) = commands.last_mut().expect("a block starts with a command");
                    output.push_str(line);
                    output.push('\n');
                }
            }
        }
    }
    commands
}

#[test]
fn the_tour_prints_what_the_readme_shows() {
    let commands = console_commands(&readme());
    assert!(commands.len() >= 3, "{commands:?}");
    let binary = assert_cmd::cargo::cargo_bin("analyst");
    let path = format!(
        "{}:{}",
        binary.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (command, shown) in commands {
        let output = std::process::Command::new("bash")
            .args(["--norc", "-e", "-o", "pipefail", "-c", &command])
            .current_dir(root())
            .env("PATH", &path)
            .env("XDG_CONFIG_HOME", no_config_home())
            .env("ANALYST_HISTORY", "0")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_whole(String::from_utf8(output.stdout).unwrap(), shown);
    }
}

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_`
/// dropped, spaces as `-`; a repeated one gets `-1`, `-2`…
fn anchors(markdown: &str) -> Vec<String> {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut anchors = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut heading: Option<String> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(text) | Event::Code(text) => {
                if let Some(heading) = &mut heading {
                    heading.push_str(&text);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let text = heading.take().unwrap_or_default();
                let slug: String = text
                    .to_lowercase()
                    .chars()
                    .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
                    .map(|c| if c == ' ' { '-' } else { c })
                    .collect();
                let count = seen.entry(slug.clone()).or_insert(0);
                anchors.push(match *count {
                    0 => slug.clone(),
                    n => format!("{slug}-{n}"),
                });
                *count += 1;
            }
            _ => {}
        }
    }
    anchors
}

#[test]
fn every_link_of_the_readme_the_guide_and_contributing_leads_somewhere() {
    use pulldown_cmark::{Event, Parser, Tag};
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        for event in Parser::new(&text) {
            let target = match event {
                Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => dest_url.to_string(),
                _ => continue,
            };
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let linked = match path {
                "" => file.clone(),
                path => file.parent().unwrap().join(path),
            };
            let shown = format!("{}: {target}", file.strip_prefix(root()).unwrap().display());
            if !linked.exists() {
                broken.push(format!("{shown} (no such file)"));
                continue;
            }
            if !anchor.is_empty() {
                let markdown = std::fs::read_to_string(&linked).unwrap_or_default();
                if !anchors(&markdown).iter().any(|found| found == anchor) {
                    broken.push(format!("{shown} (no such heading)"));
                }
            }
        }
    }
    assert!(checked >= 30, "only {checked} links");
    assert!(broken.is_empty(), "links that lead nowhere:\n{}", broken.join("\n"));
}
