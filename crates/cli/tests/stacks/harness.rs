//! Real web stacks from Debian's packages, started on loopback for a test.
//!
//! Each [`Stack`] renders the config templates committed in `stacks/` (repo
//! root) into its own temp dir, starts the servers as child processes from
//! there (never the system services, never `/etc`), waits until the front
//! server answers a real request, and stops everything it started when
//! dropped. Parallel tests may each start stacks: ports and dirs never
//! collide. The packages come from `scripts/test.sh`.
//!
//! ```ignore
//! let stack = Stack::start(StackKind::NginxPhpFpm);
//! // ... drive load at stack.url("/hello.php") ...
//! let log = stack.access_log(); // one LogEntry per request the front server saw
//! ```
//!
//! What the servers log (one tab-separated line per request, parsed into
//! [`LogEntry`]) is set by the `log_format`/`LogFormat` lines in the
//! templates. This file uses only std and libc, so another test binary may
//! include it with `#[path = "../stacks/harness.rs"] mod harness;`.
#![allow(dead_code)] // each test binary uses a different part of it

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long `start` may take, all servers included.
const START_DEADLINE: Duration = Duration::from_secs(15);
/// How long `Drop` waits after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// `access_log()` returns once the line count has not changed for this long.
const SETTLE: Duration = Duration::from_secs(1);
/// The shorter quiet time used once the expected number of lines is there.
const SHORT_SETTLE: Duration = Duration::from_millis(250);
/// Debian's module dir (package apache2-bin; libphp*.so from libapache2-mod-php).
const APACHE_MODULES: &str = "/usr/lib/apache2/modules";

/// The stacks of our users' stories. All PHP stacks serve the same docroot
/// (`stacks/www`): `/index.html`, `/hello.php`, `/sleep.php?ms=N`, `/cpu.php?ms=N`,
/// `/session.php?ms=N`, `/random.php`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StackKind {
    /// nginx serving `/index.html` (PHP files answer 404).
    NginxStatic,
    /// nginx + php-fpm over FastCGI (unix socket).
    NginxPhpFpm,
    /// Apache 2.4 MPM prefork + mod_php (libapache2-mod-php).
    ApachePreforkModPhp,
    /// Apache 2.4 MPM event + mod_proxy_fcgi -> php-fpm (unix socket).
    ApacheEventPhpFpm,
    /// nginx reverse proxy -> Apache prefork + mod_php ([`Stack::backend_log`]).
    NginxProxyApache,
}

impl StackKind {
    pub const ALL: [StackKind; 5] = [
        StackKind::NginxStatic,
        StackKind::NginxPhpFpm,
        StackKind::ApachePreforkModPhp,
        StackKind::ApacheEventPhpFpm,
        StackKind::NginxProxyApache,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StackKind::NginxStatic => "nginx-static",
            StackKind::NginxPhpFpm => "nginx-php-fpm",
            StackKind::ApachePreforkModPhp => "apache-prefork-mod-php",
            StackKind::ApacheEventPhpFpm => "apache-event-php-fpm",
            StackKind::NginxProxyApache => "nginx-proxy-apache",
        }
    }

    /// Whether the `.php` pages run (every stack but `NginxStatic`).
    pub fn serves_php(self) -> bool {
        self != StackKind::NginxStatic
    }

    /// The server that clients talk to (and whose log `access_log` reads).
    pub fn front_server(self) -> Server {
        match self {
            StackKind::NginxStatic | StackKind::NginxPhpFpm | StackKind::NginxProxyApache => {
                Server::Nginx
            }
            StackKind::ApachePreforkModPhp | StackKind::ApacheEventPhpFpm => Server::Apache,
        }
    }
}

/// The status pages a stack serves (loopback only, never in the access
/// logs): what `yace --monitor nginx:URL` / `apache:URL` / `fpm:URL` read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusPage {
    /// nginx's `stub_status` at `/nginx_status` (`Active connections: N` ...).
    Nginx,
    /// mod_status at `/server-status?auto` (`BusyWorkers: N` ...), on the
    /// Apache that serves the stack (the backend in `NginxProxyApache`).
    Apache,
    /// php-fpm's `pm.status_path` at `/fpm-status?json`, through the front
    /// server (`"active processes"` ...).
    Fpm,
}

/// How php-fpm is set up in the stacks that run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FpmOptions {
    /// `pm.max_children` (a pool of a known size: a known capacity for a
    /// PHP page of known duration).
    pub children: u32,
    /// The pool listens on TCP loopback (a port of its own) instead of its
    /// unix socket; `NginxPhpFpm` only (nginx's upstream follows).
    pub tcp: bool,
    /// `pm.status_listen` on a unix socket of its own
    /// ([`Stack::fpm_status_socket`]): the status served outside the pool.
    pub status_listen: bool,
}

