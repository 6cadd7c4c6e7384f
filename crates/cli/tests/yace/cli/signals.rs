//! Ctrl-C and SIGTERM end the run early and still leave a result, marked partial.

use std::process::Stdio;
use std::time::{Duration, Instant};

fn interrupt(sig: i32, want_code: i32, want_reason: &str) {
    let s = crate::cli::server();
    let path = crate::cli::temp_path(&format!("sig{sig}.json"));
    let html = crate::cli::temp_path(&format!("sig{sig}.html"));
    let child = crate::cli::yace()
        .args(["run", &s.url(), "-c", "8", "-d", "60s", "-q", "--json"])
        .arg(&path)
        .arg("--html")
        .arg(&html)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    let t = Instant::now();
    // SAFETY: signalling the child we spawned, by its PID.
    unsafe { libc::kill(child.id() as i32, sig) };
    let out = child.wait_with_output().unwrap();
    assert!(t.elapsed() < Duration::from_secs(3), "stopped promptly");
    assert_eq!(
        out.status.code(),
        Some(want_code),
        "{}",
        crate::cli::stderr(&out)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(r["end"]["reason"], want_reason);
    assert_eq!(r["end"]["partial"], true);
    // The HTML report is written too, says so at the top, and holds the
    // same partial result.
    let page = std::fs::read_to_string(&html).unwrap();
    let verdict = &page[page.find("class=\"verdict").unwrap()..];
    assert!(
        verdict[..400].contains("partial result"),
        "{}",
        &verdict[..400]
    );
    let back = crate::cli::yace()
        .args(["report", "-F", "json"])
        .arg(&html)
        .output()
        .unwrap();
    let back: serde_json::Value = serde_json::from_slice(&back.stdout).unwrap();
    assert_eq!(back, r);
    let responses = crate::cli::u(&r, "summary.responses");
    assert!(responses > 100, "responses {responses}");
    assert_eq!(crate::cli::u(&r, "summary.errors"), 0);
    let seen = crate::cli::settled(&s);
    // Every request the server answered was either counted or cancelled at the end.
    let started = crate::cli::u(&r, "summary.requests");
    assert!(
        seen.requests >= responses && seen.requests <= started,
        "{seen:?} vs {started}"
    );
    assert!(
        crate::cli::stdout(&out).contains("partial result"),
        "{}",
        crate::cli::stdout(&out)
    );
    s.shutdown();
}

#[test]
fn sigint_writes_a_partial_result_and_exits_130() {
    interrupt(libc::SIGINT, 130, "interrupted");
}

#[test]
fn sigterm_writes_a_partial_result_and_exits_143() {
    interrupt(libc::SIGTERM, 143, "terminated");
}

#[test]
fn the_previous_result_survives_the_run_and_a_double_ctrl_c() {
    // --json, -e and -g are written beside their path and renamed into
    // place: during the run, and after a second Ctrl-C that exits at once,
    // the previous file is still there, whole.
    let s = crate::cli::server();
    let dir = crate::cli::temp_path("atomic");
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    let csv = dir.join("e.csv");
    let gnuplot = dir.join("g.tsv");
    for p in [&json, &csv, &gnuplot] {
        std::fs::write(p, "previous").unwrap();
    }
    let child = crate::cli::yace()
        .args(["run", &s.url(), "-c", "4", "-d", "60s", "-q", "--json"])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let ab = crate::cli::yace()
        .args(["ab", "-q", "-c", "2", "-t", "60", "-e"])
        .arg(&csv)
        .arg("-g")
        .arg(&gnuplot)
        .arg(s.url())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    for p in [&json, &csv, &gnuplot] {
        assert_eq!(
            std::fs::read_to_string(p).unwrap(),
            "previous",
            "{p:?} mid-run"
        );
    }
    for c in [&child, &ab] {
        // SAFETY: signalling the children we spawned, by their PIDs.
        unsafe {
            libc::kill(c.id() as i32, libc::SIGINT);
            libc::kill(c.id() as i32, libc::SIGINT);
        }
    }
    let (out, ab_out) = (
        child.wait_with_output().unwrap(),
        ab.wait_with_output().unwrap(),
    );
    assert_ne!(out.status.code(), Some(0));
    assert_ne!(ab_out.status.code(), Some(0));
    for p in [&json, &csv, &gnuplot] {
        let text = std::fs::read_to_string(p).unwrap();
        // Either the previous file, or (if the first Ctrl-C was handled in
        // full before the second) a complete new one: never a cut one.
        assert!(
            text == "previous"
                || (p == &json && text.trim_end().ends_with('}'))
                || text.ends_with('\n'),
            "{p:?}: {text:?}"
        );
    }
    // One Ctrl-C: the new result lands, complete.
    let child = crate::cli::yace()
        .args(["run", &s.url(), "-c", "4", "-d", "60s", "-q", "--json"])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    // SAFETY: signalling the child we spawned, by its PID.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["end"]["partial"], true);
    s.shutdown();
}

/// Ctrl-C during `yace find-max`: the trial in progress is dropped, the
/// answer so far is printed and written, marked interrupted; exit 130.
#[test]
fn sigint_ends_a_search_with_its_answer_so_far() {
    let json = crate::cli::temp_path("find-max-int.json");
    let child = crate::cli::yace()
        .args([
            "find-max",
            "--slo",
            "p99<1s",
            "--start-rate",
            "100",
            "--trial",
            "2s",
        ])
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first trial (2 s) ends; the second is under way.
    std::thread::sleep(Duration::from_millis(3500));
    // SAFETY: signalling the child we spawned, by its PID.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let text = crate::cli::stdout(&out);
    assert_eq!(out.status.code(), Some(130), "{text}");
    assert!(
        text.contains("interrupted before the search ended"),
        "{text}"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["answer"]["end"], "interrupted");
    assert_eq!(doc["answer"]["max_rate"], 100.0);
}
