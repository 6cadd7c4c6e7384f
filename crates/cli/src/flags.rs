//! Flags → plan, in one place (STYLE.md §7's second level). `yace run`'s
//! flags, `yace ab`'s flags and a scenario's load all become a [`Plan`]
//! here, through shared typed helpers. Every problem is collected and keyed
//! by the plan [`Field`] it is about; each command shows them in its own
//! flag spelling ([`RunFlags`], [`AbFlags`]).

use crate::args::{AbArgs, RunArgs};
use crate::Failure;
use plan::{
    parse_count, parse_duration, Diagnostic, Diagnostics, Field, Header, Load, Plan, PlanBuilder,
    Proxy, RateStage, RequestSpec, Source, Spelling, Stop, Target, Timeouts, TlsOptions,
    DEFAULT_DURATION,
};
use scenario::Scenario;
use stats::threshold::Threshold;
use std::path::Path;
use std::time::Duration;

/// Connections when `-c` is not given.
const DEFAULT_CONNECTIONS: u64 = 50;
/// Open model: in-flight cap when `--max-inflight` is not given.
const DEFAULT_MAX_INFLIGHT: u64 = 1000;

/// `yace run`'s names for the plan's fields.
#[derive(Debug, Clone, Copy)]
pub struct RunFlags;

impl Spelling for RunFlags {
    fn name(&self, f: Field) -> &'static str {
        match f {
            Field::Url => "URL",
            Field::Connections => "-c/--connections",
            Field::Requests => "-n/--requests",
            Field::Duration => "-d/--duration",
            Field::Threads => "-t/--threads",
            Field::Rate => "--rate",
            Field::RateStages => "--stages",
            Field::MaxInflight => "--max-inflight",
            Field::Late => "--late",
            Field::LateAfter => "--late-after",
            Field::Users => "-u/--users",
            Field::RampUp => "--ramp-up",
            Field::RampDown => "--ramp-down",
            Field::UserStages => "--user-stages",
            Field::Pacing => "--pacing",
            Field::Think => "--think",
            Field::Method => "-m/--method",
            Field::Header => "-H/--header",
            Field::BodyFile => "--body-file",
            Field::Keepalive => "--no-keepalive",
            Field::Http2 => "--http2",
            Field::Streams => "--streams",
            Field::Timeout => "--timeout",
            Field::ConnectTimeout => "--connect-timeout",
            // `yace run` has no proxy flag; only a plan file could set one.
            Field::Proxy => "proxy",
        }
    }

    fn usage(&self, f: Field) -> &'static str {
        match f {
            Field::Connections => "-c",
            Field::Requests => "-n",
            Field::Duration => "-d",
            Field::Threads => "-t",
            Field::Users => "-u",
            Field::Method => "-m",
            Field::Header => "-H",
            other => self.name(other),
        }
    }
}

/// `yace ab`'s names for the plan's fields: ab's own flags.
#[derive(Debug, Clone, Copy)]
pub struct AbFlags;

impl Spelling for AbFlags {
    fn name(&self, f: Field) -> &'static str {
        match f {
            Field::Connections => "-c",
            Field::Requests => "-n",
            Field::Duration => "-t",
            Field::Threads => "--threads",
            Field::Method => "-m",
            Field::Header => "-H",
            Field::BodyFile => "-p/-u",
            Field::Keepalive => "-k",
            Field::Timeout | Field::ConnectTimeout => "-s",
            Field::Proxy => "-X",
            // Fields ab has no flag for cannot be at fault in ab's plans.
            other => RunFlags.name(other),
        }
    }
}

/// The target, or an error keyed to the URL.
fn target(b: &mut PlanBuilder, url: &str) -> Option<Target> {
    match Target::parse(url) {
        Ok(t) => Some(t),
        Err(e) => {
            b.error(
                Field::Url,
                e.to_string(),
                Some("e.g. http://127.0.0.1:8080/path"),
            );
            None
        }
    }
}

