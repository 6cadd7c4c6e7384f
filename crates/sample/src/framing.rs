//! What exactly was wrong with an HTTP/1.1 response that the client refused
//! ([`Detail`], beside its `protocol_error` or `header_too_large` outcome),
//! and what it had to overlook in one it read ([`Lenient`]): a server out
//! of spec is told so, element by element.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The element of a response that broke a rule or a limit.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Detail {
    /// No detail (the outcome says it all).
    #[default]
    None = 0,
    /// The status line is not `HTTP/1.x NNN reason`.
    StatusLine,
    /// A header line is malformed (no colon, bad name, bad byte).
    HeaderLine,
    /// The head is larger than the head limit (`--max-head`).
    HeadTooLarge,
    /// The head has more fields than the limit (`--max-fields`).
    TooManyFields,
    /// Content-Length is not a number, or two disagree.
    ContentLength,
    /// A chunk-size line is malformed: not hexadecimal, too large, or
    /// ended by a bare LF.
    ChunkSize,
    /// A chunk-size line (extensions included) is longer than 4 KiB.
    ChunkLineTooLong,
    /// Chunk data is not followed by CRLF.
    ChunkEnd,
    /// The trailer block is larger than the head limit.
    TrailersTooLarge,
    /// The trailer block has more fields than the limit.
    TooManyTrailers,
    /// A 101 Switching Protocols nobody asked for.
    Switching,
    /// FastCGI: a record broke the protocol (version, type, request id,
    /// a stream written after its end, a fixed body's length).
    FcgiRecord,
    /// FastCGI: the request completed without a complete CGI head.
    FcgiNoHead,
    /// FastCGI: `FCGI_END_REQUEST` said `FCGI_OVERLOADED`.
    FcgiOverloaded,
    /// FastCGI: `FCGI_END_REQUEST` said `FCGI_CANT_MPX_CONN`.
    FcgiCantMpxConn,
    /// FastCGI: `FCGI_END_REQUEST` said `FCGI_UNKNOWN_ROLE`.
    FcgiUnknownRole,
    /// FastCGI: `FCGI_END_REQUEST` had a protocol status the
    /// specification does not define.
    FcgiStatus,
}

impl Detail {
    pub const COUNT: usize = 18;
    pub const ALL: [Detail; Detail::COUNT] = [
        Detail::None,
        Detail::StatusLine,
        Detail::HeaderLine,
        Detail::HeadTooLarge,
        Detail::TooManyFields,
        Detail::ContentLength,
        Detail::ChunkSize,
        Detail::ChunkLineTooLong,
        Detail::ChunkEnd,
        Detail::TrailersTooLarge,
        Detail::TooManyTrailers,
        Detail::Switching,
        Detail::FcgiRecord,
        Detail::FcgiNoHead,
        Detail::FcgiOverloaded,
        Detail::FcgiCantMpxConn,
        Detail::FcgiUnknownRole,
        Detail::FcgiStatus,
    ];

    /// A limit, not a syntax error: the outcome is `header_too_large`.
    pub fn is_limit(self) -> bool {
        matches!(
            self,
            Detail::HeadTooLarge
                | Detail::TooManyFields
                | Detail::ChunkLineTooLong
                | Detail::TrailersTooLarge
                | Detail::TooManyTrailers
        )
    }

