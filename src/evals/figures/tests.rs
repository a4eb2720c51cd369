//! The figure finder on answers as agents write them (the real streams'
//! and the examples'), the matcher on a small result, and properties: a
//! number of the rows written at any precision, suffix or grouping is
//! supported; one moved past its rounding never is.

use proptest::prelude::*;

use super::find::figures;
use super::*;
use crate::results::SqlResult;

fn texts(answer: &str, question: &str) -> Vec<String> {
    figures(answer, question)
        .into_iter()
        .map(|figure| figure.text)
        .collect()
}

fn values(answer: &str) -> Vec<f64> {
    figures(answer, "").into_iter().map(|figure| figure.value).collect()
}

#[test]
fn cubes_documented_answer_states_two_figures_and_no_date() {
    // cube-docs-chat-api-example.ndjson's final answer.
    let answer = "Based on your revenue data, here are the key trends:\n\n\
        📈 **Overall Growth**: 15% increase over the 6-month period\n\
        💰 **Peak Month**: March 2024 with $2.3M revenue\n\
        📊 **Steady Growth**: Consistent month-over-month growth of 2-3%\n\n\
        Would you like me to break this down by product category or region?";
    assert_eq!(
        texts(answer, "Show me revenue trends for the last 6 months"),
        ["15%", "$2.3M"]
    );
    let money = &figures(answer, "")[1];
    assert_eq!((money.value, money.half), (2_300_000.0, 50_000.0));
}

#[test]
fn vietnamese_answers_with_decimal_commas_and_dot_groups_are_read_as_written() {
    // hybrid-cubechat-arc-int64.ndjson.
    let answer = "Tôi đã lấy được dữ liệu doanh thu bán hàng cho tháng 12/2025. Kết quả cho thấy:\n\n\
        - **Tổng doanh thu**: 45,7 tỷ đồng\n- **Số giao dịch**: 16.688 giao dịch\n\
        - **Số khách hàng**: 4.776 khách hàng duy nhất\n- **Số đơn hàng**: 8.571 đơn hàng\n\n\
        Đây là một con số doanh thu khá tốt cho tháng này với gần 17.000 giao dịch từ gần 5.000 khách hàng!";
    assert_eq!(values(answer), [45.7e9, 16688.0, 4776.0, 8571.0, 17000.0, 5000.0]);
    // hybrid-cubechat-vegaspec-null-measure-colname.ndjson.
    let answer = "Doanh thu tháng 12 năm 2025 là **45,7 tỷ đồng** (chính xác là 45.713.496.754 VNĐ).";
    assert_eq!(texts(answer, ""), ["45,7 tỷ", "45.713.496.754"]);
    assert_eq!(values(answer), [45.7e9, 45_713_496_754.0]);
    // hybrid-cubechat-line-48rows.ndjson: months are no figures.
    let answer = "xu hướng doanh thu theo từng tháng từ tháng 1/2022 đến tháng 12/2025.\n\n\
        - **Tháng cao nhất**: Tháng 11/2025 đạt khoảng 305,6 tỷ đồng\n\
        - **Xu hướng**: (đặc biệt là tháng 1 và tháng 11)\n\
        - **Dữ liệu gần nhất**: Tháng 12/2025 mới bắt đầu nên doanh thu chỉ đạt khoảng 41,6 tỷ đồng";
    assert_eq!(texts(answer, ""), ["305,6 tỷ", "41,6 tỷ"]);
}

