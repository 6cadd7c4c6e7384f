//! The client connection: frame reader, stream table, flow control.
//!
//! Frames are parsed straight from the caller's read buffer. Only a frame
//! header or a control frame cut by a read boundary is buffered; DATA
//! payloads stream through as they arrive, so a body is never copied.

use super::code::{
    CANCEL, COMPRESSION_ERROR, ENHANCE_YOUR_CALM, FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR,
    PROTOCOL_ERROR,
};
use super::frame::{self, be32, Flags, Head, HEADER_LEN, MAX_WINDOW};
use super::hpack::Decoder;
use super::request::Request;
use super::PREFACE;
use scan::Scan;
use std::fmt;
use store::{Stream, Streams, CAPTURE, END_SENT, GOT_HEAD, HEAD_REQUEST, NO_BODY};

mod scan;
mod send;
mod store;

/// Our receive window, per stream and for the connection: 2^30 − 1 like
/// h2load's default, so a benchmark is never held back by its client.
const RECV_WINDOW: u32 = (1 << 30) - 1;
/// SETTINGS_HEADER_TABLE_SIZE: the default, so we never send the setting.
const HEADER_TABLE_SIZE: usize = 4096;
/// Largest header block assembled from CONTINUATION frames.
const MAX_BLOCK: usize = 256 * 1024;
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
    /// this `wire`). `server`: the Server header value if present. `head`:
    /// capture streams only, the head re-written as HTTP/1.1
    /// ("HTTP/1.1 200 \r\nname: value\r\n…\r\n\r\n") for HTTP/1.1 parsers.
    /// `wire`: bytes of the HEADERS/CONTINUATION frames incl. 9-byte headers.
    Head {
        token: u32,
        status: u16,
        content_length: Option<u64>,
        server: Option<&'a [u8]>,
        head: Option<&'a [u8]>,
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

/// Where the reader is in the incoming byte stream.
#[derive(Debug, Clone, Copy)]
enum Rx {
    /// Reading a frame header (`hdr_len` bytes of it are in `hdr`).
    Head,
    /// Collecting a control or HEADERS payload (in `buf` if it was cut).
    Payload(Head),
    Data(DataRx),
    /// Skipping this many bytes of a frame type we ignore.
    Skip(u32),
}

#[derive(Debug, Clone, Copy)]
struct DataRx {
    /// 0: discard the payload (closed, cancelled or failed stream).
    stream: u32,
    /// The Pad Length byte is still to come.
    need_pad: bool,
    data_left: u32,
    pad_left: u32,
    end_stream: bool,
    /// The frame's body length was checked against the stream's limit:
    /// a body too long is refused before any of it is reported, however
    /// the frame is cut.
    checked: bool,
    /// Bytes of the frame consumed but not yet reported in an event.
    wire: u32,
}

/// A header block being assembled from HEADERS and CONTINUATION frames.
#[derive(Debug, Clone, Copy)]
struct BlockRx {
    stream: u32,
    end_stream: bool,
    /// HEADERS' priority made the stream depend on itself (§5.3.1).
    self_dep: bool,
    wire: u32,
}

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
    /// A capture stream's head re-written as HTTP/1.1.
    head: Vec<u8>,
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
            head: Vec::new(),
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
        let mut s = Stream {
            id,
            token,
            flags: (if capture { CAPTURE } else { 0 })
                | (if req.is_head() { HEAD_REQUEST } else { 0 }),
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

    fn read(&mut self, input: &[u8], on: &mut impl FnMut(Event<'_>)) -> Result<(), ConnError> {
        let mut pos = 0;
        loop {
            match self.rx {
                Rx::Head => {
                    let rest = &input[pos..];
                    if rest.is_empty() {
                        return Ok(());
                    }
                    let h = if self.hdr_len == 0 && rest.len() >= HEADER_LEN {
                        pos += HEADER_LEN;
                        Head::parse(rest[..HEADER_LEN].try_into().expect("9 bytes"))
                    } else {
                        let n = (HEADER_LEN - self.hdr_len).min(rest.len());
                        self.hdr[self.hdr_len..self.hdr_len + n].copy_from_slice(&rest[..n]);
                        self.hdr_len += n;
                        pos += n;
                        if self.hdr_len < HEADER_LEN {
                            return Ok(());
                        }
                        self.hdr_len = 0;
                        Head::parse(&self.hdr)
                    };
                    self.start(h, on)?;
                }
                Rx::Payload(h) => {
                    let rest = &input[pos..];
                    let need = h.len as usize - self.buf.len();
                    if self.buf.is_empty() && rest.len() >= need {
                        pos += need;
                        self.rx = Rx::Head;
                        self.frame(h, &rest[..need], on)?;
                    } else {
                        if rest.is_empty() {
                            return Ok(());
                        }
                        let n = need.min(rest.len());
                        self.buf.extend_from_slice(&rest[..n]);
                        pos += n;
                        if n == need {
                            self.rx = Rx::Head;
                            let buf = std::mem::take(&mut self.buf);
                            let r = self.frame(h, &buf, on);
                            self.buf = buf;
                            self.buf.clear();
                            r?;
                        }
                    }
                }
                Rx::Data(_) => {
                    pos += self.data(&input[pos..], on)?;
                    if matches!(self.rx, Rx::Data(_)) {
                        // `data` stops short of a frame's end only at the
                        // end of the input.
                        return Ok(());
                    }
                }
                Rx::Skip(n) => {
                    let k = (n as usize).min(input.len() - pos);
                    pos += k;
                    if k == n as usize {
                        self.rx = Rx::Head;
                    } else {
                        self.rx = Rx::Skip(n - k as u32);
                        return Ok(());
                    }
                }
            }
        }
    }

    /// A frame header arrived: checks what needs no payload, sets the reader.
    fn start(&mut self, h: Head, on: &mut impl FnMut(Event<'_>)) -> Result<(), ConnError> {
        if !self.got_settings && (h.ty != frame::SETTINGS || h.flags.contains(Flags::ACK)) {
            // "HTTP/1.1 …" read as a frame header: length "HTT", type 'P'.
            return Err(if h.len == 0x48_5454 && h.ty == b'P' {
                err(
                    PROTOCOL_ERROR,
                    "the server answered in HTTP/1.x, not HTTP/2",
                )
            } else {
                err(
                    PROTOCOL_ERROR,
                    "the server's first frame is not SETTINGS: not an HTTP/2 server?",
                )
            });
        }
        if h.len > frame::DEFAULT_MAX_FRAME {
            return Err(err(
                FRAME_SIZE_ERROR,
                "frame larger than our SETTINGS_MAX_FRAME_SIZE",
            ));
        }
        if let Some(b) = self.in_block {
            if h.ty != frame::CONTINUATION || h.stream != b.stream {
                return Err(err(
                    PROTOCOL_ERROR,
                    "header block interrupted by another frame",
                ));
            }
        }
        self.rx = match h.ty {
            frame::DATA => Rx::Data(self.start_data(h, on)?),
            frame::HEADERS
            | frame::CONTINUATION
            | frame::PRIORITY
            | frame::RST_STREAM
            | frame::SETTINGS
            | frame::PING
            | frame::GOAWAY
            | frame::WINDOW_UPDATE => Rx::Payload(h),
            frame::PUSH_PROMISE => {
                return Err(err(
                    PROTOCOL_ERROR,
                    "PUSH_PROMISE although we disabled push",
                ))
            }
            _ => Rx::Skip(h.len),
        };
        Ok(())
    }

    /// A DATA header: flow control is charged for the whole frame now.
    fn start_data(&mut self, h: Head, on: &mut impl FnMut(Event<'_>)) -> Result<DataRx, ConnError> {
        let id = h.stream;
        if id == 0 {
            return Err(err(PROTOCOL_ERROR, "DATA on stream 0"));
        }
        if h.len > RECV_WINDOW - self.conn_consumed {
            return Err(err(FLOW_CONTROL_ERROR, "DATA beyond the connection window"));
        }
        self.conn_consumed += h.len;
        let padded = h.flags.contains(Flags::PADDED);
        if padded && h.len == 0 {
            return Err(err(FRAME_SIZE_ERROR, "padded DATA without a pad length"));
        }
        let mut stream = id;
        let idle = self.idle(id);
        let problem = match self.streams.get_mut(id) {
            None if idle => return Err(err(PROTOCOL_ERROR, "DATA on a stream we did not open")),
            None => {
                stream = 0;
                None
            }
            Some(s) if s.flags & GOT_HEAD == 0 => {
                Some((PROTOCOL_ERROR, "DATA before the response head"))
            }
            Some(s) if h.len > RECV_WINDOW - s.recv_consumed => {
                Some((FLOW_CONTROL_ERROR, "DATA beyond the stream window"))
            }
            Some(s) => {
                s.recv_consumed += h.len;
                None
            }
        };
        if let Some((code, reason)) = problem {
            self.stream_error(id, code, reason, on);
            stream = 0;
        }
        Ok(DataRx {
            stream,
            need_pad: padded,
            data_left: h.len - padded as u32,
            pad_left: 0,
            end_stream: h.flags.contains(Flags::END_STREAM),
            checked: false,
            wire: HEADER_LEN as u32,
        })
    }

    /// Consumes DATA payload bytes; returns how many of `input`.
    fn data(&mut self, input: &[u8], on: &mut impl FnMut(Event<'_>)) -> Result<usize, ConnError> {
        let Rx::Data(mut d) = self.rx else {
            return Ok(0);
        };
        let mut i = 0;
        if d.need_pad {
            let Some(&pad) = input.first() else {
                return Ok(0);
            };
            i = 1;
            d.need_pad = false;
            d.wire += 1;
            if pad as u32 > d.data_left {
                return Err(err(PROTOCOL_ERROR, "DATA padding longer than the frame"));
            }
            d.data_left -= pad as u32;
            d.pad_left = pad as u32;
        }
        if !d.checked {
            d.checked = true;
            if d.stream != 0 && !self.body_fits(d.stream, d.data_left, on) {
                d.stream = 0;
            }
        }
        let n = (d.data_left as usize).min(input.len() - i);
        let chunk = &input[i..i + n];
        i += n;
        d.data_left -= n as u32;
        d.wire += n as u32;
        if d.data_left == 0 {
            // Padding already here rides on this event rather than another.
            let p = (d.pad_left as usize).min(input.len() - i);
            i += p;
            d.pad_left -= p as u32;
            d.wire += p as u32;
        }
        let done = d.data_left == 0 && d.pad_left == 0;
        if d.stream != 0 && (n > 0 || (done && d.wire > 0)) {
            if !self.body_chunk(d.stream, chunk, d.wire, on) {
                d.stream = 0;
            }
            d.wire = 0;
        }
        if done {
            self.rx = Rx::Head;
            if d.stream != 0 {
                if d.end_stream {
                    self.finish(d.stream, on);
                } else if let Some(s) = self.streams.get_mut(d.stream) {
                    if s.recv_consumed >= RECV_WINDOW / 2 {
                        frame::put_window_update(&mut self.out, s.id, s.recv_consumed);
                        s.recv_consumed = 0;
                    }
                }
            }
        } else {
            self.rx = Rx::Data(d);
        }
        Ok(i)
    }

    /// Reports body bytes; false if the stream is gone or just failed.
    /// Refuses a frame whose body would exceed the response's length.
    fn body_fits(&mut self, id: u32, len: u32, on: &mut impl FnMut(Event<'_>)) -> bool {
        let Some(s) = self.streams.get(id) else {
            return false;
        };
        let no_body = s.flags & NO_BODY != 0;
        let limit = if no_body {
            0
        } else {
            s.content_length.unwrap_or(u64::MAX)
        };
        if s.received + len as u64 <= limit {
            return true;
        }
        let reason = if no_body {
            "body in a response that has none (HEAD, 204, 304)"
        } else {
            "response body longer than its content-length"
        };
        self.stream_error(id, PROTOCOL_ERROR, reason, on);
        false
    }

    /// Reports body bytes; false if the stream is gone.
    fn body_chunk(
        &mut self,
        id: u32,
        chunk: &[u8],
        wire: u32,
        on: &mut impl FnMut(Event<'_>),
    ) -> bool {
        let Some(s) = self.streams.get_mut(id) else {
            return false;
        };
        s.received += chunk.len() as u64;
        on(Event::Data {
            token: s.token,
            len: chunk.len() as u32,
            data: (s.flags & CAPTURE != 0).then_some(chunk),
            wire,
        });
        true
    }

    /// END_STREAM: the response is complete unless its length is wrong.
    fn finish(&mut self, id: u32, on: &mut impl FnMut(Event<'_>)) {
        let Some(s) = self.streams.get(id) else {
            return;
        };
        if s.flags & NO_BODY == 0 && s.content_length.is_some_and(|l| l != s.received) {
            self.stream_error(
                id,
                PROTOCOL_ERROR,
                "response body shorter than its content-length",
                on,
            );
            return;
        }
        let Some(s) = self.streams.remove(id) else {
            return;
        };
        if s.flags & END_SENT == 0 {
            // The server answered before taking the whole body (§8.1).
            frame::put_rst(&mut self.out, id, CANCEL);
        }
        on(Event::End { token: s.token });
    }

    fn stream_error(
        &mut self,
        id: u32,
        code: u32,
        reason: &'static str,
        on: &mut impl FnMut(Event<'_>),
    ) {
        if let Some(s) = self.streams.remove(id) {
            frame::put_rst(&mut self.out, id, code);
            on(Event::StreamError {
                token: s.token,
                reason,
            });
        }
    }

    /// A whole non-DATA frame.
    fn frame(
        &mut self,
        h: Head,
        p: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnError> {
        match h.ty {
            frame::HEADERS => self.headers(h, p, on),
            frame::CONTINUATION => {
                let Some(mut b) = self.in_block else {
                    return Err(err(PROTOCOL_ERROR, "CONTINUATION without HEADERS"));
                };
                if self.block.len() + p.len() > MAX_BLOCK {
                    return Err(err(ENHANCE_YOUR_CALM, "header block larger than 256 KiB"));
                }
                self.block.extend_from_slice(p);
                b.wire = b.wire.saturating_add(h.len + HEADER_LEN as u32);
                if !h.flags.contains(Flags::END_HEADERS) {
                    self.in_block = Some(b);
                    return Ok(());
                }
                self.in_block = None;
                let block = std::mem::take(&mut self.block);
                let r = self.head_block(b, &block, on);
                self.block = block;
                self.block.clear();
                r
            }
            frame::SETTINGS => self.settings(h, p),
            frame::PING => {
                if h.stream != 0 {
                    return Err(err(PROTOCOL_ERROR, "PING on a stream"));
                }
                if p.len() != 8 {
                    return Err(err(FRAME_SIZE_ERROR, "PING payload not 8 bytes"));
                }
                if !h.flags.contains(Flags::ACK) {
                    frame::put_ping_ack(&mut self.out, p);
                    self.acks += 1;
                }
                Ok(())
            }
            frame::GOAWAY => {
                if h.stream != 0 {
                    return Err(err(PROTOCOL_ERROR, "GOAWAY on a stream"));
                }
                if p.len() < 8 {
                    return Err(err(FRAME_SIZE_ERROR, "GOAWAY shorter than 8 bytes"));
                }
                let last = be32(p) & MAX_WINDOW;
                let code = be32(&p[4..]);
                // A later GOAWAY may lower the id, never raise it (§6.8).
                let limit = self.goaway.map_or(last, |g| g.min(last));
                self.goaway = Some(limit);
                on(Event::GoAway {
                    last_stream_id: last,
                    code,
                });
                let mut ids = std::mem::take(&mut self.scratch);
                ids.clear();
                ids.extend(self.streams.iter().map(|s| s.id).filter(|&id| id > limit));
                ids.sort_unstable();
                for &id in &ids {
                    if let Some(s) = self.streams.remove(id) {
                        on(Event::Unprocessed { token: s.token });
                    }
                }
                self.scratch = ids;
                Ok(())
            }
            frame::RST_STREAM => {
                if h.stream == 0 {
                    return Err(err(PROTOCOL_ERROR, "RST_STREAM on stream 0"));
                }
                if p.len() != 4 {
                    return Err(err(FRAME_SIZE_ERROR, "RST_STREAM payload not 4 bytes"));
                }
                if self.idle(h.stream) {
                    return Err(err(
                        PROTOCOL_ERROR,
                        "RST_STREAM on a stream we did not open",
                    ));
                }
                if let Some(s) = self.streams.remove(h.stream) {
                    on(Event::Reset {
                        token: s.token,
                        code: be32(p),
                    });
                }
                Ok(())
            }
            frame::WINDOW_UPDATE => self.window_update(h, p, on),
            frame::PRIORITY => {
                if h.stream == 0 {
                    return Err(err(PROTOCOL_ERROR, "PRIORITY on stream 0"));
                }
                if p.len() != 5 {
                    self.stream_error(
                        h.stream,
                        FRAME_SIZE_ERROR,
                        "PRIORITY payload not 5 bytes",
                        on,
                    );
                } else if be32(p) & MAX_WINDOW == h.stream {
                    self.stream_error(h.stream, PROTOCOL_ERROR, "stream depends on itself", on);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn headers(
        &mut self,
        h: Head,
        payload: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnError> {
        let id = h.stream;
        if id == 0 {
            return Err(err(PROTOCOL_ERROR, "HEADERS on stream 0"));
        }
        if self.idle(id) {
            return Err(err(PROTOCOL_ERROR, "HEADERS on a stream we did not open"));
        }
        let mut p = payload;
        let mut pad = 0;
        if h.flags.contains(Flags::PADDED) {
            let Some((&n, rest)) = p.split_first() else {
                return Err(err(FRAME_SIZE_ERROR, "padded HEADERS without a pad length"));
            };
            pad = n as usize;
            p = rest;
        }
        let mut self_dep = false;
        if h.flags.contains(Flags::PRIORITY) {
            if p.len() < 5 {
                return Err(err(FRAME_SIZE_ERROR, "HEADERS too short for its priority"));
            }
            self_dep = be32(p) & MAX_WINDOW == id;
            p = &p[5..];
        }
        if pad > p.len() {
            return Err(err(PROTOCOL_ERROR, "HEADERS padding longer than the frame"));
        }
        let fragment = &p[..p.len() - pad];
        let b = BlockRx {
            stream: id,
            end_stream: h.flags.contains(Flags::END_STREAM),
            self_dep,
            wire: h.len + HEADER_LEN as u32,
        };
        if h.flags.contains(Flags::END_HEADERS) {
            return self.head_block(b, fragment, on);
        }
        self.block.clear();
        self.block.extend_from_slice(fragment);
        self.in_block = Some(b);
        Ok(())
    }

    /// A complete header block: a response head (interim or final) or
    /// trailers. Decoded even for forgotten streams: the HPACK table must
    /// see every block.
    fn head_block(
        &mut self,
        b: BlockRx,
        block: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnError> {
        let id = b.stream;
        let compression = |e: super::hpack::DecodeError| err(COMPRESSION_ERROR, e.0);
        let Some(s) = self.streams.get(id) else {
            return self
                .hpack
                .decode(block, false, &mut |_| {})
                .map_err(compression);
        };
        let capture = s.flags & CAPTURE != 0;
        let trailers = s.flags & GOT_HEAD != 0;
        let mut scan = Scan::new(trailers, capture);
        self.head.clear();
        self.server.clear();
        let (head, server) = (&mut self.head, &mut self.server);
        self.hpack
            .decode(block, capture && !trailers, &mut |f| {
                scan.field(f, head, server)
            })
            .map_err(compression)?;

        let mut bad = scan.bad;
        if bad.is_none() && !trailers && scan.status == 0 {
            bad = Some("response without :status");
        }
        if b.self_dep {
            bad = Some("stream depends on itself");
        }
        if trailers && bad.is_none() && !b.end_stream {
            bad = Some("trailers without END_STREAM");
        }
        if (100..200).contains(&scan.status) && bad.is_none() {
            if scan.status == 101 {
                bad = Some("101 Switching Protocols is not allowed in HTTP/2");
            } else if b.end_stream {
                bad = Some("an interim (1xx) response ended the stream");
            }
        }
        if let Some(reason) = bad {
            self.stream_error(id, PROTOCOL_ERROR, reason, on);
            return Ok(());
        }
        let Some(s) = self.streams.get_mut(id) else {
            return Ok(());
        };
        if trailers {
            on(Event::Data {
                token: s.token,
                len: 0,
                data: capture.then_some(&[][..]),
                wire: b.wire,
            });
            self.finish(id, on);
            return Ok(());
        }
        if scan.status < 200 {
            s.wire = s.wire.saturating_add(b.wire);
            return Ok(());
        }
        s.flags |= GOT_HEAD;
        if s.flags & HEAD_REQUEST != 0 || scan.status == 204 || scan.status == 304 {
            s.flags |= NO_BODY;
        }
        s.content_length = scan.content_length;
        let wire = s.wire.saturating_add(b.wire);
        s.wire = 0;
        if capture {
            self.head.extend_from_slice(b"\r\n");
        }
        on(Event::Head {
            token: s.token,
            status: scan.status,
            content_length: scan.content_length,
            server: scan.server.then_some(&self.server[..]),
            head: capture.then_some(&self.head[..]),
            wire,
        });
        if b.end_stream {
            self.finish(id, on);
        }
        Ok(())
    }

    fn settings(&mut self, h: Head, p: &[u8]) -> Result<(), ConnError> {
        if h.stream != 0 {
            return Err(err(PROTOCOL_ERROR, "SETTINGS on a stream"));
        }
        if h.flags.contains(Flags::ACK) {
            if !p.is_empty() {
                return Err(err(FRAME_SIZE_ERROR, "SETTINGS ACK with a payload"));
            }
            return Ok(());
        }
        if !p.len().is_multiple_of(6) {
            return Err(err(FRAME_SIZE_ERROR, "SETTINGS length not a multiple of 6"));
        }
        let mut window = None;
        for s in p.chunks_exact(6) {
            let v = be32(&s[2..]);
            match u16::from_be_bytes([s[0], s[1]]) {
                frame::SETTINGS_ENABLE_PUSH if v != 0 => {
                    return Err(err(PROTOCOL_ERROR, "the server set SETTINGS_ENABLE_PUSH"))
                }
                frame::SETTINGS_MAX_CONCURRENT_STREAMS => {
                    self.peer_max_streams = v;
                    self.peer_sent_max = Some(v);
                }
                frame::SETTINGS_INITIAL_WINDOW_SIZE => {
                    if v > MAX_WINDOW {
                        return Err(err(
                            FLOW_CONTROL_ERROR,
                            "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1",
                        ));
                    }
                    window = Some(v);
                }
                frame::SETTINGS_MAX_FRAME_SIZE => {
                    if !(frame::DEFAULT_MAX_FRAME..=frame::MAX_MAX_FRAME).contains(&v) {
                        return Err(err(PROTOCOL_ERROR, "SETTINGS_MAX_FRAME_SIZE out of range"));
                    }
                    self.peer_max_frame = v;
                }
                // It sizes a table our encoder never uses.
                frame::SETTINGS_HEADER_TABLE_SIZE => {}
                // Unknown settings are ignored (§6.5.2).
                _ => {}
            }
        }
        if !self.got_settings {
            self.got_settings = true;
            if self.peer_sent_max.is_none() {
                // The assumed 100 ends: without the setting there is no limit.
                self.peer_max_streams = u32::MAX;
            }
        }
        if let Some(w) = window {
            self.set_peer_window(w)?;
        }
        frame::put_settings_ack(&mut self.out);
        self.acks += 1;
        self.flush_blocked();
        Ok(())
    }
}

#[cfg(test)]
mod tests;
