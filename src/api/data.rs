//! The data query API (`POST {data-url}/v1/cubesql`): authentication (a
//! token, or a short-lived HS256 JWT signed with the deployment's secret),
//! the request, polling while the service answers "Continue wait", retries
//! of failures that are safe to repeat, and the NDJSON answer (a `schema`
//! line, `data` chunks, or an `error` line) streamed into a [`RowSink`].

use std::io;
use std::sync::LazyLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use regex::Regex;
use reqwest::Url;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use crate::domain::Network;
use crate::error::{bad_stream, kind_of, usage, Fault, Kind};
use crate::net::http::{Credential, Http, Peer, Request, Retry};
use crate::redact::Secret;
use crate::results::{unique_names, Column, RowSink, RowSource};
use crate::signals::timeout;
use crate::stream::lines::Line;
use crate::stream::message::json_text;
use crate::stream::turn::{read_lines, LineFold};
use crate::text::{human, literal_regex, shorten_to, SERVICE_MESSAGE_CHARS};

/// The credential of the data query API.
#[derive(Clone, Debug)]
pub enum DataCredential {
    /// A ready JWT (`ANALYST_DATA_TOKEN`, or the profile's `data_token_command`).
    Token(Secret),
    /// The deployment's API secret (`ANALYST_DATA_SECRET`): a fresh token is
    /// signed per request, whose payload is the security context.
    Signed {
        /// The secret.
        secret: Secret,
        /// The token's payload (before `iat` and `exp`).
        security_context: Map<String, Value>,
    },
}

/// A secret the data query API needs, read only when it is used (a
/// profile's `data_token_command` runs then): the settings give one per
/// source (a variable, a file, a command).
pub trait ReadSecret: std::fmt::Debug + Send + Sync {
    /// The secret, read now (what reading it has to say goes to the
    /// `log` facade).
    fn read(&self) -> Result<Secret>;

    /// Where it comes from, as messages name it.
    fn origin(&self) -> String;
}

/// The data query API as the environment, the flags and the profile give
/// it. Nothing here is checked until a command needs the API
/// ([`DataSettings::url`], [`DataSettings::credential`]): `ask --all-rows`
/// needs no data credentials when no result is truncated.
#[derive(Debug)]
pub struct DataSettings {
    /// `--data-url`, `ANALYST_DATA_URL` or the profile's `data_url`,
    /// checked; or why there is none (worded by the settings).
    pub url: Result<Url, Fault>,
    /// A ready token: `ANALYST_DATA_TOKEN` or the profile's `data_token_command`.
    pub token: Option<Box<dyn ReadSecret>>,
    /// `ANALYST_DATA_SECRET`.
    pub secret: Option<Box<dyn ReadSecret>>,
    /// `--security-context`: the payload a secret signs.
    pub security_context: Option<Map<String, Value>>,
    /// `--timezone`.
    pub timezone: Option<String>,
    /// `--cache`, as the API spells it.
    pub cache: Option<String>,
}

/// No data query API: nothing is named.
impl Default for DataSettings {
    fn default() -> Self {
        DataSettings {
            url: Err(Fault::new(Kind::Usage, "no data query URL")),
            token: None,
            secret: None,
            security_context: None,
            timezone: None,
            cache: None,
        }
    }
}

impl DataSettings {
    /// The validated data query API base.
    pub fn url(&self) -> Result<Url> {
        self.url.clone().map_err(Into::into)
    }

    /// Checks, before anything is sent, that the API is named and a
    /// credential is given (a command that prints one runs only when used).
    pub fn check(&self) -> Result<()> {
        self.url()?;
        match (&self.token, &self.secret) {
            (None, None) => Err(no_data_credential()),
            _ => Ok(()),
        }
    }

