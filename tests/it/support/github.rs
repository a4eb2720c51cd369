//! A loopback stand-in for GitHub's REST API, as much of it as the
//! Action's `comment: true` step uses — list an issue's comments (paged as
//! GitHub pages them, `Link: …; rel="next"`), create one, edit one — for
//! Debian's real `gh`, which reaches it as `GH_HOST=github.localhost`
//! through `HTTP_PROXY`.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::read_request;

/// The token the stand-in takes (`GH_TOKEN`).
pub const GITHUB_TOKEN: &str = "ghs_loopback0123456789";

/// Where `gh` sends its calls for `GH_HOST=github.localhost`.
const API: &str = "http://api.github.localhost";

/// The most comments GitHub gives on one page.
const MOST_PER_PAGE: usize = 100;

#[derive(Default)]
struct State {
    /// Every comment, oldest first: `{id, issue, body, user}`.
    comments: Vec<Value>,
    /// Every call, as `METHOD /path?query`.
    calls: Vec<String>,
    /// Writes are refused as a read-only token's are.
    read_only: bool,
}

/// The stand-in, serving until the test ends.
pub struct GitHub {
    port: u16,
    state: Arc<Mutex<State>>,
}

impl GitHub {
    /// Starts it with `earlier` comments of other people on issue
    /// `issue`.
    pub fn start(issue: u64, earlier: usize) -> GitHub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        for n in 0..earlier {
            add_comment(
                &mut state.lock().unwrap(),
                issue,
                &format!("Looks good {n}"),
                "a-reviewer",
            );
        }
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for connection in listener.incoming().flatten() {
                let _ = serve(connection, &shared);
            }
        });
        GitHub { port, state }
    }

    /// The `HTTP_PROXY` that takes `gh` here.
    pub fn proxy(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every comment now, oldest first.
    pub fn comments(&self) -> Vec<Value> {
        self.state.lock().unwrap().comments.clone()
    }

    /// Every call so far, as `METHOD /path?query`.
    pub fn calls(&self) -> Vec<String> {
        self.state.lock().unwrap().calls.clone()
    }

    /// A comment of `login`'s on issue `issue`, as if they had written it.
    pub fn comment_as(&self, login: &str, issue: u64, body: &str) -> Value {
        add_comment(&mut self.state.lock().unwrap(), issue, body, login)
    }

    /// From now on writes are refused, as a fork's read-only token's are.
    pub fn read_only(&self) {
        self.state.lock().unwrap().read_only = true;
    }
}

fn add_comment(state: &mut State, issue: u64, body: &str, login: &str) -> Value {
    let comment = json!({
        "id": 1000 + state.comments.len() as u64,
        "issue": issue,
        "body": body,
        "user": { "login": login },
    });
    state.comments.push(comment.clone());
    comment
}

fn serve(mut connection: TcpStream, state: &Mutex<State>) -> std::io::Result<()> {
    let request = read_request(&mut connection)?;
    let target = request.path.strip_prefix(API).unwrap_or(&request.path).to_string();
    let mut state = state.lock().unwrap();
    state.calls.push(format!("{} {target}", request.method));
    let (status, body, link) = if request.header("authorization") != Some(&format!("token {GITHUB_TOKEN}")) {
        (401, json!({ "message": "Bad credentials" }), None)
    } else {
        answer(&mut state, &request.method, &target, &request.body)
    };
    let body = body.to_string();
    let link = link
        .map(|next| format!("Link: <{API}{next}>; rel=\"next\"\r\n"))
        .unwrap_or_default();
    write!(
        connection,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json; charset=utf-8\r\n{link}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// What GitHub answers to `method target`: a status, a body and the next
/// page's path, if there is one.
fn answer(state: &mut State, method: &str, target: &str, body: &[u8]) -> (u16, Value, Option<String>) {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if state.read_only && method != "GET" {
        return (
            403,
            json!({ "message": "Resource not accessible by integration" }),
            None,
        );
    }
    let not_found = (404, json!({ "message": "Not Found" }), None);
    let text = || {
        serde_json::from_slice::<Value>(body).ok()?["body"]
            .as_str()
            .map(str::to_string)
    };
    match (method, parts.as_slice()) {
        // An installation's token (GITHUB_TOKEN) may not read a user.
        ("GET", ["user"]) => (
            403,
            json!({ "message": "Resource not accessible by integration" }),
            None,
        ),
        ("GET", ["repos", _, _, "issues", issue, "comments"]) => {
            let issue: u64 = issue.parse().unwrap();
            let parameter = |name: &str| {
                query
                    .split('&')
                    .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
                    .and_then(|value| value.parse::<usize>().ok())
            };
            let per_page = parameter("per_page").unwrap_or(30).min(MOST_PER_PAGE);
            let page = parameter("page").unwrap_or(1);
            let all: Vec<&Value> = state.comments.iter().filter(|c| c["issue"] == issue).collect();
            let shown: Vec<&Value> = all.iter().skip((page - 1) * per_page).take(per_page).copied().collect();
            let next = (page * per_page < all.len()).then(|| format!("{path}?per_page={per_page}&page={}", page + 1));
            (200, json!(shown), next)
        }
        ("POST", ["repos", _, _, "issues", issue, "comments"]) => match text() {
            Some(text) => (
                201,
                add_comment(state, issue.parse().unwrap(), &text, "github-actions[bot]"),
                None,
            ),
            None => (422, json!({ "message": "Invalid request: body" }), None),
        },
        ("PATCH", ["repos", _, _, "issues", "comments", id]) => {
            let id: u64 = id.parse().unwrap();
            match (text(), state.comments.iter_mut().find(|c| c["id"] == id)) {
                (Some(text), Some(comment)) => {
                    comment["body"] = json!(text);
                    (200, comment.clone(), None)
                }
                _ => not_found,
            }
        }
        _ => not_found,
    }
}
