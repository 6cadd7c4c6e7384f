//! The terminal summary of a run.

use crate::fmt::{bytes, count, duration_us};
use plan::Load;
use sample::Outcome;
use stats::{EndReason, RunResult};
use std::io::{self, Write};

/// Percentiles shown in the summary (the JSON has more).
pub(crate) const SHOWN: [f64; 7] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99];

pub(crate) fn model(r: &RunResult) -> String {
    let p = &r.plan;
    let conn = if p.keepalive {
        "keep-alive"
    } else {
        "new connection per request"
    };
    let threads = threads(r.client.threads);
    // HTTP/2: each connection carries `streams` requests at once.
    let streams = p.http2.map_or(1, |h| u64::from(h.streams));
    let on = |n: u64| {
        if streams > 1 {
            format!("{} connections × {streams} streams", count(n))
        } else {
            format!("{} connections", count(n))
        }
    };
    match &p.load {
        Load::Closed { connections } => {
            format!("closed model: {}, {threads}, {conn}", on(*connections))
        }
        Load::Open {
            stages,
            max_inflight,
            ..
        } => {
            let peak = stages.iter().map(|s| s.from.max(s.to)).fold(0.0, f64::max);
            let most = if streams > 1 {
                format!(
                    "{} in flight on {}",
                    count(max_inflight * streams),
                    on(*max_inflight)
                )
            } else {
                format!("{max_inflight} in flight")
            };
            format!("open model: up to {peak}/s, at most {most}, {threads}, {conn}")
        }
        Load::Users { pacing, think, .. } => {
            let mut s = format!("virtual users: up to {}", p.load.max_connections());
            if let Some(pc) = pacing {
                s.push_str(&format!(", an iteration every {:?}", pc));
            }
            if *think != plan::Think::None {
                s.push_str(", think time");
            }
            format!("{s}, {threads}, {conn}")
        }
    }
}

fn threads(n: usize) -> String {
    if n == 1 {
        "1 thread".into()
    } else {
        format!("{n} threads")
    }
}

pub(crate) fn end(r: &RunResult) -> &'static str {
    match r.end.reason {
        EndReason::Completed => "all requests done",
        EndReason::Duration => "duration reached",
        EndReason::Interrupted => "INTERRUPTED by Ctrl-C: partial result",
        EndReason::Terminated => "TERMINATED by SIGTERM: partial result",
    }
}

/// Writes the human summary of `r`.
pub fn summary(r: &RunResult, w: impl Write) -> io::Result<()> {
    summary_with(r, w, false)
}

