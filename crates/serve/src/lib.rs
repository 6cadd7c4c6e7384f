//! `yace-serve`: the embedded reference HTTP/1.1 and HTTP/2 server that
//! yace loads. It prints nothing: `yace serve` (the CLI) announces it.
//!
//! It backs `yace serve`, `yace run` without a URL, the integration tests
//! (which check what the server saw through [`Server::stats`] or
//! `GET /_stats`) and the benchmarks. It is built to stay out of the way of
//! the measurement: the `/` route answers from pre-encoded bytes without
//! allocating, pipelined responses go out in one write, and large bodies are
//! streamed from a static buffer.
//!
//! ```no_run
//! let server = yace_serve::Server::start(yace_serve::Config::default())?;
//! println!("try {}bytes/1024", server.url());
//! let stats = server.stats();
//! server.shutdown();
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # Protocol
//!
//! HTTP/1.1 with keep-alive by default; `Connection: close` from the client
//! is honoured, HTTP/1.0 closes unless it sent `Connection: keep-alive`.
//! Pipelined requests are answered in order. Any method is accepted on every
//! route; `HEAD` gets the head a `GET` would get, `Content-Length` included.
//! Request bodies (by `Content-Length` or chunked) are read and discarded,
//! except by `/echo`; `Expect: 100-continue` is answered. Every response
//! carries `Server: yace-target/<version>` and a `Content-Length` (except
//! chunked ones, and 204/304 which have no body), plus `Connection: close`
//! when the connection is about to close. Heads over 64 KiB or with more
//! than 64 fields get 431, malformed ones 400; both then close. All of this
//! holds except under `/bad/`, whose routes break it on purpose.
//!
//! # HTTP/2
//!
//! Always on, on the same port. Under TLS, ALPN offers `h2` first and
//! `http/1.1`; a TLS client that offers no protocol may still open with
//! HTTP/2's preface. On plain TCP, a connection whose first bytes are the
//! preface (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`, h2c with prior knowledge) is
//! served as HTTP/2; anything else takes the HTTP/1.1 path as before (no
//! `Upgrade: h2c`).
//!
//! Every route answers as over HTTP/1.1: same status, body, `Server`,
//! `Content-Type`, `Content-Length` and `Set-Cookie` (cookies may come split
//! over several `cookie` fields). `/chunked` sends each chunk as a DATA
//! frame and no length; `/close` answers, then sends GOAWAY; `?split=N` is
//! ignored. `/echo` reads its body under flow control, giving the window
//! back as it arrives. The server offers a 1 MiB stream and 16 MiB
//! connection receive window, and
//! [`Config::h2_max_streams`] concurrent streams (default 128). GOAWAY is
//! always graceful (streams already open finish, the connection closes
//! after the last; streams the client opened before it saw the GOAWAY get
//! `REFUSED_STREAM` and are not counted). It is sent after `/close`,
//! `/bad/goaway`, [`Config::h2_max_requests`] streams, and
//! [`Hostile::idle_close`] without a new stream.
//!
//! # Routes
//!
//! Numbers in routes and queries are whole decimal numbers; a bad or
//! out-of-range one gets 400 (counted under the route it was meant for).
//!
//! | Route | Answer |
//! | --- | --- |
//! | `/` | 200 `hello world\n` (`text/plain`). The hot path. |
//! | `/bytes/N` | 200 with an N-byte body, N ≤ 1 GiB (400 beyond). |
//! | `/sleep?ms=N` | waits N ms (default 0, at most one hour) without blocking a thread, then 200 `slept N ms\n`. |
//! | `/pool?ms=N&workers=K&queue=Q` | a pool of K workers (default 4) serving N ms each (default 10), Q more queued (default 511), 503 beyond: a known capacity of K × 1000 / N req/s, like php-fpm's `pm.max_children`. |
//! | `/session?ms=N` | PHP-style locked session. The session is the `YACESESSID` cookie; without one a new random id is made and sent in `Set-Cookie: YACESESSID=<id>; Path=/`. Requests of one session run one at a time, each holding the session's lock while it sleeps N ms (default 0), so two concurrent requests of one session take at least 2N ms. Body `session <id>\n`. |
//! | `/vary?min=A&max=B` | 200 with a random body length in A..=B (default 1..=2048), like a dynamic page. |
//! | `/status/N` | status N (200–599, else 400) with body `N <reason>\n`; 204 and 304 have no body. |
//! | `/chunked?chunks=K&size=S` | 200, `Transfer-Encoding: chunked`, K chunks of S bytes (default 4 × 32) then the zero-length last chunk. HTTP/1.0 clients get the same bytes with a `Content-Length`. |
//! | `/close` | 200 with `Connection: close`, then the connection is closed (HTTP/2: GOAWAY). |
//! | `/echo` | 200 echoing the request body (up to 16 MiB, 413 beyond) with the request's `Content-Type`. |
//! | `/_stats` | 200 `application/json`: the [`Stats`]. `?reset=1` returns them and zeroes the counters. Not counted itself. |
//! | anything else | 404, counted as route `other`. |
//!
//! Bodies of `/bytes`, `/vary` and `/chunked` are a repeating printable
//! 64-byte pattern.
//!
//! Any route takes `?split=N` (1 ≤ N ≤ 65536): its response is written N
//! bytes at a time, each piece after a ~1 ms pause, so that the client gets
//! it in many small reads. Earlier pipelined responses still go out whole.
//! HTTP/1.1 only.
//!
//! # Misbehaviours
//!
//! Routes under `/bad/` answer wrongly on purpose, for testing what a client
//! makes of a broken server. They answer every method alike (over
//! HTTP/1.1 a `HEAD` gets the body too) and are counted each under its own path. Unless the table
//! says it closes, the connection is kept alive as usual. Each belongs to
//! one protocol: asked for over the other, it answers 501 (counted under
//! its path).
//!
//! | Route | Answer |
//! | --- | --- |
//! | `/bad/close` | reads the request, closes without a byte of answer (FIN). Counted, with no status. |
//! | `/bad/silent` | reads the request, never answers; the connection stays open until the client closes it. Counted, with no status. |
//! | `/bad/reset-mid-body` | head with `Content-Length: 1000`, 100 bytes of body, then RST (`SO_LINGER` 0). |
//! | `/bad/drip-head?ms=N` | the head one byte at a time, N ms apart (default 10, at most 10000), then the 13-byte body. |
//! | `/bad/drip-body?ms=N` | the head at once, then a 20-byte body one byte every N ms (default 10, at most 10000). |
//! | `/bad/eof-body` | HTTP/1.1, `Connection: close`, no length: a 100-byte body delimited by the close. |
//! | `/bad/cl-short` | `Content-Length: 100`, 50 bytes, close. |
//! | `/bad/cl-long` | `Content-Length: 10`, 20 bytes. |
//! | `/bad/cl-invalid` | `Content-Length: abc`, close. |
//! | `/bad/cl-dup` | `Content-Length: 10` and `Content-Length: 20`, 20 bytes, close. |
//! | `/bad/chunk-bad` | chunked, a valid chunk then the size line `not-hex`, close. |
//! | `/bad/chunk-ext` | chunked with chunk extensions (one with a quoted `;`) and two trailer fields; 11 bytes of data. |
//! | `/bad/chunk-trunc` | chunked, a chunk of 0x40 bytes cut off after 20, close. |
//! | `/bad/continue` | `100 Continue` and `103 Early Hints` (unasked for), then 200 with a 13-byte body. |
//! | `/bad/204-body` | 204 followed by 12 stray bytes. |
//! | `/bad/304-body` | 304 with `Content-Length: 12` followed by those 12 bytes, which a 304 never has. |
//! | `/bad/head-body` | 200 with a 12-byte body, sent to a `HEAD` as well. |
//! | `/bad/huge-header?kb=N` | a head with one N-KiB field (default 100, at most 65536), `Content-Length: 0`. |
//! | `/bad/endless-header` | header fields without end, until the client goes away. |
//! | `/bad/endless-chunk-ext` | a chunked body whose first chunk-size line never ends (`1;ext=aaaa…`), as fast as the client reads, until it goes away. |
//! | `/bad/endless-trailers` | a chunked body whose trailer block never ends, until the client goes away. |
//! | `/bad/many-cookies` | 1,000 `Set-Cookie` fields (a 60 KB head): large, and normal. |
//! | `/bad/te-and-cl` | `Transfer-Encoding: chunked` with a wrong `Content-Length` (a smuggling vector). |
//! | `/bad/te-identity` | `Transfer-Encoding: identity` and `Content-Length: 2`; the body runs to the close. |
//! | `/bad/bare-lf` | a head whose lines end in a bare LF. |
//! | `/bad/early-413` | 413 as soon as the head is read, the request body unread, then a reset: the client's write fails with the answer waiting. |
//! | `/bad/http10` | an `HTTP/1.0` status line with a 19-byte body, close. |
//! | `/bad/idle-close?ms=N` | 200 with a 23-byte body; if the connection is then idle for N ms (default 200), the next request on it is met with a close (FIN then RST, the request unread, not counted): the stale keep-alive race, made deterministic. |
//! | `/bad/close-every?n=N` | 200 with a 12-byte body, and every Nth such response on a connection (default 3) is followed by a close its head did not announce. |
//! | `/bad/rst` | HTTP/2: RST_STREAM `INTERNAL_ERROR` instead of an answer; the connection goes on. Counted, with no status. |
//! | `/bad/refuse` | HTTP/2: RST_STREAM `REFUSED_STREAM` instead of an answer (the client may retry it). Counted, with no status. |
//! | `/bad/goaway` | HTTP/2: 200 `going away\n`, then a graceful GOAWAY. |
//!
//! What no path can select is set with [`Hostile`] in [`Config::hostile`]
//! (or `yace serve --on-accept close|reset --idle-close 200ms`): closing or
//! resetting every connection as soon as it is accepted, and a keep-alive
//! idle timeout. [`serve_until_signal`] runs a server in the foreground
//! until SIGINT or SIGTERM, for `yace serve` — the way to point another
//! load generator at the same server.

