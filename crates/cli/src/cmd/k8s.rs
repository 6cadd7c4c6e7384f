//! `yace k8s run`: a sharded run on Kubernetes, driven through the user's
//! own `kubectl` — their kubeconfig and context are the only authority;
//! yace holds no credentials and opens no connection to the cluster itself
//! (docs/design/010-shards.md).
//!
//! The manifests are `yace k8s render`'s (one source). Then: apply; wait
//! until every pod is Ready a little before the start time, or delete the
//! Job before any load is sent; wait for the Job's end, bounded by the
//! run's length; read every pod's log (the shards print framed results)
//! and merge them as `yace merge` does; report; delete the Job and the
//! ConfigMap unless `--keep`. Ctrl-C deletes the Job.

use super::{driver, render};
use crate::args::K8sRunArgs;
use crate::{exit, Failure};
use host::signals;
use serde_json::Value;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// How long one kubectl call may take (it has its own retries and
/// timeouts; this bounds a hung one).
const CALL: Duration = Duration::from_secs(60);
/// How long one look at the pods or the Job may take.
const LOOK: Duration = Duration::from_secs(20);
/// How often the pods and the Job are looked at.
const POLL: Duration = Duration::from_millis(500);
/// After the run's length: time for the shards to drain, write and exit,
/// and for the Job to say it ended (as the Job's own deadline allows).
const TAIL: Duration = Duration::from_secs(120);

