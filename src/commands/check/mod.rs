//! `analyst check SUITE.toml`: ask an agent known questions, several at a
//! time, each case with its own timeout (the chat is aborted when it
//! expires) and as many runs as it repeats, check the answers (and the
//! rows, against `reference_sql` or `expect_rows`) and the budgets, and
//! report for people (stderr, with live progress on a terminal) and CI
//! (JUnit XML, TAP, JSON). `analyst check merge` makes one report of the
//! JSON reports of shards. Exit 0 when all pass, 9 when an expectation
//! failed, otherwise the code of the failure.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::api::chat::ChatClient;
use crate::api::data::DataClient;
use crate::error::{fail, kind_of, Fault, Kind, SUCCESS};
use crate::exchange::{Asked, Exchange, RecordAs, TurnObserver};
use crate::expect::Check;
use crate::files::{append, create_private_folder, file_stem, write_whole, LazyFile};
use crate::input::Deadline;
use crate::net::http::Http;
use crate::output::{Notes, Out, Tone};
use crate::render::markdown;
use crate::results::{Collected, RowSink, RowSource, SqlResult};
use crate::settings::checks::new_message_id;
use crate::settings::{
    ChatSettings, CheckSettings, Images, Limits, MergeSettings, Network, Question, ReportFormat, ReportSettings,
};
use crate::signals::{self, timeout};
use crate::stream::transcript::Keep;
use crate::stream::turn::{Timings, Turn};
use crate::text::{head, human};

mod progress;

pub use crate::evals::select::list;
use crate::evals::select::{check_reports_apart, load};
use crate::evals::{formats, page, report, summary};
use progress::RunsProgress;

use crate::evals::grade::{grade, Miss, Reason, Sheet, Verdict};
use crate::evals::suite::{Case, GroundTruth, RowsSource};
use report::{seconds, CaseReport, CubeGrade, Outcome, Report, RunReport, RunSeconds, ANSWER_KEPT};

/// Runs `analyst check`.
pub fn run(settings: CheckSettings, notes: &Notes, out: &mut Out) -> Result<()> {
    let started = Instant::now();
    signals::watch();
    let cases = load(&settings.selection, &settings.identity, Some(&settings.data), notes)?;
    check_reports_apart(&settings.selection, &cases, &settings.report.written())?;
    let cases: Vec<Case> = cases.into_iter().map(|case| overridden(case, &settings)).collect();
    let baseline = read_baseline(&settings.report)?;
    if let Some(dir) = &settings.save {
        create_private_folder(dir)
            .map_err(|err| crate::error::usage(format!("cannot create the --save folder {}: {err}", dir.display())))?;
    }
    let chat = ChatSettings {
        url: settings.url.clone(),
        key: settings.key.clone(),
        cube_token: settings.cube_token.clone(),
        identity: None,
    };
    // The data query API, for reference_sql and ground truths (checked
    // when the suite was read) and for the rest of a truncated result.
    let compares = cases
        .iter()
        .any(|case| case.turns.iter().any(|turn| turn.rows.is_some()));
    let data = match compares && settings.data.check().is_ok() {
        true => Some(DataClient::new(
            Http::new(settings.network.connect_timeout, notes)?,
            &settings.data,
            settings.network,
            started,
            notes,
        )?),
        false => None,
    };
    let runner = Runner {
        client: ChatClient::new(Http::new(settings.network.connect_timeout, notes)?, &chat),
        chat,
        notes: notes.clone(),
        settings: &settings,
        deadline: settings.network.limits.timeout.map(|limit| started + limit),
        data,
        references: cases.iter().map(|_| OnceLock::new()).collect(),
        truths: cases.iter().map(|_| OnceLock::new()).collect(),
        images: Images::default(),
    };
    let results = runner.run_all(&cases, settings.jobs, notes);
    // A failure of the whole run (a signal, the credentials refused, the
    // service unreachable, --timeout) is its exit, with no report: its
    // cases got no verdict.
    if let Some(stop) = signals::stopped() {
        let ran: usize = results.iter().map(|case| case.runs.len()).sum();
        let runs: usize = cases.iter().map(|case| runs_of(case, &settings)).sum();
        return Err(fail(
            stop.kind,
            format!("{stop}; the run stopped: {ran} of {runs} runs finished"),
        ));
    }
    let shard = settings.selection.shard.map(|(k, n)| format!("{k}/{n}"));
    let mut report = Report::new(
        &settings.selection.suite.display().to_string(),
        shard,
        results,
        seconds(started.elapsed()),
    );
    report.gate(settings.report.min_accuracy);
    publish(&mut report, &settings.report, baseline, notes, out)?;
    conclude(&report, &settings.report)
}

