//! Expectations on a chat, for CI smoke checks (`ask --expect-*`, `check`):
//! the final answer matches, some SQL query matches, a tool was called, the
//! selected result has enough rows. Each unmet one is a line saying what was
//! expected and what came.

use crate::output::shorten;
use crate::results::{same_tool, Picker};
use crate::settings::Expectations;
use crate::stream::transcript::{Event, Transcript};
use crate::stream::turn::Renderer;

/// How much of what came is quoted in a failure line.
const QUOTE_CHARS: usize = 120;

/// The expectations of a turn, and the SQL result `--min-rows` counts,
/// kept as the turn goes.
pub struct Check {
    expectations: Expectations,
    picker: Option<Picker>,
}

impl Renderer for Check {
    fn event(&mut self, event: &Event) {
        if let Some(picker) = &mut self.picker {
            picker.event(event);
        }
    }
}

impl Check {
    /// A check of `expectations`.
    pub fn new(expectations: Expectations) -> Self {
        let picker = expectations.min_rows.map(|(_, pick)| Picker::new(pick));
        Check { expectations, picker }
    }

    /// One line per unmet expectation; empty when all are met.
    pub fn unmet(&self, transcript: &Transcript) -> Vec<String> {
        let expectations = &self.expectations;
        let mut unmet = Vec::new();
        if let Some(pattern) = &expectations.answer {
            match transcript.answer() {
                Some((text, _)) if pattern.is_match(text) => {}
                Some((text, _)) => unmet.push(format!(
                    "expected the answer to match /{pattern}/, got {:?}",
                    quote(text)
                )),
                None => unmet.push(format!("expected the answer to match /{pattern}/, got no answer")),
            }
        }
        if let Some(pattern) = &expectations.sql {
            let queries = transcript.sql_queries();
            if !queries.iter().any(|sql| pattern.is_match(sql)) {
                let came = match queries {
                    [] => "the agent ran no SQL query".to_string(),
                    [one] => format!("the query was {:?}", quote(one)),
                    many => format!(
                        "none of its {} queries did; the last was {:?}",
                        many.len(),
                        quote(&many[many.len() - 1])
                    ),
                };
                unmet.push(format!("expected a SQL query matching /{pattern}/; {came}"));
            }
        }
        let called = transcript.tools_called();
        for tool in &expectations.tools {
            if !called.iter().any(|name| same_tool(name, tool)) {
                let came = if called.is_empty() {
                    "none".to_string()
                } else {
                    called.iter().map(String::as_str).collect::<Vec<_>>().join(", ")
                };
                unmet.push(format!("expected a call to tool {tool}; the agent called: {came}"));
            }
        }
        if let (Some((min, pick)), Some(picker)) = (expectations.min_rows, &self.picker) {
            let which = pick.describe();
            match picker.picked() {
                Ok(result) => {
                    let rows = result.total_rows.unwrap_or(result.rows.len() as u64);
                    if rows < min {
                        unmet.push(format!(
                            "expected at least {min} rows in {which}; it has {rows} (totalRows)"
                        ));
                    }
                }
                Err(err) => unmet.push(format!("expected at least {min} rows in {which}; {err}")),
            }
        }
        unmet
    }
}

fn quote(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => shorten(&one_line),
    }
}
