//! An HTTP/1.1 request (as the plan and the flows encode it) turned into a
//! FastCGI request: the CGI/1.1 parameters nginx's `fastcgi_params` sends,
//! the body as `FCGI_STDIN` (design 018). One request at a time per
//! connection, id 1, as nginx and php-fpm use it.

use super::{encode_request, Request};

/// What a request's parameters take besides the request itself.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// `DOCUMENT_ROOT`; `SCRIPT_FILENAME` is it joined with the path.
    pub root: String,
    /// `FCGI_KEEP_CONN`.
    pub keep_conn: bool,
    /// `HTTPS=on` and `REQUEST_SCHEME=https`.
    pub https: bool,
    /// `SERVER_NAME`, `SERVER_ADDR`, `SERVER_PORT`: the target's host, its
    /// address and port (`unix:` and 0 for a unix socket).
    pub server_name: String,
    pub server_addr: String,
    pub server_port: u16,
}

/// The request id every request uses: one at a time per connection.
pub const REQUEST_ID: u16 = 1;

/// Most header fields a request may carry into the parameters.
const MAX_FIELDS: usize = 1024;

/// Hop-by-hop fields and those CGI carries in its own variables: not sent
/// as `HTTP_*` (nginx does the same for the last two).
fn skipped(name: &str) -> bool {
    ["connection", "keep-alive", "content-type", "content-length"]
        .iter()
        .any(|s| name.eq_ignore_ascii_case(s))
}