/// The method, headers and body, each checked.
fn request(
    b: &mut PlanBuilder,
    method: &str,
    header_lines: &[String],
    body_text: Option<&str>,
    body_file: Option<&Path>,
) -> RequestSpec {
    let trimmed = method.trim();
    if trimmed.is_empty()
        || !trimmed
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(&c))
    {
        b.error(
            Field::Method,
            format!("'{method}' is not an HTTP method"),
            Some("e.g. GET, POST, HEAD"),
        );
    }
    let mut headers = Vec::new();
    for h in header_lines {
        match h.split_once(':') {
            Some((n, v)) if !n.trim().is_empty() && !n.contains(char::is_whitespace) => headers
                .push(Header {
                    name: n.trim().to_owned(),
                    value: v.trim().to_owned(),
                }),
            _ => b.error(
                Field::Header,
                format!("'{h}' is not 'Name: value'"),
                Some("e.g. -H 'Content-Type: application/json'"),
            ),
        }
    }
    let body = match (body_text, body_file) {
        (Some(t), _) => t.as_bytes().to_vec(),
        (None, Some(p)) => match std::fs::read(p) {
            Ok(bytes) => bytes,
            Err(e) => {
                b.error(
                    Source::FieldValue(Field::BodyFile, p.display().to_string()),
                    format!("cannot read: {e}"),
                    None,
                );
                Vec::new()
            }
        },
        (None, None) => Vec::new(),
    };
    RequestSpec::new(trimmed, headers, body)
}

/// The closed model: `connections` kept busy, never more than the requests
/// (more would leave some idle; ab refuses this). Without a count or a
/// duration the run lasts [`DEFAULT_DURATION`].
fn closed(
    connections: u64,
    requests: Option<u64>,
    duration: Option<Duration>,
) -> (Load, Option<Duration>) {
    let duration = match (duration, requests) {
        (None, None) => Some(DEFAULT_DURATION),
        (d, _) => d,
    };
    (
        Load::Closed {
            connections: requests.map_or(connections, |n| connections.min(n)),
        },
        duration,
    )
}

/// The rest of a plan, typed, for [`assemble`].
struct Settings {
    threads: Option<u64>,
    keepalive: bool,
    timeout: Option<Duration>,
    connect_timeout: Option<Duration>,
    tls: TlsOptions,
    streams: Option<Option<u64>>,
}

/// A plan from its checked parts.
fn assemble(
    target: Target,
    request: RequestSpec,
    (load, duration): (Load, Option<Duration>),
    requests: Option<u64>,
    s: Settings,
) -> Plan {
    Plan {
        target,
        request,
        load,
        stop: Stop { requests, duration },
        threads: s
            .threads
            .map_or_else(crate::environment::cpus, |t| t as usize),
        keepalive: s.keepalive,
        timeouts: Timeouts {
            connect: s.connect_timeout.unwrap_or_default(),
            request: s.timeout.unwrap_or_default(),
        },
        socket: Default::default(),
        tls: s.tls,
        http2: s.streams.map(|streams| plan::Http2 {
            streams: streams.map_or(1, |s| s.min(u64::from(u32::MAX)) as u32),
        }),
    }
}

/// `yace run`'s flags as a plan, every problem reported at once.
pub fn run_plan(a: &RunArgs, url: &str) -> Result<Plan, Diagnostics> {
    let mut b = PlanBuilder::new();
    let target = target(&mut b, url);
    let mut count =
        |f: Field, v: &Option<String>| v.as_deref().and_then(|s| b.check(parse_count(f, s)));
    let connections = count(Field::Connections, &a.connections);
    let requests = count(Field::Requests, &a.requests);
    let threads = count(Field::Threads, &a.threads);
    let max_inflight = count(Field::MaxInflight, &a.max_inflight);
    let streams = count(Field::Streams, &a.streams);
    let duration = a
        .duration
        .as_deref()
        .and_then(|s| b.check(parse_duration(Field::Duration, s)));
    let timeout = b.check(parse_duration(Field::Timeout, &a.timeout));
    let connect_timeout = b.check(parse_duration(Field::ConnectTimeout, &a.connect_timeout));
    let rate = a
        .rate
        .as_deref()
        .and_then(|s| match s.trim().parse::<f64>() {
            Ok(r) if r.is_finite() && r > 0.0 => Some(r),
            _ => {
                b.error(
                    Field::Rate,
                    format!("'{s}' is not a positive number of requests per second"),
                    Some("e.g. --rate 1000 or --rate 2.5"),
                );
                None
            }
        });
    let request = request(
        &mut b,
        &a.method,
        &a.headers,
        a.body.as_deref(),
        a.body_file.as_deref(),
    );
    if b.has_errors() {
        return b.finish(None, &RunFlags);
    }
    let Some(target) = target else {
        return b.finish(None, &RunFlags);
    };
    let Some(load) = load_from(
        a,
        &mut b,
        connections,
        requests,
        duration,
        rate,
        max_inflight,
    ) else {
        return b.finish(None, &RunFlags);
    };
    let settings = Settings {
        threads,
        keepalive: !a.no_keepalive,
        timeout,
        connect_timeout,
        tls: a.tls.options(),
        streams: a.http2.then_some(streams),
    };
    b.finish(
        Some(assemble(target, request, load, requests, settings)),
        &RunFlags,
    )
}