    /// The credential, read now: a ready token (wins), else the secret
    /// (signing `--security-context`); with a security context and a
    /// secret, the secret signs (a ready token's payload already is its
    /// security context). A usage error naming both variables when there
    /// is none.
    pub fn credential(&self) -> Result<DataCredential> {
        let sign = self.security_context.is_some() && self.secret.is_some();
        if let Some(token) = self.token.as_ref().filter(|_| !sign) {
            let token = token.read()?;
            let bare = token.expose().strip_prefix("Bearer ").unwrap_or(token.expose());
            return Ok(DataCredential::Token(Secret::new(bare.to_string(), token.origin())));
        }
        match &self.secret {
            Some(secret) => Ok(DataCredential::Signed {
                secret: secret.read()?,
                security_context: self.security_context.clone().unwrap_or_default(),
            }),
            None => Err(no_data_credential()),
        }
    }
}

/// The usage error of the data query API without a credential.
fn no_data_credential() -> anyhow::Error {
    usage("no credential for the data query API: set ANALYST_DATA_TOKEN (a JWT) or ANALYST_DATA_SECRET (the deployment's API secret); the chat API key does not work there")
}

/// How long a signed token is valid: enough for one request and its answer.
const TOKEN_LIFETIME: Duration = Duration::from_secs(10 * 60);
/// The first pause before asking again after "Continue wait"; it doubles up to [`MAX_POLL`].
const FIRST_POLL: Duration = Duration::from_millis(500);
/// The longest pause between polls (the official client waits about 5 s).
const MAX_POLL: Duration = Duration::from_secs(5);
/// The answer the service gives while a query is still running.
const CONTINUE_WAIT: &str = "Continue wait";

/// The most rows a real Cube server returns in one answer, without `LIMIT`
/// or with a larger one (its default; nothing in the answer says it cut).
pub const SERVER_ROW_CAP: u64 = 50_000;

/// How a query is sent: as it is, or a page at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// In one request, as written.
    AsIs(String),
    /// `base LIMIT page OFFSET k·page`, until a short page or `limit` rows.
    Pages {
        /// The SQL without its own `LIMIT` (and with `--order-by`'s `ORDER BY`).
        base: String,
        /// Rows a page.
        page: u64,
        /// The SQL's own `LIMIT`, when it had one above `page`.
        limit: Option<u64>,
        /// The SQL orders its rows (else pages may overlap or skip).
        ordered: bool,
    },
}

/// The SQL's end: what comes before a trailing `LIMIT` (the whole SQL
/// without one, a final `;` dropped), that `LIMIT`, and whether it ends
/// with an `OFFSET`.
struct Tail {
    base: String,
    limit: Option<u64>,
    offset: bool,
}

/// A trailing `LIMIT n` (with its `OFFSET k`) and what comes before it.
static TRAILING_LIMIT: LazyLock<Regex> =
    LazyLock::new(|| literal_regex(r"(?is)^(.*?)\s+LIMIT\s+(\d+)\s*(?:OFFSET\s+(\d+))?$"));
/// A trailing `OFFSET k` without a `LIMIT`.
static TRAILING_OFFSET: LazyLock<Regex> = LazyLock::new(|| literal_regex(r"(?is)\sOFFSET\s+\d+$"));
/// An `ORDER BY` anywhere in the SQL.
static ORDER_BY: LazyLock<Regex> = LazyLock::new(|| literal_regex(r"(?i)\bORDER\s+BY\b"));

impl Tail {
    fn of(sql: &str) -> Tail {
        let trimmed = sql.trim().trim_end_matches(';').trim_end();
        match TRAILING_LIMIT.captures(trimmed) {
            Some(found) => Tail {
                base: found[1].to_string(),
                limit: found[2].parse().ok(),
                offset: found.get(3).is_some(),
            },
            None => Tail {
                base: trimmed.to_string(),
                limit: None,
                offset: TRAILING_OFFSET.is_match(trimmed),
            },
        }
    }
}

/// The SQL's own `LIMIT` (at its end), when it has one.
pub fn limit_of(sql: &str) -> Option<u64> {
    Tail::of(sql).limit
}

