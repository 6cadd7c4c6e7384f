//! Tests of [`ClientConn`] by topic, through its public methods: the
//! server's frames in, events and our frames out. The helpers here build
//! server frames, open streams and parse what the connection queued.

use super::*;
use crate::h2::code::*;
use crate::h2::encode_request;
use crate::h2::frame::*;
use crate::h2::hpack::{put_field, put_str};

/// An owned [`Event`], for assertions.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Head {
        token: u32,
        status: u16,
        cl: Option<u64>,
        server: Option<Vec<u8>>,
        fields: Option<Vec<(String, String)>>,
        wire: u32,
    },
    Data {
        token: u32,
        len: u32,
        data: Option<Vec<u8>>,
        wire: u32,
    },
    End(u32),
    Reset(u32, u32),
    StreamError(u32, &'static str),
    GoAway(u32, u32),
    Unprocessed(u32),
}

impl From<Event<'_>> for Ev {
    fn from(e: Event<'_>) -> Ev {
        match e {
            Event::Head {
                token,
                status,
                content_length,
                server,
                fields,
                wire,
            } => Ev::Head {
                token,
                status,
                cl: content_length,
                server: server.map(<[u8]>::to_vec),
                fields: fields.map(<[(String, String)]>::to_vec),
                wire,
            },
            Event::Data {
                token,
                len,
                data,
                wire,
            } => Ev::Data {
                token,
                len,
                data: data.map(<[u8]>::to_vec),
                wire,
            },
            Event::End { token } => Ev::End(token),
            Event::Reset { token, code } => Ev::Reset(token, code),
            Event::StreamError { token, reason } => Ev::StreamError(token, reason),
            Event::GoAway {
                last_stream_id,
                code,
            } => Ev::GoAway(last_stream_id, code),
            Event::Unprocessed { token } => Ev::Unprocessed(token),
        }
    }
}

fn fr(ty: u8, flags: Flags, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    put_head(&mut v, payload.len(), ty, flags, stream);
    v.extend_from_slice(payload);
    v
}

fn settings(s: &[(u16, u32)]) -> Vec<u8> {
    let mut v = Vec::new();
    put_settings(&mut v, s);
    v
}

fn wu(stream: u32, inc: u32) -> Vec<u8> {
    fr(WINDOW_UPDATE, Flags::NONE, stream, &inc.to_be_bytes())
}

fn block(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut b = Vec::new();
    for (n, v) in fields {
        put_field(&mut b, n.as_bytes(), v.as_bytes());
    }
    b
}

/// A HEADERS frame with Flags::END_HEADERS.
fn headers(stream: u32, flags: Flags, fields: &[(&str, &str)]) -> Vec<u8> {
    fr(HEADERS, flags | Flags::END_HEADERS, stream, &block(fields))
}

fn data(stream: u32, flags: Flags, payload: &[u8]) -> Vec<u8> {
    fr(DATA, flags, stream, payload)
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn get() -> Request {
    encode_request(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n", false).unwrap()
}

fn head_req() -> Request {
    encode_request(b"HEAD / HTTP/1.1\r\nHost: h\r\n\r\n", false).unwrap()
}

fn post(n: usize) -> Request {
    let body: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let mut wire =
        format!("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: {n}\r\n\r\n").into_bytes();
    wire.extend_from_slice(&body);
    encode_request(&wire, false).unwrap()
}

fn feed(c: &mut ClientConn, bytes: &[u8]) -> (Vec<Ev>, Result<(), ConnError>) {
    let mut evs = Vec::new();
    let r = c.feed(bytes, &mut |e| evs.push(e.into()));
    (evs, r)
}

fn feed_ok(c: &mut ClientConn, bytes: &[u8]) -> Vec<Ev> {
    let (evs, r) = feed(c, bytes);
    r.unwrap();
    evs
}

/// The frames the connection wants to send (after the preface), drained.
fn sent(c: &mut ClientConn) -> Vec<(Head, Vec<u8>)> {
    let mut out = c.pending_out();
    if let Some(rest) = out.strip_prefix(PREFACE) {
        out = rest;
    }
    let mut frames = Vec::new();
    while !out.is_empty() {
        let h = Head::parse(out[..9].try_into().unwrap());
        let end = 9 + h.len as usize;
        frames.push((h, out[9..end].to_vec()));
        out = &out[end..];
    }
    let n = c.pending_out().len();
    c.wrote(n);
    frames
}

/// Heard the server's empty SETTINGS; `n` GET streams open (ids 1, 3…,
/// tokens 100, 101…); output drained.
fn conn(n: u32, capture: bool) -> ClientConn {
    let mut c = ClientConn::new();
    for i in 0..n {
        c.open(&get(), 100 + i, capture).unwrap();
    }
    feed_ok(&mut c, &settings(&[]));
    sent(&mut c);
    c
}

/// Joins consecutive Data events of a token: reads cut DATA differently.
fn merged(evs: Vec<Ev>) -> Vec<Ev> {
    let mut out: Vec<Ev> = Vec::new();
    for e in evs {
        if let (
            Some(Ev::Data {
                token: t0,
                len: l0,
                data: d0,
                wire: w0,
            }),
            Ev::Data {
                token,
                len,
                data,
                wire,
            },
        ) = (out.last_mut(), &e)
        {
            if t0 == token {
                *l0 += len;
                *w0 += wire;
                if let (Some(d0), Some(d)) = (d0.as_mut(), data) {
                    d0.extend_from_slice(d);
                }
                continue;
            }
        }
        out.push(e);
    }
    out
}

type Outcome = (Vec<Ev>, Result<(), ConnError>, Vec<(Head, Vec<u8>)>);

fn run_split(n: u32, capture: bool, wire: &[u8], cuts: &[usize]) -> Outcome {
    let mut c = conn(n, capture);
    let mut evs = Vec::new();
    let mut r = Ok(());
    let mut start = 0;
    for end in cuts.iter().copied().chain([wire.len()]) {
        let (e, res) = feed(&mut c, &wire[start..end]);
        evs.extend(e);
        start = end;
        if res.is_err() {
            r = res;
            break;
        }
    }
    (merged(evs), r, sent(&mut c))
}

/// Whole, cut at every single byte, and byte at a time: the same events,
/// result and output. Returns the events of the whole feed, unmerged.
fn check_all_splits(n: u32, capture: bool, wire: &[u8]) -> Vec<Ev> {
    let whole = run_split(n, capture, wire, &[]);
    for cut in 1..wire.len() {
        assert_eq!(run_split(n, capture, wire, &[cut]), whole, "cut at {cut}");
    }
    let every: Vec<usize> = (1..wire.len()).collect();
    assert_eq!(run_split(n, capture, wire, &every), whole, "byte at a time");
    let mut c = conn(n, capture);
    feed(&mut c, wire).0
}

fn head_ev(token: u32, status: u16, cl: Option<u64>, wire: usize) -> Ev {
    Ev::Head {
        token,
        status,
        cl,
        server: None,
        fields: None,
        wire: wire as u32,
    }
}

fn data_ev(token: u32, len: u32, wire: usize) -> Ev {
    Ev::Data {
        token,
        len,
        data: None,
        wire: wire as u32,
    }
}

mod errors;
mod recv;
mod send;
mod streams;
