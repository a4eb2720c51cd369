//! `--jq EXPR`: a jq filter over a command's JSON output, as `gh --jq`
//! does it, with the `jaq` crates (no `jq` binary needed). The expression
//! is compiled when the command line is read, so a bad one is exit 2
//! before anything is sent. Strings print raw, other values as compact
//! JSON, one per line; numbers keep every digit they came with.

use std::io::{self, Write};

use anyhow::Result;
use jaq_core::load::{Arena, File, Loader};
use jaq_core::{data, Compiler, Ctx, Vars};
use jaq_json::Val;

use crate::error::{usage, Fault, Kind};

/// A compiled `--jq` expression.
pub struct JqFilter {
    filter: jaq_core::compile::Filter<jaq_core::Native<data::JustLut<Val>>>,
}

impl std::fmt::Debug for JqFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JqFilter")
    }
}

impl JqFilter {
    /// Compiles `expression` with jq's standard library; a usage error that
    /// says where it went wrong when it is not jq.
    pub fn compile(expression: &str) -> Result<JqFilter> {
        let defs = jaq_core::defs().chain(jaq_std::defs()).chain(jaq_json::defs());
        let funs = jaq_core::funs()
            .chain(jaq_std::funs())
            .chain(jaq_json::funs())
            .chain(jaq_fmts::funs());
        let arena = Arena::default();
        let at = |rest: &str| expression.len().saturating_sub(rest.len()) + 1;
        let bad = |what: String| usage(format!("--jq {expression:?} is not a jq expression: {what}"));
        let modules = Loader::new(defs)
            .load(
                &arena,
                File {
                    code: expression,
                    path: (),
                },
            )
            .map_err(|errors| {
                let what = errors
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
                    .join("; ");
                bad(what)
            })?;
        let filter = Compiler::default().with_funs(funs).compile(modules).map_err(|errors| {
            let what = errors
                .into_iter()
                .flat_map(|(_, errors)| errors)
                .map(|(name, undefined)| format!("{} {name} is not defined", undefined.as_str()))
                .collect::<Vec<_>>()
                .join("; ");
            bad(what)
        })?;
        Ok(JqFilter { filter })
    }

    /// Runs the filter on one JSON document and writes each result: a
    /// string raw, anything else as compact JSON, each on its own line. A
    /// document that is not JSON, or a filter that fails on it (`.a` of an
    /// array), is a usage error naming `--jq`.
    pub fn run(&self, document: &[u8], out: &mut dyn Write) -> io::Result<()> {
        let input = jaq_json::read::parse_single(document)
            .map_err(|err| failure(format!("--jq: the output is not one JSON document: {err}")))?;
        let ctx = Ctx::<data::JustLut<Val>>::new(&self.filter.lut, Vars::new([]));
        for result in self.filter.id.run((ctx, input)).map(jaq_core::unwrap_valr) {
            let value = result.map_err(|err| failure(format!("--jq: {err}")))?;
            match &value {
                Val::TStr(text) | Val::BStr(text) => out.write_all(text)?,
                other => write!(out, "{other}")?,
            }
            out.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// A usage failure carried in an `io::Error` (it surfaces through a writer).
fn failure(message: String) -> io::Error {
    io::Error::other(Fault::new(Kind::Usage, message))
}
