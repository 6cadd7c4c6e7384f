//! Describing one set of repetitions: median, mean and standard deviation,
//! an exact confidence interval for the median, outliers, whether a
//! percentile has enough samples behind it, and a batch-means interval for
//! one run's throughput.

use serde::{Deserialize, Serialize};

use super::special::{binom_half_cdf, t_quantile};

/// The sample median (the mean of the two middle values for an even count),
/// as `numpy.median`; NaN for an empty slice. Values are ordered with
/// `f64::total_cmp`, so inputs should be finite.
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    median_in_place(&mut v)
}

/// [`median`] that reorders `v` instead of copying it.
pub(crate) fn median_in_place(v: &mut [f64]) -> f64 {
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    let mid = n / 2;
    let (left, m, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = *m;
    if n % 2 == 1 {
        upper
    } else {
        let lower = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lower + upper) / 2.0
    }
}

/// The mean and the sample standard deviation (divisor n − 1), as
/// `numpy.mean` and `numpy.std(ddof=1)`. The mean is NaN for an empty slice
/// and the standard deviation NaN for fewer than 2 values.
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, f64::NAN);
    }
    let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    (mean, (ss / (n - 1) as f64).sqrt())
}

/// A distribution-free confidence interval for the median (see [`median_ci`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MedianCi {
    /// The sample median.
    pub median: f64,
    /// The lower bound: the `rank`-th smallest value; `None` when no pair of
    /// order statistics reaches the level (for 95 %: fewer than 6 values).
    pub lo: Option<f64>,
    /// The upper bound: the `rank`-th largest value; `None` as for `lo`.
    pub hi: Option<f64>,
    /// The 1-based rank k of the bounds (the k-th smallest and k-th largest).
    pub rank: Option<usize>,
    /// The level asked for.
    pub level: f64,
    /// The coverage the chosen pair achieves, P(k ≤ B ≤ n − k) for
    /// B ~ Binomial(n, ½) (≥ `level`). When the level cannot be reached it is
    /// the most any pair reaches, that of the extremes (k = 1), or 0 for no
    /// values.
    pub coverage: f64,
}

/// The coverage of the order statistics (k, n + 1 − k) as an interval for
/// the median: 1 − 2·P(B ≤ k − 1), B ~ Binomial(n, ½).
pub fn order_stat_coverage(n: usize, k: usize) -> f64 {
    if k == 0 || 2 * k > n {
        return 0.0;
    }
    1.0 - 2.0 * binom_half_cdf(k as u64 - 1, n as u64)
}

/// The exact distribution-free confidence interval for the median from
/// order statistics: the narrowest symmetric pair (k-th smallest, k-th
/// largest) whose coverage under Binomial(n, ½) is at least `level`.
///
/// Matches the bounds of `scipy.stats.quantile_test(xs, p=0.5)
/// .confidence_interval(level)` and the coverage computed with
/// `scipy.stats.binom.cdf` (reference sections `median_ci`).
pub fn median_ci(xs: &[f64], level: f64) -> MedianCi {
    let n = xs.len();
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let med = median(&sorted);
    // Coverage shrinks as k grows: take the largest k that still reaches it.
    let mut best = None;
    for k in 1..=n / 2 {
        let c = order_stat_coverage(n, k);
        if c >= level {
            best = Some((k, c));
        } else {
            break;
        }
    }
    match best {
        Some((k, coverage)) => MedianCi {
            median: med,
            lo: Some(sorted[k - 1]),
            hi: Some(sorted[n - k]),
            rank: Some(k),
            level,
            coverage,
        },
        None => MedianCi {
            median: med,
            lo: None,
            hi: None,
            rank: None,
            level,
            coverage: order_stat_coverage(n, 1),
        },
    }
}

/// The default threshold of [`outliers`]: Iglewicz & Hoaglin's 3.5.
pub const OUTLIER_K: f64 = 3.5;

/// Flags values far from the median by the modified z-score of Iglewicz &
/// Hoaglin (1993): 0.6745·|x − median| / MAD > `k`, where MAD is the median
/// absolute deviation from the median (unscaled). Use [`OUTLIER_K`] = 3.5
/// unless there is reason not to.
///
/// When MAD = 0 (more than half the values equal the median) the score
/// falls back to the mean absolute deviation, 0.7979·|x − median| / MeanAD
/// (0.7979 ≈ √(2/π), the same standard-normal scaling, as in IBM's
/// definition of the modified z-score), so one stray value among identical
/// ones is judged by how far it strays instead of always being flagged.
/// When every value equals the median nothing is flagged. Reference: the
/// same rule in NumPy (reference section `outliers`).
pub fn outliers(xs: &[f64], k: f64) -> Vec<bool> {
    let med = median(xs);
    let dev: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&dev);
    let scale = if mad > 0.0 {
        0.6745 / mad
    } else {
        let mean_ad = dev.iter().sum::<f64>() / dev.len().max(1) as f64;
        if mean_ad > 0.0 {
            0.7979 / mean_ad
        } else {
            return vec![false; xs.len()];
        }
    };
    dev.iter().map(|d| scale * d > k).collect()
}

/// Whether `count` samples are enough to quote the percentile `q` (0.99
/// for p99): `count` ≥ 100 / (1 − q), so that about 100 samples lie beyond
/// it: 10 000 for p99, 100 000 for p99.9, 200 for the median. False for
/// q ≥ 1; the threshold is rounded to the nearest integer when it is
/// within 1e-6 of one, so float noise in 1 − q does not shift it.
pub fn enough_for(count: u64, q: f64) -> bool {
    if q.is_nan() || q >= 1.0 {
        return false;
    }
    let mut need = 100.0 / (1.0 - q);
    if (need - need.round()).abs() < 1e-6 * need.max(1.0) {
        need = need.round();
    }
    count as f64 >= need
}

