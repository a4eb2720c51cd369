//! A validating JSON cursor over one line, for reading only the fields a
//! message needs. Values nobody reads are checked and stepped over without
//! being built: strings are scanned sixteen bytes at a time, so a 50 MB
//! `__state__` line costs little more than copying it. It accepts exactly
//! RFC 8259 JSON (UTF-8 is checked once for the whole line by the caller),
//! with serde_json's nesting limit of 128. A value of megabytes (the
//! `__state__` line's) is checked on two threads: see
//! [`Scanner::skip_value`].

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// How deep arrays and objects may nest, as in serde_json.
const MAX_DEPTH: usize = 128;

/// How far past the middle an element boundary is looked for (a value
/// that is one long string has none).
const BOUNDARY_SEARCH: usize = 1 << 20;

/// From this many bytes left in the line, a container that is skipped is
/// checked on two threads. Small enough for tests to reach.
const TWO_THREADS_FROM: usize = if cfg!(test) { 4 << 10 } else { 4 << 20 };

/// Why a line is not the JSON it should be. Boxed, so that the scanner's
/// many `Result<(), ScanError>` fit in a register on the path that succeeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError(Box<ScanFault>);

/// What was wrong, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanFault {
    /// What was wrong, e.g. `expected ':'`.
    pub what: Cow<'static, str>,
    /// The 1-based byte column where it was noticed.
    pub column: usize,
}

impl std::ops::Deref for ScanError {
    type Target = ScanFault;

    fn deref(&self) -> &ScanFault {
        &self.0
    }
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at column {}", self.what, self.column)
    }
}

/// The kind of JSON value that starts at the cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `{`
    Object,
    /// `[`
    Array,
    /// `"`
    String,
    /// `true` or `false`
    Bool,
    /// `null`
    Null,
    /// A number, or a byte no JSON value starts with.
    Other,
}

/// The high bit of each byte of `word` that is `"`, a backslash or a control
/// character. Bytes above the first such byte may be marked falsely; the
/// lowest mark is always right, and only it is used.
fn special_bytes(word: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x;
    let quote = zero_byte(word ^ (ONES * u64::from(b'"')));
    let backslash = zero_byte(word ^ (ONES * u64::from(b'\\')));
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    (quote | backslash | control) & HIGHS
}

/// Where the first element of an array that follows another object or
/// array starts (just after `},` or `],`), if anywhere: outside strings that
/// is always an element boundary, since in an object a comma is followed by
/// a key. Inside a string it is not, which [`Scanner::take_handoff`]'s
/// caller finds out by never reaching it.
fn element_boundary(bytes: &[u8]) -> Option<usize> {
    let after = |pattern: &[u8]| memchr::memmem::find(bytes, pattern).map(|at| at + 2);
    match (after(b"},{"), after(b"],[")) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A cursor over the text of one line.
pub struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// The deepest container opened so far.
    deepest: usize,
    /// Where a helper thread checks the rest of an array from, and what it
    /// found (see [`Scanner::skip_value`]).
    handoff: Option<Handoff>,
}

/// The second half of a long array, checked by a helper thread: the
/// elements from `at` (just after a comma) to the array's end.
struct Handoff {
    at: usize,
    /// The position of the array's `]` and the deepest nesting below the
    /// elements, when every element was valid JSON; `None` otherwise.
    result: mpsc::Receiver<Option<(usize, usize)>>,
}

impl<'a> Scanner<'a> {
    /// A cursor at the start of `text`.
    pub fn new(text: &'a str) -> Self {
        Scanner {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            deepest: 0,
            handoff: None,
        }
    }

    /// An error noticed at the cursor.
    #[cold]
    pub fn error(&self, what: impl Into<Cow<'static, str>>) -> ScanError {
        ScanError(Box::new(ScanFault {
            what: what.into(),
            column: self.pos + 1,
        }))
    }

    /// Steps over whitespace and tells what the next value is, or `None` at
    /// the end of the line.
    pub fn peek(&mut self) -> Option<Kind> {
        self.skip_whitespace();
        self.bytes.get(self.pos).map(|&b| match b {
            b'{' => Kind::Object,
            b'[' => Kind::Array,
            b'"' => Kind::String,
            b't' | b'f' => Kind::Bool,
            b'n' => Kind::Null,
            _ => Kind::Other,
        })
    }

