//! What the samples mean: the server's headline figures and diagnoses in
//! words with the fix, as yace's error hints are. Pure: from the series
//! and the run's result.
//!
//! One engine with evidence and precedence. Each diagnosis holds only when
//! its evidence does, for several samples, and says what it rests on
//! (which figure of which source, over which seconds). When two limits'
//! evidence holds together, the engine decides which ran out first and
//! sets the other aside in `ruled_out` with the reason: a pool whose
//! children were all busy on full CPUs is CPU-bound, and raising its size
//! would not help, so the two fixes are never printed together.
//!
//! A source that went blind is a gap: its readings before the gap are not
//! carried on as the run's figures; the kernel's (accept queues, the
//! process tree) stand in, and `blind` says from when and why.

use stats::monitor::{
    Blind, Diagnosis, Evidence, Metric, Monitoring, RuledOut, ServerFigures, Setting, Source,
};
use stats::RunResult;
use std::collections::BTreeMap;

/// CPU busy at or above this share of all CPUs counts as saturated.
pub const CPU_SATURATED_PCT: f64 = 90.0;
/// TIME_WAIT sockets on the target's port worth a note.
pub const TIME_WAIT_PILE: f64 = 5_000.0;
/// A condition must hold in at least this many samples…
pub const MIN_SAMPLES: u64 = 3;
/// …and in at least half the samples read, to be evidence: a pool near
/// its capacity (or slowed by a busy machine) queues now and then without
/// being full; a full one queues most of the time.
pub const MIN_SHARE: f64 = 0.5;

/// Fills in the figures and diagnoses of `m` from its series and `r`.
pub fn conclude(m: &mut Monitoring, r: &RunResult) {
    m.blind = blind(m, r);
    m.server = figures(m, r);
    let (found, ruled_out) = diagnoses(m, r);
    m.diagnoses = found;
    m.ruled_out = ruled_out;
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

/// The name of the program a process source watches (`php-fpm8.2`), as
/// read at the end of the run.
fn program<'a>(m: &'a Monitoring, s: &Source) -> Option<&'a str> {
    m.settings
        .iter()
        .find(|x| x.source == s.spec && x.name == "program")
        .map(|x| x.program.as_str())
}

/// Process sources watching a program whose name starts with one of `names`.
fn trees<'a>(m: &'a Monitoring, names: &'a [&str]) -> impl Iterator<Item = &'a Source> + 'a {
    of_kind(m, "process").filter(move |s| {
        program(m, s).is_some_and(|p| names.iter().any(|n| p.starts_with(n)))
            || names
                .iter()
                .any(|n| s.spec.starts_with(&format!("proc:{n}")))
    })
}

/// A setting read from the config of the program behind `names`.
fn setting(m: &Monitoring, names: &[&str], name: &str) -> Option<(f64, String)> {
    m.settings
        .iter()
        .find(|x| x.name == name && names.iter().any(|n| x.program.starts_with(n)))
        .map(|x| (x.value, x.file.clone()))
}

/// Where a source stopped answering: the start of its final run of
/// failed reads (nulls to the end), or where its series ends early (an
/// older sampler dropped it and stopped). None when it saw to the end.
fn blind_from(s: &Source, end_s: f64, interval_s: f64) -> Option<f64> {
    if let Some((from, _)) = s.blind() {
        return Some(from);
    }
    let n = s.t.len();
    let read = |i: usize| {
        s.metrics
            .iter()
            .any(|m| m.values.get(i).is_some_and(Option::is_some))
    };
    let mut k = n;
    while k > 0 && !read(k - 1) {
        k -= 1;
    }
    if k < n {
        return Some(s.t[k]);
    }
    let last_t = s.t.last().copied()?;
    (end_s - last_t > 2.0 * interval_s.max(0.1)).then_some(last_t + interval_s)
}

fn blind(m: &Monitoring, r: &RunResult) -> Vec<Blind> {
    m.sources
        .iter()
        .filter_map(|s| {
            let from = blind_from(s, r.summary.duration_s, m.interval_s)?;
            Some(Blind {
                source: s.spec.clone(),
                from_s: from,
                to_s: None,
                why: s
                    .blind_reason
                    .clone()
                    .or_else(|| s.error.clone())
                    .unwrap_or_else(|| "it stopped answering".into()),
            })
        })
        .collect()
}

fn is_blind(m: &Monitoring, s: &Source) -> bool {
    m.blind.iter().any(|b| b.source == s.spec)
}

/// Samples where `pred` held on a metric: a span of evidence.
fn held(s: &Source, name: &str, pred: impl Fn(f64) -> bool, words: &str) -> Option<Evidence> {
    let mt = metric(s, name)?;
    Some(held_in(&s.spec, name, &s.t, &mt.values, pred, words))
}

/// The same over any series: sample times and values (`None`: not read).
fn held_in(
    spec: &str,
    name: &str,
    t: &[f64],
    values: &[Option<f64>],
    pred: impl Fn(f64) -> bool,
    words: &str,
) -> Evidence {
    let (mut n, mut of, mut first, mut last_t, mut extreme) = (0u64, 0u64, None, 0.0, 0.0f64);
    for (i, v) in values.iter().enumerate() {
        let Some(v) = *v else { continue };
        of += 1;
        if pred(v) {
            n += 1;
            let at = t.get(i).copied().unwrap_or(0.0);
            first.get_or_insert(at);
            last_t = at;
            extreme = extreme.max(v);
        }
    }
    Evidence {
        source: spec.into(),
        metric: name.into(),
        samples: n,
        of,
        from_s: first.unwrap_or(0.0),
        to_s: last_t,
        value: extreme,
        words: words.replace("{max}", &format!("{extreme:.0}")),
    }
}

