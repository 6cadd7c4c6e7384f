//! php-fpm's status page as a source: read through the web server
//! (`fpm:http://…`) or straight from php-fpm over FastCGI
//! (`fpm:fcgi://HOST:PORT/PATH`, `fpm:fcgi+unix:SOCKET:/PATH`), always
//! with `?full` so that the status request's own child can be taken out
//! of the pool's figures (see [`parse::fpm::net_of_own_request`]).
//!
//! Read from the pool's own socket (or through the web server), the status
//! needs a free child of the pool, so it goes blind when the pool is full:
//! those reads fail and are gaps. php-fpm ≥ 8.0's `pm.status_listen` serves
//! it from a listener of its own, outside the pool's children: it answers
//! under saturation, and there is nothing to subtract.

use crate::parse;
use crate::reading::Reading;
use crate::source::Source;
use crate::spec::HttpUrl;
use engine::codec::Progress;
use engine::fcgi;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The most a status page may be (`?full` lists every child: ~400 bytes each).
const MAX_BODY: usize = 8 << 20;

/// Where php-fpm listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FcgiAddr {
    Tcp { host: String, port: u16 },
    Unix(PathBuf),
}

/// A status page read over FastCGI: where, and the status path (php-fpm's
/// `pm.status_path`, sent as `SCRIPT_NAME`) with the query asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FcgiUrl {
    pub addr: FcgiAddr,
    /// From `/`, without the query.
    pub path: String,
    /// `json&full` unless the spec gave one (`full` is added to it).
    pub query: String,
}

/// How the spec forms read, for errors.
pub const FCGI_FORMS: &str = "fpm:fcgi://HOST:PORT[/STATUS_PATH] or \
                              fpm:fcgi+unix:/path/to.sock[:/STATUS_PATH] (STATUS_PATH is the \
                              pool's pm.status_path, /status when left out)";

impl FcgiUrl {
    /// Parses `fcgi://HOST:PORT[/PATH[?QUERY]]` or
    /// `fcgi+unix:SOCKET[:/PATH[?QUERY]]`; `None` when `s` is neither form.
    pub fn parse(s: &str) -> Option<Result<FcgiUrl, String>> {
        if let Some(rest) = s.strip_prefix("fcgi://") {
            return Some(Self::tcp(rest));
        }
        let rest = s.strip_prefix("fcgi+unix:")?;
        // The status path starts with `/` after the socket's path: the first
        // `:/` parts them (`/run/php/fpm.sock:/status`), the rule a load
        // target's `fcgi+unix:` form follows too (`plan::split_unix`).
        let (sock, path) = match plan::split_unix(rest) {
            (sock, Some(path)) => (sock, path.to_string()),
            (sock, None) => (sock, "/status".to_string()),
        };
        let sock = sock.strip_prefix("//").unwrap_or(sock);
        Some(if sock.is_empty() {
            Err(format!("no socket path: use {FCGI_FORMS}"))
        } else if !sock.starts_with('/') {
            Err(format!(
                "the socket path {sock:?} is not absolute: use {FCGI_FORMS}"
            ))
        } else {
            Ok(Self::with_path(FcgiAddr::Unix(PathBuf::from(sock)), &path))
        })
    }

    fn tcp(rest: &str) -> Result<FcgiUrl, String> {
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/status"),
        };
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| format!("unclosed [ in fcgi://{rest}"))?;
            (h, after.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(format!("no host: use {FCGI_FORMS}"));
        }
        let port = port
            .ok_or_else(|| {
                format!("no port (php-fpm has no default; pool.d/www.conf's listen says it): use {FCGI_FORMS}")
            })?
            .parse::<u16>()
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| format!("bad port in fcgi://{rest}: use {FCGI_FORMS}"))?;
        Ok(Self::with_path(
            FcgiAddr::Tcp {
                host: host.to_string(),
                port,
            },
            path,
        ))
    }

    fn with_path(addr: FcgiAddr, path: &str) -> FcgiUrl {
        let (path, query) = match path.split_once('?') {
            Some((p, q)) => (p.to_string(), status_query(Some(q))),
            None => (path.to_string(), status_query(None)),
        };
        FcgiUrl { addr, path, query }
    }

    /// As shown in outputs.
    pub fn shown(&self) -> String {
        match &self.addr {
            FcgiAddr::Tcp { host, port } if host.contains(':') => {
                format!("fcgi://[{host}]:{port}{}", self.path)
            }
            FcgiAddr::Tcp { host, port } => format!("fcgi://{host}:{port}{}", self.path),
            FcgiAddr::Unix(p) => format!("fcgi+unix:{}:{}", p.display(), self.path),
        }
    }
}

