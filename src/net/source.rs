//! A stream's source (an HTTP answer, stdin, a pipe, a FIFO), opened and read on a
//! worker thread and handed to the main thread in chunks through a small
//! bounded channel. The main thread thus never blocks on the network:
//! between chunks it notices a signal, the `--timeout` deadline or a
//! stalled stream (`--idle-timeout`), and stops with a [`Fault`] of kind
//! `Interrupted`, `Terminated` or `Timeout`. Chunks are handed over, not
//! copied ([`Chunks`]), and their buffers go back to the worker for reuse.
//! A regular file, whose reads wait on nothing but the disk, is read on
//! the main thread itself ([`FileChunks`]), the same stops looked at
//! between its chunks. A saved stream ([`SavedStream`]) is such a source of
//! chunks; the owner of a turn reads it like any other.

use std::fs::File;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::domain::Limits;
use crate::error::{usage, Fault, Kind};
use crate::signals::{self, timeout, Stop};
use crate::stream::lines::{Chunks, Reads, READ_SIZE};
use crate::text::human;

/// How long the main thread waits for a chunk before it looks at signals again.
const POLL: Duration = Duration::from_millis(50);
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
    watch: Watch,
    finished: bool,
    /// The worker's request was answered: the stream is open.
    opened: bool,
    /// For a chat stream: set once its chat id is known. A stop that comes
    /// before is held back (for [`CHAT_ID_GRACE`]) until it is.
    chat_id_known: Option<Arc<AtomicBool>>,
    /// A stop held back, and until when.
    held: Option<(Fault, Instant)>,
}

/// What ends a stream early: a stop (a signal, or the command's), the
/// `--timeout` deadline, a stall (`--idle-timeout`).
struct Watch {
    limits: Limits,
    /// When the command (or the turn) began, for `--timeout`.
    started: Instant,
    /// When the last chunk arrived, for `--idle-timeout`.
    last_arrival: Instant,
    stop: Stop,
}

impl Watch {
    fn new(limits: Limits, started: Instant, stop: &Stop) -> Watch {
        Watch {
            limits,
            started,
            last_arrival: Instant::now(),
            stop: stop.clone(),
        }
    }