mod ask;
mod conn;
mod h1;
mod http;
mod http2;
mod misbehave;
mod pool;
mod route;
mod routes;
mod session;
mod stats;
mod stream;
mod tls;

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket, UnixListener};

pub use stats::Stats;
use stream::{Rewind, Stream};
pub use tls::TlsIdentity;

/// How long shutting the runtime down may take before the tasks that have
/// not stopped are left behind.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
const LISTEN_BACKLOG: u32 = 4096;

/// HTTP/2's default [`Config::h2_max_streams`]: nginx's
/// `http2_max_concurrent_streams`, so that clients meet a familiar limit.
pub const H2_MAX_STREAMS: u32 = 128;

/// Everything about a server: where and with how much parallelism to
/// serve, HTTP/2's limits, HTTPS, and any misbehaviour. One struct, one
/// [`Server::start`]; fields a caller does not care about come from
/// [`Config::default`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Address to bind; port 0 picks a free port (see [`Server::local_addr`]).
    pub addr: SocketAddr,
    /// Runtime worker threads; 0 means one per available CPU.
    pub threads: usize,
    /// The `SETTINGS_MAX_CONCURRENT_STREAMS` an HTTP/2 connection offers:
    /// how many requests a client may have open on it at once. At least 1;
    /// default [`H2_MAX_STREAMS`].
    pub h2_max_streams: u32,
    /// After this many streams on one HTTP/2 connection, a graceful GOAWAY:
    /// open streams finish, any the client opened before it saw the GOAWAY
    /// are refused (`REFUSED_STREAM`, uncounted), and the connection closes
    /// (nginx's `keepalive_requests`, which HTTP/2 obeys too). At least 1;
    /// `None`, the default, sets no limit.
    pub h2_max_requests: Option<u64>,
    /// Misbehaviour no request path selects; none by default.
    pub hostile: Hostile,
    /// Serve HTTPS with this certificate (HTTP/2 by ALPN); plain HTTP
    /// (HTTP/2 by prior knowledge) when `None`, the default.
    pub tls: Option<TlsIdentity>,
    /// Listen on this unix-domain socket instead of `addr` (plain HTTP;
    /// a stale socket file there is replaced, and removed at shutdown).
    pub unix: Option<std::path::PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            threads: 0,
            h2_max_streams: H2_MAX_STREAMS,
            h2_max_requests: None,
            hostile: Hostile::default(),
            tls: None,
            unix: None,
        }
    }
}

