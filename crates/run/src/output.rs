//! Output files, never destroyed: each is written to a temporary file in
//! the same directory and renamed into place when complete, so a second
//! Ctrl-C, a kill or a full disk leaves either the previous file or a
//! complete new one, never a truncated one. The temporary file is created
//! before the run, so a bad path fails before any load is sent. A path
//! that is not a regular file (`/dev/stdout`, a FIFO, a device) is written
//! in place: renaming over it would replace the device with a file.

use crate::Error;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A file for a result: a temporary file now, renamed to its path by
/// [`Output::commit`] (or [`Output::write_with`]). Dropped without a commit,
/// the temporary file is removed and the path is left as it was.
#[derive(Debug)]
pub struct Output {
    file: Option<File>,
    /// The temporary file and the regular file it replaces; `None` when
    /// the path is written in place.
    tmp: Option<(PathBuf, PathBuf)>,
    path: PathBuf,
}

impl Output {
    /// Creates the temporary file beside `path` (`.NAME.PID.yace-tmp`);
    /// `path` itself is not touched until the commit. A symbolic link is
    /// followed: the file it points to is replaced, the link stays.
    pub fn create(path: &Path) -> std::io::Result<Output> {
        let target = match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::IsADirectory,
                    "it is a directory",
                ))
            }
            Ok(m) if !m.is_file() => {
                // A device or a pipe: written in place, as it always was.
                let file = OpenOptions::new().write(true).open(path)?;
                return Ok(Output {
                    file: Some(file),
                    tmp: None,
                    path: path.to_owned(),
                });
            }
            Ok(_) => std::fs::canonicalize(path)?,
            Err(_) => path.to_owned(),
        };
        let name = target.file_name().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "it names no file")
        })?;
        let tmp = target.with_file_name(format!(
            ".{}.{}.yace-tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        Ok(Output {
            file: Some(file),
            tmp: Some((tmp, target)),
            path: path.to_owned(),
        })
    }

    /// Where it lands.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A second handle on the temporary file, for an output streamed while
    /// the run goes on (`-g`); [`Output::commit`] puts it in place after.
    pub fn stream(&self) -> std::io::Result<File> {
        self.file().try_clone()
    }

    fn file(&self) -> &File {
        self.file.as_ref().expect("an output is committed once")
    }

    /// Syncs the temporary file and renames it into place.
    pub fn commit(mut self) -> std::io::Result<()> {
        let file = self.file.take().expect("an output is committed once");
        let Some((tmp, target)) = self.tmp.take() else {
            // Written in place; a pipe or a device may not sync.
            return file.sync_all().or(Ok(()));
        };
        file.sync_all()?;
        drop(file);
        if let Err(e) = std::fs::rename(&tmp, &target) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        // The rename itself is durable once the directory is synced.
        if let Some(dir) = target.parent() {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }

    /// The result as JSON (the yace.result.v1 contract), put in place.
    pub fn write_json(self, result: &stats::RunResult) -> Result<(), Error> {
        self.write_with(|w| report::json::write(result, w))
    }

    /// Writes through `render` into the temporary file, then puts it in
    /// place; on any error the path keeps what it had.
    pub fn write_with(
        self,
        render: impl FnOnce(&mut BufWriter<&File>) -> std::io::Result<()>,
    ) -> Result<(), Error> {
        let shown = self.path.display().to_string();
        let written = {
            let mut w = BufWriter::new(self.file());
            render(&mut w).and_then(|()| w.flush())
        };
        written
            .and_then(|()| self.commit())
            .map_err(|e| Error::write(shown, e))
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let (Some(_), Some((tmp, _))) = (self.file.take(), &self.tmp) {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("yace-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_previous_file_stays_until_the_new_one_is_complete() {
        let d = dir("commit");
        let path = d.join("result.json");
        std::fs::write(&path, "previous").unwrap();
        let out = Output::create(&path).unwrap();
        // While the run goes on, the previous result is still there, whole.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "previous");
        out.write_with(|w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
    }

    #[test]
    fn a_failed_or_abandoned_write_leaves_the_previous_file() {
        let d = dir("fail");
        let path = d.join("result.json");
        std::fs::write(&path, "previous").unwrap();
        let out = Output::create(&path).unwrap();
        let e = out
            .write_with(|w| {
                w.write_all(b"half")?;
                Err(std::io::Error::other("disk gone"))
            })
            .unwrap_err();
        assert!(e.to_string().contains("disk gone"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "previous");
        drop(Output::create(&path).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "previous");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
    }

    #[test]
    fn a_streamed_output_lands_on_commit() {
        let d = dir("stream");
        let path = d.join("g.tsv");
        let out = Output::create(&path).unwrap();
        let mut s = out.stream().unwrap();
        s.write_all(b"line 1\n").unwrap();
        assert!(!path.exists());
        out.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "line 1\n");
    }

    #[test]
    fn a_device_is_written_in_place_never_replaced() {
        // /dev/null stays the device (a rename over it would make it a file).
        let out = Output::create(Path::new("/dev/null")).unwrap();
        out.write_with(|w| w.write_all(b"x")).unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    }

    #[test]
    fn a_symlink_keeps_pointing_at_the_new_file() {
        let d = dir("link");
        let real = d.join("real.json");
        std::fs::write(&real, "previous").unwrap();
        let link = d.join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        Output::create(&link)
            .unwrap()
            .write_with(|w| w.write_all(b"new"))
            .unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn a_directory_is_refused_at_once() {
        let d = dir("isdir");
        assert!(Output::create(&d).is_err());
    }
}
