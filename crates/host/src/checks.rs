//! The verdicts: pure functions of numbers read elsewhere (`system.rs`), so
//! every threshold is unit-tested without touching /proc.

use crate::{Check, Level};
use report::count;

/// File descriptors yace needs beyond one per connection: epoll, eventfds,
/// stdio, the result file, the probe.
pub const FD_MARGIN: u64 = 64;
/// Seconds a port stays in TIME_WAIT on Linux (TCP_TIMEWAIT_LEN, fixed).
pub const TIME_WAIT_S: u64 = 60;
/// With `tcp_tw_reuse`, a new outgoing connection may take over a
/// TIME_WAIT port once it is 1 s old.
pub const TW_REUSE_S: u64 = 1;
/// Seconds conntrack keeps a closed connection (nf_conntrack_tcp_timeout_time_wait).
pub const CONNTRACK_TIME_WAIT_S: u64 = 120;
/// New connections a yace worker thread opens per second at most (about
/// 16k/s measured against a server on another CPU): caps estimates.
pub const CONNECT_RATE_PER_THREAD: f64 = 25_000.0;
/// Most local ports Linux can hand out: 1024–65535.
pub const MAX_PORTS: u64 = 64_512;

/// RLIMIT_NOFILE; `u64::MAX` stands for unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoFile {
    pub soft: u64,
    pub hard: u64,
}

/// File descriptors yace needs for `connections`.
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

/// `--source-addrs`: the ephemeral port range per source address against
/// the connections open at once. Each source address has the whole range
/// for one server address (IP_BIND_ADDRESS_NO_PORT lets the kernel pick the
/// port by the full 4-tuple), and connections are dealt round-robin, so the
/// busiest address carries ⌈connections / sources⌉.
pub fn source_ports(range: Option<(u16, u16)>, sources: u64, connections: u64) -> Check {
    const NAME: &str = "ports";
    let Some(r) = range else {
        return Check::new(
            NAME,
            Level::Warn,
            "cannot read net.ipv4.ip_local_port_range".to_owned(),
        );
    };
    let sources = sources.max(1);
    let per_port = range_size(r);
    let total = per_port.saturating_mul(sources);
    let busiest = connections.div_ceil(sources);
    let have = format!(
        "{} source address{} × {} local ports ({}–{}) = {}",
        count(sources),
        if sources == 1 { "" } else { "es" },
        count(per_port),
        r.0,
        r.1,
        count(total)
    );
    let each = format!(
        "{} connections, dealt round-robin: {} per address",
        count(connections),
        count(busiest)
    );
    if busiest > per_port {
        let need = connections.div_ceil(per_port);
        let mut c = Check::new(
            NAME,
            Level::Fail,
            format!("{each}, more than its {} ports; {have}", count(per_port)),
        )
        .fix(format!(
            "give at least {} source addresses, e.g. --source-addrs 127.0.0.2-127.0.0.{}   \
             # all of 127.0.0.0/8 is local; other addresses must be on an interface",
            count(need),
            (need + 1).min(254)
        ));
        if per_port < MAX_PORTS {
            c = c.fix(WIDEN_PORTS.to_owned());
        }
        return c;
    }
    if busiest > per_port / 4 * 3 {
        let c = Check::new(
            NAME,
            Level::Warn,
            format!("{each}, most of its {} ports; {have}", count(per_port)),
        )
        .fix(format!(
            "# add source addresses (at least {}) so reconnects and other programs find ports",
            count((connections * 4 / 3).div_ceil(per_port).max(sources + 1))
        ));
        return if per_port < MAX_PORTS {
            c.fix(WIDEN_PORTS.to_owned())
        } else {
            c
        };
    }
    Check::new(NAME, Level::Ok, format!("{have}; {each}"))
}

/// How fast connections are opened and closed.
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

