//! Writing: the preface, HEADERS and CONTINUATION, partial writes, request
//! bodies held by the send windows.

use super::*;

#[test]
fn new_queues_preface_settings_and_connection_window() {
    let mut c = ClientConn::new();
    assert!(c.pending_out().starts_with(PREFACE));
    let f = sent(&mut c);
    assert_eq!(f.len(), 2);
    assert_eq!(
        (f[0].0.ty, f[0].0.flags, f[0].0.stream),
        (SETTINGS, Flags::NONE, 0)
    );
    assert_eq!(f[0].1, [0, 2, 0, 0, 0, 0, 0, 4, 0x3f, 0xff, 0xff, 0xff]);
    assert_eq!((f[1].0.ty, f[1].0.stream), (WINDOW_UPDATE, 0));
    assert_eq!(f[1].1, (RECV_WINDOW - 65_535).to_be_bytes());
    assert!(c.pending_out().is_empty());
    assert!(!c.heard_from_peer());
    assert!(c.can_open());
    assert_eq!(c.peer_max_streams(), None);
}

#[test]
fn open_queues_one_headers_frame_per_stream() {
    let mut c = conn(0, false);
    let req = get();
    assert_eq!(c.open(&req, 7, false), Ok(1));
    assert_eq!(c.open(&req, 8, false), Ok(3));
    let f = sent(&mut c);
    assert_eq!(f.len(), 2);
    for (i, (h, p)) in f.iter().enumerate() {
        assert_eq!(
            (h.ty, h.flags, h.stream),
            (
                HEADERS,
                Flags::END_HEADERS | Flags::END_STREAM,
                1 + 2 * i as u32
            )
        );
        assert_eq!(p, req.block(), "the same block for every stream");
    }
    assert_eq!(c.open_streams(), 2);
}

#[test]
fn partial_writes_drop_what_was_written() {
    let mut c = conn(0, false);
    c.open(&get(), 1, false).unwrap();
    c.open(&get(), 2, false).unwrap();
    let all = c.pending_out().to_vec();
    c.wrote(5);
    assert_eq!(c.pending_out(), &all[5..]);
    c.open(&get(), 3, false).unwrap();
    assert_eq!(&c.pending_out()[..all.len() - 5], &all[5..]);
    let n = c.pending_out().len();
    c.wrote(n + 10);
    assert!(c.pending_out().is_empty());
}

/// Data segments of the DATA frames in `frames`, and whether the last
/// one ended the stream.
fn data_sent(frames: &[(Head, Vec<u8>)]) -> (Vec<u8>, bool) {
    let mut body = Vec::new();
    let mut end = false;
    for (h, p) in frames.iter().filter(|(h, _)| h.ty == DATA) {
        assert!(h.len <= 16_384);
        assert!(!end, "DATA after END_STREAM");
        body.extend_from_slice(p);
        end = h.flags.contains(Flags::END_STREAM);
    }
    (body, end)
}

#[test]
fn body_larger_than_the_window_waits_for_window_updates() {
    let mut c = conn(0, false);
    let req = post(120_000);
    let body = req.body().to_vec();
    c.open(&req, 1, false).unwrap();
    let f = sent(&mut c);
    assert_eq!((f[0].0.ty, f[0].0.flags), (HEADERS, Flags::END_HEADERS));
    assert_eq!(data_sent(&f), (body[..65_535].to_vec(), false));
    // The stream gets window, but the connection has none.
    feed_ok(&mut c, &wu(1, 40_000));
    assert!(sent(&mut c).is_empty());
    feed_ok(&mut c, &wu(0, 50_000));
    assert_eq!(
        data_sent(&sent(&mut c)),
        (body[65_535..105_535].to_vec(), false)
    );
    // Now the connection (10,000 left) is the limit.
    feed_ok(&mut c, &wu(1, 20_000));
    assert_eq!(
        data_sent(&sent(&mut c)),
        (body[105_535..115_535].to_vec(), false)
    );
    feed_ok(&mut c, &wu(0, 5_000));
    assert_eq!(data_sent(&sent(&mut c)), (body[115_535..].to_vec(), true));
    feed_ok(&mut c, &wu(0, 5_000));
    assert!(sent(&mut c).is_empty());
    let wire = cat(&[
        &headers(1, Flags::NONE, &[(":status", "201")]),
        &data(1, Flags::END_STREAM, b""),
    ]);
    let evs = feed_ok(&mut c, &wire);
    assert_eq!(evs.last(), Some(&Ev::End(1)));
    assert!(sent(&mut c).is_empty(), "no RST: the body was all sent");
}

