//! The merge against one process on the same samples: identical
//! histograms, counts and interval histograms; and the verdicts.

use super::*;
use plan::{Load, Plan, RateStage, Shard, Stop, Target};
use sample::Outcome;
use stats::hist::{decode, new_coarse_hist, record_ns};
use stats::shard::{ClockStatus, ClockSync, ShardInfo, StartStatus};
use stats::{EndReason, Environment, RunFacts, SecondAcc, Series, Totals};
use std::time::Duration;

fn plan() -> Plan {
    Plan::get(
        Target::parse("http://127.0.0.1:8080/").unwrap(),
        Load::Open {
            stages: vec![RateStage {
                duration: Duration::from_secs(12),
                from: 100.0,
                to: 100.0,
            }],
            max_inflight: 30,
            late: Default::default(),
        },
        Stop {
            requests: None,
            duration: Some(Duration::from_secs(12)),
        },
    )
}

/// A deterministic stream of (request k, second, latency µs, status).
fn samples() -> Vec<(u64, u64, u64, u16)> {
    samples_from(0x2545_F491_4F6C_DD1D, 1800, 97)
}

/// A stream from `seed` (non-zero): latencies 200 µs + up to `spread` µs,
/// one in `tail` 50 ms slower; now and then a 503.
fn samples_from(seed: u64, spread: u64, tail: u64) -> Vec<(u64, u64, u64, u16)> {
    let mut x: u64 = seed;
    (0..1200u64)
        .map(|k| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Heavy-tailed: mostly 200 µs – 2 ms, now and then 50 ms.
            let lat = 200 + x % spread + if x.is_multiple_of(tail) { 50_000 } else { 0 };
            let status = if x.is_multiple_of(31) { 503 } else { 200 };
            (k, k / 100, lat, status)
        })
        .collect()
}

/// The result of one process that saw `mine` of the samples.
fn result_of(p: &Plan, mine: &[(u64, u64, u64, u16)]) -> RunResult {
    let mut t = Totals::default();
    let mut series = Series::new(1);
    let mut by_sec: BTreeMap<u64, SecondAcc> = BTreeMap::new();
    for &(_, sec, lat, status) in mine {
        for h in [
            &mut t.latency,
            &mut t.service,
            &mut t.wait,
            &mut t.processing,
        ] {
            record_ns(h, lat * 1000);
        }
        record_ns(&mut t.connect, 0);
        record_ns(&mut t.lag, (lat / 10) * 1000);
        t.outcomes[Outcome::Response as usize] += 1;
        t.statuses[status as usize] += 1;
        t.bytes_in += 100;
        let a = by_sec
            .entry(sec)
            .or_insert_with(|| SecondAcc::new(new_coarse_hist()));
        a.responses += 1;
        a.hist.record(lat).unwrap();
    }
    for (sec, acc) in by_sec {
        series.submit(0, sec, acc, sec + 1);
    }
    let (rows, intervals) = series.finish(12_000_000_000);
    RunResult::build(
        &t,
        rows,
        RunFacts {
            plan: p.clone(),
            environment: Environment {
                hostname: "h".into(),
                cpus: 2,
                cpus_allowed: 2,
                ..Default::default()
            },
            started_at: "2026-12-01T10:00:00Z".into(),
            duration_ns: 12_000_000_000,
            reason: EndReason::Duration,
            cpu_ns: 1_000_000,
            busiest_thread: 0.1,
            threads: 1,
            connections_opened: 3,
            not_yet_due: Some(0),
            visits: None,
            paced: None,
            steering: None,
            server_software: None,
            step_names: Vec::new(),
            tls: None,
            http2: None,
            checks: Vec::new(),
            intervals,
        },
        &plan::Keys,
    )
}

/// Shard `i` of `n`: the samples it owns (k ≡ i mod n), stamped.
fn shard(i: u64, n: u64, run_id: &str) -> Input {
    shard_of(i, n, run_id, &samples())
}

