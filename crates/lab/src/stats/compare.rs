//! Comparing two sets of repetitions: did the change make a real difference?
//!
//! The unit of evidence is one repetition (one run's figure: its
//! throughput, its p99 latency…), never a second within a run. The verdict
//! takes a test for "is there a difference", an interval for "how big",
//! and a practical threshold below which a significant difference is still
//! called no difference. From 2 runs a side the test and interval are
//! Welch's on the logarithms ([`super::welch_log`]: exact for
//! multiplicative log-normal noise; rank tests cannot reject at 5% under 4
//! a side), with the exact permutation p and the Hodges–Lehmann interval
//! beside it, free of that model, and the smallest change the design could
//! have found. Where a figure is 0 (errors) the log is undefined and the
//! verdict falls back to benchstat's: Mann–Whitney U and a bootstrap
//! interval, from 4 runs a side.

use serde::{Deserialize, Serialize};

use super::rank::{holm, mann_whitney, min_per_side_for};
use super::rng::Rng;
use super::small::{detectable, hodges_lehmann, permutation_p, welch_log, HodgesLehmann, POWER};
use super::summary::median_in_place;

/// The default number of bootstrap resamples of [`compare`].
pub const RESAMPLES: usize = 5_000;

/// The percentile bootstrap confidence interval of median(b)/median(a) − 1.
///
/// Each of `resamples` rounds draws `a.len()` values from `a` with
/// replacement, then `b.len()` values from `b`, all from [`Rng::new`]`(seed)`
/// in that order, and computes the ratio of the resampled medians minus 1;
/// the interval is the (1 − level)/2 and (1 + level)/2 quantiles of those
/// ratios (linear interpolation between order statistics, as
/// `numpy.quantile`'s default). Deterministic for a seed. `None` when a side
/// is empty, `resamples` is 0, or a resampled median of `a` is 0 (the ratio
/// is then undefined).
///
/// There is no exact reference (it is random); the tests check its
/// coverage of a known shift over seeded synthetic trials instead.
pub fn bootstrap_ratio_ci(
    a: &[f64],
    b: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    if a.is_empty() || b.is_empty() || resamples == 0 || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let mut rng = Rng::new(seed);
    let mut ra = vec![0.0; a.len()];
    let mut rb = vec![0.0; b.len()];
    let mut stats = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for x in ra.iter_mut() {
            *x = a[rng.index(a.len())];
        }
        for x in rb.iter_mut() {
            *x = b[rng.index(b.len())];
        }
        let ma = median_in_place(&mut ra);
        let mb = median_in_place(&mut rb);
        if ma == 0.0 {
            return None;
        }
        stats.push(mb / ma - 1.0);
    }
    stats.sort_by(f64::total_cmp);
    Some((
        quantile_sorted(&stats, (1.0 - level) / 2.0),
        quantile_sorted(&stats, (1.0 + level) / 2.0),
    ))
}

/// The q-quantile of sorted values, linear between order statistics
/// (`numpy.quantile`'s default, Hyndman & Fan type 7).
fn quantile_sorted(s: &[f64], q: f64) -> f64 {
    let h = (s.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(s.len() - 1);
    s[lo] + (h - lo as f64) * (s[hi] - s[lo])
}

/// Options of [`compare`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Compare {
    /// Significance level of the Mann–Whitney test (default 0.05).
    pub alpha: f64,
    /// The smallest relative change that matters (default 0.02, i.e. 2 %):
    /// the whole confidence interval must lie beyond ±practical for a
    /// verdict of better or worse.
    pub practical: f64,
    /// Whether a higher figure is better (throughput: true; latency: false).
    pub higher_is_better: bool,
    /// Confidence level of the interval for the change (default 0.95).
    pub level: f64,
    /// Seed of the bootstrap (default 0); the same seed, the same interval.
    pub seed: u64,
}

