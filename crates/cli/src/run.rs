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
    if a.max_inflight.is_some() && a.rate.is_none() {
        b.error(
            "--max-inflight",
            "only applies to the open model",
            Some("add --rate N"),
        );
    }
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
    let duration = match (duration, requests, rate) {
        (Some(d), _, _) => Some(d),
        (None, Some(_), None) => None,
        // Open model with only -n: the timetable ends when the n-th is due.
        (None, Some(n), Some(r)) => Some(Duration::from_secs_f64(n as f64 / r + 1e-3)),
        (None, None, _) => Some(DEFAULT_DURATION),
    };
    let load = match rate {
        None => {
            let c = connections.unwrap_or(DEFAULT_CONNECTIONS);
            // More connections than requests would leave some idle (ab refuses this).
            Load::Closed {
                connections: requests.map_or(c, |n| c.min(n)),
            }
        }
        Some(r) => Load::Open {
            stages: vec![RateStage {
                duration: duration.unwrap_or(DEFAULT_DURATION),
                from: r,
                to: r,
            }],
            max_inflight: max_inflight.or(connections).unwrap_or(DEFAULT_MAX_INFLIGHT),
        },
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
    };
    b.finish(Some(plan))
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
    if embedded.is_some() {
        eprintln!(
            "yace: no URL given, so benchmarking the embedded target started at {url} \
             (`yace serve`); it shares this machine's CPUs with the client"
        );
    }
    let addr = engine::resolve(&plan).map_err(|e| Failure::runtime(format!("{url}: {e}")))?;
    if let Err(e) = engine::probe(addr, plan.timeouts.connect) {
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
pub struct Executed<X> {
    pub result: RunResult,
    pub signal: Option<i32>,
    /// The extra sinks, one per worker, after the run.
    pub extras: Vec<X>,
}

/// Runs a prepared plan. Each worker feeds a [`Recorder`] and the extra sink
/// `extra(worker)` (use `None::<()>`-like `Option` sinks when there is none);
/// `progress` sees the finished per-second rows about every 50 ms.
pub fn execute<X: Sink>(
    p: &Prepared,
    extra: impl FnMut(usize) -> X,
    mut progress: impl FnMut(&[SecondRow]),
) -> Result<Executed<X>, Failure> {
    signals::install();
    let plan = &p.plan;
    let threads = engine::effective_threads(plan);
    let series = Arc::new(Mutex::new(Series::new(threads)));
    let open = matches!(plan.load, Load::Open { .. });
    let sinks: Vec<(Recorder, X)> = (0..threads)
        .map(|w| Recorder::new(w, open, series.clone()))
        .zip((0..threads).map(extra))
        .collect();
    let stop = AtomicBool::new(false);
    let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let epoch = engine::clock_ns();
    let addr = p.addr;
    let outputs = std::thread::scope(|s| {
        let h = s.spawn(|| engine::run(plan, addr, sinks, epoch, &stop));
        while !h.is_finished() {
            std::thread::sleep(Duration::from_millis(50));
            if signals::received().is_some() {
                stop.store(true, Ordering::Relaxed);
            }
            progress(series.lock().unwrap_or_else(|e| e.into_inner()).rows());
        }
        h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
    .map_err(|e| Failure::runtime(e.to_string()))?;
    // The run lasted until its last worker ended (not until threads were joined).
    let duration_ns = outputs.iter().map(|(_, r)| r.ended_at).max().unwrap_or(0);

    let mut totals = Totals::default();
    let mut cpu_ns = 0;
    let mut busiest: f64 = 0.0;
    let mut opened = 0;
    let mut server_software = None;
    let mut extras = Vec::with_capacity(outputs.len());
    for ((rec, x), rep) in outputs {
        totals.merge(&rec.totals);
        cpu_ns += rep.cpu_ns;
        busiest = busiest.max(rep.cpu_ns as f64 / rep.wall_ns.max(1) as f64);
        opened += rep.connections_opened;
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
        },
    );
    Ok(Executed {
        result,
        signal,
        extras,
    })
}

/// Writes the JSON result into the file created before the run.
pub fn write_json(
    result: &RunResult,
    file: Option<std::fs::File>,
    path: Option<&Path>,
) -> Result<(), Failure> {
    if let (Some(f), Some(p)) = (file, path) {
        report::json::write(result, std::io::BufWriter::new(f))
            .map_err(|e| Failure::runtime(format!("--json {}: cannot write: {e}", p.display())))?;
        if result.end.partial {
            eprintln!("yace: partial result written to {}", p.display());
        }
    }
    Ok(())
}

/// The exit code for how the run ended.
pub fn exit_code(signal: Option<i32>) -> u8 {
    match signal {
        Some(libc::SIGTERM) => exit::SIGTERM,
        Some(_) => exit::SIGINT,
        None => exit::OK,
    }
}

/// Runs the command; returns the exit code.
pub fn run(a: RunArgs) -> Result<u8, Failure> {
    let Some(prepared) = prepare(a.url.as_deref(), |url| plan_from(&a, url), a.dry_run)? else {
        return Ok(exit::OK);
    };
    let json_out = create_output("--json", a.json.as_deref())?;
    let live = !a.quiet && std::io::stderr().is_terminal();
    let mut shown = 0;
    let done = execute(
        &prepared,
        |_| (),
        |rows| {
            if live {
                shown = progress(rows, shown);
            }
        },
    )?;
    if live {
        eprint!("\r\x1b[K");
    }
    // A closed stdout (yace run | head) must not lose the JSON result.
    let _ = report::text::summary(&done.result, std::io::stdout().lock());
    write_json(&done.result, json_out, a.json.as_deref())?;
    if let Some(server) = prepared.embedded {
        server.shutdown();
    }
    Ok(exit_code(done.signal))
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
