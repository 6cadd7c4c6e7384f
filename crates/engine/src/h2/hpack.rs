//! HPACK (RFC 7541): the decoder for response heads, with its dynamic table,
//! and the few encoding primitives requests need.
//!
//! The decoder hands each field to a sink with its name already classified
//! (status, content-length, server, forbidden…), so the connection never
//! compares names. Values are decoded only when the caller wants them or
//! the field is indexed; other literal values are skipped undecoded.
//! Dynamic entries live in one byte arena that is compacted, never grown,
//! so a long-lived connection allocates nothing per response.

use super::huffman;
use std::collections::VecDeque;

/// What a field's name means to a client reading a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Status,
    /// Any other pseudo-header: malformed in a response.
    OtherPseudo,
    ContentLength,
    Server,
    /// Connection-specific fields, malformed in HTTP/2 (RFC 9113 §8.2.2).
    ConnSpecific,
    /// A name HTTP/2 forbids: empty, uppercase, controls, colon (§8.2.1).
    Invalid,
    Other,
}

impl Class {
    /// The connection reads these values on every response.
    fn wanted(self) -> bool {
        matches!(self, Class::Status | Class::ContentLength | Class::Server)
    }
}

pub(crate) fn classify(name: &[u8]) -> Class {
    match name {
        b":status" => Class::Status,
        [b':', ..] => Class::OtherPseudo,
        b"content-length" => Class::ContentLength,
        b"server" => Class::Server,
        b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding" | b"upgrade" => {
            Class::ConnSpecific
        }
        _ if name.is_empty()
            || name
                .iter()
                .any(|&b| b <= 0x20 || b >= 0x7f || b.is_ascii_uppercase() || b == b':') =>
        {
            Class::Invalid
        }
        _ => Class::Other,
    }
}

/// RFC 7541 Appendix A; index 1 is `STATIC[0]`.
pub(crate) const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// `classify` of each static name, precomputed (a test keeps them equal).
const STATIC_CLASS: [Class; 61] = {
    let mut c = [Class::Other; 61];
    let mut i = 0;
    while i < 7 {
        c[i] = Class::OtherPseudo;
        i += 1;
    }
    while i < 14 {
        c[i] = Class::Status;
        i += 1;
    }
    c[27] = Class::ContentLength;
    c[53] = Class::Server;
    c[56] = Class::ConnSpecific;
    c
};

/// Per-entry overhead in the table size (§4.1).
const ENTRY_OVERHEAD: usize = 32;

/// A header block the decoder cannot read: a COMPRESSION_ERROR for the
/// whole connection, since the dynamic table can no longer be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DecodeError(pub &'static str);

/// One field of a block. `value` is None when it was not decoded (a literal
/// the sink did not ask for).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field<'a> {
    pub class: Class,
    pub name: &'a [u8],
    pub value: Option<&'a [u8]>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Offset of the name in the arena; the value follows it.
    start: u32,
    name_len: u32,
    value_len: u32,
    class: Class,
}

impl Entry {
    fn size(&self) -> usize {
        self.name_len as usize + self.value_len as usize + ENTRY_OVERHEAD
    }
}

/// Where a literal's name is, until the slices can be borrowed together.
#[derive(Debug, Clone, Copy)]
enum Name<'b> {
    Index(usize),
    Raw(&'b [u8]),
    /// Huffman-decoded into `name_buf`.
    Decoded,
}

#[derive(Debug)]
pub(crate) struct Decoder {
    /// Names and values of live entries, oldest first, after evicted bytes.
    arena: Vec<u8>,
    /// Oldest at the front; dynamic index 62 is the back.
    entries: VecDeque<Entry>,
    size: usize,
    /// Current maximum, set by the encoder's size updates.
    max: usize,
    /// SETTINGS_HEADER_TABLE_SIZE we advertised: the cap for `max`.
    limit: usize,
    name_buf: Vec<u8>,
    value_buf: Vec<u8>,
}

impl Decoder {
    pub fn new(limit: usize) -> Decoder {
        Decoder {
            // Live entries hold at most `limit` bytes and a new one at most
            // `limit`: compacting before an append that would not fit
            // keeps the arena within this capacity.
            arena: Vec::with_capacity(2 * limit),
            entries: VecDeque::with_capacity(limit / ENTRY_OVERHEAD),
            size: 0,
            max: limit,
            limit,
            name_buf: Vec::new(),
            value_buf: Vec::new(),
        }
    }

