//! Where the history database is, whether a turn is recorded, `ask
//! --thread`, and the settings of `analyst history`: from the flags,
//! `ANALYST_HISTORY`/`ANALYST_HISTORY_DB`, the profile's `history`,
//! `history_db` and `history_keep`, and the config file's `[prices]`.

use std::path::PathBuf;

use anyhow::Result;
use regex::Regex;

use super::checks::{duration, parse_duration, regex, variable, Finding, FindingState};
use super::profile::{expand_home, Config, Profile, UserFolder};
use super::types::{destination, mode_name};
use crate::cli::{
    var, ExportFormat, HistoryAction, HistoryArgs, HistoryForgetArgs, HistoryKind, HistoryListArgs, TableOrJson,
    TrendOutput, UsageGrouping, UsageOutput,
};
use crate::domain::Prices;
use crate::error::usage;
use crate::evals::suite::suite_identity;
use crate::history::{before, Forget, ListFilter, Recording, ThreadSettings, TrendFilter, TurnKind, UsageBy};
use crate::output::{Destination, JqInput};

/// What `analyst history` does.
#[derive(Debug)]
pub enum HistoryCommand {
    /// `list`: the turns the filter picks; `json` or a table.
    List {
        /// Which turns.
        filter: ListFilter,
        /// `--grep`, over question and answer.
        grep: Option<Regex>,
        /// `-o json`.
        json: bool,
    },
    /// `show ID`.
    Show {
        /// The turn's number or message id.
        id: String,
        /// `-o json`.
        json: bool,
    },
    /// `export THREAD`.
    Export {
        /// The thread's name or chat id.
        thread: String,
        /// `-o markdown|html|json`.
        format: ExportFormat,
    },
    /// `usage`.
    Usage {
        /// `--by`.
        by: UsageBy,
        /// `--since`, as a time.
        since: Option<String>,
        /// `-o`.
        output: UsageOutput,
    },
    /// `trend`: which runs, and how they print.
    Trend {
        /// The suite and which of its runs.
        filter: TrendFilter,
        /// `-o` (a terminal's table, else CSV, when not given).
        output: TrendOutput,
    },
    /// `forget`.
    Forget(Forget),
    /// `push`: the kept spans, to this collector.
    Push(Box<crate::telemetry::OtlpSettings>),
}

/// The settings of `analyst history`.
#[derive(Debug)]
pub struct HistorySettings {
    /// The database.
    pub db: PathBuf,
    /// What to do.
    pub command: HistoryCommand,
    /// `--jq`, `--output-file`.
    pub destination: Destination,
    /// The config file's `[prices."MODEL"]`.
    pub prices: Prices,
    /// The terminal's width, when stdout is one.
    pub width: Option<u16>,
    /// Colour on stdout (a terminal, and `--color`/`NO_COLOR` allow it).
    pub styled: bool,
}

/// The history database: `ANALYST_HISTORY_DB`, the profile's `history_db`
/// (`~/` expanded), else `analyst/history.db` in the user's data folder
/// ([`UserFolder::Data`]); none without a home.
pub fn database(profile: Option<&Profile>) -> Option<PathBuf> {
    if let Some(path) = variable(var::HISTORY_DB) {
        return Some(PathBuf::from(path));
    }
    if let Some(path) = profile.and_then(|profile| profile.history_db.as_deref()) {
        return Some(expand_home(path));
    }
    let (base, _) = UserFolder::Data.find()?;
    Some(base.join("analyst").join("history.db"))
}

