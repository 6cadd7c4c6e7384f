//! A scenario's per-worker [`Runner`] as the engine's [`Flow`], and its
//! check counts folded into the result.

use engine::{Flow, Next, Outcome, Sample};
use scenario::{Action, Capture, Runner, User};
use std::time::Duration;

/// A scenario's runner as the engine's flow.
#[derive(Debug)]
pub struct ScenarioFlow {
    runner: Runner,
}

impl ScenarioFlow {
    pub fn new(runner: Runner) -> Self {
        ScenarioFlow { runner }
    }
}

impl Flow for ScenarioFlow {
    type User = User;

    fn journeys(&self) -> bool {
        true
    }

    fn user(&mut self, index: u64) -> User {
        self.runner.new_user(index)
    }

    fn next(&mut self, user: &mut User, out: &mut Vec<u8>) -> Next {
        match self.runner.next(user, out) {
            Action::Request {
                step,
                capture,
                head,
                idempotent,
            } => Next::Request {
                step,
                capture: capture != Capture::None,
                head,
                idempotent,
            },
            Action::Think(d) => Next::Think(d.as_nanos().min(u64::MAX as u128) as u64),
            Action::EndIteration => Next::EndIteration,
        }
    }

    fn ended(&mut self, user: &mut User, s: &Sample, response: Option<&engine::Captured>) {
        match s.outcome {
            Outcome::Response => {
                let latency = Duration::from_nanos(s.end.saturating_sub(s.intended));
                self.runner
                    .response(user, s.step, s.status, response, latency);
            }
            // The run is over; nothing more to learn.
            Outcome::Cancelled => {}
            _ => self.runner.failed(user, s.step),
        }
    }
}

/// The workers' check counts, merged, named by step, and the cookies their
/// users' jars could not keep.
pub(crate) fn checks(flows: Vec<ScenarioFlow>, names: &[String]) -> (Vec<stats::CheckResult>, u64) {
    let mut flows = flows.into_iter();
    let Some(mut first) = flows.next() else {
        return (Vec::new(), 0);
    };
    for f in flows {
        first.runner.merge(&f.runner);
    }
    let checks = first
        .runner
        .counters()
        .into_iter()
        .map(|c| stats::CheckResult {
            step: names.get(c.step as usize).cloned().unwrap_or_default(),
            name: c.name,
            passed: c.passed,
            failed: c.failed,
        })
        .collect();
    (checks, first.runner.cookies_dropped())
}
