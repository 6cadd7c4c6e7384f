//! Connection and stream errors, each by name, and how they display.

use super::*;

fn refused(c: &mut ClientConn, wire: &[u8]) -> ConnError {
    let (evs, r) = feed(c, wire);
    let Err(e) = r else {
        panic!("no connection error; events {evs:?}")
    };
    let f = sent(c);
    let (h, p) = f.last().expect("a GOAWAY");
    assert_eq!(h.ty, GOAWAY);
    assert_eq!(be32(&p[4..]), e.code);
    assert_eq!(&p[8..], e.reason.as_bytes());
    assert_eq!(feed(c, b"").1, Err(e), "the error sticks");
    assert!(c.going_away() && !c.can_open());
    assert_eq!(c.open(&get(), 1, false), Err(OpenError::GoingAway));
    e
}

#[test]
fn connection_errors() {
    let big_block: Vec<u8> = cat(&[
        &fr(HEADERS, Flags::NONE, 1, &[0x88]),
        &(0..17)
            .flat_map(|_| fr(CONTINUATION, Flags::NONE, 1, &[0; 16_384]))
            .collect::<Vec<u8>>(),
    ]);
    let cases: Vec<(&str, Vec<u8>, u32)> = vec![
        (
            "DATA on stream 0",
            data(0, Flags::NONE, b"x"),
            PROTOCOL_ERROR,
        ),
        (
            "DATA on an idle stream",
            data(9, Flags::NONE, b"x"),
            PROTOCOL_ERROR,
        ),
        (
            "HEADERS on stream 0",
            headers(0, Flags::NONE, &[(":status", "200")]),
            PROTOCOL_ERROR,
        ),
        (
            "HEADERS on an idle stream",
            headers(7, Flags::NONE, &[(":status", "200")]),
            PROTOCOL_ERROR,
        ),
        (
            "HEADERS on an even stream",
            headers(2, Flags::NONE, &[(":status", "200")]),
            PROTOCOL_ERROR,
        ),
        (
            "frame too large",
            fr(PING, Flags::NONE, 0, &[0; 16_385]),
            FRAME_SIZE_ERROR,
        ),
        (
            "SETTINGS length 5",
            fr(SETTINGS, Flags::NONE, 0, &[0; 5]),
            FRAME_SIZE_ERROR,
        ),
        (
            "SETTINGS ACK with payload",
            fr(SETTINGS, Flags::ACK, 0, &[0; 6]),
            FRAME_SIZE_ERROR,
        ),
        (
            "SETTINGS on a stream",
            fr(SETTINGS, Flags::NONE, 1, &[]),
            PROTOCOL_ERROR,
        ),
        (
            "ENABLE_PUSH 1",
            settings(&[(SETTINGS_ENABLE_PUSH, 1)]),
            PROTOCOL_ERROR,
        ),
        (
            "window 2^31",
            settings(&[(SETTINGS_INITIAL_WINDOW_SIZE, 1 << 31)]),
            FLOW_CONTROL_ERROR,
        ),
        (
            "frame size too small",
            settings(&[(SETTINGS_MAX_FRAME_SIZE, 16_383)]),
            PROTOCOL_ERROR,
        ),
        (
            "frame size too big",
            settings(&[(SETTINGS_MAX_FRAME_SIZE, 1 << 24)]),
            PROTOCOL_ERROR,
        ),
        (
            "PING length 7",
            fr(PING, Flags::NONE, 0, &[0; 7]),
            FRAME_SIZE_ERROR,
        ),
        (
            "PING on a stream",
            fr(PING, Flags::NONE, 1, &[0; 8]),
            PROTOCOL_ERROR,
        ),
        ("connection WINDOW_UPDATE of 0", wu(0, 0), PROTOCOL_ERROR),
        (
            "connection window overflow",
            wu(0, MAX_WINDOW),
            FLOW_CONTROL_ERROR,
        ),
        (
            "WINDOW_UPDATE length 3",
            fr(WINDOW_UPDATE, Flags::NONE, 0, &[0; 3]),
            FRAME_SIZE_ERROR,
        ),
        ("WINDOW_UPDATE on an idle stream", wu(7, 1), PROTOCOL_ERROR),
        (
            "PUSH_PROMISE",
            fr(PUSH_PROMISE, Flags::END_HEADERS, 1, &[0, 0, 0, 2, 0x82]),
            PROTOCOL_ERROR,
        ),
        (
            "CONTINUATION alone",
            fr(CONTINUATION, Flags::END_HEADERS, 1, &[0x88]),
            PROTOCOL_ERROR,
        ),
        (
            "header block interrupted",
            cat(&[
                &fr(HEADERS, Flags::NONE, 1, &[0x88]),
                &fr(PING, Flags::NONE, 0, &[0; 8]),
            ]),
            PROTOCOL_ERROR,
        ),
        (
            "CONTINUATION on another stream",
            cat(&[
                &fr(HEADERS, Flags::NONE, 1, &[0x88]),
                &fr(CONTINUATION, Flags::END_HEADERS, 3, &[]),
            ]),
            PROTOCOL_ERROR,
        ),
        ("header block too large", big_block, ENHANCE_YOUR_CALM),
        (
            "bad HPACK index",
            fr(HEADERS, Flags::END_HEADERS, 1, &[0x80]),
            COMPRESSION_ERROR,
        ),
        (
            "bad HPACK on a cancelled stream too",
            fr(HEADERS, Flags::END_HEADERS, 5, &[0xff, 0xff, 0xff]),
            COMPRESSION_ERROR,
        ),
        (
            "DATA padding too long",
            cat(&[
                &headers(1, Flags::NONE, &[(":status", "200")]),
                &fr(DATA, Flags::PADDED, 1, &[2, 1]),
            ]),
            PROTOCOL_ERROR,
        ),
        (
            "DATA padded without pad length",
            fr(DATA, Flags::PADDED, 1, &[]),
            FRAME_SIZE_ERROR,
        ),
        (
            "HEADERS padding too long",
            fr(HEADERS, Flags::END_HEADERS | Flags::PADDED, 1, &[2, 0x88]),
            PROTOCOL_ERROR,
        ),
        (
            "HEADERS too short for priority",
            fr(HEADERS, Flags::END_HEADERS | Flags::PRIORITY, 1, &[0, 0, 0]),
            FRAME_SIZE_ERROR,
        ),
        (
            "RST_STREAM length 3",
            fr(RST_STREAM, Flags::NONE, 1, &[0; 3]),
            FRAME_SIZE_ERROR,
        ),
        (
            "RST_STREAM on stream 0",
            fr(RST_STREAM, Flags::NONE, 0, &[0; 4]),
            PROTOCOL_ERROR,
        ),
        (
            "RST_STREAM on an idle stream",
            fr(RST_STREAM, Flags::NONE, 9, &[0; 4]),
            PROTOCOL_ERROR,
        ),
        (
            "GOAWAY length 4",
            fr(GOAWAY, Flags::NONE, 0, &[0; 4]),
            FRAME_SIZE_ERROR,
        ),
        (
            "GOAWAY on a stream",
            fr(GOAWAY, Flags::NONE, 1, &[0; 8]),
            PROTOCOL_ERROR,
        ),
        (
            "PRIORITY on stream 0",
            fr(PRIORITY, Flags::NONE, 0, &[0; 5]),
            PROTOCOL_ERROR,
        ),
        (
            "initial window change overflows a stream",
            cat(&[
                &wu(1, MAX_WINDOW - 65_535),
                &settings(&[(SETTINGS_INITIAL_WINDOW_SIZE, 65_536)]),
            ]),
            FLOW_CONTROL_ERROR,
        ),
    ];
    for (name, wire, code) in cases {
        let mut c = conn(3, false);
        c.cancel(5);
        sent(&mut c);
        let mut probe = conn(3, false);
        probe.cancel(5);
        let (evs, r) = feed(&mut probe, &wire);
        assert!(r.is_err(), "{name}: {evs:?}");
        assert_eq!(refused(&mut c, &wire).code, code, "{name}");
    }
}

