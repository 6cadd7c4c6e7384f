//! Every pair of load-model flags either does what the README says or is
//! a clear error (exit 2): one row per pair, checked on `--dry-run`'s plan.

use crate::cli::yace;
use serde_json::Value;

/// The flags, with a value each; `-f` is a scenario of 5 users held 5 s.
const FLAGS: [(&str, &str); 12] = [
    ("-n", "100"),
    ("-d", "5s"),
    ("--rate", "10"),
    ("--stages", "5s:10"),
    ("-u", "7"),
    ("--user-stages", "5s:5"),
    ("--pacing", "1s"),
    ("--think", "1s"),
    ("-c", "10"),
    ("--ramp-up", "1s"),
    ("--max-inflight", "5"),
    ("-f", "SCENARIO"),
];

/// What each pair gives: the model and its figures (peak users or rate,
/// in-flight cap, the -n cap, the run's length), or the flag an error names.
const TABLE: &[(&str, &str, &str)] = &[
    ("-n", "-d", "closed c=50 n=100 d=5s"),
    ("-n", "--rate", "open rate=10 inflight=1000 n=100 d=10.001s"),
    ("-n", "--stages", "open rate=10 inflight=1000 n=100 d=5s"),
    ("-n", "-u", "users 7 n=100 d=10s"),
    ("-n", "--user-stages", "users 5 n=100 d=5s"),
    ("-n", "--pacing", "users 50 n=100 d=10s"),
    ("-n", "--think", "users 50 n=100 d=10s"),
    ("-n", "-c", "closed c=10 n=100 d=-"),
    ("-n", "--ramp-up", "error --ramp-up/--ramp-down"),
    ("-n", "--max-inflight", "error --max-inflight"),
    ("-n", "-f", "users 5 n=100 d=5s"),
    ("-d", "--rate", "open rate=10 inflight=1000 n=- d=5s"),
    ("-d", "--stages", "open rate=10 inflight=1000 n=- d=5s"),
    ("-d", "-u", "users 7 n=- d=5s"),
    ("-d", "--user-stages", "users 5 n=- d=5s"),
    ("-d", "--pacing", "users 50 n=- d=5s"),
    ("-d", "--think", "users 50 n=- d=5s"),
    ("-d", "-c", "closed c=10 n=- d=5s"),
    ("-d", "--ramp-up", "error --ramp-up/--ramp-down"),
    ("-d", "--max-inflight", "error --max-inflight"),
    ("-d", "-f", "users 5 n=- d=5s"),
    ("--rate", "--stages", "error --rate"),
    ("--rate", "-u", "error --rate/--stages"),
    ("--rate", "--user-stages", "error --rate/--stages"),
    ("--rate", "--pacing", "error --rate/--stages"),
    ("--rate", "--think", "error --rate/--stages"),
    ("--rate", "-c", "open rate=10 inflight=10 n=- d=10s"),
    ("--rate", "--ramp-up", "error --ramp-up/--ramp-down"),
    (
        "--rate",
        "--max-inflight",
        "open rate=10 inflight=5 n=- d=10s",
    ),
    // A rate replaces a scenario's users: visitors arriving at 10/s.
    ("--rate", "-f", "open rate=10 inflight=1000 n=- d=5s"),
    ("--stages", "-u", "error --rate/--stages"),
    ("--stages", "--user-stages", "error --rate/--stages"),
    ("--stages", "--pacing", "error --rate/--stages"),
    ("--stages", "--think", "error --rate/--stages"),
    ("--stages", "-c", "open rate=10 inflight=10 n=- d=5s"),
    ("--stages", "--ramp-up", "error --ramp-up/--ramp-down"),
    (
        "--stages",
        "--max-inflight",
        "open rate=10 inflight=5 n=- d=5s",
    ),
    ("--stages", "-f", "error --stages"),
    ("-u", "--user-stages", "error --user-stages"),
    ("-u", "--pacing", "users 7 n=- d=10s"),
    ("-u", "--think", "users 7 n=- d=10s"),
    ("-u", "-c", "error -c/--connections"),
    ("-u", "--ramp-up", "users 7 n=- d=11s"),
    ("-u", "--max-inflight", "error --max-inflight"),
    ("-u", "-f", "users 7 n=- d=5s"),
    ("--user-stages", "--pacing", "users 5 n=- d=5s"),
    ("--user-stages", "--think", "users 5 n=- d=5s"),
    ("--user-stages", "-c", "error -c/--connections"),
    ("--user-stages", "--ramp-up", "error --ramp-up/--ramp-down"),
    ("--user-stages", "--max-inflight", "error --max-inflight"),
    ("--user-stages", "-f", "users 5 n=- d=5s"),
    ("--pacing", "--think", "users 50 n=- d=10s"),
    ("--pacing", "-c", "users 10 n=- d=10s"),
    ("--pacing", "--ramp-up", "error --ramp-up/--ramp-down"),
    ("--pacing", "--max-inflight", "error --max-inflight"),
    ("--pacing", "-f", "users 5 n=- d=5s"),
    ("--think", "-c", "users 10 n=- d=10s"),
    ("--think", "--ramp-up", "error --ramp-up/--ramp-down"),
    ("--think", "--max-inflight", "error --max-inflight"),
    ("--think", "-f", "error --think"),
    ("-c", "--ramp-up", "error --ramp-up/--ramp-down"),
    ("-c", "--max-inflight", "error --max-inflight"),
    ("-c", "-f", "error -c/--connections"),
    ("--ramp-up", "--max-inflight", "error --ramp-up/--ramp-down"),
    ("--ramp-up", "-f", "users 5 n=- d=6s"),
    ("--max-inflight", "-f", "error --max-inflight"),
];

