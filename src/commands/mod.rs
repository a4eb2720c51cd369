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
use crate::history::{History, Recording};
use crate::net::http::Http;
use crate::otel::{self, Spans};
use crate::output::Notes;

/// Sends a command's spans at its end, within the export's timeout: a
/// collector that cannot take them is one warning, never the command's
/// exit code or output; with the history on (`recording`), what it did
/// not take is kept there for `analyst history push`.
pub(crate) fn send_spans(spans: Option<Spans>, network: &Network, notes: &Notes, recording: Option<&Recording>) {
    let Some(spans) = spans else { return };
    let collected = spans.take();
    if collected.is_empty() {
        return;
    }
    let request = otel::request(&spans.settings, &collected);
    let timeout = spans.settings.timeout;
    let sent = Http::new(network.connect_timeout.min(timeout), notes)
        .and_then(|http| otel::send(&spans.settings, &http, &request));
    let Err(err) = sent else { return };
    let kept = recording.map(|recording| {
        History::open(&recording.db).and_then(|history| history.keep_unsent(collected.len(), &otel::encode(&request)))
    });
    match kept {
        Some(Ok(())) => notes.warn(&format!("{err:#}; kept in the history for 'analyst history push'")),
        Some(Err(why)) => notes.warn(&format!("{err:#}; not kept either: {why:#}")),
        None => notes.warn(&format!("{err:#}")),
    }
}
