//! `analyst session`: exchange the API key for a temporary embed `sessionId`
//! (signed embedding), for the user the identity flags describe; `analyst
//! session revoke` ends sessions.

use std::io::Write;

use anyhow::Result;
use serde_json::json;

use crate::api::session;
use crate::cli::SessionOutput;
use crate::net::http::{Http, Retry};
use crate::output::{Notes, Out};
use crate::settings::{RevokeSettings, SessionCommandSettings};

/// Runs `analyst session`.
pub fn run(settings: SessionCommandSettings, out: &mut Out) -> Result<()> {
    let http = Http::new(settings.network.connect_timeout)?;
    let retry = Retry::short_call(settings.network.attempts(), settings.network.limits.timeout);
    let session_id = session::generate(
        &http,
        &settings.base_url,
        &settings.key,
        &settings.identity,
        &settings.embedding,
        retry,
    )?;
    match settings.output {
        SessionOutput::Text => writeln!(out, "{session_id}")?,
        SessionOutput::Json => writeln!(out, "{}", json!({ "sessionId": session_id }))?,
    }
    out.flush()?;
    Ok(())
}

/// Runs `analyst session revoke`: each id in turn, stopping at the first
/// failure.
pub fn revoke(settings: RevokeSettings, notes: &Notes) -> Result<()> {
    let http = Http::new(settings.network.connect_timeout)?;
    for session_id in &settings.session_ids {
        let retry = Retry::short_call(settings.network.attempts(), settings.network.limits.timeout);
        session::revoke(&http, &settings.base_url, &settings.key, session_id, retry)?;
        notes.info(&format!("session {session_id} revoked"));
    }
    Ok(())
}
