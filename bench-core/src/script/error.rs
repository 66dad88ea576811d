//! Where a script goes wrong: a place in its file and what was found there.

use std::fmt;

/// A place in a script file, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct At {
    pub line: usize,
    pub col: usize,
}

/// A construct outside the subset, or a file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    pub file: String,
    pub at: At,
    pub found: String,
    pub allowed: String,
}

impl ScriptError {
    pub fn new(file: &str, at: At, found: String, allowed: &str) -> Self {
        ScriptError {
            file: file.to_string(),
            at,
            found,
            allowed: allowed.to_string(),
        }
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}; allowed: {}",
            self.file, self.at.line, self.at.col, self.found, self.allowed
        )
    }
}

impl std::error::Error for ScriptError {}
