//! Facts about the client machine: its CPUs, its limits, and the cheap
//! checks run before any load (the open-file limit, ports, CPUs).
//!
//! Copied verbatim from `crates/cli/src/environment.rs` and the preflight
//! part of `crates/cli/src/doctor/{checks,system}.rs` until `crates/host`
//! (issue #11, part 5) lands: then this module becomes `use host::…` and
//! goes.

use plan::{Load, Plan};
use report::count;
use stats::Environment;
use std::net::SocketAddr;

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

/// The client's own limits, said when a run hit them: the open-file limit
/// (and how to raise it) and the local port range.
pub fn limits_note() -> String {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: rl is a valid out-pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) };
    let ports = read_trimmed("/proc/sys/net/ipv4/ip_local_port_range")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("–");
    let raise = if rl.rlim_cur < rl.rlim_max {
        format!("`ulimit -n {}`", rl.rlim_max)
    } else {
        "`ulimit -Hn 65536 && ulimit -n 65536` (as root)".to_owned()
    };
    format!(
        "this client's open-file limit is {} (hard {}): raise it with {raise}; local ports \
         {ports} (net.ipv4.ip_local_port_range); keep-alive avoids running out of either",
        rl.rlim_cur, rl.rlim_max
    )
}

pub fn cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// CPUs in this process's affinity mask (`taskset`).
fn cpus_allowed() -> usize {
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            libc::CPU_COUNT(&set) as usize
        } else {
            cpus()
        }
    }
}

/// What every result records about the machine it ran on.
pub fn environment(addr: SocketAddr, embedded: bool) -> Environment {
    Environment {
        hostname: read_trimmed("/proc/sys/kernel/hostname"),
        os: std::env::consts::OS.to_owned(),
        kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        cpus: cpus(),
        cpu_model: cpu_model(),
        target_is_local: addr.ip().is_loopback() || addr.ip().is_unspecified(),
        embedded_target: embedded,
        address: addr.to_string(),
        cpus_allowed: cpus_allowed(),
    }
}

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Ok,
    Warn,
    Fail,
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
    let mut out = vec![open_files(nofile(), nr_open(), connections)];
    if !plan.keepalive {
        let range = port_range();
        out.push(ports(range, connections));
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
            out.push(time_wait(
                range,
                Churn::Rate {
                    per_s: peak,
                    estimated: false,
                },
                tw_reuse(),
                timestamps(),
                loopback,
            ));
        }
    }
    out.push(cpus_check(&cpu_set(), plan.threads, connections));
    out.iter()
        .filter(|c| c.level != Level::Ok)
        .map(Check::sentence)
        .collect()
}

/// Raises the soft RLIMIT_NOFILE to `needed` file descriptors, as far as
/// the hard limit allows (no privilege needed; only this process and its
/// children are affected). Returns a note of what it did; `None` when the
/// limit already sufficed or could not be changed.
pub fn raise_nofile(needed: u64) -> Option<String> {
    let l = nofile()?;
    if l.soft >= needed || l.soft >= l.hard {
        return None;
    }
    let to = needed.min(l.hard);
    set_nofile_soft(to, l.hard).ok()?;
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
            n = suggested_nofile(needed)
        )
    })
}

/// File descriptors yace needs beyond one per connection: epoll, eventfds,
/// stdio, the result file, the probe.
pub const FD_MARGIN: u64 = 64;
/// Seconds a port stays in TIME_WAIT on Linux (TCP_TIMEWAIT_LEN, fixed).
pub const TIME_WAIT_S: u64 = 60;
/// With `tcp_tw_reuse`, a new outgoing connection may take over a
/// TIME_WAIT port once it is 1 s old.
pub const TW_REUSE_S: u64 = 1;
/// Most local ports Linux can hand out: 1024–65535.
pub const MAX_PORTS: u64 = 64_512;

/// RLIMIT_NOFILE; `u64::MAX` stands for unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoFile {
    pub soft: u64,
    pub hard: u64,
}

/// File descriptors a run with `connections` needs: one each plus 64
/// for yace itself. With the embedded target in the same process (`yace run`
/// without a URL) the server's ends count too: pass twice the connections.
pub fn fds_needed(connections: u64) -> u64 {
    connections.saturating_add(FD_MARGIN)
}

fn limit(n: u64) -> String {
    if n == u64::MAX {
        "unlimited".into()
    } else {
        count(n)
    }
}

