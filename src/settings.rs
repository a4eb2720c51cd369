//! Settings: the command line, the environment and the profile of the config
//! file, resolved once into typed settings per command (a flag wins over
//! the environment, which wins over the profile). This is the only reader of
//! the environment, of clap's `ArgMatches` and of the config file; commands
//! receive what it resolves and never look further.
//!
//! Everything that must be right before anything is sent is checked here:
//! endpoints (the plain-http rule), the API key (never on argv, never
//! printed), the identity (`sessionSettings` and its rules), the patterns of
//! the expectations.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{IsTerminal, Read};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::Duration;

use anyhow::Result;
use clap::parser::ValueSource;
use clap::{ArgMatches, FromArgMatches, ValueEnum};
use regex::Regex;
use reqwest::Url;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::cli::{
    AbortArgs, AskArgs, ChatEndpointArgs, CheckAction, CheckArgs, CheckOutput, Cli, ColorWhen, Command as CliCommand,
    CompletionTarget, ConfigAction, ConfigArgs, DestinationArgs, DoctorArgs, GlobalArgs, IdentityArgs, KeyArgs,
    OutputMode, QuerySelector, ReportArgs, RowsArgs, RowsOutput, SessionAction, SessionArgs, SessionOutput,
    SessionRevokeArgs,
};
use crate::error::{kind_of, usage, Fault, Kind};
use crate::jq::JqFilter;
use crate::output::{register_secret, shell_quote, Destination, JqInput, Notes};
use crate::results::Pick;
use crate::themes;

/// A secret (API key, data token or secret). Its `Debug` and `Display` print
/// `***`, so it cannot leak through a log line, an error message or a panic.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value, and registers it to be redacted from
    /// everything shown or saved.
    pub fn new(value: String) -> Self {
        register_secret(&value);
        Secret(value)
    }

    /// The secret itself, for the one place that puts it in a header or
    /// signs with it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// When to give up on a stream: the whole command's `--timeout` and the
/// longest silence accepted (`--idle-timeout`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// `--timeout`: the whole command's wall-clock limit.
    pub timeout: Option<Duration>,
    /// `--idle-timeout`: the longest silence accepted from a source.
    pub idle: Option<Duration>,
}

/// How to reach the network: what every command that sends a request needs.
#[derive(Clone, Copy, Debug)]
pub struct Network {
    /// `--connect-timeout`.
    pub connect_timeout: Duration,
    /// `--timeout` and `--idle-timeout`.
    pub limits: Limits,
    /// `--retries`: how many times a transient failure is tried again.
    pub retries: u32,
}

impl Network {
    /// Tries in all for a request that is safe to repeat: the first and
    /// `--retries` more.
    pub fn attempts(&self) -> u32 {
        self.retries.saturating_add(1)
    }
}

/// The Chat API, and who talks to it.
#[derive(Clone, Debug)]
pub struct ChatSettings {
    /// The validated chat URL (`…/chat/stream-chat-state`).
    pub url: Url,
    /// The API key (`Authorization`), when there is one.
    pub key: Option<Secret>,
    /// The Cube token (`X-Cube-Auth-Token`), when there is one.
    pub cube_token: Option<Secret>,
    /// Who asks: the `sessionSettings` object; with a Cube token and no
    /// identity flag, none (the token names the user).
    pub identity: Option<SessionSettings>,
}

/// The question of `ask` and the thread it belongs to.
#[derive(Clone, Debug)]
pub struct Question {
    /// The question (`None` prints the thread so far).
    pub input: Option<String>,
    /// The thread to continue.
    pub chat_id: Option<String>,
    /// The question's `messageId` (`<unix ms>-message`, new for each
    /// question), or the suspended one `--resume` names; none for a read of
    /// the thread.
    pub message_id: Option<String>,
    /// `activeBranchName`.
    pub branch: Option<String>,
    /// `isDefaultBranch` (sent only with a branch).
    pub default_branch: bool,
}

/// Where the stream of `ask` comes from.
#[derive(Debug)]
pub enum AskSource {
    /// A saved stream (`--replay FILE`, `-` = stdin).
    Replay(String),
    /// The service: a question sent as the user of `chat`.
    Chat {
        /// The service and the identity.
        chat: Box<ChatSettings>,
        /// What is asked.
        question: Question,
    },
}

/// What the terminal shows while `ask` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Display {
    /// A spinner on stderr (a terminal, and no `-q`).
    pub spinner: bool,
    /// The answer streamed to stdout as it arrives (`-o answer` to a terminal).
    pub stream_answer: bool,
    /// The terminal's width in columns, when stdout is a terminal (`-o table`).
    pub width: Option<u16>,
    /// The streamed answer's Markdown rendered with styles (bold, colour),
    /// not only laid out.
    pub styled: bool,
}

/// The width of the terminal stdout is, when `stdout_is_terminal`.
fn terminal_width(stdout_is_terminal: bool) -> Option<u16> {
    stdout_is_terminal
        .then(|| terminal_size::terminal_size_of(std::io::stdout()))
        .flatten()
        .map(|(width, _)| width.0)
}

/// The settings of `analyst ask`.
#[derive(Debug)]
pub struct AskSettings {
    /// Where the stream comes from.
    pub source: AskSource,
    /// `-o`.
    pub output: OutputMode,
    /// `--jq`, `--output-file`.
    pub destination: Destination,
    /// `--query`: which SQL result `csv`, `vega` and `--min-rows` use.
    pub pick: Pick,
    /// `--tee FILE`.
    pub tee: Option<PathBuf>,
    /// `--scale`: pixels per SVG pixel of `-o png`.
    pub scale: f32,
    /// `--vega-config`: the config merged into a chart's.
    pub vega_config: Option<Map<String, Value>>,
    /// `--fail-on-tool-error`.
    pub fail_on_tool_error: bool,
    /// `--all-rows`.
    pub all_rows: bool,
    /// `--allow-partial`.
    pub allow_partial: bool,
    /// `--expect-*` and `--min-rows`.
    pub expectations: Expectations,
    /// The data query API, for `--all-rows` (resolved only when used).
    pub data: DataSettings,
    /// What the terminal shows.
    pub display: Display,
    /// Timeouts.
    pub network: Network,
}

/// The settings of `analyst abort`.
#[derive(Debug)]
pub struct AbortSettings {
    /// The chat service and the owner of the chat.
    pub chat: ChatSettings,
    /// The chat to stop.
    pub chat_id: String,
    /// Timeouts.
    pub network: Network,
}

/// The settings of `analyst session`.
#[derive(Debug)]
pub struct SessionCommandSettings {
    /// The validated account host.
    pub base_url: Url,
    /// The API key.
    pub key: Secret,
    /// What the generate-session body carries besides who.
    pub embedding: Embedding,
    /// The user the session is for.
    pub identity: SessionSettings,
    /// `-o`.
    pub output: SessionOutput,
    /// `--jq`, `--output-file`.
    pub destination: Destination,
    /// Timeouts.
    pub network: Network,
}

/// The generate-session fields that are not the user's identity.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Embedding {
    /// `--deployment-id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deployment_id: Option<u64>,
    /// `--branch`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch_name: Option<String>,
    /// `--embed-tenant`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed_tenant_name: Option<String>,
    /// `--creator-mode`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub creator_mode: Option<bool>,
    /// `--display-name` and `--picture`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_profile: Option<UserProfile>,
    /// `--setting KEY=VALUE`, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<Map<String, Value>>,
}

/// The `userProfile` of a generate-session body.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserProfile {
    /// `--display-name`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// `--picture`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub picture: Option<String>,
}

/// The settings of `analyst session revoke`.
#[derive(Debug)]
pub struct RevokeSettings {
    /// The validated account host.
    pub base_url: Url,
    /// The API key.
    pub key: Secret,
    /// The sessions to end, in order.
    pub session_ids: Vec<String>,
    /// Timeouts.
    pub network: Network,
}

/// Where the SQL of `rows` comes from.
#[derive(Debug)]
pub enum SqlSource {
    /// `--sql`.
    Text(String),
    /// `--sql-file` (`-` = stdin).
    File(String),
    /// `--from FILE` (`-` = stdin), or stdin when it is a pipe.
    Saved(String),
}

/// The settings of `analyst rows`.
#[derive(Debug)]
pub struct RowsSettings {
    /// Where the SQL comes from.
    pub sql: SqlSource,
    /// `--query` for a saved stream.
    pub pick: Pick,
    /// `-o`.
    pub output: RowsOutput,
    /// The terminal's width for `-o table`, when stdout is a terminal.
    pub width: Option<u16>,
    /// `--page-size` (None: `--no-paging`).
    pub page_size: Option<u64>,
    /// `--order-by COL`.
    pub order_by: Option<String>,
    /// `--jq`, `--output-file`.
    pub destination: Destination,
    /// `--always`.
    pub always: bool,
    /// `--allow-partial`.
    pub allow_partial: bool,
    /// The data query API.
    pub data: DataSettings,
    /// Timeouts.
    pub network: Network,
}

/// `--jq` and `--output-file` as checked for an output: `jq_input` says
/// how a filter reads it, or names the output mode it cannot filter.
fn destination(args: DestinationArgs, jq_input: Result<JqInput, String>) -> Result<Destination> {
    let jq = match (args.jq, jq_input) {
        (None, _) => None,
        (Some(expression), Ok(input)) => Some((JqFilter::compile(&expression)?, input)),
        (Some(_), Err(mode)) => {
            return Err(usage(format!(
                "--jq filters JSON, and {mode} is not JSON: use it with -o json (or -o events, -o ndjson)"
            )))
        }
    };
    if let Some(path) = &args.output_file {
        check_output_file("--output-file", path)?;
        if path.is_dir() {
            return Err(usage(format!("--output-file {}: that is a folder", path.display())));
        }
    }
    Ok(Destination {
        file: args.output_file,
        jq,
    })
}

