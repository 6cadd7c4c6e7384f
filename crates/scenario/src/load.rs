//! The `[load]` section: how many users (or iterations per second), for how
//! long, with what think time and pacing. Precedence is defaults < file <
//! environment (`YACE_*`); the command line overrides the result.

use crate::diag::{Pos, Sink};
use crate::node::{Kind, Node};
use crate::read::{self, Fields};
use crate::think::{parse_duration, parse_think, show, think_text};
use plan::Think;
use std::collections::BTreeMap;
use std::time::Duration;

/// A stretch over which the number of users (or the rate) moves linearly
/// from `from` to `to` (equal for a hold).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage {
    pub duration: Duration,
    pub from: f64,
    pub to: f64,
}

impl From<Stage> for plan::UserStage {
    fn from(s: Stage) -> Self {
        plan::UserStage {
            duration: s.duration,
            from: s.from,
            to: s.to,
        }
    }
}

impl From<Stage> for plan::RateStage {
    fn from(s: Stage) -> Self {
        plan::RateStage {
            duration: s.duration,
            from: s.from,
            to: s.to,
        }
    }
}

/// `[load]` keys replaced from outside the file (the command line); see
/// [`LoadSpec::with`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Overrides {
    pub users: Option<u64>,
    /// The open model instead of the file's load: visitors arriving at this
    /// many per second, each walking one journey (ramps as for users).
    pub rate: Option<f64>,
    pub ramp_up: Option<Duration>,
    pub ramp_down: Option<Duration>,
    /// The whole run, ramps included.
    pub length: Option<Duration>,
    pub pacing: Option<Duration>,
}

/// Where a resolved `[load]` value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Default,
    File,
    Env,
}

/// The `[load]` section, resolved. Exactly one of `users` (closed model:
/// each user runs its journey, waiting for every response) and `rate` (open
/// model: iterations start on a timetable, `rate` per second) is non-empty.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSpec {
    /// Active users over time.
    pub users: Vec<Stage>,
    /// Iteration starts per second over time (open model).
    pub rate: Vec<Stage>,
    /// Open model: most users running an iteration at once.
    pub max_users: Option<u64>,
    /// Closed model: an iteration starts at most this often per user.
    pub pacing: Option<Duration>,
    /// Think time after each step, unless the step sets its own.
    pub think: Think,
    /// Worker threads; `None` leaves it to the engine (one per CPU).
    pub threads: Option<usize>,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Each user keeps a cookie jar.
    pub cookies: bool,
    /// Mixed with each user's index to seed its random choices.
    pub seed: u64,
    /// Run-wide thresholds, unparsed (`"p99<200ms"`).
    pub thresholds: Vec<String>,
    /// Where each key's value came from.
    pub sources: BTreeMap<&'static str, Source>,
    /// `(ramp_up, ramp_down)` when the stages were built from
    /// `ramp_up`/`hold`/`ramp_down` (not given as explicit stages), so a
    /// whole-run length from the command line can replace the hold.
    pub ramps: Option<(Duration, Duration)>,
}

impl LoadSpec {
    /// Length of the run: the sum of its stages.
    pub fn length(&self) -> Duration {
        self.users
            .iter()
            .chain(&self.rate)
            .map(|s| s.duration)
            .sum()
    }

