//! Steering from the live page (`yace run --dashboard --dashboard-control`,
//! issue #18) with the real binary against a real target on loopback:
//! control requests with the token raise the rate, and the result records
//! each change with the server's count equal to the steered timeline;
//! requests without the token, by another Host, or to a read-only page
//! are refused and change nothing. (The server alone:
//! crates/dashboard/tests/control.rs; a browser clicking:
//! tests/browser/dashboard.py.)

use crate::cli::{server, settled, stderr, temp_path, u, yace};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// `yace ARGS`, stderr read up to the page's address: the child, the
/// address, the token in it, and the rest of stderr (read to the end).
fn start(args: &[&str]) -> (Child, SocketAddr, String, std::thread::JoinHandle<String>) {
    let mut child = yace()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("yace starts");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let t = Instant::now();
    let url = loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 || t.elapsed() > Duration::from_secs(20) {
            let _ = child.kill(); // our own child, by its handle
            panic!("yace said no page address: {said}");
        }
        said.push_str(&line);
        if let Some((_, rest)) = line.split_once("live page at ") {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    let rest = std::thread::spawn(move || {
        let mut s = said;
        let _ = err.read_to_string(&mut s);
        s
    });
    let host = url.trim_start_matches("http://");
    let addr = host[..host.find('/').unwrap()].parse().unwrap();
    let token = url.split_once("?token=").map_or("", |t| t.1).to_string();
    (child, addr, token, rest)
}

/// Waits (bounded) for the end: the exit code and all of stderr.
fn finish(mut child: Child, rest: std::thread::JoinHandle<String>) -> (i32, String) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("yace did not end");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status.code().unwrap_or(-1), rest.join().unwrap())
}

/// `POST /control` with `body`, `Host: host`, and the token header when
/// given: the status and the JSON answer.
fn post(addr: SocketAddr, host: &str, token: Option<&str>, body: &str) -> (u16, Value) {
    let mut s = TcpStream::connect(addr).expect("the page listens");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let auth = token.map_or(String::new(), |t| format!("X-Yace-Token: {t}\r\n"));
    write!(
        s,
        "POST /control HTTP/1.1\r\nHost: {host}\r\n{auth}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = out.split_once("\r\n\r\n").map_or("", |x| x.1);
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

fn result(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("a result")).expect("JSON")
}

#[test]
fn the_page_steers_the_rate_with_its_token_and_the_result_records_it() {
    // 100/s for 4 s, no terminal (stderr is a pipe): only the page steers.
    let s = server();
    let url = s.url();
    let json = temp_path("dash-control.json");
    let (child, addr, token, rest) = start(&[
        "run",
        &url,
        "--rate",
        "100",
        "-d",
        "4s",
        "--late",
        "catch-up",
        "-q",
        "--dashboard",
        "--dashboard-control",
        "--json",
        json.to_str().unwrap(),
    ]);
    // Control needs a token even on 127.0.0.1: one was made.
    assert!(
        addr.ip().is_loopback() && token.len() == 32,
        "{addr} {token}"
    );
    let host = addr.to_string();
    std::thread::sleep(Duration::from_millis(1000));
    // Refused, and carried out by no one: no token, a wrong one, a Host
    // that names another place (a rebound DNS name).
    let (status, why) = post(addr, &host, None, "faster");
    assert_eq!(status, 403, "{why}");
    assert!(
        why["error"].as_str().unwrap().contains("X-Yace-Token"),
        "{why}"
    );
    assert_eq!(post(addr, &host, Some("0123456789abcdef"), "faster").0, 403);
    let rebound = format!("yace.example:{}", addr.port());
    assert_eq!(post(addr, &rebound, Some(&token), "faster").0, 403);
    // Twice faster, with the token.
    let (status, first) = post(addr, &host, Some(&token), "faster");
    assert_eq!(status, 200, "{first}");
    assert!(
        first["message"]
            .as_str()
            .unwrap()
            .starts_with("rate ×1.10: 110/s from "),
        "{first}"
    );
    std::thread::sleep(Duration::from_millis(500));
    let (status, second) = post(addr, &host, Some(&token), "faster");
    assert_eq!(status, 200, "{second}");
    assert!(
        second["now"].as_str().unwrap().starts_with("×1.21"),
        "{second}"
    );
    let (code, err) = finish(child, rest);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("steers the run"), "{err}");
    assert_eq!(err.matches(&token).count(), 1, "the token said once: {err}");

    let r = result(&json);
    let seen = settled(&s);
    assert!(
        !r.to_string().contains(&token),
        "the result holds the token"
    );
    let segs = r["steering"]["segments"]
        .as_array()
        .expect("steering recorded");
    // The plan's own, and the two changes (none of the refused ones).
    assert_eq!(segs.len(), 3, "{segs:?}");
    assert_eq!(segs[1]["factor"].as_f64(), Some(1.1), "{segs:?}");
    assert_eq!(segs[2]["factor"].as_f64(), Some(1.21), "{segs:?}");
    let planned = u(&r, "steering.planned");
    assert_eq!(u(&r, "summary.planned"), planned);
    assert!(planned > 400, "raised above the plan's 400: {planned}");
    assert_eq!(u(&r, "summary.requests"), planned, "{r}");
    assert_eq!(seen.requests, planned, "the server's count");
    s.shutdown();
}