/// The query a status read asks for: the user's (JSON by default) with
/// `full`, so that the process list shows the status request's own child.
pub fn status_query(user: Option<&str>) -> String {
    match user {
        None | Some("") => "json&full".to_string(),
        Some(q) if q.split('&').any(|p| p == "full") => q.to_string(),
        Some(q) => format!("{q}&full"),
    }
}

/// The status page's body, read over FastCGI as a web server would send the
/// request (`SCRIPT_NAME` = the status path, `QUERY_STRING` = `query`),
/// the whole exchange within `timeout`.
pub fn get(u: &FcgiUrl, query: &str, timeout: Duration) -> Result<String, String> {
    let deadline = Instant::now() + timeout;
    let uri = format!("{}?{query}", u.path);
    let params: [(&[u8], &[u8]); 10] = [
        (b"SCRIPT_FILENAME", u.path.as_bytes()),
        (b"SCRIPT_NAME", u.path.as_bytes()),
        (b"DOCUMENT_URI", u.path.as_bytes()),
        (b"REQUEST_URI", uri.as_bytes()),
        (b"QUERY_STRING", query.as_bytes()),
        (b"REQUEST_METHOD", b"GET"),
        (b"SERVER_PROTOCOL", b"HTTP/1.1"),
        (b"GATEWAY_INTERFACE", b"CGI/1.1"),
        (b"SERVER_SOFTWARE", b"yace-monitor"),
        (b"REMOTE_ADDR", b"127.0.0.1"),
    ];
    let mut req = Vec::with_capacity(512);
    fcgi::encode_request(
        &mut req,
        &fcgi::Request {
            id: 1,
            keep_conn: false,
            params: &params,
            stdin: b"",
        },
    )
    .map_err(|e| e.to_string())?;
    let where_ = match &u.addr {
        FcgiAddr::Tcp { host, port } => format!("{host}:{port}"),
        FcgiAddr::Unix(p) => p.display().to_string(),
    };
    let mut conn: Box<dyn Conn> = match &u.addr {
        FcgiAddr::Tcp { host, port } => {
            let addr = (host.as_str(), *port)
                .to_socket_addrs()
                .map_err(|e| format!("cannot resolve {host}: {e}"))?
                .next()
                .ok_or_else(|| format!("{host} has no address"))?;
            let s = TcpStream::connect_timeout(&addr, timeout)
                .map_err(|e| connect_error(&where_, &e, timeout))?;
            let _ = s.set_nodelay(true);
            Box::new(s)
        }
        FcgiAddr::Unix(path) => Box::new(
            engine::connect_unix(path, timeout).map_err(|e| connect_error(&where_, &e, timeout))?,
        ),
    };
    let slow = || format!("too slow: no complete answer within {timeout:?}");
    conn.timeouts(Some(
        deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1)),
    ));
    conn.write_all(&req)
        .map_err(|e| format!("cannot send the request to {where_}: {e}"))?;
    let mut p = fcgi::ResponseParser::new(
        1,
        fcgi::Limits {
            max_body: MAX_BODY as u64,
            keep_body: MAX_BODY,
            keep_stderr: 1024,
            ..fcgi::Limits::default()
        },
    );
    let mut buf = vec![0u8; 16 << 10];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(slow());
        }
        conn.timeouts(Some(left));
        match conn.read(&mut buf) {
            Ok(0) => {
                return Err(match p.eof() {
                    // Only asked before Done: the answer ended with its request.
                    Ok(()) => "php-fpm closed the connection after its answer".to_string(),
                    Err(fcgi::EofError::BeforeResponse) => format!(
                        "{where_} closed the connection without an answer (is it php-fpm's \
                         FastCGI socket, and does listen.allowed_clients let yace in?)"
                    ),
                    Err(fcgi::EofError::Incomplete) => {
                        "php-fpm closed the connection mid-answer".to_string()
                    }
                });
            }
            Ok(n) => match p.feed(&buf[..n]) {
                Ok(Progress::NeedMore) => {}
                Ok(Progress::Done { .. }) => break,
                Err(e) => return Err(format!("not a FastCGI answer from {where_}: {e}")),
            },
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(slow())
            }
            Err(e) => return Err(format!("reading the answer: {e}")),
        }
    }
    answer(&p, &u.path)
}

