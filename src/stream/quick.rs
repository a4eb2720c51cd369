//! The common stream line (a delta: a few strings, booleans and numbers)
//! read in one pass without serde. serde_json's cost on such a line is its
//! generic walk (a visitor call per key and value), not its scanning: here
//! the keys an output reads are matched as they are scanned, strings are
//! scanned eight bytes at a time, and everything else is checked and
//! skipped.
//!
//! It only ever says yes or "not mine": a line it reads is one serde_json
//! reads the same (the tests compare the two on mutated lines); any line
//! it is not sure of — anything malformed, a `toolCall`, `state`, `error`,
//! `usage` or `messageId` (fields kept raw), a key with an escape, a
//! surrogate escape, deep nesting — is left to serde_json (see
//! [`super::parse`]), which reads it or says what is wrong and where.

use std::borrow::Cow;

use super::message::{Message, Text};

/// Nesting beyond this is left to serde_json (whose own limit is 128).
const MAX_DEPTH: usize = 64;

/// Reads a line (its UTF-8 already checked, leading whitespace removed)
/// when it has the common shape; `None` leaves it to serde_json.
pub fn read(text: &str) -> Option<Message<'_>> {
    let mut scan = Scan { text, at: 0 };
    let mut message = Message::default();
    scan.eat(b'{')?;
    scan.skip_whitespace();
    if scan.eat(b'}').is_none() {
        loop {
            let key = scan.key()?;
            scan.skip_whitespace();
            scan.eat(b':')?;
            scan.skip_whitespace();
            match key {
                Field::Id => message.id = scan.maybe_text()?,
                Field::Role => message.role = scan.maybe_text()?,
                Field::Content => message.content = scan.maybe_text()?,
                Field::Thinking => {
                    // Its presence is what counts.
                    message.thinking = !scan.null();
                    if message.thinking {
                        scan.skip_value(1)?;
                    }
                }
                Field::GraphPath => message.final_node = scan.final_node()?,
                Field::IsDelta => message.is_delta = scan.maybe_bool()?,
                Field::IsInProcess => message.is_in_process = scan.maybe_bool()?,
                Field::KeptRaw => return None,
                Field::Other => scan.skip_value(1)?,
            }
            scan.skip_whitespace();
            if scan.eat(b',').is_none() {
                scan.eat(b'}')?;
                break;
            }
            scan.skip_whitespace();
        }
    }
    scan.skip_whitespace();
    (scan.at == text.len()).then_some(message)
}

/// What a key is to [`read`].
enum Field {
    Id,
    Role,
    Content,
    Thinking,
    GraphPath,
    IsDelta,
    IsInProcess,
    /// `toolCall`, `state`, `error`, `usage`, `messageId`: left to serde_json.
    KeptRaw,
    /// Checked and skipped.
    Other,
}

/// The keys [`read`] knows, as written (quotes included).
const KEYS: [(&[u8], Field); 13] = [
    (b"\"id\"", Field::Id),
    (b"\"role\"", Field::Role),
    (b"\"content\"", Field::Content),
    (b"\"thinking\"", Field::Thinking),
    (b"\"graphPath\"", Field::GraphPath),
    (b"\"isDelta\"", Field::IsDelta),
    (b"\"isInProcess\"", Field::IsInProcess),
    (b"\"sort\"", Field::Other),
    (b"\"toolCall\"", Field::KeptRaw),
    (b"\"state\"", Field::KeptRaw),
    (b"\"error\"", Field::KeptRaw),
    (b"\"usage\"", Field::KeptRaw),
    (b"\"messageId\"", Field::KeptRaw),
];

/// A cursor over a line's text.
struct Scan<'a> {
    text: &'a str,
    /// Where the next byte is: it only ever steps over bytes that are
    /// there, so it is never past the end.
    at: usize,
}