impl Default for FpmOptions {
    fn default() -> Self {
        FpmOptions {
            children: 32,
            tcp: false,
            status_listen: false,
        }
    }
}

/// Where php-fpm's pool listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FpmListen {
    Unix(PathBuf),
    Tcp(u16),
}

/// Which server wrote a log. The two count a response body differently
/// when they send it chunked (PHP output usually is, over HTTP/1.1):
/// nginx's `body_bytes` is what went on the wire after the headers, chunk
/// framing included; Apache's is the body itself, before chunking. Both
/// count `total_bytes` on the wire (headers + framed body).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    Nginx,
    Apache,
}

/// One request as a server logged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    pub method: String,
    /// As the client sent it, with the query (`/sleep.php?ms=5`).
    pub path: String,
    pub status: u16,
    /// Body bytes sent; see [`Server`] for chunked responses.
    pub body_bytes: u64,
    /// Everything sent for this request: status line, headers, body.
    pub total_bytes: Option<u64>,
    /// From the first byte of the request to the log line. nginx has
    /// millisecond resolution (so `0` is possible), Apache microseconds.
    pub duration_us: Option<u64>,
    /// Whether an earlier request came on the same connection (nginx
    /// `$connection_requests > 1`, Apache `%k > 0`).
    pub keepalive_reused: Option<bool>,
    /// When the line was written (the request's end), in microseconds
    /// since the Unix epoch; nginx has millisecond resolution. The start
    /// is `end_unix_us - duration_us`.
    pub end_unix_us: Option<u64>,
}

/// A running stack; dropping it stops every process it started and removes
/// its temp dir (set `YACE_STACK_KEEP=1` to keep the dir for a post-mortem).
#[derive(Debug)]
pub struct Stack {
    kind: StackKind,
    dir: PathBuf,
    docroot: PathBuf,
    port: u16,
    backend_port: Option<u16>,
    front_log: PathBuf,
    backend_log: Option<PathBuf>,
    procs: Vec<Proc>,
    fpm: FpmOptions,
    fpm_port: Option<u16>,
}

#[derive(Debug)]
struct Proc {
    name: &'static str,
    child: Child,
}

/// Starts tried when a server could not bind its port.
const START_ATTEMPTS: u32 = 4;

/// Why one start attempt failed; `bind` failures are retried on a new port.
#[derive(Debug)]
struct StartError {
    bind: bool,
    message: String,
}

impl Stack {
    /// Starts `kind` and waits (≤ 15 s) until the front server has answered
    /// a request through the whole chain; the logs are empty on return.
    /// Panics with what is missing if a binary or module isn't installed,
    /// or with the servers' own error output if they don't come up.
    pub fn start(kind: StackKind) -> Stack {
        Stack::start_with_children(kind, 32)
    }

    /// [`Stack::start`] with php-fpm's `pm.max_children` set (a pool of a
    /// known size: a known capacity for a PHP page of known duration).
    pub fn start_with_children(kind: StackKind, children: u32) -> Stack {
        Stack::start_fpm(
            kind,
            FpmOptions {
                children,
                ..FpmOptions::default()
            },
        )
    }

    /// [`Stack::start`] with Apache prefork's workers set: `workers`
    /// children from the start and at most (StartServers, ServerLimit,
    /// MaxRequestWorkers), so a known number of connections is served at
    /// once (each keep-alive connection holds a child) and the rest wait
    /// in the listen queue.
    pub fn start_with_apache_workers(kind: StackKind, workers: u32) -> Stack {
        Stack::start_sized(kind, FpmOptions::default(), Some(workers))
    }

    /// [`Stack::start`] with php-fpm set up as `fpm` says.
    pub fn start_fpm(kind: StackKind, fpm: FpmOptions) -> Stack {
        Stack::start_sized(kind, fpm, None)
    }

    fn start_sized(kind: StackKind, fpm: FpmOptions, apache_workers: Option<u32>) -> Stack {
        assert!(
            !fpm.tcp || kind == StackKind::NginxPhpFpm,
            "FpmOptions::tcp is for NginxPhpFpm"
        );
        let tools = Tools::find(kind);
        static REAP: Once = Once::new();
        REAP.call_once(reap_stale_stacks);
        let mut last = String::new();
        // A port another test process bound between our pick and the
        // server's bind: the server says EADDRINUSE and exits; each retry
        // picks a new port.
        for attempt in 0..START_ATTEMPTS {
            match Stack::try_start(kind, &tools, fpm, apache_workers) {
                Ok(stack) => return stack,
                Err(e) if e.bind && attempt + 1 < START_ATTEMPTS => last = e.message,
                Err(e) => panic!("could not start stack {}: {}", kind.name(), e.message),
            }
        }
        panic!(
            "could not start stack {} (port taken {START_ATTEMPTS} times): {last}",
            kind.name()
        )
    }

