//! `analyst`: a scriptable command-line client for a conversational-analytics
//! Chat API. `main.rs` hands the arguments to [`run`], which parses them,
//! resolves the settings, runs the command and reports how it ended.
//!
//! The modules, from the bottom up; each imports only modules above it in
//! this list (`tests/layout.rs` checks it):
//! - [`cli`]: the clap definitions (the command-line contract);
//! - [`error`]: failure kinds and the one map to exit codes;
//! - [`redact`]: the secrets the process knows, kept out of everything shown;
//! - [`text`]: text made safe for a terminal, shortened, escaped;
//! - [`domain`]: the plain types every layer shares (question and images,
//!   usage and prices, URLs with typed errors, limits);
//! - [`ci`]: the CI job a command runs in, from the standard variables;
//! - [`signals`]: what stops a command: signals, a stop, `--timeout`;
//! - [`files`]: private files and files written whole;
//! - [`input`]: what a command is given to read, read until a stop;
//! - [`identity`]: who asks (`sessionSettings`), typed the same from flags and suites;
//! - [`image`]: images sent with a question, read and checked;
//! - [`jq`]: the `--jq` filter of JSON outputs;
//! - [`output`]: stdout (data) and stderr (notes);
//! - [`modes`]: what an `-o` mode of `ask` shows, keeps and allows;
//! - [`history`]: the local SQLite record of turns and thread names;
//! - [`themes`]: Vega configs, named or from a file, and their merge;
//! - [`results`]: SQL results in one table shape, picked and completed;
//! - [`stream`]: lines → messages → transcript, and one turn through them;
//! - [`evals::figures`]: an answer's figures checked against its rows (of
//!   the evals room, listed apart: `ask`'s expectations read it too);
//! - [`net`]: the HTTP client, the stream source thread;
//! - [`telemetry`]: turns and runs as OpenTelemetry spans, sent over OTLP/HTTP;
//! - [`api`]: the chat, data query and session APIs on the wire;
//! - [`expect`]: expectations checked against a turn;
//! - [`render`]: one renderer per output mode;
//! - [`exchange`]: the one owner of a turn, from question to record;
//! - [`evals`]: suites, grading, a `check` run and its reports;
//! - [`settings`]: the resolver on top: flags > environment > profile,
//!   resolved and validated into a plan per command;
//! - [`commands`]: one module per subcommand.

#![warn(missing_docs)]
// A panic is never how bad input ends: product code holds no `unwrap` and
// an `expect` only where it cannot fail, allowed there with the reason.
#![cfg_attr(not(test), warn(clippy::unwrap_used, clippy::expect_used))]

pub mod api;
pub mod ci;
pub mod cli;
pub mod commands;
pub mod domain;
pub mod error;
pub mod evals;
pub mod exchange;
pub mod expect;
pub mod files;
pub mod history;
pub mod identity;
pub mod image;
pub mod input;
pub mod jq;
pub mod modes;
pub mod net;
pub mod output;
pub mod redact;
pub mod render;
pub mod results;
pub mod settings;
pub mod signals;
pub mod stream;
pub mod telemetry;
pub mod text;
pub mod themes;

use crate::error::{is_known, kind_of, Kind};
use crate::output::{Notes, Out};
use crate::settings::Command;
use crate::signals::Signal;

