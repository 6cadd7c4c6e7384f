//! `yace ab` (the real binary, with ab's flags) against every stack: what
//! its ab-style report and its `--json` result say must be what the
//! servers logged, dynamic pages are not "failed", a shared PHP session
//! serialises, a slow page times out alone, and the figures agree with the
//! real `ab` where they should (and differ where ab is wrong).

use crate::harness::{LogEntry, Server, Stack, StackKind};
use crate::unique_sid;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

// --- running yace ab and real ab ---------------------------------------------

/// One `yace ab` run: exit code, report (stdout), stderr, JSON result.
#[derive(Debug)]
struct Run {
    cmd: String,
    code: Option<i32>,
    out: String,
    err: String,
    json: Value,
    elapsed: Duration,
}

/// `yace ab ARGS --json TMP`; panics if yace wrote no JSON result.
fn yace_ab(args: &[&str]) -> Run {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let path: PathBuf = std::env::temp_dir().join(format!(
        "yace-ab-stacks-{}-{}.json",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let cmd = format!("yace ab {}", args.join(" "));
    let start = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_yace"))
        .arg("ab")
        .args(args)
        .arg("--json")
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    let elapsed = start.elapsed();
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    let json = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{cmd}: no JSON result ({e}), exit {:?}\n{out}\n{err}",
            output.status
        )
    });
    Run {
        cmd,
        code: output.status.code(),
        out,
        err,
        json,
        elapsed,
    }
}

impl Run {
    /// The value on a report line, e.g. `run.line("Complete requests:")`.
    fn line(&self, label: &str) -> &str {
        line(&self.out, label).unwrap_or_else(|| panic!("{}: no line {label:?}\n{self}", self.cmd))
    }

    /// The number a report line starts with ("1405 bytes" → 1405).
    fn num(&self, label: &str) -> u64 {
        leading_u64(self.line(label)).unwrap_or_else(|| panic!("{label} not a number\n{self}"))
    }

    /// "Time taken for tests:", in seconds.
    fn time_taken(&self) -> f64 {
        let v = self.line("Time taken for tests:");
        v.strip_suffix(" seconds")
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("time taken {v:?}\n{self}"))
    }

    /// `summary.KEY` of the JSON result.
    fn summary(&self, key: &str) -> u64 {
        self.json["summary"][key]
            .as_u64()
            .unwrap_or_else(|| panic!("summary.{key} missing\n{self}"))
    }

    /// `outcomes.KEY` of the JSON result.
    fn outcome(&self, key: &str) -> u64 {
        self.json["outcomes"][key]
            .as_u64()
            .unwrap_or_else(|| panic!("outcomes.{key} missing\n{self}"))
    }

    fn notes(&self) -> &str {
        let at = self
            .out
            .find("yace notes (where this differs from ab):")
            .unwrap_or_else(|| panic!("no yace notes\n{self}"));
        &self.out[at..]
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "$ {}  (exit {:?}, {:?})\n{}\n--- stderr\n{}",
            self.cmd, self.code, self.elapsed, self.out, self.err
        )
    }
}

/// The value on the first line starting with `label`, trimmed.
fn line<'a>(out: &'a str, label: &str) -> Option<&'a str> {
    out.lines()
        .find_map(|l| l.strip_prefix(label))
        .map(str::trim)
}

