//! The arithmetic of a merge: counters add, HDR histograms add exactly and
//! every distribution is recomputed from the sum; series align on the
//! common start, their per-second percentiles taken from the merged
//! interval histograms; nothing that cannot be averaged is averaged.

use crate::Input;
use hdrhistogram::Histogram;
use stats::hist::{decode, encode, Distribution};
use stats::shortfall::Shortfall;
use stats::threshold::{Threshold, ThresholdResult};
use stats::{
    CheckResult, EndReason, IntervalHistogram, RunResult, SecondRow, StepResult, INTERVAL_S,
};
use std::collections::BTreeMap;

/// The histograms' configuration: lowest, highest, significant digits.
fn config(h: &Histogram<u64>) -> (u64, u64, u8) {
    (h.low(), h.high(), h.sigfig())
}

/// Every shard must have recorded with the same histogram settings, or
/// the sum would not be exact.
pub(crate) fn settings(shards: &[Input]) -> Result<(), String> {
    let mut seen: BTreeMap<(u64, u64, u8), Vec<String>> = BTreeMap::new();
    let mut iv: BTreeMap<(u64, u64, u8), Vec<String>> = BTreeMap::new();
    for i in shards {
        let s = i
            .result
            .shard
            .as_ref()
            .map_or(String::new(), |s| s.to_string_short());
        let h = decode(&i.result.histograms.latency).map_err(|e| format!("{}: {e}", i.source))?;
        seen.entry(config(&h)).or_default().push(s.clone());
        if let Some(first) = i.result.histograms.intervals.first() {
            let h = decode(&first.latency).map_err(|e| format!("{}: {e}", i.source))?;
            iv.entry(config(&h)).or_default().push(s);
        }
    }
    for (what, m) in [("latency", seen), ("interval", iv)] {
        if m.len() > 1 {
            let parts: Vec<String> = m
                .iter()
                .map(|((lo, hi, d), s)| {
                    format!("{lo}–{hi} µs at {d} digits on shard(s) {}", s.join(", "))
                })
                .collect();
            return Err(format!(
                "the shards' {what} histograms have different settings ({}): they cannot be \
                 merged exactly",
                parts.join("; ")
            ));
        }
    }
    Ok(())
}

trait Short {
    fn to_string_short(&self) -> String;
}

impl Short for stats::shard::ShardInfo {
    fn to_string_short(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// Adds histograms given as their encodings.
fn add_all<'a>(encoded: impl Iterator<Item = &'a str>) -> Result<Option<Histogram<u64>>, String> {
    let mut sum: Option<Histogram<u64>> = None;
    for e in encoded {
        let h = decode(e)?;
        match &mut sum {
            Some(s) => s
                .add(&h)
                .map_err(|e| format!("histograms do not add: {e:?}"))?,
            None => sum = Some(h),
        }
    }
    Ok(sum)
}

/// (merged encoding, its distribution) of one histogram of every shard.
fn merged_hist<'a>(
    encoded: impl Iterator<Item = &'a str>,
) -> Result<Option<(String, Distribution)>, String> {
    Ok(add_all(encoded)?.map(|h| (encode(&h), Distribution::of(&h))))
}

/// A shard's start, ms after the earliest shard's start.
fn shifts_ms(shards: &[Input]) -> Vec<f64> {
    let offs: Vec<f64> = shards
        .iter()
        .map(|i| {
            i.result
                .shard
                .as_ref()
                .and_then(|s| s.start_offset_ms)
                .unwrap_or(0.0)
        })
        .collect();
    let min = offs.iter().cloned().fold(f64::INFINITY, f64::min);
    offs.iter().map(|o| o - min).collect()
}

