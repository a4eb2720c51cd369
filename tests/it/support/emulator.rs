//! The loopback emulator itself: its routes, its state, the requests it
//! recorded, and what a test said would be requested (checked when it is
//! dropped).

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::Value;

use super::*;

/// A request the emulator received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Thread {
    pub(crate) owner: String,
    pub(crate) messages: Vec<(String, String)>,
    /// The lines of the thread's finished turns, replayed before the
    /// `__cutoff__` of a resumed turn.
    pub(crate) past: Vec<String>,
    /// The turn still running (its connection dropped) or suspended.
    pub(crate) turn: Option<TurnLog>,
}

/// A turn the service has not finished sending: the emulated agent's whole
/// answer is known in advance, and `produced` says how far the service got.
#[derive(Clone, Debug)]
pub(crate) struct TurnLog {
    pub(crate) message_id: Option<String>,
    /// The turn's lines after its `__cutoff__`.
    pub(crate) lines: Vec<String>,
    /// How many of them the service has produced.
    pub(crate) produced: usize,
    /// The server running it restarted: the turn waits to be resumed.
    pub(crate) suspended: bool,
}

/// How the emulated service breaks off a connection that sends a turn
/// (each connection takes the next one queued with
/// [`Emulator::interrupt`]).
#[derive(Clone, Copy, Debug)]
pub enum Interruption {
    /// The connection drops after `after` of the turn's lines (in the
    /// middle of the next one with `mid_line`); the turn goes on on the
    /// server, which produces one more line before the client comes back.
    Drop { after: usize, mid_line: bool },
    /// The server restarts after `after` lines: the stream ends with
    /// `__suspended__` and `__usage__`, and the turn waits to be resumed.
    Suspend { after: usize },
}

/// How the emulated agent answers questions that no test scripted.
#[derive(Clone, Debug)]
pub struct Agent {
    pub family: Family,
    pub shape: Shape,
    pub query_key: bool,
    pub final_node: bool,
    pub rows: usize,
    pub returned: usize,
    pub chunking: Chunking,
    pub delay: Duration,
    /// Extra thinking lines, to make a long (with `delay`, slow) stream.
    pub padding: usize,
    /// Answer with this SQL, run on the warehouse (first 100 rows in the
    /// stream), instead of the synthetic revenue by month.
    pub warehouse_sql: Option<String>,
    /// How the chart spec is sent.
    pub spec_form: SpecForm,
    /// Columns named `measure(…)` while the spec names short member names.
    pub measure_names: bool,
    /// Answers that vary from run to run, on a schedule: the n-th new chat
    /// answers as usual when `schedule[(n - 1) % len]` is true, and says
    /// nothing when false (empty: always as usual). [`FLAKY`] passes a
    /// case 3 runs of 5.
    pub schedule: Vec<bool>,
    /// The input tokens each turn reports in its `__usage__` line (the
    /// total is 280 more).
    pub tokens: u64,
    /// How the agent answers questions that contain a phrase: the first
    /// phrase found decides (others are answered as usual).
    pub answers: Vec<(String, Answer)>,
    /// How many rows of an [`Answer::Sql`] result the stream carries.
    pub returned_rows: usize,
}

/// The schedule of an agent that answers nothing useful in the 4th and
/// 5th of every five new chats (see [`Agent::schedule`]).
pub const FLAKY: [bool; 5] = [true, true, true, false, false];

/// What the agent does for a question (see [`Agent::answers`]).
#[derive(Clone, Debug)]
pub enum Answer {
    /// Runs this SQL on the warehouse and reports its result (the first
    /// [`Agent::returned_rows`] rows, `totalRows` of all).
    Sql(String),
    /// Reports this result exactly as given (values as they are, numbers
    /// no double holds included).
    Result(SqlCall),
    /// Runs this SQL, which fails with this error.
    FailingSql(String, String),
    /// Answers in words only, without a query.
    NoQuery,
    /// Answers with this text (a Markdown table: the results inline, as
    /// an agent on Cube's `chassis` runtime does), without a query.
    Inline(String),
    /// Ends the stream with an in-stream error after the metadata search.
    StreamError(String),
}

