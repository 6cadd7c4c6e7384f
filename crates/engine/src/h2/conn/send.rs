//! The send path and its flow control: HEADERS for new streams, request
//! bodies cut to the send windows (the connection's and each stream's),
//! and bodies that wait for window, resumed oldest first when WINDOW_UPDATE
//! or SETTINGS raise it.

use super::store::{State, Stream};
use super::{err, ClientConn, ConnError, Event};
use crate::h2::code::{FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR, PROTOCOL_ERROR};
use crate::h2::frame::{self, be32, Flags, Head, MAX_WINDOW};
use crate::h2::request::Request;
use std::sync::Arc;

impl ClientConn {
    /// Queues HEADERS, and CONTINUATION beyond the server's
    /// SETTINGS_MAX_FRAME_SIZE, for a new stream.
    #[inline]
    pub(super) fn send_headers(&mut self, id: u32, block: &[u8], end_stream: bool) {
        let max = self.peer_max_frame as usize;
        let first = block.len().min(max);
        let mut flags = if end_stream {
            Flags::END_STREAM
        } else {
            Flags::NONE
        };
        if first == block.len() {
            flags |= Flags::END_HEADERS;
        }
        frame::put_head(&mut self.out, first, frame::HEADERS, flags, id);
        self.out.extend_from_slice(&block[..first]);
        let mut rest = &block[first..];
        while !rest.is_empty() {
            let n = rest.len().min(max);
            let flags = if n == rest.len() {
                Flags::END_HEADERS
            } else {
                Flags::NONE
            };
            frame::put_head(&mut self.out, n, frame::CONTINUATION, flags, id);
            self.out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
        }
    }

    /// Queues as much of the request body as the windows allow; the rest
    /// waits in `blocked` for WINDOW_UPDATE or SETTINGS.
    #[inline]
    pub(super) fn send_body(&mut self, s: &mut Stream, req: &Request) {
        let body = req.body();
        if body.is_empty()
            || push_data(
                &mut self.out,
                &mut self.conn_send,
                &mut s.send_window,
                self.peer_max_frame,
                s.id,
                body,
                &mut s.body_off,
            )
        {
            s.state.insert(State::END_SENT);
        } else {
            s.body = Some(Arc::clone(req.shared_body()));
            s.state.insert(State::BLOCKED);
            self.blocked.push(s.id);
        }
    }

    /// The server's SETTINGS_INITIAL_WINDOW_SIZE: windows of open streams
    /// move by the change (§6.9.2).
    pub(super) fn set_peer_window(&mut self, w: u32) -> Result<(), ConnError> {
        let delta = w as i64 - self.peer_window as i64;
        self.peer_window = w;
        for s in self.streams.iter_mut() {
            s.send_window += delta;
            if s.send_window > MAX_WINDOW as i64 {
                return Err(err(
                    FLOW_CONTROL_ERROR,
                    "SETTINGS_INITIAL_WINDOW_SIZE overflows a stream window",
                ));
            }
        }
        Ok(())
    }

    /// WINDOW_UPDATE: more send window for the connection or a stream;
    /// waiting bodies go on.
    pub(super) fn window_update(
        &mut self,
        h: Head,
        p: &[u8],
        on: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ConnError> {
        if p.len() != 4 {
            return Err(err(FRAME_SIZE_ERROR, "WINDOW_UPDATE payload not 4 bytes"));
        }
        let inc = be32(p) & MAX_WINDOW;
        if h.stream == 0 {
            if inc == 0 {
                return Err(err(PROTOCOL_ERROR, "WINDOW_UPDATE of 0 for the connection"));
            }
            self.conn_send += inc as i64;
            if self.conn_send > MAX_WINDOW as i64 {
                return Err(err(FLOW_CONTROL_ERROR, "connection window above 2^31-1"));
            }
            self.flush_blocked();
            return Ok(());
        }
        if self.idle(h.stream) {
            return Err(err(
                PROTOCOL_ERROR,
                "WINDOW_UPDATE on a stream we did not open",
            ));
        }
        let Some(s) = self.streams.get_mut(h.stream) else {
            return Ok(());
        };
        if inc == 0 {
            self.stream_error(h.stream, PROTOCOL_ERROR, "WINDOW_UPDATE of 0", on);
        } else if s.send_window + inc as i64 > MAX_WINDOW as i64 {
            self.stream_error(
                h.stream,
                FLOW_CONTROL_ERROR,
                "stream window above 2^31-1",
                on,
            );
        } else {
            s.send_window += inc as i64;
            // With connection window left, every waiting stream is held by
            // its own window: only this one can move, and it takes no
            // one's turn.
            if s.state.contains(State::BLOCKED) && self.conn_send > 0 && self.send_more(h.stream) {
                self.blocked.retain(|&id| id != h.stream);
            }
        }
        Ok(())
    }

    /// Sends what window allows of the bodies waiting, oldest first.
    pub(super) fn flush_blocked(&mut self) {
        let mut i = 0;
        while i < self.blocked.len() && self.conn_send > 0 {
            if self.send_more(self.blocked[i]) {
                self.blocked.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Sends what window allows of one stream's waiting body; true when
    /// nothing of it waits any more (all sent, or the stream is gone).
    fn send_more(&mut self, id: u32) -> bool {
        let Some(s) = self.streams.get_mut(id) else {
            return true;
        };
        let done = match &s.body {
            Some(body) => push_data(
                &mut self.out,
                &mut self.conn_send,
                &mut s.send_window,
                self.peer_max_frame,
                id,
                body,
                &mut s.body_off,
            ),
            None => true,
        };
        if done {
            s.body = None;
            s.state.insert(State::END_SENT);
            s.state.remove(State::BLOCKED);
        }
        done
    }
}

/// Queues DATA frames for `body[*off..]` while both windows have room;
/// true once all of it (with END_STREAM) is queued.
fn push_data(
    out: &mut Vec<u8>,
    conn: &mut i64,
    stream: &mut i64,
    max_frame: u32,
    id: u32,
    body: &[u8],
    off: &mut usize,
) -> bool {
    while *off < body.len() {
        let room = (*conn).min(*stream).min(max_frame as i64);
        if room <= 0 {
            return false;
        }
        let n = (body.len() - *off).min(room as usize);
        let end = *off + n == body.len();
        frame::put_head(
            out,
            n,
            frame::DATA,
            if end { Flags::END_STREAM } else { Flags::NONE },
            id,
        );
        out.extend_from_slice(&body[*off..*off + n]);
        *off += n;
        *conn -= n as i64;
        *stream -= n as i64;
    }
    true
}
