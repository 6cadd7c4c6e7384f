//! A captured response, typed: what a flow that asked for the response
//! (a scenario's extractions and checks, a user's cookie jar) sees. The
//! engine builds it once, whatever the transport; flows never parse bytes.

/// The status, the header fields in order (names as sent), and the body
/// with any chunked coding removed, at most what the engine kept (1 MiB).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Captured {
    /// The first value of a header field, by name without case.
    pub fn header<'s>(&'s self, name: &str) -> Option<&'s str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every value of a header field, in order.
    pub fn all<'s, 'n: 's>(&'s self, name: &'n str) -> impl Iterator<Item = &'s str> + 's {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// From a response as it came on an HTTP/1.1 connection: the head and
    /// the body as sent (possibly chunked, possibly cut). Tolerant by design:
    /// a truncated or odd response yields what can be read. `head_request`:
    /// the response to a HEAD has no body, whatever it says.
    pub fn from_http1(raw: &[u8], head_request: bool, status: u16) -> Captured {
        let (head, wire_body) = match find(raw, b"\r\n\r\n") {
            Some(i) => (&raw[..i], &raw[i + 4..]),
            None => match find(raw, b"\n\n") {
                Some(i) => (&raw[..i], &raw[i + 2..]),
                None => (raw, &raw[raw.len()..]),
            },
        };
        let mut headers = Vec::new();
        // Header names and values are ASCII; a line that is not UTF-8 is skipped.
        for line in head.split(|&b| b == b'\n').skip(1) {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let Ok(line) = std::str::from_utf8(line) else {
                continue;
            };
            if let Some((n, v)) = line.split_once(':') {
                headers.push((n.trim().to_owned(), v.trim().to_owned()));
            }
        }
        let mut c = Captured {
            status,
            headers,
            body: Vec::new(),
        };
        if head_request || status == 204 || status == 304 || (100..200).contains(&status) {
            return c;
        }
        let chunked = c
            .header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        c.body = if chunked {
            decode_chunked(wire_body)
        } else {
            match c
                .header("content-length")
                .and_then(|v| v.parse::<usize>().ok())
            {
                Some(n) if n < wire_body.len() => wire_body[..n].to_vec(),
                _ => wire_body.to_vec(),
            }
        };
        c
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Decodes as many complete chunks as there are; a chunk cut short
/// contributes what arrived. Extensions and trailers are ignored.
fn decode_chunked(mut wire: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(wire.len());
    loop {
        let Some(eol) = find(wire, b"\r\n") else {
            return out;
        };
        let line = std::str::from_utf8(&wire[..eol]).unwrap_or("");
        let size = line.split(';').next().unwrap_or("").trim();
        let Ok(size) = usize::from_str_radix(size, 16) else {
            return out;
        };
        if size == 0 {
            return out;
        }
        let data = &wire[eol + 2..];
        let take = size.min(data.len());
        out.extend_from_slice(&data[..take]);
        if take < size || data.len() < size + 2 {
            return out;
        }
        wire = &data[size + 2..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_plain_body() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\n\r\nhello";
        let r = Captured::from_http1(raw, false, 200);
        assert_eq!(r.header("content-type"), Some("text/plain"));
        assert_eq!(r.all("Set-Cookie").collect::<Vec<_>>(), ["a=1", "b=2"]);
        assert_eq!(r.body, b"hello");
        assert!(Captured::from_http1(raw, true, 200).body.is_empty());
        assert!(Captured::from_http1(raw, false, 204).body.is_empty());
    }

    #[test]
    fn chunked_bodies() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n";
        assert_eq!(Captured::from_http1(raw, false, 200).body, b"hello, world");
        assert_eq!(decode_chunked(b"3\r\nabc\r\n"), b"abc");
        assert_eq!(decode_chunked(b"a\r\n0123"), b"0123", "cut inside a chunk");
        assert_eq!(
            decode_chunked(b"A\r\n0123456789\r\n0\r\n\r\n"),
            b"0123456789"
        );
        assert_eq!(decode_chunked(b"zz\r\n"), b"");
        assert_eq!(decode_chunked(b""), b"");
    }

    #[test]
    fn truncated_head() {
        let r = Captured::from_http1(b"HTTP/1.1 200 OK\r\nLocation: /x", false, 200);
        assert_eq!(r.header("location"), Some("/x"));
        assert!(r.body.is_empty());
    }
}
