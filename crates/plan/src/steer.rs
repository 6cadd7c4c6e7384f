//! Steering the open model while it runs (`+`/`-`/`p` on the live view):
//! the planned timetable stays the pure function of k it always is, and
//! steering scales its rate from a moment on.
//!
//! With the planned arrivals N(t) = ∫rate and a factor sᵢ from tᵢ on, the
//! steered arrivals are N′(t) = aᵢ + sᵢ·(N(t) − uᵢ) for tᵢ ≤ t < tᵢ₊₁, where
//! uᵢ = N(tᵢ) and aᵢ = N′(tᵢ). Request k is then due where N′(t) = k: in
//! the segment whose [aᵢ, aᵢ₊₁) holds k, at N⁻¹(uᵢ + (k − aᵢ)/sᵢ). A factor
//! of 0 pauses: no request is due until the next segment. The planned
//! shape (ramps, stages, the end) is kept; only its height changes, and the
//! timeline of factors is what the result records, so what was offered can
//! be recomputed exactly from the result.

use crate::schedule::{Due, Schedule};

/// A request due while paused: later than any run, yet far from overflow.
pub const PAUSED: u64 = u64::MAX / 4;

/// From `at_ns` on, the planned rate times `factor`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// Nanoseconds after the run's start.
    pub at_ns: u64,
    pub factor: f64,
    /// N(at): planned arrivals before the segment.
    planned: f64,
    /// N′(at): steered arrivals before the segment.
    actual: f64,
}

/// The timeline of factors: one segment (×1 from 0) until steered.
#[derive(Debug, Clone, PartialEq)]
pub struct Steering {
    segments: Vec<Segment>,
}

impl Default for Steering {
    fn default() -> Self {
        Steering {
            segments: vec![Segment {
                at_ns: 0,
                factor: 1.0,
                planned: 0.0,
                actual: 0.0,
            }],
        }
    }
}

impl Steering {
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// True once a factor was set.
    pub fn steered(&self) -> bool {
        self.segments.len() > 1
    }

    /// The factor in force at the end of the timeline.
    pub fn factor(&self) -> f64 {
        self.segments.last().map_or(1.0, |s| s.factor)
    }

    /// From `at_ns` on, the planned rate times `factor` (≥ 0; 0 pauses).
    /// A moment before the last segment's is moved up to it: the timeline
    /// only grows.
    pub fn push(&mut self, schedule: &Schedule, at_ns: u64, factor: f64) {
        let factor = if factor.is_finite() {
            factor.max(0.0)
        } else {
            1.0
        };
        let last = *self.segments.last().expect("one segment at least");
        let at_ns = at_ns.max(last.at_ns);
        let planned = schedule.arrivals_at(at_ns);
        let actual = last.actual + last.factor * (planned - last.planned);
        if at_ns == last.at_ns && self.segments.len() > 1 {
            self.segments.pop();
            let prev = *self.segments.last().expect("the first segment");
            let actual = prev.actual + prev.factor * (planned - prev.planned);
            self.segments.push(Segment {
                at_ns,
                factor,
                planned,
                actual,
            });
            return;
        }
        self.segments.push(Segment {
            at_ns,
            factor,
            planned,
            actual,
        });
    }

    /// When global request `k` is due under this steering.
    pub fn due(&self, schedule: &Schedule, k: u64) -> Due {
        if !self.steered() {
            return schedule.due(k);
        }
        if schedule.limit().is_some_and(|l| k >= l) {
            return Due::End;
        }
        let kf = k as f64;
        for (i, s) in self.segments.iter().enumerate() {
            let next = self.segments.get(i + 1);
            if next.is_some_and(|n| n.actual <= kf) {
                continue;
            }
            if s.factor <= 0.0 {
                // Paused: due when the next segment starts, if any.
                return match next {
                    Some(n) => Due::At(n.at_ns),
                    None => Due::At(PAUSED),
                };
            }
            let u = s.planned + (kf - s.actual) / s.factor;
            return match schedule.time_of(u) {
                Some(t) => Due::At(t.max(s.at_ns)),
                None => Due::End,
            };
        }
        Due::End
    }