impl Default for Agent {
    fn default() -> Self {
        Agent {
            family: Family::Semantic,
            shape: Shape::Arrays,
            query_key: false,
            final_node: true,
            rows: 12,
            returned: 12,
            chunking: Chunking::Lines,
            delay: Duration::ZERO,
            padding: 0,
            warehouse_sql: None,
            spec_form: SpecForm::Text,
            measure_names: false,
            schedule: Vec::new(),
            tokens: 1000,
            answers: Vec::new(),
            returned_rows: 100,
        }
    }
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) requests: Vec<Recorded>,
    pub(crate) scripted: HashMap<Route, VecDeque<Reply>>,
    /// Every chat an abort was accepted for, in order.
    pub(crate) aborted: Vec<String>,
    /// Chats whose open streams must stop: an abort stops what is running,
    /// not the chat's later turns.
    pub(crate) stopping: Vec<String>,
    /// The chats with a stream being sent, once per stream.
    pub(crate) streaming: Vec<String>,
    pub(crate) sessions_created: u64,
    pub(crate) continue_waits: usize,
    pub(crate) open_chats: usize,
    pub(crate) most_open_chats: usize,
    pub(crate) threads: HashMap<String, Thread>,
    /// How the next connections that send a turn break off.
    pub(crate) interruptions: VecDeque<Interruption>,
    pub(crate) chats_created: u64,
    pub(crate) agent: Agent,
    /// Embed sessions minted and not revoked, and the ids revoked.
    pub(crate) sessions: Vec<String>,
    pub(crate) revoked: Vec<String>,
    /// How many requests each route must have had when the emulator is dropped.
    pub(crate) expected: Vec<(Route, usize)>,
}

/// The endpoints the emulator serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// `…/chat/stream-chat-state`
    Chat,
    /// `…/chat/abort`
    Abort,
    /// `/api/v1/embed/generate-session`
    Session,
    /// `/api/v1/embed/session/revoke`
    Revoke,
    /// `/cubejs-api/v1/cubesql`
    Data,
}

pub(crate) fn route_of(path: &str) -> Option<Route> {
    let agent = format!("/api/v1/public/{ACCOUNT}/agents/{AGENT}/chat/");
    let deployment = format!("/api/v1/public/{ACCOUNT}/deployments/{DEPLOYMENT}/chat/");
    match path {
        "/api/v1/embed/generate-session" => Some(Route::Session),
        "/api/v1/embed/session/revoke" => Some(Route::Revoke),
        "/cubejs-api/v1/cubesql" => Some(Route::Data),
        _ => match path.strip_prefix(&agent).or_else(|| path.strip_prefix(&deployment)) {
            Some("stream-chat-state") => Some(Route::Chat),
            Some("abort") => Some(Route::Abort),
            _ => None,
        },
    }
}

/// A running emulator on 127.0.0.1; stops accepting when dropped.
pub struct Emulator {
    addr: std::net::SocketAddr,
    state: Arc<Mutex<State>>,
}

