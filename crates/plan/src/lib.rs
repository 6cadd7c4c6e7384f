//! The validated, serializable description of a run: what to request, from
//! where, how hard, and when to stop. Nothing here opens a socket or reads a
//! clock; the [`Schedule`] ("when is request *k* due") is a pure function so
//! every load model is unit-tested without sleeping.
//!
//! A [`Plan`] is built in two levels (STYLE.md §7): the CLI parses flags into
//! its own structs, then [`PlanBuilder`] turns them into a `Plan`, collecting
//! *every* problem before reporting, each keyed by the [`Field`] it is about
//! (the front end spells the field as its own flag).

// Pure: no I/O beyond what std offers safely, and no unsafe code.
#![forbid(unsafe_code)]

mod crowd;
mod diag;
pub mod method;
pub mod paced;
mod request;
pub mod rng;
mod schedule;
pub mod secrets;
mod shard;
pub mod source;
mod steer;
mod target;
mod users;

pub use crowd::{Crowd, UserSegment, UserSteering};
pub use diag::{Diagnostic, Diagnostics, Field, Keys, Source, Spelling};
pub use request::{Header, RequestSpec};
pub use schedule::{Due, RateStage, Schedule, WorkerSchedule};
pub use shard::{Deal, Shard};
pub use steer::{Segment, Steering, PAUSED};
pub use target::{split_unix, Scheme, Target, TargetError, FCGI_PORT, UNIX_FORMS};
pub use users::{Think, Timeline, UserStage};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Default per-request timeout: like ab's `-s`, long enough for slow pages,
/// never infinite (ab's 99% stall came from waiting forever).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default connect timeout.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default duration when neither a request count nor a duration is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);
/// Default send tick of the open model (`--timer-slack`): requests due
/// within 0.5 ms go out together, at most that late
/// (docs/design/013-timer-slack.md).
pub const DEFAULT_TIMER_SLACK: Duration = Duration::from_micros(500);
/// Longest `--timer-slack`: beyond it the "open model" would send in bursts
/// a user would see in the per-second rate.
pub const MAX_TIMER_SLACK: Duration = Duration::from_millis(100);

/// Everything the engine needs to run one load test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Plan {
    pub target: Target,
    pub request: RequestSpec,
    pub load: Load,
    pub stop: Stop,
    /// Worker threads, each owning its share of the connections.
    pub threads: usize,
    /// Reuse connections (HTTP/1.1 keep-alive). Off: one connection per request.
    pub keepalive: bool,
    pub timeouts: Timeouts,
    #[serde(default)]
    pub socket: SocketOptions,
    /// HTTPS settings (used when the target is https://).
    #[serde(default)]
    pub tls: TlsOptions,
    /// HTTP/2 instead of HTTP/1.1 (ALPN over TLS, prior knowledge on plain TCP).
    #[serde(default)]
    pub http2: Option<Http2>,
    /// How outputs treat secrets (headers, URL userinfo, query values).
    #[serde(default)]
    pub secrets: secrets::Secrets,
    /// How much of a response is read before it is refused.
    #[serde(default)]
    pub limits: ResponseLimits,
    /// `--shard I/N`: this process runs only its share of the plan (see
    /// [`Shard`]); absent when it runs the whole plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Open model (`--timer-slack`): how late a due request may go out, so
    /// that requests due close together are sent on one wake-up of the
    /// client: they are sent on a tick of this length (0: each at its own
    /// due time). Latency still counts from the due time. Absent in results
    /// from before it existed (each request went out when due, to the
    /// millisecond); [`DEFAULT_TIMER_SLACK`] when a plan leaves it out.
    #[serde(default, with = "nanos_opt", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u64>")]
    pub timer_slack: Option<Duration>,
    /// FastCGI targets (`fcgi://`, `fcgi+unix:`): how requests become CGI
    /// parameters; absent for HTTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fcgi: Option<FcgiOptions>,
}

/// How an `fcgi://` target's requests are sent (design 018).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FcgiOptions {
    /// `--fcgi-root`: the `DOCUMENT_ROOT`; `SCRIPT_FILENAME` is it joined
    /// with the URL's path (nginx's `$document_root$fastcgi_script_name`).
    /// Empty: the URL's path is the script's file name.
    #[serde(default)]
    pub root: String,
    /// `--fcgi-keep-conn`: ask the application to keep the connection
    /// (`FCGI_KEEP_CONN`) and reuse it; off, a connection per request, as
    /// nginx does unless `fastcgi_keep_conn on`.
    #[serde(default)]
    pub keep_conn: bool,
    /// `--fcgi-https`: send `HTTPS=on`, as nginx does for a TLS client.
    #[serde(default)]
    pub https: bool,
}

