//! Snapshot tests of the pure renderers: each committed result in
//! `fixtures/` (made by real runs against the embedded target; `closed`
//! given a status mix and errors by hand) rendered by each renderer must
//! equal its committed snapshot in `snapshots/`, byte for byte. A change to
//! a renderer shows here as a diff to review; accept it with
//! `YACE_UPDATE_SNAPSHOTS=1 cargo test -p yace-report --test render`
//! (never set in CI).

use std::path::{Path, PathBuf};
use yace_report::ab::{AbStyle, HtmlAttrs};

const FIXTURES: [&str; 8] = [
    "closed",
    "open",
    "scenario",
    "http2",
    "shortfall",
    // Written with the per-second levels (status classes, failures,
    // in-flight, client CPU, lag); the others predate them and must still
    // render.
    "levels",
    // With a `monitor` section (--monitor), from real runs on loopback:
    // `yace serve -p 0` loaded by `yace run URL -d 4s -c 8 --monitor system
    // --monitor proc:yace --monitor-interval 500ms` (the embedded target
    // runs inside the client, which proc: never counts, hence a separate
    // `yace serve`): the server's CPU saturated, a `problem` diagnosis.
    "monitor",
    // nginx → php-fpm from stacks/ (pm.max_children = 4), `yace run
    // URL/sleep.php?ms=40 -c 24 -d 4s` with system, proc:php-fpm,
    // nginx:…/nginx_status, fpm:…/fpm-status and prom: of a small
    // stand-in exporter (a Python loop) that stopped answering after 2.2 s,
    // so that source was dropped; php-fpm reached max_children.
    "monitor-php",
];

mod html;

/// `yace ab` without options: percentiles and the confidence table shown.
const AB_DEFAULTS: AbStyle = AbStyle {
    keepalive_flag: false,
    percentiles: true,
    confidence: true,
    strict_length: false,
    html: None,
};

pub(crate) fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/render")
}

