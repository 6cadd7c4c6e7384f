//! The pre-flight against real `yace serve` processes (plain and `--tls`):
//! a TLS or protocol mismatch ends `yace run` before any load with one
//! line, its fix and exit 1, over HTTP/1.1 and HTTP/2; the server's own
//! count shows no request arrived. Plain `http://` over HTTP/1.1 has no
//! exchange that would not be a request, so that mismatch is a run of
//! errors, which exits 1 and names the fix (`use https://`).

use super::{stderr, yace};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

/// `yace serve --port 0` in its own process, stopped by its PID on drop.
struct Served {
    child: Child,
    /// As it announced it: `http://127.0.0.1:PORT/` or `https://…`.
    url: String,
    /// `--tls`: its certificate, for `--cacert`.
    ca: Option<PathBuf>,
}

impl Served {
    fn start(tls: bool) -> Served {
        let ca = tls.then(|| super::temp_path(&format!("preflight-ca-{}.pem", std::process::id())));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_yace"));
        cmd.args(["serve", "--port", "0", "--threads", "1"]);
        if let Some(ca) = &ca {
            cmd.arg("--tls").arg("--tls-cert-out").arg(ca);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start yace serve");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("yace serve ended before it listened")
                .unwrap();
            if let Some(url) = line.strip_prefix("yace serve: listening on ") {
                break url.to_owned();
            }
        };
        Served { child, url, ca }
    }

    fn addr(&self) -> String {
        let rest = self.url.split("://").nth(1).unwrap();
        rest.trim_end_matches('/').to_owned()
    }

    /// The URL on the other scheme, same port: the mismatch.
    fn other_scheme(&self) -> String {
        match self.url.strip_prefix("https://") {
            Some(rest) => format!("http://{rest}"),
            None => format!("https://{}", self.url.strip_prefix("http://").unwrap()),
        }
    }

    /// Requests the server has answered (HTTP/2's included), from its
    /// `/_stats` (which it does not count).
    fn requests(&self) -> u64 {
        let tcp = std::net::TcpStream::connect(self.addr()).unwrap();
        let req = format!(
            "GET /_stats HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addr()
        );
        let mut text = String::new();
        match &self.ca {
            None => {
                let mut s = tcp;
                s.write_all(req.as_bytes()).unwrap();
                s.read_to_string(&mut text).unwrap();
            }
            Some(ca) => {
                let opts = plan::TlsOptions {
                    cacert: Some(ca.clone()),
                    ..plan::TlsOptions::default()
                };
                let setup = engine::tls::setup(&opts, "127.0.0.1", false).unwrap();
                let mut s = setup.handshake(tcp).unwrap();
                s.write_all(req.as_bytes()).unwrap();
                // The server may end without close_notify: what came is enough.
                let _ = s.read_to_string(&mut text);
            }
        }
        let body = &text[text.find("\r\n\r\n").expect("a response") + 4..];
        let v: serde_json::Value = serde_json::from_str(body.trim()).expect(body);
        v["requests"].as_u64().unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `yace run URL -c 2 -n 20 EXTRA` (`-n` as given in `extra` if there).
fn run(url: &str, extra: &[&str]) -> Output {
    let n: &[&str] = if extra.contains(&"-n") {
        &[]
    } else {
        &["-n", "20"]
    };
    yace()
        .args(["run", url, "-c", "2", "-t", "1"])
        .args(n)
        .args(extra)
        .output()
        .unwrap()
}

/// The run ended before any load: exit 1, no summary, one `error:` line
/// that names the outcome class and the fix.
fn stopped_before_load(o: &Output, class: &str, fix: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "", "no summary: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {err}");
    assert!(
        lines[0].starts_with("error: ") && lines[0].contains("no load sent"),
        "{err}"
    );
    assert!(lines[0].contains(class), "{class}: {err}");
    assert!(lines[0].contains(fix), "{fix}: {err}");
}

#[test]
fn https_to_a_tls_port_without_its_ca_stops_before_load() {
    let tls = Served::start(true);
    for h2 in [&[][..], &["--http2"]] {
        let o = run(&tls.url, h2);
        stopped_before_load(&o, "tls_unknown_ca", "--cacert FILE");
        assert!(stderr(&o).contains("--insecure for a test box"));
    }
    assert_eq!(tls.requests(), 0, "no request reached the server");
    // Must not fire: with its CA, both protocols run and are verified.
    let ca = tls.ca.as_ref().unwrap().to_str().unwrap();
    for h2 in [&[][..], &["--http2"]] {
        let o = run(&tls.url, &[&["--cacert", ca], h2].concat());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains("certificate verified"));
    }
    assert_eq!(tls.requests(), 40);
}

#[test]
fn https_to_a_plain_port_stops_before_load() {
    let plain = Served::start(false);
    let https = plain.other_scheme();
    for h2 in [&[][..], &["--http2"]] {
        let o = run(&https, h2);
        stopped_before_load(&o, "tls_not_tls", &format!("use {}", plain.url));
    }
    // Each pre-flight's ClientHello reached it as one unreadable request
    // (a run would have sent 20 of them), and nothing else did.
    assert_eq!(plain.requests(), 2);
    // Must not fire: http:// to it runs, over HTTP/1.1 and h2c.
    for h2 in [&[][..], &["--http2"]] {
        let o = run(&plain.url, h2);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    assert_eq!(plain.requests(), 42);
}

#[test]
fn http_to_a_tls_port_over_http2_stops_before_load() {
    let tls = Served::start(true);
    let http = tls.other_scheme();
    let o = run(&http, &["--http2"]);
    stopped_before_load(&o, "protocol_error", &format!("use {}", tls.url));
    assert_eq!(tls.requests(), 0);
}

#[test]
fn http_to_a_tls_port_over_http1_is_a_failed_run_that_names_the_fix() {
    let tls = Served::start(true);
    let http = tls.other_scheme();
    let o = run(&http, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    // A run was made (its summary says what happened) and every request failed.
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("20 errors") && out.contains("protocol_error"),
        "{out}"
    );
    assert!(
        err.contains("error: every request failed (20 errors, not one response)"),
        "{err}"
    );
    assert!(err.contains(&format!("use {}", tls.url)), "{err}");
}

#[test]
fn a_run_made_only_of_errors_exits_1_and_one_with_a_response_does_not() {
    let plain = Served::start(false);
    // Every request times out: the server delays each answer past --timeout.
    let slow = format!("{}sleep?ms=2000", plain.url);
    let o = run(&slow, &["--timeout", "100ms", "-n", "2"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("every request failed (2 errors, not one response)"),
        "{err}"
    );
    assert!(err.contains("most were timeout"), "{err}");
    assert!(!err.contains("speaks TLS"), "{err}");
    // Must not fire: error statuses are responses, not failed requests.
    let o = run(&format!("{}status/503", plain.url), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("every request failed"));
}
