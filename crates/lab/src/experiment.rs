//! An experiment file: targets × a sweep × repetitions, read with the same
//! diagnostics as scenario files (`file:line:col`, every problem at once).
//!
//! ```toml
//! name = "nginx vs apache, concurrency"
//! repetitions = 6
//! duration = "10s"
//! warmup = "2s"
//! cool_down = "5s"
//!
//! [run]                 # any `yace run` option, for every run
//! threads = 1
//!
//! [[target]]
//! name = "nginx"
//! url = "http://127.0.0.1:8080/"
//! monitor = ["system", "nginx:http://127.0.0.1:8080/nginx_status"]
//!
//! [[target]]
//! name = "apache"
//! url = "http://127.0.0.1:8081/"
//!
//! [sweep]
//! connections = [1, 10, 100, 200]
//!
//! [stop]
//! errors = "10%"
//! ```

use plan::Diagnostics;
use scenario::doc::{self, Fields, Kind, Node, Pos, Sink};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// One experiment, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    pub name: String,
    /// The file it was read from, as given.
    pub file: String,
    /// Seeds the randomized order; the same seed gives the same order.
    pub seed: u64,
    pub repetitions: u32,
    pub length: Length,
    /// A run before each recorded one, not recorded (the server warms up).
    pub warmup: Option<Duration>,
    /// Rest between runs.
    pub cool_down: Duration,
    /// Where the target is monitored: after `cool_down`, wait until its CPU,
    /// load and TIME_WAIT sockets are back near their baseline, at most
    /// this long.
    pub cool_down_max: Duration,
    pub order: Order,
    /// `yace run` options for every run, as `(key, flag words)`.
    pub run: Vec<Opt>,
    pub targets: Vec<Target>,
    pub sweep: Sweep,
    pub stop: Stop,
    /// The target the others are compared with (default: the first).
    pub baseline: usize,
    /// The swept values the baseline fixes (`baseline = "children=5"` or
    /// `{ children = 5 }`): every other level of them is compared with it,
    /// at each value of the rest. Empty: targets are compared.
    pub baseline_point: Point,
    /// Whether the baseline fixes the target too (a target's name, or
    /// `target = "…"` beside the values); else each target is compared
    /// with its own baseline level.
    pub baseline_by_target: bool,
    /// The smallest change worth calling a difference (default 2%).
    pub practical: f64,
    /// `[find_max]`: each run is a `yace find-max` search under these
    /// options (`slo`, `start_rate`, `trial`, …) instead of a fixed load;
    /// its answer, the highest rate that held the SLOs, is the figure.
    pub find_max: Option<Vec<Opt>>,
}

/// How long each run lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    Duration(Duration),
    Requests(u64),
}

/// The order runs are done in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Randomized complete blocks: each repetition visits every (target,
    /// point) once, in a seeded random order, so drift over time does not
    /// masquerade as a difference.
    Randomized,
    /// Each block in the file's order (as the seeds do it by hand; confounds
    /// the level with time).
    Sequential,
}

/// A `yace run` option: its key as written, and the words it adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    pub key: String,
    pub words: Vec<String>,
    pub pos: Pos,
    /// Where its value is (a problem with the value is said there).
    pub value_pos: Pos,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub name: String,
    /// Empty when a scenario's own base is the target.
    pub url: String,
    /// A scenario file (`yace run -f`): its journeys instead of one request.
    pub scenario: Option<String>,
    pub monitors: Vec<String>,
    /// Shell commands run before and after each of its runs.
    pub before: Option<String>,
    pub after: Option<String>,
    pub run: Vec<Opt>,
    /// Where it is in the file.
    pub pos: Pos,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Every combination of the parameters' values.
    Grid,
    /// Each parameter varied alone, the others at their first value.
    OneAtATime,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub mode: Mode,
    pub params: Vec<Param>,
}

/// A swept parameter: a `yace run` option, or a variable for the hooks
/// (`var.NAME`: `$YACE_VAR_NAME` and `{{NAME}}` in the URL and hooks).
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub var: bool,
    pub values: Vec<String>,
    pub pos: Pos,
}

/// Skip the rest of a target's sweep once a point fails badly.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Stop {
    /// Error share (0.1 = 10%) above which a point fails badly.
    pub errors: Option<f64>,
    /// Threshold expressions (`p99<1s`) that a point must hold.
    pub slo: Vec<String>,
}

/// One point of the sweep: a value per parameter, in the sweep's order.
pub type Point = Vec<(String, String)>;

