//! Bad input and unreachable targets: one clear line each, the right exit code.

use crate::cli::{stderr, yace};

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
    // A port that nothing listens on, held so that nothing can.
    let closed = crate::support::ClosedPort::new();
    let out = yace()
        .args(["run", &closed.url(), "-n", "10"])
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
    // ...with where to look.
    assert!(stderr(&out).contains("/etc/hosts"), "{}", stderr(&out));
}

/// Runs `yace ARGS` and returns (exit code, stderr).
fn fails(args: &[&str]) -> (Option<i32>, String) {
    let out = yace().args(args).output().unwrap();
    (out.status.code(), stderr(&out))
}

#[test]
fn every_flag_problem_comes_back_in_one_round() {
    // Field errors, plan checks (zero values) and thresholds, all at once.
    let (code, e) = fails(&[
        "run",
        "http://127.0.0.1:1/",
        "-c",
        "abc",
        "-n",
        "xyz",
        "--rate",
        "0",
        "-d",
        "0s",
        "--timeout",
        "0",
        "--threshold",
        "bad",
    ]);
    assert_eq!(code, Some(2));
    for want in [
        "-c/--connections: 'abc' is not a whole number",
        "-n/--requests: 'xyz' is not a whole number",
        "--rate: '0' is not a positive number",
        "-d/--duration: must be longer than 0s",
        "--timeout: must be longer than 0s",
        "--threshold: 'bad' has no comparison",
    ] {
        assert!(e.contains(want), "missing {want:?} in:\n{e}");
    }
    assert_eq!(e.lines().count(), 6, "{e}");
    // Without a URL too (the embedded target is not started for bad flags).
    let (code, e) = fails(&["run", "-c", "abc", "--threshold", "bad"]);
    assert_eq!(code, Some(2));
    assert_eq!(e.lines().count(), 2, "{e}");
}

#[test]
fn a_bad_value_is_blamed_on_its_own_flag_only() {
    // -n 0 used to make -c look wrong too (connections are capped by -n).
    let (code, e) = fails(&["run", "http://127.0.0.1:1/", "-n", "0"]);
    assert_eq!(code, Some(2));
    assert_eq!(e.trim(), "error: -n/--requests: must be at least 1");
    // A negative count is a value, not clap's "unexpected argument '-5'".
    let (code, e) = fails(&["run", "http://127.0.0.1:1/", "-c", "-5"]);
    assert_eq!(code, Some(2));
    assert!(
        e.contains("-c/--connections") && e.contains("must be at least 1"),
        "{e}"
    );
    assert!(!e.contains("-- -5"), "{e}");
    // A bad --rate is still the open model: no "--max-inflight only applies
    // to the open model" on top.
    let (_, e) = fails(&[
        "run",
        "http://127.0.0.1:1/",
        "--rate",
        "abc",
        "--max-inflight",
        "5",
    ]);
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn a_broken_scheme_is_a_malformed_url_not_an_unknown_host() {
    let (code, e) = fails(&["run", "http//127.0.0.1:1/", "-n", "1"]);
    assert_eq!(code, Some(2));
    assert!(e.contains("malformed URL"), "{e}");
    assert!(e.contains("did you mean http://127.0.0.1:1/?"), "{e}");
    assert!(!e.contains("resolve"), "{e}");
}

#[test]
fn help_reads_well_at_80_columns_in_a_pipe() {
    for cmd in [&[][..], &["run"], &["ab"], &["serve"], &["report"]] {
        let out = yace().args(cmd).arg("--help").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{cmd:?} --help");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(text.contains("Usage: yace"), "{cmd:?}: {text}");
        let long: Vec<&str> = text.lines().filter(|l| l.chars().count() > 80).collect();
        assert!(
            long.is_empty(),
            "{cmd:?} --help, over 80 columns: {long:#?}"
        );
        // An example's comment never continues on a line of its own.
        for l in text.lines().filter(|l| l.starts_with("  yace ")) {
            assert!(!l.ends_with('#'), "{l}");
        }
    }
    // ab's own -h works, and --help too.
    let out = yace().args(["ab", "-h"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    // "one per CPU" is the default, not a contradicting "[default: 0]".
    let out = yace().args(["serve", "--help"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!text.contains("[default: 0]"), "{text}");
}

#[test]
fn unwritable_json_path_fails_before_the_run() {
    let s = crate::cli::server();
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
    assert_eq!(crate::cli::settled(&s).requests, 0, "no load was sent");
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
    let s = crate::cli::server();
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
        crate::cli::stdout(&out).contains("50 responses"),
        "{}",
        crate::cli::stdout(&out)
    );
    s.shutdown();
}
