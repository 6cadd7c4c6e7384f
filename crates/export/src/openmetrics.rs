//! The OpenMetrics text exposition (what Prometheus scrapes): names after
//! Prometheus' conventions — `yace_` first, the unit in the name, `_total`
//! on counters — and `# EOF` at the end.

use crate::figures::{Figures, Info};
use std::fmt::Write;

/// A label value, escaped as the format asks (`\`, `"`, newline).
fn esc(v: &str) -> String {
    v.replace('\\', r"\\")
        .replace('"', r#"\""#)
        .replace('\n', r"\n")
}

/// A number as the format writes it.
fn num(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// The exposition of `f`, for `info`'s run.
pub fn render(f: &Figures, info: &Info) -> String {
    let mut o = String::with_capacity(4096);
    let family = |o: &mut String, name: &str, kind: &str, unit: &str, help: &str| {
        let _ = writeln!(o, "# TYPE {name} {kind}");
        if !unit.is_empty() {
            let _ = writeln!(o, "# UNIT {name} {unit}");
        }
        let _ = writeln!(o, "# HELP {name} {help}");
    };
    family(&mut o, "yace_run", "info", "", "The run being measured.");
    let _ = writeln!(
        o,
        "yace_run_info{{target=\"{}\",model=\"{}\",finished=\"{}\"}} 1",
        esc(&info.target),
        esc(&info.model),
        f.finished
    );
    family(
        &mut o,
        "yace_run_elapsed_seconds",
        "gauge",
        "seconds",
        "Seconds of the run covered by these figures.",
    );
    let _ = writeln!(o, "yace_run_elapsed_seconds {}", num(f.elapsed_s));
    let counter = |o: &mut String, name: &str, unit: &str, help: &str, v: f64| {
        let _ = writeln!(o, "# TYPE {name} counter");
        if !unit.is_empty() {
            let _ = writeln!(o, "# UNIT {name} {unit}");
        }
        let _ = writeln!(o, "# HELP {name} {help}");
        let _ = writeln!(o, "{name}_total {}", num(v));
    };
    counter(
        &mut o,
        "yace_responses",
        "",
        "Complete responses, any status.",
        f.responses as f64,
    );
    let _ = writeln!(o, "# TYPE yace_responses_by_status counter");
    let _ = writeln!(
        o,
        "# HELP yace_responses_by_status Responses by status class."
    );
    for (i, n) in f.statuses.iter().enumerate() {
        let _ = writeln!(
            o,
            "yace_responses_by_status_total{{class=\"{}xx\"}} {n}",
            i + 1
        );
    }
    counter(
        &mut o,
        "yace_errors",
        "",
        "Failed requests (no complete response), all classes.",
        f.errors as f64,
    );
    let _ = writeln!(o, "# TYPE yace_errors_by_class counter");
    let _ = writeln!(
        o,
        "# HELP yace_errors_by_class Failed requests by class (timeout, refused, reset, …)."
    );
    for (class, n) in &f.failures {
        let _ = writeln!(
            o,
            "yace_errors_by_class_total{{class=\"{}\"}} {n}",
            esc(class)
        );
    }
    counter(
        &mut o,
        "yace_dropped_requests",
        "",
        "Open model: requests not sent because no connection was free in time.",
        f.dropped as f64,
    );
    counter(
        &mut o,
        "yace_received_bytes",
        "bytes",
        "Bytes received from the server.",
        f.bytes_in as f64,
    );
    counter(
        &mut o,
        "yace_sent_bytes",
        "bytes",
        "Bytes sent to the server.",
        f.bytes_out as f64,
    );
    counter(
        &mut o,
        "yace_connections_opened",
        "",
        "Connections established.",
        f.connections as f64,
    );
    counter(
        &mut o,
        "yace_client_cpu_seconds",
        "seconds",
        "CPU time of the client's worker threads.",
        f.client_cpu_s,
    );
    family(
        &mut o,
        "yace_latency_seconds",
        "summary",
        "seconds",
        "Latency of responses: quantiles of the last full second; count and sum since the start.",
    );
    if let Some(q) = f.latency {
        for (quantile, v) in ["0.5", "0.9", "0.99", "1.0"].iter().zip(q) {
            let _ = writeln!(
                o,
                "yace_latency_seconds{{quantile=\"{quantile}\"}} {}",
                num(v)
            );
        }
    }
    let _ = writeln!(o, "yace_latency_seconds_sum {}", num(f.latency_sum_s));
    let _ = writeln!(o, "yace_latency_seconds_count {}", f.responses);
    family(
        &mut o,
        "yace_responses_per_second",
        "gauge",
        "",
        "Responses in the last full second.",
    );
    let _ = writeln!(o, "yace_responses_per_second {}", num(f.rate));
    family(
        &mut o,
        "yace_requests_in_flight",
        "gauge",
        "",
        "Requests in flight, on average over the last full second.",
    );
    let _ = writeln!(o, "yace_requests_in_flight {}", num(f.in_flight));
    if let Some(u) = f.users {
        family(
            &mut o,
            "yace_users",
            "gauge",
            "",
            "Virtual users (or connections) inside their window, on average over the last full second.",
        );
        let _ = writeln!(o, "yace_users {}", num(u));
    }
    if !info.planned_rate.is_empty() {
        family(
            &mut o,
            "yace_offered_requests_per_second",
            "gauge",
            "",
            "Open model: the rate the plan offers now.",
        );
        let at = (f.elapsed_s.max(0.0) as usize).min(info.planned_rate.len() - 1);
        let rate = if f.finished {
            0.0
        } else {
            info.planned_rate[at]
        };
        let _ = writeln!(o, "yace_offered_requests_per_second {}", num(rate));
    }
    if let Some(l) = f.lag_p99_s {
        family(
            &mut o,
            "yace_schedule_lag_p99_seconds",
            "gauge",
            "seconds",
            "How late the last full second's requests were sent (p99): the client keeping its schedule.",
        );
        let _ = writeln!(o, "yace_schedule_lag_p99_seconds {}", num(l));
    }
    o.push_str("# EOF\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> (Figures, Info) {
        let mut f = Figures {
            responses: 10,
            errors: 2,
            latency: Some([0.001, 0.002, 0.003, 0.004]),
            users: Some(3.0),
            lag_p99_s: Some(0.0001),
            ..Figures::default()
        };
        f.failures.insert("timeout".into(), 2);
        let info = Info {
            target: "http://x/\"q\"".into(),
            model: "open".into(),
            planned_rate: vec![100.0],
        };
        (f, info)
    }

    #[test]
    fn names_follow_the_conventions_and_label_values_are_escaped() {
        let (f, info) = full();
        let t = render(&f, &info);
        assert!(t.ends_with("# EOF\n"));
        assert!(t.contains("yace_responses_total 10\n"));
        assert!(t.contains("yace_errors_by_class_total{class=\"timeout\"} 2\n"));
        assert!(t.contains(r#"target="http://x/\"q\"""#), "{t}");
        // Counters' samples end in _total; the family does not.
        for line in t
            .lines()
            .filter(|l| l.starts_with("# TYPE ") && l.ends_with(" counter"))
        {
            assert!(!line.contains("_total"), "{line}");
        }
    }

    /// Every metric the Grafana dashboard queries is one this serves.
    #[test]
    fn the_grafana_dashboard_asks_only_for_metrics_that_exist() {
        let (f, info) = full();
        let t = render(&f, &info);
        let served: Vec<&str> = t
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split(['{', ' ']).next())
            .collect();
        let dash: serde_json::Value =
            serde_json::from_str(include_str!("../../../contrib/grafana/yace-dashboard.json"))
                .unwrap();
        let mut asked = 0;
        for p in dash["panels"].as_array().unwrap() {
            for target in p["targets"].as_array().unwrap() {
                let expr = target["expr"].as_str().unwrap();
                for word in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                    if word.starts_with("yace_") {
                        asked += 1;
                        assert!(served.contains(&word), "{word} in {expr} is not served");
                    }
                }
            }
        }
        assert!(asked >= 15, "{asked}");
    }
}
