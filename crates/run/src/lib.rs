//! One load test as a library: a [`Job`] (a plan, where its target is, what
//! each user does, the pass/fail thresholds) in, a [`Finished`] run (the
//! result, and whether it was stopped) out. `yace run`, `yace ab` and
//! scenarios call it; the lab, find-max and shards call it in a loop.
//!
//! ```text
//! Job ──prepare──▶ Prepared (target up and probed; notes) ──execute──▶ Finished
//!                                          per-second rows ──▶ observer
//!                                          StopHandle ──▶ ends it early
//! ```
//!
//! It prints nothing and installs no signal handler: what it notices comes
//! back as [`Note`]s, the finished per-second rows go to an observer while
//! the run goes on, and whoever holds a [`StopHandle`] (the CLI, on Ctrl-C)
//! ends the run early with a partial result. No global state: call it as
//! often as you like in one process.

#![forbid(unsafe_code)]

pub mod doctor;
mod error;
mod flow;
mod output;
pub mod preflight;
pub mod probe;

pub use error::Error;
pub use flow::ScenarioFlow;
pub use host::{cpus, limits_note};
pub use output::Output;

use engine::Sink;
use plan::{Load, Plan};
use stats::threshold::Threshold;
use stats::{EndReason, Recorder, RunFacts, RunResult, SecondRow, Series, Totals};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// One load test to run.
#[derive(Debug)]
pub struct Job {
    pub plan: Plan,
    pub target: TargetChoice,
    pub script: Script,
    /// Judged against the result when the run ends.
    pub thresholds: Vec<Threshold>,
    /// How the result's warnings name a setting they suggest: the caller's
    /// flags (`plan::Keys` for neutral names).
    pub spelling: &'static dyn plan::Spelling,
    /// What to watch on the server while the load runs (`--monitor`);
    /// `Default` for nothing.
    pub monitors: monitor::Config,
}

/// Where the plan's requests go.
#[derive(Debug)]
pub enum TargetChoice {
    /// The plan's own target, as the user wrote its URL (for messages).
    Url(String),
    /// The embedded target, started beforehand with [`Embedded::start`];
    /// the plan's target is its URL. It runs in this process, sharing its
    /// CPUs and file descriptors, and stops when the run ends.
    Embedded(Embedded),
}

/// What each user does.
#[derive(Debug)]
pub enum Script {
    /// The plan's one request (with the plan's think time).
    Request,
    /// A scenario's journeys; its checks are counted into the result.
    Scenario(Box<scenario::Scenario>),
}

/// The embedded target (`yace serve`), started in this process.
#[derive(Debug)]
pub struct Embedded(serve::Server);

impl Embedded {
    /// Starts it on 127.0.0.1, on a free port.
    pub fn start() -> Result<Embedded, Error> {
        serve::Server::start(serve::Config::default())
            .map(Embedded)
            .map_err(|e| Error::runtime(format!("cannot start the embedded target: {e}")))
    }

    /// Its URL, for the plan's target.
    pub fn url(&self) -> String {
        self.0.url()
    }
}

/// Something [`prepare`] noticed that the caller may want to show; the run
/// goes on regardless.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// The open-file limit was raised for this run (what was done).
    RaisedNofile(String),
    /// A cheap check of this machine against the plan found a problem.
    Preflight(String),
    /// The job benchmarks the embedded target, started at this URL.
    Embedded { url: String },
}

/// Why a run was stopped from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCause {
    /// Ctrl-C (SIGINT), or any caller that wants the run over.
    Interrupted,
    /// SIGTERM.
    Terminated,
}

/// Ends a run early: the run stops within about 50 ms and its result is
/// marked partial. Cloneable, to hand to another thread; the first cause
/// raised wins.
#[derive(Debug, Clone, Default)]
pub struct StopHandle(Arc<AtomicU8>);

