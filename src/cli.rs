//! The subcommands: each module holds its clap arguments and a `run` that calls the library
//! and prints. Binary-only (not part of the library).

pub mod run;

use std::fmt;

/// An error to print to the user, with the exit code to return.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    /// 1: the work failed; 2: bad usage or bad input.
    pub code: u8,
}

impl CliError {
    pub fn input(message: impl fmt::Display) -> Self {
        Self {
            message: message.to_string(),
            code: 2,
        }
    }

    pub fn failed(message: impl fmt::Display) -> Self {
        Self {
            message: message.to_string(),
            code: 1,
        }
    }

    pub fn exit_code(&self) -> u8 {
        self.code
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
