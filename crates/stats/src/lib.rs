//! A pure fold of the engine's samples into bounded aggregates: HDR
//! histograms, counters and a per-second series, mergeable across workers
//! (and, through the JSON result, across processes and hosts). Nothing
//! here grows with the number of requests.

pub mod hist;
mod recorder;
mod result;
mod series;

pub use recorder::{BodyLengths, Recorder, Totals};
pub use result::{
    BodyLength, ClientLoad, End, EndReason, Environment, Histograms, RunFacts, RunResult, Summary,
    SATURATED, SCHEMA,
};
pub use series::{SecondAcc, SecondRow, Series};
