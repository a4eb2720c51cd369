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

/// Debian's Chromium, headless, with nothing of its own to fetch, on a
/// fresh profile in `profile`.
fn chromium(profile: &Scratch) -> std::process::Command {
    let mut command = std::process::Command::new("chromium");
    command
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
        ])
        .arg(format!("--user-data-dir={}", profile.display()));
    command
}

/// Runs `command` (a [`chromium`]), which must succeed: its stdout.
fn run_chromium(command: &mut std::process::Command) -> Vec<u8> {
    let output = command.output().expect("Chromium (Debian's chromium package) runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}

/// The DOM Chromium makes of `url` once the page is loaded.
pub fn chromium_dom(url: &str) -> String {
    let profile = Scratch::new();
    let dom = run_chromium(chromium(&profile).arg("--dump-dom").arg(url));
    String::from_utf8_lossy(&dom).into_owned()
}

/// A PNG of `url` as Chromium draws it in a window `width` × `height`
/// CSS pixels, without scrollbars.
pub fn chromium_screenshot(url: &str, width: u32, height: u32) -> Vec<u8> {
    let profile = Scratch::new();
    let png = profile.join("screenshot.png");
    run_chromium(
        chromium(&profile)
            .arg("--hide-scrollbars")
            .arg(format!("--window-size={width},{height}"))
            .arg(format!("--screenshot={}", png.display()))
            .arg(url),
    );
    std::fs::read(png).unwrap()
}

/// A PNG of the web application at `url` (scripts run: a page that is not
/// `analyst`'s), given ten seconds to load and draw.
pub fn chromium_page_screenshot(url: &str, width: u32, height: u32) -> Vec<u8> {
    let profile = Scratch::new();
    let png = profile.join("screenshot.png");
    run_chromium(
        chromium(&profile)
            .arg("--virtual-time-budget=10000")
            .arg("--hide-scrollbars")
            .arg(format!("--window-size={width},{height}"))
            .arg(format!("--screenshot={}", png.display()))
            .arg(url),
    );
    std::fs::read(png).unwrap()
}

/// What a page asked its server for ([`serve`]'s log), besides the
/// site's icon, which a browser asks for itself.
pub fn asked(log: &Mutex<Vec<String>>) -> Vec<String> {
    log.lock()
        .unwrap()
        .iter()
        .filter(|path| *path != "/favicon.ico")
        .cloned()
        .collect()
}

/// A loopback port nothing listens on (what a page must not reach).
pub fn unused_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}
