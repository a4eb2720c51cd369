//! Secrets kept out of everything shown or saved: the registry of every
//! secret the process knows ([`register_secret`]) and [`redact`], which
//! replaces each — and any text shaped like a Cube API key (`sk-…`) — by
//! `***`, however the text is written: as it is, or with JSON escapes
//! (`test\u002dkey`, `\/`), one layer or several (a tool result's JSON
//! inside a JSON string); word boundaries are decided on the decoded text
//! (`\nsk-…` starts a key). And [`Secret`], the type a secret travels in,
//! whose `Debug` and `Display` print `***`.
//!
//! Text assembled from several lines (an answer's deltas) is redacted
//! whole where it is shown and kept, not only line by line: a secret
//! split between two deltas is never whole in any single line.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, RwLock};

use memchr::memmem::Finder;

/// What a secret is replaced with.
const REDACTED: &str = "***";
/// Secrets shorter than this are not redacted: they would blot out ordinary
/// text (and no real key or token is that short).
const MIN_SECRET: usize = 4;
/// How many layers of JSON escapes are looked through (a line of the
/// stream, the JSON text of a tool result inside it, and one more).
const ESCAPE_LAYERS: usize = 3;

/// The secrets the process knows (API key, Cube token, data token, data
/// secret), as ready-made searchers.
static SECRETS: RwLock<Vec<Finder<'static>>> = RwLock::new(Vec::new());

/// Set once a secret is registered: until then (a `--replay`, which reads
/// none) redacting a line costs one load, not a lock.
static ANY_SECRET: AtomicBool = AtomicBool::new(false);

/// Makes `secret` one of those [`redact`] removes.
pub fn register_secret(secret: &str) {
    if secret.len() < MIN_SECRET {
        return;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !secrets.iter().any(|known| known.needle() == secret.as_bytes()) {
        secrets.push(Finder::new(secret.as_bytes()).into_owned());
    }
    ANY_SECRET.store(true, Ordering::Release);
}

/// What starts text shaped like a Cube API key.
const KEY_PREFIX: &[u8] = b"sk-";
/// How many key characters after `sk-` make text shaped like a key.
const KEY_SHAPE: usize = 20;

/// True for a character of a Cube API key (after its `sk-`).
fn is_key_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_'
}

/// Where text shaped like a Cube API key is in `bytes` (`sk-` and 20 or
/// more key characters, not inside a longer word), each range whole.
fn key_shaped(bytes: &[u8], found: &mut Vec<Range<usize>>) {
    static PREFIX: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(KEY_PREFIX));
    let mut at = 0;
    while let Some(offset) = PREFIX.find(&bytes[at..]) {
        let start = at + offset;
        let body = start + KEY_PREFIX.len();
        let end = body + bytes[body..].iter().take_while(|&&b| is_key_char(b)).count();
        let own_word = start == 0 || !is_key_char(bytes[start - 1]);
        if own_word && end - body >= KEY_SHAPE {
            found.push(start..end);
            at = end;
        } else {
            at = body;
        }
    }
}

/// Where the known secrets and the text shaped like a key are in `bytes`.
fn secrets_in(bytes: &[u8], found: &mut Vec<Range<usize>>) {
    if ANY_SECRET.load(Ordering::Acquire) {
        let secrets = SECRETS.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        for secret in secrets.iter() {
            let len = secret.needle().len();
            found.extend(secret.find_iter(bytes).map(|at| at..at + len));
        }
    }
    key_shaped(bytes, found);
}

/// Text with its JSON escapes decoded, and where each decoded byte came
/// from in the text it was decoded from.
struct Decoded {
    bytes: Vec<u8>,
    /// `from[i]` is where decoded byte `i` starts in the source; one more
    /// entry, the source's length, ends the last.
    from: Vec<usize>,
}

/// True when `bytes` holds an escape that decodes to a key or secret
/// character or decides a word boundary: `\u`, `\/`, or any escape right
/// before `sk-`. The other escapes (`\n`, `\"`, …) stand for characters no
/// key holds, and a line without any is searched as it is.
fn needs_decoding(bytes: &[u8]) -> bool {
    static UNICODE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\\u"));
    static SOLIDUS: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"\\/"));
    static PREFIX: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(KEY_PREFIX));
    memchr::memchr(b'\\', bytes).is_some()
        && (UNICODE.find(bytes).is_some() || SOLIDUS.find(bytes).is_some() || PREFIX.find(bytes).is_some())
}

/// The four hex digits at `bytes[at..]`, as a number.
fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    let text = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(text, 16)
        .ok()
        .filter(|_| digits.iter().all(u8::is_ascii_hexdigit))
}

