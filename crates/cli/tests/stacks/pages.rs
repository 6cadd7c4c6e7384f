//! Every stack serves each page with the right status and body, and its
//! access log has exactly one matching line per request.

use crate::client::{get_once, Conn, Response};
use crate::harness::{LogEntry, Server, Stack, StackKind, StatusPage};
use std::collections::HashSet;
use std::time::Duration;

#[test]
fn nginx_static() {
    check_pages(StackKind::NginxStatic);
}

#[test]
fn nginx_php_fpm() {
    check_pages(StackKind::NginxPhpFpm);
}

#[test]
fn apache_prefork_mod_php() {
    check_pages(StackKind::ApachePreforkModPhp);
}

#[test]
fn apache_event_php_fpm() {
    check_pages(StackKind::ApacheEventPhpFpm);
}

#[test]
fn nginx_proxy_apache() {
    check_pages(StackKind::NginxProxyApache);
}

/// The status pages (`yace --monitor`'s targets) answer, and stay out of
/// the access logs.
#[test]
fn status_pages() {
    let expect = [
        (StatusPage::Nginx, "Active connections:"),
        (StatusPage::Apache, "BusyWorkers:"),
        (StatusPage::Fpm, "\"active processes\""),
    ];
    for kind in [StackKind::NginxPhpFpm, StackKind::ApacheEventPhpFpm] {
        let stack = Stack::start(kind);
        let name = stack.name();
        let pid = stack.fpm_master_pid().expect("php-fpm master pid");
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        assert!(comm.starts_with("php-fpm"), "{name}: pid {pid} is {comm:?}");
        let mut served = 0;
        for (page, text) in expect {
            let Some(url) = stack.status_url(page) else {
                continue;
            };
            served += 1;
            let rest = url.strip_prefix("http://").unwrap();
            let r = get_once(&url, &rest[rest.find('/').unwrap()..], &[]);
            assert_eq!(r.status, 200, "{name} {url}: {r:?}");
            assert!(r.text().contains(text), "{name} {url}: {}", r.text());
        }
        assert_eq!(served, 2, "{name}: one front-server page and php-fpm's");
        assert_eq!(stack.access_log(), vec![], "{name}: status pages logged");
    }
}

const SLEEP_MS: u64 = 200;

/// A request sent, and whether it came after another on its connection.
#[derive(Debug)]
struct Sent {
    path: String,
    reused: bool,
    resp: Response,
}

/// Sends requests, giving each a unique path (`?i=N`), and keeps them.
#[derive(Debug, Default)]
struct Recorder {
    sent: Vec<Sent>,
}

impl Recorder {
    /// GET `path?i=N` on `conn`; `reused`: not the connection's first request.
    fn get(&mut self, conn: &mut Conn, reused: bool, path: &str, close: bool) -> &Response {
        let sep = if path.contains('?') { '&' } else { '?' };
        let path = format!("{path}{sep}i={}", self.sent.len());
        let resp = conn.get(&path, &[], close);
        self.sent.push(Sent { path, reused, resp });
        &self.sent.last().unwrap().resp
    }
}

