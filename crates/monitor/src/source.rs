//! The sources: each reads its figures once per call, within a timeout.

use crate::listen::{self, Listening};
use crate::parse;
use crate::procfs::{self, PortRead, SystemFiles};
use crate::reading::Reading;
use crate::spec::{HttpUrl, ListenAt, Spec};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

/// Most series one `prom:` source may record (narrow it with `,match=`).
pub const PROM_SERIES_LIMIT: usize = 200;

/// A source, ready to be read again and again.
pub trait Source: Send {
    /// One read; fails with what went wrong, in words.
    fn read(&mut self, timeout: Duration) -> Result<Reading, String>;
    /// What it watches, in words, after the last read.
    fn label(&self) -> String;
    /// Advice for the user about how it is set up, said once in the result.
    fn note(&self) -> Option<String> {
        None
    }
}

/// Builds the source for `spec`; `port` is the target's (for `system`'s
/// per-port TCP states), `local` whether the target is on this machine.
pub fn open(
    spec: &Spec,
    port: Option<u16>,
    local: bool,
    interval: Duration,
) -> Result<Box<dyn Source>, String> {
    Ok(match spec {
        Spec::System => Box::new(System {
            port: if local { port } else { None },
            local,
            tables: None,
            every: 1,
            reads: 0,
        }),
        Spec::Pid(p) => Box::new(Process::new(Select::Pid(*p))),
        Spec::PidFile(f) => Box::new(Process::new(Select::PidFile(f.clone()))),
        Spec::Proc(n) => Box::new(Process::new(Select::Name(n.clone()))),
        Spec::Listen(at) => Box::new(Listen {
            at: at.clone(),
            last: Listening::default(),
        }),
        Spec::Node(u) => Box::new(Page::new(u, "node_exporter", |body| {
            parse::node::to_reading(&parse::prom::parse(body)?)
        })),
        Spec::Prom { url, filter } => {
            let filter = parse::prom::Filter::new(filter)?;
            Box::new(Page::new(url, "metrics", move |body| {
                parse::prom::to_reading(&parse::prom::parse(body)?, &filter, PROM_SERIES_LIMIT)
            }))
        }
        Spec::Nginx(u) => Box::new(Page::new(u, "nginx stub_status", parse::nginx::parse)),
        Spec::Apache(u) => Box::new(Page::new(u, "Apache mod_status", parse::apache::parse)),
        Spec::Fpm(u) => Box::new(crate::fpm::Status::http(u)),
        Spec::FpmFcgi(u) => Box::new(crate::fpm::Status::fcgi(u)),
        Spec::Ssh { .. } => Box::new(crate::ssh::Ssh::new(spec, port, interval)?),
    })
}

/// Most of a core the TCP table reads may take (the kernel walks its
/// whole connection hash table for them: milliseconds on a large machine
/// however few sockets there are).
const TCP_TABLE_BUDGET: f64 = 0.004;

impl System {
    /// /proc/net/tcp{,6}, the tables holding the port's sockets only.
    fn tcp_text(&mut self, port: u16) -> String {
        let read = |t: &str| std::fs::read_to_string(format!("/proc/{t}")).unwrap_or_default();
        let tables = self.tables.get_or_insert_with(|| {
            let holding: Vec<&'static str> = ["net/tcp", "net/tcp6"]
                .into_iter()
                .filter(|t| procfs::port_states(&read(t), port).iter().any(|n| *n > 0))
                .collect();
            if holding.is_empty() {
                vec!["net/tcp", "net/tcp6"]
            } else {
                holding
            }
        });
        tables.iter().map(|t| read(t)).collect()
    }
}

struct System {
    port: Option<u16>,
    local: bool,
    /// The TCP tables (`net/tcp`, `net/tcp6`) holding the port's sockets,
    /// found at the first read; only those are read again.
    tables: Option<Vec<&'static str>>,
    /// Per-port states are read every `every` reads, so that reading them
    /// stays within `TCP_TABLE_BUDGET` of a core.
    every: u64,
    reads: u64,
}

