//! The HTML report: one self-contained page, built from results alone.
//!
//! It opens offline, from disk or an e-mail attachment: the chart library
//! (uPlot, vendored under `assets/uplot`), the page's own script and styles
//! are inlined, and nothing is ever fetched. Every figure a chart draws is
//! also in a table behind its "show data" toggle, so the page reads with
//! scripts off and prints on A4. The whole result is embedded
//! ([`embed`]), so the page can be read back as a result.

mod data;
pub mod embed;

use crate::compare;
use crate::fmt::{bytes, count, duration_us};
use crate::text::{end, model, SHOWN};
use data::{Chart, Kind};
use stats::hist::Distribution;
use stats::RunResult;
use std::io::{self, Write};

const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
const PAGE_JS: &str = include_str!("../../assets/report.js");
const PAGE_CSS: &str = include_str!("../../assets/report.css");

/// Text made safe for HTML content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The inverse of [`esc`].
pub(crate) fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// JSON that cannot end the `<script>` element holding it.
fn script_json(v: &serde_json::Value) -> String {
    v.to_string()
        .replace("</", "<\\/")
        .replace("<!--", "<\\!--")
}

/// Writes the report of one run.
pub fn report(r: &RunResult, w: impl Write) -> io::Result<()> {
    page(&[(String::new(), r.clone())], w)
}

/// Writes the report of one run, or of several overlaid (each labelled,
/// usually by its file name) with their differences to the first.
pub fn page(runs: &[(String, RunResult)], mut w: impl Write) -> io::Result<()> {
    let Some((_, first)) = runs.first() else {
        return Ok(());
    };
    let single = runs.len() == 1;
    let title = if single {
        format!(
            "{} {} — yace report",
            first.plan.request.method, first.plan.target.url
        )
    } else {
        format!("Comparing {} runs — yace report", runs.len())
    };
    write!(
        w,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"yace {}\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n\
         <title>{}</title>\n<style>\n{UPLOT_CSS}\n{PAGE_CSS}\n</style>\n</head>\n<body>\n<main>\n",
        esc(&first.yace_version),
        esc(&title)
    )?;
    if single {
        header(&mut w, first)?;
    } else {
        compare_header(&mut w, runs)?;
    }

    // Charts, each with its data as a table.
    let xs = data::spectrum_xs(false);
    let table_xs = data::spectrum_xs(true);
    let mut charts: Vec<(Chart, Chart)> = data::time_charts(runs, data::MAX_POINTS)
        .into_iter()
        .zip(data::time_charts(runs, data::TABLE_ROWS))
        .collect();
    if let Some(c) = data::spectrum_chart(runs, &xs) {
        let t = data::spectrum_chart(runs, &table_xs).unwrap_or_else(|| c.clone());
        charts.insert(charts.len().min(2), (c, t));
    }
    if let Some(c) = data::histogram_chart(runs) {
        charts.insert(charts.len().min(3), (c.clone(), c));
    }
    if single {
        if let Some(c) = data::phases_chart(first, &xs) {
            let t = data::phases_chart(first, &table_xs).unwrap_or_else(|| c.clone());
            charts.insert(charts.len().min(4), (c, t));
        }
    }
    if !charts.is_empty() {
        writeln!(w, "<section class=\"charts\">\n<h2>Charts</h2>")?;
        writeln!(
            w,
            "<p class=\"hint\">Hover a chart for exact values; the time charts share one cursor. \
             Click a legend entry to hide its line. \"show data\" opens the figures drawn.</p>"
        )?;
        for (c, t) in &charts {
            chart_figure(&mut w, c, t)?;
        }
        writeln!(w, "</section>")?;
    }
    if single {
        details(&mut w, first)?;
    } else {
        for (i, (name, r)) in runs.iter().enumerate() {
            writeln!(
                w,
                "<section class=\"run\"><h2>[{}] {}</h2>",
                i + 1,
                esc(name)
            )?;
            verdict(&mut w, r)?;
            writeln!(w, "</section>")?;
        }
    }

    writeln!(
        w,
        "<footer><p>Made by yace {} from the <code>yace.result.v1</code> document{}, which this page \
         embeds whole: <code>yace report THIS.html -F json</code> gets it back, and \
         <code>yace report THIS.html other.json</code> compares it.</p>\
         <p>Charts drawn with uPlot 1.6.32 (MIT licence, © Leon Sorokin), inlined: this page \
         makes no network request.</p></footer>\n</main>",
        esc(&first.yace_version),
        if single { "" } else { "s" }
    )?;
    let doc = serde_json::json!({
        "charts": charts.iter().map(|(c, _)| c.to_json()).collect::<Vec<_>>(),
    });
    writeln!(
        w,
        "<script type=\"application/json\" id=\"yace-charts\">{}</script>",
        script_json(&doc)
    )?;
    for (name, r) in runs {
        embed::element(&mut w, name, r)?;
    }
    writeln!(
        w,
        "<script>\n/* uPlot 1.6.32, https://github.com/leeoniya/uPlot, MIT licence, (c) 2022 Leon Sorokin */\n{UPLOT_JS}\n</script>\n<script>\n{PAGE_JS}\n</script>\n</body>\n</html>"
    )
}

