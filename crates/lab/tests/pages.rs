//! The lab's reports of two committed experiments, made by real runs on
//! loopback against `yace serve` (see each `fixtures/*/experiment.toml`):
//! a concurrency sweep of two pools (8 and 16 workers × 10 ms; connections
//! 1–32, three repetitions, server CPU from proc:yace) and a before/after
//! with six repetitions. Each report — text, Markdown, CSV, the HTML page,
//! in English and Chinese, and `yace compare` of the before/after's runs —
//! must equal its snapshot in `snapshots/`; accept a reviewed change with
//! `YACE_UPDATE_SNAPSHOTS=1 cargo test -p yace-lab --test pages`. The
//! page is also checked for what a reader needs (charts against the
//! parameter, error bars, the fit and the knee, the verdicts, each run
//! linked) and for what it must not do (fetch anything, leave English on a
//! Chinese page). How it looks: `tests/browser/report.py`.

use report::lang::Lang;
use serde_json::Value;
use std::path::{Path, PathBuf};
use yace_lab::analysis::{self, Analysis, RunFigures};
use yace_lab::state::{Run, State};
use yace_lab::{compare, html, render};

const FIXTURES: [&str; 2] = ["concurrency", "before-after"];

fn here() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

fn result(path: &Path) -> Result<yace_stats::RunResult, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn experiment(name: &str) -> (State, Analysis) {
    let dir = here().join("fixtures").join(name);
    let state = State::load(&dir).unwrap();
    let a = analysis::analyze(&state, |rel| result(&dir.join(rel)));
    assert!(a.problems.is_empty(), "{name}: {:?}", a.problems);
    (state, a)
}

/// Each run's page where `yace lab report -F html` writes it.
fn link(lang: Lang) -> impl Fn(&Run) -> Option<String> {
    move |r: &Run| Some(html::run_page(r.result.as_ref()?, lang))
}

fn page(state: &State, a: &Analysis, lang: Lang) -> String {
    let mut out = Vec::new();
    html::page(&mut out, state, a, &link(lang), lang).unwrap();
    String::from_utf8(out).unwrap()
}

