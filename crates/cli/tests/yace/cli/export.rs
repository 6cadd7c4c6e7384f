//! Metrics out while a run goes on (issue #21): the `--prometheus`
//! endpoint parsed by Prometheus' own Python parser, `--otlp` decoded by
//! OpenTelemetry's own protobuf classes; their counters equal the result's.
//! The readers live in a venv scripts/test.sh makes (YACE_METRICS_PYTHON).

use crate::cli::{server, settled, stderr, temp_path, u, yace};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const HERE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/yace/cli/export");

fn python() -> String {
    // Relative to the repository (tests run in crates/cli).
    let py = std::env::var("YACE_METRICS_PYTHON").map_or_else(
        |_| "python3".into(),
        |p| {
            let p = std::path::PathBuf::from(p);
            if p.is_absolute() {
                p
            } else {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../..")
                    .join(p)
            }
            .display()
            .to_string()
        },
    );
    let ok = Command::new(&py)
        .args(["-c", "import prometheus_client, opentelemetry.proto"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{py} lacks prometheus_client and opentelemetry-proto: run scripts/test.sh, \
         which makes their venv and sets YACE_METRICS_PYTHON"
    );
    py
}

/// GET /metrics; None while nothing listens.
fn scrape(port: u16) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.contains("application/openmetrics-text; version=1.0.0"),
        "{head}"
    );
    Some(body.to_string())
}

