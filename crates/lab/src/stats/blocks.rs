//! An interval for a percentile of one run, by a block bootstrap over the
//! run's latency intervals (the result's `histograms.intervals`).
//!
//! The seconds of one run are not independent (they share its warm caches,
//! its neighbours' noise and its luck), so resampling single requests would
//! give an interval far too narrow. Resampling whole intervals (blocks of
//! [`yace_stats::INTERVAL_S`] seconds) with replacement keeps the dependence
//! within a block, and a drift or a stall that touches some blocks and not
//! others widens the interval, as it should (the non-overlapping block
//! bootstrap: Carlstein 1986; Künsch 1989; Lahiri, *Resampling Methods for
//! Dependent Data*, 2003).
//!
//! This says how much a run's percentile rests on its luck within the run;
//! it is not evidence between runs: the unit of a comparison stays one
//! repetition, one run's figure, and another run on another day usually
//! varies more than this interval says.

use hdrhistogram::Histogram;
use yace_stats::IntervalHistogram;

use super::rng::Rng;

/// The fewest intervals [`block_bootstrap_quantile_ci`] resamples: with
/// fewer, the resamples take too few distinct values for the interval to
/// mean much. A run of 40 seconds has 8 of 5 seconds.
pub const MIN_BLOCKS: usize = 8;

/// Decodes a result's latency intervals (`&r.histograms.intervals`, empty
/// in a result written before they existed), in order.
pub fn decode_intervals(intervals: &[IntervalHistogram]) -> Result<Vec<Histogram<u64>>, String> {
    intervals
        .iter()
        .map(|i| {
            yace_stats::hist::decode(&i.latency)
                .map_err(|e| format!("latency interval at {} s: {e}", i.start_s))
        })
        .collect()
}

/// The `q`-quantile (0–1, as `Histogram::value_at_quantile`) of the merged
/// `intervals`, and a percentile-bootstrap interval for it at confidence
/// `level`: each of `resamples` rounds draws `intervals.len()` intervals
/// with replacement (all from [`Rng::new`]`(seed)`, so the same seed gives
/// the same interval) and takes the quantile of their merge; the interval
/// is the (1 − level)/2 and (1 + level)/2 quantiles of those values (linear
/// between order statistics, as `numpy.quantile`'s default).
///
/// Returns (estimate, lo, hi), in the histograms' unit (µs for a result's).
/// `None` with fewer than [`MIN_BLOCKS`] intervals, no sample at all,
/// `resamples` of 0, `q` outside 0–1 or `level` outside (0, 1), or
/// histograms that do not merge.
///
/// Every interval counts as one block, whatever its length: a run's last
/// interval may be much shorter than the others (a closed-model run of
/// `-d 30s` ends with one of about a millisecond), and a caller may leave
/// out such a sliver.
///
/// A resample's quantile is found without merging histograms: each
/// interval's cumulative counts over the values any of them holds are
/// tabulated once, and a binary search over those values sums the drawn
/// intervals' counts. A round costs about 12 × `intervals.len()` additions,
/// and the table is no larger than the histograms themselves.
pub fn block_bootstrap_quantile_ci(
    intervals: &[Histogram<u64>],
    q: f64,
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<(f64, f64, f64)> {
    if intervals.len() < MIN_BLOCKS
        || resamples == 0
        || !(0.0..=1.0).contains(&q)
        || !(level > 0.0 && level < 1.0)
    {
        return None;
    }
    let mut merged = intervals[0].clone();
    for h in &intervals[1..] {
        merged.add(h).ok()?;
    }
    if merged.is_empty() {
        return None;
    }
    let estimate = merged.value_at_quantile(q) as f64;
    let table = Table::new(intervals, &merged, q);
    let n = intervals.len();
    let mut rng = Rng::new(seed);
    let mut drawn = vec![0; n];
    let mut stats = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for d in drawn.iter_mut() {
            *d = rng.index(n);
        }
        stats.push(table.quantile(&drawn, q) as f64);
    }
    stats.sort_by(f64::total_cmp);
    Some((
        estimate,
        quantile_sorted(&stats, (1.0 - level) / 2.0),
        quantile_sorted(&stats, (1.0 + level) / 2.0),
    ))
}

