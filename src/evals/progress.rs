//! What a `check` run shows while it runs: on a terminal, a progress line
//! (runs done, passing, failing, the slowest still going) with each
//! verdict written above it; elsewhere (a CI log), a line when a run
//! starts and, every 30 s, a line naming the runs still going.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::evals::report::Outcome;
use crate::output::Notes;
use crate::text::one_line;

/// How often a log (stderr not a terminal) hears which runs are still going.
const LOG_EVERY: Duration = Duration::from_secs(30);

/// Live progress on stderr. On a terminal: runs done of all, passing,
/// failing, and the slowest run still going, with lines printed meanwhile
/// above it. In a log: `START` lines and a `RUNNING` line every
/// [`LOG_EVERY`]. Silent with `-q`.
pub struct RunsProgress {
    /// Where notes go: above the bar while it is drawn.
    notes: Notes,
    bar: Option<ProgressBar>,
    /// True when lines are written for a log instead of a bar.
    logged: bool,
    running: Mutex<HashMap<usize, (String, Instant)>>,
    passing: AtomicUsize,
    failing: AtomicUsize,
}

impl RunsProgress {
    /// Progress of `runs` runs, shown as `notes` allow (a bar on a
    /// terminal, lines in a log, nothing with `-q`).
    pub fn new(runs: usize, notes: &Notes) -> Self {
        let bar = notes.show_progress().then(|| {
            let bar = ProgressBar::with_draw_target(Some(runs as u64), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template("{bar:20} {pos}/{len} runs  {wide_msg}") {
                bar.set_style(style);
            }
            notes.above(Some(&bar));
            bar
        });
        RunsProgress {
            notes: notes.clone(),
            logged: bar.is_none() && notes.warns(),
            bar,
            running: Mutex::new(HashMap::new()),
            passing: AtomicUsize::new(0),
            failing: AtomicUsize::new(0),
        }
    }

    /// True when anything is shown while runs go (a bar or log lines).
    pub fn is_shown(&self) -> bool {
        self.bar.is_some() || self.logged
    }

    /// Run `index`, run `run` of `runs` of case `name`, started; a log
    /// hears of it.
    pub fn started(&self, index: usize, name: &str, run: usize, runs: usize) {
        let name = if runs > 1 {
            format!("{} (run {run} of {runs})", one_line(name))
        } else {
            one_line(name).into_owned()
        };
        if self.logged {
            self.notes.info(&format!("START {name}"));
        }
        if let Ok(mut running) = self.running.lock() {
            running.insert(index, (name, Instant::now()));
        }
    }

    /// Run `index` ended as `status`; `report` prints its lines above the bar.
    pub fn finished(&self, index: usize, status: Outcome, report: impl FnOnce()) {
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

    /// A run not asked (its case was decided): the bar counts it done.
    pub fn skipped(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
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

    /// Redraws the bar four times a second until `done`; in a log, names
    /// the runs still going every [`LOG_EVERY`].
    pub fn tick_until(&self, done: &AtomicBool) {
        let mut logged_at = Instant::now();
        while !done.load(Ordering::SeqCst) {
            self.redraw();
            if self.logged && logged_at.elapsed() >= LOG_EVERY {
                logged_at = Instant::now();
                if let Some(line) = self.running.lock().ok().and_then(|running| still_running(&running)) {
                    self.notes.info(&line);
                }
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Takes the bar off the terminal, once every run is done.
    pub fn clear(&self) {
        self.notes.above(None);
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `RUNNING a (75s), b (31s)`: the runs going, longest first; none when
/// nothing runs.
fn still_running(running: &HashMap<usize, (String, Instant)>) -> Option<String> {
    let mut going: Vec<_> = running.values().collect();
    going.sort_by_key(|(name, since)| (*since, name.clone()));
    let names: Vec<String> = going
        .iter()
        .map(|(name, since)| format!("{name} ({}s)", since.elapsed().as_secs()))
        .collect();
    (!names.is_empty()).then(|| format!("RUNNING {}", names.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_line_names_every_run_going_longest_first() {
        let now = Instant::now();
        let mut running = HashMap::new();
        assert_eq!(still_running(&running), None);
        running.insert(3, ("young".to_string(), now));
        running.insert(1, ("old (run 2 of 3)".to_string(), now - Duration::from_secs(75)));
        let line = still_running(&running).unwrap();
        assert!(line.starts_with("RUNNING old (run 2 of 3) (75s), young (0s)"), "{line}");
    }
}
