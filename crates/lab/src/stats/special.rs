//! Special functions the tests need, written out so the crate needs no
//! numerics dependency: the normal distribution (CDF, survival function,
//! quantile), log-gamma, the regularized incomplete beta function, Student's
//! t distribution (CDF, quantile) and the Binomial(n, ½) CDF.
//!
//! Each is checked in the unit tests against SciPy (`scipy.stats.norm`,
//! `scipy.stats.t`, `scipy.stats.binom`, `scipy.special.gammaln`) to a
//! relative 1e-12 or better; see `crates/lab/reference/`.

use std::f64::consts::{FRAC_1_SQRT_2, PI};

/// 1/√π.
const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;

/// erf(x) for |x| < 3 by its everywhere-positive series
/// erf x = 2/√π · e^(−x²) · Σ 2ⁿ x^(2n+1) / (1·3·…·(2n+1)).
fn erf_series(x: f64) -> f64 {
    let x2 = x * x;
    let mut term = x;
    let mut sum = x;
    let mut n = 0.0;
    while term.abs() > 1e-17 * sum.abs() {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        sum += term;
    }
    2.0 * FRAC_1_SQRT_PI * (-x2).exp() * sum
}

/// erfc(x) for x ≥ 2 by the continued fraction
/// erfc x = e^(−x²)/√π · 1/(x + ½/(x + 1/(x + 3⁄2/(x + …)))) (modified Lentz).
fn erfc_cf(x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for k in 1..2000 {
        let a = f64::from(k) / 2.0;
        d = x + a * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = x + a / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() * FRAC_1_SQRT_PI / f
}

/// The complementary error function erfc(x) = 1 − erf(x), accurate to a
/// relative ~1e-14 over the whole line (also deep in the upper tail).
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.0 {
        1.0 - erf_series(x)
    } else if x > 27.3 {
        0.0
    } else {
        erfc_cf(x)
    }
}

/// The standard normal CDF Φ(x); matches `scipy.stats.norm.cdf`.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x * FRAC_1_SQRT_2)
}

/// The standard normal survival function 1 − Φ(x), accurate in the upper
/// tail; matches `scipy.stats.norm.sf`.
pub fn normal_sf(x: f64) -> f64 {
    0.5 * erfc(x * FRAC_1_SQRT_2)
}

/// The standard normal quantile Φ⁻¹(p) for 0 < p < 1 (−∞ at 0, +∞ at 1,
/// NaN outside): Acklam's rational start refined by two Halley steps on
/// [`normal_cdf`]; matches `scipy.stats.norm.ppf`.
pub fn normal_quantile(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    if p > 0.5 {
        // 1 − p is exact for p in [½, 1].
        return -lower_normal_quantile(1.0 - p);
    }
    lower_normal_quantile(p)
}

/// Φ⁻¹(p) for 0 < p ≤ ½.
fn lower_normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let mut x = if p < 0.02425 {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    for _ in 0..2 {
        let e = normal_cdf(x) - p;
        let u = e * (2.0 * PI).sqrt() * (x * x / 2.0).exp();
        x -= u / (1.0 + x * u / 2.0);
    }
    x
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; Stirling's series past 10);
/// matches `scipy.special.gammaln`.
pub fn ln_gamma(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return f64::NAN;
    }
    if x >= 10.0 {
        // Stirling: (x−½)ln x − x + ½ln 2π + 1/(12x) − 1/(360x³) + 1/(1260x⁵) − 1/(1680x⁷)
        let r = 1.0 / x;
        let r2 = r * r;
        let series = r
            * (1.0 / 12.0
                - r2 * (1.0 / 360.0 - r2 * (1.0 / 1260.0 - r2 * (1.0 / 1680.0 - r2 / 1188.0))));
        return (x - 0.5) * x.ln() - x + 0.918_938_533_204_672_8 + series;
    }
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
        return (PI / (PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    const G: f64 = 7.0;
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let mut a = COEF[0];
    let t = x + G + 0.5;
    for (i, c) in COEF.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularized incomplete beta function I_x(a, b), given both x and
/// y = 1 − x (so that callers keep precision near 1). Continued fraction
/// (Numerical Recipes' `betacf`, modified Lentz) on the side where it
/// converges fast.
pub fn inc_beta(a: f64, b: f64, x: f64, y: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if y <= 0.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * y.ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_cf(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_cf(b, a, y) / b
    }
}

/// The continued fraction for I_x(a, b) (NR 6.4).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..10_000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// Student's t CDF with `df` > 0 degrees of freedom; matches
/// `scipy.stats.t.cdf`.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 1.0 } else { 0.0 };
    }
    // The one-sided tail P(T > |t|) = ½·I_{df/(df+t²)}(df/2, ½), computed
    // directly so that small tails keep their relative precision.
    let t2 = t * t;
    let tail = inc_beta(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2)) / 2.0;
    if t > 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// Student's t density.
fn t_pdf(t: f64, df: f64) -> f64 {
    let ln = ln_gamma((df + 1.0) / 2.0)
        - ln_gamma(df / 2.0)
        - 0.5 * (df * PI).ln()
        - (df + 1.0) / 2.0 * (t * t / df).ln_1p();
    ln.exp()
}

/// Student's t quantile for 0 < p < 1 and `df` > 0 (bracketing, then
/// Newton steps safeguarded by bisection on [`t_cdf`]); matches
/// `scipy.stats.t.ppf`.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p.is_nan() || df.is_nan() || df <= 0.0 || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    if p == 0.5 {
        return 0.0;
    }
    if p > 0.5 {
        // 1 − p is exact for p in [½, 1].
        return -lower_t_quantile(1.0 - p, df);
    }
    lower_t_quantile(p, df)
}

