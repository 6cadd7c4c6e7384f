//! The engine in-process: `engine::run` against the embedded server with a
//! collecting sink, counts checked against both sides (issue #11). One
//! binary, topic modules.

use yace_engine as engine;

mod llhttp;
mod models;
mod protocol;

use engine::{Outcome, Sample, Sink, WorkerReport};
use plan::{Load, Plan, Stop, Target};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Keeps every sample (tests are small).
#[derive(Debug, Default)]
pub struct Collect {
    pub samples: Vec<Sample>,
    pub connected: u64,
}

impl Sink for Collect {
    fn record(&mut self, s: &Sample) {
        self.samples.push(*s);
    }
    fn connected(&mut self, _nanos: u64) {
        self.connected += 1;
    }
}

/// What a run left behind, merged over workers.
#[derive(Debug)]
pub struct Ran {
    pub samples: Vec<Sample>,
    pub reports: Vec<WorkerReport>,
}

impl Ran {
    pub fn count(&self, o: Outcome) -> usize {
        self.samples.iter().filter(|s| s.outcome == o).count()
    }
    pub fn ok(&self) -> usize {
        self.samples
            .iter()
            .filter(|s| s.outcome == Outcome::Response && s.status == 200)
            .count()
    }
}

pub fn server() -> serve::Server {
    serve::Server::start(serve::Config {
        threads: 1,
        ..serve::Config::default()
    })
    .expect("embedded server starts")
}

/// A plan for `path` on `server`: GET, keep-alive, one thread.
pub fn plan(server: &serve::Server, path: &str, load: Load, stop: Stop) -> Plan {
    let url = format!("{}{}", server.url(), path.trim_start_matches('/'));
    Plan::get(Target::parse(&url).expect("url"), load, stop)
}

pub fn requests(n: u64) -> Stop {
    Stop {
        requests: Some(n),
        duration: None,
    }
}

pub fn lasting(d: Duration) -> Stop {
    Stop {
        requests: None,
        duration: Some(d),
    }
}

/// Runs `plan` with the plain flow on `threads` workers.
pub fn run(plan: &Plan, stop: &AtomicBool) -> Ran {
    let addr = engine::resolve(plan).expect("resolves");
    let threads = engine::effective_threads(plan);
    let users = matches!(plan.load, Load::Users { .. });
    let workers = (0..threads)
        .map(|w| {
            let f = engine::Fixed::new(plan::Think::None, w as u64 + 1);
            let f = if users {
                f.with_cookies(plan.encode_request())
            } else {
                f
            };
            (Collect::default(), f)
        })
        .collect();
    let out = engine::run(plan, addr, workers, engine::clock_ns(), stop).expect("run");
    let mut ran = Ran {
        samples: Vec::new(),
        reports: Vec::new(),
    };
    for (sink, _, report) in out {
        ran.samples.extend(sink.samples);
        ran.reports.push(report);
    }
    ran
}
