//! The scenario crate through its public API: files in, diagnostics or
//! request bytes out. One binary, topic modules.

mod errors;
mod examples;
mod runs;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use yace_scenario::{parse, Diagnostics, Format, Scenario};

pub fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

pub fn no_env() -> BTreeMap<String, String> {
    BTreeMap::new()
}

pub fn toml(text: &str) -> Result<Scenario, Diagnostics> {
    parse(text, Format::Toml, "s.toml", &examples_dir(), &no_env())
}

pub fn yaml(text: &str) -> Result<Scenario, Diagnostics> {
    parse(text, Format::Yaml, "s.yaml", &examples_dir(), &no_env())
}

/// A response as the engine hands it to a scenario: `raw` as it came on an
/// HTTP/1.1 connection, typed.
pub fn wire(raw: impl AsRef<[u8]>, status: u16) -> yace_scenario::Captured {
    yace_scenario::Captured::from_http1(raw.as_ref(), false, status)
}
