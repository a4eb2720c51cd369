//! What `check --save DIR` keeps for a re-grade, and `check --regrade
//! DIR` reads back: beside each turn's raw stream (`NN-case[.rK][.T].ndjson`,
//! byte for byte), one `analyst-save.json` — its `version`, the run's
//! metadata (the JSON report's `run`) and, per stream, its case, run, turn,
//! ids and timings (what a stream does not hold: how long the turn took).
//! Written whole when the run ends; read by this version and later ones
//! (a later version of the file is refused, naming both).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::context::RunContext;
use crate::error::{fail, usage, Kind};
use crate::files::write_whole;
use crate::input::{read_text_at_most, Input};
use crate::stream::turn::Timings;

/// The name of the file that describes a saved folder.
pub const MANIFEST: &str = "analyst-save.json";

/// The version of [`MANIFEST`] this analyst writes (and the newest it reads).
pub const SAVE_VERSION: u32 = 1;

/// The most a manifest may weigh: far above any real one.
const MAX_MANIFEST: u64 = 256 << 20;

/// A saved folder's description ([`MANIFEST`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveManifest {
    /// [`SAVE_VERSION`] when written.
    pub version: u32,
    /// The run that asked and saved the streams (its report's `run`).
    pub run: RunContext,
    /// Every stream saved, in the order the turns ended.
    pub streams: Vec<SavedTurn>,
}

/// One saved turn: whose, which, where, and what its stream does not say.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedTurn {
    /// The case's name.
    pub case: String,
    /// The case's fingerprint when it was asked.
    #[serde(default)]
    pub hash: Option<String>,
    /// Which run of the case (from 1).
    pub run: usize,
    /// Which turn of the run (from 1).
    pub turn: usize,
    /// The question asked.
    pub question: String,
    /// The stream's file, inside the folder.
    pub file: String,
    /// The message id sent.
    #[serde(default)]
    pub message_id: Option<String>,
    /// When things happened, in milliseconds from the turn's start.
    pub millis: TurnMillis,
}

/// A turn's timings in milliseconds from its start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnMillis {
    /// The first line of the stream.
    #[serde(default)]
    pub first_byte: Option<u64>,
    /// The first SQL result.
    #[serde(default)]
    pub first_sql: Option<u64>,
    /// The start of the final answer.
    #[serde(default)]
    pub answer: Option<u64>,
    /// The end of the turn.
    pub total: u64,
}

impl TurnMillis {
    /// A turn's timings as kept.
    pub fn of(timings: &Timings) -> TurnMillis {
        let millis = |duration: Duration| duration.as_millis() as u64;
        TurnMillis {
            first_byte: timings.first_byte.map(millis),
            first_sql: timings.first_sql.map(millis),
            answer: timings.answer.map(millis),
            total: millis(timings.total),
        }
    }

    /// The timings as a turn has them.
    pub fn timings(&self) -> Timings {
        let at = Duration::from_millis;
        Timings {
            first_byte: self.first_byte.map(at),
            first_sql: self.first_sql.map(at),
            answer: self.answer.map(at),
            total: at(self.total),
        }
    }
}

impl SaveManifest {
    /// Writes the manifest into `dir`, whole or not at all.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let mut text = serde_json::to_vec_pretty(self)?;
        text.push(b'\n');
        let path = dir.join(MANIFEST);
        write_whole(&path, &text)
            .map_err(|err| fail(Kind::CannotWrite, format!("cannot write {}: {err}", path.display())))
    }
}

/// A saved folder read for a re-grade: its manifest, and each case's saved
/// runs, each run's turns in order.
#[derive(Debug)]
pub struct SavedFolder {
    /// The folder.
    pub dir: PathBuf,
    /// What it holds.
    pub manifest: SaveManifest,
    /// By case name: by run number, the run's saved turns by turn number.
    runs: BTreeMap<String, BTreeMap<usize, BTreeMap<usize, SavedTurn>>>,
}

