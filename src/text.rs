//! Text as people see it: made safe for a terminal ([`visible`]: no
//! control or bidirectional character acts), shortened ([`shorten`],
//! secrets redacted first), escaped for markup or the shell, and durations
//! as people write them. A leaf: the wire, the stream and the renderers
//! all use it.

use std::borrow::Cow;
use std::time::Duration;

use crate::redact::redact;

/// THE width of `text` as a terminal shows it, in display columns: an
/// East Asian wide character is two, a combining mark none, a colour
/// escape none. Every table, cut and wrap for a person measures with it.
pub fn width(text: &str) -> usize {
    textwrap::core::display_width(text)
}

/// `text` cut to at most `columns` display columns (see [`width`]), ending
/// in `…` when it was cut; as it is when it fits.
pub fn fit(text: &str, columns: usize) -> Cow<'_, str> {
    use unicode_width::UnicodeWidthChar;
    if width(text) <= columns {
        return Cow::Borrowed(text);
    }
    let room = columns.saturating_sub(1);
    let mut used = 0;
    let mut cut = String::with_capacity(text.len().min(4 * columns));
    for c in text.chars() {
        let wide = c.width().unwrap_or(0);
        if used + wide > room {
            break;
        }
        used += wide;
        cut.push(c);
    }
    if columns > 0 {
        cut.push('…');
    }
    Cow::Owned(cut)
}

/// `text` padded with spaces to `columns` display columns: after it, or
/// before it when `right` (numbers). Text as wide or wider stays as it is.
pub fn pad(text: &str, columns: usize, right: bool) -> String {
    let fill = " ".repeat(columns.saturating_sub(width(text)));
    match right {
        true => format!("{fill}{text}"),
        false => format!("{text}{fill}"),
    }
}

/// Where [`wrap`] may break a line that is too wide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Breaks {
    /// Where Unicode's line breaking allows (UAX #14): at spaces, and
    /// between CJK characters; never at a hyphen: prose.
    Spaces,
    /// At spaces and after a `/` or `\\`: paths and URLs.
    SpacesAndPaths,
    /// At spaces and after a `/`, `_` or `.`: column names
    /// (`orders_view.revenue`), never inside one of their words.
    SpacesAndNames,
}

/// `line` wrapped to `width` display columns at the places `breaks`
/// allows, never inside a word (a word wider than the line stays whole, a
/// variable name is never split; CJK text, which has no spaces, breaks
/// between its characters); lines after the first are indented `hang`
/// spaces more than the first. Colour escapes take no room.
pub fn wrap(line: &str, width: usize, breaks: Breaks, hang: usize) -> Vec<String> {
    let lead = line.len() - line.trim_start_matches(' ').len();
    let indent = " ".repeat(lead + hang);
    let separator = match breaks {
        Breaks::Spaces => textwrap::WordSeparator::UnicodeBreakProperties,
        Breaks::SpacesAndPaths => textwrap::WordSeparator::Custom(after_spaces_and_path_separators),
        Breaks::SpacesAndNames => textwrap::WordSeparator::Custom(after_spaces_and_name_separators),
    };
    let options = textwrap::Options::new(width.max(lead + hang + 1))
        .initial_indent(&line[..lead])
        .subsequent_indent(&indent)
        .break_words(false)
        .word_separator(separator)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::wrap(&line[lead..], options)
        .into_iter()
        .map(Cow::into_owned)
        .collect()
}

/// The words of `line` for [`Breaks::SpacesAndPaths`].
fn after_spaces_and_path_separators(line: &str) -> Box<dyn Iterator<Item = textwrap::core::Word<'_>> + '_> {
    after_spaces_and(line, b"/\\")
}

/// The words of `line` for [`Breaks::SpacesAndNames`].
fn after_spaces_and_name_separators(line: &str) -> Box<dyn Iterator<Item = textwrap::core::Word<'_>> + '_> {
    after_spaces_and(line, b"/_.")
}