/// The report flags of `check` and `check merge`, the `--junit` file
/// checked to be writable.
fn report_settings(args: ReportArgs) -> Result<ReportSettings> {
    if let Some(path) = &args.junit {
        check_output_file("--junit", path)?;
    }
    let json = args.output == Some(CheckOutput::Json);
    Ok(ReportSettings {
        destination: destination(
            args.destination,
            match (json, args.tap) {
                (true, _) => Ok(JqInput::Whole),
                (false, true) => Err("--tap".into()),
                (false, false) => Err("a report without -o json".into()),
            },
        )?,
        junit: args.junit,
        tap: args.tap,
        json,
        baseline: args.baseline,
        fail_on_regression: args.fail_on_regression,
    })
}

/// Where a `check` report goes, and what it is compared with.
#[derive(Debug)]
pub struct ReportSettings {
    /// `--junit FILE`.
    pub junit: Option<PathBuf>,
    /// `--tap`.
    pub tap: bool,
    /// `-o json`.
    pub json: bool,
    /// `--baseline REPORT`.
    pub baseline: Option<PathBuf>,
    /// `--fail-on-regression`.
    pub fail_on_regression: bool,
    /// `--jq`, `--output-file`.
    pub destination: Destination,
}

/// The settings of `analyst check merge`.
#[derive(Debug)]
pub struct MergeSettings {
    /// The shards' reports.
    pub reports: Vec<PathBuf>,
    /// Where the merged report goes.
    pub report: ReportSettings,
}

/// The settings of `analyst check`.
#[derive(Debug)]
pub struct CheckSettings {
    /// The suite file.
    pub suite: PathBuf,
    /// `--jobs`.
    pub jobs: usize,
    /// `--repeat`: every case's runs, overriding the suite.
    pub repeat: Option<usize>,
    /// `--filter`: the cases whose name matches run.
    pub filter: Option<Regex>,
    /// `--shard K/N`: the K-th of N slices of the cases runs.
    pub shard: Option<(u32, u32)>,
    /// Where the report goes.
    pub report: ReportSettings,
    /// `--save DIR`.
    pub save: Option<PathBuf>,
    /// The chat URL.
    pub url: Url,
    /// The API key, when there is one.
    pub key: Option<Secret>,
    /// The Cube token, when there is one.
    pub cube_token: Option<Secret>,
    /// The identity of the command line, which the suite may override.
    pub identity: IdentityInput,
    /// The data query API (`reference_sql`).
    pub data: DataSettings,
    /// Timeouts.
    pub network: Network,
}

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
    Check(CheckSettings),
    /// `analyst check merge`.
    Merge(MergeSettings),
    /// `analyst completions`.
    Completions(CompletionTarget, Option<PathBuf>),
    /// `analyst version`.
    Version,
    /// `analyst doctor`.
    Doctor(Box<DoctorSettings>),
    /// `analyst config list`: the settings, each with where it came from.
    ConfigList(Vec<Finding>),
    /// `analyst config path`.
    ConfigPath(Option<PathBuf>),
    /// `analyst config profiles`: the config file's profile names.
    ConfigProfiles(Vec<String>),
}

impl Command {
    /// Where the command's data goes (`--jq`, `--output-file`), taken out
    /// of its settings for the one [`crate::output::Out`] of the process.
    pub fn take_destination(&mut self) -> Destination {
        let destination = match self {
            Command::Ask(settings) => &mut settings.destination,
            Command::Session(settings) => &mut settings.destination,
            Command::Rows(settings) => &mut settings.destination,
            Command::Check(settings) => &mut settings.report.destination,
            Command::Merge(settings) => &mut settings.report.destination,
            Command::Abort(_)
            | Command::RevokeSessions(_)
            | Command::Completions(..)
            | Command::Version
            | Command::Doctor(_)
            | Command::ConfigList(_)
            | Command::ConfigPath(_)
            | Command::ConfigProfiles(_) => return Destination::default(),
        };
        std::mem::take(destination)
    }
}

/// How a check of `doctor` (or a setting of `config list`) came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Set and right (or, for `config list`, set).
    Ok,
    /// Not set, and not needed by every command.
    Unset,
    /// Wrong, with the kind (and exit code) of the failure.
    Failed(Kind),
}

/// One row of `doctor` or `config list`: what was checked, how it came
/// out, what was found (never a secret's value) and where it came from.
#[derive(Clone, Debug)]
pub struct Finding {
    /// What was checked: `chat URL`, `API key`, …
    pub what: String,
    /// How it came out.
    pub verdict: Verdict,
    /// What was found, or what is wrong.
    pub found: String,
    /// Where it came from: a flag, a variable, a profile key and its file.
    pub from: String,
}

impl Finding {
    fn new(what: &str, verdict: Verdict, found: impl Into<String>, from: impl Into<String>) -> Finding {
        Finding {
            what: what.to_string(),
            verdict,
            found: found.into(),
            from: from.into(),
        }
    }

    /// A check that came out as `result` says: its value, or its error.
    pub fn of<T>(what: &str, result: &Result<T>, shown: impl FnOnce(&T) -> String, from: &str) -> Finding {
        match result {
            Ok(value) => Finding::new(what, Verdict::Ok, shown(value), from),
            Err(err) => Finding::new(what, Verdict::Failed(kind_of(err)), format!("{err:#}"), from),
        }
    }
}

/// The settings of `analyst doctor`: what the settings' checks found, and
/// what to call to check the endpoints.
#[derive(Debug)]
pub struct DoctorSettings {
    /// The checks of the settings, in order.
    pub findings: Vec<Finding>,
    /// The chat API as configured (with the identity), when it is.
    pub chat: Option<ChatSettings>,
    /// The data query API, when its URL and a credential are set.
    pub data: Option<DataSettings>,
    /// The account host and the API key, for the embed endpoints.
    pub account: Option<(Url, Secret)>,
    /// `--offline`: call nothing.
    pub offline: bool,
    /// Timeouts and retries.
    pub network: Network,
}

/// Resolves the parsed command line (with the environment and the profile)
/// into the notes for stderr and the command to run. The notes come back
/// even when resolving fails, so the error can be reported as `-q` says.
pub fn resolve(matches: &ArgMatches) -> (Notes, Result<Command>) {
    let parsed = match Cli::from_arg_matches(matches) {
        Ok(parsed) => parsed,
        Err(err) => return (Notes::new(false, false, false, false), Err(usage(err.to_string()))),
    };
    let global = &parsed.global;
    let stderr_is_terminal = std::io::stderr().is_terminal();
    // NO_COLOR set to something (not empty) turns colour off, and only
    // colour: progress follows -q and the terminal.
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    let color = match global.color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => stderr_is_terminal && !no_color,
    };
    let notes = Notes::new(global.quiet, global.verbose, stderr_is_terminal, color);
    let sub = matches.subcommand().map(|(_, sub)| sub);
    let command = resolve_command(parsed.command, global, sub, &notes);
    (notes, command)
}

fn resolve_command(
    command: CliCommand,
    global: &GlobalArgs,
    sub: Option<&ArgMatches>,
    notes: &Notes,
) -> Result<Command> {
    // These read no profile: a broken config file does not stop them.
    let command = match command {
        CliCommand::Completions(args) => return Ok(Command::Completions(args.target, args.dir)),
        CliCommand::Version => return Ok(Command::Version),
        CliCommand::Config(ConfigArgs {
            action: ConfigAction::Path,
        }) => return Ok(Command::ConfigPath(config_path())),
        CliCommand::Config(ConfigArgs {
            action: ConfigAction::Profiles,
        }) => return Ok(Command::ConfigProfiles(profile_names()?)),
        other => other,
    };
    // doctor reports a broken config file as a failed check, and goes on.
    let loaded = load_profile(global.profile.as_deref());
    let (profile, config_problem) = match (&command, loaded) {
        (CliCommand::Doctor(_), Err(err)) => (None, Some(err)),
        (_, loaded) => (loaded?, None),
    };
    let profile = profile.as_ref();
    if let Some(profile) = profile {
        notes.debug(&format!(
            "profile {} of {} (chosen by {})",
            profile.name,
            profile.file.display(),
            profile.chosen_by
        ));
    }
    let network = Network {
        connect_timeout: global.connect_timeout,
        limits: Limits {
            timeout: global.timeout.filter(|limit| !limit.is_zero()),
            idle: Some(global.idle_timeout).filter(|limit| !limit.is_zero()),
        },
        retries: global.retries,
    };
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty());
    let styles = match global.color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => !no_color,
    };
    let sources = Sources {
        sub,
        profile,
        notes,
        styles,
    };
    Ok(match command {
        CliCommand::Ask(args) => Command::Ask(Box::new(sources.ask(args, network)?)),
        CliCommand::Abort(args) => Command::Abort(sources.abort(args, network)?),
        CliCommand::Session(SessionArgs {
            action: Some(SessionAction::Revoke(args)),
            ..
        }) => Command::RevokeSessions(sources.revoke(args, network)?),
        CliCommand::Session(args) => Command::Session(sources.session(args, network)?),
        CliCommand::Rows(args) => Command::Rows(sources.rows(args, network)?),
        CliCommand::Check(CheckArgs {
            action: Some(CheckAction::Merge(args)),
            ..
        }) => Command::Merge(MergeSettings {
            reports: args.reports,
            report: report_settings(args.report)?,
        }),
        CliCommand::Check(args) => Command::Check(sources.check(args, network)?),
        CliCommand::Doctor(args) => Command::Doctor(Box::new(sources.doctor(args, config_problem, network))),
        CliCommand::Config(_) => Command::ConfigList(sources.config_list()),
        CliCommand::Completions(args) => Command::Completions(args.target, args.dir),
        CliCommand::Version => Command::Version,
    })
}

