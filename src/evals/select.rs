//! The cases a `check` run asks: the suite read (a TOML suite or Cube's
//! eval files) and validated, then `--filter` and `--shard`; and `--list`,
//! which prints them and asks nothing.

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use regex::Regex;
use serde_json::{json, Value};

use super::suite::{suite_fingerprint, Case};
use super::{cube, shard, suite};
use crate::api::data::DataSettings;
use crate::evals::report::{ReportFormat, ReportSettings};
use crate::files::check_files_apart;
use crate::identity::IdentityInput;
use crate::output::{Notes, Out};
use crate::redact::redact;
use crate::text::one_line;

/// A suite and which of its cases run (or are listed).
#[derive(Debug)]
pub struct Selection {
    /// The suite: a TOML file, or Cube's eval files.
    pub suite: PathBuf,
    /// `CUBE_CLOUD_AGENTS_CONFIG_PATH`: where Cube's agents folder is
    /// under a repository root (else `agents/`).
    pub agents_path: Option<PathBuf>,
    /// `--certified`: every certified query of Cube's eval files is also a
    /// question.
    pub certified: bool,
    /// `--filter`: the cases whose name matches run.
    pub filter: Option<Regex>,
    /// `--shard K/N`: the K-th of N slices of the cases runs.
    pub shard: Option<(u32, u32)>,
    /// `--timeout`: the suite's files are waited for no longer (a FIFO).
    pub timeout: Option<Duration>,
}
/// The settings of `analyst check --list`.
#[derive(Debug)]
pub struct CheckListSettings {
    /// The suite and the cases listed.
    pub selection: Selection,
    /// The identity of the command line, which a suite may override.
    pub identity: IdentityInput,
    /// `-o json`, and where it goes.
    pub report: ReportSettings,
}

/// Runs `analyst check --list`: the cases a run would ask, one a line
/// (`NAME<TAB>FILE:LINE<TAB>QUESTION`) or as a JSON array; nothing is sent.
pub fn list(settings: CheckListSettings, notes: &Notes, out: &mut Out) -> Result<()> {
    let cases = load(&settings.selection, &settings.identity, None, notes)?.cases;
    check_reports_apart(&settings.selection, &cases, &settings.report.written())?;
    for case in &cases {
        if let Some(name) = case.missing_ground_truth() {
            notes.warn(&format!(
                "{}: {}: certifiedQuery {name:?} names no certified query: a run gives it verdict error (Ground truth not found) without asking the agent",
                case.source, case.name
            ));
        }
        tell_quarantine(case, notes);
    }
    if settings.report.format == Some(ReportFormat::Json) {
        let listed: Vec<Value> = cases
            .iter()
            .map(|case| {
                let mut listed = json!({
                    "name": case.name,
                    "space": case.space,
                    "question": case.turns.first().map(|turn| redact(&turn.question)),
                    "source": case.source,
                    "groundTruth": case.ground_truth(),
                });
                if let Some(name) = case.missing_ground_truth() {
                    listed["groundTruthNotFound"] = json!(name);
                }
                if let Some(quarantine) = &case.quarantine {
                    listed["quarantine"] = json!(quarantine);
                }
                listed
            })
            .collect();
        serde_json::to_writer_pretty(&mut *out, &listed)?;
        writeln!(out)?;
    } else {
        for case in &cases {
            let question = case.turns.first().map_or("", |turn| turn.question.as_str());
            writeln!(
                out,
                "{}\t{}\t{}",
                one_line(&case.name),
                one_line(&case.source),
                one_line(&redact(question))
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Says on stderr that `case` is quarantined, until when and why, or that
/// its quarantine expired (it gates again).
pub fn tell_quarantine(case: &Case, notes: &Notes) {
    let Some(quarantine) = &case.quarantine else { return };
    match quarantine.holds() {
        true => notes.info(&format!(
            "{}: {}: quarantined {}: it runs and gates nothing",
            case.source,
            case.name,
            quarantine.describe()
        )),
        false => notes.warn(&format!("{}: {}", case.source, quarantine.expired_note(&case.name))),
    }
}

/// No report of the run is written over a file the run reads: each file
/// of the suite (Cube's question files and certified queries, not only
/// the folder named) and each image its cases send. Exit 2, before
/// anything is written.
pub fn check_reports_apart(selection: &Selection, cases: &[Case], written: &[(&str, &Path)]) -> Result<()> {
    let suite = &selection.suite;
    let files = match cube::is_cube_suite(suite) {
        true => cube::files_read(suite, selection.agents_path.as_deref())?,
        false => vec![suite.clone()],
    };
    let images = cases.iter().flat_map(|case| &case.turns).flat_map(|turn| &turn.images);
    let read: Vec<(&str, &Path)> = files
        .iter()
        .map(|file| ("a file of the suite", file.as_path()))
        .chain(images.map(|image| ("an image of the suite", image.path.as_path())))
        .collect();
    check_files_apart(&read, written)
}

/// The cases a run asks, and the fingerprint of the whole suite's.
pub struct Selected {
    /// The cases `--filter` and `--shard` selected, in suite order.
    pub cases: Vec<Case>,
    /// The fingerprint of every case of the suite as graded (see
    /// [`suite_fingerprint`]): the same for every slice of it.
    pub hash: String,
}

/// The cases of the suite that `selection` selects: read and validated
/// whole (`data`: the data query API the ground truths need, `None` when
/// nothing will run), then `--filter` and `--shard`. A filter that selects
/// nothing is a usage error; an empty shard (fewer cases than shards) is
/// a note.
pub fn load(
    selection: &Selection,
    identity: &IdentityInput,
    data: Option<&DataSettings>,
    notes: &Notes,
) -> Result<Selected> {
    let suite = &selection.suite;
    let cases = match cube::is_cube_suite(suite) {
        true => cube::load(
            suite,
            selection.agents_path.as_deref(),
            selection.certified,
            identity,
            data,
            selection.timeout,
        )?,
        false if selection.certified => {
            return Err(crate::error::usage(
                "--certified reads Cube's eval files: give an agents/ folder or an eval_questions YAML file",
            ))
        }
        false => suite::load(suite, identity, data, selection.timeout)?,
    };
    // A case's name is shown in every output and report: no secret in it,
    // however the suite wrote it (its questions are redacted where shown).
    let mut cases = cases;
    for case in &mut cases {
        if let Cow::Owned(redacted) = redact(&case.name) {
            case.name = redacted;
        }
    }
    let total = cases.len();
    let hash = suite_fingerprint(&cases);
    let mut cases: Vec<Case> = match &selection.filter {
        None => cases,
        Some(filter) => {
            let kept: Vec<Case> = cases.into_iter().filter(|case| filter.is_match(&case.name)).collect();
            if kept.is_empty() {
                return Err(crate::error::usage(format!(
                    "--filter {:?} matches none of the {total} cases of {}: see them with --list",
                    filter.as_str(),
                    suite.display()
                )));
            }
            kept
        }
    };
    if let Some((k, n)) = selection.shard {
        let selected = cases.len();
        let mine = shard::dealt(cases.iter().map(|case| case.name.as_str()), (k, n));
        cases.retain(|case| mine.contains(&case.name));
        if cases.is_empty() {
            notes.warn(&format!(
                "shard {k}/{n} is empty: {selected} cases are dealt to {n} shards; nothing runs"
            ));
        }
    }
    Ok(Selected { cases, hash })
}
