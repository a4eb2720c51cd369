//! The one place that builds the HTTP client, sends requests, logs them with
//! `-v` (secrets redacted), retries what is safe to repeat, and turns
//! statuses and transport failures into [`Fault`]s of the right kind.

use std::io::Read;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;
use reqwest::blocking::{Client, Response};
use reqwest::header::{HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use serde::Serialize;

use crate::domain::is_loopback;
use crate::error::{root_causes, Fault, Kind};
use crate::output::Notes;
use crate::redact::redact;
use crate::redact::Secret;
use crate::signals::Stop;
use crate::text::{human, shorten};

/// How much of an error body is read to summarise it.
const ERROR_BODY_LIMIT: u64 = 64 * 1024;

/// The credential headers of a request.
#[derive(Clone, Copy, Debug)]
pub enum Credential<'a> {
    /// `Authorization: Api-Key <key>`.
    ApiKey(&'a Secret),
    /// `Authorization: <token>` (the data query API's JWT).
    Token(&'a Secret),
    /// The chat endpoints: an API key, a Cube token
    /// (`X-Cube-Auth-Token: <JWT>`), or both (the service then takes the key).
    Chat {
        /// The API key, when there is one.
        key: Option<&'a Secret>,
        /// The Cube token, when there is one.
        cube_token: Option<&'a Secret>,
    },
}

/// The header that carries a Cube token.
const CUBE_TOKEN_HEADER: &str = "x-cube-auth-token";

impl Credential<'_> {
    /// Each header: its name, its value (marked sensitive), and how `-v`
    /// shows it. `None` when a secret cannot go in a header.
    fn headers(&self) -> Option<Vec<(HeaderName, HeaderValue, &'static str)>> {
        let mut headers = Vec::new();
        let mut add = |name: HeaderName, text: String, shown: &'static str| -> Option<()> {
            let mut value = HeaderValue::from_str(&text).ok()?;
            value.set_sensitive(true);
            headers.push((name, value, shown));
            Some(())
        };
        match *self {
            Credential::ApiKey(key) => add(AUTHORIZATION, format!("Api-Key {}", key.expose()), "Api-Key ***")?,
            Credential::Token(token) => add(AUTHORIZATION, token.expose().to_string(), "***")?,
            Credential::Chat { key, cube_token } => {
                if let Some(key) = key {
                    add(AUTHORIZATION, format!("Api-Key {}", key.expose()), "Api-Key ***")?;
                }
                if let Some(token) = cube_token {
                    add(
                        HeaderName::from_static(CUBE_TOKEN_HEADER),
                        token.expose().to_string(),
                        "***",
                    )?;
                }
            }
        }
        Some(headers)
    }
}

/// How a request that is safe to repeat (abort, generate-session, a data
/// query) is retried after a transient failure: connection refused or
/// reset, 502, 503, 504, or 429 (after its `Retry-After`).
#[derive(Clone, Copy, Debug)]
pub struct Retry {
    /// Tries in all, the first included.
    pub attempts: u32,
    /// The time all tries together may take, when bounded.
    pub budget: Option<Duration>,
    /// The longest one try may take, its answer's body included; `None` for
    /// answers that stream for as long as they need (a caller bounds them).
    pub per_try: Option<Duration>,
    /// Also retry 500 and every other 5xx, for requests whose repetition is
    /// harmless even after a server error (a read-only query).
    pub any_server_error: bool,
}

impl Retry {
    /// A short call (abort, generate-session): a few tries, each of at most
    /// [`SHORT_CALL`], all within `budget` when given.
    pub fn short_call(attempts: u32, budget: Option<Duration>) -> Retry {
        Retry {
            attempts,
            budget,
            per_try: Some(SHORT_CALL),
            any_server_error: false,
        }
    }

    /// A read-only query whose answer streams: any 5xx is retried, and no
    /// try is cut by a timer (the caller watches `--timeout` and stalls).
    pub fn query(attempts: u32, budget: Option<Duration>) -> Retry {
        Retry {
            attempts,
            budget,
            per_try: None,
            any_server_error: true,
        }
    }

    /// A chat request: sent again only after failures that come before any
    /// answer (a refused connection, 429, 502, 503, 504), and never cut by
    /// a timer (the caller watches `--timeout` and stalls). Safe because
    /// the request carries the same `messageId` each time.
    pub fn chat(attempts: u32, budget: Option<Duration>) -> Retry {
        Retry {
            attempts,
            budget,
            per_try: None,
            any_server_error: false,
        }
    }
}

