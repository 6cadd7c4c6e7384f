//! Connection-level HTTP/1.x behaviour: keep-alive, pipelining, HEAD,
//! closing, request bodies and refusing bad heads.

use crate::common::{start, Client};

#[test]
fn keep_alive_serves_many_requests_on_one_connection() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    for _ in 0..5 {
        let r = c.get("/");
        assert_eq!(r.status, 200);
        assert_eq!(r.text(), "hello world\n");
        assert_eq!(r.header("content-type"), Some("text/plain"));
        assert_eq!(r.header("content-length"), Some("12"));
        assert_eq!(r.header("connection"), None);
        let server_header = r.header("server").unwrap();
        assert_eq!(
            server_header,
            concat!("yace-target/", env!("CARGO_PKG_VERSION"))
        );
    }
    let stats = server.stats();
    assert_eq!(stats.connections, 1);
    assert_eq!(stats.requests, 5);
    server.shutdown();
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    c.send(
        "GET / HTTP/1.1\r\n\r\n\
         GET /status/503 HTTP/1.1\r\n\r\n\
         GET /bytes/3 HTTP/1.1\r\n\r\n\
         POST /echo HTTP/1.1\r\nContent-Length: 4\r\n\r\nping\
         GET /status/201 HTTP/1.1\r\n\r\n\
         GET / HTTP/1.1\r\n\r\n",
    );
    let statuses: Vec<u16> = (0..6)
        .map(|i| {
            let r = c.response();
            if i == 3 {
                assert_eq!(r.body, b"ping");
            }
            r.status
        })
        .collect();
    assert_eq!(statuses, [200, 503, 200, 200, 201, 200]);
    assert_eq!(server.stats().requests, 6);
}

#[test]
fn a_pipelined_burst_split_mid_head_is_reassembled() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    let burst = "GET / HTTP/1.1\r\n\r\n".repeat(50);
    let (a, b) = burst.split_at(burst.len() / 2 + 3);
    c.send(a);
    std::thread::sleep(std::time::Duration::from_millis(20));
    c.send(b);
    for _ in 0..50 {
        assert_eq!(c.response().text(), "hello world\n");
    }
    assert_eq!(server.stats().by_route["/"], 50);
}

#[test]
fn head_gets_the_get_headers_without_a_body() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    for (path, len) in [
        ("/", "12"),
        ("/bytes/100000", "100000"),
        ("/status/503", "24"),
    ] {
        c.send(format!("HEAD {path} HTTP/1.1\r\n\r\n"));
        let r = c.head_response();
        assert_eq!(r.header("content-length"), Some(len), "{path}");
        // Had the server sent a body, this next response would not parse.
        let r = c.get("/status/202");
        assert_eq!(r.status, 202, "after HEAD {path}");
    }
    c.send("HEAD /chunked HTTP/1.1\r\n\r\n");
    assert_eq!(
        c.head_response().header("transfer-encoding"),
        Some("chunked")
    );
    assert_eq!(c.get("/").text(), "hello world\n");
}

#[test]
fn connection_close_from_the_client_is_honoured() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    c.send("GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
    let r = c.response();
    assert_eq!(r.text(), "hello world\n");
    assert_eq!(r.header("connection"), Some("close"));
    assert!(c.closed());
}

#[test]
fn http10_closes_unless_keep_alive_was_asked_for() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    c.send("GET /status/200 HTTP/1.0\r\n\r\n");
    let r = c.response();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("connection"), Some("close"));
    assert!(c.closed());

    let mut c = Client::connect(server.local_addr());
    for _ in 0..2 {
        c.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        let r = c.response();
        assert_eq!(r.header("connection"), Some("keep-alive"));
        assert_eq!(r.text(), "hello world\n");
    }
    // HTTP/1.0 has no chunked coding, so /chunked sends a plain body.
    c.send("GET /chunked?chunks=2&size=5 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    let r = c.response();
    assert_eq!(r.header("transfer-encoding"), None);
    assert_eq!(r.body.len(), 10);
}

#[test]
fn request_bodies_are_read_and_discarded() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    c.send("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n01234");
    std::thread::sleep(std::time::Duration::from_millis(20));
    c.send("56789");
    assert_eq!(c.response().text(), "hello world\n");

    c.send("POST /status/201 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab");
    std::thread::sleep(std::time::Duration::from_millis(20));
    c.send("c\r\n10\r\n0123456789abcdef\r\n0\r\n\r\nGET /status/202 HTTP/1.1\r\n\r\n");
    assert_eq!(c.response().status, 201);
    assert_eq!(c.response().status, 202);

    // A large body crossing many reads.
    let body = vec![b'z'; 300_000];
    c.send(format!(
        "PUT /bytes/2 HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
        body.len()
    ));
    c.send(&body);
    assert_eq!(c.response().body.len(), 2);
    assert_eq!(server.stats().requests, 4);
}

#[test]
fn expect_100_continue_is_answered_before_the_body() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    c.send("POST /echo HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
    let interim = c.head_response();
    assert_eq!(interim.status, 100);
    c.send("hello");
    let r = c.response();
    assert_eq!((r.status, r.text()), (200, "hello"));
}

#[test]
fn malformed_head_gets_400_and_close() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    c.send("GET / HTTP/1.1\r\nBad Header\r\n\r\n");
    let r = c.response();
    assert_eq!(r.status, 400);
    assert_eq!(r.header("connection"), Some("close"));
    assert!(c.closed());

    let mut c = Client::connect(server.local_addr());
    c.send("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    assert_eq!(c.response().status, 400);
    assert!(c.closed());
    let stats = server.stats();
    // An unreadable head has no route; a bad body belongs to its route.
    assert_eq!(stats.by_route["other"], 1);
    assert_eq!(stats.by_route["/"], 1);
    assert_eq!(stats.by_status[&400], 2);
}

#[test]
fn oversized_head_gets_431_and_close() {
    let server = start();
    let mut c = Client::connect(server.local_addr());
    // Large but allowed: grows the read buffer.
    let big = "a".repeat(30_000);
    c.send(format!("GET / HTTP/1.1\r\nX-Big: {big}\r\n\r\n"));
    assert_eq!(c.response().status, 200);

    let huge = "a".repeat(70_000);
    c.send(format!("GET / HTTP/1.1\r\nX-Huge: {huge}\r\n\r\n"));
    let r = c.response();
    assert_eq!(r.status, 431);
    assert_eq!(r.header("connection"), Some("close"));
    assert!(c.closed());
}
