//! A loopback OpenTelemetry collector a test scripts: it records every
//! request it reads (method, path, headers, body) and answers each with
//! the next scripted [`Answer`], else its default: a status, a status
//! after a pause, or never (the connection held open, unanswered).

use std::collections::VecDeque;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::emulator::{read_request, Recorded};

/// How the collector answers one request.
#[derive(Clone, Copy, Debug)]
pub enum Answer {
    /// At once, with this status.
    Status(u16),
    /// With this status, after this pause.
    Slow(Duration, u16),
    /// Never: the request is read and the connection held open.
    Silent,
}

/// A collector on a loopback port.
pub struct Collector {
    port: u16,
    received: Arc<Mutex<Vec<Recorded>>>,
    script: Arc<Mutex<VecDeque<Answer>>>,
}

impl Collector {
    /// A collector that answers `default` unless a test scripted otherwise.
    pub fn start(default: Answer) -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Mutex<VecDeque<Answer>>> = Arc::default();
        let (seen, next) = (Arc::clone(&received), Arc::clone(&script));
        std::thread::spawn(move || {
            for connection in listener.incoming().flatten() {
                let (seen, next) = (Arc::clone(&seen), Arc::clone(&next));
                std::thread::spawn(move || serve(connection, &seen, &next, default));
            }
        });
        Collector { port, received, script }
    }

    /// The next request (of those not yet answered) gets `answer`.
    pub fn then(&self, answer: Answer) -> &Self {
        self.script.lock().unwrap().push_back(answer);
        self
    }

    /// `http://127.0.0.1:PORT`, the base `OTEL_EXPORTER_OTLP_ENDPOINT` names.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Every request read so far.
    pub fn received(&self) -> Vec<Recorded> {
        self.received.lock().unwrap().clone()
    }

    /// Waits (20 s at most) until `count` requests were read.
    pub fn wait_for(&self, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.received.lock().unwrap().len() < count {
            assert!(
                Instant::now() < deadline,
                "the collector got {} of {count} requests",
                self.received().len()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Reads one request of `connection`, records it, and answers it.
fn serve(mut connection: TcpStream, seen: &Mutex<Vec<Recorded>>, next: &Mutex<VecDeque<Answer>>, default: Answer) {
    let Ok(request) = read_request(&mut connection) else {
        return;
    };
    seen.lock().unwrap().push(request);
    let answer = next.lock().unwrap().pop_front().unwrap_or(default);
    let status = match answer {
        Answer::Status(status) => status,
        Answer::Slow(pause, status) => {
            std::thread::sleep(pause);
            status
        }
        Answer::Silent => {
            std::thread::sleep(Duration::from_secs(600));
            return;
        }
    };
    let _ = write!(
        connection,
        "HTTP/1.1 {status} Status\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    );
}