/// The machine the client ran on, in a few words.
fn machine(r: &RunResult) -> String {
    let e = &r.environment;
    format!(
        "{} — {}, {} CPU{} ({} allowed), {}",
        e.hostname,
        e.cpu_model,
        e.cpus,
        if e.cpus == 1 { "" } else { "s" },
        e.cpus_allowed,
        e.os
    )
}

fn header(w: &mut impl Write, r: &RunResult) -> io::Result<()> {
    let s = &r.summary;
    writeln!(
        w,
        "<header>\n<p class=\"kicker\">yace load test report</p>\n<h1><span class=\"method\">{}</span> {}</h1>",
        esc(&r.plan.request.method),
        esc(&r.plan.target.url)
    )?;
    writeln!(w, "<dl class=\"facts\">")?;
    let mut fact = |k: &str, v: String| writeln!(w, "<div><dt>{k}</dt><dd>{v}</dd></div>");
    fact("load", esc(&model(r)))?;
    fact(
        "when",
        format!(
            "{} · {:.2} s · {}",
            esc(&r.started_at),
            s.duration_s,
            esc(end(r))
        ),
    )?;
    fact("client machine", esc(&machine(r)))?;
    if let Some(sw) = &r.server_software {
        fact("server says", format!("<code>{}</code>", esc(sw)))?;
    }
    if let Some(t) = &r.tls {
        fact(
            "TLS",
            format!(
                "{} {} · certificate {} · {} full and {} resumed handshakes",
                esc(t.version.as_deref().unwrap_or("(no handshake)")),
                esc(t.cipher.as_deref().unwrap_or("")),
                if t.verified {
                    "verified"
                } else {
                    "<strong>NOT verified</strong> (--insecure)"
                },
                count(t.full_handshakes),
                count(t.resumed_handshakes)
            ),
        )?;
    }
    if let Some(h) = &r.http2 {
        fact(
            "HTTP/2",
            format!(
                "{} streams per connection{} · {} GOAWAY",
                h.streams,
                h.server_max_streams
                    .map(|m| format!(" (server allows {m})"))
                    .unwrap_or_default(),
                count(h.goaways)
            ),
        )?;
    }
    fact("yace", esc(&r.yace_version))?;
    writeln!(w, "</dl>\n</header>")?;
    verdict(w, r)?;
    headline(w, r)
}

