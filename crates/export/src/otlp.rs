//! OTLP over HTTP/protobuf: the same figures as the Prometheus endpoint,
//! pushed to an OpenTelemetry collector, configured as every OpenTelemetry
//! SDK is — by the standard `OTEL_EXPORTER_OTLP_*` variables.

use crate::figures::{Figures, Info};
use crate::proto::Msg;
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Where and how often to push.
#[derive(Clone, PartialEq)]
pub struct OtlpConfig {
    /// host:port
    pub host: String,
    /// The request path (`/v1/metrics`).
    pub path: String,
    /// `OTEL_EXPORTER_OTLP_HEADERS`: sent, never shown.
    pub headers: Vec<(String, String)>,
    pub interval: Duration,
    pub service: String,
    pub timeout: Duration,
}

impl std::fmt::Debug for OtlpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtlpConfig")
            .field("host", &self.host)
            .field("path", &self.path)
            .field("headers", &format!("{} (not shown)", self.headers.len()))
            .field("interval", &self.interval)
            .field("service", &self.service)
            .finish()
    }
}

impl OtlpConfig {
    /// From the environment (`env` looks a variable up): the endpoint
    /// (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// with `/v1/metrics`, else `http://localhost:4318/v1/metrics`), the
    /// headers, the interval (`OTEL_METRIC_EXPORT_INTERVAL`, ms; 10 s here,
    /// the SDKs' 60 s being most of a typical run), `OTEL_SERVICE_NAME`, and
    /// the protocol, which must be http/protobuf. Every problem at once.
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<OtlpConfig, Vec<String>> {
        let mut bad = Vec::new();
        let get = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let proto = get("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")
            .or_else(|| get("OTEL_EXPORTER_OTLP_PROTOCOL"));
        if let Some(p) = proto.filter(|p| p != "http/protobuf") {
            bad.push(format!(
                "OTEL_EXPORTER_OTLP_PROTOCOL={p}: yace sends http/protobuf only (unset it, or set http/protobuf)"
            ));
        }
        let url = match (
            get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"),
            get("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(u), _) => u,
            (None, Some(base)) => format!("{}/v1/metrics", base.trim_end_matches('/')),
            (None, None) => "http://localhost:4318/v1/metrics".into(),
        };
        let (host, path) = match url.strip_prefix("http://") {
            Some(rest) => match rest.find('/') {
                Some(i) => (rest[..i].to_string(), rest[i..].to_string()),
                None => (rest.to_string(), "/".to_string()),
            },
            None => {
                bad.push(format!(
                    "OTLP endpoint {url}: only http:// endpoints are supported (a collector on this machine or behind a TLS-terminating proxy)"
                ));
                (String::new(), String::new())
            }
        };
        let host = if host.contains(':') {
            host
        } else {
            format!("{host}:80")
        };
        let mut headers = Vec::new();
        if let Some(h) =
            get("OTEL_EXPORTER_OTLP_METRICS_HEADERS").or_else(|| get("OTEL_EXPORTER_OTLP_HEADERS"))
        {
            for pair in h.split(',').filter(|p| !p.trim().is_empty()) {
                match pair.split_once('=') {
                    Some((k, v)) if !k.trim().is_empty() => {
                        headers.push((k.trim().to_string(), percent_decode(v.trim())))
                    }
                    _ => bad.push(
                        "OTEL_EXPORTER_OTLP_HEADERS: each header is key=value, separated by commas"
                            .into(),
                    ),
                }
            }
        }
        let interval = match get("OTEL_METRIC_EXPORT_INTERVAL") {
            Some(ms) => match ms.trim().parse::<u64>() {
                Ok(ms) if ms >= 100 => Duration::from_millis(ms),
                _ => {
                    bad.push(format!(
                        "OTEL_METRIC_EXPORT_INTERVAL={ms}: milliseconds, at least 100"
                    ));
                    Duration::from_secs(10)
                }
            },
            None => Duration::from_secs(10),
        };
        if !bad.is_empty() {
            return Err(bad);
        }
        Ok(OtlpConfig {
            host,
            path,
            headers,
            interval,
            service: get("OTEL_SERVICE_NAME").unwrap_or_else(|| "yace".into()),
            timeout: Duration::from_secs(2),
        })
    }

    /// The endpoint as messages show it.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.host, self.path)
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The pushing thread.
#[derive(Debug)]
pub struct Otlp {
    cfg: OtlpConfig,
    info: Info,
    figures: Arc<Mutex<Figures>>,
    started_ns: u64,
    done: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    failed: Arc<AtomicU64>,
    last_error: Arc<Mutex<Option<String>>>,
    thread: Option<JoinHandle<()>>,
}

fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl Otlp {
    /// CPU seconds its pushing thread has used so far.
    pub fn cpu_s(&self) -> f64 {
        self.thread
            .as_ref()
            .and_then(host::thread_cpu_s_of)
            .unwrap_or(0.0)
    }

    /// Starts pushing `figures` every interval.
    pub fn start(cfg: OtlpConfig, info: Info, figures: Arc<Mutex<Figures>>) -> io::Result<Otlp> {
        let started_ns = unix_ns();
        let done = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicU64::new(0));
        let failed = Arc::new(AtomicU64::new(0));
        let last_error = Arc::new(Mutex::new(None));
        let (c, i, f, d, s, fl, le) = (
            cfg.clone(),
            info.clone(),
            figures.clone(),
            done.clone(),
            sent.clone(),
            failed.clone(),
            last_error.clone(),
        );
        let thread = std::thread::Builder::new()
            .name("yace-otlp".into())
            .spawn(move || {
                let mut next = Instant::now() + c.interval;
                while !d.load(Ordering::SeqCst) {
                    if Instant::now() < next {
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                    next += c.interval;
                    let snap = f.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    push_counted(&c, &i, &snap, started_ns, &s, &fl, &le);
                }
            })?;
        Ok(Otlp {
            cfg,
            info,
            figures,
            started_ns,
            done,
            sent,
            failed,
            last_error,
            thread: Some(thread),
        })
    }

    /// Stops the thread and pushes the final figures once; says how it went
    /// (`None`: every push arrived).
    pub fn finish(mut self) -> Option<String> {
        self.done.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let snap = self
            .figures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        push_counted(
            &self.cfg,
            &self.info,
            &snap,
            self.started_ns,
            &self.sent,
            &self.failed,
            &self.last_error,
        );
        let failed = self.failed.load(Ordering::SeqCst);
        let all = failed + self.sent.load(Ordering::SeqCst);
        (failed > 0).then(|| {
            format!(
                "OTLP: {failed} of {all} pushes to {} failed (last: {})",
                self.cfg.url(),
                self.last_error
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone()
                    .unwrap_or_default()
            )
        })
    }
}

fn push_counted(
    cfg: &OtlpConfig,
    info: &Info,
    f: &Figures,
    start_ns: u64,
    sent: &AtomicU64,
    failed: &AtomicU64,
    last: &Mutex<Option<String>>,
) {
    let body = encode(info, f, &cfg.service, start_ns, unix_ns());
    match post(cfg, &body) {
        Ok(()) => {
            sent.fetch_add(1, Ordering::SeqCst);
        }
        Err(e) => {
            failed.fetch_add(1, Ordering::SeqCst);
            *last.lock().unwrap_or_else(|e| e.into_inner()) = Some(e.to_string());
        }
    }
}

fn post(cfg: &OtlpConfig, body: &[u8]) -> io::Result<()> {
    let addr: SocketAddr = cfg
        .host
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::other(format!("{}: no address", cfg.host)))?;
    let mut s = TcpStream::connect_timeout(&addr, cfg.timeout)?;
    s.set_read_timeout(Some(cfg.timeout))?;
    s.set_write_timeout(Some(cfg.timeout))?;
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-protobuf\r\nContent-Length: {}\r\nConnection: close\r\n",
        cfg.path,
        cfg.host,
        body.len()
    );
    for (k, v) in &cfg.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    let mut buf = [0u8; 512];
    let n = s.read(&mut buf)?;
    let status = String::from_utf8_lossy(&buf[..n]);
    let code = status.split_whitespace().nth(1).unwrap_or("");
    if code.starts_with('2') {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "HTTP {}",
            status.lines().next().unwrap_or("no answer")
        )))
    }
}

