//! A stream's source (an HTTP answer, a file, stdin), opened and read on a
//! worker thread and handed to the main thread in chunks through a small
//! bounded channel. The main thread thus never blocks on the network:
//! between chunks it notices a signal, the `--timeout` deadline or a
//! stalled stream (`--idle-timeout`), and stops with a [`Fault`] of kind
//! `Interrupted`, `Terminated` or `Timeout`. Chunks are handed over, not
//! copied ([`Chunks`]), and their buffers go back to the worker for reuse.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::domain::Limits;
use crate::error::{Fault, Kind};
use crate::signals::{timeout, Stop};
use crate::stream::lines::Chunks;
use crate::text::human;

/// How long the main thread waits for a chunk before it looks at signals again.
const POLL: Duration = Duration::from_millis(50);
/// The most the worker reads at once: a read returns what has arrived, so a
/// slow stream is not delayed, and a fast one (a file) is passed on in few
/// large chunks.
const CHUNK: usize = 64 * 1024;
/// Chunks in flight between the worker and the main thread: memory stays
/// bounded however fast the source is.
const IN_FLIGHT: usize = 4;
/// How long a chat stream stopped before its chat id arrived is read on,
/// waiting for the id so that the chat can be aborted.
pub const CHAT_ID_GRACE: Duration = Duration::from_secs(3);

enum Chunk {
    Opened,
    OpenFailed(anyhow::Error),
    Data(Vec<u8>),
    End,
    Failed(io::Error),
}

/// The source as seen by the main thread: [`Chunks`] that may stop. A stop
/// comes out of [`Chunks::next_chunk`] as an `io::Error` carrying its
/// [`Fault`] (see [`crate::error::fault_of_io`]).
pub struct Source {
    chunks: Receiver<Chunk>,
    /// Buffers the main thread is done with, back to the worker.
    spare: SyncSender<Vec<u8>>,
    limits: Limits,
    started: Instant,
    last_arrival: Instant,
    finished: bool,
    /// The worker's request was answered: the stream is open.
    opened: bool,
    /// For a chat stream: set once its chat id is known. A stop that comes
    /// before is held back (for [`CHAT_ID_GRACE`]) until it is.
    chat_id_known: Option<Arc<AtomicBool>>,
    /// A stop held back, and until when.
    held: Option<(Fault, Instant)>,
    /// A stop called for by the command (and the signals).
    stop: Stop,
}

impl Source {
    /// Starts a worker that calls `open` (send the request, open the file)
    /// and then reads the source to its end. `started` is when the command
    /// (or the turn) began, for `--timeout`; `stop` stops it as a signal
    /// does.
    pub fn start<F>(open: F, limits: Limits, started: Instant, stop: &Stop) -> Source
    where
        F: FnOnce() -> Result<Box<dyn Read + Send>> + Send + 'static,
    {
        let (sender, chunks) = mpsc::sync_channel(IN_FLIGHT);
        let (spare, spares) = mpsc::sync_channel(IN_FLIGHT + 1);
        let worker = std::thread::Builder::new().spawn({
            let sender = sender.clone();
            move || pump(open, &sender, &spares)
        });
        // Without a worker (the system has no thread to give), opening
        // fails with why, the way a refused connection does.
        if let Err(err) = worker {
            let _ = sender.send(Chunk::OpenFailed(anyhow::anyhow!(
                "cannot start a thread to read the stream: {err}"
            )));
        }
        Source {
            chunks,
            spare,
            limits,
            started,
            last_arrival: Instant::now(),
            finished: false,
            opened: false,
            chat_id_known: None,
            held: None,
            stop: stop.clone(),
        }
    }

    /// The same source for a chat stream whose chat id is known once
    /// `known` is set: a stop (a signal, the deadline, a stall) before
    /// then lets the stream be read on for [`CHAT_ID_GRACE`], until the id
    /// arrives, so that the chat it started can be aborted; then the stop
    /// ends the stream.
    pub fn holding_stops_until(mut self, known: Arc<AtomicBool>) -> Source {
        self.chat_id_known = Some(known);
        self
    }

    /// The stop that ends the stream now, if any: the first stop seen,
    /// unless it is held back while a chat id is awaited.
    fn stop(&mut self, now: Instant) -> Option<Fault> {
        let stop = match self.held.take() {
            Some(held) => Some(held),
            None => self.new_stop(now).map(|fault| (fault, now + CHAT_ID_GRACE)),
        };
        let (fault, until) = stop?;
        let awaiting = self
            .chat_id_known
            .as_ref()
            .is_some_and(|known| !known.load(Ordering::SeqCst));
        if awaiting && now < until {
            self.held = Some((fault, until));
            return None;
        }
        Some(fault)
    }