/// The history settings as `doctor` and `config list` show them, each
/// with where it came from: on or off, the database (a symbolic link there
/// is a failed check: it is refused), and how long turns are kept.
pub fn findings(profile: Option<&Profile>) -> Vec<Finding> {
    let off_by_variable = variable(var::HISTORY)
        .filter(|value| matches!(value.to_ascii_lowercase().as_str(), "0" | "false" | "off" | "no"));
    let (state, from) = match (
        off_by_variable,
        profile.filter(|profile| profile.history == Some(false)),
    ) {
        (Some(value), _) => (format!("off ({}={value})", var::HISTORY), var::HISTORY.to_string()),
        (None, Some(profile)) => ("off".to_string(), profile.origin("history")),
        (None, None) => (
            "on (every ask and check turn is recorded; --no-history turns it off)".to_string(),
            "default".to_string(),
        ),
    };
    let mut findings = vec![Finding::new("history", FindingState::Ok, state, from)];
    let from = match (
        variable(var::HISTORY_DB),
        profile.filter(|profile| profile.history_db.is_some()),
    ) {
        (Some(_), _) => var::HISTORY_DB.to_string(),
        (None, Some(profile)) => profile.origin("history_db"),
        (None, None) => format!("default ({})", UserFolder::Data.default_place("history.db")),
    };
    findings.push(match database(profile) {
        None => Finding::new(
            "history database",
            FindingState::Failed(crate::error::Kind::Usage),
            format!("no home folder: set {}", var::HISTORY_DB),
            from,
        ),
        Some(db) => {
            let folder_link = db.parent().is_some_and(crate::files::is_link);
            match (crate::files::is_link(&db) || folder_link, db.exists()) {
                (true, _) => Finding::new(
                    "history database",
                    FindingState::Failed(crate::error::Kind::Usage),
                    format!(
                        "{}: {}, refused (nothing is recorded)",
                        db.display(),
                        crate::files::LINK
                    ),
                    from,
                ),
                (false, true) => Finding::new("history database", FindingState::Ok, db.display().to_string(), from),
                (false, false) => Finding::new(
                    "history database",
                    FindingState::Ok,
                    format!("{} (created 0600 by the first turn)", db.display()),
                    from,
                ),
            }
        }
    });
    findings.push(
        match profile.and_then(|profile| Some((profile.history_keep.as_deref()?, profile))) {
            Some((keep, profile)) => {
                Finding::new("history keep", FindingState::Ok, keep, profile.origin("history_keep"))
            }
            None => Finding::new("history keep", FindingState::Unset, "forever (history_keep unset)", ""),
        },
    );
    findings
}

/// Where this run records its turns: `None` with `--no-history`,
/// `ANALYST_HISTORY=0`, the profile's `history = false`, or no home.
pub fn recording(no_history: bool, profile: Option<&Profile>) -> Result<Option<Recording>> {
    let off_by_variable = variable(var::HISTORY)
        .is_some_and(|value| matches!(value.to_ascii_lowercase().as_str(), "0" | "false" | "off" | "no"));
    let off_by_profile = profile.and_then(|profile| profile.history) == Some(false);
    if no_history || off_by_variable || off_by_profile {
        return Ok(None);
    }
    let keep = profile
        .and_then(|profile| profile.history_keep.as_deref().map(|text| (profile, text)))
        .map(|(profile, text)| duration(text, &profile.origin("history_keep")))
        .transpose()?;
    Ok(database(profile).map(|db| Recording { db, keep }))
}

/// `ask --thread NAME --thread-ttl DURATION`.
pub fn thread(name: Option<String>, ttl: &str, profile: Option<&Profile>) -> Result<Option<ThreadSettings>> {
    let Some(name) = name else { return Ok(None) };
    if name.trim().is_empty() {
        return Err(usage("--thread needs a name"));
    }
    let ttl = duration(ttl, "--thread-ttl")?;
    let db = database(profile).ok_or_else(|| {
        usage("--thread keeps its chat id in the history database, and there is no home folder for it: set ANALYST_HISTORY_DB")
    })?;
    Ok(Some(ThreadSettings { name, ttl, db }))
}

/// A time `--since` or `--before` gives: a date (`2026-11-01`), a time
/// (RFC 3339), or a duration ago (`7d`).
fn time_of(text: &str, flag: &str) -> Result<String> {
    let text = text.trim();
    if let Ok(date) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(format!("{date}T00:00:00.000Z"));
    }
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(time
            .with_timezone(&chrono::Utc)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    }
    parse_duration(text).map(before).map_err(|_| {
        usage(format!(
            "{flag} {text:?}: give a date (2026-11-01), a time (RFC 3339) or a duration (7d, 12h)"
        ))
    })
}

