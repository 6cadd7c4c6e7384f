//! The server now, for the live view: each source's latest figures, in the
//! words and units the summary uses (CPU busy, load per CPU, the
//! process's CPU, connections, workers busy). Read from the same series
//! the result records, so what the view shows is what the file keeps.

use stats::monitor::{Monitoring, Source};

/// (label, value) lines, one or two per source; none for a source without
/// two samples yet (a counter's rate needs two).
pub(crate) fn lines(sources: &[Source]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for s in sources {
        // The latest sample only: a value from before a failed read, or
        // from before the source was dropped, is not the server now.
        if s.state == stats::monitor::SourceState::Dropped {
            continue;
        }
        let last = |name: &str| {
            Monitoring::metric(s, name).and_then(|m| m.values.last().copied().flatten())
        };
        match s.kind.as_str() {
            "system" | "node" | "ssh" => {
                let who = if s.kind == "system" {
                    "server"
                } else {
                    &s.kind
                };
                if let Some(busy) = last("cpu_busy") {
                    out.push((format!("{who} CPU"), format!("{busy:.0}% busy")));
                }
                if let Some(load) = last("load1") {
                    let cpus = last("cpus").unwrap_or(1.0).max(1.0);
                    let label = if s.kind == "system" {
                        "load/CPU".to_string()
                    } else {
                        format!("{who} load/CPU")
                    };
                    out.push((label, format!("{:.2}", load / cpus)));
                }
                if let Some(n) = last("tcp_port_established") {
                    out.push(("server conns".into(), format!("{n:.0}")));
                }
            }
            "process" => {
                if let Some(cpu) = last("cpu") {
                    out.push((short(&s.label), format!("{cpu:.0}% of a CPU")));
                }
            }
            "nginx" => {
                if let Some(n) = last("active") {
                    out.push(("nginx conns".into(), format!("{n:.0}")));
                }
            }
            "apache" => {
                if let (Some(busy), Some(idle)) = (last("busy_workers"), last("idle_workers")) {
                    out.push((
                        "apache busy".into(),
                        format!("{busy:.0}/{:.0} busy", busy + idle),
                    ));
                }
            }
            "fpm" => {
                if let (Some(busy), Some(idle)) = (last("active_processes"), last("idle_processes"))
                {
                    out.push((
                        "fpm busy".into(),
                        format!("{busy:.0}/{:.0} busy", busy + idle),
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

/// A source's label, short enough for the view's panel (13 characters).
fn short(label: &str) -> String {
    let head = label.split(':').next().unwrap_or(label).trim();
    head.chars().take(13).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::monitor::{Metric, MetricKind, SourceState};

    fn source(kind: &str, label: &str, metrics: &[(&str, MetricKind, f64)]) -> Source {
        Source {
            spec: kind.into(),
            kind: kind.into(),
            label: label.into(),
            state: SourceState::Ok,
            error: None,
            failures: 0,
            blind_from_s: None,
            blind_reason: None,
            cpu_s: None,
            t: vec![0.0, 1.0],
            metrics: metrics
                .iter()
                .map(|&(name, kind, v)| Metric {
                    name: name.into(),
                    unit: String::new(),
                    kind,
                    values: vec![None, Some(v)],
                    increase: None,
                })
                .collect(),
        }
    }

    #[test]
    fn each_kind_says_its_figures() {
        let g = MetricKind::Gauge;
        let r = MetricKind::Rate;
        let got = lines(&[
            source(
                "system",
                "this machine",
                &[("cpu_busy", r, 63.4), ("load1", g, 1.6), ("cpus", g, 2.0)],
            ),
            source("process", "php-fpm8.2: 5 processes", &[("cpu", r, 41.0)]),
            source("nginx", "nginx", &[("active", g, 120.0)]),
            source(
                "fpm",
                "www",
                &[("active_processes", g, 8.0), ("idle_processes", g, 0.0)],
            ),
            source("apache", "a", &[("busy_workers", g, 3.0)]),
        ]);
        let want: Vec<(String, String)> = [
            ("server CPU", "63% busy"),
            ("load/CPU", "0.80"),
            ("php-fpm8.2", "41% of a CPU"),
            ("nginx conns", "120"),
            ("fpm busy", "8/8 busy"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        // Apache without its idle workers says nothing rather than half.
        assert_eq!(got, want);
        // A failed latest read says nothing, rather than the one before.
        let mut failed = source("nginx", "nginx", &[("active", g, 120.0)]);
        failed.metrics[0].values = vec![Some(120.0), None];
        let mut dropped = source("nginx", "nginx", &[("active", g, 120.0)]);
        dropped.state = SourceState::Dropped;
        assert!(lines(&[failed, dropped]).is_empty());
    }
}
