//! Verdicts at the breaking point, on a real stack: nginx + php-fpm with a
//! pool of 2 children on a 50 ms page (a capacity of about 40/s, set by
//! sleeping, not by the CPU, so a busy machine does not move it much).

use crate::harness::{Stack, StackKind};
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
    assert_eq!(r["warnings"][0], b["message"], "first among the warnings");
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
