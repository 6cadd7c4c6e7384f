//! The per-second series, merged across workers as the run goes: each
//! worker submits each second once, and a second becomes a row when every
//! worker has moved past it. Memory holds only seconds still in progress,
//! plus one small row per second.
//!
//! Each finished second's latency is also folded into the interval in
//! progress, which is encoded when it closes ([`INTERVAL_S`] seconds):
//! memory holds one open interval histogram beyond the encoded ones, and
//! none of it touches the per-request path.

use crate::hist::{encode, new_coarse_hist};
use crate::result::IntervalHistogram;
use hdrhistogram::Histogram;
use sample::Outcome;
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
    /// Responses by status class: 1xx (and anything outside 1xx–5xx), 2xx … 5xx.
    pub classes: [u64; 5],
    /// Failed requests by outcome.
    pub failed: [u64; Outcome::COUNT],
    /// Connections established.
    pub connects: u64,
    /// Mean requests in flight over the second (summed over workers).
    pub in_flight: f64,
    /// Mean users inside their window (summed over workers); None for the
    /// open model.
    pub users: Option<f64>,
    /// CPU time the workers' threads used in the second.
    pub cpu_ns: u64,
    /// Latency of complete responses, µs.
    pub hist: Histogram<u64>,
    /// Open model and virtual users: schedule lag of the responses, µs.
    pub lag: Option<Histogram<u64>>,
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
            classes: [0; 5],
            failed: [0; Outcome::COUNT],
            connects: 0,
            in_flight: 0.0,
            users: None,
            cpu_ns: 0,
            hist,
            lag: None,
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
        for (a, b) in self.classes.iter_mut().zip(o.classes) {
            *a += b;
        }
        for (a, b) in self.failed.iter_mut().zip(o.failed) {
            *a += b;
        }
        self.connects += o.connects;
        self.in_flight += o.in_flight;
        if let Some(u) = o.users {
            self.users = Some(self.users.unwrap_or(0.0) + u);
        }
        self.cpu_ns += o.cpu_ns;
        self.hist.add(&o.hist).expect("same configuration");
        if let Some(l) = &o.lag {
            match &mut self.lag {
                Some(m) => m.add(l).expect("same configuration"),
                None => self.lag = Some(l.clone()),
            }
        }
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
    /// Responses by status class (1xx counts anything outside 1xx–5xx).
    /// Absent from results written before yace 0.2: zero.
    #[serde(default)]
    pub status_1xx: u64,
    #[serde(default)]
    pub status_2xx: u64,
    #[serde(default)]
    pub status_3xx: u64,
    #[serde(default)]
    pub status_4xx: u64,
    #[serde(default)]
    pub status_5xx: u64,
    /// This second's failed requests by outcome (absent: none, or an older
    /// result).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failures: BTreeMap<Outcome, u64>,
    /// Connections established in this second.
    #[serde(default)]
    pub connects: u64,
    /// Requests in flight, on average over the second (sampled every 100 ms).
    #[serde(default)]
    pub in_flight: f64,
    /// Virtual users (or closed-model connections) inside their window, on
    /// average over the second (sampled every 100 ms); absent for the open
    /// model and in older results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<f64>,
    /// The client's worker threads' CPU time in this second, in seconds
    /// (1.0: one core busy throughout).
    #[serde(default)]
    pub client_cpu_s: f64,
    /// Open model and virtual users: schedule lag of this second's
    /// responses (how late their requests were sent), µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_p99_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_max_us: Option<f64>,
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
            status_1xx: a.classes[0],
            status_2xx: a.classes[1],
            status_3xx: a.classes[2],
            status_4xx: a.classes[3],
            status_5xx: a.classes[4],
            failures: Outcome::ALL
                .iter()
                .filter(|&&o| a.failed[o as usize] > 0)
                .map(|&o| (o, a.failed[o as usize]))
                .collect(),
            connects: a.connects,
            in_flight: (a.in_flight * 100.0).round() / 100.0,
            users: a.users.map(|u| (u * 100.0).round() / 100.0),
            // To the microsecond: finer digits are noise.
            client_cpu_s: (a.cpu_ns / 1000) as f64 / 1e6,
            lag_p99_us: a
                .lag
                .as_ref()
                .filter(|l| !l.is_empty())
                .map(|l| l.value_at_quantile(0.99) as f64),
            lag_max_us: a
                .lag
                .as_ref()
                .filter(|l| !l.is_empty())
                .map(|l| l.max() as f64),
        }
    }
}

