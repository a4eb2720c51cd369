//! What the commands receive: one settings type per command, resolved and
//! checked, with nothing left to read from the command line, the
//! environment or the config file.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::ValueEnum;
use reqwest::Url;

use super::checks::{check_output_file, duration, is_message_id, new_message_id, read_stdin, Finding};
use super::secrets::Secret;
use crate::cli::{AskArgs, CaseArgs, CheckOutput, DestinationArgs, OutputMode, ReportArgs, RowsOutput, SessionOutput};
use crate::error::usage;
use crate::evals::report::DEFAULT_BASELINE_MAX_AGE;
use crate::exchange::Asked;
use crate::identity::SessionSettings;
use crate::image::Image;
use crate::input::Deadline;
use crate::jq::JqFilter;
use crate::modes::{Mode, OnTerminal};
use crate::output::{Destination, JqInput, Notes};
use crate::render::table::TableFormat;
use crate::render::vega::ChartFormat;
use crate::render::{answer, csv, events, html, raw, vega, ModePrinter, ModeTraits, Printer, RenderOptions};
use crate::results::Pick;

pub use crate::api::chat::ChatSettings;
pub use crate::api::data::{DataCredential, DataSettings};
pub use crate::api::session::{Embedding, UserProfile};
pub use crate::domain::{Display, Limits, Network, Question};
pub use crate::evals::report::{ReportFormat, ReportSettings};
pub use crate::evals::run::{Answers, CheckSettings};
pub use crate::evals::select::{CheckListSettings, Selection};
pub use crate::evals::suite::CaseOverrides;
pub use crate::expect::Expectations;

/// The settings of `analyst ask`.
#[derive(Debug)]
pub struct AskSettings {
    /// What is asked, of what: the service, or a saved stream.
    pub asked: Asked,
    /// The output: the `-o` mode's printer with its notes and live display.
    pub printer: Printer,
    /// `--jq`, `--output-file`.
    pub destination: Destination,
    /// `--tee FILE`.
    pub tee: Option<PathBuf>,
    /// `--fail-on-tool-error`.
    pub fail_on_tool_error: bool,
    /// `--expect-*` and `--min-rows`.
    pub expectations: Expectations,
    /// Timeouts.
    pub network: Network,
    /// Where the turn is recorded; `None`: not recorded (a replay, or off).
    pub recording: Option<super::Recording>,
    /// `--thread NAME`.
    pub thread: Option<super::ThreadSettings>,
    /// Where the turn's spans go; `None`: not sent.
    pub otlp: Option<crate::telemetry::OtlpSettings>,
}

/// The settings of `analyst abort`.
#[derive(Debug)]
pub struct AbortSettings {
    /// The chat service and the owner of the chat.
    pub chat: ChatSettings,
    /// The chat to stop.
    pub chat_id: String,
    /// Timeouts.
    pub network: Network,
}

/// The settings of `analyst session`.
#[derive(Debug)]
pub struct SessionCommandSettings {
    /// The validated account host.
    pub base_url: Url,
    /// The API key.
    pub key: Secret,
    /// What the generate-session body carries besides who.
    pub embedding: Embedding,
    /// The user the session is for.
    pub identity: SessionSettings,
    /// `-o`.
    pub output: SessionOutput,
    /// `--jq`, `--output-file`.
    pub destination: Destination,
    /// Timeouts.
    pub network: Network,
}

/// The settings of `analyst session revoke`.
#[derive(Debug)]
pub struct RevokeSettings {
    /// The validated account host.
    pub base_url: Url,
    /// The API key.
    pub key: Secret,
    /// The sessions to end, in order.
    pub session_ids: Vec<String>,
    /// Timeouts.
    pub network: Network,
}

/// Where the SQL of `rows` comes from.
#[derive(Debug)]
pub enum SqlSource {
    /// `--sql`.
    Text(String),
    /// `--sql-file` (`-` = stdin).
    File(String),
    /// `--from FILE` (`-` = stdin), or stdin when it is a pipe.
    Saved(String),
}