impl StopHandle {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn stop(&self, cause: StopCause) {
        let code = match cause {
            StopCause::Interrupted => 1,
            StopCause::Terminated => 2,
        };
        let _ = self
            .0
            .compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The cause raised so far, if any.
    pub fn cause(&self) -> Option<StopCause> {
        match self.0.load(Ordering::SeqCst) {
            1 => Some(StopCause::Interrupted),
            2 => Some(StopCause::Terminated),
            _ => None,
        }
    }
}

/// A job ready to run: its target is up (embedded or probed) and resolved.
#[derive(Debug)]
pub struct Prepared {
    pub plan: Plan,
    /// Where connections go.
    pub addr: SocketAddr,
    /// What preparing noticed, in order.
    pub notes: Vec<Note>,
    embedded: Option<Embedded>,
    script: Script,
    thresholds: Vec<Threshold>,
    spelling: &'static dyn plan::Spelling,
    /// Connected (each read once), started with the load.
    monitors: Option<monitor::Monitors>,
    /// The open model's rate, steerable while it runs ([`Prepared::steer`]).
    steer: Option<Arc<engine::Steer>>,
    /// The running monitors' latest samples, once they start
    /// ([`Prepared::server_now`]).
    peek: Arc<std::sync::OnceLock<monitor::Peek>>,
}

/// Gets a job ready: raises the open-file limit if it can, checks this
/// machine against the plan, sets up TLS, resolves the target and checks
/// that something listens there. On failure the error carries the notes
/// found before it.
pub fn prepare(job: Job) -> Result<Prepared, Error> {
    let Job {
        plan,
        target,
        script,
        thresholds,
        spelling,
        monitors,
    } = job;
    let (url, embedded) = match target {
        // As messages show it: no password or secret query value.
        TargetChoice::Url(url) => (plan.secrets.url(&url), None),
        TargetChoice::Embedded(e) => (e.url(), Some(e)),
    };
    let mut notes = Vec::new();
    // The embedded target runs in this process: both ends of each connection use descriptors.
    let fds = plan.load.max_connections() * if embedded.is_some() { 2 } else { 1 };
    if let Some(note) = host::raise_nofile(host::fds_needed(fds)) {
        notes.push(Note::RaisedNofile(note));
    }
    notes.extend(host::preflight(&plan).into_iter().map(Note::Preflight));
    if let Some(e) = &embedded {
        notes.push(Note::Embedded { url: e.url() });
    }
    let failed = |e: Error, notes: &[Note]| e.with_notes(notes.to_vec());
    let tls = match engine::tls_setup(&plan) {
        Ok(tls) => tls,
        Err(e) => {
            let message = match &e {
                engine::EngineError::Tls(t) => tls_message(t, spelling),
                other => other.to_string(),
            };
            return Err(failed(Error::usage(message), &notes));
        }
    };
    let addr = match engine::resolve(&plan) {
        Ok(a) => a,
        Err(e) => {
            let e = Error::runtime(format!(
                "{url}: {e} (a typo in the host? check its spelling, the DNS server in \
                 /etc/resolv.conf, or add it to /etc/hosts)"
            ));
            return Err(failed(e, &notes));
        }
    };
    if plan.target.unix.is_some() && !plan.socket.sources.is_empty() {
        let e = "--source-addrs: a unix socket has no source address; leave it out, or use a \
                 TCP URL";
        return Err(failed(Error::usage(e.to_owned()), &notes));
    }
    if let Err(e) = engine::check_sources(&plan, addr) {
        return Err(failed(Error::usage(e), &notes));
    }
    // One exchange on the run's protocol (the TLS handshake with ALPN, the
    // HTTP/2 preface): a mismatch is one line and its fix, not a run of
    // identical errors. It is also the connect check; plain HTTP/1.1 only
    // connects (any byte more would be a request in the server's log). A
    // unix socket is only connected to.
    let http2 = plan.http2.is_some();
    let unix = plan.target.unix.clone();
    let preflight = unix.is_none() && preflight::needed(tls.is_some(), http2);
    let connected = if preflight {
        std::net::TcpStream::connect_timeout(&addr, plan.timeouts.connect).map(Some)
    } else {
        engine::probe_target(&plan, addr, plan.timeouts.connect).map(|_| None)
    };
    let connected = connected.or_else(|e| {
        // A reset or abort after the handshake means something listens there:
        // let the run go on and classify what happens.
        match e.kind() {
            std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted => Ok(None),
            _ => Err(e),
        }
    });
    let tcp = match connected {
        Ok(tcp) => tcp,
        Err(e) => {
            let e = match &unix {
                Some(sock) => Error::runtime(format!(
                    "cannot connect to the unix socket {sock} for {url}: {e} (is the server \
                     running and listening there? check the path, and that this user may \
                     write to the socket)"
                )),
                None => Error::runtime(format!(
                    "cannot connect to {addr} for {url}: {e} (is the server running and \
                     listening there? check the host and port)"
                )),
            };
            return Err(failed(e, &notes));
        }
    };
    if let Some(tcp) = tcp {
        // The run's own request timeout, within the probe's bounds.
        let timeout = plan
            .timeouts
            .request
            .min(probe::RESPONSE_TIMEOUT)
            .max(plan.timeouts.connect);
        if let Err(m) = preflight::exchange(tcp, tls.as_ref(), http2, timeout) {
            let e = Error::runtime(preflight::message(&m, &url, addr, http2, spelling));
            return Err(failed(e, &notes));
        }
    }
    // Every monitor is read once now: a typo or a page that is not there
    // fails before any load is sent, with every problem at once.
    let monitors = if monitors.is_empty() {
        None
    } else {
        let local = embedded.is_some() || host::is_local(addr);
        match monitor::Monitors::connect(&monitors, Some(addr.port()), local) {
            Ok(m) => Some(m),
            Err(problems) => return Err(failed(Error::usage(problems.join("\n")), &notes)),
        }
    };
    Ok(Prepared {
        plan,
        addr,
        notes,
        embedded,
        script,
        thresholds,
        spelling,
        monitors,
        steer: None,
        peek: Arc::default(),
    })
}

/// A TLS set-up problem, naming the caller's flag for the field at fault:
/// `--cacert ca.pem: no certificate in the file`.
pub fn tls_message(e: &engine::tls::TlsError, s: &dyn plan::Spelling) -> String {
    use engine::tls::TlsError;
    use plan::Field;
    match e {
        TlsError::NoSystemRoots => format!(
            "no system CA certificates found (install Debian's ca-certificates, or pass {} FILE, \
             or {})",
            s.name(Field::CaCert),
            s.name(Field::Insecure)
        ),
        TlsError::CertWithoutKey => format!(
            "{} and {} go together",
            s.name(Field::ClientCert),
            s.name(Field::ClientKey)
        ),
        TlsError::ClientAuth(inner) => format!(
            "{}/{}: {inner}",
            s.name(Field::ClientCert),
            s.name(Field::ClientKey)
        ),
        other => match other.field() {
            Some(f) => format!("{} {other}", s.name(f)),
            None => other.to_string(),
        },
    }
}

/// What a finished (or stopped) run leaves.
#[derive(Debug)]
pub struct Finished<X> {
    /// The result, thresholds judged, checks counted.
    pub result: RunResult,
    /// Set when a [`StopHandle`] ended the run early.
    pub stopped_by: Option<StopCause>,
    /// The extra sinks, one per worker, after the run.
    pub extras: Vec<X>,
}

impl<X> Finished<X> {
    /// A threshold was breached.
    pub fn breached(&self) -> bool {
        self.result.thresholds.iter().any(|t| !t.passed)
    }

