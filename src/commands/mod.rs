//! One module per subcommand; each has a `run` that returns the exit code or
//! an error carrying one.

pub mod abort;
pub mod ask;
pub mod check;
pub mod completions;
pub mod rows;
pub mod session;
