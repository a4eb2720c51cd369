//! Embed sessions: generate-session (the API key exchanged for a temporary
//! embed `sessionId` for one user, in the form the service takes now) and
//! revoke.

use std::io::Read;

use anyhow::{Context, Result};
use reqwest::Url;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::error::{fail, kind_of, usage, Kind};
use crate::identity::SessionSettings;
use crate::net::http::{Credential, Http, Peer, Request, Retry};
use crate::redact::Secret;
use crate::text::shorten;

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

/// The largest answer read: a sessionId is a few dozen bytes.
const ANSWER_LIMIT: u64 = 1 << 20;

/// The generate-session body: who, then the embedding's fields.
#[derive(Serialize)]
struct SessionRequest<'a> {
    #[serde(flatten)]
    identity: &'a SessionSettings,
    #[serde(flatten)]
    embedding: &'a Embedding,
}

/// Asks the account at `base` for a session of `identity`; returns its id.
/// A refusal says what to check: a missing `--deployment-id` for a 400,
/// the key or the deployment for a 403.
pub fn generate(
    http: &Http,
    base: &Url,
    key: &Secret,
    identity: &SessionSettings,
    embedding: &Embedding,
    retry: Retry,
) -> Result<String> {
    let url = session_url(base, "api/v1/embed/generate-session")?;
    let body = SessionRequest { identity, embedding };
    let request = Request::json(
        url,
        Peer::Account,
        Credential::ApiKey(key.clone()),
        &body,
        "application/json",
        retry,
    )?;
    let response = http
        .send(&request)
        .map_err(|err| match kind_of(&err) {
            Kind::Usage if embedding.deployment_id.is_none() => {
                err.context("the service now requires a deployment: pass --deployment-id N (or set ANALYST_DEPLOYMENT_ID)")
            }
            Kind::Forbidden => err.context(
                "this key may not mint sessions for that deployment: a personal (non-admin) API key, or a deployment outside the key's scope",
            ),
            _ => err,
        })?;
    let mut text = String::new();
    response
        .take(ANSWER_LIMIT)
        .read_to_string(&mut text)
        .map_err(|err| fail(Kind::Service, format!("reading the generate-session answer: {err}")))?;
    serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|answer| answer.get("sessionId")?.as_str().map(str::to_string))
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            fail(
                Kind::Service,
                format!("the service answered without a sessionId: {}", shorten(&text)),
            )
        })
}

/// Ends the session `session_id` (idempotent: 204 for an unknown or
/// expired one too).
pub fn revoke(http: &Http, base: &Url, key: &Secret, session_id: &str, retry: Retry) -> Result<()> {
    let url = session_url(base, "api/v1/embed/session/revoke")?;
    let body = json!({ "sessionId": session_id });
    let request = Request::json(
        url,
        Peer::Account,
        Credential::ApiKey(key.clone()),
        &body,
        "application/json",
        retry,
    )?;
    http.send(&request)
        .map(drop)
        .map_err(|err| match kind_of(&err) {
            Kind::Forbidden => err.context("embedding is not enabled for this account"),
            _ => err,
        })
        .with_context(|| format!("revoking session {session_id}"))
}

/// An embed endpoint's URL (`path`) under an account host.
fn session_url(base: &Url, path: &str) -> Result<Url> {
    let mut base = base.clone();
    if !base.path().ends_with('/') {
        base.set_path(&format!("{}/", base.path()));
    }
    base.join(path)
        .map_err(|err| usage(format!("cannot build the {path} URL from {base}: {err}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_url_is_under_the_account_host() {
        let url = |base: &str| {
            session_url(&Url::parse(base).unwrap(), "api/v1/embed/generate-session")
                .unwrap()
                .to_string()
        };
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
}