pub fn run(a: K8sRunArgs) -> Result<u8, Failure> {
    let job = render::k8s_job(&a.job, &a.run)?;
    let json_out = driver::create_output("--json", a.json.as_deref())?;
    let html_out = driver::create_output("--html", a.html.as_deref())?;
    let logs = match &a.logs {
        Some(d) => d.clone(),
        None => {
            std::env::temp_dir().join(format!("yace-k8s-{}-{}", job.run_id, std::process::id()))
        }
    };
    // A folder given is made now (a bad path fails before any load); the
    // temporary one only when there are logs to keep.
    if a.logs.is_some() {
        std::fs::create_dir_all(&logs).map_err(|e| {
            Failure::usage(format!(
                "--logs {}: cannot create the folder: {e}",
                logs.display()
            ))
        })?;
    }
    let kubectl = Kubectl::new(a.kubectl.clone(), a.job.namespace.clone());
    let name = a.job.name.clone();
    let shards = a.job.shards;
    let at = humantime::format_rfc3339_seconds(job.start).to_string();
    // Ctrl-C and SIGTERM are noted and acted on here (the Job is deleted);
    // kubectl runs in a process group of its own, so a Ctrl-C at the
    // terminal does not cut a call short.
    signals::install();

    let manifests = serde_json::to_vec(&job.list()).expect("manifests serialize");
    let mut applied = Applied {
        kubectl: &kubectl,
        name: name.clone(),
        configmap: job.configmap.clone(),
        keep: a.keep,
        stop_job: false,
    };
    let out = match kubectl.call(&["apply", "-f", "-"], Some(manifests), CALL) {
        Ok(o) => o,
        // No kubectl: nothing was applied.
        Err(f) if f.code == exit::USAGE => {
            applied.name.clear();
            applied.configmap = None;
            return Err(f);
        }
        // Timed out: it may have been applied.
        Err(f) => {
            applied.stop_job = true;
            return Err(f);
        }
    };
    echo(&out.stdout);
    if !out.ok() {
        // What this call created goes again; what was there stays.
        let created = |what: &str| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|l| l.starts_with(what) && l.ends_with(" created"))
        };
        if !created(&format!("job.batch/{name} ")) {
            applied.name.clear();
        }
        if !created("configmap/") {
            applied.configmap = None;
        }
        applied.stop_job = true;
        return Err(Failure::runtime(format!(
            "kubectl apply failed ({}): {}{}",
            out.code_text(),
            out.stderr.trim(),
            if out.stderr.contains("field is immutable") {
                format!(
                    "\na Job named '{name}' is already there (a run kept with --keep?): \
                     delete it, or give this run another --name"
                )
            } else {
                String::new()
            }
        )));
    }
    eprintln!(
        "yace: Job {name} applied: {shards} pods of run {}, starting at {at}",
        job.run_id
    );

    // Every pod Ready a little before the start, or nothing is sent.
    let lead = (job.start_in / 4).min(Duration::from_secs(5));
    let ready_by = job.start - lead;
    loop {
        let (pods, looked) = match pods(&kubectl, &name, &job.run_id) {
            Ok(p) => (p, Ok(())),
            Err(f) => (Vec::new(), Err(f.message)),
        };
        let ready = pods.iter().filter(|p| p.ready).count() as u64;
        if ready >= shards {
            eprintln!("yace: all {shards} pods Ready; the run starts at {at}");
            break;
        }
        let failed: Vec<&Pod> = pods.iter().filter(|p| p.phase == "Failed").collect();
        let late = SystemTime::now() >= ready_by;
        if late || !failed.is_empty() {
            let mut msg = if failed.is_empty() {
                format!(
                    "only {ready} of {shards} pods were Ready {} s before the start time {at}: \
                     the Job was deleted before any load was sent",
                    lead.as_secs_f64()
                )
            } else {
                format!(
                    "{} of {shards} pods failed before the start time {at}: the Job was \
                     deleted before any load was sent",
                    failed.len()
                )
            };
            if let Err(e) = &looked {
                msg.push_str(&format!("\n  {e}"));
            } else {
                msg.push_str(&not_ready(&pods, shards));
            }
            for p in &failed {
                if let Ok(o) = kubectl.call(&["logs", &p.name], None, CALL) {
                    let text = String::from_utf8_lossy(&o.stdout);
                    let tail: Vec<&str> = text.lines().rev().take(5).collect();
                    for l in tail.into_iter().rev() {
                        msg.push_str(&format!("\n    {}: {l}", p.name));
                    }
                }
            }
            msg.push_str(&format!(
                "\ngive the pods more time with --start-in (now {}), or check the image \
                 (--image) and the cluster's room for {shards} pods of --cpu {} and --memory {}",
                a.job.start_in, a.job.cpu, a.job.memory
            ));
            // (The failed pods' logs are read above: they go with the Job.)
            applied.stop_job = true;
            drop(applied);
            return Err(Failure {
                code: exit::TOO_LATE,
                message: msg,
            });
        }
        if let Some(sig) = pause(POLL) {
            return Ok(interrupted(sig, applied));
        }
    }

    // The run, then the Job's end (bounded).
    let end_by = job.start + job.length + TAIL;
    let ended = loop {
        if let Some(sig) = pause(POLL) {
            return Ok(interrupted(sig, applied));
        }
        // A failed look (the API server busy, a network blip) does not
        // stop a run under way: the next one may succeed.
        match job_status(&kubectl, &name) {
            Ok(v) => {
                if let Some(how) = job_end(&v, shards) {
                    eprintln!("yace: the Job ended: {how}");
                    break true;
                }
            }
            Err(e) if e.contains("NotFound") => {
                eprintln!("yace: the Job is gone (deleted by someone else?): {e}");
                break false;
            }
            Err(e) => eprintln!("yace: {e} (looking again)"),
        }
        if SystemTime::now() > end_by {
            eprintln!(
                "yace: the Job did not end within {} of the start (the run's length and \
                 {} s): collecting what the pods wrote, then deleting it",
                humantime::format_duration(job.length + TAIL),
                TAIL.as_secs()
            );
            applied.stop_job = true;
            break false;
        }
    };

    // Every pod's log: the shards' framed results (the pods looked up
    // again after a blip, before the Job and its logs go).
    let mut tries = 0;
    let pods = loop {
        match pods(&kubectl, &name, &job.run_id) {
            Ok(p) => break p,
            Err(f) if tries < 3 => {
                eprintln!("yace: {} (looking again)", f.message);
                tries += 1;
                std::thread::sleep(Duration::from_secs(2));
            }
            Err(f) => return Err(f),
        }
    };
    std::fs::create_dir_all(&logs)
        .map_err(|e| Failure::runtime(format!("{}: cannot create: {e}", logs.display())))?;
    let mut files = Vec::new();
    for p in &pods {
        let file = logs.join(format!(
            "shard-{}-{}.log",
            p.index.map_or("x".into(), |i| i.to_string()),
            p.name
        ));
        match kubectl.call(&["logs", &p.name], None, CALL) {
            Ok(o) if o.ok() => {
                std::fs::write(&file, &o.stdout).map_err(|e| {
                    Failure::runtime(format!("{}: cannot write: {e}", file.display()))
                })?;
                files.push(file);
            }
            Ok(o) => eprintln!(
                "yace: kubectl logs {} failed ({}): {}",
                p.name,
                o.code_text(),
                o.stderr.trim()
            ),
            Err(f) => eprintln!("yace: {}", f.message),
        }
    }
    drop(applied);
    let kept = || {
        format!(
            "the pods' logs are in {} (yace merge --expect-shards {shards} {} re-merges them)",
            logs.display(),
            logs.display()
        )
    };
    let collected = merge::collect(&files).map_err(Failure::runtime)?;
    for f in &collected.empty {
        eprintln!("yace: {f}: no yace result in it");
    }
    let merged = merge::merge(
        collected.inputs,
        shards,
        Some(&job.run_id),
        &collected.damage,
    )
    .map_err(|r| Failure::runtime(format!("{r}\n{}", kept())))?;
    for n in &merged.notes {
        eprintln!("yace: {n}");
    }
    let r = &merged.result;
    if !a.quiet {
        let _ =
            report::text::summary_in(r, std::io::stdout().lock(), false, driver::language(None));
    }
    driver::write_json(r, json_out)?;
    driver::write_html(r, html_out, driver::language(None))?;
    let info = r.merge.as_ref().expect("a merge says what it merged");
    if merged.complete() && ended {
        eprintln!(
            "yace: merged all {} shards of run {}",
            info.expected_shards, info.run_id
        );
        if a.logs.is_none() && a.json.is_some() {
            let _ = std::fs::remove_dir_all(&logs);
        } else {
            eprintln!("yace: {}", kept());
        }
        if r.thresholds.iter().any(|t| !t.passed) {
            return Ok(exit::THRESHOLD);
        }
        return Ok(exit::OK);
    }
    eprintln!(
        "yace: the merged result of run {} is INCOMPLETE ({} of {} shards merged):",
        info.run_id,
        info.shards.len(),
        info.expected_shards
    );
    for reason in &info.reasons {
        eprintln!("  - {reason}");
    }
    eprintln!("yace: {}", kept());
    Ok(exit::INCOMPLETE)
}

