//! `yace doctor`: checks the client machine (and, given a URL, the target)
//! before a big run and says what to change. Each check is a pure function
//! of numbers (`checks`), read from /proc and getrlimit (`system`); the
//! target gets one timed request (`probe`). [`preflight`] is the cheap
//! subset `yace run` calls before it sends any load.

mod checks;
mod probe;
mod render;
mod system;

use crate::{exit, Failure};
use checks::Churn;
use clap::Args;
use plan::{Load, Plan, Scheme, Target};
use probe::{ProbeError, Probed};
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

const DOCTOR_HELP: &str = "\
Checks, one line each (ok, warn or fail; warn and fail give the command that fixes it):
  open_files  ulimit -n against the connections (yace needs one per connection + 64)
  ports       the local port range against the connections open at once
  time_wait   TIME_WAIT and tcp_tw_reuse against new connections per second
  somaxconn   the listen backlog cap, when the server runs on this machine
  cpus        threads against the CPUs this process may use (taskset, cgroups)
  conntrack   the connection-tracking table, when the module is loaded
  target      whether the URL is this machine (client and server sharing CPUs)
  probe       one GET: status, Server, body framing, keep-alive, and its phases
              (dns, connect, wait for the first byte, receive, total) in ms

Examples:
  yace doctor                                   # this machine, for 50 connections
  yace doctor http://10.0.0.7:8080/ -c 10k      # before a 10,000-connection run
  yace doctor http://10.0.0.7/ -c 200 --no-keepalive --rate 5000
  yace doctor URL --json | jq '.checks[] | select(.level != \"ok\")'

Exit codes: 0 nothing failed (warnings allowed) · 1 a check failed · 2 bad input";

#[derive(Args, Debug)]
#[command(after_help = DOCTOR_HELP)]
pub struct DoctorArgs {
    #[arg(
        help = "Target to check (http://host[:port]/path): where it runs, and one \
                  timed GET request"
    )]
    pub url: Option<String>,

    /// Connections you plan to open (as `yace run -c`); accepts 10k-style counts.
    #[arg(short = 'c', long = "connections", value_name = "N", default_value = "50",
          value_parser = count_arg)]
    pub connections: u64,

    /// New connections per second you plan, for the port and TIME_WAIT
    /// checks. Default: none with keep-alive; with --no-keepalive (or a
    /// server that closes), estimated from the probe.
    #[arg(long = "rate", value_name = "PER_SECOND", value_parser = rate_arg)]
    pub rate: Option<f64>,

    /// Worker threads you plan (default: one per CPU, as `yace run`).
    #[arg(short = 't', long = "threads", value_name = "N", value_parser = count_arg)]
    pub threads: Option<u64>,

    /// You plan a new connection per request (`yace run --no-keepalive`),
    /// which puts ports in TIME_WAIT.
    #[arg(long = "no-keepalive")]
    pub no_keepalive: bool,

    /// Print one JSON document (yace.doctor.v1) on stdout instead of the checklist.
    #[arg(long = "json")]
    pub json: bool,
}

fn count_arg(s: &str) -> Result<u64, String> {
    match plan::parse_count("", s) {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{} ({})", e.problem, e.hint.unwrap_or_default())),
    }
}

fn rate_arg(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(format!(
            "'{s}' is not a positive number of connections per second (e.g. --rate 5000)"
        )),
    }
}

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Ok,
    Warn,
    Fail,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Ok => "ok",
            Level::Warn => "warn",
            Level::Fail => "fail",
        }
    }
}

/// One line of the checklist.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    pub name: &'static str,
    pub level: Level,
    pub finding: String,
    /// More lines under the finding (the probe's phases).
    pub details: Vec<String>,
    /// Commands that fix it, one per line; lines starting with `#` are advice.
    pub fix: Vec<String>,
}

impl Check {
    pub fn new(name: &'static str, level: Level, finding: String) -> Self {
        Check {
            name,
            level,
            finding,
            details: Vec::new(),
            fix: Vec::new(),
        }
    }

    pub fn fix(mut self, line: String) -> Self {
        self.fix.push(line);
        self
    }

    pub fn detail(mut self, line: String) -> Self {
        self.details.push(line);
        self
    }

