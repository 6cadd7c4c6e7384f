//! `yace ab`: ApacheBench's options and report on yace's engine. Users paste
//! their `ab` command lines; what yace cannot do is a clear error, never a
//! silently ignored flag.

use crate::run::{create_output, execute, exit_code, prepare, write_json};
use crate::{exit, Failure};
use clap::{ArgAction, Args};
use engine::{Sample, Sink};
use plan::{InputErrors, Plan, Proxy};
use report::ab::{AbStyle, HtmlAttrs};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

#[derive(Debug, Args)]
#[command(
    disable_help_flag = true,
    disable_version_flag = true,
    about = "ApacheBench (ab) front end: ab's options and report, without ab's defects",
    after_help = AB_HELP
)]
pub struct AbArgs {
    /// Number of requests to perform (default 1; with -t, a cap).
    #[arg(short = 'n', value_name = "requests")]
    pub requests: Option<u64>,
    /// Number of multiple requests to make at a time.
    #[arg(short = 'c', value_name = "concurrency", default_value_t = 1)]
    pub concurrency: u64,
    /// Seconds to max. to spend on benchmarking (-n, in any order, caps the count).
    #[arg(short = 't', value_name = "timelimit")]
    pub timelimit: Option<f64>,
    /// Seconds to max. wait for each response (default 30); a slow request fails alone.
    #[arg(short = 's', value_name = "timeout", default_value_t = 30.0)]
    pub timeout: f64,
    /// Size of TCP send/receive buffer, in bytes.
    #[arg(short = 'b', value_name = "windowsize")]
    pub window: Option<u32>,
    /// Address to bind to when making outgoing connections.
    #[arg(short = 'B', value_name = "address")]
    pub bind: Option<std::net::IpAddr>,
    /// File containing data to POST (remember also to set -T).
    #[arg(short = 'p', value_name = "postfile")]
    pub postfile: Option<PathBuf>,
    /// File containing data to PUT (remember also to set -T).
    #[arg(short = 'u', value_name = "putfile")]
    pub putfile: Option<PathBuf>,
    /// Content-type header to use for POST/PUT data (default text/plain).
    #[arg(short = 'T', value_name = "content-type")]
    pub content_type: Option<String>,
    /// How much troubleshooting info to print (2: info, 3: response codes).
    #[arg(short = 'v', value_name = "verbosity")]
    pub verbosity: Option<u8>,
    /// Print out results in HTML tables.
    #[arg(short = 'w')]
    pub html: bool,
    /// Use HEAD instead of GET.
    #[arg(short = 'i')]
    pub head: bool,
    /// String to insert as table attributes (with -w).
    #[arg(short = 'x', value_name = "attributes")]
    pub table_attrs: Option<String>,
    /// String to insert as tr attributes (with -w).
    #[arg(short = 'y', value_name = "attributes")]
    pub tr_attrs: Option<String>,
    /// String to insert as td or th attributes (with -w).
    #[arg(short = 'z', value_name = "attributes")]
    pub td_attrs: Option<String>,
    /// Add cookie, eg. 'Apache=1234' (repeatable).
    #[arg(short = 'C', value_name = "attribute", action = ArgAction::Append)]
    pub cookies: Vec<String>,
    /// Add arbitrary header line, eg. 'Accept-Encoding: gzip' (repeatable).
    #[arg(short = 'H', value_name = "attribute", action = ArgAction::Append)]
    pub headers: Vec<String>,
    /// Add Basic WWW Authentication, the attributes are a colon separated username and password.
    #[arg(short = 'A', value_name = "attribute")]
    pub auth: Option<String>,
    /// Add Basic Proxy Authentication, the attributes are a colon separated username and password.
    #[arg(short = 'P', value_name = "attribute")]
    pub proxy_auth: Option<String>,
    /// Proxyserver and port number to use (proxy:port).
    #[arg(short = 'X', value_name = "proxy:port")]
    pub proxy: Option<String>,
    /// Print version number and exit.
    #[arg(short = 'V')]
    pub version: bool,
    /// Use HTTP KeepAlive feature (HTTP/1.1 keep-alive in yace).
    #[arg(short = 'k')]
    pub keepalive: bool,
    /// Do not show percentiles served table.
    #[arg(short = 'd')]
    pub no_percentiles: bool,
    /// Do not show confidence estimators and warnings.
    #[arg(short = 'S')]
    pub no_confidence: bool,
    /// Do not show progress when doing more than 150 requests.
    #[arg(short = 'q')]
    pub quiet: bool,
    /// Accept variable document length (yace always does; see --strict-length).
    #[arg(short = 'l')]
    pub accept_variable_length: bool,
    /// Don't exit on socket receive errors (yace never does).
    #[arg(short = 'r')]
    pub no_exit_on_errors: bool,
    /// Output CSV file with percentages served.
    #[arg(short = 'e', value_name = "filename")]
    pub csv: Option<PathBuf>,
    /// Output collected data to gnuplot format file (one line per request, streamed).
    #[arg(short = 'g', value_name = "filename")]
    pub gnuplot: Option<PathBuf>,
    /// Method name.
    #[arg(short = 'm', value_name = "method")]
    pub method: Option<String>,
    /// Display usage information (this message).
    #[arg(short = 'h', action = ArgAction::Help)]
    pub help: Option<bool>,
    /// SSL/TLS protocol: only ALL (TLS 1.2 or 1.3, negotiated).
    #[arg(short = 'f', value_name = "protocol")]
    pub ssl_protocol: Option<String>,
    /// SSL/TLS cipher suite: not selectable (rustls's safe defaults).
    #[arg(short = 'Z', value_name = "ciphersuite")]
    pub ssl_cipher: Option<String>,
    /// Client certificate chain and private key, in one PEM file.
    #[arg(short = 'E', value_name = "certfile")]
    pub ssl_cert: Option<PathBuf>,
    #[command(flatten)]
    pub tls: crate::args::TlsArgs,
    /// Count responses whose length differs from the first as failed (ab's default).
    #[arg(long = "strict-length")]
    pub strict_length: bool,
    /// Also write yace's JSON result (the yace.result.v1 contract).
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Worker threads (default: one per CPU, at most -c).
    #[arg(long = "threads", value_name = "N")]
    pub threads: Option<usize>,
    /// [http://]hostname[:port]/path
    #[arg(value_name = "URL")]
    pub url: Option<String>,
}

