//! What the commands receive: one settings type per command, resolved and
//! checked, with nothing left to read from the command line, the
//! environment or the config file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::ValueEnum;
use regex::Regex;
use reqwest::Url;
use serde::Serialize;
use serde_json::{Map, Value};

use super::checks::{check_output_file, is_message_id, new_message_id, read_stdin, service_url, Finding};
use super::identity::{IdentityInput, SessionSettings};
use super::image::Image;
use super::secrets::{Secret, SecretSource};
use crate::cli::{AskArgs, CaseArgs, CheckOutput, DestinationArgs, OutputMode, ReportArgs, RowsOutput, SessionOutput};
use crate::error::usage;
use crate::input::Deadline;
use crate::jq::JqFilter;
use crate::modes::{Mode, ModeTraits, OnTerminal};
use crate::output::{Destination, JqInput, Notes};
use crate::results::Pick;

pub use crate::domain::{Display, Limits, Network, Question};
pub use crate::expect::Expectations;

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

impl ChatSettings {
    /// Who asks, as the history records it and keys `--thread` names: the
    /// user the service takes. With an API key (which the service takes
    /// when both are sent), or without a Cube token, the
    /// `sessionSettings`' (`identity`, or this chat's own); with only a
    /// Cube token, the token's user (its `externalId`, else `sub` claim).
    pub fn asker(&self, identity: Option<&SessionSettings>) -> String {
        let identity = identity.or(self.identity.as_ref());
        let token_user = match &self.key {
            Some(_) => None,
            None => self.cube_token.as_ref().and_then(token_user),
        };
        match token_user {
            Some(user) => crate::history::identity(Some(&user), None),
            None => crate::history::identity(
                identity.and_then(|identity| identity.external_id.as_deref()),
                identity.and_then(|identity| identity.internal_id.as_deref()),
            ),
        }
    }
}

