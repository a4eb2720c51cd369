//! Builds chat streams the way the service writes them (API document §3 and
//! `service-facts.md`): `__cutoff__`, user echo, thinking and content deltas,
//! tool-call start/result pairs as JSON-encoded strings, the `final` answer,
//! `__state__` with LangChain messages, `__usage__`, and the extra lines
//! (`{"error": …}`, `__suspended__`, `__aborted__`).

#![allow(dead_code)]

use serde_json::{json, Value};

/// The two spellings of the service's tools and main graph node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `semanticMeta`, `semanticSqlApi`, `semantic_data_analyst_agent`.
    Semantic,
    /// `cubeMeta`, `cubeSqlApi`, `cube_data_analyst_agent`.
    Cube,
}

impl Family {
    pub fn meta(self) -> &'static str {
        match self {
            Family::Semantic => "semanticMeta",
            Family::Cube => "cubeMeta",
        }
    }
    pub fn sql(self) -> &'static str {
        match self {
            Family::Semantic => "semanticSqlApi",
            Family::Cube => "cubeSqlApi",
        }
    }
    pub fn agent(self) -> &'static str {
        match self {
            Family::Semantic => "semantic_data_analyst_agent",
            Family::Cube => "cube_data_analyst_agent",
        }
    }
}

/// How the SQL tool's result carries its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `schema` + `data` as arrays of arrays.
    Arrays,
    /// `data` as objects keyed by member + `annotation`.
    Objects,
}

/// How a SQL result's `vegaSpec` is sent: the live service sends a JSON
/// string, an object, or null.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecForm {
    Text,
    Object,
    Null,
}

/// A SQL tool call's content.
#[derive(Clone, Debug)]
pub struct SqlCall {
    pub sql: String,
    pub title: String,
    /// (name, column_type as in `schema`)
    pub columns: Vec<(String, String)>,
    /// Values as the service sends them (usually strings).
    pub rows: Vec<Vec<Value>>,
    pub total_rows: usize,
    pub vega_spec: Option<Value>,
    /// How `vegaSpec` is sent.
    pub spec_form: SpecForm,
    /// Use the `query` input key instead of `sqlQuery`.
    pub query_key: bool,
    pub shape: Shape,
}

/// How an agent's SQL result differs from what its query really returns
/// (the warehouse's answer): chosen by a word of the question.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distortion {
    /// Right.
    None,
    /// "slightly": the last column's numbers 0.04% too high.
    Slightly,
    /// "badly": the last column's numbers 50% too high.
    Badly,
    /// "aliased": the columns under other names.
    Aliased,
    /// "shuffled": the rows in reverse order.
    Shuffled,
}

impl Distortion {
    /// The distortion a question asks for by its words.
    pub fn asked_in(question: &str) -> Distortion {
        [
            ("slightly", Distortion::Slightly),
            ("badly", Distortion::Badly),
            ("aliased", Distortion::Aliased),
            ("shuffled", Distortion::Shuffled),
        ]
        .into_iter()
        .find(|(word, _)| question.contains(word))
        .map_or(Distortion::None, |(_, how)| how)
    }
}

impl SqlCall {
    /// Revenue by month: `n` months starting January 2024, dotted member
    /// names, a bar chart spec, every row returned.
    pub fn revenue_by_month(n: usize) -> SqlCall {
        let rows = (0..n)
            .map(|i| {
                let month = format!("{}-{:02}", 2024 + i / 12, i % 12 + 1);
                let revenue = 1_500_000 + (i as u64 * 37_813) % 900_000;
                vec![
                    json!(month),
                    json!(format!("{revenue}.5")),
                    json!(format!("{}", 900 + i)),
                ]
            })
            .collect();
        SqlCall {
            sql: "SELECT orders_view.month, MEASURE(orders_view.revenue), MEASURE(orders_view.count) FROM orders_view GROUP BY 1 ORDER BY 1".into(),
            title: "Revenue by month".into(),
            columns: vec![
                ("orders_view.month".into(), "String".into()),
                ("orders_view.revenue".into(), "Double".into()),
                ("orders_view.count".into(), "Int64".into()),
            ],
            rows,
            total_rows: n,
            vega_spec: Some(json!({
                "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
                "mark": "bar",
                "encoding": {
                    "x": {"field": "orders_view.month", "type": "ordinal", "title": "Month"},
                    "y": {"field": "orders_view.revenue", "type": "quantitative", "title": "Revenue"},
                    "tooltip": [{"field": "orders_view.month"}, {"field": "orders_view.revenue"}]
                }
            })),
            spec_form: SpecForm::Text,
            query_key: false,
            shape: Shape::Arrays,
        }
    }