impl Plan {
    /// A plain plan: `GET target` under `load` until `stop`, on one
    /// thread, keep-alive, everything else at its default (as the command
    /// line leaves it).
    pub fn get(target: Target, load: Load, stop: Stop) -> Plan {
        Plan {
            target,
            request: RequestSpec::new("GET", Vec::new(), Vec::new()),
            load,
            stop,
            threads: 1,
            keepalive: true,
            timeouts: Timeouts::default(),
            socket: SocketOptions::default(),
            tls: Default::default(),
            http2: None,
            secrets: Default::default(),
            limits: Default::default(),
            shard: None,
            timer_slack: None,
            fcgi: None,
        }
    }

    /// The open model's send tick, in nanoseconds (0: none).
    pub fn timer_slack_ns(&self) -> u64 {
        self.timer_slack
            .unwrap_or(DEFAULT_TIMER_SLACK)
            .as_nanos()
            .min(u128::from(u64::MAX)) as u64
    }
}

/// How HTTP/2 connections are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Http2 {
    /// Concurrent streams per connection: `-c 10 --streams 100` keeps up to
    /// 1,000 requests in flight (fewer if the server allows fewer streams).
    pub streams: u32,
}

/// Most streams per connection `--streams` accepts (RFC 9113 has no limit;
/// servers advertise 100-256).
pub const MAX_STREAMS: u32 = 65_536;

/// How HTTPS connections are made and verified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TlsOptions {
    /// Skip certificate verification (loud in the summary and the result).
    pub insecure: bool,
    /// Trust these CA certificates (PEM) instead of the system roots.
    pub cacert: Option<std::path::PathBuf>,
    /// Client certificate chain (PEM) and its private key, for mutual TLS.
    pub cert: Option<std::path::PathBuf>,
    pub key: Option<std::path::PathBuf>,
    /// Resume TLS sessions on reconnect (cheaper handshakes).
    pub resume: bool,
}

impl Default for TlsOptions {
    fn default() -> Self {
        TlsOptions {
            insecure: false,
            cacert: None,
            cert: None,
            key: None,
            resume: true,
        }
    }
}

/// What a response may hold before it is refused (`header_too_large`):
/// generous, as real servers send hundreds of fields (1,000 `Set-Cookie`
/// lines are read, not refused), and raised with `--max-head` and
/// `--max-fields`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResponseLimits {
    /// Bytes of a response head, and of a chunked body's trailer block.
    pub head_bytes: u32,
    /// Fields of a response head, and of a trailer block.
    pub fields: u32,
}

impl ResponseLimits {
    pub const DEFAULT_HEAD_BYTES: u32 = 256 * 1024;
    pub const DEFAULT_FIELDS: u32 = 4096;
}

impl Default for ResponseLimits {
    fn default() -> Self {
        ResponseLimits {
            head_bytes: Self::DEFAULT_HEAD_BYTES,
            fields: Self::DEFAULT_FIELDS,
        }
    }
}

/// How connections are made (ab's `-B`, `-b`, `-X`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SocketOptions {
    /// Local address to bind before connecting.
    pub bind: Option<std::net::IpAddr>,
    /// TCP send and receive buffer size in bytes (SO_SNDBUF/SO_RCVBUF).
    pub buffer: Option<u32>,
    /// Send every request through this HTTP proxy (absolute-form request target).
    pub proxy: Option<Proxy>,
    /// `--source-addrs`: local addresses connections leave from, dealt
    /// round-robin by global slot index ([`source::source_for`]); empty:
    /// the kernel picks (or `bind`, when set).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<std::net::IpAddr>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Proxy {
    pub host: String,
    pub port: u16,
}

/// How requests are generated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum Load {
    /// Closed model: a fixed number of connections, each sends its next
    /// request as soon as the previous response is complete. Latency is then
    /// service time; the offered rate depends on the server (wrk, ab).
    Closed { connections: u64 },
    /// Open model: requests are due on a timetable regardless of how the
    /// server copes; latency is measured from the intended send time.
    Open {
        stages: Vec<RateStage>,
        /// Upper bound on requests in flight (and on connections opened).
        max_inflight: u64,
        /// What happens to a request that could not be sent on time.
        #[serde(default)]
        late: Late,
    },
    /// Virtual users, each with its own connection, repeating an iteration
    /// (one request, or a scenario's journey) with think time between steps
    /// and, optionally, a fixed pacing between iteration starts.
    Users {
        stages: Vec<UserStage>,
        /// An iteration starts at most this often per user.
        #[serde(default, with = "nanos_opt")]
        #[schemars(with = "Option<u64>")]
        pacing: Option<Duration>,
        #[serde(default)]
        think: Think,
    },
}

