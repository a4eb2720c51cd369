//! Property-style: however the network cuts a stream into chunks (inside
//! UTF-8 characters and JSON strings too), `analyst` folds it into the same
//! transcript, and the same as reading the saved stream offline.

mod support;

use std::time::Duration;

use support::*;

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

#[test]
fn any_chunking_gives_the_same_transcript_as_the_saved_stream() {
    let stream = rich_stream();
    let dir = std::env::temp_dir().join(format!("analyst-prop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let saved = dir.join("rich.ndjson");
    std::fs::write(&saved, stream.bytes()).unwrap();
    let reference = analyst()
        .args(["ask", "-o", "json", "--replay"])
        .arg(&saved)
        .output()
        .unwrap();
    assert!(
        reference.status.success(),
        "{}",
        String::from_utf8_lossy(&reference.stderr)
    );
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
        let live = emu.analyst().args(["ask", "-o", "json", "Q"]).output().unwrap();
        assert!(
            live.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&live.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&live.stdout),
            String::from_utf8_lossy(&reference.stdout),
            "round {round} with chunk sizes {sizes:?}"
        );
    }
}
