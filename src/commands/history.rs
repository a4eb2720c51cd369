//! `analyst history`: the local record of past turns — list, show, export
//! a thread (Markdown, an inert HTML page, JSON), usage and cost, forget.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;

use anyhow::Result;
use serde::Serialize;
use serde_json::Value;

use crate::cli::{ExportFormat, UsageOutput};
use crate::domain::{dollars, without_credentials, Agent, Prices, Usage};
use crate::error::{fail, kind_of, status_of, Kind};
use crate::history::{Delivery, History, ListedTurn, Pushed, TurnRecord, UsageBy, UsageGroup};
use crate::net::http::Http;
use crate::output::{Notes, Out, Output, Tone};
use crate::render::html::{inert_page, markdown};
use crate::render::json;
use crate::render::table::{self, TableFormat, TableWriter};
use crate::results::{Column, RowSink};
use crate::settings::{HistoryCommand, HistorySettings};
use crate::telemetry::{self, OtlpSettings};
use crate::text::{one_line, visible};

/// Runs `analyst history`.
pub fn run(settings: HistorySettings, notes: &Notes, out: &mut Out) -> Result<()> {
    let history = History::open(&settings.db)?;
    match settings.command {
        HistoryCommand::List { filter, grep, json } => match json {
            true => json::write(&history.list_whole(&filter, grep.as_ref())?, out)?,
            // Every piece from the history is made visible; the colours
            // are analyst's own.
            false => {
                let turns = history.list(&filter, grep.as_ref())?;
                out.write_styled(&list_table(&turns, settings.width, settings.styled))?
            }
        },
        HistoryCommand::Show { id, json } => {
            let turn = history.show(&id)?.ok_or_else(|| {
                fail(
                    Kind::NotFound,
                    format!("no turn {id:?} in the history (see 'analyst history')"),
                )
            })?;
            match json {
                true => json::write(&turn, out)?,
                false => out.write_all(shown(&turn).as_bytes())?,
            }
        }
        HistoryCommand::Export { thread, format } => {
            let turns = history.thread_turns(&thread)?;
            if turns.is_empty() {
                return Err(fail(
                    Kind::NotFound,
                    format!("no turn of thread or chat {thread:?} in the history"),
                ));
            }
            match format {
                ExportFormat::Json => json::write(&turns, out)?,
                ExportFormat::Markdown => out.write_all(thread_markdown(&thread, &turns).as_bytes())?,
                ExportFormat::Html => {
                    let page = inert_page(&thread, &markdown(&thread_markdown(&thread, &turns)));
                    out.write_all(page.as_bytes())?;
                }
            }
        }
        HistoryCommand::Usage { by, since, output } => {
            let rows = priced(&history, by, since.as_deref(), &settings.prices)?;
            write_usage(&rows, output, !settings.prices.is_empty(), settings.width, notes, out)?;
        }
        HistoryCommand::Trend { filter, output } => {
            super::trend::write(&history, &filter, output, settings.width, notes, out)?
        }
        HistoryCommand::Push(otlp) => push(&history, &otlp, notes)?,
        HistoryCommand::Forget(what) => {
            let count = history.forget(&what)?;
            notes.info(&format!(
                "forgot {count} turn(s), erased from {}",
                settings.db.display()
            ));
        }
    }
    out.flush()?;
    Ok(())
}

/// Below this many columns `history list` leaves the year out of its times
/// and its tokens out, so that the question keeps room.
const NARROW_LIST: u16 = 72;

/// `history list` for a person: a line per turn, how its stream ended and
/// the exit code its command ended with (a completed turn whose result was
/// truncated ended with 10), the question cut to the terminal's width, the
/// status and exit code coloured when `styled`. A long thread name is cut
/// before the question is; on a narrow terminal (under [`NARROW_LIST`]
/// columns) the times lose their year and the tokens are left out.
fn list_table(turns: &[ListedTurn], width: Option<u16>, styled: bool) -> String {
    use table::Shown::{Cut, Number, Whole};
    let narrow = width.is_some_and(|width| width < NARROW_LIST);
    let rows: Vec<Vec<String>> = turns
        .iter()
        .map(|turn| {
            let time = turn.at.get(..16).unwrap_or(&turn.at).replace('T', " ");
            let mut row = vec![
                turn.id.to_string(),
                match narrow {
                    true => time.get(5..).unwrap_or(&time).to_string(),
                    false => time,
                },
                turn.thread.clone().unwrap_or_else(|| "-".to_string()),
                turn.status.clone(),
                turn.exit_code.to_string(),
                turn.total_tokens.map_or("-".to_string(), |tokens| tokens.to_string()),
                turn.question.clone().unwrap_or_default(),
            ];
            if narrow {
                row.remove(5);
            }
            row
        })
        .collect();
    let mut headers = vec!["ID", "TIME (UTC)", "THREAD", "STATUS", "EXIT", "TOKENS", "QUESTION"];
    let mut shown = vec![Whole, Whole, Cut, Whole, Number, Number, Cut];
    if narrow {
        headers.remove(5);
        shown.remove(5);
    }
    let paint = |column: usize, cell: &str| match (column, cell) {
        (3, "completed") | (4, "0") => Some(Tone::Good),
        (3, "incomplete" | "cut" | "suspended") => Some(Tone::Warning),
        (3, "error" | "aborted") | (4, _) => Some(Tone::Bad),
        _ => None,
    };
    table::plain(
        &headers,
        &rows,
        &shown,
        width,
        styled.then_some(&paint as &table::Painter),
    )
}

