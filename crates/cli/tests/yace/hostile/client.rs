//! Hostile conditions on the client's side: too few file descriptors, and
//! a reader that closes yace's stdout early.

use crate::hostile::{output_within, server, settled, Run};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn too_few_file_descriptors_are_client_resource_and_invalidate_the_run() {
    let s = server();
    let path = crate::support::temp_path("fd.json");
    // `ulimit -n` in sh sets both the soft and the hard limit, so yace
    // cannot raise it: 40 descriptors for 200 connections.
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "ulimit -n 40 && exec \"$@\"", "sh"])
        .arg(env!("CARGO_BIN_EXE_yace"))
        .args(["run", &s.url(), "-c", "200", "-d", "1s", "-t", "1", "-q"])
        .arg("--json")
        .arg(&path);
    let (out, wall) = output_within(cmd, "fd limit");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(wall < Duration::from_millis(2500), "{wall:?}");
    let json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let r = Run {
        json,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        wall,
        what: "fd limit".into(),
    };
    assert!(r.u("outcomes.client_resource") > 0, "{:?}", r.outcomes());
    assert!(
        r.u("outcomes.response") > 0,
        "the connections it could open worked"
    );
    let warnings = r.json["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("not valid as a measure of the server")),
        "{warnings:?}"
    );
    // Requests that never got a socket never reached the server.
    let seen = settled(&s);
    assert!(seen.requests <= r.u("summary.requests") - r.u("outcomes.client_resource"));
    let _ = std::fs::remove_file(path);
}

/// Exit 0, or death by SIGPIPE (141 from a shell): both fine, a panic not.
fn quiet_about_a_broken_pipe(status: std::process::ExitStatus, stderr: &str) {
    assert!(!stderr.contains("panicked"), "{stderr}");
    let ok = status.code() == Some(0)
        || status.code() == Some(141)
        || status.signal() == Some(libc::SIGPIPE);
    assert!(ok, "{status:?}: {stderr}");
}

#[test]
fn stdout_closed_by_the_reader_is_not_a_panic() {
    let s = server();
    // Through a shell pipeline, as a user would; pipefail gives yace's status.
    let mut cmd = Command::new("bash");
    cmd.args([
        "-c",
        "set -o pipefail; \"$@\" | head -c 1 >/dev/null",
        "bash",
    ])
    .arg(env!("CARGO_BIN_EXE_yace"))
    .args(["run", &s.url(), "-n", "100", "-t", "1"]);
    let (out, _) = output_within(cmd, "| head -c 1");
    quiet_about_a_broken_pipe(out.status, &String::from_utf8_lossy(&out.stderr));

    // And deterministically: the read end is closed before yace writes.
    let mut child = Command::new(env!("CARGO_BIN_EXE_yace"))
        .args(["run", &s.url(), "-n", "100", "-t", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    quiet_about_a_broken_pipe(out.status, &String::from_utf8_lossy(&out.stderr));
    assert_eq!(settled(&s).requests, 200);
}
