//! What packages ship besides the binary, checked from the binary itself:
//! `yace --version` (commit and build date from build.rs, and its
//! fallbacks without git), `yace completions` read by a real bash (and
//! zsh and fish when installed), `yace man` pages read by groff.
//!
//! The package builds themselves (cargo-deb and `dpkg`, the static musl
//! binary, `cargo install --path`) build in release and take minutes:
//! they are scripts (scripts/deb.sh, scripts/musl.sh, scripts/install.sh).

#[path = "../support/mod.rs"]
mod support;

use std::path::Path;
use std::process::Command;
use support::{temp_path, yace};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

fn has(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn version_names_the_commit_and_the_build_date() {
    for flag in ["--version", "-V"] {
        let out = yace().arg(flag).output().unwrap();
        assert!(out.status.success());
        let v = text(&out.stdout);
        // yace 0.1.0 (0123456789ab, built 2026-11-27)
        let rest = v
            .trim()
            .strip_prefix(&format!("yace {} (", env!("CARGO_PKG_VERSION")))
            .unwrap_or_else(|| panic!("{v}"));
        let (commit, date) = rest
            .strip_suffix(')')
            .and_then(|r| r.split_once(", built "))
            .unwrap_or_else(|| panic!("{v}"));
        assert!(is_date(date), "{v}");
        let git = Command::new("git")
            .args(["rev-parse", "--is-inside-work-tree"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output();
        if git.is_ok_and(|o| o.status.success()) {
            assert!(
                commit.len() == 12 && commit.bytes().all(|c| c.is_ascii_hexdigit()),
                "{v}"
            );
            // A commit of this repository (HEAD may have moved since the build).
            let known = Command::new("git")
                .args(["cat-file", "-e", &format!("{commit}^{{commit}}")])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .unwrap();
            assert!(known.success(), "{commit} is no commit here");
        } else {
            assert_eq!(commit, "unknown", "{v}");
        }
    }
}

/// build.rs, compiled on its own and run as cargo would: in a tarball
/// (no .git) or without git installed it says `unknown` and never fails;
/// SOURCE_DATE_EPOCH and a packager's YACE_COMMIT/YACE_BUILD_DATE win.
#[test]
fn the_build_script_falls_back_without_git() {
    let dir = temp_path("build-script");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("build-script");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let out = Command::new(rustc)
        .args(["--edition", "2021", "-o"])
        .arg(&exe)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("build.rs"))
        .output()
        .expect("rustc");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tarball = dir.join("tarball"); // a folder that is no git checkout
    std::fs::create_dir_all(&tarball).unwrap();
    let run = |path: &str, env: &[(&str, &str)]| -> String {
        let mut c = Command::new(&exe);
        c.current_dir(&tarball)
            .env_clear()
            .env("PATH", path)
            .env("GIT_CEILING_DIRECTORIES", &dir);
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let line = |out: &str, key: &str| -> String {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("cargo:rustc-env={key}=")))
            .unwrap_or_else(|| panic!("no {key} in {out}"))
            .to_owned()
    };
    // No git on PATH, and git in a folder that is no checkout.
    for path in ["/nonexistent", "/usr/bin:/bin"] {
        let out = run(path, &[]);
        assert_eq!(line(&out, "YACE_COMMIT"), "unknown", "{path}: {out}");
        assert!(is_date(&line(&out, "YACE_BUILD_DATE")), "{out}");
        assert!(!out.contains("rerun-if-changed=/"), "{out}");
    }
    let out = run("/nonexistent", &[("SOURCE_DATE_EPOCH", "951827696")]);
    assert_eq!(line(&out, "YACE_BUILD_DATE"), "2000-02-29");
    let out = run(
        "/usr/bin:/bin",
        &[
            ("YACE_COMMIT", "debian-1"),
            ("YACE_BUILD_DATE", "2026-01-02"),
        ],
    );
    assert_eq!(line(&out, "YACE_COMMIT"), "debian-1");
    assert_eq!(line(&out, "YACE_BUILD_DATE"), "2026-01-02");
}

/// bash completes subcommands, flags and flag values from the script.
#[test]
fn bash_completes_from_the_generated_script() {
    let out = yace().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    let script = temp_path("yace.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    let complete = |words: &[&str]| -> String {
        let cword = words.len() - 1;
        let prev = if cword > 0 { words[cword - 1] } else { "" };
        let array: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        let program = format!(
            "source '{}'; COMP_WORDS=({}); COMP_CWORD={cword}; _yace yace '{}' '{prev}'; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display(),
            array.join(" "),
            words[cword]
        );
        let out = Command::new("bash")
            .arg("-c")
            .arg(program)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    assert_eq!(complete(&["yace", "imp"]).trim(), "import");
    assert!(complete(&["yace", "import", ""]).contains("access-log"));
    assert_eq!(
        complete(&["yace", "import", "access-log", "--rep"]).trim(),
        "--replay"
    );
    assert_eq!(
        complete(&["yace", "import", "access-log", "--replay", ""])
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["mix", "timed"]
    );
    assert!(complete(&["yace", "completions", ""]).contains("fish"));
}

/// zsh and fish read their scripts (when they are installed here), and
/// the scripts name the same commands and flags.
#[test]
fn zsh_and_fish_scripts() {
    for (shell, check) in [("zsh", ["-n"]), ("fish", ["--no-execute"])] {
        let out = yace().args(["completions", shell]).output().unwrap();
        assert!(out.status.success());
        let s = text(&out.stdout);
        for word in ["access-log", "replay", "find-max", "completions"] {
            assert!(s.contains(word), "{shell}: no {word}");
        }
        if has(shell) {
            let path = temp_path(&format!("yace.{shell}"));
            std::fs::write(&path, &s).unwrap();
            let r = Command::new(shell).args(check).arg(&path).output().unwrap();
            assert!(r.status.success(), "{shell}: {}", text(&r.stderr));
        } else {
            eprintln!("{shell} is not installed: its script's syntax is not checked");
        }
    }
    let out = yace().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `yace man` writes yace(1) to standard output; `--out` one page per
/// command, each read by groff without a warning.
#[test]
fn man_pages_for_every_command() {
    let out = yace().arg("man").output().unwrap();
    assert!(out.status.success());
    let top = text(&out.stdout);
    assert!(top.contains(".TH yace 1"), "{top}");
    assert!(top.contains(env!("CARGO_PKG_VERSION")));

    let dir = temp_path("man");
    let _ = std::fs::remove_dir_all(&dir);
    let out = yace().args(["man", "--out"]).arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for want in [
        "yace.1",
        "yace-run.1",
        "yace-ab.1",
        "yace-import-access-log.1",
        "yace-import-har.1",
        "yace-completions.1",
        "yace-man.1",
    ] {
        assert!(pages.iter().any(|p| p == want), "no {want} in {pages:?}");
    }
    assert!(text(&out.stderr).contains(&format!("{} pages", pages.len())));
    let page = std::fs::read_to_string(dir.join("yace-import-access-log.1")).unwrap();
    assert!(page.contains("\\-\\-replay"), "{page}");
    if has("groff") {
        for p in &pages {
            // -k: the pages are UTF-8 (压测, ×), as man reads them.
            let r = Command::new("groff")
                .args(["-k", "-man", "-Tutf8", "-ww", "-z"])
                .arg(dir.join(p))
                .output()
                .unwrap();
            assert!(
                r.status.success() && r.stderr.is_empty(),
                "{p}: {}",
                text(&r.stderr)
            );
        }
    }
}
