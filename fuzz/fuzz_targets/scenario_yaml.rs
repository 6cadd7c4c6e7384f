//! Fuzzes `yace_scenario::parse` on YAML text (and the runner of any valid
//! scenario). See `yace_fuzz::check_scenario` for the input and invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| yace_fuzz::check_scenario(data, yace_scenario::Format::Yaml));
