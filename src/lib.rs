//! `analyst`: a scriptable command-line client for a conversational-analytics
//! Chat API. The binary's `main.rs` is a thin shell around [`run`]; the modules
//! follow the flow described in `design.md`:
//! cli → config → http → feed (the source on a worker thread, so signals,
//! `--timeout` and stalls are noticed) → stream (lines → messages →
//! transcript) → render.

#![warn(missing_docs)]

pub mod chat;
pub mod cli;
pub mod commands;
pub mod config;
pub mod data;
pub mod exit;
pub mod expect;
pub mod feed;
pub mod http;
pub mod output;
pub mod profile;
pub mod render;
pub mod results;
pub mod signals;
pub mod stream;
pub mod suite;

use clap::{CommandFactory, FromArgMatches};

/// Parses the command line from `args`, runs the chosen command and returns
/// the exit code the process should end with. Errors are reported on stderr
/// here, in one place, as `analyst: error: …`.
pub fn run<I, T>(args: I) -> exit::ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = match cli::Cli::command().try_get_matches_from(args) {
        Ok(matches) => matches,
        Err(err) => return exit::report_clap_error(err),
    };
    let mut parsed = match cli::Cli::from_arg_matches(&matches) {
        Ok(parsed) => parsed,
        Err(err) => return exit::report_clap_error(err),
    };
    let notes = output::Notes::new(parsed.global.quiet, parsed.global.verbose);
    if !matches!(parsed.command, cli::Command::Completions(_)) {
        match profile::load(parsed.global.profile.as_deref()) {
            Ok(Some(profile)) => {
                profile.apply(&mut parsed.command);
                parsed.global.loaded_profile = Some(profile);
            }
            Ok(None) => {}
            Err(err) => return exit::report_error(&err, &notes),
        }
    }
    let sub = matches.subcommand().map(|(_, sub)| sub);
    let result = match parsed.command {
        cli::Command::Ask(args) => commands::ask::run(args, sub, &parsed.global, &notes),
        cli::Command::Abort(args) => commands::abort::run(args, sub, &parsed.global, &notes),
        cli::Command::Session(args) => commands::session::run(args, sub, &parsed.global, &notes),
        cli::Command::Rows(args) => commands::rows::run(args, &parsed.global, &notes),
        cli::Command::Check(args) => commands::check::run(args, sub, &parsed.global, &notes),
        cli::Command::Completions(args) => commands::completions::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => exit::report_error(&err, &notes),
    }
}
