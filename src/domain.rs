//! The plain types every layer shares, below all of them: the limits of a
//! command's network calls and streams, what the terminal shows while
//! `ask` runs, and what a turn spent, typed once from its `__usage__` line
//! (which the stream reads, the history records, `check` budgets and
//! reports) and what it cost at the config file's prices, the question of `ask` with its images, and whether a URL is
//! this machine's. The settings resolve them; the layers below only read
//! them.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;

use anyhow::Result;

use crate::error::usage;
use crate::text::head;

/// The most of an answer a record of a turn keeps (the history, a `check`
/// report): a longer one is kept cut, ending with [`ANSWER_CUT_MARKER`].
pub const MAX_KEPT_ANSWER: usize = 1 << 20;

/// What ends an answer kept cut.
pub const ANSWER_CUT_MARKER: &str = "\n\n[analyst: the answer was longer than 1 MiB; its first 1 MiB is kept]";

/// An answer as a record of its turn keeps it: its first
/// [`MAX_KEPT_ANSWER`] bytes (never splitting a character), and
/// [`ANSWER_CUT_MARKER`] when there was more (`cut`: the stream's copy
/// already lacks some).
pub fn kept_answer(answer: &str, cut: bool) -> String {
    let mut kept = head(answer, MAX_KEPT_ANSWER).to_string();
    if cut || kept.len() < answer.len() {
        kept.push_str(ANSWER_CUT_MARKER);
    }
    kept
}

/// When to give up on a stream: the whole command's `--timeout` and the
/// longest silence accepted (`--idle-timeout`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// `--timeout`: the whole command's wall-clock limit.
    pub timeout: Option<Duration>,
    /// `--idle-timeout`: the longest silence accepted from a source.
    pub idle: Option<Duration>,
}

/// How to reach the network: what every command that sends a request needs.
#[derive(Clone, Copy, Debug)]
pub struct Network {
    /// `--connect-timeout`.
    pub connect_timeout: Duration,
    /// `--timeout` and `--idle-timeout`.
    pub limits: Limits,
    /// `--retries`: how many times a transient failure is tried again.
    pub retries: u32,
}

impl Network {
    /// Tries in all for a request that is safe to repeat: the first and
    /// `--retries` more.
    pub fn attempts(&self) -> u32 {
        self.retries.saturating_add(1)
    }
}

/// What the terminal shows while `ask` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Display {
    /// A spinner on stderr (a terminal, and no `-q`).
    pub spinner: bool,
    /// The answer streamed to stdout as it arrives (`-o answer` to a terminal).
    pub stream_answer: bool,
    /// The terminal's width in columns, when stdout is a terminal (`-o table`).
    pub width: Option<u16>,
    /// The streamed answer's Markdown rendered with styles (bold, colour),
    /// not only laid out.
    pub styled: bool,
}

/// What a turn spent, from its `__usage__` line (or several turns',
/// summed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// `inputTokens`.
    pub input_tokens: u64,
    /// `outputTokens`.
    pub output_tokens: u64,
    /// `cacheReadTokens`.
    pub cache_read_tokens: u64,
    /// `cacheWriteTokens`.
    pub cache_write_tokens: u64,
    /// `totalTokens`.
    pub total_tokens: u64,
    /// `llmCalls`.
    pub llm_calls: u64,
}

impl Usage {
    /// The counts of a `__usage__` line's `usage` object (a count it lacks is 0).
    pub fn of(usage: &Value) -> Usage {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        Usage {
            input_tokens: count("inputTokens"),
            output_tokens: count("outputTokens"),
            cache_read_tokens: count("cacheReadTokens"),
            cache_write_tokens: count("cacheWriteTokens"),
            total_tokens: count("totalTokens"),
            llm_calls: count("llmCalls"),
        }
    }

    /// Adds another's counts.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.total_tokens += other.total_tokens;
        self.llm_calls += other.llm_calls;
    }
}

/// A model's price in US dollars per million tokens (`[prices."MODEL"]`).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Per million input tokens.
    #[serde(default)]
    pub input: f64,
    /// Per million output tokens.
    #[serde(default)]
    pub output: f64,
    /// Per million cache-read tokens.
    #[serde(default)]
    pub cache_read: f64,
    /// Per million cache-write tokens.
    #[serde(default)]
    pub cache_write: f64,
}

impl Price {
    /// What `spent` costs at this price.
    pub fn of(&self, spent: &Usage) -> f64 {
        (spent.input_tokens as f64 * self.input
            + spent.output_tokens as f64 * self.output
            + spent.cache_read_tokens as f64 * self.cache_read
            + spent.cache_write_tokens as f64 * self.cache_write)
            / 1e6
    }
}

/// The config file's price table (`[prices]`), by model name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prices(pub Vec<(String, Price)>);

impl Prices {
    /// Whether no model has a price.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The price of `model`, when the table has one.
    pub fn of(&self, model: &str) -> Option<Price> {
        self.0.iter().find(|(name, _)| name == model).map(|(_, price)| *price)
    }

    /// What a turn cost in US dollars: each model's counts at its price,
    /// or the turn's counts at its one model's price (or at the price all
    /// its models share); `None` when a price is missing or the split is
    /// not known.
    pub fn turn(&self, usage: &UsageRecord) -> Option<f64> {
        if !usage.by_model.is_empty() {
            return usage
                .by_model
                .iter()
                .map(|part| self.of(&part.model).map(|price| price.of(&part.counts)))
                .sum();
        }
        let prices: Vec<Price> = usage.models.iter().map(|model| self.of(model)).collect::<Option<_>>()?;
        let first = prices.first()?;
        prices
            .iter()
            .all(|price| price == first)
            .then(|| first.of(&usage.counts))
    }
}

