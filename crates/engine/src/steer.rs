//! The steering of a running open-model load, shared by whoever steers
//! (the live view's `+`/`-`/`p`) and the workers. The timeline itself is
//! plan's pure [`Steering`]; this holds it behind a lock that only a change
//! takes, and a version the workers read once per loop turn (one relaxed
//! load) to pick a change up.

use plan::{Load, Plan, Schedule, Steering};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// How far ahead a change is set, so that every worker has read it before
/// it takes effect (a worker looks at least every 100 ms): the timeline
/// the result records is then exactly what was offered.
pub const LEAD_NS: u64 = 200_000_000;

#[derive(Debug)]
pub struct Steer {
    schedule: Schedule,
    timeline: Mutex<Steering>,
    version: AtomicU64,
    /// The run's start on the engine's clock (0: not started).
    epoch: AtomicU64,
}

impl Steer {
    /// A handle for a plan that can be steered: the open model.
    pub fn for_plan(plan: &Plan) -> Option<Steer> {
        matches!(plan.load, Load::Open { .. }).then(|| Steer {
            schedule: plan.schedule(),
            timeline: Mutex::new(Steering::default()),
            version: AtomicU64::new(0),
            epoch: AtomicU64::new(0),
        })
    }

    pub(crate) fn started(&self, epoch: u64) {
        self.epoch.store(epoch, Ordering::Release);
    }

    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The timeline so far.
    pub fn timeline(&self) -> Steering {
        self.timeline
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The factor in force (or about to be).
    pub fn factor(&self) -> f64 {
        self.timeline
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .factor()
    }

    /// The planned rate at the run's current moment, per second (0 before
    /// the start or past the end).
    pub fn planned_rate(&self) -> f64 {
        let t = self.now_ns();
        let a = self.schedule.arrivals_at(t);
        let b = self.schedule.arrivals_at(t + 1_000_000);
        (b - a) * 1000.0
    }

    fn now_ns(&self) -> u64 {
        let epoch = self.epoch.load(Ordering::Acquire);
        if epoch == 0 {
            return 0;
        }
        crate::clock_ns().saturating_sub(epoch)
    }

    /// From [`LEAD_NS`] from now on, the planned rate times `factor` (0
    /// pauses). Returns the moment it takes effect, in ns after the start.
    pub fn set_factor(&self, factor: f64) -> u64 {
        let at = self.now_ns() + LEAD_NS;
        let mut t = self.timeline.lock().unwrap_or_else(|e| e.into_inner());
        t.push(&self.schedule, at, factor);
        self.version.fetch_add(1, Ordering::AcqRel);
        t.segments().last().map_or(at, |s| s.at_ns)
    }
}
