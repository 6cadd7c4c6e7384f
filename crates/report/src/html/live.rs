//! The live page of a run still going (`yace run --dashboard`, issue
//! #18): the report's time charts of the seconds finished so far, drawn
//! by the report's own script, and kept current by the page's stream
//! (`assets/live.js`, fed by the `yace-dashboard` server). When the run
//! ends, the stream brings the report itself ([`super::report_in`] of the
//! final result), which the page saves or turns into.
//!
//! Only the time charts are live: the spectrum, the histogram and the
//! phases need the run's whole histograms, which exist once it has ended
//! (the report it brings has them). Pure like every renderer: the server
//! hands it the plan and the rows, and serves what it writes.

use super::data::{self, Chart, Seconds};
use super::{chart_data, clock, esc, figure_head, head_with, mark, marks, scripts_with};
use crate::fmt::{count, duration_us};
use crate::lang::{fill, tr, Lang};
use crate::text::end_in;
use plan::{Load, Plan};
use serde_json::{json, Value};
use stats::{RunResult, SecondRow};
use std::io::{self, Write};

const LIVE_JS: &str = include_str!("../../assets/live.js");
const CONTROL_JS: &str = include_str!("../../assets/live-control.js");

/// The page's controls (`--dashboard-control`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Controls {
    /// Read-only: no controls, and no script that could send one.
    #[default]
    Off,
    /// Buttons that steer, and where the steering stands now; `users`:
    /// they steer the number of users (the field takes users, not a rate).
    On { now: String, users: bool },
    /// Control was asked for, but this run cannot be steered: why.
    Unavailable(String),
}

/// What the live page may load: nothing but its own stream (the report's
/// policy, plus `connect-src 'self'`).
pub const CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; \
                       style-src 'unsafe-inline'; img-src data:; connect-src 'self'";

/// A run as the live page shows it.
#[derive(Debug, Clone, Copy)]
pub struct Live<'a> {
    /// The plan as outputs show it (redacted).
    pub plan: &'a Plan,
    /// The seconds finished so far.
    pub series: &'a [SecondRow],
    /// The client's worker threads, and the CPUs it may use.
    pub threads: usize,
    pub cpus_allowed: usize,
    /// The planned length (`-d`, or the stages'), seconds.
    pub planned_s: Option<f64>,
    /// The planned number of requests (`-n`).
    pub planned_requests: Option<u64>,
    /// The result, once the run has ended: its rows are then the rows.
    pub ended: Option<&'a RunResult>,
}

impl<'a> Live<'a> {
    fn seconds(&self) -> Seconds<'a> {
        match self.ended {
            Some(r) => Seconds::of(r),
            None => Seconds {
                series: self.series,
                load: &self.plan.load,
                dropped: self.series.iter().any(|r| r.dropped > 0),
                scheduled: !matches!(self.plan.load, Load::Closed { .. }),
                threads: self.threads,
                cpus_allowed: self.cpus_allowed,
                steering: None,
                part: self.plan.part(),
            },
        }
    }

    fn rows(&self) -> &'a [SecondRow] {
        self.ended.map_or(self.series, |r| &r.series)
    }
}

