//! The loopback emulator of the Chat API, faithful to the API document and
//! `service-facts.md`, plus helpers to run the real `analyst` binary against
//! it. A hand-rolled `std::net` server: a thread per connection,
//! `Connection: close`, chunked framing written by hand so a test can cut the
//! stream at any byte, slow it down, end it cleanly or drop the connection.

#![allow(dead_code)]

pub mod stream;
pub mod warehouse;

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{json, Value};

pub use stream::{ChatStream, Family, Shape, SqlCall};

/// The API key the emulator accepts.
pub const API_KEY: &str = "sk-test-4f2a9c81d7e6";
/// The account and agent of the emulated Chat API URL.
pub const ACCOUNT: &str = "acme";
pub const AGENT: &str = "agent-7";
/// The deployment's API secret, which signs data query API tokens.
pub const DATA_SECRET: &str = "data-secret-7f3e19a2";
/// Rows the data query API returns for a query without LIMIT (the default cap).
pub const DEFAULT_ROW_CAP: usize = 10_000;
/// Rows per `data` line of the data query API's answer.
const DATA_CHUNK_ROWS: usize = 1_000;
/// Internal users that exist on the emulated account.
pub const INTERNAL_USERS: [&str; 1] = ["ana@acme.example"];

/// How a streamed body is cut into HTTP chunks.
#[derive(Clone, Debug)]
pub enum Chunking {
    /// One chunk per line.
    Lines,
    /// Chunk sizes taken in turn (cycled); any byte can be a boundary.
    Sizes(Vec<usize>),
}

/// How a streamed body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The terminating zero-length chunk.
    Clean,
    /// The connection is dropped after the given number of body bytes,
    /// without the terminating chunk.
    DropAfter(usize),
}

/// What the emulator answers to the next chat request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A 200 NDJSON stream.
    Stream {
        body: Vec<u8>,
        chunking: Chunking,
        delay: Duration,
        ending: Ending,
    },
    /// A plain HTTP answer with this status.
    Status {
        code: u16,
        content_type: String,
        body: String,
    },
    /// A chat's own stream (unscripted answers): like `Stream`, but it ends
    /// with `__aborted__` as soon as the chat is aborted.
    Chat {
        chat_id: String,
        body: Vec<u8>,
        chunking: Chunking,
        delay: Duration,
    },
    /// No answer at all for this long, then the connection closes.
    Hang(Duration),
    /// The connection is closed without any answer (a reset).
    Drop,
    /// 429 Too Many Requests with `Retry-After: seconds`.
    Busy { retry_after: u64 },
    /// A stream of `lines` assistant deltas, one every `interval`, each
    /// carrying the time it was sent (nanoseconds since the epoch) as its
    /// content: for measuring how fast a client forwards lines.
    Timestamped { lines: usize, interval: Duration },
    /// The data query API's answer to `sql`, run on the warehouse.
    Query { sql: String },
    /// A 200 stream, one chunk per line, that stops after `after_lines`
    /// lines until the test opens `gate`, then ends cleanly.
    Held {
        body: Vec<u8>,
        after_lines: usize,
        gate: Gate,
    },
}

/// A switch a test opens to let a held stream go on.
#[derive(Clone, Debug, Default)]
pub struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    pub fn open(&self) {
        *self.0 .0.lock().unwrap() = true;
        self.0 .1.notify_all();
    }

    /// Waits until opened, for a minute at most so a failing test ends.
    fn wait(&self) {
        let guard = self.0 .0.lock().unwrap();
        let _ = self
            .0
             .1
            .wait_timeout_while(guard, Duration::from_secs(60), |open| !*open)
            .unwrap();
    }
}

impl Reply {
    /// A stream sent line by line, without delay, ending cleanly.
    pub fn stream(stream: &ChatStream) -> Reply {
        Reply::Stream {
            body: stream.bytes(),
            chunking: Chunking::Lines,
            delay: Duration::ZERO,
            ending: Ending::Clean,
        }
    }

