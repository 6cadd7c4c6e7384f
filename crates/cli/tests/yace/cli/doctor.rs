//! `yace doctor`: the real binary, the real embedded target, this machine's
//! real limits.

use crate::cli::{server, settled, stdout, yace};
use serde_json::Value;

/// The checklist line of check `name` (`level  name  finding`).
fn line<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("no '{name}' line in:\n{out}"))
}

#[test]
fn probes_the_embedded_target_once_and_times_it() {
    let s = server();
    let out = yace().args(["doctor", &s.url()]).output().unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let probe = line(&text, "probe");
    assert!(
        probe.starts_with("ok    probe       HTTP/1.1 200 OK in "),
        "{text}"
    );
    let phases = text
        .lines()
        .find(|l| l.starts_with("      dns "))
        .unwrap_or_else(|| panic!("no phases line in:\n{text}"));
    for phase in ["connect ", "wait (TTFB) ", "receive ", "total "] {
        assert!(phases.contains(phase), "no {phase}in: {phases}");
    }
    assert_eq!(phases.matches(" ms").count(), 5, "{phases}");
    assert!(
        text.contains("server: yace-target/")
            && text.contains("body: 12 bytes (Content-Length: 12)"),
        "{text}"
    );
    assert!(text.contains("keep-alive: yes"), "{text}");
    // Client and server share this machine: said, with the pinning fix.
    let target = line(&text, "target");
    assert!(target.contains("is local (loopback)"), "{text}");
    if target.starts_with("warn") {
        assert!(text.contains("taskset -c "), "{text}");
    }
    // One request, no more.
    let seen = settled(&s);
    assert_eq!(
        (seen.requests, seen.connections),
        (1, 1),
        "server saw {seen:?}"
    );
}

#[test]
fn a_closed_port_fails_with_the_refused_explanation() {
    // A port that nothing listens on, held so that nothing can.
    let closed = crate::support::ClosedPort::new();
    let out = yace().args(["doctor", &closed.url()]).output().unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let probe = line(&text, "probe");
    assert_eq!(
        probe,
        format!(
            "fail  probe       connect_refused: {}",
            engine::Outcome::ConnectRefused.explain()
        ),
        "{text}"
    );
    assert!(text.contains("      fix: curl -sv"), "{text}");
    assert!(text.trim_end().ends_with("(exit 1)"), "{text}");
}

#[test]
fn an_unknown_host_fails_the_target_check() {
    let out = yace()
        .args(["doctor", "http://no-such-host.invalid/"])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        line(&text, "target")
            .starts_with("fail  target      cannot resolve host 'no-such-host.invalid'"),
        "{text}"
    );
}

#[test]
fn a_million_connections_need_a_higher_fd_limit() {
    let out = yace().args(["doctor", "-c", "1000000"]).output().unwrap();
    let text = stdout(&out);
    let files = line(&text, "open_files");
    assert!(
        files.starts_with("warn  open_files") || files.starts_with("fail  open_files"),
        "{text}"
    );
    assert!(
        files.contains("the 1,000,064 yace needs (1,000,000 connections + 64)"),
        "{text}"
    );
    // The fix line right under it names the command.
    let after: Vec<&str> = text.lines().skip_while(|l| *l != files).collect();
    assert!(
        after[1].starts_with("      fix: ulimit -") && after[1].contains("-n "),
        "{text}"
    );
    // No port range holds a million connections to one address: a failure, exit 1.
    assert!(line(&text, "ports").starts_with("fail"), "{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
}

#[test]
fn bad_input_is_exit_2() {
    let out = yace().args(["doctor", "-c", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = yace()
        .args(["doctor", "http://exa mple/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        crate::cli::stderr(&out).starts_with("error: URL: "),
        "{}",
        crate::cli::stderr(&out)
    );
}

#[test]
fn json_output_parses_and_matches_the_exit_code() {
    let s = server();
    let out = yace()
        .args(["doctor", &s.url(), "--json", "-c", "200", "--no-keepalive"])
        .output()
        .unwrap();
    let v: Value =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    assert_eq!(v["schema"], "yace.doctor.v1");
    assert_eq!(v["plan"]["connections"], 200);
    assert_eq!(v["plan"]["keepalive"], false);
    assert_eq!(v["target"]["local"], true);
    assert_eq!(v["probe"]["ok"], true);
    assert_eq!(v["probe"]["status"], 200);
    assert_eq!(v["probe"]["content_length"], 12);
    assert!(
        v["probe"]["phases_ms"]["total"].as_f64().unwrap() > 0.0,
        "{v}"
    );
    let checks = v["checks"].as_array().unwrap();
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    for n in [
        "open_files",
        "ports",
        "time_wait",
        "somaxconn",
        "cpus",
        "target",
        "probe",
    ] {
        assert!(names.contains(&n), "{names:?}");
    }
    for c in checks {
        let level = c["level"].as_str().unwrap();
        assert!(["ok", "warn", "fail"].contains(&level), "{c}");
        // Every warning and failure says how to fix it.
        assert!(
            level == "ok" || !c["fix"].as_array().unwrap().is_empty(),
            "{c}"
        );
    }
    // Without keep-alive the TIME_WAIT check uses a rate estimated from the probe.
    let tw = checks.iter().find(|c| c["name"] == "time_wait").unwrap();
    assert!(
        tw["finding"]
            .as_str()
            .unwrap()
            .contains("estimated from the probe"),
        "{tw}"
    );
    let fails = v["summary"]["fail"].as_u64().unwrap();
    assert_eq!(v["exit_code"].as_u64(), Some(u64::from(fails > 0)));
    assert_eq!(out.status.code(), Some(i32::from(fails > 0)));
}

#[test]
fn probes_https_as_yace_run_does() {
    // The same certificate checks as yace run: unknown CA without --cacert,
    // a timed handshake with it.
    let id = serve::TlsIdentity::self_signed().unwrap();
    let ca = crate::cli::temp_path("doctor-ca.pem");
    std::fs::write(&ca, &id.cert_pem).unwrap();
    let s = serve::Server::start(serve::Config {
        tls: Some(id),
        ..Default::default()
    })
    .unwrap();
    let url = format!("https://localhost:{}/", s.local_addr().port());
    let out = yace()
        .args(["doctor", &url, "--cacert", ca.to_str().unwrap()])
        .output()
        .unwrap();
    let text = stdout(&out);
    let probe = line(&text, "probe");
    assert!(
        probe.starts_with("ok    probe       HTTP/1.1 200 OK in "),
        "{text}"
    );
    let phases = text
        .lines()
        .find(|l| l.starts_with("      dns "))
        .unwrap_or_else(|| panic!("no phases line in:\n{text}"));
    assert!(phases.contains("  tls "), "{phases}");
    let out = yace().args(["doctor", &url]).output().unwrap();
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        line(&text, "probe").starts_with("fail  probe       tls_unknown_ca"),
        "{text}"
    );
    assert!(text.contains("--cacert"), "{text}");
    // The server saw one request: the verified probe's.
    assert_eq!(settled(&s).requests, 1);
}
