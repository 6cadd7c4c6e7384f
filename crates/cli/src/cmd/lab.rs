//! `yace lab`: experiments. The file is read and checked by `yace-lab`
//! (every `yace run` option in it is checked by `yace run`'s own parser);
//! each run is an ordinary `yace run` through the one run pipeline, kept
//! as a `yace.result.v1` file; `experiment.json` says where it stands.

use super::driver;
use crate::args::{LabArgs, LabCommand, LabReportArgs, RunArgs};
use crate::flags::{self, RunFlags};
use crate::{exit, Failure};
use ::run::{Job, Script, TargetChoice};
use clap::Parser;
use lab::experiment::{self, Experiment};
use lab::state::{State, Status};
use stats::RunResult;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub fn run(a: LabArgs) -> Result<u8, Failure> {
    match a.command {
        LabCommand::Run(r) => {
            let (e, text) = load(&r.file)?;
            let state = State::plan(&e, &text);
            if r.dry_run {
                dry_run(&e, &state);
                return Ok(exit::OK);
            }
            let dir = r.out.clone().unwrap_or_else(|| {
                PathBuf::from(format!(
                    "lab-{}-{}",
                    lab::state::slug(&e.name),
                    humantime::format_rfc3339_seconds(std::time::SystemTime::now())
                        .to_string()
                        .replace([':', 'T'], "-")
                        .trim_end_matches('Z')
                ))
            });
            if dir.join(lab::state::FILE).exists() {
                return Err(Failure::usage(format!(
                    "--out {}: an experiment is already there (continue it with `yace lab resume {}`, or choose another directory)",
                    dir.display(),
                    dir.display()
                )));
            }
            std::fs::create_dir_all(&dir).map_err(|e| {
                Failure::usage(format!("--out {}: cannot create it: {e}", dir.display()))
            })?;
            save(&state, &dir)?;
            println!(
                "Experiment {}: {} runs ({} targets × {} points × {} repetitions, {} order), results in {}",
                e.name,
                state.runs.len(),
                e.targets.len(),
                state.points.len(),
                e.repetitions,
                state.order,
                dir.display()
            );
            execute(&e, state, &dir, r.quiet)
        }
        LabCommand::Resume(r) => {
            let state = State::load(&r.dir).map_err(Failure::usage)?;
            let (e, text) = load(Path::new(&state.file))?;
            if lab::state::fingerprint(&text) != state.fingerprint {
                return Err(Failure::usage(format!(
                    "{} changed since the experiment started: its runs would not be comparable \
                     (undo the change, or start a new experiment with `yace lab run`)",
                    state.file
                )));
            }
            let left = state.count(Status::Pending);
            println!(
                "Resuming {}: {} of {} runs done, {left} to go",
                state.name,
                state.count(Status::Done),
                state.runs.len()
            );
            execute(&e, state, &r.dir, r.quiet)
        }
        LabCommand::Report(r) => report(&r),
    }
}

/// Reads and checks the file; its text too (for the fingerprint).
fn load(file: &Path) -> Result<(Experiment, String), Failure> {
    let validate = |c: experiment::Check| check_words(c);
    let e = experiment::load(file, &validate).map_err(|d| Failure::usage(d.to_string()))?;
    let text = std::fs::read_to_string(file).unwrap_or_default();
    Ok((e, text))
}

/// clap's message without its usage lines: the error and what it names.
fn clap_error(text: &str) -> String {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("error:"));
    let mut out = lines
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ")
        .to_string();
    for l in lines.take_while(|l| l.starts_with("  ")) {
        out.push(' ');
        out.push_str(l.trim());
    }
    out
}

/// `yace run`'s arguments parsed as `yace run` parses them.
fn run_args(argv: &[String]) -> Result<RunArgs, String> {
    let cli = crate::Cli::try_parse_from(
        ["yace", "run"]
            .into_iter()
            .map(String::from)
            .chain(argv.iter().cloned()),
    )
    .map_err(|e| clap_error(&e.to_string()))?;
    match cli.command {
        crate::Command::Run(a) => Ok(*a),
        _ => unreachable!("parsed as run"),
    }
}