impl SavedFolder {
    /// Reads the folder `dir` (waiting no longer than `limit`): a folder
    /// without a manifest, a manifest of a later version, or one that is
    /// not JSON of this form is a usage error saying which.
    pub fn read(dir: &Path, limit: Option<Duration>) -> Result<SavedFolder> {
        let path = dir.join(MANIFEST);
        if !dir.is_dir() {
            return Err(usage(format!("--regrade {}: not a folder", dir.display())));
        }
        if !path.is_file() {
            return Err(usage(format!(
                "--regrade {}: it holds no {MANIFEST}: give a folder 'check --save' wrote, of a run that ended",
                dir.display()
            )));
        }
        let shown = format!("--regrade {}", path.display());
        let text = read_text_at_most(Input::File(path.clone()), MAX_MANIFEST, limit, &shown)?;
        let not_a_manifest = |err: serde_json::Error| usage(format!("{shown}: not a saved folder's manifest: {err}"));
        // Its version first: a later version may have another form.
        let value: serde_json::Value = serde_json::from_str(&text).map_err(not_a_manifest)?;
        let version = value.get("version").and_then(serde_json::Value::as_u64);
        if let Some(version) = version.filter(|&version| version > u64::from(SAVE_VERSION)) {
            return Err(usage(format!(
                "{shown}: saved by a newer analyst (version {version}); this one reads version {SAVE_VERSION}: upgrade analyst"
            )));
        }
        let manifest: SaveManifest = serde_json::from_value(value).map_err(not_a_manifest)?;
        let mut runs: BTreeMap<String, BTreeMap<usize, BTreeMap<usize, SavedTurn>>> = BTreeMap::new();
        for saved in &manifest.streams {
            let inside = Path::new(&saved.file);
            // A file of the folder, never a path out of it.
            if inside.components().count() != 1 || inside.is_absolute() {
                return Err(usage(format!("{shown}: {:?} is not a file of the folder", saved.file)));
            }
            runs.entry(saved.case.clone())
                .or_default()
                .entry(saved.run)
                .or_default()
                .insert(saved.turn, saved.clone());
        }
        Ok(SavedFolder {
            dir: dir.to_path_buf(),
            manifest,
            runs,
        })
    }

    /// The saved runs of the case `name`, in run order, each its turns by
    /// turn number (from 1); none when the folder has none.
    pub fn runs_of(&self, name: &str) -> Vec<&BTreeMap<usize, SavedTurn>> {
        self.runs
            .get(name)
            .map(|runs| runs.values().collect())
            .unwrap_or_default()
    }

    /// Turn `turn` (from 0) of run `run` (from 0, in run order) of the
    /// case `name`, when the folder saved it.
    pub fn turn(&self, name: &str, run: usize, turn: usize) -> Option<&SavedTurn> {
        self.runs.get(name)?.values().nth(run)?.get(&(turn + 1))
    }

    /// What the first `turns` turns of run `run` (from 0) of the case
    /// `name` took when they were asked: a re-graded run's time.
    pub fn took(&self, name: &str, run: usize, turns: usize) -> Duration {
        (0..turns)
            .filter_map(|turn| self.turn(name, run, turn))
            .map(|saved| Duration::from_millis(saved.millis.total))
            .sum()
    }

    /// The path of a saved turn's stream.
    pub fn path_of(&self, turn: &SavedTurn) -> PathBuf {
        self.dir.join(&turn.file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(version: u32) -> SaveManifest {
        SaveManifest {
            version,
            run: RunContext::new(chrono::Utc::now(), 1.0, "https://x.example/chat", "s.toml", None, None),
            streams: vec![SavedTurn {
                case: "revenue".into(),
                hash: None,
                run: 2,
                turn: 1,
                question: "Revenue?".into(),
                file: "01-revenue.r2.ndjson".into(),
                message_id: Some("m-1".into()),
                millis: TurnMillis {
                    total: 2500,
                    ..TurnMillis::default()
                },
            }],
        }
    }

    #[test]
    fn a_manifest_reads_back_as_written_and_a_later_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        manifest(SAVE_VERSION).write(dir.path()).unwrap();
        let folder = SavedFolder::read(dir.path(), None).unwrap();
        assert_eq!(folder.manifest, manifest(SAVE_VERSION));
        let runs = folder.runs_of("revenue");
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0][&1].millis.timings().total, Duration::from_millis(2500));
        assert!(folder.runs_of("other").is_empty());
        manifest(SAVE_VERSION + 1).write(dir.path()).unwrap();
        let err = SavedFolder::read(dir.path(), None).unwrap_err().to_string();
        assert!(err.contains("saved by a newer analyst (version 2)"), "{err}");
    }

    #[test]
    fn a_folder_without_a_manifest_or_with_a_path_out_of_it_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = SavedFolder::read(dir.path(), None).unwrap_err().to_string();
        assert!(err.ends_with("holds no analyst-save.json: give a folder 'check --save' wrote, of a run that ended"));
        let mut escaping = manifest(SAVE_VERSION);
        escaping.streams[0].file = "../secret.ndjson".into();
        escaping.write(dir.path()).unwrap();
        let err = SavedFolder::read(dir.path(), None).unwrap_err().to_string();
        assert!(err.contains("is not a file of the folder"), "{err}");
    }
}
