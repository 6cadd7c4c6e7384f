//! The request template, and its encoding into the bytes sent on every
//! request (encoded once per run, never per request).

use crate::Target;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Header {
    pub name: String,
    pub value: String,
}

/// What to send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RequestSpec {
    pub method: String,
    pub headers: Vec<Header>,
    /// Request body; in the JSON contract only its length is kept.
    #[serde(skip)]
    pub body: Vec<u8>,
    /// Length of `body` in bytes.
    pub body_bytes: u64,
}

impl RequestSpec {
    pub fn new(method: &str, headers: Vec<Header>, body: Vec<u8>) -> Self {
        RequestSpec {
            method: method.to_owned(),
            headers,
            body_bytes: body.len() as u64,
            body,
        }
    }

    fn has_header(&self, name: &str) -> bool {
        self.headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case(name))
    }

    /// True for methods whose responses never carry a body (RFC 9110 §9.3.2).
    pub fn is_head(&self) -> bool {
        crate::method::is_head(self.method.as_bytes())
    }

    /// True when retrying the request cannot change server state twice.
    pub fn is_idempotent(&self) -> bool {
        crate::method::is_idempotent(self.method.as_bytes())
    }

    /// The full HTTP/1.1 request. User headers win over the defaults
    /// (Host, User-Agent, Accept); `Connection: close` is added when the
    /// run does not keep connections alive.
    pub fn encode(&self, target: &Target, keepalive: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(128 + self.body.len());
        out.extend_from_slice(self.method.as_bytes());
        out.push(b' ');
        out.extend_from_slice(target.path.as_bytes());
        out.extend_from_slice(b" HTTP/1.1\r\n");
        let mut put = |name: &str, value: &str| {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        };
        if !self.has_header("host") {
            put("Host", &target.host_header);
        }
        if !self.has_header("user-agent") {
            put("User-Agent", concat!("yace/", env!("CARGO_PKG_VERSION")));
        }
        if !self.has_header("accept") {
            put("Accept", "*/*");
        }
        if !keepalive && !self.has_header("connection") {
            put("Connection", "close");
        }
        for h in &self.headers {
            put(&h.name, &h.value);
        }
        if (!self.body.is_empty() || self.method.eq_ignore_ascii_case("POST"))
            && !self.has_header("content-length")
            && !self.has_header("transfer-encoding")
        {
            put("Content-Length", &self.body.len().to_string());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&self.body);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Target {
        Target::parse("http://127.0.0.1:8080/a?b=1").unwrap()
    }

    #[test]
    fn get_with_defaults() {
        let r = RequestSpec::new("GET", vec![], vec![]);
        let s = String::from_utf8(r.encode(&target(), true)).unwrap();
        assert!(
            s.starts_with("GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"),
            "{s}"
        );
        assert!(s.ends_with("Accept: */*\r\n\r\n"), "{s}");
        assert!(!s.contains("Connection"));
    }

    #[test]
    fn post_body_and_close() {
        let h = vec![Header {
            name: "Content-Type".into(),
            value: "application/json".into(),
        }];
        let r = RequestSpec::new("POST", h, b"{}".to_vec());
        let s = String::from_utf8(r.encode(&target(), false)).unwrap();
        assert!(s.contains("Connection: close\r\n"));
        assert!(
            s.contains("Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"),
            "{s}"
        );
    }

    #[test]
    fn user_headers_override_defaults() {
        let h = vec![Header {
            name: "host".into(),
            value: "example.test".into(),
        }];
        let r = RequestSpec::new("GET", h, vec![]);
        let s = String::from_utf8(r.encode(&target(), true)).unwrap();
        assert_eq!(s.matches("ost: ").count(), 1, "{s}");
        assert!(s.contains("host: example.test\r\n"));
    }
}