/// A round number of file descriptors at least `needed`: 65536 or a multiple of it.
pub fn suggested_nofile(needed: u64) -> u64 {
    needed.max(1).div_ceil(65_536).saturating_mul(65_536)
}

/// The open-file limit against the planned connections.
pub fn open_files(l: Option<NoFile>, nr_open: Option<u64>, connections: u64) -> Check {
    const NAME: &str = "open_files";
    let needed = fds_needed(connections);
    let need = format!(
        "the {} yace needs ({} connections + {FD_MARGIN})",
        count(needed),
        count(connections)
    );
    let Some(l) = l else {
        return Check::new(
            NAME,
            Level::Warn,
            format!("cannot read RLIMIT_NOFILE; make sure `ulimit -n` covers {need}"),
        );
    };
    if l.soft >= needed {
        return Check::new(
            NAME,
            Level::Ok,
            format!("soft limit {} covers {need}", limit(l.soft)),
        );
    }
    if l.hard >= needed {
        let s = suggested_nofile(needed).min(l.hard);
        return Check::new(
            NAME,
            Level::Warn,
            format!(
                "soft limit {} is below {need}; the hard limit {} allows more",
                limit(l.soft),
                limit(l.hard)
            ),
        )
        .fix(format!("ulimit -n {s}"));
    }
    let s = suggested_nofile(needed);
    let mut c = Check::new(
        NAME,
        Level::Fail,
        format!(
            "hard limit {} (soft {}) is below {need}: connections beyond it fail with \
             client_resource",
            limit(l.hard),
            limit(l.soft)
        ),
    );
    if nr_open.is_some_and(|n| n < s) {
        c = c.fix(format!("sysctl -w fs.nr_open={s}"));
    }
    c.fix(format!(
        "ulimit -Hn {s} && ulimit -n {s}   # as root, in the shell that runs yace"
    ))
    .fix(format!(
        "# to keep it: '* - nofile {s}' in /etc/security/limits.conf, or LimitNOFILE={s} in \
         a systemd unit"
    ))
}

/// Parses `/proc/sys/net/ipv4/ip_local_port_range` ("32768\t60999").
pub fn parse_port_range(text: &str) -> Option<(u16, u16)> {
    let mut it = text.split_whitespace().map(str::parse::<u16>);
    let (lo, hi) = (it.next()?.ok()?, it.next()?.ok()?);
    (it.next().is_none() && lo <= hi).then_some((lo, hi))
}

fn range_size((lo, hi): (u16, u16)) -> u64 {
    u64::from(hi - lo) + 1
}

const WIDEN_PORTS: &str = "sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"";

/// The ephemeral port range against the connections open at once (each
/// connection to one server address needs its own local port).
pub fn ports(range: Option<(u16, u16)>, connections: u64) -> Check {
    const NAME: &str = "ports";
    let Some(r) = range else {
        return Check::new(
            NAME,
            Level::Warn,
            "cannot read net.ipv4.ip_local_port_range".to_owned(),
        );
    };
    let n = range_size(r);
    let have = format!("{} local ports ({}–{})", count(n), r.0, r.1);
    if connections > n {
        let c = Check::new(
            NAME,
            Level::Fail,
            format!(
                "{} connections to one server address need as many local ports; there are \
                 {have}",
                count(connections)
            ),
        );
        return if connections > MAX_PORTS {
            c.fix(WIDEN_PORTS.to_owned()).fix(format!(
                "# {} is more than any port range holds: spread the load over several client \
                 IPs or machines",
                count(connections)
            ))
        } else {
            c.fix(WIDEN_PORTS.to_owned())
        };
    }
    if connections > n / 4 * 3 {
        let c = Check::new(
            NAME,
            Level::Warn,
            format!(
                "{} connections use most of the {have}; reconnects and other programs need \
                 some too",
                count(connections)
            ),
        );
        return if n < MAX_PORTS {
            c.fix(WIDEN_PORTS.to_owned())
        } else {
            c
        };
    }
    Check::new(
        NAME,
        Level::Ok,
        format!("{have} for {} connections", count(connections)),
    )
}

/// How fast connections are opened and closed.
#[allow(dead_code)] // `yace doctor` meets the other cases; preflight knows the rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Churn {
    /// Keep-alive: connections are opened once and reused.
    Reused,
    /// New connections per second: from `--rate`, or estimated from the probe.
    Rate { per_s: f64, estimated: bool },
    /// A connection per request at a rate nobody knows yet.
    Unknown,
}

