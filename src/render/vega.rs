//! `-o vega`: the result's Vega-Lite v5 spec with its rows merged in as
//! `data.values` (typed as in `json`), ready for any renderer; `-o svg`: that
//! spec drawn by the real Vega ([`draw`](super::draw)).
//!
//! Member names such as `orders_view.revenue` contain dots, which Vega-Lite
//! reads as nested paths. Field references to such columns are escaped
//! (`orders_view\.revenue`) and expressions use `datum['orders_view.revenue']`,
//! so the chart draws the flat rows the service returned.

use std::sync::LazyLock;

use anyhow::Result;
use regex::Regex;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use super::draw;
use super::Truncation;
use crate::error::{fail, Kind};
use crate::output::{Notes, Output};
use crate::results::{Pick, Picker, SqlResult, TypedRows};
use crate::stream::transcript::{Event, Transcript};
use crate::stream::turn::Observer;
use crate::text::{literal_regex, shorten_to};
use crate::themes::merge;

const SCHEMA: &str = "https://vega.github.io/schema/vega-lite/v5.json";

/// Keys whose string values (or arrays of strings) name fields.
const FIELD_KEYS: [&str; 6] = ["field", "groupby", "fields", "fold", "pivot", "key"];
/// Keys whose string values are Vega expressions over `datum`.
const EXPRESSION_KEYS: [&str; 4] = ["calculate", "filter", "expr", "test"];

/// What a chart output writes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ChartFormat {
    /// The Vega-Lite spec with its data (`-o vega`).
    Spec,
    /// The chart drawn, as SVG (`-o svg`).
    Svg,
    /// The chart drawn, as a PNG at so many pixels per SVG pixel (`-o png`).
    Png(f32),
}

/// The `vega`, `svg` and `png` outputs.
pub struct Vega {
    pick: Pick,
    picker: Picker,
    notes: Notes,
    format: ChartFormat,
    config: Option<Map<String, Value>>,
}

impl Vega {
    /// The chart of the result `pick` selects, written as `format`, with
    /// `config` (`--vega-config`) merged into its own; how its fields were
    /// matched to the columns is told through `notes`.
    pub fn new(pick: Pick, notes: &Notes, format: ChartFormat, config: Option<Map<String, Value>>) -> Self {
        Vega {
            pick,
            picker: Picker::new(pick),
            notes: notes.clone(),
            format,
            config,
        }
    }
}

impl Vega {
    /// Keeps the result its pick selects.
    pub fn event(&mut self, event: &Event) {
        self.picker.event(event);
    }

    /// Writes the chart spec of the picked result with its data (with
    /// `--all-rows`, every row of a truncated one), or fails with
    /// [`Kind::NothingToRender`] when there is no chart that draws.
    pub fn end(&mut self, transcript: &Transcript, truncation: &Truncation, out: &mut dyn Output) -> Result<()> {
        let which = self.pick.describe();
        let result = complete_picked(&mut self.picker, &which, transcript, truncation)?;
        let spec = configured_chart(result, &which, self.config.as_ref(), &self.notes)?;
        match self.format {
            ChartFormat::Spec => {
                serde_json::to_writer_pretty(&mut *out, &spec)?;
                out.write_all(b"\n")?;
            }
            ChartFormat::Svg => {
                out.write_all(spec.svg(&self.notes)?.as_bytes())?;
                out.write_all(b"\n")?;
            }
            ChartFormat::Png(scale) => out.write_all(&draw::png(&spec.svg(&self.notes)?, scale)?)?,
        }
        Ok(())
    }
}

/// The result `picker` selected (`which`, in messages) from the turn of
/// `transcript`, completed with every row when `--all-rows` fetched them;
/// a result still truncated is a [`Kind::Partial`] failure unless
/// accepted, before anything is drawn.
pub fn complete_picked<'a>(
    picker: &'a mut Picker,
    which: &str,
    transcript: &Transcript,
    truncation: &Truncation,
) -> Result<&'a mut SqlResult> {
    let result = super::picked(picker, transcript)?;
    if let Some(source) = truncation.every_row.as_ref().filter(|_| result.may_lack_rows()) {
        result.complete(source)?;
    }
    if let Some(total) = result.total_rows.filter(|_| result.is_truncated()) {
        truncation.accept(which, result.rows().len(), total)?;
    }
    Ok(result)
}