/// Where a command's values come from besides its flags: the
/// subcommand's matches (to tell a flag from the environment), the
/// profile, and the notes (for warnings such as a readable key file).
struct Sources<'a> {
    sub: Option<&'a ArgMatches>,
    profile: Option<&'a Profile>,
    notes: &'a Notes,
    /// Styles may be written to stdout when it is a terminal (`--color`,
    /// `NO_COLOR`).
    styles: bool,
}

impl Sources<'_> {
    fn ask(&self, args: AskArgs, network: Network) -> Result<AskSettings> {
        let pick = pick(args.query);
        let expectations = Expectations::new(
            args.expect_answer.as_deref(),
            args.expect_sql.as_deref(),
            &args.expect_tool,
            args.min_rows,
            pick,
            "--",
        )?;
        let data = DataSettings::new(
            fill(args.data.data_url, self.profile.and_then(|p| p.data_url.clone())),
            args.identity.security_context.clone(),
            self.profile,
        );
        if args.all_rows {
            data.check()?;
        }
        if let Some(tee) = &args.tee {
            check_tee(tee, args.replay.as_deref())?;
        }
        let source = match args.replay {
            Some(path) if path != "-" && Path::new(&path).is_dir() => {
                return Err(usage(format!("--replay {path}: that is a folder, not a saved stream")))
            }
            Some(path) => AskSource::Replay(path),
            None => {
                let url = self.chat_url(&args.endpoint)?;
                let identity = self.identity(&args.identity)?;
                let secret_on_stdin = args.endpoint.key.api_key_file.as_deref() == Some("-")
                    || args.endpoint.cube_token_file.as_deref() == Some("-");
                if args.question.as_deref() == Some("-") && secret_on_stdin {
                    return Err(usage(
                        "standard input cannot hold both the question ('-') and the API key or Cube token ('-')",
                    ));
                }
                let question = match args.question.as_deref() {
                    Some("-") => Some(read_stdin("the question")?),
                    Some(text) => Some(text.to_string()),
                    None => None,
                };
                let question = question.map(|q| q.trim().to_string());
                if question.as_deref() == Some("") {
                    return Err(usage("the question is empty"));
                }
                let chat_id = args.chat_id.as_deref().map(str::trim);
                if chat_id == Some("") {
                    return Err(usage("--chat-id is empty"));
                }
                let resume = args.resume.as_deref().map(str::trim);
                if let Some(id) = resume.filter(|id| !is_message_id(id)) {
                    return Err(usage(format!(
                        "--resume {id:?} is not a message id (<unix milliseconds>-message, as 'message:' printed it)"
                    )));
                }
                let message_id = match (resume, &question) {
                    (Some(id), _) => Some(id.to_string()),
                    (None, Some(_)) => Some(new_message_id()),
                    (None, None) => None,
                };
                if question.is_none() && chat_id.is_none() {
                    return Err(usage(
                        "ask what? give a QUESTION ('-' reads it from stdin), or --chat-id ID alone to print that thread",
                    ));
                }
                let branch = args.branch.as_deref().map(str::trim);
                if branch == Some("") {
                    return Err(usage("--branch is empty"));
                }
                AskSource::Chat {
                    chat: Box::new(self.chat(url, &args.endpoint, &identity)?),
                    question: Question {
                        input: question,
                        chat_id: chat_id.map(str::to_string),
                        message_id,
                        branch: branch.map(str::to_string),
                        default_branch: args.default_branch,
                    },
                }
            }
        };
        let destination = destination(
            args.destination,
            match args.output {
                OutputMode::Json => Ok(JqInput::Whole),
                OutputMode::Events => Ok(JqInput::EachLine),
                other => Err(format!(
                    "-o {}",
                    other
                        .to_possible_value()
                        .map_or_else(String::new, |v| v.get_name().to_string())
                )),
            },
        )?;
        // The data goes to the terminal only when stdout is one and no
        // --output-file takes it.
        let stdout_is_terminal = destination.file.is_none() && std::io::stdout().is_terminal();
        if args.output == OutputMode::Png && stdout_is_terminal {
            return Err(usage(
                "-o png writes a picture, not text: redirect stdout to a file (analyst ask -o png … > chart.png)",
            ));
        }
        let display = Display {
            spinner: self.notes.show_progress() && (args.output == OutputMode::Answer || !stdout_is_terminal),
            stream_answer: args.output == OutputMode::Answer && stdout_is_terminal,
            width: terminal_width(stdout_is_terminal),
            styled: stdout_is_terminal && self.styles,
        };
        Ok(AskSettings {
            source,
            display,
            output: args.output,
            destination,
            pick,
            tee: args.tee,
            scale: args.scale,
            vega_config: args.vega_config.as_deref().map(vega_config).transpose()?,
            fail_on_tool_error: args.fail_on_tool_error,
            all_rows: args.all_rows,
            allow_partial: args.allow_partial,
            expectations,
            data,
            network,
        })
    }

    fn abort(&self, args: AbortArgs, network: Network) -> Result<AbortSettings> {
        let url = self.chat_url(&args.endpoint)?;
        let identity = self.identity(&args.identity)?;
        let chat_id = args.chat_id.trim().to_string();
        if chat_id.is_empty() {
            return Err(usage("--chat-id is empty"));
        }
        Ok(AbortSettings {
            chat: self.chat(url, &args.endpoint, &identity)?,
            chat_id,
            network,
        })
    }

    fn session(&self, args: SessionArgs, network: Network) -> Result<SessionCommandSettings> {
        let base_url = self.base_url(args.base_url)?;
        if args.identity.persistent || args.identity.ttl.is_some() {
            return Err(usage(
                "--persistent and --ttl describe users created by the chat; generate-session does not take them",
            ));
        }
        let mut input = self.identity(&args.identity)?;
        // The chat's own settings: an embedded app's time zone is a
        // --setting; ANALYST_TIMEZONE, meant for chats, is left out here.
        if input.no_authoring || (input.timezone.is_some() && !self.is_from_env("timezone")) {
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
        let key = self.api_key(&args.key)?;
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
                    SessionOutput::Text => Err("-o text".into()),
                },
            )?,
            network,
        })
    }

    fn revoke(&self, args: SessionRevokeArgs, network: Network) -> Result<RevokeSettings> {
        let base_url = self.base_url(args.base_url)?;
        let session_ids: Vec<String> = match args.session_id.trim() {
            "-" => {
                if args.key.api_key_file.as_deref() == Some("-") {
                    return Err(usage(
                        "standard input cannot hold both the session ids ('-') and the API key (--api-key-file -)",
                    ));
                }
                read_stdin("the session ids")?
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
        let key = self.api_key(&args.key)?;
        Ok(RevokeSettings {
            base_url,
            key,
            session_ids,
            network,
        })
    }

    /// The validated account host: `--base-url` / `ANALYST_BASE_URL`, else
    /// the profile's.
    fn base_url(&self, flag: Option<String>) -> Result<Url> {
        let base = fill(flag, self.profile.and_then(|p| p.base_url.clone())).ok_or_else(|| {
            usage("no account URL: set ANALYST_BASE_URL or pass --base-url (e.g. https://<account>.cubecloud.dev)")
        })?;
        service_url(&base, "--base-url")
    }

    fn rows(&self, args: RowsArgs, network: Network) -> Result<RowsSettings> {
        let sql = match (args.sql, args.sql_file, args.from) {
            (Some(sql), _, _) => SqlSource::Text(sql),
            (None, Some(path), _) => SqlSource::File(path),
            (None, None, Some(path)) => SqlSource::Saved(path),
            (None, None, None) if !std::io::stdin().is_terminal() => SqlSource::Saved("-".into()),
            (None, None, None) => return Err(usage(
                "where is the SQL? give --sql, --sql-file or --from FILE, or pipe a stream saved by 'analyst ask -o raw'",
            )),
        };
        let mut data = DataSettings::new(
            fill(args.data.data_url, self.profile.and_then(|p| p.data_url.clone())),
            args.security_context,
            self.profile,
        );
        if data.security_context.is_some() && data.token.is_some() && data.secret.is_none() {
            return Err(usage(
                "--security-context cannot apply to ANALYST_DATA_TOKEN: the token's payload is the security context; use ANALYST_DATA_SECRET to sign one with it",
            ));
        }
        data.timezone = args.timezone;
        data.cache = args.cache.map(|mode| mode.as_str().to_string());
        let destination = destination(
            args.destination,
            match args.output {
                RowsOutput::Json => Ok(JqInput::Whole),
                RowsOutput::Ndjson => Ok(JqInput::EachLine),
                RowsOutput::Csv => Err("-o csv".into()),
                RowsOutput::Tsv => Err("-o tsv".into()),
                RowsOutput::Table => Err("-o table".into()),
                RowsOutput::Parquet => Err("-o parquet".into()),
            },
        )?;
        if args.output == RowsOutput::Parquet && destination.file.is_none() && std::io::stdout().is_terminal() {
            return Err(usage(
                "-o parquet writes a binary file, not text: give --output-file FILE or redirect stdout (analyst rows -o parquet … > rows.parquet)",
            ));
        }
        let width = terminal_width(destination.file.is_none() && std::io::stdout().is_terminal());
        Ok(RowsSettings {
            sql,
            pick: pick(args.query),
            output: args.output,
            width,
            page_size: (!args.no_paging).then_some(args.page_size),
            order_by: args.order_by,
            destination,
            always: args.always,
            allow_partial: args.allow_partial,
            data,
            network,
        })
    }

    fn check(&self, args: CheckArgs, network: Network) -> Result<CheckSettings> {
        let identity = self.identity(&args.identity)?;
        let url = self.chat_url(&args.endpoint)?;
        let ChatSettings { key, cube_token, .. } = self.chat(url.clone(), &args.endpoint, &identity)?;
        let data = DataSettings::new(
            fill(args.data.data_url, self.profile.and_then(|p| p.data_url.clone())),
            args.identity.security_context.clone(),
            self.profile,
        );
        Ok(CheckSettings {
            suite: args.suite.ok_or_else(|| usage("check what? give a SUITE file"))?,
            jobs: usize::from(args.jobs),
            repeat: args.repeat.map(usize::from),
            filter: args
                .filter
                .as_deref()
                .map(|pattern| regex(pattern, "--filter"))
                .transpose()?,
            shard: args.shard,
            report: report_settings(args.report)?,
            save: args.save,
            url,
            key,
            cube_token,
            identity,
            data,
            network,
        })
    }

    /// The chat URL of `--chat-url`, `ANALYST_CHAT_URL` or the profile's
    /// `chat_url`, checked; an error names the one it came from.
    fn chat_url(&self, endpoint: &ChatEndpointArgs) -> Result<Url> {
        chat_url(
            fill(endpoint.chat_url.clone(), self.profile.and_then(|p| p.chat_url.clone())),
            &self.chat_url_origin(),
        )
    }

    /// Where the chat URL comes from, as [`Sources::origin`] names it.
    fn chat_url_origin(&self) -> String {
        let in_profile = self.profile.is_some_and(|p| p.chat_url.is_some());
        self.origin("chat_url", "--chat-url", "ANALYST_CHAT_URL", "chat_url", in_profile)
    }

    /// Where the value of the argument `id` came from: its flag, its
    /// variable `env`, else the profile's `key` when `in_profile`; `unset`
    /// when none has it.
    fn origin(&self, id: &str, flag: &str, env: &str, key: &str, in_profile: bool) -> String {
        let env_set = !env.is_empty() && std::env::var_os(env).is_some_and(|value| !value.is_empty());
        match self.value_source(id) {
            Some(ValueSource::CommandLine) => flag.to_string(),
            _ if env_set => env.to_string(),
            _ => match self.profile.filter(|_| in_profile) {
                Some(profile) => profile_origin(profile, key),
                None => "unset".to_string(),
            },
        }
    }

    /// `analyst config list`: each setting the chosen profile and the
    /// environment give, with where it came from; secrets as set or unset.
    fn config_list(&self) -> Vec<Finding> {
        let profile = self.profile;
        let mut rows = vec![config_file_finding(profile)];
        let settings: [(&str, &str, &str, Option<String>); 9] = [
            (
                "chat URL",
                "ANALYST_CHAT_URL",
                "chat_url",
                profile.and_then(|p| p.chat_url.clone()),
            ),
            (
                "account URL",
                "ANALYST_BASE_URL",
                "base_url",
                profile.and_then(|p| p.base_url.clone()),
            ),
            (
                "deployment id",
                "ANALYST_DEPLOYMENT_ID",
                "deployment_id",
                profile.and_then(|p| p.deployment_id.map(|id| id.to_string())),
            ),
            (
                "data URL",
                "ANALYST_DATA_URL",
                "data_url",
                profile.and_then(|p| p.data_url.clone()),
            ),
            (
                "external id",
                "ANALYST_EXTERNAL_ID",
                "external_id",
                profile.and_then(|p| p.external_id.clone()),
            ),
            (
                "internal id",
                "ANALYST_INTERNAL_ID",
                "internal_id",
                profile.and_then(|p| p.internal_id.clone()),
            ),
            ("email", "", "email", profile.and_then(|p| p.email.clone())),
            ("time zone", "ANALYST_TIMEZONE", "", None),
            ("timeout", "ANALYST_TIMEOUT", "", None),
        ];
        for (what, env, key, in_profile) in settings {
            let from = self.origin("", "", env, key, in_profile.is_some());
            let value = match from.as_str() {
                "unset" => None,
                from if from == env => std::env::var(env).ok(),
                _ => in_profile,
            };
            rows.push(match value {
                Some(value) => Finding::new(what, Verdict::Ok, value, from),
                None => Finding::new(what, Verdict::Unset, "unset", ""),
            });
        }
        rows.extend(self.secret_findings());
        rows
    }

    /// The secrets as set or unset, each with the source that wins (never
    /// run, never read).
    fn secret_findings(&self) -> Vec<Finding> {
        let env = |name: &'static str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(|_| name.to_string())
        };
        let profile =
            |key: &str, set: fn(&Profile) -> bool| self.profile.filter(|p| set(p)).map(|p| profile_origin(p, key));
        let flag_or_env = |id: &str, flag: &str, var: &'static str| match self.value_source(id) {
            Some(ValueSource::CommandLine) => Some(flag.to_string()),
            _ => env(var),
        };
        let secrets = [
            (
                "API key",
                flag_or_env("api_key_file", "--api-key-file", "ANALYST_API_KEY_FILE")
                    .or_else(|| env("ANALYST_API_KEY"))
                    .or_else(|| profile("api_key_command", |p| p.api_key_command.is_some()))
                    .or_else(|| profile("api_key_file", |p| p.api_key_file.is_some())),
            ),
            (
                "Cube token",
                flag_or_env("cube_token_file", "--cube-token-file", "ANALYST_CUBE_TOKEN_FILE")
                    .or_else(|| env("ANALYST_CUBE_TOKEN"))
                    .or_else(|| profile("cube_token_command", |p| p.cube_token_command.is_some())),
            ),
            (
                "data token",
                env("ANALYST_DATA_TOKEN").or_else(|| profile("data_token_command", |p| p.data_token_command.is_some())),
            ),
            ("data secret", env("ANALYST_DATA_SECRET")),
        ];
        secrets
            .into_iter()
            .map(|(what, from)| match from {
                Some(from) => Finding::new(what, Verdict::Ok, "set", from),
                None => Finding::new(what, Verdict::Unset, "unset", ""),
            })
            .collect()
    }

    /// `analyst doctor`: every setting checked as the commands would check
    /// it, each failure a finding rather than the end (a broken config file
    /// is `config_problem`); what the endpoints need, to call them.
    fn doctor(&self, args: DoctorArgs, config_problem: Option<anyhow::Error>, network: Network) -> DoctorSettings {
        let mut findings = vec![match config_problem {
            Some(err) => Finding::new("config file", Verdict::Failed(kind_of(&err)), format!("{err:#}"), ""),
            None => config_file_finding(self.profile),
        }];
        // The chat API: its URL, its credential, who asks.
        let url_from = self.chat_url_origin();
        let url = self.chat_url(&args.endpoint);
        findings.push(Finding::of(
            "chat URL",
            &url,
            |url| {
                let kind = if url.path().contains("/deployments/") {
                    "deployment"
                } else {
                    "agent"
                };
                format!("{url} (an {kind} URL)")
            },
            &url_from,
        ));
        let identity = self.identity(&args.identity);
        let ids_from = identity.as_ref().map_or(String::new(), |identity| {
            match (&identity.external_id, &identity.internal_id) {
                (Some(_), _) => identity.ids_from.external.clone(),
                (None, Some(_)) => identity.ids_from.internal.clone(),
                (None, None) => String::new(),
            }
        });
        let chat = match (&url, &identity) {
            (Ok(url), Ok(identity)) => Some(self.chat(url.clone(), &args.endpoint, identity)),
            _ => None,
        };
        let credential_from: Vec<String> = self
            .secret_findings()
            .into_iter()
            .filter(|finding| {
                matches!(finding.what.as_str(), "API key" | "Cube token") && finding.verdict == Verdict::Ok
            })
            .map(|finding| finding.from)
            .collect();
        if let Some(chat) = &chat {
            let credential = chat.as_ref().map(|chat| match (&chat.key, &chat.cube_token) {
                (Some(_), Some(_)) => "an API key and a Cube token (the key is used): set",
                (Some(_), None) => "an API key: set",
                _ => "a Cube token: set",
            });
            let credential = credential.map_err(|err| Fault::new(kind_of(err), format!("{err:#}")).into());
            findings.push(Finding::of(
                "chat credential",
                &credential,
                |what| what.to_string(),
                &credential_from.join(", "),
            ));
        }
        let who: Result<String> = match (&chat, &identity) {
            (Some(Ok(chat)), _) => Ok(chat
                .identity
                .as_ref()
                .map_or_else(|| "the Cube token's user".to_string(), identity_summary)),
            (_, Ok(identity)) => identity.validate().map(|settings| identity_summary(&settings)),
            (_, Err(err)) => Err(usage(format!("{err:#}"))),
        };
        findings.push(Finding::of("identity", &who, String::clone, &ids_from));
        let chat = chat.and_then(Result::ok);
        // The data query API.
        let data = DataSettings::new(
            fill(
                args.data.data_url.clone(),
                self.profile.and_then(|p| p.data_url.clone()),
            ),
            args.identity.security_context.clone(),
            self.profile,
        );
        let data_from = self.origin(
            "data_url",
            "--data-url",
            "ANALYST_DATA_URL",
            "data_url",
            self.profile.is_some_and(|p| p.data_url.is_some()),
        );
        let data_ready = match data.url {
            None => {
                findings.push(Finding::new(
                    "data query API",
                    Verdict::Unset,
                    "not set (rows, --all-rows and reference_sql need it)",
                    "",
                ));
                false
            }
            Some(_) => {
                let checked = data.check().map(|()| data.url().map(|url| url.to_string()));
                let checked = checked.and_then(|url| url);
                findings.push(Finding::of("data query API", &checked, String::clone, &data_from));
                checked.is_ok()
            }
        };
        // The account host, for the embed endpoints.
        let base_from = self.origin(
            "base_url",
            "--base-url",
            "ANALYST_BASE_URL",
            "base_url",
            self.profile.is_some_and(|p| p.base_url.is_some()),
        );
        let account = match fill(args.base_url.clone(), self.profile.and_then(|p| p.base_url.clone())) {
            None => {
                findings.push(Finding::new(
                    "account host",
                    Verdict::Unset,
                    "not set (session needs it)",
                    "",
                ));
                None
            }
            Some(_) => {
                let base = self.base_url(args.base_url.clone());
                findings.push(Finding::of("account host", &base, Url::to_string, &base_from));
                match (base, self.has_api_key(&args.endpoint.key)) {
                    (Ok(base), true) => self.api_key(&args.endpoint.key).ok().map(|key| (base, key)),
                    _ => None,
                }
            }
        };
        DoctorSettings {
            findings,
            chat,
            data: data_ready.then_some(data),
            account,
            offline: args.offline,
            network,
        }
    }

    /// Where the subcommand's argument `id` got its value, when it has
    /// that argument and a value.
    fn value_source(&self, id: &str) -> Option<ValueSource> {
        self.sub
            .filter(|matches| matches.try_contains_id(id).is_ok())
            .and_then(|matches| matches.value_source(id))
    }

    /// True when the subcommand's argument `id` came from the environment.
    fn is_from_env(&self, id: &str) -> bool {
        self.value_source(id) == Some(ValueSource::EnvVariable)
    }

    /// The identity as given: flags and environment, then the profile's
    /// when neither kind of id was given. When both ids are set and only
    /// one came from the command line, the flag wins over the environment.
    fn identity(&self, args: &IdentityArgs) -> Result<IdentityInput> {
        let from_env = |id: &str| self.is_from_env(id);
        let (mut external_id, mut internal_id) = (args.external_id.clone(), args.internal_id.clone());
        if external_id.is_some() && internal_id.is_some() {
            match (from_env("external_id"), from_env("internal_id")) {
                (true, false) => external_id = None,
                (false, true) => internal_id = None,
                _ => {}
            }
        }
        let mut email = args.email.clone();
        let mut ids_from = IdSources {
            external: if from_env("external_id") {
                "ANALYST_EXTERNAL_ID"
            } else {
                "--external-id"
            }
            .into(),
            internal: if from_env("internal_id") {
                "ANALYST_INTERNAL_ID"
            } else {
                "--internal-id"
            }
            .into(),
        };
        if let Some(profile) = self.profile {
            if external_id.is_none() && internal_id.is_none() {
                external_id.clone_from(&profile.external_id);
                internal_id.clone_from(&profile.internal_id);
                ids_from = IdSources {
                    external: profile_origin(profile, "external_id"),
                    internal: profile_origin(profile, "internal_id"),
                };
            }
            if email.is_none() {
                email.clone_from(&profile.email);
            }
        }
        Ok(IdentityInput {
            external_id,
            ids_from,
            in_suite: false,
            internal_id,
            email,
            attrs: args.attrs.clone(),
            groups: args.groups.clone(),
            security_context: args.security_context.clone(),
            persistent: args.persistent,
            ttl: args.ttl,
            timezone: args.timezone.clone(),
            no_authoring: args.no_authoring,
        })
    }

    /// The chat's credentials and identity for `url`. An agent URL takes an
    /// API key or a Cube token (both are sent when both are set); a
    /// deployment URL (`…/deployments/{id}/chat/…`) only a Cube token.
    /// With a Cube token and no identity flag, the token names the user.
    fn chat(&self, url: Url, endpoint: &ChatEndpointArgs, identity: &IdentityInput) -> Result<ChatSettings> {
        let deployment = url.path().contains("/deployments/");
        let cube_token = self.cube_token(endpoint)?;
        let key = match (&cube_token, self.has_api_key(&endpoint.key)) {
            (_, true) => Some(self.api_key(&endpoint.key)?),
            (Some(_), false) => None,
            (None, false) if deployment => return Err(no_cube_token()),
            (None, false) => return Err(no_key()),
        };
        if deployment && cube_token.is_none() {
            return Err(no_cube_token());
        }
        let anonymous = identity.external_id.is_none() && identity.internal_id.is_none();
        let identity = match (&cube_token, anonymous) {
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

    /// The Cube token: from `--cube-token-file`/`ANALYST_CUBE_TOKEN_FILE`
    /// (`-` = stdin), else `ANALYST_CUBE_TOKEN`, else the profile's
    /// `cube_token_command`; none when nothing gives one.
    fn cube_token(&self, endpoint: &ChatEndpointArgs) -> Result<Option<Secret>> {
        let (raw, origin) = match (
            endpoint.cube_token_file.as_deref(),
            std::env::var("ANALYST_CUBE_TOKEN").ok(),
        ) {
            (Some("-"), _) => (read_stdin("the Cube token")?, "standard input".to_string()),
            (Some(path), _) => (self.read_key_file(path)?, format!("the Cube token file {path}")),
            (None, Some(token)) => (token, "ANALYST_CUBE_TOKEN".to_string()),
            (None, None) => match self
                .profile
                .and_then(|p| Some((p.cube_token_command.as_ref()?, &p.name)))
            {
                Some((command, name)) => return run_secret_command(command, "cube_token_command", name).map(Some),
                None => return Ok(None),
            },
        };
        one_line_secret(&raw, &origin, "Cube token").map(Some)
    }

    /// True when some source of an API key is set (flag, environment or
    /// profile), whether or not it can be read.
    fn has_api_key(&self, key: &KeyArgs) -> bool {
        key.api_key_file.is_some()
            || std::env::var_os("ANALYST_API_KEY").is_some()
            || self
                .profile
                .is_some_and(|p| p.api_key_command.is_some() || p.api_key_file.is_some())
    }

    /// The API key: from `--api-key-file`/`ANALYST_API_KEY_FILE` when
    /// given (`-` = stdin), else `ANALYST_API_KEY`, else the profile's
    /// `api_key_command` or `api_key_file`. A missing or empty key is a
    /// usage error that names `ANALYST_API_KEY`.
    fn api_key(&self, key: &KeyArgs) -> Result<Secret> {
        let key_file = key.api_key_file.as_deref();
        let env_key = std::env::var("ANALYST_API_KEY").ok();
        let from_profile = self.profile.filter(|_| key_file.is_none() && env_key.is_none());
        let (raw, origin) = match (key_file, env_key, from_profile) {
            (Some("-"), _, _) => (read_stdin("the API key")?, "standard input".to_string()),
            (Some(path), _, _) => (self.read_key_file(path)?, format!("the API key file {path}")),
            (None, Some(key), _) => (key, "ANALYST_API_KEY".to_string()),
            (None, None, Some(profile)) => match (&profile.api_key_command, &profile.api_key_file) {
                (Some(command), _) => {
                    let key = run_secret_command(command, "api_key_command", &profile.name)?;
                    (
                        key.expose().to_string(),
                        format!("profile {}'s api_key_command", profile.name),
                    )
                }
                (None, Some(path)) => {
                    let path = expand_home(path).display().to_string();
                    (self.read_key_file(&path)?, format!("the API key file {path}"))
                }
                (None, None) => return Err(no_key()),
            },
            (None, None, None) => return Err(no_key()),
        };
        one_line_secret(&raw, &origin, "API key")
    }

    /// Reads a key file, warning when users other than its owner may read it.
    fn read_key_file(&self, path: &str) -> Result<String> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| usage(format!("cannot read the API key file {path}: {err}")))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if let Ok(meta) = std::fs::metadata(path) {
                let mode = meta.permissions().mode() & 0o777;
                if mode & 0o077 != 0 {
                    self.notes.warn(&format!(
                        "the API key file {path} can be read by other users (mode {mode:03o}): chmod 600 {path}"
                    ));
                }
            }
        }
        Ok(text)
    }
}