fn tw_reuse_text(mode: Option<u8>) -> String {
    match mode {
        Some(0) => "tcp_tw_reuse=0: off".into(),
        Some(1) => "tcp_tw_reuse=1: on".into(),
        Some(2) => "tcp_tw_reuse=2: loopback only".into(),
        Some(m) => format!("tcp_tw_reuse={m}"),
        None => "tcp_tw_reuse unknown".into(),
    }
}

/// Whether `tcp_tw_reuse` lets yace reuse its TIME_WAIT ports for this
/// target (mode 2 only covers loopback; reuse needs TCP timestamps).
pub fn tw_reuse_applies(
    mode: Option<u8>,
    timestamps: Option<bool>,
    loopback: Option<bool>,
) -> bool {
    timestamps != Some(false)
        && match mode {
            Some(1) => true,
            Some(2) => loopback == Some(true),
            _ => false,
        }
}

/// TIME_WAIT against the port range, given the connection churn. A port
/// is held only when yace closes first; after `Connection: close` the
/// server usually does, so this is a risk, never a certainty (warn, not fail).
pub fn time_wait(
    range: Option<(u16, u16)>,
    churn: Churn,
    mode: Option<u8>,
    timestamps: Option<bool>,
    loopback: Option<bool>,
) -> Check {
    const NAME: &str = "time_wait";
    let reuse = tw_reuse_applies(mode, timestamps, loopback);
    let mode_text = tw_reuse_text(mode);
    let reuse_fix = "sysctl -w net.ipv4.tcp_tw_reuse=1".to_owned();
    let ts_note = if timestamps == Some(false) && matches!(mode, Some(1 | 2)) {
        ", but tcp_timestamps=0 disables it"
    } else {
        ""
    };
    let n = range.map(range_size);
    match churn {
        Churn::Reused => Check::new(
            NAME,
            Level::Ok,
            format!("keep-alive: connections are reused, so no ports pile up in TIME_WAIT ({mode_text})"),
        ),
        Churn::Unknown => {
            if reuse {
                return Check::new(
                    NAME,
                    Level::Ok,
                    format!(
                        "a connection per request; {mode_text} lets yace reuse its TIME_WAIT \
                         ports after {TW_REUSE_S} s"
                    ),
                );
            }
            let above = n.map_or_else(
                || "at high rates".to_owned(),
                |n| format!("above {} new connections/s", count(n / TIME_WAIT_S)),
            );
            let c = Check::new(
                NAME,
                Level::Warn,
                format!(
                    "a connection per request: each port yace closes first stays in TIME_WAIT \
                     for {TIME_WAIT_S} s, so {above} the ports can run out ({mode_text}{ts_note}; \
                     pass --rate to check your rate)"
                ),
            );
            if timestamps == Some(false) {
                c.fix("sysctl -w net.ipv4.tcp_timestamps=1".to_owned())
                    .fix(reuse_fix)
            } else {
                c.fix(reuse_fix)
            }
        }
        Churn::Rate { per_s, estimated } => {
            let hold = if reuse { TW_REUSE_S } else { TIME_WAIT_S };
            let held = (per_s * hold as f64).ceil() as u64;
            let rate = if estimated {
                format!(
                    "up to ≈{} new connections/s (estimated from the probe and the threads)",
                    count(per_s.round() as u64)
                )
            } else {
                format!("{} new connections/s", count(per_s.round() as u64))
            };
            let why = if reuse {
                format!("{mode_text}, so yace may reuse them after {TW_REUSE_S} s")
            } else {
                format!("each stays {TIME_WAIT_S} s; {mode_text}{ts_note}")
            };
            let Some(n) = n else {
                return Check::new(
                    NAME,
                    Level::Warn,
                    format!("{rate} could hold {} ports in TIME_WAIT ({why})", count(held)),
                );
            };
            if held <= n {
                return Check::new(
                    NAME,
                    Level::Ok,
                    format!(
                        "{rate} hold at most {} of {} ports in TIME_WAIT ({why})",
                        count(held),
                        count(n)
                    ),
                );
            }
            let c = Check::new(
                NAME,
                Level::Warn,
                format!(
                    "{rate} could hold {} ports in TIME_WAIT, more than the {} there are ({why}); \
                     it happens when yace closes first",
                    count(held),
                    count(n)
                ),
            );
            let c = match (reuse, timestamps == Some(false)) {
                (false, true) => c
                    .fix("sysctl -w net.ipv4.tcp_timestamps=1".to_owned())
                    .fix(reuse_fix),
                (false, false) => c.fix(reuse_fix),
                (true, _) => c,
            };
            if n < MAX_PORTS {
                c.fix(WIDEN_PORTS.to_owned())
            } else {
                c.fix("# or keep connections alive (drop --no-keepalive)".to_owned())
            }
        }
    }
}

