//! A run as Markdown: for a ticket, a wiki page or a pull request. Built
//! from the result alone, so a saved JSON file renders the same report as
//! the run that wrote it.

use crate::fmt::{bytes, count, duration_us};
use crate::text::{end, model, SHOWN};
use stats::hist::Distribution;
use stats::RunResult;
use std::io::{self, Write};

/// Characters that would end a table cell or start markup.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn dist_row(w: &mut impl Write, name: &str, d: &Distribution) -> io::Result<()> {
    if d.count == 0 {
        return Ok(());
    }
    let at = |p: f64| duration_us(d.at(p).unwrap_or(0.0));
    writeln!(
        w,
        "| {name} | {} | {} | {} | {} | {} | {} |",
        duration_us(d.min_us),
        duration_us(d.mean_us),
        at(50.0),
        at(90.0),
        at(99.0),
        duration_us(d.max_us)
    )
}

/// Writes the report.
pub fn report(r: &RunResult, mut w: impl Write) -> io::Result<()> {
    let s = &r.summary;
    writeln!(
        w,
        "# {} {}\n",
        r.plan.request.method,
        cell(&r.plan.target.url)
    )?;
    if r.end.partial {
        writeln!(
            w,
            "> **Partial result:** {}. The figures cover what was done.\n",
            end(r)
        )?;
    }
    if let Some(sf) = &r.shortfall {
        writeln!(w, "> **Shortfall:** {}\n", cell(&sf.message))?;
    }
    writeln!(w, "- {} · {:.2} s ({})", model(r), s.duration_s, end(r))?;
    writeln!(w, "- started {} · yace {}", r.started_at, r.yace_version)?;
    if let Some(sw) = &r.server_software {
        writeln!(w, "- server: `{}`", cell(sw))?;
    }
    if let Some(t) = &r.tls {
        writeln!(
            w,
            "- TLS {} {}, certificate {}",
            t.version.as_deref().unwrap_or("(no handshake)"),
            t.cipher.as_deref().unwrap_or(""),
            if t.verified {
                "verified"
            } else {
                "**NOT verified** (--insecure)"
            }
        )?;
    }
    if let Some(h) = &r.http2 {
        write!(w, "- HTTP/2, {} streams per connection", h.streams)?;
        if let Some(m) = h.server_max_streams {
            write!(w, " (server allows {m})")?;
        }
        writeln!(w, "; {} GOAWAY", count(h.goaways))?;
    }
    let e = &r.environment;
    writeln!(
        w,
        "- client: {} ({} CPUs, {} allowed), {} thread(s), {:.2} CPU-s, busiest thread {:.0}%{}",
        cell(&e.hostname),
        e.cpus,
        e.cpus_allowed,
        r.client.threads,
        r.client.cpu_s,
        r.client.busiest_thread * 100.0,
        if r.client.saturated {
            " — **saturated**"
        } else {
            ""
        }
    )?;

    writeln!(w, "\n## Summary\n")?;
    writeln!(
        w,
        "| requests | responses | errors | non-2xx | cancelled | dropped | retried | responses/s |"
    )?;
    writeln!(
        w,
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    )?;
    writeln!(
        w,
        "| {} | {} | {} | {} | {} | {} | {} | {:.1} |",
        count(s.requests),
        count(s.responses),
        count(s.errors),
        count(s.non_2xx),
        count(s.cancelled),
        count(s.dropped),
        count(s.retries),
        s.rps
    )?;
    writeln!(
        w,
        "\nTransfer: in {} ({}/s), out {}, bodies {}; {} connections opened.",
        bytes(s.bytes_in as f64),
        bytes(s.bytes_in_per_s),
        bytes(s.bytes_out as f64),
        bytes(s.body_bytes as f64),
        count(s.connections_opened)
    )?;

    writeln!(w, "\n## Latency\n")?;
    if s.latency.count == 0 {
        writeln!(w, "No complete responses.")?;
    } else {
        if s.service.is_some() {
            writeln!(
                w,
                "Latency counts from when each request was due (coordinated omission corrected); \
                 service time from when it was sent.\n"
            )?;
        } else {
            writeln!(
                w,
                "Closed model: latency is service time. Each connection waits for its answer, so \
                 a server stall shows as fewer requests, not as latency (coordinated omission); \
                 an open-model run (`--rate`) at the measured throughput shows it.\n"
            )?;
        }
        let header: Vec<String> = SHOWN.iter().map(|p| format!("p{p}")).collect();
        writeln!(w, "| min | mean | stdev | {} | max |", header.join(" | "))?;
        writeln!(w, "|{}", " ---: |".repeat(SHOWN.len() + 4))?;
        let l = &s.latency;
        let ps: Vec<String> = SHOWN
            .iter()
            .map(|&p| duration_us(l.at(p).unwrap_or(0.0)))
            .collect();
        writeln!(
            w,
            "| {} | {} | {} | {} | {} |",
            duration_us(l.min_us),
            duration_us(l.mean_us),
            duration_us(l.stdev_us),
            ps.join(" | "),
            duration_us(l.max_us)
        )?;
        writeln!(w, "\n| phase | min | mean | p50 | p90 | p99 | max |")?;
        writeln!(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")?;
        dist_row(&mut w, "latency", &s.latency)?;
        if let Some(d) = &s.service {
            dist_row(&mut w, "service time", d)?;
        }
        if let Some(d) = &s.lag {
            dist_row(&mut w, "schedule lag", d)?;
        }
        dist_row(&mut w, "connect", &s.connect)?;
        if let Some(d) = &s.tls {
            dist_row(&mut w, "tls", d)?;
        }
        dist_row(&mut w, "wait (to first byte)", &s.wait)?;
        dist_row(&mut w, "processing", &s.processing)?;
    }

    writeln!(w, "\n## Responses and errors\n")?;
    if !r.statuses.is_empty() {
        writeln!(w, "| status | responses |")?;
        writeln!(w, "| ---: | ---: |")?;
        for (code, n) in &r.statuses {
            writeln!(w, "| {code} | {} |", count(*n))?;
        }
        writeln!(w)?;
    }
    let mut failures: Vec<_> = r
        .outcomes
        .iter()
        .filter(|(o, n)| o.is_error() && **n > 0)
        .collect();
    if failures.is_empty() {
        writeln!(w, "No errors.")?;
    } else {
        failures.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
        writeln!(w, "| error | requests | likely cause |")?;
        writeln!(w, "| --- | ---: | --- |")?;
        for (o, n) in failures {
            writeln!(
                w,
                "| `{}` | {} | {} |",
                o.name(),
                count(*n),
                cell(o.explain())
            )?;
        }
    }

    if !r.steps.is_empty() {
        writeln!(w, "\n## Steps\n")?;
        writeln!(
            w,
            "| step | requests | errors | non-2xx | p50 | p99 | max |"
        )?;
        writeln!(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")?;
        for st in &r.steps {
            writeln!(
                w,
                "| {} | {} | {} | {} | {} | {} | {} |",
                cell(&st.name),
                count(st.requests),
                count(st.errors),
                count(st.non_2xx),
                duration_us(st.latency.at(50.0).unwrap_or(0.0)),
                duration_us(st.latency.at(99.0).unwrap_or(0.0)),
                duration_us(st.latency.max_us)
            )?;
        }
    }
    if !r.checks.is_empty() {
        writeln!(w, "\n## Checks\n")?;
        writeln!(w, "| | step | check | passed | failed |")?;
        writeln!(w, "| --- | --- | --- | ---: | ---: |")?;
        for c in &r.checks {
            writeln!(
                w,
                "| {} | {} | {} | {} | {} |",
                match (c.passed, c.failed) {
                    (0, 0) => "not run",
                    (_, 0) => "ok",
                    _ => "**FAIL**",
                },
                cell(&c.step),
                cell(&c.name),
                count(c.passed),
                count(c.failed)
            )?;
        }
    }
    if !r.thresholds.is_empty() {
        writeln!(w, "\n## Thresholds\n")?;
        writeln!(w, "| | threshold | actual |")?;
        writeln!(w, "| --- | --- | ---: |")?;
        for t in &r.thresholds {
            let scope = t
                .step
                .as_ref()
                .map(|s| format!(" (step {})", cell(s)))
                .unwrap_or_default();
            writeln!(
                w,
                "| {} | `{}`{scope} | {} |",
                if t.passed { "pass" } else { "**FAIL**" },
                cell(&t.expr),
                crate::actual(t.actual, stats::threshold::actual_unit(t))
            )?;
        }
    }
    if !r.warnings.is_empty() {
        writeln!(w, "\n## Warnings\n")?;
        for x in &r.warnings {
            writeln!(w, "- {}", cell(x))?;
        }
    }
    if !r.series.is_empty() {
        writeln!(w, "\n## Per second\n")?;
        writeln!(
            w,
            "| second | responses | errors | non-2xx | p50 | p99 | max |"
        )?;
        writeln!(w, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")?;
        for row in &r.series {
            writeln!(
                w,
                "| {} | {} | {} | {} | {} | {} | {} |",
                row.second,
                count(row.responses),
                count(row.errors),
                count(row.non_2xx),
                duration_us(row.latency_p50_us),
                duration_us(row.latency_p99_us),
                duration_us(row.latency_max_us)
            )?;
        }
    }
    Ok(())
}