/// A secret read from `origin`, trimmed: empty, or with control characters
/// or several lines, is a usage error naming `what` and `origin`.
fn one_line_secret(raw: &str, origin: &str, what: &str) -> Result<Secret> {
    let secret = raw.trim();
    if secret.is_empty() {
        return Err(usage(format!("the {what} is empty: check {origin}")));
    }
    if secret.chars().any(|c| c.is_control()) {
        return Err(usage(format!(
            "the {what} contains control characters or several lines; it must be one line"
        )));
    }
    Ok(Secret::new(secret.to_string()))
}

fn no_cube_token() -> anyhow::Error {
    usage("a deployment chat URL (…/deployments/ID/chat/…) takes only a Cube token: set ANALYST_CUBE_TOKEN (or pass --cube-token-file PATH); an API key is not accepted there")
}

fn no_key() -> anyhow::Error {
    usage("no API key: set ANALYST_API_KEY (or pass --api-key-file PATH, or use a profile with api_key_command; the key is never taken from the command line), or a Cube token in ANALYST_CUBE_TOKEN")
}

/// A new `messageId`: the time now in Unix milliseconds, then `-message`.
pub fn new_message_id() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis());
    format!("{millis}-message")
}

/// True for a `messageId` of the service's form: 13 or more digits, then
/// `-message`.
fn is_message_id(id: &str) -> bool {
    id.strip_suffix("-message")
        .is_some_and(|digits| digits.len() >= 13 && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// The flag's (or environment's) value, else the profile's.
fn fill(value: Option<String>, from_profile: Option<String>) -> Option<String> {
    value.or(from_profile)
}

fn pick(selector: QuerySelector) -> Pick {
    match selector {
        QuerySelector::Last => Pick::Last,
        QuerySelector::Index(n) => Pick::Index(n),
    }
}

/// The validated Chat API URL, or a usage error saying where to find it.
/// The path every Chat API URL ends in.
const CHAT_PATH: &str = "/chat/stream-chat-state";

/// The chat URL `text` (from `from`: the flag, the variable or the
/// profile), checked: a service URL whose path ends in [`CHAT_PATH`] (a
/// trailing slash is dropped).
fn chat_url(text: Option<String>, from: &str) -> Result<Url> {
    let text = text.ok_or_else(|| {
        usage("no chat URL: set ANALYST_CHAT_URL or pass --chat-url (the Chat API URL from the agent settings)")
    })?;
    let mut url = service_url(&text, from)?;
    // A trailing slash, as a copy from a browser may have, is not part of it.
    let path = url.path().trim_end_matches('/').to_string();
    if !path.ends_with(CHAT_PATH) {
        return Err(usage(format!(
            "{from} {:?} is not a Chat API URL: it ends in {CHAT_PATH}, as the agent settings show it (…/agents/ID{CHAT_PATH} or …/deployments/ID{CHAT_PATH})",
            without_credentials(&text)
        )));
    }
    url.set_path(&path);
    Ok(url)
}

/// Compiles the regular expression `pattern` that `what` gave; an error
/// is one line: what is wrong, and where in the pattern.
pub fn regex(pattern: &str, what: &str) -> Result<Regex> {
    Regex::new(pattern).map_err(|err| {
        let why = match &err {
            regex::Error::Syntax(text) => {
                let lines: Vec<&str> = text.lines().collect();
                let column = lines
                    .iter()
                    .find_map(|line| line.find('^'))
                    .map(|at| at.saturating_sub(4) + 1);
                let reason = lines
                    .iter()
                    .rev()
                    .find_map(|line| line.strip_prefix("error: "))
                    .unwrap_or(text.as_str());
                match column {
                    Some(column) => format!("{reason} at character {column}"),
                    None => reason.to_string(),
                }
            }
            other => other.to_string(),
        };
        usage(format!("{what} {pattern:?} is not a valid regular expression: {why}"))
    })
}

/// Parses and checks a service URL given by `flag`: it must be absolute
/// `https://`, or `http://` to a loopback host (the key must not cross a
/// network in clear text).
pub fn service_url(text: &str, flag: &str) -> Result<Url> {
    let url = Url::parse(text.trim()).map_err(|err| {
        let shown = without_credentials(text);
        usage(format!("{flag} {shown:?} is not a valid URL: {err}"))
    })?;
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(&url) => {}
        "http" => {
            return Err(usage(format!(
                "refusing to send the API key over plain http:// to {}: use https:// ({flag}); plain http is allowed only for localhost and loopback addresses",
                url.host_str().unwrap_or("?")
            )))
        }
        other => return Err(usage(format!("{flag} must be an https:// URL, not {other}://"))),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(usage(format!(
            "{flag} must not carry credentials (user:password@); the API key comes from ANALYST_API_KEY"
        )));
    }
    Ok(url)
}

/// True for a URL whose host is this machine: `localhost` or a loopback
/// address.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

/// The credential of the data query API.
#[derive(Clone, Debug)]
pub enum DataCredential {
    /// A ready JWT (`ANALYST_DATA_TOKEN`, or the profile's `data_token_command`).
    Token(Secret),
    /// The deployment's API secret (`ANALYST_DATA_SECRET`): a fresh token is
    /// signed per request, whose payload is the security context.
    Signed {
        /// The secret.
        secret: Secret,
        /// The token's payload (before `iat` and `exp`).
        security_context: Map<String, Value>,
    },
}

/// The data query API as the environment, the flags and the profile give
/// it. Nothing here is checked until a command needs the API
/// ([`DataSettings::url`], [`DataSettings::credential`]): `ask --all-rows`
/// needs no data credentials when no result is truncated.
#[derive(Debug, Default)]
pub struct DataSettings {
    url: Option<String>,
    token: Option<String>,
    secret: Option<String>,
    security_context: Option<String>,
    token_command: Option<(String, String)>,
    /// `--timezone`.
    pub timezone: Option<String>,
    /// `--cache`, as the API spells it.
    pub cache: Option<String>,
}

impl DataSettings {
    fn new(url: Option<String>, security_context: Option<String>, profile: Option<&Profile>) -> Self {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        DataSettings {
            url,
            token: var("ANALYST_DATA_TOKEN"),
            secret: var("ANALYST_DATA_SECRET"),
            security_context,
            token_command: profile.and_then(|p| Some((p.data_token_command.clone()?, p.name.clone()))),
            timezone: None,
            cache: None,
        }
    }

    /// The validated data query API base (`--data-url`).
    pub fn url(&self) -> Result<Url> {
        let text = self.url.as_deref().ok_or_else(|| {
            usage("no data query URL: set ANALYST_DATA_URL or pass --data-url (e.g. https://<deployment>.cubecloudapp.dev/cubejs-api)")
        })?;
        service_url(text, "--data-url")
    }

    /// Checks, before anything is sent, that the API is named and a
    /// credential is given (a command that prints one runs only when used).
    pub fn check(&self) -> Result<()> {
        self.url()?;
        match (&self.token, &self.secret, &self.token_command) {
            (None, None, None) => self.credential().map(drop),
            _ => Ok(()),
        }
    }

    /// The credential: `ANALYST_DATA_TOKEN` (wins), `ANALYST_DATA_SECRET`
    /// (with `--security-context` as the payload), else the profile's
    /// `data_token_command`; a usage error naming both variables when there
    /// is none.
    pub fn credential(&self) -> Result<DataCredential> {
        // With a security context to sign, the secret signs (cli.md); a
        // ready token's payload already is its security context.
        let sign = self.security_context.is_some() && self.secret.is_some();
        if let Some(token) = self.token.as_ref().filter(|_| !sign) {
            let token = token.strip_prefix("Bearer ").unwrap_or(token).to_string();
            return Ok(DataCredential::Token(Secret::new(token)));
        }
        if let Some(secret) = &self.secret {
            let security_context = self
                .security_context
                .as_deref()
                .map(parse_security_context)
                .transpose()?
                .unwrap_or_default();
            return Ok(DataCredential::Signed {
                secret: Secret::new(secret.clone()),
                security_context,
            });
        }
        if let Some((command, profile)) = &self.token_command {
            return Ok(DataCredential::Token(run_secret_command(
                command,
                "data_token_command",
                profile,
            )?));
        }
        Err(usage(
            "no credential for the data query API: set ANALYST_DATA_TOKEN (a JWT) or ANALYST_DATA_SECRET (the deployment's API secret); the chat API key does not work there",
        ))
    }
}

/// Where the external and internal ids came from, as error messages name
/// them (by default the flags).
#[derive(Clone, Debug)]
pub struct IdSources {
    /// `--external-id`, `ANALYST_EXTERNAL_ID`, `external_id of profile P (FILE)`.
    pub external: String,
    /// `--internal-id`, `ANALYST_INTERNAL_ID`, `internal_id of profile P (FILE)`.
    pub internal: String,
}

impl Default for IdSources {
    fn default() -> Self {
        IdSources {
            external: "--external-id".into(),
            internal: "--internal-id".into(),
        }
    }
}

/// Who the request is made for, as given on the command line, environment
/// or profile (or a suite), before the rules of the API document are checked.
#[derive(Clone, Debug, Default)]
pub struct IdentityInput {
    /// `--external-id` / `ANALYST_EXTERNAL_ID`.
    pub external_id: Option<String>,
    /// Where the ids came from, as errors name it: `--external-id`,
    /// `ANALYST_EXTERNAL_ID`, a profile's `external_id` (empty: the flag).
    pub ids_from: IdSources,
    /// Read from a `check` suite: errors name its fields, not flags.
    pub in_suite: bool,
    /// `--internal-id` / `ANALYST_INTERNAL_ID`.
    pub internal_id: Option<String>,
    /// `--email`.
    pub email: Option<String>,
    /// `--attr NAME=VALUE`, in order.
    pub attrs: Vec<String>,
    /// `--group NAME`, in order.
    pub groups: Vec<String>,
    /// `--security-context JSON|@FILE`, unparsed.
    pub security_context: Option<String>,
    /// `--persistent`.
    pub persistent: bool,
    /// `--ttl`.
    pub ttl: Option<Duration>,
    /// `--timezone` / `ANALYST_TIMEZONE`.
    pub timezone: Option<String>,
    /// `--no-authoring`.
    pub no_authoring: bool,
}

/// One `userAttributes` entry.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UserAttribute {
    /// Attribute name, as configured in the administration panel.
    pub name: String,
    /// Its value for this user: a string for a chat; for a session, JSON
    /// when the text is JSON.
    pub value: Value,
}

