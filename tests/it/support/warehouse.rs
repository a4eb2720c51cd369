//! The real data behind the emulated data query API: a SQLite database of
//! orders, made once per test process, queried with the SQL the client
//! sends, so tests compare `rows` output with what the query really returns.

#![allow(dead_code)]

use std::sync::{Mutex, OnceLock};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, Statement};
use serde_json::Value;

/// Orders in the warehouse.
pub const ORDERS: usize = 30_000;

/// Where the warehouse is: an in-memory database shared by the
/// connections of this test process, so no test run leaves a file behind.
const URI: &str = "file:analyst-warehouse?mode=memory&cache=shared";

/// The connection that keeps the in-memory warehouse alive (it lasts as
/// long as one connection is open), filled on first use.
fn keeper() -> &'static Mutex<Connection> {
    static KEEPER: OnceLock<Mutex<Connection>> = OnceLock::new();
    KEEPER.get_or_init(|| {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_URI;
        let mut db = Connection::open_with_flags(URI, flags).expect("create the warehouse");
        db.execute_batch(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, region TEXT NOT NULL,
                                  status TEXT NOT NULL, amount REAL NOT NULL, note TEXT);",
        )
        .unwrap();
        let regions = ["EMEA", "AMER", "APAC", "LATAM", "ANZ"];
        let statuses = ["completed", "shipped", "processing", "returned"];
        let tx = db.transaction().unwrap();
        {
            let mut insert = tx
                .prepare("INSERT INTO orders VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
                .unwrap();
            for i in 0..ORDERS {
                let day = i % 730;
                let date = format!(
                    "{}-{:02}-{:02}",
                    2023 + day / 365,
                    (day % 365) / 31 % 12 + 1,
                    day % 28 + 1
                );
                let amount = ((i * 7919) % 100_000) as f64 / 100.0 + 5.0;
                let note = match i % 9 {
                    0 => Some("gift, \"wrapped\"".to_string()),
                    4 => Some("two\nlines".to_string()),
                    _ => None,
                };
                insert
                    .execute(rusqlite::params![
                        i as i64 + 1,
                        date,
                        regions[i % 5],
                        statuses[i % 4],
                        amount,
                        note
                    ])
                    .unwrap();
            }
        }
        tx.commit().unwrap();
        Mutex::new(db)
    })
}

/// A read-only connection to the warehouse.
pub fn open() -> Connection {
    keeper();
    Connection::open_with_flags(URI, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI)
        .expect("open the warehouse")
}

/// The names and declared types of a statement's columns, read before it runs.
pub fn declared(statement: &Statement<'_>) -> Vec<(String, Option<String>)> {
    statement
        .columns()
        .map(|column| {
            (
                column.name().to_string(),
                column.decl_type().map(str::to_ascii_uppercase),
            )
        })
        .collect()
}

/// Each column's name and its type as the service names it: from the
/// declared type, or for an expression from the first row's value.
pub fn columns(declared: &[(String, Option<String>)], first_row: Option<&[Value]>) -> Vec<(String, String)> {
    declared
        .iter()
        .enumerate()
        .map(|(i, (name, declared))| {
            let kind = match declared.as_deref() {
                Some("INTEGER") => "Int64",
                Some("REAL") => "Double",
                Some(_) => "String",
                None => match first_row.and_then(|row| row.get(i)) {
                    Some(Value::String(text)) if text.parse::<i64>().is_ok() => "Int64",
                    Some(Value::String(text)) if text.parse::<f64>().is_ok() => "Double",
                    _ => "String",
                },
            };
            (name.clone(), kind.to_string())
        })
        .collect()
}

/// A SQLite value as the service sends it: numbers as strings, null as null.
pub fn value(raw: ValueRef<'_>) -> Value {
    match raw {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(n) => Value::String(n.to_string()),
        ValueRef::Real(x) => Value::String(x.to_string()),
        ValueRef::Text(text) | ValueRef::Blob(text) => Value::String(String::from_utf8_lossy(text).into_owned()),
    }
}

/// Runs `sql` and returns its columns and every row, values as the service
/// sends them: what a complete answer must contain.
pub fn query(sql: &str) -> (Vec<(String, String)>, Vec<Vec<Value>>) {
    let db = open();
    let mut statement = db.prepare(sql).expect("the test's SQL is valid");
    let declared = declared(&statement);
    let mut rows = Vec::new();
    let mut cursor = statement.raw_query();
    while let Some(row) = cursor.next().unwrap() {
        rows.push(
            (0..declared.len())
                .map(|i| value(row.get_ref(i).unwrap()))
                .collect::<Vec<_>>(),
        );
    }
    (columns(&declared, rows.first().map(Vec::as_slice)), rows)
}

/// The rows of `sql` as the CSV `analyst` must print (RFC 4180, CRLF).
pub fn csv(sql: &str) -> String {
    let (columns, rows) = query(sql);
    let mut writer = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::CRLF)
        .from_writer(Vec::new());
    writer.write_record(columns.iter().map(|(name, _)| name)).unwrap();
    for row in rows {
        writer
            .write_record(row.iter().map(|v| v.as_str().map(str::to_string).unwrap_or_default()))
            .unwrap();
    }
    String::from_utf8(writer.into_inner().unwrap()).unwrap()
}

fn columns_first(columns: &[(String, String)]) -> &str {
    columns.first().map_or("", |(name, _)| name.as_str())
}

fn columns_last(columns: &[(String, String)]) -> &str {
    columns.last().map_or("", |(name, _)| name.as_str())
}

/// A SQL tool call reporting exactly `rows` (values as given, numbers no
/// double holds included) under `columns` (name, type), for `sql`.
pub fn given_call(sql: &str, columns: &[(&str, &str)], rows: Vec<Vec<Value>>) -> super::SqlCall {
    super::SqlCall {
        sql: sql.to_string(),
        title: "Given rows".into(),
        columns: columns
            .iter()
            .map(|(name, kind)| (name.to_string(), kind.to_string()))
            .collect(),
        total_rows: rows.len(),
        rows,
        vega_spec: None,
        spec_form: super::SpecForm::Null,
        query_key: false,
        shape: super::Shape::Arrays,
    }
}

/// A SQL tool call for `sql` as the agent would report it: the real
/// columns, `totalRows` of the whole result, its first `returned` rows, and
/// a bar chart of the last column by the first.
pub fn sql_call(sql: &str, returned: usize) -> super::SqlCall {
    let (columns, mut rows) = query(sql);
    let total_rows = rows.len();
    rows.truncate(returned);
    let vega_spec = serde_json::json!({
        "mark": "bar",
        "encoding": {
            "x": {"field": columns.first().map_or("", |(name, _)| name.as_str()), "type": "ordinal"},
            "y": {"field": columns.last().map_or("", |(name, _)| name.as_str()), "type": "quantitative"}
        }
    });
    super::SqlCall {
        sql: sql.to_string(),
        title: "Orders".into(),
        columns,
        rows,
        total_rows,
        vega_spec: Some(vega_spec),
        spec_form: super::SpecForm::Text,
        query_key: false,
        shape: super::Shape::Arrays,
    }
}
