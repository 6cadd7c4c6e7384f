//! This machine's figures from /proc, no extra tool: the parsers take the
//! files' text, so the same code reads a remote machine's files streamed
//! over SSH.

use crate::reading::Reading;
use std::collections::HashMap;
use std::fs;

/// The /proc files `system` reads, as text.
#[derive(Debug, Default, Clone)]
pub struct SystemFiles {
    pub stat: String,
    pub loadavg: String,
    pub meminfo: String,
    pub snmp: String,
    pub netstat: String,
    pub sockstat: String,
    /// /proc/net/tcp and tcp6 (both tables; header lines are skipped).
    pub tcp: String,
}

/// The names of `SystemFiles`' fields, in the order the SSH shell reader sends them.
pub const FILES: [&str; 8] = [
    "stat",
    "loadavg",
    "meminfo",
    "net/snmp",
    "net/netstat",
    "net/sockstat",
    "net/tcp",
    "net/tcp6",
];

impl SystemFiles {
    /// Reads them here; the TCP tables are skipped without a port to count.
    pub fn read_local(port: Option<u16>) -> Result<SystemFiles, String> {
        let read = |f: &str| {
            fs::read_to_string(format!("/proc/{f}")).map_err(|e| format!("/proc/{f}: {e}"))
        };
        let mut tcp = String::new();
        if port.is_some() {
            for f in ["net/tcp", "net/tcp6"] {
                // No IPv6 is fine.
                tcp.push_str(&read(f).unwrap_or_default());
            }
        }
        Ok(SystemFiles {
            stat: read("stat")?,
            loadavg: read("loadavg")?,
            meminfo: read("meminfo")?,
            snmp: read("net/snmp").unwrap_or_default(),
            netstat: read("net/netstat").unwrap_or_default(),
            sockstat: read("net/sockstat").unwrap_or_default(),
            tcp,
        })
    }

    /// Sets the file named as in [`FILES`].
    pub fn set(&mut self, name: &str, text: String) {
        match name {
            "stat" => self.stat = text,
            "loadavg" => self.loadavg = text,
            "meminfo" => self.meminfo = text,
            "net/snmp" => self.snmp = text,
            "net/netstat" => self.netstat = text,
            "net/sockstat" => self.sockstat = text,
            "net/tcp" | "net/tcp6" => self.tcp.push_str(&text),
            _ => {}
        }
    }

    /// The figures, with the same names node_exporter's are given.
    pub fn reading(&self, port: Option<u16>) -> Result<Reading, String> {
        let port = match port {
            Some(p) => PortRead::Read(port_figures(&self.tcp, p)),
            None => PortRead::NoPort,
        };
        self.reading_with(port)
    }

    /// The figures, with the port's counted elsewhere (or not at all).
    pub fn reading_with(&self, port: PortRead) -> Result<Reading, String> {
        let mut r = Reading::new();
        cpu(&self.stat, &mut r)?;
        let mut load = self.loadavg.split_whitespace().map(str::parse::<f64>);
        for name in ["load1", "load5", "load15"] {
            match load.next() {
                Some(Ok(v)) => r.gauge(name, "count", v),
                _ => return Err("/proc/loadavg: unexpected format".into()),
            }
        }
        let mem = keyed(&self.meminfo, ':');
        for (key, name) in [
            ("MemTotal", "mem_total_bytes"),
            ("MemAvailable", "mem_available_bytes"),
        ] {
            if let Some(kb) = mem.get(key) {
                r.gauge(name, "bytes", kb * 1024.0);
            }
        }
        let snmp = table(&self.snmp);
        let netstat = table(&self.netstat);
        if let Some(v) = snmp.get(&("Tcp", "CurrEstab")) {
            r.gauge("tcp_established", "count", *v);
        }
        if let Some(tw) = sockstat_tw(&self.sockstat) {
            r.gauge("tcp_time_wait_all", "count", tw);
        }
        for (t, key, name) in [
            ("TcpExt", "ListenOverflows", "listen_overflows"),
            ("TcpExt", "ListenDrops", "listen_drops"),
            ("TcpExt", "SyncookiesSent", "syncookies_sent"),
            ("Tcp", "RetransSegs", "retrans_segs"),
            ("Tcp", "OutRsts", "out_rsts"),
        ] {
            let v = netstat.get(&(t, key)).or_else(|| snmp.get(&(t, key)));
            if let Some(v) = v {
                r.counter(name, "count", *v);
            }
        }
        match port {
            PortRead::NoPort => {}
            PortRead::Unread => port_fields(&mut r, None),
            PortRead::Read(f) => port_fields(&mut r, Some(&f)),
        }
        Ok(r)
    }
}

