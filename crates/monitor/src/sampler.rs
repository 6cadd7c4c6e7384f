//! A thread per source, reading on the run's clock; the columns it keeps;
//! and their conversion to the result's series (counters to rates, CPU
//! seconds to percentages).

use crate::reading::{Kind, Reading};
use crate::source::{self, Source};
use crate::spec::Spec;
use stats::monitor::{Metric, MetricKind, Monitoring, Source as Series, SourceState};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A source is dropped after this many failed or late reads in a row.
pub const STRIKES: u32 = 3;
/// The shortest interval (a read of /proc/net/tcp on a busy server is not free).
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// What to watch, and how often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub specs: Vec<Spec>,
    pub interval: Duration,
    /// Every source has answered once already (a campaign's later runs):
    /// a source that does not answer its first read now — a status page
    /// served by a pool still working off the last run's queue — starts
    /// as a gap instead of refusing the run.
    pub answered_before: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            answered_before: false,
            specs: Vec::new(),
            interval: Duration::from_secs(1),
        }
    }
}

impl Config {
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }
}

/// Sources that answered once, ready to start.
pub struct Monitors {
    sources: Vec<(Spec, Box<dyn Source>)>,
    interval: Duration,
}

impl std::fmt::Debug for Monitors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let specs: Vec<String> = self.sources.iter().map(|(s, _)| s.to_string()).collect();
        f.debug_struct("Monitors")
            .field("sources", &specs)
            .field("interval", &self.interval)
            .finish()
    }
}

impl Monitors {
    /// Opens every source and reads it once, so a typo or a page that is
    /// not there fails before any load is sent; every problem is returned.
    /// `port` is the target's, `local` whether it runs on this machine.
    pub fn connect(
        config: &Config,
        port: Option<u16>,
        local: bool,
    ) -> Result<Monitors, Vec<String>> {
        let timeout = config.interval.max(Duration::from_secs(2));
        let mut sources = Vec::new();
        let mut problems = Vec::new();
        for spec in &config.specs {
            match source::open(spec, port, local, config.interval.max(MIN_INTERVAL)).and_then(
                |mut s| {
                    match s.read(timeout) {
                        Err(_) if config.answered_before => {}
                        r => {
                            r?;
                        }
                    }
                    Ok(s)
                },
            ) {
                Ok(s) => sources.push((spec.clone(), s)),
                Err(e) => problems.push(format!("--monitor {spec}: {e}")),
            }
        }
        if problems.is_empty() {
            Ok(Monitors {
                sources,
                interval: config.interval.max(MIN_INTERVAL),
            })
        } else {
            Err(problems)
        }
    }

    /// Starts a thread per source; the run's clock starts now.
    pub fn start(self) -> Running {
        let started = Instant::now();
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let interval = self.interval;
        let mut stores = Vec::new();
        let mut threads = Vec::new();
        for (spec, mut src) in self.sources {
            let mut first = Store::new(&spec, src.label());
            first.note = src.note();
            let store = Arc::new(Mutex::new(first));
            stores.push(store.clone());
            let stop = stop.clone();
            let h = std::thread::Builder::new()
                .name(format!("yace-monitor-{}", spec.kind()))
                .spawn(move || sample(&mut *src, &store, &stop, started, interval))
                .expect("spawn a monitor thread");
            threads.push(h);
        }
        Running {
            started,
            stores,
            stop,
            threads,
            interval,
        }
    }
}

