//! The owner of `rows`' query of the data query API, as [`super::Exchange`]
//! is of a turn: it runs the query (page after page, as its plan says),
//! traces it — an `execute_tool data query` span with the rows it fetched
//! and the requests it took, or why it failed — and sends the span when
//! a collector is set: no command sends spans.

use std::time::SystemTime;

use anyhow::Result;

use crate::api::data::{DataClient, Plan};
use crate::error::Fault;
use crate::output::Notes;
use crate::results::RowSink;
use crate::telemetry::{self, OtlpSettings, Spans};

/// Runs `plan` (of `sql`) with `client` into `sink` (`expected`: the
/// result's `totalRows`, when known) and traces it to `otlp`'s collector:
/// the rows and the requests. A signal that ended the export of its span
/// is the outer `Err`; the query's own failure, the inner one.
pub fn fetch(
    client: &DataClient,
    sql: &str,
    plan: &Plan,
    expected: Option<u64>,
    sink: &mut dyn RowSink,
    otlp: Option<&OtlpSettings>,
    notes: &Notes,
) -> Result<Result<(u64, u64)>, Fault> {
    let began = SystemTime::now();
    let fetched = client.run_plan(plan, expected, sink);
    if let Some(otlp) = otlp {
        let spans = Spans::new(otlp.clone());
        let outcome = match &fetched {
            Ok((rows, requests)) => Ok((*rows, *requests)),
            Err(err) => Err(format!("{err:#}")),
        };
        spans.add_query(sql, outcome, began);
        telemetry::export(&spans, client.connect_timeout(), notes, None)?;
    }
    Ok(fetched)
}
