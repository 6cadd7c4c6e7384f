//! The run library in process: a job against the embedded target, run
//! twice in one process, its rows observed while it runs, and stopped early
//! through its handle.

use plan::{Load, Plan, Stop, Target};
use run::{Embedded, Job, Script, StopCause, StopHandle, TargetChoice};
use stats::EndReason;
use std::time::{Duration, Instant};
use yace_run as run;

/// A closed-model job of `seconds` against a freshly started embedded target.
fn job(seconds: u64) -> Job {
    let server = Embedded::start().expect("the embedded target starts");
    let plan = Plan::get(
        Target::parse(&server.url()).unwrap(),
        Load::Closed { connections: 2 },
        Stop {
            requests: None,
            duration: Some(Duration::from_secs(seconds)),
        },
    );
    Job {
        plan,
        target: TargetChoice::Embedded(server),
        script: Script::Request,
        thresholds: vec![stats::threshold::Threshold::parse("errors<1%", None).unwrap()],
        spelling: &plan::Keys,
        monitors: Default::default(),
    }
}

#[test]
fn runs_twice_observed_and_stopped_early() {
    // 1. To its end, the finished rows seen while it runs.
    let prepared = run::prepare(job(2)).expect("prepared");
    assert!(
        prepared
            .notes
            .iter()
            .any(|n| matches!(n, run::Note::Embedded { .. })),
        "{:?}",
        prepared.notes
    );
    let mut seen = 0;
    let mut calls = 0;
    let done = prepared
        .execute(
            |_| (),
            |rows| {
                calls += 1;
                seen = seen.max(rows.len());
            },
            &StopHandle::new(),
        )
        .expect("ran");
    assert!(calls > 10, "observed about every 50 ms: {calls} calls");
    assert!(seen >= 1, "finished seconds observed while running");
    assert_eq!(done.stopped_by, None);
    assert_eq!(done.result.end.reason, EndReason::Duration);
    assert!(!done.result.end.partial);
    assert!(done.result.summary.responses > 0);
    assert_eq!(done.result.summary.errors, 0);
    assert!(done.result.environment.embedded_target);
    assert_eq!(done.result.thresholds.len(), 1);
    assert!(!done.breached());

    // 2. Again in the same process, stopped from another thread after 300 ms
    //    of a 60 s run: it ends within a second, its result partial.
    let prepared = run::prepare(job(60)).expect("prepared again");
    let stop = StopHandle::new();
    let remote = stop.clone();
    let started = Instant::now();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        remote.stop(StopCause::Interrupted);
    });
    let done = prepared.execute(|_| (), |_| {}, &stop).expect("ran");
    stopper.join().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "stopped promptly: {:?}",
        started.elapsed()
    );
    assert_eq!(done.stopped_by, Some(StopCause::Interrupted));
    assert_eq!(done.result.end.reason, EndReason::Interrupted);
    assert!(done.result.end.partial);
    assert!(done.result.summary.responses > 0);
}

#[test]
fn an_unreachable_target_is_a_runtime_error() {
    let mut j = job(1);
    // A port nothing listens on: a socket bound there and never put to
    // listen(2), held to the end so that no other test can take the port.
    // SAFETY: a new socket of our own, closed by the OwnedFd.
    let fd = unsafe {
        use std::os::fd::FromRawFd;
        std::os::fd::OwnedFd::from_raw_fd(libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0))
    };
    let mut addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
        },
        sin_zero: [0; 8],
    };
    let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: addr and len describe a sockaddr_in of ours.
    unsafe {
        use std::os::fd::AsRawFd;
        assert_eq!(
            libc::bind(fd.as_raw_fd(), std::ptr::addr_of!(addr).cast(), len),
            0
        );
        let name = std::ptr::addr_of_mut!(addr).cast();
        assert_eq!(libc::getsockname(fd.as_raw_fd(), name, &mut len), 0);
    }
    let port = u16::from_be(addr.sin_port);
    let url = format!("http://127.0.0.1:{port}/");
    j.plan.target = Target::parse(&url).unwrap();
    j.target = TargetChoice::Url(url.clone());
    let e = run::prepare(j).expect_err("nothing listens");
    assert!(e.is_runtime() && !e.is_usage(), "{e}");
    assert!(e.to_string().contains(&format!("for {url}")), "{e}");
}
