//! ApacheBench's report layout, section by section, so a `yace ab` run can
//! be read side by side with old `ab` output, with ab's defects fixed and
//! named in a closing "yace notes" section.

use crate::fmt::count;
use sample::Outcome;
use stats::hist::Distribution;
use stats::{EndReason, RunResult};
use std::io::{self, Write};

/// How the user asked for the report (ab's display flags).
#[derive(Debug, Clone, Default)]
pub struct AbStyle {
    /// `-k` was given: print the Keep-Alive requests line.
    pub keepalive_flag: bool,
    /// Not `-d`: print the percentile table.
    pub percentiles: bool,
    /// Not `-S`: print mean, standard deviation and median.
    pub confidence: bool,
    /// `--strict-length`: count body-length differences as failures, like ab.
    pub strict_length: bool,
    /// `-w`: HTML tables, with `-x`, `-y`, `-z` attributes.
    pub html: Option<HtmlAttrs>,
}

#[derive(Debug, Clone, Default)]
pub struct HtmlAttrs {
    pub table: String,
    pub tr: String,
    pub td: String,
}

/// ab's failure classes, from yace's outcome classes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Failures {
    pub connect: u64,
    pub receive: u64,
    pub length: u64,
    pub exceptions: u64,
}

impl Failures {
    pub fn of(r: &RunResult, strict_length: bool) -> Failures {
        let n = |o: Outcome| r.outcomes.get(&o).copied().unwrap_or(0);
        Failures {
            connect: n(Outcome::ConnectRefused)
                + n(Outcome::ConnectTimeout)
                + n(Outcome::ConnectError)
                + n(Outcome::ClientResource),
            receive: n(Outcome::Reset)
                + n(Outcome::ClosedBeforeResponse)
                + n(Outcome::IncompleteBody),
            length: if strict_length {
                r.summary.body_length.varied
            } else {
                0
            },
            exceptions: n(Outcome::Timeout)
                + n(Outcome::ProtocolError)
                + n(Outcome::HeaderTooLarge),
        }
    }

    pub fn total(&self) -> u64 {
        self.connect + self.receive + self.length + self.exceptions
    }
}

/// Requests that ended, successfully or not (ab's "Complete requests").
pub fn complete(r: &RunResult) -> u64 {
    r.summary.responses + r.summary.errors
}

/// Key figures in ab's order: (label, value) pairs.
fn rows(r: &RunResult, style: &AbStyle) -> Vec<(String, String)> {
    let s = &r.summary;
    let t = &r.plan.target;
    let mut v: Vec<(String, String)> = Vec::new();
    let mut add = |k: &str, val: String| v.push((k.to_owned(), val));
    add(
        "Server Software:",
        r.server_software.clone().unwrap_or_default(),
    );
    add("Server Hostname:", t.host.clone());
    add("Server Port:", t.port.to_string());
    if let Some(tls) = &r.tls {
        add(
            "SSL/TLS Protocol:",
            format!(
                "{},{}",
                tls.version.as_deref().unwrap_or("-"),
                tls.cipher.as_deref().unwrap_or("-")
            ),
        );
        if t.host.parse::<std::net::IpAddr>().is_err() {
            add("TLS Server Name:", t.host.clone());
        }
    }
    add("", String::new());
    add("Document Path:", t.path.clone());
    let doc = match s.body_length.first {
        Some(n) if s.body_length.varied > 0 => {
            format!(
                "{n} bytes (first response; varied from {} to {})",
                s.body_length.min, s.body_length.max
            )
        }
        Some(n) => format!("{n} bytes"),
        None => "0 bytes".into(),
    };
    add("Document Length:", doc);
    add("", String::new());
    let conc = r.plan.load.max_connections();
    add("Concurrency Level:", conc.to_string());
    let secs = s.duration_s;
    add("Time taken for tests:", format!("{secs:.3} seconds"));
    let done = complete(r);
    add("Complete requests:", done.to_string());
    let f = Failures::of(r, style.strict_length);
    add("Failed requests:", f.total().to_string());
    if f.total() > 0 {
        add(
            "",
            format!(
                "   (Connect: {}, Receive: {}, Length: {}, Exceptions: {})",
                f.connect, f.receive, f.length, f.exceptions
            ),
        );
    }
    if s.non_2xx > 0 {
        add("Non-2xx responses:", s.non_2xx.to_string());
    }
    if style.keepalive_flag {
        add("Keep-Alive requests:", s.keepalive_responses.to_string());
    }
    add("Total transferred:", format!("{} bytes", s.bytes_in));
    let sent_body = r.plan.request.body_bytes > 0;
    if sent_body {
        add(
            "Total body sent:",
            (r.plan.request.body_bytes * done).to_string(),
        );
    }
    add("HTML transferred:", format!("{} bytes", s.body_bytes));
    if secs > 0.0 && done > 0 {
        let d = done as f64;
        add(
            "Requests per second:",
            format!("{:.2} [#/sec] (mean)", d / secs),
        );
        add(
            "Time per request:",
            format!("{:.3} [ms] (mean)", conc as f64 * secs * 1000.0 / d),
        );
        add(
            "Time per request:",
            format!(
                "{:.3} [ms] (mean, across all concurrent requests)",
                secs * 1000.0 / d
            ),
        );
        add(
            "Transfer rate:",
            format!(
                "{:.2} [Kbytes/sec] received",
                s.bytes_in as f64 / 1024.0 / secs
            ),
        );
        if sent_body {
            let posted = (r.plan.request.body_bytes * done) as f64;
            add("", format!("{:.2} kb/s sent", posted / 1024.0 / secs));
            add(
                "",
                format!(
                    "{:.2} kb/s total",
                    (s.bytes_in as f64 + posted) / 1024.0 / secs
                ),
            );
        }
    }
    v
}

