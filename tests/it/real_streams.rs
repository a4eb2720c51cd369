//! The real streams of the service (`tests/fixtures/real-streams`, copied
//! from `shared/real-streams`; `SOURCES.md` says where each came from) are
//! replayed in every output mode of `ask`, and through `rows --from`; each
//! stream's exit codes, stdout and stderr are pinned in
//! `tests/fixtures/real-streams/golden/NAME.txt`. A change of output shows
//! as a diff of that file; when it is meant, write the new outputs with
//! `SNAPSHOTS=overwrite cargo test --test it real_streams` and review the
//! diff.
//! The real Cube server's data query answers (`real-streams/data-api`) are
//! served by the emulator as recorded (status and body) to `rows`, pinned
//! the same way in `golden/data-api/NAME.txt`.

use std::path::{Path, PathBuf};

use crate::support::{analyst, assert_pinned, Emulator, Reply, Route, DATA_SECRET};

/// The invocations each stream is replayed through.
const RUNS: [&[&str]; 8] = [
    &["ask", "-o", "answer", "--replay"],
    &["ask", "-o", "raw", "--replay"],
    &["ask", "-o", "events", "--replay"],
    &["ask", "-o", "json", "--replay"],
    &["ask", "-o", "csv", "--replay"],
    &["ask", "-o", "vega", "--replay"],
    &["rows", "-o", "csv", "--from"],
    &["rows", "-o", "json", "--from"],
];

/// The `.ndjson` files of `tests/fixtures/real-streams/FOLDER`, sorted: at
/// least `expected` of them.
fn ndjson_files(folder: &str, expected: usize) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/real-streams")
        .join(folder);
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "ndjson"))
        .collect();
    found.sort();
    assert!(
        found.len() >= expected,
        "the real streams are missing from {}",
        dir.display()
    );
    found
}

/// One run as a golden file holds it: `title`, the exit code, stdout and
/// stderr.
fn run_text(title: &str, output: &std::process::Output) -> String {
    format!(
        "=== {title}: exit {}\n--- stdout\n{}\n--- stderr\n{}\n",
        output
            .status
            .code()
            .map_or("signal".to_string(), |code| code.to_string()),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    )
}

/// Every run of one stream, as the golden file holds it.
fn outputs(stream: &Path) -> String {
    let mut text = String::new();
    for args in RUNS {
        let output = analyst().args(args).arg(stream).output().unwrap();
        let file = stream.file_name().unwrap().to_string_lossy();
        text.push_str(&run_text(&format!("analyst {} {file}", args.join(" ")), &output));
    }
    text
}

#[test]
fn every_real_stream_gives_its_pinned_outputs_in_every_mode() {
    let golden_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-streams/golden");
    for stream in ndjson_files("", 20) {
        let name = stream.file_stem().unwrap().to_string_lossy().to_string();
        assert_pinned(outputs(&stream), &golden_dir.join(format!("{name}.txt")));
    }
}

#[test]
fn every_real_data_api_answer_gives_its_pinned_rows() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-streams");
    let answers = ndjson_files("data-api", 15);
    for answer in answers {
        let name = answer.file_stem().unwrap().to_string_lossy().to_string();
        // The recorded status (200 when only the body was kept).
        let status = std::fs::read_to_string(answer.with_extension("http"))
            .ok()
            .and_then(|head| head.split_whitespace().nth(1)?.parse::<u16>().ok())
            .unwrap_or(200);
        let body = std::fs::read_to_string(&answer).unwrap();
        let mut text = String::new();
        for mode in ["csv", "json"] {
            let emu = Emulator::start();
            emu.script_on(Route::Data, Reply::status(status, "application/json", &body));
            let output = emu
                .analyst()
                .env("ANALYST_DATA_URL", emu.data_url())
                .env("ANALYST_DATA_SECRET", DATA_SECRET)
                .args(["--retries", "0", "rows", "--sql", "SELECT 1", "-o", mode])
                .output()
                .unwrap();
            text.push_str(&run_text(
                &format!("analyst rows -o {mode} ({name}, status {status})"),
                &output,
            ));
        }
        assert_pinned(text, &fixtures.join(format!("golden/data-api/{name}.txt")));
    }
}
