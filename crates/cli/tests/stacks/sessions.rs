//! PHP file sessions: requests sharing one PHPSESSID wait for each other
//! (the session file's lock), others run side by side.

use crate::client::{Conn, Response};
use crate::harness::{Stack, StackKind};
use crate::unique_sid;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

#[test]
fn nginx_php_fpm() {
    check_sessions(StackKind::NginxPhpFpm);
}

#[test]
fn apache_prefork_mod_php() {
    check_sessions(StackKind::ApachePreforkModPhp);
}

#[test]
fn apache_event_php_fpm() {
    check_sessions(StackKind::ApacheEventPhpFpm);
}

#[test]
fn nginx_proxy_apache() {
    check_sessions(StackKind::NginxProxyApache);
}

const HOLD_MS: u64 = 300;

/// Sends one request per `(path, session id)` at the same moment, each on
/// its own (already open) connection; returns the wall time from the first
/// send to the last response, and the responses.
fn at_once(stack: &Stack, requests: &[(String, Option<String>)]) -> (Duration, Vec<Response>) {
    let barrier = Arc::new(Barrier::new(requests.len()));
    let threads: Vec<_> = requests
        .iter()
        .cloned()
        .map(|(path, sid)| {
            let barrier = barrier.clone();
            let mut conn = Conn::open(&stack.url("/"));
            std::thread::spawn(move || {
                let cookie = sid.map(|s| format!("PHPSESSID={s}"));
                let headers: Vec<(&str, &str)> =
                    cookie.iter().map(|c| ("Cookie", c.as_str())).collect();
                barrier.wait();
                let start = Instant::now();
                let resp = conn.get(&path, &headers, true);
                (start, Instant::now(), resp)
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let first = results.iter().map(|r| r.0).min().unwrap();
    let last = results.iter().map(|r| r.1).max().unwrap();
    (last - first, results.into_iter().map(|r| r.2).collect())
}

/// Serialised, two requests take at least two holds; side by side, about
/// one. A loaded machine can stretch one try past the limit: up to 3 tries.
const OVERLAP_MAX: Duration = Duration::from_millis(500);
const TRIES: usize = 3;

fn check_sessions(kind: StackKind) {
    let stack = Stack::start(kind);
    let name = stack.name();
    let path = |i: u32| format!("/session.php?ms={HOLD_MS}&i={i}");
    let mut next = 0u32;
    let mut pair = |sids: [Option<String>; 2]| {
        next += 2;
        let requests = [
            (path(next - 1), sids[0].clone()),
            (path(next), sids[1].clone()),
        ];
        at_once(&stack, &requests)
    };

    // One session id twice: the second waits for the first's lock.
    let sid = unique_sid("same");
    let (took, resps) = pair([Some(sid.clone()), Some(sid.clone())]);
    for r in &resps {
        assert_eq!(
            (r.status, r.text()),
            (200, format!("{sid}\n")),
            "{name}: {r:?}"
        );
    }
    assert!(
        took >= Duration::from_millis(2 * HOLD_MS),
        "{name}: one session id, 2 requests took only {took:?}"
    );

    // Two session ids: side by side.
    let mut tooks = Vec::new();
    for _ in 0..TRIES {
        let (a, b) = (unique_sid("a"), unique_sid("b"));
        let (took, resps) = pair([Some(a.clone()), Some(b.clone())]);
        assert_eq!(resps[0].text(), format!("{a}\n"), "{name}: {:?}", resps[0]);
        assert_eq!(resps[1].text(), format!("{b}\n"), "{name}: {:?}", resps[1]);
        tooks.push(took);
        if took < OVERLAP_MAX {
            break;
        }
    }
    assert!(
        tooks.last().unwrap() < &OVERLAP_MAX,
        "{name}: two session ids, 2 requests took {tooks:?}"
    );

    // No cookie: each gets a new session, side by side.
    let mut tooks = Vec::new();
    for _ in 0..TRIES {
        let (took, resps) = pair([None, None]);
        let ids: Vec<String> = resps
            .iter()
            .map(|r| r.text().trim_end().to_string())
            .collect();
        assert_ne!(ids[0], ids[1], "{name}: two new sessions got one id");
        for (r, id) in resps.iter().zip(&ids) {
            assert_eq!(r.status, 200, "{name}: {r:?}");
            let cookie = r.header("Set-Cookie").unwrap_or("");
            assert!(
                cookie.starts_with(&format!("PHPSESSID={id};")),
                "{name}: Set-Cookie {cookie:?}"
            );
        }
        tooks.push(took);
        if took < OVERLAP_MAX {
            break;
        }
    }
    assert!(
        tooks.last().unwrap() < &OVERLAP_MAX,
        "{name}: no cookie, 2 requests took {tooks:?}"
    );

    // The servers saw every request hold its session for HOLD_MS.
    let sent = next as usize;
    let mut logs = vec![("front", stack.wait_access_log(sent))];
    if let Some(backend) = stack.wait_backend_log(sent) {
        logs.push(("backend", backend));
    }
    let hold = HOLD_MS * 1000;
    for (which, log) in logs {
        assert_eq!(log.len(), sent, "{name} {which} log:\n{log:#?}");
        let span = |i: u32| {
            let e = log
                .iter()
                .find(|e| e.path == path(i))
                .unwrap_or_else(|| panic!("{name} {which}: no line for {}:\n{log:#?}", path(i)));
            assert_eq!(e.status, 200, "{name} {which}: {e:?}");
            assert!(e.duration_us.unwrap() >= hold, "{name} {which}: {e:?}");
            let end = e.end_unix_us.unwrap();
            (end - e.duration_us.unwrap(), end)
        };
        for i in 1..=next {
            span(i);
        }
        // The lock: from the first start to the last end of the same-id
        // pair, two holds passed, however late either request reached the
        // server (nginx logs whole milliseconds: allow 2 ms).
        let (first, last) = (span(1).0.min(span(2).0), span(1).1.max(span(2).1));
        assert!(
            last - first + 2000 >= 2 * hold,
            "{name} {which}: same-id requests took {} us in all:\n{log:#?}",
            last - first
        );
    }
}