/// How many runs `case` has in this run.
fn runs_of(case: &Case, settings: &CheckSettings) -> usize {
    settings.repeat.unwrap_or(case.repeat)
}

/// Runs `analyst check merge`: one report of the shards' reports, with the
/// exit code one unsharded run would have given.
pub fn merge(settings: MergeSettings, notes: &Notes, out: &mut Out) -> Result<()> {
    let baseline = read_baseline(&settings.report)?;
    let reports = settings
        .reports
        .iter()
        .map(|path| Ok((path.display().to_string(), Report::read(path, "check merge")?)))
        .collect::<Result<Vec<_>>>()?;
    let min_accuracy = settings
        .report
        .min_accuracy
        .or_else(|| reports.iter().find_map(|(_, report)| report.min_accuracy));
    let mut report = Report::merge(reports)?;
    report.gate(min_accuracy);
    for case in &report.cases {
        tell(notes, &report::case_lines(case));
    }
    publish(&mut report, &settings.report, baseline, notes, out)?;
    conclude(&report, &settings.report)
}

/// The `--baseline` report, read before anything runs.
fn read_baseline(settings: &ReportSettings) -> Result<Option<(String, Report)>> {
    settings
        .baseline
        .as_ref()
        .map(|path| Ok((path.display().to_string(), Report::read(path, "--baseline")?)))
        .transpose()
}

/// Compares the report with the baseline (the regressions on stderr),
/// prints the counts, and writes the reports the settings ask for.
fn publish(
    report: &mut Report,
    settings: &ReportSettings,
    baseline: Option<(String, Report)>,
    notes: &Notes,
    out: &mut Out,
) -> Result<()> {
    if let Some((file, baseline)) = baseline {
        report.compare_with(&file, &baseline);
        let regressions = report.regressions();
        if regressions.is_empty() {
            notes.info(&format!("no regression against {file}"));
        } else {
            notes.painted(
                Tone::Warning,
                &format!("{} cases regressed", regressions.len()),
                &format!(" against {file}:"),
                true,
            );
            for regression in regressions {
                notes.always(&format!("  {}: {}", regression.name, regression.reasons.join("; ")));
            }
        }
    }
    let accuracy = match (&report.accuracy, report.min_accuracy) {
        (_, Some(min)) => {
            let (passed, total) = (report.passed, report.cases.len());
            let meets = match report.meets_min_accuracy() {
                true => "meets",
                false => "is below",
            };
            format!(
                ", accuracy {} ({passed}/{total}) {meets} --min-accuracy {}",
                report::percent(passed, total),
                report::percent_of(min)
            )
        }
        (Some(accuracy), None) => format!(", accuracy {accuracy}"),
        (None, None) => String::new(),
    };
    notes.info(&format!(
        "{} cases: {}{accuracy}",
        report.cases.len(),
        report::counts(report)
    ));
    write_reports(report, settings, notes, out)
}