/// What the CLI checks for the lab, with `yace run`'s (and `yace
/// find-max`'s) own parsers.
#[derive(Debug, Clone, Copy)]
pub enum Check<'a> {
    /// One option's words, alone: a known flag with a value of its type
    /// (`find-max` first for `[find_max]`'s).
    Option(&'a [String]),
    /// One run's words as the lab will run it: the URL or `-f FILE`, every
    /// option, the length. Options that only make sense together (a ramp
    /// beside a scenario's users) are judged here, together.
    Run(&'a [String]),
    /// One search of a find-max experiment: the run's words and the search's.
    Search(&'a [String], &'a [String]),
}

/// Checks options and runs; an error is one problem a line.
pub type Validate<'a> = &'a dyn Fn(Check) -> Result<(), String>;

const TOP: &[&str] = &[
    "name",
    "seed",
    "repetitions",
    "duration",
    "requests",
    "warmup",
    "cool_down",
    "cool_down_max",
    "order",
    "run",
    "target",
    "sweep",
    "stop",
    "compare",
    "find_max",
];

/// Options the lab sets itself, refused in `[run]` and `[sweep]`.
const OWN: &[&str] = &[
    "url", "duration", "requests", "json", "html", "junit", "file", "dry_run", "monitor",
];

/// Reads an experiment file (TOML, or YAML by its extension). `validate`
/// checks `yace run` options (the CLI passes its own parser).
pub fn load(path: &Path, validate: Validate) -> Result<Experiment, Diagnostics> {
    let origin = path.display().to_string();
    let fail = |problem: String, hint: &str| {
        Diagnostics(vec![plan::Diagnostic {
            source: plan::Source::File {
                file: origin.clone(),
                line: 0,
                column: 0,
            },
            problem,
            hint: Some(hint.into()),
        }])
    };
    let format = doc::Format::from_path(path).ok_or_else(|| {
        fail(
            "an experiment file must end in .toml, .yaml or .yml".into(),
            "rename it, so its format is known",
        )
    })?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| fail(format!("cannot read: {e}"), "check the path"))?;
    parse(&text, format, &origin, validate)
}

/// Parses experiment text; `origin` names it in diagnostics.
pub fn parse(
    text: &str,
    format: doc::Format,
    origin: &str,
    validate: Validate,
) -> Result<Experiment, Diagnostics> {
    let root = doc::parse(text, format, origin)?;
    let mut s = Sink::new(origin);
    let e = build(&root, origin, &mut s, validate);
    if let Some(e) = &e {
        check_runs(e, &mut s, validate);
    }
    match e {
        Some(e) if s.is_empty() => Ok(e),
        _ => {
            if s.is_empty() {
                s.err(Pos::new(1, 1), "the experiment is not valid");
            }
            Err(s.finish())
        }
    }
}

fn build(root: &Node, origin: &str, s: &mut Sink, validate: Validate) -> Option<Experiment> {
    let top = doc::table(s, root, "the experiment", TOP)?;
    let name = top
        .get("name")
        .and_then(|n| doc::string(s, n, "name"))
        .map(str::to_owned)
        .unwrap_or_else(|| {
            Path::new(origin)
                .file_stem()
                .map_or("experiment".into(), |f| f.to_string_lossy().into_owned())
        });
    let seed = match top.get("seed") {
        Some(n) => doc::uint(s, n, "seed", 0).unwrap_or(0),
        None => 0x0005_eed0_f1ab,
    };
    let repetitions = match top.get("repetitions") {
        Some(n) => doc::uint(s, n, "repetitions", 1).unwrap_or(6) as u32,
        None => 6,
    };
    let length = match (top.get("duration"), top.get("requests")) {
        (Some(_), Some(_)) => {
            s.hint(
                top.key_pos("requests").unwrap_or(top.pos),
                "both `duration` and `requests` are set",
                "give each run one length: a duration, or a number of requests",
            );
            None
        }
        (Some(d), None) => doc::duration(s, d, "duration").map(Length::Duration),
        (None, Some(n)) => doc::uint(s, n, "requests", 1).map(Length::Requests),
        (None, None) => Some(Length::Duration(Duration::from_secs(10))),
    };
    let warmup = top
        .get("warmup")
        .and_then(|n| doc::duration(s, n, "warmup"))
        .filter(|d| !d.is_zero());
    let cool_down = top
        .get("cool_down")
        .and_then(|n| doc::duration(s, n, "cool_down"))
        .unwrap_or(Duration::ZERO);
    let cool_down_max = top
        .get("cool_down_max")
        .and_then(|n| doc::duration(s, n, "cool_down_max"))
        .unwrap_or(Duration::from_secs(120));
    let order = match top.get("order").and_then(|n| doc::string(s, n, "order")) {
        None | Some("randomized") => Order::Randomized,
        Some("sequential") => Order::Sequential,
        Some(other) => {
            s.hint(
                top.get("order").map_or(top.pos, |n| n.pos),
                format!("unknown order `{other}`"),
                "use `randomized` (the default: drift cannot pass for a difference) or `sequential`",
            );
            Order::Randomized
        }
    };
    let run = top
        .get("run")
        .map(|n| options(s, n, "[run]", validate))
        .unwrap_or_default();
    let targets = targets(s, &top, origin, validate);
    let sweep = top
        .get("sweep")
        .map(|n| sweep(s, n, validate))
        .unwrap_or(Sweep {
            mode: Mode::Grid,
            params: Vec::new(),
        });
    let stop = top.get("stop").map(|n| stop(s, n)).unwrap_or_default();
    let (baseline, practical) = compare(s, top.get("compare"), &targets, &sweep);
    let find_max = top.get("find_max").map(|n| find_max(s, n, validate));
    Some(Experiment {
        name,
        file: origin.to_string(),
        seed,
        repetitions,
        length: length?,
        warmup,
        cool_down,
        cool_down_max,
        order,
        run,
        targets,
        sweep,
        stop,
        baseline: baseline.target.unwrap_or(0),
        baseline_by_target: baseline.target.is_some() || baseline.point.is_empty(),
        baseline_point: baseline.point,
        practical,
        find_max,
    })
}

