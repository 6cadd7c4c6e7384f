//! `yace k8s render` and `yace slurm render`: a sharded run written out for
//! the scheduler the user already has (docs/design/010-shards.md). They
//! print; nothing is applied or submitted. The run's flags are checked as
//! `yace run` checks them, the start time is resolved once, here, far
//! enough ahead for the shards to be scheduled, and the deadline follows
//! from the run's length.

use crate::args::{K8sJobArgs, K8sRenderArgs, RenderFormat, RunArgs, SlurmRenderArgs};
use crate::flags::{self, RunFlags};
use crate::{exit, Failure};
use clap::Parser;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Flags the renderers add themselves: given in the run's flags, they are refused.
const OWN: [&str; 7] = [
    "--shard",
    "--shards",
    "--run-id",
    "--start-at",
    "--frame",
    "--json",
    "--html",
];

/// The run, checked: its arguments as given, its length, the scenario
/// file (if any) by name and contents.
struct Checked {
    argv: Vec<String>,
    length: Duration,
    /// The scenario file first, then its data files: (name, contents).
    files: Vec<(String, String)>,
}

fn check_run(argv: &[String], shards: u64) -> Result<Checked, Failure> {
    if let Some(f) = argv.iter().find(|a| {
        OWN.iter()
            .any(|o| a == o || a.starts_with(&format!("{o}=")))
    }) {
        return Err(Failure::usage(format!(
            "{f}: the renderer sets it for every shard; leave it out of the run's flags"
        )));
    }
    let cli = crate::Cli::try_parse_from(
        ["yace", "run"]
            .into_iter()
            .map(String::from)
            .chain(argv.iter().cloned()),
    )
    .map_err(|e| Failure::usage(format!("the run's flags (after --): {e}")))?;
    let crate::Command::Run(a) = cli.command else {
        unreachable!("parsed as run")
    };
    let a: RunArgs = *a;
    if a.url.is_none() && a.file.is_none() {
        return Err(Failure::usage(
            "the run needs a URL (the shards cannot share an embedded target): e.g. -- \
             http://shop.example/ --rate 3000 -d 5m",
        ));
    }
    let (plan, files) = match &a.file {
        Some(path) => {
            let env: BTreeMap<String, String> = std::env::vars().collect();
            let sc = scenario::load_with_base(path, &env, a.url.as_deref())
                .map_err(|d| Failure::usage(d.to_string()))?;
            let url = sc
                .base()
                .map(|b| b.url.clone())
                .ok_or_else(|| Failure::usage("the scenario has no base: give a URL"))?;
            let plan = flags::scenario_plan(&a, &sc, &url)
                .map_err(|e| Failure::usage(e.render(&RunFlags)))?;
            let text = std::fs::read_to_string(path)
                .map_err(|e| Failure::usage(format!("-f {}: {e}", path.display())))?;
            let name = Path::new(path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "plan.toml".into());
            let mut files = vec![(name, text)];
            // Its data files travel with it, read beside it as it reads them.
            let dir = Path::new(path).parent().unwrap_or(Path::new("."));
            let data = sc.to_json();
            for d in data["data"].as_array().into_iter().flatten() {
                let Some(f) = d["file"].as_str() else {
                    continue;
                };
                if f.contains('/') {
                    return Err(Failure::usage(format!(
                        "-f {}: data file '{f}' is in another folder; put it beside the \
                         scenario so it can travel in the ConfigMap",
                        path.display()
                    )));
                }
                let text = std::fs::read_to_string(dir.join(f))
                    .map_err(|e| Failure::usage(format!("{}: {e}", dir.join(f).display())))?;
                files.push((f.to_owned(), text));
            }
            (plan, files)
        }
        None => {
            let url = a.url.clone().unwrap_or_default();
            let plan =
                flags::run_plan(&a, &url).map_err(|e| Failure::usage(e.render(&RunFlags)))?;
            (plan, Vec::new())
        }
    };
    let mut split = plan.clone();
    split.shard =
        Some(plan::Shard::new(0, shards).map_err(|e| Failure::usage(format!("--shards: {e}")))?);
    let problems = split.shard_problems();
    if !problems.is_empty() {
        let lines: Vec<String> = problems
            .into_iter()
            .map(|(f, p)| format!("{}: {p}", plan::Spelling::name(&RunFlags, f)))
            .collect();
        return Err(Failure::usage(lines.join("\n")));
    }
    let length = plan.stop.duration.ok_or_else(|| {
        Failure::usage("give the run a duration (-d) so the shards get a deadline")
    })?;
    Ok(Checked {
        argv: argv.to_vec(),
        length,
        files,
    })
}

