//! `analyst check SUITE.toml`: ask an agent known questions, several at a
//! time, each case with its own timeout (the chat is aborted when it
//! expires), check the answers, and report for people (stderr) and CI
//! (JUnit XML, TAP, JSON). Exit 0 when all pass, 9 when an expectation
//! failed, otherwise the code of the failure.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::api::chat::ChatClient;
use crate::error::{fail, kind_of, usage, Kind};
use crate::expect::Check;
use crate::net::http::Http;
use crate::net::signals;
use crate::output::{human, LazyFile, Notes, Out};
use crate::settings::{new_message_id, ChatSettings, CheckSettings, Limits, Network, Question};
use crate::stream::turn::{chat_failure, Sinks, Timings, Turn};

pub mod report;
pub mod suite;

use report::{CaseResult, Verdict};
use suite::Case;

/// Runs `analyst check`.
pub fn run(settings: CheckSettings, notes: &Notes, out: &mut Out) -> Result<()> {
    let started = Instant::now();
    signals::watch();
    let cases: Vec<Case> = suite::load(&settings.suite, &settings.identity)?
        .into_iter()
        .filter(|case| {
            settings
                .filter
                .as_ref()
                .is_none_or(|filter| filter.is_match(&case.name))
        })
        .filter(|case| settings.shard.is_none_or(|(k, n)| shard_of(&case.name, n) == k))
        .collect();
    if cases.is_empty() {
        notes.warn("no case of the suite is selected (--filter, --shard): nothing runs");
    }
    if let Some(dir) = &settings.save {
        std::fs::create_dir_all(dir)
            .map_err(|err| usage(format!("cannot create the --save folder {}: {err}", dir.display())))?;
    }
    let chat = ChatSettings {
        url: settings.url.clone(),
        key: settings.key.clone(),
        cube_token: settings.cube_token.clone(),
        identity: None,
    };
    let runner = Runner {
        client: ChatClient::new(Http::new(settings.network.connect_timeout, notes)?, &chat),
        settings: &settings,
        deadline: settings.network.limits.timeout.map(|limit| started + limit),
    };
    let results = runner.run_all(&cases, settings.jobs, notes);
    let total = started.elapsed();
    let (passed, failed, errors) = report::counts(&results);
    notes.info(&format!(
        "{} cases: {passed} passed, {failed} failed, {errors} errors in {}",
        results.len(),
        human(Duration::from_millis(total.as_millis() as u64))
    ));
    let suite_name = settings.suite.display().to_string();
    if let Some(path) = &settings.junit {
        let mut writer = LazyFile::new(path.clone());
        report::junit(&suite_name, &results, total, &mut writer)
            .and_then(|()| writer.flush())
            .map_err(|err| fail(Kind::CannotWrite, format!("cannot write the --junit report: {err}")))?;
    }
    if settings.tap {
        report::tap(&results, out)?;
    } else if settings.json {
        report::json(&suite_name, &results, total, out)?;
    }
    out.flush()?;
    // A run cut short by a signal exits as the signal says, whatever the
    // cases that ran said.
    if let Some(signal) = signals::received() {
        return Err(fail(
            signal.kind(),
            format!(
                "interrupted by {}: {} of {} cases did not pass",
                signal.name(),
                failed + errors,
                results.len()
            ),
        ));
    }
    match failure_kind(&results) {
        None => Ok(()),
        Some(kind) => Err(fail(
            kind,
            format!("{} of {} cases did not pass", failed + errors, results.len()),
        )),
    }
}

/// None when every case passed; an expectation failure when one failed;
/// otherwise the kind of the first case that errored (the same for all
/// when, say, the service was down for every case).
fn failure_kind(results: &[CaseResult]) -> Option<Kind> {
    if results.iter().any(|r| matches!(r.verdict, Verdict::Failed(_))) {
        return Some(Kind::Expectation);
    }
    results.iter().find_map(|r| match r.verdict {
        Verdict::Error { kind, .. } => Some(kind),
        _ => None,
    })
}

/// The shard (1 to `shards`) a case belongs to, by its name: FNV-1a, so
/// every machine and version slices the same way.
fn shard_of(name: &str, shards: u32) -> u32 {
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    (hash % u64::from(shards)) as u32 + 1
}

