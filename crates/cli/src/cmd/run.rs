//! `yace run`: flags (or a scenario file) → plan → the run library → the
//! summary, the JSON result and the exit code.

use super::driver;
use crate::args::RunArgs;
use crate::failure::{both, exit_code};
use crate::flags::{self, RunFlags};
use crate::{exit, Failure};
use ::run::{Job, Script, StopCause, StopHandle, TargetChoice};
use stats::SecondRow;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::Path;

/// Runs the command; returns the exit code.
pub fn run(a: RunArgs) -> Result<u8, Failure> {
    // The exporters' settings are usage, checked before anything starts.
    export_settings(&a)?;
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
    // `--shard I/N`: this process's part of the plan.
    let plan = super::shard::plan(&a, plan)?;
    if a.dry_run {
        let text = serde_json::to_string_pretty(&plan.redacted()).expect("plan serializes");
        println!("{text}");
        return Ok(exit::OK);
    }
    let monitored = monitors.specs.len();
    let prepared = driver::prepare(Job {
        plan,
        target,
        script: Script::Request,
        thresholds,
        spelling: &RunFlags,
        monitors,
    })?;
    execute(&a, prepared, monitored)
}

/// Runs a prepared job, watched as the flags and the terminal say; then
/// the summary and the output files.
fn execute(a: &RunArgs, mut prepared: ::run::Prepared, monitored: usize) -> Result<u8, Failure> {
    let json_out = driver::create_output("--json", a.json.as_deref())?;
    let junit_out = driver::create_output("--junit", a.junit.as_deref())?;
    let html_out = driver::create_output("--html", a.html.as_deref())?;
    // Steering (issue #18): one callback for the terminal's keys and the
    // page's buttons (--dashboard-control), made only where one steers.
    let steer = (a.dashboard_control || Watching::tui(a))
        .then(|| prepared.steer())
        .flatten();
    let on_steer = steer.clone().map(steering);
    // `--dashboard`: the live page, said on stderr before a view takes it.
    let mut page = browser_page(a, &prepared, steer, on_steer.clone())?;
    // `--prometheus`, `--otlp`: the metrics out, from the same rows.
    let mut exporters = exporters(a, &prepared)?;
    // `--start-at`: wait for the agreed start (the target is probed).
    let start = super::shard::wait(a, &prepared)?;
    let stop = StopHandle::new();
    let mut watching = Watching::choose(a, &prepared, monitored, &stop, on_steer);
    let observe = |rows: &[SecondRow]| {
        watching.observe(rows);
        if let Some(p) = &mut page {
            p.observe(rows);
        }
        if let Some(x) = &mut exporters {
            x.observe(rows);
        }
    };
    let done = super::shard::execute(&start, prepared, observe, &stop);
    // The screen is back before anything else is printed (an error too),
    // so the summary stays in the scrollback.
    let (markers, view_cpu_s) = watching.finish();
    let mut done = done?;
    done.result.markers = markers;
    // What watching the run cost, each extra on its own threads' clocks.
    let extras = &mut done.result.client.extras_cpu_s;
    let mut cost = |name: &str, cpu_s: Option<f64>| {
        if let Some(s) = cpu_s {
            extras.insert(name.to_string(), (s * 1e6).round() / 1e6);
        }
    };
    cost("live_view", view_cpu_s);
    cost("live_page", page.as_ref().map(dashboard::Page::cpu_s));
    cost(
        "exporters",
        exporters.as_ref().map(export::Exporters::cpu_s),
    );
    start.stamp(&mut done.result);
    // A closed stdout (yace run | head) must not lose the JSON result.
    let _ = report::text::summary_in(
        &done.result,
        std::io::stdout().lock(),
        graphs(a),
        driver::language(a.lang),
    );
    driver::write_json(&done.result, json_out)?;
    driver::write_junit(&done.result, junit_out)?;
    driver::write_html(&done.result, html_out, driver::language(a.lang))?;
    start.emit(&done.result);
    // The page's readers get the report of the result as written.
    if let Some(p) = page {
        p.finish(&done.result);
    }
    // The metrics' last values are the result's own.
    if let Some(x) = exporters {
        let linger = humantime::parse_duration(&a.prometheus_linger).unwrap_or_default();
        for note in x.finish(&done.result, linger) {
            eprintln!("warning: {note}");
        }
    }
    if let Some(line) = crate::failure::all_failed_line(&done) {
        eprintln!("error: {line}");
    }
    Ok(start.exit_code(exit_code(&done)))
}

