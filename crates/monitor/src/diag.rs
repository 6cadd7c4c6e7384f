//! The kernel's own view of sockets, by NETLINK_SOCK_DIAG: TCP sockets
//! (INET_DIAG, IPv4 and IPv6) and unix-domain sockets (UNIX_DIAG), with
//! their queues. For a listening socket the kernel reports the accept
//! queue as it stands (`rqueue`: connections completed and not yet
//! accepted) and its limit (`wqueue`: the backlog given to `listen`), for
//! TCP and unix sockets alike, which /proc/net/unix does not show.
//!
//! Asking the kernel costs no text formatting and, with a port filter run
//! in the kernel (INET_DIAG bytecode), sends back only that port's
//! sockets; a read never blocks longer than [`TIMEOUT`]. Every length in
//! an answer is checked before it is used: a message that does not fit is
//! an error, never a read past the buffer.

#![allow(unsafe_code)]

use std::time::Duration;

/// The longest one dump may take (the kernel answers in microseconds to
/// milliseconds; a wait this long means something is wrong).
pub const TIMEOUT: Duration = Duration::from_secs(1);

/// Most sockets one dump returns before it is cut (a day of TIME_WAIT at
/// 100k connections a second is less): bounds the memory and time a read
/// can take whatever the kernel sends.
const MAX_SOCKETS: usize = 4_000_000;

const NETLINK_SOCK_DIAG: libc::c_int = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 1;
const NLM_F_DUMP: u16 = 0x300;
const INET_DIAG_REQ_BYTECODE: u16 = 1;
const INET_DIAG_BC_S_GE: u8 = 2;
const INET_DIAG_BC_S_LE: u8 = 3;
const UDIAG_SHOW_NAME: u32 = 0x01;
const UDIAG_SHOW_ICONS: u32 = 0x08;
const UDIAG_SHOW_RQLEN: u32 = 0x10;
const UNIX_DIAG_NAME: u16 = 0;
const UNIX_DIAG_ICONS: u16 = 3;
const UNIX_DIAG_RQLEN: u16 = 4;

/// The kernel's TCP states (the same numbers unix sockets use).
pub const ESTABLISHED: u8 = 1;
pub const SYN_RECV: u8 = 3;
pub const TIME_WAIT: u8 = 6;
pub const LISTEN: u8 = 10;

/// A bit per state, for the `states` masks.
pub const fn states(list: &[u8]) -> u32 {
    let mut m = 0u32;
    let mut i = 0;
    while i < list.len() {
        m |= 1 << list[i];
        i += 1;
    }
    m
}

/// Every TCP state `system` counts per port.
pub const ALL_TCP: u32 = 0xfff & !1;

/// One TCP socket as the kernel reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tcp {
    pub state: u8,
    pub local: std::net::IpAddr,
    pub sport: u16,
    pub dport: u16,
    /// For a listener: connections waiting to be accepted.
    pub rqueue: u32,
    /// For a listener: the accept queue's limit (the backlog).
    pub wqueue: u32,
    pub inode: u32,
}

/// One unix-domain socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unix {
    pub state: u8,
    /// SOCK_STREAM (1), SOCK_DGRAM (2), SOCK_SEQPACKET (5).
    pub kind: u8,
    pub inode: u32,
    /// The bound path (an abstract name starts with `@`); an accepted
    /// connection carries its listener's.
    pub name: Option<String>,
    /// For a listener: connections waiting to be accepted, and the limit.
    pub queue: Option<(u32, u32)>,
    /// For a listener: the inodes of the server's side of the connections
    /// waiting to be accepted (some kernels list those sockets, with the
    /// listener's name, and some do not).
    pub waiting: Vec<u32>,
}

