//! The live view as a person sees it (issue #18): `yace run` in a real
//! terminal (a tmux pane, on a tmux server of the test's own), read with
//! capture-pane and driven with send-keys, against the embedded target.
//! It draws at several sizes and after a resize, updates, leaves the
//! screen as it found it, and `q`, Ctrl-C and SIGTERM stop the run with a
//! partial result; `m` records a marker the reports show. Without a
//! terminal, the progress is plain lines; and watching does not change
//! the numbers.

use crate::cli::pane::Pane;
use crate::cli::{server, settled, stderr, temp_path, u, yace};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn result(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no result at {}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

/// The seconds the progress shows (`12s of 30s`).
fn shown_seconds(screen: &str) -> Option<u64> {
    let at = screen.find("s of 30s")?;
    let digits: String = screen[..at]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.chars().rev().collect::<String>().parse().ok()
}

/// A figure of the "Now" panel (`responses/s   100`).
fn figure(screen: &str, label: &str) -> Option<f64> {
    screen.lines().find_map(|l| {
        let at = l.find(&format!("{label} "))?;
        l[at + label.len()..]
            .split_whitespace()
            .next()?
            .replace(',', "")
            .parse()
            .ok()
    })
}

/// Escape codes that set a colour (foreground or background, 8, 16, 256
/// or true colours); `39`/`49` (back to the default) are not colours.
fn colour_codes(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for part in text.split("\x1b[").skip(1) {
        let Some(end) = part.find('m') else { continue };
        for code in part[..end].split(';') {
            if let Ok(n) = code.parse::<u32>() {
                if matches!(n, 30..=38 | 40..=48 | 90..=97 | 100..=107) {
                    found.push(part[..end].to_string());
                }
            }
        }
    }
    found
}

#[test]
fn the_dashboard_draws_updates_resizes_and_q_writes_a_partial_result() {
    let s = server();
    let json = temp_path("live-q.json");
    let url = s.url();
    let args = ["run", &url, "--rate", "100", "-d", "30s", "--json"];
    let mut args = args.to_vec();
    args.push(json.to_str().unwrap());
    let pane = Pane::start("q", 110, 34, &[("TERM", "xterm-256color")], &args);
    let first = pane.wait(10, "charts", |s| {
        s.contains("Responses/s:") && shown_seconds(s).is_some_and(|t| t >= 1)
    });
    assert!(pane.alternate(), "the dashboard is on the alternate screen");
    for want in [
        "Latency (log scale): p50 p90 p99 max",
        "Now",
        "offered       100/s",
        "Status codes and errors",
        "status   2xx",
        "errors   none",
        "q stop and write the result",
    ] {
        assert!(first.contains(want), "{want:?} not in\n{first}");
    }
    assert!(
        colour_codes(&pane.screen_with_codes()).len() > 5,
        "a colour terminal gets colours"
    );
    // It updates: the clock and the totals move on.
    let t0 = shown_seconds(&first).unwrap();
    let later = pane.wait(5, "a later frame", |s| {
        shown_seconds(s).is_some_and(|t| t > t0)
    });
    let rate = figure(&later, "responses/s").unwrap_or_else(|| panic!("{later}"));
    assert!((50.0..=150.0).contains(&rate), "{later}");
    // A resize redraws at the new size: too small for charts, the figures
    // and the keys stay.
    pane.resize(44, 12);
    let small = pane.wait(5, "the small layout", |s| {
        !s.contains("Responses/s:") && s.contains("q stop")
    });
    assert!(small.contains("responses/s"), "{small}");
    assert!(small.lines().all(|l| l.chars().count() <= 44), "{small}");
    pane.resize(110, 34);
    pane.wait(5, "the charts again", |s| s.contains("Responses/s:"));
    pane.keys(&["q"]);
    assert_eq!(pane.exit_code(10), 130, "stopped like Ctrl-C");
    assert!(!pane.alternate(), "the screen was restored");
    // The summary is on the main screen, after the dashboard left it.
    let end = pane.scrollback();
    assert!(end.contains("INTERRUPTED"), "{end}");
    assert!(end.contains("Requests"), "{end}");
    let r = result(&json);
    assert_eq!(r["end"]["reason"], "interrupted");
    assert_eq!(r["end"]["partial"], true);
    let duration = r["summary"]["duration_s"].as_f64().unwrap();
    assert!(
        duration > 2.0 && duration < 15.0,
        "stopped early: {duration}"
    );
    let responses = u(&r, "summary.responses");
    let seen = settled(&s);
    assert!(
        seen.requests >= responses && seen.requests <= u(&r, "summary.requests"),
        "{seen:?} vs {r}"
    );
    assert!(r.get("markers").is_none(), "no marker made, none written");
    s.shutdown();
}

#[test]
fn a_tiny_window_without_colours_draws_and_ctrl_c_stops_in_raw_mode() {
    let s = server();
    let json = temp_path("live-tiny.json");
    let url = s.url();
    let mut args = vec!["run", &url, "--rate", "100", "-d", "30s", "--json"];
    args.push(json.to_str().unwrap());
    let pane = Pane::start(
        "tiny",
        24,
        6,
        &[("TERM", "xterm-256color"), ("NO_COLOR", "1")],
        &args,
    );
    let screen = pane.wait(10, "the progress", |s| {
        shown_seconds(s).is_some_and(|t| t >= 1)
    });
    assert!(pane.alternate());
    assert!(screen.lines().count() <= 6, "{screen}");
    assert!(screen.contains("responses/s"), "{screen}");
    let codes = colour_codes(&pane.screen_with_codes());
    assert!(codes.is_empty(), "NO_COLOR: colour codes {codes:?}");
    // In raw mode Ctrl-C is a key, not SIGINT: the dashboard stops the run.
    pane.keys(&["C-c"]);
    assert_eq!(pane.exit_code(10), 130);
    assert!(!pane.alternate());
    let r = result(&json);
    assert_eq!(r["end"]["reason"], "interrupted");
    assert_eq!(r["end"]["partial"], true);
    assert!(u(&r, "summary.responses") > 0);
    s.shutdown();
}

#[test]
fn sigterm_restores_the_terminal_and_leaves_a_partial_result() {
    let s = server();
    let json = temp_path("live-term.json");
    let url = s.url();
    let mut args = vec!["run", &url, "--rate", "100", "-d", "30s", "--json"];
    args.push(json.to_str().unwrap());
    let pane = Pane::start("term", 90, 30, &[("TERM", "xterm-256color")], &args);
    pane.wait(10, "the dashboard", |s| s.contains("Responses/s:"));
    assert!(pane.alternate());
    // SAFETY: signalling the yace this test started, by its PID.
    unsafe { libc::kill(pane.yace_pid(), libc::SIGTERM) };
    assert_eq!(pane.exit_code(10), 143);
    assert!(!pane.alternate(), "the screen was restored");
    assert!(
        pane.scrollback().contains("TERMINATED"),
        "{}",
        pane.scrollback()
    );
    assert_eq!(result(&json)["end"]["reason"], "terminated");
    s.shutdown();
}

#[test]
fn m_and_a_note_record_a_marker_that_every_report_shows() {
    let s = server();
    let json = temp_path("live-marker.json");
    let url = s.url();
    let mut args = vec!["run", &url, "--rate", "100", "-d", "5s", "--json"];
    args.push(json.to_str().unwrap());
    let pane = Pane::start("marker", 100, 30, &[("TERM", "xterm-256color")], &args);
    pane.wait(10, "the dashboard", |s| s.contains("Responses/s:"));
    pane.keys(&["m"]);
    pane.type_text("php-fpm restarted");
    pane.wait(5, "the note being typed", |s| {
        s.contains("php-fpm restarted_") && s.contains("Enter keeps it")
    });
    pane.keys(&["Enter"]);
    pane.wait(5, "the marker kept", |s| {
        s.contains("1 marker(s), last at") && s.contains(": php-fpm restarted")
    });
    assert_eq!(pane.exit_code(15), 0, "{}", pane.screen());
    let end = pane.screen();
    assert!(end.contains("Markers"), "the summary lists it:\n{end}");
    let r = result(&json);
    let markers = r["markers"].as_array().expect("markers in the result");
    assert_eq!(markers.len(), 1, "{markers:?}");
    assert_eq!(markers[0]["note"], "php-fpm restarted");
    let at = markers[0]["at_s"].as_f64().unwrap();
    assert!(at > 0.0 && at < 5.0, "at {at}");
    assert_eq!(r["end"]["partial"], false);
    // The published contract holds it.
    let schema_text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema/result.schema.json"),
    )
    .unwrap();
    let schema = jsonschema::JSONSchema::compile(&serde_json::from_str(&schema_text).unwrap())
        .expect("schema compiles");
    if let Err(errors) = schema.validate(&r) {
        let msgs: Vec<String> = errors
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        panic!("result does not validate:\n{}", msgs.join("\n"));
    }
    // The reports read it back from the file.
    let report = |format: &str| {
        let out = yace()
            .args(["report", "-F", format])
            .arg(&json)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = report("text");
    let line = text
        .lines()
        .find(|l| l.starts_with("  Markers"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.ends_with(&format!("{at:.1}s  php-fpm restarted")),
        "{line}"
    );
    assert!(report("markdown").contains(&format!("## Markers\n\n- {at:.1} s: php-fpm restarted")));
    let html = report("html");
    assert!(
        html.contains(&format!("<time>{at:.1} s</time> php-fpm restarted")),
        "the page lists it"
    );
    // Drawn on the time charts: each carries it as a mark.
    let charts = html
        .split("id=\"yace-charts\">")
        .nth(1)
        .and_then(|t| t.split("</script>").next())
        .unwrap();
    let doc: Value = serde_json::from_str(charts).unwrap();
    let time: Vec<&Value> = doc["charts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "time")
        .collect();
    assert!(time.len() >= 3);
    for c in time {
        assert_eq!(c["marks"][0]["label"], "php-fpm restarted", "{}", c["id"]);
    }
    s.shutdown();
}

#[test]
fn without_a_terminal_the_progress_is_plain_lines() {
    let s = server();
    let url = s.url();
    // A pipe, whatever TERM says: lines, no \r, no escape code.
    let out = yace()
        .args(["run", &url, "--rate", "100", "-d", "3s"])
        .env("TERM", "xterm-256color")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("progress 2s/3s: "), "{err}");
    assert!(!err.contains('\x1b') && !err.contains('\r'), "{err:?}");
    let text = crate::cli::stdout(&out);
    assert!(!text.contains('\x1b') && !text.contains('\r'), "{text:?}");
    // --quiet: none.
    let out = yace()
        .args(["run", &url, "--rate", "100", "-d", "3s", "-q"])
        .output()
        .unwrap();
    assert!(!stderr(&out).contains("progress"), "{}", stderr(&out));
    // A terminal that cannot move its cursor (TERM=dumb): lines there too,
    // and no alternate screen.
    let pane = Pane::start(
        "dumb",
        100,
        30,
        &[("TERM", "dumb")],
        &["run", &url, "--rate", "100", "-d", "3s"],
    );
    let screen = pane.wait(10, "a progress line", |s| s.contains("progress 2s/3s"));
    assert!(!pane.alternate(), "{screen}");
    assert_eq!(pane.exit_code(10), 0);
    s.shutdown();
}

#[test]
fn watching_does_not_change_the_numbers() {
    // The same fixed-rate open-model run, with the dashboard and without
    // any view: every planned request is sent, and the server saw each
    // (late ones too: a busy test machine must not make this about drops).
    for with_view in [true, false] {
        let s = server();
        let json = temp_path(&format!("live-same-{with_view}.json"));
        let url = s.url();
        let mut args = vec![
            "run", &url, "--rate", "200", "-d", "3s", "--late", "catch-up", "--json",
        ];
        args.push(json.to_str().unwrap());
        if with_view {
            let pane = Pane::start("same", 100, 30, &[("TERM", "xterm-256color")], &args);
            pane.wait(10, "the dashboard", |s| s.contains("Responses/s:"));
            assert_eq!(pane.exit_code(15), 0, "{}", pane.screen());
        } else {
            args.push("-q");
            let out = yace().args(&args).output().unwrap();
            assert!(out.status.success(), "{}", stderr(&out));
        }
        let r = result(&json);
        let seen = settled(&s);
        assert_eq!(u(&r, "summary.planned"), 600, "{with_view}");
        assert_eq!(u(&r, "summary.requests"), 600, "view {with_view}: {r}");
        assert_eq!(u(&r, "summary.dropped"), 0, "view {with_view}");
        assert_eq!(u(&r, "summary.responses"), 600, "view {with_view}");
        assert_eq!(seen.requests, 600, "the server's count, view {with_view}");
        // What the view cost is measured on its own thread's clock, and
        // said only when it ran.
        let cost = &r["client"]["extras_cpu_s"]["live_view"];
        if with_view {
            assert!(cost.as_f64().is_some_and(|c| c > 0.0), "{}", r["client"]);
        } else {
            assert!(cost.is_null(), "{}", r["client"]);
        }
        s.shutdown();
    }
}

#[test]
fn steering_keys_change_the_rate_and_the_result_records_the_timeline() {
    // 100/s for 6 s; `+` five times (×1.61), then `p` and `p` again: the
    // result keeps every change, the server saw exactly what the steered
    // timeline held, and the account balances in it.
    let s = server();
    let json = temp_path("live-steer.json");
    let url = s.url();
    let args = [
        "run",
        &url,
        "--rate",
        "100",
        "-d",
        "6s",
        "--late",
        "catch-up",
        "--json",
        json.to_str().unwrap(),
    ];
    let pane = Pane::start("steer", 120, 36, &[("TERM", "xterm-256color")], &args);
    pane.wait(10, "the steering keys", |s| s.contains("+/- rate ±10%"));
    std::thread::sleep(Duration::from_millis(1500));
    for _ in 0..5 {
        pane.type_text("+");
    }
    pane.wait(5, "the new rate", |s| s.contains("rate ×1.61: 161/s"));
    std::thread::sleep(Duration::from_millis(1500));
    pane.type_text("p");
    pane.wait(5, "the pause", |s| s.contains("paused from"));
    std::thread::sleep(Duration::from_millis(1000));
    pane.type_text("p");
    pane.wait(5, "the resume", |s| s.contains("rate ×1.61"));
    assert_eq!(pane.exit_code(20), 0, "{}", pane.screen());
    let r = result(&json);
    let seen = settled(&s);
    let segs = r["steering"]["segments"]
        .as_array()
        .expect("steering recorded");
    // The plan's own, five raises, the pause and the resume.
    assert_eq!(segs.len(), 8, "{segs:?}");
    assert_eq!(segs[0]["factor"], 1.0);
    assert_eq!(segs[5]["factor"].as_f64(), Some(1.6105), "{segs:?}");
    assert_eq!(segs[6]["factor"].as_f64(), Some(0.0));
    assert_eq!(segs[7]["factor"].as_f64(), Some(1.6105));
    // What the timeline held, recomputed from the result alone.
    let mut held = 0.0;
    for (i, seg) in segs.iter().enumerate() {
        let from = seg["at_s"].as_f64().unwrap();
        let to = segs.get(i + 1).map_or(6.0, |n| n["at_s"].as_f64().unwrap());
        held += seg["rate"].as_f64().unwrap() * (to - from);
    }
    let planned = u(&r, "summary.planned");
    assert!((planned as f64 - held).abs() <= 2.0, "{planned} vs {held}");
    assert!(planned > 600, "raised above the plan's 600: {planned}");
    assert_eq!(u(&r, "summary.requests"), planned, "{r}");
    // Every one answered, but for one still in flight when the run ended
    // (cancelled; the server may have read it): the end-of-run rule.
    let responses = u(&r, "summary.responses");
    assert_eq!(responses + u(&r, "summary.cancelled"), planned, "{r}");
    assert!(
        (responses..=planned).contains(&seen.requests),
        "the server's count: {}",
        seen.requests
    );
    let warnings = r["warnings"].to_string();
    assert!(warnings.contains("the rate was steered"), "{warnings}");
    assert!(!warnings.contains("accounting"), "{warnings}");
    s.shutdown();
}

#[test]
fn steering_keys_add_and_take_away_users_and_the_server_sees_each_one() {
    // 4 virtual users thinking 50 ms: `+` three times (5, 6, 7 users), `-`
    // twice (6, 5), `p` (none) and `p` (5 again). Each user keeps its own
    // connection, so the server accepts exactly one per user that ever ran:
    // the 4 planned, the 3 added, and the 5 brought back after the pause
    // (new users: fresh connections).
    let s = server();
    let json = temp_path("live-steer-users.json");
    let url = s.url();
    let args = [
        "run",
        &url,
        "-u",
        "4",
        "--think",
        "50ms",
        "-d",
        "12s",
        "--json",
        json.to_str().unwrap(),
    ];
    let pane = Pane::start("steer-users", 120, 36, &[("TERM", "xterm-256color")], &args);
    pane.wait(10, "the steering keys", |s| s.contains("+/- users ±10%"));
    std::thread::sleep(Duration::from_millis(1500));
    for want in ["5 users from", "6 users from", "7 users from"] {
        pane.type_text("+");
        pane.wait(5, want, |s| s.contains(want));
    }
    // Long enough that one whole second of the result's series has 7.
    std::thread::sleep(Duration::from_millis(2500));
    for want in ["6 users from", "5 users from"] {
        pane.type_text("-");
        pane.wait(5, want, |s| s.contains(want));
    }
    std::thread::sleep(Duration::from_millis(1500));
    pane.type_text("p");
    pane.wait(5, "the pause", |s| s.contains("paused: no user from"));
    std::thread::sleep(Duration::from_millis(2500));
    pane.type_text("p");
    pane.wait(5, "the resume", |s| s.contains("5 users from"));
    assert_eq!(pane.exit_code(25), 0, "{}", pane.screen());
    let r = result(&json);
    let seen = settled(&s);
    let segs = r["steering"]["users"]
        .as_array()
        .expect("steering recorded");
    let got: Vec<(i64, u64)> = segs
        .iter()
        .map(|g| (g["delta"].as_i64().unwrap(), g["users"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 4),
            (1, 5),
            (2, 6),
            (3, 7),
            (2, 6),
            (1, 5),
            (-4, 0),
            (1, 5)
        ],
        "{segs:?}"
    );
    assert_eq!(u(&r, "summary.connections_opened"), 4 + 3 + 5, "{r}");
    // The server's count has one more: the check that it answers, made
    // before the load.
    assert_eq!(
        seen.connections,
        1 + 4 + 3 + 5,
        "connections the server accepted"
    );
    // The active users the result recorded follow the steering: 7 at the
    // most, none through the pause.
    let users: Vec<f64> = r["series"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|row| row["users"].as_f64())
        .collect();
    let most = users.iter().cloned().fold(0.0, f64::max);
    assert!((most - 7.0).abs() < 0.01, "{users:?}");
    assert!(
        users.iter().any(|&u| u < 0.01),
        "a second with no user: {users:?}"
    );
    assert_eq!(
        u(&r, "summary.requests"),
        seen.requests,
        "the server's count"
    );
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("the number of users was steered"),
        "{warnings}"
    );
    assert!(warnings.contains("7 users (+3)"), "{warnings}");
    s.shutdown();
}

#[test]
fn a_monitored_run_shows_the_servers_figures_as_they_come() {
    // --monitor system on this machine: the Now panel shows its CPU and
    // load per CPU from the monitor's latest samples while the run goes.
    let s = server();
    let url = s.url();
    let args = [
        "run",
        &url,
        "-c",
        "2",
        "-d",
        "4s",
        "--monitor",
        "system",
        "--monitor-interval",
        "250ms",
    ];
    let pane = Pane::start("monitored", 120, 36, &[("TERM", "xterm-256color")], &args);
    let screen = pane.wait(10, "the server's figures", |s| {
        s.contains("server CPU") && s.contains("% busy") && s.contains("load/CPU")
    });
    assert!(!screen.contains("reading…"), "{screen}");
    assert_eq!(pane.exit_code(15), 0, "{}", pane.screen());
    s.shutdown();
}