    /// The check as one sentence, for `yace run`'s warnings.
    fn sentence(&self) -> String {
        let mut s = format!("{}: {}", self.name, self.finding);
        let fixes: Vec<&str> = self
            .fix
            .iter()
            .map(|f| f.trim_start_matches('#').trim())
            .collect();
        if !fixes.is_empty() {
            s.push_str(&format!(" (fix: {})", fixes.join("; ")));
        }
        s
    }
}

/// The cheap checks for a plan about to run: the open-file limit against
/// its connections, the port range (and TIME_WAIT at an open-model rate)
/// when connections are not kept alive, and threads against the CPUs this
/// process may use. Returns one sentence per problem; empty when all is well.
///
/// `yace run` calls it after building the plan and before the load, and
/// prints each as `warning: …` on stderr. Call [`raise_nofile`] first, so
/// a soft limit it could raise is not reported.
pub fn preflight(plan: &Plan) -> Vec<String> {
    let connections = plan.load.max_connections();
    let mut out = vec![checks::open_files(
        system::nofile(),
        system::nr_open(),
        connections,
    )];
    if !plan.keepalive {
        let range = system::port_range();
        out.push(checks::ports(range, connections));
        if let Load::Open { stages, .. } = &plan.load {
            let peak = stages
                .iter()
                .flat_map(|s| [s.from, s.to])
                .fold(0.0, f64::max);
            let host = plan.connect_to().0;
            let loopback = host
                .parse::<std::net::IpAddr>()
                .map(|ip| ip.is_loopback())
                .ok()
                .or((host == "localhost").then_some(true));
            out.push(checks::time_wait(
                range,
                Churn::Rate {
                    per_s: peak,
                    estimated: false,
                },
                system::tw_reuse(),
                system::timestamps(),
                loopback,
            ));
        }
    }
    out.push(checks::cpus(&system::cpus(), plan.threads, connections));
    out.iter()
        .filter(|c| c.level != Level::Ok)
        .map(Check::sentence)
        .collect()
}

/// File descriptors a run with `connections` needs: one each plus 64
/// for yace itself. With the embedded target in the same process (`yace run`
/// without a URL) the server's ends count too: pass twice the connections.
pub fn fds_needed(connections: u64) -> u64 {
    checks::fds_needed(connections)
}

/// Raises the soft RLIMIT_NOFILE to `needed` file descriptors, as far as
/// the hard limit allows (no privilege needed; only this process and its
/// children are affected). Returns a note of what it did; `None` when the
/// limit already sufficed or could not be changed.
pub fn raise_nofile(needed: u64) -> Option<String> {
    let l = system::nofile()?;
    if l.soft >= needed || l.soft >= l.hard {
        return None;
    }
    let to = needed.min(l.hard);
    system::set_nofile_soft(to, l.hard).ok()?;
    let from = report::count(l.soft);
    Some(if to >= needed {
        format!(
            "raised the open-file limit (soft RLIMIT_NOFILE) from {from} to {} for this run",
            report::count(to)
        )
    } else {
        format!(
            "raised the open-file limit from {from} to the hard limit {}, still short of the {} \
             needed: as root, `ulimit -Hn {n} && ulimit -n {n}` before yace",
            report::count(to),
            report::count(needed),
            n = checks::suggested_nofile(needed)
        )
    })
}

/// Resolves the target, timing the lookup.
fn resolve(t: &Target) -> Result<(SocketAddr, Duration), Check> {
    let started = Instant::now();
    let fail = |finding: String| {
        Check::new("target", Level::Fail, finding).fix(format!(
            "getent hosts {}   # check the name, /etc/hosts and /etc/resolv.conf",
            t.host
        ))
    };
    let mut addrs = (t.host.as_str(), t.port)
        .to_socket_addrs()
        .map_err(|e| fail(format!("cannot resolve host '{}': {e}", t.host)))?;
    let dns = started.elapsed();
    let addr = addrs
        .next()
        .ok_or_else(|| fail(format!("host '{}' resolved to no address", t.host)))?;
    Ok((addr, dns))
}

