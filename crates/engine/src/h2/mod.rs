//! A sans-IO HTTP/2 client connection (RFC 9113) with its own HPACK
//! (RFC 7541): no sockets, no async, no allocation per response.
//!
//! The caller owns the socket. It writes [`ClientConn::pending_out`] (the
//! preface and settings first), feeds every read to [`ClientConn::feed`],
//! which reports [`Event`]s per stream by the caller's `token`, and opens
//! streams with a [`Request`] converted once from the plan's HTTP/1.1 bytes
//! by [`encode_request`]. Frames for many streams accumulate in one buffer,
//! so one `write` carries them all.
//!
//! Body bytes are never copied except for streams that asked to capture
//! them; response heads are decoded only as far as the status,
//! content-length and server (everything, for capture streams), while the
//! HPACK dynamic table is kept exact.
//!
//! ```
//! use yace_engine::h2::{encode_request, ClientConn, Event};
//!
//! let req = encode_request(b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", true).unwrap();
//! let mut conn = ClientConn::new();
//! let id = conn.open(&req, 7, false).unwrap(); // token 7
//! assert_eq!(id, 1);
//! // Write conn.pending_out() to the socket; tell how much went.
//! let n = conn.pending_out().len();
//! conn.wrote(n);
//! // The server's SETTINGS, then HEADERS for stream 1: ":status 200",
//! // END_STREAM.
//! let read = [&[0, 0, 0, 4, 0, 0, 0, 0, 0][..], &[0, 0, 1, 1, 5, 0, 0, 0, 1, 0x88]].concat();
//! let mut done = Vec::new();
//! conn.feed(&read, &mut |e| {
//!     if let Event::End { token } = e {
//!         done.push(token)
//!     }
//! })
//! .unwrap();
//! assert_eq!(done, [7]);
//! assert!(!conn.pending_out().is_empty()); // our SETTINGS ACK
//! ```

mod conn;
mod frame;
mod hpack;
mod huffman;
mod request;

pub use conn::{ClientConn, ConnError, Event, OpenError};
pub use request::{encode_request, Request, RequestError};

/// What a client sends before its first frame (RFC 9113 §3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Error codes of RST_STREAM and GOAWAY (RFC 9113 §7).
pub mod code {
    pub const NO_ERROR: u32 = 0x0;
    pub const PROTOCOL_ERROR: u32 = 0x1;
    pub const INTERNAL_ERROR: u32 = 0x2;
    pub const FLOW_CONTROL_ERROR: u32 = 0x3;
    pub const SETTINGS_TIMEOUT: u32 = 0x4;
    pub const STREAM_CLOSED: u32 = 0x5;
    pub const FRAME_SIZE_ERROR: u32 = 0x6;
    pub const REFUSED_STREAM: u32 = 0x7;
    pub const CANCEL: u32 = 0x8;
    pub const COMPRESSION_ERROR: u32 = 0x9;
    pub const CONNECT_ERROR: u32 = 0xa;
    pub const ENHANCE_YOUR_CALM: u32 = 0xb;
    pub const INADEQUATE_SECURITY: u32 = 0xc;
    pub const HTTP_1_1_REQUIRED: u32 = 0xd;

    /// The code's name for reports; codes outside RFC 9113 are "unknown".
    pub fn name(code: u32) -> &'static str {
        const NAMES: [&str; 14] = [
            "NO_ERROR",
            "PROTOCOL_ERROR",
            "INTERNAL_ERROR",
            "FLOW_CONTROL_ERROR",
            "SETTINGS_TIMEOUT",
            "STREAM_CLOSED",
            "FRAME_SIZE_ERROR",
            "REFUSED_STREAM",
            "CANCEL",
            "COMPRESSION_ERROR",
            "CONNECT_ERROR",
            "ENHANCE_YOUR_CALM",
            "INADEQUATE_SECURITY",
            "HTTP_1_1_REQUIRED",
        ];
        NAMES.get(code as usize).copied().unwrap_or("unknown")
    }
}
