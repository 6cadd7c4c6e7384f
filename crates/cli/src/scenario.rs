//! `yace run -f plan.toml`: a scenario file's virtual users on the engine.
//! The file is parsed and validated by `yace-scenario`; this module turns
//! its load section into a plan (flags win over the file) and adapts its
//! per-worker `Runner` to the engine's `Flow`.

use crate::args::RunArgs;
use crate::run::{create_output, execute, exit_code, prepare, thresholds_from, write_json};
use crate::{exit, Failure};
use engine::{Flow, Next, Outcome, Sample};
use plan::{InputErrors, Load, Plan};
use scenario::{Action, Capture, Runner, Scenario, User};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// A scenario's runner as the engine's flow.
pub struct ScenarioFlow {
    runner: Runner,
}

impl Flow for ScenarioFlow {
    type User = User;

    fn user(&mut self, index: u64) -> User {
        self.runner.new_user(index)
    }

    fn next(&mut self, user: &mut User, out: &mut Vec<u8>) -> Next {
        match self.runner.next(user, out) {
            Action::Request {
                step,
                capture,
                head,
                idempotent,
            } => Next::Request {
                step,
                capture: capture != Capture::None,
                head,
                idempotent,
            },
            Action::Think(d) => Next::Think(d.as_nanos().min(u64::MAX as u128) as u64),
            Action::EndIteration => Next::EndIteration,
        }
    }

    fn ended(&mut self, user: &mut User, s: &Sample, response: &[u8]) {
        match s.outcome {
            Outcome::Response => {
                let latency = Duration::from_nanos(s.end.saturating_sub(s.intended));
                self.runner
                    .response(user, s.step, s.status, response, latency);
            }
            // The run is over; nothing more to learn.
            Outcome::Cancelled => {}
            _ => self.runner.failed(user, s.step),
        }
    }
}

/// Load flags that, given on the command line, replace the file's [load].
fn load_flags_given(a: &RunArgs) -> bool {
    a.users.is_some()
        || a.user_stages.is_some()
        || a.connections.is_some()
        || a.pacing.is_some()
        || a.ramp_up.is_some()
        || a.ramp_down.is_some()
}

/// The plan for a scenario: its base URL (or the command line's), its load
/// (or the flags'), the scenario's timeout unless --timeout was changed.
fn plan_for(a: &RunArgs, sc: &Scenario, url: &str) -> Result<Plan, InputErrors> {
    let mut b = plan::PlanBuilder::new();
    if a.rate.is_some() || a.stages.is_some() || !sc.load_spec().rate.is_empty() {
        b.error(
            "--rate/rate",
            "scenarios run as virtual users; the open model with a journey is not supported yet",
            Some("use users, ramp_up and pacing in [load]"),
        );
    }
    if a.think.is_some() {
        b.error(
            "--think",
            "a scenario sets think time in its file",
            Some("set think in [load] or per step"),
        );
    }
    if b.has_errors() {
        return b.finish(None);
    }
    let mut plan = crate::run::plan_from(a, url)?;
    let spec = sc.load_spec();
    if !load_flags_given(a) {
        let stages: Vec<plan::UserStage> = spec
            .users
            .iter()
            .map(|s| plan::UserStage {
                duration: s.duration,
                from: s.from,
                to: s.to,
            })
            .collect();
        let length: Duration = stages.iter().map(|s| s.duration).sum();
        plan.load = Load::Users {
            stages,
            pacing: spec.pacing,
            think: plan::Think::None,
        };
        if a.duration.is_none() {
            plan.stop.duration = Some(length);
        }
    } else if let Load::Users { think, .. } = &mut plan.load {
        // Think time comes from the scenario's steps, not from the Fixed flow.
        *think = plan::Think::None;
    }
    if a.threads.is_none() {
        if let Some(t) = spec.threads {
            plan.threads = t;
        }
    }
    if a.timeout == "30s" {
        plan.timeouts.request = spec.timeout;
    }
    Ok(plan)
}

pub fn run(a: RunArgs, file: &Path) -> Result<u8, Failure> {
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let sc = scenario::load(file, &env).map_err(|d| Failure::usage(d.to_string()))?;
    let mut thresholds = thresholds_from(&a.thresholds, None)?;
    let mut bad = Vec::new();
    for t in &sc.load_spec().thresholds {
        match stats::threshold::Threshold::parse(t, None) {
            Ok(t) => thresholds.push(t),
            Err(e) => bad.push(format!("{}: [load] thresholds: {e}", file.display())),
        }
    }
    for st in sc.steps() {
        for t in &st.thresholds {
            match stats::threshold::Threshold::parse(t, Some(&st.name)) {
                Ok(t) => thresholds.push(t),
                Err(e) => bad.push(format!(
                    "{}: step '{}' thresholds: {e}",
                    file.display(),
                    st.name
                )),
            }
        }
    }
    if !bad.is_empty() {
        return Err(Failure::usage(bad.join("\n")));
    }
    let url = a.url.clone().unwrap_or_else(|| sc.base().url.clone());
    if a.dry_run {
        let plan = plan_for(&a, &sc, &url).map_err(|e| Failure::usage(e.to_string()))?;
        let doc = serde_json::json!({ "plan": plan, "scenario": sc.to_json() });
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("serializes")
        );
        return Ok(exit::OK);
    }
    let Some(prepared) = prepare(Some(&url), |u| plan_for(&a, &sc, u), false)? else {
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