/// The default number of batches of [`batch_means_ci`].
pub const BATCHES: usize = 10;

/// A confidence interval for the mean of one run's per-second figures by
/// the method of batch means: split `ys` into `batches` contiguous batches
/// (sizes differ by at most one, the larger first, as `numpy.array_split`),
/// take each batch's mean, and return (mean of the batch means, lo, hi)
/// with a Student t interval on `batches − 1` degrees of freedom.
///
/// Batching absorbs the autocorrelation of neighbouring seconds that a
/// naive per-second interval ignores. `None` for fewer than 2 batches or
/// fewer values than batches. Reference: NumPy + `scipy.stats.t.ppf`
/// (reference section `batch_means`).
pub fn batch_means_ci(ys: &[f64], batches: usize, level: f64) -> Option<(f64, f64, f64)> {
    let n = ys.len();
    if batches < 2 || n < batches || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let (size, extra) = (n / batches, n % batches);
    let mut means = Vec::with_capacity(batches);
    let mut start = 0;
    for i in 0..batches {
        let len = size + usize::from(i < extra);
        let batch = &ys[start..start + len];
        means.push(batch.iter().sum::<f64>() / len as f64);
        start += len;
    }
    let (mean, sd) = mean_sd(&means);
    let half = t_quantile((1.0 + level) / 2.0, (batches - 1) as f64) * sd / (batches as f64).sqrt();
    Some((mean, mean - half, mean + half))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::reference::{close, floats, reference};

    #[test]
    fn median_and_mean_sd_match_numpy() {
        for case in reference()["describe"].as_array().unwrap() {
            let xs = floats(&case["xs"]);
            close(
                median(&xs),
                case["median"].as_f64().unwrap(),
                1e-12,
                "median",
            );
            let (m, sd) = mean_sd(&xs);
            close(m, case["mean"].as_f64().unwrap(), 1e-12, "mean");
            match case["sd"].as_f64() {
                Some(want) => close(sd, want, 1e-12, "sd"),
                None => assert!(sd.is_nan()),
            }
        }
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn median_ci_table_matches_binomial() {
        for row in reference()["median_ci"]["table"].as_array().unwrap() {
            let n = row["n"].as_u64().unwrap() as usize;
            let level = row["level"].as_f64().unwrap();
            let xs: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let ci = median_ci(&xs, level);
            match row["k"].as_u64() {
                Some(k) => {
                    let k = k as usize;
                    assert_eq!(ci.rank, Some(k), "n={n} level={level}");
                    assert_eq!(ci.lo, Some((k - 1) as f64));
                    assert_eq!(ci.hi, Some((n - k) as f64));
                    let want = row["coverage"].as_f64().unwrap();
                    close(ci.coverage, want, 1e-9, &format!("coverage n={n}"));
                }
                None => {
                    assert_eq!(ci.rank, None, "n={n} level={level}");
                    assert!(ci.lo.is_none() && ci.hi.is_none());
                    assert!(ci.coverage < level);
                }
            }
        }
    }

    #[test]
    fn median_ci_matches_scipy_quantile_test() {
        for case in reference()["median_ci"]["samples"].as_array().unwrap() {
            let xs = floats(&case["xs"]);
            let ci = median_ci(&xs, case["level"].as_f64().unwrap());
            close(ci.median, case["median"].as_f64().unwrap(), 1e-12, "median");
            assert_eq!(ci.lo, case["lo"].as_f64(), "lo of {xs:?}");
            assert_eq!(ci.hi, case["hi"].as_f64(), "hi of {xs:?}");
        }
    }

    #[test]
    fn median_ci_needs_six_values_for_95() {
        assert!(median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95).lo.is_none());
        let ci = median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.95);
        assert_eq!((ci.lo, ci.hi), (Some(1.0), Some(6.0)));
        close(ci.coverage, 1.0 - 2.0 / 64.0, 1e-15, "n=6");
        assert_eq!(median_ci(&[], 0.95).coverage, 0.0);
    }

    #[test]
    fn outliers_match_reference() {
        for case in reference()["outliers"].as_array().unwrap() {
            let xs = floats(&case["xs"]);
            let want: Vec<bool> = case["flags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| b.as_bool().unwrap())
                .collect();
            assert_eq!(outliers(&xs, case["k"].as_f64().unwrap()), want, "{xs:?}");
        }
    }

    #[test]
    fn enough_for_uses_100_beyond_the_percentile() {
        assert!(enough_for(10_000, 0.99));
        assert!(!enough_for(9_999, 0.99));
        assert!(enough_for(100_000, 0.999));
        assert!(!enough_for(99_999, 0.999));
        assert!(enough_for(200, 0.5));
        assert!(!enough_for(199, 0.5));
        assert!(!enough_for(u64::MAX, 1.0));
    }

    #[test]
    fn batch_means_match_scipy() {
        for case in reference()["batch_means"].as_array().unwrap() {
            let ys = floats(&case["ys"]);
            let b = case["batches"].as_u64().unwrap() as usize;
            let (m, lo, hi) = batch_means_ci(&ys, b, case["level"].as_f64().unwrap()).unwrap();
            close(m, case["mean"].as_f64().unwrap(), 1e-12, "mean");
            close(lo, case["lo"].as_f64().unwrap(), 1e-11, "lo");
            close(hi, case["hi"].as_f64().unwrap(), 1e-11, "hi");
        }
        assert!(batch_means_ci(&[1.0; 5], 10, 0.95).is_none());
        assert!(batch_means_ci(&[1.0; 5], 1, 0.95).is_none());
    }
}
