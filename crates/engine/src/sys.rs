//! Thin, safe wrappers over the few syscalls the worker loop makes: a
//! non-blocking TCP socket, epoll, and the monotonic clock. Kept to raw
//! `libc` so the hot path is exactly read + write + a share of epoll_wait.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::RawFd;

/// A timespec in nanoseconds.
#[inline]
fn ns_of(ts: &libc::timespec) -> u64 {
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds as a timespec.
#[inline]
fn timespec_of(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// Nanoseconds on `clock` (the monotonic and thread clocks are vDSO calls).
#[inline]
fn read_clock(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec; the clocks asked for always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ns_of(&ts)
}

/// Nanoseconds on the monotonic clock (vDSO, no syscall).
#[inline]
pub fn now_ns() -> u64 {
    read_clock(libc::CLOCK_MONOTONIC)
}

/// Sleeps until the monotonic clock reads `at_ns` (not woken by sockets).
pub fn sleep_until(at_ns: u64) {
    let ts = timespec_of(at_ns);
    // SAFETY: ts is valid for the call; a null remainder is allowed with TIMER_ABSTIME.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}

/// The calling thread's voluntary context switches so far: how many times
/// it slept and was woken.
pub fn thread_wakeups() -> u64 {
    // SAFETY: an all-zero rusage is valid; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to an rusage; RUSAGE_THREAD is Linux's.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    ru.ru_nvcsw as u64
}

/// CPU time used by the calling thread, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    read_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: all-zero is a valid sockaddr_storage.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_storage is large and aligned enough for sockaddr_in.
            let sin = unsafe { &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in) };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr = libc::in_addr {
                s_addr: u32::from_ne_bytes(a.ip().octets()),
            };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            // SAFETY: as above, for sockaddr_in6.
            let sin6 = unsafe { &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in6) };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr = libc::in6_addr {
                s6_addr: a.ip().octets(),
            };
            sin6.sin6_flowinfo = a.flowinfo();
            sin6.sin6_scope_id = a.scope_id();
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

/// Result of starting a non-blocking connect.
pub enum Connecting {
    /// Connected at once (common on loopback).
    Done,
    /// In progress: wait for writability, then [`take_socket_error`].
    Pending,
}

fn set_int(fd: RawFd, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
    // SAFETY: fd is ours; the value points to a c_int of the given size.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &value as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// Binds `fd` to `ip` with port 0. With `no_port`, IP_BIND_ADDRESS_NO_PORT
/// first: the kernel then picks the port at connect time, by the whole
/// 4-tuple, instead of reserving one at bind time that no other connection
/// from `ip` may use, so each source address gets its full port range per
/// destination and bind stays cheap.
fn bind_source(fd: RawFd, ip: IpAddr, no_port: bool) -> io::Result<()> {
    if no_port {
        // Linux 4.2+; without it bind still works, only reserving ports sooner.
        let _ = set_int(fd, libc::IPPROTO_IP, libc::IP_BIND_ADDRESS_NO_PORT, 1);
    }
    let (sa, len) = sockaddr(&SocketAddr::new(ip, 0));
    // SAFETY: sa is a valid sockaddr of length len.
    cvt(unsafe { libc::bind(fd, &sa as *const _ as *const libc::sockaddr, len) }).map(|_| ())
}

/// Applies the plan's socket options before connecting; `source` (from
/// `--source-addrs`) is bound in place of `opts.bind`.
fn prepare(
    fd: RawFd,
    addr: &SocketAddr,
    opts: &plan::SocketOptions,
    source: Option<IpAddr>,
) -> io::Result<()> {
    if let Some(size) = opts.buffer {
        let size = size.min(i32::MAX as u32) as libc::c_int;
        set_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, size)?;
        set_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, size)?;
    }
    if let Some(ip) = source.or(opts.bind) {
        if addr.is_ipv4() != ip.is_ipv4() {
            return Err(io::Error::from_raw_os_error(libc::EAFNOSUPPORT));
        }
        bind_source(fd, ip, source.is_some())?;
    }
    Ok(())
}

/// Whether a connection from `ip` can be set up on this machine: binds a
/// throwaway TCP socket to it, as each connection will. `Err` says why not
/// (EADDRNOTAVAIL: the address is not one of this machine's).
pub fn check_source(ip: IpAddr) -> io::Result<()> {
    let family = if ip.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: plain socket(2) call.
    let fd = cvt(unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) })?;
    let r = bind_source(fd, ip, true);
    close(fd);
    r
}

