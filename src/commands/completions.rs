//! `analyst completions SHELL|man`: completion scripts and the man pages
//! (see `man`), generated from the clap definitions so they never disagree
//! with `--help`.

use std::io::Write;

use anyhow::Result;
use clap_complete::Shell;

use std::path::Path;

use crate::cli::CompletionTarget;
use crate::error::{fail, usage, Kind};
use crate::output::Out;

use super::man;

/// Runs `analyst completions`: a completion script on stdout; or the man
/// page `analyst(1)`, or with `dir` every page written there.
pub fn run(target: CompletionTarget, dir: Option<&Path>, out: &mut Out) -> Result<()> {
    match (target, dir) {
        (CompletionTarget::Man, Some(dir)) => {
            std::fs::create_dir_all(dir)
                .map_err(|err| fail(Kind::CannotWrite, format!("cannot create {}: {err}", dir.display())))?;
            for page in man::pages()? {
                let path = dir.join(format!("{}.1", page.name));
                std::fs::write(&path, &page.roff)
                    .map_err(|err| fail(Kind::CannotWrite, format!("cannot write {}: {err}", path.display())))?;
            }
        }
        (_, Some(_)) => return Err(usage("--dir is for the man pages: analyst completions man --dir DIR")),
        (target, None) => write(target, out)?,
    }
    out.flush()?;
    Ok(())
}

/// Writes the completion script of `target` (or the man page) to `out`.
fn write(target: CompletionTarget, out: &mut impl Write) -> Result<()> {
    let mut command = crate::cli::command();
    let shell = match target {
        CompletionTarget::Bash => Shell::Bash,
        CompletionTarget::Zsh => Shell::Zsh,
        CompletionTarget::Fish => Shell::Fish,
        CompletionTarget::Elvish => Shell::Elvish,
        CompletionTarget::Powershell => Shell::PowerShell,
        CompletionTarget::Man => {
            let pages = man::pages()?;
            out.write_all(&pages[0].roff)?;
            return Ok(());
        }
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "analyst", &mut script);
    out.write_all(with_profile_names(shell, &String::from_utf8_lossy(&script)).as_bytes())?;
    Ok(())
}

/// The script with `--profile` completing the config file's profile names
/// (`analyst config profiles`, run when completing) instead of file names,
/// where the shell's script makes that a one-place change.
fn with_profile_names(shell: Shell, script: &str) -> String {
    const NAMES: &str = "analyst config profiles 2>/dev/null";
    match shell {
        Shell::Bash => script.replace(
            "--profile)\n                    COMPREPLY=($(compgen -f \"${cur}\"))",
            &format!("--profile)\n                    COMPREPLY=($(compgen -W \"$({NAMES})\" -- \"${{cur}}\"))"),
        ),
        Shell::Zsh => script.replace(
            "(analyst config path prints where it is)]:NAME:_default'",
            &format!("(analyst config path prints where it is)]:NAME:{{compadd -- $({NAMES})}}'"),
        ),
        Shell::Fish => script.replace(
            "-l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r",
            &format!("-l profile -d 'Use this profile of the config file (analyst config path prints where it is)' -r -f -a '({NAMES})'"),
        ),
        _ => script.to_string(),
    }
}
