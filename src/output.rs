//! Where bytes go: [`Out`] is the one buffered writer of data (stdout, or
//! an atomic `--output-file`, through `--jq` when asked),
//! [`Notes`] writes the human notes, warnings and errors on stderr, and
//! [`human`] writes a duration the way people do. Every secret the process
//! knows is registered here ([`register_secret`]) and [`redact`]ed from
//! whatever is shown or saved, before anything is shortened.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Stdout, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use indicatif::ProgressBar;
use memchr::memmem::Finder;

use crate::error::{fault_of_io, Fault, Kind};
use crate::jq::{JqFilter, JqRunner};

/// What a secret is replaced with.
const REDACTED: &str = "***";
/// Secrets shorter than this are not redacted: they would blot out ordinary
/// text (and no real key or token is that short).
const MIN_SECRET: usize = 4;

/// The secrets the process knows (API key, Cube token, data token, data
/// secret), as ready-made searchers.
static SECRETS: RwLock<Vec<Finder<'static>>> = RwLock::new(Vec::new());

/// Set once a secret is registered: until then (a `--replay`, which reads
/// none) redacting a line costs one load, not a lock.
static ANY_SECRET: AtomicBool = AtomicBool::new(false);

/// Makes `secret` one of those [`redact`] removes.
pub fn register_secret(secret: &str) {
    if secret.len() < MIN_SECRET {
        return;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !secrets.iter().any(|known| known.needle() == secret.as_bytes()) {
        secrets.push(Finder::new(secret.as_bytes()).into_owned());
    }
    ANY_SECRET.store(true, Ordering::Release);
}

/// What starts text shaped like a Cube API key.
const KEY_PREFIX: &[u8] = b"sk-";
/// How many key characters after `sk-` make text shaped like a key.
const KEY_SHAPE: usize = 20;

/// True for a character of a Cube API key (after its `sk-`).
fn is_key_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_'
}

/// Where text shaped like a Cube API key is in `bytes` (`sk-` and 20 or
/// more key characters, not inside a longer word), from `from` on.
fn key_shaped(bytes: &[u8], from: usize) -> Option<std::ops::Range<usize>> {
    static PREFIX: std::sync::LazyLock<Finder<'static>> = std::sync::LazyLock::new(|| Finder::new(KEY_PREFIX));
    let mut at = from;
    while let Some(found) = PREFIX.find(&bytes[at..]) {
        let start = at + found;
        let body = start + KEY_PREFIX.len();
        let end = body + bytes[body..].iter().take_while(|&&b| is_key_char(b)).count();
        let own_word = start == 0 || !is_key_char(bytes[start - 1]);
        if own_word && end - body >= KEY_SHAPE {
            return Some(start..end);
        }
        at = body;
    }
    None
}

/// `bytes` with every known secret, and every text shaped like a Cube API
/// key (`sk-…`), replaced by `***` (borrowed as they are when none occurs,
/// the common case: one fast scan per secret).
pub fn redact_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    let mut text = Cow::Borrowed(bytes);
    if ANY_SECRET.load(Ordering::Acquire) {
        let secrets = SECRETS.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        for secret in secrets.iter() {
            if secret.find(&text).is_none() {
                continue;
            }
            let mut redacted = Vec::with_capacity(text.len());
            let mut rest: &[u8] = &text;
            while let Some(at) = secret.find(rest) {
                redacted.extend_from_slice(&rest[..at]);
                redacted.extend_from_slice(REDACTED.as_bytes());
                rest = &rest[at + secret.needle().len()..];
            }
            redacted.extend_from_slice(rest);
            text = Cow::Owned(redacted);
        }
    }
    let Some(first) = key_shaped(&text, 0) else {
        return text;
    };
    let mut redacted = Vec::with_capacity(text.len());
    let (mut copied, mut found) = (0, Some(first));
    while let Some(key) = found {
        redacted.extend_from_slice(&text[copied..key.start]);
        redacted.extend_from_slice(REDACTED.as_bytes());
        copied = key.end;
        found = key_shaped(&text, key.end);
    }
    redacted.extend_from_slice(&text[copied..]);
    Cow::Owned(redacted)
}

/// `text` with every known secret replaced by `***`.
pub fn redact(text: &str) -> Cow<'_, str> {
    match redact_bytes(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        // A secret and `***` are whole UTF-8 strings, so the result is one.
        Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

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
        }
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
    /// flushed; an `--output-file` replaces FILE when `succeeded`, and is
    /// dropped (FILE untouched) when not.
    pub fn finish(mut self, succeeded: bool) -> io::Result<()> {
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
                    None => BufWriter::new(temporary_beside(&path)?),
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
                    None => temporary.insert(BufWriter::new(temporary_beside(path)?)),
                };
                writer.write_all(&shown).map_err(|err| cannot_write_file(path, err))
            }
        }
    }
}