/// Parses the command line from `args`, runs the chosen command and returns
/// the exit code the process should end with. Errors are reported on stderr
/// here, in one place, as `analyst: error: …`.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    forbid_core_dumps();
    map_large_buffers();
    settings::forget_empty_variables();
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let mut cli = cli::command();
    let matches = match cli.try_get_matches_from_mut(&args) {
        Ok(matches) => matches,
        // clap writes --help and --version to stdout (a closed pipe there
        // is not worth a message); its errors become our one line.
        Err(err) if !err.use_stderr() => {
            let _ = err.print();
            return error::SUCCESS;
        }
        // `analyst` (or `analyst config`) alone: what it can do, on stderr.
        Err(err) if err.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            return Kind::Usage.exit_code();
        }
        Err(err) => {
            let (quiet, verbose, progress, color) = (false, false, false, false);
            Notes::new(quiet, verbose, progress, color).error(&one_line(&err, &cli, &args));
            return Kind::Usage.exit_code();
        }
    };
    // `--jq` without `-o`: `-o json` is meant, as gh's --jq reads JSON.
    let matches = match settings::with_json_for_jq(&cli, &matches, &args) {
        Some(args) => match cli.try_get_matches_from_mut(&args) {
            Ok(matches) => matches,
            Err(err) => {
                Notes::new(false, false, false, false).error(&one_line(&err, &cli, &args));
                return Kind::Usage.exit_code();
            }
        },
        None => matches,
    };
    let notes = settings::notes(&matches);
    // What the layers below say through the `log` facade goes to `notes`.
    output::log_to(&notes);
    let mut command = match settings::resolve(&matches, &notes) {
        Ok(command) => command,
        Err(err) => return report(&err, &notes),
    };
    // The command's --timeout counts from here, for every request, wait
    // and --jq filter alike.
    signals::start_deadline(command.timeout());
    let mut out = Out::to(command.take_destination())
        .stopping_when(|| signals::received().map(Signal::fault).or_else(signals::expired));
    let result = match command {
        Command::Ask(settings) => commands::ask::run(*settings, &notes, &mut out),
        Command::Abort(settings) => commands::abort::run(settings, &notes),
        Command::Session(settings) => commands::session::run(settings, &mut out),
        Command::RevokeSessions(settings) => commands::session::revoke(settings, &notes),
        Command::Rows(settings) => commands::rows::run(settings, &notes, &mut out),
        Command::Check(settings) => commands::check::run(*settings, &notes, &mut out),
        Command::CheckList(settings) => commands::check::list(*settings, &notes, &mut out),
        Command::Merge(settings) => commands::check::merge(settings, &notes, &mut out),
        Command::Completions(target, dir) => commands::completions::run(target, dir.as_deref(), &mut out),
        Command::Version => commands::version::run(&mut out),
        Command::History(settings) => commands::history::run(*settings, &notes, &mut out),
        Command::Doctor(settings) => commands::doctor::run(*settings, &mut out),
        Command::ConfigList(findings, width) => commands::config::list(&findings, width, &mut out),
        Command::ConfigPath(path) => commands::config::path(path.as_deref(), &mut out),
        Command::ConfigProfiles(names) => commands::config::profiles(&names, &mut out),
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

/// A clap error as one line: its message, the arguments it lists, its tip,
/// and the help to read (`see 'analyst ask --help'`, for the command of
/// `args`); not its usage block.
fn one_line(err: &clap::Error, cli: &clap::Command, args: &[std::ffi::OsString]) -> String {
    let text = err.render().to_string();
    let mut parts: Vec<String> = Vec::new();
    for line in text
        .lines()
        .take_while(|line| !line.starts_with("Usage:") && !line.starts_with("For more information"))
    {
        let trimmed = line.trim();
        match parts.last_mut() {
            _ if trimmed.is_empty() => {}
            _ if trimmed.starts_with("tip:") => parts.push(trimmed.to_string()),
            // An indented line lists what the line before it names.
            Some(last) if line.starts_with("  ") => {
                last.push(' ');
                last.push_str(trimmed);
            }
            _ => parts.push(trimmed.trim_start_matches("error: ").to_string()),
        }
    }
    let mut command = vec!["analyst".to_string()];
    let mut level = cli;
    for arg in args.iter().skip(1).filter_map(|arg| arg.to_str()) {
        if let Some(sub) = level.find_subcommand(arg) {
            command.push(sub.get_name().to_string());
            level = sub;
        }
    }
    let command = command.join(" ");
    if let Some(hint) = argument_hint(err, args) {
        // Ours replaces clap's tip ("to pass '--json' as a value…").
        parts.retain(|part| !part.starts_with("tip:"));
        parts.push(hint);
    }
    if let Some(hint) = subcommand_hint(err, level, &command) {
        parts.push(hint);
    }
    format!("{} (see '{command} --help')", parts.join("; "))
}

/// For a flag of another tool's habit (`--json`, `--format`, `--api-key`)
/// what to write here; for a value no flag takes, the one it is a typo of
/// (`-o cvs` → `csv`).
fn argument_hint(err: &clap::Error, args: &[std::ffi::OsString]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    match err.kind() {
        ErrorKind::UnknownArgument => {
            let Some(ContextValue::String(given)) = err.get(ContextKind::InvalidArg) else {
                return None;
            };
            let flag = given.split_once('=').map_or(given.as_str(), |(flag, _)| flag);
            // Its value: `--format=csv`, or the word after `--format`.
            let mut rest = args
                .iter()
                .filter_map(|arg| arg.to_str())
                .skip_while(|arg| *arg != flag && !arg.strip_prefix(flag).is_some_and(|rest| rest.starts_with('=')));
            let value = rest.next().and_then(|arg| match arg.split_once('=') {
                Some((_, value)) => Some(value.to_string()),
                None => rest.next().filter(|next| !next.starts_with('-')).map(str::to_string),
            });
            match flag {
                "--json" => Some("did you mean '-o json'? (analyst's outputs are chosen with -o)".to_string()),
                "--format" => Some(match value {
                    Some(value) => format!("did you mean '-o {value}'? (analyst's outputs are chosen with -o)"),
                    None => "did you mean '-o MODE'? (analyst's outputs are chosen with -o)".to_string(),
                }),
                "--api-key" | "--key" | "--token" => Some(
                    "a key is never taken from the command line (other processes can read it): set ANALYST_API_KEY, or pass --api-key-file PATH ('-' reads stdin)"
                        .to_string(),
                ),
                _ => None,
            }
        }
        ErrorKind::InvalidValue => {
            let (Some(ContextValue::String(value)), Some(ContextValue::Strings(valid))) =
                (err.get(ContextKind::InvalidValue), err.get(ContextKind::ValidValue))
            else {
                return None;
            };
            text::closest(value, valid.iter().map(String::as_str)).map(|meant| format!("did you mean '{meant}'?"))
        }
        _ => None,
    }
}

/// For a word that is no subcommand of `level` (the command line
/// `command`): the subcommand it is a typo of (`aks` → `ask`), or, for
/// any other first word (`analyst revenue`), how to ask it. clap's own suggestion
/// misses a swap of two letters; this one does not.
fn subcommand_hint(err: &clap::Error, level: &clap::Command, command: &str) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if !matches!(err.kind(), ErrorKind::InvalidSubcommand) || err.get(ContextKind::SuggestedSubcommand).is_some() {
        return None;
    }
    let Some(ContextValue::String(word)) = err.get(ContextKind::InvalidSubcommand) else {
        return None;
    };
    if word == "man" && command == "analyst" {
        return Some(
            "the man pages: analyst completions man (analyst(1) on stdout; --dir DIR writes every page)".to_string(),
        );
    }
    let names = level.get_subcommands().map(clap::Command::get_name);
    if let Some(meant) = text::closest(word, names) {
        return Some(format!("did you mean '{command} {meant}'?"));
    }
    (command == "analyst").then(|| format!("to ask it: analyst ask {}", shell_quoted(word)))
}

/// `word` quoted for a POSIX shell: in single quotes, each `'` as `'\''`.
fn shell_quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
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

/// Has every buffer of a MiB or more mapped on its own and given back to
/// the system when freed. glibc otherwise raises its threshold to the
/// largest buffer freed so far (up to 32 MiB) and keeps such buffers in
/// the arena of each thread that used them: `check` sending a 20 MiB image
/// from case after case grew by a body a thread (measured: +57 MiB for ten
/// cases, none with this).
fn map_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets an allocator parameter; no memory is shared.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
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
