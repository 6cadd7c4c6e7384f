//! The one worker loop. Each worker thread owns its epoll instance, its
//! connections, the pre-encoded request and its own [`Sink`]; nothing on the
//! hot path is shared or locked (STYLE.md §5).
//!
//! Slots (connections) get work from a feed (`feed.rs`: the open model's
//! pool, or one user per slot for the closed model and virtual users) and
//! reach the server over a transport (`http1.rs`, `http2.rs`); those are the
//! loop's only two choices, each dispatched in one place.
//!
//! Per request the hot path makes one `read`, one `send` and a share of one
//! `epoll_wait`: sockets are registered edge-triggered once, a short read
//! means the socket is drained, and the next request is written as soon as
//! the previous response is complete.

mod feed;
mod http1;
mod http2;

use crate::codec::ResponseParser;
use crate::flow::Flow;
use crate::http::io_connect_outcome;
use crate::sys::{self, Connecting, Epoll};
use crate::tls::TlsSetup;
use feed::Feed;
pub(crate) use feed::DORMANT;
use plan::{Due, WorkerSchedule};
use sample::{Captured, Outcome, Sample, Sink};
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

const READ_BUF: usize = 64 * 1024;
const EVENTS: usize = 512;
const SECOND: u64 = 1_000_000_000;
/// How often the sink's tick and the stop flag are looked at, at most.
const TICK: u64 = 100_000_000;
/// Most bytes of a response kept for a flow that asked to capture it.
const CAPTURE_MAX: usize = 1 << 20;
const NEVER: u64 = u64::MAX;
/// The one read budget, for HTTP/1.1, HTTPS and HTTP/2 alike: a socket's
/// read loop yields after this many reads in one wake-up (64 KiB each, so
/// 1 MiB), and the socket is read again on the loop's next turn. A server
/// that sends without end cannot keep the worker from its clock, its
/// deadlines, the end of the run or the stop flag.
const READS_PER_WAKE: u32 = 16;

/// How slots get their requests.
#[derive(Debug, Clone)]
pub(crate) enum Mode {
    /// Each slot is a user: (start, stop) in ns after the epoch, per slot.
    PerUser {
        windows: Vec<(u64, u64)>,
        pacing: Option<u64>,
    },
    /// Slots are a pool fed by the timetable; `drop_after`: late requests
    /// older than this are dropped (None: always sent, however late).
    Pooled { drop_after: Option<u64> },
    /// The open model with journeys: the timetable's arrivals are visitors,
    /// each a new user walking its journey on a free slot (`feed::Visits`).
    Visits { drop_after: Option<u64> },
}

/// What a worker needs besides its sink and flow.
#[derive(Debug)]
pub(crate) struct WorkerConfig<'a> {
    pub addr: SocketAddr,
    /// A unix-domain socket connections go to instead of `addr`.
    pub unix: Option<&'a sys::UnixAddr>,
    /// FastCGI instead of HTTP/1.1 on each slot's connection (design 018):
    /// `request` is then already a FastCGI request, and a flow's own
    /// requests are turned into one with this.
    pub fcgi: Option<&'a crate::fcgi::cgi::Setup>,
    pub socket: &'a plan::SocketOptions,
    /// HTTPS: the shared client configuration.
    pub tls: Option<&'a TlsSetup>,
    pub request: &'a [u8],
    /// What a response may hold before it is refused.
    pub limits: plan::ResponseLimits,
    pub head_request: bool,
    pub idempotent: bool,
    pub keepalive: bool,
    /// Request slots (in flight at most at once). HTTP/1.1: one connection
    /// each; HTTP/2: `streams` slots share a connection.
    pub slots: usize,
    pub mode: Mode,
    /// This worker's first user index and the stride between its users.
    pub user_base: u64,
    pub user_stride: u64,
    pub schedule: WorkerSchedule,
    /// Monotonic nanoseconds at the run's start, shared by all workers.
    pub epoch: u64,
    /// Nanoseconds after the epoch at which the run ends, if timed.
    pub end_at: Option<u64>,
    pub connect_timeout: u64,
    pub request_timeout: u64,
    /// Open model: requests go out on a tick of this many nanoseconds
    /// (`--timer-slack`; 0: each at its own due time).
    pub slack: u64,
    pub stop: &'a AtomicBool,
    /// HTTP/2: streams per connection and the plan's request, converted
    /// (connections are slots / streams).
    pub h2: Option<(u32, crate::h2::Request)>,
    /// The open model's rate, steered while it runs.
    pub steer: Option<&'a crate::Steer>,
}

