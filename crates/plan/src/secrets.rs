//! Secrets never reach an output. What counts as one: headers and query
//! parameters whose names look like credentials, by the lists below (and
//! the user's additions), and a URL's userinfo. Outputs show `***` in their
//! place; the request actually sent is unchanged. One home for the rule:
//! every output (the result's plan, `--dry-run`, reports, log lines) asks
//! here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What replaces a secret in an output.
pub const MASK: &str = "***";

/// Words that make a header or parameter name a secret: the name, or any
/// of its parts split at `-`, `_` and `.`, matched without case.
/// `Authorization`, `Cookie`, `X-Api-Key`, `access_token`, `X-Amz-Signature`.
pub const SECRET_WORDS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "auth",
    "token",
    "key",
    "apikey",
    "secret",
    "password",
    "passwd",
    "pwd",
    "pass",
    "sig",
    "signature",
    "session",
    "sessionid",
    "sid",
    "credential",
    "credentials",
    "jwt",
    "csrf",
    "xsrf",
];

/// How a run's outputs treat secrets; recorded in the plan (and so in the
/// result), so a reader knows whether secrets were shown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Secrets {
    /// `--show-secrets`: outputs show everything as sent.
    #[serde(default)]
    pub shown: bool,
    /// More header names to hide (`--redact-header`), besides [`SECRET_WORDS`].
    #[serde(default)]
    pub headers: Vec<String>,
    /// More query parameter names to hide (`--redact-param`).
    #[serde(default)]
    pub params: Vec<String>,
}

fn looks_secret(name: &str, extra: &[String]) -> bool {
    let lower = name.trim().to_ascii_lowercase();
    if extra.iter().any(|e| e.eq_ignore_ascii_case(lower.as_str())) {
        return true;
    }
    SECRET_WORDS.contains(&lower.as_str())
        || lower
            .split(['-', '_', '.'])
            .any(|part| SECRET_WORDS.contains(&part))
}

impl Secrets {
    /// True when a header of this name is hidden in outputs.
    pub fn header_is_secret(&self, name: &str) -> bool {
        !self.shown && looks_secret(name, &self.headers)
    }

    /// A header's value as outputs show it.
    pub fn header_value<'a>(&self, name: &str, value: &'a str) -> &'a str {
        if self.header_is_secret(name) {
            MASK
        } else {
            value
        }
    }

    /// A URL, or a path with a query, as outputs show it: the userinfo's
    /// password and secret query values are `***`.
    pub fn url(&self, text: &str) -> String {
        if self.shown {
            return text.to_owned();
        }
        let (before, fragment) = match text.split_once('#') {
            Some((b, f)) => (b, Some(f)),
            None => (text, None),
        };
        let (base, query) = match before.split_once('?') {
            Some((b, q)) => (b, Some(q)),
            None => (before, None),
        };
        let mut out = userinfo(base);
        if let Some(q) = query {
            out.push('?');
            let parts: Vec<String> = q
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((name, _)) if looks_secret(&decode(name), &self.params) => {
                        format!("{name}={MASK}")
                    }
                    _ => pair.to_owned(),
                })
                .collect();
            out.push_str(&parts.join("&"));
        }
        if let Some(f) = fragment {
            out.push('#');
            out.push_str(f);
        }
        out
    }

    /// Every place in `text` (a log line, an error) where one of `secrets`
    /// (values known to be secret) appears, masked.
    pub fn scrub(&self, text: &str, secrets: &[&str]) -> String {
        if self.shown {
            return text.to_owned();
        }
        let mut out = text.to_owned();
        for s in secrets.iter().filter(|s| s.len() >= 3) {
            out = out.replace(s, MASK);
        }
        out
    }
}

/// `scheme://user:password@host/…` → `scheme://user:***@host/…`.
fn userinfo(base: &str) -> String {
    let Some(scheme_end) = base.find("://").map(|i| i + 3) else {
        return base.to_owned();
    };
    let authority_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    let authority = &base[scheme_end..authority_end];
    match authority.rsplit_once('@') {
        Some((info, host)) => {
            let user = info.split_once(':').map_or(info, |(u, _)| u);
            let shown = if info.contains(':') {
                format!("{user}:{MASK}")
            } else {
                // A lone token in the user part (https://TOKEN@host/) is a
                // credential too.
                MASK.to_owned()
            };
            format!(
                "{}{shown}@{host}{}",
                &base[..scheme_end],
                &base[authority_end..]
            )
        }
        None => base.to_owned(),
    }
}

/// Percent-decoding of a parameter name, enough to match it.
fn decode(name: &str) -> String {
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len()
                && bytes[i + 1].is_ascii_hexdigit()
                && bytes[i + 2].is_ascii_hexdigit() =>
            {
                let hex = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
                out.push(hex(bytes[i + 1]) * 16 + hex(bytes[i + 2]));
                i += 3;
                continue;
            }
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_looking_headers_are_hidden() {
        let s = Secrets::default();
        for name in [
            "Authorization",
            "proxy-authorization",
            "Cookie",
            "Set-Cookie",
            "X-Api-Key",
            "X-Auth-Token",
            "apikey",
            "X-CSRF-Token",
        ] {
            assert!(s.header_is_secret(name), "{name}");
        }
        for name in [
            "Accept",
            "Content-Type",
            "User-Agent",
            "Keep-Alive",
            "X-Request-Id",
        ] {
            assert!(!s.header_is_secret(name), "{name}");
        }
        let s = Secrets {
            headers: vec!["X-Tenant".into()],
            ..Secrets::default()
        };
        assert_eq!(s.header_value("x-tenant", "acme"), MASK);
        let shown = Secrets {
            shown: true,
            ..Secrets::default()
        };
        assert_eq!(shown.header_value("Authorization", "Bearer t"), "Bearer t");
    }

    #[test]
    fn urls_lose_passwords_and_secret_parameters() {
        let s = Secrets::default();
        assert_eq!(
            s.url("http://ann:hunter2@h:8080/a?page=2&access_token=abc&sig=x#top"),
            "http://ann:***@h:8080/a?page=2&access_token=***&sig=***#top"
        );
        assert_eq!(s.url("https://TOKEN123@h/"), "https://***@h/");
        assert_eq!(
            s.url("/search?q=item&api%5Fkey=z"),
            "/search?q=item&api%5Fkey=***"
        );
        assert_eq!(s.url("/plain/path"), "/plain/path");
        assert_eq!(s.url("/?design=1&flag"), "/?design=1&flag");
        let s = Secrets {
            params: vec!["tenant".into()],
            ..Secrets::default()
        };
        assert_eq!(s.url("/x?tenant=acme"), "/x?tenant=***");
    }
}