impl Emulator {
    pub fn start() -> Emulator {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State::default()));
        let shared = Arc::clone(&state);
        thread::spawn(move || {
            for connection in listener.incoming() {
                let Ok(connection) = connection else { continue };
                let shared = Arc::clone(&shared);
                thread::spawn(move || {
                    let _ = serve(connection, &shared);
                });
            }
        });
        Emulator { addr, state }
    }

    pub fn chat_url(&self) -> String {
        format!(
            "http://{}/api/v1/public/{ACCOUNT}/agents/{AGENT}/chat/stream-chat-state",
            self.addr
        )
    }

    /// The chat URL of the deployment's automatic agent, which takes only a
    /// Cube token.
    pub fn deployment_chat_url(&self) -> String {
        format!(
            "http://{}/api/v1/public/{ACCOUNT}/deployments/{DEPLOYMENT}/chat/stream-chat-state",
            self.addr
        )
    }

    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues a reply for the next chat request.
    pub fn script(&self, reply: Reply) {
        self.script_on(Route::Chat, reply);
    }

    /// Queues a reply for the next request to `route` that passes the key check.
    pub fn script_on(&self, route: Route, reply: Reply) {
        self.state
            .lock()
            .unwrap()
            .scripted
            .entry(route)
            .or_default()
            .push_back(reply);
    }

    /// Says that `route` must have been requested exactly `count` times by
    /// the time the emulator is dropped (checked in `Drop`).
    pub fn expect(&self, route: Route, count: usize) {
        self.state.lock().unwrap().expected.push((route, count));
    }

    /// The requests received on `route`.
    pub fn requests_on(&self, route: Route) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| route_of(&r.path) == Some(route))
            .collect()
    }

    /// The data query API base (`--data-url`).
    pub fn data_url(&self) -> String {
        format!("http://{}/cubejs-api", self.addr)
    }

    /// The chats the service has started, in order (`chat-0001`, …).
    pub fn chats_started(&self) -> Vec<String> {
        let count = self.state.lock().unwrap().chats_created;
        (1..=count).map(|n| format!("chat-{n:04}")).collect()
    }

    /// The most chat streams that were being sent at the same time.
    pub fn most_open_chats(&self) -> usize {
        self.state.lock().unwrap().most_open_chats
    }

    /// The next `n` data queries answer "Continue wait" before running.
    pub fn continue_waits(&self, n: usize) {
        self.state.lock().unwrap().continue_waits = n;
    }

    /// The abort URL of the emulated agent.
    pub fn abort_url(&self) -> String {
        self.chat_url().replace("/stream-chat-state", "/abort")
    }

    /// Queues how the next connection that sends a turn breaks off.
    pub fn interrupt(&self, interruption: Interruption) {
        self.state.lock().unwrap().interruptions.push_back(interruption);
    }

    /// Changes how unscripted questions are answered.
    /// The service forgets every chat (a later turn on one is a 404), as
    /// it does with chats past their retention.
    pub fn forget_chats(&self) {
        self.state.lock().unwrap().threads.clear();
    }

    pub fn agent(&self, change: impl FnOnce(&mut Agent)) {
        change(&mut self.state.lock().unwrap().agent);
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// The JSON bodies of the chat requests received.
    pub fn chat_bodies(&self) -> Vec<Value> {
        self.requests()
            .iter()
            .filter(|r| r.path.ends_with("/stream-chat-state"))
            .map(Recorded::json)
            .collect()
    }

    /// Like [`Emulator::analyst`], as a plain `std::process::Command` for
    /// tests that manage the child's pipes or signals themselves.
    pub fn command(&self) -> std::process::Command {
        self.command_for(assert_cmd::cargo::cargo_bin("analyst"))
    }

    /// `program` (analyst, curl, …) with the environment of
    /// [`Emulator::command`]: the emulator's URL, key and user, no stray
    /// `ANALYST_*`, no config file, no colour.
    pub fn command_for(&self, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
        let mut command = clean_command(program);
        command
            .env("ANALYST_CHAT_URL", self.chat_url())
            .env("ANALYST_API_KEY", API_KEY)
            .env("ANALYST_EXTERNAL_ID", "ci-bot");
        command
    }

    /// Waits (10 s at most) until a request to `route` has arrived.
    pub fn wait_for_request(&self, route: Route) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while self.requests_on(route).is_empty() {
            assert!(std::time::Instant::now() < deadline, "no {route:?} request arrived");
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// An `analyst` command pointed at this emulator with a valid key and an
    /// external user, and with no stray `ANALYST_*` from the caller's shell.
    pub fn analyst(&self) -> Command {
        Command::from_std(self.command())
    }
}

pub(crate) fn serve(mut connection: TcpStream, state: &Mutex<State>) -> std::io::Result<()> {
    let request = read_request(&mut connection)?;
    state.lock().unwrap().requests.push(request.clone());
    let reply = answer(&request, state);
    write_reply(&mut connection, reply, state)
}

pub(crate) fn read_request(connection: &mut TcpStream) -> std::io::Result<Recorded> {
    let mut reader = BufReader::new(connection.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.trim_end().split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let length = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(Recorded {
        method,
        path,
        headers,
        body,
    })
}

/// What a test said would be requested was requested: every scripted reply
/// was served, and every route given to [`Emulator::expect`] got its count.
/// (Not checked when the test is already failing.)
impl Drop for Emulator {
    fn drop(&mut self) {
        if thread::panicking() {
            return;
        }
        let state = self.state.lock().unwrap();
        let mut unmet = Vec::new();
        for (route, replies) in &state.scripted {
            if !replies.is_empty() {
                unmet.push(format!(
                    "{} scripted {route:?} replies were never requested",
                    replies.len()
                ));
            }
        }
        for (route, count) in &state.expected {
            let got = state
                .requests
                .iter()
                .filter(|r| route_of(&r.path) == Some(*route))
                .count();
            if got != *count {
                unmet.push(format!("{route:?} was requested {got} times, not {count}"));
            }
        }
        assert!(unmet.is_empty(), "the emulator's expectations: {}", unmet.join("; "));
    }
}
