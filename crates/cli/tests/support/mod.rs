//! Helpers shared by the integration-test binaries (`yace`, `models`,
//! `stacks`), included with `#[path = "../support/mod.rs"] mod support;`.
// Each binary uses a subset.
#![allow(dead_code)]

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Mutex;
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

/// This test's own scratch folder, `TMP/yace-tests-PID/N-NAME` (N a
/// number per test, NAME the start of the test's name: short, since unix
/// sockets live here too and their paths are limited to 107 bytes),
/// emptied the first time the test asks (a folder left by an earlier
/// process with the same PID is not read as this run's). libtest runs
/// each test on a thread named after it, so two tests of one binary never
/// share a file, whatever they call their files (`concurrency.toml` was
/// once written by two lab tests at once). A thread that is not a test's
/// (one a test spawned) gets a new folder on each call.
pub fn test_dir() -> PathBuf {
    static MADE: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());
    let test = match std::thread::current().name() {
        Some(name) if name != "main" => name.to_owned(),
        _ => String::new(),
    };
    let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
    let seq = made.len();
    let (n, first) = if test.is_empty() {
        made.insert(format!("thread {seq}"), seq);
        (seq, true)
    } else {
        match made.get(&test) {
            Some(&n) => (n, false),
            None => {
                made.insert(test.clone(), seq);
                (seq, true)
            }
        }
    };
    let short: String = test
        .rsplit("::")
        .next()
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .take(24)
        .collect();
    let dir = std::env::temp_dir()
        .join(format!("yace-tests-{}", std::process::id()))
        .join(format!("{n}-{short}"));
    if first {
        let _ = std::fs::remove_dir_all(&dir);
    }
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A file in this test's own scratch folder ([`test_dir`]).
pub fn temp_path(name: &str) -> PathBuf {
    test_dir().join(name)
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

/// Runs `yace serve --port 0` with `args` added, and reads the
/// port it bound from its announcement on standard output (`yace serve:
/// listening on http://127.0.0.1:PORT/`, after the certificate's line with
/// `--tls`). Standard error is dropped; a server that fails to start is a
/// panic with its exit status.
pub fn serve_on_port_zero(args: &[&str]) -> (std::process::Child, u16) {
    use std::io::BufRead;
    let mut child = yace()
        .args(["serve", "--port", "0"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn yace serve");
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let port = lines.find_map(|line| {
        let line = line.ok()?;
        let rest = line.strip_prefix("yace serve: listening on ")?;
        let addr = rest.split_once("://")?.1.trim_end_matches('/');
        addr.parse::<std::net::SocketAddr>().ok().map(|a| a.port())
    });
    match port {
        Some(port) => (child, port),
        None => {
            let status = child.wait();
            panic!("yace serve announced no port ({status:?})");
        }
    }
}

/// `yace serve` in a process of its own, on a loopback port it chose; stopped
/// (by its PID) when dropped. For tests that watch the server as a process
/// (`--monitor pid:`), or that must not share a pool with other tests.
#[derive(Debug)]
pub struct ServeProcess {
    child: std::process::Child,
    pub port: u16,
}

impl ServeProcess {
    /// Starts it with `args` added (`["--threads", "1"]`) on `--port 0`:
    /// the port is the one it announces it bound, never one picked before
    /// (another test could take that first).
    pub fn start(args: &[&str]) -> ServeProcess {
        let (child, port) = serve_on_port_zero(args);
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

/// A loopback port where nothing listens, for as long as this lives: a TCP
/// socket bound to 127.0.0.1:0 and never put to listen(2), so connecting
/// there is refused, and no other test or process can bind the port
/// meanwhile (a port bound and closed again can be taken by another test
/// before this one connects to it).
#[derive(Debug)]
pub struct ClosedPort {
    fd: std::os::fd::OwnedFd,
    pub port: u16,
}

impl ClosedPort {
    pub fn new() -> ClosedPort {
        use std::os::fd::{AsRawFd, FromRawFd};
        // SAFETY: a new socket, owned by the OwnedFd from here on.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        let mut addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
            },
            sin_zero: [0; 8],
        };
        let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        // SAFETY: addr and len describe a sockaddr_in of our own.
        let bound = unsafe { libc::bind(fd.as_raw_fd(), std::ptr::addr_of!(addr).cast(), len) };
        assert_eq!(bound, 0, "bind: {}", std::io::Error::last_os_error());
        // SAFETY: as above; the kernel writes the bound address back.
        let named = unsafe {
            libc::getsockname(
                fd.as_raw_fd(),
                std::ptr::addr_of_mut!(addr).cast(),
                &mut len,
            )
        };
        assert_eq!(named, 0, "getsockname: {}", std::io::Error::last_os_error());
        ClosedPort {
            fd,
            port: u16::from_be(addr.sin_port),
        }
    }

    /// `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        let _ = &self.fd;
        format!("http://127.0.0.1:{}/", self.port)
    }
}
