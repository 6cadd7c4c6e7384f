//! From an experiment's results to what they say: per point, medians with
//! exact confidence intervals over repetitions (never over seconds: one
//! run's seconds are not independent); outlying and drifting runs flagged;
//! each target compared with the baseline at each point (Mann-Whitney U,
//! bootstrap interval of the change, Holm over the experiment); and along a
//! concurrency sweep, the Universal Scalability Law and the knee.

use crate::experiment::Point;
use crate::state::{State, Status};
use crate::stats;
use serde::Serialize;
use yace_stats::RunResult;

/// Confidence level of every interval.
pub const LEVEL: f64 = 0.95;
/// A repetition is flagged as an outlier only this far from the median too.
pub const OUTLIER_MIN_DEVIATION: f64 = 0.05;
/// Repetitions needed for an exact 95% interval of a median.
pub const MIN_RUNS_FOR_CI: usize = 6;

/// One run's figures: the unit of evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunFigures {
    /// Block (repetition), from 1.
    pub rep: u32,
    /// Responses per second over the steady window: the run without its
    /// first and last second.
    pub rps: f64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub p999_ms: Option<f64>,
    pub errors_pct: f64,
    /// Server CPU-ms per request, where monitored.
    pub server_cpu_ms: Option<f64>,
    /// The server's mean CPU busy, % of all its CPUs, where monitored.
    #[serde(default)]
    pub server_cpu_pct: Option<f64>,
    /// The highest 1-minute load average per CPU, where monitored.
    #[serde(default)]
    pub load_per_cpu: Option<f64>,
    /// The most workers busy at once (php-fpm active processes, Apache busy
    /// workers), where a status page was monitored.
    #[serde(default)]
    pub workers_busy: Option<f64>,
    /// The client was the limit: the run measures yace, not the server.
    pub saturated: bool,
    /// The server fell behind the open model's rate (`behind` in the
    /// result): its throughput is its capacity, and its latency grew with
    /// the run's length, not the load.
    #[serde(default)]
    pub behind: bool,
    /// Throughput trended inside the run (the server warming up, a cache
    /// filling, something else on the machine).
    pub drifted: bool,
    pub responses: u64,
    /// Responses in each full second of the steady window (for a
    /// within-run interval when there is only one run).
    #[serde(skip)]
    pub per_second: Vec<f64>,
    /// p99 in ms with a block-bootstrap interval over the run's 5-second
    /// latency intervals (within this run only); `None` under 8 intervals.
    #[serde(skip)]
    pub p99_within: Option<(f64, f64, f64)>,
    /// The run's latency histogram (µs), for the point's pooled tail.
    #[serde(skip)]
    pub latency: Option<hdrhistogram::Histogram<u64>>,
}

impl RunFigures {
    /// A find-max search's answer (`yace.find-max.v1`): the highest rate
    /// that held the SLOs stands for throughput, with the p99 there.
    pub fn of_search(rep: u32, doc: &serde_json::Value) -> Result<RunFigures, String> {
        let answer = &doc["answer"];
        let rate = answer["max_rate"]
            .as_f64()
            .ok_or("the search found no rate that held the SLOs")?;
        let p99 = doc["figures"].as_array().and_then(|fs| {
            fs.iter()
                .rev()
                .find(|f| f["rate"].as_f64() == Some(rate))
                .and_then(|f| f["p99_ms"].as_f64())
        });
        Ok(RunFigures {
            rep,
            rps: rate,
            p50_ms: None,
            p99_ms: p99,
            p999_ms: None,
            errors_pct: 0.0,
            server_cpu_ms: None,
            server_cpu_pct: None,
            load_per_cpu: None,
            workers_busy: None,
            saturated: answer["end"] == "client_bound",
            behind: false,
            drifted: false,
            responses: 0,
            per_second: Vec::new(),
            p99_within: None,
            latency: None,
        })
    }

