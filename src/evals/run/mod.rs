//! A `check` run: the one owner of its cases, their runs and turns, its
//! deadlines, its cancellation and what it reports. [`Run::new`] takes the
//! selected cases (with the flags' overrides applied once) and the
//! settings; [`Run::execute`] asks every run of every case on `--jobs`
//! threads — each turn through the turn's owner, [`Exchange::turn`], which
//! records it — grades each turn, and returns the cases' reports in suite
//! order, or the failure of the whole run. A failure of the whole run
//! (the credentials refused, the service not there, the run's `--timeout`)
//! stops the other cases through the run's own [`Stop`] token; a signal
//! stops them too.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;
use reqwest::Url;

use crate::api::chat::ChatClient;
use crate::api::chat::ChatSettings;
use crate::api::data::DataClient;
use crate::api::data::DataSettings;
use crate::ci::CiJob;
use crate::domain::{new_message_id, Limits, Network, Prices, Question};
use crate::error::{fail, kind_of, Fault, Kind, SUCCESS};
use crate::evals::grade::{grade, Miss, Reason, Sheet, Verdict};
use crate::evals::progress::RunsProgress;
use crate::evals::report::{seconds, CaseReport, Outcome, Report, ReportSettings, RunReport, Saved};
use crate::evals::retry::{Earlier, Tally};
use crate::evals::select::Selection;
use crate::evals::suite::{Case, CaseOverrides, CaseTurn, GroundTruth, RowsSource};
use crate::evals::trace::RunTrace;
use crate::evals::verdicts::{self, tell};
use crate::exchange::{Ended, Exchange, Judged, Origin, Plan, RecordAs, Service, TurnObserver};
use crate::expect::Check;
use crate::files::{file_stem, LazyFile};
use crate::history::Recording;
use crate::identity::IdentityInput;
use crate::image::Images;
use crate::input::Deadline;
use crate::net::http::Http;
use crate::otel::{OtlpSettings, Spans};
use crate::output::Notes;
use crate::redact::Secret;
use crate::render::markdown;
use crate::results::{Collected, RowSink, RowSource, SqlResult};
use crate::signals::{timeout, Stop};
use crate::stream::transcript::Keep;
use crate::stream::turn::Timings;
use crate::text::human;

/// The settings of `analyst check`.
#[derive(Debug)]
pub struct CheckSettings {
    /// The suite and the cases that run.
    pub selection: Selection,
    /// `--jobs`.
    pub jobs: usize,
    /// What the flags override in every case.
    pub overrides: CaseOverrides,
    /// Where the report goes.
    pub report: ReportSettings,
    /// `--save DIR`.
    pub save: Option<PathBuf>,
    /// The chat URL.
    pub url: Url,
    /// The API key, when there is one.
    pub key: Option<Secret>,
    /// The Cube token, when there is one.
    pub cube_token: Option<Secret>,
    /// The identity of the command line, which the suite may override.
    pub identity: IdentityInput,
    /// The data query API (`reference_sql`).
    pub data: DataSettings,
    /// Timeouts.
    pub network: Network,
    /// Where every turn is recorded; `None`: not recorded.
    pub recording: Option<Recording>,
    /// The CI job the run is in, for its report's `run`.
    pub ci: Option<CiJob>,
    /// `--stop-when-decided`: a case's repeats end once its verdict is known.
    pub stop_when_decided: bool,
    /// `--retry-errors REPORT`.
    pub retry_errors: Option<PathBuf>,
    /// The config file's `[prices]`: what each run cost.
    pub prices: Prices,
    /// Where the run's spans go; `None`: not sent.
    pub otlp: Option<OtlpSettings>,
}

/// The run of a case whose `certifiedQuery` names no certified query:
/// Cube's verdict `error` ("Ground truth not found"), without a turn spent
/// on asking the agent.
fn not_asked(mut run: RunReport, case: &Case, name: &str) -> RunReport {
    let analysis = format!("no certified query is named {name:?}; the agent was not asked");
    run.question = case.turns.first().map(|turn| turn.question.clone());
    run.status = Outcome::Error;
    run.exit_code = Kind::Expectation.exit_code();
    run.messages = vec![format!("{}: {analysis}", Reason::GroundTruthNotFound.as_str())];
    run.cube.verdict = Some(Verdict::Error);
    run.cube.score_reason = Some(Reason::GroundTruthNotFound);
    run.cube.analysis = Some(analysis);
    run
}

