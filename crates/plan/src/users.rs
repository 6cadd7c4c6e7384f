//! Virtual users: how many are active over time (piecewise-linear stages),
//! when each one starts and stops, and how long each waits between steps
//! (think time) and between iteration starts (pacing). Pure functions, so
//! "5000 users ramped over 50 s" is unit-tested without sleeping.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A stretch over which the number of active users moves linearly from
/// `from` to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UserStage {
    #[serde(with = "crate::nanos")]
    #[schemars(with = "u64")]
    pub duration: Duration,
    pub from: f64,
    pub to: f64,
}

/// How long a user waits after a step before the next one.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Think {
    #[default]
    None,
    Fixed {
        #[serde(with = "crate::nanos")]
        #[schemars(with = "u64")]
        time: Duration,
    },
    Uniform {
        #[serde(with = "crate::nanos")]
        #[schemars(with = "u64")]
        min: Duration,
        #[serde(with = "crate::nanos")]
        #[schemars(with = "u64")]
        max: Duration,
    },
    Exponential {
        #[serde(with = "crate::nanos")]
        #[schemars(with = "u64")]
        mean: Duration,
    },
}

impl Think {
    /// The think time for a uniform random `u` in [0, 1), in nanoseconds.
    pub fn sample(&self, u: f64) -> u64 {
        match *self {
            Think::None => 0,
            Think::Fixed { time } => time.as_nanos() as u64,
            Think::Uniform { min, max } => {
                let (a, b) = (min.as_nanos() as f64, max.as_nanos() as f64);
                (a + (b - a) * u) as u64
            }
            Think::Exponential { mean } => {
                // Inverse CDF, capped at 20 means so one user can't sleep forever.
                let x = -(1.0 - u).max(1e-12).ln();
                (mean.as_nanos() as f64 * x.min(20.0)) as u64
            }
        }
    }

    /// Parses `2s`, `uniform(1s, 3s)`, `exponential(2s)` or `none`.
    pub fn parse(s: &str) -> Result<Think, String> {
        let t = s.trim();
        let dur = |x: &str| crate::parse_duration("think", x.trim()).map_err(|e| e.problem);
        if t.is_empty() || t == "none" || t == "0" {
            return Ok(Think::None);
        }
        if let Some(inner) = t.strip_prefix("uniform(").and_then(|r| r.strip_suffix(')')) {
            let (a, b) = inner
                .split_once(',')
                .ok_or("uniform needs two durations: uniform(1s, 3s)")?;
            let (min, max) = (dur(a)?, dur(b)?);
            if min > max {
                return Err(format!(
                    "uniform({a}, {b}): the minimum is above the maximum"
                ));
            }
            return Ok(Think::Uniform { min, max });
        }
        if let Some(inner) = t
            .strip_prefix("exponential(")
            .and_then(|r| r.strip_suffix(')'))
        {
            return Ok(Think::Exponential { mean: dur(inner)? });
        }
        Ok(Think::Fixed { time: dur(t)? })
    }
}

/// The users' timeline: stages of active-user counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    stages: Vec<UserStage>,
}

impl Timeline {
    pub fn new(stages: Vec<UserStage>) -> Self {
        Timeline { stages }
    }

    /// Most users active at once.
    pub fn peak(&self) -> u64 {
        self.stages
            .iter()
            .map(|s| s.from.max(s.to))
            .fold(0.0, f64::max)
            .ceil() as u64
    }

    /// Total length of the stages, in nanoseconds.
    pub fn length(&self) -> u64 {
        self.stages
            .iter()
            .map(|s| s.duration.as_nanos() as u64)
            .sum()
    }

    /// Users active `at_ns` after the start: user i is active while the
    /// count is above i, so ⌈count⌉ of them (past the stages: the last
    /// stage's level).
    pub fn count_at(&self, at_ns: u64) -> u64 {
        let mut t0 = 0u64;
        for s in &self.stages {
            let d = s.duration.as_nanos() as u64;
            if at_ns < t0.saturating_add(d) {
                let f = (at_ns - t0) as f64 / d as f64;
                return (s.from + (s.to - s.from) * f).max(0.0).ceil() as u64;
            }
            t0 = t0.saturating_add(d);
        }
        self.stages
            .last()
            .map_or(0, |s| s.to.max(0.0).ceil() as u64)
    }

