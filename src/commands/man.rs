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

/// The date of this version's manual, on every page's title line: set
/// with the version (a date from the clock or the commit would make the
/// committed pages stale at every build).
const MANUAL_DATE: &str = "2026-11-28";

/// Writes the page of `command` (named `name`, e.g. `analyst-ask`), its
/// roff tidied for mandoc's lint (see [`tidy`]).
fn render(command: &clap::Command, name: &str, names: &[String], out: &mut impl Write) -> Result<()> {
    let mut roff = Vec::new();
    render_raw(command, name, names, &mut roff)?;
    out.write_all(tidy(&String::from_utf8_lossy(&roff)).as_bytes())?;
    Ok(())
}

/// The page as clap_mangen and the sections below write it.
fn render_raw(command: &clap::Command, name: &str, names: &[String], out: &mut impl Write) -> Result<()> {
    let bin_name = name.replace('-', " ");
    // What `-h` leaves out, a man page says: every option with its help.
    let hidden: Vec<clap::Id> = command
        .get_arguments()
        .filter(|arg| arg.is_hide_short_help_set())
        .map(|arg| arg.get_id().clone())
        .collect();
    let command = hidden
        .iter()
        .fold(command.clone(), |command, id| {
            command.mut_arg(id, |arg| arg.hide_short_help(false))
        })
        .display_name(name.to_string())
        .bin_name(bin_name.clone())
        .disable_help_subcommand(true);
    let page = clap_mangen::Man::new(command.clone())
        .title(name.to_uppercase())
        .section("1")
        .date(MANUAL_DATE)
        .source(format!("analyst {}", env!("CARGO_PKG_VERSION")))
        .manual("User Commands");
    page.render_title(out)?;
    page.render_name_section(out)?;
    page.render_synopsis_section(out)?;
    page.render_description_section(out)?;
    page.render_options_section(out)?;
    if name != "analyst" {
        global_options(out)?;
    }
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

/// The options every command takes (`analyst(1)` lists them first), on a
/// command's page too, each with its help.
fn global_options(out: &mut impl Write) -> Result<()> {
    writeln!(out, ".SH \"GLOBAL OPTIONS\"")?;
    let root = crate::cli::command();
    for arg in root.get_arguments().filter(|arg| arg.is_global_set()) {
        let mut names = Vec::new();
        if let Some(short) = arg.get_short() {
            names.push(format!("\\fB\\-{short}\\fR"));
        }
        if let Some(long) = arg.get_long() {
            names.push(format!("\\fB\\-\\-{}\\fR", long.replace('-', "\\-")));
        }
        let value = match arg.get_action().takes_values() {
            true => arg
                .get_value_names()
                .and_then(|names| names.first())
                .map(|value| format!(" \\fI<{value}>\\fR"))
                .unwrap_or_default(),
            false => String::new(),
        };
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        writeln!(out, ".TP\n{}{value}\n{}", names.join(", "), escape(&help))?;
    }
    Ok(())
}

/// `roff` as mandoc's lint wants it: no paragraph macro right after a
/// section heading, no blank line or second `.br` beside a `.br` (a blank
/// line is a `.sp` to roff).
fn tidy(roff: &str) -> String {
    let lines: Vec<&str> = roff.lines().collect();
    let mut kept: Vec<&str> = Vec::with_capacity(lines.len());
    for (at, &line) in lines.iter().enumerate() {
        let before = kept.last().copied().unwrap_or_default();
        let after = lines.get(at + 1).copied().unwrap_or_default();
        let skip = match line {
            "" => before == ".br" || after == ".br" || before.is_empty(),
            ".br" => before == ".br" || before.starts_with(".SH") || before == ".TP",
            ".PP" => before.starts_with(".SH"),
            _ => false,
        };
        if !skip {
            kept.push(line);
        }
    }
    kept.join("\n") + "\n"
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
