//! Frame layout (RFC 9113 §4.1, §6): the 9-byte header, types, flags,
//! settings, and writers that append whole frames to the output buffer.

pub(crate) const HEADER_LEN: usize = 9;

pub(crate) const DATA: u8 = 0x0;
pub(crate) const HEADERS: u8 = 0x1;
pub(crate) const PRIORITY: u8 = 0x2;
pub(crate) const RST_STREAM: u8 = 0x3;
pub(crate) const SETTINGS: u8 = 0x4;
pub(crate) const PUSH_PROMISE: u8 = 0x5;
pub(crate) const PING: u8 = 0x6;
pub(crate) const GOAWAY: u8 = 0x7;
pub(crate) const WINDOW_UPDATE: u8 = 0x8;
pub(crate) const CONTINUATION: u8 = 0x9;

/// A frame header's flags byte (§4.1). A bit means what the frame's type
/// says it means: END_STREAM and ACK are both 0x1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Flags(u8);

impl Flags {
    pub const NONE: Flags = Flags(0);
    /// DATA, HEADERS.
    pub const END_STREAM: Flags = Flags(0x1);
    /// SETTINGS, PING.
    pub const ACK: Flags = Flags(0x1);
    /// HEADERS, CONTINUATION.
    pub const END_HEADERS: Flags = Flags(0x4);
    /// DATA, HEADERS.
    pub const PADDED: Flags = Flags(0x8);
    /// HEADERS: stream dependency and weight precede the header block.
    pub const PRIORITY: Flags = Flags(0x20);

    /// Every bit of `f` is set.
    #[inline]
    pub const fn contains(self, f: Flags) -> bool {
        self.0 & f.0 == f.0
    }

    /// Any byte, for tests that send flags a frame type does not define.
    #[cfg(test)]
    pub const fn from_bits(b: u8) -> Flags {
        Flags(b)
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;

    #[inline]
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for Flags {
    #[inline]
    fn bitor_assign(&mut self, rhs: Flags) {
        self.0 |= rhs.0;
    }
}

pub(crate) const SETTINGS_HEADER_TABLE_SIZE: u16 = 0x1;
pub(crate) const SETTINGS_ENABLE_PUSH: u16 = 0x2;
pub(crate) const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub(crate) const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
pub(crate) const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;

/// SETTINGS_MAX_FRAME_SIZE's initial value, and the least a peer may set.
pub(crate) const DEFAULT_MAX_FRAME: u32 = 16_384;
pub(crate) const MAX_MAX_FRAME: u32 = (1 << 24) - 1;
/// Initial flow-control window of streams and of the connection.
pub(crate) const DEFAULT_WINDOW: u32 = 65_535;
/// The largest window; above it is a FLOW_CONTROL_ERROR (§6.9.1).
pub(crate) const MAX_WINDOW: u32 = (1 << 31) - 1;

/// A parsed frame header. The stream id's reserved bit is dropped (§4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head {
    pub len: u32,
    pub ty: u8,
    pub flags: Flags,
    pub stream: u32,
}

impl Head {
    pub fn parse(b: &[u8; HEADER_LEN]) -> Head {
        Head {
            len: u32::from_be_bytes([0, b[0], b[1], b[2]]),
            ty: b[3],
            flags: Flags(b[4]),
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & MAX_WINDOW,
        }
    }
}

pub(crate) fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

pub(crate) fn put_head(out: &mut Vec<u8>, len: usize, ty: u8, flags: Flags, stream: u32) {
    debug_assert!(len <= MAX_MAX_FRAME as usize);
    let l = (len as u32).to_be_bytes();
    let s = stream.to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], ty, flags.0, s[0], s[1], s[2], s[3]]);
}

pub(crate) fn put_settings(out: &mut Vec<u8>, settings: &[(u16, u32)]) {
    put_head(out, settings.len() * 6, SETTINGS, Flags::NONE, 0);
    for &(id, v) in settings {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
}

pub(crate) fn put_settings_ack(out: &mut Vec<u8>) {
    put_head(out, 0, SETTINGS, Flags::ACK, 0);
}

pub(crate) fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_head(out, 4, WINDOW_UPDATE, Flags::NONE, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

pub(crate) fn put_rst(out: &mut Vec<u8>, stream: u32, code: u32) {
    put_head(out, 4, RST_STREAM, Flags::NONE, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

pub(crate) fn put_ping_ack(out: &mut Vec<u8>, payload: &[u8]) {
    put_head(out, payload.len(), PING, Flags::ACK, 0);
    out.extend_from_slice(payload);
}

pub(crate) fn put_goaway(out: &mut Vec<u8>, last_stream: u32, code: u32, debug: &[u8]) {
    put_head(out, 8 + debug.len(), GOAWAY, Flags::NONE, 0);
    out.extend_from_slice(&last_stream.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
    out.extend_from_slice(debug);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_drops_reserved_bit() {
        let mut out = Vec::new();
        put_head(
            &mut out,
            0x012345,
            HEADERS,
            Flags::END_HEADERS | Flags::END_STREAM,
            7,
        );
        assert_eq!(out, [0x01, 0x23, 0x45, 1, 5, 0, 0, 0, 7]);
        out[5] |= 0x80;
        let h = Head::parse(out[..9].try_into().unwrap());
        assert_eq!(
            h,
            Head {
                len: 0x012345,
                ty: HEADERS,
                flags: Flags(5),
                stream: 7
            }
        );
    }

    #[test]
    fn writers_frame_their_payloads() {
        let mut out = Vec::new();
        put_settings(&mut out, &[(SETTINGS_ENABLE_PUSH, 0), (4, 0x3fff_ffff)]);
        assert_eq!(out[..9], [0, 0, 12, SETTINGS, 0, 0, 0, 0, 0]);
        assert_eq!(out[9..], [0, 2, 0, 0, 0, 0, 0, 4, 0x3f, 0xff, 0xff, 0xff]);
        out.clear();
        put_goaway(&mut out, 5, 1, b"x");
        assert_eq!(
            out,
            [0, 0, 9, GOAWAY, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 1, b'x']
        );
    }
}
