//! `analyst session`: exchange the API key for a temporary embed `sessionId`
//! (signed embedding), for the user the identity flags describe.

use std::io::{Read, Write};

use anyhow::Result;
use clap::ArgMatches;
use serde_json::{json, Value};

use crate::cli::{GlobalArgs, SessionArgs, SessionOutput};
use crate::config::{api_key, service_url, session_url};
use crate::exit::{usage, ExitCode, Fault};
use crate::http::{shorten, Credential, Http, Retry};
use crate::output::{Notes, Out};

/// Tries in all (transient failures only).
const ATTEMPTS: u32 = 4;
/// The largest answer read: a sessionId is a few dozen bytes.
const ANSWER_LIMIT: u64 = 1 << 20;

/// Runs `analyst session`.
pub fn run(args: SessionArgs, matches: Option<&ArgMatches>, global: &GlobalArgs, notes: &Notes) -> Result<ExitCode> {
    let base = args.base_url.as_deref().ok_or_else(|| {
        usage("no account URL: set ANALYST_BASE_URL or pass --base-url (e.g. https://<account>.cubecloud.dev)")
    })?;
    let url = session_url(&service_url(base, "--base-url")?)?;
    if args.identity.persistent || args.identity.ttl.is_some() {
        return Err(usage(
            "--persistent and --ttl describe users created by the chat; generate-session does not take them",
        ));
    }
    let body = args.identity.to_input(matches).validate()?;
    let key = api_key(&args.key, global, notes)?;
    let http = Http::new(global.connect_timeout, notes)?;
    let retry = Retry::short_call(ATTEMPTS, global.timeout);
    let response = http.post_json_retrying(&url, Credential::ApiKey(&key), &body, "application/json", retry)?;
    let mut text = String::new();
    response
        .take(ANSWER_LIMIT)
        .read_to_string(&mut text)
        .map_err(|err| Fault::new(ExitCode::Service, format!("reading the generate-session answer: {err}")))?;
    let session_id = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|answer| answer.get("sessionId")?.as_str().map(str::to_string))
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            Fault::new(
                ExitCode::Service,
                format!("the service answered without a sessionId: {}", shorten(&text)),
            )
        })?;
    let mut out = Out::stdout();
    match args.output {
        SessionOutput::Text => writeln!(out, "{session_id}")?,
        SessionOutput::Json => writeln!(out, "{}", json!({ "sessionId": session_id }))?,
    }
    out.flush()?;
    Ok(ExitCode::Success)
}