/// What a turn's `__usage__` reported: its counts and models.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRecord {
    /// The token and call counts.
    #[serde(flatten)]
    pub counts: Usage,
    /// `models`, their names.
    pub models: Vec<String>,
    /// Each model's own counts, when the usage line gave them (entries of
    /// `models` that are objects): what a turn of several models is
    /// priced by.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_model: Vec<ModelUsage>,
}

/// One model's part of a turn's usage.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    /// The model's name.
    pub model: String,
    /// What it spent.
    #[serde(flatten)]
    pub counts: Usage,
}

impl UsageRecord {
    /// The counts and models of a `__usage__` line's `usage` object: a
    /// model is a name, or an object with its name (`model`, `name` or
    /// `id`) and its own counts.
    pub fn of(usage: &Value) -> UsageRecord {
        let mut record = UsageRecord {
            counts: Usage::of(usage),
            ..UsageRecord::default()
        };
        record.read_models(usage.get("models"));
        record
    }

    /// Reads `models` (as sent, or as recorded by [`UsageRecord::models_json`]).
    fn read_models(&mut self, models: Option<&Value>) {
        for model in models.and_then(Value::as_array).into_iter().flatten() {
            match model {
                Value::String(name) => self.models.push(name.clone()),
                Value::Object(fields) => {
                    let name = ["model", "name", "id"]
                        .iter()
                        .find_map(|key| fields.get(*key).and_then(Value::as_str));
                    let Some(name) = name else { continue };
                    self.models.push(name.to_string());
                    self.by_model.push(ModelUsage {
                        model: name.to_string(),
                        counts: Usage::of(model),
                    });
                }
                _ => {}
            }
        }
    }

    /// The models as the history keeps them: their names, or each with its
    /// counts when the usage line gave them.
    pub fn models_json(&self) -> String {
        let models = match self.by_model.is_empty() {
            true => serde_json::to_value(&self.models),
            false => serde_json::to_value(&self.by_model),
        };
        models.map(|models| models.to_string()).unwrap_or_default()
    }

    /// The usage of a recorded turn: its counts and its `models` column
    /// (as [`UsageRecord::models_json`] wrote it).
    pub fn recorded(counts: Usage, models: &str) -> UsageRecord {
        let mut record = UsageRecord {
            counts,
            ..UsageRecord::default()
        };
        record.read_models(serde_json::from_str::<Value>(models).ok().as_ref());
        record
    }
}

/// The question of `ask` and the thread it belongs to (none for a saved
/// stream read again).
#[derive(Clone, Debug, Default)]
pub struct Question {
    /// The question (`None` prints the thread so far).
    pub input: Option<String>,
    /// The thread to continue.
    pub chat_id: Option<String>,
    /// The question's `messageId` (`<unix ms>-message`, new for each
    /// question), or the suspended one `--resume` names; none for a read of
    /// the thread.
    pub message_id: Option<String>,
    /// `activeBranchName`.
    pub branch: Option<String>,
    /// `isDefaultBranch` (sent only with a branch).
    pub default_branch: bool,
    /// Images sent with the question (`--image`).
    pub images: Vec<Arc<Image>>,
}

impl Question {
    /// True for a read of the thread so far: no question and no turn to
    /// resume, so nothing is asked (and no turn recorded).
    pub fn reads_thread(&self) -> bool {
        self.input.is_none() && self.message_id.is_none()
    }
}

/// One image of the chat request's `images`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    /// The image's bytes, in base64.
    pub data: String,
    /// Its type, told from its bytes: `image/png`, `image/jpeg`,
    /// `image/gif` or `image/webp`.
    pub mime_type: &'static str,
    /// The file's name (`stdin` for standard input).
    pub name: String,
}

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

/// A new `messageId`: the time now in Unix milliseconds, then `-message`.
pub fn new_message_id() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis());
    format!("{millis}-message")
}

/// True for a `messageId` of the service's form: 13 or more digits, then
/// `-message`.
pub fn is_message_id(id: &str) -> bool {
    id.strip_suffix("-message")
        .is_some_and(|digits| digits.len() >= 13 && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Parses and checks a service URL given by `flag`: it must be absolute
/// `https://`, or `http://` to a loopback host (the key must not cross a
/// network in clear text).
pub fn service_url(text: &str, flag: &str) -> Result<Url> {
    let url = Url::parse(text.trim()).map_err(|err| {
        let shown = without_credentials(text);
        match err {
            // `example.com/…`: the scheme is what is missing.
            url::ParseError::RelativeUrlWithoutBase => usage(format!(
                "{flag} {shown:?} has no scheme: add https:// (https://{})",
                shown.trim()
            )),
            err => usage(format!("{flag} {shown:?} is not a valid URL: {err}")),
        }
    })?;
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

/// US dollars for people: cents from a dollar up (`$1.24`), else four
/// decimals (`$0.0042`), as an agent's turn often costs less than a cent:
/// the one way `check` and `history usage` write money.
pub fn dollars(amount: f64) -> String {
    match amount >= 1.0 {
        true => format!("${amount:.2}"),
        false => format!("${amount:.4}"),
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