fn shard_of(i: u64, n: u64, run_id: &str, all: &[(u64, u64, u64, u16)]) -> Input {
    let mut p = plan();
    p.shard = Some(Shard::new(i, n).unwrap());
    let mine: Vec<_> = all.iter().copied().filter(|s| s.0 % n == i).collect();
    let mut r = result_of(&p, &mine);
    r.shard = Some(ShardInfo {
        run_id: run_id.into(),
        plan_hash: plan_hash(&p),
        index: i,
        count: n,
        start_at: Some("2026-12-01T10:00:00Z".into()),
        start_offset_ms: Some(0.2 * i as f64),
        start_tolerance_ms: Some(1000.0),
        start: StartStatus::OnTime,
        clock: ClockSync {
            status: ClockStatus::Synchronized,
            max_error_ms: Some(1.0 + i as f64),
            est_error_ms: Some(0.1),
        },
        expected_requests: p.planned(),
        sent_requests: r.summary.requests + r.summary.dropped,
        connections: p.shard_connections(),
    });
    Input {
        result: r,
        source: format!("s{i}.json"),
    }
}

#[test]
fn the_merge_is_the_single_process_run() {
    let whole = result_of(&plan(), &samples());
    for n in [1u64, 2, 3, 5] {
        let shards: Vec<Input> = (0..n).map(|i| shard(i, n, "r")).collect();
        let m = merge(shards, n, None, &[]).unwrap();
        assert!(m.complete(), "{n}: {:?}", m.result.merge);
        let r = &m.result;
        // Histograms: identical to one process's, so every percentile is.
        for (a, b) in [
            (&r.histograms.latency, &whole.histograms.latency),
            (&r.histograms.wait, &whole.histograms.wait),
            (
                r.histograms.lag.as_ref().unwrap(),
                whole.histograms.lag.as_ref().unwrap(),
            ),
        ] {
            assert_eq!(decode(a).unwrap(), decode(b).unwrap(), "{n} shards");
        }
        assert_eq!(r.summary.latency, whole.summary.latency);
        assert_eq!(r.summary.lag, whole.summary.lag);
        assert_eq!(r.summary.service, whole.summary.service);
        assert_eq!(r.statuses, whole.statuses);
        assert_eq!(r.summary.responses, 1200);
        assert_eq!(r.summary.planned, Some(1200));
        // The intervals too, and the series' counts second by second.
        assert_eq!(
            r.histograms.intervals.len(),
            whole.histograms.intervals.len()
        );
        for (a, b) in r
            .histograms
            .intervals
            .iter()
            .zip(&whole.histograms.intervals)
        {
            assert_eq!(decode(&a.latency).unwrap(), decode(&b.latency).unwrap());
            assert_eq!((a.start_s, a.length_s), (b.start_s, b.length_s));
        }
        assert_eq!(r.series.len(), whole.series.len());
        for (a, b) in r.series.iter().zip(&whole.series) {
            assert_eq!(a.responses, b.responses);
            assert_eq!(a.latency_max_us, b.latency_max_us);
            assert!((a.latency_mean_us - b.latency_mean_us).abs() < 1e-6);
            // Percentiles: those of the merged interval, never above the max.
            let iv = decode(&r.histograms.intervals[(a.second / 5) as usize].latency).unwrap();
            let p99 = (iv.value_at_quantile(0.99) as f64).min(a.latency_max_us);
            assert_eq!(a.latency_p99_us, p99);
        }
        let info = r.merge.as_ref().unwrap();
        assert_eq!(info.shards.len() as u64, n);
        assert_eq!(info.clock_max_error_ms, Some(n as f64));
        assert!((info.start_spread_ms.unwrap() - 0.2 * (n - 1) as f64).abs() < 1e-9);
        assert!(r.plan.shard.is_none() && r.shard.is_none());
    }
}

