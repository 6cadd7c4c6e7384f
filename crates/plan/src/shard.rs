//! Shards: one plan run by N processes, each doing exactly its share
//! (`yace run --shard I/N`, docs/design/010-shards.md).
//!
//! The single-process run already deals its work to T worker threads
//! round-robin by index (request k of the timetable, user or connection v).
//! A shard adds one level above: global index k goes to shard k mod N, and
//! within the shard its local index m = k div N to worker m mod T. Worker w
//! of shard I so owns k = I + N·(w + T·j): a base and a stride, whatever T
//! each shard has. Open-model requests keep their global due time, users
//! their global window and data row, and the union over shards is the
//! single-process run.

use crate::{Load, Plan, Timeline, WorkerSchedule};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which part of the plan this process runs: shard `index` (0-based, as
/// Kubernetes' `JOB_COMPLETION_INDEX` and Slurm's `SLURM_PROCID`) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The whole plan: one shard of one.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Shard `index` of `count`, checked.
    pub fn new(index: u64, count: u64) -> Result<Shard, String> {
        if count == 0 {
            return Err("the number of shards must be at least 1".into());
        }
        if index >= count {
            return Err(format!(
                "shard {index} is out of range for {count} shards: shards are numbered from 0 \
                 to {}",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }

    /// Parses `I/N` (0-based I).
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .trim()
            .split_once('/')
            .ok_or_else(|| format!("'{s}' is not I/N (e.g. 0/3: the first of three shards)"))?;
        let num = |x: &str| {
            x.trim()
                .parse::<u64>()
                .map_err(|_| format!("'{s}': '{x}' is not a whole number"))
        };
        Shard::new(num(i)?, num(n)?)
    }

    /// This shard's share of `total` things dealt round-robin by index
    /// (those with index ≡ `index` mod `count`): ⌊total/N⌋, plus one for the
    /// first `total mod N` shards.
    pub fn share(&self, total: u64) -> u64 {
        total / self.count + u64::from(self.index < total % self.count)
    }

    /// True when global index `k` belongs to this shard.
    pub fn owns(&self, k: u64) -> bool {
        k % self.count == self.index
    }

    /// This shard's part of a planned rate: every N-th request of the
    /// timetable, so 1/N of it.
    pub fn rate_share(&self, rate: f64) -> f64 {
        rate / self.count as f64
    }

    /// This shard's part of a planned level of users (or connections) that
    /// may be fractional on a ramp: of the first ⌈level⌉, those it owns.
    pub fn level_share(&self, level: f64) -> f64 {
        self.share(level.max(0.0).ceil() as u64) as f64
    }

    /// A shard of more than one: the part is not the whole plan.
    pub fn is_part(&self) -> bool {
        self.count > 1
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Worker `w`'s part of a (possibly sharded) run of `threads` workers: the
/// global indices `base + stride·j` (requests, users, connections).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deal {
    pub base: u64,
    pub stride: u64,
    /// Shard share, then worker share: how many of `total` round-robin
    /// things this worker holds.
    shard: Shard,
    worker: u64,
    threads: u64,
}

impl Deal {
    /// How many of `total` things (connections, in-flight slots) dealt by
    /// index this worker holds: the shard's share, then the worker's share
    /// of it.
    pub fn slots(&self, total: u64) -> u64 {
        let mine = self.shard.share(total);
        mine / self.threads + u64::from(self.worker < mine % self.threads)
    }

    /// Global indices of this worker's first `n` things.
    pub fn index(&self, j: u64) -> u64 {
        self.base + self.stride * j
    }
}

impl Plan {
    /// The part of the plan this process runs ([`Shard::WHOLE`] unless sharded).
    pub fn part(&self) -> Shard {
        self.shard.unwrap_or(Shard::WHOLE)
    }

    /// Worker `w` of `threads`: its base and stride over global indices.
    pub fn deal(&self, w: usize, threads: usize) -> Deal {
        let s = self.part();
        let (w, t) = (w as u64, threads as u64);
        Deal {
            base: s.index + s.count * w,
            stride: s.count * t,
            shard: s,
            worker: w,
            threads: t,
        }
    }

    /// Worker `w`'s share of the timetable: global requests
    /// `base + stride·j`, each at its global due time.
    pub fn worker_schedule(&self, w: usize, threads: usize) -> WorkerSchedule {
        let d = self.deal(w, threads);
        WorkerSchedule::new(self.schedule(), d.base as usize, d.stride as usize)
    }

    /// Worker `w`'s users (virtual users model): the global windows of
    /// users `base + stride·j` below the timeline's peak.
    pub fn worker_windows(&self, w: usize, threads: usize) -> Vec<(u64, Option<u64>)> {
        let Load::Users { stages, .. } = &self.load else {
            return Vec::new();
        };
        let timeline = Timeline::new(stages.clone());
        let d = self.deal(w, threads);
        (d.base..timeline.peak())
            .step_by(d.stride as usize)
            .map_while(|i| timeline.window(i))
            .collect()
    }

    /// Requests this process plans, when the plan holds a set number: its
    /// shard's share of the timetable's total.
    pub fn planned(&self) -> Option<u64> {
        self.schedule().total().map(|t| self.part().share(t))
    }

    /// Connections this process may hold open at once: its shard's share.
    pub fn shard_connections(&self) -> u64 {
        self.part().share(self.load.max_connections())
    }

    /// What cannot be split over the shards: a shard left without
    /// connections, users or requests. Empty when unsharded or fine.
    pub fn shard_problems(&self) -> Vec<(crate::Field, String)> {
        let Some(s) = self.shard else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let n = s.count;
        let (field, what) = match self.load {
            Load::Closed { .. } => (crate::Field::Connections, "connections"),
            Load::Open { .. } => (crate::Field::MaxInflight, "in-flight slots"),
            Load::Users { .. } => (crate::Field::Users, "users"),
        };
        let have = self.load.max_connections();
        if have < n {
            out.push((
                field,
                format!(
                    "{have} {what} cannot be split over {n} shards: each shard needs at least one"
                ),
            ));
        }
        if let Some(r) = self.stop.requests.filter(|&r| r < n) {
            out.push((
                crate::Field::Requests,
                format!("{r} requests cannot be split over {n} shards: each needs at least one"),
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Due, RateStage, Stop, Target, UserStage};
    use std::collections::BTreeSet;
    use std::time::Duration;

    #[test]
    fn shards_parse_0_based() {
        assert_eq!(Shard::parse("0/3").unwrap(), Shard { index: 0, count: 3 });
        assert_eq!(Shard::parse(" 2/3 ").unwrap().to_string(), "2/3");
        assert!(Shard::parse("3/3").unwrap_err().contains("from 0 to 2"));
        assert!(Shard::parse("0/0").is_err());
        assert!(Shard::parse("1").is_err());
        assert!(Shard::parse("a/3").unwrap_err().contains("'a'"));
    }

    #[test]
    fn a_shards_part_of_a_planned_level() {
        let (first, last) = (Shard::new(0, 3).unwrap(), Shard::new(2, 3).unwrap());
        assert_eq!(first.rate_share(300.0), 100.0);
        // 2.5 users on a ramp: users 0, 1 and 2 have started; shard 0 owns 0.
        assert_eq!(first.level_share(2.5), 1.0);
        assert_eq!(last.level_share(2.5), 1.0);
        assert_eq!(last.level_share(2.0), 0.0);
        assert_eq!(first.level_share(-1.0), 0.0);
        assert!(first.is_part() && !Shard::WHOLE.is_part());
        assert_eq!(Shard::WHOLE.rate_share(300.0), 300.0);
        assert_eq!(Shard::WHOLE.level_share(2.5), 3.0);
    }

    #[test]
    fn shares_are_floor_plus_remainder_to_the_first() {
        for n in 1..=9u64 {
            for total in 0..200u64 {
                let shares: Vec<u64> = (0..n)
                    .map(|i| Shard::new(i, n).unwrap().share(total))
                    .collect();
                assert_eq!(shares.iter().sum::<u64>(), total);
                for (i, &s) in shares.iter().enumerate() {
                    let want = total / n + u64::from((i as u64) < total % n);
                    assert_eq!(s, want, "{i}/{n} of {total}");
                    // The share is the count of indices it owns.
                    let owned = (0..total)
                        .filter(|&k| Shard::new(i as u64, n).unwrap().owns(k))
                        .count() as u64;
                    assert_eq!(s, owned);
                }
            }
        }
    }

    fn no_stop() -> Stop {
        Stop {
            requests: None,
            duration: None,
        }
    }

    fn plan(load: Load, stop: Stop) -> Plan {
        Plan::get(Target::parse("http://127.0.0.1/").unwrap(), load, stop)
    }

    fn sharded(p: &Plan, i: u64, n: u64, threads: usize) -> Plan {
        let mut p = p.clone();
        p.shard = Some(Shard::new(i, n).unwrap());
        p.threads = threads;
        p
    }

    /// Every (shard, worker): the requests it sends (global k and due time).
    fn timetable(p: &Plan, i: u64, n: u64, threads: usize) -> Vec<(u64, Due)> {
        let s = sharded(p, i, n, threads);
        let mut out = Vec::new();
        for w in 0..threads {
            let ws = s.worker_schedule(w, threads);
            let d = s.deal(w, threads);
            for j in 0.. {
                match ws.due(j) {
                    Due::End => break,
                    due => out.push((d.index(j), due)),
                }
                if j > 100_000 {
                    break;
                }
            }
            // Its remaining count agrees with what it walked.
            if let Some(r) = ws.remaining(0) {
                let walked = out
                    .iter()
                    .filter(|(k, _)| *k >= d.base && (*k - d.base).is_multiple_of(d.stride));
                assert_eq!(r, walked.count() as u64, "worker {w} of {i}/{n}");
            }
        }
        out
    }

    /// For every shard count and per-shard thread counts (machines differ),
    /// the shards' timetables are disjoint and their union is the single
    /// process's, each request at its global due time.
    fn exact_split(p: &Plan) {
        let whole: Vec<(u64, Due)> = timetable(p, 0, 1, 1);
        assert!(!whole.is_empty());
        for n in 1..=5u64 {
            let mut seen = BTreeSet::new();
            let mut all = Vec::new();
            for i in 0..n {
                let threads = 1 + ((i as usize * 2 + 1) % 3); // 2, 1, 3, 2, 1 …
                let mine = timetable(p, i, n, threads);
                let planned = sharded(p, i, n, threads).planned().unwrap();
                assert_eq!(mine.len() as u64, planned, "{i}/{n}");
                for (k, due) in mine {
                    assert!(Shard::new(i, n).unwrap().owns(k), "{k} not of {i}/{n}");
                    assert!(seen.insert(k), "request {k} twice");
                    all.push((k, due));
                }
            }
            all.sort_by_key(|x| x.0);
            assert_eq!(all, whole, "{n} shards");
        }
    }

    #[test]
    fn open_model_requests_keep_their_global_due_time() {
        let stages = vec![
            RateStage {
                duration: Duration::from_secs(3),
                from: 0.0,
                to: 40.0,
            },
            RateStage {
                duration: Duration::from_millis(2500),
                from: 37.5,
                to: 37.5,
            },
        ];
        let open = Load::Open {
            stages,
            max_inflight: 10,
            late: Default::default(),
        };
        exact_split(&plan(open.clone(), no_stop()));
        // A cap (-n) splits the same way.
        exact_split(&plan(
            open,
            Stop {
                requests: Some(47),
                duration: None,
            },
        ));
    }

    #[test]
    fn closed_request_counts_split_exactly() {
        exact_split(&plan(
            Load::Closed { connections: 7 },
            Stop {
                requests: Some(101),
                duration: None,
            },
        ));
    }

    /// Connections (closed), in-flight slots (open) and users: each
    /// (shard, worker) holds the global indices base + stride·j, disjoint,
    /// their union 0..total.
    #[test]
    fn connections_slots_and_users_split_exactly() {
        for total in [1u64, 5, 12, 50] {
            for n in 1..=total.min(6) {
                let p = plan(Load::Closed { connections: total }, no_stop());
                let mut seen = BTreeSet::new();
                for i in 0..n {
                    let threads = 1 + (i as usize % 3);
                    let s = sharded(&p, i, n, threads);
                    assert!(s.shard_problems().is_empty());
                    let mut mine = 0;
                    for w in 0..threads {
                        let d = s.deal(w, threads);
                        for j in 0..d.slots(total) {
                            assert!(seen.insert(d.index(j)), "{} twice", d.index(j));
                            mine += 1;
                        }
                    }
                    assert_eq!(mine, s.shard_connections());
                    assert_eq!(mine, Shard::new(i, n).unwrap().share(total));
                }
                assert_eq!(seen, (0..total).collect::<BTreeSet<_>>());
            }
        }
    }

    #[test]
    fn users_keep_their_global_window_and_index() {
        let users = Load::Users {
            stages: vec![
                UserStage {
                    duration: Duration::from_secs(10),
                    from: 0.0,
                    to: 23.0,
                },
                UserStage {
                    duration: Duration::from_secs(5),
                    from: 23.0,
                    to: 23.0,
                },
                UserStage {
                    duration: Duration::from_secs(4),
                    from: 23.0,
                    to: 0.0,
                },
            ],
            pacing: None,
            think: Default::default(),
        };
        let p = plan(users, no_stop());
        let timeline = match &p.load {
            Load::Users { stages, .. } => Timeline::new(stages.clone()),
            _ => unreachable!(),
        };
        for n in 1..=5u64 {
            let mut all = Vec::new();
            for i in 0..n {
                let threads = 1 + ((i as usize + 1) % 3);
                let s = sharded(&p, i, n, threads);
                let mut mine = 0;
                for w in 0..threads {
                    let d = s.deal(w, threads);
                    for (j, window) in s.worker_windows(w, threads).into_iter().enumerate() {
                        let v = d.index(j as u64);
                        assert!(Shard::new(i, n).unwrap().owns(v));
                        assert_eq!(Some(window), timeline.window(v), "user {v}");
                        all.push(v);
                        mine += 1;
                    }
                }
                assert_eq!(mine, s.shard_connections(), "{i}/{n}");
            }
            all.sort_unstable();
            assert_eq!(all, (0..23).collect::<Vec<_>>(), "{n} shards");
        }
    }

    /// Data rows go by user index (`per_user`: row v mod rows), so with the
    /// users split exactly, the rows are too: each row is used by the same
    /// users as in one process.
    #[test]
    fn data_rows_follow_the_user_index() {
        let rows = 7u64;
        let users = 30u64;
        for n in 1..=4u64 {
            let mut by_row = vec![BTreeSet::new(); rows as usize];
            for i in 0..n {
                let p = sharded(
                    &plan(Load::Closed { connections: users }, no_stop()),
                    i,
                    n,
                    2,
                );
                for w in 0..2 {
                    let d = p.deal(w, 2);
                    for j in 0..d.slots(users) {
                        let v = d.index(j);
                        assert!(by_row[(v % rows) as usize].insert(v));
                    }
                }
            }
            for (r, us) in by_row.iter().enumerate() {
                let want: BTreeSet<u64> = (0..users).filter(|v| v % rows == r as u64).collect();
                assert_eq!(us, &want, "row {r}, {n} shards");
            }
        }
    }

    #[test]
    fn empty_shares_are_problems() {
        let p = plan(
            Load::Closed { connections: 2 },
            Stop {
                requests: Some(2),
                duration: None,
            },
        );
        let s = sharded(&p, 0, 3, 1);
        let problems = s.shard_problems();
        assert_eq!(problems.len(), 2);
        assert!(problems[0]
            .1
            .contains("2 connections cannot be split over 3 shards"));
        assert!(plan(Load::Closed { connections: 2 }, no_stop())
            .shard_problems()
            .is_empty());
    }
}
