//! Pass/fail criteria on a result: `p99<200ms`, `errors<1%`, `rps>500`.
//! A breached threshold gives the run its own exit code.

use crate::hist::Distribution;
use crate::result::{RunResult, StepResult};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Metric {
    /// A latency percentile, 0–100.
    P(f64),
    Mean,
    Max,
    Min,
    Rps,
    Errors,
    Non2xx,
    Dropped,
    /// Paced users: iterations missed (`missed==0`, `missed<1%` of those
    /// due); the open model's dropped requests otherwise.
    Missed,
    /// Passing checks (k6's `checks`): `checks>99%`.
    Checks,
    /// Failing checks: `checks_failed==0`, `checks_failed<1%`.
    ChecksFailed,
    /// `--monitor`: the server machine's CPU busy, mean of the samples (%).
    ServerCpu,
    /// The same, highest sample (%).
    ServerCpuMax,
    /// The server's CPU time per response (a duration, like latencies).
    ServerCpuPerReq,
    /// Highest 1-minute load average per CPU (a number).
    LoadPerCpu,
    /// Problems the monitors diagnosed (a count).
    ServerProblems,
    /// 1 when the server fell behind the open model's rate (`behind==0`).
    Behind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
}

/// A parsed threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub expr: String,
    /// Applies to this scenario step only.
    pub step: Option<String>,
    metric: Metric,
    op: Op,
    /// Microseconds for latency metrics; a fraction when `percent`; else a count or rate.
    value: f64,
    percent: bool,
}

// How a threshold fared is part of the result document (result.rs), which
// does not look back here: thresholds read results, not the other way.
pub use crate::result::ThresholdResult;

const HELP: &str = "write METRIC OP VALUE, e.g. p99<200ms, mean<50ms, errors<1%, non_2xx<5%, \
                    rps>500, dropped==0, missed==0, behind==0, checks>99%, checks_failed==0; \
                    with --monitor: \
                    server_cpu<80%, server_cpu_max<95%, server_cpu_per_req<5ms, load_per_cpu<1, \
                    server_problems==0";

fn parse_latency(v: &str) -> Option<f64> {
    let v = v.trim();
    let (num, mul) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1e3)
    } else if let Some(n) = v.strip_suffix("us").or_else(|| v.strip_suffix("µs")) {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1e6)
    } else {
        // A bare number is seconds, as in every duration yace reads (-d 5).
        (v, 1e6)
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .map(|x| x * mul)
}

