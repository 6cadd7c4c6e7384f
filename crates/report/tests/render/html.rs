//! The HTML report: it holds its results whole (read back equal), fetches
//! nothing, and stays small for long runs (synthetic one-hour and 24-hour
//! results). How it looks is checked in a browser by
//! `tests/browser/report.py` (scripts/test.sh runs it).

use super::{fixture, render, FIXTURES};
use stats::RunResult;
use yace_report::html;

/// The page as its snapshot keeps it: the inlined libraries and the
/// embedded results (checked by other tests) left out, so a change to the
/// page's structure or text reads as a diff.
pub(crate) fn readable(page: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(page.to_vec()).expect("UTF-8");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("<script") {
        let head_end = at + rest[at..].find('>').expect("a script head ends");
        out.push_str(&rest[..=head_end]);
        let body_end = head_end + rest[head_end..].find("</script>").expect("a script ends");
        let head = &rest[at..=head_end];
        if head.contains("yace-charts") {
            out.push_str(&rest[head_end + 1..body_end]);
        } else {
            out.push('…');
        }
        rest = &rest[body_end..];
    }
    out.push_str(rest);
    // The stylesheets too: the browser test looks at them.
    let mut kept = String::with_capacity(out.len());
    let mut rest = out.as_str();
    if let (Some(a), Some(b)) = (rest.find("<style>"), rest.find("</style>")) {
        kept.push_str(&rest[..a + "<style>".len()]);
        kept.push('…');
        rest = &rest[b..];
    }
    kept.push_str(rest);
    kept.into_bytes()
}

fn same(a: &RunResult, b: &RunResult) -> bool {
    serde_json::to_value(a).unwrap() == serde_json::to_value(b).unwrap()
}

#[test]
fn a_page_holds_its_results_whole() {
    for name in FIXTURES {
        let r = fixture(name);
        let page = String::from_utf8(render(|w| html::report(&r, w))).unwrap();
        let back = html::embed::read(&page).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back.len(), 1, "{name}");
        assert!(same(&back[0].1, &r), "{name} reads back changed");
    }
    let runs: Vec<(String, RunResult)> = ["open", "closed"]
        .iter()
        .map(|n| (format!("runs/{n} <\"1\">.json"), fixture(n)))
        .collect();
    let page = String::from_utf8(render(|w| html::page(&runs, w))).unwrap();
    let back = html::embed::read(&page).unwrap();
    assert_eq!(back.len(), 2);
    for ((label, r), (want_label, want)) in back.iter().zip(&runs) {
        assert_eq!(label, want_label, "labels survive escaping");
        assert!(same(r, want));
    }
}

#[test]
fn a_damaged_page_is_refused_with_a_reason() {
    let r = fixture("open");
    let page = String::from_utf8(render(|w| html::report(&r, w))).unwrap();
    let err = html::embed::read("<html><body>hello</body></html>").unwrap_err();
    assert!(err.contains("holds no yace result"), "{err}");
    // One character of the embedded data changed: not silently accepted.
    let at = page.find("application/x-yace-result").unwrap();
    let start = at + page[at..].find('>').unwrap() + 20;
    let mut bad = page.clone();
    bad.replace_range(start..start + 4, "!!!!");
    assert!(html::embed::read(&bad).is_err());
    // Cut short.
    assert!(html::embed::read(&page[..start + 100]).is_err());
}

#[test]
fn a_page_fetches_nothing() {
    for name in FIXTURES {
        let r = fixture(name);
        let page = String::from_utf8(render(|w| html::report(&r, w))).unwrap();
        let lower = page.to_lowercase();
        for bad in [
            " src=", " href=", "@import", "url(", "<link", "<iframe", "<img",
        ] {
            assert!(!lower.contains(bad), "{name}: the page has {bad:?}");
        }
        for needle in [
            "fetch(",
            "xmlhttprequest",
            "websocket",
            "sendbeacon",
            "eventsource",
        ] {
            assert!(!lower.contains(needle), "{name}: the page has {needle:?}");
        }
        // And the page says so to the browser, too.
        assert!(page.contains("default-src 'none'"), "{name}: no CSP");
    }
}

/// A tiny deterministic generator (no dependency, same rows every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Roughly normal around `mean`.
    fn around(&mut self, mean: f64, spread: f64) -> f64 {
        let s: f64 = (0..4).map(|_| self.next()).sum::<f64>() - 2.0;
        mean + s * spread
    }
}

