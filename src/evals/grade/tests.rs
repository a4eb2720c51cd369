//! The grading's tests: each rule of Cube's, values as sent, the exact
//! search (month and rank, a bound that says so, a deadline), and property
//! tests: any result against itself reordered, renamed and widened passes,
//! a changed cell fails naming it.

use super::*;
use proptest::prelude::*;
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// A sheet of `rows` (JSON arrays), its columns named `prefix1…`.
fn sheet(prefix: &str, rows: &Value) -> Sheet {
    let rows = rows.as_array().unwrap();
    let width = rows.iter().map(|row| row.as_array().unwrap().len()).max().unwrap_or(0);
    let mut sheet = Sheet {
        names: (1..=width).map(|i| format!("{prefix}{i}")).collect(),
        ..Sheet::default()
    };
    let texts: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.as_array().unwrap().iter().map(Value::to_string).collect())
        .collect();
    push_texts(&mut sheet, &texts);
    sheet
}

/// Pushes rows of cells given as their JSON text.
fn push_texts(sheet: &mut Sheet, rows: &[Vec<String>]) {
    for row in rows {
        let raws: Vec<Box<RawValue>> = row
            .iter()
            .map(|text| RawValue::from_string(text.clone()).unwrap())
            .collect();
        let refs: Vec<&RawValue> = raws.iter().map(AsRef::as_ref).collect();
        sheet.push(&refs).unwrap();
    }
}

/// Grades agent rows against truth rows (columns named `a…` and `c…`).
fn graded(agent: Value, truth: Value) -> Option<CubeGrade> {
    grade(&sheet("a", &agent), &sheet("c", &truth), None).unwrap()
}

/// Grades sheets whose cells are given as the JSON text sent.
fn graded_texts(agent: &[&str], truth: &[&str]) -> Option<CubeGrade> {
    let column = |cells: &[&str]| {
        let mut sheet = Sheet::default();
        push_texts(
            &mut sheet,
            &cells.iter().map(|cell| vec![cell.to_string()]).collect::<Vec<_>>(),
        );
        sheet
    };
    grade(&column(agent), &column(truth), None).unwrap()
}

fn reason(miss: Option<CubeGrade>) -> Option<Reason> {
    miss.and_then(|miss| miss.score_reason)
}

#[test]
fn order_names_and_extra_columns_do_not_matter() {
    let truth = json!([["East", 6646], ["West", 10787]]);
    let agent = json!([[10787.0, "West", "x"], ["6646.4", "East", "y"]]);
    assert_eq!(graded(agent, truth), None);
}

#[test]
fn numbers_compare_to_four_significant_figures() {
    assert_eq!(graded(json!([[6646.0]]), json!([[6646]])), None);
    assert_eq!(graded(json!([[6646.4]]), json!([[6646]])), None);
    assert_eq!(
        graded(json!([["6646"]]), json!([[6646.0]])),
        None,
        "a number sent as a string"
    );
    assert_eq!(graded(json!([[" 6646 "]]), json!([[6646]])), None, "blanks around it");
    assert_eq!(graded(json!([[0.0001234]]), json!([[0.00012344]])), None);
    assert_eq!(graded(json!([[-12.341]]), json!([[-12.34]])), None);
    assert_eq!(graded(json!([[9999.6]]), json!([[10000]])), None, "rounding carries");
    assert_eq!(
        reason(graded(json!([[6656]]), json!([[6646]]))),
        Some(Reason::ValueMismatch)
    );
    assert_eq!(
        reason(graded(json!([[6647]]), json!([[6646]]))),
        Some(Reason::ValueMismatch)
    );
    assert_eq!(
        reason(graded(json!([[-6646]]), json!([[6646]]))),
        Some(Reason::ValueMismatch)
    );
    assert_eq!(
        graded(json!([[66460.4]]), json!([[66461]])),
        None,
        "the 5th figure differs"
    );
    assert_eq!(graded(json!([["+5"]]), json!([["5."]])), None);
    assert_eq!(graded(json!([[".5"]]), json!([[0.5]])), None);
}