/// What was applied; deleted when dropped: the Job unless kept (always
/// when the run is stopped), the ConfigMap unless kept.
struct Applied<'a> {
    kubectl: &'a Kubectl,
    name: String,
    configmap: Option<String>,
    keep: bool,
    /// The run is being stopped: the Job goes, `--keep` or not.
    stop_job: bool,
}

impl Drop for Applied<'_> {
    fn drop(&mut self) {
        let mut gone = Vec::new();
        // (No name: the Job was not this run's to delete.)
        if (self.stop_job || !self.keep) && !self.name.is_empty() {
            gone.push(("job", self.name.clone()));
        }
        if !self.keep {
            gone.extend(self.configmap.clone().map(|c| ("configmap", c)));
        }
        for (kind, name) in gone {
            match self
                .kubectl
                .call(&["delete", kind, &name, "--ignore-not-found"], None, CALL)
            {
                Ok(o) if o.ok() => eprintln!("yace: deleted {kind} {name}"),
                Ok(o) => eprintln!(
                    "yace: kubectl delete {kind} {name} failed ({}): {} — delete it yourself",
                    o.code_text(),
                    o.stderr.trim()
                ),
                Err(f) => eprintln!("yace: {} — delete {kind} {name} yourself", f.message),
            }
        }
        if self.keep && !self.stop_job && !self.name.is_empty() {
            eprintln!(
                "yace: kept Job {} (--keep): kubectl delete job {} when done",
                self.name, self.name
            );
        }
    }
}

/// Ctrl-C or SIGTERM: the Job goes (its pods stop), and the exit says why.
fn interrupted(sig: i32, mut applied: Applied<'_>) -> u8 {
    eprintln!(
        "yace: interrupted: deleting Job {} (its pods stop)",
        applied.name
    );
    applied.stop_job = true;
    drop(applied);
    if sig == libc::SIGTERM {
        exit::SIGTERM
    } else {
        exit::SIGINT
    }
}

/// Sleeps, waking for a signal (returned).
fn pause(d: Duration) -> Option<i32> {
    let until = Instant::now() + d;
    while Instant::now() < until {
        if let Some(s) = signals::received() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(50).min(until - Instant::now()));
    }
    signals::received()
}

/// kubectl's own output, shown as its.
fn echo(stdout: &[u8]) {
    for l in String::from_utf8_lossy(stdout).lines() {
        eprintln!("kubectl: {l}");
    }
}

/// The user's kubectl: `--kubectl`, else `$KUBECTL`, else on the PATH.
struct Kubectl {
    bin: OsString,
    namespace: Option<String>,
}

/// What a kubectl call gave back.
struct Called {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

impl Called {
    fn ok(&self) -> bool {
        self.code == Some(0)
    }
    fn code_text(&self) -> String {
        self.code
            .map_or("killed by a signal".into(), |c| format!("exit {c}"))
    }
}

impl Kubectl {
    fn new(flag: Option<PathBuf>, namespace: Option<String>) -> Self {
        let bin = flag
            .map(OsString::from)
            .or_else(|| std::env::var_os("KUBECTL").filter(|k| !k.is_empty()))
            .unwrap_or_else(|| "kubectl".into());
        Kubectl { bin, namespace }
    }