/// Every interval's cumulative count at each value any interval holds.
struct Table {
    /// The values, ascending, as the merged histogram reports them.
    values: Vec<u64>,
    /// `cum[i * values.len() + k]`: interval i's samples at or below `values[k]`.
    cum: Vec<u64>,
}

impl Table {
    fn new(intervals: &[Histogram<u64>], merged: &Histogram<u64>, q: f64) -> Table {
        // A recorded value of `h` lands where `Histogram::add` puts it (at
        // its bucket's lowest value) and is reported as the merged
        // histogram's value_at_quantile reports it (its bucket's highest).
        let key = |h: &Histogram<u64>, v: u64| merged.highest_equivalent(h.lowest_equivalent(v));
        let keys: Vec<u64> = merged
            .iter_recorded()
            .map(|v| key(merged, v.value_iterated_to()))
            .collect();
        let k = keys.len();
        let mut cum = vec![0; intervals.len() * k];
        for (i, h) in intervals.iter().enumerate() {
            let row = &mut cum[i * k..(i + 1) * k];
            for v in h.iter_recorded() {
                let at = keys.partition_point(|&x| x < key(h, v.value_iterated_to()));
                row[at.min(k - 1)] += v.count_at_value();
            }
            for j in 1..k {
                row[j] += row[j - 1];
            }
        }
        let values = if q == 0.0 {
            keys.iter().map(|&v| merged.lowest_equivalent(v)).collect()
        } else {
            keys
        };
        Table { values, cum }
    }