/// The user a Cube token names: its payload's `externalId`, else `sub`
/// (the token is not checked here: the service does that).
fn token_user(token: &Secret) -> Option<String> {
    use base64::Engine;
    let payload = token.expose().split('.').nth(1)?;
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Value = serde_json::from_slice(&payload).ok()?;
    ["externalId", "sub"]
        .iter()
        .find_map(|claim| claims.get(*claim)?.as_str().filter(|user| !user.is_empty()))
        .map(str::to_string)
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

/// The settings of `analyst ask`.
#[derive(Debug)]
pub struct AskSettings {
    /// Where the stream comes from.
    pub source: AskSource,
    /// `-o`.
    pub output: OutputMode,
    /// What that mode shows, keeps and allows.
    pub mode: ModeTraits,
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
    /// Where the turn is recorded; `None`: not recorded (a replay, or off).
    pub recording: Option<super::Recording>,
    /// `--thread NAME`.
    pub thread: Option<super::ThreadSettings>,
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

/// Where a `check` report goes, and what it is compared with.
#[derive(Debug)]
pub struct ReportSettings {
    /// `--junit FILE`.
    pub junit: Option<PathBuf>,
    /// `--summary FILE`: the Markdown summary appended to it.
    pub summary: Option<PathBuf>,
    /// The report on stdout (or `--output-file`): `--tap` or `-o MODE`.
    pub format: Option<ReportFormat>,
    /// `--baseline REPORT`.
    pub baseline: Option<PathBuf>,
    /// `--fail-on-regression`.
    pub fail_on_regression: bool,
    /// `--min-accuracy`: the share of cases that must pass (default: all).
    pub min_accuracy: Option<f64>,
    /// `--jq`, `--output-file`.
    pub destination: Destination,
}

impl ReportSettings {
    /// The files the report is written to, each with its flag.
    pub fn written(&self) -> Vec<(&'static str, &Path)> {
        [
            ("--output-file", self.destination.file.as_deref()),
            ("--junit", self.junit.as_deref()),
            ("--summary", self.summary.as_deref()),
        ]
        .into_iter()
        .filter_map(|(flag, file)| Some((flag, file?)))
        .collect()
    }
}

/// A suite and which of its cases run (or are listed).
#[derive(Debug)]
pub struct Selection {
    /// The suite: a TOML file, or Cube's eval files.
    pub suite: PathBuf,
    /// `CUBE_CLOUD_AGENTS_CONFIG_PATH`: where Cube's agents folder is
    /// under a repository root (else `agents/`).
    pub agents_path: Option<PathBuf>,
    /// `--certified`: every certified query of Cube's eval files is also a
    /// question.
    pub certified: bool,
    /// `--filter`: the cases whose name matches run.
    pub filter: Option<Regex>,
    /// `--shard K/N`: the K-th of N slices of the cases runs.
    pub shard: Option<(u32, u32)>,
}

/// The settings of `analyst check --list`.
#[derive(Debug)]
pub struct CheckListSettings {
    /// The suite and the cases listed.
    pub selection: Selection,
    /// The identity of the command line, which a suite may override.
    pub identity: IdentityInput,
    /// `-o json`, and where it goes.
    pub report: ReportSettings,
}

/// The settings of `analyst check merge`.
#[derive(Debug)]
pub struct MergeSettings {
    /// The shards' reports.
    pub reports: Vec<PathBuf>,
    /// Where the merged report goes.
    pub report: ReportSettings,
}

/// What `check`'s flags override in every case of the suite, applied in
/// one place (`Case::overridden`, in the evals).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CaseOverrides {
    /// `--repeat`: every case's runs.
    pub repeat: Option<usize>,
    /// `--pass-rate`: the share of runs that must pass.
    pub pass_rate: Option<f64>,
    /// `--max-seconds`: each turn's time budget.
    pub max_seconds: Option<Duration>,
    /// `--max-tokens`: each turn's token budget.
    pub max_tokens: Option<u64>,
    /// `--max-llm-calls`: each turn's LLM call budget.
    pub max_llm_calls: Option<u64>,
}

impl CaseOverrides {
    /// The overrides the flags give.
    pub(super) fn of(args: &CaseArgs) -> Self {
        CaseOverrides {
            repeat: args.repeat.map(usize::from),
            pass_rate: args.pass_rate,
            max_seconds: args.max_seconds.map(Duration::from_secs_f64),
            max_tokens: args.max_tokens,
            max_llm_calls: args.max_llm_calls,
        }
    }
}

/// The settings of `analyst check`.
#[derive(Debug)]
pub struct CheckSettings {
    /// The suite and the cases that run.
    pub selection: Selection,
    /// `--jobs`.
    pub jobs: usize,
    /// What the flags override in every case.
    pub overrides: CaseOverrides,
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
    /// Where every turn is recorded; `None`: not recorded.
    pub recording: Option<super::Recording>,
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
    /// `-o json`: the findings as a JSON array, not a table.
    pub json: bool,
    /// The terminal's width the table fits, when stdout is one.
    pub width: Option<u16>,
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
    /// `--data-url`, `ANALYST_DATA_URL` or the profile's `data_url`.
    pub url: Option<String>,
    /// A ready token: `ANALYST_DATA_TOKEN` or the profile's `data_token_command`.
    pub token: Option<SecretSource>,
    /// `ANALYST_DATA_SECRET`.
    pub secret: Option<SecretSource>,
    /// `--security-context`: the payload a secret signs.
    pub security_context: Option<Map<String, Value>>,
    /// `--timezone`.
    pub timezone: Option<String>,
    /// `--cache`, as the API spells it.
    pub cache: Option<String>,
}

impl DataSettings {
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
        match (&self.token, &self.secret) {
            (None, None) => Err(no_data_credential()),
            _ => Ok(()),
        }
    }

    /// The credential, read now: a ready token (wins), else the secret
    /// (signing `--security-context`); with a security context and a
    /// secret, the secret signs (a ready token's payload already is its
    /// security context). A usage error naming both variables when there
    /// is none.
    pub fn credential(&self, notes: &Notes) -> Result<DataCredential> {
        let sign = self.security_context.is_some() && self.secret.is_some();
        if let Some(token) = self.token.as_ref().filter(|_| !sign) {
            let token = token.read(notes)?;
            let bare = token.expose().strip_prefix("Bearer ").unwrap_or(token.expose());
            return Ok(DataCredential::Token(Secret::new(bare.to_string(), token.origin())));
        }
        match &self.secret {
            Some(secret) => Ok(DataCredential::Signed {
                secret: secret.read(notes)?,
                security_context: self.security_context.clone().unwrap_or_default(),
            }),
            None => Err(no_data_credential()),
        }
    }
}