/// Creates a non-blocking TCP socket with Nagle off and starts connecting
/// (from `source` when given). On error the socket is closed and the errno
/// returned.
pub fn connect(
    addr: &SocketAddr,
    opts: &plan::SocketOptions,
    source: Option<IpAddr>,
) -> Result<(RawFd, Connecting), io::Error> {
    let family = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: plain socket(2) call.
    let fd = cvt(unsafe {
        libc::socket(
            family,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })?;
    let one: libc::c_int = 1;
    // SAFETY: fd is ours; option value points to a c_int of the given size.
    unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            &one as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
    if let Err(e) = prepare(fd, addr, opts, source) {
        close(fd);
        return Err(e);
    }
    let (sa, len) = sockaddr(addr);
    // SAFETY: sa is a valid sockaddr of length len.
    let r = unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, len) };
    if r == 0 {
        return Ok((fd, Connecting::Done));
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EINPROGRESS) {
        Ok((fd, Connecting::Pending))
    } else {
        close(fd);
        Err(e)
    }
}

/// A unix-domain socket's address, checked and built once for a run's
/// connections.
#[derive(Clone)]
pub struct UnixAddr {
    sa: libc::sockaddr_un,
    len: libc::socklen_t,
}

impl std::fmt::Debug for UnixAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnixAddr").field("len", &self.len).finish()
    }
}

impl UnixAddr {
    /// `path` as a `sockaddr_un`; `InvalidInput` when it does not fit.
    pub fn new(path: &std::path::Path) -> io::Result<UnixAddr> {
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: an all-zero sockaddr_un is valid; the path is copied in below.
        let mut sa: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        let bytes = path.as_os_str().as_bytes();
        if bytes.is_empty() || bytes.len() >= sa.sun_path.len() || bytes.contains(&0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a unix socket path is 1 to {} bytes without NUL",
                    sa.sun_path.len() - 1
                ),
            ));
        }
        sa.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (d, s) in sa.sun_path.iter_mut().zip(bytes) {
            *d = *s as libc::c_char;
        }
        let len = (std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1) as libc::socklen_t;
        Ok(UnixAddr { sa, len })
    }

    fn connect(&self, fd: RawFd) -> libc::c_int {
        // SAFETY: sa is a valid sockaddr_un, len covers the family and the path.
        unsafe { libc::connect(fd, &self.sa as *const _ as *const libc::sockaddr, self.len) }
    }
}

/// Creates a non-blocking unix-domain stream socket and connects it to
/// `addr`. A unix connect never waits for a handshake: it is done at once
/// or fails (ENOENT: no socket file; ECONNREFUSED: nobody listens on it;
/// EAGAIN: the listener's accept queue is full). `opts.buffer` applies.
pub fn connect_unix_nonblocking(
    addr: &UnixAddr,
    opts: &plan::SocketOptions,
) -> Result<(RawFd, Connecting), io::Error> {
    // SAFETY: plain socket(2) call.
    let fd = cvt(unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })?;
    if let Some(size) = opts.buffer {
        let size = size.min(i32::MAX as u32) as libc::c_int;
        let r = set_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, size)
            .and_then(|_| set_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, size));
        if let Err(e) = r {
            close(fd);
            return Err(e);
        }
    }
    if addr.connect(fd) == 0 {
        return Ok((fd, Connecting::Done));
    }
    let e = io::Error::last_os_error();
    close(fd);
    Err(e)
}

/// A blocking unix-domain stream connection to `path` that waits at most
/// `timeout` for room in the listener's accept queue (a unix connect
/// blocks while the queue is full, and honours the send timeout: std's
/// `UnixStream::connect` has no timeout at all). A full queue past the
/// timeout is `TimedOut`.
pub fn connect_unix(
    path: &std::path::Path,
    timeout: std::time::Duration,
) -> io::Result<std::os::unix::net::UnixStream> {
    use std::os::fd::FromRawFd;
    let addr = UnixAddr::new(path)?;
    // SAFETY: plain socket(2) call.
    let fd =
        cvt(unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: fd is a socket we just made and own from here on.
    let stream = unsafe { std::os::unix::net::UnixStream::from_raw_fd(fd) };
    let t = timeout.max(std::time::Duration::from_millis(1));
    let tv = libc::timeval {
        tv_sec: t.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_usec: t.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: fd is ours; the option value points to a timeval of the given size.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            &tv as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    })?;
    if addr.connect(fd) != 0 {
        let e = io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EAGAIN | libc::EINPROGRESS) => io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the accept queue stayed full for {timeout:?}"),
            ),
            _ => e,
        });
    }
    Ok(stream)
}

