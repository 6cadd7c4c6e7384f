//! A scenario's plan and thresholds: flags win over its `[load]`.

use super::parts::thresholds;
use super::run::{
    late_policy, parse_rate, parse_stages, run_plan, stages_set_the_length, DEFAULT_MAX_INFLIGHT,
};
use super::spelling::RunFlags;
use crate::args::RunArgs;
use crate::Failure;
use plan::{Diagnostics, Field, Load, Plan, PlanBuilder};
use scenario::{LoadSpec, Overrides, Scenario};
use stats::threshold::Threshold;
use std::path::Path;

/// The plan for a scenario: its base URL (or the command line's), its
/// `[load]` with each load flag replacing its own key (as the environment's
/// `YACE_*` do, and after them), the scenario's timeout unless --timeout
/// was changed.
pub fn scenario_plan(a: &RunArgs, sc: &Scenario, url: &str) -> Result<Plan, Diagnostics> {
    let mut b = PlanBuilder::new();
    if a.stages.is_some() {
        b.error(
            Field::RateStages,
            "a scenario's rate stages are set in its file",
            Some("write rate_stages in [load], or give --rate N to replace its load"),
        );
    }
    if a.think.is_some() {
        b.error(
            Field::Think,
            "a scenario sets think time in its file",
            Some("set think in [load] or per step"),
        );
    }
    if a.connections.is_some() {
        b.error(
            Field::Connections,
            "a scenario's users each have their own connection",
            Some("-u N sets the number of users"),
        );
    }
    let spec = load_with_flags(a, sc, &mut b);
    let own_errors = b.has_errors() || spec.is_none();
    // The rest of the flags (request, timeouts, TLS, -n, …) are checked in
    // the same round; the load flags were applied to the scenario above.
    let rest = RunArgs {
        max_inflight: None,
        users: None,
        user_stages: None,
        ramp_up: None,
        ramp_down: None,
        pacing: None,
        think: None,
        connections: None,
        rate: None,
        stages: None,
        ..a.clone()
    };
    let mut plan = match (b.finish(None, &RunFlags), run_plan(&rest, url)) {
        (_, Ok(plan)) if !own_errors => plan,
        (own, rest) => {
            let mut all = own.err().map(|d| d.0).unwrap_or_default();
            all.extend(rest.err().map(|d| d.0).unwrap_or_default());
            return Err(Diagnostics(all));
        }
    };
    let Some(spec) = spec else {
        return Err(Diagnostics(Vec::new()));
    };
    plan.load = if spec.is_open() {
        // The open model: visitors arrive on the timetable, each walking
        // one journey; at most max_users (--max-inflight) at once.
        let mut b = PlanBuilder::new();
        let late = late_policy(a, &mut b);
        let most = a
            .max_inflight
            .as_deref()
            .and_then(|s| b.check(plan::parse_count(Field::MaxInflight, s)));
        if spec.pacing.is_some() {
            b.error(
                Field::Pacing,
                "paces each user's iterations; under a rate, visitors arrive on the timetable",
                Some("drop the pacing, or give users instead of a rate"),
            );
        }
        if b.has_errors() {
            return Err(b
                .finish(None, &RunFlags)
                .err()
                .unwrap_or(Diagnostics(Vec::new())));
        }
        Load::Open {
            stages: spec.rate.iter().map(|&s| s.into()).collect(),
            max_inflight: most.or(spec.max_users).unwrap_or(DEFAULT_MAX_INFLIGHT),
            late: late.unwrap_or_default(),
        }
    } else {
        if a.max_inflight.is_some() {
            let mut b = PlanBuilder::new();
            b.error(
                Field::MaxInflight,
                "only applies to the open model",
                Some("give the scenario a rate (--rate N, or rate in [load])"),
            );
            return Err(b
                .finish(None, &RunFlags)
                .err()
                .unwrap_or(Diagnostics(Vec::new())));
        }
        Load::Users {
            stages: spec.users.iter().map(|&s| s.into()).collect(),
            pacing: spec.pacing,
            // Think time comes from the scenario's steps, not from the Fixed flow.
            think: plan::Think::None,
        }
    };
    plan.stop.duration = Some(spec.length());
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

/// The scenario's `[load]` with the load flags applied key by key: -u the
/// users, --ramp-up/--ramp-down the ramps, --pacing the pacing, -d the
/// whole run (the hold is what the ramps leave), --user-stages all of it.
fn load_with_flags(a: &RunArgs, sc: &Scenario, b: &mut PlanBuilder) -> Option<LoadSpec> {
    let dur = |b: &mut PlanBuilder, f: Field, v: &Option<String>| {
        v.as_deref()
            .and_then(|s| b.check(plan::parse_duration(f, s)))
    };
    let users = a
        .users
        .as_deref()
        .and_then(|s| b.check(plan::parse_count(Field::Users, s)));
    let rate = a.rate.as_deref().and_then(|s| parse_rate(b, s));
    if a.users.is_some() && a.rate.is_some() {
        b.error(
            Field::Rate,
            "the open model and virtual users exclude each other",
            Some("give -u N for users, or --rate N for visitors arriving at N/s"),
        );
        return None;
    }
    let ramp_up = dur(b, Field::RampUp, &a.ramp_up);
    let ramp_down = dur(b, Field::RampDown, &a.ramp_down);
    let pacing = dur(b, Field::Pacing, &a.pacing);
    let length = dur(b, Field::Duration, &a.duration);
    if users == Some(0) {
        b.error(Field::Users, "must be at least 1", None);
    }
    let mut spec = sc.load_spec().clone();
    if let Some(text) = &a.user_stages {
        if a.users.is_some() || a.ramp_up.is_some() || a.ramp_down.is_some() {
            b.error(
                Field::UserStages,
                "replaces the scenario's users and ramps: give either it or -u/--ramp-up/--ramp-down",
                None,
            );
            return None;
        }
        let stages = b.check(parse_stages(Field::UserStages, text))?;
        stages_set_the_length(b, Field::UserStages, length, stages.iter().map(|s| s.0))?;
        spec.users = stages
            .into_iter()
            .map(|(duration, from, to)| scenario::Stage { duration, from, to })
            .collect();
        spec.ramps = None;
        if pacing.is_some() {
            spec.pacing = pacing.filter(|p| !p.is_zero());
        }
        return Some(spec);
    }
    let o = Overrides {
        users,
        rate,
        ramp_up,
        ramp_down,
        length,
        pacing,
    };
    match spec.with(&o) {
        Ok(s) => Some(s),
        Err(e) => {
            let field = if users.is_some() {
                Field::Users
            } else if rate.is_some() {
                Field::Rate
            } else if ramp_up.is_some() {
                Field::RampUp
            } else if ramp_down.is_some() {
                Field::RampDown
            } else {
                Field::Duration
            };
            b.error(field, e, None);
            None
        }
    }
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
    if !bad.is_empty() {
        return Err(Failure::usage(bad.join("\n")));
    }
    // Failed checks fail the run unless the user said how many it accepts
    // (a `checks>99%` or `checks_failed<…` threshold of their own).
    if !sc.runner().counters().is_empty() && !thresholds.iter().any(Threshold::is_about_checks) {
        thresholds.push(Threshold::parse(DEFAULT_CHECKS, None).expect("a valid threshold"));
    }
    Ok(thresholds)
}

/// The threshold a scenario run gets when it sets none on its checks.
pub const DEFAULT_CHECKS: &str = "checks_failed==0";
