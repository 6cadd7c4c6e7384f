//! `serve_foreground`, through the `yace-target` binary: the announcement
//! line, serving, and a clean exit on SIGTERM and SIGINT.
#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::Client;

fn spawn() -> (Child, std::net::SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_yace-target"))
        .args(["127.0.0.1:0", "1"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn yace-target");
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
    let mut c = Client::connect(addr);
    assert_eq!(c.get("/").text(), "hello world\n");
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
    assert!(c.closed(), "connection left open");
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
    let out = Command::new(env!("CARGO_BIN_EXE_yace-target"))
        .arg("nonsense")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}
