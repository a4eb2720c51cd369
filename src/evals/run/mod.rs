//! A `check` run: the one owner of its cases, their runs and turns, its
//! deadline, its cancellation, its trace and its report. [`Run::new`]
//! takes the selected cases (with the flags' overrides applied once) and
//! the settings, and the reports it builds on (`--retry-errors`,
//! `--baseline`); [`Run::execute`] asks every run of every case and
//! returns the run's [`Report`], compared with its baseline and gated,
//! having sent the run's spans: the command only publishes it.
//!
//! In four parts: [`pool`] schedules the runs on `--jobs` threads (slots,
//! the stop, the progress), [`case`] is the life of one run of a case (its
//! turns through the turn's owner, [`crate::exchange::Exchange::turn`],
//! and its judge), [`grading`] grades a turn as Cube does, [`references`] fetches and keeps what the
//! cases compare with. A failure of the whole run (the credentials
//! refused, the service not there, the run's `--timeout`) stops the other
//! cases through the run's own [`Stop`] token; a signal stops them too.

mod case;
mod grading;
mod pool;
mod references;
mod saved;

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::api::chat::{ChatClient, ChatSettings};
use crate::api::data::{DataClient, DataSettings};
use crate::ci::CiJob;
use crate::domain::{without_credentials, Network, Prices};
use crate::error::{fail, usage};
use crate::evals::budget::{BudgetLimits, RunBudget};
use crate::evals::context::RunContext;
use crate::evals::report::{seconds, CaseReport, Outcome, Regraded, Report, ReportSettings, RunReport, Saved};
use crate::evals::retry::{Earlier, Tally};
use crate::evals::saved::{SavedFolder, SavedTurn};
use crate::evals::select::{tell_quarantine, Selected, Selection};
use crate::evals::suite::{suite_identity, Case, CaseOverrides};
use crate::evals::trace::RunTrace;
use crate::evals::verdicts::{self, tell};
use crate::history::Recording;
use crate::identity::IdentityInput;
use crate::image::Images;
use crate::net::http::Http;
use crate::output::Notes;
use crate::signals::{self, Stop};
use crate::telemetry::{self, OtlpSettings};
use pool::{Slot, Work};
use references::References;
use saved::regrade_runs;

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
    /// `--budget-tokens`, `--budget-usd`.
    pub budget: BudgetLimits,
    /// Where the answers graded come from: the service, or a saved run.
    pub answers: Answers,
    /// The identity of the command line, which the suite may override.
    pub identity: IdentityInput,
    /// The data query API (`reference_sql`, ground truths).
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

/// Where the answers a `check` run grades come from.
#[derive(Debug)]
pub enum Answers {
    /// Asked of the chat service, with its credentials (who asks is each
    /// case's).
    Asked(Box<ChatSettings>),
    /// Read from the streams a run saved with `--save` (`--regrade DIR`):
    /// no turn asked, no chat URL or key needed.
    Saved(PathBuf),
}

/// [`Answers`] made ready: the service's client, or the saved folder read.
enum Source<'a> {
    /// The chat service, as `chat` says.
    Asked {
        /// Its client.
        client: ChatClient,
        /// Its settings.
        chat: &'a ChatSettings,
    },
    /// The saved run a re-grade reads.
    Saved(SavedFolder),
}

/// A `check` run: its cases and everything they share.
pub struct Run<'a> {
    /// The cases, the flags' overrides applied.
    cases: Vec<Case>,
    /// The fingerprint of the whole suite's cases.
    suite_hash: String,
    settings: &'a CheckSettings,
    /// Where the answers come from.
    source: Source<'a>,
    /// The turns saved so far (`--save`), for the folder's manifest.
    save_log: Mutex<Vec<SavedTurn>>,
    /// The run's budget, when one is set.
    budget: Option<RunBudget>,
    /// Where warnings go.
    notes: Notes,
    /// When the run began, and when its `--timeout` expires.
    started: Instant,
    started_at: DateTime<Utc>,
    deadline: Option<Instant>,
    /// Stops every case of this run (a failure of the whole run).
    stop: Stop,
    /// What the cases compare with.
    references: References,
    /// The cases' images, read as their cases run.
    images: Images,
    /// Each case as an earlier report has it (`--retry-errors`): only its
    /// runs that errored are asked again; `None`: asked in full.
    earlier: Vec<Option<Earlier>>,
    /// Each case's runs so far, for `--stop-when-decided`.
    tallies: Vec<Tally>,
    /// The `--baseline` report, and its file.
    baseline: Option<(String, Report)>,
    /// The run's spans, when they are sent.
    trace: Option<RunTrace>,
}

