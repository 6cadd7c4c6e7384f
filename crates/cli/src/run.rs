//! `yace run`: arguments → validated plan → engine → result → outputs.

use crate::args::RunArgs;
use crate::{environment, exit, signals, Failure};
use engine::Sink;
use plan::{
    parse_count, parse_duration, Header, InputErrors, Load, Plan, PlanBuilder, RateStage,
    RequestSpec, Stop, Target, Timeouts, DEFAULT_DURATION,
};
use stats::{EndReason, Recorder, RunFacts, RunResult, SecondRow, Series, Totals};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Connections when `-c` is not given.
const DEFAULT_CONNECTIONS: u64 = 50;
/// Open model: in-flight cap when `--max-inflight` is not given.
const DEFAULT_MAX_INFLIGHT: u64 = 1000;

/// Builds the plan from the flags, reporting every problem at once.
pub fn plan_from(a: &RunArgs, url: &str) -> Result<Plan, InputErrors> {
    let mut b = PlanBuilder::new();
    let target = match Target::parse(url) {
        Ok(t) => Some(t),
        Err(e) => {
            b.error(
                "URL",
                e.to_string(),
                Some("e.g. http://127.0.0.1:8080/path"),
            );
            None
        }
    };
    let mut count =
        |flag: &str, v: &Option<String>| v.as_deref().and_then(|s| b.check(parse_count(flag, s)));
    let connections = count("-c/--connections", &a.connections);
    let requests = count("-n/--requests", &a.requests);
    let threads = count("-t/--threads", &a.threads);
    let max_inflight = count("--max-inflight", &a.max_inflight);
    let streams = count("--streams", &a.streams);
    let duration = a
        .duration
        .as_deref()
        .and_then(|s| b.check(parse_duration("-d/--duration", s)));
    let timeout = b.check(parse_duration("--timeout", &a.timeout));
    let connect_timeout = b.check(parse_duration("--connect-timeout", &a.connect_timeout));
    let rate = a
        .rate
        .as_deref()
        .and_then(|s| match s.trim().parse::<f64>() {
            Ok(r) if r.is_finite() && r > 0.0 => Some(r),
            _ => {
                b.error(
                    "--rate",
                    format!("'{s}' is not a positive number of requests per second"),
                    Some("e.g. --rate 1000 or --rate 2.5"),
                );
                None
            }
        });
    let method = a.method.trim();
    if method.is_empty()
        || !method
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(&c))
    {
        b.error(
            "-m/--method",
            format!("'{}' is not an HTTP method", a.method),
            Some("e.g. GET, POST, HEAD"),
        );
    }
    let mut headers = Vec::new();
    for h in &a.headers {
        match h.split_once(':') {
            Some((n, v)) if !n.trim().is_empty() && !n.contains(char::is_whitespace) => headers
                .push(Header {
                    name: n.trim().to_owned(),
                    value: v.trim().to_owned(),
                }),
            _ => b.error(
                "-H/--header",
                format!("'{h}' is not 'Name: value'"),
                Some("e.g. -H 'Content-Type: application/json'"),
            ),
        }
    }
    let body = match (&a.body, &a.body_file) {
        (Some(t), _) => t.clone().into_bytes(),
        (None, Some(p)) => match std::fs::read(p) {
            Ok(bytes) => bytes,
            Err(e) => {
                b.error(
                    format!("--body-file {}", p.display()),
                    format!("cannot read: {e}"),
                    None,
                );
                Vec::new()
            }
        },
        (None, None) => Vec::new(),
    };
    if b.has_errors() {
        return b.finish(None);
    }
    let Some(target) = target else {
        return b.finish(None);
    };
    let Some((load, duration)) = load_from(
        a,
        &mut b,
        connections,
        requests,
        duration,
        rate,
        max_inflight,
    ) else {
        return b.finish(None);
    };
    let plan = Plan {
        target,
        request: RequestSpec::new(method, headers, body),
        load,
        stop: Stop { requests, duration },
        threads: threads.map_or_else(environment::cpus, |t| t as usize),
        keepalive: !a.no_keepalive,
        timeouts: Timeouts {
            connect: connect_timeout.unwrap_or_default(),
            request: timeout.unwrap_or_default(),
        },
        socket: Default::default(),
        tls: a.tls.options(),
        http2: a.http2.then(|| plan::Http2 {
            streams: streams.map_or(1, |s| s.min(u64::from(u32::MAX)) as u32),
        }),
    };
    b.finish(Some(plan))
}

