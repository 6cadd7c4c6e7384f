//! Listening sockets and their accept queues, as the kernel holds them:
//! the sockets a process tree owns (`pid:`, `pidfile:`, `proc:`) or one
//! socket named by its port or path (`listen:`).
//!
//! The accept queue is the one figure of a saturated server that no
//! status page can hide: when every worker is busy, connections the
//! kernel completed wait there, and a status page served by the same
//! workers waits with them.

use crate::diag::{self, ESTABLISHED, LISTEN};
use crate::reading::Reading;
use std::collections::HashSet;
use std::net::IpAddr;

/// What a set of listening sockets held at one read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Listening {
    /// Listening sockets found.
    pub listeners: u64,
    /// Connections completed by the kernel, waiting for `accept`, summed.
    pub queue: u64,
    /// The queues' limits (each listener's backlog), summed.
    pub backlog: u64,
    /// Connections established to those listeners, accepted or still
    /// queued: TCP sockets on their ports (and addresses); unix stream
    /// sockets carrying their paths (an accepted unix connection keeps
    /// its listener's name) and those waiting in their queues.
    pub established: u64,
}

impl Listening {
    /// `listeners`, `listen_queue`, `listen_backlog` and `established`;
    /// `null` in this sample when nothing was read or no listener was found.
    pub fn fields(r: &mut Reading, l: Option<&Listening>) {
        r.gauge_or_unread("listeners", "count", l.map(|l| l.listeners as f64));
        let l = l.filter(|l| l.listeners > 0);
        r.gauge_or_unread("listen_queue", "count", l.map(|l| l.queue as f64));
        r.gauge_or_unread("listen_backlog", "count", l.map(|l| l.backlog as f64));
        r.gauge_or_unread("established", "count", l.map(|l| l.established as f64));
    }
}

/// How long a connection must wait in an accept queue to count: one that
/// an idle worker takes within this was not waiting for a worker (the
/// wake-up of a blocked `accept`, or the monitor's own status request
/// arriving at the instant the queue is read).
pub const SETTLE: std::time::Duration = std::time::Duration::from_millis(2);

/// `read` once, and when its queue is not empty once more after
/// [`SETTLE`], keeping the smaller queue: what waited that long.
pub fn settled(read: impl Fn() -> Result<Listening, String>) -> Result<Listening, String> {
    let first = read()?;
    if first.queue == 0 {
        return Ok(first);
    }
    std::thread::sleep(SETTLE);
    let mut again = read()?;
    again.queue = again.queue.min(first.queue);
    Ok(again)
}

/// The listeners among the socket `inodes` (a process tree's open files).
pub fn owned(inodes: &HashSet<u32>) -> Result<Listening, String> {
    let mut out = Listening::default();
    // Listeners only: the kernel then walks its listening table alone.
    let tcp: Vec<diag::Tcp> = diag::tcp_all(diag::states(&[LISTEN]), None)?
        .into_iter()
        .filter(|s| inodes.contains(&s.inode))
        .collect();
    let mut ports: Vec<u16> = tcp.iter().map(|s| s.sport).collect();
    ports.sort_unstable();
    ports.dedup();
    for l in &tcp {
        out.listeners += 1;
        out.queue += u64::from(l.rqueue);
        out.backlog += u64::from(l.wqueue);
    }
    for port in ports {
        let est = diag::tcp_all(diag::states(&[ESTABLISHED]), Some(port))?;
        out.established += est
            .iter()
            .filter(|s| {
                tcp.iter()
                    .any(|l| l.sport == s.sport && serves(l.local, s.local))
            })
            .count() as u64;
    }
    let unix = diag::unix(diag::states(&[LISTEN, ESTABLISHED]))?;
    let listeners: Vec<&diag::Unix> = unix
        .iter()
        .filter(|u| u.state == LISTEN && inodes.contains(&u.inode))
        .collect();
    let u = unix_figures(&unix, &listeners);
    out.listeners += u.listeners;
    out.queue += u.queue;
    out.backlog += u.backlog;
    out.established += u.established;
    Ok(out)
}

/// The unix `listeners`' figures; `all` holds the established sockets.
fn unix_figures(all: &[diag::Unix], listeners: &[&diag::Unix]) -> Listening {
    let mut out = Listening::default();
    let mut waiting = HashSet::new();
    for l in listeners {
        out.listeners += 1;
        if let Some((q, b)) = l.queue {
            out.queue += u64::from(q);
            out.backlog += u64::from(b);
        }
        waiting.extend(l.waiting.iter().copied());
    }
    // Accepted connections carry the listener's path; queued ones are
    // counted from the queue (listed or not, depending on the kernel).
    let accepted = all
        .iter()
        .filter(|u| {
            u.state == ESTABLISHED
                && !waiting.contains(&u.inode)
                && u.name
                    .as_deref()
                    .is_some_and(|n| listeners.iter().any(|l| l.name.as_deref() == Some(n)))
        })
        .count() as u64;
    out.established = accepted + waiting.len() as u64;
    out
}

/// Whether a listener bound to `listener` takes connections to `local`.
fn serves(listener: IpAddr, local: IpAddr) -> bool {
    listener.is_unspecified() || listener == local
}

/// The TCP listener(s) on `port` (on `host` only, when given: a listener
/// on the wildcard address serves it too).
pub fn on_port(host: Option<IpAddr>, port: u16) -> Result<Listening, String> {
    let socks = diag::tcp_all(diag::states(&[LISTEN, ESTABLISHED]), Some(port))?;
    let listeners: Vec<&diag::Tcp> = socks
        .iter()
        .filter(|s| s.state == LISTEN && host.is_none_or(|h| serves(s.local, h)))
        .collect();
    let mut out = Listening::default();
    for l in &listeners {
        out.listeners += 1;
        out.queue += u64::from(l.rqueue);
        out.backlog += u64::from(l.wqueue);
    }
    out.established = socks
        .iter()
        .filter(|s| {
            s.state == ESTABLISHED
                && host.is_none_or(|h| s.local == h)
                && listeners.iter().any(|l| serves(l.local, s.local))
        })
        .count() as u64;
    Ok(out)
}

/// The unix-domain listener bound to `path`.
pub fn at_path(path: &str) -> Result<Listening, String> {
    let all = diag::unix(diag::states(&[LISTEN, ESTABLISHED]))?;
    let listeners: Vec<&diag::Unix> = all
        .iter()
        .filter(|u| u.state == LISTEN && u.name.as_deref() == Some(path))
        .collect();
    Ok(unix_figures(&all, &listeners))
}