/// Length of the result's latency intervals (`histograms.intervals`),
/// seconds, aligned to the run's start.
///
/// Five seconds gives a 1-minute run 12 blocks, more than the 8 a block
/// bootstrap over them asks for (40 seconds is the shortest run with 8),
/// while a block stays long enough to keep the run's short-range
/// correlation (a stall, a pause, a queue draining) inside it; and it keeps
/// the result small. The intervals use the per-second series' histogram
/// configuration (2 significant digits): they are folded from its seconds,
/// which hold no finer values, and they encode 1.5–3× smaller than with the
/// main one (3 digits). Measured on 30-second runs against the embedded
/// target: bytes per encoded interval (in parentheses, the main
/// configuration's, from the run's own histogram split into six), and
/// what the 720 intervals of a 1-hour run add:
///
/// | load                            | per 5 s | bytes (main)          | 1 hour  |
/// |---------------------------------|---------|-----------------------|---------|
/// | `--rate 1000`                   |   5 000 | 500–600 (970–1 000)   | 0.38 MB |
/// | `--rate 5000`                   |  25 000 | 950–1 060 (1 750)     | 0.71 MB |
/// | `-c 4`, full speed              | 128 000 | 780–1 120 (1 450)     | 0.68 MB |
/// | `-c 50`, full speed, 0.2 s tail | 135 000 | 1 700–1 770 (5 400)   | 1.25 MB |
///
/// The size grows mostly with the spread of the latencies (buckets in use);
/// the worst case is a quarter over 1 MB an hour, next to the 1.7 MB of the
/// same hour's per-second series (the main configuration would take up to
/// 3.9 MB). Encoding one takes 20–160 µs (release build), once per
/// interval, by the worker whose submission completes its last second.
pub const INTERVAL_S: u64 = 5;

/// Collects seconds from all workers and turns them into rows.
#[derive(Debug)]
pub struct Series {
    /// Per worker: every second before this one has been submitted.
    through: Vec<u64>,
    pending: BTreeMap<u64, SecondAcc>,
    rows: Vec<SecondRow>,
    /// Latency of the interval in progress: its finished seconds so far.
    interval: Histogram<u64>,
    /// The closed intervals, encoded.
    intervals: Vec<IntervalHistogram>,
}