    /// Runs `kubectl ARGS [--namespace NS]`, feeding it `stdin`; a call
    /// still running after `within` is killed (by its PID) and fails.
    fn call(
        &self,
        args: &[&str],
        stdin: Option<Vec<u8>>,
        within: Duration,
    ) -> Result<Called, Failure> {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args);
        if let Some(ns) = &self.namespace {
            cmd.args(["--namespace", ns]);
        }
        let shown = format!("kubectl {}", args.join(" "));
        let mut child = cmd
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| {
                let bin = Path::new(&self.bin).display().to_string();
                if e.kind() == std::io::ErrorKind::NotFound {
                    Failure::usage(format!(
                        "--kubectl {bin}: not found (install kubectl, or give its path with \
                         --kubectl PATH or KUBECTL=PATH)"
                    ))
                } else {
                    Failure::runtime(format!("{shown}: cannot start {bin}: {e}"))
                }
            })?;
        let feeder = stdin.map(|bytes| {
            let mut pipe = child.stdin.take().expect("piped");
            // kubectl may stop reading (and fail): its error says why.
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            })
        });
        let mut out = child.stdout.take().expect("piped");
        let mut err = child.stderr.take().expect("piped");
        let reader = std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = out.read_to_end(&mut b);
            b
        });
        let err_reader = std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = err.read_to_end(&mut b);
            b
        });
        let deadline = Instant::now() + within;
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(Failure::runtime(format!(
                        "{shown} did not answer within {} s (is the cluster reachable?)",
                        within.as_secs()
                    )));
                }
                Err(e) => return Err(Failure::runtime(format!("{shown}: {e}"))),
            }
        };
        if let Some(f) = feeder {
            let _ = f.join();
        }
        let stdout = reader.join().unwrap_or_default();
        let stderr = String::from_utf8_lossy(&err_reader.join().unwrap_or_default()).into_owned();
        Ok(Called {
            code: status.code(),
            stdout,
            stderr,
        })
    }
}

/// The Job as `kubectl get job NAME -o json` shows it, or what went wrong.
fn job_status(kubectl: &Kubectl, name: &str) -> Result<Value, String> {
    let o = kubectl
        .call(&["get", "job", name, "-o", "json"], None, LOOK)
        .map_err(|f| f.message)?;
    if !o.ok() {
        return Err(format!(
            "kubectl get job {name} failed ({}): {}",
            o.code_text(),
            o.stderr.trim()
        ));
    }
    serde_json::from_slice(&o.stdout).map_err(|e| format!("kubectl get job {name}: not JSON: {e}"))
}

/// A pod of the Job, as far as the run cares.
#[derive(Debug)]
struct Pod {
    name: String,
    /// The shard (the pod's completion index).
    index: Option<u64>,
    phase: String,
    ready: bool,
    /// Why it is not ready, in Kubernetes' words.
    why: String,
}

/// The Job's pods (`kubectl get pods -l job-name=NAME -o json`), those of
/// this run only.
fn pods(kubectl: &Kubectl, name: &str, run_id: &str) -> Result<Vec<Pod>, Failure> {
    let selector = format!("job-name={name}");
    let o = kubectl.call(&["get", "pods", "-l", &selector, "-o", "json"], None, LOOK)?;
    if !o.ok() {
        return Err(Failure::runtime(format!(
            "kubectl get pods -l {selector} failed ({}): {}",
            o.code_text(),
            o.stderr.trim()
        )));
    }
    let v: Value = serde_json::from_slice(&o.stdout)
        .map_err(|e| Failure::runtime(format!("kubectl get pods: not JSON: {e}")))?;
    let mut pods: Vec<Pod> = v["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| {
            p["metadata"]["labels"]["yace.dev/run-id"]
                .as_str()
                .is_none_or(|r| r == run_id)
        })
        .map(pod)
        .collect();
    pods.sort_by_key(|p| (p.index, p.name.clone()));
    Ok(pods)
}

