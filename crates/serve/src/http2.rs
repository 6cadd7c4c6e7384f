//! HTTP/2 on the same port as HTTP/1.1, with the `h2` crate: chosen by ALPN
//! under TLS, or by the client's preface on a plain connection (h2c with
//! prior knowledge). Routes answer through the same [`routes::reply`] as
//! over HTTP/1.1; under `/bad/`, HTTP/2 has misbehaviours of its own.
//!
//! A stream that can be answered at once (no request body to read, no
//! wait) is answered on the connection's task without a task of its own;
//! request bodies, waits and large response bodies get one.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use h2::server::{self, SendResponse};
use h2::{Reason, RecvStream, SendStream};
use http::header::{self, HeaderMap, HeaderValue};
use http::request::Parts;
use http::{Method, Request, Response, StatusCode};
use tokio::io::{AsyncRead, AsyncWrite, BufWriter, ReadBuf};

use crate::ask::Target;
use crate::conn::{BodyError, FILLER, MAX_ECHO_BODY, WRITE_BATCH};
use crate::http::{find_cookie, SESSION_COOKIE};
use crate::route::Kind;
use crate::route::Route;
use crate::routes::{self, Ask, Body, Reply};
use crate::stats::{Counters, Tally};
use crate::stream::Rewind;
use crate::Shared;

/// What an HTTP/2 client sends first (RFC 9113 §3.4).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const SERVER: HeaderValue =
    HeaderValue::from_static(concat!("yace-target/", env!("CARGO_PKG_VERSION")));
/// Per-stream receive window: an upload of up to this much needs no
/// WINDOW_UPDATE round trip (the protocol's default is 64 KiB).
const STREAM_WINDOW: u32 = 1 << 20;
/// Receive window shared by all of a connection's streams.
const CONNECTION_WINDOW: u32 = 16 << 20;
/// Filler bodies up to this size (and this many pieces) are handed to h2 at
/// once, which queues what the client's window does not take yet; larger
/// ones are handed over as the window opens, so that no stream queues more.
const AT_ONCE: u64 = 64 * 1024;
const AT_ONCE_PIECES: u64 = 64;
/// Longest slice of [`FILLER`] that fits whatever the pattern offset (< 64)
/// it starts at.
const MAX_SLICE: u64 = FILLER.len() as u64 - 64;
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

type Io = Unvectored<BufWriter<Rewind>>;
type Connection = server::Connection<Io, Bytes>;

/// Whether the first bytes of a connection are HTTP/2's preface; `None`
/// while they are a prefix of it and too few to tell.
pub(crate) fn sniff(first: &[u8]) -> Option<bool> {
    if first.len() >= PREFACE.len() {
        Some(first.starts_with(PREFACE))
    } else if PREFACE.starts_with(first) {
        None
    } else {
        Some(false)
    }
}

/// The connection's own state; streams with a task of their own count
/// into a tally of their own.
struct Conn {
    shared: Arc<Shared>,
    /// Counts of the streams answered on the connection's task, published
    /// before h2 is next polled (which is when it writes).
    tally: Tally,
    streams: u64,
    /// GOAWAY has been sent: streams the client opened before it saw it are
    /// refused.
    going_away: bool,
}

pub(crate) async fn serve(io: Rewind, shared: Arc<Shared>) {
    let mut builder = server::Builder::new();
    builder
        .max_concurrent_streams(shared.h2_max_streams)
        .initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW);
    let io = Unvectored(BufWriter::with_capacity(WRITE_BATCH, io));
    let handshake = builder.handshake::<_, Bytes>(io);
    let Ok(Ok(mut h2)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await else {
        return;
    };
    shared.counters.h2_connection();
    let mut conn = Conn {
        shared,
        tally: Tally::h2(),
        streams: 0,
        going_away: false,
    };
    loop {
        conn.tally.flush(&conn.shared.counters);
        let next = match conn.shared.hostile.idle_close {
            // Idle means no new stream for that long; the streams still
            // running finish, as after any graceful GOAWAY.
            Some(idle) if !conn.going_away => match tokio::time::timeout(idle, h2.accept()).await {
                Ok(next) => next,
                Err(_) => {
                    conn.go_away(&mut h2);
                    continue;
                }
            },
            _ => h2.accept().await,
        };
        match next {
            Some(Ok((request, respond))) => conn.stream(&mut h2, request, respond).await,
            // The client has gone, or broke the protocol (h2 has told it).
            Some(Err(_)) | None => break,
        }
    }
    conn.tally.flush(&conn.shared.counters);
}