    /// A signal, the deadline passed, or the stream stalled.
    fn stopped(&self, now: Instant) -> Option<Fault> {
        if let Some(stop) = self.stop.stopped().or_else(signals::expired) {
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

    /// How long to wait for the next chunk before looking again: at most
    /// `poll`, and not past the deadline or the stall limit.
    fn wait(&self, now: Instant, poll: Duration) -> Duration {
        let mut wait = poll;
        if let Some(limit) = self.limits.timeout {
            wait = wait.min((self.started + limit).saturating_duration_since(now));
        }
        if let Some(limit) = self.limits.idle {
            wait = wait.min((self.last_arrival + limit).saturating_duration_since(now));
        }
        wait
    }
}

/// A regular file (or bytes in memory) as [`Chunks`], read on the calling
/// thread: its reads wait on nothing but the disk, so the stops a
/// [`Source`] notices are looked at between chunks, and no worker hands
/// chunks over (they cost 0.02–0.03 s of a 105 MB replay's 0.16 s of CPU).
pub struct FileChunks<R> {
    file: Reads<R>,
    watch: Watch,
}

impl<R: Read> FileChunks<R> {
    /// Reads `file`; `started`, `limits` and `stop` as for [`Source::start`].
    pub fn new(file: R, limits: Limits, started: Instant, stop: &Stop) -> FileChunks<R> {
        FileChunks {
            file: Reads(file),
            watch: Watch::new(limits, started, stop),
        }
    }
}

impl<R: Read> Chunks for FileChunks<R> {
    fn next_chunk(&mut self, buffer: &mut Vec<u8>) -> io::Result<usize> {
        let now = Instant::now();
        if let Some(stop) = self.watch.stopped(now) {
            return Err(io::Error::other(stop));
        }
        self.watch.last_arrival = now;
        self.file.next_chunk(buffer)
    }
}

/// Opens a saved stream in a worker: what a FIFO's opening waits on (its
/// writer) a signal or `--timeout` can end.
pub type Opener = Box<dyn FnOnce() -> Result<Box<dyn Read + Send>> + Send>;

/// A saved stream to read (`ask --replay`, `rows --from`), as the way to
/// read it fits it.
pub enum SavedStream {
    /// A regular file (or bytes in memory): read on the main thread.
    File(Box<dyn Read + Send>),
    /// Standard input, a pipe, a FIFO: opened and read by a worker, as
    /// opening a FIFO waits for its writer and reads may wait on it,
    /// however long.
    Pipe(Opener),
}

impl SavedStream {
    /// The stream at `path` (`-`: standard input); `flag` names it in the
    /// error when it cannot be read or is a folder (a usage error). Only a
    /// regular file is opened here: opening anything else may wait.
    pub fn open(path: &str, flag: &str) -> Result<SavedStream> {
        if path == "-" {
            return Ok(SavedStream::Pipe(Box::new(|| Ok(Box::new(io::stdin())))));
        }
        let cannot = {
            let (path, flag) = (path.to_string(), flag.to_string());
            move |err: io::Error| usage(format!("cannot read {flag} file {path}: {err}"))
        };
        match std::fs::metadata(path) {
            Ok(metadata) if metadata.is_dir() => {
                Err(usage(format!("{flag} {path}: that is a folder, not a saved stream")))
            }
            Ok(metadata) if !metadata.is_file() => {
                let path = path.to_string();
                Ok(SavedStream::Pipe(Box::new(move || match File::open(&path) {
                    Ok(file) => Ok(Box::new(file)),
                    Err(err) => Err(cannot(err)),
                })))
            }
            _ => match File::open(path) {
                Ok(file) => Ok(SavedStream::File(Box::new(file))),
                Err(err) => Err(cannot(err)),
            },
        }
    }

    /// The stream as a source of chunks, stopped as a [`Source`] is: by a
    /// signal, `stop`, or `limits` counted from `started`. A pipe or FIFO
    /// is opened by its worker; the wait for it ends the same way.
    pub fn chunks(self, limits: Limits, started: Instant, stop: &Stop) -> Result<SavedChunks> {
        match self {
            SavedStream::File(file) => Ok(SavedChunks::File(FileChunks::new(file, limits, started, stop))),
            SavedStream::Pipe(open) => {
                let mut source = Source::start(open, limits, started, stop);
                source.wait_open()?;
                Ok(SavedChunks::Pipe(source))
            }
        }
    }
}

/// A saved stream's chunks: a regular file read on the calling thread, or
/// a pipe's from its worker.
pub enum SavedChunks {
    /// A regular file (or bytes in memory).
    File(FileChunks<Box<dyn Read + Send>>),
    /// Standard input, a pipe, a FIFO.
    Pipe(Source),
}

impl Chunks for SavedChunks {
    fn next_chunk(&mut self, buffer: &mut Vec<u8>) -> io::Result<usize> {
        match self {
            SavedChunks::File(file) => file.next_chunk(buffer),
            SavedChunks::Pipe(source) => source.next_chunk(buffer),
        }
    }
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
            watch: Watch::new(limits, started, stop),
            finished: false,
            opened: false,
            chat_id_known: None,
            held: None,
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
            None => self.watch.stopped(now).map(|fault| (fault, now + CHAT_ID_GRACE)),
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
            let wait = match self.held {
                Some(_) => POLL,
                None => self.watch.wait(now, POLL),
            };
            match self.chunks.recv_timeout(wait) {
                // A source that failed once a stop was due (the client's
                // own timer ends a body at the command's deadline) or
                // while one was held back ends with that stop: it came
                // first.
                Ok(chunk @ (Chunk::OpenFailed(_) | Chunk::Failed(_))) => {
                    let due = self
                        .stop(Instant::now())
                        .or_else(|| self.held.take().map(|(fault, _)| fault));
                    match due {
                        Some(stop) => return Err(stop),
                        None => return Ok(chunk),
                    }
                }
                Ok(chunk) => {
                    self.watch.last_arrival = Instant::now();
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
    // read into straight away, with no copy. A read returns what has
    // arrived, so a slow stream is not held back to fill a buffer.
    let mut buffer = vec![0; READ_SIZE];
    loop {
        let mut data = spares.try_recv().unwrap_or_default();
        let read = if data.len() == READ_SIZE {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::fault_of_io;
    use crate::stream::lines::Chunks;

    /// The fault a read ended with.
    fn stopped_by(chunks: &mut impl Chunks) -> Kind {
        let err = chunks.next_chunk(&mut Vec::new()).expect_err("a stop");
        fault_of_io(&err).expect("a fault").kind
    }

    #[test]
    fn a_file_is_read_whole_in_chunks() {
        let bytes: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        let stop = Stop::default();
        let mut file = FileChunks::new(io::Cursor::new(bytes.clone()), Limits::default(), Instant::now(), &stop);
        let (mut read, mut buffer) = (Vec::new(), Vec::new());
        loop {
            match file.next_chunk(&mut buffer).unwrap() {
                0 => break,
                n => read.extend_from_slice(&buffer[..n]),
            }
        }
        assert_eq!(read, bytes);
    }

    #[test]
    fn a_file_stops_between_chunks_for_the_deadline_and_a_stop() {
        let bytes = vec![b'x'; 3 * READ_SIZE];
        let limits = Limits {
            timeout: Some(Duration::from_millis(1)),
            idle: None,
        };
        let long_ago = Instant::now() - Duration::from_secs(1);
        let mut late = FileChunks::new(io::Cursor::new(bytes.clone()), limits, long_ago, &Stop::default());
        assert_eq!(stopped_by(&mut late), Kind::Timeout);

        let stop = Stop::default();
        let mut file = FileChunks::new(io::Cursor::new(bytes), Limits::default(), Instant::now(), &stop);
        assert_eq!(file.next_chunk(&mut Vec::new()).unwrap(), READ_SIZE);
        stop.call(Fault::new(Kind::Interrupted, "interrupted"));
        assert_eq!(stopped_by(&mut file), Kind::Interrupted);
    }
}