    /// `http://127.0.0.1:PORT{path}` on the front server; `path` starts with `/`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The same for the Apache behind nginx in `NginxProxyApache`.
    pub fn backend_url(&self, path: &str) -> Option<String> {
        self.backend_port
            .map(|port| format!("http://127.0.0.1:{port}{path}"))
    }

    /// The full URL of status page `which`, if this stack has it:
    /// nginx's on the nginx stacks, Apache's on those with an Apache
    /// (`NginxProxyApache`: the backend's port), php-fpm's on the php-fpm
    /// stacks (through the front server).
    pub fn status_url(&self, which: StatusPage) -> Option<String> {
        let nginx = self.kind.front_server() == Server::Nginx;
        match which {
            StatusPage::Nginx => nginx.then(|| self.url("/nginx_status")),
            StatusPage::Apache => match self.kind {
                StackKind::NginxProxyApache => self.backend_url("/server-status?auto"),
                _ if !nginx => Some(self.url("/server-status?auto")),
                _ => None,
            },
            StatusPage::Fpm => self.fpm_master_pid().map(|_| self.url("/fpm-status?json")),
        }
    }

    /// The php-fpm master's PID (its workers are its children), on the
    /// php-fpm stacks.
    pub fn fpm_master_pid(&self) -> Option<u32> {
        self.procs
            .iter()
            .find(|p| p.name == "php-fpm")
            .map(|p| p.child.id())
    }

    /// Where php-fpm's pool listens, on the php-fpm stacks.
    pub fn fpm_listen(&self) -> Option<FpmListen> {
        if !matches!(
            self.kind,
            StackKind::NginxPhpFpm | StackKind::ApacheEventPhpFpm
        ) {
            return None;
        }
        Some(match self.fpm_port {
            Some(p) => FpmListen::Tcp(p),
            None => FpmListen::Unix(self.dir.join("run/php-fpm.sock")),
        })
    }

    /// php-fpm's own access log (`access.log` in the pool), once it has
    /// settled: (method, URI with query, status) per request the pool ran.
    pub fn fpm_access_log(&self) -> Vec<(String, String, u16)> {
        settled_lines(&self.dir.join("logs/php-fpm-access.log"), 0, SETTLE)
            .iter()
            .filter_map(|l| {
                let mut f = l.split(' ');
                let (m, p, s) = (f.next()?, f.next()?, f.next()?);
                Some((m.to_owned(), p.to_owned(), s.parse().ok()?))
            })
            .collect()
    }

    /// php-fpm's `pm.status_listen` socket, when the stack was started with it.
    pub fn fpm_status_socket(&self) -> Option<PathBuf> {
        (self.fpm.status_listen && self.fpm_listen().is_some())
            .then(|| self.dir.join("run/php-fpm-status.sock"))
    }

    /// The front server's log, once its line count has not changed for 1 s
    /// (servers write the line just after the response: read after the
    /// load has ended).
    pub fn access_log(&self) -> Vec<LogEntry> {
        parse_log(
            self.kind.front_server(),
            &settled_lines(&self.front_log, 0, SETTLE),
        )
    }

    /// The Apache backend's log (`NginxProxyApache`; `None` for the others).
    pub fn backend_log(&self) -> Option<Vec<LogEntry>> {
        let path = self.backend_log.as_ref()?;
        Some(parse_log(Server::Apache, &settled_lines(path, 0, SETTLE)))
    }

    /// Like `access_log`, but faster when you know how many requests were
    /// sent: waits (≤ 15 s) for at least `n` lines, then 250 ms more for
    /// any extra one.
    pub fn wait_access_log(&self, n: usize) -> Vec<LogEntry> {
        parse_log(
            self.kind.front_server(),
            &settled_lines(&self.front_log, n, SHORT_SETTLE),
        )
    }

    /// `wait_access_log` for the backend's log.
    pub fn wait_backend_log(&self, n: usize) -> Option<Vec<LogEntry>> {
        let path = self.backend_log.as_ref()?;
        Some(parse_log(
            Server::Apache,
            &settled_lines(path, n, SHORT_SETTLE),
        ))
    }

    /// Empties the access logs (front and backend) once no line has come
    /// for 250 ms. Call it between phases, with no request in flight.
    pub fn clear_logs(&self) {
        for path in self.logs() {
            settled_lines(path, 0, SHORT_SETTLE);
        }
        self.truncate_logs();
    }

