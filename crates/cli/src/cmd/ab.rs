//! `yace ab`: ApacheBench's options and report on yace's engine. Users paste
//! their `ab` command lines; what yace cannot do is a clear error, never a
//! silently ignored flag. The flags become a plan in `flags::ab_plan`.

use super::driver::{self, create_output};
use crate::args::AbArgs;
use crate::failure::exit_code;
use crate::flags;
use crate::{exit, Failure};
use engine::{Sample, Sink};
use report::ab::{AbStyle, HtmlAttrs};
use std::io::Write;
use std::sync::{Arc, Mutex};

/// ab's `-g` data: one line per request, buffered per worker and appended to
/// the shared file a block at a time, so memory stays bounded.
struct Gnuplot {
    out: Arc<Mutex<std::io::BufWriter<std::fs::File>>>,
    buf: Vec<u8>,
    /// Unix time of the run's epoch, in microseconds.
    wall_epoch_us: u64,
}

impl Gnuplot {
    fn flush(&mut self) {
        if !self.buf.is_empty() {
            let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
            let _ = out.write_all(&self.buf);
            self.buf.clear();
        }
    }
}

impl Sink for Gnuplot {
    fn record(&mut self, s: &Sample) {
        if s.outcome != engine::Outcome::Response {
            return;
        }
        let start_us = self.wall_epoch_us + s.start / 1000;
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_micros(start_us);
        let ms = |ns: u64| (ns as f64 / 1e6).round() as u64;
        let ctime = s.sent.saturating_sub(s.start);
        let total = s.end.saturating_sub(s.start);
        let _ = writeln!(
            self.buf,
            "{}\t{}\t{}\t{}\t{}\t{}",
            ctime_string(when),
            start_us / 1_000_000,
            ms(ctime),
            ms(total - ctime),
            ms(total),
            ms(s.first_byte.saturating_sub(s.sent)),
        );
        if self.buf.len() >= 64 * 1024 {
            self.flush();
        }
    }
    fn connected(&mut self, _: u64) {}
    fn finish(&mut self, _: u64) {
        self.flush();
    }
}

/// `Sun Nov 22 11:05:43 2026`, as ab's apr_ctime writes it (UTC here).
fn ctime_string(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(mo - 1) as usize],
        d,
        h,
        m,
        s,
        y
    )
}

/// `-v 3`: ab's "LOG: Response code = N" per response, buffered per worker.
struct Verbose {
    buf: Vec<u8>,
}

impl Sink for Verbose {
    fn record(&mut self, s: &Sample) {
        if s.outcome == engine::Outcome::Response {
            let _ = writeln!(self.buf, "LOG: Response code = {}", s.status);
        } else {
            let _ = writeln!(self.buf, "LOG: request failed: {}", s.outcome.name());
        }
        if self.buf.len() >= 16 * 1024 {
            self.finish(0);
        }
    }
    fn connected(&mut self, _: u64) {}
    fn finish(&mut self, _: u64) {
        let _ = std::io::stderr().lock().write_all(&self.buf);
        self.buf.clear();
    }
}

