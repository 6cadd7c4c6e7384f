//! The rows the view has seen, folded: running totals for the whole run
//! and the last [`KEEP_S`] seconds as they were, for the charts. Memory is
//! bounded whatever the run's length.

use sample::Outcome;
use stats::SecondRow;
use std::collections::{BTreeMap, VecDeque};

/// Seconds of rows kept for the charts (they show the last [`WINDOW_S`]).
pub const KEEP_S: usize = 600;
/// Seconds the charts span.
pub const WINDOW_S: f64 = 120.0;

/// What the view knows of the run so far.
#[derive(Debug, Clone, Default)]
pub struct Watch {
    /// The newest rows, oldest first.
    pub recent: VecDeque<SecondRow>,
    /// Rows seen.
    pub rows: usize,
    pub responses: u64,
    pub errors: u64,
    pub dropped: u64,
    /// 1xx (and anything outside 1xx–5xx), 2xx … 5xx.
    pub classes: [u64; 5],
    pub failures: BTreeMap<Outcome, u64>,
    pub connects: u64,
}

impl Watch {
    /// Folds one more finished second in.
    pub fn push(&mut self, r: SecondRow) {
        self.rows += 1;
        self.responses += r.responses;
        self.errors += r.errors;
        self.dropped += r.dropped;
        for (a, b) in self.classes.iter_mut().zip([
            r.status_1xx,
            r.status_2xx,
            r.status_3xx,
            r.status_4xx,
            r.status_5xx,
        ]) {
            *a += b;
        }
        for (o, n) in &r.failures {
            *self.failures.entry(*o).or_default() += n;
        }
        self.connects += r.connects;
        if self.recent.len() == KEEP_S {
            self.recent.pop_front();
        }
        self.recent.push_back(r);
    }

    /// The newest whole second that is not past `limit_s` (the few
    /// milliseconds of a run's tail would read as a collapse).
    pub fn current(&self, limit_s: Option<f64>) -> Option<&SecondRow> {
        self.recent
            .iter()
            .rev()
            .find(|r| r.length_s >= 0.5 && limit_s.is_none_or(|l| (r.second as f64) < l))
    }

    /// Requests finished so far (responses and failures).
    pub fn finished(&self) -> u64 {
        self.responses + self.errors
    }
}

/// A row's figure per second of its span.
pub fn per_s(n: u64, r: &SecondRow) -> f64 {
    if r.length_s > 0.0 {
        n as f64 / r.length_s
    } else {
        0.0
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A whole second with `responses` responses (2xx), `errors` resets.
    pub fn row(second: u64, responses: u64, errors: u64) -> SecondRow {
        SecondRow {
            second,
            length_s: 1.0,
            responses,
            errors,
            cancelled: 0,
            dropped: 0,
            non_2xx: 0,
            bytes_in: 0,
            bytes_out: 0,
            latency_mean_us: 900.0,
            latency_p50_us: 800.0,
            latency_p90_us: 1_500.0,
            latency_p99_us: 4_000.0,
            latency_max_us: 12_000.0,
            status_1xx: 0,
            status_2xx: responses,
            status_3xx: 0,
            status_4xx: 0,
            status_5xx: 0,
            failures: if errors > 0 {
                [(Outcome::Reset, errors)].into_iter().collect()
            } else {
                BTreeMap::new()
            },
            connects: 2,
            in_flight: 3.5,
            users: None,
            client_cpu_s: 0.2,
            lag_p99_us: None,
            lag_max_us: None,
        }
    }

    #[test]
    fn totals_cover_the_run_and_the_window_stays_bounded() {
        let mut w = Watch::default();
        for s in 0..(KEEP_S as u64 + 10) {
            w.push(row(s, 100, 1));
        }
        assert_eq!(w.rows, KEEP_S + 10);
        assert_eq!(w.recent.len(), KEEP_S);
        assert_eq!(w.responses, 100 * (KEEP_S as u64 + 10));
        assert_eq!(w.failures[&Outcome::Reset], KEEP_S as u64 + 10);
        assert_eq!(w.classes[1], w.responses);
        assert_eq!(w.recent.front().unwrap().second, 10);
    }

    #[test]
    fn the_current_second_is_never_the_tail_past_the_end() {
        let mut w = Watch::default();
        w.push(row(0, 100, 0));
        w.push(row(1, 90, 0));
        let mut tail = row(2, 1, 0);
        tail.length_s = 0.004;
        w.push(tail);
        assert_eq!(w.current(Some(2.0)).unwrap().second, 1);
        assert_eq!(w.current(None).unwrap().second, 1);
    }
}
