//! Reading: responses split at every byte, HPACK, padding, control frames,
//! interim heads and trailers, body limits, receive windows, capture.

use super::*;

#[test]
fn simple_response_at_every_split() {
    let h = headers(
        1,
        Flags::NONE,
        &[
            (":status", "200"),
            ("content-length", "5"),
            ("server", "nginx"),
            ("content-type", "text/plain"),
        ],
    );
    let d = data(1, Flags::END_STREAM, b"hello");
    let evs = check_all_splits(1, false, &cat(&[&h, &d]));
    assert_eq!(
        evs,
        [
            Ev::Head {
                token: 100,
                status: 200,
                cl: Some(5),
                server: Some(b"nginx".to_vec()),
                fields: None,
                wire: h.len() as u32
            },
            data_ev(100, 5, d.len()),
            Ev::End(100),
        ]
    );
}

#[test]
fn capture_keeps_the_fields_typed_and_the_body() {
    let h = headers(
        1,
        Flags::NONE,
        &[
            (":status", "404"),
            ("content-type", "text/html"),
            ("x-a", "b c"),
        ],
    );
    let d = data(1, Flags::END_STREAM, b"nope");
    let evs = check_all_splits(1, true, &cat(&[&h, &d]));
    let fields = vec![
        ("content-type".to_string(), "text/html".to_string()),
        ("x-a".to_string(), "b c".to_string()),
    ];
    assert_eq!(
        evs,
        [
            Ev::Head {
                token: 100,
                status: 404,
                cl: None,
                server: None,
                fields: Some(fields),
                wire: h.len() as u32
            },
            Ev::Data {
                token: 100,
                len: 4,
                data: Some(b"nope".to_vec()),
                wire: d.len() as u32
            },
            Ev::End(100),
        ]
    );
}

/// RFC 7541 C.6's three responses, Huffman-coded with evictions, as the
/// heads of three streams, captured and not: the table stays exact.
#[test]
fn huffman_and_dynamic_table_across_streams() {
    let blocks = [
        "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
         2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        "4883 640e ffc1 c0bf",
        "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab
         77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f
         9587 3160 65c0 03ed 4ee5 b106 3d50 07",
    ];
    let mut wire = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        let s: String = b.chars().filter(|c| !c.is_whitespace()).collect();
        let bytes: Vec<u8> = (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect();
        wire.extend(fr(
            HEADERS,
            Flags::END_HEADERS | Flags::END_STREAM,
            1 + 2 * i as u32,
            &bytes,
        ));
    }
    for capture in [false, true] {
        let mut c = conn(3, capture);
        // The server's table is 4096 but C.6 assumes 256: say so first.
        // Stream 1 ends there, so its C.6 block is decoded only for the
        // table.
        let w = fr(
            HEADERS,
            Flags::END_HEADERS | Flags::END_STREAM,
            1,
            &[0x3f, 0xe1, 0x01, 0x88],
        );
        let evs = feed_ok(&mut c, &w);
        assert!(
            matches!(evs[..], [Ev::Head { status: 200, .. }, Ev::End(100)]),
            "{evs:?}"
        );
        let evs = feed_ok(&mut c, &wire[..]);
        let statuses: Vec<(u32, u16)> = evs
            .iter()
            .filter_map(|e| match e {
                Ev::Head { token, status, .. } => Some((*token, *status)),
                _ => None,
            })
            .collect();
        assert_eq!(statuses, [(101, 307), (102, 200)], "stream 1 already ended");
        if capture {
            let Ev::Head {
                fields: Some(f), ..
            } = &evs[2]
            else {
                panic!("{evs:?}")
            };
            let f: Vec<(&str, &str)> = f.iter().map(|(n, v)| (&n[..], &v[..])).collect();
            assert_eq!(
                f,
                [
                    ("cache-control", "private"),
                    ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
                    ("location", "https://www.example.com"),
                    ("content-encoding", "gzip"),
                    (
                        "set-cookie",
                        "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
                    ),
                ]
            );
        }
    }
}

