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
use crate::signals;

use anyhow::Result;

/// Sends a command's spans at its end through the one way out: within the
/// export's timeout and what `--timeout` has left, ended at once by a
/// signal. A collector that cannot take them is one warning, never the
/// command's exit code or output; with the history on (`recording`), what
/// it did not take is kept there for `analyst history push`. `Err` only
/// for a signal that came (then the command ends as the signal says).
pub(crate) fn send_spans(
    spans: Option<Spans>,
    network: &Network,
    notes: &Notes,
    recording: Option<&Recording>,
) -> Result<()> {
    let Some(spans) = spans else { return Ok(()) };
    let collected = spans.take();
    if collected.is_empty() {
        return Ok(());
    }
    let request = otel::request(&spans.settings, &collected);
    let timeout = spans.settings.timeout;
    let sent =
        Http::new(network.connect_timeout.min(timeout)).and_then(|http| otel::send(&spans.settings, &http, &request));
    let Err(err) = sent else { return Ok(()) };
    let kept = recording.map(|recording| {
        let message_ids: Vec<String> = collected
            .iter()
            .filter_map(|span| span.message_id().map(str::to_string))
            .collect();
        History::open(&recording.db)
            .and_then(|history| history.keep_unsent(collected.len(), &otel::encode(&request), &message_ids))
    });
    match kept {
        Some(Ok(())) => notes.warn(&format!("{err:#}; kept in the history for 'analyst history push'")),
        Some(Err(why)) => notes.warn(&format!("{err:#}; not kept either: {why:#}")),
        None => notes.warn(&format!("{err:#}")),
    }
    match signals::received() {
        Some(signal) => Err(signal.fault().into()),
        None => Ok(()),
    }
}
