//! `yace k8s render` and `yace slurm render`: the manifests hold what a
//! sharded run needs and nothing it must not have; the sbatch script runs
//! end to end under a stand-in `srun` that starts its tasks as local
//! processes with Slurm's environment.

use super::*;

fn render_k8s(extra: &[&str], run: &[&str]) -> (Output, Value) {
    let out = yace()
        .args([
            "k8s",
            "render",
            "--shards",
            "3",
            "--image",
            "reg.example/yace:1",
            "-F",
            "json",
        ])
        .args(extra)
        .arg("--")
        .args(run)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, v)
}

#[test]
fn the_indexed_job_has_what_a_shard_needs_and_nothing_else() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenario/examples/journey.toml");
    let (out, list) = render_k8s(
        &["--name", "shop", "--start-in", "120s"],
        &[
            "-f",
            file.to_str().unwrap(),
            "http://shop.example/",
            "-d",
            "5m",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let items = list["items"].as_array().unwrap();
    let cm = &items[0];
    assert_eq!(cm["kind"], "ConfigMap");
    // The scenario and its data file travel in the ConfigMap.
    assert!(cm["data"]["journey.toml"]
        .as_str()
        .unwrap()
        .contains("[[journey]]"));
    assert!(cm["data"]["accounts.csv"]
        .as_str()
        .unwrap()
        .starts_with("user,pass"));
    let job = &items[1];
    assert_eq!(job["kind"], "Job");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!((u(spec, "completions"), u(spec, "parallelism")), (3, 3));
    assert_eq!(u(spec, "backoffLimit"), 0);
    // 120 s to schedule + 300 s of run + 120 s to connect, drain and write.
    assert_eq!(u(spec, "activeDeadlineSeconds"), 540);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["automountServiceAccountToken"], false);
    assert_eq!(pod["restartPolicy"], "Never");
    let c = &pod["containers"][0];
    assert!(c.get("ports").is_none(), "a shard opens no port");
    assert!(!list.to_string().contains("\"Service\""));
    assert_eq!(c["resources"]["limits"]["cpu"], "2");
    let anti =
        &pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0];
    assert_eq!(
        anti["podAffinityTerm"]["topologyKey"],
        "kubernetes.io/hostname"
    );
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let after = |flag: &str| args[args.iter().position(|a| *a == flag).unwrap() + 1];
    assert_eq!(after("-f"), "/plan/journey.toml");
    assert_eq!(after("--shard"), "env");
    assert_eq!(after("--shards"), "3");
    assert!(args.contains(&"--frame"));
    let run_id = after("--run-id");
    assert_eq!(
        anti["podAffinityTerm"]["labelSelector"]["matchLabels"]["yace.dev/run-id"],
        run_id
    );
    // The start is absolute, about two minutes ahead, the same for every pod.
    let start = after("--start-at");
    assert!(start.ends_with('Z'), "{start}");

    // The manifests pass strict schema validation when the validator is
    // installed (PyPI kubernetes-validate; scripts/test.sh installs it and
    // names it in YACE_KUBERNETES_VALIDATE, which then must work).
    let named = std::env::var("YACE_KUBERNETES_VALIDATE").ok();
    let validator = named
        .clone()
        .unwrap_or_else(|| "kubernetes-validate".into());
    let yaml = yace()
        .args([
            "k8s",
            "render",
            "--shards",
            "3",
            "--image",
            "reg.example/yace:1",
            "--",
        ])
        .args([
            "-f",
            file.to_str().unwrap(),
            "http://shop.example/",
            "-d",
            "5m",
        ])
        .output()
        .unwrap();
    let path = temp_path("job.yaml");
    std::fs::write(&path, &yaml.stdout).unwrap();
    let validate = |file: &Path, k: &str| {
        std::process::Command::new(&validator)
            .args(["--strict", "-k", k, file.to_str().unwrap()])
            .output()
    };
    for k in ["1.29.0", "1.33.0", "1.37.0"] {
        match validate(&path, k) {
            Ok(o) => {
                let said = String::from_utf8_lossy(&o.stdout).into_owned()
                    + &String::from_utf8_lossy(&o.stderr);
                assert!(o.status.success(), "{k}: {said}");
                // Both documents were checked, against that version.
                let v = &k[..4];
                assert!(
                    said.contains(&format!("job/yace against version {v}")),
                    "{said}"
                );
                assert!(said.contains("configmap/yace-plan"), "{said}");
            }
            Err(e) => {
                assert!(named.is_none(), "YACE_KUBERNETES_VALIDATE={validator}: {e}");
                eprintln!("kubernetes-validate not installed: strict validation skipped");
                return;
            }
        }
    }
    // Strict means strict: a field the schema does not have is refused.
    let text = String::from_utf8(yaml.stdout).unwrap();
    let bad = temp_path("job-bad.yaml");
    let with_typo = text.replacen("backoffLimit:", "backofLimit:", 1);
    assert_ne!(with_typo, text);
    std::fs::write(&bad, with_typo).unwrap();
    let o = validate(&bad, "1.33.0").unwrap();
    assert!(
        !o.status.success(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn renderers_refuse_what_cannot_shard() {
    let bad = |run: &[&str], want: &str| {
        let (out, _) = render_k8s(&[], run);
        assert_eq!(out.status.code(), Some(2), "{run:?}");
        assert!(stderr(&out).contains(want), "{run:?}: {}", stderr(&out));
    };
    bad(
        &["http://x/", "-d", "1m", "--shard", "0/2"],
        "the renderer sets it",
    );
    bad(
        &["http://x/", "-c", "2", "-d", "1m"],
        "cannot be split over 3 shards",
    );
    bad(&["http://x/", "-n", "1000"], "give the run a duration");
    bad(&["-d", "1m"], "needs a URL");
}

/// The sbatch script, run with a stand-in `srun`: three local tasks with
/// SLURM_PROCID/SLURM_NTASKS and `--label` prefixes, then the merge.
#[test]
fn the_sbatch_script_runs_the_shards_and_merges_them() {
    let serve = ServeProcess::start(&["--threads", "1"]);
    server_stats(serve.port, true);
    let dir = temp_path("slurm");
    std::fs::create_dir_all(&dir).unwrap();
    let bin = env!("CARGO_BIN_EXE_yace");
    let script = yace()
        .args([
            "slurm",
            "render",
            "--shards",
            "3",
            "--start-in",
            "2s",
            "--run-id",
            "slurm-1",
        ])
        .args([
            "--yace",
            bin,
            "--",
            &serve.url("/"),
            "--rate",
            "150",
            "-d",
            "2s",
        ])
        .output()
        .unwrap();
    assert!(script.status.success(), "{}", stderr(&script));
    let text = String::from_utf8(script.stdout).unwrap();
    assert!(text.contains("srun --kill-on-bad-exit=1"));
    assert!(text.contains("#SBATCH --ntasks=3"));
    std::fs::write(dir.join("job.sh"), &text).unwrap();
    // srun [options] COMMAND…: each task with its rank, lines labelled.
    let srun = r#"#!/bin/bash
while [[ "$1" == --* ]]; do shift; done
pids=()
for i in $(seq 0 $((SLURM_NTASKS - 1))); do
  SLURM_PROCID=$i "$@" 2>/dev/null | sed -u "s/^/$i: /" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait $p || rc=$?; done
exit $rc
"#;
    let fake = dir.join("srun");
    std::fs::write(&fake, srun).unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&fake)
        .status()
        .unwrap();
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap());
    let mut child = std::process::Command::new("bash")
        .arg("job.sh")
        .current_dir(&dir)
        .env("PATH", path)
        .env("SLURM_NTASKS", "3")
        .env("SLURM_JOB_ID", "42")
        .env("YACE_LANG", "en")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the batch script did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{err}");
    let seen = server_stats(serve.port, true);
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("slurm-1.json")).unwrap()).unwrap();
    assert_eq!(m["merge"]["complete"], true, "{err}");
    assert_eq!(u(&m, "summary.responses"), 300);
    assert_eq!(u(&seen, "requests"), 300);
    let log = std::fs::read_to_string(dir.join("yace-42.shards.log")).unwrap();
    assert!(log
        .lines()
        .any(|l| l.starts_with("2: YACE-RESULT v1 slurm-1 2/3 ")));
}
