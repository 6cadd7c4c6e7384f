//! Daemons that `yace --monitor` reads, started on loopback for a test:
//! a Prometheus node_exporter ([`NodeExporter`], for `node:URL` and
//! `prom:URL`) and an OpenSSH server ([`Sshd`], for `ssh:HOST`).
//!
//! Each runs as a child of the test process from its own temp dir
//! (`$TMPDIR/yace-daemon-PID-SEQ-NAME`), on a free loopback port, never
//! the system service; dropping it kills it (and, for sshd, every session
//! process under it) and removes the dir. The packages come from
//! `scripts/test.sh` (full mode): prometheus-node-exporter, openssh-server,
//! openssh-client.
//!
//! ```ignore
//! let node = NodeExporter::start();
//! // ... yace --monitor node:{node.url()} ...
//! let sshd = Sshd::start();
//! let out = sshd.ssh().arg("cat /proc/loadavg").output().unwrap();
//! ```
//!
//! This file uses only std and libc, so any test binary may include it with
//! `#[path = "../stacks/daemons.rs"] mod daemons;`, beside the harness
//! (`mod harness;` at the crate root), whose free ports it shares.
#![allow(dead_code)] // each test binary uses a different part of it

use crate::harness::free_port;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

/// How long `start` waits for a daemon to answer.
const START_DEADLINE: Duration = Duration::from_secs(10);
/// How long `Drop` waits after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(2);

const NODE_EXPORTER: &str = "/usr/bin/prometheus-node-exporter";
const SSHD: &str = "/usr/sbin/sshd";
const SSH: &str = "/usr/bin/ssh";
const SSH_KEYGEN: &str = "/usr/bin/ssh-keygen";

/// The collectors [`NodeExporter`] runs (`--collector.disable-defaults`
/// turns the rest off): what `system` reads from /proc, and a scrape of
/// ~30 KiB that starts in milliseconds.
pub const NODE_COLLECTORS: [&str; 8] = [
    "cpu", "loadavg", "meminfo", "netstat", "sockstat", "stat", "tcpstat", "netdev",
];

// --- node_exporter -------------------------------------------------------------

/// `prometheus-node-exporter` on `127.0.0.1:PORT` with [`NODE_COLLECTORS`].
#[derive(Debug)]
pub struct NodeExporter {
    daemon: Daemon,
    port: u16,
}

impl NodeExporter {
    /// Starts it and waits (≤ 10 s) until `/metrics` answers 200.
    /// Panics naming the package if the binary is missing.
    pub fn start() -> NodeExporter {
        need(NODE_EXPORTER, "prometheus-node-exporter");
        let mut last = String::new();
        // A new port each time: another process may have bound the one
        // picked before the daemon did (it then exits saying so).
        for _ in 0..4 {
            let port = free_port();
            let mut args = vec![
                format!("--web.listen-address=127.0.0.1:{port}"),
                "--collector.disable-defaults".to_string(),
                "--log.level=warn".to_string(),
            ];
            args.extend(NODE_COLLECTORS.iter().map(|c| format!("--collector.{c}")));
            let mut daemon = Daemon::spawn("node-exporter", Path::new(NODE_EXPORTER), &args);
            let ready = daemon.wait_for("/metrics answering 200", || {
                http_get(port, "/metrics").is_ok_and(|(status, _)| status == 200)
            });
            match ready {
                Ok(()) => return NodeExporter { daemon, port },
                Err(e) if e.contains("address already in use") => last = e,
                Err(e) => panic!("could not start node_exporter: {e}"),
            }
        }
        panic!("could not start node_exporter (port taken 4 times): {last}")
    }

    /// `http://127.0.0.1:PORT/metrics`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/metrics", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn pid(&self) -> u32 {
        self.daemon.child.id()
    }

    /// One scrape: the body of `/metrics` (panics unless 200).
    pub fn scrape(&self) -> String {
        match http_get(self.port, "/metrics") {
            Ok((200, body)) => body,
            other => panic!("GET {}: {other:?}", self.url()),
        }
    }
}

// --- sshd ------------------------------------------------------------------------

/// An OpenSSH server on `127.0.0.1:PORT` that lets the current user in
/// with a throwaway key, and an ssh client config that uses it:
/// `ssh -F <config> -p <port> <user>@127.0.0.1 COMMAND`.
///
/// sshd runs in the foreground (`-D -e`) with its own config, host key,
/// `authorized_keys` and pid file in the temp dir, `UsePAM no`,
/// `PasswordAuthentication no`, `StrictModes no`. The client config
/// (`Host *`: the host is left as given) sets `Port`, `IdentityFile`,
/// `IdentitiesOnly`, the host key pre-trusted under a `HostKeyAlias` in a
/// temp known_hosts (so `localhost` works as well as `127.0.0.1`),
/// `BatchMode yes`, `LogLevel ERROR`, and reads nothing from `~/.ssh` or
/// `/etc/ssh/ssh_config`.
#[derive(Debug)]
pub struct Sshd {
    daemon: Daemon,
    port: u16,
    config: PathBuf,
    user: String,
}