fn ms(us: f64) -> f64 {
    us / 1000.0
}

/// ab's "Connection Times (ms)" table, at microsecond resolution.
fn connection_times(r: &RunResult, style: &AbStyle, w: &mut impl Write) -> io::Result<()> {
    let s = &r.summary;
    let phases: [(&str, &Distribution); 4] = [
        ("Connect:", &s.connect),
        ("Processing:", &s.processing),
        ("Waiting:", &s.wait),
        ("Total:", &s.latency),
    ];
    writeln!(w, "\nConnection Times (ms)")?;
    if style.confidence {
        writeln!(
            w,
            "{:12}{:>7} {:>7} {:>7} {:>7} {:>8}",
            "", "min", "mean", "[+/-sd]", "median", "max"
        )?;
        for (name, d) in phases {
            writeln!(
                w,
                "{name:<12}{:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>8.2}",
                ms(d.min_us),
                ms(d.mean_us),
                ms(d.stdev_us),
                ms(d.at(50.0).unwrap_or(0.0)),
                ms(d.max_us)
            )?;
        }
    } else {
        writeln!(w, "{:12}{:>7} {:>7} {:>8}", "", "min", "avg", "max")?;
        for (name, d) in phases {
            writeln!(
                w,
                "{name:<12}{:>7.2} {:>7.2} {:>8.2}",
                ms(d.min_us),
                ms(d.mean_us),
                ms(d.max_us)
            )?;
        }
    }
    Ok(())
}

const AB_PERCENTILES: [f64; 9] = [50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0, 100.0];

fn percentile_table(r: &RunResult, w: &mut impl Write) -> io::Result<()> {
    let l = &r.summary.latency;
    writeln!(
        w,
        "\nPercentage of the requests served within a certain time (ms)"
    )?;
    for p in AB_PERCENTILES {
        let v = ms(l.at(p).unwrap_or(0.0));
        if p >= 100.0 {
            writeln!(w, " 100%  {v:>8.2} (longest request)")?;
        } else {
            writeln!(w, "  {p:.0}%  {v:>8.2}")?;
        }
    }
    Ok(())
}

/// Where yace differs from ab, said where it applies.
pub fn notes(r: &RunResult, style: &AbStyle) -> Vec<String> {
    let s = &r.summary;
    let mut n = Vec::new();
    match r.end.reason {
        EndReason::Interrupted | EndReason::Terminated => n.push(
            "Interrupted: these are the results up to the signal (ab prints the same report \
             when stopped, but without saying that it was cut short)."
                .to_owned(),
        ),
        _ => {}
    }
    if s.body_length.varied > 0 && !style.strict_length {
        n.push(format!(
            "Document length varied ({} responses, {}–{} bytes): information about a dynamic \
             page, not counted as \"Failed requests: Length\" as ab would (--strict-length for \
             ab's counting).",
            count(s.body_length.varied),
            s.body_length.min,
            s.body_length.max
        ));
    }
    let timeouts = r.outcomes.get(&Outcome::Timeout).copied().unwrap_or(0);
    if timeouts > 0 {
        n.push(format!(
            "{} requests got no complete response within the {} s timeout (-s) and count as \
             failed (Exceptions); the run carried on, where ab aborts with \"apr_pollset_poll: \
             The timeout specified has expired (70007)\".",
            count(timeouts),
            r.plan.timeouts.request.as_secs_f64()
        ));
    }
    if s.cancelled > 0 {
        n.push(format!(
            "{} requests still in flight at the end were cancelled: not complete, not failed.",
            count(s.cancelled)
        ));
    }
    if s.retries > 0 {
        n.push(format!(
            "{} requests were retried once after the server closed an idle keep-alive connection.",
            count(s.retries)
        ));
    }
    if r.plan.keepalive {
        n.push(
            "Keep-alive is HTTP/1.1 (ab -k sends HTTP/1.0 keep-alive, which closes on every \
             chunked response)."
                .to_owned(),
        );
    }
    n.push(format!(
        "{}; all connections opened at the start; percentiles at microsecond resolution.",
        match r.client.threads {
            1 => "1 worker thread".to_owned(),
            n => format!("{n} worker threads"),
        }
    ));
    let mut failures: Vec<(Outcome, u64)> = r
        .outcomes
        .iter()
        .filter(|(o, c)| o.is_error() && **c > 0)
        .map(|(o, c)| (*o, *c))
        .collect();
    failures.sort_by_key(|f| std::cmp::Reverse(f.1));
    for (o, c) in failures {
        n.push(format!("{} ({}): {}.", o.name(), count(c), o.explain()));
    }
    n.extend(r.warnings.iter().cloned());
    n
}