/// The lab's checks, by `yace run`'s and `yace find-max`'s own parsers: an
/// option alone by clap (a known flag, a value of its type), a whole run as
/// it will be done (its plan, scenario, thresholds and monitors together),
/// a search as `yace find-max` will start it.
fn check_words(check: experiment::Check) -> Result<(), String> {
    match check {
        experiment::Check::Option(words) => {
            if words.first().map(String::as_str) == Some("find-max") {
                // The required --slo is stood in for.
                let mut search = words[1..].to_vec();
                if !search.iter().any(|w| w == "--slo") {
                    search.extend(["--slo".to_string(), "p99<1s".to_string()]);
                }
                return find_max_args(&["http://127.0.0.1/".to_string()], &search).map(|_| ());
            }
            let mut argv = vec!["http://127.0.0.1/".to_string()];
            argv.extend_from_slice(words);
            let a = run_args(&argv)?;
            flags::monitors(&a.monitor.monitor, &a.monitor.interval)
                .map(|_| ())
                .map_err(|f| f.message)
        }
        experiment::Check::Run(argv) => {
            let a = run_args(argv)?;
            flags::monitors(&a.monitor.monitor, &a.monitor.interval).map_err(|f| f.message)?;
            job_parts(&a).map(|_| ()).map_err(|f| f.message)
        }
        experiment::Check::Search(run, search) => {
            let a = find_max_args(run, search)?;
            super::findmax::check(&a).map_err(|f| f.message)
        }
    }
}

fn dry_run(e: &Experiment, state: &State) {
    println!(
        "{} runs: {} targets × {} points × {} repetitions, {} order (seed {})",
        state.runs.len(),
        e.targets.len(),
        state.points.len(),
        e.repetitions,
        state.order,
        e.seed
    );
    for r in &state.runs {
        let mut argv = e.argv(r.target, &state.points[r.point]);
        let command = match &e.find_max {
            Some(search) => {
                argv.extend(search.iter().flat_map(|o| o.words.clone()));
                "yace find-max"
            }
            None => {
                argv.extend(e.length_words(false));
                "yace run"
            }
        };
        println!(
            "  {:>4}  block {:<3} {:<14} {:<24} {command} {}",
            r.id + 1,
            r.block + 1,
            state.targets[r.target],
            experiment::point_label(&state.points[r.point]),
            argv.join(" ")
        );
    }
    if e.find_max.is_some() {
        println!("Each search takes as long as it needs, within its --max-time.");
        return;
    }
    let secs = e.planned_seconds(state.runs.len());
    if secs > 0.0 {
        println!(
            "At most {} (runs{}{}).",
            humantime::format_duration(Duration::from_secs(secs.ceil() as u64)),
            if e.warmup.is_some() { ", warm-ups" } else { "" },
            if e.cool_down.is_zero() {
                ""
            } else {
                ", cool-downs"
            }
        );
    }
}

fn save(state: &State, dir: &Path) -> Result<(), Failure> {
    state.save(dir).map_err(|e| {
        Failure::runtime(format!(
            "{}: cannot write: {e}",
            dir.join(lab::state::FILE).display()
        ))
    })
}

/// `yace find-max`'s arguments: the run's words (URL first) and the search's.
fn find_max_args(run: &[String], search: &[String]) -> Result<crate::args::FindMaxArgs, String> {
    let cli = crate::Cli::try_parse_from(
        ["yace", "find-max"]
            .into_iter()
            .map(String::from)
            .chain(run.iter().cloned())
            .chain(search.iter().cloned()),
    )
    .map_err(|e| clap_error(&e.to_string()))?;
    match cli.command {
        crate::Command::FindMax(a) => Ok(*a),
        _ => unreachable!("parsed as find-max"),
    }
}

/// One search of a find-max experiment, its answer written to `path`;
/// `Ok(false)` when it was interrupted.
fn one_search(run: &[String], search: &[String], path: &Path) -> Result<bool, Failure> {
    let mut words = search.to_vec();
    words.push("--json".into());
    words.push(path.display().to_string());
    let a = find_max_args(run, &words).map_err(Failure::usage)?;
    let code = super::findmax::run(a)?;
    if code == exit::SIGINT {
        return Ok(false);
    }
    Ok(path.exists())
}