    /// Decodes one complete header block, calling `sink` per field in order.
    /// Values are decoded for every field when `want_all`, otherwise only
    /// for status, content-length and server.
    pub fn decode(
        &mut self,
        mut block: &[u8],
        want_all: bool,
        sink: &mut impl FnMut(Field<'_>),
    ) -> Result<(), DecodeError> {
        // Size updates are allowed only before the first field (§4.2).
        let mut updates_allowed = true;
        while let Some(&b) = block.first() {
            if b & 0x80 != 0 {
                let i = int(&mut block, 7)?;
                let (class, name, value) = self.get(i)?;
                sink(Field {
                    class,
                    name,
                    value: Some(value),
                });
            } else if b & 0x20 != 0 && b & 0x40 == 0 {
                if !updates_allowed {
                    return Err(DecodeError("table size update after a field"));
                }
                let max = int(&mut block, 5)?;
                if max > self.limit {
                    return Err(DecodeError("table size update above our limit"));
                }
                self.max = max;
                self.evict(0);
                continue;
            } else {
                let indexing = b & 0x40 != 0;
                let i = int(&mut block, if indexing { 6 } else { 4 })?;
                let (name, class) = if i == 0 {
                    let (huff, raw) = string(&mut block)?;
                    if huff {
                        self.name_buf.clear();
                        huffman::decode(raw, &mut self.name_buf)
                            .map_err(|_| DecodeError("bad Huffman code in a name"))?;
                        (Name::Decoded, classify(&self.name_buf))
                    } else {
                        (Name::Raw(raw), classify(raw))
                    }
                } else {
                    (Name::Index(i), self.get(i)?.0)
                };
                let (huff, raw) = string(&mut block)?;
                let value = if !(want_all || indexing || class.wanted()) {
                    None
                } else if huff {
                    self.value_buf.clear();
                    huffman::decode(raw, &mut self.value_buf)
                        .map_err(|_| DecodeError("bad Huffman code in a value"))?;
                    Some(&self.value_buf[..])
                } else {
                    Some(raw)
                };
                let name_bytes = match name {
                    Name::Raw(r) => r,
                    Name::Decoded => &self.name_buf[..],
                    Name::Index(i) => self.get(i)?.1,
                };
                sink(Field {
                    class,
                    name: name_bytes,
                    value,
                });
                if indexing {
                    let value = if huff { None } else { Some(raw) };
                    self.insert(name, value, class);
                }
            }
            updates_allowed = false;
        }
        Ok(())
    }

    /// Class, name and value of a table index (1-based, static then dynamic).
    #[inline]
    fn get(&self, i: usize) -> Result<(Class, &[u8], &[u8]), DecodeError> {
        if i == 0 {
            return Err(DecodeError("index 0"));
        }
        if i <= STATIC.len() {
            let (n, v) = STATIC[i - 1];
            return Ok((STATIC_CLASS[i - 1], n.as_bytes(), v.as_bytes()));
        }
        let d = i - STATIC.len() - 1;
        if d >= self.entries.len() {
            return Err(DecodeError("index beyond the dynamic table"));
        }
        let e = self.entries[self.entries.len() - 1 - d];
        let s = e.start as usize;
        let n = s + e.name_len as usize;
        Ok((
            e.class,
            &self.arena[s..n],
            &self.arena[n..n + e.value_len as usize],
        ))
    }

    /// Adds an entry (§4.4). `value`: the raw literal, or None when it was
    /// Huffman-decoded into `value_buf`.
    fn insert(&mut self, name: Name<'_>, value: Option<&[u8]>, class: Class) {
        let name_len = match name {
            Name::Raw(r) => r.len(),
            Name::Decoded => self.name_buf.len(),
            Name::Index(i) => self.get(i).map_or(0, |f| f.1.len()),
        };
        let value_len = value.map_or(self.value_buf.len(), <[u8]>::len);
        let size = name_len + value_len + ENTRY_OVERHEAD;
        if size > self.max {
            // Not an error: the table just ends up empty.
            self.entries.clear();
            self.arena.clear();
            self.size = 0;
            return;
        }
        if self.arena.len() + name_len + value_len > self.arena.capacity() {
            self.compact();
        }
        let start = self.arena.len();
        // The name is copied before eviction, which may drop its entry.
        match name {
            Name::Raw(r) => self.arena.extend_from_slice(r),
            Name::Decoded => self.arena.extend_from_slice(&self.name_buf),
            Name::Index(i) if i <= STATIC.len() => {
                self.arena.extend_from_slice(STATIC[i - 1].0.as_bytes())
            }
            Name::Index(i) => {
                let e = self.entries[self.entries.len() - 1 - (i - STATIC.len() - 1)];
                let s = e.start as usize;
                self.arena.extend_from_within(s..s + e.name_len as usize);
            }
        }
        match value {
            Some(v) => self.arena.extend_from_slice(v),
            None => self.arena.extend_from_slice(&self.value_buf),
        }
        self.evict(size);
        self.entries.push_back(Entry {
            start: start as u32,
            name_len: name_len as u32,
            value_len: value_len as u32,
            class,
        });
        self.size += size;
    }

    /// Drops the oldest entries until `extra` more bytes fit under `max`.
    fn evict(&mut self, extra: usize) {
        while self.size + extra > self.max {
            match self.entries.pop_front() {
                Some(e) => self.size -= e.size(),
                None => break,
            }
        }
    }

    /// Moves the live entries to the front of the arena.
    fn compact(&mut self) {
        let Some(front) = self.entries.front() else {
            self.arena.clear();
            return;
        };
        let off = front.start as usize;
        self.arena.copy_within(off.., 0);
        self.arena.truncate(self.arena.len() - off);
        for e in &mut self.entries {
            e.start -= off as u32;
        }
    }

    #[cfg(test)]
    fn table(&self) -> Vec<(String, String)> {
        (0..self.entries.len())
            .map(|d| {
                let (_, n, v) = self.get(STATIC.len() + 1 + d).unwrap();
                (
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                )
            })
            .collect()
    }
}

/// Reads an integer with an N-bit prefix (§5.1).
#[inline]
fn int(block: &mut &[u8], prefix: u32) -> Result<usize, DecodeError> {
    let mask = (1u8 << prefix) - 1;
    let first = block[0] & mask;
    *block = &block[1..];
    if first < mask {
        return Ok(first as usize);
    }
    let mut v = mask as u64;
    let mut shift = 0;
    loop {
        let (&b, rest) = block
            .split_first()
            .ok_or(DecodeError("truncated integer"))?;
        *block = rest;
        v += ((b & 0x7f) as u64) << shift;
        if b & 0x80 == 0 {
            // Nothing in a block of ours is anywhere near 2^32.
            return u32::try_from(v)
                .map(|v| v as usize)
                .map_err(|_| DecodeError("integer too large"));
        }
        shift += 7;
        if shift > 28 {
            return Err(DecodeError("integer too large"));
        }
    }
}

/// Reads a string literal (§5.2): (Huffman-coded, raw bytes).
fn string<'b>(block: &mut &'b [u8]) -> Result<(bool, &'b [u8]), DecodeError> {
    let &first = block.first().ok_or(DecodeError("truncated field"))?;
    let len = int(block, 7)?;
    if len > block.len() {
        return Err(DecodeError("string longer than the block"));
    }
    let (s, rest) = block.split_at(len);
    *block = rest;
    Ok((first & 0x80 != 0, s))
}