/// The exposition, parsed strictly by prometheus_client.
fn parsed(py: &str, text: &str) -> Value {
    let mut c = Command::new(py)
        .arg(format!("{HERE}/parse_openmetrics.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = c.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "not OpenMetrics: {}\n{text}",
        stderr(&out)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

#[test]
fn the_prometheus_endpoint_parses_and_ends_on_the_results_counters() {
    let py = python();
    let s = server();
    let json = temp_path("prometheus.json");
    let _ = std::fs::remove_file(&json);
    // Port 0: the endpoint binds any free port and says which on stderr
    // ("yace: metrics for Prometheus at URL"), read as it comes.
    let mut child = yace()
        .args(["run", &s.url(), "--rate", "200", "-d", "3s", "-q"])
        .args(["--prometheus", "0", "--prometheus-linger", "3s"])
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (said, heard) = std::sync::mpsc::channel();
    let err = child.stderr.take().unwrap();
    let stderr_reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let port = line
                .split_once("metrics for Prometheus at http://127.0.0.1:")
                .and_then(|(_, rest)| rest.strip_suffix("/metrics"))
                .and_then(|p| p.parse::<u16>().ok());
            if let Some(port) = port {
                let _ = said.send(port);
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let port = heard
        .recv_timeout(Duration::from_secs(10))
        .expect("yace said where the metrics are");
    // While it runs: counters parse, and never go down.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen: Vec<f64> = Vec::new();
    while !json.exists() {
        assert!(Instant::now() < deadline, "the run did not end");
        if let Some(text) = scrape(port) {
            let m = parsed(&py, &text);
            seen.push(f(&m, "yace_responses_total"));
            let info = m
                .as_object()
                .unwrap()
                .keys()
                .find(|k| k.starts_with("yace_run_info"));
            assert!(
                info.is_some_and(
                    |k| k.contains("model=open") && k.contains("target=http://127.0.0.1:")
                ),
                "{m}"
            );
        }
        std::thread::sleep(Duration::from_millis(400));
    }
    assert!(seen.len() >= 3, "scraped {} times", seen.len());
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    // After the run (the JSON is written, the endpoint lingers): the
    // result's own figures.
    std::thread::sleep(Duration::from_millis(300));
    let text = scrape(port).expect("still served while it lingers");
    let m = parsed(&py, &text);
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        f(&m, "yace_responses_total"),
        u(&r, "summary.responses") as f64
    );
    assert_eq!(f(&m, "yace_responses_total"), 600.0);
    assert_eq!(f(&m, "yace_errors_total"), u(&r, "summary.errors") as f64);
    assert_eq!(
        f(&m, "yace_received_bytes_total"),
        u(&r, "summary.bytes_in") as f64
    );
    assert_eq!(f(&m, "yace_latency_seconds_count"), 600.0);
    assert_eq!(f(&m, "yace_responses_by_status_total{class=2xx}"), 600.0);
    // What exporting cost, on the exporters' own thread clocks.
    assert!(
        r["client"]["extras_cpu_s"]["exporters"]
            .as_f64()
            .is_some_and(|c| c > 0.0),
        "{}",
        r["client"]
    );
    assert!(text.contains("finished=\"true\""), "{text}");
    let status = child.wait().unwrap();
    let said = stderr_reader.join().unwrap();
    assert!(status.success(), "{said}");
    assert_eq!(settled(&s).requests, 600);
    // Gone after the linger.
    assert!(scrape(port).is_none());
}

#[test]
fn otlp_pushes_what_opentelemetry_decodes_with_its_headers_and_no_secret_shown() {
    let py = python();
    let s = server();
    let log = temp_path("otlp.jsonl");
    let _ = std::fs::remove_file(&log);
    let mut sink = Command::new(&py)
        .arg(format!("{HERE}/otlp_sink.py"))
        .args(["--port", "0", "--seconds", "30"])
        .arg("--out")
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // "ready PORT\n" once it listens (on a port of its choosing); its
    // stdout stays open until it is killed.
    let mut said = std::io::BufReader::new(sink.stdout.take().unwrap());
    let mut ready = String::new();
    std::io::BufRead::read_line(&mut said, &mut ready).unwrap();
    let port: u16 = ready
        .strip_prefix("ready ")
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("the sink said {ready:?}"));
    let json = temp_path("otlp.json");
    let out = yace()
        .args(["run", &s.url(), "--rate", "200", "-d", "3s", "-q", "--otlp"])
        .arg("--json")
        .arg(&json)
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{port}"),
        )
        .env(
            "OTEL_EXPORTER_OTLP_HEADERS",
            "authorization=Bearer%20s3cret-token",
        )
        .env("OTEL_METRIC_EXPORT_INTERVAL", "500")
        .env("OTEL_SERVICE_NAME", "shop-test")
        .output()
        .unwrap();
    let _ = sink.kill();
    let _ = sink.wait();
    drop(said);
    assert!(out.status.success(), "{}", stderr(&out));
    let pushes: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Every 0.5 s for 3 s, and the last one at the end.
    assert!(
        pushes.len() >= 4,
        "{} pushes: {}",
        pushes.len(),
        stderr(&out)
    );
    let last = pushes.last().unwrap();
    assert_eq!(last["path"], "/v1/metrics");
    assert_eq!(last["content_type"], "application/x-protobuf");
    assert_eq!(last["authorization"], "Bearer s3cret-token");
    assert_eq!(last["resource"]["service.name"], "shop-test");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let point = |name: &str| -> f64 {
        last["metrics"][name]["dataPoints"][0]["asDouble"]
            .as_f64()
            .unwrap_or_else(|| panic!("{name}: {}", last["metrics"]))
    };
    assert_eq!(point("yace.responses"), u(&r, "summary.responses") as f64);
    assert_eq!(point("yace.responses"), 600.0);
    assert_eq!(point("yace.received"), u(&r, "summary.bytes_in") as f64);
    assert_eq!(last["metrics"]["yace.responses"]["isMonotonic"], true);
    assert_eq!(
        last["metrics"]["yace.responses"]["aggregationTemporality"],
        "AGGREGATION_TEMPORALITY_CUMULATIVE"
    );
    assert_eq!(last["metrics"]["yace.latency"]["kind"], "summary");
    // Counters never go down from one push to the next.
    let counts: Vec<f64> = pushes
        .iter()
        .filter_map(|p| p["metrics"]["yace.responses"]["dataPoints"][0]["asDouble"].as_f64())
        .collect();
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    // The header's secret reaches the collector only.
    let shown = format!(
        "{}{}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out),
        std::fs::read_to_string(&json).unwrap()
    );
    assert!(!shown.contains("s3cret"), "the OTLP header leaked");
    assert_eq!(settled(&s).requests, 600);
}

#[test]
fn bad_exporter_settings_are_said_together() {
    let out = yace()
        .args([
            "run",
            "http://127.0.0.1:1/",
            "-d",
            "1s",
            "--prometheus",
            "nowhere:x",
        ])
        .args(["--prometheus-linger", "soon", "--otlp"])
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    for want in [
        "--prometheus nowhere:x: not an address",
        "--prometheus-linger soon: not a duration",
        "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
    ] {
        assert!(e.contains(want), "{want}: {e}");
    }
}