    /// Every request that ended failed: errors, and not one response. Such
    /// a run measured nothing of the server (a run cut short before any
    /// request ended, with no errors, is not one).
    pub fn all_failed(&self) -> bool {
        let s = &self.result.summary;
        s.errors > 0 && s.responses == 0
    }
}

/// Records the cookies the users' jars could not keep, and says so.
fn cookies_dropped(result: &mut RunResult, dropped: u64) {
    result.cookies_dropped = dropped;
    if dropped > 0 {
        result.warnings.push(format!(
            "{} cookies were not kept: a user's jar holds {} (the oldest goes first) of at \
             most {} bytes each, as a browser does for one site; later requests went without \
             them",
            stats::fmt::count(dropped),
            engine::MAX_COOKIES,
            engine::MAX_COOKIE_BYTES
        ));
    }
}

/// The flow of a plain run: the plan's request, with the plan's think time.
fn fixed_flow(plan: &Plan) -> impl FnMut(usize) -> engine::Fixed + use<> {
    // Virtual users keep cookie jars (sessions work); the closed model keeps
    // the shared, copy-free request.
    let (think, request) = match &plan.load {
        Load::Users { think, .. } => (*think, Some(plan.encode_request())),
        _ => (plan::Think::None, None),
    };
    // One seed for the run: each user's stream follows from it and the
    // user's global index, so workers and shards never think in step.
    move |_worker| {
        let f = engine::Fixed::new(think, 0x9E37_79B9_7F4A_7C15);
        match &request {
            Some(r) => f.with_cookies(r.clone()),
            None => f,
        }
    }
}

impl Prepared {
    /// A handle to steer the load while the run goes on (the live view's
    /// keys): the open model's rate, or the number of virtual users (or
    /// closed-model connections, over HTTP/1.1); `None` for a shard (its
    /// share of a steered timeline is not defined). What was steered is
    /// recorded in the result (`steering`) and replaces the plan's count.
    pub fn steer(&mut self) -> Option<Arc<engine::Steer>> {
        if self.plan.shard.is_some() {
            return None;
        }
        if self.steer.is_none() {
            self.steer = engine::Steer::for_plan(&self.plan).map(Arc::new);
        }
        self.steer.clone()
    }