#[test]
fn values_keep_what_they_were_sent_as() {
    // A number no double holds is no NULL and no infinity.
    assert_eq!(reason(graded_texts(&["1e400"], &["null"])), Some(Reason::ValueMismatch));
    assert_eq!(
        reason(graded_texts(&["1e400"], &["1e401"])),
        Some(Reason::ValueMismatch)
    );
    assert_eq!(
        reason(graded_texts(&["-1e400"], &["1e400"])),
        Some(Reason::ValueMismatch)
    );
    assert_eq!(graded_texts(&["1e400"], &["1.0000E+400"]), None);
    assert_eq!(graded_texts(&["\"1e400\""], &["1e400"]), None, "as a string too");
    assert_eq!(graded_texts(&["1e-400"], &["1.00001e-400"]), None);
    // Forty digits, by their digits.
    let forty = "1234567890123456789012345678901234567890";
    assert_eq!(graded_texts(&[forty], &["1.2345e39"]), None);
    assert_eq!(
        reason(graded_texts(&[forty], &["1.2355e39"])),
        Some(Reason::ValueMismatch)
    );
    assert_eq!(
        reason(graded_texts(&[forty], &["1234567890123456789012345678901234567890000"])),
        Some(Reason::ValueMismatch)
    );
    // Zero has no sign.
    assert_eq!(graded_texts(&["-0"], &["0"]), None);
    assert_eq!(graded_texts(&["-0.0e7"], &["\"0\""]), None);
    // NULL equals only NULL.
    assert_eq!(graded_texts(&["null"], &["null"]), None);
    for other in ["0", "\"\"", "\"null\"", "false"] {
        assert_eq!(
            reason(graded_texts(&["null"], &[other])),
            Some(Reason::ValueMismatch),
            "{other}"
        );
        assert_eq!(
            reason(graded_texts(&[other], &["null"])),
            Some(Reason::ValueMismatch),
            "{other}"
        );
    }
    // NaN and Infinity sent as strings are text: equal to themselves
    // only, never a number or NULL.
    assert_eq!(graded_texts(&["\"NaN\""], &["\"NaN\""]), None);
    assert_eq!(graded_texts(&["\"Infinity\""], &["\"Infinity\""]), None);
    for (agent, truth) in [
        ("\"NaN\"", "null"),
        ("\"Infinity\"", "1e400"),
        ("\"-Infinity\"", "\"Infinity\""),
        ("\"inf\"", "\"Infinity\""),
    ] {
        assert_eq!(
            reason(graded_texts(&[agent], &[truth])),
            Some(Reason::ValueMismatch),
            "{agent} {truth}"
        );
    }
    // An exponent no key holds compares as its text.
    assert_eq!(
        graded_texts(&["1e99999999999999999999"], &["1e99999999999999999999"]),
        None
    );
    assert_eq!(
        reason(graded_texts(&["1e99999999999999999999"], &["1E99999999999999999999"])),
        Some(Reason::ValueMismatch)
    );
}

#[test]
fn nulls_dates_and_text_compare_as_they_are() {
    assert_eq!(
        graded(json!([[null, "2024-01-01"]]), json!([[null, "2024-01-01"]])),
        None
    );
    assert_eq!(
        reason(graded(json!([["2024-01-01T00:00:00.000"]]), json!([["2024-01-01"]]))),
        Some(Reason::ValueMismatch)
    );
    assert_eq!(
        reason(graded(json!([[null]]), json!([[0]]))),
        Some(Reason::ValueMismatch)
    );
    assert_eq!(
        reason(graded(json!([[""]]), json!([[null]]))),
        Some(Reason::ValueMismatch)
    );
    assert_eq!(graded(json!([[true, [1, 2]]]), json!([["true", [1, 2]]])), None);
}

