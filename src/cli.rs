//! The clap definitions, and nothing else: this file is the command-line
//! contract of `shared/docs/cli.md`. Every `///` comment is `--help` text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The names of the environment variables `analyst` reads: one place for
/// clap's `env =`, the help's ENVIRONMENT and the settings. A variable set
/// to the empty string counts as unset.
pub mod var {
    /// The Chat API URL (`--chat-url`).
    pub const CHAT_URL: &str = "ANALYST_CHAT_URL";
    /// The API key.
    pub const API_KEY: &str = "ANALYST_API_KEY";
    /// A file holding the API key (`--api-key-file`).
    pub const API_KEY_FILE: &str = "ANALYST_API_KEY_FILE";
    /// A Cube token for the chat.
    pub const CUBE_TOKEN: &str = "ANALYST_CUBE_TOKEN";
    /// A file holding the Cube token (`--cube-token-file`).
    pub const CUBE_TOKEN_FILE: &str = "ANALYST_CUBE_TOKEN_FILE";
    /// `--external-id`.
    pub const EXTERNAL_ID: &str = "ANALYST_EXTERNAL_ID";
    /// `--internal-id`.
    pub const INTERNAL_ID: &str = "ANALYST_INTERNAL_ID";
    /// `--timezone`.
    pub const TIMEZONE: &str = "ANALYST_TIMEZONE";
    /// The account host (`--base-url`).
    pub const BASE_URL: &str = "ANALYST_BASE_URL";
    /// `--deployment-id`.
    pub const DEPLOYMENT_ID: &str = "ANALYST_DEPLOYMENT_ID";
    /// The data query API base (`--data-url`).
    pub const DATA_URL: &str = "ANALYST_DATA_URL";
    /// A JWT for the data query API.
    pub const DATA_TOKEN: &str = "ANALYST_DATA_TOKEN";
    /// The deployment's API secret, to sign data query API tokens.
    pub const DATA_SECRET: &str = "ANALYST_DATA_SECRET";
    /// `--timeout`.
    pub const TIMEOUT: &str = "ANALYST_TIMEOUT";
    /// `--profile`.
    pub const PROFILE: &str = "ANALYST_PROFILE";
    /// The config file.
    pub const CONFIG: &str = "ANALYST_CONFIG";
    /// Set to something: no colour.
    pub const NO_COLOR: &str = "NO_COLOR";
    /// Where the config file is by default.
    pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
    /// The home folder.
    pub const HOME: &str = "HOME";
    /// The home folder on Windows, when `HOME` is not set.
    pub const USERPROFILE: &str = "USERPROFILE";
    /// Where the config file is by default on Windows.
    pub const APPDATA: &str = "APPDATA";
    /// Where the history database is by default on Windows.
    pub const LOCALAPPDATA: &str = "LOCALAPPDATA";
    /// `0` (or `false`, `off`, `no`): record no turn in the history.
    pub const HISTORY: &str = "ANALYST_HISTORY";
    /// The history database.
    pub const HISTORY_DB: &str = "ANALYST_HISTORY_DB";
    /// Where the history database is by default.
    pub const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
    /// Where Cube reads its agents config, under a repository root.
    pub const CUBE_AGENTS_PATH: &str = "CUBE_CLOUD_AGENTS_CONFIG_PATH";
    /// Where spans go: the collector's base (`/v1/traces` is added).
    pub const OTEL_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
    /// Where spans go, as given.
    pub const OTEL_TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
    /// The collector's headers (its key: a secret).
    pub const OTEL_HEADERS: &str = "OTEL_EXPORTER_OTLP_HEADERS";
    /// `http/protobuf` or `http/json`.
    pub const OTEL_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
    /// The export's limit, in milliseconds.
    pub const OTEL_TIMEOUT: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
    /// `service.name`.
    pub const OTEL_SERVICE_NAME: &str = "OTEL_SERVICE_NAME";
    /// More resource attributes.
    pub const OTEL_RESOURCE_ATTRIBUTES: &str = "OTEL_RESOURCE_ATTRIBUTES";
    /// `true`: no span is sent.
    pub const OTEL_SDK_DISABLED: &str = "OTEL_SDK_DISABLED";
    /// `true`: questions, answers and SQL go in the spans.
    pub const OTEL_CAPTURE_CONTENT: &str = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";
}

/// The environment variables `analyst` reads, and what for (`--help` and
/// the man pages' ENVIRONMENT).
pub const ENVIRONMENT: [(&str, &str); 32] = [
    (var::CHAT_URL, "the Chat API URL from the agent settings (--chat-url)"),
    (var::API_KEY, "the API key (sent as 'Authorization: Api-Key …'; never printed)"),
    (var::API_KEY_FILE, "read the key from this file instead ('-' = stdin)"),
    (
        var::CUBE_TOKEN,
        "a Cube token for the chat (X-Cube-Auth-Token; never printed): the only credential a deployment chat URL (…/deployments/ID/chat/…) takes",
    ),
    (var::CUBE_TOKEN_FILE, "read the Cube token from this file ('-' = stdin)"),
    (var::EXTERNAL_ID, "default --external-id"),
    (var::INTERNAL_ID, "default --internal-id"),
    (var::TIMEZONE, "default --timezone (chats and rows)"),
    (var::BASE_URL, "the account host, for session (--base-url)"),
    (var::DEPLOYMENT_ID, "the deployment, for session (--deployment-id)"),
    (var::DATA_URL, "the data query API base, for rows, --all-rows and reference_sql (--data-url)"),
    (var::DATA_TOKEN, "a JWT for the data query API (never printed)"),
    (var::DATA_SECRET, "or the deployment's API secret, to sign one (never printed)"),
    (var::TIMEOUT, "default --timeout"),
    (var::PROFILE, "default --profile"),
    (
        var::CONFIG,
        "the config file (default $XDG_CONFIG_HOME/analyst/config.toml, else %APPDATA%\\analyst\\config.toml on Windows, else ~/.config/analyst/config.toml)",
    ),
    (var::NO_COLOR, "set to something: no colour (as --color never); progress stays"),
    (var::HISTORY, "0 (or false, off, no): record no turn in the history (as --no-history)"),
    (
        var::HISTORY_DB,
        "the history database (default $XDG_DATA_HOME/analyst/history.db, else %LOCALAPPDATA%\\analyst\\history.db on Windows, else ~/.local/share/analyst/history.db)",
    ),
    ("HTTPS_PROXY, HTTP_PROXY, ALL_PROXY", "proxies for every host but loopback"),
    ("NO_PROXY", "hosts reached without the proxy"),
    (
        var::CUBE_AGENTS_PATH,
        "where Cube's agents folder is under a repository root, as Cube reads it (default agents), for check",
    ),
    (
        var::OTEL_ENDPOINT,
        "send the spans of ask, rows and check over OTLP/HTTP to this collector (/v1/traces added)",
    ),
    (var::OTEL_TRACES_ENDPOINT, "or to this traces endpoint, as given"),
    (var::OTEL_HEADERS, "the collector's headers, key=value,… (secrets: never printed)"),
    (var::OTEL_PROTOCOL, "http/protobuf (the default) or http/json"),
    (var::OTEL_TIMEOUT, "the most the export may take, in milliseconds (default 5000)"),
    (var::OTEL_SERVICE_NAME, "the spans' service.name (default analyst)"),
    (var::OTEL_RESOURCE_ATTRIBUTES, "more resource attributes, key=value,…"),
    (var::OTEL_SDK_DISABLED, "true: no span is sent"),
    (
        var::OTEL_CAPTURE_CONTENT,
        "true: questions, answers and SQL go in the spans (redacted)",
    ),
    ("", "a variable set to the empty string counts as unset"),
];

/// The exit codes and what each means (`--help` and EXIT STATUS).
pub const EXIT_STATUS: [(&str, &str); 17] = [
    ("0", "success (also when the reader of stdout goes away, as with | head)"),
    ("1", "an unexpected failure (a bug: the message says so)"),
    ("2", "usage: bad flags, invalid identity, unreadable input, 400 from the service"),
    ("3", "authentication: 401, the data API rejected the token, or an in-stream error saying the credentials were refused"),
    ("4", "forbidden: 403"),
    ("5", "not found: 404 (agent, account, chat)"),
    ("6", "the service failed or could not be reached: 5xx, connection, TLS, DNS, proxy"),
    ("7", "a bad stream: malformed line, in-stream error, suspended or cut, no answer; for rows, an error line"),
    ("8", "a tool error, with --fail-on-tool-error"),
    ("9", "an --expect-* / --min-rows check, a check comparison or budget failed (or a regression with --fail-on-regression)"),
    ("10", "fewer rows than totalRows: rows, or a truncated result in ask (unless --all-rows or --allow-partial)"),
    ("11", "nothing to render: no SQL result (csv, table; the agent may have put its results inline, as a Markdown table in the answer) or no chart that draws (vega, svg, png)"),
    ("12", "the agent asked back instead of answering (--allow-questions: its question is the answer, exit 0)"),
    ("74", "an output could not be written: stdout, --output-file, --tee, --junit (a full disk)"),
    ("124", "--timeout expired or the stream stalled (the chat was aborted)"),
    ("129, 130, 143", "SIGHUP, Ctrl-C (SIGINT), SIGTERM (the chat was aborted)"),
    ("", "doctor exits with the code of its first failing check"),
];