/// `bytes` with every JSON escape decoded (a lone surrogate as U+FFFD,
/// anything that is no escape kept as it is).
fn decode(bytes: &[u8]) -> Decoded {
    let mut decoded = Decoded {
        bytes: Vec::with_capacity(bytes.len()),
        from: Vec::with_capacity(bytes.len() + 1),
    };
    let push = |decoded: &mut Decoded, text: &[u8], at: usize| {
        decoded.bytes.extend_from_slice(text);
        decoded.from.extend(std::iter::repeat_n(at, text.len()));
    };
    let mut i = 0;
    while i < bytes.len() {
        let simple = match (bytes[i], bytes.get(i + 1)) {
            (b'\\', Some(b'n')) => Some(b'\n'),
            (b'\\', Some(b't')) => Some(b'\t'),
            (b'\\', Some(b'r')) => Some(b'\r'),
            (b'\\', Some(b'b')) => Some(0x08),
            (b'\\', Some(b'f')) => Some(0x0c),
            (b'\\', Some(&c @ (b'"' | b'\\' | b'/'))) => Some(c),
            _ => None,
        };
        if let Some(byte) = simple {
            push(&mut decoded, &[byte], i);
            i += 2;
            continue;
        }
        let unit = match (bytes[i], bytes.get(i + 1)) {
            (b'\\', Some(b'u')) => hex4(bytes, i + 2),
            _ => None,
        };
        let Some(unit) = unit else {
            push(&mut decoded, &bytes[i..i + 1], i);
            i += 1;
            continue;
        };
        let mut len = 6;
        let low = (bytes.get(i + 6..i + 8) == Some(b"\\u"))
            .then(|| hex4(bytes, i + 8))
            .flatten();
        let code = match (unit, low) {
            (0xd800..=0xdbff, Some(low @ 0xdc00..=0xdfff)) => {
                len = 12;
                0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
            }
            _ => unit,
        };
        let c = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
        push(&mut decoded, c.encode_utf8(&mut [0; 4]).as_bytes(), i);
        i += len;
    }
    decoded.from.push(bytes.len());
    decoded
}

/// Where secrets are in `bytes`, as ranges of `bytes`: in the text as it
/// is and in each layer of its JSON escapes decoded.
fn find_secrets(bytes: &[u8]) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    secrets_in(bytes, &mut found);
    if !needs_decoding(bytes) {
        return found;
    }
    // Each layer's offsets, mapped back to `bytes` through the ones before.
    let mut layer = decode(bytes);
    for depth in 0..ESCAPE_LAYERS {
        let mut in_layer = Vec::new();
        secrets_in(&layer.bytes, &mut in_layer);
        found.extend(
            in_layer
                .into_iter()
                .map(|range| layer.from[range.start]..layer.from[range.end]),
        );
        if depth + 1 == ESCAPE_LAYERS || !needs_decoding(&layer.bytes) {
            break;
        }
        let next = decode(&layer.bytes);
        layer = Decoded {
            from: next.from.iter().map(|&at| layer.from[at]).collect(),
            bytes: next.bytes,
        };
    }
    found
}

/// `bytes` with every known secret, and every text shaped like a Cube API
/// key (`sk-…`), replaced by `***`, whether written as it is or with JSON
/// escapes (borrowed as they are when none occurs, the common case: one
/// fast scan per secret).
pub fn redact_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    let mut found = find_secrets(bytes);
    if found.is_empty() {
        return Cow::Borrowed(bytes);
    }
    found.sort_unstable_by_key(|range| range.start);
    let mut redacted = Vec::with_capacity(bytes.len());
    let mut copied = 0;
    for range in found {
        if range.end <= copied {
            continue;
        }
        if range.start >= copied {
            redacted.extend_from_slice(&bytes[copied..range.start]);
            redacted.extend_from_slice(REDACTED.as_bytes());
        }
        copied = range.end;
    }
    redacted.extend_from_slice(&bytes[copied..]);
    Cow::Owned(redacted)
}

