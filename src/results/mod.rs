//! SQL tool results. The service sends two shapes (`schema` + rows as arrays,
//! or rows as objects + `annotation`) and two input keys (`sqlQuery`,
//! `query`); both become one [`SqlResult`] with columns and rows in column
//! order, so renderers never see the difference. Its rows stay in the
//! result's text until an output reads them ([`rows`]).

mod pick;
mod rows;
mod sinks;

pub use pick::{Pick, Picker};
pub use rows::{lone_surrogates_replaced, Rows, ToolResult};
use sinks::Gathered;
pub use sinks::{Collected, RowSink, RowSource};

use std::sync::{Arc, OnceLock};

use anyhow::Result;
use indexmap::IndexSet;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Number, Value};

use crate::error::{kind_of, Fault, Kind};

/// A column of a SQL result (serialized as `{"name", "type"}`, the type as
/// the service sent it).
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// The member name, e.g. `orders_view.revenue`.
    pub name: String,
    /// The type's name, which types the values: as the service named it
    /// (`String`, `Double`, `Int64`, `number`, …), or the key of a type it
    /// sent as an object (`{"Date": false}` is `Date`; `List` and unknown
    /// types keep their values as text).
    pub column_type: String,
    /// The type as sent when it was not a plain string (`{"Date": false}`,
    /// `{"List": {…}}`): what `-o json` shows.
    pub sent_type: Option<Value>,
}

impl Serialize for Column {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("name", &self.name)?;
        match &self.sent_type {
            Some(sent) => map.serialize_entry("type", sent)?,
            None => map.serialize_entry("type", &self.column_type)?,
        }
        map.end()
    }
}

impl Column {
    /// A column named `name` of the type `type_name`.
    pub fn new(name: impl Into<String>, type_name: impl Into<String>) -> Column {
        Column {
            name: name.into(),
            column_type: type_name.into(),
            sent_type: None,
        }
    }

    /// A column named `name` whose type the service sent as `sent`: a
    /// string, an object (`{"Date": false}`, `{"List": {…}}`: its key names
    /// the type), or nothing (`String`). Any JSON value is accepted.
    pub fn from_sent(name: impl Into<String>, sent: Option<&Value>) -> Column {
        match sent {
            None | Some(Value::Null) => Column::new(name, "String"),
            Some(Value::String(type_name)) => Column::new(name, type_name.as_str()),
            Some(other) => Column {
                name: name.into(),
                column_type: other
                    .as_object()
                    .and_then(|object| object.keys().next().cloned())
                    .unwrap_or_else(|| "unknown".to_string()),
                sent_type: Some(other.clone()),
            },
        }
    }

    /// True for numeric column types, whose values become JSON numbers.
    /// (Called for every cell: compares without allocating.)
    pub fn is_numeric(&self) -> bool {
        let t = self.column_type.as_bytes();
        [
            "int", "uint", "float", "double", "decimal", "numeric", "number", "bigint", "real", "smallint", "tinyint",
        ]
        .iter()
        .any(|prefix| {
            t.get(..prefix.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(prefix.as_bytes()))
        })
    }

    /// True for boolean column types, whose values become JSON booleans.
    pub fn is_boolean(&self) -> bool {
        ["boolean", "bool"]
            .iter()
            .any(|name| self.column_type.eq_ignore_ascii_case(name))
    }

    /// `value` typed for this column: numbers for numeric columns, booleans
    /// for boolean ones, anything else (or anything that does not parse)
    /// exactly as the service sent it, borrowed.
    pub fn typed<'a>(&self, value: &'a Value) -> Typed<'a> {
        match value {
            Value::String(text) if self.is_numeric() => parse_number(text).map_or(Typed::AsSent(value), Typed::Number),
            Value::String(text) if self.is_boolean() => match text.to_ascii_lowercase().as_str() {
                "true" => Typed::Bool(true),
                "false" => Typed::Bool(false),
                _ => Typed::AsSent(value),
            },
            _ => Typed::AsSent(value),
        }
    }
}