pub fn run(a: AbArgs) -> Result<u8, Failure> {
    if a.version {
        println!(
            "yace ab {} (ApacheBench-compatible front end of yace)",
            env!("CARGO_PKG_VERSION")
        );
        return Ok(exit::OK);
    }
    let Some(url) = a.url.clone() else {
        return Err(Failure::usage(
            "yace ab needs a URL, e.g. yace ab -n 1000 -c 10 http://127.0.0.1:8080/ (see yace ab -h)",
        ));
    };
    let (plan, monitors) = crate::failure::both(
        flags::ab_plan(&a, &url),
        flags::monitors(&a.monitor.monitor, &a.monitor.interval),
    )?;
    let prepared = driver::prepare(::run::Job {
        plan,
        target: ::run::TargetChoice::Url(url),
        script: ::run::Script::Request,
        thresholds: Vec::new(),
        spelling: &crate::flags::AbFlags,
        monitors,
    })?;
    let csv_out = create_output("-e", a.csv.as_deref())?;
    let gnuplot_out = create_output("-g", a.gnuplot.as_deref())?;
    let json_out = create_output("--json", a.json.as_deref())?;
    let html_out = create_output("--html", a.html_file.as_deref())?;

    let host = &prepared.plan.target.host;
    // Where ab writes: its banner and "Benchmarking" line on stdout, the
    // progress lines on stderr.
    println!(
        "This is yace ab {}: ApacheBench's options and report on yace's engine\n\
         (HTTP/1.1, multi-core, per-request timeouts, partial results on Ctrl-C)\n",
        env!("CARGO_PKG_VERSION")
    );
    if a.verbosity.is_some_and(|v| v >= 2) {
        eprintln!(
            "INFO: {} {} via {}",
            prepared.plan.request.method,
            prepared.plan.secrets.url(&prepared.plan.target.url),
            prepared.addr
        );
    }
    let planned = prepared.plan.stop.requests;
    // ab prints progress every tenth of the requests when there are more than 150
    // (every 5,000 with -t, which implies 50,000 in ab).
    // -q turns the progress lines off, as in ab (then `...done` is printed).
    let heartbeat = match (planned, a.timelimit) {
        _ if a.quiet => None,
        (Some(n), _) if n > 150 => Some((n / 10).max(100)),
        (None, Some(_)) => Some(5000),
        _ => None,
    };
    if heartbeat.is_some() {
        println!("Benchmarking {host} (be patient)");
    } else {
        print!("Benchmarking {host} (be patient)...");
        let _ = std::io::stdout().flush();
    }
    let mut reported = 0u64;
    // -g streams into its temporary file; it is put in place at the end.
    let gnuplot = match &gnuplot_out {
        Some(f) => {
            let file = f
                .stream()
                .map_err(|e| Failure::runtime(format!("-g: cannot write: {e}")))?;
            let out = Arc::new(Mutex::new(std::io::BufWriter::new(file)));
            let _ = out
                .lock()
                .unwrap()
                .write_all(b"starttime\tseconds\tctime\tdtime\tttime\twait\n");
            Some(out)
        }
        None => None,
    };
    let wall_epoch_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    let verbose = a.verbosity.is_some_and(|v| v >= 3);
    let mut done = driver::execute(
        prepared,
        |_| {
            (
                gnuplot.as_ref().map(|out| Gnuplot {
                    out: out.clone(),
                    buf: Vec::new(),
                    wall_epoch_us,
                }),
                verbose.then(|| Verbose { buf: Vec::new() }),
            )
        },
        |rows| {
            let Some(hb) = heartbeat else {
                return;
            };
            let finished: u64 = rows.iter().map(|r| r.responses + r.errors).sum();
            while finished >= reported + hb && planned.is_none_or(|n| reported + hb <= n) {
                reported += hb;
                eprintln!("Completed {reported} requests");
            }
        },
    )?;
    drop(std::mem::take(&mut done.extras));
    if let (Some(out), Some(file)) = (gnuplot, gnuplot_out) {
        let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
        let path = file.path().to_owned();
        w.flush()
            .and_then(|()| file.commit())
            .map_err(|e| Failure::runtime(format!("-g {}: cannot write: {e}", path.display())))?;
    }
    let r = &done.result;
    if heartbeat.is_none() {
        println!("..done");
    } else {
        eprintln!("Finished {} requests", report::ab::complete(r));
    }
    let style = AbStyle {
        keepalive_flag: a.keepalive,
        percentiles: !a.no_percentiles,
        confidence: !a.no_confidence,
        strict_length: a.strict_length,
        html: a.html.then(|| HtmlAttrs {
            table: a.table_attrs.clone().unwrap_or_default(),
            tr: a.tr_attrs.clone().unwrap_or_default(),
            td: a.td_attrs.clone().unwrap_or_default(),
        }),
    };
    let _ = report::ab::report(r, &style, std::io::stdout().lock());
    if let Some(out) = csv_out {
        let path = out.path().to_owned();
        out.write_with(|w| report::ab::csv(r, w))
            .map_err(|e| driver::output_failure("-e", &path, e))?;
    }
    driver::write_json(r, json_out)?;
    // ab's own report stays in English; yace's page follows YACE_LANG or the locale.
    driver::write_html(r, html_out, driver::language(None))?;
    if let Some(line) = crate::failure::all_failed_line(&done) {
        eprintln!("error: {line}");
    }
    Ok(exit_code(&done))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_matches_apr() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_345_543);
        assert_eq!(ctime_string(t), "Sun Nov 22 11:05:43 2026");
        assert_eq!(
            ctime_string(std::time::UNIX_EPOCH),
            "Thu Jan  1 00:00:00 1970"
        );
    }
}