    pub fn status(code: u16, content_type: &str, body: &str) -> Reply {
        Reply::Status {
            code,
            content_type: content_type.into(),
            body: body.into(),
        }
    }
}

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
struct Thread {
    owner: String,
    messages: Vec<(String, String)>,
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
        }
    }
}

#[derive(Default)]
struct State {
    requests: Vec<Recorded>,
    scripted: HashMap<Route, VecDeque<Reply>>,
    aborted: Vec<String>,
    sessions_created: u64,
    continue_waits: usize,
    open_chats: usize,
    most_open_chats: usize,
    threads: HashMap<String, Thread>,
    chats_created: u64,
    agent: Agent,
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
    /// `/cubejs-api/v1/cubesql`
    Data,
}

fn route_of(path: &str) -> Option<Route> {
    let agent = format!("/api/v1/public/{ACCOUNT}/agents/{AGENT}/chat/");
    match path {
        "/api/v1/embed/generate-session" => Some(Route::Session),
        "/cubejs-api/v1/cubesql" => Some(Route::Data),
        _ => match path.strip_prefix(&agent) {
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

    /// Changes how unscripted questions are answered.
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
        let mut command = std::process::Command::new(program);
        for (key, _) in std::env::vars() {
            if key.starts_with("ANALYST_") {
                command.env_remove(key);
            }
        }
        command
            .env("ANALYST_CHAT_URL", self.chat_url())
            .env("ANALYST_API_KEY", API_KEY)
            .env("ANALYST_EXTERNAL_ID", "ci-bot")
            .env("NO_COLOR", "1")
            .env("XDG_CONFIG_HOME", no_config_home());
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
        let mut command = analyst();
        command
            .env("ANALYST_CHAT_URL", self.chat_url())
            .env("ANALYST_API_KEY", API_KEY)
            .env("ANALYST_EXTERNAL_ID", "ci-bot");
        command
    }
}

/// A running `analyst` pointed at `emu`, its stdout and stderr collected
/// by threads, for tests that signal it or close its pipes.
pub struct Running {
    pub child: std::process::Child,
    stderr_lines: std::sync::mpsc::Receiver<String>,
    stderr_seen: Vec<String>,
    stdout: Option<thread::JoinHandle<Vec<u8>>>,
    close_stdout: Arc<std::sync::atomic::AtomicBool>,
}

impl Running {
    /// Starts `analyst ARGS` against `emu` (key, URL, external id `ci-bot`).
    pub fn start(emu: &Emulator, args: &[&str]) -> Running {
        let mut child = emu
            .command()
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("analyst starts");
        let (sender, stderr_lines) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        let mut stdout = child.stdout.take().unwrap();
        let close_stdout = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let closing = Arc::clone(&close_stdout);
        let stdout = thread::spawn(move || {
            let mut bytes = Vec::new();
            let mut buffer = [0; 4096];
            while !closing.load(std::sync::atomic::Ordering::SeqCst) {
                match stdout.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => bytes.extend_from_slice(&buffer[..n]),
                }
            }
            bytes
        });
        Running {
            child,
            stderr_lines,
            stderr_seen: Vec::new(),
            stdout: Some(stdout),
            close_stdout,
        }
    }

    /// Closes our end of the child's stdout after its next write, as `| head` does.
    pub fn close_stdout(&self) {
        self.close_stdout.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Waits (20 s at most) for a stderr line containing `needle`.
    pub fn wait_for_stderr(&mut self, needle: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !self.stderr_seen.iter().any(|line| line.contains(needle)) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.stderr_lines.recv_timeout(left) {
                Ok(line) => self.stderr_seen.push(line),
                Err(_) => panic!("no stderr line with {needle:?}; saw {:?}", self.stderr_seen),
            }
        }
    }

    /// Sends a signal by name (`INT`, `TERM`) with kill(1).
    pub fn signal(&self, name: &str) {
        let status = std::process::Command::new("kill")
            .args(["-s", name, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the exit (killing the process after `limit`); returns the
    /// exit code, stdout, all of stderr, and how long the wait took.
    pub fn finish(mut self, limit: Duration) -> (Option<i32>, Vec<u8>, String, Duration) {
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                panic!(
                    "analyst still running {limit:?} later; stderr so far: {:?}",
                    self.stderr_seen
                );
            }
            thread::sleep(Duration::from_millis(20));
        };
        let waited = started.elapsed();
        let stdout = self.stdout.take().unwrap().join().unwrap();
        self.stderr_seen.extend(self.stderr_lines.try_iter());
        thread::sleep(Duration::from_millis(50));
        self.stderr_seen.extend(self.stderr_lines.try_iter());
        (status.code(), stdout, self.stderr_seen.join("\n"), waited)
    }
}

/// The `analyst` binary with a clean `ANALYST_*` environment.
pub fn analyst() -> Command {
    let mut command = Command::cargo_bin("analyst").expect("binary built");
    for (key, _) in std::env::vars() {
        if key.starts_with("ANALYST_") {
            command.env_remove(key);
        }
    }
    command.env("NO_COLOR", "1").env("XDG_CONFIG_HOME", no_config_home());
    command
}

/// A fresh directory under the system's temporary directory, unique to
/// this test process and call, removed with its contents when dropped (a
/// failing test's too), so test runs leave nothing behind.
pub struct Scratch(PathBuf);

impl Scratch {
    /// Creates the directory.
    pub fn new() -> Scratch {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "analyst-test-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a scratch directory");
        Scratch(dir)
    }

    /// Writes `contents` to the file `name` in it (folders created) and
    /// returns the file's path.
    pub fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create a scratch folder");
        }
        std::fs::write(&path, contents).expect("write a scratch file");
        path
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A file in a [`Scratch`] directory of its own, removed with it; it stands
/// for the file's path (`.arg(&file)`, `file.with_file_name(…)`).
pub struct ScratchFile {
    path: PathBuf,
    _dir: Scratch,
}