/// Parses `DURATION:N` or `DURATION:FROM-TO` stages, comma-separated.
fn parse_stages(flag: &str, s: &str) -> Result<Vec<(Duration, f64, f64)>, plan::InputError> {
    let bad = |what: String| plan::InputError {
        source: flag.to_owned(),
        problem: what,
        hint: Some(
            "write DURATION:N or DURATION:FROM-TO, comma-separated: 30s:0-1000,60s:1000".into(),
        ),
    };
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (d, v) = part
            .split_once(':')
            .ok_or_else(|| bad(format!("'{part}' has no ':'")))?;
        let d = parse_duration(flag, d).map_err(|e| bad(e.problem))?;
        let num = |x: &str| {
            x.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| bad(format!("'{x}' in '{part}' is not a number ≥ 0")))
        };
        let (from, to) = match v.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let x = num(v)?;
                (x, x)
            }
        };
        out.push((d, from, to));
    }
    if out.is_empty() {
        return Err(bad("no stages given".into()));
    }
    Ok(out)
}

/// Picks the load model from the flags: open (--rate/--stages), virtual
/// users (--users/--user-stages, or --think/--pacing), else closed. Returns
/// the model and the run's duration.
#[allow(clippy::too_many_arguments)]
fn load_from(
    a: &RunArgs,
    b: &mut PlanBuilder,
    connections: Option<u64>,
    requests: Option<u64>,
    duration: Option<Duration>,
    rate: Option<f64>,
    max_inflight: Option<u64>,
) -> Option<(Load, Option<Duration>)> {
    let open = rate.is_some() || a.stages.is_some();
    let users_flags = a.users.is_some() || a.user_stages.is_some();
    let users = users_flags || a.think.is_some() || a.pacing.is_some();
    if open && users {
        b.error(
            "--rate/--stages",
            "the open model and virtual users exclude each other",
            Some("pick one: --rate N, or -u N with --think/--pacing"),
        );
        return None;
    }
    if a.rate.is_some() && a.stages.is_some() {
        b.error(
            "--rate",
            "give either --rate or --stages",
            Some("--stages 60s:1000 is a constant rate"),
        );
        return None;
    }
    if (a.ramp_up.is_some() || a.ramp_down.is_some()) && a.users.is_none() {
        b.error(
            "--ramp-up/--ramp-down",
            "apply to --users",
            Some("e.g. -u 100 --ramp-up 30s"),
        );
    }
    if a.max_inflight.is_some() && !open {
        b.error(
            "--max-inflight",
            "only applies to the open model",
            Some("add --rate N"),
        );
    }
    let dur = |flag: &str, v: &Option<String>, b: &mut PlanBuilder| {
        v.as_deref().and_then(|s| b.check(parse_duration(flag, s)))
    };
    if open {
        let late = match a.late.as_str() {
            "drop" => dur("--late-after", &Some(a.late_after.clone()), b)
                .map(|after| plan::Late::Drop { after }),
            "catch-up" | "catchup" | "send" => Some(plan::Late::CatchUp),
            other => {
                b.error(
                    "--late",
                    format!("'{other}' is not a policy"),
                    Some("use drop or catch-up"),
                );
                None
            }
        };
        let stages: Vec<RateStage> = match (&a.stages, rate) {
            (Some(s), _) => b
                .check(parse_stages("--stages", s))?
                .into_iter()
                .map(|(duration, from, to)| RateStage { duration, from, to })
                .collect(),
            (None, Some(r)) => {
                let d = match (duration, requests) {
                    (Some(d), _) => d,
                    // Only -n: the timetable ends when the n-th request is due.
                    (None, Some(n)) => {
                        match Duration::try_from_secs_f64(n as f64 / r + 1e-3) {
                            Ok(d) => d,
                            Err(_) => {
                                b.error("-n/--rate", format!("{n} requests at {r}/s would take longer than yace can count"), Some("give -d, or a higher rate"));
                                return None;
                            }
                        }
                    }
                    (None, None) => DEFAULT_DURATION,
                };
                vec![RateStage {
                    duration: d,
                    from: r,
                    to: r,
                }]
            }
            (None, None) => unreachable!("open model without a rate"),
        };
        let length: Duration = stages.iter().map(|s| s.duration).sum();
        let load = Load::Open {
            stages,
            max_inflight: max_inflight.or(connections).unwrap_or(DEFAULT_MAX_INFLIGHT),
            late: late?,
        };
        return Some((load, duration.or(Some(length))));
    }
    if users {
        let pacing = dur("--pacing", &a.pacing, b);
        let think = match a.think.as_deref().map(plan::Think::parse) {
            None => plan::Think::None,
            Some(Ok(t)) => t,
            Some(Err(e)) => {
                b.error(
                    "--think",
                    e,
                    Some("e.g. 2s, uniform(1s, 3s), exponential(2s)"),
                );
                return None;
            }
        };
        let stages: Vec<plan::UserStage> = if let Some(s) = &a.user_stages {
            b.check(parse_stages("--user-stages", s))?
                .into_iter()
                .map(|(duration, from, to)| plan::UserStage { duration, from, to })
                .collect()
        } else {
            let n = match &a.users {
                Some(u) => b.check(parse_count("-u/--users", u))? as f64,
                None => connections.unwrap_or(DEFAULT_CONNECTIONS) as f64,
            };
            let up = dur("--ramp-up", &a.ramp_up, b).unwrap_or_default();
            let down = dur("--ramp-down", &a.ramp_down, b).unwrap_or_default();
            let total = duration.unwrap_or(up + DEFAULT_DURATION + down);
            let Some(hold) = total.checked_sub(up + down) else {
                b.error(
                    "-d/--duration",
                    format!("{total:?} is shorter than --ramp-up plus --ramp-down"),
                    Some("-d is the whole run, ramps included"),
                );
                return None;
            };
            let mut st = Vec::new();
            if !up.is_zero() {
                st.push(plan::UserStage {
                    duration: up,
                    from: 0.0,
                    to: n,
                });
            }
            st.push(plan::UserStage {
                duration: hold,
                from: n,
                to: n,
            });
            if !down.is_zero() {
                st.push(plan::UserStage {
                    duration: down,
                    from: n,
                    to: 0.0,
                });
            }
            st
        };
        let length: Duration = stages.iter().map(|s| s.duration).sum();
        return Some((
            Load::Users {
                stages,
                pacing,
                think,
            },
            duration.or(Some(length)),
        ));
    }
    let c = connections.unwrap_or(DEFAULT_CONNECTIONS);
    let duration = match (duration, requests) {
        (None, None) => Some(DEFAULT_DURATION),
        (d, _) => d,
    };
    // More connections than requests would leave some idle (ab refuses this).
    Some((
        Load::Closed {
            connections: requests.map_or(c, |n| c.min(n)),
        },
        duration,
    ))
}

