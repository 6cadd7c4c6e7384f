#!/usr/bin/env python3
"""A stand-in `kubectl` for the `yace k8s run` tests (crates/cli/tests/shards/k8s.rs).

It implements only what `yace k8s run` calls, and "runs" an applied Indexed
Job's pods as local processes, the way a kubelet would start them:

  apply -f -                        ConfigMaps and Jobs, JSON (a List or one object)
  get pods -l job-name=NAME -o json the Job's pods, with phase and Ready condition
  get job NAME -o json              active/succeeded/failed and the end condition
  logs POD                          the container's stdout and stderr
  delete job|configmap NAME [--ignore-not-found]
                                    a Job's running pods get SIGTERM (then SIGKILL)
  (-n NS / --namespace NS anywhere)

Each pod of the Job runs the image's entrypoint (`$FAKE_KUBECTL_YACE`, the yace
under test) with the container's `args` from the manifest, in a minimal
environment with JOB_COMPLETION_INDEX set to the pod's index, and the
ConfigMap volumes' files written to a folder of the pod's: the folder stands
in for the mount, so an argument under a mountPath (`/plan/x.toml`) is
rewritten to the same file under that folder. Anything else is refused
(exit 1), so a call yace makes that the fake does not know fails the test.

Environment:
  FAKE_KUBECTL_STATE  the fake cluster's folder (required): objects, pods, calls.log
  FAKE_KUBECTL_YACE   the image's entrypoint (required to run pods)
  FAKE_KUBECTL_PODS   `run` (default) or `pending`: the pods are never scheduled
"""

import json
import os
import random
import shutil
import signal
import string
import subprocess
import sys
import time

STATE = os.environ.get("FAKE_KUBECTL_STATE")
INDEX = "batch.kubernetes.io/job-completion-index"


def fail(msg, code=1):
    sys.stderr.write(msg + "\n")
    sys.exit(code)


def path(*parts):
    return os.path.join(STATE, *parts)


def load(p, default=None):
    try:
        with open(p) as f:
            return json.load(f)
    except FileNotFoundError:
        return default


def save(p, v):
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p + ".tmp", "w") as f:
        json.dump(v, f)
    os.replace(p + ".tmp", p)


def obj_path(kind, ns, name):
    return path("objects", kind, ns, name + ".json")


def read_text(p):
    try:
        with open(p) as f:
            return f.read().strip()
    except FileNotFoundError:
        return None


# --- pods -------------------------------------------------------------------


def pod_dirs(ns, job):
    root = path("pods")
    if not os.path.isdir(root):
        return []
    out = []
    for name in sorted(os.listdir(root)):
        meta = load(os.path.join(root, name, "pod.json"))
        if meta and meta["namespace"] == ns and meta["job"] == job:
            out.append((name, meta))
    return out


def pod_state(name, meta):
    """(phase, ready, exit code or None)."""
    d = path("pods", name)
    if meta["mode"] == "pending":
        return "Pending", False, None
    rc = read_text(os.path.join(d, "rc"))
    if rc is not None:
        code = int(rc)
        return ("Succeeded" if code == 0 else "Failed"), False, code
    return "Running", True, None


def pod_json(name, meta):
    phase, ready, code = pod_state(name, meta)
    labels = dict(meta["labels"])
    labels.update(
        {
            "job-name": meta["job"],
            "batch.kubernetes.io/job-name": meta["job"],
            INDEX: str(meta["index"]),
        }
    )
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    status = {"phase": phase, "conditions": conditions}
    if meta["mode"] == "pending":
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/1 nodes are available: 1 Insufficient cpu.",
            }
        )
    elif code is not None:
        status["containerStatuses"] = [
            {
                "name": "yace",
                "ready": False,
                "state": {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}},
            }
        ]
    else:
        status["containerStatuses"] = [{"name": "yace", "ready": True, "state": {"running": {}}}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "labels": labels,
            "annotations": {INDEX: str(meta["index"])},
        },
        "status": status,
    }


def stop_pod(name):
    """SIGTERM to the pod's process (as the kubelet does), SIGKILL after 3 s."""
    d = path("pods", name)
    pid = read_text(os.path.join(d, "pid"))
    if pid is None or read_text(os.path.join(d, "rc")) is not None:
        return
    pid = int(pid)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.time() + 3
    while time.time() < deadline and read_text(os.path.join(d, "rc")) is None:
        time.sleep(0.05)
    if read_text(os.path.join(d, "rc")) is None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        deadline = time.time() + 3
        while time.time() < deadline and read_text(os.path.join(d, "rc")) is None:
            time.sleep(0.05)