    /// Requests the steered schedule issues in all, if finite.
    pub fn total(&self, schedule: &Schedule) -> Option<u64> {
        if !self.steered() {
            return schedule.total();
        }
        let last = self.segments.last().expect("one segment at least");
        let end = schedule.arrivals_at(u64::MAX);
        let n = last.actual + last.factor * (end - last.planned);
        let by_time = n.ceil().max(0.0) as u64;
        Some(schedule.limit().map_or(by_time, |l| l.min(by_time)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RateStage;
    use std::time::Duration;

    fn constant(rate: f64, secs: f64) -> Schedule {
        Schedule::open(
            vec![RateStage {
                duration: Duration::from_secs_f64(secs),
                from: rate,
                to: rate,
            }],
            None,
        )
    }

    fn count(st: &Steering, s: &Schedule) -> u64 {
        (0..)
            .take_while(|&k| matches!(st.due(s, k), Due::At(t) if t < PAUSED))
            .count() as u64
    }

    #[test]
    fn unsteered_is_the_plan() {
        let s = constant(100.0, 2.0);
        let st = Steering::default();
        assert_eq!(count(&st, &s), 200);
        assert_eq!(st.total(&s), Some(200));
        assert_eq!(st.due(&s, 7), s.due(7));
    }

    #[test]
    fn a_raised_rate_adds_exactly_its_share() {
        // 100/s for 2 s, doubled from 1 s: 100 + 200 = 300 requests, the
        // first 100 as planned, then one every 5 ms.
        let s = constant(100.0, 2.0);
        let mut st = Steering::default();
        st.push(&s, 1_000_000_000, 2.0);
        assert_eq!(count(&st, &s), 300);
        assert_eq!(st.total(&s), Some(300));
        assert_eq!(st.due(&s, 99), s.due(99));
        assert_eq!(st.due(&s, 100), Due::At(1_000_000_000));
        assert_eq!(st.due(&s, 101), Due::At(1_005_000_000));
        // Times only increase.
        let times: Vec<u64> = (0..300)
            .map(|k| match st.due(&s, k) {
                Due::At(t) => t,
                d => panic!("{k}: {d:?}"),
            })
            .collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        assert!(times[299] < 2_000_000_000);
    }

    #[test]
    fn a_pause_holds_and_a_resume_goes_on() {
        // 100/s for 3 s; paused from 1 s to 2 s: 200 requests.
        let s = constant(100.0, 3.0);
        let mut st = Steering::default();
        st.push(&s, 1_000_000_000, 0.0);
        // While paused, request 100 waits with no end in sight.
        assert_eq!(st.due(&s, 100), Due::At(PAUSED));
        st.push(&s, 2_000_000_000, 1.0);
        assert_eq!(st.due(&s, 100), Due::At(2_000_000_000));
        assert_eq!(count(&st, &s), 200);
        assert_eq!(st.total(&s), Some(200));
    }

    #[test]
    fn steps_compose_and_a_same_moment_replaces() {
        let s = constant(100.0, 4.0);
        let mut st = Steering::default();
        st.push(&s, 1_000_000_000, 1.1);
        st.push(&s, 1_000_000_000, 1.21); // two presses in one moment
        assert_eq!(st.segments().len(), 2);
        st.push(&s, 3_000_000_000, 0.5);
        // 100 + 2 s × 121 + 1 s × 50 = 392.
        assert_eq!(st.total(&s), Some(392));
        assert_eq!(count(&st, &s), 392);
        // A moment in the past is moved up to the last one.
        st.push(&s, 10, 1.0);
        assert_eq!(st.segments().last().unwrap().at_ns, 3_000_000_000);
    }
}