/// A plan ready to run: the target is up (embedded or probed) and resolved.
pub struct Prepared {
    pub plan: Plan,
    pub addr: std::net::SocketAddr,
    pub embedded: Option<target::Server>,
}

/// Starts the embedded target if there is no URL, builds the plan, resolves
/// the target and checks that something listens there.
pub fn prepare(
    url: Option<&str>,
    build: impl FnOnce(&str) -> Result<Plan, InputErrors>,
    dry_run: bool,
) -> Result<Option<Prepared>, Failure> {
    let embedded = match url {
        Some(_) => None,
        None => Some(
            target::Server::start(target::Config::default())
                .map_err(|e| Failure::runtime(format!("cannot start the embedded target: {e}")))?,
        ),
    };
    let url = url
        .map(str::to_owned)
        .unwrap_or_else(|| embedded.as_ref().map(|s| s.url()).unwrap_or_default());
    let plan = build(&url).map_err(|e| Failure::usage(e.to_string()))?;
    if dry_run {
        let text = serde_json::to_string_pretty(&plan).expect("plan serializes");
        println!("{text}");
        return Ok(None);
    }
    // The embedded target runs in this process: both ends of each connection use descriptors.
    let fds = plan.load.max_connections() * if embedded.is_some() { 2 } else { 1 };
    if let Some(note) = crate::doctor::raise_nofile(crate::doctor::fds_needed(fds)) {
        eprintln!("yace: {note}");
    }
    for w in crate::doctor::preflight(&plan) {
        eprintln!("warning: {w}");
    }
    if embedded.is_some() {
        eprintln!(
            "yace: no URL given, so benchmarking the embedded target started at {url} \
             (`yace serve`); it shares this machine's CPUs with the client"
        );
    }
    engine::tls_setup(&plan).map_err(|e| Failure::usage(e.to_string()))?;
    let addr = engine::resolve(&plan).map_err(|e| Failure::runtime(format!("{url}: {e}")))?;
    if let Err(e) = engine::probe(addr, plan.timeouts.connect).or_else(|e| {
        // A reset or abort after the handshake means something listens there:
        // let the run go on and classify what happens.
        match e.kind() {
            std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted => {
                Ok(Duration::ZERO)
            }
            _ => Err(e),
        }
    }) {
        return Err(Failure::runtime(format!(
            "cannot connect to {addr} for {url}: {e} (is the server running and listening \
             there? check the host and port)"
        )));
    }
    Ok(Some(Prepared {
        plan,
        addr,
        embedded,
    }))
}

