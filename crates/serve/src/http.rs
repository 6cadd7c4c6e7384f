//! HTTP/1.x wire format: request heads in (via `httparse`), request-body
//! framing (including an incremental chunked decoder) and response heads out.

use crate::ask::{self, Target};

/// Largest request head accepted; beyond it the answer is 431.
pub(crate) const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 64;

pub(crate) const SERVER_HEADER: &str = concat!("Server: yace-target/", env!("CARGO_PKG_VERSION"));

/// How the request body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    None,
    Length(u64),
    Chunked,
}

/// The parts of a request head the server acts on, copied out of the read
/// buffer so that the buffer can be reused while the request is answered.
#[derive(Debug)]
pub(crate) struct Head {
    pub(crate) is_head: bool,
    pub(crate) http10: bool,
    pub(crate) keep_alive: bool,
    pub(crate) framing: Framing,
    pub(crate) expect_continue: bool,
    pub(crate) target: Target,
    /// `?split=N` on any route: write the response N bytes at a time.
    pub(crate) split: Option<usize>,
    /// `YACESESSID` cookie; only looked for on `/session`.
    pub(crate) session: Option<String>,
    /// Request `Content-Type`; only kept for `/echo`.
    pub(crate) content_type: Option<String>,
}

/// Why a head was refused; both end the connection, since after a bad head
/// there is no telling where the next request starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadError {
    /// 400
    Bad,
    /// 431: too many header fields (the size limit is enforced by the caller,
    /// which knows how much it has buffered).
    TooLarge,
}

pub(crate) const SESSION_COOKIE: &str = "YACESESSID";

/// Parses one request head from the front of `buf`. `Ok(None)` means the
/// head is not complete yet.
pub(crate) fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, HeadError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooLarge),
        Err(_) => return Err(HeadError::Bad),
    };
    let (Some(method), Some(path), Some(version)) = (req.method, req.path, req.version) else {
        return Err(HeadError::Bad);
    };
    let mut target = Target::parse(path);
    let split = ask::split(path).unwrap_or_else(|()| {
        target = Target::Invalid(
            target.route(),
            "split must be a whole number from 1 to 65536\n",
        );
        None
    });
    let http10 = version == 0;
    let mut head = Head {
        is_head: method == "HEAD",
        http10,
        keep_alive: !http10,
        framing: Framing::None,
        expect_continue: false,
        session: None,
        content_type: None,
        target,
        split,
    };
    let mut content_length: Option<u64> = None;
    let mut chunked = false;
    for h in req.headers.iter() {
        let name = h.name;
        if name.eq_ignore_ascii_case("connection") {
            for token in split_tokens(h.value) {
                if token.eq_ignore_ascii_case(b"close") {
                    head.keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                    head.keep_alive = true;
                }
            }
        } else if name.eq_ignore_ascii_case("content-length") {
            let n = parse_content_length(h.value).ok_or(HeadError::Bad)?;
            // Differing lengths are a request-smuggling shape: refuse them.
            if content_length.is_some_and(|prev| prev != n) {
                return Err(HeadError::Bad);
            }
            content_length = Some(n);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            // Only a final `chunked` lets us find the end of the body.
            chunked = split_tokens(h.value)
                .last()
                .is_some_and(|t| t.eq_ignore_ascii_case(b"chunked"));
            if !chunked {
                return Err(HeadError::Bad);
            }
        } else if name.eq_ignore_ascii_case("expect") {
            head.expect_continue = h.value.trim_ascii().eq_ignore_ascii_case(b"100-continue");
        } else if name.eq_ignore_ascii_case("cookie") && head.target.wants_session() {
            if let Some(id) = find_cookie(h.value, SESSION_COOKIE) {
                head.session = Some(id.to_owned());
            }
        } else if name.eq_ignore_ascii_case("content-type") && head.target.wants_content_type() {
            head.content_type = std::str::from_utf8(h.value).ok().map(str::to_owned);
        }
    }
    head.framing = match (chunked, content_length) {
        (true, cl) => {
            // RFC 9112 §6.1: chunked wins over Content-Length, but such a
            // message is suspect, so the connection is not reused after it.
            if cl.is_some() {
                head.keep_alive = false;
            }
            Framing::Chunked
        }
        (false, Some(0) | None) => Framing::None,
        (false, Some(n)) => Framing::Length(n),
    };
    Ok(Some((head, len)))
}