impl<'a> Run<'a> {
    /// A run of the `selected` cases (the flags' overrides applied here,
    /// once) as `settings` say, begun now; with an `earlier` report
    /// (`--retry-errors`: of the same agent and suite, else a usage error
    /// naming what differs), only its runs that errored are asked again —
    /// of the cases that did not change since. `baseline`: the report the
    /// run is compared with.
    pub fn new(
        selected: Selected,
        settings: &'a CheckSettings,
        notes: &Notes,
        earlier: Option<Report>,
        baseline: Option<(String, Report)>,
    ) -> Result<Self> {
        let (started, started_at) = (Instant::now(), Utc::now());
        if let Some(report) = &earlier {
            same_agent_and_suite(report, settings)?;
        }
        let stop = Stop::default();
        let http = || -> Result<Http> { Ok(Http::new(settings.network.connect_timeout)?.stopped_by(&stop)) };
        // The data query API, for reference_sql and ground truths (checked
        // when the suite was read) and for the rest of a truncated result.
        let mut cases: Vec<Case> = selected
            .cases
            .into_iter()
            .map(|case| case.overridden(&settings.overrides))
            .collect();
        let source = match &settings.answers {
            Answers::Asked(chat) => Source::Asked {
                client: ChatClient::new(http()?, chat),
                chat,
            },
            Answers::Saved(dir) => {
                let saved = SavedFolder::read(dir, settings.network.limits.timeout)?;
                regrade_runs(&mut cases, &saved, notes);
                Source::Saved(saved)
            }
        };
        let compares = cases
            .iter()
            .any(|case| case.turns.iter().any(|turn| turn.rows.is_some()));
        let data = match compares && settings.data.check().is_ok() {
            true => Some(DataClient::new(http()?, &settings.data, settings.network, started)?),
            false => None,
        };
        for case in cases
            .iter()
            .filter(|case| case.quarantine.as_ref().is_some_and(|q| !q.holds()))
        {
            tell_quarantine(case, notes);
        }
        let earlier = earlier_cases(&cases, earlier, notes);
        if settings.retry_errors.is_some() {
            let again: usize = earlier.iter().flatten().map(|earlier| earlier.again.len()).sum();
            notes.info(&format!(
                "--retry-errors: {again} runs ended in an error outside the answer; only they are asked again"
            ));
        }
        Ok(Run {
            source,
            save_log: Mutex::new(Vec::new()),
            budget: RunBudget::new(settings.budget),
            notes: notes.clone(),
            settings,
            started,
            started_at,
            // The command's --timeout, counted from when it started.
            deadline: signals::deadline()
                .map(|(at, _)| at)
                .or_else(|| settings.network.limits.timeout.map(|limit| started + limit)),
            references: References::new(data, cases.len()),
            images: Images::default(),
            earlier,
            tallies: cases.iter().map(|_| Tally::default()).collect(),
            baseline,
            trace: settings.otlp.clone().map(|otlp| RunTrace::new(otlp, cases.len())),
            suite_hash: selected.hash,
            cases,
            stop,
        })
    }