/// The keys of a profile in the config file (FILES of the man pages).
pub const CONFIG_KEYS: [(&str, &str); 18] = [
    ("chat_url", "the Chat API URL"),
    ("base_url", "the account host, for session"),
    ("deployment_id", "the deployment, for session (a number)"),
    ("data_url", "the data query API base"),
    ("external_id", "who asks: an external user (or internal_id)"),
    ("internal_id", "who asks: an existing internal user"),
    ("email", "the user's email"),
    (
        "api_key_command",
        "a command whose output is the API key (run with sh -c within --timeout; refused when others can write the file)",
    ),
    ("api_key_file", "a file holding the API key (~ expanded)"),
    (
        "cube_token_command",
        "a command whose output is a Cube token for the chat",
    ),
    ("data_token_command", "a command whose output is a data query API token"),
    (
        "history",
        "false records no turn in the history (as --no-history, ANALYST_HISTORY=0)",
    ),
    (
        "history_db",
        "the history database (~ expanded; ANALYST_HISTORY_DB wins), else $XDG_DATA_HOME/analyst/history.db",
    ),
    (
        "history_keep",
        "prune turns older than this (90d) as new ones are recorded",
    ),
    (
        "otlp_endpoint",
        "send spans over OTLP/HTTP to this collector (OTEL_EXPORTER_OTLP_ENDPOINT wins)",
    ),
    ("(top level) default", "the profile used without --profile"),
    (
        "(top level) [prices.\"MODEL\"]",
        "what MODEL costs in US dollars per million tokens, for history usage: input, output, cache_read, cache_write",
    ),
    ("(top level) [profiles.NAME]", "a profile: the keys above"),
];

/// The top-level `--help` epilogue: the environment, the exit codes, and
/// what stopping and secrets do.
fn after_help() -> String {
    // A row without a name is a sentence of its own, after a blank line.
    let row = |name: &str, meaning: &str, column: usize| match name {
        "" => {
            let sentence = format!("{}{}.", meaning[..1].to_uppercase(), &meaning[1..]);
            format!(
                "\n{}",
                term("", &sentence, 2).trim_start_matches(' ').trim_start_matches('\n')
            )
        }
        name => term(name, meaning, column),
    };
    let mut text = String::from("Environment:\n");
    for (name, meaning) in ENVIRONMENT {
        text.push_str(&row(name, meaning, 26));
    }
    text.push_str("\nExit codes:\n");
    for (code, meaning) in EXIT_STATUS {
        text.push_str(&row(code, meaning, 16));
    }
    text.push_str(AFTER_HELP_TAIL);
    text
}

/// `  NAME  meaning…` with the meaning in a column from `column`, wrapped
/// under itself within 80 characters (so no terminal rewraps it).
fn term(name: &str, meaning: &str, column: usize) -> String {
    let mut done: Vec<String> = Vec::new();
    let mut line = format!("  {name}");
    if line.chars().count() + 1 > column {
        done.push(std::mem::take(&mut line));
    }
    for word in meaning.split(' ') {
        let length = line.chars().count();
        if length < column {
            line.push_str(&" ".repeat(column - length));
        } else if length + 1 + word.chars().count() > 80 {
            done.push(std::mem::replace(&mut line, " ".repeat(column)));
        } else {
            line.push(' ');
        }
        line.push_str(word);
    }
    done.push(line);
    done.join("\n") + "\n"
}

const AFTER_HELP_TAIL: &str = "
Ctrl-C, SIGTERM, SIGHUP, --timeout and a stalled stream abort the running chat
on the service before exiting; a second Ctrl-C exits at once. A closed stdout
('| head') aborts the chat too, and exits 0. So do a malformed line, an output
that cannot be written and an in-stream error (with their own exit codes).
Secrets (API key, tokens, data secret) are redacted from everything shown or
saved, however written (JSON escapes, split between deltas); --tee, --save,
--junit and --output-file files are created 0600, and only once there is
something to write. Every stderr line is one line (line breaks in foreign text
shown as \\n). Reading an input (stdin, --image, --security-context @FILE,
--sql-file, a suite's images) ends at --timeout or the first signal too.";

/// The options `ask -h` shows (the short help); `ask --help` shows all.
const ASK_SHORT_HELP: &[&str] = &[
    "question",
    "output",
    "jq",
    "output_file",
    "chat_id",
    "thread",
    "all_rows",
    "replay",
    "quiet",
];

/// The options `check -h` shows (the short help); `check --help` shows all.
const CHECK_SHORT_HELP: &[&str] = &[
    "suite",
    "jobs",
    "repeat",
    "filter",
    "list",
    "junit",
    "output",
    "baseline",
    "min_accuracy",
    "quiet",
];

/// Examples under `analyst -h` (and `analyst` alone); `--help` adds the
/// environment and the exit codes.
const ROOT_EXAMPLES: &str = "\
Examples:
  analyst ask 'What was our revenue by month in 2024?'
  analyst ask -o csv --all-rows 'Every order of 2024' > orders.csv
  analyst check smoke.toml --junit smoke.xml

'analyst COMMAND -h' shows a command's commonest options and examples;
'analyst --help' the environment and the exit codes; 'man analyst' all.";

/// The options each command's `-h` shows (the short help), by the
/// command's path; `--help` and the man pages show every one. A command
/// not listed shows its own options, not the shared groups (service,
/// identity, network).
const SHORT_HELP: &[(&str, &[&str])] = &[
    ("ask", ASK_SHORT_HELP),
    ("check", CHECK_SHORT_HELP),
    ("abort", &["chat_id", "external_id", "internal_id", "timeout"]),
    (
        "session",
        &["output", "external_id", "internal_id", "base_url", "deployment_id"],
    ),
    (
        "rows",
        &[
            "sql",
            "sql_file",
            "from",
            "query",
            "output",
            "output_file",
            "allow_partial",
            "data_url",
        ],
    ),
    ("doctor", &["offline", "output"]),
    ("history", &["limit", "thread", "since", "grep", "output", "jq"]),
    (
        "check merge",
        &["reports", "junit", "tap", "output", "summary", "baseline"],
    ),
];

/// The command line as clap parses and prints it: help at most 80
/// columns wide (or the terminal's width, when narrower), every `-h` cut
/// to 40 lines: the commonest options (see [`SHORT_HELP`]) and the
/// examples, the notes under `--help`. No value of the environment is
/// printed in help.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let command = Cli::command()
        .max_term_width(80)
        .mut_arg("color", |arg| arg.hide_short_help(true))
        .mut_arg("profile", |arg| arg.hide_short_help(true))
        .mut_arg("verbose", |arg| arg.hide_short_help(true))
        .mut_args(|arg| arg.hide_env_values(true));
    let subcommands: Vec<String> = command
        .get_subcommands()
        .map(|sub| sub.get_name().to_string())
        .collect();
    subcommands.iter().fold(command, |command, name| {
        command.mut_subcommand(name, |sub| shortened(sub, name))
    })
}

/// `command` (at `path`, e.g. `check merge`) with its short help cut to
/// what [`SHORT_HELP`] names, its epilogue's examples under `-h` and the
/// whole epilogue under `--help`; its subcommands alike.
fn shortened(command: clap::Command, path: &str) -> clap::Command {
    let shown = SHORT_HELP
        .iter()
        .find(|(name, _)| *name == path)
        .map(|(_, shown)| *shown);
    let hidden: Vec<String> = command
        .get_arguments()
        .filter(|arg| match shown {
            Some(shown) => !shown.contains(&arg.get_id().as_str()),
            None => arg.get_help_heading().is_some(),
        })
        .map(|arg| arg.get_id().to_string())
        .filter(|id| id != "help" && id != "quiet")
        .collect();
    let mut command = hidden
        .iter()
        .fold(command, |command, id| {
            command.mut_arg(id, |arg| arg.hide_short_help(true))
        })
        .mut_args(|arg| arg.hide_env_values(true));
    if command.get_after_long_help().is_none() {
        if let Some(epilogue) = command.get_after_help().map(ToString::to_string) {
            let examples: Vec<&str> = epilogue
                .split("\n\n")
                .filter(|block| block.starts_with("Example"))
                .collect();
            let short = format!(
                "{}{}'analyst {path} --help' shows every option and the notes.",
                examples.join("\n\n"),
                if examples.is_empty() { "" } else { "\n\n" }
            );
            command = command.after_long_help(epilogue).after_help(short);
        }
    }
    let subcommands: Vec<String> = command
        .get_subcommands()
        .map(|sub| sub.get_name().to_string())
        .collect();
    subcommands.iter().fold(command, |command, name| {
        command.mut_subcommand(name, |sub| shortened(sub, &format!("{path} {name}")))
    })
}

/// A scriptable client for Cube's AI agents: ask a question, get the
/// answer, CSV, a chart or JSON for jq
///
/// A scriptable client for Cube's AI agents (the Chat API of Cube Cloud's
/// conversational analytics): ask the AI data analyst a question and get the
/// answer, CSV, a chart or JSON for jq, with exit codes a script can trust.
#[derive(Debug, Parser)]
#[command(
    name = "analyst",
    version,
    propagate_version = true,
    after_help = ROOT_EXAMPLES,
    after_long_help = after_help()
)]
pub struct Cli {
    /// Options every command takes.
    #[command(flatten)]
    pub global: GlobalArgs,

    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Options shared by every command.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Log each HTTP request and response status to stderr (the key is always redacted)
    #[arg(short, long, global = true)]
    pub verbose: bool,

    /// Print nothing on stderr but errors
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Use this profile of the config file (analyst config path prints where it is)
    #[arg(long, global = true, env = var::PROFILE, value_name = "NAME")]
    pub profile: Option<String>,

    /// Colour on stderr: auto (on a terminal, unless NO_COLOR is set and not empty), always, never
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,

    /// The network options written before the command.
    #[command(flatten)]
    pub leading_network: LeadingNetworkArgs,
}

