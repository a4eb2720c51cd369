//! Property target for the stream parser and the transcript, run briefly in
//! CI: arbitrary bytes and arbitrary mutations of real streams, cut into
//! arbitrary chunks, never panic; valid streams give the same transcript
//! however they are cut. In-process, so thousands of cases take a moment.

use std::io::{self, Read};

use std::time::Instant;

use crate::support::*;
use analyst::error::{Fault, Kind};
use analyst::output::Output;
use analyst::render::json::Json;
use analyst::render::Truncation;
use analyst::results::{Pick, Picker};
use analyst::stream::lines::Reads;
use analyst::stream::message::{Message, ParseError};
use analyst::stream::transcript::{Event, Transcript};
use analyst::stream::turn::{Ended, Observer, Renderer, Sinks, Status, Turn};
use serde_json::value::RawValue;
use serde_json::Value;

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

/// `-o json` with two pickers beside it, as `csv` and `--min-rows` keep
/// theirs: every event goes to all three.
struct JsonAndPickers {
    json: Json,
    last: Picker,
    third: Picker,
}

impl Renderer for JsonAndPickers {
    fn event(&mut self, event: &Event) {
        self.json.event(event);
        self.last.event(event);
        self.third.event(event);
    }

    fn end(&mut self, transcript: &Transcript, ended: &Ended, out: &mut dyn Output) -> anyhow::Result<()> {
        let accepted = Truncation {
            every_row: None,
            allow_partial: true,
        };
        self.json.end(transcript, ended, &accepted, out)
    }
}

/// Folds a stream the way `ask -o json` does (with pickers as `csv` and
/// `--min-rows` keep them) and renders the document; stops at the first
/// line that is not a message, as `ask` does.
fn fold(source: impl Read) -> String {
    let mut renderer = JsonAndPickers {
        json: Json::default(),
        last: Picker::new(Pick::Last),
        third: Picker::new(Pick::Index(3)),
    };
    let mut turn = Turn::new(Instant::now());
    let mut sinks = Sinks {
        tee: None,
        renderer: &mut renderer,
        out: &mut io::sink(),
    };
    let failure = turn.read(Reads(source), &mut sinks).err().map(|err| format!("{err:#}"));
    let transcript = &turn.transcript;
    let _ = (renderer.last.picked(), renderer.third.picked());
    let _ = (
        transcript.answer(),
        transcript.thread(),
        transcript.tools_called(),
        transcript.sql_queries(),
    );
    let mut out = Vec::new();
    let failure = failure.map(|message| Fault::new(Kind::BadStream, message));
    let ended = Ended {
        status: Status::Completed,
        failure,
        aborted: false,
        read_whole: true,
        asks_back: None,
    };
    renderer.end(transcript, &ended, &mut out).unwrap();
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
    let mut titled = SqlCall::revenue_by_month(3);
    titled.title = "Revenue\u{1b}]0;pwned\u{7}".into();
    let hostile = ChatStream::new("chat\u{1b}[2J", Family::Cube)
        .user("Q")
        .sql_call(&titled)
        .failed_sql_call("SELECT 1", "Error: \u{1b}[31mred\u{9b}2J")
        .final_answer(&["Sure\u{1b}]52;c;ZXZpbA==\u{7}", "\r\u{8}\u{7f} done\t."]);
    vec![
        std::fs::read(fixture("revenue-by-month.ndjson")).unwrap(),
        rich.bytes(),
        hostile.bytes(),
    ]
}

#[test]
fn valid_streams_fold_the_same_however_they_are_cut() {
    for (index, sample) in samples().iter().enumerate() {
        let whole = fold(sample.as_slice());
        for seed in 1..=300u64 {
            let max = [1, 2, 7, 64, 4096][seed as usize % 5];
            let cut = fold(Chunks {
                data: sample,
                rng: Rng(seed),
                max,
            });
            assert_eq!(cut, whole, "sample {index}, seed {seed}, chunks up to {max} bytes");
        }
    }
}

/// A sample stream mutated as `seed` says: bytes changed, runs dropped,
/// JSON tokens and control characters inserted.
fn mutated(samples: &[Vec<u8>], seed: u64) -> Vec<u8> {
    let tokens: [&[u8]; 12] = [
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
        b"\\u001b]52;c;eA==\\u0007",
        b"1e999",
    ];
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
    data
}

#[test]
fn mutated_streams_never_panic() {
    let samples = samples();
    for seed in 1..=1500u64 {
        let data = mutated(&samples, seed);
        fold(Chunks {
            data: &data,
            rng: Rng(seed),
            max: 97,
        });
    }
}