/// `history show` for a person.
fn shown(turn: &TurnRecord) -> String {
    let mut text = String::new();
    let field = |text: &mut String, name: &str, value: Option<&str>| {
        if let Some(value) = value {
            let _ = writeln!(text, "{name:<12}{}", visible(value));
        }
    };
    field(&mut text, "turn", Some(&turn.id.to_string()));
    field(&mut text, "at", Some(&turn.at));
    field(&mut text, "command", Some(&turn.command));
    field(&mut text, "thread", turn.thread.as_deref());
    field(&mut text, "chat", turn.chat_id.as_deref());
    field(&mut text, "message", turn.message_id.as_deref());
    field(&mut text, "agent", turn.chat_url.as_deref());
    field(&mut text, "identity", turn.identity.as_deref());
    field(&mut text, "suite", turn.suite.as_deref());
    field(&mut text, "case", turn.case.as_deref());
    field(
        &mut text,
        "status",
        Some(&match turn.verdict_exit_code {
            Some(verdict) => format!("{} (exit {}; its verdict exit {verdict})", turn.status, turn.exit_code),
            None => format!("{} (exit {})", turn.status, turn.exit_code),
        }),
    );
    if let Some(usage) = &turn.usage {
        let counts = &usage.counts;
        field(
            &mut text,
            "usage",
            Some(&format!(
                "{} tokens ({} in, {} out), {} LLM calls",
                counts.total_tokens, counts.input_tokens, counts.output_tokens, counts.llm_calls,
            )),
        );
        field(
            &mut text,
            "models",
            (!usage.models.is_empty()).then(|| usage.models.join(", ")).as_deref(),
        );
    }
    field(
        &mut text,
        "took",
        Some(&format!("{:.1}s", turn.total_ms as f64 / 1000.0)),
    );
    if let Some(question) = &turn.question {
        let _ = writeln!(text, "\nQuestion:\n{}", visible(question));
    }
    if let Some(answer) = &turn.answer {
        let _ = writeln!(text, "\nAnswer:\n{}", visible(answer));
    }
    for (number, query) in turn.queries.iter().enumerate() {
        let _ = writeln!(
            text,
            "\nSQL {} {}: {} rows{}",
            number + 1,
            visible(query.title.as_deref().unwrap_or("")),
            query.rows_returned,
            query.total_rows.map_or(String::new(), |total| format!(" of {total}"))
        );
        if let Some(sql) = &query.sql {
            let _ = writeln!(text, "{}", visible(sql));
        }
        if let Some(error) = &query.error {
            let _ = writeln!(text, "error: {}", visible(error));
        }
    }
    text
}

/// A thread as Markdown: each question a heading, its answer quoted (so
/// that nothing in it — an unclosed code fence, a heading of its own — can
/// reach past its turn), its SQL in code blocks.
fn thread_markdown(thread: &str, turns: &[TurnRecord]) -> String {
    let mut text = format!("# {}\n", one_line(thread));
    for turn in turns {
        let _ = write!(
            text,
            "\n## {}\n\n*{} · {}*\n\n",
            one_line(turn.question.as_deref().unwrap_or("(no question)").trim()),
            turn.at,
            turn.status
        );
        if let Some(answer) = &turn.answer {
            let _ = writeln!(text, "{}\n", quoted(answer.trim()));
        }
        for query in &turn.queries {
            if let Some(title) = &query.title {
                let _ = writeln!(text, "**{}**\n", one_line(title.trim()));
            }
            if let Some(sql) = &query.sql {
                // A fence longer than any backtick run in the SQL.
                let longest = sql.split(|c| c != '`').map(str::len).max().unwrap_or(0);
                let fence = "`".repeat(longest.max(2) + 1);
                let _ = writeln!(text, "{fence}sql\n{}\n{fence}\n", sql.trim());
            }
        }
    }
    text
}