    /// Names the columns as the live service often does, `measure(…)`
    /// around the measures, while the chart spec names the members' short
    /// names (`month`, `revenue`): fields that name no column.
    pub fn named_as_measures(mut self) -> SqlCall {
        for (name, column_type) in &mut self.columns {
            if column_type != "String" {
                *name = format!("measure({name})");
            }
        }
        if let Some(spec) = &mut self.vega_spec {
            let short = |field: &Value| json!(field.as_str().unwrap().rsplit('.').next().unwrap());
            let encoding = &mut spec["encoding"];
            for channel in ["x", "y"] {
                encoding[channel]["field"] = short(&encoding[channel]["field"]);
            }
            for tip in encoding["tooltip"].as_array_mut().unwrap() {
                tip["field"] = short(&tip["field"]);
            }
        }
        self
    }

    /// The result as an agent that got the query `how` wrong reports it.
    pub fn distorted(mut self, how: Distortion) -> SqlCall {
        let scale = |rows: &mut Vec<Vec<Value>>, factor: f64| {
            for row in rows {
                if let Some(last) = row.last_mut() {
                    let number = last
                        .as_str()
                        .and_then(|text| text.parse::<f64>().ok())
                        .or(last.as_f64());
                    if let Some(number) = number {
                        *last = json!(format!("{}", number * factor));
                    }
                }
            }
        };
        match how {
            Distortion::None => {}
            Distortion::Slightly => scale(&mut self.rows, 1.0004),
            Distortion::Badly => scale(&mut self.rows, 1.5),
            Distortion::Aliased => {
                for (i, (name, _)) in self.columns.iter_mut().enumerate() {
                    *name = format!("alias_{}", i + 1);
                }
            }
            Distortion::Shuffled => self.rows.reverse(),
        }
        self
    }

    /// `vegaSpec` as the service sent it: a JSON string, an object, or null.
    fn spec_value(&self) -> Option<Value> {
        match (self.spec_form, &self.vega_spec) {
            (SpecForm::Null, _) => Some(Value::Null),
            (_, None) => None,
            (SpecForm::Text, Some(spec)) => Some(json!(spec.to_string())),
            (SpecForm::Object, Some(spec)) => Some(spec.clone()),
        }
    }

    /// Keeps only the first `returned` rows while `totalRows` stays the same.
    pub fn truncated_to(mut self, returned: usize) -> SqlCall {
        self.rows.truncate(returned);
        self
    }

    fn input(&self) -> String {
        let key = if self.query_key { "query" } else { "sqlQuery" };
        let mut input = json!({
            key: self.sql, "queryTitle": self.title, "description": "What the query does",
            "userRequest": "the question", "memoryId": "mem-1",
        });
        if let Some(spec) = self.spec_value() {
            input["vegaSpec"] = spec;
        }
        input.to_string()
    }