/// The words of `line`: split after each run of spaces and after each run
/// of the `separators`.
fn after_spaces_and<'a>(line: &'a str, separators: &[u8]) -> Box<dyn Iterator<Item = textwrap::core::Word<'a>> + 'a> {
    let mut start = 0;
    let mut words = Vec::new();
    let bytes = line.as_bytes();
    for (at, byte) in bytes.iter().enumerate() {
        let next = bytes.get(at + 1).copied();
        let ends = match byte {
            b' ' => next != Some(b' '),
            byte if separators.contains(byte) => next.is_some_and(|next| next != b' ' && !separators.contains(&next)),
            _ => false,
        };
        if ends {
            words.push(textwrap::core::Word::from(&line[start..=at]));
            start = at + 1;
        }
    }
    if start < line.len() {
        words.push(textwrap::core::Word::from(&line[start..]));
    }
    Box::new(words.into_iter())
}

/// `bytes` with every control character that could act on a terminal
/// written as `\xNN`, and C1 controls and the bidirectional controls that
/// reorder what a terminal shows (U+061C, U+200E, U+200F, U+202A–U+202E,
/// U+2066–U+2069) as `\u{N}`: escape sequences (colours, titles, the
/// clipboard through OSC 52, clearing the screen), lone carriage returns,
/// text that reads other than it is. Newlines, tabs and `\r\n` stay.
/// Borrowed when there is nothing to change, the common case.
pub fn visible_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    if !(0..bytes.len()).any(|i| acting_len(bytes, i) > 0) {
        return Cow::Borrowed(bytes);
    }
    let mut shown = Vec::with_capacity(bytes.len() + 16);
    let mut i = 0;
    while i < bytes.len() {
        match acting_len(bytes, i) {
            0 => {
                shown.push(bytes[i]);
                i += 1;
            }
            1 => {
                shown.extend_from_slice(format!("\\x{:02x}", bytes[i]).as_bytes());
                i += 1;
            }
            len => {
                let code = std::str::from_utf8(&bytes[i..i + len])
                    .ok()
                    .and_then(|c| c.chars().next())
                    .map_or(0, u32::from);
                shown.extend_from_slice(format!("\\u{{{code:02x}}}").as_bytes());
                i += len;
            }
        }
    }
    Cow::Owned(shown)
}

/// How many bytes at `bytes[i]` are a character that acts on a terminal
/// (see [`visible_bytes`]); 0 for one shown as it is.
fn acting_len(bytes: &[u8], i: usize) -> usize {
    let next = |n: usize| bytes.get(i + n).copied().unwrap_or(0);
    match bytes[i] {
        b'\n' | b'\t' => 0,
        b'\r' => usize::from(next(1) != b'\n'),
        0..=0x1f | 0x7f => 1,
        // C1 controls, U+0080..=U+009F.
        0xc2 if (0x80..=0x9f).contains(&next(1)) => 2,
        // U+061C, the Arabic letter mark.
        0xd8 if next(1) == 0x9c => 2,
        // U+200E, U+200F and U+202A..=U+202E.
        0xe2 if next(1) == 0x80 && matches!(next(2), 0x8e | 0x8f | 0xaa..=0xae) => 3,
        // U+2066..=U+2069.
        0xe2 if next(1) == 0x81 && (0xa6..=0xa9).contains(&next(2)) => 3,
        _ => 0,
    }
}

/// `text` with its control characters made visible (see [`visible_bytes`]).
pub fn visible(text: &str) -> Cow<'_, str> {
    match visible_bytes(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        // Only whole characters were replaced, by ASCII.
        Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

/// `text` as one line, in a pipe too: CR, LF and tab written `\r`, `\n`,
/// `\t`, other control characters made visible (see [`visible`]). A cell
/// of an aligned table never breaks its row, and a line on stderr never
/// lets foreign text start the next one.
pub fn one_line(text: &str) -> Cow<'_, str> {
    match text.contains(['\r', '\n', '\t']) {
        true => Cow::Owned(visible(&text.replace('\r', "\\r").replace('\n', "\\n").replace('\t', "\\t")).into_owned()),
        false => visible(text),
    }
}

/// A duration as people write it: `90s`, `5m`, `1.5s`, `250ms`.
pub fn human(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.1}s", duration.as_secs_f64())
    }
}

