//! The figures an answer states: every number of its prose, its Markdown
//! tables and its emphasis, read from the Markdown as pulldown-cmark
//! parses it (code spans and code blocks left out), with what is not a
//! figure left out too: numbers the question gave, dates and times (ISO
//! forms, a month name with a day or year, quarters, a bare year), list
//! and heading numbering, ordinals and numbers inside names (`Q3`,
//! `COVID-19`).

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// A number as the answer writes it: its text, its value and the
/// precision it is written with.
#[derive(Clone, Debug, PartialEq)]
pub struct Written {
    /// As written: `1,234`, `€2.4M`, `40%`, `2.3x`, `-7`.
    pub text: String,
    /// Its value (a percentage in percent: `40%` is 40).
    pub value: f64,
    /// Half its last written digit: a value within this of `value` is
    /// what the answer says (`1.2M`: 50,000).
    pub half: f64,
    /// Written as a percentage (`40%`, `40 percent`).
    pub percent: bool,
    /// Written as a multiple (`2.3x`, `2.3×`).
    pub times: bool,
    /// Written with a sign (`-7`, `+12%`): its sign counts.
    pub signed: bool,
}

/// The figures of the Markdown `answer`, in order, leaving out the
/// numbers of `question`.
pub fn figures(answer: &str, question: &str) -> Vec<Written> {
    let asked: Vec<String> = numbers(question, Locale::of(question))
        .iter()
        .map(|number| digits(&number.text))
        .collect();
    let locale = Locale::of(answer);
    let mut found = Vec::new();
    for block in blocks(answer) {
        found.extend(
            numbers(&block, locale)
                .into_iter()
                .filter(|number| !asked.contains(&digits(&number.text))),
        );
    }
    found
}

/// How an answer writes its decimals: `1,234.5`, or `1.234,5` (an
/// answer with a decimal comma, `45,7`, or a number grouped by dots
/// twice, `45.713.496`, is read the second way throughout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Locale {
    DecimalPoint,
    DecimalComma,
}

impl Locale {
    fn of(text: &str) -> Locale {
        let bytes = text.as_bytes();
        let digit = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_digit);
        let comma_decimal = (1..bytes.len()).any(|i| {
            bytes[i] == b',' && digit(i - 1) && digit(i + 1) && {
                let run = (i + 1..).take_while(|&k| digit(k)).count();
                run < 3 && !bytes.get(i + 1 + run).is_some_and(|b| *b == b',' || *b == b'.')
            }
        });
        let dot_groups = (1..bytes.len()).any(|i| {
            bytes[i] == b'.'
                && digit(i - 1)
                && (1..=3).all(|k| digit(i + k))
                && bytes.get(i + 4) == Some(&b'.')
                && (5..=7).all(|k| digit(i + k))
                && !digit(i + 8)
        });
        if comma_decimal || dot_groups {
            Locale::DecimalComma
        } else {
            Locale::DecimalPoint
        }
    }

    /// The decimal mark.
    fn decimal(self) -> char {
        match self {
            Locale::DecimalPoint => '.',
            Locale::DecimalComma => ',',
        }
    }

    /// True when `c` separates thousands groups.
    fn groups_with(self, c: char) -> bool {
        match self {
            Locale::DecimalPoint => matches!(c, ',' | ' ' | '\u{a0}' | '\u{202f}' | '\u{2009}'),
            Locale::DecimalComma => matches!(c, '.' | ' ' | '\u{a0}' | '\u{202f}' | '\u{2009}'),
        }
    }
}

/// The digits of a number as written: `€1,234.5K` is `12345`.
fn digits(text: &str) -> String {
    text.chars().filter(char::is_ascii_digit).collect()
}

/// The text of each block of the Markdown (a paragraph, a heading, a
/// table cell, a list item's own text), its inline formatting removed,
/// code left out, a heading's numbering cut.
fn blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut text = String::new();
    let mut in_code = false;
    let mut heading = false;
    let mut flush = |text: &mut String, heading: bool| {
        let block = std::mem::take(text);
        let block = if heading { cut_numbering(&block) } else { &block };
        if !block.trim().is_empty() {
            blocks.push(block.to_string());
        }
    };
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Text(part) if !in_code => text.push_str(&part),
            // A code span, a break or HTML separates numbers.
            Event::Code(_) | Event::SoftBreak | Event::HardBreak | Event::InlineHtml(_) => text.push(' '),
            Event::Start(Tag::Heading { .. }) => {
                flush(&mut text, false);
                heading = true;
            }
            Event::End(TagEnd::Heading(_)) => {
                flush(&mut text, true);
                heading = false;
            }
            Event::Start(tag) if is_block(&tag) => flush(&mut text, heading),
            Event::End(end) if is_block_end(&end) => flush(&mut text, heading),
            _ => {}
        }
    }
    flush(&mut text, false);
    blocks
}

fn is_block(tag: &Tag<'_>) -> bool {
    matches!(
        tag,
        Tag::Paragraph | Tag::Item | Tag::TableCell | Tag::BlockQuote(_) | Tag::List(_) | Tag::Table(_)
    )
}