/// An answer's Markdown as it stays inside its turn: its headings two
/// levels down (a `## heading` in it cannot pass for a question; a setext
/// underline is escaped), and every line of it in a block quote, so that
/// whatever it opens (a code fence left open) ends with it.
fn quoted(text: &str) -> String {
    let mut fence: Option<(char, usize)> = None;
    let mut previous_blank = true;
    let mut lines = Vec::new();
    for line in text.lines() {
        let indented = line.len() - line.trim_start_matches(' ').len();
        let body = line.trim_start_matches(' ');
        let run = |c: char| body.chars().take_while(|&d| d == c).count();
        let shown = match fence {
            // Inside a code block: as it is, until its closing fence.
            Some((c, length)) => {
                if indented < 4 && run(c) >= length && body.trim_end().chars().all(|d| d == c) {
                    fence = None;
                }
                line.to_string()
            }
            None if indented >= 4 => line.to_string(),
            None => {
                let opens = ['`', '~'].into_iter().find(|&c| run(c) >= 3);
                let hashes = run('#');
                let after_hashes = body[hashes..].chars().next();
                let underline = !body.trim_end().is_empty()
                    && (body.trim_end().chars().all(|c| c == '=') || body.trim_end().chars().all(|c| c == '-'));
                if let Some(c) = opens {
                    fence = Some((c, run(c)));
                    line.to_string()
                } else if (1..=6).contains(&hashes) && after_hashes.is_none_or(|c| c == ' ' || c == '\t') {
                    let deeper = "#".repeat((hashes + 2).min(6));
                    format!("{}{deeper}{}", &line[..indented], &body[hashes..])
                } else if underline && !previous_blank {
                    format!("{}\\{body}", &line[..indented])
                } else {
                    line.to_string()
                }
            }
        };
        previous_blank = line.trim().is_empty();
        lines.push(match shown.is_empty() {
            true => ">".to_string(),
            false => format!("> {shown}"),
        });
    }
    lines.join("\n")
}

/// A usage group with its cost.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Priced {
    #[serde(flatten)]
    group: UsageGroup,
    /// US dollars, when every turn of the group could be priced.
    cost: Option<f64>,
}

impl Priced {
    /// The group `key`, with no turn yet (and so a known cost of 0).
    fn named(key: String) -> Priced {
        Priced {
            group: UsageGroup {
                key,
                ..UsageGroup::default()
            },
            cost: Some(0.0),
        }
    }

    /// Its turns, input, output, cache read and cache write tokens and LLM
    /// calls: the figures every output lists in this order.
    fn counts(&self) -> [u64; 6] {
        let spent = self.group.spent;
        [
            self.group.turns,
            spent.input_tokens,
            spent.output_tokens,
            spent.cache_read_tokens,
            spent.cache_write_tokens,
            spent.llm_calls,
        ]
    }

    /// Counts in `turns` turns that spent `spent` in `seconds` and cost
    /// `cost` (unknown: the group's cost is unknown from now on).
    fn add(&mut self, turns: u64, spent: Usage, seconds: f64, cost: Option<f64>) {
        self.group.turns += turns;
        self.group.spent.add(spent);
        self.group.seconds += seconds;
        self.cost = self.cost.zip(cost).map(|(a, b)| a + b);
    }
}

/// `history push`: the spans a collector did not take, sent to `otlp`'s
/// through the one way out, oldest first, a batch at a time (see
/// [`History::push_unsent`]). A batch refused for good is kept, marked,
/// and said; the first other failure stops the push (exit 6, or the
/// signal's code), the rest kept for the next.
fn push(history: &History, otlp: &OtlpSettings, notes: &Notes) -> Result<()> {
    let http = Http::new(otlp.timeout)?;
    let endpoint = without_credentials(otlp.endpoint.as_str());
    let pushed = history.push_unsent(otlp.timeout + CLAIM_MARGIN, |kept| {
        let refused = |why: String| {
            notes.warn(&format!(
                "a kept batch of spans was refused for good: {why}; it stays in the history, marked, and is not sent again"
            ));
            Ok(Delivery::Refused(why))
        };
        let request = match telemetry::decode(kept) {
            Ok(request) => request,
            Err(err) => return refused(format!("{err:#}")),
        };
        match telemetry::send(otlp, &http, &request) {
            Ok(()) => Ok(Delivery::Taken),
            Err(err) if refused_for_good(&err) => refused(format!("{err:#}")),
            Err(err) => Err(err),
        }
    });
    let told = |pushed: &Pushed| {
        let mut told = format!(
            "pushed {} span(s) in {} request(s) to {endpoint}; {} request(s) left",
            pushed.spans, pushed.requests, pushed.left
        );
        if pushed.refused > 0 {
            told.push_str(&format!(" ({} refused for good by the collector)", pushed.refused));
        }
        told
    };
    match pushed {
        Ok(pushed) => {
            notes.info(&told(&pushed));
            Ok(())
        }
        Err((pushed, err)) => Err(fail(kind_of(&err), format!("{err:#}; {}", told(&pushed)))),
    }
}

