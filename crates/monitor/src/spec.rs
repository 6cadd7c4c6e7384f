//! `--monitor SPEC`: what to watch, parsed and checked before anything runs.

use std::fmt;
use std::path::PathBuf;

/// The forms `--monitor` takes, for error messages and `--help`.
pub const FORMS: &str = "system, pid:N, pidfile:PATH, proc:NAME, listen:[HOST:]PORT, \
                         listen:/PATH.sock, node:URL, prom:URL[,match=GLOB], \
                         nginx:URL, apache:URL, fpm:URL, fpm:fcgi://HOST:PORT[/PATH], \
                         fpm:fcgi+unix:SOCKET[:/PATH], ssh:[USER@]HOST[:PORT][,yace=PATH]";

/// One source to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    /// This machine's /proc: CPU, load, memory, TCP (on the target's port too).
    System,
    /// One process and its descendants (php-fpm's master and its children,
    /// Apache's parent and its workers), summed, with the accept queues of
    /// the listening sockets they hold.
    Pid(u32),
    /// The process tree whose root's PID a file holds (read again at every
    /// sample, so a restarted server is followed): one stack.
    PidFile(PathBuf),
    /// Every process on the machine whose name starts with NAME, summed
    /// and counted: every pool of that name, not one stack (`pidfile:`
    /// scopes to one).
    Proc(String),
    /// One listening socket's accept queue and connections, from the kernel.
    Listen(ListenAt),
    /// A Prometheus node_exporter: the same figures as `system`.
    Node(HttpUrl),
    /// Any Prometheus/OpenMetrics text endpoint; `filter` is glob patterns.
    Prom { url: HttpUrl, filter: String },
    /// nginx `stub_status`.
    Nginx(HttpUrl),
    /// Apache `mod_status` (`?auto` added if the URL has no query).
    Apache(HttpUrl),
    /// php-fpm's status page through the web server (`?json&full` asked
    /// for; `full` added to a query given).
    Fpm(HttpUrl),
    /// php-fpm's status page read over FastCGI from the pool's socket or
    /// its `pm.status_listen` socket.
    FpmFcgi(crate::fpm::FcgiUrl),
    /// `system`'s figures read on another machine over the user's SSH.
    Ssh {
        /// `[user@]host`, as ssh takes it.
        destination: String,
        port: Option<u16>,
        /// yace's path there (default: `yace` on the remote PATH; a plain
        /// shell reading /proc when there is none).
        yace: Option<String>,
    },
}

/// A listening socket, by its TCP port (and address) or unix path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenAt {
    Tcp {
        /// Only the listener serving this address (one on the wildcard
        /// address serves every address).
        host: Option<std::net::IpAddr>,
        port: u16,
    },
    /// A path, or an abstract name starting with `@`.
    Unix(String),
}

impl ListenAt {
    fn parse(arg: &str) -> Result<ListenAt, String> {
        if arg.starts_with('/') || arg.starts_with('@') {
            return Ok(ListenAt::Unix(arg.to_string()));
        }
        let port = |p: &str| {
            p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(|| {
                format!(
                    "{p:?} is not a port: listen: takes PORT, HOST:PORT ([::1]:PORT for IPv6) \
                     or the /path of a unix socket"
                )
            })
        };
        let (host, p) = if let Some(v6) = arg.strip_prefix('[') {
            let (h, p) = v6
                .split_once("]:")
                .ok_or_else(|| format!("{arg:?}: write an IPv6 listener as [ADDRESS]:PORT"))?;
            (Some(h), p)
        } else {
            match arg.rsplit_once(':') {
                Some((h, p)) => (Some(h), p),
                None => (None, arg),
            }
        };
        let host = match host {
            Some(h) => Some(h.parse::<std::net::IpAddr>().map_err(|_| {
                format!("{h:?} is not an IP address (listen: matches the socket's own address, not a name)")
            })?),
            None => None,
        };
        Ok(ListenAt::Tcp {
            host,
            port: port(p)?,
        })
    }
}

