//! `-o csv`: one SQL result as RFC 4180 CSV with a header row of column
//! names; values exactly as the service sent them (null → empty field).

use std::io::Write;

use anyhow::Result;
use serde_json::Value;

use crate::results::SqlResult;

/// Writes the header and every row of `result`.
pub fn write(result: &SqlResult, out: &mut impl Write) -> Result<()> {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(out);
    writer.write_record(result.columns.iter().map(|c| c.name.as_str()))?;
    let mut fields: Vec<String> = Vec::with_capacity(result.columns.len());
    for row in &result.rows {
        fields.clear();
        fields.extend(row.iter().map(field_text));
        writer.write_record(&fields)?;
    }
    writer.flush()?;
    Ok(())
}

/// A value as CSV text: strings as they are, numbers and booleans as their
/// JSON text, null as empty, anything nested as compact JSON.
pub fn field_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
