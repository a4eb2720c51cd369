//! The config file: where it is (found once) and its profiles (the file is
//! read and parsed once, its errors as `FILE:LINE: …`). A profile fills in
//! what neither a flag nor the environment gives.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use serde::Deserialize;

use super::checks::{variable, Finding, FindingState};
use crate::cli::var;
use crate::domain::{Price, Prices};
use crate::error::usage;
use crate::input::{read_text, Input};
use crate::text::toml_error;

/// One profile of the config file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The profile's name (set when loaded).
    #[serde(skip)]
    pub name: String,
    /// How it was chosen: `--profile`, `ANALYST_PROFILE`, the file's `default`.
    #[serde(skip)]
    pub chosen_by: String,
    /// The config file it is in.
    #[serde(skip)]
    pub file: PathBuf,
    /// The Chat API URL.
    pub chat_url: Option<String>,
    /// The account host, for `session`.
    pub base_url: Option<String>,
    /// The deployment, for `session`.
    pub deployment_id: Option<u64>,
    /// The data query API base.
    pub data_url: Option<String>,
    /// Who asks: an external user.
    pub external_id: Option<String>,
    /// Who asks: an existing internal user.
    pub internal_id: Option<String>,
    /// The user's email.
    pub email: Option<String>,
    /// A command whose output is the API key (e.g. `pass show analyst/prod`).
    pub api_key_command: Option<String>,
    /// A file holding the API key (`~/` expanded).
    pub api_key_file: Option<String>,
    /// A command whose output is a data query API token.
    pub data_token_command: Option<String>,
    /// A command whose output is a Cube token for the chat.
    pub cube_token_command: Option<String>,
    /// `false`: record no turn in the history.
    pub history: Option<bool>,
    /// The history database (`~/` expanded).
    pub history_db: Option<String>,
    /// Prune turns older than this from the history (`90d`).
    pub history_keep: Option<String>,
    /// Where spans go (OTLP/HTTP), unless `OTEL_EXPORTER_OTLP_*` says.
    pub otlp_endpoint: Option<String>,
}

impl Profile {
    /// How messages name one of its keys: `KEY of profile NAME (FILE)`.
    pub fn origin(&self, key: &str) -> String {
        format!("{key} of profile {} ({})", self.name, self.file.display())
    }

    /// The value of its text key `name` (`chat_url`, `api_key_command`, …),
    /// when it sets one.
    pub fn key(&self, name: &str) -> Option<&String> {
        match name {
            "chat_url" => self.chat_url.as_ref(),
            "base_url" => self.base_url.as_ref(),
            "data_url" => self.data_url.as_ref(),
            "external_id" => self.external_id.as_ref(),
            "internal_id" => self.internal_id.as_ref(),
            "email" => self.email.as_ref(),
            "api_key_command" => self.api_key_command.as_ref(),
            "api_key_file" => self.api_key_file.as_ref(),
            "cube_token_command" => self.cube_token_command.as_ref(),
            "data_token_command" => self.data_token_command.as_ref(),
            _ => None,
        }
    }

    /// The commands it would run for secrets.
    fn commands(&self) -> [&Option<String>; 3] {
        [
            &self.api_key_command,
            &self.cube_token_command,
            &self.data_token_command,
        ]
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    /// The profile used without `--profile`.
    default: Option<String>,
    #[serde(default)]
    profiles: BTreeMap<String, Profile>,
    /// What each model costs, for `history usage`.
    #[serde(default)]
    prices: BTreeMap<String, Price>,
}

/// Where the config file is, and which variable put it there:
/// `ANALYST_CONFIG`, else `analyst/config.toml` in the user's config folder
/// ([`UserFolder::Config`]); none without a home.
pub fn path() -> Option<(PathBuf, &'static str)> {
    if let Some(path) = variable(var::CONFIG) {
        return Some((PathBuf::from(path), var::CONFIG));
    }
    let (base, named_by) = UserFolder::Config.find()?;
    Some((base.join("analyst").join("config.toml"), named_by))
}

/// A per-user folder of the platform's rules (the XDG base directories,
/// and Windows' roaming and local application data).
#[derive(Clone, Copy, Debug)]
pub enum UserFolder {
    /// Settings: `$XDG_CONFIG_HOME`, on Windows `%APPDATA%`, else
    /// `~/.config`.
    Config,
    /// Data this machine keeps (the history): `$XDG_DATA_HOME`, on Windows
    /// `%LOCALAPPDATA%`, else `~/.local/share`.
    Data,
}

impl UserFolder {
    /// The folder, and the variable that named it; none without a home.
    pub fn find(self) -> Option<(PathBuf, &'static str)> {
        let (xdg, windows, under_home) = match self {
            UserFolder::Config => (var::XDG_CONFIG_HOME, var::APPDATA, ".config"),
            UserFolder::Data => (var::XDG_DATA_HOME, var::LOCALAPPDATA, ".local/share"),
        };
        if let Some(base) = variable(xdg) {
            return Some((PathBuf::from(base), xdg));
        }
        if let Some(base) = variable(windows).filter(|_| cfg!(windows)) {
            return Some((PathBuf::from(base), windows));
        }
        let (home, named_by) = home()?;
        Some((home.join(under_home), named_by))
    }