/// Parses `DURATION:N` or `DURATION:FROM-TO` stages, comma-separated.
fn parse_stages(field: Field, s: &str) -> Result<Vec<(Duration, f64, f64)>, Diagnostic> {
    let bad = |what: String| Diagnostic {
        source: field.into(),
        problem: what,
        hint: Some(
            "write DURATION:N or DURATION:FROM-TO, comma-separated: 30s:0-1000,60s:1000".into(),
        ),
    };
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (d, v) = part
            .split_once(':')
            .ok_or_else(|| bad(format!("'{part}' has no ':'")))?;
        let d = parse_duration(field, d).map_err(|e| bad(e.problem))?;
        let num = |x: &str| {
            x.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| bad(format!("'{x}' in '{part}' is not a number ≥ 0")))
        };
        let (from, to) = match v.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let x = num(v)?;
                (x, x)
            }
        };
        out.push((d, from, to));
    }
    if out.is_empty() {
        return Err(bad("no stages given".into()));
    }
    Ok(out)
}

/// Picks the load model from the flags: open (--rate/--stages), virtual
/// users (--users/--user-stages, or --think/--pacing), else closed. Returns
/// the model and the run's duration.
#[allow(clippy::too_many_arguments)]
fn load_from(
    a: &RunArgs,
    b: &mut PlanBuilder,
    connections: Option<u64>,
    requests: Option<u64>,
    duration: Option<Duration>,
    rate: Option<f64>,
    max_inflight: Option<u64>,
) -> Option<(Load, Option<Duration>)> {
    let open = rate.is_some() || a.stages.is_some();
    let users_flags = a.users.is_some() || a.user_stages.is_some();
    let users = users_flags || a.think.is_some() || a.pacing.is_some();
    if open && users {
        b.error(
            "--rate/--stages",
            "the open model and virtual users exclude each other",
            Some("pick one: --rate N, or -u N with --think/--pacing"),
        );
        return None;
    }
    if a.rate.is_some() && a.stages.is_some() {
        b.error(
            Field::Rate,
            "give either --rate or --stages",
            Some("--stages 60s:1000 is a constant rate"),
        );
        return None;
    }
    if (a.ramp_up.is_some() || a.ramp_down.is_some()) && a.users.is_none() {
        b.error(
            "--ramp-up/--ramp-down",
            "apply to --users",
            Some("e.g. -u 100 --ramp-up 30s"),
        );
    }
    if a.max_inflight.is_some() && !open {
        b.error(
            Field::MaxInflight,
            "only applies to the open model",
            Some("add --rate N"),
        );
    }
    let dur = |f: Field, v: &Option<String>, b: &mut PlanBuilder| {
        v.as_deref().and_then(|s| b.check(parse_duration(f, s)))
    };
    if open {
        let late = match a.late.as_str() {
            "drop" => dur(Field::LateAfter, &Some(a.late_after.clone()), b)
                .map(|after| plan::Late::Drop { after }),
            "catch-up" | "catchup" | "send" => Some(plan::Late::CatchUp),
            other => {
                b.error(
                    Field::Late,
                    format!("'{other}' is not a policy"),
                    Some("use drop or catch-up"),
                );
                None
            }
        };
        let stages: Vec<RateStage> = match (&a.stages, rate) {
            (Some(s), _) => b
                .check(parse_stages(Field::RateStages, s))?
                .into_iter()
                .map(|(duration, from, to)| RateStage { duration, from, to })
                .collect(),
            (None, Some(r)) => {
                let d = match (duration, requests) {
                    (Some(d), _) => d,
                    // Only -n: the timetable ends when the n-th request is due.
                    (None, Some(n)) => match Duration::try_from_secs_f64(n as f64 / r + 1e-3) {
                        Ok(d) => d,
                        Err(_) => {
                            b.error(
                                "-n/--rate",
                                format!(
                                    "{n} requests at {r}/s would take longer than yace can count"
                                ),
                                Some("give -d, or a higher rate"),
                            );
                            return None;
                        }
                    },
                    (None, None) => DEFAULT_DURATION,
                };
                vec![RateStage {
                    duration: d,
                    from: r,
                    to: r,
                }]
            }
            (None, None) => unreachable!("open model without a rate"),
        };
        let length: Duration = stages.iter().map(|s| s.duration).sum();
        let load = Load::Open {
            stages,
            max_inflight: max_inflight.or(connections).unwrap_or(DEFAULT_MAX_INFLIGHT),
            late: late?,
        };
        return Some((load, duration.or(Some(length))));
    }
    if users {
        let pacing = dur(Field::Pacing, &a.pacing, b);
        let think = match a.think.as_deref().map(plan::Think::parse) {
            None => plan::Think::None,
            Some(Ok(t)) => t,
            Some(Err(e)) => {
                b.error(
                    Field::Think,
                    e,
                    Some("e.g. 2s, uniform(1s, 3s), exponential(2s)"),
                );
                return None;
            }
        };
        let stages: Vec<plan::UserStage> = if let Some(s) = &a.user_stages {
            b.check(parse_stages(Field::UserStages, s))?
                .into_iter()
                .map(|(duration, from, to)| plan::UserStage { duration, from, to })
                .collect()
        } else {
            let n = match &a.users {
                Some(u) => b.check(parse_count(Field::Users, u))? as f64,
                None => connections.unwrap_or(DEFAULT_CONNECTIONS) as f64,
            };
            let up = dur(Field::RampUp, &a.ramp_up, b).unwrap_or_default();
            let down = dur(Field::RampDown, &a.ramp_down, b).unwrap_or_default();
            let total = duration.unwrap_or(up + DEFAULT_DURATION + down);
            let Some(hold) = total.checked_sub(up + down) else {
                b.error(
                    Field::Duration,
                    format!("{total:?} is shorter than --ramp-up plus --ramp-down"),
                    Some("-d is the whole run, ramps included"),
                );
                return None;
            };
            let mut st = Vec::new();
            if !up.is_zero() {
                st.push(plan::UserStage {
                    duration: up,
                    from: 0.0,
                    to: n,
                });
            }
            st.push(plan::UserStage {
                duration: hold,
                from: n,
                to: n,
            });
            if !down.is_zero() {
                st.push(plan::UserStage {
                    duration: down,
                    from: n,
                    to: 0.0,
                });
            }
            st
        };
        let length: Duration = stages.iter().map(|s| s.duration).sum();
        return Some((
            Load::Users {
                stages,
                pacing,
                think,
            },
            duration.or(Some(length)),
        ));
    }
    Some(closed(
        connections.unwrap_or(DEFAULT_CONNECTIONS),
        requests,
        duration,
    ))
}

