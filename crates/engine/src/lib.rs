//! The only crate that opens sockets. [`run`] splits a [`plan::Plan`] over
//! worker threads (one per core by default), each with its own connections,
//! its own copy of the pre-encoded request and its own [`Sink`], and hands
//! the sinks back when the run ends; merging them is the caller's business.

pub mod codec;
pub mod fcgi;
mod flow;
pub mod h2;
pub mod http;
mod steer;
mod sys;
pub mod tls;
mod worker;

pub use flow::{Fixed, FixedUser, Flow, Next};
// The vocabulary shared with stats and reports lives in its own small
// crate, so they need not link the engine (rustls, epoll) to speak it.
pub use sample::{Captured, Outcome, Sample, Sink, MAX_COOKIES, MAX_COOKIE_BYTES};
pub use steer::{Steer, UsersNow, LEAD_NS};
pub use worker::{PacedReport, WorkerReport};

use plan::{Late, Load, Plan, Scheme};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// A run could not start. Per-request failures are never errors: they are
/// [`Outcome`]s.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot resolve host '{host}': {source}")]
    Resolve {
        host: String,
        source: std::io::Error,
    },
    #[error("host '{0}' resolved to no address")]
    NoAddress(String),
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    #[error("HTTP/2: {0}")]
    Http2(String),
    #[error("FastCGI: {0}")]
    Fcgi(String),
    #[error("cannot start worker {worker}: {source}")]
    Worker {
        worker: usize,
        source: std::io::Error,
    },
}

/// Resolves the plan's target to the address every connection will use.
/// A unix-socket target needs none: it gets the loopback address with the
/// target's port, which only names it (connections go to the socket).
pub fn resolve(plan: &Plan) -> Result<SocketAddr, EngineError> {
    if plan.target.unix.is_some() && plan.socket.proxy.is_none() {
        return Ok(SocketAddr::from((
            std::net::Ipv4Addr::LOCALHOST,
            plan.target.port,
        )));
    }
    let (host, port) = plan.connect_to();
    let mut addrs = (host, port)
        .to_socket_addrs()
        .map_err(|source| EngineError::Resolve {
            host: host.to_owned(),
            source,
        })?;
    addrs
        .next()
        .ok_or_else(|| EngineError::NoAddress(host.to_owned()))
}

/// One blocking connect, to tell "nothing listens there" apart from a
/// server that fails under load before any load is sent.
pub fn probe(addr: SocketAddr, timeout: Duration) -> std::io::Result<Duration> {
    let t = Instant::now();
    TcpStream::connect_timeout(&addr, timeout)?;
    Ok(t.elapsed())
}

/// [`probe`] for the plan's target: its unix socket when it has one (a
/// full accept queue past `timeout` is `TimedOut`), else `addr`.
pub fn probe_target(plan: &Plan, addr: SocketAddr, timeout: Duration) -> std::io::Result<Duration> {
    match &plan.target.unix {
        Some(p) => {
            let t = Instant::now();
            sys::connect_unix(std::path::Path::new(p), timeout)?;
            Ok(t.elapsed())
        }
        None => probe(addr, timeout),
    }
}

/// A unix-domain stream connection to `path`, waiting at most `timeout`
/// for room in the listener's accept queue (php-fpm's socket under load).
pub fn connect_unix(
    path: &std::path::Path,
    timeout: Duration,
) -> std::io::Result<std::os::unix::net::UnixStream> {
    sys::connect_unix(path, timeout)
}

/// `--source-addrs`: whether every source address suits `addr` (its
/// family) and can be bound on this machine, checked before any load with
/// a throwaway socket per address. `Err` says which ones fail, and how to
/// fix them.
pub fn check_sources(plan: &Plan, addr: SocketAddr) -> Result<(), String> {
    let sources = &plan.socket.sources;
    if let Some(p) = plan::source::family_mismatch(sources, addr.is_ipv4()) {
        return Err(format!(
            "--source-addrs: {p} ({addr}); give {} source addresses, or a URL whose host is {}",
            if addr.is_ipv4() { "IPv4" } else { "IPv6" },
            if addr.is_ipv4() { "IPv6" } else { "IPv4" },
        ));
    }
    let bad: Vec<String> = unbindable(sources)
        .into_iter()
        .map(|(ip, e)| format!("{ip} ({e})"))
        .collect();
    if bad.is_empty() {
        return Ok(());
    }
    let shown = bad.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    let more = if bad.len() > 5 {
        format!(" and {} more", bad.len() - 5)
    } else {
        String::new()
    };
    let which = match (bad.len(), sources.len()) {
        (1, 1) => "it is not this machine's".to_owned(),
        (1, n) => format!("1 of the {n} addresses is not this machine's"),
        (b, n) => format!("{b} of the {n} addresses are not this machine's"),
    };
    let prefix = if sources[0].is_ipv4() { 32 } else { 128 };
    Err(format!(
        "--source-addrs: cannot connect from {shown}{more}: {which} (all of 127.0.0.0/8 is, on \
         loopback; others must be on an interface: `ip addr add ADDR/{prefix} dev IFACE` as \
         root, `ip -br addr` lists them)"
    ))
}

