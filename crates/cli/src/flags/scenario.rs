//! A scenario's plan and thresholds: flags win over its `[load]`.

use super::parts::thresholds;
use super::run::run_plan;
use super::spelling::RunFlags;
use crate::args::RunArgs;
use crate::Failure;
use plan::{Diagnostics, Field, Load, Plan, PlanBuilder};
use scenario::Scenario;
use stats::threshold::Threshold;
use std::path::Path;
use std::time::Duration;

/// Load flags that, given on the command line, replace a scenario's `[load]`.
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
pub fn scenario_plan(a: &RunArgs, sc: &Scenario, url: &str) -> Result<Plan, Diagnostics> {
    let mut b = PlanBuilder::new();
    if a.rate.is_some() || a.stages.is_some() || !sc.load_spec().rate.is_empty() {
        b.error(
            "--rate/rate",
            "scenarios run as virtual users; the open model with a journey is not supported yet",
            Some("use users, ramp_up and pacing in [load]"),
        );
    }
    if a.think.is_some() {
        b.error(
            Field::Think,
            "a scenario sets think time in its file",
            Some("set think in [load] or per step"),
        );
    }
    // -d is the whole run here too: it replaces the scenario's hold (what
    // its ramps leave), and is an error where it would cut a ramp or a stage.
    let mut spec = sc.load_spec().clone();
    if let (Some(d), false) = (&a.duration, load_flags_given(a)) {
        if let Ok(d) = plan::parse_duration(Field::Duration, d) {
            match spec.with_length(d) {
                Ok(s) => spec = s,
                Err(e) => b.error(Field::Duration, e, None),
            }
        }
    }
    let own_errors = b.has_errors();
    // The rest of the flags are checked in the same round.
    let mut plan = match (b.finish(None, &RunFlags), run_plan(a, url)) {
        (_, Ok(plan)) if !own_errors => plan,
        (own, rest) => {
            let mut all = own.err().map(|d| d.0).unwrap_or_default();
            all.extend(rest.err().map(|d| d.0).unwrap_or_default());
            return Err(Diagnostics(all));
        }
    };
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
        plan.stop.duration = Some(length);
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

/// A scenario's own thresholds (its `[load]` and each step's), after the
/// command line's; every bad one is reported, with the file it is in.
pub fn scenario_thresholds(
    a: &RunArgs,
    sc: &Scenario,
    file: &Path,
) -> Result<Vec<Threshold>, Failure> {
    let mut thresholds = thresholds(&a.thresholds, None)?;
    let mut bad = Vec::new();
    for t in &sc.load_spec().thresholds {
        match Threshold::parse(t, None) {
            Ok(t) => thresholds.push(t),
            Err(e) => bad.push(format!("{}: [load] thresholds: {e}", file.display())),
        }
    }
    for st in sc.steps() {
        for t in &st.thresholds {
            match Threshold::parse(t, Some(&st.name)) {
                Ok(t) => thresholds.push(t),
                Err(e) => bad.push(format!(
                    "{}: step '{}' thresholds: {e}",
                    file.display(),
                    st.name
                )),
            }
        }
    }
    if bad.is_empty() {
        Ok(thresholds)
    } else {
        Err(Failure::usage(bad.join("\n")))
    }
}