    /// What the server looks like now, for a live view: (label, value)
    /// lines from the monitors' latest samples, empty until they start and
    /// have two; None when nothing is monitored.
    #[allow(clippy::type_complexity)]
    pub fn server_now(&self) -> Option<Box<dyn Fn() -> Vec<(String, String)> + Send>> {
        self.monitors.as_ref()?;
        let peek = self.peek.clone();
        Some(Box::new(move || {
            peek.get().map(monitor::Peek::now).unwrap_or_default()
        }))
    }

    /// The steering timeline for the result, if the rate was steered.
    fn steered(&self, duration_ns: u64) -> Option<stats::Steered> {
        let st = self.steer.as_ref()?;
        if st.steers_users() {
            return self.users_steered(st, duration_ns);
        }
        let t = st.timeline();
        if !t.steered() {
            return None;
        }
        let schedule = self.plan.schedule();
        let rate_at = |at_ns: u64| {
            let a = schedule.arrivals_at(at_ns);
            let b = schedule.arrivals_at(at_ns + 1_000_000);
            (b - a) * 1000.0
        };
        Some(stats::Steered {
            planned: t.total(&schedule),
            segments: t
                .segments()
                .iter()
                // A change set for after the run ended never took effect.
                .filter(|s| s.at_ns == 0 || s.at_ns < duration_ns)
                .map(|s| stats::SteerSegment {
                    at_s: (s.at_ns as f64 / 1e6).round() / 1e3,
                    factor: (s.factor * 1e4).round() / 1e4,
                    rate: ((rate_at(s.at_ns) * s.factor) * 100.0).round() / 100.0,
                })
                .collect(),
            users: Vec::new(),
        })
    }

    /// The users' steering timeline for the result, if they were steered.
    fn users_steered(&self, st: &engine::Steer, duration_ns: u64) -> Option<stats::Steered> {
        let t = st.user_timeline();
        if !t.steered() {
            return None;
        }
        let crowd = plan::Crowd::of(&self.plan)?;
        let max = st.users().map_or(u64::MAX, |u| u.max);
        Some(stats::Steered {
            planned: self.plan.planned(),
            segments: Vec::new(),
            users: t
                .segments()
                .iter()
                // A change set for after the run ended never took effect.
                .filter(|s| s.at_ns == 0 || s.at_ns < duration_ns)
                .map(|s| stats::UserSteerSegment {
                    at_s: (s.at_ns as f64 / 1e6).round() / 1e3,
                    delta: s.delta,
                    users: (crowd.planned_at(s.at_ns) as i64 + s.delta).clamp(0, max as i64) as u64,
                })
                .collect(),
        })
    }

