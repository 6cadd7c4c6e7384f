//! `--shard`, `--shards`, `--run-id`, `--start-at`, `--start-tolerance`
//! and `--frame` → what a shard does (docs/design/010-shards.md). Every
//! problem is reported in one round, each naming its flag or variable.

use crate::args::ShardArgs;
use crate::Failure;
use plan::{Plan, Shard};
use std::time::{Duration, SystemTime};

/// The shard flags, checked and resolved (a relative `--start-at` once).
#[derive(Debug, Clone, Default)]
pub struct Sharding {
    pub shard: Option<Shard>,
    pub run_id: Option<String>,
    /// The agreed start, and how it is written in the result (RFC 3339 UTC).
    pub start_at: Option<(SystemTime, String)>,
    pub tolerance: Duration,
    pub frame: bool,
}

impl Sharding {
    /// True when any shard flag was given (the result then says so).
    pub fn active(&self) -> bool {
        self.shard.is_some() || self.run_id.is_some() || self.start_at.is_some()
    }
}

/// Checks the flags; `env` reads the environment (for `--shard env`) and
/// `now` is the time a relative `--start-at` counts from.
pub fn sharding(
    a: &ShardArgs,
    env: &dyn Fn(&str) -> Option<String>,
    now: SystemTime,
) -> Result<Sharding, Failure> {
    let mut problems = Vec::new();
    let shard = match a.shard.as_deref() {
        None => {
            if a.shards.is_some() {
                problems
                    .push("--shards: goes with --shard env (e.g. --shard env --shards 8)".into());
            }
            None
        }
        Some("env") => from_env(a.shards.as_deref(), env)
            .map_err(|e| problems.push(e))
            .ok(),
        Some(s) => {
            if a.shards.is_some() {
                problems.push(format!(
                    "--shards: --shard {s} already says how many shards there are; drop --shards"
                ));
            }
            Shard::parse(s)
                .map_err(|e| problems.push(format!("--shard: {e}")))
                .ok()
        }
    };
    if let Some(id) = &a.run_id {
        if let Err(e) = merge::check_run_id(id) {
            problems.push(format!("--run-id: {e}"));
        }
    }
    let tolerance = plan::parse_duration("--start-tolerance", &a.start_tolerance)
        .map_err(|d| problems.push(d.to_string()))
        .unwrap_or_default();
    let start_at = match a.start_at.as_deref() {
        None => None,
        Some(t) => match start_time(t, now) {
            Ok(at) => Some((at, humantime::format_rfc3339_millis(at).to_string())),
            Err(e) => {
                problems.push(format!("--start-at: {e}"));
                None
            }
        },
    };
    if !problems.is_empty() {
        return Err(Failure::usage(problems.join("\n")));
    }
    Ok(Sharding {
        shard,
        run_id: a.run_id.clone(),
        start_at,
        tolerance,
        frame: a.frame,
    })
}