    pub fn of(rep: u32, r: &RunResult) -> RunFigures {
        let rows = &r.series;
        let steady: &[yace_stats::SecondRow] = if rows.len() >= 4 {
            &rows[1..rows.len() - 1]
        } else {
            rows
        };
        let secs: f64 = steady.iter().map(|s| s.length_s).sum();
        let rps = if secs > 0.0 {
            steady.iter().map(|s| s.responses).sum::<u64>() as f64 / secs
        } else {
            r.summary.rps
        };
        let per_second: Vec<f64> = steady
            .iter()
            .filter(|s| s.length_s >= 0.999)
            .map(|s| s.responses as f64)
            .collect();
        // Every run's percentile, however few its responses: the point's
        // pooled tail (`PointStats::p99_tail`) says how sure it is.
        let pct = |q: f64| r.summary.latency.at(q * 100.0).map(|us| us / 1000.0);
        let finished = (r.summary.responses + r.summary.errors).max(1) as f64;
        RunFigures {
            rep,
            rps,
            p50_ms: r.summary.latency.at(50.0).map(|us| us / 1000.0),
            p99_ms: pct(0.99),
            p999_ms: pct(0.999),
            errors_pct: r.summary.errors as f64 * 100.0 / finished,
            server_cpu_ms: r.monitor.as_ref().and_then(|m| m.server.cpu_ms_per_request),
            server_cpu_pct: r.monitor.as_ref().and_then(|m| m.server.cpu_mean_pct),
            load_per_cpu: r.monitor.as_ref().and_then(|m| m.server.load_per_cpu_max),
            workers_busy: r.monitor.as_ref().and_then(|m| m.server.workers_busy_max),
            saturated: r.client.saturated,
            behind: r.behind.is_some(),
            drifted: per_second.len() >= 8 && stats::drifts(&per_second, 0.01, 0.05),
            responses: r.summary.responses,
            per_second,
            p99_within: stats::decode_intervals(&r.histograms.intervals)
                .ok()
                .and_then(|ivs| stats::block_bootstrap_quantile_ci(&ivs, 0.99, LEVEL, 1000, 0x99))
                .map(|(m, lo, hi)| (m / 1000.0, lo / 1000.0, hi / 1000.0)),
            latency: yace_stats::hist::decode(&r.histograms.latency).ok(),
        }
    }
}

/// A figure over a point's repetitions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    pub median: f64,
    /// Exact 95% interval from order statistics; `None` with too few runs.
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    pub mean: f64,
    pub sd: f64,
    /// Runs it is over (drifting and client-bound runs left out).
    pub n: usize,
}

impl Figure {
    /// Over `xs` (one value per run); `None` without any.
    pub fn of(xs: &[f64]) -> Option<Figure> {
        if xs.is_empty() {
            return None;
        }
        let ci = stats::median_ci(xs, LEVEL);
        let (mean, sd) = stats::mean_sd(xs);
        Some(Figure {
            median: ci.median,
            lo: ci.lo,
            hi: ci.hi,
            mean,
            sd,
            n: xs.len(),
        })
    }
}

/// One target at one point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointStats {
    pub target: usize,
    pub point: usize,
    pub runs: Vec<RunFigures>,
    pub rps: Option<Figure>,
    pub p50_ms: Option<Figure>,
    pub p99_ms: Option<Figure>,
    pub p999_ms: Option<Figure>,
    pub errors_pct: Option<Figure>,
    pub server_cpu_ms: Option<Figure>,
    pub server_cpu_pct: Option<Figure>,
    pub load_per_cpu: Option<Figure>,
    pub workers_busy: Option<Figure>,
    /// p99 and p99.9 in ms of the valid runs' latency histograms merged
    /// (exact: HDR histograms add), each with its order-statistic 95%
    /// interval, whatever the count ([`stats::tail`]).
    #[serde(default)]
    pub p99_tail: Option<stats::Tail>,
    #[serde(default)]
    pub p999_tail: Option<stats::Tail>,
    /// Repetitions whose throughput lies far from the median (flagged, kept).
    pub outliers: Vec<u32>,
    /// Repetitions left out of the intervals: drifting or client-bound.
    pub left_out: Vec<u32>,
    /// Runs not done (skipped by a stop rule, failed).
    pub missing: usize,
}

