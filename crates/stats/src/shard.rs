//! What a shard's result says about its part of a sharded run, and what a
//! merged result says about the shards it was made of
//! (docs/design/010-shards.md). Both are optional in the contract: a run
//! that was neither sharded nor merged has neither.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A shard's identity and how it started (`yace run --shard I/N`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShardInfo {
    /// The run all shards belong to (`--run-id`).
    pub run_id: String,
    /// `sha256:` + hex of the redacted plan before splitting (without
    /// `shard`, `threads` and `socket.bind`): equal on every shard of a run.
    pub plan_hash: String,
    /// 0-based, as `JOB_COMPLETION_INDEX` and `SLURM_PROCID`.
    pub index: u64,
    pub count: u64,
    /// The agreed start (`--start-at`), RFC 3339 UTC; absent when none.
    #[serde(default)]
    pub start_at: Option<String>,
    /// When the load started, in ms after `start_at` (negative: early).
    #[serde(default)]
    pub start_offset_ms: Option<f64>,
    /// How late a start was still accepted, ms.
    #[serde(default)]
    pub start_tolerance_ms: Option<f64>,
    pub start: StartStatus,
    pub clock: ClockSync,
    /// Requests this shard's plan holds, when it holds a set number.
    #[serde(default)]
    pub expected_requests: Option<u64>,
    /// Requests it started (`summary.requests`) plus those it dropped: its
    /// account of the timetable.
    pub sent_requests: u64,
    /// Connections (closed model), in-flight slots (open) or users: its share.
    pub connections: u64,
}

/// How a shard's start went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StartStatus {
    /// No `--start-at`: it started when ready.
    Unscheduled,
    /// Within the tolerance of `start_at`.
    OnTime,
    /// Ready only after `start_at` + tolerance: it sent nothing.
    TooLate,
}

/// The system clock's state as the kernel reports it (`adjtimex`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClockSync {
    pub status: ClockStatus,
    /// The kernel's bound on the clock's error, ms (`maxerror`).
    #[serde(default)]
    pub max_error_ms: Option<f64>,
    /// Its estimate of the error, ms (`esterror`).
    #[serde(default)]
    pub est_error_ms: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClockStatus {
    /// Disciplined by NTP/PTP (`STA_UNSYNC` clear, not `TIME_ERROR`).
    Synchronized,
    /// The kernel says the clock is not synchronized.
    Unsynchronized,
    /// Not known here (no `adjtimex`).
    Unknown,
}

/// What a merged result (`yace merge`) was made of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MergeInfo {
    pub run_id: String,
    pub plan_hash: String,
    /// `--expect-shards`.
    pub expected_shards: u64,
    /// Every expected shard was there, whole, and sent what its plan said.
    pub complete: bool,
    /// Why it is not complete (empty when it is).
    #[serde(default)]
    pub reasons: Vec<String>,
    /// The shards merged, in index order.
    pub shards: Vec<ShardInfo>,
    /// Latest start minus earliest, ms (when the shards had a start time).
    #[serde(default)]
    pub start_spread_ms: Option<f64>,
    /// Largest clock error bound among the shards, ms.
    #[serde(default)]
    pub clock_max_error_ms: Option<f64>,
    /// How the series' per-second percentiles were made: "interval" (those
    /// of the merged 5-second interval histogram each second falls in).
    pub series_percentiles: String,
}