impl Source for System {
    fn read(&mut self, interval: Duration) -> Result<Reading, String> {
        let files = SystemFiles::read_local(None)?;
        let Some(port) = self.port else {
            return files.reading_with(PortRead::NoPort);
        };
        // A sample whose port was not counted still has the port's metrics,
        // as nulls: a series never loses a metric because a read was skipped.
        let due = self.reads.is_multiple_of(self.every);
        self.reads += 1;
        if !due {
            return files.reading_with(PortRead::Unread);
        }
        let started = crate::diag::thread_cpu_s();
        // The kernel's sockets on the port only (filtered in the kernel);
        // /proc/net/tcp text where sock_diag is not allowed.
        let figures = match crate::diag::tcp_all(crate::diag::ALL_TCP, Some(port)) {
            Ok(socks) => procfs::port_figures_of(&socks),
            Err(_) => procfs::port_figures(&self.tcp_text(port), port),
        };
        // Its CPU, not its wall time: on a busy machine the read waits for
        // a core, which costs the client nothing, and skipping then would
        // blind the port exactly under load.
        let cost = crate::diag::thread_cpu_s() - started;
        let budget = TCP_TABLE_BUDGET * interval.as_secs_f64();
        self.every = ((cost / budget).ceil() as u64).clamp(1, 60);
        files.reading_with(PortRead::Read(figures))
    }

    fn label(&self) -> String {
        match (self.local, self.port) {
            (true, Some(p)) => format!("this machine (client and server), TCP port {p}"),
            (true, None) => "this machine (client and server)".into(),
            (false, _) => "this machine (the client; the target is elsewhere)".into(),
        }
    }
}

enum Select {
    Pid(u32),
    PidFile(PathBuf),
    Name(String),
}

/// A process tree or a set of processes, summed: CPU as a counter that
/// only grows (a child that ends takes its last interval with it; a new
/// one counts from 0), and the listening sockets they hold.
struct Process {
    select: Select,
    /// The tree's root at the last read.
    root: Option<u32>,
    /// CPU seconds of each PID at the last read.
    last: HashMap<u32, f64>,
    cpu_s: f64,
    reads: u64,
    count: usize,
}

impl Process {
    fn new(select: Select) -> Self {
        Process {
            select,
            root: None,
            last: HashMap::new(),
            cpu_s: 0.0,
            reads: 0,
            count: 0,
        }
    }

    /// The processes watched: a tree from its root, or every one named.
    fn pids(&mut self) -> Result<Vec<u32>, String> {
        match &self.select {
            Select::Pid(p) => {
                self.root = Some(*p);
                Ok(procfs::process_tree(*p))
            }
            Select::PidFile(f) => {
                let text =
                    std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
                let pid = text.trim().parse::<u32>().map_err(|_| {
                    format!("{}: holds {:?}, not a process id", f.display(), text.trim())
                })?;
                self.root = Some(pid);
                Ok(procfs::process_tree(pid))
            }
            Select::Name(n) => Ok(procfs::pids_named(n)),
        }
    }
}

impl Source for Process {
    fn read(&mut self, _timeout: Duration) -> Result<Reading, String> {
        let mut sockets = HashSet::new();
        let stats: Vec<procfs::ProcStat> = self
            .pids()?
            .into_iter()
            .filter_map(|p| procfs::proc_stat(p, Some(&mut sockets)))
            .collect();
        if stats.is_empty() {
            return Err(match &self.select {
                Select::Pid(p) => format!("no process {p} (has it ended?)"),
                Select::PidFile(f) => format!("the process {} names is gone", f.display()),
                Select::Name(n) => format!(
                    "no process named {n}* (`ps -e` lists the names; php-fpm's is e.g. php-fpm8.2)"
                ),
            });
        }
        let mut now = HashMap::with_capacity(stats.len());
        for s in &stats {
            let before = match self.last.get(&s.pid) {
                Some(b) => *b,
                // At the first read every process is the baseline; a
                // process first seen later started since the last read.
                None if self.reads == 0 => s.cpu_s,
                None => 0.0,
            };
            self.cpu_s += (s.cpu_s - before).max(0.0);
            now.insert(s.pid, s.cpu_s);
        }
        self.last = now;
        self.reads += 1;
        self.count = stats.len();
        let mut r = Reading::new();
        r.counter("cpu_seconds", "seconds", self.cpu_s);
        r.gauge(
            "rss_bytes",
            "bytes",
            stats.iter().map(|s| s.rss_bytes).sum(),
        );
        r.gauge("threads", "count", stats.iter().map(|s| s.threads).sum());
        if stats.iter().all(|s| s.open_files.is_some()) {
            let files = stats.iter().filter_map(|s| s.open_files).sum();
            r.gauge("open_files", "count", files);
        }
        r.gauge("processes", "count", stats.len() as f64);
        let running = stats.iter().filter(|s| matches!(s.state, 'R' | 'D'));
        r.gauge("processes_running", "count", running.count() as f64);
        // The kernel's view of the sockets they listen on; a failed ask is
        // a null in this sample, not a zero.
        let listening = listen::settled(|| listen::owned(&sockets));
        Listening::fields(&mut r, listening.ok().as_ref());
        Ok(r)
    }