/// The page without its inlined styles and libraries (the same for every
/// page, and looked at by the browser test): its own markup and chart data.
fn markup_only(page: &str) -> String {
    let mut out = String::new();
    let mut rest = page;
    loop {
        let style = rest.find("<style>").map(|at| (at, "<style>", "</style>"));
        let script = rest
            .find("<script>")
            .map(|at| (at, "<script>", "</script>"));
        let Some((at, open, close)) = [style, script].into_iter().flatten().min() else {
            break;
        };
        let end = at + rest[at..].find(close).expect("closed");
        out.push_str(&rest[..at + open.len()]);
        out.push('…');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Compares (or, when asked, updates) one snapshot; returns a complaint.
fn check(name: &str, got: &str) -> Option<String> {
    let path = here().join("snapshots").join(name);
    if std::env::var_os("YACE_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return None;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if want == got {
        return None;
    }
    let line = want
        .lines()
        .zip(got.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| want.lines().count().min(got.lines().count()));
    Some(format!(
        "{name} differs from its snapshot at line {}:\n  want: {:?}\n  got:  {:?}",
        line + 1,
        want.lines().nth(line).unwrap_or("<end>"),
        got.lines().nth(line).unwrap_or("<end>")
    ))
}

/// One side of `yace compare`: each result's `METHOD URL` and figures.
type Side = Vec<(String, RunFigures)>;

/// The before/after's runs as `yace compare before… -- after…` reads them.
fn sides() -> (Side, Side) {
    let dir = here().join("fixtures/before-after");
    let state = State::load(&dir).unwrap();
    let side = |target: usize| -> Side {
        let mut runs: Vec<&Run> = state.runs.iter().filter(|r| r.target == target).collect();
        runs.sort_by_key(|r| r.block);
        runs.iter()
            .enumerate()
            .map(|(i, r)| {
                let res = result(&dir.join(r.result.as_ref().unwrap())).unwrap();
                let key = format!("{} {}", res.plan.request.method, res.plan.target.url);
                (key, RunFigures::of(i as u32 + 1, &res))
            })
            .collect()
    };
    (side(0), side(1))
}

#[test]
fn every_report_matches_its_snapshot() {
    let mut bad = Vec::new();
    for name in FIXTURES {
        let (state, a) = experiment(name);
        for (lang, tag) in [(Lang::En, ""), (Lang::Zh, ".zh")] {
            let outputs = [
                ("txt", render::text_in(&state, &a, lang)),
                ("md", render::markdown_in(&state, &a, lang)),
                ("html", markup_only(&page(&state, &a, lang))),
            ];
            for (ext, got) in outputs {
                bad.extend(check(&format!("{name}{tag}.{ext}"), &got));
            }
        }
        bad.extend(check(&format!("{name}.csv"), &render::csv(&state, &a)));
    }
    let (before, after) = sides();
    let t = compare::table(&before, &after, 0.02);
    for (lang, tag) in [(Lang::En, ""), (Lang::Zh, ".zh")] {
        bad.extend(check(
            &format!("compare{tag}.txt"),
            &compare::text_in(&t, before.len(), after.len(), lang),
        ));
        bad.extend(check(
            &format!("compare{tag}.md"),
            &compare::markdown_in(&t, before.len(), after.len(), lang),
        ));
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn english_is_as_before() {
    // The English reports are the renderers' without a language.
    for name in FIXTURES {
        let (state, a) = experiment(name);
        assert_eq!(
            render::text(&state, &a),
            render::text_in(&state, &a, Lang::En)
        );
        assert_eq!(
            render::markdown(&state, &a),
            render::markdown_in(&state, &a, Lang::En)
        );
    }
}

/// The charts the page's script draws.
fn charts(page: &str) -> Vec<Value> {
    let at = page.find("id=\"yace-charts\">").unwrap() + "id=\"yace-charts\">".len();
    let end = at + page[at..].find("</script>").unwrap();
    let doc: Value = serde_json::from_str(&page[at..end].replace("<\\/", "</")).unwrap();
    doc["charts"].as_array().unwrap().clone()
}

fn chart<'a>(charts: &'a [Value], id: &str) -> &'a Value {
    charts
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no chart {id}"))
}

#[test]
fn a_sweep_is_drawn_against_its_parameter() {
    let (state, a) = experiment("concurrency");
    let p = page(&state, &a, Lang::En);
    let cs = charts(&p);
    let ids: Vec<&str> = cs.iter().map(|c| c["id"].as_str().unwrap()).collect();
    // p99 even from 1 s runs (its interval says how sure); no errors: said.
    assert_eq!(ids, ["lab-throughput", "lab-p50", "lab-p99", "lab-cpu"]);
    assert!(!p.contains("No p99: a run needs 10,000 responses"));
    assert!(p.contains("No errors in any run."));
    let thr = chart(&cs, "lab-throughput");
    assert_eq!(thr["kind"], "sweep");
    assert_eq!(thr["axis"], "connections");
    // 1–32 spans more than 10×, doubling: a log axis, on at first.
    assert_eq!(thr["log"], true);
    assert!(p.contains("data-log=\"lab-throughput\" checked"));
    let series = thr["series"].as_array().unwrap();
    let labels: Vec<&str> = series
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "small-pool",
            "big-pool",
            "small-pool — USL fit",
            "big-pool — USL fit"
        ]
    );
    // Each repetition a dot at each measured connection count; the fitted
    // curve also between them.
    let x = thr["x"].as_array().unwrap();
    assert!(x.len() > 40, "{}", x.len());
    let dots: usize = series[0]["dots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_array().unwrap().len())
        .sum();
    assert_eq!(dots, 6 * 3);
    assert!(series[2]["values"]
        .as_array()
        .unwrap()
        .iter()
        .all(Value::is_f64));
    // Three runs give no exact 95% interval of a median: no error bars.
    assert!(series[0].get("err_lo").is_none());
    // The knees, where the analysis found them: at the pools' sizes.
    let marks: Vec<f64> = thr["marks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["x"].as_f64().unwrap())
        .collect();
    assert_eq!(marks, [8.0, 16.0]);
    // The table behind the chart has the measured points only.
    let table = &p[p.find("id=\"chart-lab-throughput\"").unwrap()..];
    let table = &table[..table.find("</figure>").unwrap()];
    assert_eq!(table.matches("<tr><th>").count(), 1 + 6, "{table}");
}

#[test]
fn a_before_and_after_is_a_dot_plot_with_error_bars_and_a_verdict() {
    let (state, a) = experiment("before-after");
    let p = page(&state, &a, Lang::En);
    let cs = charts(&p);
    let thr = chart(&cs, "lab-throughput");
    assert_eq!(thr["kind"], "groups");
    assert_eq!(thr["ticks"], serde_json::json!(["before", "after"]));
    for (i, s) in thr["series"].as_array().unwrap().iter().enumerate() {
        // Each target in its own column: its median, its interval, its runs.
        assert!(s["values"][i].is_f64() && s["values"][1 - i].is_null());
        let (lo, hi) = (
            s["err_lo"][i].as_f64().unwrap(),
            s["err_hi"][i].as_f64().unwrap(),
        );
        let median = s["values"][i].as_f64().unwrap();
        assert!(lo <= median && median <= hi, "{lo} {median} {hi}");
        assert_eq!(s["dots"][i].as_array().unwrap().len(), 6);
    }
    // The verdict: a word, coloured by its class, and the sentence.
    assert!(p.contains("<span class=\"verdict-word better\">better</span>"));
    assert!(p.contains("higher throughput (95% CI"));
    // Without scripts, the table behind the chart says the same.
    assert!(p.contains("<tr><th>before</th><td>511."), "{p}");
}

#[test]
fn every_run_is_linked_to_its_own_report() {
    for name in FIXTURES {
        let (state, a) = experiment(name);
        for lang in [Lang::En, Lang::Zh] {
            let p = page(&state, &a, lang);
            let links: Vec<&str> = p
                .split("<a href=\"")
                .skip(1)
                .map(|s| &s[..s.find('"').unwrap()])
                .collect();
            assert_eq!(links.len(), state.runs.len(), "{name}");
            for (l, r) in links.iter().zip(&state.runs) {
                assert!(l.starts_with("runs/") && l.ends_with(".html"), "{l}");
                // Beside a result of the experiment.
                let json = l.replace(".zh.html", ".json").replace(".html", ".json");
                assert!(
                    here().join("fixtures").join(name).join(&json).exists(),
                    "{l}"
                );
                assert_eq!(lang == Lang::Zh, l.ends_with(".zh.html"));
                let _ = r;
            }
        }
    }
}

#[test]
fn the_page_fetches_nothing() {
    for name in FIXTURES {
        let (state, a) = experiment(name);
        let p = page(&state, &a, Lang::En).to_lowercase();
        assert!(p.contains("default-src 'none'"));
        for bad in [
            " src=",
            "@import",
            "url(",
            "<link",
            "<iframe",
            "<img",
            "fetch(",
            "xmlhttprequest",
        ] {
            assert!(!p.contains(bad), "{name}: {bad}");
        }
        // Its only addresses are its runs' pages, beside it.
        for href in p.split(" href=\"").skip(1) {
            assert!(
                href.starts_with("runs/"),
                "{name}: {}",
                &href[..40.min(href.len())]
            );
        }
    }
}

#[test]
fn a_chinese_page_leaves_no_english_behind() {
    for name in FIXTURES {
        let (state, a) = experiment(name);
        let p = page(&state, &a, Lang::Zh);
        assert!(p.contains("<html lang=\"zh-CN\">"));
        // What a reader sees: the markup's text and the charts' words.
        let mut body = markup_only(&p);
        while let Some(at) = body.find("<script") {
            let end = at + body[at..].find("</script>").unwrap();
            body.replace_range(at..end, "");
        }
        let mut text = String::new();
        let mut inside = false;
        for ch in body.chars() {
            match ch {
                '<' => inside = true,
                '>' => {
                    inside = false;
                    text.push(' ');
                }
                c if !inside => text.push(c),
                _ => {}
            }
        }
        for c in charts(&p) {
            text.push_str(&format!(" {} {}", c["title"], c["note"]));
            for s in c["series"].as_array().unwrap() {
                text.push_str(&format!(" {}", s["label"]));
            }
            for m in c["marks"].as_array().into_iter().flatten() {
                text.push_str(&format!(" {}", m["label"]));
            }
        }
        for english in [
            "Throughput",
            "Latency",
            "Errors",
            "Server CPU",
            "Compared",
            "compared",
            "runs",
            "repetition",
            "median",
            "samples",
            "knee",
            "better",
            "worse",
            "too few",
            "Per point",
            "Notes",
            "Charts",
            "show data",
            "points",
            "targets",
            "seed",
            "order",
            "done",
            "skipped",
            "failed",
            "baseline",
            "threshold",
            "Scalability",
            "coherency",
            "contention",
            "per client",
            "fit",
            "Each",
            "higher",
            "interval",
        ] {
            assert!(!text.contains(english), "{name}: {english:?} in {text}");
        }
        let t = render::text_in(&state, &a, Lang::Zh);
        for english in [
            "runs",
            "median",
            "Compared",
            "samples",
            "knee",
            "Scalability",
        ] {
            assert!(!t.contains(english), "{name}: {english:?} in {t}");
        }
    }
}