/// The settings of `analyst rows`.
#[derive(Debug)]
pub struct RowsSettings {
    /// Where the SQL comes from.
    pub sql: SqlSource,
    /// `--query` for a saved stream.
    pub pick: Pick,
    /// `-o`.
    pub output: RowsOutput,
    /// The terminal's width for `-o table`, when stdout is a terminal.
    pub width: Option<u16>,
    /// `--page-size` (None: `--no-paging`).
    pub page_size: Option<u64>,
    /// `--order-by COL`.
    pub order_by: Option<String>,
    /// `--jq`, `--output-file`.
    pub destination: Destination,
    /// `--always`.
    pub always: bool,
    /// `--allow-partial`.
    pub allow_partial: bool,
    /// The data query API.
    pub data: DataSettings,
    /// Timeouts.
    pub network: Network,
    /// Where the query's span goes; `None`: not sent.
    pub otlp: Option<crate::telemetry::OtlpSettings>,
}

/// The settings of `analyst check merge`.
#[derive(Debug)]
pub struct MergeSettings {
    /// The shards' reports.
    pub reports: Vec<PathBuf>,
    /// Where the merged report goes.
    pub report: ReportSettings,
}

/// The settings of `analyst doctor`: what the settings' checks found, and
/// what to call to check the endpoints.
#[derive(Debug)]
pub struct DoctorSettings {
    /// The checks of the settings, in order.
    pub findings: Vec<Finding>,
    /// The chat API as configured (with the identity), when it is.
    pub chat: Option<ChatSettings>,
    /// The data query API, when its URL and a credential are set.
    pub data: Option<DataSettings>,
    /// The account host and the API key, for the embed endpoints.
    pub account: Option<(Url, Secret)>,
    /// `--offline`: call nothing.
    pub offline: bool,
    /// Timeouts and retries.
    pub network: Network,
    /// `-o json`: the findings as a JSON array, not a table.
    pub json: bool,
    /// The terminal's width the table fits, when stdout is one.
    pub width: Option<u16>,
    /// The OTLP collector, to call; `None`: no spans are sent.
    pub otlp: Option<crate::telemetry::OtlpSettings>,
}

/// `--jq` and `--output-file` as checked for an output: `jq_input` says
/// how a filter reads it, or names the output mode it cannot filter and
/// the command's modes it can.
pub(super) fn destination(args: DestinationArgs, jq_input: Result<JqInput, (String, &str)>) -> Result<Destination> {
    let jq = match (args.jq, jq_input) {
        (None, _) => None,
        (Some(expression), Ok(input)) => Some((JqFilter::compile(&expression)?, input)),
        (Some(_), Err((mode, json_modes))) => {
            return Err(usage(format!(
                "--jq filters JSON, and {mode} is not JSON: use it with {json_modes}"
            )))
        }
    };
    if let Some(path) = &args.output_file {
        check_output_file("--output-file", path)?;
        if path.is_dir() {
            return Err(usage(format!("--output-file {}: that is a folder", path.display())));
        }
    }
    Ok(Destination {
        file: args.output_file,
        jq,
    })
}

