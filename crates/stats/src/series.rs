//! The per-second series, merged across workers as the run goes: each
//! worker submits each second once, and a second becomes a row when every
//! worker has moved past it. Memory holds only seconds still in progress,
//! plus one small row per second.

use crate::hist::new_coarse_hist;
use hdrhistogram::Histogram;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One worker's figures for one second, by the second the request ended in.
#[derive(Debug, Clone)]
pub struct SecondAcc {
    pub responses: u64,
    pub errors: u64,
    pub cancelled: u64,
    pub dropped: u64,
    pub non_2xx: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Latency of complete responses, µs.
    pub hist: Histogram<u64>,
}

impl SecondAcc {
    pub fn new(hist: Histogram<u64>) -> Self {
        SecondAcc {
            responses: 0,
            errors: 0,
            cancelled: 0,
            dropped: 0,
            non_2xx: 0,
            bytes_in: 0,
            bytes_out: 0,
            hist,
        }
    }

    fn add(&mut self, o: &SecondAcc) {
        self.responses += o.responses;
        self.errors += o.errors;
        self.cancelled += o.cancelled;
        self.dropped += o.dropped;
        self.non_2xx += o.non_2xx;
        self.bytes_in += o.bytes_in;
        self.bytes_out += o.bytes_out;
        self.hist.add(&o.hist).expect("same configuration");
    }
}

/// One second of the run (the last row may be shorter: see `length_s`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SecondRow {
    /// Seconds since the start of the run.
    pub second: u64,
    /// Length of this interval in seconds: 1, except for a final partial second.
    pub length_s: f64,
    /// Complete responses (any status) that ended in this second.
    pub responses: u64,
    /// Failed requests (every outcome but response and cancelled).
    pub errors: u64,
    pub cancelled: u64,
    /// Open model: requests not sent because no connection was free in time.
    pub dropped: u64,
    pub non_2xx: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Latency of this second's responses, µs (0 when there were none).
    pub latency_mean_us: f64,
    pub latency_p50_us: f64,
    pub latency_p90_us: f64,
    pub latency_p99_us: f64,
    pub latency_max_us: f64,
}

impl SecondRow {
    fn from_acc(second: u64, a: &SecondAcc) -> SecondRow {
        let h = &a.hist;
        let q = |p: f64| {
            if h.is_empty() {
                0.0
            } else {
                h.value_at_quantile(p) as f64
            }
        };
        SecondRow {
            second,
            length_s: 1.0,
            responses: a.responses,
            errors: a.errors,
            cancelled: a.cancelled,
            dropped: a.dropped,
            non_2xx: a.non_2xx,
            bytes_in: a.bytes_in,
            bytes_out: a.bytes_out,
            latency_mean_us: if h.is_empty() { 0.0 } else { h.mean() },
            latency_p50_us: q(0.5),
            latency_p90_us: q(0.9),
            latency_p99_us: q(0.99),
            latency_max_us: if h.is_empty() { 0.0 } else { h.max() as f64 },
        }
    }
}

/// Collects seconds from all workers and turns them into rows.
#[derive(Debug)]
pub struct Series {
    /// Per worker: every second before this one has been submitted.
    through: Vec<u64>,
    pending: BTreeMap<u64, SecondAcc>,
    rows: Vec<SecondRow>,
}

impl Series {
    pub fn new(workers: usize) -> Self {
        Series {
            through: vec![0; workers],
            pending: BTreeMap::new(),
            rows: Vec::new(),
        }
    }

    /// Worker `worker` is done with `second` (and with every second before
    /// `through`).
    pub fn submit(&mut self, worker: usize, second: u64, acc: SecondAcc, through: u64) {
        self.pending
            .entry(second)
            .or_insert_with(|| SecondAcc::new(new_coarse_hist()))
            .add(&acc);
        if let Some(t) = self.through.get_mut(worker) {
            *t = (*t).max(through);
        }
        let done = self.through.iter().copied().min().unwrap_or(0);
        self.finalize_until(done);
    }

    fn finalize_until(&mut self, upto: u64) {
        while (self.rows.len() as u64) < upto {
            let s = self.rows.len() as u64;
            let row = match self.pending.remove(&s) {
                Some(acc) => SecondRow::from_acc(s, &acc),
                None => SecondRow::from_acc(s, &SecondAcc::new(new_coarse_hist())),
            };
            self.rows.push(row);
        }
    }

    /// Rows finished so far (for the live view).
    pub fn rows(&self) -> &[SecondRow] {
        &self.rows
    }

    /// Ends the series at `duration_ns`: every second is finalized and the
    /// last, partial one gets its true length.
    pub fn finish(mut self, duration_ns: u64) -> Vec<SecondRow> {
        let last = self.pending.keys().next_back().map_or(0, |s| s + 1);
        let upto = last.max(duration_ns.div_ceil(1_000_000_000));
        self.finalize_until(upto);
        if let Some(r) = self.rows.last_mut() {
            let len = duration_ns as f64 / 1e9 - r.second as f64;
            if len > 0.0 && len < 1.0 {
                r.length_s = len;
            }
        }
        self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(n: u64) -> SecondAcc {
        let mut a = SecondAcc::new(new_coarse_hist());
        a.responses = n;
        for i in 0..n {
            a.hist.record(100 + i).unwrap();
        }
        a
    }

    #[test]
    fn a_second_is_final_only_when_all_workers_passed_it() {
        let mut s = Series::new(2);
        s.submit(0, 0, acc(5), 1);
        assert!(s.rows().is_empty());
        s.submit(1, 0, acc(7), 3); // worker 1 idle through seconds 1 and 2
        assert_eq!(s.rows().len(), 1);
        assert_eq!(s.rows()[0].responses, 12);
        s.submit(0, 1, acc(1), 2);
        assert_eq!(s.rows().len(), 2);
        let rows = s.finish(2_500_000_000);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].responses, 0);
        assert!((rows[2].length_s - 0.5).abs() < 1e-9);
    }
}