/// The property over many streams and shard counts (the same check as
/// above, with the data and N varied): whatever the samples and however
/// many shards, the merged histograms, distributions, statuses and
/// interval histograms are the single process's.
#[test]
fn the_merge_is_the_single_process_run_for_any_samples_and_shards() {
    for case in 1..=32u64 {
        let seed = case.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let all = samples_from(seed, 100 + case * 977, 7 + case % 200);
        let whole = result_of(&plan(), &all);
        let n = 1 + case % 9;
        let shards: Vec<Input> = (0..n).map(|i| shard_of(i, n, "p", &all)).collect();
        let m = merge(shards, n, None, &[]).unwrap();
        assert!(
            m.complete(),
            "case {case}, {n} shards: {:?}",
            m.result.merge
        );
        let r = &m.result;
        for (a, b) in [
            (&r.histograms.latency, &whole.histograms.latency),
            (
                r.histograms.service.as_ref().unwrap(),
                whole.histograms.service.as_ref().unwrap(),
            ),
            (
                r.histograms.lag.as_ref().unwrap(),
                whole.histograms.lag.as_ref().unwrap(),
            ),
        ] {
            assert_eq!(
                decode(a).unwrap(),
                decode(b).unwrap(),
                "case {case}, {n} shards"
            );
        }
        assert_eq!(r.summary.latency, whole.summary.latency, "case {case}");
        assert_eq!(r.summary.lag, whole.summary.lag, "case {case}");
        assert_eq!(r.statuses, whole.statuses, "case {case}");
        assert_eq!(r.summary.responses, 1200);
        assert_eq!(
            r.histograms.intervals.len(),
            whole.histograms.intervals.len()
        );
        for (a, b) in r
            .histograms
            .intervals
            .iter()
            .zip(&whole.histograms.intervals)
        {
            assert_eq!(decode(&a.latency).unwrap(), decode(&b.latency).unwrap());
        }
    }
}

#[test]
fn averaging_percentiles_would_have_been_wrong() {
    // The point of merging histograms: shard 0 holds the slow tail.
    let shards: Vec<Input> = (0..2).map(|i| shard(i, 2, "r")).collect();
    let avg = shards
        .iter()
        .map(|s| s.result.summary.latency.at(99.9).unwrap())
        .sum::<f64>()
        / 2.0;
    let m = merge(shards, 2, None, &[]).unwrap();
    let whole = result_of(&plan(), &samples());
    assert_eq!(
        m.result.summary.latency.at(99.9),
        whole.summary.latency.at(99.9)
    );
    assert_ne!(Some(avg), whole.summary.latency.at(99.9));
}

#[test]
fn a_missing_or_short_shard_makes_it_incomplete() {
    let shards: Vec<Input> = [0, 2].iter().map(|&i| shard(i, 3, "r")).collect();
    let m = merge(shards, 3, None, &[]).unwrap();
    assert!(!m.complete());
    assert!(m.result.end.partial);
    let reasons = &m.result.merge.as_ref().unwrap().reasons;
    assert!(reasons[0].contains("1/3 missing"), "{reasons:?}");
    assert!(m.result.warnings[0].starts_with("incomplete merge:"));

    // A shard that sent fewer than its plan holds.
    let mut s = vec![shard(0, 2, "r"), shard(1, 2, "r")];
    s[1].result.shard.as_mut().unwrap().sent_requests -= 7;
    let m = merge(s, 2, None, &[]).unwrap();
    let reasons = &m.result.merge.as_ref().unwrap().reasons;
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("shard 1/2 sent 593 of the 600")),
        "{reasons:?}"
    );

    // A partial shard, and damage found while reading.
    let mut s = vec![shard(0, 2, "r"), shard(1, 2, "r")];
    s[0].result.end.partial = true;
    s[0].result.end.reason = EndReason::Terminated;
    let m = merge(
        s,
        2,
        None,
        &["log:3: part 2/4 of shard 1/2 fails its crc32".into()],
    )
    .unwrap();
    let reasons = &m.result.merge.as_ref().unwrap().reasons;
    assert!(reasons.iter().any(|r| r.contains("crc32")), "{reasons:?}");
    assert!(
        reasons.iter().any(|r| r.contains("terminated")),
        "{reasons:?}"
    );
    assert_eq!(m.result.end.reason, EndReason::Terminated);
}

