//! HTTP/2: many request slots share one connection.
//!
//! A slot is the same request slot as in HTTP/1.1 (a user, or a pool entry
//! of the open model); what changes is where its request goes. Slots are
//! grouped `streams` to a *logical link* (slot `i` belongs to link
//! `i / streams`), and a logical link is served by one connection at a time.
//! A slot that wants to send joins its connection's queue and gets a stream
//! as soon as the connection is up and the server's stream limit allows.
//!
//! A connection that receives GOAWAY stops being its logical link's: the
//! next request opens a fresh one while the old one finishes the streams the
//! server promised to process; streams the server never processed
//! (above GOAWAY's last id, or REFUSED_STREAM) are re-sent and counted as
//! retries. Outgoing frames of every stream opened in one turn of the loop
//! leave in one write per connection.

use super::{note_handshake, token, St, Transport, Worker, CAPTURE_MAX, NEVER};
use crate::flow::Flow;
use crate::h2::{self, ClientConn, Event};
use crate::sys::{self, Connecting};
use crate::tls::Handshake;
use sample::{Outcome, Sink};
use std::collections::VecDeque;
use std::os::fd::RawFd;

const NONE: u32 = u32::MAX;
/// Sends of one request at most when the server refuses it unprocessed
/// (REFUSED_STREAM, or a connection closed under it).
const MAX_TRIES: u8 = 3;
/// Connections one request may be moved to because the one it was on went
/// away (GOAWAY) before processing it. A server that rolls connections over
/// every N requests does that to queued requests as a matter of course, so
/// it does not spend MAX_TRIES; this bound only stops a server that never
/// processes anything from keeping a request moving for ever.
const MAX_ROLLOVERS: u8 = 16;
/// RFC 9113 §7: the stream was not processed; safe to retry.
const REFUSED_STREAM: u32 = 0x7;
/// Rounds (design 015): a round is at most this share of the typical
/// response time (1/50: 2%), so the delay it adds to a request's next
/// send, and to when its response is seen, stays within that share.
const ROUND_SHARE: u64 = 50;
/// Shorter rounds are not taken: a timer on a virtual machine overshoots
/// by tens of µs, which would break the 2% bound (typical responses under
/// 2.5 ms keep the loop waking for each read).
const MIN_ROUND: u64 = 50_000;

/// Why a stream is sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    /// REFUSED_STREAM, or the connection failed under an unanswered stream.
    Refused,
    /// Above a GOAWAY's last stream id: the connection rolled over.
    Rollover,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LinkSt {
    Closed,
    Connecting,
    Handshaking,
    Open,
}

#[derive(Debug)]
struct Link {
    fd: RawFd,
    tls: Option<Box<rustls::ClientConnection>>,
    tls_drained: bool,
    gen: u32,
    st: LinkSt,
    conn: Option<Box<ClientConn>>,
    /// The logical link this connection serves; NONE once it goes away.
    logical: u32,
    /// Slots waiting for this connection or a free stream: (slot, seq).
    waiting: VecDeque<(u32, u32)>,
    connect_start: u64,
    connected_at: u64,
    handshaken_at: u64,
    /// Connect or handshake deadline.
    deadline: u64,
    /// Responses completed on the current connection.
    completed: u64,
    dirty: bool,
    /// The last write would have blocked: wait for EPOLLOUT.
    blocked: bool,
}

impl Link {
    /// Closes the socket (resetting it if `abort`) and forgets the protocol
    /// state; the link can connect again.
    fn shut(&mut self, abort: bool) {
        if self.fd >= 0 {
            if abort {
                sys::abort(self.fd);
            } else {
                sys::close(self.fd);
            }
            self.fd = -1;
        }
        self.tls = None;
        self.conn = None;
        self.st = LinkSt::Closed;
        self.blocked = false;
    }

    fn new(logical: u32) -> Link {
        Link {
            fd: -1,
            tls: None,
            tls_drained: false,
            gen: 0,
            st: LinkSt::Closed,
            conn: None,
            logical,
            waiting: VecDeque::new(),
            connect_start: 0,
            connected_at: 0,
            handshaken_at: 0,
            deadline: NEVER,
            completed: 0,
            dirty: false,
            blocked: false,
        }
    }
}