impl ScratchFile {
    /// Writes `contents` to a new file called `name`.
    pub fn new(name: &str, contents: impl AsRef<[u8]>) -> ScratchFile {
        let dir = Scratch::new();
        ScratchFile {
            path: dir.write(name, contents),
            _dir: dir,
        }
    }
}

impl std::ops::Deref for ScratchFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for ScratchFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<std::ffi::OsStr> for ScratchFile {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

/// A config home with no `analyst/config.toml`, so a developer's own
/// profiles never leak into tests.
pub fn no_config_home() -> PathBuf {
    std::env::temp_dir().join("analyst-tests-no-config-home")
}

/// The folder of the Vega-Lite renderer used by tests (`tests/vega`), its
/// npm packages installed on first use from the committed lock file.
pub fn vega_renderer() -> PathBuf {
    static READY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    READY
        .get_or_init(|| {
            let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vega");
            if !dir.join("node_modules/vega-lite").exists() {
                let status = std::process::Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                    .current_dir(&dir)
                    .status()
                    .expect("npm is needed to install the Vega-Lite renderer (tests/vega): install Node.js");
                assert!(status.success(), "npm ci in tests/vega failed");
            }
            dir
        })
        .clone()
}

/// A path in the crate's tests/fixtures.
pub fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn serve(mut connection: TcpStream, state: &Mutex<State>) -> std::io::Result<()> {
    let request = read_request(&mut connection)?;
    state.lock().unwrap().requests.push(request.clone());
    let reply = answer(&request, state);
    write_reply(&mut connection, reply, state)
}

fn read_request(connection: &mut TcpStream) -> std::io::Result<Recorded> {
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

fn json_status(code: u16, error: &str) -> Reply {
    Reply::status(code, "application/json", &json!({ "error": error }).to_string())
}

/// Checks the request the way the service does, then answers it.
fn answer(request: &Recorded, state: &Mutex<State>) -> Reply {
    let Some(route) = route_of(&request.path) else {
        let message = if request.path.contains("/agents/") {
            "Agent not found"
        } else {
            "Not found"
        };
        return json_status(404, message);
    };
    if request.method != "POST" {
        return json_status(405, "Method not allowed");
    }
    if route == Route::Data {
        if let Err(reply) = check_data_token(request.header("authorization")) {
            return reply;
        }
    } else if request.header("authorization") != Some(&format!("Api-Key {API_KEY}")) {
        return json_status(401, "Invalid API key");
    }
    if let Some(reply) = state
        .lock()
        .unwrap()
        .scripted
        .get_mut(&route)
        .and_then(VecDeque::pop_front)
    {
        return reply;
    }
    let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
        return json_status(400, "Invalid JSON body");
    };
    match route {
        Route::Chat => chat(&body, state),
        Route::Abort => abort(&body, state),
        Route::Session => session(&body, state),
        Route::Data => data_query(&body, state),
    }
}

/// The claims of a data query API token: `Authorization: <JWT>` (or
/// `Bearer <JWT>`), HS256 with [`DATA_SECRET`], not expired.
pub fn jwt_claims(header: Option<&str>) -> Result<serde_json::Map<String, Value>, &'static str> {
    use base64::Engine;
    let header = header.ok_or("Authorization header isn't set")?;
    let token = header.strip_prefix("Bearer ").unwrap_or(header);
    let parts: Vec<&str> = token.split('.').collect();
    let [head, body, signature] = parts[..] else {
        return Err("Invalid token");
    };
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let signature = engine.decode(signature).map_err(|_| "Invalid token")?;
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, DATA_SECRET.as_bytes());
    ring::hmac::verify(&key, format!("{head}.{body}").as_bytes(), &signature).map_err(|_| "Invalid token")?;
    let header: Value =
        serde_json::from_slice(&engine.decode(head).map_err(|_| "Invalid token")?).map_err(|_| "Invalid token")?;
    if header["alg"] != "HS256" {
        return Err("Invalid token");
    }
    let claims: serde_json::Map<String, Value> =
        serde_json::from_slice(&engine.decode(body).map_err(|_| "Invalid token")?).map_err(|_| "Invalid token")?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    match claims.get("exp").and_then(Value::as_u64) {
        Some(exp) if exp > now => Ok(claims),
        _ => Err("Invalid token"),
    }
}