/// `text` with every known secret replaced by `***` (see [`redact_bytes`]).
pub fn redact(text: &str) -> Cow<'_, str> {
    match redact_bytes(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        // Ranges start and end on whole characters of the text or of an
        // escape, and `***` is ASCII, so the result is UTF-8.
        Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

/// A secret (API key, token or data secret). Its `Debug` and `Display`
/// print `***`, so it cannot leak through a log line, an error message or a
/// panic.
#[derive(Clone)]
pub struct Secret {
    value: String,
    origin: String,
}

impl Secret {
    /// Wraps a secret value that came from `origin` (a variable, a flag, a
    /// profile's key: what a message tells the user to check), and
    /// registers it to be redacted from everything shown or saved.
    pub fn new(value: String, origin: impl Into<String>) -> Self {
        register_secret(&value);
        Secret {
            value,
            origin: origin.into(),
        }
    }

    /// The secret itself, for the one place that puts it in a header or
    /// signs with it.
    pub fn expose(&self) -> &str {
        &self.value
    }

    /// Where it came from, as a message names it: `ANALYST_API_KEY`,
    /// `--api-key-file`, `api_key_command of profile prod (FILE)`.
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_and_short_text_is_no_secret() {
        register_secret("sk-redact-test-93f1");
        register_secret("ab");
        assert_eq!(redact("key sk-redact-test-93f1."), "key ***.");
        assert_eq!(redact("abc"), "abc", "too short to be a secret");
        assert!(matches!(redact_bytes(b"nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn text_shaped_like_a_key_is_redacted_whole_and_only_it() {
        assert_eq!(redact("key sk-live-4f2a9c81d7e6b3a05c1d."), "key ***.");
        assert_eq!(redact("sk-short-one and sk-"), "sk-short-one and sk-");
        assert_eq!(
            redact("task-sk-4f2a9c81d7e6b3a05c1d4f2a"),
            "task-sk-4f2a9c81d7e6b3a05c1d4f2a"
        );
        assert_eq!(
            redact("a sk-aaaaaaaaaaaaaaaaaaaa b sk-bbbbbbbbbbbbbbbbbbbbbb"),
            "a *** b ***"
        );
    }

    #[test]
    fn a_secret_written_with_json_escapes_is_redacted_as_written() {
        register_secret("escaped-test-key-71c2");
        let line = r#"{"content":"key escaped\u002dtest\u002Dkey-71c2 here"}"#;
        assert_eq!(redact(line), r#"{"content":"key *** here"}"#);
        let every = r#""\u0065\u0073caped-test-key-71c2""#;
        assert_eq!(redact(every), r#""***""#);
        // A tool result's JSON inside a JSON string: two layers.
        let nested = r#"{"result":"{\"cell\":\"escaped\\u002dtest-key-71c2\"}"}"#;
        assert_eq!(redact(nested), r#"{"result":"{\"cell\":\"***\"}"}"#);
    }

    #[test]
    fn a_key_after_an_escaped_line_break_or_tab_is_its_own_word() {
        let key = "sk-4f2a9c81d7e6b3a05c1d4f2a";
        for before in [r"\n", r"\t", r"\r", r"\\", r"\u0020"] {
            let line = format!(r#"{{"content":"first{before}{key} rest"}}"#);
            assert_eq!(
                redact(&line),
                format!(r#"{{"content":"first{before}*** rest"}}"#),
                "{before}"
            );
        }
        let inside = format!(r#"{{"content":"a\u0041{key}"}}"#);
        assert_eq!(redact(&inside), inside, "after an escaped letter it is inside a word");
        let escaped_body = r#""sk-4f2a9c81d7e6\u002db3a05c1d4f2a""#;
        assert_eq!(redact(escaped_body), r#""***""#);
    }

    #[test]
    fn lone_and_paired_surrogates_decode_without_harm() {
        let decoded = decode(br#"a\ud83c\udf54b\ud83cc\uZZZZ"#);
        assert_eq!(String::from_utf8(decoded.bytes).unwrap(), "a\u{1f354}b\u{fffd}c\\uZZZZ");
    }

    /// `text` as the inside of a JSON string, each character written as
    /// `choices` says: as it is, `\uXXXX` (lower or upper hex), or `\/`
    /// (quotes and backslashes always escaped).
    fn escaped(text: &str, choices: &[u8]) -> String {
        text.chars()
            .zip(choices.iter().cycle())
            .map(|(c, choice)| match (choice % 4, c) {
                (_, '"') => "\\\"".to_string(),
                (_, '\\') => "\\\\".to_string(),
                (1, c) => format!("\\u{:04x}", u32::from(c)),
                (2, c) => format!("\\u{:04X}", u32::from(c)),
                (3, '/') => "\\/".to_string(),
                (_, c) => c.to_string(),
            })
            .collect()
    }

    proptest::proptest! {
        /// However a secret is escaped and wherever the service splits it
        /// between two deltas, no line holds it whole once redacted, as
        /// sent or decoded, and neither does the answer assembled from the
        /// two (as the transcript folds them: redacted lines, then the
        /// whole text redacted).
        #[test]
        fn a_secret_escaped_and_split_anywhere_is_never_whole(
            before in "[ -~]{0,12}",
            after in "[ -~]{0,12}",
            choices in proptest::collection::vec(0u8..4, 1..40),
            split in 0usize..64,
        ) {
            let secret = "prop/secret-key-5d0e";
            register_secret(secret);
            let text = format!("{before}{secret}{after}");
            let cut = split % (text.len() + 1);
            let mut assembled = String::new();
            for (piece, offset) in [(&text[..cut], 0), (&text[cut..], 1)] {
                let rotated: Vec<u8> = choices.iter().map(|choice| choice.wrapping_add(offset)).collect();
                let line = format!(r#"{{"content":"{}"}}"#, escaped(piece, &rotated));
                let shown = redact(&line);
                let content: serde_json::Value = serde_json::from_str(&shown).unwrap();
                let content = content["content"].as_str().unwrap().to_string();
                proptest::prop_assert!(!shown.contains(secret) && !content.contains(secret), "{}", shown);
                assembled.push_str(&content);
            }
            proptest::prop_assert!(!redact(&assembled).contains(secret), "{}", assembled);
        }
    }

    #[test]
    fn secrets_never_print() {
        let key = Secret::new("sk-very-secret".into(), "a test");
        assert_eq!(format!("{key} {key:?}"), "*** ***");
    }
}
