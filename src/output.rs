//! Where bytes go: [`Out`] is the one buffered writer of data (stdout, or
//! an atomic `--output-file`, through `--jq` when asked), and [`Notes`]
//! writes the human notes, warnings and errors on stderr.

use std::borrow::Cow;
use std::io::{self, BufWriter, IsTerminal, Stdout, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use indicatif::ProgressBar;

use crate::error::{fault_of_io, Fault, Kind};
use crate::files::temporary_beside;
use crate::jq::{JqFilter, JqRunner};
use crate::redact::redact;
use crate::text::{one_line, visible, visible_bytes, wrap, Breaks};

/// Where a command's data goes besides plain stdout, as the settings say:
/// `--output-file` and `--jq`.
#[derive(Debug, Default)]
pub struct Destination {
    /// `--output-file FILE`: written atomically instead of stdout.
    pub file: Option<PathBuf>,
    /// `--jq EXPR`, and whether each line of the output is a document of
    /// its own (`events`, `ndjson`) or the whole output is one (`json`).
    pub jq: Option<(JqFilter, JqInput)>,
}

/// What a `--jq` filter reads of the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JqInput {
    /// Each line is a JSON document, filtered as it is written.
    EachLine,
    /// The whole output is one JSON document, filtered when it ends.
    Whole,
}

/// Where outputs write: bytes (made [`visible`] on a terminal), and text
/// with analyst's own styles.
pub trait Output: Write {
    /// Writes `text` whose every piece from the service was already made
    /// [`visible`] and whose escape sequences are analyst's own styles, and
    /// flushes: on a terminal, [`Out`] passes it as it is.
    fn write_styled(&mut self, text: &str) -> io::Result<()> {
        self.write_all(text.as_bytes())?;
        self.flush()
    }
}

/// Nothing is written (a `check` turn's outputs).
impl Output for io::Sink {}

/// Kept in memory (a document rendered whole).
impl Output for Vec<u8> {}

/// Where the bytes land: stdout, or the temporary file that becomes
/// `--output-file` when the command succeeds.
enum Target {
    Stdout(BufWriter<Stdout>),
    File {
        path: PathBuf,
        temporary: Option<BufWriter<tempfile::NamedTempFile>>,
    },
}

/// The buffered output every renderer writes through: stdout, or an
/// `--output-file` written atomically (a temporary file in the same
/// folder, 0600, renamed over FILE when the command succeeds and removed
/// when it fails, so FILE is never partial), optionally through a `--jq`
/// filter. Errors are returned, never panicked on; a `BrokenPipe` means the
/// reader left (see `exit`). On a terminal, control characters are made
/// [`visible`]: text from the service never reaches a terminal with its
/// escape sequences live. [`Out::finish`] ends it.
pub struct Out {
    target: Target,
    terminal: bool,
    /// The `--jq` filter, started on its own thread when first used.
    jq: Option<(Filtering, JqInput)>,
    /// What the filter has not read yet: a partial line, or the whole output.
    pending: Vec<u8>,
    /// Why the output must stop now (a signal, the deadline), asked while
    /// a filter runs.
    stop: Box<dyn Fn() -> Option<Fault>>,
    /// The output is whole whatever the command's exit (see [`Out::mark_whole`]).
    whole: bool,
}

/// A `--jq` filter: checked, then running.
enum Filtering {
    Checked(JqFilter),
    Running(JqRunner),
}

impl Out {
    /// A writer on the process's stdout with a buffer sized for bulk output.
    pub fn stdout() -> Self {
        Out::to(Destination::default())
    }

    /// A writer to `destination`.
    pub fn to(destination: Destination) -> Self {
        let (target, terminal) = match destination.file {
            Some(path) => (Target::File { path, temporary: None }, false),
            None => (
                Target::Stdout(BufWriter::with_capacity(64 * 1024, io::stdout())),
                io::stdout().is_terminal(),
            ),
        };
        Out {
            target,
            terminal,
            jq: destination
                .jq
                .map(|(filter, input)| (Filtering::Checked(filter), input)),
            pending: Vec::new(),
            stop: Box::new(|| None),
            whole: false,
        }
    }

    /// Says that what was written is the whole output even if the command
    /// then fails: a `check` report of a run whose cases did not all pass
    /// (exit 9) is kept as an `--output-file`, like a report of a run that
    /// passed.
    pub fn mark_whole(&mut self) {
        self.whole = true;
    }

    /// The same output, whose `--jq` filter stops when `stop` says why (a
    /// signal, the deadline) even while it computes.
    pub fn stopping_when(self, stop: impl Fn() -> Option<Fault> + 'static) -> Self {
        Out {
            stop: Box::new(stop),
            ..self
        }
    }