fn is_block_end(end: &TagEnd) -> bool {
    matches!(
        end,
        TagEnd::Paragraph | TagEnd::Item | TagEnd::TableCell | TagEnd::BlockQuote(_) | TagEnd::List(_)
    )
}

/// A heading without its numbering: `1.2 Revenue` is `Revenue`.
fn cut_numbering(heading: &str) -> &str {
    let trimmed = heading.trim_start();
    let number_end = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ')'))
        .unwrap_or(trimmed.len());
    let number = &trimmed[..number_end];
    let numbered = number.starts_with(|c: char| c.is_ascii_digit())
        && (number.ends_with('.') || number.ends_with(')') || number.contains('.'))
        && trimmed[number_end..].starts_with(char::is_whitespace);
    if numbered {
        &trimmed[number_end..]
    } else {
        heading
    }
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// True when `word` names a month (`March`, `Mar`, `Sept.`).
fn is_month(word: &str) -> bool {
    let word = word.trim_end_matches('.').to_lowercase();
    // Vietnamese writes a month as "tháng 11".
    if word == "tháng" {
        return true;
    }
    MONTHS.iter().any(|month| {
        *month == word || word.len() >= 3 && month.starts_with(&word) && (word.len() == 3 || word == "sept")
    })
}

/// True when `word` names a quarter or a half (`Q3`, `H1`).
fn is_quarter(word: &str) -> bool {
    let bytes = word.as_bytes();
    bytes.len() == 2 && matches!(bytes[0], b'Q' | b'q' | b'H' | b'h') && bytes[1].is_ascii_digit()
}

/// The multipliers written after a number, attached (`1.2M`) or as a
/// word (`1.2 million`).
const SCALES: [(&str, f64, bool); 15] = [
    ("K", 1e3, true),
    ("k", 1e3, true),
    ("M", 1e6, true),
    ("MM", 1e6, true),
    ("B", 1e9, true),
    ("bn", 1e9, true),
    ("T", 1e12, true),
    ("thousand", 1e3, false),
    ("million", 1e6, false),
    ("millions", 1e6, false),
    ("billion", 1e9, false),
    ("trillion", 1e12, false),
    ("tỷ", 1e9, false),
    ("triệu", 1e6, false),
    ("nghìn", 1e3, false),
];

const CURRENCIES: [char; 6] = ['$', '€', '£', '¥', '₹', '₩'];

/// A number's suffix: how many bytes it takes, and what it makes of the
/// number.
#[derive(Default)]
struct Suffix {
    len: usize,
    scale: Option<f64>,
    percent: bool,
    times: bool,
}

/// The suffix at the start of `rest`: a percent sign, a multiple, a scale.
fn suffix(rest: &str) -> Suffix {
    let word_ends = |after: &str| !after.chars().next().is_some_and(char::is_alphanumeric);
    let taken = |after: &str| rest.len() - after.len();
    if let Some(after) = rest.strip_prefix('%').or_else(|| rest.strip_prefix(" %")) {
        return Suffix {
            len: taken(after),
            percent: true,
            ..Suffix::default()
        };
    }
    if let Some(after) = rest.strip_prefix(" percent").filter(|after| word_ends(after)) {
        return Suffix {
            len: taken(after),
            percent: true,
            ..Suffix::default()
        };
    }
    if let Some(after) = rest.strip_prefix(['x', '×']).filter(|after| word_ends(after)) {
        return Suffix {
            len: taken(after),
            times: true,
            ..Suffix::default()
        };
    }
    SCALES
        .iter()
        .find_map(|(name, multiplier, attached)| {
            let after = match attached {
                true => rest.strip_prefix(name),
                false => rest.strip_prefix(' ').and_then(|rest| rest.strip_prefix(name)),
            };
            after.filter(|after| word_ends(after)).map(|after| Suffix {
                len: taken(after),
                scale: Some(*multiplier),
                ..Suffix::default()
            })
        })
        .unwrap_or_default()
}