/// The source addresses of `sources` a connection cannot leave from on
/// this machine, each with why (a throwaway socket bound to each).
pub fn unbindable(sources: &[std::net::IpAddr]) -> Vec<(std::net::IpAddr, std::io::Error)> {
    sources
        .iter()
        .filter_map(|&ip| sys::check_source(ip).err().map(|e| (ip, e)))
        .collect()
}

/// HTTPS: the client configuration for the plan (None for http://). Call it
/// before the run to report certificate-file problems up front.
pub fn tls_setup(plan: &Plan) -> Result<Option<tls::TlsSetup>, EngineError> {
    if plan.target.scheme != Scheme::Https {
        return Ok(None);
    }
    tls::setup(&plan.tls, &plan.target.host, plan.http2.is_some())
        .map(Some)
        .map_err(EngineError::Tls)
}

/// Threads that will actually run: never more than the connections.
pub fn effective_threads(plan: &Plan) -> usize {
    (plan.threads as u64).min(plan.shard_connections()).max(1) as usize
}

/// Monotonic "now" in nanoseconds, the clock every sample is measured on.
pub fn clock_ns() -> u64 {
    sys::now_ns()
}

/// Runs the plan against `addr`, one thread per (sink, flow) pair (see
/// [`effective_threads`]). `epoch` is the [`clock_ns`] instant that sample
/// times count from. Raising `stop` ends the run early (in-flight requests
/// are cancelled); the result is still complete for what was done.
pub fn run<S: Sink, F: Flow>(
    plan: &Plan,
    addr: SocketAddr,
    workers: Vec<(S, F)>,
    epoch: u64,
    stop: &AtomicBool,
) -> Result<Vec<(S, F, WorkerReport)>, EngineError> {
    run_steered(plan, addr, workers, epoch, stop, None)
}