/// Two bodies held by their stream windows, then by the connection's:
/// each moves on its own update, and the connection's goes to the
/// oldest first.
#[test]
fn waiting_bodies_share_the_connection_window_in_order() {
    let mut c = conn(0, false);
    feed_ok(&mut c, &settings(&[(SETTINGS_INITIAL_WINDOW_SIZE, 10)]));
    let (a, b) = (post(40_000), post(40_000));
    c.open(&a, 1, false).unwrap();
    c.open(&b, 2, false).unwrap();
    let f = sent(&mut c);
    let per_stream = |f: &[(Head, Vec<u8>)], id: u32| -> usize {
        f.iter()
            .filter(|(h, _)| h.ty == DATA && h.stream == id)
            .map(|(h, _)| h.len as usize)
            .sum()
    };
    assert_eq!((per_stream(&f, 1), per_stream(&f, 3)), (10, 10));
    feed_ok(&mut c, &wu(3, 5));
    let f = sent(&mut c);
    assert_eq!((per_stream(&f, 1), per_stream(&f, 3)), (0, 5));
    // Both get plenty; the connection has 65,535 - 25 left.
    feed_ok(&mut c, &cat(&[&wu(3, 50_000), &wu(1, 50_000)]));
    let f = sent(&mut c);
    assert_eq!(
        (per_stream(&f, 1), per_stream(&f, 3)),
        (65_535 - 25 - 39_985, 39_985)
    );
    feed_ok(&mut c, &wu(0, 100_000));
    let (body, end) = data_sent(&sent(&mut c));
    assert_eq!((body.len(), end), (39_990 - (65_535 - 25 - 39_985), true));
}

#[test]
fn initial_window_changes_move_open_streams_windows() {
    let mut c = ClientConn::new();
    sent(&mut c);
    feed_ok(&mut c, &settings(&[(SETTINGS_INITIAL_WINDOW_SIZE, 16)]));
    assert_eq!(sent(&mut c)[0].0.flags, Flags::ACK);
    let req = post(100);
    let body = req.body().to_vec();
    c.open(&req, 1, false).unwrap();
    assert_eq!(data_sent(&sent(&mut c)), (body[..16].to_vec(), false));
    // 16 → 6: the window goes to -10.
    feed_ok(&mut c, &settings(&[(SETTINGS_INITIAL_WINDOW_SIZE, 6)]));
    let f = sent(&mut c);
    assert_eq!(
        (f.len(), f[0].0.ty, f[0].0.flags),
        (1, SETTINGS, Flags::ACK)
    );
    feed_ok(&mut c, &wu(1, 15));
    assert_eq!(data_sent(&sent(&mut c)), (body[16..21].to_vec(), false));
    // 6 → 100: +94.
    feed_ok(&mut c, &settings(&[(SETTINGS_INITIAL_WINDOW_SIZE, 100)]));
    let f = sent(&mut c);
    assert_eq!((f[0].0.ty, f[0].0.flags), (SETTINGS, Flags::ACK));
    assert_eq!(data_sent(&f), (body[21..].to_vec(), true));
}

#[test]
fn headers_beyond_the_peers_frame_size_go_in_continuation() {
    let long = "v".repeat(20_000);
    let wire = format!("GET / HTTP/1.1\r\nHost: h\r\nX-Long: {long}\r\n\r\n");
    let req = encode_request(wire.as_bytes(), false).unwrap();
    let mut c = conn(0, false);
    c.open(&req, 1, false).unwrap();
    let f = sent(&mut c);
    assert_eq!(f.len(), 2);
    assert_eq!(
        (f[0].0.ty, f[0].0.flags, f[0].0.len),
        (HEADERS, Flags::END_STREAM, 16_384)
    );
    assert_eq!(
        (f[1].0.ty, f[1].0.flags, f[1].0.stream),
        (CONTINUATION, Flags::END_HEADERS, 1)
    );
    assert_eq!([&f[0].1[..], &f[1].1[..]].concat(), req.block());
    feed_ok(&mut c, &settings(&[(SETTINGS_MAX_FRAME_SIZE, 30_000)]));
    sent(&mut c);
    c.open(&req, 2, false).unwrap();
    let f = sent(&mut c);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].0.flags, Flags::END_STREAM | Flags::END_HEADERS);
}

#[test]
fn early_response_cancels_the_rest_of_the_body() {
    let mut c = conn(0, false);
    feed_ok(&mut c, &settings(&[(SETTINGS_INITIAL_WINDOW_SIZE, 10)]));
    c.open(&post(100), 1, false).unwrap();
    sent(&mut c);
    let evs = feed_ok(
        &mut c,
        &headers(1, Flags::END_STREAM, &[(":status", "413")]),
    );
    assert_eq!(evs.last(), Some(&Ev::End(1)));
    let f = sent(&mut c);
    assert_eq!((f[0].0.ty, f[0].0.stream), (RST_STREAM, 1));
    feed_ok(&mut c, &wu(0, 1000));
    assert!(sent(&mut c).is_empty(), "nothing more of the body");
}