    /// Stable snake_case name, as in the JSON result.
    pub fn name(self) -> &'static str {
        match self {
            Detail::None => "none",
            Detail::StatusLine => "status_line",
            Detail::HeaderLine => "header_line",
            Detail::HeadTooLarge => "head_too_large",
            Detail::TooManyFields => "too_many_fields",
            Detail::ContentLength => "content_length",
            Detail::ChunkSize => "chunk_size",
            Detail::ChunkLineTooLong => "chunk_line_too_long",
            Detail::ChunkEnd => "chunk_end",
            Detail::TrailersTooLarge => "trailers_too_large",
            Detail::TooManyTrailers => "too_many_trailers",
            Detail::Switching => "switching",
            Detail::FcgiRecord => "fcgi_record",
            Detail::FcgiNoHead => "fcgi_no_head",
            Detail::FcgiOverloaded => "fcgi_overloaded",
            Detail::FcgiCantMpxConn => "fcgi_cant_mpx_conn",
            Detail::FcgiUnknownRole => "fcgi_unknown_role",
            Detail::FcgiStatus => "fcgi_status",
        }
    }

    /// One line for people.
    pub fn explain(self) -> &'static str {
        match self {
            Detail::None => "",
            Detail::StatusLine => "the status line is not HTTP/1.x NNN",
            Detail::HeaderLine => "a header line is malformed",
            Detail::HeadTooLarge => "the head is larger than --max-head",
            Detail::TooManyFields => "the head has more fields than --max-fields",
            Detail::ContentLength => "Content-Length is invalid, or two disagree",
            Detail::ChunkSize => "a chunk-size line is malformed (not hexadecimal, or bare LF)",
            Detail::ChunkLineTooLong => "a chunk-size line (with extensions) is over 4 KiB",
            Detail::ChunkEnd => "chunk data is not followed by CRLF",
            Detail::TrailersTooLarge => "the trailers are larger than --max-head",
            Detail::TooManyTrailers => "the trailers have more fields than --max-fields",
            Detail::Switching => "101 Switching Protocols, which was not asked for",
            Detail::FcgiRecord => "a FastCGI record broke the protocol",
            Detail::FcgiNoHead => "FastCGI: the request ended without a CGI response head",
            Detail::FcgiOverloaded => "FastCGI: the application said FCGI_OVERLOADED",
            Detail::FcgiCantMpxConn => "FastCGI: the application said FCGI_CANT_MPX_CONN",
            Detail::FcgiUnknownRole => "FastCGI: the application said FCGI_UNKNOWN_ROLE",
            Detail::FcgiStatus => "FastCGI: END_REQUEST's protocol status is not one defined",
        }
    }
}

/// A departure from RFC 9112 that the client read past (the response
/// counts) but would not trust a connection after: the connection is
/// closed, never reused.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Lenient {
    /// Head lines ended by a bare LF instead of CRLF.
    BareLf,
    /// Both Transfer-Encoding and Content-Length (a request-smuggling
    /// vector): framed as chunked, RFC 9112 §6.3.
    TransferAndLength,
    /// A Transfer-Encoding whose final coding is not chunked: the body runs
    /// to the close, whatever Content-Length says.
    TransferNotChunked,
    /// A chunk-size line whose extensions break RFC 9112 §7.1.1 (white
    /// space with no `;`, an empty name, an unclosed quote).
    ChunkExtension,
}

impl Lenient {
    pub const COUNT: usize = 4;
    pub const ALL: [Lenient; Lenient::COUNT] = [
        Lenient::BareLf,
        Lenient::TransferAndLength,
        Lenient::TransferNotChunked,
        Lenient::ChunkExtension,
    ];

    /// This departure's bit in a [`Sample`](crate::Sample)'s `lenient`.
    pub const fn bit(self) -> u8 {
        1 << self as u8
    }

    /// One line for people.
    pub fn explain(self) -> &'static str {
        match self {
            Lenient::BareLf => "head lines ended by a bare LF, not CRLF",
            Lenient::TransferAndLength => {
                "both Transfer-Encoding and Content-Length (read as chunked)"
            }
            Lenient::TransferNotChunked => {
                "Transfer-Encoding not ending in chunked (read to the close)"
            }
            Lenient::ChunkExtension => "chunk-size lines with malformed extensions",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_hold_every_variant_in_order() {
        for (i, d) in Detail::ALL.iter().enumerate() {
            assert_eq!(*d as usize, i);
            // The name is the one the JSON result uses.
            assert_eq!(serde_json::to_value(d).unwrap(), d.name());
        }
        for (i, l) in Lenient::ALL.iter().enumerate() {
            assert_eq!(*l as usize, i);
            assert_eq!(l.bit(), 1 << i);
        }
    }
}
