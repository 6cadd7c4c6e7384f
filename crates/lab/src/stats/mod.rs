//! The statistics that say whether a change is real.
//!
//! Everything here is pure and deterministic: the same input (and seed)
//! gives the same answer on every platform. The unit of evidence is one
//! repetition, one run's figure (its throughput, its p99 latency), never a
//! second within a run: seconds of one run share its warm caches, its
//! neighbours' noise and its luck, so they are not independent evidence.
//!
//! The method follows benchstat and goes a little further:
//!
//! * describe each side: [`median`], [`mean_sd`], an exact
//!   distribution-free [`median_ci`] and [`outliers`];
//! * compare two sides: [`compare`] gives the relative change of medians,
//!   Welch's test on logs and its ratio interval ([`welch_log`]; from 2 runs
//!   a side), the exact permutation p ([`permutation_p`]), Hodges–Lehmann
//!   with its actual coverage ([`hodges_lehmann`]), the smallest change the
//!   design could find ([`detectable`], [`power`], [`runs_for`]) — or, where
//!   a figure is 0, the bootstrap interval ([`bootstrap_ratio_ci`]) and the
//!   Mann–Whitney p-value ([`mann_whitney`]) — and a [`Verdict`] that calls a change
//!   better or worse only when it is both significant and larger than a
//!   practical threshold; [`apply_holm`] adjusts for many comparisons made
//!   at once ([`holm`]); [`min_per_side_for`] tells how many runs a test
//!   needs at all;
//! * randomize run order: [`Rng`] and [`shuffle`];
//! * tails from short runs: [`tail`] reads a quantile and its exact
//!   order-statistic interval from an HDR histogram ([`quantile_ci_ranks`],
//!   [`samples_for`]);
//! * look inside one run: [`trend`] / [`drifts`] for drift,
//!   [`batch_means_ci`] for an interval on its throughput, [`enough_for`]
//!   for whether a percentile has enough samples behind it;
//! * look across concurrencies: [`usl_fit`] (Universal Scalability Law) and
//!   [`knee`] and [`knee_convex`] (Kneedle).
//!
//! Reference values come from SciPy, statsmodels and kneed, computed once by
//! `crates/lab/reference/make_reference.py` into `reference.json`; the unit
//! tests compare against them.

mod blocks;
mod compare;
mod knee;
mod rank;
mod rng;
mod small;
pub mod special;
mod summary;
mod tail;
mod trend;
mod usl;

#[cfg(test)]
mod reference;

pub use blocks::{block_bootstrap_quantile_ci, decode_intervals, MIN_BLOCKS};
pub use compare::{
    apply_holm, bootstrap_ratio_ci, compare, verdict, Compare, Comparison, Small, Verdict,
    MIN_RUNS_WELCH, RESAMPLES,
};
pub use knee::{knee, knee_convex};
pub use rank::{holm, mann_whitney, min_p_with, min_per_side_for, MannWhitney};
pub use rng::{shuffle, splitmix64, Rng};
pub use small::{
    detectable, hodges_lehmann, permutation_p, power, runs_for, welch_log, HodgesLehmann, WelchLog,
    MAX_PERMUTATIONS, POWER,
};
pub use summary::{
    batch_means_ci, enough_for, mean_sd, median, median_ci, order_stat_coverage, outliers,
    MedianCi, BATCHES, OUTLIER_K,
};
pub use tail::{binom_cdf, quantile_ci_ranks, samples_for, tail, Tail};
pub use trend::{drifts, trend, Trend, DRIFT_MIN_CHANGE, TREND_MAX_POINTS};
pub use usl::{usl_fit, Bound, Usl, LINEAR_EFFICIENCY, PEAK_NEAR};