/// A private temporary file in `path`'s folder, to be renamed over it.
fn temporary_beside(path: &Path) -> io::Result<tempfile::NamedTempFile> {
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    tempfile::Builder::new()
        .prefix(".analyst-")
        .tempfile_in(folder)
        .map_err(|err| cannot_write_file(path, err))
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

/// Creates (or truncates) `path` for data only its owner may read: a
/// stream, a report, rows. Mode 0600, also when the file already existed.
pub fn create_private(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let file = options.open(path)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        Ok(file)
    }
    #[cfg(not(unix))]
    options.open(path)
}

/// Creates the folder `path` and any missing parent for data only its
/// owner may read (`check --save`): mode 0700 for each folder created; one
/// that exists is left as it is.
pub fn create_private_folder(path: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

/// A private file ([`create_private`]) created on its first write, so that
/// nothing is created or truncated before there is something to keep (a
/// request the service refused leaves an earlier file as it was).
pub struct LazyFile {
    path: PathBuf,
    file: Option<BufWriter<File>>,
}

impl LazyFile {
    /// The file at `path`, not created yet.
    pub fn new(path: PathBuf) -> Self {
        LazyFile { path, file: None }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True once the file was created (something was written to it).
    pub fn created(&self) -> bool {
        self.file.is_some()
    }

    fn open(&mut self) -> io::Result<&mut BufWriter<File>> {
        match &mut self.file {
            Some(file) => Ok(file),
            file => Ok(file.insert(BufWriter::new(create_private(&self.path)?))),
        }
    }
}

impl Write for LazyFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.open()?.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.open()?.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }
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

impl Notes {
    /// Notes for the given `-q` / `-v` settings (`-q` wins over `-v`);
    /// `progress` says whether a progress display may be drawn on stderr
    /// (the settings decide: a terminal and no `-q`), `color` whether
    /// prefixes are painted.
    pub fn new(quiet: bool, verbose: bool, progress: bool, color: bool) -> Self {
        Notes {
            quiet,
            verbose: verbose && !quiet,
            progress: progress && !quiet,
            color,
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
    /// colour) as it is, then `line` with every secret redacted and every
    /// control character made visible; above the progress display, if any.
    fn emit(&self, painted: &str, line: &str) {
        let text = format!("{painted}{}\n", visible(&redact(line)));
        let write = || {
            let _ = io::stderr().lock().write_all(text.as_bytes());
        };
        match self.drawn.lock().ok().and_then(|drawn| drawn.clone()) {
            Some(display) => display.suspend(write),
            None => write(),
        }
    }
}

/// `bytes` with every control character that could act on a terminal
/// written as `\xNN`, and C1 controls and the bidirectional controls that
/// reorder what a terminal shows (U+061C, U+200E, U+200F, U+202A–U+202E,
/// U+2066–U+2069) as `\u{N}`: escape sequences (colours, titles, the
/// clipboard through OSC 52, clearing the screen), lone carriage returns,
/// text that reads other than it is. Newlines, tabs and `\r\n` stay.
/// Borrowed when there is nothing to change, the common case.
pub fn visible_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    if !(0..bytes.len()).any(|i| acting_len(bytes, i) > 0) {
        return Cow::Borrowed(bytes);
    }
    let mut shown = Vec::with_capacity(bytes.len() + 16);
    let mut i = 0;
    while i < bytes.len() {
        match acting_len(bytes, i) {
            0 => {
                shown.push(bytes[i]);
                i += 1;
            }
            1 => {
                shown.extend_from_slice(format!("\\x{:02x}", bytes[i]).as_bytes());
                i += 1;
            }
            len => {
                let code = std::str::from_utf8(&bytes[i..i + len])
                    .ok()
                    .and_then(|c| c.chars().next())
                    .map_or(0, u32::from);
                shown.extend_from_slice(format!("\\u{{{code:02x}}}").as_bytes());
                i += len;
            }
        }
    }
    Cow::Owned(shown)
}

/// How many bytes at `bytes[i]` are a character that acts on a terminal
/// (see [`visible_bytes`]); 0 for one shown as it is.
fn acting_len(bytes: &[u8], i: usize) -> usize {
    let next = |n: usize| bytes.get(i + n).copied().unwrap_or(0);
    match bytes[i] {
        b'\n' | b'\t' => 0,
        b'\r' => usize::from(next(1) != b'\n'),
        0..=0x1f | 0x7f => 1,
        // C1 controls, U+0080..=U+009F.
        0xc2 if (0x80..=0x9f).contains(&next(1)) => 2,
        // U+061C, the Arabic letter mark.
        0xd8 if next(1) == 0x9c => 2,
        // U+200E, U+200F and U+202A..=U+202E.
        0xe2 if next(1) == 0x80 && matches!(next(2), 0x8e | 0x8f | 0xaa..=0xae) => 3,
        // U+2066..=U+2069.
        0xe2 if next(1) == 0x81 && (0xa6..=0xa9).contains(&next(2)) => 3,
        _ => 0,
    }
}

/// `text` with its control characters made visible (see [`visible_bytes`]).
pub fn visible(text: &str) -> Cow<'_, str> {
    match visible_bytes(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        // Only whole characters were replaced, by ASCII.
        Cow::Owned(bytes) => Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

/// A duration as people write it: `90s`, `5m`, `1.5s`, `250ms`.
pub fn human(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.1}s", duration.as_secs_f64())
    }
}

/// How long a quoted piece of text (an error body, a tool's error) may be,
/// in characters.
pub const SUMMARY_CHARS: usize = 200;

/// How long a message the service wrote for people (a SQL error that
/// lists the valid members) may be before it is cut, in characters.
pub const SERVICE_MESSAGE_CHARS: usize = 8 * 1024;

/// `text`, every secret redacted first, trimmed and cut to
/// [`SUMMARY_CHARS`] characters with `…` when longer.
pub fn shorten(text: &str) -> String {
    shorten_to(text, SUMMARY_CHARS)
}

/// `text`, every secret redacted first, trimmed and cut to `limit`
/// characters with `…` when longer.
pub fn shorten_to(text: &str, limit: usize) -> String {
    let text = redact(text);
    let text = text.trim();
    match text.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// Text safe inside XML and HTML: the five entities escaped, characters
/// XML 1.0 forbids dropped.
pub fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

/// `text` as one shell word: as it is when it holds only characters no
/// shell treats specially, else in single quotes (an id the service chose
/// can then never run as a command when a hint is pasted).
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,:/@%+=".contains(c));
    match plain {
        true => text.to_string(),
        false => format!("'{}'", text.replace('\'', r"'\''")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_escaped_and_forbidden_characters_dropped() {
        assert_eq!(
            escape_markup("a<b & \"c\" 'd'\u{1}>"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"
        );
    }

    #[test]
    fn control_characters_are_made_visible_but_newlines_and_tabs_stay() {
        assert_eq!(
            visible("a\x1b]52;c;ZXZpbA==\x07b\tc\nd\r\ne\rf\u{9b}2Jg"),
            "a\\x1b]52;c;ZXZpbA==\\x07b\tc\nd\r\ne\\x0df\\u{9b}2Jg"
        );
        assert!(matches!(visible("plain ünïcode\n"), Cow::Borrowed(_)));
        // Bidirectional controls reorder what is shown: visible too; the
        // characters encoded beside them (…, —, Arabic letters) stay.
        assert_eq!(
            visible("a\u{202e}b\u{2066}c\u{200f}d\u{61c}e\u{2069}"),
            "a\\u{202e}b\\u{2066}c\\u{200f}d\\u{61c}e\\u{2069}"
        );
        assert!(matches!(visible("… — ؛ ع \u{2065}"), Cow::Borrowed(_)));
    }

    #[test]
    fn secrets_are_redacted_before_text_is_shortened() {
        register_secret("sk-redact-test-93f1");
        register_secret("ab");
        let echo = format!(
            "{}Invalid key sk-redact-test-93f1 (sk-redact-test-93f1)",
            "x".repeat(180)
        );
        let short = shorten(&echo);
        assert!(!short.contains("sk-redact"), "{short}");
        assert!(short.ends_with('…'));
        assert_eq!(redact("key sk-redact-test-93f1."), "key ***.");
        assert_eq!(redact("abc"), "abc", "too short to be a secret");
        assert!(matches!(redact_bytes(b"nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn ids_are_quoted_for_the_shell_only_when_needed() {
        assert_eq!(shell_quote("chat-0001"), "chat-0001");
        assert_eq!(shell_quote("1732512345678-message"), "1732512345678-message");
        assert_eq!(shell_quote("abc; curl x | sh #"), "'abc; curl x | sh #'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
