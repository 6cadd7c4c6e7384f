//! The result's `monitor` section: what the server did during the run, as
//! sampled by `--monitor` sources (this machine's /proc, processes,
//! node_exporter, status pages, a probe over SSH) on the run's clock.
//!
//! Each source keeps its own sample times (`t`, seconds from the run's
//! start; the first sample is taken as the load starts) and one value per
//! sample and metric. Counters are stored as rates over the interval that
//! ends at the sample (the first sample of a counter has none: `null`).
//! A sample that failed is a `null` in every metric of its source; a
//! source dropped (or failing) to the end keeps its sample times to the
//! end of the run with `null`s, and says from when (`blind_from_s`).
//! A metric is in every sample of its source, `null` where not read.
//!
//! Metrics of the kernel's listening sockets (from sock_diag):
//! - `system` (target on this machine): `listen_queue` (connections the
//!   kernel completed on the target port's listening sockets, waiting for
//!   `accept`, summed), `listen_backlog` (their limits, summed),
//!   `tcp_port_established` (and `tcp_port_time_wait`, `_syn_recv`,
//!   `_close_wait`, `_fin_wait`); machine-wide rates `listen_overflows`,
//!   `listen_drops` and `syncookies_sent`.
//! - process sources (`pid:`, `pidfile:` — the process and its
//!   descendants — and `proc:`, every process of that name): `processes`,
//!   `processes_running` (state R or D), `cpu`, `rss_bytes`, `threads`,
//!   `open_files`, and over the TCP and unix listening sockets they hold:
//!   `listeners`, `listen_queue`, `listen_backlog`, `established`
//!   (connections to those listeners, accepted or queued).
//! - `listen:PORT`, `listen:HOST:PORT`, `listen:/path.sock`: one listener's
//!   `listeners`, `listen_queue`, `listen_backlog`, `established`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Everything the monitors saw, and what it means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Monitoring {
    /// The sampling interval asked for, in seconds.
    pub interval_s: f64,
    pub sources: Vec<Source>,
    /// Headline figures of the server, from the best source for each.
    pub server: ServerFigures,
    /// What the samples show, in words, with the fix; most severe first.
    #[serde(default)]
    pub diagnoses: Vec<Diagnosis>,
    /// Diagnoses whose evidence held but that were not the limit, and why
    /// (e.g. every php-fpm child busy, but because the CPUs were full):
    /// never printed as a problem beside the one that was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ruled_out: Vec<RuledOut>,
    /// Sources that stopped answering for part of the run: their figures
    /// there are gaps, never the last reading carried on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blind: Vec<Blind>,
    /// Server settings read at the end of the run from the watched
    /// processes' config files (`pm.max_children`, `MaxRequestWorkers`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<ServerSetting>,
    /// Advice on how a source is set up, once per source that has any
    /// (php-fpm's status answered by a child of the pool it watches: how
    /// to give it `pm.status_listen`).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// A diagnosis that was considered and set aside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuledOut {
    /// The diagnosis' code (`fpm_max_children`, `server_cpu_saturated`…).
    pub code: String,
    /// Why it is not the limit, in words.
    pub why: String,
}

/// A source that went blind: from `from_s` to the end of the run (or to
/// `to_s` when it answered again) its readings are missing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Blind {
    /// The source's spec.
    pub source: String,
    pub from_s: f64,
    /// None: blind to the end of the run.
    pub to_s: Option<f64>,
    /// Why, from its last failed read ("a read took 1,203 ms, over the interval").
    pub why: String,
}

/// A setting of the server, read from its config file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerSetting {
    /// The `--monitor` source whose process it belongs to.
    pub source: String,
    /// The process's name (`php-fpm8.2`, `apache2`).
    pub program: String,
    /// As in the config (`pm.max_children`, `MaxRequestWorkers`).
    pub name: String,
    pub value: f64,
    /// The file it was read from.
    pub file: String,
}

/// One fact a diagnosis rests on: a metric of a source, over some seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Evidence {
    /// The source's spec (or `result` for yace's own figures).
    pub source: String,
    pub metric: String,
    /// Samples where it held, of those read.
    pub samples: u64,
    pub of: u64,
    /// The first and last second where it held.
    pub from_s: f64,
    pub to_s: f64,
    /// The most extreme value seen there.
    pub value: f64,
    /// The same, in words.
    pub words: String,
}

/// The setting a diagnosis says to change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Setting {
    /// As in the config (`pm.max_children`).
    pub name: String,
    /// Its value now, where it could be read (config, or the pool's size).
    pub current: Option<f64>,
    /// What Little's law suggests from the measured figures.
    pub suggested: Option<f64>,
    /// How `suggested` was reached, in words.
    pub how: String,
}

