//! One blocking request to the target, timed phase by phase. The engine's
//! own framing ([`engine::codec::ResponseParser`]) decides where the
//! response ends, so the probe reads exactly what a run would.

use engine::codec::{Detail, EofError, FrameError, Progress, ResponseParser, MAX_HEAD};
use engine::Outcome;
use host::{Check, Level};
use plan::Target;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How long the probe waits for the connect, then for the whole response.
pub const CONNECT_TIMEOUT: Duration = plan::DEFAULT_CONNECT_TIMEOUT;
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);

/// Time spent in each phase of the request.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Phases {
    pub dns: Duration,
    pub connect: Duration,
    /// The TLS handshake (zero for http://).
    pub tls: Duration,
    /// From starting to send the request to the first response byte (TTFB).
    pub wait: Duration,
    /// From the first to the last response byte.
    pub receive: Duration,
}

impl Phases {
    pub fn total(&self) -> Duration {
        self.dns + self.connect + self.tls + self.wait + self.receive
    }
}

/// How the response delimits its body: the engine's rule, read off the
/// engine's parser (one home for HTTP/1.1 framing).
pub use engine::codec::Framing;

/// The facts of the final response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// "HTTP/1.1 200 OK"
    pub status_line: String,
    pub status: u16,
    pub server: Option<String>,
    pub location: Option<String>,
    /// Set from the engine's parser once the response is framed.
    pub framing: Framing,
}

/// A complete response.
#[derive(Debug, Clone, PartialEq)]
pub struct Probed {
    pub head: Head,
    pub body_len: u64,
    /// The connection may be reused (HTTP keep-alive).
    pub keep_alive: bool,
    pub phases: Phases,
}

/// Why the probe got no complete response: an engine outcome, so the
/// explanation is the one a run's summary gives.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeError {
    pub outcome: Outcome,
    /// The OS error or other detail.
    pub detail: String,
    /// Phases completed before it failed.
    pub phases: Phases,
}

/// Reads the final head's display fields (status line, `Server`,
/// `Location`) at the start of `buf`, skipping interim (1xx) heads; `None`
/// until it is complete (or if it is invalid). The framing is not decided
/// here but by the engine's parser: [`probe`] fills it in.
pub fn parse_head(buf: &[u8]) -> Option<Head> {
    let mut off = 0;
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 100];
        let mut r = httparse::Response::new(&mut headers);
        let n = match r.parse(&buf[off..]) {
            Ok(httparse::Status::Complete(n)) => n,
            _ => return None,
        };
        let status = r.code?;
        if (100..200).contains(&status) && status != 101 {
            off += n;
            continue;
        }
        let text = |name: &str| {
            r.headers
                .iter()
                .rev()
                .find(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| String::from_utf8_lossy(h.value).trim().to_owned())
        };
        return Some(Head {
            status_line: format!(
                "HTTP/1.{} {status} {}",
                r.version.unwrap_or(1),
                r.reason.unwrap_or("")
            )
            .trim_end()
            .to_owned(),
            status,
            server: text("server"),
            location: text("location"),
            framing: Framing::default(),
        });
    }
}

/// The probe's connection: plain TCP, or TLS over it.
enum Stream {
    Plain(TcpStream),
    Tls(Box<engine::tls::BlockingTls>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => &t.sock,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(t) => t.flush(),
        }
    }
}

