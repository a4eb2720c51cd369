//! Settings: the command line, the environment and the profile of the config
//! file, resolved once into typed settings per command (a flag wins over
//! the environment, which wins over the profile). This is the only reader of
//! the environment, of clap's `ArgMatches` and of the config file; commands
//! receive what it resolves ([`types`]) and never look further.
//!
//! Everything that must be right before anything is sent is checked here.
//! The submodules, from the bottom up; each imports only those above it
//! (`tests/layout.rs` checks it):
//! - [`checks`]: validators, and the environment's rule;
//! - [`implied`]: what a command line means beyond what it says;
//! - [`network`]: the timeouts and retries of a command;
//! - [`profile`]: the config file and its profiles;
//! - [`otel`]: where spans go (`OTEL_*`, the profile's `otlp_endpoint`);
//! - [`secrets`]: where each secret comes from (never argv, never printed);
//! - [`types`]: what the commands receive;
//! - [`history`]: the history database, recording, threads, `analyst history`;
//! - [`check`]: what `check` and `check --list` receive;
//! - [`doctor`]: what `doctor` checks and `config list` shows;
//! - [`tests`]: the resolver's own tests (built for tests only).

pub mod check;
pub mod checks;
pub mod doctor;
pub mod history;
mod implied;
mod network;
mod otel;
pub mod profile;
pub mod secrets;
pub mod types;

pub use crate::history::{Recording, ThreadSettings};
pub use crate::identity::{IdentityInput, SessionSettings, UserAttribute};
pub use crate::image::{Image, ImageFile, Images};
pub use checks::{forget_empty_variables, read_stdin, read_text, Finding, FindingState};
pub use history::{HistoryCommand, HistorySettings};
pub use implied::with_json_for_jq;
pub use secrets::Secret;
pub use types::*;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use clap::parser::ValueSource;
use clap::{ArgMatches, FromArgMatches};
use reqwest::Url;
use serde_json::{Map, Value};

use crate::api::data::{OnDemand, ReadSecret};
use crate::cli::{
    var, AbortArgs, AskArgs, ChatEndpointArgs, CheckAction, CheckArgs, Cli, ColorWhen, Command as CliCommand,
    CompletionTarget, ConfigAction, ConfigArgs, DataEndpointArgs, GlobalArgs, IdentityArgs, LeadingNetworkArgs,
    NetworkArgs, RowsArgs, RowsOutput, SessionAction, SessionArgs, SessionOutput, SessionRevokeArgs,
};
use crate::error::{kind_of, usage, Fault};
use crate::exchange::Asked;
use crate::files::check_files_apart;
use crate::identity::{parse_attribute, security_context, FieldNames};
use crate::modes::OnTerminal;
use crate::output::{Destination, JqInput, Notes};
use crate::render::{Printer, RenderOptions, Truncation};
use checks::{
    check_embed_tenant, check_output_file, check_picture, duration, parse_setting, service_url, variable, vega_config,
};
use network::{network, network_args};
use profile::{Config, Profile};
use secrets::Secrets;

/// A command with its resolved settings.
#[derive(Debug)]
pub enum Command {
    /// `analyst ask`.
    Ask(Box<AskSettings>),
    /// `analyst abort`.
    Abort(AbortSettings),
    /// `analyst session`.
    Session(SessionCommandSettings),
    /// `analyst session revoke`.
    RevokeSessions(RevokeSettings),
    /// `analyst rows`.
    Rows(RowsSettings),
    /// `analyst check`.
    Check(Box<CheckSettings>),
    /// `analyst check --list`.
    CheckList(Box<CheckListSettings>),
    /// `analyst check merge`.
    Merge(MergeSettings),
    /// `analyst completions`.
    Completions(CompletionTarget, Option<PathBuf>),
    /// `analyst version`.
    Version,
    /// `analyst doctor`.
    Doctor(Box<DoctorSettings>),
    /// `analyst config list`: the settings, each with where it came from,
    /// and the terminal's width the table fits.
    ConfigList(Vec<Finding>, Option<u16>),
    /// `analyst config path`.
    ConfigPath(Option<PathBuf>),
    /// `analyst history`.
    History(Box<HistorySettings>),
    /// `analyst config profiles`: the config file's profile names.
    ConfigProfiles(Vec<String>),
}

