//! How a command ends: the exit codes, and the error that carries one.

/// Exit codes, documented in `--help` and the README.
pub mod exit {
    pub const OK: u8 = 0;
    /// The run could not be done: unreachable target, I/O failure.
    pub const RUNTIME: u8 = 1;
    /// Bad input: flags, files, URL.
    pub const USAGE: u8 = 2;
    /// The run completed but breached a threshold.
    pub const THRESHOLD: u8 = 3;
    /// An output file could not be written because the disk is full.
    pub const DISK_FULL: u8 = 4;
    pub const SIGINT: u8 = 130;
    pub const SIGTERM: u8 = 143;
}

/// An error that ends the command, with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            code: exit::USAGE,
            message: message.into(),
        }
    }
    pub fn runtime(message: impl Into<String>) -> Self {
        Failure {
            code: exit::RUNTIME,
            message: message.into(),
        }
    }
}
