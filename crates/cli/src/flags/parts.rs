//! The typed helpers every front end shares: the target, the request, the
//! closed model, the plan's assembly, the thresholds.

use crate::Failure;
use plan::{
    Field, Header, Load, Plan, PlanBuilder, RequestSpec, Source, Stop, Target, Timeouts,
    TlsOptions, DEFAULT_DURATION,
};
use stats::threshold::Threshold;
use std::path::Path;
use std::time::Duration;

/// The target, or an error keyed to the URL.
pub(super) fn parse_target(b: &mut PlanBuilder, url: &str) -> Option<Target> {
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
pub(super) fn request(
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
pub(super) fn closed(
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
            // -n 0 is an error of its own; it must not make -c look wrong too.
            connections: requests
                .filter(|&n| n > 0)
                .map_or(connections, |n| connections.min(n)),
        },
        duration,
    )
}

/// The rest of a plan, typed, for [`assemble`].
pub(super) struct Settings {
    pub(super) threads: Option<u64>,
    pub(super) keepalive: bool,
    pub(super) timeout: Option<Duration>,
    pub(super) connect_timeout: Option<Duration>,
    pub(super) tls: TlsOptions,
    pub(super) streams: Option<Option<u64>>,
    pub(super) secrets: plan::secrets::Secrets,
    pub(super) limits: plan::ResponseLimits,
    /// `--timer-slack` (None: the plan's default).
    pub(super) timer_slack: Option<Duration>,
}

/// A plan from its checked parts.
pub(super) fn assemble(
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
        threads: s.threads.map_or_else(host::cpus, |t| t as usize),
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
        secrets: s.secrets,
        limits: s.limits,
        shard: None,
        timer_slack: s.timer_slack,
        fcgi: None,
    }
}

/// Parses `--threshold` expressions, reporting every bad one.
pub fn thresholds(exprs: &[String], step: Option<&str>) -> Result<Vec<Threshold>, Failure> {
    thresholds_of("--threshold", exprs, step)
}

/// Parses threshold expressions given with `flag` (`--slo`, `--frontier`
/// use the same syntax), reporting every bad one under that flag's name.
pub fn thresholds_of(
    flag: &str,
    exprs: &[String],
    step: Option<&str>,
) -> Result<Vec<Threshold>, Failure> {
    let mut ok = Vec::new();
    let mut bad = Vec::new();
    for e in exprs {
        match Threshold::parse(e, step) {
            Ok(t) => ok.push(t),
            Err(msg) => bad.push(format!("{flag}: {msg}")),
        }
    }
    if bad.is_empty() {
        Ok(ok)
    } else {
        Err(Failure::usage(bad.join("\n")))
    }
}

/// Parses `--monitor` specs and `--monitor-interval`, reporting every bad one.
pub fn monitors(specs: &[String], interval: &str) -> Result<monitor::Config, Failure> {
    let mut bad = Vec::new();
    let mut ok = Vec::new();
    for s in specs {
        match monitor::Spec::parse(s) {
            Ok(spec) => ok.push(spec),
            Err(e) => bad.push(e),
        }
    }
    let interval = match plan::parse_duration("--monitor-interval", interval) {
        Ok(d) if d >= monitor::MIN_INTERVAL => d,
        Ok(_) => {
            bad.push(format!(
                "--monitor-interval {interval}: at least {} ms (reading /proc and status pages \
                 more often costs the server more than it tells)",
                monitor::MIN_INTERVAL.as_millis()
            ));
            Duration::from_secs(1)
        }
        Err(e) => {
            bad.push(e.to_string());
            Duration::from_secs(1)
        }
    };
    if bad.is_empty() {
        Ok(monitor::Config {
            specs: ok,
            interval,
            answered_before: false,
        })
    } else {
        Err(Failure::usage(bad.join("\n")))
    }
}

/// Server-side thresholds (`server_cpu<80%`, …) need something to read
/// them from: refused, naming the flag, when nothing is monitored.
pub fn monitored(flag: &str, ts: &[Threshold], monitors: &monitor::Config) -> Result<(), Failure> {
    let unread: Vec<&str> = ts
        .iter()
        .filter(|t| t.needs_monitor())
        .map(|t| t.expr.as_str())
        .collect();
    if unread.is_empty() || !monitors.is_empty() {
        return Ok(());
    }
    Err(Failure::usage(format!(
        "{flag} {}: a server-side figure needs --monitor (system when the server runs here, \
         node:URL or ssh:HOST when it runs elsewhere; proc:NAME gives CPU per request)",
        unread.join(", ")
    )))
}
