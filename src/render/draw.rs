//! Charts drawn by the real Vega and Vega-Lite: their published bundles
//! (vendored in `vendor/vega`, with their licences and versions) run in
//! QuickJS, embedded through `rquickjs`, so `-o svg` needs no browser, no
//! Node and no network. The engine is started only when a chart is drawn:
//! every other output pays nothing for it. It runs with a memory limit, a
//! stack limit and a deadline, so a spec that never finishes drawing is an
//! error, not a hang. `-o png` rasterises that SVG with `resvg`, its text
//! set in DejaVu Sans shipped in the binary (`vendor/fonts`), so it looks
//! the same on a server with no fonts at all.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use resvg::{tiny_skia, usvg};
use rquickjs::{CatchResultExt, CaughtError, Context, Function, Promise, Runtime};

use crate::error::{fail, Kind};
use crate::text::human;

/// Vega 6.4.0 (BSD-3-Clause).
const VEGA: &str = include_str!("../../vendor/vega/vega-6.4.0.min.js");
/// Vega-Lite 6.5.0 (BSD-3-Clause).
const VEGA_LITE: &str = include_str!("../../vendor/vega/vega-lite-6.5.0.min.js");

/// The font every text of a PNG is set in, whatever family the SVG names
/// (Bitstream Vera licence, see `vendor/fonts`).
const SANS: &[u8] = include_bytes!("../../vendor/fonts/DejaVuSans.ttf");
/// Its bold face (Vega's titles are bold).
const SANS_BOLD: &[u8] = include_bytes!("../../vendor/fonts/DejaVuSans-Bold.ttf");
/// The family name of [`SANS`].
const SANS_FAMILY: &str = "DejaVu Sans";

/// What the bundles expect of a browser or Node that QuickJS lacks:
/// `structuredClone` (a JSON round trip is enough for specs), timers (run
/// as soon as the job queue gets to them: nothing here waits on time), and
/// a `console` for Vega's warnings (an empty channel, say), which say
/// nothing here.
const PRELUDE: &str = r#"
globalThis.console = globalThis.console || { log() {}, info() {}, warn() {}, error() {}, debug() {} };
globalThis.structuredClone = globalThis.structuredClone || ((value) => JSON.parse(JSON.stringify(value)));
globalThis.setTimeout = globalThis.setTimeout || ((callback, _delay, ...args) => { Promise.resolve().then(() => callback(...args)); return 0; });
globalThis.clearTimeout = globalThis.clearTimeout || (() => {});
"#;

/// Compiles a Vega-Lite spec (JSON text) and renders its SVG headlessly.
const DRAW: &str = r#"
(specText) => {
  const spec = JSON.parse(specText);
  const compiled = vegaLite.compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  return view.toSVG();
}
"#;

/// The most stack the engine may take: deep specs recurse deeply.
const STACK_LIMIT: usize = 8 << 20;
/// The stack of the thread the engine runs on: room for [`STACK_LIMIT`]
/// and the engine's own frames, whatever thread asks for a chart.
const THREAD_STACK: usize = 16 << 20;

/// What the engine may take to draw one chart.
#[derive(Clone, Copy, Debug)]
struct Limits {
    memory: usize,
    time: Duration,
}

/// The limits of every chart drawn: far beyond what a chart of thousands
/// of rows takes (tens of MiB, under a second), well short of a hang.
const LIMITS: Limits = Limits {
    memory: 768 << 20,
    time: Duration::from_secs(60),
};

/// The SVG of `spec`, a Vega-Lite spec as JSON text. A spec the engine
/// rejects, or that takes too long or too much memory to draw, is
/// [`Kind::NothingToRender`] with the engine's own message.
pub fn svg(spec: &str) -> Result<String> {
    svg_within(spec, LIMITS)
}

fn svg_within(spec: &str, limits: Limits) -> Result<String> {
    let spec = spec.to_string();
    let engine = std::thread::Builder::new()
        .name("chart engine".into())
        .stack_size(THREAD_STACK)
        .spawn(move || draw_svg(&spec, limits))
        .map_err(|err| fail(Kind::Unexpected, format!("cannot start the chart engine: {err}")))?;
    engine
        .join()
        .unwrap_or_else(|_| Err(fail(Kind::Unexpected, "the chart engine failed")))
}

