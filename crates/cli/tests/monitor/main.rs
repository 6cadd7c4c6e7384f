//! `--monitor`: the server watched on the run's clock, against real
//! servers — `yace serve` as a separate process (system, pid:, proc:, TCP
//! states checked against `ss`), nginx + php-fpm with a tiny pool (status
//! pages, the max-children and CPU diagnoses; php-fpm's status over FastCGI
//! in fcgi.rs), Apache's mod_status,
//! node_exporter, a real sshd on loopback (`ssh:` with `yace probe` and
//! with the plain-shell reader), and a status page that hangs mid-run.
//!
//! Needs the full-mode packages of `scripts/test.sh` (nginx, Apache,
//! php-fpm, prometheus-node-exporter, openssh-server).

#[path = "../stacks/daemons.rs"]
mod daemons;
mod fcgi;
#[path = "../stacks/harness.rs"]
mod harness;
#[path = "../support/mod.rs"]
mod support;
mod verdicts;

mod kernel;

use harness::{Stack, StackKind, StatusPage};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};
use support::{run_json, yace, ServeProcess};

/// The source of `kind` in a result (the first of that kind).
fn source<'a>(r: &'a Value, spec_prefix: &str) -> &'a Value {
    r["monitor"]["sources"]
        .as_array()
        .expect("a monitor section")
        .iter()
        .find(|s| s["spec"].as_str().unwrap().starts_with(spec_prefix))
        .unwrap_or_else(|| panic!("no source {spec_prefix} in {}", r["monitor"]))
}

/// Every sample's value of `name` (nulls included).
fn all(src: &Value, name: &str) -> Vec<Option<f64>> {
    src["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no metric {name} in {}", src["spec"]))["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::as_f64)
        .collect()
}

/// A metric's values that were read.
fn values(src: &Value, name: &str) -> Vec<f64> {
    all(src, name).into_iter().flatten().collect()
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NAN, f64::max)
}

fn increase(src: &Value, name: &str) -> f64 {
    src["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no metric {name}"))["increase"]
        .as_f64()
        .unwrap_or_else(|| panic!("{name} has no increase"))
}

