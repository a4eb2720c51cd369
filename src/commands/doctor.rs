//! `analyst doctor`: the setup checked without asking the agent anything.
//! The settings' checks come from `settings`; here the endpoints are
//! called harmlessly (unless `--offline`), and every finding is printed as
//! a table: what, how it came out, what was found, where it came from.
//! Exit 0 when all is well, else the code of the first failing check.

use std::io::Write;
use std::time::Instant;

use anyhow::Result;
use comfy_table::{presets, Table};

use crate::api::chat::ChatClient;
use crate::api::data::DataClient;
use crate::api::session;
use crate::error::{fail, kind_of, Kind};
use crate::net::http::{Http, Retry};
use crate::output::{Notes, Out};
use crate::results::Collected;
use crate::settings::{DoctorSettings, Finding, FindingState};
use crate::text::visible;

/// A chat id no chat has: aborting it proves the key and the agent (404).
const MADE_UP_CHAT: &str = "analyst-doctor-no-such-chat";
/// A session id no session has: revoking it is harmless (204).
const MADE_UP_SESSION: &str = "analyst-doctor-no-such-session";

/// Runs `analyst doctor`.
pub fn run(settings: DoctorSettings, notes: &Notes, out: &mut Out) -> Result<()> {
    let mut findings = settings.findings.clone();
    if !settings.offline {
        findings.extend(call_endpoints(&settings, notes)?);
    }
    print(&findings, out)?;
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

/// Prints the findings as a table on stdout.
fn print(findings: &[Finding], out: &mut Out) -> Result<()> {
    let rows = findings.iter().map(|finding| {
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
    });
    write_table(&["check", "result", "found", "from"], rows, out)
}

/// Writes `rows` under `header` as a table on stdout (cells made visible).
pub fn write_table(header: &[&str], rows: impl Iterator<Item = Vec<String>>, out: &mut Out) -> Result<()> {
    let mut table = Table::new();
    table.load_preset(presets::UTF8_FULL_CONDENSED);
    table.set_header(header.iter().copied());
    for row in rows {
        table.add_row(row.iter().map(|cell| visible(cell).into_owned()));
    }
    writeln!(out, "{table}")?;
    out.flush()?;
    Ok(())
}

/// Calls each configured endpoint in a way that changes nothing.
fn call_endpoints(settings: &DoctorSettings, notes: &Notes) -> Result<Vec<Finding>> {
    let network = settings.network;
    let retry = Retry::short_call(network.attempts(), network.limits.timeout);
    let mut findings = Vec::new();
    if let Some(chat) = &settings.chat {
        let client = ChatClient::new(Http::new(network.connect_timeout, notes)?, chat);
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
        let result = DataClient::new(
            Http::new(network.connect_timeout, notes)?,
            data,
            network,
            Instant::now(),
            notes,
        )
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
        let http = Http::new(network.connect_timeout, notes)?;
        let result = session::revoke(&http, base, key, MADE_UP_SESSION, retry)
            .map(|()| "answered a revoke of a made-up session (nothing minted)".to_string());
        findings.push(Finding::of(
            "account host answers",
            &result,
            String::clone,
            "a revoke of a made-up session",
        ));
    }
    Ok(findings)
}