/// The CPU time this thread has used, in seconds: what a read cost the
/// client, whatever else competes for the CPUs (a wall clock would count
/// the time the thread waited for a core).
pub fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer to a timespec on our stack.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// The TCP sockets of `family` (`libc::AF_INET` or `AF_INET6`) in
/// `states`, only those whose local port is `sport` when given (filtered
/// in the kernel).
pub fn tcp(family: u8, states: u32, sport: Option<u16>) -> Result<Vec<Tcp>, String> {
    // struct inet_diag_req_v2: family, protocol, ext, pad, states, then a
    // 48-byte inet_diag_sockid left zero (a dump does not match on it).
    let mut req = vec![family, libc::IPPROTO_TCP as u8, 0, 0];
    req.extend_from_slice(&states.to_ne_bytes());
    req.extend_from_slice(&[0u8; 48]);
    if let Some(p) = sport {
        // sport >= p, then sport <= p; a failed test jumps 4 bytes past
        // the end, which the kernel reads as "no match".
        let mut bc = Vec::with_capacity(16);
        for (code, no) in [(INET_DIAG_BC_S_GE, 20u16), (INET_DIAG_BC_S_LE, 12)] {
            bc.push(code);
            bc.push(8); // yes: the next test
            bc.extend_from_slice(&no.to_ne_bytes());
            bc.extend_from_slice(&[0, 0]);
            bc.extend_from_slice(&p.to_ne_bytes());
        }
        req.extend_from_slice(&((4 + bc.len()) as u16).to_ne_bytes());
        req.extend_from_slice(&INET_DIAG_REQ_BYTECODE.to_ne_bytes());
        req.extend_from_slice(&bc);
    }
    let mut out = Vec::new();
    dump(&req, |msg| {
        out.push(parse_inet(msg)?);
        Ok(())
    })?;
    Ok(out)
}

/// Both families' TCP sockets (no IPv6 on the machine is no error).
pub fn tcp_all(states: u32, sport: Option<u16>) -> Result<Vec<Tcp>, String> {
    let mut v = tcp(libc::AF_INET as u8, states, sport)?;
    if let Ok(v6) = tcp(libc::AF_INET6 as u8, states, sport) {
        v.extend(v6);
    }
    Ok(v)
}

/// struct inet_diag_msg: family, state, timer, retrans, the 48-byte id
/// (sport and dport big-endian, then the addresses), expires, rqueue,
/// wqueue, uid, inode.
fn parse_inet(m: &[u8]) -> Result<Tcp, String> {
    if m.len() < 72 {
        return Err(format!("sock_diag: a {}-byte TCP answer", m.len()));
    }
    let u32_at = |i: usize| u32::from_ne_bytes([m[i], m[i + 1], m[i + 2], m[i + 3]]);
    let local = if m[0] == libc::AF_INET6 as u8 {
        let mut a = [0u8; 16];
        a.copy_from_slice(&m[8..24]);
        let v6 = std::net::Ipv6Addr::from(a);
        match v6.to_ipv4_mapped() {
            Some(v4) => std::net::IpAddr::V4(v4),
            None => std::net::IpAddr::V6(v6),
        }
    } else {
        std::net::IpAddr::V4(std::net::Ipv4Addr::new(m[8], m[9], m[10], m[11]))
    };
    Ok(Tcp {
        state: m[1],
        local,
        sport: u16::from_be_bytes([m[4], m[5]]),
        dport: u16::from_be_bytes([m[6], m[7]]),
        rqueue: u32_at(56),
        wqueue: u32_at(60),
        inode: u32_at(68),
    })
}

/// The unix-domain sockets in `states`, with their names and queues.
pub fn unix(states: u32) -> Result<Vec<Unix>, String> {
    // struct unix_diag_req: family, protocol, pad, states, ino, show, cookie.
    let mut req = vec![libc::AF_UNIX as u8, 0, 0, 0];
    req.extend_from_slice(&states.to_ne_bytes());
    req.extend_from_slice(&0u32.to_ne_bytes());
    req.extend_from_slice(&(UDIAG_SHOW_NAME | UDIAG_SHOW_RQLEN | UDIAG_SHOW_ICONS).to_ne_bytes());
    req.extend_from_slice(&[0u8; 8]);
    let mut out = Vec::new();
    dump(&req, |msg| {
        out.push(parse_unix(msg)?);
        Ok(())
    })?;
    Ok(out)
}

