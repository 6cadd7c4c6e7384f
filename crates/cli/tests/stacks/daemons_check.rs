//! The monitors' test daemons (`daemons.rs`) start, answer, and leave
//! nothing behind.

use crate::daemons::{alive, NodeExporter, Sshd};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn node_exporter_serves_metrics() {
    let node = NodeExporter::start();
    let pid = node.pid();
    let metrics = node.scrape();
    for name in ["node_cpu_seconds_total", "node_sockstat_TCP_tw"] {
        assert!(
            metrics.lines().any(|l| l.starts_with(name)),
            "{} has no {name}:\n{metrics}",
            node.url()
        );
    }
    drop(node);
    assert!(!alive(pid), "node_exporter {pid} still runs");
}

#[test]
fn sshd_runs_commands() {
    let sshd = Sshd::start();
    let out = Command::new("ssh")
        .arg("-F")
        .arg(sshd.config())
        .args(["-p", &sshd.port().to_string()])
        .arg(format!("{}@127.0.0.1", sshd.user()))
        .arg("cat /proc/loadavg")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // "0.42 0.60 0.92 1/234 5678"
    let fields: Vec<&str> = text.split_whitespace().collect();
    assert!(
        out.status.success()
            && fields.len() == 5
            && fields[..3].iter().all(|f| f.parse::<f64>().is_ok())
            && fields[3].contains('/'),
        "ssh cat /proc/loadavg: {}: {text:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );

    // A session still running when sshd is dropped goes with it.
    let pid = sshd.pid();
    let mut session = sshd
        .ssh()
        .arg("sleep 600")
        .stderr(Stdio::null()) // "closed by remote host"
        .spawn()
        .unwrap();
    let t = Instant::now();
    let sleep = loop {
        let procs = sshd.session_processes();
        if let Some(&(p, _)) = procs.iter().find(|(_, comm)| comm == "sleep") {
            break p;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "no sleep under sshd: {procs:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(sshd);
    assert!(!alive(pid), "sshd {pid} still runs");
    assert!(!alive(sleep), "the session's sleep ({sleep}) outlived sshd");
    let status = session.wait().unwrap();
    assert!(
        !status.success(),
        "ssh sleep 600 ended well without its sshd: {status}"
    );
}