/// The run id: given, or the name and the start time.
fn run_id(given: Option<&str>, name: &str, start: SystemTime) -> Result<String, Failure> {
    let id = match given {
        Some(id) => id.to_owned(),
        None => {
            let t = humantime::format_rfc3339_seconds(start).to_string();
            format!(
                "{name}-{}",
                t.replace([':', '-'], "")
                    .trim_end_matches('Z')
                    .to_lowercase()
            )
        }
    };
    merge::check_run_id(&id).map_err(|e| Failure::usage(format!("--run-id: {e}")))?;
    if id.len() > 63 {
        return Err(Failure::usage(format!(
            "--run-id: '{id}' is over 63 characters (it is a Kubernetes label value)"
        )));
    }
    Ok(id)
}

/// A Kubernetes name: lowercase letters, digits and '-', at most 52
/// characters (an Indexed Job's pods add a suffix).
fn check_name(name: &str) -> Result<(), Failure> {
    let ok = !name.is_empty()
        && name.len() <= 52
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(Failure::usage(format!(
            "--name: '{name}' must be 1–52 lowercase letters, digits or '-', starting and \
             ending with a letter or digit"
        )))
    }
}

/// `yace k8s render`: a ConfigMap holding the plan (with `-f`) and an
/// Indexed Job of N pods, printed as YAML (or JSON).
pub fn k8s(a: K8sRenderArgs) -> Result<u8, Failure> {
    let job = k8s_job(&a.job, &a.run)?;
    print_docs(&job.docs, a.format);
    Ok(exit::OK)
}

/// A sharded run's manifests, as `yace k8s render` prints them and
/// `yace k8s run` applies them (one source for both).
pub(super) struct K8sJob {
    /// The ConfigMap (with `-f`), then the Job.
    pub docs: Vec<Value>,
    pub run_id: String,
    /// The shards' start time, resolved once.
    pub start: SystemTime,
    pub start_in: Duration,
    /// The run's length (its `-d`).
    pub length: Duration,
    /// The ConfigMap's name, when there is one.
    pub configmap: Option<String>,
}

impl K8sJob {
    /// The manifests as one `List`, as `kubectl apply -f` reads it.
    pub fn list(&self) -> Value {
        json!({ "apiVersion": "v1", "kind": "List", "items": self.docs })
    }
}

/// Checks the run's flags and the Job's, resolves the start time, and
/// writes the manifests.
pub(super) fn k8s_job(a: &K8sJobArgs, run: &[String]) -> Result<K8sJob, Failure> {
    check_name(&a.name)?;
    let start_in = plan::parse_duration("--start-in", &a.start_in)
        .map_err(|d| Failure::usage(d.to_string()))?;
    let run = check_run(run, a.shards)?;
    // Whole seconds, as the manifest writes it.
    let at = (SystemTime::now() + start_in)
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let start = SystemTime::UNIX_EPOCH + Duration::from_secs(at.as_secs());
    let id = run_id(a.run_id.as_deref(), &a.name, start)?;
    let docs = k8s_docs(a, &run, &id, start, start_in);
    Ok(K8sJob {
        docs,
        run_id: id,
        start,
        start_in,
        length: run.length,
        configmap: (!run.files.is_empty()).then(|| format!("{}-plan", a.name)),
    })
}