/// struct unix_diag_msg (family, type, state, pad, ino, cookie), then
/// attributes.
fn parse_unix(m: &[u8]) -> Result<Unix, String> {
    if m.len() < 16 {
        return Err(format!("sock_diag: a {}-byte unix answer", m.len()));
    }
    let mut u = Unix {
        kind: m[1],
        state: m[2],
        inode: u32::from_ne_bytes([m[4], m[5], m[6], m[7]]),
        name: None,
        queue: None,
        waiting: Vec::new(),
    };
    let mut at = 16;
    while at + 4 <= m.len() {
        let len = usize::from(u16::from_ne_bytes([m[at], m[at + 1]]));
        let kind = u16::from_ne_bytes([m[at + 2], m[at + 3]]) & 0x3fff;
        if len < 4 || at + len > m.len() {
            return Err("sock_diag: a unix attribute runs past its message".into());
        }
        let body = &m[at + 4..at + len];
        match kind {
            UNIX_DIAG_NAME if !body.is_empty() => {
                u.name = Some(if body[0] == 0 {
                    format!("@{}", String::from_utf8_lossy(&body[1..]))
                } else {
                    let end = body.iter().position(|b| *b == 0).unwrap_or(body.len());
                    String::from_utf8_lossy(&body[..end]).into_owned()
                });
            }
            UNIX_DIAG_ICONS => {
                u.waiting = body
                    .chunks_exact(4)
                    .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
            }
            UNIX_DIAG_RQLEN if body.len() >= 8 => {
                let r = u32::from_ne_bytes([body[0], body[1], body[2], body[3]]);
                let w = u32::from_ne_bytes([body[4], body[5], body[6], body[7]]);
                u.queue = Some((r, w));
            }
            _ => {}
        }
        at += (len + 3) & !3;
    }
    Ok(u)
}

/// A netlink socket, closed when dropped.
struct Netlink(libc::c_int);

impl Drop for Netlink {
    fn drop(&mut self) {
        // SAFETY: the descriptor is ours, opened by `socket` and not shared.
        unsafe { libc::close(self.0) };
    }
}

