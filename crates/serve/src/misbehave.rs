//! `/bad/...`: answers that break HTTP/1.1 on purpose, one way per path, for
//! checking what a client makes of a broken or hostile server. The crate
//! docs list what each path sends; [`crate::Hostile`] covers what no path
//! can select (acting at accept, keep-alive timeouts). A few paths are
//! HTTP/2's own (stream resets, GOAWAY; `http2` plays them); each protocol
//! answers the other's with 501, since they have no meaning there.
//!
//! Every `/bad` route answers every method alike, so a `HEAD` gets the body
//! too. Each is counted in the stats under its own path; the two that read
//! a request and never answer it (`/bad/close`, `/bad/silent`) count it
//! without a status.

use std::io;
use std::time::Duration;

use crate::conn::{After, Conn, FILLER};
use crate::http::{ConnHeader, SERVER_HEADER};
use crate::route::{Bad, Kind, Route};

/// The 501 body of an HTTP/2 misbehaviour asked for over HTTP/1.1.
const H2_ONLY: &[u8] = b"this misbehaviour is HTTP/2 only\n";
/// The 501 body of an HTTP/1.1 misbehaviour asked for over HTTP/2.
pub(crate) const H1_ONLY: &str = "this misbehaviour is HTTP/1.1 only\n";

/// How long `/bad/reset-mid-body` lets its partial body travel before the
/// reset, so that the client has it when the RST arrives.
const RESET_PAUSE: Duration = Duration::from_millis(5);
/// The body the drip routes send, and its length.
const DRIP_BODY_LEN: usize = 20;
const STRAY: &[u8] = b"stray bytes\n";
/// A line of `/bad/endless-header`, 64 bytes with its CRLF.
const ENDLESS_LINE: &[u8; 64] =
    b"X-Endless: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
/// Header value bytes for `/bad/huge-header`, written as many times as needed.
static HUGE_VALUE: [u8; 16 * 1024] = [b'x'; 16 * 1024];