/// What a reader must know first: did it pass, is it whole, can the
/// figures be trusted.
fn verdict(w: &mut impl Write, r: &RunResult) -> io::Result<()> {
    let breached = r.thresholds.iter().filter(|t| !t.passed).count();
    let failed_checks = r.checks.iter().filter(|c| c.failed > 0).count();
    let mut issues: Vec<String> = Vec::new();
    if r.end.partial {
        issues.push(format!(
            "<strong>Partial result</strong>: {}. The figures cover what was done.",
            esc(end(r))
        ));
    }
    if let Some(sf) = &r.shortfall {
        issues.push(format!("<strong>Shortfall</strong>: {}", esc(&sf.message)));
    }
    let s = &r.summary;
    if s.errors > 0 {
        issues.push(format!(
            "<strong>{} of {} requests failed</strong> ({:.2}%): see Errors below.",
            count(s.errors),
            count(s.requests),
            s.errors as f64 * 100.0 / s.requests.max(1) as f64
        ));
    }
    if s.non_2xx > 0 {
        issues.push(format!(
            "<strong>{} of {} responses were not 2xx</strong> ({:.2}%): see the status codes below.",
            count(s.non_2xx),
            count(s.responses),
            s.non_2xx as f64 * 100.0 / s.responses.max(1) as f64
        ));
    }
    if failed_checks > 0 {
        issues.push(format!(
            "<strong>{failed_checks} check{} failed</strong>: see Checks below.",
            if failed_checks == 1 { "" } else { "s" }
        ));
    }
    for x in &r.warnings {
        issues.push(esc(x));
    }
    let (class, head) = if breached > 0 {
        (
            "bad",
            format!(
                "{breached} of {} threshold{} breached",
                r.thresholds.len(),
                if r.thresholds.len() == 1 { "" } else { "s" }
            ),
        )
    } else if r.end.partial || failed_checks > 0 || s.errors > 0 || s.non_2xx > 0 {
        (
            "warn",
            if r.thresholds.is_empty() {
                "Completed with problems".to_string()
            } else {
                format!(
                    "All {} thresholds passed, with problems",
                    r.thresholds.len()
                )
            },
        )
    } else if !r.thresholds.is_empty() {
        (
            "ok",
            format!(
                "All {} threshold{} passed",
                r.thresholds.len(),
                if r.thresholds.len() == 1 { "" } else { "s" }
            ),
        )
    } else {
        ("ok", "Completed".to_string())
    };
    let head = if r.end.partial {
        format!("{head} · partial result")
    } else {
        head
    };
    writeln!(
        w,
        "<section class=\"verdict {class}\" role=\"status\">\n<p class=\"head\">{}</p>",
        esc(&head)
    )?;
    if issues.is_empty() {
        writeln!(w, "<p>No validity warning.</p>")?;
    } else {
        writeln!(w, "<ul>")?;
        for i in issues {
            writeln!(w, "<li>{i}</li>")?;
        }
        writeln!(w, "</ul>")?;
    }
    writeln!(w, "</section>")
}

fn headline(w: &mut impl Write, r: &RunResult) -> io::Result<()> {
    let s = &r.summary;
    let l = &s.latency;
    let at = |p: f64| {
        if l.count == 0 {
            "—".to_string()
        } else {
            duration_us(l.at(p).unwrap_or(0.0))
        }
    };
    let cards = [
        ("responses/s", format!("{:.1}", s.rps)),
        ("responses", count(s.responses)),
        (
            "errors",
            format!(
                "{} ({:.2}%)",
                count(s.errors),
                s.errors as f64 * 100.0 / s.requests.max(1) as f64
            ),
        ),
        (
            "non-2xx",
            format!(
                "{} ({:.2}%)",
                count(s.non_2xx),
                s.non_2xx as f64 * 100.0 / s.responses.max(1) as f64
            ),
        ),
        ("p50", at(50.0)),
        ("p90", at(90.0)),
        ("p99", at(99.0)),
        ("p99.9", at(99.9)),
        (
            "max",
            if l.count == 0 {
                "—".into()
            } else {
                duration_us(l.max_us)
            },
        ),
        ("transfer in", format!("{}/s", bytes(s.bytes_in_per_s))),
    ];
    writeln!(w, "<section class=\"headline\">")?;
    for (k, v) in cards {
        writeln!(
            w,
            "<div class=\"card\"><div class=\"v\">{}</div><div class=\"k\">{k}</div></div>",
            esc(&v)
        )?;
    }
    writeln!(w, "</section>")?;
    writeln!(
        w,
        "<p class=\"hint\">{}</p>",
        if s.service.is_some() {
            "Latency counts from when each request was due (coordinated omission corrected)."
        } else {
            "Closed model: latency is service time; a server stall shows as fewer responses, not as latency (run an open model with --rate to see it)."
        }
    )
}