fn check_data_token(header: Option<&str>) -> Result<(), Reply> {
    jwt_claims(header)
        .map(|_| ())
        .map_err(|message| json_status(403, message))
}

/// `/v1/cubesql`: the body as the service accepts it, then the query.
fn data_query(body: &Value, state: &Mutex<State>) -> Reply {
    let Some(fields) = body.as_object() else {
        return json_status(400, "body must be an object");
    };
    if let Some(unknown) = fields
        .keys()
        .find(|k| !["query", "timezone", "cache", "throwContinueWait"].contains(&k.as_str()))
    {
        return json_status(400, &format!("Unknown field {unknown}"));
    }
    let Some(sql) = fields.get("query").and_then(Value::as_str) else {
        return json_status(400, "query is required");
    };
    let mut state = state.lock().unwrap();
    if state.continue_waits > 0 {
        state.continue_waits -= 1;
        return Reply::status(200, "application/json", r#"{"error":"Continue wait"}"#);
    }
    if let Err(err) = warehouse::open().prepare(sql) {
        return json_status(400, &err.to_string());
    }
    Reply::Query { sql: sql.to_string() }
}

/// Streams the answer to `sql` like the service: a schema line, data lines
/// of [`DATA_CHUNK_ROWS`] rows, at most [`DEFAULT_ROW_CAP`] rows without
/// LIMIT, and an error line if the query fails on the way.
fn stream_query(connection: &mut TcpStream, sql: &str) -> std::io::Result<()> {
    let db = warehouse::open();
    let mut statement = db.prepare(sql).unwrap();
    let declared = warehouse::declared(&statement);
    let cap = if sql.to_ascii_uppercase().contains("LIMIT") {
        usize::MAX
    } else {
        DEFAULT_ROW_CAP
    };
    connection.write_all(STREAM_HEAD)?;
    let mut cursor = statement.raw_query();
    let mut batch: Vec<Vec<Value>> = Vec::new();
    let (mut sent, mut schema_sent, mut failure) = (0, false, None);
    loop {
        let row = if sent + batch.len() >= cap {
            None
        } else {
            match cursor.next() {
                Ok(row) => row.map(|row| {
                    (0..declared.len())
                        .map(|i| warehouse::value(row.get_ref(i).unwrap()))
                        .collect()
                }),
                Err(err) => {
                    failure = Some(err.to_string());
                    None
                }
            }
        };
        let done = row.is_none();
        batch.extend(row);
        if !schema_sent {
            let schema: Vec<Value> = warehouse::columns(&declared, batch.first().map(Vec::as_slice))
                .into_iter()
                .map(|(name, kind)| json!({"name": name, "column_type": kind}))
                .collect();
            let line = json!({"schema": schema, "lastRefreshTime": "2026-11-01T00:00:00.000Z"});
            write_chunk(connection, format!("{line}\n").as_bytes())?;
            schema_sent = true;
        }
        if batch.len() >= DATA_CHUNK_ROWS || (done && (!batch.is_empty() || sent == 0)) {
            write_chunk(connection, format!("{}\n", json!({ "data": batch })).as_bytes())?;
            sent += batch.len();
            batch.clear();
        }
        if done {
            break;
        }
    }
    if let Some(error) = failure {
        write_chunk(
            connection,
            format!("{}\n", json!({"error": error, "requestId": "req-0001"})).as_bytes(),
        )?;
    }
    connection.write_all(b"0\r\n\r\n")
}

/// generate-session: the identity at the top level of the body.
fn session(body: &Value, state: &Mutex<State>) -> Reply {
    let Some(fields) = body.as_object() else {
        return json_status(400, "body must be an object");
    };
    const KNOWN: [&str; 7] = [
        "externalId",
        "internalId",
        "userAttributes",
        "groups",
        "securityContext",
        "email",
        "deploymentId",
    ];
    if let Some(unknown) = fields.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return json_status(400, &format!("Unknown field {unknown}"));
    }
    if let Err(message) = check_identity(fields) {
        return json_status(400, &message);
    }
    let mut state = state.lock().unwrap();
    state.sessions_created += 1;
    let id = format!("sess-{:04}", state.sessions_created);
    Reply::status(200, "application/json", &json!({ "sessionId": id }).to_string())
}