#[test]
fn mixed_runs_and_plans_are_refused() {
    let e = merge(vec![shard(0, 2, "a"), shard(1, 2, "b")], 2, None, &[]).unwrap_err();
    assert!(e.to_string().contains("shards of 2 runs ('a', 'b')"), "{e}");
    // --run-id picks one (then the other's shard is missing).
    let m = merge(vec![shard(0, 2, "a"), shard(1, 2, "b")], 2, Some("a"), &[]).unwrap();
    assert!(!m.complete());
    let mut other = shard(1, 2, "a");
    other.result.shard.as_mut().unwrap().plan_hash = "sha256:ffff".into();
    let e = merge(vec![shard(0, 2, "a"), other], 2, None, &[]).unwrap_err();
    assert!(e.to_string().contains("different plans"), "{e}");
    let e = merge(vec![shard(0, 2, "a")], 3, None, &[]).unwrap_err();
    assert!(e.to_string().contains("--expect-shards is 3"), "{e}");
    let mut plain = shard(0, 1, "a");
    plain.result.shard = None;
    let e = merge(vec![plain], 1, None, &[]).unwrap_err();
    assert!(e.to_string().contains("not a shard's result"), "{e}");
}

#[test]
fn settings_must_match_and_saturation_flags_the_run() {
    let mut s = vec![shard(0, 2, "r"), shard(1, 2, "r")];
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 2).unwrap();
    h.record(100).unwrap();
    s[1].result.histograms.latency = stats::hist::encode(&h);
    let m = merge(s, 2, None, &[]);
    // Different settings do not add: refused or incomplete, never silently wrong.
    match m {
        Ok(m) => {
            let reasons = &m.result.merge.as_ref().unwrap().reasons;
            assert!(
                reasons.iter().any(|r| r.contains("different settings")),
                "{reasons:?}"
            );
        }
        Err(e) => assert!(e.to_string().contains("do not add"), "{e}"),
    }
    let mut s = vec![shard(0, 2, "r"), shard(1, 2, "r")];
    s[1].result.client.saturated = true;
    s[1].result.client.busiest_thread = 0.97;
    let m = merge(s, 2, None, &[]).unwrap();
    assert!(m.result.client.saturated);
    assert!(m
        .result
        .warnings
        .iter()
        .any(|w| w.contains("saturated on shard(s) 1/2 (97%)")));
}

#[test]
fn thresholds_are_judged_on_the_merged_result() {
    let mut s: Vec<Input> = (0..2).map(|i| shard(i, 2, "r")).collect();
    let whole = result_of(&plan(), &samples());
    let p999 = whole.summary.latency.at(99.9).unwrap();
    // Each shard alone may pass or fail; the merged verdict is the whole's.
    for i in &mut s {
        let t = Threshold::parse(&format!("p99.9<{}us", p999 + 1.0), None).unwrap();
        i.result.thresholds = vec![t.evaluate(&i.result)];
    }
    let m = merge(s, 2, None, &[]).unwrap();
    assert_eq!(m.result.thresholds.len(), 1);
    assert!(m.result.thresholds[0].passed);
    assert_eq!(m.result.thresholds[0].actual, p999 / 1000.0);
}

use stats::threshold::Threshold;

#[test]
fn unsynchronized_clocks_on_several_hosts_are_named() {
    let mut s: Vec<Input> = (0..2).map(|i| shard(i, 2, "r")).collect();
    s[1].result.environment.hostname = "other".into();
    s[1].result.shard.as_mut().unwrap().clock.status = ClockStatus::Unsynchronized;
    let m = merge(s, 2, None, &[]).unwrap();
    assert!(m.complete());
    assert!(m
        .result
        .warnings
        .iter()
        .any(|w| w.contains("clocks of shard(s) 1/2 were not synchronized")));
    assert_eq!(m.result.environment.hostname, "h, other");
    // On one host they share one clock: nothing to say.
    let mut s: Vec<Input> = (0..2).map(|i| shard(i, 2, "r")).collect();
    s[1].result.shard.as_mut().unwrap().clock.status = ClockStatus::Unsynchronized;
    let m = merge(s, 2, None, &[]).unwrap();
    assert!(!m.result.warnings.iter().any(|w| w.contains("synchronized")));
}