/// [`run`], with the open model's rate steered through `steer` while it
/// runs (see [`Steer`]).
pub fn run_steered<S: Sink, F: Flow>(
    plan: &Plan,
    addr: SocketAddr,
    workers: Vec<(S, F)>,
    epoch: u64,
    stop: &AtomicBool,
    steer: Option<&Steer>,
) -> Result<Vec<(S, F, WorkerReport)>, EngineError> {
    if let Some(st) = steer {
        st.started(epoch);
    }
    let threads = workers.len();
    assert!(threads >= 1, "at least one worker");
    let request = plan.encode_request();
    let end_at = plan
        .stop
        .duration
        .map(|d| d.as_nanos().min(u64::MAX as u128) as u64);
    let tls = tls_setup(plan)?;
    let h2 = match plan.http2 {
        Some(h) => Some((
            h.streams,
            h2::encode_request(&request, tls.is_some())
                .map_err(|e| EngineError::Http2(e.to_string()))?,
        )),
        None => None,
    };
    // FastCGI: the plan's HTTP/1.1 request, sent as FastCGI (design 018).
    let fcgi = plan.target.is_fcgi().then(|| fcgi_setup(plan, addr));
    let request = match &fcgi {
        Some(setup) => {
            let mut out = Vec::new();
            fcgi::cgi::encode(&request, setup, &mut out).map_err(EngineError::Fcgi)?;
            out
        }
        None => request,
    };
    let unix = match &plan.target.unix {
        Some(p) => Some(
            sys::UnixAddr::new(std::path::Path::new(p))
                .map_err(|source| EngineError::Worker { worker: 0, source })?,
        ),
        None => None,
    };
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for (w, (sink, flow)) in workers.into_iter().enumerate() {
            let (mode, slots) = mode_for(plan, w, threads, flow.journeys(), steer);
            let cfg = worker::WorkerConfig {
                addr,
                unix: unix.as_ref(),
                fcgi: fcgi.as_ref(),
                socket: &plan.socket,
                tls: tls.as_ref(),
                request: &request,
                limits: plan.limits,
                head_request: plan.request.is_head(),
                idempotent: plan.request.is_idempotent(),
                keepalive: plan.keepalive,
                slots,
                mode,
                // Global indices (users, data rows, the timetable), so a
                // shard does exactly its part of the plan (`plan::Deal`).
                user_base: plan.deal(w, threads).base,
                user_stride: plan.deal(w, threads).stride,
                schedule: plan.worker_schedule(w, threads),
                epoch,
                end_at,
                connect_timeout: plan.timeouts.connect.as_nanos() as u64,
                slack: plan.timer_slack_ns(),
                request_timeout: plan.timeouts.request.as_nanos() as u64,
                stop,
                h2: h2.clone(),
                steer,
            };
            let h = std::thread::Builder::new()
                .name(format!("yace-worker-{w}"))
                .spawn_scoped(scope, move || -> Result<_, EngineError> {
                    let worker = worker::Worker::new(cfg, sink, flow)
                        .map_err(|source| EngineError::Worker { worker: w, source })?;
                    Ok(worker.run())
                })
                .map_err(|source| EngineError::Worker { worker: w, source })?;
            handles.push(h);
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// What FastCGI requests carry besides the request: the plan's options
/// and where the target is (`SERVER_*`).
fn fcgi_setup(plan: &Plan, addr: SocketAddr) -> fcgi::cgi::Setup {
    let opts = plan.fcgi.clone().unwrap_or_default();
    let unix = plan.target.unix.is_some();
    fcgi::cgi::Setup {
        root: opts.root,
        keep_conn: opts.keep_conn,
        https: opts.https,
        server_name: plan.target.host.clone(),
        server_addr: if unix {
            "unix:".to_owned()
        } else {
            addr.ip().to_string()
        },
        server_port: if unix { 0 } else { addr.port() },
    }
}

/// How worker `w` of `threads` gets its work, and how many slots it has.
/// Users (and closed-model connections) are dealt round-robin: user
/// `base + k·stride` (`plan::Deal`; `w + k·threads` unsharded) is this
/// worker's slot k.
/// The open model gives each arrival a request, or, for a flow of
/// `journeys`, a visitor who walks one journey.
/// Users that can be steered (virtual users, the closed model) get a slot
/// for every user up to the most steering may reach, those past the plan's
/// dormant until added.
fn mode_for(
    plan: &Plan,
    w: usize,
    threads: usize,
    journeys: bool,
    steer: Option<&Steer>,
) -> (worker::Mode, usize) {
    // HTTP/2: each connection carries `streams` slots.
    let per = plan.http2.map_or(1, |h| h.streams as usize);
    let deal = plan.deal(w, threads);
    if let Some((crowd, max)) = steer.and_then(|s| s.crowd()) {
        let n = deal.slots(max);
        let windows = (0..n)
            .map(|j| crowd.window(deal.index(j), 0).unwrap_or(worker::DORMANT))
            .collect();
        let pacing = match &plan.load {
            Load::Users { pacing, .. } => pacing.map(|p| p.as_nanos() as u64),
            _ => None,
        };
        return (worker::Mode::PerUser { windows, pacing }, n as usize);
    }
    let share = |total: u64| deal.slots(total) as usize * per;
    match &plan.load {
        Load::Closed { connections } => {
            let n = share(*connections);
            (
                worker::Mode::PerUser {
                    windows: vec![(0, u64::MAX); n],
                    pacing: None,
                },
                n,
            )
        }
        Load::Open {
            max_inflight, late, ..
        } => {
            let drop_after = match late {
                Late::Drop { after } => Some(after.as_nanos() as u64),
                Late::CatchUp => None,
            };
            let mode = if journeys {
                worker::Mode::Visits { drop_after }
            } else {
                worker::Mode::Pooled { drop_after }
            };
            (mode, share(*max_inflight))
        }
        Load::Users { pacing, .. } => {
            let windows: Vec<(u64, u64)> = plan
                .worker_windows(w, threads)
                .into_iter()
                .map(|(start, stop)| (start, stop.unwrap_or(u64::MAX)))
                .collect();
            let n = windows.len();
            let pacing = pacing.map(|p| p.as_nanos() as u64);
            (worker::Mode::PerUser { windows, pacing }, n)
        }
    }
}