/// Files a command reads or writes, each with how its flag names it.
type NamedFiles<'a> = Vec<(&'static str, &'a Path)>;

impl Command {
    /// The command's `--timeout`, for what runs besides its requests (a
    /// `--jq` filter).
    pub fn timeout(&self) -> Option<std::time::Duration> {
        let network = match self {
            Command::Ask(settings) => settings.network,
            Command::Abort(settings) => settings.network,
            Command::Session(settings) => settings.network,
            Command::RevokeSessions(settings) => settings.network,
            Command::Doctor(settings) => settings.network,
            Command::Rows(settings) => settings.network,
            Command::Check(settings) => settings.network,
            _ => return None,
        };
        network.limits.timeout
    }

    /// The files the command reads, each named as its flag gives it ("the
    /// --replay file"), and those it writes, each with its flag; standard
    /// input (`-`) is none.
    fn files<'a>(&'a self) -> (NamedFiles<'a>, NamedFiles<'a>) {
        type Named<'a> = (&'static str, Option<&'a Path>);
        fn report(report: &ReportSettings) -> (Named<'_>, Vec<Named<'_>>) {
            let written = report.written().into_iter().map(|(flag, file)| (flag, Some(file)));
            (("the --baseline report", report.baseline.as_deref()), written.collect())
        }
        let (read, written): (Vec<Named<'_>>, Vec<Named<'_>>) = match self {
            Command::Ask(settings) => {
                let replay = match &settings.asked {
                    Asked::Replay(path) => Some(Path::new(path)),
                    Asked::Chat { .. } => None,
                };
                let written = [
                    ("--output-file", settings.destination.file.as_deref()),
                    ("--tee", settings.tee.as_deref()),
                ];
                (vec![("the --replay file", replay)], written.into_iter().collect())
            }
            Command::Rows(settings) => {
                let from = match &settings.sql {
                    SqlSource::File(path) => ("the --sql-file", Some(Path::new(path))),
                    SqlSource::Saved(path) => ("the --from file", Some(Path::new(path))),
                    SqlSource::Text(_) => ("--sql", None),
                };
                (
                    vec![from],
                    vec![("--output-file", settings.destination.file.as_deref())],
                )
            }
            Command::Check(settings) => {
                let (baseline, written) = report(&settings.report);
                (vec![baseline, ("the suite", Some(&settings.selection.suite))], written)
            }
            Command::Merge(settings) => {
                let (baseline, written) = report(&settings.report);
                let reports = settings
                    .reports
                    .iter()
                    .map(|path| ("a report it merges", Some(path.as_path())));
                ([baseline].into_iter().chain(reports).collect(), written)
            }
            Command::CheckList(settings) => (
                vec![("the suite", Some(&settings.selection.suite))],
                vec![("--output-file", settings.report.destination.file.as_deref())],
            ),
            Command::Session(settings) => (
                Vec::new(),
                vec![("--output-file", settings.destination.file.as_deref())],
            ),
            Command::History(settings) => (
                Vec::new(),
                vec![("--output-file", settings.destination.file.as_deref())],
            ),
            _ => (Vec::new(), Vec::new()),
        };
        let named = |files: Vec<Named<'a>>| {
            let given = files.into_iter().filter_map(|(flag, path)| Some((flag, path?)));
            given.filter(|(_, path)| path != &Path::new("-")).collect()
        };
        (named(read), named(written))
    }

    /// Where the command's data goes (`--jq`, `--output-file`), taken out
    /// of its settings for the one [`crate::output::Out`] of the process.
    pub fn take_destination(&mut self) -> Destination {
        let destination = match self {
            Command::Ask(settings) => &mut settings.destination,
            Command::Session(settings) => &mut settings.destination,
            Command::Rows(settings) => &mut settings.destination,
            Command::Check(settings) => &mut settings.report.destination,
            Command::CheckList(settings) => &mut settings.report.destination,
            Command::Merge(settings) => &mut settings.report.destination,
            Command::History(settings) => &mut settings.destination,
            Command::Abort(_)
            | Command::RevokeSessions(_)
            | Command::Completions(..)
            | Command::Version
            | Command::Doctor(_)
            | Command::ConfigList(..)
            | Command::ConfigPath(_)
            | Command::ConfigProfiles(_) => return Destination::default(),
        };
        // The file stays named in the settings too: `check` keeps it off
        // the files its suite turns out to read.
        Destination {
            file: destination.file.clone(),
            jq: destination.jq.take(),
        }
    }
}

