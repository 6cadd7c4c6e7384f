//! A Prometheus node_exporter scrape, mapped to the field names the local
//! /proc reader uses, so a remote server's figures read like this machine's.
//!
//! Counters: `cpu_<mode>_seconds` (`seconds`, summed over the CPUs, for
//! user, nice, system, idle, iowait, irq, softirq and steal), and
//! `listen_overflows`, `listen_drops`, `syncookies_sent`, `retrans_segs`,
//! `out_rsts` (`count`, from /proc/net/netstat and snmp, which node_exporter
//! types `untyped`). Gauges: `cpus`, `load1`, `load5`, `load15`,
//! `mem_total_bytes`, `mem_available_bytes` (`bytes`), `tcp_established`,
//! `tcp_time_wait_all`. A metric the exporter does not expose (a collector
//! turned off, another OS) leaves its field out.

use crate::reading::Reading;

use super::prom::Sample;

/// `node_cpu_seconds_total`'s modes, in the Reading's order.
const CPU_MODES: [&str; 8] = [
    "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
];

/// Gauges: (metric, field, unit).
const GAUGES: [(&str, &str, &str); 7] = [
    ("node_load1", "load1", "count"),
    ("node_load5", "load5", "count"),
    ("node_load15", "load15", "count"),
    ("node_memory_MemTotal_bytes", "mem_total_bytes", "bytes"),
    (
        "node_memory_MemAvailable_bytes",
        "mem_available_bytes",
        "bytes",
    ),
    ("node_netstat_Tcp_CurrEstab", "tcp_established", "count"),
    ("node_sockstat_TCP_tw", "tcp_time_wait_all", "count"),
];

/// Counters of events: (metric, field), unit `count`.
const COUNTERS: [(&str, &str); 5] = [
    ("node_netstat_TcpExt_ListenOverflows", "listen_overflows"),
    ("node_netstat_TcpExt_ListenDrops", "listen_drops"),
    ("node_netstat_TcpExt_SyncookiesSent", "syncookies_sent"),
    ("node_netstat_Tcp_RetransSegs", "retrans_segs"),
    ("node_netstat_Tcp_OutRsts", "out_rsts"),
];

/// Maps a parsed node_exporter scrape to a Reading.
pub fn to_reading(samples: &[Sample]) -> Result<Reading, String> {
    let cpu: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.name == "node_cpu_seconds_total")
        .collect();
    if cpu.is_empty() {
        return Err(if samples.iter().any(|s| s.name == "node_cpu") {
            "this node_exporter is older than 0.16 (it names CPU time node_cpu, not \
             node_cpu_seconds_total): upgrade node_exporter"
                .to_string()
        } else if samples.is_empty() {
            "not a node_exporter endpoint? the page has no metrics at all (the URL should be \
             node_exporter's /metrics, usually on port 9100)"
                .to_string()
        } else {
            "not a node_exporter endpoint? no node_cpu_seconds_total (the URL should be \
             node_exporter's /metrics, usually on port 9100, with the cpu collector on)"
                .to_string()
        });
    }

    let mut r = Reading::new();
    for mode in CPU_MODES {
        let mut seen = false;
        let mut sum = 0.0;
        for s in cpu.iter().filter(|s| label(s, "mode") == Some(mode)) {
            if s.value.is_finite() {
                seen = true;
                sum += s.value;
            }
        }
        if seen {
            r.counter(format!("cpu_{mode}_seconds"), "seconds", sum);
        }
    }
    let mut cpus: Vec<&str> = cpu.iter().filter_map(|s| label(s, "cpu")).collect();
    cpus.sort_unstable();
    cpus.dedup();
    if !cpus.is_empty() {
        r.gauge("cpus", "count", cpus.len() as f64);
    }
    for (metric, field, unit) in GAUGES {
        if let Some(v) = value(samples, metric) {
            r.gauge(field, unit, v);
        }
    }
    for (metric, field) in COUNTERS {
        if let Some(v) = value(samples, metric) {
            r.counter(field, "count", v);
        }
    }
    Ok(r)
}

fn label<'a>(s: &'a Sample, name: &str) -> Option<&'a str> {
    s.labels
        .iter()
        .find(|(l, _)| l == name)
        .map(|(_, v)| v.as_str())
}

/// The first finite value of the metric `name`.
fn value(samples: &[Sample], name: &str) -> Option<f64> {
    samples
        .iter()
        .find(|s| s.name == name && s.value.is_finite())
        .map(|s| s.value)
}

