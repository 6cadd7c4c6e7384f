//! Paced virtual users' timetable: "how many iterations does the plan
//! hold?" — a pure function of the plan, as the open model's timetable is
//! ([`crate::Schedule`]), so a run of paced users is accounted for to the
//! iteration (docs/design/016-paced-users-accounting.md).
//!
//! User i is active over its window [sᵢ, eᵢ) ([`crate::Timeline::window`]),
//! cut at the run's end. With pacing P its iteration k is due at sᵢ + k·P
//! and is planned while that is before the window's end: ⌈(eᵢ − sᵢ)/P⌉
//! iterations. The engine keeps each user on exactly this grid
//! (`engine::worker::feed`), so planned = started + missed + not yet due.

use crate::{Load, Plan, Timeline};

/// Iterations of one user active over [`start`, `stop`) with `pacing` ns
/// between iteration starts: slots `start + k·pacing` before `stop`.
pub fn slots(start: u64, stop: u64, pacing: u64) -> u64 {
    if stop <= start || pacing == 0 {
        return 0;
    }
    (stop - start).div_ceil(pacing)
}

/// Slot times of a user on its pacing grid: the first at or after `from`,
/// given the grid's origin `start` (the user's window start).
pub fn next_slot(start: u64, pacing: u64, from: u64) -> u64 {
    if from <= start || pacing == 0 {
        return start;
    }
    start.saturating_add((from - start).div_ceil(pacing).saturating_mul(pacing))
}

impl Plan {
    /// Paced virtual users (`-u N --pacing P`, or a scenario's users with
    /// `pacing`): the iterations this process plans — its shard's users,
    /// each ⌈window / pacing⌉ ([`slots`]), windows cut at the run's end.
    /// None for the other models, users without pacing (they go as fast as
    /// their iterations allow), a run with no set end, and a run stopped by
    /// a request count (`-n` counts requests, not iterations).
    pub fn planned_iterations(&self) -> Option<u64> {
        let Load::Users {
            stages,
            pacing: Some(pacing),
            ..
        } = &self.load
        else {
            return None;
        };
        if self.stop.requests.is_some() {
            return None;
        }
        let p = pacing.as_nanos().min(u64::MAX as u128) as u64;
        let end = self
            .stop
            .duration
            .map(|d| d.as_nanos().min(u64::MAX as u128) as u64);
        let timeline = Timeline::new(stages.clone());
        let part = self.part();
        let mut total = 0u64;
        for i in (0..timeline.peak()).filter(|&i| part.owns(i)) {
            let Some((start, stop)) = timeline.window(i) else {
                break;
            };
            let stop = match (stop, end) {
                (Some(s), Some(e)) => s.min(e),
                (Some(s), None) => s,
                (None, Some(e)) => e,
                (None, None) => return None,
            };
            total = total.saturating_add(slots(start, stop, p));
        }
        Some(total)
    }