#[test]
fn continuation_padding_and_priority_at_every_split() {
    let b = block(&[(":status", "200"), ("x-a", "1"), ("server", "s")]);
    let mut p = vec![3, 0, 0, 0, 0, 16];
    p.extend_from_slice(&b[..2]);
    p.extend_from_slice(&[0, 0, 0]);
    let h1 = fr(HEADERS, Flags::PADDED | Flags::PRIORITY, 1, &p);
    let h2 = fr(CONTINUATION, Flags::NONE, 1, &b[2..4]);
    let h3 = fr(CONTINUATION, Flags::END_HEADERS, 1, &b[4..]);
    let d1 = fr(DATA, Flags::PADDED, 1, &[4, b'a', b'b', b'c', 0, 0, 0, 0]);
    let d2 = data(1, Flags::END_STREAM, b"");
    let wire = cat(&[&h1, &h2, &h3, &d1, &d2]);
    let evs = check_all_splits(1, true, &wire);
    assert_eq!(
        evs,
        [
            Ev::Head {
                token: 100,
                status: 200,
                cl: None,
                server: Some(b"s".to_vec()),
                fields: Some(vec![
                    ("x-a".to_string(), "1".to_string()),
                    ("server".to_string(), "s".to_string())
                ]),
                wire: (h1.len() + h2.len() + h3.len()) as u32
            },
            Ev::Data {
                token: 100,
                len: 3,
                data: Some(b"abc".to_vec()),
                wire: d1.len() as u32
            },
            Ev::Data {
                token: 100,
                len: 0,
                data: Some(vec![]),
                wire: 9
            },
            Ev::End(100),
        ]
    );
}

/// Every frame type the reader buffers or skips, cut everywhere.
#[test]
fn control_frames_at_every_split() {
    let wire = cat(&[
        &settings(&[(SETTINGS_MAX_CONCURRENT_STREAMS, 7), (0x99, 1)]),
        &fr(PING, Flags::NONE, 0, b"12345678"),
        &fr(
            0x20,
            Flags::from_bits(0xff),
            5,
            b"unknown frame types are skipped",
        ),
        &fr(PRIORITY, Flags::NONE, 3, &[0, 0, 0, 0, 9]),
        &fr(PRIORITY, Flags::NONE, 11, &[0, 0, 0, 0, 9]),
        &headers(1, Flags::NONE, &[(":status", "200")]),
        &fr(DATA, Flags::PADDED, 1, &[200; 201]),
        &fr(RST_STREAM, Flags::NONE, 3, &REFUSED_STREAM.to_be_bytes()),
        &fr(SETTINGS, Flags::ACK, 0, &[]),
        &fr(
            GOAWAY,
            Flags::NONE,
            0,
            &[0, 0, 0, 1, 0, 0, 0, 0, b'b', b'y', b'e'],
        ),
        &data(1, Flags::END_STREAM, b"z"),
    ]);
    let evs = check_all_splits(3, false, &wire);
    assert_eq!(
        evs,
        [
            head_ev(100, 200, None, 10),
            data_ev(100, 0, 9 + 201),
            Ev::Reset(101, REFUSED_STREAM),
            Ev::GoAway(1, NO_ERROR),
            Ev::Unprocessed(102),
            data_ev(100, 1, 10),
            Ev::End(100),
        ]
    );
    let mut c = conn(3, false);
    feed_ok(&mut c, &wire);
    let f = sent(&mut c);
    assert_eq!(f.len(), 2);
    assert_eq!((f[0].0.ty, f[0].0.flags), (SETTINGS, Flags::ACK));
    assert_eq!(
        (f[1].0.ty, f[1].0.flags, &f[1].1[..]),
        (PING, Flags::ACK, &b"12345678"[..])
    );
    assert_eq!(c.peer_max_streams(), Some(7));
}

#[test]
fn ping_is_answered_and_ping_ack_is_not() {
    let mut c = conn(0, false);
    assert!(feed_ok(&mut c, &fr(PING, Flags::NONE, 0, b"abcdefgh")).is_empty());
    let f = sent(&mut c);
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].0.ty, f[0].0.flags, f[0].0.stream),
        (PING, Flags::ACK, 0)
    );
    assert_eq!(f[0].1, b"abcdefgh");
    feed_ok(&mut c, &fr(PING, Flags::ACK, 0, b"abcdefgh"));
    assert!(sent(&mut c).is_empty());
}