/// Open model: a request whose slot was not free when it was due.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "policy", rename_all = "snake_case")]
pub enum Late {
    /// Dropped (counted) once it is more than `after` late: no burst of
    /// catch-up requests after a stall.
    Drop {
        #[serde(with = "nanos")]
        #[schemars(with = "u64")]
        after: Duration,
    },
    /// Sent as soon as a slot frees, however late (wrk2's behaviour); its
    /// latency still counts from when it was due.
    CatchUp,
}

impl Default for Late {
    fn default() -> Self {
        Late::Drop {
            after: Duration::from_millis(100),
        }
    }
}

impl Load {
    /// Connections the engine may hold open at once.
    pub fn max_connections(&self) -> u64 {
        match self {
            Load::Closed { connections } => *connections,
            Load::Open { max_inflight, .. } => *max_inflight,
            Load::Users { stages, .. } => Timeline::new(stages.clone()).peak(),
        }
    }

    /// The open model's highest planned rate (requests per second) over
    /// its stages; None for the other models.
    pub fn peak_rate(&self) -> Option<f64> {
        match self {
            Load::Open { stages, .. } => {
                Some(stages.iter().map(|s| s.from.max(s.to)).fold(0.0, f64::max))
            }
            _ => None,
        }
    }
}

/// When the run ends: whichever comes first.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Stop {
    /// Total requests to start (completed, failed or cancelled).
    pub requests: Option<u64>,
    /// Wall-clock limit, in nanoseconds.
    #[serde(with = "nanos_opt")]
    #[schemars(with = "Option<u64>")]
    pub duration: Option<Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Timeouts {
    #[serde(with = "nanos")]
    #[schemars(with = "u64")]
    pub connect: Duration,
    /// From sending the request to the end of its response.
    #[serde(with = "nanos")]
    #[schemars(with = "u64")]
    pub request: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: DEFAULT_CONNECT_TIMEOUT,
            request: DEFAULT_REQUEST_TIMEOUT,
        }
    }
}

impl Plan {
    /// The plan as every output shows it: secret header values, the URL's
    /// password and secret query values are `***` (unless the plan says
    /// secrets are shown). The plan that is sent is not changed.
    pub fn redacted(&self) -> Plan {
        let mut p = self.clone();
        let s = &self.secrets;
        p.target.url = s.url(&p.target.url);
        p.target.path = s.url(&p.target.path);
        for h in &mut p.request.headers {
            h.value = s.header_value(&h.name, &h.value).to_owned();
        }
        p
    }

    /// The bytes of every request: origin-form, or absolute-form through a proxy.
    pub fn encode_request(&self) -> Vec<u8> {
        if self.socket.proxy.is_some() {
            let mut t = self.target.clone();
            t.path = t.url.clone();
            self.request.encode(&t, self.keepalive)
        } else {
            self.request.encode(&self.target, self.keepalive)
        }
    }

    /// Host and port connections go to: the proxy's, or the target's.
    pub fn connect_to(&self) -> (&str, u16) {
        match &self.socket.proxy {
            Some(p) => (&p.host, p.port),
            None => (&self.target.host, self.target.port),
        }
    }

    /// The schedule every worker derives its share from.
    pub fn schedule(&self) -> Schedule {
        match &self.load {
            Load::Closed { .. } => Schedule::closed(self.stop.requests),
            Load::Open { stages, .. } => Schedule::open(stages.clone(), self.stop.requests),
            Load::Users { .. } => Schedule::closed(self.stop.requests),
        }
    }
}

/// Collects problems while a plan is assembled from user input.
#[derive(Debug, Default)]
pub struct PlanBuilder {
    errors: Vec<Diagnostic>,
}