/// One run of one case: which case, which run of how many.
#[derive(Clone, Copy, Debug)]
struct Slot {
    case: usize,
    run: usize,
    runs: usize,
}

/// A repeated case's result from its runs: it passes when at least
/// `pass_rate` of them passed; otherwise it failed with the count and each
/// run's reasons (or, when no run failed an expectation, it errored as its
/// first erroring run did).
fn from_runs(case: &Case, runs: Vec<CaseResult>) -> CaseResult {
    let total = runs.len();
    let passed = runs.iter().filter(|run| run.verdict == Verdict::Passed).count();
    let needed = (case.pass_rate * total as f64).ceil() as usize;
    let count = format!(
        "{passed} of {total} runs passed; pass_rate {} needs {needed}",
        case.pass_rate
    );
    let reasons = runs.iter().enumerate().filter_map(|(i, run)| match &run.verdict {
        Verdict::Passed => None,
        Verdict::Failed(lines) => Some(format!("run {}: {}", i + 1, lines.join("; "))),
        Verdict::Error { message, .. } => Some(format!("run {}: {message}", i + 1)),
    });
    let first_error = runs.iter().find_map(|run| match &run.verdict {
        Verdict::Error { kind, .. } => Some(*kind),
        _ => None,
    });
    let any_failed = runs.iter().any(|run| matches!(run.verdict, Verdict::Failed(_)));
    let verdict = match (passed >= needed, any_failed, first_error) {
        (true, ..) => Verdict::Passed,
        (false, false, Some(kind)) => Verdict::Error {
            kind,
            message: std::iter::once(count).chain(reasons).collect::<Vec<_>>().join("; "),
        },
        _ => Verdict::Failed(std::iter::once(count).chain(reasons).collect()),
    };
    CaseResult {
        name: case.name.clone(),
        verdict,
        chat_id: runs[0].chat_id.clone(),
        timings: runs[0].timings,
        saved: runs.iter().flat_map(|run| run.saved.clone()).collect(),
        run: None,
        runs,
    }
}

/// What every case shares.
struct Runner<'a> {
    client: ChatClient,
    settings: &'a CheckSettings,
    deadline: Option<Instant>,
}

