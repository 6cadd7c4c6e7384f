//! "When is request k due?" — a pure function of k, shared by every load
//! model so the engine has exactly one worker loop (STYLE.md §2).
//!
//! The open model's timetable is exact: with a cumulative arrival function
//! N(t) = ∫rate, request k is due at the t where N(t) = k, and is sent only if
//! that t falls before the end of the last stage. 100/s for 1 s is exactly
//! 100 requests; 1.75/s for 2 s is exactly 4 (at 0, 0.57, 1.14 and 1.71 s).
//! Requests are dealt to workers round-robin by k, so the union over workers
//! is the same timetable whatever the thread count.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A stretch of the open model whose rate moves linearly from `from` to `to`
/// requests per second (equal for a constant rate).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RateStage {
    #[serde(with = "crate::nanos")]
    #[schemars(with = "u64")]
    pub duration: Duration,
    pub from: f64,
    pub to: f64,
}

/// When a request is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// As soon as a connection is free (closed model).
    Now,
    /// At this many nanoseconds after the run's start.
    At(u64),
    /// Past the end of the schedule: the worker has no more requests.
    End,
}

/// The run-wide timetable.
#[derive(Debug, Clone, PartialEq)]
pub enum Schedule {
    Closed {
        limit: Option<u64>,
    },
    Open {
        stages: Vec<RateStage>,
        /// Requests due before the start of each stage (N at each boundary).
        starts: Vec<f64>,
        limit: Option<u64>,
    },
}

impl Schedule {
    pub fn closed(limit: Option<u64>) -> Self {
        Schedule::Closed { limit }
    }

    pub fn open(stages: Vec<RateStage>, limit: Option<u64>) -> Self {
        let mut starts = Vec::with_capacity(stages.len() + 1);
        let mut n = 0.0;
        for s in &stages {
            starts.push(n);
            n += (s.from + s.to) / 2.0 * s.duration.as_secs_f64();
        }
        starts.push(n);
        Schedule::Open {
            stages,
            starts,
            limit,
        }
    }

    /// Total requests the schedule will ever issue, if it is finite.
    pub fn total(&self) -> Option<u64> {
        match self {
            Schedule::Closed { limit } => *limit,
            Schedule::Open { starts, limit, .. } => {
                let n = starts.last().copied().unwrap_or(0.0);
                // Requests k = 0..ceil(N)-1 have N^-1(k) < end.
                let by_time = n.ceil() as u64;
                Some(limit.map_or(by_time, |l| l.min(by_time)))
            }
        }
    }

    /// The request limit (`-n`), if any.
    pub fn limit(&self) -> Option<u64> {
        match self {
            Schedule::Closed { limit } | Schedule::Open { limit, .. } => *limit,
        }
    }

    /// N(t): the open model's arrivals due before `t_ns` (fractional; the
    /// total at or after the end). 0 for the closed model.
    pub fn arrivals_at(&self, t_ns: u64) -> f64 {
        let Schedule::Open { stages, starts, .. } = self else {
            return 0.0;
        };
        let mut left = t_ns as f64 / 1e9;
        for (i, s) in stages.iter().enumerate() {
            let d = s.duration.as_secs_f64();
            if left < d {
                let a = (s.to - s.from) / (2.0 * d);
                return starts[i] + s.from * left + a * left * left;
            }
            left -= d;
        }
        starts.last().copied().unwrap_or(0.0)
    }

    /// N⁻¹(u): when the open model's `u`-th arrival (fractional) is due;
    /// `None` at or past the end.
    pub fn time_of(&self, u: f64) -> Option<u64> {
        let Schedule::Open { stages, starts, .. } = self else {
            return None;
        };
        let mut t0 = 0.0;
        for (i, s) in stages.iter().enumerate() {
            let d = s.duration.as_secs_f64();
            if starts[i + 1] > u {
                let t = solve_in_stage(s.from, s.to, d, u - starts[i]);
                return Some(((t0 + t) * 1e9).round() as u64);
            }
            t0 += d;
        }
        None
    }

