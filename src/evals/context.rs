//! What a run tested, in every report: when, against which agent and
//! branch, as whom, with which suite and in which CI job (the JSON
//! report's `run`), and whether a baseline measured the same thing.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ci::CiJob;
use crate::domain::without_credentials;

/// The JSON report's `run`: what was tested, where and when.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunContext {
    /// When the run started (RFC 3339, UTC).
    pub started_at: String,
    /// How long it took.
    pub seconds: f64,
    /// The `analyst` that ran it.
    pub analyst_version: String,
    /// The chat URL asked, without credentials.
    pub chat_url: String,
    /// The branch the cases asked on (several, comma-separated, when they
    /// differ); none for the deployed agent.
    #[serde(default)]
    pub branch: Option<String>,
    /// Who asked (the command line's identity; a case may name its own).
    #[serde(default)]
    pub identity: Option<String>,
    /// The suite file, as named on the command line.
    pub suite: String,
    /// What names the suite across checkouts (see
    /// [`suite_identity`](super::suite::suite_identity)); none in reports
    /// written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_path: Option<String>,
    /// The fingerprint of the suite's cases as graded (see
    /// [`suite_fingerprint`](super::suite::suite_fingerprint)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_hash: Option<String>,
    /// `K/N` for one shard's run.
    #[serde(default)]
    pub shard: Option<String>,
    /// The CI job, when the run was in one.
    #[serde(default)]
    pub ci: Option<CiJob>,
}

impl RunContext {
    /// The context of a run that started at `started_at` and took
    /// `seconds`, in the CI job `ci`.
    pub fn new(
        started_at: DateTime<Utc>,
        seconds: f64,
        chat_url: &str,
        suite: &str,
        shard: Option<String>,
        ci: Option<CiJob>,
    ) -> Self {
        RunContext {
            started_at: started_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            seconds,
            analyst_version: env!("CARGO_PKG_VERSION").to_string(),
            chat_url: without_credentials(chat_url),
            branch: None,
            identity: None,
            suite: suite.to_string(),
            suite_path: None,
            suite_hash: None,
            shard,
            ci,
        }
    }

    /// The context of shards' runs merged: the first shard's, from the
    /// earliest start, as long as the longest, and no shard.
    pub fn merged<'a>(runs: impl Iterator<Item = &'a RunContext>) -> Option<RunContext> {
        let runs: Vec<&RunContext> = runs.collect();
        let first = runs.iter().min_by(|a, b| a.started_at.cmp(&b.started_at))?;
        Some(RunContext {
            seconds: runs.iter().map(|run| run.seconds).fold(0.0, f64::max),
            shard: None,
            ..(*first).clone()
        })
    }

    /// The branches `branches` name, as one: the one they share, or all
    /// of them comma-separated; none when no case names one.
    pub fn branch_of<'a>(branches: impl Iterator<Item = Option<&'a str>>) -> Option<String> {
        let mut named: Vec<&str> = branches.flatten().collect();
        named.sort_unstable();
        named.dedup();
        (!named.is_empty()).then(|| named.join(", "))
    }
}

/// How far in the future a baseline's start may be before it is not
/// believed (clocks of CI machines differ a little).
const CLOCK_SKEW: chrono::TimeDelta = chrono::TimeDelta::minutes(5);

/// Why `baseline` is no fair measure for `now`: another agent, branch or
/// suite (another file, or the same file whose cases changed: `changed`
/// names those the two reports share), a start in the future or older
/// than `max_age` at `today`, or a report that does not say what it
/// measured. `None` when it is fair.
pub fn unreliable(
    baseline: Option<&RunContext>,
    now: &RunContext,
    changed: &[&str],
    max_age: Duration,
    today: DateTime<Utc>,
) -> Option<String> {
    let Some(baseline) = baseline else {
        return Some("it does not say when or against which agent it ran (written before reports had `run`)".into());
    };
    if baseline.chat_url != now.chat_url {
        return Some(format!("it asked {}, this run {}", baseline.chat_url, now.chat_url));
    }
    if baseline.branch != now.branch {
        let name = |branch: &Option<String>| branch.clone().unwrap_or_else(|| "the deployed agent".into());
        return Some(format!(
            "it asked {}, this run {}",
            name(&baseline.branch),
            name(&now.branch)
        ));
    }
    let (Some(was), Some(is)) = (&baseline.suite_path, &now.suite_path) else {
        return Some(format!(
            "it does not say which cases of {} it graded (written before reports had suitePath and suiteHash)",
            baseline.suite
        ));
    };
    if was != is {
        return Some(format!("it ran the suite {was}, this run {is}"));
    }
    if baseline.suite_hash != now.suite_hash {
        let which = match changed {
            [] => "cases were added or removed".to_string(),
            [one] => format!("case {one} is asked or graded differently"),
            many => format!(
                "{} cases are asked or graded differently: {}",
                many.len(),
                many.join(", ")
            ),
        };
        return Some(format!("the suite changed since it ran: {which}"));
    }
    let Ok(started) = DateTime::parse_from_rfc3339(&baseline.started_at) else {
        return Some(format!("its start {:?} is not a time", baseline.started_at));
    };
    let started = started.with_timezone(&Utc);
    if started > today + CLOCK_SKEW {
        return Some(format!(
            "it says it started at {}, in the future: its clock or the report is wrong",
            baseline.started_at
        ));
    }
    let age = (today - started).to_std().unwrap_or_default();
    (age > max_age).then(|| {
        format!(
            "it is {} old (--baseline-max-age {})",
            days_or_hours(age),
            days_or_hours(max_age)
        )
    })
}

