//! Counting, `/_stats`, and starting and stopping servers.

use std::collections::BTreeMap;
use std::net::{Ipv6Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::common::{start, Client};
use yace_serve::{Config, Server, Stats};

fn stats_over_http(c: &mut Client, path: &str) -> Stats {
    let r = c.get(path);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    serde_json::from_slice(&r.body).expect("/_stats is Stats as JSON")
}

#[test]
fn stats_match_exactly_what_was_sent() {
    let server = start();
    let addr = server.local_addr();
    let mut wire = 0;
    let mut a = Client::connect(addr);
    for path in [
        "/",
        "/",
        "/",
        "/bytes/200000",
        "/nope",
        "/status/503",
        "/vary",
    ] {
        wire += a.get(path).wire_len;
    }
    a.send("HEAD / HTTP/1.1\r\n\r\nGET /chunked HTTP/1.1\r\n\r\n");
    wire += a.head_response().wire_len;
    wire += a.response().wire_len;
    let mut b = Client::connect(addr);
    wire += b.get("/close").wire_len;
    assert!(b.closed());

    let expected = Stats {
        requests: 10,
        connections: 3,
        by_route: [
            ("/", 4),
            ("/bytes", 1),
            ("/chunked", 1),
            ("/close", 1),
            ("/status", 1),
            ("/vary", 1),
            ("other", 1),
        ]
        .into_iter()
        .map(|(route, n)| (route.to_owned(), n))
        .collect(),
        by_status: BTreeMap::from([(200, 8), (404, 1), (503, 1)]),
        bytes_out: wire as u64,
        h2_requests: 0,
        h2_connections: 0,
    };
    let mut s = Client::connect(addr);
    assert_eq!(stats_over_http(&mut s, "/_stats"), expected);
    // Polling the stats is not counted.
    assert_eq!(stats_over_http(&mut s, "/_stats"), expected);
    assert_eq!(server.stats(), expected);

    assert_eq!(stats_over_http(&mut s, "/_stats?reset=1"), expected);
    assert_eq!(stats_over_http(&mut s, "/_stats"), Stats::default());
    assert_eq!(s.get("/").status, 200);
    let after = server.stats();
    assert_eq!((after.requests, after.connections), (1, 0));
    assert_eq!(server.reset_stats(), after);
    assert_eq!(server.stats(), Stats::default());
}

#[test]
fn counts_are_exact_under_concurrent_load() {
    let server = start();
    let addr = server.local_addr();
    let workers: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = Client::connect(addr);
                // Pipelined in batches, to exercise batched counting.
                for _ in 0..25 {
                    c.send("GET / HTTP/1.1\r\n\r\n".repeat(8));
                    for _ in 0..8 {
                        assert_eq!(c.response().status, 200);
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let stats = server.stats();
    assert_eq!(stats.requests, 8 * 25 * 8);
    assert_eq!(stats.by_route["/"], 1600);
    assert_eq!(stats.by_status[&200], 1600);
    assert_eq!(stats.connections, 8);
}

#[test]
fn shutdown_is_prompt_with_open_connections() {
    let server = start();
    let addr = server.local_addr();
    let mut idle = Client::connect(addr);
    assert_eq!(idle.get("/").status, 200);
    let mut sleeping = TcpStream::connect(addr).unwrap();
    std::io::Write::write_all(&mut sleeping, b"GET /sleep?ms=60000 HTTP/1.1\r\n\r\n").unwrap();
    let mut half_head = TcpStream::connect(addr).unwrap();
    std::io::Write::write_all(&mut half_head, b"GET / HTTP/1.1\r\nHost:").unwrap();
    std::thread::sleep(Duration::from_millis(50));

    // On a thread, so that a hanging shutdown fails the test instead of
    // hanging it.
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        server.shutdown();
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(1))
        .expect("shutdown returns within 1 s");
    assert!(idle.closed(), "idle connection left open");
    assert!(
        TcpStream::connect(addr).is_err(),
        "still accepting after shutdown"
    );
}

#[test]
fn many_servers_start_and_stop() {
    let started = Instant::now();
    for i in 0..20 {
        let server = Server::start(Config {
            threads: 1 + i % 2,
            ..Config::default()
        })
        .unwrap();
        let mut c = Client::connect(server.local_addr());
        assert_eq!(c.get("/").status, 200);
        if i % 2 == 0 {
            server.shutdown();
        } else {
            drop(server);
        }
    }
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn url_and_address() {
    let server = start();
    let addr = server.local_addr();
    assert_ne!(addr.port(), 0);
    assert_eq!(server.url(), format!("http://127.0.0.1:{}/", addr.port()));

    let any = Server::start(Config {
        addr: "0.0.0.0:0".parse().unwrap(),
        threads: 1,
        ..Config::default()
    })
    .unwrap();
    assert_eq!(
        any.url(),
        format!("http://127.0.0.1:{}/", any.local_addr().port())
    );

    let v6 = SocketAddr::from((Ipv6Addr::LOCALHOST, 0));
    // Some sandboxes have no IPv6 loopback; nothing to check there.
    if let Ok(server) = Server::start(Config {
        addr: v6,
        threads: 1,
        ..Config::default()
    }) {
        let port = server.local_addr().port();
        assert_eq!(server.url(), format!("http://[::1]:{port}/"));
        assert_eq!(Client::connect(server.local_addr()).get("/").status, 200);
    }
}

#[test]
fn binding_a_taken_port_is_an_error() {
    let server = start();
    let err = Server::start(Config {
        addr: server.local_addr(),
        threads: 1,
        ..Config::default()
    })
    .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
}

#[test]
fn works_from_inside_another_runtime() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let server = start();
        let addr = server.local_addr();
        let status = tokio::task::spawn_blocking(move || Client::connect(addr).get("/").status);
        assert_eq!(status.await.unwrap(), 200);
        server.shutdown();
    });
}
