//! Connections that end badly or too slowly: closes and resets at every
//! stage, silence, drips, refused ports, idle closes and unannounced closes
//! of keep-alive connections.

use crate::hostile::{hostile, output_within, run, server, settled, url, yace};
use serve::{Hostile, OnAccept};
use std::time::Duration;

const ON_TIME: Duration = Duration::from_millis(2500);

#[test]
fn accept_then_close_is_closed_before_response() {
    let s = hostile(Hostile {
        on_accept: Some(OnAccept::Close),
        ..Hostile::default()
    });
    let r = run(&s.url(), &["-n", "20", "-c", "2", "--timeout", "2s"]);
    r.expect(&[("closed_before_response", 20)]);
    assert_eq!(
        r.u("summary.retries"),
        0,
        "fresh connections are not retried"
    );
    let seen = settled(&s);
    assert_eq!(seen.requests, 0);
    // One connection per request, plus yace's reachability probe.
    assert_eq!(seen.connections, 21, "{seen:?}");
}

#[test]
fn accept_then_reset_is_reset() {
    let s = hostile(Hostile {
        on_accept: Some(OnAccept::Reset),
        ..Hostile::default()
    });
    for _ in 0..4 {
        let r = run(&s.url(), &["-n", "20", "-c", "2", "--timeout", "2s"]);
        r.expect(&[("reset", 20)]);
        assert_eq!(r.u("summary.retries"), 0);
    }
    assert_eq!(settled(&s).requests, 0);
}

#[test]
fn refused_port_is_one_line_and_exit_1() {
    // A port that nothing listens on, held so that nothing can.
    let closed = crate::support::ClosedPort::new();
    let mut cmd = yace();
    cmd.args(["run", &closed.url(), "-n", "10"]);
    let (out, wall) = output_within(cmd, "refused");
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("cannot connect to 127.0.0.1:"), "{e}");
    assert!(e.contains("refused"), "{e}");
    assert!(wall < Duration::from_secs(2), "{wall:?}");
}

#[test]
fn close_after_reading_the_request_is_closed_before_response() {
    let s = server();
    let r = run(
        &url(&s, "/bad/close"),
        &["-n", "20", "-c", "2", "--timeout", "2s"],
    );
    r.expect(&[("closed_before_response", 20)]);
    assert_eq!(r.u("summary.retries"), 0);
    let seen = r.counted_once(&s);
    assert_eq!(seen.by_route["/bad/close"], 20);
    assert!(seen.by_status.is_empty(), "{seen:?}");
}

#[test]
fn reset_mid_body_is_reset() {
    let s = server();
    let r = run(
        &url(&s, "/bad/reset-mid-body"),
        &["-n", "20", "-c", "2", "--timeout", "2s"],
    );
    r.expect(&[("reset", 20)]);
    assert_eq!(r.u("summary.retries"), 0);
    r.counted_once(&s);
}

#[test]
fn silent_server_times_out_and_the_run_ends_on_time() {
    let s = server();
    let r = run(
        &url(&s, "/bad/silent"),
        &["-n", "4", "-c", "2", "--timeout", "300ms"],
    );
    r.expect(&[("timeout", 4)]);
    r.ended_within(Duration::from_secs(2));
    r.counted_once(&s);
    let r = run(
        &url(&s, "/bad/silent"),
        &["-d", "1s", "-c", "2", "--timeout", "300ms"],
    );
    r.ended_within(ON_TIME);
    assert_eq!(r.json["end"]["reason"], "duration");
    let (timeouts, cancelled) = (r.u("outcomes.timeout"), r.u("outcomes.cancelled"));
    assert!((4..=8).contains(&timeouts), "{:?}", r.outcomes());
    assert_eq!(cancelled, 2, "one in flight per connection at the end");
    assert_eq!(r.u("summary.requests"), timeouts + cancelled);
    assert_eq!(r.u("summary.errors"), timeouts);
}

