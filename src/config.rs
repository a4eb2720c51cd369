//! Configuration that must be right before anything is sent: endpoints (the
//! plain-http rule), the API key (never on argv, never printed), the identity
//! (`sessionSettings` and its rules), and duration parsing.

use std::fmt;
use std::io::Read;
use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use reqwest::Url;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::cli::{ChatEndpointArgs, GlobalArgs, KeyArgs};
use crate::exit::usage;
use crate::output::Notes;
use crate::profile::{expand_home, run_secret_command, Profile};

/// The API key. Its `Debug` and `Display` print `***`, so it cannot leak
/// through a log line, an error message or a panic.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value read from the environment or a file.
    pub fn new(value: String) -> Self {
        Secret(value)
    }

    /// The secret itself, for the one place that puts it in a header.
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

/// Reads the API key: from `--api-key-file`/`ANALYST_API_KEY_FILE` when
/// given (`-` = stdin), else `ANALYST_API_KEY`, else the profile's
/// `api_key_command` or `api_key_file`. A missing or empty key is a usage
/// error that names `ANALYST_API_KEY`. A key file other users can read draws
/// a warning.
pub fn load_api_key(
    key_file: Option<&str>,
    env_key: Option<String>,
    profile: Option<&Profile>,
    notes: &Notes,
) -> Result<Secret> {
    let from_profile = profile.filter(|_| key_file.is_none() && env_key.is_none());
    let (raw, origin) = match (key_file, env_key, from_profile) {
        (Some("-"), _, _) => (read_stdin("the API key")?, "standard input".to_string()),
        (Some(path), _, _) => (read_key_file(path, notes)?, format!("the API key file {path}")),
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
                (read_key_file(&path, notes)?, format!("the API key file {path}"))
            }
            (None, None) => return Err(no_key()),
        },
        (None, None, None) => return Err(no_key()),
    };
    let key = raw.trim();
    if key.is_empty() {
        return Err(usage(format!("the API key is empty: check {origin}")));
    }
    if key.chars().any(|c| c.is_control()) {
        return Err(usage(
            "the API key contains control characters or several lines; it must be one line",
        ));
    }
    Ok(Secret::new(key.to_string()))
}

fn no_key() -> anyhow::Error {
    usage("no API key: set ANALYST_API_KEY (or pass --api-key-file PATH, or use a profile with api_key_command; the key is never taken from the command line)")
}

/// Reads a key file, warning when users other than its owner may read it.
fn read_key_file(path: &str, notes: &Notes) -> Result<String> {
    let text =
        std::fs::read_to_string(path).map_err(|err| usage(format!("cannot read the API key file {path}: {err}")))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path) {
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                notes.warn(&format!(
                    "the API key file {path} can be read by other users (mode {mode:03o}): chmod 600 {path}"
                ));
            }
        }
    }
    Ok(text)
}

/// The API key as the command line, environment and profile give it (see
/// [`load_api_key`]).
pub fn api_key(key: &KeyArgs, global: &GlobalArgs, notes: &Notes) -> Result<Secret> {
    load_api_key(
        key.api_key_file.as_deref(),
        std::env::var("ANALYST_API_KEY").ok(),
        global.loaded_profile.as_ref(),
        notes,
    )
}

/// The validated Chat API URL of `--chat-url` / `ANALYST_CHAT_URL` (or the
/// profile's); a usage error saying where to find it when there is none.
pub fn chat_url(endpoint: &ChatEndpointArgs) -> Result<Url> {
    let text = endpoint.chat_url.as_deref().ok_or_else(|| {
        usage("no chat URL: set ANALYST_CHAT_URL or pass --chat-url (the Chat API URL from the agent settings)")
    })?;
    service_url(text, "--chat-url")
}