    /// The same load with some of its keys replaced, as command-line flags
    /// do (they win over the file and the environment, key by key, as the
    /// environment wins over the file). `length` is the whole run (`-d`):
    /// the hold becomes what the ramps leave. Explicit stages carry their
    /// own lengths and levels, and a length that would cut a ramp is never
    /// applied silently: both are errors, worded for the flag.
    pub fn with(&self, o: &Overrides) -> Result<LoadSpec, String> {
        let mut out = self.clone();
        if let Some(p) = o.pacing {
            out.pacing = Some(p).filter(|p| !p.is_zero());
        }
        let shape_given =
            o.users.is_some() || o.rate.is_some() || o.ramp_up.is_some() || o.ramp_down.is_some();
        if !shape_given && o.length.is_none() {
            return Ok(out);
        }
        let Some((up0, down0)) = self.ramps else {
            return Err(format!(
                "the scenario's stages set its users and length ({}); edit the stages, or \
                 drop the flags that would replace them",
                show(self.length())
            ));
        };
        let up = o.ramp_up.unwrap_or(up0);
        let down = o.ramp_down.unwrap_or(down0);
        let hold = match o.length {
            Some(length) => length
                .checked_sub(up + down)
                .filter(|h| !h.is_zero())
                .ok_or_else(|| {
                    format!(
                        "{} is not longer than the scenario's ramp_up ({}) plus ramp_down ({}); \
                     -d is the whole run, ramps included: give a longer -d, or shorten the \
                     ramps with --ramp-up/--ramp-down (--ramp-up 0s starts every user at \
                     once)",
                        show(length),
                        show(up),
                        show(down)
                    )
                })?,
            None => self.length().saturating_sub(up0 + down0),
        };
        // A rate or a number of users from outside replaces the file's
        // shape, whichever model the file had.
        if let Some(r) = o.rate {
            out.users.clear();
            out.rate = ramp(up, hold, down, r);
        } else if let Some(u) = o.users {
            out.rate.clear();
            out.users = ramp(up, hold, down, u as f64);
        } else {
            for st in [&mut out.users, &mut out.rate] {
                if st.is_empty() {
                    continue;
                }
                let peak = st.iter().map(|s| s.from.max(s.to)).fold(0.0, f64::max);
                *st = ramp(up, hold, down, peak);
            }
        }
        out.ramps = Some((up, down));
        Ok(out)
    }

    pub fn is_open(&self) -> bool {
        !self.rate.is_empty()
    }

    pub(crate) fn to_json(&self) -> serde_json::Value {
        let stages = |v: &[Stage]| -> Vec<serde_json::Value> {
            v.iter()
                .map(|s| serde_json::json!({"duration": show(s.duration), "from": s.from, "to": s.to}))
                .collect()
        };
        let sources: BTreeMap<&str, &str> = self
            .sources
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Source::Default => "default",
                    Source::File => "file",
                    Source::Env => "env",
                };
                (*k, v)
            })
            .collect();
        serde_json::json!({
            "model": if self.is_open() { "open" } else { "users" },
            "users": stages(&self.users),
            "rate": stages(&self.rate),
            "max_users": self.max_users,
            "pacing": self.pacing.map(show),
            "think": think_text(&self.think),
            "threads": self.threads,
            "timeout": show(self.timeout),
            "cookies": self.cookies,
            "seed": self.seed,
            "thresholds": self.thresholds,
            "length": show(self.length()),
            "sources": sources,
        })
    }
}

/// `duration` is read only to say it is `hold` (see [`read_file`]).
/// Up from 0 to `level` over `up`, held for `hold`, down to 0 over `down`;
/// a zero-length stretch is left out.
fn ramp(up: Duration, hold: Duration, down: Duration, level: f64) -> Vec<Stage> {
    [(up, 0.0, level), (hold, level, level), (down, level, 0.0)]
        .into_iter()
        .filter(|(d, _, _)| !d.is_zero())
        .map(|(duration, from, to)| Stage { duration, from, to })
        .collect()
}

/// `duration` is read only to say it is `hold` (see [`read_file`]).
pub(crate) const KEYS: [&str; 16] = [
    "users",
    "rate",
    "stages",
    "rate_stages",
    "ramp_up",
    "hold",
    "duration",
    "ramp_down",
    "max_users",
    "pacing",
    "think",
    "threads",
    "timeout",
    "cookies",
    "seed",
    "thresholds",
];

/// The environment variables that override `[load]`, and their keys.
pub const ENV: [(&str, &str); 13] = [
    ("YACE_USERS", "users"),
    ("YACE_RATE", "rate"),
    ("YACE_RAMP_UP", "ramp_up"),
    ("YACE_HOLD", "hold"),
    // Not a key: named only to say it is YACE_HOLD.
    ("YACE_DURATION", "duration"),
    ("YACE_RAMP_DOWN", "ramp_down"),
    ("YACE_MAX_USERS", "max_users"),
    ("YACE_PACING", "pacing"),
    ("YACE_THINK", "think"),
    ("YACE_THREADS", "threads"),
    ("YACE_TIMEOUT", "timeout"),
    ("YACE_COOKIES", "cookies"),
    ("YACE_SEED", "seed"),
];

/// Where a raw value was written: a place in the file, or a variable.
#[derive(Debug, Clone, Copy, PartialEq)]
struct At {
    pos: Pos,
    env: Option<&'static str>,
}

type Slot<T> = Option<(At, T)>;