/// Misbehaves as `bad` says. `keep`: whether an honest answer would keep
/// the connection; `conn`: the `Connection` header it would carry. Returns
/// what becomes of the connection.
pub(crate) async fn respond(
    c: &mut Conn,
    bad: Bad,
    keep: bool,
    conn: ConnHeader,
) -> io::Result<After> {
    let route = Route::Bad(bad.kind);
    // Where an honest server would have left the connection.
    let honest = if keep { After::KeepAlive } else { After::Close };
    let text = "Content-Type: text/plain";
    match bad.kind {
        Kind::Close => {
            c.unanswered(route);
            Ok(After::Close)
        }
        Kind::Silent => {
            c.unanswered(route);
            c.discard_until_eof().await;
            Ok(After::Gone)
        }
        Kind::ResetMidBody => {
            let h = head("200 OK", &[text, "Content-Length: 1000"], conn);
            c.canned(route, 200, &[&h, &FILLER[..100]]);
            c.flush().await?;
            tokio::time::sleep(RESET_PAUSE).await;
            Ok(After::Reset)
        }
        Kind::DripHead => {
            let body = b"dripped head\n";
            let h = head("200 OK", &[text, &length(body.len())], conn);
            c.count(route, 200);
            c.flush().await?;
            for (i, b) in h.iter().enumerate() {
                if i > 0 {
                    pause(bad.arg).await;
                }
                c.write_now(std::slice::from_ref(b)).await?;
            }
            c.write_now(body).await?;
            Ok(honest)
        }
        Kind::DripBody => {
            let h = head("200 OK", &[text, &length(DRIP_BODY_LEN)], conn);
            c.canned(route, 200, &[&h]);
            c.flush().await?;
            for b in &FILLER[..DRIP_BODY_LEN] {
                pause(bad.arg).await;
                c.write_now(std::slice::from_ref(b)).await?;
            }
            Ok(honest)
        }
        Kind::EofBody => {
            let h = head("200 OK", &[text], ConnHeader::Close);
            c.canned(route, 200, &[&h, &FILLER[..100]]);
            Ok(After::Close)
        }
        Kind::ClShort => {
            let h = head("200 OK", &[text, "Content-Length: 100"], conn);
            c.canned(route, 200, &[&h, &FILLER[..50]]);
            Ok(After::Close)
        }
        Kind::ClLong => {
            let h = head("200 OK", &[text, "Content-Length: 10"], conn);
            c.canned(route, 200, &[&h, &FILLER[..20]]);
            Ok(honest)
        }
        Kind::ClInvalid => {
            let h = head("200 OK", &[text, "Content-Length: abc"], conn);
            c.canned(route, 200, &[&h, b"abc"]);
            Ok(After::Close)
        }
        Kind::ClDup => {
            let fields = [text, "Content-Length: 10", "Content-Length: 20"];
            let h = head("200 OK", &fields, conn);
            c.canned(route, 200, &[&h, &FILLER[..20]]);
            Ok(After::Close)
        }
        Kind::ChunkBad => {
            let h = head("200 OK", &[text, "Transfer-Encoding: chunked"], conn);
            let body = b"5\r\nhello\r\nnot-hex\r\nabc\r\n0\r\n\r\n";
            c.canned(route, 200, &[&h, body]);
            Ok(After::Close)
        }
        Kind::ChunkExt => {
            let fields = [text, "Transfer-Encoding: chunked", "Trailer: X-Checksum"];
            let h = head("200 OK", &fields, conn);
            c.canned(route, 200, &[&h, CHUNK_EXT_BODY]);
            Ok(honest)
        }
        Kind::ChunkTrunc => {
            let h = head("200 OK", &[text, "Transfer-Encoding: chunked"], conn);
            c.canned(route, 200, &[&h, b"40\r\n", &FILLER[..20]]);
            Ok(After::Close)
        }
        Kind::Continue => {
            let interim: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n\
                HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n";
            let body = b"final answer\n";
            let h = head("200 OK", &[text, &length(body.len())], conn);
            c.canned(route, 200, &[interim, &h, body]);
            Ok(honest)
        }
        Kind::Body204 => {
            let h = head("204 No Content", &[], conn);
            c.canned(route, 204, &[&h, STRAY]);
            Ok(honest)
        }
        Kind::Body304 => {
            let h = head("304 Not Modified", &[&length(STRAY.len())], conn);
            c.canned(route, 304, &[&h, STRAY]);
            Ok(honest)
        }
        Kind::HeadBody => {
            let body = b"hello world\n";
            let h = head("200 OK", &[text, &length(body.len())], conn);
            c.canned(route, 200, &[&h, body]);
            Ok(honest)
        }
        Kind::HugeHeader => {
            let mut h = head("200 OK", &[text, "Content-Length: 0"], conn);
            h.truncate(h.len() - 2); // Reopen the head for one more field.
            h.extend_from_slice(b"X-Huge: ");
            c.canned(route, 200, &[&h]);
            let mut left = bad.arg * 1024;
            while left > 0 {
                let n = left.min(HUGE_VALUE.len() as u64) as usize;
                c.write_now(&HUGE_VALUE[..n]).await?;
                left -= n as u64;
            }
            c.write_now(b"\r\n\r\n").await?;
            Ok(honest)
        }
        Kind::EndlessHeader => {
            let mut h = head("200 OK", &[text], conn);
            h.truncate(h.len() - 2);
            c.canned(route, 200, &[&h]);
            let batch = ENDLESS_LINE.repeat(256);
            // Until the client gives up: the write fails once it has gone.
            loop {
                c.write_now(&batch).await?;
            }
        }
        Kind::EndlessChunkExt => {
            let h = head("200 OK", &[text, "Transfer-Encoding: chunked"], conn);
            c.canned(route, 200, &[&h, b"1;ext="]);
            let batch = [b'a'; 64 * 1024];
            // Until the client gives up: the write fails once it has gone.
            loop {
                c.write_now(&batch).await?;
            }
        }
        Kind::EndlessTrailers => {
            let h = head("200 OK", &[text, "Transfer-Encoding: chunked"], conn);
            c.canned(route, 200, &[&h, b"2\r\nok\r\n0\r\n"]);
            let batch = b"X-Trailer: 0123456789abcdef0123456789abcdef\r\n".repeat(1024);
            // Until the client gives up: the write fails once it has gone.
            loop {
                c.write_now(&batch).await?;
            }
        }
        Kind::ManyCookies => {
            let cookies: Vec<String> = (0..1000)
                .map(|i| format!("Set-Cookie: c{i:04}=0123456789abcdef0123456789abcdef01; Path=/"))
                .collect();
            let mut fields: Vec<&str> = vec![text, "Content-Length: 13"];
            fields.extend(cookies.iter().map(String::as_str));
            let h = head("200 OK", &fields, conn);
            c.canned(route, 200, &[&h, b"many cookies\n"]);
            Ok(honest)
        }
        Kind::TeAndCl => {
            // The Content-Length is wrong on purpose: a client that trusts
            // it reads the wrong bytes as the next response.
            let fields = [text, "Content-Length: 5", "Transfer-Encoding: chunked"];
            let h = head("200 OK", &fields, conn);
            c.canned(route, 200, &[&h, b"c\r\nte-and-cl ok\r\n0\r\n\r\n"]);
            Ok(honest)
        }
        Kind::TeIdentity => {
            let fields = [text, "Transfer-Encoding: identity", "Content-Length: 2"];
            let h = head("200 OK", &fields, ConnHeader::Close);
            c.canned(route, 200, &[&h, b"the body runs to the close\n"]);
            Ok(After::Close)
        }
        Kind::BareLf => {
            let body = b"bare LF\n";
            let h = head("200 OK", &[text, &length(body.len())], conn);
            let lf: Vec<u8> = h.iter().copied().filter(|&b| b != b'\r').collect();
            c.canned(route, 200, &[&lf, body]);
            Ok(honest)
        }
        Kind::Early413 => {
            let body = b"request body too large\n";
            let h = head(
                "413 Content Too Large",
                &[text, &length(body.len())],
                ConnHeader::Close,
            );
            c.canned(route, 413, &[&h, body]);
            Ok(After::Reset)
        }
        Kind::Http10 => {
            let body = b"an HTTP/1.0 answer\n";
            let mut h = format!("HTTP/1.0 200 OK\r\n{SERVER_HEADER}\r\n{text}\r\n").into_bytes();
            h.extend_from_slice(length(body.len()).as_bytes());
            h.extend_from_slice(b"\r\n\r\n");
            c.canned(route, 200, &[&h, body]);
            Ok(After::Close)
        }
        Kind::IdleClose => {
            let body = b"keep-alive, until idle\n";
            let h = head("200 OK", &[text, &length(body.len())], conn);
            c.canned(route, 200, &[&h, body]);
            c.stale_after(bad.arg);
            Ok(honest)
        }
        Kind::CloseEvery => {
            // The head says nothing: the close comes unannounced.
            let body = b"close-every\n";
            let h = head("200 OK", &[text, &length(body.len())], conn);
            c.canned(route, 200, &[&h, body]);
            let nth = c.count_close_every();
            Ok(if nth.is_multiple_of(bad.arg) {
                After::Close
            } else {
                honest
            })
        }
        Kind::Rst | Kind::Refuse | Kind::GoAway => {
            let h = head("501 Not Implemented", &[text, &length(H2_ONLY.len())], conn);
            c.canned(route, 501, &[&h, H2_ONLY]);
            Ok(honest)
        }
    }
}

