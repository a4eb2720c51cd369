//! `-o html` and `-o svg` are inert and offline (`cli.md`, Security): a
//! page opened in a real headless Chromium, served from a loopback server
//! that logs every request, asks for nothing but itself and runs no script,
//! whatever links, images, HTML and chart references the service sent.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use support::*;

/// A loopback web server that serves `page` at `/page.html`, answers 404
/// to anything else, and logs the path of every request.
fn serve(page: Vec<u8>) -> (u16, Arc<Mutex<Vec<String>>>) {
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
                "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = connection.write_all(body);
        }
    });
    (port, log)
}

/// The DOM Chromium (Debian's, headless, with nothing of its own to fetch)
/// makes of `url` once the page is loaded.
fn chromium_dom(url: &str) -> String {
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

/// A saved turn whose every piece tries to run something or load from
/// `http://127.0.0.1:PORT`: links, images and HTML in the answer, and a
/// chart that layers an image mark and links over its bars.
fn hostile_stream(port: u16) -> Vec<u8> {
    let host = format!("http://127.0.0.1:{port}");
    let answer = format!(
        "Revenue rose. [run](javascript:fetch('{host}/javascript-link')) [data](data:text/html,<script>fetch('{host}/data-link')</script>) [vb](vbscript:msgbox) ![logo]({host}/markdown-image.png) <img src=\"{host}/raw-image.png\" onerror=\"fetch('{host}/onerror')\"> <script>fetch('{host}/script')</script> [docs](https://cube.dev/docs)"
    );
    let spec = json!({
        "layer": [
            {"mark": "bar", "encoding": {
                "x": {"field": "orders_view.month", "type": "ordinal"},
                "y": {"field": "orders_view.revenue", "type": "quantitative"},
                "href": {"value": format!("{host}/vega-href")}}},
            {"mark": {"type": "image", "width": 20, "height": 20}, "encoding": {
                "x": {"field": "orders_view.month", "type": "ordinal"},
                "url": {"value": format!("{host}/vega-image.png")}}}
        ]
    });
    let call = SqlCall {
        vega_spec: Some(spec),
        ..SqlCall::revenue_by_month(3)
    };
    ChatStream::new("chat-html", Family::Cube)
        .user("Revenue <b>by</b> month?")
        .sql_call(&call)
        .final_answer(&[&answer])
        .usage()
        .bytes()
}

#[test]
fn an_html_page_loads_nothing_and_runs_nothing_in_a_real_browser() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let saved = ScratchFile::new("hostile.ndjson", hostile_stream(port));
    let output = analyst()
        .args(["ask", "-o", "html", "--replay"])
        .arg(&*saved)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("image mark") && stderr.contains("is left out"),
        "a note: {stderr}"
    );
    let page = output.stdout;
    let text = String::from_utf8_lossy(&page).into_owned();
    assert!(
        text.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'"),
        "{text}"
    );
    for inert in ["<script", "<img", "javascript:", "vbscript:", "<image", "href=\"data:"] {
        assert!(!text.contains(inert), "{inert} in the page");
    }
    assert!(
        text.contains("<a href=\"https://cube.dev/docs\">docs</a>"),
        "a plain link stays"
    );
    // The page on its own loopback port, opened by a real browser.
    let (server, log) = serve(page);
    let dom = chromium_dom(&format!("http://127.0.0.1:{server}/page.html"));
    std::thread::sleep(Duration::from_millis(200));
    let requests = log.lock().unwrap().clone();
    assert_eq!(requests, ["/page.html"], "nothing but the page was asked for");
    assert!(dom.contains("Revenue rose."), "the page was loaded: {dom}");
    assert!(
        !dom.contains("<script") && !dom.contains("<img"),
        "no script, no image in the DOM: {dom}"
    );
}

#[test]
fn an_svg_chart_has_no_link_and_no_image() {
    let saved = ScratchFile::new("hostile.ndjson", hostile_stream(9));
    let output = analyst()
        .args(["ask", "-o", "svg", "--replay"])
        .arg(&*saved)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let svg = String::from_utf8_lossy(&output.stdout);
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(
        !svg.contains("href") && !svg.contains("<image") && !svg.contains("127.0.0.1"),
        "{svg}"
    );
    assert!(stderr.contains("\"href\" is left out"), "{stderr}");
}