/// The page's words that the report does not have, in Chinese.
fn zh(en: &str) -> Option<&'static str> {
    Some(match en {
        "yace live page" => "yace 实时页面",
        "Running: {} of {}" => "运行中：{} / {}",
        "Running: {}" => "运行中：{}",
        "{} of {} requests done" => "已完成 {} / {} 个请求",
        "{} requests done" => "已完成 {} 个请求",
        "Ended after {} s: {}." => "{} 秒后结束：{}。",
        "The run has ended." => "运行已结束。",
        "Save the report" => "保存报告",
        "Show the report here" => "在此显示报告",
        "The report is the page --html writes, made from the final result: every chart and figure of the run, readable offline." => "报告即 --html 写出的页面，由最终结果生成：本次运行的全部图表和数字，可离线阅读。",
        "The stream stopped: yace has ended or cannot be reached. The page keeps what it received." => "数据流已停止：yace 已结束或无法连接。页面保留已收到的内容。",
        "Rates, latencies, in flight and CPU: the last whole second; counts: since the start. Updated every second while the run lasts." => "速率、延迟、在途请求和 CPU：最近一整秒；计数：自开始以来。运行期间每秒更新。",
        "Scripts are off: these are the figures of when the page was loaded; reload it for newer ones." => "脚本已关闭：这里是页面加载时的数字，刷新页面可看到更新的数字。",
        "The HTML report's time charts, as the run goes. Hover a chart for exact values; the time charts share one cursor. Click a legend entry to hide its line." => "HTML 报告中的时间图，随运行更新。鼠标悬停可查看精确数值；各时间图共用一个光标。点击图例可隐藏对应的线。",
        "Served by yace {} while the run lasts. The page talks only to the yace that serves it (one stream of updates) and fetches nothing else. The latency spectrum, histogram and phases come with the report, at the end." => "由 yace {} 在运行期间提供。页面只与提供它的 yace 通信（一条更新流），不获取其他任何内容。延迟分布、直方图和各阶段图随最后的报告一起提供。",
        "Charts drawn with uPlot 1.6.32 (MIT licence, © Leon Sorokin), inlined." => "图表由 uPlot 1.6.32 绘制（MIT 许可，© Leon Sorokin），已内联。",
        "Steer the run" => "调整负载",
        "Pause / resume" => "暂停 / 继续",
        "Set the rate" => "设定速率",
        "Set the users" => "设定用户数",
        "requests/s" => "请求/秒",
        "Now:" => "当前：",
        "Each change takes effect 0.2 s after it is asked for, and the result records it (the run is then marked as steered)." => "每次调整在请求后 0.2 秒生效，并记录在结果中（本次运行随即标记为已调整）。",
        "This run cannot be steered from the page: {}" => "本次运行无法从页面调整：{}",
        _ => return None,
    })
}

