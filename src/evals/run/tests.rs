//! The run's own rules, unit by unit.

use std::time::Duration;

use super::case::failed;
use super::*;
use crate::error::{Fault, Kind};

#[test]
fn an_answer_that_did_not_pass_fails_its_run_with_one_line_per_reason() {
    let mut run = RunReport::new(1);
    let fault = failed(&mut run, vec!["answer did not match".into(), "too slow".into()]);
    assert_eq!(fault.kind, Kind::Expectation);
    assert_eq!(run.status, Outcome::Failed);
    assert_eq!(run.messages, ["answer did not match", "too slow"]);
}

#[test]
fn a_stop_of_one_run_stops_only_the_holders_of_its_token() {
    let (run, other) = (Stop::default(), Stop::default());
    let holder = run.clone();
    run.call(Fault::stop(Kind::Auth, "the key was refused"));
    assert_eq!(holder.stopped().map(|fault| fault.kind), Some(Kind::Auth));
    assert!(other.stopped().is_none(), "another run goes on");
    assert_eq!(holder.pause(Duration::from_secs(60)).unwrap_err().kind, Kind::Auth);
}
