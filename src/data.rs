//! The data query API (`POST {data-url}/v1/cubesql`): authentication (a
//! token, or a short-lived HS256 JWT signed with the deployment's secret),
//! the request, polling while the service answers "Continue wait", retries
//! of failures that are safe to repeat, and the NDJSON answer (a `schema`
//! line, `data` chunks, or an `error` line) streamed into a [`RowSink`].

use std::io::Read;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use reqwest::Url;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use crate::config::{service_url, Secret};
use crate::exit::{bad_stream, code_of, usage, ExitCode, Fault};
use crate::feed::{stop_of, Feed, Limits, OpenError, Stop};
use crate::http::{shorten, Credential, Http, Retry};
use crate::output::Notes;
use crate::profile::{run_secret_command, Profile};
use crate::results::Column;
use crate::stream::lines::{Line, LineReader};
use crate::stream::message::json_text;
use crate::stream::parallel::fold_batch;

/// How long a signed token is valid: enough for one request and its answer.
const TOKEN_LIFETIME: Duration = Duration::from_secs(10 * 60);
/// Tries of one request after 5xx or connection failures (a query is safe to repeat).
const ATTEMPTS: u32 = 4;
/// The first pause before asking again after "Continue wait"; it doubles up to [`MAX_POLL`].
const FIRST_POLL: Duration = Duration::from_millis(500);
/// The longest pause between polls (the official client waits about 5 s).
const MAX_POLL: Duration = Duration::from_secs(5);
/// The answer the service gives while a query is still running.
const CONTINUE_WAIT: &str = "Continue wait";

/// Where the data query API's credential comes from.
pub enum DataAuth {
    /// `ANALYST_DATA_TOKEN`: a ready JWT.
    Token(Secret),
    /// `ANALYST_DATA_SECRET`: sign a fresh token per request, whose payload
    /// is the security context.
    Signed {
        /// The deployment's API secret.
        secret: Secret,
        /// The token's payload (before `exp`).
        security_context: Map<String, Value>,
    },
}

impl DataAuth {
    /// From `ANALYST_DATA_TOKEN` (wins) or `ANALYST_DATA_SECRET`, else the
    /// profile's `data_token_command`; a usage error naming both variables
    /// when there is none.
    pub fn from_env(security_context: Option<Map<String, Value>>, profile: Option<&Profile>) -> Result<DataAuth> {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        if let Some(token) = var("ANALYST_DATA_TOKEN") {
            let token = token.strip_prefix("Bearer ").unwrap_or(&token).to_string();
            return Ok(DataAuth::Token(Secret::new(token)));
        }
        if let Some(secret) = var("ANALYST_DATA_SECRET") {
            return Ok(DataAuth::Signed {
                secret: Secret::new(secret),
                security_context: security_context.unwrap_or_default(),
            });
        }
        if let Some((command, name)) = profile.and_then(|p| p.data_token_command.as_ref().map(|c| (c, &p.name))) {
            return Ok(DataAuth::Token(run_secret_command(
                command,
                "data_token_command",
                name,
            )?));
        }
        Err(usage(
            "no credential for the data query API: set ANALYST_DATA_TOKEN (a JWT) or ANALYST_DATA_SECRET (the deployment's API secret); the chat API key does not work there",
        ))
    }