/// One comparison of a target with the baseline at a point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub target: usize,
    /// The baseline's target and point (the same point unless the
    /// baseline is a level of a swept value).
    pub baseline: usize,
    #[serde(default)]
    pub baseline_point: usize,
    pub point: usize,
    /// `throughput` or `p99`.
    pub metric: String,
    /// median(target) / median(baseline) − 1.
    pub change: f64,
    pub ci: Option<(f64, f64)>,
    pub p: f64,
    /// Holm-adjusted over every comparison of the experiment.
    pub p_adjusted: f64,
    /// `better`, `worse`, `no_difference`, `too_few_runs`.
    pub verdict: String,
    pub words: String,
    pub n_target: usize,
    pub n_baseline: usize,
    /// Welch's test on logs and what the design could find
    /// (`stats::Small`); absent where a figure was 0.
    #[serde(default)]
    pub small: Option<stats::Small>,
}

/// A target's throughput along a concurrency sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepFit {
    pub target: usize,
    /// The swept parameter (`connections`, `users`).
    pub param: String,
    /// (N, median throughput) of the points used.
    pub points: Vec<(f64, f64)>,
    pub usl: Option<stats::Usl>,
    /// Where throughput stops growing (Kneedle).
    pub knee: Option<f64>,
    /// The latency percentile read for the knee: `p99` where every point's
    /// pooled responses put it within p98.5–p99.5 (`stats::samples_for`),
    /// else `p50`.
    pub latency_metric: String,
    /// (N, median latency in ms) of the points used.
    pub latency_points: Vec<(f64, f64)>,
    /// Where latency departs: the knee of the convex curve latency against
    /// N (Kneedle), read on log₂ N when the sweep is geometric.
    pub latency_knee: Option<f64>,
    /// Points left out (the client was the limit), as labels.
    pub excluded: Vec<String>,
}

/// Everything the experiment's results say.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Analysis {
    pub points: Vec<PointStats>,
    pub comparisons: Vec<Comparison>,
    pub sweeps: Vec<SweepFit>,
    /// Results that could not be read.
    pub problems: Vec<String>,
}

/// Reads each done run's result with `read` (a path relative to the
/// experiment's directory) and analyzes them.
pub fn analyze(state: &State, read: impl Fn(&str) -> Result<RunResult, String>) -> Analysis {
    analyze_with(state, |rel, rep| read(rel).map(|r| RunFigures::of(rep, &r)))
}

/// [`analyze`] with each run's figures from `figures(path, repetition)`
/// (a find-max experiment's runs are searches, not results).
pub fn analyze_with(
    state: &State,
    figures: impl Fn(&str, u32) -> Result<RunFigures, String>,
) -> Analysis {
    let mut problems = Vec::new();
    let mut points = Vec::new();
    for target in 0..state.targets.len() {
        for point in 0..state.points.len() {
            let mut runs = Vec::new();
            let mut missing = 0;
            for r in state
                .runs
                .iter()
                .filter(|r| r.target == target && r.point == point)
            {
                match (r.status, &r.result) {
                    (Status::Done, Some(rel)) => match figures(rel, r.block + 1) {
                        Ok(f) => runs.push(f),
                        Err(e) => {
                            problems.push(e);
                            missing += 1;
                        }
                    },
                    _ => missing += 1,
                }
            }
            runs.sort_by_key(|f| f.rep);
            points.push(point_stats(target, point, runs, missing));
        }
    }
    let comparisons = compare_all(state, &points);
    let sweeps = sweeps(state, &points);
    Analysis {
        points,
        comparisons,
        sweeps,
        problems,
    }
}

