//! `yace merge --expect-shards N INPUTS…`: the shards of one run as one
//! result (docs/design/010-shards.md). Refused (exit 2, nothing written)
//! when the inputs mix runs or plans; written but marked incomplete
//! (exit 6) when a shard is missing, partial or short; exit 3 when the
//! merged result breaches a threshold.

use super::driver;
use crate::args::MergeArgs;
use crate::{exit, Failure};

pub fn run(a: MergeArgs) -> Result<u8, Failure> {
    if let Some(id) = &a.run_id {
        merge::check_run_id(id).map_err(|e| Failure::usage(format!("--run-id: {e}")))?;
    }
    if a.expect_shards == 0 {
        return Err(Failure::usage("--expect-shards: must be at least 1"));
    }
    let collected = merge::collect(&a.inputs)
        .map_err(|e| Failure::usage(format!("{e} (give result files, directories or logs)")))?;
    for f in &collected.empty {
        eprintln!("yace: {f}: no yace result in it");
    }
    let out = driver::create_output("-o", Some(&a.output))?;
    let merged = merge::merge(
        collected.inputs,
        a.expect_shards,
        a.run_id.as_deref(),
        &collected.damage,
    )
    .map_err(|r| Failure::usage(r.to_string()))?;
    for n in &merged.notes {
        eprintln!("yace: {n}");
    }
    let r = &merged.result;
    if !a.quiet {
        let _ =
            report::text::summary_in(r, std::io::stdout().lock(), false, driver::language(None));
    }
    driver::write_json(r, out)?;
    let info = r.merge.as_ref().expect("a merge says what it merged");
    if merged.complete() {
        eprintln!(
            "yace: merged {} of {} shards of run {} into {}",
            info.shards.len(),
            info.expected_shards,
            info.run_id,
            a.output.display()
        );
        if r.thresholds.iter().any(|t| !t.passed) {
            return Ok(exit::THRESHOLD);
        }
        Ok(exit::OK)
    } else {
        eprintln!(
            "yace: the merged result of run {} is INCOMPLETE ({} of {} shards merged), \
             written to {}:",
            info.run_id,
            info.shards.len(),
            info.expected_shards,
            a.output.display()
        );
        for reason in &info.reasons {
            eprintln!("  - {reason}");
        }
        Ok(exit::INCOMPLETE)
    }
}