/// The pause before the `retry`th try again (1 for the first): doubled each
/// time from [`FIRST_BACKOFF`] up to a limit, and jittered by ±50% so that
/// clients that failed together do not come back together.
pub fn backoff(retry: u32) -> Duration {
    let doublings = retry.saturating_sub(1).min(MAX_DOUBLINGS);
    FIRST_BACKOFF
        .saturating_mul(1 << doublings)
        .mul_f64(0.5 + fastrand::f64())
}

/// The longest a single short call (abort, session) may take when no budget
/// is given.
const SHORT_CALL: Duration = Duration::from_secs(30);
/// The first pause between tries; it doubles each time.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// How many times the pause doubles at most (250 ms × 2⁵ = 8 s).
const MAX_DOUBLINGS: u32 = 5;
/// What is left of `--timeout` when it counts as expired.
const EXPIRED: Duration = Duration::from_millis(50);
/// The longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);

/// An HTTP client configured for long streams: a connect timeout, no total
/// timeout (streams of several minutes are normal), no redirects (a POST
/// must not be silently re-sent elsewhere), compressed bodies decoded.
/// Loopback hosts are reached directly, never through a proxy (a plain
/// `http://` request carries the key in clear). Cheap to clone.
#[derive(Clone)]
pub struct Http {
    /// For every other host: the proxy environment variables apply.
    client: Client,
    /// For loopback hosts: no proxy.
    direct: Client,
    notes: Notes,
    /// What stops its waits and the streams it opens.
    stop: Stop,
}

/// One try's failure, and whether trying again is worth it.
struct Failure {
    fault: Fault,
    /// The try ran out of time (its own limit, or what `--timeout` left).
    timed_out: bool,
    transient: bool,
    server_error: bool,
    retry_after: Option<Duration>,
}

impl Http {
    /// Builds the client. `connect_timeout` bounds only connection set-up.
    pub fn new(connect_timeout: Duration, notes: &Notes) -> Result<Self> {
        let builder = || {
            Client::builder()
                .connect_timeout(connect_timeout)
                .timeout(None)
                .redirect(reqwest::redirect::Policy::none())
                .user_agent(concat!("analyst/", env!("CARGO_PKG_VERSION")))
        };
        let built = |builder: reqwest::blocking::ClientBuilder| {
            builder
                .build()
                .map_err(|err| Fault::new(Kind::Unexpected, format!("cannot set up the HTTP client: {err}")))
        };
        Ok(Http {
            client: built(builder())?,
            direct: built(builder().no_proxy())?,
            notes: notes.clone(),
            stop: Stop::default(),
        })
    }

    /// The same client, its waits and streams stopped also by `stop` (a
    /// `check` run's token).
    pub fn stopped_by(self, stop: &Stop) -> Self {
        Http {
            stop: stop.clone(),
            ..self
        }
    }

    /// What stops this client's waits and the streams it opens.
    pub fn stop(&self) -> &Stop {
        &self.stop
    }

    /// The client for `url`: loopback hosts directly, others through the
    /// proxy the environment names.
    fn client_for(&self, url: &Url) -> &Client {
        match is_loopback(url) {
            true => &self.direct,
            false => &self.client,
        }
    }

    /// Where this client's warnings and `-v` log go.
    pub fn notes(&self) -> &Notes {
        &self.notes
    }