/// Reads `src` at `started + k × interval` until stopped or dropped.
fn sample(
    src: &mut dyn Source,
    store: &Mutex<Store>,
    stop: &(Mutex<bool>, Condvar),
    started: Instant,
    interval: Duration,
) {
    let (flag, wake) = stop;
    let mut due = started;
    let mut strikes = 0;
    loop {
        {
            let mut stopped = flag.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if *stopped {
                    return;
                }
                let now = Instant::now();
                if now >= due {
                    break;
                }
                stopped = wake
                    .wait_timeout(stopped, due - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
        let begun = Instant::now();
        let t = begun.duration_since(started).as_secs_f64();
        let read = src.read(interval);
        let took = begun.elapsed();
        let cpu = thread_cpu_s();
        let mut st = store.lock().unwrap_or_else(|e| e.into_inner());
        st.cpu_s = cpu.or(st.cpu_s);
        match read {
            Ok(r) if took <= interval => {
                st.push(t, &r);
                st.label = src.label();
                st.run = None;
                // Said once: the first advice a source gives stays.
                st.note = st.note.take().or_else(|| src.note());
                strikes = 0;
            }
            Ok(r) => {
                st.push(t, &r);
                let why = format!(
                    "too slow: a read took {} ms (the interval is {} ms)",
                    thousands(took.as_millis()),
                    thousands(interval.as_millis())
                );
                st.error = Some(why.clone());
                st.strike(t, why, false);
                strikes += 1;
            }
            Err(e) => {
                st.fail(t, e.clone());
                st.strike(t, e, true);
                strikes += 1;
            }
        }
        if strikes >= STRIKES {
            st.state = SourceState::Dropped;
            let why = st.error.clone().unwrap_or_default();
            st.error = Some(format!(
                "dropped after {STRIKES} failed or late reads in a row at {t:.0} s (last: {why}); \
                 the run went on without it"
            ));
            // Blind from the first read of the run that dropped it.
            let (from, reason, _) = st.run.clone().unwrap_or((t, why, true));
            st.blind = Some((from, reason));
            return;
        }
        drop(st);
        // The next due time after now: a slow read skips ticks, never bunches them.
        while due <= Instant::now() {
            due += interval;
        }
    }
}

/// `1203` as `1,203`.
fn thousands(n: u128) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The CPU time this thread has used: nanoseconds from
/// /proc/thread-self/schedstat, else clock ticks from its stat.
fn thread_cpu_s() -> Option<f64> {
    if let Ok(s) = std::fs::read_to_string("/proc/thread-self/schedstat") {
        if let Some(ns) = s
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<f64>().ok())
        {
            return Some(ns / 1e9);
        }
    }
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    crate::procfs::parse_proc_stat(0, &stat, "").map(|p| p.cpu_s)
}

/// A running set of monitors.
#[derive(Debug)]
pub struct Running {
    started: Instant,
    stores: Vec<Arc<Mutex<Store>>>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    threads: Vec<JoinHandle<()>>,
    interval: Duration,
}

impl Running {
    /// A handle that reads the latest samples while the run goes on (the
    /// live view's server lines).
    pub fn peek(&self) -> Peek {
        Peek {
            stores: self.stores.clone(),
        }
    }

    /// Stops sampling and returns the series (figures and diagnoses are
    /// added by [`crate::conclude`]). Returns at once: a source stuck in a
    /// read is left to end on its own timeout.
    pub fn finish(self) -> Monitoring {
        *self.stop.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.stop.1.notify_all();
        let end = self.started.elapsed().as_secs_f64();
        let grace = Instant::now() + Duration::from_millis(100);
        for h in self.threads {
            while !h.is_finished() && Instant::now() < grace {
                std::thread::sleep(Duration::from_millis(2));
            }
            if h.is_finished() {
                let _ = h.join();
            }
        }
        let notes = self
            .stores
            .iter()
            .filter_map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).note.clone())
            .collect();
        let sources = self
            .stores
            .iter()
            .map(|s| {
                let mut st = s.lock().unwrap_or_else(|e| e.into_inner());
                st.pad_to_the_end(end, self.interval.as_secs_f64());
                std::mem::replace(&mut *st, Store::empty()).into_series()
            })
            .collect();
        Monitoring {
            interval_s: self.interval.as_secs_f64(),
            sources,
            notes,
            ..Default::default()
        }
    }
}