/// Creates an output file before the run, so a bad path fails before any load.
pub fn create_output(flag: &str, path: Option<&Path>) -> Result<Option<std::fs::File>, Failure> {
    path.map(|p| {
        std::fs::File::create(p).map_err(|e| {
            Failure::usage(format!(
                "{flag} {}: cannot create the file: {e} (check that its directory exists and is \
                 writable)",
                p.display()
            ))
        })
    })
    .transpose()
}

/// What a finished (or interrupted) run leaves.
pub struct Executed<X, F> {
    pub result: RunResult,
    pub signal: Option<i32>,
    /// The extra sinks, one per worker, after the run.
    pub extras: Vec<X>,
    /// The flows, one per worker, after the run (a scenario's check counts).
    #[allow(dead_code)] // Read by scenario runs, which land next.
    pub flows: Vec<F>,
}

/// The flow of a plain run: the plan's request, with the plan's think time.
pub fn fixed_flow(plan: &Plan) -> impl FnMut(usize) -> engine::Fixed + use<> {
    // Virtual users keep cookie jars (sessions work); the closed model keeps
    // the shared, copy-free request.
    let (think, request) = match &plan.load {
        Load::Users { think, .. } => (*think, Some(plan.encode_request())),
        _ => (plan::Think::None, None),
    };
    move |w| {
        let f = engine::Fixed::new(think, 0x9E37_79B9_7F4A_7C15 ^ (w as u64 + 1));
        match &request {
            Some(r) => f.with_cookies(r.clone()),
            None => f,
        }
    }
}