    fn label(&self) -> String {
        let n = self.count;
        let procs = if n == 1 { "process" } else { "processes" };
        match &self.select {
            Select::Pid(p) => format!("process {p} and its children: {n} {procs}"),
            Select::PidFile(f) => match self.root {
                Some(root) => format!(
                    "the process in {} ({root}) and its children: {n} {procs}",
                    f.display()
                ),
                None => format!("the process in {} and its children", f.display()),
            },
            Select::Name(name) => format!(
                "{name}*: {n} {procs}, every one on the machine (pidfile: watches one stack)"
            ),
        }
    }
}

/// One listening socket, by port or path (`listen:`).
struct Listen {
    at: ListenAt,
    last: Listening,
}

impl Source for Listen {
    fn read(&mut self, _timeout: Duration) -> Result<Reading, String> {
        let l = listen::settled(|| match &self.at {
            ListenAt::Tcp { host, port } => listen::on_port(*host, *port),
            ListenAt::Unix(path) => listen::at_path(path),
        })?;
        if l.listeners == 0 {
            return Err(match &self.at {
                ListenAt::Tcp { port, .. } => format!(
                    "no socket is listening on {} (`ss -tln sport = :{port}` lists them)",
                    self.at
                ),
                ListenAt::Unix(_) => format!(
                    "no unix socket is listening at {} (`ss -xl` lists them)",
                    self.at
                ),
            });
        }
        self.last = l;
        let mut r = Reading::new();
        Listening::fields(&mut r, Some(&l));
        Ok(r)
    }

    fn label(&self) -> String {
        let n = self.last.listeners;
        let what = match &self.at {
            ListenAt::Tcp { .. } => "TCP",
            ListenAt::Unix(_) => "unix",
        };
        if n > 1 {
            format!("{what} listeners on {} ({n} sockets)", self.at)
        } else {
            format!("the {what} listener on {}", self.at)
        }
    }
}

type Parser = Box<dyn Fn(&str) -> Result<Reading, String> + Send>;

/// A page read over HTTP and parsed.
struct Page {
    url: HttpUrl,
    what: &'static str,
    parse: Parser,
}

impl Page {
    fn new(
        url: &HttpUrl,
        what: &'static str,
        parse: impl Fn(&str) -> Result<Reading, String> + Send + 'static,
    ) -> Self {
        Page {
            url: url.clone(),
            what,
            parse: Box::new(parse),
        }
    }
}

impl Source for Page {
    fn read(&mut self, timeout: Duration) -> Result<Reading, String> {
        let body = crate::http::get(&self.url, timeout)?;
        (self.parse)(&body)
    }

    fn label(&self) -> String {
        format!("{} at {}", self.what, self.url.shown())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 39: when the port's count is skipped to stay in its CPU
    /// budget, the sample still has the port's metrics, as nulls; they
    /// were left out, and a run whose every read was skipped had none.
    #[test]
    fn a_skipped_port_count_is_a_null_not_a_missing_metric() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let mut s = System {
            port: Some(port),
            local: true,
            tables: None,
            every: 1,
            reads: 0,
        };
        let read = s.read(Duration::from_secs(1)).unwrap();
        assert_eq!(read.get("tcp_port_established"), Some(0.0));
        assert_eq!(read.get("listen_queue"), Some(0.0));
        assert!(read.get("listen_backlog").is_some_and(|b| b > 0.0));
        s.every = 1000;
        let skipped = s.read(Duration::from_secs(1)).unwrap();
        for name in ["tcp_port_established", "listen_queue", "listen_backlog"] {
            assert!(skipped.fields.iter().any(|f| f.name == name), "{name}");
            assert_eq!(skipped.get(name), None, "{name}");
        }
        drop(l);
    }
}
