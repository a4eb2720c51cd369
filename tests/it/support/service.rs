//! How the emulated service answers what no test scripted, faithful to the
//! API document and `service-facts.md`: the key and token checks, the
//! agent's chats and threads, aborts, sessions and data queries.

use std::collections::VecDeque;
use std::io::Write;
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};

use super::*;

pub(crate) fn json_status(code: u16, error: &str) -> Reply {
    Reply::status(code, "application/json", &json!({ "error": error }).to_string())
}

/// Checks the request the way the service does, then answers it.
pub(crate) fn answer(request: &Recorded, state: &Mutex<State>) -> Reply {
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
    let mut caller = None;
    match route {
        Route::Data => {
            if let Err(reply) = check_data_token(request.header("authorization")) {
                return reply;
            }
        }
        Route::Chat | Route::Abort => match chat_caller(request) {
            Ok(owner) => caller = owner,
            Err(reply) => return reply,
        },
        Route::Session | Route::Revoke => {
            if request.header("authorization") != Some(&format!("Api-Key {API_KEY}")) {
                return json_status(401, "Invalid API key");
            }
        }
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
        Route::Chat => chat(&body, caller, state),
        Route::Abort => abort(&body, caller, state),
        Route::Session => session(&body, state),
        Route::Revoke => revoke(&body, state),
        Route::Data => data_query(&body, state),
    }
}

/// The claims of a data query API token: `Authorization: <JWT>` (or
/// `Bearer <JWT>`), HS256 with [`DATA_SECRET`], not expired.
pub fn jwt_claims(header: Option<&str>) -> Result<serde_json::Map<String, Value>, &'static str> {
    jwt_claims_signed(header, DATA_SECRET)
}

/// The claims of a JWT signed (HS256) with `secret`, not expired.
pub(crate) fn jwt_claims_signed(
    header: Option<&str>,
    secret: &str,
) -> Result<serde_json::Map<String, Value>, &'static str> {
    use base64::Engine;
    let header = header.ok_or("Authorization header isn't set")?;
    let token = header.strip_prefix("Bearer ").unwrap_or(header);
    let parts: Vec<&str> = token.split('.').collect();
    let [head, body, signature] = parts[..] else {
        return Err("Invalid token");
    };
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let signature = engine.decode(signature).map_err(|_| "Invalid token")?;
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret.as_bytes());
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

/// Who calls a chat endpoint, as the service checks it: on the agent URL
/// an API key (which wins when both are sent; the user is then the
/// `sessionSettings`') or a Cube token; on the deployment URL only a Cube
/// token. `Some(owner)` when a token named the user.
pub(crate) fn chat_caller(request: &Recorded) -> Result<Option<String>, Reply> {
    let deployment = request.path.contains("/deployments/");
    let key = request.header("authorization");
    let token = request.header("x-cube-auth-token");
    if let (Some(key), false) = (key, deployment) {
        return match key == format!("Api-Key {API_KEY}") {
            true => Ok(None),
            false => Err(json_status(401, "Invalid API key")),
        };
    }
    let Some(token) = token else {
        return Err(match deployment && key.is_some() {
            true => json_status(403, "agentId is required for Api-Key authentication"),
            false => json_status(401, "Authentication required"),
        });
    };
    let claims = jwt_claims_signed(Some(token), CUBE_TOKEN_SECRET).map_err(|message| json_status(401, message))?;
    let scoped = claims
        .get("scope")
        .and_then(Value::as_array)
        .is_some_and(|scope| scope.iter().any(|s| s == "chat"));
    let user = claims
        .get("externalId")
        .or_else(|| claims.get("sub"))
        .and_then(Value::as_str);
    match (scoped, user) {
        (true, Some(user)) => Ok(Some(format!("external:{user}"))),
        _ => Err(json_status(403, "the token has no chat scope or no user")),
    }
}

