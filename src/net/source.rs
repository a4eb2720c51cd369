//! A stream's source (an HTTP answer, a file, stdin), opened and read on a
//! worker thread and handed to the main thread in chunks through a small
//! bounded channel. The main thread thus never blocks on the network:
//! between chunks it notices a signal, the `--timeout` deadline or a
//! stalled stream (`--idle-timeout`), and stops with a [`Fault`] of kind
//! `Interrupted`, `Terminated` or `Timeout`.

use std::io::{self, Read};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::time::{Duration, Instant};

use anyhow::Result;

use super::signals;
use crate::error::{Fault, Kind};
use crate::output::human;
use crate::settings::Limits;

/// How long the main thread waits for a chunk before it looks at signals again.
const POLL: Duration = Duration::from_millis(50);
/// The most the worker reads at once: a read returns what has arrived, so a
/// slow stream is not delayed, and a fast one (a file) is passed on in few
/// large chunks.
const CHUNK: usize = 256 * 1024;
/// Chunks in flight between the worker and the main thread: memory stays
/// bounded however fast the source is.
const IN_FLIGHT: usize = 4;

enum Chunk {
    Opened,
    OpenFailed(anyhow::Error),
    Data(Vec<u8>),
    End,
    Failed(io::Error),
}

/// The source as seen by the main thread: a `Read` that may stop. A stop
/// comes out of [`Read::read`] as an `io::Error` carrying its [`Fault`]
/// (see [`crate::error::fault_of_io`]).
pub struct Source {
    chunks: Receiver<Chunk>,
    limits: Limits,
    started: Instant,
    last_arrival: Instant,
    current: Vec<u8>,
    position: usize,
    finished: bool,
}

impl Source {
    /// Starts a worker that calls `open` (send the request, open the file)
    /// and then reads the source to its end. `started` is when the command
    /// (or the turn) began, for `--timeout`.
    pub fn start<F>(open: F, limits: Limits, started: Instant) -> Source
    where
        F: FnOnce() -> Result<Box<dyn Read + Send>> + Send + 'static,
    {
        let (sender, chunks) = mpsc::sync_channel(IN_FLIGHT);
        let worker = std::thread::Builder::new().spawn({
            let sender = sender.clone();
            move || pump(open, &sender)
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
            limits,
            started,
            last_arrival: Instant::now(),
            current: Vec::new(),
            position: 0,
            finished: false,
        }
    }

    /// Waits until the source is open (for a request: the response status
    /// arrived and was a success). The error is why it did not open, or
    /// the stop that came first.
    pub fn wait_open(&mut self) -> Result<()> {
        match self.next_chunk()? {
            Chunk::Opened => Ok(()),
            Chunk::OpenFailed(err) => Err(err),
            _ => Err(anyhow::anyhow!("the source sent data before it was open")),
        }
    }

    /// The next chunk, or the stop that came first.
    fn next_chunk(&mut self) -> Result<Chunk, Fault> {
        loop {
            if let Some(signal) = signals::received() {
                return Err(Fault::new(signal.kind(), format!("interrupted by {}", signal.name())));
            }
            let now = Instant::now();
            let mut wait = POLL;
            if let Some(limit) = self.limits.timeout {
                let left = (self.started + limit).saturating_duration_since(now);
                if left.is_zero() {
                    return Err(timeout(limit));
                }
                wait = wait.min(left);
            }
            if let Some(limit) = self.limits.idle {
                let left = (self.last_arrival + limit).saturating_duration_since(now);
                if left.is_zero() {
                    return Err(Fault::new(
                        Kind::Timeout,
                        format!(
                            "the stream stalled: nothing received for {} (--idle-timeout)",
                            human(limit)
                        ),
                    ));
                }
                wait = wait.min(left);
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

/// The fault of an expired `--timeout`.
pub fn timeout(limit: Duration) -> Fault {
    Fault::new(Kind::Timeout, format!("--timeout {} expired", human(limit)))
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.position == self.current.len() {
            if self.finished {
                return Ok(0);
            }
            match self.next_chunk() {
                Ok(Chunk::Data(data)) => (self.current, self.position) = (data, 0),
                Ok(Chunk::End | Chunk::Opened) => self.finished = true,
                Ok(Chunk::OpenFailed(err)) => return Err(io::Error::other(err.to_string())),
                Ok(Chunk::Failed(err)) => {
                    self.finished = true;
                    return Err(err);
                }
                Err(stop) => return Err(io::Error::other(stop)),
            }
        }
        let n = buf.len().min(self.current.len() - self.position);
        buf[..n].copy_from_slice(&self.current[self.position..self.position + n]);
        self.position += n;
        Ok(n)
    }
}

/// The worker: open, then read chunks until the end, an error, or the main
/// thread going away (its receiver dropped).
fn pump<F>(open: F, sender: &SyncSender<Chunk>)
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
    // One read buffer; each chunk sent is a copy of what a read gave, so a
    // stream of small reads costs its bytes, not a buffer each.
    let mut buffer = vec![0; CHUNK];
    loop {
        let chunk = match source.read(&mut buffer) {
            Ok(0) => Chunk::End,
            Ok(n) => Chunk::Data(buffer[..n].to_vec()),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => Chunk::Failed(err),
        };
        let last = !matches!(chunk, Chunk::Data(..));
        if sender.send(chunk).is_err() || last {
            return;
        }
    }
}