impl Plan {
    /// The plan for `sql` with pages of `page` rows (`None`: `--no-paging`)
    /// and `--order-by COL`. SQL with its own `OFFSET`, or a `LIMIT` of at
    /// most a page, is sent as it is; a larger `LIMIT` is paged up to it.
    pub fn of(sql: &str, page: Option<u64>, order_by: Option<&str>) -> Result<Plan> {
        let Tail { base, limit, offset } = Tail::of(sql);
        let ordered = ORDER_BY.is_match(&base);
        if let Some(column) = order_by {
            if ordered {
                return Err(usage("--order-by: the SQL has an ORDER BY of its own"));
            }
            if column.trim().is_empty() {
                return Err(usage("--order-by is empty"));
            }
        }
        let Some(page) = page else {
            return Ok(Plan::AsIs(sql.to_string()));
        };
        if offset || limit.is_some_and(|limit| limit <= page) {
            return Ok(Plan::AsIs(sql.to_string()));
        }
        let base = match order_by {
            Some(column) => format!("{base}\nORDER BY {}", column.trim()),
            None => base,
        };
        Ok(Plan::Pages {
            base,
            page,
            limit,
            ordered: ordered || order_by.is_some(),
        })
    }
}

/// The token a request carries: the ready one, or one signed now.
fn token(credential: &DataCredential) -> Secret {
    match credential {
        DataCredential::Token(token) => token.clone(),
        DataCredential::Signed {
            secret,
            security_context,
        } => Secret::new(
            sign_hs256(secret.expose().as_bytes(), security_context, SystemTime::now()),
            format!("{}, which signed the token", secret.origin()),
        ),
    }
}

/// A JWT signed with HMAC-SHA256: header `{"alg":"HS256","typ":"JWT"}`,
/// payload `claims` plus `iat` and `exp` ([`TOKEN_LIFETIME`] after `now`).
pub fn sign_hs256(secret: &[u8], claims: &Map<String, Value>, now: SystemTime) -> String {
    let issued = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut payload = claims.clone();
    payload.insert("iat".into(), json!(issued));
    payload.insert("exp".into(), json!(issued + TOKEN_LIFETIME.as_secs()));
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let body = URL_SAFE_NO_PAD.encode(Value::Object(payload).to_string());
    let signing_input = format!("{header}.{body}");
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
    let signature = URL_SAFE_NO_PAD.encode(ring::hmac::sign(&key, signing_input.as_bytes()).as_ref());
    format!("{signing_input}.{signature}")
}

/// A client of the data query API.
pub struct DataClient {
    http: Http,
    url: Url,
    credential: DataCredential,
    timezone: Option<String>,
    cache: Option<String>,
    network: Network,
    started: Instant,
}

#[derive(Deserialize)]
struct SchemaColumn {
    name: String,
    /// A string, or an object (`{"Date": false}`, `{"List": {…}}`): any value.
    #[serde(default)]
    column_type: Option<Value>,
}

#[derive(Deserialize)]
struct AnswerLine<'a> {
    #[serde(default)]
    schema: Option<Vec<SchemaColumn>>,
    #[serde(borrow, default)]
    data: Option<Vec<Vec<&'a RawValue>>>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
    #[serde(default, rename = "requestId")]
    request_id: Option<String>,
}

impl DataClient {
    /// A client of the API `settings` name (`--data-url` and the
    /// credential: both checked now). `network` and `started` bound every
    /// query it runs (`--timeout`), each silence, and the tries of a
    /// request (`--retries`; a query is safe to repeat).
    pub fn new(http: Http, settings: &DataSettings, network: Network, started: Instant) -> Result<Self> {
        let mut base = settings.url()?;
        let credential = settings.credential()?;
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        let url = base
            .join("v1/cubesql")
            .map_err(|err| usage(format!("cannot build the data query URL from {base}: {err}")))?;
        Ok(DataClient {
            http,
            url,
            credential,
            timezone: settings.timezone.clone(),
            cache: settings.cache.clone(),
            network,
            started,
        })
    }

    /// The connect timeout its requests use (for what is sent beside them).
    pub fn connect_timeout(&self) -> Duration {
        self.network.connect_timeout
    }

