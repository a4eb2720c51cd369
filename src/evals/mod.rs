//! The evals engine that `analyst check` runs: suites (analyst's TOML and
//! Cube's agents folder with its eval layouts, [`suite`], [`cube`]), which
//! cases run ([`select`]), grading a result against its ground truth
//! ([`grade`]), and the report of a run with its formats: JSON, JUnit XML
//! and TAP ([`formats`]), the Markdown summary ([`summary`]) and the HTML
//! page ([`page`]); and the run itself ([`run`]: its cases, deadlines,
//! cancellation and turns) with its progress on stderr ([`progress`]).
//! `commands::check` reads the settings, runs a [`run::Run`] and publishes
//! its report.

pub mod cube;
pub mod formats;
pub mod grade;
pub mod page;
pub mod progress;
pub mod report;
pub mod run;
pub mod select;
pub mod suite;
pub mod summary;