/// One run of one case: which case (its place among the selected ones),
/// which run of how many.
#[derive(Clone, Copy, Debug)]
struct Slot {
    case: usize,
    run: usize,
    runs: usize,
}

/// How a run of a case ended early: why it did not pass.
#[derive(Debug)]
enum RunEnd {
    /// The chat worked but expectations were not met: one line each.
    Failed(Vec<String>),
    /// The request or the stream failed, or the time ran out.
    Error(Fault),
    /// A failure of the whole run (a signal, the credentials refused, the
    /// service not there, `--timeout`): every case stops.
    Stop(Fault),
}

impl RunEnd {
    /// The exit code of the verdict.
    fn exit_code(&self) -> u8 {
        match self {
            RunEnd::Failed(_) => Kind::Expectation.exit_code(),
            RunEnd::Error(fault) | RunEnd::Stop(fault) => fault.kind.exit_code(),
        }
    }
}

/// A `check` turn's verdict: the turn's own exit code is its record's, the
/// verdict's is kept beside it.
impl Judged for Result<(), RunEnd> {
    fn exit_codes(&self, turn: u8) -> (u8, Option<u8>) {
        let verdict = self.as_ref().err().map_or(SUCCESS, RunEnd::exit_code);
        (turn, Some(verdict))
    }
}

/// The rows a query of the data query API returned, or why it failed.
type Fetched<T> = Result<T, (Kind, String)>;

/// A `check` run: its cases and everything they share.
pub struct Run<'a> {
    /// The cases, the flags' overrides applied.
    cases: Vec<Case>,
    client: ChatClient,
    /// Where the service is and the credentials (who asks, as recorded).
    chat: ChatSettings,
    /// Where warnings go.
    notes: Notes,
    settings: &'a CheckSettings,
    /// When the run's `--timeout` expires.
    deadline: Option<Instant>,
    /// Stops every case of this run (a failure of the whole run).
    stop: Stop,
    /// The data query API, when one is set up.
    data: Option<DataClient>,
    /// Each case's `reference_sql` rows, fetched by its first run to need them.
    references: Vec<OnceLock<Fetched<Collected>>>,
    /// Each case's ground truth, fetched by its first run to need it.
    truths: Vec<OnceLock<Fetched<Sheet>>>,
    /// The cases' images, read as their cases run.
    images: Images,
    /// Each case as an earlier report has it (`--retry-errors`): only its
    /// runs that errored are asked again; `None`: asked in full.
    earlier: Vec<Option<Earlier>>,
    /// The run's spans, when they are sent.
    trace: Option<RunTrace>,
}

/// What a turn may take: until when, why it ends then, and whether the
/// run's `--timeout` (not the case's) is what limits it.
struct TurnTime {
    left: Duration,
    limited_by_run: bool,
    deadline: Deadline,
}