#[test]
fn head_dripped_slower_than_the_timeout_times_out() {
    let s = server();
    // ~95 bytes of head, 100 ms apart: nearly 10 s per response.
    let r = run(
        &url(&s, "/bad/drip-head?ms=100"),
        &["-n", "4", "-c", "2", "--timeout", "300ms"],
    );
    r.expect(&[("timeout", 4)]);
    r.ended_within(Duration::from_secs(2));
    r.counted_once(&s);
}

#[test]
fn head_dripped_within_the_timeout_is_a_response() {
    let s = server();
    let r = run(
        &url(&s, "/bad/drip-head?ms=1"),
        &["-n", "4", "-c", "2", "--timeout", "5s"],
    );
    r.expect(&[("response", 4)]);
    assert_eq!(r.u("summary.body_length.first"), 13);
    assert_eq!(r.u("summary.connections_opened"), 2);
    r.counted_once(&s);
}

#[test]
fn body_dripped_slower_than_the_timeout_times_out_and_the_run_ends_on_time() {
    let s = server();
    let r = run(
        &url(&s, "/bad/drip-body?ms=100"),
        &["-n", "4", "-c", "2", "--timeout", "300ms"],
    );
    r.expect(&[("timeout", 4)]);
    r.counted_once(&s);
    let r = run(&url(&s, "/bad/drip-body?ms=100"), &["-d", "1s", "-c", "2"]);
    r.ended_within(ON_TIME);
    r.expect(&[("cancelled", 2)]);
}

#[test]
fn body_dripped_within_the_timeout_is_a_response() {
    let s = server();
    let r = run(
        &url(&s, "/bad/drip-body?ms=2"),
        &["-n", "4", "-c", "2", "--timeout", "5s"],
    );
    r.expect(&[("response", 4)]);
    assert_eq!(r.u("summary.body_length.first"), 20);
    assert_eq!(r.u("summary.body_bytes"), 80);
    r.counted_once(&s);
}

#[test]
fn idle_connection_closed_as_the_request_arrives_is_retried() {
    let s = server();
    // 20 requests/s on one connection: it idles 50 ms between requests,
    // long enough for the server to close it as the next one arrives.
    // `-d 5s`: the run waits for the 20th response (ending when it is in),
    // rather than ending 50 ms after the 20th request is due and cancelling
    // it if a busy machine made its retry slower than that.
    let r = run(
        &url(&s, "/bad/idle-close?ms=20"),
        &["--rate", "20", "-n", "20", "-d", "5s", "--timeout", "2s"],
    );
    r.expect(&[("response", 20)]);
    let retries = r.u("summary.retries");
    assert!(retries >= 10, "retries {retries}");
    assert!(
        retries <= 19,
        "the first request is never on a used connection"
    );
    let seen = r.counted_once(&s);
    assert_eq!(seen.requests, 20, "-n exact at the server");
}

#[test]
fn idle_keep_alive_timeout_is_noticed_between_requests() {
    let s = hostile(Hostile {
        idle_close: Some(Duration::from_millis(20)),
        ..Hostile::default()
    });
    let r = run(&s.url(), &["--rate", "20", "-n", "20", "--timeout", "2s"]);
    r.expect(&[("response", 20)]);
    // Closed while idle, so each request after the first needed a new one.
    assert!(
        r.u("summary.connections_opened") >= 15,
        "{}",
        r.json["summary"]
    );
    let seen = r.counted_once(&s);
    assert_eq!(seen.requests, 20, "-n exact at the server");
}

#[test]
fn unannounced_close_after_every_third_response_is_survived() {
    let s = server();
    let r = run(
        &url(&s, "/bad/close-every?n=3"),
        &["-n", "30", "-c", "2", "--timeout", "1s"],
    );
    r.expect(&[("response", 30)]);
    // Each close is either seen in time (the FIN came with the response)
    // or met by the next request and retried; which one is a race, so the
    // deterministic stale-connection retry is tested with idle-close above.
    // Either way every third response ends its connection.
    assert!(
        r.u("summary.connections_opened") >= 10,
        "{}",
        r.json["summary"]
    );
    let seen = r.counted_once(&s);
    assert_eq!(seen.requests, 30, "-n exact at the server");
}