/// Runs a shell hook with the point's variables in its environment.
fn hook(what: &str, cmd: &str, target: &str, point: &experiment::Point) -> Result<(), String> {
    let vars = Experiment::vars(point);
    let cmd = experiment::substitute(cmd, &vars);
    let mut c = Command::new("sh");
    c.arg("-c").arg(&cmd).env("YACE_TARGET", target);
    c.env("YACE_POINT", experiment::point_label(point));
    for (k, v) in &vars {
        c.env(format!("YACE_VAR_{k}"), v);
    }
    let out = c
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("{what} hook: cannot run sh: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} hook `{cmd}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A run's plan, thresholds, script and URL from its arguments, as `yace
/// run` builds them: a scenario target (`-f`) runs its journeys against
/// the given URL or its own base.
fn job_parts(
    a: &RunArgs,
) -> Result<(plan::Plan, Vec<stats::threshold::Threshold>, Script, String), Failure> {
    match &a.file {
        Some(file) => {
            let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
            let sc = scenario::load_with_base(file, &env, a.url.as_deref())
                .map_err(|d| Failure::usage(d.to_string()))?;
            let url = sc.base().map(|b| b.url.clone()).ok_or_else(|| {
                Failure::usage(format!(
                    "{}: no base URL: give the target a url",
                    file.display()
                ))
            })?;
            let (plan, thresholds) = crate::failure::both(
                flags::scenario_plan(a, &sc, &url).map_err(|d| Failure::usage(d.render(&RunFlags))),
                flags::scenario_thresholds(a, &sc, file),
            )?;
            Ok((plan, thresholds, Script::Scenario(Box::new(sc)), url))
        }
        None => {
            let url = a.url.clone().unwrap_or_default();
            let (plan, thresholds) = crate::failure::both(
                flags::run_plan(a, &url).map_err(|d| Failure::usage(d.render(&RunFlags))),
                flags::thresholds(&a.thresholds, None),
            )?;
            Ok((plan, thresholds, Script::Request, url))
        }
    }
}

/// One `yace run` of the experiment, quietly; `None` if it was interrupted.
fn one_run(argv: &[String]) -> Result<RunResult, Failure> {
    let a = run_args(argv).map_err(Failure::usage)?;
    let monitors = flags::monitors(&a.monitor.monitor, &a.monitor.interval)?;
    let (plan, thresholds, script, url) = job_parts(&a)?;
    let prepared = ::run::prepare(Job {
        plan,
        target: TargetChoice::Url(url),
        script,
        thresholds,
        spelling: &RunFlags,
        monitors,
    })
    .map_err(Failure::from)?;
    Ok(driver::execute(prepared, |_| (), |_| {})?.result)
}

/// Runs what is pending, saving the state after each run.
fn execute(e: &Experiment, mut state: State, dir: &Path, quiet: bool) -> Result<u8, Failure> {
    let total = state.runs.len();
    let started = Instant::now();
    let mut done_now = 0usize;
    let slos: Vec<stats::threshold::Threshold> = e
        .stop
        .slo
        .iter()
        .filter_map(|s| stats::threshold::Threshold::parse(s, None).ok())
        .collect();
    let mut baselines: Vec<Option<monitor::quiet::Quiet>> = vec![None; e.targets.len()];
    let mut last_target: Option<usize> = None;
    for i in 0..total {
        if state.runs[i].status != Status::Pending {
            continue;
        }
        if let Some(t) = last_target {
            cool_down(e, t, &baselines, quiet);
        }
        if host::signals::received().is_some() {
            break;
        }
        let run = state.runs[i].clone();
        let target = &e.targets[run.target];
        if baselines[run.target].is_none() && !e.cool_down.is_zero() {
            baselines[run.target] = quiet_now(e, run.target, Duration::from_secs(2));
        }
        last_target = Some(run.target);
        let point = state.points[run.point].clone();
        let label = experiment::point_label(&point);
        if let Some(cmd) = &target.before {
            hook("before", cmd, &target.name, &point).map_err(|m| {
                Failure::runtime(format!(
                    "{m}; the experiment stopped (fix the hook, then `yace lab resume {}`)",
                    dir.display()
                ))
            })?;
        }
        let mut argv = e.argv(run.target, &point);
        if let Some(search) = &e.find_max {
            let words: Vec<String> = search.iter().flat_map(|o| o.words.clone()).collect();
            let rel = state.result_path(&run);
            let path = dir.join(&rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| Failure::runtime(format!("{}: {e}", parent.display())))?;
            }
            state.runs[i].started_at =
                Some(humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string());
            if !quiet {
                println!(
                    "  [{:>3}/{total}] block {:<2} {:<12} {label}: searching",
                    i + 1,
                    run.block + 1,
                    target.name
                );
            }
            let outcome = one_search(&argv, &words, &path);
            if let Some(cmd) = &target.after {
                if let Err(m) = hook("after", cmd, &target.name, &point) {
                    eprintln!("warning: {m}");
                }
            }
            match outcome {
                Ok(false) => {
                    state.runs[i].started_at = None;
                    break;
                }
                Ok(true) => {
                    state.runs[i].status = Status::Done;
                    state.runs[i].result = Some(rel);
                }
                Err(f) => {
                    state.runs[i].status = Status::Failed;
                    state.runs[i].note = Some(f.message);
                }
            }
            save(&state, dir)?;
            continue;
        }
        if e.warmup.is_some() {
            let mut warm = argv.clone();
            strip_monitors(&mut warm); // not recorded: nothing to watch
            warm.extend(e.length_words(true));
            let w = one_run(&warm);
            if matches!(&w, Ok(r) if r.end.partial) {
                break;
            }
        }
        argv.extend(e.length_words(false));
        state.runs[i].started_at =
            Some(humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string());
        let outcome = one_run(&argv);
        if let Some(cmd) = &target.after {
            if let Err(m) = hook("after", cmd, &target.name, &point) {
                eprintln!("warning: {m}");
            }
        }
        match outcome {
            Ok(r) if r.end.partial => {
                // Interrupted: not recorded; resume does it again.
                state.runs[i].started_at = None;
                break;
            }
            Ok(r) => {
                let rel = state.result_path(&run);
                let path = dir.join(&rel);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| Failure::runtime(format!("{}: {e}", parent.display())))?;
                }
                let out = driver::create_output("result", Some(&path))?;
                driver::write_json(&r, out)?;
                state.runs[i].status = Status::Done;
                state.runs[i].result = Some(rel);
                done_now += 1;
                if !quiet {
                    println!("{}", progress(&state, i, &r, started, done_now, e));
                }
                if let Some(why) = fails_badly(&r, e.stop.errors, &slos) {
                    let n = state.skip_beyond(
                        run.target,
                        run.point,
                        &format!("{} at {label}: {why}", target.name),
                    );
                    if n > 0 && !quiet {
                        println!(
                            "        {} failed badly at {label} ({why}): its {n} runs further along the sweep are skipped",
                            target.name
                        );
                    }
                }
            }
            Err(f) => {
                state.runs[i].status = Status::Failed;
                state.runs[i].note = Some(f.message.clone());
                if !quiet {
                    println!(
                        "  [{:>3}/{total}] {:<12} {label:<22} FAILED: {}",
                        i + 1,
                        target.name,
                        f.message
                    );
                }
            }
        }
        save(&state, dir)?;
    }
    save(&state, dir)?;
    let pending = state.count(Status::Pending);
    if pending > 0 {
        println!(
            "Stopped with {pending} runs to go: `yace lab resume {}` goes on without redoing finished runs.",
            dir.display()
        );
        return Ok(exit::SIGINT);
    }
    println!();
    let analysis = analyze(&state, dir);
    let lang = driver::language(None);
    print!("{}", lab::render::text_in(&state, &analysis, lang));
    let page = dir.join("report.html");
    match lab_page(&state, &analysis, dir, dir, lang)
        .and_then(|html| write_file("report", &page, &html))
    {
        Ok(()) => println!(
            "\n{}",
            report::lang::trf(
                lang,
                "The experiment's page, with charts: {}",
                &[&page.display()]
            )
        ),
        Err(f) => eprintln!("warning: {}", f.message),
    }
    Ok(if state.count(Status::Failed) > 0 {
        exit::RUNTIME
    } else {
        exit::OK
    })
}

