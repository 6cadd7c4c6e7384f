#!/usr/bin/env python3
"""Reference values for yace-lab's statistics (crates/lab/src/stats/).

The Rust unit tests read the JSON this script writes (reference.json, beside
it) and compare their own results with these, computed once by SciPy,
statsmodels and kneed. The file is committed; the tests never run Python.

Regenerate (only when a case is added or a library's answer is in question):

    python3 -m venv /tmp/labvenv
    /tmp/labvenv/bin/pip install scipy numpy kneed statsmodels
    /tmp/labvenv/bin/python crates/lab/reference/make_reference.py

Every input is made here from fixed seeds, rounded to a few decimals so the
JSON holds it exactly, and the versions of the libraries used are recorded in
the output's "versions". Sections:

  special        norm.cdf/sf/ppf, t.cdf/ppf, binom.cdf, gammaln (SciPy)
  describe       np.median, np.mean, np.std(ddof=1)
  median_ci      order-statistic CI: coverage from binom.cdf, bounds checked
                 against scipy.stats.quantile_test(...).confidence_interval
  outliers       modified z-score (Iglewicz & Hoaglin), with the MAD = 0
                 fallback to the mean absolute deviation documented in outliers.rs
  mann_whitney   scipy.stats.mannwhitneyu(a, b, alternative='two-sided',
                 method='auto')
  holm           statsmodels multipletests(method='holm')
  rng            splitmix64 / xoshiro256** / bounded draws / Fisher-Yates,
                 re-implemented below in plain Python integers (the Rust Rng
                 must give these exact integers on every platform)
  trend          scipy.stats.kendalltau(time, y) and scipy.stats.theilslopes
  usl            scipy.optimize.curve_fit with bounds (0, inf) on all three
                 parameters, tight tolerances
  knee           kneed.KneeLocator(x, y, curve='concave',
                 direction='increasing', S=1, online=False,
                 interp_method='interp1d')
  batch_means    np.array_split batches, scipy.stats.t.ppf
  knee_convex    kneed.KneeLocator(x, y, curve='convex',
                 direction='increasing', S=1, online=False,
                 interp_method='interp1d') — where latency departs
"""

import json
import math
import os
import sys
from importlib.metadata import version

import numpy as np
import scipy
import scipy.stats as st
from scipy.optimize import curve_fit
from kneed import KneeLocator
from statsmodels.stats.multitest import multipletests

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference.json")


def r(xs, nd=3):
    """Rounds to `nd` decimals and returns plain Python floats."""
    return [round(float(v), nd) for v in xs]


def f(v):
    """A float for JSON, or None for NaN/None."""
    if v is None:
        return None
    v = float(v)
    return None if math.isnan(v) else v


