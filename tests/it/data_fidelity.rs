//! The data as the service sent it: every digit of every number kept, no
//! row or cell dropped (rows wider than their schema, duplicate column
//! names, numbers beyond f64), and answers of the data query API that do
//! not hold together refused rather than written half-right.

use crate::support::*;
use serde_json::Value;

/// A stream whose one SQL result holds `result` (a JSON object, as text).
fn stream_with_result(result: &str) -> Vec<u8> {
    let input = serde_json::json!({"sqlQuery": "SELECT 1"}).to_string();
    let call = serde_json::json!({"id": "t1", "role": "assistant",
        "toolCall": {"name": "cubeSqlApi", "input": input, "result": result}});
    ChatStream::new("c-data", Family::Cube)
        .user("Q")
        .raw_line(&call.to_string())
        .final_answer(&["Done"])
        .bytes()
}

/// `analyst ARGS --replay` of `stream`: exit code and stdout.
fn replay(stream: &[u8], args: &[&str]) -> (Option<i32>, String) {
    let file = ScratchFile::new("s.ndjson", stream);
    let output = analyst().args(args).arg("--replay").arg(&*file).output().unwrap();
    (output.status.code(), String::from_utf8(output.stdout).unwrap())
}

const PRECISE: &str = r#"{"schema":[{"name":"big","column_type":"Double"},{"name":"huge","column_type":"Int64"},{"name":"tiny","column_type":"Double"},{"name":"sent_as_number","column_type":"Double"}],
"data":[["12345678901234.56789","123456789012345678901234567890","1e-400",1e2]],"totalRows":1}"#;

