//! THE way out to the network: every request — a chat, an abort, a data
//! query, a session, a span export, a push of kept spans — is a
//! [`Request`] sent by [`Http`], which applies to each what the command
//! promises: the time left of `--timeout` (no request outlives it), the
//! first signal or the command's stop (the wait ends at once, 130/143),
//! the plain-`http://` and proxy rule, `-v` logging of the request and its
//! status, retries of what is safe to repeat, and faults worded with every
//! secret redacted. It writes nothing itself: `-v` lines and retries go
//! through the `log` facade, failures come back as [`Fault`]s.

use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;
use bytes::Bytes;
use reqwest::blocking::{Client, Response};
use reqwest::header::{HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use serde::Serialize;

use crate::domain::{is_loopback, without_credentials, Limits};
use crate::error::{root_causes, Fault, Kind};
use crate::net::source::Source;
use crate::redact::redact;
use crate::redact::Secret;
use crate::signals::{self, Stop};
use crate::text::{human, shorten};

/// How much of an error body is read to summarise it.
const ERROR_BODY_LIMIT: u64 = 64 * 1024;
/// How much of a request's body `-v` shows.
const LOGGED_BODY: usize = 4 * 1024;
/// How often a watched request looks at signals and the clock.
const POLL: Duration = Duration::from_millis(50);

/// The credential headers of a request: what it speaks as.
#[derive(Clone, Debug)]
pub enum Credential {
    /// None (a collector that takes anyone).
    None,
    /// `Authorization: Api-Key <key>`.
    ApiKey(Secret),
    /// `Authorization: <token>` (the data query API's JWT).
    Token(Secret),
    /// The chat endpoints: an API key, a Cube token
    /// (`X-Cube-Auth-Token: <JWT>`), or both (the service then takes the key).
    Chat {
        /// The API key, when there is one.
        key: Option<Secret>,
        /// The Cube token, when there is one.
        cube_token: Option<Secret>,
    },
    /// A collector's headers (`OTEL_EXPORTER_OTLP_HEADERS`): each value a
    /// secret.
    Headers(Vec<(String, Secret)>),
}

/// The header that carries a Cube token.
const CUBE_TOKEN_HEADER: &str = "x-cube-auth-token";

/// A header to send: its name, its value (marked sensitive), and how `-v`
/// shows it.
type Header = (HeaderName, HeaderValue, String);

impl Credential {
    /// Each header. `None` when a secret cannot go in a header.
    fn headers(&self) -> Option<Vec<Header>> {
        let mut headers = Vec::new();
        let mut add = |name: HeaderName, text: String, shown: &str| -> Option<()> {
            let mut value = HeaderValue::from_str(&text).ok()?;
            value.set_sensitive(true);
            headers.push((name, value, shown.to_string()));
            Some(())
        };
        match self {
            Credential::None => {}
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
            Credential::Headers(pairs) => {
                for (name, value) in pairs {
                    add(
                        HeaderName::from_bytes(name.as_bytes()).ok()?,
                        value.expose().to_string(),
                        "***",
                    )?;
                }
            }
        }
        Some(headers)
    }

    /// True when the request carries a secret in a header.
    fn carries_secret(&self) -> bool {
        match self {
            Credential::None => false,
            Credential::Chat { key, cube_token } => key.is_some() || cube_token.is_some(),
            Credential::Headers(pairs) => !pairs.is_empty(),
            Credential::ApiKey(_) | Credential::Token(_) => true,
        }
    }
}

/// Who a request goes to: what a refusal's hint tells the user to check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// The chat service (`--chat-url`).
    Chat,
    /// The account host (`--base-url`): embed sessions.
    Account,
    /// The data query API (`--data-url`).
    Data,
    /// An OpenTelemetry collector (`OTEL_EXPORTER_OTLP_*`).
    Collector,
}

impl Peer {
    /// How messages name it.
    fn name(self) -> &'static str {
        match self {
            Peer::Collector => "the collector",
            _ => "the service",
        }
    }
}

/// One request: where it goes, as whom, what it carries, and how it is
/// retried. Cheap to clone (the body is shared).
#[derive(Clone, Debug)]
pub struct Request {
    /// Where the POST goes.
    pub url: Url,
    /// Who it goes to, for what a refusal says to check.
    pub peer: Peer,
    /// Its credential headers.
    pub credential: Credential,
    /// Its body.
    pub body: Bytes,
    /// The body's content type.
    pub content_type: &'static str,
    /// What answer it accepts.
    pub accept: &'static str,
    /// How it is tried again.
    pub retry: Retry,
    /// It cleans up after a stop (the abort of a chat that a signal, the
    /// deadline or a stall ended): the first signal and the command's
    /// deadline, which caused it, do not end it; its retry's budget does
    /// (a second signal still ends the process at once).
    pub cleanup: bool,
}