fn split_tokens(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty())
}

fn parse_content_length(value: &[u8]) -> Option<u64> {
    let v = value.trim_ascii();
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

/// Finds `name`'s value in a `Cookie` header. Values that could not have come
/// from a `Set-Cookie` of ours are ignored rather than trusted as map keys.
pub(crate) fn find_cookie<'h>(header: &'h [u8], name: &str) -> Option<&'h str> {
    header.split(|&b| b == b';').find_map(|pair| {
        let pair = pair.trim_ascii();
        let value = pair.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
        let valid = !value.is_empty()
            && value.len() <= 128
            && value
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b','));
        // All ASCII once valid, so it is UTF-8.
        valid.then(|| std::str::from_utf8(value).ok()).flatten()
    })
}

/// Incremental decoder for a chunked request body. It is fed whatever bytes
/// have arrived and reports how many it consumed, so a body can straddle any
/// number of reads without being buffered whole.
#[derive(Debug, Default)]
pub(crate) struct ChunkedDecoder {
    state: ChunkState,
    size: u64,
    digits: u8,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    #[default]
    Size,
    Extension,
    SizeLf,
    Data,
    DataCr,
    DataLf,
    TrailerStart,
    TrailerLine,
    EndLf,
    Done,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BadChunk;

impl ChunkedDecoder {
    pub(crate) fn is_done(&self) -> bool {
        self.state == ChunkState::Done
    }

    /// Consumes bytes from `input` up to the end of the body at most, passing
    /// chunk data to `out` when given. Returns how many bytes were consumed.
    pub(crate) fn feed(
        &mut self,
        input: &[u8],
        mut out: Option<&mut Vec<u8>>,
    ) -> Result<usize, BadChunk> {
        use ChunkState::*;
        let mut i = 0;
        while i < input.len() && self.state != Done {
            let b = input[i];
            match self.state {
                Size => match b {
                    b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                        // 15 hex digits (2^60) is far beyond any real chunk.
                        if self.digits >= 15 {
                            return Err(BadChunk);
                        }
                        self.digits += 1;
                        self.size =
                            self.size * 16 + u64::from((b as char).to_digit(16).unwrap_or(0));
                    }
                    b';' | b' ' | b'\t' if self.digits > 0 => self.state = Extension,
                    b'\r' if self.digits > 0 => self.state = SizeLf,
                    b'\n' if self.digits > 0 => self.end_size_line(),
                    _ => return Err(BadChunk),
                },
                Extension => match b {
                    b'\r' => self.state = SizeLf,
                    b'\n' => self.end_size_line(),
                    _ => {}
                },
                SizeLf if b == b'\n' => self.end_size_line(),
                Data => {
                    let n = (input.len() - i).min(usize::try_from(self.size).unwrap_or(usize::MAX));
                    if let Some(out) = out.as_deref_mut() {
                        out.extend_from_slice(&input[i..i + n]);
                    }
                    self.size -= n as u64;
                    i += n;
                    if self.size == 0 {
                        self.state = DataCr;
                    }
                    continue;
                }
                DataCr if b == b'\r' => self.state = DataLf,
                DataCr | DataLf if b == b'\n' => {
                    self.state = Size;
                    self.digits = 0;
                }
                TrailerStart => match b {
                    b'\r' => self.state = EndLf,
                    b'\n' => self.state = Done,
                    _ => self.state = TrailerLine,
                },
                TrailerLine if b == b'\n' => self.state = TrailerStart,
                TrailerLine => {}
                EndLf if b == b'\n' => self.state = Done,
                SizeLf | DataCr | DataLf | EndLf | Done => return Err(BadChunk),
            }
            i += 1;
        }
        Ok(i)
    }