/// What a worker reports besides its sink's contents.
#[derive(Debug, Clone, Default)]
pub struct WorkerReport {
    /// CPU time (user + system) this worker's thread used.
    pub cpu_ns: u64,
    /// Times this worker's thread slept and was woken (voluntary context
    /// switches) while it ran.
    pub wakeups: u64,
    /// Socket reads and writes (system calls) this worker's thread made.
    pub socket_reads: u64,
    pub socket_writes: u64,
    /// Wall time the worker ran.
    pub wall_ns: u64,
    /// The `Server` header of the worker's first response.
    pub server: Option<String>,
    /// Connections this worker opened successfully.
    pub connections_opened: u64,
    /// The worker stopped because the stop flag was raised.
    pub stopped: bool,
    /// When the worker ended, nanoseconds after the run's epoch.
    pub ended_at: u64,
    /// HTTPS: the negotiated protocol version and cipher suite (first handshake).
    pub tls_version: Option<String>,
    pub tls_cipher: Option<String>,
    /// HTTPS: handshakes that resumed a session, and full ones.
    pub tls_resumed: u64,
    pub tls_full: u64,
    /// HTTP/2: the lowest SETTINGS_MAX_CONCURRENT_STREAMS a server sent.
    pub h2_max_streams: Option<u32>,
    /// HTTP/2: GOAWAY frames that retired a connection.
    pub h2_goaways: u64,
    /// This worker's planned requests not yet due (closed model: not yet
    /// started) when it stopped; None when the plan has no set number.
    pub not_yet_due: Option<u64>,
    /// FastCGI: responses that came with `FCGI_STDERR` output, its bytes,
    /// and its first lines (a few, each cut short).
    pub fcgi_stderr_responses: u64,
    pub fcgi_stderr_bytes: u64,
    pub fcgi_stderr_lines: Vec<String>,
    /// The open model with journeys: arrivals that started a visit, or were
    /// cancelled at the end (the timetable's arrivals are visitors, not
    /// requests; dropped ones are counted as dropped requests).
    pub visits: Option<u64>,
    /// Paced virtual users: this worker's iterations, accounted for
    /// (`plan::paced`); None for the other models.
    pub paced: Option<PacedReport>,
}

/// Paced virtual users' iterations: with the plan's count
/// (`Plan::planned_iterations`), planned = started + missed + not_yet_due.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PacedReport {
    /// Iterations started (on time or late), or due in the run's last
    /// instant with the user free (then cancelled).
    pub started: u64,
    /// Iterations that came due while the user could not start them: its
    /// previous iteration (or its connection) still under way.
    pub missed: u64,
    /// Iterations not yet due when the run stopped (Ctrl-C).
    pub not_yet_due: u64,
    /// Users whose window opened before the run stopped.
    pub users: u64,
    /// Of those, users never answered, though they had a pacing period at
    /// least: they waited from their first request to the end.
    pub users_never_served: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// No socket; the slot can connect.
    Closed,
    Connecting,
    /// TCP connected, TLS handshake under way.
    Handshaking,
    /// Connected, no request in flight.
    Idle,
    Writing,
    Reading,
}

/// One request slot, its state split by concern: the socket (here), the
/// timing of the request in flight, the request
/// itself, and, for HTTP/2, where it rides.
#[derive(Debug)]
struct Conn {
    fd: RawFd,
    tls: Option<Box<rustls::ClientConnection>>,
    /// HTTPS: the last socket read was short, so the socket is drained.
    tls_drained: bool,
    /// The server closed its side (seen as EPOLLRDHUP/HUP): read to the end,
    /// never reuse.
    peer_closed: bool,
    gen: u32,
    st: St,
    parser: ResponseParser,
    /// FastCGI: the response's decoder; what it read is copied into
    /// `parser`'s status, body length and detail, which the sample takes.
    fcgi: Option<Box<crate::fcgi::ResponseParser>>,
    /// Requests completed on the current socket.
    uses: u32,
    at: Timing,
    job: InFlight,
    place: StreamPlace,
}