/// Appends an integer with an N-bit prefix; `flags` fills the bits above it.
pub(crate) fn put_int(out: &mut Vec<u8>, flags: u8, prefix: u32, mut v: usize) {
    let mask = (1usize << prefix) - 1;
    if v < mask {
        out.push(flags | v as u8);
        return;
    }
    out.push(flags | mask as u8);
    v -= mask;
    while v >= 0x80 {
        out.push(0x80 | (v & 0x7f) as u8);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a string literal without Huffman coding.
pub(crate) fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    put_int(out, 0, 7, s.len());
    out.extend_from_slice(s);
}

/// Appends a field that never touches the peer's dynamic table: indexed
/// when the static table has the exact pair, else a literal without
/// indexing, its name indexed when the static table has the name.
pub(crate) fn put_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    let mut name_index = 0;
    for (i, &(n, v)) in STATIC.iter().enumerate() {
        if n.as_bytes() == name {
            if v.as_bytes() == value {
                put_int(out, 0x80, 7, i + 1);
                return;
            }
            if name_index == 0 {
                name_index = i + 1;
            }
        }
    }
    put_int(out, 0x00, 4, name_index);
    if name_index == 0 {
        put_str(out, name);
    }
    put_str(out, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn fields(d: &mut Decoder, block: &[u8]) -> Result<Vec<(String, String)>, DecodeError> {
        let mut out = Vec::new();
        d.decode(block, true, &mut |f| {
            out.push((
                String::from_utf8_lossy(f.name).into_owned(),
                String::from_utf8_lossy(f.value.unwrap()).into_owned(),
            ))
        })?;
        Ok(out)
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|&(n, v)| (n.to_owned(), v.to_owned()))
            .collect()
    }

    #[test]
    fn static_classes_match_classify() {
        for (i, (n, _)) in STATIC.iter().enumerate() {
            assert_eq!(STATIC_CLASS[i], classify(n.as_bytes()), "{n}");
        }
        assert_eq!(classify(b"X-Upper"), Class::Invalid);
        assert_eq!(classify(b"a b"), Class::Invalid);
        assert_eq!(classify(b"a:b"), Class::Invalid);
        assert_eq!(classify(b""), Class::Invalid);
        assert_eq!(classify(b":path"), Class::OtherPseudo);
        assert_eq!(classify(b"x-ok_1.2~"), Class::Other);
    }

    /// C.3 (plain) and C.4 (Huffman): three requests on one table.
    #[test]
    fn rfc7541_c3_c4_requests() {
        let req1 = [
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
        ];
        let req2 = [
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
            ("cache-control", "no-cache"),
        ];
        let req3 = [
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/index.html"),
            (":authority", "www.example.com"),
            ("custom-key", "custom-value"),
        ];
        let tables: [&[(&str, &str)]; 3] = [
            &[(":authority", "www.example.com")],
            &[
                ("cache-control", "no-cache"),
                (":authority", "www.example.com"),
            ],
            &[
                ("custom-key", "custom-value"),
                ("cache-control", "no-cache"),
                (":authority", "www.example.com"),
            ],
        ];
        let sizes = [57, 110, 164];
        let plain = [
            "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
            "8286 84be 5808 6e6f 2d63 6163 6865",
            "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
        ];
        let huff = [
            "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
            "8286 84be 5886 a8eb 1064 9cbf",
            "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
        ];
        let want: [&[(&str, &str)]; 3] = [&req1, &req2, &req3];
        for blocks in [plain, huff] {
            let mut d = Decoder::new(4096);
            for i in 0..3 {
                assert_eq!(fields(&mut d, &hex(blocks[i])).unwrap(), pairs(want[i]));
                assert_eq!(d.table(), pairs(tables[i]), "table after {i}");
                assert_eq!(d.size, sizes[i]);
            }
        }
    }

    /// C.5 (plain) and C.6 (Huffman): three responses on a 256-byte table,
    /// so entries are evicted.
    #[test]
    fn rfc7541_c5_c6_responses_with_eviction() {
        let date1 = "Mon, 21 Oct 2013 20:13:21 GMT";
        let date2 = "Mon, 21 Oct 2013 20:13:22 GMT";
        let cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";
        let loc = "https://www.example.com";
        let resp1 = [
            (":status", "302"),
            ("cache-control", "private"),
            ("date", date1),
            ("location", loc),
        ];
        let resp2 = [
            (":status", "307"),
            ("cache-control", "private"),
            ("date", date1),
            ("location", loc),
        ];
        let resp3 = [
            (":status", "200"),
            ("cache-control", "private"),
            ("date", date2),
            ("location", loc),
            ("content-encoding", "gzip"),
            ("set-cookie", cookie),
        ];
        let table1 = [
            ("location", loc),
            ("date", date1),
            ("cache-control", "private"),
            (":status", "302"),
        ];
        let table2 = [
            (":status", "307"),
            ("location", loc),
            ("date", date1),
            ("cache-control", "private"),
        ];
        let table3 = [
            ("set-cookie", cookie),
            ("content-encoding", "gzip"),
            ("date", date2),
        ];
        let plain = [
            "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133
             2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70
             6c65 2e63 6f6d",
            "4803 3330 37c1 c0bf",
            "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d
             54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049
             5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e
             3d31",
        ];
        let huff = [
            "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
             2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
            "4883 640e ffc1 c0bf",
            "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
             77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
             9587 3160 65c0 03ed 4ee5 b106 3d50 07",
        ];
        let want: [&[(&str, &str)]; 3] = [&resp1, &resp2, &resp3];
        let tables: [&[(&str, &str)]; 3] = [&table1, &table2, &table3];
        let sizes = [222, 222, 215];
        for blocks in [plain, huff] {
            let mut d = Decoder::new(256);
            for i in 0..3 {
                assert_eq!(fields(&mut d, &hex(blocks[i])).unwrap(), pairs(want[i]));
                assert_eq!(d.table(), pairs(tables[i]), "table after {i}");
                assert_eq!(d.size, sizes[i]);
            }
        }
    }

    #[test]
    fn size_updates_and_errors() {
        let mut d = Decoder::new(4096);
        fields(
            &mut d,
            &hex("8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d"),
        )
        .unwrap();
        assert_eq!(d.entries.len(), 1);
        // Size 0 then 4096 at the start of a block empties the table.
        assert_eq!(
            fields(&mut d, &hex("20 3fe1 1f 82")).unwrap(),
            pairs(&[(":method", "GET")])
        );
        assert_eq!((d.entries.len(), d.size, d.max), (0, 0, 4096));
        for bad in [
            "80",                   // index 0
            "be",                   // beyond an empty dynamic table
            "3fe2 1f",              // update to 4097, above our limit
            "82 20",                // update after a field
            "400a 6375",            // truncated name
            "41",                   // literal with no value
            "ff ff ff ff ff ff 01", // integer overflow
            "0085 ffff ffff ff 00", // Huffman name that is all padding
        ] {
            let mut d = Decoder::new(4096);
            assert!(fields(&mut d, &hex(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn unwanted_literal_values_are_not_decoded() {
        let mut d = Decoder::new(4096);
        // date (33) without indexing, Huffman value; then server (54).
        let mut block = vec![0x0f, 0x12, 0x83, 0xff, 0xff, 0xff];
        put_field(&mut block, b"server", b"yace");
        let mut seen = Vec::new();
        d.decode(&block, false, &mut |f| {
            seen.push((f.class, f.value.map(<[u8]>::to_vec)))
        })
        .unwrap();
        assert_eq!(
            seen,
            [
                (Class::Other, None),
                (Class::Server, Some(b"yace".to_vec()))
            ]
        );
    }

    /// A name taken from an entry that its own insertion evicts, and an
    /// arena that must compact: the table stays exact over many responses.
    #[test]
    fn eviction_of_the_named_entry_and_compaction() {
        let mut d = Decoder::new(4096);
        d.max = 100;
        let mut block = Vec::new();
        block.push(0x40);
        put_str(&mut block, b"x-name");
        put_str(&mut block, b"0123456789012345678901234567890123456789");
        fields(&mut d, &block).unwrap();
        assert_eq!(d.size, 6 + 40 + 32);
        // Literal with indexing, name = dynamic index 62 (the entry above).
        let block = [0x7e, 0x03, b'a', b'b', b'c'];
        assert_eq!(fields(&mut d, &block).unwrap(), pairs(&[("x-name", "abc")]));
        assert_eq!(d.table(), pairs(&[("x-name", "abc")]));
        d.max = 4096;
        for i in 0..2000 {
            let v = format!("value-{i}-{}", "z".repeat(i % 300));
            let mut block = vec![0x40];
            put_str(&mut block, b"x-k");
            put_str(&mut block, v.as_bytes());
            block.push(0xbe); // dynamic index 62: what was just inserted
            let f = fields(&mut d, &block).unwrap();
            assert_eq!(f[1], ("x-k".to_owned(), v.clone()));
            assert!(d.size <= 4096);
            assert!(d.arena.capacity() <= 2 * 4096, "the arena never grows");
        }
    }

    #[test]
    fn put_field_uses_static_indexes_only() {
        let mut out = Vec::new();
        put_field(&mut out, b":method", b"GET");
        put_field(&mut out, b":path", b"/a");
        put_field(&mut out, b"x-custom", b"1");
        put_field(&mut out, b"www-authenticate", b"z");
        assert_eq!(
            out,
            [
                0x82, 0x04, 2, b'/', b'a', 0x00, 8, b'x', b'-', b'c', b'u', b's', b't', b'o', b'm',
                1, b'1', 0x0f, 46, 1, b'z'
            ]
        );
        let mut d = Decoder::new(4096);
        assert_eq!(
            fields(&mut d, &out).unwrap(),
            pairs(&[
                (":method", "GET"),
                (":path", "/a"),
                ("x-custom", "1"),
                ("www-authenticate", "z")
            ])
        );
        assert!(d.entries.is_empty());
        let mut out = Vec::new();
        put_int(&mut out, 0, 5, 1337);
        assert_eq!(out, [31, 154, 10], "RFC 7541 C.1.2");
    }
}
