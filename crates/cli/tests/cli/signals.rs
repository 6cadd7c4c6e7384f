//! Ctrl-C and SIGTERM end the run early and still leave a result, marked partial.

use std::process::Stdio;
use std::time::{Duration, Instant};

fn interrupt(sig: i32, want_code: i32, want_reason: &str) {
    let s = crate::server();
    let path = crate::temp_path(&format!("sig{sig}.json"));
    let child = crate::yace()
        .args(["run", &s.url(), "-c", "8", "-d", "60s", "-q", "--json"])
        .arg(&path)
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
        crate::stderr(&out)
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(r["end"]["reason"], want_reason);
    assert_eq!(r["end"]["partial"], true);
    let responses = crate::u(&r, "summary.responses");
    assert!(responses > 100, "responses {responses}");
    assert_eq!(crate::u(&r, "summary.errors"), 0);
    let seen = crate::settled(&s);
    // Every request the server answered was either counted or cancelled at the end.
    let started = crate::u(&r, "summary.requests");
    assert!(
        seen.requests >= responses && seen.requests <= started,
        "{seen:?} vs {started}"
    );
    assert!(
        crate::stdout(&out).contains("partial result"),
        "{}",
        crate::stdout(&out)
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
