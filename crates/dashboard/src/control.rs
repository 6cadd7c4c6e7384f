//! Steering from the page (`--dashboard-control`): `POST /control` with a
//! one-word body, carried out by the same callback as the terminal's
//! steering keys, and who may send one.
//!
//! A control request changes the load, so it is held to more than a read:
//! the token always (made for the run when none was given, even on
//! 127.0.0.1, where another local user or a web page open in the user's
//! browser could otherwise send one), in a header (a query string ends up
//! in logs and history); a `Host` that names the page's own address (a DNS
//! name rebound to this machine does not); no cross-site `Origin` or
//! `Sec-Fetch-Site`; a body of at most [`MAX_BODY`] bytes, said with its
//! length. The callback runs on the page's thread: it takes a mutex and
//! bumps an atomic, nothing on the load threads.

use serde_json::{json, Value};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// Most bytes of a control request's body (`rate=123456.5` is 13).
pub const MAX_BODY: usize = 64;

/// The header that carries the token of a control request.
pub const TOKEN_HEADER: &str = "x-yace-token";

/// What a button of the page asks for (the body of `POST /control`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    /// `faster`: 10% more.
    Faster,
    /// `slower`: 10% less.
    Slower,
    /// `pause`: pause new requests, or resume them.
    Pause,
    /// `rate=N`: this many requests per second.
    Rate(f64),
}

impl Action {
    /// Reads a request's body: `faster`, `slower`, `pause` or `rate=N`.
    pub fn parse(body: &[u8]) -> Result<Action, String> {
        let bad = || {
            format!(
                "yace --dashboard: `{}` is not a control: send faster, slower, pause or rate=N \
                 (requests per second, or users, 0 or more)",
                String::from_utf8_lossy(body).trim()
            )
        };
        let text = std::str::from_utf8(body).map_err(|_| bad())?.trim();
        Ok(match text {
            "faster" => Action::Faster,
            "slower" => Action::Slower,
            "pause" => Action::Pause,
            _ => match text.strip_prefix("rate=").map(|v| v.trim().parse::<f64>()) {
                Some(Ok(v)) if v.is_finite() && v >= 0.0 => Action::Rate(v),
                _ => return Err(bad()),
            },
        })
    }
}

/// Carries out an action; returns what it did, in a line.
pub type OnControl = Arc<dyn Fn(Action) -> String + Send + Sync>;

/// Says where the steering stands (`×1.21 · 1,210/s`), in a few words.
pub type Now = Arc<dyn Fn() -> String + Send + Sync>;

/// What `--dashboard-control` gives the page.
#[derive(Clone)]
pub enum Control {
    /// The page steers the run (`users`: the number of users, not the
    /// rate; the page's field says which).
    On {
        act: OnControl,
        now: Now,
        users: bool,
    },
    /// This run cannot be steered: why (the page says it instead of
    /// buttons; a request is answered 409 with it).
    Unavailable(String),
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Control::On { users, .. } => write!(f, "Control::On {{ users: {users} }}"),
            Control::Unavailable(why) => write!(f, "Control::Unavailable({why:?})"),
        }
    }
}

/// The answer to a control request, as the page's script reads it:
/// `{"message"}` and `{"now"}` when done, `{"error"}` when not.
pub fn done(message: &str, now: &str) -> Vec<u8> {
    body(&json!({"message": message, "now": now}))
}

pub fn refused(why: &str) -> Vec<u8> {
    body(&json!({"error": why.trim_end()}))
}

fn body(v: &Value) -> Vec<u8> {
    let mut b = v.to_string().into_bytes();
    b.push(b'\n');
    b
}

/// A `Host` header that names the page's own address: an address, not a
/// name (`localhost` only where it listens on loopback), and its port.
/// Where it listens on every interface, any address of the machine does.
pub fn own_host(host: &str, bound: SocketAddr) -> bool {
    let Some((name, port)) = host.rsplit_once(':') else {
        return false;
    };
    if port.parse::<u16>() != Ok(bound.port()) {
        return false;
    }
    let ip = if name.eq_ignore_ascii_case("localhost") {
        if !bound.ip().is_loopback() {
            return false;
        }
        bound.ip()
    } else {
        let inner = name
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .unwrap_or(name);
        match inner.parse::<IpAddr>() {
            // An IPv6 address must come in brackets.
            Ok(IpAddr::V6(_)) if inner == name => return false,
            Ok(ip) => ip,
            Err(_) => return false,
        }
    };
    bound.ip().is_unspecified() || ip == bound.ip()
}

/// No cross-site sender: an `Origin` (browsers send one with every POST)
/// must be this page's own (`http://` and the request's `Host`), and a
/// `Sec-Fetch-Site` must say the same origin. A request without them
/// (curl, a script) is judged by its token alone.
pub fn same_origin(origin: Option<&str>, fetch_site: Option<&str>, host: &str) -> bool {
    let origin_ok = origin.is_none_or(|o| {
        o.strip_prefix("http://")
            .is_some_and(|h| h.eq_ignore_ascii_case(host))
    });
    let site_ok = fetch_site.is_none_or(|s| s.eq_ignore_ascii_case("same-origin"));
    origin_ok && site_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_read_as_the_buttons_send_them() {
        assert_eq!(Action::parse(b"faster"), Ok(Action::Faster));
        assert_eq!(Action::parse(b"slower\n"), Ok(Action::Slower));
        assert_eq!(Action::parse(b"pause"), Ok(Action::Pause));
        assert_eq!(Action::parse(b"rate=250.5"), Ok(Action::Rate(250.5)));
        assert_eq!(Action::parse(b"rate=0"), Ok(Action::Rate(0.0)));
        for bad in [
            &b"rate=-1"[..],
            b"rate=NaN",
            b"rate=inf",
            b"rate=",
            b"FASTER",
            b"",
            b"\xff",
        ] {
            let e = Action::parse(bad).unwrap_err();
            assert!(e.contains("send faster, slower, pause or rate=N"), "{e}");
        }
    }

    #[test]
    fn the_host_must_name_the_pages_own_address() {
        let lo: SocketAddr = "127.0.0.1:8089".parse().unwrap();
        assert!(own_host("127.0.0.1:8089", lo));
        assert!(own_host("localhost:8089", lo));
        assert!(!own_host("127.0.0.1:8090", lo), "another port");
        assert!(!own_host("127.0.0.1", lo), "no port");
        assert!(!own_host("127.0.0.2:8089", lo), "another address");
        assert!(!own_host("evil.example:8089", lo), "a rebound name");
        let any: SocketAddr = "0.0.0.0:8089".parse().unwrap();
        assert!(own_host("192.168.1.10:8089", any));
        assert!(!own_host("localhost:8089", any));
        assert!(!own_host("evil.example:8089", any));
        let v6: SocketAddr = "[::1]:8089".parse().unwrap();
        assert!(own_host("[::1]:8089", v6));
        assert!(!own_host("::1:8089", v6));
    }

    #[test]
    fn only_the_pages_own_origin_may_send() {
        let h = "127.0.0.1:8089";
        assert!(same_origin(None, None, h));
        assert!(same_origin(
            Some("http://127.0.0.1:8089"),
            Some("same-origin"),
            h
        ));
        assert!(!same_origin(Some("http://evil.example"), None, h));
        assert!(!same_origin(Some("null"), None, h));
        assert!(!same_origin(Some("https://127.0.0.1:8089"), None, h));
        assert!(!same_origin(None, Some("cross-site"), h));
        assert!(!same_origin(None, Some("same-site"), h));
    }
}
