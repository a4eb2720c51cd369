//! The real streams of the service (`tests/fixtures/real-streams`, copied
//! from `shared/real-streams`; `SOURCES.md` says where each came from) are
//! replayed in every output mode of `ask`, and through `rows --from`; each
//! stream's exit codes, stdout and stderr are pinned in
//! `tests/fixtures/real-streams/golden/NAME.txt`. A change of output shows
//! as a diff of that file; when it is meant, bless the new outputs with
//! `ANALYST_BLESS=1 cargo test --test real_streams` and review the diff.

mod support;

use std::path::{Path, PathBuf};

use support::analyst;

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

fn streams() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-streams");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "ndjson"))
        .collect();
    found.sort();
    assert!(found.len() >= 20, "the real streams are missing from {}", dir.display());
    found
}

/// Every run of one stream, as the golden file holds it.
fn outputs(stream: &Path) -> String {
    let mut text = String::new();
    for args in RUNS {
        let output = analyst().args(args).arg(stream).output().unwrap();
        let file = stream.file_name().unwrap().to_string_lossy();
        text.push_str(&format!(
            "=== analyst {} {file}: exit {}\n--- stdout\n{}\n--- stderr\n{}\n",
            args.join(" "),
            output
                .status
                .code()
                .map_or("signal".to_string(), |code| code.to_string()),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
        ));
    }
    text
}

#[test]
fn every_real_stream_gives_its_pinned_outputs_in_every_mode() {
    let golden_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-streams/golden");
    let bless = std::env::var_os("ANALYST_BLESS").is_some();
    let mut differing = Vec::new();
    for stream in streams() {
        let name = stream.file_stem().unwrap().to_string_lossy().to_string();
        let golden = golden_dir.join(format!("{name}.txt"));
        let got = outputs(&stream);
        if bless {
            std::fs::create_dir_all(&golden_dir).unwrap();
            std::fs::write(&golden, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&golden).unwrap_or_default();
        if got != want {
            let first = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(got.lines().count().min(want.lines().count()));
            differing.push(format!(
                "{name}: first difference at line {}:\n  got:  {:?}\n  want: {:?}",
                first + 1,
                got.lines().nth(first).unwrap_or("<end>"),
                want.lines().nth(first).unwrap_or("<end>")
            ));
        }
    }
    assert!(differing.is_empty(), "outputs changed:\n{}", differing.join("\n"));
}