    /// POSTs `body` as JSON with the credential headers of `auth`. Returns
    /// the response once its status is a success; transient failures are
    /// tried again with backoff as `retry` allows; any other status, and a
    /// failure to connect, becomes a [`Fault`] naming what to check.
    pub fn post_json_retrying(
        &self,
        url: &Url,
        auth: Credential<'_>,
        body: &impl Serialize,
        accept: &str,
        retry: Retry,
    ) -> Result<Response> {
        let json = serde_json::to_vec(body)?;
        let started = Instant::now();
        let left = || retry.budget.map(|budget| budget.saturating_sub(started.elapsed()));
        let mut attempt = 0;
        loop {
            attempt += 1;
            let timeout = retry
                .per_try
                .map(|per_try| left().map_or(per_try, |left| left.min(per_try)));
            let failure = match self.send_once(url, auth, &json, accept, timeout) {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            // The try was cut because `--timeout` ran out: that is the
            // failure, not the service.
            if failure.timed_out && left().is_some_and(|left| left < EXPIRED) {
                return Err(Fault::new(Kind::Timeout, format!("--timeout expired: {}", failure.fault)).into());
            }
            let transient = failure.transient || (retry.any_server_error && failure.server_error);
            let wait = failure.retry_after.unwrap_or_else(|| backoff(attempt));
            let time_for_another = left().is_none_or(|left| left > wait);
            if !transient || attempt >= retry.attempts || !time_for_another {
                return Err(failure.fault.into());
            }
            self.notes.warn(&format!(
                "{}; trying again in {} ({} of {})",
                failure.fault,
                human(wait),
                attempt + 1,
                retry.attempts
            ));
            self.stop.pause(wait)?;
        }
    }

    fn send_once(
        &self,
        url: &Url,
        auth: Credential<'_>,
        json: &[u8],
        accept: &str,
        timeout: Option<Duration>,
    ) -> Result<Response, Failure> {
        let headers = auth.headers().ok_or_else(|| Failure {
            fault: Fault::new(
                Kind::Usage,
                "the credential contains characters that cannot go in an HTTP header",
            ),
            timed_out: false,
            transient: false,
            server_error: false,
            retry_after: None,
        })?;
        if self.notes.verbose() {
            self.notes.debug(&format!("> POST {url}"));
            for (name, _, shown) in &headers {
                self.notes.debug(&format!("> {name}: {shown}"));
            }
            self.notes.debug("> content-type: application/json");
            self.notes.debug(&format!("> accept: {accept}"));
            self.notes.debug(&format!("> {}", String::from_utf8_lossy(json)));
        }
        let client = self.client_for(url);
        let mut request = client.post(url.clone());
        for (name, value, _) in headers {
            request = request.header(name, value);
        }
        let mut request = request
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, accept)
            .body(json.to_vec());
        if let Some(timeout) = timeout {
            request = request.timeout(timeout);
        }
        let response = request.send().map_err(|err| Failure {
            timed_out: err.is_timeout(),
            transient: !err.is_timeout()
                && (err.is_connect() || err.is_request())
                && !is_unknown_host(&err)
                && !is_certificate_refused(&err),
            server_error: false,
            fault: transport_fault(url, &err),
            retry_after: None,
        })?;
        let status = response.status();
        if self.notes.verbose() {
            self.notes.debug(&format!("< {:?} {status}", response.version()));
            if let Some(kind) = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) {
                self.notes.debug(&format!("< content-type: {kind}"));
            }
        }
        if status.is_success() && !is_html(&response) {
            return Ok(response);
        }
        if status.is_success() {
            return Err(Failure {
                fault: html_page_fault(response),
                timed_out: false,
                transient: false,
                server_error: false,
                retry_after: None,
            });
        }
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_after(v, SystemTime::now()));
        Err(Failure {
            timed_out: false,
            transient: matches!(status.as_u16(), 429 | 502 | 503 | 504),
            server_error: status.is_server_error(),
            fault: status_fault(response, auth),
            retry_after,
        })
    }
}

impl Http {
    /// POSTs `body` once (no retry: what it carries waits for a later
    /// try elsewhere), within `timeout`, with `headers` (secret values:
    /// never logged); `Err` names the status or the transport's failure.
    pub fn post_once(
        &self,
        url: &Url,
        headers: &[(&str, &str)],
        content_type: &str,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<()> {
        let client = self.client_for(url);
        let mut request = client.post(url.clone()).timeout(timeout);
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes());
            let value = HeaderValue::from_str(value);
            let (Ok(name), Ok(value)) = (name, value) else {
                return Err(Fault::new(Kind::Usage, "a header holds characters no HTTP header can").into());
            };
            request = request.header(name, value);
        }
        let response = request
            .header(CONTENT_TYPE, content_type)
            .body(body)
            .send()
            .map_err(|err| transport_fault(url, &err))?;
        let status = response.status();
        match status.is_success() {
            true => Ok(()),
            false => Err(Fault::new(Kind::Unreachable, describe_status(status)).into()),
        }
    }
}

/// The pause a `Retry-After` asks for, in seconds or as an HTTP date
/// (RFC 9110), at most [`MAX_RETRY_AFTER`]; `None` when it is neither.
fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    let pause = match value.parse::<u64>() {
        Ok(seconds) => Duration::from_secs(seconds),
        Err(_) => httpdate::parse_http_date(value)
            .ok()?
            .duration_since(now)
            .unwrap_or(Duration::ZERO),
    };
    Some(pause.min(MAX_RETRY_AFTER))
}

/// True for an answer that is a web page: never what the service sends.
fn is_html(response: &Response) -> bool {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|kind| kind.trim_start().to_ascii_lowercase().starts_with("text/html"))
}