/// A point's figures over the runs that measure the server.
pub fn point_stats(
    target: usize,
    point: usize,
    runs: Vec<RunFigures>,
    missing: usize,
) -> PointStats {
    let valid: Vec<&RunFigures> = runs.iter().filter(|r| !r.drifted && !r.saturated).collect();
    let left_out = runs
        .iter()
        .filter(|r| r.drifted || r.saturated)
        .map(|r| r.rep)
        .collect();
    let col = |f: &dyn Fn(&RunFigures) -> Option<f64>| -> Vec<f64> {
        valid.iter().filter_map(|r| f(r)).collect()
    };
    let rps = col(&|r| Some(r.rps));
    // Far from the median in MAD units, and by enough to matter: with a
    // tiny spread, a run 1% off is not an outlier.
    let med = stats::median(&rps);
    let flagged: Vec<bool> = stats::outliers(&rps, 3.5)
        .into_iter()
        .zip(&rps)
        .map(|(f, x)| f && med > 0.0 && ((x - med) / med).abs() > OUTLIER_MIN_DEVIATION)
        .collect();
    let outliers = valid
        .iter()
        .zip(&flagged)
        .filter(|(_, f)| **f)
        .map(|(r, _)| r.rep)
        .collect();
    // A percentile counts only where every run had enough samples for it.
    let all_or_none = |v: Vec<f64>| {
        if v.len() == valid.len() {
            Figure::of(&v)
        } else {
            None
        }
    };
    let pooled = valid.iter().filter_map(|r| r.latency.as_ref()).try_fold(
        None::<hdrhistogram::Histogram<u64>>,
        |acc, h| match acc {
            None => Some(Some(h.clone())),
            Some(mut a) => a.add(h).ok().map(|_| Some(a)),
        },
    );
    let tail_ms = |q: f64| {
        let h = pooled.as_ref()?.as_ref()?;
        stats::tail(h, q, LEVEL).map(|t| stats::Tail {
            value: t.value / 1000.0,
            lo: t.lo.map(|x| x / 1000.0),
            hi: t.hi.map(|x| x / 1000.0),
            ..t
        })
    };
    PointStats {
        target,
        point,
        p99_tail: tail_ms(0.99),
        p999_tail: tail_ms(0.999),
        rps: Figure::of(&rps),
        p50_ms: Figure::of(&col(&|r| r.p50_ms)),
        p99_ms: all_or_none(col(&|r| r.p99_ms)),
        p999_ms: all_or_none(col(&|r| r.p999_ms)),
        errors_pct: Figure::of(&col(&|r| Some(r.errors_pct))),
        server_cpu_ms: all_or_none(col(&|r| r.server_cpu_ms)),
        server_cpu_pct: all_or_none(col(&|r| r.server_cpu_pct)),
        load_per_cpu: all_or_none(col(&|r| r.load_per_cpu)),
        workers_busy: all_or_none(col(&|r| r.workers_busy)),
        outliers,
        left_out,
        missing,
        runs,
    }
}

/// Each figure's values over a point's valid runs.
fn values(p: &PointStats, metric: &str) -> Vec<f64> {
    p.runs
        .iter()
        .filter(|r| !r.drifted && !r.saturated)
        .filter_map(|r| match metric {
            "throughput" => Some(r.rps),
            "p99" => r.p99_ms,
            "server CPU per request" => r.server_cpu_ms,
            _ => None,
        })
        .collect()
}

/// Two groups of runs compared on one metric, before Holm.
pub fn compare_groups(
    a: &[f64],
    b: &[f64],
    metric: &str,
    practical: f64,
    seed: u64,
) -> stats::Comparison {
    stats::compare(
        a,
        b,
        &stats::Compare {
            alpha: 0.05,
            practical,
            higher_is_better: metric == "throughput",
            level: LEVEL,
            seed,
        },
    )
}