#[test]
fn every_digit_the_service_sent_is_kept() {
    let stream = stream_with_result(PRECISE);
    let (code, json) = replay(&stream, &["ask", "-o", "json"]);
    assert_eq!(code, Some(0));
    let row = &json[json.find("\"rows\"").unwrap()..];
    for digits in [
        "12345678901234.56789",
        "123456789012345678901234567890",
        "1e-400",
        "1e2",
    ] {
        assert!(row.contains(&format!(": {digits}")), "{digits} in {row}");
    }
    let (code, csv) = replay(&stream, &["ask", "-o", "csv"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        csv,
        "big,huge,tiny,sent_as_number\r\n12345678901234.56789,123456789012345678901234567890,1e-400,1e2\r\n"
    );
    let file = ScratchFile::new("s.ndjson", &stream);
    for mode in ["json", "ndjson"] {
        let output = analyst()
            .args(["rows", "-o", mode, "--from"])
            .arg(&*file)
            .output()
            .unwrap();
        exits(&output, 0);
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(
            text.contains("12345678901234.56789") && text.contains("1e-400"),
            "{mode}: {text}"
        );
    }
}

#[test]
fn a_number_beyond_f64_drops_no_row() {
    let result = r#"{"schema":[{"name":"x","column_type":"Double"}],"data":[["1"],[1e999],["3"]],"totalRows":3}"#;
    let (code, csv) = replay(&stream_with_result(result), &["ask", "-o", "csv"]);
    assert_eq!(code, Some(0));
    assert_eq!(csv, "x\r\n1\r\n1e999\r\n3\r\n");
}

#[test]
fn numbers_are_written_as_the_service_sent_them() {
    let result = r#"{"schema":[{"name":"x","column_type":"Double"}],"data":[[2E5],[1.50],[-0.0]],"totalRows":3}"#;
    let stream = stream_with_result(result);
    let (code, csv) = replay(&stream, &["ask", "-o", "csv"]);
    assert_eq!((code, csv.as_str()), (Some(0), "x\r\n2E5\r\n1.50\r\n-0.0\r\n"));
    let (code, json) = replay(&stream, &["ask", "-o", "json"]);
    assert_eq!(code, Some(0));
    let rows = &json[json.find("\"rows\"").unwrap()..];
    for sent in ["2E5", "1.50", "-0.0"] {
        assert!(rows.contains(&format!(": {sent}")), "{sent} in {rows}");
    }
}

#[test]
fn a_lone_surrogate_is_one_replacement_character_not_a_bad_stream() {
    let result = r#"{"schema":[{"name":"x","column_type":"String"}],"data":[["a\ud800b"]],"totalRows":1}"#;
    let input = serde_json::json!({"sqlQuery": "SELECT 1"}).to_string();
    let call = serde_json::json!({"id": "t1", "role": "assistant",
        "toolCall": {"name": "cubeSqlApi", "input": input, "result": result}});
    let stream = ChatStream::new("c-data", Family::Cube)
        .user("Q")
        .raw_line(&call.to_string())
        .raw_line(r#"{"id":"m1","role":"assistant","content":"Total \udc00 done","state":{"messageType":"final"}}"#)
        .bytes();
    let (code, answer) = replay(&stream, &["ask"]);
    assert_eq!((code, answer.as_str()), (Some(0), "Total \u{FFFD} done\n"));
    let (code, csv) = replay(&stream, &["ask", "-o", "csv"]);
    assert_eq!((code, csv.as_str()), (Some(0), "x\r\na\u{FFFD}b\r\n"));
    let (code, json) = replay(&stream, &["ask", "-o", "json"]);
    assert_eq!(code, Some(0));
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["queries"][0]["rows"][0]["x"], "a\u{FFFD}b");
}

#[test]
fn a_total_that_is_no_count_of_rows_leaves_the_result_open() {
    for total in ["1e999", "12.5", "\"many\""] {
        let result = format!(
            r#"{{"schema":[{{"name":"a","column_type":"String"}},{{"name":"b","column_type":"Int64"}}],"data":[["x","1"]],"totalRows":{total}}}"#
        );
        let file = ScratchFile::new("s.ndjson", stream_with_result(&result));
        let output = analyst()
            .args(["ask", "-o", "csv", "--replay"])
            .arg(&*file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        exits(&output, 0);
        assert!(stderr.contains("not a count of rows"), "{total}: {stderr}");

        // Whether every row is in the stream is unknown: `rows --from`
        // and `--all-rows` run the query.
        let emu = Emulator::start();
        let body = format!("{SCHEMA}\n{{\"data\":[[\"x\",\"1\"],[\"y\",\"2\"]]}}\n");
        for args in [&["rows", "--from"][..], &["ask", "-o", "csv", "--all-rows", "--replay"]] {
            emu.script_on(Route::Data, Reply::status(200, "application/json", &body));
            let output = emu
                .analyst()
                .env("ANALYST_DATA_URL", emu.data_url())
                .env("ANALYST_DATA_SECRET", DATA_SECRET)
                .args(args)
                .arg(&*file)
                .output()
                .unwrap();
            exits(&output, 0);
            assert_eq!(
                String::from_utf8_lossy(&output.stdout),
                "a,b\r\nx,1\r\ny,2\r\n",
                "{total} {args:?}"
            );
        }
        assert_eq!(emu.requests_on(Route::Data).len(), 2);
    }
}

#[test]
fn no_cell_vanishes_and_no_column_hides_another() {
    let result = r#"{"schema":[{"name":"a","column_type":"String"},{"name":"a","column_type":"Int64"}],
        "data":[["x","1","beyond"],["y"]],"totalRows":2}"#;
    let stream = stream_with_result(result);
    let (code, csv) = replay(&stream, &["ask", "-o", "csv"]);
    assert_eq!(code, Some(0));
    assert_eq!(csv, "a,a_2,column3\r\nx,1,beyond\r\ny,,\r\n");
    let (_, json) = replay(&stream, &["ask", "-o", "json"]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        doc["queries"][0]["rows"],
        serde_json::json!([{"a": "x", "a_2": 1, "column3": "beyond"}, {"a": "y", "a_2": null, "column3": null}])
    );
}

#[test]
fn a_sql_result_that_is_not_a_table_is_a_failed_query() {
    let (code, csv) = replay(&stream_with_result(r#""Something went wrong""#), &["ask", "-o", "csv"]);
    assert_eq!((code, csv.as_str()), (Some(8), ""));
}

/// `analyst rows` of `body`, the data query API's whole answer.
fn rows_of(body: &str, mode: &str) -> (Option<i32>, String, String) {
    let emu = Emulator::start();
    emu.script_on(Route::Data, Reply::status(200, "application/json", body));
    let output = emu
        .analyst()
        .env("ANALYST_DATA_URL", emu.data_url())
        .env("ANALYST_DATA_SECRET", DATA_SECRET)
        .args(["rows", "--sql", "SELECT a, b FROM t", "-o", mode])
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

const SCHEMA: &str = r#"{"schema":[{"name":"a","column_type":"String"},{"name":"b","column_type":"Int64"}]}"#;

#[test]
fn a_data_answer_that_does_not_hold_together_is_refused() {
    let wide = format!("{SCHEMA}\n{{\"data\":[[\"x\",\"1\"],[\"y\",\"2\",\"extra\"]]}}\n");
    let (code, _, stderr) = rows_of(&wide, "csv");
    assert_eq!(code, Some(7), "{stderr}");
    assert_whole(
        stderr.to_string(),
        str![[r#"
analyst: error: the data query answer has a row of 3 values for 2 columns at line 2

"#]],
    );

    let reschema = format!("{SCHEMA}\n{{\"data\":[[\"x\",\"1\"]]}}\n{{\"schema\":[{{\"name\":\"c\"}}]}}\n");
    let (code, csv, stderr) = rows_of(&reschema, "csv");
    assert_eq!(code, Some(7), "{stderr}");
    assert_eq!(csv.matches("a,b").count(), 1, "the header is written once: {csv}");

    let failing = format!("{SCHEMA}\n{{\"data\":[[\"x\",\"1\"]]}}\n{{\"error\":\"division by zero\"}}\n");
    let (code, json, stderr) = rows_of(&failing, "json");
    assert_eq!(code, Some(7), "{stderr}");
    let rows: Value = serde_json::from_str(&json).expect("the document is closed");
    assert_eq!(rows, serde_json::json!([{"a": "x", "b": 1}]));
}

#[test]
fn events_pass_on_what_the_reader_accepted() {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let line = format!(r#"{{"id":"x","role":"assistant","deep":{deep},"big":1e999}}"#);
    let stream = ChatStream::new("c-deep", Family::Cube)
        .user("Q")
        .raw_line(&line)
        .final_answer(&["Done"])
        .bytes();
    let (code, events) = replay(&stream, &["ask", "-o", "events"]);
    assert_eq!(code, Some(0));
    assert!(events.contains(&line), "{events}");
}
