//! The kernel's view: accept queues of listening sockets nobody accepts
//! from (TCP and unix, exact counts), php-fpm's queue on its unix socket
//! when its pool is full (and not when it is not), two php-fpm stacks on
//! one machine told apart by `pidfile:`, and a status page that goes blind.

use super::{all, max, source, values};
use crate::harness::{Stack, StackKind};
use crate::support::{run_json, temp_path, ServeProcess};
use serde_json::Value;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::Command;

/// Sets a listening socket's backlog (Linux takes a second `listen`).
fn relisten(fd: &impl AsRawFd, backlog: i32) {
    // SAFETY: a socket the caller owns, already listening.
    let rc = unsafe { libc::listen(fd.as_raw_fd(), backlog) };
    assert_eq!(rc, 0, "listen: {}", std::io::Error::last_os_error());
}

fn ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn accept_queues_count_connections_nobody_accepted() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    relisten(&tcp, 7);
    let port = tcp.local_addr().unwrap().port();
    let path = temp_path(&format!("queue-{port}.sock"));
    let _ = std::fs::remove_file(&path);
    let unix = UnixListener::bind(&path).unwrap();
    relisten(&unix, 5);
    let _held_tcp: Vec<TcpStream> = (0..4)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    let _held_unix: Vec<UnixStream> = (0..3)
        .map(|_| UnixStream::connect(&path).unwrap())
        .collect();
    let listen_tcp = format!("listen:127.0.0.1:{port}");
    let listen_unix = format!("listen:{}", path.display());
    let run = |name: &str| {
        let (out, r) = run_json(
            name,
            &[
                &serve.url("/"),
                "-c",
                "1",
                "-t",
                "1",
                "-d",
                "1500ms",
                "--monitor",
                &listen_tcp,
                "--monitor",
                &listen_unix,
                "--monitor-interval",
                "300ms",
            ],
        );
        ok(&out);
        r
    };
    let r = run("queue-held");
    let t = source(&r, &listen_tcp);
    assert_eq!(t["kind"], "listen");
    let n = t["t"].as_array().unwrap().len();
    assert!(n >= 4, "{t}");
    // Exactly what waits, in every sample, and the backlog given to listen.
    assert_eq!(all(t, "listen_queue"), vec![Some(4.0); n], "{t}");
    assert_eq!(all(t, "listen_backlog"), vec![Some(7.0); n]);
    assert_eq!(all(t, "established"), vec![Some(4.0); n]);
    let u = source(&r, &listen_unix);
    let n = u["t"].as_array().unwrap().len();
    assert_eq!(all(u, "listen_queue"), vec![Some(3.0); n], "{u}");
    assert_eq!(all(u, "listen_backlog"), vec![Some(5.0); n]);
    assert_eq!(all(u, "established"), vec![Some(3.0); n]);

    // Accepted: nothing waits, the connections are still there.
    let _accepted_tcp: Vec<_> = (0..4).map(|_| tcp.accept().unwrap()).collect();
    let _accepted_unix: Vec<_> = (0..3).map(|_| unix.accept().unwrap()).collect();
    let r = run("queue-accepted");
    let t = source(&r, &listen_tcp);
    assert!(values(t, "listen_queue").iter().all(|q| *q == 0.0), "{t}");
    assert_eq!(max(&values(t, "established")), 4.0);
    let u = source(&r, &listen_unix);
    assert!(values(u, "listen_queue").iter().all(|q| *q == 0.0), "{u}");
    assert_eq!(max(&values(u, "established")), 3.0);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn system_sees_the_targets_accept_queue() {
    // A target that never accepts: yace's one connection waits in its
    // queue beside the test's three.
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    relisten(&tcp, 9);
    let port = tcp.local_addr().unwrap().port();
    let _held: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    let (_out, r) = run_json(
        "system-queue",
        &[
            &format!("http://127.0.0.1:{port}/"),
            "-c",
            "1",
            "-t",
            "1",
            "-d",
            "1500ms",
            "--timeout",
            "10s",
            "--monitor",
            "system",
            "--monitor-interval",
            "250ms",
        ],
    );
    let sys = source(&r, "system");
    let q = values(sys, "listen_queue");
    // Every sample read it: the test's 3 always, and yace's waiting too.
    assert_eq!(q.len(), sys["t"].as_array().unwrap().len(), "{sys}");
    assert!(q.iter().all(|v| (3.0..=9.0).contains(v)), "{q:?}");
    assert!(max(&q) > 3.0, "{q:?}");
    assert!(values(sys, "listen_backlog").iter().all(|b| *b == 9.0));
    // Each queued connection is established for the kernel, or already
    // closed by its client (CLOSE_WAIT: yace's check before the load) and
    // still queued: nothing else is on the port.
    // The two are read a moment apart from the queue (and yace's check may
    // close in between), so each sample is held to the same bounds, not to
    // the queue's exact figure.
    let est = all(sys, "tcp_port_established");
    let closing = all(sys, "tcp_port_close_wait");
    let sums: Vec<f64> = est
        .iter()
        .zip(&closing)
        .filter_map(|(a, b)| Some((*a)? + (*b)?))
        .collect();
    assert!(!sums.is_empty(), "{}", sys["metrics"]);
    assert!(
        sums.iter().all(|v| (3.0..=9.0).contains(v)),
        "{sums:?}: {}",
        sys["metrics"]
    );
    // SYN cookies are read (a rate), and none were sent on loopback here.
    assert!(!values(sys, "syncookies_sent").is_empty());
    // Nothing took the connections: the finding, from the kernel alone.
    assert!(
        crate::diagnoses(&r).contains(&"accept_queue".to_string()),
        "{:?}",
        crate::diagnoses(&r)
    );
}