    fn end_size_line(&mut self) {
        self.state = if self.size == 0 {
            ChunkState::TrailerStart
        } else {
            ChunkState::Data
        };
    }
}

/// How a response body is delimited.
#[derive(Debug, Clone, Copy)]
pub(crate) enum BodyLen {
    Length(u64),
    Chunked,
    /// 204 and 304 carry neither a body nor a Content-Length.
    Bodiless,
}

/// Which `Connection` header a response carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnHeader {
    /// HTTP/1.1 keep-alive is the default and needs no header.
    Omit,
    Close,
    /// An HTTP/1.0 client that asked for keep-alive must be told it got it.
    KeepAlive,
}

impl ConnHeader {
    pub(crate) fn line(self) -> &'static [u8] {
        match self {
            ConnHeader::Omit => b"",
            ConnHeader::Close => b"Connection: close\r\n",
            ConnHeader::KeepAlive => b"Connection: keep-alive\r\n",
        }
    }
}

/// Appends a response head (status line, headers, blank line) to `out`.
pub(crate) fn push_head(
    out: &mut Vec<u8>,
    status: u16,
    content_type: &str,
    len: BodyLen,
    conn: ConnHeader,
    extra: &[(&str, &str)],
) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_u64(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(SERVER_HEADER.as_bytes());
    out.extend_from_slice(b"\r\n");
    if !matches!(len, BodyLen::Bodiless) {
        out.extend_from_slice(b"Content-Type: ");
        out.extend_from_slice(content_type.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    match len {
        BodyLen::Length(n) => {
            out.extend_from_slice(b"Content-Length: ");
            push_u64(out, n);
            out.extend_from_slice(b"\r\n");
        }
        BodyLen::Chunked => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
        BodyLen::Bodiless => {}
    }
    out.extend_from_slice(conn.line());
    for (name, value) in extra {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// Decimal without going through `fmt`, which matters on the hot paths.
pub(crate) fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

pub(crate) fn push_hex(out: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 16];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b"0123456789abcdef"[(n & 15) as usize];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

pub(crate) fn reason(status: u16) -> &'static str {
    known_reason(status).unwrap_or(match status {
        200..=299 => "Success",
        300..=399 => "Redirection",
        400..=499 => "Client Error",
        _ => "Server Error",
    })
}

fn known_reason(status: u16) -> Option<&'static str> {
    Some(match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        418 => "I'm a teapot",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        507 => "Insufficient Storage",
        508 => "Loop Detected",
        511 => "Network Authentication Required",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Head {
        let (head, len) = parse_head(s.as_bytes()).unwrap().unwrap();
        assert_eq!(len, s.len());
        head
    }

    #[test]
    fn keep_alive_follows_version_and_connection_header() {
        assert!(parse("GET / HTTP/1.1\r\n\r\n").keep_alive);
        assert!(!parse("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n").keep_alive);
        assert!(!parse("GET / HTTP/1.1\r\nConnection: upgrade, close\r\n\r\n").keep_alive);
        assert!(!parse("GET / HTTP/1.0\r\n\r\n").keep_alive);
        let h = parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        assert!(h.keep_alive && h.http10);
    }

    #[test]
    fn partial_and_bad_heads() {
        assert!(parse_head(b"GET / HTTP/1.1\r\nHost: x\r\n")
            .unwrap()
            .is_none());
        assert!(parse_head(b"GET / HTTP/1.1\r\nHost").unwrap().is_none());
        assert_eq!(
            parse_head(b"\x01\x02 / HTTP/1.1\r\n\r\n").unwrap_err(),
            HeadError::Bad
        );
        let many: String = (0..100).map(|i| format!("X-{i}: y\r\n")).collect();
        let req = format!("GET / HTTP/1.1\r\n{many}\r\n");
        assert_eq!(parse_head(req.as_bytes()).unwrap_err(), HeadError::TooLarge);
    }

    #[test]
    fn body_framing() {
        assert_eq!(parse("GET / HTTP/1.1\r\n\r\n").framing, Framing::None);
        assert_eq!(
            parse("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").framing,
            Framing::None
        );
        assert_eq!(
            parse("POST / HTTP/1.1\r\ncontent-length:  42 \r\n\r\n").framing,
            Framing::Length(42)
        );
        let h = parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert_eq!(h.framing, Framing::Chunked);
        assert!(h.keep_alive);
        let h = parse("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert_eq!(h.framing, Framing::Chunked);
        assert!(!h.keep_alive);
        for bad in [
            "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
        ] {
            assert_eq!(
                parse_head(bad.as_bytes()).unwrap_err(),
                HeadError::Bad,
                "{bad}"
            );
        }
    }

    #[test]
    fn session_cookie_only_parsed_for_session_route() {
        let h = parse("GET /session HTTP/1.1\r\nCookie: a=b; YACESESSID=abc123; c=d\r\n\r\n");
        assert_eq!(h.session.as_deref(), Some("abc123"));
        let h = parse("GET / HTTP/1.1\r\nCookie: YACESESSID=abc123\r\n\r\n");
        assert_eq!(h.session, None);
        let h = parse("GET /session HTTP/1.1\r\nCookie: YACESESSID=a/b\r\n\r\n");
        assert_eq!(h.session, None);
        let h = parse("GET /session HTTP/1.1\r\nCookie: XYACESESSID=abc\r\n\r\n");
        assert_eq!(h.session, None);
    }

    fn decode_in_pieces(body: &[u8], piece: usize) -> Result<(Vec<u8>, usize), BadChunk> {
        let mut d = ChunkedDecoder::default();
        let mut out = Vec::new();
        let mut used = 0;
        for part in body.chunks(piece) {
            let n = d.feed(part, Some(&mut out))?;
            used += n;
            if d.is_done() {
                return Ok((out, used));
            }
            assert_eq!(n, part.len());
        }
        panic!("decoder not done after {used} bytes");
    }

    #[test]
    fn chunked_decoding_across_any_split() {
        let body = b"5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\nNEXT";
        for piece in 1..body.len() {
            let (out, used) = decode_in_pieces(body, piece).unwrap();
            assert_eq!(out, b"hello 0123456789", "piece {piece}");
            assert_eq!(used, body.len() - 4, "piece {piece}");
        }
    }

    #[test]
    fn chunked_decoding_rejects_garbage() {
        for bad in [
            &b"x\r\n"[..],
            b"\r\n",
            b"5\r\nhelloX",
            b"5\rX",
            b"1000000000000000\r\n",
        ] {
            let mut d = ChunkedDecoder::default();
            assert_eq!(
                d.feed(bad, None),
                Err(BadChunk),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn response_head_encoding() {
        let mut out = Vec::new();
        push_head(
            &mut out,
            503,
            "text/plain",
            BodyLen::Length(20),
            ConnHeader::Close,
            &[("A", "b")],
        );
        let s = String::from_utf8(out).unwrap();
        assert_eq!(
            s,
            format!(
                "HTTP/1.1 503 Service Unavailable\r\n{SERVER_HEADER}\r\nContent-Type: text/plain\r\n\
                 Content-Length: 20\r\nConnection: close\r\nA: b\r\n\r\n"
            )
        );
        let mut out = Vec::new();
        push_u64(&mut out, 0);
        out.push(b' ');
        push_u64(&mut out, u64::MAX);
        out.push(b' ');
        push_hex(&mut out, 0);
        out.push(b' ');
        push_hex(&mut out, 0xabc10);
        assert_eq!(out, b"0 18446744073709551615 0 abc10");
    }
}