/// When things happened to the request in flight (ns after the epoch).
#[derive(Debug, Default)]
struct Timing {
    connect_start: u64,
    /// When it was due (latency counts from here).
    intended: u64,
    start: u64,
    sent: u64,
    first_byte: u64,
    connected_at: u64,
    handshaken_at: u64,
    deadline: u64,
}

/// The request in flight: what it is and what has moved.
#[derive(Debug)]
struct InFlight {
    step: u16,
    own_request: bool,
    head: bool,
    idempotent: bool,
    capture: bool,
    req: Vec<u8>,
    /// Capture: HTTP/1.1, the response as it came (head and body); HTTP/2,
    /// the body, its head's fields being in `fields`.
    captured: Vec<u8>,
    fields: Option<Vec<(String, String)>>,
    retried: bool,
    written: usize,
    bytes_in: u64,
}

/// HTTP/2: the connection and stream carrying the request, its place in a
/// connection's queue, and how many times it was sent.
#[derive(Debug, Default)]
struct StreamPlace {
    link: u32,
    stream: u32,
    seq: u32,
    tries: u8,
    /// Times it was moved off a connection that went away (GOAWAY).
    rollovers: u8,
}

impl Conn {
    fn new() -> Self {
        Conn {
            fd: -1,
            tls: None,
            tls_drained: false,
            peer_closed: false,
            gen: 0,
            st: St::Closed,
            parser: ResponseParser::default(),
            fcgi: None,
            uses: 0,
            at: Timing::default(),
            job: InFlight {
                step: 0,
                own_request: false,
                head: false,
                idempotent: true,
                capture: false,
                req: Vec::new(),
                captured: Vec::new(),
                fields: None,
                retried: false,
                written: 0,
                bytes_in: 0,
            },
            place: StreamPlace::default(),
        }
    }

    fn busy(&self) -> bool {
        matches!(
            self.st,
            St::Connecting | St::Handshaking | St::Writing | St::Reading
        )
    }

    /// Moves to state `st`, keeping `unsettled` (the worker's count of
    /// slots waiting on a connect, a handshake or room to write) true.
    #[inline]
    fn enter(&mut self, st: St, unsettled: &mut usize) {
        let waits = |st: St| matches!(st, St::Connecting | St::Handshaking | St::Writing);
        *unsettled = *unsettled + usize::from(waits(st)) - usize::from(waits(self.st));
        self.st = st;
    }
}

pub(crate) struct Worker<'a, S: Sink, F: Flow> {
    cfg: WorkerConfig<'a>,
    epoll: Epoll,
    sink: S,
    flow: F,
    /// The flow's state for each slot.
    users: Vec<F::User>,
    conns: Vec<Conn>,
    /// How the slots get their requests.
    feed: Feed,
    inflight: usize,
    /// This worker's next request in the schedule, and when it is due.
    next_j: u64,
    next_due: Due,
    buf: Box<[u8]>,
    /// HTTPS: ciphertext read from a socket, before rustls decrypts it.
    cipher: Box<[u8]>,
    report: WorkerReport,
    captured_server: bool,
    ending: bool,
    /// How the slots reach the server.
    transport: Transport,
    /// Sockets whose read loop spent its budget with data perhaps left:
    /// (epoll token index, generation, event flags), read on the next turn.
    unread: Vec<(u32, u32, u32)>,
    /// The steering version this worker's schedule follows.
    steer_seen: u64,
    /// Slots waiting on a connect, a handshake or room to write: while
    /// there are any, the loop must wake on their sockets.
    unsettled: usize,
    /// Responses are timed by the kernel's receive timestamps, so the loop
    /// may sleep without waking for them: to the next send tick (the open
    /// model with a timer slack, HTTP/1.1 or HTTP/2; design 014), or a round
    /// (HTTP/2's closed model and virtual users, many streams a connection;
    /// design 015). Off for good if a socket refuses them.
    stamps: bool,
    /// The realtime clock minus the monotonic one (ns), refreshed at every
    /// 100 ms tick: turns receive timestamps into the run's time.
    real_off: i64,
    /// The last wait returned a full batch of events: more may be ready.
    more_ready: bool,
}