impl Sshd {
    /// Starts sshd and waits (≤ 10 s) until `ssh ... true` succeeds.
    /// Panics naming the package if sshd, ssh or ssh-keygen is missing.
    pub fn start() -> Sshd {
        need(SSHD, "openssh-server");
        need(SSH, "openssh-client");
        need(SSH_KEYGEN, "openssh-client");
        // Privilege separation dir (made by the system service's unit,
        // which never ran here); only root can make it, and only root needs it.
        if !Path::new("/run/sshd").exists() && euid() == 0 {
            let _ = fs::DirBuilder::new().mode(0o755).create("/run/sshd");
        }
        let user = current_user();
        let mut last = String::new();
        // A new port each time: another process may have bound the one
        // picked before the daemon did (it then exits saying so).
        for _ in 0..4 {
            match Sshd::try_start(&user) {
                Ok(sshd) => return sshd,
                Err(e) if e.contains("Address already in use") => last = e,
                Err(e) => panic!("could not start sshd: {e}"),
            }
        }
        panic!("could not start sshd (port taken 4 times): {last}")
    }

    fn try_start(user: &str) -> Result<Sshd, String> {
        let port = free_port();
        let dir = new_dir("sshd");
        let host_key = dir.join("host_key");
        let client_key = dir.join("client_key");
        for key in [&host_key, &client_key] {
            keygen(key);
        }
        fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
        let host_pub = fs::read_to_string(dir.join("host_key.pub")).unwrap();
        let host_pub: Vec<&str> = host_pub.split_whitespace().take(2).collect();
        fs::write(
            dir.join("known_hosts"),
            format!("{HOST_KEY_ALIAS} {}\n", host_pub.join(" ")),
        )
        .unwrap();
        let d = dir.display();
        let sshd_config = dir.join("sshd_config");
        fs::write(
            &sshd_config,
            format!(
                "# yace test sshd (crates/cli/tests/stacks/daemons.rs)\n\
                 Port {port}\n\
                 ListenAddress 127.0.0.1\n\
                 HostKey {d}/host_key\n\
                 PidFile {d}/sshd.pid\n\
                 AuthorizedKeysFile {d}/authorized_keys\n\
                 AuthorizedPrincipalsFile none\n\
                 StrictModes no\n\
                 UsePAM no\n\
                 PubkeyAuthentication yes\n\
                 PasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\n\
                 PermitRootLogin prohibit-password\n\
                 AllowUsers {user}\n\
                 PermitUserRC no\n\
                 PrintMotd no\n\
                 PrintLastLog no\n\
                 X11Forwarding no\n\
                 UseDNS no\n\
                 LogLevel INFO\n"
            ),
        )
        .unwrap();
        let config = dir.join("ssh_config");
        fs::write(
            &config,
            format!(
                "# yace test ssh client config, for sshd on port {port}\n\
                 Host *\n\
                 \x20   Port {port}\n\
                 \x20   IdentityFile {d}/client_key\n\
                 \x20   IdentitiesOnly yes\n\
                 \x20   HostKeyAlias {HOST_KEY_ALIAS}\n\
                 \x20   UserKnownHostsFile {d}/known_hosts\n\
                 \x20   GlobalKnownHostsFile /dev/null\n\
                 \x20   StrictHostKeyChecking yes\n\
                 \x20   CheckHostIP no\n\
                 \x20   UpdateHostKeys no\n\
                 \x20   BatchMode yes\n\
                 \x20   PasswordAuthentication no\n\
                 \x20   KbdInteractiveAuthentication no\n\
                 \x20   ControlMaster no\n\
                 \x20   ControlPath none\n\
                 \x20   ConnectTimeout 5\n\
                 \x20   LogLevel ERROR\n"
            ),
        )
        .unwrap();

        let args = ["-D", "-e", "-f", &sshd_config.display().to_string()].map(String::from);
        let daemon = Daemon::spawn_in(dir, "sshd", Path::new(SSHD), &args);
        let mut sshd = Sshd {
            daemon,
            port,
            config,
            user: user.to_string(),
        };
        // First the port (cheap), then a real login.
        sshd.daemon.wait_for("sshd listening", || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        })?;
        let mut last = String::new();
        let ready = sshd.daemon.wait_for("`ssh ... true` to succeed", || {
            match run_with_timeout(sshd_ssh(&sshd.config, port, user).arg("true")) {
                Ok(out) if out.status.success() => true,
                Ok(out) => {
                    last = format!(
                        "ssh exited with {}: {}",
                        out.status,
                        String::from_utf8_lossy(&out.stderr).trim()
                    );
                    false
                }
                Err(e) => {
                    last = e;
                    false
                }
            }
        });
        ready.map_err(|e| format!("{e}\nlast ssh attempt: {last}"))?;
        Ok(sshd)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The ssh client config, for `ssh -F <config>`.
    pub fn config(&self) -> PathBuf {
        self.config.clone()
    }

