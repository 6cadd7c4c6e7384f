//! What a newcomer meets first (issue 41): one rule for count suffixes and
//! for bare numbers in durations, every flag problem in one round, the fix
//! named where a ramp does not fit, one spelling of `error:`, no parser
//! internals, and a scenario's summary titled by its steps.

use super::{server, stderr, yace};
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every line a failing command writes to stderr starts `error: `.
fn errors_only(o: &Output) -> Vec<String> {
    let err = stderr(o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    for line in err.lines() {
        assert!(
            line.starts_with("error: "),
            "one spelling: {line:?} in\n{err}"
        );
    }
    err.lines().map(str::to_owned).collect()
}

#[test]
fn rates_take_the_counts_suffixes_and_bare_numbers_are_seconds_everywhere() {
    let dry = |args: &[&str]| {
        let o = yace()
            .args(["run", "http://127.0.0.1:9/", "--dry-run"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let p = dry(&["--rate", "1k", "-d", "5"]);
    let stage = &p["load"]["stages"][0];
    assert_eq!(stage["from"], 1000.0, "{p}");
    // -d 5 is 5 s, in nanoseconds.
    assert_eq!(stage["duration"], 5_000_000_000u64, "{p}");
    let p = dry(&["--stages", "5s:0-1.5k,5s:1.5k"]);
    assert_eq!(p["load"]["stages"][1]["to"], 1500.0, "{p}");
    // A threshold's bare number is seconds too: accepted, as 3 s.
    dry(&["-c", "1k", "--threshold", "p99<3"]);
    // Not a number at all: the flag, the value and the rule.
    let o = yace()
        .args([
            "run",
            "http://127.0.0.1:9/",
            "--rate",
            "lots",
            "--threshold",
            "p99<soon",
        ])
        .output()
        .unwrap();
    let err = errors_only(&o).join("\n");
    assert!(
        err.contains("--rate: 'lots'") && err.contains("--rate 1k"),
        "{err}"
    );
    assert!(
        err.contains("'soon' is not a duration") && err.contains("a bare number is seconds"),
        "{err}"
    );
}

#[test]
fn a_load_model_conflict_still_names_every_bad_value() {
    let o = yace()
        .args(["run", "http://127.0.0.1:9/", "--stages", "10s:abc"])
        .args(["--think", "uniform(3s,1s)"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = errors_only(&o).join("\n");
    assert!(err.contains("exclude each other"), "{err}");
    assert!(err.contains("--stages: 'abc' in '10s:abc'"), "{err}");
    assert!(err.contains("--think: uniform(3s, 1s)"), "{err}");
    // Must not fire: a conflict between good values names only the conflict.
    let o = yace()
        .args([
            "run",
            "http://127.0.0.1:9/",
            "--stages",
            "10s:5",
            "--think",
            "1s",
        ])
        .output()
        .unwrap();
    assert_eq!(errors_only(&o).len(), 1, "{}", stderr(&o));
}

#[test]
fn a_run_too_short_for_the_ramp_names_ramp_up() {
    let o = yace()
        .args(["run", "-f"])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scenario/examples/journey.toml"
        ))
        .args(["-d", "5s", "--dry-run"])
        .output()
        .unwrap();
    let err = errors_only(&o).join("\n");
    assert!(
        err.contains("5s is not longer than the scenario's ramp_up (10s)"),
        "{err}"
    );
    assert!(err.contains("--ramp-up/--ramp-down"), "{err}");
    // With the ramp shortened, the same length is fine.
    let o = yace()
        .args(["run", "-f"])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scenario/examples/journey.toml"
        ))
        .args(["-d", "5s", "--ramp-up", "2s", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn report_on_an_access_log_says_what_the_file_is_not() {
    let log = super::temp_path("first-contact-access.log");
    std::fs::write(
        &log,
        "127.0.0.1 - - [28/Nov/2026:01:19:36 +0000] \"GET / HTTP/1.1\" 200 3 \"-\" \"curl\"\n",
    )
    .unwrap();
    let o = yace().arg("report").arg(&log).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = errors_only(&o).join("\n");
    assert!(
        err.contains("not a yace result: it is not a JSON object"),
        "{err}"
    );
    assert!(err.contains("yace import access-log FILE"), "{err}");
    for internal in ["invalid type", "expected struct", "Tag", "floating point"] {
        assert!(!err.contains(internal), "{internal}: {err}");
    }
}

#[test]
fn a_scenario_of_one_post_is_titled_by_its_step() {
    let s = server();
    let plan = super::temp_path("first-contact-echo.toml");
    std::fs::write(
        &plan,
        "[load]\nusers = 1\nhold = \"1s\"\n\n[[journey]]\nname = \"echo\"\n\n  \
         [[journey.step]]\n  method = \"POST\"\n  url = \"/echo\"\n  body = \"hi\"\n",
    )
    .unwrap();
    let html = super::temp_path("first-contact-echo.html");
    let o = yace()
        .args(["run", "-q", "-f"])
        .arg(&plan)
        .arg(s.url())
        .args(["-d", "1s", "--html"])
        .arg(&html)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first = stdout(&o).lines().next().unwrap_or_default().to_owned();
    assert_eq!(first, format!("scenario POST /echo · {}", s.url()));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(&format!("<title>scenario POST /echo · {} —", s.url())),
        "the page's title"
    );
    assert!(page.contains("<h1><span class=\"method\">scenario</span> POST /echo"));
    assert!(!page.contains("<span class=\"method\">GET</span>"));
    assert!(s.stats().requests > 0);
    s.shutdown();
}
