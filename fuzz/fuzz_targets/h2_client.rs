//! Fuzzes `yace_engine::h2::ClientConn`, the sans-IO HTTP/2 client, the way
//! the engine drives it: a few streams are opened, then whatever the
//! "server" sent arrives in reads of arbitrary sizes, and the output is
//! written after every read.
//!
//! Input layout (so the seeds in corpus/h2_client/ stay readable):
//!
//! ```text
//! byte 0      flags: bit 0 = capture every stream; bit 1 = the request is a
//!             POST with a 70,000-byte body (beyond the default windows);
//!             bit 2 = the request is HEAD (when bit 1 is clear)
//! byte 1      low 3 bits: streams opened before the first read (ids 1, 3…);
//!             bits 3–5: k, how many read-size bytes follow
//! k bytes     read sizes, each 1..=256 (byte + 1), used in a cycle
//! rest        the bytes the server sent, from its SETTINGS on
//! ```
//!
//! Invariants checked:
//! - nothing panics;
//! - every event names a stream we opened and that is still open; Head
//!   comes at most once and before any Data; nothing follows a stream's
//!   End, Reset, StreamError or Unprocessed; Data carries its bytes exactly
//!   when capturing, and never more body than was fed;
//! - `open_streams()` always equals the streams still open by the events,
//!   and `take_open` returns exactly those tokens;
//! - the output stays proportional to the input (no unbounded growth);
//! - the outcome (events, with a DATA frame's pieces joined, and the
//!   result) is the same whether the bytes arrive in one read or as chosen.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use yace_engine::h2::{code, encode_request, ClientConn, ConnError, Event, Request};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Head(
        u32,
        u16,
        Option<u64>,
        Option<Vec<u8>>,
        Option<Vec<(String, String)>>,
        u32,
    ),
    /// Token, body bytes, wire bytes, captured bytes.
    Data(u32, u64, u64, Option<Vec<u8>>),
    End(u32),
    Reset(u32, u32),
    StreamError(u32, &'static str),
    GoAway(u32, u32),
    Unprocessed(u32),
}

#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    head: bool,
}

fn request(flags: u8) -> Request {
    let wire = if flags & 2 != 0 {
        let mut w =
            b"POST /upload HTTP/1.1\r\nHost: fuzz\r\nContent-Length: 70000\r\n\r\n".to_vec();
        w.resize(w.len() + 70_000, b'b');
        w
    } else if flags & 4 != 0 {
        b"HEAD / HTTP/1.1\r\nHost: fuzz\r\n\r\n".to_vec()
    } else {
        b"GET /?q=1 HTTP/1.1\r\nHost: fuzz\r\nUser-Agent: yace\r\nAccept: */*\r\n\r\n".to_vec()
    };
    encode_request(&wire, flags & 1 == 0).expect("a valid request")
}

