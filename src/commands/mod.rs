//! One module per subcommand; each has a `run` that takes its resolved
//! settings (and the outputs) and returns `Ok` or an error whose kind says
//! the exit code.

pub mod abort;
pub mod ask;
pub mod check;
pub mod completions;
pub mod config;
pub mod doctor;
pub mod history;
pub mod man;
pub mod rows;
pub mod session;
pub mod version;

use crate::domain::Network;
use crate::net::http::Http;
use crate::otel::{self, Spans};
use crate::output::Notes;

/// Sends a command's spans at its end, within the export's timeout: a
/// collector that cannot take them is one warning, never the command's
/// exit code or output.
pub(crate) fn send_spans(spans: Option<Spans>, network: &Network, notes: &Notes) {
    let Some(spans) = spans else { return };
    let collected = spans.take();
    let timeout = spans.settings.timeout;
    let sent = Http::new(network.connect_timeout.min(timeout), notes)
        .and_then(|http| otel::export(&spans.settings, &http, &collected));
    if let Err(err) = sent {
        notes.warn(&format!("{err:#}"));
    }
}
