//! `yace-target`: the embedded reference HTTP/1.1 server that yace loads.
//!
//! It backs `yace serve`, `yace run` without a URL, the integration tests
//! (which check what the server saw through [`Server::stats`] or
//! `GET /_stats`) and the benchmarks. It is built to stay out of the way of
//! the measurement: the `/` route answers from pre-encoded bytes without
//! allocating, pipelined responses go out in one write, and large bodies are
//! streamed from a static buffer.
//!
//! ```no_run
//! let server = yace_target::Server::start(yace_target::Config::default())?;
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
//! than 64 fields get 431, malformed ones 400; both then close.
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
//! | `/session?ms=N` | PHP-style locked session. The session is the `YACESESSID` cookie; without one a new random id is made and sent in `Set-Cookie: YACESESSID=<id>; Path=/`. Requests of one session run one at a time, each holding the session's lock while it sleeps N ms (default 0), so two concurrent requests of one session take at least 2N ms. Body `session <id>\n`. |
//! | `/vary?min=A&max=B` | 200 with a random body length in A..=B (default 1..=2048), like a dynamic page. |
//! | `/status/N` | status N (200–599, else 400) with body `N <reason>\n`; 204 and 304 have no body. |
//! | `/chunked?chunks=K&size=S` | 200, `Transfer-Encoding: chunked`, K chunks of S bytes (default 4 × 32) then the zero-length last chunk. HTTP/1.0 clients get the same bytes with a `Content-Length`. |
//! | `/close` | 200 with `Connection: close`, then the connection is closed. |
//! | `/echo` | 200 echoing the request body (up to 16 MiB, 413 beyond) with the request's `Content-Type`. |
//! | `/_stats` | 200 `application/json`: the [`Stats`]. `?reset=1` returns them and zeroes the counters. Not counted itself. |
//! | anything else | 404, counted as route `other`. |
//!
//! Bodies of `/bytes`, `/vary` and `/chunked` are a repeating printable
//! 64-byte pattern.
//!
//! The package also builds a standalone `yace-target [ADDR] [THREADS]`
//! binary that runs [`serve_foreground`], for pointing other load generators
//! at the same server.

mod conn;
mod http;
mod routes;
mod session;
mod stats;

use std::fmt;
use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket};

pub use stats::Stats;

/// How long shutting the runtime down may take before the tasks that have
/// not stopped are left behind.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
const LISTEN_BACKLOG: u32 = 4096;

/// Where and with how much parallelism to serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Address to bind; port 0 picks a free port (see [`Server::local_addr`]).
    pub addr: SocketAddr,
    /// Runtime worker threads; 0 means one per available CPU.
    pub threads: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            threads: 0,
        }
    }
}

/// State shared by every connection of one server.
pub(crate) struct Shared {
    pub(crate) counters: stats::Counters,
    pub(crate) sessions: session::Sessions,
}

/// A server running on its own background threads (its own tokio runtime, so
/// it works the same whether or not the caller is inside a runtime).
///
/// Dropping it shuts it down like [`Server::shutdown`].
pub struct Server {
    addr: SocketAddr,
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
    pub fn start(config: Config) -> io::Result<Server> {
        let threads = match config.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let shared = Arc::new(Shared {
            counters: stats::Counters::new(),
            sessions: Default::default(),
        });
        let (stop, stop_rx) = mpsc::channel();
        let (stopped_tx, stopped) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::sync_channel(1);
        let thread_shared = shared.clone();
        // The runtime is built, driven and dropped on a thread of its own:
        // dropping a runtime from inside another one panics, and callers such
        // as async tests may well be inside one.
        let thread = std::thread::Builder::new()
            .name("yace-target".into())
            .spawn(move || {
                let bound = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(threads)
                    .thread_name("yace-target-worker")
                    .enable_all()
                    .build()
                    .and_then(|rt| {
                        let listener = rt.block_on(async { bind(config.addr) })?;
                        Ok((rt, listener))
                    });
                let (rt, listener) = match bound {
                    Ok(ok) => ok,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(listener.local_addr());
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
            .map_err(|_| io::Error::other("yace-target server thread exited during start"));
        match addr.and_then(|a| a) {
            Ok(addr) => Ok(Server {
                addr,
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
        let mut addr = self.addr;
        match addr.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => addr.set_ip(Ipv4Addr::LOCALHOST.into()),
            IpAddr::V6(ip) if ip.is_unspecified() => addr.set_ip(Ipv6Addr::LOCALHOST.into()),
            _ => {}
        }
        format!("http://{addr}/")
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

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
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
        let _ = stream.set_nodelay(true);
        tokio::spawn(conn::serve(stream, shared.clone()));
    }
}

/// Serves in the foreground until SIGINT or SIGTERM (for `yace serve`).
///
/// Prints `yace serve: listening on http://ADDR/` to stdout once the socket
/// is bound and the signals are being watched, so a supervisor that waits
/// for that line can signal right away.
pub fn serve_foreground(config: Config) -> io::Result<()> {
    let signals = signal::StopSignals::block()?;
    let server = Server::start(config)?;
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "yace serve: listening on http://{}/",
        server.local_addr()
    )?;
    out.flush()?;
    drop(out);
    signals.wait();
    server.shutdown();
    Ok(())
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
