//! A tool's result kept the cheap way. The result arrives as one JSON text
//! (a 50 MB line of rows is normal); [`ToolResult`] keeps that text once,
//! with where each top-level field is, and [`Rows`] keeps where each row
//! of its `data` starts. A row is parsed when an output reads it, one at a
//! time, so a result of millions of rows costs its text and four bytes a
//! row, never a tree of values; and a value is written as the service
//! wrote it.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use indexmap::{IndexMap, IndexSet};
use serde::de::{DeserializeSeed, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

use super::Column;

/// A tool's result: its text and, when it is an object, where each of its
/// fields' values is in the text.
#[derive(Clone, Debug)]
pub struct ToolResult {
    text: Arc<String>,
    fields: Option<Spans>,
}

/// Each field's name and where its value is in the text, in order.
type Spans = Arc<[(String, Range<usize>)]>;

impl ToolResult {
    /// The result the service sent as `text` (a tool result decoded from
    /// the JSON string it came in): that JSON, or, when `text` is not JSON,
    /// the JSON string of it. An object is read once, for where its fields
    /// are; only other results are checked for being JSON at all.
    pub fn new(text: String) -> ToolResult {
        let text = match lone_surrogates_replaced(&text) {
            Cow::Borrowed(_) => text,
            Cow::Owned(repaired) => repaired,
        };
        let fields = serde_json::from_str::<Fields<'_>>(&text).ok().map(|Fields(fields)| {
            fields
                .into_iter()
                .map(|(name, raw)| (name, span(&text, raw.get())))
                .collect()
        });
        let text = match fields.is_some() || serde_json::from_str::<IgnoredAny>(&text).is_ok() {
            true => text,
            false => Value::String(text).to_string(),
        };
        // Moved into the `Arc`, not copied: the text may be large.
        ToolResult {
            text: Arc::new(text),
            fields,
        }
    }

    /// True when the result is a JSON object.
    pub fn is_object(&self) -> bool {
        self.fields.is_some()
    }

    /// The JSON text of the field `name`, when the result has it (the
    /// last of a repeated name, as jq reads it).
    pub fn raw(&self, name: &str) -> Option<&str> {
        let (_, range) = self.fields.as_ref()?.iter().rev().find(|(field, _)| field == name)?;
        Some(&self.text[range.clone()])
    }

    /// The value of the field `name` (for small fields: parsed each time).
    pub fn field(&self, name: &str) -> Option<Value> {
        self.raw(name).and_then(|raw| serde_json::from_str(raw).ok())
    }

    /// The whole result as a value (what `-o json` shows of a tool call).
    pub fn value(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|_| Value::String(self.text.to_string()))
    }

    /// Where the `data` array is in the text, when the result has one.
    fn data(&self) -> Option<Range<usize>> {
        let data = self.raw("data")?;
        data.starts_with('[').then(|| span(&self.text, data))
    }
}

/// Written out as the value it is (in `-o json`'s `toolCalls`), field by
/// field: a repeated name's last value at its first place, as a parsed
/// object keeps it, and an array one element at a time (see [`Streamed`]).
impl Serialize for ToolResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Some(fields) = &self.fields else {
            return self.value().serialize(serializer);
        };
        let mut last: IndexMap<&str, &str> = IndexMap::with_capacity(fields.len());
        for (name, range) in fields.iter() {
            last.insert(name, &self.text[range.clone()]);
        }
        let mut map = serializer.serialize_map(Some(last.len()))?;
        for (name, raw) in last {
            map.serialize_entry(name, &Streamed(raw))?;
        }
        map.end()
    }
}

/// A value's JSON text written as that value; an array element by
/// element, so that a field of millions of rows is never a tree of values
/// at once (`-o json` holds its document, not a copy of it per value).
struct Streamed<'a>(&'a str);

impl Serialize for Streamed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if !self.0.starts_with('[') {
            let value: Value = serde_json::from_str(self.0).map_err(S::Error::custom)?;
            return value.serialize(serializer);
        }
        let mut seq = serializer.serialize_seq(None)?;
        let mut failed = None;
        let read = serde_json::Deserializer::from_str(self.0).deserialize_seq(Elements {
            seq: &mut seq,
            failed: &mut failed,
        });
        if let Some(err) = failed {
            return Err(err);
        }
        read.map_err(S::Error::custom)?;
        seq.end()
    }
}

/// Writes each element of an array to `seq` as it is read; a failure to
/// write is kept in `failed`.
struct Elements<'a, Q: SerializeSeq> {
    seq: &'a mut Q,
    failed: &'a mut Option<Q::Error>,
}