impl Series {
    pub fn new(workers: usize) -> Self {
        Series {
            through: vec![0; workers],
            pending: BTreeMap::new(),
            rows: Vec::new(),
            interval: new_coarse_hist(),
            intervals: Vec::new(),
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
                Some(acc) => {
                    self.interval.add(&acc.hist).expect("same configuration");
                    SecondRow::from_acc(s, &acc)
                }
                None => SecondRow::from_acc(s, &SecondAcc::new(new_coarse_hist())),
            };
            self.rows.push(row);
            if (s + 1).is_multiple_of(INTERVAL_S) {
                self.close_interval(INTERVAL_S as f64);
            }
        }
    }

    /// Encodes the interval in progress, `length_s` long, and starts the next.
    fn close_interval(&mut self, length_s: f64) {
        self.intervals.push(IntervalHistogram {
            start_s: (self.intervals.len() as u64 * INTERVAL_S) as f64,
            length_s,
            latency: encode(&self.interval),
        });
        self.interval.reset();
    }

    /// Rows finished so far (for the live view).
    pub fn rows(&self) -> &[SecondRow] {
        &self.rows
    }

    /// Ends the series at `duration_ns`: every second is finalized and the
    /// last, partial one gets its true length; so does the last interval.
    /// Returns the rows and the latency intervals, which cover the rows.
    pub fn finish(mut self, duration_ns: u64) -> (Vec<SecondRow>, Vec<IntervalHistogram>) {
        let last = self.pending.keys().next_back().map_or(0, |s| s + 1);
        let upto = last.max(duration_ns.div_ceil(1_000_000_000));
        self.finalize_until(upto);
        if let Some(r) = self.rows.last_mut() {
            let len = duration_ns as f64 / 1e9 - r.second as f64;
            if len > 0.0 && len < 1.0 {
                r.length_s = len;
            }
        }
        if !(self.rows.len() as u64).is_multiple_of(INTERVAL_S) {
            self.close_interval(0.0);
        }
        if let (Some(r), Some(i)) = (self.rows.last(), self.intervals.last_mut()) {
            i.length_s = r.second as f64 + r.length_s - i.start_s;
        }
        (self.rows, self.intervals)
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
        let (rows, intervals) = s.finish(2_500_000_000);
        assert_eq!(rows.len(), 3);
        assert_eq!(intervals.len(), 1);
        assert_eq!((intervals[0].start_s, intervals[0].length_s), (0.0, 2.5));
        assert_eq!(rows[2].responses, 0);
        assert!((rows[2].length_s - 0.5).abs() < 1e-9);
    }

    #[test]
    fn levels_and_classes_add_up_across_workers() {
        let mut s = Series::new(2);
        let mut a = acc(3);
        a.classes = [0, 2, 0, 1, 0];
        a.failed[Outcome::Timeout as usize] = 2;
        a.in_flight = 1.5;
        a.cpu_ns = 250_000_000;
        a.connects = 4;
        a.lag = Some(new_coarse_hist());
        a.lag.as_mut().unwrap().record(900).unwrap();
        let mut b = acc(1);
        b.classes = [0, 0, 0, 0, 1];
        b.failed[Outcome::Timeout as usize] = 1;
        b.failed[Outcome::Reset as usize] = 1;
        b.in_flight = 2.25;
        b.cpu_ns = 500_000_000;
        s.submit(0, 0, a, 1);
        s.submit(1, 0, b, 1);
        let r = &s.rows()[0];
        assert_eq!(
            (r.status_2xx, r.status_4xx, r.status_5xx, r.connects),
            (2, 1, 1, 4)
        );
        assert_eq!(r.failures[&Outcome::Timeout], 3);
        assert_eq!(r.failures[&Outcome::Reset], 1);
        assert_eq!(r.failures.len(), 2);
        assert!((r.in_flight - 3.75).abs() < 1e-9);
        assert!((r.client_cpu_s - 0.75).abs() < 1e-9);
        // The coarse histogram keeps two significant digits.
        assert!((r.lag_max_us.unwrap() - 900.0).abs() <= 9.0);
        // A second nobody submitted has no lag figures at all.
        assert_eq!(s.finish(2_000_000_000).0[1].lag_p99_us, None);
    }

    fn intervals_of(workers: usize, seconds: u64, duration_ns: u64) -> Vec<IntervalHistogram> {
        let mut s = Series::new(workers);
        for sec in 0..seconds {
            for w in 0..workers {
                s.submit(w, sec, acc(sec + 1), sec + 1);
            }
            // Closed intervals are encoded at once; only the open one is kept whole.
            assert_eq!(s.intervals.len() as u64, (sec + 1) / INTERVAL_S);
        }
        s.finish(duration_ns).1
    }

    #[test]
    fn intervals_cover_the_run_and_hold_every_response() {
        let iv = intervals_of(2, 12, 11_400_000_000);
        let starts: Vec<f64> = iv.iter().map(|i| i.start_s).collect();
        assert_eq!(starts, [0.0, 5.0, 10.0]);
        assert_eq!((iv[0].length_s, iv[1].length_s), (5.0, 5.0));
        assert!((iv[2].length_s - 1.4).abs() < 1e-9, "{}", iv[2].length_s);
        let counts: Vec<u64> = iv
            .iter()
            .map(|i| crate::hist::decode(&i.latency).unwrap().len())
            .collect();
        // Second s holds 2·(s + 1) responses.
        assert_eq!(counts, [2 * 15, 2 * 40, 2 * 23]);
        // A run that ends on an interval's edge has no empty interval after it.
        let iv = intervals_of(1, 10, 10_000_000_000);
        assert_eq!(iv.len(), 2);
        assert_eq!(iv[1].length_s, 5.0);
        // A partial last second in a full interval shortens it.
        let iv = intervals_of(1, 10, 9_500_000_000);
        assert_eq!(iv.len(), 2);
        assert!((iv[1].length_s - 4.5).abs() < 1e-9);
        // Seconds nobody submitted still count towards an interval's length.
        let mut s = Series::new(1);
        s.submit(0, 0, acc(3), 7);
        let (rows, iv) = s.finish(7_000_000_000);
        assert_eq!(rows.len(), 7);
        assert_eq!((iv.len(), iv[1].start_s, iv[1].length_s), (2, 5.0, 2.0));
        assert_eq!(crate::hist::decode(&iv[1].latency).unwrap().len(), 0);
        assert!(Series::new(1).finish(0).1.is_empty());
    }

    #[test]
    fn an_old_row_without_the_new_columns_still_reads() {
        let old = r#"{"second":0,"length_s":1.0,"responses":5,"errors":0,"cancelled":0,
            "dropped":0,"non_2xx":0,"bytes_in":1,"bytes_out":1,"latency_mean_us":1.0,
            "latency_p50_us":1.0,"latency_p90_us":1.0,"latency_p99_us":1.0,"latency_max_us":1.0}"#;
        let r: SecondRow = serde_json::from_str(old).unwrap();
        assert_eq!((r.status_2xx, r.connects, r.lag_p99_us), (0, 0, None));
        assert!(r.failures.is_empty());
    }
}
