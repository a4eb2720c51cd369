//! `analyst abort`: stop a running chat. Also the abort call `ask` makes
//! when it is interrupted, times out, stalls, or loses its reader.

use anyhow::{Context, Result};
use clap::ArgMatches;
use reqwest::Url;
use serde_json::json;

use crate::cli::{AbortArgs, GlobalArgs};
use crate::config::{abort_url, api_key, chat_url, Secret, SessionSettings};
use crate::exit::{code_of, usage, ExitCode};
use crate::http::{Credential, Http, Retry};
use crate::output::Notes;

/// Tries of `analyst abort` (transient failures only).
const ATTEMPTS: u32 = 4;

/// Runs `analyst abort`.
pub fn run(args: AbortArgs, matches: Option<&ArgMatches>, global: &GlobalArgs, notes: &Notes) -> Result<ExitCode> {
    let url = abort_url(&chat_url(&args.endpoint)?)?;
    let settings = args.identity.to_input(matches).validate()?;
    let chat_id = args.chat_id.trim();
    if chat_id.is_empty() {
        return Err(usage("--chat-id is empty"));
    }
    let key = api_key(&args.endpoint.key, global, notes)?;
    let http = Http::new(global.connect_timeout, notes)?;
    let retry = Retry::short_call(ATTEMPTS, global.timeout);
    abort_chat(&http, &url, &key, chat_id, &settings, retry)?;
    notes.info(&format!("chat {chat_id} aborted"));
    Ok(ExitCode::Success)
}

/// Asks the service to stop `chat_id`, as the owner named by `settings`.
/// 204 (or any success) is done; 403 and 404 say whose chat it is not.
pub fn abort_chat(
    http: &Http,
    url: &Url,
    key: &Secret,
    chat_id: &str,
    settings: &SessionSettings,
    retry: Retry,
) -> Result<()> {
    let body = json!({ "chatId": chat_id, "sessionSettings": settings });
    match http.post_json_retrying(url, Credential::ApiKey(key), &body, "application/json", retry) {
        Ok(_) => Ok(()),
        Err(err) => {
            let context = match code_of(&err) {
                ExitCode::Forbidden => {
                    format!("you do not own this chat ({chat_id}): give the identity that started it")
                }
                ExitCode::NotFound => format!("chat {chat_id} was not found"),
                _ => format!("aborting chat {chat_id}"),
            };
            Err(err).context(context)
        }
    }
}