/// `[find_max]`: `yace find-max`'s own options; `slo` is required.
fn find_max(s: &mut Sink, node: &Node, validate: Validate) -> Vec<Opt> {
    const KEYS: &[&str] = &[
        "slo",
        "start_rate",
        "max_rate",
        "min_rate",
        "trial",
        "long_trial",
        "confirm",
        "cool_down",
        "max_time",
    ];
    let Some(f) = doc::table(s, node, "[find_max]", KEYS) else {
        return Vec::new();
    };
    if !f.has("slo") {
        s.hint(
            f.pos,
            "[find_max] has no `slo`",
            "give the SLOs every trial is judged by, e.g. slo = [\"p99<100ms\", \"errors<0.1%\"]",
        );
    }
    let mut out = Vec::new();
    for e in f.entries() {
        let Some(words) = option_words(s, &e.key, &e.value) else {
            continue;
        };
        let mut check = vec!["find-max".to_string()];
        check.extend(words.iter().cloned());
        if let Err(msg) = validate(Check::Option(&check)) {
            s.err(e.value.pos, format!("{}: {msg}", e.key));
            continue;
        }
        out.push(Opt {
            key: e.key.clone(),
            words,
            pos: e.key_pos,
            value_pos: e.value.pos,
        });
    }
    out
}

fn targets(s: &mut Sink, top: &Fields, origin: &str, validate: Validate) -> Vec<Target> {
    let Some(node) = top.get("target") else {
        s.hint(
            top.pos,
            "the experiment has no target",
            "add a [[target]] with a name and a url",
        );
        return Vec::new();
    };
    let Some(list) = doc::list(s, node, "target") else {
        return Vec::new();
    };
    let mut out: Vec<Target> = Vec::new();
    for (i, t) in list.iter().enumerate() {
        let what = format!("target {}", i + 1);
        let Some(f) = doc::table(
            s,
            t,
            &what,
            &[
                "name", "url", "scenario", "monitor", "before", "after", "run",
            ],
        ) else {
            continue;
        };
        let name = f
            .get("name")
            .and_then(|n| doc::string(s, n, "name"))
            .map_or_else(|| format!("target{}", i + 1), str::to_owned);
        if out.iter().any(|o| o.name == name) {
            s.err(
                f.key_pos("name").unwrap_or(f.pos),
                format!("two targets are named `{name}`: each needs its own name"),
            );
        }
        // A scenario, read relative to the experiment's file, and checked now.
        let scenario = f.get("scenario").and_then(|n| {
            let path = doc::string(s, n, "scenario")?;
            let full = Path::new(origin)
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map_or_else(|| Path::new(path).to_path_buf(), |d| d.join(path));
            let env: BTreeMap<String, String> = std::env::vars().collect();
            let base = f.get("url").and_then(|u| match &u.kind {
                Kind::Str(t) => Some(t.text.clone()),
                _ => None,
            });
            if let Err(d) = scenario::load_with_base(&full, &env, base.as_deref()) {
                s.hint(
                    n.pos,
                    format!(
                        "scenario {path}: {}",
                        d.to_string().lines().next().unwrap_or("")
                    ),
                    "run `yace run -f FILE --dry-run` on it for every problem",
                );
            }
            Some(full.display().to_string())
        });
        let url = if scenario.is_some() {
            f.get("url")
                .and_then(|n| doc::string(s, n, "url"))
                .map(str::to_owned)
                .unwrap_or_default()
        } else {
            f.require(s, "url", &what)
                .and_then(|n| doc::string(s, n, "url"))
                .map(str::to_owned)
                .unwrap_or_default()
        };
        let monitors = match f.get("monitor") {
            Some(n) => {
                let specs = match &n.kind {
                    Kind::Str(_) => doc::string(s, n, "monitor")
                        .map(|x| vec![x.to_string()])
                        .unwrap_or_default(),
                    _ => doc::strings(s, n, "monitor"),
                };
                for spec in &specs {
                    if let Err(e) = validate(Check::Option(&["--monitor".into(), spec.clone()])) {
                        s.err(n.pos, e);
                    }
                }
                specs
            }
            None => Vec::new(),
        };
        let hook = |s: &mut Sink, key: &str| {
            f.get(key)
                .and_then(|n| doc::string(s, n, key))
                .map(str::to_owned)
        };
        let before = hook(s, "before");
        let after = hook(s, "after");
        let run = f
            .get("run")
            .map(|n| options(s, n, &format!("[target.run] of {name}"), validate))
            .unwrap_or_default();
        out.push(Target {
            name,
            url,
            scenario,
            monitors,
            before,
            after,
            run,
            pos: t.pos,
        });
    }
    out
}