/// The chart of `result` (see [`chart`]) with `config` (`--vega-config`)
/// merged into its own; how its fields were matched is told through
/// `notes`.
pub fn configured_chart<'a>(
    result: &'a SqlResult,
    which: &str,
    config: Option<&Map<String, Value>>,
    notes: &Notes,
) -> Result<Chart<'a>> {
    let mut matched = Vec::new();
    let spec = chart(result, which, &mut matched);
    for note in &matched {
        notes.warn(note);
    }
    let mut spec = spec?;
    if let Some(config) = config {
        spec.configure(config);
    }
    Ok(spec)
}

/// The renderable spec: the agent's spec with its encoding fields matched to
/// the result's columns (each match that needed a guess is a line of
/// `notes`), field references escaped, the rows as `data.values` (in place
/// of any placeholder such as `{"name": "table"}`), and `$schema` when the
/// agent left it out. A chart that would draw nothing is
/// [`Kind::NothingToRender`].
pub fn chart<'a>(result: &'a SqlResult, which: &str, notes: &mut Vec<String>) -> Result<Chart<'a>> {
    let nothing = |why: String| fail(Kind::NothingToRender, why);
    let mut spec = match &result.vega_spec {
        Some(Value::Object(spec)) => spec.clone(),
        Some(_) => return Err(nothing(format!("the chart spec of {which} is not a JSON object"))),
        None if result.is_from_answer() => {
            return Err(nothing(
                "the stream has no SQL result and a table of the answer has no chart spec: nothing to draw; use -o csv or -o json for its rows"
                    .to_string(),
            ))
        }
        None => {
            return Err(nothing(format!(
                "{which} has no chart (no vegaSpec); use -o csv or -o json for its rows"
            )))
        }
    };
    if result.rows().is_empty() {
        return Err(nothing(format!("{which} has no rows: its chart would draw nothing")));
    }
    let columns: Vec<&str> = result.columns().iter().map(|c| c.name.as_str()).collect();
    let Matched {
        renames,
        unmatched,
        drawn,
    } = match_fields(&spec, &columns);
    if !drawn {
        return Err(nothing(format!(
            "the chart of {which} draws nothing: none of its fields ({}) names a column ({})",
            unmatched.join(", "),
            columns.join(", ")
        )));
    }
    for (field, column, how) in &renames {
        notes.push(format!(
            "the chart's field {field:?} is drawn from the column {column:?} ({how})"
        ));
    }
    for field in &unmatched {
        notes.push(format!(
            "the chart's field {field:?} names no column of {which}: that channel draws nothing"
        ));
    }
    if !renames.is_empty() {
        rename_fields(&mut spec, &renames);
    }
    let dotted: Vec<&str> = columns
        .iter()
        .copied()
        .filter(|name| name.contains(['.', '[', ']']))
        .collect();
    if !dotted.is_empty() {
        title_dotted_channels(&mut spec, &dotted);
        escape_fields(&mut spec, &dotted);
    }
    // Where the rows go; they are written when the chart is, one at a time.
    spec.insert("data".into(), Value::Null);
    if !spec.contains_key("$schema") {
        let mut with_schema = Map::new();
        with_schema.insert("$schema".into(), Value::String(SCHEMA.into()));
        with_schema.extend(spec);
        spec = with_schema;
    }
    Ok(Chart {
        spec,
        rows: result.typed_rows(),
    })
}

/// A renderable chart: the spec, and the rows it is written with as
/// `data.values` (read from the result as they are written, never held as
/// values all at once).
#[derive(Debug)]
pub struct Chart<'a> {
    spec: Map<String, Value>,
    rows: TypedRows<'a>,
}