/// The fault for a successful answer that is a web page: something between
/// us and the service answered (a captive portal, a proxy's login page).
fn html_page_fault(mut response: Response) -> Fault {
    let mut body = Vec::new();
    let _ = (&mut response).take(ERROR_BODY_LIMIT).read_to_end(&mut body);
    Fault::new(
        Kind::Service,
        format!(
            "the answer is a web page, not the service's ({}): a captive portal or a proxy may be in the way; check the network and the URL",
            summarize_body("text/html", &body)
        ),
    )
}

/// True when DNS said the host does not exist (not "try again"): asking
/// again cannot help.
fn is_unknown_host(err: &reqwest::Error) -> bool {
    says_unknown_host(&root_causes(err))
}

/// True when TLS refused the service's certificate: it will not fix itself,
/// so asking again cannot help.
fn is_certificate_refused(err: &reqwest::Error) -> bool {
    root_causes(err).to_lowercase().contains("certificate")
}

/// True when the causes of a failure to connect say that DNS knows no such
/// host (rather than "try again").
fn says_unknown_host(causes: &str) -> bool {
    let causes = causes.to_lowercase();
    causes.contains("dns error") && !causes.contains("temporary failure") && !causes.contains("try again")
}

/// The fault for a request that never got an answer: connection refused,
/// DNS, TLS, connect timeout: the service could not be reached.
fn transport_fault(url: &Url, err: &reqwest::Error) -> Fault {
    let host = match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_string(),
        (None, _) => "the service".to_string(),
    };
    let causes = root_causes(err);
    // A request through a proxy goes through a tunnel: when that fails, the
    // proxy is what could not be reached, not the service.
    if causes.contains("tunnel error") {
        return Fault::new(
            Kind::Unreachable,
            format!(
                "cannot reach {host} through the proxy (HTTPS_PROXY or ALL_PROXY): {causes}; check the proxy, or NO_PROXY"
            ),
        );
    }
    let what = if err.is_timeout() {
        "timed out connecting to"
    } else if err.is_connect() {
        "cannot connect to"
    } else {
        "request failed to"
    };
    // Refused, DNS, TLS, a connect timeout: no request reached the service.
    // Anything later (a reset once connected) is the service failing.
    let kind = match err.is_connect() {
        true => Kind::Unreachable,
        false => Kind::Service,
    };
    Fault::new(kind, format!("{what} {host}: {causes}"))
}

/// What to check after a status, for the API the credential is for: the
/// flags and variables that named the URL of that API, or where the
/// credential that was sent came from.
fn hint(status: u16, auth: Credential<'_>) -> String {
    let check = |what: &str, secret: &Secret| format!("the {what} (from {})", secret.origin());
    match (status, auth) {
        (401, Credential::Chat { key, cube_token }) => {
            let checked: Vec<String> = [(key, "API key"), (cube_token, "Cube token")]
                .into_iter()
                .filter_map(|(secret, what)| secret.map(|secret| check(what, secret)))
                .collect();
            format!("check {}", checked.join(" and "))
        }
        (401, Credential::ApiKey(key)) => format!("check {}", check("API key", key)),
        (401 | 403, Credential::Token(token)) => {
            format!("check {}", check("data query API's credential", token))
        }
        (403, _) => "this key or user may not do that".to_string(),
        (404 | 410, Credential::Chat { .. }) => {
            "check --chat-url (ANALYST_CHAT_URL: account and agent) and --chat-id".to_string()
        }
        (404 | 410, Credential::ApiKey(_)) => {
            "check --base-url (ANALYST_BASE_URL, the account host) and --deployment-id".to_string()
        }
        (404 | 410, Credential::Token(_)) => {
            "check --data-url (ANALYST_DATA_URL, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api)".to_string()
        }
        (408 | 429, _) => "the service is busy; try again later".to_string(),
        (300..=399, _) => "check the URL: the service answered with a redirect".to_string(),
        (400..=499, _) => "the service refused the request".to_string(),
        _ => "the service failed; try again later".to_string(),
    }
}

