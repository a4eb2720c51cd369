//! Validators of what the command line, the environment, a profile or a
//! suite give: the environment's one rule (an empty variable is unset),
//! URLs (the plain-http rule), durations, shards, regular expressions,
//! output files, message ids and the embed fields. Each failure is a usage
//! error that names where the value came from; `doctor` and `config list`
//! show each check as a [`Finding`].

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use reqwest::Url;
use serde_json::{Map, Value};

use crate::cli::{var, ENVIRONMENT};
use crate::error::{kind_of, usage, Kind};
use crate::input::Input;
use crate::themes;

use crate::domain::UrlError;
pub use crate::domain::{is_message_id, new_message_id, without_credentials};
pub use crate::expect::regex;
pub use crate::input::{read_stdin, read_text};
pub use crate::text::parse_duration;

/// Standard input is read for one thing only: the question (`-`), a
/// secret (`--api-key-file -`, `--cube-token-file -`) or one image
/// (`--image -`). Anything more is a usage error naming what collides.
pub fn stdin_read_once(question: bool, secret: bool, images: usize) -> Result<()> {
    if images > 1 {
        return Err(usage("--image - is given twice: standard input holds one image"));
    }
    let readers: Vec<&str> = [
        (question, "the question ('-')"),
        (secret, "the API key or Cube token ('-')"),
        (images == 1, "an image (--image -)"),
    ]
    .into_iter()
    .filter_map(|(reads, what)| reads.then_some(what))
    .collect();
    match readers.as_slice() {
        [first, others @ ..] if !others.is_empty() => Err(usage(format!(
            "standard input cannot hold both {first} and {}",
            others.join(" and ")
        ))),
        _ => Ok(()),
    }
}

/// Makes the rule of the environment true before anything reads it: a
/// variable `analyst` reads that is set to the empty string counts as
/// unset (for clap's `env =` as for the settings).
pub fn forget_empty_variables() {
    let ours = ENVIRONMENT
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| name.starts_with("ANALYST_") || *name == var::NO_COLOR);
    for name in ours {
        if std::env::var_os(name).is_some_and(|value| value.is_empty()) {
            std::env::remove_var(name);
        }
    }
}

/// The value of the environment variable `name`, when it is set to
/// something.
pub fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// How a check of `doctor` (or a setting of `config list`) came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingState {
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
    pub state: FindingState,
    /// What was found, or what is wrong.
    pub found: String,
    /// Where it came from: a flag, a variable, a profile key and its file.
    pub from: String,
}

impl Finding {
    /// A finding of `what`; what was found is shown with every secret the
    /// registry knows redacted (a password in a URL among them).
    pub fn new(what: &str, state: FindingState, found: impl Into<String>, from: impl Into<String>) -> Finding {
        Finding {
            what: what.to_string(),
            state,
            found: crate::redact::redact(&found.into()).into_owned(),
            from: from.into(),
        }
    }

    /// A check that came out as `result` says: its value, or its error.
    pub fn of<T>(what: &str, result: &Result<T>, shown: impl FnOnce(&T) -> String, from: &str) -> Finding {
        match result {
            Ok(value) => Finding::new(what, FindingState::Ok, shown(value), from),
            Err(err) => Finding::new(what, FindingState::Failed(kind_of(err)), format!("{err:#}"), from),
        }
    }
}

/// The path every Chat API URL ends in.
const CHAT_PATH: &str = "/chat/stream-chat-state";

/// The duration `flag` (or the variable it came from, `from`) gives.
pub fn duration(text: &str, from: &str) -> Result<Duration> {
    parse_duration(text).map_err(|err| usage(format!("{from}: {err}")))
}

