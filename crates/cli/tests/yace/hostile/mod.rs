//! Hostile servers: the real `yace` binary against the embedded target's
//! deliberate misbehaviours (`/bad/...`, `?split=N`, `serve::Hostile`),
//! one test per misbehaviour. Each checks the outcome class yace reports,
//! that every request is counted once (yace's `summary.requests` against
//! what the server saw), that the run ends on time and with exit status 0:
//! never a crash or a hang.
//!
//! Regressions by name: a close (FIN) that arrives with the last response
//! bytes must be seen at once (eof-body, cl-short, chunk-trunc,
//! close-every), and a server that accepts then resets is run, not
//! reported unreachable.

pub use crate::support::settled;

mod client;
mod connection;
mod framing;
mod limits;
mod split;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Longest any one yace run may take before the test calls it a hang.
const HANG: Duration = Duration::from_secs(30);

pub fn yace() -> Command {
    // English whatever the tester's locale: the tests read the reports.
    let mut c = Command::new(env!("CARGO_BIN_EXE_yace"));
    c.env("YACE_LANG", "en");
    c
}

pub fn server() -> serve::Server {
    hostile(serve::Hostile::default())
}

pub fn hostile(hostile: serve::Hostile) -> serve::Server {
    let config = serve::Config {
        threads: 1,
        hostile,
        ..Default::default()
    };
    serve::Server::start(config).expect("start the embedded target")
}

/// `server`'s URL for `path` (which starts with `/`).
pub fn url(server: &serve::Server, path: &str) -> String {
    format!("{}{}", server.url(), &path[1..])
}

fn temp_path(name: &str) -> PathBuf {
    crate::support::temp_path(name)
}

/// Writes `bytes` to a file of this test process's; returns its path.
pub fn write_temp(name: &str, bytes: &[u8]) -> String {
    let path = temp_path(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_string_lossy().into_owned()
}

/// Waits for `cmd` like `Command::output`, but kills it and fails the test
/// if it runs past `HANG`. Returns the output and the wall time.
pub fn output_within(mut cmd: Command, what: &str) -> (Output, Duration) {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn yace");
    // Drained on threads so a chatty child cannot block on a full pipe.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).ok();
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut v).ok();
        v
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > HANG {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: yace still running after {HANG:?}: a hang");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let wall = start.elapsed();
    let output = Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    };
    (output, wall)
}

/// One finished `yace run`.
#[derive(Debug)]
pub struct Run {
    pub json: Value,
    /// The summary yace printed.
    pub stdout: String,
    pub wall: Duration,
    pub what: String,
}

impl Run {
    /// A number at a dotted path of the JSON result.
    pub fn u(&self, path: &str) -> u64 {
        let mut cur = &self.json;
        for key in path.split('.') {
            cur = &cur[key];
        }
        cur.as_u64()
            .unwrap_or_else(|| panic!("{}: {path} is not a number: {cur}", self.what))
    }

    /// The outcome classes that occurred, with their counts.
    pub fn outcomes(&self) -> BTreeMap<String, u64> {
        self.json["outcomes"]
            .as_object()
            .expect("outcomes")
            .iter()
            .filter_map(|(k, v)| {
                let n = v.as_u64().unwrap();
                (n > 0).then(|| (k.clone(), n))
            })
            .collect()
    }

    /// Asserts the outcome classes are exactly `want` (zeros left out).
    pub fn expect(&self, want: &[(&str, u64)]) {
        let want: BTreeMap<String, u64> = want.iter().map(|(k, n)| (k.to_string(), *n)).collect();
        assert_eq!(self.outcomes(), want, "{}: outcomes", self.what);
    }

    /// Asserts the server counted each of yace's requests exactly once.
    pub fn counted_once(&self, server: &serve::Server) -> serve::Stats {
        let seen = settled(server);
        assert_eq!(
            seen.requests,
            self.u("summary.requests"),
            "{}: requests at the server vs yace's; server saw {seen:?}",
            self.what
        );
        seen
    }

    pub fn ended_within(&self, limit: Duration) {
        assert!(
            self.wall < limit,
            "{}: took {:?}, limit {limit:?}",
            self.what,
            self.wall
        );
    }
}

/// `yace run URL ARGS -t 1 -q --json FILE`, which must end within `HANG`
/// and leave a JSON result: exit 0, or 1 with its reason when every request
/// failed (a run made only of errors measured no server).
pub fn run(url: &str, args: &[&str]) -> Run {
    let what = format!("yace run {url} {}", args.join(" "));
    let name: String = what
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let path = temp_path(&format!("{}.json", &name[name.len().saturating_sub(120)..]));
    let _ = std::fs::remove_file(&path);
    let mut cmd = yace();
    cmd.arg("run")
        .arg(url)
        .args(args)
        .args(["-t", "1", "-q", "--json"])
        .arg(&path);
    let (out, wall) = output_within(cmd, &what);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{what}: no JSON result ({e}); stderr: {stderr}"));
    let json: Value = serde_json::from_str(&text).expect("valid JSON");
    let all_failed = json["summary"]["responses"] == 0 && json["summary"]["errors"] != 0;
    assert_eq!(
        out.status.code(),
        Some(if all_failed { 1 } else { 0 }),
        "{what}: exit status; {stderr}"
    );
    assert_eq!(
        stderr.contains("error: every request failed"),
        all_failed,
        "{what}: {stderr}"
    );
    Run {
        json,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        wall,
        what,
    }
}