/// An evidence's words with where it held: "… in 8 of 9 samples (0.5–4.0 s)".
fn said(e: &Evidence) -> String {
    format!(
        "{} in {} of {} samples ({:.1}–{:.1} s)",
        e.words, e.samples, e.of, e.from_s, e.to_s
    )
}

/// Evidence strong enough to rest a diagnosis on: several samples, and a
/// fair share of those read.
fn enough(e: &Evidence) -> bool {
    e.samples >= MIN_SAMPLES && e.samples as f64 >= MIN_SHARE * e.of as f64
}

/// The CPU's evidence: saturated in 2 samples or more and a fifth of them
/// (a CPU spike is shorter than a queue that builds up).
fn cpu_enough(e: &Evidence) -> bool {
    e.samples >= 2 && e.samples as f64 >= 0.2 * e.of as f64
}

/// An accept queue that held connections: the kernel's word that nothing
/// took them, so every worker behind the socket was busy.
fn queued(s: &Source, what: &str, own: f64) -> Option<Evidence> {
    held(
        s,
        "listen_queue",
        |v| v > own,
        &format!("connections waited in {what}'s accept queue (up to {{max}})"),
    )
    .filter(enough)
}

/// Connections of yace's own that may wait in a pool's accept queue: the
/// status request of a page the pool itself answers (php-fpm's through the
/// pool, Apache's mod_status) is read at the sample's instant and waits
/// there when the workers are busy for a moment — a round rate and a round
/// interval put it beside a load request at every sample. The queue's
/// evidence is what waited beyond it.
fn own_reads(m: &Monitoring, names: &[&str]) -> f64 {
    let through_pool = |s: &Source| {
        if names == APACHE {
            s.kind == "apache"
        } else {
            s.kind == "fpm"
                && metric(s, "status_through_pool").is_none_or(|x| x.max().unwrap_or(1.0) > 0.0)
        }
    };
    if m.sources.iter().any(through_pool) {
        1.0
    } else {
        0.0
    }
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
    // CPU per request: the stack's processes when watched, else the
    // machine's busy CPU, labelled as the estimate it is.
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
                        "an estimate: this machine's busy CPU minus yace's own; every other \
                         process is counted as the server's (watch the stack with --monitor \
                         pidfile:PATH for its own)",
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
    // Workers: a status page that saw the whole run; else the process tree,
    // busy inferred from the kernel (a queue that held connections means
    // every worker was busy); never the last reading of a blind page.
    let pools = [
        (FPM, "fpm", "active_processes", "php-fpm processes"),
        (APACHE, "apache", "busy_workers", "Apache workers"),
    ];
    for (names, kind, busy_name, words) in pools {
        let page = of_kind(m, kind).next().filter(|s| !is_blind(m, s));
        let tree = tree_workers(m, names);
        if page.is_none() && tree.is_none() {
            continue;
        }
        let page_busy = page.and_then(|s| metric(s, busy_name).and_then(Metric::max));
        let page_total = page.and_then(|s| {
            if kind == "fpm" {
                metric(s, "total_processes").and_then(Metric::max)
            } else {
                sum_max(metric(s, "busy_workers"), metric(s, "idle_workers"))
            }
        });
        let tree_busy = tree.and_then(|(b, _)| b);
        f.workers_busy_max = match (page_busy, tree_busy) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        f.workers_total = page_total.or(tree.map(|(_, w)| w));
        f.workers_source = Some(words.into());
        break;
    }
    f
}

const FPM: &[&str] = &["php-fpm"];
const APACHE: &[&str] = &["apache2", "httpd"];

/// From a process tree: (busy at most, workers) — the workers are the
/// tree's processes but its parent; all of them were busy when the tree's
/// accept queue held connections, else how many were busy is not known.
fn tree_workers(m: &Monitoring, names: &[&str]) -> Option<(Option<f64>, f64)> {
    let s = trees(m, names).next()?;
    let per_child = setting(m, names, "ThreadsPerChild").map_or(1.0, |(t, _)| t.max(1.0));
    let workers = (metric(s, "processes").and_then(Metric::max)? - 1.0) * per_child;
    if workers < 1.0 {
        return None;
    }
    let busy = queued(s, "", own_reads(m, names)).map(|_| workers);
    Some((busy, workers))
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
    evidence: Vec<Evidence>,
    setting: Option<Setting>,
}

impl Found {
    fn new(code: &'static str, problem: bool, message: String, fix: String) -> Found {
        Found {
            code,
            problem,
            message,
            fix,
            figures: Vec::new(),
            evidence: Vec::new(),
            setting: None,
        }
    }
}

/// The stack's CPU, judged: its processes' CPU when watched (near the
/// CPUs they could have), else the machine's busy CPU less yace's share.
struct Cpu {
    evidence: Option<Evidence>,
    /// Highest CPU of the stack, % of all CPUs, and the CPUs.
    peak_pct: Option<f64>,
    cpus: f64,
    /// The words for where the figure came from.
    whose: &'static str,
    /// Whether the busy CPU is the server's: its processes were watched, or
    /// the machine is the server's own (node:, ssh:). This machine's
    /// `system` alone cannot tell the server's work from yace's or another
    /// program's.
    attributable: bool,
}

