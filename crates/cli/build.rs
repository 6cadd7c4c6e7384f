//! `yace --version`'s commit and build date, as `YACE_COMMIT` and
//! `YACE_BUILD_DATE` for `env!`.
//!
//! The commit is `git rev-parse --short=12 HEAD` when the source is a git
//! checkout and git is installed, else `unknown` (a tarball build never
//! fails for want of git). The date is the build's, in UTC, or
//! `SOURCE_DATE_EPOCH`'s for a reproducible build. A packager may set
//! both: `YACE_COMMIT` and `YACE_BUILD_DATE` in the environment win.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in ["YACE_COMMIT", "YACE_BUILD_DATE", "SOURCE_DATE_EPOCH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let commit = std::env::var("YACE_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(git_commit)
        .unwrap_or_else(|| "unknown".to_owned());
    let date = std::env::var("YACE_BUILD_DATE")
        .ok()
        .filter(|d| !d.trim().is_empty())
        .unwrap_or_else(build_date);
    println!("cargo:rustc-env=YACE_COMMIT={}", commit.trim());
    println!("cargo:rustc-env=YACE_BUILD_DATE={}", date.trim());
}

/// HEAD's commit, and the files that change when it does (so a new commit
/// rebuilds the version, and nothing else does).
fn git_commit() -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        if !out.status.success() {
            return None;
        }
        Some(String::from_utf8(out.stdout).ok()?.trim().to_owned())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let dir = PathBuf::from(dir);
        let mut watch = vec![dir.join("HEAD"), dir.join("packed-refs")];
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch.push(dir.join(branch));
        }
        // A path that does not exist would rerun this script every build.
        for p in watch.iter().filter(|p| Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
    Some(commit)
}

/// `YYYY-MM-DD` (UTC) of `SOURCE_DATE_EPOCH`, else of now.
fn build_date() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64)
        });
    // Civil from days (Howard Hinnant's algorithm).
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}
