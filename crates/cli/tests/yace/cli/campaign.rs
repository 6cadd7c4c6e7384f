//! The lab's and find-max's own view (issue #18), as a person sees it: a
//! scaled-down `yace lab run` and a short `yace find-max` in a real
//! terminal (a tmux pane on a tmux server of the test's own, read with
//! capture-pane), against `yace serve` pools in processes of their own.
//! The view says which run of how many, the time left, the run's figures
//! and the finished verdicts; `q` stops with the experiment resumable and
//! the search's answer written; the screen is put back and the lines and
//! summary are in the scrollback. Without a terminal the lines are as
//! before: no escape codes.

use crate::cli::pane::Pane;
use crate::cli::{stderr, stdout, temp_path, yace};
use crate::support::ServeProcess;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// An experiment of 2 points × 1 repetition, `secs` s runs, against a
/// pool of 8 workers × 10 ms.
fn experiment(name: &str, serve: &ServeProcess, secs: u32) -> PathBuf {
    let file = temp_path(&format!("{name}.toml"));
    std::fs::write(
        &file,
        format!(
            "name = \"{name}\"\nseed = 7\nrepetitions = 1\nduration = \"{secs}s\"\n\n\
             [run]\nthreads = 1\n\n\
             [[target]]\nname = \"pool\"\nurl = \"{}\"\n\n\
             [sweep]\nconnections = [2, 4]\n",
            serve.url("/pool?ms=10&workers=8&queue=4096")
        ),
    )
    .unwrap();
    file
}