/// CPUs this process may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpus {
    /// Online CPUs on the machine.
    pub online: usize,
    /// CPUs in this process's affinity mask (`taskset`).
    pub allowed: Vec<usize>,
    /// `available_parallelism`: the mask, capped by any cgroup CPU quota.
    pub available: usize,
}

impl Cpus {
    /// CPUs the workers can actually run on at once.
    pub fn usable(&self) -> usize {
        self.allowed.len().max(1).min(self.available.max(1))
    }
}

/// Formats CPU numbers the way `taskset -c` takes them: `0-3,6`.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut v = cpus.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    out.join(",")
}

/// Worker threads against the CPUs they can run on.
pub fn cpus_check(c: &Cpus, threads: usize, connections: u64) -> Check {
    const NAME: &str = "cpus";
    let usable = c.usable();
    let effective = (threads as u64).min(connections).max(1) as usize;
    let mut about = format!("{} online", c.online);
    if c.allowed.len() < c.online {
        about.push_str(&format!(
            ", this process may use {} (taskset)",
            cpu_list(&c.allowed)
        ));
    }
    if c.available < c.allowed.len() {
        about.push_str(&format!(", cgroup quota ≈{}", c.available));
    }
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    if effective > usable {
        return Check::new(
            NAME,
            Level::Warn,
            format!(
                "{} on {}: threads take turns on the CPUs, which slows the client and blurs \
                 its latency ({about})",
                plural(effective, "thread"),
                plural(usable, "CPU")
            ),
        )
        .fix(format!("yace run … -t {usable}"));
    }
    Check::new(
        NAME,
        Level::Ok,
        format!(
            "{} on {} ({about})",
            plural(effective, "thread"),
            plural(usable, "CPU")
        ),
    )
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

pub fn read_u64(path: &str) -> Option<u64> {
    read(path)?.trim().parse().ok()
}

pub fn port_range() -> Option<(u16, u16)> {
    parse_port_range(&read("/proc/sys/net/ipv4/ip_local_port_range")?)
}

pub fn tw_reuse() -> Option<u8> {
    read("/proc/sys/net/ipv4/tcp_tw_reuse")?.trim().parse().ok()
}

pub fn timestamps() -> Option<bool> {
    read_u64("/proc/sys/net/ipv4/tcp_timestamps").map(|v| v != 0)
}

pub fn nr_open() -> Option<u64> {
    read_u64("/proc/sys/fs/nr_open")
}

#[allow(clippy::useless_conversion)] // rlim_t is u32 on some targets.
fn rlim(v: libc::rlim_t) -> u64 {
    if v == libc::RLIM_INFINITY {
        u64::MAX
    } else {
        u64::from(v)
    }
}

pub fn nofile() -> Option<NoFile> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the rlimit we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return None;
    }
    Some(NoFile {
        soft: rlim(r.rlim_cur),
        hard: rlim(r.rlim_max),
    })
}

/// Sets the soft RLIMIT_NOFILE, keeping the hard one.
pub fn set_nofile_soft(soft: u64, hard: u64) -> std::io::Result<()> {
    let to = |v: u64| {
        if v == u64::MAX {
            libc::RLIM_INFINITY
        } else {
            v as libc::rlim_t
        }
    };
    let r = libc::rlimit {
        rlim_cur: to(soft),
        rlim_max: to(hard),
    };
    // SAFETY: setrlimit reads the rlimit we own.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// CPUs in the affinity mask of `pid` (0: this process).
pub fn affinity(pid: u32) -> Option<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity fills it and
    // CPU_ISSET reads it within its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(
            pid as libc::pid_t,
            std::mem::size_of::<libc::cpu_set_t>(),
            &mut set,
        ) != 0
        {
            return None;
        }
        let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
        Some((0..max).filter(|&c| libc::CPU_ISSET(c, &set)).collect())
    }
}

pub fn cpu_set() -> Cpus {
    // SAFETY: plain sysconf call.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    let available = cpus();
    let allowed = affinity(0).unwrap_or_else(|| (0..available).collect());
    Cpus {
        online: if online > 0 {
            online as usize
        } else {
            allowed.len()
        },
        allowed,
        available,
    }
}
