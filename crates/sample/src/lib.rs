//! The facts the engine reports about each request, and the narrow trait it
//! pushes them through (STYLE.md §6): statistics, file recorders and test
//! collectors are all just [`Sink`]s. A crate of its own, the vocabulary
//! the engine, the statistics and the reports share: `stats` and `report`
//! depend on it, not on the engine.

#![forbid(unsafe_code)]

mod capture;
mod cookie;
mod framing;

pub use capture::Captured;
pub use cookie::{parse_http_date, Jar, MAX_COOKIES, MAX_COOKIE_BYTES};
pub use framing::{Detail, Lenient};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a request ended. A closed set, counted and never formatted on the
/// hot path; an HTTP status (any, 5xx included) is `Response`.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Outcome {
    /// A complete response arrived (its status says whether the server coped).
    #[default]
    Response = 0,
    /// The server's port refused the connection (nothing listening, backlog full).
    ConnectRefused,
    /// The connection was not established within the connect timeout.
    ConnectTimeout,
    /// Another connect failure (unreachable network or host).
    ConnectError,
    /// The server reset the connection.
    Reset,
    /// The connection closed before any byte of the response.
    ClosedBeforeResponse,
    /// No complete response within the request timeout.
    Timeout,
    /// The connection closed in the middle of the head or body.
    IncompleteBody,
    /// The bytes were not a valid HTTP/1.x response, or broke HTTP/2's rules.
    ProtocolError,
    /// The response head, its trailers or a chunk-size line exceeded a
    /// limit (see `error_details`).
    HeaderTooLarge,
    /// The client ran out of a resource (file descriptors, local ports, memory).
    ClientResource,
    /// TLS: the server's certificate is not signed by a trusted CA.
    TlsUnknownCa,
    /// TLS: the certificate is not valid for the host name in the URL.
    TlsHostnameMismatch,
    /// TLS: the certificate has expired or is not valid yet.
    TlsExpired,
    /// TLS: the handshake failed (alert, no common protocol or cipher).
    TlsHandshake,
    /// TLS: the server did not speak TLS (plain HTTP on an HTTPS URL).
    TlsNotTls,
    /// HTTP/2: the server reset the stream (RST_STREAM) or sent a malformed one.
    StreamReset,
    /// HTTP/2: the server refused the stream unprocessed (REFUSED_STREAM, or
    /// GOAWAY), again after a retry. FastCGI: the application ended the
    /// request refusing it (`FCGI_OVERLOADED`, `FCGI_CANT_MPX_CONN`,
    /// `FCGI_UNKNOWN_ROLE`; `error_details` names which).
    StreamRefused,
    /// HTTP/2 was asked for and the server does not speak it.
    NoHttp2,
    /// Still in flight when the run ended; not an error.
    Cancelled,
    /// Open model: never sent, because no connection was free until it was
    /// too late (the plan's late policy); not an error of the server.
    Dropped,
}

impl Outcome {
    pub const COUNT: usize = 21;
    pub const ALL: [Outcome; Outcome::COUNT] = [
        Outcome::Response,
        Outcome::ConnectRefused,
        Outcome::ConnectTimeout,
        Outcome::ConnectError,
        Outcome::Reset,
        Outcome::ClosedBeforeResponse,
        Outcome::Timeout,
        Outcome::IncompleteBody,
        Outcome::ProtocolError,
        Outcome::HeaderTooLarge,
        Outcome::ClientResource,
        Outcome::TlsUnknownCa,
        Outcome::TlsHostnameMismatch,
        Outcome::TlsExpired,
        Outcome::TlsHandshake,
        Outcome::TlsNotTls,
        Outcome::StreamReset,
        Outcome::StreamRefused,
        Outcome::NoHttp2,
        Outcome::Cancelled,
        Outcome::Dropped,
    ];

    /// Counts as a failed request (not a response, not cancelled at the end).
    pub fn is_error(self) -> bool {
        !matches!(
            self,
            Outcome::Response | Outcome::Cancelled | Outcome::Dropped
        )
    }