impl Runner<'_> {
    /// Runs every run of `cases` on `jobs` threads; results come back in
    /// suite order, one per case (a repeated case's from its runs), and
    /// each run is reported on stderr as it finishes.
    fn run_all(&self, cases: &[Case], jobs: usize, notes: &Notes) -> Vec<CaseResult> {
        let slots: Vec<Slot> = cases
            .iter()
            .enumerate()
            .flat_map(|(case, c)| {
                let runs = self.settings.repeat.unwrap_or(c.repeat);
                (0..runs).map(move |run| Slot { case, run, runs })
            })
            .collect();
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<CaseResult>>> = Mutex::new(vec![None; slots.len()]);
        let work = || loop {
            let index = next.fetch_add(1, Ordering::SeqCst);
            let Some(&slot) = slots.get(index) else { break };
            let result = self.run_case(slot, &cases[slot.case]);
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
            let started = (0..jobs.min(slots.len()))
                .filter(|_| std::thread::Builder::new().spawn_scoped(scope, work).is_ok())
                .count();
            // Without any thread to be had, the cases run on this one.
            if started == 0 {
                work();
            }
        });
        let mut runs = results
            .into_inner()
            .unwrap_or_default()
            .into_iter()
            .zip(&slots)
            .peekable();
        let mut by_case = Vec::new();
        for (index, case) in cases.iter().enumerate() {
            let mut case_runs = Vec::new();
            while let Some((result, _)) = runs.next_if(|(_, slot)| slot.case == index) {
                case_runs.extend(result);
            }
            if case_runs.len() > 1 {
                let result = from_runs(case, case_runs);
                match result.verdict {
                    Verdict::Passed => notes.info(&report::summary(&result)),
                    _ => notes.always(&report::summary(&result)),
                }
                by_case.push(result);
            } else {
                by_case.extend(case_runs);
            }
        }
        by_case
    }

    /// Runs one case: its turns in order on one chat, stopping at the first
    /// that fails.
    fn run_case(&self, slot: Slot, case: &Case) -> CaseResult {
        let started = Instant::now();
        let mut result = CaseResult {
            name: case.name.clone(),
            verdict: Verdict::Passed,
            chat_id: None,
            timings: Timings::default(),
            saved: Vec::new(),
            run: (slot.runs > 1).then_some((slot.run + 1, slot.runs)),
            runs: Vec::new(),
        };
        let client = self.client.as_user(case.settings.clone());
        for turn_index in 0..case.turns.len() {
            let outcome = self.run_turn(slot, case, turn_index, &client, &mut result, started);
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
        slot: Slot,
        case: &Case,
        turn_index: usize,
        client: &ChatClient,
        result: &mut CaseResult,
        case_started: Instant,
    ) -> Result<(), Verdict> {
        let error = |err: &anyhow::Error| Verdict::Error {
            kind: kind_of(err),
            message: format!("{err:#}"),
        };
        let turn = &case.turns[turn_index];
        if let Some(signal) = signals::received() {
            return Err(Verdict::Error {
                kind: signal.kind(),
                message: format!("not run: interrupted by {}", signal.name()),
            });
        }
        let case_left = case.timeout.saturating_sub(case_started.elapsed());
        let run_left = self
            .deadline
            .map(|deadline| deadline.saturating_duration_since(Instant::now()));
        let limited_by_run = run_left.is_some_and(|run_left| run_left < case_left);
        let left = run_left.map_or(case_left, |run_left| run_left.min(case_left));
        let question = Question {
            input: Some(turn.question.clone()),
            chat_id: result.chat_id.clone(),
            message_id: Some(new_message_id()),
            branch: case.branch.clone(),
            default_branch: case.default_branch,
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
        let mut reading = Turn::of(&question, turn_started);
        let mut saved = self.save_file(slot, case, turn_index);
        let mut sinks = Sinks {
            tee: saved.as_mut().map(|file| file as &mut dyn Write),
            renderer: &mut check,
            out: &mut std::io::sink(),
        };
        let read = client.read_turn(&question, network, &mut reading, &mut sinks);
        if let Some(file) = saved.as_mut() {
            let _ = file.flush();
            if file.created() {
                result.saved.push(file.path().to_path_buf());
            }
        }
        merge_timings(
            &mut result.timings,
            &reading.timings,
            turn_started.duration_since(case_started),
        );
        let transcript = &reading.transcript;
        if result.chat_id.is_none() {
            result.chat_id = transcript.chat_id().map(str::to_string);
        }
        let failure = match read {
            Err(err) if kind_of(&err).stops_the_chat() => {
                // A timeout at the turn's deadline is the case's (or the
                // run's); one before it is a stall.
                let deadline = turn_started.elapsed() >= left;
                let reason = match kind_of(&err) {
                    Kind::Timeout if deadline && limited_by_run => "the --timeout of the whole run expired".to_string(),
                    Kind::Timeout if deadline => {
                        format!("timed out after {} (the case's timeout)", human(case.timeout))
                    }
                    _ => format!("{err:#}"),
                };
                return Err(Verdict::Error {
                    kind: kind_of(&err),
                    message: format!("{reason}{}", client.abort_after_stop(transcript.chat_id())),
                });
            }
            Err(err) => Some(reading.after_resumes(err)),
            Ok(()) => chat_failure(transcript).map(|err| reading.after_resumes(err)),
        };
        if let Some(err) = failure {
            return Err(error(&err));
        }
        let mut unmet = check.unmet(transcript);
        unmet.extend(case.budgets.exceeded(reading.timings.total, transcript.usage()));
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
    /// `DIR/NN-case-name.ndjson` (`.rK` per run of a repeated case, `.T`
    /// per turn in a conversation), created when the first line arrives.
    fn save_file(&self, slot: Slot, case: &Case, turn: usize) -> Option<LazyFile> {
        let dir = self.settings.save.as_ref()?;
        let mut name = format!("{:02}-{}", slot.case + 1, slug(&case.name));
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
