//! `analyst completions SHELL|man`: completion scripts and the man page,
//! generated from the clap definitions so they never disagree with `--help`.

use std::io::Write;

use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::{Cli, CompletionTarget};
use crate::output::Out;

/// Runs `analyst completions`.
pub fn run(target: CompletionTarget, out: &mut Out) -> Result<()> {
    write(target, out)?;
    out.flush()?;
    Ok(())
}

/// One man page: the top-level page, then each command's (and each of its
/// subcommands') synopsis, description and options under its own heading.
fn man_page(command: clap::Command, out: &mut impl Write) -> Result<()> {
    clap_mangen::Man::new(command.clone()).render(out)?;
    man_sections(&command, "analyst", out)
}

/// The sections of `command`'s subcommands, named under `prefix`.
fn man_sections(command: &clap::Command, prefix: &str, out: &mut impl Write) -> Result<()> {
    for sub in command.get_subcommands().filter(|sub| sub.get_name() != "help") {
        let name = format!("{prefix} {}", sub.get_name());
        writeln!(out, ".SH \"{}\"", name.to_uppercase())?;
        let page = clap_mangen::Man::new(sub.clone().bin_name(&name));
        page.render_synopsis_section(out)?;
        page.render_description_section(out)?;
        page.render_options_section(out)?;
        page.render_extra_section(out)?;
        man_sections(sub, &name, out)?;
    }
    Ok(())
}

/// Writes the completion script of `target` (or the man page) to `out`.
fn write(target: CompletionTarget, out: &mut impl Write) -> Result<()> {
    let mut command = Cli::command();
    let shell = match target {
        CompletionTarget::Bash => Shell::Bash,
        CompletionTarget::Zsh => Shell::Zsh,
        CompletionTarget::Fish => Shell::Fish,
        CompletionTarget::Elvish => Shell::Elvish,
        CompletionTarget::Powershell => Shell::PowerShell,
        CompletionTarget::Man => return man_page(command, out),
    };
    clap_complete::generate(shell, &mut command, "analyst", out);
    Ok(())
}
