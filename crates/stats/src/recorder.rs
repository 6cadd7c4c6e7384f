//! The per-worker [`Sink`]: folds every sample into fixed-size aggregates,
//! so memory does not grow with the number of requests (STYLE.md §3).
//! Once a second it hands its second's figures to the shared [`Series`];
//! that is the only lock it takes, never one per request.

use crate::hist::{new_coarse_hist, new_hist, record_ns};
use crate::series::{SecondAcc, Series};
use hdrhistogram::Histogram;
use sample::{Detail, Lenient, Outcome, Sample, Sink};
use std::sync::{Arc, Mutex};

const SECOND: u64 = 1_000_000_000;

/// Body lengths of complete responses: ab's "Document Length", and how
/// often it varied (information, not failure).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BodyLengths {
    pub first: Option<u64>,
    pub min: u64,
    pub max: u64,
    /// Responses whose body length differed from the first response's.
    pub varied: u64,
    /// Counts of lengths other than `first`, for exact merging; bounded.
    others: Vec<(u64, u64)>,
    /// More distinct lengths were seen than `others` keeps.
    overflow: bool,
}

const MAX_LENGTHS: usize = 64;

impl BodyLengths {
    #[inline]
    fn record(&mut self, len: u64) {
        match self.first {
            None => {
                *self = BodyLengths {
                    first: Some(len),
                    min: len,
                    max: len,
                    ..Default::default()
                }
            }
            Some(f) if f == len => {}
            Some(_) => {
                self.min = self.min.min(len);
                self.max = self.max.max(len);
                self.varied += 1;
                self.count_other(len, 1);
            }
        }
    }

    fn count_other(&mut self, len: u64, n: u64) {
        if let Some(e) = self.others.iter_mut().find(|e| e.0 == len) {
            e.1 += n;
        } else if self.others.len() < MAX_LENGTHS {
            self.others.push((len, n));
        } else {
            self.overflow = true;
        }
    }

    /// Responses of length `len`, out of `responses`; `None` when unknown.
    fn count_of(&self, len: u64, responses: u64) -> Option<u64> {
        if self.first == Some(len) {
            Some(responses - self.varied)
        } else if let Some(e) = self.others.iter().find(|e| e.0 == len) {
            Some(e.1)
        } else if self.overflow {
            None
        } else {
            Some(0)
        }
    }

    /// Merges `o` (from `o_responses` responses) into these. Exact unless
    /// more than 64 distinct lengths were seen; then lengths equal to the
    /// first that `o` could not attribute count as varied.
    fn merge(&mut self, o: &BodyLengths, o_responses: u64) {
        let Some(f) = self.first else {
            *self = o.clone();
            return;
        };
        let Some(of) = o.first else { return };
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.varied += o_responses - o.count_of(f, o_responses).unwrap_or(0);
        if of != f {
            self.count_other(of, o_responses - o.varied);
        }
        for &(len, n) in &o.others {
            if len != f {
                self.count_other(len, n);
            }
        }
        self.overflow |= o.overflow;
    }
}

/// Everything a run adds up to, mergeable across workers, processes and hosts.
#[derive(Debug, Clone)]
pub struct Totals {
    /// Intended start → end of response (coordinated-omission corrected).
    pub latency: Histogram<u64>,
    /// Actual start → end (service time); recorded in the open model only,
    /// where it differs from `latency`.
    pub service: Histogram<u64>,
    /// Per request: TCP connect time (0 on a reused connection).
    pub connect: Histogram<u64>,
    /// Per request: TLS handshake time (0 on a reused connection; HTTPS only).
    pub tls: Histogram<u64>,
    /// Per request: first byte written → first byte of the response.
    pub wait: Histogram<u64>,
    /// Per request: first byte written → end of the response (ab's "Processing").
    pub processing: Histogram<u64>,
    /// Per connection: TCP handshake time.
    pub handshake: Histogram<u64>,
    /// Scheduled models: how late each request started (start − intended).
    pub lag: Histogram<u64>,
    /// Per scenario step (empty for a plain run).
    pub steps: Vec<StepTotals>,
    pub outcomes: [u64; Outcome::COUNT],
    /// Responses by status code (index = code, 0..=999).
    pub statuses: Vec<u64>,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub body_bytes: u64,
    pub retries: u64,
    /// Requests sent on a connection that had served others.
    pub reused: u64,
    /// Responses that let their connection be reused (ab's "Keep-Alive requests").
    pub keepalive_responses: u64,
    pub body: BodyLengths,
    /// Refused responses by the element at fault.
    pub details: [u64; Detail::COUNT],
    /// Responses read past a departure from the spec, by departure.
    pub lenient: [u64; Lenient::COUNT],
}

