//! The Mann–Whitney U test, the smallest sample that can reach a given
//! significance, and Holm's adjustment for several tests at once.

use serde::{Deserialize, Serialize};

use super::special::normal_sf;

/// The result of [`mann_whitney`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U of the first sample: the number of pairs (x from a, y from b) with
    /// x > y, ties counting ½ — what `scipy.stats.mannwhitneyu(a, b)`
    /// returns as its statistic.
    pub u: f64,
    /// The two-sided p-value.
    pub p: f64,
    /// Whether `p` comes from the exact null distribution (else the normal
    /// approximation with tie and continuity corrections).
    pub exact: bool,
}

/// Average ranks (1-based) of `xs`, and the sizes of the groups of tied values.
pub(crate) fn ranks(xs: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let mut idx: Vec<usize> = (0..xs.len()).collect();
    idx.sort_by(|&i, &j| xs[i].total_cmp(&xs[j]));
    let mut ranks = vec![0.0; xs.len()];
    let mut ties = Vec::new();
    let mut i = 0;
    while i < idx.len() {
        let mut j = i + 1;
        while j < idx.len() && xs[idx[j]] == xs[idx[i]] {
            j += 1;
        }
        // Positions i..j (0-based) share the ranks i+1..=j: average (i+1+j)/2.
        let r = (i + 1 + j) as f64 / 2.0;
        for &k in &idx[i..j] {
            ranks[k] = r;
        }
        ties.push(j - i);
        i = j;
    }
    (ranks, ties)
}

/// The two-sided Mann–Whitney U (Wilcoxon rank-sum) test of `a` against `b`,
/// matching `scipy.stats.mannwhitneyu(a, b, alternative='two-sided',
/// method='auto')` (SciPy ≥ 1.7; checked against 1.17):
///
/// * exact when there are no ties and at least one sample has 8 values or
///   fewer (SciPy's `_mwu_choose_method`: asymptotic only if both exceed 8
///   or there are ties): p = 2·P(U ≤ min(U₁, U₂)) from the null distribution
///   of U (the coefficients of the Gaussian binomial [n₁+n₂ choose n₁]_q,
///   in exact 128-bit integers), capped at 1;
/// * otherwise the normal approximation: z = (max(U₁, U₂) − n₁n₂/2 − ½) / s
///   with s² = n₁n₂/12 · ((n + 1) − Σ(t³ − t)/(n(n − 1))) over tie groups t,
///   p = 2·(1 − Φ(z)), capped at 1 (p = 1 when every value is tied).
///
/// `None` when either sample is empty. Inputs should be finite.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let all: Vec<f64> = a.iter().chain(b).copied().collect();
    let (r, ties) = ranks(&all);
    let r1: f64 = r[..n1].iter().sum();
    let (f1, f2) = (n1 as f64, n2 as f64);
    let u1 = r1 - f1 * (f1 + 1.0) / 2.0;
    let u2 = f1 * f2 - u1;
    let has_ties = ties.iter().any(|&t| t > 1);
    let exact = (n1 <= 8 || n2 <= 8) && !has_ties;
    let p = if exact {
        let c = u1.min(u2).round() as usize;
        2.0 * exact_u_cdf(n1.min(n2), n1.max(n2), c)
    } else {
        let n = f1 + f2;
        let tie_term: f64 = ties.iter().map(|&t| (t as f64).powi(3) - t as f64).sum();
        let s = (f1 * f2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))).sqrt();
        let z = (u1.max(u2) - f1 * f2 / 2.0 - 0.5) / s;
        if s > 0.0 {
            2.0 * normal_sf(z)
        } else {
            // All values tied: z = −0.5/0 = −∞ in SciPy, p = 2 → 1.
            1.0
        }
    };
    Some(MannWhitney {
        u: u1,
        p: p.clamp(0.0, 1.0),
        exact,
    })
}

/// P(U ≤ c) under the null for samples of sizes m ≤ n without ties.
///
/// The counts of arrangements with U = u are the coefficients of the
/// Gaussian binomial [m+n choose m]_q, built as
/// Π_{i=1..m} (1 − q^{n+i}) / (1 − q^i), truncated at degree c; every
/// intermediate product is itself a Gaussian binomial, so the arithmetic
/// stays in non-negative integers. When C(m+n, m) overflows u128 (only for
/// n in the hundreds of thousands) the same recursion runs in f64.
pub(crate) fn exact_u_cdf(m: usize, n: usize, c: usize) -> f64 {
    let mut total: Option<u128> = Some(1);
    for i in 1..=m {
        total = total
            .and_then(|t| t.checked_mul((n + i) as u128))
            .map(|t| t / i as u128);
    }
    match total {
        Some(total) => {
            let counts = gaussian_binomial_prefix::<u128>(m, n, c);
            let below: u128 = counts.iter().sum();
            below as f64 / total as f64
        }
        None => {
            let counts = gaussian_binomial_prefix::<f64>(m, n, c);
            let mut total = 1.0;
            for i in 1..=m {
                total = total * (n + i) as f64 / i as f64;
            }
            counts.iter().sum::<f64>() / total
        }
    }
}