/// `Basic base64(user:pass)` (RFC 7617), for ab's `-A` and `-P`.
fn basic_auth(userpass: &str) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = userpass.as_bytes();
    let mut out = String::from("Basic ");
    for chunk in b.chunks(3) {
        let n = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Seconds as ab gives them, as a duration; `None` (and an error keyed to
/// `field`) when they do not fit one.
fn seconds(b: &mut PlanBuilder, field: Field, s: f64) -> Option<Duration> {
    match Duration::try_from_secs_f64(s) {
        Ok(d) => Some(d),
        Err(_) => {
            b.error(
                field,
                format!("'{s}' is not a duration"),
                Some("use a number with a unit: 500ms, 30s, 2m, 1h"),
            );
            None
        }
    }
}

/// `yace ab`'s flags as a plan: ab's own checks first, then the shared ones,
/// every problem reported at once in ab's flag names.
pub fn ab_plan(a: &AbArgs, url: &str) -> Result<Plan, Failure> {
    ab_plan_keyed(a, url).map_err(|e| Failure::usage(e.render(&AbFlags)))
}

fn ab_plan_keyed(a: &AbArgs, url: &str) -> Result<Plan, Diagnostics> {
    let mut ab = PlanBuilder::new();
    if let Some(p) = a
        .ssl_protocol
        .as_deref()
        .filter(|p| !p.eq_ignore_ascii_case("ALL"))
    {
        ab.error(
            "-f",
            format!("'{p}' cannot be forced: yace negotiates TLS 1.2 or 1.3 (SSL2/3, TLS 1.0/1.1 are unsafe and unsupported)"),
            Some("drop -f, or use -f ALL"),
        );
    }
    if a.ssl_cipher.is_some() {
        ab.error(
            "-Z",
            "cipher suites cannot be chosen: yace uses rustls's safe defaults",
            Some("drop -Z"),
        );
    }
    if a.verbosity.is_some_and(|v| v >= 4) {
        ab.error(
            "-v",
            "printing response headers (-v 4) is not supported",
            Some("use curl -v URL to see them"),
        );
    }
    if a.postfile.is_some() && a.putfile.is_some() {
        ab.error(
            "-p/-u",
            "give either a POST file or a PUT file, not both",
            None,
        );
    }
    let timeout_ok = a.timeout > 0.0 && a.timeout.is_finite();
    if !timeout_ok {
        ab.error(
            "-s",
            format!("'{}' is not a positive number of seconds", a.timeout),
            Some("e.g. -s 30"),
        );
    }
    let timelimit_ok = a.timelimit.is_none_or(|t| t > 0.0 && t.is_finite());
    if !timelimit_ok {
        ab.error(
            "-t",
            "the time limit must be a positive number of seconds",
            Some("e.g. -t 60"),
        );
    }
    let proxy = a.proxy.as_deref().and_then(|p| {
        let parsed = p
            .rsplit_once(':')
            .and_then(|(h, port)| Some((h, port.parse::<u16>().ok()?)));
        match parsed {
            Some((h, port)) if !h.is_empty() => Some(Proxy {
                host: h.trim_matches(['[', ']']).to_owned(),
                port,
            }),
            _ => {
                ab.error(
                    "-X",
                    format!("'{p}' is not proxy:port"),
                    Some("e.g. -X 127.0.0.1:3128"),
                );
                None
            }
        }
    });
    let body_file = a.postfile.as_deref().or(a.putfile.as_deref());
    let method = match (&a.method, a.head, &a.postfile, &a.putfile) {
        (Some(m), _, _, _) => m.as_str(),
        (None, true, _, _) => "HEAD",
        (None, _, Some(_), _) => "POST",
        (None, _, _, Some(_)) => "PUT",
        _ => "GET",
    };
    let mut headers = a.headers.clone();
    if !a.cookies.is_empty() {
        headers.push(format!("Cookie: {}", a.cookies.join("; ")));
    }
    if let Some(up) = &a.auth {
        headers.push(format!("Authorization: {}", basic_auth(up)));
    }
    if let Some(up) = &a.proxy_auth {
        headers.push(format!("Proxy-Authorization: {}", basic_auth(up)));
    }
    if body_file.is_some() || a.content_type.is_some() {
        let has_ct = headers
            .iter()
            .any(|h| h.to_ascii_lowercase().starts_with("content-type:"));
        if !has_ct {
            headers.push(format!(
                "Content-Type: {}",
                a.content_type.as_deref().unwrap_or("text/plain")
            ));
        }
    }
    // -n defaults to 1, unless -t gives the run a time limit instead.
    let requests = match (a.requests, a.timelimit) {
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) => Some(1),
    };

    // The checks every front end shares, collected on their own so ab's
    // problems above and these are all reported.
    let mut b = PlanBuilder::new();
    let target = target(&mut b, url);
    let duration = a
        .timelimit
        .filter(|_| timelimit_ok)
        .and_then(|t| seconds(&mut b, Field::Duration, t));
    // ab's -s bounds both the connect and the whole request (at least 1 ms).
    let timeout = timeout_ok
        .then(|| seconds(&mut b, Field::Timeout, a.timeout.max(0.001)))
        .flatten();
    let request = request(&mut b, method, &headers, None, body_file);
    let shared = match target {
        // A bad -s or -t is reported above; no plan is checked without it.
        Some(target) if !b.has_errors() && timeout_ok && timelimit_ok => {
            let settings = Settings {
                threads: a.threads.map(|t| t as u64),
                keepalive: a.keepalive,
                timeout,
                connect_timeout: timeout,
                tls: TlsOptions {
                    cert: a.ssl_cert.clone().or_else(|| a.tls.cert.clone()),
                    key: a.ssl_cert.clone().or_else(|| a.tls.key.clone()),
                    ..a.tls.options()
                },
                streams: None,
            };
            let load = closed(a.concurrency, requests, duration);
            b.finish(
                Some(assemble(target, request, load, requests, settings)),
                &AbFlags,
            )
        }
        _ => b.finish(None, &AbFlags),
    };
    match (shared, ab.has_errors()) {
        (Ok(mut p), false) => {
            p.socket.bind = a.bind;
            p.socket.buffer = a.window;
            p.socket.proxy = proxy;
            Ok(p)
        }
        (Ok(_), true) => ab.finish(None, &AbFlags),
        (Err(e), _) => {
            let mut all = ab
                .finish(None, &AbFlags)
                .err()
                .map(|x| x.0)
                .unwrap_or_default();
            all.extend(e.0);
            Err(Diagnostics(all))
        }
    }
}

/// Load flags that, given on the command line, replace a scenario's [load].
fn load_flags_given(a: &RunArgs) -> bool {
    a.users.is_some()
        || a.user_stages.is_some()
        || a.connections.is_some()
        || a.pacing.is_some()
        || a.ramp_up.is_some()
        || a.ramp_down.is_some()
}

/// The plan for a scenario: its base URL (or the command line's), its load
/// (or the flags'), the scenario's timeout unless --timeout was changed.
pub fn scenario_plan(a: &RunArgs, sc: &Scenario, url: &str) -> Result<Plan, Diagnostics> {
    let mut b = PlanBuilder::new();
    if a.rate.is_some() || a.stages.is_some() || !sc.load_spec().rate.is_empty() {
        b.error(
            "--rate/rate",
            "scenarios run as virtual users; the open model with a journey is not supported yet",
            Some("use users, ramp_up and pacing in [load]"),
        );
    }
    if a.think.is_some() {
        b.error(
            Field::Think,
            "a scenario sets think time in its file",
            Some("set think in [load] or per step"),
        );
    }
    if b.has_errors() {
        return b.finish(None, &RunFlags);
    }
    let mut plan = run_plan(a, url)?;
    let spec = sc.load_spec();
    if !load_flags_given(a) {
        let stages: Vec<plan::UserStage> = spec
            .users
            .iter()
            .map(|s| plan::UserStage {
                duration: s.duration,
                from: s.from,
                to: s.to,
            })
            .collect();
        let length: Duration = stages.iter().map(|s| s.duration).sum();
        plan.load = Load::Users {
            stages,
            pacing: spec.pacing,
            think: plan::Think::None,
        };
        if a.duration.is_none() {
            plan.stop.duration = Some(length);
        }
    } else if let Load::Users { think, .. } = &mut plan.load {
        // Think time comes from the scenario's steps, not from the Fixed flow.
        *think = plan::Think::None;
    }
    if a.threads.is_none() {
        if let Some(t) = spec.threads {
            plan.threads = t;
        }
    }
    if a.timeout == "30s" {
        plan.timeouts.request = spec.timeout;
    }
    Ok(plan)
}

/// Parses `--threshold` expressions, reporting every bad one.
pub fn thresholds(exprs: &[String], step: Option<&str>) -> Result<Vec<Threshold>, Failure> {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for e in exprs {
        match Threshold::parse(e, step) {
            Ok(t) => ok.push(t),
            Err(msg) => bad.push(format!("--threshold: {msg}")),
        }
    }
    if bad.is_empty() {
        Ok(ok)
    } else {
        Err(Failure::usage(bad.join("\n")))
    }
}

/// A scenario's own thresholds (its [load] and each step's), after the
/// command line's; every bad one is reported, with the file it is in.
pub fn scenario_thresholds(
    a: &RunArgs,
    sc: &Scenario,
    file: &Path,
) -> Result<Vec<Threshold>, Failure> {
    let mut thresholds = thresholds(&a.thresholds, None)?;
    let mut bad = Vec::new();
    for t in &sc.load_spec().thresholds {
        match Threshold::parse(t, None) {
            Ok(t) => thresholds.push(t),
            Err(e) => bad.push(format!("{}: [load] thresholds: {e}", file.display())),
        }
    }
    for st in sc.steps() {
        for t in &st.thresholds {
            match Threshold::parse(t, Some(&st.name)) {
                Ok(t) => thresholds.push(t),
                Err(e) => bad.push(format!(
                    "{}: step '{}' thresholds: {e}",
                    file.display(),
                    st.name
                )),
            }
        }
    }
    if bad.is_empty() {
        Ok(thresholds)
    } else {
        Err(Failure::usage(bad.join("\n")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_auth_is_rfc_7617() {
        assert_eq!(
            basic_auth("Aladdin:open sesame"),
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
        assert_eq!(basic_auth("a:b"), "Basic YTpi");
        assert_eq!(basic_auth("ab:c"), "Basic YWI6Yw==");
    }
}
