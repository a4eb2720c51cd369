//! `analyst abort`: stop a running chat, as its owner.

use anyhow::Result;

use crate::api::chat::ChatClient;
use crate::net::http::{Http, Retry};
use crate::output::Notes;
use crate::settings::AbortSettings;

/// Runs `analyst abort`.
pub fn run(settings: AbortSettings, notes: &Notes) -> Result<()> {
    let http = Http::new(settings.network.connect_timeout)?;
    let client = ChatClient::new(http, &settings.chat);
    let retry = Retry::short_call(settings.network.attempts(), settings.network.limits.timeout);
    client.abort(&settings.chat_id, retry)?;
    notes.info(&format!("chat {} aborted", settings.chat_id));
    Ok(())
}
