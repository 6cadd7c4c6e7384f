//! HPACK's Huffman code (RFC 7541 §5.2, Appendix B), decoded four bits at a
//! time by a state machine built at compile time from the code table.
//!
//! States are the 256 internal nodes of the code tree. Every code is at
//! least 5 bits long, so a nibble completes at most one symbol: one table
//! lookup per nibble, no bit loop.

/// (code, bit length) of symbols 0–255 and of EOS (256), RFC 7541 Appendix B.
/// The code is canonical; a test checks that, which catches a mistyped entry.
pub(crate) const CODES: [(u32, u8); 257] = [
    // 0
    (0x1ff8, 13),
    (0x7fffd8, 23),
    (0xfffffe2, 28),
    (0xfffffe3, 28),
    (0xfffffe4, 28),
    (0xfffffe5, 28),
    (0xfffffe6, 28),
    (0xfffffe7, 28),
    // 8
    (0xfffffe8, 28),
    (0xffffea, 24),
    (0x3ffffffc, 30),
    (0xfffffe9, 28),
    (0xfffffea, 28),
    (0x3ffffffd, 30),
    (0xfffffeb, 28),
    (0xfffffec, 28),
    // 16
    (0xfffffed, 28),
    (0xfffffee, 28),
    (0xfffffef, 28),
    (0xffffff0, 28),
    (0xffffff1, 28),
    (0xffffff2, 28),
    (0x3ffffffe, 30),
    (0xffffff3, 28),
    // 24
    (0xffffff4, 28),
    (0xffffff5, 28),
    (0xffffff6, 28),
    (0xffffff7, 28),
    (0xffffff8, 28),
    (0xffffff9, 28),
    (0xffffffa, 28),
    (0xffffffb, 28),
    // 32 ' ' ! " # $ % & '
    (0x14, 6),
    (0x3f8, 10),
    (0x3f9, 10),
    (0xffa, 12),
    (0x1ff9, 13),
    (0x15, 6),
    (0xf8, 8),
    (0x7fa, 11),
    // 40 ( ) * + , - . /
    (0x3fa, 10),
    (0x3fb, 10),
    (0xf9, 8),
    (0x7fb, 11),
    (0xfa, 8),
    (0x16, 6),
    (0x17, 6),
    (0x18, 6),
    // 48 0-7
    (0x0, 5),
    (0x1, 5),
    (0x2, 5),
    (0x19, 6),
    (0x1a, 6),
    (0x1b, 6),
    (0x1c, 6),
    (0x1d, 6),
    // 56 8 9 : ; < = > ?
    (0x1e, 6),
    (0x1f, 6),
    (0x5c, 7),
    (0xfb, 8),
    (0x7ffc, 15),
    (0x20, 6),
    (0xffb, 12),
    (0x3fc, 10),
    // 64 @ A-G
    (0x1ffa, 13),
    (0x21, 6),
    (0x5d, 7),
    (0x5e, 7),
    (0x5f, 7),
    (0x60, 7),
    (0x61, 7),
    (0x62, 7),
    // 72 H-O
    (0x63, 7),
    (0x64, 7),
    (0x65, 7),
    (0x66, 7),
    (0x67, 7),
    (0x68, 7),
    (0x69, 7),
    (0x6a, 7),
    // 80 P-W
    (0x6b, 7),
    (0x6c, 7),
    (0x6d, 7),
    (0x6e, 7),
    (0x6f, 7),
    (0x70, 7),
    (0x71, 7),
    (0x72, 7),
    // 88 X Y Z [ \ ] ^ _
    (0xfc, 8),
    (0x73, 7),
    (0xfd, 8),
    (0x1ffb, 13),
    (0x7fff0, 19),
    (0x1ffc, 13),
    (0x3ffc, 14),
    (0x22, 6),
    // 96 ` a-g
    (0x7ffd, 15),
    (0x3, 5),
    (0x23, 6),
    (0x4, 5),
    (0x24, 6),
    (0x5, 5),
    (0x25, 6),
    (0x26, 6),
    // 104 h-o
    (0x27, 6),
    (0x6, 5),
    (0x74, 7),
    (0x75, 7),
    (0x28, 6),
    (0x29, 6),
    (0x2a, 6),
    (0x7, 5),
    // 112 p-w
    (0x2b, 6),
    (0x76, 7),
    (0x2c, 6),
    (0x8, 5),
    (0x9, 5),
    (0x2d, 6),
    (0x77, 7),
    (0x78, 7),
    // 120 x y z { | } ~ DEL
    (0x79, 7),
    (0x7a, 7),
    (0x7b, 7),
    (0x7ffe, 15),
    (0x7fc, 11),
    (0x3ffd, 14),
    (0x1ffd, 13),
    (0xffffffc, 28),
    // 128
    (0xfffe6, 20),
    (0x3fffd2, 22),
    (0xfffe7, 20),
    (0xfffe8, 20),
    (0x3fffd3, 22),
    (0x3fffd4, 22),
    (0x3fffd5, 22),
    (0x7fffd9, 23),
    // 136
    (0x3fffd6, 22),
    (0x7fffda, 23),
    (0x7fffdb, 23),
    (0x7fffdc, 23),
    (0x7fffdd, 23),
    (0x7fffde, 23),
    (0xffffeb, 24),
    (0x7fffdf, 23),
    // 144
    (0xffffec, 24),
    (0xffffed, 24),
    (0x3fffd7, 22),
    (0x7fffe0, 23),
    (0xffffee, 24),
    (0x7fffe1, 23),
    (0x7fffe2, 23),
    (0x7fffe3, 23),
    // 152
    (0x7fffe4, 23),
    (0x1fffdc, 21),
    (0x3fffd8, 22),
    (0x7fffe5, 23),
    (0x3fffd9, 22),
    (0x7fffe6, 23),
    (0x7fffe7, 23),
    (0xffffef, 24),
    // 160
    (0x3fffda, 22),
    (0x1fffdd, 21),
    (0xfffe9, 20),
    (0x3fffdb, 22),
    (0x3fffdc, 22),
    (0x7fffe8, 23),
    (0x7fffe9, 23),
    (0x1fffde, 21),
    // 168
    (0x7fffea, 23),
    (0x3fffdd, 22),
    (0x3fffde, 22),
    (0xfffff0, 24),
    (0x1fffdf, 21),
    (0x3fffdf, 22),
    (0x7fffeb, 23),
    (0x7fffec, 23),
    // 176
    (0x1fffe0, 21),
    (0x1fffe1, 21),
    (0x3fffe0, 22),
    (0x1fffe2, 21),
    (0x7fffed, 23),
    (0x3fffe1, 22),
    (0x7fffee, 23),
    (0x7fffef, 23),
    // 184
    (0xfffea, 20),
    (0x3fffe2, 22),
    (0x3fffe3, 22),
    (0x3fffe4, 22),
    (0x7ffff0, 23),
    (0x3fffe5, 22),
    (0x3fffe6, 22),
    (0x7ffff1, 23),
    // 192
    (0x3ffffe0, 26),
    (0x3ffffe1, 26),
    (0xfffeb, 20),
    (0x7fff1, 19),
    (0x3fffe7, 22),
    (0x7ffff2, 23),
    (0x3fffe8, 22),
    (0x1ffffec, 25),
    // 200
    (0x3ffffe2, 26),
    (0x3ffffe3, 26),
    (0x3ffffe4, 26),
    (0x7ffffde, 27),
    (0x7ffffdf, 27),
    (0x3ffffe5, 26),
    (0xfffff1, 24),
    (0x1ffffed, 25),
    // 208
    (0x7fff2, 19),
    (0x1fffe3, 21),
    (0x3ffffe6, 26),
    (0x7ffffe0, 27),
    (0x7ffffe1, 27),
    (0x3ffffe7, 26),
    (0x7ffffe2, 27),
    (0xfffff2, 24),
    // 216
    (0x1fffe4, 21),
    (0x1fffe5, 21),
    (0x3ffffe8, 26),
    (0x3ffffe9, 26),
    (0xffffffd, 28),
    (0x7ffffe3, 27),
    (0x7ffffe4, 27),
    (0x7ffffe5, 27),
    // 224
    (0xfffec, 20),
    (0xfffff3, 24),
    (0xfffed, 20),
    (0x1fffe6, 21),
    (0x3fffe9, 22),
    (0x1fffe7, 21),
    (0x1fffe8, 21),
    (0x7ffff3, 23),
    // 232
    (0x3fffea, 22),
    (0x3fffeb, 22),
    (0x1ffffee, 25),
    (0x1ffffef, 25),
    (0xfffff4, 24),
    (0xfffff5, 24),
    (0x3ffffea, 26),
    (0x7ffff4, 23),
    // 240
    (0x3ffffeb, 26),
    (0x7ffffe6, 27),
    (0x3ffffec, 26),
    (0x3ffffed, 26),
    (0x7ffffe7, 27),
    (0x7ffffe8, 27),
    (0x7ffffe9, 27),
    (0x7ffffea, 27),
    // 248
    (0x7ffffeb, 27),
    (0xffffffe, 28),
    (0x7ffffec, 27),
    (0x7ffffed, 27),
    (0x7ffffee, 27),
    (0x7ffffef, 27),
    (0x7fffff0, 27),
    (0x3ffffee, 26),
    // 256: EOS
    (0x3fffffff, 30),
];