/// The settings of `analyst history`.
pub fn history(
    args: HistoryArgs,
    profile: Option<&Profile>,
    config: Option<&Config>,
    width: Option<u16>,
    styled: bool,
) -> Result<HistorySettings> {
    let db =
        database(profile).ok_or_else(|| usage("no home folder for the history database: set ANALYST_HISTORY_DB"))?;
    let json_only = |output: TableOrJson| match output {
        TableOrJson::Json => Ok(JqInput::Whole),
        other => Err((mode_name(other), "-o json")),
    };
    let (command, destination) = match args.action.unwrap_or(HistoryAction::List(args.list)) {
        HistoryAction::List(list) => list_command(list)?,
        HistoryAction::Show(show) => (
            HistoryCommand::Show {
                id: show.id,
                json: show.output == TableOrJson::Json,
            },
            destination(show.destination, json_only(show.output))?,
        ),
        HistoryAction::Export(export) => {
            let input = match export.output {
                ExportFormat::Json => Ok(JqInput::Whole),
                other => Err((mode_name(other), "-o json")),
            };
            (
                HistoryCommand::Export {
                    thread: export.thread,
                    format: export.output,
                },
                destination(export.destination, input)?,
            )
        }
        HistoryAction::Usage(usage_args) => {
            let input = match usage_args.output {
                UsageOutput::Json => Ok(JqInput::Whole),
                other => Err((mode_name(other), "-o json")),
            };
            let by = match usage_args.by {
                UsageGrouping::Day => UsageBy::Day,
                UsageGrouping::Week => UsageBy::Week,
                UsageGrouping::Month => UsageBy::Month,
                UsageGrouping::Thread => UsageBy::Thread,
                UsageGrouping::Agent => UsageBy::Agent,
                UsageGrouping::Model => UsageBy::Model,
            };
            (
                HistoryCommand::Usage {
                    by,
                    since: usage_args
                        .since
                        .as_deref()
                        .map(|text| time_of(text, "--since"))
                        .transpose()?,
                    output: usage_args.output,
                },
                destination(usage_args.destination, input)?,
            )
        }
        HistoryAction::Trend(trend) => {
            let output = trend.output.unwrap_or(match width {
                Some(_) => TrendOutput::Table,
                None => TrendOutput::Csv,
            });
            let input = match output {
                TrendOutput::Json => Ok(JqInput::Whole),
                other => Err((mode_name(other), "-o json")),
            };
            let filter = TrendFilter {
                suite_path: trend.suite.as_deref().map(suite_identity),
                since: trend
                    .since
                    .as_deref()
                    .map(|text| time_of(text, "--since"))
                    .transpose()?,
                last: trend.last.map(|last| last as usize),
            };
            (
                HistoryCommand::Trend { filter, output },
                destination(trend.destination, input)?,
            )
        }
        HistoryAction::Forget(forget) => (HistoryCommand::Forget(forget_what(forget)?), Destination::default()),
        HistoryAction::Push => {
            let otlp = super::otel::resolve(config, profile)?.ok_or_else(|| {
                usage("history push: no collector to push to: set OTEL_EXPORTER_OTLP_ENDPOINT (or the profile's otlp_endpoint)")
            })?;
            (HistoryCommand::Push(Box::new(otlp)), Destination::default())
        }
    };
    Ok(HistorySettings {
        db,
        command,
        destination,
        prices: config.map(Config::prices).unwrap_or_default(),
        width,
        styled,
    })
}

fn list_command(list: HistoryListArgs) -> Result<(HistoryCommand, Destination)> {
    let grep = list
        .grep
        .as_deref()
        .map(|pattern| regex(pattern, "--grep"))
        .transpose()?;
    let json = list.output == TableOrJson::Json;
    let input = match list.output {
        TableOrJson::Json => Ok(JqInput::Whole),
        other => Err((mode_name(other), "-o json")),
    };
    let filter = ListFilter {
        limit: list.limit as usize,
        thread: list.thread,
        since: list.since.as_deref().map(|text| time_of(text, "--since")).transpose()?,
        status: list.status,
        kind: list.kind.map(|kind| match kind {
            HistoryKind::Ask => TurnKind::Ask,
            HistoryKind::Check => TurnKind::Check,
        }),
    };
    Ok((
        HistoryCommand::List { filter, grep, json },
        destination(list.destination, input)?,
    ))
}

fn forget_what(args: HistoryForgetArgs) -> Result<Forget> {
    Ok(match (args.before, args.thread, args.all) {
        (Some(before), ..) => Forget::Before(time_of(&before, "--before")?),
        (None, Some(thread), _) => Forget::Thread(thread),
        (None, None, true) => Forget::All,
        (None, None, false) => {
            return Err(usage(
                "forget what? give --before DATE|DURATION, --thread NAME or --all (nothing was deleted)",
            ))
        }
    })
}
