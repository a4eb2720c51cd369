//! The network as it is: proxies that must never see a loopback request,
//! compressed answers, and a web page where the stream should be.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::support::*;

/// A proxy on loopback that counts the connections it gets and answers none.
fn recording_proxy() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    std::thread::spawn(move || {
        for connection in listener.incoming() {
            counter.fetch_add(1, Ordering::SeqCst);
            let mut connection = connection.unwrap();
            let mut buffer = [0; 4096];
            let _ = connection.read(&mut buffer);
            let _ = connection.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
        }
    });
    (url, seen)
}

#[test]
fn a_loopback_service_is_never_reached_through_a_proxy() {
    let emu = Emulator::start();
    let (proxy, seen) = recording_proxy();
    for variable in ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY"] {
        let output = emu
            .analyst()
            .env(variable, &proxy)
            .env_remove("NO_PROXY")
            .env_remove("no_proxy")
            .args(["ask", "Q"])
            .output()
            .unwrap();
        exits(&output, 0);
    }
    assert_eq!(seen.load(Ordering::SeqCst), 0, "the proxy saw the key in clear");
}

#[test]
fn compressed_answers_are_decoded() {
    let emu = Emulator::start();
    let stream = ChatStream::new("c-gz", Family::Cube)
        .user("Q")
        .final_answer(&["Squeezed ", "answer"]);
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(&stream.bytes()).unwrap();
    emu.script(Reply::Encoded {
        encoding: "gzip".into(),
        body: gzip.finish().unwrap(),
    });
    let mut deflate = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    deflate.write_all(&stream.bytes()).unwrap();
    emu.script(Reply::Encoded {
        encoding: "deflate".into(),
        body: deflate.finish().unwrap(),
    });
    for _ in 0..2 {
        let output = emu.analyst().args(["ask", "Q"]).output().unwrap();
        exits(&output, 0);
        assert_eq!(output.stdout, b"Squeezed answer\n");
    }
}

#[test]
fn a_web_page_where_the_stream_should_be_is_named_for_what_it_is() {
    let emu = Emulator::start();
    let page = "<html><head><title>Hotel WiFi: please log in</title></head><body>…</body></html>";
    emu.script(Reply::status(200, "text/html; charset=utf-8", page));
    let output = emu.analyst().args(["ask", "Q"]).output().unwrap();
    exits(&output, 6);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: error: the answer is a web page, not the service's (HTML page: Hotel WiFi: please log in): a captive portal or a proxy may be in the way; check the network and the URL

"#]],
    );
    emu.expect(Route::Chat, 1);
}

#[test]
fn a_proxy_that_cannot_be_reached_is_named_as_the_proxy() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let output = analyst()
        .env("HTTPS_PROXY", format!("http://127.0.0.1:{port}"))
        .env("ANALYST_API_KEY", API_KEY)
        .env("ANALYST_EXTERNAL_ID", "ci-bot")
        .args([
            "ask",
            "--retries",
            "0",
            "--chat-url",
            "https://ai.example.invalid/api/v1/public/acme/agents/7/chat/stream-chat-state",
            "Q",
        ])
        .output()
        .unwrap();
    exits(&output, 6);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: error: cannot reach ai.example.invalid through the proxy (HTTPS_PROXY or ALL_PROXY): client error (Connect): tunnel error: failed to create underlying connection: tcp connect error: Connection refused (os error 111); check the proxy, or NO_PROXY

"#]],
    );
}

#[test]
fn zero_timeouts_mean_no_limit() {
    let emu = Emulator::start();
    emu.agent(|a| a.delay = std::time::Duration::from_millis(20));
    let output = emu
        .analyst()
        .args(["ask", "--timeout", "0", "--idle-timeout", "0", "Q"])
        .output()
        .unwrap();
    exits(&output, 0);
}

/// A TLS server on loopback (openssl s_server) whose certificate nobody
/// trusts; it stops when dropped (and its folder of keys goes with it).
struct UntrustedTls {
    server: std::process::Child,
    port: u16,
    _keys: Scratch,
}

impl UntrustedTls {
    fn start() -> UntrustedTls {
        let dir = Scratch::new();
        let made = std::process::Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=localhost",
            ])
            .args(["-keyout", "key.pem", "-out", "cert.pem"])
            .current_dir(&*dir)
            .output()
            .expect("openssl runs");
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let server = std::process::Command::new("openssl")
            .args(["s_server", "-www", "-cert", "cert.pem", "-key", "key.pem", "-accept"])
            .arg(format!("127.0.0.1:{port}"))
            .current_dir(&*dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        UntrustedTls {
            server,
            port,
            _keys: dir,
        }
    }
}

impl Drop for UntrustedTls {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

#[test]
fn a_certificate_refused_fails_at_once_with_its_complaint() {
    let server = UntrustedTls::start();
    let output = analyst()
        .env(
            "ANALYST_CHAT_URL",
            format!(
                "https://127.0.0.1:{}/api/v1/public/a/agents/b/chat/stream-chat-state",
                server.port
            ),
        )
        .env("ANALYST_API_KEY", API_KEY)
        .env("ANALYST_EXTERNAL_ID", "ci-bot")
        .args(["ask", "--retries", "3", "Q"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 6);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: error: cannot connect to 127.0.0.1:[..]: client error (Connect): invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))

"#]],
    );
    assert!(!stderr.contains("trying again"), "not retried: {stderr}");
}