impl Threshold {
    /// Parses `METRIC OP VALUE`; `step` scopes it to one scenario step.
    pub fn parse(expr: &str, step: Option<&str>) -> Result<Threshold, String> {
        let e = expr.trim();
        let at = e
            .find(['<', '>', '='])
            .ok_or_else(|| format!("'{expr}' has no comparison; {HELP}"))?;
        let (m, rest) = e.split_at(at);
        let (op, v) = if let Some(v) = rest.strip_prefix("<=") {
            (Op::Le, v)
        } else if let Some(v) = rest.strip_prefix(">=") {
            (Op::Ge, v)
        } else if let Some(v) = rest.strip_prefix("==") {
            (Op::Eq, v)
        } else if let Some(v) = rest.strip_prefix('<') {
            (Op::Lt, v)
        } else if let Some(v) = rest.strip_prefix('>') {
            (Op::Gt, v)
        } else {
            return Err(format!("'{expr}': use <, <=, >, >= or ==; {HELP}"));
        };
        let m = m.trim().to_ascii_lowercase();
        let metric = match m.as_str() {
            "mean" | "avg" => Metric::Mean,
            "max" => Metric::Max,
            "min" => Metric::Min,
            "rps" => Metric::Rps,
            "errors" | "error_rate" => Metric::Errors,
            "non_2xx" => Metric::Non2xx,
            "dropped" => Metric::Dropped,
            "behind" => Metric::Behind,
            "missed" => Metric::Missed,
            "checks" => Metric::Checks,
            "checks_failed" => Metric::ChecksFailed,
            "server_cpu" => Metric::ServerCpu,
            "server_cpu_max" => Metric::ServerCpuMax,
            "server_cpu_per_req" => Metric::ServerCpuPerReq,
            "load_per_cpu" => Metric::LoadPerCpu,
            "server_problems" => Metric::ServerProblems,
            p if p.starts_with('p') => match p[1..].parse::<f64>() {
                Ok(x) if (0.0..=100.0).contains(&x) => Metric::P(x),
                _ => {
                    return Err(format!(
                        "'{expr}': '{m}' is not a percentile like p99 or p99.9"
                    ))
                }
            },
            _ => return Err(format!("'{expr}': unknown metric '{m}'; {HELP}")),
        };
        let v = v.trim();
        let latency = matches!(
            metric,
            Metric::P(_) | Metric::Mean | Metric::Max | Metric::Min | Metric::ServerCpuPerReq
        );
        if matches!(metric, Metric::ServerCpu | Metric::ServerCpuMax) && !v.trim().ends_with('%') {
            return Err(format!(
                "'{expr}': {m} is a share of the server's CPUs: write it with %, e.g. {m}<80%"
            ));
        }
        let (value, percent) = if latency {
            let us = parse_latency(v).ok_or_else(|| {
                format!(
                    "'{expr}': '{v}' is not a duration (200ms, 1s, 500us; a bare number is \
                     seconds)"
                )
            })?;
            (us, false)
        } else if let Some(p) = v.strip_suffix('%') {
            if metric == Metric::Rps {
                return Err(format!(
                    "'{expr}': rps takes a number of requests per second"
                ));
            }
            let x = p
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("'{expr}': '{v}' is not a percentage"))?;
            (x / 100.0, true)
        } else {
            let x = v
                .parse::<f64>()
                .map_err(|_| format!("'{expr}': '{v}' is not a number"))?;
            (x, false)
        };
        Ok(Threshold {
            expr: e.to_owned(),
            step: step.map(str::to_owned),
            metric,
            op,
            value,
            percent,
        })
    }

    /// True for `checks` and `checks_failed`: a run that sets one decides
    /// itself how many failed checks it accepts.
    pub fn is_about_checks(&self) -> bool {
        matches!(self.metric, Metric::Checks | Metric::ChecksFailed)
    }

    /// True for the server-side metrics, which need `--monitor`.
    pub fn needs_monitor(&self) -> bool {
        matches!(
            self.metric,
            Metric::ServerCpu
                | Metric::ServerCpuMax
                | Metric::ServerCpuPerReq
                | Metric::LoadPerCpu
                | Metric::ServerProblems
        )
    }

    /// The unit the actual value is reported in.
    fn unit(&self) -> &'static str {
        match self.metric {
            Metric::P(_) | Metric::Mean | Metric::Max | Metric::Min | Metric::ServerCpuPerReq => {
                "ms"
            }
            Metric::Rps => "req/s",
            _ if self.percent => "%",
            _ => "",
        }
    }

    /// The bound in the unit results show (`ThresholdResult::actual`): ms
    /// for latencies, % for shares, else as written.
    pub fn bound_shown(&self) -> f64 {
        match self.metric {
            Metric::P(_) | Metric::Mean | Metric::Max | Metric::Min | Metric::ServerCpuPerReq => {
                self.value / 1000.0
            }
            _ if self.percent => self.value * 100.0,
            _ => self.value,
        }
    }

    /// A latency threshold (its bound in ms).
    pub fn is_latency(&self) -> bool {
        matches!(
            self.metric,
            Metric::P(_) | Metric::Mean | Metric::Max | Metric::Min
        )
    }

    /// Evaluates against a result (or its step); a missing step fails.
    pub fn evaluate(&self, r: &RunResult) -> ThresholdResult {
        let step: Option<&StepResult> = self
            .step
            .as_ref()
            .and_then(|n| r.steps.iter().find(|s| &s.name == n));
        let s = &r.summary;
        let (latency, finished, errors, non_2xx): (&Distribution, u64, u64, u64) = match step {
            Some(st) => (&st.latency, st.responses + st.errors, st.errors, st.non_2xx),
            None => (&s.latency, s.responses + s.errors, s.errors, s.non_2xx),
        };
        let rate = |n: u64| {
            if finished == 0 {
                0.0
            } else {
                n as f64 / finished as f64
            }
        };
        let (checks_failed, checks_total) = r
            .checks
            .iter()
            .filter(|c| self.step.as_ref().is_none_or(|n| &c.step == n))
            .fold((0, 0), |(f, t), c| (f + c.failed, t + c.failed + c.passed));
        let (actual, shown) = match self.metric {
            Metric::P(p) => {
                let v = if p >= 100.0 {
                    latency.max_us
                } else {
                    quantile(r, step, p)
                };
                (v, v / 1000.0)
            }
            Metric::Mean => (latency.mean_us, latency.mean_us / 1000.0),
            Metric::Max => (latency.max_us, latency.max_us / 1000.0),
            Metric::Min => (latency.min_us, latency.min_us / 1000.0),
            Metric::Rps => (s.rps, s.rps),
            Metric::Behind => {
                let v = f64::from(u8::from(r.behind.is_some()));
                (v, v)
            }
            Metric::ServerCpu
            | Metric::ServerCpuMax
            | Metric::ServerCpuPerReq
            | Metric::LoadPerCpu
            | Metric::ServerProblems => {
                let Some(v) = self.server_value(r) else {
                    // Not monitored, or no source told: not a pass.
                    return ThresholdResult {
                        expr: self.expr.clone(),
                        step: self.step.clone(),
                        actual: 0.0,
                        passed: false,
                        unit: "no data (--monitor)".to_owned(),
                    };
                };
                v
            }
            Metric::Errors
            | Metric::Non2xx
            | Metric::Dropped
            | Metric::Missed
            | Metric::Checks
            | Metric::ChecksFailed => {
                let (n, total) = match self.metric {
                    Metric::Errors => (errors, finished),
                    Metric::Non2xx => (non_2xx, finished),
                    Metric::Dropped => (s.dropped, s.requests + s.dropped),
                    Metric::Missed => match (s.missed, s.started) {
                        (Some(m), Some(st)) => (m, st + m),
                        _ => (s.dropped, s.requests + s.dropped),
                    },
                    Metric::Checks => (checks_total - checks_failed, checks_total),
                    _ => (checks_failed, checks_total),
                };
                if self.percent {
                    let fr = if total == 0 {
                        0.0
                    } else {
                        n as f64 / total as f64
                    };
                    let _ = rate;
                    (fr, fr * 100.0)
                } else {
                    (n as f64, n as f64)
                }
            }
        };
        let passed = (self.step.is_none() || step.is_some())
            && match self.op {
                Op::Lt => actual < self.value,
                Op::Le => actual <= self.value,
                Op::Gt => actual > self.value,
                Op::Ge => actual >= self.value,
                Op::Eq => (actual - self.value).abs() < 1e-9,
            };
        let unit = self.unit();
        ThresholdResult {
            expr: self.expr.clone(),
            step: self.step.clone(),
            actual: shown,
            passed,
            unit: unit.to_owned(),
        }
    }
}