/// An age in whole days from two days on (or when whole), else in hours
/// (minutes under an hour): `14d`, `36h`, `20m`.
fn days_or_hours(age: Duration) -> String {
    let seconds = age.as_secs();
    match seconds {
        _ if seconds >= 2 * 86_400 || (seconds > 0 && seconds.is_multiple_of(86_400)) => {
            format!("{}d", seconds / 86_400)
        }
        _ if seconds >= 3600 => format!("{}h", seconds / 3600),
        _ => format!("{}m", seconds / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> RunContext {
        RunContext {
            started_at: "2026-11-20T10:00:00Z".into(),
            seconds: 12.5,
            analyst_version: "1.0.0".into(),
            chat_url: "https://acme.cubecloud.dev/api/v1/public/acme/agents/7/chat/stream-chat-state".into(),
            branch: None,
            identity: Some("external user ci-bot".into()),
            suite: "evals/smoke.toml".into(),
            suite_path: Some("evals/smoke.toml".into()),
            suite_hash: Some("00aa11bb22cc33dd".into()),
            shard: None,
            ci: None,
        }
    }

    #[test]
    fn a_baseline_of_another_agent_branch_suite_or_age_is_unreliable() {
        let today = DateTime::parse_from_rfc3339("2026-11-27T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let fortnight = Duration::from_secs(14 * 86_400);
        let now = context();
        assert_eq!(unreliable(Some(&context()), &now, &[], fortnight, today), None);
        let moved = RunContext {
            suite: "/ci/checkout/evals/smoke.toml".into(),
            ..context()
        };
        assert_eq!(
            unreliable(Some(&moved), &now, &[], fortnight, today),
            None,
            "the same suite file in another checkout"
        );
        let cases = [
            (
                RunContext {
                    chat_url: "https://acme.cubecloud.dev/api/v1/public/acme/agents/8/chat/stream-chat-state".into(),
                    ..context()
                },
                "it asked https://acme.cubecloud.dev/api/v1/public/acme/agents/8/chat/stream-chat-state, this run https://acme.cubecloud.dev/api/v1/public/acme/agents/7/chat/stream-chat-state",
            ),
            (
                RunContext {
                    branch: Some("dev".into()),
                    ..context()
                },
                "it asked dev, this run the deployed agent",
            ),
            (
                RunContext {
                    suite: "../teamA/smoke.toml".into(),
                    suite_path: Some("teamA/smoke.toml".into()),
                    ..context()
                },
                "it ran the suite teamA/smoke.toml, this run evals/smoke.toml",
            ),
            (
                RunContext {
                    suite_hash: Some("ffffffffffffffff".into()),
                    ..context()
                },
                "the suite changed since it ran: cases were added or removed",
            ),
            (
                RunContext {
                    started_at: "2026-11-28T10:00:00Z".into(),
                    ..context()
                },
                "it says it started at 2026-11-28T10:00:00Z, in the future: its clock or the report is wrong",
            ),
            (
                RunContext {
                    suite_path: None,
                    suite_hash: None,
                    ..context()
                },
                "it does not say which cases of evals/smoke.toml it graded (written before reports had suitePath and suiteHash)",
            ),
        ];
        for (baseline, why) in cases {
            assert_eq!(
                unreliable(Some(&baseline), &now, &[], fortnight, today).as_deref(),
                Some(why)
            );
        }
        let edited = RunContext {
            suite_hash: Some("ffffffffffffffff".into()),
            ..context()
        };
        assert_eq!(
            unreliable(Some(&edited), &now, &["revenue"], fortnight, today).as_deref(),
            Some("the suite changed since it ran: case revenue is asked or graded differently")
        );
        let week = Duration::from_secs(6 * 86_400);
        assert_eq!(
            unreliable(Some(&context()), &now, &[], week, today).as_deref(),
            Some("it is 7d old (--baseline-max-age 6d)")
        );
        assert!(unreliable(None, &now, &[], fortnight, today)
            .unwrap()
            .contains("written before reports had `run`"));
        assert_eq!(days_or_hours(Duration::from_secs(36 * 3600)), "36h");
        assert_eq!(days_or_hours(Duration::from_secs(86_400)), "1d");
    }

    #[test]
    fn shards_merge_into_one_run_and_cases_into_one_branch() {
        let later = RunContext {
            started_at: "2026-11-20T10:05:00Z".into(),
            seconds: 30.0,
            shard: Some("2/2".into()),
            ..context()
        };
        let first = RunContext {
            shard: Some("1/2".into()),
            ..context()
        };
        let merged = RunContext::merged([&later, &first].into_iter()).unwrap();
        assert_eq!(
            (merged.started_at.as_str(), merged.seconds, merged.shard),
            ("2026-11-20T10:00:00Z", 30.0, None)
        );
        assert_eq!(RunContext::branch_of([None, None].into_iter()), None);
        assert_eq!(
            RunContext::branch_of([Some("dev"), None, Some("dev")].into_iter()).as_deref(),
            Some("dev")
        );
        assert_eq!(
            RunContext::branch_of([Some("main"), Some("dev")].into_iter()).as_deref(),
            Some("dev, main")
        );
    }
}