/// `key = value` pairs as `yace run` flags: `threads = 2` is `--threads 2`,
/// `keepalive = false` is `--no-keepalive`, a list repeats the flag.
fn options(s: &mut Sink, node: &Node, what: &str, validate: Validate) -> Vec<Opt> {
    let Some(entries) = doc::any_table(s, node, what) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries {
        if OWN.contains(&e.key.as_str()) {
            s.hint(
                e.key_pos,
                format!("`{}` is set by the lab, not in {what}", e.key),
                "give the run's length with `duration` or `requests` at the top, and targets' \
                 URLs and monitors in [[target]]",
            );
            continue;
        }
        let Some(words) = option_words(s, &e.key, &e.value) else {
            continue;
        };
        if let Err(msg) = validate(Check::Option(&words)) {
            s.err(e.value.pos, format!("{}: {msg}", e.key));
            continue;
        }
        out.push(Opt {
            key: e.key.clone(),
            words,
            pos: e.key_pos,
            value_pos: e.value.pos,
        });
    }
    out
}

fn flag(key: &str) -> String {
    format!("--{}", key.replace('_', "-"))
}

fn option_words(s: &mut Sink, key: &str, value: &Node) -> Option<Vec<String>> {
    Some(match &value.kind {
        Kind::Bool(true) => vec![flag(key)],
        Kind::Bool(false) => vec![flag(&format!("no-{key}"))],
        Kind::Seq(items) => {
            let mut w = Vec::new();
            for it in items {
                w.push(flag(key));
                w.push(doc::scalar_text(s, it, key)?);
            }
            w
        }
        _ => vec![flag(key), doc::scalar_text(s, value, key)?],
    })
}

fn sweep(s: &mut Sink, node: &Node, validate: Validate) -> Sweep {
    let mut mode = Mode::Grid;
    let mut params = Vec::new();
    let Some(entries) = doc::any_table(s, node, "[sweep]") else {
        return Sweep { mode, params };
    };
    for e in entries {
        if e.key == "mode" {
            match doc::string(s, &e.value, "mode") {
                Some("grid") => mode = Mode::Grid,
                Some("one-at-a-time") => mode = Mode::OneAtATime,
                Some(other) => s.hint(
                    e.value.pos,
                    format!("unknown sweep mode `{other}`"),
                    "use `grid` (every combination) or `one-at-a-time`",
                ),
                None => {}
            }
            continue;
        }
        let (name, var) = match e.key.strip_prefix("var.") {
            Some(v) => (v.to_string(), true),
            None => (e.key.clone(), false),
        };
        // A dotted TOML key (`var.children = […]`) arrives as a table.
        if e.key == "var" {
            if let Kind::Map(vars) = &e.value.kind {
                for v in vars {
                    if let Some(values) = values(s, &v.key, &v.value) {
                        params.push(Param {
                            name: v.key.clone(),
                            var: true,
                            values,
                            pos: v.key_pos,
                        });
                    }
                }
                continue;
            }
        }
        if !var && OWN.contains(&name.as_str()) {
            s.err(
                e.key_pos,
                format!("`{name}` cannot be swept: the lab sets it"),
            );
            continue;
        }
        let Some(vals) = values(s, &e.key, &e.value) else {
            continue;
        };
        if !var {
            for v in &vals {
                if let Err(msg) = validate(Check::Option(&[flag(&name), v.clone()])) {
                    s.err(e.value.pos, format!("{name} = {v}: {msg}"));
                }
            }
        }
        params.push(Param {
            name,
            var,
            values: vals,
            pos: e.key_pos,
        });
    }
    Sweep { mode, params }
}

/// A list of values, or `{ from, to, step }` / `{ from, to, times }` (a
/// geometric series: 1, 2, 4 … with `times = 2`).
fn values(s: &mut Sink, key: &str, node: &Node) -> Option<Vec<String>> {
    match &node.kind {
        Kind::Seq(items) => {
            let v: Vec<String> = items
                .iter()
                .filter_map(|i| doc::scalar_text(s, i, key))
                .collect();
            if v.is_empty() {
                s.err(node.pos, format!("{key}: an empty list sweeps nothing"));
                return None;
            }
            Some(v)
        }
        Kind::Map(_) => {
            let f = doc::table(s, node, key, &["from", "to", "step", "times"])?;
            let num = |s: &mut Sink, k: &str| f.get(k).and_then(|n| doc::positive(s, n, k));
            let (from, to) = (num(s, "from")?, num(s, "to")?);
            let mut out = Vec::new();
            match (num(s, "step"), num(s, "times")) {
                (Some(step), None) => {
                    let mut x = from;
                    while x <= to + 1e-9 && out.len() < 1000 {
                        out.push(fmt_num(x));
                        x += step;
                    }
                }
                (None, Some(times)) if times > 1.0 => {
                    let mut x = from;
                    while x <= to + 1e-9 && out.len() < 1000 {
                        out.push(fmt_num(x));
                        x *= times;
                    }
                }
                _ => {
                    s.hint(
                        node.pos,
                        format!("{key}: a range needs `step` (added) or `times` (> 1, multiplied)"),
                        "e.g. { from = 10, to = 100, step = 10 } or { from = 1, to = 1024, times = 2 }",
                    );
                    return None;
                }
            }
            if out.is_empty() {
                s.err(node.pos, format!("{key}: `from` is above `to`"));
                return None;
            }
            Some(out)
        }
        _ => Some(vec![doc::scalar_text(s, node, key)?]),
    }
}