/// Writes the reports the settings ask for: `--junit` (whole or not at
/// all), `--summary` (appended), and `--tap` or `-o json|markdown|html` on
/// stdout or `--output-file`, which is kept whatever the exit: a run whose
/// every case got a verdict is reported, also when some did not pass.
fn write_reports(report: &Report, settings: &ReportSettings, notes: &Notes, out: &mut Out) -> Result<()> {
    if let Some(path) = &settings.junit {
        let mut xml = Vec::new();
        formats::junit(report, &mut xml)?;
        write_whole(path, &xml).map_err(|err| {
            fail(
                Kind::CannotWrite,
                format!("cannot write the --junit report {}: {err}", path.display()),
            )
        })?;
    }
    if let Some(path) = &settings.summary {
        append(path, &summary::markdown(report)).map_err(|err| {
            fail(
                Kind::CannotWrite,
                format!("cannot append the --summary to {}: {err}", path.display()),
            )
        })?;
    }
    match settings.format {
        Some(ReportFormat::Tap) => formats::tap(report, out)?,
        Some(ReportFormat::Json) => formats::json(report, out)?,
        Some(ReportFormat::Markdown) => out.write_all(summary::markdown(report).as_bytes())?,
        Some(ReportFormat::Html) => out.write_all(page::html(report, notes).as_bytes())?,
        None => {}
    }
    out.flush()?;
    out.mark_whole();
    Ok(())
}

/// The exit of a run: the cases' failure, else a regression when
/// `--fail-on-regression` asks, else success.
fn conclude(report: &Report, settings: &ReportSettings) -> Result<()> {
    let total = report.cases.len();
    if let Some(kind) = report.failure() {
        let below = match report.min_accuracy {
            Some(min) => format!(", below --min-accuracy {}", report::percent_of(min)),
            None => String::new(),
        };
        return Err(fail(
            kind,
            format!("{} of {total} cases did not pass{below}", report.failed + report.errors),
        ));
    }
    let regressions = report.regressions().len();
    if settings.fail_on_regression && regressions > 0 {
        return Err(fail(
            Kind::Expectation,
            format!("{regressions} of {total} cases regressed against the baseline (--fail-on-regression)"),
        ));
    }
    Ok(())
}

/// Prints a verdict's lines, its first word (`PASS`, `FAIL`, `REVIEW`,
/// `ERROR`) painted: a pass unless `-q`, anything else always.
fn tell(notes: &Notes, lines: &[String]) {
    let Some((head, reasons)) = lines.split_first() else {
        return;
    };
    let (word, rest) = head.split_at(head.find(' ').unwrap_or(head.len()));
    match word {
        "PASS" => notes.painted(Tone::Good, word, rest, false),
        "REVIEW" => notes.painted(Tone::Warning, word, rest, true),
        _ => notes.painted(Tone::Bad, word, rest, true),
    }
    for reason in reasons {
        notes.always(reason);
    }
}

/// One run of one case: which case (its place among the selected ones),
/// which run of how many.
#[derive(Clone, Copy, Debug)]
struct Slot {
    case: usize,
    run: usize,
    runs: usize,
}

/// How a run ended early: why it did not pass.
#[derive(Debug)]
enum RunEnd {
    /// The chat worked but expectations were not met: one line each.
    Failed(Vec<String>),
    /// The request or the stream failed, or the time ran out.
    Error {
        /// The kind of failure (and so its exit code).
        kind: Kind,
        /// What went wrong.
        message: String,
    },
    /// A failure of the whole run (a signal, the credentials refused, the
    /// service not there, `--timeout`): every case stops.
    Stop {
        /// The kind of failure (and so the run's exit code).
        kind: Kind,
        /// What went wrong.
        message: String,
    },
}

/// The rows a query of the data query API returned, or why it failed.
type Fetched<T> = Result<T, (Kind, String)>;

/// What every case shares.
struct Runner<'a> {
    client: ChatClient,
    /// Where the service is and the credentials (who asks, as recorded).
    chat: ChatSettings,
    /// Where warnings go.
    notes: Notes,
    settings: &'a CheckSettings,
    deadline: Option<Instant>,
    /// The data query API, when one is set up.
    data: Option<DataClient>,
    /// Each case's `reference_sql` rows, fetched by its first run to need them.
    references: Vec<OnceLock<Fetched<Collected>>>,
    /// Each case's ground truth, fetched by its first run to need it.
    truths: Vec<OnceLock<Fetched<Sheet>>>,
    /// The cases' images, read as their cases run.
    images: Images,
}

