//! HTTP/2 on the same port as HTTP/1.1, checked with the `h2` crate's own
//! client: h2c with prior knowledge, and TLS with ALPN.

use std::future::{poll_fn, Future};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2::client::SendRequest;
use h2::Reason;
use http::{HeaderMap, Method, Request};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use yace_serve::{Config, Hostile, Server, Stats, TlsIdentity};

const SERVER: &str = concat!("yace-target/", env!("CARGO_PKG_VERSION"));
const PATTERN: &[u8; 64] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-\n";

fn server_with(config: Config) -> Server {
    Server::start(Config {
        threads: 2,
        ..config
    })
    .expect("server starts")
}

/// A test that hangs is a failed test.
async fn bounded<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .expect("test finished within 30 s")
}

/// An HTTP/2 client over `io`; the connection runs on a task whose result
/// tells how it ended.
async fn client<T>(io: T) -> (SendRequest<Bytes>, JoinHandle<Result<(), h2::Error>>)
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (send, conn) = h2::client::handshake(io).await.expect("h2 handshake");
    (send, tokio::spawn(conn))
}

async fn h2c(server: &Server) -> (SendRequest<Bytes>, JoinHandle<Result<(), h2::Error>>) {
    let tcp = TcpStream::connect(server.local_addr()).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    client(tcp).await
}

#[derive(Debug)]
struct Answer {
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
    /// Sizes of the DATA frames the body came in.
    frames: Vec<usize>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }

    fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
}