/// Misbehaviour that no request path can select ([`Config::hostile`]). The
/// default misbehaves in no way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hostile {
    /// What to do with every connection as soon as it is accepted, before
    /// reading anything. Accepted connections are still counted.
    pub on_accept: Option<OnAccept>,
    /// Close a keep-alive connection once it has been idle this long between
    /// requests (FIN, then a drain, like a server's keep-alive timeout).
    /// A client sending as the close happens meets the stale-connection
    /// race; `/bad/idle-close` plays that race deterministically.
    pub idle_close: Option<Duration>,
}

/// How [`Hostile::on_accept`] gets rid of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnAccept {
    /// Half-close at once (FIN) and drop the socket. A request that had
    /// already arrived is left unread, so the kernel follows with RST.
    Close,
    /// Reset at once (`SO_LINGER` 0, RST).
    Reset,
}

/// State shared by every connection of one server.
pub(crate) struct Shared {
    pub(crate) counters: stats::Counters,
    pub(crate) sessions: session::Sessions,
    pub(crate) pools: pool::Pools,
    pub(crate) hostile: Hostile,
    /// `--tls`: connections are TLS, accepted with this.
    pub(crate) tls: Option<tokio_rustls::TlsAcceptor>,
    pub(crate) h2_max_streams: u32,
    pub(crate) h2_max_requests: Option<u64>,
    pub(crate) tls_fingerprint: Option<String>,
}