    /// Runs `sql` and streams its answer into `sink`, polling while the
    /// service says "Continue wait". Returns the number of rows.
    pub fn run(&self, sql: &str, sink: &mut dyn RowSink) -> Result<u64> {
        // Without it a real server holds the request silently until the
        // result is ready (and an idle timeout or a proxy cuts it); with
        // it, it answers "Continue wait" and the query is polled.
        let mut body = json!({ "query": sql, "throwContinueWait": true });
        if let Some(timezone) = &self.timezone {
            body["timezone"] = json!(timezone);
        }
        if let Some(cache) = &self.cache {
            body["cache"] = json!(cache);
        }
        let mut pause = FIRST_POLL;
        loop {
            if let Some(count) = self.run_once(&body, sink)? {
                return Ok(count);
            }
            if let Some(limit) = self.network.limits.timeout {
                if self.started.elapsed() + pause >= limit {
                    let expired = timeout(limit);
                    return Err(
                        Fault::new(Kind::Timeout, format!("{expired} while the query was still running")).into(),
                    );
                }
            }
            log::debug!("the query is still running; asking again in {}", human(pause));
            self.http.stop().pause(pause)?;
            pause = (pause * 2).min(MAX_POLL);
        }
    }

    /// Runs `plan` into `sink`: one request, or page after page (the
    /// columns given once) until a page comes short or the SQL's own
    /// `LIMIT` is reached. A page of exactly [`SERVER_ROW_CAP`] rows when
    /// more were asked means the server cut it: an error, not a silent end.
    /// Paging always ends: a page that repeats the one before (the limit
    /// was not applied), or more rows than `expected` (the result's
    /// `totalRows`), is an error. Returns the rows and the requests made.
    pub fn run_plan(&self, plan: &Plan, expected: Option<u64>, sink: &mut dyn RowSink) -> Result<(u64, u64)> {
        let (base, page, limit, ordered) = match plan {
            Plan::AsIs(sql) => return Ok((self.run(sql, sink)?, 1)),
            Plan::Pages {
                base,
                page,
                limit,
                ordered,
            } => (base, *page, *limit, *ordered),
        };
        let mut pages = Pages {
            sink,
            columns_given: false,
            print: PagePrint::default(),
        };
        let (mut total, mut requests) = (0, 0);
        loop {
            let want = limit.map_or(page, |limit| page.min(limit - total));
            if requests == 1 && !ordered {
                log::warn!(
                    "the SQL has no ORDER BY: the pages of an unordered query can overlap or skip rows; order it, or pass --order-by COL"
                );
            }
            // On a line of its own: SQL that ends in a `--` comment (as
            // certified queries often do) would otherwise swallow it.
            let sql = format!("{base}\nLIMIT {want} OFFSET {total}");
            log::debug!("page {}: {sql}", requests + 1);
            pages.sink.page(requests + 1);
            let before = std::mem::take(&mut pages.print);
            let got = self.run(&sql, &mut pages)?;
            requests += 1;
            total += got;
            if got > 0 && pages.print == before {
                return Err(Fault::new(
                    Kind::BadStream,
                    format!("page {requests} of the query repeats page {}: the data query API did not apply LIMIT {want} OFFSET {}; paging stopped", requests - 1, total - got),
                )
                .into());
            }
            if let Some(expected) = expected.filter(|&expected| total > expected) {
                return Err(Fault::new(
                    Kind::BadStream,
                    format!("paging brought {total} rows, more than the {expected} of the result's totalRows: the pages overlap (order the query); paging stopped"),
                )
                .into());
            }
            if got == SERVER_ROW_CAP && want > SERVER_ROW_CAP {
                return Err(Fault::new(
                    Kind::Partial,
                    format!("a page came back with {SERVER_ROW_CAP} of the {want} rows asked: the server cuts answers at {SERVER_ROW_CAP} rows; use --page-size {SERVER_ROW_CAP} or less"),
                )
                .into());
            }
            if got < want || limit.is_some_and(|limit| total >= limit) {
                return Ok((total, requests));
            }
        }
    }