fn k8s_docs(
    a: &K8sJobArgs,
    run: &Checked,
    id: &str,
    start: SystemTime,
    start_in: Duration,
) -> Vec<Value> {
    let labels = json!({
        "app.kubernetes.io/name": "yace",
        "app.kubernetes.io/instance": a.name,
        "yace.dev/run-id": id,
    });
    let mut meta = json!({ "name": a.name, "labels": labels });
    if let Some(ns) = &a.namespace {
        meta["namespace"] = json!(ns);
    }
    let mut args: Vec<String> = vec!["run".into()];
    let mut argv = run.argv.clone();
    if let Some((name, _)) = run.files.first() {
        // The scenario is read from the ConfigMap's mount.
        if let Some(i) = argv.iter().position(|x| x == "-f" || x == "--file") {
            if i + 1 < argv.len() {
                argv[i + 1] = format!("/plan/{name}");
            }
        }
    }
    args.extend(argv);
    args.extend(
        [
            "--shard",
            "env",
            "--shards",
            &a.shards.to_string(),
            "--run-id",
            id,
            "--start-at",
            &humantime::format_rfc3339_seconds(start).to_string(),
            "--frame",
            "-q",
        ]
        .map(String::from),
    );
    // Scheduling lead + the run + time to connect, drain and write.
    let deadline = start_in.as_secs() + run.length.as_secs() + 120;
    let mut container = json!({
        "name": "yace",
        "image": a.image,
        "args": args,
        "resources": {
            "requests": { "cpu": a.cpu, "memory": a.memory },
            "limits": { "cpu": a.cpu, "memory": a.memory },
        },
        "securityContext": {
            "allowPrivilegeEscalation": false,
            "readOnlyRootFilesystem": true,
            "runAsNonRoot": true,
            "capabilities": { "drop": ["ALL"] },
        },
    });
    let mut pod = json!({
        "restartPolicy": "Never",
        "automountServiceAccountToken": false,
        "enableServiceLinks": false,
        "securityContext": {
            "runAsNonRoot": true,
            "runAsUser": 65532,
            "seccompProfile": { "type": "RuntimeDefault" },
        },
        "affinity": {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{
                    "weight": 100,
                    "podAffinityTerm": {
                        "labelSelector": { "matchLabels": { "yace.dev/run-id": id } },
                        "topologyKey": "kubernetes.io/hostname",
                    },
                }],
            },
        },
        "containers": [],
    });
    let mut docs = Vec::new();
    if !run.files.is_empty() {
        let mut cm_meta = meta.clone();
        cm_meta["name"] = json!(format!("{}-plan", a.name));
        let data: serde_json::Map<String, Value> = run
            .files
            .iter()
            .map(|(n, t)| (n.clone(), json!(t)))
            .collect();
        docs.push(json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": cm_meta,
            "data": data,
        }));
        container["volumeMounts"] =
            json!([{ "name": "plan", "mountPath": "/plan", "readOnly": true }]);
        pod["volumes"] =
            json!([{ "name": "plan", "configMap": { "name": format!("{}-plan", a.name) } }]);
    }
    pod["containers"] = json!([container]);
    docs.push(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "completionMode": "Indexed",
            "completions": a.shards,
            "parallelism": a.shards,
            "backoffLimit": 0,
            "activeDeadlineSeconds": deadline,
            "ttlSecondsAfterFinished": 86400,
            "template": { "metadata": { "labels": labels }, "spec": pod },
        },
    }));
    docs
}

