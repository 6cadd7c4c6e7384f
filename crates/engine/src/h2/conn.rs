//! The client connection: [`ClientConn`], the types its callers see, and
//! the methods the worker calls. The work is split the way the `h2` crate
//! splits `proto/streams/`:
//!
//! | file | what it holds |
//! |------|---------------|
//! | `conn.rs` | the public API: `new`, `open`, `cancel`, `feed`, output, limits |
//! | `conn/store.rs` | the stream table: each open stream's [`State`] and windows, by id |
//! | `conn/recv.rs` | the receive path: frame reader, DATA, header blocks, control frames, receive windows |
//! | `conn/scan.rs` | the capture scan: checks a head's fields, keeps status, length, server; re-writes capture heads as HTTP/1.1 |
//! | `conn/send.rs` | the send path and flow control: HEADERS, bodies cut to the send windows, WINDOW_UPDATE, waiting bodies |
//! | `conn/tests.rs`, `conn/tests/` | tests by topic, through the public methods |
//!
//! A frame in: [`ClientConn::feed`] hands the read to `recv`, which parses
//! frames straight from the caller's buffer (only a frame header or a
//! control frame cut by a read boundary is buffered). DATA payloads stream
//! through as they arrive, so a body is never copied; they are charged to
//! the receive windows and reported as [`Event::Data`]. A complete header
//! block goes through HPACK into `scan`, and becomes [`Event::Head`] or
//! ends the stream. Control frames update the connection: SETTINGS and
//! WINDOW_UPDATE call into `send`, which lets waiting bodies go on.
//!
//! A frame out: `open` (via `send`), answers (SETTINGS and PING ACKs),
//! RST_STREAM, WINDOW_UPDATE and GOAWAY are appended to one output buffer;
//! the caller writes [`ClientConn::pending_out`] and reports what went with
//! [`ClientConn::wrote`], so one `write` carries frames of many streams.

use super::code::{CANCEL, ENHANCE_YOUR_CALM};
use super::frame::{self, HEADER_LEN};
use super::hpack::Decoder;
use super::request::Request;
use super::PREFACE;
use recv::{BlockRx, Rx};
use std::fmt;
use store::{State, Stream, Streams};

mod recv;
mod scan;
mod send;
mod store;

/// Our receive window, per stream and for the connection: 2^30 − 1 like
/// h2load's default, so a benchmark is never held back by its client.
const RECV_WINDOW: u32 = (1 << 30) - 1;
/// SETTINGS_HEADER_TABLE_SIZE: the default, so we never send the setting.
const HEADER_TABLE_SIZE: usize = 4096;
/// Answers (SETTINGS and PING ACKs) queued while the caller has not
/// drained the output: more is a flood, not a peer waiting for replies.
const MAX_QUEUED_ACKS: u32 = 1000;
const MAX_STREAM_ID: u32 = (1 << 31) - 1;
/// SETTINGS_MAX_CONCURRENT_STREAMS assumed until the server's SETTINGS.
const DEFAULT_MAX_STREAMS: u32 = 100;

/// What the server said about a stream or the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// The final response head (1xx heads are skipped; their bytes count in
    /// this `wire`). `server`: the Server header value if present. `fields`:
    /// capture streams only, the regular header fields in order, as
    /// (name, value) — the typed capture is built from them, never from
    /// re-written HTTP/1.1 text.
    /// `wire`: bytes of the HEADERS/CONTINUATION frames incl. 9-byte headers.
    Head {
        token: u32,
        status: u16,
        content_length: Option<u64>,
        server: Option<&'a [u8]>,
        fields: Option<&'a [(String, String)]>,
        wire: u32,
    },
    /// Body bytes (padding excluded from `len`); `data` only for capture
    /// streams. `wire`: frame bytes incl. header and padding. A DATA frame
    /// cut by a read boundary comes as several events. `len` 0 carries
    /// bytes that hold no body: an empty DATA frame, padding that arrived
    /// after the data, trailers.
    Data {
        token: u32,
        len: u32,
        data: Option<&'a [u8]>,
        wire: u32,
    },
    /// END_STREAM seen (after head, body or trailers): the response is complete.
    End { token: u32 },
    /// The server reset the stream (RST_STREAM with this error code, e.g.
    /// 7 = REFUSED_STREAM).
    Reset { token: u32, code: u32 },
    /// The server broke the protocol on this stream (malformed response,
    /// DATA before HEADERS, content-length mismatch, window overflow…): we
    /// queued RST_STREAM and forgot the stream.
    StreamError { token: u32, reason: &'static str },
    /// GOAWAY: the server will process no stream above `last_stream_id`.
    GoAway { last_stream_id: u32, code: u32 },
    /// Right after GoAway, for each open stream above `last_stream_id`:
    /// never processed by the server, safe to retry elsewhere; forgotten.
    Unprocessed { token: u32 },
}

