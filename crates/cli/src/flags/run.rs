//! `yace run`'s flags as a plan: the load model picked from them.

use super::parts::{assemble, closed, parse_target, request, Settings};
use super::spelling::RunFlags;
use crate::args::RunArgs;
use plan::Spelling;
use plan::{
    parse_count, parse_duration, Diagnostic, Diagnostics, Field, Load, Plan, PlanBuilder,
    RateStage, DEFAULT_DURATION,
};
use std::time::Duration;

/// Connections when `-c` is not given.
const DEFAULT_CONNECTIONS: u64 = 50;
/// Open model: in-flight cap when `--max-inflight` is not given.
pub(crate) const DEFAULT_MAX_INFLIGHT: u64 = 1000;

/// `--rate`: a positive number per second.
pub(crate) fn parse_rate(b: &mut PlanBuilder, s: &str) -> Option<f64> {
    match plan::parse_amount(s) {
        Some(r) if r > 0.0 => Some(r),
        _ => {
            b.error(
                Field::Rate,
                format!("'{s}' is not a positive number of requests per second"),
                Some("e.g. --rate 1000, --rate 2.5 or --rate 1k (k, M as for counts)"),
            );
            None
        }
    }
}

/// The open model's policy for a request (or a visitor) that finds no free
/// slot when due: `--late drop` (after `--late-after`) or `catch-up`.
pub(crate) fn late_policy(a: &RunArgs, b: &mut PlanBuilder) -> Option<plan::Late> {
    match a.late.as_str() {
        "drop" => b
            .check(parse_duration(Field::LateAfter, &a.late_after))
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
    }
}

/// `yace run`'s flags as a plan, every problem reported at once.
pub fn run_plan(a: &RunArgs, url: &str) -> Result<Plan, Diagnostics> {
    let mut b = PlanBuilder::new();
    let target = parse_target(&mut b, url);
    let mut count = |f: Field, v: &Option<String>| v.as_deref().and_then(|s| b.check(count(f, s)));
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
    let limits = response_limits(&mut b, &a.max_head, &a.max_fields);
    let connect_timeout = b.check(parse_duration(Field::ConnectTimeout, &a.connect_timeout));
    let rate = a.rate.as_deref().and_then(|s| parse_rate(&mut b, s));
    let request = request(
        &mut b,
        &a.method,
        &a.headers,
        a.body.as_deref(),
        a.body_file.as_deref(),
    );
    // Every flag is checked in this one round, even after an earlier one
    // failed: a flag that did not parse counts as not given, so the checks
    // below do not invent a second error for it.
    let load = load_from(
        a,
        &mut b,
        connections,
        requests,
        duration,
        rate,
        max_inflight,
    );
    let Some(load) = load else {
        return b.finish(None, &RunFlags);
    };
    // A URL that did not parse still lets the plan's own checks run, on a
    // stand-in that never leaves this function (the error is recorded).
    let target = target
        .unwrap_or_else(|| plan::Target::parse("http://127.0.0.1/").expect("a valid stand-in URL"));
    let settings = Settings {
        threads,
        keepalive: !a.no_keepalive,
        timeout,
        connect_timeout,
        tls: a.tls.options(),
        streams: a.http2.then_some(streams),
        secrets: a.secrets.secrets(),
        limits,
        timer_slack: timer_slack(&mut b, &a.timer_slack),
    };
    let mut plan = assemble(target, request, load, requests, settings);
    transport(a, &mut b, &mut plan);
    if let Some(list) = &a.source_addrs {
        match plan::source::SourceAddrs::parse(list) {
            Ok(s) => plan.socket.sources = s.0,
            Err(e) => b.error("--source-addrs", e.problem, Some(e.hint)),
        }
    }
    b.finish(Some(plan), &RunFlags)
}