/// A target's monitors, its port and whether it runs here.
fn watch(e: &Experiment, target: usize) -> Option<(monitor::Config, Option<u16>, bool)> {
    let t = &e.targets[target];
    if t.monitors.is_empty() {
        return None;
    }
    let specs: Vec<monitor::Spec> = t
        .monitors
        .iter()
        .filter_map(|m| monitor::Spec::parse(m).ok())
        .collect();
    let hostport = t.url.split("://").nth(1)?.split('/').next()?.to_string();
    let https = t.url.starts_with("https://");
    let with_port = if hostport.contains(':') && !hostport.ends_with(']') {
        hostport
    } else {
        format!("{hostport}:{}", if https { 443 } else { 80 })
    };
    let addr = std::net::ToSocketAddrs::to_socket_addrs(&with_port)
        .ok()?
        .next();
    let port = addr.map(|a| a.port());
    let local = addr.is_some_and(host::is_local);
    Some((
        monitor::Config {
            specs,
            interval: Duration::from_millis(500),
        },
        port,
        local,
    ))
}

/// The target's server state over `window`, where it is monitored.
fn quiet_now(e: &Experiment, target: usize, window: Duration) -> Option<monitor::quiet::Quiet> {
    let (config, port, local) = watch(e, target)?;
    monitor::quiet::Quiet::measure(&config, port, local, window).ok()
}

