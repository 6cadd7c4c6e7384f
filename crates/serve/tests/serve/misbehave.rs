//! The `/bad/...` routes, `?split=N` and [`Hostile`], byte for byte on the
//! wire: what each sends, how the connection ends, and what is counted.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use yace_serve::{Config, Hostile, OnAccept, Server};

const SERVER: &str = concat!("Server: yace-target/", env!("CARGO_PKG_VERSION"));

fn start() -> Server {
    Server::start(Config::default()).expect("server starts")
}

fn start_with(hostile: Hostile) -> Server {
    Server::start(Config {
        hostile,
        ..Config::default()
    })
    .expect("server starts")
}

/// How reading stopped.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// FIN.
    Closed,
    /// RST.
    Reset,
    /// Still open after `quiet` without a byte.
    Open,
}

struct Wire {
    stream: TcpStream,
}

impl Wire {
    fn connect(addr: SocketAddr) -> Wire {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        Wire { stream }
    }

    fn get(&mut self, path: &str) {
        self.send(&format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n"));
    }

    fn send(&mut self, s: &str) {
        self.stream.write_all(s.as_bytes()).unwrap();
    }

    /// Reads until the server closes, resets, or is quiet for `quiet`
    /// (or `limit` bytes have come); also returns how many reads it took.
    fn read_until(&mut self, quiet: Duration, limit: usize) -> (Vec<u8>, End, usize) {
        self.stream.set_read_timeout(Some(quiet)).unwrap();
        let mut out = Vec::new();
        let mut reads = 0;
        let mut buf = [0u8; 64 * 1024];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => return (out, End::Closed, reads),
                Ok(n) => {
                    reads += 1;
                    out.extend_from_slice(&buf[..n]);
                    if out.len() >= limit {
                        return (out, End::Open, reads);
                    }
                }
                Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                    return (out, End::Reset, reads)
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return (out, End::Open, reads)
                }
                Err(e) => panic!("read: {e}"),
            }
        }
    }

    fn read(&mut self) -> (String, End) {
        let (bytes, end, _) = self.read_until(Duration::from_millis(300), usize::MAX);
        (String::from_utf8(bytes).unwrap(), end)
    }
}

/// One request on a fresh connection: what came back and how it ended.
fn exchange(server: &Server, path: &str) -> (String, End) {
    let mut w = Wire::connect(server.local_addr());
    w.get(path);
    w.read()
}

fn head(status: &str, fields: &[&str]) -> String {
    let mut h = format!("HTTP/1.1 {status}\r\n{SERVER}\r\n");
    for f in fields {
        h.push_str(f);
        h.push_str("\r\n");
    }
    h.push_str("\r\n");
    h
}

const PATTERN: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-\n";

fn filler(n: usize) -> String {
    PATTERN.repeat(n / 64 + 1)[..n].to_owned()
}

/// The counters once the connections have ended.
fn settled(server: &Server) -> yace_serve::Stats {
    let mut last = server.stats();
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(50));
        let now = server.stats();
        if now == last {
            return now;
        }
        last = now;
    }
    last
}