/// `--unix-socket` and the FastCGI flags, checked against the URL's form.
fn transport(a: &RunArgs, b: &mut PlanBuilder, plan: &mut Plan) {
    if let Some(path) = &a.unix_socket {
        let shown = path.display().to_string();
        if plan.target.unix.is_some() {
            b.error(
                "--unix-socket",
                format!("'{shown}' given, and the URL names a socket too"),
                Some("give the socket once: in the URL (unix:SOCKET:/PATH) or with --unix-socket"),
            );
        } else if !path.is_absolute() {
            b.error(
                "--unix-socket",
                format!("'{shown}' is not an absolute path"),
                Some("give the socket's full path, e.g. /run/nginx.sock"),
            );
        } else {
            plan.target.unix = Some(shown);
        }
    }
    if plan.target.is_fcgi() {
        plan.fcgi = Some(plan::FcgiOptions {
            root: a.fcgi_root.clone().unwrap_or_default(),
            keep_conn: a.fcgi_keep_conn,
            https: a.fcgi_https,
        });
        // The connection's life is FastCGI's to say (FCGI_KEEP_CONN), and
        // nginx's default is a connection per request.
        plan.keepalive = a.fcgi_keep_conn;
        if a.http2 {
            b.error(
                "--http2",
                "FastCGI is its own protocol, not HTTP/2",
                Some("leave --http2 out for an fcgi:// URL"),
            );
        }
        if a.no_keepalive && a.fcgi_keep_conn {
            b.error(
                "--fcgi-keep-conn",
                "given with --no-keepalive",
                Some("FastCGI is a connection per request unless --fcgi-keep-conn; leave one out"),
            );
        }
    } else {
        for (given, flag) in [
            (a.fcgi_root.is_some(), "--fcgi-root"),
            (a.fcgi_keep_conn, "--fcgi-keep-conn"),
            (a.fcgi_https, "--fcgi-https"),
        ] {
            if given {
                b.error(
                    flag,
                    format!("is for FastCGI, and {} is not", plan.target.url),
                    Some("use an fcgi://HOST:PORT/PATH or fcgi+unix:SOCKET:/PATH URL"),
                );
            }
        }
    }
}

/// `--timer-slack`: a duration from 0 to [`plan::MAX_TIMER_SLACK`].
fn timer_slack(b: &mut PlanBuilder, s: &str) -> Option<Duration> {
    let d = b.check(plan::parse_duration("--timer-slack", s))?;
    if d > plan::MAX_TIMER_SLACK {
        b.error(
            "--timer-slack",
            format!("'{s}' is longer than the longest, 100ms"),
            Some(
                "requests go out at most this late to share a wake-up; 0 to 1ms is what \
                 fixed-rate runs need (0: each at its own due time)",
            ),
        );
        return None;
    }
    Some(d)
}

/// `--max-head` and `--max-fields`: at least what any sane head needs,
/// at most what fits the parser's counters.
fn response_limits(b: &mut PlanBuilder, head: &str, fields: &str) -> plan::ResponseLimits {
    let mut limits = plan::ResponseLimits::default();
    let mut one = |f: Field, s: &str, min: u64, hint: &'static str| {
        let v = b.check(parse_count(f, s))?;
        if !(min..=u64::from(u32::MAX / 2)).contains(&v) {
            b.error(f, format!("'{s}' is out of range"), Some(hint));
            return None;
        }
        Some(v as u32)
    };
    if let Some(v) = one(
        Field::MaxHead,
        head,
        1024,
        "from 1k to 1G, e.g. --max-head 1M",
    ) {
        limits.head_bytes = v;
    }
    if let Some(v) = one(
        Field::MaxFields,
        fields,
        16,
        "from 16, e.g. --max-fields 10000",
    ) {
        limits.fields = v;
    }
    limits
}

/// A count flag: a whole number, where a negative one is called out as
/// such (clap hands `-c -5` over as the value `-5`).
fn count(f: Field, s: &str) -> Result<u64, Diagnostic> {
    if s.trim_start().starts_with('-') && parse_count(f, &s.trim_start()[1..]).is_ok() {
        return Err(Diagnostic {
            source: f.into(),
            problem: format!("'{s}' is negative; must be at least 1"),
            hint: None,
        });
    }
    parse_count(f, s)
}