/// A cell typed for its column (see [`Column::typed`]), borrowing the value
/// when it stays as the service sent it; serializes as that JSON value.
#[derive(Debug, PartialEq)]
pub enum Typed<'a> {
    /// A numeric column's value, parsed.
    Number(Number),
    /// A boolean column's value, parsed.
    Bool(bool),
    /// Anything else, as sent.
    AsSent(&'a Value),
}

impl Serialize for Typed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Typed::Number(number) => number.serialize(serializer),
            Typed::Bool(flag) => serializer.serialize_bool(*flag),
            Typed::AsSent(value) => value.serialize(serializer),
        }
    }
}

/// A numeric column's text as a number: every digit kept when it is a JSON
/// number (`12345678901234.56789` stays so), else as Rust reads it (`0012`,
/// `+5`); `None` when it is no number at all.
fn parse_number(text: &str) -> Option<Number> {
    let text = text.trim();
    if let Ok(n) = text.parse::<Number>() {
        return Some(n);
    }
    if let Ok(n) = text.parse::<i64>() {
        return Some(n.into());
    }
    if let Ok(n) = text.parse::<u64>() {
        return Some(n.into());
    }
    text.parse::<f64>().ok().and_then(Number::from_f64)
}

/// The columns and rows of a SQL result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// The rows, as the service sent them (read them in column order with
    /// [`Rows::iter`]).
    pub rows: Rows,
}

impl Table {
    /// The table of a tool result: its rows where they are in its text,
    /// and the columns of its schema (or of its rows' shapes).
    fn read(result: &ToolResult) -> Table {
        let (rows, shapes) = Rows::of(result);
        Table {
            columns: columns(result, &shapes),
            rows,
        }
    }
}

/// The tool name of a result taken from a table of the final answer.
pub const ANSWER_TABLE: &str = "answer";

/// One SQL tool call's result. Its table is read from the result's text
/// when an output first asks for it ([`SqlResult::table`]): most results
/// of a stream are never read row by row.
#[derive(Clone, Debug)]
pub struct SqlResult {
    /// The tool call's message id.
    pub id: String,
    /// The tool name (`semanticSqlApi`, `cubeSqlApi`, …).
    pub tool: String,
    /// `queryTitle`.
    pub title: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// The SQL (`sqlQuery` or `query`).
    pub sql: Option<String>,
    /// `totalRows`: how many rows the whole result has.
    pub total_rows: Option<u64>,
    /// `totalRows` as sent when it is no count of rows (`1e999`, `12.5`,
    /// `"many"`): how many rows there are is unknown.
    pub unreadable_total: Option<String>,
    /// `uuid` of the result.
    pub uuid: Option<String>,
    /// The Vega-Lite spec, parsed from its JSON string.
    pub vega_spec: Option<Value>,
    /// The tool's `error`, when the query failed.
    pub error: Option<String>,
    /// The tool result the table is read from, until it is given whole.
    text: Option<ToolResult>,
    /// The table, once read (or given).
    table: OnceLock<Table>,
}

impl PartialEq for SqlResult {
    fn eq(&self, other: &SqlResult) -> bool {
        (&self.id, &self.tool, &self.title, &self.description, &self.sql)
            == (&other.id, &other.tool, &other.title, &other.description, &other.sql)
            && (
                self.total_rows,
                &self.unreadable_total,
                &self.uuid,
                &self.vega_spec,
                &self.error,
            ) == (
                other.total_rows,
                &other.unreadable_total,
                &other.uuid,
                &other.vega_spec,
                &other.error,
            )
            && self.table() == other.table()
    }
}

/// The keys of a tool call's input a SQL result is read from (see
/// [`SqlResult::from_tool_call`]).
pub const SQL_INPUT_KEYS: [&str; 5] = ["sqlQuery", "query", "queryTitle", "description", "vegaSpec"];

/// The tool names of the SQL tool in both spellings, and the one that also
/// charts.
const SQL_TOOLS: [&str; 3] = ["semanticSqlApi", "cubeSqlApi", "cubeSqlApiWithChart"];

