//! `yace serve` in the foreground: the announcement line, serving, and a
//! clean exit on SIGTERM and SIGINT (the library's `serve_until_signal`,
//! through the one binary that runs it).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn spawn() -> (Child, std::net::SocketAddr) {
    let mut child = crate::cli::yace()
        .args(["serve", "--port", "0", "-t", "1"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn yace serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .strip_prefix("yace serve: listening on http://")
        .and_then(|rest| rest.strip_suffix("/\n"))
        .unwrap_or_else(|| panic!("announcement {line:?}"))
        .parse()
        .unwrap();
    (child, addr)
}

fn stops_cleanly_on(signal: libc::c_int) {
    let (mut child, addr) = spawn();
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut buf = [0u8; 512];
    let n = c.read(&mut buf).unwrap();
    let head = String::from_utf8_lossy(&buf[..n]).into_owned();
    assert!(
        head.starts_with("HTTP/1.1 200") && head.ends_with("hello world\n"),
        "{head}"
    );
    // SAFETY: plain kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            panic!("still running 5 s after signal {signal}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "{status:?}");
    // The kept-alive connection was closed by the shutdown.
    assert_eq!(c.read(&mut buf).unwrap_or(0), 0, "connection left open");
}

#[test]
fn stops_on_sigterm() {
    stops_cleanly_on(libc::SIGTERM);
}

#[test]
fn stops_on_sigint() {
    stops_cleanly_on(libc::SIGINT);
}

#[test]
fn bad_arguments_are_a_usage_error() {
    let out = crate::cli::yace()
        .args(["serve", "--bind", "nonsense"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}
