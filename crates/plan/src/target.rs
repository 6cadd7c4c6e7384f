//! The URL under test, split into what the engine needs on the wire.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    Http,
    Https,
    /// FastCGI straight to the application server (php-fpm): `fcgi://` or
    /// `fcgi+unix:` (design 018).
    Fcgi,
}

/// A parsed target URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Target {
    /// The URL as the user gave it, normalised.
    pub url: String,
    pub scheme: Scheme,
    /// Host name or IP literal (IPv6 without brackets).
    pub host: String,
    pub port: u16,
    /// Path and query, as sent in the request line.
    pub path: String,
    /// Value of the `Host` header: host, plus `:port` when not the default.
    pub host_header: String,
    /// A unix-domain socket connections go to instead of `host:port`
    /// (`unix:SOCKET:/PATH`, `fcgi+unix:SOCKET:/PATH`, `--unix-socket`);
    /// `host` then only names the server in the `Host` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unix: Option<String>,
}

/// FastCGI's port when an `fcgi://` URL gives none (php-fpm's usual
/// `listen = 127.0.0.1:9000`).
pub const FCGI_PORT: u16 = 9000;

/// The forms a unix-socket target takes, for errors.
pub const UNIX_FORMS: &str = "unix:/path/to.sock:/PATH (HTTP) or fcgi+unix:/path/to.sock:/PATH \
                              (FastCGI); the first `:/` ends the socket's path";