    /// Runs the job. Each worker feeds its statistics and the extra sink
    /// `extra(worker)` (`|_| ()` for none); `observe` sees the finished
    /// per-second rows about every 50 ms; `stop` ends the run early.
    pub fn execute<X: Sink>(
        mut self,
        extra: impl FnMut(usize) -> X,
        observe: impl FnMut(&[SecondRow]),
        stop: &StopHandle,
    ) -> Result<Finished<X>, Error> {
        let monitors = self.monitors.take();
        let mut done = match &self.script {
            Script::Request => {
                let flow = fixed_flow(&self.plan);
                let (mut done, flows) = self.drive(&[], extra, flow, observe, stop, monitors)?;
                let dropped = flows.iter().map(engine::Fixed::cookies_dropped).sum();
                cookies_dropped(&mut done.result, dropped);
                done
            }
            Script::Scenario(sc) => {
                let names: Vec<String> = sc.steps().iter().map(|s| s.name.clone()).collect();
                let flow = |_| ScenarioFlow::new(sc.runner());
                let (mut done, flows) = self.drive(&names, extra, flow, observe, stop, monitors)?;
                let (checks, cookies_dropped) = flow::checks(flows, &names);
                done.result.checks = checks;
                self::cookies_dropped(&mut done.result, cookies_dropped);
                done
            }
        };
        done.result.thresholds = self
            .thresholds
            .iter()
            .map(|t| t.evaluate(&done.result))
            .collect();
        Ok(done)
    }