#[test]
fn the_page_steers_virtual_users_through_the_same_callback() {
    // 2 users for 3 s: one more from the page, said in users.
    let s = server();
    let url = s.url();
    let json = temp_path("dash-control-users.json");
    let (child, addr, token, rest) = start(&[
        "run",
        &url,
        "-u",
        "2",
        "--think",
        "50ms",
        "-d",
        "3s",
        "-q",
        "--dashboard",
        "--dashboard-control",
        "--json",
        json.to_str().unwrap(),
    ]);
    std::thread::sleep(Duration::from_millis(1000));
    let (status, did) = post(addr, &addr.to_string(), Some(&token), "faster");
    assert_eq!(status, 200, "{did}");
    assert!(
        did["message"]
            .as_str()
            .unwrap()
            .starts_with("3 users from "),
        "{did}"
    );
    assert_eq!(did["now"], "3 users", "{did}");
    let (code, err) = finish(child, rest);
    assert_eq!(code, 0, "{err}");
    let r = result(&json);
    let users = r["steering"]["users"]
        .as_array()
        .expect("steering recorded");
    let got: Vec<u64> = users.iter().map(|g| g["users"].as_u64().unwrap()).collect();
    assert_eq!(got, [2, 3], "{users:?}");
    // One connection per user that ran (and the check before the load).
    assert_eq!(settled(&s).connections, 1 + 3);
    s.shutdown();
}

#[test]
fn without_dashboard_control_the_page_refuses_control() {
    let s = server();
    let url = s.url();
    let json = temp_path("dash-readonly.json");
    let (child, addr, token, rest) = start(&[
        "run",
        &url,
        "--rate",
        "50",
        "-d",
        "2s",
        "-q",
        "--dashboard",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(token.is_empty(), "read-only on 127.0.0.1: no token");
    std::thread::sleep(Duration::from_millis(500));
    let (status, why) = post(addr, &addr.to_string(), Some("anything"), "faster");
    assert_eq!(status, 403, "{why}");
    assert!(
        why["error"]
            .as_str()
            .unwrap()
            .contains("--dashboard-control"),
        "{why}"
    );
    let (code, err) = finish(child, rest);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("read-only"), "{err}");
    let r = result(&json);
    assert!(r.get("steering").is_none_or(Value::is_null), "{r}");
    assert_eq!(settled(&s).requests, 100);
    // The flag alone is a usage error.
    let out = yace()
        .args(["run", &url, "-n", "5", "-q", "--dashboard-control"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--dashboard"), "{}", stderr(&out));
    s.shutdown();
}
