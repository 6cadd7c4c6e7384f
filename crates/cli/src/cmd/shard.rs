//! `yace run --shard I/N`: the run's part of a sharded run — its plan's
//! share, a synchronized start, and the result stamped with the run id,
//! plan hash, start offset and clock state, on stdout as framed lines if
//! asked (docs/design/010-shards.md). `run.rs` calls these at four points;
//! without shard flags each is a no-op.

use super::driver;
use crate::args::RunArgs;
use crate::flags::shard::{self as flags, Sharding};
use crate::flags::RunFlags;
use crate::{exit, Failure};
use ::run::{Finished, Prepared, StopHandle};
use stats::shard::{ShardInfo, StartStatus};
use stats::{EndReason, RunFacts, RunResult, SecondRow, Totals};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

/// The flags as first read: a relative `--start-at` is resolved once.
static SHARDING: OnceLock<Sharding> = OnceLock::new();

fn read(a: &RunArgs) -> Result<&'static Sharding, Failure> {
    if let Some(s) = SHARDING.get() {
        return Ok(s);
    }
    let s = flags::sharding(&a.shard, &|k| std::env::var(k).ok(), SystemTime::now())?;
    Ok(SHARDING.get_or_init(|| s))
}

/// The plan this process runs: its shard's part (the flags checked).
pub fn plan(a: &RunArgs, plan: plan::Plan) -> Result<plan::Plan, Failure> {
    let s = read(a)?;
    if s.shard.is_some() && a.url.is_none() && a.file.is_none() {
        // Each shard would load an embedded target of its own: not one run.
        return Err(Failure::usage(
            "--shard: give the target's URL; shards share one target, not each an embedded one",
        ));
    }
    flags::apply(s, plan)
}

/// How the start went, and what the result must say.
#[derive(Debug)]
pub struct Start {
    sharding: Sharding,
    plan_hash: String,
    run_id: String,
    status: StartStatus,
    offset_ms: Option<f64>,
    expected: Option<u64>,
    connections: u64,
    shard: plan::Shard,
}

/// Waits for `--start-at` (the target is already resolved and probed);
/// Ctrl-C while waiting ends the wait and the run stops at once.
pub fn wait(a: &RunArgs, p: &Prepared) -> Result<Start, Failure> {
    let s = read(a)?.clone();
    let plan_hash = merge::plan_hash(&p.plan);
    let shard = p.plan.part();
    let run_id = s
        .run_id
        .clone()
        .unwrap_or_else(|| merge::default_run_id(shard.count, &plan_hash));
    let mut status = StartStatus::Unscheduled;
    let mut offset_ms = None;
    if let Some((at, text)) = &s.start_at {
        host::signals::install();
        let late = |now: SystemTime| now.duration_since(*at).unwrap_or(Duration::ZERO);
        if late(SystemTime::now()) > s.tolerance {
            status = StartStatus::TooLate;
            offset_ms = Some(late(SystemTime::now()).as_secs_f64() * 1e3);
            eprintln!(
                "yace: shard {shard} was ready {:.0} ms after --start-at {text}, beyond \
                 --start-tolerance {}: it sends nothing",
                offset_ms.unwrap_or(0.0),
                humantime::format_duration(s.tolerance)
            );
        } else {
            if let Ok(ahead) = at.duration_since(SystemTime::now()) {
                eprintln!(
                    "yace: shard {shard} of run {run_id} ready; starting at {text} (in {:.1} s)",
                    ahead.as_secs_f64()
                );
            }
            // Coarse sleeps, then a short spin: a start within a millisecond.
            while host::signals::received().is_none() {
                match at.duration_since(SystemTime::now()) {
                    Ok(d) if d > Duration::from_millis(60) => std::thread::sleep(
                        d.min(Duration::from_millis(50)) - Duration::from_millis(5),
                    ),
                    Ok(d) if !d.is_zero() => std::thread::sleep(d.min(Duration::from_micros(200))),
                    _ => break,
                }
            }
            status = StartStatus::OnTime;
            offset_ms = Some(signed_ms(SystemTime::now(), *at));
        }
    }
    Ok(Start {
        sharding: s,
        plan_hash,
        run_id,
        status,
        offset_ms,
        expected: p.plan.planned(),
        connections: p.plan.shard_connections(),
        shard,
    })
}

/// `a − b` in ms, negative when `a` is earlier.
fn signed_ms(a: SystemTime, b: SystemTime) -> f64 {
    match a.duration_since(b) {
        Ok(d) => d.as_secs_f64() * 1e3,
        Err(e) => -e.duration().as_secs_f64() * 1e3,
    }
}

