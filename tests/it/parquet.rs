//! `rows -o parquet`: typed columns read back by an independent reader
//! (pyarrow, which `.ci/run` installs), every value compared with the CSV
//! of the same answer; many rows in several row groups.

use std::path::Path;

use crate::support::*;
use serde_json::Value;

/// The row groups of the Parquet file at `path`, each column's Arrow type,
/// and every row as pyarrow reads it, values as JSON (timestamps and dates
/// in ISO form).
fn read_back(path: &Path) -> (usize, Vec<String>, Vec<Vec<Value>>) {
    let script = r#"
import json, sys, datetime, decimal
import pyarrow.parquet as pq
table = pq.read_table(sys.argv[1])
print(pq.ParquetFile(sys.argv[1]).metadata.num_row_groups)
def shown(v):
    if isinstance(v, datetime.datetime):
        return v.isoformat(timespec="milliseconds")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return {"decimal": format(v, "f")}
    return v
print(json.dumps([str(f.type) for f in table.schema]))
for row in table.to_pylist():
    print(json.dumps([shown(v) for v in row.values()]))
"#;
    let output = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "pyarrow could not read it: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let mut lines = text.lines();
    let groups = lines.next().unwrap().parse().unwrap();
    let types = serde_json::from_str(lines.next().unwrap()).unwrap();
    (
        groups,
        types,
        lines.map(|line| serde_json::from_str(line).unwrap()).collect(),
    )
}

/// True when the Parquet value `got` is the CSV field `sent`; a decimal
/// equal to every digit (`1.50` is `1.5`, never `1.4999…`).
fn same(got: &Value, sent: &str) -> bool {
    match got {
        Value::Null => sent.is_empty(),
        Value::Bool(flag) => sent == flag.to_string(),
        Value::Number(number) => sent.parse::<f64>().is_ok_and(|x| Some(x) == number.as_f64()),
        Value::String(text) => text == sent,
        Value::Object(decimal) => decimal["decimal"]
            .as_str()
            .is_some_and(|got| digits(got) == digits(sent)),
        _ => false,
    }
}

/// A plain decimal's sign and digits without the zeros that do not count.
fn digits(text: &str) -> (bool, String, String) {
    let negative = text.starts_with('-');
    let unsigned = text.trim_start_matches(['-', '+']);
    let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let (whole, fraction) = (whole.trim_start_matches('0'), fraction.trim_end_matches('0'));
    (
        negative && !(whole.is_empty() && fraction.is_empty()),
        whole.to_string(),
        fraction.to_string(),
    )
}

/// Runs `rows` against `emu` as `csv` and as `parquet` (into a file), and
/// checks every value; returns the row groups and the Arrow types.
fn csv_and_parquet_agree(emu: &Emulator, serve: impl Fn(), args: &[&str]) -> (usize, Vec<String>) {
    let dir = Scratch::new();
    let file = dir.join("rows.parquet");
    let run = |extra: &[&str]| {
        serve();
        emu.analyst()
            .env("ANALYST_DATA_URL", emu.data_url())
            .env("ANALYST_DATA_SECRET", DATA_SECRET)
            .args(["rows", "-q"])
            .args(args)
            .args(extra)
            .output()
            .unwrap()
    };
    let csv = run(&["-o", "csv"]);
    assert!(csv.status.success(), "{}", String::from_utf8_lossy(&csv.stderr));
    let parquet = run(&["-o", "parquet", "--output-file", file.to_str().unwrap()]);
    assert!(parquet.status.success(), "{}", String::from_utf8_lossy(&parquet.stderr));
    // The same file on a stdout that is not a terminal.
    let piped = run(&["-o", "parquet"]);
    assert!(piped.status.success());
    assert_eq!(
        piped.stdout,
        std::fs::read(&file).unwrap(),
        "stdout and --output-file hold the same file"
    );
    let (groups, types, rows) = read_back(&file);
    let mut reader = csv::Reader::from_reader(csv.stdout.as_slice());
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), records.len(), "every row");
    for (i, (row, record)) in rows.iter().zip(&records).enumerate() {
        for (column, (got, sent)) in row.iter().zip(record.iter()).enumerate() {
            assert!(same(got, sent), "row {i}, column {column}: parquet {got}, csv {sent:?}");
        }
    }
    (groups, types)
}

