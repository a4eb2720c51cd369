//! Who asks: the identity as given (flags, the environment, a profile or a
//! suite), typed the same way whatever gave it, and the rules of the API
//! document checked before anything is sent ([`IdentityInput::validate`]),
//! giving the `sessionSettings` object.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::usage;
use crate::input::{read_text, Input};

/// How messages name the identity's fields: the flags (or the variables
/// and profile keys the ids came from), or a suite's fields.
#[derive(Clone, Debug)]
pub struct FieldNames {
    /// `--external-id`, `ANALYST_EXTERNAL_ID`, `external_id of profile P (FILE)`, `external_id`.
    pub external_id: String,
    /// `--internal-id`, `ANALYST_INTERNAL_ID`, `internal_id of profile P (FILE)`, `internal_id`.
    pub internal_id: String,
    /// `--email` or `email`.
    pub email: &'static str,
    /// `--attr` or `attributes`.
    pub attributes: &'static str,
    /// `--group` or `groups`.
    pub groups: &'static str,
    /// `--security-context` or `security_context`.
    pub security_context: &'static str,
}

impl Default for FieldNames {
    fn default() -> Self {
        FieldNames {
            external_id: "--external-id".into(),
            internal_id: "--internal-id".into(),
            email: "--email",
            attributes: "--attr",
            groups: "--group",
            security_context: "--security-context",
        }
    }
}

impl FieldNames {
    /// The names of a suite's fields, the ids keeping where they came from.
    pub fn in_suite(&self) -> FieldNames {
        FieldNames {
            email: "email",
            attributes: "attributes",
            groups: "groups",
            security_context: "security_context",
            ..self.clone()
        }
    }
}

/// Who asks, as the history records it and keys `--thread` names: the
/// user the service takes. With only a Cube token (`cube_token`), the
/// token's user (its payload's `externalId`, else `sub`: the token is not
/// checked here, the service does that); otherwise the `sessionSettings`'
/// (`identity`): `external:ID`, `internal:NAME`, or `unknown`.
pub fn asker(identity: Option<&SessionSettings>, cube_token: Option<&str>) -> String {
    match cube_token.and_then(token_user) {
        Some(user) => named(Some(&user), None),
        None => named(
            identity.and_then(|identity| identity.external_id.as_deref()),
            identity.and_then(|identity| identity.internal_id.as_deref()),
        ),
    }
}

/// `external:ID`, `internal:NAME`, or `unknown`.
fn named(external_id: Option<&str>, internal_id: Option<&str>) -> String {
    match (external_id, internal_id) {
        (Some(id), _) => format!("external:{id}"),
        (None, Some(name)) => format!("internal:{name}"),
        (None, None) => "unknown".to_string(),
    }
}

/// The user a Cube token names: its payload's `externalId`, else `sub`.
fn token_user(token: &str) -> Option<String> {
    use base64::Engine;
    let payload = token.split('.').nth(1)?;
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Value = serde_json::from_slice(&payload).ok()?;
    ["externalId", "sub"]
        .iter()
        .find_map(|claim| claims.get(*claim)?.as_str().filter(|user| !user.is_empty()))
        .map(str::to_string)
}

