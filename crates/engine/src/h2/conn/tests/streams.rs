//! The stream table's life cycle: GOAWAY, resets, the concurrency limit,
//! stream ids.

use super::*;

#[test]
fn goaway_twice_reports_unprocessed_streams() {
    let mut c = conn(5, false);
    let evs = feed_ok(
        &mut c,
        &fr(
            GOAWAY,
            Flags::NONE,
            0,
            &[0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0],
        ),
    );
    assert_eq!(evs, [Ev::GoAway(MAX_STREAM_ID, NO_ERROR)]);
    assert!(c.going_away() && !c.can_open());
    assert_eq!(c.open(&get(), 9, false), Err(OpenError::GoingAway));
    assert_eq!(c.open_streams(), 5);
    let evs = feed_ok(
        &mut c,
        &fr(GOAWAY, Flags::NONE, 0, &[0, 0, 0, 3, 0, 0, 0, 0]),
    );
    assert_eq!(
        evs,
        [
            Ev::GoAway(3, NO_ERROR),
            Ev::Unprocessed(102),
            Ev::Unprocessed(103),
            Ev::Unprocessed(104)
        ]
    );
    assert_eq!(c.open_streams(), 2);
    // A GOAWAY may not raise the id again.
    let evs = feed_ok(
        &mut c,
        &fr(GOAWAY, Flags::NONE, 0, &[0, 0, 0, 9, 0, 0, 0, 2]),
    );
    assert_eq!(evs, [Ev::GoAway(9, 2)]);
    // Streams at or below the id still complete.
    let evs = feed_ok(
        &mut c,
        &headers(3, Flags::END_STREAM, &[(":status", "200")]),
    );
    assert_eq!(evs, [head_ev(101, 200, None, 10), Ev::End(101)]);
    // Frames for forgotten streams are discarded.
    assert!(feed_ok(
        &mut c,
        &headers(5, Flags::END_STREAM, &[(":status", "200")])
    )
    .is_empty());
    assert_eq!(c.open_streams(), 1);
}

#[test]
fn reset_streams_are_forgotten() {
    let mut c = conn(2, false);
    let evs = feed_ok(
        &mut c,
        &fr(RST_STREAM, Flags::NONE, 1, &REFUSED_STREAM.to_be_bytes()),
    );
    assert_eq!(evs, [Ev::Reset(100, REFUSED_STREAM)]);
    let late = cat(&[
        &headers(1, Flags::NONE, &[(":status", "200")]),
        &data(1, Flags::END_STREAM, b"xyz"),
        &fr(RST_STREAM, Flags::NONE, 1, &[0; 4]),
        &wu(1, 5),
    ]);
    assert!(feed_ok(&mut c, &late).is_empty());
    assert!(sent(&mut c).is_empty());
    assert_eq!(c.open_streams(), 1);
    let mut out = Vec::new();
    c.take_open(&mut out);
    assert_eq!(out, [101]);
    assert_eq!(c.open_streams(), 0);
}

#[test]
fn concurrency_limit_starts_at_100_then_follows_settings() {
    let mut c = ClientConn::new();
    for i in 0..100 {
        assert!(c.can_open());
        c.open(&get(), i, false).unwrap();
    }
    assert!(!c.can_open());
    assert_eq!(c.open(&get(), 100, false), Err(OpenError::AtLimit));
    feed_ok(&mut c, &settings(&[]));
    assert!(c.heard_from_peer());
    assert!(c.can_open(), "no limit in the server's SETTINGS: none");
    assert_eq!(c.peer_max_streams(), None);
    feed_ok(&mut c, &settings(&[(SETTINGS_MAX_CONCURRENT_STREAMS, 50)]));
    assert!(!c.can_open());
    assert_eq!(c.peer_max_streams(), Some(50));
    let mut tokens = Vec::new();
    c.take_open(&mut tokens);
    tokens.sort_unstable();
    assert_eq!(tokens, (0..100).collect::<Vec<u32>>());
    assert!(c.can_open());
}

#[test]
fn an_assumed_limit_holds_until_the_servers_settings() {
    let mut c = ClientConn::new();
    c.assume_max_streams(2);
    c.open(&get(), 0, false).unwrap();
    c.open(&get(), 1, false).unwrap();
    assert!(!c.can_open());
    feed_ok(&mut c, &settings(&[(SETTINGS_MAX_CONCURRENT_STREAMS, 8)]));
    assert!(c.can_open());
    c.assume_max_streams(1);
    assert!(c.can_open(), "the server's own SETTINGS win");
}

#[test]
fn stream_ids_run_out() {
    let mut c = conn(0, false);
    c.next_id = MAX_STREAM_ID;
    assert_eq!(c.open(&get(), 1, false), Ok(MAX_STREAM_ID));
    assert!(c.going_away() && !c.can_open());
    assert_eq!(c.open(&get(), 2, false), Err(OpenError::IdsExhausted));
}
