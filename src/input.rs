//! What a command is given to read (a question or SQL on standard input,
//! an image, a `--security-context @FILE`, a key file, a suite, a report
//! `check` reads, a Vega config, the config file, the output of a
//! profile's secret command), read as a
//! stream is: on a worker thread, so that `--timeout` (exit 124) and the
//! first signal (130/143) end the wait even when the input never ends — a
//! standard input left open, a FIFO whose writer never comes (opening one
//! blocks too). The worker left blocked dies with the process.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::error::{usage, Fault};
use crate::signals::{self, timeout, Stop};

/// How often the wait looks at signals and the clock.
const POLL: Duration = Duration::from_millis(50);

/// Where an input comes from.
#[derive(Clone, Debug)]
pub enum Input {
    /// Standard input (`-`).
    Stdin,
    /// A file (a FIFO too).
    File(PathBuf),
}

impl Input {
    /// `path`, where `-` is standard input.
    pub fn of(path: &Path) -> Input {
        match path.to_str() {
            Some("-") => Input::Stdin,
            _ => Input::File(path.to_path_buf()),
        }
    }
}

/// When the read of an input must end, and the failure it ends with.
#[derive(Clone, Debug)]
pub struct Deadline {
    at: Instant,
    expired: Fault,
    /// A stop called for by the command, which ends the read as a signal does.
    stop: Stop,
}

impl Deadline {
    /// The command's `--timeout` (`limit`), counted from now: the read of
    /// what the command line names.
    pub fn after(limit: Option<Duration>) -> Option<Deadline> {
        limit.map(|limit| Deadline {
            at: Instant::now() + limit,
            expired: timeout(limit),
            stop: Stop::default(),
        })
    }

    /// `at`, when the read ends with `expired` (a case's own timeout, or
    /// the run's `--timeout`), or sooner when `stop` is called.
    pub fn at(at: Instant, expired: Fault, stop: &Stop) -> Deadline {
        Deadline {
            at,
            expired,
            stop: stop.clone(),
        }
    }
}

/// Reads `input` whole, at most `most` bytes and one more (so the caller
/// can tell one over the limit), until `deadline` at most. The outer
/// `Err` is a stop (a signal, or the deadline passed: `what` says what was
/// being read); the inner result is the read's, for the caller to word.
pub fn read_input(
    input: Input,
    most: u64,
    deadline: Option<Deadline>,
    what: &str,
) -> Result<io::Result<Vec<u8>>, Fault> {
    let open = move || -> io::Result<Box<dyn Read>> {
        match input {
            Input::Stdin => Ok(Box::new(io::stdin().lock())),
            Input::File(path) => Ok(Box::new(std::fs::File::open(path)?)),
        }
    };
    read_on_worker(open, most, deadline.as_ref(), what)
}

