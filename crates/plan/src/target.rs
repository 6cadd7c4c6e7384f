//! The URL under test, split into what the engine needs on the wire.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    Http,
    Https,
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
}

impl Target {
    /// Parses a URL; a missing scheme means `http://` (as in ab and curl).
    pub fn parse(input: &str) -> Result<Target, TargetError> {
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
        })
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
