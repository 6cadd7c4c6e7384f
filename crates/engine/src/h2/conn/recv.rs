//! The receive path: bytes from the socket become frames, frames become
//! events. A frame header or a control frame cut by a read boundary is
//! buffered; DATA payloads are reported from the caller's buffer as they
//! arrive. Receive windows are charged per DATA frame and topped up past
//! half.

use super::scan::Scan;
use super::store::State;
use super::{err, ClientConn, ConnError, Event, RECV_WINDOW};
use crate::h2::code::{
    CANCEL, COMPRESSION_ERROR, ENHANCE_YOUR_CALM, FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR,
    PROTOCOL_ERROR,
};
use crate::h2::frame::{self, be32, Flags, Head, HEADER_LEN, MAX_WINDOW};

/// Largest header block assembled from CONTINUATION frames.
const MAX_BLOCK: usize = 256 * 1024;

/// Where the reader is in the incoming byte stream.
#[derive(Debug, Clone, Copy)]
pub(super) enum Rx {
    /// Reading a frame header (`hdr_len` bytes of it are in `hdr`).
    Head,
    /// Collecting a control or HEADERS payload (in `buf` if it was cut).
    Payload(Head),
    Data(DataRx),
    /// Skipping this many bytes of a frame type we ignore.
    Skip(u32),
}

#[derive(Debug, Clone, Copy)]
pub(super) struct DataRx {
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
pub(super) struct BlockRx {
    stream: u32,
    end_stream: bool,
    /// HEADERS' priority made the stream depend on itself (§5.3.1).
    self_dep: bool,
    wire: u32,
}

impl ClientConn {
    /// Reads `input`, cut anywhere, frame by frame: the loop behind
    /// [`ClientConn::feed`].
    pub(super) fn read(
        &mut self,
        input: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnError> {
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
            Some(s) if !s.state.contains(State::GOT_HEAD) => {
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
        let no_body = s.state.contains(State::NO_BODY);
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
            data: s.state.contains(State::CAPTURE).then_some(chunk),
            wire,
        });
        true
    }

    /// END_STREAM: the response is complete unless its length is wrong.
    fn finish(&mut self, id: u32, on: &mut impl FnMut(Event<'_>)) {
        let Some(s) = self.streams.get(id) else {
            return;
        };
        if !s.state.contains(State::NO_BODY) && s.content_length.is_some_and(|l| l != s.received) {
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
        if !s.state.contains(State::END_SENT) {
            // The server answered before taking the whole body (§8.1).
            frame::put_rst(&mut self.out, id, CANCEL);
        }
        on(Event::End { token: s.token });
    }

    pub(super) fn stream_error(
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
        let compression = |e: crate::h2::hpack::DecodeError| err(COMPRESSION_ERROR, e.0);
        let Some(s) = self.streams.get(id) else {
            return self
                .hpack
                .decode(block, false, &mut |_| {})
                .map_err(compression);
        };
        let capture = s.state.contains(State::CAPTURE);
        let trailers = s.state.contains(State::GOT_HEAD);
        let mut scan = Scan::new(trailers, capture);
        self.fields.clear();
        self.server.clear();
        let (fields, server) = (&mut self.fields, &mut self.server);
        self.hpack
            .decode(block, capture && !trailers, &mut |f| {
                scan.field(f, fields, server)
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
        s.state.insert(State::GOT_HEAD);
        if s.state.contains(State::HEAD_REQUEST) || scan.status == 204 || scan.status == 304 {
            s.state.insert(State::NO_BODY);
        }
        s.content_length = scan.content_length;
        let wire = s.wire.saturating_add(b.wire);
        s.wire = 0;
        on(Event::Head {
            token: s.token,
            status: scan.status,
            content_length: scan.content_length,
            server: scan.server.then_some(&self.server[..]),
            fields: capture.then_some(&self.fields[..]),
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
