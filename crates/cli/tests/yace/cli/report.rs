//! `yace report`: a saved result rendered again, from the JSON alone, and
//! agreeing with what the run said and the server saw.

use crate::cli::{run_json, server, settled, stderr, temp_path, u, yace};
use serde_json::Value;

fn report(args: &[&str]) -> std::process::Output {
    yace().arg("report").args(args).output().unwrap()
}

#[test]
fn a_saved_result_renders_as_text_markdown_csv_and_json() {
    let s = server();
    let url = format!("{}status/404", s.url());
    let (out, r) = run_json("report-src", &[&url, "-c", "3", "-n", "1234", "-t", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(settled(&s).requests, 1234);
    let file = temp_path("report-src.json");
    let file = file.to_str().unwrap();

    // Text: the summary `yace run` printed, again.
    let o = report(&[file]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("1,234 responses"), "{text}");
    assert!(text.contains("404: 1,234"), "{text}");

    // Markdown, to a file.
    let md_path = temp_path("report.md");
    let o = report(&[file, "-F", "markdown", "-o", md_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "-o writes the file, not stdout");
    let md = std::fs::read_to_string(&md_path).unwrap();
    assert!(md.starts_with("# GET "), "{md}");
    assert!(md.contains("| 1,234 | 1,234 | 0 | 1,234 |"), "{md}");
    assert!(md.contains("| 404 | 1,234 |"), "{md}");
    assert!(md.contains("## Per second"), "{md}");

    // CSV: the per-second series adds up to the run's responses.
    let o = report(&[file, "--format", "csv"]);
    let csv = String::from_utf8(o.stdout).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "responses").unwrap();
    let non2xx = header.iter().position(|h| *h == "non_2xx").unwrap();
    let (mut responses, mut bad) = (0u64, 0u64);
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), header.len(), "{l}");
        // No float printed with all its digits (0.00022192399999987344).
        for v in &f {
            let decimals = v.split_once('.').map_or(0, |(_, d)| d.len());
            assert!(decimals <= 3, "unrounded value {v} in: {l}");
        }
        responses += f[col].parse::<u64>().unwrap();
        bad += f[non2xx].parse::<u64>().unwrap();
    }
    assert_eq!(responses, u(&r, "summary.responses"));
    assert_eq!(bad, 1234);

    // JSON: the same document, re-checked against the schema.
    let o = report(&[file, "-F", "json"]);
    let again: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(again, r);

    // HTML: one page, which holds the result and reads back as it.
    let page = temp_path("report.html");
    let page = page.to_str().unwrap();
    let o = report(&[file, "-F", "html", "-o", page]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<td>1,234</td>"), "the figures table");
    let o = report(&[page, "-F", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let back: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(back, r);
    // And it compares with a JSON result like any result.
    let o = report(&[page, file]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Comparing 2 runs"));

    // Chinese: by flag, by YACE_LANG, or by the locale; English otherwise.
    let zh = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).contains("已发起 1,234");
    assert!(zh(&report(&[file, "--lang", "zh"])));
    let by = |k: &str, v: &str| {
        yace()
            .env_remove("YACE_LANG")
            .env_remove("LC_ALL")
            .env_remove("LC_MESSAGES")
            .env(k, v)
            .args(["report", file])
            .output()
            .unwrap()
    };
    assert!(zh(&by("YACE_LANG", "zh")));
    assert!(zh(&by("LANG", "zh_CN.UTF-8")));
    assert!(!zh(&by("LANG", "en_US.UTF-8")));
    let md = report(&[file, "-F", "markdown", "--lang", "zh"]);
    assert!(String::from_utf8_lossy(&md.stdout).contains("## 延迟"));
    // CSV and JSON are for machines: the same in any language.
    assert_eq!(
        report(&[file, "-F", "csv", "--lang", "zh"]).stdout,
        report(&[file, "-F", "csv"]).stdout
    );
}

#[test]
fn a_file_that_is_not_a_result_is_a_usage_error() {
    let o = report(&["/no/such/result.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/no/such/result.json: cannot read"),
        "{}",
        stderr(&o)
    );

    let bad = temp_path("not-a-result.json");
    std::fs::write(&bad, r#"{"schema": "yace.result.v0"}"#).unwrap();
    let o = report(&[bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("schema 'yace.result.v0' is not 'yace.result.v1'"),
        "{e}"
    );
    assert!(e.contains("yace run --json FILE"), "{e}");

    std::fs::write(&bad, "not json").unwrap();
    let o = report(&[bad.to_str().unwrap(), "-F", "markdown"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not a yace result: it is not a JSON object"),
        "{}",
        stderr(&o)
    );
    // An HTML page that is not a yace report.
    std::fs::write(&bad, "<!DOCTYPE html><html><body>hi</body></html>").unwrap();
    let o = report(&[bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("holds no yace result"), "{e}");
    assert!(e.contains("yace HTML report"), "{e}");
}

#[test]
fn a_breached_threshold_is_a_failed_junit_case() {
    let s = server();
    let url = format!("{}status/404", s.url());
    // No response comes back in under a microsecond: p99<1us is breached.
    // The run writes its JUnit report itself too (--junit).
    let at_run = temp_path("junit-at-run.xml");
    let (out, _) = run_json(
        "junit-breach",
        &[
            &url,
            "-c",
            "2",
            "-n",
            "200",
            "-t",
            "1",
            "--threshold",
            "p99<1us",
            "--junit",
            at_run.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let file = temp_path("junit-breach.json");
    let path = temp_path("junit.xml");
    let o = report(&[
        file.to_str().unwrap(),
        "-F",
        "junit",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let xml = std::fs::read_to_string(&path).unwrap();
    assert!(xml.starts_with("<?xml"), "{xml}");
    // The same report, written by the run or rendered from its result.
    assert_eq!(std::fs::read_to_string(&at_run).unwrap(), xml);
    assert!(
        xml.contains(r#"name="thresholds""#) && xml.contains(r#"failures="1""#),
        "{xml}"
    );
    assert!(xml.contains(r#"<testcase name="p99&lt;1us""#), "{xml}");
    assert!(
        xml.contains(r#"<failure type="threshold" message="breached: actual"#),
        "{xml}"
    );
}

#[test]
fn several_results_are_compared_side_by_side() {
    let s = server();
    let fast = s.url();
    let slow = format!("{}sleep?ms=5", s.url());
    let (out, _) = run_json("cmp-fast", &[&fast, "-c", "2", "-n", "200", "-t", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (out, _) = run_json("cmp-slow", &[&slow, "-c", "2", "-n", "200", "-t", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (a, b) = (temp_path("cmp-fast.json"), temp_path("cmp-slow.json"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = report(&[a, b]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("Comparing 2 runs"), "{text}");
    // The slow route is slower: its p50 rises by far more than 100%.
    let p50 = text.lines().find(|l| l.contains("latency p50")).unwrap();
    assert!(p50.contains("(+"), "{p50}");
    assert!(
        text.contains("cannot tell whether a difference is real"),
        "{text}"
    );
    let o = report(&[a, b, "-F", "markdown"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("| latency p99 |"));
    // A format that holds one run refuses several, saying why.
    let o = report(&[a, b, "-F", "csv"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("compared as text, markdown or html"),
        "{}",
        stderr(&o)
    );
}