/// The connection is unusable: we queued a GOAWAY with `code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnError {
    pub code: u32,
    pub reason: &'static str,
}

impl fmt::Display for ConnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.reason, super::code::name(self.code))
    }
}

impl std::error::Error for ConnError {}

fn err(code: u32, reason: &'static str) -> ConnError {
    ConnError { code, reason }
}

/// Why [`ClientConn::open`] cannot open a stream now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenError {
    /// GOAWAY received, or the connection failed.
    GoingAway,
    /// Every client stream id (up to 2^31 − 1) has been used.
    IdsExhausted,
    /// As many streams are open as the server allows.
    AtLimit,
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OpenError::GoingAway => "the connection is going away",
            OpenError::IdsExhausted => "the connection has used all its stream ids",
            OpenError::AtLimit => "the server's limit of concurrent streams is reached",
        })
    }
}

impl std::error::Error for OpenError {}

/// A client HTTP/2 connection without I/O: bytes in, events and bytes out.
#[derive(Debug)]
pub struct ClientConn {
    out: Vec<u8>,
    /// Bytes of `out` already written.
    out_pos: usize,
    acks: u32,
    rx: Rx,
    hdr: [u8; HEADER_LEN],
    hdr_len: usize,
    buf: Vec<u8>,
    block: Vec<u8>,
    in_block: Option<BlockRx>,
    hpack: Decoder,
    /// A capture stream's header fields.
    fields: Vec<(String, String)>,
    server: Vec<u8>,
    streams: Streams,
    /// Streams with body waiting for window, in the order they blocked.
    blocked: Vec<u32>,
    scratch: Vec<u32>,
    next_id: u32,
    conn_send: i64,
    /// Received since our last connection WINDOW_UPDATE.
    conn_consumed: u32,
    peer_window: u32,
    peer_max_frame: u32,
    peer_max_streams: u32,
    peer_sent_max: Option<u32>,
    got_settings: bool,
    /// The lowest last-stream-id of the GOAWAYs received.
    goaway: Option<u32>,
    dead: Option<ConnError>,
}

impl Default for ClientConn {
    fn default() -> Self {
        ClientConn::new()
    }
}

impl ClientConn {
    /// Queues the preface, our SETTINGS (no push, a 2^30 − 1 stream window)
    /// and a WINDOW_UPDATE raising the connection window as much.
    pub fn new() -> ClientConn {
        let mut out = Vec::with_capacity(4096);
        out.extend_from_slice(PREFACE);
        frame::put_settings(
            &mut out,
            &[
                (frame::SETTINGS_ENABLE_PUSH, 0),
                (frame::SETTINGS_INITIAL_WINDOW_SIZE, RECV_WINDOW),
            ],
        );
        frame::put_window_update(&mut out, 0, RECV_WINDOW - frame::DEFAULT_WINDOW);
        ClientConn {
            out,
            out_pos: 0,
            acks: 0,
            rx: Rx::Head,
            hdr: [0; HEADER_LEN],
            hdr_len: 0,
            buf: Vec::new(),
            block: Vec::new(),
            in_block: None,
            hpack: Decoder::new(HEADER_TABLE_SIZE),
            fields: Vec::new(),
            server: Vec::new(),
            streams: Streams::new(8),
            blocked: Vec::new(),
            scratch: Vec::new(),
            next_id: 1,
            conn_send: frame::DEFAULT_WINDOW as i64,
            conn_consumed: 0,
            peer_window: frame::DEFAULT_WINDOW,
            peer_max_frame: frame::DEFAULT_MAX_FRAME,
            peer_max_streams: DEFAULT_MAX_STREAMS,
            peer_sent_max: None,
            got_settings: false,
            goaway: None,
            dead: None,
        }
    }

    /// Bytes waiting to go to the socket.
    pub fn pending_out(&self) -> &[u8] {
        &self.out[self.out_pos..]
    }

    /// Drops the first `n` bytes of [`Self::pending_out`] after a (partial) write.
    pub fn wrote(&mut self, n: usize) {
        self.out_pos = (self.out_pos + n).min(self.out.len());
        if self.out_pos == self.out.len() {
            self.out.clear();
            self.out_pos = 0;
            self.acks = 0;
        } else if self.out_pos >= 64 * 1024 && self.out_pos * 2 >= self.out.len() {
            // A large body goes out in partial writes: move the rest down
            // now and then rather than after every write.
            self.out.drain(..self.out_pos);
            self.out_pos = 0;
        }
    }