/// Stages carry their own lengths: a different -d would cut them or idle
/// after them, so it is an error (the same -d is accepted).
pub(super) fn stages_set_the_length(
    b: &mut PlanBuilder,
    field: Field,
    duration: Option<Duration>,
    stages: impl Iterator<Item = Duration>,
) -> Option<()> {
    let length: Duration = stages.sum();
    match duration {
        Some(d) if d != length => {
            b.error(
                Field::Duration,
                format!(
                    "the stages last {length:?}; {d:?} would {} them",
                    if d < length { "cut" } else { "idle after" }
                ),
                Some(&format!(
                    "drop -d: {} set the run's length",
                    RunFlags.name(field)
                )),
            );
            None
        }
        _ => Some(()),
    }
}

/// Parses `DURATION:N` or `DURATION:FROM-TO` stages, comma-separated.
pub(super) fn parse_stages(field: Field, s: &str) -> Result<Vec<(Duration, f64, f64)>, Diagnostic> {
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
            plan::parse_amount(x)
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

/// The load flags' values checked each on its own, for when their
/// combination is already refused: every flag problem is still reported in
/// the one round (`--stages 10s:abc --think 'uniform(3s,1s)'` names both as
/// well as the conflict). `--rate` is checked with the other counts.
fn load_values(a: &RunArgs, b: &mut PlanBuilder) {
    if let Some(s) = &a.stages {
        b.check(parse_stages(Field::RateStages, s));
    }
    if let Some(s) = &a.user_stages {
        b.check(parse_stages(Field::UserStages, s));
    }
    if let Some(u) = &a.users {
        b.check(parse_count(Field::Users, u));
    }
    if let Some(Err(e)) = a.think.as_deref().map(plan::Think::parse) {
        b.error(
            Field::Think,
            e,
            Some("e.g. 2s, uniform(1s, 3s), exponential(2s)"),
        );
    }
    for (f, v) in [
        (Field::Pacing, &a.pacing),
        (Field::RampUp, &a.ramp_up),
        (Field::RampDown, &a.ramp_down),
    ] {
        if let Some(v) = v {
            b.check(parse_duration(f, v));
        }
    }
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
    // By the flags given, not by whether their values parsed: a bad --rate
    // is still the open model (checked on a stand-in rate).
    let open = a.rate.is_some() || a.stages.is_some();
    let rate = rate.or(a.rate.as_ref().map(|_| 1.0));
    let users_flags = a.users.is_some() || a.user_stages.is_some();
    let users = users_flags || a.think.is_some() || a.pacing.is_some();
    if open && users {
        b.error(
            "--rate/--stages",
            "the open model and virtual users exclude each other",
            Some("pick one: --rate N, or -u N with --think/--pacing"),
        );
        load_values(a, b);
        return None;
    }
    if a.rate.is_some() && a.stages.is_some() {
        b.error(
            Field::Rate,
            "give either --rate or --stages",
            Some("--stages 60s:1000 is a constant rate"),
        );
        load_values(a, b);
        return None;
    }
    if a.users.is_some() && a.user_stages.is_some() {
        b.error(
            Field::UserStages,
            "give either -u/--users or --user-stages",
            Some("--user-stages 60s:100 is 100 users for 60 s"),
        );
        load_values(a, b);
        return None;
    }
    if a.connections.is_some() && users_flags {
        b.error(
            Field::Connections,
            "virtual users each have their own connection: -u (or --user-stages) sets them",
            Some("drop -c; -c with --think/--pacing alone is the number of users"),
        );
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
        let late = late_policy(a, b);
        let stages: Vec<RateStage> = match (&a.stages, rate) {
            (Some(s), _) => {
                let st: Vec<RateStage> = b
                    .check(parse_stages(Field::RateStages, s))?
                    .into_iter()
                    .map(|(duration, from, to)| RateStage { duration, from, to })
                    .collect();
                stages_set_the_length(
                    b,
                    Field::RateStages,
                    duration,
                    st.iter().map(|s| s.duration),
                )?;
                st
            }
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
            let st: Vec<plan::UserStage> = b
                .check(parse_stages(Field::UserStages, s))?
                .into_iter()
                .map(|(duration, from, to)| plan::UserStage { duration, from, to })
                .collect();
            stages_set_the_length(
                b,
                Field::UserStages,
                duration,
                st.iter().map(|s| s.duration),
            )?;
            st
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