# ---------------------------------------------------------------- special
def special():
    out = {"norm_cdf": [], "norm_sf": [], "norm_ppf": [], "t_cdf": [], "t_ppf": [],
           "binom_cdf": [], "gammaln": []}
    for x in [-38.0, -20.0, -8.5, -5.0, -3.0, -1.96, -1.0, -0.5, -1e-3, 0.0, 0.3, 0.7,
              1.0, 1.5, 1.96, 2.5, 3.0, 4.0, 6.0, 9.0]:
        out["norm_cdf"].append([x, float(st.norm.cdf(x))])
        out["norm_sf"].append([x, float(st.norm.sf(x))])
    for p in [1e-300, 1e-20, 1e-10, 1e-5, 0.001, 0.01, 0.02425, 0.025, 0.05, 0.1, 0.25,
              0.4, 0.5, 0.6, 0.75, 0.9, 0.95, 0.975, 0.99, 0.999, 0.99999]:
        out["norm_ppf"].append([p, float(st.norm.ppf(p))])
    for df in [1.0, 2.0, 3.0, 4.0, 5.0, 9.0, 19.0, 29.0, 100.0, 1000.0]:
        for t in [-7.0, -2.3, -0.4, 0.0, 0.8, 1.5, 2.262, 4.0, 12.0]:
            out["t_cdf"].append([t, df, float(st.t.cdf(t, df))])
        for p in [0.0005, 0.005, 0.025, 0.05, 0.1, 0.3, 0.5, 0.8, 0.9, 0.95, 0.975, 0.995,
                  0.9995]:
            out["t_ppf"].append([p, df, float(st.t.ppf(p, df))])
    for n in [1, 2, 5, 6, 10, 17, 40, 100, 500, 1500, 5000]:
        for k in sorted({0, 1, n // 4, n // 3, n // 2 - 1, n // 2, n - 1}):
            if 0 <= k <= n:
                out["binom_cdf"].append([k, n, float(st.binom.cdf(k, n, 0.5))])
    for x in [0.5, 1.0, 1.5, 2.0, 3.7, 10.0, 55.5, 170.0, 1234.5, 1e5]:
        out["gammaln"].append([x, float(scipy.special.gammaln(x))])
    return out


# ---------------------------------------------------------------- describe
def describe(rng):
    cases = []
    samples = [
        [5.0],
        [3.0, 1.0],
        [1.0, 2.0, 3.0, 4.0],
        [9.0, -2.5, 4.25, 4.25, 100.0],
        r(rng.normal(1000, 20, 7)),
        r(rng.normal(1000, 20, 12)),
        r(rng.lognormal(3, 1, 31)),
    ]
    for xs in samples:
        cases.append({
            "xs": xs,
            "median": float(np.median(xs)),
            "mean": float(np.mean(xs)),
            "sd": f(np.std(xs, ddof=1)) if len(xs) > 1 else None,
        })
    return cases


# ---------------------------------------------------------------- median_ci
def median_ci_pick(n, level):
    """Largest k (1-based lower rank) whose pair (k, n+1-k) covers >= level."""
    best = None
    for k in range(1, n // 2 + 1):
        cov = 1.0 - 2.0 * float(st.binom.cdf(k - 1, n, 0.5))
        if cov >= level:
            best = (k, cov)
    return best


def median_ci(rng):
    table = []
    ns = list(range(1, 61)) + [75, 100, 250, 500, 1000, 2000]
    for level in [0.90, 0.95, 0.99]:
        for n in ns:
            pick = median_ci_pick(n, level)
            table.append({"n": n, "level": level,
                          "k": pick[0] if pick else None,
                          "coverage": pick[1] if pick else None})
    samples = []
    for n in [5, 6, 7, 9, 10, 15, 20, 33]:
        xs = r(rng.normal(500, 30, n), 2)
        res = st.quantile_test(xs, q=float(np.median(xs)), p=0.5)
        ci = res.confidence_interval(0.95)
        samples.append({"xs": xs, "level": 0.95, "median": float(np.median(xs)),
                        "lo": f(ci.low), "hi": f(ci.high)})
    return {"table": table, "samples": samples}


# ---------------------------------------------------------------- outliers
def outliers_ref(xs, k):
    xs = np.asarray(xs, dtype=float)
    med = np.median(xs)
    dev = np.abs(xs - med)
    mad = np.median(dev)
    if mad > 0:
        z = 0.6745 * dev / mad
    else:
        mean_ad = np.mean(dev)
        if mean_ad == 0:
            return [False] * len(xs)
        z = 0.7979 * dev / mean_ad
    return [bool(v > k) for v in z]


def outliers(rng):
    samples = [
        [100.0, 101.0, 99.0, 100.5, 99.5, 140.0],
        [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0, 998.0, 700.0],
        [5.0, 5.0, 5.0, 5.0, 5.0],
        [5.0, 5.0, 5.0, 5.0, 6.0],
        [5.0, 5.0, 5.0, 5.0, 9.0, 4.0],
        [1.0, 2.0],
        r(rng.normal(1000, 10, 30)) + [1100.0, 905.0],
    ]
    cases = []
    for xs in samples:
        for k in [3.5, 2.0]:
            cases.append({"xs": xs, "k": k, "flags": outliers_ref(xs, k)})
    return cases


# ---------------------------------------------------------------- mann_whitney
def mann_whitney(rng):
    pairs = [
        ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]),
        ([1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]),
        ([4.0, 3.0, 2.0, 1.0], [0.5, 0.25, 0.125, 0.0625]),
        ([1.0, 3.0, 5.0, 7.0, 9.0, 11.0], [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]),
        ([1.0], [2.0, 3.0]),
        ([1.0, 2.0], [1.0, 2.0]),
        ([7.0, 7.0, 7.0], [7.0, 7.0, 7.0]),
        ([1.0, 1.0, 1.0], [2.0, 2.0, 2.0]),
        ([1.0, 2.0, 2.0, 3.0], [2.0, 3.0, 4.0, 4.0, 5.0]),
    ]
    for (na, nb, shift) in [(3, 3, 0.05), (4, 4, 0.1), (5, 5, 0.0), (6, 6, 0.03),
                            (6, 6, 0.10), (8, 8, 0.01), (3, 20, 0.05), (8, 50, 0.02),
                            (9, 9, 0.05), (9, 8, 0.05), (12, 15, 0.0), (20, 25, 0.02),
                            (40, 40, 0.01), (7, 30, 0.0)]:
        a = r(rng.normal(1000, 20, na), 3)
        b = r(rng.normal(1000 * (1 + shift), 20, nb), 3)
        pairs.append((a, b))
    # Ties from integer-valued figures.
    for (na, nb) in [(6, 6), (5, 7), (10, 12), (30, 30)]:
        a = [float(v) for v in rng.integers(10, 16, na)]
        b = [float(v) for v in rng.integers(11, 17, nb)]
        pairs.append((a, b))
    cases = []
    for a, b in pairs:
        res = st.mannwhitneyu(a, b, alternative="two-sided", method="auto")
        ties = len(set(a + b)) < len(a + b)
        exact = (not (len(a) > 8 and len(b) > 8)) and not ties
        cases.append({"a": a, "b": b, "u": float(res.statistic), "p": float(res.pvalue),
                      "exact": exact})
    # Smallest achievable two-sided exact p with n per side, and the
    # smallest n per side that can reach p < alpha.
    min_p = []
    for n in range(1, 12):
        a = [float(i) for i in range(n)]
        b = [float(i + n) for i in range(n)]
        min_p.append([n, float(st.mannwhitneyu(a, b, method="exact").pvalue)])
    per_side = []
    for alpha in [0.1, 0.05, 0.01, 0.005, 0.001]:
        n = next(n for n, p in min_p if p < alpha)
        per_side.append([alpha, n])
    return {"cases": cases, "min_p": min_p, "min_per_side": per_side}


# ---------------------------------------------------------------- holm
def holm():
    vectors = [
        [0.01],
        [0.01, 0.04, 0.03, 0.005],
        [0.2, 0.2, 0.01, 0.5, 0.04],
        [0.9, 0.8, 0.7],
        [0.0, 1.0, 0.5, 0.3, 0.02, 0.021, 0.019],
        [0.04, 0.04, 0.04, 0.04],
    ]
    return [{"p": v, "adjusted": [float(x) for x in multipletests(v, method="holm")[1]]}
            for v in vectors]


# ---------------------------------------------------------------- rng
M64 = (1 << 64) - 1


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M64


class Xoshiro:
    def __init__(self, seed):
        st_ = seed & M64
        self.s = []
        for _ in range(4):
            st_, z = splitmix64(st_)
            self.s.append(z)

    def next_u64(self):
        s = self.s
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def below(self, n):
        """Lemire's multiply-shift with rejection: uniform in [0, n)."""
        threshold = ((1 << 64) - n) % n  # = (2^64 - n) mod n = (-n) mod n
        while True:
            m = self.next_u64() * n
            if (m & M64) >= threshold:
                return m >> 64

    def shuffle(self, xs):
        for i in range(len(xs) - 1, 0, -1):
            j = self.below(i + 1)
            xs[i], xs[j] = xs[j], xs[i]


def rng_ref():
    sm = []
    state = 1234567
    for _ in range(5):
        state, z = splitmix64(state)
        sm.append(z)
    out = {"splitmix64_seed": 1234567, "splitmix64": sm, "xoshiro": [], "below": [],
           "shuffle": []}
    for seed in [0, 1, 42, 2**64 - 1]:
        g = Xoshiro(seed)
        out["xoshiro"].append({"seed": seed, "u64": [g.next_u64() for _ in range(6)]})
    for seed, n in [(7, 1), (7, 6), (7, 1000), (99, 3), (99, 2**63 + 5)]:
        g = Xoshiro(seed)
        out["below"].append({"seed": seed, "n": n, "draws": [g.below(n) for _ in range(8)]})
    for seed, n in [(1, 10), (2024, 12), (5, 1), (5, 2)]:
        g = Xoshiro(seed)
        xs = list(range(n))
        g.shuffle(xs)
        out["shuffle"].append({"seed": seed, "n": n, "order": xs})
    return out


# ---------------------------------------------------------------- trend
def trend(rng):
    series = []
    t60 = np.arange(60)
    series.append(("drift_up_60", r(1000 * (1 + 0.002 * t60) + rng.normal(0, 8, 60), 2)))
    series.append(("flat_120", r(1000 + rng.normal(0, 10, 120), 2)))
    t20 = np.arange(20)
    series.append(("down_20_exact", r(2000 * (1 - 0.004 * t20) + rng.normal(0, 6, 20), 2)))
    series.append(("flat_30_exact", r(500 + rng.normal(0, 5, 30), 2)))
    series.append(("ties_int_90", [float(v) for v in
                                   np.round(300 + 0.05 * np.arange(90) + rng.normal(0, 2, 90))]))
    series.append(("sorted_40", [float(v) for v in range(100, 140)]))
    series.append(("short_3", [10.0, 11.0, 13.0]))
    series.append(("long_400", r(800 - 0.05 * np.arange(400) + rng.normal(0, 12, 400), 2)))
    cases = []
    for name, ys in series:
        x = np.arange(len(ys), dtype=float)
        kt = st.kendalltau(x, ys)
        ts = st.theilslopes(ys, x)
        med = float(np.median(ys))
        cases.append({"name": name, "ys": ys, "kendall_p": f(kt.pvalue),
                      "slope": float(ts.slope), "median": med,
                      "slope_rel_per_step": float(ts.slope) / med,
                      "total_rel_change": float(ts.slope) * (len(ys) - 1) / med})
    return cases


# ---------------------------------------------------------------- usl
def usl_model(n, lam, sigma, kappa):
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def usl_start(ns, xs):
    """Linearized start: N/X = a + b(N-1) + cN(N-1), λ=1/a, σ=b/a, κ=c/a."""
    ns = np.asarray(ns, dtype=float)
    xs = np.asarray(xs, dtype=float)
    A = np.column_stack([np.ones_like(ns), ns - 1, ns * (ns - 1)])
    coef, *_ = np.linalg.lstsq(A, ns / xs, rcond=None)
    a = coef[0] if coef[0] > 0 else float(np.mean(ns / xs))
    return [1 / a, max(coef[1] / a, 1e-6), max(coef[2] / a, 1e-8)]


def usl(rng):
    datasets = []
    n1 = np.array([1, 2, 4, 8, 16, 32, 48, 64], dtype=float)
    x1 = usl_model(n1, 1000, 0.05, 0.001) * (1 + rng.normal(0, 0.01, len(n1)))
    datasets.append(("usl_noisy", n1, x1))
    n2 = np.arange(1, 33, dtype=float)
    x2 = 500 * n2 / (1 + 0.002 * (n2 - 1)) * (1 + rng.normal(0, 0.005, len(n2)))
    datasets.append(("near_linear", n2, x2))
    n3 = np.arange(1, 41, dtype=float)
    x3 = usl_model(n3, 2000, 0.02, 0.01) * (1 + rng.normal(0, 0.01, len(n3)))
    datasets.append(("clear_peak", n3, x3))
    n4 = np.array([4, 8, 16, 32, 64, 128], dtype=float)
    x4 = usl_model(n4, 150, 0.1, 0.0002) * (1 + rng.normal(0, 0.02, len(n4)))
    datasets.append(("no_n1_point", n4, x4))
    n5 = np.array([1, 2, 3, 4, 6, 8, 12, 16, 24, 32], dtype=float)
    x5 = usl_model(n5, 120, 0.03, 0.0005)
    datasets.append(("exact_curve", n5, x5))
    # Pure contention (Amdahl): κ lands on its bound 0 (seed chosen so it does).
    n6 = np.arange(1, 25, dtype=float)
    x6 = usl_model(n6, 300, 0.08, 0.0) * (1 + np.random.default_rng(1).normal(0, 0.01, 24))
    datasets.append(("contention_only", n6, x6))
    # Pure coherency: σ lands on its bound 0 (seed chosen so it does).
    n7 = np.array([1, 2, 4, 8, 16, 32], dtype=float)
    x7 = usl_model(n7, 50, 0.0, 0.002) * (1 + np.random.default_rng(1).normal(0, 0.01, 6))
    datasets.append(("coherency_only", n7, x7))
    cases = []
    for name, ns, xs in datasets:
        xs = np.array(r(xs, 3))
        p0 = usl_start(ns, xs)
        popt, _ = curve_fit(usl_model, ns, xs, p0=p0, bounds=([0, 0, 0], [np.inf] * 3),
                            method="trf", ftol=1e-15, xtol=1e-15, gtol=1e-15,
                            max_nfev=100000)
        lam, sigma, kappa = (float(v) for v in popt)
        fit = usl_model(ns, lam, sigma, kappa)
        resid = xs - fit
        sse = float(np.sum(resid ** 2))
        sst = float(np.sum((xs - xs.mean()) ** 2))
        peak = math.sqrt((1 - sigma) / kappa) if kappa > 0 and sigma < 1 else None
        cases.append({"name": name, "n": [float(v) for v in ns], "x": [float(v) for v in xs],
                      "lambda": lam, "sigma": sigma, "kappa": kappa, "peak_n": peak,
                      "sse": sse, "r2": 1 - sse / sst,
                      "residuals": [float(v) for v in resid]})
    return cases


# ---------------------------------------------------------------- knee
def knee(rng):
    datasets = []
    x = np.arange(1, 41, dtype=float)
    datasets.append(("saturating", x, 1000 * (1 - np.exp(-x / 8))))
    n = np.array([1, 2, 4, 8, 16, 32, 64, 128], dtype=float)
    datasets.append(("usl_doubling", n, usl_model(n, 1000, 0.05, 0.0002)))
    x = np.arange(1, 33, dtype=float)
    datasets.append(("usl_noisy", x, usl_model(x, 800, 0.04, 0.001)
                     * (1 + rng.normal(0, 0.01, len(x)))))
    x = np.arange(0, 21, dtype=float)
    datasets.append(("linear", x, 5 * x + 3))
    x = np.arange(1, 21, dtype=float)
    datasets.append(("hockey", x, np.minimum(x, 8.0) * 100))
    x = np.array([1, 2, 3, 5, 8, 13, 21, 34, 55], dtype=float)
    datasets.append(("log_like", x, np.log(x) * 100 + 50))
    x = np.arange(1, 26, dtype=float)
    datasets.append(("plateau_noisy", x, np.minimum(x * 120, 1500)
                     + rng.normal(0, 25, len(x))))
    cases = []
    for name, xs, ys in datasets:
        ys = np.array(r(ys, 3))
        kl = KneeLocator(xs, ys, S=1.0, curve="concave", direction="increasing",
                         interp_method="interp1d", online=False)
        cases.append({"name": name, "x": [float(v) for v in xs], "y": [float(v) for v in ys],
                      "knee": f(kl.knee)})
    return cases


def knee_convex(rng):
    # Latency against concurrency: flat while workers are free, then rising.
    datasets = []
    x = np.arange(1, 41, dtype=float)
    datasets.append(("queue_hockey", x, np.maximum(x / 8.0, 1.0) * 20))
    n = np.array([1, 2, 4, 8, 16, 32, 64, 128], dtype=float)
    datasets.append(("queue_doubling", n, np.maximum(n / 16.0, 1.0) * 12 + 0.1 * n))
    # The same on a log scale, as yace reads a sweep spanning x16 or more.
    datasets.append(("queue_doubling_log2", np.log2(n), np.maximum(n / 16.0, 1.0) * 12 + 0.1 * n))
    seed002 = np.array([1, 10, 100, 200, 500, 1000, 1500], dtype=float)
    datasets.append(("seed002_log2", np.log2(seed002), np.maximum(seed002 / 300.0, 1.0) * 20))
    rho = np.linspace(0.05, 0.95, 19)
    datasets.append(("mm1", rho * 100, 10 / (1 - rho)))
    x = np.arange(0, 21, dtype=float)
    datasets.append(("linear", x, 5 * x + 3))
    x = np.arange(1, 26, dtype=float)
    datasets.append(("hockey_noisy", x, np.maximum(x * 4.0, 40.0)
                     + rng.normal(0, 1.5, len(x))))
    x = np.array([1, 2, 3, 5, 8, 13, 21, 34, 55], dtype=float)
    datasets.append(("exponential", x, np.exp(x / 12.0) * 5))
    cases = []
    for name, xs, ys in datasets:
        xs = np.array(r(xs, 3))
        ys = np.array(r(ys, 3))
        kl = KneeLocator(xs, ys, S=1.0, curve="convex", direction="increasing",
                         interp_method="interp1d", online=False)
        cases.append({"name": name, "x": [float(v) for v in xs], "y": [float(v) for v in ys],
                      "knee": f(kl.knee)})
    return cases


# ---------------------------------------------------------------- batch means
def batch_means(rng):
    cases = []
    for (n, batches, level) in [(300, 10, 0.95), (305, 10, 0.95), (61, 5, 0.90),
                                (1000, 20, 0.99), (20, 10, 0.95), (12, 2, 0.95)]:
        ys = r(1000 + rng.normal(0, 30, n), 2)
        means = np.array([b.mean() for b in np.array_split(np.array(ys), batches)])
        m = float(means.mean())
        half = float(st.t.ppf((1 + level) / 2, batches - 1)) * float(
            np.std(means, ddof=1)) / math.sqrt(batches)
        cases.append({"ys": ys, "batches": batches, "level": level, "mean": m,
                      "lo": m - half, "hi": m + half})
    return cases


def main():
    rng = np.random.default_rng(20240611)
    ref = {
        "versions": {"python": sys.version.split()[0], "numpy": np.__version__,
                     "scipy": scipy.__version__, "statsmodels": version("statsmodels"),
                     "kneed": version("kneed")},
        "special": special(),
        "describe": describe(rng),
        "median_ci": median_ci(rng),
        "outliers": outliers(rng),
        "mann_whitney": mann_whitney(rng),
        "holm": holm(),
        "rng": rng_ref(),
        "trend": trend(rng),
        "usl": usl(rng),
        "knee": knee(rng),
        "batch_means": batch_means(rng),
        "knee_convex": knee_convex(rng),
    }
    with open(OUT, "w") as fh:
        json.dump(ref, fh, indent=1)
        fh.write("\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