/// The one result of all shards.
pub(crate) fn results(shards: &[Input]) -> Result<RunResult, String> {
    let first = &shards.first().ok_or("no shard result to merge")?.result;
    let rs: Vec<&RunResult> = shards.iter().map(|i| &i.result).collect();
    let shifts = shifts_ms(shards);
    let mut m = first.clone();
    m.shard = None;
    m.monitor = None;
    m.plan.shard = None;
    m.plan.threads = rs.iter().map(|r| r.plan.threads).sum();
    m.started_at = rs
        .iter()
        .map(|r| r.started_at.clone())
        .min()
        .unwrap_or_default();

    // Environment: every host named once; CPUs add.
    let mut hosts: Vec<String> = Vec::new();
    for r in &rs {
        if !hosts.contains(&r.environment.hostname) {
            hosts.push(r.environment.hostname.clone());
        }
    }
    m.environment.hostname = hosts.join(", ");
    m.environment.cpus = rs.iter().map(|r| r.environment.cpus).sum();
    m.environment.cpus_allowed = rs.iter().map(|r| r.environment.cpus_allowed).sum();
    m.environment.target_is_local = rs.iter().any(|r| r.environment.target_is_local);

    // End: the worst way any shard ended.
    let reasons: Vec<EndReason> = rs.iter().map(|r| r.end.reason).collect();
    m.end.reason = if reasons.contains(&EndReason::Terminated) {
        EndReason::Terminated
    } else if reasons.contains(&EndReason::Interrupted) {
        EndReason::Interrupted
    } else if reasons.iter().all(|r| *r == EndReason::Completed) {
        EndReason::Completed
    } else {
        EndReason::Duration
    };
    m.end.partial = rs.iter().any(|r| r.end.partial);

    // The run lasted from the common start to the last shard's end.
    let duration_s = rs
        .iter()
        .zip(&shifts)
        .map(|(r, s)| s / 1e3 + r.summary.duration_s)
        .fold(0.0, f64::max);
    let sum = |f: &dyn Fn(&RunResult) -> u64| rs.iter().map(|r| f(r)).sum::<u64>();
    let all_some =
        |f: &dyn Fn(&RunResult) -> Option<u64>| rs.iter().map(|r| f(r)).sum::<Option<u64>>();
    let s = &mut m.summary;
    s.requests = sum(&|r| r.summary.requests);
    s.responses = sum(&|r| r.summary.responses);
    s.errors = sum(&|r| r.summary.errors);
    s.cancelled = sum(&|r| r.summary.cancelled);
    s.dropped = sum(&|r| r.summary.dropped);
    s.planned = all_some(&|r| r.summary.planned);
    s.not_yet_due = all_some(&|r| r.summary.not_yet_due);
    // Paced users: each shard accounted for its own users' iterations.
    s.started = all_some(&|r| r.summary.started);
    s.missed = all_some(&|r| r.summary.missed);
    s.users = all_some(&|r| r.summary.users);
    s.users_never_served = all_some(&|r| r.summary.users_never_served);
    s.non_2xx = sum(&|r| r.summary.non_2xx);
    s.retries = sum(&|r| r.summary.retries);
    s.reused_connections = sum(&|r| r.summary.reused_connections);
    s.keepalive_responses = sum(&|r| r.summary.keepalive_responses);
    s.connections_opened = sum(&|r| r.summary.connections_opened);
    s.bytes_in = sum(&|r| r.summary.bytes_in);
    s.bytes_out = sum(&|r| r.summary.bytes_out);
    s.body_bytes = sum(&|r| r.summary.body_bytes);
    s.duration_s = duration_s;
    let per_s = |v: u64| {
        if duration_s > 0.0 {
            v as f64 / duration_s
        } else {
            0.0
        }
    };
    s.rps = per_s(s.responses);
    s.bytes_in_per_s = per_s(s.bytes_in);

    // Histograms: exact sums, distributions recomputed.
    let h = &mut m.histograms;
    let one = |f: &dyn Fn(&RunResult) -> &str| -> Result<(String, Distribution), String> {
        merged_hist(rs.iter().map(|r| f(r)))?.ok_or_else(|| "no histogram".to_string())
    };
    let opt =
        |f: &dyn Fn(&RunResult) -> Option<&str>| -> Result<Option<(String, Distribution)>, String> {
            if rs.iter().any(|r| f(r).is_none()) {
                return Ok(None);
            }
            merged_hist(rs.iter().filter_map(|r| f(r)))
        };
    (h.latency, s.latency) = one(&|r| &r.histograms.latency)?;
    (h.connect, s.connect) = one(&|r| &r.histograms.connect)?;
    (h.wait, s.wait) = one(&|r| &r.histograms.wait)?;
    (h.processing, s.processing) = one(&|r| &r.histograms.processing)?;
    (h.handshake, s.handshake) = one(&|r| &r.histograms.handshake)?;
    let service = opt(&|r| r.histograms.service.as_deref())?;
    h.service = service.as_ref().map(|x| x.0.clone());
    s.service = service.map(|x| x.1);
    let tls = opt(&|r| r.histograms.tls.as_deref())?;
    h.tls = tls.as_ref().map(|x| x.0.clone());
    s.tls = tls.map(|x| x.1);
    // Schedule lag: from its histogram where every shard has one; results
    // without it (written before it existed) combine count, min, max, mean
    // and deviation exactly and leave the percentiles out.
    match opt(&|r| r.histograms.lag.as_deref())? {
        Some((enc, d)) => {
            h.lag = Some(enc);
            s.lag = Some(d);
        }
        None => {
            h.lag = None;
            s.lag = combine_moments(rs.iter().map(|r| r.summary.lag.as_ref()));
        }
    }
    // Body lengths: the first shard's first length; a shard whose first
    // differed counts all its other-length responses as varied.
    let firsts = first.summary.body_length.first;
    let bl = &mut s.body_length;
    let with_body: Vec<&RunResult> = rs
        .iter()
        .copied()
        .filter(|r| r.summary.body_length.first.is_some())
        .collect();
    bl.first = with_body
        .first()
        .and_then(|r| r.summary.body_length.first)
        .or(firsts);
    bl.min = with_body
        .iter()
        .map(|r| r.summary.body_length.min)
        .min()
        .unwrap_or(0);
    bl.max = with_body
        .iter()
        .map(|r| r.summary.body_length.max)
        .max()
        .unwrap_or(0);
    bl.varied = with_body
        .iter()
        .map(|r| {
            let b = &r.summary.body_length;
            if b.first == bl.first {
                b.varied
            } else {
                r.summary.responses
            }
        })
        .sum();
    h.intervals = intervals(&rs, &shifts)?;

    m.statuses = add_maps(rs.iter().map(|r| &r.statuses));
    m.outcomes = add_maps(rs.iter().map(|r| &r.outcomes));
    m.error_details = add_maps(rs.iter().map(|r| &r.error_details));
    m.lenient = add_maps(rs.iter().map(|r| &r.lenient));
    m.cookies_dropped = sum(&|r| r.cookies_dropped);

    let c = &mut m.client;
    c.threads = rs.iter().map(|r| r.client.threads).sum();
    c.cpu_s = rs.iter().map(|r| r.client.cpu_s).sum();
    c.busiest_thread = rs
        .iter()
        .map(|r| r.client.busiest_thread)
        .fold(0.0, f64::max);
    c.saturated = rs.iter().any(|r| r.client.saturated);
    // Every shard's count, or none: a partial sum would mislead.
    c.wakeups = rs.iter().map(|r| r.client.wakeups).sum();
    c.socket_reads = rs.iter().map(|r| r.client.socket_reads).sum();
    c.socket_writes = rs.iter().map(|r| r.client.socket_writes).sum();
    m.server_software = rs.iter().find_map(|r| r.server_software.clone());
    if let Some(t) = &mut m.tls {
        t.resumed_handshakes = rs
            .iter()
            .filter_map(|r| r.tls.as_ref())
            .map(|t| t.resumed_handshakes)
            .sum();
        t.full_handshakes = rs
            .iter()
            .filter_map(|r| r.tls.as_ref())
            .map(|t| t.full_handshakes)
            .sum();
        t.verified = rs.iter().all(|r| r.tls.as_ref().is_none_or(|t| t.verified));
    }
    if let Some(h2) = &mut m.http2 {
        h2.goaways = rs
            .iter()
            .filter_map(|r| r.http2.as_ref())
            .map(|h| h.goaways)
            .sum();
        h2.server_max_streams = rs
            .iter()
            .filter_map(|r| r.http2.as_ref().and_then(|h| h.server_max_streams))
            .min();
    }
    m.steps = steps(&rs)?;
    m.checks = checks(&rs);
    m.markers = rs
        .iter()
        .zip(&shifts)
        .flat_map(|(r, sh)| {
            let who = r
                .shard
                .as_ref()
                .map(|s| s.to_string_short())
                .unwrap_or_default();
            r.markers.iter().map(move |k| stats::Marker {
                at_s: k.at_s + sh / 1e3,
                note: format!("shard {who}: {}", k.note),
            })
        })
        .collect();
    m.series = series(&rs, &shifts, &m.histograms.intervals)?;
    m.shortfall = shortfall(&rs);
    // Judged again on the whole: one shard alone may keep up with its part.
    m.behind = stats::behind::of(
        &m.plan,
        &m.series,
        m.summary.cancelled,
        m.summary.dropped,
        m.steering.is_some(),
    );
    m.warnings = warnings(&rs, &m);
    Ok(m)
}

