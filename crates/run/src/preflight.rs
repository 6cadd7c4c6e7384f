//! The pre-flight: before any load, one exchange with the target on the
//! protocol the run will speak — the TLS handshake with the run's own
//! configuration (verification, `--cacert`, ALPN), and for HTTP/2 without
//! TLS the connection preface answered by the server's SETTINGS. A mismatch
//! (`https://` to a plain port, a certificate nobody trusts, `http://` to a
//! TLS port) then ends the run with one line and its fix, instead of a
//! whole run of identical errors.
//!
//! It sends no request: the server's access log keeps exactly the requests
//! the run reports (nginx logs a `400` for a connection that sent as much as
//! an empty line, so plain HTTP/1.1 gets no exchange beyond the connect;
//! `yace doctor` sends a real `GET`). Its connection is the connect check's,
//! one more at the server, an HTTP/2 one for h2c. A plain server that gets
//! an `https://` run's ClientHello counts it as one unreadable request, as
//! it would each of the run's.

use engine::tls::TlsSetup;
use engine::Outcome;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// The HTTP/2 client connection preface (RFC 9113 §3.4) and an empty
/// SETTINGS frame.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

/// What the exchange met: the outcome class a run's requests would have
/// had, and the detail behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub outcome: Outcome,
    pub detail: String,
    /// The server's first bytes looked like TLS (a record header), so
    /// plain `http://` went to a TLS port.
    pub answered_tls: bool,
}

/// Whether a pre-flight exchange has anything to check: HTTPS (the
/// handshake) or HTTP/2 (the preface). Plain HTTP/1.1 has none that would
/// not be a request.
pub fn needed(tls: bool, http2: bool) -> bool {
    tls || http2
}

/// Over a connection to the target, completes the handshake the run will:
/// TLS with `tls` (its ALPN offers `h2` when `http2`, and the server must
/// choose it), or, for HTTP/2 without TLS, the preface answered by
/// SETTINGS. Over TLS, ALPN settles the HTTP version without a preface, so
/// the server counts no HTTP/2 connection the run did not make.
pub fn exchange(
    tcp: TcpStream,
    tls: Option<&TlsSetup>,
    http2: bool,
    timeout: Duration,
) -> Result<(), Mismatch> {
    let fail = |outcome, detail: String| Mismatch {
        outcome,
        detail,
        answered_tls: false,
    };
    let _ = tcp.set_nodelay(true);
    let _ = tcp.set_read_timeout(Some(timeout));
    let _ = tcp.set_write_timeout(Some(timeout));
    match tls {
        Some(setup) => {
            let mut s = setup
                .handshake(tcp)
                .map_err(|(outcome, detail)| fail(outcome, detail))?;
            if http2 && s.conn.alpn_protocol() != Some(b"h2") {
                return Err(fail(
                    Outcome::NoHttp2,
                    "the server did not agree to HTTP/2 in the TLS handshake (ALPN)".into(),
                ));
            }
            s.conn.send_close_notify();
            let _ = s.flush();
            Ok(())
        }
        None if http2 => {
            let mut tcp = tcp;
            preface(&mut tcp)
        }
        None => Ok(()),
    }
}

/// Whether `addr` speaks TLS: a handshake that skips verification either
/// completes or fails on something only TLS says. For after a plain
/// `http://` run whose every request failed: it tells "use https://" apart
/// from a server that is broken (asked before the run, it would cost a
/// request in every plain server's access log).
pub fn speaks_tls(addr: SocketAddr, host: &str, timeout: Duration) -> bool {
    let opts = plan::TlsOptions {
        insecure: true,
        ..plan::TlsOptions::default()
    };
    let Ok(setup) = engine::tls::setup(&opts, host, false) else {
        return false;
    };
    let Ok(tcp) = TcpStream::connect_timeout(&addr, timeout) else {
        return false;
    };
    let _ = tcp.set_read_timeout(Some(timeout));
    let _ = tcp.set_write_timeout(Some(timeout));
    match setup.handshake(tcp) {
        Ok(mut s) => {
            s.conn.send_close_notify();
            let _ = s.flush();
            true
        }
        Err((outcome, _)) => !matches!(
            outcome,
            Outcome::TlsNotTls
                | Outcome::Timeout
                | Outcome::Reset
                | Outcome::ConnectRefused
                | Outcome::ConnectTimeout
                | Outcome::ConnectError
        ),
    }
}

/// Sends the HTTP/2 preface and reads the server's first frame, which must
/// be SETTINGS on stream 0 (RFC 9113 §3.4).
fn preface(s: &mut (impl Read + Write)) -> Result<(), Mismatch> {
    let fail = |outcome, detail: String, answered_tls| Mismatch {
        outcome,
        detail,
        answered_tls,
    };
    if let Err(e) = s.write_all(PREFACE).and_then(|()| s.flush()) {
        return Err(fail(Outcome::Reset, e.to_string(), false));
    }
    let mut head = [0u8; 9];
    let mut got = 0;
    while got < head.len() {
        match s.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(fail(
                    Outcome::Timeout,
                    "no answer to the HTTP/2 preface".into(),
                    false,
                ))
            }
            Err(e) => return Err(fail(Outcome::Reset, e.to_string(), false)),
        }
    }
    // A TLS record header: content type 20–23 (an alert is 21), version 3.x.
    let tls = got >= 2 && (20..=23).contains(&head[0]) && head[1] == 3;
    if head[..got].starts_with(b"HTTP/") {
        return Err(fail(
            Outcome::NoHttp2,
            "the server answered the HTTP/2 preface in HTTP/1".into(),
            false,
        ));
    }
    if got < head.len() {
        return Err(fail(
            Outcome::ProtocolError,
            if got == 0 {
                "the server closed the connection on the HTTP/2 preface".into()
            } else {
                format!("the server answered the HTTP/2 preface with {got} bytes")
            },
            tls,
        ));
    }
    let (kind, stream) = (
        head[3],
        u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff,
    );
    if kind != 4 || stream != 0 {
        return Err(fail(
            Outcome::ProtocolError,
            format!(
                "the server answered the HTTP/2 preface with {:?}, not a SETTINGS frame",
                String::from_utf8_lossy(&head)
            ),
            tls,
        ));
    }
    Ok(())
}

