//! The terminal summary of a run.

use crate::fmt::{bytes, count, duration_us};
use crate::lang::{tr, trf, Lang};
use plan::Load;
use sample::Outcome;
use stats::{EndReason, RunResult};
use std::io::{self, Write};

/// Percentiles shown in the summary (the JSON has more).
pub(crate) const SHOWN: [f64; 7] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99];

pub(crate) fn model(r: &RunResult) -> String {
    model_in(r, Lang::En)
}

/// The load model in words, in `lang`; a shard's says which it is and
/// its part of the plan.
pub(crate) fn model_in(r: &RunResult, lang: Lang) -> String {
    format!(
        "{}{}",
        whole_model(r, lang),
        shard_part(&r.plan, lang).unwrap_or_default()
    )
}

/// A shard's run in words, to follow the plan's model: " · shard 0/3, its
/// part: up to 100/s, at most 10 in flight"; None for the whole plan.
pub fn shard_part(plan: &plan::Plan, lang: Lang) -> Option<String> {
    let part = plan.part();
    if !part.is_part() {
        return None;
    }
    let streams = plan.http2.map_or(1, |h| u64::from(h.streams));
    let share = match &plan.load {
        Load::Closed { connections } => {
            trf(lang, "{} connections", &[&count(part.share(*connections))])
        }
        Load::Open { max_inflight, .. } => {
            let peak = plan.load.peak_rate().unwrap_or(0.0);
            trf(
                lang,
                "up to {}/s, at most {} in flight",
                &[
                    &count(part.rate_share(peak).round() as u64),
                    &count(part.share(*max_inflight) * streams),
                ],
            )
        }
        Load::Users { .. } => trf(
            lang,
            "up to {} users",
            &[&count(part.share(plan.load.max_connections()))],
        ),
    };
    Some(trf(lang, " · shard {}, its part: {}", &[&part, &share]))
}

/// The whole plan's load model in words, in `lang`.
fn whole_model(r: &RunResult, lang: Lang) -> String {
    let p = &r.plan;
    let conn = tr(
        lang,
        if p.keepalive {
            "keep-alive"
        } else {
            "new connection per request"
        },
    );
    let threads = threads(r.client.threads, lang);
    // HTTP/2: each connection carries `streams` requests at once.
    let streams = p.http2.map_or(1, |h| u64::from(h.streams));
    let on = |n: u64| {
        if streams > 1 {
            trf(lang, "{} connections × {} streams", &[&count(n), &streams])
        } else {
            trf(lang, "{} connections", &[&count(n)])
        }
    };
    match &p.load {
        Load::Closed { connections } => trf(
            lang,
            "closed model: {}, {}, {}",
            &[&on(*connections), &threads, &conn],
        ),
        Load::Open { max_inflight, .. } => {
            let peak = p.load.peak_rate().unwrap_or(0.0);
            let most = if streams > 1 {
                trf(
                    lang,
                    "{} in flight on {}",
                    &[&count(max_inflight * streams), &on(*max_inflight)],
                )
            } else {
                trf(lang, "{} in flight", &[max_inflight])
            };
            trf(
                lang,
                "open model: up to {}/s, at most {}, {}, {}",
                &[&peak, &most, &threads, &conn],
            )
        }
        Load::Users { pacing, think, .. } => {
            let mut s = trf(
                lang,
                "virtual users: up to {}",
                &[&p.load.max_connections()],
            );
            if let Some(pc) = pacing {
                s.push_str(&trf(lang, ", an iteration every {}", &[&format!("{pc:?}")]));
            }
            if *think != plan::Think::None {
                s.push_str(tr(lang, ", think time"));
            }
            format!("{s}, {threads}, {conn}")
        }
    }
}

fn threads(n: usize, lang: Lang) -> String {
    if n == 1 {
        tr(lang, "1 thread").into()
    } else {
        trf(lang, "{} threads", &[&n])
    }
}

pub(crate) fn end(r: &RunResult) -> &'static str {
    end_in(r, Lang::En)
}

/// How the run ended, in `lang`.
pub(crate) fn end_in(r: &RunResult, lang: Lang) -> &'static str {
    tr(
        lang,
        match r.end.reason {
            EndReason::Completed => "all requests done",
            EndReason::Duration => "duration reached",
            EndReason::Interrupted => "INTERRUPTED by Ctrl-C: partial result",
            EndReason::Terminated => "TERMINATED by SIGTERM: partial result",
        },
    )
}

