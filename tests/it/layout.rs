//! The layout holds: each module imports only modules listed before it in
//! the layer list of `src/lib.rs`'s documentation (dependencies point one
//! way, no cycle), every module is in that list, the environment and
//! clap's matches are read only in `settings/` (whose files also import
//! one way, in the order `settings/mod.rs` lists them), and exit numbers
//! appear only in `error.rs` (a literal picked as an exit code anywhere
//! else is found, in a statement that picks one too), and no code of ours
//! depends on the processor's architecture.

use std::path::{Path, PathBuf};

/// The modules from the bottom up, as the documentation of `src/lib.rs`
/// lists them (`//! - [`name`]: …`).
fn layers() -> Vec<String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    lib.lines()
        .filter_map(|line| line.strip_prefix("//! - [`"))
        .filter_map(|rest| rest.split_once('`').map(|(name, _)| name.to_string()))
        .collect()
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every source file with its text, and the top-level module it belongs to.
fn files() -> Vec<(PathBuf, String, String)> {
    let mut found = Vec::new();
    let mut dirs = vec![src()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let relative = path.strip_prefix(src()).unwrap();
                let top = relative.components().next().unwrap().as_os_str().to_string_lossy();
                let module = top.trim_end_matches(".rs").to_string();
                let text = std::fs::read_to_string(&path).unwrap();
                found.push((path, module, text));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn no_source_file_is_over_900_lines_but_the_flags() {
    // cli.rs declares every flag with its help text: long by nature.
    for (path, _, text) in files() {
        let lines = text.lines().count();
        assert!(
            lines <= 900 || path.ends_with("src/cli.rs"),
            "{} has {lines} lines: split it by concern",
            path.display()
        );
    }
}

/// The crate's top-level modules a text names (`crate::name`), each once.
fn named_modules(text: &str) -> Vec<String> {
    let mut names: Vec<String> = named_paths(text)
        .iter()
        .map(|path| path.split("::").next().unwrap_or_default().to_string())
        .collect();
    names.dedup();
    names
}

/// The crate's paths a text names (`crate::evals::figures::X` is
/// `evals::figures::X`), each once.
fn named_paths(text: &str) -> Vec<String> {
    let mut names: Vec<String> = text
        .match_indices("crate::")
        .map(|(at, _)| {
            text[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect::<String>()
                .trim_end_matches(':')
                .to_string()
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The layer a module path stands in: the longest listed one it is in
/// (`evals::figures::find` is in `evals::figures`, listed apart from
/// `evals`).
fn layer_of(path: &str, layers: &[String]) -> Option<usize> {
    layers
        .iter()
        .enumerate()
        .filter(|(_, layer)| path == layer.as_str() || path.starts_with(&format!("{layer}::")))
        .max_by_key(|(_, layer)| layer.len())
        .map(|(level, _)| level)
}

/// A source file's module path: `src/evals/figures/mod.rs` is
/// `evals::figures`.
fn module_path(path: &Path) -> String {
    let relative = path.strip_prefix(src()).unwrap().with_extension("");
    let parts: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().to_string())
        .filter(|part| part != "mod")
        .collect();
    parts.join("::")
}

#[test]
fn every_module_imports_only_the_modules_below_it() {
    let layers = layers();
    assert!(layers.len() >= 10, "lib.rs lists the modules: {layers:?}");
    let mut upward = Vec::new();
    for (path, module, text) in files() {
        let Some(level) = layer_of(&module_path(&path), &layers) else {
            assert!(
                ["lib", "main"].contains(&module.as_str()),
                "{} is not in lib.rs",
                path.display()
            );
            continue;
        };
        for name in named_paths(&text) {
            match layer_of(&name, &layers) {
                Some(other) if other > level => upward.push(format!("{} imports {name}", path.display())),
                _ => {}
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports pointing up the layout:\n{}",
        upward.join("\n")
    );
}

#[test]
fn only_commands_lib_and_settings_use_the_cli_or_the_commands() {
    for (path, module, text) in files() {
        if ["commands", "lib", "main", "settings"].contains(&module.as_str()) {
            continue;
        }
        for name in named_modules(&text) {
            assert!(
                name != "cli" && name != "commands",
                "{} uses {name}: only commands/, lib.rs and settings/ may",
                path.display()
            );
        }
    }
}

#[test]
fn only_settings_reads_the_environment_and_the_matches() {
    for (path, module, text) in files() {
        if module == "settings" {
            continue;
        }
        for needle in ["env::var", "ArgMatches", "FromArgMatches"] {
            assert!(!text.contains(needle), "{} uses {needle}", path.display());
        }
    }
}

/// CI lints macOS on one architecture (`scripts/check-targets`:
/// aarch64-apple-darwin): that is all of our macOS code only while none of
/// it depends on the architecture.
#[test]
fn no_code_of_ours_depends_on_the_architecture() {
    let build = Path::new(env!("CARGO_MANIFEST_DIR")).join("build.rs");
    let build = (build.clone(), String::new(), std::fs::read_to_string(&build).unwrap());
    for (path, _, text) in files().into_iter().chain([build]) {
        for needle in ["target_arch", "target_pointer_width", "target_endian"] {
            assert!(
                !text.contains(needle),
                "{} tests {needle}: scripts/check-targets must lint x86_64-apple-darwin too",
                path.display()
            );
        }
    }
}

/// True when `line` holds a whole-number literal (not part of a name).
fn has_number(line: &str) -> bool {
    line.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .any(|token| !token.is_empty() && token.chars().all(|c| c.is_ascii_digit()))
}

/// The code of `text` where an exit code is picked: a line that speaks of
/// an exit (`exit_code`, `exit(`, `ExitCode::`), and every line of a
/// `let (…, exit_code) = match` or `=> …exit…` statement, up to its end.
fn exit_code_lines(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut in_statement = false;
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let speaks_of_exit = ["exit_code", "exit(", "ExitCode::", "SUCCESS"]
            .iter()
            .any(|word| code.contains(word));
        if [
            "exit_code) =",
            "exit_code = match",
            "exit_code: match",
            "exit_code = Some(match",
        ]
        .iter()
        .any(|start| code.contains(start))
        {
            in_statement = true;
        }
        if speaks_of_exit || in_statement {
            found.push(code);
        }
        if in_statement && (code.trim_start().starts_with("};") || code.trim_start().starts_with("});")) {
            in_statement = false;
        }
    }
    found
}

#[test]
fn exit_numbers_appear_only_in_error_rs() {
    for (path, module, text) in files() {
        // error.rs is the table; cli.rs writes the codes in help texts;
        // the history stores the codes others picked (by column number).
        if ["error", "cli", "history"].contains(&module.as_str()) {
            continue;
        }
        for line in exit_code_lines(&text) {
            assert!(!has_number(line), "{} picks an exit number: {line}", path.display());
        }
    }
}

#[test]
fn the_exit_number_check_finds_literal_codes() {
    let picked = "let (status, exit_code) = match x {\n    (true, ..) => (Outcome::Passed, 0),\n    _ => (Outcome::Failed, 9),\n};";
    assert!(exit_code_lines(picked).iter().any(|line| has_number(line)));
    assert!(has_number("turn.exit_code = settled.map_or(0, code);"));
    let matched = "turn.exit_code = match &result {\n    Ok(()) => 0,\n    Err(err) => kind_of(err).exit_code(),\n};";
    assert!(exit_code_lines(matched).iter().any(|line| has_number(line)));
    assert!(!exit_code_lines("let exit_code = SUCCESS;")
        .iter()
        .any(|line| has_number(line)));
    assert!(!has_number("kind.exit_code() as u8 + width_2"));
}

#[test]
fn each_settings_file_imports_only_the_settings_files_above_it() {
    let folder = src().join("settings");
    let mod_rs = std::fs::read_to_string(folder.join("mod.rs")).unwrap();
    let order: Vec<String> = mod_rs
        .lines()
        .filter_map(|line| line.strip_prefix("//! - [`"))
        .filter_map(|rest| rest.split_once('`').map(|(name, _)| name.to_string()))
        .collect();
    let mut files: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "mod.rs")
        .collect();
    files.sort();
    let mut listed = order.iter().map(|name| format!("{name}.rs")).collect::<Vec<_>>();
    listed.sort();
    assert_eq!(files, listed, "settings/mod.rs lists every file of settings/");
    let mut upward = Vec::new();
    for (level, name) in order.iter().enumerate() {
        let text = std::fs::read_to_string(folder.join(format!("{name}.rs"))).unwrap();
        for higher in &order[level + 1..] {
            let named = format!("super::{higher}");
            let imports = text.match_indices(&named).any(|(at, _)| {
                let next = text[at + named.len()..].chars().next();
                !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            if imports {
                upward.push(format!("settings/{name}.rs imports settings/{higher}.rs"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports pointing up settings/:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_help_lists_exactly_the_exit_codes_of_the_failure_kinds() {
    use analyst::error::Kind;
    let mut listed: Vec<u8> = analyst::cli::EXIT_STATUS
        .iter()
        .flat_map(|(codes, _)| codes.split(", "))
        .filter(|code| !code.is_empty())
        .map(|code| code.parse().expect("a number"))
        .collect();
    let mut kinds: Vec<u8> = Kind::ALL.iter().map(|kind| kind.exit_code()).collect();
    listed.sort_unstable();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(listed, kinds, "cli::EXIT_STATUS and Kind::exit_code agree");
}

/// The sibling files (modules of the same folder) that each file of
/// `folder` names in its code: `super::X` or `crate::ROOM::X` (test
/// modules and comments left out).
fn sibling_imports(folder: &Path) -> Vec<(String, Vec<String>)> {
    let room = folder.strip_prefix(src()).unwrap().to_string_lossy().replace('/', "::");
    let siblings: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter_map(|path| match path.is_dir() {
            true => Some(path.file_name()?.to_string_lossy().into_owned()),
            false => Some(path.file_stem()?.to_string_lossy().into_owned()).filter(|stem| stem != "mod"),
        })
        .collect();
    let mut imports = Vec::new();
    for name in &siblings {
        let path = match folder.join(format!("{name}.rs")).exists() {
            true => folder.join(format!("{name}.rs")),
            false => folder.join(name).join("mod.rs"),
        };
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        // Code only: no test module, no comment (a doc link is no import).
        let text: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or_default()
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let named: Vec<String> = siblings
            .iter()
            .filter(|other| *other != name)
            .filter(|other| {
                [format!("super::{other}"), format!("crate::{room}::{other}")]
                    .iter()
                    .any(|path| {
                        text.match_indices(path.as_str()).any(|(at, _)| {
                            let next = text[at + path.len()..].chars().next();
                            !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                        })
                    })
            })
            .cloned()
            .collect();
        imports.push((name.clone(), named));
    }
    imports
}

#[test]
fn no_files_of_a_folder_import_each_other_in_a_circle() {
    let mut folders = vec![src()];
    let mut circles = Vec::new();
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            }
        }
        if folder == src() {
            continue;
        }
        let imports = sibling_imports(&folder);
        // A depth-first walk from each file: a file reached again on its
        // own path is a circle.
        fn walk(name: &str, imports: &[(String, Vec<String>)], path: &mut Vec<String>, found: &mut Vec<String>) {
            if let Some(at) = path.iter().position(|seen| seen == name) {
                found.push(path[at..].join(" → ") + " → " + name);
                return;
            }
            path.push(name.to_string());
            for next in imports
                .iter()
                .filter(|(file, _)| file == name)
                .flat_map(|(_, named)| named)
            {
                walk(next, imports, path, found);
            }
            path.pop();
        }
        for (name, _) in &imports {
            let mut found = Vec::new();
            walk(name, &imports, &mut Vec::new(), &mut found);
            for circle in found {
                circles.push(format!("{}: {circle}", folder.strip_prefix(src()).unwrap().display()));
            }
        }
    }
    circles.sort();
    circles.dedup();
    assert!(
        circles.is_empty(),
        "files that import each other:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_wire_writes_nothing_and_asks_no_history() {
    // api/ and net/ speak through the `log` facade or return what the
    // owner words: no Notes, no print, no history.
    for (path, module, text) in files() {
        if module != "api" && module != "net" {
            continue;
        }
        let named = named_modules(&text);
        for forbidden in ["output", "history"] {
            assert!(
                !named.iter().any(|name| name == forbidden),
                "{} imports crate::{forbidden}",
                path.display()
            );
        }
        for print in ["eprint!", "eprintln!", "print!", "println!"] {
            assert!(!text.contains(print), "{} uses {print}", path.display());
        }
    }
}

#[test]
fn a_runs_files_stay_small_and_ask_names_at_most_eight_modules() {
    // evals/run/: the pool, a case's life, its grading and the references,
    // each a file a reader takes in at once.
    for (path, _, text) in files() {
        if path.parent().is_some_and(|dir| dir.ends_with("evals/run")) {
            let lines = text.lines().count();
            assert!(lines <= 500, "{} has {lines} lines", path.display());
        }
    }
    // `ask` is origin → plan → turn, judged: the output is one type the
    // settings built.
    let ask = std::fs::read_to_string(src().join("commands/ask.rs")).unwrap();
    let named = named_modules(&ask);
    assert!(
        named.len() <= 8,
        "commands/ask.rs names {} modules: {named:?}",
        named.len()
    );
}

#[test]
fn a_turn_is_drawn_through_one_dynamic_renderer_at_most() {
    // The output is a closed enum (render::Printer), not a stack of boxes:
    // the turn's sinks hold the one observer, nothing else is dynamic.
    let uses: Vec<String> = files()
        .into_iter()
        .flat_map(|(path, _, text)| {
            text.lines()
                .filter(|line| line.contains("dyn Renderer"))
                .map(|line| format!("{}: {}", path.display(), line.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(uses.len() <= 1, "{uses:#?}");
}

/// The text of every `name!(…)` call in `text`, parentheses balanced
/// (strings skipped).
fn macro_calls<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let opening = format!("{name}!(");
    let mut calls = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find(&opening).map(|at| at + from) {
        let bytes = text.as_bytes();
        let (mut i, mut depth) = (at + opening.len(), 1);
        while depth > 0 && i < bytes.len() {
            match bytes[i] {
                b'(' => depth += 1,
                b')' => depth -= 1,
                b'"' => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                }
                _ => {}
            }
            i += 1;
        }
        calls.push(&text[at..i.min(text.len())]);
        from = i.min(text.len());
    }
    calls
}

/// In the integration tests: the checks that an output holds a piece of
/// text (`assert!(x.contains(…))`, `predicate::str::contains`; not the
/// ones that it lacks one), and the comparisons of a whole output
/// (`assert_whole`, `assert_pinned`, snapbox, `assert_eq!` of an output,
/// `.stdout("…")`).
fn substring_and_whole_checks() -> (usize, usize) {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let contains = regex::Regex::new(r"\.contains\(").unwrap();
    let negated = regex::Regex::new(r"!\s*[\w.\[\]&]*(\([^()]*\))?[\w.\[\]&]*\.contains\(").unwrap();
    let output_eq = regex::Regex::new(
        r"^assert_eq!\(\s*&?(String::from_utf8\w*\(|stdout|stderr|out\b|text|page|csv|lines|got|rendered|shown|printed|line|markdown|html|table|tap|xml|report|output)",
    )
    .unwrap();
    let whole_calls = regex::Regex::new(
        r#"\bassert_whole\(|assert_data_eq!|assert_pinned\(|\.stdout\("|\.stdout\(format!|\.stderr\("|\.stderr\(format!|predicate::eq"#,
    )
    .unwrap();
    let (mut substring, mut whole) = (0, 0);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs") && !path.ends_with("layout.rs"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for call in macro_calls(&text, "assert") {
            let inner = &call["assert!(".len()..];
            substring += contains.find_iter(inner).count() - negated.find_iter(inner).count();
        }
        substring += text.matches("predicate::str::contains").count();
        whole += macro_calls(&text, "assert_eq")
            .iter()
            .filter(|call| output_eq.is_match(call))
            .count();
        whole += text
            .lines()
            .filter(|line| !line.trim_start().starts_with("pub fn") && !line.trim_start().starts_with("fn "))
            .map(|line| whole_calls.find_iter(line).count())
            .sum::<usize>();
    }
    (substring, whole)
}

#[test]
fn outputs_are_compared_whole_more_often_than_searched() {
    // A substring hides what else changed around it: at most two searches
    // of an output for each comparison of a whole one.
    let (substring, whole) = substring_and_whole_checks();
    assert!(whole >= 100, "the count finds the whole comparisons: {whole}");
    assert!(
        substring <= 2 * whole,
        "{substring} substring checks against {whole} whole-output comparisons: compare whole outputs (assert_whole)"
    );
}