/// The pending error of a socket (SO_ERROR), clearing it; `Ok` if none.
pub fn take_socket_error(fd: RawFd) -> io::Result<()> {
    let mut err: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: err/len are valid out-pointers of the right size.
    cvt(unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            &mut err as *mut _ as *mut libc::c_void,
            &mut len,
        )
    })?;
    if err == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(err))
    }
}

pub fn close(fd: RawFd) {
    // SAFETY: closing a descriptor we own; errors on close are not actionable here.
    unsafe { libc::close(fd) };
}

/// Closes with an RST instead of a FIN (SO_LINGER 0), so cancelled
/// connections don't pile up in TIME_WAIT on the client.
pub fn abort(fd: RawFd) {
    let l = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: fd is ours; option value points to a linger struct.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &l as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    close(fd);
}

thread_local! {
    /// This thread's socket reads and writes (system calls, whatever they
    /// returned): see [`thread_socket_calls`].
    static SOCKET_CALLS: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

#[inline]
fn count_call(write: bool) {
    SOCKET_CALLS.with(|c| {
        let (r, w) = c.get();
        c.set(if write { (r, w + 1) } else { (r + 1, w) });
    });
}

/// The calling thread's socket reads and writes so far (every [`read`],
/// [`read_stamped`] and [`send`], including those that would block):
/// responses per read says how much each system call carried.
pub fn thread_socket_calls() -> (u64, u64) {
    SOCKET_CALLS.with(|c| c.get())
}

/// `send` without SIGPIPE. Returns bytes written or the errno.
#[inline]
pub fn send(fd: RawFd, buf: &[u8]) -> Result<usize, i32> {
    count_call(true);
    // SAFETY: buf is valid for reads of buf.len() bytes.
    let r = unsafe {
        libc::send(
            fd,
            buf.as_ptr() as *const libc::c_void,
            buf.len(),
            libc::MSG_NOSIGNAL,
        )
    };
    if r < 0 {
        Err(errno())
    } else {
        Ok(r as usize)
    }
}

/// `read` into buf. Returns bytes read (0 = end of file) or the errno.
#[inline]
pub fn read(fd: RawFd, buf: &mut [u8]) -> Result<usize, i32> {
    count_call(false);
    // SAFETY: buf is valid for writes of buf.len() bytes.
    let r = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
    if r < 0 {
        Err(errno())
    } else {
        Ok(r as usize)
    }
}

/// Reads like [`read`], and also returns the kernel's receive timestamp of
/// the newest data read (`SO_TIMESTAMPNS`, on the realtime clock, in ns),
/// when the socket has timestamps on ([`receive_stamps`]) and the kernel
/// gave one.
pub fn read_stamped(fd: RawFd, buf: &mut [u8]) -> Result<(usize, Option<u64>), i32> {
    count_call(false);
    // Room for one SCM_TIMESTAMPNS (a timespec) with its header, aligned.
    let mut control = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: an all-zero msghdr is a valid empty one; its pointers are set below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: msg points at the live iovec (valid for buf.len() bytes) and
    // control buffer for the whole call.
    let r = unsafe { libc::recvmsg(fd, &mut msg, 0) };
    if r < 0 {
        return Err(errno());
    }
    let mut stamp = None;
    // SAFETY: the CMSG_* macros walk the control buffer the kernel filled,
    // within msg_controllen; a SCM_TIMESTAMPNS payload is one timespec,
    // read unaligned.
    unsafe {
        let mut cm = libc::CMSG_FIRSTHDR(&msg);
        while !cm.is_null() {
            if (*cm).cmsg_level == libc::SOL_SOCKET && (*cm).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(cm) as *const libc::timespec);
                if ts.tv_sec > 0 {
                    stamp = Some(ns_of(&ts));
                }
            }
            cm = libc::CMSG_NXTHDR(&msg, cm);
        }
    }
    Ok((r as usize, stamp))
}