    fn result(&self) -> String {
        let mut result = json!({
            "sqlQuery": self.sql, "queryTitle": self.title, "description": "What the query does",
            "userRequest": "the question", "totalRows": self.total_rows,
            "uuid": "0b7e3f5a-6a4c-4b59-9d1e-2f6b8c1d0a11",
        });
        match self.shape {
            Shape::Arrays => {
                result["schema"] = json!(self
                    .columns
                    .iter()
                    .map(|(n, t)| json!({"name": n, "column_type": t}))
                    .collect::<Vec<_>>());
                result["data"] = json!(self.rows);
            }
            Shape::Objects => {
                let objects: Vec<Value> = self
                    .rows
                    .iter()
                    .map(|row| {
                        let mut map = serde_json::Map::new();
                        for ((name, _), value) in self.columns.iter().zip(row) {
                            map.insert(name.clone(), value.clone());
                        }
                        Value::Object(map)
                    })
                    .collect();
                let mut measures = serde_json::Map::new();
                let mut dimensions = serde_json::Map::new();
                for (name, column_type) in &self.columns {
                    if column_type == "String" {
                        dimensions.insert(name.clone(), json!({"title": name, "type": "string"}));
                    } else {
                        measures.insert(name.clone(), json!({"title": name, "type": "number"}));
                    }
                }
                result["data"] = json!(objects);
                result["annotation"] =
                    json!({"measures": measures, "dimensions": dimensions, "segments": {}, "timeDimensions": {}});
            }
        }
        if let Some(spec) = self.spec_value() {
            result["vegaSpec"] = spec;
        }
        serde_json::to_string_pretty(&result).unwrap()
    }
}

/// The line a newer service sends when a chat was aborted.
pub fn aborted_line() -> Value {
    json!({"id": "__aborted__", "type": "abort", "code": "chat_aborted"})
}

/// The `__cutoff__` line of `chat_id`; a read of a thread with a suspended
/// turn reports it as `state.suspended.messageId`.
pub fn cutoff_line(chat_id: &str, suspended: Option<&str>) -> String {
    let mut state = json!({"chatId": chat_id, "isStreaming": false});
    if let Some(message_id) = suspended {
        state["suspended"] = json!({ "messageId": message_id });
    }
    json!({"id": "__cutoff__", "role": "assistant", "state": state, "sort": 0}).to_string()
}

/// True for the lines that are messages of the thread (what a replay of
/// the thread repeats), not lines about the stream (`__cutoff__`,
/// `__state__`, `__usage__`, `__suspended__`, `__aborted__`) nor in-stream
/// `{"error"}` lines.
pub fn is_message(line: &str) -> bool {
    let value = serde_json::from_str::<Value>(line).unwrap_or_default();
    let id = value.get("id").and_then(Value::as_str).unwrap_or("__");
    value.get("role").is_some() && !(id.starts_with("__") && id.ends_with("__"))
}

/// A chat stream under construction, line by line.
#[derive(Clone, Debug)]
pub struct ChatStream {
    pub family: Family,
    lines: Vec<String>,
    sort: u64,
    next_id: u64,
}

impl ChatStream {
    /// Starts with the `__cutoff__` line of `chat_id`.
    pub fn new(chat_id: &str, family: Family) -> ChatStream {
        ChatStream::with_cutoff(chat_id, None, family)
    }

    /// Starts with the `__cutoff__` line of `chat_id`, which reports a
    /// pending suspension of `suspended` (a message id) when given.
    pub fn with_cutoff(chat_id: &str, suspended: Option<&str>, family: Family) -> ChatStream {
        let mut stream = ChatStream::empty();
        stream.family = family;
        stream.lines.push(cutoff_line(chat_id, suspended));
        stream
    }

    /// A stream with no line yet (not even `__cutoff__`).
    pub fn empty() -> ChatStream {
        ChatStream {
            family: Family::Semantic,
            lines: Vec::new(),
            sort: 0,
            next_id: 0,
        }
    }

    /// The lines, without their newlines.
    pub fn lines(&self) -> Vec<String> {
        self.lines.clone()
    }

    fn push(&mut self, line: Value) {
        self.lines.push(line.to_string());
    }

    fn sort(&mut self) -> u64 {
        self.sort += 1;
        self.sort
    }