impl Runner<'_> {
    /// Runs every run of `cases` on `jobs` threads; results come back in
    /// suite order, one per case (a repeated case's from its runs), and
    /// each run is reported on stderr as it finishes.
    fn run_all(&self, cases: &[Case], jobs: usize, notes: &Notes) -> Vec<CaseReport> {
        let slots: Vec<Slot> = cases
            .iter()
            .enumerate()
            .flat_map(|(case, c)| {
                let runs = self.settings.repeat.unwrap_or(c.repeat);
                (0..runs).map(move |run| Slot { case, run, runs })
            })
            .collect();
        let progress = RunsProgress::new(slots.len(), notes);
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<RunReport>>> = Mutex::new(vec![None; slots.len()]);
        let work = || loop {
            // After a failure of the whole run, no case starts.
            if signals::stopped().is_some() {
                break;
            }
            let index = next.fetch_add(1, Ordering::SeqCst);
            let Some(&slot) = slots.get(index) else { break };
            let case = &cases[slot.case];
            progress.started(index, &case.name, slot.run + 1, slot.runs);
            let result = self.run_case(slot, case);
            // A run the stop ended says nothing: the run's one line does.
            let stopped = signals::stopped().is_some();
            progress.finished(index, result.status, || {
                if !stopped {
                    tell(notes, &report::run_summary(&case.name, &result, slot.runs));
                }
            });
            if let Ok(mut results) = results.lock() {
                results[index] = Some(result);
            }
        };
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            if progress.is_shown() {
                scope.spawn(|| progress.tick_until(&done));
            }
            let workers: Vec<_> = (0..jobs.min(slots.len()))
                .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
                .collect();
            // Without any thread to be had, the cases run on this one.
            if workers.is_empty() {
                work();
            }
            for worker in workers {
                let _ = worker.join();
            }
            done.store(true, Ordering::SeqCst);
        });
        progress.clear();
        let mut runs = results
            .into_inner()
            .unwrap_or_default()
            .into_iter()
            .zip(&slots)
            .peekable();
        let mut by_case = Vec::new();
        for (position, case) in cases.iter().enumerate() {
            let mut case_runs = Vec::new();
            while let Some((result, _)) = runs.next_if(|(_, slot)| slot.case == position) {
                case_runs.extend(result);
            }
            let repeated = case_runs.len() > 1;
            let mut result = CaseReport::new(case.index, &case.name, case.pass_rate, case_runs);
            result.space = case.space.clone();
            if repeated && signals::stopped().is_none() {
                tell(notes, &report::case_summary(&result));
            }
            by_case.push(result);
        }
        by_case
    }

    /// Runs one case once: its turns in order on one fresh chat, stopping
    /// at the first that fails.
    fn run_case(&self, slot: Slot, case: &Case) -> RunReport {
        let started = Instant::now();
        let mut run = RunReport {
            run: slot.run + 1,
            status: Outcome::Passed,
            messages: Vec::new(),
            exit_code: SUCCESS,
            chat_id: None,
            message_id: None,
            message_ids: Vec::new(),
            question: None,
            answer: None,
            seconds: RunSeconds::default(),
            usage: None,
            saved: Vec::new(),
            cube: CubeGrade::default(),
        };
        let exchange = Exchange {
            client: self.client.as_user(case.settings.clone()),
            url: &self.settings.url,
            asker: self.chat.asker(Some(&case.settings)),
            recording: self.settings.recording.as_ref(),
            notes: &self.notes,
        };
        for turn_index in 0..case.turns.len() {
            let outcome = self.run_turn(slot, case, turn_index, &exchange, &mut run, started);
            if let Err(verdict) = outcome {
                if let RunEnd::Stop { kind, message } = &verdict {
                    signals::stop_everything(Fault::stop(*kind, message.clone()));
                }
                (run.status, run.messages, run.exit_code) = match verdict {
                    RunEnd::Failed(lines) => (Outcome::Failed, lines, Kind::Expectation.exit_code()),
                    RunEnd::Error { kind, message } | RunEnd::Stop { kind, message } => {
                        (Outcome::Error, vec![message], kind.exit_code())
                    }
                };
                break;
            }
        }
        run.seconds.total = seconds(started.elapsed());
        run
    }

    /// One turn; `Err` carries the verdict that ends the run.
    fn run_turn(
        &self,
        slot: Slot,
        case: &Case,
        turn_index: usize,
        exchange: &Exchange<'_>,
        run: &mut RunReport,
        case_started: Instant,
    ) -> Result<(), RunEnd> {
        let turn = &case.turns[turn_index];
        if let Some(stop) = signals::stopped() {
            return Err(RunEnd::Stop {
                kind: stop.kind,
                message: format!("not run: {stop}"),
            });
        }
        let case_left = case.timeout.saturating_sub(case_started.elapsed());
        let run_left = self
            .deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()));
        let limited_by_run = run_left.is_some_and(|run_left| run_left < case_left);
        let left = run_left.map_or(case_left, |run_left| run_left.min(case_left));
        let case_timed_out = || {
            Fault::new(
                Kind::Timeout,
                format!("timed out after {} (the case's timeout)", human(case.timeout)),
            )
        };
        let deadline = match (limited_by_run, self.deadline, self.settings.network.limits.timeout) {
            (true, Some(at), Some(limit)) => Deadline::at(at, timeout(limit)),
            _ => Deadline::at(case_started + case.timeout, case_timed_out()),
        };
        let images = self.images.load(&turn.images, &deadline).map_err(|err| {
            let (kind, message) = (kind_of(&err), format!("{err:#}"));
            match kind {
                Kind::Timeout if limited_by_run => RunEnd::Stop { kind, message },
                _ => self.chat_failure(kind, message),
            }
        })?;
        let message_id = new_message_id();
        run.message_ids.push(message_id.clone());
        run.message_id = Some(message_id.clone());
        let question = Question {
            input: Some(turn.question.clone()),
            chat_id: run.chat_id.clone(),
            message_id: Some(message_id),
            branch: case.branch.clone(),
            default_branch: case.default_branch,
            images,
        };
        let turn_started = Instant::now();
        let network = Network {
            limits: Limits {
                timeout: Some(left),
                ..self.settings.network.limits
            },
            ..self.settings.network
        };
        let mut check = Check::new(turn.expectations.clone());
        if turn.rows.is_some() {
            check = check.keeping_result();
        }
        let mut observer = TurnObserver::new(None, check, self.settings.recording.is_some());
        observer.last_query.on = matches!(
            turn.rows.as_ref().map(|rows| &rows.source),
            Some(RowsSource::GroundTruth(_))
        );
        let mut saved = self.save_file(slot, case, turn_index);
        // A timeout at the turn's deadline is the case's (or the run's);
        // one before it is a stall.
        let explain = |err: anyhow::Error| match kind_of(&err) {
            Kind::Timeout if turn_started.elapsed() >= left && limited_by_run => {
                fail(Kind::Timeout, "the --timeout of the whole run expired")
            }
            Kind::Timeout if turn_started.elapsed() >= left => case_timed_out().into(),
            _ => err,
        };
        let mut settled = exchange.ask(Asked {
            question,
            thread: None,
            started: turn_started,
            network,
            keep: Keep::default(),
            tee: saved.as_mut(),
            observer: &mut observer,
            out: &mut std::io::sink(),
            explain_timeout: Some(&explain),
        });
        if let Some(file) = saved.as_ref().filter(|file| file.created()) {
            run.saved.push(file.path().display().to_string());
        }
        let reading = &settled.turn;
        add_timings(run, &reading.timings, turn_started.duration_since(case_started));
        run.question = Some(turn.question.clone());
        run.answer = reading.transcript.answer().map(|(answer, _)| kept_answer(&answer));
        if run.chat_id.is_none() {
            run.chat_id = reading.transcript.chat_id().map(str::to_string);
        }
        if let Some(usage) = reading.transcript.usage() {
            run.usage.get_or_insert_default().add(usage.counts);
        }
        let turn_exit_code = settled.exit_code();
        let failure = settled.failure.take();
        let last_query = observer.last_query.result.take();
        let verdict = self.judge(
            slot,
            case,
            turn_index,
            failure,
            last_query,
            observer.check,
            &settled.turn,
            run,
        );
        let verdict_exit_code = match &verdict {
            Ok(()) => SUCCESS,
            Err(RunEnd::Failed(_)) => Kind::Expectation.exit_code(),
            Err(RunEnd::Error { kind, .. } | RunEnd::Stop { kind, .. }) => kind.exit_code(),
        };
        let how = RecordAs {
            command: "check",
            exit_code: turn_exit_code,
            verdict_exit_code: Some(verdict_exit_code),
            suite: Some(self.settings.selection.suite.display().to_string()),
            case: Some(case.name.clone()),
        };
        settled.record(how, &self.notes);
        verdict
    }

    /// The verdict on turn `turn_index` of `case`, read into `reading` and
    /// ended as `settled` says (`last_query`: its last SQL result; `check`:
    /// its expectations): graded as Cube grades one of Cube's eval
    /// questions, else its expectations, rows and budgets checked.
    #[allow(clippy::too_many_arguments)]
    fn judge(
        &self,
        slot: Slot,
        case: &Case,
        turn_index: usize,
        settled: Option<anyhow::Error>,
        last_query: Option<SqlResult>,
        mut check: Check,
        reading: &Turn,
        run: &mut RunReport,
    ) -> Result<(), RunEnd> {
        let turn = &case.turns[turn_index];
        let transcript = &reading.transcript;
        if let Some(RowsSource::GroundTruth(truth)) = turn.rows.as_ref().map(|rows| &rows.source) {
            return self.grade_turn(slot.case, truth, settled, last_query, run);
        }
        if let Some(err) = settled {
            return Err(self.chat_failure(kind_of(&err), format!("{err:#}")));
        }
        let mut unmet = check.unmet(transcript);
        if let Some(expected) = &turn.rows {
            let rows = match &expected.source {
                RowsSource::Inline(rows) => rows,
                RowsSource::Sql(sql) => match self.fetched(&self.references[slot.case], sql) {
                    Ok(reference) => &reference.rows,
                    Err((kind, message)) => {
                        return Err(self.data_failure(kind, format!("reference_sql failed: {message}")))
                    }
                },
                RowsSource::GroundTruth(_) => unreachable!("graded above"),
            };
            let source = self.data.as_ref().map(|data| data as &dyn RowSource);
            unmet.extend(check.compare_rows(rows, expected.how, expected.source.field(), source));
        }
        unmet.extend(case.budgets.exceeded(reading.timings.total, transcript.usage()));
        if unmet.is_empty() {
            return Ok(());
        }
        let prefix = if case.turns.len() > 1 {
            format!("turn {}: ", turn_index + 1)
        } else {
            String::new()
        };
        Err(RunEnd::Failed(
            unmet.into_iter().map(|line| format!("{prefix}{line}")).collect(),
        ))
    }

    /// True when a failure of `kind` fails the whole run, not one case: a
    /// signal, the credentials refused, the agent or the service not
    /// there, or the run's `--timeout` expired.
    fn ends_the_run(&self, kind: Kind) -> bool {
        match kind {
            Kind::Auth | Kind::Forbidden | Kind::NotFound | Kind::Service => true,
            Kind::Interrupted | Kind::Terminated | Kind::HungUp => true,
            Kind::Timeout => self.deadline.is_some_and(|deadline| Instant::now() >= deadline),
            _ => false,
        }
    }

    /// How a turn that failed as `kind` ends its run: the whole run's
    /// failure, or this run's.
    fn chat_failure(&self, kind: Kind, message: String) -> RunEnd {
        match self.ends_the_run(kind) {
            true => RunEnd::Stop { kind, message },
            false => RunEnd::Error { kind, message },
        }
    }

    /// How a query of the data query API that failed as `kind` ends its
    /// run: as a chat's failure would, and also when it ran out of time
    /// (it has only the run's `--timeout`, which it sees coming).
    fn data_failure(&self, kind: Kind, message: String) -> RunEnd {
        match kind {
            Kind::Timeout => RunEnd::Stop { kind, message },
            _ => self.chat_failure(kind, message),
        }
    }

    /// The rows of `sql` from the data query API into a `T`, run by the
    /// first run of a case that needs them and kept in `cell` for the others.
    fn fetched<'c, T: RowSink + Default>(
        &self,
        cell: &'c OnceLock<Fetched<T>>,
        sql: &str,
    ) -> Result<&'c T, (Kind, String)> {
        let fetched = cell.get_or_init(|| {
            let Some(data) = &self.data else {
                return Err((Kind::Usage, "it needs the data query API".to_string()));
            };
            let mut rows = T::default();
            data.fetch(sql, None, &mut rows)
                .map(|_| rows)
                .map_err(|err| (kind_of(&err), format!("{err:#}")))
        });
        fetched.as_ref().map_err(Clone::clone)
    }

    /// Grades a turn of one of Cube's eval questions as Cube does, into
    /// the run's [`CubeGrade`]: `settled` is how the turn ended, `last` the
    /// agent's last SQL result. A failure of the whole run (credentials,
    /// an unreachable service, a signal, `--timeout`) keeps its own code;
    /// any other verdict but `pass` fails the run (exit 9): `error` as an
    /// error of the case, `fail` and `review` as a failure.
    fn grade_turn(
        &self,
        case: usize,
        truth: &GroundTruth,
        settled: Option<anyhow::Error>,
        last: Option<SqlResult>,
        run: &mut RunReport,
    ) -> Result<(), RunEnd> {
        if let Some(err) = &settled {
            let kind = kind_of(err);
            if !matches!(kind, Kind::BadStream | Kind::Timeout | Kind::ToolError) || self.ends_the_run(kind) {
                return Err(self.chat_failure(kind, format!("{err:#}")));
            }
        }
        run.cube.ground_truth = match truth {
            GroundTruth::Sql(sql) => Some(sql.clone()),
            GroundTruth::NotFound(_) => None,
        };
        run.cube.agent_sql = last.as_ref().and_then(|result| result.sql.clone());
        let miss = self.cube_miss(case, truth, settled, last, run.answer.as_deref())?;
        run.cube.verdict = Some(miss.as_ref().map_or(Verdict::Pass, |miss| miss.verdict));
        let Some(miss) = miss else { return Ok(()) };
        run.cube.score_reason = miss.reason;
        run.cube.analysis = Some(miss.analysis.clone());
        let line = match miss.reason {
            Some(reason) => format!("{}: {}", reason.as_str(), miss.analysis),
            None => format!("review: {}", miss.analysis),
        };
        // Cube's `error` is an error of the question, not a failed answer:
        // counted among the errors, its exit code still the verdict's (9).
        match miss.verdict {
            Verdict::Error => Err(RunEnd::Error {
                kind: Kind::Expectation,
                message: line,
            }),
            _ => Err(RunEnd::Failed(vec![line])),
        }
    }

    /// Why a graded turn does not pass, in Cube's terms; `None` when it
    /// does (`answer`: the agent's final answer). `Err` for a failure of
    /// the whole run on the way.
    fn cube_miss(
        &self,
        case: usize,
        truth: &GroundTruth,
        settled: Option<anyhow::Error>,
        last: Option<SqlResult>,
        answer: Option<&str>,
    ) -> Result<Option<Miss>, RunEnd> {
        if let Some(err) = settled {
            return Ok(Some(Miss::new(Reason::AgentError, format!("{err:#}"))));
        }
        let sql = match truth {
            GroundTruth::Sql(sql) => sql,
            GroundTruth::NotFound(name) => {
                return Ok(Some(Miss::new(
                    Reason::GroundTruthNotFound,
                    format!("no certified query is named {name:?}"),
                )))
            }
        };
        let Some(result) = last else {
            return Ok(Some(Miss::review(match answer.is_some_and(markdown::has_table) {
                true => "the agent ran no query: it put its results inline, as a Markdown table in its answer (as agents on Cube's chassis runtime do); nothing to compare",
                false => "the agent ran no query: nothing to compare",
            })));
        };
        if let Some(error) = &result.error {
            return Ok(Some(Miss::new(
                Reason::QueryError,
                format!("the agent's query failed: {error}"),
            )));
        }
        let agent = match self.agent_sheet(&result) {
            Ok(sheet) => sheet,
            Err((kind, message)) if kind == Kind::Timeout || self.ends_the_run(kind) => {
                return Err(self.data_failure(kind, message))
            }
            Err((_, why)) => {
                return Ok(Some(Miss::new(
                    Reason::QueryError,
                    format!("the rest of the agent's truncated result could not be fetched: {why}"),
                )))
            }
        };
        let truth = match self.fetched(&self.truths[case], sql) {
            Ok(truth) => truth,
            Err((kind, message)) if kind == Kind::Timeout || self.ends_the_run(kind) => {
                return Err(self.data_failure(kind, message))
            }
            Err((_, message)) => {
                return Ok(Some(Miss::new(
                    Reason::GroundTruthQueryFailed,
                    format!("the ground truth's SQL failed: {message}"),
                )))
            }
        };
        grade(&agent, truth, self.deadline).map_err(|_| RunEnd::Stop {
            kind: Kind::Timeout,
            message: "the --timeout of the whole run expired while grading".to_string(),
        })
    }

    /// The agent's result as graded: its rows from the stream, or every
    /// row of its query from the data query API when it may lack some.
    fn agent_sheet(&self, result: &SqlResult) -> Result<Sheet, (Kind, String)> {
        let failure = |err: anyhow::Error| (kind_of(&err), format!("{err:#}"));
        if !result.may_lack_rows() {
            return Sheet::of_result(result).map_err(failure);
        }
        let Some(data) = &self.data else {
            return Err((Kind::Usage, "no data query API to fetch them with".to_string()));
        };
        let mut sheet = Sheet::default();
        result.fetch_all(data, &mut sheet).map_err(failure)?;
        Ok(sheet)
    }

    /// The file that keeps a turn's raw stream with `--save`:
    /// `DIR/NN-case-name.ndjson` (`.rK` per run of a repeated case, `.T`
    /// per turn in a conversation), created when the first line arrives.
    fn save_file(&self, slot: Slot, case: &Case, turn: usize) -> Option<LazyFile> {
        let dir = self.settings.save.as_ref()?;
        let mut name = format!("{:02}-{}", case.index, file_stem(&case.name));
        if slot.runs > 1 {
            name.push_str(&format!(".r{}", slot.run + 1));
        }
        if case.turns.len() > 1 {
            name.push_str(&format!(".{}", turn + 1));
        }
        Some(LazyFile::new(Path::new(dir).join(format!("{name}.ndjson"))))
    }
}