/// The descriptor of `-o mode`: the one place a mode is said whole.
pub fn mode_traits(mode: OutputMode) -> ModeTraits {
    match mode {
        OutputMode::Answer => ModeTraits {
            shows: Mode::Answer,
            answer_text: true,
            tool_inputs: false,
            jq: None,
            on_terminal: OnTerminal::Live,
            printer: |_, _| ModePrinter::Answer(answer::Answer),
        },
        OutputMode::Raw => ModeTraits {
            shows: Mode::Stream,
            answer_text: false,
            tool_inputs: false,
            jq: None,
            on_terminal: OnTerminal::Text,
            printer: |_, _| ModePrinter::Raw(raw::Raw),
        },
        OutputMode::Events => ModeTraits {
            shows: Mode::Stream,
            answer_text: false,
            tool_inputs: false,
            jq: Some(JqInput::EachLine),
            on_terminal: OnTerminal::Text,
            printer: |_, _| ModePrinter::Events(events::Events),
        },
        OutputMode::Json => ModeTraits {
            shows: Mode::Json,
            answer_text: true,
            tool_inputs: true,
            jq: Some(JqInput::Whole),
            on_terminal: OnTerminal::Text,
            printer: |_, _| ModePrinter::Json(Box::default()),
        },
        OutputMode::Csv => ModeTraits {
            shows: Mode::Rows,
            answer_text: false,
            tool_inputs: false,
            jq: None,
            on_terminal: OnTerminal::Text,
            printer: |options, _| ModePrinter::Rows(csv::Csv::new(options.pick, TableFormat::Csv)),
        },
        OutputMode::Table => ModeTraits {
            shows: Mode::Rows,
            answer_text: false,
            tool_inputs: false,
            jq: None,
            on_terminal: OnTerminal::Text,
            printer: |options, _| ModePrinter::Rows(csv::Csv::new(options.pick, TableFormat::Aligned(options.width))),
        },
        OutputMode::Vega => ModeTraits {
            shows: Mode::Chart,
            answer_text: false,
            tool_inputs: false,
            jq: Some(JqInput::Whole),
            on_terminal: OnTerminal::Text,
            printer: |options, notes| chart(options, notes, ChartFormat::Spec),
        },
        OutputMode::Svg => ModeTraits {
            shows: Mode::Chart,
            answer_text: false,
            tool_inputs: false,
            jq: None,
            on_terminal: OnTerminal::Text,
            printer: |options, notes| chart(options, notes, ChartFormat::Svg),
        },
        OutputMode::Png => ModeTraits {
            shows: Mode::Chart,
            answer_text: false,
            tool_inputs: false,
            jq: None,
            on_terminal: OnTerminal::Refused,
            printer: |options, notes| chart(options, notes, ChartFormat::Png(options.scale)),
        },
        OutputMode::Html => ModeTraits {
            shows: Mode::Chart,
            answer_text: true,
            tool_inputs: false,
            jq: None,
            on_terminal: OnTerminal::Text,
            printer: |options, notes| {
                ModePrinter::Html(Box::new(html::Html::new(
                    options.pick,
                    notes,
                    options.vega_config.clone(),
                )))
            },
        },
    }
}

/// The printer of a chart mode (`vega`, `svg`, `png`) in `format`.
fn chart(options: &RenderOptions, notes: &Notes, format: ChartFormat) -> ModePrinter {
    ModePrinter::Chart(vega::Vega::new(
        options.pick,
        notes,
        format,
        options.vega_config.clone(),
    ))
}

