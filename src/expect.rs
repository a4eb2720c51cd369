//! Expectations on a chat, for CI smoke checks (`ask --expect-*`, `check`):
//! the final answer matches, some SQL query matches, a tool was called, the
//! selected result has enough rows. Each unmet one is a line saying what was
//! expected and what came.

use anyhow::Result;
use regex::Regex;

use crate::cli::QuerySelector;
use crate::exit::usage;
use crate::http::shorten;
use crate::stream::transcript::Transcript;

/// How much of what came is quoted in a failure line.
const QUOTE_CHARS: usize = 120;

/// What a chat must show to pass.
#[derive(Clone, Debug, Default)]
pub struct Expectations {
    answer: Option<Regex>,
    sql: Option<Regex>,
    tools: Vec<String>,
    min_rows: Option<u64>,
    query: Option<QuerySelector>,
}

impl Expectations {
    /// Compiles the expectations; a bad regular expression is a usage error
    /// naming `what` gave it (a flag, or a suite field).
    pub fn new(
        answer: Option<&str>,
        sql: Option<&str>,
        tools: &[String],
        min_rows: Option<u64>,
        query: QuerySelector,
        what: &str,
    ) -> Result<Self> {
        let compile = |pattern: Option<&str>, name: &str| {
            pattern
                .map(|p| {
                    Regex::new(p).map_err(|err| usage(format!("{what}{name} is not a valid regular expression: {err}")))
                })
                .transpose()
        };
        Ok(Expectations {
            answer: compile(answer, "expect-answer")?,
            sql: compile(sql, "expect-sql")?,
            tools: tools.to_vec(),
            min_rows,
            query: min_rows.map(|_| query),
        })
    }

    /// True when there is nothing to check.
    pub fn is_empty(&self) -> bool {
        self.answer.is_none() && self.sql.is_none() && self.tools.is_empty() && self.min_rows.is_none()
    }

    /// The SQL result the expectations need kept, if any (`--min-rows`).
    pub fn needs_query(&self) -> Option<QuerySelector> {
        self.query
    }

    /// One line per unmet expectation; empty when all are met.
    pub fn unmet(&self, transcript: &Transcript) -> Vec<String> {
        let mut unmet = Vec::new();
        if let Some(pattern) = &self.answer {
            match transcript.answer() {
                Some((text, _)) if pattern.is_match(text) => {}
                Some((text, _)) => unmet.push(format!(
                    "expected the answer to match /{pattern}/, got {:?}",
                    quote(text)
                )),
                None => unmet.push(format!("expected the answer to match /{pattern}/, got no answer")),
            }
        }
        if let Some(pattern) = &self.sql {
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
        for tool in &self.tools {
            if !called.iter().any(|name| same_tool(name, tool)) {
                let came = if called.is_empty() {
                    "none".to_string()
                } else {
                    called.join(", ")
                };
                unmet.push(format!("expected a call to tool {tool}; the agent called: {came}"));
            }
        }
        if let (Some(min), Some(query)) = (self.min_rows, self.query) {
            let which = match query {
                QuerySelector::Last => "the last SQL result".to_string(),
                QuerySelector::Index(n) => format!("SQL result {n}"),
            };
            match transcript.select(query) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_families_match_their_counterparts() {
        assert!(same_tool("cubeSqlApi", "semanticSqlApi"));
        assert!(same_tool("semanticMeta", "cubeMeta"));
        assert!(!same_tool("semanticMeta", "cubeSqlApi"));
        assert!(same_tool("otherTool", "otherTool"));
        assert!(!same_tool("otherTool", "semanticMeta"));
    }

    #[test]
    fn a_bad_pattern_is_a_usage_error_naming_its_source() {
        let err = Expectations::new(Some("("), None, &[], None, QuerySelector::Last, "--").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--expect-answer is not a valid regular expression"),
            "{err}"
        );
    }
}
