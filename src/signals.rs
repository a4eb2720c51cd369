//! What stops a command: Ctrl-C, SIGTERM and SIGHUP (on Windows, the
//! console's Ctrl-C, Ctrl-Break and close), a stop the command calls for,
//! and an expired `--timeout` ([`timeout`]). A watcher thread records the
//! first signal for the main thread to act on (abort the chat, flush, exit
//! 130/143/129); a second signal exits at once, as people expect of a
//! second Ctrl-C. A command may also stop what it runs as a signal would,
//! through a [`Stop`] token it hands to its clients (`check`, when a failure
//! of the whole run makes every other case pointless).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Once, OnceLock};
use std::time::{Duration, Instant};

use crate::error::{Fault, Kind};
use crate::text::human;

/// The first signal received: 0 for none, else its [`Signal::code`].
static FIRST: AtomicU8 = AtomicU8::new(0);
static INSTALL: Once = Once::new();

/// A termination signal the user (or cron, or CI) sent. On Windows,
/// Ctrl-C, Ctrl-Break and the console closing are each an
/// [`Signal::Interrupt`] (the console does not tell them apart to the
/// crate that hears them): exit 130.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT, Ctrl-C: exit 130.
    Interrupt,
    /// SIGTERM: exit 143.
    Terminate,
    /// SIGHUP, the terminal closed: exit 129.
    HangUp,
}

impl Signal {
    /// Its number in [`FIRST`] (never 0).
    fn code(self) -> u8 {
        match self {
            Signal::Interrupt => 1,
            Signal::Terminate => 2,
            Signal::HangUp => 3,
        }
    }

    fn of_code(code: u8) -> Option<Signal> {
        [Signal::Interrupt, Signal::Terminate, Signal::HangUp]
            .into_iter()
            .find(|signal| signal.code() == code)
    }

    /// The signal's name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt if cfg!(windows) => "Ctrl-C",
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
            Signal::HangUp => "SIGHUP",
        }
    }

    /// The kind of failure it makes (exit 128 + the signal number).
    pub fn kind(self) -> Kind {
        match self {
            Signal::Interrupt => Kind::Interrupted,
            Signal::Terminate => Kind::Terminated,
            Signal::HangUp => Kind::HungUp,
        }
    }

    /// The failure it makes: `interrupted by SIGINT`.
    pub fn fault(self) -> Fault {
        Fault::new(self.kind(), format!("interrupted by {}", self.name()))
    }
}

/// Starts watching SIGINT, SIGTERM and SIGHUP (on Windows, the console's
/// Ctrl-C, Ctrl-Break and close), once per process. If the handlers cannot
/// be installed the default behaviour stays: the process just dies.
pub fn watch() {
    INSTALL.call_once(listen);
}

/// Keeps `signal` for the main thread when it is the first; a second one
/// exits at once, as people expect of a second Ctrl-C.
fn heard(signal: Signal) {
    if FIRST
        .compare_exchange(0, signal.code(), Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        std::process::exit(i32::from(signal.kind().exit_code()));
    }
}

/// Hears the signals on a thread of signal-hook's.
#[cfg(unix)]
fn listen() {
    use signal_hook::consts::signal::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    // Should no thread be had, the handlers go with `signals`, and the
    // default behaviour stays.
    let _ = std::thread::Builder::new().spawn(move || {
        for raw in signals.forever() {
            heard(match raw {
                SIGTERM => Signal::Terminate,
                SIGHUP => Signal::HangUp,
                _ => Signal::Interrupt,
            });
        }
    });
}

/// Hears the console's control events through `ctrlc` (its `termination`
/// feature adds Ctrl-Break and the console closing to Ctrl-C).
#[cfg(windows)]
fn listen() {
    let _ = ctrlc::set_handler(|| heard(Signal::Interrupt));
}

/// The fault of an expired `--timeout`.
pub fn timeout(limit: Duration) -> Fault {
    Fault::new(Kind::Timeout, format!("--timeout {} expired", human(limit)))
}

/// The first signal received, if any.
pub fn received() -> Option<Signal> {
    Signal::of_code(FIRST.load(Ordering::SeqCst))
}

/// When the command's `--timeout` expires, and the limit: set once, when
/// the command starts ([`start_deadline`]).
static DEADLINE: OnceLock<(Instant, Duration)> = OnceLock::new();

/// Starts the command's clock: its `--timeout` (`limit`; none: no limit)
/// counts from now. Once per process; later calls change nothing.
pub fn start_deadline(limit: Option<Duration>) {
    if let Some(limit) = limit {
        let _ = DEADLINE.set((Instant::now() + limit, limit));
    }
}

/// The command's `--timeout`: when it expires, and the limit.
pub fn deadline() -> Option<(Instant, Duration)> {
    DEADLINE.get().copied()
}

/// What is left of the command's `--timeout` (none: no limit).
pub fn time_left() -> Option<Duration> {
    deadline().map(|(at, _)| at.saturating_duration_since(Instant::now()))
}

/// The fault of the command's `--timeout` once it has expired.
pub fn expired() -> Option<Fault> {
    deadline()
        .filter(|(at, _)| Instant::now() >= *at)
        .map(|(_, limit)| timeout(limit))
}

/// A stop a command may call for, shared by everything it hands the token
/// to (its clients, their streams and waits): each ends with the stop's
/// fault at its next look, as with a signal. A signal stops every token's
/// holders; a token stops only its own. Cheap to clone: clones share the
/// stop.
#[derive(Clone, Debug, Default)]
pub struct Stop(Arc<OnceLock<Fault>>);

impl Stop {
    /// Stops everything holding this token with `fault` (made with
    /// [`Fault::stop`], so the chat it reads is aborted). The first stop
    /// stays.
    pub fn call(&self, fault: Fault) {
        let _ = self.0.set(fault);
    }

    /// Why its holders must stop now: the first signal received, else the
    /// stop called for.
    pub fn stopped(&self) -> Option<Fault> {
        received().map(Signal::fault).or_else(|| self.0.get().cloned())
    }

    /// Waits `pause`, or less when a signal (or a stop) arrives first:
    /// then its failure (exit 130 or 143), so a wait between tries never
    /// delays Ctrl-C.
    pub fn pause(&self, pause: Duration) -> Result<(), Fault> {
        let until = Instant::now() + pause;
        loop {
            if let Some(stop) = self.stopped() {
                return Err(stop);
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
    }
}
