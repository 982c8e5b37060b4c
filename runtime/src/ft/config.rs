//! FTI's configuration file (`config.fti`, an INI file read case-insensitively):
//! the keys mpcrs uses, those whose work mpcrs does its own way (accepted
//! silently), and the rest, named in one warning. A malformed line is refused
//! with its file and line.

use std::path::{Path, PathBuf};

/// What the application's checkpoints use of the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `head`: 1 makes the levels above L1 in helper tasks while the ranks go
    /// on (FTI's dedicated process per node); 0 makes them inline.
    pub head: bool,
    /// `ckpt_dir` (node-local storage, L1-L3) and `glbl_dir` (L4, and the
    /// record of every checkpoint).
    pub local_dir: PathBuf,
    pub global_dir: PathBuf,
    /// `ckpt_l1`..`ckpt_l4`: minutes between FTI_Snapshot's checkpoints at
    /// each level (0: never).
    pub snapshot_minutes: [u64; 4],
    /// `ckpt_mem` (mpcrs): minutes between FTI_Snapshot's checkpoints at
    /// mpcrs's memory level (0: never), taken when no level in files is due.
    pub snapshot_memory_minutes: u64,
    /// `inline_l2`..`inline_l4`: with a head, 1 makes that level inline all
    /// the same.
    pub inline: [bool; 3],
    /// `keep_last_ckpt`: FTI_Finalize keeps the last checkpoint (flushed to
    /// L4) instead of removing them all.
    pub keep_last: bool,
    /// `group_size`: processes per Reed-Solomon group (L3).
    pub group_size: usize,
    /// `verbosity`: 1 debug, 2 information, 3 warnings, 4 silent.
    pub verbosity: u8,
    /// Keys that were set but that mpcrs does not implement or does not know,
    /// as written (`section:key`).
    pub ignored: Vec<String>,
}

/// A refused configuration: the file, the line, what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{path}:{line}: {what}")]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: usize,
    pub what: String,
}

/// Keys whose work mpcrs does its own way: the node layout (`node_size`,
/// `local_test`: the job's layout is mpcrs-run's), metadata (`meta_dir`: the
/// record of a checkpoint is kept in `glbl_dir`), the execution's identity and
/// failure flag (mpcrs does not rewrite the file; a restarted program finds
/// the last checkpoint in `glbl_dir`), message tags (mpcrs's levels talk in a
/// context of their own), Snapshot's synchronization (decided at every call),
/// and transfer tuning.
const ACCEPTED: &[&str] = &[
    "basic:node_size",
    "basic:meta_dir",
    "basic:max_sync_intv",
    "restart:failure",
    "restart:exec_id",
    "advanced:local_test",
    "advanced:block_size",
    "advanced:transfer_size",
    "advanced:general_tag",
    "advanced:ckpt_tag",
    "advanced:stage_tag",
    "advanced:final_tag",
    "advanced:mpi_tag",
];

/// Keys of features mpcrs does not implement: accepted at their default
/// value (off), named in the warning otherwise.
const OFF_BY_DEFAULT: &[(&str, &str)] = &[
    ("basic:enable_staging", "0"),
    ("basic:enable_dcp", "0"),
    ("basic:dcp_mode", "0"),
    ("basic:dcp_block_size", ""),
    ("basic:dcp_stack_size", ""),
    ("basic:keep_l4_ckpt", "0"),
    ("basic:h5_single_file_enable", "0"),
    ("basic:h5_single_file_dir", ""),
    ("basic:ckpt_l4_h5_single", "0"),
    ("injection:rank", ""),
    ("injection:number", "0"),
    ("injection:position", ""),
    ("injection:frequency", ""),
];

