//! The spans a collector did not take, kept in the history (as the OTLP
//! request that carried them, protobuf, with the message ids of the turns
//! they describe) until `analyst history push` delivers them: oldest first,
//! one batch at a time, each in short transactions of its own and none
//! held while a request is on the wire — a batch is claimed for the time
//! its request may take, sent, and deleted as soon as the collector takes
//! it. A push stopped at any moment sends again at most the batch that was
//! in flight, with the same span ids; another process records meanwhile
//! as usual. A batch the collector refuses for good (a 4xx that is not
//! about credentials: 400, 413, …) is kept, marked with why, and the push
//! moves on past it.

use std::time::Duration;

use anyhow::Result;
use rusqlite::{params, OptionalExtension, Transaction, TransactionBehavior};

use super::{after, now, History};

/// What a push delivered, and what is left for the next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pushed {
    /// Requests the collector took.
    pub requests: usize,
    /// The spans they carried.
    pub spans: usize,
    /// Requests still kept (refused ones included).
    pub left: usize,
    /// Requests the collector refused for good (kept, marked).
    pub refused: usize,
}

/// How a collector answered one batch.
pub enum Delivery {
    /// It took the batch.
    Taken,
    /// It refused this batch for good (`why`): kept, marked, passed over.
    Refused(String),
}

impl History {
    /// Keeps `request` (an OTLP export of `spans` spans describing the
    /// turns of `message_ids`) for a later push.
    pub fn keep_unsent(&self, spans: usize, request: &[u8], message_ids: &[String]) -> Result<()> {
        let failed = |err| self.failed(err);
        let transaction = self.connection.unchecked_transaction().map_err(failed)?;
        transaction
            .execute(
                "INSERT INTO unsent_spans (at, spans, request) VALUES (?1, ?2, ?3)",
                params![now(), spans as i64, request],
            )
            .map_err(failed)?;
        let id = transaction.last_insert_rowid();
        for message_id in message_ids {
            transaction
                .execute(
                    "INSERT INTO unsent_turns (unsent_id, message_id) VALUES (?1, ?2)",
                    params![id, message_id],
                )
                .map_err(failed)?;
        }
        transaction.commit().map_err(failed)
    }

    /// Hands each kept request to `send`, oldest first, one at a time: it
    /// is claimed for `lease` (another push passes it over meanwhile) in a
    /// transaction of its own, sent with no transaction open, and deleted
    /// (or marked refused) in another. The first failure that is not a
    /// refusal of that batch alone stops the push; it and the rest stay.
    /// `Err` carries what was delivered.
    pub fn push_unsent(
        &self,
        lease: Duration,
        mut send: impl FnMut(&[u8]) -> Result<Delivery>,
    ) -> Result<Pushed, (Pushed, anyhow::Error)> {
        let mut pushed = Pushed::default();
        loop {
            let claimed = self.claim(lease).map_err(|err| (pushed, err))?;
            let Some((id, spans, request)) = claimed else { break };
            match send(&request) {
                Ok(Delivery::Taken) => {
                    self.delivered(id).map_err(|err| (pushed, err))?;
                    pushed.requests += 1;
                    pushed.spans += spans;
                }
                Ok(Delivery::Refused(why)) => {
                    self.mark_refused(id, &why).map_err(|err| (pushed, err))?;
                    pushed.refused += 1;
                }
                Err(err) => {
                    // Free again at once for the next push.
                    let _ = self.release(id);
                    pushed.left = self.unsent_left().unwrap_or(0);
                    return Err((pushed, err));
                }
            }
        }
        pushed.left = self.unsent_left().map_err(|err| (pushed, err))?;
        Ok(pushed)
    }

    /// The oldest batch that is neither refused nor claimed by a push in
    /// flight, claimed for `lease`: its id, spans and request.
    fn claim(&self, lease: Duration) -> Result<Option<(i64, usize, Vec<u8>)>> {
        let failed = |err| self.failed(err);
        let transaction =
            Transaction::new_unchecked(&self.connection, TransactionBehavior::Immediate).map_err(failed)?;
        let found: Option<(i64, i64, Vec<u8>)> = transaction
            .query_row(
                "SELECT id, spans, request FROM unsent_spans
                 WHERE refused IS NULL AND (claimed_until IS NULL OR claimed_until < ?1)
                 ORDER BY id LIMIT 1",
                params![now()],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .optional()
            .map_err(failed)?;
        if let Some((id, ..)) = &found {
            transaction
                .execute(
                    "UPDATE unsent_spans SET claimed_until = ?1 WHERE id = ?2",
                    params![after(lease), id],
                )
                .map_err(failed)?;
        }
        transaction.commit().map_err(failed)?;
        Ok(found.map(|(id, spans, request)| (id, spans as usize, request)))
    }

    /// The batch `id` was taken: deleted, with its links.
    fn delivered(&self, id: i64) -> Result<()> {
        self.connection
            .execute("DELETE FROM unsent_spans WHERE id = ?1", [id])
            .map_err(|err| self.failed(err))?;
        Ok(())
    }

    /// The batch `id` was refused for good: kept, with why, never sent again.
    fn mark_refused(&self, id: i64, why: &str) -> Result<()> {
        self.connection
            .execute(
                "UPDATE unsent_spans SET refused = ?1, claimed_until = NULL WHERE id = ?2",
                params![why, id],
            )
            .map_err(|err| self.failed(err))?;
        Ok(())
    }

    /// The claim on batch `id` given up.
    fn release(&self, id: i64) -> Result<()> {
        self.connection
            .execute("UPDATE unsent_spans SET claimed_until = NULL WHERE id = ?1", [id])
            .map_err(|err| self.failed(err))?;
        Ok(())
    }

    /// How many batches are kept, refused ones included.
    fn unsent_left(&self) -> Result<usize> {
        self.connection
            .query_row("SELECT count(*) FROM unsent_spans", [], |row| row.get::<_, i64>(0))
            .map(|count| count as usize)
            .map_err(|err| self.failed(err))
    }
}