/// Parses and checks a service URL given by `flag`: it must be absolute
/// `https://`, or `http://` to a loopback host (the key must not cross a
/// network in clear text).
pub fn service_url(text: &str, flag: &str) -> Result<Url> {
    let url = Url::parse(text.trim()).map_err(|err| usage(format!("{flag} {text:?} is not a valid URL: {err}")))?;
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

/// The abort URL of a chat URL: its last segment `stream-chat-state`
/// replaced by `abort` (API document 4.2).
pub fn abort_url(chat_url: &Url) -> Result<Url> {
    let mut url = chat_url.clone();
    let refuse = || {
        usage(format!(
            "cannot derive the abort URL from {chat_url}: a chat URL ends in /chat/stream-chat-state"
        ))
    };
    if url.path_segments().and_then(|mut segments| segments.next_back()) == Some("") {
        url.path_segments_mut().map_err(|_| refuse())?.pop();
    }
    if url.path_segments().and_then(|mut segments| segments.next_back()) != Some("stream-chat-state") {
        return Err(refuse());
    }
    url.path_segments_mut().map_err(|_| refuse())?.pop().push("abort");
    url.set_query(None);
    Ok(url)
}

/// The generate-session URL of an account host (API document 4.3).
pub fn session_url(base: &Url) -> Result<Url> {
    let mut base = base.clone();
    if !base.path().ends_with('/') {
        base.set_path(&format!("{}/", base.path()));
    }
    base.join("api/v1/embed/generate-session")
        .map_err(|err| usage(format!("cannot build the generate-session URL from {base}: {err}")))
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

/// Parses a duration such as `90s`, `5m`, `1h30m`, `250ms` or `2d`; a bare
/// number is seconds. Used as a clap value parser.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let err = || format!("invalid duration {text:?}: use forms like 90s, 5m, 1h30m, 250ms (a bare number is seconds)");
    if text.is_empty() {
        return Err(err());
    }
    if let Ok(seconds) = text.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).map_err(|_| err());
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(err)?;
        let (number, tail) = rest.split_at(digits);
        let unit_len = tail.find(|c: char| c.is_ascii_digit()).unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let value: f64 = number.parse().map_err(|_| err())?;
        let seconds = match unit {
            "ms" => value / 1000.0,
            "s" | "sec" | "secs" => value,
            "m" | "min" | "mins" => value * 60.0,
            "h" | "hr" | "hrs" => value * 3600.0,
            "d" | "day" | "days" => value * 86400.0,
            _ => return Err(err()),
        };
        total += Duration::try_from_secs_f64(seconds).map_err(|_| err())?;
        rest = tail;
    }
    Ok(total)
}

/// Who the request is made for, as given on the command line or environment,
/// before the rules of the API document are checked.
#[derive(Clone, Debug, Default)]
pub struct IdentityInput {
    /// `--external-id` / `ANALYST_EXTERNAL_ID`.
    pub external_id: Option<String>,
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
}

/// One `userAttributes` entry.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UserAttribute {
    /// Attribute name, as configured in the administration panel.
    pub name: String,
    /// Its value for this user.
    pub value: String,
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
}

impl IdentityInput {
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
            check_external_id(id)?;
        }
        if let Some(email) = internal_id {
            check_email(email, "--internal-id")?;
            let mut refused = Vec::new();
            if !self.attrs.is_empty() {
                refused.push("--attr");
            }
            if !self.groups.is_empty() {
                refused.push("--group");
            }
            if self.security_context.is_some() {
                refused.push("--security-context");
            }
            if !refused.is_empty() {
                return Err(usage(format!(
                    "{} cannot be used with --internal-id: an internal user keeps their own permissions (userAttributes, groups and securityContext are for external users only)",
                    refused.join(", ")
                )));
            }
        }
        if let Some(email) = &self.email {
            check_email(email, "--email")?;
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
        })
    }
}

fn check_external_id(id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(usage("--external-id is empty"));
    }
    if id.chars().any(char::is_whitespace) {
        return Err(usage(format!(
            "--external-id {id:?} contains spaces: an external id is lowercase with no spaces"
        )));
    }
    if id.chars().any(char::is_uppercase) {
        return Err(usage(format!(
            "--external-id {id:?} has uppercase letters: an external id is lowercase with no spaces (try {:?})",
            id.to_lowercase()
        )));
    }
    Ok(())
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
            value: value.to_string(),
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
pub fn parse_security_context(text: &str) -> Result<Map<String, Value>> {
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
    fn secrets_never_print() {
        let key = Secret::new("sk-very-secret".into());
        assert_eq!(format!("{key} {key:?}"), "*** ***");
    }

    #[test]
    fn the_abort_url_replaces_the_last_segment() {
        let chat = Url::parse("https://ai.us.example.dev/api/v1/public/acme/agents/7/chat/stream-chat-state").unwrap();
        assert_eq!(
            abort_url(&chat).unwrap().as_str(),
            "https://ai.us.example.dev/api/v1/public/acme/agents/7/chat/abort"
        );
        let slash = Url::parse("https://h/x/chat/stream-chat-state/").unwrap();
        assert_eq!(abort_url(&slash).unwrap().as_str(), "https://h/x/chat/abort");
        assert!(abort_url(&Url::parse("https://h/x/chat").unwrap()).is_err());
    }

    #[test]
    fn the_session_url_is_under_the_account_host() {
        let url = |base: &str| session_url(&Url::parse(base).unwrap()).unwrap().to_string();
        assert_eq!(
            url("https://acme.example.dev"),
            "https://acme.example.dev/api/v1/embed/generate-session"
        );
        assert_eq!(
            url("https://acme.example.dev/"),
            "https://acme.example.dev/api/v1/embed/generate-session"
        );
        assert_eq!(
            url("http://127.0.0.1:9/proxy"),
            "http://127.0.0.1:9/proxy/api/v1/embed/generate-session"
        );
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
}