/// `en` in `lang`: the page's own words, else the report's.
fn t(lang: Lang, en: &'static str) -> &'static str {
    match lang {
        Lang::Zh => zh(en).unwrap_or_else(|| tr(lang, en)),
        Lang::En => en,
    }
}

fn tf(lang: Lang, en: &'static str, args: &[&dyn std::fmt::Display]) -> String {
    fill(t(lang, en), args)
}

/// The time charts of the seconds so far: the report's (as many points at
/// most), and once the run has ended, the very charts its report draws
/// over time (its markers on them).
pub fn charts(l: &Live, lang: Lang) -> Vec<Chart> {
    let mut charts = data::time_charts_of(&[l.seconds()], data::MAX_POINTS, lang);
    if let Some(r) = l.ended {
        let runs = [(String::new(), r.clone())];
        mark(charts.iter_mut(), &marks(&runs, lang));
    }
    charts
}

/// A chart's figure as the page holds it (the report's, without the
/// table), for a chart the page did not have when it was loaded.
pub fn figure(c: &Chart, lang: Lang) -> String {
    let mut w = Vec::new();
    figure_head(&mut w, c, lang).expect("writes to memory");
    w.extend_from_slice(b"</figure>\n");
    String::from_utf8(w).expect("UTF-8")
}

/// How far the run is, in a line.
fn status(l: &Live, lang: Lang) -> String {
    if let Some(r) = l.ended {
        return tf(
            lang,
            "Ended after {} s: {}.",
            &[&format!("{:.1}", r.summary.duration_s), &end_in(r, lang)],
        );
    }
    let elapsed = clock(l.series.len() as f64);
    let done: u64 = l.series.iter().map(|r| r.responses + r.errors).sum();
    let time = match l.planned_s {
        Some(p) => tf(lang, "Running: {} of {}", &[&elapsed, &clock(p)]),
        None => tf(lang, "Running: {}", &[&elapsed]),
    };
    let requests = match l.planned_requests {
        Some(n) => tf(lang, "{} of {} requests done", &[&count(done), &count(n)]),
        None => tf(lang, "{} requests done", &[&count(done)]),
    };
    format!("{time} · {requests}")
}

/// The figures above the charts: the last whole second's rates and
/// latencies, and the counts so far.
fn cards(l: &Live, lang: Lang) -> Vec<(&'static str, String)> {
    let rows = l.rows();
    // The newest whole second (a run's last sliver of a second would read
    // as a collapse).
    let last = rows.iter().rev().find(|r| r.length_s >= 0.5);
    let responses: u64 = rows.iter().map(|r| r.responses).sum();
    let errors: u64 = rows.iter().map(|r| r.errors).sum();
    let per_s = |n: f64, r: &SecondRow| n / r.length_s.max(1e-9);
    let or_dash = |v: Option<String>| v.unwrap_or_else(|| "—".into());
    let latency = |f: fn(&SecondRow) -> f64| {
        or_dash(last.filter(|r| r.responses > 0).map(|r| duration_us(f(r))))
    };
    vec![
        (
            tr(lang, "responses/s"),
            or_dash(last.map(|r| format!("{:.1}", per_s(r.responses as f64, r)))),
        ),
        (tr(lang, "responses"), count(responses)),
        (
            tr(lang, "errors"),
            format!(
                "{} ({:.2}%)",
                count(errors),
                errors as f64 * 100.0 / (responses + errors).max(1) as f64
            ),
        ),
        ("p50", latency(|r| r.latency_p50_us)),
        ("p99", latency(|r| r.latency_p99_us)),
        (tr(lang, "max"), latency(|r| r.latency_max_us)),
        (
            tr(lang, "in flight"),
            or_dash(last.map(|r| format!("{:.1}", r.in_flight))),
        ),
        (
            tr(lang, "client CPU (cores)"),
            or_dash(last.map(|r| format!("{:.2}", per_s(r.client_cpu_s, r)))),
        ),
    ]
}

/// What the page shows besides the charts, for its script:
/// `{"status", "cards": [[name, value]…], "ended"}`.
pub fn state(l: &Live, lang: Lang) -> Value {
    json!({
        "status": status(l, lang),
        "cards": cards(l, lang).into_iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        "ended": l.ended.is_some(),
    })
}

/// The name the page saves the report as: `yace-2026-11-27T10-00-00Z.html`.
pub fn file_name(r: &RunResult) -> String {
    let stamp: String = r
        .started_at
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("yace-{stamp}.html")
}

/// Writes the live page as it is now. Its script follows the stream at
/// `events` beside the page's own address (with the page's query: the
/// token, where one is needed), so the page holds no secret of its own.
pub fn page(w: impl Write, l: &Live, lang: Lang, version: &str) -> io::Result<()> {
    page_with(w, l, lang, version, &Controls::Off)
}

/// The steering section: buttons that post to `control` beside the page
/// (the token, from the page's own address, in a header), or why there
/// are none.
fn controls(mut w: impl Write, controls: &Controls, lang: Lang) -> io::Result<()> {
    match controls {
        Controls::Off => Ok(()),
        Controls::Unavailable(why) => writeln!(
            w,
            "<p class=\"verdict warn live-control\" id=\"yace-live-control\">{}</p>",
            esc(&tf(lang, "This run cannot be steered from the page: {}", &[why]))
        ),
        Controls::On { now, users } => writeln!(
            w,
            "<style>.verdict.live-control {{ border-color: #1f6fb4; background: #f1f7fd; }}\n\
             .live-control input {{ font: inherit; width: 8em; padding: 3px 6px; }}\n\
             .live-control .now {{ font-variant-numeric: tabular-nums; margin-top: 6px; }}</style>\n\
             <section class=\"verdict live-control\" id=\"yace-live-control\">\n\
             <p class=\"head\">{}</p>\n<p class=\"live-actions\">\
             <button type=\"button\" data-control=\"slower\">−10 %</button> \
             <button type=\"button\" data-control=\"faster\">+10 %</button> \
             <button type=\"button\" data-control=\"pause\">{}</button> \
             <input type=\"number\" id=\"yace-live-rate\" min=\"0\" step=\"any\" \
             aria-label=\"{}\"> {} \
             <button type=\"button\" id=\"yace-live-rate-set\">{}</button></p>\n\
             <p class=\"now\">{} <strong id=\"yace-live-now\">{}</strong></p>\n\
             <p class=\"now\" id=\"yace-live-steered\" role=\"status\"></p>\n\
             <p class=\"hint\">{}</p>\n</section>",
            t(lang, "Steer the run"),
            t(lang, "Pause / resume"),
            t(lang, if *users { "users" } else { "requests/s" }),
            t(lang, if *users { "users" } else { "requests/s" }),
            t(lang, if *users { "Set the users" } else { "Set the rate" }),
            t(lang, "Now:"),
            esc(now),
            t(lang, "Each change takes effect 0.2 s after it is asked for, and the result records it (the run is then marked as steered).")
        ),
    }
}

/// [`page`], with its controls (`--dashboard-control`).
pub fn page_with(
    mut w: impl Write,
    l: &Live,
    lang: Lang,
    version: &str,
    with: &Controls,
) -> io::Result<()> {
    let title = format!(
        "{} {} — {}",
        l.plan.request.method,
        l.plan.target.url,
        t(lang, "yace live page")
    );
    // An empty icon: the browser asks the server for nothing else.
    head_with(
        &mut w,
        lang,
        version,
        &title,
        CSP,
        "<link rel=\"icon\" href=\"data:,\">\n",
    )?;
    writeln!(
        w,
        "<header>\n<p class=\"kicker\">{}</p>\n<h1><span class=\"method\">{}</span> {}</h1>\n\
         <p class=\"live-status\" id=\"yace-live-status\" role=\"status\">{}</p>\n</header>",
        t(lang, "yace live page"),
        esc(&l.plan.request.method),
        esc(&l.plan.target.url),
        esc(&status(l, lang))
    )?;
    writeln!(
        w,
        "<section class=\"verdict ok live-end\" id=\"yace-live-end\" hidden>\n\
         <p class=\"head\">{}</p>\n<p>{}</p>\n<p class=\"live-actions\">\
         <a class=\"button\" id=\"yace-live-save\" download=\"yace-report.html\">{}</a> \
         <button type=\"button\" id=\"yace-live-show\">{}</button></p>\n</section>",
        t(lang, "The run has ended."),
        esc(t(lang, "The report is the page --html writes, made from the final result: every chart and figure of the run, readable offline.")),
        t(lang, "Save the report"),
        t(lang, "Show the report here")
    )?;
    writeln!(
        w,
        "<p class=\"verdict warn live-lost\" id=\"yace-live-lost\" hidden>{}</p>",
        t(lang, "The stream stopped: yace has ended or cannot be reached. The page keeps what it received.")
    )?;
    controls(&mut w, with, lang)?;
    writeln!(w, "<section class=\"headline\" id=\"yace-live-cards\">")?;
    for (k, v) in cards(l, lang) {
        writeln!(
            w,
            "<div class=\"card\"><div class=\"v\">{}</div><div class=\"k\">{}</div></div>",
            esc(&v),
            esc(k)
        )?;
    }
    writeln!(w, "</section>")?;
    writeln!(
        w,
        "<p class=\"hint\">{}</p>\n<noscript><p class=\"hint\">{}</p></noscript>",
        t(lang, "Rates, latencies, in flight and CPU: the last whole second; counts: since the start. Updated every second while the run lasts."),
        t(lang, "Scripts are off: these are the figures of when the page was loaded; reload it for newer ones.")
    )?;
    let charts = charts(l, lang);
    writeln!(
        w,
        "<section class=\"charts\" id=\"yace-live-charts\">\n<h2>{}</h2>\n<p class=\"hint\">{}</p>",
        tr(lang, "Charts"),
        t(lang, "The HTML report's time charts, as the run goes. Hover a chart for exact values; the time charts share one cursor. Click a legend entry to hide its line.")
    )?;
    for c in &charts {
        w.write_all(figure(c, lang).as_bytes())?;
    }
    writeln!(w, "</section>")?;
    writeln!(
        w,
        "<footer><p>{}</p><p>{}</p></footer>\n</main>",
        fill(
            t(lang, "Served by yace {} while the run lasts. The page talks only to the yace that serves it (one stream of updates) and fetches nothing else. The latency spectrum, histogram and phases come with the report, at the end."),
            &[&esc(version)]
        ),
        t(lang, "Charts drawn with uPlot 1.6.32 (MIT licence, © Leon Sorokin), inlined.")
    )?;
    chart_data(&mut w, &charts, lang)?;
    let control = match with {
        Controls::On { .. } => format!("<script>\n{CONTROL_JS}\n</script>\n"),
        _ => String::new(),
    };
    scripts_with(
        &mut w,
        &format!("<script>\n{LIVE_JS}\n</script>\n{control}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> RunResult {
        let path = format!(
            "{}/tests/render/fixtures/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    fn live<'a>(r: &'a RunResult, rows: usize, ended: bool) -> Live<'a> {
        Live {
            plan: &r.plan,
            series: &r.series[..rows],
            threads: r.client.threads,
            cpus_allowed: r.environment.cpus_allowed,
            planned_s: Some(10.0),
            planned_requests: None,
            ended: ended.then_some(r),
        }
    }

    /// The `#yace-charts` document of a page.
    fn charts_of(page: &str) -> Value {
        let at = page.find("id=\"yace-charts\">").unwrap() + "id=\"yace-charts\">".len();
        let end = at + page[at..].find("</script>").unwrap();
        serde_json::from_str(&page[at..end].replace("<\\/", "</")).unwrap()
    }

    #[test]
    fn at_the_end_the_live_charts_are_the_reports_time_charts() {
        for name in ["open", "closed", "scenario", "levels"] {
            let mut r = fixture(name);
            r.markers.push(stats::Marker {
                at_s: 1.0,
                note: "php-fpm restarted".into(),
            });
            let mut report = Vec::new();
            super::super::report(&r, &mut report).unwrap();
            let report = charts_of(&String::from_utf8(report).unwrap());
            let time: Vec<&Value> = report["charts"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["kind"] == "time" && !c["id"].as_str().unwrap().starts_with("server"))
                .collect();
            let n = r.series.len();
            let ours: Vec<Value> = charts(&live(&r, n, true), Lang::En)
                .iter()
                .map(Chart::to_json)
                .collect();
            assert_eq!(ours.len(), time.len(), "{name}");
            for (a, b) in ours.iter().zip(time) {
                assert_eq!(a, b, "{name}");
            }
        }
    }

    #[test]
    fn the_page_says_how_far_the_run_is_and_asks_only_its_stream() {
        let r = fixture("open");
        let mut out = Vec::new();
        page(&mut out, &live(&r, 2, false), Lang::En, "0.1.0").unwrap();
        let page = String::from_utf8(out).unwrap();
        assert!(page.contains("Running: 0:02 of 0:10 · "), "status");
        assert!(page.contains("connect-src 'self'"));
        assert_eq!(charts_of(&page)["charts"].as_array().unwrap().len(), 5);
        // What it may fetch: its stream, and nothing else by address.
        assert!(page.contains("new EventSource(\"events\" + location.search)"));
        let lower = page.to_lowercase();
        for bad in [
            " src=",
            "@import",
            "<iframe",
            "<img",
            "fetch(",
            "xmlhttprequest",
            "websocket",
        ] {
            assert!(!lower.contains(bad), "the page has {bad:?}");
        }
        // No stylesheet `url(…)`: the one `url(` is the saved report's blob.
        assert_eq!(
            lower.matches("url(").count(),
            lower.matches("createobjecturl(").count()
        );
        assert_eq!(lower.matches(" href=").count(), 1, "only the empty icon");
        assert!(page.contains("<link rel=\"icon\" href=\"data:,\">"));
        // Before the first second: no chart yet, the figures say so.
        let mut out = Vec::new();
        page_of(&mut out, &r, 0);
        let empty = String::from_utf8(out).unwrap();
        assert_eq!(charts_of(&empty)["charts"].as_array().unwrap().len(), 0);
        assert!(empty.contains("Running: 0:00 of 0:10 · 0 requests done"));
    }

    fn page_of(out: &mut Vec<u8>, r: &RunResult, rows: usize) {
        page(out, &live(r, rows, false), Lang::En, "0.1.0").unwrap();
    }

    #[test]
    fn controls_only_where_asked_for_and_the_reason_where_none() {
        let r = fixture("open");
        let with = |c: &Controls| {
            let mut out = Vec::new();
            page_with(&mut out, &live(&r, 2, false), Lang::En, "0.1.0", c).unwrap();
            String::from_utf8(out).unwrap()
        };
        let users = with(&Controls::On {
            now: "12 users".into(),
            users: true,
        });
        assert!(users.contains("data-control=\"faster\"") && users.contains("Set the users"));
        assert!(users.contains("<strong id=\"yace-live-now\">12 users</strong>"));
        assert!(users.contains("fetch(\"control\""), "the control script");
        let why = with(&Controls::Unavailable("a <shard>".into()));
        assert!(why.contains("cannot be steered from the page: a &lt;shard&gt;"));
        assert!(!why.contains("data-control=") && !why.contains("fetch("));
        assert_eq!(with(&Controls::Off), {
            let mut out = Vec::new();
            page(&mut out, &live(&r, 2, false), Lang::En, "0.1.0").unwrap();
            String::from_utf8(out).unwrap()
        });
    }

    #[test]
    fn its_words_read_in_chinese() {
        let r = fixture("open");
        let mut out = Vec::new();
        page(&mut out, &live(&r, 2, false), Lang::Zh, "0.1.0").unwrap();
        let page = String::from_utf8(out).unwrap();
        assert!(page.contains("lang=\"zh-CN\""));
        assert!(page.contains("yace 实时页面") && page.contains("运行中：0:02 / 0:10"));
        assert!(page.contains("保存报告"));
        let s = state(&live(&r, 2, true), Lang::Zh);
        assert!(s["status"].as_str().unwrap().contains("秒后结束"), "{s}");
    }

    #[test]
    fn the_figures_are_the_last_whole_seconds() {
        let r = fixture("open");
        let s = state(&live(&r, r.series.len(), false), Lang::En);
        let cards: Vec<(String, String)> = s["cards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|kv| {
                (
                    kv[0].as_str().unwrap().into(),
                    kv[1].as_str().unwrap().into(),
                )
            })
            .collect();
        let last = r.series.iter().rev().find(|x| x.length_s >= 0.5).unwrap();
        let rate = format!("{:.1}", last.responses as f64 / last.length_s);
        assert_eq!(cards[0], ("responses/s".into(), rate));
        let total: u64 = r.series.iter().map(|x| x.responses).sum();
        assert_eq!(cards[1], ("responses".into(), count(total)));
        assert_eq!(cards[4], ("p99".into(), duration_us(last.latency_p99_us)));
        assert_eq!(s["ended"], false);
        assert_eq!(
            file_name(&r),
            format!("yace-{}.html", r.started_at.replace(':', "-"))
        );
    }
}