fn compare_all(state: &State, points: &[PointStats]) -> Vec<Comparison> {
    let mut typed = Vec::new();
    let mut rows = Vec::new();
    for p in points {
        let Some((bt, bp)) = state.counterpart(p.target, p.point) else {
            continue;
        };
        let Some(b) = points.iter().find(|q| q.target == bt && q.point == bp) else {
            continue;
        };
        for metric in ["throughput", "p99", "server CPU per request"] {
            let (xa, xb) = (values(b, metric), values(p, metric));
            if xa.is_empty() || xb.is_empty() {
                continue;
            }
            let c = compare_groups(
                &xa,
                &xb,
                metric,
                state.practical,
                state.seed ^ (rows.len() as u64),
            );
            typed.push(c);
            rows.push((p.target, p.point, bt, bp, metric, xa.len(), xb.len()));
        }
    }
    stats::apply_holm(&mut typed);
    typed
        .into_iter()
        .zip(rows)
        .map(|(c, (target, point, bt, bp, metric, na, nb))| Comparison {
            target,
            baseline: bt,
            baseline_point: bp,
            point,
            metric: metric.to_string(),
            change: c.change,
            ci: c.ci,
            p: c.p,
            p_adjusted: c.p_adjusted.unwrap_or(c.p),
            verdict: verdict_name(&c.verdict).into(),
            words: c.words(metric),
            n_target: nb,
            n_baseline: na,
            small: c.small,
        })
        .collect()
}

/// Where latency departs: Kneedle on the convex curve p99 against N, on
/// log₂ N when the levels are geometric (1, 2, 4… or seed 002's 1, 10,
/// 100…), as such sweeps are laid out and read — on a linear scale their
/// first levels crowd into one corner and no knee stands out.
fn latency_knee(points: &[(f64, f64)]) -> Option<f64> {
    let xs: Vec<f64> = points.iter().map(|p| p.0).collect();
    if !geometric(&xs) {
        return stats::knee_convex(points);
    }
    let logged: Vec<(f64, f64)> = points.iter().map(|&(n, y)| (n.log2(), y)).collect();
    let k = stats::knee_convex(&logged)?;
    // The level itself, not 2^log₂ of it rounded.
    xs.into_iter()
        .min_by(|a, b| (a.log2() - k).abs().total_cmp(&(b.log2() - k).abs()))
}

/// Levels spanning more than ×10 whose typical step multiplies (median
/// ratio of neighbours ≥ 1.5): a sweep read on a log scale.
pub fn geometric(levels: &[f64]) -> bool {
    let (Some(&lo), Some(&hi)) = (levels.first(), levels.last()) else {
        return false;
    };
    if lo <= 0.0 || hi / lo <= 10.0 {
        return false;
    }
    let mut ratios: Vec<f64> = levels.windows(2).map(|p| p[1] / p[0]).collect();
    ratios.sort_by(f64::total_cmp);
    ratios.get(ratios.len() / 2).is_some_and(|r| *r >= 1.5)
}

fn verdict_name(v: &stats::Verdict) -> &'static str {
    match v {
        stats::Verdict::Better => "better",
        stats::Verdict::Worse => "worse",
        stats::Verdict::NoDifference => "no_difference",
        stats::Verdict::TooFewRuns { .. } => "too_few_runs",
    }
}