/// How much longer than its request may take a push's claim on a batch
/// lasts: no other push sends it meanwhile; a push killed on the way
/// leaves it to the next after that.
const CLAIM_MARGIN: std::time::Duration = std::time::Duration::from_secs(5);

/// True when the collector refused a batch for what it holds, which
/// sending it again cannot mend (400, 413, 415, 422, …), rather than for
/// who sent it or where (401, 403, 404) or for now (408, 429).
fn refused_for_good(err: &anyhow::Error) -> bool {
    status_of(err).is_some_and(|status| (400..500).contains(&status) && !matches!(status, 401 | 403 | 404 | 408 | 429))
}

/// The turns since `since`, summed by `by` and priced by `prices`: each
/// turn's cost is known when its models' prices are, a turn of several
/// models priced per model (by each model's own counts, or, when the
/// usage line gave only their names, when they all cost the same); a
/// group's cost is known when every one of its turns' is.
fn priced(history: &History, by: UsageBy, since: Option<&str>, prices: &Prices) -> Result<Vec<Priced>> {
    let mut merged: BTreeMap<String, Priced> = BTreeMap::new();
    let mut add = |key: String, spent: Usage, turns: u64, ms: u64, cost: Option<f64>| {
        let entry = merged.entry(key.clone()).or_insert_with(|| Priced::named(key));
        entry.add(turns, spent, ms as f64 / 1000.0, cost);
    };
    history.usage(by, since, |key, usage, ms| {
        // An agent is named by its account and id, whatever host asked it.
        let key = match by {
            UsageBy::Agent => Agent::of(&key).map_or(key, |agent| agent.name()),
            _ => key,
        };
        let Some(usage) = usage else {
            let key = match by {
                UsageBy::Model => "(unknown)".to_string(),
                _ => key,
            };
            return add(key, Usage::default(), 1, ms, None);
        };
        if by != UsageBy::Model {
            return add(key, usage.counts, 1, ms, prices.turn(&usage));
        }
        if usage.models.is_empty() {
            return add("(unknown)".to_string(), usage.counts, 1, ms, None);
        }
        // By model: each model's own counts when the line gave them, else
        // the turn's, in each of its models' groups.
        for model in &usage.models {
            let counts = usage
                .by_model
                .iter()
                .find(|part| &part.model == model)
                .map_or(usage.counts, |part| part.counts);
            let cost = prices.of(model).map(|price| price.of(&counts));
            add(model.clone(), counts, 1, ms, cost);
        }
    })?;
    Ok(merged.into_values().collect())
}

/// `history usage` in `output`; a table for a person fits `width`.
fn write_usage(
    rows: &[Priced],
    output: UsageOutput,
    with_cost: bool,
    width: Option<u16>,
    notes: &Notes,
    out: &mut Out,
) -> Result<()> {
    match output {
        UsageOutput::Json => json::write(&rows, out),
        UsageOutput::Csv => {
            let names = [
                "key",
                "turns",
                "input_tokens",
                "output_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
                "llm_calls",
                "seconds",
                "cost",
                "total_tokens",
            ];
            let columns: Vec<Column> = names.iter().map(|name| Column::new(*name, "String")).collect();
            let mut writer = TableWriter::new(TableFormat::Csv, &mut *out);
            writer.columns(&columns)?;
            for row in rows {
                let mut cells = vec![row.group.key.clone()];
                cells.extend(row.counts().map(|count| count.to_string()));
                cells.push(format!("{:.3}", row.group.seconds));
                cells.push(row.cost.map_or(String::new(), |cost| format!("{cost:.4}")));
                cells.push(row.group.spent.total_tokens.to_string());
                writer.row(&cells.into_iter().map(Value::String).collect::<Vec<_>>())?;
            }
            writer.finish()?;
            Ok(())
        }
        UsageOutput::Table => {
            out.write_all(usage_table(rows, with_cost, width, notes).as_bytes())?;
            Ok(())
        }
    }
}