/// Count, min, max, mean and standard deviation of several distributions
/// together (exact); no percentiles.
fn combine_moments<'a>(ds: impl Iterator<Item = Option<&'a Distribution>>) -> Option<Distribution> {
    let ds: Vec<Option<&Distribution>> = ds.collect();
    if ds.iter().any(|d| d.is_none()) {
        return None;
    }
    let ds: Vec<&Distribution> = ds.into_iter().flatten().filter(|d| d.count > 0).collect();
    let n: u64 = ds.iter().map(|d| d.count).sum();
    if n == 0 {
        return Some(Distribution::default());
    }
    let mean = ds.iter().map(|d| d.mean_us * d.count as f64).sum::<f64>() / n as f64;
    let second = ds
        .iter()
        .map(|d| (d.stdev_us.powi(2) + d.mean_us.powi(2)) * d.count as f64)
        .sum::<f64>()
        / n as f64;
    Some(Distribution {
        count: n,
        min_us: ds.iter().map(|d| d.min_us).fold(f64::INFINITY, f64::min),
        mean_us: mean,
        stdev_us: (second - mean * mean).max(0.0).sqrt(),
        max_us: ds.iter().map(|d| d.max_us).fold(0.0, f64::max),
        percentiles: Vec::new(),
    })
}

fn add_maps<'a, K: Ord + Clone + 'a>(
    maps: impl Iterator<Item = &'a BTreeMap<K, u64>>,
) -> BTreeMap<K, u64> {
    let mut out = BTreeMap::new();
    for m in maps {
        for (k, v) in m {
            *out.entry(k.clone()).or_insert(0) += v;
        }
    }
    out
}