impl Conn {
    /// Sends GOAWAY once, gracefully: the streams already open finish, and
    /// the connection closes after the last.
    fn go_away(&mut self, h2: &mut Connection) {
        if !self.going_away {
            self.going_away = true;
            h2.graceful_shutdown();
        }
    }

    async fn stream(
        &mut self,
        h2: &mut Connection,
        request: Request<RecvStream>,
        mut respond: SendResponse<Bytes>,
    ) {
        if self.going_away {
            // Not processed, so the client may safely retry it elsewhere;
            // not counted, so `h2_max_requests` is exact.
            respond.send_reset(Reason::REFUSED_STREAM);
            return;
        }
        self.streams += 1;
        if self.shared.h2_max_requests == Some(self.streams) {
            self.go_away(h2);
        }
        let (parts, body) = request.into_parts();
        let target = Target::parse(parts.uri.path_and_query().map_or("", |pq| pq.as_str()));
        let mut fixed = None;
        match target {
            Target::Bad(bad) if matches!(bad.kind, Kind::Rst | Kind::Refuse) => {
                self.tally.unanswered(Route::Bad(bad.kind));
                respond.send_reset(if bad.kind == Kind::Rst {
                    Reason::INTERNAL_ERROR
                } else {
                    Reason::REFUSED_STREAM
                });
                return;
            }
            Target::Bad(bad) if bad.kind == Kind::GoAway => {
                let body = Body::Static(b"going away\n");
                fixed = Some(Reply::text(Route::Bad(Kind::GoAway), 200, body));
                self.go_away(h2);
            }
            Target::Close => self.go_away(h2),
            _ => {}
        }
        let is_head = parts.method == Method::HEAD;
        if !body.is_end_stream() || target.waits() {
            let shared = self.shared.clone();
            let job = Job {
                parts,
                body,
                target,
                fixed,
                is_head,
            };
            tokio::spawn(job.run(shared, respond));
            return;
        }
        let reply = match fixed {
            Some(reply) => reply,
            None => {
                let kept = target.wants_body().then(Vec::new);
                routes::reply(ask(&parts, &target, kept), &self.shared).await
            }
        };
        let count = Count {
            tally: &mut self.tally,
            counters: &self.shared.counters,
            publish: false,
        };
        if let Some(rest) = send(respond, reply, is_head, count) {
            tokio::spawn(rest.run(self.shared.clone()));
        }
    }
}

/// A stream answered on a task of its own: it has a body to read first, or
/// a wait.
struct Job {
    parts: Parts,
    body: RecvStream,
    target: Target,
    fixed: Option<Reply<'static>>,
    is_head: bool,
}

impl Job {
    async fn run(mut self, shared: Arc<Shared>, respond: SendResponse<Bytes>) {
        let keep = self.fixed.is_none() && self.target.wants_body();
        let declared = content_length(&self.parts.headers);
        let kept = match read_body(&mut self.body, keep, declared).await {
            Ok(kept) => kept,
            Err(BodyError::TooLarge) => {
                let body = Body::Static(b"body too large for /echo\n");
                let reply = Reply::text(Route::Echo, 413, body);
                // The rest of the upload is refused by h2 (RST_STREAM
                // NO_ERROR) once the body is dropped.
                let mut tally = Tally::h2();
                send(
                    respond,
                    reply,
                    self.is_head,
                    Count::publish(&mut tally, &shared),
                );
                return;
            }
            // The client reset the stream or left.
            Err(_) => return,
        };
        let reply = match self.fixed.take() {
            Some(reply) => reply,
            None => routes::reply(ask(&self.parts, &self.target, kept), &shared).await,
        };
        let mut tally = Tally::h2();
        let count = Count::publish(&mut tally, &shared);
        if let Some(rest) = send(respond, reply, self.is_head, count) {
            rest.run(shared).await;
        }
    }
}