/// The validated `sessionSettings` object (API document 2.1). Unset fields
/// are omitted from the JSON.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SessionSettings {
    /// Unique id of an external user: lowercase, no spaces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
    /// Email of an existing internal user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub internal_id: Option<String>,
    /// The user's email address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Row-level security attributes (external users only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub user_attributes: Vec<UserAttribute>,
    /// Group names (external users only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// Custom security context (external users only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub security_context: Option<Map<String, Value>>,
    /// `false` with `--persistent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_ephemeral: Option<bool>,
    /// Lifetime of an ephemeral user, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ephemeral_ttl_seconds: Option<u64>,
    /// The IANA time zone the agent's queries run in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// `false` with `--no-authoring`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_chat_workspace_authoring: Option<bool>,
}

impl IdentityInput {
    /// What errors call the value of `flag`: the flag, or in a suite its
    /// field (`--group` is `groups` there).
    fn name(&self, flag: &'static str) -> &'static str {
        if !self.in_suite {
            return flag;
        }
        match flag {
            "--attr" => "attributes",
            "--group" => "groups",
            "--security-context" => "security_context",
            "--email" => "email",
            other => other,
        }
    }

    /// Applies the rules of the API document and `cli.md`; every violation is
    /// a usage error that names the rule, raised before anything is sent.
    pub fn validate(&self) -> Result<SessionSettings> {
        let external_id = self.external_id.as_deref().map(str::trim);
        let internal_id = self.internal_id.as_deref().map(str::trim);
        match (external_id, internal_id) {
            (None, None) => {
                return Err(usage(
                    "say who is asking: give --external-id ID (or ANALYST_EXTERNAL_ID) for an external user, or --internal-id EMAIL (or ANALYST_INTERNAL_ID) for an existing internal user",
                ))
            }
            (Some(_), Some(_)) => {
                return Err(usage(
                    "give exactly one of --external-id and --internal-id, not both",
                ))
            }
            _ => {}
        }
        if let Some(id) = external_id {
            check_external_id(id, &self.ids_from.external)?;
        }
        if let Some(username) = internal_id {
            check_username(username, &self.ids_from.internal)?;
            let mut refused = Vec::new();
            if !self.attrs.is_empty() {
                refused.push(self.name("--attr"));
            }
            if !self.groups.is_empty() {
                refused.push(self.name("--group"));
            }
            if self.security_context.is_some() {
                refused.push(self.name("--security-context"));
            }
            if !refused.is_empty() {
                return Err(usage(format!(
                    "{} cannot be used with {}: an internal user keeps their own permissions (userAttributes, groups and securityContext are for external users only)",
                    refused.join(", "),
                    &self.ids_from.internal
                )));
            }
        }
        if let Some(email) = &self.email {
            check_email(email, self.name("--email"))?;
        }
        if self.persistent && self.ttl.is_some() {
            return Err(usage(
                "--ttl sets the lifetime of an ephemeral user; it cannot be combined with --persistent",
            ));
        }
        let ephemeral_ttl_seconds = match self.ttl {
            Some(ttl) if ttl.as_secs() == 0 || ttl.subsec_nanos() != 0 => {
                return Err(usage(
                    "--ttl must be a whole number of seconds, at least 1s (e.g. 3600s, 12h, 7d)",
                ))
            }
            Some(ttl) => Some(ttl.as_secs()),
            None => None,
        };
        Ok(SessionSettings {
            external_id: external_id.map(str::to_string),
            internal_id: internal_id.map(str::to_string),
            email: self.email.clone(),
            user_attributes: self.attrs.iter().map(|a| parse_attr(a)).collect::<Result<_>>()?,
            groups: self.groups.iter().map(|g| check_group(g)).collect::<Result<_>>()?,
            security_context: self
                .security_context
                .as_deref()
                .map(parse_security_context)
                .transpose()?,
            is_ephemeral: self.persistent.then_some(false),
            ephemeral_ttl_seconds,
            timezone: match self.timezone.as_deref().map(str::trim) {
                Some("") => return Err(usage("--timezone is empty")),
                timezone => timezone.map(str::to_string),
            },
            allow_chat_workspace_authoring: self.no_authoring.then_some(false),
        })
    }
}

fn check_external_id(id: &str, from: &str) -> Result<()> {
    if id.is_empty() {
        return Err(usage(format!("{from} is empty")));
    }
    if id.chars().any(char::is_whitespace) {
        return Err(usage(format!(
            "{from} {id:?} contains spaces: an external id is lowercase with no spaces"
        )));
    }
    if id.chars().any(char::is_uppercase) {
        return Err(usage(format!(
            "{from} {id:?} has uppercase letters: an external id is lowercase with no spaces (try {:?})",
            id.to_lowercase()
        )));
    }
    Ok(())
}

/// An internal user's username: any name (often an email), not empty, with
/// no spaces or control characters (the service trims and lowercases it).
fn check_username(name: &str, from: &str) -> Result<()> {
    if name.is_empty() {
        return Err(usage(format!("{from} is empty")));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(usage(format!(
            "{from} {name:?} is not a username: it has spaces or control characters"
        )));
    }
    Ok(())
}

/// `--embed-tenant`: lowercase, 5–36 characters of `a-z0-9-`, starting
/// with a letter.
fn check_embed_tenant(name: &str) -> Result<()> {
    let valid = (5..=36).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if valid {
        Ok(())
    } else {
        Err(usage(format!(
            "--embed-tenant {name:?} must be 5-36 characters of a-z, 0-9 and -, starting with a letter"
        )))
    }
}

/// An output file given by `flag` can be created: its folder exists. (The
/// file itself is created only when there is something to write.)
fn check_output_file(flag: &str, path: &Path) -> Result<()> {
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    match folder.is_dir() {
        true => Ok(()),
        false => Err(usage(format!(
            "{flag} {}: the folder {} does not exist",
            path.display(),
            folder.display()
        ))),
    }
}

/// `--vega-config FILE|THEME`: a theme of `vega-themes`, else a file
/// holding a JSON object.
fn vega_config(text: &str) -> Result<Map<String, Value>> {
    if let Some(config) = themes::theme(text) {
        return Ok(config);
    }
    let refuse = |why: String| {
        usage(format!(
            "--vega-config {text}: {why} (or name a theme: {})",
            themes::names().join(", ")
        ))
    };
    let file = std::fs::read_to_string(text).map_err(|err| refuse(format!("cannot read it: {err}")))?;
    match serde_json::from_str::<Value>(&file) {
        Ok(Value::Object(config)) => Ok(config),
        Ok(_) => Err(refuse("not a JSON object".into())),
        Err(err) => Err(refuse(format!("not JSON: {err}"))),
    }
}

/// `--tee FILE` can be created and is not the `--replay` file, which it
/// would empty before it is read.
fn check_tee(tee: &Path, replay: Option<&str>) -> Result<()> {
    check_output_file("--tee", tee)?;
    if let (Some(replay), Ok(tee_file)) = (replay, std::fs::canonicalize(tee)) {
        if std::fs::canonicalize(replay).is_ok_and(|replay_file| replay_file == tee_file) {
            return Err(usage(format!(
                "--tee {} is the --replay file: it would be emptied before it is read",
                tee.display()
            )));
        }
    }
    Ok(())
}

/// A URL as text without the `user:password@` of its authority, to show it
/// in a message (the text may not even parse).
fn without_credentials(text: &str) -> String {
    let Some(scheme_end) = text.find("://").map(|at| at + 3) else {
        return text.to_string();
    };
    let authority_end = text[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(text.len(), |at| scheme_end + at);
    match text[scheme_end..authority_end].rfind('@') {
        Some(at) => format!("{}***@{}", &text[..scheme_end], &text[scheme_end + at + 1..]),
        None => text.to_string(),
    }
}

/// `--picture`: an absolute http(s) URL.
fn check_picture(text: &str) -> Result<()> {
    match Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => Ok(()),
        _ => Err(usage(format!("--picture {text:?} must be an absolute http(s) URL"))),
    }
}

/// `--setting KEY=VALUE`: `true`, `false` and numbers become JSON values,
/// anything else a string.
fn parse_setting(text: &str) -> Result<(String, Value)> {
    let (key, value) = text
        .split_once('=')
        .filter(|(key, _)| !key.trim().is_empty())
        .ok_or_else(|| usage(format!("--setting {text:?} must be KEY=VALUE")))?;
    let typed = match serde_json::from_str::<Value>(value) {
        Ok(value @ (Value::Bool(_) | Value::Number(_))) => value,
        _ => Value::String(value.to_string()),
    };
    Ok((key.trim().to_string(), typed))
}

fn check_email(email: &str, flag: &str) -> Result<()> {
    let valid = match email.split_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !domain.contains('@')
                && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        }
        None => false,
    };
    if valid {
        Ok(())
    } else {
        Err(usage(format!("{flag} {email:?} is not an email address")))
    }
}