/// Steps by name, in the first shard's order; histograms added.
fn steps(rs: &[&RunResult]) -> Result<Vec<StepResult>, String> {
    let mut out: Vec<StepResult> = Vec::new();
    for (i, base) in rs[0].steps.iter().enumerate() {
        let same: Vec<&StepResult> = rs
            .iter()
            .filter_map(|r| r.steps.get(i).filter(|s| s.name == base.name))
            .collect();
        let mut s = base.clone();
        s.requests = same.iter().map(|x| x.requests).sum();
        s.responses = same.iter().map(|x| x.responses).sum();
        s.errors = same.iter().map(|x| x.errors).sum();
        s.non_2xx = same.iter().map(|x| x.non_2xx).sum();
        s.outcomes = add_maps(same.iter().map(|x| &x.outcomes));
        if let Some((enc, d)) = merged_hist(same.iter().map(|x| x.histogram.as_str()))? {
            s.histogram = enc;
            s.latency = d;
        }
        out.push(s);
    }
    Ok(out)
}

/// Checks by (step, name), in order of first appearance.
fn checks(rs: &[&RunResult]) -> Vec<CheckResult> {
    let mut out: Vec<CheckResult> = Vec::new();
    for r in rs {
        for c in &r.checks {
            match out
                .iter_mut()
                .find(|o| o.step == c.step && o.name == c.name)
            {
                Some(o) => {
                    o.passed += c.passed;
                    o.failed += c.failed;
                }
                None => out.push(c.clone()),
            }
        }
    }
    out
}

/// Whole intervals a shard's start shift moves it by.
fn interval_shift(shift_ms: f64) -> usize {
    (shift_ms / 1e3 / INTERVAL_S as f64).round() as usize
}

/// The interval histograms added interval by interval on the common start.
fn intervals(rs: &[&RunResult], shifts: &[f64]) -> Result<Vec<IntervalHistogram>, String> {
    let mut slots: Vec<Option<Histogram<u64>>> = Vec::new();
    let mut lengths: Vec<f64> = Vec::new();
    for (r, sh) in rs.iter().zip(shifts) {
        let off = interval_shift(*sh);
        for (j, iv) in r.histograms.intervals.iter().enumerate() {
            let at = off + j;
            if slots.len() <= at {
                slots.resize(at + 1, None);
                lengths.resize(at + 1, 0.0);
            }
            let h = decode(&iv.latency)?;
            match &mut slots[at] {
                Some(s) => s
                    .add(&h)
                    .map_err(|e| format!("intervals do not add: {e:?}"))?,
                None => slots[at] = Some(h),
            }
            lengths[at] = lengths[at].max(iv.length_s);
        }
    }
    Ok(slots
        .into_iter()
        .enumerate()
        .map(|(j, h)| IntervalHistogram {
            start_s: (j as u64 * INTERVAL_S) as f64,
            length_s: if lengths[j] > 0.0 {
                lengths[j]
            } else {
                INTERVAL_S as f64
            },
            latency: encode(&h.unwrap_or_else(stats::hist::new_coarse_hist)),
        })
        .collect())
}