/// Everything doctor found, for the text and JSON renderers.
struct Findings {
    connections: u64,
    threads: usize,
    keepalive: bool,
    rate: Option<f64>,
    url: Option<String>,
    target: Option<(SocketAddr, Option<&'static str>)>,
    probe: Option<Result<Probed, ProbeError>>,
    checks: Vec<Check>,
}

impl Findings {
    fn count(&self, l: Level) -> usize {
        self.checks.iter().filter(|c| c.level == l).count()
    }

    fn exit_code(&self) -> u8 {
        if self.count(Level::Fail) > 0 {
            exit::RUNTIME
        } else {
            exit::OK
        }
    }
}

fn gather(a: &DoctorArgs, target: Option<&Target>) -> Findings {
    let threads = a
        .threads
        .map_or_else(crate::environment::cpus, |t| t as usize);
    let cpus = system::cpus();
    let range = system::port_range();
    let mut target_checks = Vec::new();
    let mut resolved = None;
    let mut probed = None;
    if let Some(t) = target {
        if t.scheme == Scheme::Https {
            target_checks.push(
                Check::new(
                    "target",
                    Level::Fail,
                    "https:// is not supported yet: yace speaks http://".into(),
                )
                .fix(format!(
                    "yace doctor 'http://{}{}'   # if the server also serves plain HTTP",
                    t.host_header, t.path
                )),
            );
        } else {
            match resolve(t) {
                Err(c) => target_checks.push(c),
                Ok((addr, dns)) => {
                    let local = system::is_local(addr.ip(), &system::local_ips());
                    let listeners = if local.is_some() {
                        system::listeners(addr.port())
                    } else {
                        Vec::new()
                    };
                    target_checks.push(checks::locality(addr, local, &cpus, &listeners, &t.url));
                    let p = probe::probe(
                        addr,
                        t,
                        dns,
                        probe::CONNECT_TIMEOUT,
                        probe::RESPONSE_TIMEOUT,
                    );
                    target_checks.push(probe::verdict(&p, t, !a.no_keepalive));
                    resolved = Some((addr, local));
                    probed = Some(p);
                }
            }
        }
    }
    let local = resolved.map(|(_, l)| l.is_some());
    let loopback = resolved.map(|(addr, _)| match addr.ip() {
        std::net::IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or(v6.is_loopback(), |v4| v4.is_loopback()),
        ip => ip.is_loopback(),
    });
    let ok_probe = probed.as_ref().and_then(|p| p.as_ref().ok());
    let churns = a.no_keepalive || ok_probe.is_some_and(|p| !p.keep_alive);
    let churn = match (a.rate, churns, ok_probe) {
        (Some(r), _, _) => Churn::Rate {
            per_s: r,
            estimated: false,
        },
        (None, false, _) => Churn::Reused,
        // Each connection does connect + request + response, back to back.
        (None, true, Some(p)) => {
            let per_conn = (p.phases.connect + p.phases.wait + p.phases.receive)
                .as_secs_f64()
                .max(10e-6);
            Churn::Rate {
                per_s: (a.connections as f64 / per_conn)
                    .min(checks::CONNECT_RATE_PER_THREAD * threads.max(1) as f64),
                estimated: true,
            }
        }
        (None, true, None) => Churn::Unknown,
    };
    let mut all = vec![
        checks::open_files(system::nofile(), system::nr_open(), a.connections),
        checks::ports(range, a.connections),
        checks::time_wait(
            range,
            churn,
            system::tw_reuse(),
            system::timestamps(),
            loopback,
        ),
        checks::somaxconn(system::somaxconn(), a.connections, local),
        checks::cpus(&cpus, threads, a.connections),
    ];
    if let Some((max, current)) = system::conntrack() {
        all.push(checks::conntrack(max, current, a.connections, churn));
    }
    all.extend(target_checks);
    Findings {
        connections: a.connections,
        threads,
        keepalive: !a.no_keepalive,
        rate: a.rate,
        url: target.map(|t| t.url.clone()),
        target: resolved,
        probe: probed,
        checks: all,
    }
}

/// Runs the checks and prints them; exit 1 if any failed.
pub fn run(a: DoctorArgs) -> Result<u8, Failure> {
    let target = a
        .url
        .as_deref()
        .map(Target::parse)
        .transpose()
        .map_err(|e| Failure::usage(format!("URL: {e} (e.g. http://127.0.0.1:8080/path)")))?;
    let f = gather(&a, target.as_ref());
    let mut out = std::io::stdout().lock();
    // A closed stdout (yace doctor | head) still gets the exit code.
    let _ = if a.json {
        let text = serde_json::to_string_pretty(&render::json(&f)).expect("JSON serializes");
        writeln!(out, "{text}")
    } else {
        render::text(&f, &mut out)
    };
    Ok(f.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn findings(checks: Vec<Check>) -> Findings {
        Findings {
            connections: 50,
            threads: 2,
            keepalive: true,
            rate: None,
            url: None,
            target: None,
            probe: None,
            checks,
        }
    }

    #[test]
    fn exit_code_is_1_only_with_a_failure() {
        let ok = Check::new("a", Level::Ok, "fine".into());
        let warn = Check::new("b", Level::Warn, "hm".into()).fix("do x".into());
        let fail = Check::new("c", Level::Fail, "bad".into()).fix("do y".into());
        assert_eq!(findings(vec![ok.clone(), warn.clone()]).exit_code(), 0);
        assert_eq!(findings(vec![ok, warn, fail]).exit_code(), 1);
    }

    #[test]
    fn sentences_for_run() {
        let c = Check::new("ports", Level::Warn, "few ports".into())
            .fix("sysctl -w x=1".into())
            .fix("# or keep connections alive".into());
        assert_eq!(
            c.sentence(),
            "ports: few ports (fix: sysctl -w x=1; or keep connections alive)"
        );
    }

    fn plan(connections: u64, threads: usize, keepalive: bool) -> Plan {
        Plan {
            target: Target::parse("http://127.0.0.1:1/").unwrap(),
            request: plan::RequestSpec::new("GET", Vec::new(), Vec::new()),
            load: Load::Closed { connections },
            stop: plan::Stop {
                requests: None,
                duration: Some(Duration::from_secs(1)),
            },
            threads,
            keepalive,
            timeouts: Default::default(),
            socket: Default::default(),
            tls: Default::default(),
            http2: None,
            secrets: Default::default(),
        }
    }

    #[test]
    fn preflight_is_quiet_when_fine_and_names_the_problem() {
        assert_eq!(preflight(&plan(10, 1, true)), Vec::<String>::new());
        let hard = system::nofile().unwrap().hard;
        if hard < u64::MAX / 2 {
            let w = preflight(&plan(hard, 1, true));
            assert!(
                w.iter()
                    .any(|s| s.starts_with("open_files: ") && s.contains("ulimit")),
                "{w:?}"
            );
        }
        let w = preflight(&plan(10_000, 4096, true));
        assert!(w.iter().any(|s| s.starts_with("cpus: ")), "{w:?}");
        // Ports only matter without keep-alive.
        let w = preflight(&plan(70_000, 1, false));
        assert!(w.iter().any(|s| s.starts_with("ports: ")), "{w:?}");
        assert!(!preflight(&plan(70_000, 1, true))
            .iter()
            .any(|s| s.starts_with("ports: ")));
    }

    #[test]
    fn raises_the_soft_limit_up_to_the_hard_one() {
        let l = system::nofile().unwrap();
        if l.hard == u64::MAX || l.hard < 256 {
            return; // Nothing sensible to lower and raise here.
        }
        let low = l.hard / 2;
        system::set_nofile_soft(low, l.hard).unwrap();
        let note = raise_nofile(low + 10);
        let now = system::nofile().unwrap();
        let short = raise_nofile(l.hard + 1);
        let after = system::nofile().unwrap();
        system::set_nofile_soft(l.soft, l.hard).unwrap();
        assert_eq!(now.soft, low + 10);
        assert!(note.unwrap().starts_with("raised the open-file limit"));
        assert_eq!(after.soft, l.hard);
        assert!(short.unwrap().contains("still short"));
        assert_eq!(raise_nofile(1), None);
    }

    #[test]
    fn count_and_rate_flags() {
        assert_eq!(count_arg("10k"), Ok(10_000));
        assert!(count_arg("0").is_err());
        assert!(count_arg("lots")
            .unwrap_err()
            .contains("not a whole number"));
        assert_eq!(rate_arg("2.5"), Ok(2.5));
        assert!(rate_arg("-1").is_err());
    }
}