    fn id(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("{prefix}-{}", self.next_id)
    }

    fn main_path(&self) -> Value {
        json!([self.family.agent()])
    }

    fn tools_path(&self) -> Value {
        json!([self.family.agent(), "tools"])
    }

    /// Appends a raw line as it is (for malformed or unknown lines).
    pub fn raw_line(mut self, line: &str) -> Self {
        self.lines.push(line.to_string());
        self
    }

    pub fn user(self, question: &str) -> Self {
        self.user_echo(question, None)
    }

    /// The echo of the question, whose id is the request's `messageId`
    /// when it had one.
    pub fn user_echo(mut self, question: &str, message_id: Option<&str>) -> Self {
        let id = match message_id {
            Some(id) => id.to_string(),
            None => self.id("user"),
        };
        let sort = self.sort();
        self.push(json!({"id": id, "role": "user", "content": question, "isDelta": false, "isInProcess": false, "sort": sort}));
        self
    }

    pub fn thinking(mut self, pieces: &[&str]) -> Self {
        let id = self.id("think");
        for piece in pieces {
            let sort = self.sort();
            let path = self.main_path();
            self.push(
                json!({"id": id, "role": "assistant", "thinking": piece, "content": "", "graphPath": path,
                             "isDelta": true, "isInProcess": true, "isStructuredResponse": false, "sort": sort}),
            );
        }
        self
    }

    fn tool(mut self, name: &str, input: String, result: String) -> Self {
        let id = self.id("tool");
        let path = self.tools_path();
        let sort = self.sort();
        self.push(
            json!({"id": id, "role": "assistant", "toolCall": {"name": name, "input": input},
                         "graphPath": path, "isDelta": false, "isInProcess": true, "sort": sort}),
        );
        let sort = self.sort();
        self.push(
            json!({"id": id, "role": "assistant", "toolCall": {"name": name, "input": input, "result": result},
                         "graphPath": path, "isDelta": false, "isInProcess": false, "sort": sort}),
        );
        self
    }

    pub fn meta_call(self, search: &str) -> Self {
        let name = self.family.meta();
        let result = json!({"cubes": [{"name": "orders_view", "type": "view", "title": "Orders", "members": [
            {"name": "orders_view.month", "title": "Month", "description": "", "type": "string"},
            {"name": "orders_view.revenue", "title": "Revenue", "description": "", "type": "number", "aggType": "sum"}]}],
            "searchQuery": search});
        self.tool(
            name,
            json!({"searchQuery": search}).to_string(),
            serde_json::to_string_pretty(&result).unwrap(),
        )
    }

    pub fn sql_call(self, call: &SqlCall) -> Self {
        let name = self.family.sql();
        self.tool(name, call.input(), call.result())
    }

    /// A SQL call whose result carries an `error`, as the service writes it.
    pub fn failed_sql_call(self, sql: &str, error: &str) -> Self {
        let name = self.family.sql();
        let input = json!({"sqlQuery": sql, "queryTitle": "Failing query"}).to_string();
        self.tool(
            name,
            input,
            serde_json::to_string_pretty(&json!({"error": error})).unwrap(),
        )
    }

    /// Content deltas of one assistant message under the main node, then the
    /// complete message (`isDelta: false`).
    pub fn assistant(mut self, pieces: &[&str]) -> Self {
        let id = self.id("msg");
        let path = self.main_path();
        for piece in pieces {
            let sort = self.sort();
            self.push(
                json!({"id": id, "role": "assistant", "content": piece, "graphPath": path,
                             "isDelta": true, "isInProcess": true, "isStructuredResponse": false, "sort": sort}),
            );
        }
        let sort = self.sort();
        self.push(
            json!({"id": id, "role": "assistant", "content": pieces.concat(), "graphPath": path,
                         "isDelta": false, "isInProcess": false, "isStructuredResponse": false, "sort": sort}),
        );
        self
    }