fn parse_attr(text: &str) -> Result<UserAttribute> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => Ok(UserAttribute {
            name: name.trim().to_string(),
            value: Value::String(value.to_string()),
        }),
        _ => Err(usage(format!("--attr {text:?} must be NAME=VALUE"))),
    }
}

fn check_group(name: &str) -> Result<String> {
    if name.trim().is_empty() {
        return Err(usage("--group needs a non-empty group name"));
    }
    Ok(name.to_string())
}

/// Parses `--security-context`: inline JSON, or `@FILE` to read it from a
/// file. It must be a JSON object.
fn parse_security_context(text: &str) -> Result<Map<String, Value>> {
    let (json, origin) = match text.strip_prefix('@') {
        Some(path) => (
            std::fs::read_to_string(Path::new(path))
                .map_err(|err| usage(format!("cannot read --security-context file {path}: {err}")))?,
            format!("file {path}"),
        ),
        None => (text.to_string(), "value".to_string()),
    };
    match serde_json::from_str::<Value>(&json) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(usage(format!(
            "--security-context {origin} must be a JSON object ({{…}})"
        ))),
        Err(err) => Err(usage(format!("--security-context {origin} is not valid JSON: {err}"))),
    }
}

/// Reads all of standard input as text (`what` names it in the error, a
/// usage error: the input could not be read).
pub fn read_stdin(what: &str) -> Result<String> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|err| usage(format!("cannot read {what} from standard input: {err}")))?;
    Ok(text)
}

