//! One module per command (`yace doctor` lives in `doctor/`); `driver`
//! holds what the commands that send load share.

pub mod ab;
pub mod capacity;
pub mod completions;
mod driver;
pub mod findmax;
pub mod import;
pub mod k8s;
pub mod lab;
pub mod man;
pub mod merge;
pub mod probe;
pub mod render;
pub mod report;
pub mod run;
pub mod serve;
pub mod shard;
