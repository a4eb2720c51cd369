//! `-o vega` output drawn by the real Vega-Lite compiler and Vega runtime
//! (Node, `tests/vega/render.mjs`): every row becomes a bar whose height
//! follows the data, with dotted member names such as `orders_view.revenue`.
//! A control shows the same spec without the escaping draws nothing, so this
//! test can fail.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::support::*;
use serde_json::Value;

/// Bars drawn for `spec`: (x, height) of every mark item.
fn draw(spec: &Value) -> Vec<(f64, f64)> {
    draw_items(spec)
        .iter()
        .map(|item| {
            (
                item["x"].as_f64().unwrap_or(f64::NAN),
                item["height"].as_f64().unwrap_or(f64::NAN),
            )
        })
        .collect()
}

/// Every mark item drawn for `spec`, as the renderer reports it.
fn draw_items(spec: &Value) -> Vec<Value> {
    node_render(spec)["items"].as_array().unwrap().clone()
}

/// What Node's Vega reports of `spec` (`tests/vega/render.mjs`): the mark
/// items drawn, and the SVG.
fn node_render(spec: &Value) -> Value {
    let mut child = Command::new("node")
        .arg(vega_renderer().join("render.mjs"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs the renderer");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(spec.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "render failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The real stream whose chart spec says `total_revenue` while its column is
/// `measure(sales_view.total_revenue)`: the chart draws a point for every
/// month at a height from the data. A control with the agent's field as it
/// came draws no point anywhere, so this test can fail.
#[test]
fn a_real_chart_whose_field_names_no_column_still_draws_its_rows() {
    let stream = fixture("real-streams/hybrid-cubechat-line-48rows.ndjson");
    let spec = vega_output(analyst().args(["ask", "-o", "vega", "--replay", &stream]));
    let ys = |spec: &Value| -> Vec<f64> {
        draw_items(spec)
            .iter()
            .filter(|item| item["marktype"] == "line")
            .map(|item| item["y"].as_f64().unwrap_or(f64::NAN))
            .collect()
    };
    let drawn = ys(&spec);
    assert_eq!(drawn.len(), 48, "a point per month");
    assert!(drawn.iter().all(|y| y.is_finite()), "{drawn:?}");
    let mut control = spec.clone();
    control["encoding"]["y"]["field"] = "total_revenue".into();
    let control = ys(&control);
    assert!(
        control.iter().all(|y| !y.is_finite()),
        "the agent's field draws nothing: {control:?}"
    );
}

fn vega_output(command: &mut assert_cmd::Command) -> Value {
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn the_chart_draws_every_row_with_dotted_member_names() {
    let emu = Emulator::start();
    emu.agent(|a| a.rows = 6);
    let spec = vega_output(emu.analyst().args(["ask", "-o", "vega", "Revenue by month?"]));
    let bars = draw(&spec);
    assert_eq!(bars.len(), 6, "one bar per row");
    assert!(
        bars.iter().all(|(_, h)| h.is_finite() && *h > 0.0),
        "every bar has a height: {bars:?}"
    );
    // Heights follow the revenue values of the rows.
    let values: Vec<f64> = spec["data"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["orders_view.revenue"].as_f64().unwrap())
        .collect();
    for (i, j) in [(0, 1), (1, 2), (2, 5)] {
        assert_eq!(
            values[i] < values[j],
            bars[i].1 < bars[j].1,
            "bars {i} and {j}: {bars:?} for {values:?}"
        );
    }
    let y_title = spec["encoding"]["y"]["title"].as_str().unwrap();
    assert_eq!(y_title, "Revenue", "the agent's own title is kept");
}

#[test]
fn the_sample_stream_draws_twelve_months() {
    let spec = vega_output(analyst().args(["ask", "-o", "vega", "--replay", &fixture("revenue-by-month.ndjson")]));
    let bars = draw(&spec);
    assert_eq!(bars.len(), 12);
    assert!(bars.iter().all(|(_, h)| *h > 0.0), "{bars:?}");
}

#[test]
fn control_without_escaping_the_dotted_fields_nothing_is_drawn() {
    let spec = vega_output(analyst().args(["ask", "-o", "vega", "--replay", &fixture("revenue-by-month.ndjson")]));
    let mut unescaped = spec.clone();
    unescaped["encoding"]["y"]["field"] = Value::String("orders_view.total_revenue".into());
    let bars = draw(&unescaped);
    assert!(
        bars.iter().all(|(_, h)| !h.is_finite() || *h == 0.0),
        "Vega-Lite reads a dotted field as a nested path, so the bars have no height: {bars:?}"
    );
}

/// The live service's forms: the spec as an object, fields that name the
/// members' short names while the columns are `measure(…)`. The chart still
/// draws a bar per row, with a note saying which fields were matched; a
/// null spec is exit 11.
#[test]
fn an_object_spec_with_fields_that_name_no_column_still_draws() {
    let emu = Emulator::start();
    emu.agent(|a| {
        a.rows = 6;
        a.spec_form = SpecForm::Object;
        a.measure_names = true;
    });
    let output = emu.analyst().args(["ask", "-o", "vega", "Q"]).output().unwrap();
    exits(&output, 0);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("measure(orders_view.revenue)"),
        "the matching is noted: {stderr}"
    );
    let spec: Value = serde_json::from_slice(&output.stdout).unwrap();
    let bars = draw(&spec);
    assert_eq!(bars.len(), 6);
    assert!(bars.iter().all(|(_, h)| h.is_finite() && *h > 0.0), "{bars:?}");

    emu.agent(|a| a.spec_form = SpecForm::Null);
    let output = emu.analyst().args(["ask", "-o", "vega", "Q"]).output().unwrap();
    exits(&output, 11);
}

/// `-o svg` is the real Vega's drawing, byte for byte: for every chart of
/// the fixtures and the real streams, what `analyst` draws in-process equals
/// what Node's Vega draws of the same `-o vega` spec.
#[test]
fn svg_is_what_vega_draws_byte_for_byte() {
    let mut streams = vec![fixture("revenue-by-month.ndjson")];
    for entry in std::fs::read_dir(fixture("real-streams")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "ndjson") {
            streams.push(path.display().to_string());
        }
    }
    let mut drawn = 0;
    for stream in &streams {
        let spec = analyst()
            .args(["ask", "-q", "-o", "vega", "--allow-partial", "--replay", stream])
            .output()
            .unwrap();
        let svg = analyst()
            .args(["ask", "-q", "-o", "svg", "--allow-partial", "--replay", stream])
            .output()
            .unwrap();
        assert_eq!(spec.status.code(), svg.status.code(), "{stream}: the same verdict");
        if !spec.status.success() {
            continue;
        }
        let spec: Value = serde_json::from_slice(&spec.stdout).unwrap();
        let ours = String::from_utf8(svg.stdout).unwrap();
        assert_eq!(ours.trim_end(), node_render(&spec)["svg"], "{stream}");
        drawn += 1;
    }
    assert!(drawn >= 5, "only {drawn} charts were drawn");
}

/// `analyst ask -o MODE` of the sample stream.
fn chart_of_the_sample(mode: &str) -> assert_cmd::Command {
    let mut command = analyst();
    command.args(["ask", "-q", "-o", mode, "--replay", &fixture("revenue-by-month.ndjson")]);
    command
}

/// The picture of `-o png` (with `args` added): its width, height and
/// RGBA pixels.
fn png_of(args: &[&str]) -> (u32, u32, Vec<u8>) {
    let output = chart_of_the_sample("png").args(args).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    decode_png(output.stdout)
}

/// A PNG's width, height and RGBA pixels.
fn decode_png(bytes: Vec<u8>) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    pixels.truncate(info.buffer_size());
    (info.width, info.height, pixels)
}

#[test]
fn png_is_the_svg_at_its_scale_and_draws_the_chart() {
    let svg = chart_of_the_sample("svg").output().unwrap();
    let svg = String::from_utf8(svg.stdout).unwrap();
    let attribute = |name: &str| -> u32 {
        let at = svg.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        svg[at..].split('"').next().unwrap().parse().unwrap()
    };
    let (width, height) = (attribute("width"), attribute("height"));
    let (w, h, pixels) = png_of(&[]);
    assert_eq!((w, h), (2 * width, 2 * height), "--scale 2 by default");
    // The bars: the chart's blue fills much of the plot area.
    let blue = pixels
        .chunks(4)
        .filter(|p| p[2] > 150 && p[0] < 120 && p[3] == 255)
        .count();
    assert!(blue > (w * h / 10) as usize, "{blue} blue pixels of {}", w * h);
    // The text: dark pixels in the title band at the top, so a font drew it.
    let title_band = &pixels[..(w * h / 10) as usize * 4];
    let dark = title_band
        .chunks(4)
        .filter(|p| p[0] < 60 && p[1] < 60 && p[2] < 60)
        .count();
    assert!(dark > 200, "the title is drawn: {dark} dark pixels");
    let (w1, h1, _) = png_of(&["--scale", "1"]);
    assert_eq!((w1, h1), (width, height));
}

#[test]
fn png_needs_no_font_of_the_machine() {
    let empty = Scratch::new();
    let with_none = chart_of_the_sample("png")
        .env("FONTCONFIG_PATH", &*empty)
        .env("XDG_DATA_HOME", &*empty)
        .env("XDG_DATA_DIRS", &*empty)
        .env("HOME", &*empty)
        .output()
        .unwrap();
    assert!(with_none.status.success());
    assert_eq!(
        decode_png(with_none.stdout),
        png_of(&[]),
        "the same picture with no fonts to find"
    );
}

#[test]
fn vega_config_styles_the_chart_from_a_theme_or_a_file() {
    let sample = fixture("revenue-by-month.ndjson");
    let spec = vega_output(analyst().args(["ask", "-q", "-o", "vega", "--vega-config", "dark", "--replay", &sample]));
    assert_eq!(spec["config"]["background"], "#333");
    let config = ScratchFile::new(
        "brand.json",
        r##"{"background": "#fdf6e3", "mark": {"color": "#b58900"}}"##,
    );
    let args = ["ask", "-q", "-o", "svg", "--replay", &sample, "--vega-config"];
    let svg = analyst().args(args).arg(&*config).output().unwrap();
    assert!(svg.status.success());
    let svg = String::from_utf8(svg.stdout).unwrap();
    assert!(svg.contains(r##"fill="#fdf6e3""##) && svg.contains("#b58900"), "{svg}");
    // Drawn as Node's Vega draws the same configured spec.
    let spec = vega_output(
        analyst()
            .args(["ask", "-q", "-o", "vega", "--replay", &sample, "--vega-config"])
            .arg(&*config),
    );
    assert_eq!(svg.trim_end(), node_render(&spec)["svg"]);
    for bad in ["no-such-theme", "/nonexistent/config.json"] {
        let output = analyst()
            .args(["ask", "-o", "svg", "--replay", &sample, "--vega-config", bad])
            .output()
            .unwrap();
        exits(&output, 2);
        assert!(String::from_utf8_lossy(&output.stderr).contains("or name a theme: carbong10"));
    }
}

/// A page of `-o html`, parsed (it is XHTML-compatible: every element
/// closed, only XML's entities).
fn parse_page(page: &str) -> roxmltree::Document<'_> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(page, options).expect("well-formed")
}

/// `-o html` of `stream` (with `args` added).
fn html_of(stream: &str, args: &[&str]) -> String {
    let output = analyst()
        .args(["ask", "-q", "-o", "html", "--replay", stream])
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn html_is_one_offline_page_with_the_answer_the_chart_and_the_rows() {
    let page = html_of(&fixture("revenue-by-month.ndjson"), &[]);
    let document = parse_page(&page);
    let named = |tag: &str| document.descendants().filter(|n| n.has_tag_name(tag)).count();
    assert_eq!(named("h1"), 1);
    assert_eq!(named("svg"), 1, "the chart inline");
    assert_eq!(named("tr"), 13, "a header and the 12 rows");
    assert!(page.contains("What was our revenue by month in 2024?"));
    for tag in ["script", "link", "img", "iframe", "object"] {
        assert_eq!(named(tag), 0, "no {tag}");
    }
    let external = document
        .descendants()
        .flat_map(|n| n.attributes())
        .find(|a| !a.name().starts_with("xmlns") && (a.value().contains("//") || a.name() == "src"));
    assert!(external.is_none(), "loads nothing: {external:?}");
    assert!(!page.contains("url(") && !page.contains("@import"));
    // The chart is the one -o svg draws.
    let svg = chart_of_the_sample("svg").output().unwrap();
    assert!(page.contains(String::from_utf8(svg.stdout).unwrap().trim_end()));
}

#[test]
fn html_escapes_what_the_service_wrote_and_bounds_the_rows() {
    let stream = ChatStream::new("c-html", Family::Cube)
        .user("Revenue <b>now</b>?")
        .sql_call(&SqlCall::revenue_by_month(150))
        .final_answer(&["**Up** <script>alert(1)</script> & <img src=x onerror=alert(2)>"]);
    let file = ScratchFile::new("s.ndjson", stream.bytes());
    let page = html_of(file.to_str().unwrap(), &[]);
    let document = parse_page(&page);
    assert!(page.contains("<strong>Up</strong>"), "Markdown rendered");
    assert!(
        page.contains("&lt;script&gt;") && page.contains("&lt;img src=x"),
        "HTML shown as text"
    );
    assert!(!document
        .descendants()
        .any(|n| n.has_tag_name("script") || n.has_tag_name("b")));
    let rows = document.descendants().filter(|n| n.has_tag_name("tr")).count();
    assert_eq!(rows, 101, "a header and the first 100 rows");
    assert!(page.contains("100 of 150 rows shown"), "the rest is said");
}