fn kv(key: &str, value: &str) -> Msg {
    let mut any = Msg::default();
    any.string(1, value);
    let mut m = Msg::default();
    m.string(1, key).msg(2, &any);
    m
}

/// A point: attributes, start and time, a double value.
fn point(attrs: &[(&str, &str)], start: u64, now: u64, v: f64) -> Msg {
    let mut p = Msg::default();
    for (k, val) in attrs {
        p.msg(7, &kv(k, val));
    }
    p.fixed64(2, start).fixed64(3, now).double(4, v);
    p
}

fn metric(name: &str, desc: &str, unit: &str) -> Msg {
    let mut m = Msg::default();
    m.string(1, name).string(2, desc).string(3, unit);
    m
}

/// A cumulative monotonic sum of points.
fn sum(name: &str, desc: &str, unit: &str, points: &[Msg]) -> Msg {
    let mut s = Msg::default();
    for p in points {
        s.msg(1, p);
    }
    s.uint(2, 2).boolean(3, true); // CUMULATIVE, monotonic
    let mut m = metric(name, desc, unit);
    m.msg(7, &s);
    m
}

fn gauge(name: &str, desc: &str, unit: &str, p: Msg) -> Msg {
    let mut g = Msg::default();
    g.msg(1, &p);
    let mut m = metric(name, desc, unit);
    m.msg(5, &g);
    m
}

