//! `analyst rows`: the complete data of a truncated result through the data
//! query API, against the emulator, whose answers come from running the SQL
//! on a real SQLite warehouse; outputs are compared with what the query
//! really returns.

use crate::support::*;
use predicates::prelude::*;
use serde_json::{json, Value};

/// 250 orders: the agent's result holds the first 100.
const ORDERS_250: &str = "SELECT id, region, status, amount, note FROM orders WHERE id <= 250 ORDER BY id LIMIT 250";

/// `analyst` with the emulator's data query URL and secret.
fn analyst_data(emu: &Emulator) -> assert_cmd::Command {
    let mut command = emu.analyst();
    command
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET);
    command
}

/// A chat whose SQL result is `sql` with its first `returned` rows, saved as
/// `ask -o MODE` writes it.
fn saved_chat(emu: &Emulator, sql: &str, returned: usize, mode: &str) -> Vec<u8> {
    let stream = ChatStream::new("chat-rows", Family::Semantic)
        .user("Orders?")
        .meta_call("orders")
        .sql_call(&warehouse::sql_call(sql, returned))
        .final_answer(&["Here are the orders."]);
    emu.script(Reply::stream(&stream));
    let output = emu
        .analyst()
        .args(["ask", "-q", "-o", mode, "Orders?"])
        .output()
        .unwrap();
    assert!(output.status.success());
    output.stdout
}

fn data_bodies(emu: &Emulator) -> Vec<Value> {
    emu.requests_on(Route::Data).iter().map(Recorded::json).collect()
}

#[test]
fn ask_raw_piped_into_rows_gives_every_row_of_the_query() {
    let emu = Emulator::start();
    let saved = saved_chat(&emu, ORDERS_250, 100, "raw");
    let output = analyst_data(&emu).arg("rows").write_stdin(saved).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), warehouse::csv(ORDERS_250));
    assert_eq!(
        data_bodies(&emu),
        [json!({"query": ORDERS_250, "throwContinueWait": true})],
        "nothing but the query (and the ask to poll) is sent"
    );
    let token = emu.requests_on(Route::Data)[0]
        .header("authorization")
        .map(str::to_string);
    let claims = jwt_claims(token.as_deref()).expect("a valid HS256 token signed with the secret");
    assert!(claims["exp"].as_u64().unwrap() > claims["iat"].as_u64().unwrap());
}

#[test]
fn ask_events_output_works_as_a_source_too() {
    let emu = Emulator::start();
    let saved = saved_chat(&emu, ORDERS_250, 100, "events");
    let dir = Scratch::new();
    let file = dir.join("events.ndjson");
    std::fs::write(&file, saved).unwrap();
    analyst_data(&emu)
        .args(["rows", "--from"])
        .arg(&file)
        .assert()
        .success()
        .stdout(warehouse::csv(ORDERS_250));
}

#[test]
fn a_complete_result_is_printed_from_the_stream_without_a_call_unless_always() {
    let emu = Emulator::start();
    let sql = "SELECT region, COUNT(*) AS orders FROM orders GROUP BY region ORDER BY region";
    let saved = saved_chat(&emu, sql, 100, "raw");
    analyst_data(&emu)
        .arg("rows")
        .write_stdin(saved.clone())
        .assert()
        .success()
        .stdout(warehouse::csv(sql));
    assert!(emu.requests_on(Route::Data).is_empty());
    analyst_data(&emu)
        .args(["rows", "--always"])
        .write_stdin(saved)
        .assert()
        .success()
        .stdout(warehouse::csv(sql));
    emu.expect(Route::Data, 1);
}