/// The modes `--jq` reads, as a refusal names them: `-o events, -o json
/// or -o vega`.
pub(super) fn jq_modes() -> String {
    let names: Vec<String> = OutputMode::value_variants()
        .iter()
        .filter(|mode| mode_traits(**mode).jq.is_some())
        .map(|mode| mode_name(*mode))
        .collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The name of an output mode as the command line spells it: `-o csv`.
pub(super) fn mode_name(mode: impl ValueEnum) -> String {
    let name = mode.to_possible_value().map(|value| value.get_name().to_string());
    format!("-o {}", name.unwrap_or_default())
}

/// The report flags, the `--junit` and `--summary` files checked to be
/// writable.
pub(super) fn report_settings(args: ReportArgs) -> Result<ReportSettings> {
    if let Some(path) = &args.junit {
        check_output_file("--junit", path)?;
    }
    if let Some(path) = &args.summary {
        check_output_file("--summary", path)?;
    }
    let format = match (args.tap, args.output) {
        (true, _) => Some(ReportFormat::Tap),
        (false, Some(CheckOutput::Json)) => Some(ReportFormat::Json),
        (false, Some(CheckOutput::Markdown)) => Some(ReportFormat::Markdown),
        (false, Some(CheckOutput::Html)) => Some(ReportFormat::Html),
        (false, None) => None,
    };
    let baseline_max_age = match &args.baseline_max_age {
        Some(age) => duration(age, "--baseline-max-age")?,
        None => DEFAULT_BASELINE_MAX_AGE,
    };
    Ok(ReportSettings {
        destination: destination(
            args.destination,
            match format {
                Some(ReportFormat::Json) => Ok(JqInput::Whole),
                Some(ReportFormat::Tap) => Err(("--tap".into(), "-o json")),
                Some(ReportFormat::Markdown | ReportFormat::Html) => {
                    Err(("a report other than -o json".into(), "-o json"))
                }
                None => Err(("a report without -o json".into(), "-o json")),
            },
        )?,
        junit: args.junit,
        summary: args.summary,
        format,
        baseline: args.baseline,
        fail_on_regression: args.fail_on_regression,
        baseline_max_age,
        baseline_any: args.baseline_any,
        min_accuracy: args.min_accuracy,
    })
}

/// The question of `ask`: what is asked (`-` reads it from stdin), in which
/// thread, with which message id (new, or the suspended one `--resume`
/// names), on which branch.
impl Question {
    /// The question `args` ask (with none given and `piped`, the one on
    /// standard input, when there is one); what it reads (the question on
    /// standard input, images) waits at most `limit`, the command's
    /// `--timeout`.
    pub(super) fn of(args: &AskArgs, piped: bool, limit: Option<Duration>) -> Result<Question> {
        let input = match args.question.as_deref() {
            Some("-") => Some(read_stdin("the question", limit)?),
            Some(text) => Some(text.to_string()),
            // An empty pipe (`< /dev/null`) asks nothing.
            None if piped => Some(read_stdin("the question", limit)?).filter(|text| !text.trim().is_empty()),
            None => None,
        };
        let input = input.map(|q| q.trim().to_string());
        if input.as_deref() == Some("") {
            return Err(usage("the question is empty"));
        }
        let chat_id = args.chat_id.as_deref().map(str::trim);
        if chat_id == Some("") {
            return Err(usage("--chat-id is empty"));
        }
        let resume = args.resume.as_deref().map(str::trim);
        if let Some(id) = resume.filter(|id| !is_message_id(id)) {
            return Err(usage(format!(
                "--resume {id:?} is not a message id (<unix milliseconds>-message, as 'message:' printed it)"
            )));
        }
        let message_id = match (resume, &input) {
            (Some(id), _) => Some(id.to_string()),
            (None, Some(_)) => Some(new_message_id()),
            (None, None) => None,
        };
        if input.is_none() && chat_id.is_none() {
            return Err(usage(
                "ask what? give a QUESTION (or pipe it in; '-' reads it from stdin), or --chat-id ID alone to print that thread",
            ));
        }
        let branch = args.branch.as_deref().map(str::trim);
        if branch == Some("") {
            return Err(usage("--branch is empty"));
        }
        if input.is_none() && !args.image.is_empty() {
            return Err(usage("--image goes with a question: a read of the thread sends none"));
        }
        let images = args
            .image
            .iter()
            .map(|path| Image::read(path, Deadline::after(limit), &format!("--image {}", path.display())).map(Arc::new))
            .collect::<Result<Vec<_>>>()?;
        Ok(Question {
            input,
            chat_id: chat_id.map(str::to_string),
            message_id,
            branch: branch.map(str::to_string),
            default_branch: args.default_branch,
            images,
        })
    }
}

/// What `check`'s flags override in every case.
pub(super) fn case_overrides(args: &CaseArgs) -> CaseOverrides {
    CaseOverrides {
        repeat: args.repeat.map(usize::from),
        pass_rate: args.pass_rate,
        max_seconds: args.max_seconds.map(Duration::from_secs_f64),
        max_tokens: args.max_tokens,
        max_llm_calls: args.max_llm_calls,
        faithful: args.expect_faithful,
    }
}

/// The width of the terminal stdout is, when `stdout_is_terminal`.
pub(super) fn terminal_width(stdout_is_terminal: bool) -> Option<u16> {
    stdout_is_terminal.then(crate::output::stdout_columns).flatten()
}

/// The SQL result `--query` selects.
pub(super) fn pick(selector: crate::cli::QuerySelector) -> Pick {
    match selector {
        crate::cli::QuerySelector::Last => Pick::Last,
        crate::cli::QuerySelector::Index(n) => Pick::Index(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jq_reads_the_json_modes() {
        assert_eq!(jq_modes(), "-o events, -o json or -o vega");
    }

    #[test]
    fn the_modes_that_show_the_answer_keep_its_text() {
        for mode in OutputMode::value_variants() {
            let traits = mode_traits(*mode);
            if traits.shows.shows_answer() || traits.on_terminal == OnTerminal::Live {
                assert!(traits.answer_text, "{mode:?}");
            }
        }
    }
}