/// The owner of a chat request: the token's user, else the
/// `sessionSettings`' (which are checked either way when sent).
fn owner(body: &Value, caller: Option<String>) -> Result<String, Reply> {
    let settings = body.get("sessionSettings").and_then(Value::as_object);
    let checked = settings
        .map(check_identity)
        .transpose()
        .map_err(|message| json_status(400, &message))?;
    match (caller, checked) {
        (Some(owner), _) => Ok(owner),
        (None, Some(owner)) => Ok(owner),
        (None, None) => Err(json_status(400, "sessionSettings is required")),
    }
}

pub(crate) fn check_data_token(header: Option<&str>) -> Result<(), Reply> {
    jwt_claims(header)
        .map(|_| ())
        .map_err(|message| json_status(403, message))
}

/// How long a real server stays silent, per "Continue wait" it would have
/// sent, for a client that did not ask for them.
const SILENT_HOLD: Duration = Duration::from_millis(400);

/// `/v1/cubesql`: the body as the service accepts it, then the query.
pub(crate) fn data_query(body: &Value, state: &Mutex<State>) -> Reply {
    // As a real Cube server: unknown fields are ignored; a body without a
    // query is a 500 with a stack trace; bad SQL is 200 with an error line.
    let crash = || {
        Reply::status(
            500,
            "application/json",
            &json!({"error": "TypeError: failed to downcast any to string",
                    "stack": "TypeError: failed to downcast any to string\n    at execSql (/srv/cube/node_modules/@cubejs-backend/native/js/index.ts:342:16)\n    at SQLServer.execSql (/srv/cube/node_modules/@cubejs-backend/api-gateway/src/sql-server.ts:62:18)"})
            .to_string(),
        )
    };
    let Some(fields) = body.as_object() else {
        return crash();
    };
    let Some(sql) = fields.get("query").and_then(Value::as_str) else {
        return crash();
    };
    let mut state = state.lock().unwrap();
    // A slow query: "Continue wait" when the body asks for it, else (as a
    // real server does) silence until the result is ready.
    let mut hold = Duration::ZERO;
    if state.continue_waits > 0 {
        if fields.get("throwContinueWait") == Some(&Value::Bool(true)) {
            state.continue_waits -= 1;
            return Reply::status(200, "application/json", r#"{"error":"Continue wait"}"#);
        }
        hold = SILENT_HOLD * state.continue_waits as u32;
        state.continue_waits = 0;
    }
    if let Err(err) = warehouse::open().prepare(sql) {
        let line = json!({ "error": format!("SQLCompilationError: {err}") });
        return Reply::status(200, "application/json", &format!("{line}\n"));
    }
    Reply::Query {
        sql: sql.to_string(),
        hold,
    }
}

/// Streams the answer to `sql` like the service: a schema line, data lines
/// of [`DATA_CHUNK_ROWS`] rows, at most [`SERVER_ROW_CAP`] rows (also under
/// a larger LIMIT, silently), and an error line if the query fails on the
/// way. LIMIT and OFFSET are the warehouse's.
pub(crate) fn stream_query(connection: &mut TcpStream, sql: &str) -> std::io::Result<()> {
    let db = warehouse::open();
    let mut statement = db.prepare(sql).unwrap();
    let declared = warehouse::declared(&statement);
    let cap = SERVER_ROW_CAP;
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
pub(crate) fn session(body: &Value, state: &Mutex<State>) -> Reply {
    let Some(fields) = body.as_object() else {
        return json_status(400, "body must be an object");
    };
    const KNOWN: [&str; 12] = [
        "externalId",
        "internalId",
        "userAttributes",
        "groups",
        "securityContext",
        "email",
        "deploymentId",
        "branchName",
        "embedTenantName",
        "creatorMode",
        "userProfile",
        "settings",
    ];
    if let Some(unknown) = fields.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return json_status(400, &format!("Unknown field {unknown}"));
    }
    // As deployed now: the deployment is required, and a number.
    match fields.get("deploymentId") {
        None => return json_status(400, "deploymentId is required"),
        Some(id) if !id.is_u64() => return json_status(400, "deploymentId must be a number"),
        Some(_) => {}
    }
    if let Err(message) = check_identity(fields) {
        return json_status(400, &message);
    }
    let mut names: Vec<&str> = fields
        .get("userAttributes")
        .and_then(Value::as_array)
        .map(|attributes| attributes.iter().filter_map(|a| a.get("name")?.as_str()).collect())
        .unwrap_or_default();
    let count = names.len();
    names.sort_unstable();
    names.dedup();
    if names.len() != count {
        return json_status(400, "Duplicate user attribute names");
    }
    let mut state = state.lock().unwrap();
    state.sessions_created += 1;
    let id = format!("sess-{:04}", state.sessions_created);
    state.sessions.push(id.clone());
    Reply::status(200, "application/json", &json!({ "sessionId": id }).to_string())
}

/// revoke: idempotent, 204 for any session id, known or not.
pub(crate) fn revoke(body: &Value, state: &Mutex<State>) -> Reply {
    let Some(id) = body.get("sessionId").and_then(Value::as_str) else {
        return json_status(400, "sessionId is required");
    };
    let mut state = state.lock().unwrap();
    state.sessions.retain(|session| session != id);
    state.revoked.push(id.to_string());
    Reply::status(204, "application/json", "")
}

/// abort: only the owner of a chat may stop it.
pub(crate) fn abort(body: &Value, caller: Option<String>, state: &Mutex<State>) -> Reply {
    let Some(chat_id) = body.get("chatId").and_then(Value::as_str) else {
        return json_status(400, "chatId is required");
    };
    let owner = match owner(body, caller) {
        Ok(owner) => owner,
        Err(reply) => return reply,
    };
    let mut state = state.lock().unwrap();
    match state.threads.get(chat_id) {
        None => json_status(404, "Chat not found"),
        Some(thread) if thread.owner != owner => json_status(403, "Forbidden"),
        Some(_) => {
            state.aborted.push(chat_id.to_string());
            if state.streaming.iter().any(|id| id == chat_id) {
                state.stopping.push(chat_id.to_string());
            }
            Reply::status(204, "text/plain", "")
        }
    }
}

/// True for a `messageId` the service accepts: `<unix ms>-message`.
fn is_message_id(id: &str) -> bool {
    id.strip_suffix("-message")
        .is_some_and(|millis| millis.len() >= 13 && millis.bytes().all(|b| b.is_ascii_digit()))
}

/// stream-chat-state: a new chat, a follow-up, the thread's state, or the
/// same message again (attached to its running turn, or resuming it when
/// suspended).
pub(crate) fn chat(body: &Value, caller: Option<String>, state: &Mutex<State>) -> Reply {
    let owner = match owner(body, caller) {
        Ok(owner) => owner,
        Err(reply) => return reply,
    };
    let input = body.get("input").and_then(Value::as_str).map(str::to_string);
    let chat_id = body.get("chatId").and_then(Value::as_str).map(str::to_string);
    let message_id = body.get("messageId").and_then(Value::as_str).map(str::to_string);
    if message_id.as_deref().is_some_and(|id| !is_message_id(id)) {
        return json_status(400, "messageId must match ^\\d{13,}-message$");
    }
    // `images: [{data, mimeType, name?}]`: data (base64) and mimeType required.
    if let Some(images) = body.get("images") {
        let valid = images.as_array().is_some_and(|images| {
            images.iter().all(|image| {
                let data = image.get("data").and_then(Value::as_str);
                let decodes = data.is_some_and(|data| {
                    use base64::Engine;
                    base64::engine::general_purpose::STANDARD.decode(data).is_ok()
                });
                decodes && image.get("mimeType").and_then(Value::as_str).is_some()
            })
        });
        if !valid {
            return json_status(400, "images[]: data (base64) and mimeType are required");
        }
    }
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
                    past: Vec::new(),
                    turn: None,
                },
            );
            id
        }
    };
    let agent = state.agent.clone();
    let thread = state.threads.get_mut(&chat_id).unwrap();
    let pending = thread
        .turn
        .as_ref()
        .map(|turn| (turn.message_id.clone(), turn.suspended));
    match (pending, &input, &message_id) {
        // The same message again: attach to its turn, or resume it.
        (Some((Some(pending), _)), _, Some(id)) if pending == *id => return send_turn(&mut state, &chat_id, true),
        // A read of the thread shows a pending suspension.
        (pending, None, None) => {
            let suspended = pending.filter(|(_, suspended)| *suspended).and_then(|(id, _)| id);
            let messages: Vec<(&str, &str)> = thread.messages.iter().map(|(r, c)| (r.as_str(), c.as_str())).collect();
            let stream =
                ChatStream::with_cutoff(&chat_id, suspended.as_deref(), agent.family).state(&chat_id, &messages);
            return Reply::Chat {
                chat_id,
                body: stream.bytes(),
                chunking: agent.chunking,
                delay: agent.delay,
            };
        }
        // A different message ends a suspended turn for good.
        (Some((_, true)), _, _) => thread.turn = None,
        (Some((_, false)), _, _) => return json_status(400, "Streaming for thread is in progress"),
        (None, _, _) => {}
    }
    let Some(question) = input else {
        return json_status(400, "input is required");
    };
    let branch = body.get("activeBranchName").and_then(Value::as_str);
    let turn = thread.messages.len() / 2 + 1;
    let chat_number: usize = chat_id.trim_start_matches("chat-").parse().unwrap_or(0);
    let answers_well = match agent.schedule.len() {
        0 => true,
        len => agent.schedule[chat_number.saturating_sub(1) % len],
    };
    let text = match answers_well {
        true => answer_text(turn),
        false => "I could not work that out.".to_string(),
    };
    let stream = agent_answer(&agent, &chat_id, &question, message_id.as_deref(), branch, &text);
    thread.messages.push(("user".into(), question));
    thread.messages.push(("assistant".into(), text));
    let messages: Vec<(&str, &str)> = thread.messages.iter().map(|(r, c)| (r.as_str(), c.as_str())).collect();
    let lines = stream.state(&chat_id, &messages).usage_of(agent.tokens).lines();
    thread.turn = Some(TurnLog {
        message_id,
        // What follows the `__cutoff__`.
        lines: lines[1..].to_vec(),
        produced: 0,
        suspended: false,
    });
    send_turn(&mut state, &chat_id, false)
}