/// The exit codes of `cli.md` that a replayed stream can end with.
const REPLAY_EXIT_CODES: [i32; 7] = [0, 3, 7, 8, 9, 10, 11];

/// Through the real binary: whatever the stream, the exit code is one of
/// `cli.md`'s (never 1, never a panic), `-o json` is one JSON document and
/// `-o events` one JSON value per line.
#[test]
fn mutated_streams_keep_the_output_contract() {
    let samples = samples();
    let dir = Scratch::new();
    for seed in 1..=120u64 {
        let path = dir.write(&format!("{seed}.ndjson"), mutated(&samples, seed));
        for mode in ["json", "events", "csv"] {
            let output = analyst()
                .args(["ask", "-q", "-o", mode, "--replay"])
                .arg(&path)
                .output()
                .unwrap();
            let code = output.status.code().unwrap_or(-1);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                REPLAY_EXIT_CODES.contains(&code),
                "seed {seed}, -o {mode}: exit {code}: {stderr}"
            );
            match mode {
                "json" => {
                    serde_json::from_slice::<Value>(&output.stdout)
                        .unwrap_or_else(|err| panic!("seed {seed}: -o json is not JSON ({err}): {stderr}"));
                }
                "events" => {
                    for line in output.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                        serde_json::from_slice::<Value>(line)
                            .unwrap_or_else(|err| panic!("seed {seed}: an event is not JSON ({err})"));
                    }
                }
                _ => {}
            }
        }
    }
}

