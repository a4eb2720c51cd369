//! Profiles: `~/.config/analyst/config.toml` (or `$XDG_CONFIG_HOME`, or
//! `ANALYST_CONFIG`) names sets of endpoints, a default identity, and how to
//! get secrets without storing them in the file (a command such as a
//! password manager, or a key file). A flag wins over the environment,
//! which wins over the profile.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Result;
use serde::Deserialize;

use crate::cli::IdentityArgs;
use crate::config::Secret;
use crate::exit::usage;

/// One profile of the config file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The profile's name (set when loaded).
    #[serde(skip)]
    pub name: String,
    /// The Chat API URL.
    pub chat_url: Option<String>,
    /// The account host, for `session`.
    pub base_url: Option<String>,
    /// The data query API base, for `rows`.
    pub data_url: Option<String>,
    /// The default external user.
    pub external_id: Option<String>,
    /// The default internal user.
    pub internal_id: Option<String>,
    /// The default email.
    pub email: Option<String>,
    /// A command whose output is the API key (e.g. `pass show analyst/prod`).
    pub api_key_command: Option<String>,
    /// A file holding the API key.
    pub api_key_file: Option<String>,
    /// A command whose output is a data query API token.
    pub data_token_command: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    /// The profile used without `--profile`.
    default: Option<String>,
    #[serde(default)]
    profiles: BTreeMap<String, Profile>,
}

/// Where the config file is: `ANALYST_CONFIG`, else
/// `$XDG_CONFIG_HOME/analyst/config.toml`, else `~/.config/analyst/config.toml`.
pub fn config_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ANALYST_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some(base.join("analyst").join("config.toml"))
}

/// The profile to use: `selected` (`--profile` / `ANALYST_PROFILE`), else
/// the file's `default`, else one named `default`; none when there is no
/// config file and none was asked for.
pub fn load(selected: Option<&str>) -> Result<Option<Profile>> {
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
    Ok(Some(profile))
}

/// Runs a profile's secret command (`what` names it in errors) with `sh -c`
/// and returns its output, trimmed. Its stdin and stderr are the user's, so a
/// password manager can ask for a passphrase.
pub fn run_secret_command(command: &str, what: &str, profile: &str) -> Result<Secret> {
    let output = Command::new("sh")
        .args(["-c", command])
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

impl Profile {
    /// Fills each unset `slot` (neither flag nor environment gave it) from
    /// the profile's value.
    pub fn fill(slot: &mut Option<String>, value: &Option<String>) {
        if slot.is_none() {
            slot.clone_from(value);
        }
    }

    /// Fills the identity when neither kind of id was given.
    pub fn fill_identity(&self, identity: &mut IdentityArgs) {
        if identity.external_id.is_none() && identity.internal_id.is_none() {
            identity.external_id.clone_from(&self.external_id);
            identity.internal_id.clone_from(&self.internal_id);
        }
        Self::fill(&mut identity.email, &self.email);
    }

    /// Fills every command's unset endpoints and identity.
    pub fn apply(&self, command: &mut crate::cli::Command) {
        use crate::cli::Command;
        match command {
            Command::Ask(args) => {
                Self::fill(&mut args.endpoint.chat_url, &self.chat_url);
                Self::fill(&mut args.data.data_url, &self.data_url);
                self.fill_identity(&mut args.identity);
            }
            Command::Abort(args) => {
                Self::fill(&mut args.endpoint.chat_url, &self.chat_url);
                self.fill_identity(&mut args.identity);
            }
            Command::Check(args) => {
                Self::fill(&mut args.endpoint.chat_url, &self.chat_url);
                self.fill_identity(&mut args.identity);
            }
            Command::Session(args) => {
                Self::fill(&mut args.base_url, &self.base_url);
                self.fill_identity(&mut args.identity);
            }
            Command::Rows(args) => Self::fill(&mut args.data.data_url, &self.data_url),
            Command::Completions(_) => {}
        }
    }
}

/// `~/` at the start of a profile's path, expanded.
pub fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}