#[derive(Debug, Default)]
struct Raw {
    users: Slot<u64>,
    rate: Slot<f64>,
    stages: Slot<Vec<Stage>>,
    rate_stages: Slot<Vec<Stage>>,
    ramp_up: Slot<Duration>,
    hold: Slot<Duration>,
    ramp_down: Slot<Duration>,
    max_users: Slot<u64>,
    pacing: Slot<Duration>,
    think: Slot<Think>,
    threads: Slot<u64>,
    timeout: Slot<Duration>,
    cookies: Slot<bool>,
    seed: Slot<u64>,
}

fn report(s: &mut Sink, at: At, message: String, hint: Option<String>) {
    match at.env {
        Some(var) => s.push_in(&format!("${var}"), Pos::default(), message, hint),
        None => s.push(at.pos, message, hint),
    }
}

/// Reads `[load]` (when present), applies the environment and resolves.
pub(crate) fn resolve(
    s: &mut Sink,
    node: Option<&Node>,
    env: &BTreeMap<String, String>,
) -> Option<LoadSpec> {
    let errors_before = s.list.len();
    let mut raw = Raw::default();
    let mut thresholds = Vec::new();
    let mut sources = BTreeMap::new();
    if let Some(node) = node {
        if let Some(f) = read::table(s, node, "[load]", &KEYS) {
            read_file(s, &f, &mut raw, &mut thresholds);
            for e in f.entries() {
                if let Some(k) = KEYS.iter().find(|k| **k == e.key) {
                    sources.insert(*k, Source::File);
                }
            }
        }
    }
    let env_model = apply_env(s, env, &mut raw, &mut sources);
    check_conflicts(s, &raw, env_model);
    if s.list.len() > errors_before {
        return None;
    }
    let spec = finish(s, raw, thresholds, sources);
    (s.list.len() == errors_before).then_some(spec).flatten()
}

fn read_file(s: &mut Sink, f: &Fields<'_>, raw: &mut Raw, thresholds: &mut Vec<String>) {
    let at = |n: &Node| At {
        pos: n.pos,
        env: None,
    };
    let key = |k: &str| format!("`{k}`");
    if let Some(n) = f.get("users") {
        raw.users = read::uint(s, n, &key("users"), 1).map(|v| (at(n), v));
    }
    if let Some(n) = f.get("rate") {
        raw.rate = read::positive(s, n, &key("rate")).map(|v| (at(n), v));
    }
    if let Some(n) = f.get("stages") {
        raw.stages = stages(s, n, "stages", "users").map(|v| (at(n), v));
    }
    if let Some(n) = f.get("rate_stages") {
        raw.rate_stages = stages(s, n, "rate_stages", "rate").map(|v| (at(n), v));
    }
    if let Some(n) = f.get("duration") {
        s.hint(
            n.pos,
            "`duration` in [load] is called `hold`: the time at full strength after ramp_up",
            DURATION_HINT,
        );
    }
    for (k, slot) in [
        ("ramp_up", &mut raw.ramp_up),
        ("hold", &mut raw.hold),
        ("ramp_down", &mut raw.ramp_down),
        ("timeout", &mut raw.timeout),
    ] {
        if let Some(n) = f.get(k) {
            *slot = read::duration(s, n, &key(k)).map(|v| (at(n), v));
        }
    }
    if let Some(n) = f.get("pacing") {
        raw.pacing = read::duration(s, n, &key("pacing")).map(|v| (at(n), v));
    }
    if let Some(n) = f.get("max_users") {
        raw.max_users = read::uint(s, n, &key("max_users"), 1).map(|v| (at(n), v));
    }
    if let Some(n) = f.get("threads") {
        raw.threads = read::uint(s, n, &key("threads"), 1).map(|v| (at(n), v));
    }
    if let Some(n) = f.get("seed") {
        raw.seed = read::uint(s, n, &key("seed"), 0).map(|v| (at(n), v));
    }
    if let Some(n) = f.get("cookies") {
        raw.cookies = read::boolean(s, n, &key("cookies")).map(|v| (at(n), v));
    }
    if let Some(n) = f.get("think") {
        raw.think = think(s, n, "`think`").map(|v| (at(n), v));
    }
    if let Some(n) = f.get("thresholds") {
        *thresholds = read::strings(s, n, "`thresholds`");
    }
}

