//! The one error type of a run, hyper-style: what kind it is is asked with
//! `is_*`, so callers map kinds (to exit codes, say) without matching on
//! text, and kinds can be added without breaking them.

use crate::Note;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The job itself is wrong: TLS files, an output path.
    Usage,
    /// The run could not be done: unreachable target, I/O failure.
    Runtime,
    /// An output could not be written because the disk is full.
    DiskFull,
}

/// Why a job could not be prepared, run or written out.
#[derive(Debug)]
pub struct Error {
    kind: Kind,
    message: String,
    notes: Vec<Note>,
    io: Option<std::io::Error>,
}

impl Error {
    fn new(kind: Kind, message: String) -> Self {
        Error {
            kind,
            message,
            notes: Vec::new(),
            io: None,
        }
    }

    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Error::new(Kind::Usage, message.into())
    }

    pub(crate) fn runtime(message: impl Into<String>) -> Self {
        Error::new(Kind::Runtime, message.into())
    }

    /// Writing `what` failed; a full disk is its own kind.
    pub(crate) fn write(what: String, e: std::io::Error) -> Self {
        let kind = if e.raw_os_error() == Some(libc::ENOSPC) {
            Kind::DiskFull
        } else {
            Kind::Runtime
        };
        let mut err = Error::new(kind, format!("{what}: cannot write: {e}"));
        err.io = Some(e);
        err
    }

    pub(crate) fn with_notes(mut self, notes: Vec<Note>) -> Self {
        self.notes = notes;
        self
    }

    /// The input is at fault: fix it and try again.
    pub fn is_usage(&self) -> bool {
        self.kind == Kind::Usage
    }

    /// The run could not be done, or an output not written.
    pub fn is_runtime(&self) -> bool {
        self.kind == Kind::Runtime
    }

    /// An output could not be written because the disk is full.
    pub fn is_disk_full(&self) -> bool {
        self.kind == Kind::DiskFull
    }

    /// What [`crate::prepare`] noticed before it failed, to show first.
    pub fn notes(&self) -> &[Note] {
        &self.notes
    }

    /// The I/O error behind a failed write.
    pub fn io(&self) -> Option<&std::io::Error> {
        self.io.as_ref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.io.as_ref().map(|e| e as _)
    }
}