/// Whether `system` counted the target's port at this read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PortRead {
    /// No port to count (the target is elsewhere, or not TCP).
    NoPort,
    /// Not counted at this read (kept within its CPU budget): the port's
    /// metrics are `null` in this sample, never left out of it.
    Unread,
    Read(PortFigures),
}

/// The target's port: its sockets by state, and its listening sockets'
/// accept queues.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortFigures {
    /// By TCP state (index = the kernel's state number).
    pub states: [u64; 16],
    /// Listening sockets on the port (one per address, or per
    /// SO_REUSEPORT worker).
    pub listeners: u64,
    /// Connections completed by the kernel and not yet accepted, summed
    /// over the listeners.
    pub listen_queue: u64,
    /// The accept queues' limits (the backlog each gave `listen`), summed.
    pub listen_backlog: u64,
}

/// `tcp_port_*` and the listeners' `listen_queue` / `listen_backlog`
/// (`null` when no listener was seen on the port, or nothing was read).
pub fn port_fields(r: &mut Reading, f: Option<&PortFigures>) {
    let state = |i: usize| f.map(|f| f.states[i] as f64);
    for (value, name) in [
        (state(0x01), "tcp_port_established"),
        (state(0x06), "tcp_port_time_wait"),
        (state(0x03), "tcp_port_syn_recv"),
        (state(0x08), "tcp_port_close_wait"),
        (
            f.map(|f| (f.states[0x04] + f.states[0x05]) as f64),
            "tcp_port_fin_wait",
        ),
    ] {
        r.gauge_or_unread(name, "count", value);
    }
    let listening = f.filter(|f| f.listeners > 0);
    r.gauge_or_unread(
        "listen_queue",
        "count",
        listening.map(|f| f.listen_queue as f64),
    );
    r.gauge_or_unread(
        "listen_backlog",
        "count",
        listening.map(|f| f.listen_backlog as f64),
    );
}

/// Clock ticks per second in /proc (USER_HZ: 100 on every Linux ABI yace
/// runs on; the kernel fixes it for user space whatever CONFIG_HZ is).
const TICKS_PER_S: f64 = 100.0;

fn cpu(stat: &str, r: &mut Reading) -> Result<(), String> {
    let mut cpus = 0;
    let mut total = None;
    for line in stat.lines() {
        if let Some(rest) = line.strip_prefix("cpu") {
            if rest.starts_with(' ') {
                total = Some(rest);
            } else if rest.starts_with(|c: char| c.is_ascii_digit()) {
                cpus += 1;
            }
        }
    }
    let total = total.ok_or("/proc/stat: no cpu line")?;
    let v: Vec<f64> = total
        .split_whitespace()
        .map(|x| x.parse::<f64>().map(|t| t / TICKS_PER_S))
        .collect::<Result<_, _>>()
        .map_err(|_| "/proc/stat: unexpected cpu line")?;
    for (i, name) in [
        "cpu_user_seconds",
        "cpu_nice_seconds",
        "cpu_system_seconds",
        "cpu_idle_seconds",
        "cpu_iowait_seconds",
        "cpu_irq_seconds",
        "cpu_softirq_seconds",
        "cpu_steal_seconds",
    ]
    .iter()
    .enumerate()
    {
        if let Some(x) = v.get(i) {
            r.counter(*name, "seconds", *x);
        }
    }
    r.gauge("cpus", "count", f64::from(cpus.max(1)));
    Ok(())
}

/// `Key:   123 kB` lines.
fn keyed(text: &str, sep: char) -> HashMap<&str, f64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(sep)?;
            Some((k.trim(), v.split_whitespace().next()?.parse().ok()?))
        })
        .collect()
}

