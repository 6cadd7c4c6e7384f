//! Fuzzes `yace_engine::fcgi::ResponseParser`, the incremental FastCGI
//! response decoder, the way a client drives it: bytes in reads of
//! arbitrary sizes, a finished response followed by the next on a kept
//! connection (`reset`, then the rest), then `eof()`.
//!
//! Input layout (as `response_parser`'s, so seeds stay readable):
//!
//! ```text
//! byte 0      k = low 3 bits: how many split-size bytes follow
//! k bytes     read sizes, each 1..=256 (byte + 1), used in a cycle
//! rest        the bytes the application sent
//! ```
//!
//! Invariants checked:
//! - nothing panics;
//! - `Done { consumed }` never exceeds the bytes passed to that `feed`;
//! - body and stderr counts never exceed the bytes fed, the kept body and
//!   stderr never exceed their limits, the body never its cap;
//! - the sequence of outcomes (each response's status, body and stderr
//!   lengths, end record and end offset; the error, or the eof result) is
//!   identical whether the bytes come in one read or split as chosen.
#![no_main]

use libfuzzer_sys::fuzz_target;
use yace_engine::codec::Progress;
use yace_engine::fcgi::{Limits, ResponseParser};

const MAX_RESPONSES: usize = 16;

const LIMITS: Limits = Limits {
    head_bytes: 4096,
    fields: 32,
    max_body: 1 << 16,
    keep_body: 256,
    keep_stderr: 64,
};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    Response {
        status: u16,
        body_len: u64,
        stderr_len: u64,
        end: String,
        at: usize,
    },
    Error(String),
    Eof(String),
}

fn run(wire: &[u8], sizes: &[usize]) -> Vec<Event> {
    let mut p = ResponseParser::new(1, LIMITS);
    let mut events = Vec::new();
    let mut fed: u64 = 0;
    let mut pos = 0;
    let mut k = 0;
    let check = |p: &ResponseParser, fed: u64| {
        assert!(p.body_len <= fed && p.stderr_len <= fed);
        assert!(p.body().len() <= LIMITS.keep_body);
        assert!(p.stderr().len() <= LIMITS.keep_stderr);
        assert!(p.body_len <= LIMITS.max_body);
    };
    while pos < wire.len() {
        let size = if sizes.is_empty() {
            wire.len()
        } else {
            sizes[k % sizes.len()]
        };
        k += 1;
        let end = (pos + size).min(wire.len());
        while pos < end {
            let piece = &wire[pos..end];
            match p.feed(piece) {
                Err(e) => {
                    events.push(Event::Error(e.to_string()));
                    return events;
                }
                Ok(Progress::NeedMore) => {
                    fed += piece.len() as u64;
                    check(&p, fed);
                    pos = end;
                }
                Ok(Progress::Done { consumed }) => {
                    assert!(consumed <= piece.len());
                    fed += consumed as u64;
                    check(&p, fed);
                    pos += consumed;
                    events.push(Event::Response {
                        status: p.status,
                        body_len: p.body_len,
                        stderr_len: p.stderr_len,
                        end: format!("{:?}", p.end),
                        at: pos,
                    });
                    if events.len() >= MAX_RESPONSES {
                        return events;
                    }
                    p.reset(1);
                    fed = 0;
                }
            }
        }
    }
    events.push(Event::Eof(format!("{:?}", p.eof())));
    events
}

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = (n & 7) as usize;
    if rest.len() < n {
        return;
    }
    let (split, wire) = rest.split_at(n);
    let sizes: Vec<usize> = split.iter().map(|&b| b as usize + 1).collect();
    let whole = run(wire, &[]);
    let pieces = run(wire, &sizes);
    assert_eq!(whole, pieces, "fed whole vs split into reads of {sizes:?}");
});
