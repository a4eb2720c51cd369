//! The network options of a command (`--timeout`, `--idle-timeout`,
//! `--connect-timeout`, `--retries`): given after the command, before it,
//! or in the environment. They are resolved before the config file is
//! read, which `--timeout` bounds too.

use anyhow::Result;
use clap::parser::ValueSource;
use clap::ArgMatches;

use super::checks::duration;
use crate::cli::{
    var, CheckAction, CheckArgs, Command as CliCommand, LeadingNetworkArgs, NetworkArgs, SessionAction, SessionArgs,
};
use crate::domain::{Limits, Network};

/// The network options of the command run, `None` for a command that has
/// none (history, config, check merge, …).
pub(super) fn network_args(command: &CliCommand) -> Option<&NetworkArgs> {
    match command {
        CliCommand::Ask(args) => Some(&args.network),
        CliCommand::Abort(args) => Some(&args.network),
        CliCommand::Session(SessionArgs {
            action: Some(SessionAction::Revoke(args)),
            ..
        }) => Some(&args.network),
        CliCommand::Session(args) => Some(&args.network),
        CliCommand::Rows(args) => Some(&args.network),
        CliCommand::Check(CheckArgs {
            action: Some(CheckAction::Merge(_)),
            ..
        }) => None,
        CliCommand::Check(args) => Some(&args.network),
        CliCommand::Doctor(args) => Some(&args.network),
        _ => None,
    }
}

/// The timeouts and retries of `args`, the network options of the command
/// run (clap holds them in its innermost subcommand's matches, `sub` the
/// command's): each given after the command, else before it
/// (`leading`), else from the environment (`ANALYST_TIMEOUT`), else the
/// default.
pub(super) fn network(sub: Option<&ArgMatches>, leading: &LeadingNetworkArgs, args: &NetworkArgs) -> Result<Network> {
    let mut at = sub;
    while let Some((_, deeper)) = at.and_then(ArgMatches::subcommand) {
        at = Some(deeper);
    }
    let given = |id: &str| at.and_then(|at| at.value_source(id)) == Some(ValueSource::CommandLine);
    let pick = |id: &str, after: &String, before: &Option<String>| match before {
        Some(before) if !given(id) => before.clone(),
        _ => after.clone(),
    };
    let timeout = match &leading.timeout {
        Some(before) if !given("timeout") => Some((before.clone(), "--timeout")),
        _ => {
            let from = match at.and_then(|at| at.value_source("timeout")) {
                Some(ValueSource::EnvVariable) => var::TIMEOUT,
                _ => "--timeout",
            };
            args.timeout.clone().map(|text| (text, from))
        }
    };
    let limit = |text: &str, from: &str| duration(text, from).map(|limit| Some(limit).filter(|limit| !limit.is_zero()));
    Ok(Network {
        connect_timeout: duration(
            &pick("connect_timeout", &args.connect_timeout, &leading.connect_timeout),
            "--connect-timeout",
        )?,
        limits: Limits {
            timeout: timeout.map(|(text, from)| limit(&text, from)).transpose()?.flatten(),
            idle: limit(
                &pick("idle_timeout", &args.idle_timeout, &leading.idle_timeout),
                "--idle-timeout",
            )?,
        },
        retries: match leading.retries {
            Some(before) if !given("retries") => before,
            _ => args.retries,
        },
    })
}