/// A server running on its own background threads (its own tokio runtime, so
/// it works the same whether or not the caller is inside a runtime).
///
/// Dropping it shuts it down like [`Server::shutdown`].
pub struct Server {
    addr: SocketAddr,
    /// The unix socket it listens on (`Config::unix`).
    unix: Option<std::path::PathBuf>,
    shared: Arc<Shared>,
    /// Dropping it (or sending) tells the server thread to stop.
    stop: Option<mpsc::Sender<()>>,
    /// Signalled by the server thread when its runtime is gone.
    stopped: mpsc::Receiver<()>,
    thread: Option<JoinHandle<()>>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Binds and starts serving. The listener is bound before this returns,
    /// so with port 0 [`Server::local_addr`] already has the real port.
    ///
    /// Fails with [`io::ErrorKind::InvalidInput`] for a zero HTTP/2 limit.
    pub fn start(config: Config) -> io::Result<Server> {
        let hostile = config.hostile;
        let tls = config.tls.as_ref();
        if config.h2_max_streams == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "h2_max_streams must be at least 1",
            ));
        }
        if config.h2_max_requests == Some(0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "h2_max_requests must be at least 1",
            ));
        }
        let acceptor = tls.map(TlsIdentity::acceptor).transpose()?;
        let threads = match config.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let shared = Arc::new(Shared {
            counters: stats::Counters::new(),
            sessions: Default::default(),
            pools: Default::default(),
            hostile,
            tls: acceptor,
            h2_max_streams: config.h2_max_streams,
            h2_max_requests: config.h2_max_requests,
            tls_fingerprint: tls.map(TlsIdentity::fingerprint).transpose()?,
        });
        let unix = config.unix.clone();
        let (stop, stop_rx) = mpsc::channel();
        let (stopped_tx, stopped) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let thread_shared = shared.clone();
        // The runtime is built, driven and dropped on a thread of its own:
        // dropping a runtime from inside another one panics, and callers such
        // as async tests may well be inside one.
        let thread = std::thread::Builder::new()
            .name("yace-serve".into())
            .spawn(move || {
                let bound = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(threads)
                    .thread_name("yace-serve-worker")
                    .enable_all()
                    .build()
                    .and_then(|rt| {
                        let listener = rt.block_on(async {
                            match &config.unix {
                                Some(p) => bind_unix(p).map(Listener::Unix),
                                None => bind(config.addr).map(Listener::Tcp),
                            }
                        })?;
                        Ok((rt, listener))
                    });
                let (rt, listener) = match bound {
                    Ok(ok) => ok,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(match &listener {
                    Listener::Tcp(l) => l.local_addr(),
                    Listener::Unix(_) => Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))),
                });
                rt.spawn(accept_loop(listener, thread_shared));
                // Waiting on a plain channel rather than inside the runtime means
                // stopping never depends on a wake-up reaching a runtime thread.
                let _ = stop_rx.recv();
                // Cancels every task at its next await (the accept loop, which
                // closes the listener, and every connection, idle or not) and
                // gives up on any that do not finish within the grace period.
                rt.shutdown_timeout(SHUTDOWN_GRACE);
                let _ = stopped_tx.send(());
            })?;
        let addr = ready_rx
            .recv()
            .map_err(|_| io::Error::other("yace-serve server thread exited during start"));
        match addr.and_then(|a| a) {
            Ok(addr) => Ok(Server {
                addr,
                unix,
                shared,
                stop: Some(stop),
                stopped,
                thread: Some(thread),
            }),
            Err(e) => {
                let _ = thread.join();
                Err(e)
            }
        }
    }

    /// The bound address (with the real port when port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Base URL with a trailing slash, e.g. `http://127.0.0.1:8080/` or
    /// `http://[::1]:8080/`. An unspecified bind address (`0.0.0.0`, `::`)
    /// is given as the loopback address of the same family, which is one a
    /// client can actually connect to.
    pub fn url(&self) -> String {
        if let Some(p) = &self.unix {
            return format!("unix:{}:/", p.display());
        }
        let mut addr = self.addr;
        match addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => addr.set_ip(Ipv4Addr::LOCALHOST.into()),
            IpAddr::V6(ip) if ip.is_unspecified() => addr.set_ip(Ipv6Addr::LOCALHOST.into()),
            _ => {}
        }
        let scheme = if self.shared.tls.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{addr}/")
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> Stats {
        self.shared.counters.snapshot(false)
    }

    /// A snapshot of the counters, zeroing them (like `GET /_stats?reset=1`).
    pub fn reset_stats(&self) -> Stats {
        self.shared.counters.snapshot(true)
    }

    /// Stops accepting, ends every connection (in-flight requests are
    /// abandoned) and joins the server's threads. Bounded: should the runtime
    /// fail to wind down, its threads are left behind after a few seconds
    /// rather than hanging the caller.
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        drop(self.stop.take());
        let Some(thread) = self.thread.take() else {
            return;
        };
        match self
            .stopped
            .recv_timeout(SHUTDOWN_GRACE + Duration::from_secs(1))
        {
            // Disconnected: the thread ended without signalling (a panic).
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                let _ = thread.join();
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if let Some(p) = &self.unix {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // Tests and `yace serve` restart on the same port while old connections
    // are still in TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Where connections come from.
enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener),
}