    /// One request: the number of rows, or `None` for "Continue wait".
    fn run_once(&self, body: &Value, sink: &mut dyn RowSink) -> Result<Option<u64>> {
        let retry = Retry::query(
            self.network.attempts(),
            self.network
                .limits
                .timeout
                .map(|limit| limit.saturating_sub(self.started.elapsed())),
        );
        let accept = "application/x-ndjson, application/json";
        let credential = Credential::Token(token(&self.credential));
        let request = Request::json(self.url.clone(), Peer::Data, credential, body, accept, retry)?;
        // Sent from the source's worker, so --timeout, stalls and signals
        // apply while waiting for the answer too.
        let mut source = self.http.stream(request, self.network.limits, self.started);
        source.wait_open().map_err(explain_status)?;
        let mut answer = AnswerFold {
            sink,
            columns: None,
            count: 0,
            continue_wait: false,
        };
        read_lines(source, &mut answer)?;
        if answer.continue_wait {
            return Ok(None);
        }
        if answer.columns.is_none() {
            return Err(bad_stream("the data query answer ended without a schema or data"));
        }
        Ok(Some(answer.count))
    }
}

impl RowSource for DataClient {
    /// Every row of `sql`, a page of [`SERVER_ROW_CAP`] rows at a time.
    fn fetch(&self, sql: &str, expected: Option<u64>, sink: &mut dyn RowSink) -> Result<u64> {
        let plan = Plan::of(sql, Some(SERVER_ROW_CAP), None)?;
        Ok(self.run_plan(&plan, expected, sink)?.0)
    }
}

/// The data query API's client made on first use (`ask --all-rows`): a
/// chat with no truncated result never calls the API, nor runs a
/// profile's `data_token_command`. Each fetch is one request, as the
/// agent's query was run (not paged: no page can repeat, so `totalRows` is
/// checked by the caller).
pub struct OnDemand {
    settings: DataSettings,
    network: Network,
    started: Instant,
    client: std::cell::OnceCell<DataClient>,
}

impl OnDemand {
    /// The API `settings` name (checked already), bounded by `network`
    /// from `started`.
    pub fn new(settings: DataSettings, network: Network, started: Instant) -> OnDemand {
        OnDemand {
            settings,
            network,
            started,
            client: std::cell::OnceCell::new(),
        }
    }
}

impl RowSource for OnDemand {
    fn fetch(&self, sql: &str, _expected: Option<u64>, sink: &mut dyn RowSink) -> Result<u64> {
        let client = match self.client.get() {
            Some(client) => client,
            None => {
                let http = Http::new(self.network.connect_timeout)?;
                let client = DataClient::new(http, &self.settings, self.network, self.started)?;
                self.client.get_or_init(|| client)
            }
        };
        client.run(sql, sink)
    }
}

/// What a page held: its rows and a hash of their cells as sent, to tell
/// a page that repeats the one before.
#[derive(Default, PartialEq, Eq)]
struct PagePrint {
    rows: u64,
    hash: u64,
}

/// The sink of a paged query: the columns of the first page only, every
/// page's rows.
struct Pages<'a> {
    sink: &'a mut dyn RowSink,
    columns_given: bool,
    /// The page being read.
    print: PagePrint,
}

impl RowSink for Pages<'_> {
    fn columns(&mut self, columns: &[Column]) -> Result<()> {
        if !self.columns_given {
            self.columns_given = true;
            self.sink.columns(columns)?;
        }
        Ok(())
    }

    fn rows(&mut self, rows: &[Vec<&RawValue>]) -> Result<()> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        self.print.hash.hash(&mut hasher);
        for cell in rows.iter().flatten() {
            cell.get().hash(&mut hasher);
        }
        self.print.hash = hasher.finish();
        self.print.rows += rows.len() as u64;
        self.sink.rows(rows)
    }
}

/// The data query API's statuses in its own terms: 403 means the token was
/// rejected, an authentication failure (the status's message already names
/// the data API's credential, or for a 404 `--data-url`).
fn explain_status(err: anyhow::Error) -> anyhow::Error {
    match kind_of(&err) {
        Kind::Forbidden => Fault::new(Kind::Auth, format!("{err:#}")).into(),
        _ => err,
    }
}

/// Reads one answer: the schema, data chunks, or an error line.
struct AnswerFold<'a> {
    sink: &'a mut dyn RowSink,
    /// The schema, once it came (handed to the sink then).
    columns: Option<Vec<Column>>,
    count: u64,
    continue_wait: bool,
}