/// Runs `process` (its stdout piped; stdin and stderr as the caller set
/// them) and reads what it prints, at most `most` bytes and one more,
/// bounded as [`read_input`] reads: at a stop the process is killed. The
/// outer `Err` is a stop or the failure to start it; the inner result is
/// the exit status and the output, or the read's error.
///
/// Without a controlling terminal (a CI job) it runs in a process group
/// of its own, killed whole: what it started would otherwise outlive the
/// command and hold a pipe of the caller's open. With one it stays in the
/// command's group, where it can ask for a passphrase on `/dev/tty` and
/// the user's Ctrl-C reaches it.
pub fn command_output(
    process: &mut std::process::Command,
    most: u64,
    limit: Option<Duration>,
    what: &str,
) -> Result<io::Result<(ExitStatus, Vec<u8>)>, Fault> {
    #[cfg(unix)]
    let own_group = {
        use std::os::unix::process::CommandExt;
        let own_group = std::fs::File::open("/dev/tty").is_err();
        if own_group {
            process.process_group(0);
        }
        own_group
    };
    let mut child = match process.stdout(Stdio::piped()).spawn() {
        Ok(child) => child,
        Err(err) => return Ok(Err(err)),
    };
    let stdout = child.stdout.take();
    let open = move || stdout.ok_or_else(|| io::Error::other("its output is not piped"));
    let deadline = Deadline::after(limit);
    let ended = read_on_worker(open, most, deadline.as_ref(), what).and_then(|read| {
        // It may go on after closing its output: its end is bounded too.
        let exited = wait_until(deadline.as_ref(), what, |wait| {
            let exited = child.try_wait().transpose();
            if exited.is_none() {
                std::thread::sleep(wait.min(Duration::from_millis(5)));
            }
            exited
        })?;
        Ok(read.and_then(|bytes| Ok((exited?, bytes))))
    });
    if ended.is_err() {
        #[cfg(unix)]
        if own_group {
            // SAFETY: a plain system call on the group `process_group(0)`
            // made, whose id is the child's (not yet reaped, so not reused).
            unsafe { libc::killpg(child.id() as libc::pid_t, libc::SIGKILL) };
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    ended
}

/// Reads what `open` gives whole, at most `most` bytes and one more, on a
/// worker thread, until `deadline` at most.
fn read_on_worker<R: Read>(
    open: impl FnOnce() -> io::Result<R> + Send + 'static,
    most: u64,
    deadline: Option<&Deadline>,
    what: &str,
) -> Result<io::Result<Vec<u8>>, Fault> {
    signals::watch();
    let (sender, receiver) = mpsc::sync_channel(1);
    let read = move || {
        let mut bytes = Vec::new();
        let read = open().and_then(|reader| reader.take(most + 1).read_to_end(&mut bytes));
        let _ = sender.send(read.map(|_| bytes));
    };
    if std::thread::Builder::new().name("input".into()).spawn(read).is_err() {
        return Ok(Err(io::Error::other("no thread to read it on")));
    }
    let read = wait_until(deadline, what, |wait| match receiver.recv_timeout(wait) {
        Ok(read) => Some(read),
        Err(RecvTimeoutError::Timeout) => None,
        Err(RecvTimeoutError::Disconnected) => Some(Err(io::Error::other("the reader stopped"))),
    })?;
    Ok(read)
}

/// Asks `ready` (given how long it may wait) until it has something, a
/// signal comes, the deadline's stop is called or the deadline passes
/// (`what` names what was awaited). Without a deadline only a signal
/// ends the wait.
fn wait_until<T>(
    deadline: Option<&Deadline>,
    what: &str,
    mut ready: impl FnMut(Duration) -> Option<T>,
) -> Result<T, Fault> {
    let stop = deadline.map_or_else(Stop::default, |deadline| deadline.stop.clone());
    loop {
        if let Some(stop) = stop.stopped() {
            return Err(stop);
        }
        let wait = match deadline {
            Some(Deadline { at, expired, .. }) => {
                let left = at.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(Fault::new(expired.kind, format!("{expired} while reading {what}")));
                }
                left.min(POLL)
            }
            None => POLL,
        };
        if let Some(ready) = ready(wait) {
            return Ok(ready);
        }
    }
}

/// The most text an input given to read may hold (a question, SQL, a
/// security context, session ids): 64 MiB.
pub const MAX_TEXT_INPUT: u64 = 64 << 20;

/// Reads all of standard input as text, waiting at most `limit` (the
/// command's `--timeout`) and no longer than the first signal (`what`
/// names it in the error, a usage error: the input could not be read).
pub fn read_stdin(what: &str, limit: Option<Duration>) -> Result<String> {
    read_text(Input::Stdin, limit, &format!("{what} from standard input"))
}

/// Reads `input` whole as text, bounded as [`read_input`] reads (`what`
/// names it in messages).
pub fn read_text(input: Input, limit: Option<Duration>, what: &str) -> Result<String> {
    read_text_at_most(input, MAX_TEXT_INPUT, limit, what)
}

/// [`read_text`] of an input that may hold up to `most` bytes (a report
/// of `check`, larger than any text given on the command line).
pub fn read_text_at_most(input: Input, most: u64, limit: Option<Duration>, what: &str) -> Result<String> {
    let bytes = read_input(input, most, Deadline::after(limit), what)?
        .map_err(|err| usage(format!("cannot read {what}: {err}")))?;
    text_of(bytes, most, what)
}

/// The text of `bytes` read as [`read_input`] reads (`most` and one more):
/// a usage error naming `what` when they are over `most` or not UTF-8.
pub fn text_of(bytes: Vec<u8>, most: u64, what: &str) -> Result<String> {
    if bytes.len() as u64 > most {
        return Err(usage(format!("{what} is over {} MiB", most >> 20)));
    }
    String::from_utf8(bytes)
        .map_err(|err| usage(format!("{what}: not UTF-8 (byte {})", err.utf8_error().valid_up_to())))
}