    /// Stable snake_case name, as in the JSON result.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Response => "response",
            Outcome::ConnectRefused => "connect_refused",
            Outcome::ConnectTimeout => "connect_timeout",
            Outcome::ConnectError => "connect_error",
            Outcome::Reset => "reset",
            Outcome::ClosedBeforeResponse => "closed_before_response",
            Outcome::Timeout => "timeout",
            Outcome::IncompleteBody => "incomplete_body",
            Outcome::ProtocolError => "protocol_error",
            Outcome::HeaderTooLarge => "header_too_large",
            Outcome::ClientResource => "client_resource",
            Outcome::TlsUnknownCa => "tls_unknown_ca",
            Outcome::TlsHostnameMismatch => "tls_hostname_mismatch",
            Outcome::TlsExpired => "tls_expired",
            Outcome::TlsHandshake => "tls_handshake",
            Outcome::TlsNotTls => "tls_not_tls",
            Outcome::StreamReset => "stream_reset",
            Outcome::StreamRefused => "stream_refused",
            Outcome::NoHttp2 => "no_http2",
            Outcome::Cancelled => "cancelled",
            Outcome::Dropped => "dropped",
        }
    }

    /// One line: the likely cause and what to do about it.
    pub fn explain(self) -> &'static str {
        match self {
            Outcome::Response => "a complete response arrived",
            Outcome::ConnectRefused => {
                "nothing accepted the connection: server down, wrong port, or its listen backlog \
                 overflowed (raise somaxconn and the server's backlog)"
            }
            Outcome::ConnectTimeout => {
                "the TCP handshake did not finish in time: server overloaded (SYN queue full, SYN \
                 cookies) or packets dropped; check the server's accept rate and backlog"
            }
            Outcome::ConnectError => "the network or host is unreachable from this client",
            Outcome::Reset => {
                "the server reset the connection: it hit a connection or keep-alive limit (e.g. \
                 Apache MaxKeepAliveRequests, nginx worker_connections) or a worker crashed"
            }
            Outcome::ClosedBeforeResponse => {
                "the server closed the connection without answering: a worker died, or it closed \
                 an idle keep-alive connection as the request was sent"
            }
            Outcome::Timeout => {
                "no complete response within the timeout: the server is queueing or stuck (slow \
                 backend, locked sessions); raise --timeout only if such latency is acceptable"
            }
            Outcome::IncompleteBody => {
                "the connection closed mid-response: the server or a proxy aborted it (crash, \
                 upstream timeout, body larger than a buffer limit)"
            }
            Outcome::ProtocolError => {
                "the bytes were not valid HTTP: wrong port (TLS or another protocol), a broken \
                 framing (bad Content-Length or chunk size), or an HTTP/2 connection error"
            }
            Outcome::HeaderTooLarge => {
                "the response head (or its trailers, or a chunk-size line) was over a limit: \
                 --max-head and --max-fields raise the head's"
            }
            Outcome::ClientResource => {
                "the client ran out of file descriptors or local ports: raise `ulimit -n`, widen \
                 net.ipv4.ip_local_port_range, keep connections alive; run `yace doctor`"
            }
            Outcome::TlsUnknownCa => {
                "the certificate is not signed by a CA this client trusts: a self-signed or \
                 private-CA certificate; pass --cacert FILE (or --insecure to skip verification)"
            }
            Outcome::TlsHostnameMismatch => {
                "the certificate is not valid for the URL's host name: use the name it was \
                 issued for, or fix the server's certificate"
            }
            Outcome::TlsExpired => {
                "the certificate has expired or is not valid yet: renew it, or check both clocks"
            }
            Outcome::TlsHandshake => {
                "the TLS handshake failed: no protocol version or cipher in common, a client \
                 certificate is required (--cert/--key), or the server sent an alert"
            }
            Outcome::TlsNotTls => {
                "the server did not answer in TLS: plain HTTP on this port? try http://"
            }
            Outcome::StreamReset => {
                "HTTP/2: the server reset the stream (RST_STREAM) or sent a malformed response on \
                 it: an application error, a proxy limit, or a server bug"
            }
            Outcome::StreamRefused => {
                "HTTP/2: the server refused the stream before processing it (REFUSED_STREAM or \
                 GOAWAY), even on a retry: it is shedding load or limits streams per connection"
            }
            Outcome::NoHttp2 => {
                "HTTP/2 was asked for and the server does not speak it: it chose HTTP/1.1 in the \
                 TLS handshake, or answered h2c prior knowledge in HTTP/1.x; enable HTTP/2 on \
                 the server or drop --http2"
            }
            Outcome::Cancelled => "still in flight when the run ended; not counted as an error",
            Outcome::Dropped => {
                "not sent: every connection was busy until the request was too late (open \
                 model); raise --max-inflight, or --late catch-up to send late requests anyway"
            }
        }
    }
}

