//! Property-style: however the network cuts a stream into chunks (inside
//! UTF-8 characters and JSON strings too), `analyst` folds it into the same
//! transcript, and the same as reading the saved stream offline.

use std::time::Duration;

use crate::support::*;

/// A stream with everything the transcript folds: deltas with multi-byte
/// characters, a metadata search, two SQL results in both shapes, a tool
/// error, an in-stream unknown line, the final answer, state and usage.
fn rich_stream() -> ChatStream {
    let mut objects = SqlCall::revenue_by_month(30).truncated_to(20);
    objects.shape = Shape::Objects;
    objects.query_key = true;
    ChatStream::new("chat-prop", Family::Cube)
        .user("Umsatz je Monat? 📈")
        .thinking(&["Ich suche ", "die Bestellungen… ", "🔎"])
        .meta_call("Umsatz")
        .sql_call(&SqlCall::revenue_by_month(12))
        .failed_sql_call("SELECT nope", "Error: Unknown member nope")
        .sql_call(&objects)
        .raw_line(r#"{"id":"__future__","type":"brand-new","payload":{"x":[1,2,3]}}"#)
        .assistant(&["Der Umsatz ", "stieg — ", "von 1,5 Mio € ", "auf 2,4 Mio € 🚀"])
        .final_answer(&["Der Umsatz ", "stieg — ", "von 1,5 Mio € ", "auf 2,4 Mio € 🚀"])
        .state(
            "chat-prop",
            &[("user", "Umsatz je Monat? 📈"), ("assistant", "Der Umsatz stieg")],
        )
        .usage()
}

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A `-o json` document with its `messageId` (sent live, unknown to a
/// replay) set to null, to compare a live run with a replay.
fn without_message_id(document: &[u8]) -> serde_json::Value {
    let mut doc: serde_json::Value = serde_json::from_slice(document).unwrap();
    doc["messageId"] = serde_json::Value::Null;
    doc
}

/// Saves `bytes` in `dir` and replays them with `-o json`, which must
/// succeed; returns the saved file and the run's output.
fn replayed_json(dir: &Scratch, bytes: &[u8]) -> (std::path::PathBuf, std::process::Output) {
    let saved = dir.write("stream.ndjson", bytes);
    let replayed = analyst()
        .args(["ask", "-o", "json", "--allow-partial", "--replay"])
        .arg(&saved)
        .output()
        .unwrap();
    assert!(
        replayed.status.success(),
        "{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    (saved, replayed)
}

#[test]
fn any_chunking_gives_the_same_transcript_as_the_saved_stream() {
    let stream = rich_stream();
    let dir = Scratch::new();
    let (_, reference) = replayed_json(&dir, &stream.bytes());
    let doc: serde_json::Value = serde_json::from_slice(&reference.stdout).unwrap();
    assert_eq!(doc["answer"], "Der Umsatz stieg — von 1,5 Mio € auf 2,4 Mio € 🚀");
    assert_eq!(doc["queries"].as_array().unwrap().len(), 3);
    assert_eq!(doc["queries"][2]["rowCount"], 20);

    let emu = Emulator::start();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..40 {
        let max = [1, 3, 7, 64, 1024][round % 5];
        let sizes: Vec<usize> = (0..97).map(|_| (rng.next() % max as u64) as usize + 1).collect();
        emu.script(Reply::Stream {
            body: stream.bytes(),
            chunking: Chunking::Sizes(sizes.clone()),
            delay: Duration::ZERO,
            ending: Ending::Clean,
        });
        let live = emu
            .analyst()
            .args(["ask", "-o", "json", "--allow-partial", "Q"])
            .output()
            .unwrap();
        assert!(
            live.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&live.stderr)
        );
        assert_eq!(
            without_message_id(&live.stdout),
            without_message_id(&reference.stdout),
            "round {round} with chunk sizes {sizes:?}"
        );
    }
}

/// A stream of a few megabytes: a replay hands it over in large chunks, a
/// trickle of small chunks one line at a time. Both must fold the same, and
/// a malformed line deep in it must be named by its number either way.
#[test]
fn large_chunks_fold_as_single_lines_do() {
    let pieces: Vec<String> = (0..40_000).map(|i| format!("Schritt {i} über € ")).collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let stream = ChatStream::new("chat-big", Family::Cube)
        .user("Umsatz?")
        .thinking(&pieces)
        .sql_call(&SqlCall::revenue_by_month(12))
        .assistant(&pieces[..20_000])
        .final_answer(&["Der Umsatz ", "stieg 🚀"])
        .usage();
    let bytes = stream.bytes();
    assert!(bytes.len() > 4 << 20, "{} bytes", bytes.len());
    let dir = Scratch::new();
    let (saved, replayed) = replayed_json(&dir, &bytes);
    let doc: serde_json::Value = serde_json::from_slice(&replayed.stdout).unwrap();
    assert_eq!(doc["answer"], "Der Umsatz stieg 🚀");

    let emu = Emulator::start();
    emu.script(Reply::Stream {
        body: bytes.clone(),
        chunking: Chunking::Sizes(vec![997; 64]),
        delay: Duration::ZERO,
        ending: Ending::Clean,
    });
    let live = emu.analyst().args(["ask", "-o", "json", "Q"]).output().unwrap();
    assert!(live.status.success(), "{}", String::from_utf8_lossy(&live.stderr));
    assert_eq!(without_message_id(&live.stdout), without_message_id(&replayed.stdout));

    // Break a line in the second half of the stream: the line number and
    // the output before it are the same as when lines come one by one.
    let mut broken = bytes.clone();
    let target = stream.line_count() * 3 / 4;
    let start = broken
        .split(|&b| b == b'\n')
        .take(target - 1)
        .map(|line| line.len() + 1)
        .sum::<usize>();
    broken[start] = b'[';
    std::fs::write(&saved, &broken).unwrap();
    let raw = analyst()
        .args(["ask", "-o", "raw", "--replay"])
        .arg(&saved)
        .output()
        .unwrap();
    exits(&raw, 7);
    let stderr = String::from_utf8_lossy(&raw.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
chat: chat-big
analyst: error: malformed stream: line 45006 is not valid JSON: expected `,` or `]` at column 6

"#]],
    );
    assert_eq!(
        raw.stdout,
        broken[..start + broken[start..].iter().position(|&b| b == b'\n').unwrap() + 1]
    );
}
