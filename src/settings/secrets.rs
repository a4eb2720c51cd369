//! Where each secret comes from: one [`SecretSource`] per secret, found in
//! one precedence (flag > environment > the profile's file or command),
//! with the origin messages name, and read only when a command needs it.
//! The commands, `doctor` and `config list` all ask it; the resolver's
//! methods here find and read a command's secrets, a file or standard
//! input waited for no longer than its `--timeout`.

use std::path::PathBuf;
use std::process::{Command as Process, Stdio};
use std::time::Duration;

use anyhow::Result;
use reqwest::Url;

use super::checks::{percent_decode, variable, Finding, FindingState};
use super::profile::{expand_home, Profile};
use super::Sources;
use crate::api::data::ReadSecret;
use crate::cli::{var, ChatEndpointArgs};
use crate::error::usage;
use crate::input::{command_output, read_text, text_of, Input, MAX_TEXT_INPUT};
use crate::redact::register_secret;
pub use crate::redact::Secret;

/// The environment variables that hold secrets: a profile's commands run
/// without them.
const SECRET_VARIABLES: [&str; 4] = [var::API_KEY, var::CUBE_TOKEN, var::DATA_TOKEN, var::DATA_SECRET];

/// Where a secret is read from.
#[derive(Clone, Debug)]
enum Place {
    /// Standard input (a file flag given `-`).
    Stdin,
    /// A file, named by a flag, a variable or a profile key (`named_by`).
    File { path: PathBuf, named_by: String },
    /// The environment variable itself.
    Variable(&'static str),
    /// A profile's command (`key` of the profile named `profile`), run
    /// with `sh -c`; `origin` is how messages name it.
    Command {
        command: String,
        key: &'static str,
        profile: String,
        origin: String,
    },
}

/// Where one secret comes from, not yet read.
#[derive(Clone, Debug)]
pub struct SecretSource {
    /// How messages name the secret: `API key`, `Cube token`, …
    what: &'static str,
    place: Place,
    /// The command's `--timeout`: reading the file or standard input
    /// waits no longer (nor past the first signal).
    limit: Option<Duration>,
}

impl SecretSource {
    /// The secret `what` from the first of: its file flag (`file`, with
    /// what named it: the flag or its variable; `-` is standard input),
    /// its variable, then the profile's command and file keys.
    fn find(
        what: &'static str,
        file: Option<(String, &str)>,
        variable_name: &'static str,
        profile: Option<&Profile>,
        profile_keys: &[(&'static str, Option<&String>, bool)],
    ) -> Option<SecretSource> {
        let place = match (file, variable(variable_name).map(|_| variable_name)) {
            (Some((path, _)), _) if path == "-" => Place::Stdin,
            (Some((path, named_by)), _) => Place::File {
                path: PathBuf::from(path),
                named_by: named_by.to_string(),
            },
            (None, Some(name)) => Place::Variable(name),
            (None, None) => {
                let profile = profile?;
                let &(key, value, is_command) = profile_keys.iter().find(|(_, value, _)| value.is_some())?;
                let value = value?.clone();
                match is_command {
                    true => Place::Command {
                        command: value,
                        key,
                        profile: profile.name.clone(),
                        origin: profile.origin(key),
                    },
                    false => Place::File {
                        path: expand_home(&value),
                        named_by: profile.origin(key),
                    },
                }
            }
        };
        Some(SecretSource {
            what,
            place,
            limit: None,
        })
    }

    /// Where it comes from, as messages, `doctor` and `config list` name it.
    pub fn origin(&self) -> String {
        match &self.place {
            Place::Stdin => "standard input".to_string(),
            Place::File { named_by, .. } => named_by.clone(),
            Place::Variable(name) => name.to_string(),
            Place::Command { origin, .. } => origin.clone(),
        }
    }

    /// Reads the secret: standard input, the file (with a warning when
    /// others may read it), the variable, or the profile's command, run now.
    /// It must be one line, not empty.
    pub fn read(&self) -> Result<Secret> {
        let what = self.what;
        let (raw, origin) = match &self.place {
            Place::Stdin => (
                read_text(Input::Stdin, self.limit, &format!("the {what} from standard input"))?,
                "standard input".to_string(),
            ),
            Place::File { path, .. } => (self.read_file(path)?, format!("the {what} file {}", path.display())),
            Place::Variable(name) => (variable(name).unwrap_or_default(), name.to_string()),
            Place::Command {
                command,
                key,
                profile,
                origin,
            } => (run_command(command, key, profile, self.limit)?, origin.clone()),
        };
        let secret = raw.trim();
        if secret.is_empty() {
            return Err(usage(format!("the {what} is empty: check {origin}")));
        }
        if secret.chars().any(|c| c.is_control()) {
            return Err(usage(format!(
                "the {what} contains control characters or several lines; it must be one line"
            )));
        }
        Ok(Secret::new(secret.to_string(), self.origin()))
    }

    /// Reads a secret's file, warning when users other than its owner may
    /// read it.
    fn read_file(&self, path: &std::path::Path) -> Result<String> {
        let what = self.what;
        let shown = path.display();
        let text = read_text(
            Input::File(path.to_path_buf()),
            self.limit,
            &format!("the {what} file {shown}"),
        )?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if let Ok(meta) = std::fs::metadata(path) {
                let mode = meta.permissions().mode() & 0o777;
                if mode & 0o077 != 0 {
                    log::warn!(
                        "the {what} file {shown} can be read by other users (mode {mode:03o}): chmod 600 {shown}"
                    );
                }
            }
        }
        // Windows: a file's ACL (the user's profile default) is not read.
        Ok(text)
    }
}

/// Runs a profile's secret command (`key` names it in errors) with `sh -c`
/// and returns its output, within `limit` (the command's `--timeout`) and
/// the first signal: then it is killed. Its stdin and stderr are the
/// user's, so a password manager can ask for a passphrase; it gets the
/// environment without the other secrets.
fn run_command(command: &str, key: &str, profile: &str, limit: Option<Duration>) -> Result<String> {
    let mut process = Process::new("sh");
    process.args(["-c", command]);
    for name in SECRET_VARIABLES {
        process.env_remove(name);
    }
    process.stdin(Stdio::inherit()).stderr(Stdio::inherit());
    let what = format!("the output of {key} of profile {profile}");
    let (status, stdout) = command_output(&mut process, MAX_TEXT_INPUT, limit, &what)?
        .map_err(|err| usage(format!("profile {profile}: cannot run {key}: {err}")))?;
    if !status.success() {
        let code = status.code().map_or("a signal".to_string(), |c| format!("exit {c}"));
        return Err(usage(format!("profile {profile}: {key} failed ({code})")));
    }
    let text = text_of(stdout, MAX_TEXT_INPUT, &what)?;
    if text.trim().is_empty() {
        return Err(usage(format!("profile {profile}: {key} printed nothing")));
    }
    Ok(text)
}

/// Every secret's source, as a command's flags, the environment and the
/// profile give them.
#[derive(Clone, Debug, Default)]
pub struct Secrets {
    /// The chat's API key.
    pub api_key: Option<SecretSource>,
    /// A Cube token for the chat.
    pub cube_token: Option<SecretSource>,
    /// A JWT for the data query API.
    pub data_token: Option<SecretSource>,
    /// The deployment's API secret.
    pub data_secret: Option<SecretSource>,
}

impl Secrets {
    /// Finds each secret: the files named by `--api-key-file` and
    /// `--cube-token-file` (or their variables: each with what named it),
    /// the variables, the profile.
    pub fn find(
        api_key_file: Option<(String, &str)>,
        cube_token_file: Option<(String, &str)>,
        profile: Option<&Profile>,
    ) -> Secrets {
        let key = |name: &str| profile.and_then(|p| p.key(name));
        Secrets {
            api_key: SecretSource::find(
                "API key",
                api_key_file,
                var::API_KEY,
                profile,
                &[
                    ("api_key_command", key("api_key_command"), true),
                    ("api_key_file", key("api_key_file"), false),
                ],
            ),
            cube_token: SecretSource::find(
                "Cube token",
                cube_token_file,
                var::CUBE_TOKEN,
                profile,
                &[("cube_token_command", key("cube_token_command"), true)],
            ),
            data_token: SecretSource::find(
                "data token",
                None,
                var::DATA_TOKEN,
                profile,
                &[("data_token_command", key("data_token_command"), true)],
            ),
            data_secret: SecretSource::find("data secret", None, var::DATA_SECRET, None, &[]),
        }
    }

