//! `analyst version`: the version, and what `--version` leaves out: the
//! commit the binary was built from, its date, and the target.

use std::io::Write;

use anyhow::Result;

use crate::cli::LONG_VERSION;
use crate::output::Out;

/// Runs `analyst version`.
pub fn run(out: &mut Out) -> Result<()> {
    out.write_all(LONG_VERSION.as_bytes())?;
    out.flush()?;
    Ok(())
}