/// Reads with [`read_stamped`] when `stamp` is given, keeping there the
/// newest timestamp read (an older one stays when the kernel gave none),
/// else with [`read`].
#[inline]
pub fn read_keeping_stamp(
    fd: RawFd,
    buf: &mut [u8],
    stamp: Option<&mut Option<u64>>,
) -> Result<usize, i32> {
    match stamp {
        Some(at) => read_stamped(fd, buf).map(|(n, t)| {
            if t.is_some() {
                *at = t;
            }
            n
        }),
        None => read(fd, buf),
    }
}

/// Turns on the kernel's receive timestamps for a socket (see
/// [`read_stamped`]).
pub fn receive_stamps(fd: RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: a valid c_int option value of the right length.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            &on as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// The realtime clock minus the monotonic one, in ns: turns a kernel
/// receive timestamp into the monotonic clock's time.
pub fn realtime_offset_ns() -> i64 {
    read_clock(libc::CLOCK_REALTIME) as i64 - now_ns() as i64
}

/// Whether the socket holds bytes to read, without reading them.
pub fn has_data(fd: RawFd) -> bool {
    let mut b = 0u8;
    // SAFETY: one valid byte of buffer; MSG_PEEK leaves the data queued.
    let r = unsafe {
        libc::recv(
            fd,
            &mut b as *mut u8 as *mut libc::c_void,
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    r > 0
}

#[inline]
pub fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// An epoll instance, closed on drop.
#[derive(Debug)]
pub struct Epoll {
    fd: RawFd,
}

pub const IN: u32 = libc::EPOLLIN as u32;
pub const OUT: u32 = libc::EPOLLOUT as u32;
pub const ERR: u32 = (libc::EPOLLERR | libc::EPOLLHUP) as u32;
/// The peer closed its side (FIN): with edge triggering, no later event
/// will say so again, so the reader must read through to end of file.
pub const CLOSED: u32 = (libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain epoll_create1(2).
        Ok(Epoll {
            fd: cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?,
        })
    }

    /// Registers `fd` edge-triggered for both directions, once for its
    /// lifetime: no epoll_ctl per request (a short read means drained).
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32,
            u64: token,
        };
        // SAFETY: ev is a valid epoll_event.
        cvt(unsafe { libc::epoll_ctl(self.fd, libc::EPOLL_CTL_ADD, fd, &mut ev) }).map(|_| ())
    }

    /// Turns writability events for `fd` on or off. Edge-triggered EPOLLOUT
    /// fires on every ACK that frees send-buffer space, so a long-lived
    /// connection that rarely fills its buffer is woken for nothing; it
    /// watches for room only while a write is blocked.
    pub fn watch_out(&self, fd: RawFd, token: u64, on: bool) -> io::Result<()> {
        let mut events = libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLET;
        if on {
            events |= libc::EPOLLOUT;
        }
        let mut ev = libc::epoll_event {
            events: events as u32,
            u64: token,
        };
        // SAFETY: ev is a valid epoll_event.
        cvt(unsafe { libc::epoll_ctl(self.fd, libc::EPOLL_CTL_MOD, fd, &mut ev) }).map(|_| ())
    }

    /// Waits up to `timeout_ms` (-1: forever); fills `events`, returns how many.
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout_ms: i32) -> io::Result<usize> {
        // SAFETY: events is a valid, writable buffer of that many entries.
        let r = unsafe {
            libc::epoll_wait(
                self.fd,
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                timeout_ms,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(0);
            }
            return Err(e);
        }
        Ok(r as usize)
    }

    /// Waits up to `timeout_ns` nanoseconds (0: not at all), to the
    /// nanosecond where the kernel has `epoll_pwait2` (Linux 5.11), else
    /// rounded up to the millisecond; fills `events`, returns how many.
    pub fn wait_ns(&self, events: &mut [libc::epoll_event], timeout_ns: u64) -> io::Result<usize> {
        use std::sync::atomic::{AtomicBool, Ordering};
        static NO_PWAIT2: AtomicBool = AtomicBool::new(false);
        if timeout_ns == 0 || NO_PWAIT2.load(Ordering::Relaxed) {
            let ms = timeout_ns.div_ceil(1_000_000).min(i32::MAX as u64) as i32;
            return self.wait(events, ms);
        }
        let ts = timespec_of(timeout_ns);
        // SAFETY: events is a valid, writable buffer of that many entries;
        // ts lives across the call; a null sigmask leaves signals as they are.
        let r = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.fd,
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => return Ok(0),
                Some(libc::ENOSYS) | Some(libc::EPERM) => {
                    // An older kernel (or a seccomp filter): milliseconds.
                    NO_PWAIT2.store(true, Ordering::Relaxed);
                    return self.wait_ns(events, timeout_ns);
                }
                _ => return Err(e),
            }
        }
        Ok(r as usize)
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        close(self.fd);
    }
}