fn cpu(m: &Monitoring, r: &RunResult) -> Cpu {
    let machine = machine(m, r);
    let cpus = machine
        .and_then(|s| metric(s, "cpus").and_then(last))
        .unwrap_or_else(|| r.environment.cpus.max(1) as f64);
    let procs: Vec<&Source> = of_kind(m, "process").collect();
    if !procs.is_empty() {
        // The processes' CPU per sample (% of one CPU), summed by sample
        // time, as a share of all CPUs. A stack at 90% of every core is
        // CPU-bound whatever else runs.
        let key = |t: f64| (t / m.interval_s.max(0.01)).round() as i64;
        // Per sample time: a metric summed over the process sources.
        let sum_by_t = |name: &str, scale: f64| {
            let mut by_t: BTreeMap<i64, f64> = BTreeMap::new();
            for s in &procs {
                if let Some(c) = metric(s, name) {
                    for (i, v) in c.values.iter().enumerate() {
                        if let (Some(v), Some(t)) = (v, s.t.get(i)) {
                            *by_t.entry(key(*t)).or_default() += v * scale;
                        }
                    }
                }
            }
            by_t
        };
        let by_t = sum_by_t("cpu", 1.0 / cpus);
        // Workers ready to run (state R): a page that computes keeps them
        // there while it waits for a core; a page that sleeps does not.
        let running = sum_by_t("processes_running", 1.0);
        let workers = sum_by_t("processes", 1.0);
        // The machine's busy CPU at the same moments, when it is watched.
        let mut busy_at: BTreeMap<i64, f64> = BTreeMap::new();
        if let Some(s) = machine {
            if let Some(b) = metric(s, "cpu_busy") {
                for (i, v) in b.values.iter().enumerate() {
                    if let (Some(v), Some(t)) = (v, s.t.get(i)) {
                        busy_at.insert((t / m.interval_s.max(0.01)).round() as i64, *v);
                    }
                }
            }
        }
        // Saturated: the stack alone near every core, or the CPUs full
        // and the stack the main user of them (the client may share them).
        let vals: Vec<(f64, f64)> = by_t
            .iter()
            .map(|(k, v)| {
                let full = busy_at.get(k).is_some_and(|b| *b >= CPU_SATURATED_PCT);
                let run = running.get(k).copied().unwrap_or(0.0);
                let of = (workers.get(k).copied().unwrap_or(0.0) - procs.len() as f64).max(1.0);
                let ready = run >= 1.0 && run >= 0.5 * of;
                let hot = *v >= CPU_SATURATED_PCT || (full && (*v >= 50.0 || ready));
                (*k as f64 * m.interval_s, if hot { *v } else { -*v })
            })
            .collect();
        let peak = vals.iter().map(|v| v.1.abs()).reduce(f64::max);
        let spec = procs
            .iter()
            .map(|s| s.spec.as_str())
            .collect::<Vec<_>>()
            .join(" + ");
        let times: Vec<f64> = vals.iter().map(|v| v.0).collect();
        let shares: Vec<Option<f64>> = vals.iter().map(|v| Some(v.1)).collect();
        let e = held_in(
            &spec,
            "cpu_share",
            &times,
            &shares,
            |v| v > 0.0,
            &format!(
                "the stack's processes used {{max}}% of the {cpus:.0} CPUs, with the CPUs full"
            ),
        );
        return Cpu {
            evidence: Some(e).filter(cpu_enough),
            peak_pct: peak,
            cpus,
            whose: "the stack's processes",
            attributable: true,
        };
    }
    let Some(s) = machine else {
        return Cpu {
            evidence: None,
            peak_pct: None,
            cpus,
            whose: "",
            attributable: false,
        };
    };
    // The machine alone: when yace runs on it too, its share is taken off
    // (the client's CPU over the run, spread evenly: an estimate).
    let client_pct = if s.kind == "system" {
        100.0 * r.client.cpu_s / r.summary.duration_s.max(1e-9) / cpus
    } else {
        0.0
    };
    let e = held(
        s,
        "cpu_busy",
        |v| v >= CPU_SATURATED_PCT && v - client_pct >= 50.0,
        "the server machine's CPUs were {max}% busy",
    );
    Cpu {
        evidence: e.filter(cpu_enough),
        peak_pct: metric(s, "cpu_busy")
            .and_then(Metric::max)
            .map(|v| (v - client_pct).max(0.0)),
        cpus,
        whose: if s.kind == "system" {
            "this machine less yace's share"
        } else {
            "the server machine"
        },
        attributable: s.kind != "system",
    }
}

/// Requests a second the stack was asked for: the open model's rate, or
/// the rate answered plus what piled up.
fn offered_per_s(r: &RunResult) -> Option<f64> {
    if let Some(b) = &r.behind {
        return Some(b.offered_per_s);
    }
    r.plan.load.peak_rate()
}

/// Little's law for a pool whose every worker was busy: time in a worker
/// = workers ÷ throughput; the workers a rate needs = rate × that time.
/// In a closed model each connection holds a request: it needs as many.
fn littles(r: &RunResult, workers: f64, throughput: f64, name: &str) -> Setting {
    let time_s = workers / throughput.max(1e-9);
    match offered_per_s(r) {
        Some(rate) if throughput > 0.0 => {
            let need = (rate * time_s).ceil();
            Setting {
                name: name.into(),
                current: Some(workers),
                suggested: Some(need.max(workers + 1.0)),
                how: format!(
                    "Little's law: {rate:.0}/s offered × {:.0} ms in a worker ({workers:.0} \
                     workers ÷ {throughput:.1}/s answered) = {:.1}",
                    time_s * 1000.0,
                    rate * time_s
                ),
            }
        }
        _ => {
            let inflight = r.series.iter().map(|s| s.in_flight).fold(0.0, f64::max);
            Setting {
                name: name.into(),
                current: Some(workers),
                suggested: (inflight > workers).then(|| inflight.ceil()),
                how: format!(
                    "Little's law: up to {inflight:.0} requests were in flight at once, each \
                     holding a worker"
                ),
            }
        }
    }
}