    /// Runs every run of the cases on `--jobs` threads, each told on
    /// stderr as it finishes, and returns the run's report: the cases in
    /// suite order, what was tested, compared with the baseline and gated
    /// on `--min-accuracy`, the run's spans sent. `Err`: the failure of the
    /// whole run (a signal, the credentials refused, the service
    /// unreachable, `--timeout`), with no report: its cases got no verdict.
    pub fn execute(mut self) -> Result<Report> {
        let cases = self.run_all();
        // The turns paid for stay re-gradable, also of a run that stopped
        // (whose own failure is then what it ends with).
        if let Some(dir) = &self.settings.save {
            match (self.write_manifest(dir, self.context()), self.stop.stopped()) {
                (Err(err), None) => return Err(err),
                (Err(err), Some(_)) => self.notes.warn(&format!("{err:#}")),
                (Ok(()), _) => {}
            }
        }
        if let Some(stop) = self.stop.stopped() {
            let ran: usize = cases.iter().map(|case| case.runs.len()).sum();
            let runs: usize = self.cases.iter().map(|case| case.repeat).sum();
            return Err(fail(
                stop.kind,
                format!("{stop}; the run stopped: {ran} of {runs} runs finished"),
            ));
        }
        let report = self.report(cases);
        if let Some(trace) = self.trace.take() {
            let names: Vec<String> = self.cases.iter().map(|case| case.name.clone()).collect();
            let spans = trace.finish(&report, &names);
            telemetry::export(
                &spans,
                self.settings.network.connect_timeout,
                &self.notes,
                self.settings.recording.as_ref(),
            )?;
        }
        Ok(report)
    }

    /// The report of the cases' reports: what was tested, compared with the
    /// baseline, gated.
    fn report(&mut self, cases: Vec<CaseReport>) -> Report {
        let settings = self.settings;
        let run = self.context();
        let mut report = Report::new(&run.suite, run.shard.clone(), cases, run.seconds);
        report.budget = self.budget.as_ref().map(RunBudget::report);
        if let Source::Saved(saved) = &self.source {
            report.regraded = Some(Regraded {
                folder: saved.dir.display().to_string(),
                saved_run: saved.manifest.run.clone(),
                streams: saved.manifest.streams.len(),
            });
        }
        report.run = Some(run);
        if let Some((file, baseline)) = &self.baseline {
            let report_settings = &settings.report;
            report.compare_with(
                file,
                baseline,
                report_settings.baseline_max_age,
                report_settings.baseline_any,
            );
        }
        report.gate(settings.report.min_accuracy);
        report
    }

    /// What the run tested, where and when, as of now (the report's `run`).
    fn context(&self) -> RunContext {
        let settings = self.settings;
        let selection = &settings.selection;
        let shard = selection.shard.map(|(k, n)| format!("{k}/{n}"));
        let suite = selection.suite.display().to_string();
        let time = seconds(self.started.elapsed());
        // What was asked: the service, or for a re-grade the saved run's.
        let chat_url = match &self.source {
            Source::Asked { chat, .. } => chat.url.to_string(),
            Source::Saved(saved) => saved.manifest.run.chat_url.clone(),
        };
        RunContext {
            branch: RunContext::branch_of(self.cases.iter().map(|case| case.branch.as_deref())),
            identity: settings.identity.summary(),
            suite_path: Some(suite_identity(&selection.suite)),
            suite_hash: Some(self.suite_hash.clone()),
            ..RunContext::new(self.started_at, time, &chat_url, &suite, shard, settings.ci.clone())
        }
    }