/// The body of a complete answer, or what it says is wrong.
fn answer(p: &fcgi::ResponseParser, path: &str) -> Result<String, String> {
    if let Some(end) = p.end {
        if end.protocol_status != fcgi::ProtocolStatus::RequestComplete {
            return Err(format!(
                "php-fpm refused the request: {}",
                end.protocol_status.name()
            ));
        }
    }
    let stderr = String::from_utf8_lossy(p.stderr()).trim().to_string();
    let body = String::from_utf8_lossy(p.body()).into_owned();
    match p.status {
        200 => Ok(body),
        404 => Err(format!(
            "php-fpm has no status page at {path} (it answered 404{}): the path must be the \
             pool's pm.status_path exactly (e.g. `pm.status_path = /status`)",
            if stderr.is_empty() {
                String::new()
            } else {
                format!(", «{stderr}»")
            }
        )),
        403 => Err(format!(
            "php-fpm answered 403 for {path} (security.limit_extensions? the status path must be \
             the pool's pm.status_path)"
        )),
        s => Err(format!("php-fpm answered {s} for {path}")),
    }
}

fn connect_error(where_: &str, e: &std::io::Error, timeout: Duration) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => format!(
            "connection refused at {where_} (is php-fpm running, and is this its pool's listen \
             or pm.status_listen address?)"
        ),
        std::io::ErrorKind::NotFound => format!(
            "no socket at {where_} (is php-fpm running? its pool's `listen` or \
             `pm.status_listen` names the path)"
        ),
        std::io::ErrorKind::PermissionDenied => format!(
            "no permission to connect to {where_} (listen.owner/listen.group/listen.mode of the \
             pool decide who may)"
        ),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
            format!("no connection to {where_} within {timeout:?} (its accept queue is full?)")
        }
        _ => format!("cannot connect to {where_}: {e}"),
    }
}

/// A TCP or unix-domain stream with read and write timeouts.
trait Conn: Read + Write {
    fn timeouts(&self, t: Option<Duration>);
}

impl Conn for TcpStream {
    fn timeouts(&self, t: Option<Duration>) {
        let _ = self.set_read_timeout(t);
        let _ = self.set_write_timeout(t);
    }
}

impl Conn for std::os::unix::net::UnixStream {
    fn timeouts(&self, t: Option<Duration>) {
        let _ = self.set_read_timeout(t);
        let _ = self.set_write_timeout(t);
    }
}

/// Where the status is read from.
#[derive(Debug, Clone)]
enum Via {
    Http(HttpUrl),
    Fcgi(FcgiUrl),
}

/// php-fpm's status, net of the status request's own child.
#[derive(Debug)]
pub struct Status {
    via: Via,
    reads: u64,
    /// Whether the last read with a process list was answered by a child
    /// of the pool (`None` before one).
    through_pool: Option<bool>,
}

impl Status {
    pub fn http(url: &HttpUrl) -> Self {
        Status {
            via: Via::Http(url.clone()),
            reads: 0,
            through_pool: None,
        }
    }