/// Sends the turn of `chat_id` from where the service got to (the start,
/// unless `resumed`), after the thread's past and the turn so far, broken
/// off as the next queued [`Interruption`] says. A turn sent whole joins
/// the thread's past.
fn send_turn(state: &mut State, chat_id: &str, resumed: bool) -> Reply {
    let interruption = state.interruptions.pop_front();
    let agent = state.agent.clone();
    let thread = state.threads.get_mut(chat_id).unwrap();
    let turn = thread.turn.as_mut().unwrap();
    let start = if resumed { turn.produced } else { 0 };
    // The service replays the thread (this turn so far included) before
    // its `__cutoff__`.
    let mut lines: Vec<String> = thread.past.clone();
    lines.extend(turn.lines[..start].iter().cloned());
    lines.push(stream::cutoff_line(chat_id, None));
    turn.suspended = false;
    let whole = |lines: &[String]| {
        lines
            .iter()
            .map(|line| format!("{line}\n"))
            .collect::<String>()
            .into_bytes()
    };
    match interruption {
        None => {
            lines.extend(turn.lines[start..].iter().cloned());
            let finished = thread.turn.take().unwrap();
            thread
                .past
                .extend(finished.lines.into_iter().filter(|line| stream::is_message(line)));
            Reply::Chat {
                chat_id: chat_id.to_string(),
                body: whole(&lines),
                chunking: agent.chunking,
                delay: agent.delay,
            }
        }
        Some(Interruption::Drop { after, mid_line }) => {
            let end = (start + after).min(turn.lines.len());
            lines.extend(turn.lines[start..end].iter().cloned());
            let mut body = whole(&lines);
            if let Some(next) = turn.lines.get(end).filter(|_| mid_line) {
                body.extend_from_slice(&next.as_bytes()[..next.len() / 2]);
            }
            turn.produced = (end + 1).min(turn.lines.len());
            Reply::Stream {
                ending: Ending::DropAfter(body.len()),
                body,
                chunking: agent.chunking,
                delay: agent.delay,
            }
        }
        Some(Interruption::Suspend { after }) => {
            let end = (start + after).min(turn.lines.len());
            lines.extend(turn.lines[start..end].iter().cloned());
            let message_id = turn.message_id.clone().unwrap_or_default();
            lines.extend(ChatStream::empty().suspended(&message_id).usage().lines());
            turn.produced = end;
            turn.suspended = true;
            Reply::Stream {
                body: whole(&lines),
                chunking: agent.chunking,
                delay: agent.delay,
                ending: Ending::Clean,
            }
        }
    }
}