/// On a terminal, no control character from the stream acts: the only
/// bytes below 0x20 are newlines, tabs and the terminal's own `\r`.
#[test]
fn mutated_streams_never_reach_a_terminal_with_live_controls() {
    let samples = samples();
    let dir = Scratch::new();
    let binary = assert_cmd::cargo::cargo_bin("analyst");
    let streams = samples
        .iter()
        .cloned()
        .chain((1..=30u64).map(|seed| mutated(&samples, seed)));
    for (seed, stream) in streams.enumerate() {
        let path = dir.write(&format!("{seed}.ndjson"), stream);
        for mode in ["answer", "raw"] {
            let command = format!("{} ask -q -o {mode} --replay {}", binary.display(), path.display());
            let output = std::process::Command::new("script")
                .args(["-q", "-c", &command, "/dev/null"])
                .env("XDG_CONFIG_HOME", no_config_home())
                // Our own colours are escape sequences too; the service's
                // text is what must not carry any.
                .env("NO_COLOR", "1")
                .output()
                .expect("script(1) from util-linux runs");
            let live = output
                .stdout
                .iter()
                .find(|&&b| (b < 0x20 && !b"\n\t\r".contains(&b)) || b == 0x7f);
            assert!(
                live.is_none(),
                "seed {seed}, -o {mode}: byte {live:?} reached the terminal"
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
        fold(Chunks {
            data: &data,
            rng: Rng(seed ^ 0xabcdef),
            max: 33,
        });
    }
}

/// How serde_json judges a line as a `Value`: the reference the typed
/// message must agree with.
enum Verdict {
    Blank,
    Invalid(String),
    NotAnObject,
    Object(serde_json::Map<String, Value>),
}

fn reference(content: &[u8]) -> Verdict {
    let content = content.strip_prefix("\u{feff}".as_bytes()).unwrap_or(content);
    if content.iter().all(|b| b" \t\r\n".contains(b)) {
        return Verdict::Blank;
    }
    match serde_json::from_slice::<Value>(content) {
        Err(err) => Verdict::Invalid(err.to_string()),
        Ok(Value::Object(map)) if well_typed(&map) => Verdict::Object(map),
        Ok(Value::Object(_)) => Verdict::Invalid("a field of the wrong type".into()),
        Ok(_) => Verdict::NotAnObject,
    }
}

/// The field types `Message` requires (a `null` is always accepted).
fn well_typed(map: &serde_json::Map<String, Value>) -> bool {
    let is = |key: &str, check: fn(&Value) -> bool| map.get(key).is_none_or(|v| v.is_null() || check(v));
    ["id", "role", "content", "messageId"]
        .iter()
        .all(|key| is(key, Value::is_string))
        && ["isDelta", "isInProcess"].iter().all(|key| is(key, Value::is_boolean))
        && is("graphPath", |path| {
            path.as_array()
                .is_some_and(|names| names.first().is_none_or(Value::is_string))
        })
        && is("toolCall", |call| {
            call.as_object()
                .is_some_and(|call| call.get("name").is_none_or(|n| n.is_null() || n.is_string()))
        })
}

/// Checks that the message read from a line holds what serde_json sees.
fn same_fields(message: &Message<'_>, map: &serde_json::Map<String, Value>) {
    let text = |key: &str| map.get(key).and_then(Value::as_str);
    let raw = |raw: Option<&RawValue>| raw.map(|r| serde_json::from_str::<Value>(r.get()).unwrap());
    let present = |key: &str| map.get(key).filter(|v| !v.is_null()).cloned();
    assert_eq!(message.id.as_deref(), text("id"));
    assert_eq!(message.role.as_deref(), text("role"));
    assert_eq!(message.content.as_deref(), text("content"));
    assert_eq!(message.message_id(), text("messageId"));
    assert_eq!(message.is_delta, map.get("isDelta").and_then(Value::as_bool));
    assert_eq!(message.is_in_process, map.get("isInProcess").and_then(Value::as_bool));
    assert_eq!(message.thinking, present("thinking").is_some());
    let path = map.get("graphPath").and_then(Value::as_array);
    let is_final = path.is_some_and(|p| p.first().and_then(Value::as_str) == Some("final") && p.len() <= 2);
    assert_eq!(message.final_node, is_final);
    assert_eq!(raw(message.state()), present("state"));
    assert_eq!(raw(message.error()), present("error"));
    assert_eq!(raw(message.usage()), present("usage"));
    let call = map.get("toolCall").and_then(Value::as_object);
    assert_eq!(message.tool_call().is_some(), call.is_some());
    if let (Some(read), Some(call)) = (message.tool_call(), call) {
        assert_eq!(read.name.as_deref(), call.get("name").and_then(Value::as_str));
        let field = |key: &str| call.get(key).filter(|v| !v.is_null()).cloned();
        assert_eq!(raw(read.input), field("input"));
        assert_eq!(raw(read.result), field("result"));
    }
}

#[test]
fn lines_are_judged_as_serde_json_judges_them() {
    let lines: Vec<Vec<u8>> = samples()
        .iter()
        .flat_map(|sample| sample.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect::<Vec<_>>())
        .collect();
    let tokens: [&[u8]; 24] = [
        b"{",
        b"}",
        b"[",
        b"]",
        b"\"",
        b"\\",
        b",",
        b":",
        b" ",
        b"\t",
        b"\r",
        b"-",
        b"0",
        b"1.5e-3",
        b"true",
        b"null",
        b"\\u00e9",
        b"\\ud83d\\ude00",
        b"\\ud800",
        b"\\n",
        b"\x01",
        b"\xc3\xa9",
        b"\"id\":\"x\",",
        b"\"graphPath\":[\"final\"],",
    ];
    let (mut agreed_valid, mut agreed_invalid) = (0, 0);
    for seed in 1..=20_000u64 {
        let mut rng = Rng(seed);
        let mut line = lines[rng.below(lines.len())].clone();
        for _ in 0..rng.below(3) + 1 {
            let at = rng.below(line.len() + 1);
            match rng.below(3) {
                0 if at < line.len() => line[at] = tokens[rng.below(tokens.len())][0],
                1 if at < line.len() => {
                    let end = (at + rng.below(8) + 1).min(line.len());
                    line.drain(at..end);
                }
                _ => {
                    let token = tokens[rng.below(tokens.len())];
                    line.splice(at..at, token.iter().copied());
                }
            }
        }
        let shown = String::from_utf8_lossy(&line).into_owned();
        match (reference(&line), analyst::stream::parse::message(&line)) {
            (Verdict::Blank, Ok(None)) => {}
            (Verdict::Object(map), Ok(Some(message))) => {
                same_fields(&message, &map);
                agreed_valid += 1;
            }
            (Verdict::Object(_), Err(ParseError::Invalid(why))) if why.contains("duplicate field") => {}
            (Verdict::Invalid(_), Err(ParseError::Invalid(_))) => agreed_invalid += 1,
            // A lone surrogate escape in a field no output reads is
            // accepted: real services split emoji.
            (Verdict::Invalid(why), Ok(Some(_))) if why.contains("surrogate") || why.contains("hex escape") => {}
            (Verdict::NotAnObject, Err(ParseError::NotAnObject)) => {}
            (_, got) => panic!("seed {seed}: serde_json and the scanner disagree on {shown:?}: {got:?}"),
        }
    }
    assert!(
        agreed_valid > 1000 && agreed_invalid > 1000,
        "{agreed_valid} valid, {agreed_invalid} invalid"
    );
}