impl<'de, Q: SerializeSeq> Visitor<'de> for Elements<'_, Q> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        while let Some(value) = items.next_element::<Value>()? {
            if let Err(err) = self.seq.serialize_element(&value) {
                *self.failed = Some(err);
                return Err(A::Error::custom("the output failed"));
            }
        }
        Ok(())
    }
}

/// An object's fields in order, each value as its raw JSON.
struct Fields<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Fields<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Fields<'de>, D::Error> {
        struct FieldsVisitor;

        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
                let mut fields = Vec::new();
                while let Some(field) = map.next_entry::<String, &'de RawValue>()? {
                    fields.push(field);
                }
                Ok(Fields(fields))
            }
        }

        deserializer.deserialize_map(FieldsVisitor)
    }
}

/// `json` with each lone surrogate escape (`\ud83d` with no low half after
/// it, or a low half alone: half of an emoji split between two messages)
/// written `\ufffd`, as `JSON.parse` and jq read it; serde_json refuses
/// it. Borrowed when there is none, the common case.
pub fn lone_surrogates_replaced(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    // The code of the `\uXXXX` escape at `at`, when it is a surrogate.
    let surrogate_at = |at: usize| {
        let escape = bytes.get(at..at + 6)?;
        let code = std::str::from_utf8(&escape[2..])
            .ok()
            .filter(|_| escape.starts_with(b"\\u"))?;
        u16::from_str_radix(code, 16)
            .ok()
            .filter(|code| (0xd800..=0xdfff).contains(code))
    };
    let mut repaired: Option<String> = None;
    let (mut copied, mut at) = (0, 0);
    while let Some(slash) = bytes
        .get(at..)
        .and_then(|rest| memchr::memchr(b'\\', rest))
        .map(|found| at + found)
    {
        match surrogate_at(slash) {
            Some(0xd800..=0xdbff) if surrogate_at(slash + 6).is_some_and(|low| low >= 0xdc00) => at = slash + 12,
            Some(_) => {
                let text = repaired.get_or_insert_with(|| String::with_capacity(json.len()));
                text.push_str(&json[copied..slash]);
                text.push_str("\\ufffd");
                copied = slash + 6;
                at = copied;
            }
            // Any other escape: the backslash and what it escapes.
            None => at = slash + 2,
        }
    }
    match repaired {
        None => Cow::Borrowed(json),
        Some(mut text) => {
            text.push_str(&json[copied..]);
            Cow::Owned(text)
        }
    }
}

/// Where `part`, a slice of `whole`, is in it.
fn span(whole: &str, part: &str) -> Range<usize> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    start..start + part.len()
}

/// What the first reading of a result's rows learnt: how wide the widest
/// array row is, and the keys of object rows in order of first appearance.
#[derive(Debug, Default)]
pub struct Shapes {
    /// The most values an array row holds.
    pub widest: usize,
    /// The keys of object rows, in order of first appearance.
    pub keys: IndexSet<String>,
}

/// The rows of a SQL result, kept in the text they came in (a tool
/// result's, or the data query API's pages gathered): where each row
/// starts, parsed when read, so a value is always the service's own text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rows {
    /// The text holding the rows.
    text: Arc<String>,
    /// Where each row starts in it.
    starts: Arc<Vec<u32>>,
}

impl Rows {
    /// The rows of `result`'s `data` (none when it has no array of them),
    /// and what their shapes say about the columns.
    pub fn of(result: &ToolResult) -> (Rows, Shapes) {
        let mut shapes = Shapes::default();
        let mut starts = Vec::new();
        if let Some(data) = result.data() {
            let text = &result.text[data.clone()];
            let mut reader = serde_json::Deserializer::from_str(text);
            let seed = RowStarts {
                base: data.start,
                text,
                starts: &mut starts,
                shapes: &mut shapes,
            };
            // The text was parsed whole a moment ago: this cannot fail.
            if seed.deserialize(&mut reader).is_err() {
                starts.clear();
            }
        }
        (Rows::new(Arc::clone(&result.text), starts), shapes)
    }

    /// The rows in `text`, each a JSON value starting at one of `starts`.
    pub fn new(text: Arc<String>, mut starts: Vec<u32>) -> Rows {
        starts.shrink_to_fit();
        Rows {
            text,
            starts: Arc::new(starts),
        }
    }