/// `--shard env`: I from JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or
/// SLURM_PROCID, N from `--shards` or SLURM_NTASKS; all 0-based.
fn from_env(shards: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Result<Shard, String> {
    let (var, index) = match (env("JOB_COMPLETION_INDEX"), env("SLURM_PROCID")) {
        (Some(i), _) => ("JOB_COMPLETION_INDEX", i),
        (None, Some(i)) => ("SLURM_PROCID", i),
        (None, None) => {
            return Err(
                "--shard env: neither JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) \
                        nor SLURM_PROCID (srun) is set; give --shard I/N instead"
                    .into(),
            )
        }
    };
    let index: u64 = index
        .trim()
        .parse()
        .map_err(|_| format!("--shard env: {var}='{index}' is not a whole number"))?;
    let (from, count) = match (shards, env("SLURM_NTASKS")) {
        (Some(n), _) => ("--shards", n.to_owned()),
        (None, Some(n)) => ("SLURM_NTASKS", n),
        (None, None) => {
            return Err(format!(
                "--shard env: {var} gives the shard, but not how many there are: add --shards N \
                 (the Job's completions)"
            ))
        }
    };
    let count: u64 = count
        .trim()
        .parse()
        .map_err(|_| format!("--shard env: {from}='{count}' is not a whole number"))?;
    Shard::new(index, count).map_err(|e| format!("--shard env ({var}, {from}): {e}"))
}

/// `--start-at`: RFC 3339 (`2026-12-01T10:00:00Z`, `…+08:00`, fractions
/// allowed) or `+30s` from `now`.
pub fn start_time(t: &str, now: SystemTime) -> Result<SystemTime, String> {
    let t = t.trim();
    if let Some(rel) = t.strip_prefix('+') {
        let d = plan::parse_duration("--start-at", rel).map_err(|d| d.problem)?;
        return Ok(now + d);
    }
    // An offset other than Z: read the local time, then move it to UTC.
    let (base, offset_s): (String, i64) = match t.len().checked_sub(6).map(|i| t.split_at(i)) {
        Some((head, off))
            if (off.starts_with('+') || off.starts_with('-'))
                && off.as_bytes()[3] == b':'
                && head.contains('T') =>
        {
            let h: i64 = off[1..3].parse().map_err(|_| bad_time(t))?;
            let m: i64 = off[4..6].parse().map_err(|_| bad_time(t))?;
            let sign = if off.starts_with('-') { -1 } else { 1 };
            (format!("{head}Z"), sign * (h * 3600 + m * 60))
        }
        _ => (t.to_owned(), 0),
    };
    let at = humantime::parse_rfc3339(&base).map_err(|_| bad_time(t))?;
    Ok(if offset_s >= 0 {
        at - Duration::from_secs(offset_s as u64)
    } else {
        at + Duration::from_secs((-offset_s) as u64)
    })
}

fn bad_time(t: &str) -> String {
    format!(
        "'{t}' is not a time: use RFC 3339 (2026-12-01T10:00:00Z, or with an offset such as \
         +08:00) or a delay such as +30s"
    )
}

/// The plan with its shard set, or what cannot be split, naming the flags.
pub fn apply(s: &Sharding, mut plan: Plan) -> Result<Plan, Failure> {
    plan.shard = s.shard;
    let problems = plan.shard_problems();
    if problems.is_empty() {
        return Ok(plan);
    }
    let lines: Vec<String> = problems
        .into_iter()
        .map(|(f, p)| {
            format!(
                "{}: {p} (use fewer shards, or raise it)",
                plan::Spelling::name(&super::RunFlags, f)
            )
        })
        .collect();
    Err(Failure::usage(lines.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn args(shard: Option<&str>, shards: Option<&str>) -> ShardArgs {
        ShardArgs {
            shard: shard.map(str::to_owned),
            shards: shards.map(str::to_owned),
            start_tolerance: "1s".into(),
            ..Default::default()
        }
    }

    fn with(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    fn now() -> SystemTime {
        humantime::parse_rfc3339("2026-12-01T10:00:00Z").unwrap()
    }

    #[test]
    fn shard_env_reads_kubernetes_and_slurm() {
        let k8s = sharding(
            &args(Some("env"), Some("4")),
            &with(&[("JOB_COMPLETION_INDEX", "3")]),
            now(),
        );
        assert_eq!(k8s.unwrap().shard, Some(Shard::new(3, 4).unwrap()));
        let slurm = sharding(
            &args(Some("env"), None),
            &with(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "2")]),
            now(),
        );
        assert_eq!(slurm.unwrap().shard, Some(Shard::new(0, 2).unwrap()));
        let none = sharding(&args(Some("env"), Some("2")), &with(&[]), now()).unwrap_err();
        assert!(
            none.message.contains("JOB_COMPLETION_INDEX"),
            "{}",
            none.message
        );
        let no_n = sharding(
            &args(Some("env"), None),
            &with(&[("JOB_COMPLETION_INDEX", "1")]),
            now(),
        )
        .unwrap_err();
        assert!(no_n.message.contains("--shards N"), "{}", no_n.message);
        let out = sharding(
            &args(Some("env"), Some("2")),
            &with(&[("JOB_COMPLETION_INDEX", "2")]),
            now(),
        )
        .unwrap_err();
        assert!(out.message.contains("out of range"), "{}", out.message);
        assert_eq!(out.code, crate::exit::USAGE);
    }

    #[test]
    fn every_problem_in_one_round() {
        let a = ShardArgs {
            shard: Some("3/3".into()),
            shards: Some("3".into()),
            run_id: Some("a b".into()),
            start_at: Some("tomorrow".into()),
            start_tolerance: "soon".into(),
            frame: false,
        };
        let e = sharding(&a, &with(&[]), now()).unwrap_err().message;
        for flag in [
            "--shards:",
            "--shard:",
            "--run-id:",
            "--start-at:",
            "--start-tolerance",
        ] {
            assert!(e.contains(flag), "{flag} in {e}");
        }
    }

    #[test]
    fn start_times() {
        let t = start_time("+30s", now()).unwrap();
        assert_eq!(t, now() + Duration::from_secs(30));
        assert_eq!(start_time("2026-12-01T10:00:00Z", now()).unwrap(), now());
        assert_eq!(
            start_time("2026-12-01T18:00:00.5+08:00", now()).unwrap(),
            now() + Duration::from_millis(500)
        );
        assert_eq!(
            start_time("2026-12-01T05:00:00-05:00", now()).unwrap(),
            now()
        );
        assert!(start_time("noon", now()).unwrap_err().contains("RFC 3339"));
    }
}
