//! Which SQL result of a stream an output uses (`--query`), kept as the
//! stream goes: [`Picker`] holds the one result its [`Pick`] selects.

use super::SqlResult;
use crate::error::{Fault, Kind};

/// Which SQL result of a stream an output uses (`--query`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// The last SQL result that did not fail.
    Last,
    /// The n-th SQL result of the stream, counting from 1.
    Index(usize),
}

impl Pick {
    /// How messages name the result: `the last SQL result`, `SQL result 2`.
    pub fn describe(self) -> String {
        match self {
            Pick::Last => "the last SQL result".to_string(),
            Pick::Index(n) => format!("SQL result {n}"),
        }
    }
}

/// Keeps, of the SQL results offered in stream order, the one a [`Pick`]
/// selects, and no other: memory holds one result, not the stream's.
#[derive(Debug)]
pub struct Picker {
    pick: Pick,
    seen: usize,
    picked: Option<SqlResult>,
    last_error: Option<String>,
}

impl Picker {
    /// A picker of `pick`'s result.
    pub fn new(pick: Pick) -> Self {
        Picker {
            pick,
            seen: 0,
            picked: None,
            last_error: None,
        }
    }

    /// True when no SQL result was offered at all.
    pub fn is_empty(&self) -> bool {
        self.seen == 0
    }

    /// Forgets every result offered so far.
    pub fn forget(&mut self) {
        *self = Picker::new(self.pick);
    }

    /// Offers the next SQL result of the stream; it is copied only when
    /// it is the one picked so far.
    pub fn offer(&mut self, result: &SqlResult) {
        self.seen += 1;
        if let Some(error) = &result.error {
            self.last_error = Some(error.clone());
        }
        let keep = match self.pick {
            Pick::Last => result.error.is_none(),
            Pick::Index(n) => n == self.seen,
        };
        if keep {
            self.picked = Some(result.clone());
        }
    }

    /// The picked result, or why there is none: no SQL result or index out
    /// of range (a bad stream), the chosen query failed (a tool error).
    pub fn picked(&self) -> Result<&SqlResult, Fault> {
        let none = || {
            Fault::new(
                Kind::NothingToRender,
                "the stream has no SQL result: the agent ran no query",
            )
        };
        match self.pick {
            Pick::Last => self.picked.as_ref().ok_or_else(|| match &self.last_error {
                None => none(),
                Some(error) => Fault::new(
                    Kind::ToolError,
                    format!("every SQL query of the stream failed; the last error: {error}"),
                ),
            }),
            Pick::Index(_) if self.seen == 0 => Err(none()),
            Pick::Index(n) => {
                let result = self.picked.as_ref().ok_or_else(|| {
                    Fault::new(
                        Kind::NothingToRender,
                        format!("--query {n}: the stream has only {} SQL result(s)", self.seen),
                    )
                })?;
                match &result.error {
                    Some(error) => Err(Fault::new(Kind::ToolError, format!("SQL query {n} failed: {error}"))),
                    None => Ok(result),
                }
            }
        }
    }

    /// The picked result, to complete it (`--all-rows`), or why there is none.
    pub fn picked_mut(&mut self) -> Result<&mut SqlResult, Fault> {
        self.picked()?;
        self.picked
            .as_mut()
            .ok_or_else(|| Fault::new(Kind::Unexpected, "the picked SQL result went missing"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ToolResult;
    use serde_json::json;

    fn sent(value: serde_json::Value) -> ToolResult {
        ToolResult::new(value.to_string())
    }

    fn sql(id: &str, error: Option<&str>) -> SqlResult {
        let result = match error {
            Some(error) => json!({ "error": error }),
            None => json!({"schema": [{"name": "n", "column_type": "Int64"}], "data": [[id]]}),
        };
        SqlResult::from_tool_call(id, "semanticSqlApi", &json!({}), &sent(result))
    }

    #[test]
    fn the_picker_keeps_what_its_pick_selects() {
        let mut last = Picker::new(Pick::Last);
        let mut second = Picker::new(Pick::Index(2));
        for result in [sql("a", None), sql("b", None), sql("c", Some("boom"))] {
            last.offer(&result);
            second.offer(&result);
        }
        assert_eq!(last.picked().unwrap().id, "b");
        assert_eq!(second.picked().unwrap().id, "b");
        let mut failed = Picker::new(Pick::Last);
        failed.offer(&sql("a", Some("no such member")));
        assert_eq!(failed.picked().unwrap_err().kind, Kind::ToolError);
        let mut third = Picker::new(Pick::Index(3));
        third.offer(&sql("a", None));
        assert_eq!(
            third.picked().unwrap_err().to_string(),
            "--query 3: the stream has only 1 SQL result(s)"
        );
        assert_eq!(
            Picker::new(Pick::Last).picked().unwrap_err().kind,
            Kind::NothingToRender
        );
    }
}