pub(crate) fn fixture(name: &str) -> stats::RunResult {
    let path = here().join("fixtures").join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    yace_report::json::read(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Compares (or, when asked, updates) one snapshot; returns a complaint.
fn check(name: &str, got: &[u8]) -> Option<String> {
    let path = here().join("snapshots").join(name);
    if std::env::var_os("YACE_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return None;
    }
    let want = std::fs::read(&path).unwrap_or_default();
    if want == got {
        return None;
    }
    let (want, got) = (String::from_utf8_lossy(&want), String::from_utf8_lossy(got));
    let first = want
        .lines()
        .zip(got.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| want.lines().count().min(got.lines().count()));
    Some(format!(
        "{name} differs from its snapshot at line {}:\n  want: {:?}\n  got:  {:?}",
        first + 1,
        want.lines().nth(first).unwrap_or("<end>"),
        got.lines().nth(first).unwrap_or("<end>"),
    ))
}

pub(crate) fn render(f: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> Vec<u8> {
    let mut out = Vec::new();
    f(&mut out).unwrap();
    out
}

#[test]
fn every_renderer_matches_its_snapshot() {
    let mut wrong = Vec::new();
    for name in FIXTURES {
        let r = fixture(name);
        let outputs = [
            ("txt", render(|w| yace_report::text::summary(&r, w))),
            (
                "graphs.txt",
                render(|w| yace_report::text::summary_with(&r, w, true)),
            ),
            ("md", render(|w| yace_report::markdown::report(&r, w))),
            ("csv", render(|w| yace_report::csv::series(&r, w))),
            (
                "ab.txt",
                render(|w| yace_report::ab::report(&r, &AB_DEFAULTS, w)),
            ),
            ("ab.csv", render(|w| yace_report::ab::csv(&r, w))),
            ("junit.xml", render(|w| yace_report::junit::report(&r, w))),
            (
                "html",
                html::readable(&render(|w| yace_report::html::report(&r, w))),
            ),
        ];
        for (ext, got) in outputs {
            wrong.extend(check(&format!("{name}.{ext}"), &got));
        }
    }
    // Chinese (--lang zh): the summary, Markdown and HTML.
    for name in ["levels", "scenario", "shortfall", "monitor-php"] {
        let r = fixture(name);
        let zh = yace_report::lang::Lang::Zh;
        let outputs = [
            (
                "zh.txt",
                render(|w| yace_report::text::summary_in(&r, w, true, zh)),
            ),
            (
                "zh.md",
                render(|w| yace_report::markdown::report_in(&r, w, zh)),
            ),
            (
                "zh.html",
                html::readable(&render(|w| yace_report::html::report_in(&r, w, zh))),
            ),
        ];
        for (ext, got) in outputs {
            wrong.extend(check(&format!("{name}.{ext}"), &got));
        }
    }
    // ab's options that change its layout: -k, no percentiles or
    // confidence table, strict length, HTML (-w with -x/-y/-z).
    let r = fixture("closed");
    let style = AbStyle {
        keepalive_flag: true,
        percentiles: false,
        confidence: false,
        strict_length: true,
        html: Some(HtmlAttrs {
            table: "border=1".into(),
            tr: String::new(),
            td: "align=right".into(),
        }),
    };
    let got = render(|w| yace_report::ab::report(&r, &style, w));
    wrong.extend(check("closed.ab-options.html", &got));
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// Several results side by side, as text and Markdown.
#[test]
fn a_comparison_matches_its_snapshot() {
    let runs: Vec<(String, stats::RunResult)> = ["open", "shortfall", "closed"]
        .iter()
        .map(|n| (format!("{n}.json"), fixture(n)))
        .collect();
    let mut wrong = Vec::new();
    let text = render(|w| yace_report::compare::text(&runs, w));
    wrong.extend(check("compare.txt", &text));
    wrong.extend(check(
        "compare.md",
        &render(|w| yace_report::compare::markdown(&runs, w)),
    ));
    wrong.extend(check(
        "compare.html",
        &html::readable(&render(|w| yace_report::html::page(&runs, w))),
    ));
    let zh = yace_report::lang::Lang::Zh;
    wrong.extend(check(
        "compare.zh.txt",
        &render(|w| yace_report::compare::text_in(&runs, w, zh)),
    ));
    wrong.extend(check(
        "compare.zh.md",
        &render(|w| yace_report::compare::markdown_in(&runs, w, zh)),
    ));
    wrong.extend(check(
        "compare.zh.html",
        &html::readable(&render(|w| yace_report::html::page_in(&runs, w, zh))),
    ));
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    // Each figure against the first: open's 154.9/s to shortfall's 193.3/s.
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("193.3 (+24.8%)"), "{text}");
    assert!(
        text.contains("cannot tell whether a difference is real"),
        "{text}"
    );
}

/// Every fixture's JUnit XML is valid against the Apache Ant JUnit schema
/// (committed in `junit/`), checked by `xmllint` (libxml2-utils, which
/// scripts/test.sh installs).
#[test]
fn junit_reports_validate_against_the_junit_schema() {
    let xsd = here().join("junit/JUnit.xsd");
    let dir = std::env::temp_dir().join(format!("yace-junit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in FIXTURES {
        let r = fixture(name);
        let path = dir.join(format!("{name}.xml"));
        std::fs::write(&path, render(|w| yace_report::junit::report(&r, w))).unwrap();
        let out = std::process::Command::new("xmllint")
            .arg("--noout")
            .arg("--schema")
            .arg(&xsd)
            .arg(&path)
            .output()
            .unwrap_or_else(|e| {
                panic!("xmllint: {e} (Debian package libxml2-utils; scripts/test.sh installs it)")
            });
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The check can fail: a document without the required parts is refused.
    let bad = dir.join("bad.xml");
    std::fs::write(&bad, "<testsuites><testsuite name=\"x\"/></testsuites>").unwrap();
    let out = std::process::Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(&xsd)
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Nothing a reader reads is left in English in a Chinese report: the
/// labels of every section of the summary, Markdown and HTML are
/// translated (figures, units, outcome names and URLs stay as they are).
#[test]
fn a_chinese_report_has_no_english_labels_left() {
    let zh = yace_report::lang::Lang::Zh;
    let english = [
        "Requests",
        "started",
        "Transfer",
        "Latency",
        "latency (",
        "Service time",
        "Schedule lag",
        "Phases",
        "Connections",
        "Status ",
        "Errors",
        "Client",
        "warning:",
        "busiest",
        "threads",
        "connections",
        "model",
        "Checks",
        "Thresholds",
        "Steps",
        "passed",
        "failed",
        "Summary",
        "Responses",
        "responses",
        "Charts",
        "show data",
        "log scale",
        "Per second",
        "Figures",
        "client machine",
        "No errors",
        "no complete",
        "in flight",
        "duration reached",
        "all requests done",
        "keep-alive,",
        "Comparing",
        "note:",
        "cannot tell",
        "share this machine",
        "service time",
        "TCP connect",
        "handshake",
        "wait (",
        "processing",
        "offered",
        "errors/s",
        "title\":\"L",
        "fastest second",
        "slowest second",
        // The server's side (--monitor).
        "Server",
        "Diagnos",
        "what it watched",
        "samples",
        "Load per CPU",
        "Memory",
        "resident memory",
        "busy at most",
        "listen queue",
        "max_children reached",
        "open files",
        "requests/s",
        "DROPPED",
        "PROBLEM",
        "(the cursor",
    ];
    // Why a monitor failed is free text the result holds (as written, like
    // an unknown warning), not a label: left out, as is and as HTML.
    let free_text: Vec<String> = FIXTURES
        .iter()
        .filter_map(|n| fixture(n).monitor)
        .flat_map(|m| m.sources.into_iter().filter_map(|s| s.error))
        .flat_map(|e| {
            let html = e
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
                .replace('\'', "&apos;");
            [e, html]
        })
        .collect();
    let mut found = Vec::new();
    let mut look = |what: &str, text: &str| {
        // The embedded results and the vendored library are not read by
        // anyone; the charts' titles, notes and legends are.
        let prose = match text.find("<script type=\"application/x-yace-result\"") {
            Some(at) => &text[..at],
            None => text,
        };
        let mut prose = prose.to_string();
        for e in &free_text {
            prose = prose.replace(e.as_str(), "");
        }
        let prose = prose.as_str();
        for e in english {
            if prose.contains(e) {
                let at = prose.find(e).unwrap();
                let from = prose[..at]
                    .char_indices()
                    .rev()
                    .nth(40)
                    .map_or(0, |(i, _)| i);
                found.push(format!(
                    "{what}: {e:?} in …{}…",
                    &prose[from..(at + e.len() + 20).min(prose.len())].replace('\n', " ")
                ));
            }
        }
    };
    for name in FIXTURES {
        let r = fixture(name);
        look(
            name,
            &String::from_utf8(render(|w| yace_report::text::summary_in(&r, w, true, zh))).unwrap(),
        );
        look(
            name,
            &String::from_utf8(render(|w| yace_report::markdown::report_in(&r, w, zh))).unwrap(),
        );
        look(
            name,
            &String::from_utf8(render(|w| yace_report::html::report_in(&r, w, zh))).unwrap(),
        );
    }
    let runs: Vec<(String, stats::RunResult)> = ["open", "closed"]
        .iter()
        .map(|n| (format!("{n}.json"), fixture(n)))
        .collect();
    look(
        "compare",
        &String::from_utf8(render(|w| yace_report::compare::text_in(&runs, w, zh))).unwrap(),
    );
    look(
        "compare",
        &String::from_utf8(render(|w| yace_report::html::page_in(&runs, w, zh))).unwrap(),
    );
    assert!(found.is_empty(), "untranslated:\n{}", found.join("\n"));
}

/// A `yace find-max --json` answer (from a real search of the embedded
/// target's pool), rendered again: text, Markdown, HTML, and in Chinese.
#[test]
fn a_find_max_answer_matches_its_snapshot() {
    let path = here().join("fixtures/find-max.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(yace_report::findmax::is_search(&text));
    let s = yace_report::findmax::read(&text).unwrap();
    let (en, zh) = (yace_report::lang::Lang::En, yace_report::lang::Lang::Zh);
    let mut wrong = Vec::new();
    for (name, got) in [
        (
            "find-max.txt",
            render(|w| yace_report::findmax::text(&s, w, en)),
        ),
        (
            "find-max.md",
            render(|w| yace_report::findmax::markdown(&s, w, en)),
        ),
        (
            "find-max.zh.txt",
            render(|w| yace_report::findmax::text(&s, w, zh)),
        ),
        (
            "find-max.html",
            html::readable(&render(|w| yace_report::html::search_page(&s, w, en))),
        ),
    ] {
        wrong.extend(check(name, &got));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    // A run result is not a search, and says so.
    let run = std::fs::read_to_string(here().join("fixtures/open.json")).unwrap();
    assert!(!yace_report::findmax::is_search(&run));
    assert!(yace_report::findmax::read(&run)
        .unwrap_err()
        .contains("not a yace.find-max.v1"));
}

#[test]
fn a_snapshot_mismatch_is_reported() {
    // The check itself can fail: a changed byte is a complaint.
    if std::env::var_os("YACE_UPDATE_SNAPSHOTS").is_some() {
        return;
    }
    let r = fixture("open");
    let mut got = render(|w| yace_report::csv::series(&r, w));
    *got.last_mut().unwrap() = b'!';
    assert!(check("open.csv", &got).is_some());
}

/// A TLS run in which no handshake completed checked no certificate: the
/// TLS line says so, and never "verified" (in every renderer, both
/// languages); with a handshake, it does say verified.
#[test]
fn no_handshake_is_never_called_verified() {
    use yace_report::lang::Lang;
    let mut r = fixture("closed");
    let shaken = stats::TlsInfo {
        version: Some("TLSv1_3".into()),
        cipher: Some("TLS13_AES_256_GCM_SHA384".into()),
        verified: true,
        resumed_handshakes: 0,
        full_handshakes: 4,
    };
    r.tls = Some(stats::TlsInfo {
        version: None,
        cipher: None,
        verified: true,
        resumed_handshakes: 0,
        full_handshakes: 0,
    });
    let all = |r: &stats::RunResult| {
        [Lang::En, Lang::Zh].map(|lang| {
            let text = render(|w| yace_report::text::summary_in(r, w, false, lang));
            let md = render(|w| yace_report::markdown::report_in(r, w, lang));
            let html = render(|w| yace_report::html::report_in(r, w, lang));
            String::from_utf8([text, md, html].concat()).unwrap()
        })
    };
    let [en, zh] = all(&r);
    assert!(!en.contains("verified"), "{en}");
    assert!(en.contains("TLS: no handshake completed (0 full, 0 resumed)"));
    assert!(!zh.contains("已验证"), "{zh}");
    assert!(zh.contains("没有完成握手"));
    r.tls = Some(shaken);
    let [en, zh] = all(&r);
    assert!(en.contains("certificate verified") && zh.contains("已验证"));
}

/// Counts agree with their nouns, and a share in the client's line has one
/// pair of parentheses: "length varied in 1 response", "watching cost live
/// view 0.200 CPU-s (10.0% of the workers' CPU)".
#[test]
fn one_response_and_one_pair_of_parentheses() {
    use yace_report::lang::Lang;
    let mut r = fixture("closed");
    r.summary.body_length = stats::BodyLength {
        first: Some(12),
        min: 12,
        max: 13,
        varied: 1,
    };
    r.client.cpu_s = 2.0;
    r.client.extras_cpu_s = [("live_view".to_string(), 0.2)].into();
    let text = |r: &stats::RunResult, lang| {
        String::from_utf8(render(|w| yace_report::text::summary_in(r, w, false, lang))).unwrap()
    };
    let en = text(&r, Lang::En);
    assert!(
        en.contains("length varied in 1 response (12–13 bytes)"),
        "{en}"
    );
    let cost = en.lines().find(|l| l.contains("watching cost")).expect(&en);
    assert!(
        cost.ends_with("0.200 CPU-s (10.0% of the workers' CPU)"),
        "{cost}"
    );
    assert!(!cost.contains(") ("), "{cost}");
    let zh = text(&r, Lang::Zh);
    assert!(
        zh.contains("1 个响应的长度不同") && zh.contains("占工作线程 CPU 的 10.0%"),
        "{zh}"
    );
    // Several still read as several.
    r.summary.body_length.varied = 3;
    assert!(text(&r, Lang::En).contains("length varied in 3 responses"));
}
