//! Property target for the stream parser and the transcript, run briefly in
//! CI: arbitrary bytes and arbitrary mutations of real streams, cut into
//! arbitrary chunks, never panic; valid streams give the same transcript
//! however they are cut. In-process, so thousands of cases take a moment.

mod support;

use std::io::{self, Read};

use analyst::cli::QuerySelector;
use analyst::render::{json, Status};
use analyst::stream::lines::LineReader;
use analyst::stream::message::Message;
use analyst::stream::transcript::{Retention, Transcript};
use support::*;

/// A deterministic generator (xorshift64*), so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Hands out `data` in chunks of random sizes, as a network would.
struct Chunks<'a> {
    data: &'a [u8],
    rng: Rng,
    max: usize,
}

impl Read for Chunks<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (self.rng.below(self.max) + 1).min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Folds a stream the way `ask -o json` does and renders the document;
/// stops at the first line that is not a message, as `ask` does.
fn fold(source: impl Read, retention: Retention) -> String {
    let mut reader = LineReader::new(source);
    let mut transcript = Transcript::new(retention);
    let mut failure = None;
    while let Some(line) = reader.next_line().unwrap() {
        match Message::parse(line.content()) {
            Ok(Some(message)) => {
                transcript.apply(&message);
            }
            Ok(None) => {}
            Err(_) => {
                failure = Some(format!("line {} is not a message", line.number));
                break;
            }
        }
    }
    for selector in [QuerySelector::Last, QuerySelector::Index(1), QuerySelector::Index(3)] {
        let _ = transcript.select(selector);
    }
    let _ = (
        transcript.answer(),
        transcript.thread(),
        transcript.tools_called(),
        transcript.sql_queries(),
    );
    let mut out = Vec::new();
    json::write(&transcript, Status::Completed, failure.as_deref(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn samples() -> Vec<Vec<u8>> {
    let mut objects = SqlCall::revenue_by_month(30).truncated_to(20);
    objects.shape = Shape::Objects;
    let rich = ChatStream::new("chat-prop", Family::Cube)
        .user("Umsatz je Monat? 📈")
        .thinking(&["Ich suche ", "die Bestellungen… "])
        .meta_call("Umsatz")
        .sql_call(&SqlCall::revenue_by_month(12))
        .failed_sql_call("SELECT nope", "Error: Unknown member nope")
        .sql_call(&objects)
        .raw_line(r#"{"id":"__future__","type":"brand-new","payload":{"x":[1,2,3]}}"#)
        .error_line("BadRequestError: Bad branch")
        .assistant(&["Der Umsatz ", "stieg — 🚀"])
        .final_answer(&["Der Umsatz ", "stieg — 🚀"])
        .suspended("msg-1")
        .state("chat-prop", &[("user", "Umsatz?"), ("assistant", "Der Umsatz stieg")])
        .usage();
    vec![std::fs::read(fixture("revenue-by-month.ndjson")).unwrap(), rich.bytes()]
}

#[test]
fn valid_streams_fold_the_same_however_they_are_cut() {
    for (index, sample) in samples().iter().enumerate() {
        for retention in [
            Retention::All,
            Retention::Nothing,
            Retention::Selected(QuerySelector::Last),
        ] {
            let whole = fold(sample.as_slice(), retention);
            for seed in 1..=150u64 {
                let max = [1, 2, 7, 64, 4096][seed as usize % 5];
                let cut = fold(
                    Chunks {
                        data: sample,
                        rng: Rng(seed),
                        max,
                    },
                    retention,
                );
                assert_eq!(cut, whole, "sample {index}, seed {seed}, chunks up to {max} bytes");
            }
        }
    }
}

#[test]
fn mutated_streams_never_panic() {
    let samples = samples();
    let tokens: [&[u8]; 10] = [
        b"{",
        b"}",
        b"\"",
        b"\\",
        b"\n",
        b"null",
        b"[]",
        b"\"toolCall\":{\"result\":1},",
        b"\xff\xfe",
        b"{\"error\":{}}\n",
    ];
    for seed in 1..=1500u64 {
        let mut rng = Rng(seed);
        let mut data = samples[rng.below(samples.len())].clone();
        for _ in 0..rng.below(12) + 1 {
            let at = rng.below(data.len());
            match rng.below(3) {
                0 => data[at] = rng.next() as u8,
                1 => {
                    let end = (at + rng.below(64) + 1).min(data.len());
                    data.drain(at..end);
                }
                _ => {
                    let token = tokens[rng.below(tokens.len())];
                    data.splice(at..at, token.iter().copied());
                }
            }
            if data.is_empty() {
                break;
            }
        }
        for retention in [Retention::All, Retention::Nothing] {
            fold(
                Chunks {
                    data: &data,
                    rng: Rng(seed),
                    max: 97,
                },
                retention,
            );
        }
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    for seed in 1..=1500u64 {
        let mut rng = Rng(seed);
        let length = rng.below(2048);
        let data: Vec<u8> = (0..length)
            .map(|_| match rng.below(4) {
                0 => {
                    let structural = b"{}[]\":,\n\\";
                    structural[rng.below(structural.len())]
                }
                _ => rng.next() as u8,
            })
            .collect();
        fold(
            Chunks {
                data: &data,
                rng: Rng(seed ^ 0xabcdef),
                max: 33,
            },
            Retention::All,
        );
    }
}
