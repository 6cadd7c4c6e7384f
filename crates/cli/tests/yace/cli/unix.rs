//! HTTP over a unix-domain socket: `yace run unix:SOCKET:/PATH` and
//! `--unix-socket` against the embedded target listening on a socket
//! (`serve::Config::unix`, as `yace serve --unix`), counted on both sides.

use crate::cli::{run_json, settled, stderr, temp_path, u, yace};

fn unix_server(name: &str) -> (serve::Server, String) {
    let path = temp_path(&format!("{name}.sock"));
    let s = serve::Server::start(serve::Config {
        threads: 2,
        unix: Some(path.clone()),
        ..Default::default()
    })
    .expect("start the embedded target on a unix socket");
    assert_eq!(s.url(), format!("unix:{}:/", path.display()));
    (s, path.display().to_string())
}

#[test]
fn closed_model_over_a_unix_socket_is_counted_exactly() {
    let (s, _) = unix_server("closed");
    let (out, r) = run_json(
        "unix-closed",
        &[&s.url(), "-c", "8", "-n", "2000", "-t", "2"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = settled(&s);
    assert_eq!(u(&r, "summary.responses"), 2000);
    assert_eq!(u(&r, "summary.errors"), 0);
    assert_eq!(seen.requests, 2000, "{seen:?}");
    assert_eq!(seen.by_route.get("/"), Some(&2000));
    assert_eq!(r["statuses"]["200"], 2000);
    // Keep-alive over the socket: one connection per slot, plus the probe.
    assert_eq!(u(&r, "summary.connections_opened"), 8);
    assert_eq!(seen.connections, 9, "{seen:?}");
    assert_eq!(
        r["plan"]["target"]["unix"],
        serde_json::json!(s.url()[5..s.url().len() - 2])
    );
    s.shutdown();
}

#[test]
fn open_model_and_no_keepalive_with_the_unix_socket_flag() {
    let (s, path) = unix_server("open");
    // The URL gives the path and Host; the flag gives the socket (as curl).
    let (out, r) = run_json(
        "unix-open",
        &[
            "http://localhost/sleep?ms=1",
            "--unix-socket",
            &path,
            "--rate",
            "200",
            "-n",
            "150",
            "--no-keepalive",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = settled(&s);
    assert_eq!(u(&r, "summary.responses"), 150);
    assert_eq!(seen.by_route.get("/sleep"), Some(&150), "{seen:?}");
    assert_eq!(u(&r, "summary.connections_opened"), 150);
    assert_eq!(seen.connections, 151, "{seen:?}");
    s.shutdown();
}

#[test]
fn h2c_over_a_unix_socket() {
    let (s, _) = unix_server("h2c");
    let (out, r) = run_json(
        "unix-h2c",
        &[
            &s.url(),
            "--http2",
            "--streams",
            "4",
            "-c",
            "2",
            "-n",
            "400",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = settled(&s);
    assert_eq!(u(&r, "summary.responses"), 400);
    assert_eq!(seen.h2_requests, 400, "{seen:?}");
    s.shutdown();
}

#[test]
fn a_missing_socket_and_bad_socket_flags_are_clear_errors() {
    let gone = temp_path("never-bound.sock");
    let out = yace()
        .args(["run", &format!("unix:{}:/", gone.display()), "-n", "1"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let e = stderr(&out);
    assert!(e.contains("cannot connect to the unix socket"), "{e}");
    assert!(e.contains("No such file"), "{e}");
    for (args, says) in [
        (
            vec!["run", "unix:relative.sock:/", "-n", "1"],
            "is not absolute",
        ),
        (
            vec![
                "run",
                "unix:/tmp/a.sock:/",
                "--unix-socket",
                "/tmp/b.sock",
                "-n",
                "1",
            ],
            "give the socket once",
        ),
        (
            vec![
                "run",
                "http://localhost/",
                "--unix-socket",
                "rel.sock",
                "-n",
                "1",
            ],
            "not an absolute path",
        ),
    ] {
        let out = yace().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn fastcgi_flags_are_checked_against_the_url() {
    for (args, says) in [
        (
            vec![
                "run",
                "http://127.0.0.1:1/",
                "--fcgi-root",
                "/srv",
                "-n",
                "1",
            ],
            "--fcgi-root: is for FastCGI",
        ),
        (
            vec!["run", "fcgi://127.0.0.1:9/x.php", "--http2", "-n", "1"],
            "FastCGI is its own protocol",
        ),
        (
            vec![
                "run",
                "fcgi://127.0.0.1:9/x.php",
                "--fcgi-keep-conn",
                "--no-keepalive",
            ],
            "given with --no-keepalive",
        ),
    ] {
        let out = yace().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}
