//! The live browser page (`yace run --dashboard`, issue #18) with the
//! real binary against a real target on loopback: the token off the
//! default address (127.0.0.2: loopback, but not 127.0.0.1), the same
//! numbers with and without the page, stalled readers that change
//! nothing, and flags said wrong. (What a browser sees:
//! tests/browser/dashboard.py; the server alone: crates/dashboard/tests.)

use crate::cli::{server, settled, stderr, temp_path, u, yace};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// `yace ARGS` with stderr read until the page's address.
struct Running {
    child: Child,
    /// `http://ADDR/` or `http://ADDR/?token=…`, as printed.
    url: String,
    /// What stderr said, the address line included (the rest after the
    /// end: [`Running::finish`]).
    said: String,
    rest: Option<std::thread::JoinHandle<String>>,
    started: Instant,
}

impl Running {
    fn start(args: &[&str]) -> Running {
        let started = Instant::now();
        let mut child = yace()
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("yace starts");
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut said = String::new();
        let url = loop {
            let mut line = String::new();
            if err.read_line(&mut line).unwrap() == 0 {
                let _ = child.kill();
                panic!("yace said no page address: {said}");
            }
            said.push_str(&line);
            if let Some((_, rest)) = line.split_once("live page at ") {
                break rest.split_whitespace().next().unwrap().to_string();
            }
            assert!(started.elapsed() < Duration::from_secs(20), "{said}");
        };
        let rest = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Running {
            child,
            url,
            said,
            rest: Some(rest),
            started,
        }
    }

    fn addr(&self) -> SocketAddr {
        let host = self.url.trim_start_matches("http://");
        host[..host.find('/').unwrap()].parse().unwrap()
    }

    /// Waits (bounded) for the end: the exit code, all of stderr, and the
    /// wall time from the start.
    fn finish(mut self) -> (i32, String, Duration) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill(); // our own child, by its handle
                panic!("yace did not end");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let wall = self.started.elapsed();
        let rest = self.rest.take().unwrap().join().unwrap();
        (
            status.code().unwrap_or(-1),
            format!("{}{rest}", self.said),
            wall,
        )
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `GET target` on `addr`: the status and the body.
fn get(addr: SocketAddr, target: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("the page listens");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {target} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    (
        status,
        out.split_once("\r\n\r\n").map_or("", |x| x.1).to_string(),
    )
}

/// Opens the stream and reads up to its first event's name.
fn first_event(addr: SocketAddr, target: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {target} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        if let Some(name) = line.strip_prefix("event: ") {
            return name.trim().to_string();
        }
        assert!(!line.is_empty(), "the stream ended before an event");
    }
}

fn result(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("a result")).expect("JSON")
}