fn diagnoses(r: &Value) -> Vec<String> {
    r["monitor"]["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Sockets `ss` sees established with local port `port`.
fn ss_established(port: u16) -> usize {
    let out = Command::new("ss")
        .args([
            "-Htn",
            "state",
            "established",
            "sport",
            "=",
            &format!(":{port}"),
        ])
        .output()
        .expect("ss (iproute2)");
    String::from_utf8_lossy(&out.stdout).lines().count()
}

#[test]
fn system_pid_and_proc_watch_a_server_process() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    let pid = serve.pid().to_string();
    let pidfile = support::temp_path("serve.pid");
    std::fs::write(&pidfile, format!("{pid}\n")).unwrap();
    // `ss` counts the server's established sockets mid-run, as the monitor does.
    let port = serve.port;
    let ss = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        ss_established(port)
    });
    let (out, r) = run_json(
        "system-pid",
        &[
            &serve.url("/"),
            "-c",
            "12",
            "-t",
            "1",
            "-d",
            "3s",
            "--monitor",
            "system",
            "--monitor",
            &format!("pid:{pid}"),
            "--monitor",
            &format!("pidfile:{}", pidfile.display()),
            "--monitor-interval",
            "500ms",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ss_seen = ss.join().unwrap();
    assert_eq!(ss_seen, 12, "ss saw {ss_seen} established server sockets");

    let sys = source(&r, "system");
    assert_eq!(sys["state"], "ok");
    // The first sample is taken as the load starts; then every 500 ms.
    let t: Vec<f64> = sys["t"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(t.len() >= 5 && t[0] < 0.3, "sample times {t:?}");
    let est = values(sys, "tcp_port_established");
    assert_eq!(max(&est), 12.0, "the monitor saw {est:?}; ss saw {ss_seen}");
    let busy = values(sys, "cpu_busy");
    assert!(
        !busy.is_empty() && busy.iter().all(|b| (0.0..=100.0).contains(b)),
        "{busy:?}"
    );
    assert!(!values(sys, "load1").is_empty());
    assert!(max(&values(sys, "mem_available_bytes")) > 0.0);

    let p = source(&r, "pid:");
    assert_eq!(
        values(p, "processes"),
        vec![1.0; values(p, "processes").len()]
    );
    // 12 connections and the listener, at least.
    assert!(max(&values(p, "open_files")) >= 13.0, "{}", p["metrics"]);
    assert!(max(&values(p, "rss_bytes")) > 1e6);
    let cpu_s = increase(p, "cpu");
    assert!(
        cpu_s > 0.05,
        "the server used {cpu_s} CPU-s for {} responses",
        r["summary"]["responses"]
    );
    // pidfile: follows the same process.
    let named = source(&r, "pidfile:");
    assert_eq!(max(&values(named, "processes")), 1.0, "{}", named["label"]);
    assert!((increase(named, "cpu") - cpu_s).abs() < 0.05);

    let server = &r["monitor"]["server"];
    let per_req = server["cpu_ms_per_request"].as_f64().unwrap();
    let expect =
        (cpu_s + increase(named, "cpu")) * 1000.0 / r["summary"]["responses"].as_f64().unwrap();
    assert!((per_req - expect).abs() < 1e-9, "{per_req} vs {expect}");
    assert_eq!(server["connections_max"].as_f64(), Some(12.0));

    // The summary says it in a few lines.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("  Server      CPU "), "{text}");
    assert!(text.contains("ms CPU per request"), "{text}");
    assert!(text.contains("  Monitors    system"), "{text}");
    // A server that keeps up with 12 connections: its queue never held
    // any long enough to be a finding, and no overflow was its.
    let d = diagnoses(&r);
    assert!(!d.contains(&"accept_queue".to_string()), "{d:?}");
    assert!(!d.contains(&"listen_overflow".to_string()), "{d:?}");
}

#[test]
fn php_fpm_pool_too_small_and_cpu_bound_pages_are_diagnosed() {
    let _fpm = fcgi::one_php_fpm_at_a_time();
    let stack = Stack::start_with_children(StackKind::NginxPhpFpm, 2);
    let fpm = stack.status_url(StatusPage::Fpm).unwrap();
    let nginx = stack.status_url(StatusPage::Nginx).unwrap();
    // This stack's own php-fpm (`proc:php-fpm` would count every pool on
    // the machine, other tests' included).
    let pool = format!("pidfile:{}", stack.dir().join("run/php-fpm.pid").display());
    let monitors = |url: &str| {
        vec![
            url.to_string(),
            "-c".into(),
            "16".into(),
            "-t".into(),
            "1".into(),
            "-d".into(),
            "4s".into(),
            "--monitor".into(),
            format!("fpm:{fpm}"),
            "--monitor".into(),
            format!("nginx:{nginx}"),
            "--monitor".into(),
            pool.clone(),
            "--monitor".into(),
            "system".into(),
            "--monitor-interval".into(),
            "500ms".into(),
        ]
    };
    // 16 users on a pool of 2 children, 50 ms a page: the pool is full.
    let args = monitors(&stack.url("/sleep.php?ms=50"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, r) = run_json("fpm-children", &args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fpm_src = source(&r, "fpm:");
    assert_eq!(max(&values(fpm_src, "total_processes")), 2.0);
    // Read through the pool, the status request takes one of the two
    // children: php-fpm counts 2 busy, of which one is the read itself.
    assert_eq!(max(&values(fpm_src, "active_processes_raw")), 2.0);
    assert_eq!(max(&values(fpm_src, "active_processes")), 1.0);
    assert!(values(fpm_src, "status_through_pool")
        .iter()
        .all(|v| *v == 1.0));
    // The kernel saw the waiting requests in php-fpm's accept queue (the
    // status page, answered by the same pool, cannot: its `listen queue`
    // is 0 on a unix socket).
    assert!(
        max(&values(source(&r, "pidfile:"), "listen_queue")) >= 1.0,
        "{}",
        source(&r, "pidfile:")["metrics"]
    );
    // The master and its two children.
    assert_eq!(max(&values(source(&r, "pidfile:"), "processes")), 3.0);
    let ng = source(&r, "nginx:");
    assert!(max(&values(ng, "active")) >= 16.0, "{}", ng["metrics"]);
    let handled = increase(ng, "requests");
    let responses = r["summary"]["responses"].as_f64().unwrap();
    // nginx counted the run's requests (and the status reads).
    assert!(
        handled >= responses * 0.8,
        "nginx counted {handled}, yace {responses}"
    );
    assert!(
        diagnoses(&r).contains(&"fpm_max_children".to_string()),
        "{:?}",
        diagnoses(&r)
    );
    assert!(text.contains("php-fpm's pool was full"), "{text}");
    assert!(text.contains("fix: Raise pm.max_children"), "{text}");
    // The status page, net of its own read, saw one load child busy; the
    // kernel's accept queue says both were: 2 of 2, never the page's 1.
    assert_eq!(
        r["monitor"]["server"]["workers_busy_max"].as_f64(),
        Some(2.0)
    );
    assert!(r["monitor"]["notes"][0]
        .as_str()
        .unwrap()
        .contains("pm.status_listen"));

    // A CPU-bound page: two children spinning, and yace, on two CPUs.
    let args = monitors(&stack.url("/cpu.php?ms=30"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, r) = run_json("fpm-cpu", &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d = diagnoses(&r);
    assert!(
        d.contains(&"server_cpu_saturated".to_string()),
        "{d:?}: {}",
        r["monitor"]["server"]
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("The server's CPUs were saturated"), "{text}");
    // php-fpm's CPU per request: the page spins 30 ms of wall time, less
    // of it on a CPU when the two children, nginx and yace share two.
    let ms = r["monitor"]["server"]["cpu_ms_per_request"]
        .as_f64()
        .unwrap();
    // At most the page's wall time (and PHP's own): the children get less
    // of a CPU when the machine is shared, never more.
    assert!(ms > 0.0 && ms < 45.0, "{ms} ms CPU per request");
    assert_eq!(
        r["monitor"]["server"]["cpu_source"],
        format!("the CPU time of {pool}")
    );
}

#[test]
fn apache_mod_status_workers() {
    let _fpm = fcgi::one_php_fpm_at_a_time();
    let stack = Stack::start(StackKind::ApacheEventPhpFpm);
    let apache = stack.status_url(StatusPage::Apache).unwrap();
    let (out, r) = run_json(
        "apache",
        &[
            &stack.url("/sleep.php?ms=20"),
            "-c",
            "10",
            "-t",
            "1",
            "-d",
            "2s",
            "--monitor",
            &format!("apache:{apache}"),
            "--monitor-interval",
            "500ms",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let a = source(&r, "apache:");
    assert_eq!(a["state"], "ok", "{}", a);
    let busy = max(&values(a, "busy_workers"));
    assert!(
        busy >= 10.0,
        "Apache had {busy} busy workers for 10 connections"
    );
    assert!(increase(a, "total_accesses") >= r["summary"]["responses"].as_f64().unwrap() * 0.8);
    assert!(max(&values(a, "sb_slots")) >= 200.0);
    assert_eq!(r["monitor"]["server"]["workers_source"], "Apache workers");
}

#[test]
fn node_exporter_and_prometheus_text() {
    let node = daemons::NodeExporter::start();
    let serve = ServeProcess::start(&["--threads", "1"]);
    let (out, r) = run_json(
        "node",
        &[
            &serve.url("/"),
            "-c",
            "4",
            "-t",
            "1",
            "-d",
            "2s",
            "--monitor",
            &format!("node:{}", node.url()),
            "--monitor",
            &format!("prom:{},match=node_load*", node.url()),
            "--monitor-interval",
            "500ms",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n = source(&r, "node:");
    for m in [
        "cpu_busy",
        "load1",
        "mem_available_bytes",
        "tcp_established",
        "tcp_time_wait_all",
    ] {
        assert!(!values(n, m).is_empty(), "{m}: {}", n["metrics"]);
    }
    assert!(values(n, "tcp_established").iter().all(|v| *v >= 4.0));
    // Counters are rates: ListenOverflows was read.
    assert!(n["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["name"] == "listen_overflows" && m["kind"] == "rate"));
    // The node source is the server machine's, so the figures use it.
    assert!(r["monitor"]["server"]["cpu_max_pct"].as_f64().is_some());
    let p = source(&r, "prom:");
    let mut names: Vec<&str> = p["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["node_load1", "node_load15", "node_load5"]);
}

#[test]
fn ssh_probe_and_shell_reader() {
    let sshd = daemons::Sshd::start();
    let serve = ServeProcess::start(&["--threads", "1"]);
    let dest = format!("ssh:{}@127.0.0.1:{}", sshd.user(), sshd.port());
    for (yace_there, mode) in [
        (env!("CARGO_BIN_EXE_yace").to_string(), "yace probe"),
        ("/nonexistent/yace".to_string(), "shell"),
    ] {
        let json = support::temp_path(&format!("ssh-{}.json", mode.replace(' ', "-")));
        let out = yace()
            .env("YACE_SSH", format!("ssh -F {}", sshd.config().display()))
            .args([
                "run",
                &serve.url("/"),
                "-c",
                "6",
                "-t",
                "1",
                "-d",
                "3s",
                "-q",
            ])
            .args(["--monitor", &format!("{dest},yace={yace_there}")])
            .args(["--monitor-interval", "500ms", "--json"])
            .arg(&json)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let s = source(&r, "ssh:");
        assert_eq!(s["state"], "ok", "{mode}: {s}");
        assert!(
            s["label"].as_str().unwrap().contains(mode),
            "{}",
            s["label"]
        );
        assert!(values(s, "cpu_busy").len() >= 2, "{mode}: {}", s["metrics"]);
        // The server's port, counted on the far side.
        assert_eq!(max(&values(s, "tcp_port_established")), 6.0, "{mode}");
        assert!(!values(s, "load1").is_empty());
    }
    // Nothing of the probes is left on the server side.
    std::thread::sleep(Duration::from_millis(300));
    let left = sshd.session_processes();
    assert!(left.is_empty(), "ssh sessions left: {left:?}");
}

/// A stub_status page that answers `answers` reads, then accepts and never
/// answers again.
fn hanging_status_page(answers: usize) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for (i, c) in l.incoming().enumerate() {
            let Ok(mut c) = c else { continue };
            if i < answers {
                let mut b = [0u8; 1024];
                let _ = c.read(&mut b);
                let body = "Active connections: 1 \nserver accepts handled requests\n 1 1 1 \nReading: 0 Writing: 1 Waiting: 0 \n";
                let _ = write!(
                    c,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
            } else {
                held.push(c); // never answered
            }
            if i > 200 {
                break;
            }
        }
    });
    port
}

#[test]
fn a_hanging_monitor_is_dropped_and_the_run_ends_on_time() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    // Answers the check before the run and the first sample, then hangs.
    let port = hanging_status_page(2);
    let started = Instant::now();
    let (out, r) = run_json(
        "hanging",
        &[
            &serve.url("/"),
            "-c",
            "2",
            "-t",
            "1",
            "-d",
            "3s",
            "--monitor",
            &format!("nginx:127.0.0.1:{port}"),
            "--monitor",
            "system",
            "--monitor-interval",
            "200ms",
        ],
    );
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A bound, not a measurement: the run ends with its duration, not with
    // the stuck read.
    assert!(took < Duration::from_secs(6), "the run took {took:?}");
    assert_eq!(r["end"]["partial"], false);
    let ng = source(&r, "nginx:");
    assert_eq!(ng["state"], "dropped", "{ng}");
    assert!(
        ng["error"].as_str().unwrap().contains("too slow"),
        "{}",
        ng["error"]
    );
    // Blind from its first failed read to the end of the run: its samples
    // go on, as nulls, and it says from when and why.
    let t: Vec<f64> = ng["t"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let from = ng["blind_from_s"].as_f64().expect("blind_from_s");
    assert!(t.last().unwrap() + 0.2 >= 2.9, "samples end at {t:?}");
    assert!(
        ng["blind_reason"].as_str().unwrap().contains("too slow"),
        "{}",
        ng["blind_reason"]
    );
    let active = &ng["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "active")
        .unwrap()["values"];
    for (t, v) in t.iter().zip(active.as_array().unwrap()) {
        assert_eq!(*t < from, !v.is_null(), "at {t} s: {v} (blind from {from})");
    }
    // The other monitor went on.
    let sys = source(&r, "system");
    assert_eq!(sys["state"], "ok");
    assert!(sys["t"].as_array().unwrap().len() >= 10);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("DROPPED"), "{text}");
    assert!(text.contains("blind from"), "{text}");
}

#[test]
fn bad_monitors_fail_before_any_load() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    let closed = free_port();
    let out = yace()
        .args([
            "run",
            &serve.url("/"),
            "-n",
            "10",
            "--monitor",
            "cpu",
            "--monitor",
            "pid:x",
        ])
        .args(["--monitor-interval", "10ms"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    // Every problem in one round.
    assert!(
        err.contains("--monitor \"cpu\"") && err.contains("not a process id"),
        "{err}"
    );
    assert!(err.contains("--monitor-interval 10ms"), "{err}");
    // A page that is not there: said before the load, nothing sent.
    let out = yace()
        .args(["run", &serve.url("/only-this"), "-n", "10"])
        .args([
            "--monitor",
            &format!("nginx:127.0.0.1:{closed}/nginx_status"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("connection refused"), "{err}");
    assert!(
        err.contains(&format!(
            "--monitor nginx:http://127.0.0.1:{closed}/nginx_status"
        )),
        "{err}"
    );
}