    /// How `config list` and `doctor` name the default place of `file`.
    pub fn default_place(self, file: &str) -> String {
        let (xdg, windows) = match self {
            UserFolder::Config => (var::XDG_CONFIG_HOME, var::APPDATA),
            UserFolder::Data => (var::XDG_DATA_HOME, var::LOCALAPPDATA),
        };
        match cfg!(windows) {
            true => format!("%{windows}%\\analyst\\{file}"),
            false => format!("${xdg}/analyst/{file}"),
        }
    }
}

/// The home folder and the variable that named it: `HOME`, and on Windows
/// `USERPROFILE` when `HOME` is not set.
fn home() -> Option<(PathBuf, &'static str)> {
    if let Some(home) = variable(var::HOME) {
        return Some((PathBuf::from(home), var::HOME));
    }
    let profile = variable(var::USERPROFILE).filter(|_| cfg!(windows))?;
    Some((PathBuf::from(profile), var::USERPROFILE))
}

/// The config file, read once.
#[derive(Debug)]
pub struct Config {
    path: PathBuf,
    named_by: &'static str,
    /// Its contents; `None` when there is no such file.
    file: Option<ConfigFile>,
}

impl Config {
    /// Finds the config file and reads it: `None` without a home; a file
    /// that does not exist is an empty config, one that cannot be read or
    /// parsed a usage error (`FILE:LINE: …`). It is read within `limit`
    /// (the command's `--timeout`) and the first signal, as any input is:
    /// it may be a FIFO.
    pub fn load(limit: Option<Duration>) -> Result<Option<Config>> {
        let Some((path, named_by)) = path() else {
            return Ok(None);
        };
        if std::fs::metadata(&path).is_err_and(|err| err.kind() == std::io::ErrorKind::NotFound) {
            return Ok(Some(Config {
                path,
                named_by,
                file: None,
            }));
        }
        let what = format!("the config file {}", path.display());
        let text = read_text(Input::File(path.clone()), limit, &what)?;
        let file: ConfigFile =
            toml::from_str(&text).map_err(|err| usage(toml_error(&path.display().to_string(), &text, &err)))?;
        Ok(Some(Config {
            path,
            named_by,
            file: Some(file),
        }))
    }

    /// Its price table, by model.
    pub fn prices(&self) -> Prices {
        Prices(
            self.file
                .iter()
                .flat_map(|file| file.prices.iter().map(|(model, price)| (model.clone(), *price)))
                .collect(),
        )
    }

    /// The names of its profiles.
    pub fn profile_names(&self) -> Vec<String> {
        self.file
            .iter()
            .flat_map(|file| file.profiles.keys().cloned())
            .collect()
    }

    /// The profile to use: `selected` (`--profile` / `ANALYST_PROFILE`,
    /// which `chosen_by` names), else the file's `default`, else one named
    /// `default`; none when nothing names one. A profile asked for of a
    /// file that is not there (or named by `ANALYST_CONFIG`) is an error,
    /// and so is one whose file others can write when it runs a command.
    pub fn profile(&self, selected: Option<&str>, chosen_by: &str) -> Result<Option<Profile>> {
        let Some(file) = &self.file else {
            if selected.is_some() || self.named_by == var::CONFIG {
                return Err(usage(format!(
                    "cannot read the config file {}: it does not exist",
                    self.path.display()
                )));
            }
            return Ok(None);
        };
        let name = selected
            .map(str::to_string)
            .or(file.default.clone())
            .or_else(|| file.profiles.contains_key("default").then(|| "default".to_string()));
        let Some(name) = name else { return Ok(None) };
        let mut profile = file.profiles.get(&name).cloned().ok_or_else(|| {
            let known: Vec<&str> = file.profiles.keys().map(String::as_str).collect();
            usage(format!(
                "no profile {name:?} in {} (it has: {})",
                self.path.display(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ))
        })?;
        profile.chosen_by = match (selected, &file.default) {
            (Some(_), _) => chosen_by.to_string(),
            (None, Some(_)) => format!("default in {}", self.path.display()),
            (None, None) => "the profile named default".into(),
        };
        profile.name = name;
        profile.file = self.path.clone();
        if profile.commands().iter().any(|command| command.is_some()) {
            refuse_if_others_can_write(&self.path, &profile.name)?;
        }
        Ok(Some(profile))
    }

    /// The config file's row of `doctor` and `config list`: its path,
    /// whether it exists, and the profile chosen and how.
    pub fn finding(config: Option<&Config>, profile: Option<&Profile>) -> Finding {
        let Some(config) = config else {
            return Finding::new("config file", FindingState::Unset, "none (HOME is not set)", "");
        };
        let path = config.path.display();
        match (profile, &config.file) {
            (Some(profile), _) => Finding::new(
                "config file",
                FindingState::Ok,
                format!("{path}, profile {} (chosen by {})", profile.name, profile.chosen_by),
                config.named_by,
            ),
            (None, Some(_)) => Finding::new(
                "config file",
                FindingState::Ok,
                format!("{path} (no profile chosen)"),
                config.named_by,
            ),
            (None, None) => Finding::new(
                "config file",
                FindingState::Unset,
                format!("{path} (not there)"),
                config.named_by,
            ),
        }
    }
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
        crate::text::shell_quote(&path.display().to_string())
    )))
}

#[cfg(not(unix))]
fn refuse_if_others_can_write(_path: &Path, _profile: &str) -> Result<()> {
    Ok(())
}

/// `~/` at the start of a profile's path, expanded.
pub fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), home()) {
        (Some(rest), Some((home, _))) => home.join(rest),
        _ => PathBuf::from(path),
    }
}
