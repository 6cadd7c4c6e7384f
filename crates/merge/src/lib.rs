//! Shards of one run (`yace run --shard I/N`) and their merge
//! (`yace merge`), as docs/design/010-shards.md describes:
//!
//! - [`identity`]: the run id and the plan hash that make shards one run;
//! - [`frame`]: a result as framed, checksummed lines that survive log
//!   collectors, and the reader that puts them back together;
//! - [`collect`]: result files, directories and logs → shard results;
//! - [`merge`]: the shards → one result, complete or said to be incomplete,
//!   with counters and HDR histograms merged exactly and percentiles
//!   recomputed, never averaged.
//!
//! Pure but for reading the inputs; prints nothing.

#![forbid(unsafe_code)]

mod combine;
pub mod frame;
pub mod identity;

pub use identity::{check_run_id, default_run_id, plan_hash};

use stats::shard::{MergeInfo, StartStatus};
use stats::RunResult;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A shard's result and where it was read.
#[derive(Debug, Clone)]
pub struct Input {
    pub result: RunResult,
    /// A file, or `FILE:LINE` of its first framed line.
    pub source: String,
}

/// What the inputs held.
#[derive(Debug, Default)]
pub struct Collected {
    pub inputs: Vec<Input>,
    /// Framed lines or results that could not be used (each makes the
    /// merge incomplete).
    pub damage: Vec<String>,
    /// Files that held no result (said, not counted against the merge: a
    /// killed shard's log is one).
    pub empty: Vec<String>,
}

/// Reads result files, directories (their `*.json`, `*.log`, `*.txt` and
/// `*.out` files) and logs with framed lines. A path that cannot be read
/// is an error naming it.
pub fn collect(paths: &[PathBuf]) -> Result<Collected, String> {
    let mut files = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.is_dir() {
            let mut here: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| format!("{}: {e}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    f.is_file()
                        && f.extension()
                            .and_then(|x| x.to_str())
                            .is_some_and(|x| matches!(x, "json" | "log" | "txt" | "out"))
                })
                .collect();
            here.sort();
            files.extend(here);
        } else {
            files.push(p.clone());
        }
    }
    let mut out = Collected::default();
    let mut reader = frame::Reader::new();
    for f in files {
        let bytes = std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let text = String::from_utf8_lossy(&bytes);
        let name = f.display().to_string();
        if text.trim_start().starts_with('{') {
            match read_result(text.as_bytes()) {
                Ok(r) => {
                    out.inputs.push(Input {
                        result: r,
                        source: name,
                    });
                    continue;
                }
                // A log may start with a brace; framed lines are looked for.
                Err(e) if !text.contains(frame::MARKER) => {
                    out.damage.push(format!("{name}: {e}"));
                    continue;
                }
                Err(_) => {}
            }
        }
        if reader.feed(&name, &text) == 0 {
            out.empty.push(name);
        }
    }
    let (assembled, damage) = reader.finish();
    for a in assembled {
        match read_result(&a.json) {
            Ok(r) => out.inputs.push(Input {
                result: r,
                source: a.at,
            }),
            Err(e) => out.damage.push(format!("{}: {e}", a.at)),
        }
    }
    out.damage
        .extend(damage.into_iter().map(|d| format!("{}: {}", d.at, d.what)));
    Ok(out)
}

fn read_result(bytes: &[u8]) -> Result<RunResult, String> {
    let v: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    if v.get("schema").and_then(|s| s.as_str()) != Some(stats::SCHEMA) {
        return Err(format!("not a {} result", stats::SCHEMA));
    }
    serde_json::from_value(v).map_err(|e| format!("not a valid {} result: {e}", stats::SCHEMA))
}

/// Why the inputs cannot be merged at all (nothing is written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub Vec<String>);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("\n"))
    }
}

/// The merged result; `result.merge` says whether it is complete and why not.
#[derive(Debug)]
pub struct Merged {
    pub result: RunResult,
    /// Notes for the user that do not change the verdict.
    pub notes: Vec<String>,
}

impl Merged {
    pub fn complete(&self) -> bool {
        self.result.merge.as_ref().is_some_and(|m| m.complete)
    }
}

