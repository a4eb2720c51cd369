//! The saved streams of a run: each case of a re-grade run as often as it
//! was saved and each of its turns read from the stream `--save` kept
//! (`--regrade DIR`); and the `--save` folder's manifest, each turn saved
//! logged as it ends and written when the run has its report.

use std::time::Instant;

use super::case::TurnSource;
use super::pool::Slot;
use super::Run;
use anyhow::Result;

use crate::error::{Fault, Kind};
use crate::evals::context::RunContext;
use crate::evals::report::RunReport;
use crate::evals::saved::{SaveManifest, SavedFolder, SavedTurn, TurnMillis, SAVE_VERSION};
use crate::evals::suite::Case;
use crate::exchange::{Exchange, Origin, Trace};
use crate::files::LazyFile;
use crate::net::source::SavedStream;
use crate::output::Notes;
use crate::redact::redact;
use crate::stream::turn::Timings;

impl Run<'_> {
    /// One turn of a re-grade: its saved stream (kept among the run's
    /// `saved`) read through the turn's owner as a live turn is, graded
    /// with the timings it was saved with; a turn the folder did not save
    /// is an error of the run (`no saved stream`), never asked.
    pub(super) fn regrade_turn(
        &self,
        folder: &SavedFolder,
        slot: Slot,
        case: &Case,
        turn_index: usize,
        run: &mut RunReport,
        case_started: Instant,
    ) -> Result<(), Fault> {
        let Some(saved) = folder.turn(&case.name, slot.run, turn_index) else {
            let which = match case.turns.len() {
                1 => String::new(),
                n => format!(" of turn {} of {n}", turn_index + 1),
            };
            return Err(Fault::new(
                Kind::Usage,
                format!("no saved stream{which} in {} (--regrade)", folder.dir.display()),
            ));
        };
        let path = folder.path_of(saved);
        let stream = SavedStream::open(&path.display().to_string(), "--regrade").map_err(|err| Fault::of(&err))?;
        let exchange = Exchange {
            origin: Origin::saved(stream),
            recording: None,
            trace: Trace::Off,
            notes: &self.notes,
        };
        let source = TurnSource::Saved(&exchange, saved);
        let graded = self.run_turn(slot, case, turn_index, source, run, case_started);
        run.saved.push(path.display().to_string());
        graded
    }

    /// Keeps what the `--save` folder's manifest says of a saved turn.
    pub(super) fn log_saved(
        &self,
        slot: Slot,
        case: &Case,
        turn_index: usize,
        file: &LazyFile,
        run: &RunReport,
        timings: Timings,
    ) {
        let saved = SavedTurn {
            case: case.name.clone(),
            hash: Some(case.fingerprint()),
            run: slot.run + 1,
            turn: turn_index + 1,
            question: redact(&case.turns[turn_index].question).into_owned(),
            file: file
                .path()
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default(),
            message_id: run.message_id.clone(),
            millis: TurnMillis::of(&timings),
        };
        if let Ok(mut log) = self.save_log.lock() {
            log.push(saved);
        }
    }
}

/// Each case of a re-grade runs as many times as the folder saved it (at
/// least once: a case with no saved stream is an error of its own, never
/// asked); a case whose question changed since is graded all the same, with
/// a note.
pub(super) fn regrade_runs(cases: &mut [Case], saved: &SavedFolder, notes: &Notes) {
    for case in cases.iter_mut() {
        let runs = saved.runs_of(&case.name);
        case.repeat = runs.len().max(1);
        let asked = runs.first().and_then(|turns| turns.values().next());
        if let (Some(asked), Some(turn)) = (asked, case.turns.first()) {
            if asked.question != redact(&turn.question) {
                notes.warn(&format!(
                    "--regrade: {}: the question changed since it was saved; its saved answer is graded all the same",
                    case.name
                ));
            }
        }
    }
}

impl Run<'_> {
    /// Writes the `--save` folder's manifest: the run's metadata (`run`)
    /// and every turn saved, in suite order.
    pub(super) fn write_manifest(&self, dir: &std::path::Path, run: RunContext) -> Result<()> {
        let mut streams = std::mem::take(&mut *self.save_log.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        let place = |name: &str| self.cases.iter().position(|case| case.name == name);
        streams.sort_by_key(|turn| (place(&turn.case), turn.run, turn.turn));
        SaveManifest {
            version: SAVE_VERSION,
            run,
            streams,
        }
        .write(dir)
    }
}
