//! What the view knows before the first row: the run as planned. Built
//! once from the plan; the rows say what happened.

use plan::{Field, Load, Plan, Spelling};

/// The run as planned, for the header, the progress bar and the planned
/// lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// `GET http://127.0.0.1:8080/` (no secret: the plan's redacted URL).
    pub target: String,
    /// `closed model: 50 connections, 4 threads`.
    pub model: String,
    pub threads: usize,
    /// The planned length of the run, seconds (`-d`, or the stages').
    pub duration_s: Option<f64>,
    /// The planned number of requests (`-n`).
    pub requests: Option<u64>,
    pub shape: Shape,
    /// Server monitors watching the run (`--monitor`).
    pub monitors: usize,
    /// How the front end spells "more threads" in advice (`-t`).
    pub threads_flag: &'static str,
    /// The part of the plan this process runs (a shard's planned lines
    /// are its share).
    pub part: plan::Shard,
}

/// The load model, as the view draws it.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A fixed number of connections, each sending when the last answer came.
    Closed { connections: u64 },
    /// Requests on a timetable: (duration s, from, to) per stage.
    Open {
        stages: Vec<(f64, f64, f64)>,
        max_inflight: u64,
    },
    /// Virtual users: (duration s, from, to) per stage.
    Users { stages: Vec<(f64, f64, f64)> },
}

impl Setup {
    /// The setup of `plan`, run on `threads` worker threads with `monitors`
    /// server monitors; advice names flags as `spelling` does.
    pub fn of(plan: &Plan, threads: usize, monitors: usize, spelling: &dyn Spelling) -> Setup {
        let shown = plan.redacted();
        let shape = match &plan.load {
            Load::Closed { connections } => Shape::Closed {
                connections: *connections,
            },
            Load::Open {
                stages: st,
                max_inflight,
                ..
            } => Shape::Open {
                stages: st
                    .iter()
                    .map(|s| (s.duration.as_secs_f64(), s.from, s.to))
                    .collect(),
                max_inflight: *max_inflight,
            },
            Load::Users { stages: st, .. } => Shape::Users {
                stages: st
                    .iter()
                    .map(|s| (s.duration.as_secs_f64(), s.from, s.to))
                    .collect(),
            },
        };
        let staged = match &shape {
            Shape::Closed { .. } => None,
            Shape::Open { stages, .. } | Shape::Users { stages } => {
                Some(stages.iter().map(|s| s.0).sum::<f64>())
            }
        };
        let duration_s = match (plan.stop.duration.map(|d| d.as_secs_f64()), staged) {
            (Some(d), Some(s)) => Some(d.min(s)),
            (d, s) => d.or(s),
        };
        let threads_word = if threads == 1 {
            "1 thread".to_string()
        } else {
            format!("{threads} threads")
        };
        let model = match &shape {
            Shape::Closed { connections } => format!(
                "closed model: {} connections, {threads_word}",
                report::count(*connections)
            ),
            Shape::Open {
                stages,
                max_inflight,
            } => format!(
                "open model: up to {}/s, at most {} in flight, {threads_word}",
                report::count(peak(stages).round() as u64),
                report::count(*max_inflight)
            ),
            Shape::Users { stages } => format!(
                "virtual users: up to {}, {threads_word}",
                report::count(peak(stages).round() as u64)
            ),
        };
        // A shard says which it is and its part; its connections and
        // in-flight cap are its share (its planned levels: `planned_at`).
        let model =
            model + &report::text::shard_part(plan, report::lang::Lang::En).unwrap_or_default();
        let part = plan.part();
        let shape = match shape {
            Shape::Closed { connections } => Shape::Closed {
                connections: part.share(connections),
            },
            Shape::Open {
                stages,
                max_inflight,
            } => Shape::Open {
                stages,
                max_inflight: part.share(max_inflight),
            },
            users => users,
        };
        Setup {
            target: format!("{} {}", shown.request.method, shown.target.url),
            model,
            threads,
            duration_s,
            requests: plan.stop.requests,
            shape,
            monitors,
            threads_flag: spelling.usage(Field::Threads),
            part,
        }
    }

    /// The planned level at `t` seconds: the offered rate (open model) or
    /// the users (virtual users) — a shard's part of them; None for the
    /// closed model and past the last stage.
    pub fn planned_at(&self, t: f64) -> Option<f64> {
        match &self.shape {
            Shape::Closed { .. } => None,
            Shape::Open { stages, .. } => staged(stages, t).map(|r| self.part.rate_share(r)),
            Shape::Users { stages } => staged(stages, t).map(|u| self.part.level_share(u)),
        }
    }
}

fn peak(stages: &[(f64, f64, f64)]) -> f64 {
    stages.iter().map(|s| s.1.max(s.2)).fold(0.0, f64::max)
}

/// The level at `t` of piecewise-linear stages (duration, from, to).
fn staged(stages: &[(f64, f64, f64)], t: f64) -> Option<f64> {
    let mut t0 = 0.0;
    for &(d, from, to) in stages {
        if t < t0 + d {
            return Some(from + (to - from) * (t - t0).max(0.0) / d.max(1e-9));
        }
        t0 += d;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_are_read_piecewise_linearly() {
        let st = [(10.0, 0.0, 100.0), (5.0, 100.0, 100.0)];
        assert_eq!(staged(&st, 0.0), Some(0.0));
        assert_eq!(staged(&st, 5.0), Some(50.0));
        assert_eq!(staged(&st, 12.0), Some(100.0));
        assert_eq!(staged(&st, 15.0), None);
        assert_eq!(peak(&st), 100.0);
    }

    #[test]
    fn a_shard_plans_its_part_and_says_so() {
        let mut p = plan::Plan::get(
            plan::Target::parse("http://127.0.0.1/").unwrap(),
            Load::Open {
                stages: vec![plan::RateStage {
                    duration: std::time::Duration::from_secs(10),
                    from: 300.0,
                    to: 300.0,
                }],
                max_inflight: 30,
                late: Default::default(),
            },
            plan::Stop {
                requests: None,
                duration: Some(std::time::Duration::from_secs(10)),
            },
        );
        let whole = Setup::of(&p, 1, 0, &plan::Keys);
        assert_eq!(whole.planned_at(1.0), Some(300.0));
        assert!(!whole.model.contains("shard"), "{}", whole.model);
        p.shard = Some(plan::Shard::new(1, 3).unwrap());
        let part = Setup::of(&p, 1, 0, &plan::Keys);
        assert_eq!(part.planned_at(1.0), Some(100.0));
        assert!(matches!(
            part.shape,
            Shape::Open {
                max_inflight: 10,
                ..
            }
        ));
        assert!(
            part.model
                .ends_with(" · shard 1/3, its part: up to 100/s, at most 10 in flight"),
            "{}",
            part.model
        );
    }
}