    fn logs(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.front_log).chain(self.backend_log.as_ref())
    }

    fn truncate_logs(&self) {
        for path in self.logs() {
            // The servers append (O_APPEND), so their next line lands at 0.
            OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|f| f.set_len(0))
                .unwrap_or_else(|e| panic!("truncate {}: {e}", path.display()));
        }
    }

    pub fn name(&self) -> &'static str {
        self.kind.name()
    }

    pub fn kind(&self) -> StackKind {
        self.kind
    }

    /// The server whose log `access_log` reads (tells how it counts bytes).
    pub fn front_server(&self) -> Server {
        self.kind.front_server()
    }

    /// The docroot the servers serve (a copy of `stacks/www`).
    pub fn docroot(&self) -> &Path {
        &self.docroot
    }

    /// The stack's temp dir: rendered configs in `conf/`, logs in `logs/`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// PIDs of the processes started (each leads its own process group,
    /// with its workers in it).
    pub fn pids(&self) -> Vec<u32> {
        self.procs.iter().map(|p| p.child.id()).collect()
    }

    fn try_start(
        kind: StackKind,
        tools: &Tools,
        fpm: FpmOptions,
        apache_workers: Option<u32>,
    ) -> Result<Stack, StartError> {
        let children = fpm.children;
        let deadline = Instant::now() + START_DEADLINE;
        let dir = new_stack_dir(kind);
        let docroot = dir.join("www");
        let mut stack = Stack {
            kind,
            dir: dir.clone(),
            docroot: docroot.clone(),
            port: free_port(),
            backend_port: (kind == StackKind::NginxProxyApache).then(free_port),
            front_log: dir.join("logs/access.log"),
            backend_log: (kind == StackKind::NginxProxyApache)
                .then(|| dir.join("logs/backend-access.log")),
            procs: Vec::new(),
            fpm,
            fpm_port: fpm.tcp.then(free_port),
        };
        // From here on, dropping `stack` cleans up whatever was started.
        let (user, group) = run_as();
        for sub in ["conf", "run", "logs", "nginx", "sessions"] {
            make_dir(&dir.join(sub), 0o755);
        }
        let sessions = dir.join("sessions");
        fs::set_permissions(&sessions, fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&sessions, Some(user.uid), Some(user.gid))
            .unwrap_or_else(|e| panic!("chown {} to {}: {e}", sessions.display(), user.name));
        copy_docroot(&stacks_dir().join("www"), &docroot);
        for log in stack.logs() {
            File::create(log).unwrap();
        }

        let backend_port = stack.backend_port.unwrap_or(0);
        let root = dir.display().to_string();
        let sock = dir.join("run/php-fpm.sock").display().to_string();
        let status_sock = dir.join("run/php-fpm-status.sock").display().to_string();
        let (fpm_listen, fpm_pass) = match stack.fpm_port {
            Some(p) => (format!("127.0.0.1:{p}"), format!("127.0.0.1:{p}")),
            None => (sock.clone(), format!("unix:{sock}")),
        };
        let status_listen = if fpm.status_listen {
            format!("pm.status_listen = {status_sock}")
        } else {
            "; pm.status_listen: not set".to_string()
        };
        let vars = |port: u16, access_log: &Path| -> Vec<(&'static str, String)> {
            vec![
                ("ROOT", root.clone()),
                ("DOCROOT", docroot.display().to_string()),
                ("PORT", port.to_string()),
                ("BACKEND_PORT", backend_port.to_string()),
                ("USER", user.name.clone()),
                ("GROUP", group.clone()),
                ("LIBPHP", tools.libphp.display().to_string()),
                ("FPM_SOCK", sock.clone()),
                ("FPM_LISTEN", fpm_listen.clone()),
                ("FPM_PASS", fpm_pass.clone()),
                ("FPM_STATUS_LISTEN", status_listen.clone()),
                ("SESSIONS", sessions.display().to_string()),
                ("ACCESS_LOG", access_log.display().to_string()),
                ("FPM_MAX_CHILDREN", children.to_string()),
                ("FPM_START", children.min(4).to_string()),
                ("FPM_MIN_SPARE", children.min(2).to_string()),
                ("FPM_MAX_SPARE", children.min(8).to_string()),
                // Apache prefork: today's sizes unless set.
                ("APACHE_START", apache_workers.unwrap_or(110).to_string()),
                (
                    "APACHE_MIN_SPARE",
                    apache_workers.map_or(10, |w| w.min(10)).to_string(),
                ),
                (
                    "APACHE_MAX_SPARE",
                    apache_workers.map_or(120, |w| w.min(120)).to_string(),
                ),
                ("APACHE_WORKERS", apache_workers.unwrap_or(200).to_string()),
            ]
        };
        let front = vars(stack.port, &stack.front_log);

        match kind {
            StackKind::NginxStatic => {
                let conf = render(&dir, "nginx-static.conf", &front);
                stack.start_nginx(tools, &conf, deadline)?;
            }
            StackKind::NginxPhpFpm => {
                let fpm = render(&dir, "php-fpm.conf", &front);
                stack.start_php_fpm(tools, &fpm, deadline)?;
                let conf = render(&dir, "nginx-php-fpm.conf", &front);
                stack.start_nginx(tools, &conf, deadline)?;
            }
            StackKind::ApachePreforkModPhp => {
                let conf = render(&dir, "apache-prefork-modphp.conf", &front);
                stack.start_apache(tools, &conf, stack.port, deadline)?;
            }
            StackKind::ApacheEventPhpFpm => {
                let fpm = render(&dir, "php-fpm.conf", &front);
                stack.start_php_fpm(tools, &fpm, deadline)?;
                let conf = render(&dir, "apache-event-phpfpm.conf", &front);
                stack.start_apache(tools, &conf, stack.port, deadline)?;
            }
            StackKind::NginxProxyApache => {
                let backend_log = stack.backend_log.clone().unwrap();
                let conf = render(
                    &dir,
                    "apache-prefork-modphp.conf",
                    &vars(backend_port, &backend_log),
                );
                stack.start_apache(tools, &conf, backend_port, deadline)?;
                let conf = render(&dir, "nginx-proxy.conf", &front);
                stack.start_nginx(tools, &conf, deadline)?;
            }
        }
        stack.probe(deadline)?;
        Ok(stack)
    }

    fn start_nginx(
        &mut self,
        tools: &Tools,
        conf: &Path,
        deadline: Instant,
    ) -> Result<(), StartError> {
        let prefix = format!("{}/", self.dir.display());
        let args = ["-p", &prefix, "-c", &conf.display().to_string()].map(String::from);
        self.spawn("nginx", &tools.nginx, &args)?;
        let port = self.port;
        self.wait_for("nginx listening", deadline, || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        })
    }

    fn start_apache(
        &mut self,
        tools: &Tools,
        conf: &Path,
        port: u16,
        deadline: Instant,
    ) -> Result<(), StartError> {
        let args = [
            "-f".to_string(),
            conf.display().to_string(),
            "-DFOREGROUND".to_string(),
        ];
        self.spawn("apache2", &tools.apache2, &args)?;
        self.wait_for("apache2 listening", deadline, || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        })
    }

    fn start_php_fpm(
        &mut self,
        tools: &Tools,
        conf: &Path,
        deadline: Instant,
    ) -> Result<(), StartError> {
        let args = [
            "-F".to_string(),
            "-y".to_string(),
            conf.display().to_string(),
        ];
        self.spawn("php-fpm", &tools.php_fpm, &args)?;
        let listen = self.fpm_listen();
        let status = self.fpm_status_socket();
        self.wait_for("php-fpm socket", deadline, || {
            let pool = match &listen {
                Some(FpmListen::Tcp(port)) => TcpStream::connect(("127.0.0.1", *port)).is_ok(),
                Some(FpmListen::Unix(path)) => UnixStream::connect(path).is_ok(),
                None => true,
            };
            pool && status
                .as_ref()
                .is_none_or(|s| UnixStream::connect(s).is_ok())
        })
    }

    /// Starts `program` in its own process group, output to `logs/NAME.out`.
    fn spawn(
        &mut self,
        name: &'static str,
        program: &Path,
        args: &[String],
    ) -> Result<(), StartError> {
        let out = File::create(self.dir.join(format!("logs/{name}.out"))).unwrap();
        let child = Command::new(program)
            .args(args)
            .current_dir(&self.dir)
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
            .spawn()
            .map_err(|e| StartError {
                bind: false,
                message: format!("spawn {}: {e}", program.display()),
            })?;
        // For reap_stale_stacks, should this test process die without Drop.
        let mut pids = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("run/pgids"))
            .unwrap();
        writeln!(pids, "{}", child.id()).unwrap();
        self.procs.push(Proc { name, child });
        Ok(())
    }

    /// Polls `ready` until it holds; fails early if the last process exits.
    fn wait_for(
        &mut self,
        what: &str,
        deadline: Instant,
        mut ready: impl FnMut() -> bool,
    ) -> Result<(), StartError> {
        loop {
            if ready() {
                return Ok(());
            }
            let proc = self.procs.last_mut().unwrap();
            if let Ok(Some(status)) = proc.child.try_wait() {
                let name = proc.name;
                let diag = self.diagnostics();
                return Err(StartError {
                    bind: diag.contains("Address already in use"),
                    message: format!("{name} exited ({status}) before {what}\n{diag}"),
                });
            }
            if Instant::now() > deadline {
                return Err(StartError {
                    bind: false,
                    message: format!(
                        "no {what} within {START_DEADLINE:?}\n{}",
                        self.diagnostics()
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// One real request through the whole chain, then waits for its log
    /// line(s) and empties the logs.
    fn probe(&mut self, deadline: Instant) -> Result<(), StartError> {
        let (path, expect) = if self.kind.serves_php() {
            ("/hello.php", "hello world")
        } else {
            ("/index.html", "<html")
        };
        let mut last = String::new();
        let mut tries = 0;
        while Instant::now() < deadline {
            tries += 1;
            match http_get(self.port, path) {
                Ok((200, body)) if body.contains(expect) => {
                    if tries == 1 {
                        // Exactly one line per log comes of it: wait for it.
                        for log in self.logs() {
                            while read_lines(log).is_empty() && Instant::now() < deadline {
                                std::thread::sleep(Duration::from_millis(5));
                            }
                        }
                        self.truncate_logs();
                    } else {
                        self.clear_logs(); // lines of the failed tries too
                    }
                    return Ok(());
                }
                Ok((status, body)) => last = format!("GET {path}: {status}\n{body}"),
                Err(e) => last = format!("GET {path}: {e}"),
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(StartError {
            bind: false,
            message: format!(
                "no good answer within {START_DEADLINE:?}: {last}\n{}",
                self.diagnostics()
            ),
        })
    }

    /// The tail of every server output and error log, for panic messages.
    fn diagnostics(&self) -> String {
        let mut out = format!("(stack dir {})", self.dir.display());
        let mut names: Vec<PathBuf> = fs::read_dir(self.dir.join("logs"))
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        names.sort();
        for path in names {
            let text = fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = &lines[lines.len().saturating_sub(20)..];
            if !tail.is_empty() {
                out += &format!("\n--- {}\n{}", path.display(), tail.join("\n"));
            }
        }
        out
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        for p in &mut self.procs {
            if let Ok(None) = p.child.try_wait() {
                signal(p.child.id() as i32, libc::SIGTERM);
            }
        }
        let deadline = Instant::now() + STOP_GRACE;
        for p in &mut self.procs {
            while let Ok(None) = p.child.try_wait() {
                if Instant::now() > deadline {
                    signal(-(p.child.id() as i32), libc::SIGKILL);
                    let _ = p.child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            // Workers left behind by their master: the group still exists.
            let pgid = p.child.id() as i32;
            if signal(-pgid, 0) {
                signal(-pgid, libc::SIGKILL);
            }
        }
        if std::env::var_os("YACE_STACK_KEEP").is_some() {
            eprintln!("YACE_STACK_KEEP: kept {}", self.dir.display());
        } else {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// `kill(pid, sig)`; true if it succeeded.
fn signal(pid: i32, sig: i32) -> bool {
    // SAFETY: kill(2) takes plain integers and has no memory effects here.
    unsafe { libc::kill(pid, sig) == 0 }
}

// --- binaries and modules ---------------------------------------------------

#[derive(Debug)]
struct Tools {
    nginx: PathBuf,
    apache2: PathBuf,
    php_fpm: PathBuf,
    libphp: PathBuf,
}

impl Tools {
    /// What `kind` needs, or a panic saying what is missing.
    fn find(kind: StackKind) -> Tools {
        let name = kind.name();
        let missing = |what: &str, package: &str| -> ! {
            panic!(
                "stack {name} needs {what}, which is not installed (Debian package {package}): \
                 run scripts/test.sh, which installs it"
            )
        };
        let file = |path: &str, package: &str| -> PathBuf {
            let p = PathBuf::from(path);
            if !p.exists() {
                missing(path, package);
            }
            p
        };
        let mut tools = Tools {
            nginx: PathBuf::new(),
            apache2: PathBuf::new(),
            php_fpm: PathBuf::new(),
            libphp: PathBuf::new(),
        };
        let nginx = matches!(
            kind,
            StackKind::NginxStatic | StackKind::NginxPhpFpm | StackKind::NginxProxyApache
        );
        let apache = !matches!(kind, StackKind::NginxStatic | StackKind::NginxPhpFpm);
        let mod_php = matches!(
            kind,
            StackKind::ApachePreforkModPhp | StackKind::NginxProxyApache
        );
        let fpm = matches!(kind, StackKind::NginxPhpFpm | StackKind::ApacheEventPhpFpm);
        if nginx {
            tools.nginx = file("/usr/sbin/nginx", "nginx-light");
        }
        if apache {
            tools.apache2 = file("/usr/sbin/apache2", "apache2");
            let mut modules = vec![
                "mod_authz_core",
                "mod_authz_host",
                "mod_mime",
                "mod_dir",
                "mod_setenvif",
                "mod_status",
            ];
            if kind == StackKind::ApacheEventPhpFpm {
                modules.extend(["mod_mpm_event", "mod_proxy", "mod_proxy_fcgi"]);
            } else {
                modules.push("mod_mpm_prefork");
            }
            for m in modules {
                file(&format!("{APACHE_MODULES}/{m}.so"), "apache2-bin");
            }
        }
        if mod_php {
            tools.libphp = newest(APACHE_MODULES, "libphp", ".so").unwrap_or_else(|| {
                missing(
                    &format!("{APACHE_MODULES}/libphp*.so"),
                    "libapache2-mod-php",
                )
            });
        }
        if fpm {
            tools.php_fpm = newest("/usr/sbin", "php-fpm", "")
                .unwrap_or_else(|| missing("/usr/sbin/php-fpm*", "php-fpm"));
        }
        tools
    }
}

/// The last (highest version) `dir/PREFIX*SUFFIX`, e.g. libphp8.2.so.
fn newest(dir: &str, prefix: &str, suffix: &str) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with(prefix) && n.ends_with(suffix)
        })
        .collect();
    found.sort();
    found.pop()
}

// --- dirs, users, ports, templates --------------------------------------------

/// `stacks/` at the repo root.
fn stacks_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../stacks")
}

fn make_dir(path: &Path, mode: u32) {
    fs::DirBuilder::new()
        .mode(mode)
        .create(path)
        .unwrap_or_else(|e| panic!("mkdir {}: {e}", path.display()));
    // Whatever the umask, the servers' user must get in.
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// `TMP/yace-stack-OWNERPID-SEQ-NAME`, new, mode 0755.
fn new_stack_dir(kind: StackKind) -> PathBuf {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "yace-stack-{}-{seq}-{}",
        std::process::id(),
        kind.name()
    ));
    let _ = fs::remove_dir_all(&dir); // left by an earlier process with our pid
    make_dir(&dir, 0o755);
    dir
}

fn copy_docroot(from: &Path, to: &Path) {
    make_dir(to, 0o755);
    let entries = fs::read_dir(from).unwrap_or_else(|e| panic!("read {}: {e}", from.display()));
    for entry in entries {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_docroot(&entry.path(), &dest);
        } else {
            fs::copy(entry.path(), &dest).unwrap();
            fs::set_permissions(&dest, fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
}

/// Renders `stacks/NAME` into `DIR/conf/NAME`, replacing each `{{KEY}}`.
fn render(dir: &Path, name: &str, vars: &[(&str, String)]) -> PathBuf {
    let src = stacks_dir().join(name);
    let mut text =
        fs::read_to_string(&src).unwrap_or_else(|e| panic!("read {}: {e}", src.display()));
    for (key, value) in vars {
        text = text.replace(&format!("{{{{{key}}}}}"), value);
    }
    if let Some(at) = text.find("{{") {
        let rest: String = text[at..].chars().take(40).collect();
        panic!("{}: unknown placeholder at {rest:?}", src.display());
    }
    let dest = dir.join("conf").join(name);
    fs::write(&dest, text).unwrap();
    dest
}

#[derive(Debug, Clone)]
struct User {
    name: String,
    uid: u32,
    gid: u32,
}

/// Who the workers run as, and their group's name: www-data (else nobody)
/// when we are root; ourselves otherwise (the servers then don't switch).
fn run_as() -> (User, String) {
    let passwd = fs::read_to_string("/etc/passwd").unwrap_or_default();
    let groups = fs::read_to_string("/etc/group").unwrap_or_default();
    let users: Vec<User> = passwd
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            Some(User {
                name: f.first()?.to_string(),
                uid: f.get(2)?.parse().ok()?,
                gid: f.get(3)?.parse().ok()?,
            })
        })
        .collect();
    let euid = fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0);
    let user = if euid == 0 {
        users
            .iter()
            .find(|u| u.name == "www-data")
            .or_else(|| users.iter().find(|u| u.name == "nobody"))
            .cloned()
            .expect("neither www-data nor nobody in /etc/passwd")
    } else {
        users
            .iter()
            .find(|u| u.uid == euid)
            .cloned()
            .unwrap_or_else(|| panic!("uid {euid} not in /etc/passwd"))
    };
    let group = groups
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.get(2)?.parse::<u32>().ok()? == user.gid).then(|| f[0].to_string())
        })
        .unwrap_or_else(|| panic!("gid {} not in /etc/group", user.gid));
    (user, group)
}

/// A loopback port that is free now and was not handed out before by this
/// process. Picked below the kernel's ephemeral range, so that the test
/// clients' own connections (and `bind(:0)` elsewhere) can't take it
/// before the server binds it. (The daemons of `daemons.rs` take theirs
/// from here too.)
pub fn free_port() -> u16 {
    static GIVEN: Mutex<Vec<u16>> = Mutex::new(Vec::new());
    static SEED: AtomicU64 = AtomicU64::new(0);
    let mut given = GIVEN.lock().unwrap();
    let ephemeral_lo: u32 = fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(32768);
    const LO: u32 = 20000;
    if ephemeral_lo >= LO + 1000 {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        let _ = SEED.compare_exchange(
            0,
            nanos ^ (u64::from(std::process::id()) << 32),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        for _ in 0..500 {
            // splitmix64
            let mut z = SEED.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let port = (LO + (z % u64::from(ephemeral_lo - LO)) as u32) as u16;
            if !given.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
                given.push(port);
                return port;
            }
        }
    }
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// The temp dirs named `PREFIX<pid>-…` that no other live test process
/// owns: this process's own, and those of test processes that died.
pub fn stale_dirs(prefix: &str) -> Vec<PathBuf> {
    let me = std::process::id();
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(owner) = name
                .strip_prefix(prefix)
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<u32>().ok())
            else {
                return false;
            };
            owner == me || !Path::new(&format!("/proc/{owner}")).exists()
        })
        .map(|e| e.path())
        .collect()
}

/// Kills what stacks of dead test processes left (a test binary killed
/// before `Drop` ran): for each `TMP/yace-stack-PID-*` whose PID is gone,
/// the server processes in the groups listed in its `run/pgids`.
fn reap_stale_stacks() {
    for dir in stale_dirs("yace-stack-") {
        let pgids: Vec<i32> = fs::read_to_string(dir.join("run/pgids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if !pgids.is_empty() {
            for (pid, comm, pgrp) in processes() {
                let ours = comm == "nginx" || comm == "apache2" || comm.starts_with("php-fpm");
                if ours && pgids.contains(&pgrp) {
                    signal(pid, libc::SIGKILL);
                }
            }
        }
        let _ = fs::remove_dir_all(&dir);
    }
}

/// (pid, comm, process group) of every process, from /proc.
pub fn processes() -> Vec<(i32, String, i32)> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = fs::read_to_string(e.path().join("stat")).ok()?;
            let open = stat.find('(')?;
            let close = stat.rfind(')')?;
            let comm = stat[open + 1..close].to_string();
            let mut rest = stat[close + 1..].split_whitespace();
            let state = rest.next()?;
            if state == "Z" {
                return None; // already dead, waiting to be reaped
            }
            let pgrp = rest.nth(1)?.parse().ok()?;
            Some((pid, comm, pgrp))
        })
        .collect()
}

