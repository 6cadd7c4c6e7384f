//! Who may read the page: where it listens (`--dashboard [ADDR]`) and the
//! token that any address but the default one needs (`--dashboard-token`,
//! or one made for the run).

use std::io::{self, Read};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// Where the page listens by default: this machine only, a free port.
pub const DEFAULT: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// The address `--dashboard ADDR` names: `IP`, `IP:PORT`, `[IPv6]:PORT`,
/// `:PORT` or `localhost[:PORT]` (no port: a free one).
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    let s = s.trim();
    if s.contains("://") {
        return Err(format!(
            "--dashboard took `{s}` as its address: put the URL before --dashboard, or write \
             --dashboard=ADDR"
        ));
    }
    let bad = || {
        format!(
            "--dashboard `{s}` is not an address: give IP[:PORT] (127.0.0.1:8089, \
             0.0.0.0:8089, [::1]:8089), :PORT, or nothing for 127.0.0.1 on a free port"
        )
    };
    if s.is_empty() {
        return Ok(DEFAULT);
    }
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Ok(ip) = s.trim_matches(['[', ']']).parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, 0));
    }
    let (host, port) = match s.rsplit_once(':') {
        Some((h, p)) => (h, p.parse::<u16>().map_err(|_| bad())?),
        None => (s, 0),
    };
    match host {
        "" => Ok(SocketAddr::new(DEFAULT.ip(), port)),
        h if h.eq_ignore_ascii_case("localhost") => Ok(SocketAddr::new(DEFAULT.ip(), port)),
        _ => Err(bad()),
    }
}

/// Any address but the default's (127.0.0.1, or ::1) needs a token:
/// 127.0.0.2 too, which other containers or namespaces may share.
pub fn needs_token(addr: &SocketAddr) -> bool {
    !matches!(addr.ip(), IpAddr::V4(ip) if ip == Ipv4Addr::LOCALHOST)
        && addr.ip() != IpAddr::V6(std::net::Ipv6Addr::LOCALHOST)
}

/// Checks a token given with `--dashboard-token`.
pub fn check_token(t: &str) -> Result<(), String> {
    if t.is_empty() {
        return Err(
            "--dashboard-token is empty: give a token of your own (16 characters or \
                    more), or leave the flag out: yace makes one when the page listens on an \
                    address other than 127.0.0.1"
                .into(),
        );
    }
    if t.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(
            "--dashboard-token holds a space or a control character: a token travels in the \
             page's URL; use letters, digits and -._~"
                .into(),
        );
    }
    Ok(())
}

/// A token for this run: 128 random bits from the kernel, in hex.
pub fn make_token() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `given == want`, in a time that does not depend on where they differ
/// (only on `want`'s length, which is not the secret).
pub fn same(given: &[u8], want: &[u8]) -> bool {
    let mut diff = given.len() ^ want.len();
    for (i, w) in want.iter().enumerate() {
        let g = given.get(i).copied().unwrap_or(!w);
        diff |= usize::from(g ^ w);
        // Keeps the compiler from stopping at the first difference.
        diff = std::hint::black_box(diff);
    }
    diff == 0
}

/// A `Host` header that names this machine by address (`127.0.0.1:8089`,
/// `[::1]:8089`) or as `localhost`: what a page reached through a
/// rebound DNS name does not send.
pub fn local_host(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => host,
    };
    name.eq_ignore_ascii_case("localhost")
        || name.trim_matches(['[', ']']).parse::<IpAddr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_as_people_write_them() {
        let a = |s: &str| parse_addr(s).unwrap().to_string();
        assert_eq!(a(""), "127.0.0.1:0");
        assert_eq!(a("127.0.0.2"), "127.0.0.2:0");
        assert_eq!(a("0.0.0.0:8089"), "0.0.0.0:8089");
        assert_eq!(a(":8089"), "127.0.0.1:8089");
        assert_eq!(a("localhost:8089"), "127.0.0.1:8089");
        assert_eq!(a("[::1]:8089"), "[::1]:8089");
        assert_eq!(a("::1"), "[::1]:0");
        let e = parse_addr("example.com:80").unwrap_err();
        assert!(
            e.contains("not an address") && e.contains("IP[:PORT]"),
            "{e}"
        );
        assert!(parse_addr("127.0.0.1:99999").is_err());
        let e = parse_addr("http://127.0.0.1:8080/").unwrap_err();
        assert!(e.contains("put the URL before --dashboard"), "{e}");
    }

    #[test]
    fn only_the_default_address_goes_without_a_token() {
        let n = |s: &str| needs_token(&parse_addr(s).unwrap());
        assert!(!n("127.0.0.1:0"));
        assert!(!n("[::1]:8089"));
        assert!(n("127.0.0.2"));
        assert!(n("0.0.0.0:8089"));
        assert!(n("192.168.1.10"));
    }

    #[test]
    fn tokens_are_compared_whole() {
        assert!(same(b"abc123", b"abc123"));
        assert!(!same(b"abc124", b"abc123"));
        assert!(!same(b"abc12", b"abc123"));
        assert!(!same(b"abc1234", b"abc123"));
        assert!(!same(b"", b"abc123"));
        // A missing byte never matches, whatever the token holds.
        assert!(!same(b"", b"\xff"));
        assert!(!same(b"", b"\x00"));
    }

    #[test]
    fn made_tokens_are_long_and_differ() {
        let (a, b) = (make_token().unwrap(), make_token().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert!(check_token(&a).is_ok());
        assert!(check_token("").is_err());
        assert!(check_token("a b").is_err());
    }

    #[test]
    fn hosts_that_name_this_machine() {
        assert!(local_host("127.0.0.1:8089"));
        assert!(local_host("localhost:8089"));
        assert!(local_host("LOCALHOST"));
        assert!(local_host("[::1]:8089"));
        assert!(local_host("127.0.0.2"));
        assert!(!local_host("evil.example:8089"));
        assert!(!local_host("evil.example"));
        assert!(!local_host(""));
    }
}