/// What a chat must show to pass (`ask --expect-*`, a `check` turn): the
/// patterns compiled, the tools and the row count.
#[derive(Clone, Debug, Default)]
pub struct Expectations {
    /// `--expect-answer`.
    pub answer: Option<Regex>,
    /// `--expect-sql`.
    pub sql: Option<Regex>,
    /// `--expect-tool`, in order.
    pub tools: Vec<String>,
    /// `--min-rows`, and the SQL result it counts.
    pub min_rows: Option<(u64, Pick)>,
}

impl Expectations {
    /// Compiles the expectations; a bad regular expression is a usage error
    /// naming `what` gave it (a flag prefix, or a suite field's place).
    pub fn new(
        answer: Option<&str>,
        sql: Option<&str>,
        tools: &[String],
        min_rows: Option<u64>,
        pick: Pick,
        what: &str,
    ) -> Result<Self> {
        let compile =
            |pattern: Option<&str>, name: &str| pattern.map(|p| regex(p, &format!("{what}{name}"))).transpose();
        Ok(Expectations {
            answer: compile(answer, "expect-answer")?,
            sql: compile(sql, "expect-sql")?,
            tools: tools.to_vec(),
            min_rows: min_rows.map(|min| (min, pick)),
        })
    }
}

/// One profile of the config file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Profile {
    /// The profile's name (set when loaded).
    #[serde(skip)]
    name: String,
    /// How it was chosen: `--profile`, `ANALYST_PROFILE`, the file's `default`.
    #[serde(skip)]
    chosen_by: String,
    /// The config file it is in.
    #[serde(skip)]
    file: PathBuf,
    chat_url: Option<String>,
    base_url: Option<String>,
    /// The deployment, for `session`.
    deployment_id: Option<u64>,
    data_url: Option<String>,
    external_id: Option<String>,
    internal_id: Option<String>,
    email: Option<String>,
    /// A command whose output is the API key (e.g. `pass show analyst/prod`).
    api_key_command: Option<String>,
    api_key_file: Option<String>,
    /// A command whose output is a data query API token.
    data_token_command: Option<String>,
    /// A command whose output is a Cube token for the chat.
    cube_token_command: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    /// The profile used without `--profile`.
    default: Option<String>,
    #[serde(default)]
    profiles: BTreeMap<String, Profile>,
}

