//! The man pages, generated from the clap definitions so they never
//! disagree with `--help`: `analyst(1)` and one page per command
//! (`analyst-ask(1)`, `analyst-check-merge(1)`, …), each with NAME,
//! SYNOPSIS, DESCRIPTION, OPTIONS, its commands, EXAMPLES and NOTES (the
//! `--help` epilogue: commands as written, prose filled to the reader's
//! width), ENVIRONMENT, EXIT STATUS, FILES (the config file and every key)
//! and SEE ALSO.

use std::io::Write;

use anyhow::Result;

use crate::cli::{CONFIG_KEYS, ENVIRONMENT, EXIT_STATUS};

/// Examples on `analyst(1)`, whose epilogue is the environment and exit
/// codes (sections of their own there).
const EXAMPLES: &str = "\
  analyst ask 'What was our revenue by month in 2024?'
  analyst ask -o csv --all-rows 'Every order of 2023' --output-file all.csv
  analyst ask -o json 'Orders by day?' --jq '.queries[-1].rows[]'
  analyst ask -o raw 'Orders by customer in 2024' | analyst rows > all.csv
  analyst check smoke.toml --jobs 4 --junit smoke.xml
  analyst doctor";

/// One page: its file name (`analyst-check-merge`) and its roff.
pub struct Page {
    /// The page's name, which is also its file name without `.1`.
    pub name: String,
    /// The page in roff.
    pub roff: Vec<u8>,
}

/// Every page: `analyst(1)` first, then each command's, depth first.
pub fn pages() -> Result<Vec<Page>> {
    let root = crate::cli::command();
    let names = page_names(&root, "analyst");
    let mut pages = Vec::new();
    collect(&root, "analyst", &names, &mut pages)?;
    Ok(pages)
}

/// The names of every page under `command` (named `name`).
fn page_names(command: &clap::Command, name: &str) -> Vec<String> {
    let mut names = vec![name.to_string()];
    for sub in visible_subcommands(command) {
        names.extend(page_names(sub, &format!("{name}-{}", sub.get_name())));
    }
    names
}

fn visible_subcommands(command: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    command
        .get_subcommands()
        .filter(|sub| sub.get_name() != "help" && !sub.is_hide_set())
}

fn collect(command: &clap::Command, name: &str, names: &[String], pages: &mut Vec<Page>) -> Result<()> {
    let mut roff = Vec::new();
    render(command, name, names, &mut roff)?;
    pages.push(Page {
        name: name.to_string(),
        roff,
    });
    for sub in visible_subcommands(command) {
        collect(sub, &format!("{name}-{}", sub.get_name()), names, pages)?;
    }
    Ok(())
}

/// Writes the page of `command` (named `name`, e.g. `analyst-ask`).
fn render(command: &clap::Command, name: &str, names: &[String], out: &mut impl Write) -> Result<()> {
    let bin_name = name.replace('-', " ");
    let command = command
        .clone()
        .display_name(name.to_string())
        .bin_name(bin_name.clone())
        .disable_help_subcommand(true);
    let page = clap_mangen::Man::new(command.clone())
        .title(name.to_uppercase())
        .section("1")
        .source(format!("analyst {}", env!("CARGO_PKG_VERSION")))
        .manual("User Commands");
    page.render_title(out)?;
    page.render_name_section(out)?;
    page.render_synopsis_section(out)?;
    page.render_description_section(out)?;
    page.render_options_section(out)?;
    if visible_subcommands(&command).next().is_some() {
        page.render_subcommands_section(out)?;
    }
    let epilogue = match name {
        "analyst" => format!("Examples:\n{EXAMPLES}"),
        _ => command
            .get_after_long_help()
            .or(command.get_after_help())
            .map(ToString::to_string)
            .unwrap_or_default(),
    };
    epilogue_sections(&epilogue, out)?;
    writeln!(out, ".SH ENVIRONMENT")?;
    for (variable, meaning) in ENVIRONMENT {
        match variable {
            "" => writeln!(
                out,
                ".PP\n{}",
                escape(&format!("{}{}.", &meaning[..1].to_uppercase(), &meaning[1..]))
            )?,
            variable => tagged(variable, meaning, out)?,
        }
    }
    writeln!(out, ".SH \"EXIT STATUS\"")?;
    for (code, meaning) in EXIT_STATUS.iter().filter(|(code, _)| !code.is_empty()) {
        tagged(code, meaning, out)?;
    }
    writeln!(out, ".SH FILES")?;
    tagged(
        "$XDG_CONFIG_HOME/analyst/config.toml, ~/.config/analyst/config.toml, %APPDATA%\\analyst\\config.toml (Windows)",
        "The config file (or ANALYST_CONFIG): [profiles.NAME] tables whose keys are below; a flag wins over the environment, which wins over the profile.",
        out,
    )?;
    for (key, meaning) in CONFIG_KEYS {
        tagged(key, meaning, out)?;
    }
    writeln!(out, ".SH \"SEE ALSO\"")?;
    let others: Vec<String> = names
        .iter()
        .filter(|other| *other != name)
        .map(|other| format!("\\fB{other}\\fR(1)"))
        .collect();
    writeln!(out, "{}", others.join(", "))?;
    Ok(())
}

/// The `--help` epilogue as sections: its "Examples:" blocks as EXAMPLES
/// (the heading once, the commands kept as written), the rest as NOTES:
/// prose filled by man to the reader's width, indented lines (a suite
/// file, a command) kept as written.
fn epilogue_sections(epilogue: &str, out: &mut impl Write) -> Result<()> {
    let (examples, notes): (Vec<&str>, Vec<&str>) = epilogue
        .split("\n\n")
        .partition(|block| block.starts_with("Examples:\n"));
    if !examples.is_empty() {
        writeln!(out, ".SH EXAMPLES")?;
        for block in examples {
            paragraphs(block.trim_start_matches("Examples:\n"), out)?;
        }
    }
    if !notes.is_empty() {
        writeln!(out, ".SH NOTES")?;
        paragraphs(&notes.join("\n\n"), out)?;
    }
    Ok(())
}

/// `text` in roff: each run of unindented lines one filled paragraph, each
/// run of indented lines a literal block (lines kept, their common two
/// spaces of indent dropped), a blank line a paragraph break.
fn paragraphs(text: &str, out: &mut impl Write) -> Result<()> {
    let mut literal = false;
    let mut start = true;
    for line in text.lines() {
        let indented = line.starts_with("  ");
        if line.trim().is_empty() {
            start = true;
            continue;
        }
        if start || indented != literal {
            if literal {
                writeln!(out, ".fi")?;
            }
            writeln!(out, ".PP")?;
            if indented {
                writeln!(out, ".nf")?;
            }
            literal = indented;
            start = false;
        }
        let line = if indented { &line[2..] } else { line };
        writeln!(out, "{}", escape(line))?;
    }
    if literal {
        writeln!(out, ".fi")?;
    }
    Ok(())
}

/// A tagged paragraph: `term` in bold, `meaning` under it.
fn tagged(term: &str, meaning: &str, out: &mut impl Write) -> Result<()> {
    writeln!(out, ".TP\n\\fB{}\\fR\n{}", escape(term), escape(meaning))?;
    Ok(())
}

/// `text` safe in roff: backslashes doubled, and a line that starts with a
/// control character (`.` or `'`) kept as text.
fn escape(text: &str) -> String {
    let escaped = text.replace('\\', "\\e");
    match escaped.starts_with(['.', '\'']) {
        true => format!("\\&{escaped}"),
        false => escaped,
    }
}