fn check_pages(kind: StackKind) {
    let stack = Stack::start(kind);
    let name = stack.name();
    let index = std::fs::read(stack.docroot().join("index.html")).unwrap();
    assert!(
        (1024..=2048).contains(&index.len()),
        "index.html is {} bytes",
        index.len()
    );
    let mut rec = Recorder::default();

    // Keep-alive: one connection, requests one after another.
    let mut conn = Conn::open(&stack.url("/"));
    let r = rec.get(&mut conn, false, "/index.html", false);
    assert_eq!(r.status, 200, "{name} /index.html: {r:?}");
    assert_eq!(r.body, index, "{name}: /index.html is not the file");
    assert!(
        r.header("Content-Type")
            .unwrap_or("")
            .starts_with("text/html"),
        "{name}: {r:?}"
    );
    let r = rec.get(&mut conn, true, "/missing.html", false);
    assert_eq!(r.status, 404, "{name} /missing.html: {r:?}");

    if kind.serves_php() {
        let r = rec.get(&mut conn, true, "/hello.php", false);
        assert_eq!(
            (r.status, r.text().as_str()),
            (200, "hello world\n"),
            "{name} /hello.php: {r:?}"
        );

        let mut lengths = HashSet::new();
        for _ in 0..5 {
            let r = rec.get(&mut conn, true, "/random.php", false);
            assert_eq!(r.status, 200, "{name} /random.php: {r:?}");
            assert!(
                (100..=2000).contains(&r.body.len()),
                "{name} /random.php: {} bytes",
                r.body.len()
            );
            assert!(
                r.body.iter().all(|&b| b == b'x'),
                "{name} /random.php body: {}",
                r.text()
            );
            lengths.insert(r.body.len());
        }
        assert!(
            lengths.len() >= 2,
            "{name}: /random.php lengths don't vary: {lengths:?}"
        );

        let r = rec.get(&mut conn, true, &format!("/sleep.php?ms={SLEEP_MS}"), false);
        assert_eq!(
            (r.status, r.text().as_str()),
            (200, "slept\n"),
            "{name} /sleep.php: {r:?}"
        );
        assert!(
            r.elapsed >= Duration::from_millis(SLEEP_MS),
            "{name}: /sleep.php took {:?}",
            r.elapsed
        );

        let r = rec.get(&mut conn, true, "/session.php?ms=0", false);
        assert_eq!(r.status, 200, "{name} /session.php: {r:?}");
        let sid = r.text().trim_end().to_string();
        assert!(
            !sid.is_empty() && sid.chars().all(|c| c.is_ascii_alphanumeric()),
            "{name}: session id {sid:?}"
        );
        let cookie = r.header("Set-Cookie").unwrap_or("");
        assert!(
            cookie.starts_with(&format!("PHPSESSID={sid};")),
            "{name}: Set-Cookie {cookie:?}"
        );

        let r = rec.get(&mut conn, true, "/missing.php", true);
        assert_eq!(r.status, 404, "{name} /missing.php: {r:?}");
    } else {
        let r = rec.get(&mut conn, true, "/hello.php", true);
        assert_eq!(r.status, 404, "{name} must not serve PHP (source!): {r:?}");
        assert!(!r.text().contains("<?php"), "{name} served PHP source");
    }
    assert!(
        conn.closed_by_server(),
        "{name}: connection still open after Connection: close"
    );

    // A new connection per request.
    let more: &[&str] = if kind.serves_php() {
        &["/index.html", "/hello.php", "/random.php"]
    } else {
        &["/index.html", "/index.html"]
    };
    for path in more {
        let mut conn = Conn::open(&stack.url("/"));
        let r = rec.get(&mut conn, false, path, true);
        assert_eq!(r.status, 200, "{name} {path} (no keep-alive): {r:?}");
    }

    let log = stack.wait_access_log(rec.sent.len());
    check_log(name, stack.front_server(), &rec.sent, &log, false);
    if let Some(backend) = stack.wait_backend_log(rec.sent.len()) {
        check_log(name, Server::Apache, &rec.sent, &backend, true);
    }
}

/// One log line per request, matched by its unique path. `backend`: the
/// Apache behind nginx, which saw the same requests on nginx's own
/// connections (so only status and body are compared).
fn check_log(name: &str, server: Server, sent: &[Sent], log: &[LogEntry], backend: bool) {
    let which = if backend { "backend" } else { "front" };
    assert_eq!(
        log.len(),
        sent.len(),
        "{name}: {which} log has {} lines for {} requests:\n{log:#?}",
        log.len(),
        sent.len()
    );
    for s in sent {
        let e = log
            .iter()
            .find(|e| e.path == s.path)
            .unwrap_or_else(|| panic!("{name}: no {which} log line for {}:\n{log:#?}", s.path));
        let what = format!("{name} {which} log for {}: {e:?}; response: status {}, head {} B, body {} B ({} B on the wire)",
            s.path, s.resp.status, s.resp.head_len, s.resp.body.len(), s.resp.wire_body_len);
        assert_eq!(e.method, "GET", "{what}");
        assert_eq!(e.status, s.resp.status, "{what}");
        let body = match server {
            Server::Nginx => s.resp.wire_body_len,
            Server::Apache => s.resp.body.len() as u64,
        };
        assert_eq!(e.body_bytes, body, "{what}");
        let duration = e.duration_us.expect("duration logged");
        if s.path.starts_with("/sleep.php") {
            assert!(duration >= SLEEP_MS * 1000, "{what}");
        }
        assert!(duration < 10_000_000, "{what}");
        if !backend {
            assert_eq!(
                e.total_bytes,
                Some(s.resp.head_len + s.resp.wire_body_len),
                "{what}"
            );
            assert_eq!(e.keepalive_reused, Some(s.reused), "{what}");
        }
    }
}
