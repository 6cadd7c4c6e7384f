//! Gunther's Universal Scalability Law, fitted to throughput measured at
//! several concurrencies:
//!
//! X(N) = λN / (1 + σ(N − 1) + κN(N − 1))
//!
//! λ is the throughput of one client without interference, σ the
//! contention (the serialized share: queueing on a lock, one CPU, one
//! disk) and κ the coherency cost (crosstalk growing with the pairs of
//! clients: cache invalidation, lock convoys). With κ > 0 throughput peaks
//! at N* = √((1 − σ)/κ) and falls beyond it.

use serde::{Deserialize, Serialize};

/// Which term limits scaling (see [`Usl::bound`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Nothing limits it yet: at the largest measured N the fitted
    /// throughput is at least [`LINEAR_EFFICIENCY`] of λN.
    Linear,
    /// Contention: not linear, no peak in or near the measured range, and σ
    /// the larger cost at the largest measured N; throughput flattens
    /// towards λ/σ.
    Contention,
    /// Coherency: κ > 0, and either the peak N* lies within or near the
    /// measured range (N* ≤ [`PEAK_NEAR`] × the largest measured N), or
    /// scaling is not linear and the coherency cost κN(N − 1) is at least
    /// the contention cost σ(N − 1) at the largest measured N: adding
    /// concurrency past N* lowers throughput.
    Coherency,
}

/// A peak at most this many times the largest measured N counts as near.
pub const PEAK_NEAR: f64 = 1.5;

/// Efficiency X(N)/(λN) at the largest measured N from which scaling counts
/// as linear.
pub const LINEAR_EFFICIENCY: f64 = 0.9;

/// A fitted Universal Scalability Law (see [`usl_fit`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Usl {
    /// Throughput of one client, λ.
    pub lambda: f64,
    /// Contention, σ ≥ 0.
    pub sigma: f64,
    /// Coherency, κ ≥ 0.
    pub kappa: f64,
    /// N* = √((1 − σ)/κ) where throughput peaks, when κ > 0 and σ < 1.
    pub peak_n: Option<f64>,
    /// Coefficient of determination, 1 − SSE/SST.
    pub r2: f64,
    /// Observed minus fitted throughput, in the order of the points.
    pub residuals: Vec<f64>,
    /// Which term limits scaling, by the rule in [`Bound`], in this order:
    /// Coherency if κ > 0 and N* ≤ 1.5 × max N; Linear if the efficiency
    /// X/(λN) at max N is ≥ 0.9; Coherency if κ > 0 and κ·max N ≥ σ;
    /// else Contention.
    pub bound: Bound,
}

impl Usl {
    /// The fitted throughput at concurrency `n`.
    pub fn predict(&self, n: f64) -> f64 {
        model(n, [self.lambda, self.sigma, self.kappa])
    }

    /// The fit in one plain English sentence, e.g. "coherency-bound:
    /// throughput peaks near N = 31 (λ = 997.4 per client, σ = 0.0504
    /// contention, κ = 0.000994 coherency, R² = 0.999)". A caller that
    /// localizes builds its own from the fields.
    pub fn describe(&self) -> String {
        let what = match (self.bound, self.peak_n) {
            (Bound::Coherency, Some(peak)) => {
                format!("coherency-bound: throughput peaks near N = {peak:.0}")
            }
            (Bound::Linear, _) => "scales nearly linearly over the measured range".to_string(),
            _ => format!(
                "contention-bound: throughput levels off towards λ/σ = {}",
                sig(self.lambda / self.sigma)
            ),
        };
        format!(
            "{what} (λ = {} per client, σ = {} contention, κ = {} coherency, R² = {:.3})",
            sig(self.lambda),
            sig(self.sigma),
            sig(self.kappa),
            self.r2
        )
    }
}

/// Four significant digits, without exponent for ordinary magnitudes.
fn sig(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    if !x.is_finite() {
        return "∞".to_string();
    }
    let digits = 3 - x.abs().log10().floor() as i32;
    if (-3..=9).contains(&digits) {
        format!("{x:.prec$}", prec = digits.max(0) as usize)
    } else {
        format!("{x:.3e}")
    }
}

