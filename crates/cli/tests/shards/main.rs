//! Shards end to end (docs/design/010-shards.md): real `yace run --shard`
//! processes against one `yace serve` process on loopback, started
//! together with `--start-at`, their framed results read back from their
//! logs by `yace merge`. The merged count is what the server saw and the
//! plan holds; a killed shard, mixed runs or plans, a corrupted line and a
//! late start are each caught, with their exit codes.
//!
//! A test binary of its own: its timing checks need a machine not busy
//! with the other binaries' tests.

mod k8s;
mod netns;
mod render;
#[path = "../support/mod.rs"]
mod support;

use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Output};
use std::time::{Duration, Instant};
use support::{temp_path, u, yace, ServeProcess};

/// `GET /_stats?reset=1` on the server (its counters, then zeroed).
fn server_stats(port: u16, reset: bool) -> Value {
    // Connection tallies are flushed as connections end: let them settle.
    std::thread::sleep(Duration::from_millis(300));
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let q = if reset { "?reset=1" } else { "" };
    write!(s, "GET /_stats{q} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let body = text.split("\r\n\r\n").nth(1).unwrap();
    serde_json::from_str(body).unwrap()
}

/// Starts one shard; its stdout (summary and framed result) goes to `log`.
fn shard(args: &[String], log: &Path) -> Child {
    yace()
        .arg("run")
        .args(args)
        .arg("-q")
        .stdout(std::fs::File::create(log).unwrap())
        .stderr(std::fs::File::create(log.with_extension("err")).unwrap())
        .spawn()
        .unwrap()
}

/// Waits for a child, bounded: a hung shard fails the test, not the suite.
fn finish(mut c: Child, within: Duration) -> i32 {
    let deadline = Instant::now() + within;
    loop {
        if let Some(s) = c.try_wait().unwrap() {
            return s.code().unwrap_or(-1);
        }
        if Instant::now() > deadline {
            let _ = c.kill();
            let _ = c.wait();
            panic!("a shard did not end within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn merge(args: &[&str], inputs: &[PathBuf]) -> (Output, Option<Value>, PathBuf) {
    let out_path = temp_path(&format!("merged-{}.json", args.join("_").replace('/', "")));
    let _ = std::fs::remove_file(&out_path);
    let out = yace()
        .arg("merge")
        .args(args)
        .args(inputs)
        .arg("-o")
        .arg(&out_path)
        .output()
        .unwrap();
    let v = std::fs::read_to_string(&out_path)
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    (out, v, out_path)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Milliseconds since midnight of an RFC 3339 UTC time `…THH:MM:SS.mmmZ`.
fn ms_of_day(t: &str) -> f64 {
    let time = t.split('T').nth(1).unwrap().trim_end_matches('Z');
    let f: Vec<f64> = time.split(':').map(|x| x.parse().unwrap()).collect();
    (f[0] * 3600.0 + f[1] * 60.0 + f[2]) * 1000.0
}

fn schema_check(v: &Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema/result.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let compiled = jsonschema::JSONSchema::compile(&schema).unwrap();
    let problems: Vec<String> = match compiled.validate(v) {
        Ok(()) => Vec::new(),
        Err(errors) => errors
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect(),
    };
    assert!(
        problems.is_empty(),
        "not valid against the published schema: {problems:?}"
    );
}

/// Three shards of one open-model plan, started together, against one
/// server: the merged count is the server's and the plan's, the merged
/// rate the plan's, the starts within the tolerance of the agreed time.
#[test]
fn three_shards_start_together_and_merge_to_what_the_server_saw() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    server_stats(serve.port, true);
    let url = serve.url("/");
    let logs: Vec<PathBuf> = (0..3)
        .map(|i| temp_path(&format!("open-{i}.log")))
        .collect();
    let children: Vec<Child> = (0..3)
        .map(|i| {
            let mut a = strings(&[
                &url, "--rate", "300", "-d", "2s", "-t", "1", "--run-id", "open-1",
            ]);
            a.extend(strings(&[
                "--shard",
                &format!("{i}/3"),
                "--start-at",
                "+2s",
                "--frame",
            ]));
            shard(&a, &logs[i])
        })
        .collect();
    for c in children {
        assert_eq!(finish(c, Duration::from_secs(20)), 0);
    }
    let seen = server_stats(serve.port, true);
    let (out, merged, path) = merge(&["--expect-shards", "3"], &logs);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let m = merged.unwrap();
    schema_check(&m);
    // Exactly the plan's 600 requests, all seen by the server. The last
    // is due 3.3 ms before the end: on a loaded machine its answer may
    // come after it, and then it is cancelled, as every run does.
    let summary = &m["summary"];
    let responses = u(&m, "summary.responses");
    assert_eq!(responses + u(&m, "summary.cancelled"), 600, "{summary}");
    assert!(responses >= 597, "{summary}");
    assert_eq!(u(&m, "summary.planned"), 600);
    assert_eq!(u(&seen, "requests"), 600, "{seen}");
    assert_eq!(m["merge"]["complete"], true);
    // The rate is the plan's, not three pacers' sum or a third of it.
    let rps = m["summary"]["rps"].as_f64().unwrap();
    assert!((rps - 300.0).abs() < 15.0, "merged rate {rps}/s");
    // Each shard sent exactly its share (200 each), at the agreed start.
    let shards = m["merge"]["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 3);
    let starts: Vec<f64> = shards
        .iter()
        .map(|s| {
            assert_eq!(s["sent_requests"], 200);
            assert_eq!(s["expected_requests"], 200);
            assert_eq!(s["start"], "on_time");
            let off = s["start_offset_ms"].as_f64().unwrap();
            assert!(off.abs() < 50.0, "start offset {off} ms");
            ms_of_day(s["start_at"].as_str().unwrap()) + off
        })
        .collect();
    // `+2s` is resolved by each process: they were launched within moments.
    let spread = starts.iter().cloned().fold(f64::MIN, f64::max)
        - starts.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread < 250.0, "starts spread over {spread} ms");
    // Every renderer reads the merged result, and compare does too.
    let shard0 = temp_path("open-0-plain.json");
    for fmt in ["text", "markdown", "csv", "junit", "html"] {
        let o = yace()
            .args(["report", path.to_str().unwrap(), "-F", fmt])
            .output()
            .unwrap();
        assert!(o.status.success(), "{fmt}: {}", stderr(&o));
        assert!(!o.stdout.is_empty());
    }
    std::fs::write(&shard0, serde_json::to_string(&m).unwrap()).unwrap();
    let o = yace()
        .args(["report", path.to_str().unwrap(), shard0.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Every load model over real shard processes: what the server saw is what
/// one process would have sent.
#[test]
fn closed_and_user_models_split_exactly_against_the_server() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    let url = serve.url("/");
    // One process first: the connections the server counts beyond the
    // load's own (each process probes the target before the load; the
    // previous `/_stats` connection is counted once it ends).
    server_stats(serve.port, true);
    let o = yace()
        .args(["run", &url, "-c", "5", "-n", "301", "-q"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let probes = u(&server_stats(serve.port, true), "connections") - 5 - 1;
    // Closed model: -c 5 -n 301 over 3 shards: 101 + 100 + 100 requests,
    // 2 + 2 + 1 connections.
    let logs: Vec<PathBuf> = (0..3)
        .map(|i| temp_path(&format!("closed-{i}.log")))
        .collect();
    let kids: Vec<Child> = (0..3)
        .map(|i| {
            let a = strings(&[
                &url,
                "-c",
                "5",
                "-n",
                "301",
                "--shard",
                &format!("{i}/3"),
                "--frame",
            ]);
            shard(&a, &logs[i])
        })
        .collect();
    for k in kids {
        assert_eq!(finish(k, Duration::from_secs(20)), 0);
    }
    let seen = server_stats(serve.port, true);
    let (out, m, _) = merge(&["--expect-shards", "3"], &logs);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let m = m.unwrap();
    assert_eq!(u(&seen, "requests"), 301);
    assert_eq!(u(&m, "summary.requests"), 301);
    let per: Vec<(u64, u64)> = m["merge"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (u(s, "sent_requests"), u(s, "connections")))
        .collect();
    assert_eq!(per, [(101, 2), (100, 2), (100, 1)]);
    assert_eq!(u(&seen, "connections"), 5 + 3 * probes + 1, "{seen}");

    // Virtual users: 7 users, a request every 250 ms each, over 2 shards
    // (4 + 3 users, each its own connection); capped at 49 requests.
    let logs: Vec<PathBuf> = (0..2)
        .map(|i| temp_path(&format!("users-{i}.log")))
        .collect();
    let kids: Vec<Child> = (0..2)
        .map(|i| {
            let a = strings(&[
                &url,
                "-u",
                "7",
                "--pacing",
                "250ms",
                "-n",
                "49",
                "-d",
                "5s",
                "--shard",
                &format!("{i}/2"),
                "--frame",
            ]);
            shard(&a, &logs[i])
        })
        .collect();
    for k in kids {
        assert_eq!(finish(k, Duration::from_secs(20)), 0);
    }
    let seen = server_stats(serve.port, true);
    let (out, m, _) = merge(&["--expect-shards", "2"], &logs);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let m = m.unwrap();
    assert_eq!(u(&seen, "requests"), 49);
    assert_eq!(u(&m, "summary.responses"), 49);
    assert_eq!(u(&seen, "connections"), 7 + 2 * probes + 1, "{seen}");
    let per: Vec<(u64, u64)> = m["merge"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (u(s, "sent_requests"), u(s, "connections")))
        .collect();
    assert_eq!(per, [(25, 4), (24, 3)]);
}

/// A shard killed mid-run leaves no result: the merge is written,
/// incomplete, with the reason, and exits 6.
#[test]
fn a_killed_shard_makes_the_merge_incomplete() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    let url = serve.url("/");
    let logs: Vec<PathBuf> = (0..3)
        .map(|i| temp_path(&format!("killed-{i}.log")))
        .collect();
    let mut kids: Vec<Child> = (0..3)
        .map(|i| {
            let a = strings(&[
                &url,
                "--rate",
                "100",
                "-d",
                "3s",
                "--run-id",
                "k1",
                "--shard",
                &format!("{i}/3"),
                "--frame",
            ]);
            shard(&a, &logs[i])
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1200));
    // By its PID: this test started it.
    kids[1].kill().unwrap();
    let killed = kids.remove(1);
    let mut killed = killed;
    let _ = killed.wait();
    for k in kids {
        assert_eq!(finish(k, Duration::from_secs(20)), 0);
    }
    let (out, m, _) = merge(&["--expect-shards", "3"], &logs);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let m = m.expect("an incomplete merge is still written");
    schema_check(&m);
    assert_eq!(m["merge"]["complete"], false);
    assert_eq!(m["end"]["partial"], true);
    let reasons = m["merge"]["reasons"].to_string();
    assert!(reasons.contains("1/3 missing"), "{reasons}");
    assert!(stderr(&out).contains("INCOMPLETE"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no yace result in it"),
        "{}",
        stderr(&out)
    );
    // What the two others did is there, exactly.
    assert_eq!(u(&m, "summary.responses"), 200);
}

/// Quick shards of a closed-model plan, for the refusal tests.
fn quick(url: &str, name: &str, run_id: &str, i: u64, n: u64, requests: &str) -> PathBuf {
    let log = temp_path(&format!("{name}.log"));
    let a = strings(&[
        url,
        "-c",
        "2",
        "-n",
        requests,
        "--run-id",
        run_id,
        "--shard",
        &format!("{i}/{n}"),
        "--frame",
    ]);
    assert_eq!(finish(shard(&a, &log), Duration::from_secs(20)), 0);
    log
}

#[test]
fn mixed_runs_and_plans_are_refused_and_corruption_is_caught() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    let url = serve.url("/");
    let a0 = quick(&url, "a0", "a", 0, 2, "40");
    let a1 = quick(&url, "a1", "a", 1, 2, "40");
    let b1 = quick(&url, "b1", "b", 1, 2, "40");
    let other_plan = quick(&url, "a1-other", "a", 1, 2, "60");

    let (out, m, _) = merge(&["--expect-shards", "2"], &[a0.clone(), b1.clone()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(m.is_none(), "a refused merge writes nothing");
    assert!(
        stderr(&out).contains("shards of 2 runs ('a', 'b')"),
        "{}",
        stderr(&out)
    );

    let (out, m, _) = merge(&["--expect-shards", "2"], &[a0.clone(), other_plan]);
    assert_eq!(out.status.code(), Some(2));
    assert!(m.is_none());
    assert!(stderr(&out).contains("different plans"), "{}", stderr(&out));

    // The good pair merges; a directory of logs is read too.
    let dir = temp_path("pair");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&a0, dir.join("a0.log")).unwrap();
    std::fs::copy(&a1, dir.join("a1.log")).unwrap();
    let (out, m, _) = merge(&["--expect-shards", "2"], std::slice::from_ref(&dir));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(u(&m.unwrap(), "summary.requests"), 40);

    // One character of a framed line changed: found, named, incomplete.
    let text = std::fs::read_to_string(&a1).unwrap();
    let (n, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with("YACE-RESULT v1 "))
        .unwrap();
    let mut bad = line.to_owned();
    let at = bad.len() - 5;
    let c = if &bad[at..at + 1] == "Q" { "R" } else { "Q" };
    bad.replace_range(at..at + 1, c);
    let corrupted = temp_path("a1-corrupted.log");
    std::fs::write(&corrupted, text.replace(line, &bad)).unwrap();
    let (out, m, _) = merge(&["--expect-shards", "2"], &[a0, corrupted.clone()]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let reasons = m.unwrap()["merge"]["reasons"].to_string();
    let at = format!("{}:{}", corrupted.display(), n + 1);
    assert!(reasons.contains(&at), "{reasons} names {at}");
    assert!(
        reasons.contains("crc32") || reasons.contains("base64"),
        "{reasons}"
    );
    assert!(reasons.contains("1/2 missing"), "{reasons}");
}

/// A shard ready after its start time plus the tolerance sends nothing,
/// exits 5 and leaves a partial result that says why.
#[test]
fn a_shard_too_late_to_start_sends_nothing_and_says_why() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    server_stats(serve.port, true);
    let json = temp_path("late.json");
    let out = yace()
        .args([
            "run",
            &serve.url("/"),
            "--rate",
            "100",
            "-d",
            "2s",
            "--shard",
            "0/2",
            "--run-id",
            "late",
        ])
        .args([
            "--start-at",
            "2020-01-01T00:00:00Z",
            "--json",
            json.to_str().unwrap(),
            "-q",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("beyond --start-tolerance"),
        "{}",
        stderr(&out)
    );
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    schema_check(&r);
    assert_eq!(r["shard"]["start"], "too_late");
    assert_eq!(r["end"]["partial"], true);
    assert_eq!(u(&r, "summary.requests"), 0);
    assert!(r["warnings"][0]
        .as_str()
        .unwrap()
        .contains("it sent nothing"));
    assert_eq!(u(&server_stats(serve.port, false), "requests"), 0);
    // Merged with its sibling, it makes the run incomplete.
    let (out, m, _) = merge(&["--expect-shards", "2"], &[json]);
    assert_eq!(out.status.code(), Some(6));
    let reasons = m.unwrap()["merge"]["reasons"].to_string();
    assert!(reasons.contains("too late"), "{reasons}");
}

#[test]
fn flags_that_cannot_shard_are_refused_with_the_fix() {
    let bad = |args: &[&str], want: &str| {
        let out = yace()
            .arg("run")
            .args(args)
            .arg("--dry-run")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    };
    bad(&["http://127.0.0.1:9/", "--shard", "3/3"], "from 0 to 2");
    bad(&["--shard", "0/2"], "give the target's URL");
    bad(
        &["http://127.0.0.1:9/", "-c", "2", "--shard", "0/3"],
        "2 connections cannot be split over 3 shards",
    );
    bad(
        &["http://127.0.0.1:9/", "--shard", "env", "--shards", "2"],
        "JOB_COMPLETION_INDEX",
    );
    bad(
        &["http://127.0.0.1:9/", "--shard", "0/2", "--run-id", "a/b"],
        "--run-id",
    );
    // --shard env with Slurm's variables: the dry run shows the shard.
    let out = yace()
        .args(["run", "http://127.0.0.1:9/", "--shard", "env", "--dry-run"])
        .env("SLURM_PROCID", "1")
        .env("SLURM_NTASKS", "4")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["shard"], serde_json::json!({"index": 1, "count": 4}));
}

/// A scenario (`-f`: journeys of steps, per-user data rows, checks) over
/// two shards: its users split 2 + 2, and the merged steps and checks are
/// what the server saw.
#[test]
fn a_scenario_runs_sharded() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    server_stats(serve.port, true);
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenario/examples/journey.toml");
    let logs: Vec<PathBuf> = (0..2).map(|i| temp_path(&format!("sc-{i}.log"))).collect();
    let kids: Vec<Child> = (0..2)
        .map(|i| {
            let a = strings(&[
                &serve.url("/"),
                "-f",
                file.to_str().unwrap(),
                "-u",
                "4",
                "--ramp-up",
                "0s",
                "-d",
                "2s",
                "--shard",
                &format!("{i}/2"),
                "--start-at",
                "+1s",
                "--frame",
            ]);
            shard(&a, &logs[i])
        })
        .collect();
    for k in kids {
        assert_eq!(finish(k, Duration::from_secs(20)), 0);
    }
    let seen = server_stats(serve.port, true);
    let (out, m, _) = merge(&["--expect-shards", "2"], &logs);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let m = m.unwrap();
    schema_check(&m);
    let steps: Vec<(String, u64)> = m["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap().to_owned(), u(s, "responses")))
        .collect();
    let by_route = &seen["by_route"];
    let step = |n: &str| steps.iter().find(|s| s.0 == n).unwrap().1;
    assert_eq!(step("login"), u(by_route, "/session"), "{seen}");
    assert_eq!(step("token"), u(by_route, "/echo"), "{seen}");
    assert_eq!(step("account") + step("logout"), u(by_route, "/status"));
    assert_eq!(u(&m, "summary.responses"), u(&seen, "requests"));
    assert!(step("login") >= 4, "every user logged in: {steps:?}");
    let per: Vec<u64> = m["merge"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| u(s, "connections"))
        .collect();
    assert_eq!(per, [2, 2]);
    // Checks added up, and thresholds judged on the whole.
    let failed: u64 = m["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| u(c, "failed"))
        .sum();
    assert_eq!(failed, 0);
    assert!(m["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["passed"] == true));
}

/// Thresholds are judged on the merged run, not per shard: a shard whose
/// own part breaches one exits 0 (a non-zero exit would fail its pod and,
/// with `backoffLimit: 0`, the Job and every other shard), its result
/// records the breach, and `yace merge` exits by the merged verdict.
#[test]
fn thresholds_are_judged_on_the_merged_run_and_never_fail_a_shard() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    let url = serve.url("/");
    // Two shards of 300/s, each alone 150/s: (each shard's own threshold
    // result, its stderr), and the merge's output and result.
    let run = |name: &str, threshold: &str| {
        let logs: Vec<PathBuf> = (0..2)
            .map(|i| temp_path(&format!("{name}-{i}.log")))
            .collect();
        let kids: Vec<Child> = (0..2)
            .map(|i| {
                let a = strings(&[
                    &url,
                    "--rate",
                    "300",
                    "-d",
                    "1500ms",
                    "-t",
                    "1",
                    "--threshold",
                    threshold,
                    "--run-id",
                    name,
                    "--shard",
                    &format!("{i}/2"),
                    "--start-at",
                    "+1s",
                    "--frame",
                    "--json",
                    temp_path(&format!("{name}-{i}.json")).to_str().unwrap(),
                ]);
                shard(&a, &logs[i])
            })
            .collect();
        let mut shards = Vec::new();
        for (i, k) in kids.into_iter().enumerate() {
            let code = finish(k, Duration::from_secs(20));
            let err = std::fs::read_to_string(logs[i].with_extension("err")).unwrap();
            assert_eq!(code, 0, "a shard's own breach must not fail it: {err}");
            let own: Value = serde_json::from_str(
                &std::fs::read_to_string(temp_path(&format!("{name}-{i}.json"))).unwrap(),
            )
            .unwrap();
            shards.push((own["thresholds"][0].clone(), err));
        }
        let (out, m, _) = merge(&["--expect-shards", "2"], &logs);
        (shards, out, m)
    };

    // `rps>250`: each shard alone breaches it (150/s), the run does not.
    let (shards, out, m) = run("th-pass", "rps>250");
    for (own, err) in &shards {
        assert_eq!(
            own["passed"], false,
            "the shard's result keeps its breach: {own}"
        );
        assert!(
            err.contains("a threshold was breached on this shard's part"),
            "{err}"
        );
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let m = m.unwrap();
    let t = &m["thresholds"][0];
    assert_eq!(t["expr"], "rps>250");
    assert_eq!(t["passed"], true, "{t}");
    let rps = m["summary"]["rps"].as_f64().unwrap();
    assert!((rps - 300.0).abs() < 20.0, "merged rate {rps}/s");

    // `rps<200`: each shard alone passes it, the run breaches it: exit 3.
    let (shards, out, m) = run("th-fail", "rps<200");
    for (own, err) in &shards {
        assert_eq!(own["passed"], true, "{own}");
        assert!(!err.contains("threshold was breached"), "{err}");
    }
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let m = m.expect("a breached run is still written");
    assert_eq!(m["merge"]["complete"], true);
    assert_eq!(m["thresholds"][0]["passed"], false);
}