/// `seconds` of a busy open-model run: noisy rates and latencies (as
/// recorded: coarse histogram values), lag, client CPU, in-flight, and a
/// one-second stall every hour.
pub(crate) fn synthetic(seconds: u64) -> RunResult {
    let mut r = fixture("levels");
    let mut g = Lcg(7);
    let template = r.series[1].clone();
    let coarse = |v: f64| {
        let v = v.max(1.0) as u64;
        let shift = (64 - v.leading_zeros()).saturating_sub(7);
        (((v >> shift) << shift) + (1 << shift) - 1) as f64
    };
    r.series = (0..seconds)
        .map(|s| {
            let mut row = template.clone();
            let stall = s % 3600 == 1800;
            let n = if stall { 3.0 } else { g.around(2000.0, 40.0) } as u64;
            row.second = s;
            row.responses = n;
            row.status_2xx = n;
            row.bytes_in = n * 103;
            row.bytes_out = n * 88;
            let base = if stall { 900_000.0 } else { 6_800.0 };
            row.latency_mean_us = (g.around(base, 150.0) * 10.0).round() / 10.0;
            row.latency_p50_us = coarse(g.around(base, 120.0));
            row.latency_p90_us = coarse(g.around(base * 1.08, 150.0));
            row.latency_p99_us = coarse(g.around(base * 1.15, 250.0));
            row.latency_max_us = coarse(g.around(base * 1.5, 900.0));
            row.in_flight = (g.around(13.0, 2.0) * 100.0).round() / 100.0;
            row.client_cpu_s = (g.around(0.2, 0.01) * 1e6).round() / 1e6;
            row.lag_p99_us = Some(coarse(g.around(1_100.0, 60.0)));
            row.lag_max_us = Some(coarse(g.around(3_000.0, 500.0)));
            row
        })
        .collect();
    r.summary.duration_s = seconds as f64;
    r
}

#[test]
fn long_runs_stay_small_and_keep_their_stalls() {
    for (seconds, limit) in [(3_600u64, 1_000_000usize), (86_400, 3_000_000)] {
        let r = synthetic(seconds);
        let page = render(|w| html::report(&r, w));
        assert!(
            page.len() < limit,
            "{seconds} s: {} bytes, over {limit}",
            page.len()
        );
        eprintln!("{seconds} s of series: a {} KB page", page.len() / 1024);
        let text = String::from_utf8(page).unwrap();
        // Drawn from at most MAX_POINTS points, and the 900 ms stall of a
        // single second is still among them (each point the highest).
        let charts = &text[text.find("id=\"yace-charts\"").unwrap()..];
        assert!(stall_visible(charts), "{seconds} s: the stall is drawn");
        let back = html::embed::read(&text).unwrap();
        assert!(same(&back[0].1, &r), "{seconds} s reads back whole");
    }
}