impl fmt::Display for ListenAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListenAt::Tcp { host: None, port } => write!(f, "{port}"),
            ListenAt::Tcp {
                host: Some(std::net::IpAddr::V6(h)),
                port,
            } => write!(f, "[{h}]:{port}"),
            ListenAt::Tcp {
                host: Some(h),
                port,
            } => write!(f, "{h}:{port}"),
            ListenAt::Unix(p) => f.write_str(p),
        }
    }
}

/// A plain-HTTP URL of a metrics or status page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl {
    pub host: String,
    pub port: u16,
    /// Path and query, from `/`.
    pub path: String,
    /// `user:password` for HTTP Basic authentication, from the URL.
    pub userinfo: Option<String>,
}

impl HttpUrl {
    /// Parses `http://[user:pass@]host[:port][/path]`; `http://` may be left
    /// out, and `default_path` is used when the URL has no path.
    pub fn parse(s: &str, default_path: &str) -> Result<HttpUrl, String> {
        let rest = if let Some(r) = s.strip_prefix("http://") {
            r
        } else if s.starts_with("https://") {
            return Err(
                "https:// is not supported for monitors yet: serve the status page on plain \
                 HTTP on a loopback or internal address, or read it through ssh:HOST"
                    .into(),
            );
        } else if s.contains("://") {
            return Err(format!("only http:// URLs can be read, not {s}"));
        } else {
            s
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, default_path),
        };
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u.to_string()), h),
            None => (None, authority),
        };
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| format!("unclosed [ in {s}"))?;
            (h.to_string(), after.strip_prefix(':'))
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (hostport.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(format!("no host in {s}"));
        }
        let port = match port {
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| format!("bad port {p:?} in {s}"))?,
            None => 80,
        };
        Ok(HttpUrl {
            host,
            port,
            path: path.to_string(),
            userinfo,
        })
    }

    /// Adds `query` when the URL has none.
    fn with_default_query(mut self, query: &str) -> Self {
        if !self.path.contains('?') {
            self.path = format!("{}?{query}", self.path);
        }
        self
    }

    /// As shown in outputs: no password.
    pub fn shown(&self) -> String {
        let user = match &self.userinfo {
            Some(u) => match u.split_once(':') {
                Some((name, _)) => format!("{name}:***@"),
                None => format!("{u}@"),
            },
            None => String::new(),
        };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("http://{user}{host}:{}{}", self.port, self.path)
    }
}

