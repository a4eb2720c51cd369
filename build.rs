//! Records what `analyst version` prints besides the version: the commit
//! the binary was built from, that commit's date, and the target. Outside
//! a git checkout (a crate tarball) the commit and date are "unknown".

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?.trim().to_string();
    (output.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some();
    let date = git(&["log", "-1", "--format=%cs"]).unwrap_or_else(|| "unknown".into());
    let commit = if dirty { format!("{commit}-modified") } else { commit };
    println!("cargo:rustc-env=ANALYST_COMMIT={commit}");
    println!("cargo:rustc-env=ANALYST_COMMIT_DATE={date}");
    println!(
        "cargo:rustc-env=ANALYST_TARGET={}",
        std::env::var("TARGET").unwrap_or_default()
    );
    // Built again when HEAD moves or the index changes.
    for path in [".git/HEAD", ".git/index"] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