/// Sends one `GET` (keep-alive, so the answer shows whether the server
/// keeps connections) and reads the whole response. `dns` is the time
/// resolving took, counted in the phases.
pub fn probe(
    addr: SocketAddr,
    target: &plan::Target,
    dns: Duration,
    connect_timeout: Duration,
    response_timeout: Duration,
    tls: Option<&engine::tls::TlsSetup>,
) -> Result<Probed, ProbeError> {
    let mut phases = Phases {
        dns,
        ..Phases::default()
    };
    let fail = |outcome, detail: String, phases| ProbeError {
        outcome,
        detail,
        phases,
    };
    let t0 = Instant::now();
    let tcp = TcpStream::connect_timeout(&addr, connect_timeout)
        .map_err(|e| fail(engine::http::io_connect_outcome(&e), e.to_string(), phases))?;
    let connected = Instant::now();
    phases.connect = connected - t0;
    let _ = tcp.set_nodelay(true);
    let mut s = match tls {
        None => Stream::Plain(tcp),
        Some(setup) => {
            let _ = tcp.set_read_timeout(Some(response_timeout));
            let _ = tcp.set_write_timeout(Some(response_timeout));
            let shaken = setup.handshake(tcp);
            phases.tls = connected.elapsed();
            let t = shaken.map_err(|(outcome, detail)| fail(outcome, detail, phases))?;
            Stream::Tls(Box::new(t))
        }
    };
    let sent = Instant::now();
    let request = plan::RequestSpec::new("GET", Vec::new(), Vec::new()).encode(target, true);
    let deadline = sent + response_timeout;
    let timed_out = |phases| {
        fail(
            Outcome::Timeout,
            format!(
                "no complete response within {}s",
                response_timeout.as_secs_f64()
            ),
            phases,
        )
    };
    let _ = s.tcp().set_write_timeout(Some(response_timeout));
    if let Err(e) = s.write_all(&request) {
        return Err(match e.kind() {
            ErrorKind::WouldBlock | ErrorKind::TimedOut => timed_out(phases),
            _ => fail(Outcome::Reset, e.to_string(), phases),
        });
    }
    let mut parser = ResponseParser::default();
    parser.reset(false, false);
    let mut buf = vec![0u8; 64 * 1024];
    let mut head_bytes = Vec::new();
    let mut head = None;
    let mut first_byte = None;
    let stamp = |phases: &mut Phases, first: Option<Instant>| {
        let now = Instant::now();
        match first {
            Some(f) => {
                phases.wait = f - sent;
                phases.receive = now - f;
            }
            None => phases.wait = now - sent,
        }
    };
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            stamp(&mut phases, first_byte);
            return Err(timed_out(phases));
        }
        let _ = s.tcp().set_read_timeout(Some(left));
        let n = match s.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                stamp(&mut phases, first_byte);
                return Err(match e.kind() {
                    ErrorKind::WouldBlock | ErrorKind::TimedOut => timed_out(phases),
                    _ => fail(Outcome::Reset, e.to_string(), phases),
                });
            }
        };
        if n == 0 {
            stamp(&mut phases, first_byte);
            match parser.eof() {
                Ok(()) => break,
                Err(EofError::BeforeResponse) => {
                    return Err(fail(
                        Outcome::ClosedBeforeResponse,
                        "the connection closed before any response byte".into(),
                        phases,
                    ))
                }
                Err(EofError::Incomplete) => {
                    return Err(fail(
                        Outcome::IncompleteBody,
                        format!("the connection closed after {} body bytes", parser.body_len),
                        phases,
                    ))
                }
                Err(EofError::Invalid(e)) => {
                    return Err(refused(e, parser.detail, &head_bytes, phases));
                }
            }
        }
        first_byte.get_or_insert_with(Instant::now);
        if head.is_none() && head_bytes.len() <= MAX_HEAD {
            head_bytes.extend_from_slice(&buf[..n.min(MAX_HEAD + 1 - head_bytes.len())]);
            head = parse_head(&head_bytes);
        }
        match parser.feed(&buf[..n]) {
            Ok(Progress::Done { .. }) => {
                stamp(&mut phases, first_byte);
                break;
            }
            Ok(Progress::NeedMore) => {}
            Err(e) => {
                stamp(&mut phases, first_byte);
                return Err(refused(e, parser.detail, &head_bytes, phases));
            }
        }
    }
    let Some(mut head) = head else {
        return Err(fail(
            Outcome::ProtocolError,
            "the response head could not be parsed".into(),
            phases,
        ));
    };
    head.framing = parser.framing;
    Ok(Probed {
        head,
        body_len: parser.body_len,
        keep_alive: parser.keep_alive,
        phases,
    })
}