/// The per-second series on the common start: counters and levels add, the
/// max is the max, the mean is weighted by responses, and p50/p90/p99 are
/// those of the merged interval the second falls in (never above the
/// second's own max); lag p99 has no histogram to merge and is left out.
fn series(
    rs: &[&RunResult],
    shifts: &[f64],
    intervals: &[IntervalHistogram],
) -> Result<Vec<SecondRow>, String> {
    let mut rows: BTreeMap<u64, SecondRow> = BTreeMap::new();
    let mut weighted: BTreeMap<u64, f64> = BTreeMap::new();
    for (r, sh) in rs.iter().zip(shifts) {
        let off = (sh / 1e3).round() as u64;
        for row in &r.series {
            let sec = row.second + off;
            *weighted.entry(sec).or_insert(0.0) += row.latency_mean_us * row.responses as f64;
            match rows.get_mut(&sec) {
                None => {
                    let mut x = row.clone();
                    x.second = sec;
                    x.lag_p99_us = None;
                    rows.insert(sec, x);
                }
                Some(x) => {
                    x.length_s = x.length_s.max(row.length_s);
                    x.responses += row.responses;
                    x.errors += row.errors;
                    x.cancelled += row.cancelled;
                    x.dropped += row.dropped;
                    x.non_2xx += row.non_2xx;
                    x.bytes_in += row.bytes_in;
                    x.bytes_out += row.bytes_out;
                    x.latency_max_us = x.latency_max_us.max(row.latency_max_us);
                    x.status_1xx += row.status_1xx;
                    x.status_2xx += row.status_2xx;
                    x.status_3xx += row.status_3xx;
                    x.status_4xx += row.status_4xx;
                    x.status_5xx += row.status_5xx;
                    for (k, v) in &row.failures {
                        *x.failures.entry(*k).or_insert(0) += v;
                    }
                    x.connects += row.connects;
                    x.in_flight += row.in_flight;
                    x.users = match (x.users, row.users) {
                        (Some(a), Some(b)) => Some(a + b),
                        (a, b) => a.or(b),
                    };
                    x.client_cpu_s += row.client_cpu_s;
                    x.lag_max_us = match (x.lag_max_us, row.lag_max_us) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    };
                }
            }
        }
    }
    let last = rows.keys().next_back().copied();
    let mut out = Vec::with_capacity(rows.len());
    let decoded: Vec<Histogram<u64>> = intervals
        .iter()
        .map(|iv| decode(&iv.latency))
        .collect::<Result<_, _>>()?;
    for sec in 0..=last.unwrap_or(0) {
        if last.is_none() {
            break;
        }
        let mut x = rows.remove(&sec).unwrap_or_else(|| empty_row(sec));
        x.latency_mean_us = if x.responses > 0 {
            weighted.get(&sec).copied().unwrap_or(0.0) / x.responses as f64
        } else {
            0.0
        };
        let iv = decoded.get((sec / INTERVAL_S) as usize);
        let q = |p: f64| match iv {
            Some(h) if x.responses > 0 && !h.is_empty() => {
                (h.value_at_quantile(p) as f64).min(x.latency_max_us)
            }
            _ => 0.0,
        };
        (x.latency_p50_us, x.latency_p90_us, x.latency_p99_us) = (q(0.5), q(0.9), q(0.99));
        x.in_flight = (x.in_flight * 100.0).round() / 100.0;
        x.users = x.users.map(|u| (u * 100.0).round() / 100.0);
        x.client_cpu_s = (x.client_cpu_s * 1e6).round() / 1e6;
        out.push(x);
    }
    Ok(out)
}

fn empty_row(second: u64) -> SecondRow {
    SecondRow {
        second,
        length_s: 1.0,
        responses: 0,
        errors: 0,
        cancelled: 0,
        dropped: 0,
        non_2xx: 0,
        bytes_in: 0,
        bytes_out: 0,
        latency_mean_us: 0.0,
        latency_p50_us: 0.0,
        latency_p90_us: 0.0,
        latency_p99_us: 0.0,
        latency_max_us: 0.0,
        status_1xx: 0,
        status_2xx: 0,
        status_3xx: 0,
        status_4xx: 0,
        status_5xx: 0,
        failures: BTreeMap::new(),
        connects: 0,
        in_flight: 0.0,
        users: None,
        client_cpu_s: 0.0,
        lag_p99_us: None,
        lag_max_us: None,
    }
}

