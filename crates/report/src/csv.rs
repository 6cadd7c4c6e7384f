//! The per-second series as CSV: one row per second of the run, for a
//! spreadsheet or a plotting tool. Built from the result alone.
//!
//! A run with `--monitor` sources has, after the series' own columns, one
//! column per source and metric, `server.<source>.<metric>` (the source is
//! its kind, numbered when there are several of a kind: `server.system.
//! cpu_busy`, `server.process2.rss_bytes`): the last sample taken in that
//! second (t in [s, s+1)), empty when none was.

use stats::monitor::Monitoring;
use stats::RunResult;
use std::io::{self, Write};

/// The header row; the columns are [`stats::SecondRow`]'s fields.
pub const HEADER: &str = "second,length_s,responses,errors,cancelled,dropped,non_2xx,\
bytes_in,bytes_out,latency_mean_us,latency_p50_us,latency_p90_us,latency_p99_us,latency_max_us,\
status_2xx,status_3xx,status_4xx,status_5xx,connects,in_flight,client_cpu_s,lag_p99_us,lag_max_us,users";

/// Writes the header and one row per second.
pub fn series(r: &RunResult, mut w: impl Write) -> io::Result<()> {
    let server = r
        .monitor
        .as_ref()
        .map(|m| Server::new(m, r.series.iter().map(|s| s.second).max()))
        .unwrap_or_default();
    write!(w, "{HEADER}")?;
    for name in &server.names {
        write!(w, ",{}", field(name))?;
    }
    writeln!(w)?;
    for s in &r.series {
        write!(
            w,
            // length_s to the millisecond: a float's full digits are noise.
            "{},{:.3},{},{},{},{},{},{},{},{:.1},{:.1},{:.1},{:.1},{:.1},{},{},{},{},{},{:.2},{:.3},{},{},{}",
            s.second,
            s.length_s,
            s.responses,
            s.errors,
            s.cancelled,
            s.dropped,
            s.non_2xx,
            s.bytes_in,
            s.bytes_out,
            s.latency_mean_us,
            s.latency_p50_us,
            s.latency_p90_us,
            s.latency_p99_us,
            s.latency_max_us,
            s.status_2xx,
            s.status_3xx,
            s.status_4xx,
            s.status_5xx,
            s.connects,
            s.in_flight,
            s.client_cpu_s,
            // Empty where not measured (closed model, or an older result).
            s.lag_p99_us.map_or(String::new(), |v| format!("{v:.1}")),
            s.lag_max_us.map_or(String::new(), |v| format!("{v:.1}")),
            s.users.map_or(String::new(), |v| format!("{v:.2}")),
        )?;
        for v in server.row(s.second) {
            match v {
                Some(v) => write!(w, ",{}", number(v))?,
                None => write!(w, ",")?,
            }
        }
        writeln!(w)?;
    }
    Ok(())
}

/// The monitor's columns: their names, and each source's sample of each
/// second.
#[derive(Default)]
struct Server<'a> {
    names: Vec<String>,
    monitor: Option<&'a Monitoring>,
    /// Per source, per second: the last sample whose t is in [s, s+1).
    at: Vec<Vec<Option<usize>>>,
}

impl<'a> Server<'a> {
    fn new(m: &'a Monitoring, last_second: Option<u64>) -> Server<'a> {
        let seconds = last_second.map_or(0, |s| s as usize + 1);
        let at = m
            .sources
            .iter()
            .map(|src| {
                let mut at = vec![None; seconds];
                for (i, &t) in src.t.iter().enumerate() {
                    if t >= 0.0 {
                        if let Some(slot) = at.get_mut(t.floor() as usize) {
                            *slot = Some(i);
                        }
                    }
                }
                at
            })
            .collect();
        let names = m
            .sources
            .iter()
            .enumerate()
            .flat_map(|(k, src)| {
                let source = source_name(m, k);
                src.metrics
                    .iter()
                    .map(move |metric| format!("server.{source}.{}", metric.name))
            })
            .collect();
        Server {
            names,
            monitor: Some(m),
            at,
        }
    }

    /// The values of one second, in the columns' order.
    fn row(&self, second: u64) -> impl Iterator<Item = Option<f64>> + '_ {
        self.monitor
            .into_iter()
            .flat_map(|m| &m.sources)
            .zip(&self.at)
            .flat_map(move |(src, at)| {
                let i = at.get(second as usize).copied().flatten();
                src.metrics
                    .iter()
                    .map(move |m| i.and_then(|i| m.values.get(i).copied().flatten()))
            })
    }
}

/// A source's name in its columns: its kind, numbered from 1 when the run
/// has several sources of that kind.
fn source_name(m: &Monitoring, k: usize) -> String {
    let kind = &m.sources[k].kind;
    let same = m.sources.iter().filter(|s| s.kind == *kind).count();
    if same == 1 {
        kind.clone()
    } else {
        let n = m.sources[..k].iter().filter(|s| s.kind == *kind).count() + 1;
        format!("{kind}{n}")
    }
}

/// A value without noise digits: at most three decimals, no trailing zeros.
fn number(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// A header field, quoted when it holds a comma, a quote or a line break
/// (a `prom:` metric's labels: `http_requests_total{code="200",method="get"}`).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::monitor::Source;

    /// A source as a result holds it (fields it lacks take their defaults).
    fn source(kind: &str, t: Vec<f64>, metrics: &[(&str, Vec<Option<f64>>)]) -> Source {
        let metrics: Vec<_> = metrics
            .iter()
            .map(|(name, values)| {
                serde_json::json!({"name": name, "unit": "count", "kind": "gauge", "values": values})
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "spec": kind, "kind": kind, "label": "", "state": "ok", "error": null,
            "failures": 0, "t": t, "metrics": metrics,
        }))
        .expect("a source")
    }

    #[test]
    fn each_second_has_its_last_sample() {
        let m = Monitoring {
            interval_s: 0.5,
            sources: vec![
                source(
                    "process",
                    vec![0.0, 0.5, 1.0, 2.7, 3.2],
                    &[(
                        "rss_bytes",
                        vec![Some(1.0), Some(2.0), None, Some(4.0), Some(5.5)],
                    )],
                ),
                source("process", vec![0.9], &[("cpu", vec![Some(12.25)])]),
                source(
                    "prom",
                    vec![1.5],
                    &[(r#"x{a="1",b="2"}"#, vec![Some(1.0 / 3.0)])],
                ),
            ],
            ..Default::default()
        };
        let s = Server::new(&m, Some(3));
        assert_eq!(
            s.names,
            [
                "server.process1.rss_bytes",
                "server.process2.cpu",
                r#"server.prom.x{a="1",b="2"}"#
            ]
        );
        let rows: Vec<Vec<Option<f64>>> = (0..5).map(|sec| s.row(sec).collect()).collect();
        assert_eq!(
            rows[0],
            [Some(2.0), Some(12.25), None],
            "0.5 is the last of second 0"
        );
        // A failed read (null) is the second's last sample: empty.
        assert_eq!(rows[1], [None, None, Some(1.0 / 3.0)]);
        assert_eq!(rows[2], [Some(4.0), None, None]);
        assert_eq!(rows[3], [Some(5.5), None, None]);
        assert_eq!(rows[4], [None, None, None], "past the series");
        assert_eq!(field(&s.names[2]), r#""server.prom.x{a=""1"",b=""2""}""#);
        assert_eq!(number(1.0 / 3.0), "0.333");
        assert_eq!(number(25276502016.0), "25276502016");
        assert_eq!(number(-0.0001), "0");
    }
}
