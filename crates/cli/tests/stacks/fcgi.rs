//! FastCGI straight to php-fpm (design 018): `yace run fcgi+unix:` and
//! `fcgi://` against Debian's php-fpm, counted against the pool's own
//! access log, with the pages' bodies and statuses checked.

use crate::harness::{FpmListen, FpmOptions, Stack, StackKind};
use serde_json::Value;
use std::process::Command;

/// `yace run ARGS -q --json FILE` in the stack's directory.
fn run(stack: &Stack, name: &str, args: &[&str]) -> Value {
    let path = stack.dir().join(format!("{name}.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_yace"))
        .env("YACE_LANG", "en")
        .arg("run")
        .args(args)
        .arg("--json")
        .arg(&path)
        .arg("-q")
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{name}: no result ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(&text).unwrap()
}

fn n(v: &Value, path: &str) -> u64 {
    let cur = path.split('.').fold(v, |v, k| &v[k]);
    cur.as_u64().unwrap_or_else(|| panic!("{path}: {cur}"))
}

/// Requests the pool ran for `uri` (its access log's lines).
fn pool_saw(stack: &Stack, method: &str, uri: &str) -> Vec<u16> {
    stack
        .fpm_access_log()
        .into_iter()
        .filter(|(m, p, _)| m == method && p == uri)
        .map(|(_, _, s)| s)
        .collect()
}

#[test]
fn fastcgi_over_the_pools_unix_socket() {
    let stack = Stack::start(StackKind::NginxPhpFpm);
    let Some(FpmListen::Unix(sock)) = stack.fpm_listen() else {
        panic!("the pool listens on its unix socket by default");
    };
    let root = stack.docroot().display().to_string();
    let url = |path: &str| format!("fcgi+unix:{}:{path}", sock.display());

    // A connection per request, as nginx does by default.
    let r = run(
        &stack,
        "per-request",
        &[
            &url("/hello.php?t=per"),
            "--fcgi-root",
            &root,
            "-c",
            "4",
            "-n",
            "300",
        ],
    );
    assert_eq!(n(&r, "summary.responses"), 300);
    assert_eq!(n(&r, "summary.errors"), 0);
    assert_eq!(r["statuses"]["200"], 300);
    assert_eq!(n(&r, "summary.body_length.first"), 12);
    assert_eq!(n(&r, "summary.connections_opened"), 300);
    assert_eq!(n(&r, "fcgi.stderr_responses"), 0, "{}", r["fcgi"]);
    assert_eq!(pool_saw(&stack, "GET", "/hello.php?t=per"), vec![200; 300]);

    // FCGI_KEEP_CONN: the pool keeps each connection.
    let r = run(
        &stack,
        "keep",
        &[
            &url("/hello.php?t=keep"),
            "--fcgi-root",
            &root,
            "-c",
            "2",
            "-n",
            "200",
            "--fcgi-keep-conn",
        ],
    );
    assert_eq!(n(&r, "summary.responses"), 200);
    assert_eq!(n(&r, "summary.connections_opened"), 2);
    assert_eq!(pool_saw(&stack, "GET", "/hello.php?t=keep").len(), 200);

    // The open model, exact too.
    let r = run(
        &stack,
        "open",
        &[
            &url("/hello.php?t=open"),
            "--fcgi-root",
            &root,
            "--rate",
            "200",
            "-n",
            "120",
        ],
    );
    assert_eq!(n(&r, "summary.responses"), 120);
    assert_eq!(pool_saw(&stack, "GET", "/hello.php?t=open").len(), 120);

    // A POST body reaches PHP as stdin and comes back.
    let r = run(
        &stack,
        "post",
        &[
            &url("/echo.php?t=post"),
            "--fcgi-root",
            &root,
            "-m",
            "POST",
            "--body",
            "hello-fcgi",
            "-n",
            "10",
        ],
    );
    assert_eq!(r["statuses"]["200"], 10);
    assert_eq!(
        n(&r, "summary.body_length.first"),
        "hello-fcgi".len() as u64
    );
    assert_eq!(pool_saw(&stack, "POST", "/echo.php?t=post").len(), 10);

    // A missing script: php-fpm's 404 "File not found.", a response and
    // not a protocol error, with its stderr counted and shown.
    let r = run(
        &stack,
        "missing",
        &[&url("/nope.php?t=missing"), "--fcgi-root", &root, "-n", "3"],
    );
    assert_eq!(r["statuses"]["404"], 3);
    assert_eq!(n(&r, "summary.errors"), 0);
    assert_eq!(n(&r, "fcgi.stderr_responses"), 3);
    let lines = r["fcgi"]["stderr_lines"].to_string();
    assert!(lines.contains("Primary script unknown"), "{lines}");
}

#[test]
fn fastcgi_over_tcp() {
    let stack = Stack::start_fpm(
        StackKind::NginxPhpFpm,
        FpmOptions {
            tcp: true,
            ..FpmOptions::default()
        },
    );
    let Some(FpmListen::Tcp(port)) = stack.fpm_listen() else {
        panic!("FpmOptions::tcp listens on TCP");
    };
    let root = stack.docroot().display().to_string();
    let url = format!("fcgi://127.0.0.1:{port}/hello.php?t=tcp");
    let r = run(
        &stack,
        "tcp",
        &[
            &url,
            "--fcgi-root",
            &root,
            "-c",
            "3",
            "-n",
            "150",
            "--fcgi-keep-conn",
        ],
    );
    assert_eq!(n(&r, "summary.responses"), 150);
    assert_eq!(r["statuses"]["200"], 150);
    assert_eq!(n(&r, "summary.connections_opened"), 3);
    assert_eq!(pool_saw(&stack, "GET", "/hello.php?t=tcp"), vec![200; 150]);
}