impl Spec {
    /// Parses one `--monitor` value.
    pub fn parse(s: &str) -> Result<Spec, String> {
        let s = s.trim();
        let bad = |why: String| format!("--monitor {s:?}: {why}");
        if s == "system" {
            return Ok(Spec::System);
        }
        let (kind, arg) = s
            .split_once(':')
            .ok_or_else(|| bad(format!("not a monitor (one of: {FORMS})")))?;
        if arg.is_empty() {
            return Err(bad(format!("{kind}: needs a value (one of: {FORMS})")));
        }
        let url = |path: &str| HttpUrl::parse(arg, path).map_err(&bad);
        Ok(match kind {
            "pid" => Spec::Pid(
                arg.parse()
                    .ok()
                    .filter(|&p| p > 0)
                    .ok_or_else(|| bad(format!("{arg:?} is not a process id")))?,
            ),
            "pidfile" => Spec::PidFile(PathBuf::from(arg)),
            "proc" => {
                if arg.contains('/') {
                    return Err(bad(
                        "proc: takes a process name as `ps -e` shows it (php-fpm8.2, apache2), \
                         not a path"
                            .into(),
                    ));
                }
                Spec::Proc(arg.to_string())
            }
            "listen" => Spec::Listen(ListenAt::parse(arg).map_err(&bad)?),
            "node" => Spec::Node(url("/metrics")?),
            "prom" => {
                let (u, filter) = match arg.split_once(",match=") {
                    Some((u, f)) => (u, f.to_string()),
                    None => (arg, String::new()),
                };
                Spec::Prom {
                    url: HttpUrl::parse(u, "/metrics").map_err(&bad)?,
                    filter,
                }
            }
            "nginx" => Spec::Nginx(url("/nginx_status")?),
            "apache" => Spec::Apache(url("/server-status")?.with_default_query("auto")),
            "fpm" => match crate::fpm::FcgiUrl::parse(arg) {
                Some(u) => Spec::FpmFcgi(u.map_err(&bad)?),
                None => {
                    let mut u = url("/status")?;
                    u.path = match u.path.split_once('?') {
                        Some((p, q)) => format!("{p}?{}", crate::fpm::status_query(Some(q))),
                        None => format!("{}?{}", u.path, crate::fpm::status_query(None)),
                    };
                    Spec::Fpm(u)
                }
            },
            "ssh" => {
                let mut parts = arg.split(',');
                let target = parts.next().unwrap_or_default();
                let mut yace = None;
                for opt in parts {
                    match opt.split_once('=') {
                        Some(("yace", path)) if !path.is_empty() => yace = Some(path.to_string()),
                        _ => {
                            return Err(bad(format!(
                                "unknown ssh option {opt:?} (the one option is yace=PATH)"
                            )))
                        }
                    }
                }
                let (destination, port) = match target.rsplit_once(':') {
                    Some((d, p)) if !d.contains('[') => (
                        d.to_string(),
                        Some(
                            p.parse::<u16>()
                                .ok()
                                .filter(|&p| p > 0)
                                .ok_or_else(|| bad(format!("bad port {p:?}")))?,
                        ),
                    ),
                    _ => (target.to_string(), None),
                };
                if destination.is_empty() || destination.starts_with('-') {
                    return Err(bad(format!("{destination:?} is not a host")));
                }
                Spec::Ssh {
                    destination,
                    port,
                    yace,
                }
            }
            other => return Err(bad(format!("unknown monitor {other:?} (one of: {FORMS})"))),
        })
    }

    /// The source's kind, as the result names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Spec::System => "system",
            Spec::Pid(_) | Spec::PidFile(_) | Spec::Proc(_) => "process",
            Spec::Listen(_) => "listen",
            Spec::Node(_) => "node",
            Spec::Prom { .. } => "prom",
            Spec::Nginx(_) => "nginx",
            Spec::Apache(_) => "apache",
            Spec::Fpm(_) | Spec::FpmFcgi(_) => "fpm",
            Spec::Ssh { .. } => "ssh",
        }
    }
}

