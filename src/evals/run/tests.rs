//! The run's own rules, unit by unit.

use super::*;

#[test]
fn a_check_turn_records_its_own_exit_code_and_its_verdicts() {
    let passed: Result<(), RunEnd> = Ok(());
    assert_eq!(passed.exit_codes(SUCCESS), (SUCCESS, Some(SUCCESS)));
    let failed: Result<(), RunEnd> = Err(RunEnd::Failed(vec!["answer did not match".into()]));
    assert_eq!(
        failed.exit_codes(SUCCESS),
        (SUCCESS, Some(Kind::Expectation.exit_code()))
    );
    let stopped: Result<(), RunEnd> = Err(RunEnd::Stop(Fault::new(Kind::Auth, "401")));
    let code = Kind::Auth.exit_code();
    assert_eq!(stopped.exit_codes(code), (code, Some(code)));
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
