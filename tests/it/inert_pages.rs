//! `-o html` and `-o svg` are inert and offline (`cli.md`, Security): a
//! page opened in a real headless Chromium, served from a loopback server
//! that logs every request, asks for nothing but itself and runs no script,
//! whatever links, images, HTML and chart references the service sent.

use std::time::Duration;

use crate::support::browser::{asked, chromium_dom, serve, serve_as, unused_port};
use crate::support::*;
use serde_json::json;

/// `ask -o MODE --replay` of the saved turn `stream`, which must succeed:
/// its stdout and stderr.
fn replayed(mode: &str, stream: Vec<u8>) -> (Vec<u8>, String) {
    let saved = ScratchFile::new("hostile.ndjson", stream);
    let output = analyst()
        .args(["ask", "-o", mode, "--replay"])
        .arg(&*saved)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    (output.stdout, stderr)
}

/// A saved turn whose answer is `answer` and whose SQL result's chart is
/// `spec`.
fn turn_with_chart(question: &str, spec: serde_json::Value, answer: &str) -> Vec<u8> {
    let call = SqlCall {
        vega_spec: Some(spec),
        ..SqlCall::revenue_by_month(3)
    };
    ChatStream::new("chat-html", Family::Cube)
        .user(question)
        .sql_call(&call)
        .final_answer(&[answer])
        .usage()
        .bytes()
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
    turn_with_chart("Revenue <b>by</b> month?", spec, &answer)
}

#[test]
fn an_html_page_loads_nothing_and_runs_nothing_in_a_real_browser() {
    let (page, stderr) = replayed("html", hostile_stream(unused_port()));
    assert!(
        stderr.contains("image mark") && stderr.contains("is left out"),
        "a note: {stderr}"
    );
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
    let (svg, stderr) = replayed("svg", hostile_stream(9));
    let svg = String::from_utf8_lossy(&svg);
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(
        !svg.contains("href") && !svg.contains("<image") && !svg.contains("127.0.0.1"),
        "{svg}"
    );
    assert!(stderr.contains("\"href\" is left out"), "{stderr}");
}

/// A chart whose fills, stroke, colour and background are url(…)s of
/// `http://127.0.0.1:PORT`, as a saved stream.
fn chart_painting_from(port: u16) -> Vec<u8> {
    let host = format!("http://127.0.0.1:{port}");
    let spec = json!({
        "config": {"background": format!("url({host}/background.svg#b)")},
        "mark": {"type": "bar", "fill": format!("url({host}/fill.svg#f)"), "stroke": format!("url('{host}/stroke.svg#s')")},
        "encoding": {
            "x": {"field": "orders_view.month", "type": "ordinal"},
            "y": {"field": "orders_view.revenue", "type": "quantitative"},
            "color": {"value": format!("URL( {host}/color.svg#c )")}
        }
    });
    turn_with_chart("Revenue?", spec, "Revenue rose.")
}

#[test]
fn an_svg_chart_paints_nothing_from_elsewhere_in_a_real_browser() {
    let (svg, stderr) = replayed("svg", chart_painting_from(unused_port()));
    for what in ["\"background\"", "\"fill\"", "\"stroke\"", "\"value\""] {
        assert!(
            stderr.contains(&format!("the chart's {what} ")),
            "a note for {what}: {stderr}"
        );
    }
    let text = String::from_utf8_lossy(&svg).into_owned();
    assert!(text.starts_with("<svg") && !text.contains("127.0.0.1"), "{text}");
    let (server, log) = serve_as(svg, "image/svg+xml");
    chromium_dom(&format!("http://127.0.0.1:{server}/page.html"));
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(asked(&log), ["/page.html"], "nothing but the chart was asked for");
}