#[test]
fn wrong_lengths_and_framing_are_sent_as_promised() {
    let s = start();
    let text = "Content-Type: text/plain";
    let cases: [(&str, String, End); 9] = [
        (
            "/bad/eof-body",
            head("200 OK", &[text, "Connection: close"]) + &filler(100),
            End::Closed,
        ),
        (
            "/bad/cl-short",
            head("200 OK", &[text, "Content-Length: 100"]) + &filler(50),
            End::Closed,
        ),
        (
            "/bad/cl-long",
            head("200 OK", &[text, "Content-Length: 10"]) + &filler(20),
            End::Open,
        ),
        (
            "/bad/cl-invalid",
            head("200 OK", &[text, "Content-Length: abc"]) + "abc",
            End::Closed,
        ),
        (
            "/bad/cl-dup",
            head(
                "200 OK",
                &[text, "Content-Length: 10", "Content-Length: 20"],
            ) + &filler(20),
            End::Closed,
        ),
        (
            "/bad/chunk-bad",
            head("200 OK", &[text, "Transfer-Encoding: chunked"])
                + "5\r\nhello\r\nnot-hex\r\nabc\r\n0\r\n\r\n",
            End::Closed,
        ),
        (
            "/bad/chunk-trunc",
            head("200 OK", &[text, "Transfer-Encoding: chunked"]) + "40\r\n" + &filler(20),
            End::Closed,
        ),
        (
            "/bad/204-body",
            head("204 No Content", &[]) + "stray bytes\n",
            End::Open,
        ),
        (
            "/bad/304-body",
            head("304 Not Modified", &["Content-Length: 12"]) + "stray bytes\n",
            End::Open,
        ),
    ];
    for (path, want, end) in cases {
        assert_eq!(exchange(&s, path), (want, end), "{path}");
    }
    let stats = settled(&s);
    assert_eq!(stats.requests, 9);
    assert_eq!(stats.by_route["/bad/cl-short"], 1);
    assert_eq!(stats.by_status[&200], 7);
    assert_eq!(stats.by_status[&204], 1);
    assert_eq!(stats.by_status[&304], 1);
}

#[test]
fn chunk_extensions_interim_responses_http10_and_head() {
    let s = start();
    let text = "Content-Type: text/plain";
    let (got, end) = exchange(&s, "/bad/chunk-ext");
    let want = head(
        "200 OK",
        &[text, "Transfer-Encoding: chunked", "Trailer: X-Checksum"],
    ) + "5;name=value\r\nhello\r\n6 ; q=\"a;b\"\r\n world\r\n\
         0;final\r\nX-Checksum: 42\r\nX-Note: trailers\r\n\r\n";
    assert_eq!((got, end), (want, End::Open));

    let (got, end) = exchange(&s, "/bad/continue");
    let want = "HTTP/1.1 100 Continue\r\n\r\n\
                HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
        .to_owned()
        + &head("200 OK", &[text, "Content-Length: 13"])
        + "final answer\n";
    assert_eq!((got, end), (want, End::Open));

    let (got, end) = exchange(&s, "/bad/http10");
    let want = format!(
        "HTTP/1.0 200 OK\r\n{SERVER}\r\n{text}\r\nContent-Length: 19\r\n\r\nan HTTP/1.0 answer\n"
    );
    assert_eq!((got, end), (want, End::Closed));

    let mut w = Wire::connect(s.local_addr());
    w.send("HEAD /bad/head-body HTTP/1.1\r\n\r\n");
    let want = head("200 OK", &[text, "Content-Length: 12"]) + "hello world\n";
    assert_eq!(w.read(), (want, End::Open));
}

#[test]
fn close_and_silent_count_the_request_without_a_status() {
    let s = start();
    assert_eq!(exchange(&s, "/bad/close"), (String::new(), End::Closed));
    let mut w = Wire::connect(s.local_addr());
    w.get("/bad/silent");
    assert_eq!(w.read(), (String::new(), End::Open));
    // A further request on the silent connection is not even read as one.
    w.get("/");
    assert_eq!(w.read(), (String::new(), End::Open));
    drop(w);
    let stats = settled(&s);
    assert_eq!(stats.requests, 2);
    assert_eq!(stats.by_route["/bad/close"], 1);
    assert_eq!(stats.by_route["/bad/silent"], 1);
    assert!(stats.by_status.is_empty(), "{stats:?}");
}

#[test]
fn reset_mid_body_sends_part_of_the_body_then_rst() {
    let s = start();
    let (got, end) = exchange(&s, "/bad/reset-mid-body");
    let want = head(
        "200 OK",
        &["Content-Type: text/plain", "Content-Length: 1000"],
    ) + &filler(100);
    assert_eq!((got, end), (want, End::Reset));
}

