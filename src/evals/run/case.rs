//! One run of a case: its turns in order on one fresh chat, each asked
//! and recorded by the turn's owner ([`Exchange::turn`]), then judged —
//! graded as Cube grades one of Cube's eval questions, else its
//! expectations, rows and budgets checked — until the first that does not
//! pass. How a run ended is its [`RunReport`]; a failure of the whole run
//! stops the other cases through the run's token.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use super::pool::Slot;
use super::{Run, Source};
use crate::domain::{new_message_id, Limits, Network, Prices, Question};
use crate::error::{Fault, Kind};
use crate::evals::grade::{CubeGrade, Reason};
use crate::evals::report::{seconds, Outcome, RunReport};
use crate::evals::saved::SavedTurn;
use crate::evals::suite::{Case, CaseTurn, RowsSource};
use crate::exchange::{Exchange, Judging, Origin, Plan, RecordAs, Service, Trace, TurnObserver};
use crate::expect::Check;
use crate::files::{file_stem, LazyFile};
use crate::input::Deadline;
use crate::results::RowSource;
use crate::signals::timeout;
use crate::stream::transcript::Keep;
use crate::stream::turn::Timings;
use crate::text::{human, one_line, shorten};

/// The run of a case whose `certifiedQuery` names no certified query:
/// Cube's verdict `error` ("Ground truth not found"), without a turn spent
/// on asking the agent.
fn not_asked(mut run: RunReport, case: &Case, name: &str) -> RunReport {
    let analysis = format!("no certified query is named {name:?}; the agent was not asked");
    run.question = case.turns.first().map(|turn| turn.question.clone());
    run.status = Outcome::Error;
    run.exit_code = Kind::Expectation.exit_code();
    run.messages = vec![format!("{}: {analysis}", Reason::GroundTruthNotFound.as_str())];
    run.cube = CubeGrade::missed(Reason::GroundTruthNotFound, analysis);
    run
}

/// Where a turn of a run is read from, through the turn's owner.
pub(super) enum TurnSource<'x, 'e> {
    /// Asked of the service.
    Asked(&'x Exchange<'e>),
    /// Of a re-grade: its saved stream, graded with what was kept of it
    /// when it was asked (its timings, its message id).
    Saved(&'x Exchange<'e>, &'x SavedTurn),
}

/// What a turn may take: until when, why it ends then, and whether the
/// run's `--timeout` (not the case's) is what limits it.
struct TurnTime {
    left: Duration,
    limited_by_run: bool,
    deadline: Deadline,
}

impl Run<'_> {
    /// Runs one case once: its turns in order on one fresh chat, stopping
    /// at the first that does not pass (a failure of the whole run stops
    /// the others through the run's token).
    pub(super) fn run_case(&self, slot: Slot, case: &Case) -> RunReport {
        let (started, began) = (Instant::now(), SystemTime::now());
        let mut run = RunReport::new(slot.run + 1);
        if let Some(name) = case.missing_ground_truth() {
            return not_asked(run, case, name);
        }
        // The service, once per run; a re-grade reads each turn's saved
        // stream instead.
        let asked = match &self.source {
            Source::Asked { client, chat } => Ok(Exchange {
                origin: Origin::Service(Box::new(Service {
                    client: client.as_user(case.settings.clone()),
                    url: &chat.url,
                    asker: chat.asker(Some(&case.settings)),
                })),
                recording: self.settings.recording.as_ref(),
                trace: self
                    .trace
                    .as_ref()
                    .map_or(Trace::Off, |trace| Trace::Into(&trace.spans)),
                notes: &self.notes,
            }),
            Source::Saved(folder) => Err(folder),
        };
        for turn_index in 0..case.turns.len() {
            if turn_index > 0 && self.budget.as_ref().is_some_and(|budget| budget.reached()) {
                let left = case.turns.len() - turn_index;
                if let Some(budget) = &self.budget {
                    budget.skipped(0, left);
                }
                run.status = Outcome::Skipped;
                run.exit_code = Kind::Expectation.exit_code();
                run.messages = vec![format!(
                    "the run's budget was spent before turn {} of {} (budget)",
                    turn_index + 1,
                    case.turns.len()
                )];
                break;
            }
            let turn = match &asked {
                Ok(exchange) => self.run_turn(slot, case, turn_index, TurnSource::Asked(exchange), &mut run, started),
                Err(folder) => self.regrade_turn(folder, slot, case, turn_index, &mut run, started),
            };
            if let Err(fault) = turn {
                if self.ends_the_run(fault.kind) {
                    self.ends_all(fault.clone());
                }
                run.exit_code = fault.kind.exit_code();
                // A failure the judge did not word (the chat's, a case's
                // timeout, a ground truth's) is the run's error.
                if run.status != Outcome::Failed {
                    run.status = Outcome::Error;
                    run.messages = vec![fault.to_string()];
                }
                break;
            }
        }
        run.seconds.total = match asked {
            Ok(_) => seconds(started.elapsed()),
            // A re-graded run took what its turns took when asked.
            Err(folder) => seconds(folder.took(&case.name, slot.run, run.saved.len())),
        };
        if let Some(trace) = &self.trace {
            trace.case_ran(slot.case, began, SystemTime::now());
        }
        run
    }

