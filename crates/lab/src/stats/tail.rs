//! Tail latency from short runs: an exact order-statistic interval for a
//! quantile read from an HDR histogram, whatever the count.
//!
//! Among n independent samples the r-th smallest lies below the true
//! q-quantile with probability P(B ≥ r), B ~ Binomial(n, q), so the pair of
//! order statistics (r, s) covers it with probability
//! P(r ≤ B < s) = F(s − 1) − F(r − 1). With few samples beyond the quantile
//! no upper order statistic is high enough (p99 from 100 responses): the
//! interval is then open above, "at least the r-th value", which is still
//! an answer. Read from an HDR histogram, each order statistic is known to
//! the histogram's precision (its highest equivalent value). Samples of one
//! run are not quite independent (they share its seconds), and pooled runs
//! ignore the run-to-run spread: the interval is the sampling error of the
//! tail, the comparisons over runs carry the rest.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::special::inc_beta;

/// P(B ≤ k) for B ~ Binomial(n, p), as `scipy.stats.binom.cdf`.
pub fn binom_cdf(k: u64, n: u64, p: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    if p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return 0.0;
    }
    // P(B ≤ k) = I_{1−p}(n − k, k + 1).
    inc_beta((n - k) as f64, (k + 1) as f64, 1.0 - p, p)
}

/// The ranks (1-based) of the order-statistic interval of the q-quantile
/// among `n` samples at `level`, each tail at most (1 − level)/2: `lo` the
/// largest r with P(B ≤ r − 1) ≤ (1 − level)/2, `hi` the smallest s with
/// P(B ≤ s − 1) ≥ (1 + level)/2; either `None` when no rank in 1..=n
/// qualifies (too few samples below or beyond it). Also the coverage
/// P(lo ≤ B < hi) when both exist. Reference: `small.json` `quantile_ci`.
pub fn quantile_ci_ranks(n: u64, q: f64, level: f64) -> (Option<u64>, Option<u64>, Option<f64>) {
    if n == 0 || !(0.0..1.0).contains(&q) {
        return (None, None, None);
    }
    let a = (1.0 - level) / 2.0;
    let cdf = |r: u64| binom_cdf(r - 1, n, q);
    // cdf(r) grows with r: the last r in 1..=n with cdf(r) ≤ a.
    let lo = if cdf(1) > a {
        None
    } else {
        let (mut good, mut bad) = (1u64, n + 1);
        while bad - good > 1 {
            let mid = good + (bad - good) / 2;
            if cdf(mid) <= a {
                good = mid;
            } else {
                bad = mid;
            }
        }
        Some(good)
    };
    // The first s in 1..=n with cdf(s) ≥ 1 − a.
    let hi = if cdf(n) < 1.0 - a {
        None
    } else {
        let (mut bad, mut good) = (0u64, n);
        while good - bad > 1 {
            let mid = bad + (good - bad) / 2;
            if cdf(mid) >= 1.0 - a {
                good = mid;
            } else {
                bad = mid;
            }
        }
        Some(good)
    };
    let coverage = lo.zip(hi).map(|(l, h)| cdf(h) - cdf(l));
    (lo, hi, coverage)
}

/// A quantile of a histogram with its order-statistic interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tail {
    /// `value_at_quantile(q)`, in the histogram's unit.
    pub value: f64,
    /// The lower bound; `None` when too few samples lie below.
    pub lo: Option<f64>,
    /// The upper bound; `None` when too few lie beyond (the interval is
    /// open above: the true quantile may exceed the largest value seen).
    pub hi: Option<f64>,
    /// The pair's coverage when both bounds exist.
    pub coverage: Option<f64>,
    /// Samples it is read from.
    pub count: u64,
    /// Samples that would put the interval within the quantiles
    /// q ± (1 − q)/2 (p98.5–p99.5 for p99): [`samples_for`].
    pub count_for_precision: u64,
}