#[test]
fn off_the_default_address_the_page_needs_its_token() {
    let s = server();
    let url = s.url();
    let json = temp_path("dash-token.json");
    let html = temp_path("dash-token.html");
    // 127.0.0.2 without a token: one is made and said, in the address.
    let run = Running::start(&[
        "run",
        &url,
        "--rate",
        "50",
        "-d",
        "3s",
        "-q",
        "--dashboard",
        "127.0.0.2",
        "--json",
        json.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    let (_, token) = run
        .url
        .split_once("?token=")
        .expect("the address holds a token");
    let token = token.to_string();
    assert!(run.url.starts_with("http://127.0.0.2:"), "{}", run.url);
    assert_eq!(token.len(), 32, "{token}");
    assert!(run.said.contains("the token was made for this run"));
    let addr = run.addr();
    assert_eq!(get(addr, "/").0, 403, "the page without its token");
    assert_eq!(get(addr, "/events").0, 403, "the stream without its token");
    assert_eq!(get(addr, &format!("/?token={}x", &token[1..])).0, 403);
    let (status, page) = get(addr, &format!("/?token={token}"));
    assert_eq!(status, 200);
    assert!(page.contains("id=\"yace-live-status\""), "{page}");
    assert_eq!(first_event(addr, &format!("/events?token={token}")), "full");
    let (code, err, _) = run.finish();
    assert_eq!(code, 0, "{err}");
    assert_eq!(err.matches(&token).count(), 1, "said once: {err}");
    for out in [&json, &html] {
        let text = std::fs::read_to_string(out).unwrap();
        assert!(!text.contains(&token), "{} holds the token", out.display());
    }

    // A token of one's own (with a scenario): asked for, never said.
    let plan = temp_path("dash-visit.toml");
    std::fs::write(
        &plan,
        "[load]\nusers = 2\nthink = \"none\"\n\n[[journey]]\nname = \"visit\"\n\n  \
         [[journey.step]]\n  name = \"home\"\n  url = \"/\"\n",
    )
    .unwrap();
    let json = temp_path("dash-own.json");
    let run = Running::start(&[
        "run",
        &url,
        "-f",
        plan.to_str().unwrap(),
        "-d",
        "3s",
        "-q",
        "--dashboard=127.0.0.2:0",
        "--dashboard-token",
        "my-own-token-1234",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(!run.url.contains("my-own"), "{}", run.url);
    let addr = run.addr();
    assert_eq!(get(addr, "/").0, 403);
    assert_eq!(get(addr, "/?token=my-own-token-1235").0, 403);
    assert_eq!(get(addr, "/?token=my-own-token-1234").0, 200);
    assert_eq!(first_event(addr, "/events?token=my-own-token-1234"), "full");
    let (code, err, _) = run.finish();
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("my-own-token"), "{err}");
    assert!(!std::fs::read_to_string(&json)
        .unwrap()
        .contains("my-own-token"));
    s.shutdown();
}

#[test]
fn stalled_readers_change_neither_the_numbers_nor_the_end() {
    // The same fixed-rate run without the page, then with it, a reader on
    // its stream, and three readers that stopped: one on the stream, one
    // on the page, one that never finished its request. Every planned
    // request is sent, the server saw each, and the run ends on time.
    for with_page in [false, true] {
        let s = server();
        let url = s.url();
        let json = temp_path(&format!("dash-same-{with_page}.json"));
        let mut args = vec![
            "run", &url, "--rate", "300", "-d", "3s", "--late", "catch-up", "-q", "--json",
        ];
        args.push(json.to_str().unwrap());
        let wall = if with_page {
            args.push("--dashboard");
            let run = Running::start(&args);
            let addr = run.addr();
            assert!(run.url.starts_with("http://127.0.0.1:") && !run.url.contains("token"));
            let mut stalled = Vec::new();
            for request in ["GET /events", "GET /", "GET /ev"] {
                let mut c = TcpStream::connect(addr).unwrap();
                let end = if request == "GET /ev" {
                    ""
                } else {
                    " HTTP/1.1\r\n\r\n"
                };
                write!(c, "{request}{end}").unwrap();
                stalled.push(c); // never read
            }
            // And one that reads, to the end.
            let reader = std::thread::spawn(move || {
                let mut s = TcpStream::connect(addr).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
                write!(s, "GET /events HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
                let mut all = String::new();
                let _ = s.read_to_string(&mut all);
                all
            });
            let (code, err, wall) = run.finish();
            assert_eq!(code, 0, "{err}");
            let read = reader.join().unwrap();
            assert!(
                read.matches("event: tail").count() >= 1 && read.contains("event: end"),
                "the reader followed the run to its report: {}",
                &read[..read.len().min(300)]
            );
            drop(stalled);
            wall
        } else {
            let t = Instant::now();
            let out = yace().args(&args).output().unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
            t.elapsed()
        };
        let r = result(&json);
        let seen = settled(&s);
        assert_eq!(u(&r, "summary.planned"), 900, "page {with_page}");
        assert_eq!(u(&r, "summary.requests"), 900, "page {with_page}: {r}");
        // The run ends on its duration, 3 ms after the last request is
        // due: one still in flight then is cancelled, as documented, and
        // the server may or may not have read it (a busy machine).
        let responses = u(&r, "summary.responses");
        assert_eq!(
            responses + u(&r, "summary.cancelled"),
            900,
            "page {with_page}: {r}"
        );
        assert_eq!(u(&r, "summary.dropped"), 0, "page {with_page}");
        assert_eq!(u(&r, "summary.errors"), 0, "page {with_page}");
        assert!(
            (responses..=900).contains(&seen.requests),
            "the server's count {}, page {with_page}",
            seen.requests
        );
        // Serving the page is measured on its own thread's clock.
        let cost = &r["client"]["extras_cpu_s"]["live_page"];
        assert_eq!(
            cost.as_f64().is_some_and(|c| c > 0.0),
            with_page,
            "{}",
            r["client"]
        );
        let d = r["summary"]["duration_s"].as_f64().unwrap();
        // (The last of 900 requests at 300/s is due at 2.997 s; the run
        // ends when its response is in, later on a busy machine.)
        assert!(
            (2.99..4.0).contains(&d),
            "the run lasted {d} s, page {with_page}"
        );
        assert_eq!(r["end"]["partial"], false, "page {with_page}");
        // The end waits for no stalled reader: the process ends about
        // when the run does (3.0–3.1 s measured either way on a quiet
        // machine); waiting out the page's grace for them (3 s) would take
        // over 6 (the margin is for a busy machine).
        assert!(
            wall < Duration::from_millis(5800),
            "yace took {wall:?}, page {with_page}"
        );
        s.shutdown();
    }
}

#[test]
fn dashboard_flags_said_wrong_are_usage_errors() {
    let s = server();
    let url = s.url();
    for (args, want) in [
        (
            vec!["--dashboard", "example.com:80"],
            "--dashboard `example.com:80` is not an address",
        ),
        (
            vec!["--dashboard", "127.0.0.2", "--dashboard-token", ""],
            "--dashboard-token is empty",
        ),
        (
            vec!["--dashboard", "127.0.0.2", "--dashboard-token", "a b"],
            "holds a space",
        ),
    ] {
        let out = yace()
            .args(["run", &url, "-n", "10", "-q"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
    // The URL taken as the address (yace run --dashboard URL).
    let out = yace()
        .args(["run", "-n", "10", "-q", "--dashboard", &url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("put the URL before --dashboard"),
        "{}",
        stderr(&out)
    );
    // A token without a page.
    let out = yace()
        .args(["run", &url, "-n", "10", "--dashboard-token", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--dashboard"), "{}", stderr(&out));
    // An address already taken: said, with the way out.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let at = taken.local_addr().unwrap().to_string();
    let out = yace()
        .args(["run", &url, "-n", "10", "-q", "--dashboard", &at])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("--dashboard {at}: cannot listen there")),
        "{}",
        stderr(&out)
    );
    assert_eq!(settled(&s).requests, 0, "nothing was sent");
    s.shutdown();
}