fn leading_u64(s: &str) -> Option<u64> {
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Real ApacheBench's report (stdout), which must succeed.
fn real_ab(args: &[&str]) -> String {
    let out = Command::new("ab").args(args).output().unwrap_or_else(|e| {
        panic!(
            "ApacheBench (ab) cannot run ({e}): run scripts/test.sh, which installs apache2-utils"
        )
    });
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "ab {}: {}\n{text}\n{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn real_ab_line<'a>(out: &'a str, label: &str) -> &'a str {
    line(out, label).unwrap_or_else(|| panic!("ab: no line {label:?}\n{out}"))
}

// --- what the servers logged ---------------------------------------------------

/// Whether the front server sends `path` chunked *and* logs the chunk
/// framing in its body bytes: nginx in front of php-fpm (PHP output has no
/// Content-Length there, and yace speaks HTTP/1.1, with or without -k).
/// Apache logs the body before chunking (`%B`), and mod_php's output buffer
/// gives a Content-Length, which nginx passes on in `NginxProxyApache`.
fn nginx_logs_chunk_framing(kind: StackKind, path: &str) -> bool {
    kind == StackKind::NginxPhpFpm && path.contains(".php")
}

/// The body length of a response nginx sent chunked and logged with its
/// framing: `HEX\r\n` + body + `\r\n` + `0\r\n\r\n` for a body PHP wrote in
/// one piece (these pages are ≤ 2000 bytes, under PHP's 4096-byte output
/// buffer, so php-fpm hands nginx one piece). `None` if no length fits.
fn dechunk_one(wire: u64) -> Option<u64> {
    (1..=8u32).find_map(|digits| {
        let len = wire.checked_sub(u64::from(digits) + 9)?;
        (format!("{len:x}").len() == digits as usize).then_some(len)
    })
}

/// Each entry's body as the client decoded it (see `nginx_logs_chunk_framing`).
fn decoded_lengths(kind: StackKind, path: &str, log: &[LogEntry]) -> Vec<u64> {
    log.iter()
        .map(|e| {
            if nginx_logs_chunk_framing(kind, path) {
                dechunk_one(e.body_bytes)
                    .unwrap_or_else(|| panic!("{}: {e:?} is not one chunk", kind.name()))
            } else {
                e.body_bytes
            }
        })
        .collect()
}

// --- one page under load: report vs JSON vs log ---------------------------------

/// What a page's body should be.
#[derive(Debug, Clone, Copy)]
enum Doc {
    /// Always this many bytes.
    Fixed(u64),
    /// `/random.php`: varies within these bounds.
    Varies(u64, u64),
}

/// Runs `yace ab -n N -c C [-k] URL` on `path` and checks the report and
/// the JSON result against each other and against the access log(s).
fn check_page(stack: &Stack, path: &str, n: u64, c: u64, keepalive: bool, doc: Doc) {
    let kind = stack.kind();
    let name = stack.name();
    let url = stack.url(path);
    let (n_s, c_s) = (n.to_string(), c.to_string());
    let mut args = vec!["-n", &n_s, "-c", &c_s];
    if keepalive {
        args.push("-k");
    }
    args.push(&url);
    let run = yace_ab(&args);
    let ctx = format!("{name} {path}\n{run}");

    // The report, and the same figures in the JSON result.
    assert_eq!(run.code, Some(0), "{ctx}");
    assert_eq!(run.line("Document Path:"), path, "{ctx}");
    assert_eq!(run.num("Concurrency Level:"), c, "{ctx}");
    assert_eq!(run.num("Complete requests:"), n, "{ctx}");
    assert_eq!(run.num("Failed requests:"), 0, "{ctx}");
    assert!(line(&run.out, "Non-2xx responses:").is_none(), "{ctx}");
    assert_eq!(run.summary("responses"), n, "{ctx}");
    assert_eq!(run.summary("errors"), 0, "{ctx}");
    assert_eq!(
        run.json["statuses"],
        serde_json::json!({ "200": n }),
        "{ctx}"
    );
    for (outcome, count) in run.json["outcomes"].as_object().expect("outcomes") {
        let want = if outcome == "response" { n } else { 0 };
        assert_eq!(count.as_u64(), Some(want), "outcomes.{outcome}\n{ctx}");
    }
    let total = run.num("Total transferred:");
    let html = run.num("HTML transferred:");
    assert_eq!(total, run.summary("bytes_in"), "{ctx}");
    assert_eq!(html, run.summary("body_bytes"), "{ctx}");
    if keepalive {
        assert_eq!(run.num("Keep-Alive requests:"), n, "{ctx}");
    } else {
        assert!(line(&run.out, "Keep-Alive requests:").is_none(), "{ctx}");
    }

    // The server's side: one line per complete request, all 200.
    let log = stack.wait_access_log(n as usize);
    let ctx = format!("{ctx}\n--- access log\n{log:#?}");
    assert_eq!(log.len() as u64, n, "{ctx}");
    for e in &log {
        assert_eq!(
            (e.method.as_str(), e.path.as_str(), e.status),
            ("GET", path, 200),
            "{ctx}"
        );
    }
    // Total transferred is what went on the wire (headers, body, chunk
    // framing): both servers log exactly that (nginx $bytes_sent, Apache %O).
    let logged_total: u64 = log
        .iter()
        .map(|e| e.total_bytes.expect("total logged"))
        .sum();
    assert_eq!(total, logged_total, "Total transferred vs the log\n{ctx}");
    // HTML transferred is the decoded bodies. Apache's %B and nginx's
    // $body_bytes_sent for a Content-Length response are that too; for a
    // chunked response nginx counts the framing as well, so there the log
    // can only be compared through `decoded_lengths`.
    let logged_body: u64 = log.iter().map(|e| e.body_bytes).sum();
    let lengths = decoded_lengths(kind, path, &log);
    if nginx_logs_chunk_framing(kind, path) {
        assert!(
            logged_body >= html + 10 * n,
            "chunk framing not logged?\n{ctx}"
        );
    } else {
        assert_eq!(html, logged_body, "HTML transferred vs the log\n{ctx}");
    }
    assert_eq!(
        html,
        lengths.iter().sum::<u64>(),
        "HTML transferred vs the log\n{ctx}"
    );
    // Connections: without -k one per request; with -k, c of them, reused.
    let reused = log
        .iter()
        .filter(|e| e.keepalive_reused == Some(true))
        .count() as u64;
    assert_eq!(reused, run.summary("reused_connections"), "{ctx}");
    assert_eq!(run.summary("connections_opened"), n - reused, "{ctx}");
    if keepalive {
        assert_eq!(reused, n - c, "{ctx}");
    } else {
        assert_eq!(reused, 0, "{ctx}");
    }

    // The body length, as reported and as logged.
    let doc_line = run.line("Document Length:");
    match doc {
        Doc::Fixed(len) => {
            assert_eq!(doc_line, format!("{len} bytes"), "{ctx}");
            assert_eq!(html, n * len, "{ctx}");
            assert!(lengths.iter().all(|&l| l == len), "{ctx}");
            assert!(!run.out.contains("Document length varied"), "{ctx}");
        }
        Doc::Varies(lo, hi) => {
            // No false "Failed requests: Length" (checked above), and the
            // report says the length varied, over the range the server sent.
            let (min, max) = (
                *lengths.iter().min().unwrap(),
                *lengths.iter().max().unwrap(),
            );
            assert!(lo <= min && min < max && max <= hi, "{min}..{max}\n{ctx}");
            let first = leading_u64(doc_line).unwrap();
            assert_eq!(
                doc_line,
                format!("{first} bytes (first response; varied from {min} to {max})"),
                "{ctx}"
            );
            assert!(lengths.contains(&first), "{ctx}");
            assert!(run.notes().contains("Document length varied ("), "{ctx}");
        }
    }

    // nginx -> Apache: Apache saw each request once, and sent those bodies.
    if let Some(backend) = stack.wait_backend_log(n as usize) {
        let ctx = format!("{ctx}\n--- backend log\n{backend:#?}");
        assert_eq!(backend.len() as u64, n, "{ctx}");
        assert!(
            backend.iter().all(|e| e.status == 200 && e.path == path),
            "{ctx}"
        );
        assert_eq!(
            html,
            backend.iter().map(|e| e.body_bytes).sum::<u64>(),
            "{ctx}"
        );
    }
    stack.clear_logs();
}

/// Every page of the stack, with and without -k.
fn check_pages(kind: StackKind) {
    let stack = Stack::start(kind);
    let index = std::fs::metadata(stack.docroot().join("index.html"))
        .unwrap()
        .len();
    check_page(&stack, "/index.html", 500, 20, true, Doc::Fixed(index));
    check_page(&stack, "/index.html", 200, 10, false, Doc::Fixed(index));
    if !kind.serves_php() {
        return;
    }
    check_page(&stack, "/hello.php", 500, 20, true, Doc::Fixed(12));
    check_page(&stack, "/hello.php", 200, 10, false, Doc::Fixed(12));
    check_page(&stack, "/sleep.php?ms=50", 100, 20, true, Doc::Fixed(6));
    // No cookie: each request starts a new session (one file each). The
    // body is its id and a newline: 26 + 1 bytes with Debian's php.ini
    // (session.sid_length = 26).
    let before = session_files(&stack).len();
    check_page(&stack, "/session.php?ms=0", 200, 10, true, Doc::Fixed(27));
    assert_eq!(
        session_files(&stack).len(),
        before + 200,
        "{}: a session file per request",
        stack.name()
    );
    check_page(&stack, "/random.php", 300, 10, true, Doc::Varies(100, 2000));
    check_page(
        &stack,
        "/random.php",
        100,
        10,
        false,
        Doc::Varies(100, 2000),
    );
}

#[test]
fn pages_nginx_static() {
    check_pages(StackKind::NginxStatic);
}

#[test]
fn pages_nginx_php_fpm() {
    check_pages(StackKind::NginxPhpFpm);
}

#[test]
fn pages_apache_prefork_mod_php() {
    check_pages(StackKind::ApachePreforkModPhp);
}

#[test]
fn pages_apache_event_php_fpm() {
    check_pages(StackKind::ApacheEventPhpFpm);
}

#[test]
fn pages_nginx_proxy_apache() {
    check_pages(StackKind::NginxProxyApache);
}

// --- PHP file sessions -----------------------------------------------------------

const HOLD_MS: u64 = 200;
const SESSION_N: u64 = 8;
const SESSION_C: u64 = 4;

/// `sess_*` files in the stack's session dir.
fn session_files(stack: &Stack) -> Vec<String> {
    std::fs::read_dir(stack.dir().join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sess_"))
        .collect()
}

/// One PHPSESSID cookie for all: PHP's session lock runs the requests one
/// at a time whatever -c says. No cookie: each request starts its own
/// session and they run side by side.
fn check_sessions(kind: StackKind) {
    let stack = Stack::start(kind);
    let name = stack.name();
    let url = stack.url(&format!("/session.php?ms={HOLD_MS}"));
    let (n, c) = (SESSION_N.to_string(), SESSION_C.to_string());
    let serialised = (SESSION_N * HOLD_MS) as f64 / 1000.0;

    let sid = unique_sid("ab");
    let cookie = format!("PHPSESSID={sid}");
    let run = yace_ab(&["-n", &n, "-c", &c, "-C", &cookie, &url]);
    let ctx = format!("{name}, one session\n{run}");
    assert_eq!(run.code, Some(0), "{ctx}");
    assert_eq!(run.num("Complete requests:"), SESSION_N, "{ctx}");
    assert_eq!(run.num("Failed requests:"), 0, "{ctx}");
    // The page names the session: every response was for the cookie's.
    assert_eq!(
        run.line("Document Length:"),
        format!("{} bytes", sid.len() + 1),
        "{ctx}"
    );
    assert_eq!(
        run.num("HTML transferred:"),
        SESSION_N * (sid.len() as u64 + 1),
        "{ctx}"
    );
    let took = run.time_taken();
    assert!(
        took >= serialised * 0.9,
        "{SESSION_N} requests sharing a session, {HOLD_MS} ms each, took only {took} s\n{ctx}"
    );
    let log = stack.wait_access_log(SESSION_N as usize);
    assert_eq!(log.len() as u64, SESSION_N, "{ctx}\n{log:#?}");
    assert!(log.iter().all(|e| e.status == 200), "{ctx}\n{log:#?}");
    // The server logs each line after PHP wrote the session: 8 hits in it.
    let file = stack.dir().join(format!("sessions/sess_{sid}"));
    let data = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    assert_eq!(data, format!("hits|i:{SESSION_N};"), "{ctx}");
    assert_eq!(session_files(&stack).len(), 1, "{ctx}");
    stack.clear_logs();

    // No cookie. A loaded machine can stretch one try: up to 3.
    let mut tries = Vec::new();
    for _ in 0..3 {
        let before = session_files(&stack).len();
        let run = yace_ab(&["-n", &n, "-c", &c, &url]);
        let ctx = format!("{name}, no cookie\n{run}");
        assert_eq!(run.code, Some(0), "{ctx}");
        assert_eq!(run.num("Complete requests:"), SESSION_N, "{ctx}");
        assert_eq!(run.num("Failed requests:"), 0, "{ctx}");
        let log = stack.wait_access_log(SESSION_N as usize);
        assert_eq!(log.len() as u64, SESSION_N, "{ctx}\n{log:#?}");
        assert!(log.iter().all(|e| e.status == 200), "{ctx}\n{log:#?}");
        assert_eq!(
            session_files(&stack).len(),
            before + SESSION_N as usize,
            "{ctx}"
        );
        stack.clear_logs();
        let took = run.time_taken();
        tries.push(took);
        if took < serialised * 0.5 {
            break;
        }
    }
    assert!(
        *tries.last().unwrap() < serialised * 0.5,
        "{name}: {SESSION_N} requests with no cookie, {HOLD_MS} ms each, -c {SESSION_C}, \
         took {tries:?} s: not side by side (serialised would be {serialised} s)"
    );
}

#[test]
fn sessions_nginx_php_fpm() {
    check_sessions(StackKind::NginxPhpFpm);
}

#[test]
fn sessions_apache_prefork_mod_php() {
    check_sessions(StackKind::ApachePreforkModPhp);
}

#[test]
fn sessions_apache_event_php_fpm() {
    check_sessions(StackKind::ApacheEventPhpFpm);
}

#[test]
fn sessions_nginx_proxy_apache() {
    check_sessions(StackKind::NginxProxyApache);
}

// --- a page slower than -s ---------------------------------------------------------

/// `/sleep.php?ms=3000` with `-s 1 -n 4 -c 2`: each request fails alone at
/// 1 s as an exception, and the run completes with a full report; as every
/// request failed, it exits 1 and says so.
fn check_timeout(kind: StackKind) {
    let stack = Stack::start(kind);
    let name = stack.name();
    let path = "/sleep.php?ms=3000";
    let run = yace_ab(&["-n", "4", "-c", "2", "-s", "1", &stack.url(path)]);
    let ctx = format!("{name}\n{run}");
    assert_eq!(run.code, Some(1), "{ctx}");
    assert!(
        run.err
            .contains("error: every request failed (4 errors, not one response)"),
        "{ctx}"
    );
    let mut at = 0;
    for label in [
        "Server Hostname:",
        "Server Port:",
        "Document Path:",
        "Document Length:",
        "Concurrency Level:",
        "Time taken for tests:",
        "Complete requests:",
        "Failed requests:",
        "   (Connect: 0, Receive: 0, Length: 0, Exceptions: 4)",
        "Total transferred:",
        "HTML transferred:",
        "Requests per second:",
        "yace notes (where this differs from ab):",
    ] {
        let pos = run.out[at..]
            .find(label)
            .unwrap_or_else(|| panic!("{label:?} missing or out of order\n{ctx}"));
        at += pos + label.len();
    }
    assert_eq!(run.line("Document Path:"), path, "{ctx}");
    assert_eq!(run.num("Complete requests:"), 4, "{ctx}");
    assert_eq!(run.num("Failed requests:"), 4, "{ctx}");
    assert!(
        run.notes().contains(
            "4 requests got no complete response within the 1 s timeout (-s) and count as failed"
        ),
        "{ctx}"
    );
    assert_eq!(run.summary("responses"), 0, "{ctx}");
    assert_eq!(run.outcome("timeout"), 4, "{ctx}");
    assert_eq!(run.json["end"]["reason"], "completed", "{ctx}");
    assert_eq!(run.json["end"]["partial"], false, "{ctx}");
    // Two rounds of two requests, each given up at 1 s, not at 3 s.
    let took = run.time_taken();
    assert!((1.9..2.9).contains(&took), "took {took} s\n{ctx}");

    // The server saw the 4 requests. nginx logs each when yace closes it
    // (499, "client closed request"), after the 1 s of -s. Apache notices
    // nothing: PHP sleeps on, and Apache logs 200 with the body it handed to
    // the kernel for a connection already closed, 3 s in; so its byte counts
    // can't be compared with yace's (nothing received).
    let log = stack.wait_access_log(4);
    let ctx = format!("{ctx}\n--- access log\n{log:#?}");
    assert_eq!(log.len(), 4, "{ctx}");
    for e in &log {
        assert_eq!(e.path, path, "{ctx}");
        let us = e.duration_us.unwrap();
        match stack.front_server() {
            Server::Nginx => {
                assert_eq!(e.status, 499, "{ctx}");
                assert!((900_000..2_000_000).contains(&us), "{ctx}");
            }
            Server::Apache => {
                assert_eq!(e.status, 200, "{ctx}");
                assert!(us >= 3_000_000, "{ctx}");
            }
        }
    }
}

#[test]
fn timeout_nginx_php_fpm() {
    check_timeout(StackKind::NginxPhpFpm);
}

#[test]
fn timeout_apache_prefork_mod_php() {
    check_timeout(StackKind::ApachePreforkModPhp);
}

#[test]
fn timeout_apache_event_php_fpm() {
    check_timeout(StackKind::ApacheEventPhpFpm);
}

#[test]
fn timeout_nginx_proxy_apache() {
    check_timeout(StackKind::NginxProxyApache);
}

// --- side by side with the real ab -------------------------------------------------

/// Same target, same flags: yace ab and ab agree on what was fetched and
/// how much of it (HTML transferred too: ab's HTTP/1.0 gets no chunking, and
/// yace counts decoded bodies). Total transferred differs by design (the
/// request and response headers of HTTP/1.1 vs 1.0).
fn check_vs_real_ab(kind: StackKind) {
    let stack = Stack::start(kind);
    let name = stack.name();
    let pages: &[&str] = if kind.serves_php() {
        &["/index.html", "/hello.php"]
    } else {
        &["/index.html"]
    };
    for page in pages {
        let url = stack.url(page);
        let ours = yace_ab(&["-n", "200", "-c", "10", &url]);
        let theirs = real_ab(&["-n", "200", "-c", "10", &url]);
        let ctx = format!("{name}\n{ours}\n--- ab\n{theirs}");
        assert_eq!(ours.code, Some(0), "{ctx}");
        for label in [
            "Server Hostname:",
            "Server Port:",
            "Document Path:",
            "Document Length:",
            "Concurrency Level:",
            "Complete requests:",
            "Failed requests:",
            "HTML transferred:",
        ] {
            assert_eq!(
                ours.line(label),
                real_ab_line(&theirs, label),
                "{label}\n{ctx}"
            );
        }
        assert_eq!(ours.line("Document Path:"), *page, "{ctx}");
        assert_eq!(ours.num("Complete requests:"), 200, "{ctx}");
        let log = stack.wait_access_log(400);
        assert_eq!(log.len(), 400, "{ctx}\n{log:#?}");
        assert!(
            log.iter().all(|e| e.status == 200 && e.path == *page),
            "{ctx}\n{log:#?}"
        );
        stack.clear_logs();
    }
    if !kind.serves_php() {
        return;
    }
    // A page of random length: ab calls nearly every response a failure
    // ("Length"), yace none, and says why.
    let url = stack.url("/random.php");
    let ours = yace_ab(&["-n", "100", "-c", "5", &url]);
    let theirs = real_ab(&["-n", "100", "-c", "5", &url]);
    let ctx = format!("{name}\n{ours}\n--- ab\n{theirs}");
    assert_eq!(real_ab_line(&theirs, "Complete requests:"), "100", "{ctx}");
    let failed: u64 = real_ab_line(&theirs, "Failed requests:").parse().unwrap();
    assert!(failed >= 50, "{ctx}");
    assert!(
        theirs.contains(&format!(
            "(Connect: 0, Receive: 0, Length: {failed}, Exceptions: 0)"
        )),
        "{ctx}"
    );
    assert_eq!(ours.num("Complete requests:"), 100, "{ctx}");
    assert_eq!(ours.num("Failed requests:"), 0, "{ctx}");
    assert!(ours.notes().contains("Document length varied ("), "{ctx}");
    assert_eq!(stack.wait_access_log(200).len(), 200, "{ctx}");
}

#[test]
fn vs_real_ab_nginx_static() {
    check_vs_real_ab(StackKind::NginxStatic);
}

#[test]
fn vs_real_ab_nginx_php_fpm() {
    check_vs_real_ab(StackKind::NginxPhpFpm);
}

#[test]
fn vs_real_ab_apache_prefork_mod_php() {
    check_vs_real_ab(StackKind::ApachePreforkModPhp);
}

#[test]
fn vs_real_ab_apache_event_php_fpm() {
    check_vs_real_ab(StackKind::ApacheEventPhpFpm);
}

#[test]
fn vs_real_ab_nginx_proxy_apache() {
    check_vs_real_ab(StackKind::NginxProxyApache);
}

/// `-k` on nginx + php-fpm: PHP's output has no Content-Length, so nginx
/// chunks it for HTTP/1.1 (yace), and for ab's HTTP/1.0 keep-alive it can
/// only close the connection after each response. The access log shows it.
#[test]
fn keepalive_nginx_php_fpm_vs_real_ab() {
    let stack = Stack::start(StackKind::NginxPhpFpm);
    let reused = |log: &[LogEntry]| {
        log.iter()
            .filter(|e| e.keepalive_reused == Some(true))
            .count()
    };
    let url = stack.url("/hello.php");

    let ours = yace_ab(&["-k", "-n", "200", "-c", "10", &url]);
    assert_eq!(ours.code, Some(0), "{ours}");
    assert_eq!(ours.num("Keep-Alive requests:"), 200, "{ours}");
    assert!(ours.notes().contains("Keep-alive is HTTP/1.1"), "{ours}");
    let log = stack.wait_access_log(200);
    assert_eq!(log.len(), 200, "{ours}\n{log:#?}");
    // 10 connections, each used for 20 requests.
    assert_eq!(reused(&log), 190, "{ours}\n{log:#?}");
    assert_eq!(ours.summary("connections_opened"), 10, "{ours}");
    stack.clear_logs();

    let theirs = real_ab(&["-k", "-n", "200", "-c", "10", &url]);
    assert_eq!(
        real_ab_line(&theirs, "Complete requests:"),
        "200",
        "{theirs}"
    );
    assert_eq!(
        real_ab_line(&theirs, "Keep-Alive requests:"),
        "0",
        "{theirs}"
    );
    let log = stack.wait_access_log(200);
    assert_eq!(log.len(), 200, "{theirs}\n{log:#?}");
    assert_eq!(
        reused(&log),
        0,
        "ab -k reused connections?\n{theirs}\n{log:#?}"
    );
    stack.clear_logs();

    // ab's keep-alive itself works where the length is known (static file):
    // it's the chunked PHP output that defeats it.
    let theirs = real_ab(&["-k", "-n", "200", "-c", "10", &stack.url("/index.html")]);
    assert_eq!(
        real_ab_line(&theirs, "Keep-Alive requests:"),
        "200",
        "{theirs}"
    );
    let log = stack.wait_access_log(200);
    assert_eq!(reused(&log), 190, "{theirs}\n{log:#?}");
}
