//! `analyst check SUITE.toml`: ask an agent known questions, several at a
//! time, each case with its own timeout (the chat is aborted when it
//! expires) and as many runs as it repeats, check the answers (and the
//! rows, against `reference_sql` or `expect_rows`) and the budgets, and
//! report for people (stderr, with live progress on a terminal) and CI
//! (JUnit XML, TAP, JSON). `analyst check merge` makes one report of the
//! JSON reports of shards. Exit 0 when all pass, 9 when an expectation
//! failed, otherwise the code of the failure.

use std::io::Write;
use std::time::Duration;

use anyhow::Result;

use crate::ci::checkout_of;
use crate::error::{fail, Kind};
use crate::evals::context::RunContext;
use crate::evals::decide::Tier;
use crate::evals::report::{self, Report};
use crate::evals::run::Run;
use crate::evals::select::{check_reports_apart, load};
use crate::evals::verdicts::{self, tell};
use crate::evals::{formats, page, summary};
use crate::files::{append, create_private_folder, write_whole};
use crate::history::{CheckRunRecord, History};
use crate::output::{Notes, Out, Tone};
use crate::settings::{CheckSettings, MergeSettings, ReportFormat, ReportSettings};
use crate::signals;

pub use crate::evals::select::list;

/// Runs `analyst check`: the suite read, the run's cases run by
/// [`Run`], the report published, and the exit its verdicts give.
pub fn run(settings: CheckSettings, notes: &Notes, out: &mut Out) -> Result<()> {
    signals::watch();
    let selected = load(&settings.selection, &settings.identity, Some(&settings.data), notes)?;
    check_reports_apart(&settings.selection, &selected.cases, &settings.report.written())?;
    let baseline = read_baseline(&settings.report, settings.selection.timeout)?;
    let earlier = settings
        .retry_errors
        .as_ref()
        .map(|path| Report::read(path, "--retry-errors", settings.selection.timeout))
        .transpose()?;
    if let Some(dir) = &settings.save {
        create_private_folder(dir)
            .map_err(|err| crate::error::usage(format!("cannot create the --save folder {}: {err}", dir.display())))?;
    }
    let report = Run::new(selected, &settings, notes, earlier, baseline)?.execute()?;
    if let Some(recording) = &settings.recording {
        record_run(&report, &recording.db, notes);
    }
    tell_comparison(&report, notes);
    publish(&report, &settings.report, notes, out)?;
    conclude(&report, &settings.report)
}

/// Records the run as one row of the history (for `history trend`): its
/// suite by path, counts, cost, and the branch and commit it ran at (the
/// CI job's, else the suite's checkout's); a failure is a warning.
fn record_run(report: &Report, db: &std::path::Path, notes: &Notes) {
    let Some(run) = &report.run else { return };
    let ci = run.ci.as_ref();
    let (branch, commit) = match ci {
        Some(ci) if ci.git_ref.is_some() || ci.commit.is_some() => (ci.git_ref.clone(), ci.commit.clone()),
        _ => checkout_of(std::path::Path::new(&run.suite)),
    };
    let count = |n: usize| n as u64;
    let record = CheckRunRecord {
        at: run.started_at.clone(),
        suite_path: run.suite_path.clone().unwrap_or_else(|| run.suite.clone()),
        suite: run.suite.clone(),
        shard: run.shard.clone(),
        chat_url: Some(run.chat_url.clone()).filter(|url| !url.is_empty()),
        branch,
        commit,
        ci_url: ci.and_then(|ci| ci.run_url.clone()),
        cases: count(report.cases.len()),
        passed: count(report.passed),
        failed: count(report.failed),
        errors: count(report.errors),
        skipped: count(report.skipped),
        quarantined: count(report.quarantined),
        consistent_passed: report.consistent.map(|c| count(c.passed_every_run)),
        consistent_cases: report.consistent.map(|c| count(c.cases)),
        cost: report.cost,
        seconds: report.time,
        regraded: report.regraded.is_some(),
        exit_code: report.exit_code,
    };
    let recorded = History::open(db).and_then(|history| history.record_check_run(&record));
    if let Err(why) = recorded {
        notes.warn(&format!("the run was not recorded: {why:#}"));
    }
}