fn model(n: f64, [l, s, k]: [f64; 3]) -> f64 {
    l * n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0))
}

fn sse(points: &[(f64, f64)], p: [f64; 3]) -> f64 {
    points.iter().map(|&(n, x)| (x - model(n, p)).powi(2)).sum()
}

/// Fits the USL to `points` = (concurrency N, throughput X) by least
/// squares with λ > 0, σ ≥ 0, κ ≥ 0.
///
/// Method: the bound-constrained minimum is an unconstrained minimum of
/// one of four faces (σ, κ both free; κ = 0; σ = 0; both 0), so each face
/// is solved by Levenberg–Marquardt (analytic Jacobian, Marquardt's
/// diagonal scaling) from the linearized start N/X = a + b(N − 1) +
/// cN(N − 1) and from a second generic start; the feasible answer with the
/// smallest squared error wins. Matches `scipy.optimize.curve_fit(...,
/// bounds=(0, inf))` to ~1e-4 relative on the reference datasets
/// (reference section `usl`).
///
/// `None` with fewer than 3 distinct N, a non-positive or non-finite N or
/// X, or when no fit converges.
pub fn usl_fit(points: &[(f64, f64)]) -> Option<Usl> {
    if points
        .iter()
        .any(|&(n, x)| !(n.is_finite() && x.is_finite() && n > 0.0 && x > 0.0))
    {
        return None;
    }
    let mut ns: Vec<f64> = points.iter().map(|p| p.0).collect();
    ns.sort_by(f64::total_cmp);
    ns.dedup();
    if ns.len() < 3 {
        return None;
    }
    let n_max = *ns.last()?;

    let lin = linearized_start(points);
    let starts = [lin, [lin[0], 0.05, 0.001]];
    let mut best: Option<([f64; 3], f64)> = None;
    for free in [[true, true], [true, false], [false, true], [false, false]] {
        for start in starts {
            let mut p = start;
            if !free[0] {
                p[1] = 0.0;
            }
            if !free[1] {
                p[2] = 0.0;
            }
            if free[0] && p[1] <= 0.0 {
                p[1] = 1e-3;
            }
            if free[1] && p[2] <= 0.0 {
                p[2] = 1e-5;
            }
            p[0] = best_lambda(points, p);
            let Some(fit) = levenberg_marquardt(points, p, [true, free[0], free[1]]) else {
                continue;
            };
            if fit[0] <= 0.0 || fit[1] < 0.0 || fit[2] < 0.0 {
                continue;
            }
            let e = sse(points, fit);
            if best.is_none_or(|(_, b)| e < b) {
                best = Some((fit, e));
            }
        }
    }
    let (p, e) = best?;
    let [lambda, sigma, kappa] = p;
    let mean = points.iter().map(|q| q.1).sum::<f64>() / points.len() as f64;
    let sst: f64 = points.iter().map(|q| (q.1 - mean).powi(2)).sum();
    let peak_n = (kappa > 0.0 && sigma < 1.0).then(|| ((1.0 - sigma) / kappa).sqrt());
    let efficiency = model(n_max, p) / (lambda * n_max);
    let bound = match peak_n {
        Some(peak) if peak <= PEAK_NEAR * n_max => Bound::Coherency,
        _ if efficiency >= LINEAR_EFFICIENCY => Bound::Linear,
        Some(_) if kappa * n_max >= sigma => Bound::Coherency,
        _ => Bound::Contention,
    };
    Some(Usl {
        lambda,
        sigma,
        kappa,
        peak_n,
        r2: if sst > 0.0 { 1.0 - e / sst } else { 1.0 },
        residuals: points.iter().map(|&(n, x)| x - model(n, p)).collect(),
        bound,
    })
}

/// The start from the linearization N/X = a + b(N − 1) + cN(N − 1):
/// λ = 1/a, σ = b/a, κ = c/a (a from the mean of N/X if the fit gives a ≤ 0).
fn linearized_start(points: &[(f64, f64)]) -> [f64; 3] {
    let mut ata = [[0.0; 3]; 3];
    let mut atb = [0.0; 3];
    for &(n, x) in points {
        let row = [1.0, n - 1.0, n * (n - 1.0)];
        let y = n / x;
        for i in 0..3 {
            for j in 0..3 {
                ata[i][j] += row[i] * row[j];
            }
            atb[i] += row[i] * y;
        }
    }
    let coef = solve3(ata, atb).unwrap_or([0.0; 3]);
    let a = if coef[0] > 0.0 {
        coef[0]
    } else {
        points.iter().map(|&(n, x)| n / x).sum::<f64>() / points.len() as f64
    };
    [1.0 / a, (coef[1] / a).max(0.0), (coef[2] / a).max(0.0)]
}