impl Chart<'_> {
    /// The chart drawn by Vega, as SVG (see [`draw::svg`]), inert and
    /// offline: what would load something from elsewhere (an image mark,
    /// an `href` or `url`) is left out first, each with a note through
    /// `notes`, and the SVG holds no link.
    pub fn svg(&self, notes: &Notes) -> Result<String> {
        let mut spec = self.spec.clone();
        let mut left_out = Vec::new();
        if leave_out_external(&mut spec, &mut left_out) {
            return Err(fail(
                Kind::NothingToRender,
                "the chart is an image mark, which draws a picture from elsewhere: -o svg, -o png and -o html load nothing",
            ));
        }
        for what in &left_out {
            notes.warn(&format!(
                "the chart's {what} is left out: -o svg, -o png and -o html load nothing from elsewhere"
            ));
        }
        let offline = Chart { spec, rows: self.rows };
        let svg = draw::svg(&serde_json::to_string(&offline)?)?;
        let svg = LINKS.replace_all(&svg, "");
        // Whatever still points elsewhere through url(…) paints nothing.
        let svg = CSS_URLS.replace_all(&svg, |found: &regex::Captures<'_>| match found[1].starts_with('#') {
            true => found[0].to_string(),
            false => "none".to_string(),
        });
        Ok(svg.into_owned())
    }

    /// Merges `config` into the chart's own `config`; `config`'s values win.
    pub fn configure(&mut self, config: &Map<String, Value>) {
        let own = self.spec.entry("config").or_insert_with(|| Value::Object(Map::new()));
        match own {
            Value::Object(own) => merge(own, config),
            other => *other = Value::Object(config.clone()),
        }
    }
}

/// CSS's `url(…)` (in a fill, a stroke, a background, a style), its
/// target in the first group.
static CSS_URLS: LazyLock<Regex> = LazyLock::new(|| literal_regex(r#"(?i)url\(\s*['"]?\s*([^)'"\s]*)[^)]*\)"#));

/// True when `text` refers through `url(…)` to something elsewhere than
/// the document itself (`url(#gradient)` is its own).
fn loads_from_elsewhere(text: &str) -> bool {
    CSS_URLS.captures_iter(text).any(|found| !found[1].starts_with('#'))
}

/// A link or a reference to elsewhere in an SVG element.
static LINKS: LazyLock<Regex> = LazyLock::new(|| literal_regex(r#"\s(?:xlink:)?href="[^"]*""#));

/// Leaves out of a spec (or a view of it) what would load something from
/// elsewhere: image marks (a layer or a concatenated view that is one goes
/// whole; elsewhere it becomes null), `href` and `url` channels and fields.
/// Each thing left out is named in `left_out`. True when the view itself
/// is an image mark.
fn leave_out_external(view: &mut Map<String, Value>, left_out: &mut Vec<String>) -> bool {
    let mark = view.get("mark").map(|mark| mark.get("type").unwrap_or(mark));
    if mark.and_then(Value::as_str) == Some("image") {
        left_out.push("image mark".to_string());
        return true;
    }
    for key in ["href", "url"] {
        if view.remove(key).is_some() {
            left_out.push(format!("{key:?}"));
        }
    }
    // A fill, stroke, background or style that is a url(…) of elsewhere.
    view.retain(|key, value| match value {
        Value::String(text) if loads_from_elsewhere(text) => {
            left_out.push(format!("{key:?} {}", shorten_to(text, 80)));
            false
        }
        _ => true,
    });
    for child in view.values_mut() {
        if let Value::Array(items) = child {
            items.retain_mut(|item| !is_image_view(item, left_out));
            for item in items.iter_mut() {
                if item.as_str().is_some_and(loads_from_elsewhere) {
                    left_out.push(shorten_to(item.as_str().unwrap_or_default(), 80));
                    *item = Value::Null;
                }
            }
        } else if is_image_view(child, left_out) {
            *child = Value::Null;
        }
    }
    false
}

/// [`leave_out_external`] of `value` when it is a view.
fn is_image_view(value: &mut Value, left_out: &mut Vec<String>) -> bool {
    match value {
        Value::Object(view) => leave_out_external(view, left_out),
        _ => false,
    }
}

impl Serialize for Chart<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.spec.len()))?;
        for (key, value) in &self.spec {
            match key.as_str() {
                "data" => map.serialize_entry(key, &Data { values: &self.rows })?,
                _ => map.serialize_entry(key, value)?,
            }
        }
        map.end()
    }
}

/// `data` of a chart: `{"values": [rows]}`.
#[derive(Serialize)]
struct Data<'a, 'r> {
    values: &'a TypedRows<'r>,
}

