//! Verdicts at the breaking point, on a real stack: nginx + php-fpm with a
//! pool of 2 children on a 50 ms page (a capacity of about 40/s, set by
//! sleeping, not by the CPU, so a busy machine does not move it much).

use crate::harness::{Stack, StackKind, StatusPage};
use crate::support::run_json;

/// Offered 100/s for 5 s, the pool answers ~40/s: the rest piles up.
/// The verdict opens the summary, is in the result, and fails
/// `behind==0`; every response yace counted is a request nginx logged.
#[test]
fn an_open_model_run_above_the_pools_capacity_fell_behind() {
    let stack = Stack::start_with_children(StackKind::NginxPhpFpm, 2);
    let url = stack.url("/sleep.php?ms=50");
    let (out, r) = run_json(
        "behind-over",
        &[
            &url,
            "--rate",
            "100",
            "-d",
            "5s",
            "--threshold",
            "behind==0",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "a breached threshold: {text}");
    let b = &r["behind"];
    assert!(b.is_object(), "no verdict in {}", r["warnings"]);
    let offered = b["offered_per_s"].as_f64().unwrap();
    let answered = b["answered_per_s"].as_f64().unwrap();
    assert_eq!(offered, 100.0, "{b}");
    assert!(answered < 0.9 * offered, "{b}");
    assert!(b["waiting_at_end"].as_u64().unwrap() > 0, "{b}");
    // The summary opens with it: before the request counts.
    let at = text.find("BEHIND").expect("a BEHIND paragraph");
    assert!(at < text.find("Requests").unwrap(), "{text}");
    assert!(text.contains("the server fell behind"), "{text}");
    // First among the warnings, after a shortfall if the client was late
    // too (a busy machine can make it so).
    let at = usize::from(!r["shortfall"].is_null());
    assert_eq!(r["warnings"][at], b["message"], "first among the warnings");
    // Every request yace started is a line in nginx's log (499 for those
    // cut off at the end); every response yace counted was a 200 there,
    // and a 200 it did not count was in flight when the run stopped.
    let started = r["summary"]["requests"].as_u64().unwrap() as usize;
    let responses = r["summary"]["responses"].as_u64().unwrap() as usize;
    let cancelled = r["summary"]["cancelled"].as_u64().unwrap() as usize;
    let log = stack.wait_access_log(started);
    assert_eq!(log.len(), started, "nginx's log against yace's requests");
    let ok = log.iter().filter(|e| e.status == 200).count();
    assert!(
        (responses..=responses + cancelled).contains(&ok),
        "nginx served {ok}, yace counted {responses} and {cancelled} cut off"
    );
}

/// The same pool at about half its capacity keeps up: no verdict.
#[test]
fn an_open_model_run_within_the_pools_capacity_is_not_behind() {
    let stack = Stack::start_with_children(StackKind::NginxPhpFpm, 2);
    let url = stack.url("/sleep.php?ms=50");
    let (out, r) = run_json(
        "behind-under",
        &[&url, "--rate", "20", "-d", "5s", "--threshold", "behind==0"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(r["behind"].is_null(), "{}", r["behind"]);
    assert!(!text.contains("BEHIND"), "{text}");
}

/// `yace run` on `url` at `rate`/s for 5 s, watching php-fpm the way most
/// people do: its status page through nginx (served by the same pool), its
/// master and children (`pidfile:`), and this machine.
fn fpm_run(stack: &Stack, name: &str, rate: &str) -> (std::process::Output, serde_json::Value) {
    let status = stack.status_url(StatusPage::Fpm).unwrap();
    let pidfile = stack.dir().join("run/php-fpm.pid");
    let url = stack.url("/sleep.php?ms=50");
    watched(
        name,
        &[&url, "--rate", rate, "-d", "5s"],
        &format!("fpm:{status}"),
        &pidfile,
    )
}

/// `yace run LOAD` watching a stack as a user would: its status page
/// (`page`), its processes and their listeners (`pidfile:`), this machine;
/// read every 500 ms.
fn watched(
    name: &str,
    load: &[&str],
    page: &str,
    pidfile: &std::path::Path,
) -> (std::process::Output, serde_json::Value) {
    let tree = format!("pidfile:{}", pidfile.display());
    let mut args = load.to_vec();
    args.extend([
        "--monitor",
        page,
        "--monitor",
        &tree,
        "--monitor",
        "system",
        "--monitor-interval",
        "500ms",
    ]);
    run_json(name, &args)
}

/// Twice the pool's capacity: php-fpm's accept queue holds the waiting
/// requests, whatever its status page (answered by the same full pool)
/// manages to say. The diagnosis names the full pool with that evidence,
/// the pool's size read from its config, and no CPU problem (the page
/// sleeps; other work on this machine is not the stack's).
#[test]
fn a_full_php_fpm_pool_is_diagnosed_from_its_accept_queue() {
    let stack = Stack::start_with_children(StackKind::NginxPhpFpm, 2);
    let (out, r) = fpm_run(&stack, "pool-full", "80");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let c = crate::diagnoses(&r);
    assert!(c.contains(&"fpm_max_children".to_string()), "{c:?}\n{text}");
    assert!(!c.contains(&"server_cpu_saturated".to_string()), "{c:?}");
    let d = r["monitor"]["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "fpm_max_children")
        .unwrap();
    let queue = d["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| {
            e["metric"] == "listen_queue" && e["source"].as_str().unwrap().starts_with("pidfile:")
        })
        .unwrap_or_else(|| panic!("no accept-queue evidence: {}", d["evidence"]));
    assert!(queue["samples"].as_u64().unwrap() >= 3, "{queue}");
    assert!(queue["value"].as_f64().unwrap() >= 1.0, "{queue}");
    assert_eq!(d["setting"]["name"], "pm.max_children");
    assert_eq!(
        d["setting"]["current"].as_f64(),
        Some(2.0),
        "{}",
        d["setting"]
    );
    assert!(
        d["setting"]["suggested"].as_f64().unwrap() >= 3.0,
        "{}",
        d["setting"]
    );
    assert!(text.contains("php-fpm's pool was full"), "{text}");
    assert!(text.contains("accept queue"), "{text}");
    assert!(text.contains("Raise pm.max_children from 2"), "{text}");
    // Busy children: 2 of 2, never a reading from before the load.
    let server = &r["monitor"]["server"];
    assert_eq!(server["workers_busy_max"].as_f64(), Some(2.0), "{server}");
    assert_eq!(server["workers_total"].as_f64(), Some(2.0), "{server}");
    assert!(
        text.contains("php-fpm processes: 2 busy at most of 2"),
        "{text}"
    );
    // The CPU is set aside with the figure that shows it.
    let ruled: Vec<&str> = r["monitor"]["ruled_out"]
        .as_array()
        .map(|a| a.iter().filter_map(|x| x["code"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        ruled.contains(&"server_cpu_saturated"),
        "{}",
        r["monitor"]["ruled_out"]
    );
}

/// The same pool at 60% of its capacity is busy, not full: no pool
/// diagnosis (the status request's own child is not a busy child).
#[test]
fn a_php_fpm_pool_at_60_percent_is_not_full() {
    let stack = Stack::start_with_children(StackKind::NginxPhpFpm, 2);
    let (out, r) = fpm_run(&stack, "pool-60", "24");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let c = crate::diagnoses(&r);
    assert!(
        !c.contains(&"fpm_max_children".to_string()),
        "{c:?}\n{text}"
    );
    assert!(!text.contains("pool was full"), "{text}");
    assert!(r["behind"].is_null(), "{}", r["behind"]);
}

/// `yace run` with 20 keep-alive connections against Apache prefork with
/// `workers` worker processes, watching its process tree and mod_status.
fn apache_run(workers: u32, name: &str) -> (std::process::Output, serde_json::Value) {
    let stack = Stack::start_with_apache_workers(StackKind::ApachePreforkModPhp, workers);
    let status = stack.status_url(StatusPage::Apache).unwrap();
    let pidfile = stack.dir().join("run/apache2.pid");
    let url = stack.url("/sleep.php?ms=20");
    watched(
        name,
        &[&url, "-c", "20", "-d", "4s"],
        &format!("apache:{status}"),
        &pidfile,
    )
}

/// Prefork with 5 workers and 20 keep-alive connections: each connection
/// holds a worker, mod_status cannot answer (it needs a worker too), and
/// Apache's accept queue holds the rest. "Out of workers" is said from the
/// process tree and the queue, with MaxRequestWorkers read from the config.
#[test]
fn apache_out_of_workers_is_diagnosed_from_its_process_tree() {
    let (out, r) = apache_run(5, "apache-out");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let c = crate::diagnoses(&r);
    assert!(
        c.contains(&"apache_out_of_workers".to_string()),
        "{c:?}\n{text}"
    );
    assert!(text.contains("Apache ran out of workers"), "{text}");
    assert!(text.contains("MaxRequestWorkers is 5"), "{text}");
    assert!(text.contains("5 worker processes ran"), "{text}");
    let server = &r["monitor"]["server"];
    assert_eq!(server["workers_total"].as_f64(), Some(5.0), "{server}");
}

/// The same load with 25 workers: every connection has one; nothing to say.
#[test]
fn apache_with_workers_to_spare_is_not_out_of_workers() {
    let (out, r) = apache_run(25, "apache-spare");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let c = crate::diagnoses(&r);
    assert!(
        !c.contains(&"apache_out_of_workers".to_string()),
        "{c:?}\n{text}"
    );
}