/// The least-squares λ for fixed σ, κ (the model is linear in λ).
fn best_lambda(points: &[(f64, f64)], [_, s, k]: [f64; 3]) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for &(n, x) in points {
        let f = model(n, [1.0, s, k]);
        num += x * f;
        den += f * f;
    }
    num / den
}

/// Levenberg–Marquardt over the parameters marked `free`, the others held.
/// Steps that make the denominator non-positive at some N are rejected.
fn levenberg_marquardt(
    points: &[(f64, f64)],
    start: [f64; 3],
    free: [bool; 3],
) -> Option<[f64; 3]> {
    let idx: Vec<usize> = (0..3).filter(|&i| free[i]).collect();
    let k = idx.len();
    let valid = |p: &[f64; 3]| {
        p[0] > 0.0
            && points
                .iter()
                .all(|&(n, _)| 1.0 + p[1] * (n - 1.0) + p[2] * n * (n - 1.0) > 0.0)
    };
    if !valid(&start) {
        return None;
    }
    let mut p = start;
    let mut e = sse(points, p);
    let mut mu = 1e-3;
    for _ in 0..2_000 {
        // Normal equations JᵀJ δ = Jᵀr over the free parameters.
        let mut jtj = [[0.0; 3]; 3];
        let mut jtr = [0.0; 3];
        for &(n, x) in points {
            let d = 1.0 + p[1] * (n - 1.0) + p[2] * n * (n - 1.0);
            let f = p[0] * n / d;
            let grad = [n / d, -f * (n - 1.0) / d, -f * n * (n - 1.0) / d];
            let r = x - f;
            for a in 0..k {
                for b in 0..k {
                    jtj[a][b] += grad[idx[a]] * grad[idx[b]];
                }
                jtr[a] += grad[idx[a]] * r;
            }
        }
        let mut improved = false;
        let mut converged = false;
        while mu < 1e30 {
            let mut m = jtj;
            for (a, row) in m.iter_mut().enumerate() {
                // Held parameters get an identity row (their step is 0).
                row[a] = if a < k {
                    jtj[a][a] + mu * jtj[a][a].max(1e-300)
                } else {
                    1.0
                };
            }
            let Some(delta) = solve3(m, jtr) else {
                mu *= 10.0;
                continue;
            };
            let mut q = p;
            for a in 0..k {
                q[idx[a]] += delta[a];
            }
            if !valid(&q) {
                mu *= 10.0;
                continue;
            }
            let eq = sse(points, q);
            if eq <= e {
                let small_step =
                    (0..k).all(|a| delta[a].abs() <= 1e-14 * (q[idx[a]].abs() + 1e-300));
                converged = e - eq <= 1e-15 * e || small_step;
                p = q;
                e = eq;
                mu = (mu / 10.0).max(1e-15);
                improved = true;
                break;
            }
            mu *= 10.0;
        }
        if !improved || converged {
            break;
        }
    }
    Some(p)
}