/// How a field that names no column was matched to one.
type Rename = (String, String, &'static str);

/// How a spec's encoding fields met the result's columns.
struct Matched {
    /// Fields matched to a column they do not name.
    renames: Vec<Rename>,
    /// Fields left with no column.
    unmatched: Vec<String>,
    /// Whether any field draws a column (or the spec encodes no field).
    drawn: bool,
}

/// Matches each encoding field that names no column to the column whose
/// member name ends in it (`total_revenue` → `measure(sales.total_revenue)`),
/// else to the first column no field uses yet, by position.
fn match_fields(spec: &Map<String, Value>, columns: &[&str]) -> Matched {
    let mut fields = Vec::new();
    encoding_fields(spec, &mut fields);
    // Fields a transform makes (`calculate … as`, `fold … as`, …) are no
    // columns, and need none.
    let mut derived = Vec::new();
    derived_fields(spec, &mut derived);
    fields.retain(|field| !derived.contains(field));
    let mut used: Vec<&str> = fields.iter().copied().filter(|field| columns.contains(field)).collect();
    let (mut renames, mut unmatched) = (Vec::new(), Vec::new());
    for field in fields.iter().copied().filter(|field| !columns.contains(field)) {
        let by_name = columns
            .iter()
            .copied()
            .find(|column| !used.contains(column) && member_ends_in(column, field));
        let found = by_name.map(|column| (column, "by its member name")).or_else(|| {
            let by_position = columns.iter().copied().find(|column| !used.contains(column));
            by_position.map(|column| (column, "by position: no column has that name"))
        });
        let Some((column, how)) = found else {
            unmatched.push(field.to_string());
            continue;
        };
        used.push(column);
        renames.push((field.to_string(), column.to_string(), how));
    }
    let drawn = fields.is_empty() || unmatched.len() < fields.len();
    Matched {
        renames,
        unmatched,
        drawn,
    }
}

/// The `field` of every encoding channel of the spec (and of its layers),
/// in order.
fn encoding_fields<'a>(spec: &'a Map<String, Value>, fields: &mut Vec<&'a str>) {
    for (key, value) in spec {
        match value {
            Value::Object(channels) if key == "encoding" => {
                for channel in channels.values() {
                    let defs: Vec<&Value> = match channel {
                        Value::Array(items) => items.iter().collect(),
                        other => vec![other],
                    };
                    for field in defs.into_iter().filter_map(|def| def.get("field")?.as_str()) {
                        if !fields.contains(&field) {
                            fields.push(field);
                        }
                    }
                }
            }
            Value::Object(inner) => encoding_fields(inner, fields),
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_object)
                .for_each(|inner| encoding_fields(inner, fields)),
            _ => {}
        }
    }
}

/// The names every `as` of the spec gives a field a transform makes.
fn derived_fields<'a>(spec: &'a Map<String, Value>, names: &mut Vec<&'a str>) {
    for (key, value) in spec {
        match value {
            Value::String(name) if key == "as" => names.push(name),
            Value::Array(items) if key == "as" => names.extend(items.iter().filter_map(Value::as_str)),
            Value::Object(inner) => derived_fields(inner, names),
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_object)
                .for_each(|inner| derived_fields(inner, names)),
            _ => {}
        }
    }
}

/// True when the member name of `column` (inside `measure(…)` and the like)
/// is `field` or ends in `.field`.
fn member_ends_in(column: &str, field: &str) -> bool {
    let member = match (column.find('('), column.strip_suffix(')')) {
        (Some(open), Some(inner)) => &inner[open + 1..],
        _ => column,
    };
    member == field || member.strip_suffix(field).is_some_and(|rest| rest.ends_with('.'))
}

/// Renames every field reference of the spec as `renames` says.
fn rename_fields(spec: &mut Map<String, Value>, renames: &[Rename]) {
    each_reference(spec, &mut |reference, text| {
        let renamed = renames.iter().find(|(field, _, _)| field == text);
        if let (Reference::Field, Some((_, column, _))) = (reference, renamed) {
            *text = column.clone();
        }
    });
}

/// Escapes every reference of the spec to a column in `columns` (names with
/// dots or brackets), in field names and in expressions.
fn escape_fields(spec: &mut Map<String, Value>, columns: &[&str]) {
    each_reference(spec, &mut |reference, text| match reference {
        Reference::Field => escape_name(text, columns),
        Reference::Expression => escape_expression(text, columns),
    });
}