    fn drive<X: Sink, F: engine::Flow>(
        &self,
        step_names: &[String],
        extra: impl FnMut(usize) -> X,
        flow: impl FnMut(usize) -> F,
        mut observe: impl FnMut(&[SecondRow]),
        handle: &StopHandle,
        monitors: Option<monitor::Monitors>,
    ) -> Result<(Finished<X>, Vec<F>), Error> {
        let plan = &self.plan;
        let threads = engine::effective_threads(plan);
        let series = Arc::new(Mutex::new(Series::new(threads)));
        let options = stats::RecorderOptions {
            scheduled: !matches!(plan.load, Load::Closed { .. }),
            steps: step_names.len(),
            tls: plan.target.scheme == plan::Scheme::Https,
            paced: match &plan.load {
                Load::Users {
                    pacing: Some(p), ..
                } => Some(p.as_nanos().min(u64::MAX as u128) as u64),
                _ => None,
            },
        };
        let workers: Vec<((Recorder, X), F)> = (0..threads)
            .map(|w| Recorder::new(w, options, series.clone()))
            .zip((0..threads).map(extra))
            .zip((0..threads).map(flow))
            .collect();
        let stop = AtomicBool::new(false);
        let started_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        // The monitors' clock starts with the load's.
        let monitoring = monitors.map(monitor::Monitors::start);
        if let Some(m) = &monitoring {
            let _ = self.peek.set(m.peek());
        }
        let epoch = engine::clock_ns();
        let addr = self.addr;
        let outputs = std::thread::scope(|s| {
            let steer = self.steer.as_deref();
            let stop = &stop;
            let h = s.spawn(move || engine::run_steered(plan, addr, workers, epoch, stop, steer));
            while !h.is_finished() {
                std::thread::sleep(Duration::from_millis(50));
                observe(series.lock().unwrap_or_else(|e| e.into_inner()).rows());
                if handle.cause().is_some() {
                    stop.store(true, Ordering::Relaxed);
                }
            }
            h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
        .map_err(|e| {
            let mut m = e.to_string();
            if m.contains("os error 24") {
                m = format!("{m}: {}", host::limits_note());
            }
            Error::runtime(m)
        })?;
        // The run lasted until its last worker ended (not until threads were joined).
        let duration_ns = outputs
            .iter()
            .map(|(_, _, r)| r.ended_at)
            .max()
            .unwrap_or(0);

        let mut totals = Totals::default();
        let mut cpu_ns = 0;
        let mut wakeups = 0;
        let mut socket_calls = (0, 0);
        let mut busiest: f64 = 0.0;
        let mut opened = 0;
        let mut not_yet_due = Some(0);
        let mut visits: Option<u64> = None;
        let mut paced: Option<stats::Paced> = None;
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
        let mut fcgi = plan.target.is_fcgi().then(stats::FcgiInfo::default);
        let mut extras = Vec::with_capacity(outputs.len());
        let mut flows = Vec::with_capacity(outputs.len());
        for ((rec, x), f, rep) in outputs {
            flows.push(f);
            totals.merge(&rec.totals);
            cpu_ns += rep.cpu_ns;
            wakeups += rep.wakeups;
            socket_calls.0 += rep.socket_reads;
            socket_calls.1 += rep.socket_writes;
            busiest = busiest.max(rep.cpu_ns as f64 / rep.wall_ns.max(1) as f64);
            opened += rep.connections_opened;
            not_yet_due = not_yet_due.zip(rep.not_yet_due).map(|(a, b)| a + b);
            if let Some(v) = rep.visits {
                *visits.get_or_insert(0) += v;
            }
            if let Some(p) = rep.paced {
                let sum = paced.get_or_insert_with(Default::default);
                sum.started += p.started;
                sum.missed += p.missed;
                sum.not_yet_due += p.not_yet_due;
                sum.users += p.users;
                sum.users_never_served += p.users_never_served;
            }
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
            if let Some(f) = fcgi.as_mut() {
                f.stderr_responses += rep.fcgi_stderr_responses;
                f.stderr_bytes += rep.fcgi_stderr_bytes;
                for line in rep.fcgi_stderr_lines {
                    if f.stderr_lines.len() < 5 && !f.stderr_lines.contains(&line) {
                        f.stderr_lines.push(line);
                    }
                }
            }
            if server_software.is_none() {
                server_software = rep.server;
            }
            extras.push(x);
        }
        let (rows, intervals) = Arc::try_unwrap(series)
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .unwrap_or_else(|_| unreachable!("workers have ended"))
            .finish(duration_ns);
        let stopped_by = handle.cause();
        let reason = match stopped_by {
            Some(StopCause::Terminated) => EndReason::Terminated,
            Some(StopCause::Interrupted) => EndReason::Interrupted,
            None if plan
                .stop
                .duration
                .is_some_and(|d| duration_ns >= d.as_nanos() as u64) =>
            {
                EndReason::Duration
            }
            None => EndReason::Completed,
        };
        // Whatever a monitor does, the run has ended: this returns at once.
        let monitored = monitoring.map(monitor::Running::finish);
        let mut result = RunResult::build(
            &totals,
            rows,
            RunFacts {
                environment: host::environment(self.addr, self.embedded.is_some()),
                // Every output is rendered from the result: its plan shows
                // no secret (the plan that was sent is unchanged).
                plan: plan.redacted(),
                started_at,
                duration_ns,
                reason,
                cpu_ns,
                busiest_thread: busiest.min(1.0),
                threads,
                connections_opened: opened,
                not_yet_due,
                visits,
                paced,
                steering: self.steered(duration_ns),
                server_software,
                step_names: step_names.to_vec(),
                checks: Vec::new(),
                tls,
                http2,
                intervals,
            },
            self.spelling,
        );
        result.fcgi = fcgi;
        result.client.wakeups = Some(wakeups);
        result.client.socket_reads = Some(socket_calls.0);
        result.client.socket_writes = Some(socket_calls.1);
        if result
            .outcomes
            .get(&engine::Outcome::ClientResource)
            .copied()
            .unwrap_or(0)
            > 0
        {
            result.warnings.push(host::limits_note());
        }
        if let Some(mut m) = monitored {
            // While the watched processes still run: their config files.
            monitor::settings::read(&mut m);
            monitor::conclude(&mut m, &result);
            result.monitor = Some(m);
        }
        let done = Finished {
            result,
            stopped_by,
            extras,
        };
        Ok((done, flows))
    }
}