/// The rest after a run of `target`: `cool_down`, then, where monitored,
/// until the server is back near its baseline (at most `cool_down_max`).
fn cool_down(
    e: &Experiment,
    target: usize,
    baselines: &[Option<monitor::quiet::Quiet>],
    quiet: bool,
) {
    if e.cool_down.is_zero() {
        return;
    }
    let started = Instant::now();
    std::thread::sleep(e.cool_down);
    let Some(base) = &baselines[target] else {
        return;
    };
    let mut still = None;
    while started.elapsed() < e.cool_down + e.cool_down_max && host::signals::received().is_none() {
        let Some(now) = quiet_now(e, target, Duration::from_secs(1)) else {
            return;
        };
        still = now.still_busy(base);
        if still.is_none() {
            break;
        }
    }
    if quiet {
        return;
    }
    match still {
        None if started.elapsed() > e.cool_down + Duration::from_millis(500) => println!(
            "        cooled down in {:.0} s: back near the baseline",
            started.elapsed().as_secs_f64()
        ),
        None => {}
        Some(why) => println!(
            "        still busy after {:.0} s ({why}): going on (cool_down_max)",
            started.elapsed().as_secs_f64()
        ),
    }
}

fn strip_monitors(argv: &mut Vec<String>) {
    let mut out = Vec::with_capacity(argv.len());
    let mut skip = false;
    for w in argv.drain(..) {
        if skip {
            skip = false;
            continue;
        }
        if w == "--monitor" {
            skip = true;
            continue;
        }
        out.push(w);
    }
    *argv = out;
}

fn fails_badly(
    r: &RunResult,
    errors: Option<f64>,
    slos: &[stats::threshold::Threshold],
) -> Option<String> {
    let finished = (r.summary.responses + r.summary.errors).max(1) as f64;
    if let Some(max) = errors {
        let share = r.summary.errors as f64 / finished;
        if share > max {
            return Some(format!(
                "errors {:.1}% over {:.1}%",
                share * 100.0,
                max * 100.0
            ));
        }
    }
    let broken: Vec<String> = slos
        .iter()
        .map(|t| t.evaluate(r))
        .filter(|t| !t.passed)
        .map(|t| t.expr)
        .collect();
    (!broken.is_empty()).then(|| format!("{} broken", broken.join(", ")))
}