impl Default for Compare {
    fn default() -> Self {
        Compare {
            alpha: 0.05,
            practical: 0.02,
            higher_is_better: true,
            level: 0.95,
            seed: 0,
        }
    }
}

/// What a comparison concludes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A significant change, its whole interval beyond the practical
    /// threshold, in the good direction.
    Better,
    /// The same in the bad direction.
    Worse,
    /// Not significant, or significant but not clearly larger than the
    /// practical threshold.
    NoDifference,
    /// Fewer runs on a side than a two-sided test at alpha needs to ever
    /// reject: `needed` per side ([`min_per_side_for`], 4 at alpha 0.05).
    TooFewRuns {
        /// Runs per side the test needs.
        needed: usize,
    },
}

/// The result of [`compare`]: baseline `a` against candidate `b`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// median(b) / median(a) − 1 (NaN when a side is empty or median(a) is 0).
    pub change: f64,
    /// The bootstrap interval of `change` at `opts.level`; `None` with too
    /// few runs or when it is undefined.
    pub ci: Option<(f64, f64)>,
    /// The two-sided Mann–Whitney p-value (1 when a side is empty).
    pub p: f64,
    /// Holm-adjusted p-value, set by [`apply_holm`]; the verdict then uses it.
    pub p_adjusted: Option<f64>,
    /// Whether `p` is exact (see [`super::MannWhitney`]).
    pub exact: bool,
    /// Runs of the baseline.
    pub n_a: usize,
    /// Runs of the candidate.
    pub n_b: usize,
    /// The conclusion.
    pub verdict: Verdict,
    /// The options it was made with.
    pub opts: Compare,
    /// The small-sample statistics, when the verdict is Welch's on logs.
    #[serde(default)]
    pub small: Option<Small>,
}

/// What the runs say beyond the verdict's test (see [`super::welch_log`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Small {
    /// The ratio of geometric means − 1 (what the interval `ci` is for).
    pub mean_change: f64,
    /// Welch's degrees of freedom.
    pub df: f64,
    /// The relative run-to-run spread: pooled standard deviation of the logs.
    pub sd_log: f64,
    /// The exact permutation test's p (no model), when the splits are few enough.
    pub p_permutation: Option<f64>,
    /// The Mann–Whitney p (no model).
    pub p_rank: f64,
    /// Hodges–Lehmann's change and interval, with its actual coverage.
    pub hodges_lehmann: Option<HodgesLehmann>,
    /// The smallest change these runs find beyond the practical threshold
    /// with probability [`POWER`] at the spread observed.
    pub detectable: f64,
    /// The same with twice the runs a side.
    pub detectable_doubled: f64,
}

/// Runs a side Welch's test on logs needs (a spread needs 2 values).
pub const MIN_RUNS_WELCH: usize = 2;

/// The verdict rule: TooFewRuns when either side has fewer runs than
/// [`min_per_side_for`]`(alpha)`; Better/Worse only when p < alpha and the
/// whole interval lies above +practical or below −practical (the sign and
/// `higher_is_better` give the direction); otherwise NoDifference.
///
/// The run count rule is the exact test's, so it holds even where SciPy's
/// tie-corrected normal approximation reports a smaller p (3 tied values
/// against 3 other tied values give p ≈ 0.047, yet are too few runs).
pub fn verdict(p: f64, ci: Option<(f64, f64)>, n_a: usize, n_b: usize, opts: &Compare) -> Verdict {
    verdict_with(p, ci, n_a, n_b, opts, min_per_side_for(opts.alpha))
}

/// [`verdict`] with the test's own least runs a side (`needed`).
fn verdict_with(
    p: f64,
    ci: Option<(f64, f64)>,
    n_a: usize,
    n_b: usize,
    opts: &Compare,
    needed: usize,
) -> Verdict {
    if n_a.min(n_b) < needed {
        return Verdict::TooFewRuns { needed };
    }
    let Some((lo, hi)) = ci else {
        return Verdict::NoDifference;
    };
    // Written so that a NaN p is never significant.
    if p.is_nan() || p >= opts.alpha {
        return Verdict::NoDifference;
    }
    let up = if lo > opts.practical {
        true
    } else if hi < -opts.practical {
        false
    } else {
        return Verdict::NoDifference;
    };
    if up == opts.higher_is_better {
        Verdict::Better
    } else {
        Verdict::Worse
    }
}