/// The identity rules of the API document (sessionSettings, or the
/// generate-session body); returns the owner's id.
pub(crate) fn check_identity(settings: &serde_json::Map<String, Value>) -> Result<String, String> {
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
        (None, Some(username)) => {
            for field in ["userAttributes", "groups", "securityContext", "roles", "userProfile"] {
                if settings.contains_key(field) {
                    return Err(format!("{field} is not allowed with internalId"));
                }
            }
            // A username, matched lowercased and trimmed.
            let username = username.trim().to_lowercase();
            if !INTERNAL_USERS.contains(&username.as_str()) {
                return Err(format!("Internal user {username} does not exist"));
            }
            Ok(format!("internal:{username}"))
        }
    }
}

pub(crate) fn answer_text(turn: usize) -> String {
    format!("Answer {turn}: revenue rose every month; December was the best month (€2.4M).")
}

/// A whole agent turn: thinking, metadata search, SQL, the answer.
pub(crate) fn agent_answer(
    agent: &Agent,
    chat_id: &str,
    question: &str,
    message_id: Option<&str>,
    branch: Option<&str>,
    text: &str,
) -> ChatStream {
    let stream = ChatStream::new(chat_id, agent.family)
        .user_echo(question, message_id)
        .thinking(&["Looking for ", "the orders view."])
        .thinking(&vec!["Still thinking… "; agent.padding])
        .meta_call(question);
    if branch == Some("broken") {
        return stream
            .failed_sql_call("SELECT 1", "Error: BadRequestError: Bad branch")
            .error_line("BadRequestError: Bad branch");
    }
    let answer = agent
        .answers
        .iter()
        .find(|(phrase, _)| question.contains(phrase.as_str()))
        .map(|(_, answer)| answer);
    let (head, tail) = text.split_at(text.find(':').map_or(0, |at| at + 1));
    let stream = match answer {
        None => stream,
        Some(Answer::Sql(sql)) => stream.sql_call(&warehouse::sql_call(sql, agent.returned_rows)),
        Some(Answer::Result(call)) => stream.sql_call(call),
        Some(Answer::FailingSql(sql, error)) => stream.failed_sql_call(sql, error),
        Some(Answer::NoQuery) => stream,
        Some(Answer::StreamError(message)) => return stream.error_line(message),
        Some(Answer::Inline(text)) => return stream.assistant(&[text]).final_answer(&[text]),
    };
    if answer.is_some() {
        return stream.assistant(&[head, tail]).final_answer(&[head, tail]);
    }
    let mut call = match &agent.warehouse_sql {
        Some(sql) => warehouse::sql_call(sql, 100),
        None => SqlCall::revenue_by_month(agent.rows).truncated_to(agent.returned),
    };
    if agent.measure_names {
        call = call.named_as_measures();
    }
    call = call.distorted(Distortion::asked_in(question));
    call.shape = agent.shape;
    call.query_key = agent.query_key;
    call.spec_form = agent.spec_form;
    let stream = stream.sql_call(&call).assistant(&[head, tail]);
    if agent.final_node {
        stream.final_answer(&[head, tail])
    } else {
        stream
    }
}