fn progress(
    state: &State,
    i: usize,
    r: &RunResult,
    started: Instant,
    done_now: usize,
    e: &Experiment,
) -> String {
    let run = &state.runs[i];
    let left = state.count(Status::Pending);
    let per_run = started.elapsed().as_secs_f64() / done_now.max(1) as f64;
    let eta = Duration::from_secs((per_run * left as f64).ceil() as u64);
    let _ = e;
    format!(
        "  [{:>3}/{}] block {:<2} {:<12} {:<22} {:>10.1} responses/s  p99 {:>9}  errors {:.2}%   {} left",
        i + 1,
        state.runs.len(),
        run.block + 1,
        state.targets[run.target],
        experiment::point_label(&state.points[run.point]),
        r.summary.rps,
        report::duration_us(r.summary.latency.at(99.0).unwrap_or(0.0)),
        r.summary.errors as f64 * 100.0 / (r.summary.requests.max(1)) as f64,
        humantime::format_duration(eta)
    )
}

/// An experiment's best point for capacity planning: the highest median
/// throughput (of `target`, else of any target) over points whose runs
/// were mostly not client-bound; with which point it is, and its runs.
pub(super) fn best_point(dir: &Path, target: Option<&str>) -> Result<(f64, String, usize), String> {
    let state = State::load(dir)?;
    let wanted = match target {
        Some(name) => Some(
            state
                .targets
                .iter()
                .position(|t| t == name)
                .ok_or_else(|| {
                    format!(
                        "no target `{name}` in the experiment (it has {})",
                        state.targets.join(", ")
                    )
                })?,
        ),
        None => None,
    };
    let a = analyze(&state, dir);
    a.points
        .iter()
        .filter(|p| wanted.is_none_or(|t| p.target == t))
        .filter(|p| p.left_out.len() * 2 < p.runs.len().max(1))
        .filter_map(|p| p.rps.as_ref().map(|f| (p, f)))
        .max_by(|a, b| a.1.median.total_cmp(&b.1.median))
        .map(|(p, f)| {
            let point = experiment::point_label(&state.points[p.point]);
            let at = if point.is_empty() {
                state.targets[p.target].clone()
            } else {
                format!("{}, {point}", state.targets[p.target])
            };
            (f.median, at, f.n)
        })
        .ok_or_else(|| "no point of the experiment has a throughput yet (run it first)".into())
}

/// The experiment's analysis: its runs' results, or its searches' answers.
fn analyze(state: &State, dir: &Path) -> lab::analysis::Analysis {
    if state.kind == "find-max" {
        lab::analysis::analyze_with(state, |rel, rep| {
            let path = dir.join(rel);
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let doc: serde_json::Value =
                serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            lab::analysis::RunFigures::of_search(rep, &doc)
                .map_err(|e| format!("{}: {e}", path.display()))
        })
    } else {
        lab::analysis::analyze(state, |rel| read_result(&dir.join(rel)))
    }
}

fn read_result(path: &Path) -> Result<RunResult, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn report(r: &LabReportArgs) -> Result<u8, Failure> {
    let state = State::load(&r.dir).map_err(Failure::usage)?;
    let analysis = analyze(&state, &r.dir);
    let lang = driver::language(r.lang);
    let text = match r.format.as_str() {
        "text" => lab::render::text_in(&state, &analysis, lang).into_bytes(),
        "md" | "markdown" => lab::render::markdown_in(&state, &analysis, lang).into_bytes(),
        "csv" => lab::render::csv(&state, &analysis).into_bytes(),
        "json" => {
            (serde_json::to_string_pretty(&analysis).expect("serializes") + "\n").into_bytes()
        }
        // Its links lead from where it is written (here when on stdout).
        "html" => {
            let at = match r
                .output
                .as_deref()
                .map(|p| p.parent().unwrap_or(Path::new("")))
            {
                Some(p) if p.as_os_str().is_empty() => Path::new("."),
                Some(p) => p,
                None => r.dir.as_path(),
            };
            lab_page(&state, &analysis, &r.dir, at, lang)?
        }
        other => {
            return Err(Failure::usage(format!(
                "-F {other}: one of text, md, csv, json, html"
            )))
        }
    };
    match &r.output {
        Some(p) => write_file("-o", p, &text)?,
        None => std::io::stdout()
            .write_all(&text)
            .map_err(|e| Failure::runtime(format!("stdout: {e}")))?,
    }
    Ok(exit::OK)
}

