//! `analyst`: a scriptable command-line client for a conversational-analytics
//! Chat API. `main.rs` hands the arguments to [`run`], which parses them,
//! resolves the settings, runs the command and reports how it ended.
//!
//! The modules, from the bottom up; each imports only modules above it in
//! this list (`tests/layout.rs` checks it):
//! - [`cli`]: the clap definitions (the command-line contract);
//! - [`error`]: failure kinds and the one map to exit codes;
//! - [`jq`]: the `--jq` filter of JSON outputs;
//! - [`output`]: stdout (data) and stderr (notes);
//! - [`themes`]: Vega configs, named or from a file, and their merge;
//! - [`results`]: SQL results in one table shape, picked and completed;
//! - [`settings`]: flags > environment > profile, resolved and validated;
//! - [`stream`]: lines → messages → transcript, and one turn through them;
//! - [`net`]: the HTTP client, the stream source thread, signals;
//! - [`api`]: the chat, data query and session APIs on the wire;
//! - [`expect`]: expectations checked against a turn;
//! - [`render`]: one renderer per output mode;
//! - [`commands`]: one module per subcommand.

#![warn(missing_docs)]

pub mod api;
pub mod cli;
pub mod commands;
pub mod error;
pub mod expect;
pub mod jq;
pub mod net;
pub mod output;
pub mod render;
pub mod results;
pub mod settings;
pub mod stream;
pub mod themes;

use clap::CommandFactory;

use crate::error::{is_known, kind_of, Kind};
use crate::output::{Notes, Out};
use crate::settings::Command;

/// Parses the command line from `args`, runs the chosen command and returns
/// the exit code the process should end with. Errors are reported on stderr
/// here, in one place, as `analyst: error: …`.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    forbid_core_dumps();
    let matches = match cli::Cli::command().try_get_matches_from(args) {
        Ok(matches) => matches,
        Err(err) => {
            // clap writes --help and --version to stdout (success) and
            // errors to stderr (usage); a closed pipe there is not worth
            // a message.
            let _ = err.print();
            return match err.use_stderr() {
                true => Kind::Usage.exit_code(),
                false => Kind::ReaderGone.exit_code(),
            };
        }
    };
    let (notes, command) = settings::resolve(&matches);
    let mut command = match command {
        Ok(command) => command,
        Err(err) => return report(&err, &notes),
    };
    let mut out = Out::to(command.take_destination());
    let result = match command {
        Command::Ask(settings) => commands::ask::run(*settings, &notes, &mut out),
        Command::Abort(settings) => commands::abort::run(settings, &notes),
        Command::Session(settings) => commands::session::run(settings, &notes, &mut out),
        Command::RevokeSessions(settings) => commands::session::revoke(settings, &notes),
        Command::Rows(settings) => commands::rows::run(settings, &notes, &mut out),
        Command::Check(settings) => commands::check::run(settings, &notes, &mut out),
        Command::Merge(settings) => commands::check::merge(settings, &notes, &mut out),
        Command::Completions(target) => commands::completions::run(target, &mut out),
    };
    // The output ends as the command did: a --jq filter reads the rest, an
    // --output-file is kept only on success.
    let finished = out.finish(result.is_ok());
    let result = match (result, finished) {
        (Ok(()), Err(err)) => Err(err.into()),
        (result, _) => result,
    };
    match result {
        Ok(()) => error::SUCCESS,
        Err(err) => report(&err, &notes),
    }
}

/// Opts the process out of core dumps: a dump would hold the API key and
/// tokens in clear. Best effort; nothing to report if the system refuses.
fn forbid_core_dumps() {
    #[cfg(unix)]
    {
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: setrlimit reads the struct we pass and nothing else.
        unsafe {
            libc::setrlimit(libc::RLIMIT_CORE, &none);
        }
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_DUMPABLE takes one integer argument; no memory is shared.
        unsafe {
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        }
    }
}

/// Prints `analyst: error: …` for `err` (nothing when the reader of stdout
/// left) and returns its exit code.
fn report(err: &anyhow::Error, notes: &Notes) -> u8 {
    let kind = kind_of(err);
    if kind == Kind::ReaderGone {
        return kind.exit_code();
    }
    let mut line = format!("{err:#}");
    if !is_known(err) {
        line.push_str(" (unexpected: if this looks like a bug in analyst, please report it)");
    }
    notes.error(&line);
    kind.exit_code()
}
