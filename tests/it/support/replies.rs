//! What the emulator answers, and how it writes it on the wire: chunked
//! framing written by hand, so a test can cut a stream at any byte, slow it
//! down, end it cleanly or drop the connection.

use std::io::Write;
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use super::*;

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
    /// A 200 answer whose body is sent with `Content-Encoding: encoding`
    /// (the body given already encoded).
    Encoded { encoding: String, body: Vec<u8> },
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
    /// The data query API's answer to `sql`, run on the warehouse, after
    /// holding the request silent for `hold` (a slow query, asked without
    /// `throwContinueWait`).
    Query { sql: String, hold: Duration },
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

pub(crate) fn reason(code: u16) -> &'static str {
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

pub(crate) fn write_reply(connection: &mut TcpStream, reply: Reply, state: &Mutex<State>) -> std::io::Result<()> {
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
                state.streaming.push(chat_id.clone());
            }
            let sent = write_chat(connection, &chat_id, &body, &chunking, delay, state);
            let mut state = state.lock().unwrap();
            state.open_chats -= 1;
            let streaming = state.streaming.iter().position(|id| *id == chat_id).unwrap();
            state.streaming.remove(streaming);
            if !state.streaming.contains(&chat_id) {
                state.stopping.retain(|id| *id != chat_id);
            }
            sent
        }
        Reply::Query { sql, hold } => {
            thread::sleep(hold);
            stream_query(connection, &sql)
        }
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
        Reply::Encoded { encoding, body } => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: {encoding}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            connection.write_all(head.as_bytes())?;
            connection.write_all(&body)?;
            connection.flush()
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
pub(crate) fn write_chat(
    connection: &mut TcpStream,
    chat_id: &str,
    body: &[u8],
    chunking: &Chunking,
    delay: Duration,
    state: &Mutex<State>,
) -> std::io::Result<()> {
    connection.write_all(STREAM_HEAD)?;
    for piece in pieces(body, chunking) {
        if state.lock().unwrap().stopping.iter().any(|id| id == chat_id) {
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
pub(crate) const STREAM_HEAD: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";

pub(crate) fn write_chunk(connection: &mut TcpStream, piece: &[u8]) -> std::io::Result<()> {
    write!(connection, "{:x}\r\n", piece.len())?;
    connection.write_all(piece)?;
    connection.write_all(b"\r\n")?;
    connection.flush()
}

pub(crate) fn pieces<'a>(body: &'a [u8], chunking: &Chunking) -> Vec<&'a [u8]> {
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