/// True when a finished tool call is a SQL query: by name, or (for names we
/// do not know yet) by the shape of its result.
pub fn is_sql_call(name: &str, result: &ToolResult) -> bool {
    if SQL_TOOLS.contains(&name) {
        return true;
    }
    result.raw("data").is_some_and(|data| data.starts_with('['))
        && ["schema", "sqlQuery", "annotation"]
            .iter()
            .any(|key| result.raw(key).is_some())
}

/// True when `called` is `expected`, or its counterpart in the other
/// spelling of the tools (`semanticSqlApi` ≡ `cubeSqlApi`, `semanticMeta` ≡
/// `cubeMeta`).
pub fn same_tool(called: &str, expected: &str) -> bool {
    let family_free = |name: &str| {
        name.strip_prefix("semantic")
            .or_else(|| name.strip_prefix("cube"))
            .map(str::to_ascii_lowercase)
    };
    called == expected || matches!((family_free(called), family_free(expected)), (Some(a), Some(b)) if a == b)
}

/// The `error` string of a tool result, when it has one, with a repeated
/// `Error: ` prefix (errors the service wrapped twice) said once.
pub fn tool_error(result: &ToolResult) -> Option<String> {
    match result.field("error")? {
        Value::Null => None,
        Value::String(text) => {
            let mut text = text.as_str();
            while let Some(inner) = text
                .strip_prefix("Error: ")
                .filter(|inner| inner.starts_with("Error: "))
            {
                text = inner;
            }
            Some(text.to_string())
        }
        other => Some(other.to_string()),
    }
}

impl SqlResult {
    /// Builds the result of the SQL tool call `id` from its parsed input and
    /// its result (whose rows stay in its text).
    pub fn from_tool_call(id: &str, tool: &str, input: &Value, result: &ToolResult) -> SqlResult {
        let text = |value: Option<Value>| value.and_then(|value| value.as_str().map(str::to_string));
        let from_input = |key: &str| text(input.get(key).cloned());
        let vega_spec = result
            .field("vegaSpec")
            .or_else(|| input.get("vegaSpec").cloned())
            .and_then(|spec| match spec {
                Value::String(text) if text.trim().is_empty() => None,
                Value::String(text) => Some(serde_json::from_str(&text).unwrap_or(Value::String(text))),
                Value::Null => None,
                other => Some(other),
            });
        let total = result.raw("totalRows").filter(|&raw| raw != "null").map(row_count);
        SqlResult {
            id: id.to_string(),
            tool: tool.to_string(),
            title: text(result.field("queryTitle")).or_else(|| from_input("queryTitle")),
            description: text(result.field("description")).or_else(|| from_input("description")),
            sql: ["sqlQuery", "query"]
                .iter()
                .find_map(|key| from_input(key))
                .or_else(|| ["sqlQuery", "query"].iter().find_map(|key| text(result.field(key)))),
            total_rows: total.as_ref().and_then(|total| total.as_ref().ok().copied()),
            unreadable_total: total.and_then(Result::err),
            uuid: text(result.field("uuid")),
            vega_spec,
            // A SQL tool whose result is not an object gave no table: its
            // text is the error.
            error: tool_error(result).or_else(|| match result.is_object() {
                true => None,
                false => Some(match result.value() {
                    Value::String(text) => text,
                    other => format!("the result is not a table: {other}"),
                }),
            }),
            text: Some(result.clone()),
            table: OnceLock::new(),
        }
    }

    /// Table `number` (from 1) of a final answer, with `header` and
    /// `rows`, as the result of a turn that ran no SQL (an agent that puts
    /// its results inline): every cell text, its tool [`ANSWER_TABLE`].
    pub fn from_answer_table(number: usize, header: &[String], rows: &[Vec<String>]) -> SqlResult {
        let schema: Vec<Value> = header
            .iter()
            .map(|name| serde_json::json!({"name": name, "column_type": "String"}))
            .collect();
        let text = serde_json::json!({ "schema": schema, "data": rows }).to_string();
        let mut result = SqlResult::from_tool_call(
            &format!("answer-table-{number}"),
            ANSWER_TABLE,
            &Value::Null,
            &ToolResult::new(text),
        );
        result.title = Some(format!("table {number} of the answer"));
        result
    }

