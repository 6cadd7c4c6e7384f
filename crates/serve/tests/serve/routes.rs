//! What each route answers.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::common::{start, Client};
use yace_serve::{Config, Server};

#[test]
fn bytes_sends_exactly_n_bytes() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    for n in [0usize, 1, 64, 65_536, 65_537, 70_000, 5 * 1024 * 1024 + 3] {
        let r = c.get(&format!("/bytes/{n}"));
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-length"), Some(n.to_string().as_str()));
        assert_eq!(r.body.len(), n);
        assert!(
            r.body.iter().all(|b| b.is_ascii_graphic() || *b == b'\n'),
            "printable filler"
        );
    }
    // The response after a streamed body starts exactly where it ended.
    assert_eq!(c.get("/").text(), "hello world\n");
    assert_eq!(c.get("/bytes/1073741825").status, 400);
    assert_eq!(c.get("/bytes/abc").status, 400);
    let stats = server.stats();
    assert_eq!(stats.by_route["/bytes"], 9);
    assert_eq!(stats.by_status[&400], 2);
}

#[test]
fn chunked_framing_is_valid() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    let r = c.get("/chunked");
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    assert_eq!(r.header("content-length"), None);
    assert_eq!(r.chunks.as_deref(), Some(&[32, 32, 32, 32][..]));

    let r = c.get("/chunked?chunks=3&size=100000");
    assert_eq!(r.chunks.as_deref(), Some(&[100_000; 3][..]));
    assert_eq!(r.body.len(), 300_000);

    let r = c.get("/chunked?chunks=5000&size=7");
    assert_eq!(r.chunks.as_ref().unwrap().len(), 5000);
    assert!(r.chunks.as_ref().unwrap().iter().all(|&s| s == 7));

    let r = c.get("/chunked?chunks=0");
    assert_eq!(r.chunks.as_deref(), Some(&[][..]));
    assert_eq!(c.get("/chunked?size=0").status, 400);
    assert_eq!(c.get("/").text(), "hello world\n");
}

#[test]
fn close_route_closes_the_connection() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    let r = c.get("/close");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("connection"), Some("close"));
    assert!(c.closed());
    assert_eq!(server.stats().by_route["/close"], 1);
}

#[test]
fn status_route() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    let r = c.get("/status/503");
    assert_eq!(r.status, 503);
    assert_eq!(r.text(), "503 Service Unavailable\n");
    let r = c.get("/status/599");
    assert_eq!(r.status, 599);
    let r = c.get("/status/204");
    assert_eq!((r.status, r.header("content-length")), (204, None));
    assert!(r.body.is_empty());
    for bad in [
        "/status/199",
        "/status/100",
        "/status/600",
        "/status/x",
        "/status",
    ] {
        assert_eq!(c.get(bad).status, 400, "{bad}");
    }
    let stats = server.stats();
    assert_eq!(stats.by_route["/status"], 8);
    assert_eq!(stats.by_status[&503], 1);
    assert_eq!(stats.by_status[&599], 1);
    assert_eq!(stats.by_status[&204], 1);
    assert_eq!(stats.by_status[&400], 5);
}

#[test]
fn vary_length_stays_in_range_and_varies() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    let mut seen = BTreeSet::new();
    for _ in 0..60 {
        let n = c.get("/vary?min=10&max=20").body.len();
        assert!((10..=20).contains(&n), "{n}");
        seen.insert(n);
    }
    assert!(seen.len() > 3, "lengths barely vary: {seen:?}");
    let mut seen = BTreeSet::new();
    for _ in 0..60 {
        let n = c.get("/vary").body.len();
        assert!((1..=2048).contains(&n), "{n}");
        seen.insert(n);
    }
    assert!(seen.len() > 10, "lengths barely vary: {seen:?}");
    assert_eq!(c.get("/vary?min=9&max=9").body.len(), 9);
    assert_eq!(c.get("/vary?min=9&max=8").status, 400);
}

#[test]
fn sleep_waits_without_holding_up_other_connections() {
    // One worker thread: a sleep that blocked it would stall everything.
    let server = Server::start(Config {
        threads: 1,
        ..Config::default()
    })
    .unwrap();
    let addr = server.local_addr();
    let sleeper = std::thread::spawn(move || {
        let started = Instant::now();
        let r = Client::connect(addr).get("/sleep?ms=300");
        (r.text().to_owned(), started.elapsed())
    });
    std::thread::sleep(Duration::from_millis(50));
    let started = Instant::now();
    let mut c = Client::connect(addr);
    for _ in 0..20 {
        assert_eq!(c.get("/").status, 200);
    }
    // All 20 answered while /sleep still sleeps: an order, not a time
    // bound (a busy machine slows both alike).
    assert!(
        !sleeper.is_finished(),
        "/ blocked by /sleep ({:?} for 20 requests)",
        started.elapsed()
    );
    let (body, took) = sleeper.join().unwrap();
    assert_eq!(body, "slept 300 ms\n");
    assert!(took >= Duration::from_millis(300), "{took:?}");
}

