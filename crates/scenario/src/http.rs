//! Reading responses as the engine hands them over: raw bytes, head and
//! body as on the wire (the body possibly chunked, possibly cut at 1 MiB).
//! Tolerant by design: a truncated or odd response yields what can be read.

use std::borrow::Cow;

#[derive(Debug)]
pub(crate) struct Response<'a> {
    pub headers: Vec<(&'a str, &'a str)>,
    /// The body as sent (still chunked if it was).
    pub wire_body: &'a [u8],
}

impl<'a> Response<'a> {
    pub(crate) fn parse(raw: &'a [u8]) -> Response<'a> {
        let (head, body) = match find(raw, b"\r\n\r\n") {
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
                headers.push((n.trim(), v.trim()));
            }
        }
        Response {
            headers,
            wire_body: body,
        }
    }

    pub(crate) fn header(&self, name: &str) -> Option<&'a str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }

    pub(crate) fn all<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'a str> + 's {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }

    /// The body with chunked transfer coding removed and cut at
    /// Content-Length; empty for responses that have none.
    pub(crate) fn body(&self, head_request: bool, status: u16) -> Cow<'a, [u8]> {
        if head_request || status == 204 || status == 304 || (100..200).contains(&status) {
            return Cow::Borrowed(&[]);
        }
        let chunked = self
            .header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        if chunked {
            return Cow::Owned(decode_chunked(self.wire_body));
        }
        match self
            .header("content-length")
            .and_then(|v| v.parse::<usize>().ok())
        {
            Some(n) if n < self.wire_body.len() => Cow::Borrowed(&self.wire_body[..n]),
            _ => Cow::Borrowed(self.wire_body),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Decodes as many complete chunks as there are; a chunk cut short
/// contributes what arrived. Extensions and trailers are ignored.
pub(crate) fn decode_chunked(mut wire: &[u8]) -> Vec<u8> {
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
        let r = Response::parse(raw);
        assert_eq!(r.header("content-type"), Some("text/plain"));
        assert_eq!(r.all("Set-Cookie").collect::<Vec<_>>(), ["a=1", "b=2"]);
        assert_eq!(&*r.body(false, 200), b"hello");
        assert_eq!(&*r.body(true, 200), b"");
        assert_eq!(&*r.body(false, 204), b"");
    }

    #[test]
    fn chunked_bodies() {
        let raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n";
        let r = Response::parse(raw);
        assert_eq!(&*r.body(false, 200), b"hello, world");
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
        let r = Response::parse(b"HTTP/1.1 200 OK\r\nLocation: /x");
        assert_eq!(r.header("location"), Some("/x"));
        assert!(r.body(false, 200).is_empty());
    }
}