/// The latest samples of running monitors, for the live view: each
/// source's last two samples turned into series by the same code the
/// result uses (a counter's rate needs two), summed up by
/// the `now` module's lines.
#[derive(Debug, Clone)]
pub struct Peek {
    stores: Vec<Arc<Mutex<Store>>>,
}

impl Peek {
    /// The server now, as (label, value) lines; empty before two samples.
    pub fn now(&self) -> Vec<(String, String)> {
        let sources: Vec<stats::monitor::Source> = self
            .stores
            .iter()
            .map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).tail(2))
            .map(Store::into_series_exact)
            .collect();
        crate::now::lines(&sources)
    }
}

/// One source's samples, as columns.
#[derive(Debug)]
struct Store {
    spec: String,
    kind: &'static str,
    label: String,
    state: SourceState,
    error: Option<String>,
    failures: u64,
    cpu_s: Option<f64>,
    /// The current run of failed or late reads: its first sample's time,
    /// why, and whether its last read failed outright.
    run: Option<(f64, String, bool)>,
    /// Blind to the end of the run: from when, and why.
    blind: Option<(f64, String)>,
    /// The source's advice ([`Source::note`]), kept from when it was first given.
    note: Option<String>,
    t: Vec<f64>,
    names: Vec<(String, &'static str, Kind)>,
    cols: Vec<Vec<Option<f64>>>,
}

impl Store {
    fn new(spec: &Spec, label: String) -> Self {
        Store {
            spec: spec.to_string(),
            kind: spec.kind(),
            label,
            ..Store::empty()
        }
    }

    fn empty() -> Self {
        Store {
            spec: String::new(),
            kind: "",
            label: String::new(),
            state: SourceState::Ok,
            error: None,
            failures: 0,
            cpu_s: None,
            run: None,
            blind: None,
            note: None,
            t: Vec::new(),
            names: Vec::new(),
            cols: Vec::new(),
        }
    }

    /// A copy of the last `k` samples (the whole store's names).
    fn tail(&self, k: usize) -> Store {
        let from = self.t.len().saturating_sub(k);
        Store {
            spec: self.spec.clone(),
            kind: self.kind,
            label: self.label.clone(),
            state: self.state,
            error: None,
            failures: 0,
            cpu_s: None,
            run: None,
            blind: None,
            note: None,
            t: self.t[from..].to_vec(),
            names: self.names.clone(),
            cols: self
                .cols
                .iter()
                .map(|c| c[from.min(c.len())..].to_vec())
                .collect(),
        }
    }

    fn push(&mut self, t: f64, r: &Reading) {
        let n = self.t.len();
        self.t.push(t);
        for col in &mut self.cols {
            col.push(None);
        }
        for (i, f) in r.fields.iter().enumerate() {
            // Fields come in the same order each read: try the same place first.
            let at = match self.names.get(i) {
                Some((name, ..)) if *name == f.name => i,
                _ => match self.names.iter().position(|(name, ..)| *name == f.name) {
                    Some(at) => at,
                    None => {
                        self.names.push((f.name.clone(), f.unit, f.kind));
                        self.cols.push(vec![None; n + 1]);
                        self.cols.len() - 1
                    }
                },
            };
            // NaN: in the reading, not read this time.
            self.cols[at][n] = Some(f.value).filter(|v| !v.is_nan());
        }
    }

    fn fail(&mut self, t: f64, e: String) {
        self.t.push(t);
        for col in &mut self.cols {
            col.push(None);
        }
        self.failures += 1;
        self.error = Some(e);
    }

    /// A read that failed (`failed`) or came late: starts or extends the
    /// current run of them.
    fn strike(&mut self, t: f64, why: String, failed: bool) {
        let from = self.run.as_ref().map_or(t, |r| r.0);
        self.run = Some((from, why, failed));
    }

