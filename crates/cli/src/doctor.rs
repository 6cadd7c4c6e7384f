//! `yace doctor`: checks the client machine (and, given a URL, the target)
//! before a big run and says what to change. Each check is a pure function
//! of numbers (`checks`), read from /proc and getrlimit (`system`); the
//! target gets one timed request (`probe`). [`preflight`] is the cheap
//! subset `yace run` calls before it sends any load.

mod probe;
mod render;

use crate::{exit, Failure};
use clap::Args;
use host::checks::{self, Churn};
use host::facts;
pub use host::{Check, Level};
use plan::{Scheme, Target};
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

    /// HTTPS: as for `yace run` (the probe verifies the certificate the same way).
    #[command(flatten)]
    pub tls: crate::args::TlsArgs,
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
    let threads = a.threads.map_or_else(host::cpus, |t| t as usize);
    let cpus = facts::cpus();
    let range = facts::port_range();
    let mut target_checks = Vec::new();
    let mut resolved = None;
    let mut probed = None;
    if let Some(t) = target {
        // HTTPS as yace run sets it up: the same roots, --cacert, --insecure.
        let tls = match t.scheme {
            Scheme::Http => Ok(None),
            Scheme::Https => engine::tls::setup(&a.tls.options(), &t.host, false).map(Some),
        };
        if let Err(e) = &tls {
            let e = ::run::tls_message(e, &crate::flags::RunFlags);
            target_checks.push(Check::new("target", Level::Fail, format!("HTTPS: {e}")));
        } else if let Ok(tls) = tls {
            match resolve(t) {
                Err(c) => target_checks.push(c),
                Ok((addr, dns)) => {
                    let local = facts::is_local(addr.ip(), &facts::local_ips());
                    let listeners = if local.is_some() {
                        facts::listeners(addr.port())
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
                        tls.as_ref(),
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
        checks::open_files(facts::nofile(), facts::nr_open(), a.connections),
        checks::ports(range, a.connections),
        checks::time_wait(
            range,
            churn,
            facts::tw_reuse(),
            facts::timestamps(),
            loopback,
        ),
        checks::somaxconn(facts::somaxconn(), a.connections, local),
        checks::cpus(&cpus, threads, a.connections),
    ];
    if let Some((max, current)) = facts::conntrack() {
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
