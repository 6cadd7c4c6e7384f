//! A status page read: one plain HTTP/1.0 GET with a deadline over the
//! whole exchange, off the load threads (load never goes through here).

use crate::spec::HttpUrl;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The most a page may be (node_exporter's full scrape is ~100 KiB).
const MAX_BODY: usize = 8 << 20;

/// GETs `url`; the body of a 200 response, or what went wrong.
pub fn get(url: &HttpUrl, timeout: Duration) -> Result<String, String> {
    let deadline = Instant::now() + timeout;
    let addr = (url.host.as_str(), url.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", url.host))?
        .next()
        .ok_or_else(|| format!("{} has no address", url.host))?;
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(|e| match e.kind() {
        std::io::ErrorKind::ConnectionRefused => {
            format!("connection refused at {addr} (is the server running, and is the page served on this port?)")
        }
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
            format!("no answer from {addr} within {timeout:?}")
        }
        _ => format!("cannot connect to {addr}: {e}"),
    })?;
    let _ = s.set_nodelay(true);
    let mut req = format!(
        "GET {} HTTP/1.0\r\nHost: {}\r\nUser-Agent: yace-monitor\r\nAccept: */*\r\n",
        url.path,
        host_header(url)
    );
    if let Some(u) = &url.userinfo {
        req.push_str(&format!(
            "Authorization: Basic {}\r\n",
            base64(u.as_bytes())
        ));
    }
    req.push_str("\r\n");
    s.set_write_timeout(Some(timeout)).ok();
    s.write_all(req.as_bytes())
        .map_err(|e| format!("cannot send the request: {e}"))?;
    let mut buf = Vec::with_capacity(16 << 10);
    let mut chunk = [0u8; 16 << 10];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("too slow: no complete answer within {timeout:?}"));
        }
        s.set_read_timeout(Some(left)).ok();
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() > MAX_BODY {
                    return Err(format!("the page is over {} MiB", MAX_BODY >> 20));
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(format!("too slow: no complete answer within {timeout:?}"))
            }
            Err(e) => return Err(format!("reading the answer: {e}")),
        }
    }
    let head_end = find(&buf, b"\r\n\r\n")
        .map(|i| (i, i + 4))
        .or_else(|| find(&buf, b"\n\n").map(|i| (i, i + 2)))
        .ok_or("the answer has no complete HTTP head")?;
    let head = String::from_utf8_lossy(&buf[..head_end.0]);
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| {
            format!(
                "not an HTTP answer: {:?}",
                head.lines().next().unwrap_or("")
            )
        })?;
    let body = &buf[head_end.1..];
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked {
        dechunk(body)?
    } else {
        body.to_vec()
    };
    let body = String::from_utf8_lossy(&body).into_owned();
    match status {
        200 => Ok(body),
        401 | 403 => Err(format!(
            "HTTP {status}: the page refuses yace (allow this address, or put user:password@ in the URL)"
        )),
        404 => Err(format!(
            "HTTP 404: no page at {} (is the status page enabled at this path?)",
            url.path
        )),
        _ => Err(format!("HTTP {status} from {}", url.path)),
    }
}

fn host_header(url: &HttpUrl) -> String {
    let host = if url.host.contains(':') {
        format!("[{}]", url.host)
    } else {
        url.host.clone()
    };
    if url.port == 80 {
        host
    } else {
        format!("{host}:{}", url.port)
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn dechunk(mut b: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(b.len());
    loop {
        let eol = find(b, b"\r\n").ok_or("truncated chunked body")?;
        let size_text = std::str::from_utf8(&b[..eol]).map_err(|_| "bad chunk size")?;
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| format!("bad chunk size {size_text:?}"))?;
        b = &b[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        if b.len() < size {
            return Err("truncated chunked body".into());
        }
        out.extend_from_slice(&b[..size]);
        b = b.get(size + 2..).unwrap_or_default();
    }
}

fn base64(input: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in input.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn serve_once(answer: &'static [u8]) -> HttpUrl {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut b = [0u8; 1024];
            let _ = c.read(&mut b);
            let _ = c.write_all(answer);
        });
        HttpUrl::parse(&format!("127.0.0.1:{port}"), "/s").unwrap()
    }

    #[test]
    fn plain_and_chunked() {
        let u = serve_once(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        assert_eq!(get(&u, Duration::from_secs(2)).unwrap(), "hello");
        let u = serve_once(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n",
        );
        assert_eq!(get(&u, Duration::from_secs(2)).unwrap(), "hello");
        let u = serve_once(b"HTTP/1.1 404 Not Found\r\n\r\n");
        assert!(get(&u, Duration::from_secs(2)).unwrap_err().contains("404"));
    }

    #[test]
    fn a_hanging_page_is_too_slow_not_stuck() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let u = HttpUrl::parse(&format!("127.0.0.1:{port}"), "/").unwrap();
        let t = Instant::now();
        let e = get(&u, Duration::from_millis(300)).unwrap_err();
        assert!(e.contains("too slow"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(2));
        drop(l);
    }

    #[test]
    fn basic_auth() {
        assert_eq!(base64(b"user:pass"), "dXNlcjpwYXNz");
        assert_eq!(base64(b"ab"), "YWI=");
    }
}