/// The candidate closest to `word` by edit distance (a swap of two
/// neighbouring letters counts as one edit), when it is close enough to
/// be a typo of it: at most one edit in three letters.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let allowed = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|candidate| (strsim::damerau_levenshtein(word, candidate), candidate))
        .filter(|&(distance, _)| distance <= allowed)
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

/// A TOML file's parse error as one line: `FILE:LINE: what` (the line of
/// the error's span in `text`, 1-based), an unknown key met with what was
/// meant ([`did_you_mean`]).
pub fn toml_error(file: &str, text: &str, err: &toml::de::Error) -> String {
    let line = err
        .span()
        .map_or(1, |span| text[..span.start.min(text.len())].matches('\n').count() + 1);
    format!("{file}:{line}: {}", did_you_mean(err.message()))
}

/// serde's "unknown field `X`, expected one of `a`, `b`" (from a suite,
/// an eval file or a profile) as one short line: "unknown field `X`: did
/// you mean `a`?" when one is close; the message as it was otherwise.
pub fn did_you_mean(message: &str) -> Cow<'_, str> {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return Cow::Borrowed(message);
    };
    let Some((field, expected)) = rest.split_once("`, expected ") else {
        return Cow::Borrowed(message);
    };
    let known = expected
        .trim_start_matches("one of ")
        .split(", ")
        .map(|name| name.trim_matches('`'));
    match closest(field, known) {
        Some(meant) => Cow::Owned(format!("unknown field `{field}`: did you mean `{meant}`?")),
        None => Cow::Borrowed(message),
    }
}

/// How long a quoted piece of text (an error body, a tool's error) may be,
/// in characters.
pub const SUMMARY_CHARS: usize = 200;

/// How long a message the service wrote for people (a SQL error that
/// lists the valid members) may be before it is cut, in characters.
pub const SERVICE_MESSAGE_CHARS: usize = 8 * 1024;

/// `text`, every secret redacted first, trimmed and cut to
/// [`SUMMARY_CHARS`] characters with `…` when longer.
pub fn shorten(text: &str) -> String {
    shorten_to(text, SUMMARY_CHARS)
}

/// `text`, every secret redacted first, trimmed and cut to `limit`
/// characters with `…` when longer.
pub fn shorten_to(text: &str, limit: usize) -> String {
    let text = redact(text);
    let text = text.trim();
    match text.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// The longest start of `text` of at most `limit` bytes that ends
/// between characters.
pub fn head(text: &str, limit: usize) -> &str {
    let mut end = text.len().min(limit);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Text shown as itself in Markdown, on one line, safe in a table cell: its
/// control characters made visible, each line break a space, and every
/// ASCII punctuation mark Markdown may give a meaning (GitHub's `$` math
/// included) escaped with a backslash, so that it cannot close a table
/// cell (`|`), open a link (`](`), add HTML (`<`) or become a link of its
/// own (`https://…`, `www.…`). An `@` is followed by an empty HTML comment
/// ([`MARKDOWN_AT`]): GitHub's renderer finds e-mail addresses (`mailto:`,
/// `xmpp:`) and mentions in the text after escapes are read, so only a
/// node between `@` and what follows keeps `a@b.example` and `@team` text.
pub fn markdown_text(text: &str) -> String {
    /// Punctuation Markdown gives no meaning inside a line, left as it is
    /// so that the text stays readable (`6/13`, `a, b; c?`).
    const MARKDOWN_PLAIN: &str = ",;?'\"%=/";
    let text = visible(text);
    let mut escaped = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '\n' | '\r' => escaped.push(' '),
            '@' => escaped.push_str(MARKDOWN_AT),
            c if c.is_ascii_punctuation() && !MARKDOWN_PLAIN.contains(c) => {
                escaped.push('\\');
                escaped.push(c);
            }
            c => escaped.push(c),
        }
    }
    escaped
}

/// How [`markdown_text`] writes an `@`: an empty comment after it, which
/// renders as nothing and splits the text GitHub searches for addresses
/// and mentions.
pub const MARKDOWN_AT: &str = "@<!-- -->";

/// Text safe inside XML and HTML: the five entities escaped, characters
/// XML 1.0 forbids dropped.
pub fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

