//! Facts about the client machine, recorded in every result.

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

pub fn collect(addr: SocketAddr, embedded: bool) -> Environment {
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