impl<'a> Run<'a> {
    /// A run of `cases` (the flags' overrides applied here, once) as
    /// `settings` say, begun at `started`; with an `earlier` report
    /// (`--retry-errors`), only its runs that errored are asked again.
    pub fn new(
        cases: Vec<Case>,
        settings: &'a CheckSettings,
        started: Instant,
        notes: &Notes,
        earlier: Option<Report>,
    ) -> Result<Self> {
        let stop = Stop::default();
        let http = || -> Result<Http> { Ok(Http::new(settings.network.connect_timeout)?.stopped_by(&stop)) };
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
            true => Some(DataClient::new(http()?, &settings.data, settings.network, started)?),
            false => None,
        };
        let cases: Vec<Case> = cases
            .into_iter()
            .map(|case| case.overridden(&settings.overrides))
            .collect();
        let mut earlier_cases = earlier.map(|report| report.cases).unwrap_or_default();
        // A case stands for its earlier runs only as it was then graded.
        let mut changed = Vec::new();
        let earlier = cases
            .iter()
            .map(|case| {
                let at = earlier_cases.iter().position(|earlier| earlier.name == case.name)?;
                let earlier = earlier_cases.swap_remove(at);
                if earlier.hash.as_deref() != Some(case.fingerprint().as_str()) {
                    changed.push(case.name.as_str());
                    return None;
                }
                Some(Earlier::of(earlier))
            })
            .collect::<Vec<Option<Earlier>>>();
        if !changed.is_empty() {
            notes.info(&format!(
                "--retry-errors: {} case(s) changed since that report, asked again whole: {}",
                changed.len(),
                changed.join(", ")
            ));
        }
        if settings.retry_errors.is_some() {
            let again: usize = earlier.iter().flatten().map(|earlier| earlier.again.len()).sum();
            notes.info(&format!(
                "--retry-errors: {again} runs ended in an error outside the answer; only they are asked again"
            ));
        }
        Ok(Run {
            client: ChatClient::new(http()?, &chat),
            chat,
            notes: notes.clone(),
            settings,
            deadline: settings.network.limits.timeout.map(|limit| started + limit),
            data,
            references: cases.iter().map(|_| OnceLock::new()).collect(),
            truths: cases.iter().map(|_| OnceLock::new()).collect(),
            images: Images::default(),
            earlier,
            trace: settings.otlp.clone().map(|otlp| RunTrace::new(otlp, cases.len())),
            cases,
            stop,
        })
    }

    /// The run's spans, its own and its cases' made from `report`; `None`
    /// when they are not sent.
    pub fn into_spans(self, report: &Report) -> Option<Spans> {
        let names: Vec<String> = self.cases.iter().map(|case| case.name.clone()).collect();
        Some(self.trace?.finish(report, &names))
    }

    /// Runs every run of every case on `--jobs` threads: the cases'
    /// reports in suite order, each run told on stderr as it finishes; or
    /// the failure of the whole run (a signal, the credentials refused,
    /// the service unreachable, `--timeout`), with no report: its cases got
    /// no verdict.
    pub fn execute(&mut self) -> Result<Vec<CaseReport>> {
        let results = self.run_all();
        if let Some(stop) = self.stop.stopped() {
            let ran: usize = results.iter().map(|case| case.runs.len()).sum();
            let runs: usize = self.cases.iter().map(|case| case.repeat).sum();
            return Err(fail(
                stop.kind,
                format!("{stop}; the run stopped: {ran} of {runs} runs finished"),
            ));
        }
        Ok(results)
    }

    /// Runs every run of the cases on `--jobs` threads; results come back
    /// in suite order, one per case (a repeated case's from its runs).
    fn run_all(&mut self) -> Vec<CaseReport> {
        // Each case's earlier report is consumed where its runs are put together.
        let mut earlier = std::mem::take(&mut self.earlier);
        let (cases, notes) = (&self.cases, &self.notes);
        let slots: Vec<Slot> = cases
            .iter()
            .enumerate()
            .flat_map(|(case, c)| {
                let runs: Vec<usize> = match &earlier[case] {
                    Some(earlier) => earlier.again.clone(),
                    None => (0..c.repeat).collect(),
                };
                runs.into_iter().map(move |run| Slot {
                    case,
                    run,
                    runs: c.repeat,
                })
            })
            .collect();
        let progress = RunsProgress::new(slots.len(), notes);
        let tallies: Vec<Tally> = cases.iter().map(|_| Tally::default()).collect();
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<RunReport>>> = Mutex::new(vec![None; slots.len()]);
        let work = || loop {
            // After a failure of the whole run, no case starts.
            if self.stop.stopped().is_some() {
                break;
            }
            let index = next.fetch_add(1, Ordering::SeqCst);
            let Some(&slot) = slots.get(index) else { break };
            let case = &cases[slot.case];
            let tally = &tallies[slot.case];
            if self.settings.stop_when_decided && tally.decides(case) {
                tally.skip();
                progress.skipped();
                continue;
            }
            progress.started(index, &case.name, slot.run + 1, slot.runs);
            let result = self.run_case(slot, case);
            tally.count(result.status);
            // A run the stop ended says nothing: the run's one line does.
            let stopped = self.stop.stopped().is_some();
            progress.finished(index, result.status, || {
                if !stopped {
                    tell(notes, &verdicts::run_summary(&case.name, &result, slot.runs));
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
            let workers: Vec<_> = (0..self.settings.jobs.min(slots.len()))
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
            let case_runs = match earlier[position].take() {
                // Nothing to ask again: its earlier verdict stands.
                Some(earlier) if earlier.again.is_empty() => {
                    by_case.push(CaseReport {
                        index: case.index,
                        ..earlier.case
                    });
                    continue;
                }
                Some(earlier) => earlier.merged(case_runs),
                None => case_runs,
            };
            let repeated = case_runs.len() > 1;
            let mut result = CaseReport::new(case.index, &case.name, case.pass_rate, case.repeat, case_runs);
            result.space = case.space.clone();
            result.hash = Some(case.fingerprint());
            let skipped = tallies[position].skipped();
            result.saved = (skipped > 0).then(|| Saved {
                runs: skipped,
                turns: skipped * case.turns.len(),
            });
            if repeated && self.stop.stopped().is_none() {
                tell(notes, &verdicts::case_summary(&result));
            }
            by_case.push(result);
        }
        by_case
    }

    /// Runs one case once: its turns in order on one fresh chat, stopping
    /// at the first that fails (a failure of the whole run stops the
    /// others through the run's token).
    fn run_case(&self, slot: Slot, case: &Case) -> RunReport {
        let (started, began) = (Instant::now(), SystemTime::now());
        let mut run = RunReport::new(slot.run + 1);
        if let Some(name) = case.missing_ground_truth() {
            return not_asked(run, case, name);
        }
        let exchange = Exchange {
            origin: Origin::Service(Box::new(Service {
                client: self.client.as_user(case.settings.clone()),
                url: &self.settings.url,
                asker: self.chat.asker(Some(&case.settings)),
            })),
            recording: self.settings.recording.as_ref(),
            spans: self.trace.as_ref().map(|trace| &trace.spans),
            notes: &self.notes,
        };
        for turn_index in 0..case.turns.len() {
            if let Err(verdict) = self.run_turn(slot, case, turn_index, &exchange, &mut run, started) {
                if let RunEnd::Stop(fault) = &verdict {
                    self.stop.call(Fault::stop(fault.kind, fault.message()));
                }
                run.exit_code = verdict.exit_code();
                (run.status, run.messages) = match verdict {
                    RunEnd::Failed(lines) => (Outcome::Failed, lines),
                    RunEnd::Error(fault) | RunEnd::Stop(fault) => (Outcome::Error, vec![fault.to_string()]),
                };
                break;
            }
        }
        run.seconds.total = seconds(started.elapsed());
        if let Some(trace) = &self.trace {
            trace.case_ran(slot.case, began, SystemTime::now());
        }
        run
    }

    /// One turn, asked and recorded by the turn's owner; `Err` carries the
    /// verdict that ends the run of the case.
    fn run_turn(
        &self,
        slot: Slot,
        case: &Case,
        turn_index: usize,
        exchange: &Exchange<'_>,
        run: &mut RunReport,
        case_started: Instant,
    ) -> Result<(), RunEnd> {
        if let Some(stop) = self.stop.stopped() {
            return Err(RunEnd::Stop(Fault::new(stop.kind, format!("not run: {stop}"))));
        }
        let time = self.turn_time(case, case_started);
        let question = self.question(case, turn_index, &time, run)?;
        let mut observer = self.observer(&case.turns[turn_index]);
        let mut saved = self.save_file(slot, case, turn_index);
        let turn_started = Instant::now();
        let explain = |err: anyhow::Error| self.explain_timeout(err, case, &time, turn_started);
        let plan = Plan {
            question,
            thread: None,
            started: turn_started,
            network: self.turn_network(time.left),
            keep: Keep::default(),
            tee: saved.as_mut(),
            observer: &mut observer,
            out: &mut std::io::sink(),
            explain_timeout: Some(&explain),
            record_as: RecordAs {
                command: "check",
                suite: Some(self.settings.selection.suite.display().to_string()),
                case: Some(case.name.clone()),
            },
            parent: self.trace.as_ref().map(|trace| trace.case_span(slot.case)),
        };
        let verdict = exchange.turn(plan, |ended| {
            add_turn(
                run,
                &ended,
                turn_started.duration_since(case_started),
                &self.settings.prices,
            );
            self.judge(slot, case, turn_index, ended, run)
        });
        if let Some(file) = saved.as_ref().filter(|file| file.created()) {
            run.saved.push(file.path().display().to_string());
        }
        verdict
    }

    /// The question of turn `turn_index` of `case`, on the chat of the
    /// run's turns before it, with a new message id (kept in `run`) and its
    /// images, read within the turn's `time`.
    fn question(
        &self,
        case: &Case,
        turn_index: usize,
        time: &TurnTime,
        run: &mut RunReport,
    ) -> Result<Question, RunEnd> {
        let turn = &case.turns[turn_index];
        let images = self.images.load(&turn.images, &time.deadline).map_err(|err| {
            let (kind, message) = (kind_of(&err), format!("{err:#}"));
            match kind {
                Kind::Timeout if time.limited_by_run => RunEnd::Stop(Fault::new(kind, message)),
                _ => self.chat_failure(kind, message),
            }
        })?;
        let message_id = new_message_id();
        run.message_ids.push(message_id.clone());
        run.message_id = Some(message_id.clone());
        Ok(Question {
            input: Some(turn.question.clone()),
            chat_id: run.chat_id.clone(),
            message_id: Some(message_id),
            branch: case.branch.clone(),
            default_branch: case.default_branch,
            images,
        })
    }

    /// What hears a turn of a case: its expectations (with the result its
    /// rows are compared with), its last SQL result when a ground truth
    /// grades it, its queries when it is recorded.
    fn observer(&self, turn: &CaseTurn) -> TurnObserver<'static> {
        let mut check = Check::new(turn.expectations.clone());
        if turn.rows.is_some() {
            check = check.keeping_result();
        }
        let queries_kept = self.settings.recording.is_some() || self.trace.is_some();
        let mut observer = TurnObserver::new(None, check, queries_kept);
        let graded = matches!(
            turn.rows.as_ref().map(|rows| &rows.source),
            Some(RowsSource::GroundTruth(_))
        );
        observer.last_query.on = graded;
        observer
    }

    /// What a turn of `case` (begun `case_started`) may take: what is left
    /// of the case's timeout, or of the run's `--timeout` when less.
    fn turn_time(&self, case: &Case, case_started: Instant) -> TurnTime {
        let case_left = case.timeout.saturating_sub(case_started.elapsed());
        let run_left = self
            .deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()));
        let limited_by_run = run_left.is_some_and(|run_left| run_left < case_left);
        let left = run_left.map_or(case_left, |run_left| run_left.min(case_left));
        let deadline = match (limited_by_run, self.deadline, self.settings.network.limits.timeout) {
            (true, Some(at), Some(limit)) => Deadline::at(at, timeout(limit), &self.stop),
            _ => Deadline::at(case_started + case.timeout, case_timed_out(case), &self.stop),
        };
        TurnTime {
            left,
            limited_by_run,
            deadline,
        }
    }

    /// The network settings of a turn that has `left` to run.
    fn turn_network(&self, left: Duration) -> Network {
        Network {
            limits: Limits {
                timeout: Some(left),
                ..self.settings.network.limits
            },
            ..self.settings.network
        }
    }

    /// A timeout at the turn's deadline is the case's (or the run's); one
    /// before it is a stall, as it said.
    fn explain_timeout(
        &self,
        err: anyhow::Error,
        case: &Case,
        time: &TurnTime,
        turn_started: Instant,
    ) -> anyhow::Error {
        match kind_of(&err) {
            Kind::Timeout if turn_started.elapsed() >= time.left && time.limited_by_run => {
                fail(Kind::Timeout, "the --timeout of the whole run expired")
            }
            Kind::Timeout if turn_started.elapsed() >= time.left => case_timed_out(case).into(),
            _ => err,
        }
    }

    /// The verdict on turn `turn_index` of `case`, `ended` as the owner
    /// hands it over: graded as Cube grades one of Cube's eval questions,
    /// else its expectations, rows and budgets checked.
    fn judge(
        &self,
        slot: Slot,
        case: &Case,
        turn_index: usize,
        ended: Ended<'_, '_>,
        run: &mut RunReport,
    ) -> Result<(), RunEnd> {
        let turn = &case.turns[turn_index];
        let Ended {
            turn: reading,
            ending,
            observer,
            ..
        } = ended;
        let transcript = &reading.transcript;
        let failure = ending.failure;
        let last_query = observer.last_query.result.take();
        let check = &mut observer.check;
        if let Some(RowsSource::GroundTruth(truth)) = turn.rows.as_ref().map(|rows| &rows.source) {
            return self.grade_turn(slot.case, truth, failure, last_query, run);
        }
        if let Some(err) = failure {
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

    /// True when a failure of `kind` fails the whole run, not one case:
    /// what no case can survive — a signal, the credentials refused, the
    /// agent not there, the service unreachable, or the run's `--timeout`
    /// expired. A 5xx (after `--retries`), a reset connection or a case's
    /// own timeout is that case's error; the run goes on.
    fn ends_the_run(&self, kind: Kind) -> bool {
        match kind {
            Kind::Auth | Kind::Forbidden | Kind::NotFound | Kind::Unreachable => true,
            Kind::Interrupted | Kind::Terminated | Kind::HungUp => true,
            Kind::Timeout => self.deadline.is_some_and(|deadline| Instant::now() >= deadline),
            _ => false,
        }
    }

    /// How a turn that failed as `kind` ends its run: the whole run's
    /// failure, or this run's.
    fn chat_failure(&self, kind: Kind, message: String) -> RunEnd {
        match self.ends_the_run(kind) {
            true => RunEnd::Stop(Fault::new(kind, message)),
            false => RunEnd::Error(Fault::new(kind, message)),
        }
    }

    /// How a query of the data query API that failed as `kind` ends its
    /// run: as a chat's failure would, and also when it ran out of time
    /// (it has only the run's `--timeout`, which it sees coming).
    fn data_failure(&self, kind: Kind, message: String) -> RunEnd {
        match kind {
            Kind::Timeout => RunEnd::Stop(Fault::new(kind, message)),
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
    /// the run's [`CubeGrade`]: `failure`: why the turn failed, if it did, `last` the
    /// agent's last SQL result. A failure of the whole run (credentials,
    /// an unreachable service, a signal, `--timeout`) keeps its own code;
    /// any other verdict but `pass` fails the run (exit 9): `error` as an
    /// error of the case, `fail` and `review` as a failure.
    fn grade_turn(
        &self,
        case: usize,
        truth: &GroundTruth,
        failure: Option<anyhow::Error>,
        last: Option<SqlResult>,
        run: &mut RunReport,
    ) -> Result<(), RunEnd> {
        if let Some(err) = &failure {
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
        let miss = self.cube_miss(case, truth, failure, last, run.answer.as_deref())?;
        run.cube.verdict = Some(miss.as_ref().map_or(Verdict::Pass, |miss| miss.verdict));
        let Some(mut miss) = miss else { return Ok(()) };
        run.comparison = miss.comparison.take();
        run.cube.score_reason = miss.reason;
        run.cube.analysis = Some(miss.analysis.clone());
        let line = match miss.reason {
            Some(reason) => format!("{}: {}", reason.as_str(), miss.analysis),
            None => format!("review: {}", miss.analysis),
        };
        // Cube's `error` is an error of the question, not a failed answer:
        // counted among the errors, its exit code still the verdict's (9).
        match miss.verdict {
            Verdict::Error => Err(RunEnd::Error(Fault::new(Kind::Expectation, line))),
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
        failure: Option<anyhow::Error>,
        last: Option<SqlResult>,
        answer: Option<&str>,
    ) -> Result<Option<Miss>, RunEnd> {
        if let Some(err) = failure {
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
        grade(&agent, truth, self.deadline).map_err(|_| {
            RunEnd::Stop(Fault::new(
                Kind::Timeout,
                "the --timeout of the whole run expired while grading".to_string(),
            ))
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

/// Adds what a turn that ended as `ended` says to its case's run: its
/// timings (counted from the turn's start, `offset` after the run's), its
/// question and answer (as every record of a turn keeps it), the chat it
/// started, what it spent and what that cost at `prices` (unknown once a
/// turn could not be priced).
fn add_turn(run: &mut RunReport, ended: &Ended<'_, '_>, offset: Duration, prices: &Prices) {
    add_timings(run, &ended.turn.timings, offset);
    let record = ended.record;
    run.question.clone_from(&record.question);
    run.answer.clone_from(&record.answer);
    if run.chat_id.is_none() {
        run.chat_id.clone_from(&record.chat_id);
    }
    let cost = record.usage.as_ref().and_then(|usage| prices.turn(usage));
    // The run's message ids are kept as each turn is asked: one is this.
    run.cost = match run.message_ids.len() {
        0 | 1 => cost,
        _ => run.cost.zip(cost).map(|(before, now)| before + now),
    };
    if let Some(usage) = &record.usage {
        run.usage.get_or_insert_default().add(usage.counts);
    }
}

/// The failure of a case whose own timeout expired.
fn case_timed_out(case: &Case) -> Fault {
    Fault::new(
        Kind::Timeout,
        format!("timed out after {} (the case's timeout)", human(case.timeout)),
    )
}

#[cfg(test)]
mod tests;