impl<'a> Scan<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.at).copied()
    }

    /// Steps over `byte` when it is next.
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Steps over `word` (`true`, `false`, `null`) when it is next.
    fn word(&mut self, word: &[u8]) -> Option<()> {
        self.bytes()[self.at..].starts_with(word).then(|| self.at += word.len())
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// Steps over `null` when it is next.
    fn null(&mut self) -> bool {
        self.word(b"null").is_some()
    }

    /// A key: one of [`KEYS`], compared where it is written, or any
    /// other without escapes.
    fn key(&mut self) -> Option<Field> {
        let rest = self.bytes().get(self.at..)?;
        let first = rest.get(1)?;
        let known = KEYS
            .into_iter()
            .find(|(written, _)| written.get(1) == Some(first) && rest.starts_with(written));
        if let Some((written, field)) = known {
            self.at += written.len();
            return Some(field);
        }
        match self.raw_string()? {
            (_, false) => Some(Field::Other),
            (_, true) => None,
        }
    }

    /// A string, its escapes decoded (into a copy only when it has some).
    fn text(&mut self) -> Option<Cow<'a, str>> {
        match self.raw_string()? {
            (text, false) => Some(Cow::Borrowed(text)),
            (text, true) => decoded(text).map(Cow::Owned),
        }
    }

    /// A string or `null` (as `Message`'s text fields take them).
    fn maybe_text(&mut self) -> Option<Option<Text<'a>>> {
        if self.null() {
            return Some(None);
        }
        self.text().map(|text| Some(Text(text)))
    }

    /// `true`, `false` or `null`.
    fn maybe_bool(&mut self) -> Option<Option<bool>> {
        match self.peek()? {
            b't' => self.word(b"true").map(|()| Some(true)),
            b'f' => self.word(b"false").map(|()| Some(false)),
            _ => self.word(b"null").map(|()| None),
        }
    }

    /// `graphPath`: `null`, or an array whose first element (if any) is a
    /// string; whether it marks the final answer (see `Message::final_node`).
    fn final_node(&mut self) -> Option<bool> {
        if self.null() {
            return Some(false);
        }
        self.eat(b'[')?;
        self.skip_whitespace();
        if self.eat(b']').is_some() {
            return Some(false);
        }
        let first_is_final = self.text()? == "final";
        let mut length = 1;
        loop {
            self.skip_whitespace();
            if self.eat(b']').is_some() {
                return Some(first_is_final && length <= 2);
            }
            self.eat(b',')?;
            self.skip_whitespace();
            self.skip_value(2)?;
            length += 1;
        }
    }

    /// Checks and steps over any JSON value at nesting `depth`.
    fn skip_value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.raw_string().map(drop),
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            open @ (b'[' | b'{') if depth < MAX_DEPTH => {
                let close = if open == b'[' { b']' } else { b'}' };
                self.at += 1;
                self.skip_whitespace();
                if self.eat(close).is_some() {
                    return Some(());
                }
                loop {
                    if open == b'{' {
                        self.raw_string()?;
                        self.skip_whitespace();
                        self.eat(b':')?;
                        self.skip_whitespace();
                    }
                    self.skip_value(depth + 1)?;
                    self.skip_whitespace();
                    if self.eat(close).is_some() {
                        return Some(());
                    }
                    self.eat(b',')?;
                    self.skip_whitespace();
                }
            }
            _ => None,
        }
    }

    /// A number as JSON writes it: `-`, an integer without leading
    /// zeros, a fraction, an exponent.
    fn number(&mut self) -> Option<()> {
        let _ = self.eat(b'-');
        if self.eat(b'0').is_none() {
            self.digits()?;
        }
        if self.eat(b'.').is_some() {
            self.digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.digits()?;
        }
        Some(())
    }

    /// One digit or more.
    fn digits(&mut self) -> Option<()> {
        let run = self.bytes()[self.at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        (run > 0).then(|| self.at += run)
    }

    /// Steps over a string, checking its escapes: its text as written
    /// (between the quotes) and whether it has escapes. A raw control
    /// character or a surrogate escape is left to serde_json.
    fn raw_string(&mut self) -> Option<(&'a str, bool)> {
        self.eat(b'"')?;
        let start = self.at;
        let mut escaped = false;
        loop {
            let at = special(self.bytes(), self.at);
            match self.peek_at(at)? {
                b'"' => {
                    self.at = at + 1;
                    return Some((self.text.get(start..at)?, escaped));
                }
                b'\\' => {
                    let (_, length) = escape(self.bytes().get(at + 1..)?)?;
                    self.at = at + 1 + length;
                    escaped = true;
                }
                _ => return None,
            }
        }
    }

    fn peek_at(&self, at: usize) -> Option<u8> {
        self.bytes().get(at).copied()
    }
}