/// How slots reach the server: the one choice the loop dispatches on
/// (begin a request, an epoll event, the deadline sweep, retiring a user,
/// the end of the run), each transport in its own file.
enum Transport {
    /// HTTP/1.1, plain or TLS: each slot its own connection (`http1.rs`).
    Http1,
    /// HTTP/2: slots are streams on shared connections (`http2.rs`).
    Http2(Box<http2::Links>),
}

impl<'a, S: Sink, F: Flow> Worker<'a, S, F> {
    pub fn new(mut cfg: WorkerConfig<'a>, sink: S, mut flow: F) -> std::io::Result<Self> {
        let n = cfg.slots;
        let next_due = cfg.schedule.due(0);
        let users = (0..n as u64)
            .map(|s| flow.user(cfg.user_base + s * cfg.user_stride))
            .collect();
        let transport = match cfg.h2.take() {
            Some((streams, request)) => Transport::Http2(Box::new(http2::Links::new(
                streams,
                n,
                cfg.tls.is_some(),
                request,
            ))),
            None => Transport::Http1,
        };
        // The mode becomes the worker's feed; the config keeps an empty one.
        let feed = Feed::new(
            std::mem::replace(&mut cfg.mode, Mode::Pooled { drop_after: None }),
            || match &transport {
                Transport::Http2(h) => h.pool_order(n),
                Transport::Http1 => (0..n as u32).rev().collect(),
            },
        );
        let stamps = cfg.slack > 0
            && match (&feed, &transport) {
                (Feed::Pool(_), _) => true,
                (Feed::Users(_), Transport::Http2(h)) => h.multiplexed(),
                _ => false,
            };
        let report = WorkerReport {
            visits: matches!(feed, Feed::Visits(_)).then_some(0),
            ..WorkerReport::default()
        };
        Ok(Worker {
            epoll: Epoll::new()?,
            sink,
            flow,
            users,
            conns: (0..n)
                .map(|_| {
                    let mut c = Conn::new();
                    c.parser.set_limits(cfg.limits);
                    if cfg.fcgi.is_some() {
                        let limits = crate::fcgi::Limits {
                            head_bytes: cfg.limits.head_bytes as usize,
                            fields: cfg.limits.fields as usize,
                            ..Default::default()
                        };
                        c.fcgi = Some(Box::new(crate::fcgi::ResponseParser::new(
                            crate::fcgi::cgi::REQUEST_ID,
                            limits,
                        )));
                    }
                    c
                })
                .collect(),
            feed,
            inflight: 0,
            next_j: 0,
            next_due,
            buf: vec![0u8; READ_BUF].into_boxed_slice(),
            cipher: vec![0u8; if cfg.tls.is_some() { READ_BUF } else { 0 }].into_boxed_slice(),
            report,
            captured_server: false,
            ending: false,
            transport,
            unread: Vec::new(),
            steer_seen: 0,
            unsettled: 0,
            stamps,
            real_off: sys::realtime_offset_ns(),
            more_ready: false,
            cfg,
        })
    }

    /// Counts one read on a socket; past [`READS_PER_WAKE`], notes it to be
    /// read again (as an event with `flags`) on the loop's next turn and
    /// says to stop reading now.
    #[inline]
    fn over_budget(&mut self, reads: &mut u32, idx: usize, gen: u32, flags: u32) -> bool {
        *reads += 1;
        if *reads <= READS_PER_WAKE {
            return false;
        }
        self.unread.push((idx as u32, gen, flags));
        true
    }

    /// A steering change (one relaxed load a turn when none): the
    /// timetable from the next request on follows the new timeline.
    #[inline]
    fn follow_steering(&mut self) {
        let Some(st) = self.cfg.steer else { return };
        let v = st.version();
        if v != self.steer_seen {
            self.steer_seen = v;
            if st.steers_users() {
                self.users_steered(&st.user_timeline());
            } else {
                self.cfg.schedule.steer(st.timeline());
                self.next_due = self.cfg.schedule.due(self.next_j);
            }
        }
    }

