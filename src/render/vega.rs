//! `-o vega`: the result's Vega-Lite v5 spec with its rows merged in as
//! `data.values` (typed as in `json`), ready for any renderer.
//!
//! Member names such as `orders_view.revenue` contain dots, which Vega-Lite
//! reads as nested paths. Field references to such columns are escaped
//! (`orders_view\.revenue`) and expressions use `datum['orders_view.revenue']`,
//! so the chart draws the flat rows the service returned.

use std::io::Write;

use anyhow::Result;
use serde_json::{json, Map, Value};

use crate::error::{bad_stream, kind_of, Kind};
use crate::results::{Pick, Picker, SqlResult};
use crate::stream::transcript::{Event, Transcript};
use crate::stream::turn::{Ending, Renderer};

const SCHEMA: &str = "https://vega.github.io/schema/vega-lite/v5.json";

/// Keys whose string values (or arrays of strings) name fields.
const FIELD_KEYS: [&str; 6] = ["field", "groupby", "fields", "fold", "pivot", "key"];
/// Keys whose string values are Vega expressions over `datum`.
const EXPRESSION_KEYS: [&str; 4] = ["calculate", "filter", "expr", "test"];

/// The `vega` output.
pub struct Vega {
    pick: Pick,
    picker: Picker,
}

impl Vega {
    /// The chart of the result `pick` selects.
    pub fn new(pick: Pick) -> Self {
        Vega {
            pick,
            picker: Picker::new(pick),
        }
    }
}

impl Renderer for Vega {
    fn event(&mut self, event: &Event) {
        self.picker.event(event);
    }

    /// Writes the chart spec of the picked result with its data (with
    /// `--all-rows`, every row of a truncated one), or fails with a bad
    /// stream when the agent drew no chart for it.
    fn end(&mut self, _transcript: &Transcript, ending: &Ending<'_>, out: &mut dyn Write) -> Result<()> {
        if ending.failure.is_some() {
            return Ok(());
        }
        let result = self.picker.picked_mut()?;
        let mut partial = None;
        if let Some(source) = ending.all_rows.filter(|_| result.is_truncated()) {
            match result.complete(source) {
                Err(err) if kind_of(&err) == Kind::Partial => partial = Some(err),
                other => other?,
            }
        }
        let spec = chart(result, &self.pick.describe())?;
        serde_json::to_writer_pretty(&mut *out, &spec)?;
        out.write_all(b"\n")?;
        partial.map_or(Ok(()), Err)
    }
}

/// The renderable spec: the agent's spec, field references escaped, the rows
/// as `data.values`, and `$schema` when the agent left it out.
pub fn chart(result: &SqlResult, which: &str) -> Result<Value> {
    let mut spec = match &result.vega_spec {
        Some(Value::Object(spec)) => spec.clone(),
        Some(_) => return Err(bad_stream(format!("the chart spec of {which} is not a JSON object"))),
        None => {
            return Err(bad_stream(format!(
                "{which} has no chart (no vegaSpec); use -o csv or -o json for its rows"
            )))
        }
    };
    let dotted: Vec<&str> = result
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .filter(|name| name.contains(['.', '[', ']']))
        .collect();
    if !dotted.is_empty() {
        title_dotted_channels(&mut spec, &dotted);
        escape_fields(&mut spec, &dotted);
    }
    spec.insert("data".into(), json!({ "values": result.typed_rows() }));
    if !spec.contains_key("$schema") {
        let mut with_schema = Map::new();
        with_schema.insert("$schema".into(), Value::String(SCHEMA.into()));
        with_schema.extend(spec);
        spec = with_schema;
    }
    Ok(Value::Object(spec))
}

fn escape_fields(map: &mut Map<String, Value>, columns: &[&str]) {
    let is_pivot = map.contains_key("pivot");
    for (key, value) in map.iter_mut() {
        let names_field = FIELD_KEYS.contains(&key.as_str()) || (is_pivot && key == "value");
        match value {
            Value::String(text) if names_field => escape_name(text, columns),
            Value::String(text) if EXPRESSION_KEYS.contains(&key.as_str()) => escape_expression(text, columns),
            Value::Array(items) if names_field => {
                for item in items.iter_mut() {
                    match item {
                        Value::String(text) => escape_name(text, columns),
                        Value::Object(inner) => escape_fields(inner, columns),
                        _ => {}
                    }
                }
            }
            Value::Object(inner) => escape_fields(inner, columns),
            Value::Array(items) => {
                for item in items.iter_mut().filter_map(Value::as_object_mut) {
                    escape_fields(item, columns);
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
    use crate::results::Column;

    fn result(spec: Value) -> SqlResult {
        SqlResult {
            id: "t".into(),
            tool: "semanticSqlApi".into(),
            title: None,
            description: None,
            sql: None,
            columns: vec![
                Column {
                    name: "orders.month".into(),
                    column_type: "String".into(),
                },
                Column {
                    name: "orders.revenue".into(),
                    column_type: "Double".into(),
                },
            ],
            rows: vec![vec![json!("2024-01"), json!("10.5")]],
            total_rows: Some(1),
            uuid: None,
            vega_spec: Some(spec),
            error: None,
        }
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
        let chart = chart(&result(spec), "1").unwrap();
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
        assert_eq!(
            chart(&r, "SQL result 2").unwrap_err().to_string(),
            "SQL result 2 has no chart (no vegaSpec); use -o csv or -o json for its rows"
        );
    }
}