/// Merges the shards of one run. `expect` is the number of shards the run
/// had; `run_id` picks one run when the inputs hold several. `damage` (from
/// [`collect`]) makes the result incomplete.
pub fn merge(
    inputs: Vec<Input>,
    expect: u64,
    run_id: Option<&str>,
    damage: &[String],
) -> Result<Merged, Refusal> {
    let mut refuse = Vec::new();
    let mut notes = Vec::new();
    if expect == 0 {
        return Err(Refusal(vec!["--expect-shards must be at least 1".into()]));
    }
    let (sharded, unsharded): (Vec<Input>, Vec<Input>) =
        inputs.into_iter().partition(|i| i.result.shard.is_some());
    for u in &unsharded {
        let what = if u.result.merge.is_some() {
            "a merged result"
        } else {
            "not a shard's result (it has no `shard`; run with --shard I/N)"
        };
        refuse.push(format!("{}: {what}", u.source));
    }
    let runs: BTreeSet<&str> = sharded
        .iter()
        .map(|i| i.result.shard.as_ref().map_or("", |s| s.run_id.as_str()))
        .collect();
    let chosen: String = match run_id {
        Some(id) if runs.contains(id) => id.to_owned(),
        Some(id) => {
            refuse.push(format!(
                "no shard of run '{id}' among the inputs (runs found: {})",
                list(&runs)
            ));
            String::new()
        }
        None if runs.len() > 1 => {
            refuse.push(format!(
                "the inputs hold shards of {} runs ({}): merge one at a time, or pick one \
                 with --run-id",
                runs.len(),
                list(&runs)
            ));
            String::new()
        }
        None => runs
            .iter()
            .next()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    };
    if sharded.is_empty() && unsharded.is_empty() {
        refuse.push("no yace result found in the inputs".into());
    }
    if !refuse.is_empty() {
        return Err(Refusal(refuse));
    }
    let (mine, others): (Vec<Input>, Vec<Input>) = sharded
        .into_iter()
        .partition(|i| i.result.shard.as_ref().map(|s| s.run_id.as_str()) == Some(chosen.as_str()));
    if !others.is_empty() {
        notes.push(format!("{} result(s) of other runs left out", others.len()));
    }
    let hashes: BTreeSet<String> = mine
        .iter()
        .filter_map(|i| i.result.shard.as_ref().map(|s| s.plan_hash.clone()))
        .collect();
    if hashes.len() > 1 {
        let by: Vec<String> = mine
            .iter()
            .map(|i| {
                let s = i.result.shard.as_ref().expect("sharded");
                format!(
                    "  shard {}/{} ({}): {}",
                    s.index, s.count, i.source, s.plan_hash
                )
            })
            .collect();
        return Err(Refusal(vec![format!(
            "run '{chosen}' has shards of different plans; every shard must run the same \
             plan (same flags or file):\n{}",
            by.join("\n")
        )]));
    }
    for i in &mine {
        let s = i.result.shard.as_ref().expect("sharded");
        if s.count != expect {
            refuse.push(format!(
                "{}: shard {}/{} is one of {} shards, but --expect-shards is {expect}",
                i.source, s.index, s.count, s.count
            ));
        }
    }
    // One result per shard index: the same one twice (a file and a log) is fine.
    let mut by_index: BTreeMap<u64, Input> = BTreeMap::new();
    for i in mine {
        let idx = i.result.shard.as_ref().expect("sharded").index;
        match by_index.get(&idx) {
            Some(old) if old.result == i.result => {}
            Some(old) => refuse.push(format!(
                "shard {idx} of run '{chosen}' is given twice with different results ({} and \
                 {}): keep one",
                old.source, i.source
            )),
            None => {
                by_index.insert(idx, i);
            }
        }
    }
    if !refuse.is_empty() {
        return Err(Refusal(refuse));
    }
    let shards: Vec<Input> = by_index.into_values().collect();

    let mut reasons: Vec<String> = damage.to_vec();
    let present: BTreeSet<u64> = shards
        .iter()
        .map(|i| i.result.shard.as_ref().expect("sharded").index)
        .collect();
    let missing: Vec<String> = (0..expect)
        .filter(|i| !present.contains(i))
        .map(|i| format!("{i}/{expect}"))
        .collect();
    if !missing.is_empty() {
        reasons.push(format!(
            "shard(s) {} missing: no result of theirs among the inputs (did they fail, or \
             was their output lost?)",
            missing.join(", ")
        ));
    }
    for i in &shards {
        let r = &i.result;
        let s = r.shard.as_ref().expect("sharded");
        let name = format!("shard {}/{}", s.index, s.count);
        if s.start == StartStatus::TooLate {
            reasons.push(format!(
                "{name} was ready too late to start within {} ms of {} and sent nothing",
                s.start_tolerance_ms.unwrap_or(0.0),
                s.start_at.as_deref().unwrap_or("its start time")
            ));
        } else if r.end.partial {
            reasons.push(format!(
                "{name} did not finish ({}): its result is partial",
                serde_json::to_value(r.end.reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default()
            ));
        }
        // The count is the plan's promise in the open model (its timetable)
        // and in a run that ends on its count; a closed or users run ended
        // by its duration only had `-n` as a cap.
        let capped = !matches!(r.plan.load, plan::Load::Open { .. })
            && r.end.reason != stats::EndReason::Completed;
        if let Some(exp) = s.expected_requests.filter(|_| !capped) {
            let later = r.summary.not_yet_due.unwrap_or(0);
            if s.sent_requests != exp || later > 0 {
                reasons.push(format!(
                    "{name} sent {} of the {exp} requests its plan holds{}",
                    s.sent_requests,
                    if later > 0 {
                        format!(" ({later} not yet due when it stopped)")
                    } else {
                        String::new()
                    }
                ));
            }
        }
    }
    match combine::settings(&shards) {
        Ok(()) => {}
        Err(e) => reasons.push(e),
    }
    let plan_hash = hashes.into_iter().next().unwrap_or_default();
    let mut result = combine::results(&shards).map_err(|e| Refusal(vec![e]))?;
    let infos: Vec<_> = shards
        .iter()
        .filter_map(|i| i.result.shard.clone())
        .collect();
    let starts: Vec<f64> = infos.iter().filter_map(|s| s.start_offset_ms).collect();
    let spread = (starts.len() == infos.len() && !starts.is_empty()).then(|| {
        starts.iter().cloned().fold(f64::MIN, f64::max)
            - starts.iter().cloned().fold(f64::MAX, f64::min)
    });
    let clock = infos
        .iter()
        .filter_map(|s| s.clock.max_error_ms)
        .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
    // Start times are only as good as the clocks: shards on several hosts
    // whose kernel says its clock is not synchronized are named.
    let hosts: BTreeSet<&str> = shards
        .iter()
        .map(|i| i.result.environment.hostname.as_str())
        .collect();
    let unsynced: Vec<String> = infos
        .iter()
        .filter(|s| s.clock.status == stats::shard::ClockStatus::Unsynchronized)
        .map(|s| format!("{}/{}", s.index, s.count))
        .collect();
    if hosts.len() > 1 && !unsynced.is_empty() {
        result.warnings.push(format!(
            "the clocks of shard(s) {} were not synchronized (the kernel's adjtimex says so): \
             their agreed start may have been off by up to {:.0} ms; run NTP or chrony on the \
             client machines",
            unsynced.join(", "),
            clock.unwrap_or(0.0)
        ));
    }
    let complete = reasons.is_empty();
    if !complete {
        result.end.partial = true;
        for r in reasons.iter().rev() {
            result.warnings.insert(0, format!("incomplete merge: {r}"));
        }
    }
    result.merge = Some(MergeInfo {
        run_id: chosen,
        plan_hash,
        expected_shards: expect,
        complete,
        reasons,
        shards: infos,
        start_spread_ms: spread,
        clock_max_error_ms: clock,
        series_percentiles: "interval".into(),
    });
    // Thresholds, as the shards were given them, judged on the whole.
    result.thresholds = combine::thresholds(&shards, &result);
    Ok(Merged { result, notes })
}

fn list(runs: &BTreeSet<&str>) -> String {
    runs.iter()
        .map(|r| format!("'{r}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The path a directory input's merged result goes to by default.
pub fn default_output() -> &'static Path {
    Path::new("merged.json")
}

#[cfg(test)]
mod tests;
