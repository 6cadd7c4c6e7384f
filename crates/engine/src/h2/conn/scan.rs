//! The capture scan: what a response head's fields say (status,
//! content-length, server) and whether they are well-formed (RFC 9113
//! §8.3), checked field by field as HPACK decodes them, without collecting
//! the fields — except for capture streams, whose fields it keeps as
//! (name, value) for the typed capture.

use crate::h2::hpack::{Class, Field};

/// Largest response head kept for a capture stream (names and values).
const MAX_HEAD: usize = crate::codec::MAX_HEAD;

/// What one header block says, field by field.
#[derive(Debug)]
pub(super) struct Scan {
    trailers: bool,
    capture: bool,
    pub(super) status: u16,
    pub(super) content_length: Option<u64>,
    pub(super) server: bool,
    /// A regular field was seen: pseudo-headers must come before (§8.3).
    regular: bool,
    /// Capture streams: bytes of the fields kept so far.
    kept: usize,
    /// Why the block is malformed; decoding goes on for the HPACK table.
    pub(super) bad: Option<&'static str>,
}

impl Scan {
    /// `trailers`: the stream's final head came already. `capture`: also
    /// keep the fields.
    #[inline]
    pub(super) fn new(trailers: bool, capture: bool) -> Scan {
        Scan {
            trailers,
            capture,
            status: 0,
            content_length: None,
            server: false,
            regular: false,
            kept: 0,
            bad: None,
        }
    }

    /// One decoded field: checks it, keeps what the caller is told, and for
    /// capture streams appends it to `fields`.
    pub(super) fn field(
        &mut self,
        f: Field<'_>,
        fields: &mut Vec<(String, String)>,
        server: &mut Vec<u8>,
    ) {
        if self.bad.is_some() {
            return;
        }
        let value = f.value.unwrap_or_default();
        match f.class {
            Class::Status if !self.trailers => {
                if self.status != 0 || self.regular {
                    self.bad = Some("misplaced or repeated :status");
                    return;
                }
                match parse_status(value) {
                    Some(s) => self.status = s,
                    None => {
                        self.bad = Some("invalid :status");
                        return;
                    }
                }
                if self.capture {
                    fields.clear();
                    self.kept = 0;
                }
                return;
            }
            Class::Status | Class::OtherPseudo => {
                self.bad = Some(if self.trailers {
                    "pseudo-header field in trailers"
                } else {
                    "request pseudo-header field in a response"
                });
                return;
            }
            Class::Invalid => {
                self.bad = Some("invalid field name");
                return;
            }
            Class::ConnSpecific => {
                self.bad = Some("connection-specific field in a response");
                return;
            }
            _ if self.trailers => return,
            Class::ContentLength => match crate::http::parse_length_exact(value) {
                Some(l) if self.content_length.is_none_or(|c| c == l) => {
                    self.content_length = Some(l)
                }
                _ => {
                    self.bad = Some("invalid content-length");
                    return;
                }
            },
            Class::Server => {
                if !self.server {
                    server.extend_from_slice(value);
                    self.server = true;
                }
            }
            Class::Other => {}
        }
        self.regular = true;
        if self.capture {
            // A value a flow will read must be a valid one (§8.2.1): no
            // NUL, CR or LF, no leading or trailing white space.
            if value.iter().any(|&b| b == 0 || b == b'\r' || b == b'\n')
                || value.first().is_some_and(|&b| b == b' ' || b == b'\t')
                || value.last().is_some_and(|&b| b == b' ' || b == b'\t')
            {
                self.bad = Some("invalid field value");
                return;
            }
            self.kept += f.name.len() + value.len() + 4;
            if self.kept > MAX_HEAD {
                self.bad = Some("response head larger than 64 KiB");
                return;
            }
            fields.push((
                String::from_utf8_lossy(f.name).into_owned(),
                String::from_utf8_lossy(value).into_owned(),
            ));
        }
    }
}

/// Three digits, 100–999.
fn parse_status(v: &[u8]) -> Option<u16> {
    match *v {
        [a @ b'1'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9'] => {
            Some((a - b'0') as u16 * 100 + (b - b'0') as u16 * 10 + (c - b'0') as u16)
        }
        _ => None,
    }
}