    /// How many rows there are.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// True when there is no row.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each row's text.
    fn texts(&self) -> impl Iterator<Item = &str> + '_ {
        self.starts.iter().map(|&start| &self.text[start as usize..])
    }

    /// Each row, values in the order of `columns` and as many: an array row
    /// as it is (short ones end in nulls), an object row by column name, a
    /// lone value as the first column.
    pub fn iter<'a>(&'a self, columns: &'a [Column]) -> impl Iterator<Item = Vec<Value>> + 'a {
        self.texts().map(move |text| {
            let mut reader = serde_json::Deserializer::from_str(text);
            let row = Value::deserialize(&mut reader).unwrap_or(Value::Null);
            in_column_order(row, columns)
        })
    }

    /// Each row as [`Rows::iter`] gives it, each value the JSON text the
    /// service sent (`1e999` stays `1e999`): what CSV and the other row
    /// formats write.
    pub fn raw<'a>(&'a self, columns: &'a [Column]) -> impl Iterator<Item = Vec<&'a RawValue>> + 'a {
        self.texts().map(move |text| {
            let mut reader = serde_json::Deserializer::from_str(text);
            let mut values = match text.as_bytes().first() {
                Some(b'[') => Vec::<&RawValue>::deserialize(&mut reader).unwrap_or_default(),
                Some(b'{') => {
                    let fields = Fields::deserialize(&mut reader).map_or_else(|_| Vec::new(), |Fields(fields)| fields);
                    columns
                        .iter()
                        .map(|column| {
                            let value = fields.iter().rev().find(|(name, _)| *name == column.name);
                            value.map_or(RawValue::NULL, |(_, value)| *value)
                        })
                        .collect()
                }
                _ => <&RawValue>::deserialize(&mut reader).map_or_else(|_| Vec::new(), |value| vec![value]),
            };
            values.resize(columns.len().max(values.len()), RawValue::NULL);
            values
        })
    }
}

/// A row as values in column order.
fn in_column_order(row: Value, columns: &[Column]) -> Vec<Value> {
    let mut values = match row {
        Value::Array(values) => values,
        Value::Object(mut map) => columns
            .iter()
            .map(|column| map.swap_remove(&column.name).unwrap_or(Value::Null))
            .collect(),
        scalar => vec![scalar],
    };
    values.resize(columns.len().max(values.len()), Value::Null);
    values
}

/// Reads a `data` array once: where each row starts, and its shape.
struct RowStarts<'a, 'b> {
    base: usize,
    text: &'a str,
    starts: &'b mut Vec<u32>,
    shapes: &'b mut Shapes,
}

impl<'de, 'b> DeserializeSeed<'de> for RowStarts<'de, 'b> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, 'b> Visitor<'de> for RowStarts<'de, 'b> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of rows")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(row) = seq.next_element::<&'de RawValue>()? {
            let start = span(self.text, row.get()).start + self.base;
            // A line is at most 1 GiB (the line reader's limit).
            self.starts.push(u32::try_from(start).unwrap_or(u32::MAX));
            match Shape::of(row) {
                Shape::Array(width) => self.shapes.widest = self.shapes.widest.max(width),
                Shape::Object(keys) => self.shapes.keys.extend(keys),
                Shape::Other => self.shapes.widest = self.shapes.widest.max(1),
            }
        }
        Ok(())
    }
}

/// The shape of one row: an array of so many values, an object with these
/// keys, or anything else.
enum Shape {
    Array(usize),
    Object(Vec<String>),
    Other,
}

impl Shape {
    /// The shape of the row `raw`, told by its first character (an array
    /// or an object is then read as one; any other value is a lone cell).
    fn of(raw: &RawValue) -> Shape {
        let text = raw.get();
        let read = match text.as_bytes().first() {
            Some(b'[') => serde_json::from_str::<Width>(text).map(|Width(width)| Shape::Array(width)),
            Some(b'{') => serde_json::from_str::<Keys>(text).map(|Keys(keys)| Shape::Object(keys)),
            _ => return Shape::Other,
        };
        read.unwrap_or(Shape::Other)
    }
}

/// How many values an array holds.
struct Width(usize);

impl<'de> Deserialize<'de> for Width {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Width, D::Error> {
        struct WidthVisitor;

        impl<'de> Visitor<'de> for WidthVisitor {
            type Value = Width;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Width, A::Error> {
                let mut width = 0;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    width += 1;
                }
                Ok(Width(width))
            }
        }

        deserializer.deserialize_seq(WidthVisitor)
    }
}

/// The keys of an object, in order.
struct Keys(Vec<String>);

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Keys, D::Error> {
        struct KeysVisitor;

        impl<'de> Visitor<'de> for KeysVisitor {
            type Value = Keys;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(Keys(keys))
            }
        }

        deserializer.deserialize_map(KeysVisitor)
    }
}