/// Compares baseline repetitions `a` with candidate repetitions `b`:
/// the relative change of medians, its bootstrap interval
/// ([`bootstrap_ratio_ci`] with `opts.level`, [`RESAMPLES`] resamples and
/// `opts.seed`), the Mann–Whitney p-value ([`mann_whitney`]) and the
/// [`verdict`]. Pure and deterministic.
pub fn compare(a: &[f64], b: &[f64], opts: &Compare) -> Comparison {
    let (n_a, n_b) = (a.len(), b.len());
    let change = if n_a == 0 || n_b == 0 {
        f64::NAN
    } else {
        let ma = median_in_place(&mut a.to_vec());
        let mb = median_in_place(&mut b.to_vec());
        if ma == 0.0 {
            f64::NAN
        } else {
            mb / ma - 1.0
        }
    };
    let rank = mann_whitney(a, b);
    if let Some(w) = welch_log(a, b, opts.level) {
        let small = Small {
            mean_change: w.change,
            df: w.df,
            sd_log: w.sd_log,
            p_permutation: permutation_p(a, b),
            p_rank: rank.as_ref().map_or(1.0, |t| t.p),
            hodges_lehmann: hodges_lehmann(a, b, opts.level),
            detectable: detectable(w.sd_log, n_a, n_b, opts.alpha, POWER, opts.practical),
            detectable_doubled: detectable(
                w.sd_log,
                2 * n_a,
                2 * n_b,
                opts.alpha,
                POWER,
                opts.practical,
            ),
        };
        let ci = Some(w.ci);
        return Comparison {
            change,
            ci,
            p: w.p,
            p_adjusted: None,
            exact: false,
            n_a,
            n_b,
            verdict: verdict_with(w.p, ci, n_a, n_b, opts, MIN_RUNS_WELCH),
            opts: *opts,
            small: Some(small),
        };
    }
    // A zero or a lone run: no log-normal model; the rank test alone.
    let positive = a.iter().chain(b).all(|x| *x > 0.0);
    let min_per_side = if positive && n_a.min(n_b) < MIN_RUNS_WELCH {
        // One more run a side and Welch's test answers.
        MIN_RUNS_WELCH
    } else {
        min_per_side_for(opts.alpha)
    };
    let (p, exact) = match rank {
        Some(t) => (t.p, t.exact),
        None => (1.0, false),
    };
    let ci = if n_a.min(n_b) < min_per_side {
        None
    } else {
        bootstrap_ratio_ci(a, b, opts.level, RESAMPLES, opts.seed)
    };
    Comparison {
        change,
        ci,
        p,
        p_adjusted: None,
        exact,
        n_a,
        n_b,
        verdict: verdict_with(p, ci, n_a, n_b, opts, min_per_side),
        opts: *opts,
        small: None,
    }
}

/// Adjusts the p-values of several comparisons made together (Holm–
/// Bonferroni, [`holm`]), stores them in `p_adjusted` and recomputes each
/// verdict with the adjusted p. Comparisons with too few runs can never be
/// called better or worse, so they are left out of the family (their
/// `p_adjusted` stays `None`), which keeps the others' adjustment smaller
/// without loosening the family-wise error rate.
pub fn apply_holm(comparisons: &mut [Comparison]) {
    let family: Vec<usize> = (0..comparisons.len())
        .filter(|&i| !matches!(comparisons[i].verdict, Verdict::TooFewRuns { .. }))
        .collect();
    let ps: Vec<f64> = family.iter().map(|&i| comparisons[i].p).collect();
    for (&i, adj) in family.iter().zip(holm(&ps)) {
        let c = &mut comparisons[i];
        c.p_adjusted = Some(adj);
        let needed = if c.small.is_some() {
            MIN_RUNS_WELCH
        } else {
            min_per_side_for(c.opts.alpha)
        };
        c.verdict = verdict_with(adj, c.ci, c.n_a, c.n_b, &c.opts, needed);
    }
}

