//! The page's server: one thread, non-blocking sockets, a turn every
//! [`Limits::tick`] (or as soon as the run hands over rows).
//!
//! Each turn takes the rows in, accepts connections (at most
//! [`Limits::clients`] at once: more are answered 503), and moves each
//! connection on as far as its socket lets it without waiting: read a
//! request head, write what it is owed. A connection holds at most one
//! event being written; when that is out, it is given the newest state
//! (see [`crate::feed`]), so a slow reader skips versions rather than
//! piling them up, and one that takes longer than [`Limits::stuck`] to
//! take one event is dropped (a browser then connects again and is given
//! the whole charts). Nothing here ever waits on a browser.

use crate::access;
use crate::control::{self, Action, Control};
use crate::feed::{Event, Feed, Next};
use crate::http::{self, Head};
use stats::{RunResult, SecondRow};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// What the run hands the server.
#[derive(Debug)]
pub enum Msg {
    Rows(Vec<SecondRow>),
    End(Box<RunResult>),
}

/// The server's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections at once.
    pub clients: usize,
    /// Longest wait between turns.
    pub tick: Duration,
    /// A request head must be whole within this.
    pub head: Duration,
    /// A connection that has not taken what it is owed (an event, the
    /// page) this long after it was given it is dropped: it is too far
    /// behind to follow a live page, or not reading at all.
    pub stuck: Duration,
    /// After the end: how long readers get to take the report, and how
    /// long one may take nothing before it is left behind.
    pub end_grace: Duration,
    pub end_idle: Duration,
}

pub const LIMITS: Limits = Limits {
    clients: 8,
    tick: Duration::from_millis(25),
    head: Duration::from_secs(5),
    stuck: Duration::from_secs(10),
    end_grace: Duration::from_secs(3),
    end_idle: Duration::from_millis(300),
};

/// Bytes read from a stream's reader (which has nothing to say) before it
/// is dropped.
const MAX_CHATTER: usize = 64 * 1024;

enum Phase {
    /// Reading the request head.
    Head(Vec<u8>),
    /// Writing one answer, then closing.
    Reply,
    /// The stream: the version this reader holds, and whether it was sent
    /// the end.
    Stream { have: u64, ended: bool },
}

struct Client {
    sock: TcpStream,
    phase: Phase,
    /// What is being written, and how much of it is out.
    out: Vec<Event>,
    at: usize,
    since: Instant,
    /// When it last took a byte (read or written).
    progress: Instant,
    /// Since when it has been owed what `out` holds.
    owed: Instant,
    /// Bytes a stream's reader sent after its request.
    heard: usize,
}

/// Who may read, and the feed they read.
pub struct Server {
    pub listener: TcpListener,
    /// Where it listens (what a control request's `Host` must name).
    pub addr: SocketAddr,
    pub token: Option<String>,
    pub feed: Feed,
    pub limits: Limits,
    /// `--dashboard-control`: what the page's buttons do.
    pub control: Option<Control>,
}

impl Server {
    /// Serves until the run has ended and its readers have the report (or
    /// the grace is over), or until `rx` is dropped.
    pub fn run(mut self, rx: Receiver<Msg>) {
        let mut clients: Vec<Client> = Vec::new();
        let mut ending: Option<Instant> = None;
        let mut gone = false;
        let take = |m: Msg, rows: &mut Vec<SecondRow>, feed: &mut Feed| match m {
            Msg::Rows(r) => rows.extend(r),
            Msg::End(result) => {
                feed.push(std::mem::take(rows));
                feed.finish(*result);
            }
        };
        loop {
            let mut rows = Vec::new();
            if gone {
                std::thread::sleep(self.limits.tick);
            } else {
                match rx.recv_timeout(self.limits.tick) {
                    Ok(m) => take(m, &mut rows, &mut self.feed),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => gone = true,
                }
                while let Ok(m) = rx.try_recv() {
                    take(m, &mut rows, &mut self.feed);
                }
            }
            self.feed.push(rows);
            if self.feed.ended() && ending.is_none() {
                ending = Some(Instant::now());
            }
            if gone && ending.is_none() {
                // The run went away without an end (an error): close.
                return;
            }
            self.accept(&mut clients);
            let now = Instant::now();
            clients.retain_mut(|c| self.step(c, now));
            if let Some(t) = ending {
                clients.retain(|c| now.duration_since(c.progress) < self.limits.end_idle);
                if clients.is_empty() || now.duration_since(t) >= self.limits.end_grace {
                    return;
                }
            }
        }
    }