    /// Runs every run of the cases on the pool; results come back in suite
    /// order, one per case (a repeated case's from its runs, merged with an
    /// earlier report's).
    fn run_all(&mut self) -> Vec<CaseReport> {
        // Each case's earlier report is consumed where its runs are put together.
        let mut earlier = std::mem::take(&mut self.earlier);
        let slots: Vec<Slot> = self
            .cases
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
        let results = pool::run_all(&*self, &slots, self.settings.jobs, &self.stop, &self.notes);
        let mut runs = results.into_iter().zip(&slots).peekable();
        let mut by_case = Vec::new();
        for (position, case) in self.cases.iter().enumerate() {
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
            let tally = &self.tallies[position];
            let cut_short = case_runs.iter().filter(|run| run.status == Outcome::Skipped).count();
            let left_by_budget = tally.unasked() + cut_short;
            let mut result = CaseReport::new(case.index, &case.name, case.pass_rate, case.repeat, case_runs);
            // A case the budget left undecided has no verdict: skipped.
            if left_by_budget > 0 && !tally.decides(case) {
                result.skipped_by_budget(case.repeat);
            }
            result.space = case.space.clone();
            result.hash = Some(case.fingerprint());
            result.quarantine.clone_from(&case.quarantine);
            if let Some(expired) = case
                .quarantine
                .as_ref()
                .filter(|q| !q.holds() && result.status != Outcome::Passed)
            {
                result.messages.push(expired.expired_note(&case.name));
            }
            let skipped = self.tallies[position].skipped();
            result.saved = (skipped > 0).then(|| Saved {
                runs: skipped,
                turns: skipped * case.turns.len(),
            });
            if repeated && self.stop.stopped().is_none() {
                tell(&self.notes, &verdicts::case_summary(&result));
            }
            by_case.push(result);
        }
        by_case
    }
}

/// The runs of a check on the pool: a slot is one run of a case.
impl Work for Run<'_> {
    type Done = RunReport;

    fn passes_over(&self, slot: Slot) -> bool {
        let tally = &self.tallies[slot.case];
        let case = &self.cases[slot.case];
        if self.settings.stop_when_decided && tally.decides(case) {
            tally.skip();
            return true;
        }
        match self.budget.as_ref().filter(|budget| budget.reached()) {
            Some(budget) => {
                tally.leave_unasked();
                budget.skipped(1, case.turns.len());
                true
            }
            None => false,
        }
    }

    fn run(&self, slot: Slot) -> RunReport {
        let run = self.run_case(slot, &self.cases[slot.case]);
        self.tallies[slot.case].count(run.status);
        run
    }

    fn name(&self, slot: Slot) -> &str {
        &self.cases[slot.case].name
    }

    fn outcome(done: &RunReport) -> Outcome {
        done.status
    }

    fn tell(&self, slot: Slot, done: &RunReport) {
        tell(
            &self.notes,
            &verdicts::run_summary(
                &self.cases[slot.case].name,
                done,
                slot.runs,
                self.cases[slot.case].quarantine.as_ref(),
            ),
        );
    }
}

/// An `--retry-errors` report's verdicts stand for this run's: it must be
/// of the same agent and the same suite (a case whose fingerprint changed
/// is asked again whole, see [`earlier_cases`]).
fn same_agent_and_suite(report: &Report, settings: &CheckSettings) -> Result<()> {
    let asked = report.run.as_ref().map(|run| run.chat_url.as_str());
    let here = match &settings.answers {
        Answers::Asked(chat) => without_credentials(chat.url.as_str()),
        Answers::Saved(_) => String::new(),
    };
    if let Some(other) = asked.filter(|asked| *asked != here) {
        return Err(usage(format!(
            "--retry-errors: that report asked {other}, this run asks {here}: retry a report of the same agent"
        )));
    }
    let suite_path = suite_identity(&settings.selection.suite);
    match report.run.as_ref().and_then(|run| run.suite_path.as_deref()) {
        Some(path) if path == suite_path => Ok(()),
        Some(path) => Err(usage(format!(
            "--retry-errors: that report ran the suite {path}, this run {suite_path}: retry a report of the same suite"
        ))),
        None => Err(usage(
            "--retry-errors: that report does not say which suite it ran (written before reports had suitePath): run the suite again whole",
        )),
    }
}

/// Each of `cases` as the `earlier` report has it, when the case is there
/// and graded as it is now (a case whose fingerprint changed is asked
/// again whole, said in a note).
fn earlier_cases(cases: &[Case], earlier: Option<Report>, notes: &Notes) -> Vec<Option<Earlier>> {
    let mut earlier_cases = earlier.map(|report| report.cases).unwrap_or_default();
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
        .collect();
    if !changed.is_empty() {
        notes.info(&format!(
            "--retry-errors: {} case(s) changed since that report, asked again whole: {}",
            changed.len(),
            changed.join(", ")
        ));
    }
    earlier
}

#[cfg(test)]
mod tests;