// --- logs ----------------------------------------------------------------------

/// The complete lines of `path` (a line still being written is left out).
fn read_lines(path: &Path) -> Vec<String> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let mut lines: Vec<String> = text.split_inclusive('\n').map(String::from).collect();
    if lines.last().is_some_and(|l| !l.ends_with('\n')) {
        lines.pop();
    }
    lines
        .into_iter()
        .map(|l| l.trim_end_matches('\n').to_string())
        .collect()
}

/// The lines once there are at least `at_least` and none came for `quiet`
/// (or after 15 s, whatever there is).
fn settled_lines(path: &Path, at_least: usize, quiet: Duration) -> Vec<String> {
    let start = Instant::now();
    let mut lines = read_lines(path);
    let mut since = Instant::now();
    loop {
        if (lines.len() >= at_least && since.elapsed() >= quiet) || start.elapsed() > START_DEADLINE
        {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(25));
        let now = read_lines(path);
        if now.len() != lines.len() {
            lines = now;
            since = Instant::now();
        }
    }
}

fn parse_log(server: Server, lines: &[String]) -> Vec<LogEntry> {
    lines
        .iter()
        .map(|l| {
            parse_line(server, l).unwrap_or_else(|| panic!("unexpected {server:?} log line: {l:?}"))
        })
        .collect()
}