/// `--prometheus [ADDR]` and `--otlp`: started before the load, every
/// problem at once (a bad address, a port in use, a bad OTEL_ variable).
fn exporters(a: &RunArgs, p: &::run::Prepared) -> Result<Option<export::Exporters>, Failure> {
    let Some((addr, otlp)) = export_settings(a)? else {
        return Ok(None);
    };
    let x =
        export::Exporters::start(export::Info::of(&p.plan), addr, otlp.clone()).map_err(|e| {
            Failure::usage(format!(
                "--prometheus {}: cannot listen: {e}",
                a.prometheus.as_deref().unwrap_or("")
            ))
        })?;
    if let Some(url) = x.scrape_url() {
        eprintln!("yace: metrics for Prometheus at {url}");
    }
    if let Some(c) = otlp {
        eprintln!(
            "yace: pushing metrics over OTLP to {} every {}",
            c.url(),
            humantime::format_duration(c.interval)
        );
    }
    Ok(Some(x))
}

/// The exporters' settings, if any is asked for: where Prometheus scrapes,
/// and the OTLP configuration from the environment.
#[allow(clippy::type_complexity)]
fn export_settings(
    a: &RunArgs,
) -> Result<Option<(Option<std::net::SocketAddr>, Option<export::OtlpConfig>)>, Failure> {
    if a.prometheus.is_none() && !a.otlp {
        return Ok(None);
    }
    let mut bad = Vec::new();
    let addr = a.prometheus.as_deref().and_then(|s| {
        let s = s.trim();
        // A port alone is on 127.0.0.1.
        let full = if s.parse::<u16>().is_ok() {
            format!("127.0.0.1:{s}")
        } else {
            s.to_string()
        };
        full.parse::<std::net::SocketAddr>()
            .map_err(|_| {
                bad.push(format!(
                    "--prometheus {s}: not an address (give host:port, e.g. 127.0.0.1:9464, or a port)"
                ))
            })
            .ok()
    });
    if humantime::parse_duration(&a.prometheus_linger).is_err() {
        bad.push(format!(
            "--prometheus-linger {}: not a duration (e.g. 15s)",
            a.prometheus_linger
        ));
    }
    let otlp = if a.otlp {
        export::OtlpConfig::from_env(|k| std::env::var(k).ok())
            .map_err(|e| bad.extend(e))
            .ok()
    } else {
        None
    };
    if !bad.is_empty() {
        return Err(Failure::usage(bad.join("\n")));
    }
    Ok(Some((addr, otlp)))
}

/// `--dashboard [ADDR]`: the live browser page (crates/dashboard), serving
/// from now until the run's report is out.
fn browser_page(
    a: &RunArgs,
    p: &::run::Prepared,
    steer: Option<std::sync::Arc<engine::Steer>>,
    on_steer: Option<live::OnSteer>,
) -> Result<Option<dashboard::Page>, Failure> {
    let Some(addr) = &a.dashboard else {
        return Ok(None);
    };
    let lang = driver::language(a.lang);
    let mut options = dashboard::Options::from_flags(addr, a.dashboard_token.as_deref(), lang)
        .map_err(Failure::usage)?;
    if a.dashboard_control {
        options = options
            .with_control(page_control(p, steer, on_steer))
            .map_err(Failure::usage)?;
    }
    let threads = engine::effective_threads(&p.plan);
    let setup = live::Setup::of(&p.plan, threads, 0, &RunFlags);
    let run = dashboard::Run {
        plan: p.plan.redacted(),
        threads,
        cpus_allowed: host::facts::cpus().allowed.len(),
        planned_s: setup.duration_s,
        planned_requests: setup.requests,
    };
    let at = options.addr;
    let page = dashboard::Page::start(options, run).map_err(|e| {
        Failure::runtime(format!(
            "--dashboard {at}: cannot listen there ({e}); choose another address, or leave \
             the port out for a free one"
        ))
    })?;
    eprintln!("yace: {}", page.announcement());
    Ok(Some(page))
}