    pub fn fcgi(url: &FcgiUrl) -> Self {
        Status {
            via: Via::Fcgi(url.clone()),
            reads: 0,
            through_pool: None,
        }
    }

    fn shown(&self) -> String {
        match &self.via {
            Via::Http(u) => u.shown(),
            Via::Fcgi(u) => u.shown(),
        }
    }

    /// The status path as php-fpm sees it, where the spec tells.
    fn status_path(&self) -> String {
        match &self.via {
            Via::Http(u) => u.path.split('?').next().unwrap_or("/status").to_string(),
            Via::Fcgi(u) => u.path.clone(),
        }
    }
}

impl Source for Status {
    fn read(&mut self, timeout: Duration) -> Result<Reading, String> {
        // Within the interval, with room left for parsing and storing: a
        // read that would run into the next one is a gap, not a late value.
        let timeout = timeout.mul_f64(0.8).max(Duration::from_millis(50));
        self.reads += 1;
        // A token in the query that php-fpm shows in the request URI of the
        // child serving it: that child is this read, not load. Unique in
        // the process, not per source: two fpm sources (a pool's socket and
        // its status_listen) read at the same instant, and one must not
        // take the other's read in the pool's list for its own.
        static READS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let marker = format!("yace={}.{n}", std::process::id());
        let body = match &self.via {
            Via::Http(u) => {
                let mut u = u.clone();
                let sep = if u.path.contains('?') { '&' } else { '?' };
                u.path = format!("{}{sep}{marker}", u.path);
                crate::http::get(&u, timeout)?
            }
            Via::Fcgi(u) => get(u, &format!("{}&{marker}", u.query), timeout)?,
        };
        let (mut r, procs) = parse::fpm::parse_full(&body)?;
        if let Some(procs) = procs {
            self.through_pool = Some(parse::fpm::net_of_own_request(&mut r, &procs, &marker));
        }
        Ok(r)
    }

    fn label(&self) -> String {
        let how = match self.through_pool {
            Some(true) => ", answered by a child of the pool (its own request is not counted)",
            Some(false) => ", answered outside the pool's children",
            None => "",
        };
        format!("php-fpm status at {}{how}", self.shown())
    }

