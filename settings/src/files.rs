//! Reading the small text files users name on command lines (the rails
//! configuration, checkpoint configurations, host files): a path that is not
//! a regular file (/dev/zero, a FIFO, a directory) or is larger than any such
//! file could be is refused before it is read, instead of being read until
//! memory runs out.

use std::path::Path;

/// The largest configuration file read.
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// The text of configuration file `path`; the error says what is wrong
/// (without the path, which callers name in their own way).
pub fn read_config_text(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(format!(
            "{} bytes, more than a configuration file's {MAX_CONFIG_BYTES}",
            meta.len()
        ));
    }
    std::fs::read_to_string(path).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_directories_and_huge_files_are_refused_before_reading() {
        assert_eq!(
            read_config_text(Path::new("/dev/zero")).unwrap_err(),
            "not a regular file"
        );
        assert_eq!(
            read_config_text(Path::new("/tmp")).unwrap_err(),
            "not a regular file"
        );
        let big = std::env::temp_dir().join(format!("mpcrs-big-{}", std::process::id()));
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_CONFIG_BYTES + 1).unwrap();
        assert!(read_config_text(&big).unwrap_err().contains("more than"));
        std::fs::write(&big, "a = 1\n").unwrap();
        assert_eq!(read_config_text(&big).unwrap(), "a = 1\n");
        std::fs::remove_file(&big).unwrap();
    }
}