/// Throughput along the first swept parameter when it is a concurrency
/// (`connections`, `users`): the USL fit and the knee, per target (other
/// parameters at their first value).
fn sweeps(state: &State, points: &[PointStats]) -> Vec<SweepFit> {
    let Some((param, _)) = state.points.first().and_then(|p| p.first()).cloned() else {
        return Vec::new();
    };
    if !matches!(param.as_str(), "connections" | "users" | "c") {
        return Vec::new();
    }
    let rest_first: Option<Point> = state.points.first().map(|p| p[1..].to_vec());
    let mut out = Vec::new();
    for target in 0..state.targets.len() {
        let mut xy = Vec::new();
        let (mut lat99, mut lat50) = (Vec::new(), Vec::new());
        let mut excluded = Vec::new();
        for p in points.iter().filter(|p| p.target == target) {
            let point = &state.points[p.point];
            if Some(point[1..].to_vec()) != rest_first {
                continue;
            }
            let Ok(n) = point[0].1.parse::<f64>() else {
                continue;
            };
            let bound = p.runs.iter().filter(|r| r.saturated).count();
            if bound * 2 > p.runs.len() || p.rps.is_none() {
                excluded.push(crate::experiment::point_label(point));
                continue;
            }
            if let Some(f) = &p.rps {
                xy.push((n, f.median));
            }
            // p99 only where the point's pooled responses put it within
            // p98.5–p99.5: a noisier tail would place the knee by chance.
            let enough = p
                .p99_tail
                .is_some_and(|t| t.count >= stats::samples_for(0.99, LEVEL));
            if let (Some(f), true) = (&p.p99_ms, enough) {
                lat99.push((n, f.median));
            }
            if let Some(f) = &p.p50_ms {
                lat50.push((n, f.median));
            }
        }
        xy.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (metric, mut lat) = if lat99.len() == xy.len() {
            ("p99", lat99)
        } else {
            ("p50", lat50)
        };
        lat.sort_by(|a, b| a.0.total_cmp(&b.0));
        if xy.len() < 3 {
            continue;
        }
        out.push(SweepFit {
            target,
            param: param.clone(),
            usl: stats::usl_fit(&xy),
            knee: stats::knee(&xy),
            latency_knee: latency_knee(&lat),
            latency_metric: metric.into(),
            latency_points: lat,
            points: xy,
            excluded,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::parse;
    use scenario::doc::Format;

    /// Seed 001's shape: one target, a swept pool, 3 repetitions; the
    /// throughput of each run is `rate(children, connections, rep)`.
    fn seed_001(compare: &str, rate: impl Fn(&str, &str, u32) -> f64) -> (State, Analysis) {
        let text = format!(
            r#"
name = "children"
repetitions = 3
duration = "5s"
[[target]]
name = "php"
url = "http://127.0.0.1:1/"
[sweep]
var.children = [5, 20]
connections = [10, 50]
{compare}"#
        );
        let e = parse(&text, Format::Toml, "e.toml", &|_| Ok(())).unwrap();
        let mut state = State::plan(&e, &text);
        for r in &mut state.runs {
            r.status = Status::Done;
            r.result = Some(format!("{}/{}", r.point, r.block));
        }
        let points = state.points.clone();
        let a = analyze_with(&state, |rel, rep| {
            let point: usize = rel.split('/').next().unwrap().parse().unwrap();
            let get = |k: &str| {
                points[point]
                    .iter()
                    .find(|(key, _)| key == k)
                    .unwrap()
                    .1
                    .clone()
            };
            let x = rate(&get("var.children"), &get("connections"), rep);
            RunFigures::of_search(rep, &serde_json::json!({"answer": {"max_rate": x}}))
        });
        (state, a)
    }

    #[test]
    fn a_swept_level_is_compared_with_the_baseline_level() {
        // Pool 5 vs 20 on a 50 ms page: ×4 throughput, ±1% between runs.
        let noise = [0.99, 1.0, 1.01];
        let (state, a) = seed_001("[compare]\nbaseline = \"children=5\"\n", |c, _, rep| {
            let base = if c == "5" { 100.0 } else { 400.0 };
            base * noise[(rep as usize - 1) % 3]
        });
        assert_eq!(state.baseline_name(), "children=5");
        let tp: Vec<&Comparison> = a
            .comparisons
            .iter()
            .filter(|c| c.metric == "throughput")
            .collect();
        // children=20 against children=5 at each connections level, no more.
        assert_eq!(tp.len(), 2);
        for c in tp {
            assert_eq!(state.points[c.point][0].1, "20");
            assert_eq!(state.points[c.baseline_point][0].1, "5");
            // Same connections on both sides.
            assert_eq!(state.points[c.point][1], state.points[c.baseline_point][1]);
            assert_eq!(c.verdict, "better", "{}", c.words);
            assert!((c.change - 3.0).abs() < 1e-9);
            let (lo, hi) = c.ci.unwrap();
            assert!(lo < 3.0 && 3.0 < hi && lo > 2.5, "{lo} {hi}");
            assert!(
                c.words.starts_with("300.0% higher throughput (95% CI"),
                "{}",
                c.words
            );
        }
    }

    #[test]
    fn a_level_that_does_not_matter_is_no_difference() {
        // The pool size changes nothing here: no verdict of better or worse,
        // and the sentence says what the design could have found.
        let noise = [0.97, 1.0, 1.03, 0.99];
        let (_, a) = seed_001("[compare]\nbaseline = { children = 5 }\n", |c, n, rep| {
            let shift = usize::from(c == "20") + usize::from(n == "50");
            100.0 * noise[(rep as usize - 1 + shift) % 4]
        });
        let tp: Vec<&Comparison> = a
            .comparisons
            .iter()
            .filter(|c| c.metric == "throughput")
            .collect();
        assert_eq!(tp.len(), 2);
        for c in tp {
            assert_eq!(c.verdict, "no_difference", "{}", c.words);
            assert!(
                c.words.contains("with 3 runs a side only a change beyond"),
                "{}",
                c.words
            );
        }
    }

    #[test]
    fn without_a_level_one_target_compares_nothing() {
        let (_, a) = seed_001("", |_, _, _| 100.0);
        assert!(a.comparisons.is_empty());
    }
}

#[cfg(test)]
mod tail_tests {
    use super::*;

    fn run(rep: u32, values_us: impl Iterator<Item = u64>) -> RunFigures {
        let mut f = RunFigures::of_search(rep, &serde_json::json!({"answer": {"max_rate": 100.0}}))
            .unwrap();
        let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in values_us {
            h.record(v).unwrap();
        }
        f.latency = Some(h);
        f
    }

    #[test]
    fn the_points_tail_pools_its_runs_histograms() {
        // Three 5-second runs of 300 responses: too few alone for an upper
        // bound on p99, merged they give both ends.
        let runs: Vec<RunFigures> = (1..=3)
            .map(|rep| run(rep, (1..=300u64).map(move |i| i * 1000 + u64::from(rep))))
            .collect();
        let p = point_stats(0, 0, runs, 0);
        let t = p.p99_tail.unwrap();
        assert_eq!(t.count, 900);
        let (lo, hi) = (t.lo.unwrap(), t.hi.unwrap());
        assert!(lo <= t.value && t.value <= hi, "{t:?}");
        // In ms, near the 297th of 300 ms.
        assert!((290.0..=300.5).contains(&t.value), "{t:?}");
        // p99.9 from 900 responses: open above.
        let t999 = p.p999_tail.unwrap();
        assert!(t999.hi.is_none() && t999.lo.is_some(), "{t999:?}");
        // A drifting run is left out of the pool as of the medians.
        let mut runs: Vec<RunFigures> = (1..=3).map(|rep| run(rep, 1..=300u64)).collect();
        runs[0].drifted = true;
        assert_eq!(point_stats(0, 0, runs, 0).p99_tail.unwrap().count, 600);
        // No histogram (a find-max search): no pooled tail.
        let bare =
            RunFigures::of_search(1, &serde_json::json!({"answer": {"max_rate": 1.0}})).unwrap();
        assert!(point_stats(0, 0, vec![bare], 0).p99_tail.is_none());
    }
}