/// `net.core.somaxconn` caps every listen backlog on this machine, so it
/// matters when the server runs here. `local`: `None` when there is no URL.
pub fn somaxconn(value: Option<u64>, connections: u64, local: Option<bool>) -> Check {
    const NAME: &str = "somaxconn";
    let Some(v) = value else {
        return Check::new(
            NAME,
            Level::Ok,
            "cannot read net.core.somaxconn (it matters only for a server on this machine)"
                .to_owned(),
        );
    };
    if local == Some(false) {
        return Check::new(
            NAME,
            Level::Ok,
            format!(
                "{v} here; the target runs elsewhere, so its own somaxconn and listen backlog \
                 are what count (check them there)"
            ),
        );
    }
    let wanted = connections.min(65_535);
    if v >= wanted {
        return Check::new(
            NAME,
            Level::Ok,
            format!(
                "{v}: a server on this machine may queue all {} connections",
                count(connections)
            ),
        );
    }
    let who = if local == Some(true) {
        "the target runs on this machine, and its"
    } else {
        "if the server runs on this machine (or `yace run` without a URL), its"
    };
    let s = wanted.next_power_of_two().clamp(4096, 65_535);
    Check::new(
        NAME,
        Level::Warn,
        format!(
            "{v} < {} connections: {who} listen backlog is capped at {v}, so a burst of connects \
             can overflow it (connect_refused, connect_timeout)",
            count(connections)
        ),
    )
    .fix(format!("sysctl -w net.core.somaxconn={s}"))
    .fix(
        "# and raise the server's own backlog: nginx 'listen … backlog=N', Apache ListenBacklog"
            .to_owned(),
    )
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
pub fn cpus(c: &Cpus, threads: usize, connections: u64) -> Check {
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

/// Conntrack's table against what the run adds to it. Only called when
/// the conntrack module is loaded.
pub fn conntrack(max: u64, current: u64, connections: u64, churn: Churn) -> Check {
    const NAME: &str = "conntrack";
    let closed = match churn {
        Churn::Rate { per_s, .. } => (per_s * CONNTRACK_TIME_WAIT_S as f64).ceil() as u64,
        _ => 0,
    };
    let needed = current.saturating_add(connections).saturating_add(closed);
    let what = if closed > 0 {
        format!(
            "{} in use + {} connections + {} closed ones kept {CONNTRACK_TIME_WAIT_S} s",
            count(current),
            count(connections),
            count(closed)
        )
    } else {
        format!(
            "{} in use + {} connections",
            count(current),
            count(connections)
        )
    };
    if needed <= max {
        return Check::new(
            NAME,
            Level::Ok,
            format!("nf_conntrack_max {} covers {what}", count(max)),
        );
    }
    let s = suggested_nofile(needed.saturating_mul(2));
    Check::new(
        NAME,
        Level::Warn,
        format!(
            "nf_conntrack_max {} < {what}: when the table is full the kernel drops new \
             connections (\"nf_conntrack: table full\" in dmesg)",
            count(max)
        ),
    )
    .fix(format!("sysctl -w net.netfilter.nf_conntrack_max={s}"))
}

/// A local target's listening process, and the CPUs it may run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    pub pid: u32,
    pub name: String,
    pub cpus: Vec<usize>,
}

/// Where the target is and whether client and server share CPUs.
/// `local`: `None` if remote, else how we know it is this machine;
/// `server`: the processes listening on the target's port, if found.
pub fn locality(
    addr: std::net::SocketAddr,
    local: Option<&str>,
    c: &Cpus,
    server: &[Listener],
    url: &str,
) -> Check {
    const NAME: &str = "target";
    let Some(how) = local else {
        return Check::new(
            NAME,
            Level::Ok,
            format!("{addr} is another machine: client and server have their own CPUs"),
        );
    };
    let mut server_cpus_now: Vec<usize> = server.iter().flat_map(|s| s.cpus.clone()).collect();
    server_cpus_now.sort_unstable();
    server_cpus_now.dedup();
    let pids: Vec<String> = server.iter().map(|s| s.pid.to_string()).collect();
    let name = server.first().map_or("", |s| s.name.as_str());
    let who = if server.is_empty() {
        String::new()
    } else {
        format!(
            "; the server ({name}, pid {}) runs on CPUs {}",
            pids.join(" "),
            cpu_list(&server_cpus_now)
        )
    };
    let mine = cpu_list(&c.allowed);
    if !server_cpus_now.is_empty() && !c.allowed.iter().any(|x| server_cpus_now.contains(x)) {
        return Check::new(
            NAME,
            Level::Ok,
            format!("{addr} is local ({how}), pinned apart: yace on CPUs {mine}{who}"),
        );
    }
    let shared = format!(
        "{addr} is local ({how}): client and server share this machine's CPUs, so the result \
         measures both{who}"
    );
    if c.online < 2 {
        return Check::new(
            NAME,
            Level::Warn,
            format!("{shared}; with one CPU they cannot be pinned apart"),
        )
        .fix("# run yace on another machine".to_owned());
    }
    // The server on the lower half, yace on the upper half.
    let half = c.online / 2;
    let server_cpus = cpu_list(&(0..half).collect::<Vec<_>>());
    let client_cpus = cpu_list(&(half..c.online).collect::<Vec<_>>());
    let server_fix = match pids.as_slice() {
        [] => format!("taskset -c {server_cpus} <server command>   # start the server on CPUs {server_cpus}"),
        [pid] => format!("taskset -apc {server_cpus} {pid}   # the server ({name}), all its threads"),
        _ => format!(
            "for p in {}; do taskset -apc {server_cpus} $p; done   # the server ({name}), all its processes",
            pids.join(" ")
        ),
    };
    Check::new(NAME, Level::Warn, shared)
        .fix(server_fix)
        .fix(format!(
            "taskset -c {client_cpus} yace run {url} -t {}",
            c.online - half
        ))
}

/// Parses `/proc/net/tcp` or `/proc/net/tcp6`: inodes of sockets listening on `port`.
pub fn listen_inodes(text: &str, port: u16) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let local = f.get(1)?;
            let p = u16::from_str_radix(local.rsplit_once(':')?.1, 16).ok()?;
            (p == port && *f.get(3)? == "0A")
                .then(|| f.get(9)?.parse().ok())
                .flatten()
        })
        .filter(|&inode| inode != 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nofile(soft: u64, hard: u64) -> Option<NoFile> {
        Some(NoFile { soft, hard })
    }

    #[test]
    fn ports_per_source_address() {
        let range = Some((32_768, 60_999)); // 28,232 ports
        let ok = source_ports(range, 8, 100_000);
        assert_eq!(ok.level, Level::Ok, "{}", ok.finding);
        assert_eq!(
            ok.finding,
            "8 source addresses × 28,232 local ports (32768–60999) = 225,856; 100,000 \
             connections, dealt round-robin: 12,500 per address"
        );
        let w = source_ports(range, 4, 100_000);
        assert_eq!(w.level, Level::Warn, "{}", w.finding);
        assert!(w.fix[0].contains("at least 5"), "{:?}", w.fix);
        let f = source_ports(range, 2, 100_000);
        assert_eq!(f.level, Level::Fail);
        assert!(
            f.finding.starts_with("100,000 connections, dealt round-robin: 50,000 per address, more than its 28,232 ports"),
            "{}",
            f.finding
        );
        assert!(
            f.fix[0].starts_with(
                "give at least 4 source addresses, e.g. --source-addrs 127.0.0.2-127.0.0.5"
            ),
            "{:?}",
            f.fix
        );
        assert_eq!(f.fix[1], WIDEN_PORTS);
        // Uneven deals: the busiest address decides.
        assert_eq!(source_ports(Some((1, 10)), 3, 31).level, Level::Fail);
        assert_eq!(source_ports(Some((1, 10)), 3, 30).level, Level::Warn);
        assert_eq!(source_ports(None, 3, 30).level, Level::Warn);
    }

    #[test]
    fn open_files_verdicts() {
        let ok = open_files(nofile(20_000, 20_000), None, 50);
        assert_eq!(ok.level, Level::Ok);
        assert!(
            ok.finding
                .contains("the 114 yace needs (50 connections + 64)"),
            "{}",
            ok.finding
        );
        assert!(ok.fix.is_empty());

        let w = open_files(nofile(1024, 524_288), Some(1 << 20), 10_000);
        assert_eq!(w.level, Level::Warn);
        assert_eq!(w.fix, ["ulimit -n 65536"]);
        // Never suggest more than the hard limit allows without root.
        let w = open_files(nofile(1024, 20_000), None, 5_000);
        assert_eq!(w.fix, ["ulimit -n 20000"]);

        let f = open_files(nofile(20_000, 20_000), Some(1 << 20), 1_000_000);
        assert_eq!(f.level, Level::Fail);
        assert_eq!(
            f.fix[0],
            "ulimit -Hn 1048576 && ulimit -n 1048576   # as root, in the shell that runs yace"
        );
        // Beyond fs.nr_open, that has to go up first.
        let f = open_files(nofile(1024, 1024), Some(1 << 20), 2_000_000);
        assert_eq!(f.fix[0], "sysctl -w fs.nr_open=2031616");

        assert_eq!(
            open_files(nofile(u64::MAX, u64::MAX), None, 1 << 40).level,
            Level::Ok
        );
        assert_eq!(open_files(None, None, 50).level, Level::Warn);
    }

    #[test]
    fn suggested_limits_are_round() {
        assert_eq!(suggested_nofile(114), 65_536);
        assert_eq!(suggested_nofile(65_536), 65_536);
        assert_eq!(suggested_nofile(65_537), 131_072);
        assert_eq!(suggested_nofile(1_000_064), 1_048_576);
        assert_eq!(suggested_nofile(u64::MAX), u64::MAX);
    }

    #[test]
    fn port_range_text() {
        assert_eq!(parse_port_range("32768\t60999\n"), Some((32768, 60999)));
        assert_eq!(parse_port_range("1024 65535"), Some((1024, 65535)));
        assert_eq!(parse_port_range("60999 32768"), None);
        assert_eq!(parse_port_range("32768"), None);
        assert_eq!(parse_port_range("a b"), None);
        assert_eq!(parse_port_range("1 2 3"), None);
        assert_eq!(parse_port_range("1024 70000"), None);
    }

    #[test]
    fn ports_verdicts() {
        let r = Some((32768, 60999)); // 28,232 ports
        assert_eq!(ports(r, 50).level, Level::Ok);
        assert_eq!(ports(r, 21_174).level, Level::Ok);
        let w = ports(r, 21_175);
        assert_eq!(w.level, Level::Warn);
        assert_eq!(w.fix, [WIDEN_PORTS]);
        let f = ports(r, 28_233);
        assert_eq!(f.level, Level::Fail);
        assert!(
            f.finding.contains("28,232 local ports (32768–60999)"),
            "{}",
            f.finding
        );
        assert_eq!(f.fix, [WIDEN_PORTS]);
        // More than any range: the fix says so.
        let f = ports(Some((1024, 65535)), 100_000);
        assert_eq!(f.level, Level::Fail);
        assert!(f.fix[1].contains("several client IPs"), "{:?}", f.fix);
        assert_eq!(ports(None, 50).level, Level::Warn);
    }

    #[test]
    fn tw_reuse_modes() {
        assert!(tw_reuse_applies(Some(1), Some(true), Some(false)));
        assert!(tw_reuse_applies(Some(2), Some(true), Some(true)));
        assert!(!tw_reuse_applies(Some(2), Some(true), Some(false)));
        assert!(!tw_reuse_applies(Some(2), Some(true), None));
        assert!(!tw_reuse_applies(Some(0), Some(true), Some(true)));
        assert!(!tw_reuse_applies(Some(1), Some(false), Some(true)));
        assert!(!tw_reuse_applies(None, None, Some(true)));
    }

    #[test]
    fn time_wait_verdicts() {
        let r = Some((32768, 60999));
        let remote = Some(false);
        assert_eq!(
            time_wait(r, Churn::Reused, Some(2), Some(true), remote).level,
            Level::Ok
        );

        // 28,232 ports / 60 s: 470/s is fine, 471/s is not.
        let rate = |per_s| Churn::Rate {
            per_s,
            estimated: false,
        };
        let ok = time_wait(r, rate(470.0), Some(2), Some(true), remote);
        assert_eq!(ok.level, Level::Ok, "{}", ok.finding);
        let w = time_wait(r, rate(471.0), Some(2), Some(true), remote);
        assert_eq!(w.level, Level::Warn);
        assert_eq!(w.fix[0], "sysctl -w net.ipv4.tcp_tw_reuse=1");
        assert!(w.finding.contains("28,260 ports"), "{}", w.finding);
        // Reuse on: a port is free after 1 s.
        assert_eq!(
            time_wait(r, rate(20_000.0), Some(1), Some(true), remote).level,
            Level::Ok
        );
        assert_eq!(
            time_wait(r, rate(20_000.0), Some(2), Some(true), Some(true)).level,
            Level::Ok
        );
        let w = time_wait(r, rate(30_000.0), Some(1), Some(true), remote);
        assert_eq!(w.level, Level::Warn);
        assert_eq!(w.fix, [WIDEN_PORTS]);
        // Reuse needs timestamps.
        let w = time_wait(r, rate(1000.0), Some(1), Some(false), remote);
        assert_eq!(w.fix[0], "sysctl -w net.ipv4.tcp_timestamps=1");
        // An estimate says so.
        let e = time_wait(
            r,
            Churn::Rate {
                per_s: 9000.0,
                estimated: true,
            },
            Some(2),
            Some(true),
            remote,
        );
        assert!(
            e.finding.contains("estimated from the probe"),
            "{}",
            e.finding
        );

        let u = time_wait(r, Churn::Unknown, Some(2), Some(true), remote);
        assert_eq!(u.level, Level::Warn);
        assert!(
            u.finding.contains("above 470 new connections/s"),
            "{}",
            u.finding
        );
        assert_eq!(
            time_wait(r, Churn::Unknown, Some(2), Some(true), Some(true)).level,
            Level::Ok
        );
    }

    #[test]
    fn somaxconn_verdicts() {
        assert_eq!(somaxconn(Some(4096), 50, Some(true)).level, Level::Ok);
        let w = somaxconn(Some(128), 1000, Some(true));
        assert_eq!(w.level, Level::Warn);
        assert_eq!(w.fix[0], "sysctl -w net.core.somaxconn=4096");
        assert!(w.finding.contains("runs on this machine"), "{}", w.finding);
        assert_eq!(
            somaxconn(Some(4096), 10_000, Some(true)).fix[0],
            "sysctl -w net.core.somaxconn=16384"
        );
        assert_eq!(
            somaxconn(Some(4096), 100_000, Some(true)).fix[0],
            "sysctl -w net.core.somaxconn=65535"
        );
        assert_eq!(
            somaxconn(Some(65_535), 100_000, Some(true)).level,
            Level::Ok
        );
        // Remote: not this machine's business.
        assert_eq!(somaxconn(Some(128), 1000, Some(false)).level, Level::Ok);
        // No URL: conditional warning.
        let w = somaxconn(Some(128), 1000, None);
        assert_eq!(w.level, Level::Warn);
        assert!(
            w.finding.contains("if the server runs on this machine"),
            "{}",
            w.finding
        );
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_list(&[0, 1, 2, 3]), "0-3");
        assert_eq!(cpu_list(&[3, 0, 1, 6]), "0-1,3,6");
        assert_eq!(cpu_list(&[1]), "1");
        assert_eq!(cpu_list(&[]), "");
    }

    fn machine(online: usize, allowed: &[usize], available: usize) -> Cpus {
        Cpus {
            online,
            allowed: allowed.to_vec(),
            available,
        }
    }

    #[test]
    fn cpu_verdicts() {
        let two = machine(2, &[0, 1], 2);
        assert_eq!(cpus(&two, 2, 50).level, Level::Ok);
        let w = cpus(&two, 8, 50);
        assert_eq!(w.level, Level::Warn);
        assert!(
            w.finding.starts_with("8 threads on 2 CPUs"),
            "{}",
            w.finding
        );
        assert_eq!(w.fix, ["yace run … -t 2"]);
        // Threads never exceed connections.
        assert_eq!(cpus(&two, 8, 2).level, Level::Ok);
        // taskset and cgroup quotas count.
        let pinned = machine(8, &[3], 8);
        let w = cpus(&pinned, 2, 50);
        assert_eq!(w.level, Level::Warn);
        assert!(
            w.finding.contains("this process may use 3 (taskset)"),
            "{}",
            w.finding
        );
        let quota = machine(8, &[0, 1, 2, 3, 4, 5, 6, 7], 2);
        assert_eq!(cpus(&quota, 4, 50).fix, ["yace run … -t 2"]);
        assert!(cpus(&quota, 2, 50).finding.contains("cgroup quota ≈2"));
    }

    #[test]
    fn conntrack_verdicts() {
        assert_eq!(conntrack(262_144, 10, 50, Churn::Reused).level, Level::Ok);
        let w = conntrack(65_536, 100, 70_000, Churn::Reused);
        assert_eq!(w.level, Level::Warn);
        assert!(w.fix[0].starts_with("sysctl -w net.netfilter.nf_conntrack_max="));
        // Closed connections linger 120 s in the table.
        let c = Churn::Rate {
            per_s: 1000.0,
            estimated: false,
        };
        assert_eq!(conntrack(65_536, 0, 50, c).level, Level::Warn);
    }

    #[test]
    fn locality_verdicts() {
        let addr: std::net::SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let two = machine(2, &[0, 1], 2);
        let url = "http://127.0.0.1:8080/";
        assert_eq!(locality(addr, None, &two, &[], url).level, Level::Ok);

        let w = locality(addr, Some("loopback"), &two, &[], url);
        assert_eq!(w.level, Level::Warn);
        assert!(w.finding.contains("is local (loopback)"), "{}", w.finding);
        assert_eq!(
            w.fix[1],
            "taskset -c 1 yace run http://127.0.0.1:8080/ -t 1"
        );

        let nginx = Listener {
            pid: 42,
            name: "nginx".into(),
            cpus: vec![0, 1],
        };
        let w = locality(
            addr,
            Some("loopback"),
            &two,
            std::slice::from_ref(&nginx),
            url,
        );
        assert!(w.fix[0].starts_with("taskset -apc 0 42 "), "{:?}", w.fix);
        assert!(
            w.finding
                .contains("the server (nginx, pid 42) runs on CPUs 0-1"),
            "{}",
            w.finding
        );
        // nginx: a master and its workers all hold the listening socket.
        let worker = Listener {
            pid: 43,
            ..nginx.clone()
        };
        let w = locality(addr, Some("loopback"), &two, &[nginx.clone(), worker], url);
        assert!(
            w.fix[0].starts_with("for p in 42 43; do taskset -apc 0 $p; done"),
            "{:?}",
            w.fix
        );

        // Already pinned apart.
        let pinned = machine(2, &[1], 1);
        let nginx0 = Listener {
            cpus: vec![0],
            ..nginx
        };
        let ok = locality(addr, Some("loopback"), &pinned, &[nginx0], url);
        assert_eq!(ok.level, Level::Ok, "{}", ok.finding);

        let eight = machine(8, &(0..8).collect::<Vec<_>>(), 8);
        let w = locality(addr, Some("loopback"), &eight, &[], url);
        assert_eq!(
            w.fix[1],
            "taskset -c 4-7 yace run http://127.0.0.1:8080/ -t 4"
        );
        assert_eq!(
            locality(addr, Some("loopback"), &machine(1, &[0], 1), &[], url)
                .fix
                .len(),
            1
        );
    }

    #[test]
    fn proc_net_tcp_listeners() {
        let text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1605 1 0000000000000000 100 0 0 10 0\n\
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 1777 1 0000000000000000 20 4 30 10 -1\n\
   2: 0100007F:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2338 1 0000000000000000 100 0 0 10 0\n";
        assert_eq!(listen_inodes(text, 8080), [1605]);
        assert_eq!(listen_inodes(text, 80), [2338]);
        assert!(listen_inodes(text, 443).is_empty());
        let v6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1 0000000000000000 100 0 0 10 0\n";
        assert_eq!(listen_inodes(v6, 8080), [99]);
    }
}
