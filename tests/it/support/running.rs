//! A running `analyst` whose pipes and signals a test drives.

use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use super::*;

/// A running `analyst` pointed at `emu`, its stdout and stderr collected
/// by threads, for tests that signal it or close its pipes.
pub struct Running {
    pub child: std::process::Child,
    stderr_lines: std::sync::mpsc::Receiver<String>,
    stderr_seen: Vec<String>,
    stdout: Option<thread::JoinHandle<Vec<u8>>>,
    close_stdout: Arc<std::sync::atomic::AtomicBool>,
}

impl Running {
    /// Starts `analyst ARGS` against `emu` (key, URL, external id `ci-bot`).
    pub fn start(emu: &Emulator, args: &[&str]) -> Running {
        let mut command = emu.command();
        command.args(args);
        Running::spawn(command)
    }

    /// Starts `command` (an `analyst` of another build, or one run through
    /// Wine) with its stdin empty and its stdout and stderr collected.
    pub fn spawn(mut command: std::process::Command) -> Running {
        let mut child = command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("analyst starts");
        let (sender, stderr_lines) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        let mut stdout = child.stdout.take().unwrap();
        let close_stdout = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let closing = Arc::clone(&close_stdout);
        let stdout = thread::spawn(move || {
            let mut bytes = Vec::new();
            let mut buffer = [0; 4096];
            while !closing.load(std::sync::atomic::Ordering::SeqCst) {
                match stdout.read(&mut buffer) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => bytes.extend_from_slice(&buffer[..n]),
                }
            }
            bytes
        });
        Running {
            child,
            stderr_lines,
            stderr_seen: Vec::new(),
            stdout: Some(stdout),
            close_stdout,
        }
    }

    /// Closes our end of the child's stdout after its next write, as `| head` does.
    pub fn close_stdout(&self) {
        self.close_stdout.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Waits (20 s at most) for a stderr line containing `needle`.
    pub fn wait_for_stderr(&mut self, needle: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !self.stderr_seen.iter().any(|line| line.contains(needle)) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.stderr_lines.recv_timeout(left) {
                Ok(line) => self.stderr_seen.push(line),
                Err(_) => panic!("no stderr line with {needle:?}; saw {:?}", self.stderr_seen),
            }
        }
    }

    /// Sends a signal by name (`INT`, `TERM`) with kill(1).
    pub fn signal(&self, name: &str) {
        let status = std::process::Command::new("kill")
            .args(["-s", name, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the exit (killing the process after `limit`); returns the
    /// exit code, stdout, all of stderr, and how long the wait took.
    pub fn finish(mut self, limit: Duration) -> (Option<i32>, Vec<u8>, String, Duration) {
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                panic!(
                    "analyst still running {limit:?} later; stderr so far: {:?}",
                    self.stderr_seen
                );
            }
            thread::sleep(Duration::from_millis(20));
        };
        let waited = started.elapsed();
        let stdout = self.stdout.take().unwrap().join().unwrap();
        self.stderr_seen.extend(self.stderr_lines.try_iter());
        thread::sleep(Duration::from_millis(50));
        self.stderr_seen.extend(self.stderr_lines.try_iter());
        (status.code(), stdout, self.stderr_seen.join("\n"), waited)
    }
}