/// Feeds `wire` in reads of `sizes` (cycled; empty = one read), checking
/// the invariants; returns the events (DATA pieces joined) and the result.
fn run(
    req: &Request,
    streams: u32,
    capture: bool,
    wire: &[u8],
    sizes: &[usize],
) -> (Vec<Ev>, Result<(), ConnError>) {
    let mut c = ClientConn::new();
    let mut open: BTreeMap<u32, Seen> = BTreeMap::new();
    for t in 0..streams {
        let id = c.open(req, t, capture).expect("the first streams open");
        assert_eq!(id, 2 * t + 1);
        open.insert(t, Seen::default());
    }
    let mut written = c.pending_out().len();
    let first_out = written;
    c.wrote(written);

    let mut events: Vec<Ev> = Vec::new();
    let mut goaway: Option<u32> = None;
    // What output can hold besides answers to the input: request bodies,
    // one RST_STREAM per stream (ours or the server's fault), a GOAWAY.
    let extra = streams as usize * (req.body().len() + 2 * 13) + 200;
    let mut result = Ok(());
    let mut body: u64 = 0;
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
        let r = c.feed(&wire[pos..end], &mut |e| {
            let ev = match e {
                Event::Head {
                    token,
                    status,
                    content_length,
                    server,
                    fields,
                    wire,
                } => {
                    let s = open.get_mut(&token).expect("Head for a stream not open");
                    assert!(!s.head, "a second Head for token {token}");
                    s.head = true;
                    assert!((200..=999).contains(&status), "final status {status}");
                    assert_eq!(fields.is_some(), capture);
                    for (name, value) in fields.unwrap_or_default() {
                        assert!(!name.is_empty() && !name.starts_with(':'));
                        assert!(!value.contains(['\r', '\n', '\0']));
                    }
                    assert!(wire >= 9);
                    Ev::Head(
                        token,
                        status,
                        content_length,
                        server.map(<[u8]>::to_vec),
                        fields.map(<[(String, String)]>::to_vec),
                        wire,
                    )
                }
                Event::Data {
                    token,
                    len,
                    data,
                    wire,
                } => {
                    let s = open.get(&token).expect("Data for a stream not open");
                    assert!(s.head, "Data before Head for token {token}");
                    assert_eq!(data.is_some(), capture);
                    if let Some(d) = data {
                        assert_eq!(d.len(), len as usize);
                    }
                    assert!(wire >= len);
                    body += len as u64;
                    Ev::Data(token, len as u64, wire as u64, data.map(<[u8]>::to_vec))
                }
                Event::End { token } => {
                    let s = open.remove(&token).expect("End for a stream not open");
                    assert!(s.head, "End before Head for token {token}");
                    Ev::End(token)
                }
                Event::Reset { token, code } => {
                    open.remove(&token).expect("Reset for a stream not open");
                    Ev::Reset(token, code)
                }
                Event::StreamError { token, reason } => {
                    open.remove(&token)
                        .expect("StreamError for a stream not open");
                    Ev::StreamError(token, reason)
                }
                Event::GoAway {
                    last_stream_id,
                    code,
                } => {
                    goaway = Some(goaway.map_or(last_stream_id, |g: u32| g.min(last_stream_id)));
                    Ev::GoAway(last_stream_id, code)
                }
                Event::Unprocessed { token } => {
                    open.remove(&token)
                        .expect("Unprocessed for a stream not open");
                    let last = goaway.expect("Unprocessed without GoAway");
                    assert!(2 * token + 1 > last, "stream {} <= {last}", 2 * token + 1);
                    Ev::Unprocessed(token)
                }
            };
            // A DATA frame cut by reads comes in pieces: join them.
            if let (Some(Ev::Data(t0, l0, w0, d0)), Ev::Data(t, l, w, d)) = (events.last_mut(), &ev)
            {
                if t0 == t {
                    *l0 += l;
                    *w0 += w;
                    if let (Some(d0), Some(d)) = (d0.as_mut(), d) {
                        d0.extend_from_slice(d);
                    }
                    return;
                }
            }
            events.push(ev);
        });
        assert!(body <= end as u64, "{body} body bytes from {end} bytes fed");
        assert_eq!(c.open_streams(), open.len(), "open_streams() disagrees");
        let out = c.pending_out().len();
        // Answers are never larger than twice what they answer.
        assert!(
            out <= 2 * (end - pos) + extra,
            "{out} bytes of output after a read of {}",
            end - pos
        );
        written += out;
        c.wrote(out);
        pos = end;
        if r.is_err() {
            result = r;
            assert!(c.going_away() && !c.can_open());
            assert_eq!(c.feed(b"", &mut |_| panic!("an event after the error")), r);
            break;
        }
    }
    assert!(written - first_out <= 2 * wire.len() + extra);
    let mut left = Vec::new();
    c.take_open(&mut left);
    left.sort_unstable();
    assert_eq!(left, open.keys().copied().collect::<Vec<_>>());
    assert_eq!(c.open_streams(), 0);
    (events, result)
}

/// Whether the frames, walked by their 9-byte headers, fill `wire` exactly.
fn ends_on_frame_boundary(wire: &[u8]) -> bool {
    let mut pos = 0;
    while wire.len() - pos >= 9 {
        let len = u32::from_be_bytes([0, wire[pos], wire[pos + 1], wire[pos + 2]]) as usize;
        pos += 9 + len;
        if pos > wire.len() {
            return false;
        }
    }
    pos == wire.len()
}

fuzz_target!(|data: &[u8]| {
    let [flags, n, rest @ ..] = data else {
        return;
    };
    let streams = (n & 7) as u32;
    let k = ((n >> 3) & 7) as usize;
    if rest.len() < k {
        return;
    }
    let (split, wire) = rest.split_at(k);
    let sizes: Vec<usize> = split.iter().map(|&b| b as usize + 1).collect();
    let capture = flags & 1 != 0;
    let req = request(*flags);

    let whole = run(&req, streams, capture, wire, &[]);
    let pieces = run(&req, streams, capture, wire, &sizes);
    // Answers queued within one read are capped; written between reads
    // they are not: a flood is refused only when it comes in one read.
    let flood = |r: &Result<(), ConnError>| r.is_err_and(|e| e.code == code::ENHANCE_YOUR_CALM);
    if flood(&whole.1) || flood(&pieces.1) {
        return;
    }
    let (mut whole, mut pieces) = (whole, pieces);
    if !ends_on_frame_boundary(wire) {
        // Bytes of a DATA frame the input cuts short are reported with the
        // frame's next body bytes or its end, which never come: how many
        // were reported depends on the reads. Only `wire` may differ.
        for e in whole.0.iter_mut().chain(pieces.0.iter_mut()) {
            if let Ev::Data(_, _, w, _) = e {
                *w = 0;
            }
        }
    }
    assert_eq!(
        whole, pieces,
        "fed whole vs split into reads of {sizes:?}: outcomes differ"
    );
});
