//! One task per TCP connection: read heads, read or discard bodies, let
//! `routes` answer, and write responses in batches.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use crate::stream::Stream;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::http::{self, BodyLen, ConnHeader, Framing, Head};
use crate::route::Route;
use crate::stats::Tally;
use crate::Shared;

pub(crate) const INITIAL_READ_BUF: usize = 4 * 1024;
/// Pending responses are written once this much has accumulated, so a deep
/// pipeline cannot grow the write buffer without bound.
pub(crate) const WRITE_BATCH: usize = 64 * 1024;
/// `/echo` holds the body in memory; larger bodies get 413.
pub(crate) const MAX_ECHO_BODY: u64 = 16 * 1024 * 1024;
/// How long a closing connection keeps draining the client's unread bytes.
/// Closing with unread data makes the kernel send RST, which can destroy the
/// response the client has not read yet.
const LINGER: Duration = Duration::from_secs(1);
/// The pause before each piece of a `?split=N` response, so the client gets
/// the pieces in separate reads.
const SPLIT_PAUSE: Duration = Duration::from_millis(1);
/// How long a connection that `/bad/idle-close` has made stale waits for the
/// request it will close on.
const STALE_HOLD: Duration = Duration::from_secs(10);

/// Body content for `/bytes`, `/vary` and `/chunked`: a 64-byte printable
/// pattern repeated, so consecutive slices of it join seamlessly.
pub(crate) static FILLER: [u8; 64 * 1024] = {
    const PATTERN: &[u8; 64] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-\n";
    let mut buf = [0u8; 64 * 1024];
    let mut i = 0;
    while i < buf.len() {
        buf[i] = PATTERN[i % 64];
        i += 1;
    }
    buf
};

pub(crate) struct Conn {
    pub(crate) stream: Stream,
    /// Always fully initialised; `pos..end` is the unconsumed input.
    pub(crate) rbuf: Vec<u8>,
    pub(crate) pos: usize,
    pub(crate) end: usize,
    pub(crate) wbuf: Vec<u8>,
    pub(crate) tally: Tally,
    pub(crate) shared: Arc<Shared>,
    /// `?split=N`: write responses N bytes at a time.
    pub(crate) split: Option<usize>,
    /// `/bad/idle-close?ms=N`: after this much idleness, the next request
    /// is met with a close.
    pub(crate) stale_after: Option<Duration>,
    /// `/bad/close-every` responses so far on this connection.
    pub(crate) close_every: u64,
    /// No request yet, and no protocol agreed by ALPN: the first bytes may
    /// be HTTP/2's preface.
    pub(crate) sniff: bool,
}

/// What becomes of a connection after a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    /// Kept for the next request.
    KeepAlive,
    /// Send what is pending, half-close and drain (FIN, no reset).
    Close,
    /// Send what is pending, then reset (`SO_LINGER` 0: RST).
    Reset,
    /// Half-close and drop at once, the client's bytes unread, so its
    /// request is answered by FIN then RST: a server that closed an idle
    /// connection just as the request arrived.
    Abandon,
    /// The client has gone: nothing to do.
    Gone,
    /// The client opened with HTTP/2's preface: the connection, and what
    /// was read of it, go to `http2`.
    Http2,
}

/// Why a request body could not be read.
pub(crate) enum BodyError {
    /// Malformed chunked framing: 400 and close.
    Bad,
    /// Too large for `/echo`: 413 and close.
    TooLarge,
    /// The peer went away or the socket failed.
    Io,
}

impl Conn {
    /// Waits for the first bytes of the next request, with everything sent.
    /// Returns how to end the connection instead when the client closed, or
    /// when it stayed idle past [`crate::Hostile::idle_close`] or a
    /// `/bad/idle-close` delay.
    pub(crate) async fn await_request(&mut self) -> io::Result<Option<After>> {
        self.flush().await?;
        if let Some(wait) = self.stale_after.take() {
            let mut byte = [0u8; 1];
            // `peek` (unlike `readable`) never wakes without cause.
            match tokio::time::timeout(wait, self.stream.peek(&mut byte)).await {
                Ok(Ok(0)) => return Ok(Some(After::Gone)),
                Ok(result) => {
                    result?;
                }
                Err(_) => {
                    // Stale now: close as the next request lands, unread.
                    let _ = tokio::time::timeout(STALE_HOLD, self.stream.peek(&mut byte)).await;
                    return Ok(Some(After::Abandon));
                }
            }
        }
        let filled = match self.shared.hostile.idle_close {
            Some(idle) => match tokio::time::timeout(idle, self.fill()).await {
                Ok(filled) => filled?,
                Err(_) => return Ok(Some(After::Close)),
            },
            None => self.fill().await?,
        };
        Ok((!filled).then_some(After::Gone))
    }