fn fmt_num(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x}")
    }
}

fn stop(s: &mut Sink, node: &Node) -> Stop {
    let Some(f) = doc::table(s, node, "[stop]", &["errors", "slo"]) else {
        return Stop::default();
    };
    let errors = f.get("errors").and_then(|n| {
        let t = doc::scalar_text(s, n, "errors")?;
        match t
            .trim()
            .strip_suffix('%')
            .and_then(|p| p.trim().parse::<f64>().ok())
        {
            Some(p) if (0.0..=100.0).contains(&p) => Some(p / 100.0),
            _ => {
                s.hint(
                    n.pos,
                    format!("errors = {t:?} is not a share"),
                    "write it as a percentage, e.g. \"10%\"",
                );
                None
            }
        }
    });
    let slo = f
        .get("slo")
        .map(|n| doc::strings(s, n, "slo"))
        .unwrap_or_default();
    for expr in &slo {
        if let Err(e) = yace_stats::threshold::Threshold::parse(expr, None) {
            s.err(f.get("slo").map_or(f.pos, |n| n.pos), format!("slo: {e}"));
        }
    }
    Stop { errors, slo }
}

/// What `[compare] baseline` names: a target, swept values, or both.
#[derive(Debug, Default)]
struct Baseline {
    target: Option<usize>,
    point: Point,
}

fn compare(
    s: &mut Sink,
    node: Option<&Node>,
    targets: &[Target],
    sweep: &Sweep,
) -> (Baseline, f64) {
    let Some(node) = node else {
        return (Baseline::default(), 0.02);
    };
    let Some(f) = doc::table(s, node, "[compare]", &["baseline", "practical"]) else {
        return (Baseline::default(), 0.02);
    };
    let baseline = f
        .get("baseline")
        .map(|n| baseline(s, n, targets, sweep))
        .unwrap_or_default();
    let practical = f
        .get("practical")
        .and_then(|n| {
            let t = doc::scalar_text(s, n, "practical")?;
            t.trim()
                .strip_suffix('%')
                .and_then(|p| p.trim().parse::<f64>().ok())
                .filter(|p| (0.0..100.0).contains(p))
                .map(|p| p / 100.0)
                .or_else(|| {
                    s.hint(
                        n.pos,
                        format!("practical = {t:?} is not a share"),
                        "e.g. \"2%\"",
                    );
                    None
                })
        })
        .unwrap_or(0.02);
    (baseline, practical)
}

/// `baseline = "nginx"` (a target), `"children=5"` / `"target=nginx
/// children=5"` (space- or comma-separated), or `{ children = 5 }`: each
/// name a target or a swept parameter (`var.` optional), each value one
/// the sweep has.
fn baseline(s: &mut Sink, node: &Node, targets: &[Target], sweep: &Sweep) -> Baseline {
    let pairs: Vec<(String, String, Pos)> = match &node.kind {
        Kind::Map(entries) => entries
            .iter()
            .filter_map(|e| {
                let v = doc::scalar_text(s, &e.value, &format!("baseline.{}", e.key))?;
                Some((e.key.clone(), v, e.value.pos))
            })
            .collect(),
        _ => {
            let Some(text) = doc::string(s, node, "baseline") else {
                return Baseline::default();
            };
            if !text.contains('=') {
                vec![("target".to_string(), text.to_string(), node.pos)]
            } else {
                let mut out = Vec::new();
                for word in text.split([' ', ',']).filter(|w| !w.is_empty()) {
                    match word.split_once('=') {
                        Some((k, v)) if !k.is_empty() && !v.is_empty() => {
                            out.push((k.trim().to_string(), v.trim().to_string(), node.pos))
                        }
                        _ => s.hint(
                            node.pos,
                            format!("baseline: `{word}` is not NAME=VALUE"),
                            "e.g. baseline = \"children=5\" or baseline = { children = 5 }",
                        ),
                    }
                }
                out
            }
        }
    };
    let mut b = Baseline::default();
    for (key, value, pos) in pairs {
        if key == "target" {
            match targets.iter().position(|t| t.name == value) {
                Some(i) => b.target = Some(i),
                None => {
                    let names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
                    let params: Vec<String> = sweep.params.iter().map(|p| p.name.clone()).collect();
                    s.hint(
                        pos,
                        format!("no target named `{value}`"),
                        if params.is_empty() {
                            format!("one of: {}", names.join(", "))
                        } else {
                            format!(
                                "one of: {}; or a swept value, e.g. \"{}={}\"",
                                names.join(", "),
                                params[0],
                                sweep.params[0].values.first().cloned().unwrap_or_default()
                            )
                        },
                    );
                }
            }
            continue;
        }
        let name = key.strip_prefix("var.").unwrap_or(&key);
        let Some(p) = sweep.params.iter().find(|p| p.name == name) else {
            let params: Vec<&str> = sweep.params.iter().map(|p| p.name.as_str()).collect();
            s.hint(
                pos,
                format!("baseline: `{key}` is neither `target` nor a swept parameter"),
                if params.is_empty() {
                    "the sweep is empty: name a target".to_string()
                } else {
                    format!("one of: target, {}", params.join(", "))
                },
            );
            continue;
        };
        if !p.values.contains(&value) {
            s.hint(
                pos,
                format!("baseline: {name} = {value} is not a value of the sweep"),
                format!("one of: {}", p.values.join(", ")),
            );
            continue;
        }
        b.point.push((p.key(), value));
    }
    b
}