/// Runs a prepared plan. Each worker feeds a [`Recorder`] and the extra sink
/// `extra(worker)` (use `None::<()>`-like `Option` sinks when there is none);
/// `progress` sees the finished per-second rows about every 50 ms.
pub fn execute<X: Sink, F: engine::Flow>(
    p: &Prepared,
    extra: impl FnMut(usize) -> X,
    flow: impl FnMut(usize) -> F,
    step_names: &[String],
    mut progress: impl FnMut(&[SecondRow]),
) -> Result<Executed<X, F>, Failure> {
    signals::install();
    let plan = &p.plan;
    let threads = engine::effective_threads(plan);
    let series = Arc::new(Mutex::new(Series::new(threads)));
    let options = stats::RecorderOptions {
        scheduled: !matches!(plan.load, Load::Closed { .. }),
        steps: step_names.len(),
        tls: plan.target.scheme == plan::Scheme::Https,
    };
    let workers: Vec<((Recorder, X), F)> = (0..threads)
        .map(|w| Recorder::new(w, options, series.clone()))
        .zip((0..threads).map(extra))
        .zip((0..threads).map(flow))
        .collect();
    let stop = AtomicBool::new(false);
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let epoch = engine::clock_ns();
    let addr = p.addr;
    let outputs = std::thread::scope(|s| {
        let h = s.spawn(|| engine::run(plan, addr, workers, epoch, &stop));
        while !h.is_finished() {
            std::thread::sleep(Duration::from_millis(50));
            if signals::received().is_some() {
                stop.store(true, Ordering::Relaxed);
            }
            progress(series.lock().unwrap_or_else(|e| e.into_inner()).rows());
        }
        h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
    .map_err(|e| {
        let mut m = e.to_string();
        if m.contains("os error 24") {
            m = format!("{m}: {}", environment::limits_note());
        }
        Failure::runtime(m)
    })?;
    // The run lasted until its last worker ended (not until threads were joined).
    let duration_ns = outputs
        .iter()
        .map(|(_, _, r)| r.ended_at)
        .max()
        .unwrap_or(0);

    let mut totals = Totals::default();
    let mut cpu_ns = 0;
    let mut busiest: f64 = 0.0;
    let mut opened = 0;
    let mut server_software = None;
    let mut tls = (plan.target.scheme == plan::Scheme::Https).then_some(stats::TlsInfo {
        version: None,
        cipher: None,
        verified: !plan.tls.insecure,
        resumed_handshakes: 0,
        full_handshakes: 0,
    });
    let mut http2 = plan.http2.map(|h| stats::Http2Info {
        streams: h.streams,
        ..Default::default()
    });
    let mut extras = Vec::with_capacity(outputs.len());
    let mut flows = Vec::with_capacity(outputs.len());
    for ((rec, x), f, rep) in outputs {
        flows.push(f);
        totals.merge(&rec.totals);
        cpu_ns += rep.cpu_ns;
        busiest = busiest.max(rep.cpu_ns as f64 / rep.wall_ns.max(1) as f64);
        opened += rep.connections_opened;
        if let Some(t) = tls.as_mut() {
            t.resumed_handshakes += rep.tls_resumed;
            t.full_handshakes += rep.tls_full;
            if t.version.is_none() {
                t.version.clone_from(&rep.tls_version);
                t.cipher.clone_from(&rep.tls_cipher);
            }
        }
        if let Some(h) = http2.as_mut() {
            h.goaways += rep.h2_goaways;
            if let Some(m) = rep.h2_max_streams {
                h.server_max_streams = Some(h.server_max_streams.map_or(m, |x| x.min(m)));
            }
        }
        if server_software.is_none() {
            server_software = rep.server;
        }
        extras.push(x);
    }
    let rows = Arc::try_unwrap(series)
        .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .unwrap_or_else(|_| unreachable!("workers have ended"))
        .finish(duration_ns);
    let signal = signals::received();
    let reason = match signal {
        Some(libc::SIGTERM) => EndReason::Terminated,
        Some(_) => EndReason::Interrupted,
        None if plan
            .stop
            .duration
            .is_some_and(|d| duration_ns >= d.as_nanos() as u64) =>
        {
            EndReason::Duration
        }
        None => EndReason::Completed,
    };
    let result = RunResult::build(
        &totals,
        rows,
        RunFacts {
            environment: environment::collect(p.addr, p.embedded.is_some()),
            plan: plan.clone(),
            started_at,
            duration_ns,
            reason,
            cpu_ns,
            busiest_thread: busiest.min(1.0),
            threads,
            connections_opened: opened,
            server_software,
            step_names: step_names.to_vec(),
            checks: Vec::new(),
            tls,
            http2,
        },
    );
    let mut result = result;
    if result
        .outcomes
        .get(&engine::Outcome::ClientResource)
        .copied()
        .unwrap_or(0)
        > 0
    {
        result.warnings.push(environment::limits_note());
    }
    Ok(Executed {
        result,
        signal,
        extras,
        flows,
    })
}

/// Parses `--threshold` expressions, reporting every bad one.
pub fn thresholds_from(
    exprs: &[String],
    step: Option<&str>,
) -> Result<Vec<stats::threshold::Threshold>, Failure> {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for e in exprs {
        match stats::threshold::Threshold::parse(e, step) {
            Ok(t) => ok.push(t),
            Err(msg) => bad.push(format!("--threshold: {msg}")),
        }
    }
    if bad.is_empty() {
        Ok(ok)
    } else {
        Err(Failure::usage(bad.join("\n")))
    }
}

/// Writes the JSON result into the file created before the run.
pub fn write_json(
    result: &RunResult,
    file: Option<std::fs::File>,
    path: Option<&Path>,
) -> Result<(), Failure> {
    if let (Some(f), Some(p)) = (file, path) {
        let mut w = std::io::BufWriter::new(f);
        report::json::write(result, &mut w)
            .and_then(|()| w.flush())
            .and_then(|()| w.get_ref().sync_all().or(Ok(())))
            .map_err(|e| output_failure("--json", p, e))?;
        if result.end.partial {
            eprintln!("yace: partial result written to {}", p.display());
        }
    }
    Ok(())
}

/// An output file could not be written: a full disk gets its own exit code.
pub fn output_failure(flag: &str, path: &Path, e: std::io::Error) -> Failure {
    if e.raw_os_error() == Some(libc::ENOSPC) {
        Failure {
            code: exit::DISK_FULL,
            message: format!(
                "{flag} {}: the disk is full ({e}); the summary above is complete, free some \
                 space and re-run to keep the JSON",
                path.display()
            ),
        }
    } else {
        Failure::runtime(format!("{flag} {}: cannot write: {e}", path.display()))
    }
}

/// The exit code for how the run ended: a signal first, then thresholds.
pub fn exit_code(signal: Option<i32>, result: &RunResult) -> u8 {
    match signal {
        Some(libc::SIGTERM) => exit::SIGTERM,
        Some(_) => exit::SIGINT,
        None if result.thresholds.iter().any(|t| !t.passed) => exit::THRESHOLD,
        None => exit::OK,
    }
}

/// Runs the command; returns the exit code.
pub fn run(a: RunArgs) -> Result<u8, Failure> {
    if let Some(file) = a.file.clone() {
        return crate::scenario::run(a, &file);
    }
    let thresholds = thresholds_from(&a.thresholds, None)?;
    let Some(prepared) = prepare(a.url.as_deref(), |url| plan_from(&a, url), a.dry_run)? else {
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