/// /proc/net/snmp and netstat: a line of names then a line of values per table.
fn table(text: &str) -> HashMap<(&str, &str), f64> {
    let mut out = HashMap::new();
    let lines: Vec<&str> = text.lines().collect();
    for pair in lines.chunks(2) {
        let [names, values] = pair else { continue };
        let (Some((t1, names)), Some((t2, values))) =
            (names.split_once(':'), values.split_once(':'))
        else {
            continue;
        };
        if t1 != t2 {
            continue;
        }
        for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
            if let Ok(v) = v.parse::<f64>() {
                out.insert((t1, n), v);
            }
        }
    }
    out
}

fn sockstat_tw(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with("TCP:"))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let i = words.iter().position(|w| *w == "tw")?;
    words.get(i + 1)?.parse().ok()
}

/// Sockets whose local port is `port`, by TCP state (index = the kernel's
/// state number: 1 ESTABLISHED, 3 SYN_RECV, 6 TIME_WAIT, …): the server's
/// side, as `ss -tan sport = :PORT` counts them.
pub fn port_states(tcp: &str, port: u16) -> [u64; 16] {
    port_figures(tcp, port).states
}

/// The port's figures from /proc/net/tcp{,6} text: states, and for each
/// listening socket its `tx_queue:rx_queue` column, which the kernel
/// fills with the accept queue's limit and its length.
pub fn port_figures(tcp: &str, port: u16) -> PortFigures {
    let mut out = PortFigures::default();
    let want = format!(":{port:04X}");
    for line in tcp.lines() {
        let mut f = line.split_whitespace();
        let (Some(_sl), Some(local), Some(_remote), Some(st), Some(queues)) =
            (f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        if !local.ends_with(&want) {
            continue;
        }
        let Ok(s) = u8::from_str_radix(st, 16) else {
            continue;
        };
        out.states[usize::from(s & 15)] += 1;
        if s == 0x0A {
            let (tx, rx) = queues.split_once(':').unwrap_or(("0", "0"));
            out.listeners += 1;
            out.listen_backlog += u64::from_str_radix(tx, 16).unwrap_or(0);
            out.listen_queue += u64::from_str_radix(rx, 16).unwrap_or(0);
        }
    }
    out
}

/// The same figures from the kernel's sockets (sock_diag).
pub fn port_figures_of(socks: &[crate::diag::Tcp]) -> PortFigures {
    let mut out = PortFigures::default();
    for s in socks {
        out.states[usize::from(s.state & 15)] += 1;
        if s.state == crate::diag::LISTEN {
            out.listeners += 1;
            out.listen_queue += u64::from(s.rqueue);
            out.listen_backlog += u64::from(s.wqueue);
        }
    }
    out
}

/// One process's figures from /proc/PID.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProcStat {
    pub pid: u32,
    /// The parent's PID.
    pub ppid: u32,
    /// `R` running, `D` in uninterruptible wait (disk), `S` sleeping, …
    pub state: char,
    /// utime + stime, seconds.
    pub cpu_s: f64,
    pub threads: f64,
    pub rss_bytes: f64,
    pub open_files: Option<f64>,
}

/// Reads /proc/PID; `None` if it is gone. With `sockets`, the inodes of
/// its open sockets are added to it (a readlink per open file).
pub fn proc_stat(
    pid: u32,
    sockets: Option<&mut std::collections::HashSet<u32>>,
) -> Option<ProcStat> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let mut p = parse_proc_stat(pid, &stat, &status)?;
    p.open_files = match sockets {
        Some(into) => socket_inodes(pid, into).map(|n| n as f64),
        None => fs::read_dir(format!("/proc/{pid}/fd"))
            .ok()
            .map(|d| d.count() as f64),
    };
    Some(p)
}

/// Parses /proc/PID/stat (the name may hold spaces and parentheses: fields
/// are counted after its last `)`) and status (VmRSS).
pub fn parse_proc_stat(pid: u32, stat: &str, status: &str) -> Option<ProcStat> {
    let after = &stat[stat.rfind(')')? + 1..];
    // Fields from 3 (state) on; utime is field 14, stime 15, num_threads 20.
    let f: Vec<&str> = after.split_whitespace().collect();
    let num = |i: usize| f.get(i - 3)?.parse::<f64>().ok();
    let rss_kb = keyed(status, ':').get("VmRSS").copied().unwrap_or(0.0);
    Some(ProcStat {
        pid,
        ppid: num(4)? as u32,
        state: f.first()?.chars().next()?,
        cpu_s: (num(14)? + num(15)?) / TICKS_PER_S,
        threads: num(20)?,
        rss_bytes: rss_kb * 1024.0,
        open_files: None,
    })
}