#[test]
fn a_ping_flood_is_refused() {
    let mut c = conn(0, false);
    let ping = fr(PING, Flags::NONE, 0, b"abcdefgh");
    let flood: Vec<u8> = (0..MAX_QUEUED_ACKS + 1)
        .flat_map(|_| ping.clone())
        .collect();
    let (_, r) = feed(&mut c, &flood);
    assert_eq!(r.unwrap_err().code, ENHANCE_YOUR_CALM);
    // A caller that writes between reads is never refused.
    let mut c = conn(0, false);
    for _ in 0..3 * MAX_QUEUED_ACKS {
        feed_ok(&mut c, &ping);
        sent(&mut c);
    }
}

#[test]
fn cancelled_streams_still_feed_the_hpack_table() {
    let mut c = conn(2, false);
    c.cancel(1);
    c.cancel(1);
    let f = sent(&mut c);
    assert_eq!(f.len(), 1);
    assert_eq!((f[0].0.ty, f[0].0.stream), (RST_STREAM, 1));
    assert_eq!(f[0].1, CANCEL.to_be_bytes());
    // Stream 1's response was on its way: it adds "server: srv-x".
    let mut b1 = vec![0x88, 0x40 | 54];
    put_str(&mut b1, b"srv-x");
    let late = cat(&[
        &fr(HEADERS, Flags::END_HEADERS, 1, &b1),
        &data(1, Flags::END_STREAM, b"abc"),
    ]);
    assert!(feed_ok(&mut c, &late).is_empty());
    // Stream 3 refers to it by index.
    let evs = feed_ok(
        &mut c,
        &fr(
            HEADERS,
            Flags::END_HEADERS | Flags::END_STREAM,
            3,
            &[0x88, 0xbe],
        ),
    );
    assert_eq!(
        evs,
        [
            Ev::Head {
                token: 101,
                status: 200,
                cl: None,
                server: Some(b"srv-x".to_vec()),
                fields: None,
                wire: 11
            },
            Ev::End(101)
        ]
    );
}

#[test]
fn interim_heads_and_trailers() {
    let h100 = headers(1, Flags::NONE, &[(":status", "100")]);
    let h103 = headers(
        1,
        Flags::NONE,
        &[(":status", "103"), ("link", "</a>; rel=preload")],
    );
    let h200 = headers(
        1,
        Flags::NONE,
        &[(":status", "200"), ("content-length", "2")],
    );
    let d = data(1, Flags::NONE, b"ab");
    let t = headers(1, Flags::END_STREAM, &[("x-checksum", "1")]);
    let wire = cat(&[&h100, &h103, &h200, &d, &t]);
    let evs = check_all_splits(1, false, &wire);
    assert_eq!(
        evs,
        [
            head_ev(100, 200, Some(2), h100.len() + h103.len() + h200.len()),
            data_ev(100, 2, d.len()),
            data_ev(100, 0, t.len()),
            Ev::End(100),
        ]
    );
}

/// A body longer than content-length is refused before any of the
/// offending frame is reported, wherever the reads cut it (the fuzzer
/// found the split-dependent version).
#[test]
fn too_long_body_is_refused_whole_at_every_split() {
    let h = headers(
        1,
        Flags::NONE,
        &[(":status", "200"), ("content-length", "4")],
    );
    let wire = cat(&[
        &h,
        &data(1, Flags::NONE, b"ab"),
        &fr(
            DATA,
            Flags::PADDED | Flags::END_STREAM,
            1,
            &[1, b'c', b'd', b'e', 0],
        ),
    ]);
    let evs = check_all_splits(1, false, &wire);
    assert_eq!(
        evs,
        [
            head_ev(100, 200, Some(4), h.len()),
            data_ev(100, 2, 11),
            Ev::StreamError(100, "response body longer than its content-length"),
        ]
    );
}