    /// The user sshd lets in: the current user.
    pub fn user(&self) -> String {
        self.user.clone()
    }

    /// `USER@127.0.0.1`.
    pub fn destination(&self) -> String {
        format!("{}@127.0.0.1", self.user)
    }

    /// `ssh -F <config> -p <port> USER@127.0.0.1`, stdin from /dev/null:
    /// add the remote command with `.arg(..)`.
    pub fn ssh(&self) -> Command {
        sshd_ssh(&self.config, self.port, &self.user)
    }

    /// The listening sshd's PID (sessions run in processes under it).
    pub fn pid(&self) -> u32 {
        self.daemon.child.id()
    }

    /// (pid, name) of every process under sshd: its per-connection sshd
    /// processes and the commands they run. All are killed with it.
    pub fn session_processes(&self) -> Vec<(u32, String)> {
        descendants(self.daemon.child.id() as i32)
            .into_iter()
            .map(|p| {
                let comm = fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
                (p as u32, comm.trim_end().to_string())
            })
            .collect()
    }
}

/// The name the client config files sshd's host key under.
const HOST_KEY_ALIAS: &str = "yace-test-sshd";

fn sshd_ssh(config: &Path, port: u16, user: &str) -> Command {
    let mut cmd = Command::new(SSH);
    cmd.arg("-F")
        .arg(config)
        .arg("-p")
        .arg(port.to_string())
        .arg(format!("{user}@127.0.0.1"))
        .stdin(Stdio::null());
    cmd
}