impl Threshold {
    /// A server-side metric's (compared, shown) values, if monitored.
    fn server_value(&self, r: &RunResult) -> Option<(f64, f64)> {
        let m = r.monitor.as_ref()?;
        let f = &m.server;
        Some(match self.metric {
            Metric::ServerCpu => (f.cpu_mean_pct? / 100.0, f.cpu_mean_pct?),
            Metric::ServerCpuMax => (f.cpu_max_pct? / 100.0, f.cpu_max_pct?),
            Metric::ServerCpuPerReq => {
                let ms = f.cpu_ms_per_request?;
                (ms * 1000.0, ms)
            }
            Metric::LoadPerCpu => (f.load_per_cpu_max?, f.load_per_cpu_max?),
            Metric::ServerProblems => {
                let n = m
                    .diagnoses
                    .iter()
                    .filter(|d| d.severity == "problem")
                    .count() as f64;
                (n, n)
            }
            _ => return None,
        })
    }
}

/// The unit a threshold expression's actual value is in ("ms", "%",
/// "req/s", "" for a count), from the expression alone.
pub fn unit_of(expr: &str) -> &'static str {
    Threshold::parse(expr, None).map_or("", |t| t.unit())
}

/// The unit of a threshold result's `actual`, also for a result written
/// before `unit` was recorded (read from the expression, as it was then
/// evaluated).
pub fn actual_unit(t: &ThresholdResult) -> &str {
    if t.unit.is_empty() {
        unit_of(&t.expr)
    } else {
        &t.unit
    }
}