#[test]
fn rows_are_a_multiset() {
    let truth = json!([["a"], ["a"], ["b"]]);
    assert_eq!(graded(json!([["b"], ["a"], ["a"]]), truth.clone()), None);
    assert_eq!(
        reason(graded(json!([["a"], ["b"], ["b"]]), truth.clone())),
        Some(Reason::ValueMismatch)
    );
    let miss = graded(json!([["a"], ["b"]]), truth.clone()).unwrap();
    assert_eq!(miss.score_reason, Some(Reason::RowCountMismatch));
    assert_eq!(
        miss.analysis.as_deref().unwrap(),
        "the agent returned 2 rows, the ground truth has 3"
    );
    let miss = graded(json!([["a"], ["b"], ["a"], ["a"]]), truth).unwrap();
    assert_eq!(miss.score_reason, Some(Reason::UnexpectedRows));
}

#[test]
fn reasons_come_in_cubes_order() {
    let miss = graded(json!([["a"]]), json!([["a", 1], ["b", 2]])).unwrap();
    assert_eq!(miss.score_reason, Some(Reason::MissingColumns));
    assert_eq!(
        miss.analysis.as_deref().unwrap(),
        "the agent returned 1 column, the ground truth has 2"
    );
}

#[test]
fn empty_and_one_column_results() {
    assert_eq!(graded(json!([]), json!([])), None);
    assert_eq!(graded(json!([[1]]), json!([[1]])), None);
    // An empty result still has its columns (from its schema).
    let named = |rows: &Value| Sheet {
        names: vec!["n".into()],
        ..sheet("n", rows)
    };
    let (none, some) = (named(&json!([])), named(&json!([[1]])));
    assert_eq!(
        reason(grade(&none, &some, None).unwrap()),
        Some(Reason::RowCountMismatch)
    );
    assert_eq!(reason(grade(&some, &none, None).unwrap()), Some(Reason::UnexpectedRows));
    assert_eq!(reason(graded(json!([]), json!([[1]]))), Some(Reason::MissingColumns));
}

#[test]
fn two_equal_truth_columns_need_two_agent_columns() {
    let truth = json!([[1, 1], [2, 2]]);
    assert_eq!(graded(json!([[1, 1], [2, 2]]), truth.clone()), None);
    assert_eq!(
        reason(graded(json!([[1, "x"], [2, "y"]]), truth)),
        Some(Reason::ValueMismatch)
    );
}

#[test]
fn columns_that_match_alone_must_also_pair_row_by_row() {
    let truth = json!([["East", 1], ["West", 2]]);
    assert_eq!(graded(json!([["East", 2, 1], ["West", 1, 2]]), truth.clone()), None);
    let miss = graded(json!([["East", 2], ["West", 1]]), truth).unwrap();
    assert_eq!(miss.score_reason, Some(Reason::ValueMismatch));
    assert!(
        miss.analysis.as_deref().unwrap().contains("not row by row"),
        "{}",
        miss.analysis.as_deref().unwrap()
    );
}