impl Default for Totals {
    fn default() -> Self {
        Totals {
            latency: new_hist(),
            service: new_hist(),
            connect: new_hist(),
            tls: new_hist(),
            wait: new_hist(),
            processing: new_hist(),
            handshake: new_hist(),
            lag: new_hist(),
            steps: Vec::new(),
            outcomes: [0; Outcome::COUNT],
            statuses: vec![0; 1000],
            bytes_in: 0,
            bytes_out: 0,
            body_bytes: 0,
            retries: 0,
            reused: 0,
            keepalive_responses: 0,
            body: BodyLengths::default(),
            details: [0; Detail::COUNT],
            lenient: [0; Lenient::COUNT],
        }
    }
}

impl Totals {
    /// Adds another worker's totals into these. The "first" body length is
    /// taken from `self` when it has one.
    pub fn merge(&mut self, o: &Totals) {
        for (a, b) in [
            (&mut self.latency, &o.latency),
            (&mut self.service, &o.service),
            (&mut self.connect, &o.connect),
            (&mut self.tls, &o.tls),
            (&mut self.wait, &o.wait),
            (&mut self.processing, &o.processing),
            (&mut self.handshake, &o.handshake),
            (&mut self.lag, &o.lag),
        ] {
            a.add(b).expect("histograms share one configuration");
        }
        for (a, b) in self.outcomes.iter_mut().zip(o.outcomes) {
            *a += b;
        }
        for (a, b) in self.statuses.iter_mut().zip(&o.statuses) {
            *a += b;
        }
        self.bytes_in += o.bytes_in;
        self.bytes_out += o.bytes_out;
        self.body_bytes += o.body_bytes;
        self.retries += o.retries;
        self.reused += o.reused;
        self.keepalive_responses += o.keepalive_responses;
        self.body.merge(&o.body, o.responses());
        for (a, b) in self.details.iter_mut().zip(o.details) {
            *a += b;
        }
        for (a, b) in self.lenient.iter_mut().zip(o.lenient) {
            *a += b;
        }
        if self.steps.len() < o.steps.len() {
            self.steps.resize_with(o.steps.len(), StepTotals::default);
        }
        for (a, b) in self.steps.iter_mut().zip(&o.steps) {
            a.merge(b);
        }
    }

    pub fn count(&self, o: Outcome) -> u64 {
        self.outcomes[o as usize]
    }

    pub fn responses(&self) -> u64 {
        self.count(Outcome::Response)
    }

    /// Requests started: every outcome, cancelled included.
    pub fn requests(&self) -> u64 {
        self.outcomes.iter().sum()
    }

    pub fn errors(&self) -> u64 {
        Outcome::ALL
            .iter()
            .filter(|o| o.is_error())
            .map(|&o| self.count(o))
            .sum()
    }
}

/// One scenario step's figures.
#[derive(Debug, Clone)]
pub struct StepTotals {
    pub latency: Histogram<u64>,
    pub outcomes: [u64; Outcome::COUNT],
    pub non_2xx: u64,
}

impl Default for StepTotals {
    fn default() -> Self {
        StepTotals {
            latency: new_hist(),
            outcomes: [0; Outcome::COUNT],
            non_2xx: 0,
        }
    }
}