/// Where a whole run's problem was set.
enum Place<'a> {
    Option(&'a Opt),
    Sweep(Pos),
}

/// Every distinct run the experiment will do, checked whole; each problem is
/// reported once, at the option it names (else at the target), with the
/// first target and point it appeared at.
fn check_runs(e: &Experiment, s: &mut Sink, validate: Validate) {
    let mut seen: Vec<(Pos, String)> = Vec::new();
    for (t, target) in e.targets.iter().enumerate() {
        for point in e.points() {
            let mut argv = e.argv(t, &point);
            if target.url.is_empty() && target.scenario.is_none() {
                // A target without a URL is said elsewhere; its options are
                // still judged, against a stand-in.
                argv.insert(0, "http://127.0.0.1/".into());
            }
            let result = match &e.find_max {
                Some(search) => {
                    let words: Vec<String> = search.iter().flat_map(|o| o.words.clone()).collect();
                    validate(Check::Search(&argv, &words))
                }
                None => {
                    let mut run = argv.clone();
                    run.extend(e.length_words(false));
                    validate(Check::Run(&run))
                }
            };
            let Err(msg) = result else { continue };
            for line in msg.lines().filter(|l| !l.trim().is_empty()) {
                let (pos, said) = match e.position_of(t, &point, line) {
                    // An option's value: said at the value, after its key.
                    Some(Place::Option(o)) => (o.value_pos, format!("{}: {line}", o.key)),
                    Some(Place::Sweep(pos)) => (pos, line.to_string()),
                    None => (target.pos, line.to_string()),
                };
                if seen.iter().any(|(p, m)| *p == pos && *m == said) {
                    continue;
                }
                seen.push((pos, said.clone()));
                let at = if point.is_empty() {
                    format!("target `{}`", target.name)
                } else {
                    format!("target `{}` at {}", target.name, point_label(&point))
                };
                s.err(pos, format!("{said} (in the run of {at})"));
            }
        }
    }
}

impl Experiment {
    /// Where the option a problem names was set: the point's swept value,
    /// the target's `[target.run]`, or `[run]`. The problem names it first,
    /// as `yace run` spells it (`--ramp-up/--ramp-down: …`, `-c/--connections: …`).
    fn position_of(&self, target: usize, point: &Point, problem: &str) -> Option<Place<'_>> {
        let head = problem.split(": ").next().unwrap_or("");
        let names = |flag: &str| {
            head.split('/')
                .any(|h| h.trim() == flag || h.trim().starts_with(&format!("{flag} ")))
        };
        if let Some((k, _)) = point
            .iter()
            .find(|(k, _)| !k.starts_with("var.") && names(&flag(k)))
        {
            return self
                .sweep
                .params
                .iter()
                .find(|p| &p.name == k)
                .map(|p| Place::Sweep(p.pos));
        }
        self.targets[target]
            .run
            .iter()
            .rev()
            .chain(self.run.iter().rev())
            .find(|o| o.words.first().is_some_and(|w| names(w)))
            .map(Place::Option)
    }

    /// The length's words for one run (`-d`, or `-n`), or for its warm-up.
    pub fn length_words(&self, warmup: bool) -> Vec<String> {
        match (warmup, self.length, self.warmup) {
            (true, _, Some(w)) => vec!["-d".into(), format!("{}ms", w.as_millis())],
            (_, Length::Duration(d), _) => vec!["-d".into(), format!("{}ms", d.as_millis())],
            (_, Length::Requests(n), _) => vec!["-n".into(), n.to_string()],
        }
    }

    /// The sweep's points, in the file's order (one empty point without a sweep).
    pub fn points(&self) -> Vec<Point> {
        let params = &self.sweep.params;
        if params.is_empty() {
            return vec![Vec::new()];
        }
        match self.sweep.mode {
            Mode::Grid => {
                let mut points: Vec<Point> = vec![Vec::new()];
                for p in params {
                    points = points
                        .into_iter()
                        .flat_map(|base| {
                            p.values.iter().map(move |v| {
                                let mut x = base.clone();
                                x.push((p.key(), v.clone()));
                                x
                            })
                        })
                        .collect();
                }
                points
            }
            Mode::OneAtATime => {
                let first: Point = params
                    .iter()
                    .map(|p| (p.key(), p.values[0].clone()))
                    .collect();
                let mut points = vec![first.clone()];
                for (i, p) in params.iter().enumerate() {
                    for v in p.values.iter().skip(1) {
                        let mut x = first.clone();
                        x[i].1 = v.clone();
                        points.push(x);
                    }
                }
                points
            }
        }
    }

    /// The variables a point sets, by name (for the hooks and `{{NAME}}`).
    pub fn vars(point: &Point) -> BTreeMap<String, String> {
        point
            .iter()
            .filter_map(|(k, v)| k.strip_prefix("var.").map(|n| (n.to_string(), v.clone())))
            .collect()
    }

    /// `yace run`'s arguments for one run of `target` at `point` (without
    /// `run`, the output flags and the length): the URL, then the options,
    /// later ones replacing earlier ones with the same key — `[run]`, the
    /// target's, the point's.
    pub fn argv(&self, target: usize, point: &Point) -> Vec<String> {
        let t = &self.targets[target];
        let vars = Self::vars(point);
        let mut by_key: Vec<(String, Vec<String>)> = Vec::new();
        let mut set = |key: &str, words: Vec<String>| {
            by_key.retain(|(k, _)| k != key);
            by_key.push((key.to_string(), words));
        };
        for o in self.run.iter().chain(&t.run) {
            set(&o.key, o.words.clone());
        }
        for (k, v) in point {
            if !k.starts_with("var.") {
                set(k, vec![flag(k), v.clone()]);
            }
        }
        let mut argv = Vec::new();
        if !t.url.is_empty() {
            argv.push(substitute(&t.url, &vars));
        }
        if let Some(file) = &t.scenario {
            argv.push("-f".into());
            argv.push(file.clone());
        }
        for (_, words) in by_key {
            argv.extend(words.into_iter().map(|w| substitute(&w, &vars)));
        }
        for m in &t.monitors {
            argv.push("--monitor".into());
            argv.push(substitute(m, &vars));
        }
        argv
    }

    /// Seconds the experiment takes at most (runs, warm-ups and cool-downs;
    /// a run of `requests` counts as unknown, 0).
    pub fn planned_seconds(&self, runs: usize) -> f64 {
        let run = match self.length {
            Length::Duration(d) => d.as_secs_f64(),
            Length::Requests(_) => 0.0,
        };
        let warm = self.warmup.map_or(0.0, |d| d.as_secs_f64());
        runs as f64 * (run + warm + self.cool_down.as_secs_f64())
    }
}