fn compare_header(w: &mut impl Write, runs: &[(String, RunResult)]) -> io::Result<()> {
    writeln!(
        w,
        "<header>\n<p class=\"kicker\">yace load test report</p>\n<h1>Comparing {} runs</h1>\n<ol class=\"runs\">",
        runs.len()
    )?;
    for (i, (name, r)) in runs.iter().enumerate() {
        writeln!(
            w,
            "<li><span class=\"swatch\" style=\"background:{}\"></span><strong>[{}] {}</strong>: \
             {} {}<br><small>{} · {} · {:.2} s · {}</small></li>",
            data::RUN_COLORS[i % data::RUN_COLORS.len()],
            i + 1,
            esc(name),
            esc(&r.plan.request.method),
            esc(&r.plan.target.url),
            esc(&model(r)),
            esc(&r.started_at),
            r.summary.duration_s,
            esc(end(r))
        )?;
    }
    writeln!(w, "</ol>\n</header>")?;
    let table = compare::table(runs);
    writeln!(w, "<section class=\"compare\"><table><thead><tr><th></th>")?;
    for i in 0..runs.len() {
        write!(w, "<th>[{}]</th>", i + 1)?;
        if i > 0 {
            write!(w, "<th>vs [1]</th>")?;
        }
    }
    writeln!(w, "</tr></thead><tbody>")?;
    for row in &table.rows {
        write!(w, "<tr><th>{}</th>", esc(row.label))?;
        for (i, cell) in row.cells.iter().enumerate() {
            write!(w, "<td>{}</td>", esc(&cell.0))?;
            if i > 0 {
                write!(w, "<td class=\"change\">{}</td>", esc(&cell.1))?;
            }
        }
        writeln!(w, "</tr>")?;
    }
    writeln!(w, "</tbody></table>\n<ul class=\"notes\">")?;
    for c in &table.notes {
        writeln!(w, "<li>{}</li>", esc(c))?;
    }
    writeln!(w, "</ul></section>")
}

fn chart_figure(w: &mut impl Write, c: &Chart, t: &Chart) -> io::Result<()> {
    writeln!(
        w,
        "<figure class=\"chart\" id=\"chart-{id}\">\n<figcaption><h3>{}</h3>{}</figcaption>\n\
         <div class=\"plot\" data-chart=\"{id}\"></div>\n<p class=\"note\">{}</p>",
        esc(&c.title),
        if c.log {
            format!(
                "<label class=\"logtoggle\"><input type=\"checkbox\" data-log=\"{}\"{}> log scale</label>",
                c.id,
                if c.kind == Kind::Spectrum { " checked" } else { "" }
            )
        } else {
            String::new()
        },
        esc(&c.note),
        id = c.id
    )?;
    writeln!(
        w,
        "<details><summary>show data</summary><div class=\"tablewrap\"><table><thead><tr><th>{}</th>",
        match t.kind {
            Kind::Time => "time",
            Kind::Spectrum => "percentile",
            Kind::Histogram => "latency from",
        }
    )?;
    for l in &t.lines {
        write!(w, "<th>{}</th>", esc(&l.label))?;
    }
    writeln!(w, "</tr></thead><tbody>")?;
    for (i, &x) in t.x.iter().enumerate() {
        let xs = match t.kind {
            Kind::Time => clock(x),
            Kind::Spectrum => {
                let p = data::TABLE_PERCENTILES
                    .get(i)
                    .copied()
                    .unwrap_or(100.0 * (1.0 - 10f64.powf(-x)));
                if p == 0.0 {
                    "min".to_string()
                } else {
                    format!("p{p}")
                }
            }
            Kind::Histogram => duration_us(x),
        };
        write!(w, "<tr><th>{xs}</th>")?;
        for l in &t.lines {
            match l.values.get(i).copied().flatten() {
                Some(v) => write!(w, "<td>{}</td>", esc(&l.unit.show(v)))?,
                None => write!(w, "<td>—</td>")?,
            }
        }
        writeln!(w, "</tr>")?;
    }
    writeln!(w, "</tbody></table></div>")?;
    if t.kind == Kind::Time && t.x.len() > 1 {
        let step = t.x[1] - t.x[0];
        if step > 1.0 {
            writeln!(
                w,
                "<p class=\"note\">Each row covers {step} s. Every second is in <code>yace report FILE -F csv</code>.</p>"
            )?;
        }
    }
    writeln!(w, "</details>\n</figure>")
}

