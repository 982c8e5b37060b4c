//! `mpcrs-run --checkpoint-config FILE`: checkpoint settings from a file, one
//! "option = value" per line, naming long options without their dashes;
//! blank lines and "#" comments are skipped. Each line is checked by the same
//! parser as the command line, and an error names the file and line. Options
//! given on the command line win: the file's that the command line also gives
//! are left out.

use std::ffi::OsString;
use std::path::Path;

use clap::Parser;

use crate::options::Options;

/// The options a checkpoint configuration may set.
pub const KEYS: [&str; 10] = [
    "checkpoint",
    "checkpoint-interval",
    "checkpoint-local",
    "levels",
    "group-size",
    "post-processing",
    "keep",
    "full-every",
    "checkpoint-staging",
    "max-restarts",
];

/// The arguments of the file at `path`, as (option, `--option=value`);
/// errors name the file and line.
pub fn arguments(path: &Path) -> Result<Vec<(String, OsString)>, String> {
    let text = mpcrs_settings::files::read_config_text(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut args = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{}:{}", path.display(), i + 1);
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .ok_or_else(|| format!("{at}: {line:?} is not \"option = value\""))?;
        if !KEYS.contains(&key) {
            return Err(format!(
                "{at}: {key:?} is not a checkpoint option (one of: {})",
                KEYS.join(", ")
            ));
        }
        if value.is_empty() {
            return Err(format!("{at}: {key} has no value"));
        }
        let word = format!("--{key}={value}");
        // The line alone, with what it needs, through the command line's parser.
        let mut probe = vec!["mpcrs-run".to_string()];
        if key != "checkpoint" {
            probe.extend(["--checkpoint".into(), "/".into()]);
        }
        probe.extend([word.clone(), "program".into()]);
        if let Err(e) = Options::try_parse_from(&probe) {
            let first = e.to_string();
            let first = first
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            return Err(format!("{at}: {first}"));
        }
        args.push((key.to_string(), OsString::from(word)));
    }
    Ok(args)
}

/// The command line `argv` with the options of its `--checkpoint-config FILE`
/// (if any) put before the others, so that the command line's win.
pub fn expand(argv: Vec<OsString>) -> Result<Vec<OsString>, String> {
    use clap::{CommandFactory, FromArgMatches};
    let Ok(matches) = Options::command().try_get_matches_from(&argv) else {
        // Let the full parse report what is wrong.
        return Ok(argv);
    };
    let Ok(first) = Options::from_arg_matches(&matches) else {
        return Ok(argv);
    };
    let Some(file) = first.checkpoint_config else {
        return Ok(argv);
    };
    let on_command_line = |key: &str| {
        matches.value_source(&key.replace('-', "_")) == Some(clap::parser::ValueSource::CommandLine)
    };
    if first.restart.is_some() {
        return Err(format!(
            "--checkpoint-config {}: a restart keeps the checkpoint settings of the first run",
            file.display()
        ));
    }
    let mut out = vec![argv[0].clone()];
    out.extend(
        arguments(&file)?
            .into_iter()
            .filter(|(key, _)| !on_command_line(key))
            .map(|(_, word)| word),
    );
    out.extend(argv.into_iter().skip(1));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("mpcrs-ckcfg-{name}-{}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p
    }

    fn words(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_file_sets_what_the_command_line_does_not() {
        let f = file(
            "good",
            "# levels for a long run\ncheckpoint = /tmp/ck\nlevels = 1:1,2:2,4:4\n\ngroup-size = 2  # small groups\nkeep=3\n",
        );
        let argv = words(&[
            "mpcrs-run",
            "--checkpoint-config",
            f.to_str().unwrap(),
            "--keep",
            "5",
            "app",
        ]);
        let o = Options::try_parse_from(expand(argv).unwrap()).unwrap();
        assert_eq!(o.checkpoint.as_deref(), Some(Path::new("/tmp/ck")));
        assert_eq!(o.levels.unwrap().to_string(), "1:1,2:2,4:4");
        assert_eq!(o.group_size, 2);
        assert_eq!(o.keep, 5, "the command line wins");
        assert_eq!(o.command, ["app"]);
        std::fs::remove_file(f).unwrap();
    }

    #[test]
    fn a_bad_line_is_named_with_its_file_and_number() {
        let cases = [
            (
                "key",
                "levels = 1:1\ncolour = blue\n",
                ":2: \"colour\" is not a checkpoint option",
            ),
            (
                "pair",
                "levels 1:1\n",
                ":1: \"levels 1:1\" is not \"option = value\"",
            ),
            (
                "value",
                "\n\nlevels = 2:0\n",
                ":3: invalid value '2:0' for '--levels",
            ),
            (
                "group",
                "group-size = 1\n",
                ":1: invalid value '1' for '--group-size",
            ),
            ("empty", "keep =\n", ":1: keep has no value"),
        ];
        for (name, text, want) in cases {
            let f = file(name, text);
            let e = arguments(&f).unwrap_err();
            assert!(
                e.starts_with(f.to_str().unwrap()) && e.contains(want),
                "{e}"
            );
            std::fs::remove_file(f).unwrap();
        }
    }
}
