//! The spans a collector did not take, kept in the history (as the OTLP
//! request that carried them, protobuf) until `analyst history push`
//! delivers them: oldest first, each deleted once the collector took it.

use anyhow::Result;

use super::{now, History};

/// What a push delivered, and what is left for the next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pushed {
    /// Requests the collector took.
    pub requests: usize,
    /// The spans they carried.
    pub spans: usize,
    /// Requests still kept.
    pub left: usize,
}

impl History {
    /// Keeps `request` (an OTLP export of `spans` spans) for a later push.
    pub fn keep_unsent(&self, spans: usize, request: &[u8]) -> Result<()> {
        self.connection
            .execute(
                "INSERT INTO unsent_spans (at, spans, request) VALUES (?1, ?2, ?3)",
                rusqlite::params![now(), spans as i64, request],
            )
            .map_err(|err| self.failed(err))?;
        Ok(())
    }

    /// Hands each kept request to `send`, oldest first, deleting each it
    /// took; the first it refuses stops the push (that one and the rest
    /// stay). The database is held for writing meanwhile, so two pushes
    /// never send one request twice. `Err` carries what was delivered.
    pub fn push_unsent(
        &mut self,
        mut send: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<Pushed, (Pushed, anyhow::Error)> {
        let path = self.path.display().to_string();
        let failed = |err: rusqlite::Error| {
            (
                Pushed::default(),
                crate::error::fail(crate::error::Kind::Usage, format!("history {path}: {err}")),
            )
        };
        let transaction = self
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(failed)?;
        let kept: Vec<(i64, i64, Vec<u8>)> = {
            let mut statement = transaction
                .prepare("SELECT id, spans, request FROM unsent_spans ORDER BY id")
                .map_err(failed)?;
            let rows = statement
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
                .map_err(failed)?;
            rows.collect::<rusqlite::Result<_>>().map_err(failed)?
        };
        let mut pushed = Pushed {
            left: kept.len(),
            ..Pushed::default()
        };
        let mut refused = None;
        for (id, spans, request) in kept {
            if let Err(err) = send(&request) {
                refused = Some(err);
                break;
            }
            transaction
                .execute("DELETE FROM unsent_spans WHERE id = ?1", [id])
                .map_err(failed)?;
            pushed.requests += 1;
            pushed.spans += spans as usize;
            pushed.left -= 1;
        }
        transaction.commit().map_err(failed)?;
        match refused {
            Some(err) => Err((pushed, err)),
            None => Ok(pushed),
        }
    }
}