/// Which of the standard streams are terminals (stdout and stderr: ones
/// that take escape codes, [`crate::output::takes_escapes`]), asked once.
#[derive(Clone, Copy, Debug)]
struct Terminals {
    stdin: bool,
    stdout: bool,
    stderr: bool,
}

impl Terminals {
    /// Which of the standard streams are terminals now (stdout and stderr:
    /// terminals that take escape codes).
    fn now() -> Terminals {
        Terminals {
            stdin: std::io::stdin().is_terminal(),
            stdout: crate::output::takes_escapes(&std::io::stdout()),
            stderr: crate::output::takes_escapes(&std::io::stderr()),
        }
    }
}

/// Resolves the parsed command line (with the environment and the profile)
/// into the command to run; `notes` (from [`notes`]) hear what resolving
/// has to say.
pub fn resolve(matches: &ArgMatches, notes: &Notes) -> Result<Command> {
    let parsed = Cli::from_arg_matches(matches).map_err(|err| usage(err.to_string()))?;
    let terminals = Terminals::now();
    let sub = matches.subcommand().map(|(_, sub)| sub);
    let styles = styles(&parsed.global);
    resolve_command(parsed.command, &parsed.global, matches, sub, terminals, styles, notes)
}

/// Where notes go for the command line `matches`: `-q`, `-v`, and
/// progress and colour as `--color`, `NO_COLOR` and the terminal say.
pub fn notes(matches: &ArgMatches) -> Notes {
    let Ok(global) = GlobalArgs::from_arg_matches(matches) else {
        return Notes::new(false, false, false, false);
    };
    let stderr = Terminals::now().stderr;
    let color = styles(&global) && (global.color == ColorWhen::Always || stderr);
    Notes::new(global.quiet, global.verbose, stderr, color)
}

/// Whether output may be styled: `--color`, else `NO_COLOR` set to
/// something turns colour off, and only colour (progress follows `-q` and
/// the terminal).
fn styles(global: &GlobalArgs) -> bool {
    match global.color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => variable(var::NO_COLOR).is_none(),
    }
}