    /// Reads more input, after sending whatever responses are pending: a
    /// client may be waiting for them before it sends more, and a pipelined
    /// burst is answered with a single write. Returns `false` on EOF.
    pub(crate) async fn fill(&mut self) -> io::Result<bool> {
        self.flush().await?;
        // What is left is at most a partial head, so moving it is cheap.
        if self.pos > 0 {
            self.rbuf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        // Only a head that does not fit makes the buffer grow; the caller
        // answers 431 before a head could need more than MAX_HEAD.
        if self.end == self.rbuf.len() {
            let len = (self.rbuf.len() * 2).min(http::MAX_HEAD);
            debug_assert!(
                len > self.end,
                "fill with a full buffer would look like EOF"
            );
            self.rbuf.resize(len, 0);
        }
        let n = self.stream.read(&mut self.rbuf[self.end..]).await?;
        self.end += n;
        Ok(n > 0)
    }

    /// Reads the request body, except for a route that answers before it.
    pub(crate) async fn read_body_unless_early(
        &mut self,
        head: &Head,
    ) -> Result<Option<Vec<u8>>, BodyError> {
        if head.target.answers_before_body() {
            return Ok(None);
        }
        self.read_body(head).await
    }

    /// Reads the request body; it is kept only when the route uses it.
    pub(crate) async fn read_body(&mut self, head: &Head) -> Result<Option<Vec<u8>>, BodyError> {
        let keep = head.target.wants_body();
        match head.framing {
            Framing::None => Ok(keep.then(Vec::new)),
            Framing::Length(len) => {
                if keep && len > MAX_ECHO_BODY {
                    return Err(BodyError::TooLarge);
                }
                let mut out = keep.then(|| Vec::with_capacity(len as usize));
                let mut remaining = len;
                if head.expect_continue && ((self.end - self.pos) as u64) < len {
                    self.interim_continue();
                }
                loop {
                    let n = (remaining.min((self.end - self.pos) as u64)) as usize;
                    if let Some(out) = out.as_mut() {
                        out.extend_from_slice(&self.rbuf[self.pos..self.pos + n]);
                    }
                    self.pos += n;
                    remaining -= n as u64;
                    if remaining == 0 {
                        return Ok(out);
                    }
                    if !self.fill().await.map_err(|_| BodyError::Io)? {
                        return Err(BodyError::Io);
                    }
                }
            }
            Framing::Chunked => {
                let mut decoder = http::ChunkedDecoder::default();
                let mut out = keep.then(Vec::new);
                if head.expect_continue && self.pos == self.end {
                    self.interim_continue();
                }
                loop {
                    let n = decoder
                        .feed(&self.rbuf[self.pos..self.end], out.as_mut())
                        .map_err(|_| BodyError::Bad)?;
                    self.pos += n;
                    if out.as_ref().is_some_and(|o| o.len() as u64 > MAX_ECHO_BODY) {
                        return Err(BodyError::TooLarge);
                    }
                    if decoder.is_done() {
                        return Ok(out);
                    }
                    if !self.fill().await.map_err(|_| BodyError::Io)? {
                        return Err(BodyError::Io);
                    }
                }
            }
        }
    }

    /// Tells a client that waits for permission (`Expect: 100-continue`, as
    /// curl sends for larger POSTs) to send the body.
    pub(crate) fn interim_continue(&mut self) {
        const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";
        self.wbuf.extend_from_slice(CONTINUE);
        self.tally.bytes(CONTINUE.len() as u64);
    }

    /// Answers a request that cannot be served (or even delimited) and
    /// marks the connection for closing.
    pub(crate) fn error(&mut self, route: Route, status: u16, body: &str) {
        self.head(
            route,
            status,
            "text/plain",
            BodyLen::Length(body.len() as u64),
            ConnHeader::Close,
            &[],
        );
        self.body(body.as_bytes());
    }

    /// Counts a response about to be written by hand.
    pub(crate) fn count(&mut self, route: Route, status: u16) {
        self.tally.request(&self.shared.counters, route, status);
    }

    /// Counts a request deliberately left without an answer.
    pub(crate) fn unanswered(&mut self, route: Route) {
        self.tally.unanswered(route);
    }

    /// Starts a response: counts the request and appends its head.
    pub(crate) fn head(
        &mut self,
        route: Route,
        status: u16,
        content_type: &str,
        len: BodyLen,
        conn: ConnHeader,
        extra: &[(&str, &str)],
    ) {
        self.tally.request(&self.shared.counters, route, status);
        let before = self.wbuf.len();
        http::push_head(&mut self.wbuf, status, content_type, len, conn, extra);
        self.tally.bytes((self.wbuf.len() - before) as u64);
    }

    /// Appends counted response bytes.
    pub(crate) fn body(&mut self, bytes: &[u8]) {
        self.wbuf.extend_from_slice(bytes);
        self.tally.bytes(bytes.len() as u64);
    }

    /// Appends a whole pre-encoded response on the hot path.
    pub(crate) fn canned(&mut self, route: Route, status: u16, parts: &[&[u8]]) {
        self.count(route, status);
        for part in parts {
            self.body(part);
        }
    }

    /// Appends a response that `/_stats` must not count.
    pub(crate) fn uncounted(&mut self) -> &mut Vec<u8> {
        &mut self.wbuf
    }

    /// Sends `n` bytes of [`FILLER`]: small amounts join the write batch,
    /// large ones are streamed from the static buffer so that no body is
    /// ever held in memory whole.
    pub(crate) async fn filler(&mut self, mut n: u64) -> io::Result<()> {
        if n <= FILLER.len() as u64 {
            if self.wbuf.len() as u64 + n > WRITE_BATCH as u64 {
                self.flush().await?;
            }
            self.body(&FILLER[..n as usize]);
            return Ok(());
        }
        self.flush().await?;
        while n > 0 {
            let len = n.min(FILLER.len() as u64) as usize;
            self.tally.bytes(len as u64);
            // Counted before writing so that a client which has read the
            // bytes is guaranteed to find them in the stats.
            self.tally.flush(&self.shared.counters);
            write(&mut self.stream, &FILLER[..len], self.split).await?;
            n -= len as u64;
        }
        Ok(())
    }

    /// Writes pending responses. Counts are published first, for the same
    /// reason as in [`Conn::filler`].
    pub(crate) async fn flush(&mut self) -> io::Result<()> {
        self.tally.flush(&self.shared.counters);
        if self.wbuf.is_empty() {
            return Ok(());
        }
        let result = write(&mut self.stream, &self.wbuf, self.split).await;
        self.wbuf.clear();
        // An /echo of a large body should not pin that much memory for the
        // rest of a long-lived connection.
        if self.wbuf.capacity() > 4 * WRITE_BATCH {
            self.wbuf.shrink_to(WRITE_BATCH);
        }
        result
    }

    /// Appends counted bytes and sends them with whatever else is pending.
    pub(crate) async fn write_now(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.body(bytes);
        self.flush().await
    }

    /// From now on, writes go out `piece` bytes at a time (`None`: whole).
    pub(crate) fn split(&mut self, piece: Option<usize>) {
        self.split = piece;
    }

    /// Makes the connection stale after `ms` of idleness (`/bad/idle-close`).
    pub(crate) fn stale_after(&mut self, ms: u64) {
        self.stale_after = Some(Duration::from_millis(ms));
    }

    /// Counts a `/bad/close-every` response; returns how many there have
    /// been on this connection.
    pub(crate) fn count_close_every(&mut self) -> u64 {
        self.close_every += 1;
        self.close_every
    }

    /// Publishes the counts and sends what is pending, then reads and drops
    /// whatever the client sends until it closes (`/bad/silent`).
    pub(crate) async fn discard_until_eof(&mut self) {
        if self.flush().await.is_err() {
            return;
        }
        while let Ok(n) = self.stream.read(&mut self.rbuf).await {
            if n == 0 {
                break;
            }
        }
    }

    /// Sends what is pending, half-closes, and drains the peer's remaining
    /// input for a while so the close does not turn into a reset that could
    /// destroy the last response before the client reads it.
    pub(crate) async fn linger(&mut self) {
        if self.flush().await.is_err() || self.stream.shutdown().await.is_err() {
            return;
        }
        let drain = async {
            while let Ok(n) = self.stream.read(&mut self.rbuf).await {
                if n == 0 {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(LINGER, drain).await;
    }
}

/// Writes `bytes` whole, or `piece` bytes at a time with a short pause
/// before each, so that a client gets them in separate reads.
async fn write(stream: &mut Stream, bytes: &[u8], piece: Option<usize>) -> io::Result<()> {
    let Some(piece) = piece else {
        return stream.write_all(bytes).await;
    };
    for part in bytes.chunks(piece) {
        tokio::time::sleep(SPLIT_PAUSE).await;
        stream.write_all(part).await?;
    }
    Ok(())
}