    /// Runs the `--jq` filter on one document, writing each result as it
    /// comes (and flushing while the filter computes).
    fn filter(&mut self, document: Vec<u8>) -> io::Result<()> {
        let Some((filtering, input)) = self.jq.take() else {
            return self.emit(&document, false);
        };
        let mut runner = match filtering {
            Filtering::Running(runner) => runner,
            Filtering::Checked(filter) => filter.start()?,
        };
        let stop = std::mem::replace(&mut self.stop, Box::new(|| None));
        let ran = runner.run(
            document,
            &mut |result| match result {
                Some(bytes) => self.emit(bytes, false),
                None => self.flush(),
            },
            &*stop,
        );
        self.stop = stop;
        self.jq = Some((Filtering::Running(runner), input));
        ran
    }

    /// Ends the output: a `--jq` filter reads what is left; stdout is
    /// flushed; an `--output-file` replaces FILE when `succeeded` (or the
    /// output was marked whole), and is dropped (FILE untouched) when not.
    pub fn finish(mut self, succeeded: bool) -> io::Result<()> {
        let succeeded = succeeded || self.whole;
        if self.jq.is_some() {
            let pending = std::mem::take(&mut self.pending);
            if pending.iter().any(|byte| !byte.is_ascii_whitespace()) {
                self.filter(pending)?;
            }
            self.jq = None;
        }
        match self.target {
            Target::Stdout(mut writer) => writer.flush().map_err(cannot_write_stdout),
            Target::File { path, temporary } if succeeded => {
                let temporary = match temporary {
                    Some(temporary) => temporary,
                    None => BufWriter::new(temporary_beside(&path).map_err(|err| cannot_write_file(&path, err))?),
                };
                let file = temporary.into_inner().map_err(io::IntoInnerError::into_error)?;
                file.as_file().sync_all()?;
                file.persist(&path)
                    .map(drop)
                    .map_err(|err| cannot_write_file(&path, err.error))
            }
            Target::File { .. } => Ok(()),
        }
    }

    /// Writes bytes that passed the filter (if any) to the target; on a
    /// terminal, made visible unless they are our own `styled` text.
    fn emit(&mut self, bytes: &[u8], styled: bool) -> io::Result<()> {
        let shown = match self.terminal && !styled {
            true => visible_bytes(bytes),
            false => Cow::Borrowed(bytes),
        };
        match &mut self.target {
            Target::Stdout(writer) => writer.write_all(&shown).map_err(cannot_write_stdout),
            Target::File { path, temporary } => {
                let writer = match temporary {
                    Some(writer) => writer,
                    None => temporary.insert(BufWriter::new(
                        temporary_beside(path).map_err(|err| cannot_write_file(path, err))?,
                    )),
                };
                writer.write_all(&shown).map_err(|err| cannot_write_file(path, err))
            }
        }
    }
}

/// A failure to write `--output-file`, as a [`Kind::CannotWrite`] fault.
fn cannot_write_file(path: &Path, err: io::Error) -> io::Error {
    if fault_of_io(&err).is_some() {
        return err;
    }
    io::Error::new(
        err.kind(),
        Fault::new(
            Kind::CannotWrite,
            format!("cannot write --output-file {}: {err}", path.display()),
        ),
    )
}

impl Output for Out {
    fn write_styled(&mut self, text: &str) -> io::Result<()> {
        match self.jq {
            Some(_) => self.write_all(text.as_bytes())?,
            None => self.emit(text.as_bytes(), true)?,
        }
        self.flush()
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let Some((_, input)) = &self.jq else {
            return self.emit(buf, false);
        };
        self.pending.extend_from_slice(buf);
        if *input == JqInput::Whole {
            return Ok(());
        }
        while let Some(end) = memchr::memchr(b'\n', &self.pending) {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            if line.iter().any(|byte| !byte.is_ascii_whitespace()) {
                self.filter(line)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.target {
            Target::Stdout(writer) => writer.flush().map_err(cannot_write_stdout),
            Target::File {
                path,
                temporary: Some(writer),
            } => writer.flush().map_err(|err| cannot_write_file(path, err)),
            Target::File { .. } => Ok(()),
        }
    }
}

/// A failure to write stdout as the failure it is: a closed pipe stays a
/// `BrokenPipe` (the reader left: no failure), anything else (a full disk)
/// carries a [`Kind::CannotWrite`] fault.
fn cannot_write_stdout(err: io::Error) -> io::Error {
    if err.kind() == io::ErrorKind::BrokenPipe || fault_of_io(&err).is_some() {
        return err;
    }
    let kind = err.kind();
    io::Error::new(
        kind,
        Fault::new(Kind::CannotWrite, format!("cannot write to stdout: {err}")),
    )
}

/// Writes to stderr what a person needs and a script can ignore. Honors `-q`
/// (only errors) and `-v` (debug lines), and paints its prefixes when
/// colour is on (`--color`, `NO_COLOR`). While a progress display is drawn
/// ([`Notes::above`]), it is erased before a note is written and drawn
/// again below it, so no spinner line is left behind. Failures to write
/// stderr are ignored: there is nowhere left to report them.
#[derive(Clone, Debug)]
pub struct Notes {
    quiet: bool,
    verbose: bool,
    progress: bool,
    color: bool,
    /// The width of the terminal stderr is, when it is one: notes are
    /// wrapped to it at spaces.
    width: Option<usize>,
    /// The progress display on stderr now, if any.
    drawn: Arc<Mutex<Option<ProgressBar>>>,
}

/// What a painted word of a note means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// A pass: green.
    Good,
    /// A warning: yellow.
    Warning,
    /// A failure or an error: red.
    Bad,
    /// A heading or a total: bold.
    Strong,
}

impl Tone {
    /// `text` in this tone's colour (for stdout on a terminal).
    pub fn paint(self, text: &str) -> String {
        let style = self.style();
        format!("{}{text}{}", style.render(), style.render_reset())
    }