    /// A signal, the deadline passed, or the stream stalled.
    fn new_stop(&self, now: Instant) -> Option<Fault> {
        if let Some(stop) = self.stop.stopped() {
            return Some(stop);
        }
        if let Some(limit) = self.limits.timeout {
            if (self.started + limit).saturating_duration_since(now).is_zero() {
                return Some(timeout(limit));
            }
        }
        if let Some(limit) = self.limits.idle {
            if (self.last_arrival + limit).saturating_duration_since(now).is_zero() {
                return Some(Fault::new(
                    Kind::Timeout,
                    format!(
                        "the stream stalled: nothing received for {} (--idle-timeout)",
                        human(limit)
                    ),
                ));
            }
        }
        None
    }

    /// Waits until the source is open (for a request: the response status
    /// arrived and was a success). The error is why it did not open, or
    /// the stop that came first.
    pub fn wait_open(&mut self) -> Result<()> {
        if self.opened {
            return Ok(());
        }
        match self.receive()? {
            Chunk::Opened => {
                self.opened = true;
                Ok(())
            }
            Chunk::OpenFailed(err) => Err(err),
            _ => Err(anyhow::anyhow!("the source sent data before it was open")),
        }
    }

    /// The next chunk from the worker, or the stop that came first.
    fn receive(&mut self) -> Result<Chunk, Fault> {
        loop {
            let now = Instant::now();
            if let Some(stop) = self.stop(now) {
                return Err(stop);
            }
            // Until the next look at signals, the deadline and a stall (a
            // held stop is looked at every poll).
            let mut wait = POLL;
            if self.held.is_none() {
                if let Some(limit) = self.limits.timeout {
                    wait = wait.min((self.started + limit).saturating_duration_since(now));
                }
                if let Some(limit) = self.limits.idle {
                    wait = wait.min((self.last_arrival + limit).saturating_duration_since(now));
                }
            }
            match self.chunks.recv_timeout(wait) {
                Ok(chunk) => {
                    self.last_arrival = Instant::now();
                    return Ok(chunk);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(Chunk::End),
            }
        }
    }
}

impl Chunks for Source {
    fn next_chunk(&mut self, buffer: &mut Vec<u8>) -> io::Result<usize> {
        if self.finished {
            return Ok(0);
        }
        match self.receive() {
            Ok(Chunk::Data(data)) => {
                let done = std::mem::replace(buffer, data);
                // Back to the worker; when it has enough (or is gone), dropped.
                let _ = self.spare.try_send(done);
                Ok(buffer.len())
            }
            Ok(Chunk::End) => {
                self.finished = true;
                Ok(0)
            }
            Ok(Chunk::Opened) => {
                self.opened = true;
                self.next_chunk(buffer)
            }
            Ok(Chunk::OpenFailed(err)) => Err(io::Error::other(err.to_string())),
            Ok(Chunk::Failed(err)) => {
                self.finished = true;
                Err(err)
            }
            Err(stop) => Err(io::Error::other(stop)),
        }
    }
}

/// The worker: open, then read chunks until the end, an error, or the main
/// thread going away (its receiver dropped). Each chunk goes out in a
/// buffer the main thread gave back (`spares`) when there is one.
fn pump<F>(open: F, sender: &SyncSender<Chunk>, spares: &Receiver<Vec<u8>>)
where
    F: FnOnce() -> Result<Box<dyn Read + Send>>,
{
    let mut source = match open() {
        Ok(source) => source,
        Err(err) => {
            let _ = sender.send(Chunk::OpenFailed(err));
            return;
        }
    };
    if sender.send(Chunk::Opened).is_err() {
        return;
    }
    // One read buffer; a short read is sent as a copy of what it gave, so a
    // stream of small reads costs its bytes, not a buffer each. A spare
    // that comes back full (its read filled it: a file, a fast stream) is
    // read into straight away, with no copy.
    let mut buffer = vec![0; CHUNK];
    loop {
        let mut data = spares.try_recv().unwrap_or_default();
        let read = if data.len() == CHUNK {
            source.read(&mut data).inspect(|&n| data.truncate(n))
        } else {
            source.read(&mut buffer).inspect(|&n| {
                data.clear();
                data.extend_from_slice(&buffer[..n]);
            })
        };
        let chunk = match read {
            Ok(0) => Chunk::End,
            Ok(_) => Chunk::Data(data),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => Chunk::Failed(err),
        };
        let last = !matches!(chunk, Chunk::Data(..));
        if sender.send(chunk).is_err() || last {
            return;
        }
    }
}
