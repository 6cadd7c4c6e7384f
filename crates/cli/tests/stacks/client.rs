//! A strict little HTTP/1.1 client on std's TcpStream: keeps the byte
//! counts the servers log (head, body as framed on the wire) next to the
//! decoded body.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
    /// Bytes of status line + headers + blank line.
    pub head_len: u64,
    /// Bytes of the body as sent (chunk framing included).
    pub wire_body_len: u64,
    /// From writing the request to the end of the response.
    pub elapsed: Duration,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One connection; requests go one after another (keep-alive).
#[derive(Debug)]
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    /// Connects to the host:port of `url` (`http://127.0.0.1:PORT/...`).
    pub fn open(url: &str) -> Conn {
        let rest = url.strip_prefix("http://").expect("http:// URL");
        let authority = rest.split('/').next().unwrap();
        let stream =
            TcpStream::connect(authority).unwrap_or_else(|e| panic!("connect {authority}: {e}"));
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        stream
            .set_write_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        Conn {
            stream,
            buf: Vec::new(),
        }
    }

    /// `GET path` with `headers`; `close` asks the server to close after it.
    pub fn get(&mut self, path: &str, headers: &[(&str, &str)], close: bool) -> Response {
        let mut req =
            format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: yace-stacks-test\r\n");
        for (n, v) in headers {
            req += &format!("{n}: {v}\r\n");
        }
        req += if close {
            "Connection: close\r\n\r\n"
        } else {
            "\r\n"
        };
        let start = Instant::now();
        self.stream
            .write_all(req.as_bytes())
            .unwrap_or_else(|e| panic!("send GET {path}: {e}"));
        let mut resp = self
            .read_response()
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        resp.elapsed = start.elapsed();
        resp
    }

    /// Whether the server closed the connection with nothing more to send.
    pub fn closed_by_server(&mut self) -> bool {
        self.buf.is_empty() && matches!(self.fill(), Ok(false))
    }

    /// Reads more bytes into the buffer; false at EOF.
    fn fill(&mut self) -> Result<bool, String> {
        let mut chunk = [0u8; 16384];
        let n = self
            .stream
            .read(&mut chunk)
            .map_err(|e| format!("read: {e}"))?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n > 0)
    }

    /// The next CRLF-terminated line (without CRLF) and its length on the wire.
    fn line(&mut self) -> Result<(String, u64), String> {
        loop {
            if let Some(at) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.buf[..at]).into_owned();
                self.buf.drain(..at + 2);
                return Ok((line, at as u64 + 2));
            }
            if !self.fill()? {
                return Err("connection closed mid-line".into());
            }
        }
    }

    fn take(&mut self, n: usize) -> Result<Vec<u8>, String> {
        while self.buf.len() < n {
            if !self.fill()? {
                return Err(format!(
                    "connection closed: {} of {n} bytes",
                    self.buf.len()
                ));
            }
        }
        Ok(self.buf.drain(..n).collect())
    }

    fn read_response(&mut self) -> Result<Response, String> {
        let (status_line, mut head_len) = self.line()?;
        let mut parts = status_line.splitn(3, ' ');
        let version = parts.next().unwrap_or("");
        if !version.starts_with("HTTP/1.") {
            return Err(format!("bad status line {status_line:?}"));
        }
        let status: u16 = parts
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad status line {status_line:?}"))?;
        let mut headers = Vec::new();
        loop {
            let (line, n) = self.line()?;
            head_len += n;
            if line.is_empty() {
                break;
            }
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| format!("bad header {line:?}"))?;
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
        let mut resp = Response {
            status,
            headers,
            body: Vec::new(),
            head_len,
            wire_body_len: 0,
            elapsed: Duration::ZERO,
        };
        let chunked = resp
            .header("Transfer-Encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
        if status == 204 || status == 304 || (100..200).contains(&status) {
            // no body
        } else if chunked {
            loop {
                let (size_line, n) = self.line()?;
                resp.wire_body_len += n;
                let hex = size_line.split(';').next().unwrap().trim();
                let size = usize::from_str_radix(hex, 16)
                    .map_err(|_| format!("bad chunk size {size_line:?}"))?;
                if size == 0 {
                    loop {
                        let (trailer, n) = self.line()?;
                        resp.wire_body_len += n;
                        if trailer.is_empty() {
                            break;
                        }
                    }
                    break;
                }
                let data = self.take(size + 2)?;
                if &data[size..] != b"\r\n" {
                    return Err("chunk not followed by CRLF".into());
                }
                resp.body.extend_from_slice(&data[..size]);
                resp.wire_body_len += size as u64 + 2;
            }
        } else if let Some(len) = resp.header("Content-Length") {
            let len: usize = len
                .parse()
                .map_err(|_| format!("bad Content-Length {len:?}"))?;
            resp.body = self.take(len)?;
            resp.wire_body_len = len as u64;
        } else {
            while self.fill()? {}
            resp.body = std::mem::take(&mut self.buf);
            resp.wire_body_len = resp.body.len() as u64;
        }
        Ok(resp)
    }
}

/// A fresh connection, one request with `Connection: close`.
pub fn get_once(url_base: &str, path: &str, headers: &[(&str, &str)]) -> Response {
    Conn::open(url_base).get(path, headers, true)
}
