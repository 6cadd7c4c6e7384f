//! The run pipeline: a plan → a prepared target → the engine → a result,
//! and the outputs and exit code of a run. Shared by `yace run`, `yace ab`
//! and scenarios.

use crate::{environment, exit, signals, Failure};
use engine::{Flow, Next, Outcome, Sample, Sink};
use plan::{Load, Plan};
use scenario::{Action, Capture, Runner, User};
use stats::{EndReason, Recorder, RunFacts, RunResult, SecondRow, Series, Totals};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

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
    build: impl FnOnce(&str) -> Result<Plan, Failure>,
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
    let plan = build(&url)?;
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

/// A scenario's runner as the engine's flow.
pub struct ScenarioFlow {
    pub runner: Runner,
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
