//! Facts about the client machine, in one home: its open-file limits,
//! CPUs and affinity, local port range and TCP sysctls, its own interface
//! addresses (so a target on its LAN address counts as local, not only
//! loopback), and the one piece of advice for each (`checks`). `yace
//! doctor` shows them all; the run library checks the cheap subset before
//! any load ([`preflight`]) and records what every result keeps about the
//! machine ([`environment`]).

pub mod checks;
pub mod clock;
pub mod facts;
pub mod signals;

use checks::Churn;
use plan::Plan;
use std::net::SocketAddr;

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
    pub fn sentence(&self) -> String {
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
        facts::nofile(),
        facts::nr_open(),
        connections,
    )];
    if !plan.keepalive {
        let range = facts::port_range();
        out.push(checks::ports(range, connections));
        if let Some(peak) = plan.load.peak_rate() {
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
                facts::tw_reuse(),
                facts::timestamps(),
                loopback,
            ));
        }
    }
    out.push(checks::cpus(&facts::cpus(), plan.threads, connections));
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
    let l = facts::nofile()?;
    if l.soft >= needed || l.soft >= l.hard {
        return None;
    }
    let to = needed.min(l.hard);
    facts::set_nofile_soft(to, l.hard).ok()?;
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

/// CPU time (user + system) the calling thread has used, in seconds.
pub fn thread_cpu_s() -> f64 {
    clock_s(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time (user + system) thread `h` has used so far, in seconds; None
/// when its clock cannot be read (it has ended). What the client's own
/// extras (the live view, the live page, the exporters) cost during a run
/// is read this way: each one's threads, on their own clocks.
pub fn thread_cpu_s_of<T>(h: &std::thread::JoinHandle<T>) -> Option<f64> {
    use std::os::unix::thread::JoinHandleExt;
    let mut clock: libc::clockid_t = 0;
    // SAFETY: the handle's thread is not joined (we hold the handle), so
    // its pthread_t is valid; clock is a valid out-pointer.
    let r = unsafe { libc::pthread_getcpuclockid(h.as_pthread_t(), &mut clock) };
    (r == 0).then(|| clock_s(clock))
}

fn clock_s(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer; a bad clock id only returns EINVAL.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// CPUs this process may use (`std::thread::available_parallelism`).
pub fn cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_default()
}

/// True when `addr` is this machine: loopback, unspecified, or one of its
/// own interface addresses (a target on the machine's LAN address shares
/// its CPUs just the same).
pub fn is_local(addr: SocketAddr) -> bool {
    let ip = addr.ip();
    ip.is_loopback() || ip.is_unspecified() || facts::is_local(ip, &facts::local_ips()).is_some()
}

/// What every result records about the machine it ran on.
pub fn environment(addr: SocketAddr, embedded: bool) -> stats::Environment {
    stats::Environment {
        hostname: read_trimmed("/proc/sys/kernel/hostname"),
        os: std::env::consts::OS.to_owned(),
        kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        cpus: cpus(),
        cpu_model: cpu_model(),
        target_is_local: is_local(addr),
        embedded_target: embedded,
        address: addr.to_string(),
        cpus_allowed: facts::cpus().allowed.len(),
    }
}

/// The client's own limits, said when a run hit them: the open-file limit
/// (and how to raise it) and the local port range.
pub fn limits_note() -> String {
    let (soft, hard) = facts::nofile().map_or((0, 0), |l| (l.soft, l.hard));
    let ports = facts::port_range().map_or_else(String::new, |(lo, hi)| format!("{lo}–{hi}"));
    let raise = if soft < hard {
        format!("`ulimit -n {hard}`")
    } else {
        "`ulimit -Hn 65536 && ulimit -n 65536` (as root)".to_owned()
    };
    format!(
        "this client's open-file limit is {soft} (hard {hard}): raise it with {raise}; local \
         ports {ports} (net.ipv4.ip_local_port_range); keep-alive avoids running out of either"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::Target;
    use std::time::Duration;

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
            threads,
            keepalive,
            ..Plan::get(
                Target::parse("http://127.0.0.1:1/").unwrap(),
                plan::Load::Closed { connections },
                plan::Stop {
                    requests: None,
                    duration: Some(Duration::from_secs(1)),
                },
            )
        }
    }

    #[test]
    fn preflight_is_quiet_when_fine_and_names_the_problem() {
        assert_eq!(preflight(&plan(10, 1, true)), Vec::<String>::new());
        let hard = facts::nofile().unwrap().hard;
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
        let l = facts::nofile().unwrap();
        if l.hard == u64::MAX || l.hard < 256 {
            return; // Nothing sensible to lower and raise here.
        }
        let low = l.hard / 2;
        facts::set_nofile_soft(low, l.hard).unwrap();
        let note = raise_nofile(low + 10);
        let now = facts::nofile().unwrap();
        let short = raise_nofile(l.hard + 1);
        let after = facts::nofile().unwrap();
        facts::set_nofile_soft(l.soft, l.hard).unwrap();
        assert_eq!(now.soft, low + 10);
        assert!(note.unwrap().starts_with("raised the open-file limit"));
        assert_eq!(after.soft, l.hard);
        assert!(short.unwrap().contains("still short"));
        assert_eq!(raise_nofile(1), None);
    }

    #[test]
    fn this_machines_own_address_is_local() {
        assert!(is_local("127.0.0.1:80".parse().unwrap()));
        assert!(is_local("[::1]:80".parse().unwrap()));
        // Every non-loopback address of this machine's interfaces too.
        for ip in facts::local_ips() {
            assert!(is_local(SocketAddr::new(ip, 80)), "{ip}");
        }
        // TEST-NET-3 is never this machine's.
        assert!(!is_local("203.0.113.9:80".parse().unwrap()));
    }
}