impl PlanBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a problem and carries on, so the user sees all of them at once.
    pub fn error(
        &mut self,
        source: impl Into<Source>,
        problem: impl Into<String>,
        hint: Option<&str>,
    ) {
        self.errors.push(Diagnostic {
            source: source.into(),
            problem: problem.into(),
            hint: hint.map(str::to_owned),
        });
    }

    /// Unwraps a per-field result, recording its error.
    pub fn check<T>(&mut self, r: Result<T, Diagnostic>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.errors.push(e);
                None
            }
        }
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Final validation of a complete plan; returns every problem found.
    /// Hints name other fields the way `spell` does.
    ///
    /// A field that already has a problem from its own parsing is not
    /// judged again on the stand-in value it got: one error per cause.
    pub fn finish(mut self, plan: Option<Plan>, spell: &dyn Spelling) -> Result<Plan, Diagnostics> {
        let parsed = self.errors.len();
        if let Some(p) = &plan {
            let usage = |f| spell.usage(f);
            if p.threads == 0 {
                self.error(Field::Threads, "must be at least 1", None);
            }
            if p.load.max_connections() == 0 {
                // Named as the user set it: users, or connections.
                let field = match p.load {
                    Load::Users { .. } => Field::Users,
                    _ => Field::Connections,
                };
                self.error(field, "must be at least 1", None);
            }
            if p.stop.requests == Some(0) {
                self.error(Field::Requests, "must be at least 1", None);
            }
            if p.stop.duration == Some(Duration::ZERO) {
                self.error(
                    Field::Duration,
                    "must be longer than 0s",
                    Some(&format!("e.g. {} 30s", usage(Field::Duration))),
                );
            }
            if p.timeouts.request.is_zero() {
                self.error(
                    Field::Timeout,
                    "must be longer than 0s",
                    Some(&format!("e.g. {} 30s", usage(Field::Timeout))),
                );
            }
            if p.timeouts.connect.is_zero() {
                self.error(Field::ConnectTimeout, "must be longer than 0s", None);
            }
            if let Some(h2) = p.http2 {
                if h2.streams == 0 || h2.streams > MAX_STREAMS {
                    self.error(
                        Field::Streams,
                        format!("must be between 1 and {MAX_STREAMS}"),
                        Some(&format!(
                            "e.g. {} {} 10 {} 100",
                            usage(Field::Http2),
                            usage(Field::Connections),
                            usage(Field::Streams)
                        )),
                    );
                }
                if h2.streams > 1 && matches!(p.load, Load::Users { .. }) {
                    self.error(
                        Field::Streams,
                        "virtual users send one request at a time on their own connection",
                        Some(&format!(
                            "use {} with {} (closed model) or {} (open model)",
                            usage(Field::Streams),
                            usage(Field::Connections),
                            usage(Field::Rate)
                        )),
                    );
                }
                if !p.keepalive {
                    self.error(
                        Field::Keepalive,
                        "applies to HTTP/1.1 only: HTTP/2 connections carry many requests",
                        Some(&format!(
                            "drop {}, or drop {} to measure a connection per request",
                            usage(Field::Keepalive),
                            usage(Field::Http2)
                        )),
                    );
                }
                if p.socket.proxy.is_some() {
                    self.error(
                        Field::Proxy,
                        "HTTP/2 through a proxy is not supported",
                        Some(&format!(
                            "drop {} to go through the proxy with HTTP/1.1",
                            usage(Field::Http2)
                        )),
                    );
                }
            }
        }
        let (early, late) = self.errors.split_at(parsed);
        let late: Vec<Diagnostic> = late
            .iter()
            .filter(|d| {
                !early
                    .iter()
                    .any(|e| e.field() == d.field() && d.field().is_some())
            })
            .cloned()
            .collect();
        self.errors.truncate(parsed);
        self.errors.extend(late);
        match plan {
            Some(p) if self.errors.is_empty() => Ok(p),
            _ => Err(Diagnostics(self.errors)),
        }
    }
}

/// Parses a duration like `30s`, `2m`, `1h30m`, `250ms`; a bare number means seconds.
pub fn parse_duration(source: impl Into<Source>, s: &str) -> Result<Duration, Diagnostic> {
    let t = s.trim();
    let r = if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        // try_: a huge number of seconds is an input error, not a panic (found by fuzzing).
        t.parse::<f64>()
            .ok()
            .and_then(|v| Duration::try_from_secs_f64(v).ok())
    } else {
        humantime::parse_duration(t).ok()
    };
    r.ok_or_else(|| Diagnostic {
        source: source.into(),
        problem: format!("'{s}' is not a duration"),
        hint: Some("use a number with a unit: 500ms, 30s, 2m, 1h".into()),
    })
}

/// A rate or other amount (not necessarily whole) with the counts' SI
/// suffixes, so every count and rate flag reads `10k` alike: `2.5`,
/// `1000`, `1k`, `1.5M`. `None` unless finite and ≥ 0.
pub fn parse_amount(s: &str) -> Option<f64> {
    let t = s.trim().replace('_', "");
    let (num, mul) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('g' | 'G') => (&t[..t.len() - 1], 1e9),
        _ => (&t[..], 1.0),
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .map(|v| v * mul)
        .filter(|v| v.is_finite() && *v >= 0.0)
}

