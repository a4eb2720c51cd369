//! `analyst check SUITE.toml`: ask an agent known questions, several at a
//! time, each case with its own timeout (the chat is aborted when it
//! expires), check the answers, and report for people (stderr) and CI
//! (JUnit XML, TAP, JSON). Exit 0 when all pass, 9 when an expectation
//! failed, otherwise the code of the failure.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::ArgMatches;

use crate::chat::{abort_after_stop, chat_failure, read_stream, ChatClient, ChatRequest, Silent, StreamEnd, Timings};
use crate::cli::{CheckArgs, CheckOutput, GlobalArgs};
use crate::config::{api_key, chat_url, Secret};
use crate::exit::{code_of, usage, ExitCode, Fault};
use crate::feed::{human, Limits, OpenError, Stop};
use crate::http::Http;
use crate::output::{Notes, Out};
use crate::render::report::{self, CaseResult, Verdict};
use crate::signals;
use crate::stream::transcript::{Retention, Transcript};
use crate::suite::{self, Case};

/// Runs `analyst check`.
pub fn run(args: CheckArgs, matches: Option<&ArgMatches>, global: &GlobalArgs, notes: &Notes) -> Result<ExitCode> {
    let started = Instant::now();
    signals::watch();
    let cases = suite::load(&args.suite, &args.identity.to_input(matches))?;
    let url = chat_url(&args.endpoint)?;
    let key = api_key(&args.endpoint.key, global, notes)?;
    if let Some(dir) = &args.save {
        std::fs::create_dir_all(dir)
            .map_err(|err| usage(format!("cannot create the --save folder {}: {err}", dir.display())))?;
    }
    let junit = match &args.junit {
        Some(path) => Some(
            File::create(path)
                .map_err(|err| usage(format!("cannot create the --junit file {}: {err}", path.display())))?,
        ),
        None => None,
    };
    let runner = Runner {
        http: Http::new(global.connect_timeout, notes)?,
        url,
        key,
        idle: global.idle_timeout,
        deadline: global.timeout.map(|limit| started + limit),
        save: args.save.clone(),
    };
    let results = runner.run_all(&cases, usize::from(args.jobs), notes);
    let total = started.elapsed();
    let (passed, failed, errors) = report::counts(&results);
    notes.info(&format!(
        "{} cases: {passed} passed, {failed} failed, {errors} errors in {}",
        results.len(),
        human(Duration::from_millis(total.as_millis() as u64))
    ));
    let suite_name = args.suite.display().to_string();
    if let Some(file) = junit {
        let mut writer = BufWriter::new(file);
        report::junit(&suite_name, &results, total, &mut writer)
            .and_then(|()| writer.flush())
            .map_err(|err| Fault::new(ExitCode::Unexpected, format!("writing the --junit report: {err}")))?;
    }
    let mut out = Out::stdout();
    if args.tap {
        report::tap(&results, &mut out)?;
    } else if args.output == Some(CheckOutput::Json) {
        report::json(&suite_name, &results, total, &mut out)?;
    }
    out.flush()?;
    match exit_code(&results) {
        ExitCode::Success => Ok(ExitCode::Success),
        code => Err(Fault::new(
            code,
            format!("{} of {} cases did not pass", failed + errors, results.len()),
        )
        .into()),
    }
}

/// 0 when every case passed; 9 when an expectation failed; otherwise the
/// code of the first case that errored (the same for all when, say, the
/// service was down for every case).
fn exit_code(results: &[CaseResult]) -> ExitCode {
    if results.iter().any(|r| matches!(r.verdict, Verdict::Failed(_))) {
        return ExitCode::Expectation;
    }
    results
        .iter()
        .find_map(|r| match r.verdict {
            Verdict::Error { code, .. } => Some(code),
            _ => None,
        })
        .unwrap_or(ExitCode::Success)
}

/// What every case shares.
struct Runner {
    http: Http,
    url: reqwest::Url,
    key: Secret,
    idle: Duration,
    deadline: Option<Instant>,
    save: Option<PathBuf>,
}