impl Request {
    /// A POST of `body` as JSON to `url` (`peer`), as `credential`,
    /// accepting `accept`, retried as `retry` says.
    pub fn json(
        url: Url,
        peer: Peer,
        credential: Credential,
        body: &impl Serialize,
        accept: &'static str,
        retry: Retry,
    ) -> Result<Request> {
        Ok(Request {
            url,
            peer,
            credential,
            body: Bytes::from(serde_json::to_vec(body)?),
            content_type: "application/json",
            accept,
            retry,
            cleanup: false,
        })
    }

    /// The same request, sent to clean up after a stop (see
    /// [`Request::cleanup`]).
    pub fn cleaning_up(self) -> Request {
        Request { cleanup: true, ..self }
    }
}

/// How a request is retried after a transient failure: connection refused
/// or reset, 502, 503, 504, or 429 (after its `Retry-After`).
#[derive(Clone, Copy, Debug)]
pub struct Retry {
    /// Tries in all, the first included.
    pub attempts: u32,
    /// The time all tries together may take, when bounded (besides what
    /// is left of `--timeout`, which bounds every request).
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

    /// One try of at most `limit` (a span export: what it carries is kept
    /// for a later push rather than sent again now).
    pub fn once(limit: Duration) -> Retry {
        Retry {
            attempts: 1,
            budget: Some(limit),
            per_try: Some(limit),
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
/// What is left of a time limit when it counts as expired.
const EXPIRED: Duration = Duration::from_millis(50);
/// The longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);

/// The HTTP client every request goes through: a connect timeout, no total
/// timeout (streams of several minutes are normal: each request is bounded
/// by its retry's limits and what `--timeout` has left), no redirects (a
/// POST must not be silently re-sent elsewhere), compressed bodies decoded.
/// Loopback hosts and plain `http://` are reached directly, never through
/// a proxy. Cheap to clone.
#[derive(Clone)]
pub struct Http {
    /// For `https://` hosts that are not loopback: the proxy environment
    /// variables apply.
    client: Client,
    /// For loopback hosts and plain `http://`: no proxy.
    direct: Client,
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

impl Failure {
    /// A failure that trying again cannot mend.
    fn lasting(fault: Fault) -> Failure {
        Failure {
            fault,
            timed_out: false,
            transient: false,
            server_error: false,
            retry_after: None,
        }
    }
}

impl Http {
    /// Builds the client, and starts hearing signals (a request's wait
    /// ends at the first). `connect_timeout` bounds only connection set-up.
    pub fn new(connect_timeout: Duration) -> Result<Self> {
        signals::watch();
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

    /// Sends `request` and returns the answer once its status is a success,
    /// waiting for it no longer than what `--timeout` has left and no
    /// longer than the first signal (or this client's stop): then the
    /// failure is the stop's (124, 130, 143), at once. The answer's body
    /// is read by the caller, within the retry's `per_try`.
    pub fn send(&self, request: &Request) -> Result<Response> {
        let (answered, answer) = mpsc::sync_channel(1);
        let (http, sent) = (self.clone(), request.clone());
        std::thread::Builder::new()
            .spawn(move || {
                let _ = answered.send(http.exchange(&sent));
            })
            .map_err(|err| {
                Fault::new(
                    Kind::Unexpected,
                    format!("cannot start a thread for the request: {err}"),
                )
            })?;
        loop {
            let stop = self.stop.stopped().or_else(signals::expired);
            if let Some(stop) = stop.filter(|_| !request.cleanup) {
                return Err(stop.into());
            }
            match answer.recv_timeout(POLL) {
                Ok(answer) => return answer,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Fault::new(Kind::Unexpected, "the request ended without an answer").into())
                }
            }
        }
    }

    /// Sends `request` from a stream source's worker and reads its answer
    /// there: the source watches signals, `--timeout` (`limits`, counted
    /// from `started`) and stalls while the request waits and while the
    /// answer streams.
    pub fn stream(&self, request: Request, limits: Limits, started: Instant) -> Source {
        let http = self.clone();
        let open = move || -> Result<Box<dyn Read + Send>> { Ok(Box::new(http.exchange(&request)?)) };
        Source::start(open, limits, started, &self.stop)
    }

    /// The request's tries: transient failures are tried again with
    /// backoff as its retry allows, within its budget and what `--timeout`
    /// has left; any other status, and a failure to connect, becomes a
    /// [`Fault`] naming what to check.
    fn exchange(&self, request: &Request) -> Result<Response> {
        let retry = request.retry;
        let started = Instant::now();
        // What --timeout has left bounds every request but a cleanup.
        let command_left = || signals::time_left().filter(|_| !request.cleanup);
        let left = || {
            let budget = retry.budget.map(|budget| budget.saturating_sub(started.elapsed()));
            match (budget, command_left()) {
                (Some(budget), Some(command)) => Some(budget.min(command)),
                (budget, command) => budget.or(command),
            }
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            if let Some(expired) = signals::expired().filter(|_| !request.cleanup) {
                return Err(expired.into());
            }
            let timeout = match (retry.per_try, left()) {
                (Some(per_try), Some(left)) => Some(per_try.min(left)),
                (Some(per_try), None) => Some(per_try),
                // A streamed answer: no timer cuts it, but it never
                // outlives the command's --timeout.
                (None, _) => command_left(),
            };
            let failure = match self.try_once(request, timeout) {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            // The try was cut because `--timeout` ran out: that is the
            // failure, not the service. (Cut by its own budget, it is the
            // peer's failure to answer in time.)
            if failure.timed_out && command_left().is_some_and(|left| left < EXPIRED) {
                let expired = signals::expired().map_or_else(|| "--timeout expired".to_string(), |f| f.to_string());
                return Err(Fault::new(Kind::Timeout, format!("{expired}: {}", failure.fault)).into());
            }
            let transient = failure.transient || (retry.any_server_error && failure.server_error);
            let wait = failure.retry_after.unwrap_or_else(|| backoff(attempt));
            let time_for_another = left().is_none_or(|left| left > wait);
            if !transient || attempt >= retry.attempts || !time_for_another {
                return Err(failure.fault.into());
            }
            log::warn!(
                "{}; trying again in {} ({} of {})",
                failure.fault,
                human(wait),
                attempt + 1,
                retry.attempts
            );
            match request.cleanup {
                true => std::thread::sleep(wait),
                false => self.stop.pause(wait)?,
            }
        }
    }

    /// The client for `request`: loopback hosts and plain `http://`
    /// directly (a proxy would see what plain http carries), others
    /// through the proxy the environment names. A secret (a credential
    /// header, or one in the URL) never goes over plain `http://` to a
    /// host that is not loopback.
    fn client_for(&self, request: &Request) -> Result<&Client, Fault> {
        let url = &request.url;
        let loopback = is_loopback(url);
        let secret_in_url = !url.username().is_empty() || url.password().is_some();
        if url.scheme() == "http" && !loopback && (request.credential.carries_secret() || secret_in_url) {
            return Err(Fault::new(
                Kind::Usage,
                format!(
                    "refusing to send a secret over plain http:// to {}: use https://; plain http carries secrets only to localhost and loopback addresses",
                    url.host_str().unwrap_or("?")
                ),
            ));
        }
        Ok(match loopback || url.scheme() == "http" {
            true => &self.direct,
            false => &self.client,
        })
    }

    /// One try, within `timeout` when given.
    fn try_once(&self, request: &Request, timeout: Option<Duration>) -> Result<Response, Failure> {
        let client = self.client_for(request).map_err(Failure::lasting)?;
        let headers = request.credential.headers().ok_or_else(|| {
            Failure::lasting(Fault::new(
                Kind::Usage,
                "the credential contains characters that cannot go in an HTTP header",
            ))
        })?;
        let url = &request.url;
        if log::log_enabled!(log::Level::Debug) {
            log_request(request, &headers);
        }
        let mut sent = client.post(url.clone());
        for (name, value, _) in headers {
            sent = sent.header(name, value);
        }
        let mut sent = sent
            .header(CONTENT_TYPE, request.content_type)
            .header(ACCEPT, request.accept)
            .body(request.body.clone());
        if let Some(timeout) = timeout {
            sent = sent.timeout(timeout);
        }
        let response = sent.send().map_err(|err| Failure {
            timed_out: err.is_timeout(),
            transient: !err.is_timeout()
                && (err.is_connect() || err.is_request())
                && !is_unknown_host(&err)
                && !is_certificate_refused(&err),
            server_error: false,
            fault: transport_fault(url, request.peer, &err),
            retry_after: None,
        })?;
        let status = response.status();
        log::debug!("< {:?} {status}", response.version());
        if let Some(kind) = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) {
            log::debug!("< content-type: {kind}");
        }
        if status.is_success() && !is_html(&response) {
            return Ok(response);
        }
        if status.is_success() {
            return Err(Failure::lasting(html_page_fault(response)));
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
            fault: status_fault(response, request),
            retry_after,
        })
    }
}

/// `-v`: the request line, its headers as they are shown (secrets never),
/// and its body (a JSON body as text, at most [`LOGGED_BODY`] bytes;
/// another as its size).
fn log_request(request: &Request, headers: &[Header]) {
    log::debug!("> POST {}", without_credentials(request.url.as_str()));
    for (name, _, shown) in headers {
        log::debug!("> {name}: {shown}");
    }
    log::debug!("> content-type: {}", request.content_type);
    log::debug!("> accept: {}", request.accept);
    let body = &request.body;
    match request.content_type == "application/json" {
        true if body.len() <= LOGGED_BODY => log::debug!("> {}", String::from_utf8_lossy(body)),
        true => log::debug!(
            "> {}… ({} bytes)",
            crate::text::head(&String::from_utf8_lossy(&body[..LOGGED_BODY]), LOGGED_BODY),
            body.len()
        ),
        false => log::debug!("> ({} bytes of {})", body.len(), request.content_type),
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
/// DNS, TLS, connect timeout: `peer` could not be reached. The host is
/// named without the URL's credentials, the causes with secrets redacted.
fn transport_fault(url: &Url, peer: Peer, err: &reqwest::Error) -> Fault {
    let host = match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_string(),
        (None, _) => peer.name().to_string(),
    };
    let causes = redact(&root_causes(err)).into_owned();
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
    let what = if err.is_timeout() && err.is_connect() {
        "timed out connecting to"
    } else if err.is_timeout() {
        "no answer in time from"
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

/// What to check after `status` from the request's peer: the flags and
/// variables that named its URL, or where the credential that was sent
/// came from.
fn hint(status: u16, request: &Request) -> String {
    let check = |what: &str, secret: &Secret| format!("the {what} (from {})", secret.origin());
    let credential = &request.credential;
    match (status, request.peer) {
        (401 | 403, Peer::Collector) => match credential {
            Credential::Headers(_) => "check the collector's headers (OTEL_EXPORTER_OTLP_HEADERS)".to_string(),
            _ => "the collector wants credentials: set OTEL_EXPORTER_OTLP_HEADERS".to_string(),
        },
        (401, _) => {
            let checked: Vec<String> = match credential {
                Credential::Chat { key, cube_token } => [(key, "API key"), (cube_token, "Cube token")]
                    .into_iter()
                    .filter_map(|(secret, what)| secret.as_ref().map(|secret| check(what, secret)))
                    .collect(),
                Credential::ApiKey(key) => vec![check("API key", key)],
                Credential::Token(token) => vec![check("data query API's credential", token)],
                Credential::Headers(_) | Credential::None => vec!["the credentials".to_string()],
            };
            format!("check {}", checked.join(" and "))
        }
        (403, Peer::Data) => match credential {
            Credential::Token(token) => format!("check {}", check("data query API's credential", token)),
            _ => "this key or user may not do that".to_string(),
        },
        (403, _) => "this key or user may not do that".to_string(),
        (404 | 410, Peer::Chat) => "check --chat-url (ANALYST_CHAT_URL: account and agent) and --chat-id".to_string(),
        (404 | 410, Peer::Account) => {
            "check --base-url (ANALYST_BASE_URL, the account host) and --deployment-id".to_string()
        }
        (404 | 410, Peer::Data) => {
            "check --data-url (ANALYST_DATA_URL, e.g. https://<deployment>.cubecloudapp.dev/cubejs-api)".to_string()
        }
        (404 | 410, Peer::Collector) => {
            "check the endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)".to_string()
        }
        (408 | 429, _) => format!("{} is busy; try again later", request.peer.name()),
        (300..=399, _) => format!("check the URL: {} answered with a redirect", request.peer.name()),
        (400..=499, _) => format!("{} refused the request", request.peer.name()),
        _ => format!("{} failed; try again later", request.peer.name()),
    }
}

/// The fault for an answer with a non-success status: the kind of the
/// contract's table, the status, a summary of the body, and what to check
/// (see [`hint`]).
fn status_fault(mut response: Response, request: &Request) -> Fault {
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
    let hint = hint(status.as_u16(), request);
    let mut message = format!("{} answered {}", request.peer.name(), describe_status(status));
    if !summary.is_empty() {
        message.push_str(&format!(": {summary}"));
    }
    if let Some(location) = location {
        message.push_str(&format!(" (Location: {})", without_credentials(&location)));
    }
    message.push_str(&format!("; {hint}"));
    Fault::new(code, message).answered(status.as_u16())
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