#[test]
fn a_real_servers_typed_answers_become_typed_parquet_columns() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real-streams/data-api");
    for (answer, expected) in [
        (
            "typed_rows",
            vec![
                "double", "string", "string", "string", "double", "double", "bool", "string",
            ],
        ),
        ("pushdown_date_column", vec!["date32[day]", "int64"]),
        // DECIMAL labelled Int32: exact, never a rounded double.
        ("pushdown_decimal_column", vec!["decimal128(5, 2)", "string"]),
        ("array_column", vec!["string"]),
    ] {
        let body = std::fs::read_to_string(fixtures.join(format!("{answer}.ndjson"))).unwrap();
        check(&body, &expected, answer);
    }
    // Cube 1.x names timestamps; one value that is not one keeps the column text.
    for (body, expected) in [
        (
            "{\"schema\":[{\"name\":\"at\",\"column_type\":\"Timestamp\"},{\"name\":\"n\",\"column_type\":\"Int64\"}]}\n{\"data\":[[\"2024-01-01T00:02:37.000\",\"1\"],[null,null]]}\n",
            vec!["timestamp[ms]", "int64"],
        ),
        (
            "{\"schema\":[{\"name\":\"at\",\"column_type\":\"Timestamp\"},{\"name\":\"n\",\"column_type\":\"Int64\"}]}\n{\"data\":[[\"2024-01-01T00:02:37.000\",\"1\"],[\"soon\",\"n/a\"]]}\n",
            vec!["string", "string"],
        ),
        // Decimals and integers past INT64 keep every digit: DECIMAL up to
        // 38 digits, beyond that the text as sent; an exponent is text too.
        (
            concat!(
                "{\"schema\":[{\"name\":\"d\",\"column_type\":\"Decimal\"},{\"name\":\"i\",\"column_type\":\"Int128\"},",
                "{\"name\":\"w\",\"column_type\":\"Int128\"},{\"name\":\"e\",\"column_type\":\"Decimal\"}]}\n",
                "{\"data\":[[\"12345678901234567890.123456789\",\"12345678901234567890123456789012345678\",\"1234567890123456789012345678901234567890\",\"1e999\"],",
                "[\"-0.50\",\"-9223372036854775809\",\"1\",2E5],[null,null,null,null]]}\n"
            ),
            vec!["decimal128(29, 9)", "decimal128(38, 0)", "string", "string"],
        ),
    ] {
        check(body, &expected, "literal");
    }
}

/// Serves `body` as the data API's answer and checks the Arrow types.
fn check(body: &str, expected: &[&str], what: &str) {
    {
        let emu = Emulator::start();
        let serve = || emu.script_on(Route::Data, Reply::status(200, "application/json", body));
        let (_, types) = csv_and_parquet_agree(&emu, serve, &["--no-paging", "--sql", "SELECT 1"]);
        assert_eq!(types, expected, "{what}");
    }
}

#[test]
fn many_rows_go_in_row_groups_and_every_value_matches_the_csv() {
    let emu = Emulator::start();
    let sql = "SELECT id, created_at, region, amount, note FROM orders ORDER BY id";
    let (_, types) = csv_and_parquet_agree(&emu, || {}, &["--sql", sql]);
    assert_eq!(types, ["int64", "string", "string", "double", "string"]);
    // 150,000 rows, in three pages, as three row groups.
    let generated = "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 150000) SELECT n, n * 1.5 AS x, 'row ' || n AS label FROM g";
    let (groups, types) = csv_and_parquet_agree(&emu, || {}, &["--sql", generated, "--order-by", "n"]);
    assert_eq!(types, ["int64", "double", "string"]);
    assert_eq!(groups, 3, "row groups of 65,536 rows");
}