impl Runner {
    /// Runs `cases` on `jobs` threads; results come back in suite order, and
    /// each is reported on stderr as it finishes.
    fn run_all(&self, cases: &[Case], jobs: usize, notes: &Notes) -> Vec<CaseResult> {
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<CaseResult>>> = Mutex::new(vec![None; cases.len()]);
        let work = || loop {
            let index = next.fetch_add(1, Ordering::SeqCst);
            let Some(case) = cases.get(index) else { break };
            let result = self.run_case(index, case);
            let line = report::summary(&result);
            match result.verdict {
                Verdict::Passed => notes.info(&line),
                _ => notes.always(&line),
            }
            if let Ok(mut results) = results.lock() {
                results[index] = Some(result);
            }
        };
        std::thread::scope(|scope| {
            let started = (0..jobs.min(cases.len()))
                .filter(|_| std::thread::Builder::new().spawn_scoped(scope, work).is_ok())
                .count();
            // Without any thread to be had, the cases run on this one.
            if started == 0 {
                work();
            }
        });
        results.into_inner().unwrap_or_default().into_iter().flatten().collect()
    }

    /// Runs one case: its turns in order on one chat, stopping at the first
    /// that fails.
    fn run_case(&self, index: usize, case: &Case) -> CaseResult {
        let started = Instant::now();
        let mut result = CaseResult {
            name: case.name.clone(),
            verdict: Verdict::Passed,
            chat_id: None,
            timings: Timings::default(),
            saved: Vec::new(),
        };
        let client = ChatClient::new(
            self.http.clone(),
            self.url.clone(),
            self.key.clone(),
            case.settings.clone(),
        );
        for turn_index in 0..case.turns.len() {
            let outcome = self.run_turn(index, case, turn_index, &client, &mut result, started);
            if let Err(verdict) = outcome {
                result.verdict = verdict;
                break;
            }
        }
        result.timings.total = started.elapsed();
        result
    }