/// `key of profile NAME (FILE)`.
fn profile_origin(profile: &Profile, key: &str) -> String {
    format!("{key} of profile {} ({})", profile.name, profile.file.display())
}

/// The config file's row: its path, whether it exists, and the profile
/// chosen and how.
fn config_file_finding(profile: Option<&Profile>) -> Finding {
    let from = match std::env::var_os("ANALYST_CONFIG").filter(|p| !p.is_empty()) {
        Some(_) => "ANALYST_CONFIG",
        None if std::env::var_os("XDG_CONFIG_HOME").is_some_and(|p| !p.is_empty()) => "XDG_CONFIG_HOME",
        None => "HOME",
    };
    match (config_path(), profile) {
        (None, _) => Finding::new("config file", Verdict::Unset, "none (HOME is not set)", ""),
        (Some(path), Some(profile)) => Finding::new(
            "config file",
            Verdict::Ok,
            format!(
                "{}, profile {} (chosen by {})",
                path.display(),
                profile.name,
                profile.chosen_by
            ),
            from,
        ),
        (Some(path), None) if path.exists() => Finding::new(
            "config file",
            Verdict::Ok,
            format!("{} (no profile chosen)", path.display()),
            from,
        ),
        (Some(path), None) => Finding::new(
            "config file",
            Verdict::Unset,
            format!("{} (not there)", path.display()),
            from,
        ),
    }
}

/// Who asks, in a few words: `external user ci-bot`.
fn identity_summary(identity: &SessionSettings) -> String {
    match (&identity.external_id, &identity.internal_id) {
        (Some(id), _) => format!("external user {id}"),
        (None, Some(name)) => format!("internal user {name}"),
        (None, None) => "nobody".to_string(),
    }
}

/// Where the config file is: `ANALYST_CONFIG`, else
/// `$XDG_CONFIG_HOME/analyst/config.toml`, else `~/.config/analyst/config.toml`.
fn config_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ANALYST_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some(base.join("analyst").join("config.toml"))
}

/// The names of the config file's profiles (none without a file).
fn profile_names() -> Result<Vec<String>> {
    let Some(path) = config_path() else {
        return Ok(Vec::new());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(usage(format!("cannot read the config file {}: {err}", path.display()))),
    };
    let config: ConfigFile =
        toml::from_str(&text).map_err(|err| usage(format!("{}: {}", path.display(), err.message())))?;
    Ok(config.profiles.into_keys().collect())
}

/// The profile to use: `selected` (`--profile` / `ANALYST_PROFILE`), else
/// the file's `default`, else one named `default`; none when there is no
/// config file and none was asked for.
fn load_profile(selected: Option<&str>) -> Result<Option<Profile>> {
    let Some(path) = config_path() else { return Ok(None) };
    let explicit_file = std::env::var_os("ANALYST_CONFIG").is_some();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound && !explicit_file && selected.is_none() => {
            return Ok(None)
        }
        Err(err) => return Err(usage(format!("cannot read the config file {}: {err}", path.display()))),
    };
    let config: ConfigFile = toml::from_str(&text).map_err(|err| {
        let line = err
            .span()
            .map_or(1, |span| text[..span.start.min(text.len())].matches('\n').count() + 1);
        usage(format!("{}:{line}: {}", path.display(), err.message()))
    })?;
    let name = selected
        .map(str::to_string)
        .or(config.default.clone())
        .or_else(|| config.profiles.contains_key("default").then(|| "default".to_string()));
    let Some(name) = name else { return Ok(None) };
    let mut profile = config.profiles.get(&name).cloned().ok_or_else(|| {
        let known: Vec<&str> = config.profiles.keys().map(String::as_str).collect();
        usage(format!(
            "no profile {name:?} in {} (it has: {})",
            path.display(),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ))
    })?;
    profile.name = name;
    profile.file = path.clone();
    profile.chosen_by = match (selected, std::env::var("ANALYST_PROFILE").ok()) {
        (Some(selected), Some(env)) if selected == env => "ANALYST_PROFILE".into(),
        (Some(_), _) => "--profile".into(),
        (None, _) if config.default.is_some() => format!("default in {}", path.display()),
        (None, _) => "the profile named default".into(),
    };
    let commands = [
        &profile.api_key_command,
        &profile.cube_token_command,
        &profile.data_token_command,
    ];
    if commands.iter().any(|command| command.is_some()) {
        refuse_if_others_can_write(&path, &profile.name)?;
    }
    Ok(Some(profile))
}

/// A config file whose profile names a command to run must not be writable
/// by anyone but its owner: whoever can write it could run anything as you.
#[cfg(unix)]
fn refuse_if_others_can_write(path: &Path, profile: &str) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).map_or(0, |meta| meta.permissions().mode());
    if mode & 0o022 == 0 {
        return Ok(());
    }
    Err(usage(format!(
        "{} is writable by others (mode {:o}): refusing to run profile {profile}'s commands; fix it with: chmod go-w {}",
        path.display(),
        mode & 0o777,
        shell_quote(&path.display().to_string())
    )))
}

#[cfg(not(unix))]
fn refuse_if_others_can_write(_path: &Path, _profile: &str) -> Result<()> {
    Ok(())
}

/// The environment variables that hold secrets.
const SECRET_VARIABLES: [&str; 4] = [
    "ANALYST_API_KEY",
    "ANALYST_CUBE_TOKEN",
    "ANALYST_DATA_TOKEN",
    "ANALYST_DATA_SECRET",
];

/// Runs a profile's secret command (`what` names it in errors) with `sh -c`
/// and returns its output, trimmed. Its stdin and stderr are the user's, so a
/// password manager can ask for a passphrase.
fn run_secret_command(command: &str, what: &str, profile: &str) -> Result<Secret> {
    let mut process = Process::new("sh");
    process.args(["-c", command]);
    // The command gets the environment without the other secrets.
    for name in SECRET_VARIABLES {
        process.env_remove(name);
    }
    let output = process
        .stdin(Stdio::inherit())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|err| usage(format!("profile {profile}: cannot run {what}: {err}")))?;
    if !output.status.success() {
        let code = output
            .status
            .code()
            .map_or("a signal".to_string(), |c| format!("exit {c}"));
        return Err(usage(format!("profile {profile}: {what} failed ({code})")));
    }
    let text = String::from_utf8(output.stdout)
        .map_err(|_| usage(format!("profile {profile}: {what} printed something that is not text")))?;
    let secret = text.trim();
    if secret.is_empty() {
        return Err(usage(format!("profile {profile}: {what} printed nothing")));
    }
    Ok(Secret::new(secret.to_string()))
}

/// `~/` at the start of a profile's path, expanded.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let key = Secret::new("sk-very-secret".into());
        assert_eq!(format!("{key} {key:?}"), "*** ***");
    }

    #[test]
    fn plain_http_only_to_loopback() {
        assert!(service_url("http://127.0.0.1:8080/x", "--chat-url").is_ok());
        assert!(service_url("http://localhost/x", "--chat-url").is_ok());
        assert!(service_url("http://[::1]:9/x", "--chat-url").is_ok());
        assert!(service_url("https://ai.us.example.dev/x", "--chat-url").is_ok());
        assert!(service_url("http://ai.us.example.dev/x", "--chat-url").is_err());
        assert!(service_url("http://10.0.0.1/x", "--chat-url").is_err());
        assert!(service_url("ftp://localhost/x", "--chat-url").is_err());
        assert!(service_url("https://u:p@host/x", "--chat-url").is_err());
    }

    #[test]
    fn a_url_that_does_not_parse_is_shown_without_its_credentials() {
        let err = service_url("https://user:hunter2@exa mple.com/x", "--chat-url").unwrap_err();
        let message = format!("{err:#}");
        assert!(!message.contains("hunter2") && !message.contains("user:"), "{message}");
        assert!(message.contains("https://***@exa mple.com/x"), "{message}");
        assert_eq!(without_credentials("no url here"), "no url here");
        assert_eq!(without_credentials("https://h/p@q"), "https://h/p@q");
    }
}
