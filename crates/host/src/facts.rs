//! Reads the facts the checks judge: /proc, getrlimit, the affinity mask,
//! this machine's addresses. Every reader returns `None` (or empty) when
//! the fact is unavailable, and never fails the command.

use crate::checks::{Cpus, Listener, NoFile};
use std::net::IpAddr;

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

pub fn read_u64(path: &str) -> Option<u64> {
    read(path)?.trim().parse().ok()
}

pub fn port_range() -> Option<(u16, u16)> {
    crate::checks::parse_port_range(&read("/proc/sys/net/ipv4/ip_local_port_range")?)
}

pub fn tw_reuse() -> Option<u8> {
    read("/proc/sys/net/ipv4/tcp_tw_reuse")?.trim().parse().ok()
}

pub fn timestamps() -> Option<bool> {
    read_u64("/proc/sys/net/ipv4/tcp_timestamps").map(|v| v != 0)
}

pub fn somaxconn() -> Option<u64> {
    read_u64("/proc/sys/net/core/somaxconn")
}

pub fn nr_open() -> Option<u64> {
    read_u64("/proc/sys/fs/nr_open")
}

/// `(nf_conntrack_max, nf_conntrack_count)` when the conntrack module is loaded.
pub fn conntrack() -> Option<(u64, u64)> {
    Some((
        read_u64("/proc/sys/net/netfilter/nf_conntrack_max")?,
        read_u64("/proc/sys/net/netfilter/nf_conntrack_count").unwrap_or(0),
    ))
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

pub fn cpus() -> Cpus {
    // SAFETY: plain sysconf call.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    let available = crate::cpus();
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

/// Addresses of this machine's interfaces.
pub fn local_ips() -> Vec<IpAddr> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs allocates a list we walk read-only and free once;
    // each ifa_addr is null or points to a sockaddr of its family.
    unsafe {
        if libc::getifaddrs(&mut head) != 0 {
            return out;
        }
        let mut cur = head;
        while !cur.is_null() {
            let a = (*cur).ifa_addr;
            if !a.is_null() {
                match i32::from((*a).sa_family) {
                    libc::AF_INET => {
                        let sin = &*(a as *const libc::sockaddr_in);
                        // s_addr holds the address in network order: its bytes in memory.
                        out.push(IpAddr::from(sin.sin_addr.s_addr.to_ne_bytes()));
                    }
                    libc::AF_INET6 => {
                        let sin6 = &*(a as *const libc::sockaddr_in6);
                        out.push(IpAddr::from(sin6.sin6_addr.s6_addr));
                    }
                    _ => {}
                }
            }
            cur = (*cur).ifa_next;
        }
        libc::freeifaddrs(head);
    }
    out
}

/// Why `ip` is this machine, or `None` when it is not.
pub fn is_local(ip: IpAddr, mine: &[IpAddr]) -> Option<&'static str> {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() {
        Some("unspecified address: this machine")
    } else if mine.contains(&ip) {
        Some("an address of this machine")
    } else {
        None
    }
}

/// The processes listening on TCP `port` on this machine, with their CPUs.
/// Needs permission to read other processes' fds (root, or the same user).
pub fn listeners(port: u16) -> Vec<Listener> {
    let inodes: Vec<u64> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|p| read(p))
        .flat_map(|t| crate::checks::listen_inodes(&t, port))
        .collect();
    if inodes.is_empty() {
        return Vec::new();
    }
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        let listens = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|l| l.to_str().is_some_and(|l| wanted.iter().any(|w| w == l)))
        });
        if listens {
            out.push(Listener {
                pid,
                name: read(&format!("/proc/{pid}/comm"))
                    .map(|s| s.trim().to_owned())
                    .unwrap_or_default(),
                cpus: affinity(pid).unwrap_or_default(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_addresses() {
        let mine: Vec<IpAddr> = vec!["10.0.0.5".parse().unwrap()];
        let l = |s: &str| is_local(s.parse().unwrap(), &mine);
        assert_eq!(l("127.0.0.1"), Some("loopback"));
        assert_eq!(l("127.1.2.3"), Some("loopback"));
        assert_eq!(l("::1"), Some("loopback"));
        assert_eq!(l("::ffff:127.0.0.1"), Some("loopback"));
        assert_eq!(l("0.0.0.0"), Some("unspecified address: this machine"));
        assert_eq!(l("10.0.0.5"), Some("an address of this machine"));
        assert_eq!(l("::ffff:10.0.0.5"), Some("an address of this machine"));
        assert_eq!(l("10.0.0.6"), None);
    }

    #[test]
    fn this_machine_is_readable() {
        // Linux facts every test machine has.
        assert!(nofile().is_some_and(|l| l.soft >= 1 && l.hard >= l.soft));
        assert!(port_range().is_some());
        let c = cpus();
        assert!(
            c.online >= 1 && !c.allowed.is_empty() && c.available >= 1,
            "{c:?}"
        );
        assert!(local_ips().iter().any(|ip| ip.is_loopback()));
    }

    #[test]
    fn finds_its_own_listener() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let found = listeners(port);
        assert!(
            found.iter().any(|x| x.pid == std::process::id()),
            "{found:?}"
        );
    }
}