/// As shown in outputs: URL passwords hidden.
impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Spec::System => f.write_str("system"),
            Spec::Pid(p) => write!(f, "pid:{p}"),
            Spec::PidFile(p) => write!(f, "pidfile:{}", p.display()),
            Spec::Proc(n) => write!(f, "proc:{n}"),
            Spec::Listen(l) => write!(f, "listen:{l}"),
            Spec::Node(u) => write!(f, "node:{}", u.shown()),
            Spec::Prom { url, filter } if filter.is_empty() => write!(f, "prom:{}", url.shown()),
            Spec::Prom { url, filter } => write!(f, "prom:{},match={filter}", url.shown()),
            Spec::Nginx(u) => write!(f, "nginx:{}", u.shown()),
            Spec::Apache(u) => write!(f, "apache:{}", u.shown()),
            Spec::Fpm(u) => write!(f, "fpm:{}", u.shown()),
            Spec::FpmFcgi(u) => write!(f, "fpm:{}", u.shown()),
            Spec::Ssh {
                destination, port, ..
            } => match port {
                Some(p) => write!(f, "ssh:{destination}:{p}"),
                None => write!(f, "ssh:{destination}"),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(Spec::parse("system").unwrap(), Spec::System);
        assert_eq!(Spec::parse("pid:42").unwrap(), Spec::Pid(42));
        assert_eq!(
            Spec::parse("proc:php-fpm8.2").unwrap(),
            Spec::Proc("php-fpm8.2".into())
        );
        let Spec::Apache(u) = Spec::parse("apache:127.0.0.1:8080").unwrap() else {
            panic!()
        };
        assert_eq!(u.path, "/server-status?auto");
        assert_eq!(u.port, 8080);
        let Spec::Fpm(u) = Spec::parse("fpm:http://127.0.0.1/fpm-status").unwrap() else {
            panic!()
        };
        assert_eq!(u.path, "/fpm-status?json&full");
        let Spec::Fpm(u) = Spec::parse("fpm:127.0.0.1/fpm-status?json").unwrap() else {
            panic!()
        };
        assert_eq!(u.path, "/fpm-status?json&full");
        let s = Spec::parse("fpm:fcgi+unix:/run/php/fpm-status.sock:/status").unwrap();
        assert_eq!(s.kind(), "fpm");
        assert_eq!(
            s.to_string(),
            "fpm:fcgi+unix:/run/php/fpm-status.sock:/status"
        );
        let e = Spec::parse("fpm:fcgi://127.0.0.1/status").unwrap_err();
        assert!(e.contains("--monitor") && e.contains("no port"), "{e}");
        let Spec::Prom { url, filter } =
            Spec::parse("prom:http://[::1]:9253/metrics,match=php_*").unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (url.host.as_str(), url.port, filter.as_str()),
            ("::1", 9253, "php_*")
        );
        assert_eq!(
            Spec::parse("ssh:web@10.0.0.5:2222,yace=/opt/yace").unwrap(),
            Spec::Ssh {
                destination: "web@10.0.0.5".into(),
                port: Some(2222),
                yace: Some("/opt/yace".into())
            }
        );
    }

    #[test]
    fn listen_forms() {
        for (given, want) in [
            (
                "listen:8080",
                ListenAt::Tcp {
                    host: None,
                    port: 8080,
                },
            ),
            (
                "listen:127.0.0.1:8080",
                ListenAt::Tcp {
                    host: Some("127.0.0.1".parse().unwrap()),
                    port: 8080,
                },
            ),
            (
                "listen:[::1]:9000",
                ListenAt::Tcp {
                    host: Some("::1".parse().unwrap()),
                    port: 9000,
                },
            ),
            (
                "listen:/run/php/php8.2-fpm.sock",
                ListenAt::Unix("/run/php/php8.2-fpm.sock".into()),
            ),
        ] {
            let spec = Spec::parse(given).unwrap();
            assert_eq!(spec, Spec::Listen(want));
            assert_eq!(spec.to_string(), given);
            assert_eq!(spec.kind(), "listen");
        }
        let e = Spec::parse("listen:localhost:80").unwrap_err();
        assert!(e.contains("not an IP address"), "{e}");
        let e = Spec::parse("listen:http").unwrap_err();
        assert!(e.contains("not a port") && e.contains("/path"), "{e}");
    }

    #[test]
    fn passwords_never_shown() {
        let s = Spec::parse("nginx:http://admin:hunter2@127.0.0.1/nginx_status").unwrap();
        let shown = s.to_string();
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("admin:***@"), "{shown}");
    }

    #[test]
    fn errors_say_what_and_how() {
        let e = Spec::parse("cpu").unwrap_err();
        assert!(e.contains("\"cpu\"") && e.contains("system, pid:N"), "{e}");
        let e = Spec::parse("pid:abc").unwrap_err();
        assert!(e.contains("not a process id"), "{e}");
        let e = Spec::parse("nginx:https://x/").unwrap_err();
        assert!(e.contains("https:// is not supported"), "{e}");
        let e = Spec::parse("proc:/usr/sbin/nginx").unwrap_err();
        assert!(e.contains("not a path"), "{e}");
        let e = Spec::parse("node:").unwrap_err();
        assert!(e.contains("needs a value"), "{e}");
    }
}