/// The t quantile for 0 < q < ½ (a negative number).
fn lower_t_quantile(q: f64, df: f64) -> f64 {
    let mut hi = 0.0_f64; // t_cdf(hi) ≥ q
    let mut lo = -1.0_f64; // t_cdf(lo) < q once bracketed
    while t_cdf(lo, df) >= q {
        hi = lo;
        lo *= 2.0;
        if !lo.is_finite() {
            return f64::NEG_INFINITY;
        }
    }
    // Start from the normal quantile when it lies in the bracket.
    let z = normal_quantile(q);
    let mut t = if z > lo && z < hi { z } else { 0.5 * (lo + hi) };
    for _ in 0..300 {
        let f = t_cdf(t, df) - q;
        if f == 0.0 {
            return t;
        }
        if f < 0.0 {
            lo = t;
        } else {
            hi = t;
        }
        let newton = t - f / t_pdf(t, df);
        let next = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if (next - t).abs() <= 1e-15 * t.abs() || hi - lo <= 1e-15 * lo.abs() {
            return next;
        }
        t = next;
    }
    t
}

/// P(B ≤ k) for B ~ Binomial(n, ½); matches `scipy.stats.binom.cdf(k, n, 0.5)`.
pub fn binom_half_cdf(k: u64, n: u64) -> f64 {
    if k >= n {
        return 1.0;
    }
    if 2 * k >= n {
        // P(B ≤ k) = 1 − P(B ≥ k+1) = 1 − P(B ≤ n−k−1) by symmetry.
        return 1.0 - binom_half_cdf(n - k - 1, n);
    }
    // Lower tail: sum pmf(k), pmf(k−1), … downwards.
    let nf = n as f64;
    let mut pmf = if n <= 1000 {
        // Exact start 2⁻ⁿ and the upward product: one rounding per step.
        let mut v = 0.5_f64.powi(n as i32);
        for i in 0..k {
            v = v * (nf - i as f64) / (i as f64 + 1.0);
        }
        v
    } else {
        let kf = k as f64;
        (ln_gamma(nf + 1.0)
            - ln_gamma(kf + 1.0)
            - ln_gamma(nf - kf + 1.0)
            - nf * std::f64::consts::LN_2)
            .exp()
    };
    let mut sum = 0.0;
    let mut i = k;
    loop {
        sum += pmf;
        if i == 0 || pmf < sum * 1e-18 {
            break;
        }
        // pmf(i−1) = pmf(i) · i / (n − i + 1)
        pmf = pmf * i as f64 / (nf - i as f64 + 1.0);
        i -= 1;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::reference::{close, reference};

    fn rows(section: &str) -> Vec<Vec<f64>> {
        reference()["special"][section]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r.as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn normal_cdf_sf_match_scipy() {
        for r in rows("norm_cdf") {
            close(
                normal_cdf(r[0]),
                r[1],
                1e-12,
                &format!("norm.cdf({})", r[0]),
            );
        }
        for r in rows("norm_sf") {
            close(normal_sf(r[0]), r[1], 1e-12, &format!("norm.sf({})", r[0]));
        }
    }

    #[test]
    fn normal_quantile_matches_scipy() {
        for r in rows("norm_ppf") {
            close(
                normal_quantile(r[0]),
                r[1],
                1e-13,
                &format!("norm.ppf({})", r[0]),
            );
        }
        assert!(normal_quantile(-0.1).is_nan());
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn ln_gamma_matches_scipy() {
        for r in rows("gammaln") {
            close(ln_gamma(r[0]), r[1], 1e-13, &format!("gammaln({})", r[0]));
        }
    }

    #[test]
    fn t_cdf_and_quantile_match_scipy() {
        for r in rows("t_cdf") {
            close(
                t_cdf(r[0], r[1]),
                r[2],
                1e-11,
                &format!("t.cdf({}, {})", r[0], r[1]),
            );
        }
        for r in rows("t_ppf") {
            close(
                t_quantile(r[0], r[1]),
                r[2],
                1e-11,
                &format!("t.ppf({}, {})", r[0], r[1]),
            );
        }
    }

    #[test]
    fn binomial_cdf_matches_scipy() {
        for r in rows("binom_cdf") {
            let (k, n) = (r[0] as u64, r[1] as u64);
            close(
                binom_half_cdf(k, n),
                r[2],
                1e-10,
                &format!("binom.cdf({k}, {n}, .5)"),
            );
        }
    }
}
