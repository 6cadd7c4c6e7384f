//! Flags → plan, in one place (STYLE.md §7's second level). `yace run`'s
//! flags (`run`), `yace ab`'s (`ab`) and a scenario's load (`scenario`) all
//! become a `plan::Plan` here, through the typed helpers in `parts`. Every
//! problem is collected and keyed by the `plan::Field` it is about; each
//! command shows them in its own flag spelling (`spelling`).

mod ab;
mod parts;
mod run;
mod scenario;
pub mod shard;
mod spelling;

pub use ab::ab_plan;
pub use parts::{monitored, monitors, thresholds, thresholds_of};
pub use run::run_plan;
pub use scenario::{scenario_plan, scenario_thresholds};
pub use spelling::{AbFlags, RunFlags};