    /// When user `i` (0-based) starts and stops, in ns from the run's start:
    /// it is active while more than `i` users should be. `None` if it never
    /// starts; a stop of `None` means it runs to the end.
    pub fn window(&self, i: u64) -> Option<(u64, Option<u64>)> {
        let level = i as f64;
        let mut t0 = 0u64;
        let mut start: Option<u64> = None;
        for s in &self.stages {
            let d = s.duration.as_nanos() as u64;
            let df = d as f64;
            // First moment the count exceeds `level` in this stage.
            if start.is_none() {
                if s.from > level {
                    start = Some(t0);
                } else if s.to > level {
                    let f = (level - s.from) / (s.to - s.from);
                    start = Some(t0 + (f * df).ceil() as u64);
                }
            }
            if let Some(st) = start {
                // Within this stage, after the start: does the count fall to `level`?
                if s.to <= level && s.from > s.to {
                    let f = (s.from - level) / (s.from - s.to);
                    let stop = t0 + (f * df).floor() as u64;
                    if stop >= st {
                        return Some((st, Some(stop)));
                    }
                } else if s.from <= level && s.to <= level && t0 >= st {
                    return Some((st, Some(t0)));
                }
            }
            t0 += d;
        }
        start.map(|st| (st, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(secs: u64, from: f64, to: f64) -> UserStage {
        UserStage {
            duration: Duration::from_secs(secs),
            from,
            to,
        }
    }

    #[test]
    fn seed_004_ramp_5000_users_over_50s() {
        let t = Timeline::new(vec![stage(50, 0.0, 5000.0), stage(100, 5000.0, 5000.0)]);
        assert_eq!(t.peak(), 5000);
        assert_eq!(t.window(0), Some((0, None)));
        // User 2500 starts half-way up the ramp.
        assert_eq!(t.window(2500), Some((25_000_000_000, None)));
        assert_eq!(t.window(4999).unwrap().0, 49_990_000_000);
        assert_eq!(t.window(5000), None);
        // Users started by second 10: 1000 (100/s).
        let started = (0..5000)
            .filter(|&i| t.window(i).unwrap().0 < 10_000_000_000)
            .count();
        assert_eq!(started, 1000);
    }

    #[test]
    fn ramp_down_stops_users_from_the_top() {
        let t = Timeline::new(vec![stage(10, 10.0, 10.0), stage(10, 10.0, 0.0)]);
        // count(t) = 10 − (t − 10 s): user i runs while the count is above i.
        // User 9 (the tenth) stops first, one second into the ramp-down.
        assert_eq!(t.window(9), Some((0, Some(11_000_000_000))));
        assert_eq!(t.window(4), Some((0, Some(16_000_000_000))));
        assert_eq!(t.window(0), Some((0, Some(20_000_000_000))));
    }

    #[test]
    fn step_down_then_up() {
        let t = Timeline::new(vec![
            stage(5, 4.0, 4.0),
            stage(5, 2.0, 2.0),
            stage(5, 4.0, 4.0),
        ]);
        // User 3 runs for the first stage, stops, and (as a simplification) is not restarted.
        assert_eq!(t.window(3), Some((0, Some(5_000_000_000))));
        assert_eq!(t.window(1), Some((0, None)));
    }

    #[test]
    fn think_specs() {
        assert_eq!(
            Think::parse("2s").unwrap(),
            Think::Fixed {
                time: Duration::from_secs(2)
            }
        );
        let u = Think::parse("uniform(1s, 3s)").unwrap();
        assert_eq!(u.sample(0.0), 1_000_000_000);
        assert_eq!(u.sample(0.5), 2_000_000_000);
        let e = Think::parse("exponential(2s)").unwrap();
        let mean: f64 = (0..10_000)
            .map(|i| e.sample((i as f64 + 0.5) / 10_000.0) as f64)
            .sum::<f64>()
            / 1e4;
        assert!((mean / 2e9 - 1.0).abs() < 0.02, "mean {mean}");
        assert!(Think::parse("uniform(3s, 1s)").is_err());
        assert!(Think::parse("sometimes").is_err());
        assert_eq!(Think::parse("none").unwrap(), Think::None);
    }
}
