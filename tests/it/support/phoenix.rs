//! A real OpenTelemetry receiver: Arize Phoenix (PyPI's `arize-phoenix`,
//! pinned), installed on first use into a virtual environment under
//! `target/test-tools/phoenix`, serving OTLP/HTTP at `/v1/traces` and its
//! REST API for the spans it stored. One Phoenix serves the whole test
//! process (it stops when the process ends); each test sends to a project
//! of its own (`openinference.project.name`).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The Phoenix the tests install.
const PHOENIX: &str = "arize-phoenix==20.26.1";

/// A running Phoenix.
pub struct Phoenix {
    port: u16,
    /// The watcher that stops it with this process (never waited on: it
    /// ends with the process).
    _watcher: std::process::Child,
}

/// Phoenix's virtual environment, made on first use with PyPI's `uv`
/// (which `scripts/test` installs): it installs Phoenix's 120 packages in
/// about a third of pip's CPU time, the bytecode compiled once there (this
/// environment may forbid writing it at each start: `PYTHONDONTWRITEBYTECODE`).
fn installed() -> PathBuf {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-tools/phoenix");
    let phoenix = venv.join("bin/phoenix");
    if !phoenix.exists() {
        let uv = |args: &[&str]| {
            let status = Command::new("python3").args(["-m", "uv"]).args(args).status().unwrap();
            assert!(status.success(), "uv {args:?}");
        };
        let venv = venv.to_str().expect("the repository's path is UTF-8");
        if !Path::new(venv).join("bin/python").exists() {
            uv(&["venv", "--quiet", venv]);
        }
        let python = format!("{venv}/bin/python");
        uv(&[
            "pip",
            "install",
            "--quiet",
            "--compile-bytecode",
            "--python",
            &python,
            PHOENIX,
        ]);
    }
    phoenix
}

impl Phoenix {
    /// The Phoenix of this test process, started on first use.
    pub fn shared() -> &'static Phoenix {
        static SHARED: OnceLock<Phoenix> = OnceLock::new();
        SHARED.get_or_init(Phoenix::start)
    }

    fn start() -> Phoenix {
        let phoenix = installed();
        let free = || TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let (port, grpc) = (free(), free());
        let work = tempfile::tempdir().unwrap().keep();
        // A watcher that stops Phoenix when this test process ends.
        let watcher = format!(
            "import os, subprocess, time\n\
             p = subprocess.Popen([{phoenix:?}, 'serve'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n\
             parent = os.getppid()\n\
             while os.getppid() == parent and p.poll() is None:\n    time.sleep(0.5)\n\
             p.terminate()\n"
        );
        let watcher = Command::new(phoenix.with_file_name("python"))
            .args(["-c", &watcher])
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", grpc.to_string())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_WORKING_DIR", &work)
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let phoenix = Phoenix {
            port,
            _watcher: watcher,
        };
        while phoenix.get("/v1/projects").is_none() {
            assert!(started.elapsed() < Duration::from_secs(120), "Phoenix did not start");
            std::thread::sleep(Duration::from_millis(300));
        }
        phoenix
    }

    /// Its OTLP endpoint's base (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn get(&self, path: &str) -> Option<Value> {
        let output = Command::new("curl")
            .args(["-sf", "--max-time", "10"])
            .arg(format!("http://127.0.0.1:{}{path}", self.port))
            .output()
            .ok()?;
        if !output.status.success() {
            return None;
        }
        serde_json::from_slice(&output.stdout).ok()
    }

    /// The spans of `project`, once `count` have arrived (10 s at most):
    /// as Phoenix's REST API gives them.
    pub fn spans(&self, project: &str, count: usize) -> Vec<Value> {
        let started = Instant::now();
        loop {
            let spans = self.spans_now(project);
            if spans.len() >= count || started.elapsed() > Duration::from_secs(10) {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// The id Phoenix gave `project` (its pages are addressed by it).
    pub fn project_id(&self, project: &str) -> String {
        let projects = self.get("/v1/projects").expect("Phoenix lists its projects");
        projects["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|listed| listed["name"] == project)
            .and_then(|listed| listed["id"].as_str())
            .unwrap_or_else(|| panic!("{project} in {projects}"))
            .to_string()
    }

    /// The spans of `project` now (none when it does not exist).
    pub fn spans_now(&self, project: &str) -> Vec<Value> {
        self.get(&format!("/v1/projects/{project}/spans?limit=1000"))
            .and_then(|page| page["data"].as_array().cloned())
            .unwrap_or_default()
    }
}