    fn note(&self) -> Option<String> {
        (self.through_pool == Some(true)).then(|| {
            let path = self.status_path();
            format!(
                "php-fpm's status was answered by a child of the pool it watches, so it goes \
                 blind when every child is busy: give it a listener of its own (PHP ≥ 8.0) with \
                 `pm.status_listen = /run/php/fpm-status.sock` in the pool (keep \
                 `pm.status_path = {path}`) and read it with `--monitor \
                 fpm:fcgi+unix:/run/php/fpm-status.sock:{path}`"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_forms() {
        let u = FcgiUrl::parse("fcgi://127.0.0.1:9000/fpm-status")
            .unwrap()
            .unwrap();
        assert_eq!(
            u.addr,
            FcgiAddr::Tcp {
                host: "127.0.0.1".into(),
                port: 9000
            }
        );
        assert_eq!(
            (u.path.as_str(), u.query.as_str()),
            ("/fpm-status", "json&full")
        );
        assert_eq!(u.shown(), "fcgi://127.0.0.1:9000/fpm-status");
        let u = FcgiUrl::parse("fcgi://[::1]:9000").unwrap().unwrap();
        assert_eq!(u.path, "/status");
        assert_eq!(u.shown(), "fcgi://[::1]:9000/status");

        let u = FcgiUrl::parse("fcgi+unix:/run/php/fpm.sock:/status?json")
            .unwrap()
            .unwrap();
        assert_eq!(u.addr, FcgiAddr::Unix("/run/php/fpm.sock".into()));
        assert_eq!(
            (u.path.as_str(), u.query.as_str()),
            ("/status", "json&full")
        );
        assert_eq!(u.shown(), "fcgi+unix:/run/php/fpm.sock:/status");
        let u = FcgiUrl::parse("fcgi+unix:/run/php/fpm.sock")
            .unwrap()
            .unwrap();
        assert_eq!(u.path, "/status");
        // A socket path with a colon in it: the status path is after the last `:/`.
        let u = FcgiUrl::parse("fcgi+unix:/tmp/a:b.sock:/st")
            .unwrap()
            .unwrap();
        assert_eq!(u.addr, FcgiAddr::Unix("/tmp/a:b.sock".into()));
        assert_eq!(u.path, "/st");

        assert!(FcgiUrl::parse("http://x/").is_none());
        for (bad, says) in [
            ("fcgi://127.0.0.1/status", "no port"),
            ("fcgi://:9000/status", "no host"),
            ("fcgi://h:0/", "bad port"),
            ("fcgi+unix:run/php.sock", "not absolute"),
            ("fcgi+unix::/status", "no socket path"),
        ] {
            let e = FcgiUrl::parse(bad).unwrap().unwrap_err();
            assert!(
                e.contains(says) && e.contains("fpm:fcgi+unix:"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn the_query_always_asks_for_the_process_list() {
        assert_eq!(status_query(None), "json&full");
        assert_eq!(status_query(Some("json")), "json&full");
        assert_eq!(status_query(Some("full&json")), "full&json");
        assert_eq!(status_query(Some("")), "json&full");
    }

    /// A FastCGI peer on loopback that answers one request with `answer`.
    fn peer(answer: Vec<u8>) -> FcgiUrl {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut b = [0u8; 4096];
            let _ = c.read(&mut b);
            let _ = c.write_all(&answer);
        });
        FcgiUrl::parse(&format!("fcgi://127.0.0.1:{port}/status"))
            .unwrap()
            .unwrap()
    }

    fn stdout_then_end(out: &[u8], protocol: u8) -> Vec<u8> {
        let mut w = Vec::new();
        fcgi::encode_header(&mut w, fcgi::RecordType::Stdout, 1, out.len() as u16, 0);
        w.extend_from_slice(out);
        fcgi::encode_header(&mut w, fcgi::RecordType::EndRequest, 1, 8, 0);
        w.extend_from_slice(&[0, 0, 0, 0, protocol, 0, 0, 0]);
        w
    }

    #[test]
    fn answers_and_refusals() {
        let t = Duration::from_secs(2);
        let u = peer(stdout_then_end(
            b"Content-type: application/json\r\n\r\n{}",
            0,
        ));
        assert_eq!(get(&u, "json", t).unwrap(), "{}");
        let u = peer(stdout_then_end(
            b"Status: 404 Not Found\r\n\r\nFile not found.\n",
            0,
        ));
        let e = get(&u, "json", t).unwrap_err();
        assert!(e.contains("pm.status_path") && e.contains("404"), "{e}");
        let u = peer(stdout_then_end(b"", 2));
        let e = get(&u, "json", t).unwrap_err();
        assert!(e.contains("FCGI_OVERLOADED"), "{e}");
        let u = peer(b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec());
        let e = get(&u, "json", t).unwrap_err();
        assert!(
            e.contains("not a FastCGI answer") && e.contains("version 72"),
            "{e}"
        );
    }

    #[test]
    fn a_silent_peer_is_too_slow_not_stuck() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let u = FcgiUrl::parse(&format!("fcgi://127.0.0.1:{port}/status"))
            .unwrap()
            .unwrap();
        let t = Instant::now();
        let e = get(&u, "json", Duration::from_millis(300)).unwrap_err();
        assert!(e.contains("too slow"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(2));
        drop(l);
    }

    #[test]
    fn a_unix_socket_nobody_listens_on_is_named() {
        let u = FcgiUrl::parse("fcgi+unix:/nonexistent/yace-fpm.sock:/status")
            .unwrap()
            .unwrap();
        let e = get(&u, "json", Duration::from_millis(300)).unwrap_err();
        assert!(e.contains("no socket at /nonexistent/yace-fpm.sock"), "{e}");
    }
}
