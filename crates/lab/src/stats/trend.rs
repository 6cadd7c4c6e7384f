//! Drift within one run: does the per-second throughput trend up or down?
//!
//! A Mann–Kendall test (Kendall's tau of the values against time) says
//! whether there is a monotone trend; the Theil–Sen slope, relative to the
//! median, says how large it is.

use serde::{Deserialize, Serialize};

use super::special::normal_sf;
use super::summary::median_in_place;

/// Series longer than this are first averaged into this many contiguous
/// bins (sizes differing by at most one, the larger first), since the
/// Theil–Sen slope takes all n(n − 1)/2 pairs.
pub const TREND_MAX_POINTS: usize = 2_000;

/// The default `min_total_change` of [`drifts`]: 5 % over the run.
pub const DRIFT_MIN_CHANGE: f64 = 0.05;

/// The result of [`trend`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    /// Theil–Sen slope per step (per second for per-second figures), in
    /// the series' unit.
    pub slope: f64,
    /// `slope` / median of the series.
    pub slope_rel_per_step: f64,
    /// The relative change over the whole run: slope × (n − 1) / median.
    pub total_rel_change: f64,
    /// Two-sided p-value of Kendall's tau between the values and time (the
    /// Mann–Kendall trend test).
    pub p: f64,
    /// The series' median.
    pub median: f64,
    /// Points in the series.
    pub n: usize,
}

/// The trend of a series `ys` measured at equal steps.
///
/// The p-value is that of `scipy.stats.kendalltau(range(n), ys)` (method
/// 'auto'): the exact null distribution of Kendall's statistic when there
/// are no ties and n ≤ 33 (or at most one discordant or concordant pair),
/// else the normal approximation with the tie-corrected variance and, as in
/// SciPy, no continuity correction (the textbook Mann–Kendall test adds
/// one). All values equal gives p = 1 (SciPy gives NaN). The slope is that
/// of `scipy.stats.theilslopes(ys, range(n))`: the median of the slopes of
/// all pairs.
///
/// Series longer than [`TREND_MAX_POINTS`] are averaged into that many bins
/// first; the slope is then converted back to per original step. `None`
/// for fewer than 3 points or a median of 0.
pub fn trend(ys: &[f64]) -> Option<Trend> {
    let n_orig = ys.len();
    if n_orig < 3 {
        return None;
    }
    let (series, step) = if n_orig > TREND_MAX_POINTS {
        (
            bin_means(ys, TREND_MAX_POINTS),
            n_orig as f64 / TREND_MAX_POINTS as f64,
        )
    } else {
        (ys.to_vec(), 1.0)
    };
    let n = series.len();
    let median = median_in_place(&mut ys.to_vec());
    if median == 0.0 || !median.is_finite() {
        return None;
    }
    let p = kendall_time_p(&series);
    let mut slopes = Vec::with_capacity(n * (n - 1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            slopes.push((series[j] - series[i]) / (j - i) as f64);
        }
    }
    let slope = median_in_place(&mut slopes) / step;
    Some(Trend {
        slope,
        slope_rel_per_step: slope / median,
        total_rel_change: slope * (n_orig - 1) as f64 / median,
        p,
        median,
        n: n_orig,
    })
}

/// Whether the series drifts: a significant trend (p < `alpha`) whose
/// total change over the run is at least `min_total_change` in size
/// (default [`DRIFT_MIN_CHANGE`], 5 %).
pub fn drifts(ys: &[f64], alpha: f64, min_total_change: f64) -> bool {
    trend(ys).is_some_and(|t| t.p < alpha && t.total_rel_change.abs() >= min_total_change)
}

/// Means of `bins` contiguous bins, the first n % bins one longer.
fn bin_means(ys: &[f64], bins: usize) -> Vec<f64> {
    let (size, extra) = (ys.len() / bins, ys.len() % bins);
    let mut out = Vec::with_capacity(bins);
    let mut start = 0;
    for i in 0..bins {
        let len = size + usize::from(i < extra);
        out.push(ys[start..start + len].iter().sum::<f64>() / len as f64);
        start += len;
    }
    out
}