    /// One turn, asked and recorded by the turn's owner (or, of a re-grade,
    /// read from its saved stream: see [`TurnSource`]); `Err` ends the run
    /// of the case (its status and lines set when it failed).
    pub(super) fn run_turn(
        &self,
        slot: Slot,
        case: &Case,
        turn_index: usize,
        source: TurnSource<'_, '_>,
        run: &mut RunReport,
        case_started: Instant,
    ) -> Result<(), Fault> {
        let (exchange, saved) = match source {
            TurnSource::Asked(exchange) => (exchange, None),
            TurnSource::Saved(exchange, saved) => (exchange, Some(saved)),
        };
        if let Some(stop) = self.stop.stopped() {
            return Err(Fault::new(stop.kind, format!("not run: {stop}")));
        }
        let time = self.turn_time(case, case_started);
        let question = match saved {
            Some(saved) => {
                run.message_ids.extend(saved.message_id.clone());
                run.message_id.clone_from(&saved.message_id);
                Question {
                    input: Some(case.turns[turn_index].question.clone()),
                    ..Question::default()
                }
            }
            None => self.question(case, turn_index, &time, run)?,
        };
        let mut observer = self.observer(&case.turns[turn_index]);
        let mut kept = match saved {
            Some(_) => None,
            None => self.save_file(slot, case, turn_index),
        };
        let mut timings = None;
        let turn_started = Instant::now();
        let explain = |fault: Fault| self.explain_timeout(fault, case, &time, turn_started);
        let plan = Plan {
            question,
            thread: None,
            started: turn_started,
            network: self.turn_network(time.left),
            keep: Keep::default(),
            tee: kept.as_mut(),
            observer: &mut observer,
            out: &mut std::io::sink(),
            explain_timeout: Some(&explain),
            record_as: RecordAs {
                command: "check",
                suite: Some(self.settings.selection.suite.display().to_string()),
                case: Some(case.name.clone()),
                verdict_apart: true,
            },
            parent: self.trace.as_ref().map(|trace| trace.case_span(slot.case)),
        };
        let verdict = exchange.turn(plan, |judging| {
            // A re-grade's turn took what it took when it was asked.
            let took = saved.map_or(judging.turn.timings, |saved| saved.millis.timings());
            timings = Some(took);
            add_turn(
                run,
                &judging,
                &took,
                turn_started.duration_since(case_started),
                &self.settings.prices,
            );
            self.spend(slot, case, turn_index, judging.record.usage.as_ref());
            self.judge(slot, case, turn_index, judging, took.total, run)
        });
        if let Some(file) = kept.as_ref().filter(|file| file.created()) {
            run.saved.push(file.path().display().to_string());
            self.log_saved(slot, case, turn_index, file, run, timings.unwrap_or_default());
        }
        verdict
    }