impl StepTotals {
    fn merge(&mut self, o: &StepTotals) {
        self.latency.add(&o.latency).expect("same configuration");
        for (a, b) in self.outcomes.iter_mut().zip(o.outcomes) {
            *a += b;
        }
        self.non_2xx += o.non_2xx;
    }
}

/// What a recorder records besides the basics.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecorderOptions {
    /// Requests have intended times (open model, virtual users): also record
    /// service time and schedule lag.
    pub scheduled: bool,
    /// Scenario steps to keep separate figures for (0: a plain run).
    pub steps: usize,
    /// HTTPS: record the TLS handshake phase.
    pub tls: bool,
    /// Paced virtual users: the pacing, ns. Their waiting is latency
    /// (docs/design/016-paced-users-accounting.md): a missed iteration
    /// (dropped) counts from its due time to when its user could have
    /// started it, and a request still waiting at the end a pacing period
    /// or more after it was due counts to the end. Lower bounds of what
    /// each would have waited, as HdrHistogram's expected-interval
    /// correction records them, instead of leaving the waiting out.
    pub paced: Option<u64>,
}

/// One worker's recorder.
#[derive(Debug)]
pub struct Recorder {
    pub totals: Totals,
    scheduled: bool,
    tls: bool,
    paced: Option<u64>,
    worker: usize,
    second: u64,
    cur: SecondAcc,
    series: Arc<Mutex<Series>>,
    /// In-flight samples of the current second (sum, count), and the
    /// thread's CPU time at the last gauge and at the second's start.
    in_flight: (u64, u32),
    /// Users samples of the current second (sum, count), when the worker
    /// has users.
    users: Option<(u64, u32)>,
    cpu_now: u64,
    cpu_mark: u64,
}

impl Recorder {
    pub fn new(worker: usize, options: RecorderOptions, series: Arc<Mutex<Series>>) -> Self {
        let mut totals = Totals::default();
        totals.steps.resize_with(options.steps, StepTotals::default);
        Recorder {
            totals,
            scheduled: options.scheduled,
            tls: options.tls,
            paced: options.paced,
            worker,
            second: 0,
            cur: Self::second(options.scheduled),
            series,
            in_flight: (0, 0),
            users: None,
            cpu_now: 0,
            cpu_mark: 0,
        }
    }

    fn second(scheduled: bool) -> SecondAcc {
        let mut acc = SecondAcc::new(new_coarse_hist());
        if scheduled {
            acc.lag = Some(new_coarse_hist());
        }
        acc
    }

    /// Hands the current second to the series and moves on to `to_second`.
    fn roll(&mut self, to_second: u64) {
        let mut acc = std::mem::replace(&mut self.cur, Self::second(self.scheduled));
        let (sum, n) = std::mem::take(&mut self.in_flight);
        if n > 0 {
            acc.in_flight = sum as f64 / f64::from(n);
        }
        if let Some((sum, n)) = self.users.as_mut().map(std::mem::take) {
            if n > 0 {
                acc.users = Some(sum as f64 / f64::from(n));
            }
        }
        acc.cpu_ns = self.cpu_now.saturating_sub(self.cpu_mark);
        self.cpu_mark = self.cpu_now;
        let mut series = self.series.lock().unwrap_or_else(|e| e.into_inner());
        series.submit(self.worker, self.second, acc, to_second);
        drop(series);
        self.second = to_second;
    }
}