#[cfg(test)]
mod tests {

    /// A unix connect fails at once, each way classified: no socket file,
    /// a socket nobody listens on, and a listener whose accept queue is
    /// full (EAGAIN, a refusal, not this client's resource as for TCP).
    #[test]
    fn unix_connect_failures_are_refusals() {
        use crate::http::unix_connect_outcome;
        use sample::Outcome;
        let dir = std::env::temp_dir().join(format!("yace-sys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let opts = plan::SocketOptions::default();
        let outcome = |p: &std::path::Path| {
            let addr = UnixAddr::new(p).unwrap();
            match connect_unix_nonblocking(&addr, &opts) {
                Ok((fd, _)) => {
                    close(fd);
                    Outcome::Response
                }
                Err(e) => unix_connect_outcome(&e),
            }
        };
        let missing = dir.join("missing.sock");
        assert_eq!(outcome(&missing), Outcome::ConnectRefused);
        // A socket file its server left behind (closed): ECONNREFUSED.
        let bound = dir.join("bound.sock");
        let _ = std::fs::remove_file(&bound);
        drop(std::os::unix::net::UnixListener::bind(&bound).unwrap());
        assert!(bound.exists());
        assert_eq!(outcome(&bound), Outcome::ConnectRefused);
        // Listening with a backlog of 1, never accepting: the first
        // connections fit the queue, then EAGAIN.
        let full = dir.join("full.sock");
        let _ = std::fs::remove_file(&full);
        let l = std::os::unix::net::UnixListener::bind(&full).unwrap();
        // SAFETY: re-listen on our own socket with a smaller backlog.
        unsafe { libc::listen(std::os::fd::AsRawFd::as_raw_fd(&l), 1) };
        let mut seen = Vec::new();
        for _ in 0..8 {
            seen.push(outcome(&full));
        }
        assert_eq!(seen[0], Outcome::Response, "{seen:?}");
        assert_eq!(seen.last(), Some(&Outcome::ConnectRefused), "{seen:?}");
        assert!(UnixAddr::new(std::path::Path::new("")).is_err());
        assert!(UnixAddr::new(&dir.join("x".repeat(200))).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
    use super::*;
    use std::os::fd::AsRawFd;
    use std::time::Duration;

    #[test]
    fn a_unix_connect_waits_for_a_full_accept_queue_only_as_long_as_told() {
        let dir = std::env::temp_dir().join(format!("yace-unix-connect-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("l.sock");
        let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        // A queue of one (listen again sets the backlog), never accepted.
        // SAFETY: listen(2) on a socket we own.
        assert_eq!(unsafe { libc::listen(l.as_raw_fd(), 1) }, 0);
        let mut held = Vec::new();
        let mut refused = None;
        for _ in 0..64 {
            match connect_unix(&path, Duration::from_millis(100)) {
                Ok(s) => held.push(s),
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        // It came back (a blocking connect would wait for ever), saying why.
        let e = refused.expect("the accept queue filled up");
        assert_eq!(e.kind(), io::ErrorKind::TimedOut, "{e}");
        assert!(e.to_string().contains("accept queue stayed full"), "{e}");
        assert!(!held.is_empty());
        // Room again once one is accepted.
        let _accepted = l.accept().unwrap();
        connect_unix(&path, Duration::from_secs(1)).unwrap();

        let e = connect_unix(&dir.join("none.sock"), Duration::from_millis(100)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = connect_unix(
            std::path::Path::new(&"x".repeat(200)),
            Duration::from_millis(100),
        )
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