/// The usage error of the data query API without a credential.
fn no_data_credential() -> anyhow::Error {
    usage("no credential for the data query API: set ANALYST_DATA_TOKEN (a JWT) or ANALYST_DATA_SECRET (the deployment's API secret); the chat API key does not work there")
}

/// `--jq` and `--output-file` as checked for an output: `jq_input` says
/// how a filter reads it, or names the output mode it cannot filter and
/// the command's modes it can.
pub(super) fn destination(args: DestinationArgs, jq_input: Result<JqInput, (String, &str)>) -> Result<Destination> {
    let jq = match (args.jq, jq_input) {
        (None, _) => None,
        (Some(expression), Ok(input)) => Some((JqFilter::compile(&expression)?, input)),
        (Some(_), Err((mode, json_modes))) => {
            return Err(usage(format!(
                "--jq filters JSON, and {mode} is not JSON: use it with {json_modes}"
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

/// The traits of `-o mode`.
pub fn mode_traits(mode: OutputMode) -> ModeTraits {
    let text = OnTerminal::Text;
    match mode {
        OutputMode::Answer => ModeTraits {
            shows: Mode::Answer,
            answer_text: true,
            tool_inputs: false,
            jq: None,
            on_terminal: OnTerminal::Live,
        },
        OutputMode::Raw => ModeTraits {
            shows: Mode::Stream,
            answer_text: false,
            tool_inputs: false,
            jq: None,
            on_terminal: text,
        },
        OutputMode::Events => ModeTraits {
            shows: Mode::Stream,
            answer_text: false,
            tool_inputs: false,
            jq: Some(JqInput::EachLine),
            on_terminal: text,
        },
        OutputMode::Json => ModeTraits {
            shows: Mode::Json,
            answer_text: true,
            tool_inputs: true,
            jq: Some(JqInput::Whole),
            on_terminal: text,
        },
        OutputMode::Csv | OutputMode::Table => ModeTraits {
            shows: Mode::Rows,
            answer_text: false,
            tool_inputs: false,
            jq: None,
            on_terminal: text,
        },
        OutputMode::Vega => ModeTraits {
            shows: Mode::Chart,
            answer_text: false,
            tool_inputs: false,
            jq: Some(JqInput::Whole),
            on_terminal: text,
        },
        OutputMode::Svg => ModeTraits {
            shows: Mode::Chart,
            answer_text: false,
            tool_inputs: false,
            jq: None,
            on_terminal: text,
        },
        OutputMode::Png => ModeTraits {
            shows: Mode::Chart,
            answer_text: false,
            tool_inputs: false,
            jq: None,
            on_terminal: OnTerminal::Refused,
        },
        OutputMode::Html => ModeTraits {
            shows: Mode::Chart,
            answer_text: true,
            tool_inputs: false,
            jq: None,
            on_terminal: text,
        },
    }
}

/// The modes `--jq` reads, as a refusal names them: `-o events, -o json
/// or -o vega`.
pub(super) fn jq_modes() -> String {
    let names: Vec<String> = OutputMode::value_variants()
        .iter()
        .filter(|mode| mode_traits(**mode).jq.is_some())
        .map(|mode| mode_name(*mode))
        .collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The name of an output mode as the command line spells it: `-o csv`.
pub(super) fn mode_name(mode: impl ValueEnum) -> String {
    let name = mode.to_possible_value().map(|value| value.get_name().to_string());
    format!("-o {}", name.unwrap_or_default())
}

/// The report a `check` run (or merge) writes on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    /// `--tap`: TAP version 13.
    Tap,
    /// `-o json`: the report as one document.
    Json,
    /// `-o markdown`: the summary `--summary` appends.
    Markdown,
    /// `-o html`: one inert page.
    Html,
}

impl ReportSettings {
    /// The report flags, the `--junit` and `--summary` files checked to be
    /// writable.
    pub(super) fn of(args: ReportArgs) -> Result<ReportSettings> {
        if let Some(path) = &args.junit {
            check_output_file("--junit", path)?;
        }
        if let Some(path) = &args.summary {
            check_output_file("--summary", path)?;
        }
        let format = match (args.tap, args.output) {
            (true, _) => Some(ReportFormat::Tap),
            (false, Some(CheckOutput::Json)) => Some(ReportFormat::Json),
            (false, Some(CheckOutput::Markdown)) => Some(ReportFormat::Markdown),
            (false, Some(CheckOutput::Html)) => Some(ReportFormat::Html),
            (false, None) => None,
        };
        Ok(ReportSettings {
            destination: destination(
                args.destination,
                match format {
                    Some(ReportFormat::Json) => Ok(JqInput::Whole),
                    Some(ReportFormat::Tap) => Err(("--tap".into(), "-o json")),
                    Some(ReportFormat::Markdown | ReportFormat::Html) => {
                        Err(("a report other than -o json".into(), "-o json"))
                    }
                    None => Err(("a report without -o json".into(), "-o json")),
                },
            )?,
            junit: args.junit,
            summary: args.summary,
            format,
            baseline: args.baseline,
            fail_on_regression: args.fail_on_regression,
            min_accuracy: args.min_accuracy,
        })
    }
}

/// The question of `ask`: what is asked (`-` reads it from stdin), in which
/// thread, with which message id (new, or the suspended one `--resume`
/// names), on which branch.
impl Question {
    /// The question `args` ask; what it reads (the question on standard
    /// input, images) waits at most `limit`, the command's `--timeout`.
    pub(super) fn of(args: &AskArgs, limit: Option<Duration>) -> Result<Question> {
        let input = match args.question.as_deref() {
            Some("-") => Some(read_stdin("the question", limit)?),
            Some(text) => Some(text.to_string()),
            None => None,
        };
        let input = input.map(|q| q.trim().to_string());
        if input.as_deref() == Some("") {
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
        let message_id = match (resume, &input) {
            (Some(id), _) => Some(id.to_string()),
            (None, Some(_)) => Some(new_message_id()),
            (None, None) => None,
        };
        if input.is_none() && chat_id.is_none() {
            return Err(usage(
                "ask what? give a QUESTION ('-' reads it from stdin), or --chat-id ID alone to print that thread",
            ));
        }
        let branch = args.branch.as_deref().map(str::trim);
        if branch == Some("") {
            return Err(usage("--branch is empty"));
        }
        if input.is_none() && !args.image.is_empty() {
            return Err(usage("--image goes with a question: a read of the thread sends none"));
        }
        let images = args
            .image
            .iter()
            .map(|path| Image::read(path, Deadline::after(limit), &format!("--image {}", path.display())).map(Arc::new))
            .collect::<Result<Vec<_>>>()?;
        Ok(Question {
            input,
            chat_id: chat_id.map(str::to_string),
            message_id,
            branch: branch.map(str::to_string),
            default_branch: args.default_branch,
            images,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jq_reads_the_json_modes() {
        assert_eq!(jq_modes(), "-o events, -o json or -o vega");
    }

    #[test]
    fn the_modes_that_show_the_answer_keep_its_text() {
        for mode in OutputMode::value_variants() {
            let traits = mode_traits(*mode);
            if traits.shows.shows_answer() || traits.on_terminal == OnTerminal::Live {
                assert!(traits.answer_text, "{mode:?}");
            }
        }
    }
}