/// `yace slurm render`: an sbatch script whose tasks are the shards.
pub fn slurm(a: SlurmRenderArgs) -> Result<u8, Failure> {
    let start_in = plan::parse_duration("--start-in", &a.start_in)
        .map_err(|d| Failure::usage(d.to_string()))?;
    let run = check_run(&a.run, a.shards)?;
    let name = a.name.clone();
    let given = a.run_id.clone();
    if let Some(id) = &given {
        merge::check_run_id(id).map_err(|e| Failure::usage(format!("--run-id: {e}")))?;
    }
    let limit = start_in.as_secs() + run.length.as_secs() + 300;
    let (h, m, s) = (limit / 3600, limit / 60 % 60, limit % 60);
    let q = |x: &str| shell_quote(x);
    let args: Vec<String> = run.argv.iter().map(|x| q(x)).collect();
    let id = match &given {
        Some(id) => q(id),
        None => format!("{}-$SLURM_JOB_ID", q(&name)),
    };
    print!(
        "#!/bin/bash
# yace: {shards} shards of one run, one Slurm task each (yace slurm render).
#SBATCH --job-name={name}
#SBATCH --ntasks={shards}
#SBATCH --cpus-per-task={cpus}
#SBATCH --time={h:02}:{m:02}:{s:02}
#SBATCH --output={name}-%j.out
set -euo pipefail
RUN_ID={id}
# One start for all shards, resolved once here; each task connects and
# probes the target first, then starts at it.
START=$(date -u -d '+{lead} seconds' +%Y-%m-%dT%H:%M:%SZ)
LOG=\"{name}-$SLURM_JOB_ID.shards.log\"
# A shard's exit 3 (a threshold breached on its part) is no failure here:
# thresholds are judged on the merged run. Any other failure stops them all
# (--kill-on-bad-exit), and the merge then says which shards are missing.
srun --kill-on-bad-exit=1 --label bash -c '\\
    \"$0\" run \"$@\"; c=$?; if [ $c -eq 3 ]; then exit 0; fi; exit $c' \\
    {yace} {args} \\
    --shard env --run-id \"$RUN_ID\" --start-at \"$START\" --frame -q \\
    > \"$LOG\" || true
exec {yace} merge --expect-shards {shards} \"$LOG\" -o \"$RUN_ID.json\"
",
        shards = a.shards,
        cpus = a.cpus_per_task,
        lead = start_in.as_secs(),
        yace = q(&a.yace),
        args = args.join(" "),
    );
    Ok(exit::OK)
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=,%+@".contains(&b))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn print_docs(docs: &[Value], format: RenderFormat) {
    match format {
        RenderFormat::Json => {
            let list = json!({ "apiVersion": "v1", "kind": "List", "items": docs });
            println!(
                "{}",
                serde_json::to_string_pretty(&list).expect("serializes")
            );
        }
        RenderFormat::Yaml => {
            let mut out = String::new();
            for d in docs {
                out.push_str("---\n");
                yaml(d, 0, &mut out);
            }
            print!("{out}");
        }
    }
}

/// Block-style YAML of a JSON value; strings are JSON-quoted, which YAML
/// reads as double-quoted scalars (no type guessing: "0" stays a string).
fn yaml(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.push_str(&format!("{pad}{}:", key(k)));
                inline_or_block(x, indent, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                out.push_str(&format!("{pad}-"));
                match x {
                    Value::Object(m) if !m.is_empty() => {
                        // The first key on the dash's line, the rest below it.
                        let mut inner = String::new();
                        yaml(x, indent + 2, &mut inner);
                        out.push(' ');
                        out.push_str(inner.trim_start());
                    }
                    _ => inline_or_block(x, indent, out),
                }
            }
        }
        scalar => {
            out.push_str(&format!("{pad}{scalar}\n"));
        }
    }
}

/// A key as it is when it is plainly a name (`apiVersion`,
/// `yace.dev/run-id`), else quoted.
fn key(k: &str) -> String {
    let plain = k.starts_with(|c: char| c.is_ascii_alphabetic())
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"./_-".contains(&b));
    if plain {
        k.to_owned()
    } else {
        Value::String(k.to_owned()).to_string()
    }
}

fn inline_or_block(x: &Value, indent: usize, out: &mut String) {
    match x {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            yaml(x, indent + 2, out);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            yaml(x, indent + 2, out);
        }
        other => out.push_str(&format!(" {other}\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_is_block_style_and_quotes_strings() {
        let v = json!({"a": {"b": [1, "x", {"c": true, "d": []}]}, "e": "0"});
        let mut out = String::new();
        yaml(&v, 0, &mut out);
        assert_eq!(
            out,
            "a:\n  b:\n    - 1\n    - \"x\"\n    - c: true\n      d: []\ne: \"0\"\n"
        );
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("-c"), "-c");
        assert_eq!(shell_quote("http://x/?a=1"), "'http://x/?a=1'");
        assert_eq!(shell_quote("p99<200ms"), "'p99<200ms'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