#[cfg(test)]
mod tests {
    use super::super::prom::parse;
    use super::*;
    use crate::reading::Kind;

    const NODE: &str = include_str!("fixtures/node_exporter.txt");

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-6)
    }

    #[test]
    fn real_scrape() {
        let r = to_reading(&parse(NODE).unwrap()).unwrap();
        let names: Vec<&str> = r.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "cpu_user_seconds",
                "cpu_nice_seconds",
                "cpu_system_seconds",
                "cpu_idle_seconds",
                "cpu_iowait_seconds",
                "cpu_irq_seconds",
                "cpu_softirq_seconds",
                "cpu_steal_seconds",
                "cpus",
                "load1",
                "load5",
                "load15",
                "mem_total_bytes",
                "mem_available_bytes",
                "tcp_established",
                "tcp_time_wait_all",
                "listen_overflows",
                "listen_drops",
                "syncookies_sent",
                "retrans_segs",
                "out_rsts",
            ]
        );
        // Two CPUs, summed.
        assert!(close(r.get("cpu_user_seconds"), 6259.52 + 9234.97));
        assert!(close(r.get("cpu_idle_seconds"), 13058.99 + 9779.75));
        assert!(close(r.get("cpu_steal_seconds"), 9.31 + 10.26));
        assert_eq!(r.get("cpu_irq_seconds"), Some(0.0));
        assert_eq!(r.get("cpus"), Some(2.0));
        assert_eq!(r.get("load1"), Some(0.45));
        assert_eq!(r.get("load5"), Some(0.62));
        assert_eq!(r.get("load15"), Some(0.92));
        assert_eq!(r.get("mem_total_bytes"), Some(25_276_502_016.0));
        assert_eq!(r.get("mem_available_bytes"), Some(24_606_552_064.0));
        assert_eq!(r.get("tcp_established"), Some(2.0));
        assert_eq!(r.get("tcp_time_wait_all"), Some(144.0));
        assert_eq!(r.get("listen_overflows"), Some(0.0));
        assert_eq!(r.get("retrans_segs"), Some(6589.0));
        assert_eq!(r.get("out_rsts"), Some(272_325.0));
        for f in &r.fields {
            let (kind, unit) = match f.name.as_str() {
                n if n.starts_with("cpu_") => (Kind::Counter, "seconds"),
                "mem_total_bytes" | "mem_available_bytes" => (Kind::Gauge, "bytes"),
                "listen_overflows" | "listen_drops" | "syncookies_sent" | "retrans_segs"
                | "out_rsts" => (Kind::Counter, "count"),
                _ => (Kind::Gauge, "count"),
            };
            assert_eq!((f.kind, f.unit), (kind, unit), "{}", f.name);
        }
    }

    #[test]
    fn missing_metrics_are_absent() {
        let body = "node_cpu_seconds_total{cpu=\"0\",mode=\"user\"} 10\n\
                    node_cpu_seconds_total{cpu=\"0\",mode=\"idle\"} 90\n\
                    node_cpu_seconds_total{cpu=\"1\",mode=\"user\"} 5\n\
                    node_cpu_seconds_total{cpu=\"1\",mode=\"idle\"} NaN\n\
                    node_load1 NaN\nnode_load5 0.5\n";
        let r = to_reading(&parse(body).unwrap()).unwrap();
        let names: Vec<&str> = r.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["cpu_user_seconds", "cpu_idle_seconds", "cpus", "load5"]
        );
        assert_eq!(r.get("cpu_user_seconds"), Some(15.0));
        assert_eq!(r.get("cpu_idle_seconds"), Some(90.0));
        assert_eq!(r.get("cpus"), Some(2.0));
    }

    #[test]
    fn not_node_exporter() {
        let samples = parse(include_str!("fixtures/prom_client_python.txt")).unwrap();
        let e = to_reading(&samples).unwrap_err();
        assert!(
            e.starts_with("not a node_exporter endpoint? no node_cpu_seconds_total"),
            "{e}"
        );
        let e = to_reading(&[]).unwrap_err();
        assert!(e.starts_with("not a node_exporter endpoint?"), "{e}");
        let old = parse("node_cpu{cpu=\"cpu0\",mode=\"user\"} 1\n").unwrap();
        let e = to_reading(&old).unwrap_err();
        assert!(e.contains("older than 0.16"), "{e}");
    }
}
