//! HTTP/1.1 (and HTTPS) on the worker's slots: each slot its own
//! connection — connect, TLS handshake, write the request, read the
//! response, reuse or close. The loop in `mod.rs` reaches it through
//! [`Transport::Http1`](super::Transport); HTTP/2 is `http2.rs`.

use super::{note_handshake, token, St, Worker, CAPTURE_MAX};
use crate::codec::{EofError, Progress};
use crate::flow::Flow;
use crate::http::io_connect_outcome;
use crate::sys::{self, Connecting};
use crate::tls::Handshake;
use sample::{Detail, Outcome, Sink};
use std::io::Write;

impl<S: Sink, F: Flow> Worker<'_, S, F> {
    pub(super) fn connect(&mut self, idx: usize, now: u64) {
        let c = &mut self.conns[idx];
        c.at.connect_start = now;
        c.uses = 0;
        let gen = c.gen.wrapping_add(1);
        match self.dial(idx, gen) {
            Ok((fd, how)) => {
                let c = &mut self.conns[idx];
                c.gen = gen;
                c.fd = fd;
                match how {
                    Connecting::Done => self.connected(idx),
                    Connecting::Pending => {
                        c.enter(St::Connecting, &mut self.unsettled);
                        c.at.deadline = now + self.cfg.connect_timeout;
                    }
                }
            }
            Err(o) => self.complete(idx, o, now),
        }
    }

    pub(super) fn connected(&mut self, idx: usize) {
        let now = self.now();
        let c = &mut self.conns[idx];
        c.at.connected_at = now;
        self.sink.connected(now.saturating_sub(c.at.connect_start));
        self.report.connections_opened += 1;
        match self.cfg.tls {
            None => {
                self.quiet_out(idx, false);
                self.write(idx, now)
            }
            Some(setup) => match setup.connection() {
                Ok(tls) => {
                    c.tls = Some(tls);
                    c.enter(St::Handshaking, &mut self.unsettled);
                    c.at.deadline = now + self.cfg.connect_timeout;
                    self.handshake(idx);
                }
                Err(o) => {
                    self.close(idx);
                    self.complete(idx, o, now);
                }
            },
        }
    }

    /// Drives the TLS handshake as far as the socket allows; sends the
    /// request once it is done.
    pub(super) fn handshake(&mut self, idx: usize) {
        let now = self.now();
        let c = &mut self.conns[idx];
        let Some(tls) = c.tls.as_mut() else { return };
        match crate::tls::drive_handshake(tls, c.fd) {
            Handshake::Pending => {}
            Handshake::Failed(o) => {
                self.close(idx);
                self.complete(idx, o, now);
            }
            Handshake::Done => {
                c.at.handshaken_at = now;
                note_handshake(&mut self.report, tls);
                self.quiet_out(idx, false);
                self.write(idx, now);
            }
        }
    }

    pub(super) fn write(&mut self, idx: usize, now: u64) {
        let c = &mut self.conns[idx];
        let req: &[u8] = if c.job.own_request {
            &c.job.req
        } else {
            self.cfg.request
        };
        if c.job.written == 0 {
            c.at.sent = now;
            c.at.deadline = now + self.cfg.request_timeout;
        }
        if let Some(tls) = c.tls.as_mut() {
            if c.job.written == 0 {
                // Plaintext goes into rustls's buffer at once; what remains is flushing records.
                let _ = tls.writer().write_all(req);
                c.job.written = req.len();
            }
            match crate::tls::flush(tls, c.fd) {
                Ok(true) => c.enter(St::Reading, &mut self.unsettled),
                Ok(false) => {
                    c.enter(St::Writing, &mut self.unsettled);
                    self.quiet_out(idx, true);
                }
                Err(_) => self.write_failed(idx),
            }
            return;
        }
        loop {
            match sys::send(c.fd, &req[c.job.written..]) {
                Ok(n) => {
                    c.job.written += n;
                    if c.job.written == req.len() {
                        c.enter(St::Reading, &mut self.unsettled);
                        return;
                    }
                }
                Err(libc::EAGAIN) => {
                    c.enter(St::Writing, &mut self.unsettled);
                    self.quiet_out(idx, true);
                    return;
                }
                Err(libc::EINTR) => {}
                Err(_) => {
                    self.write_failed(idx);
                    return;
                }
            }
        }
    }

    /// The request could not be written: the server reset or closed. It
    /// may have answered first and closed — 413 for a large upload, 401
    /// before the body, 503 from a front end — and then that answer is the
    /// result, not `reset`: what the socket still holds is read to its end
    /// (the connection is not reused). Only with no answer is it a
    /// connection failure.
    fn write_failed(&mut self, idx: usize) {
        let c = &mut self.conns[idx];
        if c.parser.is_fresh() && !sys::has_data(c.fd) {
            // Nothing answered: the write's failure is the outcome.
            self.failed_before_response(idx, Outcome::Reset);
            return;
        }
        c.peer_closed = true;
        c.enter(St::Writing, &mut self.unsettled);
        self.readable(idx);
    }

    /// Keep-alive connections watch for room to write only while a write is
    /// blocked (see [`Epoll::watch_out`]): otherwise every ACK of a request
    /// would wake the loop. A connection per request skips the extra call.
    pub(super) fn quiet_out(&self, idx: usize, on: bool) {
        if self.cfg.keepalive {
            let c = &self.conns[idx];
            let _ = self.epoll.watch_out(c.fd, token(idx, c.gen), on);
        }
    }

    /// HTTPS: the next plaintext from the connection into `self.buf`, as a
    /// plain `read` would return it (see [`crate::tls::read_plain`]); with
    /// receive timestamps on, the newest socket read's is kept in `stamp`.
    pub(super) fn tls_read(
        &mut self,
        idx: usize,
        stamp: &mut Option<u64>,
    ) -> Result<Result<usize, i32>, Outcome> {
        let c = &mut self.conns[idx];
        let tls = c.tls.as_mut().expect("a TLS connection");
        crate::tls::read_plain(
            tls,
            c.fd,
            &mut c.tls_drained,
            &mut self.buf,
            &mut self.cipher,
            self.stamps.then_some(stamp),
        )
    }

    /// Reads and frames until the response is complete or the socket is drained.
    pub(super) fn readable(&mut self, idx: usize) {
        // A new event: whatever an earlier short read said, there may be more now.
        self.conns[idx].tls_drained = false;
        let mut reads = 0;
        // The newest kernel receive timestamp read on this turn: plaintext
        // rustls hands out later came in with it or before.
        let mut stamp = None;
        loop {
            let gen = self.conns[idx].gen;
            if self.over_budget(&mut reads, idx, gen, sys::IN) {
                return;
            }
            let fd = self.conns[idx].fd;
            let tls = self.conns[idx].tls.is_some();
            let r = if tls {
                match self.tls_read(idx, &mut stamp) {
                    Ok(r) => r,
                    Err(o) => {
                        let now = self.now();
                        self.close(idx);
                        self.complete(idx, o, now);
                        return;
                    }
                }
            } else {
                sys::read_keeping_stamp(fd, &mut self.buf, self.stamps.then_some(&mut stamp))
            };
            let now = self.now();
            // When the bytes arrived: the kernel's stamp where the loop may
            // have slept through their arrival, else now.
            let at = stamp.map_or(now, |t| self.stamped(t, self.conns[idx].at.sent, now));
            match r {
                Ok(0) if self.conns[idx].fcgi.is_some() => {
                    self.fcgi_eof(idx, now);
                    return;
                }
                Ok(n) if self.conns[idx].fcgi.is_some() => {
                    let c = &mut self.conns[idx];
                    if c.at.first_byte == 0 {
                        c.at.first_byte = at;
                    }
                    c.job.bytes_in += n as u64;
                    let fp = c.fcgi.as_mut().expect("a FastCGI slot");
                    match fp.feed(&self.buf[..n]) {
                        Ok(Progress::Done { consumed }) => {
                            self.fcgi_done(idx, at, now, consumed == n);
                            return;
                        }
                        Ok(Progress::NeedMore) => {
                            if n < self.buf.len() && !c.peer_closed {
                                return;
                            }
                        }
                        Err(e) => {
                            c.parser.detail = fcgi_detail(&e);
                            self.close(idx);
                            self.complete(idx, e.outcome(), now);
                            return;
                        }
                    }
                }
                Ok(0) => {
                    let c = &mut self.conns[idx];
                    match c.parser.eof() {
                        Ok(()) => {
                            self.close(idx);
                            self.complete(idx, Outcome::Response, now);
                        }
                        Err(EofError::BeforeResponse) => {
                            self.failed_before_response(idx, Outcome::ClosedBeforeResponse)
                        }
                        Err(EofError::Incomplete) => {
                            self.close(idx);
                            self.complete(idx, Outcome::IncompleteBody, now);
                        }
                        Err(EofError::Invalid(e)) => {
                            self.close(idx);
                            self.complete(idx, e.outcome(), now);
                        }
                    }
                    return;
                }
                Ok(n) => {
                    let c = &mut self.conns[idx];
                    if c.at.first_byte == 0 {
                        c.at.first_byte = at;
                    }
                    c.job.bytes_in += n as u64;
                    if c.job.capture {
                        let room = CAPTURE_MAX.saturating_sub(c.job.captured.len());
                        c.job.captured.extend_from_slice(&self.buf[..n.min(room)]);
                    }
                    match c.parser.feed(&self.buf[..n]) {
                        Ok(Progress::Done { consumed }) => {
                            // Bytes after the response answer no request of ours:
                            // the framing can't be trusted, so don't reuse.
                            let reuse = consumed == n
                                && c.parser.keep_alive
                                && self.cfg.keepalive
                                && !c.peer_closed
                                && c.st == St::Reading;
                            self.respond(idx, at, now, reuse);
                            return;
                        }
                        Ok(Progress::NeedMore) => {
                            // A short plain read drained the socket, unless the
                            // server also closed: then read on to end of file,
                            // which no later event would announce.
                            if n < self.buf.len() && !tls && !c.peer_closed {
                                return;
                            }
                        }
                        Err(e) => {
                            self.close(idx);
                            self.complete(idx, e.outcome(), now);
                            return;
                        }
                    }
                }
                Err(libc::EAGAIN) => return,
                Err(libc::EINTR) => {}
                Err(_) => {
                    if self.conns[idx].parser.is_fresh() {
                        self.failed_before_response(idx, Outcome::Reset);
                    } else {
                        self.close(idx);
                        self.complete(idx, Outcome::Reset, now);
                    }
                    return;
                }
            }
        }
    }

    /// A complete response, its last bytes received at `end`: record it,
    /// then let the slot go on at once (no trip through epoll) when its
    /// next request is due `now`.
    pub(super) fn respond(&mut self, idx: usize, end: u64, now: u64, reuse: bool) {
        if !self.captured_server {
            self.captured_server = true;
            self.report.server = self.conns[idx].parser.server.take();
        }
        self.conns[idx].uses += 1;
        if !reuse {
            self.close(idx);
        }
        self.complete(idx, Outcome::Response, end);
        if self.ending || self.cfg.end_at.is_some_and(|e| now >= e) {
            return;
        }
        self.go_on(idx, now, reuse);
    }

    /// FastCGI: `FCGI_END_REQUEST` came (`whole`: nothing after it in the
    /// read). Its status and body go where the sample takes them; stderr
    /// is counted; a protocol status other than complete is the request's
    /// refusal, named in its detail. The connection is reused only when
    /// FCGI_KEEP_CONN was asked for and the framing held.
    fn fcgi_done(&mut self, idx: usize, end: u64, now: u64, whole: bool) {
        use crate::fcgi::ProtocolStatus;
        let c = &mut self.conns[idx];
        let fp = c.fcgi.as_mut().expect("a FastCGI slot");
        if fp.stderr_len > 0 {
            self.report.fcgi_stderr_responses += 1;
            self.report.fcgi_stderr_bytes += fp.stderr_len;
            note_stderr(&mut self.report.fcgi_stderr_lines, fp.stderr());
        }
        let status = fp
            .end
            .map_or(ProtocolStatus::RequestComplete, |e| e.protocol_status);
        let refused = match status {
            ProtocolStatus::RequestComplete => None,
            ProtocolStatus::Overloaded => Some(Detail::FcgiOverloaded),
            ProtocolStatus::CantMpxConn => Some(Detail::FcgiCantMpxConn),
            ProtocolStatus::UnknownRole => Some(Detail::FcgiUnknownRole),
            ProtocolStatus::Other(_) => Some(Detail::FcgiStatus),
        };
        if let Some(d) = refused {
            c.parser.detail = d;
            self.close(idx);
            self.complete(idx, Outcome::StreamRefused, end);
            return;
        }
        c.parser.status = fp.status;
        c.parser.body_len = fp.body_len;
        c.parser.keep_alive = self.cfg.keepalive;
        if c.job.capture {
            // The flow reads it as it would an HTTP/2 response: typed
            // fields (the CGI `Status` is the status, not a field) and the
            // body kept.
            c.job.fields = Some(
                fp.headers()
                    .into_iter()
                    .filter(|(n, _)| !n.eq_ignore_ascii_case("status"))
                    .map(|(n, v)| (n, String::from_utf8_lossy(&v).into_owned()))
                    .collect(),
            );
            c.job.captured.clear();
            c.job.captured.extend_from_slice(fp.body());
        }
        let reuse = whole && self.cfg.keepalive && !c.peer_closed && c.st == St::Reading;
        self.respond(idx, end, now, reuse);
    }

    /// FastCGI: the connection ended before `FCGI_END_REQUEST`.
    fn fcgi_eof(&mut self, idx: usize, now: u64) {
        use crate::fcgi::EofError;
        let fp = self.conns[idx].fcgi.as_ref().expect("a FastCGI slot");
        match fp.eof() {
            Ok(()) => {}
            Err(EofError::BeforeResponse) => {
                self.failed_before_response(idx, Outcome::ClosedBeforeResponse)
            }
            Err(EofError::Incomplete) => {
                self.close(idx);
                self.complete(idx, Outcome::IncompleteBody, now);
            }
        }
    }

    /// The server closed or reset before answering. On a reused keep-alive
    /// connection that is the stale-connection race: an idempotent request
    /// is re-sent once on a fresh connection and counted as a retry.
    pub(super) fn failed_before_response(&mut self, idx: usize, outcome: Outcome) {
        let now = self.now();
        let c = &mut self.conns[idx];
        let stale = c.uses > 0 && c.at.first_byte == 0 && !c.job.retried && c.job.idempotent;
        self.close(idx);
        if stale && !self.ending {
            self.sink.retried();
            let c = &mut self.conns[idx];
            c.job.retried = true;
            c.job.written = 0;
            c.job.bytes_in = 0;
            self.connect(idx, now);
        } else {
            self.complete(idx, outcome, now);
        }
    }

    /// Data or end of file on a connection with nothing in flight: the server
    /// closed it (keep-alive timeout) or sent bytes nobody asked for.
    pub(super) fn idle_readable(&mut self, idx: usize) {
        let fd = self.conns[idx].fd;
        match sys::read(fd, &mut self.buf) {
            Err(libc::EAGAIN) | Err(libc::EINTR) => {}
            _ => {
                self.close(idx);
                self.idle_closed(idx);
            }
        }
    }

    /// An epoll event on slot `idx`'s own connection.
    pub(super) fn h1_event(&mut self, idx: usize, gen: u32, flags: u32) {
        let Some(c) = self.conns.get(idx) else { return };
        if c.gen != gen || c.fd < 0 {
            return; // An event for a socket this slot has since closed.
        }
        match c.st {
            St::Handshaking => self.handshake(idx),
            St::Connecting => {
                if flags & (sys::OUT | sys::ERR) != 0 {
                    match sys::take_socket_error(c.fd) {
                        Ok(()) => self.connected(idx),
                        Err(e) => {
                            let o = io_connect_outcome(&e);
                            self.close(idx);
                            self.complete(idx, o, self.now());
                        }
                    }
                }
            }
            St::Writing => {
                // An answer that came while the request was still being
                // written (a server refusing an upload early) is read
                // first: the write may be about to fail on its close.
                let c = &mut self.conns[idx];
                c.peer_closed |= flags & sys::CLOSED != 0;
                if flags & (sys::IN | sys::ERR) != 0 {
                    self.readable(idx);
                }
                let c = &self.conns[idx];
                if flags & sys::OUT != 0 && c.gen == gen && c.st == St::Writing && c.fd >= 0 {
                    self.quiet_out(idx, false);
                    self.write(idx, self.now());
                }
            }
            St::Reading => {
                self.conns[idx].peer_closed |= flags & sys::CLOSED != 0;
                self.readable(idx)
            }
            St::Idle => self.idle_readable(idx),
            St::Closed => {}
        }
    }

    /// Fails requests that ran past their deadline.
    pub(super) fn h1_sweep(&mut self, now: u64) {
        for idx in 0..self.conns.len() {
            let c = &self.conns[idx];
            if c.busy() && now >= c.at.deadline {
                let o = if c.st == St::Connecting {
                    Outcome::ConnectTimeout
                } else {
                    Outcome::Timeout
                };
                self.close(idx);
                self.complete(idx, o, now);
            }
        }
    }
}

/// The detail a refused FastCGI response is counted under.
fn fcgi_detail(e: &crate::fcgi::Error) -> Detail {
    use crate::fcgi::Error as E;
    match e {
        E::HeadTooLarge => Detail::HeadTooLarge,
        E::TooManyFields => Detail::TooManyFields,
        E::HeaderLine => Detail::HeaderLine,
        E::Status => Detail::StatusLine,
        E::NoHead => Detail::FcgiNoHead,
        _ => Detail::FcgiRecord,
    }
}

/// Most stderr lines a worker keeps to show, and bytes of each.
const STDERR_LINES: usize = 5;
const STDERR_LINE_BYTES: usize = 200;

/// Keeps the first lines of FastCGI stderr output, up to [`STDERR_LINES`]
/// distinct ones (the same warning on every request is shown once).
fn note_stderr(lines: &mut Vec<String>, stderr: &[u8]) {
    for line in stderr.split(|&b| b == b'\n') {
        if lines.len() >= STDERR_LINES {
            return;
        }
        let line = String::from_utf8_lossy(&line[..line.len().min(STDERR_LINE_BYTES)]);
        let line = line.trim();
        if !line.is_empty() && !lines.iter().any(|l| l == line) {
            lines.push(line.to_owned());
        }
    }
}
