//! Output files: created before the run, so a bad path fails before any
//! load is sent; written after it, a full disk told apart.

use crate::Error;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A file created for a result, written once the run has ended.
#[derive(Debug)]
pub struct Output {
    file: File,
    path: PathBuf,
}

impl Output {
    /// Creates (truncates) the file now.
    pub fn create(path: &Path) -> std::io::Result<Output> {
        Ok(Output {
            file: File::create(path)?,
            path: path.to_owned(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file itself, for an output written while the run goes on.
    pub fn into_file(self) -> File {
        self.file
    }

    /// The result as JSON (the yace.result.v1 contract), flushed to disk.
    pub fn write_json(self, result: &stats::RunResult) -> Result<(), Error> {
        self.write_with(|w| report::json::write(result, w))
    }

    /// Writes through `render` into a buffered file and syncs it.
    pub fn write_with(
        self,
        render: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
    ) -> Result<(), Error> {
        let mut w = BufWriter::new(self.file);
        render(&mut w)
            .and_then(|()| w.flush())
            .and_then(|()| w.get_ref().sync_all().or(Ok(())))
            .map_err(|e| Error::write(self.path.display().to_string(), e))
    }
}