/// A listener with a backlog of 1 that never accepts, 8 connections: its
/// queue fills and the kernel drops the rest's handshakes (its
/// ListenOverflows counter, the machine's, rises with the queue full on the
/// target's own port): the overflow is the target's.
#[test]
fn a_full_accept_queue_on_the_target_is_an_overflow() {
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    relisten(&tcp, 1);
    let port = tcp.local_addr().unwrap().port();
    let (_out, r) = run_json(
        "overflow",
        &[
            &format!("http://127.0.0.1:{port}/"),
            "-c",
            "8",
            "-t",
            "1",
            "-d",
            "2s",
            "--timeout",
            "1s",
            "--monitor",
            "system",
            "--monitor-interval",
            "250ms",
        ],
    );
    let sys = source(&r, "system");
    let q = values(sys, "listen_queue");
    assert!(max(&q) >= 1.0, "{q:?}");
    assert!(
        crate::increase(sys, "listen_overflows") > 0.0,
        "{}",
        sys["metrics"]
    );
    let d = crate::diagnoses(&r);
    assert!(d.contains(&"listen_overflow".to_string()), "{d:?}");
}

/// The number of `pid`'s direct children, as `ps` counts them.
fn ps_children(pid: u32) -> usize {
    let out = Command::new("ps")
        .args(["-o", "pid=", "--ppid", &pid.to_string()])
        .output()
        .expect("ps (procps)");
    String::from_utf8_lossy(&out.stdout).lines().count()
}