/// The summary, with `graphs`: a responses/s sparkline and a latency
/// histogram under the latency figures (for a terminal).
pub fn summary_with(r: &RunResult, mut w: impl Write, graphs: bool) -> io::Result<()> {
    let s = &r.summary;
    writeln!(w, "{} {}", r.plan.request.method, r.plan.target.url)?;
    writeln!(w, "  {}  ·  {:.2}s ({})", model(r), s.duration_s, end(r))?;
    if let Some(sw) = &r.server_software {
        writeln!(w, "  server: {sw}")?;
    }
    if let Some(t) = &r.tls {
        writeln!(
            w,
            "  TLS {} {}, certificate {}; {} full and {} resumed handshakes",
            t.version.as_deref().unwrap_or("(no handshake)"),
            t.cipher.as_deref().unwrap_or(""),
            if t.verified {
                "verified"
            } else {
                "NOT VERIFIED (--insecure)"
            },
            count(t.full_handshakes),
            count(t.resumed_handshakes)
        )?;
    }
    if let Some(h) = &r.http2 {
        write!(w, "  HTTP/2, {} streams per connection", h.streams)?;
        if let Some(m) = h.server_max_streams {
            write!(w, " (server allows {m})")?;
        }
        if h.goaways > 0 {
            write!(w, "; {} connections retired by GOAWAY", count(h.goaways))?;
        }
        writeln!(w)?;
    }
    // A load that was not offered is said first: the figures below measure
    // a different load than the one asked for.
    if let Some(sf) = &r.shortfall {
        writeln!(w)?;
        for (i, line) in crate::fmt::wrap(&sf.message, 64).iter().enumerate() {
            let label = if i == 0 { "SHORTFALL" } else { "" };
            writeln!(w, "  {label:<10}  {line}")?;
        }
    }
    writeln!(w)?;
    writeln!(
        w,
        "  Requests    {} started   {} responses   {:.1} responses/s",
        count(s.requests),
        count(s.responses),
        s.rps
    )?;
    writeln!(
        w,
        "              {} errors   {} non-2xx   {} cancelled at end   {} retried",
        count(s.errors),
        count(s.non_2xx),
        count(s.cancelled),
        count(s.retries)
    )?;
    // Every planned request accounted for, when some were not sent.
    if let (Some(planned), Some(later)) = (s.planned, s.not_yet_due) {
        if s.dropped > 0 || later > 0 {
            writeln!(
                w,
                "  Planned     {} = {} started + {} dropped + {} not yet due at the end",
                count(planned),
                count(s.requests),
                count(s.dropped),
                count(later)
            )?;
        }
    }
    writeln!(
        w,
        "  Transfer    in {} ({}/s)   out {}   bodies {}",
        bytes(s.bytes_in as f64),
        bytes(s.bytes_in_per_s),
        bytes(s.bytes_out as f64),
        bytes(s.body_bytes as f64)
    )?;
    let b = &s.body_length;
    if let Some(first) = b.first {
        if b.varied > 0 {
            writeln!(
                w,
                "  Body        {first} bytes first; length varied in {} responses ({}–{} bytes): \
                 information, not failure",
                count(b.varied),
                b.min,
                b.max
            )?;
        } else {
            writeln!(w, "  Body        {first} bytes, every response")?;
        }
    }
    writeln!(w)?;
    let l = &s.latency;
    if l.count > 0 {
        let what = if s.service.is_some() {
            "Latency (from intended send time; coordinated omission corrected)"
        } else {
            "Latency (service time, closed model: a stall shows as fewer requests; see --rate)"
        };
        writeln!(w, "  {what}")?;
        writeln!(
            w,
            "    min {}   mean {}   stdev {}   max {}",
            duration_us(l.min_us),
            duration_us(l.mean_us),
            duration_us(l.stdev_us),
            duration_us(l.max_us)
        )?;
        let ps: Vec<String> = SHOWN
            .iter()
            .filter_map(|&p| l.at(p).map(|v| format!("p{p} {}", duration_us(v))))
            .collect();
        writeln!(w, "    {}", ps.join("   "))?;
        if let Some(sv) = &s.service {
            writeln!(
                w,
                "  Service time (from actual send)   mean {}   p50 {}   p99 {}   max {}",
                duration_us(sv.mean_us),
                duration_us(sv.at(50.0).unwrap_or(0.0)),
                duration_us(sv.at(99.0).unwrap_or(0.0)),
                duration_us(sv.max_us)
            )?;
        }
        if let Some(lag) = &s.lag {
            writeln!(
                w,
                "  Schedule lag (start − intended)   mean {}   p99 {}   max {}{}",
                duration_us(lag.mean_us),
                duration_us(lag.at(99.0).unwrap_or(0.0)),
                duration_us(lag.max_us),
                if s.dropped > 0 {
                    format!("   dropped {}", count(s.dropped))
                } else {
                    String::new()
                }
            )?;
        }
        writeln!(
            w,
            "  Phases      connect {} / {}{}   wait (to first byte) {} / {}   (mean / p99 per request)",
            duration_us(s.connect.mean_us),
            duration_us(s.connect.at(99.0).unwrap_or(0.0)),
            s.tls.as_ref().map_or(String::new(), |t| format!(
                "   tls {} / {}",
                duration_us(t.mean_us),
                duration_us(t.at(99.0).unwrap_or(0.0))
            )),
            duration_us(s.wait.mean_us),
            duration_us(s.wait.at(99.0).unwrap_or(0.0)),
        )?;
        if s.handshake.count > 0 {
            writeln!(
                w,
                "  Connections {} opened, TCP handshake mean {} / p99 {}",
                count(s.connections_opened),
                duration_us(s.handshake.mean_us),
                duration_us(s.handshake.at(99.0).unwrap_or(0.0)),
            )?;
        }
    } else {
        writeln!(w, "  Latency     no complete responses")?;
    }
    if graphs {
        crate::graphs::write(r, &mut w)?;
    }
    writeln!(w)?;
    if !r.statuses.is_empty() {
        let st: Vec<String> = r
            .statuses
            .iter()
            .map(|(code, n)| format!("{code}: {}", count(*n)))
            .collect();
        writeln!(w, "  Status      {}", st.join("   "))?;
    }
    let failures: Vec<(Outcome, u64)> = r
        .outcomes
        .iter()
        .filter(|(o, n)| o.is_error() && **n > 0)
        .map(|(o, n)| (*o, *n))
        .collect();
    // Failed checks are failures too: never "Errors none" beside them.
    let (checks_failed, checks_run) = r
        .checks
        .iter()
        .fold((0, 0), |(f, t), c| (f + c.failed, t + c.failed + c.passed));
    if checks_failed > 0 {
        writeln!(
            w,
            "  Checks      {} of {} failed ({:.2}%)",
            count(checks_failed),
            count(checks_run),
            checks_failed as f64 * 100.0 / checks_run as f64
        )?;
    }
    if failures.is_empty() {
        writeln!(w, "  Errors      none")?;
    } else {
        writeln!(w, "  Errors")?;
        let mut sorted = failures;
        sorted.sort_by_key(|f| std::cmp::Reverse(f.1));
        for (o, n) in sorted {
            writeln!(w, "    {:<24} {:>10}   {}", o.name(), count(n), o.explain())?;
        }
        // Which part of the refused responses broke a rule or a limit.
        for (d, n) in &r.error_details {
            writeln!(
                w,
                "      {:<22} {:>10}   {}",
                d.name(),
                count(*n),
                d.explain()
            )?;
        }
    }
    for (l, n) in &r.lenient {
        writeln!(
            w,
            "  Lenient     {} responses: {}; read, then their connections closed",
            count(*n),
            l.explain()
        )?;
    }
    if !r.steps.is_empty() {
        writeln!(
            w,
            "  Steps       {:<20} {:>10} {:>8} {:>8} {:>10} {:>10}",
            "", "requests", "errors", "non-2xx", "p50", "p99"
        )?;
        for st in &r.steps {
            writeln!(
                w,
                "              {:<20} {:>10} {:>8} {:>8} {:>10} {:>10}",
                st.name,
                count(st.requests),
                count(st.errors),
                count(st.non_2xx),
                duration_us(st.latency.at(50.0).unwrap_or(0.0)),
                duration_us(st.latency.at(99.0).unwrap_or(0.0)),
            )?;
        }
    }
    if !r.checks.is_empty() {
        writeln!(w, "  Checks")?;
        for c in &r.checks {
            // A check that never ran has not passed.
            let mark = match (c.passed, c.failed) {
                (0, 0) => "not run",
                (_, 0) => "ok     ",
                _ => "FAIL   ",
            };
            writeln!(
                w,
                "    {mark} {} · {}   {} passed, {} failed",
                c.step,
                c.name,
                count(c.passed),
                count(c.failed)
            )?;
        }
    }
    if !r.thresholds.is_empty() {
        writeln!(w, "  Thresholds")?;
        for t in &r.thresholds {
            let scope = t
                .step
                .as_ref()
                .map(|s| format!(" (step {s})"))
                .unwrap_or_default();
            writeln!(
                w,
                "    {} {}{scope}   actual {}",
                if t.passed { "pass" } else { "FAIL" },
                t.expr,
                crate::actual(t.actual, stats::threshold::actual_unit(t))
            )?;
        }
    }
    let c = &r.client;
    writeln!(
        w,
        "  Client      {}, {:.2} CPU-s, busiest thread {:.0}% busy{}",
        threads(c.threads),
        c.cpu_s,
        c.busiest_thread * 100.0,
        if c.saturated {
            " (SATURATED)"
        } else {
            " (not the bottleneck)"
        }
    )?;
    let shown_above = r.shortfall.as_ref().map(|s| s.message.as_str());
    for warning in r
        .warnings
        .iter()
        .filter(|w| Some(w.as_str()) != shown_above)
    {
        writeln!(w, "  warning: {warning}")?;
    }
    Ok(())
}