    /// When global request `k` (0-based) is due.
    pub fn due(&self, k: u64) -> Due {
        match self {
            Schedule::Closed { limit } => match limit {
                Some(l) if k >= *l => Due::End,
                _ => Due::Now,
            },
            Schedule::Open {
                stages,
                starts,
                limit,
            } => {
                if limit.is_some_and(|l| k >= l) {
                    return Due::End;
                }
                let kf = k as f64;
                let mut t0 = 0.0;
                for (i, s) in stages.iter().enumerate() {
                    let d = s.duration.as_secs_f64();
                    if starts[i + 1] > kf {
                        let x = kf - starts[i];
                        let t = solve_in_stage(s.from, s.to, d, x);
                        return Due::At(((t0 + t) * 1e9).round() as u64);
                    }
                    t0 += d;
                }
                Due::End
            }
        }
    }
}

/// Time into a stage at which `x` requests have become due, given a rate
/// moving linearly from r0 to r1 over d seconds: solves r0·t + (r1−r0)/(2d)·t² = x.
fn solve_in_stage(r0: f64, r1: f64, d: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let a = (r1 - r0) / (2.0 * d);
    let t = if a.abs() < 1e-12 {
        x / r0
    } else {
        let disc = (r0 * r0 + 4.0 * a * x).max(0.0);
        // Numerically stable root of a·t² + r0·t − x = 0.
        2.0 * x / (r0 + disc.sqrt())
    };
    t.clamp(0.0, d)
}

/// One worker's share of the schedule: global requests k ≡ worker (mod threads).
#[derive(Debug, Clone)]
pub struct WorkerSchedule {
    schedule: Schedule,
    worker: u64,
    threads: u64,
    /// The open model steered while it runs (`crate::Steering`).
    steering: Option<crate::Steering>,
}

impl WorkerSchedule {
    pub fn new(schedule: Schedule, worker: usize, threads: usize) -> Self {
        assert!(worker < threads, "worker index out of range");
        WorkerSchedule {
            schedule,
            worker: worker as u64,
            threads: threads as u64,
            steering: None,
        }
    }

    /// From now on, the run's steering decides when requests are due.
    pub fn steer(&mut self, steering: crate::Steering) {
        self.steering = Some(steering);
    }

    /// When this worker's `j`-th request is due.
    pub fn due(&self, j: u64) -> Due {
        let k = j.saturating_mul(self.threads).saturating_add(self.worker);
        match &self.steering {
            Some(st) => st.due(&self.schedule, k),
            None => self.schedule.due(k),
        }
    }

    /// How many of this worker's requests come at or after its `j`-th, if
    /// the schedule is finite: global requests k ≡ worker (mod threads),
    /// k < total.
    pub fn remaining(&self, j: u64) -> Option<u64> {
        let total = match &self.steering {
            Some(st) => st.total(&self.schedule)?,
            None => self.schedule.total()?,
        };
        let mine = total.saturating_sub(self.worker).div_ceil(self.threads);
        Some(mine.saturating_sub(j))
    }