/// A string's text with its escapes (checked already) decoded.
fn decoded(written: &str) -> Option<String> {
    let mut text = String::with_capacity(written.len());
    let mut rest = written;
    while let Some(at) = rest.find('\\') {
        text.push_str(rest.get(..at)?);
        let (decoded, length) = escape(rest.as_bytes().get(at + 1..)?)?;
        text.push(decoded);
        rest = rest.get(at + 1 + length..)?;
    }
    text.push_str(rest);
    Some(text)
}

/// The character an escape stands for (after its `\`) and how many bytes
/// follow the `\`; `None` for an invalid escape or a surrogate.
fn escape(rest: &[u8]) -> Option<(char, usize)> {
    Some(match rest.first()? {
        b'"' => ('"', 1),
        b'\\' => ('\\', 1),
        b'/' => ('/', 1),
        b'b' => ('\u{8}', 1),
        b'f' => ('\u{c}', 1),
        b'n' => ('\n', 1),
        b'r' => ('\r', 1),
        b't' => ('\t', 1),
        b'u' => {
            let hex = rest.get(1..5)?;
            let code = hex
                .iter()
                .try_fold(0u32, |code, &digit| Some(code * 16 + char::from(digit).to_digit(16)?))?;
            (char::from_u32(code)?, 5)
        }
        _ => return None,
    })
}

/// Every byte of a word set to `byte`.
const fn repeated(byte: u8) -> u64 {
    u64::from_le_bytes([byte; 8])
}

/// The high bit of each byte of `word` that is zero (exact for the lowest
/// such byte, which is all [`special`] looks at).
const fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(repeated(1)) & !word & repeated(0x80)
}

