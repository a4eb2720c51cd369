//! The stream's source, read on a worker thread and handed to the main
//! thread in chunks through a small bounded channel. The main thread thus
//! never blocks on the network: between chunks it notices a signal, the
//! `--timeout` deadline or a stalled stream (`--idle-timeout`), and stops
//! with a [`Stop`] it can act on (abort the chat, flush, exit).

use std::fmt;
use std::io::{self, Read};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::time::{Duration, Instant};

use crate::exit::ExitCode;
use crate::signals::{self, Signal};

/// How long the main thread waits for a chunk before it looks at signals again.
const POLL: Duration = Duration::from_millis(50);
/// Size of the chunks the worker reads: a read returns what has arrived, so
/// a slow stream is not delayed.
const CHUNK: usize = 128 * 1024;
/// Chunks in flight between the worker and the main thread: memory stays
/// bounded (1.5 MiB) however fast the source is. Many, because a pipe or an
/// HTTP body gives 64 KiB or less per read: when the main thread falls
/// behind, one [`Feed::read`] takes them all, a batch large enough to parse
/// on two cores.
const IN_FLIGHT: usize = 12;

/// Why the stream was stopped before it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// A signal arrived.
    Signal(Signal),
    /// `--timeout` expired.
    Timeout(Duration),
    /// Nothing arrived for `--idle-timeout`.
    Stalled(Duration),
}

impl Stop {
    /// The exit code of the contract: 130/143 for signals, 124 for timeouts.
    pub fn exit_code(self) -> ExitCode {
        match self {
            Stop::Signal(signal) => signal.exit_code(),
            Stop::Timeout(_) | Stop::Stalled(_) => ExitCode::Timeout,
        }
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Signal(signal) => write!(f, "interrupted by {}", signal.name()),
            Stop::Timeout(limit) => write!(f, "--timeout {} expired", human(*limit)),
            Stop::Stalled(limit) => write!(
                f,
                "the stream stalled: nothing received for {} (--idle-timeout)",
                human(*limit)
            ),
        }
    }
}

/// A duration as people write it: `90s`, `5m`, `1.5s`, `250ms`.
pub fn human(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms % 60_000 == 0 && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.1}s", duration.as_secs_f64())
    }
}

/// The [`Stop`] travelling inside an `io::Error` out of [`Feed::read`].
#[derive(Debug)]
pub struct Stopped(pub Stop);

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Stopped {}

/// The stop in an I/O error from [`Feed::read`], if that is what it is.
pub fn stop_of(err: &io::Error) -> Option<Stop> {
    err.get_ref()?.downcast_ref::<Stopped>().map(|stopped| stopped.0)
}

/// When to give up.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// `--timeout`: the whole command's wall-clock limit, from `started`.
    pub timeout: Option<Duration>,
    /// `--idle-timeout`: the longest silence accepted from the source.
    pub idle: Option<Duration>,
}

enum Chunk {
    Opened,
    OpenFailed(anyhow::Error),
    /// A buffer and how many of its bytes were read.
    Data(Vec<u8>, usize),
    End,
    Failed(io::Error),
}

/// Why [`Feed::wait_open`] did not get a source.
pub enum OpenError {
    /// Opening failed (the request got an error status, or no connection).
    Failed(anyhow::Error),
    /// Stopped before the source was open.
    Stopped(Stop),
}

/// The source as seen by the main thread: a `Read` that may stop.
pub struct Feed {
    chunks: Receiver<Chunk>,
    /// Read buffers handed back to the worker, so chunks are neither
    /// allocated nor copied on the way.
    spare: Sender<Vec<u8>>,
    limits: Limits,
    started: Instant,
    last_arrival: Instant,
    /// A chunk received after the data a read took, kept for the next.
    waiting: Option<Chunk>,
    current: Vec<u8>,
    length: usize,
    position: usize,
    finished: bool,
}

impl Feed {
    /// Starts a worker that calls `open` (send the request, open the file)
    /// and then reads the source to its end. `started` is when the command
    /// began, for `--timeout`.
    pub fn start<F>(open: F, limits: Limits, started: Instant) -> Feed
    where
        F: FnOnce() -> anyhow::Result<Box<dyn Read + Send>> + Send + 'static,
    {
        let (sender, chunks) = mpsc::sync_channel(IN_FLIGHT);
        let (spare, returned) = mpsc::channel();
        let worker = std::thread::Builder::new().spawn(move || pump(open, &sender, &returned));
        // Without a worker (the system has no thread to give), opening
        // fails with why, the way a refused connection does.
        let waiting = worker
            .err()
            .map(|err| Chunk::OpenFailed(anyhow::anyhow!("cannot start a thread to read the stream: {err}")));
        Feed {
            chunks,
            spare,
            limits,
            started,
            last_arrival: Instant::now(),
            waiting,
            current: Vec::new(),
            length: 0,
            position: 0,
            finished: false,
        }
    }

    /// Waits until the source is open (for a request: the response status
    /// arrived and was a success).
    pub fn wait_open(&mut self) -> Result<(), OpenError> {
        match self.next_chunk() {
            Ok(Chunk::Opened) => Ok(()),
            Ok(Chunk::OpenFailed(err)) => Err(OpenError::Failed(err)),
            Ok(_) => Err(OpenError::Failed(anyhow::anyhow!(
                "the source sent data before it was open"
            ))),
            Err(stop) => Err(OpenError::Stopped(stop)),
        }
    }