/// The network options written before the command (`analyst --retries 0
/// ask …`), where earlier versions took them: still accepted, not shown
/// in help (they belong to the commands that call the service); given
/// after the command as well, the command's own win.
#[derive(Debug, Args)]
pub struct LeadingNetworkArgs {
    /// --connect-timeout before the command.
    #[arg(
        long = "connect-timeout",
        id = "leading_connect_timeout",
        hide = true,
        value_name = "DURATION"
    )]
    pub connect_timeout: Option<String>,

    /// --timeout before the command.
    #[arg(long = "timeout", id = "leading_timeout", hide = true, value_name = "DURATION")]
    pub timeout: Option<String>,

    /// --idle-timeout before the command.
    #[arg(
        long = "idle-timeout",
        id = "leading_idle_timeout",
        hide = true,
        value_name = "DURATION"
    )]
    pub idle_timeout: Option<String>,

    /// --retries before the command.
    #[arg(long = "retries", id = "leading_retries", hide = true, value_name = "N")]
    pub retries: Option<u32>,
}

/// Timeouts and retries: the options of the commands that call the
/// service (ask, abort, session, rows, check, doctor), and only theirs.
#[derive(Debug, Args)]
#[command(next_help_heading = "Network")]
pub struct NetworkArgs {
    /// How long to wait for a connection to the service
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub connect_timeout: String,

    /// Wall-clock limit of the whole command (e.g. 90s, 5m); a running chat is aborted, exit 124
    #[arg(long, env = var::TIMEOUT, value_name = "DURATION")]
    pub timeout: Option<String>,

    /// A stream that sends nothing for this long is stalled: the chat is aborted, exit 124
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub idle_timeout: String,

    /// How many times a transient failure is tried again (0 = never): a refused or reset connection, 429, 502, 503, 504; for ask, a dropped or suspended turn is resumed with the same message id
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub retries: u32,
}

/// When notes on stderr are painted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set to something
    Auto,
    /// Always, also in a pipe
    Always,
    /// Never
    Never,
}

/// The commands of `analyst`.
#[derive(Debug, Subcommand)]
#[allow(
    clippy::large_enum_variant,
    reason = "parsed once per process; boxing would buy nothing"
)]
pub enum Command {
    /// Ask the agent a question: the answer, CSV, a chart or JSON
    ///
    /// Ask the agent a question and render its NDJSON answer stream for a pipe.
    #[command(after_help = ASK_EXAMPLES, after_long_help = ASK_AFTER_HELP)]
    Ask(AskArgs),

    /// Stop a running chat, as the identity that started it
    ///
    /// Stop a running chat (as its owner: give the identity that started it).
    #[command(after_help = ABORT_AFTER_HELP)]
    Abort(AbortArgs),

    /// Mint an embed session for signed embedding, or revoke some
    ///
    /// Print a temporary embed sessionId for signed embedding, or revoke sessions.
    #[command(after_help = SESSION_AFTER_HELP)]
    Session(SessionArgs),

    /// Every row of a (truncated) SQL result, from the data query API
    ///
    /// Fetch every row of a (truncated) SQL result through the data query API.
    #[command(after_help = ROWS_AFTER_HELP)]
    Rows(RowsArgs),

    /// Ask a suite of known questions: smoke checks and evals
    ///
    /// Run a suite of known questions against the agent: smoke checks and evals, with JUnit, TAP and JSON reports.
    #[command(after_help = CHECK_EXAMPLES, after_long_help = CHECK_AFTER_HELP)]
    Check(CheckArgs),

    /// Check the setup: what is set, from where, and what answers
    ///
    /// Check the setup without asking the agent anything: what is configured, from where, and whether each endpoint answers.
    #[command(after_help = DOCTOR_AFTER_HELP)]
    Doctor(DoctorArgs),

    /// Show the resolved settings, or the config file's path
    ///
    /// Show the resolved settings (secrets as set or unset) or the config file's path.
    #[command(after_help = "Examples:\n  analyst config list\n  analyst config path\n  analyst config profiles")]
    Config(ConfigArgs),

    /// Print a shell completion script, or the man page
    #[command(after_help = COMPLETIONS_AFTER_HELP)]
    Completions(CompletionsArgs),

    /// The local record of past turns: list, show, export, usage
    ///
    /// Look up the local record of past turns: list, show, export a thread, usage and cost, forget.
    #[command(after_help = HISTORY_AFTER_HELP)]
    History(HistoryArgs),

    /// Print the version, its commit and its target
    ///
    /// Print the version with the commit, its date and the target it was built for.
    #[command(after_help = "Example:\n  analyst version   # the version, commit, commit date and target")]
    Version,
}

const HISTORY_AFTER_HELP: &str = "\
Examples:
  analyst history                             # the latest 20 turns
  analyst history trend evals/smoke.toml --last 10
  analyst history show 42 -o json
  analyst history export morning -o markdown > thread.md
  analyst history usage --by model --since 30d
  analyst history forget --before 2026-01-01

Every turn of ask and check is recorded (not --replay, nor a read of the
thread so far: ask --chat-id with no question) in a SQLite database,
$XDG_DATA_HOME/analyst/history.db (on Windows
%LOCALAPPDATA%\\analyst\\history.db; ANALYST_HISTORY_DB or the profile's
history_db move it; --no-history, ANALYST_HISTORY=0 or history = false turn it
off; history_keep = \"90d\" prunes older turns). It keeps the question, answer
(its first MiB), status, exit code, ids, each SQL query (title, SQL, columns,
row counts: not the rows), usage with models and durations; never a secret
(nor text shaped like a Cube API key). Many processes may record at once, none
losing a turn; a symbolic link (on Windows any reparse point) at the database
or its folder is refused, never followed; forget erases (the deleted text is
overwritten, the log emptied); a damaged database is exit 2 naming the file;
no command writes over it.

Cost: with a price table in the config file (per million tokens),
  [prices.\"claude-sonnet-4\"]
  input = 3.0
  output = 15.0
  cache_read = 0.3
  cache_write = 3.75
usage adds a cost column.";

/// Arguments of `analyst history`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HistoryArgs {
    /// What to do (list without one).
    #[command(subcommand)]
    pub action: Option<HistoryAction>,

    /// The list's filters, when no action is given.
    #[command(flatten)]
    pub list: HistoryListArgs,
}

/// What `analyst history` does.
#[derive(Debug, Subcommand)]
pub enum HistoryAction {
    /// The latest turns, newest first (the default)
    #[command(
        after_help = "Examples:\n  analyst history list --thread morning --since 7d\n  analyst history list --grep revenue --status error -o json"
    )]
    List(HistoryListArgs),
    /// One whole turn
    #[command(
        after_help = "Examples:\n  analyst history show 42\n  analyst history show 42 -o json --jq '.queries[].sql'"
    )]
    Show(HistoryShowArgs),
    /// A whole thread, question by question
    #[command(
        after_help = "Examples:\n  analyst history export morning -o markdown > thread.md\n  analyst history export morning -o html > thread.html"
    )]
    Export(HistoryExportArgs),
    /// Turns, tokens, LLM calls, time and cost, grouped
    #[command(
        after_help = "Examples:\n  analyst history usage --by week --since 30d\n  analyst history usage --by model -o json"
    )]
    Usage(HistoryUsageArgs),
    /// A suite's accuracy over time: a row per recorded check run
    #[command(
        after_help = "Examples:\n  analyst history trend evals/smoke.toml --last 10\n  analyst history trend agents/ --since 30d -o svg > accuracy.svg\n\nEach check run is recorded (when the history is on) as one row beside its\nturns: its suite by path (relative to its repository, so every checkout\nnames it alike), time, branch and commit (the CI job's, else the\ncheckout's), accuracy (passed of the cases that gate: quarantined ones\nleft out), passed, failed, errors, skipped (budget), consistent K/N, cost,\nand whether it was a re-grade. Exit 5 when no run of the suite is recorded."
    )]
    Trend(HistoryTrendArgs),
    /// Delete turns and their thread names, erased from the file and its log
    #[command(
        after_help = "Examples:\n  analyst history forget --before 90d\n  analyst history forget --thread morning"
    )]
    Forget(HistoryForgetArgs),
    /// Send the spans a collector did not take (kept by ask and check) to the OTLP endpoint, oldest first, each once
    #[command(after_help = "Example:\n  OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:6006 analyst history push")]
    Push,
}

/// `history list`.
#[derive(Debug, Args)]
pub struct HistoryListArgs {
    /// At most N turns
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub limit: u32,

    /// Only the turns of this thread (ask --thread NAME)
    #[arg(long, value_name = "NAME")]
    pub thread: Option<String>,

    /// Only turns since DURATION ago (7d, 12h) or DATE (2026-11-01)
    #[arg(long, value_name = "DURATION|DATE")]
    pub since: Option<String>,

    /// Only turns of this status (completed, incomplete, cut, error, …)
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,

    /// Only turns asked by this command: ask or check
    #[arg(long, value_enum, value_name = "COMMAND")]
    pub kind: Option<HistoryKind>,

    /// Only turns whose question or answer matches REGEX
    #[arg(long, value_name = "REGEX")]
    pub grep: Option<String>,

    /// table (for a person) or json (an array)
    #[arg(short, long, value_enum, value_name = "MODE", default_value_t = TableOrJson::Table)]
    pub output: TableOrJson,

    /// Where the data goes: --jq, --output-file.
    #[command(flatten)]
    pub destination: DestinationArgs,
}

/// Which command's turns `history --kind` lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HistoryKind {
    /// Turns of analyst ask
    Ask,
    /// Turns of analyst check (one per run of a case)
    Check,
}

/// `history show`.
#[derive(Debug, Args)]
pub struct HistoryShowArgs {
    /// The turn's number (from list) or its message id
    #[arg(value_name = "ID")]
    pub id: String,

    /// table (for a person) or json
    #[arg(short, long, value_enum, value_name = "MODE", default_value_t = TableOrJson::Table)]
    pub output: TableOrJson,

    /// Where the data goes: --jq, --output-file.
    #[command(flatten)]
    pub destination: DestinationArgs,
}