/// The fault for an answer with a non-success status: the kind of the
/// contract's table, the status, a summary of the body, and what to check
/// for the API `auth` is the credential of.
fn status_fault(mut response: Response, auth: Credential<'_>) -> Fault {
    let status = response.status();
    let location = response
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let mut body = Vec::new();
    let _ = (&mut response).take(ERROR_BODY_LIMIT).read_to_end(&mut body);
    // Redacted before it is shortened, so no part of a secret survives a cut.
    let body = redact(&String::from_utf8_lossy(&body)).into_owned();
    let summary = summarize_body(&content_type, body.as_bytes());
    let code = match status.as_u16() {
        401 => Kind::Auth,
        403 => Kind::Forbidden,
        404 | 410 => Kind::NotFound,
        408 | 429 | 300..=399 => Kind::Service,
        400..=499 => Kind::Usage,
        _ => Kind::Service,
    };
    let hint = hint(status.as_u16(), auth);
    let mut message = format!("the service answered {}", describe_status(status));
    if !summary.is_empty() {
        message.push_str(&format!(": {summary}"));
    }
    if let Some(location) = location {
        message.push_str(&format!(" (Location: {location})"));
    }
    message.push_str(&format!("; {hint}"));
    Fault::new(code, message)
}

fn describe_status(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// One line about an error body: the `error`/`message` of a JSON body, the
/// title (or text) of an HTML page, or the first line of anything else,
/// shortened. A body is never dumped whole.
pub fn summarize_body(content_type: &str, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return String::new();
    }
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(trimmed) {
        for key in ["error", "message", "detail", "title"] {
            match value.get(key) {
                Some(serde_json::Value::String(s)) => return shorten(s),
                Some(nested @ serde_json::Value::Object(_)) => {
                    if let Some(s) = nested.get("message").and_then(|m| m.as_str()) {
                        return shorten(s);
                    }
                }
                _ => {}
            }
        }
        return shorten(&value.to_string());
    }
    let lower = trimmed.to_ascii_lowercase();
    if content_type.contains("html") || lower.starts_with("<!doctype html") || lower.starts_with("<html") {
        let title = lower
            .find("<title")
            .and_then(|start| Some(start + trimmed[start..].find('>')? + 1))
            .and_then(|start| Some((start, start + lower[start..].find("</title")?)))
            .map(|(start, end)| collapse_whitespace(&trimmed[start..end]))
            .filter(|title| !title.is_empty());
        let text = title.unwrap_or_else(|| collapse_whitespace(&strip_tags(trimmed)));
        return format!("HTML page: {}", shorten(&text));
    }
    shorten(trimmed.lines().next().unwrap_or(""))
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::SUMMARY_CHARS;

    #[test]
    fn a_host_that_does_not_exist_is_told_from_a_dns_hiccup() {
        assert!(says_unknown_host(
            "client error (Connect): dns error: failed to lookup address information: Name or service not known"
        ));
        assert!(!says_unknown_host(
            "client error (Connect): dns error: failed to lookup address information: Temporary failure in name resolution"
        ));
        assert!(!says_unknown_host(
            "tcp connect error: Connection refused (os error 111)"
        ));
    }

    #[test]
    fn retry_after_is_seconds_or_a_date() {
        let now = httpdate::parse_http_date("Sun, 22 Nov 2026 10:00:00 GMT").unwrap();
        assert_eq!(retry_after(" 3 ", now), Some(Duration::from_secs(3)));
        assert_eq!(
            retry_after("Sun, 22 Nov 2026 10:00:04 GMT", now),
            Some(Duration::from_secs(4))
        );
        assert_eq!(retry_after("Sun, 22 Nov 2026 09:00:00 GMT", now), Some(Duration::ZERO));
        assert_eq!(retry_after("3600", now), Some(MAX_RETRY_AFTER));
        assert_eq!(retry_after("soon", now), None);
    }

    #[test]
    fn html_bodies_are_summarised_by_their_title() {
        let page =
            b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>nginx</h1></body></html>";
        assert_eq!(summarize_body("text/html", page), "HTML page: 502 Bad Gateway");
        let untitled = b"<html><body><p>Service   Unavailable</p></body></html>";
        assert_eq!(summarize_body("", untitled), "HTML page: Service Unavailable");
    }

    #[test]
    fn json_bodies_give_their_message() {
        assert_eq!(
            summarize_body("application/json", br#"{"error":"Invalid API key"}"#),
            "Invalid API key"
        );
        assert_eq!(summarize_body("", br#"{"error":{"message":"nope"}}"#), "nope");
    }

    #[test]
    fn long_bodies_are_shortened() {
        let long = "x".repeat(1000);
        let summary = summarize_body("text/plain", long.as_bytes());
        assert_eq!(summary.chars().count(), SUMMARY_CHARS + 1);
        assert!(summary.ends_with('…'));
    }
}