#[test]
fn list_numbers_rankings_names_and_years_are_no_figures() {
    // hybrid-cubechat-store-revenue-86rows.ndjson.
    let answer = "Tôi đã tạo báo cáo doanh thu năm 2025 theo từng cửa hàng cho bạn. Báo cáo hiển thị 86 cửa hàng.\n\n\
        **Một số điểm nổi bật:**\n\n- **Top 3 cửa hàng có doanh thu cao nhất:**\n\
        \x20 1. Kho Hàng Kênh TMĐT1 (Hà Nội): ~124.9 tỷ đồng\n\
        \x20 2. Showroom Aeon Mall Hà Đông (Hà Nội): ~55.5 tỷ đồng\n\
        \x20 3. Showroom Aeon Mall Hải Phòng: ~54.5 tỷ đồng\n";
    assert_eq!(texts(answer, ""), ["86", "124.9 tỷ", "55.5 tỷ", "54.5 tỷ"]);
    let answer = "## 1. Revenue in Q3 2024\n\n### 2.1 By region\n\n\
        Orders rose 40% from 2024-01-15 to Jan 31, 2024 at 10:30; COVID-19 cut the 3rd week. \
        Run `SELECT 42` yourself.\n\n```sql\nSELECT 7\n```\n\nThe 5 stores sold 1 234 units (v2.1, SKU-123).";
    assert_eq!(texts(answer, ""), ["40%", "5", "1 234"]);
}

#[test]
fn every_written_form_the_contract_names_is_a_figure() {
    let answer = "| Region | Orders | Revenue |\n|---|---|---|\n| North | **1,234** | €2.4M |\n\n\
        Revenue was 5.0K, then -7, up 2.3x and 40 percent, or 1.2 million and +12%.";
    let found = figures(answer, "");
    let shown: Vec<(&str, f64)> = found.iter().map(|f| (f.text.as_str(), f.value)).collect();
    assert_eq!(
        shown,
        [
            ("1,234", 1234.0),
            ("€2.4M", 2_400_000.0),
            ("5.0K", 5000.0),
            ("-7", -7.0),
            ("2.3x", 2.3),
            ("40 percent", 40.0),
            ("1.2 million", 1_200_000.0),
            ("+12%", 12.0)
        ]
    );
    assert!(found[4].times && found[5].percent && found[3].signed && !found[0].signed);
    assert_eq!(found[2].half, 50.0);
}

fn orders() -> Evidence {
    let header = ["region".to_string(), "orders".to_string()];
    let rows = [
        vec!["North".to_string(), "1234".to_string()],
        vec!["South".to_string(), "766".to_string()],
    ];
    let mut evidence = Evidence::new();
    evidence.add(&SqlResult::from_answer_table(1, &header, &rows));
    evidence
}

#[test]
fn each_kind_of_support_is_found_and_named() {
    let answer = "North had 1,234 orders of 2,000 (61.7%), 1.6x South's; South was 37.9% lower, \
        468 fewer, across 2 regions. The mean was 1,000.";
    let found = check(&orders(), answer, "");
    let bases: Vec<(&str, Option<Basis>)> = found
        .iter()
        .map(|f| (f.text.as_str(), f.by.as_ref().map(|by| by.basis)))
        .collect();
    assert_eq!(
        bases,
        [
            ("1,234", Some(Basis::Cell)),
            ("2,000", Some(Basis::Sum)),
            ("61.7%", Some(Basis::Share)),
            ("1.6x", Some(Basis::Ratio)),
            ("37.9%", Some(Basis::Change)),
            ("468", Some(Basis::Difference)),
            ("2", Some(Basis::Rows)),
            ("1,000", Some(Basis::Mean)),
        ]
    );
    assert_eq!(found[0].by.as_ref().unwrap().cells[0].column, "orders");
}

#[test]
fn an_unsupported_figure_names_its_nearest_value() {
    let found = check(&orders(), "North had 1,300 orders.", "");
    assert_eq!(found[0].supported, Some(false));
    assert_eq!(
        found[0].unsupported_line(),
        "Unsupported figure: 1,300 (nearest: 1,234 in orders)"
    );
    assert_eq!(
        unfaithful(&found, false),
        ["Unsupported figure: 1,300 (nearest: 1,234 in orders)"]
    );
    assert_eq!(
        unfaithful(&check(&Evidence::new(), "North had 1,300 orders.", ""), true),
        ["no rows to support the answer's figures: 1,300"]
    );
    // The question's numbers are not the answer's figures.
    assert!(check(&orders(), "The top 5 of 2,500 orders.", "the top 5 of 2,500 orders?").is_empty());
}

