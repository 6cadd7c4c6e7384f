//! A pure fold of the engine's samples into bounded aggregates: HDR
//! histograms, counters and a per-second series, mergeable across workers
//! (and, through the JSON result, across processes and hosts). Nothing
//! here grows with the number of requests.

// Pure: no I/O beyond what std offers safely, and no unsafe code.
#![forbid(unsafe_code)]

pub mod behind;
pub mod fmt;
pub mod hist;
pub mod monitor;
mod recorder;
mod result;
mod series;
pub mod shard;
pub mod shortfall;
pub mod threshold;

pub use behind::Behind;
pub use recorder::{BodyLengths, Recorder, RecorderOptions, StepTotals, Totals};
pub use result::{
    BodyLength, CheckResult, ClientLoad, End, EndReason, Environment, FcgiInfo, Histograms,
    Http2Info, IntervalHistogram, Marker, Paced, RunFacts, RunResult, SteerSegment, Steered,
    StepResult, Summary, TlsInfo, UserSteerSegment, SATURATED, SCHEMA,
};
pub use series::{SecondAcc, SecondRow, Series, INTERVAL_S};
pub use shortfall::Shortfall;