/// Writes the human summary of `r`.
pub fn summary(r: &RunResult, w: impl Write) -> io::Result<()> {
    summary_with(r, w, false)
}

/// The summary, with `graphs`: a responses/s sparkline and a latency
/// histogram under the latency figures (for a terminal).
pub fn summary_with(r: &RunResult, w: impl Write, graphs: bool) -> io::Result<()> {
    summary_in(r, w, graphs, Lang::En)
}

/// The summary in `lang`.
pub fn summary_in(r: &RunResult, mut w: impl Write, graphs: bool, lang: Lang) -> io::Result<()> {
    let s = &r.summary;
    let l10n = |en: &'static str, args: &[&dyn std::fmt::Display]| trf(lang, en, args);
    let (what, at) = crate::request_line(r, lang);
    writeln!(w, "{what} {at}")?;
    writeln!(
        w,
        "  {}  ·  {:.2}s ({})",
        model_in(r, lang),
        s.duration_s,
        end_in(r, lang)
    )?;
    if let Some(sw) = &r.server_software {
        writeln!(w, "{}", l10n("  server: {}", &[sw]))?;
    }
    // No handshake completed: no certificate was checked, let alone verified.
    if let Some(t) = r.tls.as_ref().filter(|t| t.version.is_none()) {
        writeln!(
            w,
            "{}",
            l10n(
                "  TLS: no handshake completed ({} full, {} resumed)",
                &[&count(t.full_handshakes), &count(t.resumed_handshakes)]
            )
        )?;
    } else if let Some(t) = &r.tls {
        writeln!(
            w,
            "{}",
            l10n(
                "  TLS {} {}, certificate {}; {} full and {} resumed handshakes",
                &[
                    &t.version.as_deref().unwrap_or(tr(lang, "(no handshake)")),
                    &t.cipher.as_deref().unwrap_or(""),
                    &tr(
                        lang,
                        if t.verified {
                            "verified"
                        } else {
                            "NOT VERIFIED (--insecure)"
                        }
                    ),
                    &count(t.full_handshakes),
                    &count(t.resumed_handshakes)
                ]
            )
        )?;
    }
    if let Some(f) = r.fcgi.as_ref().filter(|f| f.stderr_responses > 0) {
        writeln!(
            w,
            "{}",
            l10n(
                "  FastCGI stderr on {} responses ({} bytes), first lines:",
                &[&count(f.stderr_responses), &count(f.stderr_bytes)]
            )
        )?;
        for line in &f.stderr_lines {
            writeln!(w, "    {line}")?;
        }
    }
    if let Some(h) = &r.http2 {
        write!(
            w,
            "{}",
            l10n("  HTTP/2, {} streams per connection", &[&h.streams])
        )?;
        if let Some(m) = h.server_max_streams {
            write!(w, "{}", l10n(" (server allows {})", &[&m]))?;
        }
        if h.goaways > 0 {
            write!(
                w,
                "{}",
                l10n("; {} connections retired by GOAWAY", &[&count(h.goaways)])
            )?;
        }
        writeln!(w)?;
    }
    // A load that was not offered is said first: the figures below measure
    // a different load than the one asked for. So is a server that did not
    // keep up: the latency below grew with the run's length, not the load.
    let first = [
        (
            "SHORTFALL",
            r.shortfall
                .as_ref()
                .map(|sf| crate::lang::shortfall(lang, sf)),
        ),
        (
            "BEHIND",
            r.behind.as_ref().map(|b| crate::lang::behind(lang, b)),
        ),
    ];
    for (label, text) in first {
        let Some(text) = text else { continue };
        writeln!(w)?;
        for (i, line) in crate::fmt::wrap(&text, 64).iter().enumerate() {
            let label = if i == 0 { tr(lang, label) } else { "" };
            writeln!(w, "  {label:<10}  {line}")?;
        }
    }
    writeln!(w)?;
    writeln!(
        w,
        "{}",
        l10n(
            "  Requests    {} started   {} responses   {} responses/s",
            &[
                &count(s.requests),
                &count(s.responses),
                &format!("{:.1}", s.rps)
            ]
        )
    )?;
    writeln!(
        w,
        "{}",
        l10n(
            "              {} errors   {} non-2xx   {} cancelled at end   {} retried",
            &[
                &count(s.errors),
                &count(s.non_2xx),
                &count(s.cancelled),
                &count(s.retries)
            ]
        )
    )?;
    // Paced users: every planned iteration accounted for, and who waited.
    if let (Some(planned), Some(later), Some(started), Some(missed)) =
        (s.planned, s.not_yet_due, s.started, s.missed)
    {
        writeln!(
            w,
            "{}",
            l10n(
                "  Planned     {} iterations = {} started + {} missed + {} not yet due at the end",
                &[
                    &count(planned),
                    &count(started),
                    &count(missed),
                    &count(later)
                ]
            )
        )?;
        if let (Some(users), Some(never)) = (s.users, s.users_never_served) {
            if never > 0 {
                writeln!(
                    w,
                    "{}",
                    l10n(
                        "  Users       {} started, {} never answered (waited the whole run)",
                        &[&count(users), &count(never)]
                    )
                )?;
            }
        }
    } else if let (Some(planned), Some(later)) = (s.planned, s.not_yet_due) {
        // Every planned request accounted for, when some were not sent.
        if s.dropped > 0 || later > 0 {
            writeln!(
                w,
                "{}",
                l10n(
                    "  Planned     {} = {} started + {} dropped + {} not yet due at the end",
                    &[
                        &count(planned),
                        &count(s.requests),
                        &count(s.dropped),
                        &count(later)
                    ]
                )
            )?;
        }
    }
    writeln!(
        w,
        "{}",
        l10n(
            "  Transfer    in {} ({}/s)   out {}   bodies {}",
            &[
                &bytes(s.bytes_in as f64),
                &bytes(s.bytes_in_per_s),
                &bytes(s.bytes_out as f64),
                &bytes(s.body_bytes as f64)
            ]
        )
    )?;
    let b = &s.body_length;
    if let Some(first) = b.first {
        if b.varied > 0 {
            writeln!(
                w,
                "{}",
                if b.varied == 1 {
                    l10n(
                        "  Body        {} bytes first; length varied in 1 response ({}–{} bytes): information, not failure",
                        &[&first, &b.min, &b.max],
                    )
                } else {
                    l10n(
                        "  Body        {} bytes first; length varied in {} responses ({}–{} bytes): information, not failure",
                        &[&first, &count(b.varied), &b.min, &b.max],
                    )
                }
            )?;
        } else {
            writeln!(
                w,
                "{}",
                l10n("  Body        {} bytes, every response", &[&first])
            )?;
        }
    }
    writeln!(w)?;
    let l = &s.latency;
    if l.count > 0 {
        let what = tr(
            lang,
            if s.service.is_some() {
                "Latency (from intended send time; coordinated omission corrected)"
            } else {
                "Latency (service time, closed model: a stall shows as fewer requests; see --rate)"
            },
        );
        writeln!(w, "  {what}")?;
        writeln!(
            w,
            "{}",
            l10n(
                "    min {}   mean {}   stdev {}   max {}",
                &[
                    &duration_us(l.min_us),
                    &duration_us(l.mean_us),
                    &duration_us(l.stdev_us),
                    &duration_us(l.max_us)
                ]
            )
        )?;
        let ps: Vec<String> = SHOWN
            .iter()
            .filter_map(|&p| l.at(p).map(|v| format!("p{p} {}", duration_us(v))))
            .collect();
        writeln!(w, "    {}", ps.join("   "))?;
        if let Some(sv) = &s.service {
            writeln!(
                w,
                "{}",
                l10n(
                    "  Service time (from actual send)   mean {}   p50 {}   p99 {}   max {}",
                    &[
                        &duration_us(sv.mean_us),
                        &duration_us(sv.at(50.0).unwrap_or(0.0)),
                        &duration_us(sv.at(99.0).unwrap_or(0.0)),
                        &duration_us(sv.max_us)
                    ]
                )
            )?;
        }
        if let Some(lag) = &s.lag {
            writeln!(
                w,
                "{}{}",
                l10n(
                    "  Schedule lag (start − intended)   mean {}   p99 {}   max {}",
                    &[
                        &duration_us(lag.mean_us),
                        &duration_us(lag.at(99.0).unwrap_or(0.0)),
                        &duration_us(lag.max_us)
                    ]
                ),
                if s.dropped > 0 {
                    l10n("   dropped {}", &[&count(s.dropped)])
                } else {
                    String::new()
                }
            )?;
        }
        writeln!(
            w,
            "{}",
            l10n(
                "  Phases      connect {} / {}{}   wait (to first byte) {} / {}   (mean / p99 per request)",
                &[
                    &duration_us(s.connect.mean_us),
                    &duration_us(s.connect.at(99.0).unwrap_or(0.0)),
                    &s.tls.as_ref().map_or(String::new(), |t| format!(
                        "   tls {} / {}",
                        duration_us(t.mean_us),
                        duration_us(t.at(99.0).unwrap_or(0.0))
                    )),
                    &duration_us(s.wait.mean_us),
                    &duration_us(s.wait.at(99.0).unwrap_or(0.0)),
                ]
            )
        )?;
        if s.handshake.count > 0 {
            writeln!(
                w,
                "{}",
                l10n(
                    "  Connections {} opened, TCP handshake mean {} / p99 {}",
                    &[
                        &count(s.connections_opened),
                        &duration_us(s.handshake.mean_us),
                        &duration_us(s.handshake.at(99.0).unwrap_or(0.0)),
                    ]
                )
            )?;
        }
    } else {
        writeln!(w, "{}", tr(lang, "  Latency     no complete responses"))?;
    }
    if graphs {
        crate::graphs::write_in(r, &mut w, lang)?;
    }
    writeln!(w)?;
    if !r.statuses.is_empty() {
        let st: Vec<String> = r
            .statuses
            .iter()
            .map(|(code, n)| format!("{code}: {}", count(*n)))
            .collect();
        writeln!(w, "{}", l10n("  Status      {}", &[&st.join("   ")]))?;
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
            "{}",
            l10n(
                "  Checks      {} of {} failed ({}%)",
                &[
                    &count(checks_failed),
                    &count(checks_run),
                    &format!("{:.2}", checks_failed as f64 * 100.0 / checks_run as f64)
                ]
            )
        )?;
    }
    if failures.is_empty() {
        writeln!(w, "{}", tr(lang, "  Errors      none"))?;
    } else {
        writeln!(w, "{}", tr(lang, "  Errors"))?;
        let mut sorted = failures;
        sorted.sort_by_key(|f| std::cmp::Reverse(f.1));
        for (o, n) in sorted {
            writeln!(
                w,
                "    {:<24} {:>10}   {}",
                o.name(),
                count(n),
                crate::lang::explain(lang, o)
            )?;
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
            "{}",
            l10n(
                "  Lenient     {} responses: {}; read, then their connections closed",
                &[&count(*n), &l.explain()]
            )
        )?;
    }
    if !r.steps.is_empty() {
        writeln!(
            w,
            "{}{:<20} {:>10} {:>8} {:>8} {:>10} {:>10}",
            tr(lang, "  Steps       "),
            "",
            tr(lang, "requests"),
            tr(lang, "errors"),
            tr(lang, "non-2xx"),
            "p50",
            "p99"
        )?;
        for st in &r.steps {
            // A step that never completed a request has no latency: a dash,
            // not 0µs.
            let us = |v: Option<f64>| match (st.latency.count, v) {
                (0, _) | (_, None) => "—".to_string(),
                (_, Some(v)) => duration_us(v),
            };
            writeln!(
                w,
                "              {:<20} {:>10} {:>8} {:>8} {:>10} {:>10}",
                st.name,
                count(st.requests),
                count(st.errors),
                count(st.non_2xx),
                us(st.latency.at(50.0)),
                us(st.latency.at(99.0)),
            )?;
        }
    }
    if !r.checks.is_empty() {
        writeln!(w, "{}", tr(lang, "  Checks"))?;
        for c in &r.checks {
            // A check that never ran has not passed.
            let mark = tr(
                lang,
                match (c.passed, c.failed) {
                    (0, 0) => "not run",
                    (_, 0) => "ok     ",
                    _ => "FAIL   ",
                },
            );
            writeln!(
                w,
                "{}",
                l10n(
                    "    {} {} · {}   {} passed, {} failed",
                    &[&mark, &c.step, &c.name, &count(c.passed), &count(c.failed)]
                )
            )?;
        }
    }
    if !r.thresholds.is_empty() {
        writeln!(w, "{}", tr(lang, "  Thresholds"))?;
        for t in &r.thresholds {
            let scope = t
                .step
                .as_ref()
                .map(|s| l10n(" (step {})", &[s]))
                .unwrap_or_default();
            writeln!(
                w,
                "{}",
                l10n(
                    "    {} {}{}   actual {}",
                    &[
                        &tr(lang, if t.passed { "pass" } else { "FAIL" }),
                        &t.expr,
                        &scope,
                        &crate::actual(t.actual, stats::threshold::actual_unit(t))
                    ]
                )
            )?;
        }
    }
    let c = &r.client;
    writeln!(
        w,
        "{}",
        l10n(
            "  Client      {}, {} CPU-s, busiest thread {}% busy{}",
            &[
                &threads(c.threads, lang),
                &format!("{:.2}", c.cpu_s),
                &format!("{:.0}", c.busiest_thread * 100.0),
                &tr(
                    lang,
                    if c.saturated {
                        " (SATURATED)"
                    } else {
                        " (not the bottleneck)"
                    }
                )
            ]
        )
    )?;
    // What watching the run cost the client (the live view, the page, the
    // exporters), beside the workers' CPU.
    if !c.extras_cpu_s.is_empty() {
        let parts: Vec<String> = c
            .extras_cpu_s
            .iter()
            .map(|(name, cpu_s)| {
                let share = if c.cpu_s > 0.0 {
                    let pct = format!("{:.1}", 100.0 * cpu_s / c.cpu_s);
                    l10n(" ({}% of the workers' CPU)", &[&pct])
                } else {
                    String::new()
                };
                format!("{} {cpu_s:.3} CPU-s{share}", tr(lang, extra_name(name)))
            })
            .collect();
        writeln!(
            w,
            "{}",
            l10n("              watching cost {}", &[&parts.join(", ")])
        )?;
    }
    if let Some(m) = &r.monitor {
        server(m, s.duration_s, &mut w, lang)?;
    }
    // Moments marked during the run (`m` in the live view).
    for (i, m) in r.markers.iter().enumerate() {
        let note = if m.note.is_empty() {
            tr(lang, "(no note)")
        } else {
            m.note.as_str()
        };
        let item = format!("{:>7.1}s  {note}", m.at_s);
        if i == 0 {
            writeln!(w, "{}", l10n("  Markers     {}", &[&item]))?;
        } else {
            writeln!(w, "              {item}")?;
        }
    }
    let shown_above = [
        r.shortfall.as_ref().map(|s| s.message.as_str()),
        r.behind.as_ref().map(|b| b.message.as_str()),
    ];
    for warning in r
        .warnings
        .iter()
        .filter(|w| !shown_above.contains(&Some(w.as_str())))
    {
        writeln!(
            w,
            "{}",
            l10n("  warning: {}", &[&crate::lang::warning(lang, warning)])
        )?;
    }
    Ok(())
}

