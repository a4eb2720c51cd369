//! The `analyst` binary: everything lives in the library; this only hands over
//! the arguments and turns the outcome into the process's exit status.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(analyst::run(std::env::args_os()))
}