    /// Succeeds when only whitespace is left.
    pub fn finish(&mut self) -> Result<(), ScanError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error("trailing characters after the value")),
        }
    }

    /// Reads the members of an object, handing each key to `member`, which
    /// must consume the value (with [`Scanner::skip_value`] when it has no
    /// use for it). `depth` is the object's nesting depth (1 for the line).
    pub fn object(
        &mut self,
        depth: usize,
        mut member: impl FnMut(&mut Self, Cow<'a, str>) -> Result<(), ScanError>,
    ) -> Result<(), ScanError> {
        if self.open(b'{', b'}', depth)? {
            return Ok(());
        }
        loop {
            if self.peek() != Some(Kind::String) {
                return Err(self.error("expected a key (a string)"));
            }
            let key = self.string()?;
            self.consume(b':')?;
            member(self, key)?;
            if self.closed(b'}')? {
                return Ok(());
            }
        }
    }

    /// Reads the elements of an array, calling `element` with each one's
    /// index; it must consume the value. `depth` is the array's depth.
    pub fn array(
        &mut self,
        depth: usize,
        mut element: impl FnMut(&mut Self, usize) -> Result<(), ScanError>,
    ) -> Result<(), ScanError> {
        if self.open(b'[', b']', depth)? {
            return Ok(());
        }
        let mut index = 0;
        loop {
            element(self, index)?;
            index += 1;
            if self.closed(b']')? {
                return Ok(());
            }
        }
    }

    /// Reads a string value, borrowed from the line unless it has escapes.
    pub fn string(&mut self) -> Result<Cow<'a, str>, ScanError> {
        self.skip_whitespace();
        if self.bytes.get(self.pos) != Some(&b'"') {
            return Err(self.error("expected a string"));
        }
        let start = self.pos + 1;
        let end = self.string_span(start)?;
        if self.bytes[end] == b'"' {
            self.pos = end + 1;
            return Ok(Cow::Borrowed(&self.text[start..end]));
        }
        self.escaped_string(start, end).map(Cow::Owned)
    }

    /// Reads a string value: its contents, as [`Scanner::string`] gives
    /// them, and its JSON text as sent.
    pub fn string_and_json(&mut self) -> Result<(&'a str, Cow<'a, str>), ScanError> {
        self.skip_whitespace();
        let start = self.pos;
        let contents = self.string()?;
        Ok((&self.text[start..self.pos], contents))
    }

    /// Decodes a string whose contents start at `start` and whose first
    /// backslash is at `special`.
    #[cold]
    fn escaped_string(&mut self, start: usize, mut special: usize) -> Result<String, ScanError> {
        let mut text = String::with_capacity(special - start + 16);
        let mut pos = start;
        loop {
            text.push_str(&self.text[pos..special]);
            if self.bytes[special] == b'"' {
                self.pos = special + 1;
                return Ok(text);
            }
            let (decoded, next) = self.escape(special)?;
            text.push(decoded);
            pos = next;
            special = self.string_span(pos)?;
        }
    }

    /// Reads `true` or `false`.
    pub fn bool(&mut self) -> Result<bool, ScanError> {
        self.skip_whitespace();
        if self.bytes[self.pos..].starts_with(b"true") {
            self.pos += 4;
            Ok(true)
        } else if self.bytes[self.pos..].starts_with(b"false") {
            self.pos += 5;
            Ok(false)
        } else {
            Err(self.error("expected true or false"))
        }
    }

    /// Checks and steps over one value of any kind, returning its text.
    /// `depth` is the depth of the value's container (0 for the line).
    ///
    /// A container with megabytes of the line after it is checked on two
    /// threads: a helper takes a long array's second half, from an element
    /// boundary (`},{` or `],[`) past the middle, while this thread checks
    /// the first. Reaching that boundary as an element boundary proves the
    /// guess right, and the helper's verdict is used there; otherwise (the
    /// bytes were inside a string, or the helper found an error) this
    /// thread checks on as usual, so errors and their columns are exactly
    /// those of one thread.
    #[inline]
    pub fn skip_value(&mut self, depth: usize) -> Result<&'a str, ScanError> {
        self.skip_whitespace();
        let start = self.pos;
        if self.bytes.len() - start >= TWO_THREADS_FROM {
            self.step_over_on_two_threads(depth)?;
        } else {
            self.step_over(depth)?;
        }
        Ok(&self.text[start..self.pos])
    }

    /// [`Scanner::step_over`] with a helper thread checking the second half
    /// of the array that spans the middle of the line's rest, when the value
    /// is a container (see [`Scanner::skip_value`]). Kept out of line: short
    /// lines never come here.
    #[cold]
    #[inline(never)]
    fn step_over_on_two_threads(&mut self, depth: usize) -> Result<(), ScanError> {
        let container = matches!(self.bytes.get(self.pos), Some(b'{' | b'['));
        if !container || self.handoff.is_some() {
            return self.step_over(depth);
        }
        let middle = self.pos + (self.bytes.len() - self.pos) / 2;
        let window = &self.bytes[middle..self.bytes.len().min(middle + BOUNDARY_SEARCH)];
        let Some(at) = element_boundary(window).map(|offset| middle + offset) else {
            return self.step_over(depth);
        };
        let stop = AtomicBool::new(false);
        let (sender, result) = mpsc::sync_channel(1);
        let mut rest = Scanner::new(self.text);
        rest.pos = at;
        std::thread::scope(|scope| {
            let stop = &stop;
            let helper = std::thread::Builder::new().spawn_scoped(scope, move || {
                let _ = sender.send(rest.elements_to_end(stop));
            });
            // Without a helper (the system has no thread to give), this
            // thread checks the whole value.
            if helper.is_ok() {
                self.handoff = Some(Handoff { at, result });
            }
            let outcome = self.step_over(depth);
            self.handoff = None;
            stop.store(true, Ordering::Relaxed);
            outcome
        })
    }

    /// The helper's part: array elements from the cursor to the array's
    /// `]`, with nesting counted from 0. Gives up (`None`) at anything
    /// that is not valid, or when told to `stop`.
    fn elements_to_end(mut self, stop: &AtomicBool) -> Option<(usize, usize)> {
        loop {
            self.step_over(0).ok()?;
            match self.peek_byte()? {
                b',' => self.pos += 1,
                b']' => return Some((self.pos, self.deepest)),
                _ => return None,
            }
            if stop.load(Ordering::Relaxed) {
                return None;
            }
        }
    }

    /// At the helper's starting point, as an element of an array whose
    /// elements are at `depth`: takes the helper's verdict, moving the
    /// cursor to the array's `]` when the elements were valid and not too
    /// deep. False when this thread must check them itself.
    fn take_handoff(&mut self, depth: usize) -> bool {
        let Some(handoff) = self.handoff.take() else {
            return false;
        };
        match handoff.result.recv() {
            Ok(Some((end, deepest))) if depth + deepest <= MAX_DEPTH => {
                self.pos = end;
                self.deepest = self.deepest.max(depth + deepest);
                true
            }
            _ => false,
        }
    }

    /// Checks and steps over one value, keys included, building nothing:
    /// most of a large `__state__` line is values nobody reads.
    fn step_over(&mut self, depth: usize) -> Result<(), ScanError> {
        match self.peek() {
            Some(Kind::Object) => {
                if self.open(b'{', b'}', depth + 1)? {
                    return Ok(());
                }
                loop {
                    if self.peek() != Some(Kind::String) {
                        return Err(self.error("expected a key (a string)"));
                    }
                    self.pos = self.skip_string(self.pos + 1)?;
                    self.consume(b':')?;
                    self.step_over(depth + 1)?;
                    if self.closed(b'}')? {
                        return Ok(());
                    }
                }
            }
            Some(Kind::Array) => {
                if self.open(b'[', b']', depth + 1)? {
                    return Ok(());
                }
                loop {
                    let handed_over =
                        self.handoff.as_ref().is_some_and(|h| h.at == self.pos) && self.take_handoff(depth + 1);
                    if !handed_over {
                        self.step_over(depth + 1)?;
                    }
                    if self.closed(b']')? {
                        return Ok(());
                    }
                }
            }
            Some(Kind::String) => {
                self.pos = self.skip_string(self.pos + 1)?;
                Ok(())
            }
            Some(Kind::Bool) => self.bool().map(drop),
            Some(Kind::Null) => self.literal(b"null"),
            Some(Kind::Other) => self.number(),
            None => Err(self.error("the line ends where a value should be")),
        }
    }

    /// Steps over `null`.
    pub fn null(&mut self) -> Result<(), ScanError> {
        self.skip_whitespace();
        self.literal(b"null")
    }

    fn literal(&mut self, word: &[u8]) -> Result<(), ScanError> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.error("expected a value"))
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> Result<(), ScanError> {
        let bytes = self.bytes;
        let mut pos = self.pos;
        if bytes.get(pos) == Some(&b'-') {
            pos += 1;
        }
        let digits = |pos: usize| {
            bytes[pos.min(bytes.len())..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count()
        };
        match bytes.get(pos) {
            Some(b'0') => pos += 1,
            Some(b'1'..=b'9') => pos += digits(pos),
            _ => return Err(self.error("expected a value")),
        }
        if bytes.get(pos) == Some(&b'.') {
            let n = digits(pos + 1);
            if n == 0 {
                self.pos = pos + 1;
                return Err(self.error("expected a digit after the decimal point"));
            }
            pos += 1 + n;
        }
        if matches!(bytes.get(pos), Some(b'e' | b'E')) {
            pos += 1;
            if matches!(bytes.get(pos), Some(b'+' | b'-')) {
                pos += 1;
            }
            let n = digits(pos);
            if n == 0 {
                self.pos = pos;
                return Err(self.error("expected a digit in the exponent"));
            }
            pos += n;
        }
        self.pos = pos;
        Ok(())
    }

    /// Steps over a string whose contents start at `pos`; returns the
    /// position after its closing quote.
    fn skip_string(&mut self, mut pos: usize) -> Result<usize, ScanError> {
        loop {
            let end = self.string_span(pos)?;
            if self.bytes[end] == b'"' {
                return Ok(end + 1);
            }
            pos = self.escape(end)?.1;
        }
    }

    /// The position of the next `"` or `\` from `pos`, after checking that
    /// no control character comes before it. Eight bytes at a time: short
    /// strings (keys, deltas) are most of a stream, and a call into
    /// `memchr` costs more than they do.
    fn string_span(&mut self, pos: usize) -> Result<usize, ScanError> {
        let bytes = self.bytes;
        let mut at = pos;
        // Sixteen bytes a turn while they last (long texts: one test per
        // turn), then eight, then one.
        while let Some(block) = bytes.get(at..at + 16) {
            let (low, high) = block.split_at(8);
            let low = special_bytes(u64::from_le_bytes(low.try_into().unwrap_or_default()));
            let high = special_bytes(u64::from_le_bytes(high.try_into().unwrap_or_default()));
            if low | high != 0 {
                at += match low {
                    0 => 8 + high.trailing_zeros() as usize / 8,
                    _ => low.trailing_zeros() as usize / 8,
                };
                return self.span_end(at);
            }
            at += 16;
        }
        while let Some(word) = bytes.get(at..at + 8) {
            let mask = special_bytes(u64::from_le_bytes(word.try_into().unwrap_or_default()));
            if mask != 0 {
                at += mask.trailing_zeros() as usize / 8;
                break;
            }
            at += 8;
        }
        while at < bytes.len() && !matches!(bytes[at], b'"' | b'\\' | 0..=0x1f) {
            at += 1;
        }
        self.span_end(at)
    }

    /// Ends [`Scanner::string_span`] at `at`: a quote or backslash there is
    /// the span's end, anything else an error.
    fn span_end(&mut self, at: usize) -> Result<usize, ScanError> {
        match self.bytes.get(at) {
            Some(b'"' | b'\\') => Ok(at),
            Some(_) => {
                self.pos = at;
                Err(self.error("control character inside a string"))
            }
            None => {
                self.pos = at;
                Err(self.error("the line ends inside a string"))
            }
        }
    }

    /// Decodes the escape whose backslash is at `pos`: the character and the
    /// position after the escape.
    fn escape(&mut self, pos: usize) -> Result<(char, usize), ScanError> {
        let decoded = match self.bytes.get(pos + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => return self.unicode_escape(pos),
            _ => {
                self.pos = pos;
                return Err(self.error("invalid escape"));
            }
        };
        Ok((decoded, pos + 2))
    }

    /// `\uXXXX`, or a surrogate pair `\uD83D\uDE00`, at `pos`.
    fn unicode_escape(&mut self, pos: usize) -> Result<(char, usize), ScanError> {
        let first = self.hex4(pos)?;
        let (code, next) = match first {
            0xD800..=0xDBFF => {
                let low = match self.bytes.get(pos + 6..pos + 8) {
                    Some(b"\\u") => self.hex4(pos + 6)?,
                    _ => 0,
                };
                if !(0xDC00..=0xDFFF).contains(&low) {
                    self.pos = pos;
                    return Err(self.error("lone leading surrogate in a \\u escape"));
                }
                (0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00), pos + 12)
            }
            0xDC00..=0xDFFF => {
                self.pos = pos;
                return Err(self.error("lone trailing surrogate in a \\u escape"));
            }
            _ => (first, pos + 6),
        };
        Ok((char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER), next))
    }

    /// The four hex digits after the `\u` at `pos`.
    fn hex4(&mut self, pos: usize) -> Result<u32, ScanError> {
        let digits = self
            .bytes
            .get(pos + 2..pos + 6)
            .and_then(|d| std::str::from_utf8(d).ok());
        match digits.and_then(|d| u32::from_str_radix(d, 16).ok().filter(|_| !d.starts_with('+'))) {
            Some(code) => Ok(code),
            None => {
                self.pos = pos;
                Err(self.error("invalid \\u escape"))
            }
        }
    }

    /// Steps over the opening `bracket` of a container at `depth`; true
    /// when it is empty (its `close` followed and was stepped over too).
    fn open(&mut self, bracket: u8, close: u8, depth: usize) -> Result<bool, ScanError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.deepest = self.deepest.max(depth);
        self.consume(bracket)?;
        let empty = self.peek_byte() == Some(close);
        if empty {
            self.pos += 1;
        }
        Ok(empty)
    }

    /// After a container's member: steps over the `,` (false) or the
    /// `close` that ends the container (true).
    fn closed(&mut self, close: u8) -> Result<bool, ScanError> {
        match self.peek_byte() {
            Some(b',') => {
                self.pos += 1;
                Ok(false)
            }
            Some(byte) if byte == close => {
                self.pos += 1;
                Ok(true)
            }
            _ => Err(self.error(format!("expected ',' or '{}'", close as char))),
        }
    }

    /// Steps over `byte`, which must come next (after whitespace).
    fn consume(&mut self, byte: u8) -> Result<(), ScanError> {
        if self.peek_byte() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected '{}'", byte as char)))
        }
    }

    fn peek_byte(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.bytes.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skip(text: &str) -> Result<&str, ScanError> {
        let mut scanner = Scanner::new(text);
        let value = scanner.skip_value(0)?;
        scanner.finish()?;
        Ok(value.trim())
    }

    #[test]
    fn valid_json_is_stepped_over_whole() {
        for text in [
            r#"{"a":[1,-2.5e+3,0,true,false,null,"x\"y\u00e9\ud83d\ude00"],"b":{}}"#,
            " [ ] ",
            "-0.0E-1",
            r#""\/\b\f\n\r\t""#,
        ] {
            assert_eq!(skip(text), Ok(text.trim()), "{text}");
        }
    }

    #[test]
    fn invalid_json_is_refused_with_where() {
        for (text, column) in [
            (r#"{"a":1"#, 7),
            (r#"{"a" 1}"#, 6),
            ("[1,]", 4),
            ("01", 2),
            ("1.", 3),
            ("1e", 3),
            ("tru", 1),
            (r#""abc"#, 5),
            ("\"a\u{1}b\"", 3),
            (r#""\x""#, 2),
            (r#""\ud800""#, 2),
            (r#""\udc00x""#, 2),
            (r#""\u12G4""#, 2),
            (r#""\u+123""#, 2),
            ("{} x", 4),
            ("", 1),
            ("{1:2}", 2),
            (r#"{"a\x":1}"#, 4),
            (r#"{"a":{"b\u12G4":1}}"#, 9),
            ("{\"a\u{1}\":1}", 4),
        ] {
            let err = skip(text).unwrap_err();
            assert_eq!(err.column, column, "{text}: {err}");
        }
    }

    #[test]
    fn strings_borrow_unless_escaped() {
        let mut scanner = Scanner::new(r#""plain" "a\nb\u00e9""#);
        assert!(matches!(scanner.string(), Ok(Cow::Borrowed("plain"))));
        assert_eq!(scanner.string().unwrap(), "a\nbé");
        let mut scanner = Scanner::new(r#" "{\"a\":1}" "#);
        assert_eq!(
            scanner.string_and_json().unwrap(),
            (r#""{\"a\":1}""#, Cow::Borrowed(r#"{"a":1}"#))
        );
    }

    #[test]
    fn the_first_special_byte_of_a_word_is_found() {
        let fillers = [b'a', b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xc3, 0xff];
        for special in [b'"', b'\\', 0, 0x1f, b'\n'] {
            for at in 0..8 {
                for filler in fillers {
                    let mut word = [filler; 8];
                    word[at] = special;
                    // Bytes after the first special one may be anything.
                    for later in at + 1..8 {
                        word[later] = [b'"', 0, filler, 0x21][later % 4];
                    }
                    let mask = special_bytes(u64::from_le_bytes(word));
                    assert_eq!(mask.trailing_zeros() / 8, at as u32, "{word:?}");
                }
            }
        }
        for filler in fillers {
            assert_eq!(special_bytes(u64::from_le_bytes([filler; 8])), 0, "{filler}");
        }
    }

    #[test]
    fn nesting_is_limited() {
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(skip(&deep).unwrap_err().what.contains("nested"));
        let fine = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(skip(&fine).is_ok());
    }

    /// The value checked on this thread alone, as a reference.
    fn skip_on_one_thread(text: &str) -> Result<&str, ScanError> {
        let mut scanner = Scanner::new(text);
        scanner.skip_whitespace();
        let start = scanner.pos;
        scanner.step_over(0)?;
        let value = &text[start..scanner.pos];
        scanner.finish()?;
        Ok(value)
    }

    /// A message of the `__state__`-like lines below.
    const MESSAGE: &str = r#"{"lc":1,"id":["a","b"],"kwargs":{"content":"revenue grew \"steadily\"","n":-1.5e3}}"#;

    /// A `__state__`-like line over [`TWO_THREADS_FROM`], its messages
    /// array nested `depth` deep, with `element` as its 90th message.
    fn long_line(depth: usize, element: &str) -> String {
        let messages: Vec<&str> = (0..120).map(|i| if i == 90 { element } else { MESSAGE }).collect();
        let open = "[".repeat(depth - 1);
        let close = "]".repeat(depth - 1);
        format!(
            r#"{open}{{"id":"__state__","state":{{"messages":[{}]}}}}{close}"#,
            messages.join(",")
        )
    }

    #[test]
    fn long_arrays_checked_on_two_threads_give_one_threads_verdict() {
        let cases = [
            long_line(1, MESSAGE),
            // Errors after the helper's starting point.
            long_line(1, r#"{"lc":1,}"#),
            long_line(1, r#"{"lc":01}"#),
            long_line(1, "[1 2]"),
            long_line(1, r#"{"bad":"\x"}"#),
            // Boundaries that are inside strings, where no thread may start.
            long_line(1, &format!(r#"{{"content":"{}"}}"#, r#"},{\"a\":1}],["#.repeat(400))),
            // An element of the second half nested one level too deep only
            // counting the levels above the array.
            long_line(124, r#"{"a":[[1]]}"#),
            long_line(123, r#"{"a":[[1]]}"#),
            // Whitespace around the elements.
            long_line(1, r#" { "lc" : [ 1 , { } ] } "#),
            // The line ends inside the second half.
            long_line(1, MESSAGE)[..3000].to_string(),
        ];
        for (number, text) in cases.iter().enumerate() {
            assert!(text.len() >= TWO_THREADS_FROM || number == cases.len() - 1);
            assert_eq!(skip(text).map(str::trim), skip_on_one_thread(text), "case {number}");
        }
        assert!(skip(&cases[0]).is_ok());
        assert!(skip(&cases[6]).unwrap_err().what.contains("nested"));
        assert!(skip(&cases[7]).is_ok());
    }

    #[test]
    fn mutated_long_lines_get_the_same_verdict_on_two_threads() {
        let line = long_line(3, r#"{"x":[{"y":"z"},{"y":null}]}"#).into_bytes();
        let replacements = b"{}[],:\"\\ 0a-.eE";
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |below: usize| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize % below
        };
        for _ in 0..400 {
            let mut mutated = line.clone();
            for _ in 0..1 + next(3) {
                // Mostly in the second half, which the helper checks.
                let at = mutated.len() / 3 + next(mutated.len() * 2 / 3);
                mutated[at] = replacements[next(replacements.len())];
            }
            let text = String::from_utf8(mutated).unwrap();
            assert_eq!(skip(&text).map(str::trim), skip_on_one_thread(&text), "{text}");
        }
    }

    #[test]
    fn element_boundaries_follow_an_object_or_array() {
        assert_eq!(element_boundary(br#"1,"x"},{"a":1}"#), Some(7));
        assert_eq!(element_boundary(b"[1],[2],{}"), Some(4));
        assert_eq!(element_boundary(br#"{"a":1,"b":2}"#), None);
    }
}