/// `/bad/chunk-ext`'s body: extensions (one with a quoted `;`), a
/// whitespace before one, and two trailer fields; 11 bytes of data.
const CHUNK_EXT_BODY: &[u8] = b"5;name=value\r\nhello\r\n\
    6 ; q=\"a;b\"\r\n world\r\n\
    0;final\r\nX-Checksum: 42\r\nX-Note: trailers\r\n\r\n";

/// An HTTP/1.1 head: status line, `Server`, `fields`, `conn`, blank line.
fn head(status: &str, fields: &[&str], conn: ConnHeader) -> Vec<u8> {
    let mut h = format!("HTTP/1.1 {status}\r\n{SERVER_HEADER}\r\n").into_bytes();
    for f in fields {
        h.extend_from_slice(f.as_bytes());
        h.extend_from_slice(b"\r\n");
    }
    h.extend_from_slice(conn.line());
    h.extend_from_slice(b"\r\n");
    h
}

fn length(n: usize) -> String {
    format!("Content-Length: {n}")
}

async fn pause(ms: u64) {
    if ms > 0 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::parse;

    #[test]
    fn paths_are_distinct_and_listed_once() {
        for (i, k) in Kind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i, "ALL is in declaration order");
            assert!(k.path().starts_with("/bad/"));
            let same = Kind::ALL.iter().filter(|o| o.path() == k.path()).count();
            assert_eq!(same, 1, "{}", k.path());
        }
    }

    #[test]
    fn parameters_have_defaults_and_bounds() {
        let ok = |path, query| parse(path, query).unwrap().unwrap();
        assert_eq!(ok("/bad/close", "x=1").arg, 0);
        assert_eq!(ok("/bad/drip-head", "").arg, 10);
        assert_eq!(ok("/bad/drip-body", "ms=0").arg, 0);
        assert_eq!(ok("/bad/huge-header", "kb=2").arg, 2);
        assert_eq!(ok("/bad/idle-close", "").arg, 200);
        assert_eq!(ok("/bad/close-every", "n=1").arg, 1);
        for (path, query) in [
            ("/bad/close-every", "n=0"),
            ("/bad/huge-header", "kb=65537"),
            ("/bad/drip-head", "ms=10001"),
            ("/bad/idle-close", "ms=x"),
        ] {
            let (route, _) = parse(path, query).unwrap().unwrap_err();
            assert_eq!(route.name(), path);
        }
        assert!(parse("/bad/nope", "").is_none());
        assert!(parse("/bad/", "").is_none());
    }

    #[test]
    fn chunk_ext_body_decodes_to_eleven_bytes() {
        let mut d = crate::http::ChunkedDecoder::default();
        let mut out = Vec::new();
        let used = d.feed(CHUNK_EXT_BODY, Some(&mut out)).unwrap();
        assert!(d.is_done());
        assert_eq!(used, CHUNK_EXT_BODY.len());
        assert_eq!(out, b"hello world");
    }

    #[test]
    fn heads_end_in_one_blank_line() {
        let h = head("204 No Content", &[], ConnHeader::Omit);
        let s = String::from_utf8(h).unwrap();
        assert_eq!(
            s,
            format!("HTTP/1.1 204 No Content\r\n{SERVER_HEADER}\r\n\r\n")
        );
    }
}