impl Sink for Recorder {
    #[inline]
    fn record(&mut self, s: &Sample) {
        if s.end >= (self.second + 1) * SECOND {
            self.roll(s.end / SECOND);
        }
        let t = &mut self.totals;
        t.outcomes[s.outcome as usize] += 1;
        if s.detail != Detail::None {
            t.details[s.detail as usize] += 1;
        }
        if s.lenient != 0 {
            for l in Lenient::ALL {
                t.lenient[l as usize] += u64::from(s.lenient & l.bit() != 0);
            }
        }
        t.bytes_in += s.bytes_in;
        t.bytes_out += s.bytes_out;
        t.reused += u64::from(s.reused);
        self.cur.bytes_in += s.bytes_in;
        self.cur.bytes_out += s.bytes_out;
        match s.outcome {
            Outcome::Response => {
                let total = s.end.saturating_sub(s.intended);
                record_ns(&mut t.latency, total);
                record_ns(&mut self.cur.hist, total);
                if self.scheduled {
                    let lag = s.start.saturating_sub(s.intended);
                    record_ns(&mut t.service, s.end.saturating_sub(s.start));
                    record_ns(&mut t.lag, lag);
                    if let Some(l) = &mut self.cur.lag {
                        record_ns(l, lag);
                    }
                }
                let connect = if s.connected > 0 {
                    s.connected.saturating_sub(s.start)
                } else {
                    0
                };
                record_ns(&mut t.connect, connect);
                if self.tls {
                    let tls = if s.handshaken > 0 {
                        s.handshaken.saturating_sub(s.connected)
                    } else {
                        0
                    };
                    record_ns(&mut t.tls, tls);
                }
                record_ns(&mut t.wait, s.first_byte.saturating_sub(s.sent));
                record_ns(&mut t.processing, s.end.saturating_sub(s.sent));
                t.keepalive_responses += u64::from(s.keep_alive);
                t.statuses[(s.status as usize).min(999)] += 1;
                t.body_bytes += s.body_len;
                t.body.record(s.body_len);
                self.cur.responses += 1;
                self.cur.non_2xx += u64::from(!(200..300).contains(&s.status));
                let class = match s.status {
                    200..=599 => usize::from(s.status / 100 - 1),
                    _ => 0,
                };
                self.cur.classes[class] += 1;
            }
            Outcome::Cancelled => {
                self.cur.cancelled += 1;
                let waited = s.end.saturating_sub(s.intended);
                if self.paced.is_some_and(|p| waited >= p) {
                    record_ns(&mut t.latency, waited);
                    record_ns(&mut self.cur.hist, waited);
                }
            }
            Outcome::Dropped => {
                self.cur.dropped += 1;
                if self.paced.is_some() {
                    let waited = s.end.saturating_sub(s.intended);
                    record_ns(&mut t.latency, waited);
                    record_ns(&mut self.cur.hist, waited);
                }
            }
            o => {
                self.cur.errors += 1;
                self.cur.failed[o as usize] += 1;
            }
        }
        if let Some(st) = t.steps.get_mut(s.step as usize) {
            st.outcomes[s.outcome as usize] += 1;
            if s.outcome == Outcome::Response {
                record_ns(&mut st.latency, s.end.saturating_sub(s.intended));
                st.non_2xx += u64::from(!(200..300).contains(&s.status));
            }
        }
    }

    fn connected(&mut self, nanos: u64) {
        record_ns(&mut self.totals.handshake, nanos);
        self.cur.connects += 1;
    }

    fn gauge(&mut self, g: sample::Gauge) {
        let sample::Gauge {
            in_flight,
            users,
            cpu_ns,
        } = g;
        self.in_flight.0 += in_flight as u64;
        self.in_flight.1 += 1;
        if let Some(u) = users {
            let acc = self.users.get_or_insert((0, 0));
            acc.0 += u as u64;
            acc.1 += 1;
        }
        if self.cpu_mark == 0 && self.cpu_now == 0 {
            // The first gauge: the thread's CPU time before the run is not the run's.
            self.cpu_mark = cpu_ns;
        }
        self.cpu_now = cpu_ns;
    }

    fn retried(&mut self) {
        self.totals.retries += 1;
    }

    fn finish(&mut self, now: u64) {
        let s = now / SECOND;
        if s > self.second {
            self.roll(s);
        }
        self.roll(s + 1);
    }

