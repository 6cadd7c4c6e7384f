//! `yace run`: flags (or a scenario file) → plan → the run pipeline →
//! the summary, the JSON result and the exit code.

use crate::args::RunArgs;
use crate::flags::{self, RunFlags};
use crate::pipeline::{
    create_output, execute, exit_code, fixed_flow, prepare, write_json, ScenarioFlow,
};
use crate::{exit, Failure};
use stats::SecondRow;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::Path;

/// Runs the command; returns the exit code.
pub fn run(a: RunArgs) -> Result<u8, Failure> {
    if let Some(file) = a.file.clone() {
        return run_scenario(a, &file);
    }
    let thresholds = flags::thresholds(&a.thresholds, None)?;
    let build =
        |url: &str| flags::run_plan(&a, url).map_err(|e| Failure::usage(e.render(&RunFlags)));
    let Some(prepared) = prepare(a.url.as_deref(), build, a.dry_run)? else {
        return Ok(exit::OK);
    };
    let json_out = create_output("--json", a.json.as_deref())?;
    let live = !a.quiet && std::io::stderr().is_terminal();
    let mut shown = 0;
    let mut done = execute(
        &prepared,
        |_| (),
        fixed_flow(&prepared.plan),
        &[],
        |rows| {
            if live {
                shown = progress(rows, shown);
            }
        },
    )?;
    done.result.thresholds = thresholds
        .iter()
        .map(|t| t.evaluate(&done.result))
        .collect();
    if live {
        eprint!("\r\x1b[K");
    }
    // A closed stdout (yace run | head) must not lose the JSON result.
    let _ = report::text::summary(&done.result, std::io::stdout().lock());
    write_json(&done.result, json_out, a.json.as_deref())?;
    if let Some(server) = prepared.embedded {
        server.shutdown();
    }
    Ok(exit_code(done.signal, &done.result))
}

/// `yace run -f plan.toml`: a scenario file's virtual users. The file is
/// parsed and validated by `yace-scenario`; flags win over its [load].
fn run_scenario(a: RunArgs, file: &Path) -> Result<u8, Failure> {
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let sc = scenario::load(file, &env).map_err(|d| Failure::usage(d.to_string()))?;
    let thresholds = flags::scenario_thresholds(&a, &sc, file)?;
    let url = a.url.clone().unwrap_or_else(|| sc.base().url.clone());
    let build = |url: &str| {
        flags::scenario_plan(&a, &sc, url).map_err(|e| Failure::usage(e.render(&RunFlags)))
    };
    if a.dry_run {
        let plan = build(&url)?;
        let doc = serde_json::json!({ "plan": plan, "scenario": sc.to_json() });
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("serializes")
        );
        return Ok(exit::OK);
    }
    let Some(prepared) = prepare(Some(&url), build, false)? else {
        return Ok(exit::OK);
    };
    let json_out = create_output("--json", a.json.as_deref())?;
    let names: Vec<String> = sc.steps().iter().map(|s| s.name.clone()).collect();
    let mut done = execute(
        &prepared,
        |_| (),
        |_| ScenarioFlow {
            runner: sc.runner(),
        },
        &names,
        |_| {},
    )?;
    let mut flows = std::mem::take(&mut done.flows).into_iter();
    if let Some(mut first) = flows.next() {
        for f in flows {
            first.runner.merge(&f.runner);
        }
        done.result.checks = first
            .runner
            .counters()
            .into_iter()
            .map(|c| stats::CheckResult {
                step: names.get(c.step as usize).cloned().unwrap_or_default(),
                name: c.name,
                passed: c.passed,
                failed: c.failed,
            })
            .collect();
    }
    done.result.thresholds = thresholds
        .iter()
        .map(|t| t.evaluate(&done.result))
        .collect();
    let _ = report::text::summary(&done.result, std::io::stdout().lock());
    write_json(&done.result, json_out, a.json.as_deref())?;
    if let Some(server) = prepared.embedded {
        server.shutdown();
    }
    Ok(exit_code(done.signal, &done.result))
}

/// Prints a one-line live view for each newly finished second.
fn progress(rows: &[SecondRow], shown: usize) -> usize {
    if rows.len() == shown {
        return shown;
    }
    let total: u64 = rows.iter().map(|r| r.responses).sum();
    let errors: u64 = rows.iter().map(|r| r.errors).sum();
    if let Some(r) = rows.last() {
        let mut e = std::io::stderr().lock();
        let _ = write!(
            e,
            "\r\x1b[K  {:>4}s  {:>10} req/s  p50 {}  p99 {}  responses {}  errors {}",
            r.second + 1,
            report::count(r.responses),
            report::duration_us(r.latency_p50_us),
            report::duration_us(r.latency_p99_us),
            report::count(total),
            report::count(errors),
        );
        let _ = e.flush();
    }
    rows.len()
}