/// Runs the prepared job, unless the shard is too late to start: then
/// nothing is sent and the result says so.
pub fn execute(
    start: &Start,
    p: Prepared,
    observe: impl FnMut(&[SecondRow]),
    stop: &StopHandle,
) -> Result<Finished<()>, Failure> {
    if start.status != StartStatus::TooLate {
        return driver::execute_with(p, |_| (), observe, stop);
    }
    let mut result = RunResult::build(
        &Totals::default(),
        Vec::new(),
        RunFacts {
            environment: host::environment(p.addr, false),
            plan: p.plan.redacted(),
            started_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            duration_ns: 0,
            reason: EndReason::Interrupted,
            cpu_ns: 0,
            busiest_thread: 0.0,
            threads: 0,
            connections_opened: 0,
            // Every planned request stays not yet due: the account holds.
            not_yet_due: p.plan.planned(),
            visits: None,
            paced: None,
            steering: None,
            server_software: None,
            step_names: Vec::new(),
            tls: None,
            http2: None,
            checks: Vec::new(),
            intervals: Vec::new(),
        },
        &RunFlags,
    );
    result.end.partial = true;
    Ok(Finished {
        result,
        stopped_by: None,
        extras: Vec::new(),
    })
}

impl Start {
    /// Stamps the result with the shard's identity and start (when any
    /// shard flag was given).
    pub fn stamp(&self, r: &mut RunResult) {
        if !self.sharding.active() {
            return;
        }
        let s = &self.sharding;
        if self.status == StartStatus::TooLate {
            r.warnings.insert(
                0,
                format!(
                    "shard {} was ready {:.0} ms after its start time {}, beyond the tolerance \
                     of {} ms: it sent nothing (start shards earlier, or raise \
                     --start-tolerance)",
                    self.shard,
                    self.offset_ms.unwrap_or(0.0),
                    s.start_at.as_ref().map_or("", |x| x.1.as_str()),
                    s.tolerance.as_millis()
                ),
            );
        }
        r.shard = Some(ShardInfo {
            run_id: self.run_id.clone(),
            plan_hash: self.plan_hash.clone(),
            index: self.shard.index,
            count: self.shard.count,
            start_at: s.start_at.as_ref().map(|x| x.1.clone()),
            start_offset_ms: self.offset_ms.map(|o| (o * 1000.0).round() / 1000.0),
            start_tolerance_ms: s.start_at.as_ref().map(|_| s.tolerance.as_secs_f64() * 1e3),
            start: self.status,
            clock: host::clock::sync(),
            expected_requests: self.expected,
            sent_requests: r.summary.requests + r.summary.dropped,
            connections: self.connections,
        });
    }

    /// `--frame`: the result on stdout as framed lines, after the summary.
    pub fn emit(&self, r: &RunResult) {
        if !self.sharding.frame {
            return;
        }
        let json = serde_json::to_vec(r).expect("a result serializes");
        // One write a line, each shorter than PIPE_BUF: shards that share
        // one log (Slurm tasks, a pod's stdout) may write at the same time,
        // and a pipe or an O_APPEND file keeps such writes whole; one
        // write of every line could be split and interleaved with
        // another shard's.
        use std::io::Write;
        let mut o = std::io::stdout().lock();
        for line in merge::frame::encode(&json, &self.run_id, self.shard) {
            let _ = o.write_all(format!("{line}\n").as_bytes());
            let _ = o.flush();
        }
    }

    /// The exit code: a shard too late to start has its own; a shard whose
    /// own part breached a threshold exits 0 — thresholds are judged on the
    /// merged run (`yace merge`), and a non-zero exit would fail its pod
    /// (`backoffLimit: 0` fails the Job and stops the other shards) or its
    /// Slurm task (`--kill-on-bad-exit`). Its result still records the
    /// breach. Only a shard that could not run exits non-zero.
    pub fn exit_code(&self, code: u8) -> u8 {
        if self.status == StartStatus::TooLate {
            exit::TOO_LATE
        } else if code == exit::THRESHOLD && self.sharding.shard.is_some() {
            eprintln!(
                "yace: shard {}: a threshold was breached on this shard's part (its result \
                 says which); a shard exits 0 for it: `yace merge` judges the thresholds on \
                 the merged run and exits 3 if they fail there",
                self.shard
            );
            exit::OK
        } else {
            code
        }
    }
}