    fn tick(&mut self, now: u64) {
        if now >= (self.second + 1) * SECOND {
            self.roll(now / SECOND);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(end_ms: u64, lat_ms: u64, status: u16, body: u64) -> Sample {
        let end = end_ms * 1_000_000;
        let start = end - lat_ms * 1_000_000;
        Sample {
            outcome: Outcome::Response,
            status,
            step: 0,
            intended: start,
            start,
            connected: 0,
            handshaken: 0,
            sent: start,
            first_byte: end,
            end,
            bytes_in: 100 + body,
            bytes_out: 50,
            body_len: body,
            reused: false,
            keep_alive: true,
            ..Default::default()
        }
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let series = Arc::new(Mutex::new(Series::new(3)));
        let mut one = Recorder::new(0, RecorderOptions::default(), series.clone());
        let mut parts: Vec<Recorder> = (0..2)
            .map(|w| Recorder::new(w + 1, RecorderOptions::default(), series.clone()))
            .collect();
        for i in 0..1000u64 {
            let s = sample(
                10 + i,
                1 + i % 37,
                if i % 10 == 0 { 500 } else { 200 },
                12 + i % 3,
            );
            one.record(&s);
            parts[(i % 2) as usize].record(&s);
        }
        let mut merged = Totals::default();
        for p in &parts {
            merged.merge(&p.totals);
        }
        assert_eq!(merged.latency, one.totals.latency);
        assert_eq!(merged.statuses, one.totals.statuses);
        assert_eq!(merged.outcomes, one.totals.outcomes);
        assert_eq!(merged.bytes_in, one.totals.bytes_in);
        assert_eq!(merged.body.varied, one.totals.body.varied);
        assert_eq!(merged.body.min, 12);
        assert_eq!(merged.body.max, 14);
        assert_eq!(merged.statuses[500], 100);
    }

    #[test]
    fn paced_users_waiting_is_latency() {
        let series = Arc::new(Mutex::new(Series::new(1)));
        let ms = 1_000_000;
        let options = RecorderOptions {
            scheduled: true,
            paced: Some(500 * ms),
            ..Default::default()
        };
        let mut r = Recorder::new(0, options, series);
        let at = |outcome, intended, end| Sample {
            outcome,
            intended,
            start: end,
            end,
            ..Default::default()
        };
        // A missed iteration, due at 1 s, its user free at 1.7 s.
        r.record(&at(Outcome::Dropped, 1000 * ms, 1700 * ms));
        // Cancelled at the end: one waiting since 0 s counts, one sent
        // 10 ms before the end does not.
        r.record(&at(Outcome::Cancelled, 0, 3000 * ms));
        r.record(&at(Outcome::Cancelled, 2990 * ms, 3000 * ms));
        assert_eq!(r.totals.latency.len(), 2);
        assert_eq!(
            r.totals.latency.max(),
            r.totals.latency.highest_equivalent(3_000_000)
        );
        assert_eq!(r.totals.count(Outcome::Dropped), 1);
        // Unpaced, neither is latency (the open model's drops are counted only).
        let mut open = Recorder::new(
            0,
            RecorderOptions::default(),
            Arc::new(Mutex::new(Series::new(1))),
        );
        open.record(&at(Outcome::Dropped, 1000 * ms, 1700 * ms));
        open.record(&at(Outcome::Cancelled, 0, 3000 * ms));
        assert_eq!(open.totals.latency.len(), 0);
    }

    #[test]
    fn cancelled_is_not_an_error() {
        let series = Arc::new(Mutex::new(Series::new(1)));
        let mut r = Recorder::new(0, RecorderOptions::default(), series);
        r.record(&Sample {
            outcome: Outcome::Cancelled,
            end: 5,
            ..Default::default()
        });
        r.record(&Sample {
            outcome: Outcome::Timeout,
            end: 6,
            ..Default::default()
        });
        assert_eq!(r.totals.requests(), 2);
        assert_eq!(r.totals.errors(), 1);
        assert_eq!(r.totals.latency.len(), 0);
    }
}
