//! A run as Markdown: for a ticket, a wiki page or a pull request. Built
//! from the result alone, so a saved JSON file renders the same report as
//! the run that wrote it.

use crate::fmt::{bytes, count, duration_us};
use crate::lang::{tr, trf, Lang};
use crate::text::{end_in, model_in, SHOWN};
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
pub fn report(r: &RunResult, w: impl Write) -> io::Result<()> {
    report_in(r, w, Lang::En)
}

/// Writes the report in `lang`.
pub fn report_in(r: &RunResult, mut w: impl Write, lang: Lang) -> io::Result<()> {
    let s = &r.summary;
    let t = |en: &'static str| tr(lang, en);
    let (model, end) = (model_in(r, lang), end_in(r, lang));
    let (what, at) = crate::request_line(r, lang);
    writeln!(w, "# {what} {}\n", cell(&at))?;
    if r.end.partial {
        writeln!(
            w,
            "> **{}:** {}. {}\n",
            t("Partial result"),
            end,
            t("The figures cover what was done.")
        )?;
    }
    let first = [
        (
            "Shortfall",
            r.shortfall
                .as_ref()
                .map(|sf| crate::lang::shortfall(lang, sf)),
        ),
        (
            "Fell behind",
            r.behind.as_ref().map(|b| crate::lang::behind(lang, b)),
        ),
    ];
    for (label, text) in first {
        if let Some(text) = text {
            writeln!(w, "> **{}:** {}\n", t(label), cell(&text))?;
        }
    }
    writeln!(w, "- {} · {:.2} s ({})", model, s.duration_s, end)?;
    writeln!(
        w,
        "- {}",
        trf(
            lang,
            "started {} · yace {}",
            &[&r.started_at, &r.yace_version]
        )
    )?;
    if let Some(sw) = &r.server_software {
        writeln!(w, "- {}: `{}`", t("server"), cell(sw))?;
    }
    if r.tls.as_ref().is_some_and(|t| t.version.is_none()) {
        writeln!(w, "- TLS: no handshake completed")?;
    } else if let Some(t) = &r.tls {
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
        "- {}: {}",
        t("client"),
        trf(
            lang,
            "{} ({} CPUs, {} allowed), {} thread(s), {} CPU-s, busiest thread {}%{}",
            &[
                &cell(&e.hostname),
                &e.cpus,
                &e.cpus_allowed,
                &r.client.threads,
                &format!("{:.2}", r.client.cpu_s),
                &format!("{:.0}", r.client.busiest_thread * 100.0),
                &if r.client.saturated {
                    format!(" — **{}**", t("saturated"))
                } else {
                    String::new()
                }
            ]
        )
    )?;

    writeln!(w, "\n## {}\n", t("Summary"))?;
    writeln!(
        w,
        "| {} | {} | {} | {} | {} | {} | {} | {} |",
        t("requests"),
        t("responses"),
        t("errors"),
        t("non-2xx"),
        t("cancelled"),
        t("dropped"),
        t("retried"),
        t("responses/s")
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
        "\n{}",
        trf(
            lang,
            "Transfer: in {} ({}/s), out {}, bodies {}; {} connections opened.",
            &[
                &bytes(s.bytes_in as f64),
                &bytes(s.bytes_in_per_s),
                &bytes(s.bytes_out as f64),
                &bytes(s.body_bytes as f64),
                &count(s.connections_opened)
            ]
        )
    )?;

    writeln!(w, "\n## {}\n", t("Latency"))?;
    if s.latency.count == 0 {
        writeln!(w, "{}", t("No complete responses."))?;
    } else {
        if s.service.is_some() {
            writeln!(
                w,
                "{}\n",
                t("Latency counts from when each request was due (coordinated omission corrected); service time from when it was sent.")
            )?;
        } else {
            writeln!(
                w,
                "{}\n",
                t("Closed model: latency is service time. Each connection waits for its answer, so a server stall shows as fewer requests, not as latency (coordinated omission); an open-model run (`--rate`) at the measured throughput shows it.")
            )?;
        }
        let header: Vec<String> = SHOWN.iter().map(|p| format!("p{p}")).collect();
        writeln!(
            w,
            "| {} | {} | {} | {} | {} |",
            t("min"),
            t("mean"),
            t("stdev"),
            header.join(" | "),
            t("max")
        )?;
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
        writeln!(
            w,
            "\n| {} | {} | {} | p50 | p90 | p99 | {} |",
            t("phase"),
            t("min"),
            t("mean"),
            t("max")
        )?;
        writeln!(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")?;
        dist_row(&mut w, t("latency"), &s.latency)?;
        if let Some(d) = &s.service {
            dist_row(&mut w, t("service time"), d)?;
        }
        if let Some(d) = &s.lag {
            dist_row(&mut w, t("schedule lag"), d)?;
        }
        dist_row(&mut w, t("connect"), &s.connect)?;
        if let Some(d) = &s.tls {
            dist_row(&mut w, t("tls"), d)?;
        }
        dist_row(&mut w, t("wait (to first byte)"), &s.wait)?;
        dist_row(&mut w, t("processing"), &s.processing)?;
    }

    writeln!(w, "\n## {}\n", t("Responses and errors"))?;
    if !r.statuses.is_empty() {
        writeln!(w, "| {} | {} |", t("status"), t("responses"))?;
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
        writeln!(w, "{}", t("No errors."))?;
    } else {
        failures.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
        writeln!(
            w,
            "| {} | {} | {} |",
            t("error"),
            t("requests"),
            t("likely cause")
        )?;
        writeln!(w, "| --- | ---: | --- |")?;
        for (o, n) in failures {
            writeln!(
                w,
                "| `{}` | {} | {} |",
                o.name(),
                count(*n),
                cell(crate::lang::explain(lang, *o))
            )?;
        }
    }

    if !r.steps.is_empty() {
        writeln!(w, "\n## {}\n", t("Steps"))?;
        writeln!(
            w,
            "| {} | {} | {} | {} | p50 | p99 | {} |",
            t("step"),
            t("requests"),
            t("errors"),
            t("non-2xx"),
            t("max")
        )?;
        writeln!(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")?;
        for st in &r.steps {
            // A step that never completed a request has no latency: a dash,
            // not 0µs.
            let us = |v: Option<f64>| match (st.latency.count, v) {
                (0, _) | (_, None) => "—".to_string(),
                (_, Some(v)) => duration_us(v),
            };
            writeln!(
                w,
                "| {} | {} | {} | {} | {} | {} | {} |",
                cell(&st.name),
                count(st.requests),
                count(st.errors),
                count(st.non_2xx),
                us(st.latency.at(50.0)),
                us(st.latency.at(99.0)),
                us(Some(st.latency.max_us))
            )?;
        }
    }
    if !r.checks.is_empty() {
        writeln!(w, "\n## {}\n", t("Checks"))?;
        writeln!(
            w,
            "| | {} | {} | {} | {} |",
            t("step"),
            t("check"),
            t("passed"),
            t("failed")
        )?;
        writeln!(w, "| --- | --- | --- | ---: | ---: |")?;
        for c in &r.checks {
            writeln!(
                w,
                "| {} | {} | {} | {} | {} |",
                match (c.passed, c.failed) {
                    (0, 0) => t("not run").to_string(),
                    (_, 0) => t("ok     ").trim().to_string(),
                    _ => format!("**{}**", t("FAIL")),
                },
                cell(&c.step),
                cell(&c.name),
                count(c.passed),
                count(c.failed)
            )?;
        }
    }
    if !r.thresholds.is_empty() {
        writeln!(w, "\n## {}\n", t("Thresholds"))?;
        writeln!(w, "| | {} | {} |", t("threshold"), t("actual"))?;
        writeln!(w, "| --- | --- | ---: |")?;
        for th in &r.thresholds {
            let scope = th
                .step
                .as_ref()
                .map(|s| trf(lang, " (step {})", &[&cell(s)]))
                .unwrap_or_default();
            writeln!(
                w,
                "| {} | `{}`{scope} | {} |",
                if th.passed {
                    t("pass").to_string()
                } else {
                    format!("**{}**", t("FAIL"))
                },
                cell(&th.expr),
                crate::actual(th.actual, stats::threshold::actual_unit(th))
            )?;
        }
    }
    if !r.warnings.is_empty() {
        writeln!(w, "\n## {}\n", t("Warnings"))?;
        for x in &r.warnings {
            let x = match (&r.shortfall, &r.behind) {
                (Some(sf), _) if *x == sf.message => crate::lang::shortfall(lang, sf),
                (_, Some(b)) if *x == b.message => crate::lang::behind(lang, b),
                _ => crate::lang::warning(lang, x),
            };
            writeln!(w, "- {}", cell(&x))?;
        }
    }
    if let Some(m) = &r.monitor {
        writeln!(w, "\n## {}\n", t("Server"))?;
        for line in crate::monitor::figures(m, lang) {
            writeln!(w, "- {}", cell(&line))?;
        }
        for line in crate::monitor::asides(m, lang) {
            writeln!(w, "- {}", cell(&line))?;
        }
        for d in &m.diagnoses {
            let (message, fix) = crate::monitor::diagnosis(d, lang);
            let mark = if d.severity == "problem" {
                format!("**{}**", t("Problem"))
            } else {
                t("Note").to_string()
            };
            writeln!(
                w,
                "- {mark}: {} {}: {}",
                cell(&message),
                t("fix"),
                cell(&fix)
            )?;
        }
        for n in &m.notes {
            writeln!(w, "- {}: {}", t("Note"), cell(n))?;
        }
        writeln!(w, "\n{}:\n", t("Monitors"))?;
        for line in crate::monitor::sources(m, lang) {
            writeln!(w, "- {}", cell(&line))?;
        }
    }
    if !r.markers.is_empty() {
        writeln!(w, "\n## {}\n", t("Markers"))?;
        for m in &r.markers {
            let note = if m.note.is_empty() {
                t("(no note)").to_string()
            } else {
                cell(&m.note)
            };
            writeln!(w, "- {:.1} s: {note}", m.at_s)?;
        }
    }
    if !r.series.is_empty() {
        writeln!(w, "\n## {}\n", t("Per second"))?;
        writeln!(
            w,
            "| {} | {} | {} | {} | p50 | p99 | {} |",
            t("second"),
            t("responses"),
            t("errors"),
            t("non-2xx"),
            t("max")
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