    /// The `q`-quantile of the merge of the `drawn` intervals (0 when they
    /// hold no sample), as `Histogram::value_at_quantile` would give it.
    fn quantile(&self, drawn: &[usize], q: f64) -> u64 {
        let k = self.values.len();
        let below = |j: usize| -> u64 { drawn.iter().map(|&i| self.cum[i * k + j]).sum() };
        let total = below(k - 1);
        if total == 0 {
            return 0;
        }
        let rank = ((q * total as f64).ceil() as u64).max(1);
        // The first value with `rank` samples at or below it (the last has all).
        let (mut lo, mut hi) = (0, k - 1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if below(mid) >= rank {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        self.values[lo]
    }
}

/// The q-quantile of sorted values, linear between order statistics
/// (`numpy.quantile`'s default, Hyndman & Fan type 7).
fn quantile_sorted(s: &[f64], q: f64) -> f64 {
    let h = (s.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(s.len() - 1);
    s[lo] + (h - lo as f64) * (s[hi] - s[lo])
}

#[cfg(test)]
mod tests {
    use super::*;
    use yace_stats::hist::{encode, new_coarse_hist, new_hist};

    /// `n` intervals of `per` samples each, interval i's drawn from a
    /// lognormal of median `median(i)` µs and log-sd `sigma`.
    fn lognormal(
        rng: &mut Rng,
        n: usize,
        per: usize,
        median: impl Fn(usize) -> f64,
        sigma: f64,
    ) -> Vec<Histogram<u64>> {
        (0..n)
            .map(|i| {
                let mut h = new_hist();
                for _ in 0..per {
                    let v = median(i) * (sigma * rng.normal()).exp();
                    h.record(v.round().max(1.0) as u64).unwrap();
                }
                h
            })
            .collect()
    }

    #[test]
    fn a_resample_is_the_quantile_of_the_drawn_intervals_merged() {
        let mut rng = Rng::new(1);
        for coarse in [false, true] {
            let mut hs = lognormal(&mut rng, 9, 300, |i| 500.0 * (1 + i % 3) as f64, 0.8);
            if coarse {
                hs = hs
                    .iter()
                    .map(|h| {
                        let mut c = new_coarse_hist();
                        c.add(h).unwrap();
                        c
                    })
                    .collect();
            }
            hs.push(new_hist()); // an interval without a response
            let mut merged = hs[0].clone();
            for h in &hs[1..] {
                merged.add(h).unwrap();
            }
            for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
                let t = Table::new(&hs, &merged, q);
                let all: Vec<usize> = (0..hs.len()).collect();
                assert_eq!(t.quantile(&all, q), merged.value_at_quantile(q), "q {q}");
                for _ in 0..20 {
                    let drawn: Vec<usize> = (0..hs.len()).map(|_| rng.index(hs.len())).collect();
                    let mut m = hs[0].clone();
                    m.reset();
                    for &i in &drawn {
                        m.add(&hs[i]).unwrap();
                    }
                    assert_eq!(t.quantile(&drawn, q), m.value_at_quantile(q), "q {q}");
                }
                assert_eq!(t.quantile(&[hs.len() - 1; 3], q), 0, "nothing drawn");
            }
        }
    }

    #[test]
    fn deterministic_per_seed_and_none_when_it_cannot_say() {
        let hs = lognormal(&mut Rng::new(2), 12, 500, |_| 1000.0, 0.5);
        let a = block_bootstrap_quantile_ci(&hs, 0.99, 0.95, 500, 7).unwrap();
        assert_eq!(
            a,
            block_bootstrap_quantile_ci(&hs, 0.99, 0.95, 500, 7).unwrap()
        );
        let b = block_bootstrap_quantile_ci(&hs, 0.99, 0.95, 500, 8).unwrap();
        assert_eq!(a.0, b.0, "the estimate does not depend on the seed");
        assert_ne!((a.1, a.2), (b.1, b.2));
        assert!(a.1 <= a.0 && a.0 <= a.2, "{a:?}");
        assert!(block_bootstrap_quantile_ci(&hs[..7], 0.99, 0.95, 500, 7).is_none());
        assert!(block_bootstrap_quantile_ci(&hs[..8], 0.99, 0.95, 500, 7).is_some());
        assert!(block_bootstrap_quantile_ci(&vec![new_hist(); 10], 0.5, 0.95, 500, 7).is_none());
        assert!(block_bootstrap_quantile_ci(&hs, 1.5, 0.95, 500, 7).is_none());
        assert!(block_bootstrap_quantile_ci(&hs, 0.99, 1.0, 500, 7).is_none());
        assert!(block_bootstrap_quantile_ci(&hs, 0.99, 0.95, 0, 7).is_none());
    }

    #[test]
    fn covers_a_known_p99_in_most_trials() {
        // Lognormal of median 1 ms and log-sd 0.5: p99 = e^(0.5·2.326348) ms.
        let truth = 1000.0 * (0.5 * 2.326_347_874_040_841_f64).exp();
        let mut covered = 0;
        for trial in 0..100 {
            let mut rng = Rng::new(1000 + trial);
            let hs = lognormal(&mut rng, 30, 1000, |_| 1000.0, 0.5);
            let (_, lo, hi) = block_bootstrap_quantile_ci(&hs, 0.99, 0.95, 1000, trial).unwrap();
            covered += u32::from(lo <= truth && truth <= hi);
        }
        assert!(
            covered >= 85,
            "covered the true p99 in {covered} of 100 trials"
        );
    }

    #[test]
    fn a_shift_halfway_widens_the_interval() {
        let width = |shift: f64| {
            let mut rng = Rng::new(3);
            let hs = lognormal(
                &mut rng,
                30,
                1000,
                |i| if i < 15 { 1000.0 } else { 1000.0 * shift },
                0.5,
            );
            let (p99, lo, hi) = block_bootstrap_quantile_ci(&hs, 0.99, 0.95, 2000, 5).unwrap();
            (hi - lo) / p99
        };
        let (steady, shifted) = (width(1.0), width(2.0));
        // Seeded: about 0.04 and 0.14 of the p99.
        assert!(shifted > 2.0 * steady, "steady {steady}, shifted {shifted}");
    }

    #[test]
    fn decodes_a_results_intervals_in_order() {
        let hs = lognormal(&mut Rng::new(4), 3, 50, |i| 100.0 * (i + 1) as f64, 0.1);
        let encoded: Vec<IntervalHistogram> = hs
            .iter()
            .enumerate()
            .map(|(i, h)| IntervalHistogram {
                start_s: 5.0 * i as f64,
                length_s: 5.0,
                latency: encode(h),
            })
            .collect();
        assert_eq!(decode_intervals(&encoded).unwrap(), hs);
        assert!(decode_intervals(&[]).unwrap().is_empty());
        let mut bad = encoded;
        bad[1].latency = "not base64!".into();
        let e = decode_intervals(&bad).unwrap_err();
        assert!(e.starts_with("latency interval at 5 s:"), "{e}");
    }
}
