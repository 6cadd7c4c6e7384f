//! The plan's HTTP/1.1 request, converted once into an HTTP/2 header block
//! and body that every stream of a run reuses byte for byte.

use super::hpack::put_field;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// Most header fields a request may have.
const MAX_FIELDS: usize = 256;

/// A request converted once from HTTP/1.1 bytes; reusable for many streams.
#[derive(Debug, Clone)]
pub struct Request {
    /// HPACK block that only uses the static table, so it is the same bytes
    /// for every stream whatever the server's dynamic table holds.
    block: Vec<u8>,
    /// Shared with streams whose body waits for flow-control window.
    body: Arc<[u8]>,
    head: bool,
}

impl Request {
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// HEAD: the response has no body whatever its content-length says.
    pub fn is_head(&self) -> bool {
        self.head
    }

    pub(crate) fn block(&self) -> &[u8] {
        &self.block
    }

    pub(crate) fn shared_body(&self) -> &Arc<[u8]> {
        &self.body
    }
}

/// Why an HTTP/1.1 request cannot be sent over HTTP/2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    /// Not a valid HTTP/1.1 request head.
    Malformed(&'static str),
    Connect,
    NoAuthority,
    /// A Transfer-Encoding the request's body would need decoded.
    TransferEncoding,
    BodyLength {
        declared: u64,
        actual: usize,
    },
    BodyWithoutLength(usize),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::Malformed(why) => write!(f, "the request is not valid HTTP/1.1: {why}"),
            RequestError::Connect => f.write_str("CONNECT requests cannot be sent over HTTP/2"),
            RequestError::NoAuthority => f.write_str(
                "the request has no Host header and no absolute URL, \
                 so there is nothing to send as HTTP/2's :authority",
            ),
            RequestError::TransferEncoding => f.write_str(
                "a request with Transfer-Encoding cannot be sent over HTTP/2 \
                 (HTTP/2 frames the body itself): give the body with a Content-Length",
            ),
            RequestError::BodyLength { declared, actual } => write!(
                f,
                "Content-Length says {declared} bytes but {actual} body bytes follow the head"
            ),
            RequestError::BodyWithoutLength(n) => write!(
                f,
                "{n} body bytes follow the request head without a Content-Length"
            ),
        }
    }
}

impl std::error::Error for RequestError {}