/// `--dashboard-control`: the page's buttons call the terminal keys'
/// callback; where the run cannot be steered, the page says why.
fn page_control(
    p: &::run::Prepared,
    steer: Option<std::sync::Arc<engine::Steer>>,
    on_steer: Option<live::OnSteer>,
) -> dashboard::Control {
    let (Some(st), Some(f)) = (steer, on_steer) else {
        let why = if p.plan.shard.is_some() {
            "a shard's load is not steered (its share of a steered timeline across shards is \
             not defined); steer an unsharded run"
        } else {
            "this load cannot be steered: only the open model's rate and the number of users \
             (or of HTTP/1.1 connections) can be"
        };
        return dashboard::Control::Unavailable(why.into());
    };
    let users = st.steers_users();
    dashboard::Control::On {
        act: std::sync::Arc::new(move |action| {
            f(match action {
                dashboard::Action::Faster => live::Steer::Faster,
                dashboard::Action::Slower => live::Steer::Slower,
                dashboard::Action::Pause => live::Steer::Pause,
                dashboard::Action::Rate(r) => live::Steer::Rate(r),
            })
        }),
        now: std::sync::Arc::new(move || match st.users() {
            Some(u) => format!("{} users", report::count(u.active())),
            None => format!(
                "×{:.2} · {}/s",
                st.factor(),
                report::count((st.planned_rate() * st.factor()).round() as u64)
            ),
        }),
        users,
    }
}

/// How a run is watched while it goes (issue #18): the dashboard on a
/// terminal, the line redrawn in place with `--no-tui`, a plain line every
/// few seconds where there is no terminal (a pipe, CI, `TERM=dumb`),
/// nothing with `--quiet`. All of them read only the finished rows the
/// run's observer hands over.
enum Watching {
    Nothing,
    Dashboard(live::Dashboard),
    InPlace(live::line::InPlace),
    Log(live::line::Log),
}

impl Watching {
    /// Whether the full-screen dashboard is what [`Watching::choose`]
    /// picks (it steers, where the run can be steered).
    fn tui(a: &RunArgs) -> bool {
        let term = std::env::var("TERM").unwrap_or_default();
        !a.quiet
            && !a.no_tui
            && std::io::stderr().is_terminal()
            && !term.is_empty()
            && term != "dumb"
    }

    fn choose(
        a: &RunArgs,
        p: &::run::Prepared,
        monitored: usize,
        stop: &StopHandle,
        on_steer: Option<live::OnSteer>,
    ) -> Watching {
        if a.quiet {
            return Watching::Nothing;
        }
        let setup = live::Setup::of(
            &p.plan,
            engine::effective_threads(&p.plan),
            monitored,
            &RunFlags,
        );
        // A terminal that can move its cursor: not `dumb`, and named.
        let term = std::env::var("TERM").unwrap_or_default();
        let terminal = std::io::stderr().is_terminal() && !term.is_empty() && term != "dumb";
        if terminal && !a.no_tui {
            let stop = stop.clone();
            let look = live::Look::from_env(|k| std::env::var(k).ok());
            // The run can be steered from the keys (the callback the
            // page's buttons share).
            match live::Dashboard::start_steering(
                setup.clone(),
                look,
                move || stop.stop(StopCause::Interrupted),
                on_steer,
                // The server's figures, where monitored.
                p.server_now(),
            ) {
                Ok(d) => return Watching::Dashboard(d),
                Err(e) => eprintln!(
                    "yace: cannot draw the live view on this terminal ({e}); showing the \
                     progress line instead (--no-tui chooses it)"
                ),
            }
        }
        if terminal {
            Watching::InPlace(live::line::InPlace::new(setup.duration_s))
        } else {
            Watching::Log(live::line::Log::new(setup.duration_s, setup.requests))
        }
    }

    fn observe(&mut self, rows: &[SecondRow]) {
        match self {
            Watching::Nothing => {}
            Watching::Dashboard(d) => d.observe(rows),
            Watching::InPlace(l) => l.observe(rows, std::io::stderr().lock()),
            Watching::Log(l) => l.observe(rows, std::io::stderr().lock()),
        }
    }

    /// Puts the terminal back; the markers made on the dashboard, and what
    /// the dashboard cost (its CPU seconds; None without one).
    fn finish(self) -> (Vec<stats::Marker>, Option<f64>) {
        match self {
            Watching::Dashboard(d) => {
                let (markers, cpu_s) = d.finish_costed();
                (markers, Some(cpu_s))
            }
            Watching::InPlace(l) => {
                l.clear(std::io::stderr().lock());
                (Vec::new(), None)
            }
            Watching::Nothing | Watching::Log(_) => (Vec::new(), None),
        }
    }
}