/// A response the engine's parser refused, said as the run would say it.
fn refused(e: FrameError, detail: Detail, head: &[u8], phases: Phases) -> ProbeError {
    let mut what = detail.explain().to_string();
    if e == FrameError::Protocol {
        let start = String::from_utf8_lossy(&head[..head.len().min(40)]);
        what = format!("{what}; the response starts {start:?}");
    }
    ProbeError {
        outcome: e.outcome(),
        detail: what,
        phases,
    }
}

/// A duration in milliseconds, to the microsecond.
pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// The phases on one line, in ms.
pub fn phases_line(p: &Phases) -> String {
    let tls = if p.tls.is_zero() {
        String::new()
    } else {
        format!("  tls {}", ms(p.tls))
    };
    format!(
        "dns {}  connect {}{tls}  wait (TTFB) {}  receive {}  total {}",
        ms(p.dns),
        ms(p.connect),
        ms(p.wait),
        ms(p.receive),
        ms(p.total())
    )
}

fn framing_text(f: Framing) -> String {
    match f {
        Framing::ContentLength(n) => format!("Content-Length: {n}"),
        Framing::Chunked => "chunked".into(),
        Framing::UntilClose => "until the server closes".into(),
        Framing::NoBody => "no body".into(),
    }
}

/// The probe's checklist line: the response and its phases, or why there
/// was none (with the run summary's explanation of that error class).
pub fn verdict(r: &Result<Probed, ProbeError>, t: &Target, keepalive: bool) -> Check {
    const NAME: &str = "probe";
    let p = match r {
        Ok(p) => p,
        Err(e) => {
            let mut c = Check::new(
                NAME,
                Level::Fail,
                format!("{}: {}", e.outcome.name(), e.outcome.explain()),
            )
            .detail(format!("GET {}: {}", t.url, e.detail));
            if e.phases.connect > Duration::ZERO {
                c = c.detail(phases_line(&e.phases));
            }
            return c.fix(format!(
                "curl -sv -o /dev/null '{}'   # see what answers there",
                t.url
            ));
        }
    };
    let h = &p.head;
    let mut c = Check::new(
        NAME,
        Level::Ok,
        format!("{} in {}", h.status_line, ms(p.phases.total())),
    )
    .detail(phases_line(&p.phases))
    .detail(format!(
        "server: {}  body: {} bytes ({})  keep-alive: {}",
        h.server.as_deref().unwrap_or("(no Server header)"),
        report::count(p.body_len),
        framing_text(h.framing),
        if p.keep_alive { "yes" } else { "no" }
    ));
    let warn = |c: Check, note: String, fix: String| {
        let mut c = c.fix(fix);
        c.level = Level::Warn;
        c.finding.push_str("; ");
        c.finding.push_str(&note);
        c
    };
    if (300..400).contains(&h.status) && h.status != 304 {
        let (to, fix) = match h.location.as_deref() {
            Some(to) if to.starts_with('/') => (
                to.to_owned(),
                format!(
                    "yace doctor 'http://{}{to}'   # test the final URL",
                    t.host_header
                ),
            ),
            Some(to) => (
                to.to_owned(),
                format!("yace doctor '{to}'   # test the final URL"),
            ),
            None => (
                "(no Location header)".to_owned(),
                "# check the URL: a run would get this redirect every time".to_owned(),
            ),
        };
        c = warn(
            c,
            format!(
                "it redirects to {to}: yace does not follow redirects, so a run would measure \
                 only the redirect"
            ),
            fix,
        );
    } else if h.status >= 400 {
        c = warn(
            c,
            "a run would measure this error response, not the page".into(),
            "# check the URL's path and the server's error log".into(),
        );
    }
    if keepalive && !p.keep_alive {
        c = warn(
            c,
            "the server closes the connection after each response, so every request of a run \
             will open a new one (ports and TIME_WAIT matter as with --no-keepalive)"
                .into(),
            "# enable keep-alive on the server (nginx keepalive_timeout, Apache KeepAlive On)"
                .into(),
        );
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads() {
        let h = parse_head(
            b"HTTP/1.1 200 OK\r\nServer: nginx/1.24\r\nContent-Length: 12\r\n\r\nhello world\n",
        )
        .unwrap();
        assert_eq!(h.status_line, "HTTP/1.1 200 OK");
        assert_eq!(h.status, 200);
        assert_eq!(h.server.as_deref(), Some("nginx/1.24"));

        let h = parse_head(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n").unwrap();
        assert_eq!(h.status, 200);

        let h = parse_head(b"HTTP/1.0 302 Found\r\nLocation: /login\r\n\r\n").unwrap();
        assert_eq!(h.status_line, "HTTP/1.0 302 Found");
        assert_eq!(h.location.as_deref(), Some("/login"));

        let h = parse_head(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n").unwrap();
        assert_eq!(h.status, 304);

        assert_eq!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Len"), None);
        assert_eq!(parse_head(b"SSH-2.0-OpenSSH_9.6\r\n"), None);
    }

    /// A one-shot server that answers `reply` to the first request.
    fn serve_once(reply: &'static [u8]) -> (SocketAddr, std::thread::JoinHandle<()>) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let h = std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let _ = c.write_all(reply);
        });
        (addr, h)
    }

    fn target(addr: SocketAddr) -> plan::Target {
        plan::Target::parse(&format!("http://{addr}/x")).unwrap()
    }

    #[test]
    fn reads_a_close_delimited_chunked_and_cut_response() {
        let (addr, h) = serve_once(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabcdef");
        let p = probe(
            addr,
            &target(addr),
            Duration::ZERO,
            CONNECT_TIMEOUT,
            RESPONSE_TIMEOUT,
            None,
        )
        .unwrap();
        h.join().unwrap();
        assert_eq!(
            (p.head.framing, p.body_len, p.keep_alive),
            (Framing::UntilClose, 6, false)
        );

        let (addr, h) = serve_once(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        );
        let p = probe(
            addr,
            &target(addr),
            Duration::ZERO,
            CONNECT_TIMEOUT,
            RESPONSE_TIMEOUT,
            None,
        )
        .unwrap();
        h.join().unwrap();
        assert_eq!(
            (p.head.framing, p.body_len, p.keep_alive),
            (Framing::Chunked, 3, true)
        );

        let (addr, h) = serve_once(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
        let e = probe(
            addr,
            &target(addr),
            Duration::ZERO,
            CONNECT_TIMEOUT,
            RESPONSE_TIMEOUT,
            None,
        )
        .unwrap_err();
        h.join().unwrap();
        assert_eq!(e.outcome, Outcome::IncompleteBody);

        let (addr, h) = serve_once(b"SSH-2.0-OpenSSH_9.6\r\n");
        let e = probe(
            addr,
            &target(addr),
            Duration::ZERO,
            CONNECT_TIMEOUT,
            RESPONSE_TIMEOUT,
            None,
        )
        .unwrap_err();
        h.join().unwrap();
        assert_eq!(e.outcome, Outcome::ProtocolError);
    }

    #[test]
    fn a_silent_server_times_out() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let t = Instant::now();
        let e = probe(
            addr,
            &target(addr),
            Duration::ZERO,
            CONNECT_TIMEOUT,
            Duration::from_millis(200),
            None,
        )
        .unwrap_err();
        assert_eq!(e.outcome, Outcome::Timeout);
        assert!(t.elapsed() >= Duration::from_millis(200));
        assert!(
            e.phases.wait >= Duration::from_millis(200),
            "{:?}",
            e.phases
        );
        drop(l);
    }
}