/// Sends one SOCK_DIAG_BY_FAMILY dump request with `payload` and hands
/// each answer's payload to `each`, until the kernel says it is done.
fn dump(payload: &[u8], mut each: impl FnMut(&[u8]) -> Result<(), String>) -> Result<(), String> {
    // SAFETY: plain socket(2); the result is checked.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(format!(
            "sock_diag netlink socket: {}",
            std::io::Error::last_os_error()
        ));
    }
    let sock = Netlink(fd);
    let tv = libc::timeval {
        tv_sec: TIMEOUT.as_secs() as libc::time_t,
        tv_usec: 0,
    };
    // SAFETY: `tv` outlives the call and its size is passed.
    unsafe {
        libc::setsockopt(
            sock.0,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    let seq: u32 = 1;
    let mut msg = Vec::with_capacity(16 + payload.len());
    msg.extend_from_slice(&((16 + payload.len()) as u32).to_ne_bytes());
    msg.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    msg.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    msg.extend_from_slice(&seq.to_ne_bytes());
    msg.extend_from_slice(&0u32.to_ne_bytes());
    msg.extend_from_slice(payload);
    // SAFETY: `sockaddr_nl` is plain data, zero is a valid value (the kernel as peer).
    let mut to: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    to.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    // SAFETY: `msg` and `to` are valid for the lengths passed.
    let sent = unsafe {
        libc::sendto(
            sock.0,
            msg.as_ptr().cast(),
            msg.len(),
            0,
            (&to as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if sent < 0 {
        return Err(format!(
            "sock_diag request: {}",
            std::io::Error::last_os_error()
        ));
    }
    let mut buf = vec![0u8; 64 << 10];
    let mut seen = 0usize;
    loop {
        // SAFETY: `buf` is valid for its length; the kernel writes at most that.
        let n = unsafe { libc::recv(sock.0, buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(format!("sock_diag answer: {e}"));
        }
        let n = n as usize;
        if n == 0 {
            return Err("sock_diag: the answer ended early".into());
        }
        let mut at = 0;
        while at + 16 <= n {
            let h = &buf[at..n];
            let len = u32::from_ne_bytes([h[0], h[1], h[2], h[3]]) as usize;
            let kind = u16::from_ne_bytes([h[4], h[5]]);
            if len < 16 || len > h.len() {
                return Err(format!(
                    "sock_diag: a {len}-byte message in {} bytes",
                    h.len()
                ));
            }
            let body = &h[16..len];
            match kind {
                NLMSG_DONE => return Ok(()),
                NLMSG_ERROR => {
                    let code = body
                        .get(..4)
                        .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                        .unwrap_or(0);
                    if code == 0 {
                        return Ok(());
                    }
                    return Err(format!(
                        "sock_diag: {}",
                        std::io::Error::from_raw_os_error(-code)
                    ));
                }
                SOCK_DIAG_BY_FAMILY => {
                    seen += 1;
                    if seen > MAX_SOCKETS {
                        return Err(format!("sock_diag: over {MAX_SOCKETS} sockets"));
                    }
                    each(body)?;
                }
                _ => {}
            }
            at += (len + 3) & !3;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};
    use std::os::unix::net::{UnixListener, UnixStream};

    #[test]
    fn a_tcp_listeners_queue_is_what_waits_to_be_accepted() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let held: Vec<TcpStream> = (0..3)
            .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        let socks = tcp_all(ALL_TCP, Some(port)).unwrap();
        let listen: Vec<&Tcp> = socks.iter().filter(|s| s.state == LISTEN).collect();
        assert_eq!(listen.len(), 1, "{socks:?}");
        assert_eq!(listen[0].rqueue, 3);
        // std's listen(2) backlog (128), capped by net.core.somaxconn.
        let somaxconn: u32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .map(|s| s.trim().parse().unwrap())
            .unwrap_or(128);
        assert_eq!(listen[0].wqueue, 128.min(somaxconn));
        // The server's side of the three, and nothing of another port.
        let est = socks.iter().filter(|s| s.state == ESTABLISHED).count();
        assert_eq!(est, 3, "{socks:?}");
        assert!(socks.iter().all(|s| s.sport == port));
        // Accepted: the queue is empty.
        let accepted: Vec<_> = (0..3).map(|_| l.accept().unwrap()).collect();
        let socks = tcp_all(states(&[LISTEN]), Some(port)).unwrap();
        assert_eq!(socks[0].rqueue, 0);
        drop((held, accepted));
    }

    #[test]
    fn a_unix_listeners_queue_and_its_connections() {
        let dir = std::env::temp_dir().join(format!("yace-diag-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("s.sock");
        let _ = std::fs::remove_file(&path);
        let l = UnixListener::bind(&path).unwrap();
        let held: Vec<UnixStream> = (0..4)
            .map(|_| UnixStream::connect(&path).unwrap())
            .collect();
        let want = path.to_str().unwrap();
        let socks = unix(states(&[LISTEN, ESTABLISHED])).unwrap();
        let me: Vec<&Unix> = socks
            .iter()
            .filter(|u| u.name.as_deref() == Some(want))
            .collect();
        let listener = me.iter().find(|u| u.state == LISTEN).unwrap();
        assert_eq!(listener.queue.map(|q| q.0), Some(4), "{me:?}");
        assert_eq!(listener.waiting.len(), 4, "{me:?}");
        let accepted: Vec<_> = (0..4).map(|_| l.accept().unwrap()).collect();
        let socks = unix(states(&[LISTEN, ESTABLISHED])).unwrap();
        let me: Vec<&Unix> = socks
            .iter()
            .filter(|u| u.name.as_deref() == Some(want))
            .collect();
        assert_eq!(
            me.iter()
                .find(|u| u.state == LISTEN)
                .unwrap()
                .queue
                .map(|q| q.0),
            Some(0)
        );
        // The accepted side carries the listener's path.
        assert_eq!(me.iter().filter(|u| u.state == ESTABLISHED).count(), 4);
        drop((held, accepted));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn answers_that_do_not_fit_are_errors() {
        assert!(parse_inet(&[0u8; 40]).is_err());
        let mut m = vec![0u8; 16];
        m.extend_from_slice(&200u16.to_ne_bytes());
        m.extend_from_slice(&0u16.to_ne_bytes());
        assert!(parse_unix(&m).is_err());
    }
}
