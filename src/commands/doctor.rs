//! `analyst doctor`: the setup checked without asking the agent anything.
//! The settings' checks come from `settings`; here the endpoints are
//! called harmlessly (unless `--offline`), and every finding is printed as
//! a table (or with `-o json` an array): what, how it came out, what was
//! found, where it came from.
//! Exit 0 when all is well, else the code of the first failing check.

use std::io::Write;
use std::time::Instant;

use anyhow::Result;

use crate::api::chat::ChatClient;
use crate::api::data::DataClient;
use crate::api::session;
use crate::error::{fail, kind_of, Kind};
use crate::net::http::{Http, Retry};
use crate::output::Out;
use crate::render::table;
use crate::results::Collected;
use crate::settings::{DoctorSettings, Finding, FindingState};
use crate::telemetry;

/// A chat id no chat has: aborting it proves the key and the agent (404).
const MADE_UP_CHAT: &str = "analyst-doctor-no-such-chat";
/// A session id no session has: revoking it is harmless (204).
const MADE_UP_SESSION: &str = "analyst-doctor-no-such-session";

/// Runs `analyst doctor`.
pub fn run(settings: DoctorSettings, out: &mut Out) -> Result<()> {
    let mut findings = settings.findings.clone();
    if !settings.offline {
        findings.extend(call_endpoints(&settings)?);
    }
    print(&findings, settings.json, settings.width, out)?;
    let failed: Vec<&Finding> = findings
        .iter()
        .filter(|finding| matches!(finding.state, FindingState::Failed(_)))
        .collect();
    match failed.first() {
        None => Ok(()),
        Some(first) => {
            let FindingState::Failed(kind) = first.state else {
                return Ok(());
            };
            Err(fail(
                kind,
                format!(
                    "{} of {} checks failed; the first: {}",
                    failed.len(),
                    findings.len(),
                    first.what
                ),
            ))
        }
    }
}

/// Prints the findings: a table fitted to `width`, or with `json` an
/// array of `{check, result, exitCode, found, from}` (`result` one of `ok`,
/// `unset`, `failed`; `exitCode` the code a failure stands for, else null).
fn print(findings: &[Finding], json: bool, width: Option<u16>, out: &mut Out) -> Result<()> {
    if json {
        let array: Vec<serde_json::Value> = findings
            .iter()
            .map(|finding| {
                let (result, exit_code) = match finding.state {
                    FindingState::Ok => ("ok", None),
                    FindingState::Unset => ("unset", None),
                    FindingState::Failed(kind) => ("failed", Some(kind.exit_code())),
                };
                serde_json::json!({
                    "check": finding.what,
                    "result": result,
                    "exitCode": exit_code,
                    "found": finding.found,
                    "from": finding.from,
                })
            })
            .collect();
        serde_json::to_writer_pretty(&mut *out, &array)?;
        writeln!(out)?;
    } else {
        let rows: Vec<Vec<String>> = findings
            .iter()
            .map(|finding| {
                let result = match finding.state {
                    FindingState::Ok => "ok".to_string(),
                    FindingState::Unset => "not set".to_string(),
                    FindingState::Failed(kind) => format!("FAIL (exit {})", kind.exit_code()),
                };
                vec![
                    finding.what.clone(),
                    result,
                    finding.found.clone(),
                    finding.from.clone(),
                ]
            })
            .collect();
        out.write_all(table::wrapped(&["check", "result", "found", "from"], &rows, width).as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

/// Calls each configured endpoint in a way that changes nothing.
fn call_endpoints(settings: &DoctorSettings) -> Result<Vec<Finding>> {
    let network = settings.network;
    let retry = Retry::short_call(network.attempts(), network.limits.timeout);
    let http = Http::new(network.connect_timeout)?;
    let mut findings = Vec::new();
    if let Some(chat) = &settings.chat {
        let client = ChatClient::new(http.clone(), chat);
        let result = match client.abort(MADE_UP_CHAT, retry) {
            Ok(()) => Ok("answered an abort of a made-up chat".to_string()),
            Err(err) if kind_of(&err) == Kind::NotFound => {
                Ok("404 for a made-up chat: the credential and the agent are good".to_string())
            }
            Err(err) => Err(err),
        };
        findings.push(Finding::of(
            "chat API answers",
            &result,
            String::clone,
            "an abort of a made-up chat",
        ));
    }
    if let Some(data) = &settings.data {
        let result = DataClient::new(http.clone(), data, network, Instant::now())
            .and_then(|client| client.run("SELECT 1", &mut Collected::default()))
            .map(|_| "SELECT 1 answered".to_string());
        findings.push(Finding::of(
            "data query API answers",
            &result,
            String::clone,
            "SELECT 1",
        ));
    }
    if let Some((base, key)) = &settings.account {
        let result = session::revoke(&http, base, key, MADE_UP_SESSION, retry)
            .map(|()| "answered a revoke of a made-up session (nothing minted)".to_string());
        findings.push(Finding::of(
            "account host answers",
            &result,
            String::clone,
            "a revoke of a made-up session",
        ));
    }
    if let Some(otlp) = &settings.otlp {
        // An export of no span: a receiver takes it and stores nothing.
        let result = telemetry::export_nothing(otlp, &http).map(|()| "took an export of no span".to_string());
        findings.push(Finding::of(
            "OTLP collector answers",
            &result,
            String::clone,
            "an export of no span",
        ));
    }
    Ok(findings)
}