    /// The same secrets, the files and standard input they are read from
    /// waited for no longer than `limit` (the command's `--timeout`).
    pub fn within(mut self, limit: Option<Duration>) -> Secrets {
        for source in [
            &mut self.api_key,
            &mut self.cube_token,
            &mut self.data_token,
            &mut self.data_secret,
        ]
        .into_iter()
        .flatten()
        {
            source.limit = limit;
        }
        self
    }

    /// Each secret as set (and from where) or unset: nothing is read or run.
    pub fn findings(&self) -> Vec<Finding> {
        [
            ("API key", &self.api_key),
            ("Cube token", &self.cube_token),
            ("data token", &self.data_token),
            ("data secret", &self.data_secret),
        ]
        .into_iter()
        .map(|(what, source)| match source {
            Some(source) => Finding::new(what, FindingState::Ok, "set", source.origin()),
            None => Finding::new(what, FindingState::Unset, "unset", ""),
        })
        .collect()
    }
}

/// Registers every secret the process can see with the redactor, without
/// running anything: the secret variables, and the files the file
/// variables and the profile name (standard input and a profile's
/// commands are read only by the command that uses them); the values of
/// a collector's headers (`OTEL_EXPORTER_OTLP_HEADERS`, however it is
/// written); and the credentials in any URL — of a variable, a profile
/// key or anything on the command line (`matches`), `https://user:token@…`.
pub fn register_visible(profile: Option<&Profile>, matches: &clap::ArgMatches) {
    for name in SECRET_VARIABLES {
        if let Some(value) = variable(name) {
            register_secret(value.trim());
        }
    }
    let files = [variable(var::API_KEY_FILE), variable(var::CUBE_TOKEN_FILE)]
        .into_iter()
        .flatten()
        .chain(profile.and_then(|profile| profile.key("api_key_file").cloned()));
    // Only regular files: reading a pipe (`<(pass show …)`) would take
    // its text from the command that reads the secret, and a FIFO would
    // block. Those are registered when that command reads them.
    for file in files.filter(|file| file != "-").map(|file| expand_home(&file)) {
        if !file.is_file() {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(file) {
            register_secret(text.trim());
        }
    }
    if let Some(headers) = variable(var::OTEL_HEADERS) {
        register_header_values(&headers);
    }
    let url_variables = [
        var::CHAT_URL,
        var::BASE_URL,
        var::DATA_URL,
        var::OTEL_ENDPOINT,
        var::OTEL_TRACES_ENDPOINT,
    ];
    let profile_urls = profile
        .into_iter()
        .flat_map(|profile| {
            [
                &profile.chat_url,
                &profile.base_url,
                &profile.data_url,
                &profile.otlp_endpoint,
            ]
        })
        .flatten()
        .cloned();
    for text in url_variables
        .into_iter()
        .filter_map(variable)
        .chain(profile_urls)
        .chain(command_line_values(matches))
    {
        register_url_credentials(&text);
    }
}

/// Every value given on the command line `matches` (and its
/// subcommands'), as text.
fn command_line_values(matches: &clap::ArgMatches) -> Vec<String> {
    let mut values: Vec<String> = matches
        .ids()
        .filter_map(|id| matches.get_raw(id.as_str()))
        .flatten()
        .filter_map(|value| value.to_str().map(str::to_string))
        .collect();
    if let Some((_, sub)) = matches.subcommand() {
        values.extend(command_line_values(sub));
    }
    values
}

/// Registers the values of a header list (`key=value,…`, values
/// percent-encoded), also when it is malformed (`key: value`, a comma
/// left unescaped inside a value): every value, decoded and as written,
/// and the token after a scheme word (`Bearer TOKEN`); the whole text too.
pub fn register_header_values(text: &str) {
    register_secret(text.trim());
    for entry in text.split(',') {
        let value = entry.split_once(['=', ':']).map_or(entry, |(_, value)| value).trim();
        for candidate in [value.to_string(), percent_decode(value)] {
            register_secret(&candidate);
            if let Some((_, token)) = candidate.trim().rsplit_once(char::is_whitespace) {
                register_secret(token);
            }
        }
    }
}

/// Registers the credentials a URL carries in its authority
/// (`scheme://user:password@host`): the password (else the user name, a
/// token given alone), as written and percent-decoded. Text that is no URL
/// registers nothing.
pub fn register_url_credentials(text: &str) {
    let Some(scheme_end) = text.find("://").map(|at| at + 3) else {
        return;
    };
    let rest = &text[scheme_end..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let Some((userinfo, _)) = authority.rsplit_once('@') else {
        return;
    };
    let secret = match userinfo.split_once(':') {
        Some((_, password)) => password,
        None => userinfo,
    };
    register_secret(secret);
    register_secret(&percent_decode(secret));
}

/// The secrets a command reads, found and read as its flags say.
impl Sources<'_> {
    /// Every secret's source for a command with these file flags, read
    /// within `limit` (its `--timeout`).
    pub(super) fn secrets(
        &self,
        api_key_file: &Option<String>,
        cube_token_file: &Option<String>,
        limit: Option<Duration>,
    ) -> Secrets {
        Secrets::find(
            self.file_flag("api_key_file", api_key_file.as_ref()),
            self.file_flag("cube_token_file", cube_token_file.as_ref()),
            self.profile,
        )
        .within(limit)
    }

    /// The API key, read now; a usage error when none is set.
    pub(super) fn api_key(&self, secrets: Secrets) -> Result<Secret> {
        secrets.api_key.ok_or_else(no_key)?.read()
    }

    /// The chat's credentials for `url`: an agent URL takes an API key or
    /// a Cube token (both are sent when both are set); a deployment URL
    /// (`…/deployments/{id}/chat/…`) only a Cube token.
    pub(super) fn chat_credentials(
        &self,
        url: &Url,
        endpoint: &ChatEndpointArgs,
        limit: Option<Duration>,
    ) -> Result<(Option<Secret>, Option<Secret>)> {
        let secrets = self.secrets(&endpoint.key.api_key_file, &endpoint.cube_token_file, limit);
        let deployment = url.path().contains("/deployments/");
        let cube_token = secrets.cube_token.as_ref().map(|source| source.read()).transpose()?;
        let key = match (&cube_token, &secrets.api_key) {
            (_, Some(source)) => Some(source.read()?),
            (Some(_), None) => None,
            (None, None) if deployment => return Err(no_cube_token()),
            (None, None) => return Err(no_key()),
        };
        if deployment && cube_token.is_none() {
            return Err(no_cube_token());
        }
        Ok((key, cube_token))
    }
}

/// The usage error of a chat with no credential.
pub fn no_key() -> anyhow::Error {
    usage("no API key: set ANALYST_API_KEY (or pass --api-key-file PATH, or use a profile with api_key_command; the key is never taken from the command line), or a Cube token in ANALYST_CUBE_TOKEN")
}

/// The usage error of a deployment chat URL without a Cube token.
pub fn no_cube_token() -> anyhow::Error {
    usage("a deployment chat URL (…/deployments/ID/chat/…) takes only a Cube token: set ANALYST_CUBE_TOKEN (or pass --cube-token-file PATH); an API key is not accepted there")
}

/// The data query API reads its token or secret when it needs it.
impl ReadSecret for SecretSource {
    fn read(&self) -> Result<Secret> {
        SecretSource::read(self)
    }

    fn origin(&self) -> String {
        SecretSource::origin(self)
    }
}
