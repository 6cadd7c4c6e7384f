//! One home for the HTTP rules the client path applies (issue #11):
//! method predicates, Content-Length parsing, and which socket error is
//! which [`Outcome`]. The HTTP/1.1 codec, the worker and the flows call
//! these instead of keeping their own copies.

use crate::Outcome;

// The method predicates live in `plan` (below the engine) because the
// scenario compiler, which does not link the engine, needs the same
// answer; re-exported here so the engine has one place to look.
pub use plan::method::{is_head, is_idempotent, is_safe};

/// The method token of a pre-encoded HTTP/1.1 request (`b"GET / ..."`).
pub fn request_method(req: &[u8]) -> &[u8] {
    req.split(|&b| b == b' ').next().unwrap_or(req)
}

/// A Content-Length value: ASCII digits (surrounding whitespace allowed)
/// that fit a `u64`; anything else is `None` (RFC 9110 §8.6).
pub fn parse_content_length(v: &[u8]) -> Option<u64> {
    parse_length_exact(v.trim_ascii())
}

/// A Content-Length value with no surrounding whitespace allowed: HTTP/2
/// field values arrive already stripped (RFC 9113 §8.2.1), so a space
/// there is malformed, not padding.
pub fn parse_length_exact(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    v.iter().try_fold(0u64, |acc, &d| {
        acc.checked_mul(10)?.checked_add((d - b'0') as u64)
    })
}

/// The outcome of a failed connect (or of a socket error before any byte
/// of the response): the client-resource errnos are the client's own
/// limits, not the server's failures.
pub fn connect_outcome(errno: i32) -> Outcome {
    match errno {
        libc::ECONNREFUSED => Outcome::ConnectRefused,
        libc::ETIMEDOUT => Outcome::ConnectTimeout,
        libc::EMFILE
        | libc::ENFILE
        | libc::EADDRNOTAVAIL
        | libc::ENOBUFS
        | libc::ENOMEM
        | libc::EAGAIN => Outcome::ClientResource,
        libc::ECONNRESET => Outcome::Reset,
        _ => Outcome::ConnectError,
    }
}

/// The outcome of a failed connect to a unix-domain socket. No socket
/// file, or nobody listening on it, is the port's refusal; EAGAIN is the
/// listener's accept queue full (a unix connect fails at once where TCP
/// would drop the SYN), also a refusal, not this client's resource.
pub fn unix_connect_outcome(e: &std::io::Error) -> Outcome {
    match e.raw_os_error() {
        Some(libc::ENOENT | libc::ECONNREFUSED | libc::EAGAIN) => Outcome::ConnectRefused,
        _ => io_connect_outcome(e),
    }
}

/// [`connect_outcome`] of an `io::Error`.
/// An error std made itself (no errno: `TcpStream::connect_timeout`'s own
/// timeout) is classified by its kind.
pub fn io_connect_outcome(e: &std::io::Error) -> Outcome {
    use std::io::ErrorKind;
    match e.raw_os_error() {
        Some(errno) => connect_outcome(errno),
        None => match e.kind() {
            ErrorKind::TimedOut | ErrorKind::WouldBlock => Outcome::ConnectTimeout,
            ErrorKind::ConnectionRefused => Outcome::ConnectRefused,
            _ => Outcome::ConnectError,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths() {
        assert_eq!(parse_content_length(b" 12 "), Some(12));
        assert_eq!(parse_content_length(b"0"), Some(0));
        assert_eq!(parse_content_length(b"18446744073709551615"), None);
        assert_eq!(
            parse_content_length(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        for bad in [&b""[..], b"1x", b"-1", b"+1", b"1 2"] {
            assert_eq!(parse_content_length(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn methods_of_encoded_requests() {
        assert_eq!(request_method(b"LOCK /x HTTP/1.1\r\n"), b"LOCK");
        assert!(!is_idempotent(request_method(b"LOCK /x HTTP/1.1\r\n")));
        assert!(is_idempotent(request_method(b"PUT /x HTTP/1.1\r\n")));
        assert!(is_head(request_method(b"HEAD / HTTP/1.1\r\n")));
    }

    #[test]
    fn errnos() {
        assert_eq!(connect_outcome(libc::ECONNREFUSED), Outcome::ConnectRefused);
        assert_eq!(
            connect_outcome(libc::EADDRNOTAVAIL),
            Outcome::ClientResource
        );
        assert_eq!(connect_outcome(libc::ECONNRESET), Outcome::Reset);
        assert_eq!(connect_outcome(0), Outcome::ConnectError);
    }
    #[test]
    fn io_errors_map_to_outcomes_with_or_without_an_errno() {
        let e = |k: std::io::ErrorKind| io_connect_outcome(&std::io::Error::from(k));
        assert_eq!(
            e(std::io::ErrorKind::ConnectionRefused),
            Outcome::ConnectRefused
        );
        assert_eq!(e(std::io::ErrorKind::TimedOut), Outcome::ConnectTimeout);
        assert_eq!(
            io_connect_outcome(&std::io::Error::from_raw_os_error(libc::EMFILE)),
            Outcome::ClientResource
        );
        assert_eq!(
            io_connect_outcome(&std::io::Error::from_raw_os_error(libc::ENETUNREACH)),
            Outcome::ConnectError
        );
    }
}