fn resolve_command(
    command: CliCommand,
    global: &GlobalArgs,
    matches: &ArgMatches,
    sub: Option<&ArgMatches>,
    terminals: Terminals,
    styles: bool,
    notes: &Notes,
) -> Result<Command> {
    // These read no profile: a broken config file does not stop them.
    let command = match command {
        CliCommand::Completions(args) => return Ok(Command::Completions(args.target, args.dir)),
        CliCommand::Version => return Ok(Command::Version),
        CliCommand::Config(ConfigArgs {
            action: ConfigAction::Path,
        }) => return Ok(Command::ConfigPath(profile::path().map(|(path, _)| path))),
        CliCommand::Config(ConfigArgs {
            action: ConfigAction::Profiles,
        }) => {
            let names = Config::load(None)?
                .map(|config| config.profile_names())
                .unwrap_or_default();
            return Ok(Command::ConfigProfiles(names));
        }
        other => other,
    };
    let chosen_by = match matches.value_source("profile") {
        Some(ValueSource::EnvVariable) => var::PROFILE,
        _ => "--profile",
    };
    // The config file is read within the command's --timeout.
    let limit = match network_args(&command) {
        Some(args) => network(sub, &global.leading_network, args)?.limits.timeout,
        None => None,
    };
    let loaded = Config::load(limit).and_then(|config| {
        let profile = match &config {
            Some(config) => config.profile(global.profile.as_deref(), chosen_by)?,
            None => None,
        };
        Ok((config, profile))
    });
    // doctor reports a broken config file as a failed check, and goes on.
    let (config, profile, config_problem) = match (&command, loaded) {
        (CliCommand::Doctor(_), Err(err)) => (None, None, Some(err)),
        (_, loaded) => {
            let (config, profile) = loaded?;
            (config, profile, None)
        }
    };
    // Every secret the process can see is known to the redactor before
    // anything is sent, used by this command or not.
    secrets::register_visible(profile.as_ref(), matches);
    if let Some(profile) = &profile {
        notes.debug(&format!(
            "profile {} of {} (chosen by {})",
            profile.name,
            profile.file.display(),
            profile.chosen_by
        ));
    }
    let sources = Sources {
        sub,
        leading_network: &global.leading_network,
        profile: profile.as_ref(),
        config: config.as_ref(),
        notes,
        terminals,
        styles,
    };
    let command = match command {
        CliCommand::Ask(args) => Command::Ask(Box::new(sources.ask(args)?)),
        CliCommand::Abort(args) => Command::Abort(sources.abort(args)?),
        CliCommand::Session(SessionArgs {
            action: Some(SessionAction::Revoke(args)),
            ..
        }) => Command::RevokeSessions(sources.revoke(args)?),
        CliCommand::Session(args) => Command::Session(sources.session(args)?),
        CliCommand::Rows(args) => Command::Rows(sources.rows(args)?),
        CliCommand::Check(CheckArgs {
            action: Some(CheckAction::Merge(args)),
            ..
        }) => Command::Merge(MergeSettings {
            reports: args.reports,
            report: report_settings(args.report)?,
        }),
        CliCommand::Check(args) if args.list => Command::CheckList(Box::new(sources.check_list(args)?)),
        CliCommand::Check(args) => Command::Check(Box::new(sources.check(args)?)),
        CliCommand::Doctor(args) => Command::Doctor(Box::new(sources.doctor(
            args,
            config_problem,
            terminal_width(terminals.stdout),
        )?)),
        CliCommand::Config(_) => Command::ConfigList(sources.config_list(), terminal_width(terminals.stdout)),
        CliCommand::Completions(args) => Command::Completions(args.target, args.dir),
        CliCommand::Version => Command::Version,
        CliCommand::History(args) => Command::History(Box::new(history::history(
            args,
            profile.as_ref(),
            config.as_ref(),
            terminal_width(terminals.stdout),
            terminals.stdout && styles,
        )?)),
    };
    let (mut read, written) = command.files();
    // No command writes over the history (nor its write-ahead log).
    let database = history::database(profile.as_ref());
    let logs = database.as_ref().map(|db| {
        ["-wal", "-shm"].map(|suffix| {
            let mut name = db.clone().into_os_string();
            name.push(suffix);
            PathBuf::from(name)
        })
    });
    read.extend(database.as_deref().map(|db| ("the history database", db)));
    // Nor over the config file.
    let config_file = profile::path().map(|(path, _)| path);
    read.extend(config_file.as_deref().map(|path| ("the config file", path)));
    read.extend(
        logs.iter()
            .flatten()
            .map(|log| ("the history database's log", log.as_path())),
    );
    check_files_apart(&read, &written)?;
    Ok(command)
}

/// Where a command's values come from besides its flags: the
/// subcommand's matches (to tell a flag from the environment), the
/// profile, and the notes (for warnings such as a readable key file).
struct Sources<'a> {
    sub: Option<&'a ArgMatches>,
    /// The network options written before the command.
    leading_network: &'a LeadingNetworkArgs,
    profile: Option<&'a Profile>,
    config: Option<&'a Config>,
    notes: &'a Notes,
    terminals: Terminals,
    /// Styles may be written to stdout when it is a terminal (`--color`,
    /// `NO_COLOR`).
    styles: bool,
}