/// Sends a request with `body` (respecting the server's flow control) and
/// reads the whole answer (giving the window back as it goes).
async fn request(
    send: &SendRequest<Bytes>,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<Answer, h2::Error> {
    let mut req = Request::builder()
        .method(method)
        .uri(format!("http://localhost{path}"));
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let mut send = send.clone().ready().await?;
    let (response, mut stream) = send.send_request(req.body(()).unwrap(), body.is_empty())?;
    let mut left = body;
    while !left.is_empty() {
        stream.reserve_capacity(left.len());
        let n = match poll_fn(|cx| stream.poll_capacity(cx)).await {
            Some(n) => n?,
            None => break,
        };
        let n = n.min(left.len());
        stream.send_data(Bytes::copy_from_slice(&left[..n]), n == left.len())?;
        left = &left[n..];
    }
    let (parts, mut recv) = response.await?.into_parts();
    let mut out = Answer {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body: Vec::new(),
        frames: Vec::new(),
    };
    while let Some(data) = recv.data().await {
        let data = data?;
        recv.flow_control().release_capacity(data.len())?;
        out.frames.push(data.len());
        out.body.extend_from_slice(&data);
    }
    Ok(out)
}

async fn get(send: &SendRequest<Bytes>, path: &str) -> Answer {
    request(send, Method::GET, path, &[], b"")
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

fn filler(n: usize) -> Vec<u8> {
    (0..n).map(|i| PATTERN[i % 64]).collect()
}

/// The stats once `f` holds, or after a few seconds whatever they are:
/// counts that trail the client by a scheduling tick still settle.
async fn stats_when(server: &Server, f: impl Fn(&Stats) -> bool) -> Stats {
    for _ in 0..200 {
        let s = server.stats();
        if f(&s) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    server.stats()
}

#[tokio::test]
async fn routes_answer_over_h2c_as_over_http11() {
    let server = server_with(Config::default());
    bounded(async {
        let (send, _conn) = h2c(&server).await;

        let r = get(&send, "/").await;
        assert_eq!(r.status, 200);
        assert_eq!(r.text(), "hello world\n");
        assert_eq!(r.header("server"), Some(SERVER));
        assert_eq!(r.header("content-type"), Some("text/plain"));
        assert_eq!(r.header("content-length"), Some("12"));

        for n in [0, 1, 1000, 65536, 100_000, 3 << 20] {
            let r = get(&send, &format!("/bytes/{n}")).await;
            assert_eq!(r.status, 200);
            assert_eq!(r.header("content-type"), Some("application/octet-stream"));
            assert_eq!(r.header("content-length"), Some(n.to_string().as_str()));
            assert_eq!(r.body, filler(n), "/bytes/{n}");
        }

        let r = get(&send, "/status/503").await;
        assert_eq!((r.status, r.text()), (503, "503 Service Unavailable\n"));
        for code in [204, 304] {
            let r = get(&send, &format!("/status/{code}")).await;
            assert_eq!(r.status, code);
            assert!(r.body.is_empty());
            assert_eq!(r.header("content-type"), None);
            assert_eq!(r.header("content-length"), None);
        }

        let r = get(&send, "/chunked?chunks=3&size=5").await;
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-length"), None);
        assert_eq!(r.body, [filler(5), filler(5), filler(5)].concat());
        assert_eq!(r.frames, [5, 5, 5], "one DATA frame per chunk");
        // Large enough to be streamed as the window opens.
        let r = get(&send, "/chunked?chunks=40&size=5000").await;
        assert_eq!(r.body, filler(5000).repeat(40));

        let r = get(&send, "/vary?min=10&max=20").await;
        assert!((10..=20).contains(&r.body.len()));
        assert_eq!(r.body, filler(r.body.len()));

        let started = Instant::now();
        let r = get(&send, "/sleep?ms=50").await;
        assert_eq!(r.text(), "slept 50 ms\n");
        assert!(started.elapsed() >= Duration::from_millis(50));

        let r = request(&send, Method::HEAD, "/bytes/1000", &[], b"")
            .await
            .unwrap();
        assert_eq!(r.header("content-length"), Some("1000"));
        assert!(r.body.is_empty());

        assert_eq!(get(&send, "/nope").await.status, 404);
        let r = get(&send, "/bytes/x").await;
        assert_eq!(r.status, 400);
        assert_eq!(r.text(), "N must be a whole number up to 1073741824\n");
        // HTTP/1.1's misbehaviours mean nothing here.
        let r = get(&send, "/bad/cl-short").await;
        assert_eq!(
            (r.status, r.text()),
            (501, "this misbehaviour is HTTP/1.1 only\n")
        );

        let r = get(&send, "/_stats").await;
        assert_eq!(r.header("content-type"), Some("application/json"));
        let s: Stats = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(s, server.stats(), "/_stats is not counted");
        assert_eq!((s.requests, s.h2_requests), (18, 18));
        assert_eq!((s.connections, s.h2_connections), (1, 1));
        assert_eq!(s.by_route["/bytes"], 8);
        assert_eq!(s.by_route["/bad/cl-short"], 1);
        assert_eq!(s.by_status[&501], 1);
    })
    .await;
}

#[tokio::test]
async fn bytes_out_counts_bodies() {
    let server = server_with(Config::default());
    bounded(async {
        let (send, _conn) = h2c(&server).await;
        get(&send, "/").await;
        get(&send, "/bytes/200000").await;
        get(&send, "/chunked").await;
        get(&send, "/status/204").await;
        request(&send, Method::HEAD, "/bytes/10", &[], b"")
            .await
            .unwrap();
        get(&send, "/_stats").await;
        assert_eq!(server.stats().bytes_out, 12 + 200_000 + 128);
    })
    .await;
}

#[tokio::test]
async fn echo_round_trips_a_body_larger_than_the_windows() {
    let server = server_with(Config::default());
    bounded(async {
        let (send, _conn) = h2c(&server).await;
        // Beyond the protocol's default 64 KiB window and the server's
        // 1 MiB stream window: both sides must give window back.
        let body: Vec<u8> = (0..3 << 20).map(|i| (i % 251) as u8).collect();
        let ctype = [("content-type", "application/x-test")];
        let r = request(&send, Method::POST, "/echo", &ctype, &body)
            .await
            .unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some("application/x-test"));
        assert_eq!(r.header("content-length"), Some("3145728"));
        assert!(r.body == body, "echoed body differs");

        // A body sent to a route that does not keep it is read and dropped.
        let r = request(&send, Method::POST, "/status/201", &[], &body)
            .await
            .unwrap();
        assert_eq!((r.status, r.text()), (201, "201 Created\n"));

        let r = request(&send, Method::POST, "/echo", &[], b"")
            .await
            .unwrap();
        assert_eq!(r.header("content-type"), Some("application/octet-stream"));
        assert!(r.body.is_empty());

        // Declared too large: 413 at once, without waiting for the body.
        let req = Request::post("http://localhost/echo")
            .header("content-length", "16777217")
            .body(())
            .unwrap();
        let mut ready = send.clone().ready().await.unwrap();
        let (response, mut upload) = ready.send_request(req, false).unwrap();
        upload.send_data(Bytes::from_static(b"x"), false).unwrap();
        let (parts, mut recv) = response.await.unwrap().into_parts();
        assert_eq!(parts.status, 413);
        let mut body = Vec::new();
        while let Some(data) = recv.data().await {
            body.extend_from_slice(&data.unwrap());
        }
        assert_eq!(body, b"body too large for /echo\n");
        drop(upload);

        // The connection is still good.
        assert_eq!(get(&send, "/").await.status, 200);
        let s = server.stats();
        assert_eq!(s.by_route["/echo"], 3);
        assert_eq!(s.by_status[&413], 1);
    })
    .await;
}

#[tokio::test]
async fn many_concurrent_streams_on_one_connection_are_counted_exactly() {
    let server = server_with(Config::default());
    bounded(async {
        let (send, _conn) = h2c(&server).await;
        // Until the server's SETTINGS arrive the client knows no limit, and
        // streams past it would be refused: wait for them with a request.
        assert_eq!(get(&send, "/_stats").await.status, 200);
        assert_eq!(send.current_max_send_streams(), 128);
        // More than the 128 streams allowed at once: the client queues.
        let paths = ["/", "/bytes/3000", "/sleep?ms=5", "/status/202"];
        let tasks: Vec<_> = (0..400)
            .map(|i| {
                let send = send.clone();
                tokio::spawn(async move { get(&send, paths[i % 4]).await.status })
            })
            .collect();
        for t in tasks {
            assert!((200..300).contains(&t.await.unwrap()));
        }
        let s = server.stats();
        assert_eq!((s.requests, s.h2_requests), (400, 400));
        assert_eq!((s.connections, s.h2_connections), (1, 1));
        for path in ["/", "/bytes", "/sleep", "/status"] {
            assert_eq!(s.by_route[path], 100, "{path}");
        }
        assert_eq!(s.by_status[&200], 300);
        assert_eq!(s.by_status[&202], 100);
        assert_eq!(s.bytes_out, 100 * (12 + 3000 + 11 + 13));
    })
    .await;
}

#[tokio::test]
async fn max_streams_is_offered_and_holds() {
    let server = server_with(Config {
        h2_max_streams: 3,
        ..Config::default()
    });
    bounded(async {
        let (send, _conn) = h2c(&server).await;
        get(&send, "/").await;
        assert_eq!(send.current_max_send_streams(), 3);
        // Nine 100 ms sleeps, three at a time: three rounds.
        let started = Instant::now();
        let tasks: Vec<_> = (0..9)
            .map(|_| {
                let send = send.clone();
                tokio::spawn(async move { get(&send, "/sleep?ms=100").await.status })
            })
            .collect();
        for t in tasks {
            assert_eq!(t.await.unwrap(), 200);
        }
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(290), "took {took:?}");
    })
    .await;
}

#[tokio::test]
async fn max_requests_sends_goaway_after_n_streams() {
    let server = server_with(Config {
        h2_max_requests: Some(5),
        ..Config::default()
    });
    bounded(async {
        let (send, conn) = h2c(&server).await;
        for _ in 0..5 {
            assert_eq!(get(&send, "/").await.status, 200);
        }
        // GOAWAY, then the close once nothing is left open.
        conn.await.unwrap().expect("a graceful end");
        let err = request(&send, Method::GET, "/", &[], b"")
            .await
            .unwrap_err();
        assert!(!err.is_reset(), "{err:?}");

        // Streams opened together: five are served, the rest refused.
        let (send, conn) = h2c(&server).await;
        let tasks: Vec<_> = (0..12)
            .map(|_| {
                let send = send.clone();
                tokio::spawn(
                    async move { request(&send, Method::GET, "/sleep?ms=20", &[], b"").await },
                )
            })
            .collect();
        let mut served = 0;
        for t in tasks {
            match t.await.unwrap() {
                Ok(r) => {
                    assert_eq!(r.status, 200);
                    served += 1;
                }
                Err(e) => assert!(
                    e.reason() == Some(Reason::REFUSED_STREAM) || e.is_go_away(),
                    "{e:?}"
                ),
            }
        }
        assert_eq!(served, 5);
        conn.await.unwrap().expect("a graceful end");
        let s = server.stats();
        assert_eq!((s.h2_requests, s.h2_connections), (10, 2));
        assert_eq!(s.by_route["/sleep"], 5);
    })
    .await;
}

#[tokio::test]
async fn bad_rst_and_refuse_reset_the_stream_only() {
    let server = server_with(Config::default());
    bounded(async {
        let (send, _conn) = h2c(&server).await;
        let err = request(&send, Method::GET, "/bad/rst", &[], b"")
            .await
            .unwrap_err();
        assert_eq!(err.reason(), Some(Reason::INTERNAL_ERROR), "{err:?}");
        assert!(err.is_reset() && err.is_remote());
        let err = request(&send, Method::POST, "/bad/refuse", &[], b"body")
            .await
            .unwrap_err();
        assert_eq!(err.reason(), Some(Reason::REFUSED_STREAM), "{err:?}");
        assert_eq!(get(&send, "/").await.status, 200);
        let s = server.stats();
        assert_eq!(s.requests, 3);
        assert_eq!(s.by_route["/bad/rst"], 1);
        assert_eq!(s.by_route["/bad/refuse"], 1);
        assert_eq!(
            s.by_status.values().sum::<u64>(),
            1,
            "resets have no status"
        );
    })
    .await;
}

#[tokio::test]
async fn bad_goaway_and_close_answer_then_go_away() {
    let server = server_with(Config::default());
    bounded(async {
        for (path, body) in [
            ("/bad/goaway", "going away\n"),
            ("/close", "closing connection\n"),
        ] {
            let (send, conn) = h2c(&server).await;
            let r = get(&send, path).await;
            assert_eq!((r.status, r.text()), (200, body));
            conn.await.unwrap().expect("a graceful end");
            assert!(request(&send, Method::GET, "/", &[], b"").await.is_err());
        }
        let s = server.stats();
        assert_eq!((s.h2_requests, s.h2_connections), (2, 2));
        assert_eq!(s.by_route["/bad/goaway"], 1);
        assert_eq!(s.by_route["/close"], 1);
    })
    .await;
}

#[tokio::test]
async fn session_cookies_work_over_h2() {
    let server = server_with(Config::default());
    bounded(async {
        let (send, _conn) = h2c(&server).await;
        let r = get(&send, "/session").await;
        let cookie = r.header("set-cookie").expect("a new session").to_owned();
        let (pair, attrs) = cookie.split_once("; ").unwrap();
        assert_eq!(attrs, "Path=/");
        let id = pair.strip_prefix("YACESESSID=").unwrap();
        assert_eq!(r.text(), format!("session {id}\n"));
        // Cookies may come split over several fields in HTTP/2.
        let headers = [("cookie", "a=b"), ("cookie", pair)];
        let r = request(&send, Method::GET, "/session", &headers, b"")
            .await
            .unwrap();
        assert_eq!(r.header("set-cookie"), None);
        assert_eq!(r.text(), format!("session {id}\n"));
    })
    .await;
}

#[tokio::test]
async fn idle_close_sends_goaway() {
    let server = Server::start(Config {
        hostile: Hostile {
            idle_close: Some(Duration::from_millis(100)),
            ..Hostile::default()
        },
        ..Config::default()
    })
    .unwrap();
    bounded(async {
        let (send, conn) = h2c(&server).await;
        assert_eq!(get(&send, "/").await.status, 200);
        let started = Instant::now();
        conn.await.unwrap().expect("a graceful end");
        assert!(started.elapsed() >= Duration::from_millis(50));
    })
    .await;
}

#[tokio::test]
async fn http11_still_works_on_the_same_port() {
    let server = server_with(Config::default());
    bounded(async {
        let (send, _conn) = h2c(&server).await;
        assert_eq!(get(&send, "/").await.status, 200);
        let addr = server.local_addr();
        let h1 = tokio::task::spawn_blocking(move || {
            let mut c = crate::common::Client::connect(addr);
            let r = c.get("/bytes/100");
            assert_eq!(r.body.len(), 100);
            // Starts like the preface but is not it: HTTP/1.1 refuses it.
            let mut c = crate::common::Client::connect(addr);
            c.send("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n");
            assert_eq!(c.response().status, 400);
            // Split mid-preface, yet still HTTP/1.1 in the end.
            let mut c = crate::common::Client::connect(addr);
            c.send("P");
            std::thread::sleep(Duration::from_millis(20));
            c.send("OST /echo HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi");
            c.response().body
        });
        assert_eq!(h1.await.unwrap(), b"hi");
        let s = server.stats();
        assert_eq!((s.requests, s.h2_requests), (4, 1));
        assert_eq!((s.connections, s.h2_connections), (4, 1));
    })
    .await;
}

#[tokio::test]
async fn a_preface_split_over_many_writes_is_still_http2() {
    let server = server_with(Config::default());
    bounded(async {
        let mut tcp = TcpStream::connect(server.local_addr()).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        for piece in b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".chunks(5) {
            tcp.write_all(piece).await.unwrap();
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // Whatever was read to tell the protocol reaches h2 again: the
        // client's handshake then goes on from after the preface.
        let io = Prefaced {
            inner: tcp,
            skip: 24,
        };
        let (send, _conn) = client(io).await;
        assert_eq!(get(&send, "/").await.text(), "hello world\n");
        assert_eq!(server.stats().h2_connections, 1);
    })
    .await;
}

/// A stream whose first `skip` written bytes are dropped: the h2 client
/// writes the preface itself, which the test has already sent by hand.
struct Prefaced {
    inner: TcpStream,
    skip: usize,
}

impl AsyncRead for Prefaced {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Prefaced {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if self.skip > 0 {
            let n = self.skip.min(buf.len());
            self.skip -= n;
            return std::task::Poll::Ready(Ok(n));
        }
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

fn tls_connector(id: &TlsIdentity, alpn: &[&[u8]]) -> tokio_rustls::TlsConnector {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let cert = rustls_pki_types::CertificateDer::from_pem_slice(id.cert_pem.as_bytes()).unwrap();
    roots.add(cert).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

#[tokio::test]
async fn tls_serves_h2_by_alpn_and_http11_otherwise() {
    let id = TlsIdentity::self_signed().unwrap();
    let server = Server::start(Config {
        tls: Some(id.clone()),
        ..Config::default()
    })
    .unwrap();
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    bounded(async {
        let connect = |alpn: &'static [&'static [u8]]| {
            let connector = tls_connector(&id, alpn);
            let name = name.clone();
            let addr = server.local_addr();
            async move {
                let tcp = TcpStream::connect(addr).await.unwrap();
                connector.connect(name, tcp).await.unwrap()
            }
        };

        let tls = connect(&[b"h2", b"http/1.1"]).await;
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
        let (send, _conn) = client(tls).await;
        let r = get(&send, "/bytes/200000").await;
        assert_eq!(r.body, filler(200_000));
        let body = vec![7u8; 300_000];
        let r = request(&send, Method::PUT, "/echo", &[], &body)
            .await
            .unwrap();
        assert!(r.body == body);

        const H1: &[&[u8]] = &[b"http/1.1"];
        for alpn in [H1, &[]] {
            let mut tls = connect(alpn).await;
            tls.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .await
                .unwrap();
            let mut out = Vec::new();
            tls.read_to_end(&mut out).await.unwrap();
            let out = String::from_utf8(out).unwrap();
            assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
            assert!(out.ends_with("hello world\n"), "{out}");
        }
        // No ALPN at all: h2 with prior knowledge still works.
        let tls = connect(&[]).await;
        let (send, _conn) = client(tls).await;
        assert_eq!(get(&send, "/").await.status, 200);

        let s = stats_when(&server, |s| s.requests == 5).await;
        assert_eq!((s.requests, s.h2_requests), (5, 3));
        assert_eq!((s.connections, s.h2_connections), (4, 2));
    })
    .await;
}

#[test]
fn zero_limits_are_refused() {
    for config in [
        Config {
            h2_max_streams: 0,
            ..Config::default()
        },
        Config {
            h2_max_requests: Some(0),
            ..Config::default()
        },
    ] {
        let err = Server::start(config).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    }
}
