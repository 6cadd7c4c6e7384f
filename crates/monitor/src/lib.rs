//! Watching the server while yace loads it: `--monitor` sources read on
//! the run's clock, each on a thread of its own (never a load thread), and
//! folded into the result's `monitor` section with the diagnoses the
//! samples support.
//!
//! ```text
//! Spec ──connect (one read: the spec works, the baseline)──▶ Monitors
//!      ──start(epoch)──▶ Running (a thread per source, a read per interval)
//!      ──finish(result)──▶ stats::monitor::Monitoring (series, figures, diagnoses)
//! ```
//!
//! A source that fails three reads in a row, or is still reading when the
//! next is due three times over, is dropped and said so; the run goes on
//! and ends on time whatever a source does (its thread is left to end on
//! its own timeout).

#![deny(unsafe_code)]

pub mod parse;
pub mod reading;

pub mod diag;
mod diagnose;
pub mod fpm;
mod http;
mod listen;
mod now;
pub mod procfs;
mod sampler;
pub mod settings;
pub mod source;
pub mod spec;
pub mod ssh;

pub use diagnose::{conclude, CPU_SATURATED_PCT, TIME_WAIT_PILE};
pub use sampler::{Config, Monitors, Peek, Running, MIN_INTERVAL, STRIKES};
pub use spec::{Spec, FORMS};

pub mod quiet;