/// One finished request. Times are nanoseconds since the run's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sample {
    pub outcome: Outcome,
    /// HTTP status of the final response; 0 when none arrived.
    pub status: u16,
    /// The scenario step it belongs to (0 for a plain run).
    pub step: u16,
    /// When the schedule wanted the request sent (equals `start` in the closed model).
    pub intended: u64,
    /// When work on it began: the connect, if it needed a new connection, else the write.
    pub start: u64,
    /// When its TCP connection was established, if it opened one; else 0.
    pub connected: u64,
    /// When its TLS handshake completed, if it made one; else 0.
    pub handshaken: u64,
    /// When its first byte was written (after any connect).
    pub sent: u64,
    /// When the first response byte arrived; 0 if none did.
    pub first_byte: u64,
    /// When it ended (complete, failed or cancelled).
    pub end: u64,
    /// Bytes read for it, head and body.
    pub bytes_in: u64,
    /// Bytes written for it.
    pub bytes_out: u64,
    /// Body bytes of the response.
    pub body_len: u64,
    /// It went out on a connection that had served earlier requests.
    pub reused: bool,
    /// The response let the connection be reused (HTTP keep-alive).
    pub keep_alive: bool,
    /// What exactly was wrong with a refused HTTP/1.1 response.
    pub detail: Detail,
    /// [`Lenient`] bits: what the client overlooked in this response.
    pub lenient: u8,
}

/// A worker's levels at one moment (its 100 ms tick).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Gauge {
    /// Requests in flight.
    pub in_flight: usize,
    /// Virtual users (and closed-model connections) inside their window;
    /// None for the open model.
    pub users: Option<usize>,
    /// The worker thread's CPU time so far, ns.
    pub cpu_ns: u64,
}

/// Where a worker pushes what happens. Called on the hot path: keep
/// implementations to counters and histogram updates.
pub trait Sink: Send {
    /// A request finished in any way.
    fn record(&mut self, s: &Sample);
    /// A connection was established, taking `nanos`.
    fn connected(&mut self, nanos: u64);
    /// A request was re-sent once on a fresh connection because a reused
    /// keep-alive connection turned out to be closed by the server.
    fn retried(&mut self) {}
    /// Called at least every 100 ms and at each whole second since the start,
    /// with the time since the start; lets per-second series roll over.
    fn tick(&mut self, _now: u64) {}
    /// Called just before each [`tick`](Sink::tick) with the worker's
    /// levels, for the per-second series.
    fn gauge(&mut self, _g: Gauge) {}
    /// The worker is done; `now` is its end time. Flush anything pending.
    fn finish(&mut self, _now: u64) {}
}

/// Two sinks fed the same events (e.g. statistics plus a per-request log).
impl<A: Sink, B: Sink> Sink for (A, B) {
    #[inline]
    fn record(&mut self, s: &Sample) {
        self.0.record(s);
        self.1.record(s);
    }
    fn connected(&mut self, nanos: u64) {
        self.0.connected(nanos);
        self.1.connected(nanos);
    }
    fn retried(&mut self) {
        self.0.retried();
        self.1.retried();
    }
    fn tick(&mut self, now: u64) {
        self.0.tick(now);
        self.1.tick(now);
    }
    fn gauge(&mut self, g: Gauge) {
        self.0.gauge(g);
        self.1.gauge(g);
    }
    fn finish(&mut self, now: u64) {
        self.0.finish(now);
        self.1.finish(now);
    }
}

/// An optional sink: `None` costs one branch per event.
impl<S: Sink> Sink for Option<S> {
    #[inline]
    fn record(&mut self, s: &Sample) {
        if let Some(x) = self {
            x.record(s);
        }
    }
    fn connected(&mut self, nanos: u64) {
        if let Some(x) = self {
            x.connected(nanos);
        }
    }
    fn retried(&mut self) {
        if let Some(x) = self {
            x.retried();
        }
    }
    fn tick(&mut self, now: u64) {
        if let Some(x) = self {
            x.tick(now);
        }
    }
    fn gauge(&mut self, g: Gauge) {
        if let Some(x) = self {
            x.gauge(g);
        }
    }
    fn finish(&mut self, now: u64) {
        if let Some(x) = self {
            x.finish(now);
        }
    }
}

impl<S: Sink + ?Sized> Sink for Box<S> {
    #[inline]
    fn record(&mut self, s: &Sample) {
        (**self).record(s);
    }
    fn connected(&mut self, nanos: u64) {
        (**self).connected(nanos);
    }
    fn retried(&mut self) {
        (**self).retried();
    }
    fn tick(&mut self, now: u64) {
        (**self).tick(now);
    }
    fn gauge(&mut self, g: Gauge) {
        (**self).gauge(g);
    }
    fn finish(&mut self, now: u64) {
        (**self).finish(now);
    }
}

/// The sink that ignores everything.
impl Sink for () {
    #[inline]
    fn record(&mut self, _: &Sample) {}
    fn connected(&mut self, _: u64) {}
}