/// Seconds since the start as `m:ss` or `h:mm:ss`.
fn clock(s: f64) -> String {
    let s = s as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

fn dist_row(w: &mut impl Write, name: &str, d: &Distribution) -> io::Result<()> {
    if d.count == 0 {
        return Ok(());
    }
    let at = |p: f64| duration_us(d.at(p).unwrap_or(0.0));
    writeln!(
        w,
        "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        esc(name),
        duration_us(d.min_us),
        duration_us(d.mean_us),
        at(50.0),
        at(90.0),
        at(99.0),
        duration_us(d.max_us)
    )
}

/// The tables under the charts.
fn details(w: &mut impl Write, r: &RunResult) -> io::Result<()> {
    let s = &r.summary;
    writeln!(w, "<section class=\"details\">\n<h2>Figures</h2>")?;
    writeln!(
        w,
        "<table class=\"wide\"><thead><tr><th>requests</th><th>responses</th><th>errors</th>\
         <th>non-2xx</th><th>cancelled</th><th>dropped</th><th>retried</th><th>responses/s</th></tr></thead>\
         <tbody><tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td></tr></tbody></table>",
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
        "<p>Transfer: in {} ({}/s), out {}, bodies {}; {} connections opened; client {} thread(s), \
         {:.2} CPU-s, busiest thread {:.0}% busy{}.</p>",
        bytes(s.bytes_in as f64),
        bytes(s.bytes_in_per_s),
        bytes(s.bytes_out as f64),
        bytes(s.body_bytes as f64),
        count(s.connections_opened),
        r.client.threads,
        r.client.cpu_s,
        r.client.busiest_thread * 100.0,
        if r.client.saturated {
            " — <strong>saturated</strong>"
        } else {
            ""
        }
    )?;
    if s.latency.count > 0 {
        writeln!(w, "<h3>Latency</h3><table class=\"wide\"><thead><tr><th>min</th><th>mean</th><th>stdev</th>")?;
        for p in SHOWN {
            write!(w, "<th>p{p}</th>")?;
        }
        writeln!(w, "<th>max</th></tr></thead><tbody><tr>")?;
        let l = &s.latency;
        write!(
            w,
            "<td>{}</td><td>{}</td><td>{}</td>",
            duration_us(l.min_us),
            duration_us(l.mean_us),
            duration_us(l.stdev_us)
        )?;
        for p in SHOWN {
            write!(w, "<td>{}</td>", duration_us(l.at(p).unwrap_or(0.0)))?;
        }
        writeln!(w, "<td>{}</td></tr></tbody></table>", duration_us(l.max_us))?;
        writeln!(
            w,
            "<h3>Phases</h3><table><thead><tr><th>phase</th><th>min</th><th>mean</th><th>p50</th>\
             <th>p90</th><th>p99</th><th>max</th></tr></thead><tbody>"
        )?;
        dist_row(w, "latency", &s.latency)?;
        if let Some(d) = &s.service {
            dist_row(w, "service time", d)?;
        }
        if let Some(d) = &s.lag {
            dist_row(w, "schedule lag", d)?;
        }
        dist_row(w, "connect (per request)", &s.connect)?;
        if let Some(d) = &s.tls {
            dist_row(w, "TLS", d)?;
        }
        dist_row(w, "wait (to first byte)", &s.wait)?;
        dist_row(w, "processing", &s.processing)?;
        dist_row(w, "TCP handshake (per connection)", &s.handshake)?;
        writeln!(w, "</tbody></table>")?;
    }
    writeln!(w, "<h3>Responses and errors</h3>")?;
    if !r.statuses.is_empty() {
        writeln!(
            w,
            "<table><thead><tr><th>status</th><th>responses</th></tr></thead><tbody>"
        )?;
        for (code, n) in &r.statuses {
            writeln!(w, "<tr><th>{code}</th><td>{}</td></tr>", count(*n))?;
        }
        writeln!(w, "</tbody></table>")?;
    }
    let mut failures: Vec<_> = r
        .outcomes
        .iter()
        .filter(|(o, n)| o.is_error() && **n > 0)
        .collect();
    if failures.is_empty() {
        writeln!(w, "<p>No errors.</p>")?;
    } else {
        failures.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
        writeln!(
            w,
            "<table><thead><tr><th>error</th><th>requests</th><th>likely cause</th></tr></thead><tbody>"
        )?;
        for (o, n) in failures {
            writeln!(
                w,
                "<tr><th><code>{}</code></th><td>{}</td><td class=\"text\">{}</td></tr>",
                o.name(),
                count(*n),
                esc(o.explain())
            )?;
        }
        writeln!(w, "</tbody></table>")?;
    }
    if !r.steps.is_empty() {
        writeln!(
            w,
            "<h3>Steps</h3><table><thead><tr><th>step</th><th>requests</th><th>errors</th>\
             <th>non-2xx</th><th>p50</th><th>p99</th><th>max</th></tr></thead><tbody>"
        )?;
        for st in &r.steps {
            writeln!(
                w,
                "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&st.name),
                count(st.requests),
                count(st.errors),
                count(st.non_2xx),
                duration_us(st.latency.at(50.0).unwrap_or(0.0)),
                duration_us(st.latency.at(99.0).unwrap_or(0.0)),
                duration_us(st.latency.max_us)
            )?;
        }
        writeln!(w, "</tbody></table>")?;
    }
    if !r.checks.is_empty() {
        writeln!(
            w,
            "<h3>Checks</h3><table><thead><tr><th></th><th>step</th><th>check</th><th>passed</th>\
             <th>failed</th></tr></thead><tbody>"
        )?;
        for c in &r.checks {
            let (class, word) = match (c.passed, c.failed) {
                (0, 0) => ("", "not run"),
                (_, 0) => ("pass", "ok"),
                _ => ("fail", "FAIL"),
            };
            writeln!(
                w,
                "<tr><td class=\"{class}\">{word}</td><td class=\"text\">{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td></tr>",
                esc(&c.step),
                esc(&c.name),
                count(c.passed),
                count(c.failed)
            )?;
        }
        writeln!(w, "</tbody></table>")?;
    }
    if !r.thresholds.is_empty() {
        writeln!(
            w,
            "<h3>Thresholds</h3><table><thead><tr><th></th><th>threshold</th><th>actual</th></tr></thead><tbody>"
        )?;
        for t in &r.thresholds {
            let scope = t
                .step
                .as_ref()
                .map(|s| format!(" (step {})", esc(s)))
                .unwrap_or_default();
            writeln!(
                w,
                "<tr><td class=\"{}\">{}</td><td class=\"text\"><code>{}</code>{scope}</td><td>{}</td></tr>",
                if t.passed { "pass" } else { "fail" },
                if t.passed { "pass" } else { "FAIL" },
                esc(&t.expr),
                esc(&crate::actual(t.actual, stats::threshold::actual_unit(t)))
            )?;
        }
        writeln!(w, "</tbody></table>")?;
    }
    writeln!(w, "</section>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_round_trips() {
        let s = "a<b>&\"c\" 'd' &amp;";
        assert_eq!(unescape(&esc(s)), s);
        assert!(!esc(s).contains('<'));
    }

    #[test]
    fn json_in_a_script_cannot_close_it() {
        let v = serde_json::json!({"label": "</script><script>alert(1)</script>"});
        assert!(!script_json(&v).contains("</script"));
        let back: serde_json::Value = serde_json::from_str(&script_json(&v)).expect("still JSON");
        assert_eq!(back, v);
    }

    #[test]
    fn clock_reads_as_minutes_or_hours() {
        assert_eq!(clock(59.0), "0:59");
        assert_eq!(clock(61.0), "1:01");
        assert_eq!(clock(3723.0), "1:02:03");
    }
}