/// Why `duration` is not a `[load]` key: one meaning per word.
const DURATION_HINT: &str = "write hold = \"100s\"; a duration is always a whole run, as -d is \
                             on the command line (ramp_up + hold + ramp_down)";

/// A think-time spec node.
pub(crate) fn think(s: &mut Sink, n: &Node, what: &str) -> Option<Think> {
    let text = match &n.kind {
        Kind::Str(t) => t.text.clone(),
        Kind::Int(0) => "0".to_owned(),
        _ => {
            read::wrong_type(s, n, what, "a string such as \"2s\" or \"uniform(1s, 3s)\"");
            return None;
        }
    };
    match parse_think(&text) {
        Ok(t) => Some(t),
        Err(e) => {
            s.hint(
                n.pos,
                format!("{what}: {e}"),
                "write \"2s\", \"uniform(1s, 3s)\", \"exponential(2s)\" or \"none\"",
            );
            None
        }
    }
}

/// `[ { duration = "50s", users = "0-5000" }, { duration = "100s", users = 5000 } ]`
fn stages(s: &mut Sink, n: &Node, key: &str, level: &str) -> Option<Vec<Stage>> {
    let items = read::list(s, n, &format!("`{key}`"))?;
    if items.is_empty() {
        s.err(n.pos, format!("`{key}` is empty"));
        return None;
    }
    let what = format!("a stage of `{key}`");
    let mut out = Vec::new();
    let mut ok = true;
    for item in items {
        let Some(f) = read::table(s, item, &what, &["duration", level]) else {
            ok = false;
            continue;
        };
        let d = f.require(s, "duration", &what).and_then(|d| {
            let v = read::duration(s, d, "`duration`")?;
            if v.is_zero() {
                s.err(d.pos, "a stage's `duration` must be above 0");
                return None;
            }
            Some(v)
        });
        let l = f
            .require(s, level, &what)
            .and_then(|l| range(s, l, level, level == "users"));
        match (d, l) {
            (Some(duration), Some((from, to))) => out.push(Stage { duration, from, to }),
            _ => ok = false,
        }
    }
    ok.then_some(out)
}

/// `5000`, or `"0-5000"` for a linear change.
fn range(s: &mut Sink, n: &Node, key: &str, whole: bool) -> Option<(f64, f64)> {
    let what = if whole { "a whole number" } else { "a number" };
    let hint = format!("write {key} = 100 to hold, or {key} = \"0-100\" to ramp");
    let bad = |s: &mut Sink| {
        s.hint(
            n.pos,
            format!(
                "`{key}` must be {what} or a range \"FROM-TO\", not {}",
                show_node(n)
            ),
            hint.clone(),
        );
        None
    };
    let num = |t: &str| -> Option<f64> {
        let t = t.trim();
        if whole {
            t.parse::<u64>().ok().map(|v| v as f64)
        } else {
            t.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0)
        }
    };
    match &n.kind {
        Kind::Int(v) if *v >= 0 => Some((*v as f64, *v as f64)),
        Kind::Float(v) if !whole && *v >= 0.0 && v.is_finite() => Some((*v, *v)),
        Kind::Str(t) => match t.text.split_once('-').map(|(a, b)| (num(a), num(b))) {
            Some((Some(a), Some(b))) => Some((a, b)),
            _ => match num(&t.text) {
                Some(v) => Some((v, v)),
                None => bad(s),
            },
        },
        _ => bad(s),
    }
}

fn show_node(n: &Node) -> String {
    match &n.kind {
        Kind::Str(t) => format!("'{}'", t.text),
        Kind::Int(v) => v.to_string(),
        Kind::Float(v) => v.to_string(),
        _ => n.type_name().to_owned(),
    }
}