/// abort: only the owner of a chat may stop it.
fn abort(body: &Value, state: &Mutex<State>) -> Reply {
    let Some(chat_id) = body.get("chatId").and_then(Value::as_str) else {
        return json_status(400, "chatId is required");
    };
    let owner = match body
        .get("sessionSettings")
        .and_then(Value::as_object)
        .map(check_identity)
    {
        Some(Ok(owner)) => owner,
        Some(Err(message)) => return json_status(400, &message),
        None => String::new(),
    };
    let mut state = state.lock().unwrap();
    match state.threads.get(chat_id) {
        None => json_status(404, "Chat not found"),
        Some(thread) if thread.owner != owner => json_status(403, "Forbidden"),
        Some(_) => {
            state.aborted.push(chat_id.to_string());
            Reply::status(204, "text/plain", "")
        }
    }
}

/// stream-chat-state: a new chat, a follow-up, or the thread's state.
fn chat(body: &Value, state: &Mutex<State>) -> Reply {
    let owner = match body.get("sessionSettings").and_then(Value::as_object) {
        None => return json_status(400, "sessionSettings is required"),
        Some(settings) => match check_identity(settings) {
            Ok(owner) => owner,
            Err(message) => return json_status(400, &message),
        },
    };
    let input = body.get("input").and_then(Value::as_str).map(str::to_string);
    let chat_id = body.get("chatId").and_then(Value::as_str).map(str::to_string);
    let mut state = state.lock().unwrap();
    let chat_id = match chat_id {
        Some(id) => match state.threads.get(&id) {
            Some(thread) if thread.owner == owner => id,
            _ => return json_status(404, "Chat not found"),
        },
        None if input.is_none() => return json_status(400, "input or chatId is required"),
        None => {
            state.chats_created += 1;
            let id = format!("chat-{:04}", state.chats_created);
            state.threads.insert(
                id.clone(),
                Thread {
                    owner,
                    messages: Vec::new(),
                },
            );
            id
        }
    };
    let agent = state.agent.clone();
    let thread = state.threads.get_mut(&chat_id).unwrap();
    let stream = match input {
        None => {
            let messages: Vec<(&str, &str)> = thread.messages.iter().map(|(r, c)| (r.as_str(), c.as_str())).collect();
            ChatStream::new(&chat_id, agent.family).state(&chat_id, &messages)
        }
        Some(question) => {
            let branch = body.get("activeBranchName").and_then(Value::as_str);
            let turn = thread.messages.len() / 2 + 1;
            let stream = agent_answer(&agent, &chat_id, &question, branch, turn);
            thread.messages.push(("user".into(), question));
            thread.messages.push(("assistant".into(), answer_text(turn)));
            let messages: Vec<(&str, &str)> = thread.messages.iter().map(|(r, c)| (r.as_str(), c.as_str())).collect();
            stream.state(&chat_id, &messages).usage()
        }
    };
    Reply::Chat {
        chat_id,
        body: stream.bytes(),
        chunking: agent.chunking,
        delay: agent.delay,
    }
}