/// The service URL `text`, checked (see [`crate::domain::service_url`]),
/// a failure worded for the flag (or the variable or profile key it came
/// from) `flag` names.
pub fn service_url(text: &str, flag: &str) -> Result<Url> {
    crate::domain::service_url(text).map_err(|err| {
        usage(match err {
            UrlError::NoScheme { shown } => {
                format!("{flag} {shown:?} has no scheme: add https:// (https://{})", shown.trim())
            }
            UrlError::Invalid { shown, why } => format!("{flag} {shown:?} is not a valid URL: {why}"),
            UrlError::PlainHttp { host } => format!(
                "refusing to send the API key over plain http:// to {host}: use https:// ({flag}); plain http is allowed only for localhost and loopback addresses"
            ),
            UrlError::Scheme { scheme } => format!("{flag} must be an https:// URL, not {scheme}://"),
            UrlError::Credentials => format!(
                "{flag} must not carry credentials (user:password@); the API key comes from ANALYST_API_KEY"
            ),
        })
    })
}

/// The chat URL `text` (from `from`: the flag, the variable or the
/// profile), checked: a service URL whose path ends in [`CHAT_PATH`] (a
/// trailing slash is dropped).
pub fn chat_url(text: Option<String>, from: &str) -> Result<Url> {
    let text = text.ok_or_else(|| {
        usage("no chat URL: set ANALYST_CHAT_URL or pass --chat-url (the Chat API URL from the agent settings)")
    })?;
    let mut url = service_url(&text, from)?;
    // A trailing slash, as a copy from a browser may have, is not part of it.
    let path = url.path().trim_end_matches('/').to_string();
    if !path.ends_with(CHAT_PATH) {
        return Err(usage(format!(
            "{from} {:?} is not a Chat API URL: a Chat API URL ends in {CHAT_PATH}; copy it from the agent settings (…/agents/ID{CHAT_PATH} or …/deployments/ID{CHAT_PATH})",
            without_credentials(&text)
        )));
    }
    url.set_path(&path);
    Ok(url)
}

/// An output file given by `flag` can be created: its folder exists. (The
/// file itself is created only when there is something to write.)
pub fn check_output_file(flag: &str, path: &Path) -> Result<()> {
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
/// holding a JSON object, waited for no longer than `limit` (the
/// command's `--timeout`) or the first signal.
pub fn vega_config(text: &str, limit: Option<Duration>) -> Result<Map<String, Value>> {
    if let Some(config) = themes::theme(text) {
        return Ok(config);
    }
    let themes = format!("(or name a theme: {})", themes::names().join(", "));
    let refuse = |why: String| usage(format!("--vega-config {text}: {why} {themes}"));
    // A file that cannot be read may be a theme's name mistyped; a stop
    // (a signal, --timeout) says only what it is.
    let file =
        read_text(Input::File(text.into()), limit, &format!("--vega-config {text}")).map_err(|err| {
            match kind_of(&err) {
                Kind::Usage => usage(format!("{err} {themes}")),
                _ => err,
            }
        })?;
    match serde_json::from_str::<Value>(&file) {
        Ok(Value::Object(config)) => Ok(config),
        Ok(_) => Err(refuse("not a JSON object".into())),
        Err(err) => Err(refuse(format!("not JSON: {err}"))),
    }
}

/// `--picture`: an absolute http(s) URL.
pub fn check_picture(text: &str) -> Result<()> {
    match Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => Ok(()),
        _ => Err(usage(format!("--picture {text:?} must be an absolute http(s) URL"))),
    }
}

/// `--embed-tenant`: lowercase, 5–36 characters of `a-z0-9-`, starting
/// with a letter.
pub fn check_embed_tenant(name: &str) -> Result<()> {
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

/// `--setting KEY=VALUE`: `true`, `false` and numbers become JSON values,
/// anything else a string.
pub fn parse_setting(text: &str) -> Result<(String, Value)> {
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

/// `text` with its `%XX` escapes decoded (a `+` stays a `+`), as header
/// values and URL credentials are written.
pub fn percent_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_accept_units_sequences_and_bare_seconds() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(604800)));
        assert_eq!(parse_duration("12"), Ok(Duration::from_secs(12)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        for bad in ["", "s", "5x", "-1s", "1h3", "abc"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be refused");
        }
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