    /// At the end of the run (`end` seconds from its start): the samples a
    /// source missed since its last (it was dropped, or a read is still
    /// stuck) become `null`s on its clock, so its series reach the end
    /// of the run and a chart shows the gap; and a source whose last reads
    /// failed is blind from the first of them.
    fn pad_to_the_end(&mut self, end: f64, interval: f64) {
        if self.kind.is_empty() || interval <= 0.0 {
            return;
        }
        let dropped = self.state == SourceState::Dropped;
        let last = self.t.last().copied().unwrap_or(-interval);
        // The next tick on the run's clock after the last sample.
        let mut k = ((last / interval).floor() as i64 + 1).max(0);
        let mut padded = None;
        loop {
            let t = k as f64 * interval;
            // A source still reading may yet answer for the last tick: only
            // a tick a whole interval old is missed.
            let missed = if dropped {
                t <= end
            } else {
                t + interval <= end
            };
            if !missed || self.t.len() > 10_000_000 {
                break;
            }
            self.t.push(t);
            for col in &mut self.cols {
                col.push(None);
            }
            padded.get_or_insert(t);
            k += 1;
        }
        if self.blind.is_some() {
            return;
        }
        match (&self.run, padded) {
            (Some((from, why, true)), _) => self.blind = Some((*from, why.clone())),
            (run, Some(t)) => {
                self.blind = Some((
                    run.as_ref().map_or(t, |r| r.0),
                    "a read was still waiting for an answer when the run ended".into(),
                ))
            }
            _ => {}
        }
    }

    fn into_series(self) -> Series {
        let mut series = self.into_series_exact();
        // Five significant digits are more than any reader needs and halve
        // the HTML report of a long run; increases stay exact.
        for m in &mut series.metrics {
            for v in m.values.iter_mut().flatten() {
                *v = round_sig(*v, 5);
            }
        }
        series
    }