const AB_HELP: &str = "Where yace ab differs from ab (each is also named in the report where it applies):
  - a request slower than -s fails alone and the run goes on (no apr_pollset_poll 70007 abort);
  - Ctrl-C prints the report so far, marked partial (exit 130);
  - document length differences are information, not \"Failed requests: Length\" (--strict-length for ab's way);
  - -k is HTTP/1.1 keep-alive; all -c connections open at the start; one worker thread per CPU;
  - times are measured in microseconds and shown in ms with decimals;
  - -t and -n work in any order: -t is the time limit, -n a cap.

Examples:
  yace ab -n 10000 -c 100 http://127.0.0.1/
  yace ab -k -c 100 -t 60 http://127.0.0.1/index.php
  yace ab -n 1000 -c 10 -p data.json -T application/json --json result.json http://127.0.0.1:8080/echo";

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

/// Turns ab's flags into the shared run flags, then into a plan.
fn plan_from(a: &AbArgs, url: &str) -> Result<Plan, InputErrors> {
    let mut b = plan::PlanBuilder::new();
    if let Some(p) = a
        .ssl_protocol
        .as_deref()
        .filter(|p| !p.eq_ignore_ascii_case("ALL"))
    {
        b.error(
            "-f",
            format!("'{p}' cannot be forced: yace negotiates TLS 1.2 or 1.3 (SSL2/3, TLS 1.0/1.1 are unsafe and unsupported)"),
            Some("drop -f, or use -f ALL"),
        );
    }
    if a.ssl_cipher.is_some() {
        b.error(
            "-Z",
            "cipher suites cannot be chosen: yace uses rustls's safe defaults",
            Some("drop -Z"),
        );
    }
    if a.verbosity.is_some_and(|v| v >= 4) {
        b.error(
            "-v",
            "printing response headers (-v 4) is not supported",
            Some("use curl -v URL to see them"),
        );
    }
    if a.postfile.is_some() && a.putfile.is_some() {
        b.error(
            "-p/-u",
            "give either a POST file or a PUT file, not both",
            None,
        );
    }
    if a.timeout <= 0.0 || !a.timeout.is_finite() {
        b.error(
            "-s",
            format!("'{}' is not a positive number of seconds", a.timeout),
            Some("e.g. -s 30"),
        );
    }
    if a.timelimit.is_some_and(|t| t <= 0.0 || !t.is_finite()) {
        b.error(
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
                b.error(
                    "-X",
                    format!("'{p}' is not proxy:port"),
                    Some("e.g. -X 127.0.0.1:3128"),
                );
                None
            }
        }
    });
    let body_file = a.postfile.clone().or_else(|| a.putfile.clone());
    let method = match (&a.method, a.head, &a.postfile, &a.putfile) {
        (Some(m), _, _, _) => m.clone(),
        (None, true, _, _) => "HEAD".into(),
        (None, _, Some(_), _) => "POST".into(),
        (None, _, _, Some(_)) => "PUT".into(),
        _ => "GET".into(),
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
    let requests = match (a.requests, a.timelimit) {
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) => Some(1),
    };
    let run = crate::args::RunArgs {
        url: Some(url.to_owned()),
        connections: Some(a.concurrency.to_string()),
        requests: requests.map(|n| n.to_string()),
        duration: a.timelimit.map(|t| format!("{t}")),
        threads: a.threads.map(|t| t.to_string()),
        rate: None,
        max_inflight: None,
        method,
        headers,
        body: None,
        body_file,
        no_keepalive: !a.keepalive,
        timeout: format!("{}", a.timeout.max(0.001)),
        connect_timeout: format!("{}", a.timeout.max(0.001)),
        json: None,
        quiet: true,
        dry_run: false,
        tls: crate::args::TlsArgs {
            cert: a.ssl_cert.clone().or_else(|| a.tls.cert.clone()),
            key: a.ssl_cert.clone().or_else(|| a.tls.key.clone()),
            ..a.tls.clone()
        },
        ..Default::default()
    };
    let earlier = b.has_errors();
    let planned = crate::run::plan_from(&run, url);
    match (planned, earlier) {
        (Ok(mut p), false) => {
            p.socket.bind = a.bind;
            p.socket.buffer = a.window;
            p.socket.proxy = proxy;
            Ok(p)
        }
        (Ok(_), true) => b.finish(None),
        (Err(e), _) => {
            let mut all = b.finish(None).err().map(|x| x.0).unwrap_or_default();
            all.extend(e.0);
            Err(InputErrors(all))
        }
    }
}

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
    let Some(prepared) = prepare(Some(&url), |u| plan_from(&a, u), false)? else {
        return Ok(exit::OK);
    };
    let csv_out = create_output("-e", a.csv.as_deref())?;
    let gnuplot_out = create_output("-g", a.gnuplot.as_deref())?;
    let json_out = create_output("--json", a.json.as_deref())?;

    let host = &prepared.plan.target.host;
    eprintln!(
        "This is yace ab {}: ApacheBench's options and report on yace's engine\n\
         (HTTP/1.1, multi-core, per-request timeouts, partial results on Ctrl-C)\n",
        env!("CARGO_PKG_VERSION")
    );
    eprintln!("Benchmarking {host} (be patient)");
    if a.verbosity.is_some_and(|v| v >= 2) {
        eprintln!(
            "INFO: {} {} via {}",
            prepared.plan.request.method, prepared.plan.target.url, prepared.addr
        );
    }
    let planned = prepared.plan.stop.requests;
    // ab prints progress every tenth of the requests when there are more than 150
    // (every 5,000 with -t, which implies 50,000 in ab).
    let heartbeat = match (planned, a.timelimit) {
        (Some(n), _) if n > 150 => Some((n / 10).max(100)),
        (None, Some(_)) => Some(5000),
        _ => None,
    };
    let mut reported = 0u64;
    let gnuplot = gnuplot_out.map(|f| {
        let out = Arc::new(Mutex::new(std::io::BufWriter::new(f)));
        let _ = out
            .lock()
            .unwrap()
            .write_all(b"starttime\tseconds\tctime\tdtime\tttime\twait\n");
        out
    });
    let wall_epoch_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    let verbose = a.verbosity.is_some_and(|v| v >= 3);
    let flow = crate::run::fixed_flow(&prepared.plan);
    let done = execute(
        &prepared,
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
        flow,
        &[],
        |rows| {
            let Some(hb) = heartbeat.filter(|_| !a.quiet) else {
                return;
            };
            let finished: u64 = rows.iter().map(|r| r.responses + r.errors).sum();
            while finished >= reported + hb && planned.is_none_or(|n| reported + hb <= n) {
                reported += hb;
                eprintln!("Completed {reported} requests");
            }
        },
    )?;
    drop(done.extras);
    if let Some(out) = gnuplot {
        let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
        w.flush()
            .map_err(|e| Failure::runtime(format!("-g: cannot write: {e}")))?;
    }
    let r = &done.result;
    if heartbeat.is_some() && !a.quiet {
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
    if let (Some(f), Some(p)) = (csv_out, &a.csv) {
        let mut w = std::io::BufWriter::new(f);
        report::ab::csv(r, &mut w)
            .and_then(|()| w.flush())
            .map_err(|e| crate::run::output_failure("-e", p, e))?;
    }
    write_json(r, json_out, a.json.as_deref())?;
    Ok(exit_code(done.signal, r))
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
