//! What the samples mean: the server's headline figures and diagnoses in
//! words with the fix, as yace's error hints are. Pure: from the series
//! and the run's result.

use stats::monitor::{Diagnosis, Metric, Monitoring, ServerFigures, Source};
use stats::RunResult;
use std::collections::BTreeMap;

/// CPU busy at or above this share of all CPUs counts as saturated.
pub const CPU_SATURATED_PCT: f64 = 90.0;
/// TIME_WAIT sockets on the target's port worth a note.
pub const TIME_WAIT_PILE: f64 = 5_000.0;

/// Fills in the figures and diagnoses of `m` from its series and `r`.
pub fn conclude(m: &mut Monitoring, r: &RunResult) {
    m.server = figures(m, r);
    m.diagnoses = diagnoses(m, r);
}

fn metric<'a>(s: &'a Source, name: &str) -> Option<&'a Metric> {
    Monitoring::metric(s, name)
}

/// The source that describes the server's machine: node_exporter or the
/// SSH probe, else this machine when the target runs here.
fn machine<'a>(m: &'a Monitoring, r: &RunResult) -> Option<&'a Source> {
    let with_cpu = |s: &&Source| metric(s, "cpu_busy").is_some();
    m.sources
        .iter()
        .filter(with_cpu)
        .find(|s| s.kind == "node" || s.kind == "ssh")
        .or_else(|| {
            m.sources
                .iter()
                .filter(with_cpu)
                .find(|s| s.kind == "system" && r.environment.target_is_local)
        })
}

fn last(m: &Metric) -> Option<f64> {
    m.values.iter().rev().flatten().next().copied()
}

fn of_kind<'a>(m: &'a Monitoring, kind: &'a str) -> impl Iterator<Item = &'a Source> + 'a {
    m.sources.iter().filter(move |s| s.kind == kind)
}

fn figures(m: &Monitoring, r: &RunResult) -> ServerFigures {
    let mut f = ServerFigures::default();
    let responses = r.summary.responses as f64;
    if let Some(s) = machine(m, r) {
        let busy = metric(s, "cpu_busy");
        f.cpu_mean_pct = busy.and_then(Metric::mean);
        f.cpu_max_pct = busy.and_then(Metric::max);
        let cpus = metric(s, "cpus").and_then(last);
        f.load_per_cpu_max = metric(s, "load1")
            .and_then(Metric::max)
            .zip(cpus)
            .map(|(l, c)| l / c.max(1.0));
    }
    // CPU per request: the server's processes when watched, else the
    // machine's busy CPU (minus yace's own when they share it).
    let procs: Vec<&Source> = of_kind(m, "process").collect();
    let proc_cpu: Option<f64> = procs
        .iter()
        .filter_map(|s| metric(s, "cpu").and_then(|c| c.increase))
        .reduce(|a, b| a + b);
    if responses > 0.0 {
        if let Some(cpu_s) = proc_cpu {
            f.cpu_ms_per_request = Some(cpu_s * 1000.0 / responses);
            let names: Vec<&str> = procs.iter().map(|s| s.spec.as_str()).collect();
            f.cpu_source = Some(format!("the CPU time of {}", names.join(" + ")));
        } else if let Some(s) = machine(m, r) {
            if let Some(busy_s) = metric(s, "cpu_busy").and_then(|c| c.increase) {
                let (cpu_s, how) = if s.kind == "system" {
                    (
                        (busy_s - r.client.cpu_s).max(0.0),
                        "this machine's busy CPU minus yace's own",
                    )
                } else {
                    (busy_s, "the server machine's busy CPU")
                };
                f.cpu_ms_per_request = Some(cpu_s * 1000.0 / responses);
                f.cpu_source = Some(how.into());
            }
        }
    }
    f.connections_max = m
        .sources
        .iter()
        .find_map(|s| metric(s, "tcp_port_established").and_then(Metric::max))
        .or_else(|| of_kind(m, "nginx").find_map(|s| metric(s, "active").and_then(Metric::max)));
    if let Some(s) = of_kind(m, "fpm").next() {
        f.workers_busy_max = metric(s, "active_processes").and_then(Metric::max);
        f.workers_total = metric(s, "total_processes").and_then(Metric::max);
        f.workers_source = Some("php-fpm processes".into());
    } else if let Some(s) = of_kind(m, "apache").next() {
        f.workers_busy_max = metric(s, "busy_workers").and_then(Metric::max);
        f.workers_total = sum_max(metric(s, "busy_workers"), metric(s, "idle_workers"));
        f.workers_source = Some("Apache workers".into());
    }
    f
}

