//! Fuzzes `yace_engine::codec::ResponseParser`, the incremental HTTP/1.1
//! response framer, the way the engine drives it: bytes arrive in reads of
//! arbitrary sizes, a finished response is followed by the next one on the
//! same connection (`reset`, then feed the rest), and the connection ends
//! with `eof()`.
//!
//! Input layout (so the seeds in corpus/response_parser/ stay readable):
//!
//! ```text
//! byte 0      flags: bit 0 = the request was HEAD, bit 1 = capture `Server`
//! byte 1      k = low 3 bits: how many split-size bytes follow
//! k bytes     read sizes, each 1..=256 (byte + 1), used in a cycle
//! rest        the bytes the server sent
//! ```
//!
//! Invariants checked:
//! - nothing panics (no overflow, slicing or unwrap on any input);
//! - `Done { consumed }` never exceeds the bytes passed to that `feed`;
//! - `body_len` never exceeds the bytes fed since the last `reset`;
//! - a completed response has a three-digit status that is not 1xx, and a
//!   close-delimited body completed by `eof()` never claims keep-alive;
//! - the whole sequence of outcomes (each response's status, body length,
//!   keep-alive and where it ended; the error, or the end-of-file result) is
//!   identical whether the bytes arrive in one read or split as chosen
//!   (for inputs over `MAX_HEAD`, a protocol error and a too-large head
//!   count as the same refusal; and a head over 8 KiB, parsed again only as
//!   it grows, may be refused at the end of file rather than at the read
//!   that made it invalid: the same refusal, found later).
#![no_main]

use libfuzzer_sys::fuzz_target;
use yace_engine::codec::{EofError, FrameError, Progress, ResponseParser, MAX_HEAD};

/// Responses parsed per input at most (pipelined responses after the first).
const MAX_RESPONSES: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    /// A response completed; `end` is its end offset in the whole input.
    Response {
        status: u16,
        body_len: u64,
        keep_alive: bool,
        end: usize,
    },
    /// `feed` rejected the bytes; nothing more is fed.
    Frame(FrameError),
    /// End of file after the last response.
    Eof(Result<(u16, u64, bool), EofError>),
}

/// Feeds `wire` in pieces of `sizes` (cycled; empty = one read) and records
/// what the parser made of it, checking the per-call invariants on the way.
fn run(wire: &[u8], sizes: &[usize], head: bool, capture: bool) -> Vec<Event> {
    let mut p = ResponseParser::default();
    p.reset(head, capture);
    let mut events = Vec::new();
    // Bytes fed to the current response since its reset.
    let mut fed: u64 = 0;
    let mut pos = 0;
    let mut k = 0;
    while pos < wire.len() {
        let size = if sizes.is_empty() {
            wire.len()
        } else {
            sizes[k % sizes.len()]
        };
        k += 1;
        let end = (pos + size).min(wire.len());
        // One read: the parser may finish several responses within it.
        while pos < end {
            let piece = &wire[pos..end];
            match p.feed(piece) {
                Err(e) => {
                    events.push(Event::Frame(e));
                    return events;
                }
                Ok(Progress::NeedMore) => {
                    fed += piece.len() as u64;
                    assert!(
                        p.body_len <= fed,
                        "body_len {} > {} bytes fed",
                        p.body_len,
                        fed
                    );
                    pos = end;
                }
                Ok(Progress::Done { consumed }) => {
                    assert!(
                        consumed <= piece.len(),
                        "Done {{ consumed: {consumed} }} but the read was {} bytes",
                        piece.len()
                    );
                    fed += consumed as u64;
                    assert!(
                        p.body_len <= fed,
                        "body_len {} > {} bytes fed",
                        p.body_len,
                        fed
                    );
                    // httparse takes any three digits (000-999); interim 1xx
                    // heads are skipped, never completed.
                    assert!(
                        p.status <= 999 && !(100..200).contains(&p.status),
                        "completed response with status {}",
                        p.status
                    );
                    pos += consumed;
                    events.push(Event::Response {
                        status: p.status,
                        body_len: p.body_len,
                        keep_alive: p.keep_alive,
                        end: pos,
                    });
                    if events.len() >= MAX_RESPONSES {
                        return events;
                    }
                    p.reset(head, capture);
                    fed = 0;
                }
            }
        }
    }
    let eof = p.eof().map(|()| (p.status, p.body_len, p.keep_alive));
    if let Ok((status, body_len, keep_alive)) = eof {
        assert!(
            !keep_alive,
            "a body that ended at eof claims keep-alive (status {status}, {body_len} bytes)"
        );
        assert!(body_len <= fed, "body_len {body_len} > {fed} bytes fed");
    }
    events.push(Event::Eof(eof));
    events
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Some((&n, rest)) = rest.split_first() else {
        return;
    };
    let n = (n & 7) as usize;
    if rest.len() < n {
        return;
    }
    let (split, wire) = rest.split_at(n);
    let sizes: Vec<usize> = split.iter().map(|&b| b as usize + 1).collect();
    let head = flags & 1 != 0;
    let capture = flags & 2 != 0;

    let mut whole = run(wire, &[], head, capture);
    let mut pieces = run(wire, &sizes, head, capture);
    for e in whole.iter_mut().chain(pieces.iter_mut()) {
        if let Event::Eof(Err(EofError::Invalid(f))) = *e {
            *e = Event::Frame(f);
        }
    }
    if wire.len() > MAX_HEAD {
        // A head longer than MAX_HEAD is refused either as too large or, when
        // the one read holding all of it shows a bad byte past the limit, as
        // a protocol error. The engine's reads are at most 64 KiB, so this
        // only arises for heads past the limit: both are a refusal.
        for e in whole.iter_mut().chain(pieces.iter_mut()) {
            if *e == Event::Frame(FrameError::Protocol) {
                *e = Event::Frame(FrameError::HeadTooLarge);
            }
        }
    }
    assert_eq!(
        whole, pieces,
        "fed whole vs split into reads of {sizes:?} (head={head}): outcomes differ"
    );
});
