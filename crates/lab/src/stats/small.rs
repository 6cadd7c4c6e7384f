//! Verdicts from 3–6 repetitions a side, and how sure they are.
//!
//! No rank or permutation test can reject at 5% with 3 runs a side: the
//! most extreme of the C(6, 3) = 20 arrangements has p = 2/20 = 0.10. An
//! answer at that scale needs a model of the run-to-run noise, so the
//! verdict's test is Welch's t-test on the logarithms of the figures
//! ([`welch_log`]): it is exact when a run's figure is its true level times
//! a log-normal noise (multiplicative, what throughput and latency show),
//! its interval is one for the *ratio* of the two levels, and it needs only
//! 2 runs a side. Beside it, free of any model:
//!
//! * [`permutation_p`], the exact permutation test of the difference of
//!   means (every split of the pooled runs), whose p is what the runs say
//!   without the log-normal assumption (its floor is shown: 0.10 at 3 a
//!   side);
//! * [`hodges_lehmann`], the Hodges–Lehmann estimate of the log ratio and
//!   its distribution-free interval from the exact Mann–Whitney
//!   distribution, with the coverage it actually has (90% at 3 a side, as
//!   there is no 95% one).
//!
//! And what the design could have seen: [`detectable`] is the smallest
//! change the test finds with a stated power given the observed spread,
//! [`power`] the chance it finds a given change, [`runs_for`] the runs a
//! side a change needs. Reference values: `reference.json`'s `small`
//! section (SciPy's `ttest_ind`, `permutation_test`, brute-force
//! Hodges–Lehmann, statsmodels' `TTestIndPower`).

use serde::{Deserialize, Serialize};

use super::rank::exact_u_cdf;
use super::special::{normal_cdf, t_cdf, t_quantile};

/// The power the "smallest detectable change" is stated at.
pub const POWER: f64 = 0.8;

/// Welch's t-test on the logarithms: median-free, ratio-scale.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WelchLog {
    /// exp(mean(ln b) − mean(ln a)) − 1: the change of the geometric means.
    pub change: f64,
    /// Its interval at the level asked, exp(d ± t·se) − 1.
    pub ci: (f64, f64),
    /// The two-sided p-value.
    pub p: f64,
    /// Welch–Satterthwaite degrees of freedom (NaN when both spreads are 0).
    pub df: f64,
    /// The standard error of the difference of mean logs.
    pub se: f64,
    /// The pooled standard deviation of the logs, √(((nₐ−1)sₐ² + (n_b−1)s_b²) / (nₐ+n_b−2)):
    /// the relative run-to-run spread the power statements use.
    pub sd_log: f64,
}

/// Welch's two-sided t-test of ln `b` against ln `a` at `level`, as
/// `scipy.stats.ttest_ind(ln b, ln a, equal_var=False)` and its
/// `confidence_interval(level)`, mapped back by exp(·) − 1.
///
/// `None` when a side has fewer than 2 values or any value is not > 0 (the
/// log is undefined). When both sides have no spread at all (SciPy: NaN),
/// the change is certain: p = 1 for equal sides, 0 otherwise, and the
/// interval is the change itself.
pub fn welch_log(a: &[f64], b: &[f64], level: f64) -> Option<WelchLog> {
    if a.len() < 2
        || b.len() < 2
        || a.iter()
            .chain(b)
            .any(|x| x.is_nan() || *x <= 0.0 || x.is_infinite())
    {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
    let (ma, va) = mean_var(&la);
    let (mb, vb) = mean_var(&lb);
    let (na, nb) = (la.len() as f64, lb.len() as f64);
    let d = mb - ma;
    let (qa, qb) = (va / na, vb / nb);
    let se = (qa + qb).sqrt();
    let sd_log = (((na - 1.0) * va + (nb - 1.0) * vb) / (na + nb - 2.0)).sqrt();
    if se == 0.0 {
        let c = d.exp() - 1.0;
        return Some(WelchLog {
            change: c,
            ci: (c, c),
            p: if d == 0.0 { 1.0 } else { 0.0 },
            df: f64::NAN,
            se,
            sd_log,
        });
    }
    let df = (qa + qb).powi(2) / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0));
    let t = d / se;
    let p = (2.0 * t_cdf(-t.abs(), df)).min(1.0);
    let q = t_quantile((1.0 + level) / 2.0, df);
    Some(WelchLog {
        change: d.exp() - 1.0,
        ci: ((d - q * se).exp() - 1.0, (d + q * se).exp() - 1.0),
        p,
        df,
        se,
        sd_log,
    })
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, v)
}

