//! Quarantine with an expiry: a flaky case set aside until a date instead
//! of deleted. A TOML case's `quarantine = "2026-12-31"` (or `{ until =
//! "…", reason = "…" }`), and for Cube's agents folder the file
//! `analyst-quarantine.toml` beside it (`[quarantine]` `"space/name" =
//! "2026-12-31"`). A quarantined case runs and is reported, but gates
//! nothing until its date (UTC); on and after it, it gates again and says
//! `quarantine of NAME expired on DATE`.

use std::collections::BTreeMap;

use anyhow::Result;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::error::usage;
use crate::redact::redact;
use crate::text::toml_error;

/// The file beside Cube's agents folder that quarantines its questions.
pub const QUARANTINE_FILE: &str = "analyst-quarantine.toml";

/// How a quarantine is written: a date, or a date with its reason.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Written {
    /// `quarantine = "2026-12-31"`.
    Until(String),
    /// `quarantine = { until = "2026-12-31", reason = "flaky upstream" }`.
    Table {
        /// The date it ends.
        until: String,
        /// Why the case is set aside.
        #[serde(default)]
        reason: Option<String>,
    },
}

/// A case's quarantine, as every report keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Quarantine {
    /// The date it ends (`YYYY-MM-DD`, UTC): on and after it the case
    /// gates again.
    pub until: String,
    /// Why the case is set aside.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// True when the run was on or after `until`: the case gated.
    pub expired: bool,
}

impl Quarantine {
    /// The quarantine `written`, as of `today`; `Err` says what is wrong
    /// with its date (for the caller to place).
    pub fn of(written: &Written, today: NaiveDate) -> Result<Quarantine, String> {
        let (until, reason) = match written {
            Written::Until(until) => (until, None),
            Written::Table { until, reason } => (until, reason.as_ref()),
        };
        let date = NaiveDate::parse_from_str(until.trim(), "%Y-%m-%d")
            .map_err(|_| format!("quarantine: {until:?} is not a date: write it YYYY-MM-DD (2026-12-31)"))?;
        Ok(Quarantine {
            until: date.format("%Y-%m-%d").to_string(),
            reason: reason
                .map(|reason| redact(reason.trim()).into_owned())
                .filter(|reason| !reason.is_empty()),
            expired: today >= date,
        })
    }

    /// True while it holds: the case gates nothing.
    pub fn holds(&self) -> bool {
        !self.expired
    }

    /// What a person reads of it: `until 2026-12-31: flaky upstream`.
    pub fn describe(&self) -> String {
        match &self.reason {
            Some(reason) => format!("until {}: {reason}", self.until),
            None => format!("until {}", self.until),
        }
    }

    /// The note of one that expired: `quarantine of NAME expired on DATE`.
    pub fn expired_note(&self, name: &str) -> String {
        format!("quarantine of {name} expired on {}", self.until)
    }
}

/// Today's date in UTC, the calendar quarantines end by.
pub fn today() -> NaiveDate {
    chrono::Utc::now().date_naive()
}

/// `analyst-quarantine.toml`: its one table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QuarantineFile {
    #[serde(default)]
    quarantine: BTreeMap<String, Written>,
}

/// The quarantines `text` (of `file`, an `analyst-quarantine.toml`)
/// holds, by the case each names (`space/name`, or a case's name as
/// reports show it), as of `today`. A malformed file or date is a usage
/// error naming the file (and the entry).
pub fn parse_file(file: &str, text: &str, today: NaiveDate) -> Result<BTreeMap<String, Quarantine>> {
    let parsed: QuarantineFile = toml::from_str(text).map_err(|err| usage(toml_error(file, text, &err)))?;
    parsed
        .quarantine
        .into_iter()
        .map(|(name, written)| {
            let quarantine =
                Quarantine::of(&written, today).map_err(|err| usage(format!("{file}: {name:?}: {err}")))?;
            Ok((name, quarantine))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn a_quarantine_holds_until_the_day_before_its_date_and_expires_on_it() {
        let written = Written::Table {
            until: "2026-12-31".into(),
            reason: Some(" flaky upstream ".into()),
        };
        let before = Quarantine::of(&written, day("2026-12-30")).unwrap();
        assert!(before.holds());
        assert_eq!(before.describe(), "until 2026-12-31: flaky upstream");
        let on = Quarantine::of(&written, day("2026-12-31")).unwrap();
        assert!(!on.holds(), "on its date it gates again");
        assert_eq!(on.expired_note("late"), "quarantine of late expired on 2026-12-31");
        assert!(!Quarantine::of(&written, day("2027-01-01")).unwrap().holds());
    }

    #[test]
    fn a_date_that_is_not_one_is_said_with_the_form_to_write() {
        let err = Quarantine::of(&Written::Until("31/12/2026".into()), day("2026-01-01")).unwrap_err();
        assert_eq!(
            err,
            "quarantine: \"31/12/2026\" is not a date: write it YYYY-MM-DD (2026-12-31)"
        );
        assert!(Quarantine::of(&Written::Until("2026-02-30".into()), day("2026-01-01")).is_err());
    }
}
