//! Integration tests: the real `yace` binary against the real embedded
//! target on loopback, asserting on what the server saw and what yace
//! reported. One test binary, topic modules (STYLE.md §12).

#[path = "../support/mod.rs"]
mod support;
pub use support::{settled, u, yace};

mod ab;
mod doctor;
mod errors;
mod run;
mod schema;
mod signals;

use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;

pub fn server() -> target::Server {
    target::Server::start(target::Config {
        threads: 2,
        ..Default::default()
    })
    .expect("start the embedded target")
}

pub fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("yace-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs yace with `args` plus `--json FILE -q`; returns the output and the parsed result.
pub fn run_json(name: &str, args: &[&str]) -> (Output, Value) {
    let path = temp_path(&format!("{name}.json"));
    let out = yace()
        .arg("run")
        .args(args)
        .arg("--json")
        .arg(&path)
        .arg("-q")
        .output()
        .expect("run yace");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "no JSON result at {} ({e}); stderr: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let v: Value = serde_json::from_str(&text).expect("valid JSON");
    (out, v)
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
