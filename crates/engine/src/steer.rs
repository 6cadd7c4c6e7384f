//! The steering of a running load, shared by whoever steers (the live
//! view's keys, the live page) and the workers. The open model's rate is
//! steered by a factor on its timetable (plan's pure [`Steering`]); virtual
//! users and the closed model's connections by a number of users added or
//! taken away (plan's [`UserSteering`] over the plan's [`Crowd`]). Either
//! timeline sits behind a lock that only a change takes, and a version the
//! workers read once per loop turn (one relaxed load) to pick a change up.

use plan::{Crowd, Load, Plan, Schedule, Steering, UserSteering};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// How far ahead a change is set, so that every worker has read it before
/// it takes effect (a worker looks at least every 100 ms): the timeline
/// the result records is then exactly what was offered.
pub const LEAD_NS: u64 = 200_000_000;

#[derive(Debug)]
pub struct Steer {
    what: What,
    version: AtomicU64,
    /// The run's start on the engine's clock (0: not started).
    epoch: AtomicU64,
}

#[derive(Debug)]
enum What {
    Rate {
        schedule: Schedule,
        timeline: Mutex<Steering>,
    },
    Users {
        crowd: Crowd,
        /// Most users steering may reach: the slots the workers hold.
        max: u64,
        timeline: Mutex<UserSteering>,
    },
}

/// Where the users stand, for a steering key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsersNow {
    /// The plan's users at this moment.
    pub planned: u64,
    /// Added by steering (fewer when negative), in force or about to be.
    pub delta: i64,
    /// Most users steering may reach.
    pub max: u64,
}

impl UsersNow {
    /// The users active with the steering in force.
    pub fn active(&self) -> u64 {
        (self.planned as i64 + self.delta).max(0) as u64
    }
}

impl Steer {
    /// A handle for a plan that can be steered: the open model (its rate),
    /// virtual users and the closed model over HTTP/1.1 (their number; over
    /// HTTP/2 a connection's streams are its users, not steerable one by
    /// one).
    pub fn for_plan(plan: &Plan) -> Option<Steer> {
        let what = match plan.load {
            Load::Open { .. } => What::Rate {
                schedule: plan.schedule(),
                timeline: Mutex::new(Steering::default()),
            },
            _ if plan.http2.is_some() => return None,
            _ => {
                let crowd = Crowd::of(plan)?;
                let peak = crowd.peak();
                What::Users {
                    max: headroom(peak),
                    crowd,
                    timeline: Mutex::new(UserSteering::default()),
                }
            }
        };
        Some(Steer {
            what,
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

    /// True when the number of users is steered (not the rate).
    pub fn steers_users(&self) -> bool {
        matches!(self.what, What::Users { .. })
    }

    /// The rate's timeline so far (the plan's own for users).
    pub fn timeline(&self) -> Steering {
        match &self.what {
            What::Rate { timeline, .. } => lock(timeline).clone(),
            What::Users { .. } => Steering::default(),
        }
    }

    /// The users' timeline so far (none added for the open model).
    pub fn user_timeline(&self) -> UserSteering {
        match &self.what {
            What::Users { timeline, .. } => lock(timeline).clone(),
            What::Rate { .. } => UserSteering::default(),
        }
    }

    /// The plan's users, for the workers (None for the open model).
    pub(crate) fn crowd(&self) -> Option<(&Crowd, u64)> {
        match &self.what {
            What::Users { crowd, max, .. } => Some((crowd, *max)),
            What::Rate { .. } => None,
        }
    }

    /// The rate's factor in force (or about to be); 1 for users.
    pub fn factor(&self) -> f64 {
        match &self.what {
            What::Rate { timeline, .. } => lock(timeline).factor(),
            What::Users { .. } => 1.0,
        }
    }

    /// The planned rate at the run's current moment, per second (0 before
    /// the start or past the end, and for users).
    pub fn planned_rate(&self) -> f64 {
        let What::Rate { schedule, .. } = &self.what else {
            return 0.0;
        };
        let t = self.now_ns();
        let a = schedule.arrivals_at(t);
        let b = schedule.arrivals_at(t + 1_000_000);
        (b - a) * 1000.0
    }

    /// Where the users stand now (None for the open model).
    pub fn users(&self) -> Option<UsersNow> {
        let What::Users {
            crowd,
            max,
            timeline,
        } = &self.what
        else {
            return None;
        };
        Some(UsersNow {
            planned: crowd.planned_at(self.now_ns()),
            delta: lock(timeline).delta(),
            max: *max,
        })
    }

    fn now_ns(&self) -> u64 {
        let epoch = self.epoch.load(Ordering::Acquire);
        if epoch == 0 {
            return 0;
        }
        crate::clock_ns().saturating_sub(epoch)
    }

    /// From [`LEAD_NS`] from now on, the planned rate times `factor` (0
    /// pauses). Returns the moment it takes effect, in ns after the start
    /// (None when the rate is not what is steered).
    pub fn set_factor(&self, factor: f64) -> Option<u64> {
        let What::Rate { schedule, timeline } = &self.what else {
            return None;
        };
        let at = self.now_ns() + LEAD_NS;
        let mut t = lock(timeline);
        t.push(schedule, at, factor);
        self.version.fetch_add(1, Ordering::AcqRel);
        Some(t.segments().last().map_or(at, |s| s.at_ns))
    }

    /// From [`LEAD_NS`] from now on, `users` active: the plan's count at
    /// that moment plus a difference kept from then on (so a ramp goes on
    /// ramping), within 0 and the most the run can hold. Returns the moment
    /// and the users it sets (None when users are not what is steered).
    pub fn set_users(&self, users: u64) -> Option<(u64, u64)> {
        let (crowd, max) = self.crowd()?;
        let planned = crowd.planned_at(self.now_ns() + LEAD_NS) as i64;
        self.set_user_delta(users.min(max) as i64 - planned)
    }

    /// From [`LEAD_NS`] from now on, `delta` users more than the plan's
    /// (fewer when negative). Returns the moment and the users active then
    /// (None when users are not what is steered).
    pub fn set_user_delta(&self, delta: i64) -> Option<(u64, u64)> {
        let What::Users {
            crowd,
            max,
            timeline,
        } = &self.what
        else {
            return None;
        };
        let at = self.now_ns() + LEAD_NS;
        let mut t = lock(timeline);
        t.push(at, delta);
        self.version.fetch_add(1, Ordering::AcqRel);
        let at = t.segments().last().map_or(at, |s| s.at_ns);
        let users = (crowd.planned_at(at) as i64 + delta).clamp(0, *max as i64) as u64;
        Some((at, users))
    }
}

/// Slots kept for users steering may add: as many again as the plan's
/// peak, at least 20 and at most 10,000 more (a slot is a few hundred
/// bytes, and a plan of 100k connections must not double them).
fn headroom(peak: u64) -> u64 {
    peak.saturating_add(peak.clamp(20, 10_000))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
