//! The worker's read path against an adversarial byte stream: a server on
//! 127.0.0.1 answers every request with the input, repeated until the
//! client goes away (so any unfinished message is endless: a head, a chunk
//! line, trailers, a body). The worker must regain control — its read
//! budget yields to the clock — so the run ends by its request timeout and
//! duration whatever the bytes: `engine::run` returning within a bound is
//! the property (a stuck read loop would instead hang the target, which
//! libFuzzer reports as a timeout).
//!
//! Each input costs up to the run's 300 ms, so this target runs few inputs
//! per second; its seeds (fuzz/corpus/worker_reads) are the endless
//! streams the hostile tests name.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use yace_engine::{Outcome, Sample, Sink};
use yace_plan::{Load, Plan, Stop, Target, Timeouts};

/// Counts what ended, nothing else.
#[derive(Default)]
struct Count(u64);

impl Sink for Count {
    fn record(&mut self, s: &Sample) {
        self.0 += u64::from(s.outcome != Outcome::Cancelled);
    }
    fn connected(&mut self, _: u64) {}
}

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let stream = data.to_vec();
    let server = std::thread::spawn(move || {
        // A handful of connections, each fed the input until it closes
        // (bounded: at most 64 MiB each, and 600 ms in all).
        listener.set_nonblocking(true).unwrap();
        let deadline = Instant::now() + Duration::from_millis(600);
        let mut served = 0;
        while served < 4 && Instant::now() < deadline {
            let mut c = match listener.accept() {
                Ok((c, _)) => c,
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(2));
                    continue;
                }
            };
            served += 1;
            let _ = c.set_nonblocking(false);
            let _ = c.set_read_timeout(Some(Duration::from_millis(50)));
            let _ = c.set_write_timeout(Some(Duration::from_millis(100)));
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let mut sent = 0usize;
            while sent < 64 << 20 && Instant::now() < deadline {
                match c.write(&stream) {
                    Ok(n) if n > 0 => sent += n,
                    _ => break,
                }
            }
        }
    });
    let plan = Plan {
        timeouts: Timeouts {
            connect: Duration::from_millis(100),
            request: Duration::from_millis(100),
        },
        ..Plan::get(
            Target::parse(&format!("http://{addr}/")).unwrap(),
            Load::Closed { connections: 1 },
            Stop {
                requests: Some(4),
                duration: Some(Duration::from_millis(300)),
            },
        )
    };
    let stop = AtomicBool::new(false);
    let t = Instant::now();
    let flow = yace_engine::Fixed::new(yace_plan::Think::None, 1);
    let out = yace_engine::run(
        &plan,
        addr,
        vec![(Count::default(), flow)],
        yace_engine::clock_ns(),
        &stop,
    )
    .expect("the run starts");
    let took = t.elapsed();
    // The run's clock held: 300 ms of duration, plus a request timeout's
    // worth of sweep granularity and scheduling slack.
    assert!(took < Duration::from_millis(1500), "the run took {took:?}");
    assert!(out[0].0 .0 <= 4, "more requests ended than were planned");
    // The server stops by its own deadline: nothing is left behind.
    server.join().unwrap();
});