/// What a string of a spec refers to fields as.
#[derive(Clone, Copy)]
enum Reference {
    /// A field name (`field`, `groupby`, …, and `value` beside `pivot`).
    Field,
    /// A Vega expression over `datum` (`calculate`, `filter`, …).
    Expression,
}

/// Calls `edit` on every string of the spec that refers to fields, however
/// deep.
fn each_reference(map: &mut Map<String, Value>, edit: &mut dyn FnMut(Reference, &mut String)) {
    let is_pivot = map.contains_key("pivot");
    for (key, value) in map.iter_mut() {
        let names_field = FIELD_KEYS.contains(&key.as_str()) || (is_pivot && key == "value");
        match value {
            Value::String(text) if names_field => edit(Reference::Field, text),
            Value::String(text) if EXPRESSION_KEYS.contains(&key.as_str()) => edit(Reference::Expression, text),
            Value::Array(items) if names_field => {
                for item in items.iter_mut() {
                    match item {
                        Value::String(text) => edit(Reference::Field, text),
                        Value::Object(inner) => each_reference(inner, edit),
                        _ => {}
                    }
                }
            }
            Value::Object(inner) => each_reference(inner, edit),
            Value::Array(items) => {
                for inner in items.iter_mut().filter_map(Value::as_object_mut) {
                    each_reference(inner, edit);
                }
            }
            _ => {}
        }
    }
}

/// Gives every encoding channel on a dotted column a `title` (when it has
/// none), so the axis and legend show `orders.revenue`, not the escaped
/// `orders\.revenue` that Vega-Lite would derive.
fn title_dotted_channels(value: &mut Map<String, Value>, columns: &[&str]) {
    for (key, child) in value.iter_mut() {
        if key == "encoding" {
            if let Value::Object(channels) = child {
                for channel in channels.values_mut() {
                    let defs: Vec<&mut Value> = match channel {
                        Value::Array(items) => items.iter_mut().collect(),
                        other => vec![other],
                    };
                    for def in defs.into_iter().filter_map(Value::as_object_mut) {
                        let field = def.get("field").and_then(Value::as_str).filter(|f| columns.contains(f));
                        if let Some(field) = field.map(str::to_string) {
                            def.entry("title").or_insert(Value::String(field));
                        }
                    }
                }
            }
        }
        match child {
            Value::Object(inner) => title_dotted_channels(inner, columns),
            Value::Array(items) => items
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .for_each(|inner| title_dotted_channels(inner, columns)),
            _ => {}
        }
    }
}

fn escape_name(text: &mut String, columns: &[&str]) {
    if columns.contains(&text.as_str()) {
        let mut escaped = String::with_capacity(text.len() + 4);
        for c in text.chars() {
            if matches!(c, '.' | '[' | ']') {
                escaped.push('\\');
            }
            escaped.push(c);
        }
        *text = escaped;
    }
}

