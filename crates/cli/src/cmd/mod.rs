//! One module per command (`yace doctor` lives in `doctor/`).

pub mod ab;
pub mod report;
pub mod run;
pub mod serve;