fn fresh_dir(name: &str) -> PathBuf {
    let d = temp_path(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no JSON at {}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

/// The table row of a finished point on the screen: its cells.
fn point_row(screen: &str, point: &str) -> Option<Vec<String>> {
    screen.lines().find_map(|l| {
        let l = l.trim_matches(|c| c == '│' || c == ' ');
        let cells: Vec<String> = l.split_whitespace().map(String::from).collect();
        (cells.first().map(String::as_str) == Some("pool") && cells.get(1)? == point)
            .then_some(cells)
    })
}

#[test]
fn the_lab_shows_run_k_of_n_the_time_left_and_each_points_verdict() {
    let serve = ServeProcess::start(&[]);
    let file = experiment("campaign-lab", &serve, 2);
    let dir = fresh_dir("campaign-lab-out");
    let pane = Pane::start(
        "lab",
        120,
        36,
        &[("TERM", "xterm-256color")],
        &[
            "lab",
            "run",
            file.to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
        ],
    );
    let first = pane.wait(15, "the first run", |s| {
        s.contains("run 1 of 2 · pool · connections=") && s.contains("responses/s ·")
    });
    assert!(pane.alternate(), "the view is on the alternate screen");
    for want in [
        "Experiment campaign-lab: 2 runs",
        "repetition 1 of 1",
        "left (2 runs to go, as planned)",
        "Responses/s:",
        "Latency (log scale)",
        "Finished points",
        "target  point",
        "Finished points (medians of their runs so far)",
        "q stop (the experiment stays resumable: yace lab resume",
    ] {
        assert!(first.contains(want), "{want:?} not in\n{first}");
    }
    // The second run, with the first one's point finished in the table.
    let points = ["connections=2", "connections=4"];
    let second = pane.wait(15, "the second run and a finished point", |s| {
        s.contains("run 2 of 2") && points.iter().any(|p| point_row(s, p).is_some())
    });
    let done_point = points
        .into_iter()
        .find(|p| point_row(&second, p).is_some())
        .unwrap();
    let row = point_row(&second, done_point).unwrap();
    // pool, point, "1 of 1", median responses/s, p99, verdict
    assert_eq!(row[2..5], ["1", "of", "1"], "{row:?}");
    let shown_rps: f64 = row[5].parse().unwrap_or_else(|_| panic!("{row:?}"));
    let verdict = row[7..].join(" ");
    assert!(
        verdict == "ok" || verdict.starts_with("client-bound in 1 of 1"),
        "{verdict}"
    );
    assert_eq!(pane.exit_code(30), 0, "{}", pane.scrollback());
    assert!(!pane.alternate(), "the screen is put back");
    // The scrollback holds what a pipe gets: the lines and the summary;
    // nothing of the view.
    let back = pane.scrollback();
    for want in [
        "Experiment campaign-lab: 2 runs (1 targets × 2 points × 1 repetitions",
        "[  1/2] block 1  pool",
        "[  2/2] block 1  pool",
        "Per point: median",
        "The experiment's page, with charts:",
        "EXIT=0",
    ] {
        assert!(back.contains(want), "{want:?} not in\n{back}");
    }
    assert!(!back.contains("Finished points"), "{back}");
    // The experiment is complete, and the table showed its file's figure.
    let state = json(&dir.join("experiment.json"));
    let runs = state["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["status"], "done", "{r}");
        let result = json(&dir.join(r["result"].as_str().unwrap()));
        assert!(result["summary"]["responses"].as_u64().unwrap() > 0);
        let point = &state["points"][r["point"].as_u64().unwrap() as usize][0];
        let point = format!(
            "{}={}",
            point[0].as_str().unwrap(),
            point[1].as_str().unwrap()
        );
        if point == done_point {
            let rps = result["summary"]["rps"].as_f64().unwrap();
            assert_eq!(format!("{rps:.1}"), format!("{shown_rps:.1}"), "{point}");
        }
    }
    assert!(dir.join("report.html").exists());
}

#[test]
fn find_max_shows_each_trial_its_bracket_and_q_writes_what_it_has() {
    let serve = ServeProcess::start(&[]);
    let out = temp_path("campaign-findmax.json");
    let _ = std::fs::remove_file(&out);
    let url = serve.url("/pool?ms=10&workers=8&queue=4096");
    let pane = Pane::start(
        "findmax",
        120,
        36,
        &[("TERM", "xterm-256color")],
        &[
            "find-max",
            &url,
            "--slo",
            "p99<2s",
            "--start-rate",
            "20",
            "--max-rate",
            "80",
            "--trial",
            "2s",
            "--long-trial",
            "2s",
            "--confirm",
            "2s",
            "--cool-down",
            "500ms",
            "--max-time",
            "60s",
            "-t",
            "1",
            "--json",
            out.to_str().unwrap(),
        ],
    );
    let first = pane.wait(15, "trial 1", |s| {
        s.contains("trial 1 · bracket · 20/s for 2 s") && s.contains("Finished trials")
    });
    assert!(pane.alternate(), "the view is on the alternate screen");
    for want in [
        "Searching the highest rate at which p99<2s hold",
        "bracket: no trial yet",
        "left, an estimate (if the next trial closes the bracket)",
        "offered",
        "q stop (the search writes what it has)",
    ] {
        assert!(first.contains(want), "{want:?} not in\n{first}");
    }
    // The second trial, with the first one's verdict in the table — or,
    // on a machine too busy to keep a 20/s schedule (the full suite runs
    // many tests at once), the search stops at once, saying the client was
    // the limit: then the view must have said so and put the screen back.
    let second = pane.wait(15, "trial 2 and trial 1's verdict", |s| {
        (s.contains("trial 2 · ") && s.lines().any(|l| l.contains("1  bracket  20/s")))
            || s.contains("EXIT=")
    });
    if second.contains("EXIT=") {
        let back = pane.scrollback();
        assert!(
            back.contains("NOT VALID: the client could not keep its schedule")
                && back.contains("Stopped: the client, not the server, was the limit"),
            "the search ended before its second trial without saying why:\n{back}"
        );
        assert_eq!(pane.exit_code(1), 1, "{back}");
        assert!(!pane.alternate(), "the screen is put back");
        eprintln!("find-max view: this machine was too busy for a 20/s schedule; the client-bound end was checked instead of q");
        return;
    }
    let row = second
        .lines()
        .find(|l| l.contains("1  bracket  20/s"))
        .unwrap();
    assert!(
        row.contains("pass") || row.contains("FAIL: "),
        "a verdict: {row}"
    );
    if row.contains("pass") {
        assert!(
            second.contains("bracket: not closed yet, 20/s passed"),
            "{second}"
        );
    }
    pane.keys(&["q"]);
    assert_eq!(pane.exit_code(15), 130, "{}", pane.scrollback());
    assert!(!pane.alternate(), "the screen is put back");
    let back = pane.scrollback();
    for want in [
        "   1  bracket          20/s for    2 s",
        "interrupted: the trial at",
    ] {
        assert!(back.contains(want), "{want:?} not in\n{back}");
    }
    if row.contains("pass") {
        assert!(back.contains("Max rate under the SLOs: 20/s"), "{back}");
        assert!(
            back.contains("— interrupted before the search ended"),
            "{back}"
        );
    }
    assert!(!back.contains("Finished trials"), "{back}");
    // What it has is written: the first trial, and an interrupted end.
    let doc = json(&out);
    assert_eq!(doc["answer"]["end"], "interrupted", "{doc}");
    assert_eq!(doc["answer"]["trials"][0]["rate"], 20.0, "{doc}");
    assert_eq!(doc["figures"].as_array().unwrap().len(), 1, "{doc}");
}

#[test]
fn without_a_terminal_or_with_no_tui_the_lines_stay_as_they_were() {
    let serve = ServeProcess::start(&[]);
    let file = experiment("campaign-pipe", &serve, 1);
    // A pipe, whatever TERM says: the lines, no escape code, no \r.
    let dir = fresh_dir("campaign-pipe-out");
    let out = yace()
        .args([
            "lab",
            "run",
            file.to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
        ])
        .env("TERM", "xterm-256color")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(text.contains("[  1/2] block 1  pool"), "{text}");
    assert!(text.contains("Per point: median"), "{text}");
    for t in [&text, &err] {
        assert!(!t.contains('\x1b') && !t.contains('\r'), "{t:?}");
    }
    let url = serve.url("/pool?ms=10&workers=8&queue=4096");
    let out = yace()
        .args(["find-max", &url, "--slo", "p99<2s", "--start-rate", "20"])
        .args(["--max-rate", "40", "--trial", "1s", "--long-trial", "1s"])
        .args(["--confirm", "1s", "--cool-down", "0s", "-t", "1"])
        .env("TERM", "xterm-256color")
        .output()
        .unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(
        text.contains("   1  bracket          20/s for    1 s"),
        "{text}{err}"
    );
    for t in [&text, &err] {
        assert!(!t.contains('\x1b') && !t.contains('\r'), "{t:?}");
    }
    // --no-tui on a terminal: the lines, on the main screen.
    let dir = fresh_dir("campaign-notui-out");
    let pane = Pane::start(
        "notui",
        120,
        36,
        &[("TERM", "xterm-256color")],
        &[
            "lab",
            "run",
            file.to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
            "--no-tui",
        ],
    );
    let s = pane.wait(15, "a run's line", |s| s.contains("[  1/2] block 1  pool"));
    assert!(!pane.alternate(), "{s}");
    assert_eq!(pane.exit_code(20), 0, "{}", pane.scrollback());
}
