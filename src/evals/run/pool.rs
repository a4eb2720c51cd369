//! The runs of a `check`, scheduled: one [`Slot`] per run of a case (which
//! case, which run of how many), taken in order by `--jobs` threads until
//! none is left or the run is stopped; a slot its work no longer needs is
//! passed over (a case decided already: `--stop-when-decided`), and the
//! progress shows on stderr. Generic over what a slot runs ([`Work`]): the
//! pool knows nothing of cases, turns or grading.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::evals::progress::RunsProgress;
use crate::evals::report::Outcome;
use crate::output::Notes;
use crate::signals::Stop;

/// One run of one case: which case (its place among the selected ones),
/// which run of how many.
#[derive(Clone, Copy, Debug)]
pub(super) struct Slot {
    /// The case, by its place among the selected cases.
    pub case: usize,
    /// Which run of it (from 0).
    pub run: usize,
    /// How many runs the case has.
    pub runs: usize,
}

/// What a pool's slots run.
pub(super) trait Work: Sync {
    /// What one slot's run gives.
    type Done: Send;

    /// True when `slot` need not run any more (its case was decided).
    fn passes_over(&self, slot: Slot) -> bool;

    /// Runs `slot`.
    fn run(&self, slot: Slot) -> Self::Done;

    /// What the progress names `slot` by.
    fn name(&self, slot: Slot) -> &str;

    /// How a run ended, for the progress.
    fn outcome(done: &Self::Done) -> Outcome;

    /// Says on stderr how `slot`'s run ended (not called once the pool
    /// was stopped: the run's one line says it then).
    fn tell(&self, slot: Slot, done: &Self::Done);
}

/// Runs `slots` with `work` on `jobs` threads (on this one when no thread
/// can be had), in order, until every slot ran or `stop` stopped the pool;
/// the progress goes to `notes`. Each slot's result is at its place; a slot
/// that did not run (passed over, or after the stop) has none.
pub(super) fn run_all<W: Work>(
    work: &W,
    slots: &[Slot],
    jobs: usize,
    stop: &Stop,
    notes: &Notes,
) -> Vec<Option<W::Done>> {
    let progress = RunsProgress::new(slots.len(), notes);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<W::Done>>> = Mutex::new((0..slots.len()).map(|_| None).collect());
    let take_slots = || loop {
        // After a stop, no run starts.
        if stop.stopped().is_some() {
            break;
        }
        let index = next.fetch_add(1, Ordering::SeqCst);
        let Some(&slot) = slots.get(index) else { break };
        if work.passes_over(slot) {
            progress.skipped();
            continue;
        }
        progress.started(index, work.name(slot), slot.run + 1, slot.runs);
        let done = work.run(slot);
        // A run the stop ended says nothing: the run's one line does.
        let stopped = stop.stopped().is_some();
        progress.finished(index, W::outcome(&done), || {
            if !stopped {
                work.tell(slot, &done);
            }
        });
        if let Ok(mut results) = results.lock() {
            results[index] = Some(done);
        }
    };
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        if progress.is_shown() {
            scope.spawn(|| progress.tick_until(&done));
        }
        let workers: Vec<_> = (0..jobs.min(slots.len()))
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, take_slots).ok())
            .collect();
        // Without any thread to be had, the slots run on this one.
        if workers.is_empty() {
            take_slots();
        }
        for worker in workers {
            let _ = worker.join();
        }
        done.store(true, Ordering::SeqCst);
    });
    progress.clear();
    results.into_inner().unwrap_or_default()
}