impl Comparison {
    /// The p-value the verdict used: the adjusted one if there is one.
    pub fn p_used(&self) -> f64 {
        self.p_adjusted.unwrap_or(self.p)
    }

    /// The comparison in one plain English sentence, e.g.
    /// "12.0% higher throughput (95% CI 9.1–15.2%, p=0.004, 6 runs each)",
    /// "no significant difference in throughput (p=0.41, 6 runs each)",
    /// "too few runs to tell: the test needs ≥ 4 runs per side (3 runs each)".
    /// `metric` names the figure ("throughput", "p99 latency"). A caller
    /// that localizes builds its own sentence from the typed fields.
    pub fn words(&self, metric: &str) -> String {
        let runs = if self.n_a == self.n_b {
            format!("{} runs each", self.n_a)
        } else {
            format!("{} and {} runs", self.n_a, self.n_b)
        };
        let p = match self.p_adjusted {
            Some(adj) => format!("adjusted p{}", fmt_p(adj)),
            None => format!("p{}", fmt_p(self.p)),
        };
        if let Verdict::TooFewRuns { needed } = self.verdict {
            return format!(
                "too few runs to tell: the test needs ≥ {needed} runs per side ({runs})"
            );
        }
        let sized = |ci: (f64, f64)| {
            let dir = if self.change >= 0.0 {
                "higher"
            } else {
                "lower"
            };
            format!(
                "{:.1}% {dir} {metric} ({:.0}% CI {}, {p}, {runs})",
                100.0 * self.change.abs(),
                100.0 * self.opts.level,
                fmt_ci(ci, self.change)
            )
        };
        match (self.verdict, self.ci) {
            (Verdict::Better | Verdict::Worse, Some(ci)) => sized(ci),
            (_, Some(ci)) if self.p_used() < self.opts.alpha => format!(
                "no meaningful difference: {}, not clearly beyond ±{:.0}%",
                sized(ci),
                100.0 * self.opts.practical
            ),
            (_, Some(ci)) if self.change.is_finite() => format!(
                "no significant difference in {metric}: {:+.1}% ({:.0}% CI {}, {p}, {runs}){}",
                100.0 * self.change,
                100.0 * self.opts.level,
                fmt_ci(ci, self.change),
                self.design_words()
            ),
            _ => format!("no significant difference in {metric} ({p}, {runs})"),
        }
    }

    /// What the design could have found: "; with 3 runs a side only a
    /// change beyond ~12% could show (80% power), 6 would show ~6%" — empty
    /// without the small-sample statistics or with unequal sides.
    pub fn design_words(&self) -> String {
        let Some(s) = &self.small else {
            return String::new();
        };
        if !s.detectable.is_finite() || self.n_a != self.n_b {
            return String::new();
        }
        format!(
            "; with {} runs a side only a change beyond ~{} could show ({:.0}% power), {} would show ~{}",
            self.n_a,
            fmt_share(s.detectable),
            100.0 * POWER,
            2 * self.n_a,
            fmt_share(s.detectable_doubled)
        )
    }
}

/// A share as a rounded percentage: "12%", "6.5%", "0.8%".
pub(crate) fn fmt_share(x: f64) -> String {
    let pct = 100.0 * x;
    if pct >= 10.0 {
        format!("{pct:.0}%")
    } else {
        format!("{pct:.1}%")
    }
}

/// "=p" with 2 decimals from 0.1, 3 below, "<0.001" below that.
fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "<0.001".to_string()
    } else if p < 0.1 {
        format!("={p:.3}")
    } else {
        format!("={p:.2}")
    }
}