impl Config {
    /// Reads the configuration at `path`; relative directories are taken
    /// from the working directory, as FTI takes them.
    pub fn read(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            path: path.to_path_buf(),
            line: 0,
            what: format!("cannot read it: {e}"),
        })?;
        Config::parse(path, &text)
    }

    /// Parses `text`, the content of the file at `path` (for messages).
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let err = |line: usize, what: String| ConfigError {
            path: path.to_path_buf(),
            line,
            what,
        };
        let mut c = Config {
            head: false,
            local_dir: PathBuf::new(),
            global_dir: PathBuf::new(),
            snapshot_minutes: [0; 4],
            snapshot_memory_minutes: 0,
            inline: [true; 3],
            keep_last: false,
            group_size: 4,
            verbosity: 2,
            ignored: Vec::new(),
        };
        let (mut local, mut global) = (None, None);
        let mut section = String::new();
        for (i, raw) in text.lines().enumerate() {
            let n = i + 1;
            // iniparser: ';' and '#' start comments at the start of a line.
            let line = raw.trim();
            if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
                continue;
            }
            if let Some(rest) = line.strip_prefix('[') {
                let name = rest
                    .strip_suffix(']')
                    .ok_or_else(|| err(n, format!("section header without ']': {line:?}")))?;
                section = name.trim().to_ascii_lowercase();
                continue;
            }
            let (key, value) = line
                .split_once('=')
                .ok_or_else(|| err(n, format!("neither a [section] nor key = value: {line:?}")))?;
            let key = key.trim().to_ascii_lowercase();
            let value = strip_comment(value.trim());
            if section.is_empty() {
                return Err(err(n, format!("key {key:?} before any [section]")));
            }
            let full = format!("{section}:{key}");
            let flag = |v: &str| match v {
                "0" => Ok(false),
                "1" => Ok(true),
                _ => Err(err(n, format!("{key} = {v:?}: expected 0 or 1"))),
            };
            let number = |v: &str| {
                v.parse::<u64>()
                    .map_err(|_| err(n, format!("{key} = {v:?}: expected a non-negative integer")))
            };
            match full.as_str() {
                "basic:head" => c.head = flag(value)?,
                "basic:ckpt_dir" => local = Some(PathBuf::from(value)),
                "basic:glbl_dir" => global = Some(PathBuf::from(value)),
                "basic:ckpt_l1" | "basic:ckpt_l2" | "basic:ckpt_l3" | "basic:ckpt_l4" => {
                    let l = (key.as_bytes()[6] - b'1') as usize;
                    c.snapshot_minutes[l] = number(value)?;
                }
                "basic:ckpt_mem" => c.snapshot_memory_minutes = number(value)?,
                "basic:inline_l2" | "basic:inline_l3" | "basic:inline_l4" => {
                    let l = (key.as_bytes()[8] - b'2') as usize;
                    c.inline[l] = flag(value)?;
                }
                "basic:keep_last_ckpt" => c.keep_last = flag(value)?,
                "basic:group_size" => {
                    let g = number(value)?;
                    if g < 2 {
                        return Err(err(
                            n,
                            format!("group_size = {g}: a group has 2 processes or more"),
                        ));
                    }
                    c.group_size = g as usize;
                }
                "basic:verbosity" => {
                    c.verbosity = match number(value)? {
                        v @ 1..=4 => v as u8,
                        v => return Err(err(n, format!("verbosity = {v}: expected 1 to 4"))),
                    }
                }
                "basic:ckpt_io" => {
                    if value != "1" {
                        return Err(err(
                            n,
                            format!("ckpt_io = {value:?}: only 1 (POSIX) is implemented by mpcrs"),
                        ));
                    }
                }
                k if ACCEPTED.contains(&k) => {}
                k => match OFF_BY_DEFAULT.iter().find(|(name, _)| *name == k) {
                    Some((_, off)) if off.is_empty() || value == *off => {}
                    _ => c.ignored.push(format!("[{section}] {key} = {value}")),
                },
            }
        }
        c.local_dir = local.ok_or_else(|| err(0, "no ckpt_dir in [basic]".into()))?;
        c.global_dir = global.ok_or_else(|| err(0, "no glbl_dir in [basic]".into()))?;
        Ok(c)
    }

    /// Whether level `level` (2 to 4) is made inline: without a head, or when
    /// the configuration says so for it.
    pub fn inline_level(&self, level: u8) -> bool {
        !self.head || self.inline[(level - 2) as usize]
    }
}

/// A value without a trailing comment (`value ; comment` or `value # comment`).
fn strip_comment(v: &str) -> &str {
    let end = v.find([';', '#']).unwrap_or(v.len());
    v[..end].trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(Path::new("config.fti"), text)
    }

    #[test]
    fn reads_the_keys_of_a_heat_style_configuration() {
        let c = parse(
            "[Basic]\nHead = 1\nNode_size = 2\nCkpt_dir = ./Local\nGlbl_dir = ./Global\n\
             Meta_dir = ./Meta\nCkpt_L1 = 3\nCkpt_L4 = 11 ; minutes\nCkpt_mem = 1\nInline_L2 = 0\n\
             Keep_last_ckpt = 1\nGroup_size = 4\nVerbosity = 3\nckpt_io = 1\n\
             [Restart]\nFailure = 0\nExec_ID = X\n[Advanced]\nLocal_test = 1\n",
        )
        .unwrap();
        assert!(c.head);
        assert_eq!(c.local_dir, PathBuf::from("./Local"));
        assert_eq!(c.global_dir, PathBuf::from("./Global"));
        assert_eq!(c.snapshot_minutes, [3, 0, 0, 11]);
        assert_eq!(c.snapshot_memory_minutes, 1);
        assert!(!c.inline_level(2));
        assert!(c.inline_level(3));
        assert!(c.keep_last);
        assert_eq!(c.verbosity, 3);
        assert!(c.ignored.is_empty(), "{:?}", c.ignored);
    }

    #[test]
    fn names_unknown_and_unimplemented_keys() {
        let c = parse(
            "[basic]\nckpt_dir = a\nglbl_dir = b\nenable_dcp = 1\nenable_staging = 0\nfancy = 2\n",
        )
        .unwrap();
        assert_eq!(c.ignored, ["[basic] enable_dcp = 1", "[basic] fancy = 2"]);
    }

    #[test]
    fn refuses_malformed_lines_with_file_and_line() {
        let e = parse("[basic]\nckpt_dir = a\nthis is not a key\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.to_string().starts_with("config.fti:3: "), "{e}");
        let e = parse("[basic]\nhead = 2\n").unwrap_err();
        assert!(e.to_string().contains("head = \"2\""), "{e}");
        let e = parse("[basic]\nckpt_dir = a\nglbl_dir = b\nckpt_io = 2\n").unwrap_err();
        assert!(e.to_string().contains("POSIX"), "{e}");
        let e = parse("[basic]\nckpt_dir = a\n").unwrap_err();
        assert!(e.to_string().contains("glbl_dir"), "{e}");
    }
}