/// What a connection reported, buffered so the slots can act on it after
/// the parser has returned.
#[derive(Debug, Clone, Copy)]
enum Ev {
    Head { token: u32, status: u16, wire: u32 },
    Data { token: u32, len: u32, wire: u32 },
    End { token: u32 },
    Reset { token: u32, code: u32 },
    Malformed { token: u32 },
    GoAway,
    Unprocessed { token: u32 },
}

/// A worker's HTTP/2 connections.
#[derive(Debug)]
pub(super) struct Links {
    streams: u32,
    https: bool,
    /// The plan's request, converted once.
    request: h2::Request,
    store: Vec<Link>,
    /// Logical link → its current connection in `store` (NONE: none yet).
    active: Vec<u32>,
    free: Vec<u32>,
    dirty: Vec<u32>,
    events: Vec<Ev>,
    scratch: Vec<u32>,
    /// A moving average of the response time (sent to last byte), ns.
    typical: u64,
}

impl Links {
    pub(super) fn new(streams: u32, slots: usize, https: bool, request: h2::Request) -> Links {
        let logical = slots.div_ceil(streams as usize);
        Links {
            streams,
            https,
            request,
            store: Vec::with_capacity(logical),
            active: vec![NONE; logical],
            free: Vec::new(),
            dirty: Vec::new(),
            events: Vec::new(),
            scratch: Vec::new(),
            typical: 0,
        }
    }

    /// Many streams a connection: the loop may work in rounds (one stream
    /// gains nothing from reading several responses at once).
    pub(super) fn multiplexed(&self) -> bool {
        self.streams >= 2
    }

    /// How long the loop may sleep before taking everything that arrived
    /// (0: wake for each read): 2% of the typical response time, at most
    /// `slack`, never under [`MIN_ROUND`]; none for one stream a connection.
    /// Only with receive timestamps (the loop's `stamps`).
    pub(super) fn round(&self, slack: u64) -> u64 {
        if !self.multiplexed() {
            return 0;
        }
        let r = (self.typical / ROUND_SHARE).min(slack);
        if r < MIN_ROUND {
            0
        } else {
            r
        }
    }

    /// One more response time for the moving average (weight 1/16).
    fn learn(&mut self, ns: u64) {
        let t = self.typical as i64;
        self.typical = (t + (ns as i64 - t) / 16).max(0) as u64;
    }

    /// Pool order for the open model: one stream of every connection before
    /// a second stream of any, so `-c` connections all carry load.
    pub(super) fn pool_order(&self, slots: usize) -> Vec<u32> {
        let s = self.streams as usize;
        let mut order: Vec<u32> = (0..slots as u32).collect();
        order.sort_by_key(|&i| (i as usize % s, i as usize / s));
        order.reverse();
        order
    }

    /// The connection serving `logical`, made (unconnected) if there is none.
    fn link_for(&mut self, logical: usize) -> usize {
        let a = self.active[logical];
        if a != NONE {
            return a as usize;
        }
        let l = match self.free.pop() {
            Some(l) => {
                self.store[l as usize].logical = logical as u32;
                l as usize
            }
            None => {
                self.store.push(Link::new(logical as u32));
                self.store.len() - 1
            }
        };
        self.active[logical] = l as u32;
        l
    }

    fn mark(&mut self, l: usize) {
        let link = &mut self.store[l];
        if !link.dirty {
            link.dirty = true;
            self.dirty.push(l as u32);
        }
    }
}

/// The HTTP/2 connections of a worker whose transport is HTTP/2: the code in
/// this file runs only behind the loop's `Transport::Http2` dispatch, so the
/// one way to get here without links is a bug in that dispatch.
fn links_of(t: &mut Transport) -> &mut Links {
    match t {
        Transport::Http2(links) => links,
        Transport::Http1 => unreachable!("HTTP/2 code ran on an HTTP/1.1 worker"),
    }
}