impl Param {
    /// The key a point stores it under (`connections`, `var.children`).
    pub fn key(&self) -> String {
        if self.var {
            format!("var.{}", self.name)
        } else {
            self.name.clone()
        }
    }
}

/// `{{NAME}}` replaced by the point's variable NAME.
pub fn substitute(text: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = text.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{{{k}}}}}"), v);
    }
    out
}

/// A point in words: `connections=10 children=8` (empty: `-`).
pub fn point_label(point: &Point) -> String {
    if point.is_empty() {
        return "-".into();
    }
    point
        .iter()
        .map(|(k, v)| format!("{}={v}", k.strip_prefix("var.").unwrap_or(k)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(_: Check) -> Result<(), String> {
        Ok(())
    }

    fn toml(text: &str) -> Result<Experiment, Diagnostics> {
        parse(text, doc::Format::Toml, "exp.toml", &ok)
    }

    /// Seed 001's shape: one target, a swept pool size, a restart hook.
    const SEED_001: &str = r#"
name = "children"
repetitions = 3
duration = "5s"
[[target]]
name = "php"
url = "http://127.0.0.1:1/"
before = "restart --children $YACE_VAR_children"
[sweep]
var.children = [5, 20]
connections = [10, 50]
"#;

    #[test]
    fn a_baseline_can_be_a_swept_value() {
        for how in [
            "baseline = \"children=5\"",
            "baseline = { children = 5 }",
            "baseline = \"var.children=5\"",
        ] {
            let e = toml(&format!("{SEED_001}[compare]\n{how}\n")).unwrap();
            assert!(!e.baseline_by_target, "{how}");
            assert_eq!(e.baseline_point, vec![("var.children".into(), "5".into())]);
        }
        let both = toml(&format!(
            "{SEED_001}[compare]\nbaseline = \"target=php, children=20 connections=50\"\n"
        ))
        .unwrap();
        assert!(both.baseline_by_target);
        assert_eq!(both.baseline_point.len(), 2);
        // A target's name alone: targets compared, as before.
        let plain = toml(&format!("{SEED_001}[compare]\nbaseline = \"php\"\n")).unwrap();
        assert!(plain.baseline_by_target && plain.baseline_point.is_empty());
        let none = toml(SEED_001).unwrap();
        assert!(none.baseline_by_target && none.baseline_point.is_empty());
    }

    #[test]
    fn a_baseline_that_names_nothing_is_refused() {
        for (how, says) in [
            (
                "baseline = \"children=7\"",
                "children = 7 is not a value of the sweep",
            ),
            (
                "baseline = { workers = 5 }",
                "`workers` is neither `target` nor a swept parameter",
            ),
            ("baseline = \"nginx\"", "no target named `nginx`"),
            ("baseline = \"children\"", "no target named `children`"),
            ("baseline = \"children=\"", "`children=` is not NAME=VALUE"),
        ] {
            let e = toml(&format!("{SEED_001}[compare]\n{how}\n")).unwrap_err();
            let text = e.to_string();
            assert!(text.contains(says), "{how}: {text}");
        }
        let e = toml(&format!("{SEED_001}[compare]\nbaseline = \"nginx\"\n")).unwrap_err();
        assert!(e.to_string().contains("children=5"), "{e}");
    }

    #[test]
    fn a_sweep_of_two_targets() {
        let e = toml(
            r#"
name = "sweep"
seed = 7
repetitions = 5
duration = "3s"
cool_down = "1s"
[run]
threads = 1
keepalive = false
header = ["A: 1", "B: 2"]
[[target]]
name = "fast"
url = "http://127.0.0.1:1/{{delay}}"
[[target]]
name = "slow"
url = "http://127.0.0.1:2/"
before = "echo $YACE_VAR_delay"
[sweep]
connections = { from = 1, to = 8, times = 2 }
var.delay = ["a", "b"]
[compare]
baseline = "slow"
practical = "5%"
"#,
        )
        .unwrap();
        assert_eq!(e.repetitions, 5);
        assert_eq!(e.baseline, 1);
        assert_eq!(e.practical, 0.05);
        let points = e.points();
        assert_eq!(points.len(), 8);
        assert_eq!(point_label(&points[1]), "connections=1 delay=b");
        let argv = e.argv(0, &points[1]);
        assert_eq!(
            argv,
            [
                "http://127.0.0.1:1/b",
                "--threads",
                "1",
                "--no-keepalive",
                "--header",
                "A: 1",
                "--header",
                "B: 2",
                "--connections",
                "1"
            ]
        );
        assert_eq!(e.planned_seconds(80), 320.0);
    }

    #[test]
    fn every_problem_at_once_with_its_place() {
        let e = toml(
            r#"
repetitions = 0
duration = "ten"
[run]
url = "x"
[[target]]
name = "a"
[sweep]
connections = []
mode = "spiral"
[stop]
errors = "lots"
"#,
        )
        .unwrap_err();
        let text = e.to_string();
        for want in [
            "exp.toml:2:",
            "exp.toml:3:",
            "`url` is set by the lab",
            "target 1 has no `url`",
            "an empty list sweeps nothing",
            "unknown sweep mode `spiral`",
            "is not a share",
        ] {
            assert!(text.contains(want), "{want} missing from:\n{text}");
        }
    }

    #[test]
    fn options_are_checked_by_the_callers_parser() {
        let refuse = |c: Check| -> Result<(), String> {
            match c {
                Check::Option(w) if w.iter().any(|x| x == "--bogus") => {
                    Err("unknown option --bogus".into())
                }
                _ => Ok(()),
            }
        };
        let e = parse(
            "[run]\nbogus = 1\n[[target]]\nurl = \"http://x/\"\n",
            doc::Format::Toml,
            "e.toml",
            &refuse,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("e.toml:2:9: bogus: unknown option --bogus"),
            "{e}"
        );
    }

    #[test]
    fn whole_runs_are_checked_together_and_their_problems_placed() {
        // A stand-in for `yace run`'s plan: a ramp needs users, and
        // --connections 0 is refused; each run's words arrive whole.
        let judge = |c: Check| -> Result<(), String> {
            let Check::Run(w) = c else { return Ok(()) };
            let mut problems = Vec::new();
            if w.iter().any(|x| x == "--ramp-up") && !w.iter().any(|x| x == "--users") {
                problems.push("--ramp-up/--ramp-down: apply to --users");
            }
            if w.windows(2).any(|p| p[0] == "--connections" && p[1] == "0") {
                problems.push("-c/--connections: must be at least 1");
            }
            assert!(
                w.iter().any(|x| x == "-d"),
                "the run's length is part of it: {w:?}"
            );
            if problems.is_empty() {
                Ok(())
            } else {
                Err(problems.join("\n"))
            }
        };
        let text = "duration = \"2s\"\n[run]\nramp_up = \"1s\"\n\
                    [[target]]\nname = \"a\"\nurl = \"http://x/\"\n\
                    [[target]]\nname = \"b\"\nurl = \"http://y/\"\n\
                    [target.run]\nusers = 5\n\
                    [sweep]\nconnections = [0, 2]\n";
        let e = parse(text, doc::Format::Toml, "e.toml", &judge).unwrap_err();
        let e = e.to_string();
        // Target a has no users: the ramp is refused once, at [run]'s key,
        // though it fails at both points; target b has users: no complaint.
        assert_eq!(e.matches("apply to --users").count(), 1, "{e}");
        assert!(
            e.contains("e.toml:3:11: ramp_up: --ramp-up/--ramp-down: apply to --users (in the run of target `a` at connections=0)"),
            "{e}"
        );
        // The bad swept value is placed at the sweep's key, once.
        assert_eq!(e.matches("must be at least 1").count(), 1, "{e}");
        assert!(e.contains("e.toml:13:1: -c/--connections"), "{e}");
        // Options that are fine together pass.
        let fine = "duration = \"2s\"\n[run]\nramp_up = \"1s\"\nusers = 5\n\
                    [[target]]\nname = \"a\"\nurl = \"http://x/\"\n";
        assert!(parse(fine, doc::Format::Toml, "e.toml", &judge).is_ok());
    }
}
