//! `analyst config list|path|profiles`: the settings the chosen profile
//! and the environment give, each with where it came from (secrets as set
//! or unset), where the config file is, or its profiles' names.

use std::io::Write;

use anyhow::Result;

use crate::output::Out;
use crate::render::table;
use crate::settings::Finding;

/// Runs `analyst config list`: a table of setting, value, and where it
/// came from, fitted to `width` (a terminal's).
pub fn list(findings: &[Finding], width: Option<u16>, out: &mut Out) -> Result<()> {
    let rows: Vec<Vec<String>> = findings
        .iter()
        .map(|finding| vec![finding.what.clone(), finding.found.clone(), finding.from.clone()])
        .collect();
    out.write_all(table::wrapped(&["setting", "value", "from"], &rows, width).as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Runs `analyst config path`: the path, whether or not the file exists.
pub fn path(path: Option<&std::path::Path>, out: &mut Out) -> Result<()> {
    match path {
        Some(path) => writeln!(out, "{}", path.display())?,
        None => {
            return Err(crate::error::usage(
                "no config file path: set ANALYST_CONFIG, XDG_CONFIG_HOME or HOME",
            ))
        }
    }
    out.flush()?;
    Ok(())
}

/// Runs `analyst config profiles`: one name per line.
pub fn profiles(names: &[String], out: &mut Out) -> Result<()> {
    for name in names {
        writeln!(out, "{name}")?;
    }
    out.flush()?;
    Ok(())
}