const EMIT: u8 = 1;
/// The nibble reaches EOS: a decoding error (§5.2).
const FAIL: u8 = 2;
/// Ending here is valid: no bits pending, or fewer than 8 that are all
/// ones (a prefix of EOS), the only padding §5.2 allows.
const ACCEPT: u8 = 4;

#[derive(Debug, Clone, Copy)]
struct Step {
    next: u8,
    sym: u8,
    flags: u8,
}

static DECODE: [[Step; 16]; 256] = build();

/// Builds the code tree (children of internal nodes; a child ≥ 256 is the
/// leaf of symbol `child - 256`), then walks each nibble from each node.
const fn build() -> [[Step; 16]; 256] {
    let mut child = [[0u16; 2]; 256];
    let mut nodes = 1u16;
    let mut s = 0;
    while s < CODES.len() {
        let (code, len) = CODES[s];
        let mut node = 0usize;
        let mut i = len;
        while i > 1 {
            i -= 1;
            let bit = ((code >> i) & 1) as usize;
            if child[node][bit] == 0 {
                assert!(nodes < 256, "the code is not a complete prefix code");
                child[node][bit] = nodes;
                nodes += 1;
            } else {
                assert!(child[node][bit] < 256, "a code is a prefix of another");
            }
            node = child[node][bit] as usize;
        }
        assert!(child[node][(code & 1) as usize] == 0, "two codes collide");
        child[node][(code & 1) as usize] = 256 + s as u16;
        s += 1;
    }
    assert!(nodes == 256, "the code is not a complete prefix code");
    // Internal nodes reached from the root by 0–7 one bits: valid padding.
    let mut ones = [false; 256];
    let mut node = 0usize;
    let mut depth = 0;
    ones[0] = true;
    while depth < 7 {
        node = child[node][1] as usize;
        ones[node] = true;
        depth += 1;
    }
    let mut table = [[Step {
        next: 0,
        sym: 0,
        flags: 0,
    }; 16]; 256];
    let mut state = 0;
    while state < 256 {
        let mut nibble = 0;
        while nibble < 16 {
            let mut node = state;
            let mut flags = 0u8;
            let mut sym = 0u8;
            let mut b = 4;
            while b > 0 {
                b -= 1;
                let c = child[node][(nibble >> b) & 1] as usize;
                if c < 256 {
                    node = c;
                } else if c == 256 + 256 {
                    flags = FAIL;
                    node = 0;
                    break;
                } else {
                    sym = (c - 256) as u8;
                    flags |= EMIT;
                    node = 0;
                }
            }
            if flags & FAIL == 0 && ones[node] {
                flags |= ACCEPT;
            }
            table[state][nibble] = Step {
                next: node as u8,
                sym,
                flags,
            };
            nibble += 1;
        }
        state += 1;
    }
    table
}

