//! A real browser for pages `analyst` writes: a loopback web server that
//! logs what is asked of it, and Debian's headless Chromium.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use super::Scratch;

/// A loopback web server that serves `page` at `/page.html`, answers 404
/// to anything else, and logs the path of every request.
pub fn serve(page: Vec<u8>) -> (u16, Arc<Mutex<Vec<String>>>) {
    serve_as(page, "text/html; charset=utf-8")
}

/// [`serve`], the page's content type `content_type`.
pub fn serve_as(page: Vec<u8>, content_type: &'static str) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&log);
    std::thread::spawn(move || {
        for connection in listener.incoming() {
            let Ok(mut connection) = connection else { continue };
            let mut request = String::new();
            let _ = BufReader::new(&connection).read_line(&mut request);
            // A browser may open a connection it never uses.
            let Some(path) = request.split_whitespace().nth(1).map(str::to_string) else {
                continue;
            };
            seen.lock().unwrap().push(path.clone());
            let (status, body): (&str, &[u8]) = match path.as_str() {
                "/page.html" => ("200 OK", &page),
                _ => ("404 Not Found", b""),
            };
            let _ = write!(
                connection,
                "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = connection.write_all(body);
        }
    });
    (port, log)
}

/// The DOM Chromium (Debian's, headless, with nothing of its own to fetch)
/// makes of `url` once the page is loaded.
pub fn chromium_dom(url: &str) -> String {
    let profile = Scratch::new();
    let output = std::process::Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=3000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .output()
        .expect("Chromium (Debian's chromium package) runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A loopback port nothing listens on (what a page must not reach).
pub fn unused_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
