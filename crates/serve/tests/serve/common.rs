//! A deliberately small, strict HTTP/1.1 client over `std::net::TcpStream`
//! for checking exactly what the server puts on the wire.

// Shared by the topic modules.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use yace_serve::{Config, Server};

pub fn start() -> Server {
    Server::start(Config::default()).expect("server starts")
}

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Sizes of the chunks, when the body was chunked (last one excluded).
    pub chunks: Option<Vec<usize>>,
    /// Bytes this response took on the wire.
    pub wire_len: usize,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        let mut found = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name));
        let first = found.next().map(|(_, v)| v.as_str());
        assert!(found.next().is_none(), "header {name} repeated");
        first
    }

    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("utf-8 body")
    }
}

pub struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
    pos: usize,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).expect("connect");
        // A server bug should fail the test, not hang it.
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        Client {
            stream,
            buf: Vec::new(),
            pos: 0,
        }
    }

    pub fn send(&mut self, bytes: impl AsRef<[u8]>) {
        self.stream.write_all(bytes.as_ref()).expect("send");
    }

    pub fn get(&mut self, path: &str) -> Response {
        self.send(format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n"));
        self.response()
    }

    /// Reads one response to a non-HEAD request.
    pub fn response(&mut self) -> Response {
        self.read_response(false)
    }

    pub fn head_response(&mut self) -> Response {
        self.read_response(true)
    }

    /// True when the server has closed the connection (and sent nothing more).
    pub fn closed(&mut self) -> bool {
        if self.pos < self.buf.len() {
            return false;
        }
        let mut byte = [0u8; 1];
        match self.stream.read(&mut byte) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) if e.kind() == ErrorKind::ConnectionReset => true,
            Err(e) => panic!("waiting for close: {e}"),
        }
    }

    fn more(&mut self) {
        let mut chunk = [0u8; 64 * 1024];
        let n = self.stream.read(&mut chunk).expect("read");
        assert!(n > 0, "connection closed mid-response");
        self.buf.extend_from_slice(&chunk[..n]);
    }

    fn line(&mut self) -> String {
        loop {
            if let Some(i) = self.buf[self.pos..].windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8(self.buf[self.pos..self.pos + i].to_vec()).unwrap();
                self.pos += i + 2;
                return line;
            }
            self.more();
        }
    }

    fn exact(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() - self.pos < n {
            self.more();
        }
        let out = self.buf[self.pos..self.pos + n].to_vec();
        self.pos += n;
        out
    }

    fn read_response(&mut self, head_request: bool) -> Response {
        let start = self.pos;
        let status_line = self.line();
        let mut parts = status_line.splitn(3, ' ');
        assert_eq!(
            parts.next(),
            Some("HTTP/1.1"),
            "status line {status_line:?}"
        );
        let status: u16 = parts.next().unwrap().parse().unwrap();
        assert!(
            parts.next().is_some_and(|r| !r.is_empty()),
            "reason in {status_line:?}"
        );
        let mut headers = Vec::new();
        loop {
            let line = self.line();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').expect("header has a colon");
            headers.push((name.to_owned(), value.trim().to_owned()));
        }
        let mut resp = Response {
            status,
            headers,
            body: Vec::new(),
            chunks: None,
            wire_len: 0,
        };
        let chunked = resp.header("transfer-encoding").map(str::to_owned);
        let length = resp
            .header("content-length")
            .map(|v| v.parse::<usize>().unwrap());
        if chunked.is_some() {
            assert!(
                length.is_none(),
                "both Content-Length and Transfer-Encoding"
            );
        }
        if !head_request && !matches!(status, 204 | 304) {
            if let Some(te) = chunked {
                assert_eq!(te, "chunked");
                let mut sizes = Vec::new();
                loop {
                    let size_line = self.line();
                    let size = usize::from_str_radix(&size_line, 16)
                        .unwrap_or_else(|_| panic!("chunk size line {size_line:?}"));
                    if size == 0 {
                        assert_eq!(self.line(), "", "no trailers expected");
                        break;
                    }
                    sizes.push(size);
                    let data = self.exact(size);
                    resp.body.extend_from_slice(&data);
                    assert_eq!(self.exact(2), b"\r\n", "chunk data ends with CRLF");
                }
                resp.chunks = Some(sizes);
            } else {
                let n = length.expect("every non-chunked response has a Content-Length");
                resp.body = self.exact(n);
            }
        }
        resp.wire_len = self.pos - start;
        // Keep the buffer from growing across a long test.
        self.buf.drain(..self.pos);
        self.pos = 0;
        resp
    }
}