/// The one line a failed pre-flight ends the run with: what happened, in
/// the run's outcome class, and the fix, in the caller's flags.
pub fn message(
    m: &Mismatch,
    url: &str,
    addr: SocketAddr,
    http2: bool,
    s: &dyn plan::Spelling,
) -> String {
    use plan::Field;
    let swap = |from: &str, to: &str| {
        url.strip_prefix(from)
            .map_or_else(|| url.to_owned(), |rest| format!("{to}{rest}"))
    };
    let name = m.outcome.name();
    let h2 = s.name(Field::Http2);
    let what = match m.outcome {
        Outcome::TlsUnknownCa => format!(
            "the server's certificate is not signed by a CA this machine trusts ({name}); pass \
             {} FILE (the CA that signed it), or {} for a test box",
            s.name(Field::CaCert),
            s.name(Field::Insecure)
        ),
        Outcome::TlsHostnameMismatch | Outcome::TlsExpired => format!(
            "{} ({name}); or {} for a test box",
            m.outcome.explain(),
            s.name(Field::Insecure)
        ),
        Outcome::TlsNotTls => format!(
            "{addr} does not speak TLS ({name}); use {}",
            swap("https://", "http://")
        ),
        Outcome::NoHttp2 => format!(
            "{} ({name}); drop {h2}, or enable HTTP/2 on the server",
            m.detail
        ),
        Outcome::ProtocolError if m.answered_tls => format!(
            "{addr} answers in TLS, not plain HTTP ({name}); use {}",
            swap("http://", "https://")
        ),
        Outcome::ProtocolError if http2 && url.starts_with("http://") => format!(
            "{} ({name}): the server does not speak HTTP/2 without TLS (h2c); use https:// or \
             drop {h2}",
            m.detail
        ),
        other => format!(
            "{} ({}: {}); yace doctor '{url}' shows more",
            m.detail,
            other.name(),
            other.explain()
        ),
    };
    format!("{url}: pre-flight exchange failed, no load sent: {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer_with(reply: &'static [u8]) -> SocketAddr {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            let mut buf = [0u8; 64];
            let _ = c.read(&mut buf);
            let _ = c.write_all(reply);
        });
        addr
    }

    #[test]
    fn the_h2_preface_wants_settings() {
        let t = Duration::from_secs(5);
        // A SETTINGS frame with no settings.
        let ok = answer_with(b"\x00\x00\x00\x04\x00\x00\x00\x00\x00");
        let tcp = |addr| TcpStream::connect(addr).unwrap();
        assert_eq!(exchange(tcp(ok), None, true, t), Ok(()));
        // A TLS alert (what a TLS port says to plain bytes).
        let tls = answer_with(b"\x15\x03\x03\x00\x02\x02\x32");
        let e = exchange(tcp(tls), None, true, t).unwrap_err();
        assert_eq!((e.outcome, e.answered_tls), (Outcome::ProtocolError, true));
        // An HTTP/1.1 server's 400: no HTTP/2 there, and not TLS.
        let h1 = answer_with(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        let e = exchange(tcp(h1), None, true, t).unwrap_err();
        assert_eq!((e.outcome, e.answered_tls), (Outcome::NoHttp2, false));
        // Neither HTTP/2 nor TLS.
        let ssh = answer_with(b"SSH-2.0-OpenSSH_9.6\r\n");
        let e = exchange(tcp(ssh), None, true, t).unwrap_err();
        assert_eq!((e.outcome, e.answered_tls), (Outcome::ProtocolError, false));
    }

    #[test]
    fn messages_name_the_fix() {
        let addr: SocketAddr = "127.0.0.1:8443".parse().unwrap();
        #[derive(Debug)]
        struct Flags;
        impl plan::Spelling for Flags {
            fn name(&self, f: plan::Field) -> &'static str {
                match f {
                    plan::Field::CaCert => "--cacert",
                    plan::Field::Insecure => "--insecure",
                    _ => "--other",
                }
            }
        }
        let s = &Flags;
        let m = |outcome, answered_tls| Mismatch {
            outcome,
            detail: String::new(),
            answered_tls,
        };
        let ca = message(
            &m(Outcome::TlsUnknownCa, false),
            "https://localhost:8443/",
            addr,
            false,
            s,
        );
        assert!(
            ca.contains("--cacert FILE") && ca.contains("--insecure"),
            "{ca}"
        );
        let plain = message(
            &m(Outcome::TlsNotTls, false),
            "https://localhost:8443/x",
            addr,
            false,
            s,
        );
        assert!(plain.ends_with("use http://localhost:8443/x"), "{plain}");
        let tls = message(
            &m(Outcome::ProtocolError, true),
            "http://localhost:8443/x",
            addr,
            false,
            s,
        );
        assert!(tls.ends_with("use https://localhost:8443/x"), "{tls}");
        assert!(!tls.contains('\n'));
    }
}