/// The shards' shortfalls added; the cause of the largest.
fn shortfall(rs: &[&RunResult]) -> Option<Shortfall> {
    let all: Vec<(&RunResult, &Shortfall)> = rs
        .iter()
        .filter_map(|r| r.shortfall.as_ref().map(|s| (*r, s)))
        .collect();
    let (worst_r, worst) = all.iter().max_by_key(|(_, s)| s.dropped + s.late)?;
    let who: Vec<String> = all
        .iter()
        .map(|(r, _)| {
            r.shard
                .as_ref()
                .map(|s| s.to_string_short())
                .unwrap_or_default()
        })
        .collect();
    let mut s = (*worst).clone();
    s.due = all.iter().map(|(_, s)| s.due).sum();
    s.sent = all.iter().map(|(_, s)| s.sent).sum();
    s.dropped = all.iter().map(|(_, s)| s.dropped).sum();
    s.late = all.iter().map(|(_, s)| s.late).sum();
    let _ = worst_r;
    s.message = if s.iterations {
        format!(
            "the load fell short on shard(s) {}: {} of {} iterations due were missed, over all \
             shards; on the worst: {}",
            who.join(", "),
            s.dropped,
            s.due,
            worst.message
        )
    } else {
        format!(
            "the load fell short on shard(s) {}: {} of {} requests due were dropped and {} sent \
             late, over all shards; on the worst: {}",
            who.join(", "),
            s.dropped,
            s.due,
            s.late,
            worst.message
        )
    };
    Some(s)
}

/// Validity warnings on the merged result: saturation judged on the whole
/// (any shard saturated flags the run), the shortfall summed, and every
/// other shard warning once (prefixed with its shards when not all had it).
fn warnings(rs: &[&RunResult], m: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(s) = &m.shortfall {
        out.push(s.message.clone());
    }
    if let Some(b) = &m.behind {
        out.push(b.message.clone());
    }
    let saturated: Vec<String> = rs
        .iter()
        .filter(|r| r.client.saturated)
        .map(|r| {
            format!(
                "{} ({:.0}%)",
                r.shard
                    .as_ref()
                    .map(|s| s.to_string_short())
                    .unwrap_or_default(),
                r.client.busiest_thread * 100.0
            )
        })
        .collect();
    if !saturated.is_empty() {
        out.push(format!(
            "the load generator was saturated on shard(s) {}: a saturated shard may have \
             limited the rate, so the merged run measured the clients as much as the server; \
             add threads or shards",
            saturated.join(", ")
        ));
    }
    // The rest once each, skipping what was judged again above.
    let mut by_text: Vec<(String, Vec<String>)> = Vec::new();
    for r in rs {
        let who = r
            .shard
            .as_ref()
            .map(|s| s.to_string_short())
            .unwrap_or_default();
        let skip: Vec<&str> = r
            .shortfall
            .as_ref()
            .map(|s| s.message.as_str())
            .into_iter()
            .chain(r.behind.as_ref().map(|b| b.message.as_str()))
            .collect();
        for w in &r.warnings {
            if skip.contains(&w.as_str()) || w.starts_with("the load generator was saturated") {
                continue;
            }
            match by_text.iter_mut().find(|(t, _)| t == w) {
                Some((_, v)) => v.push(who.clone()),
                None => by_text.push((w.clone(), vec![who.clone()])),
            }
        }
    }
    for (w, who) in by_text {
        if who.len() == rs.len() {
            out.push(w);
        } else {
            out.push(format!("shard(s) {}: {w}", who.join(", ")));
        }
    }
    out
}

/// The shards' thresholds (the union, by expression and step), evaluated
/// on the merged result.
pub(crate) fn thresholds(shards: &[Input], merged: &RunResult) -> Vec<ThresholdResult> {
    let mut seen: Vec<(String, Option<String>)> = Vec::new();
    for i in shards {
        for t in &i.result.thresholds {
            let key = (t.expr.clone(), t.step.clone());
            if !seen.contains(&key) {
                seen.push(key);
            }
        }
    }
    seen.into_iter()
        .filter_map(|(expr, step)| Threshold::parse(&expr, step.as_deref()).ok())
        .map(|t| t.evaluate(merged))
        .collect()
}
