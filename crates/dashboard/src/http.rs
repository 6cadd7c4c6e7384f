//! The little HTTP/1.1 the page needs: a request's head in, a response
//! head out. Every response closes its connection (`Connection: close`):
//! a page, a stream, or a refusal.

/// Most bytes of a request head.
pub const MAX_HEAD: usize = 8 * 1024;

/// What a request asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub query: String,
    pub host: Option<String>,
    /// `Origin`, `Sec-Fetch-Site` and `X-Yace-Token` (a control request's).
    pub origin: Option<String>,
    pub fetch_site: Option<String>,
    pub token: Option<Vec<u8>>,
    /// Where the body starts in the bytes read, and its length: `None`
    /// when not said, `Err` when not readable (or sent chunked).
    pub body_at: usize,
    pub length: Result<Option<usize>, ()>,
}

/// A request head read so far.
#[derive(Debug, PartialEq, Eq)]
pub enum Head {
    /// More bytes are needed.
    Partial,
    Done(Request),
    /// Not HTTP, or too long ([`MAX_HEAD`]): the status to answer.
    Refused(u16),
}

/// Reads a request head from `buf`.
pub fn parse(buf: &[u8]) -> Head {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(buf) {
        Ok(httparse::Status::Complete(body_at)) => {
            let target = req.path.unwrap_or("/");
            let (path, query) = target.split_once('?').unwrap_or((target, ""));
            let header = |name: &str| {
                req.headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case(name))
                    .map(|h| h.value)
            };
            let text = |name: &str| {
                header(name)
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .map(|v| v.trim().to_string())
            };
            let length = match (text("content-length"), header("transfer-encoding")) {
                (_, Some(_)) => Err(()),
                (None, None) => Ok(None),
                (Some(n), None) => n.parse().map(Some).map_err(|_| ()),
            };
            Head::Done(Request {
                method: req.method.unwrap_or("").to_string(),
                path: path.to_string(),
                query: query.to_string(),
                host: text("host"),
                origin: text("origin"),
                fetch_site: text("sec-fetch-site"),
                token: header(crate::control::TOKEN_HEADER).map(|v| v.trim_ascii().to_vec()),
                body_at,
                length,
            })
        }
        Ok(httparse::Status::Partial) if buf.len() >= MAX_HEAD => Head::Refused(431),
        Ok(httparse::Status::Partial) => Head::Partial,
        Err(httparse::Error::TooManyHeaders) => Head::Refused(431),
        Err(_) => Head::Refused(400),
    }
}

/// The value of `name` in a query string, %-decoded.
pub fn query_param(query: &str, name: &str) -> Option<Vec<u8>> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| percent_decode(v))
}

fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// A response head (and body): `Connection: close`, nothing cached, no
/// referrer sent on (the page's address may hold its token).
pub fn response(status: u16, content_type: &str, extra: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = head(status, content_type, extra);
    // `head` ends with the blank line; a body has its length before it.
    out.truncate(out.len() - 2);
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
    out
}

/// A response head with no length: a stream, which lasts until the
/// connection closes.
pub fn head(status: u16, content_type: &str, extra: &[(&str, &str)]) -> Vec<u8> {
    let mut h = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nCache-Control: no-store\r\n\
         Connection: close\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n",
        reason(status)
    );
    for (k, v) in extra {
        h.push_str(&format!("{k}: {v}\r\n"));
    }
    h.push_str("\r\n");
    h.into_bytes()
}

/// A short answer in plain text.
pub fn text(status: u16, body: &str) -> Vec<u8> {
    response(status, "text/plain; charset=utf-8", &[], body.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_read_whole_or_refused() {
        let done = parse(b"GET /events?token=a%2Fb&x=1 HTTP/1.1\r\nHost: 127.0.0.1:8089\r\n\r\n");
        let Head::Done(r) = done else {
            panic!("{done:?}")
        };
        assert_eq!(r.method, "GET");
        assert_eq!(r.path, "/events");
        assert_eq!(r.host.as_deref(), Some("127.0.0.1:8089"));
        assert_eq!((r.origin, r.token, r.length), (None, None, Ok(None)));
        assert_eq!(query_param(&r.query, "token").unwrap(), b"a/b");
        assert_eq!(query_param(&r.query, "x").unwrap(), b"1");
        assert_eq!(query_param(&r.query, "nope"), None);
        assert_eq!(parse(b"GET / HTTP/1.1\r\nHost: x"), Head::Partial);
        assert_eq!(parse(b"\x16\x03\x01 hello"), Head::Refused(400));
        let post = b"POST /control HTTP/1.1\r\nHost: h:1\r\nOrigin: http://h:1\r\n\
                     X-Yace-Token: abc \r\nSec-Fetch-Site: same-origin\r\n\
                     Content-Length: 6\r\n\r\nfaster";
        let Head::Done(p) = parse(post) else { panic!() };
        assert_eq!(p.origin.as_deref(), Some("http://h:1"));
        assert_eq!(p.fetch_site.as_deref(), Some("same-origin"));
        assert_eq!(p.token.as_deref(), Some(&b"abc"[..]));
        assert_eq!(p.length, Ok(Some(6)));
        assert_eq!(&post[p.body_at..], b"faster");
        let chunked = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
        let Head::Done(p) = parse(chunked) else {
            panic!()
        };
        assert_eq!(p.length, Err(()));
        let mut long = b"GET / HTTP/1.1\r\nX: ".to_vec();
        long.resize(MAX_HEAD + 1, b'a');
        assert_eq!(parse(&long), Head::Refused(431));
    }

    #[test]
    fn percent_decoding_keeps_what_is_not_an_escape() {
        assert_eq!(percent_decode("a%41%zz%4"), b"aA%zz%4");
        assert_eq!(percent_decode("%"), b"%");
        assert_eq!(percent_decode("%4"), b"%4");
        assert_eq!(percent_decode("%41"), b"A");
    }

    #[test]
    fn responses_say_their_length_and_close() {
        let r = String::from_utf8(text(403, "no")).unwrap();
        assert!(r.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{r}");
        assert!(r.contains("Connection: close\r\n") && r.contains("Referrer-Policy: no-referrer"));
        assert!(r.ends_with("Content-Length: 2\r\n\r\nno"), "{r}");
        let h = String::from_utf8(head(200, "text/event-stream", &[("X-A", "1")])).unwrap();
        assert!(
            h.ends_with("X-A: 1\r\n\r\n") && !h.contains("Content-Length"),
            "{h}"
        );
    }
}