    fn style(self) -> anstyle::Style {
        let colored = |color: anstyle::AnsiColor| anstyle::Style::new().fg_color(Some(color.into())).bold();
        match self {
            Tone::Good => colored(anstyle::AnsiColor::Green),
            Tone::Warning => colored(anstyle::AnsiColor::Yellow),
            Tone::Bad => colored(anstyle::AnsiColor::Red),
            Tone::Strong => anstyle::Style::new().bold(),
        }
    }
}

/// How many columns the terminal stdout is has; `None` when stdout is
/// no terminal. See [`columns`].
pub fn stdout_columns() -> Option<u16> {
    columns(
        terminal_size::terminal_size_of(io::stdout()),
        io::stdout().is_terminal(),
    )
}

/// How many columns the terminal stderr is has; `None` when stderr is
/// no terminal. See [`columns`].
pub fn stderr_columns() -> Option<u16> {
    columns(
        terminal_size::terminal_size_of(io::stderr()),
        io::stderr().is_terminal(),
    )
}

/// A terminal's columns from its `size`; a terminal whose size says
/// nothing (no rows or no columns set, as after `stty cols 80` alone) is
/// taken as 80 columns, as the progress display takes it.
fn columns(size: Option<(terminal_size::Width, terminal_size::Height)>, terminal: bool) -> Option<u16> {
    match size {
        Some((width, _)) => Some(width.0),
        None => terminal.then_some(80),
    }
}

impl Notes {
    /// Notes for the given `-q` / `-v` settings (`-q` wins over `-v`);
    /// `progress` says whether a progress display may be drawn on stderr
    /// (the settings decide: a terminal and no `-q`; notes are then
    /// wrapped to its width), `color` whether prefixes are painted.
    pub fn new(quiet: bool, verbose: bool, progress: bool, color: bool) -> Self {
        let width = progress.then(stderr_columns).flatten().map(usize::from);
        Notes {
            quiet,
            verbose: verbose && !quiet,
            progress: progress && !quiet,
            color,
            width,
            drawn: Arc::default(),
        }
    }

    /// True when a progress display may be drawn.
    pub fn show_progress(&self) -> bool {
        self.progress
    }

    /// Notes go above `display` from now on (none: it is gone).
    pub fn above(&self, display: Option<&ProgressBar>) {
        if let Ok(mut drawn) = self.drawn.lock() {
            *drawn = display.cloned();
        }
    }

    /// True when warnings are shown (no `-q`).
    pub fn warns(&self) -> bool {
        !self.quiet
    }

    /// True when `-v` asked for the HTTP exchange to be logged.
    pub fn verbose(&self) -> bool {
        self.verbose
    }

    /// An informational line such as `chat: <id>`; silenced by `-q`.
    pub fn info(&self, line: &str) {
        if !self.quiet {
            self.emit("", line);
        }
    }

    /// A line that starts with a word painted as `tone` says (`PASS`, a
    /// total); silenced by `-q` unless `always`.
    pub fn painted(&self, tone: Tone, word: &str, rest: &str, always: bool) {
        if always || !self.quiet {
            self.emit(&self.paint(tone, &visible(word)), rest);
        }
    }

    /// `analyst: warning: …`; silenced by `-q`.
    pub fn warn(&self, message: &str) {
        if !self.quiet {
            self.emit(
                &format!("analyst: {}", self.paint(Tone::Warning, "warning:")),
                &format!(" {message}"),
            );
        }
    }

    /// A `-v` debug line (requests, statuses); never carries secrets.
    pub fn debug(&self, line: &str) {
        if self.verbose {
            self.emit("", line);
        }
    }