    /// The users this process plans to start (its shard's, with a window
    /// that opens before the run's end); None unless virtual users.
    pub fn planned_users(&self) -> Option<u64> {
        let Load::Users { stages, .. } = &self.load else {
            return None;
        };
        let end = self.stop.duration.map(|d| d.as_nanos() as u64);
        let timeline = Timeline::new(stages.clone());
        let part = self.part();
        Some(
            (0..timeline.peak())
                .filter(|&i| part.owns(i))
                .map_while(|i| timeline.window(i))
                .filter(|(s, _)| end.is_none_or(|e| *s < e))
                .count() as u64,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Shard, Stop, Target, Think, UserStage};
    use std::time::Duration;

    const S: u64 = 1_000_000_000;

    fn users(stages: Vec<(u64, f64, f64)>, pacing_ms: Option<u64>, secs: u64) -> Plan {
        Plan::get(
            Target::parse("http://127.0.0.1/").unwrap(),
            Load::Users {
                stages: stages
                    .into_iter()
                    .map(|(d, from, to)| UserStage {
                        duration: Duration::from_millis(d),
                        from,
                        to,
                    })
                    .collect(),
                pacing: pacing_ms.map(Duration::from_millis),
                think: Think::None,
            },
            Stop {
                requests: None,
                duration: Some(Duration::from_secs(secs)),
            },
        )
    }

    #[test]
    fn a_users_slots_are_its_window_over_the_pacing_rounded_up() {
        assert_eq!(slots(0, 15 * S, S / 2), 30);
        // A slot exactly at the end is not planned; one just before is.
        assert_eq!(slots(10_000_000, 15 * S, S / 2), 30);
        assert_eq!(slots(500_000_000, 15 * S, S / 2), 29);
        assert_eq!(slots(5 * S, 5 * S, S), 0);
        assert_eq!(slots(6 * S, 5 * S, S), 0);
        assert_eq!(next_slot(100, 50, 100), 100);
        assert_eq!(next_slot(100, 50, 101), 150);
        assert_eq!(next_slot(100, 50, 150), 150);
        assert_eq!(next_slot(100, 50, 20), 100);
    }

    #[test]
    fn seed_004_500_users_ramped_over_5s_paced_500ms_for_15s() {
        // yace run -u 500 --ramp-up 5s --pacing 500ms -d 15s: user i starts
        // at i·10 ms, so users 0–49 get 30 iterations, 50–99 get 29, …,
        // 450–499 get 21: 50 × (30 + 29 + … + 21) = 12,750.
        let p = users(
            vec![(5_000, 0.0, 500.0), (10_000, 500.0, 500.0)],
            Some(500),
            15,
        );
        assert_eq!(p.planned_iterations(), Some(12_750));
        assert_eq!(p.planned_users(), Some(500));
    }

    #[test]
    fn flat_users_are_users_times_slots() {
        // 20 users from the start, 500 ms pacing, 3 s: 6 each.
        let p = users(vec![(3_000, 20.0, 20.0)], Some(500), 3);
        assert_eq!(p.planned_iterations(), Some(120));
        // A pacing that does not divide the run: ⌈3 / 0.7⌉ = 5 each.
        let p = users(vec![(3_000, 4.0, 4.0)], Some(700), 3);
        assert_eq!(p.planned_iterations(), Some(20));
    }

    #[test]
    fn ramp_down_and_stages_cut_each_users_window() {
        // 10 users for 10 s, then down to 0 over 10 s: user i stops at
        // 20 s − i s (ramp_down_stops_users_from_the_top), so it gets
        // 20 − i one-second iterations; the run (20 s) cuts none.
        let p = users(
            vec![(10_000, 10.0, 10.0), (10_000, 10.0, 0.0)],
            Some(1_000),
            20,
        );
        assert_eq!(p.planned_iterations(), Some((11..=20).sum()));
        // A run shorter than the stages cuts every window at its end.
        let p = users(
            vec![(10_000, 10.0, 10.0), (10_000, 10.0, 0.0)],
            Some(1_000),
            5,
        );
        assert_eq!(p.planned_iterations(), Some(50));
        // A step down: users 2 and 3 run the first 5 s only.
        let p = users(vec![(5_000, 4.0, 4.0), (5_000, 2.0, 2.0)], Some(1_000), 10);
        assert_eq!(p.planned_iterations(), Some(2 * 10 + 2 * 5));
    }

    #[test]
    fn shards_plan_their_users_and_add_up_to_the_whole() {
        let whole = users(
            vec![(5_000, 0.0, 500.0), (10_000, 500.0, 500.0)],
            Some(500),
            15,
        );
        let parts: Vec<u64> = (0..3)
            .map(|i| {
                let mut p = whole.clone();
                p.shard = Some(Shard::new(i, 3).unwrap());
                p.planned_iterations().unwrap()
            })
            .collect();
        assert_eq!(parts.iter().sum::<u64>(), 12_750);
        // Shard 0 holds users 0, 3, 6 …: of the first 50 (30 iterations
        // each), 17.
        assert!(parts[0] > parts[2], "{parts:?}");
    }

    #[test]
    fn only_paced_users_with_an_end_have_planned_iterations() {
        assert_eq!(
            users(vec![(3_000, 5.0, 5.0)], None, 3).planned_iterations(),
            None
        );
        let mut n = users(vec![(3_000, 5.0, 5.0)], Some(500), 3);
        n.stop.requests = Some(10);
        assert_eq!(n.planned_iterations(), None);
        let mut closed = users(vec![(3_000, 5.0, 5.0)], Some(500), 3);
        closed.load = Load::Closed { connections: 5 };
        assert_eq!(closed.planned_iterations(), None);
        // No -d: the stages' end (the last one's level held) is no end.
        let mut open_ended = users(vec![(3_000, 5.0, 5.0)], Some(500), 3);
        open_ended.stop.duration = None;
        assert_eq!(open_ended.planned_iterations(), None);
    }
}
