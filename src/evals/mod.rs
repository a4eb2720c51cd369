//! The evals engine that `analyst check` runs: suites (analyst's TOML and
//! Cube's agents folder with its eval layouts, [`suite`], [`cube`]), which
//! cases run ([`select`]), grading a result against its ground truth
//! ([`grade`]), and the report of a run with its formats: JSON, JUnit XML
//! and TAP ([`formats`]), the Markdown summary ([`summary`]) and the HTML
//! page ([`page`]). The command that drives a run — its cases, deadlines and
//! turns — is `commands::check`.

pub mod cube;
pub mod formats;
pub mod grade;
pub mod page;
pub mod report;
pub mod select;
pub mod suite;
pub mod summary;
