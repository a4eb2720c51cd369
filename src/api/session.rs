//! The generate-session call (API document 4.3): the API key exchanged for a
//! temporary embed `sessionId` for one user.

use std::io::Read;

use anyhow::Result;
use reqwest::Url;
use serde_json::Value;

use crate::error::{fail, usage, Kind};
use crate::net::http::{Credential, Http, Retry};
use crate::output::shorten;
use crate::settings::{Secret, SessionSettings};

/// The largest answer read: a sessionId is a few dozen bytes.
const ANSWER_LIMIT: u64 = 1 << 20;

/// Asks the account at `base` for a session of `identity`; returns its id.
pub fn generate(http: &Http, base: &Url, key: &Secret, identity: &SessionSettings, retry: Retry) -> Result<String> {
    let url = session_url(base)?;
    let response = http.post_json_retrying(&url, Credential::ApiKey(key), identity, "application/json", retry)?;
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

/// The generate-session URL of an account host.
fn session_url(base: &Url) -> Result<Url> {
    let mut base = base.clone();
    if !base.path().ends_with('/') {
        base.set_path(&format!("{}/", base.path()));
    }
    base.join("api/v1/embed/generate-session")
        .map_err(|err| usage(format!("cannot build the generate-session URL from {base}: {err}")))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
