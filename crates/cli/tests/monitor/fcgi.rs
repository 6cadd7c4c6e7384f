//! php-fpm's status read over FastCGI (`fpm:fcgi://`, `fpm:fcgi+unix:`)
//! from real php-fpm 8.2 pools: the pool's own socket (unix and TCP) and
//! `pm.status_listen`, idle and saturated, and the status request's own
//! child taken out of the figures (through nginx too).

use super::harness::{FpmListen, FpmOptions, Stack, StackKind, StatusPage};
use super::{source, values};
use monitor::reading::Reading;
use monitor::Spec;
use serde_json::Value;
use std::time::Duration;

/// Held by each test of this binary that starts php-fpm: `proc:php-fpm`
/// counts every php-fpm process on the machine, so a pool started by a
/// test running beside it would be counted as its own.
pub(crate) fn one_php_fpm_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// One read of `spec` as the monitor thread makes it: the reading, and the
/// source's note. php-fpm marks a child idle only after the answer has
/// gone (its scoreboard lags the last request by a moment): the pool is
/// left to settle first, so that an idle pool reads as idle.
fn read(spec: &str) -> (Result<Reading, String>, Option<String>) {
    std::thread::sleep(Duration::from_millis(300));
    let spec = Spec::parse(spec).unwrap();
    let mut src = monitor::source::open(&spec, None, true, Duration::from_secs(2)).unwrap();
    let r = src.read(Duration::from_secs(2));
    (r, src.note())
}

fn fcgi_spec(listen: &FpmListen) -> String {
    match listen {
        FpmListen::Unix(p) => format!("fpm:fcgi+unix:{}:/fpm-status", p.display()),
        FpmListen::Tcp(port) => format!("fpm:fcgi://127.0.0.1:{port}/fpm-status"),
    }
}

/// An idle pool read every way: through its own socket the status request
/// is the one busy child (raw 1, net 0, a note on pm.status_listen);
/// through pm.status_listen nothing of the pool is busy (raw 0, no note).
#[test]
fn fcgi_status_over_unix_and_tcp_with_and_without_status_listen() {
    let _fpm = one_php_fpm_at_a_time();
    for tcp in [false, true] {
        let stack = Stack::start_fpm(
            StackKind::NginxPhpFpm,
            FpmOptions {
                children: 3,
                tcp,
                status_listen: true,
            },
        );
        let pool = fcgi_spec(&stack.fpm_listen().unwrap());
        let listener = fcgi_spec(&FpmListen::Unix(stack.fpm_status_socket().unwrap()));
        let through_nginx = format!("fpm:{}", stack.url("/fpm-status"));
        for spec in [&pool, &through_nginx] {
            let (r, note) = read(spec);
            let r = r.unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(r.get("active_processes_raw"), Some(1.0), "{spec}: {r:?}");
            assert_eq!(r.get("active_processes"), Some(0.0), "{spec}");
            assert_eq!(
                r.get("idle_processes"),
                r.get("total_processes"),
                "{spec}: every child is idle but ours"
            );
            assert_eq!(r.get("status_through_pool"), Some(1.0), "{spec}");
            let note = note.unwrap_or_else(|| panic!("{spec}: no note"));
            assert!(
                note.contains("pm.status_listen = /run/php/fpm-status.sock")
                    && note
                        .contains("--monitor fpm:fcgi+unix:/run/php/fpm-status.sock:/fpm-status"),
                "{note}"
            );
        }
        let (r, note) = read(&listener);
        let r = r.unwrap_or_else(|e| panic!("{listener}: {e}"));
        assert_eq!(r.get("active_processes_raw"), Some(0.0), "{r:?}");
        assert_eq!(r.get("active_processes"), Some(0.0));
        assert_eq!(r.get("status_through_pool"), Some(0.0));
        assert!(r.get("total_processes").unwrap() >= 1.0);
        assert_eq!(note, None);

        // A path that is not pm.status_path: php-fpm's 404, explained.
        let wrong = pool
            .replace(":/fpm-status", ":/nope")
            .replace("/fpm-status", "/nope");
        let e = read(&wrong).0.unwrap_err();
        assert!(e.contains("pm.status_path") && e.contains("404"), "{e}");
    }
}