/// Reads a request body, keeping it when `keep`, and gives the client its
/// window back as each piece arrives.
async fn read_body(
    body: &mut RecvStream,
    keep: bool,
    declared: Option<u64>,
) -> Result<Option<Vec<u8>>, BodyError> {
    if keep && declared.is_some_and(|n| n > MAX_ECHO_BODY) {
        return Err(BodyError::TooLarge);
    }
    let mut out = keep.then(|| Vec::with_capacity(declared.unwrap_or(0) as usize));
    while let Some(data) = body.data().await {
        let data = data.map_err(|_| BodyError::Io)?;
        // Copied or dropped right away, so the window reopens at once.
        let _ = body.flow_control().release_capacity(data.len());
        if let Some(out) = out.as_mut() {
            if (out.len() + data.len()) as u64 > MAX_ECHO_BODY {
                return Err(BodyError::TooLarge);
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

fn ask<'a>(parts: &'a Parts, target: &'a Target, body: Option<Vec<u8>>) -> Ask<'a> {
    let headers = &parts.headers;
    // HTTP/2 clients may split cookies over several fields (RFC 9113 §8.2.3).
    let session = target.wants_session().then(|| {
        headers
            .get_all(header::COOKIE)
            .iter()
            .find_map(|v| find_cookie(v.as_bytes(), SESSION_COOKIE))
    });
    let content_type = target.wants_content_type().then(|| {
        headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
    });
    Ask {
        target,
        session: session.flatten(),
        content_type: content_type.flatten(),
        body,
    }
}

/// The rest of a large filler body, handed to h2 as the client's window
/// opens.
struct Rest {
    stream: SendStream<Bytes>,
    left: u64,
    /// The pattern restarts every `piece` bytes, and each piece is a DATA
    /// frame of its own (or several, when it is larger than a frame).
    piece: u64,
}

/// How [`send`] counts.
struct Count<'a> {
    tally: &'a mut Tally,
    counters: &'a Counters,
    /// Publish the tally before handing anything to h2: on a stream's own
    /// task, h2 may write it out at any time.
    publish: bool,
}

impl Count<'_> {
    fn publish<'a>(tally: &'a mut Tally, shared: &'a Shared) -> Count<'a> {
        Count {
            tally,
            counters: &shared.counters,
            publish: true,
        }
    }
}

/// Hands a reply to h2: its head, and its body when it is small, counting
/// what it hands over. Returns the body left to stream.
fn send(
    mut respond: SendResponse<Bytes>,
    reply: Reply<'_>,
    is_head: bool,
    count: Count<'_>,
) -> Option<Rest> {
    let (len, pieces) = match reply.body {
        Body::None => (None, None),
        Body::Static(b) => (Some(b.len() as u64), None),
        Body::Owned(ref b) => (Some(b.len() as u64), None),
        Body::Filler(n) => (Some(n), Some((n, n))),
        Body::Chunks { chunks, size } => (None, Some((chunks * size, size))),
    };
    let mut head = Response::new(());
    *head.status_mut() = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::OK);
    let headers = head.headers_mut();
    headers.insert(header::SERVER, SERVER);
    if !matches!(reply.body, Body::None) {
        headers.insert(header::CONTENT_TYPE, content_type(reply.content_type));
    }
    if let Some(len) = len {
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    }
    if let Some(cookie) = reply.cookie.and_then(|c| HeaderValue::try_from(c).ok()) {
        headers.insert(header::SET_COOKIE, cookie);
    }
    let body = match reply.body {
        _ if is_head => None,
        Body::Static(b) if !b.is_empty() => Some(Bytes::from_static(b)),
        Body::Owned(b) if !b.is_empty() => Some(Bytes::from(b)),
        _ => None,
    };
    let pieces = pieces.filter(|&(total, _)| !is_head && total > 0);
    let at_once =
        pieces.is_some_and(|(total, piece)| total <= AT_ONCE && total / piece <= AT_ONCE_PIECES);
    if let Some(route) = reply.route {
        count.tally.request(count.counters, route, reply.status);
        let now = match (&body, pieces) {
            (Some(b), _) => b.len() as u64,
            (None, Some((total, _))) if at_once => total,
            _ => 0,
        };
        count.tally.bytes(now);
    }
    if count.publish {
        count.tally.flush(count.counters);
    }
    let end = body.is_none() && pieces.is_none();
    let mut stream = respond.send_response(head, end).ok()?;
    if let Some(body) = body {
        let _ = stream.send_data(body, true);
        return None;
    }
    let (total, piece) = pieces?;
    if !at_once {
        return Some(Rest {
            stream,
            left: total,
            piece,
        });
    }
    let mut left = total;
    while left > 0 {
        let n = left.min(piece);
        left -= n;
        // A piece of at most AT_ONCE bytes starts the pattern afresh.
        let data = Bytes::from_static(&FILLER[..n as usize]);
        if stream.send_data(data, left == 0).is_err() {
            break;
        }
    }
    None
}

impl Rest {
    async fn run(mut self, shared: Arc<Shared>) {
        let mut tally = Tally::h2();
        // Offset into the current piece.
        let mut at = 0;
        while self.left > 0 {
            self.stream
                .reserve_capacity(self.left.min(MAX_SLICE) as usize);
            let mut granted = match poll_fn(|cx| self.stream.poll_capacity(cx)).await {
                Some(Ok(n)) => (n as u64).min(self.left),
                // Reset by the client, or the connection is gone.
                _ => return,
            };
            // All of it is handed to h2 below, before it can write any.
            tally.bytes(granted);
            tally.flush(&shared.counters);
            while granted > 0 {
                let n = granted.min(self.piece - at).min(MAX_SLICE);
                let start = (at % 64) as usize;
                let data = Bytes::from_static(&FILLER[start..start + n as usize]);
                granted -= n;
                self.left -= n;
                at = (at + n) % self.piece;
                if self.stream.send_data(data, self.left == 0).is_err() {
                    return;
                }
            }
        }
    }
}

/// How h2 gets its writes out. Offered vectored writes, h2 writes every
/// DATA frame over 256 bytes on its own (and flushes after it), which for
/// small frames such as `/chunked`'s is a syscall each; without, it copies
/// frames under 1 KiB into its buffer and writes them together. A larger
/// frame then comes as its head and its payload, which the `BufWriter`
/// below joins into one write.
struct Unvectored<T>(T);

impl<T: AsyncRead + Unpin> AsyncRead for Unvectored<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Unvectored<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}

fn content_type(value: &str) -> HeaderValue {
    const OCTETS: &str = "application/octet-stream";
    match value {
        "text/plain" => HeaderValue::from_static("text/plain"),
        "application/json" => HeaderValue::from_static("application/json"),
        OCTETS => HeaderValue::from_static(OCTETS),
        other => HeaderValue::from_str(other).unwrap_or(HeaderValue::from_static(OCTETS)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing_the_preface() {
        assert_eq!(sniff(PREFACE), Some(true));
        assert_eq!(
            sniff(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\x12\x04"),
            Some(true)
        );
        assert_eq!(sniff(b"PRI * HT"), None);
        assert_eq!(sniff(b"GET / HTTP/1.1\r\n"), Some(false));
        assert_eq!(sniff(b"P"), None);
        assert_eq!(sniff(b"PRI * HTTP/1.1\r\n\r\nSM\r\n\r\n"), Some(false));
    }

    #[test]
    fn slices_fit_the_filler_at_any_offset() {
        assert!(63 + MAX_SLICE <= FILLER.len() as u64);
        assert!(AT_ONCE <= FILLER.len() as u64);
    }
}