/// `ssh-keygen -q -t ed25519 -N '' -f PATH`.
fn keygen(path: &Path) {
    let out = Command::new(SSH_KEYGEN)
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "yace-test", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {SSH_KEYGEN}: {e}"));
    assert!(
        out.status.success(),
        "ssh-keygen -f {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `cmd` with its output captured, killing it after 10 s.
fn run_with_timeout(cmd: &mut Command) -> Result<Output, String> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let deadline = Instant::now() + START_DEADLINE;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return child.wait_with_output().map_err(|e| e.to_string()),
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("no exit within {START_DEADLINE:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

// --- the process and its dir -----------------------------------------------------

/// A daemon started by this process, its temp dir, and its output log.
#[derive(Debug)]
struct Daemon {
    name: &'static str,
    dir: PathBuf,
    log: PathBuf,
    child: Child,
}

impl Daemon {
    /// Spawns `program` in a new temp dir (its cwd), output to `NAME.log`.
    fn spawn(name: &'static str, program: &Path, args: &[String]) -> Daemon {
        Daemon::spawn_in(new_dir(name), name, program, args)
    }

    fn spawn_in(dir: PathBuf, name: &'static str, program: &Path, args: &[String]) -> Daemon {
        let log = dir.join(format!("{name}.log"));
        let out = File::create(&log).unwrap();
        let child = Command::new(program)
            .args(args)
            .current_dir(&dir)
            .env_clear()
            .env(
                "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            )
            .env("LANG", "C")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .process_group(0)
            .spawn();
        let child = match child {
            Ok(child) => child,
            Err(e) => {
                let _ = fs::remove_dir_all(&dir);
                panic!("spawn {}: {e}", program.display());
            }
        };
        // For reap_stale, should this test process die without Drop.
        fs::write(dir.join("daemon.pid"), format!("{}\n", child.id())).unwrap();
        Daemon {
            name,
            dir,
            log,
            child,
        }
    }

    /// Polls `ready` (≤ 10 s); fails early, with the daemon's output, if
    /// it exits.
    fn wait_for(&mut self, what: &str, mut ready: impl FnMut() -> bool) -> Result<(), String> {
        let deadline = Instant::now() + START_DEADLINE;
        loop {
            if ready() {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                let out = fs::read_to_string(&self.log).unwrap_or_default();
                return Err(format!(
                    "{} exited ({status}) before {what}; its output ({}):\n{out}",
                    self.name,
                    self.log.display()
                ));
            }
            if Instant::now() > deadline {
                let out = fs::read_to_string(&self.log).unwrap_or_default();
                return Err(format!(
                    "no {what} within {START_DEADLINE:?}; {} output ({}):\n{out}",
                    self.name,
                    self.log.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let pid = self.child.id() as i32;
        // Session processes (sshd's per-connection children setsid(), so
        // they leave its process group): found by parentage, killed first.
        kill_descendants(pid);
        if let Ok(None) = self.child.try_wait() {
            signal(pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + STOP_GRACE;
        while let Ok(None) = self.child.try_wait() {
            if Instant::now() > deadline {
                signal(pid, libc::SIGKILL);
                let _ = self.child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        kill_descendants(pid); // any forked meanwhile (now orphans of init)
        if std::env::var_os("YACE_STACK_KEEP").is_some() {
            eprintln!("YACE_STACK_KEEP: kept {}", self.dir.display());
        } else {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

// --- processes -----------------------------------------------------------------

/// `kill(pid, sig)`; true if it succeeded.
fn signal(pid: i32, sig: i32) -> bool {
    // SAFETY: kill(2) takes plain integers and has no memory effects here.
    unsafe { libc::kill(pid, sig) == 0 }
}

fn euid() -> u32 {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

/// (pid, parent pid) of every live process, from /proc.
fn parents() -> Vec<(i32, i32)> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = fs::read_to_string(e.path().join("stat")).ok()?;
            let mut rest = stat[stat.rfind(')')? + 1..].split_whitespace();
            if rest.next()? == "Z" {
                return None;
            }
            Some((pid, rest.next()?.parse().ok()?))
        })
        .collect()
}

/// Every live process below `pid` (children, theirs, ...).
fn descendants(pid: i32) -> Vec<i32> {
    let all = parents();
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(all.iter().filter(|&&(_, pp)| pp == parent).map(|&(p, _)| p));
        i += 1;
    }
    tree.remove(0);
    tree
}

/// SIGKILLs every process below `pid` (not `pid` itself), the whole tree
/// found first, until none is left (≤ 20 rounds).
fn kill_descendants(pid: i32) {
    for _ in 0..20 {
        let tree = descendants(pid);
        if tree.is_empty() {
            return;
        }
        for p in tree {
            signal(p, libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether `pid` is a live (not zombie) process.
pub fn alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat[stat.rfind(')')? + 1..].split_whitespace().next()?;
            Some(state != "Z")
        })
        .unwrap_or(false)
}

/// Kills what daemons of dead test processes left (a test binary killed
/// before `Drop` ran): for each `TMP/yace-daemon-PID-*` whose PID is gone,
/// the daemon in its `daemon.pid` (if it is still the one that ran from
/// that dir) and everything under it.
fn reap_stale() {
    for dir in crate::harness::stale_dirs("yace-daemon-") {
        let pid: Option<i32> = fs::read_to_string(dir.join("daemon.pid"))
            .ok()
            .and_then(|s| s.trim().parse().ok());
        if let Some(pid) = pid {
            let cwd = fs::read_link(format!("/proc/{pid}/cwd")).ok();
            let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let dir_s = dir.display().to_string();
            let ours = cwd.as_deref() == Some(dir.as_path())
                || String::from_utf8_lossy(&cmdline).contains(&dir_s);
            if ours {
                kill_descendants(pid);
                signal(pid, libc::SIGKILL);
            }
        }
        let _ = fs::remove_dir_all(&dir);
    }
}

// --- dirs, users, ports, HTTP -------------------------------------------------------

/// Panics saying which package to install if `path` is missing.
fn need(path: &str, package: &str) {
    if !Path::new(path).exists() {
        panic!(
            "{path} is not installed (Debian package {package}): run scripts/test.sh, \
             which installs it"
        );
    }
}

/// `TMP/yace-daemon-OWNERPID-SEQ-NAME`, new, mode 0700.
fn new_dir(name: &str) -> PathBuf {
    static REAP: Once = Once::new();
    REAP.call_once(reap_stale);
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("yace-daemon-{}-{seq}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir); // left by an earlier process with our pid
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    dir
}

/// The current (effective) user's name, from /etc/passwd.
fn current_user() -> String {
    let euid = euid();
    fs::read_to_string("/etc/passwd")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.get(2)?.parse::<u32>().ok()? == euid).then(|| f[0].to_string())
        })
        .unwrap_or_else(|| panic!("uid {euid} not in /etc/passwd"))
}

/// A plain HTTP/1.0 `GET` (so the body comes unchunked): (status, body).
fn http_get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.set_write_timeout(Some(Duration::from_secs(5)))?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n")?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status line in {text:?}")))?;
    let body = match text.find("\r\n\r\n") {
        Some(i) => text[i + 4..].to_string(),
        None => String::new(),
    };
    Ok((status, body))
}
