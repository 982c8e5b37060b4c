//! Names of checkpoints and of their objects. A checkpoint's name is part of
//! a file name, so it is limited to letters, digits, `.`, `_` and `-`; an
//! object's name is any text without NUL. Both are at most [`MAX_NAME`] bytes.

/// The longest name, in bytes.
pub const MAX_NAME: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("the name is empty")]
    Empty,
    #[error("the name is {0} bytes long; the limit is {MAX_NAME}")]
    TooLong(usize),
    #[error("a checkpoint's name has only letters, digits, '.', '_' and '-', and does not start with '.' ({0:?})")]
    Character(String),
}

/// Checks the name of a checkpoint.
pub fn checkpoint(name: &str) -> Result<(), NameError> {
    object(name)?;
    let fine = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.starts_with('.') || !name.chars().all(fine) {
        return Err(NameError::Character(name.to_string()));
    }
    Ok(())
}

/// Checks the name of an index or an array.
pub fn object(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.len() > MAX_NAME {
        return Err(NameError::TooLong(name.len()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_names_are_file_names() {
        assert!(checkpoint("mm-1.v2_x").is_ok());
        assert_eq!(checkpoint(""), Err(NameError::Empty));
        assert!(matches!(checkpoint("../x"), Err(NameError::Character(_))));
        assert!(matches!(
            checkpoint(".hidden"),
            Err(NameError::Character(_))
        ));
        assert!(matches!(checkpoint("a/b"), Err(NameError::Character(_))));
        assert_eq!(checkpoint(&"a".repeat(65)), Err(NameError::TooLong(65)));
        assert!(checkpoint(&"a".repeat(64)).is_ok());
    }

    #[test]
    fn object_names_are_any_text() {
        assert!(object("tile row 3/β").is_ok());
        assert_eq!(object(""), Err(NameError::Empty));
    }
}
