#!/usr/bin/env python3
"""Reference values for yace-lab's small-sample statistics
(crates/lab/src/stats/small.rs and the tail interval in tail.rs).

The Rust unit tests read small.json (beside this script); they never run
Python. Regenerate only when a case is added:

    python3 -m venv ~/.cache/yace/lab-reference
    ~/.cache/yace/lab-reference/bin/pip install scipy numpy statsmodels
    ~/.cache/yace/lab-reference/bin/python crates/lab/reference/make_small.py

Sections:

  welch_log       scipy.stats.ttest_ind(ln b, ln a, equal_var=False), its
                  confidence_interval(0.95), mapped back by exp(.) - 1
  permutation     scipy.stats.permutation_test((b, a), mean(x) - mean(y),
                  permutation_type='independent', n_resamples=inf)
  hodges_lehmann  by brute force: every pairwise ln b - ln a, and the exact
                  null distribution of U counted over every split
                  (itertools.combinations), independent of the Rust recursion
  detectable      statsmodels TTestIndPower().solve_power(effect_size=None):
                  the exact (noncentral t) effect size, in sd units
  quantile_ci     ranks of the order-statistic interval of a quantile:
                  scipy.stats.binom.cdf / ppf
"""

import itertools
import json
import math
import os
from importlib.metadata import version

import numpy as np
import scipy.stats as st
from statsmodels.stats.power import TTestIndPower

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "small.json")


def r(xs, nd=3):
    return [round(float(v), nd) for v in xs]


def samples():
    rng = np.random.default_rng(32)
    out = []
    for na, nb, shift, noise in [(3, 3, 0.0, 0.03), (3, 3, 0.3, 0.05), (4, 4, 0.1, 0.04),
                                 (5, 5, 0.05, 0.03), (3, 5, 0.2, 0.1), (6, 6, -0.1, 0.05),
                                 (2, 2, 0.5, 0.02), (4, 7, 0.0, 0.2), (5, 3, 1.0, 0.01)]:
        a = r(1000 * np.exp(noise * rng.standard_normal(na)), 2)
        b = r(1000 * (1 + shift) * np.exp(noise * rng.standard_normal(nb)), 2)
        out.append((a, b))
    return out


def welch_log(cases):
    res = []
    for a, b in cases:
        t = st.ttest_ind(np.log(b), np.log(a), equal_var=False)
        ci = t.confidence_interval(0.95)
        d = np.mean(np.log(b)) - np.mean(np.log(a))
        res.append({"a": a, "b": b, "change": math.expm1(d), "p": float(t.pvalue),
                    "df": float(t.df), "lo": math.expm1(ci.low), "hi": math.expm1(ci.high)})
    return res


def permutation(cases):
    res = []
    for a, b in cases:
        stat = lambda x, y, axis=-1: np.mean(x, axis=axis) - np.mean(y, axis=axis)
        t = st.permutation_test((np.array(b), np.array(a)), stat, vectorized=True,
                                permutation_type="independent", n_resamples=np.inf,
                                alternative="two-sided")
        res.append({"a": a, "b": b, "p": float(t.pvalue)})
    return res


def u_null(m, n):
    """Counts of U = 0..m*n over every split of m + n ranks (brute force)."""
    counts = [0] * (m * n + 1)
    for xs in itertools.combinations(range(m + n), m):
        # U of the m-group: pairs (x, y) with x > y.
        ys = [v for v in range(m + n) if v not in xs]
        u = sum(1 for x in xs for y in ys if x > y)
        counts[u] += 1
    return counts


def hodges_lehmann(cases):
    res = []
    for a, b in cases:
        for level in (0.95, 0.90, 0.80):
            d = sorted(math.log(y) - math.log(x) for x in a for y in b)
            mn = len(d)
            counts = u_null(len(a), len(b))
            total = sum(counts)
            cov = lambda k: 1 - 2 * sum(counts[:k]) / total
            k = 1
            while 2 * (k + 1) <= mn and cov(k + 1) >= level:
                k += 1
            res.append({"a": a, "b": b, "level": level,
                        "change": math.expm1(float(np.median(d))),
                        "lo": math.expm1(d[k - 1]), "hi": math.expm1(d[mn - k]),
                        "coverage": cov(k)})
    return res


def detectable():
    res = []
    for n in (3, 4, 5, 6, 8, 10, 20):
        for alpha, power in ((0.05, 0.8), (0.05, 0.9), (0.01, 0.8)):
            es = TTestIndPower().solve_power(effect_size=None, nobs1=n, alpha=alpha,
                                             power=power, ratio=1.0)
            res.append({"n": n, "alpha": alpha, "power": power, "effect_size": float(es)})
    return res


def quantile_ci():
    """Ranks (1-based) lo, hi of the narrowest-tailed equal-split interval:
    lo = largest r with P(B <= r - 1) <= (1 - level)/2, hi = smallest s with
    P(B <= s - 1) >= (1 + level)/2, B ~ Binomial(n, q); None outside 1..n."""
    res = []
    for n in (10, 50, 100, 300, 1000, 5000, 20000, 200000):
        for q in (0.5, 0.9, 0.99, 0.999):
            for level in (0.95,):
                a = (1 - level) / 2
                lo = None
                for rr in range(n, 0, -1):
                    if st.binom.cdf(rr - 1, n, q) <= a:
                        lo = rr
                        break
                hi = None
                s = int(st.binom.ppf((1 + level) / 2, n, q)) + 1
                if 1 <= s <= n:
                    hi = s
                cov = None
                if lo is not None and hi is not None:
                    cov = float(st.binom.cdf(hi - 1, n, q) - st.binom.cdf(lo - 1, n, q))
                res.append({"n": n, "q": q, "level": level, "lo": lo, "hi": hi,
                            "coverage": cov})
    return res


def main():
    cases = samples()
    out = {
        "versions": {lib: version(lib) for lib in ("scipy", "numpy", "statsmodels")},
        "welch_log": welch_log(cases),
        "permutation": permutation(cases),
        "hodges_lehmann": hodges_lehmann(cases),
        "detectable": detectable(),
        "quantile_ci": quantile_ci(),
    }
    with open(OUT, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