/// The highest per-sample sum of two gauges.
fn sum_max(a: Option<&Metric>, b: Option<&Metric>) -> Option<f64> {
    let (a, b) = (a?, b?);
    a.values
        .iter()
        .zip(&b.values)
        .filter_map(|(x, y)| Some((*x)? + (*y)?))
        .reduce(f64::max)
}

struct Found {
    code: &'static str,
    problem: bool,
    message: String,
    fix: String,
    figures: Vec<(&'static str, f64)>,
}

fn diagnoses(m: &Monitoring, r: &RunResult) -> Vec<Diagnosis> {
    let mut found = Vec::new();
    let f = &m.server;
    let mb = |b: f64| b / (1024.0 * 1024.0);

    // php-fpm's pool was full: it said so (`max children reached` grew;
    // php-fpm counts it once per episode, not per request turned away), or
    // no child was idle in two samples or more.
    for s in of_kind(m, "fpm") {
        let reached = metric(s, "max_children_reached")
            .and_then(|c| c.increase)
            .unwrap_or(0.0);
        let queue = metric(s, "listen_queue")
            .and_then(Metric::max)
            .unwrap_or(0.0)
            .max(
                metric(s, "max_listen_queue")
                    .and_then(Metric::max)
                    .unwrap_or(0.0),
            );
        let total = metric(s, "total_processes")
            .and_then(Metric::max)
            .unwrap_or(0.0);
        let (full, n) = match (metric(s, "active_processes"), metric(s, "idle_processes")) {
            (Some(a), Some(i)) => {
                let pairs: Vec<(f64, f64)> = a
                    .values
                    .iter()
                    .zip(&i.values)
                    .filter_map(|(a, i)| Some(((*a)?, (*i)?)))
                    .collect();
                let full = pairs.iter().filter(|(a, i)| *i == 0.0 && *a > 0.0).count();
                (full, pairs.len())
            }
            _ => (0, 0),
        };
        if reached > 0.0 || full >= 2 {
            let per_child = of_kind(m, "process")
                .filter(|p| p.label.starts_with("php-fpm"))
                .find_map(|p| {
                    let rss = metric(p, "rss_bytes").and_then(Metric::max)?;
                    let procs = metric(p, "processes").and_then(Metric::max)?;
                    Some(rss / procs.max(1.0))
                });
            let mem = per_child
                .map(|b| format!(" Each child took about {:.0} MB here.", mb(b)))
                .unwrap_or_default();
            let reached_words = if reached > 0.0 {
                format!("; it reached pm.max_children {}", times(reached))
            } else {
                String::new()
            };
            let queue_words = if queue > 0.0 {
                format!(" (up to {queue} in its listen queue)")
            } else {
                String::new()
            };
            found.push(Found {
                code: "fpm_max_children",
                problem: true,
                message: format!(
                    "php-fpm's pool was full: no idle child in {full} of {n} samples, all {total} \
                     busy{reached_words}; requests waited for a child{queue_words}."
                ),
                fix: format!(
                    "Raise pm.max_children in the pool's config if memory allows (children × \
                     memory per child must fit), or make the slow pages faster.{mem}"
                ),
                figures: vec![
                    ("samples_full", full as f64),
                    ("samples", n as f64),
                    ("max_children_reached", reached),
                    ("processes", total),
                    ("listen_queue_max", queue),
                ],
            });
        }
    }

    // Apache had no idle worker.
    for s in of_kind(m, "apache") {
        let (Some(busy), Some(idle)) = (metric(s, "busy_workers"), metric(s, "idle_workers"))
        else {
            continue;
        };
        let pairs: Vec<(f64, f64)> = busy
            .values
            .iter()
            .zip(&idle.values)
            .filter_map(|(b, i)| Some(((*b)?, (*i)?)))
            .collect();
        let full = pairs.iter().filter(|(b, i)| *i == 0.0 && *b > 0.0).count();
        if full >= 2 {
            let busy_max = busy.max().unwrap_or(0.0);
            found.push(Found {
                code: "apache_out_of_workers",
                problem: true,
                message: format!(
                    "Apache had no idle worker in {full} of {} samples ({busy_max} busy): new \
                     requests waited for a worker to free up.",
                    pairs.len()
                ),
                fix: "Raise MaxRequestWorkers (with ServerLimit, and ThreadsPerChild for the \
                      event and worker MPMs) if memory and CPU allow; with prefork each worker \
                      is a process. A shorter KeepAliveTimeout frees workers held by idle \
                      connections."
                    .into(),
                figures: vec![("samples_full", full as f64), ("busy_max", busy_max)],
            });
        }
    }

    // The server machine's CPUs were saturated.
    if let Some(s) = machine(m, r) {
        if let Some(busy) = metric(s, "cpu_busy") {
            let n = busy.present().count();
            let hot = busy.present().filter(|v| *v >= CPU_SATURATED_PCT).count();
            if n > 0 && hot >= 2 && hot * 5 >= n {
                let shared = if s.kind == "system" {
                    let cpus = metric(s, "cpus").and_then(last).unwrap_or(1.0);
                    let yace = 100.0 * r.client.cpu_s / r.summary.duration_s.max(1e-9) / cpus;
                    format!(
                        " yace ran on the same machine and used {yace:.0}% of its CPUs: pin the \
                         server and the client to separate cores (taskset), or load it from \
                         another machine."
                    )
                } else {
                    String::new()
                };
                let per_req = f
                    .cpu_ms_per_request
                    .map(|ms| format!(" The server spent {ms:.2} ms of CPU per request."))
                    .unwrap_or_default();
                found.push(Found {
                    code: "server_cpu_saturated",
                    problem: true,
                    message: format!(
                        "The server's CPUs were saturated: at least {CPU_SATURATED_PCT:.0}% busy \
                         in {hot} of {n} samples (mean {:.0}%).{per_req}",
                        busy.mean().unwrap_or(0.0)
                    ),
                    fix: format!(
                        "CPU is the limit: make each request cheaper (profile the page; for PHP \
                         enable OPcache), or add cores or servers; more workers will not help.\
                         {shared}"
                    ),
                    figures: vec![("samples_saturated", hot as f64), ("samples", n as f64)],
                });
            }
        }
    }

    // The kernel's listen queues overflowed (here, or on the server machine).
    for s in m
        .sources
        .iter()
        .filter(|s| matches!(s.kind.as_str(), "system" | "node" | "ssh"))
    {
        let inc = |name| metric(s, name).and_then(|c| c.increase).unwrap_or(0.0);
        let (over, drops) = (inc("listen_overflows"), inc("listen_drops"));
        if over > 0.0 || drops > 0.0 {
            found.push(Found {
                code: "listen_overflow",
                problem: true,
                message: format!(
                    "The listen queue overflowed: the kernel dropped {} connection attempts \
                     ({} overflows) because a listening socket's backlog was full ({}).",
                    drops.max(over),
                    over,
                    s.label
                ),
                fix: "The server accepts connections more slowly than they come: raise the \
                      listen backlog (nginx `listen … backlog=N`, Apache ListenBacklog, php-fpm \
                      listen.backlog) with net.core.somaxconn; if every worker is busy, that is \
                      the real limit."
                    .into(),
                figures: vec![("listen_drops", drops), ("listen_overflows", over)],
            });
            break;
        }
    }

    // nginx accepted more than it handled.
    for s in of_kind(m, "nginx") {
        let inc = |name| metric(s, name).and_then(|c| c.increase);
        if let (Some(a), Some(h)) = (inc("accepts"), inc("handled")) {
            if a > h {
                found.push(Found {
                    code: "nginx_dropped",
                    problem: true,
                    message: format!(
                        "nginx accepted {a} connections but handled {h}: {} were closed at once \
                         because it had no connection slot.",
                        a - h
                    ),
                    fix: "Raise worker_connections (and worker_rlimit_nofile) in nginx.conf."
                        .into(),
                    figures: vec![("accepts", a), ("handled", h)],
                });
            }
        }
    }

    // Memory ran low on the server machine.
    if let Some(s) = machine(m, r) {
        let total = metric(s, "mem_total_bytes").and_then(last);
        let low = metric(s, "mem_available_bytes").and_then(|a| a.present().reduce(f64::min));
        if let (Some(total), Some(low)) = (total, low) {
            if total > 0.0 && low < total * 0.1 {
                found.push(Found {
                    code: "memory_low",
                    problem: true,
                    message: format!(
                        "Memory ran low: {:.0} MB available of {:.0} MB at the worst sample.",
                        mb(low),
                        mb(total)
                    ),
                    fix: "Fewer or lighter workers (each php-fpm child or Apache prefork \
                          process holds its own memory), or more memory; watch for swapping."
                        .into(),
                    figures: vec![("available_bytes_min", low), ("total_bytes", total)],
                });
            }
        }
    }

    // The client, not the server, was the bottleneck.
    if r.client.saturated && f.cpu_max_pct.is_some_and(|c| c < 80.0) {
        found.push(Found {
            code: "client_bound",
            problem: true,
            message: format!(
                "The client, not the server, was the bottleneck: yace's busiest thread was {:.0}% \
                 busy while the server's CPU peaked at {:.0}%.",
                r.client.busiest_thread * 100.0,
                f.cpu_max_pct.unwrap_or(0.0)
            ),
            fix: "Give yace more threads (-t) or cores, or load from more machines (shards); \
                  the server has room."
                .into(),
            figures: vec![("busiest_thread", r.client.busiest_thread)],
        });
    }

    // TIME_WAIT piled up on the target's port.
    for s in m.sources.iter() {
        if let Some(tw) = metric(s, "tcp_port_time_wait").and_then(Metric::max) {
            if tw >= TIME_WAIT_PILE {
                found.push(Found {
                    code: "time_wait",
                    problem: false,
                    message: format!(
                        "TIME_WAIT sockets piled up to {tw} on the target's port: each closed \
                         connection holds its port pair for 60 s."
                    ),
                    fix: "Keep connections alive (HTTP/1.1 persistent connections; `-k` for \
                          ab) so they are reused; a client that must close may set \
                          net.ipv4.tcp_tw_reuse=1 and widen net.ipv4.ip_local_port_range."
                        .into(),
                    figures: vec![("time_wait_max", tw)],
                });
                break;
            }
        }
    }

    found.sort_by_key(|d| !d.problem);
    found
        .into_iter()
        .map(|d| Diagnosis {
            code: d.code.into(),
            severity: if d.problem { "problem" } else { "note" }.into(),
            message: d.message,
            fix: d.fix,
            figures: d
                .figures
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect::<BTreeMap<_, _>>(),
        })
        .collect()
}

fn times(n: f64) -> String {
    if n == 1.0 {
        "once".into()
    } else {
        format!("{n} times")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::monitor::{MetricKind, SourceState};

    fn result(local: bool, saturated: bool) -> RunResult {
        let mut r: RunResult = serde_json::from_str(include_str!(
            "../../report/tests/render/fixtures/closed.json"
        ))
        .unwrap();
        r.environment.target_is_local = local;
        r.client.saturated = saturated;
        r.client.busiest_thread = if saturated { 0.97 } else { 0.3 };
        r
    }

    fn metric(name: &str, kind: MetricKind, values: &[f64], increase: Option<f64>) -> Metric {
        Metric {
            name: name.into(),
            unit: "count".into(),
            kind,
            values: values.iter().map(|v| Some(*v)).collect(),
            increase,
        }
    }

    fn gauge(name: &str, values: &[f64]) -> Metric {
        metric(name, MetricKind::Gauge, values, None)
    }

    fn rate(name: &str, increase: f64) -> Metric {
        metric(
            name,
            MetricKind::Rate,
            &[0.0, increase / 3.0, increase / 3.0, increase / 3.0],
            Some(increase),
        )
    }

    fn source(kind: &str, metrics: Vec<Metric>) -> Source {
        Source {
            spec: kind.into(),
            kind: kind.into(),
            label: kind.into(),
            state: SourceState::Ok,
            error: None,
            failures: 0,
            blind_from_s: None,
            blind_reason: None,
            cpu_s: None,
            t: vec![0.0, 1.0, 2.0, 3.0],
            metrics,
        }
    }

    fn codes(sources: Vec<Source>, r: &RunResult) -> Vec<String> {
        let mut m = Monitoring {
            interval_s: 1.0,
            sources,
            ..Default::default()
        };
        conclude(&mut m, r);
        m.diagnoses.into_iter().map(|d| d.code).collect()
    }

    fn node(busy: &[f64], extra: Vec<Metric>) -> Source {
        let mut m = vec![
            metric("cpu_busy", MetricKind::Rate, busy, Some(2.0)),
            gauge("cpus", &[2.0; 4]),
            gauge("load1", &[0.5; 4]),
        ];
        m.extend(extra);
        source("node", m)
    }

    #[test]
    fn a_quiet_server_has_nothing_to_say() {
        let r = result(false, false);
        assert!(codes(vec![node(&[20.0, 30.0, 25.0, 20.0], vec![])], &r).is_empty());
    }

    #[test]
    fn the_client_is_named_when_it_is_the_limit() {
        let r = result(false, true);
        let c = codes(vec![node(&[20.0, 30.0, 25.0, 20.0], vec![])], &r);
        assert_eq!(c, ["client_bound"]);
        // A saturated server is not the client's fault.
        let c = codes(vec![node(&[95.0, 99.0, 98.0, 97.0], vec![])], &r);
        assert_eq!(c, ["server_cpu_saturated"]);
    }

    #[test]
    fn kernel_and_server_limits() {
        let r = result(true, false);
        let sys = source(
            "system",
            vec![
                metric("cpu_busy", MetricKind::Rate, &[10.0; 4], Some(1.0)),
                gauge("cpus", &[2.0; 4]),
                rate("listen_overflows", 12.0),
                rate("listen_drops", 12.0),
                gauge("tcp_port_time_wait", &[100.0, 6000.0, 9000.0, 12000.0]),
                gauge("mem_total_bytes", &[8e9; 4]),
                gauge("mem_available_bytes", &[4e9, 2e9, 5e8, 1e9]),
            ],
        );
        let nginx = source(
            "nginx",
            vec![rate("accepts", 1000.0), rate("handled", 990.0)],
        );
        let apache = source(
            "apache",
            vec![
                gauge("busy_workers", &[10.0, 150.0, 150.0, 150.0]),
                gauge("idle_workers", &[140.0, 0.0, 0.0, 0.0]),
            ],
        );
        let c = codes(vec![sys, nginx, apache], &r);
        assert_eq!(
            c,
            [
                "apache_out_of_workers",
                "listen_overflow",
                "nginx_dropped",
                "memory_low",
                "time_wait"
            ]
        );
    }

    #[test]
    fn cpu_per_request_prefers_the_servers_processes() {
        let r = result(true, false);
        let responses = r.summary.responses as f64;
        let p = source(
            "process",
            vec![metric("cpu", MetricKind::Rate, &[0.0, 50.0], Some(1.5))],
        );
        let sys = source(
            "system",
            vec![
                metric("cpu_busy", MetricKind::Rate, &[10.0; 4], Some(9.0)),
                gauge("cpus", &[2.0; 4]),
            ],
        );
        let mut m = Monitoring {
            sources: vec![sys.clone(), p],
            ..Default::default()
        };
        conclude(&mut m, &r);
        assert_eq!(m.server.cpu_ms_per_request, Some(1.5 * 1000.0 / responses));
        // Without them: the machine's busy CPU minus yace's own.
        let mut m = Monitoring {
            sources: vec![sys],
            ..Default::default()
        };
        conclude(&mut m, &r);
        let expect = (9.0 - r.client.cpu_s).max(0.0) * 1000.0 / responses;
        assert_eq!(m.server.cpu_ms_per_request, Some(expect));
        assert_eq!(m.server.load_per_cpu_max, None);
    }
}
