//! What a command line means beyond what it says, as the tools users
//! know have it mean: `--jq` without `-o` asks for `-o json` (gh's `--jq`
//! reads JSON).

/// The command line `args` with `-o json` after the subcommand's name,
/// when its `--jq` is given, its `-o` is not, and it can write JSON.
pub fn with_json_for_jq(
    cli: &clap::Command,
    matches: &clap::ArgMatches,
    args: &[std::ffi::OsString],
) -> Option<Vec<std::ffi::OsString>> {
    use clap::parser::ValueSource;
    let (mut level, mut found, mut names) = (cli, matches, Vec::new());
    while let Some((name, sub)) = found.subcommand() {
        level = level.find_subcommand(name)?;
        names.push(name.to_string());
        found = sub;
    }
    let jq = found.try_get_one::<String>("jq").ok().flatten().is_some();
    let output_given = !matches!(found.value_source("output"), None | Some(ValueSource::DefaultValue));
    let writes_json = level
        .get_arguments()
        .find(|arg| arg.get_id() == "output")?
        .get_possible_values()
        .iter()
        .any(|value| value.get_name() == "json");
    if !jq || output_given || !writes_json {
        return None;
    }
    // After the last subcommand's name, before any `--`.
    let mut at = 0;
    for name in &names {
        at += 1 + args
            .iter()
            .skip(at + 1)
            .position(|arg| arg.to_str() == Some(name.as_str()))?;
    }
    let mut args = args.to_vec();
    args.splice(at + 1..at + 1, ["-o".into(), "json".into()]);
    Some(args)
}