    /// A new stream may be opened now: not going away, stream ids left, and
    /// fewer streams open than the server's SETTINGS_MAX_CONCURRENT_STREAMS
    /// (100 until its SETTINGS arrive).
    pub fn can_open(&self) -> bool {
        !self.going_away() && (self.streams.len() as u64) < self.peer_max_streams as u64
    }

    /// Opens a stream: queues HEADERS (and CONTINUATION beyond the server's
    /// SETTINGS_MAX_FRAME_SIZE) and as much body as the send windows allow;
    /// the rest goes out as WINDOW_UPDATE or SETTINGS raise them. `capture`:
    /// the events carry this response's head and body bytes.
    pub fn open(&mut self, req: &Request, token: u32, capture: bool) -> Result<u32, OpenError> {
        if self.goaway.is_some() || self.dead.is_some() {
            return Err(OpenError::GoingAway);
        }
        if self.next_id > MAX_STREAM_ID {
            return Err(OpenError::IdsExhausted);
        }
        if self.streams.len() as u64 >= self.peer_max_streams as u64 {
            return Err(OpenError::AtLimit);
        }
        let id = self.next_id;
        self.next_id += 2;
        let body = req.body();
        self.send_headers(id, req.block(), body.is_empty());
        let mut state = State::default();
        if capture {
            state.insert(State::CAPTURE);
        }
        if req.is_head() {
            state.insert(State::HEAD_REQUEST);
        }
        let mut s = Stream {
            id,
            token,
            state,
            send_window: self.peer_window as i64,
            ..Stream::default()
        };
        self.send_body(&mut s, req);
        self.streams.insert(s);
        Ok(id)
    }

    /// The caller gave up on a stream: queues RST_STREAM(CANCEL) and forgets
    /// it. Frames that still arrive for it are discarded (DATA still counts
    /// against the connection window; header blocks are still decoded, to
    /// keep the HPACK table in step).
    pub fn cancel(&mut self, stream_id: u32) {
        if self.streams.remove(stream_id).is_some() && self.dead.is_none() {
            frame::put_rst(&mut self.out, stream_id, CANCEL);
        }
    }

    /// Parses whatever bytes arrived, split anywhere, and reports events.
    /// A connection error queues GOAWAY and is returned by every later call;
    /// the caller should then write what is pending, close, and fail the
    /// streams [`Self::take_open`] returns.
    pub fn feed(&mut self, input: &[u8], on: &mut impl FnMut(Event<'_>)) -> Result<(), ConnError> {
        if let Some(e) = self.dead {
            return Err(e);
        }
        let mut r = self.read(input, on);
        if r.is_ok() && self.acks > MAX_QUEUED_ACKS {
            r = Err(err(ENHANCE_YOUR_CALM, "flood of SETTINGS or PING frames"));
        }
        if let Err(e) = r {
            self.dead = Some(e);
            frame::put_goaway(&mut self.out, 0, e.code, e.reason.as_bytes());
            return Err(e);
        }
        // Batched: one update per read at most, and only past half a window.
        if self.conn_consumed >= RECV_WINDOW / 2 {
            frame::put_window_update(&mut self.out, 0, self.conn_consumed);
            self.conn_consumed = 0;
        }
        Ok(())
    }

    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// GOAWAY received, the connection failed, or stream ids are exhausted:
    /// no new streams; close once `open_streams() == 0`.
    pub fn going_away(&self) -> bool {
        self.goaway.is_some() || self.dead.is_some() || self.next_id > MAX_STREAM_ID
    }

    /// Until this connection's SETTINGS arrive, assume the server allows
    /// `n` concurrent streams instead of 100: what an earlier connection to
    /// the same server was told, so a new connection does not open streams
    /// the server would refuse.
    pub fn assume_max_streams(&mut self, n: u32) {
        if !self.got_settings {
            self.peer_max_streams = n;
        }
    }

    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS, if it sent one.
    pub fn peer_max_streams(&self) -> Option<u32> {
        self.peer_sent_max
    }

    /// The connection died: appends every open stream's token to `out`, so
    /// the caller can fail them, and forgets them.
    pub fn take_open(&mut self, out: &mut Vec<u32>) {
        self.streams.drain_tokens(out);
        self.blocked.clear();
    }

    /// The server's first frame (its SETTINGS) arrived: it speaks HTTP/2.
    pub fn heard_from_peer(&self) -> bool {
        self.got_settings
    }

    /// Ids of streams the server has not opened; a frame there other than
    /// PRIORITY is a connection error (§5.1). Even ids are the server's,
    /// and push is disabled.
    fn idle(&self, id: u32) -> bool {
        id.is_multiple_of(2) || id >= self.next_id
    }
}

#[cfg(test)]
mod tests;