/// `bytes` into `path`, whole or not at all.
fn write_file(flag: &str, path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    if let Some(out) = driver::create_output(flag, Some(path))? {
        out.write_with(|w| w.write_all(bytes))
            .map_err(|e| driver::output_failure(flag, path, e))?;
    }
    Ok(())
}

/// The experiment's HTML page, linked from `at` (a directory); each run's
/// own report is written beside its result first (unless it is newer).
fn lab_page(
    state: &State,
    analysis: &lab::analysis::Analysis,
    dir: &Path,
    at: &Path,
    lang: report::lang::Lang,
) -> Result<Vec<u8>, Failure> {
    let full = |p: &Path| std::fs::canonicalize(p).or_else(|_| std::path::absolute(p));
    let prefix = match (full(at), full(dir)) {
        (Ok(a), Ok(d)) => lab::html::link_prefix(&a, &d),
        _ => String::new(),
    };
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    for rel in state
        .runs
        .iter()
        .filter(|r| r.status == Status::Done)
        .filter_map(|r| r.result.as_ref())
    {
        let (json, html) = (dir.join(rel), dir.join(lab::html::run_page(rel, lang)));
        if modified(&html).is_some_and(|h| modified(&json).is_some_and(|j| h >= j)) {
            continue;
        }
        // A find-max experiment's runs are searches: no page of their own.
        let Ok(result) = read_result(&json) else {
            continue;
        };
        let mut page = Vec::new();
        report::html::report_in(&result, &mut page, lang)
            .map_err(|e| Failure::runtime(format!("rendering {}: {e}", json.display())))?;
        write_file("report", &html, &page)?;
    }
    let link = |r: &lab::state::Run| {
        let page = lab::html::run_page(r.result.as_ref()?, lang);
        dir.join(&page).exists().then(|| format!("{prefix}{page}"))
    };
    let mut out = Vec::new();
    lab::html::page(&mut out, state, analysis, &link, lang)
        .map_err(|e| Failure::runtime(format!("rendering {}: {e}", dir.display())))?;
    Ok(out)
}

/// `yace compare A.json… -- B.json…`: seed 003's before/after, judged.
pub fn compare(a: crate::args::CompareArgs) -> Result<u8, Failure> {
    let practical = a
        .practical
        .trim()
        .strip_suffix('%')
        .and_then(|p| p.trim().parse::<f64>().ok())
        .filter(|p| (0.0..100.0).contains(p))
        .map(|p| p / 100.0)
        .ok_or_else(|| Failure::usage(format!("--practical {}: a share like 2%", a.practical)))?;
    let read_side =
        |files: &[PathBuf]| -> Result<Vec<(String, lab::analysis::RunFigures)>, Failure> {
            files
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let r = read_result(f).map_err(|e| {
                        let page =
                            std::fs::read(f).is_ok_and(|b| b.trim_ascii_start().starts_with(b"<"));
                        Failure::usage(if page {
                            format!(
                                "{}: a page, not a result: give the runs' .json files",
                                f.display()
                            )
                        } else {
                            e
                        })
                    })?;
                    let key = format!("{} {}", r.plan.request.method, r.plan.target.url);
                    Ok((key, lab::analysis::RunFigures::of(i as u32 + 1, &r)))
                })
                .collect()
        };
    let before = read_side(&a.before)?;
    let after = read_side(&a.after)?;
    let table = lab::compare::table(&before, &after, practical);
    let lang = driver::language(a.lang);
    match a.format.as_str() {
        "text" => print!(
            "{}",
            lab::compare::text_in(&table, a.before.len(), a.after.len(), lang)
        ),
        "md" | "markdown" => print!(
            "{}",
            lab::compare::markdown_in(&table, a.before.len(), a.after.len(), lang)
        ),
        other => return Err(Failure::usage(format!("-F {other}: text or md"))),
    }
    Ok(exit::OK)
}
