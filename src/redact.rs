//! Secrets kept out of everything shown or saved: the registry of every
//! secret the process knows ([`register_secret`]) and [`redact`], which
//! replaces each — and any text shaped like a Cube API key (`sk-…`) — by
//! `***`; and [`Secret`], the type a secret travels in, whose `Debug` and
//! `Display` print `***`.

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

use memchr::memmem::Finder;

/// What a secret is replaced with.
const REDACTED: &str = "***";
/// Secrets shorter than this are not redacted: they would blot out ordinary
/// text (and no real key or token is that short).
const MIN_SECRET: usize = 4;

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
/// more key characters, not inside a longer word), from `from` on.
fn key_shaped(bytes: &[u8], from: usize) -> Option<std::ops::Range<usize>> {
    static PREFIX: std::sync::LazyLock<Finder<'static>> = std::sync::LazyLock::new(|| Finder::new(KEY_PREFIX));
    let mut at = from;
    while let Some(found) = PREFIX.find(&bytes[at..]) {
        let start = at + found;
        let body = start + KEY_PREFIX.len();
        let end = body + bytes[body..].iter().take_while(|&&b| is_key_char(b)).count();
        let own_word = start == 0 || !is_key_char(bytes[start - 1]);
        if own_word && end - body >= KEY_SHAPE {
            return Some(start..end);
        }
        at = body;
    }
    None
}

/// `bytes` with every known secret, and every text shaped like a Cube API
/// key (`sk-…`), replaced by `***` (borrowed as they are when none occurs,
/// the common case: one fast scan per secret).
pub fn redact_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    let mut text = Cow::Borrowed(bytes);
    if ANY_SECRET.load(Ordering::Acquire) {
        let secrets = SECRETS.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        for secret in secrets.iter() {
            if secret.find(&text).is_none() {
                continue;
            }
            let mut redacted = Vec::with_capacity(text.len());
            let mut rest: &[u8] = &text;
            while let Some(at) = secret.find(rest) {
                redacted.extend_from_slice(&rest[..at]);
                redacted.extend_from_slice(REDACTED.as_bytes());
                rest = &rest[at + secret.needle().len()..];
            }
            redacted.extend_from_slice(rest);
            text = Cow::Owned(redacted);
        }
    }
    let Some(first) = key_shaped(&text, 0) else {
        return text;
    };
    let mut redacted = Vec::with_capacity(text.len());
    let (mut copied, mut found) = (0, Some(first));
    while let Some(key) = found {
        redacted.extend_from_slice(&text[copied..key.start]);
        redacted.extend_from_slice(REDACTED.as_bytes());
        copied = key.end;
        found = key_shaped(&text, key.end);
    }
    redacted.extend_from_slice(&text[copied..]);
    Cow::Owned(redacted)
}

/// `text` with every known secret replaced by `***`.
pub fn redact(text: &str) -> Cow<'_, str> {
    match redact_bytes(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        // A secret and `***` are whole UTF-8 strings, so the result is one.
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
    fn secrets_never_print() {
        let key = Secret::new("sk-very-secret".into(), "a test");
        assert_eq!(format!("{key} {key:?}"), "*** ***");
    }
}