/// Who the request is made for, as given, before the rules of the API
/// document are checked.
#[derive(Clone, Debug, Default)]
pub struct IdentityInput {
    /// An external user's id.
    pub external_id: Option<String>,
    /// An internal user's username.
    pub internal_id: Option<String>,
    /// The user's email.
    pub email: Option<String>,
    /// `userAttributes`, as name and value, in order.
    pub attributes: Vec<(String, String)>,
    /// `groups`, in order.
    pub groups: Vec<String>,
    /// `securityContext`.
    pub security_context: Option<Map<String, Value>>,
    /// `--persistent`.
    pub persistent: bool,
    /// `--ttl`.
    pub ttl: Option<Duration>,
    /// `--timezone` / `ANALYST_TIMEZONE`.
    pub timezone: Option<String>,
    /// `--no-authoring`.
    pub no_authoring: bool,
    /// How errors name each field.
    pub names: FieldNames,
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
    /// Username of an existing internal user.
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

impl SessionSettings {
    /// Who asks, in a few words: `external user ci-bot`.
    pub fn summary(&self) -> String {
        who_asks(self.external_id.as_deref(), self.internal_id.as_deref()).unwrap_or_else(|| "nobody".to_string())
    }
}

/// Who asks, in a few words, by the id given: `external user ci-bot`,
/// `internal user ana`; `None` without one.
fn who_asks(external_id: Option<&str>, internal_id: Option<&str>) -> Option<String> {
    match (external_id, internal_id) {
        (Some(id), _) => Some(format!("external user {id}")),
        (None, Some(name)) => Some(format!("internal user {name}")),
        (None, None) => None,
    }
}

impl IdentityInput {
    /// Who asks, in a few words (`external user ci-bot`); `None` when no
    /// id is given.
    pub fn summary(&self) -> Option<String> {
        who_asks(self.external_id.as_deref(), self.internal_id.as_deref())
    }

    /// True when neither kind of id is given (a Cube token may name the user).
    pub fn is_anonymous(&self) -> bool {
        self.external_id.is_none() && self.internal_id.is_none()
    }

    /// Applies the rules of the API document and `cli.md`; every violation is
    /// a usage error that names the rule, raised before anything is sent.
    pub fn validate(&self) -> Result<SessionSettings> {
        let names = &self.names;
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
            check_external_id(id, &names.external_id)?;
        }
        if let Some(username) = internal_id {
            check_username(username, &names.internal_id)?;
            let refused: Vec<&str> = [
                (!self.attributes.is_empty(), names.attributes),
                (!self.groups.is_empty(), names.groups),
                (self.security_context.is_some(), names.security_context),
            ]
            .into_iter()
            .filter_map(|(given, name)| given.then_some(name))
            .collect();
            if !refused.is_empty() {
                return Err(usage(format!(
                    "{} cannot be used with {}: an internal user keeps their own permissions (userAttributes, groups and securityContext are for external users only)",
                    refused.join(", "),
                    names.internal_id
                )));
            }
        }
        if let Some(email) = &self.email {
            check_email(email, names.email)?;
        }
        if self.groups.iter().any(|group| group.trim().is_empty()) {
            return Err(usage(format!("{} needs a non-empty group name", names.groups)));
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
            user_attributes: self
                .attributes
                .iter()
                .map(|(name, value)| UserAttribute {
                    name: name.clone(),
                    value: Value::String(value.clone()),
                })
                .collect(),
            groups: self.groups.clone(),
            security_context: self.security_context.clone(),
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

/// `--attr NAME=VALUE` as its name and value.
pub fn parse_attribute(text: &str) -> Result<(String, String)> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => Ok((name.trim().to_string(), value.to_string())),
        _ => Err(usage(format!("--attr {text:?} must be NAME=VALUE"))),
    }
}

/// `--security-context`, parsed when given (a file read waits at most
/// `limit`, the command's `--timeout`).
pub fn security_context(text: Option<&str>, limit: Option<Duration>) -> Result<Option<Map<String, Value>>> {
    text.map(|text| parse_security_context(text, limit)).transpose()
}

/// Parses `--security-context`: inline JSON, or `@FILE` to read it from a
/// file (waiting at most `limit`, the command's `--timeout`). It must be a
/// JSON object.
pub fn parse_security_context(text: &str, limit: Option<Duration>) -> Result<Map<String, Value>> {
    let (json, origin) = match text.strip_prefix('@') {
        Some(path) => (
            read_text(
                Input::File(Path::new(path).to_path_buf()),
                limit,
                &format!("the --security-context file {path}"),
            )?,
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

fn check_email(email: &str, from: &str) -> Result<()> {
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
        Err(usage(format!("{from} {email:?} is not an email address")))
    }
}