/// The interval in percent: as magnitudes ("9.1–15.2%") when it lies wholly
/// on the side of the change, else signed ("−1.0% to +3.0%").
fn fmt_ci((lo, hi): (f64, f64), change: f64) -> String {
    if change >= 0.0 && lo >= 0.0 {
        format!("{:.1}–{:.1}%", 100.0 * lo, 100.0 * hi)
    } else if change < 0.0 && hi <= 0.0 {
        format!("{:.1}–{:.1}%", -100.0 * hi, -100.0 * lo)
    } else {
        format!("{:+.1}% to {:+.1}%", 100.0 * lo, 100.0 * hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` draws of level·(1 + noise·Z).
    fn sample(rng: &mut Rng, n: usize, level: f64, noise: f64) -> Vec<f64> {
        (0..n)
            .map(|_| level * (1.0 + noise * rng.normal()))
            .collect()
    }

    fn opts(seed: u64) -> Compare {
        Compare {
            seed,
            ..Compare::default()
        }
    }

    #[test]
    fn same_distribution_says_no_difference() {
        let mut rng = Rng::new(1);
        let (mut same, mut significant) = (0, 0);
        for trial in 0..200 {
            let a = sample(&mut rng, 6, 1000.0, 0.02);
            let b = sample(&mut rng, 6, 1000.0, 0.02);
            let c = compare(&a, &b, &opts(trial));
            same += usize::from(c.verdict == Verdict::NoDifference);
            significant += usize::from(c.p < 0.05);
        }
        assert!(same >= 180, "NoDifference in {same}/200");
        // The test itself keeps its size: p < 0.05 in about 4 % (the exact
        // test's attainable size with 6 per side is 0.041) of null trials.
        assert!(significant <= 20, "p < 0.05 in {significant}/200");
    }

    #[test]
    fn ten_percent_shift_is_found_and_covered() {
        let mut rng = Rng::new(2);
        let (mut better, mut covered) = (0, 0);
        for trial in 0..200 {
            let a = sample(&mut rng, 6, 1000.0, 0.02);
            let b = sample(&mut rng, 6, 1100.0, 0.02);
            let c = compare(&a, &b, &opts(trial));
            better += usize::from(c.verdict == Verdict::Better);
            let (lo, hi) = c.ci.unwrap();
            covered += usize::from(lo <= 0.10 && 0.10 <= hi);
        }
        assert!(better >= 180, "Better in {better}/200");
        assert!(covered >= 170, "CI covers +10% in {covered}/200");
    }

    #[test]
    fn lower_is_better_flips_the_verdict() {
        let mut rng = Rng::new(3);
        let a = sample(&mut rng, 8, 100.0, 0.01);
        let b = sample(&mut rng, 8, 80.0, 0.01);
        let latency = Compare {
            higher_is_better: false,
            ..opts(1)
        };
        assert_eq!(compare(&a, &b, &latency).verdict, Verdict::Better);
        assert_eq!(compare(&a, &b, &opts(1)).verdict, Verdict::Worse);
        assert_eq!(compare(&b, &a, &opts(1)).verdict, Verdict::Better);
    }

    #[test]
    fn bootstrap_is_deterministic_and_covers_a_known_shift() {
        let mut rng = Rng::new(4);
        let a = sample(&mut rng, 10, 1000.0, 0.02);
        let b = sample(&mut rng, 10, 1050.0, 0.02);
        let x = bootstrap_ratio_ci(&a, &b, 0.95, 3_000, 77);
        assert_eq!(x, bootstrap_ratio_ci(&a, &b, 0.95, 3_000, 77));
        assert_ne!(x, bootstrap_ratio_ci(&a, &b, 0.95, 3_000, 78));
        // Coverage of the true +5% over seeded synthetic trials.
        let mut covered = 0;
        for trial in 0..200 {
            let a = sample(&mut rng, 10, 1000.0, 0.02);
            let b = sample(&mut rng, 10, 1050.0, 0.02);
            let (lo, hi) = bootstrap_ratio_ci(&a, &b, 0.95, 2_000, trial).unwrap();
            assert!(lo <= hi);
            covered += usize::from(lo <= 0.05 && 0.05 <= hi);
        }
        assert!(covered >= 180, "covers in {covered}/200");
        assert!(bootstrap_ratio_ci(&[], &[1.0], 0.95, 10, 0).is_none());
        assert!(bootstrap_ratio_ci(&[0.0], &[1.0], 0.95, 10, 0).is_none());
    }

    #[test]
    fn three_runs_answer_and_one_does_not() {
        // 3 a side, far apart: Welch's test on logs answers (no rank test can).
        let c = compare(
            &[98.0, 100.0, 102.0],
            &[198.0, 200.0, 203.0],
            &Compare::default(),
        );
        assert_eq!(c.verdict, Verdict::Better);
        let s = c.small.as_ref().unwrap();
        // The exact permutation test's floor at 3 a side, said beside it.
        assert!((s.p_permutation.unwrap() - 0.1).abs() < 1e-12);
        // No 95% Hodges–Lehmann interval exists at 3 a side: its coverage is 90%.
        assert!((s.hodges_lehmann.unwrap().coverage - 0.9).abs() < 1e-12);
        let (lo, hi) = c.ci.unwrap();
        assert!(lo > 0.9 && hi < 1.1, "{lo} {hi}");
        // One run a side: no spread, no test.
        let one = compare(&[100.0], &[200.0], &Compare::default());
        assert_eq!(one.verdict, Verdict::TooFewRuns { needed: 2 });
        assert_eq!(
            one.words("throughput"),
            "too few runs to tell: the test needs ≥ 2 runs per side (1 runs each)"
        );
        // A zero (errors): no logs; the rank test and its 4 a side.
        let zero = compare(&[0.0, 1.0, 2.0], &[10.0, 20.0, 30.0], &Compare::default());
        assert_eq!(zero.verdict, Verdict::TooFewRuns { needed: 4 });
        assert!(zero.small.is_none() && zero.ci.is_none());
        let e = compare(&[], &[1.0], &Compare::default());
        assert!(matches!(e.verdict, Verdict::TooFewRuns { .. }));
        assert!(e.change.is_nan());
    }

    /// Identical targets, n = 3…6 a side, 400 simulated experiments each
    /// (fixed seed): the verdict calls a difference at most at its nominal
    /// 5%; and a true 10% change is found at the rate [`super::super::power`]
    /// predicted from the true spread (±0.08).
    #[test]
    fn false_positives_stay_nominal_and_power_is_as_stated() {
        let mut rng = Rng::new(32);
        let sd = 0.05;
        let draw = |rng: &mut Rng, n: usize, level: f64| -> Vec<f64> {
            (0..n).map(|_| level * (sd * rng.normal()).exp()).collect()
        };
        const TRIALS: usize = 400;
        for n in 3..=6 {
            let (mut false_pos, mut found) = (0, 0);
            for trial in 0..TRIALS {
                let a = draw(&mut rng, n, 1000.0);
                let b = draw(&mut rng, n, 1000.0);
                let c = compare(&a, &b, &opts(trial as u64));
                false_pos += usize::from(matches!(c.verdict, Verdict::Better | Verdict::Worse));
                let b10 = draw(&mut rng, n, 1100.0);
                let c10 = compare(&a, &b10, &opts(trial as u64));
                found += usize::from(c10.verdict == Verdict::Better);
            }
            let rate = false_pos as f64 / TRIALS as f64;
            assert!(rate <= 0.05, "n={n}: false positives {false_pos}/{TRIALS}");
            let predicted = super::super::power(sd, n, n, 0.05, 0.10, 0.02);
            let got = found as f64 / TRIALS as f64;
            assert!(
                (got - predicted).abs() <= 0.08,
                "n={n}: 10% found in {got:.3}, power said {predicted:.3}"
            );
        }
    }

    #[test]
    fn words() {
        let base = Comparison {
            change: 0.12,
            ci: Some((0.091, 0.152)),
            p: 0.004,
            p_adjusted: None,
            exact: true,
            n_a: 6,
            n_b: 6,
            verdict: Verdict::Better,
            opts: Compare::default(),
            small: None,
        };
        assert_eq!(
            base.words("throughput"),
            "12.0% higher throughput (95% CI 9.1–15.2%, p=0.004, 6 runs each)"
        );
        let lower = Comparison {
            change: -0.08,
            ci: Some((-0.11, -0.05)),
            n_b: 5,
            verdict: Verdict::Better,
            ..base.clone()
        };
        assert_eq!(
            lower.words("p99 latency"),
            "8.0% lower p99 latency (95% CI 5.0–11.0%, p=0.004, 6 and 5 runs)"
        );
        let none = Comparison {
            change: 0.01,
            ci: Some((-0.02, 0.04)),
            p: 0.41,
            verdict: Verdict::NoDifference,
            ..base.clone()
        };
        assert_eq!(
            none.words("throughput"),
            "no significant difference in throughput: +1.0% (95% CI -2.0% to +4.0%, p=0.41, 6 runs each)"
        );
        let designed = Comparison {
            n_a: 3,
            n_b: 3,
            small: Some(Small {
                mean_change: 0.01,
                df: 4.0,
                sd_log: 0.03,
                p_permutation: Some(0.4),
                p_rank: 0.4,
                hodges_lehmann: None,
                detectable: 0.1234,
                detectable_doubled: 0.061,
            }),
            ..none.clone()
        };
        assert_eq!(
            designed.words("throughput"),
            "no significant difference in throughput: +1.0% (95% CI -2.0% to +4.0%, p=0.41, \
             3 runs each); with 3 runs a side only a change beyond ~12% could show (80% power), \
             6 would show ~6.1%"
        );
        let small = Comparison {
            change: 0.012,
            ci: Some((0.005, 0.019)),
            p: 0.01,
            verdict: Verdict::NoDifference,
            ..base.clone()
        };
        assert_eq!(
            small.words("throughput"),
            "no meaningful difference: 1.2% higher throughput (95% CI 0.5–1.9%, p=0.010, \
             6 runs each), not clearly beyond ±2%"
        );
        let adjusted = Comparison {
            p_adjusted: Some(0.0004),
            ..base
        };
        assert_eq!(
            adjusted.words("throughput"),
            "12.0% higher throughput (95% CI 9.1–15.2%, adjusted p<0.001, 6 runs each)"
        );
        assert_eq!(fmt_ci((-0.01, 0.03), 0.01), "-1.0% to +3.0%");
    }

    #[test]
    fn holm_can_turn_a_verdict() {
        let a = [100.0, 102.0, 98.0, 101.0, 99.0];
        let b = [108.0, 112.0, 103.0, 109.0, 104.0];
        // Welch on logs (SciPy): p = 0.00756, the interval from +2.7%.
        let c = compare(&a, &b, &opts(1));
        assert!((c.p - 0.007559057214162176).abs() < 1e-9);
        assert_eq!(c.verdict, Verdict::Better);
        let mut family = vec![c.clone(); 7];
        family.push(compare(&a[..1], &b[..1], &opts(1)));
        apply_holm(&mut family);
        // 0.00756 × 7 = 0.053 ≥ 0.05: no longer significant.
        for c in &family[..7] {
            assert!((c.p_adjusted.unwrap() - 7.0 * c.p).abs() < 1e-12);
            assert_eq!(c.verdict, Verdict::NoDifference);
        }
        assert_eq!(family[7].p_adjusted, None);
        assert_eq!(family[7].verdict, Verdict::TooFewRuns { needed: 2 });
        let mut pair = vec![c.clone(), c];
        apply_holm(&mut pair);
        assert!(pair.iter().all(|c| c.verdict == Verdict::Better));
    }
}