/// Coefficients 0..=c of the Gaussian binomial [m+n choose m]_q.
fn gaussian_binomial_prefix<T>(m: usize, n: usize, c: usize) -> Vec<T>
where
    T: Copy + Default + From<u8> + std::ops::Add<Output = T> + std::ops::Sub<Output = T>,
{
    let mut g = vec![T::default(); c + 1];
    g[0] = T::from(1);
    for i in 1..=m {
        // Divide by (1 − q^i): a running sum with stride i.
        for u in i..=c {
            g[u] = g[u] + g[u - i];
        }
        // Multiply by (1 − q^{n+i}), from the top so g[u − d] is still old.
        let d = n + i;
        for u in (d..=c).rev() {
            g[u] = g[u] - g[u - d];
        }
    }
    g
}

/// The smallest two-sided exact Mann–Whitney p-value with `n` values per
/// side: 2 / C(2n, n) (every value of one side above every value of the
/// other, no ties).
pub fn min_p_with(n: usize) -> f64 {
    let mut c = 1.0;
    for i in 1..=n {
        c = c * (n + i) as f64 / i as f64;
    }
    (2.0 / c).min(1.0)
}

/// The fewest runs per side with which a two-sided Mann–Whitney test can
/// ever give p < `alpha`: the smallest n with 2 / C(2n, n) < alpha.
///
/// With 3 per side the best possible p is 2/20 = 0.10, with 4 it is
/// 2/70 ≈ 0.029, so at alpha = 0.05 the answer is 4 (5 at 0.01, 7 at
/// 0.001). Below it no difference, however large, can be called
/// significant. `usize::MAX` when alpha ≤ 0.
pub fn min_per_side_for(alpha: f64) -> usize {
    if alpha.is_nan() || alpha <= 0.0 {
        return usize::MAX;
    }
    (1..=1000)
        .find(|&n| min_p_with(n) < alpha)
        .unwrap_or(usize::MAX)
}

/// Holm–Bonferroni adjusted p-values, in the order given: sort ascending,
/// multiply the i-th smallest (from 0) by (m − i), carry the running maximum
/// so the adjusted values keep the raw order, cap at 1. Reject at level
/// alpha exactly those whose adjusted p < alpha. Matches statsmodels'
/// `multipletests(ps, method='holm')[1]`.
pub fn holm(ps: &[f64]) -> Vec<f64> {
    let m = ps.len();
    let mut idx: Vec<usize> = (0..m).collect();
    idx.sort_by(|&i, &j| ps[i].total_cmp(&ps[j]));
    let mut out = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in idx.iter().enumerate() {
        let adj = ((m - rank) as f64 * ps[i]).min(1.0);
        running = running.max(adj);
        out[i] = running;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::reference::{close, floats, reference};

    #[test]
    fn mann_whitney_matches_scipy() {
        let cases = reference()["mann_whitney"]["cases"].as_array().unwrap();
        for case in cases {
            let (a, b) = (floats(&case["a"]), floats(&case["b"]));
            let got = mann_whitney(&a, &b).unwrap();
            let what = format!("a={a:?} b={b:?}");
            close(got.u, case["u"].as_f64().unwrap(), 1e-12, &what);
            close(got.p, case["p"].as_f64().unwrap(), 1e-9, &what);
            assert_eq!(got.exact, case["exact"].as_bool().unwrap(), "{what}");
        }
        assert!(mann_whitney(&[], &[1.0]).is_none());
    }

    #[test]
    fn exact_distribution_is_symmetric_and_sums_to_one() {
        for (m, n) in [(1, 1), (3, 5), (8, 8), (8, 40), (4, 200)] {
            let all = gaussian_binomial_prefix::<u128>(m, n, m * n);
            let total: u128 = all.iter().sum();
            let mut c: u128 = 1;
            for i in 1..=m {
                c = c * (n + i) as u128 / i as u128;
            }
            assert_eq!(total, c, "m={m} n={n}");
            for u in 0..=m * n {
                assert_eq!(all[u], all[m * n - u]);
            }
        }
        // The f64 path agrees with the integer one.
        let a = gaussian_binomial_prefix::<f64>(8, 300, 900);
        let b = gaussian_binomial_prefix::<u128>(8, 300, 900);
        for (x, y) in a.iter().zip(&b) {
            close(*x, *y as f64, 1e-12, "f64 path");
        }
    }

    #[test]
    fn too_few_per_side() {
        for pair in reference()["mann_whitney"]["min_p"].as_array().unwrap() {
            let n = pair[0].as_u64().unwrap() as usize;
            close(
                min_p_with(n),
                pair[1].as_f64().unwrap(),
                1e-12,
                &format!("n={n}"),
            );
        }
        for pair in reference()["mann_whitney"]["min_per_side"]
            .as_array()
            .unwrap()
        {
            let alpha = pair[0].as_f64().unwrap();
            assert_eq!(
                min_per_side_for(alpha) as u64,
                pair[1].as_u64().unwrap(),
                "{alpha}"
            );
        }
        assert_eq!(min_per_side_for(0.05), 4);
        assert_eq!(min_per_side_for(0.0), usize::MAX);
    }

    #[test]
    fn holm_matches_statsmodels() {
        for case in reference()["holm"].as_array().unwrap() {
            let ps = floats(&case["p"]);
            let want = floats(&case["adjusted"]);
            let got = holm(&ps);
            for (g, w) in got.iter().zip(&want) {
                close(*g, *w, 1e-15, &format!("holm({ps:?})"));
            }
        }
        assert!(holm(&[]).is_empty());
    }
}