/// Applies `YACE_*`; true when the environment chose the load model.
fn apply_env(
    s: &mut Sink,
    env: &BTreeMap<String, String>,
    raw: &mut Raw,
    sources: &mut BTreeMap<&'static str, Source>,
) -> bool {
    let mut model = false;
    for (var, key) in ENV {
        let Some(value) = env.get(var) else { continue };
        let at = At {
            pos: Pos::default(),
            env: Some(var),
        };
        let v = value.trim();
        let count = |min: u64| -> Result<u64, String> {
            let n = plan::parse_count(var, v).map_err(|e| e.problem)?;
            if n < min {
                return Err(format!("must be at least {min}"));
            }
            Ok(n)
        };
        let dur = || parse_duration(v);
        let r: Result<(), String> = match key {
            "users" => count(1).map(|n| raw.users = Some((at, n))),
            "rate" => match v.parse::<f64>() {
                Ok(r) if r > 0.0 && r.is_finite() => {
                    raw.rate = Some((at, r));
                    Ok(())
                }
                _ => Err(format!("'{v}' is not a rate above 0")),
            },
            "ramp_up" => dur().map(|d| raw.ramp_up = Some((at, d))),
            "hold" => dur().map(|d| raw.hold = Some((at, d))),
            "duration" => Err(format!(
                "YACE_DURATION is YACE_HOLD, the time at full strength after the ramp-up ({})",
                DURATION_HINT.replace("hold = \"100s\"", "YACE_HOLD=100s")
            )),
            "ramp_down" => dur().map(|d| raw.ramp_down = Some((at, d))),
            "timeout" => dur().map(|d| raw.timeout = Some((at, d))),
            "pacing" => dur().map(|d| raw.pacing = Some((at, d))),
            "max_users" => count(1).map(|n| raw.max_users = Some((at, n))),
            "threads" => count(1).map(|n| raw.threads = Some((at, n))),
            "seed" => v
                .parse::<u64>()
                .map(|n| raw.seed = Some((at, n)))
                .map_err(|_| format!("'{v}' is not a whole number")),
            "think" => parse_think(v).map(|t| raw.think = Some((at, t))),
            "cookies" => match v.to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => Ok(true),
                "0" | "false" | "no" | "off" => Ok(false),
                _ => Err(format!("'{v}' is not true or false")),
            }
            .map(|c| raw.cookies = Some((at, c))),
            _ => Ok(()),
        };
        match r {
            Ok(()) => {
                sources.insert(key, Source::Env);
                if key == "users" || key == "rate" {
                    model = true;
                }
            }
            Err(e) => report(s, at, e, None),
        }
    }
    if model {
        if let (Some((a, _)), Some(_)) = (&raw.rate, &raw.users) {
            if a.env.is_some() && raw.users.as_ref().is_some_and(|(u, _)| u.env.is_some()) {
                report(
                    s,
                    *a,
                    "YACE_RATE and YACE_USERS both set the load".into(),
                    Some("unset one: users is a closed model, rate an open one".into()),
                );
            }
        }
        // The environment's model replaces the file's.
        let from_env = |a: &At| a.env.is_some();
        if !raw.users.as_ref().is_some_and(|(a, _)| from_env(a)) {
            raw.users = None;
            sources.remove("users");
        }
        if !raw.rate.as_ref().is_some_and(|(a, _)| from_env(a)) {
            raw.rate = None;
            sources.remove("rate");
        }
        raw.stages = None;
        raw.rate_stages = None;
        sources.remove("stages");
        sources.remove("rate_stages");
    }
    model
}

fn check_conflicts(s: &mut Sink, raw: &Raw, env_model: bool) {
    let mut models: Vec<(&str, At)> = Vec::new();
    if let Some((a, _)) = &raw.users {
        models.push(("users", *a));
    }
    if let Some((a, _)) = &raw.rate {
        models.push(("rate", *a));
    }
    if let Some((a, _)) = &raw.stages {
        models.push(("stages", *a));
    }
    if let Some((a, _)) = &raw.rate_stages {
        models.push(("rate_stages", *a));
    }
    models.sort_by_key(|(_, a)| a.pos);
    if !env_model {
        if let Some(((first, _), rest)) = models.split_first() {
            for (k, a) in rest {
                report(
                    s,
                    *a,
                    format!("`{k}` and `{first}` both set the load; keep one"),
                    Some(
                        "users/stages: a closed model, each user waits for its responses; \
                         rate/rate_stages: an open one, iterations start on a timetable"
                            .into(),
                    ),
                );
            }
        }
    }
    let explicit = models
        .iter()
        .find(|(k, _)| *k == "stages" || *k == "rate_stages");
    if let Some((stages_key, _)) = explicit {
        for (k, slot) in [
            ("ramp_up", &raw.ramp_up),
            ("hold", &raw.hold),
            ("ramp_down", &raw.ramp_down),
        ] {
            if let Some((a, _)) = slot {
                report(
                    s,
                    *a,
                    format!("`{k}` does not apply with `{stages_key}`"),
                    Some("each stage carries its own duration".into()),
                );
            }
        }
    }
    if let Some((a, d)) = &raw.timeout {
        if d.is_zero() {
            report(s, *a, "`timeout` must be above 0".into(), None);
        }
    }
    let open = raw.rate.is_some() || raw.rate_stages.is_some();
    if let (Some((a, _)), false) = (&raw.max_users, open) {
        report(
            s,
            *a,
            "`max_users` applies to the open model (`rate`)".into(),
            Some("with `users`, the number of users is the cap".into()),
        );
    }
    if let (Some((a, _)), true) = (&raw.pacing, open) {
        report(
            s,
            *a,
            "`pacing` applies to `users`; with `rate`, iterations start on the rate's timetable"
                .into(),
            None,
        );
    }
}