/// The string is not valid Huffman code: it contains EOS, or its padding is
/// longer than 7 bits or not all ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HuffmanError;

/// Appends the decoding of `src` to `dst`.
pub(crate) fn decode(src: &[u8], dst: &mut Vec<u8>) -> Result<(), HuffmanError> {
    // Codes are at least 5 bits: at most 8 symbols per 5 bytes.
    dst.reserve(src.len() * 8 / 5 + 1);
    let mut state = 0usize;
    let mut accept = true;
    for &b in src {
        for nibble in [b >> 4, b & 0xf] {
            let s = DECODE[state][nibble as usize];
            if s.flags & FAIL != 0 {
                return Err(HuffmanError);
            }
            if s.flags & EMIT != 0 {
                dst.push(s.sym);
            }
            state = s.next as usize;
            accept = s.flags & ACCEPT != 0;
        }
    }
    if accept {
        Ok(())
    } else {
        Err(HuffmanError)
    }
}

/// Test-only encoder: the symbols' codes, padded with ones to a byte.
#[cfg(test)]
pub(crate) fn encode(src: &[u8], dst: &mut Vec<u8>) {
    let mut acc = 0u64;
    let mut bits = 0u32;
    for &b in src {
        let (code, len) = CODES[b as usize];
        acc = (acc << len) | code as u64;
        bits += len as u32;
        while bits >= 8 {
            bits -= 8;
            dst.push((acc >> bits) as u8);
        }
        acc &= (1 << bits) - 1;
    }
    if bits > 0 {
        dst.push(((acc << (8 - bits)) | (0xff >> bits)) as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(src: &[u8]) -> Result<Vec<u8>, HuffmanError> {
        let mut out = Vec::new();
        decode(src, &mut out).map(|()| out)
    }

    /// A canonical code: sorted by (length, symbol), each code is the
    /// previous plus one, shifted to the new length; the first is all zeros
    /// and the last (EOS) all ones. One mistyped entry breaks the chain.
    #[test]
    fn table_is_the_canonical_rfc_code() {
        let mut order: Vec<usize> = (0..257).collect();
        order.sort_by_key(|&s| (CODES[s].1, s));
        assert_eq!(CODES[order[0]].0, 0);
        for w in order.windows(2) {
            let (a, la) = CODES[w[0]];
            let (b, lb) = CODES[w[1]];
            assert_eq!(b, (a + 1) << (lb - la), "symbols {} and {}", w[0], w[1]);
        }
        assert_eq!(order[256], 256, "EOS is the longest code");
        assert_eq!(CODES[256], ((1 << 30) - 1, 30));
        // Spot checks against Appendix B.
        assert_eq!(CODES[b'a' as usize], (0x3, 5));
        assert_eq!(CODES[b'\\' as usize], (0x7fff0, 19));
        assert_eq!(CODES[255], (0x3ffffee, 26));
    }

    #[test]
    fn round_trips_every_byte() {
        for b in 0..=255u8 {
            let mut enc = Vec::new();
            encode(&[b], &mut enc);
            assert_eq!(dec(&enc), Ok(vec![b]), "byte {b}");
        }
        let all: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        let mut enc = Vec::new();
        encode(&all, &mut enc);
        assert_eq!(dec(&enc), Ok(all));
        assert_eq!(dec(b""), Ok(vec![]));
    }

    #[test]
    fn rfc_examples() {
        // RFC 7541 C.4.1: "www.example.com".
        let enc = [
            0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
        ];
        assert_eq!(dec(&enc).unwrap(), b"www.example.com");
        let mut back = Vec::new();
        encode(b"www.example.com", &mut back);
        assert_eq!(back, enc);
        // C.4.2: "no-cache".
        assert_eq!(
            dec(&[0xa8, 0xeb, 0x10, 0x64, 0x9c, 0xbf]).unwrap(),
            b"no-cache"
        );
    }

    #[test]
    fn bad_padding_and_eos_are_errors() {
        // '0' is 00000: three bits of padding must be ones.
        assert_eq!(dec(&[0b0000_0111]), Ok(b"0".to_vec()));
        assert_eq!(dec(&[0b0000_0110]), Err(HuffmanError));
        // A whole byte of ones is padding longer than 7 bits.
        assert_eq!(dec(&[0b0000_0111, 0xff]), Err(HuffmanError));
        assert_eq!(dec(&[0xff]), Err(HuffmanError));
        // EOS itself (30 ones) inside the string.
        assert_eq!(dec(&[0xff, 0xff, 0xff, 0xfc]), Err(HuffmanError));
        // Zero bits left over: a code cut short, not padding.
        assert_eq!(dec(&[0x00]), Err(HuffmanError));
    }
}