/// `history export`.
#[derive(Debug, Args)]
pub struct HistoryExportArgs {
    /// The thread's name, or a chat id
    #[arg(value_name = "THREAD|CHAT_ID")]
    pub thread: String,

    /// markdown, html (one inert page, as ask -o html) or json
    #[arg(short, long, value_enum, value_name = "MODE", default_value_t = ExportFormat::Markdown)]
    pub output: ExportFormat,

    /// Where the data goes: --jq, --output-file.
    #[command(flatten)]
    pub destination: DestinationArgs,
}

/// `history usage`.
#[derive(Debug, Args)]
pub struct HistoryUsageArgs {
    /// How turns are grouped
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = UsageGrouping::Day)]
    pub by: UsageGrouping,

    /// Only turns since DURATION ago (30d) or DATE (2026-11-01)
    #[arg(long, value_name = "DURATION|DATE")]
    pub since: Option<String>,

    /// table (for a person), json or csv
    #[arg(short, long, value_enum, value_name = "MODE", default_value_t = UsageOutput::Table)]
    pub output: UsageOutput,

    /// Where the data goes: --jq, --output-file.
    #[command(flatten)]
    pub destination: DestinationArgs,
}

/// `history trend`.
#[derive(Debug, Args)]
pub struct HistoryTrendArgs {
    /// The suite (a TOML file or Cube's agents folder, as check was given it); default: the suite of the latest recorded run
    #[arg(value_name = "SUITE")]
    pub suite: Option<PathBuf>,

    /// Only runs since DURATION ago (30d) or DATE (2026-11-01)
    #[arg(long, value_name = "DURATION|DATE")]
    pub since: Option<String>,

    /// Only the latest N runs
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub last: Option<u32>,

    /// table (for a person; the default on a terminal), csv (the default otherwise), json (an array), or svg (a line chart of accuracy over time, drawn offline as ask -o svg draws)
    #[arg(short, long, value_enum, value_name = "MODE")]
    pub output: Option<TrendOutput>,

    /// Where the data goes: --jq, --output-file.
    #[command(flatten)]
    pub destination: DestinationArgs,
}

/// How `history trend` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TrendOutput {
    /// Aligned, for a person
    Table,
    /// CSV
    Csv,
    /// JSON (an array)
    Json,
    /// A line chart of accuracy over time (SVG)
    Svg,
}

/// `history forget` (one of its flags; none is a usage error of our own
/// words, not clap's).
#[derive(Debug, Args)]
#[group(multiple = false)]
pub struct HistoryForgetArgs {
    /// Delete the turns before DATE (2026-01-01) or DURATION ago (90d)
    #[arg(long, value_name = "DATE|DURATION")]
    pub before: Option<String>,

    /// Delete a thread's turns and its name
    #[arg(long, value_name = "NAME")]
    pub thread: Option<String>,

    /// Delete every turn and thread name
    #[arg(long)]
    pub all: bool,
}

/// How `history list`, `history show` and `doctor` print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TableOrJson {
    /// Aligned, for a person
    Table,
    /// JSON
    Json,
}

/// How `history export` writes a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Markdown: each question, its answer, its SQL in code blocks
    Markdown,
    /// One self-contained, inert HTML page
    Html,
    /// JSON: the turns with their queries
    Json,
}

/// How `history usage` groups turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UsageGrouping {
    /// By day (UTC)
    Day,
    /// By ISO 8601 week (2026-W48)
    Week,
    /// By month
    Month,
    /// By thread name
    Thread,
    /// By chat URL
    Agent,
    /// By model
    Model,
}

/// How `history usage` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UsageOutput {
    /// Aligned, for a person
    Table,
    /// JSON (an array)
    Json,
    /// CSV
    Csv,
}

const COMPLETIONS_AFTER_HELP: &str = "\
Examples (install them):
  # bash
  analyst completions bash \\
    > ~/.local/share/bash-completion/completions/analyst
  # zsh
  analyst completions zsh > \"${fpath[1]}/_analyst\"
  # fish
  analyst completions fish > ~/.config/fish/completions/analyst.fish
  # elvish
  analyst completions elvish >> ~/.config/elvish/rc.elv
  # PowerShell
  analyst completions powershell >> $PROFILE
  # the man pages: analyst(1), analyst-ask(1), …
  analyst completions man --dir ~/.local/share/man/man1";

/// `analyst version`: the version, the commit and its date, the target.
pub const LONG_VERSION: &str = concat!(
    "analyst ",
    env!("CARGO_PKG_VERSION"),
    "\ncommit: ",
    env!("ANALYST_COMMIT"),
    "\ncommit date: ",
    env!("ANALYST_COMMIT_DATE"),
    "\ntarget: ",
    env!("ANALYST_TARGET"),
    "\n"
);

const DOCTOR_AFTER_HELP: &str = "\
Examples:
  analyst doctor
  analyst doctor --offline          # the settings only; nothing is called
  analyst doctor -o json --jq '.[] | select(.result == \"failed\") | .check'

Each check is a row: what was found and where it came from (flag, environment,
profile). Unless --offline, the endpoints are called harmlessly: an abort of a
made-up chat (404 proves the key and the agent), SELECT 1 on the data query
API, and a revoke of a made-up embed session (nothing is minted). Secrets are
shown as set or unset, never their value.

Exit 0 when all is well, else the code of the first failing check (2 a setting,
3 a rejected credential, 4 forbidden, 5 not found, 6 unreachable).";

/// Arguments of `analyst doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Check the settings only: call no endpoint
    #[arg(long)]
    pub offline: bool,

    /// table (for a person, fitted to the terminal) or json (an array of findings)
    #[arg(short, long, value_enum, value_name = "MODE", default_value_t = TableOrJson::Table)]
    pub output: TableOrJson,

    /// The chat API and its credentials.
    #[command(flatten)]
    pub endpoint: ChatEndpointArgs,

    /// The data query API.
    #[command(flatten)]
    pub data: DataEndpointArgs,

    /// The account host, for session (e.g. https://acme.cubecloud.dev)
    #[arg(long, env = var::BASE_URL, value_name = "URL", help_heading = "Service")]
    pub base_url: Option<String>,

    /// Who asks.
    #[command(flatten)]
    pub identity: IdentityArgs,

    /// Timeouts and retries.
    #[command(flatten)]
    pub network: NetworkArgs,
}

/// Arguments of `analyst config`.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// What to show.
    #[command(subcommand)]
    pub action: ConfigAction,
}

/// What `analyst config` shows.
#[derive(Clone, Copy, Debug, Subcommand)]
pub enum ConfigAction {
    /// Print the resolved settings of the chosen profile, each with where it came from (secrets as set or unset)
    #[command(after_help = "Examples:\n  analyst config list\n  analyst --profile staging config list")]
    List,
    /// Print the config file's path (whether or not it exists)
    #[command(after_help = "Example:\n  \"${EDITOR:-vi}\" \"$(analyst config path)\"")]
    Path,
    /// Print the names of the config file's profiles, one per line (what shell completion of --profile offers)
    #[command(after_help = "Example:\n  analyst config profiles")]
    Profiles,
}

/// What `completions` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompletionTarget {
    /// A bash completion script
    Bash,
    /// A zsh completion script
    Zsh,
    /// A fish completion script
    Fish,
    /// An elvish completion script
    Elvish,
    /// A PowerShell completion script
    Powershell,
    /// The man page (roff)
    Man,
}

/// Arguments of `analyst completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell, or 'man'
    #[arg(value_enum, value_name = "SHELL")]
    pub target: CompletionTarget,

    /// With man: write every page (analyst.1, analyst-ask.1, …) into DIR instead of printing analyst(1)
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Five examples of `check`, the start of both its short and long help.
macro_rules! check_examples {
    () => {
        "\
Examples:
  analyst check smoke.toml --jobs 4 --junit smoke.xml
  analyst check agents/ --list              # what would run; sends nothing
  analyst check agents/ --repeat 5 -o json --output-file run.json
  analyst check agents/ --baseline main.json --fail-on-regression
  analyst check smoke.toml --filter revenue --min-accuracy 90%"
    };
}

/// `check -h`'s epilogue: the examples, and where the rest is.
const CHECK_EXAMPLES: &str = concat!(
    check_examples!(),
    "

'analyst check --help' shows every option, the suite file, how Cube's eval
files are graded and the reports; 'analyst --help' the exit codes."
);