/// Solves a 3×3 system by Gaussian elimination with partial pivoting.
fn solve3(mut m: [[f64; 3]; 3], mut v: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let piv = (col..3).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if m[piv][col].abs() < 1e-300 || !m[piv][col].is_finite() {
            return None;
        }
        m.swap(col, piv);
        v.swap(col, piv);
        let pivot_row = m[col];
        for row in col + 1..3 {
            let f = m[row][col] / pivot_row[col];
            for (x, p) in m[row].iter_mut().zip(pivot_row).skip(col) {
                *x -= f * p;
            }
            v[row] -= f * v[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let s: f64 = (row + 1..3).map(|c| m[row][c] * x[c]).sum();
        x[row] = (v[row] - s) / m[row][row];
    }
    x.iter().all(|x| x.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::reference::{close, floats, reference};

    /// |got − want| ≤ rel·|want| + abs.
    fn near(got: f64, want: f64, rel: f64, abs: f64, what: &str) {
        assert!(
            (got - want).abs() <= rel * want.abs() + abs,
            "{what}: got {got}, want {want}"
        );
    }

    #[test]
    fn usl_matches_scipy_curve_fit() {
        for case in reference()["usl"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let ns = floats(&case["n"]);
            let xs = floats(&case["x"]);
            let points: Vec<(f64, f64)> = ns.iter().copied().zip(xs.iter().copied()).collect();
            let fit = usl_fit(&points).unwrap();
            let lambda = case["lambda"].as_f64().unwrap();
            let sigma = case["sigma"].as_f64().unwrap();
            let kappa = case["kappa"].as_f64().unwrap();
            near(fit.lambda, lambda, 1e-4, 0.0, &format!("{name} λ"));
            near(fit.sigma, sigma, 1e-4, 1e-9, &format!("{name} σ"));
            near(fit.kappa, kappa, 1e-4, 1e-10, &format!("{name} κ"));
            // Never a worse fit than SciPy's.
            let ours = sse(&points, [fit.lambda, fit.sigma, fit.kappa]);
            let theirs = case["sse"].as_f64().unwrap();
            assert!(
                ours <= theirs * (1.0 + 1e-9),
                "{name}: sse {ours} > {theirs}"
            );
            near(
                fit.r2,
                case["r2"].as_f64().unwrap(),
                1e-6,
                1e-9,
                &format!("{name} r2"),
            );
            let want_res = floats(&case["residuals"]);
            let scale = xs.iter().copied().fold(0.0, f64::max);
            for (g, w) in fit.residuals.iter().zip(&want_res) {
                near(*g, *w, 0.0, 1e-4 * scale, &format!("{name} residual"));
            }
            if kappa > 1e-12 {
                let peak = case["peak_n"].as_f64().unwrap();
                near(fit.peak_n.unwrap(), peak, 1e-3, 0.0, &format!("{name} N*"));
            }
        }
    }

    #[test]
    fn bounds_are_classified() {
        let find = |name: &str| {
            let case = reference()["usl"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == name)
                .unwrap();
            let ns = floats(&case["n"]);
            let xs = floats(&case["x"]);
            usl_fit(&ns.into_iter().zip(xs).collect::<Vec<_>>()).unwrap()
        };
        assert_eq!(find("clear_peak").bound, Bound::Coherency);
        assert_eq!(find("usl_noisy").bound, Bound::Coherency);
        assert_eq!(find("no_n1_point").bound, Bound::Coherency);
        assert_eq!(find("near_linear").bound, Bound::Linear);
        let amdahl = find("contention_only");
        assert_eq!(amdahl.bound, Bound::Contention);
        assert_eq!(amdahl.kappa, 0.0);
        assert_eq!(amdahl.peak_n, None);
        assert_eq!(find("coherency_only").sigma, 0.0);
        assert_eq!(
            find("clear_peak").describe(),
            "coherency-bound: throughput peaks near N = 10 (λ = 2004 per client, \
             σ = 0.01848 contention, κ = 0.01010 coherency, R² = 0.999)"
        );
        assert!(amdahl
            .describe()
            .starts_with("contention-bound: throughput levels off towards λ/σ = 3762 ("));
        assert!(find("near_linear")
            .describe()
            .starts_with("scales nearly linearly"));
    }

    #[test]
    fn exact_curve_is_recovered() {
        let p = [250.0, 0.04, 0.0008];
        let points: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0, 48.0, 64.0]
            .iter()
            .map(|&n| (n, model(n, p)))
            .collect();
        let fit = usl_fit(&points).unwrap();
        close(fit.lambda, 250.0, 1e-9, "λ");
        close(fit.sigma, 0.04, 1e-8, "σ");
        close(fit.kappa, 0.0008, 1e-8, "κ");
        close(fit.predict(10.0), model(10.0, p), 1e-9, "predict");
        assert!(usl_fit(&points[..2]).is_none());
        assert!(usl_fit(&[(1.0, 1.0), (2.0, -1.0), (3.0, 2.0)]).is_none());
    }
}