#[test]
fn json_ndjson_and_tsv_carry_the_same_rows_typed() {
    let emu = Emulator::start();
    let sql = "SELECT id, region, amount, note FROM orders WHERE id <= 30 ORDER BY id LIMIT 30";
    let (_, expected) = warehouse::query(sql);
    let output = analyst_data(&emu)
        .args(["rows", "--sql", sql, "-o", "json"])
        .output()
        .unwrap();
    let array: Value = serde_json::from_slice(&output.stdout).expect("one JSON array");
    let array = array.as_array().unwrap();
    assert_eq!(array.len(), 30);
    for (object, row) in array.iter().zip(&expected) {
        assert_eq!(object["id"], json!(row[0].as_str().unwrap().parse::<i64>().unwrap()));
        assert_eq!(object["region"], row[1]);
        assert_eq!(object["amount"].as_f64(), row[2].as_str().unwrap().parse::<f64>().ok());
        assert!(object["amount"].is_number());
        assert_eq!(object["note"], row[3]);
    }
    let ndjson = analyst_data(&emu)
        .args(["rows", "--sql", sql, "-o", "ndjson"])
        .output()
        .unwrap();
    let lines: Vec<Value> = ndjson
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(&lines, array);
    let tsv = analyst_data(&emu)
        .args(["rows", "--sql", sql, "-o", "tsv"])
        .output()
        .unwrap();
    let tsv = String::from_utf8(tsv.stdout).unwrap();
    assert_eq!(tsv.lines().next(), Some("id\tregion\tamount\tnote"));
    assert_eq!(tsv.lines().count(), 31, "a newline inside a value is escaped: {tsv}");
    assert!(tsv.contains("two\\nlines"));
}

#[test]
fn sql_comes_from_flags_files_and_stdin_with_options_passed_through() {
    let emu = Emulator::start();
    let sql = "SELECT status, COUNT(*) AS n FROM orders GROUP BY status ORDER BY status";
    let dir = Scratch::new();
    let file = dir.join("q.sql");
    std::fs::write(&file, format!("{sql}\n")).unwrap();
    analyst_data(&emu)
        .args(["rows", "--sql-file"])
        .arg(&file)
        .assert()
        .success()
        .stdout(warehouse::csv(sql));
    analyst_data(&emu)
        .args(["rows", "--sql-file", "-"])
        .write_stdin(sql)
        .assert()
        .success()
        .stdout(warehouse::csv(sql));
    analyst_data(&emu)
        .args([
            "rows",
            "--sql",
            sql,
            "--timezone",
            "Europe/Berlin",
            "--cache",
            "stale-if-slow",
        ])
        .assert()
        .success();
    assert_eq!(
        data_bodies(&emu)[2],
        json!({"query": format!("{sql}\nLIMIT 50000 OFFSET 0"), "throwContinueWait": true, "timezone": "Europe/Berlin", "cache": "stale-if-slow"})
    );
    analyst_data(&emu)
        .env("ANALYST_TIMEZONE", "Asia/Tokyo")
        .args(["rows", "--sql", sql])
        .assert()
        .success();
    assert_eq!(
        data_bodies(&emu)[3],
        json!({"query": format!("{sql}\nLIMIT 50000 OFFSET 0"), "throwContinueWait": true, "timezone": "Asia/Tokyo"})
    );
}

#[test]
fn the_security_context_is_the_signed_payload() {
    let emu = Emulator::start();
    analyst_data(&emu)
        .args([
            "rows",
            "--sql",
            "SELECT 1 AS one",
            "--security-context",
            r#"{"tenant":"t-42","roles":["viewer"]}"#,
        ])
        .assert()
        .success()
        .stdout("one\r\n1\r\n");
    let token = emu.requests_on(Route::Data)[0]
        .header("authorization")
        .map(str::to_string);
    let claims = jwt_claims(token.as_deref()).unwrap();
    assert_eq!(
        (&claims["tenant"], &claims["roles"]),
        (&json!("t-42"), &json!(["viewer"]))
    );
}