/// Parses a count with an optional SI suffix: `100`, `10k`, `1.5M`, `2G`.
pub fn parse_count(source: impl Into<Source>, s: &str) -> Result<u64, Diagnostic> {
    let t = s.trim().replace('_', "");
    let (num, mul) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        Some('g' | 'G') => (&t[..t.len() - 1], 1e9),
        _ => (&t[..], 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && (v * mul).fract() == 0.0 && v * mul < 1.8e19 => {
            Ok((v * mul) as u64)
        }
        _ => Err(Diagnostic {
            source: source.into(),
            problem: format!("'{s}' is not a whole number"),
            hint: Some("use digits with an optional k/M/G suffix: 100, 10k, 1.5M".into()),
        }),
    }
}

/// Serde helpers: durations travel as integer nanoseconds in the JSON contract.
pub mod nanos {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_nanos().min(u64::MAX as u128) as u64)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_nanos(u64::deserialize(d)?))
    }
}

/// Like [`nanos`], for optional durations.
pub mod nanos_opt {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&(d.as_nanos().min(u64::MAX as u128) as u64)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_nanos))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_accept_si_suffixes() {
        assert_eq!(parse_count("-n", "10k").unwrap(), 10_000);
        assert_eq!(parse_count("-n", "1.5M").unwrap(), 1_500_000);
        assert_eq!(parse_count("-n", "100").unwrap(), 100);
        assert_eq!(parse_count("-n", "1_000").unwrap(), 1_000);
        let e = parse_count("-n", "1.5").unwrap_err();
        assert_eq!(e.source, Source::Named("-n".into()));
        assert!(parse_count("-n", "ten").is_err());
        assert!(parse_count("-n", "-3").is_err());
    }

    #[test]
    fn durations_accept_units_and_bare_seconds() {
        assert_eq!(
            parse_duration("-d", "30s").unwrap(),
            Duration::from_secs(30)
        );
        assert_eq!(
            parse_duration("-d", "2m").unwrap(),
            Duration::from_secs(120)
        );
        assert_eq!(
            parse_duration("-d", "250ms").unwrap(),
            Duration::from_millis(250)
        );
        assert_eq!(parse_duration("-d", "5").unwrap(), Duration::from_secs(5));
        assert_eq!(
            parse_duration("-d", "1.5").unwrap(),
            Duration::from_millis(1500)
        );
        assert!(
            parse_duration("-d", "99999999999999999999").is_err(),
            "overflow is an error"
        );
        let e = parse_duration("-d", "soon").unwrap_err();
        assert!(e.to_string().contains("-d: 'soon' is not a duration"));
    }

    #[test]
    fn builder_reports_every_problem() {
        let mut b = PlanBuilder::new();
        b.error("-c", "bad", None);
        b.error(Field::Requests, "also bad", Some("fix it"));
        let e = b.finish(None, &Keys).unwrap_err();
        assert_eq!(e.0.len(), 2);
        assert_eq!(e.to_string(), "-c: bad\nrequests: also bad (fix it)");
    }

    #[test]
    fn each_front_end_spells_the_fields() {
        #[derive(Debug)]
        struct Short;
        impl Spelling for Short {
            fn name(&self, f: Field) -> &'static str {
                match f {
                    Field::Connections => "-c/--connections",
                    Field::Duration => "-d/--duration",
                    _ => "?",
                }
            }
            fn usage(&self, f: Field) -> &'static str {
                match f {
                    Field::Duration => "-d",
                    _ => "?",
                }
            }
        }
        let mut b = PlanBuilder::new();
        b.check(parse_count(Field::Connections, "x"));
        let e = b.finish(None, &Keys).unwrap_err();
        assert!(e.render(&Short).starts_with("-c/--connections: 'x' is not"));
        assert!(e.to_string().starts_with("connections: 'x' is not"));

        let mut plan = Plan {
            target: Target::parse("http://127.0.0.1/").unwrap(),
            request: RequestSpec::new("GET", Vec::new(), Vec::new()),
            load: Load::Closed { connections: 1 },
            stop: Stop {
                requests: None,
                duration: Some(Duration::ZERO),
            },
            threads: 1,
            keepalive: true,
            timeouts: Timeouts::default(),
            socket: SocketOptions::default(),
            tls: TlsOptions::default(),
            http2: None,
            secrets: Default::default(),
            limits: Default::default(),
            shard: None,
            timer_slack: None,
            fcgi: None,
        };
        let e = PlanBuilder::new()
            .finish(Some(plan.clone()), &Short)
            .unwrap_err();
        assert_eq!(
            e.render(&Short),
            "-d/--duration: must be longer than 0s (e.g. -d 30s)"
        );
        plan.stop.duration = None;
        assert!(PlanBuilder::new().finish(Some(plan), &Short).is_ok());
    }
}