/// The value at 1-based rank `r` of a histogram (the highest value
/// equivalent to the r-th smallest sample).
fn value_at_rank(h: &Histogram<u64>, r: u64) -> f64 {
    let mut seen = 0u64;
    for v in h.iter_recorded() {
        seen += v.count_at_value();
        if seen >= r {
            return h.highest_equivalent(v.value_iterated_to()) as f64;
        }
    }
    h.max() as f64
}

/// [`Tail`] of the q-quantile of `h` at `level`; `None` for an empty one.
pub fn tail(h: &Histogram<u64>, q: f64, level: f64) -> Option<Tail> {
    let n = h.len();
    if n == 0 {
        return None;
    }
    let (lo, hi, coverage) = quantile_ci_ranks(n, q, level);
    Some(Tail {
        value: h.value_at_quantile(q) as f64,
        lo: lo.map(|r| value_at_rank(h, r)),
        hi: hi.map(|r| value_at_rank(h, r)),
        coverage,
        count: n,
        count_for_precision: samples_for(q, level),
    })
}

/// Samples for the q-quantile's interval to lie within the quantiles
/// q ± (1 − q)/2 (normal approximation of the binomial ranks):
/// ⌈z²·q(1 − q) / ((1 − q)/2)²⌉ = ⌈4z²·q/(1 − q)⌉ — about 1,500 for p99,
/// 15,000 for p99.9 at 95%.
pub fn samples_for(q: f64, level: f64) -> u64 {
    let z = super::special::normal_quantile((1.0 + level) / 2.0);
    (4.0 * z * z * q / (1.0 - q)).ceil() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::reference::{close, small};

    #[test]
    fn ranks_match_scipy() {
        for case in small()["quantile_ci"].as_array().unwrap() {
            let n = case["n"].as_u64().unwrap();
            let q = case["q"].as_f64().unwrap();
            let level = case["level"].as_f64().unwrap();
            let (lo, hi, cov) = quantile_ci_ranks(n, q, level);
            let what = format!("n={n} q={q}");
            assert_eq!(lo, case["lo"].as_u64(), "{what} lo");
            assert_eq!(hi, case["hi"].as_u64(), "{what} hi");
            match (cov, case["coverage"].as_f64()) {
                (Some(g), Some(w)) => close(g, w, 1e-9, &what),
                (None, None) => {}
                other => panic!("{what}: coverage {other:?}"),
            }
        }
    }

    #[test]
    fn a_short_run_gets_an_interval_open_above() {
        // 200 samples 1..=200 ms: p99 between the 196th value and above the max.
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in 1..=200u64 {
            h.record(v * 1000).unwrap();
        }
        let t = tail(&h, 0.99, 0.95).unwrap();
        assert_eq!(t.count, 200);
        let (lo, hi, _) = quantile_ci_ranks(200, 0.99, 0.95);
        assert!(lo.is_some() && hi.is_none());
        let want = (lo.unwrap() * 1000) as f64;
        assert!((t.lo.unwrap() - want).abs() <= want * 1e-3, "{t:?}");
        assert!(t.hi.is_none());
        // Plenty: both ends, around the estimate.
        let mut big = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in 1..=100_000u64 {
            big.record(v).unwrap();
        }
        let t = tail(&big, 0.99, 0.95).unwrap();
        let (lo, hi) = (t.lo.unwrap(), t.hi.unwrap());
        assert!(
            lo <= t.value && t.value <= hi && lo > 98_500.0 && hi < 99_500.0,
            "{t:?}"
        );
        assert!(tail(&Histogram::<u64>::new(3).unwrap(), 0.99, 0.95).is_none());
    }

    #[test]
    fn precision_needs_these_samples() {
        assert_eq!(samples_for(0.99, 0.95), 1522);
        assert_eq!(samples_for(0.999, 0.95), 15351);
        // And it delivers: with that many samples the ranks sit within
        // q ± (1 − q)/2 of n.
        let n = samples_for(0.99, 0.95);
        let (lo, hi, _) = quantile_ci_ranks(n, 0.99, 0.95);
        let (lo, hi) = (lo.unwrap() as f64 / n as f64, hi.unwrap() as f64 / n as f64);
        assert!(lo >= 0.984 && hi <= 0.996, "{lo} {hi}");
    }
}