/// The two-sided p-value of Kendall's tau between time 0..n and `ys`,
/// as `scipy.stats.kendalltau` with method 'auto'.
fn kendall_time_p(ys: &[f64]) -> f64 {
    let n = ys.len();
    let (mut con, mut dis) = (0u64, 0u64);
    for i in 0..n {
        for j in i + 1..n {
            if ys[j] > ys[i] {
                con += 1;
            } else if ys[j] < ys[i] {
                dis += 1;
            }
        }
    }
    let tot = (n * (n - 1) / 2) as u64;
    // Tie groups in ys.
    let mut sorted = ys.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (mut ytie, mut y1) = (0u64, 0.0f64);
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && sorted[j] == sorted[i] {
            j += 1;
        }
        let t = (j - i) as u64;
        if t > 1 {
            ytie += t * (t - 1) / 2;
            let tf = t as f64;
            y1 += tf * (tf - 1.0) * (2.0 * tf + 5.0);
        }
        i = j;
    }
    if ytie == tot {
        return 1.0;
    }
    if ytie == 0 && (n <= 33 || dis.min(tot - dis) <= 1) {
        return kendall_exact_p(n, tot - dis);
    }
    let nf = n as f64;
    let m = nf * (nf - 1.0);
    let var = (m * (2.0 * nf + 5.0) - y1) / 18.0;
    let z = (con as f64 - dis as f64) / var.sqrt();
    (2.0 * normal_sf(z.abs())).min(1.0)
}

/// SciPy's `_kendall_p_exact(n, c)`, two-sided: with c the concordant
/// count folded to the lower tail, 2·P(fewer than or exactly c inversions)
/// over the n! permutations (Kendall 1970), via the running-sum recursion
/// of the Mahonian numbers.
fn kendall_exact_p(n: usize, c: u64) -> f64 {
    let tot = (n * (n - 1) / 2) as u64;
    let c = c.min(tot - c) as usize;
    let factorial = |k: usize| (1..=k).fold(1.0_f64, |f, i| f * i as f64);
    let p = if n <= 2 {
        1.0
    } else if c == 0 {
        if n < 171 {
            2.0 / factorial(n)
        } else {
            0.0
        }
    } else if c == 1 {
        if n < 172 {
            2.0 / factorial(n - 1)
        } else {
            0.0
        }
    } else if 4 * c as u64 == tot * 2 {
        1.0
    } else {
        // new[k] = number of permutations of j items with k inversions, k ≤ c.
        let mut new = vec![0.0_f64; c + 1];
        new[0] = 1.0;
        new[1] = 1.0;
        for j in 3..=n {
            for k in 1..=c {
                new[k] += new[k - 1];
            }
            if j <= c {
                for k in (j..=c).rev() {
                    new[k] -= new[k - j];
                }
            }
        }
        2.0 * new.iter().sum::<f64>() / factorial(n)
    };
    p.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::reference::{close, floats, reference};

    #[test]
    fn trend_matches_scipy() {
        for case in reference()["trend"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let ys = floats(&case["ys"]);
            let t = trend(&ys).unwrap();
            close(t.p, case["kendall_p"].as_f64().unwrap(), 1e-9, name);
            close(t.slope, case["slope"].as_f64().unwrap(), 1e-12, name);
            close(t.median, case["median"].as_f64().unwrap(), 1e-12, name);
            let rel = case["slope_rel_per_step"].as_f64().unwrap();
            close(t.slope_rel_per_step, rel, 1e-12, name);
            let total = case["total_rel_change"].as_f64().unwrap();
            close(t.total_rel_change, total, 1e-12, name);
        }
    }

    #[test]
    fn drift_needs_significance_and_size() {
        let cases = reference()["trend"].as_array().unwrap();
        let get = |name: &str| floats(&cases.iter().find(|c| c["name"] == name).unwrap()["ys"]);
        // +11 % over 60 s: drifts.
        assert!(drifts(&get("drift_up_60"), 0.05, DRIFT_MIN_CHANGE));
        // Flat noise: no drift.
        assert!(!drifts(&get("flat_120"), 0.05, DRIFT_MIN_CHANGE));
        // Significant (p ≈ 0.002) but only −1.5 % over the run: no drift.
        assert!(!drifts(&get("flat_30_exact"), 0.05, DRIFT_MIN_CHANGE));
        assert!(drifts(&get("flat_30_exact"), 0.05, 0.01));
        assert!(trend(&[1.0, 2.0]).is_none());
        let flat = trend(&[5.0; 10]).unwrap();
        assert_eq!((flat.p, flat.slope), (1.0, 0.0));
    }

    #[test]
    fn long_series_are_binned() {
        // 10 000 points rising 10 % in all: binned to 2 000, same answer.
        let ys: Vec<f64> = (0..10_000).map(|i| 1000.0 + 0.01 * i as f64).collect();
        let t = trend(&ys).unwrap();
        close(t.slope, 0.01, 1e-9, "slope per original step");
        close(t.total_rel_change, 0.01 * 9_999.0 / t.median, 1e-9, "total");
        assert!(t.p < 1e-100);
    }
}