/// What the live view's steering keys do to the open model's rate: ±10%,
/// pause and resume (at the factor before the pause), or a typed rate; each
/// change takes effect [`engine::LEAD_NS`] later, so every worker follows
/// it from the same moment, which the result records. Virtual users and
/// connections: the same keys in users ([`steering_users`]).
fn steering(st: std::sync::Arc<engine::Steer>) -> live::OnSteer {
    if st.steers_users() {
        return steering_users(st);
    }
    // The factor a resume goes back to.
    let resume = std::sync::Mutex::new(1.0f64);
    std::sync::Arc::new(move |key: live::Steer| {
        let now = st.factor();
        let planned = st.planned_rate();
        let mut back = resume.lock().unwrap_or_else(|e| e.into_inner());
        let factor = match key {
            live::Steer::Faster if now == 0.0 => *back * 1.1,
            live::Steer::Faster => now * 1.1,
            live::Steer::Slower => now * 0.9,
            live::Steer::Pause if now == 0.0 => *back,
            live::Steer::Pause => {
                *back = now;
                0.0
            }
            live::Steer::Rate(_) if planned <= 0.0 => {
                return "the plan offers nothing now: no rate to scale".into();
            }
            live::Steer::Rate(r) => r / planned,
        };
        let Some(at) = st.set_factor(factor) else {
            return "the rate cannot be steered in this run".into();
        };
        let at = at as f64 / 1e9;
        if factor == 0.0 {
            format!("paused from {at:.1} s (p resumes)")
        } else {
            format!(
                "rate ×{factor:.2}: {}/s from {at:.1} s",
                report::count((planned * factor).round() as u64)
            )
        }
    })
}

/// The steering keys for virtual users (or the closed model's
/// connections): ±10% of the users active (at least one), pause (no user
/// left; again to bring them back) or a typed number. A change keeps its
/// difference to the plan from then on, so a ramp goes on ramping.
fn steering_users(st: std::sync::Arc<engine::Steer>) -> live::OnSteer {
    // The difference to the plan a resume goes back to, while paused.
    let paused = std::sync::Mutex::new(None::<i64>);
    std::sync::Arc::new(move |key: live::Steer| {
        let Some(now) = st.users() else {
            return "the number of users cannot be steered in this run".into();
        };
        let mut paused = paused.lock().unwrap_or_else(|e| e.into_inner());
        let active = now.active();
        let step = ((active as f64 * 0.1).round() as u64).max(1);
        let set = match key {
            live::Steer::Pause | live::Steer::Faster if paused.is_some() => {
                let back = paused.take().unwrap_or(0);
                st.set_user_delta(back)
            }
            live::Steer::Pause => {
                *paused = Some(now.delta);
                st.set_users(0)
            }
            live::Steer::Faster => st.set_users(active + step),
            live::Steer::Slower => st.set_users(active.saturating_sub(step)),
            live::Steer::Rate(n) => {
                *paused = None;
                st.set_users(n.round() as u64)
            }
        };
        let Some((at, users)) = set else {
            return "the number of users cannot be steered in this run".into();
        };
        let at = at as f64 / 1e9;
        if paused.is_some() {
            format!("paused: no user from {at:.1} s (p resumes)")
        } else if users >= now.max {
            format!(
                "{} users from {at:.1} s (the most this run holds)",
                report::count(users)
            )
        } else {
            format!("{} users from {at:.1} s", report::count(users))
        }
    })
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
    let plan = super::shard::plan(&a, plan)?;
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
    let monitored = monitors.specs.len();
    let prepared = driver::prepare(Job {
        plan,
        target: embedded.map_or(TargetChoice::Url(url), TargetChoice::Embedded),
        script: Script::Scenario(Box::new(sc)),
        thresholds,
        spelling: &RunFlags,
        monitors,
    })?;
    execute(&a, prepared, monitored)
}

/// Graphs under the summary: on a terminal unless `--no-graphs`, elsewhere
/// only with `--graphs`.
fn graphs(a: &RunArgs) -> bool {
    a.graphs || (!a.no_graphs && std::io::stdout().is_terminal())
}