/// The plan of a `--dry-run`, in the table's words.
fn shown(out: &std::process::Output) -> String {
    if !out.status.success() {
        assert_eq!(out.status.code(), Some(2), "bad input exits 2");
        let e = String::from_utf8_lossy(&out.stderr);
        let first = e.lines().next().unwrap_or_default();
        let flag = first
            .strip_prefix("error: ")
            .and_then(|l| l.split(": ").next())
            .unwrap_or(first);
        return format!("error {flag}");
    }
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let plan = if doc["plan"].is_object() {
        &doc["plan"]
    } else {
        &doc
    };
    let load = &plan["load"];
    let stop = &plan["stop"];
    let d = stop["duration"]
        .as_u64()
        .map_or("-".to_owned(), |ns| format!("{}s", ns as f64 / 1e9));
    let n = stop["requests"]
        .as_u64()
        .map_or("-".to_owned(), |n| n.to_string());
    let peak = || {
        load["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["to"].as_f64().unwrap())
            .fold(0.0, f64::max)
    };
    match load["model"].as_str().unwrap() {
        "closed" => format!("closed c={} n={n} d={d}", load["connections"]),
        "open" => format!(
            "open rate={} inflight={} n={n} d={d}",
            peak(),
            load["max_inflight"]
        ),
        _ => format!("users {} n={n} d={d}", peak()),
    }
}

#[test]
fn every_pair_of_load_flags_combines_or_is_a_clear_error() {
    let dir = crate::cli::temp_path("combos");
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("five.toml");
    std::fs::write(
        &scenario,
        "[load]\nusers = 5\nhold = \"5s\"\n[[step]]\nurl = \"/\"\n",
    )
    .unwrap();
    let value = |v: &str| {
        if v == "SCENARIO" {
            scenario.to_str().unwrap().to_owned()
        } else {
            v.to_owned()
        }
    };
    let mut rows = 0;
    let mut wrong = Vec::new();
    for (i, a) in FLAGS.iter().enumerate() {
        for b in &FLAGS[i + 1..] {
            let want = TABLE
                .iter()
                .find(|(x, y, _)| (*x, *y) == (a.0, b.0))
                .unwrap_or_else(|| panic!("no row for {} {}", a.0, b.0))
                .2;
            let out = yace()
                .args(["run", a.0, &value(a.1), b.0, &value(b.1), "--dry-run"])
                .arg("http://127.0.0.1:1/")
                .output()
                .unwrap();
            let got = shown(&out);
            if got != want {
                wrong.push(format!(
                    "{} {} {} {}: want {want:?}, got {got:?}",
                    a.0, a.1, b.0, b.1
                ));
            }
            rows += 1;
        }
    }
    assert_eq!(rows, TABLE.len(), "the table has a row per pair");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
