//! `yace ab` against the embedded target (real stacks: tests/stacks).

use crate::cli::{server, settled, stderr, stdout, yace};
use std::time::{Duration, Instant};

fn ab(args: &[&str]) -> std::process::Output {
    yace().arg("ab").args(args).output().expect("run yace ab")
}

/// The value on a report line, e.g. `line(out, "Complete requests:")`.
fn line<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.strip_prefix(label))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no line {label:?} in:\n{out}"))
}

#[test]
fn report_has_abs_sections_in_order_and_exact_counts() {
    let s = server();
    let out = ab(&["-n", "1000", "-c", "10", &s.url()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let o = stdout(&out);
    let labels = [
        "Server Software:",
        "Server Hostname:",
        "Server Port:",
        "Document Path:",
        "Document Length:",
        "Concurrency Level:",
        "Time taken for tests:",
        "Complete requests:",
        "Failed requests:",
        "Total transferred:",
        "HTML transferred:",
        "Requests per second:",
        "Time per request:",
        "Transfer rate:",
        "Connection Times (ms)",
        "Connect:",
        "Processing:",
        "Waiting:",
        "Total:",
        "Percentage of the requests served within a certain time (ms)",
        "  50%",
        " 100%",
    ];
    let mut at = 0;
    for l in labels {
        let pos = o[at..]
            .find(l)
            .unwrap_or_else(|| panic!("{l:?} missing or out of order:\n{o}"));
        at += pos + l.len();
    }
    assert_eq!(line(&o, "Complete requests:"), "1000");
    assert_eq!(line(&o, "Failed requests:"), "0");
    assert_eq!(line(&o, "Document Length:"), "12 bytes");
    assert_eq!(line(&o, "Concurrency Level:"), "10");
    assert_eq!(line(&o, "HTML transferred:"), "12000 bytes");
    assert_eq!(
        line(&o, "Server Software:"),
        format!("yace-target/{}", env!("CARGO_PKG_VERSION"))
    );
    // Where ab writes them: the banner on stdout, progress on stderr.
    assert!(o.contains("Benchmarking 127.0.0.1 (be patient)"), "{o}");
    let e = stderr(&out);
    assert!(!e.contains("Benchmarking"), "{e}");
    assert!(
        e.contains("Completed 100 requests") && e.contains("Completed 1000 requests"),
        "{e}"
    );
    assert!(e.contains("Finished 1000 requests"), "{e}");
    let seen = settled(&s);
    assert_eq!(seen.requests, 1000);
    // Without -k, ab and yace ab open a connection per request (+1 probe).
    assert_eq!(seen.connections, 1001);
    s.shutdown();
}

#[test]
fn keepalive_reuses_connections_and_reports_them() {
    let s = server();
    let out = ab(&["-k", "-n", "500", "-c", "5", &s.url()]);
    assert!(out.status.success());
    assert_eq!(line(&stdout(&out), "Keep-Alive requests:"), "500");
    assert!(settled(&s).connections <= 6);
    s.shutdown();
}

#[test]
fn varying_length_is_not_a_failure_unless_strict() {
    let s = server();
    let url = format!("{}vary", s.url());
    let out = ab(&["-n", "300", "-c", "3", "-k", &url]);
    let o = stdout(&out);
    assert_eq!(line(&o, "Failed requests:"), "0", "{o}");
    assert!(o.contains("Document length varied ("), "{o}");
    let out = ab(&["-n", "300", "-c", "3", "-k", "--strict-length", &url]);
    let o = stdout(&out);
    let failed: u64 = line(&o, "Failed requests:").parse().unwrap();
    assert!(failed > 250, "{o}");
    assert!(
        o.contains(&format!(
            "(Connect: 0, Receive: 0, Length: {failed}, Exceptions: 0)"
        )),
        "{o}"
    );
    s.shutdown();
}

#[test]
fn t_and_n_work_in_any_order() {
    let s = server();
    for args in [["-n", "120", "-t", "5"], ["-t", "5", "-n", "120"]] {
        s.reset_stats();
        let out = ab(&[args[0], args[1], args[2], args[3], "-c", "4", &s.url()]);
        assert!(out.status.success());
        assert_eq!(line(&stdout(&out), "Complete requests:"), "120", "{args:?}");
        assert_eq!(settled(&s).requests, 120);
    }
    s.shutdown();
}

#[test]
fn time_limit_alone_runs_for_that_long() {
    let s = server();
    let t = Instant::now();
    let out = ab(&["-t", "1", "-c", "4", "-k", &s.url()]);
    assert!(out.status.success());
    assert!(t.elapsed() < Duration::from_secs(3));
    let done: u64 = line(&stdout(&out), "Complete requests:").parse().unwrap();
    assert!(done > 1000, "{done}");
    s.shutdown();
}

#[test]
fn a_slow_request_times_out_alone_and_the_report_still_prints() {
    let s = server();
    let url = format!("{}sleep?ms=5000", s.url());
    let t = Instant::now();
    let out = ab(&["-n", "4", "-c", "2", "-s", "1", &url]);
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "took {:?}",
        t.elapsed()
    );
    // Every request failed: the report prints, and the exit code says so.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("error: every request failed (4 errors, not one response)"));
    let o = stdout(&out);
    assert_eq!(line(&o, "Complete requests:"), "4");
    assert_eq!(line(&o, "Failed requests:"), "4");
    assert!(
        o.contains("(Connect: 0, Receive: 0, Length: 0, Exceptions: 4)"),
        "{o}"
    );
    assert!(o.contains("the run carried on"), "{o}");
    s.shutdown();
}

#[test]
fn post_file_with_content_type() {
    let s = server();
    let body = crate::cli::temp_path("ab-post.json");
    std::fs::write(&body, b"{\"a\":1}").unwrap();
    let url = format!("{}echo", s.url());
    let out = ab(&[
        "-n",
        "50",
        "-c",
        "5",
        "-p",
        body.to_str().unwrap(),
        "-T",
        "application/json",
        &url,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let o = stdout(&out);
    assert_eq!(line(&o, "Document Length:"), "7 bytes");
    assert_eq!(line(&o, "Total body sent:"), "350");
    assert_eq!(settled(&s).by_route.get("/echo"), Some(&50));
    s.shutdown();
}

#[test]
fn csv_gnuplot_and_html_files() {
    let s = server();
    let csv = crate::cli::temp_path("ab.csv");
    let gp = crate::cli::temp_path("ab.tsv");
    let html = crate::cli::temp_path("ab.html");
    let out = ab(&[
        "-n",
        "200",
        "-c",
        "4",
        "-k",
        "-e",
        csv.to_str().unwrap(),
        "-g",
        gp.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        &s.url(),
    ]);
    assert!(out.status.success());
    // --html: yace's own report beside ab's (ab's layout stays on stdout).
    assert!(stdout(&out).contains("Complete requests:"));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<div class=\"v\">200</div><div class=\"k\">responses</div>"));
    let c = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = c.lines().collect();
    assert_eq!(lines[0], "Percentage served,Time in ms");
    assert_eq!(lines.len(), 102);
    assert!(lines[1].starts_with("0,") && lines[101].starts_with("100,"));
    let g = std::fs::read_to_string(&gp).unwrap();
    let lines: Vec<&str> = g.lines().collect();
    assert_eq!(lines[0], "starttime\tseconds\tctime\tdtime\tttime\twait");
    assert_eq!(lines.len(), 201, "one line per request");
    assert_eq!(lines[1].split('\t').count(), 6);
    s.shutdown();
}

#[test]
fn head_requests_and_cookies() {
    let s = server();
    let url = format!("{}session", s.url());
    let out = ab(&["-n", "20", "-c", "2", "-k", "-C", "YACESESSID=abc", &url]);
    assert!(out.status.success());
    // One shared cookie: the session lock serialises, and the page names the session.
    assert_eq!(line(&stdout(&out), "Document Length:"), "12 bytes");
    let out = ab(&["-n", "20", "-c", "2", "-i", &s.url()]);
    assert_eq!(line(&stdout(&out), "Document Length:"), "0 bytes");
    assert_eq!(line(&stdout(&out), "Failed requests:"), "0");
    s.shutdown();
}

#[test]
fn unsupported_options_are_clear_errors() {
    let out = ab(&["-f", "TLS1.2", "-n", "1", "http://127.0.0.1:1/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("-f: 'TLS1.2' cannot be forced"),
        "{}",
        stderr(&out)
    );
    let out = ab(&["-Z", "AES128-SHA", "-n", "1", "http://127.0.0.1:1/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("-Z: cipher suites cannot be chosen"),
        "{}",
        stderr(&out)
    );
    let out = ab(&["-v", "4", "-n", "1", "http://127.0.0.1:1/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("use curl -v"), "{}", stderr(&out));
    let out = ab(&["-n", "abc", "http://127.0.0.1:1/"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn same_count_and_document_length_as_real_ab() {
    let Ok(real) = std::process::Command::new("ab").arg("-V").output() else {
        panic!(
            "ApacheBench (ab) is not installed: run scripts/test.sh, which installs apache2-utils"
        );
    };
    assert!(real.status.success());
    let s = server();
    let url = s.url();
    let ours = ab(&["-n", "400", "-c", "8", &url]);
    let theirs = std::process::Command::new("ab")
        .args(["-n", "400", "-c", "8", &url])
        .output()
        .unwrap();
    let (o, t) = (stdout(&ours), stdout(&theirs));
    for label in [
        "Complete requests:",
        "Document Length:",
        "Document Path:",
        "Concurrency Level:",
        "HTML transferred:",
    ] {
        assert_eq!(line(&o, label), line(&t, label), "{label}");
    }
    assert_eq!(settled(&s).requests, 800);
    s.shutdown();
}

#[test]
fn ctrl_c_still_prints_the_report_marked_partial() {
    let s = server();
    let child = yace()
        .args(["ab", "-n", "100000000", "-c", "4", "-k", &s.url()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    // SAFETY: signalling the child we spawned, by its PID.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let o = stdout(&out);
    let done: u64 = line(&o, "Complete requests:").parse().unwrap();
    assert!(done > 100, "{o}");
    assert_eq!(line(&o, "Failed requests:"), "0");
    assert!(
        o.contains("Interrupted: these are the results up to the signal"),
        "{o}"
    );
    s.shutdown();
}