/// Runs `analyst check merge`: one report of the shards' reports, with the
/// exit code one unsharded run would have given; one report alone keeps
/// its comparison with its baseline.
pub fn merge(settings: MergeSettings, notes: &Notes, out: &mut Out) -> Result<()> {
    // `check merge` has no --timeout: only a signal ends a wait.
    let baseline = read_baseline(&settings.report, None)?;
    let reports = settings
        .reports
        .iter()
        .map(|path| Ok((path.display().to_string(), Report::read(path, "check merge", None)?)))
        .collect::<Result<Vec<_>>>()?;
    let min_accuracy = settings
        .report
        .min_accuracy
        .or_else(|| reports.iter().find_map(|(_, report)| report.min_accuracy));
    let runs: Vec<RunContext> = reports.iter().filter_map(|(_, report)| report.run.clone()).collect();
    // One report rendered again keeps its comparison with its baseline
    // (a new --baseline replaces it); shards' comparisons are each of a
    // part, so a merge of several has none of its own.
    let (compared, budget, regraded) = match reports.as_slice() {
        [(_, one)] => (one.baseline.clone(), one.budget.clone(), one.regraded.clone()),
        _ => (None, None, None),
    };
    let mut report = Report::merge(reports)?;
    report.run = RunContext::merged(runs.iter());
    report.baseline = compared;
    // One report rendered again keeps what its run spent and re-graded.
    (report.budget, report.regraded) = (budget, regraded);
    if let Some((file, baseline)) = baseline {
        let settings = &settings.report;
        report.compare_with(&file, &baseline, settings.baseline_max_age, settings.baseline_any);
    }
    report.gate(min_accuracy);
    for case in &report.cases {
        tell(notes, &verdicts::case_lines(case));
    }
    tell_comparison(&report, notes);
    publish(&report, &settings.report, notes, out)?;
    conclude(&report, &settings.report)
}

/// The `--baseline` report, read before anything runs (within `limit`).
fn read_baseline(settings: &ReportSettings, limit: Option<Duration>) -> Result<Option<(String, Report)>> {
    settings
        .baseline
        .as_ref()
        .map(|path| Ok((path.display().to_string(), Report::read(path, "--baseline", limit)?)))
        .transpose()
}

/// Prints the counts and writes the reports the settings ask for.
fn publish(report: &Report, settings: &ReportSettings, notes: &Notes, out: &mut Out) -> Result<()> {
    notes.info(&format!(
        "{} cases: {}, {}",
        report.cases.len(),
        verdicts::counts(report),
        verdicts::headline(report)
    ));
    for line in verdicts::spending(report) {
        notes.info(&line);
    }
    let quarantines = verdicts::quarantines(report);
    if !quarantines.is_empty() {
        notes.info(&format!("quarantines: {}", quarantines.join("; ")));
    }
    write_reports(report, settings, notes, out)
}

/// Prints the comparison with the baseline: the tiers counted, the
/// suite's, each case worth a look, and whether the baseline gates.
fn tell_comparison(report: &Report, notes: &Notes) {
    let Some(baseline) = &report.baseline else { return };
    if let Some(why) = &baseline.unreliable {
        notes.painted(
            Tone::Warning,
            "unreliable baseline",
            &format!(" {}: {why}; {}", baseline.file, baseline.trust()),
            true,
        );
    }
    let counted: Vec<String> = Tier::ALL
        .iter()
        .filter_map(
            |&tier| match baseline.cases.iter().filter(|case| case.tier == tier).count() {
                0 => None,
                n => Some(format!("{n} {}", tier.as_str())),
            },
        )
        .collect();
    let head = format!("against {}: {}", baseline.file, counted.join(", "));
    let regressed = !baseline.regressions.is_empty() || baseline.suite.tier == Tier::Regression;
    // A regression is always told; the rest, unless -q.
    let say = |line: &str| match regressed {
        true => notes.always(line),
        false => notes.info(line),
    };
    match regressed {
        true => notes.painted(Tone::Warning, "regression", &format!(" {head}"), true),
        false => say(&head),
    }
    say(&format!("  {}", baseline.suite.line()));
    for case in baseline.cases.iter().filter(|case| case.worth_telling()) {
        say(&format!("  {}", report::comparison_line(case)));
    }
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
    if report.skipped > 0 {
        let finished = total - report.skipped;
        return Err(fail(
            Kind::Expectation,
            format!(
                "budget spent after {finished} of {total} cases ({} not asked)",
                report.skipped
            ),
        ));
    }
    if let Some(kind) = report.failure() {
        let below = match report.min_accuracy {
            Some(min) => format!(", below --min-accuracy {}", verdicts::percent_of(min)),
            None => String::new(),
        };
        return Err(fail(
            kind,
            format!("{} of {total} cases did not pass{below}", report.failed + report.errors),
        ));
    }
    if let Some(regression) = report.gating_regression().filter(|_| settings.fail_on_regression) {
        return Err(fail(Kind::Expectation, format!("{regression} (--fail-on-regression)")));
    }
    Ok(())
}