impl LineFold for AnswerFold<'_> {
    fn line(&mut self, line: &Line<'_>) -> Result<()> {
        let content = line.content();
        if self.continue_wait || content.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        let parsed: AnswerLine<'_> = serde_json::from_slice(content).map_err(|err| {
            bad_stream(format!(
                "the data query answer is malformed at line {}: {err}",
                line.number
            ))
        })?;
        if let Some(error) = parsed.error.filter(|raw| raw.get() != "null") {
            let text = json_text(error.get()).into_owned();
            if text == CONTINUE_WAIT && self.count == 0 && self.columns.is_none() {
                self.continue_wait = true;
                return Ok(());
            }
            let request = parsed
                .request_id
                .map(|id| format!(" (request {id})"))
                .unwrap_or_default();
            // Whole: the message lists the valid members, the fix.
            return Err(bad_stream(format!(
                "the data query failed: {}{request}",
                shorten_to(&text, SERVICE_MESSAGE_CHARS)
            )));
        }
        if let Some(schema) = parsed.schema {
            let mut columns: Vec<Column> = schema
                .into_iter()
                .map(|c| Column::from_sent(c.name, c.column_type.as_ref()))
                .collect();
            unique_names(&mut columns);
            match &self.columns {
                None => self.sink.columns(&columns)?,
                Some(first) if *first == columns => {}
                Some(_) => {
                    return Err(bad_stream(format!(
                        "the data query answer changed its schema at line {}",
                        line.number
                    )))
                }
            }
            self.columns = Some(columns);
        }
        if let Some(rows) = parsed.data {
            let Some(columns) = &self.columns else {
                return Err(bad_stream("the data query answer sent rows before its schema"));
            };
            if let Some(row) = rows.iter().find(|row| row.len() != columns.len()) {
                return Err(bad_stream(format!(
                    "the data query answer has a row of {} values for {} columns at line {}",
                    row.len(),
                    columns.len(),
                    line.number
                )));
            }
            self.sink.rows(&rows)?;
            self.count += rows.len() as u64;
        }
        Ok(())
    }

    fn broken(&mut self, err: &io::Error) -> anyhow::Error {
        bad_stream(format!(
            "the data query answer was cut after {} rows: {err}",
            self.count
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signed_token_verifies_with_the_secret_and_carries_the_context() {
        let context: Map<String, Value> = serde_json::from_str(r#"{"tenant":"t1"}"#).unwrap();
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let token = sign_hs256(b"s3cret", &context, now);
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3);
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, b"s3cret");
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        ring::hmac::verify(&key, format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature).unwrap();
        let payload: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(
            payload,
            json!({"tenant": "t1", "iat": 1_700_000_000u64, "exp": 1_700_000_600u64})
        );
    }
}

#[cfg(test)]
mod plan_tests {
    use super::*;

    fn pages(base: &str, page: u64, limit: Option<u64>, ordered: bool) -> Plan {
        Plan::Pages {
            base: base.to_string(),
            page,
            limit,
            ordered,
        }
    }

    #[test]
    fn sql_is_paged_unless_it_limits_itself_to_a_page() {
        let plan = |sql: &str| Plan::of(sql, Some(1000), None).unwrap();
        assert_eq!(
            plan("SELECT a FROM t ORDER BY a;"),
            pages("SELECT a FROM t ORDER BY a", 1000, None, true)
        );
        assert_eq!(
            plan("SELECT a FROM t limit 5000"),
            pages("SELECT a FROM t", 1000, Some(5000), false)
        );
        assert_eq!(
            plan("SELECT a FROM t LIMIT 10"),
            Plan::AsIs("SELECT a FROM t LIMIT 10".into())
        );
        assert_eq!(
            plan("SELECT a FROM t LIMIT 5000 OFFSET 10"),
            Plan::AsIs("SELECT a FROM t LIMIT 5000 OFFSET 10".into())
        );
        assert_eq!(
            Plan::of("SELECT a FROM t", None, None).unwrap(),
            Plan::AsIs("SELECT a FROM t".into())
        );
        assert_eq!(
            Plan::of("SELECT a FROM t", Some(10), Some("a")).unwrap(),
            pages("SELECT a FROM t\nORDER BY a", 10, None, true)
        );
        assert!(Plan::of("SELECT a FROM t ORDER BY a", Some(10), Some("a")).is_err());
    }
}