    /// The final answer under the `final` node, sent as deltas.
    pub fn final_answer(mut self, pieces: &[&str]) -> Self {
        let id = self.id("final");
        for (i, piece) in pieces.iter().enumerate() {
            let sort = self.sort();
            let done = i + 1 == pieces.len();
            self.push(
                json!({"id": id, "role": "assistant", "content": piece, "graphPath": ["final"],
                             "isDelta": true, "isInProcess": !done, "isStructuredResponse": true, "sort": sort}),
            );
        }
        self
    }

    /// The first deltas of a final answer that never finishes: every line
    /// still in process (the stream is cut after them).
    pub fn final_answer_cut(mut self, pieces: &[&str]) -> Self {
        let id = self.id("final");
        for piece in pieces {
            let sort = self.sort();
            self.push(
                json!({"id": id, "role": "assistant", "content": piece, "graphPath": ["final"],
                             "isDelta": true, "isInProcess": true, "isStructuredResponse": true, "sort": sort}),
            );
        }
        self
    }

    /// The final answer as deltas, then the same message complete
    /// (`isDelta: false`) as `whole`, which may differ from the joined
    /// deltas (a trailing newline, a revision).
    pub fn final_answer_then_whole(mut self, pieces: &[&str], whole: &str) -> Self {
        let id = self.id("final");
        for piece in pieces {
            let sort = self.sort();
            self.push(
                json!({"id": id, "role": "assistant", "content": piece, "graphPath": ["final"],
                             "isDelta": true, "isInProcess": true, "isStructuredResponse": true, "sort": sort}),
            );
        }
        let sort = self.sort();
        self.push(
            json!({"id": id, "role": "assistant", "content": whole, "graphPath": ["final"],
                         "isDelta": false, "isInProcess": false, "isStructuredResponse": true, "sort": sort}),
        );
        self
    }

    pub fn error_line(mut self, message: &str) -> Self {
        self.push(json!({"error": message}));
        self
    }

    pub fn suspended(mut self, message_id: &str) -> Self {
        self.push(
            json!({"id": "__suspended__", "type": "suspend", "code": "chat_suspended", "retryable": true,
                         "error": "The server restarted while answering", "messageId": message_id}),
        );
        self
    }

    pub fn aborted(mut self) -> Self {
        self.push(aborted_line());
        self
    }

    /// `__state__` holding the conversation as LangChain messages.
    pub fn state(mut self, chat_id: &str, messages: &[(&str, &str)]) -> Self {
        let messages: Vec<Value> = messages
            .iter()
            .map(|(role, content)| {
                let class = if *role == "user" { "HumanMessage" } else { "AIMessage" };
                json!({"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", class],
                       "kwargs": {"content": content, "additional_kwargs": {}, "response_metadata": {}}})
            })
            .collect();
        let sort = self.sort();
        self.push(json!({"id": "__state__", "role": "assistant", "state": {"isStreaming": false, "chatId": chat_id, "messages": messages},
                         "isDelta": false, "sort": sort}));
        self
    }

    pub fn usage(self) -> Self {
        self.usage_of(1000)
    }

    /// The `__usage__` line of a turn that read `input` tokens: 80 output,
    /// 150 read from and 50 written to the cache, 3 LLM calls; the total is
    /// their sum (1280 for 1000 input tokens).
    pub fn usage_of(mut self, input: u64) -> Self {
        self.push(json!({"id": "__usage__", "type": "usage", "usage": {
            "inputTokens": input, "outputTokens": 80, "cacheReadTokens": 150, "cacheWriteTokens": 50,
            "totalTokens": input + 280, "llmCalls": 3, "models": ["m"]}}));
        self
    }

    /// The stream as NDJSON bytes, each line ending in `\n`.
    pub fn bytes(&self) -> Vec<u8> {
        let mut out = String::new();
        for line in &self.lines {
            out.push_str(line);
            out.push('\n');
        }
        out.into_bytes()
    }

    pub fn line_count(&self) -> usize {
        self.lines.len()
    }
}
