//! The three load models count exactly what they were told to.

use super::*;
use plan::{Late, RateStage, UserStage};
use std::sync::atomic::Ordering;

#[test]
fn closed_model_sends_exactly_n() {
    let s = server();
    let p = plan(&s, "/", Load::Closed { connections: 8 }, requests(500));
    let ran = run(&p, &AtomicBool::new(false));
    assert_eq!(ran.samples.len(), 500);
    assert_eq!(ran.ok(), 500);
    let st = s.stats();
    assert_eq!(st.requests, 500);
    // Keep-alive: at most one connection per slot.
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
fn closed_model_without_keepalive_opens_one_connection_per_request() {
    let s = server();
    let mut p = plan(&s, "/", Load::Closed { connections: 4 }, requests(60));
    p.keepalive = false;
    let ran = run(&p, &AtomicBool::new(false));
    assert_eq!(ran.ok(), 60);
    let st = s.stats();
    assert_eq!((st.requests, st.connections), (60, 60));
    assert!(ran.samples.iter().all(|x| !x.reused));
    s.shutdown();
}

#[test]
fn open_model_sends_the_schedule_and_no_more() {
    let s = server();
    let load = Load::Open {
        stages: vec![RateStage {
            duration: Duration::from_millis(500),
            from: 400.0,
            to: 400.0,
        }],
        max_inflight: 16,
        late: Late::CatchUp,
    };
    let p = plan(&s, "/", load, requests(100));
    let ran = run(&p, &AtomicBool::new(false));
    assert_eq!(ran.samples.len(), 100);
    assert_eq!(ran.ok(), 100);
    assert_eq!(s.stats().requests, 100);
    // Open model: every sample carries its own intended start.
    let mut intended: Vec<u64> = ran.samples.iter().map(|x| x.intended).collect();
    intended.sort_unstable();
    intended.dedup();
    assert_eq!(intended.len(), 100);
    s.shutdown();
}

#[test]
fn users_each_keep_their_connection() {
    let s = server();
    let load = Load::Users {
        stages: vec![UserStage {
            duration: Duration::from_millis(300),
            from: 3.0,
            to: 3.0,
        }],
        pacing: None,
        think: plan::Think::None,
    };
    let p = plan(&s, "/", load, lasting(Duration::from_millis(300)));
    let ran = run(&p, &AtomicBool::new(false));
    let st = s.stats();
    let answered = ran.count(Outcome::Response) as u64;
    assert!(answered > 0);
    // The server saw every answered request, and perhaps the cancelled ones.
    let cancelled = ran.count(Outcome::Cancelled) as u64;
    assert!(
        (answered..=answered + cancelled).contains(&st.requests),
        "server {} vs client {answered}+{cancelled}",
        st.requests
    );
    assert_eq!(st.connections, 3);
    s.shutdown();
}

#[test]
fn a_raised_stop_flag_ends_the_run_early() {
    let s = server();
    let p = plan(
        &s,
        "/",
        Load::Closed { connections: 4 },
        lasting(Duration::from_secs(30)),
    );
    let stop = AtomicBool::new(false);
    let t0 = std::time::Instant::now();
    let ran = std::thread::scope(|sc| {
        let h = sc.spawn(|| run(&p, &stop));
        std::thread::sleep(Duration::from_millis(200));
        stop.store(true, Ordering::Relaxed);
        h.join().unwrap()
    });
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert!(ran.reports.iter().all(|r| r.stopped));
    assert!(ran.ok() > 0);
    assert!(ran.count(Outcome::Response) as u64 <= s.stats().requests);
    s.shutdown();
}
