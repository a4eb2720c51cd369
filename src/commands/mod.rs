//! One module per subcommand; each has a `run` that takes its resolved
//! settings (and the outputs) and returns `Ok` or an error whose kind says
//! the exit code.

pub mod abort;
pub mod ask;
pub mod check;
pub mod completions;
pub mod config;
pub mod doctor;
pub mod history;
pub mod man;
pub mod rows;
pub mod session;
pub mod trend;
pub mod version;
