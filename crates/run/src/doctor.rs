//! `yace doctor`'s checks as a library: this machine against the
//! connections planned (host's facts and advice), and, given a URL, where
//! the target runs and one timed request to it ([`crate::probe`]). The CLI
//! parses the flags into a [`Checkup`] and renders the [`Findings`].

use crate::probe::{self, ProbeError, Probed};
use host::checks::{self, Churn};
use host::facts;
use host::{Check, Level};
use plan::{Scheme, Target};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

/// What to check against.
#[derive(Debug)]
pub struct Checkup {
    /// Connections planned (as `yace run -c`).
    pub connections: u64,
    /// New connections per second planned, if known.
    pub rate: Option<f64>,
    /// Worker threads planned (default: one per CPU).
    pub threads: Option<usize>,
    pub keepalive: bool,
    /// `--source-addrs`: the local addresses connections will leave from
    /// (empty: the kernel picks one).
    pub sources: Vec<std::net::IpAddr>,
    /// HTTPS settings for the probe, as `yace run` takes them.
    pub tls: plan::TlsOptions,
    /// How messages name the settings (the caller's flags).
    pub spelling: &'static dyn plan::Spelling,
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
#[derive(Debug)]
pub struct Findings {
    pub connections: u64,
    pub threads: usize,
    pub keepalive: bool,
    pub rate: Option<f64>,
    /// `--source-addrs`, as given (empty: the kernel picks).
    pub sources: Vec<std::net::IpAddr>,
    pub url: Option<String>,
    /// The target's address and, when it is this machine, how it is local.
    pub target: Option<(SocketAddr, Option<&'static str>)>,
    pub probe: Option<Result<Probed, ProbeError>>,
    pub checks: Vec<Check>,
}

impl Findings {
    /// Checks at this level.
    pub fn count(&self, l: Level) -> usize {
        self.checks.iter().filter(|c| c.level == l).count()
    }

    /// A check failed (warnings allowed).
    pub fn failed(&self) -> bool {
        self.count(Level::Fail) > 0
    }
}

pub fn gather(a: &Checkup, target: Option<&Target>) -> Findings {
    let threads = a.threads.unwrap_or_else(host::cpus);
    let cpus = facts::cpus();
    let range = facts::port_range();
    let mut target_checks = Vec::new();
    let mut resolved = None;
    let mut probed = None;
    if let Some(t) = target {
        // HTTPS as yace run sets it up: the same roots, --cacert, --insecure.
        let tls = match t.scheme {
            Scheme::Http | Scheme::Fcgi => Ok(None),
            Scheme::Https => engine::tls::setup(&a.tls, &t.host, false).map(Some),
        };
        if let Err(e) = &tls {
            let e = crate::tls_message(e, a.spelling);
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
                    target_checks.push(probe::verdict(&p, t, a.keepalive));
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
    let churns = !a.keepalive || ok_probe.is_some_and(|p| !p.keep_alive);
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
    let nofile = facts::nofile();
    let mut files = checks::open_files(nofile, facts::nr_open(), a.connections);
    if let Some(l) = nofile {
        // `run::prepare` raises the soft limit itself (`host::raise_nofile`).
        let needed = checks::fds_needed(a.connections);
        if l.soft < needed && l.soft < l.hard {
            files.finding.push_str(&format!(
                "; `yace run` raises its own soft limit to {} at start",
                report::count(needed.min(l.hard))
            ));
        }
    }
    let ports = if a.sources.is_empty() {
        checks::ports(range, a.connections)
    } else {
        checks::source_ports(range, a.sources.len() as u64, a.connections)
    };
    let mut all = vec![
        files,
        ports,
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
    if !a.sources.is_empty() {
        all.push(sources_check(&a.sources, resolved.map(|(addr, _)| addr)));
    }
    if let Some((max, current)) = facts::conntrack() {
        all.push(checks::conntrack(max, current, a.connections, churn));
    }
    all.extend(target_checks);
    Findings {
        connections: a.connections,
        threads,
        keepalive: a.keepalive,
        rate: a.rate,
        sources: a.sources.clone(),
        url: target.map(|t| t.url.clone()),
        target: resolved,
        probe: probed,
        checks: all,
    }
}

/// `--source-addrs`: whether each address can be bound here (a throwaway
/// socket each, as the run's connections will) and suits the target's family.
fn sources_check(sources: &[std::net::IpAddr], target: Option<SocketAddr>) -> Check {
    const NAME: &str = "sources";
    let span = match (sources.first(), sources.last()) {
        (Some(a), Some(b)) if sources.len() > 1 => format!("{a} … {b}"),
        (Some(a), _) => a.to_string(),
        _ => String::new(),
    };
    if let Some(t) = target {
        if let Some(p) = plan::source::family_mismatch(sources, t.is_ipv4()) {
            return Check::new(NAME, Level::Fail, format!("{p} ({t})")).fix(format!(
                "--source-addrs with {} addresses",
                if t.is_ipv4() { "IPv4" } else { "IPv6" }
            ));
        }
    }
    let bad = engine::unbindable(sources);
    if bad.is_empty() {
        return Check::new(
            NAME,
            Level::Ok,
            format!(
                "{} source address{} ({span}) can be bound; connections are dealt round-robin",
                report::count(sources.len() as u64),
                if sources.len() == 1 { "" } else { "es" }
            ),
        );
    }
    let shown: Vec<String> = bad
        .iter()
        .take(3)
        .map(|(ip, e)| format!("{ip} ({e})"))
        .collect();
    let mut c = Check::new(
        NAME,
        Level::Fail,
        format!(
            "{} of {} source addresses cannot be bound: {}{}",
            report::count(bad.len() as u64),
            report::count(sources.len() as u64),
            shown.join(", "),
            if bad.len() > 3 { ", …" } else { "" }
        ),
    );
    if let Some((ip, _)) = bad.first() {
        c = c.fix(format!(
            "ip addr add {ip}/{} dev IFACE   # as root; `ip -br addr` lists this machine's addresses",
            if ip.is_ipv4() { 32 } else { 128 }
        ));
    }
    c
}
