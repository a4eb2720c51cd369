//! What a `check` run shows while it runs: on a terminal, a progress line
//! (runs done, passing, failing, the slowest still going) with each
//! verdict written above it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::report::Outcome;
use crate::output::Notes;
use crate::text::visible;

/// Live progress on a terminal (stderr): runs done of all, passing,
/// failing, and the slowest run still going. Lines printed meanwhile go
/// above it. Nothing is drawn when progress is not shown.
pub(super) struct RunsProgress {
    /// Where notes go: above the bar while it is drawn.
    notes: Notes,
    bar: Option<ProgressBar>,
    running: Mutex<HashMap<usize, (String, Instant)>>,
    passing: AtomicUsize,
    failing: AtomicUsize,
}

impl RunsProgress {
    pub(super) fn new(runs: usize, notes: &Notes) -> Self {
        let bar = notes.show_progress().then(|| {
            let bar = ProgressBar::with_draw_target(Some(runs as u64), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template("{bar:24} {pos}/{len} runs  {msg}") {
                bar.set_style(style);
            }
            notes.above(Some(&bar));
            bar
        });
        RunsProgress {
            notes: notes.clone(),
            bar,
            running: Mutex::new(HashMap::new()),
            passing: AtomicUsize::new(0),
            failing: AtomicUsize::new(0),
        }
    }

    pub(super) fn is_shown(&self) -> bool {
        self.bar.is_some()
    }

    /// Run `index` (of case `name`) started.
    pub(super) fn started(&self, index: usize, name: &str) {
        if let Ok(mut running) = self.running.lock() {
            running.insert(index, (visible(name).into_owned(), Instant::now()));
        }
    }

    /// Run `index` ended as `status`; `report` prints its lines above the bar.
    pub(super) fn finished(&self, index: usize, status: Outcome, report: impl FnOnce()) {
        if let Ok(mut running) = self.running.lock() {
            running.remove(&index);
        }
        let counter = if status == Outcome::Passed {
            &self.passing
        } else {
            &self.failing
        };
        counter.fetch_add(1, Ordering::SeqCst);
        // Its lines go above the bar, as every note does.
        report();
        if let Some(bar) = &self.bar {
            bar.inc(1);
            self.redraw();
        }
    }

    /// Updates the message: the counts and the slowest run going.
    fn redraw(&self) {
        let Some(bar) = &self.bar else { return };
        let slowest = self.running.lock().ok().and_then(|running| {
            running
                .values()
                .min_by_key(|(_, since)| *since)
                .map(|(name, since)| format!("; slowest running: {name} ({}s)", since.elapsed().as_secs()))
        });
        bar.set_message(format!(
            "{} passing, {} failing{}",
            self.passing.load(Ordering::SeqCst),
            self.failing.load(Ordering::SeqCst),
            slowest.unwrap_or_default()
        ));
    }

    /// Redraws four times a second until `done`.
    pub(super) fn tick_until(&self, done: &AtomicBool) {
        while !done.load(Ordering::SeqCst) {
            self.redraw();
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    pub(super) fn clear(&self) {
        self.notes.above(None);
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