/// The identity rules of the API document (sessionSettings, or the
/// generate-session body); returns the owner's id.
fn check_identity(settings: &serde_json::Map<String, Value>) -> Result<String, String> {
    let external = settings.get("externalId").and_then(Value::as_str);
    let internal = settings.get("internalId").and_then(Value::as_str);
    match (external, internal) {
        (Some(_), Some(_)) => Err("Either externalId or internalId, not both".into()),
        (None, None) => Err("externalId or internalId is required".into()),
        (Some(id), None) => {
            if id.is_empty() || id.chars().any(|c| c.is_whitespace() || c.is_uppercase()) {
                return Err("externalId must be lowercase without spaces".into());
            }
            Ok(format!("external:{id}"))
        }
        (None, Some(email)) => {
            for field in ["userAttributes", "groups", "securityContext", "roles"] {
                if settings.contains_key(field) {
                    return Err(format!("{field} is not allowed with internalId"));
                }
            }
            if !INTERNAL_USERS.contains(&email) {
                return Err(format!("Internal user {email} does not exist"));
            }
            Ok(format!("internal:{email}"))
        }
    }
}

fn answer_text(turn: usize) -> String {
    format!("Answer {turn}: revenue rose every month; December was the best month (€2.4M).")
}

/// A whole agent turn: thinking, metadata search, SQL, the answer.
fn agent_answer(agent: &Agent, chat_id: &str, question: &str, branch: Option<&str>, turn: usize) -> ChatStream {
    let stream = ChatStream::new(chat_id, agent.family)
        .user(question)
        .thinking(&["Looking for ", "the orders view."])
        .thinking(&vec!["Still thinking… "; agent.padding])
        .meta_call(question);
    if branch == Some("broken") {
        return stream
            .failed_sql_call("SELECT 1", "Error: BadRequestError: Bad branch")
            .error_line("BadRequestError: Bad branch");
    }
    let mut call = match &agent.warehouse_sql {
        Some(sql) => warehouse::sql_call(sql, 100),
        None => SqlCall::revenue_by_month(agent.rows).truncated_to(agent.returned),
    };
    call.shape = agent.shape;
    call.query_key = agent.query_key;
    let text = answer_text(turn);
    let (head, tail) = text.split_at(text.find(':').unwrap() + 1);
    let stream = stream.sql_call(&call).assistant(&[head, tail]);
    if agent.final_node {
        stream.final_answer(&[head, tail])
    } else {
        stream
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

fn write_reply(connection: &mut TcpStream, reply: Reply, state: &Mutex<State>) -> std::io::Result<()> {
    match reply {
        Reply::Chat {
            chat_id,
            body,
            chunking,
            delay,
        } => {
            {
                let mut state = state.lock().unwrap();
                state.open_chats += 1;
                state.most_open_chats = state.most_open_chats.max(state.open_chats);
            }
            let sent = write_chat(connection, &chat_id, &body, &chunking, delay, state);
            state.lock().unwrap().open_chats -= 1;
            sent
        }
        Reply::Query { sql } => stream_query(connection, &sql),
        Reply::Timestamped { lines, interval } => {
            connection.write_all(STREAM_HEAD)?;
            write_chunk(connection, b"{\"id\":\"__cutoff__\",\"state\":{\"chatId\":\"ticks\"}}\n")?;
            for _ in 0..lines {
                thread::sleep(interval);
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
                let line = format!("{{\"id\":\"tick\",\"role\":\"assistant\",\"content\":\"{now}\",\"graphPath\":[\"final\"],\"isDelta\":true}}\n");
                write_chunk(connection, line.as_bytes())?;
            }
            connection.write_all(b"0\r\n\r\n")
        }
        Reply::Hang(duration) => {
            thread::sleep(duration);
            Ok(())
        }
        Reply::Drop => connection.shutdown(Shutdown::Both),
        Reply::Busy { retry_after } => connection.write_all(
            format!(
                "HTTP/1.1 429 Too Many Requests\r\nRetry-After: {retry_after}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        ),
        Reply::Status {
            code,
            content_type,
            body,
        } => {
            let body = if code == 204 { String::new() } else { body };
            let head = format!(
                "HTTP/1.1 {code} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                reason(code),
                body.len()
            );
            connection.write_all(head.as_bytes())?;
            connection.write_all(body.as_bytes())?;
            connection.flush()
        }
        Reply::Held {
            body,
            after_lines,
            gate,
        } => {
            connection.write_all(STREAM_HEAD)?;
            for (i, line) in body.split_inclusive(|&b| b == b'\n').enumerate() {
                if i == after_lines {
                    gate.wait();
                }
                write_chunk(connection, line)?;
            }
            connection.write_all(b"0\r\n\r\n")
        }
        Reply::Stream {
            body,
            chunking,
            delay,
            ending,
        } => {
            connection.write_all(STREAM_HEAD)?;
            let limit = match ending {
                Ending::Clean => body.len(),
                Ending::DropAfter(n) => n.min(body.len()),
            };
            for piece in pieces(&body[..limit], &chunking) {
                write_chunk(connection, piece)?;
                if !delay.is_zero() {
                    thread::sleep(delay);
                }
            }
            match ending {
                Ending::Clean => connection.write_all(b"0\r\n\r\n")?,
                Ending::DropAfter(_) => connection.shutdown(Shutdown::Both)?,
            }
            connection.flush()
        }
    }
}

/// Sends a chat's stream, ending it with `__aborted__` as soon as the chat
/// is aborted.
fn write_chat(
    connection: &mut TcpStream,
    chat_id: &str,
    body: &[u8],
    chunking: &Chunking,
    delay: Duration,
    state: &Mutex<State>,
) -> std::io::Result<()> {
    connection.write_all(STREAM_HEAD)?;
    for piece in pieces(body, chunking) {
        if state.lock().unwrap().aborted.iter().any(|id| id == chat_id) {
            write_chunk(connection, format!("{}\n", stream::aborted_line()).as_bytes())?;
            break;
        }
        write_chunk(connection, piece)?;
        if !delay.is_zero() {
            thread::sleep(delay);
        }
    }
    connection.write_all(b"0\r\n\r\n")
}

/// The head of a chat stream; the service serves NDJSON as
/// `application/json` (service-facts.md).
const STREAM_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";

fn write_chunk(connection: &mut TcpStream, piece: &[u8]) -> std::io::Result<()> {
    write!(connection, "{:x}\r\n", piece.len())?;
    connection.write_all(piece)?;
    connection.write_all(b"\r\n")?;
    connection.flush()
}

fn pieces<'a>(body: &'a [u8], chunking: &Chunking) -> Vec<&'a [u8]> {
    match chunking {
        Chunking::Lines => body.split_inclusive(|&b| b == b'\n').collect(),
        Chunking::Sizes(sizes) => {
            let mut out = Vec::new();
            let mut rest = body;
            let mut i = 0;
            while !rest.is_empty() {
                let size = sizes[i % sizes.len()].clamp(1, rest.len());
                out.push(&rest[..size]);
                rest = &rest[size..];
                i += 1;
            }
            out
        }
    }
}