    /// The loop may sleep through responses to its next wake: they are
    /// timed by the kernel, nothing waits on a connect, handshake or write,
    /// and a request due before then has a free slot to go on.
    #[inline]
    fn may_defer(&self) -> bool {
        self.stamps && self.unsettled == 0 && !self.more_ready && self.feed.has_free_slot()
    }

    /// A kernel receive timestamp (realtime ns) as the run's time, never
    /// before `since` nor after `now`.
    #[inline]
    fn stamped(&self, real: u64, since: u64, now: u64) -> u64 {
        let mono = real as i64 - self.real_off - self.cfg.epoch as i64;
        (mono.max(0) as u64).clamp(since.min(now), now)
    }

    #[inline]
    fn now(&self) -> u64 {
        sys::now_ns().saturating_sub(self.cfg.epoch)
    }

    /// Runs until there is no more work, the end time passes or the stop
    /// flag is raised; returns the sink, the flow and the worker's figures.
    pub fn run(mut self) -> (S, F, WorkerReport) {
        let cpu0 = sys::thread_cpu_ns();
        let wakeups0 = sys::thread_wakeups();
        let calls0 = sys::thread_socket_calls();
        let wall0 = self.now();
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; EVENTS];
        let mut next_tick = 0;
        let sweep_every =
            (self.cfg.request_timeout.min(self.cfg.connect_timeout) / 20).clamp(1_000_000, TICK);
        let mut next_sweep = sweep_every;
        loop {
            let now = self.now();
            if now >= next_tick {
                self.sink.gauge(sample::Gauge {
                    in_flight: self.inflight,
                    users: self.active_users(now),
                    cpu_ns: sys::thread_cpu_ns(),
                });
                self.sink.tick(now);
                if self.stamps {
                    self.real_off = sys::realtime_offset_ns();
                }
                next_tick = (now + TICK).min((now / SECOND + 1) * SECOND);
                if self.cfg.stop.load(Ordering::Relaxed) {
                    self.report.stopped = true;
                    break;
                }
            }
            if self.cfg.end_at.is_some_and(|e| now >= e) {
                break;
            }
            self.follow_steering();
            if self.feed(now) {
                break;
            }
            let mut wake = self.feed_wake(next_tick.min(next_sweep));
            if let Some(e) = self.cfg.end_at {
                wake = wake.min(e);
            }
            // Sockets left unread by the budget, once each per turn.
            for (idx, gen, flags) in std::mem::take(&mut self.unread) {
                self.on_event(idx as usize, gen, flags);
            }
            self.h2_flush();
            let timeout_ns = if !self.feed_pending() && self.unread.is_empty() {
                wake.saturating_sub(now)
            } else {
                0
            };
            let round = match &self.transport {
                Transport::Http2(h) if self.stamps && timeout_ns > 0 && !self.more_ready => {
                    h.round(self.cfg.slack)
                }
                _ => 0,
            };
            let n = if timeout_ns > 0 && self.may_defer() {
                // Sleep to the next send tick whatever arrives, then take
                // everything that did: one wake-up a tick, not one a
                // response (their times are the kernel's stamps).
                sys::sleep_until(self.cfg.epoch + wake);
                // What this tick sends goes first, on the slots already
                // free: reading the responses that came meanwhile would
                // only make it later. (Not at the end: nothing is due then.)
                let now = self.now();
                if self.cfg.end_at.is_none_or(|e| now < e) {
                    self.feed(now);
                }
                self.epoll.wait_ns(&mut events, 0)
            } else if round > 0 {
                // HTTP/2 in rounds: sleep a round whatever arrives, then
                // take everything that did — many responses a read, many
                // requests a write (design 015).
                sys::sleep_until(self.cfg.epoch + wake.min(now.saturating_add(round)));
                self.epoll.wait_ns(&mut events, 0)
            } else {
                self.epoll.wait_ns(&mut events, timeout_ns)
            };
            let n = match n {
                Ok(n) => n,
                Err(_) => break,
            };
            self.more_ready = n == events.len();
            for ev in &events[..n] {
                let (idx, gen) = ((ev.u64 & 0xffff_ffff) as usize, (ev.u64 >> 32) as u32);
                self.on_event(idx, gen, ev.events);
            }
            let now = self.now();
            if now >= next_sweep {
                self.sweep(now);
                next_sweep = now + sweep_every;
            }
        }
        self.finish();
        self.report.cpu_ns = sys::thread_cpu_ns().saturating_sub(cpu0);
        self.report.wakeups = sys::thread_wakeups().saturating_sub(wakeups0);
        let calls = sys::thread_socket_calls();
        self.report.socket_reads = calls.0.saturating_sub(calls0.0);
        self.report.socket_writes = calls.1.saturating_sub(calls0.1);
        self.report.wall_ns = self.now().saturating_sub(wall0);
        (self.sink, self.flow, self.report)
    }

    // ---- requests on a slot -------------------------------------------------

    /// Starts a request on slot `idx`: writes it on an idle connection or
    /// connects first.
    fn begin(&mut self, idx: usize, intended: u64, now: u64) {
        self.inflight += 1;
        let capture_server = !self.captured_server;
        let c = &mut self.conns[idx];
        c.at.intended = intended;
        c.at.start = now;
        c.at.first_byte = 0;
        c.job.bytes_in = 0;
        c.job.written = 0;
        c.job.retried = false;
        c.at.connected_at = 0;
        c.at.handshaken_at = 0;
        c.job.captured.clear();
        c.job.fields = None;
        c.parser.reset(c.job.head, capture_server);
        if let Some(f) = c.fcgi.as_mut() {
            f.reset(crate::fcgi::cgi::REQUEST_ID);
            f.set_keep_body(if c.job.capture { CAPTURE_MAX } else { 0 });
            if c.job.own_request {
                // A flow's request is HTTP/1.1: sent as FastCGI.
                let http = std::mem::take(&mut c.job.req);
                let setup = self.cfg.fcgi.expect("FastCGI set up");
                if crate::fcgi::cgi::encode(&http, setup, &mut c.job.req).is_err() {
                    c.parser.detail = sample::Detail::None;
                    self.complete(idx, Outcome::ProtocolError, now);
                    return;
                }
            }
        }
        match (&self.transport, c.st) {
            (Transport::Http2(_), _) => self.h2_begin(idx, now),
            (Transport::Http1, St::Idle) => self.write(idx, now),
            (Transport::Http1, _) => self.connect(idx, now),
        }
    }

    /// Opens a socket to the target and registers it with epoll as
    /// `token(idx, gen)`, for an HTTP/1.1 slot or an HTTP/2 connection; a
    /// failure is the waiting requests' outcome (the socket is closed).
    /// With `stamps`, the socket gets the kernel's receive timestamps; one
    /// that refuses them turns them off for the worker (the loop then wakes
    /// for every response).
    fn dial(&mut self, idx: usize, gen: u32) -> Result<(RawFd, Connecting), Outcome> {
        let errno = |e: std::io::Error| io_connect_outcome(&e);
        let (fd, how) = match self.cfg.unix {
            Some(unix) => sys::connect_unix_nonblocking(unix, self.cfg.socket)
                .map_err(|e| crate::http::unix_connect_outcome(&e))?,
            None => {
                // `--source-addrs`: dealt by the slot's (or link's) global index.
                let global = self.cfg.user_base + idx as u64 * self.cfg.user_stride;
                let source = plan::source::source_for(&self.cfg.socket.sources, global);
                sys::connect(&self.cfg.addr, self.cfg.socket, source).map_err(errno)?
            }
        };
        if self.stamps {
            self.stamps = sys::receive_stamps(fd).is_ok();
        }
        if let Err(e) = self.epoll.add(fd, token(idx, gen)) {
            sys::close(fd);
            return Err(errno(e));
        }
        Ok((fd, how))
    }

    fn on_event(&mut self, idx: usize, gen: u32, flags: u32) {
        match self.transport {
            Transport::Http1 => self.h1_event(idx, gen, flags),
            Transport::Http2(_) => self.h2_event(idx, gen, flags),
        }
    }

    fn close(&mut self, idx: usize) {
        let c = &mut self.conns[idx];
        c.tls = None;
        c.tls_drained = false;
        c.peer_closed = false;
        if c.fd >= 0 {
            sys::close(c.fd);
            c.fd = -1;
        }
        c.enter(St::Closed, &mut self.unsettled);
    }

    /// Records the request on slot `idx` and frees the slot.
    fn complete(&mut self, idx: usize, outcome: Outcome, now: u64) {
        self.inflight -= 1;
        let c = &mut self.conns[idx];
        let s = Sample {
            outcome,
            status: if outcome == Outcome::Response {
                c.parser.status
            } else {
                0
            },
            step: c.job.step,
            intended: c.at.intended,
            start: c.at.start,
            connected: c.at.connected_at,
            handshaken: c.at.handshaken_at,
            sent: if c.job.written > 0 { c.at.sent } else { 0 },
            first_byte: c.at.first_byte,
            end: now,
            bytes_in: c.job.bytes_in,
            bytes_out: c.job.written as u64,
            body_len: c.parser.body_len,
            reused: c.uses > 1 || (c.uses == 1 && outcome != Outcome::Response),
            keep_alive: outcome == Outcome::Response && c.parser.keep_alive,
            detail: c.parser.detail,
            lenient: c.parser.lenient,
        };
        c.enter(
            if c.fd >= 0 { St::Idle } else { St::Closed },
            &mut self.unsettled,
        );
        self.sink.record(&s);
        if outcome == Outcome::Response {
            self.user_served(idx);
        }
        // A flow that asked for the response gets it typed, built once
        // here whatever the transport: it never parses bytes itself.
        let job = &mut self.conns[idx].job;
        let captured = match job.fields.take() {
            _ if !job.capture => None,
            // HTTP/2: the fields came typed, the body as the DATA it was.
            Some(headers) => Some(Captured {
                status: s.status,
                headers,
                body: std::mem::take(&mut job.captured),
            }),
            None => (!job.captured.is_empty())
                .then(|| Captured::from_http1(&job.captured, job.head, s.status)),
        };
        self.flow.ended(&mut self.users[idx], &s, captured.as_ref());
        // The flow has seen it: a large capture is not kept while the slot idles.
        crate::codec::clear_buffer(&mut self.conns[idx].job.captured);
        self.slot_freed(idx);
    }

    /// Fails requests that ran past their deadline.
    fn sweep(&mut self, now: u64) {
        match self.transport {
            Transport::Http1 => self.h1_sweep(now),
            Transport::Http2(_) => self.h2_sweep(now),
        }
    }

    /// The run is over: requests still in flight are cancelled, not failed,
    /// and their sockets reset so neither side waits on them.
    fn finish(&mut self) {
        self.ending = true;
        let now = self.now();
        let stop_at = self.cfg.end_at.map_or(now, |e| e.min(now));
        self.report.not_yet_due = self.settle(stop_at, now);
        if let Transport::Http2(_) = self.transport {
            self.h2_abort();
        }
        for idx in 0..self.conns.len() {
            let c = &mut self.conns[idx];
            if c.busy() {
                if c.fd >= 0 {
                    sys::abort(c.fd);
                    c.fd = -1;
                }
                c.tls = None;
                c.enter(St::Closed, &mut self.unsettled);
                self.complete(idx, Outcome::Cancelled, now);
            }
            self.close(idx);
        }
        self.sink.gauge(sample::Gauge {
            in_flight: 0,
            users: None,
            cpu_ns: sys::thread_cpu_ns(),
        });
        self.sink.finish(now);
        self.report.ended_at = now;
    }
}

/// The epoll token of slot or connection `idx` in its `gen`eration: events
/// for a socket the index has since replaced are told apart and ignored.
fn token(idx: usize, gen: u32) -> u64 {
    idx as u64 | (gen as u64) << 32
}

/// Counts a finished handshake and keeps the first one's version and cipher.
fn note_handshake(report: &mut WorkerReport, tls: &rustls::ClientConnection) {
    if tls.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
        report.tls_resumed += 1;
    } else {
        report.tls_full += 1;
    }
    if report.tls_version.is_none() {
        report.tls_version = tls.protocol_version().map(|v| format!("{v:?}"));
        report.tls_cipher = tls
            .negotiated_cipher_suite()
            .map(|s| format!("{:?}", s.suite()));
    }
}