    fn accept(&self, clients: &mut Vec<Client>) {
        loop {
            let sock = match self.listener.accept() {
                Ok((s, _)) => s,
                // Out of descriptors, a reset before accept: try next turn.
                Err(_) => return,
            };
            if sock.set_nonblocking(true).is_err() {
                continue;
            }
            let _ = sock.set_nodelay(true);
            if clients.len() >= self.limits.clients {
                // One try, never a wait: the answer fits a socket buffer.
                let _ = (&sock).write(&http::text(
                    503,
                    "yace --dashboard: too many readers at once; close another tab\n",
                ));
                let _ = sock.shutdown(Shutdown::Write);
                continue;
            }
            let now = Instant::now();
            clients.push(Client {
                sock,
                phase: Phase::Head(Vec::new()),
                out: Vec::new(),
                at: 0,
                since: now,
                progress: now,
                owed: now,
                heard: 0,
            });
        }
    }

    /// Moves a connection on; false: it is done with (closed when dropped).
    fn step(&mut self, c: &mut Client, now: Instant) -> bool {
        match &mut c.phase {
            Phase::Head(buf) => {
                let mut chunk = [0u8; 2048];
                loop {
                    match c.sock.read(&mut chunk) {
                        Ok(0) => return false,
                        Ok(n) => {
                            buf.extend_from_slice(&chunk[..n]);
                            c.progress = now;
                            if buf.len() >= http::MAX_HEAD + control::MAX_BODY {
                                break;
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                        Err(_) => return false,
                    }
                }
                match http::parse(buf) {
                    Head::Partial => now.duration_since(c.since) < self.limits.head,
                    Head::Refused(status) => {
                        self.reply(c, http::text(status, "yace --dashboard: not a request\n"));
                        self.step(c, now)
                    }
                    Head::Done(req) => {
                        // A control request's body: whole, or wait for it.
                        let body = buf.get(req.body_at..).unwrap_or_default().to_vec();
                        let short = req.length.is_ok_and(|n| {
                            n.is_some_and(|n| n <= control::MAX_BODY && body.len() < n)
                        });
                        if req.method == "POST" && short {
                            return now.duration_since(c.since) < self.limits.head;
                        }
                        self.route(c, &req, &body);
                        self.step(c, now)
                    }
                }
            }
            Phase::Reply => match flush(c, now) {
                Ok(true) => {
                    let _ = c.sock.shutdown(Shutdown::Write);
                    false
                }
                Ok(false) => now.duration_since(c.owed) < self.limits.stuck,
                Err(_) => false,
            },
            Phase::Stream { .. } => {
                // A reader says nothing more: read to see it leave.
                let mut chunk = [0u8; 1024];
                loop {
                    match c.sock.read(&mut chunk) {
                        Ok(0) => return false,
                        Ok(n) => {
                            c.heard += n;
                            if c.heard > MAX_CHATTER {
                                return false;
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                        Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                        Err(_) => return false,
                    }
                }
                loop {
                    match flush(c, now) {
                        Ok(true) => {}
                        Ok(false) => return now.duration_since(c.owed) < self.limits.stuck,
                        Err(_) => return false,
                    }
                    let Phase::Stream { have, ended } = &mut c.phase else {
                        unreachable!()
                    };
                    if *ended {
                        // The report is out: done.
                        let _ = c.sock.shutdown(Shutdown::Write);
                        return false;
                    }
                    match self.feed.next(*have, *ended) {
                        Next::Event(e, v) => {
                            *have = v;
                            c.out.push(e);
                        }
                        Next::End(e) => {
                            *ended = true;
                            c.out.push(e);
                        }
                        Next::Nothing => return true,
                    }
                    c.owed = now;
                }
            }
        }
    }

    fn reply(&self, c: &mut Client, bytes: Vec<u8>) {
        c.phase = Phase::Reply;
        c.out = vec![bytes.into()];
        c.at = 0;
        c.owed = Instant::now();
    }

    /// Answers a whole request head (and a control request's body).
    fn route(&mut self, c: &mut Client, req: &http::Request, body: &[u8]) {
        if req.path == "/control" {
            let (status, answer) = self.control(req, body);
            let allow = [("Allow", "POST")];
            let extra: &[(&str, &str)] = if status == 405 { &allow } else { &[] };
            return self.reply(
                c,
                http::response(status, "application/json; charset=utf-8", extra, &answer),
            );
        }
        if req.method != "GET" {
            return self.reply(c, http::text(405, "yace --dashboard: read-only (GET)\n"));
        }
        let allowed = match &self.token {
            Some(t) => http::query_param(&req.query, "token")
                .is_some_and(|given| access::same(&given, t.as_bytes())),
            // No token (127.0.0.1): the page must have been asked for by
            // address, not through a DNS name rebound to this machine.
            None => req.host.as_deref().is_some_and(access::local_host),
        };
        if !allowed {
            let why = if self.token.is_some() {
                "yace --dashboard: this page needs its token: open the address yace printed \
                 (…/?token=…)\n"
            } else {
                "yace --dashboard: ask for this page by address (http://127.0.0.1:PORT/)\n"
            };
            return self.reply(c, http::text(403, why));
        }
        match req.path.as_str() {
            "/" | "/index.html" => {
                let controls = match &self.control {
                    _ if self.feed.ended() => report::html::live::Controls::Off,
                    None => report::html::live::Controls::Off,
                    Some(Control::On { now, users, .. }) => report::html::live::Controls::On {
                        now: now(),
                        users: *users,
                    },
                    Some(Control::Unavailable(why)) => {
                        report::html::live::Controls::Unavailable(why.clone())
                    }
                };
                let page = self.feed.page(&controls);
                let csp = report::html::live::CSP;
                self.reply(
                    c,
                    http::response(
                        200,
                        "text/html; charset=utf-8",
                        &[
                            ("Content-Security-Policy", csp),
                            ("X-Frame-Options", "DENY"),
                        ],
                        &page,
                    ),
                );
            }
            "/events" => {
                c.phase = Phase::Stream {
                    have: 0,
                    ended: false,
                };
                c.out = vec![http::head(200, "text/event-stream; charset=utf-8", &[]).into()];
                c.at = 0;
                c.owed = Instant::now();
            }
            "/favicon.ico" => self.reply(c, http::response(204, "image/x-icon", &[], b"")),
            _ => self.reply(c, http::text(404, "yace --dashboard: no such page\n")),
        }
    }
}

impl Server {
    /// `POST /control`: the status and the JSON answer. Refused (403)
    /// without `--dashboard-control`, without the token in its header, with
    /// a `Host` that does not name the page, or from another site; 409
    /// when the run cannot be steered (or has ended).
    fn control(&self, req: &http::Request, body: &[u8]) -> (u16, Vec<u8>) {
        let no = |status: u16, why: &str| (status, control::refused(why));
        let Some(ctl) = &self.control else {
            return no(
                403,
                "yace --dashboard: this page is read-only; start the run with \
                 --dashboard-control to steer it from the page",
            );
        };
        if req.method != "POST" {
            return no(405, "yace --dashboard: control takes POST");
        }
        let host = req.host.as_deref().unwrap_or("");
        if !control::own_host(host, self.addr) {
            return no(
                403,
                &format!(
                    "yace --dashboard: a control request must name the page's own address \
                     (Host: {}), not `{host}`",
                    self.addr
                ),
            );
        }
        if !control::same_origin(req.origin.as_deref(), req.fetch_site.as_deref(), host) {
            return no(
                403,
                "yace --dashboard: a control request from another site is refused",
            );
        }
        let token_ok = match (&req.token, &self.token) {
            (Some(given), Some(want)) => access::same(given, want.as_bytes()),
            _ => false,
        };
        if !token_ok {
            return no(
                403,
                "yace --dashboard: a control request needs the page's token in its \
                 X-Yace-Token header (the token of the address yace printed)",
            );
        }
        let n = match req.length {
            Ok(Some(n)) if n <= control::MAX_BODY => n,
            Ok(Some(_)) => {
                return no(
                    413,
                    &format!(
                        "yace --dashboard: a control request's body is {} bytes at most",
                        control::MAX_BODY
                    ),
                )
            }
            _ => {
                return no(
                    411,
                    "yace --dashboard: a control request says its Content-Length",
                )
            }
        };
        let action = match Action::parse(&body[..n.min(body.len())]) {
            Ok(a) => a,
            Err(e) => return no(400, &e),
        };
        match ctl {
            Control::Unavailable(why) => no(409, why),
            Control::On { .. } if self.feed.ended() => {
                no(409, "yace --dashboard: the run has ended")
            }
            Control::On { act, now, .. } => {
                let message = act(action);
                (200, control::done(&message, &now()))
            }
        }
    }
}

/// Writes what the connection is owed, as far as its socket takes it:
/// true when all of it is out.
fn flush(c: &mut Client, now: Instant) -> io::Result<bool> {
    while let Some(first) = c.out.first() {
        match c.sock.write(&first[c.at..]) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => {
                c.at += n;
                c.progress = now;
                if c.at == first.len() {
                    c.out.remove(0);
                    c.at = 0;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}