/// Where the first `"`, `\` or control character is in `bytes` from
/// `at` on (`bytes.len()` when none is), eight bytes at a time.
fn special(bytes: &[u8], mut at: usize) -> usize {
    while let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        let word = u64::from_le_bytes(*chunk);
        let control = word.wrapping_sub(repeated(0x20)) & !word & repeated(0x80);
        let found = zero_bytes(word ^ repeated(b'"')) | zero_bytes(word ^ repeated(b'\\')) | control;
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    let rest = bytes.get(at..).unwrap_or_default();
    at + rest
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .unwrap_or(rest.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What serde_json makes of a line, to compare with [`read`].
    fn by_serde(line: &str) -> String {
        format!("{:?}", serde_json::from_str::<Message<'_>>(line).ok())
    }

    #[test]
    fn special_finds_the_first_quote_backslash_or_control_character() {
        for (text, expected) in [
            ("abcdefghij\"", 10),
            ("abc\\defghij", 3),
            ("abcdefgh\u{1}", 8),
            ("é and \u{1f600} are not special\"", 27),
            ("\u{7f}\u{80}\u{a2}\u{dc}\u{2028}", 10),
            ("", 0),
            ("short", 5),
        ] {
            assert_eq!(special(text.as_bytes(), 0), expected, "{text:?}");
        }
    }

    #[test]
    fn a_delta_is_read_as_serde_json_reads_it() {
        let line = r#"{"id":"t1","role":"assistant","thinking":"a\nb","content":"Hi \u00e9 \"x\"","graphPath":["final", 2],"isDelta":true,"isInProcess":false,"sort":-1.5e3,"x":{"y":[null,{}]}}"#;
        let read = read(line).expect("the common shape");
        assert_eq!(format!("{:?}", Some(&read)), by_serde(line));
        assert_eq!(read.content(), Some("Hi é \"x\""));
        assert!(read.final_node && read.thinking);
    }

    #[test]
    fn what_it_is_not_sure_of_is_left_to_serde_json() {
        for line in [
            r#"{"id":"x","toolCall":{"name":"q"}}"#,
            r#"{"id":"__state__","state":{}}"#,
            r#"{"error":"bad"}"#,
            r#"{"usage":{}}"#,
            r#"{"messageId":"m"}"#,
            r#"{"i\u0064":"x"}"#,
            r#"{"content":"\ud83d\ude00"}"#,
            r#"{"id":01}"#,
            r#"{"id":1}"#,
            r#"{"graphPath":[1]}"#,
            r#"{"isDelta":"yes"}"#,
            r#"{"id":"x"} x"#,
            r#"{"id":"x",}"#,
            "{\"id\":\"a\u{1}\"}",
            r#"{"x":"\u12"}"#,
            r#"{"x":"\u+123"}"#,
            r#"{"x":-}"#,
            r#"{"x":1.}"#,
            r#"{"x":1e}"#,
            r#"{"x":tru}"#,
        ] {
            assert!(read(line).is_none(), "{line}");
        }
        let deep = format!("{{\"x\":{}{}}}", "[".repeat(70), "]".repeat(70));
        assert!(read(&deep).is_none());
    }

    /// Lines mutated at random (bytes replaced, cut, JSON tokens spliced
    /// in): whatever `read` accepts, serde_json reads the same; and it
    /// accepts enough of them for that to mean something.
    #[test]
    fn what_it_reads_serde_json_reads_the_same() {
        let lines = [
            r#"{"id":"t1","role":"assistant","thinking":"revenue grew","content":"","graphPath":["semantic_data_analyst_agent"],"isDelta":true,"isInProcess":true,"sort":12}"#,
            r#"{"id":"a","role":"assistant","content":"Rev \"q\" é\n","graphPath":["final","x"],"isDelta":false,"isInProcess":false}"#,
            r#"{ "id" : "u1" , "role" : "user" , "content" : "Revenue?" , "extra" : { "a" : [ 1 , -0.5 , 2E+3 , true , false , null ] } }"#,
        ];
        let tokens = [
            "{",
            "}",
            "[",
            "]",
            "\"",
            "\\",
            ",",
            ":",
            " ",
            "\t",
            "-",
            "0",
            "01",
            "1.5e-3",
            "true",
            "null",
            "\\u00e9",
            "\\ud83d",
            "\\n",
            "\\x",
            "\u{1}",
            "é",
            "\"id\":\"x\",",
            "\"graphPath\":[\"final\"],",
            "\"thinking\":null,",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut below = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut accepted = 0;
        for _ in 0..30_000 {
            let mut line = lines[below(lines.len())].to_string();
            for _ in 0..below(3) + 1 {
                let at = below(line.len() + 1);
                if !line.is_char_boundary(at) {
                    continue;
                }
                let token = tokens[below(tokens.len())];
                match below(3) {
                    0 => line.insert_str(at, token),
                    1 => {
                        let end = (at + below(6) + 1).min(line.len());
                        if line.is_char_boundary(end) {
                            line.replace_range(at..end, "");
                        }
                    }
                    _ => {
                        let end = (at + 1).min(line.len());
                        if line.is_char_boundary(end) {
                            line.replace_range(at..end, token);
                        }
                    }
                }
            }
            if let Some(message) = read(&line) {
                assert_eq!(format!("{:?}", Some(message)), by_serde(&line), "{line}");
                accepted += 1;
            }
        }
        assert!(accepted > 5_000, "only {accepted} lines read");
    }
}