fn finish(
    s: &mut Sink,
    raw: Raw,
    thresholds: Vec<String>,
    mut sources: BTreeMap<&'static str, Source>,
) -> Option<LoadSpec> {
    // Where the load's level was written, for a problem with the level.
    let level_at = [
        raw.users.as_ref().map(|(a, _)| *a),
        raw.rate.as_ref().map(|(a, _)| *a),
        raw.stages.as_ref().map(|(a, _)| *a),
        raw.rate_stages.as_ref().map(|(a, _)| *a),
    ]
    .into_iter()
    .flatten()
    .next();
    let mut default = |k: &'static str| {
        sources.entry(k).or_insert(Source::Default);
    };
    let open = raw.rate.is_some() || raw.rate_stages.is_some();
    let mut ramps = None;
    let (users, rate) = if let Some((_, st)) = raw.stages {
        (st, Vec::new())
    } else if let Some((_, st)) = raw.rate_stages {
        (Vec::new(), st)
    } else {
        let level = match (&raw.users, &raw.rate) {
            (_, Some((_, r))) => *r,
            (Some((_, u)), _) => *u as f64,
            (None, None) => {
                default("users");
                1.0
            }
        };
        let get = |slot: &Slot<Duration>| slot.as_ref().map(|(_, d)| *d);
        let up = get(&raw.ramp_up).unwrap_or_default();
        let hold = get(&raw.hold).unwrap_or(plan::DEFAULT_DURATION);
        let down = get(&raw.ramp_down).unwrap_or_default();
        ramps = Some((up, down));
        for (k, slot) in [
            ("ramp_up", &raw.ramp_up),
            ("hold", &raw.hold),
            ("ramp_down", &raw.ramp_down),
        ] {
            if slot.is_none() {
                default(k);
            }
        }
        let st = ramp(up, hold, down, level);
        if st.is_empty() {
            let at = raw.hold.as_ref().map(|(a, _)| *a).unwrap_or(At {
                pos: Pos::default(),
                env: None,
            });
            report(
                s,
                at,
                "the load has no length: ramp_up, hold and ramp_down are all 0".into(),
                None,
            );
            return None;
        }
        if open {
            (Vec::new(), st)
        } else {
            (st, Vec::new())
        }
    };
    let peak = users
        .iter()
        .chain(&rate)
        .map(|s| s.from.max(s.to))
        .fold(0.0, f64::max);
    if peak <= 0.0 {
        report(
            s,
            level_at.unwrap_or(At {
                pos: Pos::default(),
                env: None,
            }),
            "the load never has a user or an iteration".into(),
            None,
        );
        return None;
    }
    for k in [
        "max_users",
        "pacing",
        "think",
        "threads",
        "timeout",
        "cookies",
        "seed",
    ] {
        default(k);
    }
    let v = |slot: Option<(At, u64)>| slot.map(|(_, v)| v);
    Some(LoadSpec {
        users,
        rate,
        max_users: v(raw.max_users),
        pacing: raw.pacing.map(|(_, d)| d).filter(|d| !d.is_zero()),
        think: raw.think.map(|(_, t)| t).unwrap_or_default(),
        threads: v(raw.threads).map(|t| t as usize),
        timeout: raw
            .timeout
            .map(|(_, d)| d)
            .unwrap_or(plan::DEFAULT_REQUEST_TIMEOUT),
        cookies: raw.cookies.map(|(_, c)| c).unwrap_or(true),
        seed: v(raw.seed).unwrap_or(0),
        thresholds,
        sources,
        ramps,
    })
}