impl Sources<'_> {
    /// [`network`] of this command.
    fn network(&self, args: &NetworkArgs) -> Result<Network> {
        network(self.sub, self.leading_network, args)
    }

    fn ask(&self, args: AskArgs) -> Result<AskSettings> {
        let network = self.network(&args.network)?;
        let pick = pick(args.query);
        let expectations = Expectations {
            faithful: args.expect_faithful,
            ..Expectations::new(
                args.expect_answer.as_deref(),
                args.expect_sql.as_deref(),
                &args.expect_tool,
                args.min_rows,
                pick,
                "--",
            )?
        };
        let data = self.data(
            &args.data,
            security_context(args.identity.security_context.as_deref(), network.limits.timeout)?,
            network.limits.timeout,
        );
        if args.all_rows {
            data.check()?;
        }
        if let Some(tee) = &args.tee {
            check_output_file("--tee", tee)?;
        }
        // A replay is not recorded, and has no thread.
        let (recording, thread) = match args.replay {
            Some(_) => (None, None),
            None => (
                history::recording(args.no_history, self.profile)?,
                history::thread(args.thread.clone(), &args.thread_ttl, self.profile)?,
            ),
        };
        let asked = match args.replay {
            Some(path) => Asked::Replay(path),
            None => {
                let identity = self.identity(&args.identity, network.limits.timeout)?;
                let chat = self.chat(&args.endpoint, &identity, network.limits.timeout)?;
                let secret_on_stdin = args.endpoint.key.api_key_file.as_deref() == Some("-")
                    || args.endpoint.cube_token_file.as_deref() == Some("-");
                let images_on_stdin = args.image.iter().filter(|path| path.as_os_str() == "-").count();
                checks::stdin_read_once(args.question.as_deref() == Some("-"), secret_on_stdin, images_on_stdin)?;
                // No question and no chat to read, stdin a pipe nothing
                // else reads: the question is on it (as `rows` reads SQL).
                let piped = args.question.is_none()
                    && args.chat_id.is_none()
                    && !self.terminals.stdin
                    && !secret_on_stdin
                    && images_on_stdin == 0;
                Asked::Chat {
                    chat: Box::new(chat),
                    question: Question::of(&args, piped, network.limits.timeout)?,
                }
            }
        };
        let mode = mode_traits(args.output);
        let json_modes = jq_modes();
        let destination = destination(
            args.destination,
            mode.jq.ok_or_else(|| (mode_name(args.output), json_modes.as_str())),
        )?;
        // The data goes to the terminal only when stdout is one and no
        // --output-file takes it.
        let stdout_is_terminal = destination.file.is_none() && self.terminals.stdout;
        if mode.on_terminal == OnTerminal::Refused && stdout_is_terminal {
            return Err(usage(format!(
                "{} writes a picture, not text: redirect stdout to a file (analyst ask {} … > chart.png)",
                mode_name(args.output),
                mode_name(args.output)
            )));
        }
        let live = mode.on_terminal == OnTerminal::Live;
        let display = Display {
            spinner: self.notes.show_progress() && (live || !stdout_is_terminal),
            stream_answer: live && stdout_is_terminal,
            width: terminal_width(stdout_is_terminal),
            styled: stdout_is_terminal && self.styles,
        };
        let options = RenderOptions {
            pick,
            scale: args.scale,
            vega_config: args
                .vega_config
                .as_deref()
                .map(|text| vega_config(text, network.limits.timeout))
                .transpose()?,
            width: display.width,
        };
        let truncation = Truncation {
            every_row: args
                .all_rows
                .then(|| OnDemand::new(data, network, std::time::Instant::now())),
            allow_partial: args.allow_partial,
        };
        let printer = Printer::new(
            mode,
            &options,
            self.notes,
            display,
            truncation,
            destination.jq.is_some(),
        )
        .announcing(asked.message_id())
        .allowing_questions(args.allow_questions);
        Ok(AskSettings {
            asked,
            printer,
            destination,
            tee: args.tee,
            fail_on_tool_error: args.fail_on_tool_error,
            expectations,
            network,
            recording,
            thread,
            otlp: self.otlp(),
        })
    }

    fn abort(&self, args: AbortArgs) -> Result<AbortSettings> {
        let network = self.network(&args.network)?;
        let identity = self.identity(&args.identity, network.limits.timeout)?;
        let chat = self.chat(&args.endpoint, &identity, network.limits.timeout)?;
        let chat_id = args.chat_id.trim().to_string();
        if chat_id.is_empty() {
            return Err(usage("--chat-id is empty"));
        }
        Ok(AbortSettings { chat, chat_id, network })
    }

    fn session(&self, args: SessionArgs) -> Result<SessionCommandSettings> {
        let network = self.network(&args.network)?;
        let base_url = self.base_url(args.base_url)?;
        if args.identity.persistent || args.identity.ttl.is_some() {
            return Err(usage(
                "--persistent and --ttl describe users created by the chat; generate-session does not take them",
            ));
        }
        let mut input = self.identity(&args.identity, network.limits.timeout)?;
        // The chat's own settings: an embedded app's time zone is a
        // --setting; ANALYST_TIMEZONE, meant for chats, is left out here.
        let timezone_flag = self.value_source("timezone") == Some(ValueSource::CommandLine);
        if input.no_authoring || (input.timezone.is_some() && timezone_flag) {
            return Err(usage(
                "--timezone and --no-authoring are chat settings; for an embedded app use --setting timezone=TZ (and the app's own switches)",
            ));
        }
        input.timezone = None;
        let mut identity = input.validate()?;
        // generate-session takes attribute values as JSON when they are JSON.
        for attribute in &mut identity.user_attributes {
            if let Value::String(text) = &attribute.value {
                if let Ok(value) = serde_json::from_str::<Value>(text) {
                    attribute.value = value;
                }
            }
        }
        if let Some(tenant) = &args.embed_tenant {
            check_embed_tenant(tenant)?;
        }
        let user_profile = match (args.display_name, args.picture) {
            (None, None) => None,
            (display_name, picture) => {
                if identity.internal_id.is_some() {
                    return Err(usage(
                        "--display-name and --picture are for external users; an internal user keeps their own profile",
                    ));
                }
                if let Some(picture) = &picture {
                    check_picture(picture)?;
                }
                Some(UserProfile { display_name, picture })
            }
        };
        let settings = args
            .settings
            .iter()
            .map(|setting| parse_setting(setting))
            .collect::<Result<Map<String, Value>>>()?;
        let embedding = Embedding {
            deployment_id: args.deployment_id.or(self.profile.and_then(|p| p.deployment_id)),
            branch_name: args.branch.map(|b| b.trim().to_string()).filter(|b| !b.is_empty()),
            embed_tenant_name: args.embed_tenant,
            creator_mode: args.creator_mode.then_some(true),
            user_profile,
            settings: (!settings.is_empty()).then_some(settings),
        };
        let key = self.api_key(self.secrets(&args.key.api_key_file, &None, network.limits.timeout))?;
        Ok(SessionCommandSettings {
            base_url,
            key,
            embedding,
            identity,
            output: args.output,
            destination: destination(
                args.destination,
                match args.output {
                    SessionOutput::Json => Ok(JqInput::Whole),
                    SessionOutput::Text => Err((mode_name(SessionOutput::Text), "-o json")),
                },
            )?,
            network,
        })
    }

    fn revoke(&self, args: SessionRevokeArgs) -> Result<RevokeSettings> {
        let network = self.network(&args.network)?;
        let base_url = self.base_url(args.base_url)?;
        let session_ids: Vec<String> = match args.session_id.trim() {
            "-" => {
                if args.key.api_key_file.as_deref() == Some("-") {
                    return Err(usage(
                        "standard input cannot hold both the session ids ('-') and the API key (--api-key-file -)",
                    ));
                }
                read_stdin("the session ids", network.limits.timeout)?
                    .lines()
                    .map(str::trim)
                    .filter(|line| !line.is_empty())
                    .map(str::to_string)
                    .collect()
            }
            id => vec![id.to_string()],
        };
        if session_ids.is_empty() || session_ids.iter().any(String::is_empty) {
            return Err(usage("no session id to revoke"));
        }
        let key = self.api_key(self.secrets(&args.key.api_key_file, &None, network.limits.timeout))?;
        Ok(RevokeSettings {
            base_url,
            key,
            session_ids,
            network,
        })
    }

    fn rows(&self, args: RowsArgs) -> Result<RowsSettings> {
        let network = self.network(&args.network)?;
        let sql = match (args.sql, args.sql_file, args.from) {
            (Some(sql), _, _) => SqlSource::Text(sql),
            (None, Some(path), _) => SqlSource::File(path),
            (None, None, Some(path)) => SqlSource::Saved(path),
            (None, None, None) if !self.terminals.stdin => SqlSource::Saved("-".into()),
            (None, None, None) => return Err(usage(
                "where is the SQL? give --sql, --sql-file or --from FILE, or pipe a stream saved by 'analyst ask -o raw'",
            )),
        };
        let mut data = self.data(
            &args.data,
            security_context(args.security_context.as_deref(), network.limits.timeout)?,
            network.limits.timeout,
        );
        if let (Some(_), Some(token), None) = (&data.security_context, &data.token, &data.secret) {
            return Err(usage(format!(
                "--security-context cannot apply to {}: the token's payload is the security context; use ANALYST_DATA_SECRET to sign one with it",
                token.origin()
            )));
        }
        data.timezone = args.timezone;
        data.cache = args.cache.map(|mode| mode.as_str().to_string());
        let destination = destination(
            args.destination,
            match args.output {
                RowsOutput::Json => Ok(JqInput::Whole),
                RowsOutput::Ndjson => Ok(JqInput::EachLine),
                other => Err((mode_name(other), "-o json or -o ndjson")),
            },
        )?;
        let stdout_is_terminal = destination.file.is_none() && self.terminals.stdout;
        if args.output == RowsOutput::Parquet && stdout_is_terminal {
            return Err(usage(
                "-o parquet writes a binary file, not text: give --output-file FILE or redirect stdout (analyst rows -o parquet … > rows.parquet)",
            ));
        }
        Ok(RowsSettings {
            sql,
            pick: pick(args.query),
            output: args.output,
            width: terminal_width(stdout_is_terminal),
            page_size: (!args.no_paging).then_some(args.page_size),
            order_by: args.order_by,
            destination,
            always: args.always,
            allow_partial: args.allow_partial,
            data,
            network,
            otlp: self.otlp(),
        })
    }

    /// Where the subcommand's argument `id` got its value, when it has
    /// that argument and a value.
    fn value_source(&self, id: &str) -> Option<ValueSource> {
        self.sub
            .filter(|matches| matches.try_contains_id(id).is_ok())
            .and_then(|matches| matches.value_source(id))
    }

    /// Where the value of the argument `id` came from: its `flag`, its
    /// variable `name`, else the profile's `key`; `unset` when none has it.
    fn origin(&self, id: &str, flag: &'static str, name: &'static str, key: &str) -> String {
        match (self.value_source(id), self.profile.filter(|p| p.key(key).is_some())) {
            (Some(_), _) => self.flag_or_variable(id, flag, name).to_string(),
            (None, Some(profile)) => profile.origin(key),
            (None, None) => "unset".to_string(),
        }
    }

    /// How messages name the argument `id`'s value: its variable `name`
    /// when it came from the environment, else its `flag`.
    fn flag_or_variable(&self, id: &str, flag: &'static str, name: &'static str) -> &'static str {
        match self.value_source(id) {
            Some(ValueSource::EnvVariable) => name,
            _ => flag,
        }
    }

    /// A setting: the flag's or the variable's value (clap's), else the
    /// profile's `key`.
    fn setting(&self, value: Option<String>, key: &str) -> Option<String> {
        value.or_else(|| self.profile.and_then(|p| p.key(key).cloned()))
    }

    /// A file flag's value, with what named it (the flag, or its variable).
    fn file_flag(&self, id: &str, value: Option<&String>) -> Option<(String, &'static str)> {
        let (flag, name) = match id {
            "api_key_file" => ("--api-key-file", var::API_KEY_FILE),
            _ => ("--cube-token-file", var::CUBE_TOKEN_FILE),
        };
        match value {
            Some(value) => Some((value.clone(), self.flag_or_variable(id, flag, name))),
            None => variable(name).map(|value| (value, name)),
        }
    }

    /// The validated account host: `--base-url` / `ANALYST_BASE_URL`, else
    /// the profile's.
    fn base_url(&self, flag: Option<String>) -> Result<Url> {
        let base = self.setting(flag, "base_url").ok_or_else(|| {
            usage("no account URL: set ANALYST_BASE_URL or pass --base-url (e.g. https://<account>.cubecloud.dev)")
        })?;
        service_url(&base, "--base-url")
    }

    /// The data query API: `--data-url`, `ANALYST_DATA_URL` or the
    /// profile's, its credentials (read within `limit`, the command's
    /// `--timeout`), and the security context a secret signs.
    fn data(
        &self,
        args: &DataEndpointArgs,
        security_context: Option<Map<String, Value>>,
        limit: Option<Duration>,
    ) -> DataSettings {
        let secrets = Secrets::find(None, None, self.profile).within(limit);
        let url = match self.setting(args.data_url.clone(), "data_url") {
            None => Err(usage(
                "no data query URL: set ANALYST_DATA_URL or pass --data-url (e.g. https://<deployment>.cubecloudapp.dev/cubejs-api)",
            )),
            Some(text) => service_url(&text, "--data-url"),
        };
        DataSettings {
            url: url.map_err(|err| Fault::new(kind_of(&err), format!("{err:#}"))),
            token: secrets.data_token.map(|token| Box::new(token) as Box<dyn ReadSecret>),
            secret: secrets
                .data_secret
                .map(|secret| Box::new(secret) as Box<dyn ReadSecret>),
            security_context,
            timezone: None,
            cache: None,
        }
    }

    /// The chat URL of `--chat-url`, `ANALYST_CHAT_URL` or the profile's
    /// `chat_url`, checked; an error names the one it came from.
    fn chat_url(&self, endpoint: &ChatEndpointArgs) -> Result<Url> {
        checks::chat_url(
            self.setting(endpoint.chat_url.clone(), "chat_url"),
            &self.origin("chat_url", "--chat-url", var::CHAT_URL, "chat_url"),
        )
    }

    /// The identity as given: flags and environment, then the profile's
    /// when neither kind of id was given. When both ids are set and only
    /// one came from the command line, the flag wins over the environment.
    fn identity(&self, args: &IdentityArgs, limit: Option<Duration>) -> Result<IdentityInput> {
        let from_env = |id: &str| self.value_source(id) == Some(ValueSource::EnvVariable);
        let (mut external_id, mut internal_id) = (args.external_id.clone(), args.internal_id.clone());
        if external_id.is_some() && internal_id.is_some() {
            match (from_env("external_id"), from_env("internal_id")) {
                (true, false) => external_id = None,
                (false, true) => internal_id = None,
                _ => {}
            }
        }
        let mut names = FieldNames {
            external_id: self
                .flag_or_variable("external_id", "--external-id", var::EXTERNAL_ID)
                .into(),
            internal_id: self
                .flag_or_variable("internal_id", "--internal-id", var::INTERNAL_ID)
                .into(),
            ..FieldNames::default()
        };
        let mut email = args.email.clone();
        if let Some(profile) = self.profile {
            if external_id.is_none() && internal_id.is_none() {
                external_id.clone_from(&profile.external_id);
                internal_id.clone_from(&profile.internal_id);
                names.external_id = profile.origin("external_id");
                names.internal_id = profile.origin("internal_id");
            }
            if email.is_none() {
                email.clone_from(&profile.email);
            }
        }
        Ok(IdentityInput {
            external_id,
            internal_id,
            email,
            attributes: args
                .attrs
                .iter()
                .map(|text| parse_attribute(text))
                .collect::<Result<_>>()?,
            groups: args.groups.clone(),
            security_context: security_context(args.security_context.as_deref(), limit)?,
            persistent: args.persistent,
            ttl: args.ttl.as_deref().map(|text| duration(text, "--ttl")).transpose()?,
            timezone: args.timezone.clone(),
            no_authoring: args.no_authoring,
            names,
        })
    }

    /// The chat service, its credentials and who asks. With a Cube token
    /// and no identity flag, the token names the user.
    fn chat(
        &self,
        endpoint: &ChatEndpointArgs,
        identity: &IdentityInput,
        limit: Option<Duration>,
    ) -> Result<ChatSettings> {
        let url = self.chat_url(endpoint)?;
        let (key, cube_token) = self.chat_credentials(&url, endpoint, limit)?;
        let identity = match (&cube_token, identity.is_anonymous()) {
            (Some(_), true) => None,
            _ => Some(identity.validate()?),
        };
        Ok(ChatSettings {
            url,
            key,
            cube_token,
            identity,
        })
    }
}

#[cfg(test)]
mod tests;
