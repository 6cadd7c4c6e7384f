//! Paced virtual users against a server that takes only so many
//! connections at once (issue 31, seed 004 scaled down): every planned
//! iteration is accounted for — started, or missed — checked against the
//! server's access log, the summary opens with a SHORTFALL naming the
//! users left waiting, their waiting is latency, and `missed==0` fails the
//! run. The twin with enough workers: planned == started, nothing missed,
//! no shortfall.

use crate::harness::{Stack, StackKind};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// Apache prefork's children: 5 connections served at once.
const WORKERS: u32 = 5;
/// 20 users from the start, an iteration each 500 ms, for 3 s: 6 each.
const USERS: u64 = 20;
const PLANNED: u64 = USERS * 6;

struct Run {
    code: Option<i32>,
    out: String,
    json: Value,
}

/// `yace run URL -u 20 --pacing 500ms -d 3s` with `extra` flags.
fn paced_run(url: &str, tag: &str, extra: &[&str]) -> Run {
    let path: PathBuf =
        std::env::temp_dir().join(format!("yace-paced-{tag}-{}.json", std::process::id()));
    let users = USERS.to_string();
    let output = Command::new(env!("CARGO_BIN_EXE_yace"))
        .args(["run", url, "-u", &users, "--pacing", "500ms", "-d", "3s"])
        .args(extra)
        .arg("--json")
        .arg(&path)
        .output()
        .expect("yace runs");
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    let json = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("no JSON result ({e}): {:?}\n{out}\n{err}", output.status));
    Run {
        code: output.status.code(),
        out: format!("{out}{err}"),
        json,
    }
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The summary's paragraphs before the figures: the SHORTFALL comes first.
fn opens_with_shortfall(out: &str) -> bool {
    let shortfall = out.find("SHORTFALL");
    let figures = out.find("Requests").expect("a summary");
    shortfall.is_some_and(|at| at < figures)
}

#[test]
fn paced_users_beyond_apaches_workers_are_accounted_for_and_fail_missed_0() {
    let stack = Stack::start_with_apache_workers(StackKind::ApachePreforkModPhp, WORKERS);
    let run = paced_run(
        &stack.url("/hello.php"),
        "apache",
        &["--threshold", "missed==0"],
    );
    let s = &run.json["summary"];
    let ctx = format!("{}\n{s}", run.out);
    // 5 users hold Apache's 5 children (keep-alive) for the whole run and
    // start their 6 iterations each; the other 15 start their first, whose
    // request waits in the listen queue to the end, and miss the other 5.
    assert_eq!(n(&s["planned"]), PLANNED, "{ctx}");
    assert_eq!(n(&s["started"]), 45, "{ctx}");
    assert_eq!(n(&s["missed"]), 75, "{ctx}");
    assert_eq!(n(&s["not_yet_due"]), 0, "{ctx}");
    assert_eq!(n(&s["users"]), USERS, "{ctx}");
    assert_eq!(n(&s["users_never_served"]), 15, "{ctx}");
    assert_eq!(n(&s["responses"]), 30, "{ctx}");
    assert_eq!(n(&s["cancelled"]), 15, "{ctx}");
    assert_eq!(n(&s["dropped"]), 75, "{ctx}");
    // Apache saw every started iteration: the 30 answered, and the 15
    // waiting ones it took from the queue once yace had gone.
    let log = stack.wait_access_log(45);
    assert_eq!(log.len() as u64, n(&s["started"]), "{ctx}");
    assert!(log
        .iter()
        .all(|l| l.status == 200 && l.path == "/hello.php"));
    // The waiting is latency: each planned iteration is one sample (30
    // answered, 75 missed, 15 waiting at the end), and the first waiting
    // user's request waited from 0 s to the end (3 s).
    let lat = &s["latency"];
    assert_eq!(n(&lat["count"]), PLANNED, "{ctx}");
    assert!(lat["max_us"].as_f64().unwrap() >= 2_900_000.0, "{ctx}");
    // The summary opens with the shortfall, naming the users left waiting.
    let sf = &run.json["shortfall"];
    assert_eq!(sf["cause"], "users_never_served", "{ctx}");
    assert_eq!(
        (n(&sf["due"]), n(&sf["sent"]), n(&sf["dropped"])),
        (120, 45, 75)
    );
    assert!(opens_with_shortfall(&run.out), "{ctx}");
    assert!(run.out.contains("answered only 5 of the 20 users"), "{ctx}");
    // missed==0 fails the run with the threshold's exit code.
    assert_eq!(run.json["thresholds"][0]["passed"], false, "{ctx}");
    assert_eq!(run.json["thresholds"][0]["actual"], 75.0, "{ctx}");
    assert_eq!(run.code, Some(3), "{ctx}");
}

#[test]
fn paced_users_within_apaches_workers_start_every_iteration() {
    // The twin: as many children as users, each user served all run.
    let stack = Stack::start_with_apache_workers(StackKind::ApachePreforkModPhp, 25);
    let run = paced_run(
        &stack.url("/hello.php"),
        "apache-enough",
        &["--threshold", "missed==0"],
    );
    let s = &run.json["summary"];
    let ctx = format!("{}\n{s}", run.out);
    assert_eq!(n(&s["planned"]), PLANNED, "{ctx}");
    assert_eq!(n(&s["started"]), PLANNED, "{ctx}");
    assert_eq!(n(&s["missed"]), 0, "{ctx}");
    assert_eq!(n(&s["users_never_served"]), 0, "{ctx}");
    assert_eq!(n(&s["responses"]), PLANNED, "{ctx}");
    assert_eq!(
        stack.wait_access_log(PLANNED as usize).len() as u64,
        PLANNED
    );
    assert_eq!(n(&s["latency"]["count"]), PLANNED, "{ctx}");
    assert!(run.json["shortfall"].is_null(), "{ctx}");
    assert!(!run.out.contains("SHORTFALL"), "{ctx}");
    assert_eq!(run.json["thresholds"][0]["passed"], true, "{ctx}");
    assert_eq!(run.code, Some(0), "{ctx}");
}
