//! The lab: experiments (targets × sweeps × repetitions, in randomized
//! blocks) and the statistics that say whether a change is real. The runs
//! themselves go through the one run pipeline (`yace-run`), called by the
//! CLI; this crate reads experiment files, plans and records the order,
//! and analyzes and renders the results. Pure but for reading files.

#![forbid(unsafe_code)]

pub mod analysis;
pub mod compare;
pub mod experiment;
pub mod html;
pub mod render;
pub mod state;
pub mod stats;
pub mod words;
