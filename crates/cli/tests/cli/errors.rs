//! Bad input and unreachable targets: one clear line each, the right exit code.

use crate::{stderr, yace};

#[test]
fn every_bad_flag_is_reported_at_once() {
    let out = yace()
        .args([
            "run",
            "http://127.0.0.1:1/",
            "-c",
            "abc",
            "-d",
            "soon",
            "-H",
            "NoColon",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(
        e.contains("-c/--connections: 'abc' is not a whole number"),
        "{e}"
    );
    assert!(e.contains("-d/--duration: 'soon' is not a duration"), "{e}");
    assert!(
        e.contains("-H/--header: 'NoColon' is not 'Name: value'"),
        "{e}"
    );
    assert!(e.lines().all(|l| l.starts_with("error: ")), "{e}");
}

#[test]
fn unreachable_url_is_one_line_and_exit_1() {
    // A port that nothing listens on: bind one, note it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = yace()
        .args(["run", &format!("http://127.0.0.1:{port}/"), "-n", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("cannot connect to 127.0.0.1:"), "{e}");
    assert!(e.contains("refused"), "{e}");
}

#[test]
fn unknown_host_is_a_clear_error() {
    let out = yace()
        .args(["run", "http://no-such-host.invalid/", "-n", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("cannot resolve host 'no-such-host.invalid'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn unwritable_json_path_fails_before_the_run() {
    let s = crate::server();
    let out = yace()
        .args([
            "run",
            &s.url(),
            "-n",
            "10",
            "--json",
            "/nonexistent-dir/x/result.json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(
        e.contains("--json /nonexistent-dir/x/result.json: cannot create"),
        "{e}"
    );
    assert_eq!(crate::settled(&s).requests, 0, "no load was sent");
    s.shutdown();
}

#[test]
fn bad_url_and_scheme() {
    let out = yace().args(["run", "ftp://example.com/"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("URL: 'ftp://example.com/' uses scheme 'ftp'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn missing_body_file_names_the_file() {
    let out = yace()
        .args([
            "run",
            "http://127.0.0.1:1/",
            "--body-file",
            "/no/such/file.json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--body-file /no/such/file.json: cannot read"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_full_disk_has_its_own_exit_code_and_the_summary_still_prints() {
    let s = crate::server();
    let out = yace()
        .args([
            "run",
            &s.url(),
            "-n",
            "50",
            "-c",
            "2",
            "--json",
            "/dev/full",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the disk is full"),
        "{}",
        stderr(&out)
    );
    assert!(
        crate::stdout(&out).contains("50 responses"),
        "{}",
        crate::stdout(&out)
    );
    s.shutdown();
}