/// One line of the `yace` log format in the templates (tab-separated):
/// nginx: `method uri status body_bytes bytes seconds.mmm connection_requests epoch.mmm`
/// Apache: `method request-line status %B %O microseconds %k epoch-microseconds`.
fn parse_line(server: Server, line: &str) -> Option<LogEntry> {
    let f: Vec<&str> = line.split('\t').collect();
    if f.len() != 8 {
        return None;
    }
    let num = |s: &str| s.parse::<u64>().ok();
    let (path, duration_us, reused, end) = match server {
        Server::Nginx => (
            f[1].to_string(),
            millis_to_us(f[5])?,
            num(f[6])? > 1,
            millis_to_us(f[7])?,
        ),
        Server::Apache => {
            // "GET /path?q HTTP/1.1"
            let path = f[1].split(' ').nth(1).unwrap_or("").to_string();
            (path, num(f[5])?, num(f[6])? > 0, num(f[7])?)
        }
    };
    Some(LogEntry {
        method: f[0].to_string(),
        path,
        status: f[2].parse().ok()?,
        body_bytes: num(f[3]).unwrap_or(0), // Apache's %B and nginx's never say "-"
        total_bytes: num(f[4]),
        duration_us: Some(duration_us),
        keepalive_reused: Some(reused),
        end_unix_us: Some(end),
    })
}

/// nginx's `SECONDS.mmm` (exactly three decimals) in microseconds.
fn millis_to_us(s: &str) -> Option<u64> {
    let (secs, millis) = s.split_once('.')?;
    if millis.len() != 3 {
        return None;
    }
    Some(secs.parse::<u64>().ok()? * 1_000_000 + millis.parse::<u64>().ok()? * 1000)
}

/// A plain `GET` with `Connection: close`: (status, body as text).
fn http_get(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    s.set_write_timeout(Some(Duration::from_secs(5)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status line in {text:?}")))?;
    Ok((status, text))
}
