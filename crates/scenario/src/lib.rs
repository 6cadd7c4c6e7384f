mod data;
mod diag;
mod jsonpath;
mod node;
mod rng;
mod template;
mod think;
pub use diag::{Diagnostic, Diagnostics};
