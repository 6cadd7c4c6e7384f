//! The run's figures as counters and gauges, folded from per-second rows.

use sample::Outcome;
use stats::{RunResult, SecondRow};
use std::collections::BTreeMap;

/// What does not change during a run: labels for `yace_run_info`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Info {
    /// The target as messages show it (no secret).
    pub target: String,
    /// `closed`, `open`, `users`.
    pub model: String,
    /// The open model's planned rate at each second, if any (index: second).
    pub planned_rate: Vec<f64>,
}

impl Info {
    /// From a plan (its target redacted).
    pub fn of(plan: &plan::Plan) -> Info {
        let model = match plan.load {
            plan::Load::Closed { .. } => "closed",
            plan::Load::Open { .. } => "open",
            plan::Load::Users { .. } => "users",
        };
        let schedule = plan.schedule();
        let planned_rate = match plan.load {
            plan::Load::Open { .. } => {
                let secs = plan
                    .stop
                    .duration
                    .map_or(0, |d| d.as_secs().min(86_400) + 1);
                (0..secs)
                    .map(|s| {
                        let t = s * 1_000_000_000 + 500_000_000;
                        (schedule.arrivals_at(t + 1_000_000) - schedule.arrivals_at(t)) * 1000.0
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        Info {
            target: plan.secrets.url(&plan.target.url),
            model: model.into(),
            planned_rate,
        }
    }
}

/// Counters (totals since the start) and gauges (the last full second).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Seconds of the run covered.
    pub elapsed_s: f64,
    pub responses: u64,
    pub errors: u64,
    pub dropped: u64,
    pub cancelled: u64,
    /// Responses by status class, `1xx` … `5xx`.
    pub statuses: [u64; 5],
    /// Failed requests by outcome (`timeout`, `refused`, …).
    pub failures: BTreeMap<String, u64>,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub connections: u64,
    pub client_cpu_s: f64,
    /// Σ latency of the responses, seconds (a summary's `_sum`).
    pub latency_sum_s: f64,
    /// The last full second's latency quantiles, seconds: 0.5, 0.9, 0.99, 1.
    pub latency: Option<[f64; 4]>,
    pub in_flight: f64,
    pub users: Option<f64>,
    /// The last full second's schedule lag p99, seconds.
    pub lag_p99_s: Option<f64>,
    /// The last full second's responses per second.
    pub rate: f64,
    /// The run ended (the figures are the result's).
    pub finished: bool,
    pub(crate) rows: usize,
}

impl Figures {
    /// Folds the rows not seen yet (the observer's whole list each time).
    pub fn observe(&mut self, rows: &[SecondRow]) {
        for r in rows.iter().skip(self.rows) {
            self.add(r);
        }
        self.rows = self.rows.max(rows.len());
        if let Some(last) = rows.iter().rev().find(|r| r.length_s >= 0.999) {
            self.gauges(last);
        }
    }

    fn add(&mut self, r: &SecondRow) {
        self.elapsed_s = r.second as f64 + r.length_s;
        self.responses += r.responses;
        self.errors += r.errors;
        self.dropped += r.dropped;
        self.cancelled += r.cancelled;
        for (i, n) in [
            r.status_1xx,
            r.status_2xx,
            r.status_3xx,
            r.status_4xx,
            r.status_5xx,
        ]
        .into_iter()
        .enumerate()
        {
            self.statuses[i] += n;
        }
        for (o, n) in &r.failures {
            *self.failures.entry(outcome_name(*o)).or_default() += n;
        }
        self.bytes_in += r.bytes_in;
        self.bytes_out += r.bytes_out;
        self.connections += r.connects;
        self.client_cpu_s += r.client_cpu_s;
        self.latency_sum_s += r.latency_mean_us * r.responses as f64 / 1e6;
    }

    fn gauges(&mut self, r: &SecondRow) {
        self.latency = (r.responses > 0).then(|| {
            [
                r.latency_p50_us / 1e6,
                r.latency_p90_us / 1e6,
                r.latency_p99_us / 1e6,
                r.latency_max_us / 1e6,
            ]
        });
        self.in_flight = r.in_flight;
        self.users = r.users;
        self.lag_p99_s = r.lag_p99_us.map(|v| v / 1e6);
        self.rate = r.responses as f64 / r.length_s.max(1e-9);
    }

    /// The run's end: the counters become the result's own.
    pub fn finish(&mut self, r: &RunResult) {
        let s = &r.summary;
        self.elapsed_s = s.duration_s;
        self.responses = s.responses;
        self.errors = s.errors;
        self.dropped = s.dropped;
        self.cancelled = s.cancelled;
        let mut statuses = [0u64; 5];
        for (code, n) in &r.statuses {
            let class = (code / 100) as usize;
            let i = if (1..=5).contains(&class) {
                class - 1
            } else {
                0
            };
            statuses[i] += n;
        }
        self.statuses = statuses;
        self.failures = r
            .outcomes
            .iter()
            .filter(|(o, _)| {
                !matches!(o, Outcome::Response | Outcome::Cancelled | Outcome::Dropped)
            })
            .map(|(o, n)| (outcome_name(*o), *n))
            .filter(|(_, n)| *n > 0)
            .collect();
        self.bytes_in = s.bytes_in;
        self.bytes_out = s.bytes_out;
        self.connections = s.connections_opened;
        self.client_cpu_s = r.client.cpu_s;
        self.latency_sum_s = s.latency.mean_us * s.latency.count as f64 / 1e6;
        self.finished = true;
        self.in_flight = 0.0;
    }
}

/// An outcome as a label value (`timeout`, `connect_refused`, …).
fn outcome_name(o: Outcome) -> String {
    serde_json::to_value(o)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{o:?}").to_lowercase())
}