    /// True for a table taken from the final answer, not a SQL result.
    pub fn is_from_answer(&self) -> bool {
        self.tool == ANSWER_TABLE
    }

    /// A result of `tool` (call `id`) whose table is `table`, with nothing
    /// else known of it yet.
    pub fn new(id: &str, tool: &str, table: Table) -> SqlResult {
        SqlResult {
            id: id.to_string(),
            tool: tool.to_string(),
            title: None,
            description: None,
            sql: None,
            total_rows: None,
            unreadable_total: None,
            uuid: None,
            vega_spec: None,
            error: None,
            text: None,
            table: OnceLock::from(table),
        }
    }

    /// The columns and rows, read from the result's text the first time.
    pub fn table(&self) -> &Table {
        self.table
            .get_or_init(|| self.text.as_ref().map(Table::read).unwrap_or_default())
    }

    /// The table, to change it.
    #[allow(
        clippy::expect_used,
        reason = "cannot fail: `table()` just set it, and `&mut self` keeps it set"
    )]
    pub fn table_mut(&mut self) -> &mut Table {
        self.table();
        self.table.get_mut().expect("the table was read just now")
    }

    /// The columns, in order.
    pub fn columns(&self) -> &[Column] {
        &self.table().columns
    }

    /// The rows returned.
    pub fn rows(&self) -> &Rows {
        &self.table().rows
    }

    /// Each row's values, in column order.
    pub fn row_values(&self) -> impl Iterator<Item = Vec<Value>> + '_ {
        let table = self.table();
        table.rows.iter(&table.columns)
    }

    /// Each row's values in column order, each the JSON text the service
    /// sent (see [`Rows::raw`]).
    pub fn raw_rows(&self) -> impl Iterator<Item = Vec<&RawValue>> + '_ {
        let table = self.table();
        table.rows.raw(&table.columns)
    }

    /// True when `totalRows` says there are more rows than were returned.
    pub fn is_truncated(&self) -> bool {
        self.total_rows.is_some_and(|total| total > self.rows().len() as u64)
    }

    /// True when rows may be missing from the stream: the result is
    /// truncated, or its `totalRows` is no count of rows. `--all-rows`
    /// fetches such a result whole.
    pub fn may_lack_rows(&self) -> bool {
        self.is_truncated() || self.unreadable_total.is_some()
    }

    /// The rows as objects keyed by column name (names are unique: see
    /// [`unique_names`]), values typed by column type; serialized straight
    /// from the result without building a map per row.
    pub fn typed_rows(&self) -> TypedRows<'_> {
        TypedRows { result: self }
    }
}

/// The typed rows of a result, serializable without copying them (see
/// [`SqlResult::typed_rows`]).
#[derive(Clone, Copy, Debug)]
pub struct TypedRows<'a> {
    result: &'a SqlResult,
}

impl Serialize for TypedRows<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let columns = self.result.columns();
        serializer.collect_seq(self.result.raw_rows().map(|row| TypedRow { columns, row }))
    }
}

/// One row of [`TypedRows`]: a value that needs no typing is written as
/// the service sent it (`1e999` stays `1e999`).
struct TypedRow<'a> {
    columns: &'a [Column],
    row: Vec<&'a RawValue>,
}

impl Serialize for TypedRow<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.columns.len()))?;
        for (column, raw) in self.columns.iter().zip(&self.row) {
            let typed_here = raw.get().starts_with('"') && (column.is_numeric() || column.is_boolean());
            match typed_here
                .then(|| serde_json::from_str::<Value>(raw.get()).ok())
                .flatten()
            {
                Some(value) => map.serialize_entry(&column.name, &column.typed(&value))?,
                None => map.serialize_entry(&column.name, raw)?,
            }
        }
        map.end()
    }
}

