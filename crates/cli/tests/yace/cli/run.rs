//! `yace run` against the embedded target: counts, statuses, framing,
//! keep-alive and timing, checked on both sides.

use crate::cli::{run_json, server, settled, stdout, u, yace};
use std::time::{Duration, Instant};

#[test]
fn request_count_is_exact_at_the_server() {
    let s = server();
    let url = s.url();
    for threads in ["1", "3"] {
        s.reset_stats();
        let (out, r) = run_json("count", &[&url, "-c", "10", "-n", "5k", "-t", threads]);
        assert!(out.status.success(), "{}", crate::cli::stderr(&out));
        let seen = settled(&s);
        assert_eq!(u(&r, "summary.responses"), 5000, "threads {threads}");
        assert_eq!(u(&r, "summary.requests"), 5000);
        assert_eq!(u(&r, "summary.errors"), 0);
        assert_eq!(seen.requests, 5000, "server saw {seen:?}");
        assert_eq!(seen.by_route.get("/"), Some(&5000));
        assert_eq!(r["statuses"]["200"], 5000);
        assert_eq!(r["end"]["reason"], "completed");
        assert_eq!(r["end"]["partial"], false);
        assert_eq!(u(&r, "summary.body_length.first"), 12);
        assert_eq!(u(&r, "summary.body_bytes"), 12 * 5000);
        // Keep-alive: one connection per slot (plus the probe), not per request.
        assert!(seen.connections <= 11, "connections {}", seen.connections);
        let series_total: u64 = r["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row["responses"].as_u64().unwrap())
            .sum();
        assert_eq!(series_total, 5000, "the per-second series adds up");
    }
    s.shutdown();
}

#[test]
fn more_connections_than_requests_still_sends_exactly_n() {
    let s = server();
    let (out, r) = run_json("few", &[&s.url(), "-c", "100", "-n", "7", "-t", "2"]);
    assert!(out.status.success());
    assert_eq!(u(&r, "summary.responses"), 7);
    assert_eq!(settled(&s).requests, 7);
    s.shutdown();
}

#[test]
fn no_keepalive_opens_a_connection_per_request() {
    let s = server();
    let (out, r) = run_json(
        "close",
        &[&s.url(), "-c", "4", "-n", "300", "--no-keepalive"],
    );
    assert!(out.status.success(), "{}", crate::cli::stderr(&out));
    let seen = settled(&s);
    assert_eq!(u(&r, "summary.responses"), 300);
    assert_eq!(u(&r, "summary.connections_opened"), 300);
    assert_eq!(u(&r, "summary.reused_connections"), 0);
    assert_eq!(seen.requests, 300);
    // 300 for the requests and 1 for the reachability probe.
    assert_eq!(seen.connections, 301, "{seen:?}");
    s.shutdown();
}

#[test]
fn statuses_are_counted_not_failed() {
    let s = server();
    let url = format!("{}status/503", s.url());
    let (out, r) = run_json("503", &[&url, "-c", "5", "-n", "400"]);
    assert!(out.status.success());
    assert_eq!(r["statuses"]["503"], 400);
    assert_eq!(u(&r, "summary.non_2xx"), 400);
    assert_eq!(u(&r, "summary.errors"), 0);
    assert_eq!(settled(&s).by_status.get(&503), Some(&400));
    s.shutdown();
}

#[test]
fn chunked_close_delimited_and_large_bodies_frame_correctly() {
    let s = server();
    for (path, body) in [
        ("chunked?chunks=7&size=100", 700u64),
        ("close", 19), // "closing connection\n"
        ("bytes/1000000", 1_000_000),
        ("bytes/0", 0),
    ] {
        s.reset_stats();
        let url = format!("{}{path}", s.url());
        let (out, r) = run_json("framing", &[&url, "-c", "3", "-n", "60"]);
        assert!(out.status.success(), "{path}");
        assert_eq!(u(&r, "summary.responses"), 60, "{path}: {}", r["outcomes"]);
        assert_eq!(u(&r, "summary.errors"), 0, "{path}");
        assert_eq!(u(&r, "summary.body_length.first"), body, "{path}");
        assert_eq!(u(&r, "summary.body_length.varied"), 0, "{path}");
        assert_eq!(settled(&s).requests, 60, "{path}");
    }
    s.shutdown();
}

#[test]
fn varying_lengths_are_information_not_failures() {
    let s = server();
    let url = format!("{}vary", s.url());
    let (out, r) = run_json("vary", &[&url, "-c", "4", "-n", "500", "-t", "2"]);
    assert!(out.status.success());
    assert_eq!(u(&r, "summary.errors"), 0);
    let varied = u(&r, "summary.body_length.varied");
    assert!(varied > 400 && varied < 500, "varied {varied}");
    assert!(
        stdout(&out).contains("information, not failure"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn post_with_headers_and_body_file() {
    let s = server();
    let body = crate::cli::temp_path("req.json");
    std::fs::write(&body, br#"{"hello":"world","n":12345}"#).unwrap();
    let url = format!("{}echo", s.url());
    let (out, r) = run_json(
        "post",
        &[
            &url,
            "-c",
            "2",
            "-n",
            "50",
            "-m",
            "POST",
            "-H",
            "Content-Type: application/json",
            "--body-file",
        ]
        .iter()
        .copied()
        .chain([body.to_str().unwrap()])
        .collect::<Vec<_>>(),
    );
    assert!(out.status.success(), "{}", crate::cli::stderr(&out));
    assert_eq!(u(&r, "summary.responses"), 50);
    // /echo returns the body: every response is as long as the file.
    assert_eq!(u(&r, "summary.body_length.first"), 27);
    assert_eq!(settled(&s).by_route.get("/echo"), Some(&50));
    assert_eq!(r["plan"]["request"]["method"], "POST");
    assert_eq!(r["plan"]["request"]["body_bytes"], 27);
    s.shutdown();
}

#[test]
fn duration_ends_on_time_and_in_flight_requests_are_cancelled() {
    let s = server();
    let url = format!("{}sleep?ms=300", s.url());
    let t = Instant::now();
    let (out, r) = run_json("dur", &[&url, "-c", "20", "-d", "1s"]);
    let took = t.elapsed();
    assert!(out.status.success());
    // A guard against a hang only (the 1 s run in a debug build, started
    // on a machine that may be busy): that the end waited for nothing is
    // shown by the counts below, not by the clock.
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_eq!(r["end"]["reason"], "duration");
    let d = r["summary"]["duration_s"].as_f64().unwrap();
    assert!(d >= 1.0, "duration_s {d}");
    // 20 connections × 3 rounds of 300 ms, then 20 cancelled mid-sleep:
    // the end waited for none of them (it would have made them responses).
    assert_eq!(u(&r, "summary.cancelled"), 20);
    assert_eq!(u(&r, "summary.errors"), 0);
    assert_eq!(u(&r, "summary.responses"), 60);
    // The page sleeps 300 ms: no response is timed shorter.
    let p50 = r["summary"]["latency"]["percentiles"][0]["us"]
        .as_f64()
        .unwrap();
    assert!(p50 >= 300_000.0, "p50 {p50}");
    s.shutdown();
}

#[test]
fn slow_responses_time_out_and_the_run_goes_on() {
    let s = server();
    let url = format!("{}sleep?ms=3000", s.url());
    let t = Instant::now();
    let (out, r) = run_json(
        "timeout",
        &[&url, "-c", "4", "-d", "1s", "--timeout", "200ms"],
    );
    // Not one response: the run is written, and exits 1 saying why.
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("every request failed") && err.contains("most were timeout"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_millis(2500));
    let timeouts = u(&r, "outcomes.timeout");
    // Each connection times out every ~200 ms: about 4 × 5 in one second.
    assert!((12..=24).contains(&timeouts), "timeouts {timeouts}");
    assert_eq!(u(&r, "summary.responses"), 0);
    assert!(
        stdout(&out).contains("timeout"),
        "the summary names the class"
    );
    s.shutdown();
}

#[test]
fn open_model_sends_on_schedule() {
    let s = server();
    let (out, r) = run_json("rate", &[&s.url(), "--rate", "200", "-d", "2s", "-t", "2"]);
    assert!(out.status.success(), "{}", crate::cli::stderr(&out));
    assert_eq!(u(&r, "summary.responses"), 400);
    assert_eq!(settled(&s).requests, 400);
    // Rows count responses by the second they *ended* in; on a machine shared
    // with other tests a response can slip past a boundary, so allow 10%.
    for row in r["series"].as_array().unwrap().iter().take(2) {
        let n = row["responses"].as_u64().unwrap();
        assert!((180..=220).contains(&n), "second {}: {n}", row["second"]);
    }
    assert!(
        r["summary"]["service"].is_object(),
        "open model reports service time"
    );
    s.shutdown();
}

#[test]
fn no_url_benchmarks_the_embedded_target() {
    let (out, r) = run_json("embedded", &["-d", "1s", "-c", "4", "-t", "1"]);
    assert!(out.status.success(), "{}", crate::cli::stderr(&out));
    assert!(crate::cli::stderr(&out).contains("embedded target"));
    assert_eq!(r["environment"]["embedded_target"], true);
    assert!(u(&r, "summary.responses") > 100);
    assert_eq!(u(&r, "summary.errors"), 0);
}

#[test]
fn dry_run_prints_the_plan_and_sends_nothing() {
    let s = server();
    let out = yace()
        .args(["run", &s.url(), "-c", "7", "-n", "10k", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["load"]["connections"], 7);
    assert_eq!(plan["stop"]["requests"], 10000);
    assert_eq!(settled(&s).connections, 0);
    s.shutdown();
}

#[test]
fn live_progress_on_a_terminal_never_runs_past_the_planned_end() {
    // As a person sees it: stderr on a pty (util-linux `script`), the live
    // line redrawn with \r. A 2 s run must not end on "3s" and a near-zero
    // rate from the few milliseconds of its tail.
    let s = server();
    // --no-tui: the line, not the dashboard (the default on a terminal).
    let cmd = format!(
        "{} run {} -c 2 -d 2s --no-tui",
        env!("CARGO_BIN_EXE_yace"),
        s.url()
    );
    let out = std::process::Command::new("script")
        .args(["-qfec", &cmd, "/dev/null"])
        .output()
        .expect("util-linux script(1) runs a command on a pty");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let frames: Vec<&str> = text.split('\r').filter(|f| f.contains("req/s")).collect();
    assert!(!frames.is_empty(), "no live line on a terminal:\n{text}");
    let last = frames.last().unwrap();
    let mut words = last.trim_start_matches("\x1b[K").split_whitespace();
    let at = words.next().unwrap();
    assert_eq!(at, "2s", "last live frame: {last:?}");
    let rate: u64 = words.next().unwrap().replace(',', "").parse().unwrap();
    assert!(rate > 100, "last live frame shows a tail's rate: {last:?}");
    // The summary is still printed after the live line is cleared.
    assert!(text.contains("Requests"), "{text}");
}

#[test]
fn failed_checks_fail_the_run_unless_a_checks_threshold_accepts_them() {
    let s = server();
    let dir = crate::cli::temp_path("checks");
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("checks.toml");
    // One check that always passes, one that never does, one never run
    // (its step comes after an abort).
    std::fs::write(
        &plan,
        "[load]\nusers = 1\nhold = \"1s\"\n\n[[step]]\nname = \"home\"\nurl = \"/\"\n\
         check = [{ status = 200 }, { body_contains = \"nowhere\" }]\nabort_on_fail = true\n\n\
         [[step]]\nname = \"never\"\nurl = \"/\"\ncheck = [{ status = 200 }]\n",
    )
    .unwrap();
    let (out, r) = crate::cli::run_json("checks", &["-f", plan.to_str().unwrap(), &s.url()]);
    let text = crate::cli::stdout(&out);
    assert_eq!(out.status.code(), Some(3), "{text}");
    assert!(text.contains("Checks      "), "{text}");
    assert!(
        text.contains("FAIL    checks_failed==0") || text.contains("FAIL checks_failed==0"),
        "{text}"
    );
    assert!(text.contains("not run never"), "{text}");
    let failed = r["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["expr"] == "checks_failed==0")
        .expect("the default checks threshold");
    assert_eq!(failed["passed"], false);
    // A threshold of the user's own on checks replaces the default.
    let (out, r) = crate::cli::run_json(
        "checks-ok",
        &[
            "-f",
            plan.to_str().unwrap(),
            &s.url(),
            "--threshold",
            "checks>40%",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", crate::cli::stdout(&out));
    assert_eq!(r["thresholds"].as_array().unwrap().len(), 1);
    assert_eq!(r["thresholds"][0]["unit"], "%");
    assert!(
        crate::cli::stdout(&out).contains("actual 50.00%"),
        "{}",
        crate::cli::stdout(&out)
    );
    s.shutdown();
}

#[test]
fn a_closed_model_run_says_latency_is_service_time_and_names_a_stall() {
    // Each request takes 1.5 s: some whole seconds pass without a
    // response, which a closed model's percentiles cannot show.
    let s = server();
    let url = format!("{}sleep?ms=1500", s.url());
    let (out, r) = run_json("stall", &[&url, "-c", "2", "-d", "4s"]);
    assert!(out.status.success(), "{}", crate::cli::stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Latency (service time, closed model"),
        "{text}"
    );
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("the server stalled (second") && warnings.contains("--rate"),
        "{warnings}"
    );
    // A run that kept answering every second has no such warning.
    let (_, r) = run_json("no-stall", &[&s.url(), "-c", "2", "-d", "2s"]);
    assert!(
        !r["warnings"].to_string().contains("stalled"),
        "{}",
        r["warnings"]
    );
    s.shutdown();
}

#[test]
fn graphs_are_drawn_on_a_terminal_and_in_a_pipe_only_when_asked() {
    let s = server();
    let url = s.url();
    let args = ["run", &url, "-c", "2", "-n", "2000", "-t", "1", "-q"];
    // A pipe: the summary alone.
    let out = yace().args(args).output().unwrap();
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(!text.contains("Latency histogram"), "{text}");
    // Asked for: drawn (two full seconds make a sparkline).
    let timed = ["run", &url, "-c", "2", "-d", "2100ms", "-t", "1", "-q"];
    let out = yace().args(timed).arg("--graphs").output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("Latency histogram (log scale)"), "{text}");
    assert!(text.contains("Responses/s "), "{text}");
    // A terminal (a pty from util-linux `script`): drawn by default, and
    // not with --no-graphs.
    let bin = env!("CARGO_BIN_EXE_yace");
    let on_tty = |extra: &str| {
        let cmd = format!("{bin} {} {extra}", args.join(" "));
        let out = std::process::Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .output()
            .expect("script (util-linux) runs yace on a pty");
        assert!(out.status.success(), "{}", crate::cli::stderr(&out));
        stdout(&out)
    };
    let text = on_tty("");
    assert!(text.contains("Latency histogram"), "{text}");
    let text = on_tty("--no-graphs");
    assert!(!text.contains("Latency histogram"), "{text}");
}