    fn token(&self) -> Secret {
        match self {
            DataAuth::Token(token) => token.clone(),
            DataAuth::Signed {
                secret,
                security_context,
            } => Secret::new(sign_hs256(
                secret.expose().as_bytes(),
                security_context,
                SystemTime::now(),
            )),
        }
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

/// Receives a query's answer as it streams.
pub trait RowSink {
    /// The columns, once, before any row.
    fn columns(&mut self, columns: &[Column]) -> Result<()>;
    /// A batch of rows, values in column order as the service sent them,
    /// borrowed from the answer line.
    fn rows(&mut self, rows: &[Vec<&RawValue>]) -> Result<()>;
}

/// A sink that keeps every row, for outputs that need them all at once
/// (`ask --all-rows -o json` and `-o vega`).
#[derive(Debug, Default)]
pub struct Collected {
    /// The answer's columns.
    pub columns: Vec<Column>,
    /// Every row, values as sent.
    pub rows: Vec<Vec<Value>>,
}

impl RowSink for Collected {
    fn columns(&mut self, columns: &[Column]) -> Result<()> {
        self.columns = columns.to_vec();
        Ok(())
    }

    fn rows(&mut self, rows: &[Vec<&RawValue>]) -> Result<()> {
        for row in rows {
            let values = row
                .iter()
                .map(|cell| serde_json::from_str(cell.get()))
                .collect::<Result<Vec<Value>, _>>()?;
            self.rows.push(values);
        }
        Ok(())
    }
}

/// Options passed through to the data query API.
#[derive(Clone, Debug, Default)]
pub struct QueryOptions {
    /// `timezone`.
    pub timezone: Option<String>,
    /// `cache`: `stale-if-slow`, `stale-while-revalidate`, `must-revalidate`, `no-cache`.
    pub cache: Option<String>,
}

/// A client of the data query API.
pub struct DataClient {
    http: Http,
    url: Url,
    auth: DataAuth,
    options: QueryOptions,
    notes: Notes,
}

#[derive(Deserialize)]
struct SchemaColumn {
    name: String,
    #[serde(default)]
    column_type: Option<String>,
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

/// What one request's answer turned out to be.
enum Answer {
    /// The rows streamed into the sink; how many.
    Rows(u64),
    /// "Continue wait": ask again later.
    ContinueWait,
}

impl DataClient {
    /// A client of the API at `data_url` (`--data-url`), e.g.
    /// `https://<deployment>.cubecloudapp.dev/cubejs-api`.
    pub fn new(http: Http, data_url: &str, auth: DataAuth, options: QueryOptions, notes: &Notes) -> Result<Self> {
        let mut base = service_url(data_url, "--data-url")?;
        if !base.path().ends_with('/') {
            base.set_path(&format!("{}/", base.path()));
        }
        let url = base
            .join("v1/cubesql")
            .map_err(|err| usage(format!("cannot build the data query URL from {base}: {err}")))?;
        Ok(DataClient {
            http,
            url,
            auth,
            options,
            notes: notes.clone(),
        })
    }

    /// Runs `sql` and streams its answer into `sink`, polling while the
    /// service says "Continue wait". Returns the number of rows. `limits`
    /// and `started` bound the whole run (`--timeout`) and each silence.
    pub fn run(&self, sql: &str, sink: &mut dyn RowSink, limits: Limits, started: Instant) -> Result<u64> {
        let mut body = json!({ "query": sql });
        if let Some(timezone) = &self.options.timezone {
            body["timezone"] = json!(timezone);
        }
        if let Some(cache) = &self.options.cache {
            body["cache"] = json!(cache);
        }
        let mut pause = FIRST_POLL;
        loop {
            if let Answer::Rows(count) = self.run_once(&body, sink, limits, started)? {
                return Ok(count);
            }
            if let Some(limit) = limits.timeout {
                if started.elapsed() + pause >= limit {
                    return Err(Fault::new(
                        ExitCode::Timeout,
                        format!("{} while the query was still running", Stop::Timeout(limit)),
                    )
                    .into());
                }
            }
            self.notes.debug(&format!(
                "the query is still running; asking again in {}",
                crate::feed::human(pause)
            ));
            wait_or_stop(pause)?;
            pause = (pause * 2).min(MAX_POLL);
        }
    }

    fn run_once(&self, body: &Value, sink: &mut dyn RowSink, limits: Limits, started: Instant) -> Result<Answer> {
        let retry = Retry::query(
            ATTEMPTS,
            limits.timeout.map(|limit| limit.saturating_sub(started.elapsed())),
        );
        let (http, url, token, body) = (self.http.clone(), self.url.clone(), self.auth.token(), body.clone());
        // Sent from the feed's worker, so --timeout, stalls and signals
        // apply while waiting for the answer too.
        let send = move || -> Result<Box<dyn Read + Send>> {
            let accept = "application/x-ndjson, application/json";
            Ok(Box::new(http.post_json_retrying(
                &url,
                Credential::Token(&token),
                &body,
                accept,
                retry,
            )?))
        };
        let mut feed = Feed::start(send, limits, started);
        match feed.wait_open() {
            Ok(()) => {}
            Err(OpenError::Failed(err)) => return Err(explain_status(err)),
            Err(OpenError::Stopped(stop)) => return Err(stopped(stop)),
        }
        read_answer(LineReader::new(feed), sink)
    }
}

/// The data query API's statuses in its own terms: 403 means the token was
/// rejected (exit 3), 404 a wrong `--data-url`.
fn explain_status(err: anyhow::Error) -> anyhow::Error {
    match code_of(&err) {
        ExitCode::Forbidden | ExitCode::Auth => Fault::new(
            ExitCode::Auth,
            format!("{err:#}; the data query API rejected the token: check ANALYST_DATA_TOKEN or ANALYST_DATA_SECRET"),
        )
        .into(),
        ExitCode::NotFound => Fault::new(ExitCode::NotFound, format!("{err:#}; check --data-url")).into(),
        _ => err,
    }
}

/// Sleeps `pause`, unless a signal arrives first.
fn wait_or_stop(pause: Duration) -> Result<()> {
    let until = Instant::now() + pause;
    while Instant::now() < until {
        if let Some(signal) = crate::signals::received() {
            return Err(stopped(Stop::Signal(signal)));
        }
        std::thread::sleep(Duration::from_millis(50).min(until.saturating_duration_since(Instant::now())));
    }
    Ok(())
}

fn stopped(stop: Stop) -> anyhow::Error {
    Fault::new(stop.exit_code(), stop.to_string()).into()
}

/// Reads one answer: the schema, data chunks, or an error line. Lines are
/// parsed on two cores when many have arrived at once (see
/// [`fold_batch`]), and handed to `sink` in order.
fn read_answer(mut reader: LineReader<Feed>, sink: &mut dyn RowSink) -> Result<Answer> {
    let mut columns_sent = false;
    let mut count = 0u64;
    loop {
        let batch = match reader.next_batch() {
            Ok(Some(batch)) => batch,
            Ok(None) => break,
            Err(err) => {
                if let Some(stop) = stop_of(&err) {
                    return Err(stopped(stop));
                }
                return Err(bad_stream(format!(
                    "the data query answer was cut after {count} rows: {err}"
                )));
            }
        };
        let end = fold_batch(batch, parse_answer_line, |line, parsed| {
            let parsed = match parsed {
                Ok(Some(parsed)) => parsed,
                Ok(None) => return None,
                Err(err) => {
                    return Some(Err(bad_stream(format!(
                        "the data query answer is malformed at line {}: {err}",
                        line.number
                    ))))
                }
            };
            fold_answer_line(parsed, sink, &mut columns_sent, &mut count).transpose()
        });
        if let Some(end) = end {
            return end;
        }
    }
    if !columns_sent {
        return Err(bad_stream("the data query answer ended without a schema or data"));
    }
    Ok(Answer::Rows(count))
}

/// Reads one line of an answer; `None` for a blank line.
fn parse_answer_line<'a>(line: &Line<'a>) -> serde_json::Result<Option<AnswerLine<'a>>> {
    let content = line.content();
    if content.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(content).map(Some)
}

/// Folds one line of an answer into `sink`: its schema, its rows (counted
/// in `count`), or its error. `Some` when the answer ends with this line.
fn fold_answer_line(
    parsed: AnswerLine<'_>,
    sink: &mut dyn RowSink,
    columns_sent: &mut bool,
    count: &mut u64,
) -> Result<Option<Answer>> {
    if let Some(error) = parsed.error.filter(|raw| raw.get() != "null") {
        let text = json_text(error.get()).into_owned();
        if text == CONTINUE_WAIT && *count == 0 && !*columns_sent {
            return Ok(Some(Answer::ContinueWait));
        }
        let request = parsed
            .request_id
            .map(|id| format!(" (request {id})"))
            .unwrap_or_default();
        return Err(bad_stream(format!(
            "the data query failed: {}{request}",
            shorten(&text)
        )));
    }
    if let Some(schema) = parsed.schema {
        let columns: Vec<Column> = schema
            .into_iter()
            .map(|c| Column {
                name: c.name,
                column_type: c.column_type.unwrap_or_else(|| "String".into()),
            })
            .collect();
        sink.columns(&columns)?;
        *columns_sent = true;
    }
    if let Some(rows) = parsed.data {
        if !*columns_sent {
            return Err(bad_stream("the data query answer sent rows before its schema"));
        }
        sink.rows(&rows)?;
        *count += rows.len() as u64;
    }
    Ok(None)
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