impl<S: Sink, F: Flow> Worker<'_, S, F> {
    fn links(&mut self) -> &mut Links {
        links_of(&mut self.transport)
    }

    /// Starts a request on slot `idx` (its timing fields are set): queue it
    /// on its connection.
    pub(super) fn h2_begin(&mut self, idx: usize, now: u64) {
        let c = &mut self.conns[idx];
        c.place.tries = 1;
        c.place.rollovers = 0;
        c.parser.keep_alive = true;
        self.h2_enqueue(idx, now);
    }

    fn h2_enqueue(&mut self, idx: usize, now: u64) {
        let wait = self
            .cfg
            .connect_timeout
            .saturating_add(self.cfg.request_timeout);
        let c = &mut self.conns[idx];
        c.place.seq = c.place.seq.wrapping_add(1);
        c.enter(St::Connecting, &mut self.unsettled);
        c.at.deadline = now.saturating_add(wait);
        let seq = c.place.seq;
        let h = links_of(&mut self.transport);
        let l = h.link_for(idx / h.streams as usize);
        h.store[l].waiting.push_back((idx as u32, seq));
        match h.store[l].st {
            LinkSt::Closed => self.link_connect(l, now),
            LinkSt::Open => self.pump(l, now),
            LinkSt::Connecting | LinkSt::Handshaking => {}
        }
    }

    fn link_connect(&mut self, l: usize, now: u64) {
        let h = links_of(&mut self.transport);
        let link = &mut h.store[l];
        link.connect_start = now;
        link.completed = 0;
        link.connected_at = 0;
        link.handshaken_at = 0;
        let gen = link.gen.wrapping_add(1);
        match self.dial(l, gen) {
            Ok((fd, how)) => {
                let connect_timeout = self.cfg.connect_timeout;
                let link = &mut self.links().store[l];
                link.gen = gen;
                link.fd = fd;
                match how {
                    Connecting::Done => self.link_connected(l),
                    Connecting::Pending => {
                        link.st = LinkSt::Connecting;
                        link.deadline = now.saturating_add(connect_timeout);
                    }
                }
            }
            Err(o) => self.link_down(l, o, now),
        }
    }

    fn link_connected(&mut self, l: usize) {
        let now = self.now();
        let h = links_of(&mut self.transport);
        let link = &mut h.store[l];
        link.connected_at = now;
        self.sink.connected(now.saturating_sub(link.connect_start));
        self.report.connections_opened += 1;
        let Some(setup) = self.cfg.tls else {
            link.handshaken_at = now;
            self.link_open(l, now);
            return;
        };
        match setup.connection() {
            Ok(tls) => {
                link.tls = Some(tls);
                link.st = LinkSt::Handshaking;
                link.deadline = now.saturating_add(self.cfg.connect_timeout);
                self.link_handshake(l);
            }
            Err(o) => self.link_down(l, o, now),
        }
    }

    fn link_handshake(&mut self, l: usize) {
        let now = self.now();
        let h = links_of(&mut self.transport);
        let link = &mut h.store[l];
        let Some(tls) = link.tls.as_mut() else { return };
        match crate::tls::drive_handshake(tls, link.fd) {
            Handshake::Pending => {}
            Handshake::Failed(o) => self.link_down(l, o, now),
            Handshake::Done => {
                link.handshaken_at = now;
                note_handshake(&mut self.report, tls);
                if tls.alpn_protocol() != Some(b"h2") {
                    self.link_down(l, Outcome::NoHttp2, now);
                } else {
                    self.link_open(l, now);
                }
            }
        }
    }

    /// The connection is up: send the preface and the waiting requests.
    fn link_open(&mut self, l: usize, now: u64) {
        self.link_watch_out(l, false);
        let learned = self.report.h2_max_streams;
        let link = &mut self.links().store[l];
        let mut conn = Box::new(ClientConn::new());
        if let Some(m) = learned {
            conn.assume_max_streams(m);
        }
        link.conn = Some(conn);
        link.st = LinkSt::Open;
        link.deadline = NEVER;
        link.blocked = false;
        self.pump(l, now);
        self.links().mark(l);
    }

    /// Opens streams for waiting slots while the server's limit allows.
    fn pump(&mut self, l: usize, now: u64) {
        let request_timeout = self.cfg.request_timeout;
        let h = links_of(&mut self.transport);
        let link = &mut h.store[l];
        let Some(conn) = link.conn.as_mut() else {
            return;
        };
        let mut failed = std::mem::take(&mut h.scratch);
        let mut opened = false;
        while conn.can_open() {
            let Some((idx, seq)) = link.waiting.pop_front() else {
                break;
            };
            let c = &mut self.conns[idx as usize];
            if c.st != St::Connecting || c.place.seq != seq {
                continue; // It timed out or moved since it queued.
            }
            let own;
            let req = if c.job.own_request {
                match h2::encode_request(&c.job.req, h.https) {
                    Ok(r) => {
                        own = r;
                        &own
                    }
                    Err(_) => {
                        failed.push(idx);
                        continue;
                    }
                }
            } else {
                &h.request
            };
            match conn.open(req, idx, c.job.capture) {
                Ok(id) => {
                    opened = true;
                    c.enter(St::Reading, &mut self.unsettled);
                    c.place.link = l as u32;
                    c.place.stream = id;
                    c.at.sent = now;
                    c.job.written = wire_len(req);
                    c.at.deadline = now.saturating_add(request_timeout);
                    if link.connect_start >= c.at.start {
                        c.at.connected_at = link.connected_at;
                        c.at.handshaken_at = link.handshaken_at;
                    }
                }
                Err(_) => {
                    link.waiting.push_front((idx, seq));
                    break;
                }
            }
        }
        if opened {
            h.mark(l);
        }
        for &idx in &failed {
            self.h2_done(idx as usize, Outcome::ProtocolError, now);
        }
        failed.clear();
        self.links().scratch = failed;
    }

    /// Writes every connection that has frames to send.
    pub(super) fn h2_flush(&mut self) {
        let Transport::Http2(h) = &mut self.transport else {
            return;
        };
        if h.dirty.is_empty() {
            return;
        }
        let dirty = std::mem::take(&mut h.dirty);
        for &l in &dirty {
            let link = &mut self.links().store[l as usize];
            link.dirty = false;
            if link.st == LinkSt::Open && !link.blocked {
                self.link_write(l as usize);
            }
        }
        let h = self.links();
        if h.dirty.is_empty() {
            h.dirty = dirty;
            h.dirty.clear();
        }
    }

    fn link_write(&mut self, l: usize) {
        let link = &mut self.links().store[l];
        let Some(conn) = link.conn.as_mut() else {
            return;
        };
        let fd = link.fd;
        let failed = match link.tls.as_mut() {
            None => loop {
                let out = conn.pending_out();
                if out.is_empty() {
                    break false;
                }
                match sys::send(fd, out) {
                    Ok(n) => conn.wrote(n),
                    Err(libc::EAGAIN) => {
                        link.blocked = true;
                        self.link_watch_out(l, true);
                        return;
                    }
                    Err(libc::EINTR) => {}
                    Err(_) => break true,
                }
            },
            Some(tls) => loop {
                let out = conn.pending_out();
                if !out.is_empty() {
                    match std::io::Write::write(&mut tls.writer(), out) {
                        Ok(n) => conn.wrote(n),
                        Err(_) => break true,
                    }
                }
                match crate::tls::flush(tls, fd) {
                    Ok(true) if conn.pending_out().is_empty() => break false,
                    Ok(true) => {}
                    Ok(false) => {
                        link.blocked = true;
                        self.link_watch_out(l, true);
                        return;
                    }
                    Err(_) => break true,
                }
            },
        };
        if failed {
            let now = self.now();
            self.link_down(l, Outcome::Reset, now);
        }
    }

    /// Watch connection `l` for room to write (only while a write is blocked).
    fn link_watch_out(&mut self, l: usize, on: bool) {
        let link = &self.links().store[l];
        let (fd, token) = (link.fd, token(l, link.gen));
        let _ = self.epoll.watch_out(fd, token, on);
    }

    /// An epoll event for connection `l`.
    pub(super) fn h2_event(&mut self, l: usize, gen: u32, flags: u32) {
        let Some(link) = self.links().store.get_mut(l) else {
            return;
        };
        if link.gen != gen || link.fd < 0 {
            return;
        }
        match link.st {
            LinkSt::Closed => {}
            LinkSt::Connecting => {
                if flags & (sys::OUT | sys::ERR) != 0 {
                    match sys::take_socket_error(link.fd) {
                        Ok(()) => self.link_connected(l),
                        Err(e) => {
                            let now = self.now();
                            self.link_down(l, crate::http::io_connect_outcome(&e), now);
                        }
                    }
                }
            }
            LinkSt::Handshaking => self.link_handshake(l),
            LinkSt::Open => {
                if flags & sys::OUT != 0 && link.blocked {
                    link.blocked = false;
                    self.link_watch_out(l, false);
                    self.link_write(l);
                }
                if flags & (sys::IN | sys::CLOSED) != 0 {
                    self.link_read(l, flags & sys::CLOSED != 0);
                }
            }
        }
    }

    /// Reads until the socket is drained, feeding the connection; with the
    /// peer gone (`closing`) reads on to end of file.
    fn link_read(&mut self, l: usize, closing: bool) {
        let gen = self.links().store[l].gen;
        self.links().store[l].tls_drained = false;
        let mut reads = 0;
        let flags = sys::IN | if closing { sys::CLOSED } else { 0 };
        // The newest kernel receive timestamp read on this turn (rounds).
        let mut stamp = None;
        let stamps = self.stamps;
        loop {
            if self.over_budget(&mut reads, l, gen, flags) {
                return;
            }
            let link = &mut links_of(&mut self.transport).store[l];
            if link.gen != gen || link.st != LinkSt::Open {
                return;
            }
            let tls = link.tls.is_some();
            let r = match link.tls.as_mut() {
                None => {
                    sys::read_keeping_stamp(link.fd, &mut self.buf, stamps.then_some(&mut stamp))
                }
                Some(t) => match crate::tls::read_plain(
                    t,
                    link.fd,
                    &mut link.tls_drained,
                    &mut self.buf,
                    &mut self.cipher,
                    stamps.then_some(&mut stamp),
                ) {
                    Ok(r) => r,
                    Err(o) => {
                        let now = self.now();
                        self.link_down(l, o, now);
                        return;
                    }
                },
            };
            let now = self.now();
            match r {
                Ok(0) => {
                    self.link_down(l, Outcome::ClosedBeforeResponse, now);
                    return;
                }
                Ok(n) => {
                    // When the bytes arrived: the kernel's stamp where a
                    // round may have slept through their arrival, else now.
                    let at = stamp.map_or(now, |t| self.stamped(t, 0, now));
                    if !self.link_feed(l, n, at) {
                        return;
                    }
                    if n < self.buf.len() && !tls && !closing {
                        break;
                    }
                }
                Err(libc::EAGAIN) => break,
                Err(libc::EINTR) => {}
                Err(_) => {
                    self.link_down(l, Outcome::Reset, now);
                    return;
                }
            }
        }
        self.link_settle(l);
    }

    /// Hands `self.buf[..n]` to connection `l` and lets the slots act on
    /// what it says; false if the connection is gone.
    fn link_feed(&mut self, l: usize, n: usize, now: u64) -> bool {
        let want_server = !self.captured_server;
        let mut server = None;
        let h = links_of(&mut self.transport);
        let link = &mut h.store[l];
        let Some(conn) = link.conn.as_mut() else {
            return false;
        };
        let data = &self.buf[..n];
        if !conn.heard_from_peer() && data.starts_with(b"HTTP/") {
            // An HTTP/1.x answer to our preface: no h2c here.
            self.link_down(l, Outcome::NoHttp2, now);
            return false;
        }
        let conns = &mut self.conns;
        let events = &mut h.events;
        let r = conn.feed(data, &mut |ev| match ev {
            Event::Head {
                token,
                status,
                server: s,
                fields,
                wire,
                ..
            } => {
                if want_server && server.is_none() {
                    server = s.map(|s| String::from_utf8_lossy(s).into_owned());
                }
                if let Some(fields) = fields {
                    conns[token as usize].job.fields = Some(fields.to_vec());
                }
                events.push(Ev::Head {
                    token,
                    status,
                    wire,
                });
            }
            Event::Data {
                token,
                len,
                data,
                wire,
            } => {
                if let Some(d) = data {
                    keep(&mut conns[token as usize].job.captured, d);
                }
                events.push(Ev::Data { token, len, wire });
            }
            Event::End { token } => events.push(Ev::End { token }),
            Event::Reset { token, code } => events.push(Ev::Reset { token, code }),
            Event::StreamError { token, .. } => events.push(Ev::Malformed { token }),
            Event::GoAway { .. } => events.push(Ev::GoAway),
            Event::Unprocessed { token } => events.push(Ev::Unprocessed { token }),
        });
        if let Some(conn) = h.store[l].conn.as_ref() {
            if let Some(m) = conn.peer_max_streams() {
                let r = &mut self.report.h2_max_streams;
                *r = Some(r.map_or(m, |x| x.min(m)));
            }
        }
        if server.is_some() {
            self.captured_server = true;
            self.report.server = server;
        }
        let events = std::mem::take(&mut h.events);
        for &ev in &events {
            self.on_stream(l, ev, now);
        }
        let h = self.links();
        if h.events.is_empty() {
            h.events = events;
            h.events.clear();
        }
        if h.store[l]
            .conn
            .as_ref()
            .is_some_and(|c| !c.pending_out().is_empty())
        {
            h.mark(l);
        }
        match r {
            Ok(()) => true,
            Err(_) => {
                // Our GOAWAY goes out first, best effort.
                self.link_write(l);
                self.link_down(l, Outcome::ProtocolError, now);
                false
            }
        }
    }

    /// `at`: when the bytes arrived (never before a stream's request left).
    fn on_stream(&mut self, l: usize, ev: Ev, at: u64) {
        let now = match ev {
            Ev::Head { token, .. }
            | Ev::Data { token, .. }
            | Ev::End { token }
            | Ev::Reset { token, .. }
            | Ev::Malformed { token }
            | Ev::Unprocessed { token } => at.max(self.conns[token as usize].at.sent),
            Ev::GoAway => at,
        };
        match ev {
            Ev::Head {
                token,
                status,
                wire,
            } => {
                let c = &mut self.conns[token as usize];
                if c.at.first_byte == 0 {
                    c.at.first_byte = now;
                }
                c.parser.status = status;
                c.job.bytes_in += u64::from(wire);
            }
            Ev::Data { token, len, wire } => {
                let c = &mut self.conns[token as usize];
                if c.at.first_byte == 0 {
                    c.at.first_byte = now;
                }
                c.parser.body_len += u64::from(len);
                c.job.bytes_in += u64::from(wire);
            }
            Ev::End { token } => self.h2_done(token as usize, Outcome::Response, now),
            Ev::Reset { token, code } if code == REFUSED_STREAM => {
                self.h2_retry(token as usize, now, Retry::Refused)
            }
            Ev::Reset { token, .. } => self.h2_done(token as usize, Outcome::StreamReset, now),
            Ev::Malformed { token } => self.h2_done(token as usize, Outcome::ProtocolError, now),
            Ev::Unprocessed { token } => self.h2_retry(token as usize, now, Retry::Rollover),
            Ev::GoAway => self.link_goaway(l, now),
        }
    }

    /// GOAWAY: the connection serves its open streams and nothing more; the
    /// logical link gets a fresh connection for what comes next.
    fn link_goaway(&mut self, l: usize, now: u64) {
        let h = self.links();
        let link = &mut h.store[l];
        if link.logical == NONE {
            return; // A second GOAWAY (graceful shutdown sends two).
        }
        h.active[link.logical as usize] = NONE;
        link.logical = NONE;
        let waiting: Vec<(u32, u32)> = link.waiting.drain(..).collect();
        self.report.h2_goaways += 1;
        for (idx, seq) in waiting {
            let c = &self.conns[idx as usize];
            if c.st == St::Connecting && c.place.seq == seq {
                self.h2_enqueue(idx as usize, now);
            }
        }
    }

    /// After a read: a connection that is going away closes once its last
    /// stream is done; otherwise waiting slots get the streams freed.
    fn link_settle(&mut self, l: usize) {
        let now = self.now();
        let link = &self.links().store[l];
        if link.st != LinkSt::Open {
            return;
        }
        let open = link.conn.as_ref().map_or(0, |c| c.open_streams());
        if link.logical == NONE && open == 0 {
            self.link_write(l);
            self.link_close(l);
        } else {
            self.pump(l, now);
        }
    }

    /// The server did not process the stream: send it again (on this
    /// link's current connection), a bounded number of times.
    fn h2_retry(&mut self, idx: usize, now: u64, why: Retry) {
        let c = &mut self.conns[idx];
        let spent = match why {
            Retry::Refused => c.place.tries >= MAX_TRIES,
            Retry::Rollover => c.place.rollovers >= MAX_ROLLOVERS,
        };
        if spent || self.ending {
            self.h2_done(idx, Outcome::StreamRefused, now);
            return;
        }
        match why {
            Retry::Refused => c.place.tries += 1,
            Retry::Rollover => c.place.rollovers += 1,
        }
        c.at.first_byte = 0;
        c.job.bytes_in = 0;
        c.job.written = 0;
        c.parser.status = 0;
        c.parser.body_len = 0;
        c.job.captured.clear();
        c.job.fields = None;
        self.sink.retried();
        self.h2_enqueue(idx, now);
    }

    /// Records slot `idx`'s request.
    fn h2_done(&mut self, idx: usize, outcome: Outcome, now: u64) {
        let l = self.conns[idx].place.link;
        let streaming = self.conns[idx].st == St::Reading;
        let prior = match self.links().store.get_mut(l as usize) {
            Some(link) if streaming => {
                let prior = link.completed;
                link.completed += u64::from(outcome == Outcome::Response);
                prior
            }
            _ => 0,
        };
        if streaming && outcome == Outcome::Response {
            let took = now.saturating_sub(self.conns[idx].at.sent);
            self.links().learn(took);
        }
        let c = &mut self.conns[idx];
        // `complete` reads reuse from `uses` as HTTP/1.1 counts it.
        c.uses = u32::from(prior > 0) + u32::from(outcome == Outcome::Response);
        c.enter(St::Closed, &mut self.unsettled);
        self.complete(idx, outcome, now);
        if self.links().streams == 1 && self.user_retired(idx) {
            self.h2_retire(idx);
        }
    }

    /// A virtual user is done: its connection (it has its own) closes.
    pub(super) fn h2_retire(&mut self, idx: usize) {
        let h = self.links();
        if h.streams != 1 {
            return;
        }
        let l = h.active[idx];
        if l != NONE && h.store[l as usize].st != LinkSt::Closed {
            self.link_close(l as usize);
        }
    }

    /// Closes connection `l` quietly (no stream is open on it).
    fn link_close(&mut self, l: usize) {
        let h = self.links();
        let link = &mut h.store[l];
        link.shut(false);
        if link.logical == NONE && link.waiting.is_empty() {
            h.free.push(l as u32);
        }
    }

    /// Connection `l` failed or closed. Its streams end with `outcome`
    /// (incomplete if part of a response came), except those a keep-alive
    /// connection's close caught before the server saw them: those go out
    /// again, counted. Slots still waiting go to a fresh connection if this
    /// one had worked, else fail with it.
    fn link_down(&mut self, l: usize, outcome: Outcome, now: u64) {
        let h = links_of(&mut self.transport);
        let mut streams = std::mem::take(&mut h.scratch);
        streams.clear();
        let link = &mut h.store[l];
        if let Some(conn) = link.conn.as_mut() {
            conn.take_open(&mut streams);
        }
        let worked = link.completed > 0;
        let waiting: Vec<(u32, u32)> = link.waiting.drain(..).collect();
        link.shut(false);
        let draining = link.logical == NONE;
        let retry_ok = worked && matches!(outcome, Outcome::ClosedBeforeResponse | Outcome::Reset);
        for &idx in &streams {
            let c = &self.conns[idx as usize];
            if c.st != St::Reading {
                continue;
            }
            if retry_ok
                && c.at.first_byte == 0
                && c.job.idempotent
                && c.place.tries < MAX_TRIES
                && !self.ending
            {
                self.h2_retry(idx as usize, now, Retry::Refused);
            } else {
                let o = if c.at.first_byte > 0 && outcome == Outcome::ClosedBeforeResponse {
                    Outcome::IncompleteBody
                } else {
                    outcome
                };
                self.h2_done(idx as usize, o, now);
            }
        }
        for (idx, seq) in waiting {
            let c = &self.conns[idx as usize];
            if c.st != St::Connecting || c.place.seq != seq {
                continue;
            }
            if (worked || draining) && !self.ending {
                self.h2_enqueue(idx as usize, now);
            } else {
                self.h2_done(idx as usize, outcome, now);
            }
        }
        let h = self.links();
        if draining {
            h.free.push(l as u32);
        }
        streams.clear();
        h.scratch = streams;
    }

    /// Fails what ran past its deadline: connects and handshakes, streams
    /// (reset with CANCEL, the connection lives on) and waits for a stream.
    pub(super) fn h2_sweep(&mut self, now: u64) {
        for l in 0..self.links().store.len() {
            let link = &self.links().store[l];
            if now >= link.deadline {
                match link.st {
                    LinkSt::Connecting => self.link_down(l, Outcome::ConnectTimeout, now),
                    LinkSt::Handshaking => self.link_down(l, Outcome::Timeout, now),
                    _ => {}
                }
            }
        }
        for idx in 0..self.conns.len() {
            let c = &self.conns[idx];
            if !c.busy() || now < c.at.deadline {
                continue;
            }
            if c.st == St::Reading {
                let (l, stream) = (c.place.link as usize, c.place.stream);
                let h = self.links();
                if let Some(conn) = h.store[l].conn.as_mut() {
                    conn.cancel(stream);
                    h.mark(l);
                }
            }
            self.h2_done(idx, Outcome::Timeout, now);
        }
    }

    /// The run is over: reset every connection.
    pub(super) fn h2_abort(&mut self) {
        for link in &mut self.links().store {
            link.shut(true);
            link.waiting.clear();
        }
    }
}