const CHECK_AFTER_HELP: &str = concat!(
    check_examples!(),
    "

Suite file (TOML):
  [defaults]               # shared by every case; a case overrides
  timeout = \"2m\"           # per case (default 5m); the chat aborted then
  # Who asks: external_id or internal_id, with email, attributes = {…},
  # groups = […], security_context = {…}
  external_id = \"ci-bot\"
  branch = \"dev\"           # and default_branch = true
  expect_tool = [\"semanticSqlApi\"]

  [[case]]
  name = \"revenue by month\"
  question = \"What was our revenue by month in 2024?\"
  expect_answer = \"(?i)revenue\"    # regular expressions
  expect_sql = \"(?i)orders\"
  min_rows = 12            # totalRows of the last SQL result
  max_seconds = 60         # budgets of each turn: wall time, and the
  max_tokens = 50000       #   totalTokens and llmCalls of its __usage__
  max_llm_calls = 8
  repeat = 5               # ask it 5 times (fresh threads; --repeat wins)
  pass_rate = 0.8          #   and pass when 4 of the 5 runs pass
  # The last SQL result must hold the rows of reference_sql (run through
  # the data query API, once per case) or expect_rows = [[…], …]: sorted
  # first unless ordered = true, column names ignored, numbers within a
  # relative tolerance (default exact).
  reference_sql = \"SELECT month, SUM(amount) FROM orders GROUP BY 1\"
  ordered = false
  tolerance = 0.001
  chat = [\"And by quarter?\",
          { question = \"Which region led?\", expect_answer = \"EMEA\" }]
  # Images go with the first question (paths relative to the suite; each
  # checked as the suite is read, read when the case runs).
  images = [\"chart.png\"]
  # Set aside until a date (UTC; or quarantine = \"2026-12-31\"): it
  # runs, reported QUARANTINED, gating nothing; on that date it gates.
  quarantine = { until = \"2026-12-31\", reason = \"flaky upstream\" }

Cube's own eval files: SUITE may be Cube's agents folder, a repository holding
one (at $CUBE_CLOUD_AGENTS_CONFIG_PATH, which must name one: exit 2 if not;
else agents/; an agents/ folder inside it is agent definitions), or one question file (read with the agents folder
that holds it). eval_questions.yml and eval_questions/*.yml are merged (cases
NAME, or SPACE/NAME outside space auto), each question's ground truth its sql
or a certifiedQuery, looked up in its space, then in auto. Certified queries
come from every YAML file of the folder (a flat certified_queries list, or
spaces: [{name, certified_queries}] and agents: [{space, …}]) and from Markdown
(.md, .markdown) in certified_queries/, certified-queries/ or queries/ at any
depth, or whose frontmatter kind, user_request or sql_query says so; rules,
skills and files that are not YAML or Markdown are never read. --certified also
asks each certified query's user_request. analyst-quarantine.toml beside the
agents folder quarantines questions as a case's quarantine does:
[quarantine] \"space/name\" = \"2026-12-31\". Graded as Cube grades: the agent's
last SQL result against the ground truth's rows (through the data query API),
rows in any order, numbers to 4 significant figures on their digits as sent,
column names ignored, extra agent columns allowed, every assignment of columns
the values allow tried; verdicts pass, fail, review, error with Cube's score
reasons (Missing columns, Row count mismatch, Unexpected rows, Value mismatch,
Query error, Agent error, Ground truth query failed, Ground truth not found)
and the accuracy, 80% (8/10).
  analyst check agents/ --certified --min-accuracy 90% --junit agents.xml

Reports: -o json has per case its verdict, pass rate, medians and every run
(chat and message ids, question, answer text, seconds {firstByte, firstSql,
answer, total}, tokens, LLM calls, cost at the config file's [prices], exit
code, failed expectations, and for a graded question that did not pass both
results' first 50 rows side by side); --junit and --tap carry the same
figures. -o markdown and --summary FILE (appended; for $GITHUB_STEP_SUMMARY)
give the accuracy, a table of the cases that did not pass and every case, all
text escaped; -o html one offline, inert page in triage order: what was
tested, the regressions, a chart of the verdicts per space, the cases that did
not pass first with both results side by side (differing cells marked), the
passes collapsed. Every report is written when every case got a
verdict (exit 0 or 9), failing ones too. stderr tags each run PASS, FAIL,
REVIEW or ERROR; with --repeat, 'consistent K/N' counts the cases that passed
every run. When stderr is not a terminal, a START line when a run starts and
a RUNNING line every 30 s. Shards of a CI matrix (--shard K/N, each with -o
json) become one report with 'analyst check merge shard-*.json', which exits
as one unsharded run would; 'check merge REPORT.json' renders one report again
in any format, keeping its comparison with its baseline.
--baseline REPORT.json classes each case by Fisher's exact test on its passed
and failed runs (regression p < 0.05, possible regression p < 0.20,
improvement, stable, insufficient data: too few runs to tell, with the runs
that could) and the suite by a sign test over the cases both ran; a baseline
of another chat URL, branch or suite, or older than --baseline-max-age, is
unreliable and gates nothing unless --baseline-any.

Exit codes, the same for TOML suites and Cube's eval files: 0 every case
passed (with --min-accuracy P: at least P of them); 9 a case's verdict is fail,
review or error (an expectation, comparison or budget not met; or the case's
own failure: a bad stream, a 5xx after --retries, its timeout), a case left
unasked once --budget-tokens or --budget-usd was spent, or, with
--fail-on-regression, a case or the suite regressed; 2 for a malformed suite or
a --filter that selects nothing (nothing runs). A failure of the whole run (a signal, credentials refused, the agent not found,
the service unreachable, --timeout) stops it at once, aborting running chats:
its own code (3, 5, 6, 124, 130…), one line, no report (--output-file and
--junit left as they were). A 5xx after --retries, a reset connection or a
case's own timeout is that case's error; the run goes on."
);

const MERGE_AFTER_HELP: &str = "\
Example (a CI matrix of 4 shards, then one job):
  analyst check --shard 2/4 -o json smoke.toml > shard-2.json  # a shard
  analyst check merge shard-*.json --junit report.xml -o json > report.json

Example (a saved report, read again as a page and a step summary):
  analyst check merge report.json -o html --output-file report.html
  analyst check merge report.json -o markdown >> \"$GITHUB_STEP_SUMMARY\"

Every shard of a K/N set must be given once; a case in two reports is refused.
The exit code is what one unsharded run would have given.";

/// What `check` prints on stdout besides nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckOutput {
    /// One JSON document with every case's result and timings
    Json,
    /// The Markdown summary (as --summary writes it) on stdout
    Markdown,
    /// One self-contained, offline, inert HTML page: the accuracy, a chart of verdicts, every case
    Html,
}

/// Arguments of `analyst check`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct CheckArgs {
    /// Merge shards' reports instead of running a suite.
    #[command(subcommand)]
    pub action: Option<CheckAction>,

    /// The suite: a TOML file, or Cube's eval files
    ///
    /// A TOML file, or Cube's eval files: an agents/ folder, a repository holding one, or an eval_questions YAML file
    #[arg(value_name = "SUITE", required = true)]
    pub suite: Option<PathBuf>,

    /// How many cases run at once
    #[arg(short, long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,

    /// What is overridden in every case: runs, pass rate, budgets.
    #[command(flatten)]
    pub cases: CaseArgs,

    /// With Cube's eval files: also ask every certified query's user_request, graded against its SQL (cases certified/NAME)
    #[arg(long)]
    pub certified: bool,

    /// Record nothing of these turns in the history (as ANALYST_HISTORY=0)
    #[arg(long)]
    pub no_history: bool,

    /// Ask again, of an earlier -o json REPORT of this suite, only the runs that ended in an error outside the agent's answer (the service failing or unreachable, a reset, a case's timeout, an agent crash); every other run keeps its verdict, and the report written is the merged one, each run asked again keeping the attempts it replaced. A report of another agent or another suite is refused (exit 2); a case changed since the report is asked again whole
    #[arg(long, value_name = "REPORT", conflicts_with = "stop_when_decided")]
    pub retry_errors: Option<PathBuf>,

    /// End a case's repeats once its verdict at its pass rate cannot change (--repeat 5 --pass-rate 0.6: three passes or three failures decide it); the report says how many runs that saved
    #[arg(long)]
    pub stop_when_decided: bool,

    /// Run only the cases whose name matches REGEX
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,

    /// Run the K-th of N disjoint slices of the cases: sorted by name and dealt round-robin, so no shard has more than one case more than another, and the N shards together run every case once (for a CI matrix)
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,

    /// Print the cases the run would ask, and ask nothing
    ///
    /// After --filter, --shard, --certified, one a line: NAME, FILE:LINE and QUESTION separated by tabs; -o json prints an array of {name, space, question, source, groundTruth}. Sends nothing and needs no credentials
    #[arg(long, conflicts_with_all = ["tap", "junit", "summary", "baseline", "save", "repeat", "stop_when_decided", "retry_errors", "regrade", "budget_tokens", "budget_usd"])]
    pub list: bool,

    /// Keep each turn's raw stream in DIR, and what a re-grade needs (replay one with 'ask --replay', grade them again with --regrade DIR)
    ///
    /// DIR is created 0700, each file 0600: NN-CASE[.rK][.T].ndjson per turn (.rK a run of a repeated case, .T a turn of a conversation), byte for byte as the service sent it, and analyst-save.json (its "version", the run's metadata, and each stream's case, run, turn and timings), written when the run ends.
    #[arg(long, value_name = "DIR", conflicts_with = "regrade")]
    pub save: Option<PathBuf>,

    /// Grade again the streams a run saved with --save DIR, against the suite as it is now, asking no turn
    ///
    /// Expectations, ground truth (fetched as usual), tolerance and figures are the suite's now; the answers, timings and usage are the saved run's. Every saved run of a case is graded; a case with no saved stream is an error (no saved stream), never asked. The report says regraded, with the saved run's metadata. Needs no chat URL or key.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["retry_errors", "stop_when_decided", "repeat", "budget_tokens", "budget_usd"])]
    pub regrade: Option<PathBuf>,

    /// Start no new turn once the finished turns' totalTokens reach N (turns in flight finish)
    ///
    /// A turn with no __usage__ line counts as reaching it (the budget fails closed; the note says which turn). Cases not asked are skipped (budget) in every report, and the run exits 9: budget spent after N of M cases.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub budget_tokens: Option<u64>,

    /// Start no new turn once the finished turns' cost at the config file's [prices] reaches X US dollars
    ///
    /// A turn with no __usage__ line, or a model [prices] does not price, counts as reaching it (the budget fails closed; the note says which turn and why). Cases not asked are skipped (budget), and the run exits 9.
    #[arg(long, value_name = "X", value_parser = parse_dollars)]
    pub budget_usd: Option<f64>,

    /// Where the report goes, and what it is compared with.
    #[command(flatten)]
    pub report: ReportArgs,

    /// Where the service is and how to authenticate.
    #[command(flatten)]
    pub endpoint: ChatEndpointArgs,

    /// Where reference_sql runs.
    #[command(flatten)]
    pub data: DataEndpointArgs,

    /// Who asks, unless the suite says otherwise.
    #[command(flatten)]
    pub identity: IdentityArgs,

    /// Timeouts and retries.
    #[command(flatten)]
    pub network: NetworkArgs,
}

/// What `check` overrides in every case of the suite: its runs, its pass
/// rate, its budgets.
#[derive(Args, Debug, Default)]
pub struct CaseArgs {
    /// Ask every case N times (fresh threads)
    ///
    /// Overrides the suite's repeat; a case passes when pass_rate of its runs pass
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub repeat: Option<u16>,

    /// A case passes when at least this share of its runs pass (0 to 1), overriding the suite's pass_rate
    #[arg(long, value_name = "RATE", value_parser = parse_share)]
    pub pass_rate: Option<f64>,

    /// Fail a turn that takes more than SECONDS, overriding the suite's max_seconds
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub max_seconds: Option<f64>,

    /// Fail a turn whose __usage__ reports more than N totalTokens, overriding the suite's max_tokens
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,

    /// Fail a turn whose __usage__ reports more than N llmCalls, overriding the suite's max_llm_calls
    #[arg(long, value_name = "N")]
    pub max_llm_calls: Option<u64>,

    /// Fail a case whose answer states a figure its rows do not hold (every case, as expect_faithful does)
    ///
    /// For Cube's agents folder, whose files cannot say expect_faithful. The reason names each unsupported figure and the nearest value of the rows: Unsupported figure: 1,300 (nearest: 1,234 in orders).
    #[arg(long)]
    pub expect_faithful: bool,
}

/// Where a command's data goes instead of plain stdout.
#[derive(Debug, Args)]
pub struct DestinationArgs {
    /// Filter the JSON output through a jq expression
    ///
    /// As gh --jq does: strings print raw, other values as compact JSON, one per line
    #[arg(long, value_name = "EXPR")]
    pub jq: Option<String>,

    /// Write the output to FILE instead of stdout, atomically
    ///
    /// FILE (created 0600) is replaced only when the command succeeds (check: when every case got a verdict, exit 0 or 9), never left partial; a file the command reads is refused
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
}

/// Where a `check` report goes (`check` and `check merge`), and what it is
/// compared with.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Write a JUnit XML report to FILE
    ///
    /// One testcase per case, written atomically whenever every case got a verdict (failing ones too)
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Print TAP (Test Anything Protocol) on stdout
    #[arg(long, conflicts_with = "output")]
    pub tap: bool,

    /// The report on stdout
    ///
    /// json (one document of all results), markdown (the summary) or html (a page)
    #[arg(short, long, value_enum, value_name = "MODE")]
    pub output: Option<CheckOutput>,

    /// Append a Markdown summary to FILE (made for $GITHUB_STEP_SUMMARY): the accuracy, a table of the cases that did not pass, every case in a collapsed block
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,

    /// Where the data goes: --jq, --output-file.
    #[command(flatten)]
    pub destination: DestinationArgs,

    /// Compare with an earlier -o json REPORT: regressions or noise
    ///
    /// Each case is classed by Fisher's exact test on its passed and failed runs (regression, possible regression, improvement, stable, insufficient data), the suite by a sign test over the cases both ran; median duration or tokens grown by more than 20% noted
    #[arg(long, value_name = "REPORT")]
    pub baseline: Option<PathBuf>,

    /// Exit 9 when --baseline finds a regression (p < 0.05, a case or the suite), never on noise; an unreliable baseline gates nothing
    #[arg(long, requires = "baseline")]
    pub fail_on_regression: bool,

    /// A baseline older than this is unreliable: it gates nothing (default 14d; e.g. 36h)
    #[arg(long, value_name = "AGE", requires = "baseline")]
    pub baseline_max_age: Option<String>,

    /// Trust the baseline whatever its age, chat URL, branch or suite
    #[arg(long, requires = "baseline")]
    pub baseline_any: bool,

    /// The run passes when this share of its cases pass (0.9 or 90%)
    ///
    /// Instead of every case; the cases that fail are still listed, and below it the exit code is 9
    #[arg(long, value_name = "P", value_parser = parse_accuracy)]
    pub min_accuracy: Option<f64>,
}

/// What `analyst check` does instead of running a suite.
#[derive(Debug, Subcommand)]
pub enum CheckAction {
    /// Merge shards' -o json reports into one, or render one report again
    ///
    /// Merge the -o json reports of shards into one report, as one unsharded run; given one report, render it again in any format (--junit, --tap, -o json|markdown|html) without asking anything
    #[command(after_help = MERGE_AFTER_HELP)]
    Merge(MergeArgs),
}

/// Arguments of `analyst check merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' reports (from 'analyst check --shard K/N -o json')
    #[arg(value_name = "REPORT", required = true)]
    pub reports: Vec<PathBuf>,

    /// Where the merged report goes, and what it is compared with.
    #[command(flatten)]
    pub report: ReportArgs,
}

const ROWS_AFTER_HELP: &str = "\
Examples:
  analyst ask -o raw 'Orders by customer in 2024' | analyst rows > all.csv
  analyst rows --from saved.ndjson --query 2 -o ndjson
  analyst rows --sql 'SELECT status, COUNT(*) FROM orders GROUP BY 1'

A result that is complete in the saved stream is printed without a query
(--always runs it anyway). The data query API answers at most 50,000 rows at a
time, with or without LIMIT, and says nothing when it cuts: rows pages through
the result with LIMIT/OFFSET (--page-size, default 50,000; SQL with its own
larger LIMIT is paged up to it; --order-by COL orders an unordered query).
With --no-paging, an answer of exactly 50,000 rows is exit 10; fewer rows than
totalRows is exit 10 too, unless --allow-partial.

Environment: ANALYST_DATA_URL, and ANALYST_DATA_TOKEN (a JWT) or
ANALYST_DATA_SECRET (signs a short-lived HS256 token whose payload is
--security-context).

Exit codes: 0 success, 2 usage or 400, 3 token rejected (401/403), 5 not found,
6 the service failed, 7 an error line from the data query API or a bad saved
stream, 10 fewer rows than totalRows, 11 no SQL result in the saved stream,
124 --timeout.";

/// The formats `rows` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RowsOutput {
    /// RFC 4180 CSV with a header row
    Csv,
    /// Tab-separated with a header row (\t \n \r \\ escaped)
    Tsv,
    /// One JSON array of objects, numbers and booleans typed
    Json,
    /// One JSON object per row, numbers and booleans typed
    Ndjson,
    /// An aligned table for a person (numbers right-aligned; cut to a terminal's width; holds every row to align them)
    Table,
    /// A Parquet file of typed columns (to --output-file, or to stdout that is not a terminal)
    Parquet,
}

/// The `cache` modes of the data query API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CacheMode {
    /// Serve stale data if the query is slow
    StaleIfSlow,
    /// Serve stale data and refresh in the background
    StaleWhileRevalidate,
    /// Revalidate before serving
    MustRevalidate,
    /// Do not use the cache
    NoCache,
}

impl CacheMode {
    /// The value the API expects.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheMode::StaleIfSlow => "stale-if-slow",
            CacheMode::StaleWhileRevalidate => "stale-while-revalidate",
            CacheMode::MustRevalidate => "must-revalidate",
            CacheMode::NoCache => "no-cache",
        }
    }
}

/// Where the data query API is.
#[derive(Debug, Args)]
#[command(next_help_heading = "Service")]
pub struct DataEndpointArgs {
    /// The data query API base, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api
    #[arg(long, env = var::DATA_URL, value_name = "URL")]
    pub data_url: Option<String>,
}

/// Arguments of `analyst rows`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("source").args(["sql", "sql_file", "from"])))]
pub struct RowsArgs {
    /// The SQL to run
    #[arg(long, value_name = "SQL")]
    pub sql: Option<String>,

    /// Read the SQL from FILE ('-' = stdin)
    #[arg(long, value_name = "FILE")]
    pub sql_file: Option<String>,

    /// A stream saved by 'ask -o raw' or 'ask -o events' ('-' = stdin; the default when stdin is a pipe)
    #[arg(long, value_name = "FILE")]
    pub from: Option<String>,

    /// Which SQL result of the saved stream: 'last' (the last that did not fail) or a 1-based index
    #[arg(long, value_name = "WHICH", default_value = "last", value_parser = parse_query_selector)]
    pub query: QuerySelector,

    /// What to write on stdout
    #[arg(short, long, value_enum, default_value_t = RowsOutput::Csv, value_name = "MODE")]
    pub output: RowsOutput,

    /// Where the data goes: --jq, --output-file.
    #[command(flatten)]
    pub destination: DestinationArgs,

    /// Run the query even when the saved result is already complete
    #[arg(long)]
    pub always: bool,

    /// Page through the result N rows at a time with LIMIT/OFFSET (on a line of their own, past a trailing -- comment) until a short page (the server's cap is 50,000; SQL with its own larger LIMIT is paged up to it); a page that repeats the one before, or more rows than totalRows, is exit 7
    #[arg(long, value_name = "N", default_value_t = 50_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub page_size: u64,

    /// Send the SQL as it is, in one request (an answer of exactly 50,000 rows is then exit 10)
    #[arg(long, conflicts_with_all = ["page_size", "order_by"])]
    pub no_paging: bool,

    /// Add ORDER BY COL before paging (pages of an unordered query can overlap or skip rows)
    #[arg(long, value_name = "COL")]
    pub order_by: Option<String>,

    /// Fewer rows than totalRows is a warning, not exit 10
    #[arg(long)]
    pub allow_partial: bool,

    /// With ANALYST_DATA_SECRET: the signed token's payload, a JSON object or @FILE
    #[arg(long, value_name = "JSON|@FILE")]
    pub security_context: Option<String>,

    /// Time zone for the query (passed to the data query API)
    #[arg(long, env = var::TIMEZONE, value_name = "TZ")]
    pub timezone: Option<String>,

    /// Cache mode (passed to the data query API)
    #[arg(long, value_enum, value_name = "MODE")]
    pub cache: Option<CacheMode>,

    /// Where the data query API is.
    #[command(flatten)]
    pub data: DataEndpointArgs,

    /// Timeouts and retries.
    #[command(flatten)]
    pub network: NetworkArgs,
}

const ABORT_AFTER_HELP: &str = "\
Example:
  analyst abort --chat-id \"$CHAT\" --external-id ci-bot

Exit codes: 0 aborted (204), 3 bad key (401), 4 you do not own this chat (403),
5 no such chat (404), 6 the service failed (transient failures are retried).";

const SESSION_AFTER_HELP: &str = "\
Examples:
  export ANALYST_BASE_URL=https://acme.cubecloud.dev
  export ANALYST_DEPLOYMENT_ID=42
  analyst session --external-id customer-42 --attr region=EMEA  # sessionId
  analyst session --external-id c42 --setting allowAi=false \\
    --display-name 'Ana B.'
  analyst session revoke \"$SESSION\"

An --attr value that is JSON (a number, an array, null) is sent as JSON;
--setting values true, false and numbers likewise; anything else as a string.

Exit codes: 0 success, 2 usage or 400, 3 bad key (401), 4 forbidden (403: a
personal key, or a deployment outside the key's scope), 5 not found (404: an
unknown branch), 6 the service failed (transient failures are retried).";

const SESSION_REVOKE_AFTER_HELP: &str = "\
Examples:
  analyst session revoke \"$SESSION\"
  printf '%s\\n' \"$A\" \"$B\" | analyst session revoke -

Revoking is idempotent: an unknown or expired id is revoked all the same.

Exit codes: 0 revoked (204), 2 usage, 3 bad key (401), 4 embedding is not
enabled for the account (403), 6 the service failed.";

/// Arguments of `analyst abort`.
#[derive(Debug, Args)]
pub struct AbortArgs {
    /// The chat to stop (printed by ask on stderr as 'chat: <id>')
    #[arg(long, value_name = "ID")]
    pub chat_id: String,

    /// Where the service is and how to authenticate.
    #[command(flatten)]
    pub endpoint: ChatEndpointArgs,

    /// Who owns the chat.
    #[command(flatten)]
    pub identity: IdentityArgs,

    /// Timeouts and retries.
    #[command(flatten)]
    pub network: NetworkArgs,
}

/// What `analyst session` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SessionOutput {
    /// The sessionId and a newline
    Text,
    /// {"sessionId": "…"}
    Json,
}

/// Arguments of `analyst session`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SessionArgs {
    /// Revoke sessions instead of minting one.
    #[command(subcommand)]
    pub action: Option<SessionAction>,

    /// What to write on stdout
    #[arg(short, long, value_enum, default_value_t = SessionOutput::Text, value_name = "MODE")]
    pub output: SessionOutput,

    /// Where the data goes: --jq, --output-file.
    #[command(flatten)]
    pub destination: DestinationArgs,

    /// The account host, e.g. https://acme.cubecloud.dev
    #[arg(long, env = var::BASE_URL, value_name = "URL", help_heading = "Service")]
    pub base_url: Option<String>,

    /// The deployment the session is for (deploymentId; the service requires it)
    #[arg(long, env = var::DEPLOYMENT_ID, value_name = "N", help_heading = "Service")]
    pub deployment_id: Option<u64>,

    /// The development branch to embed (branchName; production when left out)
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,

    /// The embed tenant (embedTenantName: lowercase, 5-36 of a-z 0-9 -, starting with a letter)
    #[arg(long, value_name = "NAME")]
    pub embed_tenant: Option<String>,

    /// Let the user create content (creatorMode: true)
    #[arg(long)]
    pub creator_mode: bool,

    /// The user's display name (userProfile; external users only)
    #[arg(long, value_name = "TEXT")]
    pub display_name: Option<String>,

    /// The user's picture, an absolute http(s) URL (userProfile; external users only)
    #[arg(long, value_name = "URL")]
    pub picture: Option<String>,

    /// A switch of the embedded app (settings; repeatable), e.g. allowAi=false, locale=de-DE
    #[arg(long = "setting", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,

    /// How to authenticate.
    #[command(flatten)]
    pub key: KeyArgs,

    /// The user the session is for.
    #[command(flatten)]
    pub identity: IdentityArgs,

    /// Timeouts and retries.
    #[command(flatten)]
    pub network: NetworkArgs,
}

/// What `analyst session` does besides minting.
#[derive(Debug, Subcommand)]
pub enum SessionAction {
    /// End embed sessions (idempotent)
    #[command(after_help = SESSION_REVOKE_AFTER_HELP)]
    Revoke(SessionRevokeArgs),
}

/// Arguments of `analyst session revoke`.
#[derive(Debug, Args)]
pub struct SessionRevokeArgs {
    /// The sessionId to revoke; '-' reads ids from stdin, one per line
    #[arg(value_name = "SESSION_ID")]
    pub session_id: String,

    /// The account host, e.g. https://acme.cubecloud.dev
    #[arg(long, env = var::BASE_URL, value_name = "URL", help_heading = "Service")]
    pub base_url: Option<String>,

    /// How to authenticate.
    #[command(flatten)]
    pub key: KeyArgs,

    /// Timeouts and retries.
    #[command(flatten)]
    pub network: NetworkArgs,
}

/// Five examples of `ask`, the start of both its short and long help.
macro_rules! ask_examples {
    () => {
        "\
Examples:
  analyst ask --external-id ci-bot 'Revenue by month in 2024?'
  analyst ask -o csv 'Top 10 customers by revenue' > top.csv
  analyst ask -o json 'Orders last week?' --jq .answer
  analyst ask --chat-id \"$CHAT\" 'And by quarter?'
  analyst ask --replay saved.ndjson -o vega > chart.vl.json"
    };
}

/// `ask -h`'s epilogue: the examples, and where the rest is.
const ASK_EXAMPLES: &str = concat!(
    ask_examples!(),
    "

'analyst ask --help' shows every option, what each output is and what a
broken-off turn does; 'analyst --help' the environment and the exit codes."
);

const ASK_AFTER_HELP: &str = concat!(
    ask_examples!(),
    "
  analyst ask -o events 'Revenue by region' | jq 'select(.toolCall)'
  analyst ask --chat-id \"$CHAT\"                    # the thread so far
  analyst ask --chat-id \"$CHAT\" --resume \"$ID\"     # a suspended turn

stdout is the data; stderr carries notes only ('chat: <id>', 'message: <id>', warnings about
tool errors, truncated results and missing final answers; past five tool
errors or five truncated results, one line says the rest are not listed).
-o json is written even when the chat fails, with status and errors saying
why. On a terminal (never in pipes or with -q; NO_COLOR turns off colour only) a spinner shows what
the agent is doing, the answer streams as it arrives, and a summary of the
SQL results follows.
A turn that breaks off (the connection drops, the stream ends mid-message, the
service suspends it) is resumed with the same chat and message id, up to
--retries times; what was already read is not taken twice. When they run out:
exit 7, and the error ends with the 'analyst ask --chat-id … --resume …' that
resumes it by hand.
See 'analyst --help' for the environment and the exit codes."
);

/// Which output `ask` writes on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputMode {
    /// The final answer's text and a newline
    Answer,
    /// The stream's bytes as received, each line flushed as it completes
    Raw,
    /// One JSON object per stream line, with toolCall input and result parsed
    Events,
    /// One JSON document: chat id, status, answer, queries with typed rows, tool calls, errors
    Json,
    /// The selected SQL result as RFC 4180 CSV with a header row
    Csv,
    /// The selected SQL result as an aligned table for a person (numbers right-aligned; cut to a terminal's width)
    Table,
    /// The selected result's Vega-Lite v5 spec with the rows merged in as data.values
    Vega,
    /// The selected result's chart drawn as SVG by Vega itself, in-process and offline
    Svg,
    /// That chart as a PNG picture, text in a font shipped in analyst (at --scale)
    Png,
    /// One self-contained HTML page: question, answer, the chart inline, each result's SQL and rows
    Html,
}

/// Which SQL result `csv` and `vega` use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuerySelector {
    /// The last SQL result that did not fail.
    Last,
    /// The n-th SQL result of the stream, counting from 1.
    Index(usize),
}

/// Parses `--scale`: a number from 1 to 8.
pub fn parse_scale(text: &str) -> Result<f32, String> {
    match text.trim().parse::<f32>() {
        Ok(scale) if (1.0..=8.0).contains(&scale) => Ok(scale),
        _ => Err(format!("{text:?} is not a scale from 1 to 8 (pixels per SVG pixel)")),
    }
}

/// Parses `--pass-rate`: a share from 0 to 1.
pub fn parse_share(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(share) if (0.0..=1.0).contains(&share) => Ok(share),
        _ => Err(format!("{text:?} is not a share of runs from 0 to 1 (0.8 = 80%)")),
    }
}

/// Parses `--min-accuracy`: a share of cases from 0 to 1, or a percentage
/// (`0.9` or `90%`).
pub fn parse_accuracy(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let share = match trimmed.strip_suffix('%') {
        // Shifted by its decimal digits, not divided: 33.3% is exactly
        // 0.333 (a float division would give 0.33299999999999996).
        Some(percent) => percent.trim().parse::<f64>().and_then(|percent| {
            let written = format!("{percent:e}");
            let (digits, exponent) = written.split_once('e').unwrap_or((&written, "0"));
            format!("{digits}e{}", exponent.parse::<i32>().unwrap_or(0) - 2).parse::<f64>()
        }),
        None => trimmed.parse::<f64>(),
    };
    match share {
        Ok(share) if (0.0..=1.0).contains(&share) => Ok(share),
        _ => Err(format!(
            "{text:?} is not a share of cases from 0 to 1 or a percentage (0.9 or 90%)"
        )),
    }
}

/// Parses `--max-seconds`: a number of seconds above 0.
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds > 0.0 && seconds < 1e9 => Ok(seconds),
        _ => Err(format!("{text:?} is not a number of seconds above 0")),
    }
}

/// Parses `--budget-usd`: US dollars above 0 (`5`, `2.50`, `$2.50`).
pub fn parse_dollars(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    match trimmed.strip_prefix('$').unwrap_or(trimmed).trim().parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd > 0.0 => Ok(usd),
        _ => Err(format!("{text:?} is not an amount of US dollars above 0 (2.50)")),
    }
}

/// Parses `--query`: `last` or a 1-based index.
pub fn parse_query_selector(text: &str) -> Result<QuerySelector, String> {
    if text.eq_ignore_ascii_case("last") {
        return Ok(QuerySelector::Last);
    }
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(QuerySelector::Index(n)),
        _ => Err(format!("{text:?} is not 'last' or a 1-based index such as 1, 2, 3")),
    }
}

/// Where the Chat API is and how to authenticate.
#[derive(Debug, Args)]
#[command(next_help_heading = "Service")]
pub struct ChatEndpointArgs {
    /// The full Chat API URL from the agent settings (ends in /chat/stream-chat-state)
    #[arg(long, env = var::CHAT_URL, value_name = "URL", hide_env_values = true)]
    pub chat_url: Option<String>,

    /// How to authenticate.
    #[command(flatten)]
    pub key: KeyArgs,

    /// Read a Cube token (JWT, sent as X-Cube-Auth-Token) from this file ('-' = stdin) instead of ANALYST_CUBE_TOKEN
    #[arg(long, env = var::CUBE_TOKEN_FILE, value_name = "PATH")]
    pub cube_token_file: Option<String>,
}

/// Where the API key comes from (besides `ANALYST_API_KEY`).
#[derive(Debug, Args)]
#[command(next_help_heading = "Service")]
pub struct KeyArgs {
    /// Read the API key from this file ('-' = stdin) instead of ANALYST_API_KEY
    #[arg(long, env = var::API_KEY_FILE, value_name = "PATH")]
    pub api_key_file: Option<String>,
}

/// Who the request is made for: the `sessionSettings` object.
#[derive(Debug, Args)]
#[command(next_help_heading = "Identity (sessionSettings)")]
pub struct IdentityArgs {
    /// Id of an external user (lowercase, no spaces); created on first use
    #[arg(long, env = var::EXTERNAL_ID, value_name = "ID")]
    pub external_id: Option<String>,

    /// Username of an existing internal user (often an email), whose own permissions apply
    #[arg(long, env = var::INTERNAL_ID, value_name = "NAME")]
    pub internal_id: Option<String>,

    /// The user's email address
    #[arg(long, value_name = "EMAIL")]
    pub email: Option<String>,

    /// A user attribute for row-level security (repeatable; external users only)
    #[arg(long = "attr", value_name = "NAME=VALUE")]
    pub attrs: Vec<String>,

    /// A group the user belongs to (repeatable; external users only)
    #[arg(long = "group", value_name = "NAME")]
    pub groups: Vec<String>,

    /// Security context for data queries: a JSON object, or @FILE (external users only)
    #[arg(long, value_name = "JSON|@FILE")]
    pub security_context: Option<String>,

    /// Make the external user persistent (isEphemeral: false)
    #[arg(long)]
    pub persistent: bool,

    /// Lifetime of an ephemeral external user (e.g. 12h, 7d)
    #[arg(long, value_name = "DURATION")]
    pub ttl: Option<String>,

    /// The IANA time zone the agent's queries run in (timezone), e.g. Europe/Berlin
    #[arg(long, env = var::TIMEZONE, value_name = "TZ")]
    pub timezone: Option<String>,

    /// The agent may not create or change saved reports, workbooks or dashboards
    #[arg(long)]
    pub no_authoring: bool,
}

/// Arguments of `analyst ask`.
#[derive(Debug, Args)]
pub struct AskArgs {
    /// The question ('-' or a pipe: read from stdin)
    ///
    /// '-' reads it from stdin; omitted, a piped stdin is read. Omit it with --chat-id to print the thread so far
    #[arg(value_name = "QUESTION")]
    pub question: Option<String>,

    /// Continue this thread (its chat id, printed on stderr as 'chat: <id>')
    #[arg(long, value_name = "ID")]
    pub chat_id: Option<String>,

    /// Send an image with the question (repeatable; '-' reads one from stdin when the question is an argument): PNG, JPEG, GIF or WebP, at most 20 MiB
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub image: Vec<PathBuf>,

    /// Continue the thread named NAME, or start it
    ///
    /// Its chat id is remembered in the history database per chat URL and identity; a new name, or a thread the service forgot or older than --thread-ttl, starts afresh
    #[arg(long, value_name = "NAME", conflicts_with_all = ["chat_id", "replay"])]
    pub thread: Option<String>,

    /// A thread whose last turn is older than this starts afresh
    #[arg(long, value_name = "DURATION", default_value = "14d", requires = "thread")]
    pub thread_ttl: String,

    /// Record nothing of this turn in the history (as ANALYST_HISTORY=0)
    #[arg(long)]
    pub no_history: bool,

    /// With --chat-id: resume that suspended turn (sends chatId and messageId; no question needed)
    #[arg(long, value_name = "MESSAGE_ID", requires = "chat_id")]
    pub resume: Option<String>,

    /// Run queries against this development branch (activeBranchName)
    #[arg(long, value_name = "NAME")]
    pub branch: Option<String>,

    /// Say that --branch names the default (main/production) branch
    #[arg(long, requires = "branch")]
    pub default_branch: bool,

    /// What to write on stdout
    #[arg(short, long, value_enum, default_value_t = OutputMode::Answer, value_name = "MODE")]
    pub output: OutputMode,

    /// Where the data goes: --jq, --output-file.
    #[command(flatten)]
    pub destination: DestinationArgs,

    /// Which SQL result csv, vega and svg use: 'last' (the last one that did not fail) or a 1-based index
    #[arg(long, value_name = "WHICH", default_value = "last", value_parser = parse_query_selector)]
    pub query: QuerySelector,

    /// Also save the raw stream, byte for byte, to FILE
    #[arg(long, value_name = "FILE")]
    pub tee: Option<PathBuf>,

    /// For vega, svg, png and html: a Vega config merged into the chart's (a JSON file, or a theme of vega-themes: dark, excel, fivethirtyeight, ggplot2, googlecharts, latimes, powerbi, quartz, urbaninstitute, vox, carbonwhite, carbong10, carbong90, carbong100)
    #[arg(long, value_name = "FILE|THEME")]
    pub vega_config: Option<String>,

    /// For -o png: pixels per SVG pixel (1 to 8)
    #[arg(long, value_name = "N", default_value_t = 2.0, value_parser = parse_scale)]
    pub scale: f32,

    /// Read a saved stream ('-' = stdin) instead of calling the service
    ///
    /// Needs no key or URL.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["question", "chat_id", "branch", "resume"])]
    pub replay: Option<String>,

    /// Exit 8 when a tool result carries an error
    #[arg(long)]
    pub fail_on_tool_error: bool,

    /// Fetch every row of a truncated result (csv, vega, json)
    ///
    /// For csv, vega and json: every row of a truncated result is fetched through the data query API first
    #[arg(long)]
    pub all_rows: bool,

    /// For csv, vega and json: a truncated result is a warning, not exit 10
    #[arg(long)]
    pub allow_partial: bool,

    /// Exit 9 unless the final answer matches this regular expression
    #[arg(long, value_name = "REGEX", help_heading = "Checks")]
    pub expect_answer: Option<String>,

    /// Exit 9 unless some SQL query of the agent matches this regular expression
    #[arg(long, value_name = "REGEX", help_heading = "Checks")]
    pub expect_sql: Option<String>,

    /// Exit 9 unless the agent called this tool (repeatable; semantic*/cube* names are the same tool)
    #[arg(long, value_name = "NAME", help_heading = "Checks")]
    pub expect_tool: Vec<String>,

    /// Exit 9 unless the selected SQL result (--query) has at least N rows (totalRows)
    #[arg(long, value_name = "N", help_heading = "Checks")]
    pub min_rows: Option<u64>,

    /// Exit 9 when a figure of the answer is not in the rows
    ///
    /// Every number the final answer states (prose, tables, bold; 1,234, 1.2M, €2.4M, 40%, 2.3x) must equal, at the precision it is written with, a cell of the turn's SQL results, a column's sum, mean, min or max, a row count, or the difference, ratio, percent change or share of two cells. Dates, list numbers, code and the question's own numbers are no figures. -o json reports the figures without this switch.
    #[arg(long, help_heading = "Checks")]
    pub expect_faithful: bool,

    /// An agent that asks back: its question is the answer, exit 0 (else exit 12)
    ///
    /// A turn that called no tool and whose answer's last sentence ends in '?' asks back. Without this switch nothing is written on stdout (-o json writes its document with asksBack), the question and how to reply go to stderr, and the exit code is 12.
    #[arg(long)]
    pub allow_questions: bool,

    /// Where the data query API is (for --all-rows).
    #[command(flatten)]
    pub data: DataEndpointArgs,

    /// Where the service is and how to authenticate.
    #[command(flatten)]
    pub endpoint: ChatEndpointArgs,

    /// Who is asking.
    #[command(flatten)]
    pub identity: IdentityArgs,

    /// Timeouts and retries.
    #[command(flatten)]
    pub network: NetworkArgs,
}
