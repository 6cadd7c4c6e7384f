//! `yace lab`: experiments. The file is read and checked by `yace-lab`
//! (every `yace run` option in it is checked by `yace run`'s own parser);
//! each run is an ordinary `yace run` through the one run pipeline, kept
//! as a `yace.result.v1` file; `experiment.json` says where it stands.

use super::driver;
use crate::args::{LabArgs, LabCommand, LabReportArgs, RunArgs};
use crate::flags::{self, RunFlags};
use crate::{exit, Failure};
use ::run::{Job, Script, StopCause, StopHandle, TargetChoice};
use clap::Parser;
use lab::experiment::{self, Experiment};
use lab::state::{State, Status};
use stats::RunResult;
use std::collections::BTreeMap;
use std::io::{IsTerminal as _, Write as _};
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
            execute(&e, state, &dir, r.quiet, r.no_tui)
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
            execute(&e, state, &r.dir, r.quiet, r.no_tui)
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
fn one_search(
    run: &[String],
    search: &[String],
    path: &Path,
    no_tui: bool,
) -> Result<bool, Failure> {
    let mut words = search.to_vec();
    if no_tui {
        words.push("--no-tui".into());
    }
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

/// One `yace run` of the experiment, quietly (its result is partial if
/// it was interrupted); watched by the view, when there is one, as `what`
/// with `left` of the experiment to go.
fn one_run(
    argv: &[String],
    stop: &StopHandle,
    view: Option<(&mut live::Campaign, String, Option<live::campaign::Left>)>,
) -> Result<RunResult, Failure> {
    let a = run_args(argv).map_err(Failure::usage)?;
    let monitors = flags::monitors(&a.monitor.monitor, &a.monitor.interval)?;
    let monitored = monitors.specs.len();
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
    let mut view = view.map(|(c, what, left)| {
        c.begin(live::campaign::Begin {
            setup: live::Setup::of(
                &prepared.plan,
                engine::effective_threads(&prepared.plan),
                monitored,
                &RunFlags,
            ),
            what,
            context: None,
            left,
        });
        c
    });
    let done = driver::execute_with(
        prepared,
        |_| (),
        |rows| {
            if let Some(c) = &mut view {
                c.observe(rows);
            }
        },
        stop,
    );
    if let Some(c) = view {
        c.end();
    }
    Ok(done?.result)
}

/// Runs what is pending, saving the state after each run; on a terminal,
/// in the full-screen view (an experiment of searches: each search draws
/// its own), whose lines are printed when the screen is back.
fn execute(
    e: &Experiment,
    mut state: State,
    dir: &Path,
    quiet: bool,
    no_tui: bool,
) -> Result<u8, Failure> {
    let stop = StopHandle::new();
    let lang = driver::language(None);
    let mut front = if e.find_max.is_none() {
        Front::choose(quiet, no_tui, &stop, || intro(e, &state, dir, lang))
    } else {
        Front::lines()
    };
    let slos: Vec<stats::threshold::Threshold> = e
        .stop
        .slo
        .iter()
        .filter_map(|s| stats::threshold::Threshold::parse(s, None).ok())
        .collect();
    let mut points = Points::default();
    if let Some(c) = &mut front.view {
        // Resumed: the points finished before are in the table already.
        for run in state.runs.iter().filter(|r| r.status == Status::Done) {
            if let Some(r) = run
                .result
                .as_ref()
                .and_then(|p| read_result(&dir.join(p)).ok())
            {
                points.add(run, &r, fails_badly(&r, e.stop.errors, &slos));
            }
        }
        let mut shown: Vec<(usize, usize)> = state
            .runs
            .iter()
            .filter(|r| r.status != Status::Pending)
            .map(|r| (r.target, r.point))
            .collect();
        shown.dedup();
        for (t, p) in shown {
            c.finished(points.row(&state, t, p));
        }
    }
    let went = runs(
        e,
        &mut state,
        dir,
        quiet,
        no_tui,
        &slos,
        (&stop, &mut front, &mut points),
    );
    // The screen is back, and the lines it kept are printed, before
    // anything else (an error too).
    front.finish();
    went?;
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

/// The view's title, table and footer for an experiment.
fn intro(
    e: &Experiment,
    state: &State,
    dir: &Path,
    lang: report::lang::Lang,
) -> live::campaign::Intro {
    live::campaign::Intro {
        title: format!(
            "Experiment {}: {} runs ({} targets × {} points × {} repetitions, {} order) · results in {}",
            e.name,
            state.runs.len(),
            e.targets.len(),
            state.points.len(),
            e.repetitions,
            state.order,
            dir.display()
        ),
        table: "Finished points (medians of their runs so far)".into(),
        columns: [
            "target",
            "point",
            "runs",
            "responses/s",
            "p99",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
        stop: format!(
            "the experiment stays resumable: yace lab resume {}",
            dir.display()
        ),
        lang,
    }
}

/// The time the experiment has left when a run (or its warm-up) begins:
/// its planned run times, warm-ups and cool-downs; without planned times
/// (`requests`), the runs so far tell.
fn left(
    e: &Experiment,
    state: &State,
    warming: bool,
    done_now: usize,
    started: Instant,
) -> Option<live::campaign::Left> {
    let pending = state.count(Status::Pending);
    let warm = e.warmup.map_or(0.0, |d| d.as_secs_f64());
    let planned = e.planned_seconds(pending);
    if planned > 0.0 {
        let mut s = planned - e.cool_down.as_secs_f64();
        if !warming {
            s -= warm;
        }
        let with = match (e.warmup.is_some(), !e.cool_down.is_zero()) {
            (true, true) => " with warm-ups and cool-downs",
            (true, false) => " with warm-ups",
            (false, true) => " with cool-downs",
            (false, false) => "",
        };
        let runs = if pending == 1 { "run" } else { "runs" };
        let basis = format!("{pending} {runs} to go, as planned{with}");
        return Some(live::campaign::Left {
            s: s.max(0.0),
            estimate: false,
            basis,
        });
    }
    (done_now > 0).then(|| live::campaign::Left {
        s: started.elapsed().as_secs_f64() / done_now as f64 * pending as f64,
        estimate: true,
        basis: format!("{pending} runs as long as the runs so far"),
    })
}

/// What the finished runs of each point (target, point) measured.
#[derive(Debug, Default)]
struct Points {
    figs: BTreeMap<(usize, usize), PointFigures>,
}

#[derive(Debug, Default)]
struct PointFigures {
    rps: Vec<f64>,
    p99_us: Vec<f64>,
    client_bound: usize,
    /// The stop rule's reason, when a run of it failed badly.
    stopped: Option<String>,
}

fn median(v: &[f64]) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

impl Points {
    fn add(&mut self, run: &lab::state::Run, r: &RunResult, badly: Option<String>) {
        let f = self.figs.entry((run.target, run.point)).or_default();
        f.rps.push(r.summary.rps);
        if let Some(p) = r
            .summary
            .latency
            .at(99.0)
            .filter(|_| r.summary.latency.count > 0)
        {
            f.p99_us.push(p);
        }
        f.client_bound += usize::from(r.client.saturated);
        if badly.is_some() {
            f.stopped = badly;
        }
    }

    /// The point's row: its runs so far, their medians, and its marks.
    fn row(&self, state: &State, target: usize, point: usize) -> live::campaign::Row {
        use live::campaign::Mark;
        let runs: Vec<&lab::state::Run> = state
            .runs
            .iter()
            .filter(|r| r.target == target && r.point == point)
            .collect();
        let count = |s: Status| runs.iter().filter(|r| r.status == s).count();
        let (done, failed, skipped) = (
            count(Status::Done),
            count(Status::Failed),
            count(Status::Skipped),
        );
        let empty = PointFigures::default();
        let f = self.figs.get(&(target, point)).unwrap_or(&empty);
        let label = experiment::point_label(&state.points[point]);
        let (verdict, mark) = if let Some(why) = &f.stopped {
            (format!("stopped the sweep: {why}"), Mark::Bad)
        } else if failed > 0 {
            (format!("{failed} run(s) FAILED"), Mark::Bad)
        } else if done == 0 && skipped > 0 {
            (
                "skipped: beyond a point that failed badly".to_string(),
                Mark::Plain,
            )
        } else if f.client_bound > 0 {
            (
                format!("client-bound in {} of {done} runs", f.client_bound),
                Mark::Warn,
            )
        } else {
            ("ok".to_string(), Mark::Good)
        };
        live::campaign::Row {
            key: format!("{target}/{point}"),
            cells: vec![
                state.targets[target].clone(),
                if label.is_empty() {
                    "—".into()
                } else {
                    label
                },
                format!("{done} of {}", runs.len()),
                median(&f.rps).map_or("—".into(), |v| format!("{v:.1}")),
                median(&f.p99_us).map_or("—".into(), report::duration_us),
                verdict,
            ],
            mark,
        }
    }
}

/// Where a campaign's lines go: printed as they come, or, while the
/// full-screen view is up, kept and printed when the screen is back, so
/// that the scrollback holds what a pipe gets.
pub(super) struct Front {
    pub view: Option<live::Campaign>,
    /// The lines kept: (to stderr, text).
    later: Vec<(bool, String)>,
}

impl Front {
    /// Lines only.
    pub fn lines() -> Front {
        Front {
            view: None,
            later: Vec::new(),
        }
    }

    /// The full-screen view where `yace run` draws its dashboard: stderr
    /// a terminal, TERM set and not `dumb`, neither `--quiet` nor
    /// `--no-tui`; `q` and Ctrl-C stop `stop`.
    pub fn choose(
        quiet: bool,
        no_tui: bool,
        stop: &StopHandle,
        intro: impl FnOnce() -> live::campaign::Intro,
    ) -> Front {
        let mut front = Front::lines();
        if quiet || no_tui || !terminal() {
            return front;
        }
        let stop = stop.clone();
        let look = live::Look::from_env(|k| std::env::var(k).ok());
        match live::Campaign::start(intro(), look, move || stop.stop(StopCause::Interrupted)) {
            Ok(c) => front.view = Some(c),
            Err(e) => eprintln!(
                "yace: cannot draw the live view on this terminal ({e}); showing lines instead \
                 (--no-tui chooses them)"
            ),
        }
        front
    }

    /// A line for stdout.
    pub fn say(&mut self, line: String) {
        match self.view {
            Some(_) => self.later.push((false, line)),
            None => println!("{line}"),
        }
    }

    /// A line for stderr.
    pub fn warn(&mut self, line: String) {
        match self.view {
            Some(_) => self.later.push((true, line)),
            None => eprintln!("{line}"),
        }
    }

    /// Puts the screen back and prints the lines kept.
    pub fn finish(&mut self) {
        if let Some(c) = self.view.take() {
            c.finish();
        }
        for (err, line) in self.later.drain(..) {
            if err {
                eprintln!("{line}");
            } else {
                println!("{line}");
            }
        }
    }
}

/// A terminal that can move its cursor, as `yace run` decides: stderr is
/// one, and TERM is set and not `dumb`.
fn terminal() -> bool {
    let term = std::env::var("TERM").unwrap_or_default();
    std::io::stderr().is_terminal() && !term.is_empty() && term != "dumb"
}

/// The pending runs, one after another (the loop of [`execute`]).
fn runs(
    e: &Experiment,
    state: &mut State,
    dir: &Path,
    quiet: bool,
    no_tui: bool,
    slos: &[stats::threshold::Threshold],
    (stop, front, points): (&StopHandle, &mut Front, &mut Points),
) -> Result<(), Failure> {
    let total = state.runs.len();
    let started = Instant::now();
    let mut done_now = 0usize;
    let stopped = || host::signals::received().is_some() || stop.cause().is_some();
    let mut baselines: Vec<Option<monitor::quiet::Quiet>> = vec![None; e.targets.len()];
    let mut last_target: Option<usize> = None;
    for i in 0..total {
        if state.runs[i].status != Status::Pending {
            continue;
        }
        if let Some(t) = last_target {
            cool_down(e, t, &baselines, quiet, front, &stopped);
        }
        if stopped() {
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
                front.say(format!(
                    "  [{:>3}/{total}] block {:<2} {:<12} {label}: searching",
                    i + 1,
                    run.block + 1,
                    target.name
                ));
            }
            let outcome = one_search(&argv, &words, &path, no_tui || quiet);
            if let Some(cmd) = &target.after {
                if let Err(m) = hook("after", cmd, &target.name, &point) {
                    front.warn(format!("warning: {m}"));
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
            save(state, dir)?;
            continue;
        }
        let what = |warm: bool| {
            format!(
                "{}run {} of {total} · {} · {} · repetition {} of {}",
                if warm { "warm-up before " } else { "" },
                i + 1,
                target.name,
                if label.is_empty() { "—" } else { &label },
                run.block + 1,
                e.repetitions
            )
        };
        if e.warmup.is_some() {
            let mut warm = argv.clone();
            strip_monitors(&mut warm); // not recorded: nothing to watch
            warm.extend(e.length_words(true));
            let left = left(e, state, true, done_now, started);
            let view = front.view.as_mut().map(|c| (c, what(true), left));
            let w = one_run(&warm, stop, view);
            if matches!(&w, Ok(r) if r.end.partial) {
                break;
            }
        }
        argv.extend(e.length_words(false));
        state.runs[i].started_at =
            Some(humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string());
        let left = left(e, state, false, done_now, started);
        let view = front.view.as_mut().map(|c| (c, what(false), left));
        let outcome = one_run(&argv, stop, view);
        if let Some(cmd) = &target.after {
            if let Err(m) = hook("after", cmd, &target.name, &point) {
                front.warn(format!("warning: {m}"));
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
                    front.say(progress(state, i, &r, started, done_now, e));
                }
                let badly = fails_badly(&r, e.stop.errors, slos);
                points.add(&run, &r, badly.clone());
                if let Some(why) = badly {
                    let n = state.skip_beyond(
                        run.target,
                        run.point,
                        &format!("{} at {label}: {why}", target.name),
                    );
                    if n > 0 && !quiet {
                        front.say(format!(
                            "        {} failed badly at {label} ({why}): its {n} runs further along the sweep are skipped",
                            target.name
                        ));
                    }
                    // The points skipped show as such.
                    if let Some(c) = &mut front.view {
                        let mut skipped: Vec<usize> = state
                            .runs
                            .iter()
                            .filter(|r| r.target == run.target && r.status == Status::Skipped)
                            .map(|r| r.point)
                            .collect();
                        skipped.sort_unstable();
                        skipped.dedup();
                        for p in skipped {
                            c.finished(points.row(state, run.target, p));
                        }
                    }
                }
            }
            Err(f) => {
                state.runs[i].status = Status::Failed;
                state.runs[i].note = Some(f.message.clone());
                if !quiet {
                    front.say(format!(
                        "  [{:>3}/{total}] {:<12} {label:<22} FAILED: {}",
                        i + 1,
                        target.name,
                        f.message
                    ));
                }
            }
        }
        if let Some(c) = &mut front.view {
            c.finished(points.row(state, run.target, run.point));
        }
        save(state, dir)?;
    }
    Ok(())
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
            answered_before: false,
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
/// until the server is back near its baseline (at most `cool_down_max`);
/// cut short when the experiment is stopped.
fn cool_down(
    e: &Experiment,
    target: usize,
    baselines: &[Option<monitor::quiet::Quiet>],
    quiet: bool,
    front: &mut Front,
    stopped: &dyn Fn() -> bool,
) {
    if e.cool_down.is_zero() {
        return;
    }
    let started = Instant::now();
    if let Some(c) = &mut front.view {
        c.note(Some(format!(
            "cooling down {} before the next run",
            humantime::format_duration(e.cool_down)
        )));
    }
    while started.elapsed() < e.cool_down && !stopped() {
        std::thread::sleep((e.cool_down - started.elapsed()).min(Duration::from_millis(100)));
    }
    let Some(base) = &baselines[target] else {
        return;
    };
    let mut still = None;
    while started.elapsed() < e.cool_down + e.cool_down_max && !stopped() {
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
        None if started.elapsed() > e.cool_down + Duration::from_millis(500) => front.say(format!(
            "        cooled down in {:.0} s: back near the baseline",
            started.elapsed().as_secs_f64()
        )),
        None => {}
        Some(why) => front.say(format!(
            "        still busy after {:.0} s ({why}): going on (cool_down_max)",
            started.elapsed().as_secs_f64()
        )),
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