#[test]
fn a_ready_token_is_sent_as_it_is_and_credentials_are_checked() {
    let emu = Emulator::start();
    let claims = serde_json::Map::new();
    let token = analyst::api::data::sign_hs256(DATA_SECRET.as_bytes(), &claims, std::time::SystemTime::now());
    emu.analyst()
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_TOKEN", &token)
        .args(["rows", "--sql", "SELECT 1 AS one"])
        .assert()
        .success();
    assert_eq!(
        emu.requests_on(Route::Data)[0].header("authorization"),
        Some(token.as_str())
    );
    let wrong = analyst::api::data::sign_hs256(b"not-the-secret", &claims, std::time::SystemTime::now());
    emu.analyst()
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_TOKEN", &wrong)
        .args(["rows", "--sql", "SELECT 1"])
        .assert()
        .code(3)
        .stderr(
            predicate::str::contains("403 Forbidden: Invalid token")
                .and(predicate::str::contains(wrong.as_str()).not()),
        );
    emu.analyst()
        .env("ANALYST_DATA_URL", emu.data_url())
        .args(["rows", "--sql", "SELECT 1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("ANALYST_DATA_TOKEN").and(predicate::str::contains("ANALYST_DATA_SECRET")));
}

#[test]
fn continue_wait_is_polled_until_data_comes() {
    let emu = Emulator::start();
    emu.continue_waits(2);
    analyst_data(&emu)
        .args(["rows", "--sql", "SELECT 7 AS seven"])
        .assert()
        .success()
        .stdout("seven\r\n7\r\n");
    let queries = emu.requests_on(Route::Data);
    assert_eq!(queries.len(), 3);
    // It asks for "Continue wait": without, a real server stays silent
    // until the result is ready, and a short idle timeout would cut it.
    assert!(queries.iter().all(|query| query.json()["throwContinueWait"] == true));
    emu.continue_waits(4);
    analyst_data(&emu)
        .args(["--idle-timeout", "1s", "rows", "--sql", "SELECT 7 AS seven"])
        .assert()
        .success()
        .stdout("seven\r\n7\r\n");
    emu.continue_waits(100);
    analyst_data(&emu)
        .args(["rows", "--sql", "SELECT 7", "--timeout", "2s"])
        .assert()
        .code(124)
        .stderr(predicate::str::contains(
            "--timeout 2s expired while the query was still running",
        ));
}

#[test]
fn a_security_context_cannot_apply_to_a_ready_token_and_the_secret_signs_it() {
    let emu = Emulator::start();
    emu.analyst()
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_TOKEN", "eyJ.ready.token")
        .args([
            "rows",
            "--sql",
            "SELECT 1",
            "--security-context",
            r#"{"region": "EMEA"}"#,
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the token's payload is the security context; use ANALYST_DATA_SECRET",
        ));
    emu.expect(Route::Data, 0);
    // Both set: with a security context, the secret signs a token carrying it.
    let emu = Emulator::start();
    analyst_data(&emu)
        .env("ANALYST_DATA_TOKEN", "eyJ.ready.token")
        .args([
            "rows",
            "--sql",
            "SELECT 1 AS one",
            "--security-context",
            r#"{"region": "EMEA"}"#,
        ])
        .assert()
        .success();
    let query = &emu.requests_on(Route::Data)[0];
    let claims = jwt_claims(query.header("authorization")).unwrap();
    assert_eq!(claims["region"], "EMEA");
}

#[test]
fn a_date_or_array_column_from_a_real_server_is_typed_or_kept_as_text() {
    // What a real Cube server sends for a DATE and an array column.
    let emu = Emulator::start();
    emu.script_on(
        Route::Data,
        Reply::status(
            200,
            "application/json",
            "{\"schema\":[{\"name\":\"month\",\"column_type\":{\"Date\":false}},{\"name\":\"orders\",\"column_type\":\"Int64\"},{\"name\":\"tags\",\"column_type\":{\"List\":{\"name\":\"item\",\"data_type\":\"Int64\"}}}]}\n{\"data\":[[\"2024-01-01\",\"17059\",\"{1,2}\"]]}\n",
        ),
    );
    analyst_data(&emu)
        .args(["rows", "--sql", "SELECT 1", "-o", "ndjson"])
        .assert()
        .success()
        .stdout("{\"month\":\"2024-01-01\",\"orders\":17059,\"tags\":\"{1,2}\"}\n");
}

#[test]
fn a_query_that_fails_at_execution_writes_nothing_on_stdout() {
    let emu = Emulator::start();
    // Cube's SQL API sends the schema line, then the error (a division by
    // zero in the first row, an overflow): no row came.
    let schema_then_error = "{\"schema\":[{\"name\":\"ratio\",\"column_type\":\"Double\"}]}\n{\"error\":\"Compute error: division by zero\"}\n";
    for mode in ["csv", "tsv", "json", "ndjson", "table"] {
        emu.script_on(
            Route::Data,
            Reply::status(200, "application/x-ndjson", schema_then_error),
        );
        let output = analyst_data(&emu)
            .args(["rows", "--sql", "SELECT 1 / 0 AS ratio", "-o", mode])
            .output()
            .unwrap();
        exits(&output, 7);
        assert_eq!(String::from_utf8_lossy(&output.stdout), "", "-o {mode}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("division by zero"));
    }
    // An empty result is still a document, with its header.
    let output = analyst_data(&emu)
        .args(["rows", "--sql", "SELECT id FROM orders WHERE id < 0", "-o", "json"])
        .output()
        .unwrap();
    exits(&output, 0);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "[]\n");
    let output = analyst_data(&emu)
        .args(["rows", "--sql", "SELECT id FROM orders WHERE id < 0", "-o", "csv"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "id\r\n");
}

#[test]
fn query_errors_map_to_exit_codes() {
    let emu = Emulator::start();
    // Bad SQL: a real server answers 200 with an error line.
    analyst_data(&emu)
        .args(["rows", "--sql", "SELECT nope FROM nowhere"])
        .assert()
        .code(7)
        .stderr(predicate::str::contains(
            "the data query failed: SQLCompilationError: no such table: nowhere",
        ));
    emu.script_on(
        Route::Data,
        Reply::status(400, "application/json", r#"{"error":"Bad request"}"#),
    );
    analyst_data(&emu)
        .args(["rows", "--sql", "SELECT 1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("400 Bad Request: Bad request"));
    analyst_data(&emu)
        .args(["rows", "--sql", "SELECT abs(-9223372036854775807 - 1) AS boom"])
        .assert()
        .code(7)
        .stderr(predicate::str::contains(
            "the data query failed: integer overflow (request req-0001)",
        ));
    for _ in 0..4 {
        emu.script_on(
            Route::Data,
            Reply::status(500, "application/json", r#"{"error":"boom"}"#),
        );
    }
    analyst_data(&emu).args(["rows", "--sql", "SELECT 1"]).assert().code(6);
    emu.script_on(Route::Data, Reply::status(503, "text/plain", "busy"));
    analyst_data(&emu)
        .args(["rows", "--sql", "SELECT 1 AS one"])
        .assert()
        .success()
        .stdout("one\r\n1\r\n");
}

#[test]
fn fewer_rows_than_total_rows_is_exit_10_unless_allowed() {
    let emu = Emulator::start();
    let sql = "SELECT id, amount FROM orders ORDER BY id";
    // The saved result says there were more rows than the query gives now.
    let saved = String::from_utf8(saved_chat(&emu, sql, 100, "raw"))
        .unwrap()
        .replace("totalRows\\\": 30000", "totalRows\\\": 40000");
    assert!(saved.contains("40000"), "the saved stream carries totalRows");
    let output = analyst_data(&emu)
        .arg("rows")
        .write_stdin(saved.clone())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    exits(&output, 10);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: error: got 30000 of 40000 rows: the data query API answers at most 50,000 rows at a time (a server setting), and the rest did not come, or pass --allow-partial

"#]],
    );
    assert!(output.stdout.is_empty(), "a short result writes nothing");
    let partial = analyst_data(&emu)
        .args(["rows", "--allow-partial"])
        .write_stdin(saved)
        .output()
        .unwrap();
    exits(&partial, 0);
    assert_eq!(
        String::from_utf8_lossy(&partial.stdout).matches("\r\n").count(),
        warehouse::ORDERS + 1,
        "--allow-partial: the rows that came"
    );
    assert!(String::from_utf8_lossy(&partial.stderr).contains("warning: got 30000 of 40000 rows"));
}

/// A query of `count` generated rows, `n` from 1.
fn generated(count: usize) -> String {
    format!("WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < {count}) SELECT n FROM g")
}

#[test]
fn paging_returns_every_row_past_the_servers_cap_and_no_paging_says_it_was_cut() {
    let emu = Emulator::start();
    // 60,000 rows: two pages of the default 50,000, in order, each row once.
    let output = analyst_data(&emu)
        .args(["rows", "--sql", &generated(60_000), "--order-by", "n"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    let numbers: Vec<usize> = text.lines().skip(1).map(|line| line.trim().parse().unwrap()).collect();
    assert_eq!(numbers, (1..=60_000).collect::<Vec<_>>());
    let sent: Vec<String> = data_bodies(&emu)
        .iter()
        .map(|body| body["query"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sent.len(), 2);
    assert!(
        sent[0].ends_with("SELECT n FROM g\nORDER BY n\nLIMIT 50000 OFFSET 0"),
        "{sent:?}"
    );
    assert!(sent[1].ends_with("LIMIT 50000 OFFSET 50000"), "{sent:?}");

    // Its own LIMIT above a page is paged up to it; an unordered query gets a note.
    let emu = Emulator::start();
    let output = analyst_data(&emu)
        .args([
            "rows",
            "--page-size",
            "1000",
            "--sql",
            &format!("{} LIMIT 2500", generated(5000)),
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_eq!(String::from_utf8(output.stdout).unwrap().lines().count(), 2501);
    assert_eq!(data_bodies(&emu).len(), 3, "1000 + 1000 + 500");
    assert!(String::from_utf8_lossy(&output.stderr)
        .contains("no ORDER BY: the pages of an unordered query can overlap or skip rows"));

    // --no-paging: one answer of exactly the cap is exit 10, or a warning.
    let emu = Emulator::start();
    let output = analyst_data(&emu)
        .args(["rows", "--no-paging", "--sql", &generated(60_000)])
        .output()
        .unwrap();
    exits(&output, 10);
    assert!(output.stdout.is_empty(), "a cut answer writes nothing");
    assert!(String::from_utf8_lossy(&output.stderr)
        .contains("got exactly 50000 rows, the most the data query API returns in one answer"));
    analyst_data(&emu)
        .args(["rows", "--no-paging", "--allow-partial", "--sql", &generated(60_000)])
        .assert()
        .success();
    // A page above the server's cap is cut by it: said, not a silent end.
    analyst_data(&emu)
        .args([
            "rows",
            "--page-size",
            "60000",
            "--sql",
            &generated(70_000),
            "--order-by",
            "n",
        ])
        .assert()
        .code(10)
        .stderr(predicate::str::contains("use --page-size 50000 or less"));
    // --order-by on SQL that orders itself is refused before sending.
    analyst_data(&emu)
        .args(["rows", "--sql", "SELECT id FROM orders ORDER BY id", "--order-by", "id"])
        .assert()
        .code(2);
}

#[test]
fn paging_sql_that_ends_in_a_comment_ends_with_every_row_once() {
    let emu = Emulator::start();
    let sql = format!("{}\nORDER BY n -- certified: the numbers", generated(2500));
    let output = analyst_data(&emu)
        .args(["--timeout", "20s", "rows", "--page-size", "1000", "--sql", &sql])
        .output()
        .unwrap();
    exits(&output, 0);
    let text = String::from_utf8(output.stdout).unwrap();
    let numbers: Vec<usize> = text.lines().skip(1).map(|line| line.trim().parse().unwrap()).collect();
    assert_eq!(numbers, (1..=2500).collect::<Vec<_>>());
    assert_eq!(data_bodies(&emu).len(), 3, "1000 + 1000 + 500");
}

/// A data query answer of `rows` (one integer column `n`).
fn data_answer(rows: &[i64]) -> Reply {
    let schema = serde_json::json!({"schema": [{"name": "n", "column_type": "int"}]});
    let data = serde_json::json!({"data": rows.iter().map(|n| vec![n.to_string()]).collect::<Vec<_>>()});
    Reply::status(200, "application/x-ndjson", &format!("{schema}\n{data}\n"))
}

#[test]
fn paging_stops_when_a_page_repeats_or_passes_total_rows() {
    // A data API that does not apply LIMIT/OFFSET: the same page again.
    let emu = Emulator::start();
    for _ in 0..2 {
        emu.script_on(Route::Data, data_answer(&[1, 2]));
    }
    let output = analyst_data(&emu)
        .args(["rows", "--page-size", "2", "--sql", "SELECT n FROM t ORDER BY n"])
        .output()
        .unwrap();
    exits(&output, 7);
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("page 2 of the query repeats page 1"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Pages that bring more rows than the result's totalRows.
    let emu = Emulator::start();
    let saved = saved_chat(&emu, "SELECT id FROM orders WHERE id <= 4 ORDER BY id", 2, "raw");
    for page in [[1, 2, 3], [4, 5, 6]] {
        emu.script_on(Route::Data, data_answer(&page));
    }
    let output = analyst_data(&emu)
        .args(["rows", "--page-size", "3", "--always"])
        .write_stdin(saved)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: error: paging brought 6 rows, more than the 4 of the result's totalRows: the pages overlap (order the query); paging stopped

"#]],
    );
    exits(&output, 7);
}

#[test]
fn an_empty_result_is_still_a_document() {
    let emu = Emulator::start();
    let sql = "SELECT id FROM orders WHERE id < 0";
    analyst_data(&emu)
        .args(["rows", "--sql", sql])
        .assert()
        .success()
        .stdout("id\r\n");
    analyst_data(&emu)
        .args(["rows", "--sql", sql, "-o", "json"])
        .assert()
        .success()
        .stdout("[]\n");
}

#[test]
fn usage_errors() {
    let emu = Emulator::start();
    analyst_data(&emu)
        .args(["rows", "--sql", "SELECT 1", "--from", "x"])
        .assert()
        .code(2);
    analyst_data(&emu).args(["rows", "--sql", "  "]).assert().code(2);
    analyst_data(&emu)
        .args(["rows", "--from", "/no/such/file"])
        .assert()
        .code(2);
    emu.analyst()
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .args(["rows", "--sql", "SELECT 1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("ANALYST_DATA_URL"));
    analyst_data(&emu)
        .arg("rows")
        .write_stdin("this is not a saved stream\n")
        .assert()
        .code(7)
        .stderr(predicate::str::contains("line 1 is not valid JSON"));
    assert!(emu.requests_on(Route::Data).is_empty());
}

#[test]
fn ask_all_rows_completes_csv_json_and_vega() {
    let emu = Emulator::start();
    let stream = ChatStream::new("chat-all", Family::Semantic)
        .user("Orders?")
        .sql_call(&warehouse::sql_call(ORDERS_250, 100))
        .final_answer(&["Here."]);
    let run = |mode: &str| {
        emu.script(Reply::stream(&stream));
        let output = analyst_data(&emu)
            .args(["ask", "-q", "--all-rows", "-o", mode, "Orders?"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output.stdout
    };
    assert_eq!(String::from_utf8(run("csv")).unwrap(), warehouse::csv(ORDERS_250));
    let doc: Value = serde_json::from_slice(&run("json")).unwrap();
    let query = &doc["queries"][0];
    assert_eq!(
        (
            query["rowCount"].as_u64(),
            query["totalRows"].as_u64(),
            &query["truncated"]
        ),
        (Some(250), Some(250), &json!(false))
    );
    assert_eq!(query["rows"][249]["id"], 250);
    let spec: Value = serde_json::from_slice(&run("vega")).unwrap();
    assert_eq!(spec["data"]["values"].as_array().unwrap().len(), 250);
    // Without --all-rows nothing is fetched.
    emu.script(Reply::stream(&stream));
    let before = emu.requests_on(Route::Data).len();
    let plain = analyst_data(&emu)
        .args(["ask", "-q", "-o", "csv", "Orders?"])
        .output()
        .unwrap();
    exits(&plain, 10);
    assert!(plain.stdout.is_empty(), "no part of the result on stdout");
    assert_eq!(emu.requests_on(Route::Data).len(), before);
}

/// Megabytes of rows that arrive at once, across many chunks: every row
/// must still come out once, in order.
#[test]
fn every_row_of_a_large_answer_comes_out_once_in_order() {
    let emu = Emulator::start();
    let rows = 60_000;
    let mut body =
        br#"{"schema":[{"name":"n","column_type":"Int64"},{"name":"label","column_type":"String"}]}"#.to_vec();
    body.push(b'\n');
    let mut expected = "n,label\r\n".to_string();
    for start in (0..rows).step_by(1000) {
        let chunk: Vec<_> = (start..start + 1000)
            .map(|i| json!([i.to_string(), format!("row {i}")]))
            .collect();
        body.extend(json!({ "data": chunk }).to_string().into_bytes());
        body.push(b'\n');
        expected.extend((start..start + 1000).map(|i| format!("{i},row {i}\r\n")));
    }
    assert!(body.len() > 1 << 20);
    emu.script_on(
        Route::Data,
        Reply::Stream {
            body,
            chunking: Chunking::Sizes(vec![1 << 20]),
            delay: std::time::Duration::ZERO,
            ending: Ending::Clean,
        },
    );
    let printed = analyst_data(&emu)
        .args(["rows", "-q", "--no-paging", "--sql", "x"])
        .output()
        .unwrap();
    assert!(printed.status.success(), "{}", String::from_utf8_lossy(&printed.stderr));
    assert_eq!(String::from_utf8(printed.stdout).unwrap(), expected);
}

#[test]
fn a_query_index_past_the_streams_results_is_a_usage_error() {
    analyst()
        .args(["rows", "--from", &fixture("revenue-by-month.ndjson"), "--query", "3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--query 3: the stream has only 1 SQL result(s)",
        ));
}

#[test]
fn a_saved_stream_without_sql_says_so_without_naming_modes_rows_lacks() {
    let saved = ScratchFile::new(
        "words.ndjson",
        ChatStream::new("c-words", Family::Cube)
            .user("Q")
            .final_answer(&["Just words."])
            .bytes(),
    );
    let output = analyst().args(["rows", "--from"]).arg(&*saved).output().unwrap();
    exits(&output, 11);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: error: the stream has no SQL result: the agent ran no query

"#]],
    );
    assert!(!stderr.contains("-o answer"), "rows has no -o answer: {stderr}");
    // ask, whose -o answer has the words, still says so.
    let output = analyst()
        .args(["ask", "-o", "csv", "--replay"])
        .arg(&*saved)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("(try -o answer or -o json)"));
}

#[test]
fn ask_keeps_a_column_type_sent_as_an_object_and_types_by_its_name() {
    let head = ChatStream::new("c-date", Family::Cube).user("Q").bytes();
    let call = r#"{"id":"t","role":"assistant","toolCall":{"name":"cubeSqlApi","input":"{\"sqlQuery\":\"SELECT month, orders\"}","result":"{\"schema\":[{\"name\":\"month\",\"column_type\":{\"Date\":false}},{\"name\":\"orders\",\"column_type\":\"Int64\"}],\"data\":[[\"2024-01-01\",\"17059\"]]}"}}"#;
    let mut stream = head;
    stream.extend_from_slice(call.as_bytes());
    stream.push(b'\n');
    stream.extend(ChatStream::empty().final_answer(&["Done"]).bytes());
    let saved = ScratchFile::new("date.ndjson", stream);
    let output = analyst()
        .args(["ask", "-q", "-o", "json", "--replay"])
        .arg(&*saved)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    let query = &document["queries"][0];
    assert_eq!(query["columns"][0], json!({"name": "month", "type": {"Date": false}}));
    assert_eq!(query["rows"][0], json!({"month": "2024-01-01", "orders": 17059}));
}

#[test]
fn without_throw_continue_wait_the_emulator_holds_a_slow_query_silently() {
    // What a client that does not ask for "Continue wait" meets: nothing
    // at all until the result is ready (so analyst always asks).
    use std::io::{Read, Write};
    let emu = Emulator::start();
    emu.continue_waits(3);
    let url = url::Url::parse(&emu.data_url()).unwrap();
    let claims = serde_json::Map::new();
    let token = analyst::api::data::sign_hs256(DATA_SECRET.as_bytes(), &claims, std::time::SystemTime::now());
    let body = r#"{"query":"SELECT 1 AS one"}"#;
    let mut connection = std::net::TcpStream::connect((url.host_str().unwrap(), url.port().unwrap())).unwrap();
    write!(
        connection,
        "POST {}/v1/cubesql HTTP/1.1\r\nHost: x\r\nAuthorization: {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        url.path(),
        body.len()
    )
    .unwrap();
    let started = std::time::Instant::now();
    let mut first = [0u8; 1];
    connection.read_exact(&mut first).unwrap();
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(1000),
        "held silent, not polled"
    );
    let mut rest = String::new();
    connection.read_to_string(&mut rest).unwrap();
    assert!(rest.contains(r#"{"data":[["1"]]}"#), "{rest}");
}

#[test]
fn a_query_that_fails_before_its_answer_writes_nothing_on_stdout() {
    let emu = Emulator::start();
    for mode in ["csv", "tsv", "json", "ndjson", "table"] {
        let output = emu
            .analyst()
            .env("ANALYST_DATA_URL", emu.data_url())
            .env("ANALYST_DATA_SECRET", DATA_SECRET)
            .args(["rows", "-o", mode, "--sql", "SELECT nope FROM nowhere"])
            .output()
            .unwrap();
        exits(&output, 7);
        assert!(
            output.stdout.is_empty(),
            "{mode}: {:?}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
    let dir = Scratch::new();
    let file = dir.join("rows.parquet");
    let output = emu
        .analyst()
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .args([
            "rows",
            "-o",
            "parquet",
            "--sql",
            "SELECT nope FROM nowhere",
            "--output-file",
        ])
        .arg(&file)
        .output()
        .unwrap();
    exits(&output, 7);
    assert!(!file.exists(), "no partial file");
}