    /// One turn; `Err` carries the verdict that ends the case.
    fn run_turn(
        &self,
        index: usize,
        case: &Case,
        turn_index: usize,
        client: &ChatClient,
        result: &mut CaseResult,
        case_started: Instant,
    ) -> Result<(), Verdict> {
        let turn = &case.turns[turn_index];
        if let Some(signal) = signals::received() {
            return Err(Verdict::Error {
                code: signal.exit_code(),
                message: format!("not run: {}", Stop::Signal(signal)),
            });
        }
        let case_left = case.timeout.saturating_sub(case_started.elapsed());
        let run_left = self
            .deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()));
        let limited_by_run = run_left.is_some_and(|run_left| run_left < case_left);
        let left = run_left.map_or(case_left, |run_left| run_left.min(case_left));
        let body = serde_json::to_value(ChatRequest {
            input: Some(&turn.question),
            chat_id: result.chat_id.as_deref(),
            session_settings: client.settings(),
            active_branch_name: case.branch.as_deref(),
            is_default_branch: case.branch.as_ref().map(|_| case.default_branch),
        })
        .map_err(|err| Verdict::Error {
            code: ExitCode::Unexpected,
            message: err.to_string(),
        })?;
        let turn_started = Instant::now();
        let limits = Limits {
            timeout: Some(left),
            idle: Some(self.idle),
        };
        let mut feed = client.start(body, limits, turn_started);
        let mut transcript = Transcript::new(
            turn.expectations
                .needs_query()
                .map_or(Retention::Nothing, Retention::Selected),
        );
        match feed.wait_open() {
            Ok(()) => {}
            Err(OpenError::Failed(err)) => {
                return Err(Verdict::Error {
                    code: code_of(&err),
                    message: format!("{err:#}"),
                })
            }
            Err(OpenError::Stopped(stop)) => return Err(stopped(stop, case, limited_by_run, client, &transcript)),
        }
        let mut saved = self
            .save_file(index, case, turn_index)
            .map_err(|message| Verdict::Error {
                code: ExitCode::Unexpected,
                message,
            })?;
        if let Some((path, _)) = &saved {
            result.saved.push(path.clone());
        }
        let read = read_stream(
            feed,
            &mut transcript,
            saved.as_mut().map(|(_, file)| file as &mut dyn Write),
            &mut Silent,
            turn_started,
        );
        if let Some((_, file)) = saved.as_mut() {
            let _ = file.flush();
        }
        let (end, timings) = read.map_err(|err| Verdict::Error {
            code: code_of(&err),
            message: format!("{err:#}"),
        })?;
        merge_timings(&mut result.timings, &timings, turn_started.duration_since(case_started));
        if result.chat_id.is_none() {
            result.chat_id = transcript.chat_id().map(str::to_string);
        }
        let failure = match end {
            StreamEnd::Ended(failure) => failure.or_else(|| chat_failure(&transcript)),
            StreamEnd::Stopped(stop) => return Err(stopped(stop, case, limited_by_run, client, &transcript)),
            StreamEnd::ReaderGone => None,
        };
        if let Some(err) = failure {
            return Err(Verdict::Error {
                code: code_of(&err),
                message: format!("{err:#}"),
            });
        }
        let unmet = turn.expectations.unmet(&transcript);
        if unmet.is_empty() {
            return Ok(());
        }
        let prefix = if case.turns.len() > 1 {
            format!("turn {}: ", turn_index + 1)
        } else {
            String::new()
        };
        Err(Verdict::Failed(
            unmet.into_iter().map(|line| format!("{prefix}{line}")).collect(),
        ))
    }

    /// The file that keeps a turn's raw stream with `--save`:
    /// `DIR/NN-case-name.ndjson` (`.T.ndjson` per turn in a conversation).
    fn save_file(&self, index: usize, case: &Case, turn: usize) -> Result<Option<(PathBuf, BufWriter<File>)>, String> {
        let Some(dir) = &self.save else { return Ok(None) };
        let mut name = format!("{:02}-{}", index + 1, slug(&case.name));
        if case.turns.len() > 1 {
            name.push_str(&format!(".{}", turn + 1));
        }
        let path = Path::new(dir).join(format!("{name}.ndjson"));
        let file = File::create(&path).map_err(|err| format!("cannot create {}: {err}", path.display()))?;
        Ok(Some((path, BufWriter::new(file))))
    }
}

/// The verdict of a turn stopped early: timed out (the case's own limit,
/// or the whole run's `--timeout` when `limited_by_run`), stalled or
/// interrupted; the chat is aborted first.
fn stopped(stop: Stop, case: &Case, limited_by_run: bool, client: &ChatClient, transcript: &Transcript) -> Verdict {
    let reason = match stop {
        Stop::Timeout(_) if limited_by_run => "the --timeout of the whole run expired".to_string(),
        Stop::Timeout(_) => format!("timed out after {} (the case's timeout)", human(case.timeout)),
        other => other.to_string(),
    };
    Verdict::Error {
        code: stop.exit_code(),
        message: format!("{reason}{}", abort_after_stop(Some(client), transcript)),
    }
}

/// Adds a turn's timings (counted from the turn's start, `offset` after the
/// case's) to the case's: the first byte and SQL result of the case, the
/// final answer of its last turn.
fn merge_timings(case: &mut Timings, turn: &Timings, offset: Duration) {
    if case.first_byte.is_none() {
        case.first_byte = turn.first_byte.map(|at| offset + at);
    }
    if case.first_sql.is_none() {
        case.first_sql = turn.first_sql.map(|at| offset + at);
    }
    if let Some(at) = turn.answer {
        case.answer = Some(offset + at);
    }
}

/// A file-name-safe form of a case name: lowercase letters, digits and `-`.
fn slug(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches('-');
    if slug.is_empty() {
        "case".to_string()
    } else {
        slug.to_string()
    }
}