    /// Counts a finished turn against the run's budget; says once, on
    /// stderr, the turn that reached it.
    fn spend(&self, slot: Slot, case: &Case, turn_index: usize, usage: Option<&crate::domain::UsageRecord>) {
        let Some(budget) = &self.budget else { return };
        let mut turn = format!("case {:?}", case.name);
        match (slot.runs, case.turns.len()) {
            (1, 1) => {}
            (1, _) => turn.push_str(&format!(" (turn {})", turn_index + 1)),
            (_, 1) => turn.push_str(&format!(" (run {})", slot.run + 1)),
            _ => turn.push_str(&format!(" (run {}, turn {})", slot.run + 1, turn_index + 1)),
        }
        if let Some(why) = budget.spend(&turn, usage, &self.settings.prices) {
            self.notes.warn(&format!("budget reached: {why}; no new turn starts"));
        }
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
    ) -> Result<Question, Fault> {
        let turn = &case.turns[turn_index];
        let images = self.images.load(&turn.images, &time.deadline).map_err(|err| {
            let fault = Fault::of(&err);
            match fault.kind {
                // The run's --timeout expired while they were read.
                Kind::Timeout if time.limited_by_run => self.ends_all(fault),
                _ => fault,
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
        // The figures of every answer are reported, faithful or not.
        let mut check = Check::new(turn.expectations.clone()).reading_figures(&turn.question);
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
    fn explain_timeout(&self, fault: Fault, case: &Case, time: &TurnTime, turn_started: Instant) -> Fault {
        match fault.kind {
            Kind::Timeout if turn_started.elapsed() >= time.left && time.limited_by_run => {
                Fault::new(Kind::Timeout, "the --timeout of the whole run expired")
            }
            Kind::Timeout if turn_started.elapsed() >= time.left => case_timed_out(case),
            _ => fault,
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
        judging: Judging<'_, '_>,
        took: Duration,
        run: &mut RunReport,
    ) -> Result<(), Fault> {
        let turn = &case.turns[turn_index];
        let Judging {
            turn: reading,
            ended,
            observer,
            ..
        } = judging;
        let transcript = &reading.transcript;
        let failure = ended.failure;
        let last_query = observer.last_query.result.take();
        let check = &mut observer.check;
        run.figures = check.figures(transcript).map(<[_]>::to_vec).unwrap_or_default();
        run.asks_back = ended.asks_back.is_some();
        let prefix = if case.turns.len() > 1 {
            format!("turn {}: ", turn_index + 1)
        } else {
            String::new()
        };
        match (&ended.asks_back, turn.asks_back) {
            (Some(question), false) => {
                let line = format!("{prefix}Asked back: {}", shorten(&one_line(question)));
                return Err(failed(run, vec![line]));
            }
            (Some(_), true) => return Ok(()),
            (None, true) if failure.is_none() => {
                let line = format!("{prefix}expected the agent to ask back (expect_question); it answered");
                return Err(failed(run, vec![line]));
            }
            (None, _) => {}
        }
        let expected = turn.rows.as_ref();
        if let Some(RowsSource::GroundTruth(truth)) = expected.map(|rows| &rows.source) {
            self.grade_turn(slot.case, truth, failure, last_query, run)?;
            let unfaithful = check.unmet(transcript);
            return match unfaithful.is_empty() {
                true => Ok(()),
                false => Err(failed(run, unfaithful)),
            };
        }
        if let Some(fault) = failure {
            return Err(fault);
        }
        let mut unmet = check.unmet(transcript);
        let reference = match expected.map(|rows| (rows, &rows.source)) {
            Some((rows, RowsSource::Inline(inline))) => Some((rows, inline)),
            Some((rows, RowsSource::Sql(sql))) => match self.references.rows(slot.case, sql) {
                Ok(reference) => Some((rows, &reference.rows)),
                Err(fault) => {
                    let fault = Fault::new(fault.kind, format!("reference_sql failed: {fault}"));
                    return Err(self.data_failure(fault));
                }
            },
            Some((_, RowsSource::GroundTruth(_))) | None => None,
        };
        if let Some((expected, rows)) = reference {
            let source = self.references.data().map(|data| data as &dyn RowSource);
            unmet.extend(check.compare_rows(rows, expected.how, expected.source.field(), source));
        }
        unmet.extend(case.budgets.exceeded(took, transcript.usage()));
        if unmet.is_empty() {
            return Ok(());
        }
        Err(failed(
            run,
            unmet.into_iter().map(|line| format!("{prefix}{line}")).collect(),
        ))
    }

    /// True when a failure of `kind` fails the whole run, not one case:
    /// what no case can survive — a signal, the credentials refused, the
    /// agent not there, the service unreachable, or the run's `--timeout`
    /// expired. A 5xx (after `--retries`), a reset connection or a case's
    /// own timeout is that case's error; the run goes on.
    pub(super) fn ends_the_run(&self, kind: Kind) -> bool {
        match kind {
            Kind::Auth | Kind::Forbidden | Kind::NotFound | Kind::Unreachable => true,
            Kind::Interrupted | Kind::Terminated | Kind::HungUp => true,
            Kind::Timeout => self.deadline.is_some_and(|deadline| Instant::now() >= deadline),
            _ => false,
        }
    }

    /// A failure of the data query API: its timeout is the run's
    /// `--timeout` (the only one it has, which it sees coming and gives up
    /// just before), so it ends the whole run; any other, as its kind says.
    pub(super) fn data_failure(&self, fault: Fault) -> Fault {
        match fault.kind {
            Kind::Timeout => self.ends_all(fault),
            _ => fault,
        }
    }

    /// `fault`, having stopped every case of the run with it.
    pub(super) fn ends_all(&self, fault: Fault) -> Fault {
        self.stop.call(Fault::stop(fault.kind, fault.message()));
        fault
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

/// Adds what a turn, as its owner hands it over (`judging`), says to its case's run: its
/// `timings` (counted from the turn's start, `offset` after the run's), its
/// question and answer (as every record of a turn keeps it), the chat it
/// started, what it spent and what that cost at `prices` (unknown once a
/// turn could not be priced).
fn add_turn(run: &mut RunReport, judging: &Judging<'_, '_>, timings: &Timings, offset: Duration, prices: &Prices) {
    add_timings(run, timings, offset);
    let record = judging.record;
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

/// Ends a run of a case whose answer did not pass: `Failed`, with one line
/// per reason; the failure its exit code comes from.
pub(super) fn failed(run: &mut RunReport, lines: Vec<String>) -> Fault {
    run.status = Outcome::Failed;
    run.messages = lines;
    Fault::new(Kind::Expectation, "the answer did not pass")
}
