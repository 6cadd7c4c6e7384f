//! `yace k8s run` end to end against a fake `kubectl`
//! (`fake-kubectl.py`, beside this file): it takes the applied manifests
//! and runs the Indexed Job's pods as local processes — the container's
//! args from the manifest, JOB_COMPLETION_INDEX, the ConfigMap's files in a
//! folder standing in for the mount — against `yace serve` on loopback. So
//! the rendered command line itself is what runs, and what the server saw
//! is checked against the merged result.

use super::*;

/// The fake cluster: its state folder, and the pods' processes stopped
/// (by their PIDs) if a test ends early.
struct FakeCluster {
    state: PathBuf,
}

impl FakeCluster {
    fn new(name: &str) -> FakeCluster {
        let state = temp_path(&format!("k8s-{name}"));
        let _ = std::fs::remove_dir_all(&state);
        std::fs::create_dir_all(&state).unwrap();
        FakeCluster { state }
    }

    fn kubectl() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/shards/fake-kubectl.py")
    }

    /// `yace k8s run …` with this cluster's kubectl (`pods`: `run` or
    /// `pending`).
    fn command(&self, pods: &str, args: &[&str]) -> std::process::Command {
        let mut c = yace();
        c.args(["k8s", "run", "--kubectl"])
            .arg(Self::kubectl())
            .args(args)
            .env("FAKE_KUBECTL_STATE", &self.state)
            .env("FAKE_KUBECTL_YACE", env!("CARGO_BIN_EXE_yace"))
            .env("FAKE_KUBECTL_PODS", pods);
        c
    }

    /// Every kubectl call, as its arguments.
    fn calls(&self) -> Vec<Vec<String>> {
        std::fs::read_to_string(self.state.join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn deleted(&self) -> String {
        std::fs::read_to_string(self.state.join("deleted.log")).unwrap_or_default()
    }

    fn exists(&self, kind: &str, ns: &str, name: &str) -> bool {
        self.state
            .join(format!("objects/{kind}/{ns}/{name}.json"))
            .exists()
    }

    /// The pods' folders (running, or kept aside once their Job was
    /// deleted), sorted by name.
    fn pods(&self) -> Vec<PathBuf> {
        let mut all: Vec<PathBuf> = ["pods", "deleted-pods"]
            .iter()
            .flat_map(|d| std::fs::read_dir(self.state.join(d)).into_iter().flatten())
            .map(|e| e.unwrap().path())
            .collect();
        all.sort();
        all
    }

    /// The pods whose process has not ended.
    fn running(&self) -> Vec<PathBuf> {
        self.pods()
            .into_iter()
            .filter(|p| p.join("pid").exists() && !p.join("rc").exists())
            .collect()
    }
}

impl Drop for FakeCluster {
    fn drop(&mut self) {
        for p in self.running() {
            if let Ok(pid) = std::fs::read_to_string(p.join("pid")) {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", pid.trim()])
                    .status();
            }
        }
    }
}

fn wait_output(mut c: Child, within: Duration) -> (i32, String, String) {
    let code = finish_keep(&mut c, within);
    let mut out = String::new();
    let mut err = String::new();
    c.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (code, out, err)
}

/// Waits for a child whose output is piped, bounded.
fn finish_keep(c: &mut Child, within: Duration) -> i32 {
    let deadline = Instant::now() + within;
    loop {
        if let Some(s) = c.try_wait().unwrap() {
            return s.code().unwrap_or(-1);
        }
        if Instant::now() > deadline {
            let _ = c.kill();
            let _ = c.wait();
            panic!("yace k8s run did not end within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn spawn(mut c: std::process::Command) -> Child {
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn argv(pod: &Path) -> Vec<String> {
    serde_json::from_str(&std::fs::read_to_string(pod.join("argv.json")).unwrap()).unwrap()
}

/// A scenario (`-f`, with its data file) over three pods: the ConfigMap
/// carries the files, each pod runs the manifest's args as shard
/// JOB_COMPLETION_INDEX, and the merged result is what the server saw;
/// the Job and ConfigMap are deleted at the end.
#[test]
fn k8s_run_runs_the_manifests_shards_and_merges_what_the_server_saw() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    server_stats(serve.port, true);
    let cluster = FakeCluster::new("e2e");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenario/examples/journey.toml");
    let json = temp_path("k8s-e2e.json");
    let html = temp_path("k8s-e2e.html");
    let c = cluster.command(
        "run",
        &[
            "--shards",
            "3",
            "--image",
            "reg.example/yace:test",
            "--name",
            "shop",
            "--start-in",
            "4s",
            "--json",
            json.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
            "--",
            &serve.url("/"),
            "-f",
            file.to_str().unwrap(),
            "-u",
            "6",
            "--ramp-up",
            "0s",
            "-d",
            "2s",
        ],
    );
    let (code, out, err) = wait_output(spawn(c), Duration::from_secs(40));
    assert_eq!(code, 0, "{err}");
    let seen = server_stats(serve.port, true);
    assert!(err.contains("all 3 pods Ready"), "{err}");
    assert!(err.contains("deleted job shop"), "{err}");
    assert!(err.contains("deleted configmap shop-plan"), "{err}");

    // The merged result: every shard, on time, what the server saw.
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    schema_check(&m);
    assert_eq!(m["merge"]["complete"], true);
    let shards = m["merge"]["shards"].as_array().unwrap();
    let per: Vec<(u64, u64)> = shards
        .iter()
        .map(|s| (u(s, "index"), u(s, "connections")))
        .collect();
    assert_eq!(per, [(0, 2), (1, 2), (2, 2)], "{shards:?}");
    for s in shards {
        assert_eq!(s["start"], "on_time", "{s}");
    }
    assert_eq!(u(&m, "summary.responses"), u(&seen, "requests"), "{seen}");
    let steps: Vec<(String, u64)> = m["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap().to_owned(), u(s, "responses")))
        .collect();
    let step = |n: &str| steps.iter().find(|s| s.0 == n).unwrap().1;
    assert_eq!(step("login"), u(&seen["by_route"], "/session"), "{seen}");
    assert!(step("login") >= 6, "every user logged in: {steps:?}");
    // The summary on stdout, the HTML page written.
    let responses = format!("{} responses", u(&m, "summary.responses"));
    assert!(out.contains(&responses), "{out}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<html"), "{}", &page[..page.len().min(200)]);

    // What ran: the manifest's args, with the shard from the environment
    // and the scenario read from the ConfigMap's mount.
    let pods = cluster.pods();
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        let args = argv(pod);
        let after = |flag: &str| args[args.iter().position(|a| a == flag).unwrap() + 1].clone();
        assert_eq!(args[1], "run");
        assert_eq!(after("--shard"), "env");
        assert_eq!(after("--shards"), "3");
        assert!(args.contains(&"--frame".to_owned()));
        let name = pod.file_name().unwrap().to_str().unwrap();
        assert!(
            after("-f").ends_with(&format!("/pods/{name}/volumes/plan/journey.toml")),
            "{args:?}"
        );
        let mounted = pod.join("volumes/plan");
        assert_eq!(
            std::fs::read_to_string(mounted.join("journey.toml")).unwrap(),
            std::fs::read_to_string(&file).unwrap()
        );
        assert!(mounted.join("accounts.csv").exists());
        assert_eq!(std::fs::read_to_string(pod.join("rc")).unwrap().trim(), "0");
    }
    // apply, then pods until Ready, the Job until done, each pod's log,
    // and the clean-up.
    let calls = cluster.calls();
    assert_eq!(calls[0], ["apply", "-f", "-"]);
    let logs = calls.iter().filter(|c| c[0] == "logs").count();
    assert_eq!(logs, 3, "{calls:?}");
    assert!(calls
        .iter()
        .any(|c| c.starts_with(&strings(&["get", "pods", "-l", "job-name=shop"]))));
    assert!(!cluster.exists("job", "default", "shop"));
    assert!(!cluster.exists("configmap", "default", "shop-plan"));
    assert!(cluster.running().is_empty());
}

/// The open model over two pods in a namespace, kept with `--keep`: the
/// exact count and rate of the plan, every call in the namespace, the
/// pods' logs kept in `--logs`.
#[test]
fn k8s_run_keeps_the_job_and_sends_exactly_the_plan() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    server_stats(serve.port, true);
    let cluster = FakeCluster::new("keep");
    let logs = temp_path("k8s-keep-logs");
    let json = temp_path("k8s-keep.json");
    let c = cluster.command(
        "run",
        &[
            "--shards",
            "2",
            "--image",
            "reg.example/yace:test",
            "--name",
            "open",
            "--namespace",
            "load",
            "--run-id",
            "k8s-open-1",
            "--start-in",
            "3s",
            "--keep",
            "--logs",
            logs.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "-q",
            "--",
            &serve.url("/"),
            "--rate",
            "300",
            "-d",
            "2s",
            // Each pod alone sends 150/s and breaches it; the run does
            // not: no pod fails (which would fail the Job), the merge
            // judges the whole.
            "--threshold",
            "rps>250",
        ],
    );
    let (code, out, err) = wait_output(spawn(c), Duration::from_secs(40));
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty(), "-q: {out}");
    for pod in cluster.pods() {
        assert_eq!(std::fs::read_to_string(pod.join("rc")).unwrap().trim(), "0");
    }
    let seen = server_stats(serve.port, true);
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(m["merge"]["complete"], true, "{err}");
    assert_eq!(m["merge"]["run_id"], "k8s-open-1");
    // Every planned request sent and answered, but for one still in flight
    // at the end (cancelled: a busy machine can make it so); the server saw
    // each one yace answered, and no more than the plan.
    let responses = u(&m, "summary.responses");
    assert_eq!(
        responses + u(&m, "summary.cancelled"),
        600,
        "{}\n{err}",
        m["warnings"]
    );
    assert_eq!(u(&m, "summary.errors") + u(&m, "summary.dropped"), 0);
    assert!((responses..=600).contains(&u(&seen, "requests")), "{seen}");
    let rps = m["summary"]["rps"].as_f64().unwrap();
    assert!((rps - 300.0).abs() < 15.0, "merged rate {rps}/s");
    assert_eq!(m["thresholds"][0]["passed"], true, "{}", m["thresholds"]);
    for c in cluster.calls() {
        assert!(c.ends_with(&["--namespace".into(), "load".into()]), "{c:?}");
    }
    // Kept: the Job is there, nothing was deleted; the logs are kept.
    assert!(cluster.exists("job", "load", "open"));
    assert_eq!(cluster.deleted(), "");
    assert!(err.contains("kept Job open"), "{err}");
    let kept: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(kept.len(), 2);
    assert!(kept
        .iter()
        .all(|l| l.contains("YACE-RESULT v1 k8s-open-1 ")));
    // Applied again while kept: refused by the cluster, said plainly,
    // and no load sent.
    let again = cluster
        .command(
            "run",
            &[
                "--shards",
                "2",
                "--image",
                "reg.example/yace:other",
                "--name",
                "open",
                "--namespace",
                "load",
                "--",
                &serve.url("/"),
                "--rate",
                "300",
                "-d",
                "2s",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("is already there"),
        "{}",
        stderr(&again)
    );
    assert_eq!(u(&server_stats(serve.port, true), "requests"), 0);
}

/// Pods that never become Ready: the Job is deleted before the start
/// time, the exit code and message say why, and no request is sent.
#[test]
fn k8s_run_deletes_the_job_when_the_pods_are_not_ready_in_time() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    server_stats(serve.port, true);
    let cluster = FakeCluster::new("pending");
    let began = Instant::now();
    let out = cluster
        .command(
            "pending",
            &[
                "--shards",
                "2",
                "--image",
                "reg.example/yace:test",
                "--start-in",
                "3s",
                "--",
                &serve.url("/"),
                "--rate",
                "100",
                "-d",
                "2s",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    // Given up before the start time (3 s), not after.
    assert!(
        began.elapsed() < Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    let err = stderr(&out);
    assert!(err.contains("only 0 of 2 pods were Ready"), "{err}");
    assert!(
        err.contains("the Job was deleted before any load was sent"),
        "{err}"
    );
    assert!(
        err.contains("Unschedulable: 0/1 nodes are available"),
        "{err}"
    );
    assert!(err.contains("--start-in (now 3s)"), "{err}");
    assert!(cluster.deleted().contains("job default yace"));
    assert!(!cluster.exists("job", "default", "yace"));
    let seen = server_stats(serve.port, false);
    assert_eq!(u(&seen, "requests"), 0, "{seen}");

    // A pod that fails before the start (its target refuses): the Job is
    // deleted at once, and the pod's own words are shown.
    let failing = FakeCluster::new("failing");
    let began = Instant::now();
    let out = failing
        .command(
            "run",
            &[
                "--shards",
                "2",
                "--image",
                "i",
                "--start-in",
                "20s",
                "--",
                "http://127.0.0.1:9/",
                "--rate",
                "10",
                "-d",
                "1s",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(began.elapsed() < Duration::from_secs(15));
    let err = stderr(&out);
    assert!(err.contains("pods failed before the start time"), "{err}");
    assert!(err.contains("Failed: exit 1"), "{err}");
    assert!(err.contains("cannot connect to 127.0.0.1:9"), "{err}");
    assert!(failing.deleted().contains("job default yace"));

    // Bad input is refused before kubectl is called at all.
    let bad = FakeCluster::new("refused");
    let out = bad
        .command(
            "run",
            &[
                "--shards",
                "3",
                "--image",
                "i",
                "--",
                &serve.url("/"),
                "-c",
                "2",
                "-d",
                "1s",
            ],
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot be split over 3 shards"));
    assert!(bad.calls().is_empty());
    // A kubectl that is not there is named, with the fix.
    let out = yace()
        .args(["k8s", "run", "--kubectl", "/nonexistent/kubectl"])
        .args([
            "--shards",
            "2",
            "--image",
            "i",
            "--",
            &serve.url("/"),
            "-d",
            "1s",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--kubectl /nonexistent/kubectl: not found"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("delete"), "{}", stderr(&out));
}

/// Ctrl-C during the run deletes the Job: its pods stop, the load stops.
#[test]
fn k8s_run_interrupted_deletes_the_job_and_the_load_stops() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    server_stats(serve.port, true);
    let cluster = FakeCluster::new("interrupt");
    let c = cluster.command(
        "run",
        &[
            "--shards",
            "2",
            "--image",
            "reg.example/yace:test",
            "--start-in",
            "2s",
            "--",
            &serve.url("/"),
            "--rate",
            "100",
            "-d",
            "30s",
        ],
    );
    let child = spawn(c);
    // The load is flowing.
    let deadline = Instant::now() + Duration::from_secs(15);
    while u(&server_stats(serve.port, false), "requests") < 50 {
        assert!(Instant::now() < deadline, "no load reached the server");
    }
    // By its PID: this test started it.
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let (code, _, err) = wait_output(child, Duration::from_secs(20));
    assert_eq!(code, 130, "{err}");
    assert!(err.contains("interrupted: deleting Job yace"), "{err}");
    assert!(cluster.deleted().contains("job default yace"), "{err}");
    assert!(cluster.running().is_empty());
    // Nothing more reaches the server.
    let before = u(&server_stats(serve.port, false), "requests");
    std::thread::sleep(Duration::from_millis(500));
    let after = u(&server_stats(serve.port, false), "requests");
    assert_eq!(before, after);
    assert!(after < 100 * 30, "{after}");
}
