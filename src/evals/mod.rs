//! The evals engine that `analyst check` runs: suites (analyst's TOML and
//! Cube's agents folder with its eval layouts, [`suite`], [`cube`]), which
//! cases run ([`select`]), grading a result against its ground truth
//! ([`grade`]), and the report of a run with its formats: JSON, JUnit XML
//! and TAP ([`formats`]), the Markdown summary ([`summary`]) and the HTML
//! page ([`page`]); what a run tested ([`context`]: the report's `run`)
//! and how it compares with a baseline once chance is accounted for
//! ([`decide`]: regression or noise); and the run itself ([`run`]: its
//! cases, deadlines, cancellation and turns) with its progress and
//! verdict lines on stderr ([`progress`], [`verdicts`]) and its trace
//! ([`trace`]: OpenTelemetry spans); what a run may cost and set aside:
//! its budget ([`budget`]), quarantined cases ([`quarantine`]) and the
//! streams `--save` keeps for `--regrade` ([`saved`]).
//! `commands::check` reads the settings, runs a [`run::Run`] and publishes
//! its report.

pub mod budget;
pub mod context;
pub mod cube;
pub mod decide;
pub mod figures;
pub mod formats;
pub mod grade;
pub mod page;
pub mod progress;
pub mod quarantine;
pub mod report;
pub mod retry;
pub mod run;
pub mod saved;
pub mod select;
pub mod shard;
pub mod suite;
pub mod summary;
pub mod trace;
pub mod verdicts;