/// The columns of either result shape: the `schema`, else the keys of
/// object rows (typed by the `annotation`), else `column1…` for array
/// rows; and a column of its own for every cell beyond them, so no value
/// vanishes. Names are made unique.
fn columns(result: &ToolResult, shapes: &rows::Shapes) -> Vec<Column> {
    let mut columns: Vec<Column> = result
        .field("schema")
        .as_ref()
        .and_then(Value::as_array)
        .map(|schema| {
            schema
                .iter()
                .filter_map(|column| {
                    Some(Column::from_sent(
                        column.get("name")?.as_str()?,
                        column
                            .get("column_type")
                            .or_else(|| column.get("columnType"))
                            .or_else(|| column.get("type")),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    if columns.is_empty() {
        columns = columns_from_objects(&shapes.keys, result.field("annotation").as_ref());
    }
    for i in columns.len()..shapes.widest {
        columns.push(Column::new(format!("column{}", i + 1), "String"));
    }
    unique_names(&mut columns);
    columns
}

/// Makes column names unique (`a`, `a_2`, `a_3`), so that no column hides
/// another where rows are keyed by name.
pub fn unique_names(columns: &mut [Column]) {
    for i in 1..columns.len() {
        let taken = |name: &str, columns: &[Column]| columns[..i].iter().any(|c| c.name == name);
        if !taken(&columns[i].name, columns) {
            continue;
        }
        let base = columns[i].name.clone();
        // Among i + 1 suffixes one is free: the i columns before take at
        // most i names.
        let name = (2..=i + 2)
            .map(|n| format!("{base}_{n}"))
            .find(|name| !taken(name, columns))
            .unwrap_or_else(|| format!("{base}_{}", i + 2));
        columns[i].name = name;
    }
}

/// Columns of the object shape: keys in order of first appearance, typed by
/// the `annotation` (measures, dimensions, time dimensions); from the
/// annotation alone when there are no rows.
fn columns_from_objects(keys: &IndexSet<String>, annotation: Option<&Value>) -> Vec<Column> {
    let annotated = |name: &str| -> Option<String> {
        let annotation = annotation?;
        ["measures", "dimensions", "timeDimensions", "segments"]
            .iter()
            .find_map(|group| {
                annotation
                    .get(group)?
                    .get(name)?
                    .get("type")?
                    .as_str()
                    .map(str::to_string)
            })
    };
    let mut names: Vec<String> = keys.iter().cloned().collect();
    if names.is_empty() {
        if let Some(annotation) = annotation {
            for group in ["dimensions", "timeDimensions", "measures"] {
                if let Some(members) = annotation.get(group).and_then(Value::as_object) {
                    names.extend(members.keys().cloned());
                }
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let column_type = annotated(&name).unwrap_or_else(|| "string".into());
            Column::new(name, column_type)
        })
        .collect()
}

impl SqlResult {
    /// Every row of this (truncated) result's query, from `source` into
    /// `sink`: the one way a truncated result is made whole. `Err` with
    /// [`Kind::Partial`] when fewer came than `totalRows` says.
    pub fn fetch_all(&self, source: &dyn RowSource, sink: &mut dyn RowSink) -> Result<()> {
        let got = source.fetch(self.sql_to_fetch()?, self.total_rows, sink)?;
        match shortfall(self.total_rows, got) {
            Some(why) => Err(Fault::new(Kind::Partial, why).into()),
            None => Ok(()),
        }
    }

    /// Replaces the rows of a truncated result with every row of its query
    /// ([`SqlResult::fetch_all`]); the rows that came are kept also when
    /// they are fewer than `totalRows` says.
    pub fn complete(&mut self, source: &dyn RowSource) -> Result<()> {
        let mut gathered = Gathered::default();
        let fetched = self.fetch_all(source, &mut gathered);
        if fetched.as_ref().is_err_and(|err| kind_of(err) != Kind::Partial) {
            return fetched;
        }
        *self.table_mut() = Table {
            columns: gathered.columns,
            rows: Rows::new(Arc::new(gathered.text), gathered.starts),
        };
        fetched
    }

    /// The SQL that fetches every row of this result.
    pub fn sql_to_fetch(&self) -> Result<&str, Fault> {
        self.sql.as_deref().ok_or_else(|| {
            Fault::new(
                Kind::BadStream,
                "a truncated SQL result carries no SQL to fetch its rows with",
            )
        })
    }
}

/// `totalRows` (its JSON text) as a count of rows: a whole number, also
/// written as a string (`"250"`) or with a fraction or exponent of zero
/// (`250.0`, `2.5e2`); else the text as sent.
fn row_count(raw: &str) -> Result<u64, String> {
    let number = match serde_json::from_str::<Value>(raw) {
        Ok(Value::String(text)) => text.trim().parse::<Value>().ok(),
        other => other.ok(),
    };
    let whole = number.as_ref().and_then(|n| {
        n.as_u64().or_else(|| {
            let n = n.as_f64().filter(|n| n.is_finite() && n.fract() == 0.0 && *n >= 0.0)?;
            (n <= 2f64.powi(53)).then_some(n as u64)
        })
    });
    whole.ok_or_else(|| raw.to_string())
}

/// Why fewer rows came than `totalRows` says, when they did.
pub fn shortfall(expected: Option<u64>, got: u64) -> Option<String> {
    let total = expected.filter(|&total| got < total)?;
    Some(format!(
        "got {got} of {total} rows: the data query API answers at most 50,000 rows at a time (a server setting), and the rest did not come"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A tool result as the service would send `value`.
    fn sent(value: Value) -> ToolResult {
        ToolResult::new(value.to_string())
    }

    /// Every row of `result`, in column order.
    fn rows(result: &SqlResult) -> Vec<Vec<Value>> {
        result.row_values().collect()
    }

    #[test]
    fn typed_rows_are_keyed_by_column_and_typed() {
        let result = json!({
            "schema": [{"name": "a", "column_type": "Int64"}, {"name": "b", "column_type": "boolean"},
                {"name": "a", "column_type": "String"}],
            "data": [["1", "TRUE", "x"], ["2"], ["3", "no", "z", "extra"], []]
        });
        let sql = SqlResult::from_tool_call("t1", "semanticSqlApi", &json!({}), &sent(result));
        let view = serde_json::to_string(&sql.typed_rows()).unwrap();
        // A duplicate name gets a suffix and a cell beyond the schema a
        // column of its own: no value hides another or vanishes.
        assert_eq!(
            view,
            r#"[{"a":1,"b":true,"a_2":"x","column4":null},{"a":2,"b":null,"a_2":null,"column4":null},{"a":3,"b":"no","a_2":"z","column4":"extra"},{"a":null,"b":null,"a_2":null,"column4":null}]"#
        );
    }

    #[test]
    fn both_shapes_give_the_same_table() {
        let arrays = json!({
            "sqlQuery": "SELECT 1", "queryTitle": "Revenue",
            "schema": [{"name": "orders.month", "column_type": "String"}, {"name": "orders.revenue", "column_type": "Double"}],
            "data": [["2024-01", "1800000"], ["2024-02", "1650000.5"]], "totalRows": 2
        });
        let objects = json!({
            "queryTitle": "Revenue",
            "data": [{"orders.month": "2024-01", "orders.revenue": "1800000"}, {"orders.month": "2024-02", "orders.revenue": "1650000.5"}],
            "annotation": {"measures": {"orders.revenue": {"title": "Revenue", "type": "number"}},
                           "dimensions": {"orders.month": {"title": "Month", "type": "string"}}},
            "totalRows": 2
        });
        let a = SqlResult::from_tool_call("t1", "semanticSqlApi", &json!({"sqlQuery": "SELECT 1"}), &sent(arrays));
        let b = SqlResult::from_tool_call("t1", "cubeSqlApi", &json!({"query": "SELECT 1"}), &sent(objects));
        assert_eq!(rows(&a), rows(&b));
        assert_eq!(a.rows().len(), 2);
        assert_eq!(a.sql.as_deref(), Some("SELECT 1"));
        assert_eq!(b.sql.as_deref(), Some("SELECT 1"));
        let typed_a = serde_json::to_value(a.typed_rows()).unwrap();
        let typed_b = serde_json::to_value(b.typed_rows()).unwrap();
        assert_eq!(typed_a, typed_b);
        assert_eq!(typed_a[0]["orders.revenue"], json!(1800000));
        assert_eq!(typed_a[1]["orders.revenue"], json!(1650000.5));
        assert_eq!(typed_a[0]["orders.month"], json!("2024-01"));
    }

    #[test]
    fn rows_stay_in_the_text_until_read_and_read_the_same() {
        let result = sent(json!({"schema": [{"name": "k", "column_type": "String"}],
            "data": [["a"], [1e2], {"k": "c"}, "lone", null, []]}));
        let sql = SqlResult::from_tool_call("t", "cubeSqlApi", &json!({}), &result);
        assert_eq!(
            rows(&sql),
            [
                json!(["a"]),
                json!([1e2]),
                json!(["c"]),
                json!(["lone"]),
                json!([null]),
                json!([null])
            ]
            .map(|row| row.as_array().unwrap().clone())
        );
    }

    #[test]
    fn raw_rows_are_the_text_as_sent() {
        let text = r#"{"schema": [{"name": "k", "column_type": "Double"}, {"name": "j", "column_type": "Int64"}],
            "data": [[1e999, 2E5], {"j": 1.50, "k": -0.0, "j": 7}, "lone"]}"#;
        let sql = SqlResult::from_tool_call("t", "cubeSqlApi", &json!({}), &ToolResult::new(text.to_string()));
        let raw: Vec<Vec<&str>> = sql
            .raw_rows()
            .map(|row| row.iter().map(|v| v.get()).collect())
            .collect();
        assert_eq!(raw, [["1e999", "2E5"], ["-0.0", "7"], ["\"lone\"", "null"]]);
    }

    #[test]
    fn values_that_are_not_numbers_stay_as_sent() {
        let column = Column::new("n", "Int64");
        let typed = |column: &Column, value: Value| serde_json::to_value(column.typed(&value)).unwrap();
        assert_eq!(typed(&column, json!("245")), json!(245));
        assert_eq!(typed(&column, json!("n/a")), json!("n/a"));
        assert_eq!(typed(&column, Value::Null), Value::Null);
        let flag = Column::new("b", "boolean");
        assert_eq!(typed(&flag, json!("true")), json!(true));
    }

    #[test]
    fn sql_calls_are_recognised_by_name_or_shape() {
        assert!(is_sql_call("cubeSqlApi", &sent(json!({"error": "x"}))));
        assert!(is_sql_call(
            "someNewSqlTool",
            &sent(json!({"sqlQuery": "x", "data": []}))
        ));
        assert!(!is_sql_call("semanticMeta", &sent(json!({"cubes": []}))));
        assert!(!is_sql_call(
            "someNewSqlTool",
            &sent(json!({"sqlQuery": "x", "data": 1}))
        ));
    }

    #[test]
    fn a_doubly_wrapped_tool_error_is_said_once() {
        let error = |text: &str| tool_error(&sent(json!({ "error": text })));
        assert_eq!(
            error("Error: Error: Unable to fetch Cloud context").as_deref(),
            Some("Error: Unable to fetch Cloud context")
        );
        assert_eq!(error("Error: Bad branch").as_deref(), Some("Error: Bad branch"));
        assert!(is_sql_call("cubeSqlApiWithChart", &sent(json!({}))));
    }

    #[test]
    fn tool_families_match_their_counterparts() {
        assert!(same_tool("cubeSqlApi", "semanticSqlApi"));
        assert!(same_tool("semanticMeta", "cubeMeta"));
        assert!(!same_tool("semanticMeta", "cubeSqlApi"));
        assert!(same_tool("otherTool", "otherTool"));
        assert!(!same_tool("otherTool", "semanticMeta"));
    }
}