#[test]
fn drips_take_their_time_and_arrive_whole() {
    let s = start();
    let mut w = Wire::connect(s.local_addr());
    let t = Instant::now();
    w.get("/bad/drip-head?ms=2");
    let (got, end, reads) = w.read_until(Duration::from_millis(500), 1000);
    let head_len = got.len() - 13;
    assert!(got.ends_with(b"\r\n\r\ndripped head\n"));
    assert_eq!(end, End::Open);
    assert!(
        reads > head_len / 2,
        "{reads} reads for a {head_len}-byte head"
    );
    assert!(t.elapsed() >= Duration::from_millis(2 * (head_len as u64 - 1)));

    let t = Instant::now();
    w.get("/bad/drip-body?ms=5");
    let (got, _, reads) = w.read_until(Duration::from_millis(500), 1000);
    let got = String::from_utf8(got).unwrap();
    assert!(got.ends_with(&format!("Content-Length: 20\r\n\r\n{}", filler(20))));
    assert!(reads > 10, "{reads}");
    assert!(t.elapsed() >= Duration::from_millis(100));
    assert_eq!(settled(&s).requests, 2);
}

#[test]
fn huge_and_endless_heads() {
    let s = start();
    let mut w = Wire::connect(s.local_addr());
    w.get("/bad/huge-header?kb=200");
    let (got, end, _) = w.read_until(Duration::from_millis(300), usize::MAX);
    assert_eq!(end, End::Open);
    let text = String::from_utf8(got).unwrap();
    let huge = text.lines().find(|l| l.starts_with("X-Huge: ")).unwrap();
    assert_eq!(huge.len(), 8 + 200 * 1024);
    let tail = format!(
        "Content-Length: 0\r\nX-Huge: {}\r\n\r\n",
        "x".repeat(200 * 1024)
    );
    assert!(text.ends_with(&tail));
    // The head was complete and the connection is still usable.
    w.get("/");
    assert!(w.read().0.ends_with("hello world\n"));

    let mut w = Wire::connect(s.local_addr());
    w.get("/bad/endless-header");
    let (got, end, _) = w.read_until(Duration::from_secs(2), 4 << 20);
    assert_eq!(end, End::Open, "still going after {} bytes", got.len());
    assert!(got.len() >= 4 << 20);
    assert!(!got.windows(4).any(|x| x == b"\r\n\r\n"));
    drop(w);
    // The server notices the client has gone and stops writing.
    let before = settled(&s).bytes_out;
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(s.stats().bytes_out, before);
}

#[test]
fn idle_close_meets_the_next_request_with_a_close() {
    let s = start();
    let mut w = Wire::connect(s.local_addr());
    w.get("/bad/idle-close?ms=100");
    let (got, end) = w.read();
    assert!(got.ends_with("keep-alive, until idle\n"), "{got}");
    assert_eq!(end, End::Open, "a stale connection still looks open");
    // read() waited 300 ms: the connection is stale now.
    w.get("/");
    let (got, end) = w.read();
    assert_eq!(got, "");
    assert!(matches!(end, End::Closed | End::Reset), "{end:?}");

    // Requests that come in time are served as usual.
    let mut w = Wire::connect(s.local_addr());
    for _ in 0..3 {
        w.get("/bad/idle-close?ms=1000");
        let (got, _, _) = w.read_until(Duration::from_millis(50), usize::MAX);
        assert!(got.ends_with(b"until idle\n"));
    }
    drop(w);
    let stats = settled(&s);
    assert_eq!(
        stats.requests, 4,
        "the request met with a close is not counted"
    );
}

