//! Pure renderers of a [`stats::RunResult`] to any writer (STYLE.md §9):
//! they read no clock and detect no terminal, so every output is tested
//! into a `Vec<u8>`. The JSON document is the contract the others are
//! built from.

// Pure: no I/O beyond what std offers safely, and no unsafe code.
#![forbid(unsafe_code)]

pub mod ab;
pub mod compare;
pub mod csv;
pub mod findmax;
mod fmt;
pub mod graphs;
pub mod html;
pub mod json;
pub mod junit;
pub mod lang;
pub mod markdown;
pub mod monitor;
pub mod text;

pub use fmt::{actual, bytes, count, duration_us, markup, pad, request_line, width};