/// Converts an HTTP/1.1 request (request line, headers, optional body with
/// Content-Length) into HTTP/2 (RFC 9113 §8.3.1): pseudo-headers first,
/// names lowercased, connection-specific fields dropped (Connection and the
/// fields it names, Keep-Alive, Proxy-Connection, Transfer-Encoding,
/// Upgrade, Host; TE unless it is "trailers"). `https` sets `:scheme`.
pub fn encode_request(http1: &[u8], https: bool) -> Result<Request, RequestError> {
    let mut headers = vec![httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut req = httparse::Request::new(&mut headers);
    let head_len = match req.parse(http1) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return Err(RequestError::Malformed(
                "the head does not end with an empty line",
            ))
        }
        Err(httparse::Error::TooManyHeaders) => {
            return Err(RequestError::Malformed("more than 256 header fields"))
        }
        Err(_) => return Err(RequestError::Malformed("bad request line or header field")),
    };
    let method = req.method.unwrap_or_default();
    let target = req.path.unwrap_or_default();
    if method.eq_ignore_ascii_case("CONNECT") {
        return Err(RequestError::Connect);
    }

    // Fields the Connection header names are connection-specific too.
    let mut named_by_connection: Vec<String> = Vec::new();
    let mut host: Option<&[u8]> = None;
    let mut length: Option<u64> = None;
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("connection") {
            for t in h.value.split(|&b| b == b',') {
                let t = String::from_utf8_lossy(t.trim_ascii()).to_ascii_lowercase();
                if !t.is_empty() {
                    named_by_connection.push(t);
                }
            }
        } else if h.name.eq_ignore_ascii_case("host") {
            if host.is_some() {
                return Err(RequestError::Malformed("more than one Host header"));
            }
            host = Some(h.value.trim_ascii());
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(RequestError::TransferEncoding);
        } else if h.name.eq_ignore_ascii_case("content-length") {
            let v = crate::http::parse_content_length(h.value)
                .ok_or(RequestError::Malformed("bad Content-Length"))?;
            if length.is_some_and(|l| l != v) {
                return Err(RequestError::Malformed(
                    "conflicting Content-Length headers",
                ));
            }
            length = Some(v);
        }
    }

    let (uri_authority, path) = split_target(target)?;
    let authority = host
        .or(uri_authority)
        .filter(|a| !a.is_empty())
        .ok_or(RequestError::NoAuthority)?;

    let body = &http1[head_len..];
    match length {
        Some(l) if l != body.len() as u64 => {
            return Err(RequestError::BodyLength {
                declared: l,
                actual: body.len(),
            })
        }
        None if !body.is_empty() => return Err(RequestError::BodyWithoutLength(body.len())),
        _ => {}
    }

    let mut block = Vec::with_capacity(128);
    put_field(&mut block, b":method", method.as_bytes());
    put_field(
        &mut block,
        b":scheme",
        if https { b"https" } else { b"http" },
    );
    put_field(&mut block, b":authority", authority);
    put_field(&mut block, b":path", &path);
    for h in req.headers.iter() {
        let name = h.name.to_ascii_lowercase();
        let drop = matches!(
            name.as_str(),
            "connection" | "keep-alive" | "proxy-connection" | "upgrade" | "host"
        ) || (name == "te" && !h.value.trim_ascii().eq_ignore_ascii_case(b"trailers"))
            || named_by_connection.contains(&name);
        if drop {
            continue;
        }
        let value = h.value.trim_ascii();
        if name == "te" {
            put_field(&mut block, b"te", b"trailers");
        } else {
            put_field(&mut block, name.as_bytes(), value);
        }
    }
    Ok(Request {
        block,
        body: Arc::from(body),
        head: method.eq_ignore_ascii_case("HEAD"),
    })
}

/// (authority of an absolute-form target, :path).
type Split<'a> = (Option<&'a [u8]>, Cow<'a, [u8]>);

