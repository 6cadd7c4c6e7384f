//! Transports and timeouts: HTTP/2 and a request that outlives its timeout.

use super::*;

#[test]
fn http2_closed_model_sends_exactly_n() {
    let s = server();
    let mut p = plan(&s, "/", Load::Closed { connections: 8 }, requests(300));
    p.http2 = Some(plan::Http2 { streams: 4 });
    let ran = run(&p, &AtomicBool::new(false));
    assert_eq!(ran.samples.len(), 300);
    assert_eq!(ran.ok(), 300);
    let st = s.stats();
    assert_eq!(st.requests, 300);
    // -c 8 --streams 4: eight connections, up to 32 streams in flight.
    assert!(st.connections <= 8, "{} connections", st.connections);
    assert_eq!(
        ran.reports
            .iter()
            .map(|r| r.connections_opened)
            .sum::<u64>(),
        st.connections
    );
    s.shutdown();
}

#[test]
fn a_slow_response_times_out() {
    let s = server();
    let mut p = plan(
        &s,
        "/sleep?ms=2000",
        Load::Closed { connections: 2 },
        requests(2),
    );
    p.timeouts.request = Duration::from_millis(200);
    let t0 = std::time::Instant::now();
    let ran = run(&p, &AtomicBool::new(false));
    assert!(
        t0.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(ran.count(Outcome::Timeout), 2);
    // The server counts a request when it answers: not yet.
    assert_eq!(s.stats().requests, 0);
    s.shutdown();
}