    fn into_series_exact(self) -> Series {
        let mut metrics = Vec::new();
        let col = |name: &str| {
            self.names
                .iter()
                .position(|(n, ..)| n == name)
                .map(|i| &self.cols[i])
        };
        cpu_percentages(&self.t, &col, &mut metrics);
        for ((name, unit, kind), values) in self.names.iter().zip(&self.cols) {
            if name != "cpu_seconds" && name.starts_with("cpu_") && name.ends_with("_seconds") {
                continue; // shown as percentages of all CPUs
            }
            metrics.push(match kind {
                Kind::Gauge => Metric {
                    name: name.clone(),
                    unit: (*unit).to_string(),
                    kind: MetricKind::Gauge,
                    values: values.clone(),
                    increase: None,
                },
                Kind::Counter if name == "cpu_seconds" => {
                    let (rates, increase) = rates(&self.t, values);
                    Metric {
                        name: "cpu".into(),
                        unit: "% of one CPU".into(),
                        kind: MetricKind::Rate,
                        values: rates.iter().map(|r| r.map(|r| r * 100.0)).collect(),
                        increase,
                    }
                }
                Kind::Counter => {
                    let (values, increase) = rates(&self.t, values);
                    Metric {
                        name: name.clone(),
                        unit: match *unit {
                            "count" | "1" => "/s".to_string(),
                            u => format!("{u}/s"),
                        },
                        kind: MetricKind::Rate,
                        values,
                        increase,
                    }
                }
            });
        }
        Series {
            spec: self.spec,
            kind: self.kind.to_string(),
            label: self.label,
            state: self.state,
            error: self.error,
            failures: self.failures,
            blind_from_s: self.blind.as_ref().map(|b| (b.0 * 1000.0).round() / 1000.0),
            blind_reason: self.blind.map(|b| b.1),
            cpu_s: self.cpu_s,
            t: self
                .t
                .iter()
                .map(|t| (t * 1000.0).round() / 1000.0)
                .collect(),
            metrics,
        }
    }
}

/// `x` to `digits` significant digits.
fn round_sig(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// A counter's increase per second over each interval (None at the first
/// sample, after a gap, and where it went down: a restart), and its
/// increase from the first to the last sample read.
fn rates(t: &[f64], v: &[Option<f64>]) -> (Vec<Option<f64>>, Option<f64>) {
    let mut out = Vec::with_capacity(v.len());
    let mut prev: Option<(f64, f64)> = None;
    let mut increase: Option<f64> = None;
    for (i, x) in v.iter().enumerate() {
        let rate = match (prev, x) {
            (Some((t0, v0)), Some(v1)) if *v1 >= v0 && t[i] > t0 => {
                *increase.get_or_insert(0.0) += v1 - v0;
                Some((v1 - v0) / (t[i] - t0))
            }
            _ => None,
        };
        if let Some(x) = x {
            if prev.is_none() {
                increase.get_or_insert(0.0);
            }
            prev = Some((t[i], *x));
        }
        out.push(rate);
    }
    (out, increase)
}

/// `cpu_*_seconds` counters (all CPUs summed) as % of all CPUs per interval:
/// `cpu_busy` (not idle, not waiting for I/O), `cpu_user` (with nice),
/// `cpu_system`, `cpu_iowait`, `cpu_softirq`, `cpu_steal`. `cpu_busy`'s
/// increase is the busy CPU-seconds over the run.
fn cpu_percentages<'a>(
    t: &[f64],
    col: &dyn Fn(&str) -> Option<&'a Vec<Option<f64>>>,
    out: &mut Vec<Metric>,
) {
    const MODES: [&str; 8] = [
        "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
    ];
    let cols: Vec<Option<&Vec<Option<f64>>>> = MODES
        .iter()
        .map(|m| col(&format!("cpu_{m}_seconds")))
        .collect();
    let Some(idle) = cols[3] else { return };
    let n = idle.len();
    let at = |m: usize, i: usize| cols[m].and_then(|c| c[i]).unwrap_or(0.0);
    let mut shares: [Vec<Option<f64>>; 6] = Default::default();
    let mut busy_s = None;
    let mut prev: Option<usize> = None;
    for i in 0..n {
        let ok = idle[i].is_some();
        let mut row = [None; 6];
        if let (Some(p), true) = (prev, ok) {
            let d: Vec<f64> = (0..8).map(|m| at(m, i) - at(m, p)).collect();
            let total: f64 = d.iter().sum();
            if total > 0.0 && d.iter().all(|x| *x >= 0.0) && t[i] > t[p] {
                let pct = |x: f64| Some(100.0 * x / total);
                let busy = total - d[3] - d[4];
                *busy_s.get_or_insert(0.0) += busy;
                row = [
                    pct(busy),
                    pct(d[0] + d[1]),
                    pct(d[2] + d[5]),
                    pct(d[4]),
                    pct(d[6]),
                    pct(d[7]),
                ];
            }
        }
        if ok {
            prev = Some(i);
        }
        for (s, v) in shares.iter_mut().zip(row) {
            s.push(v);
        }
    }
    for (k, (name, values)) in [
        "cpu_busy",
        "cpu_user",
        "cpu_system",
        "cpu_iowait",
        "cpu_softirq",
        "cpu_steal",
    ]
    .into_iter()
    .zip(shares)
    .enumerate()
    {
        out.push(Metric {
            name: name.into(),
            unit: "%".into(),
            kind: MetricKind::Rate,
            values,
            increase: if k == 0 { busy_s } else { None },
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_significant_digits() {
        assert_eq!(round_sig(97.979_797_979_757_62, 5), 97.98);
        assert_eq!(round_sig(24_486_760_448.0, 5), 24_487_000_000.0);
        assert_eq!(round_sig(12.0, 5), 12.0);
        assert_eq!(round_sig(0.000_123_456_7, 5), 0.000_123_46);
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(7), "7");
        assert_eq!(thousands(1203), "1,203");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    fn read(v: f64) -> Reading {
        let mut r = Reading::new();
        r.gauge("busy", "count", v);
        r
    }

    #[test]
    fn a_dropped_source_is_blind_to_the_end_with_nulls() {
        let mut st = Store::new(&Spec::System, "x".into());
        st.push(0.0, &read(1.0));
        st.push(0.5, &read(2.0));
        for t in [1.0, 1.5, 2.0] {
            st.fail(t, "connection refused".into());
            st.strike(t, "connection refused".into(), true);
        }
        st.state = SourceState::Dropped;
        st.blind = st.run.clone().map(|r| (r.0, r.1));
        st.pad_to_the_end(4.1, 0.5);
        let s = st.into_series();
        assert_eq!(s.t, vec![0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]);
        let busy = &s.metrics[0].values;
        assert_eq!(busy.len(), 9);
        assert!(busy[2..].iter().all(Option::is_none), "{busy:?}");
        assert_eq!(s.blind(), Some((1.0, "connection refused")));
    }

    #[test]
    fn a_source_that_recovered_is_not_blind() {
        let mut st = Store::new(&Spec::System, "x".into());
        st.push(0.0, &read(1.0));
        st.fail(0.5, "connection refused".into());
        st.strike(0.5, "connection refused".into(), true);
        st.push(1.0, &read(1.0));
        st.run = None;
        // The run ends while the read due at 1.5 s is under way: not missed.
        st.pad_to_the_end(1.6, 0.5);
        let s = st.into_series();
        assert_eq!(s.t.len(), 3);
        assert_eq!(s.blind(), None);
        // Failing at the end: blind from the first of the final failures.
        let mut st = Store::new(&Spec::System, "x".into());
        st.push(0.0, &read(1.0));
        st.fail(0.5, "too slow".into());
        st.strike(0.5, "too slow".into(), true);
        st.fail(1.0, "too slow".into());
        st.strike(1.0, "too slow".into(), true);
        st.pad_to_the_end(1.2, 0.5);
        assert_eq!(st.into_series().blind(), Some((0.5, "too slow")));
    }

    #[test]
    fn counters_become_rates_and_resets_are_gaps() {
        let t = [0.0, 1.0, 2.0, 3.0, 4.0];
        let v = [Some(10.0), Some(15.0), None, Some(25.0), Some(3.0)];
        let (r, inc) = rates(&t, &v);
        assert_eq!(r, vec![None, Some(5.0), None, Some(5.0), None]);
        assert_eq!(inc, Some(15.0));
    }

    #[test]
    fn cpu_seconds_become_shares_of_all_cpus() {
        let mut st = Store::new(&Spec::System, "x".into());
        let read = |user: f64, idle: f64| {
            let mut r = Reading::new();
            for (m, v) in [
                ("user", user),
                ("nice", 0.0),
                ("system", 0.0),
                ("idle", idle),
            ] {
                r.counter(format!("cpu_{m}_seconds"), "seconds", v);
            }
            r.gauge("cpus", "count", 2.0);
            r
        };
        st.push(0.0, &read(100.0, 100.0));
        st.push(1.0, &read(101.5, 100.5));
        let s = st.into_series();
        let busy = s.metrics.iter().find(|m| m.name == "cpu_busy").unwrap();
        assert_eq!(busy.values, vec![None, Some(75.0)]);
        assert_eq!(busy.increase, Some(1.5));
        assert!(s.metrics.iter().all(|m| !m.name.ends_with("_seconds")));
        assert!(s.metrics.iter().any(|m| m.name == "cpus"));
    }

    /// A page that does not answer refuses the run, unless every source
    /// answered before (a campaign's later run): then it starts as a gap.
    #[test]
    fn a_silent_page_refuses_a_first_run_only() {
        // Nothing listens on port 1 of loopback (it takes root to bind).
        let spec = Spec::parse("nginx:http://127.0.0.1:1/nginx_status").unwrap();
        let mut config = Config {
            specs: vec![spec],
            interval: Duration::from_millis(200),
            answered_before: false,
        };
        let problems = Monitors::connect(&config, None, true).err().unwrap();
        assert_eq!(problems.len(), 1, "{problems:?}");
        config.answered_before = true;
        assert!(Monitors::connect(&config, None, true).is_ok());
    }
}
