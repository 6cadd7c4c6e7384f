//! Predicates on HTTP request methods (RFC 9110 §9.2), shared by every
//! layer that decides about retries or bodies. They live here, in the
//! lowest crate, because both the engine and the scenario compiler (which
//! does not link the engine) need the same answer; `engine::http`
//! re-exports them so the client path has one place to look (issue #11).

/// Methods whose repetition cannot change server state twice (RFC 9110
/// §9.2.2): the only ones re-sent after a stale keep-alive connection.
pub fn is_idempotent(method: &[u8]) -> bool {
    const IDEMPOTENT: [&[u8]; 6] = [b"GET", b"HEAD", b"OPTIONS", b"TRACE", b"PUT", b"DELETE"];
    IDEMPOTENT.iter().any(|m| method.eq_ignore_ascii_case(m))
}

/// Methods defined as read-only (RFC 9110 §9.2.1).
pub fn is_safe(method: &[u8]) -> bool {
    const SAFE: [&[u8]; 4] = [b"GET", b"HEAD", b"OPTIONS", b"TRACE"];
    SAFE.iter().any(|m| method.eq_ignore_ascii_case(m))
}

/// HEAD: its response never carries a body (RFC 9110 §9.3.2).
pub fn is_head(method: &[u8]) -> bool {
    method.eq_ignore_ascii_case(b"HEAD")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates() {
        for m in ["GET", "head", "OPTIONS", "TRACE", "PUT", "DELETE"] {
            assert!(is_idempotent(m.as_bytes()), "{m}");
        }
        for m in ["POST", "PATCH", "LOCK", "CONNECT", ""] {
            assert!(!is_idempotent(m.as_bytes()), "{m}");
        }
        assert!(is_safe(b"GET") && !is_safe(b"PUT") && !is_safe(b"DELETE"));
        assert!(is_head(b"HEAD") && is_head(b"head") && !is_head(b"HEADX"));
    }
}
