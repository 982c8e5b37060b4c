//! What users of Open MPI's mpirun and MPICH's mpiexec type, turned into
//! mpcrs-run's own options before they are parsed: single-dash long options
//! (`-np 4`, `-host a,b`, `-hostfile F`, `-bind-to core`, `-map-by node`,
//! `-wdir D`, `-tag-output`, `-output-filename D`, MPICH's `-ppn N` and
//! `-prepend-rank`), MPICH's `-genv VAR
//! VALUE`, and Open
//! MPI's `--oversubscribe`, which means nothing here (ranks are threads:
//! oversubscribing is the point), so it is accepted and dropped. Only the
//! launcher's own options are rewritten: the first word that is not an option
//! (or `--`) starts the program and its arguments, which stay as they are.

use std::ffi::OsString;

use clap::CommandFactory;

use crate::options::Options;

/// `argv` (program name first) with mpirun's and mpiexec's spellings in
/// mpcrs-run's.
pub fn normalize(argv: Vec<OsString>) -> Vec<OsString> {
    let command = Options::command();
    // Options of mpcrs-run that take a value: their value is never rewritten.
    let takes_value = |word: &str| {
        command.get_arguments().any(|a| {
            let named = a.get_long().is_some_and(|l| word == format!("--{l}"))
                || a.get_short().is_some_and(|s| word == format!("-{s}"));
            named && a.get_action().takes_values()
        })
    };
    let mut out = Vec::with_capacity(argv.len());
    let mut words = argv.into_iter();
    out.extend(words.next());
    while let Some(word) = words.next() {
        let Some(text) = word.to_str().map(str::to_string) else {
            out.push(word);
            out.extend(words);
            break;
        };
        match text.as_str() {
            "-np" | "-H" | "-host" | "-hostfile" | "-machinefile" | "--machinefile"
            | "-bind-to" | "-wdir" | "-ppn" | "-map-by" | "-output-filename" => {
                let ours = match text.as_str() {
                    "-np" => "--np",
                    "-ppn" => "--ppn",
                    "-map-by" => "--map-by",
                    "-output-filename" => "--output-filename",
                    "-H" | "-host" => "--host",
                    "-bind-to" => "--bind-to",
                    "-wdir" => "--wdir",
                    _ => "--hostfile",
                };
                out.push(ours.into());
                out.extend(words.next());
            }
            "--oversubscribe" | "-oversubscribe" => {}
            "-tag-output" => out.push("--tag-output".into()),
            "-prepend-rank" => out.push("--prepend-rank".into()),
            "-genv" => {
                // MPICH: -genv VAR VALUE; mpcrs-run: -x VAR=VALUE.
                let (var, value) = (words.next(), words.next());
                match (var, value) {
                    (Some(var), Some(value)) => {
                        let mut pair = var;
                        pair.push("=");
                        pair.push(value);
                        out.push("-x".into());
                        out.push(pair);
                    }
                    // Incomplete: left for the parser to refuse by name.
                    (var, value) => {
                        out.push(word);
                        out.extend(var);
                        out.extend(value);
                    }
                }
            }
            "--" => {
                out.push(word);
                out.extend(words);
                break;
            }
            _ if !text.starts_with('-') => {
                // The program: it and its arguments stay as they are.
                out.push(word);
                out.extend(words);
                break;
            }
            _ => {
                let value = takes_value(&text);
                out.push(word);
                if value {
                    out.extend(words.next());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::normalize;

    fn words(line: &str) -> Vec<std::ffi::OsString> {
        line.split_whitespace().map(Into::into).collect()
    }

    #[test]
    fn mpirun_and_mpiexec_spellings_become_mpcrs_runs() {
        assert_eq!(
            normalize(words("mpcrs-run -np 4 -host a,b --oversubscribe ./app")),
            words("mpcrs-run --np 4 --host a,b ./app")
        );
        assert_eq!(
            normalize(words(
                "mpcrs-run -n 2 -genv OMP_NUM_THREADS 1 -machinefile hosts ./app"
            )),
            words("mpcrs-run -n 2 -x OMP_NUM_THREADS=1 --hostfile hosts ./app")
        );
        assert_eq!(
            normalize(words(
                "mpcrs-run -tag-output -prepend-rank -output-filename o ./app -tag-output"
            )),
            words("mpcrs-run --tag-output --prepend-rank --output-filename o ./app -tag-output")
        );
        assert_eq!(
            normalize(words(
                "mpcrs-run -H a:2 -hostfile f -bind-to none -wdir d ./app"
            )),
            words("mpcrs-run --host a:2 --hostfile f --bind-to none --wdir d ./app")
        );
    }

    #[test]
    fn the_programs_arguments_and_option_values_stay_as_they_are() {
        // The program's own -np and -genv are its own.
        assert_eq!(
            normalize(words(
                "mpcrs-run -n 2 ./app -np 3 -genv A B --oversubscribe"
            )),
            words("mpcrs-run -n 2 ./app -np 3 -genv A B --oversubscribe")
        );
        // A value that looks like an mpirun option is a value.
        assert_eq!(
            normalize(words("mpcrs-run --net -np -n 2 ./app")),
            words("mpcrs-run --net -np -n 2 ./app")
        );
        assert_eq!(
            normalize(words("mpcrs-run -n 2 -- -H x")),
            words("mpcrs-run -n 2 -- -H x")
        );
        // Incomplete -genv is left for the parser to name.
        assert_eq!(
            normalize(words("mpcrs-run -genv A")),
            words("mpcrs-run -genv A")
        );
    }
}
