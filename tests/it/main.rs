//! The integration tests, one binary (the crate is linked once): a module
//! per area, each named after what it proves, and `support/`, the loopback
//! emulator of the service and the helpers. The release artifacts are
//! `tests/dist.rs`, a binary of its own (it builds them with Zig).

mod support;

mod abort;
mod action;
mod answers_checked;
mod ask_chunking;
mod ask_errors;
mod ask_outputs;
mod bounded_inputs;
mod check;
mod check_page;
mod ci_reports;
mod completions;
mod cube_evals;
mod cube_token;
mod data_fidelity;
mod eval_costs;
mod evals;
mod expectations;
mod history;

mod docs;
mod inert_pages;
mod jq_and_files;
mod kept_spans;
mod layout;
mod log_lines;
mod memory;
mod network;
mod one_way_out;
mod otel;
mod otel_promises;
mod parquet;
mod profiles;
mod readme;
mod real_streams;
mod report_identity;
mod resume;
mod rows;
mod secrets_split;
mod security;
mod service_in_2026;
mod session;
mod shell;
mod stopping;
mod stream_properties;
mod terminal;
mod vega_render;
mod widths;