/// The most splits [`permutation_p`] enumerates (C(20, 10) = 184 756 fits).
pub const MAX_PERMUTATIONS: u64 = 200_000;

/// The exact two-sided permutation test of mean(b) − mean(a): over every
/// way of splitting the pooled values into groups of the same sizes,
/// p = 2·min(P(T ≤ t), P(T ≥ t)), capped at 1 — as
/// `scipy.stats.permutation_test((b, a), statistic=mean(x) − mean(y),
/// permutation_type='independent', n_resamples=inf)` (same tolerance for
/// ties: 1e-14 relative). `None` when a side is empty or there are more than
/// [`MAX_PERMUTATIONS`] splits. With 3 a side the smallest p is 0.10.
pub fn permutation_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (na, nb) = (a.len(), b.len());
    if na == 0 || nb == 0 || binomial(na + nb, nb) > MAX_PERMUTATIONS as f64 {
        return None;
    }
    let all: Vec<f64> = b.iter().chain(a).copied().collect();
    let total: f64 = all.iter().sum();
    let stat = |sum_b: f64| sum_b / nb as f64 - (total - sum_b) / na as f64;
    let observed = stat(b.iter().sum());
    let gamma = (1e-14 * observed).abs();
    let (mut le, mut ge, mut count) = (0u64, 0u64, 0u64);
    // Every nb-subset of the pooled indices, in lexicographic order.
    let n = all.len();
    let mut idx: Vec<usize> = (0..nb).collect();
    loop {
        let s: f64 = idx.iter().map(|&i| all[i]).sum();
        let t = stat(s);
        le += u64::from(t <= observed + gamma);
        ge += u64::from(t >= observed - gamma);
        count += 1;
        // Next combination.
        let mut i = nb;
        loop {
            if i == 0 {
                let p = 2.0 * le.min(ge) as f64 / count as f64;
                return Some(p.min(1.0));
            }
            i -= 1;
            if idx[i] != i + n - nb {
                break;
            }
        }
        idx[i] += 1;
        for j in i + 1..nb {
            idx[j] = idx[j - 1] + 1;
        }
    }
}

fn binomial(n: usize, k: usize) -> f64 {
    (1..=k).fold(1.0, |c, i| c * (n - k + i) as f64 / i as f64)
}

/// The Hodges–Lehmann estimate of the change and its distribution-free
/// interval (see [`hodges_lehmann`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HodgesLehmann {
    /// exp(median of ln bⱼ − ln aᵢ over all pairs) − 1.
    pub change: f64,
    /// exp of the k-th smallest and k-th largest pairwise differences − 1.
    pub ci: (f64, f64),
    /// The coverage that pair has, 1 − 2·P(U ≤ k − 1) under the exact null
    /// distribution of U (no ties): at least the level asked when any pair
    /// reaches it, else the most there is (k = 1).
    pub coverage: f64,
}

/// [`HodgesLehmann`] of ln `b` − ln `a` at `level` (Bauer 1972: the
/// interval of a shift from the Mann–Whitney distribution). `None` when a
/// side is empty or a value is not > 0.
pub fn hodges_lehmann(a: &[f64], b: &[f64], level: f64) -> Option<HodgesLehmann> {
    let (m, n) = (a.len(), b.len());
    if m == 0
        || n == 0
        || a.iter()
            .chain(b)
            .any(|x| x.is_nan() || *x <= 0.0 || x.is_infinite())
    {
        return None;
    }
    let mut d: Vec<f64> = a
        .iter()
        .flat_map(|x| b.iter().map(move |y| y.ln() - x.ln()))
        .collect();
    d.sort_by(f64::total_cmp);
    let mn = d.len();
    let est = if mn % 2 == 1 {
        d[mn / 2]
    } else {
        (d[mn / 2 - 1] + d[mn / 2]) / 2.0
    };
    let coverage = |k: usize| 1.0 - 2.0 * exact_u_cdf(m.min(n), m.max(n), k - 1);
    let mut k = 1;
    while 2 * (k + 1) <= mn && coverage(k + 1) >= level {
        k += 1;
    }
    Some(HodgesLehmann {
        change: est.exp() - 1.0,
        ci: (d[k - 1].exp() - 1.0, d[mn - k].exp() - 1.0),
        coverage: coverage(k),
    })
}