fn diagnoses(m: &Monitoring, r: &RunResult) -> (Vec<Diagnosis>, Vec<RuledOut>) {
    let mut found: Vec<Found> = Vec::new();
    let mut ruled_out = Vec::new();
    let mb = |b: f64| b / (1024.0 * 1024.0);
    let cpu = cpu(m, r);
    let cpu_words = |c: &Cpu| match c.peak_pct {
        Some(p) => format!("{} used at most {p:.0}% of the {:.0} CPUs", c.whose, c.cpus),
        None => "no source told the server's CPU".to_string(),
    };

    // php-fpm's pool was full: its accept queue held connections (the
    // kernel's word, seen through saturation), `max children reached` rose
    // in several samples, or every child was busy net of the status
    // request's own (a status page that answers through the pool can never
    // see them all busy: one of them is answering it).
    let fpm_page = of_kind(m, "fpm").next();
    let fpm_tree = trees(m, FPM).next();
    let mut pool: Vec<Evidence> = Vec::new();
    if let Some(e) = fpm_tree.and_then(|s| queued(s, "php-fpm", own_reads(m, FPM))) {
        pool.push(e);
    }
    if let Some(s) = fpm_page {
        if let Some(e) = queued(s, "php-fpm (its status page)", 0.0) {
            pool.push(e);
        }
        if let Some(e) = held(
            s,
            "max_children_reached",
            |v| v > 0.0,
            "php-fpm counted reaching pm.max_children",
        )
        .filter(|e| e.samples >= 2)
        {
            pool.push(e);
        }
        // Net of its own child only when the reader said so.
        if metric(s, "active_processes_raw").is_some() {
            let total = metric(s, "total_processes")
                .and_then(Metric::max)
                .unwrap_or(0.0);
            if let Some(e) = held(
                s,
                "active_processes",
                |v| total > 0.0 && v >= total,
                "every child was busy ({max}), not counting the status request",
            )
            .filter(enough)
            {
                pool.push(e);
            }
        }
    }
    if !pool.is_empty() {
        let children = setting(m, FPM, "pm.max_children")
            .map(|(v, _)| v)
            .or_else(|| fpm_page.and_then(|s| metric(s, "total_processes").and_then(Metric::max)))
            .or_else(|| tree_workers(m, FPM).map(|(_, w)| w))
            .unwrap_or(0.0);
        let from = setting(m, FPM, "pm.max_children")
            .map(|(_, f)| format!(" (read from {f})"))
            .unwrap_or_default();
        let throughput = fpm_page
            .and_then(|s| metric(s, "accepted_conn").and_then(Metric::mean))
            .filter(|x| *x > 0.0)
            .unwrap_or(r.summary.rps);
        let per_child = fpm_tree.and_then(|p| {
            let rss = metric(p, "rss_bytes").and_then(Metric::max)?;
            let procs = metric(p, "processes").and_then(Metric::max)?;
            Some(rss / procs.max(1.0))
        });
        let mem = per_child
            .map(|b| format!(" Each child took about {:.0} MB here.", mb(b)))
            .unwrap_or_default();
        let mut set = littles(r, children, throughput, "pm.max_children");
        if children <= 0.0 {
            set.current = None;
        }
        let to = set
            .suggested
            .map(|v| format!(" to {v:.0} ({})", set.how))
            .unwrap_or_default();
        let queue_max = pool
            .iter()
            .filter(|e| e.metric == "listen_queue")
            .map(|e| e.value)
            .fold(0.0, f64::max);
        let reached = fpm_page
            .and_then(|s| metric(s, "max_children_reached").and_then(|c| c.increase))
            .unwrap_or(0.0);
        let mut d = Found::new(
            "fpm_max_children",
            true,
            format!(
                "php-fpm's pool was full: all {children:.0} children were busy and requests \
                 waited for one; {}.",
                pool.iter().map(said).collect::<Vec<_>>().join("; ")
            ),
            format!(
                "Raise pm.max_children from {children:.0}{from}{to}, if memory allows \
                 (children × memory per child must fit), or make the slow pages faster.{mem}"
            ),
        );
        d.figures = vec![
            ("processes", children),
            ("listen_queue_max", queue_max),
            ("max_children_reached", reached),
            ("samples", pool[0].of as f64),
            ("samples_full", pool[0].samples as f64),
        ];
        d.evidence = pool;
        d.setting = Some(set);
        found.push(d);
    }

    // Apache had no free worker: mod_status said so (no idle worker), or,
    // when it was blind or not watched, its accept queue held connections
    // while its process tree stood at its size.
    let apache_page = of_kind(m, "apache").next();
    let apache_tree = trees(m, APACHE).next();
    let mut workers_ev: Vec<Evidence> = Vec::new();
    if let Some(s) = apache_page {
        if let (Some(busy), Some(idle)) = (metric(s, "busy_workers"), metric(s, "idle_workers")) {
            let idle0: Vec<Option<f64>> = busy
                .values
                .iter()
                .zip(&idle.values)
                .map(|(b, i)| match (b, i) {
                    (Some(b), Some(i)) => Some(if *i == 0.0 && *b > 0.0 { *b } else { 0.0 }),
                    _ => None,
                })
                .collect();
            let e = held_in(
                &s.spec,
                "busy_workers",
                &s.t,
                &idle0,
                |v| v > 0.0,
                "mod_status showed no idle worker ({max} busy)",
            );
            if let Some(e) = Some(e).filter(|e| e.samples >= 2) {
                workers_ev.push(e);
            }
        }
    }
    if let Some(e) = apache_tree.and_then(|s| queued(s, "Apache", own_reads(m, APACHE))) {
        workers_ev.push(e);
    }
    if !workers_ev.is_empty() {
        // Threaded MPMs (event, worker): each child holds ThreadsPerChild
        // workers; prefork's children are one worker each.
        let threads = setting(m, APACHE, "ThreadsPerChild")
            .map(|(t, _)| t)
            .filter(|t| *t > 1.0);
        let children = apache_tree
            .and_then(|s| metric(s, "processes").and_then(Metric::max))
            .map(|p| p - 1.0);
        let procs = children.map(|c| c * threads.unwrap_or(1.0));
        let ran = |p: f64| match (threads, children) {
            (Some(t), Some(c)) => {
                format!("{c:.0} child processes × {t:.0} threads ran ({p:.0} workers)")
            }
            _ => format!("{p:.0} worker processes ran"),
        };
        let busy_max = apache_page
            .and_then(|s| metric(s, "busy_workers").and_then(Metric::max))
            .or(procs)
            .unwrap_or(0.0);
        let mrw = setting(m, APACHE, "MaxRequestWorkers");
        let workers = mrw.as_ref().map(|(v, _)| *v).unwrap_or(busy_max);
        let now = match (&mrw, procs) {
            (Some((v, f)), Some(p)) => {
                format!("MaxRequestWorkers is {v:.0} (read from {f}); {}", ran(p))
            }
            (Some((v, f)), None) => format!("MaxRequestWorkers is {v:.0} (read from {f})"),
            (None, Some(p)) => format!("{} (the process tree)", ran(p)),
            (None, None) => format!("{busy_max:.0} workers were busy"),
        };
        let set = littles(r, workers.max(1.0), r.summary.rps, "MaxRequestWorkers");
        let to = set
            .suggested
            .map(|v| format!(" to {v:.0} or more ({})", set.how))
            .unwrap_or_default();
        let mut d = Found::new(
            "apache_out_of_workers",
            true,
            format!(
                "Apache ran out of workers: {now}, and new requests waited for one; {}.",
                workers_ev.iter().map(said).collect::<Vec<_>>().join("; ")
            ),
            format!(
                "Raise MaxRequestWorkers{to} (with ServerLimit, and ThreadsPerChild for the \
                 event and worker MPMs) if memory and CPU allow; with prefork each worker is a \
                 process, and each keep-alive connection holds one: a shorter KeepAliveTimeout \
                 frees workers held by idle connections."
            ),
        );
        d.figures = vec![
            ("samples_full", workers_ev[0].samples as f64),
            ("busy_max", busy_max),
        ];
        d.evidence = workers_ev;
        d.setting = Some(set);
        found.push(d);
    }

    // Connections waited in the accept queue of a socket the user named
    // (`listen:`) or of the target's own port, with no pool to blame.
    if found.is_empty() {
        for s in m
            .sources
            .iter()
            .filter(|s| matches!(s.kind.as_str(), "listen" | "system"))
        {
            if let Some(e) = queued(s, &s.label, 0.0) {
                let mut d = Found::new(
                    "accept_queue",
                    true,
                    format!(
                        "Connections waited to be accepted: {} in {} of {} samples ({:.1}–{:.1} \
                         s); whatever serves that socket had no free worker.",
                        e.words, e.samples, e.of, e.from_s, e.to_s
                    ),
                    "The server behind this socket is at its limit of workers or connections: \
                     watch its processes (--monitor pidfile:PATH) or its status page to see \
                     which, and raise that limit."
                        .into(),
                );
                d.figures = vec![("listen_queue_max", e.value)];
                d.evidence = vec![e];
                found.push(d);
                break;
            }
        }
    }

    // The server's CPUs were saturated. When a pool was full too, the CPU
    // ran out first if the stack was using the CPUs: the children queued
    // for a core, and more of them would only share the same cores.
    if let Some(e) = cpu.evidence.as_ref().filter(|_| !cpu.attributable) {
        // Full CPUs on a machine yace shares, with nothing saying whose work
        // filled them: said, never set against the pools' evidence.
        let mut d = Found::new(
            "server_cpu_saturated",
            false,
            format!(
                "This machine's CPUs were full: {}; whose work it was (the server's, yace's or \
                 another program's) cannot be told from the machine's figures alone.",
                said(e)
            ),
            "Watch the server's processes (--monitor pidfile:PATH of its master) to see \
             whether it is CPU-bound, and pin the server and yace to separate cores (taskset)."
                .into(),
        );
        d.figures = vec![
            ("samples_saturated", e.samples as f64),
            ("samples", e.of as f64),
        ];
        d.evidence = vec![e.clone()];
        found.push(d);
    } else if let Some(e) = &cpu.evidence {
        let per_req = m
            .server
            .cpu_ms_per_request
            .map(|ms| format!(" The server spent {ms:.2} ms of CPU per request."))
            .unwrap_or_default();
        let shared = match machine(m, r) {
            Some(s) if s.kind == "system" => {
                let yace = 100.0 * r.client.cpu_s / r.summary.duration_s.max(1e-9) / cpu.cpus;
                format!(
                    " yace ran on the same machine and used {yace:.0}% of its CPUs: pin the \
                     server and the client to separate cores (taskset), or load it from another \
                     machine."
                )
            }
            _ => String::new(),
        };
        for d in found.iter_mut().filter(|d| {
            matches!(
                d.code,
                "fpm_max_children" | "apache_out_of_workers" | "accept_queue"
            )
        }) {
            d.problem = false;
            ruled_out.push(RuledOut {
                code: d.code.into(),
                why: format!(
                    "the workers were all busy, but on full CPUs ({}): more workers would \
                     share the same cores, so the pool is not the limit",
                    cpu_words(&cpu)
                ),
            });
        }
        found.retain(|d| d.problem);
        let mut d = Found::new(
            "server_cpu_saturated",
            true,
            format!(
                "The server's CPUs were saturated: {} ({CPU_SATURATED_PCT:.0}% or more) in {} of \
                 {} samples ({:.1}–{:.1} s).{per_req}",
                e.words, e.samples, e.of, e.from_s, e.to_s
            ),
            format!(
                "CPU is the limit: make each request cheaper (profile the page; for PHP enable \
                 OPcache), or add cores or servers; more workers will not help.{shared}"
            ),
        );
        d.figures = vec![
            ("samples_saturated", e.samples as f64),
            ("samples", e.of as f64),
        ];
        d.evidence = vec![e.clone()];
        found.insert(0, d);
    } else if found.iter().any(|d| d.problem) {
        ruled_out.push(RuledOut {
            code: "server_cpu_saturated".into(),
            why: format!(
                "not the CPU: {}, so the workers were waiting, not computing",
                cpu_words(&cpu)
            ),
        });
    }

    // The kernel's listen queues overflowed (here, or on the server
    // machine). The counters are the whole machine's: when the watched
    // listeners' queues are known and none reached its backlog, another
    // program's socket overflowed, not the stack's.
    let watched: Vec<(&Metric, &Metric)> = m
        .sources
        .iter()
        .filter_map(|s| Some((metric(s, "listen_queue")?, metric(s, "listen_backlog")?)))
        .collect();
    let ours = watched.is_empty()
        || watched.iter().any(|(q, b)| {
            q.values
                .iter()
                .zip(&b.values)
                .any(|(q, b)| matches!((q, b), (Some(q), Some(b)) if *b > 0.0 && q >= b))
        });
    for s in m
        .sources
        .iter()
        .filter(|s| matches!(s.kind.as_str(), "system" | "node" | "ssh"))
    {
        let inc = |name| metric(s, name).and_then(|c| c.increase).unwrap_or(0.0);
        let (over, drops) = (inc("listen_overflows"), inc("listen_drops"));
        if ours && (over > 0.0 || drops > 0.0) {
            let mut d = Found::new(
                "listen_overflow",
                true,
                format!(
                    "The listen queue overflowed: the kernel dropped {} connection attempts \
                     ({} overflows) because a listening socket's backlog was full ({}).",
                    drops.max(over),
                    over,
                    s.label
                ),
                "The server accepts connections more slowly than they come: raise the listen \
                 backlog (nginx `listen … backlog=N`, Apache ListenBacklog, php-fpm \
                 listen.backlog) with net.core.somaxconn; if every worker is busy, that is the \
                 real limit."
                    .into(),
            );
            d.figures = vec![("listen_drops", drops), ("listen_overflows", over)];
            found.push(d);
            break;
        }
    }

    // nginx accepted more than it handled.
    for s in of_kind(m, "nginx") {
        let inc = |name| metric(s, name).and_then(|c| c.increase);
        if let (Some(a), Some(h)) = (inc("accepts"), inc("handled")) {
            if a > h {
                let mut d = Found::new(
                    "nginx_dropped",
                    true,
                    format!(
                        "nginx accepted {a} connections but handled {h}: {} were closed at once \
                         because it had no connection slot.",
                        a - h
                    ),
                    "Raise worker_connections (and worker_rlimit_nofile) in nginx.conf.".into(),
                );
                d.figures = vec![("accepts", a), ("handled", h)];
                found.push(d);
            }
        }
    }

    // Memory ran low on the server machine.
    if let Some(s) = machine(m, r) {
        let total = metric(s, "mem_total_bytes").and_then(last);
        let low = metric(s, "mem_available_bytes").and_then(|a| a.present().reduce(f64::min));
        if let (Some(total), Some(low)) = (total, low) {
            if total > 0.0 && low < total * 0.1 {
                let mut d = Found::new(
                    "memory_low",
                    true,
                    format!(
                        "Memory ran low: {:.0} MB available of {:.0} MB at the worst sample.",
                        mb(low),
                        mb(total)
                    ),
                    "Fewer or lighter workers (each php-fpm child or Apache prefork process \
                     holds its own memory), or more memory; watch for swapping."
                        .into(),
                );
                d.figures = vec![("available_bytes_min", low), ("total_bytes", total)];
                found.push(d);
            }
        }
    }

    // The client, not the server, was the bottleneck.
    if r.client.saturated && m.server.cpu_max_pct.is_some_and(|c| c < 80.0) {
        let mut d = Found::new(
            "client_bound",
            true,
            format!(
                "The client, not the server, was the bottleneck: yace's busiest thread was {:.0}% \
                 busy while the server's CPU peaked at {:.0}%.",
                r.client.busiest_thread * 100.0,
                m.server.cpu_max_pct.unwrap_or(0.0)
            ),
            "Give yace more threads (-t) or cores, or load from more machines (shards); the \
             server has room."
                .into(),
        );
        d.figures = vec![("busiest_thread", r.client.busiest_thread)];
        found.push(d);
    }

    // TIME_WAIT piled up on the target's port.
    for s in m.sources.iter() {
        if let Some(tw) = metric(s, "tcp_port_time_wait").and_then(Metric::max) {
            if tw >= TIME_WAIT_PILE {
                let mut d = Found::new(
                    "time_wait",
                    false,
                    format!(
                        "TIME_WAIT sockets piled up to {tw} on the target's port: each closed \
                         connection holds its port pair for 60 s."
                    ),
                    "Keep connections alive (HTTP/1.1 persistent connections; `-k` for ab) so \
                     they are reused; a client that must close may set net.ipv4.tcp_tw_reuse=1 \
                     and widen net.ipv4.ip_local_port_range."
                        .into(),
                );
                d.figures = vec![("time_wait_max", tw)];
                found.push(d);
                break;
            }
        }
    }

    found.sort_by_key(|d| !d.problem);
    let out = found
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
            evidence: d.evidence,
            setting: d.setting,
        })
        .collect();
    (out, ruled_out)
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

    /// Full CPUs on this machine with no process watched: whose work it
    /// was is not known, so it is a note, and the queue's finding stands.
    #[test]
    fn full_cpus_of_unknown_work_do_not_overrule_the_queue() {
        let r = result(true, false);
        let mut sys = sys(&[99.0; 4]);
        sys.metrics
            .push(gauge("listen_queue", &[3.0, 4.0, 5.0, 5.0]));
        sys.metrics.push(gauge("listen_backlog", &[9.0; 4]));
        let mut m = Monitoring {
            interval_s: 1.0,
            sources: vec![sys],
            ..Default::default()
        };
        conclude(&mut m, &r);
        let got: Vec<(&str, &str)> = m
            .diagnoses
            .iter()
            .map(|d| (d.code.as_str(), d.severity.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("accept_queue", "problem"),
                ("server_cpu_saturated", "note")
            ]
        );
        assert!(m.ruled_out.is_empty(), "{:?}", m.ruled_out);
    }

    /// The event MPM's workers are threads: children × ThreadsPerChild.
    #[test]
    fn a_threaded_apache_counts_its_threads() {
        let r = result(true, false);
        let apache = tree("pidfile:/a.pid", 3.0, &[0.0, 30.0, 60.0, 90.0], &[5.0; 4]);
        let mut m = with_programs(
            vec![sys(&[20.0; 4]), apache],
            &[("pidfile:/a.pid", "apache2")],
        );
        m.settings.push(stats::monitor::ServerSetting {
            source: "pidfile:/a.pid".into(),
            program: "apache2".into(),
            name: "ThreadsPerChild".into(),
            value: 25.0,
            file: "/etc/apache2/mods-enabled/mpm_event.conf".into(),
        });
        conclude(&mut m, &r);
        assert_eq!(m.server.workers_total, Some(50.0));
        assert!(
            m.diagnoses[0]
                .message
                .contains("2 child processes × 25 threads ran (50 workers)"),
            "{}",
            m.diagnoses[0].message
        );
    }

    /// The overflow counters are the machine's: with the stack's queues
    /// watched and never full, they were another program's.
    #[test]
    fn an_overflow_elsewhere_is_not_the_stacks() {
        let r = result(true, false);
        let sys = |queue: f64| {
            source(
                "system",
                vec![
                    metric("cpu_busy", MetricKind::Rate, &[10.0; 4], Some(1.0)),
                    gauge("cpus", &[2.0; 4]),
                    rate("listen_overflows", 12.0),
                    rate("listen_drops", 12.0),
                    gauge("listen_queue", &[0.0, queue, 0.0, 0.0]),
                    gauge("listen_backlog", &[511.0; 4]),
                ],
            )
        };
        assert!(codes(vec![sys(3.0)], &r).is_empty());
        assert_eq!(codes(vec![sys(512.0)], &r), ["listen_overflow"]);
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

    fn tree(spec: &str, processes: f64, queue: &[f64], cpu: &[f64]) -> Source {
        let mut s = source(
            "process",
            vec![
                gauge("processes", &[processes; 4]),
                gauge("listen_queue", queue),
                metric("cpu", MetricKind::Rate, cpu, Some(1.0)),
            ],
        );
        s.spec = spec.into();
        s
    }

    fn with_programs(sources: Vec<Source>, programs: &[(&str, &str)]) -> Monitoring {
        Monitoring {
            interval_s: 1.0,
            sources,
            settings: programs
                .iter()
                .map(|(spec, prog)| stats::monitor::ServerSetting {
                    source: spec.to_string(),
                    program: prog.to_string(),
                    name: "program".into(),
                    value: 1.0,
                    file: String::new(),
                })
                .collect(),
            ..Default::default()
        }
    }

    /// This machine at `busy`% and one watched process tree of `program`,
    /// concluded.
    fn judged(busy: &[f64], tree: Source, program: &str) -> Monitoring {
        let spec = tree.spec.clone();
        let mut m = with_programs(vec![sys(busy), tree], &[(&spec, program)]);
        conclude(&mut m, &result(true, false));
        m
    }

    fn codes_of(m: &Monitoring) -> Vec<&str> {
        m.diagnoses.iter().map(|d| d.code.as_str()).collect()
    }

    fn sys(busy: &[f64]) -> Source {
        source(
            "system",
            vec![
                metric("cpu_busy", MetricKind::Rate, busy, Some(1.0)),
                gauge("cpus", &[2.0; 4]),
            ],
        )
    }

    /// The kernel's accept queue on php-fpm's socket is the evidence of a
    /// full pool, with the children counted from the tree; the CPU is
    /// ruled out, and the fix names pm.max_children with Little's law.
    #[test]
    fn a_queue_on_the_pools_socket_is_a_full_pool() {
        let fpm = tree("pidfile:/f.pid", 3.0, &[0.0, 40.0, 80.0, 120.0], &[1.0; 4]);
        let m = judged(&[20.0; 4], fpm, "php-fpm8.2");
        let codes = codes_of(&m);
        assert_eq!(codes, ["fpm_max_children"]);
        let d = &m.diagnoses[0];
        assert_eq!(d.evidence[0].metric, "listen_queue");
        assert_eq!((d.evidence[0].samples, d.evidence[0].of), (3, 4));
        assert!(
            d.message.contains("all 2 children were busy"),
            "{}",
            d.message
        );
        assert!(d.message.contains("up to 120"), "{}", d.message);
        assert_eq!(d.setting.as_ref().unwrap().current, Some(2.0));
        assert_eq!(m.ruled_out[0].code, "server_cpu_saturated");
        // Busy children inferred from the kernel: 2 of 2.
        assert_eq!(m.server.workers_busy_max, Some(2.0));
        assert_eq!(m.server.workers_total, Some(2.0));
    }

    /// A status page read through the pool counts its own child: all
    /// "active" is not a full pool, and its own read waiting in the queue
    /// is not evidence.
    #[test]
    fn a_busy_pool_that_kept_up_is_not_full() {
        let r = result(true, false);
        let page = source(
            "fpm",
            vec![
                gauge("active_processes", &[1.0, 2.0, 2.0, 2.0]),
                gauge("idle_processes", &[1.0, 0.0, 0.0, 0.0]),
                gauge("total_processes", &[2.0; 4]),
                rate("max_children_reached", 0.0),
            ],
        );
        // One connection in the queue at most samples: the page's own read,
        // sent at the sample's instant beside a load request (a round rate
        // and a round interval line them up), not a full pool.
        let fpm = tree("pidfile:/f.pid", 3.0, &[1.0, 1.0, 0.0, 1.0], &[1.0; 4]);
        let mut m = with_programs(
            vec![sys(&[20.0; 4]), page, fpm],
            &[("pidfile:/f.pid", "php-fpm8.2")],
        );
        conclude(&mut m, &r);
        assert!(m.diagnoses.is_empty(), "{:?}", m.diagnoses);
    }

    /// Every child busy on full CPUs: CPU-bound, the pool set aside with
    /// its reason — never both fixes.
    #[test]
    fn a_full_pool_on_full_cpus_is_cpu_bound() {
        let fpm = tree("pidfile:/f.pid", 3.0, &[0.0, 5.0, 9.0, 7.0], &[150.0; 4]);
        let m = judged(&[99.0; 4], fpm, "php-fpm8.2");
        let codes = codes_of(&m);
        assert_eq!(codes, ["server_cpu_saturated"]);
        assert_eq!(m.ruled_out.len(), 1);
        assert_eq!(m.ruled_out[0].code, "fpm_max_children");
        assert!(
            m.ruled_out[0].why.contains("full CPUs"),
            "{}",
            m.ruled_out[0].why
        );
        // Other processes on full CPUs are not the stack's: no CPU verdict.
        let fpm = tree("pidfile:/f.pid", 3.0, &[0.0, 5.0, 9.0, 7.0], &[10.0; 4]);
        let m = judged(&[99.0; 4], fpm, "php-fpm8.2");
        let codes = codes_of(&m);
        assert_eq!(codes, ["fpm_max_children"]);
        // Full CPUs shared with others, the stack's two children ready to
        // run (a page that computes, starved of a core): CPU-bound.
        let mut fpm = tree("pidfile:/f.pid", 3.0, &[0.0, 5.0, 9.0, 7.0], &[80.0; 4]);
        fpm.metrics.push(gauge("processes_running", &[2.0; 4]));
        let m = judged(&[99.0; 4], fpm, "php-fpm8.2");
        let codes = codes_of(&m);
        assert_eq!(codes, ["server_cpu_saturated"]);
    }

    /// A status page that went blind is a gap: its pre-load reading is not
    /// the run's maximum; Apache's tree and queue say what mod_status could not.
    #[test]
    fn a_blind_page_gives_way_to_the_kernel() {
        let mut r = result(true, false);
        r.summary.duration_s = 4.0;
        let mut page = source(
            "apache",
            vec![
                gauge("busy_workers", &[1.0]),
                gauge("idle_workers", &[10.0]),
            ],
        );
        page.t = vec![0.0];
        page.state = SourceState::Dropped;
        page.error = Some("a read took 1,203 ms, over the interval".into());
        let apache = tree("pidfile:/a.pid", 6.0, &[0.0, 30.0, 60.0, 90.0], &[5.0; 4]);
        let mut m = with_programs(
            vec![sys(&[20.0; 4]), page, apache],
            &[("pidfile:/a.pid", "apache2")],
        );
        conclude(&mut m, &r);
        assert_eq!(
            m.blind.len(),
            1,
            "{:?} over {} s",
            m.blind,
            r.summary.duration_s
        );
        assert_eq!(m.blind[0].from_s, 1.0);
        assert_eq!(m.server.workers_source.as_deref(), Some("Apache workers"));
        assert_eq!(m.server.workers_busy_max, Some(5.0), "not the page's 1");
        let codes = codes_of(&m);
        assert_eq!(codes, ["apache_out_of_workers"]);
        assert!(
            m.diagnoses[0].message.contains("5 worker processes ran"),
            "{}",
            m.diagnoses[0].message
        );
    }
}