    /// A line that matters even with `-q` (a failed `check` case), as it is.
    pub fn always(&self, line: &str) {
        self.emit("", line);
    }

    /// `analyst: expectation failed: …`; always printed, even with `-q`.
    pub fn expectation(&self, line: &str) {
        self.emit(
            &format!("analyst: {}", self.paint(Tone::Bad, "expectation failed:")),
            &format!(" {line}"),
        );
    }

    /// `analyst: error: …`; always printed, even with `-q`.
    pub fn error(&self, message: &str) {
        self.emit(
            &format!("analyst: {}", self.paint(Tone::Bad, "error:")),
            &format!(" {message}"),
        );
    }

    /// `text` painted as `tone` says when colour is on.
    fn paint(&self, tone: Tone, text: &str) -> String {
        match self.color {
            true => format!("{}{text}{}", tone.style().render(), tone.style().render_reset()),
            false => text.to_string(),
        }
    }
}

impl Notes {
    /// Writes one line on stderr: `painted` (our own words, maybe with
    /// colour) as it is, then `line` with every secret redacted and its
    /// line breaks and control characters made visible, so that no text
    /// from elsewhere starts a line of its own (a CI log reads workflow
    /// commands such as `::error::` from any line's start); above the
    /// progress display, if any. On a terminal the line is wrapped to its
    /// width at spaces.
    fn emit(&self, painted: &str, line: &str) {
        let line = one_line(&redact(line)).into_owned();
        let guard = if painted.is_empty() && line.starts_with("::") {
            " "
        } else {
            ""
        };
        let text = format!("{painted}{guard}{line}");
        let text = match self.width {
            Some(width) => wrap(&text, width, Breaks::Spaces, 2).join("\n") + "\n",
            None => text + "\n",
        };
        let write = || {
            let _ = io::stderr().lock().write_all(text.as_bytes());
        };
        match self.drawn.lock().ok().and_then(|drawn| drawn.clone()) {
            Some(display) => display.suspend(write),
            None => write(),
        }
    }
}

/// The one logger of the `log` facade: what the layers below the
/// commands say without writing it themselves (the wire's `-v` lines and
/// retries, a secret file others can read) goes to the command's [`Notes`],
/// so that redaction, `-q`, `-v` and the one-line rule hold for it too.
/// Only analyst's own records are taken (the HTTP and TLS crates log too).
struct NotesLogger;

/// The notes the logger writes through; none until [`log_to`].
static LOGGED_TO: RwLock<Option<Notes>> = RwLock::new(None);

impl log::Log for NotesLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.target().starts_with(env!("CARGO_CRATE_NAME")) && metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let Ok(notes) = LOGGED_TO.read() else { return };
        let Some(notes) = notes.as_ref() else { return };
        let line = record.args().to_string();
        match record.level() {
            log::Level::Error | log::Level::Warn => notes.warn(&line),
            log::Level::Info => notes.info(&line),
            log::Level::Debug | log::Level::Trace => notes.debug(&line),
        }
    }

    fn flush(&self) {}
}

/// Sends the `log` facade's records to `notes` from now on: debug lines
/// with `-v`, warnings and information unless `-q`.
pub fn log_to(notes: &Notes) {
    static LOGGER: NotesLogger = NotesLogger;
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(match notes.verbose() {
        true => log::LevelFilter::Debug,
        false => log::LevelFilter::Info,
    });
    if let Ok(mut logged_to) = LOGGED_TO.write() {
        *logged_to = Some(notes.clone());
    }
}

/// True when `stream` is a terminal that takes escape codes: colour,
/// progress and the live answer go there. On Windows that is a console
/// whose virtual-terminal processing is on or could be turned on (Windows
/// 10 and later); an older console gets what a pipe gets, plain text.
#[cfg(not(windows))]
pub fn takes_escapes(stream: &impl IsTerminal) -> bool {
    stream.is_terminal()
}

/// True when `stream` is a terminal that takes escape codes: colour,
/// progress and the live answer go there. On Windows that is a console
/// whose virtual-terminal processing is on or could be turned on (Windows
/// 10 and later); an older console gets what a pipe gets, plain text.
#[cfg(windows)]
pub fn takes_escapes(stream: &(impl IsTerminal + std::os::windows::io::AsRawHandle)) -> bool {
    use windows_sys::Win32::System::Console::{GetConsoleMode, SetConsoleMode, ENABLE_VIRTUAL_TERMINAL_PROCESSING};
    if !stream.is_terminal() {
        return false;
    }
    let handle = stream.as_raw_handle();
    let mut mode = 0;
    // SAFETY: the handle is one of the process's standard streams, open
    // for its whole life; both calls only read or set that console's mode.
    unsafe {
        GetConsoleMode(handle, &mut mode) != 0
            && (mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0
                || SetConsoleMode(handle, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING) != 0)
    }
}