#[test]
fn head_204_and_304_responses_have_no_body() {
    let mut c = conn(0, false);
    c.open(&head_req(), 1, false).unwrap();
    c.open(&get(), 2, false).unwrap();
    c.open(&head_req(), 3, false).unwrap();
    c.open(&get(), 4, false).unwrap();
    let h = headers(
        1,
        Flags::END_STREAM,
        &[(":status", "200"), ("content-length", "1000")],
    );
    assert_eq!(
        feed_ok(&mut c, &h),
        [head_ev(1, 200, Some(1000), h.len()), Ev::End(1)]
    );
    let h = headers(3, Flags::END_STREAM, &[(":status", "204")]);
    assert_eq!(
        feed_ok(&mut c, &h),
        [head_ev(2, 204, None, h.len()), Ev::End(2)]
    );
    let h = headers(
        5,
        Flags::NONE,
        &[(":status", "200"), ("content-length", "3")],
    );
    let evs = feed_ok(&mut c, &cat(&[&h, &data(5, Flags::END_STREAM, b"abc")]));
    assert_eq!(
        evs[1],
        Ev::StreamError(3, "body in a response that has none (HEAD, 204, 304)")
    );
    let h = headers(7, Flags::NONE, &[(":status", "304")]);
    let evs = feed_ok(&mut c, &cat(&[&h, &data(7, Flags::END_STREAM, b"")]));
    assert_eq!(evs.last(), Some(&Ev::End(4)));
}

/// A thousand streams answered out of order: the stream table's
/// deletions keep every lookup right.
#[test]
fn many_streams_answered_out_of_order() {
    let mut c = conn(0, false);
    for t in 0..1000 {
        c.open(&get(), t, false).unwrap();
    }
    let mut order: Vec<u32> = (0..1000).collect();
    let mut x = 12345u32;
    for i in (1..order.len()).rev() {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        order.swap(i, (x >> 8) as usize % (i + 1));
    }
    for (n, &t) in order.iter().enumerate() {
        let evs = feed_ok(
            &mut c,
            &headers(2 * t + 1, Flags::END_STREAM, &[(":status", "200")]),
        );
        assert_eq!(evs, [head_ev(t, 200, None, 10), Ev::End(t)]);
        assert_eq!(c.open_streams(), 999 - n);
        if n % 3 == 0 {
            // New streams join while old ones leave.
            let id = c.open(&get(), 5000 + n as u32, false).unwrap();
            c.cancel(id);
        }
    }
    assert_eq!(c.open_streams(), 0);
}

#[test]
fn receive_windows_are_topped_up_past_half() {
    let mut c = conn(1, false);
    feed_ok(&mut c, &headers(1, Flags::NONE, &[(":status", "200")]));
    let frame = data(1, Flags::NONE, &[7; 16_384]);
    let mut body = 0u64;
    let mut updates = Vec::new();
    while body < 3 * RECV_WINDOW as u64 {
        c.feed(&frame, &mut |_| {}).unwrap();
        body += 16_384;
        for (h, p) in sent(&mut c) {
            assert_eq!(h.ty, WINDOW_UPDATE);
            updates.push((h.stream, be32(&p), body));
        }
    }
    let conn_updates: Vec<_> = updates.iter().filter(|u| u.0 == 0).collect();
    let stream_updates: Vec<_> = updates.iter().filter(|u| u.0 == 1).collect();
    // Half a window is 2^29 - 1 bytes: every 32,768th frame crosses it.
    assert_eq!(conn_updates.len(), 6);
    assert_eq!(stream_updates.len(), 6);
    for (i, u) in conn_updates.iter().chain(&stream_updates).enumerate() {
        assert_eq!(u.1, 1 << 29, "{u:?}");
        assert_eq!(u.2, (i as u64 % 6 + 1) << 29, "{u:?}");
    }
}

#[test]
fn capture_refuses_values_that_would_break_the_http1_head() {
    let mut c = conn(1, true);
    let evs = feed_ok(
        &mut c,
        &headers(1, Flags::END_STREAM, &[(":status", "200"), ("x", "a\r\nb")]),
    );
    assert_eq!(evs, [Ev::StreamError(100, "invalid field value")]);
}