/// Binds a unix-domain socket at `path`. A socket file left there (a server
/// that was killed) is replaced; any other file is an error, not removed.
fn bind_unix(path: &std::path::Path) -> io::Result<UnixListener> {
    use std::os::unix::fs::FileTypeExt;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a socket", path.display()),
            ));
        }
        std::fs::remove_file(path)?;
    }
    let std = std::os::unix::net::UnixListener::bind(path)?;
    std.set_nonblocking(true)?;
    UnixListener::from_std(std)
}

async fn accept_loop(listener: Listener, shared: Arc<Shared>) {
    let listener = match listener {
        Listener::Tcp(l) => l,
        Listener::Unix(l) => return accept_unix(l, shared).await,
    };
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of file descriptors and the like: back off instead of
                // spinning, the condition is usually temporary.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        shared.counters.connection_accepted();
        match shared.hostile.on_accept {
            None => {}
            Some(OnAccept::Close) => {
                if let Ok(stream) = stream.into_std() {
                    let _ = stream.shutdown(std::net::Shutdown::Write);
                }
                continue;
            }
            Some(OnAccept::Reset) => {
                let _ = stream.set_zero_linger();
                continue;
            }
        }
        let _ = stream.set_nodelay(true);
        match shared.tls.clone() {
            None => {
                tokio::spawn(h1::serve(Stream::Plain(stream), shared.clone()));
            }
            Some(acceptor) => {
                let shared = shared.clone();
                tokio::spawn(async move {
                    // A failed handshake (wrong protocol, bad client) just ends the connection.
                    if let Ok(Ok(tls)) =
                        tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream)).await
                    {
                        let stream = Stream::Tls(Box::new(tls));
                        if stream.alpn_h2() {
                            http2::serve(Rewind::new(stream, Vec::new()), shared).await;
                        } else {
                            h1::serve(stream, shared).await;
                        }
                    }
                });
            }
        }
    }
}