#[test]
fn a_server_that_does_not_speak_http2_is_told_apart() {
    let mut c = ClientConn::new();
    let e = refused(
        &mut c,
        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
    );
    assert!(e.reason.contains("HTTP/1.x"), "{e}");
    assert!(!c.heard_from_peer());
    let mut c = ClientConn::new();
    let e = refused(&mut c, &fr(PING, Flags::NONE, 0, &[0; 8]));
    assert!(e.reason.contains("not SETTINGS"), "{e}");
    let mut c = ClientConn::new();
    refused(&mut c, &fr(SETTINGS, Flags::ACK, 0, &[]));
    assert_eq!(
        e.to_string(),
        "the server's first frame is not SETTINGS: not an HTTP/2 server? (PROTOCOL_ERROR)"
    );
}

#[test]
fn stream_errors_reset_only_the_stream() {
    let prio = |dep: u32| {
        let mut p = dep.to_be_bytes().to_vec();
        p.push(16);
        p.push(0x88);
        fr(HEADERS, Flags::END_HEADERS | Flags::PRIORITY, 1, &p)
    };
    let ok = |fields: &[(&str, &str)]| headers(1, Flags::NONE, fields);
    let cases: Vec<(Vec<u8>, &str, u32)> = vec![
        (
            data(1, Flags::NONE, b"x"),
            "DATA before the response head",
            PROTOCOL_ERROR,
        ),
        (ok(&[(":status", "abc")]), "invalid :status", PROTOCOL_ERROR),
        (ok(&[(":status", "099")]), "invalid :status", PROTOCOL_ERROR),
        (
            ok(&[(":status", "2000")]),
            "invalid :status",
            PROTOCOL_ERROR,
        ),
        (
            ok(&[("x-a", "1")]),
            "response without :status",
            PROTOCOL_ERROR,
        ),
        (
            ok(&[(":status", "200"), ("X-Up", "1")]),
            "invalid field name",
            PROTOCOL_ERROR,
        ),
        (
            ok(&[(":status", "200"), ("connection", "close")]),
            "connection-specific field in a response",
            PROTOCOL_ERROR,
        ),
        (
            ok(&[(":status", "200"), ("transfer-encoding", "chunked")]),
            "connection-specific field in a response",
            PROTOCOL_ERROR,
        ),
        (
            ok(&[(":status", "200"), (":path", "/")]),
            "request pseudo-header field in a response",
            PROTOCOL_ERROR,
        ),
        (
            ok(&[("x-a", "1"), (":status", "200")]),
            "misplaced or repeated :status",
            PROTOCOL_ERROR,
        ),
        (
            ok(&[(":status", "200"), (":status", "204")]),
            "misplaced or repeated :status",
            PROTOCOL_ERROR,
        ),
        (
            ok(&[(":status", "200"), ("content-length", "1x")]),
            "invalid content-length",
            PROTOCOL_ERROR,
        ),
        (
            ok(&[
                (":status", "200"),
                ("content-length", "1"),
                ("content-length", "2"),
            ]),
            "invalid content-length",
            PROTOCOL_ERROR,
        ),
        (
            cat(&[
                &ok(&[(":status", "200"), ("content-length", "2")]),
                &data(1, Flags::END_STREAM, b"abc"),
            ]),
            "response body longer than its content-length",
            PROTOCOL_ERROR,
        ),
        (
            cat(&[
                &ok(&[(":status", "200"), ("content-length", "5")]),
                &data(1, Flags::END_STREAM, b"abc"),
            ]),
            "response body shorter than its content-length",
            PROTOCOL_ERROR,
        ),
        (
            headers(
                1,
                Flags::END_STREAM,
                &[(":status", "200"), ("content-length", "5")],
            ),
            "response body shorter than its content-length",
            PROTOCOL_ERROR,
        ),
        (
            headers(1, Flags::END_STREAM, &[(":status", "100")]),
            "an interim (1xx) response ended the stream",
            PROTOCOL_ERROR,
        ),
        (
            ok(&[(":status", "101")]),
            "101 Switching Protocols is not allowed in HTTP/2",
            PROTOCOL_ERROR,
        ),
        (
            cat(&[&ok(&[(":status", "200")]), &ok(&[("x-t", "1")])]),
            "trailers without END_STREAM",
            PROTOCOL_ERROR,
        ),
        (
            cat(&[
                &ok(&[(":status", "200")]),
                &headers(1, Flags::END_STREAM, &[(":status", "200")]),
            ]),
            "pseudo-header field in trailers",
            PROTOCOL_ERROR,
        ),
        (wu(1, 0), "WINDOW_UPDATE of 0", PROTOCOL_ERROR),
        (
            wu(1, MAX_WINDOW),
            "stream window above 2^31-1",
            FLOW_CONTROL_ERROR,
        ),
        (prio(1), "stream depends on itself", PROTOCOL_ERROR),
        (
            fr(PRIORITY, Flags::NONE, 1, &[0, 0, 0, 1, 0]),
            "stream depends on itself",
            PROTOCOL_ERROR,
        ),
        (
            fr(PRIORITY, Flags::NONE, 1, &[0; 4]),
            "PRIORITY payload not 5 bytes",
            FRAME_SIZE_ERROR,
        ),
    ];
    for (wire, reason, code) in cases {
        let mut c = conn(2, false);
        let evs = feed_ok(&mut c, &wire);
        assert_eq!(
            evs.last(),
            Some(&Ev::StreamError(100, reason)),
            "{reason}: {evs:?}"
        );
        let f = sent(&mut c);
        assert_eq!(f.len(), 1, "{reason}");
        assert_eq!((f[0].0.ty, f[0].0.stream), (RST_STREAM, 1), "{reason}");
        assert_eq!(be32(&f[0].1), code, "{reason}");
        assert_eq!(c.open_streams(), 1, "{reason}");
        // The connection goes on: stream 3 still gets its response.
        let evs = feed_ok(
            &mut c,
            &headers(3, Flags::END_STREAM, &[(":status", "200")]),
        );
        assert_eq!(evs, [head_ev(101, 200, None, 10), Ev::End(101)], "{reason}");
    }
}

#[test]
fn events_and_errors_display() {
    let e = err(FLOW_CONTROL_ERROR, "DATA beyond the stream window");
    assert_eq!(
        e.to_string(),
        "DATA beyond the stream window (FLOW_CONTROL_ERROR)"
    );
    assert_eq!(
        OpenError::AtLimit.to_string(),
        "the server's limit of concurrent streams is reached"
    );
    assert_eq!(crate::h2::code::name(99), "unknown");
}