fn session_get(
    addr: std::net::SocketAddr,
    path: &str,
    cookie: Option<&str>,
) -> crate::common::Response {
    let mut c = Client::connect(addr);
    let cookie = cookie.map(|id| format!("Cookie: theme=dark; YACESESSID={id}\r\n"));
    c.send(format!(
        "GET {path} HTTP/1.1\r\n{}\r\n",
        cookie.unwrap_or_default()
    ));
    c.response()
}

/// Runs two requests at once and returns how long the pair took.
fn concurrently(addr: std::net::SocketAddr, a: &str, b: &str) -> Duration {
    let started = Instant::now();
    let (a, b) = (a.to_owned(), b.to_owned());
    let one = std::thread::spawn(move || session_get(addr, "/session?ms=400", Some(&a)));
    let two = std::thread::spawn(move || session_get(addr, "/session?ms=400", Some(&b)));
    assert_eq!(one.join().unwrap().status, 200);
    assert_eq!(two.join().unwrap().status, 200);
    started.elapsed()
}

#[test]
fn session_sets_a_cookie_and_serializes_its_requests() {
    // One worker thread, so that overlapping sessions also show that the
    // wait does not block it.
    let server = Server::start(Config {
        threads: 1,
        ..Config::default()
    })
    .unwrap();
    let addr = server.local_addr();
    let r = session_get(addr, "/session", None);
    let cookie = r.header("set-cookie").expect("new session gets a cookie");
    let id = cookie
        .strip_prefix("YACESESSID=")
        .and_then(|rest| rest.strip_suffix("; Path=/"))
        .unwrap_or_else(|| panic!("cookie {cookie:?}"))
        .to_owned();
    assert!(
        id.len() >= 16 && id.bytes().all(|b| b.is_ascii_alphanumeric()),
        "{id}"
    );
    assert_eq!(r.text(), format!("session {id}\n"));

    let again = session_get(addr, "/session", Some(&id));
    assert_eq!(again.header("set-cookie"), None);
    assert_eq!(again.text(), format!("session {id}\n"));
    let other = session_get(addr, "/session", None);
    assert_ne!(other.header("set-cookie"), Some(cookie));

    let same = concurrently(addr, &id, &id);
    assert!(
        same >= Duration::from_millis(800),
        "same session overlapped: {same:?}"
    );
    let different = concurrently(addr, &id, "someoneelse");
    // Overlapped: half the serialized pair's time (the control measured
    // just before), not all of it; a busy machine slows both alike.
    assert!(
        different + Duration::from_millis(200) < same,
        "sessions serialized: {different:?}, one session {same:?}"
    );
    assert_eq!(server.stats().by_route["/session"], 7);
}

#[test]
fn echo_returns_the_request_body() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    c.send("POST /echo HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\": true}");
    let r = c.response();
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.text(), "{\"a\": true}");

    c.send(
        "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
    );
    let r = c.response();
    assert_eq!(r.header("content-type"), Some("application/octet-stream"));
    assert_eq!(r.text(), "abcde");

    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    c.send(format!(
        "PUT /echo HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
        big.len()
    ));
    c.send(&big);
    assert_eq!(c.response().body, big);

    assert_eq!(c.get("/echo").body, b"");

    // Too large to hold: refused before the body is read.
    let mut c = Client::connect(server.local_addr());
    c.send("POST /echo HTTP/1.1\r\nContent-Length: 20000000\r\n\r\n");
    let r = c.response();
    assert_eq!((r.status, r.header("connection")), (413, Some("close")));
    assert!(c.closed());
    assert_eq!(server.stats().by_route["/echo"], 5);
}

#[test]
fn unknown_paths_are_404_counted_as_other() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    for path in ["/nope", "/index.html", "/sleep/", "/bytes-1", "/a/b/c?x=1"] {
        let r = c.get(path);
        assert_eq!((r.status, r.text()), (404, "not found\n"), "{path}");
    }
    let stats = server.stats();
    assert_eq!(stats.by_route.len(), 1, "{stats:?}");
    assert_eq!(stats.by_route["other"], 5);
    assert_eq!(stats.by_status[&404], 5);
}