/// The latency chart's p99 line holds a value of the stall's size.
fn stall_visible(charts: &str) -> bool {
    let doc: serde_json::Value = {
        let start = charts.find('>').unwrap() + 1;
        let end = charts.find("</script>").unwrap();
        serde_json::from_str(&charts[start..end].replace("<\\/", "</")).unwrap()
    };
    let latency = doc["charts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "latency")
        .unwrap();
    let x = latency["x"].as_array().unwrap();
    assert!(x.len() <= 1500, "{} points", x.len());
    let p99 = latency["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == "p99")
        .unwrap();
    p99["values"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_f64())
        .any(|v| v > 500_000.0)
}

/// The `monitor` section (--monitor) is carried whole in the page, and
/// the page shows it: the figures and diagnoses at the top (a problem in
/// the verdict too), the sources with the dropped one marked, and one
/// chart per figure of each source on the run's time axis, each with its
/// table.
#[test]
fn a_page_shows_and_holds_the_server_side() {
    for name in ["monitor", "monitor-php"] {
        let r = fixture(name);
        let m = r.monitor.as_ref().expect("a monitored run");
        let page = String::from_utf8(render(|w| html::report(&r, w))).unwrap();
        let back = html::embed::read(&page).unwrap();
        assert_eq!(
            back[0].1.monitor.as_ref(),
            Some(m),
            "{name}: monitor read back"
        );

        let verdict = &page[page.find("class=\"verdict").unwrap()..];
        let verdict = &verdict[..verdict.find("</section>").unwrap()];
        for d in m.diagnoses.iter().filter(|d| d.severity == "problem") {
            let message = d.message.replace('\'', "&apos;");
            assert!(verdict.contains(&message), "{name}: {message} in {verdict}");
            assert!(
                page.contains(&d.fix.replace('\'', "&apos;")),
                "{name}: its fix"
            );
        }
        assert!(page.contains("<section class=\"server-head\">"), "{name}");
        assert!(page.contains("<section class=\"server\">"), "{name}");
        let server = &page[page.find("<section class=\"server\">").unwrap()..];
        let server = &server[..server.find("<section class=\"details\">").unwrap()];
        for s in &m.sources {
            assert!(
                server.contains(&format!("<code>{}</code>", s.spec)),
                "{name}: {}",
                s.spec
            );
        }

        let charts: serde_json::Value = {
            let at = page.find("id=\"yace-charts\">").unwrap() + "id=\"yace-charts\">".len();
            let end = at + page[at..].find("</script>").unwrap();
            serde_json::from_str(&page[at..end].replace("<\\/", "</")).unwrap()
        };
        let server_charts: Vec<&serde_json::Value> = charts["charts"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["id"].as_str().unwrap().starts_with("server-"))
            .collect();
        for c in &server_charts {
            let id = c["id"].as_str().unwrap();
            assert_eq!(c["kind"], "time", "{id}: on the run's time axis");
            assert!(
                server.contains(&format!("data-chart=\"{id}\"")),
                "{id}: its place"
            );
            // Drawn on its source's own sample times.
            let k: usize = id.split('-').nth(1).unwrap().parse().unwrap();
            let t: Vec<f64> = m.sources[k - 1].t.clone();
            let x: Vec<f64> = c["x"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            assert_eq!(x, t, "{id}");
        }
        let ids: Vec<&str> = server_charts
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        match name {
            "monitor" => {
                assert_eq!(
                    ids,
                    [
                        "server-1-cpu",
                        "server-1-load",
                        "server-1-memory",
                        "server-1-tcp",
                        "server-2-cpu",
                        "server-2-processes"
                    ]
                );
            }
            _ => {
                for want in ["server-3-nginx", "server-4-pool", "server-5-metrics"] {
                    assert!(ids.contains(&want), "{want} in {ids:?}");
                }
                // The dropped source is marked, with why.
                assert!(
                    server.contains("<tr class=\"source dropped\">"),
                    "dropped row"
                );
                assert!(
                    server.contains("<tr class=\"why dropped\"><td></td><td class=\"text fail\" colspan=\"5\">dropped after 3 failed"),
                    "its error"
                );
                // pm.max_children reached: marked on the pool's chart.
                let pool = server_charts
                    .iter()
                    .find(|c| c["id"] == "server-4-pool")
                    .unwrap();
                let marks = pool["series"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|s| s["points"] == true)
                    .expect("max_children marked");
                assert!(marks["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|v| !v.is_null()));
                // A failed read is a gap (null), not a zero.
                let prom = server_charts
                    .iter()
                    .find(|c| c["id"] == "server-5-metrics")
                    .unwrap();
                let v = prom["series"][0]["values"].as_array().unwrap();
                assert!(v.last().unwrap().is_null(), "{v:?}");
            }
        }
    }
}

/// Several monitored runs on one page: each run's server figures and
/// charts in its own section, no chart id twice, and each run read back
/// with its monitor section.
#[test]
fn a_comparison_of_monitored_runs_keeps_each_servers_side() {
    let runs: Vec<(String, RunResult)> = ["monitor", "monitor-php"]
        .iter()
        .map(|n| (format!("{n}.json"), fixture(n)))
        .collect();
    let page = String::from_utf8(render(|w| html::page(&runs, w))).unwrap();
    assert_eq!(page.matches("<section class=\"server-head\">").count(), 2);
    assert_eq!(page.matches("<section class=\"server\">").count(), 2);
    let ids: Vec<&str> = page
        .match_indices("data-chart=\"")
        .map(|(at, m)| {
            let rest = &page[at + m.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
    assert!(ids.contains(&"run1-server-2-cpu") && ids.contains(&"run2-server-4-pool"));
    let back = html::embed::read(&page).unwrap();
    for ((_, got), (_, want)) in back.iter().zip(&runs) {
        assert!(got.monitor.is_some() && same(got, want));
    }
}

/// The series `label` of chart `id` in a rendered page.
fn series(page: &str, id: &str, label: &str) -> Vec<Option<f64>> {
    let at = page.find("id=\"yace-charts\">").unwrap() + "id=\"yace-charts\">".len();
    let end = at + page[at..].find("</script>").unwrap();
    let charts: serde_json::Value =
        serde_json::from_str(&page[at..end].replace("<\\/", "</")).unwrap();
    let chart = charts["charts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no chart {id}"));
    let s = chart["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == label)
        .unwrap_or_else(|| panic!("{id}: no series {label}"));
    s["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64())
        .collect()
}

#[test]
fn a_shards_report_offers_its_part_and_says_which_it_is() {
    let whole = fixture("open");
    let mut part = whole.clone();
    part.plan.shard = Some(plan::Shard::new(1, 4).unwrap());
    let page = |r: &RunResult| String::from_utf8(render(|w| html::report(r, w))).unwrap();
    let (p_whole, p_part) = (page(&whole), page(&part));
    let offered = |p: &str| series(p, "throughput", "offered rate (planned)");
    let (w, s) = (offered(&p_whole), offered(&p_part));
    assert!(w.iter().flatten().count() > 0);
    for (w, s) in w.iter().zip(&s) {
        assert_eq!(w.map(|w| w / 4.0), *s, "a quarter of the plan's rate");
    }
    assert!(!p_whole.contains("shard 1/4"));
    assert!(
        p_part.contains(" · shard 1/4, its part: up to "),
        "the model line says it"
    );
}