/// Writes the report in ab's layout (plain text, or HTML with `-w`).
pub fn report(r: &RunResult, style: &AbStyle, mut w: impl Write) -> io::Result<()> {
    if let Some(attrs) = &style.html {
        return html(r, style, attrs, w);
    }
    writeln!(w)?;
    for (k, v) in rows(r, style) {
        if k.is_empty() && v.is_empty() {
            writeln!(w)?;
        } else if k.is_empty() {
            if v.starts_with("   (") {
                writeln!(w, "{v}")?;
            } else {
                writeln!(w, "{:<24}{v}", "")?;
            }
        } else {
            writeln!(w, "{k:<24}{v}")?;
        }
    }
    if r.summary.latency.count > 0 {
        connection_times(r, style, &mut w)?;
        if style.percentiles && r.summary.latency.count > 1 {
            percentile_table(r, &mut w)?;
        }
    }
    if let Some(m) = &r.monitor {
        // Not ab's: what --monitor saw of the server, in yace's words.
        writeln!(w, "\nServer (yace --monitor):")?;
        for line in crate::monitor::figures(m, crate::lang::Lang::En) {
            writeln!(w, "  {line}")?;
        }
        for line in crate::monitor::sources(m, crate::lang::Lang::En) {
            writeln!(w, "  monitor {line}")?;
        }
        for d in &m.diagnoses {
            let tag = if d.severity == "problem" {
                "PROBLEM"
            } else {
                "note"
            };
            writeln!(w, "  {tag}: {}\n    fix: {}", d.message, d.fix)?;
        }
    }
    let notes = notes(r, style);
    if !notes.is_empty() {
        writeln!(w, "\nyace notes (where this differs from ab):")?;
        for n in notes {
            writeln!(w, "  - {n}")?;
        }
    }
    Ok(())
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// ab's `-w` output: the same figures as HTML tables.
fn html(r: &RunResult, style: &AbStyle, a: &HtmlAttrs, mut w: impl Write) -> io::Result<()> {
    writeln!(
        w,
        "<p>\n This is yace ab {} (ApacheBench-compatible)<br>\n</p>",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(w, "<table {}>", a.table)?;
    for (k, v) in rows(r, style) {
        if k.is_empty() && v.is_empty() {
            continue;
        }
        writeln!(
            w,
            "<tr {}><th colspan=2 bgcolor=white>{}</th><td colspan=2 bgcolor=white {}>{}</td></tr>",
            a.tr,
            esc(&k),
            a.td,
            esc(v.trim())
        )?;
    }
    let s = &r.summary;
    writeln!(
        w,
        "<tr {}><th bgcolor=white colspan=4>Connection Times (ms)</th></tr>\n\
         <tr {}><th bgcolor=white>&nbsp;</th> <th bgcolor=white>min</th> <th bgcolor=white>avg</th> <th bgcolor=white>max</th></tr>",
        a.tr, a.tr
    )?;
    for (name, d) in [
        ("Connect:", &s.connect),
        ("Processing:", &s.processing),
        ("Total:", &s.latency),
    ] {
        writeln!(
            w,
            "<tr {}><th bgcolor=white>{name}</th><td bgcolor=white {}>{:.2}</td><td bgcolor=white {}>{:.2}</td><td bgcolor=white {}>{:.2}</td></tr>",
            a.tr,
            a.td,
            ms(d.min_us),
            a.td,
            ms(d.mean_us),
            a.td,
            ms(d.max_us)
        )?;
    }
    writeln!(w, "</table>")?;
    let notes = notes(r, style);
    if !notes.is_empty() {
        writeln!(w, "<ul>")?;
        for n in notes {
            writeln!(w, "<li>{}</li>", esc(&n))?;
        }
        writeln!(w, "</ul>")?;
    }
    Ok(())
}

/// ab's `-e` file: the time under which each percentage of requests was
/// served, 0–100, in ms.
pub fn csv(r: &RunResult, mut w: impl Write) -> io::Result<()> {
    writeln!(w, "Percentage served,Time in ms")?;
    let h = stats::hist::decode(&r.histograms.latency).map_err(io::Error::other)?;
    for i in 0..=100u32 {
        let us = if h.is_empty() {
            0
        } else if i == 0 {
            h.min()
        } else if i == 100 {
            h.max()
        } else {
            h.value_at_quantile(i as f64 / 100.0)
        };
        writeln!(w, "{i},{:.3}", us as f64 / 1000.0)?;
    }
    Ok(())
}