/// Any percentile, read from the (step's) histogram rather than the summary's fixed list.
fn quantile(r: &RunResult, step: Option<&StepResult>, p: f64) -> f64 {
    let encoded = step.map_or(&r.histograms.latency, |s| &s.histogram);
    match crate::hist::decode(encoded) {
        Ok(h) if !h.is_empty() => h.value_at_quantile(p / 100.0) as f64,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_forms() {
        let t = Threshold::parse("p99<200ms", None).unwrap();
        assert_eq!(
            (t.metric, t.op, t.value),
            (Metric::P(99.0), Op::Lt, 200_000.0)
        );
        let t = Threshold::parse("errors < 1%", None).unwrap();
        assert_eq!((t.metric, t.value, t.percent), (Metric::Errors, 0.01, true));
        let t = Threshold::parse("rps>=500", None).unwrap();
        assert_eq!((t.metric, t.op, t.value), (Metric::Rps, Op::Ge, 500.0));
        assert_eq!(Threshold::parse("p99.9<1s", None).unwrap().value, 1e6);
        assert_eq!(Threshold::parse("dropped==0", None).unwrap().op, Op::Eq);
        assert_eq!(
            Threshold::parse("behind==0", None).unwrap().metric,
            Metric::Behind
        );
    }

    #[test]
    fn missed_reads_paced_users_iterations_else_the_dropped_requests() {
        let mut r: RunResult = serde_json::from_str(include_str!(
            "../../report/tests/render/fixtures/closed.json"
        ))
        .unwrap();
        let ev = |r: &RunResult, e: &str| {
            let x = Threshold::parse(e, None).unwrap().evaluate(r);
            (x.passed, x.actual)
        };
        r.summary.dropped = 0;
        assert_eq!(ev(&r, "missed==0"), (true, 0.0));
        r.summary.dropped = 3;
        assert_eq!(ev(&r, "missed==0"), (false, 3.0));
        r.summary.started = Some(45);
        r.summary.missed = Some(75);
        assert_eq!(ev(&r, "missed==0"), (false, 75.0));
        assert_eq!(ev(&r, "missed<50%"), (false, 62.5));
        r.summary.missed = Some(0);
        assert_eq!(ev(&r, "missed==0"), (true, 0.0));
    }

    #[test]
    fn server_side_thresholds_read_the_monitor() {
        use crate::monitor::{Diagnosis, Monitoring, ServerFigures};
        let mut r: RunResult = serde_json::from_str(include_str!(
            "../../report/tests/render/fixtures/closed.json"
        ))
        .unwrap();
        let t = Threshold::parse("server_cpu<80%", None).unwrap();
        assert!(t.needs_monitor());
        let unmonitored = t.evaluate(&r);
        assert!(!unmonitored.passed);
        assert!(unmonitored.unit.contains("--monitor"));
        r.monitor = Some(Monitoring {
            server: ServerFigures {
                cpu_mean_pct: Some(72.0),
                cpu_max_pct: Some(97.0),
                cpu_ms_per_request: Some(0.25),
                load_per_cpu_max: Some(1.5),
                ..Default::default()
            },
            diagnoses: vec![Diagnosis {
                code: "server_cpu_saturated".into(),
                severity: "problem".into(),
                message: String::new(),
                fix: String::new(),
                figures: Default::default(),
                evidence: Vec::new(),
                setting: None,
            }],
            ..Default::default()
        });
        let ev = |e: &str| {
            let x = Threshold::parse(e, None).unwrap().evaluate(&r);
            (x.passed, x.actual, x.unit)
        };
        assert_eq!(ev("server_cpu<80%"), (true, 72.0, "%".into()));
        assert_eq!(ev("server_cpu_max<95%"), (false, 97.0, "%".into()));
        assert_eq!(ev("server_cpu_per_req<1ms"), (true, 0.25, "ms".into()));
        assert_eq!(ev("load_per_cpu<1"), (false, 1.5, "".into()));
        assert_eq!(ev("server_problems==0"), (false, 1.0, "".into()));
        let e = Threshold::parse("server_cpu<80", None).unwrap_err();
        assert!(e.contains("write it with %"), "{e}");
    }

    /// One rule for bare numbers in durations: seconds, as `-d 5` is.
    #[test]
    fn a_bare_latency_bound_is_seconds() {
        let bare = Threshold::parse("p99<3", None).unwrap();
        let unit = Threshold::parse("p99<3s", None).unwrap();
        assert_eq!((bare.value, bare.bound_shown()), (unit.value, 3000.0));
    }

    #[test]
    fn bad_thresholds_say_what_to_write() {
        for bad in [
            "p99 200ms",
            "p99<lots",
            "p99<1m",
            "latency<1s",
            "rps>5%",
            "p101<1s",
            "errors<lots",
        ] {
            let e = Threshold::parse(bad, None).unwrap_err();
            assert!(e.contains(bad.trim()), "{e}");
        }
    }
}