/// Most processes a tree may hold (a fork bomb is not followed further).
const MAX_TREE: usize = 100_000;

/// `root` and every process descended from it (php-fpm's master and its
/// children, Apache's parent and its workers), `root` first; empty when
/// `root` is gone. One pass over /proc/*/stat for the parents: children
/// started and ended between two reads are not seen.
pub fn process_tree(root: u32) -> Vec<u32> {
    if !std::path::Path::new(&format!("/proc/{root}")).exists() {
        return Vec::new();
    }
    let Ok(dir) = fs::read_dir("/proc") else {
        return vec![root];
    };
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if let Some(ppid) = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok())
        {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() && tree.len() < MAX_TREE {
        if let Some(kids) = children.get(&tree[i]) {
            tree.extend(kids.iter().copied().filter(|k| *k != root));
        }
        i += 1;
    }
    tree
}

/// The socket inodes among `pid`'s open files (`socket:[N]`), added to
/// `into`; the number of open files, or `None` when they cannot be read
/// (another user's process).
pub fn socket_inodes(pid: u32, into: &mut std::collections::HashSet<u32>) -> Option<usize> {
    let dir = fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    let mut n = 0;
    for e in dir.flatten() {
        n += 1;
        if let Ok(target) = fs::read_link(e.path()) {
            if let Some(ino) = target
                .to_str()
                .and_then(|t| t.strip_prefix("socket:["))
                .and_then(|t| t.strip_suffix(']'))
                .and_then(|t| t.parse::<u32>().ok())
            {
                into.insert(ino);
            }
        }
    }
    Some(n)
}

/// The PIDs of processes whose name (`comm`, as `ps -e` shows it) starts
/// with `name`, except this process.
pub fn pids_named(name: &str) -> Vec<u32> {
    let me = std::process::id();
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim_end().starts_with(name))
        })
        .collect();
    pids.sort_unstable();
    pids
}

#[cfg(test)]
mod tests {
    use super::*;

    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000080:00000003 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
   1: 0100007F:1F90 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0
   2: 0100007F:1F90 0100007F:D2F2 06 00000000:00000000 03:00000F9F 00000000     0        0 0 3 0 0 0 0 0 0
   3: 0100007F:D2F0 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 3 1 0 100 0 0 10 0
";

    #[test]
    fn counts_the_servers_side_of_a_port() {
        let n = port_states(TCP, 8080);
        assert_eq!((n[1], n[6], n[10]), (1, 1, 1));
        let f = port_figures(TCP, 8080);
        assert_eq!(
            (f.listeners, f.listen_queue, f.listen_backlog),
            (1, 3, 0x80)
        );
    }

    #[test]
    fn proc_stat_with_a_name_holding_parens() {
        let stat = "1234 (php-fpm: pool (www)) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 100 1000000 200 18446744073709551615";
        let p = parse_proc_stat(1234, stat, "Name:\tphp-fpm\nVmRSS:\t  2048 kB\n").unwrap();
        assert_eq!(p.cpu_s, 3.0);
        assert_eq!((p.ppid, p.state), (1, 'S'));
        assert_eq!(p.threads, 3.0);
        assert_eq!(p.rss_bytes, 2048.0 * 1024.0);
    }

    #[test]
    fn this_machine_reads() {
        let r = SystemFiles::read_local(Some(1))
            .unwrap()
            .reading(Some(1))
            .unwrap();
        for name in [
            "cpu_user_seconds",
            "cpu_idle_seconds",
            "cpus",
            "load1",
            "mem_available_bytes",
            "tcp_established",
            "tcp_time_wait_all",
            "listen_overflows",
            "tcp_port_time_wait",
        ] {
            assert!(r.get(name).is_some(), "{name} missing from {r:?}");
        }
    }
}