/// `case` with what the flags override: `--pass-rate` and the budgets
/// (`--max-seconds`, `--max-tokens`, `--max-llm-calls`).
fn overridden(mut case: Case, settings: &CheckSettings) -> Case {
    case.pass_rate = settings.pass_rate.unwrap_or(case.pass_rate);
    let budgets = &mut case.budgets;
    budgets.seconds = settings.max_seconds.or(budgets.seconds);
    budgets.tokens = settings.max_tokens.or(budgets.tokens);
    budgets.llm_calls = settings.max_llm_calls.or(budgets.llm_calls);
    case
}

/// Adds a turn's timings (counted from the turn's start, `offset` after the
/// run's) to the run's: the first byte and SQL result of the run, the
/// final answer of its last turn.
fn add_timings(run: &mut RunReport, turn: &Timings, offset: Duration) {
    let at = |time: Option<Duration>| time.map(|time| seconds(offset + time));
    let seconds = &mut run.seconds;
    if seconds.first_byte.is_none() {
        seconds.first_byte = at(turn.first_byte);
    }
    if seconds.first_sql.is_none() {
        seconds.first_sql = at(turn.first_sql);
    }
    if turn.answer.is_some() {
        seconds.answer = at(turn.answer);
    }
}

/// What a report keeps of an answer: all of it, or its first
/// [`ANSWER_KEPT`] bytes and a marker saying so.
fn kept_answer(answer: &str) -> String {
    let kept = head(answer, ANSWER_KEPT);
    match kept.len() < answer.len() {
        false => answer.to_string(),
        true => format!(
            "{kept}\n\n[analyst: the answer was {} bytes; the report keeps its first {ANSWER_KEPT}]",
            answer.len()
        ),
    }
}