fn pod(p: &Value) -> Pod {
    const INDEX: &str = "batch.kubernetes.io/job-completion-index";
    let meta = &p["metadata"];
    let index = [&meta["annotations"][INDEX], &meta["labels"][INDEX]]
        .into_iter()
        .find_map(|x| x.as_str().and_then(|s| s.parse().ok()));
    let status = &p["status"];
    let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    let condition = |t: &str| conditions.iter().find(|c| c["type"] == t);
    let ready = condition("Ready").is_some_and(|c| c["status"] == "True");
    let phase = status["phase"].as_str().unwrap_or("Unknown").to_owned();
    let mut why = phase.clone();
    let words = |x: &Value| {
        [x["reason"].as_str(), x["message"].as_str()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(": ")
    };
    let state = &status["containerStatuses"][0]["state"];
    if state["waiting"].is_object() {
        why = format!("{phase}: {}", words(&state["waiting"]));
    } else if state["terminated"].is_object() {
        let t = &state["terminated"];
        why = format!(
            "{phase}: exit {} {}",
            t["exitCode"],
            t["reason"].as_str().unwrap_or("")
        );
    } else if let Some(c) = condition("PodScheduled").filter(|c| c["status"] == "False") {
        why = format!("{phase}: {}", words(c));
    }
    Pod {
        name: meta["name"].as_str().unwrap_or("?").to_owned(),
        index,
        phase,
        ready,
        why: why.trim_end_matches(": ").trim().to_owned(),
    }
}

/// The pods that are not Ready and why, and the shards with no pod.
fn not_ready(pods: &[Pod], shards: u64) -> String {
    let mut s = String::new();
    for p in pods.iter().filter(|p| !p.ready) {
        let shard = p.index.map_or(String::new(), |i| format!(" (shard {i})"));
        s.push_str(&format!("\n  pod {}{shard}: {}", p.name, p.why));
    }
    let missing: Vec<String> = (0..shards)
        .filter(|i| !pods.iter().any(|p| p.index == Some(*i)))
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        s.push_str(&format!("\n  no pod yet for shard {}", missing.join(", ")));
    }
    s
}

/// How the Job ended, once it has: its Complete or Failed condition, or
/// every index accounted for.
fn job_end(job: &Value, shards: u64) -> Option<String> {
    let status = &job["status"];
    let n = |k: &str| status[k].as_u64().unwrap_or(0);
    let counts = format!(
        "{} of {shards} pods succeeded, {} failed",
        n("succeeded"),
        n("failed")
    );
    for c in status["conditions"].as_array().into_iter().flatten() {
        if c["status"] != "True" {
            continue;
        }
        match c["type"].as_str() {
            Some("Complete") => return Some(counts),
            Some("Failed") => {
                let why = [c["reason"].as_str(), c["message"].as_str()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(": ");
                return Some(format!("failed ({why}); {counts}"));
            }
            _ => {}
        }
    }
    (n("succeeded") + n("failed") >= shards && n("active") == 0).then_some(counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pending_pod_says_why() {
        let p = pod(&json!({
            "metadata": {"name": "yace-1-abc", "annotations": {
                "batch.kubernetes.io/job-completion-index": "1"}},
            "status": {"phase": "Pending", "conditions": [{
                "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                "message": "0/3 nodes are available: 3 Insufficient cpu."}]}
        }));
        assert_eq!(p.index, Some(1));
        assert!(!p.ready);
        assert_eq!(
            p.why,
            "Pending: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu."
        );
        assert_eq!(
            not_ready(&[p], 3),
            "\n  pod yace-1-abc (shard 1): Pending: Unschedulable: 0/3 nodes are available: \
             3 Insufficient cpu.\n  no pod yet for shard 0, 2"
        );
        let p = pod(&json!({
            "metadata": {"name": "p", "labels": {
                "batch.kubernetes.io/job-completion-index": "0"}},
            "status": {"phase": "Pending", "containerStatuses": [{"state": {"waiting": {
                "reason": "ImagePullBackOff"}}}]}
        }));
        assert_eq!(
            (p.index, p.why.as_str()),
            (Some(0), "Pending: ImagePullBackOff")
        );
    }

    #[test]
    fn the_job_ends_on_its_condition_or_its_counts() {
        assert_eq!(job_end(&json!({"status": {"active": 2}}), 2), None);
        assert_eq!(
            job_end(
                &json!({"status": {"succeeded": 2, "conditions": [
                {"type": "Complete", "status": "True"}]}}),
                2
            )
            .as_deref(),
            Some("2 of 2 pods succeeded, 0 failed")
        );
        let failed = job_end(
            &json!({"status": {"succeeded": 1, "failed": 1, "conditions": [
            {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]}}),
            3,
        );
        assert_eq!(
            failed.as_deref(),
            Some("failed (BackoffLimitExceeded); 1 of 3 pods succeeded, 1 failed")
        );
        assert!(job_end(&json!({"status": {"succeeded": 1, "failed": 1}}), 2).is_some());
    }
}