#[test]
fn a_figure_beyond_the_rows_read_is_unchecked_not_failed() {
    let header = ["n".to_string()];
    let rows: Vec<Vec<String>> = (0..1500).map(|n| vec![n.to_string()]).collect();
    let mut evidence = Evidence::new();
    evidence.add(&SqlResult::from_answer_table(1, &header, &rows));
    let found = check(&evidence, "The total is 1,124,250 and one row says 12.", "");
    assert_eq!(found[0].supported, None);
    assert!(
        found[0].unchecked.as_deref().unwrap().contains("1500 rows"),
        "{found:?}"
    );
    assert_eq!(found[1].supported, Some(true));
    assert!(unfaithful(&found, false).is_empty());
}

/// `n` written with `decimals` at `scale` (1, K, M, B) and grouped with
/// `separator`.
fn written(n: f64, scale: (f64, &str), decimals: usize, separator: &str) -> String {
    let scaled = format!("{:.*}", decimals, n / scale.0);
    let (whole, fraction) = scaled
        .split_once('.')
        .map_or((scaled.as_str(), None), |(w, f)| (w, Some(f)));
    let mut grouped = String::new();
    for (place, digit) in whole.chars().enumerate() {
        if place > 0 && (whole.len() - place) % 3 == 0 {
            grouped.push_str(separator);
        }
        grouped.push(digit);
    }
    match fraction {
        Some(fraction) => format!("{grouped}.{fraction}{}", scale.1),
        None => format!("{grouped}{}", scale.1),
    }
}

const SCALES: [(f64, &str); 4] = [(1.0, ""), (1e3, "K"), (1e6, "M"), (1e9, "B")];

proptest! {
    #[test]
    fn a_number_of_the_rows_written_any_way_is_supported(
        n in 10_000u64..900_000_000_000,
        scale in 0usize..4,
        decimals in 0usize..3,
        separator in prop::sample::select(vec![",", " ", "\u{a0}", ""]),
    ) {
        let scale = SCALES[scale];
        prop_assume!((n as f64) >= scale.0 * 10.0);
        let mut evidence = Evidence::new();
        evidence.add(&SqlResult::from_answer_table(1, &["total".to_string()], &[vec![n.to_string()]]));
        let text = written(n as f64, scale, decimals, separator);
        let found = check(&evidence, &format!("The total was {text}."), "");
        prop_assert_eq!(found.len(), 1, "{} found as {:?}", text, found);
        prop_assert_eq!(found[0].supported, Some(true), "{}", text);
    }

    #[test]
    fn a_number_moved_past_its_rounding_is_never_supported(
        n in 10_000u64..900_000_000_000,
        scale in 0usize..4,
        decimals in 0usize..3,
        up in any::<bool>(),
    ) {
        let scale = SCALES[scale];
        prop_assume!((n as f64) >= scale.0 * 10.0);
        let unit = scale.0 / 10f64.powi(decimals as i32);
        let rounded = (n as f64 / unit).round() * unit;
        let moved = if up { rounded + unit } else { rounded - unit };
        prop_assume!((moved - n as f64).abs() > unit / 2.0 * 1.000_001);
        let mut evidence = Evidence::new();
        evidence.add(&SqlResult::from_answer_table(1, &["total".to_string()], &[vec![n.to_string()]]));
        let text = written(moved, scale, decimals, ",");
        let found = check(&evidence, &format!("The total was {text}."), "");
        prop_assert_eq!(found.len(), 1, "{} found as {:?}", text, found);
        prop_assert_eq!(found[0].supported, Some(false), "{} against {}", text, n);
    }
}

proptest! {
    #[test]
    fn any_text_is_read_without_a_panic(
        answer in "[0-9a-zA-Z ,.%x×€$£¥:/\\-−+|*_#`~\n\u{a0}\u{202f}tỷháng]{0,80}",
        question in "[0-9 ,.a-z]{0,20}",
    ) {
        let found = check(&orders(), &answer, &question);
        // Each is a number as written (its formatting across Markdown's
        // emphasis joined), with a value.
        for figure in &found {
            prop_assert!(figure.text.chars().any(|c| c.is_ascii_digit()), "{:?}", figure);
            prop_assert!(!figure.value.is_nan());
        }
    }
}