/// `text` as one shell word: as it is when it holds only characters no
/// shell treats specially, else in single quotes (an id the service chose
/// can then never run as a command when a hint is pasted).
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,:/@%+=".contains(c));
    match plain {
        true => text.to_string(),
        false => format!("'{}'", text.replace('\'', r"'\''")),
    }
}

/// Parses a duration such as `90s`, `5m`, `1h30m`, `250ms` or `2d`; a bare
/// number is seconds. The one reader of durations: flags, the environment
/// and suite files.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let err = || format!("invalid duration {text:?}: use forms like 90s, 5m, 1h30m, 250ms (a bare number is seconds)");
    if text.is_empty() {
        return Err(err());
    }
    if let Ok(seconds) = text.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds).map_err(|_| err());
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(err)?;
        let (number, tail) = rest.split_at(digits);
        let unit_len = tail.find(|c: char| c.is_ascii_digit()).unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let value: f64 = number.parse().map_err(|_| err())?;
        let seconds = match unit {
            "ms" => value / 1000.0,
            "s" | "sec" | "secs" => value,
            "m" | "min" | "mins" => value * 60.0,
            "h" | "hr" | "hrs" => value * 3600.0,
            "d" | "day" | "days" => value * 86400.0,
            _ => return Err(err()),
        };
        total += Duration::try_from_secs_f64(seconds).map_err(|_| err())?;
        rest = tail;
    }
    Ok(total)
}