/// Bytes a request puts on the wire: HEADERS and the body's DATA frames
/// (the 16 KiB default frame size; CONTINUATION is rare enough to ignore).
fn wire_len(req: &h2::Request) -> usize {
    let body = req.body().len();
    9 + req.block().len() + body + 9 * body.div_ceil(16_384)
}

/// Appends to a capture buffer, up to its limit.
fn keep(captured: &mut Vec<u8>, bytes: &[u8]) {
    let room = CAPTURE_MAX.saturating_sub(captured.len());
    captured.extend_from_slice(&bytes[..bytes.len().min(room)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn links(streams: u32, typical_ms: u64) -> Links {
        let req = h2::encode_request(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n", false).unwrap();
        let mut h = Links::new(streams, 200, false, req);
        h.typical = typical_ms * 1_000_000;
        h
    }

    #[test]
    fn a_round_is_two_percent_of_the_typical_response_within_the_slack() {
        let slack = 500_000;
        // 7 ms: 140 µs; 100 ms: the slack's 500 µs.
        assert_eq!(links(100, 7).round(slack), 140_000);
        assert_eq!(links(100, 100).round(slack), slack);
        // Under 2.5 ms a round would be shorter than a VM's timer overshoot.
        assert_eq!(links(100, 2).round(slack), 0);
        // Nothing learned yet, one stream a connection, or no slack: none.
        assert_eq!(links(100, 0).round(slack), 0);
        assert_eq!(links(1, 100).round(slack), 0);
        assert_eq!(links(100, 100).round(0), 0);
    }

    #[test]
    fn the_typical_response_time_follows_what_comes_back() {
        let mut h = links(100, 0);
        for _ in 0..100 {
            h.learn(8_000_000);
        }
        assert!(
            (7_900_000..=8_000_000).contains(&h.typical),
            "{}",
            h.typical
        );
        for _ in 0..100 {
            h.learn(1_000_000);
        }
        assert!((1_000_000..1_100_000).contains(&h.typical), "{}", h.typical);
    }
}
