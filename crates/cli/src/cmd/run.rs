//! `yace run`: flags (or a scenario file) → plan → the run library → the
//! summary, the JSON result and the exit code.

use super::driver;
use crate::args::RunArgs;
use crate::failure::{both, exit_code};
use crate::flags::{self, RunFlags};
use crate::{exit, Failure};
use ::run::{Job, Script, TargetChoice};
use stats::SecondRow;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::Path;

/// Runs the command; returns the exit code.
pub fn run(a: RunArgs) -> Result<u8, Failure> {
    if let Some(file) = a.file.clone() {
        return run_scenario(a, &file);
    }
    // Flags are checked before the embedded target starts, against the
    // URL it will have (only its port differs), and with the thresholds in
    // the same round.
    let url = a.url.clone().unwrap_or_else(|| "http://127.0.0.1/".into());
    let ((plan, thresholds), monitors) = both(
        both(
            flags::run_plan(&a, &url).map_err(|e| Failure::usage(e.render(&RunFlags))),
            flags::thresholds(&a.thresholds, None),
        ),
        flags::monitors(&a.monitor.monitor, &a.monitor.interval),
    )?;
    flags::monitored("--threshold", &thresholds, &monitors)?;
    let (target, plan) = match &a.url {
        Some(url) => (TargetChoice::Url(url.clone()), plan),
        None => {
            let server = driver::embedded()?;
            let plan = flags::run_plan(&a, &server.url())
                .map_err(|e| Failure::usage(e.render(&RunFlags)))?;
            (TargetChoice::Embedded(server), plan)
        }
    };
    if a.dry_run {
        let text = serde_json::to_string_pretty(&plan.redacted()).expect("plan serializes");
        println!("{text}");
        return Ok(exit::OK);
    }
    let prepared = driver::prepare(Job {
        plan,
        target,
        script: Script::Request,
        thresholds,
        spelling: &RunFlags,
        monitors,
    })?;
    let json_out = driver::create_output("--json", a.json.as_deref())?;
    let junit_out = driver::create_output("--junit", a.junit.as_deref())?;
    let html_out = driver::create_output("--html", a.html.as_deref())?;
    let live = !a.quiet && std::io::stderr().is_terminal();
    let limit_s = prepared
        .plan
        .stop
        .duration
        .map_or(f64::INFINITY, |d| d.as_secs_f64());
    let mut shown = 0;
    let done = driver::execute(
        prepared,
        |_| (),
        |rows| {
            if live {
                shown = progress(rows, shown, limit_s);
            }
        },
    )?;
    if live {
        eprint!("\r\x1b[K");
    }
    // A closed stdout (yace run | head) must not lose the JSON result.
    let _ = report::text::summary_in(
        &done.result,
        std::io::stdout().lock(),
        graphs(&a),
        driver::language(a.lang),
    );
    driver::write_json(&done.result, json_out)?;
    driver::write_junit(&done.result, junit_out)?;
    driver::write_html(&done.result, html_out, driver::language(a.lang))?;
    Ok(exit_code(&done))
}

/// `yace run -f plan.toml`: a scenario file's virtual users. The file is
/// parsed and validated by `yace-scenario`; flags win over its `[load]`.
fn run_scenario(a: RunArgs, file: &Path) -> Result<u8, Failure> {
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let bad = |d: plan::Diagnostics| Failure::usage(d.to_string());
    // The target: the command line's URL, else the file's base, else the
    // embedded target (as `yace run` without a URL). A given URL replaces
    // the base everywhere: address, Host header and path prefix.
    let mut embedded = None;
    let sc = match &a.url {
        Some(url) => scenario::load_with_base(file, &env, Some(url)).map_err(bad)?,
        None => {
            let sc = scenario::load(file, &env).map_err(bad)?;
            if sc.base().is_some() {
                sc
            } else {
                let server = driver::embedded()?;
                let sc = scenario::load_with_base(file, &env, Some(&server.url())).map_err(bad)?;
                embedded = Some(server);
                sc
            }
        }
    };
    let url = sc.base().expect("a base was given").url.clone();
    let ((plan, thresholds), monitors) = both(
        both(
            flags::scenario_plan(&a, &sc, &url).map_err(|e| Failure::usage(e.render(&RunFlags))),
            flags::scenario_thresholds(&a, &sc, file),
        ),
        flags::monitors(&a.monitor.monitor, &a.monitor.interval),
    )?;
    flags::monitored("--threshold", &thresholds, &monitors)?;
    if a.dry_run {
        let doc = serde_json::json!({
            "plan": plan.redacted(),
            "scenario": sc.to_json_redacted(&plan.secrets),
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("serializes")
        );
        return Ok(exit::OK);
    }
    let prepared = driver::prepare(Job {
        plan,
        target: embedded.map_or(TargetChoice::Url(url), TargetChoice::Embedded),
        script: Script::Scenario(Box::new(sc)),
        thresholds,
        spelling: &RunFlags,
        monitors,
    })?;
    let json_out = driver::create_output("--json", a.json.as_deref())?;
    let junit_out = driver::create_output("--junit", a.junit.as_deref())?;
    let html_out = driver::create_output("--html", a.html.as_deref())?;
    let done = driver::execute(prepared, |_| (), |_| {})?;
    let _ = report::text::summary_in(
        &done.result,
        std::io::stdout().lock(),
        graphs(&a),
        driver::language(a.lang),
    );
    driver::write_json(&done.result, json_out)?;
    driver::write_junit(&done.result, junit_out)?;
    driver::write_html(&done.result, html_out, driver::language(a.lang))?;
    Ok(exit_code(&done))
}

/// Prints a one-line live view for each newly finished second.
fn progress(rows: &[SecondRow], shown: usize, limit_s: f64) -> usize {
    if rows.len() == shown {
        return shown;
    }
    let total: u64 = rows.iter().map(|r| r.responses).sum();
    let errors: u64 = rows.iter().map(|r| r.errors).sum();
    // The newest row, but not the few milliseconds past the planned end
    // (the run's tail): its rate would read as a collapse.
    if let Some(r) = rows.iter().rev().find(|r| (r.second as f64) < limit_s) {
        let mut e = std::io::stderr().lock();
        let _ = write!(
            e,
            "\r\x1b[K  {:>4.0}s  {:>10} req/s  p50 {}  p99 {}  responses {}  errors {}",
            // The end of the row's span, never past the planned duration:
            // the short tail second of a 3 s run ends at 3 s, not "4s".
            (r.second as f64 + r.length_s).min(limit_s),
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

/// Graphs under the summary: on a terminal unless `--no-graphs`, elsewhere
/// only with `--graphs`.
fn graphs(a: &RunArgs) -> bool {
    a.graphs || (!a.no_graphs && std::io::stdout().is_terminal())
}
