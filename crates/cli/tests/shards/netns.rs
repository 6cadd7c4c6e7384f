//! Shards beyond loopback: each shard its own network namespace and
//! address, the server in one more, all made by the test and deleted after
//! it (even on a panic). The merged count is the server's, the merged rate
//! the plan's, the starts within tolerance, and each shard's traffic came
//! from its own address over its own link: the server's namespace counts
//! the responses it sent to each address on each link (a `tc` class per
//! link, see [`Lab`]).
//!
//! Needs root or CAP_NET_ADMIN and iproute2 (`ip`, `tc`, the kernel's
//! veth, bridge, htb and u32). Where namespaces cannot be made the test
//! fails saying so, unless `YACE_SKIP_NETNS=1` says to skip it.

use crate::support::{temp_path, u};
use crate::{finish, merge, schema_check, stderr, strings};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// The server's address (on the bridge in its namespace) and port.
const SERVER: &str = "10.200.0.1";
const PORT: u16 = 8080;

/// Shard i's address: 10.200.0.(10 + i).
fn shard_addr(i: usize) -> String {
    format!("10.200.0.{}", 10 + i)
}

/// Runs `ip`/`tc` with `args`; the error says the command and its stderr.
fn cmd(prog: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(prog)
        .args(args)
        .output()
        .map_err(|e| format!("`{prog} {}`: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`{prog} {}` failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The namespaces of one test: the server's `yace-<pid>-<tag>-s` and each
/// shard's `yace-<pid>-<tag>-<i>`, every shard's veth on a bridge in the
/// server's namespace. Deleting a namespace deletes its links, so nothing
/// is left in the root namespace at any point, and Drop deletes them all.
struct Lab {
    server: String,
    shards: Vec<String>,
    made: Vec<String>,
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in self.made.iter().rev() {
            let _ = cmd("ip", &["netns", "del", ns]);
        }
    }
}

impl Lab {
    /// Makes the namespaces, or says why not: `None` only when
    /// `YACE_SKIP_NETNS=1` asks to skip.
    fn new(tag: &str, n: usize) -> Option<Lab> {
        let base = format!("yace-{}-{tag}", std::process::id());
        let mut lab = Lab {
            server: format!("{base}-s"),
            shards: (0..n).map(|i| format!("{base}-{i}")).collect(),
            made: Vec::new(),
        };
        match lab.build() {
            Ok(()) => Some(lab),
            Err(e) => {
                drop(lab);
                if std::env::var("YACE_SKIP_NETNS").as_deref() == Ok("1") {
                    eprintln!("SKIPPED (YACE_SKIP_NETNS=1): network namespaces: {e}");
                    None
                } else {
                    panic!(
                        "cannot make the test's network namespaces: {e}\n\
                         This test needs root (or CAP_NET_ADMIN) and iproute2 (`ip`, `tc`) with \
                         veth, bridge, htb and u32 in the kernel. Run it as root, or set \
                         YACE_SKIP_NETNS=1 to skip it knowingly."
                    )
                }
            }
        }
    }

    fn build(&mut self) -> Result<(), String> {
        let s = self.server.clone();
        // Every name and address here is free of spaces.
        let ip = |line: String| cmd("ip", &line.split_whitespace().collect::<Vec<_>>());
        let tc = |line: String| cmd("tc", &line.split_whitespace().collect::<Vec<_>>());
        ip(format!("netns add {s}"))?;
        self.made.push(s.clone());
        ip(format!("-n {s} link set lo up"))?;
        ip(format!("-n {s} link add br0 type bridge"))?;
        ip(format!("-n {s} addr add {SERVER}/24 dev br0"))?;
        ip(format!("-n {s} link set br0 up"))?;
        for (i, c) in self.shards.clone().iter().enumerate() {
            ip(format!("netns add {c}"))?;
            self.made.push(c.clone());
            let addr = shard_addr(i);
            ip(format!("-n {c} link set lo up"))?;
            ip(format!(
                "-n {s} link add vs{i} type veth peer name eth0 netns {c}"
            ))?;
            ip(format!("-n {s} link set vs{i} master br0"))?;
            ip(format!("-n {s} link set vs{i} up"))?;
            ip(format!("-n {c} addr add {addr}/24 dev eth0"))?;
            ip(format!("-n {c} link set eth0 up"))?;
            // What the server sends on this link: its responses to the
            // shard's address (PSH set: one segment per response, each a
            // single small write) in class 1:10, everything else in 1:20.
            tc(format!(
                "-n {s} qdisc add dev vs{i} root handle 1: htb default 20 r2q 100000"
            ))?;
            for class in ["1:10", "1:20"] {
                tc(format!(
                    "-n {s} class add dev vs{i} parent 1: classid {class} htb rate 10gbit"
                ))?;
            }
            tc(format!(
                "-n {s} filter add dev vs{i} parent 1: protocol ip prio 1 u32 \
                 match ip dst {addr}/32 match ip sport {PORT} 0xffff \
                 match u8 0x08 0x08 at 33 flowid 1:10"
            ))?;
        }
        Ok(())
    }

    /// Responses the server sent to shard i's address over shard i's link.
    fn responses_to(&self, i: usize) -> u64 {
        let dev = format!("vs{i}");
        let out = cmd(
            "tc",
            &["-n", &self.server, "-s", "class", "show", "dev", &dev],
        )
        .unwrap();
        let mut lines = out.lines();
        while let Some(l) = lines.next() {
            if l.starts_with("class htb 1:10 ") {
                // " Sent 23585 bytes 138 pkt (dropped 0, …)"
                let sent = lines.next().unwrap();
                let w: Vec<&str> = sent.split_whitespace().collect();
                assert_eq!(w[0], "Sent", "{out}");
                return w[3].parse().unwrap();
            }
        }
        panic!("no class 1:10 on vs{i}: {out}")
    }

    /// Runs `f` on a thread that has entered namespace `ns`.
    fn inside<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
        let path = format!("/var/run/netns/{ns}");
        std::thread::spawn(move || {
            let file = std::fs::File::open(&path).unwrap();
            use std::os::fd::AsRawFd;
            // Only this thread moves (setns on a thread of a process).
            let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(rc, 0, "setns {path}: {}", std::io::Error::last_os_error());
            f()
        })
        .join()
        .unwrap()
    }

    /// `GET /_stats?reset=1` from inside the server's namespace (over its
    /// loopback: no shard's link sees it).
    fn server_stats(&self) -> Value {
        std::thread::sleep(Duration::from_millis(300));
        Lab::inside(&self.server, || {
            let mut s = std::net::TcpStream::connect((SERVER, PORT)).unwrap();
            write!(s, "GET /_stats?reset=1 HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
            let mut text = String::new();
            s.read_to_string(&mut text).unwrap();
            serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap()
        })
    }

    /// `yace serve` in the server's namespace, waited for until it listens.
    fn serve(&self) -> Killed {
        let child = Command::new("ip")
            .args(["netns", "exec", &self.server, env!("CARGO_BIN_EXE_yace")])
            .args(["serve", "--bind", SERVER, "-p", &PORT.to_string()])
            .args(["--threads", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let serve = Killed(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !Lab::inside(&self.server, || {
            std::net::TcpStream::connect((SERVER, PORT)).is_ok()
        }) {
            assert!(Instant::now() < deadline, "yace serve did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        serve
    }

    /// Shard i: `yace run ARGS -q` in its namespace, stdout to `log`.
    fn shard(&self, i: usize, args: &[String], log: &PathBuf) -> Child {
        Command::new("ip")
            .args(["netns", "exec", &self.shards[i], env!("CARGO_BIN_EXE_yace")])
            .arg("run")
            .args(args)
            .arg("-q")
            .stdout(std::fs::File::create(log).unwrap())
            .stderr(std::fs::File::create(log.with_extension("err")).unwrap())
            .spawn()
            .unwrap()
    }
}

/// A process this test started, killed by its PID when dropped (`ip netns
/// exec` execs the program: the child's PID is yace's).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Three shards, each in its own namespace with its own address, against
/// one `yace serve` in another, started together at one absolute time.
#[test]
fn shards_in_their_own_network_namespaces_merge_to_what_the_server_saw() {
    let Some(lab) = Lab::new("open", 3) else {
        return;
    };
    let serve = lab.serve();
    lab.server_stats();
    // One start for all, resolved once here as a launcher would.
    let at =
        humantime::format_rfc3339_millis(SystemTime::now() + Duration::from_secs(2)).to_string();
    let run_id = format!("netns-{}", std::process::id());
    let url = format!("http://{SERVER}:{PORT}/");
    let logs: Vec<PathBuf> = (0..3)
        .map(|i| temp_path(&format!("netns-{i}.log")))
        .collect();
    let kids: Vec<Child> = (0..3)
        .map(|i| {
            let a = strings(&[
                &url,
                "--rate",
                "300",
                "-d",
                "2s",
                "-t",
                "1",
                "--run-id",
                &run_id,
                "--shard",
                &format!("{i}/3"),
                "--start-at",
                &at,
                "--frame",
            ]);
            lab.shard(i, &a, &logs[i])
        })
        .collect();
    for (i, k) in kids.into_iter().enumerate() {
        let code = finish(k, Duration::from_secs(20));
        let err = std::fs::read_to_string(logs[i].with_extension("err")).unwrap_or_default();
        assert_eq!(code, 0, "shard {i}: {err}");
    }
    let seen = lab.server_stats();
    drop(serve);

    let (out, merged, _) = merge(&["--expect-shards", "3"], &logs);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let m = merged.unwrap();
    schema_check(&m);
    assert_eq!(m["merge"]["complete"], true);
    // The merged count is the plan's and the server's.
    assert_eq!(u(&m, "summary.planned"), 600);
    // All sent; one still in flight at the end is cancelled, not lost (a
    // busy machine can make it so); the server saw each one answered.
    let responses = u(&m, "summary.responses");
    assert_eq!(responses + u(&m, "summary.cancelled"), 600);
    assert_eq!(u(&m, "summary.errors") + u(&m, "summary.dropped"), 0);
    assert!((responses..=600).contains(&u(&seen, "requests")), "{seen}");
    // The merged rate is the plan's.
    let rps = m["summary"]["rps"].as_f64().unwrap();
    assert!((rps - 300.0).abs() < 15.0, "merged rate {rps}/s");
    // Every shard started on time at the one agreed time.
    let spread = m["merge"]["start_spread_ms"].as_f64().unwrap();
    assert!(spread < 50.0, "starts spread over {spread} ms");
    let shards = m["merge"]["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 3);
    let mut total = 0;
    for s in shards {
        let i = u(s, "index") as usize;
        assert_eq!(s["start"], "on_time", "{s}");
        assert_eq!(s["start_at"].as_str().unwrap(), at);
        let off = s["start_offset_ms"].as_f64().unwrap();
        assert!(off.abs() < 50.0, "shard {i} started {off} ms off");
        assert_eq!(u(s, "sent_requests"), 200);
        // Its requests came from its own address over its own link: the
        // server answered exactly that many to it there.
        let answered = lab.responses_to(i);
        assert_eq!(
            answered,
            u(s, "sent_requests"),
            "responses to {} on its link",
            shard_addr(i)
        );
        total += answered;
    }
    assert_eq!(total, u(&seen, "requests"));
}
