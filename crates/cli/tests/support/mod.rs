//! Helpers shared by the integration-test binaries (`yace`, `models`,
//! `stacks`), included with `#[path = "../support/mod.rs"] mod support;`.
// Each binary uses a subset.
#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The `yace` binary under test.
pub fn yace() -> Command {
    // English whatever the tester's locale: the tests read the reports.
    let mut c = Command::new(env!("CARGO_BIN_EXE_yace"));
    c.env("YACE_LANG", "en");
    c
}

/// The server's counters once they stop moving (connection tallies are
/// flushed as connections end).
pub fn settled(server: &serve::Server) -> serve::Stats {
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut last = server.stats();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = server.stats();
        if now == last || Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

/// A whole number at a dotted path of a JSON result, e.g. `summary.responses`.
pub fn u(v: &Value, path: &str) -> u64 {
    let cur = path.split('.').fold(v, |v, k| &v[k]);
    cur.as_u64()
        .unwrap_or_else(|| panic!("{path} is not a number: {cur}"))
}

/// A file in this test process's own temporary folder.
pub fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("yace-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs `yace run ARGS -q --json FILE`; returns the output and the parsed
/// result. `name` keeps concurrent runs' files apart.
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
    (out, serde_json::from_str(&text).expect("valid JSON"))
}

/// `yace serve` in a process of its own, on a free loopback port; stopped
/// (by its PID) when dropped. For tests that watch the server as a process
/// (`--monitor pid:`), or that must not share a pool with other tests.
#[derive(Debug)]
pub struct ServeProcess {
    child: std::process::Child,
    pub port: u16,
}

impl ServeProcess {
    /// Starts it with `args` added (`["--threads", "1"]`) and waits until
    /// it listens.
    pub fn start(args: &[&str]) -> ServeProcess {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(env!("CARGO_BIN_EXE_yace"))
            .args(["serve", "-p", &port.to_string()])
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "yace serve did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        ServeProcess { child, port }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
