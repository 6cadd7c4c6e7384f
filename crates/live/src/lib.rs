//! Watching a run as it happens, from the per-second rows the run already
//! merges for its result (what you watch is what you get in the file):
//! the terminal dashboard, and the progress line where there is no
//! terminal to draw on.
//!
//! ```text
//! run's observer (every ~50 ms) ──new rows──▶ Dashboard ──channel──▶ drawing thread
//!                                                                  keys ─┘  │ frame ≤ 4/s
//!                                 Setup (the plan) ───────────────────────▶ view::draw
//! ```
//!
//! Nothing here runs on a load thread or adds to the per-request path: the
//! observer hands over one row per second of the run; folding, keys and
//! drawing happen on the dashboard's own thread. The view's figures are
//! the rows' (latency percentiles per second, CPU per second); the result
//! holds the same rows.
//!
//! Which front to use (dashboard, line in place, log lines, none) is the
//! binary's choice: it knows the flags and the terminal.

#![forbid(unsafe_code)]

pub mod campaign;
mod dashboard;
pub mod keys;
pub mod line;
mod screen;
mod setup;
pub mod view;
mod watch;

pub use campaign::Campaign;
pub use dashboard::{Dashboard, OnSteer, ServerNow, FRAME};
pub use keys::Steer;
pub use setup::{Setup, Shape};
pub use view::Look;
pub use watch::{Watch, KEEP_S, WINDOW_S};