#[test]
fn a_month_and_its_rank_are_told_apart() {
    // Both columns hold 1..12, nothing else tells the rows apart, and
    // the first pairing tried is the wrong one.
    let truth: Vec<Value> = (1..=12).map(|m| json!([m, (m * 5) % 12 + 1])).collect();
    let agent: Vec<Value> = (1..=12).map(|m| json!([(m * 5) % 12 + 1, m])).collect();
    assert_eq!(graded(Value::Array(agent), Value::Array(truth)), None);
    // With a third column.
    let rows: Vec<Value> = (1..=12).map(|m| json!([m, 13 - m, m * 100])).collect();
    let truth = Value::Array(rows.clone());
    assert_eq!(graded(truth.clone(), truth.clone()), None);
    let swapped: Vec<Value> = (1..=12).map(|m| json!([13 - m, m * 100, m])).collect();
    assert_eq!(graded(Value::Array(swapped), truth.clone()), None);
    // Origin and destination cities.
    let trips = json!([
        ["Oslo", "Rome", 3],
        ["Rome", "Oslo", 5],
        ["Oslo", "Paris", 2],
        ["Paris", "Rome", 1]
    ]);
    let reordered = json!([
        [1, "Rome", "Paris"],
        [2, "Paris", "Oslo"],
        [5, "Oslo", "Rome"],
        [3, "Rome", "Oslo"]
    ]);
    assert_eq!(graded(reordered, trips.clone()), None);
    let wrong = json!([
        [1, "Paris", "Rome"],
        [2, "Oslo", "Paris"],
        [5, "Rome", "Oslo"],
        [3, "Oslo", "Rome"]
    ]);
    assert_eq!(graded(wrong, trips), None, "the same trips, columns swapped");
}

#[test]
fn the_analysis_names_the_row_the_column_and_both_values() {
    let truth = Sheet {
        names: vec!["region".into(), "revenue".into()],
        ..sheet("c", &json!([["East", 6646], ["West", 10787]]))
    };
    let agent = sheet("a", &json!([["East", 6646], ["West", 10900]]));
    let miss = grade(&agent, &truth, None).unwrap().unwrap();
    assert_eq!(miss.score_reason, Some(Reason::ValueMismatch));
    assert_eq!(
        miss.analysis.as_deref().unwrap(),
        "column 2 of the ground truth (revenue) has no match: row West 10787 vs 10900"
    );
    // Without a column to find the row by, what each side lacks.
    let miss = graded(json!([[1], [5], [3]]), json!([[1], [2], [3]])).unwrap();
    assert_eq!(
        miss.analysis.as_deref().unwrap(),
        "column 1 of the ground truth (c1) has no match: the ground truth has 2 where the agent has 5"
    );
}

#[test]
fn wide_results_of_equal_columns_are_matched_at_once() {
    // 500 columns of equal values on both sides: every agent column is
    // a candidate for every truth column (500! assignments).
    let row = Value::Array(vec![json!(1); 500]);
    let rows = Value::Array(vec![row; 200]);
    let agent = sheet("a", &rows);
    let truth = sheet("c", &rows);
    assert_eq!(grade_within(&agent, &truth, None, 10_000).unwrap(), None);
}

#[test]
fn a_search_past_its_bound_says_so() {
    let rows: Vec<Value> = (0..12)
        .map(|m| json!([m, (m * 5) % 12, (m * 7) % 12, 11 - m]))
        .collect();
    let truth = sheet("c", &Value::Array(rows.clone()));
    // Columns and rows in other orders: only a search pairs them.
    let reversed: Vec<Value> = rows
        .iter()
        .rev()
        .map(|row| {
            let cells = row.as_array().unwrap();
            Value::Array(cells.iter().rev().cloned().collect())
        })
        .collect();
    // One more agent column of the same values: the columns cannot be
    // told apart one for one, so only the search decides.
    let widened: Vec<Value> = reversed
        .iter()
        .map(|row| {
            let mut cells = row.as_array().unwrap().clone();
            cells.push(cells[0].clone());
            Value::Array(cells)
        })
        .collect();
    let agent = sheet("a", &Value::Array(widened));
    assert_eq!(grade_within(&agent, &truth, None, SEARCH_BUDGET).unwrap(), None);
    let miss = grade_within(&agent, &truth, None, 20).unwrap().unwrap();
    assert_eq!(miss.verdict, Some(Verdict::Review));
    assert!(
        miss.analysis
            .as_deref()
            .unwrap()
            .starts_with("undecided: 4 ground-truth columns share their values with 5 agent columns"),
        "{}",
        miss.analysis.as_deref().unwrap()
    );
}