/// One `--monitor` source and its series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Source {
    /// As given on the command line, secrets hidden (`nginx:http://…/status`).
    pub spec: String,
    /// `system`, `process`, `node`, `prom`, `nginx`, `apache`, `fpm`, `ssh`.
    pub kind: String,
    /// What it watched, in words (`php-fpm8.2: 5 processes`, `127.0.0.1:9100`).
    pub label: String,
    /// `ok`, or `dropped` when it failed or was too slow repeatedly and was
    /// no longer read (the run went on).
    pub state: SourceState,
    /// Why it was dropped, or the last failed read.
    pub error: Option<String>,
    /// Reads that failed (each a `null` sample).
    pub failures: u64,
    /// When the source went blind for the rest of the run: the run's second
    /// of the first of its final failed (or too slow) reads, when it was
    /// dropped or its last reads failed. Its series go on to the end of
    /// the run as `null`s from there (a chart shows the gap), and no
    /// figure is taken from before as if it held after.
    #[serde(default)]
    pub blind_from_s: Option<f64>,
    /// Why, in words (`too slow: a read took 1,203 ms (the interval is
    /// 500 ms)`, `connection refused at …`).
    #[serde(default)]
    pub blind_reason: Option<String>,
    /// What watching cost this client: the CPU seconds its thread used
    /// (reading, parsing; for `ssh:`, not the ssh process itself).
    #[serde(default)]
    pub cpu_s: Option<f64>,
    /// Sample times, seconds from the run's start.
    pub t: Vec<f64>,
    pub metrics: Vec<Metric>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SourceState {
    Ok,
    Dropped,
}

/// One metric of a source: a value per sample time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Metric {
    /// Stable name (`cpu_busy`, `tcp_time_wait`, `active_processes`; for
    /// `prom:` sources the metric's own name and labels).
    pub name: String,
    /// `%` (of all CPUs), `% of one CPU`, `bytes`, `/s` (a counter's rate),
    /// `count`, or the endpoint's own.
    pub unit: String,
    /// `gauge` (as read) or `rate` (a counter's increase per second).
    pub kind: MetricKind,
    pub values: Vec<Option<f64>>,
    /// For counters: the increase over the whole run (first to last
    /// sample), e.g. php-fpm's `max children reached` 0 → 37 is 37.
    #[serde(default)]
    pub increase: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    Gauge,
    Rate,
}

/// The server's headline figures; `None` where no source tells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct ServerFigures {
    /// Whole-machine CPU busy, % of all CPUs: mean and highest sample.
    pub cpu_mean_pct: Option<f64>,
    pub cpu_max_pct: Option<f64>,
    /// Highest 1-minute load average divided by the CPUs (what `uptime`
    /// shows, per core: above 1 means work waited for a CPU).
    pub load_per_cpu_max: Option<f64>,
    /// Server CPU time per response, in milliseconds: the fairest
    /// efficiency figure when comparing stacks.
    pub cpu_ms_per_request: Option<f64>,
    /// Where `cpu_ms_per_request` comes from, in words.
    pub cpu_source: Option<String>,
    /// Most connections established on the target's port at once.
    pub connections_max: Option<f64>,
    /// Most workers busy at once, and the pool's size, where a status page
    /// tells (php-fpm processes, Apache workers, nginx connections writing).
    pub workers_busy_max: Option<f64>,
    pub workers_total: Option<f64>,
    /// Which pool `workers_*` describe.
    pub workers_source: Option<String>,
}

/// Something the samples show, said in words with the fix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Diagnosis {
    /// Stable: `server_cpu_saturated`, `fpm_max_children`,
    /// `apache_out_of_workers`, `accept_queue`, `listen_overflow`,
    /// `nginx_dropped`, `time_wait`, `memory_low`, `client_bound`.
    pub code: String,
    /// `problem` (the likely limit) or `note`.
    pub severity: String,
    pub message: String,
    pub fix: String,
    /// The figures the message quotes, by name, for other languages and tools.
    #[serde(default)]
    pub figures: std::collections::BTreeMap<String, f64>,
    /// What it rests on: which figures, over which seconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    /// The setting to change, its value now and the one suggested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<Setting>,
}

impl Monitoring {
    /// The source's metric `name`, if the source has it.
    pub fn metric<'a>(source: &'a Source, name: &str) -> Option<&'a Metric> {
        source.metrics.iter().find(|m| m.name == name)
    }
}

impl Source {
    /// From when, and why, the source saw nothing to the end of the run.
    pub fn blind(&self) -> Option<(f64, &str)> {
        let from = self.blind_from_s?;
        Some((
            from,
            self.blind_reason.as_deref().unwrap_or("its reads failed"),
        ))
    }
}

impl Metric {
    /// The values that were read.
    pub fn present(&self) -> impl Iterator<Item = f64> + '_ {
        self.values.iter().flatten().copied()
    }

    pub fn max(&self) -> Option<f64> {
        self.present().reduce(f64::max)
    }

    pub fn mean(&self) -> Option<f64> {
        let (n, s) = self.present().fold((0u32, 0.0), |(n, s), v| (n + 1, s + v));
        (n > 0).then(|| s / f64::from(n))
    }
}