/// [`accept_loop`] for a unix socket: plain HTTP/1.1 (and h2c by prior
/// knowledge); `on_accept` closes (a unix socket has no reset).
async fn accept_unix(listener: UnixListener, shared: Arc<Shared>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        shared.counters.connection_accepted();
        if shared.hostile.on_accept.is_some() {
            continue;
        }
        tokio::spawn(h1::serve(Stream::Unix(stream), shared.clone()));
    }
}

/// Serves in the foreground until SIGINT or SIGTERM (for `yace serve`).
///
/// `ready` is called once the socket is bound and the signals are being
/// watched — the caller announces the server there (this library prints
/// nothing), and a supervisor that waits for that announcement can signal
/// right away. Returns after a clean shutdown.
pub fn serve_until_signal(
    config: Config,
    ready: impl FnOnce(&Server) -> io::Result<()>,
) -> io::Result<()> {
    let signals = signal::StopSignals::block()?;
    let server = Server::start(config)?;
    ready(&server)?;
    signals.wait();
    server.shutdown();
    Ok(())
}

impl Server {
    /// The HTTPS certificate's SHA-256 fingerprint, when the server has one
    /// (for an announcement a user can check a client against).
    pub fn tls_fingerprint(&self) -> Option<String> {
        self.shared.tls_fingerprint.clone()
    }
}

#[cfg(unix)]
mod signal {
    use std::io;

    /// SIGINT and SIGTERM, blocked in the calling thread, and so in every
    /// thread it spawns afterwards (the server's), and taken synchronously
    /// with `sigwait`: nothing then depends on a handler, a self-pipe or a
    /// runtime wake-up for the signal to be seen.
    pub(crate) struct StopSignals {
        set: libc::sigset_t,
        previous: libc::sigset_t,
    }

    impl StopSignals {
        pub(crate) fn block() -> io::Result<StopSignals> {
            // SAFETY: sigset_t is plain data that sigemptyset initialises;
            // every pointer passed is to a live local or field.
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                let mut previous: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, libc::SIGINT);
                libc::sigaddset(&mut set, libc::SIGTERM);
                let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut previous);
                if rc != 0 {
                    return Err(io::Error::from_raw_os_error(rc));
                }
                Ok(StopSignals { set, previous })
            }
        }

        pub(crate) fn wait(self) {
            let mut sig = 0;
            // SAFETY: set is initialised; sig is a valid out-pointer.
            // sigwait only fails for an invalid set, so a failure returns
            // at once rather than serving forever.
            unsafe { libc::sigwait(&self.set, &mut sig) };
        }
    }

    impl Drop for StopSignals {
        fn drop(&mut self) {
            // SAFETY: restores the mask saved by `block` for this thread.
            unsafe {
                libc::pthread_sigmask(libc::SIG_SETMASK, &self.previous, std::ptr::null_mut())
            };
        }
    }
}

#[cfg(not(unix))]
mod signal {
    use std::io;

    pub(crate) struct StopSignals(tokio::runtime::Runtime);

    impl StopSignals {
        pub(crate) fn block() -> io::Result<StopSignals> {
            Ok(StopSignals(
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?,
            ))
        }

        pub(crate) fn wait(self) {
            let _ = self.0.block_on(tokio::signal::ctrl_c());
        }
    }
}