/// `%XX` escapes decoded (nginx's `$fastcgi_script_name` is the decoded
/// URI); a malformed escape is kept as it is.
fn percent_decode(s: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' && i + 2 < s.len() {
            if let (Some(h), Some(l)) = (hex(s[i + 1]), hex(s[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// Appends the FastCGI request for the HTTP/1.1 request `http` (head and
/// body, framed by Content-Length) to `out`. `Err` names what is wrong
/// with `http` (never with what a server sent).
pub fn encode(http: &[u8], s: &Setup, out: &mut Vec<u8>) -> Result<(), String> {
    let mut fields = vec![httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut req = httparse::Request::new(&mut fields);
    let head_len = match req.parse(http) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err("the request's head is cut short".into()),
        Err(e) => return Err(format!("the request's head is malformed: {e}")),
    };
    let method = req.method.unwrap_or("GET");
    let target = req.path.unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let body = &http[head_len..];
    let script = percent_decode(path.as_bytes());
    let root = s.root.trim_end_matches('/');
    let mut filename = root.as_bytes().to_vec();
    filename.extend_from_slice(&script);
    let field = |name: &str| {
        req.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map_or(&b""[..], |h| h.value)
    };
    let content_length = body.len().to_string();
    let port = s.server_port.to_string();
    let software = concat!("yace/", env!("CARGO_PKG_VERSION"));
    let mut params: Vec<(Vec<u8>, &[u8])> = vec![
        (b"GATEWAY_INTERFACE".to_vec(), b"CGI/1.1"),
        (b"SERVER_SOFTWARE".to_vec(), software.as_bytes()),
        (b"QUERY_STRING".to_vec(), query.as_bytes()),
        (b"REQUEST_METHOD".to_vec(), method.as_bytes()),
        (b"CONTENT_TYPE".to_vec(), field("content-type")),
        (
            b"CONTENT_LENGTH".to_vec(),
            if body.is_empty() && field("content-length").is_empty() {
                b""
            } else {
                content_length.as_bytes()
            },
        ),
        (b"SCRIPT_FILENAME".to_vec(), &filename),
        (b"SCRIPT_NAME".to_vec(), &script),
        (b"REQUEST_URI".to_vec(), target.as_bytes()),
        (b"DOCUMENT_URI".to_vec(), &script),
        (b"DOCUMENT_ROOT".to_vec(), root.as_bytes()),
        (b"SERVER_PROTOCOL".to_vec(), b"HTTP/1.1"),
        (
            b"REQUEST_SCHEME".to_vec(),
            if s.https { b"https" } else { b"http" },
        ),
        // The load comes from this machine (loopback only, by rule).
        (b"REMOTE_ADDR".to_vec(), b"127.0.0.1"),
        (b"REMOTE_PORT".to_vec(), b"0"),
        (b"SERVER_ADDR".to_vec(), s.server_addr.as_bytes()),
        (b"SERVER_PORT".to_vec(), port.as_bytes()),
        (b"SERVER_NAME".to_vec(), s.server_name.as_bytes()),
        // php-cgi's cgi.force_redirect wants it; nginx's fastcgi_params sends it.
        (b"REDIRECT_STATUS".to_vec(), b"200"),
    ];
    if s.https {
        params.push((b"HTTPS".to_vec(), b"on"));
    }
    for h in req.headers.iter().filter(|h| !skipped(h.name)) {
        let mut name = b"HTTP_".to_vec();
        name.extend(h.name.bytes().map(|b| match b {
            b'-' => b'_',
            b => b.to_ascii_uppercase(),
        }));
        params.push((name, h.value));
    }
    let pairs: Vec<(&[u8], &[u8])> = params.iter().map(|(n, v)| (&n[..], *v)).collect();
    encode_request(
        out,
        &Request {
            id: REQUEST_ID,
            keep_conn: s.keep_conn,
            params: &pairs,
            stdin: body,
        },
    )
    .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::super::{decode_pairs, Item, RecordReader, RecordType};
    use super::*;

    /// The parameters and stdin of an encoded request, read back.
    fn decode(wire: &[u8]) -> (u8, Vec<(String, String)>, Vec<u8>) {
        let mut r = RecordReader::default();
        let (mut kind, mut flags) = (0, 0);
        let (mut params, mut stdin, mut begin) = (Vec::new(), Vec::new(), Vec::new());
        let mut pos = 0;
        while pos < wire.len() {
            let (n, item) = r.next(&wire[pos..]).unwrap();
            pos += n;
            match item {
                Some(Item::Header(h)) => kind = h.kind,
                Some(Item::Content(c)) if kind == RecordType::Params as u8 => {
                    params.extend_from_slice(c)
                }
                Some(Item::Content(c)) if kind == RecordType::Stdin as u8 => {
                    stdin.extend_from_slice(c)
                }
                Some(Item::Content(c)) => begin.extend_from_slice(c),
                _ => {}
            }
        }
        flags |= begin[2];
        let pairs = decode_pairs(&params)
            .unwrap()
            .into_iter()
            .map(|(n, v)| {
                (
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                )
            })
            .collect();
        (flags, pairs, stdin)
    }

    fn get<'a>(p: &'a [(String, String)], name: &str) -> Option<&'a str> {
        p.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    #[test]
    fn a_post_becomes_nginx_style_params_and_stdin() {
        let http = b"POST /app/echo%20me.php?a=1&b=2 HTTP/1.1\r\nHost: localhost\r\n\
                     Content-Type: text/plain\r\nContent-Length: 5\r\nX-Trace-Id: 7\r\n\
                     Connection: close\r\n\r\nhello";
        let s = Setup {
            root: "/srv/www/".into(),
            keep_conn: true,
            https: true,
            server_name: "localhost".into(),
            server_addr: "127.0.0.1".into(),
            server_port: 9000,
        };
        let mut out = Vec::new();
        encode(http, &s, &mut out).unwrap();
        let (flags, p, stdin) = decode(&out);
        assert_eq!(flags, super::super::KEEP_CONN);
        assert_eq!(stdin, b"hello");
        for (n, v) in [
            ("REQUEST_METHOD", "POST"),
            ("QUERY_STRING", "a=1&b=2"),
            ("SCRIPT_NAME", "/app/echo me.php"),
            ("SCRIPT_FILENAME", "/srv/www/app/echo me.php"),
            ("DOCUMENT_ROOT", "/srv/www"),
            ("REQUEST_URI", "/app/echo%20me.php?a=1&b=2"),
            ("CONTENT_TYPE", "text/plain"),
            ("CONTENT_LENGTH", "5"),
            ("SERVER_PROTOCOL", "HTTP/1.1"),
            ("GATEWAY_INTERFACE", "CGI/1.1"),
            ("SERVER_PORT", "9000"),
            ("SERVER_NAME", "localhost"),
            ("HTTPS", "on"),
            ("HTTP_HOST", "localhost"),
            ("HTTP_X_TRACE_ID", "7"),
        ] {
            assert_eq!(get(&p, n), Some(v), "{n} in {p:?}");
        }
        // Hop-by-hop and CGI's own fields are not HTTP_*.
        for n in [
            "HTTP_CONNECTION",
            "HTTP_CONTENT_TYPE",
            "HTTP_CONTENT_LENGTH",
        ] {
            assert_eq!(get(&p, n), None, "{n}");
        }
    }

    #[test]
    fn a_get_has_no_length_no_https_and_a_connection_per_request() {
        let mut out = Vec::new();
        encode(
            b"GET / HTTP/1.1\r\nHost: h\r\n\r\n",
            &Setup::default(),
            &mut out,
        )
        .unwrap();
        let (flags, p, stdin) = decode(&out);
        assert_eq!(flags, 0);
        assert!(stdin.is_empty());
        assert_eq!(get(&p, "CONTENT_LENGTH"), Some(""));
        assert_eq!(get(&p, "QUERY_STRING"), Some(""));
        assert_eq!(get(&p, "SCRIPT_FILENAME"), Some("/"));
        assert_eq!(get(&p, "HTTPS"), None);
        assert!(encode(b"GET / HTTP/1.1\r\nHost", &Setup::default(), &mut out).is_err());
        assert!(encode(b"\x01\x02 nonsense\r\n\r\n", &Setup::default(), &mut out).is_err());
    }

    #[test]
    fn percent_decoding_keeps_malformed_escapes() {
        assert_eq!(percent_decode(b"/a%20b%2"), b"/a b%2");
        assert_eq!(percent_decode(b"%zz%41"), b"%zzA");
        assert_eq!(percent_decode(b"%"), b"%");
    }
}
