//! `yace find-max` against a real PHP pool of a known size: php-fpm with
//! `pm.max_children = 4` behind nginx, a page that sleeps 20 ms: at most
//! 4 × 1000 / 20 = 200 requests/s, the number seed 001's author tuned by
//! hand. The search must land within 10% of it and its bracket cover it.
//!
//! A test binary of its own, so that nothing else runs beside it: the
//! stacks' tests run in parallel, and a search timed against a machine busy
//! with them measures them (it rightly calls such a client starved).

#[path = "../stacks/harness.rs"]
mod harness;
#[path = "../support/mod.rs"]
mod support;

use harness::{Stack, StackKind, StatusPage};
use std::process::Command;
use std::sync::Mutex;

/// The searches run one at a time: each is timed, and a search beside
/// another would find its client starved (and rightly say so).
static ALONE: Mutex<()> = Mutex::new(());

/// A search's printed lines and its `--json` answer (the file removed).
fn answer(out: &std::process::Output, json: &std::path::Path) -> (String, serde_json::Value) {
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let doc = serde_json::from_str(&std::fs::read_to_string(json).unwrap_or_default())
        .unwrap_or_else(|e| {
            panic!(
                "no answer ({e}): {text}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let _ = std::fs::remove_file(json);
    (text, doc)
}

#[test]
fn find_max_finds_a_php_fpm_pools_capacity() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let stack = Stack::start_with_children(StackKind::NginxPhpFpm, 4);
    let json = support::temp_path("find-max.json");
    let out = Command::new(env!("CARGO_BIN_EXE_yace"))
        .env("YACE_LANG", "en")
        .args(["find-max", &stack.url("/sleep.php?ms=20")])
        .args(["--slo", "p99<150ms", "--slo", "errors<1%"])
        .args([
            "--start-rate",
            "50",
            "--trial",
            "2s",
            "--long-trial",
            "3s",
            "--confirm",
            "4s",
        ])
        .args(["--cool-down", "1s", "--max-time", "150s", "-t", "1"])
        // The monitors say what ran out: php-fpm's pool, seen in its
        // accept queue (its status page, answered by the same full pool,
        // cannot show it full).
        .arg("--monitor")
        .arg(format!(
            "fpm:{}",
            stack.status_url(StatusPage::Fpm).unwrap()
        ))
        .arg("--monitor")
        .arg(format!(
            "pidfile:{}",
            stack.dir().join("run/php-fpm.pid").display()
        ))
        .args(["--monitor-interval", "500ms"])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let (text, doc) = answer(&out, &json);
    eprintln!("{text}");
    let a = &doc["answer"];
    assert_eq!(a["end"], "converged", "{text}");
    let lo = a["max_rate"].as_f64().unwrap();
    let hi = a["failed_at"].as_f64().unwrap();
    // PHP's own work and the FastCGI hop add to the 20 ms: the true
    // capacity is a little under 200/s.
    assert!((170.0..=220.0).contains(&lo), "{lo}: {text}");
    assert!(hi >= 180.0 && lo <= 205.0, "{lo}..{hi}: {text}");
    // Above the answer, php-fpm had no child to spare: said, with the fix.
    assert!(text.contains("What ran out at "), "{text}");
    let ran_out: Vec<&str> = doc["ran_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert!(ran_out.contains(&"fpm_max_children"), "{ran_out:?}: {text}");
    assert!(text.contains("[server: fpm_max_children"), "{text}");
    // nginx served every trial's requests.
    let log = stack.access_log();
    let offered: f64 = a["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["rate"].as_f64().unwrap() * t["seconds"].as_f64().unwrap())
        .sum();
    assert!(
        log.len() as f64 >= offered * 0.8,
        "{} logged of {offered}",
        log.len()
    );
}

/// `yace lab` with `[find_max]`: a search per setting, its answer the
/// figure (examples/lab/max-children.toml, scaled down to one setting).
#[test]
fn find_max_per_setting_is_a_lab_step() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let serve = support::ServeProcess::start(&[]);
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/lab/max-children.toml"
    ))
    .unwrap();
    let text = example
        .replace("127.0.0.1:8080", &format!("127.0.0.1:{}", serve.port))
        .replace("repetitions = 6", "repetitions = 1")
        .replace("cool_down = \"3s\"\n", "")
        .replace("[2, 4, 8, 16]", "[4]")
        .replace("trial = \"3s\"", "trial = \"1s\"")
        .replace("long_trial = \"5s\"", "long_trial = \"2s\"")
        .replace("confirm = \"10s\"", "confirm = \"2s\"");
    let file = support::temp_path("max-children.toml");
    std::fs::write(&file, text).unwrap();
    let dir = support::temp_path("max-children");
    let _ = std::fs::remove_dir_all(&dir);
    let out = support::yace()
        .args(["lab", "run"])
        .arg(&file)
        .arg("-o")
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = support::yace()
        .args(["lab", "report"])
        .arg(&dir)
        .args(["-F", "json"])
        .output()
        .unwrap();
    let a: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    // 4 workers × 1000 / 20 ms: 200 req/s (a little under, with the pool's
    // own overhead and the timer's rounding).
    let m = a["points"][0]["rps"]["median"]
        .as_f64()
        .unwrap_or_else(|| panic!("no answer: {text}"));
    assert!(
        (150.0..=210.0).contains(&m),
        "max rate {m}/s for a capacity of 200/s: {text}"
    );
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("experiment.json")).unwrap())
            .unwrap();
    assert_eq!(state["kind"], "find-max");
    let first = state["runs"][0]["result"].as_str().unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(first)).unwrap()).unwrap();
    assert_eq!(doc["schema"], "yace.find-max.v1");
}

/// `yace find-max -f`: visitors walking a journey whose second step is a
/// pool of 2 workers × 20 ms (`yace serve`'s /pool): at most 100 visitors/s.
#[test]
fn find_max_searches_a_scenarios_visitors() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let serve = support::ServeProcess::start(&[]);
    let file = support::temp_path("visitors.toml");
    std::fs::write(
        &file,
        format!(
            "base = \"{}\"\n[load]\nusers = 1\n\
             [[step]]\nname = \"home\"\nurl = \"/?size=10\"\nthink = \"10ms\"\n\
             [[step]]\nname = \"pool\"\nurl = \"/pool?ms=20&workers=2&queue=4096\"\n",
            serve.url("").trim_end_matches('/')
        ),
    )
    .unwrap();
    let json = support::temp_path("visitors.json");
    let out = Command::new(env!("CARGO_BIN_EXE_yace"))
        .env("YACE_LANG", "en")
        .args(["find-max", "-f"])
        .arg(&file)
        .args(["--slo", "p99<150ms", "--start-rate", "25"])
        .args(["--trial", "2s", "--long-trial", "3s", "--confirm", "3s"])
        .args(["--cool-down", "1s", "--max-time", "90s", "-t", "1"])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let (text, doc) = answer(&out, &json);
    let _ = std::fs::remove_file(&file);
    let a = &doc["answer"];
    assert_eq!(a["end"], "converged", "{text}");
    let lo = a["max_rate"].as_f64().unwrap();
    // The pool's 100/s bounds the visitors; queueing pushes p99 past
    // 150 ms a little before it.
    assert!((60.0..=105.0).contains(&lo), "{lo}: {text}");
}
