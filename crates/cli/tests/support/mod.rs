//! Helpers shared by the integration-test binaries (cli, hostile, models,
//! tls), included with `#[path = "../support/mod.rs"] mod support;`.
// Each binary uses a subset.
#![allow(dead_code)]

use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

/// The `yace` binary under test.
pub fn yace() -> Command {
    Command::new(env!("CARGO_BIN_EXE_yace"))
}

/// The server's counters once they stop moving (connection tallies are
/// flushed as connections end).
pub fn settled(server: &target::Server) -> target::Stats {
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
