//! Where requests go: a service URL checked (`https://`, or `http://` to
//! this machine; no credentials) with a typed error the settings word, a
//! URL shown without its credentials, and the agent a chat URL names.

use std::net::IpAddr;

use url::Url;

/// True for a URL whose host is this machine: `localhost` or a loopback
/// address.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

/// Why text is no URL a request may go to (see [`service_url`]); the
/// settings word it, naming the flag, variable or profile key it came
/// from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UrlError {
    /// No scheme (`example.com/…`); `shown` is the text without credentials.
    NoScheme {
        /// The text, without credentials.
        shown: String,
    },
    /// Not a URL at all.
    Invalid {
        /// The text, without credentials.
        shown: String,
        /// Why, as the URL parser says it.
        why: String,
    },
    /// Plain `http://` to a host that is not this machine.
    PlainHttp {
        /// The host.
        host: String,
    },
    /// A scheme other than `https` (or `http` to loopback).
    Scheme {
        /// The scheme.
        scheme: String,
    },
    /// It carries credentials (`user:password@`).
    Credentials,
}

/// Parses and checks a service URL: it must be absolute `https://`, or
/// `http://` to a loopback host (the key must not cross a network in clear
/// text), and carry no credentials.
pub fn service_url(text: &str) -> Result<Url, UrlError> {
    let url = Url::parse(text.trim()).map_err(|err| {
        let shown = without_credentials(text);
        match err {
            // `example.com/…`: the scheme is what is missing.
            url::ParseError::RelativeUrlWithoutBase => UrlError::NoScheme { shown },
            err => UrlError::Invalid {
                shown,
                why: err.to_string(),
            },
        }
    })?;
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(&url) => {}
        "http" => {
            return Err(UrlError::PlainHttp {
                host: url.host_str().unwrap_or("?").to_string(),
            })
        }
        other => {
            return Err(UrlError::Scheme {
                scheme: other.to_string(),
            })
        }
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(UrlError::Credentials);
    }
    Ok(url)
}

/// A URL as text without the `user:password@` of its authority, to show it
/// in a message (the text may not even parse).
pub fn without_credentials(text: &str) -> String {
    let Some(scheme_end) = text.find("://").map(|at| at + 3) else {
        return text.to_string();
    };
    let authority_end = text[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(text.len(), |at| scheme_end + at);
    match text[scheme_end..authority_end].rfind('@') {
        Some(at) => format!("{}***@{}", &text[..scheme_end], &text[scheme_end + at + 1..]),
        None => text.to_string(),
    }
}

/// The agent a Chat API URL names (`…/public/ACCOUNT/agents/ID/chat/…`):
/// what tells agents apart, in `history usage --by agent` and in a span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agent {
    /// The account name before `/agents/`, when the URL has one.
    pub account: Option<String>,
    /// The agent's id.
    pub id: String,
}

impl Agent {
    /// The agent of `chat_url`; `None` for a URL with no `/agents/ID`.
    pub fn of(chat_url: &str) -> Option<Agent> {
        let url = url::Url::parse(chat_url).ok()?;
        let segments: Vec<&str> = url.path_segments()?.collect();
        let at = segments.iter().position(|segment| *segment == "agents")?;
        let id = segments.get(at + 1).filter(|id| !id.is_empty())?.to_string();
        let account = at
            .checked_sub(1)
            .and_then(|before| segments.get(before))
            .map(|name| name.to_string());
        Some(Agent { account, id })
    }

    /// `ACCOUNT/agents/ID` (or the id alone, with no account).
    pub fn name(&self) -> String {
        match &self.account {
            Some(account) => format!("{account}/agents/{}", self.id),
            None => self.id.clone(),
        }
    }
}