/// A regular expression written in the source (a literal pattern), for a
/// `LazyLock` to build on first use.
#[allow(
    clippy::expect_used,
    reason = "a pattern written in the source is valid: the tests that use it compile it"
)]
pub fn literal_regex(pattern: &'static str) -> regex::Regex {
    regex::Regex::new(pattern).expect("a literal pattern is valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_breaks_at_spaces_and_path_separators_never_inside_a_word() {
        let note = "analyst: warning: SQL result 1 is truncated: 20 of 30 rows";
        let lines = wrap(note, 30, Breaks::Spaces, 2);
        assert_eq!(
            lines,
            ["analyst: warning: SQL result 1", "  is truncated: 20 of 30 rows"]
        );
        // A word wider than the line stays whole.
        let lines = wrap("from ANALYST_CUBE_TOKEN_FILE", 10, Breaks::Spaces, 0);
        assert_eq!(lines, ["from", "ANALYST_CUBE_TOKEN_FILE"]);
        // A path breaks after a separator, its pieces joined back without spaces.
        let path = "/tmp/analyst-tests-no-config-home/analyst/config.toml";
        let lines = wrap(path, 36, Breaks::SpacesAndPaths, 0);
        assert_eq!(lines, ["/tmp/analyst-tests-no-config-home/", "analyst/config.toml"]);
        assert_eq!(lines.concat(), path);
        // An indented line keeps its indent, and its rest hangs under it.
        let lines = wrap("      first byte 0.4s, first SQL 1.2s", 24, Breaks::Spaces, 2);
        assert_eq!(lines, ["      first byte 0.4s,", "        first SQL 1.2s"]);
    }

    #[test]
    fn widths_are_display_columns_and_cjk_breaks_between_characters() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("売上"), 4, "East Asian wide: two columns each");
        assert_eq!(width("e\u{301}"), 1, "a combining mark takes none");
        assert_eq!(width("\x1b[1mbold\x1b[0m"), 4, "a colour escape takes none");
        assert_eq!(fit("月別の売上", 7), "月別の…");
        assert_eq!(width(&fit("月別の売上", 7)), 7);
        assert_eq!(fit("revenue", 7), "revenue");
        assert_eq!(fit("revenue", 4), "rev…");
        assert_eq!(pad("売上", 6, false), "売上  ");
        assert_eq!(pad("12", 4, true), "  12");
        let japanese = "analyst: warning: サービスからのメッセージ: クエリの実行に失敗しました。もう一度お試しください";
        let lines = wrap(japanese, 40, Breaks::Spaces, 2);
        assert!(lines.len() > 1, "{lines:?}");
        for line in &lines {
            assert!(width(line) <= 40, "{line:?} is {} wide", width(line));
        }
        assert_eq!(lines.concat().replace(' ', ""), japanese.replace(' ', ""));
        // Flags and variables are never split, hyphens or not.
        for word in ["--api-key-file", "ANALYST_API_KEY", "sk-abc-def"] {
            let lines = wrap(&format!("pass {word} to it"), 8, Breaks::Spaces, 0);
            assert!(lines.iter().any(|line| line.trim() == word), "{word}: {lines:?}");
        }
    }

    #[test]
    fn a_typo_is_met_with_what_was_meant() {
        let fields = "unknown field `expect_anwser`, expected one of `name`, `question`, `expect_answer`, `expect_sql`";
        assert_eq!(
            did_you_mean(fields),
            "unknown field `expect_anwser`: did you mean `expect_answer`?"
        );
        let far = "unknown field `colour`, expected one of `name`, `question`";
        assert_eq!(did_you_mean(far), far);
        assert_eq!(did_you_mean("invalid type: integer"), "invalid type: integer");
        assert_eq!(closest("aks", ["ask", "abort", "rows"]), Some("ask"));
        assert_eq!(closest("chek", ["ask", "check"]), Some("check"));
        assert_eq!(closest("x", ["ask", "rows"]), None);
    }

    #[test]
    fn secrets_are_redacted_before_text_is_shortened() {
        crate::redact::register_secret("sk-shorten-test-93f1");
        let echo = format!(
            "{}Invalid key sk-shorten-test-93f1 (sk-shorten-test-93f1)",
            "x".repeat(180)
        );
        let short = shorten(&echo);
        assert!(!short.contains("sk-shorten"), "{short}");
        assert!(short.ends_with('…'));
    }

    #[test]
    fn markup_is_escaped_and_forbidden_characters_dropped() {
        assert_eq!(
            escape_markup("a<b & \"c\" 'd'\u{1}>"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"
        );
    }

    #[test]
    fn control_characters_are_made_visible_but_newlines_and_tabs_stay() {
        assert_eq!(
            visible("a\x1b]52;c;ZXZpbA==\x07b\tc\nd\r\ne\rf\u{9b}2Jg"),
            "a\\x1b]52;c;ZXZpbA==\\x07b\tc\nd\r\ne\\x0df\\u{9b}2Jg"
        );
        assert!(matches!(visible("plain ünïcode\n"), Cow::Borrowed(_)));
        // Bidirectional controls reorder what is shown: visible too; the
        // characters encoded beside them (…, —, Arabic letters) stay.
        assert_eq!(
            visible("a\u{202e}b\u{2066}c\u{200f}d\u{61c}e\u{2069}"),
            "a\\u{202e}b\\u{2066}c\\u{200f}d\\u{61c}e\\u{2069}"
        );
        assert!(matches!(visible("… — ؛ ع \u{2065}"), Cow::Borrowed(_)));
    }

    #[test]
    fn ids_are_quoted_for_the_shell_only_when_needed() {
        assert_eq!(shell_quote("chat-0001"), "chat-0001");
        assert_eq!(shell_quote("1732512345678-message"), "1732512345678-message");
        assert_eq!(shell_quote("abc; curl x | sh #"), "'abc; curl x | sh #'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    proptest::proptest! {
        /// Whatever a name or an answer holds, a table cell of it renders
        /// (as GitHub's Markdown does, tables on) to that text and nothing
        /// else: one row of one cell, no element of its own.
        #[test]
        fn markdown_text_renders_as_itself_in_a_table_cell(text in "[ -~]{0,40}") {
            let markdown = format!("| h |\n|---|\n| {} |\n", markdown_text(&text));
            let mut html = String::new();
            let options = pulldown_cmark::Options::ENABLE_TABLES | pulldown_cmark::Options::ENABLE_STRIKETHROUGH;
            pulldown_cmark::html::push_html(&mut html, pulldown_cmark::Parser::new_ext(&markdown, options));
            let html = html.replace(MARKDOWN_AT, "@");
            let cell = html.split("<td>").nth(1).and_then(|rest| rest.split("</td>").next());
            // Quotes may or may not be written as entities.
            let unquoted = |html: &str| html.replace("&#39;", "'").replace("&quot;", "\"");
            proptest::prop_assert_eq!(cell.map(unquoted), Some(unquoted(&escape_markup(text.trim()))), "{}", html);
        }
    }
}
