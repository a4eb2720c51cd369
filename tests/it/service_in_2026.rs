//! The service as it is in 2026 (`service-facts.md`): `ask --image` and a
//! suite case's `images`, each image sent as `{data, mimeType, name}`, its
//! bytes as they are in the file, its type told from the bytes (anything
//! else, or an image over 20 MiB, refused before anything is sent); and
//! results an agent on Cube's `chassis` runtime puts inline in its answer.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::Value;

use crate::support::*;

/// A small PNG, drawn by the `png` crate.
fn png_bytes() -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, 2, 2);
    encoder.set_color(png::ColorType::Rgb);
    let mut writer = encoder.write_header().unwrap();
    writer
        .write_image_data(&[255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9])
        .unwrap();
    drop(writer);
    bytes
}

/// The images of a chat request's body, as `(bytes, mimeType, name)`.
fn sent_images(body: &Value) -> Vec<(Vec<u8>, String, String)> {
    body["images"]
        .as_array()
        .map(|images| {
            images
                .iter()
                .map(|image| {
                    (
                        STANDARD.decode(image["data"].as_str().unwrap()).unwrap(),
                        image["mimeType"].as_str().unwrap().to_string(),
                        image["name"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn images_are_sent_as_their_bytes_with_their_type_and_name() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let png = png_bytes();
    let chart = dir.write("chart.png", &png);
    // A JPEG's and a WebP's first bytes are all the type is told from.
    let jpeg: Vec<u8> = [&[0xff, 0xd8, 0xff, 0xe0][..], &[7; 64]].concat();
    let photo = dir.write("photo.jpg", &jpeg);
    let webp: Vec<u8> = [&b"RIFF\x24\0\0\0WEBPVP8 "[..], &[3; 32]].concat();
    emu.analyst()
        .args(["ask", "-q", "What does this chart show?", "--image"])
        .arg(&chart)
        .arg("--image")
        .arg(&photo)
        .args(["--image", "-"])
        .write_stdin(webp.clone())
        .assert()
        .success();
    let bodies = emu.chat_bodies();
    assert_eq!(
        sent_images(&bodies[0]),
        [
            (png, "image/png".to_string(), "chart.png".to_string()),
            (jpeg, "image/jpeg".to_string(), "photo.jpg".to_string()),
            (webp, "image/webp".to_string(), "stdin".to_string()),
        ]
    );
    assert_eq!(bodies[0]["input"], "What does this chart show?");
    // Without --image, no `images` at all.
    emu.analyst().args(["ask", "-q", "Q"]).assert().success();
    assert!(emu.chat_bodies()[1].get("images").is_none());
}

#[test]
fn anything_but_an_image_or_one_over_20_mib_is_refused_before_sending() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let text = dir.write("notes.txt", "not an image");
    let big: Vec<u8> = [&png_bytes()[..], &vec![0; 20 << 20]].concat();
    let huge = dir.write("huge.png", &big);
    let question = dir.write("question.txt", "Q");
    for (args, message) in [
        (
            vec!["ask", "Q", "--image", text.to_str().unwrap()],
            "not an image the service takes (PNG, JPEG, GIF or WebP)",
        ),
        (vec!["ask", "Q", "--image", huge.to_str().unwrap()], "over 20 MiB"),
        (vec!["ask", "Q", "--image", "/no/such.png"], "cannot read it"),
        (vec!["ask", "-", "--image", "-"], "standard input cannot hold both"),
        (vec!["ask", "Q", "--image", "-", "--image", "-"], "given twice"),
        (
            vec!["ask", "--chat-id", "c-1", "--image", text.to_str().unwrap()],
            "goes with a question",
        ),
        (
            vec!["ask", "--replay", question.to_str().unwrap(), "--image", "x.png"],
            "cannot be used with",
        ),
    ] {
        let output = emu.analyst().args(&args).output().unwrap();
        exits(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    }
    assert!(emu.chat_bodies().is_empty(), "nothing was sent");
}

#[test]
fn a_suite_case_sends_its_images_relative_to_the_suite_file() {
    let emu = Emulator::start();
    let dir = Scratch::new();
    let png = png_bytes();
    dir.write("suites/charts/revenue.png", &png);
    let suite = dir.write(
        "suites/smoke.toml",
        "[[case]]\nname = \"chart\"\nquestion = \"What does this chart show?\"\nimages = [\"charts/revenue.png\"]\nchat = [\"And in euros?\"]\n",
    );
    emu.analyst().args(["check", "-q"]).arg(&suite).assert().success();
    let bodies = emu.chat_bodies();
    assert_eq!(
        sent_images(&bodies[0]),
        [(png, "image/png".to_string(), "revenue.png".to_string())]
    );
    assert!(bodies[1].get("images").is_none(), "the follow-up sends none");
    // A suite naming what is not an image is refused before anything runs.
    let bad = dir.write(
        "suites/bad.toml",
        "[[case]]\nname = \"chart\"\nquestion = \"Q\"\nimages = [\"smoke.toml\"]\n",
    );
    let output = emu.analyst().args(["check"]).arg(&bad).output().unwrap();
    exits(&output, 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: error: [..]:4: field images: images: smoke.toml: not an image the service takes (PNG, JPEG, GIF or WebP)

"#]],
    );
    assert_eq!(emu.chat_bodies().len(), 2);
}

/// An agent answer that holds its results as a Markdown table.
const INLINE_TABLE: &str = "Revenue by region:\n\n| region | revenue |\n|---|---|\n| EMEA | 120 |\n| APAC | 80 |\n";

#[test]
fn results_put_inline_in_the_answer_are_its_results() {
    let emu = Emulator::start();
    emu.agent(|agent| agent.answers = vec![("by region".into(), Answer::Inline(INLINE_TABLE.into()))]);
    let ask = |args: &[&str]| {
        let output = emu
            .analyst()
            .arg("ask")
            .args(args)
            .arg("Revenue by region?")
            .output()
            .unwrap();
        exits(&output, 0);
        (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    // The table of the answer, as CSV, its cells as text; one note says so.
    let (csv, stderr) = ask(&["-o", "csv", "--no-history"]);
    assert_whole(csv, str!["region,revenue\r\nEMEA,120\r\nAPAC,80\r\n"]);
    assert_whole(
        stderr,
        str![[r#"
message: [..]-message
chat: chat-0001
the stream has no SQL result: the results are the Markdown tables of the answer, cells as text

"#]],
    );
    let (json, _) = ask(&[
        "-o",
        "json",
        "--jq",
        ".queries[0] | [.tool, .title, .fromAnswer, .rows[1].region]",
    ]);
    assert_whole(
        json,
        str![[r#"
["answer","table 1 of the answer",true,"APAC"]

"#]],
    );
    for mode in ["table", "html"] {
        let (out, _) = ask(&["-o", mode, "--query", "1"]);
        assert!(!out.is_empty(), "-o {mode}");
    }
    // A table has no chart spec: nothing draws, as for a SQL result
    // without one.
    for mode in ["vega", "svg", "png"] {
        let output = emu
            .analyst()
            .args(["ask", "-o", mode, "Revenue by region?"])
            .output()
            .unwrap();
        exits(&output, 11);
        assert_whole(
            one_error_line(&output),
            str!["analyst: error: the stream has no SQL result and a table of the answer has no chart spec: nothing to draw; use -o csv or -o json for its rows"],
        );
    }
    // --query counts the answer's tables: there is one.
    let output = emu
        .analyst()
        .args(["ask", "-o", "csv", "--query", "2", "Revenue by region?"])
        .output()
        .unwrap();
    exits(&output, 11);
    // The answer itself is there to read.
    let output = emu.analyst().args(["ask", "Revenue by region?"]).output().unwrap();
    exits(&output, 0);
    assert!(String::from_utf8_lossy(&output.stdout).contains("| EMEA | 120 |"));
    // A turn with neither SQL nor a table says only that there is no SQL.
    emu.agent(|agent| agent.answers = vec![("by region".into(), Answer::NoQuery)]);
    let output = emu
        .analyst()
        .args(["ask", "-o", "csv", "Revenue by region?"])
        .output()
        .unwrap();
    exits(&output, 11);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("inline"));
    // Cube's grading calls it review, and the analysis says why.
    let dir = Scratch::new();
    let questions = dir.write(
        "eval_questions.yml",
        "eval_questions:\n  - name: inline\n    question: Revenue by region?\n    sql: SELECT region, SUM(amount) FROM orders GROUP BY region\n",
    );
    emu.agent(|agent| agent.answers = vec![("by region".into(), Answer::Inline(INLINE_TABLE.into()))]);
    let output = emu
        .analyst()
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .args(["check", "-o", "json"])
        .arg(&questions)
        .output()
        .unwrap();
    exits(&output, 9);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let inline = case(&report, "inline");
    assert_eq!(inline["verdict"], "review", "{inline}");
    assert!(inline["analysis"].as_str().unwrap().contains("inline"), "{inline}");
}