/// `sleep.php?ms=300` at 10 connections on 2 children: pm.status_listen
/// keeps answering and shows the pool full (2 of 2), while the status read
/// from the pool's own socket waits behind the queue and fails: gaps
/// (nulls), never the pre-load value carried on.
#[test]
fn a_full_pool_is_seen_through_status_listen_and_is_a_gap_through_the_pool() {
    let _fpm = one_php_fpm_at_a_time();
    let stack = Stack::start_fpm(
        StackKind::NginxPhpFpm,
        FpmOptions {
            children: 2,
            tcp: false,
            status_listen: true,
        },
    );
    let FpmListen::Unix(sock) = stack.fpm_listen().unwrap() else {
        panic!("a unix socket")
    };
    let listener = stack.fpm_status_socket().unwrap();
    let own = format!("fpm:fcgi+unix:{}:/fpm-status", listener.display());
    let pool = format!("fpm:fcgi+unix:{}:/fpm-status", sock.display());
    let (out, r) = super::run_json(
        "fpm-fcgi-saturated",
        &[
            &stack.url("/sleep.php?ms=300"),
            "-c",
            "10",
            "-d",
            "5s",
            "--monitor",
            &own,
            "--monitor",
            &pool,
            "--monitor-interval",
            "1s",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let responses = r["summary"]["responses"].as_u64().unwrap();
    // nginx logged every response (and those cut at the end), and no
    // status read: they never went through it.
    let log = stack.wait_access_log(responses as usize);
    assert!(log.len() as u64 >= responses, "{} < {responses}", log.len());
    assert!(log.iter().all(|e| e.path == "/sleep.php?ms=300"));

    let listen_src = source(&r, &format!("fpm:fcgi+unix:{}", listener.display()));
    assert_eq!(listen_src["state"], "ok", "{}", listen_src);
    let active = values(listen_src, "active_processes");
    assert!(active.len() >= 3, "status_listen answered {active:?}");
    assert!(
        listen_src["label"]
            .as_str()
            .unwrap()
            .ends_with("answered outside the pool's children"),
        "{}",
        listen_src["label"]
    );
    assert_eq!(
        active.iter().copied().fold(0.0, f64::max),
        2.0,
        "2 of 2 busy: {active:?}"
    );
    // Nothing to subtract through pm.status_listen. (The pool's own-socket
    // source reads at the same instants: its read, listed among the pool's
    // children, is not this one's — each read has its own token.)
    assert_eq!(values(listen_src, "active_processes_raw"), active);
    assert!(values(listen_src, "status_through_pool")
        .iter()
        .all(|v| *v == 0.0));
    assert!(values(listen_src, "total_processes")
        .iter()
        .all(|v| *v == 2.0));

    let pool_src = source(&r, &format!("fpm:fcgi+unix:{}", sock.display()));
    assert!(
        pool_src["failures"].as_u64().unwrap() >= 1,
        "the pool's own socket answered through a full pool: {pool_src}"
    );
    let raw: Vec<Value> = pool_src["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "active_processes")
        .unwrap()["values"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        raw.iter().skip(1).any(Value::is_null),
        "a failed read is a gap: {raw:?}"
    );
    // The figures come from the listener (the first fpm source), and the
    // pool's note is said once.
    assert_eq!(
        r["monitor"]["server"]["workers_busy_max"].as_f64(),
        Some(2.0)
    );
    let notes = r["monitor"]["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].as_str().unwrap().contains("pm.status_listen"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("pm.status_listen =").count(), 1, "{text}");
    assert!(
        text.contains(&format!("  Monitors    {own} — php-fpm status at ")),
        "{text}"
    );
}

/// The HTTP form through nginx asks for `?json&full` too, and the status
/// read of an idle pool through the pool reports its own child net.
#[test]
fn the_http_form_through_nginx_subtracts_its_own_child_in_a_run() {
    let _fpm = one_php_fpm_at_a_time();
    let stack = Stack::start_with_children(StackKind::NginxPhpFpm, 2);
    let fpm = stack.status_url(StatusPage::Fpm).unwrap();
    let (out, r) = super::run_json(
        "fpm-http-own-child",
        &[
            &stack.url("/hello.php"),
            "-c",
            "1",
            "-d",
            "2s",
            "--monitor",
            &format!("fpm:{fpm}"),
            "--monitor-interval",
            "200ms",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let src = source(&r, "fpm:http://");
    assert!(
        src["spec"]
            .as_str()
            .unwrap()
            .ends_with("/fpm-status?json&full"),
        "{}",
        src["spec"]
    );
    let raw = values(src, "active_processes_raw");
    let net = values(src, "active_processes");
    assert!(!raw.is_empty() && raw.iter().all(|v| *v >= 1.0), "{raw:?}");
    for (n, r) in net.iter().zip(&raw) {
        assert_eq!(*n, r - 1.0, "net {net:?} raw {raw:?}");
    }
    assert!(values(src, "status_through_pool").iter().all(|v| *v == 1.0));
}

/// Apache's mod_proxy_fcgi passes the query on too: the read finds its
/// own child there as well.
#[test]
fn through_apache_the_status_request_is_found_and_subtracted() {
    let _fpm = one_php_fpm_at_a_time();
    let stack = Stack::start(StackKind::ApacheEventPhpFpm);
    let url = stack.status_url(StatusPage::Fpm).unwrap();
    let (r, note) = read(&format!("fpm:{url}"));
    let r = r.unwrap();
    assert_eq!(r.get("status_through_pool"), Some(1.0), "{r:?}");
    assert_eq!(r.get("active_processes_raw"), Some(1.0));
    assert_eq!(r.get("active_processes"), Some(0.0));
    assert!(note.is_some());
}

/// A malformed FastCGI spec, and a socket nobody listens on: refused
/// before any load, naming the spec and the forms.
#[test]
fn bad_fcgi_specs_fail_before_any_load() {
    let serve = super::support::ServeProcess::start(&["--threads", "1"]);
    let run = |spec: &str| {
        let out = super::yace()
            .args(["run", &serve.url("/"), "-n", "5", "--monitor", spec])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{spec}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = run("fpm:fcgi://127.0.0.1/status");
    assert!(
        err.contains("--monitor \"fpm:fcgi://127.0.0.1/status\"")
            && err.contains("no port")
            && err.contains("fpm:fcgi+unix:/path/to.sock[:/STATUS_PATH]"),
        "{err}"
    );
    let err = run("fpm:fcgi+unix:run/php.sock:/status");
    assert!(err.contains("not absolute"), "{err}");
    let gone = super::support::temp_path("no-fpm.sock");
    let err = run(&format!("fpm:fcgi+unix:{}:/status", gone.display()));
    assert!(
        err.contains(&format!("no socket at {}", gone.display())),
        "{err}"
    );
}