#[test]
fn php_fpms_queue_grows_when_its_pool_is_full_and_only_then() {
    let stack = Stack::start_with_children(StackKind::NginxPhpFpm, 2);
    let pidfile = format!("pidfile:{}", stack.dir().join("run/php-fpm.pid").display());
    let run = |name: &str, c: &str| {
        let (out, r) = run_json(
            name,
            &[
                &stack.url("/sleep.php?ms=200"),
                "-c",
                c,
                "-t",
                "1",
                "-d",
                "3s",
                "--monitor",
                &pidfile,
                "--monitor-interval",
                "250ms",
            ],
        );
        ok(&out);
        r
    };
    // One connection: a child is always free, nothing waits.
    let r = run("fpm-queue-one", "1");
    let p = source(&r, "pidfile:");
    let q = values(p, "listen_queue");
    assert!(!q.is_empty() && q.iter().all(|v| *v == 0.0), "{q:?}");

    // 10 connections on 2 children: nginx's FastCGI connections wait in
    // php-fpm's accept queue, on its unix socket.
    let r = run("fpm-queue-full", "10");
    let p = source(&r, "pidfile:");
    let q = values(p, "listen_queue");
    assert!(max(&q) > 0.0 && max(&q) <= 10.0, "{q:?}");
    let somaxconn: f64 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // listen.backlog = 1024 in the pool's configuration.
    assert_eq!(max(&values(p, "listen_backlog")), 1024f64.min(somaxconn));
    assert_eq!(max(&values(p, "listeners")), 1.0);
    // Each waiting connection is one established to the pool, as are
    // the two the children serve.
    let est = values(p, "established");
    assert!(
        max(&est) >= max(&q) + 1.0 && max(&est) <= 12.0,
        "{est:?} {q:?}"
    );
    // The master and its two children.
    assert_eq!(max(&values(p, "processes")), 3.0, "{}", p["label"]);
    assert!(
        p["label"].as_str().unwrap().contains("and its children"),
        "{}",
        p["label"]
    );
}

#[test]
fn two_php_fpm_stacks_are_told_apart_by_their_pidfiles() {
    let loaded = Stack::start_with_children(StackKind::NginxPhpFpm, 3);
    let idle = Stack::start_with_children(StackKind::NginxPhpFpm, 3);
    let pidfile = |s: &Stack| format!("pidfile:{}", s.dir().join("run/php-fpm.pid").display());
    let (a, b) = (pidfile(&loaded), pidfile(&idle));
    let (out, r) = run_json(
        "two-stacks",
        &[
            &loaded.url("/hello.php"),
            "-c",
            "4",
            "-t",
            "1",
            "-d",
            "2s",
            "--monitor",
            &a,
            "--monitor",
            &b,
            "--monitor",
            "proc:php-fpm",
            "--monitor-interval",
            "250ms",
        ],
    );
    ok(&out);
    let responses = r["summary"]["responses"].as_f64().unwrap();
    // The servers' own logs: the load went to one stack only (a request
    // cut at the end may be logged without a response).
    assert!(loaded.access_log().len() as f64 >= responses && responses > 0.0);
    assert_eq!(idle.access_log().len(), 0);

    let src_a = source(&r, &a);
    let src_b = source(&r, &b);
    // The idle tree is its master and its own children, nothing else.
    let idle_master = idle.fpm_master_pid().unwrap();
    let own = 1 + ps_children(idle_master);
    let procs_b = values(src_b, "processes");
    assert!(
        procs_b.iter().all(|n| *n == own as f64),
        "{procs_b:?} vs {own}"
    );
    assert!(max(&values(src_a, "processes")) <= 4.0);
    // Its CPU is its own: next to nothing while the other served them all.
    let cpu = |s: &Value| super::increase(s, "cpu");
    assert!(cpu(src_a) > 0.0, "{}", src_a["metrics"]);
    assert!(
        cpu(src_b) * 10.0 < cpu(src_a),
        "idle {} CPU-s, loaded {} CPU-s",
        cpu(src_b),
        cpu(src_a)
    );
    assert!(values(src_b, "listen_queue").iter().all(|q| *q == 0.0));
    // proc: sums every pool on the machine, and says so.
    let all_fpm = source(&r, "proc:php-fpm");
    assert!(
        all_fpm["label"]
            .as_str()
            .unwrap()
            .contains("every one on the machine"),
        "{}",
        all_fpm["label"]
    );
    assert!(max(&values(all_fpm, "processes")) >= own as f64 + 2.0);
}
