//! `yace capacity`: seed 003's arithmetic, and back from a measured rate.

use crate::cli::{stderr, stdout, yace};

#[test]
fn seed_003s_page_views_become_the_rate_to_hold() {
    let out = yace()
        .args([
            "capacity",
            "--pageviews",
            "1M",
            "--share",
            "40%",
            "--peak-factor",
            "3",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // 1,000,000 / 86,400 = 11.57; × 2.5 = 28.94; × 3 = 86.81.
    for want in [
        "11.57 req/s",
        "28.94 req/s",
        "86.81 req/s",
        "÷ 40% (× 2.5)",
        "assumes:",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
    assert!(text.contains("must hold 86.81 req/s at the peak"), "{text}");
}

/// Whose views `--pageviews` counts, said where it is read and where it is
/// used: the tested page's own, and the site's rate is the page's ÷ its
/// share (seed 003: the home page's 1M views are 40% of the site's).
#[test]
fn the_page_views_are_the_tested_pages_own_in_help_and_steps() {
    let help = stdout(&yace().args(["capacity", "--help"]).output().unwrap());
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("The tested page's own views a day")
            && flat.contains("not the whole site's: the site's rate is the page's ÷ --share"),
        "{help}"
    );
    assert!(
        flat.contains("the site's rate = the page's rate ÷ this share"),
        "{help}"
    );
    let args = [
        "capacity",
        "--pageviews",
        "1M",
        "--share",
        "40%",
        "--peak-factor",
        "3",
    ];
    let en = stdout(&yace().args(args).output().unwrap());
    for want in [
        "The rate to hold for 1,000,000 views a day of the tested page (the site's rate = the page's ÷ its share)",
        "the page's average rate over the day",
        "1,000,000 views of the page / 86,400 s",
        "the site's rate: the page's ÷ its share",
    ] {
        assert!(en.contains(want), "{want}: {en}");
    }
    let zh = stdout(&yace().args(args).args(["--lang", "zh"]).output().unwrap());
    for want in [
        "被测页面每天",
        "全站速率 = 该页面的速率 ÷ 它的份额",
        "全站速率：该页面的速率 ÷ 它的份额",
    ] {
        assert!(zh.contains(want), "{want}: {zh}");
    }
    // With the whole site (the default --share 100%) there is no share step.
    let all = stdout(
        &yace()
            .args(["capacity", "--pageviews", "1M"])
            .output()
            .unwrap(),
    );
    assert!(
        !all.contains("÷ its share\n") && !all.contains("the site's rate:"),
        "{all}"
    );
}

#[test]
fn a_measured_rate_is_read_backwards_with_a_pool_size() {
    let out = yace()
        .args(["capacity", "--supports", "420", "--peak", "80/20"])
        .args(["--service-time", "120ms"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // 420 × 75% × 21,600 s = 6,804,000; 420 × 0.12 × 1.25 = 63 workers.
    assert!(
        text.contains("supports about 6,804,000 views a day of the tested page"),
        "{text}"
    );
    assert!(text.contains("63 workers"), "{text}");
}

#[test]
fn bad_capacity_inputs_are_reported_together() {
    let out = yace()
        .args([
            "capacity",
            "--pageviews",
            "x",
            "--share",
            "140",
            "--peak",
            "90/10",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    for want in ["--pageviews: 'x'", "--share: '140'", "--peak: '90/10'"] {
        assert!(err.contains(want), "{want}: {err}");
    }
}

/// A find-max answer against the page views: the headroom over the rate
/// required, and how many such servers a bigger load needs.
#[test]
fn a_find_max_answer_gives_the_headroom_and_the_servers_needed() {
    let path = crate::cli::temp_path("find-max-answer.json");
    std::fs::write(
        &path,
        r#"{"schema":"yace.find-max.v1","url":"http://x/","slos":["p99<100ms"],
            "answer":{"end":"converged","max_rate":383.0,"failed_at":387.0,"trials":[]}}"#,
    )
    .unwrap();
    let file = path.to_str().unwrap();
    let out = yace()
        .args([
            "capacity",
            "--pageviews",
            "1M",
            "--share",
            "40%",
            "--find-max",
            file,
        ])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    // 383 / 86.81 = 4.4; 383 / 114.76 = 3.3; one server is enough.
    assert!(
        text.contains("The measured maximum under p99<100ms is 383 req/s: 4.4× the 86.81 req/s"),
        "{text}"
    );
    assert!(text.contains("3.3× with burst headroom"), "{text}");
    assert!(text.contains("Servers like it for this load: 1 "), "{text}");
    // 100M views a day: 3,649 req/s with headroom ÷ (383 × 75%) → 13 servers.
    let out = yace()
        .args(["capacity", "--pageviews", "100M", "--find-max", file])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(text.contains("0.11× the 3,472.22 req/s"), "{text}");
    assert!(
        text.contains("Servers like it for this load: 13 "),
        "{text}"
    );
    // Not an answer: said so.
    std::fs::write(&path, r#"{"schema":"yace.result.v1"}"#).unwrap();
    let out = yace()
        .args(["capacity", "--find-max", file])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a `yace find-max --json` answer"),
        "{}",
        stderr(&out)
    );
}

/// Seed 003's arithmetic in Chinese: the same figures, every step and
/// assumption in words its author reads.
#[test]
fn the_capacity_steps_read_in_chinese() {
    let out = yace()
        .args([
            "capacity",
            "--pageviews",
            "1M",
            "--share",
            "40%",
            "--peak-factor",
            "3",
        ])
        .args(["--service-time", "120ms", "--lang", "zh"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for want in [
        "11.57 请求/秒",
        "28.94 请求/秒",
        "86.81 请求/秒",
        "假设：",
        "利特尔定律",
        "服务器在峰值时必须承受",
    ] {
        assert!(text.contains(want), "{want:?} in:\n{text}");
    }
    // No English word left but the command it suggests and the pool's names.
    let english: Vec<&str> = text
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() > 2)
        .filter(|w| {
            ![
                "yace",
                "run",
                "URL",
                "rate",
                "pm",
                "max",
                "children",
                "MaxRequestWorkers",
            ]
            .contains(w)
        })
        .collect();
    assert!(english.is_empty(), "untranslated {english:?} in:\n{text}");
}

#[test]
fn the_pool_is_capped_by_memory() {
    // 1M views a day at 200 ms a request needs more workers than 64 MB
    // each can have in 1 GB with a fifth kept back: floor(819.2 / 64) = 12.
    let out = yace()
        .args(["capacity", "--pageviews", "1M", "--service-time", "200ms"])
        .args(["--worker-rss", "64MB", "--memory", "1GB"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("workers that fit in memory") && text.contains("12 workers"),
        "{text}"
    );
    assert!(
        text.contains("1.0 GB × (1 − 0.2) ÷ 64.0 MB per worker"),
        "{text}"
    );
    assert!(
        text.contains("Memory, not the rate, limits the pool: 12 workers fit"),
        "{text}"
    );
    // From a monitored result: php-fpm's children and the machine's memory.
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../report/tests/render/fixtures/monitor-php.json"
    );
    let out = yace()
        .args(["capacity", "--result", fixture])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("workers that fit in memory"), "{text}");
    assert!(text.contains("Set the pool to"), "{text}");
    let bad = yace()
        .args(["capacity", "--pageviews", "1M", "--worker-rss", "lots"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--worker-rss: 'lots' is not a size"));
}

/// A lab experiment's best point stands for the measured rate (the
/// committed sweep of two `yace serve` pools: 8 and 16 workers × 10 ms).
#[test]
fn a_lab_experiments_best_point_gives_the_headroom() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../lab/tests/fixtures/concurrency"
    );
    let out = yace()
        .args(["capacity", "--pageviews", "10M", "--lab", dir])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    // 10M / 86,400 × 3 (the default peak) = 347.22; the big pool's best
    // median is 1,391.25/s at 32 connections: 4.0× that.
    assert!(
        text.contains("The lab's best point (big-pool, connections=32, median of 3 runs) held 1,391.25 req/s: 4.0× the 347.22 req/s"),
        "{text}"
    );
    // One target's best, read backwards.
    let out = yace()
        .args(["capacity", "--lab", dir, "--target", "small-pool"])
        .output()
        .unwrap();
    assert!(
        stdout(&out).starts_with("What 703.41 req/s supports"),
        "{}",
        stdout(&out)
    );
    let out = yace()
        .args(["capacity", "--lab", dir, "--target", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no target `nope` in the experiment (it has small-pool, big-pool)"),
        "{}",
        stderr(&out)
    );
}