    /// The next chunk, or why to stop waiting for it.
    fn next_chunk(&mut self) -> Result<Chunk, Stop> {
        if let Some(chunk) = self.waiting.take() {
            return Ok(chunk);
        }
        loop {
            if let Some(signal) = signals::received() {
                return Err(Stop::Signal(signal));
            }
            let now = Instant::now();
            let mut wait = POLL;
            if let Some(limit) = self.limits.timeout {
                let left = (self.started + limit).saturating_duration_since(now);
                if left.is_zero() {
                    return Err(Stop::Timeout(limit));
                }
                wait = wait.min(left);
            }
            if let Some(limit) = self.limits.idle {
                let left = (self.last_arrival + limit).saturating_duration_since(now);
                if left.is_zero() {
                    return Err(Stop::Stalled(limit));
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

    /// Makes `data` the chunk being read, handing the previous buffer back.
    fn take_chunk(&mut self, data: Vec<u8>, length: usize) {
        let used = std::mem::replace(&mut self.current, data);
        if !used.is_empty() {
            // The worker may be gone; the buffer is then dropped.
            let _ = self.spare.send(used);
        }
        (self.length, self.position) = (length, 0);
    }

    /// Copies what is left of the current chunk into `buf`, as much as fits.
    fn copy_out(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.length - self.position);
        buf[..n].copy_from_slice(&self.current[self.position..self.position + n]);
        self.position += n;
        n
    }
}

impl Read for Feed {
    /// Waits for a chunk, then also takes every chunk that has already
    /// arrived, as far as `buf` has room: a reader that fell behind a fast
    /// source catches up in one large read (large enough to parse on two
    /// cores), and one that keeps up gets each chunk as soon as it came.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.position == self.length {
            if self.finished {
                return Ok(0);
            }
            match self.next_chunk() {
                Ok(Chunk::Data(data, length)) => self.take_chunk(data, length),
                Ok(Chunk::End) | Ok(Chunk::Opened) => self.finished = true,
                Ok(Chunk::OpenFailed(err)) => return Err(io::Error::other(err.to_string())),
                Ok(Chunk::Failed(err)) => {
                    self.finished = true;
                    return Err(err);
                }
                Err(stop) => return Err(io::Error::other(Stopped(stop))),
            }
        }
        let mut n = self.copy_out(buf);
        while n < buf.len() && self.position == self.length {
            match self.chunks.try_recv() {
                Ok(Chunk::Data(data, length)) => {
                    self.last_arrival = Instant::now();
                    self.take_chunk(data, length);
                    n += self.copy_out(&mut buf[n..]);
                }
                // Anything else (the end, a failure) is for the next read.
                Ok(other) => {
                    self.waiting = Some(other);
                    break;
                }
                Err(_) => break,
            }
        }
        Ok(n)
    }
}

/// The worker: open, then read chunks until the end, an error, or the main
/// thread going away (its receiver dropped).
fn pump<F>(open: F, sender: &SyncSender<Chunk>, spare: &Receiver<Vec<u8>>)
where
    F: FnOnce() -> anyhow::Result<Box<dyn Read + Send>>,
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
    loop {
        let mut buffer = spare.try_recv().unwrap_or_else(|_| vec![0; CHUNK]);
        let chunk = match source.read(&mut buffer) {
            Ok(0) => Chunk::End,
            Ok(n) => Chunk::Data(buffer, n),
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
    use std::sync::mpsc::Receiver;

    /// Gives `pieces` reads of 1000 bytes, then says so and waits to be
    /// told to end.
    struct Pieces {
        left: usize,
        reached_end: SyncSender<()>,
        end: Receiver<()>,
    }

    impl Read for Pieces {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.left == 0 {
                let _ = self.reached_end.send(());
                let _ = self.end.recv();
                return Ok(0);
            }
            self.left -= 1;
            buf[..1000].fill(b'x');
            Ok(1000)
        }
    }

    /// An open feed of `pieces` reads, once the worker has read them all,
    /// and the sender that lets the source end.
    fn feed_of(pieces: usize) -> (Feed, SyncSender<()>) {
        let (reached_end, reached) = mpsc::sync_channel(1);
        let (end, ended) = mpsc::sync_channel(1);
        let source = Pieces {
            left: pieces,
            reached_end,
            end: ended,
        };
        let mut feed = Feed::start(move || Ok(Box::new(source)), Limits::default(), Instant::now());
        assert!(feed.wait_open().is_ok());
        reached.recv().unwrap();
        (feed, end)
    }

    #[test]
    fn one_read_takes_every_chunk_that_has_arrived() {
        let (mut feed, end) = feed_of(5);
        let mut buf = vec![0; 1 << 20];
        assert_eq!(feed.read(&mut buf).unwrap(), 5000);
        end.send(()).unwrap();
        assert_eq!(feed.read(&mut buf).unwrap(), 0);
    }

    #[test]
    fn a_small_buffer_gets_the_rest_on_the_next_read() {
        let (mut feed, end) = feed_of(3);
        end.send(()).unwrap();
        let mut buf = vec![0; 1500];
        let mut total = 0;
        loop {
            let n = feed.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            assert!(buf[..n].iter().all(|&b| b == b'x'));
            total += n;
        }
        assert_eq!(total, 3000);
    }
}
