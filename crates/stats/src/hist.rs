//! Latency histograms: one configuration everywhere so any two can merge,
//! and a text encoding (HdrHistogram V2 + deflate, base64) for the JSON
//! contract that other HdrHistogram tools can read too.

use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Highest trackable value: one hour in microseconds.
pub const MAX_US: u64 = 3_600_000_000;

/// A histogram of microseconds with 3 significant digits (0.1% error).
pub fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_US, 3).expect("valid histogram bounds")
}

/// A coarser histogram (1% error) for the per-second series: cheap to reset
/// and ship once a second.
pub fn new_coarse_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_US, 2).expect("valid histogram bounds")
}

/// Records nanoseconds as whole microseconds, clamped into range.
#[inline]
pub fn record_ns(h: &mut Histogram<u64>, ns: u64) {
    let us = (ns / 1000).min(MAX_US);
    h.record(us).expect("value clamped into range");
}

/// Percentiles every summary carries (ab's table plus the tail).
pub const PERCENTILES: [f64; 11] = [
    50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.9, 99.99, 100.0,
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Percentile {
    /// Percentile, 0–100.
    pub p: f64,
    /// Value at that percentile, microseconds.
    pub us: f64,
}

/// Distribution summary; all values in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Distribution {
    pub count: u64,
    pub min_us: f64,
    pub mean_us: f64,
    pub stdev_us: f64,
    pub max_us: f64,
    pub percentiles: Vec<Percentile>,
}

impl Distribution {
    pub fn of(h: &Histogram<u64>) -> Distribution {
        if h.is_empty() {
            return Distribution {
                percentiles: Vec::new(),
                ..Default::default()
            };
        }
        Distribution {
            count: h.len(),
            min_us: h.min() as f64,
            mean_us: h.mean(),
            stdev_us: h.stdev(),
            max_us: h.max() as f64,
            percentiles: PERCENTILES
                .iter()
                .map(|&p| Percentile {
                    p,
                    us: h.value_at_quantile(p / 100.0) as f64,
                })
                .collect(),
        }
    }

    /// The value at percentile `p` if it is one of [`PERCENTILES`].
    pub fn at(&self, p: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|x| (x.p - p).abs() < 1e-9)
            .map(|x| x.us)
    }
}

/// Encodes a histogram as base64 of its compressed V2 serialization.
pub fn encode(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .expect("serialize to memory");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

/// Decodes what [`encode`] wrote.
pub fn decode(s: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s.trim())
        .map_err(|e| format!("histogram is not base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| format!("histogram does not decode: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_merge() {
        let mut a = new_hist();
        let mut b = new_hist();
        for v in 1..=1000u64 {
            record_ns(&mut a, v * 1000);
            record_ns(&mut b, v * 2000);
        }
        let a2 = decode(&encode(&a)).unwrap();
        assert_eq!(a, a2);
        a.add(&b).unwrap();
        assert_eq!(a.len(), 2000);
        let d = Distribution::of(&a);
        assert_eq!(d.min_us, 1.0, "1 µs is the smallest value recorded");
        assert!((d.max_us - 2000.0).abs() <= 2.0);
        // Half of a is below 667 µs, a third of b: 1.5·x = 1000 at x ≈ 667.
        let p50 = d.at(50.0).unwrap();
        assert!((660.0..675.0).contains(&p50), "{p50}");
    }

    #[test]
    fn clamps_out_of_range() {
        let mut h = new_hist();
        record_ns(&mut h, 0);
        record_ns(&mut h, u64::MAX);
        assert_eq!(h.min(), 0);
        assert!(h.max() >= MAX_US);
    }
}

/// `intervals` merged evenly into at most `max` (each of `k` consecutive
/// ones, `k` the smallest that fits): still aligned to the run's start and
/// exact to merge, for outputs that must stay small (an HTML page).
pub fn coarsen_intervals(
    intervals: &[crate::result::IntervalHistogram],
    max: usize,
) -> Vec<crate::result::IntervalHistogram> {
    if intervals.len() <= max || max == 0 {
        return intervals.to_vec();
    }
    let k = intervals.len().div_ceil(max);
    intervals
        .chunks(k)
        .map(|group| {
            let mut merged: Option<Histogram<u64>> = None;
            for iv in group {
                if let Ok(h) = decode(&iv.latency) {
                    match &mut merged {
                        Some(m) => {
                            let _ = m.add(&h);
                        }
                        None => merged = Some(h),
                    }
                }
            }
            crate::result::IntervalHistogram {
                start_s: group[0].start_s,
                length_s: group.iter().map(|i| i.length_s).sum(),
                latency: merged.map_or_else(|| group[0].latency.clone(), |m| encode(&m)),
            }
        })
        .collect()
}

#[cfg(test)]
mod coarsen_tests {
    use super::*;
    use crate::result::IntervalHistogram;

    #[test]
    fn intervals_merge_evenly_and_exactly() {
        let ivs: Vec<IntervalHistogram> = (0..10u64)
            .map(|i| {
                let mut h = new_coarse_hist();
                h.record_n(100 + i, i + 1).unwrap();
                IntervalHistogram {
                    start_s: 5.0 * i as f64,
                    length_s: 5.0,
                    latency: encode(&h),
                }
            })
            .collect();
        let c = coarsen_intervals(&ivs, 3);
        assert_eq!(c.len(), 3);
        let starts: Vec<f64> = c.iter().map(|i| i.start_s).collect();
        assert_eq!(starts, [0.0, 20.0, 40.0]);
        let lengths: Vec<f64> = c.iter().map(|i| i.length_s).collect();
        assert_eq!(lengths, [20.0, 20.0, 10.0]);
        let counts: Vec<u64> = c
            .iter()
            .map(|i| decode(&i.latency).unwrap().len())
            .collect();
        assert_eq!(counts, [1 + 2 + 3 + 4, 5 + 6 + 7 + 8, 9 + 10]);
        assert_eq!(coarsen_intervals(&ivs, 10), ivs);
    }
}