def start_pod(ns, job, spec, index, mode):
    suffix = "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(5))
    name = f"{job['metadata']['name']}-{index}-{suffix}"
    d = path("pods", name)
    os.makedirs(d)
    template = spec["template"]
    meta = {
        "namespace": ns,
        "job": job["metadata"]["name"],
        "index": index,
        "mode": mode,
        "labels": template.get("metadata", {}).get("labels", {}),
    }
    save(os.path.join(d, "pod.json"), meta)
    if mode == "pending":
        return
    pod = template["spec"]
    (container,) = pod["containers"]
    # The volumes: ConfigMaps, written out as their mount would show them.
    mounts = {}
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    for m in container.get("volumeMounts", []):
        v = volumes[m["name"]]
        cm = load(obj_path("configmap", ns, v["configMap"]["name"]))
        if cm is None:
            fail(f"fake kubectl: pod {name}: configmap {v['configMap']['name']} not found")
        local = os.path.join(d, "volumes", m["name"])
        os.makedirs(local)
        for fname, text in cm.get("data", {}).items():
            with open(os.path.join(local, fname), "w") as f:
                f.write(text)
        mounts[m["mountPath"].rstrip("/")] = local

    def mounted(arg):
        for mp, local in mounts.items():
            if arg == mp or arg.startswith(mp + "/"):
                return local + arg[len(mp):]
        return arg

    entrypoint = os.environ.get("FAKE_KUBECTL_YACE")
    if not entrypoint:
        fail("fake kubectl: FAKE_KUBECTL_YACE (the image's entrypoint) is not set")
    argv = [entrypoint] + [mounted(a) for a in container.get("args", [])]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOSTNAME": name,
        "JOB_COMPLETION_INDEX": str(index),
    }
    for e in container.get("env", []):
        env[e["name"]] = e.get("value", "")
    save(os.path.join(d, "argv.json"), argv)
    root = os.path.join(d, "root")
    os.makedirs(root)
    # sh waits for the container's process and keeps its exit code; the
    # process's PID is what `delete` signals.
    wrapper = '"$@" >"$POD_DIR/log" 2>&1 & echo $! >"$POD_DIR/pid.tmp"; mv "$POD_DIR/pid.tmp" "$POD_DIR/pid"; wait $!; echo $? >"$POD_DIR/rc"'
    env_sh = dict(env, POD_DIR=d)
    subprocess.Popen(
        ["sh", "-c", wrapper, "sh"] + argv,
        cwd=root,
        env=env_sh,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.time() + 5
    while not os.path.exists(os.path.join(d, "pid")):
        if time.time() > deadline:
            fail(f"fake kubectl: pod {name} did not start")
        time.sleep(0.01)


# --- commands ---------------------------------------------------------------


def apply(ns, args):
    if args != ["-f", "-"]:
        fail(f"fake kubectl: apply supports only `-f -`, not {args}")
    doc = json.load(sys.stdin)
    items = doc["items"] if doc.get("kind") == "List" else [doc]
    for o in items:
        o_ns = o["metadata"].get("namespace", ns)
        if o_ns != ns:
            fail(f"error: the namespace from the provided object \"{o_ns}\" does not match the namespace \"{ns}\"")
        kind, name = o["kind"], o["metadata"]["name"]
        if kind == "ConfigMap":
            p = obj_path("configmap", ns, name)
            verb = "configured" if os.path.exists(p) else "created"
            save(p, o)
            print(f"configmap/{name} {verb}")
        elif kind == "Job":
            if o["apiVersion"] != "batch/v1":
                fail(f"fake kubectl: Job {name}: apiVersion {o['apiVersion']}")
            p = obj_path("job", ns, name)
            old = load(p)
            if old is not None:
                if old["spec"] != o["spec"]:
                    fail(
                        f'The Job "{name}" is invalid: spec.template: Invalid value: '
                        '...: field is immutable'
                    )
                print(f"job.batch/{name} unchanged")
                continue
            spec = o["spec"]
            if spec.get("completionMode") != "Indexed":
                fail(f"fake kubectl: Job {name} is not an Indexed Job")
            if spec["completions"] != spec["parallelism"]:
                fail(f"fake kubectl: Job {name}: completions != parallelism")
            save(p, o)
            mode = os.environ.get("FAKE_KUBECTL_PODS", "run")
            for i in range(spec["completions"]):
                start_pod(ns, o, spec, i, mode)
            print(f"job.batch/{name} created")
        else:
            fail(f"fake kubectl: apply: kind {kind} is not supported")


def get(ns, args):
    out = None
    if len(args) >= 3 and args[-2:] == ["-o", "json"]:
        what = args[:-2]
        if what[0] == "pods" and len(what) == 3 and what[1] == "-l":
            key, _, value = what[2].partition("=")
            if key != "job-name" or "," in value:
                fail(f"fake kubectl: selector {what[2]} is not supported")
            out = {
                "apiVersion": "v1",
                "kind": "List",
                "items": [pod_json(n, m) for n, m in pod_dirs(ns, value)],
            }
        elif what[0] == "job" and len(what) == 2:
            name = what[1]
            job = load(obj_path("job", ns, name))
            if job is None:
                fail(f'Error from server (NotFound): jobs.batch "{name}" not found')
            states = [pod_state(n, m) for n, m in pod_dirs(ns, name)]
            active = sum(1 for s in states if s[0] in ("Running", "Pending"))
            succeeded = sum(1 for s in states if s[0] == "Succeeded")
            failed = sum(1 for s in states if s[0] == "Failed")
            conditions = []
            if failed > job["spec"].get("backoffLimit", 6):
                # The Job fails: its running pods are terminated.
                for n, m in pod_dirs(ns, name):
                    stop_pod(n)
                conditions.append({"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"})
                active = 0
            elif succeeded == job["spec"]["completions"]:
                conditions.append({"type": "Complete", "status": "True"})
            job["status"] = {
                "active": active,
                "succeeded": succeeded,
                "failed": failed,
                "conditions": conditions,
            }
            out = job
    if out is None:
        fail(f"fake kubectl: get {' '.join(args)} is not supported")
    json.dump(out, sys.stdout)


def logs(ns, args):
    if len(args) != 1:
        fail(f"fake kubectl: logs {' '.join(args)} is not supported")
    name = args[0]
    meta = load(path("pods", name, "pod.json"))
    if meta is None or meta["namespace"] != ns:
        fail(f'Error from server (NotFound): pods "{name}" not found')
    try:
        with open(path("pods", name, "log"), "rb") as f:
            sys.stdout.buffer.write(f.read())
    except FileNotFoundError:
        pass


def delete(ns, args):
    ignore = "--ignore-not-found" in args
    args = [a for a in args if a != "--ignore-not-found"]
    if len(args) != 2 or args[0] not in ("job", "configmap"):
        fail(f"fake kubectl: delete {' '.join(args)} is not supported")
    kind, name = args
    p = obj_path(kind, ns, name)
    if not os.path.exists(p):
        if ignore:
            return
        what = "jobs.batch" if kind == "job" else "configmaps"
        fail(f'Error from server (NotFound): {what} "{name}" not found')
    if kind == "job":
        for n, _ in pod_dirs(ns, name):
            stop_pod(n)
            # Kept aside for the tests to look at (what ran, with what).
            os.makedirs(path("deleted-pods"), exist_ok=True)
            shutil.move(path("pods", n), path("deleted-pods", n))
    os.remove(p)
    with open(path("deleted.log"), "a") as f:
        f.write(f"{kind} {ns} {name}\n")
    print(f'{"job.batch" if kind == "job" else "configmap"} "{name}" deleted')


def main():
    if not STATE:
        fail("fake kubectl: FAKE_KUBECTL_STATE is not set")
    os.makedirs(STATE, exist_ok=True)
    argv = sys.argv[1:]
    with open(path("calls.log"), "a") as f:
        f.write(json.dumps(argv) + "\n")
    ns = "default"
    rest = []
    i = 0
    while i < len(argv):
        if argv[i] in ("-n", "--namespace"):
            ns = argv[i + 1]
            i += 2
        elif argv[i].startswith("--namespace="):
            ns = argv[i].split("=", 1)[1]
            i += 1
        else:
            rest.append(argv[i])
            i += 1
    if not rest:
        fail("fake kubectl: no command")
    cmd, args = rest[0], rest[1:]
    commands = {"apply": apply, "get": get, "logs": logs, "delete": delete}
    if cmd not in commands:
        fail(f"fake kubectl: {cmd} is not supported")
    commands[cmd](ns, args)


if __name__ == "__main__":
    main()
