//! The result's `monitor` section: what the server did during the run, as
//! sampled by `--monitor` sources (this machine's /proc, processes,
//! node_exporter, status pages, a probe over SSH) on the run's clock.
//!
//! Each source keeps its own sample times (`t`, seconds from the run's
//! start; the first sample is taken as the load starts) and one value per
//! sample and metric. Counters are stored as rates over the interval that
//! ends at the sample (the first sample of a counter has none: `null`).
//! A sample that failed is a `null` in every metric of its source.

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
    /// Advice on how a source is set up, once per source that has any
    /// (php-fpm's status answered by a child of the pool it watches: how
    /// to give it `pm.status_listen`).
    #[serde(default)]
    pub notes: Vec<String>,
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
    /// `apache_out_of_workers`, `listen_overflow`, `nginx_dropped`,
    /// `time_wait`, `memory_low`, `client_bound`.
    pub code: String,
    /// `problem` (the likely limit) or `note`.
    pub severity: String,
    pub message: String,
    pub fix: String,
    /// The figures the message quotes, by name, for other languages and tools.
    #[serde(default)]
    pub figures: std::collections::BTreeMap<String, f64>,
}

impl Monitoring {
    /// The source's metric `name`, if the source has it.
    pub fn metric<'a>(source: &'a Source, name: &str) -> Option<&'a Metric> {
        source.metrics.iter().find(|m| m.name == name)
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