/// Draws `spec` on the calling thread (see [`svg_within`]).
fn draw_svg(spec: &str, limits: Limits) -> Result<String> {
    let cannot = |why: String| fail(Kind::NothingToRender, format!("the chart could not be drawn: {why}"));
    let runtime = Runtime::new().map_err(|err| cannot(err.to_string()))?;
    runtime.set_memory_limit(limits.memory);
    runtime.set_max_stack_size(STACK_LIMIT);
    let deadline = Instant::now() + limits.time;
    runtime.set_interrupt_handler(Some(Box::new(move || Instant::now() > deadline)));
    let context = Context::full(&runtime).map_err(|err| cannot(err.to_string()))?;
    context.with(|ctx| {
        let explain = |err: CaughtError<'_>| {
            let why = match err {
                CaughtError::Exception(exception) => exception.message().unwrap_or_else(|| "an exception".into()),
                CaughtError::Value(value) => format!("{value:?}"),
                CaughtError::Error(err) => err.to_string(),
            };
            match Instant::now() > deadline {
                true => cannot(format!("it took longer than {}", human(limits.time))),
                false => cannot(why),
            }
        };
        for source in [PRELUDE, VEGA, VEGA_LITE] {
            ctx.eval::<(), _>(source).catch(&ctx).map_err(explain)?;
        }
        let draw: Function = ctx.eval(DRAW).catch(&ctx).map_err(explain)?;
        let drawn: Promise = draw.call((spec,)).catch(&ctx).map_err(explain)?;
        drawn.finish::<String>().catch(&ctx).map_err(explain)
    })
}

/// The PNG of `svg` at `scale` pixels per SVG pixel.
pub fn png(svg: &str, scale: f32) -> Result<Vec<u8>> {
    let cannot = |why: String| {
        fail(
            Kind::NothingToRender,
            format!("the chart could not be rasterised: {why}"),
        )
    };
    let mut fonts = usvg::fontdb::Database::new();
    fonts.load_font_data(SANS.to_vec());
    fonts.load_font_data(SANS_BOLD.to_vec());
    fonts.set_sans_serif_family(SANS_FAMILY);
    fonts.set_serif_family(SANS_FAMILY);
    fonts.set_monospace_family(SANS_FAMILY);
    fonts.set_cursive_family(SANS_FAMILY);
    fonts.set_fantasy_family(SANS_FAMILY);
    let options = usvg::Options {
        font_family: SANS_FAMILY.to_string(),
        fontdb: Arc::new(fonts),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &options).map_err(|err| cannot(err.to_string()))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or_else(|| cannot(format!("a scale of {scale} gives no picture")))?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| cannot(format!("{}×{} pixels is too large", size.width(), size.height())))?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(|err| cannot(err.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_chart_is_drawn_and_a_broken_spec_says_why() {
        let spec = r#"{"mark":"bar","data":{"values":[{"a":"x","b":3},{"a":"y","b":5}]},
            "encoding":{"x":{"field":"a","type":"nominal"},"y":{"field":"b","type":"quantitative"}}}"#;
        let drawn = svg(spec).unwrap();
        assert!(drawn.starts_with("<svg"), "{}", &drawn[..drawn.len().min(200)]);
        assert!(drawn.contains("role-mark"));
        let err = svg(r#"{"mark":"no-such-mark"}"#).unwrap_err();
        assert_eq!(crate::error::kind_of(&err), Kind::NothingToRender);
        assert!(format!("{err:#}").contains("the chart could not be drawn"), "{err:#}");
    }

    #[test]
    fn the_engine_stops_at_its_limits() {
        let spec =
            r#"{"mark":"point","data":{"values":[{"a":1}]},"encoding":{"x":{"field":"a","type":"quantitative"}}}"#;
        let short = Limits {
            memory: LIMITS.memory,
            time: Duration::from_millis(1),
        };
        let err = svg_within(spec, short).unwrap_err();
        assert!(format!("{err:#}").contains("took longer than 1ms"), "{err:#}");
        let small = Limits {
            memory: 4 << 20,
            time: LIMITS.time,
        };
        let err = svg_within(spec, small).unwrap_err();
        assert_eq!(crate::error::kind_of(&err), Kind::NothingToRender, "{err:#}");
    }
}