/// The server's side (`--monitor`): figures, sources, diagnoses with fixes.
fn server(
    m: &stats::monitor::Monitoring,
    duration_s: f64,
    w: &mut impl Write,
    lang: Lang,
) -> io::Result<()> {
    let pad = "              ";
    for (i, line) in crate::monitor::figures(m, lang).iter().enumerate() {
        if i == 0 {
            writeln!(w, "{}", trf(lang, "  Server      {}", &[line]))?;
        } else {
            writeln!(w, "{pad}{line}")?;
        }
    }
    for (i, line) in crate::monitor::sources(m, lang).iter().enumerate() {
        if i == 0 {
            writeln!(w, "{}", trf(lang, "  Monitors    {}", &[line]))?;
        } else {
            writeln!(w, "{pad}{line}")?;
        }
    }
    if let Some(c) = crate::monitor::cost(m, duration_s, lang) {
        writeln!(w, "{pad}{c}")?;
    }
    for n in &m.notes {
        writeln!(w, "{}", trf(lang, "  note        {}", &[n]))?;
    }
    for d in &m.diagnoses {
        let (message, fix) = crate::monitor::diagnosis(d, lang);
        let head = if d.severity == "problem" {
            "  PROBLEM     {}"
        } else {
            "  note        {}"
        };
        writeln!(w, "{}", trf(lang, head, &[&message]))?;
        writeln!(w, "{}", trf(lang, "              fix: {}", &[&fix]))?;
    }
    for line in crate::monitor::asides(m, lang) {
        writeln!(w, "{pad}{line}")?;
    }
    Ok(())
}

/// An extra's name in `client.extras_cpu_s`, as the summary says it.
fn extra_name(key: &str) -> &'static str {
    match key {
        "live_view" => "live view",
        "live_page" => "live page",
        "exporters" => "metrics exporters",
        _ => "other",
    }
}