/// The chance that Welch's test at `alpha` (two-sided) rejects when the
/// true difference is `delta` standard errors on `df` degrees of freedom:
/// P(T′ > t₁₋α/₂) for T′ noncentral t, by Abramowitz & Stegun 26.7.10
/// (Φ((δ − t(1 − 1/(4df))) / √(1 + t²/(2df))); within 0.01 of statsmodels'
/// exact noncentral t from 3 runs a side, see the reference).
fn power_at(delta: f64, df: f64, alpha: f64) -> f64 {
    let t = t_quantile(1.0 - alpha / 2.0, df);
    normal_cdf((delta - t * (1.0 - 1.0 / (4.0 * df))) / (1.0 + t * t / (2.0 * df)).sqrt())
}

/// The smallest change (relative, > 0) that Welch's test on logs, at
/// `alpha` two-sided, finds beyond ±`practical` with probability `power`,
/// given the relative run-to-run spread `sd_log` (standard deviation of the
/// logs) and `na`, `nb` runs: exp(ln(1 + practical) + δ·sd_log·√(1/nₐ + 1/n_b)) − 1
/// where δ (in standard errors, on nₐ + n_b − 2 degrees of freedom) solves
/// `power_at` = `power`. NaN when a side has fewer than 2 runs or the
/// spread is not finite.
pub fn detectable(
    sd_log: f64,
    na: usize,
    nb: usize,
    alpha: f64,
    power: f64,
    practical: f64,
) -> f64 {
    if na < 2 || nb < 2 || !sd_log.is_finite() || !(power > 0.0 && power < 1.0) {
        return f64::NAN;
    }
    let df = (na + nb - 2) as f64;
    // power_at grows with delta: bisect on [0, 100].
    let (mut lo, mut hi) = (0.0, 100.0);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if power_at(mid, df, alpha) < power {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let se = sd_log * (1.0 / na as f64 + 1.0 / nb as f64).sqrt();
    ((1.0 + practical).ln() + hi * se).exp() - 1.0
}

/// The probability that a true relative change `change` (> 0 or < 0) is
/// found beyond ±`practical` with `na`, `nb` runs and spread `sd_log`: the
/// inverse of [`detectable`], same approximation.
pub fn power(sd_log: f64, na: usize, nb: usize, alpha: f64, change: f64, practical: f64) -> f64 {
    if na < 2 || nb < 2 || !sd_log.is_finite() {
        return f64::NAN;
    }
    let df = (na + nb - 2) as f64;
    let se = sd_log * (1.0 / na as f64 + 1.0 / nb as f64).sqrt();
    let margin = (1.0 + change).ln().abs() - (1.0 + practical).ln();
    if se == 0.0 {
        return if margin > 0.0 { 1.0 } else { 0.0 };
    }
    power_at(margin / se, df, alpha)
}

/// The fewest runs a side (equal sides, 2 to 1000) with which a change of
/// `change` is found with probability `power` ([`detectable`]); `None`
/// beyond 1000 or when the change is within the practical threshold.
pub fn runs_for(sd_log: f64, change: f64, alpha: f64, power: f64, practical: f64) -> Option<usize> {
    let target = (1.0 + change).ln().abs();
    (2..=1000).find(|&n| (1.0 + detectable(sd_log, n, n, alpha, power, practical)).ln() <= target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::reference::{close, floats, small};

    #[test]
    fn welch_log_matches_scipy() {
        for case in small()["welch_log"].as_array().unwrap() {
            let (a, b) = (floats(&case["a"]), floats(&case["b"]));
            let w = welch_log(&a, &b, 0.95).unwrap();
            let what = format!("a={a:?} b={b:?}");
            close(w.change, case["change"].as_f64().unwrap(), 1e-12, &what);
            close(w.p, case["p"].as_f64().unwrap(), 1e-8, &what);
            close(w.df, case["df"].as_f64().unwrap(), 1e-10, &what);
            close(w.ci.0, case["lo"].as_f64().unwrap(), 1e-8, &what);
            close(w.ci.1, case["hi"].as_f64().unwrap(), 1e-8, &what);
        }
        assert!(welch_log(&[1.0], &[1.0, 2.0], 0.95).is_none());
        assert!(welch_log(&[0.0, 1.0], &[1.0, 2.0], 0.95).is_none());
        let same = welch_log(&[5.0, 5.0], &[5.0, 5.0], 0.95).unwrap();
        assert_eq!((same.p, same.ci), (1.0, (0.0, 0.0)));
    }

    #[test]
    fn permutation_matches_scipy() {
        for case in small()["permutation"].as_array().unwrap() {
            let (a, b) = (floats(&case["a"]), floats(&case["b"]));
            let p = permutation_p(&a, &b).unwrap();
            close(
                p,
                case["p"].as_f64().unwrap(),
                1e-12,
                &format!("a={a:?} b={b:?}"),
            );
        }
        // 3 a side, fully separated: 2/20, the floor.
        close(
            permutation_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap(),
            0.1,
            1e-12,
            "floor",
        );
        assert!(permutation_p(&[], &[1.0]).is_none());
        assert!(permutation_p(&[1.0; 12], &[2.0; 12]).is_none());
    }

    #[test]
    fn hodges_lehmann_matches_brute_force() {
        for case in small()["hodges_lehmann"].as_array().unwrap() {
            let (a, b) = (floats(&case["a"]), floats(&case["b"]));
            let level = case["level"].as_f64().unwrap();
            let h = hodges_lehmann(&a, &b, level).unwrap();
            let what = format!("a={a:?} b={b:?} level={level}");
            close(h.change, case["change"].as_f64().unwrap(), 1e-12, &what);
            close(h.ci.0, case["lo"].as_f64().unwrap(), 1e-12, &what);
            close(h.ci.1, case["hi"].as_f64().unwrap(), 1e-12, &what);
            close(h.coverage, case["coverage"].as_f64().unwrap(), 1e-12, &what);
        }
    }

    #[test]
    fn detectable_is_near_statsmodels() {
        // statsmodels solves the noncentral t exactly; ours approximates
        // it (A&S 26.7.10): within 2% in effect size, 0.02 in power.
        for case in small()["detectable"].as_array().unwrap() {
            let n = case["n"].as_u64().unwrap() as usize;
            let alpha = case["alpha"].as_f64().unwrap();
            let pw = case["power"].as_f64().unwrap();
            let exact = case["effect_size"].as_f64().unwrap();
            // With sd_log = 1 and practical = 0, ln(1 + detectable) is the
            // effect size in standard deviations.
            let ours = (1.0 + detectable(1.0, n, n, alpha, pw, 0.0)).ln();
            close(
                ours,
                exact,
                0.02,
                &format!("n={n} alpha={alpha} power={pw}"),
            );
            // And the inverse: power at the exact effect size.
            let back = power(1.0, n, n, alpha, exact.exp() - 1.0, 0.0);
            assert!((back - pw).abs() < 0.02, "n={n}: power {back} vs {pw}");
        }
    }

    #[test]
    fn runs_for_is_the_first_n_that_detects() {
        let sd = 0.05;
        let n = runs_for(sd, 0.10, 0.05, POWER, 0.02).unwrap();
        assert!(detectable(sd, n, n, 0.05, POWER, 0.02) <= 0.10);
        assert!(detectable(sd, n - 1, n - 1, 0.05, POWER, 0.02) > 0.10);
        assert_eq!(runs_for(sd, 0.01, 0.05, POWER, 0.02), None);
        // More runs, smaller detectable change.
        assert!(detectable(sd, 6, 6, 0.05, POWER, 0.02) < detectable(sd, 3, 3, 0.05, POWER, 0.02));
    }
}
