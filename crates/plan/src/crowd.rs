//! Steering the users while they run (`+`/`-`/`p`/`r` on the live view, for
//! virtual users and the closed model's connections): the plan's users stay
//! what they are, a pure function of the user's index, and steering adds
//! (or takes away) a number of users from a moment on.
//!
//! User i of the plan is active while more than i users should be
//! ([`Timeline::window`]). With `d` users added, user g is active while more
//! than g − d should be: its window is the plan's window of user g − d (and
//! for g < d, the whole run). So the active count is the plan's count + d at
//! every moment, ramps and stages keep their shape, taking users away
//! retires the most recently started ones first, and the timeline of
//! changes the result records is enough to say who ran when.

use crate::{Load, Plan, Timeline};

/// Who the plan's users are: the closed model's connections (all active the
/// whole run), or virtual users on a timeline of stages.
#[derive(Debug, Clone, PartialEq)]
pub enum Crowd {
    Closed { connections: u64 },
    Users(Timeline),
}

impl Crowd {
    /// The users of `plan`, if it has users (not the open model).
    pub fn of(plan: &Plan) -> Option<Crowd> {
        match &plan.load {
            Load::Closed { connections } => Some(Crowd::Closed {
                connections: *connections,
            }),
            Load::Users { stages, .. } => Some(Crowd::Users(Timeline::new(stages.clone()))),
            Load::Open { .. } => None,
        }
    }

    /// Most users the plan has active at once.
    pub fn peak(&self) -> u64 {
        match self {
            Crowd::Closed { connections } => *connections,
            Crowd::Users(t) => t.peak(),
        }
    }

    /// Users the plan has active `at_ns` after the start.
    pub fn planned_at(&self, at_ns: u64) -> u64 {
        match self {
            Crowd::Closed { connections } => *connections,
            Crowd::Users(t) => t.count_at(at_ns),
        }
    }

    /// When user `g` (0-based, global) is active with `delta` users added:
    /// (start, stop) in ns from the run's start, `u64::MAX` for a stop at
    /// the run's end; None when it never is.
    pub fn window(&self, g: u64, delta: i64) -> Option<(u64, u64)> {
        let Some(i) = g.checked_add_signed(-delta) else {
            // g < delta: one of the added users, before all the plan's.
            return Some((0, u64::MAX));
        };
        match self {
            Crowd::Closed { connections } => (i < *connections).then_some((0, u64::MAX)),
            Crowd::Users(t) => t.window(i).map(|(s, e)| (s, e.unwrap_or(u64::MAX))),
        }
    }
}

/// From `at_ns` on, `delta` users more than planned (fewer when negative).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserSegment {
    /// Nanoseconds after the run's start.
    pub at_ns: u64,
    pub delta: i64,
}

/// The timeline of added users: none (from 0) until steered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserSteering {
    segments: Vec<UserSegment>,
}

impl Default for UserSteering {
    fn default() -> Self {
        UserSteering {
            segments: vec![UserSegment { at_ns: 0, delta: 0 }],
        }
    }
}

impl UserSteering {
    pub fn segments(&self) -> &[UserSegment] {
        &self.segments
    }

    /// True once users were added or taken away.
    pub fn steered(&self) -> bool {
        self.segments.len() > 1
    }

    /// The users added at the end of the timeline.
    pub fn delta(&self) -> i64 {
        self.segments.last().map_or(0, |s| s.delta)
    }

    /// The users added at `at_ns`.
    pub fn delta_at(&self, at_ns: u64) -> i64 {
        self.segments
            .iter()
            .take_while(|s| s.at_ns <= at_ns)
            .last()
            .map_or(0, |s| s.delta)
    }

    /// From `at_ns` on, `delta` users added. A moment before the last
    /// segment's is moved up to it (the timeline only grows); a change at
    /// the last segment's moment replaces it.
    pub fn push(&mut self, at_ns: u64, delta: i64) {
        let last = *self.segments.last().expect("one segment at least");
        let at_ns = at_ns.max(last.at_ns);
        if at_ns == last.at_ns && self.segments.len() > 1 {
            self.segments.pop();
        }
        self.segments.push(UserSegment { at_ns, delta });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UserStage;
    use std::time::Duration;

    fn ramp() -> Crowd {
        // 0 → 10 users over 10 s, then 10 for 10 s.
        Crowd::Users(Timeline::new(vec![
            UserStage {
                duration: Duration::from_secs(10),
                from: 0.0,
                to: 10.0,
            },
            UserStage {
                duration: Duration::from_secs(10),
                from: 10.0,
                to: 10.0,
            },
        ]))
    }

    /// Users active at `t` for `delta`, out of the first `slots`.
    fn active(c: &Crowd, slots: u64, delta: i64, t: u64) -> u64 {
        (0..slots)
            .filter(|&g| c.window(g, delta).is_some_and(|(s, e)| s <= t && t < e))
            .count() as u64
    }

    #[test]
    fn the_active_count_is_the_plans_plus_delta() {
        let c = ramp();
        for delta in [-12, -3, 0, 4, 10] {
            for t in (0..20).map(|s| s * 1_000_000_000 + 500_000_000) {
                let want = (c.planned_at(t) as i64 + delta).max(0) as u64;
                assert_eq!(active(&c, 40, delta, t), want, "delta {delta} at {t}");
            }
        }
        assert_eq!(c.planned_at(2_500_000_000), 3);
        assert_eq!(c.planned_at(15_000_000_000), 10);
    }

    #[test]
    fn the_closed_model_is_its_connections() {
        let c = Crowd::Closed { connections: 8 };
        assert_eq!(active(&c, 30, 0, 5), 8);
        assert_eq!(active(&c, 30, 5, 5), 13);
        assert_eq!(active(&c, 30, -3, 5), 5);
        assert_eq!(active(&c, 30, -8, 5), 0);
        // Taking users away retires the highest numbered ones.
        assert_eq!(c.window(4, -3), Some((0, u64::MAX)));
        assert_eq!(c.window(5, -3), None);
    }

    #[test]
    fn steps_compose_and_a_same_moment_replaces() {
        let mut s = UserSteering::default();
        assert!(!s.steered());
        s.push(1_000, 5);
        s.push(1_000, 10);
        s.push(5_000, -2);
        s.push(10, 0);
        let at: Vec<(u64, i64)> = s.segments().iter().map(|x| (x.at_ns, x.delta)).collect();
        assert_eq!(at, vec![(0, 0), (1_000, 10), (5_000, 0)]);
        assert_eq!(s.delta_at(999), 0);
        assert_eq!(s.delta_at(1_000), 10);
        assert_eq!(s.delta_at(4_999), 10);
        assert_eq!(s.delta(), 0);
    }
}