/// Splits `SOCKET[:/PATH]` (what follows `unix:` or `fcgi+unix:`) into the
/// socket's path and the request path: the first `:/` parts them, so a
/// query may hold `:/` (`?next=http://…`) but a socket path may not.
/// `None` for the path when there is no `:/`. The monitor's
/// `fpm:fcgi+unix:` form uses the same rule.
pub fn split_unix(rest: &str) -> (&str, Option<&str>) {
    match rest.find(":/") {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("'{0}' is not a valid URL: {1}")]
    Invalid(String, String),
    #[error("'{0}' uses scheme '{1}'; yace speaks http:// and https://")]
    Scheme(String, String),
    #[error("'{0}' is a malformed URL: the scheme needs '://'; did you mean {1}://{2}?")]
    Malformed(String, &'static str, String),
    #[error("'{0}' has no host")]
    NoHost(String),
    #[error("'{0}': {1} (use {UNIX_FORMS})")]
    Unix(String, String),
}

impl Target {
    /// Parses a URL; a missing scheme means `http://` (as in ab and curl).
    /// `unix:SOCKET:/PATH` is HTTP over a unix socket, `fcgi://HOST[:PORT]/PATH`
    /// and `fcgi+unix:SOCKET:/PATH` FastCGI.
    pub fn parse(input: &str) -> Result<Target, TargetError> {
        for (prefix, scheme) in [("unix:", Scheme::Http), ("fcgi+unix:", Scheme::Fcgi)] {
            if let Some(rest) = input.strip_prefix(prefix) {
                return Self::on_unix(input, prefix, scheme, rest);
            }
        }
        if let Some(rest) = input.strip_prefix("fcgi://") {
            // The URL parser knows no port for fcgi: it is parsed as http
            // with FastCGI's port filled in when none is given.
            let mut t = Self::parse(&format!("http://{rest}"))?;
            let explicit = rest
                .split(['/', '?'])
                .next()
                .is_some_and(|a| a.rsplit_once(']').map_or(a, |(_, p)| p).contains(':'));
            if !explicit {
                t.port = FCGI_PORT;
            }
            t.scheme = Scheme::Fcgi;
            t.url = t.url.replacen("http://", "fcgi://", 1);
            if !explicit {
                // The URL as shown names the port it goes to.
                let host = t.host_header.clone();
                t.url = t.url.replacen(&host, &format!("{host}:{FCGI_PORT}"), 1);
            }
            return Ok(t);
        }
        if !input.contains("://") {
            // `http//host/`, `https:/host/`, `http:host`: a scheme with a
            // broken separator, not a host called "http".
            let lower = input.to_ascii_lowercase();
            for scheme in ["https", "http"] {
                let Some(rest) = lower.strip_prefix(scheme) else {
                    continue;
                };
                let broken = rest.starts_with("//")
                    || rest.starts_with(":/")
                    || (rest.starts_with(':')
                        && !rest[1..].starts_with(|c: char| c.is_ascii_digit()));
                if broken {
                    let sep = rest.len() - rest.trim_start_matches([':', '/']).len();
                    let tail = input[scheme.len() + sep..].to_owned();
                    return Err(TargetError::Malformed(input.to_owned(), scheme, tail));
                }
            }
        }
        let with_scheme = if input.contains("://") {
            input.to_owned()
        } else {
            format!("http://{input}")
        };
        let u = url::Url::parse(&with_scheme)
            .map_err(|e| TargetError::Invalid(input.to_owned(), e.to_string()))?;
        let scheme = match u.scheme() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            other => return Err(TargetError::Scheme(input.to_owned(), other.to_owned())),
        };
        let host = match u.host() {
            Some(url::Host::Ipv6(a)) => a.to_string(),
            Some(h) => h.to_string(),
            None => return Err(TargetError::NoHost(input.to_owned())),
        };
        let default_port = if scheme == Scheme::Http { 80 } else { 443 };
        let port = u.port().unwrap_or(default_port);
        let mut path = u.path().to_owned();
        if let Some(q) = u.query() {
            path.push('?');
            path.push_str(q);
        }
        let host_part = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.clone()
        };
        let host_header = if port == default_port {
            host_part
        } else {
            format!("{host_part}:{port}")
        };
        Ok(Target {
            url: u.to_string(),
            scheme,
            host,
            port,
            path,
            host_header,
            unix: None,
        })
    }

    /// `unix:SOCKET[:/PATH]` or `fcgi+unix:SOCKET[:/PATH]`: the `Host` is
    /// `localhost`, as curl sends with `--unix-socket`.
    fn on_unix(
        input: &str,
        prefix: &str,
        scheme: Scheme,
        rest: &str,
    ) -> Result<Target, TargetError> {
        let bad = |why: &str| TargetError::Unix(input.to_owned(), why.to_owned());
        let (sock, path) = split_unix(rest);
        let sock = sock.strip_prefix("//").unwrap_or(sock);
        if sock.is_empty() {
            return Err(bad("no socket path"));
        }
        if !sock.starts_with('/') {
            return Err(bad(&format!("the socket path {sock:?} is not absolute")));
        }
        // The path and query as a URL parser normalises them.
        let path = path.unwrap_or("/");
        let u = url::Url::parse(&format!("http://localhost{path}"))
            .map_err(|e| bad(&format!("the path {path:?} is not valid: {e}")))?;
        let mut path = u.path().to_owned();
        if let Some(q) = u.query() {
            path.push('?');
            path.push_str(q);
        }
        Ok(Target {
            url: format!("{prefix}{sock}:{path}"),
            scheme,
            host: "localhost".to_owned(),
            port: if scheme == Scheme::Fcgi {
                FCGI_PORT
            } else {
                80
            },
            path,
            host_header: "localhost".to_owned(),
            unix: Some(sock.to_owned()),
        })
    }

    /// FastCGI, over TCP or a unix socket.
    pub fn is_fcgi(&self) -> bool {
        self.scheme == Scheme::Fcgi
    }

    /// Where connections go, for messages: the socket's path, or `host:port`.
    pub fn endpoint(&self) -> String {
        match &self.unix {
            Some(p) => p.clone(),
            None if self.host.contains(':') => format!("[{}]:{}", self.host, self.port),
            None => format!("{}:{}", self.host, self.port),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_host_port_path_query() {
        let t = Target::parse("http://127.0.0.1:8080/sleep?ms=20").unwrap();
        assert_eq!(t.host, "127.0.0.1");
        assert_eq!(t.port, 8080);
        assert_eq!(t.path, "/sleep?ms=20");
        assert_eq!(t.host_header, "127.0.0.1:8080");
    }

    #[test]
    fn default_scheme_port_and_path() {
        let t = Target::parse("localhost").unwrap();
        assert_eq!(t.scheme, Scheme::Http);
        assert_eq!(t.port, 80);
        assert_eq!(t.path, "/");
        assert_eq!(t.host_header, "localhost");
    }

    #[test]
    fn ipv6_literal() {
        let t = Target::parse("http://[::1]:9000/x").unwrap();
        assert_eq!(t.host, "::1");
        assert_eq!(t.host_header, "[::1]:9000");
    }

    #[test]
    fn a_broken_scheme_separator_is_a_malformed_url() {
        for bad in [
            "http//host/",
            "https//host/x",
            "http:/host/",
            "http:host",
            "HTTP//h",
        ] {
            assert!(
                matches!(Target::parse(bad), Err(TargetError::Malformed(..))),
                "{bad}"
            );
        }
        let e = Target::parse("http//example.com/x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean http://example.com/x?"), "{e}");
        // A host that merely starts with the letters, and host:port, still parse.
        for good in [
            "httpbin.org/get",
            "http:8080",
            "https-proxy:3128/",
            "localhost:80",
        ] {
            assert!(Target::parse(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn unix_socket_targets_split_at_the_first_colon_slash() {
        let t = Target::parse("unix:/run/nginx.sock:/a/b?next=http://x/").unwrap();
        assert_eq!(t.unix.as_deref(), Some("/run/nginx.sock"));
        assert_eq!(t.scheme, Scheme::Http);
        assert_eq!(t.path, "/a/b?next=http://x/");
        assert_eq!(t.host_header, "localhost");
        assert_eq!(t.url, "unix:/run/nginx.sock:/a/b?next=http://x/");
        let t = Target::parse("unix:/tmp/a:b.sock").unwrap();
        assert_eq!(t.unix.as_deref(), Some("/tmp/a:b.sock"));
        assert_eq!(t.path, "/");
        let t = Target::parse("fcgi+unix:/run/php/fpm.sock:/index.php?x=1").unwrap();
        assert_eq!(t.scheme, Scheme::Fcgi);
        assert_eq!(t.unix.as_deref(), Some("/run/php/fpm.sock"));
        assert_eq!(t.path, "/index.php?x=1");
        assert_eq!(t.endpoint(), "/run/php/fpm.sock");
        for bad in ["unix:", "unix:relative.sock:/x", "fcgi+unix::/x"] {
            let e = Target::parse(bad).unwrap_err().to_string();
            assert!(e.contains("unix:/path/to.sock:/PATH"), "{bad}: {e}");
        }
    }

    #[test]
    fn fcgi_urls_default_to_port_9000() {
        let t = Target::parse("fcgi://127.0.0.1/index.php").unwrap();
        assert_eq!((t.scheme, t.port), (Scheme::Fcgi, 9000));
        assert_eq!(t.url, "fcgi://127.0.0.1:9000/index.php");
        assert_eq!(t.unix, None);
        let t = Target::parse("fcgi://127.0.0.1:9001/x.php?a=b").unwrap();
        assert_eq!((t.port, t.path.as_str()), (9001, "/x.php?a=b"));
        assert_eq!(t.url, "fcgi://127.0.0.1:9001/x.php?a=b");
        let t = Target::parse("fcgi://[::1]/x.php").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 9000));
        assert_eq!(t.endpoint(), "[::1]:9000");
    }

    #[test]
    fn rejects_other_schemes() {
        assert!(matches!(
            Target::parse("ftp://x/"),
            Err(TargetError::Scheme(..))
        ));
        assert!(matches!(
            Target::parse("http://"),
            Err(TargetError::Invalid(..))
        ));
    }
}