#[test]
fn close_every_n_closes_unannounced() {
    let s = start();
    let mut w = Wire::connect(s.local_addr());
    w.send("GET /bad/close-every?n=2 HTTP/1.1\r\n\r\nGET /bad/close-every?n=2 HTTP/1.1\r\n\r\n");
    let (got, end) = w.read();
    let one = head(
        "200 OK",
        &["Content-Type: text/plain", "Content-Length: 12"],
    ) + "close-every\n";
    assert_eq!((got, end), (one.repeat(2), End::Closed));
    assert_eq!(settled(&s).requests, 2);
}

#[test]
fn split_delivers_the_same_bytes_in_pieces() {
    let s = start();
    for path in ["/", "/chunked", "/bad/chunk-ext", "/bytes/100000"] {
        let (whole, _) = exchange(&s, path);
        for piece in [1usize, 7, 4096] {
            // Each piece costs a millisecond or two.
            if whole.len() / piece > 200 {
                continue;
            }
            let sep = if path.contains('?') { '&' } else { '?' };
            let mut w = Wire::connect(s.local_addr());
            w.get(&format!("{path}{sep}split={piece}"));
            let (got, _, reads) = w.read_until(Duration::from_millis(300), whole.len());
            assert_eq!(
                String::from_utf8(got).unwrap(),
                whole,
                "{path} split={piece}"
            );
            let pieces = whole.len().div_ceil(piece);
            assert!(reads * 2 >= pieces, "{path} split={piece}: {reads} reads");
        }
    }
    let (got, _) = exchange(&s, "/?split=0");
    assert!(got.starts_with("HTTP/1.1 400 "), "{got}");
}

#[test]
fn split_applies_to_the_one_response_that_asked() {
    let s = start();
    let mut w = Wire::connect(s.local_addr());
    // Pipelined: only the middle response is split.
    w.send("GET / HTTP/1.1\r\n\r\nGET /?split=2 HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n");
    let (got, _, _) = w.read_until(Duration::from_millis(300), usize::MAX);
    let got = String::from_utf8(got).unwrap();
    assert_eq!(got.matches("hello world\n").count(), 3);
}

#[test]
fn on_accept_close_and_reset() {
    for (mode, ends) in [
        (OnAccept::Close, &[End::Closed, End::Reset][..]),
        (OnAccept::Reset, &[End::Reset][..]),
    ] {
        let s = start_with(Hostile {
            on_accept: Some(mode),
            ..Hostile::default()
        });
        for _ in 0..3 {
            let mut w = Wire::connect(s.local_addr());
            // The write fails if the reset came first, and takes the
            // error with it: the read would then see only the end.
            let (got, end) = match w.stream.write_all(b"GET / HTTP/1.1\r\n\r\n") {
                Err(e) if e.kind() == ErrorKind::ConnectionReset => (Vec::new(), End::Reset),
                Err(e) => panic!("write: {e}"),
                Ok(()) => {
                    let (got, end, _) = w.read_until(Duration::from_secs(2), usize::MAX);
                    (got, end)
                }
            };
            assert!(got.is_empty());
            assert!(ends.contains(&end), "{mode:?}: {end:?}");
        }
        let stats = settled(&s);
        assert_eq!((stats.connections, stats.requests), (3, 0), "{mode:?}");
    }
}

#[test]
fn idle_close_timeout_closes_idle_keep_alive_connections() {
    let s = start_with(Hostile {
        idle_close: Some(Duration::from_millis(100)),
        ..Hostile::default()
    });
    let mut w = Wire::connect(s.local_addr());
    let t = Instant::now();
    w.get("/");
    let (got, end, _) = w.read_until(Duration::from_secs(2), usize::MAX);
    assert!(String::from_utf8(got).unwrap().ends_with("hello world\n"));
    assert_eq!(end, End::Closed);
    let idle = t.elapsed();
    assert!(idle >= Duration::from_millis(100), "{idle:?}");
    assert!(idle < Duration::from_secs(1), "{idle:?}");
    // A connection that never sends anything is closed too.
    let mut w = Wire::connect(s.local_addr());
    assert_eq!(w.read_until(Duration::from_secs(2), 1).1, End::Closed);
}