/// Splits a request target into [`Split`]. Origin-form and `*` are
/// kept as they are; an absolute URL gives its path ("/" when empty).
fn split_target(target: &str) -> Result<Split<'_>, RequestError> {
    if target.starts_with('/') || target == "*" {
        return Ok((None, Cow::Borrowed(target.as_bytes())));
    }
    let Some(i) = target.find("://") else {
        return Err(RequestError::Malformed(
            "the request target is neither a path nor an absolute URL",
        ));
    };
    let rest = &target[i + 3..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    // Userinfo is not part of :authority (RFC 9113 §8.3.1).
    let authority = rest[..end].rsplit('@').next().unwrap_or_default();
    // A fragment is never sent; "http://h?q" has the path "/?q".
    let path = rest[end..].split('#').next().unwrap_or_default();
    let path = match path.as_bytes().first() {
        Some(b'/') => Cow::Borrowed(path.as_bytes()),
        Some(_) => Cow::Owned(format!("/{path}").into_bytes()),
        None => Cow::Borrowed(&b"/"[..]),
    };
    Ok((Some(authority.as_bytes()), path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h2::hpack::Decoder;

    /// Decodes a request's block back into (name, value) pairs.
    fn fields(r: &Request) -> Vec<(String, String)> {
        let mut d = Decoder::new(4096);
        let mut out = Vec::new();
        d.decode(r.block(), true, &mut |f| {
            out.push((
                String::from_utf8(f.name.to_vec()).unwrap(),
                String::from_utf8(f.value.unwrap().to_vec()).unwrap(),
            ))
        })
        .unwrap();
        out
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|&(n, v)| (n.to_owned(), v.to_owned()))
            .collect()
    }

    #[test]
    fn get_with_the_plans_defaults() {
        let r = encode_request(
            b"GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: yace/0.1.0\r\n\
              Accept: */*\r\n\r\n",
            false,
        )
        .unwrap();
        assert_eq!(
            fields(&r),
            pairs(&[
                (":method", "GET"),
                (":scheme", "http"),
                (":authority", "127.0.0.1:8080"),
                (":path", "/a?b=1"),
                ("user-agent", "yace/0.1.0"),
                ("accept", "*/*"),
            ])
        );
        assert!(r.body().is_empty());
        assert!(!r.is_head());
        // Exact static matches are one byte each: GET, http.
        assert_eq!(r.block()[..2], [0x82, 0x86]);
    }

    #[test]
    fn connection_specific_fields_are_dropped() {
        let r = encode_request(
            b"POST / HTTP/1.1\r\nHost: h\r\nConnection: close, X-Hop\r\nKeep-Alive: 5\r\n\
              Proxy-Connection: x\r\nUpgrade: h2c\r\nX-Hop: 1\r\nTE: gzip\r\nX-Keep: 2\r\n\
              Content-Length: 5\r\n\r\nhello",
            true,
        )
        .unwrap();
        assert_eq!(
            fields(&r),
            pairs(&[
                (":method", "POST"),
                (":scheme", "https"),
                (":authority", "h"),
                (":path", "/"),
                ("x-keep", "2"),
                ("content-length", "5"),
            ])
        );
        assert_eq!(r.body(), b"hello");
        let r = encode_request(b"GET / HTTP/1.1\r\nHost: h\r\nTE: Trailers\r\n\r\n", true).unwrap();
        assert_eq!(fields(&r)[4], ("te".to_owned(), "trailers".to_owned()));
    }

    #[test]
    fn absolute_form_gives_path_and_authority() {
        let r = encode_request(b"HEAD http://u:p@example.com:81 HTTP/1.1\r\n\r\n", false).unwrap();
        assert!(r.is_head());
        let f = fields(&r);
        assert_eq!(f[2], (":authority".to_owned(), "example.com:81".to_owned()));
        assert_eq!(f[3], (":path".to_owned(), "/".to_owned()));
        let r = encode_request(
            b"GET http://e.com?q=1 HTTP/1.1\r\nHost: e.com\r\n\r\n",
            false,
        )
        .unwrap();
        assert_eq!(fields(&r)[3], (":path".to_owned(), "/?q=1".to_owned()));
        let r = encode_request(b"GET https://e.com/x/y HTTP/1.1\r\nHost: h\r\n\r\n", true).unwrap();
        let f = fields(&r);
        assert_eq!(f[2].1, "h", "Host wins");
        assert_eq!(f[3].1, "/x/y");
        let r = encode_request(b"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", false).unwrap();
        assert_eq!(fields(&r)[3].1, "*");
    }

    #[test]
    fn refusals_say_why() {
        let cases: [(&[u8], RequestError); 8] = [
            (
                b"GET / HTTP/1.1\r\nHost: h\r\n",
                RequestError::Malformed("the head does not end with an empty line"),
            ),
            (b"GET / HTTP/1.1\r\n\r\n", RequestError::NoAuthority),
            (
                b"CONNECT h:443 HTTP/1.1\r\nHost: h\r\n\r\n",
                RequestError::Connect,
            ),
            (
                b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                RequestError::TransferEncoding,
            ),
            (
                b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nab",
                RequestError::BodyLength {
                    declared: 3,
                    actual: 2,
                },
            ),
            (
                b"POST / HTTP/1.1\r\nHost: h\r\n\r\nab",
                RequestError::BodyWithoutLength(2),
            ),
            (
                b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
                RequestError::Malformed("more than one Host header"),
            ),
            (
                b"GET x HTTP/1.1\r\nHost: a\r\n\r\n",
                RequestError::Malformed("the request target is neither a path nor an absolute URL"),
            ),
        ];
        for (wire, want) in cases {
            let got = encode_request(wire, false).unwrap_err();
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(wire));
            assert!(!got.to_string().is_empty());
        }
        assert!(RequestError::TransferEncoding
            .to_string()
            .contains("Content-Length"));
    }

    #[test]
    fn long_values_and_names_encode_with_multibyte_lengths() {
        let long = "v".repeat(300);
        let wire = format!("GET / HTTP/1.1\r\nHost: h\r\nX-Long: {long}\r\n\r\n");
        let r = encode_request(wire.as_bytes(), false).unwrap();
        assert_eq!(fields(&r)[4], ("x-long".to_owned(), long));
    }
}