fn escape_expression(text: &mut String, columns: &[&str]) {
    let mut longest_first = columns.to_vec();
    longest_first.sort_by_key(|name| std::cmp::Reverse(name.len()));
    for name in longest_first {
        let dotted = format!("datum.{name}");
        if text.contains(&dotted) {
            *text = text.replace(&dotted, &format!("datum['{}']", name.replace('\'', "\\'")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::kind_of;
    use crate::results::{Column, Rows, Table};
    use serde_json::json;

    fn result(spec: Value) -> SqlResult {
        let table = Table {
            columns: vec![
                Column::new("orders.month", "String"),
                Column::new("orders.revenue", "Double"),
            ],
            rows: Rows::new(std::sync::Arc::new(r#"["2024-01", "10.5"]"#.to_string()), vec![0]),
        };
        let mut result = SqlResult::new("t", "semanticSqlApi", table);
        result.total_rows = Some(1);
        result.vega_spec = Some(spec);
        result
    }

    #[test]
    fn dotted_fields_are_escaped_and_rows_merged() {
        let spec = json!({
            "mark": "bar",
            "encoding": {
                "x": {"field": "orders.month", "type": "ordinal"},
                "y": {"field": "orders.revenue", "type": "quantitative"},
                "tooltip": [{"field": "orders.revenue"}, {"field": "nested.path"}]
            },
            "transform": [{"filter": "datum.orders.revenue > 0"}]
        });
        let chart = serde_json::to_value(chart(&result(spec), "1", &mut Vec::new()).unwrap()).unwrap();
        assert_eq!(chart["$schema"], SCHEMA);
        assert_eq!(chart["encoding"]["x"]["field"], "orders\\.month");
        assert_eq!(chart["encoding"]["tooltip"][0]["field"], "orders\\.revenue");
        assert_eq!(chart["encoding"]["x"]["title"], "orders.month", "readable title");
        assert_eq!(
            chart["encoding"]["tooltip"][1]["field"], "nested.path",
            "non-columns untouched"
        );
        assert_eq!(chart["transform"][0]["filter"], "datum['orders.revenue'] > 0");
        assert_eq!(chart["data"]["values"][0]["orders.revenue"], json!(10.5));
    }

    #[test]
    fn a_result_without_a_chart_is_an_error() {
        let mut r = result(json!({}));
        r.vega_spec = None;
        let err = chart(&r, "SQL result 2", &mut Vec::new()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "SQL result 2 has no chart (no vegaSpec); use -o csv or -o json for its rows"
        );
        assert_eq!(kind_of(&err), Kind::NothingToRender);
    }

    #[test]
    fn fields_that_name_no_column_are_matched_by_member_name_then_position() {
        let mut r = result(json!({}));
        r.table_mut().columns[0].name = "tracked_time_month".into();
        r.table_mut().columns[1].name = "measure(sales_view.total_revenue)".into();
        let spec = |x: &str, y: &str| {
            json!({"mark": "line", "data": {"name": "table"}, "encoding": {
                "x": {"field": x, "type": "temporal"},
                "y": {"field": y, "type": "quantitative"},
                "tooltip": [{"field": y}]}})
        };
        r.vega_spec = Some(spec("tracked_time_month", "total_revenue"));
        let mut notes = Vec::new();
        let drawn = serde_json::to_value(chart(&r, "the last SQL result", &mut notes).unwrap()).unwrap();
        assert_eq!(drawn["encoding"]["y"]["field"], "measure(sales_view\\.total_revenue)");
        assert_eq!(
            drawn["encoding"]["tooltip"][0]["field"],
            "measure(sales_view\\.total_revenue)"
        );
        assert_eq!(
            drawn["data"]["values"][0]["measure(sales_view.total_revenue)"],
            json!(10.5)
        );
        assert_eq!(
            notes,
            ["the chart's field \"total_revenue\" is drawn from the column \"measure(sales_view.total_revenue)\" (by its member name)"]
        );
        r.vega_spec = Some(spec("month", "revenue"));
        let mut notes = Vec::new();
        let drawn = serde_json::to_value(chart(&r, "the last SQL result", &mut notes).unwrap()).unwrap();
        assert_eq!(drawn["encoding"]["x"]["field"], "tracked_time_month");
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].ends_with("(by position: no column has that name)"));
        r.vega_spec = Some(json!({"mark": "bar", "encoding": {
            "x": {"field": "a"}, "y": {"field": "b"}, "color": {"field": "c"}}}));
        let mut notes = Vec::new();
        chart(&r, "the last SQL result", &mut notes).map(|_| ()).unwrap();
        assert!(notes[2].contains("\"c\" names no column"), "{notes:?}");
        r.vega_spec = Some(
            json!({"mark": "arc", "transform": [{"calculate": "'All'", "as": "metric"}],
            "encoding": {"theta": {"field": "tracked_time_month"}, "color": {"field": "metric"}}}),
        );
        let mut notes = Vec::new();
        let drawn = serde_json::to_value(chart(&r, "the last SQL result", &mut notes).unwrap()).unwrap();
        assert_eq!(drawn["encoding"]["color"]["field"], "metric", "made by a transform");
        assert!(notes.is_empty(), "{notes:?}");
        r.vega_spec = Some(json!({"mark": "bar", "encoding": {
            "x": {"field": "a"}, "y": {"field": "b"}, "color": {"field": "c"}}}));
        r.table_mut().columns.clear();
        let err = chart(&r, "the last SQL result", &mut Vec::new()).unwrap_err();
        assert_eq!(kind_of(&err), Kind::NothingToRender);
        assert!(
            err.to_string().contains("none of its fields (a, b, c) names a column"),
            "{err}"
        );
    }
}