/// The request body: one resource (the service, the run's target and
/// model), one scope (yace), the metrics.
pub fn encode(info: &Info, f: &Figures, service: &str, start: u64, now: u64) -> Vec<u8> {
    let one = |v: f64| vec![point(&[], start, now, v)];
    let mut metrics = vec![
        sum(
            "yace.responses",
            "Complete responses, any status.",
            "{response}",
            &one(f.responses as f64),
        ),
        sum(
            "yace.errors",
            "Failed requests, all classes.",
            "{request}",
            &one(f.errors as f64),
        ),
        sum(
            "yace.dropped_requests",
            "Open model: requests not sent in time.",
            "{request}",
            &one(f.dropped as f64),
        ),
        sum(
            "yace.received",
            "Bytes received.",
            "By",
            &one(f.bytes_in as f64),
        ),
        sum("yace.sent", "Bytes sent.", "By", &one(f.bytes_out as f64)),
        sum(
            "yace.connections_opened",
            "Connections established.",
            "{connection}",
            &one(f.connections as f64),
        ),
        sum(
            "yace.client.cpu_time",
            "CPU time of the client's worker threads.",
            "s",
            &one(f.client_cpu_s),
        ),
    ];
    let statuses: Vec<Msg> = f
        .statuses
        .iter()
        .enumerate()
        .map(|(i, n)| point(&[("class", &format!("{}xx", i + 1))], start, now, *n as f64))
        .collect();
    metrics.push(sum(
        "yace.responses_by_status",
        "Responses by status class.",
        "{response}",
        &statuses,
    ));
    let classes: BTreeMap<&str, u64> = f.failures.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    if !classes.is_empty() {
        let pts: Vec<Msg> = classes
            .iter()
            .map(|(c, n)| point(&[("class", c)], start, now, *n as f64))
            .collect();
        metrics.push(sum(
            "yace.errors_by_class",
            "Failed requests by class.",
            "{request}",
            &pts,
        ));
    }
    metrics.push(gauge(
        "yace.responses_per_second",
        "Responses in the last full second.",
        "{response}/s",
        point(&[], start, now, f.rate),
    ));
    metrics.push(gauge(
        "yace.requests_in_flight",
        "Requests in flight (mean of the last full second).",
        "{request}",
        point(&[], start, now, f.in_flight),
    ));
    if let Some(u) = f.users {
        metrics.push(gauge(
            "yace.users",
            "Virtual users inside their window.",
            "{user}",
            point(&[], start, now, u),
        ));
    }
    if let Some(l) = f.lag_p99_s {
        metrics.push(gauge(
            "yace.schedule_lag.p99",
            "How late the last second's requests were sent (p99).",
            "s",
            point(&[], start, now, l),
        ));
    }
    // Latency: a summary (count, sum, the last full second's quantiles).
    let mut sp = Msg::default();
    sp.fixed64(2, start)
        .fixed64(3, now)
        .fixed64(4, f.responses)
        .double(5, f.latency_sum_s);
    if let Some(q) = f.latency {
        for (quantile, v) in [0.5, 0.9, 0.99, 1.0].into_iter().zip(q) {
            let mut vq = Msg::default();
            vq.double(1, quantile).double(2, v);
            sp.msg(6, &vq);
        }
    }
    let mut summary = Msg::default();
    summary.msg(1, &sp);
    let mut lat = metric(
        "yace.latency",
        "Latency of responses: count and sum since the start, quantiles of the last full second.",
        "s",
    );
    lat.msg(11, &summary);
    metrics.push(lat);

    let mut scope = Msg::default();
    scope.string(1, "yace").string(2, env!("CARGO_PKG_VERSION"));
    let mut sm = Msg::default();
    sm.msg(1, &scope);
    for m in &metrics {
        sm.msg(2, m);
    }
    let mut resource = Msg::default();
    resource
        .msg(1, &kv("service.name", service))
        .msg(1, &kv("yace.target", &info.target))
        .msg(1, &kv("yace.model", &info.model));
    let mut rm = Msg::default();
    rm.msg(1, &resource).msg(2, &sm);
    let mut req = Msg::default();
    req.msg(1, &rm);
    req.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_configures_it_and_headers_are_never_shown() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(a, _)| *a == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let c = OtlpConfig::from_env(env(&[])).unwrap();
        assert_eq!(c.url(), "http://localhost:4318/v1/metrics");
        let c = OtlpConfig::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9999/"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "authorization=Bearer%20s3cret,x-a=b",
            ),
            ("OTEL_METRIC_EXPORT_INTERVAL", "500"),
        ]))
        .unwrap();
        assert_eq!(c.url(), "http://127.0.0.1:9999/v1/metrics");
        assert_eq!(
            c.headers[0],
            ("authorization".into(), "Bearer s3cret".into())
        );
        assert_eq!(c.interval, Duration::from_millis(500));
        assert!(!format!("{c:?}").contains("s3cret"));
        let bad = OtlpConfig::from_env(env(&[
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                "https://x/v1/metrics",
            ),
            ("OTEL_METRIC_EXPORT_INTERVAL", "soon"),
        ]))
        .unwrap_err();
        assert_eq!(bad.len(), 3, "{bad:?}");
    }
}