    /// True when every request of this worker can start immediately.
    pub fn is_closed(&self) -> bool {
        matches!(self.schedule, Schedule::Closed { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constant(rate: f64, secs: f64) -> RateStage {
        RateStage {
            duration: Duration::from_secs_f64(secs),
            from: rate,
            to: rate,
        }
    }

    #[test]
    fn a_workers_remaining_requests_are_its_share_of_the_rest() {
        let s = Schedule::open(vec![constant(100.0, 1.0)], None);
        for threads in 1..=7 {
            let shares: u64 = (0..threads)
                .map(|w| WorkerSchedule::new(s.clone(), w, threads))
                .map(|ws| {
                    let counted = (0..).take_while(|&j| ws.due(j) != Due::End).count() as u64;
                    assert_eq!(ws.remaining(0), Some(counted));
                    assert_eq!(ws.remaining(counted), Some(0));
                    assert_eq!(ws.remaining(counted + 3), Some(0));
                    ws.remaining(1).unwrap() + 1
                })
                .sum();
            assert_eq!(shares, 100, "{threads} threads");
        }
        let unbounded = WorkerSchedule::new(Schedule::closed(None), 0, 2);
        assert_eq!(unbounded.remaining(5), None);
        let n = WorkerSchedule::new(Schedule::closed(Some(5)), 1, 2);
        assert_eq!(n.remaining(0), Some(2));
    }

    fn count(s: &Schedule) -> u64 {
        (0..).take_while(|&k| s.due(k) != Due::End).count() as u64
    }

    #[test]
    fn open_counts_are_exact() {
        assert_eq!(
            count(&Schedule::open(vec![constant(100.0, 1.0)], None)),
            100
        );
        assert_eq!(count(&Schedule::open(vec![constant(1.75, 2.0)], None)), 4);
        assert_eq!(
            count(&Schedule::open(vec![constant(200.0, 10.0)], None)),
            2000
        );
        let s = Schedule::open(vec![constant(1.75, 2.0)], None);
        assert_eq!(s.total(), Some(4));
        assert_eq!(s.due(3), Due::At(1_714_285_714));
    }

    #[test]
    fn open_limit_caps_the_count() {
        let s = Schedule::open(vec![constant(100.0, 10.0)], Some(5));
        assert_eq!(count(&s), 5);
        assert_eq!(s.total(), Some(5));
    }

    #[test]
    fn ramp_is_quadratic_and_exact() {
        // 0 → 100/s over 10 s: N(10) = 500 requests, N(t) = 5t².
        let s = Schedule::open(
            vec![RateStage {
                duration: Duration::from_secs(10),
                from: 0.0,
                to: 100.0,
            }],
            None,
        );
        assert_eq!(count(&s), 500);
        // Request 125 is due at t = 5 s (5·5² = 125).
        assert_eq!(s.due(125), Due::At(5_000_000_000));
        // Every second's share grows linearly.
        let in_second = |sec: u64| {
            (0..500)
                .filter(|&k| matches!(s.due(k), Due::At(t) if t / 1_000_000_000 == sec))
                .count()
        };
        assert_eq!(in_second(0), 5);
        assert_eq!(in_second(9), 95);
    }

    #[test]
    fn stages_chain_and_times_increase() {
        let s = Schedule::open(
            vec![
                RateStage {
                    duration: Duration::from_secs(2),
                    from: 0.0,
                    to: 10.0,
                },
                constant(10.0, 3.0),
                RateStage {
                    duration: Duration::from_secs(2),
                    from: 10.0,
                    to: 0.0,
                },
            ],
            None,
        );
        assert_eq!(count(&s), 10 + 30 + 10);
        let mut last = 0;
        for k in 0..50 {
            let Due::At(t) = s.due(k) else {
                panic!("k={k} not due")
            };
            assert!(t >= last, "k={k}: {t} < {last}");
            last = t;
        }
        assert!(last < 7_000_000_000);
        assert_eq!(s.due(10), Due::At(2_000_000_000));
    }

    #[test]
    fn zero_rate_hold_issues_nothing() {
        let s = Schedule::open(vec![constant(0.0, 5.0), constant(2.0, 1.0)], None);
        assert_eq!(count(&s), 2);
        assert_eq!(s.due(0), Due::At(5_000_000_000));
    }

    #[test]
    fn closed_limit_and_worker_split_is_exact() {
        let s = Schedule::closed(Some(10));
        let per_worker: Vec<u64> = (0..3)
            .map(|w| {
                let ws = WorkerSchedule::new(s.clone(), w, 3);
                (0..).take_while(|&j| ws.due(j) != Due::End).count() as u64
            })
            .collect();
        assert_eq!(per_worker, vec![4, 3, 3]);
        assert_eq!(Schedule::closed(None).due(u64::MAX / 2), Due::Now);
    }

    #[test]
    fn workers_partition_the_open_timetable() {
        let s = Schedule::open(vec![constant(7.0, 3.0)], None);
        let mut all: Vec<u64> = (0..4)
            .flat_map(|w| {
                let ws = WorkerSchedule::new(s.clone(), w, 4);
                (0..)
                    .map(move |j| ws.due(j))
                    .take_while(|d| *d != Due::End)
                    .map(|d| match d {
                        Due::At(t) => t,
                        _ => unreachable!(),
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        all.sort_unstable();
        let whole: Vec<u64> = (0..21)
            .map(|k| match s.due(k) {
                Due::At(t) => t,
                d => panic!("{d:?}"),
            })
            .collect();
        assert_eq!(all, whole);
    }
}