#[test]
fn grading_stops_at_the_deadline() {
    let rows: Vec<Value> = (0..12).map(|m| json!([m, 11 - m])).collect();
    let truth = sheet("c", &Value::Array(rows.clone()));
    let past = Instant::now();
    assert_eq!(grade(&truth, &truth, Some(past)), Err(OutOfTime));
}

#[test]
fn a_cell_no_rust_string_can_hold_is_kept_as_sent() {
    let cut = r#""Burger \ud83c""#;
    assert_eq!(reason(graded_texts(&[r#""""#], &[cut])), Some(Reason::ValueMismatch));
    assert_eq!(
        reason(graded_texts(&[r#""Burger ""#], &[cut])),
        Some(Reason::ValueMismatch)
    );
    assert_eq!(graded_texts(&[cut], &[cut]), None);
    let array = r#"["\ud83c"]"#;
    assert_eq!(reason(graded_texts(&["null"], &[array])), Some(Reason::ValueMismatch));
    assert_eq!(
        reason(graded_texts(&[r#""null""#], &[array])),
        Some(Reason::ValueMismatch)
    );
    assert_eq!(graded_texts(&[array], &[array]), None);
}

/// `width` columns of `rows` rows, each column a different ordering of
/// 0..rows (ranks by several measures): every column holds the values of
/// every other.
fn rank_columns(width: usize, rows: usize) -> Vec<Vec<String>> {
    let columns: Vec<Vec<usize>> = (0..width)
        .map(|seed| {
            let mut column: Vec<usize> = (0..rows).collect();
            fastrand::Rng::with_seed(seed as u64).shuffle(&mut column);
            column
        })
        .collect();
    (0..rows)
        .map(|row| columns.iter().map(|column| column[row].to_string()).collect())
        .collect()
}

/// `rows` with their columns in `order`.
fn reordered(rows: &[Vec<String>], order: &[usize]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|cells| order.iter().map(|&column| cells[column].clone()).collect())
        .collect()
}

/// Grades tables given as rows of JSON texts with the search allowed
/// `budget` steps.
fn graded_rows_within(agent: &[Vec<String>], truth: &[Vec<String>], budget: u64) -> Option<CubeGrade> {
    grade_within(&rows_sheet(agent), &rows_sheet(truth), None, budget).unwrap()
}

#[test]
fn an_identical_result_in_another_column_order_passes_without_a_search() {
    let truth = rank_columns(200, 500);
    let mut order: Vec<usize> = (0..200).collect();
    fastrand::Rng::with_seed(7).shuffle(&mut order);
    let agent = reordered(&truth, &order);
    // No step of the search is allowed: the first matching is the answer.
    assert_eq!(graded_rows_within(&agent, &truth, 0), None);
    order.reverse();
    assert_eq!(graded_rows_within(&reordered(&truth, &order), &truth, 0), None);
}

#[test]
fn an_identical_result_in_another_column_and_row_order_passes_without_a_search() {
    let truth = rank_columns(500, 300);
    let mut order: Vec<usize> = (0..500).collect();
    fastrand::Rng::with_seed(11).shuffle(&mut order);
    let mut agent = reordered(&truth, &order);
    fastrand::Rng::with_seed(12).shuffle(&mut agent);
    assert_eq!(graded_rows_within(&agent, &truth, 0), None);
    // A changed cell is still found, and said of its column.
    agent[3][7] = "\"changed\"".into();
    let miss = graded_rows_within(&agent, &truth, 1_000).expect("a miss");
    assert_eq!(miss.score_reason, Some(Reason::ValueMismatch), "{miss:?}");
}

#[test]
fn no_verdict_is_given_past_the_deadline() {
    let past = Some(std::time::Instant::now() - std::time::Duration::from_millis(1));
    let truth = rows_sheet(&rank_columns(3, 20));
    // However it ends, a grading past the deadline is out of time: a row
    // count that differs, a missing column, an identical result.
    for agent in [rank_columns(3, 19), rank_columns(2, 20), rank_columns(3, 20)] {
        assert!(grade(&rows_sheet(&agent), &truth, past).is_err());
    }
}

/// A JSON string as `JSON.stringify` may send it: plain text, NUL, every
/// escape, a pair of surrogates and a lone one (a name cut inside an
/// emoji).
fn escaped_string() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "a",
        "Burger ",
        "\\u0000",
        "\\ud83c",
        "\\udf54",
        "\\ud83c\\udf54",
        "\\n",
        "\\r",
        "\\t",
        "\\b",
        "\\f",
        "\\\"",
        "\\\\",
        "\\/",
        "\\u00e9",
        "é",
        "\\u0041",
        "",
    ]);
    prop::collection::vec(piece, 0..5).prop_map(|pieces| format!("\"{}\"", pieces.concat()))
}

/// A table of small values (so columns often share them), as rows of
/// JSON texts.
fn table() -> impl Strategy<Value = Vec<Vec<String>>> {
    let cell = prop_oneof![
        (0..4i32).prop_map(|n| n.to_string()),
        (0..3i32).prop_map(|n| format!("\"{n}\"")),
        prop::sample::select(vec!["\"a\"", "\"b\"", "null", "1.0", "-0"]).prop_map(str::to_string),
    ];
    (1..5usize, 0..14usize)
        .prop_flat_map(move |(width, rows)| prop::collection::vec(prop::collection::vec(cell.clone(), width), rows))
}

/// A table whose columns all hold the same values in other orders (a
/// month and its rank), so most pairings of columns are wrong.
fn ambiguous_table() -> impl Strategy<Value = Vec<Vec<String>>> {
    (2..6usize, 2..10usize).prop_flat_map(|(width, rows)| {
        let base = prop::collection::vec(0..4i32, rows);
        (base, prop::collection::vec(any::<u64>(), width)).prop_map(move |(base, seeds)| {
            let columns: Vec<Vec<i32>> = seeds
                .iter()
                .map(|&seed| {
                    let mut column = base.clone();
                    fastrand::Rng::with_seed(seed).shuffle(&mut column);
                    column
                })
                .collect();
            (0..base.len())
                .map(|row| columns.iter().map(|column| column[row].to_string()).collect())
                .collect()
        })
    })
}

/// A sheet of rows of JSON texts, its columns named `c0…`.
fn rows_sheet(rows: &[Vec<String>]) -> Sheet {
    let mut sheet = Sheet {
        names: (0..rows.first().map_or(0, Vec::len)).map(|i| format!("c{i}")).collect(),
        ..Sheet::default()
    };
    push_texts(&mut sheet, rows);
    sheet
}

/// Grades tables given as rows of JSON texts.
fn graded_rows(agent: &[Vec<String>], truth: &[Vec<String>]) -> Option<CubeGrade> {
    grade(&rows_sheet(agent), &rows_sheet(truth), None).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn any_result_passes_against_itself_reordered_renamed_and_widened(
        truth in prop_oneof![table(), ambiguous_table()],
        seed in any::<u64>(),
        extra in prop::collection::vec(prop::sample::select(vec!["0", "1", "\"a\"", "null"]), 0..3),
    ) {
        let width = truth.first().map_or(0, Vec::len);
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut order: Vec<usize> = (0..width + extra.len()).collect();
        rng.shuffle(&mut order);
        let mut rows = truth.clone();
        rng.shuffle(&mut rows);
        let agent: Vec<Vec<String>> = rows
            .iter()
            .enumerate()
            .map(|(row, cells)| {
                order
                    .iter()
                    .map(|&column| match cells.get(column) {
                        Some(cell) => cell.clone(),
                        // An extra column: any value, not one per row.
                        None => extra[(column - width + row) % extra.len()].to_string(),
                    })
                    .collect()
            })
            .collect();
        prop_assert_eq!(graded_rows(&truth, &truth), None);
        prop_assert_eq!(graded_rows(&agent, &truth), None);
    }

    #[test]
    fn an_identical_result_passes_in_any_column_order_whatever_its_strings_hold(
        strings in prop::collection::vec(prop::collection::vec(escaped_string(), 6), 1..12),
        ranks in 0..40usize,
        seed in any::<u64>(),
    ) {
        let rows = strings.len();
        let truth: Vec<Vec<String>> = strings
            .into_iter()
            .zip(rank_columns(ranks, rows))
            .map(|(mut cells, ranks)| {
                cells.extend(ranks);
                cells
            })
            .collect();
        let mut order: Vec<usize> = (0..truth[0].len()).collect();
        fastrand::Rng::with_seed(seed).shuffle(&mut order);
        // No step of the search is allowed: the first matching is the answer.
        prop_assert_eq!(graded_rows_within(&reordered(&truth, &order), &truth, 0), None);
    }

    #[test]
    fn a_changed_cell_fails_with_a_value_mismatch_naming_it(
        truth in table().prop_filter("a row", |rows| !rows.is_empty()),
        row in any::<prop::sample::Index>(),
        column in any::<prop::sample::Index>(),
    ) {
        let mut agent = truth.clone();
        let row = row.index(agent.len());
        let column = column.index(agent[row].len());
        agent[row][column] = "\"changed\"".to_string();
        let miss = graded_rows(&agent, &truth).expect("a changed cell fails");
        prop_assert_eq!(miss.score_reason, Some(Reason::ValueMismatch));
        let original = serde_json::from_str::<Value>(&truth[row][column]).unwrap();
        let original = original.as_str().map_or(original.to_string(), str::to_string);
        prop_assert!(
            miss.analysis.as_deref().unwrap().contains("changed") || miss.analysis.as_deref().unwrap().contains(&original),
            "{}", miss.analysis.as_deref().unwrap()
        );
    }
}

#[test]
fn a_failed_result_is_shown_beside_the_ground_truth_fifty_rows_a_side() {
    // 120 months; the agent's rows reversed, one revenue off and one
    // month missing, replaced by a month the ground truth lacks.
    let truth: Vec<Vec<String>> = (0..120)
        .map(|month| vec![format!("\"m{month:03}\""), format!("{}", month * 10)])
        .collect();
    let mut agent: Vec<Vec<String>> = truth.iter().rev().cloned().collect();
    agent[119 - 3][1] = "99999".to_string();
    agent[119 - 7] = vec!["\"m999\"".to_string(), "70".to_string()];
    let miss = graded_rows(&agent, &truth).expect("a failure");
    let comparison = miss.comparison.expect("both results");
    assert_eq!((comparison.ground_truth_rows, comparison.agent_rows), (120, 120));
    let truths: Vec<&RowPair> = comparison
        .rows
        .iter()
        .filter(|row| row.ground_truth.is_some())
        .collect();
    assert_eq!(truths.len(), SHOWN_ROWS);
    let month = |cells: &Option<Vec<Option<String>>>| cells.as_ref().unwrap()[0].clone().unwrap();
    for (at, row) in truths.iter().enumerate() {
        assert_eq!(month(&row.ground_truth), format!("m{at:03}"));
        match at {
            // Paired by its month, the revenue marked.
            3 => {
                assert_eq!(month(&row.agent), "m003");
                assert_eq!(row.differs, [1]);
            }
            // Paired with the row that shares its revenue, the month marked.
            7 => {
                assert_eq!(month(&row.agent), "m999");
                assert_eq!(row.differs, [0]);
            }
            _ => {
                assert_eq!(row.agent, row.ground_truth);
                assert!(row.differs.is_empty());
            }
        }
    }
    let agents = comparison.rows.iter().filter(|row| row.agent.is_some()).count();
    assert!(agents <= SHOWN_ROWS, "{agents}");
}
