//! `--jq EXPR`: a jq filter over a command's JSON output, as `gh --jq`
//! does it, with the `jaq` crates (no `jq` binary needed). The expression
//! is checked when the command line is read, so a bad one is exit 2
//! before anything is sent. Strings print raw, other values as compact
//! JSON, one per line; numbers keep every digit they came with.
//!
//! The filter runs under the same rules as everything else: on a thread of
//! its own ([`JqRunner`]) whose results the caller writes as they come, so
//! output is never held back and memory stays flat (`range(1e9) | head -1`
//! prints at once), and the caller can stop it for a signal or
//! `--timeout` even while it computes. `env` and `$ENV` are not there (the
//! environment holds secrets); `halt` ends the output, `halt_error` fails
//! with its message (exit 9); an expression nested too deep is refused.

use std::cell::RefCell;
use std::io::{self, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::time::Duration;

use anyhow::Result;
use jaq_core::box_iter::box_once;
use jaq_core::load::{Arena, File, Loader};
use jaq_core::native::{v, Fun};
use jaq_core::{data, Compiler, Ctx, Exn, Native, Vars};
use jaq_json::Val;

use crate::error::{usage, Fault, Kind};

/// How deep brackets may nest in an expression: far above any real filter,
/// far below what would exhaust the compiler's stack.
const MAX_DEPTH: usize = 256;

/// The stack of the thread that compiles and runs a filter: room for every
/// expression [`MAX_DEPTH`] allows.
const STACK: usize = 64 << 20;

/// How often the caller looks at its stop while the filter computes.
const POLL: Duration = Duration::from_millis(50);

/// Results in flight between the filter's thread and the caller.
const IN_FLIGHT: usize = 256;

/// The exit code `halt_error` asks for, whatever its argument: the one
/// `cli.md` gives it.
const HALT_ERROR: i32 = 9;

type Data = data::JustLut<Val>;
type Filter = jaq_core::compile::Filter<Native<Data>>;

/// A checked `--jq` expression.
#[derive(Debug)]
pub struct JqFilter {
    expression: String,
}

impl JqFilter {
    /// Checks `expression`: jq with jq's standard library, not nested
    /// deeper than [`MAX_DEPTH`], without `env` or `$ENV`. A usage error
    /// says where it went wrong.
    pub fn compile(expression: &str) -> Result<JqFilter> {
        let bad = |what: String| usage(format!("--jq {expression:?} is not a jq expression: {what}"));
        if let Some(at) = too_deep(expression) {
            return Err(bad(format!(
                "brackets nest deeper than {MAX_DEPTH} levels at character {at}"
            )));
        }
        let owned = expression.to_string();
        let compiled = std::thread::Builder::new()
            .stack_size(STACK)
            .spawn(move || compile(&owned).map(drop))
            .map_err(|err| anyhow::anyhow!("cannot start a thread for --jq: {err}"))?
            .join()
            .map_err(|_| anyhow::anyhow!("--jq could not be compiled"))?;
        compiled.map_err(bad)?;
        Ok(JqFilter {
            expression: expression.to_string(),
        })
    }

    /// Starts the filter on a thread of its own, ready for documents.
    pub fn start(&self) -> io::Result<JqRunner> {
        let (documents, inbox) = mpsc::sync_channel::<Vec<u8>>(1);
        let (outbox, results) = mpsc::sync_channel(IN_FLIGHT);
        let expression = self.expression.clone();
        std::thread::Builder::new()
            .stack_size(STACK)
            .spawn(move || serve(&expression, &inbox, &outbox))?;
        Ok(JqRunner { documents, results })
    }
}

/// The position (from 1) where brackets of `expression` first nest deeper
/// than [`MAX_DEPTH`], counting `(`, `[`, `{` and string interpolations
/// `\(…)` outside string literals.
fn too_deep(expression: &str) -> Option<usize> {
    // Each open bracket, and whether it is an interpolation (whose `)`
    // returns into a string).
    let mut open: Vec<bool> = Vec::new();
    let mut in_string = false;
    let mut chars = expression.chars().enumerate().peekable();
    while let Some((at, c)) = chars.next() {
        match (in_string, c) {
            (true, '\\') => {
                if chars.next_if(|(_, next)| *next == '(').is_some() {
                    open.push(true);
                    in_string = false;
                } else {
                    chars.next();
                }
            }
            (true, '"') => in_string = false,
            (true, _) => {}
            (false, '"') => in_string = true,
            (false, '(' | '[' | '{') => open.push(false),
            (false, ')' | ']' | '}') => in_string = open.pop() == Some(true),
            (false, _) => {}
        }
        if open.len() > MAX_DEPTH {
            return Some(at + 1);
        }
    }
    None
}

/// Compiles `expression` with jq's standard library, without `env` (and
/// with `$ENV` undefined); `halt_error` is ours.
fn compile(expression: &str) -> Result<Filter, String> {
    let defs = jaq_core::defs()
        .chain(jaq_std::defs().filter(|def| !(def.name == "halt_error" && def.args.len() == 1)))
        .chain(jaq_json::defs());
    let funs = jaq_core::funs()
        .chain(jaq_std::funs())
        .chain(jaq_json::funs())
        .chain(jaq_fmts::funs())
        .filter(|(name, ..)| *name != "env")
        .chain([halt_error()]);
    let arena = Arena::default();
    let at = |rest: &str| expression.len().saturating_sub(rest.len()) + 1;
    let modules = Loader::new(defs)
        .load(
            &arena,
            File {
                code: expression,
                path: (),
            },
        )
        .map_err(|errors| {
            errors
                .into_iter()
                .flat_map(|(_, error)| match error {
                    jaq_core::load::Error::Io(errors) => errors.into_iter().map(|(_, e)| e).collect::<Vec<_>>(),
                    jaq_core::load::Error::Lex(errors) => errors
                        .into_iter()
                        .map(|(expected, rest)| format!("expected {} at character {}", expected.as_str(), at(rest)))
                        .collect(),
                    jaq_core::load::Error::Parse(errors) => errors
                        .into_iter()
                        .map(|(expected, found)| {
                            let found = if found.is_empty() {
                                "the end".to_string()
                            } else {
                                format!("{found:?} at character {}", at(found))
                            };
                            format!("expected {}, found {found}", expected.as_str())
                        })
                        .collect(),
                })
                .collect::<Vec<_>>()
                .join("; ")
        })?;
    Compiler::default().with_funs(funs).compile(modules).map_err(|errors| {
        errors
            .into_iter()
            .flat_map(|(_, errors)| errors)
            .map(|(name, undefined)| match name {
                "env" | "$ENV" | "ENV" => {
                    "env and $ENV are not available: the environment holds the API key and tokens".to_string()
                }
                name => format!("{} {name} is not defined", undefined.as_str()),
            })
            .collect::<Vec<_>>()
            .join("; ")
    })
}

thread_local! {
    /// The message of the `halt_error` that stopped the filter.
    static HALT_MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// `halt_error/1`: keeps its input as the message and halts (exit 9, as
/// the caller will say; the argument is not an exit code of ours).
fn halt_error() -> Fun<Data> {
    (
        "halt_error",
        v(1),
        Native::new(|cv| {
            let message = match &cv.1 {
                Val::TStr(text) | Val::BStr(text) => String::from_utf8_lossy(text).into_owned(),
                other => other.to_string(),
            };
            HALT_MESSAGE.with(|halted| *halted.borrow_mut() = Some(message));
            box_once(Err(Exn::halt(HALT_ERROR)))
        }),
    )
}

/// What the filter's thread says about a document.
enum Produced {
    /// One result, as written (a string raw, anything else compact JSON).
    Value(Vec<u8>),
    /// The document gave all its results.
    Done,
    /// The document is not JSON, or the filter failed on it.
    Failed(String),
    /// `halt`: no more output.
    Halt,
    /// `halt_error` with its message.
    HaltError(String),
}

/// The filter's thread: compiles once, then runs on each document it gets,
/// until the caller goes away.
fn serve(expression: &str, inbox: &Receiver<Vec<u8>>, outbox: &SyncSender<Produced>) {
    let filter = match compile(expression) {
        Ok(filter) => filter,
        Err(why) => {
            let _ = outbox.send(Produced::Failed(why));
            return;
        }
    };
    while let Ok(document) = inbox.recv() {
        if run(&filter, &document, outbox).is_err() {
            return;
        }
    }
}

/// Runs `filter` on one document, sending each result as it comes; `Err`
/// when the caller is gone.
fn run(filter: &Filter, document: &[u8], outbox: &SyncSender<Produced>) -> Result<(), ()> {
    let send = |produced| outbox.send(produced).map_err(drop);
    let input = match jaq_json::read::parse_single(document) {
        Ok(input) => input,
        Err(err) => return send(Produced::Failed(format!("the output is not one JSON document: {err}"))),
    };
    let ctx = Ctx::<Data>::new(&filter.lut, Vars::new([]));
    for result in filter.id.run((ctx, input)) {
        let value = match result {
            Ok(value) => value,
            Err(exn) => {
                return match exn.get_err() {
                    Ok(err) => send(Produced::Failed(err.to_string())),
                    Err(halt) => send(match (halt.get_halt(), HALT_MESSAGE.with(|halted| halted.take())) {
                        (Ok(HALT_ERROR), Some(message)) => Produced::HaltError(message),
                        _ => Produced::Halt,
                    }),
                }
            }
        };
        let mut written = Vec::new();
        let _ = match &value {
            Val::TStr(text) | Val::BStr(text) => written.write_all(text),
            other => write!(written, "{other}"),
        };
        written.push(b'\n');
        send(Produced::Value(written))?;
    }
    send(Produced::Done)
}

/// A running filter: documents go in, results come out as they are made.
pub struct JqRunner {
    documents: SyncSender<Vec<u8>>,
    results: Receiver<Produced>,
}

impl JqRunner {
    /// Runs the filter on `document` and hands each result to `write` as
    /// it comes (`None` when none came for a while: time to flush). Between
    /// results, and while the filter computes, `stop` is asked: its fault
    /// ends the run. `halt` ends it as a reader that went away does (a
    /// `BrokenPipe`: exit 0); `halt_error` is a failure of kind
    /// [`Kind::Expectation`] (exit 9) with its message; a filter that
    /// fails, or a document that is not JSON, a usage error naming `--jq`.
    pub fn run(
        &mut self,
        document: Vec<u8>,
        write: &mut dyn FnMut(Option<&[u8]>) -> io::Result<()>,
        stop: &dyn Fn() -> Option<Fault>,
    ) -> io::Result<()> {
        let gone = || io::Error::other(Fault::new(Kind::Unexpected, "the --jq filter stopped working"));
        self.documents.send(document).map_err(|_| gone())?;
        loop {
            if let Some(fault) = stop() {
                return Err(io::Error::other(fault));
            }
            match self.results.recv_timeout(POLL) {
                Ok(Produced::Value(value)) => write(Some(&value))?,
                Ok(Produced::Done) => return Ok(()),
                Ok(Produced::Failed(why)) => {
                    return Err(io::Error::other(Fault::new(Kind::Usage, format!("--jq: {why}"))))
                }
                Ok(Produced::Halt) => return Err(io::Error::from(io::ErrorKind::BrokenPipe)),
                Ok(Produced::HaltError(message)) => {
                    return Err(io::Error::other(Fault::new(Kind::Expectation, message)))
                }
                Err(RecvTimeoutError::Timeout) => write(None)?,
                Err(RecvTimeoutError::Disconnected) => return Err(gone()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_measured_outside_strings_and_through_interpolations() {
        assert_eq!(too_deep(".a | [.b, {c: (.d)}]"), None);
        assert_eq!(too_deep(&"[".repeat(300)), Some(MAX_DEPTH + 1));
        assert_eq!(too_deep(&format!("\"{}\"", "[".repeat(300))), None, "in a string");
        let interpolated = format!("\"{}\"", "\\(".repeat(300));
        assert!(too_deep(&interpolated).is_some(), "interpolations nest");
    }
}