/// The columns a usage table leaves out, in this order, until it fits a
/// narrow terminal (`-o csv` and `-o json` have them all).
const USAGE_COLUMNS_LEFT_OUT_FIRST: [&str; 6] =
    ["CACHE WRITE", "CACHE READ", "INPUT", "OUTPUT", "SECONDS", "LLM CALLS"];

/// `history usage` for a person: a row per group and a TOTAL row, labels
/// never cut; on a terminal narrower than the table, the columns of
/// [`USAGE_COLUMNS_LEFT_OUT_FIRST`] left out until it fits, said on stderr.
fn usage_table(rows: &[Priced], with_cost: bool, width: Option<u16>, notes: &Notes) -> String {
    let mut total = Priced::named("TOTAL".to_string());
    for row in rows {
        total.add(row.group.turns, row.group.spent, row.group.seconds, row.cost);
    }
    let mut headers = vec![
        "GROUP",
        "TURNS",
        "TOKENS",
        "INPUT",
        "OUTPUT",
        "CACHE READ",
        "CACHE WRITE",
        "LLM CALLS",
        "SECONDS",
    ];
    if with_cost {
        headers.push("COST");
    }
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .chain((rows.len() > 1).then_some(&total))
        .map(|row| {
            let [turns, spent @ ..] = row.counts().map(|count| count.to_string());
            let mut cells = vec![row.group.key.clone(), turns, row.group.spent.total_tokens.to_string()];
            cells.extend(spent);
            cells.push(format!("{:.1}", row.group.seconds));
            if with_cost {
                cells.push(row.cost.map_or("-".to_string(), dollars));
            }
            cells
        })
        .collect();
    let mut shown = vec![table::Shown::Number; headers.len()];
    shown[0] = table::Shown::Whole;
    let (text, left_out) = table::plain_fitted(&headers, &table_rows, &shown, width, &USAGE_COLUMNS_LEFT_OUT_FIRST);
    if !left_out.is_empty() {
        notes.info(&format!(
            "left out to fit the terminal: {} (-o csv has every column)",
            left_out.join(", ")
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text;

    #[test]
    fn a_long_question_is_cut_to_the_terminal_and_a_control_character_shown() {
        let turn = ListedTurn {
            id: 7,
            at: "2026-11-25T07:00:00.000Z".into(),
            status: "completed".into(),
            question: Some(format!("Revenue \u{1b}[31m{}?", "by region ".repeat(20))),
            ..ListedTurn::default()
        };
        let table = list_table(std::slice::from_ref(&turn), Some(80), false);
        let line = table.lines().nth(1).unwrap();
        assert!(text::width(line) <= 80, "{line}");
        assert!(line.ends_with('…') && line.contains("\\x1b"), "{line}");
        assert!(line.starts_with("7   2026-11-25 07:00"), "{line}");
    }

    #[test]
    fn a_long_thread_name_gives_way_to_the_question_in_display_columns() {
        let turns: Vec<ListedTurn> = [
            "毎月の売上レポートの定期実行スレッド",
            "a-very-long-thread-name-for-the-nightly-job",
        ]
        .into_iter()
        .enumerate()
        .map(|(at, thread)| ListedTurn {
            id: at as i64 + 1,
            at: "2026-11-25T07:00:00.000Z".into(),
            thread: Some(thread.into()),
            status: "completed".into(),
            question: Some("先月の地域別の売上はいくらでしたか？".into()),
            ..ListedTurn::default()
        })
        .collect();
        for width in [80, 60] {
            let table = list_table(&turns, Some(width), false);
            let lines: Vec<&str> = table.lines().collect();
            for line in &lines {
                assert!(
                    text::width(line) <= usize::from(width),
                    "{width}: {line} is {} wide",
                    text::width(line)
                );
            }
            // Columns line up: the status starts at the same column on every line.
            let status_at: Vec<usize> = lines
                .iter()
                .map(|line| text::width(&line[..line.find("completed").or_else(|| line.find("STATUS")).unwrap()]))
                .collect();
            assert!(status_at.windows(2).all(|pair| pair[0] == pair[1]), "{width}: {table}");
            let question = lines[1].rsplit("  ").next().unwrap();
            assert!(text::width(question) >= 15, "{width}: the question keeps room: {table}");
        }
    }
}