/// The numbers of one block of text, as figures.
fn numbers(text: &str, locale: Locale) -> Vec<Written> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let char_at = |i: usize| chars.get(i).map(|(_, c)| *c);
    let byte_at = |i: usize| chars.get(i).map_or(text.len(), |(at, _)| *at);
    let digit_at = |i: usize| char_at(i).is_some_and(|c| c.is_ascii_digit());
    let mut found = Vec::new();
    // Where the last date ended (a year after `March 3, ` is one too).
    let mut date_end: Option<usize> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        if c.is_alphanumeric() || c == '_' {
            if !c.is_ascii_digit() || i > 0 && (chars[i - 1].1.is_alphanumeric() || chars[i - 1].1 == '_') {
                // A word, and any digits glued to it (`Q3`, `v2.1`).
                while char_at(i).is_some_and(|c| c.is_alphanumeric() || c == '_')
                    || char_at(i) == Some('.') && digit_at(i + 1)
                {
                    i += 1;
                }
                continue;
            }
        } else {
            i += 1;
            continue;
        }
        // The prefix: a sign, then a currency, before the first digit.
        let mut start = i;
        let currency = start > 0 && CURRENCIES.contains(&chars[start - 1].1);
        if currency {
            start -= 1;
        }
        let sign = (start > 0)
            .then(|| chars[start - 1].1)
            .filter(|sign| matches!(sign, '-' | '−' | '+'))
            .filter(|_| char_at(start.wrapping_sub(2)).is_none_or(|b| b.is_whitespace() || "([\"'“:=~≈*".contains(b)));
        if sign.is_some() {
            start -= 1;
        }
        let glued = char_at(start.wrapping_sub(1)).is_some_and(|p| matches!(p, '-' | '/' | '.' | ':' | '#' | '–'));
        // The digits, in thousands groups or not, and the decimals.
        let mut end = i;
        while digit_at(end) {
            end += 1;
        }
        let mut grouped = false;
        let groupable = end - i <= 3;
        while groupable
            && char_at(end).is_some_and(|c| locale.groups_with(c))
            && (1..=3).all(|k| digit_at(end + k))
            && !digit_at(end + 4)
        {
            grouped = true;
            end += 4;
        }
        let mut decimals = 0;
        if char_at(end) == Some(locale.decimal()) && digit_at(end + 1) {
            end += 1;
            while digit_at(end) {
                end += 1;
                decimals += 1;
            }
        }
        // Part of a date, a time, a version or a range: `2024-01-15`,
        // `1/15/2024`, `10:30`, `1.2.3`.
        let joined = matches!(char_at(end), Some('-' | '/' | ':' | '–' | '.')) && digit_at(end + 1)
            || char_at(end) == Some('-') && char_at(end + 1).is_some_and(char::is_alphabetic);
        if glued || joined {
            i = end;
            while char_at(i).is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '/' | ':' | '.' | '–' | 'T')) {
                i += 1;
            }
            date_end = Some(i);
            continue;
        }
        let rest = &text[byte_at(end)..];
        let suffix = suffix(rest);
        let after = &rest[suffix.len..];
        // An ordinal or a unit glued to it (`3rd`, `10am`): no figure.
        if suffix.len == 0 && after.chars().next().is_some_and(char::is_alphabetic) {
            i = end;
            continue;
        }
        let finish = end + rest[..suffix.len].chars().count();
        let mantissa: String = chars[i..end]
            .iter()
            .filter(|(_, c)| !locale.groups_with(*c))
            .map(|(_, c)| if *c == locale.decimal() { '.' } else { *c })
            .collect();
        let value: f64 = mantissa.parse().unwrap_or(0.0);
        let plain = decimals == 0 && !grouped && suffix.len == 0 && !currency && sign.is_none();
        if plain
            && is_date_or_rank(
                text,
                value,
                mantissa.len(),
                byte_at(start),
                after,
                date_end.map(byte_at),
            )
        {
            date_end = Some(finish);
            i = finish;
            continue;
        }
        let scale = suffix.scale.unwrap_or(1.0);
        let negative = matches!(sign, Some('-' | '−'));
        found.push(Written {
            text: text[byte_at(start)..byte_at(finish)].trim().to_string(),
            value: if negative { -value } else { value } * scale,
            half: 10f64.powi(-decimals) / 2.0 * scale,
            percent: suffix.percent,
            times: suffix.times,
            signed: sign.is_some(),
        });
        i = finish;
    }
    found
}

/// True when a plain integer (`value`, written with `width` digits, at
/// byte `at` of `text`, `after` following it) is part of a date or a
/// time: a year (1900 to 2100), a day or year beside a month's name or a
/// quarter's, a year after a date (`March 3, 2024`), an hour (`10 am`).
fn is_date_or_rank(text: &str, value: f64, width: usize, at: usize, after: &str, date_end: Option<usize>) -> bool {
    let year = width == 4 && (1900.0..=2100.0).contains(&value);
    let day = width <= 2 && (1.0..=31.0).contains(&value);
    let (previous, next) = (previous_word(text, at), next_word(after));
    let beside_a_date = is_month(previous) || is_month(next) || is_quarter(previous) || is_quarter(next);
    let after_a_date = date_end.is_some_and(|end| end <= at && text[end..at].trim_matches([',', ' ']).is_empty());
    let ranking = matches!(previous.to_lowercase().as_str(), "top" | "bottom");
    let hour = matches!(next.to_lowercase().as_str(), "am" | "pm" | "a.m" | "p.m" | "utc");
    year || day && (beside_a_date || after_a_date) || hour || ranking
}

/// The word before byte `at` of `text` (a comma or spaces between).
fn previous_word(text: &str, at: usize) -> &str {
    let before = text[..at].trim_end_matches([' ', ',', '\u{a0}']);
    let start = before
        .rfind(|c: char| !(c.is_alphanumeric() || c == '.'))
        .map_or(0, |at| at + before[at..].chars().next().map_or(1, char::len_utf8));
    &before[start..]
}

/// The word at the start of `rest` (after spaces).
fn next_word(rest: &str) -> &str {
    let rest = rest.trim_start_matches([' ', '\u{a0}']);
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '.'))
        .unwrap_or(rest.len());
    rest[..end].trim_end_matches('.')
}
