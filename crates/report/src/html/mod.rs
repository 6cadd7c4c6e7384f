//! The HTML report: one self-contained page, built from results alone.
//!
//! It opens offline, from disk or an e-mail attachment: the chart library
//! (uPlot, vendored under `assets/uplot`), the page's own script and styles
//! are inlined, and nothing is ever fetched. Every figure a chart draws is
//! also in a table behind its "show data" toggle, so the page reads with
//! scripts off and prints on A4. The whole result is embedded
//! ([`embed`]), so the page can be read back as a result.
//!
//! Other pages made of the same parts (the lab's experiment page) use the
//! shell ([`head`], [`chart_data`], [`scripts`]), the charts ([`Chart`],
//! [`chart_figure`]) and the one escaper ([`crate::markup`]).

mod data;
pub mod embed;
pub mod live;
mod server;

use crate::compare;
use crate::fmt::{bytes, count, duration_us};
use crate::lang::{tr, trf, Lang};
use crate::text::{end_in, model_in, SHOWN};
pub use data::{line, Axis, Band, Chart, Kind, Line, Mark, Seconds, Unit, Values, RUN_COLORS};
use stats::hist::Distribution;
use stats::RunResult;
use std::io::{self, Write};

const UPLOT_JS: &str = include_str!("../../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/uplot/uPlot.min.css");
const PAGE_JS: &str = include_str!("../../assets/report.js");
const PAGE_CSS: &str = include_str!("../../assets/report.css");
/// What a page may load: nothing (everything is inline).
const CSP: &str =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

/// Text made safe for HTML content and attribute values (the one
/// escaper, shared with the JUnit XML).
pub(crate) fn esc(s: &str) -> String {
    crate::fmt::markup(s)
}

/// The inverse of [`esc`].
pub(crate) fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#39;", "'")
        .replace("&#10;", "\n")
        .replace("&#9;", "\t")
        .replace("&amp;", "&")
}

/// JSON that cannot end the `<script>` element holding it.
fn script_json(v: &serde_json::Value) -> String {
    v.to_string()
        .replace("</", "<\\/")
        .replace("<!--", "<\\!--")
}

/// Writes the report of one run.
pub fn report(r: &RunResult, w: impl Write) -> io::Result<()> {
    report_in(r, w, Lang::En)
}

/// Writes the report of one run in `lang`.
pub fn report_in(r: &RunResult, w: impl Write, lang: Lang) -> io::Result<()> {
    page_in(&[(String::new(), r.clone())], w, lang)
}

/// Writes the report of one run, or of several overlaid (each labelled,
/// usually by its file name) with their differences to the first.
pub fn page(runs: &[(String, RunResult)], w: impl Write) -> io::Result<()> {
    page_in(runs, w, Lang::En)
}

/// [`page`] in `lang`.
pub fn page_in(runs: &[(String, RunResult)], mut w: impl Write, lang: Lang) -> io::Result<()> {
    let t = |en: &'static str| tr(lang, en);
    let Some((_, first)) = runs.first() else {
        return Ok(());
    };
    let single = runs.len() == 1;
    let title = if single {
        let (what, at) = crate::request_line(first, lang);
        format!("{what} {at} — {}", t("yace load test report"))
    } else {
        format!(
            "{} — {}",
            trf(lang, "Comparing {} runs", &[&runs.len()]),
            t("yace load test report")
        )
    };
    head(&mut w, lang, &first.yace_version, &title)?;
    if single {
        header(&mut w, first, lang)?;
    } else {
        compare_header(&mut w, runs, lang)?;
    }

    // Charts, each with its data as a table.
    let xs = data::spectrum_xs(false);
    let table_xs = data::spectrum_xs(true);
    let mut charts: Vec<(Chart, Chart)> = data::time_charts(runs, data::MAX_POINTS, lang)
        .into_iter()
        .zip(data::time_charts(runs, data::TABLE_ROWS, lang))
        .collect();
    if let Some(c) = data::spectrum_chart(runs, &xs, lang) {
        let tc = data::spectrum_chart(runs, &table_xs, lang).unwrap_or_else(|| c.clone());
        charts.insert(charts.len().min(2), (c, tc));
    }
    if let Some(c) = data::histogram_chart(runs, lang) {
        charts.insert(charts.len().min(3), (c.clone(), c));
    }
    if single {
        if let Some(c) = data::phases_chart(first, &xs, lang) {
            let tc = data::phases_chart(first, &table_xs, lang).unwrap_or_else(|| c.clone());
            charts.insert(charts.len().min(4), (c, tc));
        }
    }
    let marks = marks(runs, lang);
    mark(charts.iter_mut().map(|(c, _)| c), &marks);
    if !charts.is_empty() {
        writeln!(w, "<section class=\"charts\">\n<h2>{}</h2>", t("Charts"))?;
        writeln!(
            w,
            "<p class=\"hint\">{}</p>",
            esc(t("Hover a chart for exact values; the time charts share one cursor. Click a legend entry to hide its line. \"show data\" opens the figures drawn."))
        )?;
        for (c, tc) in &charts {
            chart_figure(&mut w, c, tc, lang)?;
        }
        markers(&mut w, runs, lang)?;
        writeln!(w, "</section>")?;
    }
    // The server's side (--monitor), on the same time axis.
    let mut server_charts: Vec<(Chart, Chart)> = Vec::new();
    if single {
        if let Some(m) = &first.monitor {
            let mut sc = server::charts(m, "", lang);
            mark(sc.iter_mut().map(|(c, _)| c), &marks);
            server::section(&mut w, m, &sc, lang, 2)?;
            server_charts.extend(sc);
        }
        details(&mut w, first, lang)?;
    } else {
        for (i, (name, r)) in runs.iter().enumerate() {
            writeln!(
                w,
                "<section class=\"run\"><h2>[{}] {}</h2>",
                i + 1,
                esc(name)
            )?;
            verdict(&mut w, r, lang)?;
            if let Some(m) = &r.monitor {
                server::head(&mut w, m, lang, 3)?;
                let mut sc = server::charts(m, &format!("run{}-", i + 1), lang);
                mark(sc.iter_mut().map(|(c, _)| c), &marks);
                server::section(&mut w, m, &sc, lang, 3)?;
                server_charts.extend(sc);
            }
            writeln!(w, "</section>")?;
        }
    }

    writeln!(
        w,
        "<footer><p>{}</p><p>{}</p></footer>\n</main>",
        plural(
            lang,
            trf(
                lang,
                "Made by yace {} from the <code>yace.result.v1</code> document(s), which this page embeds whole: <code>yace report THIS.html -F json</code> gets it back, and <code>yace report THIS.html other.json</code> compares it.",
                &[&esc(&first.yace_version)]
            ),
            runs.len(),
            "document"
        ),
        t("Charts drawn with uPlot 1.6.32 (MIT licence, © Leon Sorokin), inlined: this page makes no network request.")
    )?;
    chart_data(
        &mut w,
        charts.iter().chain(&server_charts).map(|(c, _)| c),
        lang,
    )?;
    for (name, r) in runs {
        embed::element(&mut w, name, r)?;
    }
    scripts(&mut w)
}

/// The runs' markers (`m` in the live view) as vertical lines, labelled
/// with their notes (`[2] note` when runs are overlaid).
fn marks(runs: &[(String, RunResult)], lang: Lang) -> Vec<Mark> {
    let several = runs.len() > 1;
    runs.iter()
        .enumerate()
        .flat_map(|(i, (_, r))| {
            r.markers.iter().map(move |m| Mark {
                x: m.at_s,
                label: match (several, m.note.is_empty()) {
                    (false, false) => m.note.clone(),
                    (false, true) => tr(lang, "marker").to_string(),
                    (true, false) => format!("[{}] {}", i + 1, m.note),
                    (true, true) => format!("[{}] {}", i + 1, tr(lang, "marker")),
                },
                color: "#c2255c",
            })
        })
        .chain(runs.iter().enumerate().flat_map(|(i, (_, r))| {
            // Steering: each change of the offered rate.
            let prefix = if several {
                format!("[{}] ", i + 1)
            } else {
                String::new()
            };
            let users_prefix = prefix.clone();
            r.steering
                .iter()
                .flat_map(|st| st.segments.iter().skip(1))
                .map(move |g| Mark {
                    x: g.at_s,
                    label: if g.factor == 0.0 {
                        format!("{prefix}{}", tr(lang, "paused"))
                    } else {
                        format!(
                            "{prefix}×{:.2}: {}/s",
                            g.factor,
                            crate::count(g.rate.round() as u64)
                        )
                    },
                    color: "#5f3dc4",
                })
                .chain(
                    r.steering
                        .iter()
                        .flat_map(|st| st.users.iter().skip(1))
                        .map(move |g| Mark {
                            x: g.at_s,
                            label: format!(
                                "{users_prefix}{} {} ({:+})",
                                crate::count(g.users),
                                tr(lang, "users"),
                                g.delta
                            ),
                            color: "#5f3dc4",
                        }),
                )
        }))
        .collect()
}

/// Draws `marks` on the charts that have a time axis.
fn mark<'a>(charts: impl Iterator<Item = &'a mut Chart>, marks: &[Mark]) {
    if marks.is_empty() {
        return;
    }
    for c in charts.filter(|c| c.kind == Kind::Time) {
        c.axis.marks.extend(marks.iter().cloned());
    }
}

/// The markers as a list under the charts (read without scripts too).
fn markers(w: &mut impl Write, runs: &[(String, RunResult)], lang: Lang) -> io::Result<()> {
    if runs.iter().all(|(_, r)| r.markers.is_empty()) {
        return Ok(());
    }
    writeln!(
        w,
        "<div class=\"markers\"><h3>{}</h3>\n<ul>",
        tr(lang, "Markers")
    )?;
    for (i, (_, r)) in runs.iter().enumerate() {
        for m in &r.markers {
            let run = if runs.len() > 1 {
                format!("[{}] ", i + 1)
            } else {
                String::new()
            };
            writeln!(
                w,
                "<li>{run}<time>{:.1} s</time> {}</li>",
                m.at_s,
                if m.note.is_empty() {
                    esc(tr(lang, "(no note)"))
                } else {
                    esc(&m.note)
                }
            )?;
        }
    }
    writeln!(w, "</ul></div>")
}

/// The page's head: one file, styles inline, no fetch allowed; `<main>`
/// is open.
pub fn head(w: &mut impl Write, lang: Lang, version: &str, title: &str) -> io::Result<()> {
    head_with(w, lang, version, title, CSP, "")
}

/// [`head`] with its content policy, and `extra` elements in it.
fn head_with(
    w: &mut impl Write,
    lang: Lang,
    version: &str,
    title: &str,
    csp: &str,
    extra: &str,
) -> io::Result<()> {
    write!(
        w,
        "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"yace {}\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n{extra}\
         <title>{}</title>\n<style>\n{UPLOT_CSS}\n{PAGE_CSS}\n</style>\n</head>\n<body>\n<main>\n",
        lang.html(),
        esc(version),
        esc(title)
    )
}

/// What the page's script draws: each chart's data, and the words it
/// writes itself.
pub fn chart_data<'a>(
    w: &mut impl Write,
    charts: impl IntoIterator<Item = &'a Chart>,
    lang: Lang,
) -> io::Result<()> {
    let doc = serde_json::json!({
        "charts": charts.into_iter().map(Chart::to_json).collect::<Vec<_>>(),
        "words": words(lang),
    });
    writeln!(
        w,
        "<script type=\"application/json\" id=\"yace-charts\">{}</script>",
        script_json(&doc)
    )
}

/// The chart library and the page's script, inline, then the page's end
/// (after `</main>` and [`chart_data`]).
pub fn scripts(w: &mut impl Write) -> io::Result<()> {
    scripts_with(w, "")
}

/// [`scripts`], then `extra` (the live page's own script) before the end.
fn scripts_with(w: &mut impl Write, extra: &str) -> io::Result<()> {
    writeln!(
        w,
        "<script>\n/* uPlot 1.6.32, https://github.com/leeoniya/uPlot, MIT licence, (c) 2022 Leon Sorokin */\n{UPLOT_JS}\n</script>\n<script>\n{PAGE_JS}\n</script>\n{extra}</body>\n</html>"
    )
}

/// The words the page's script writes itself.
fn words(lang: Lang) -> serde_json::Value {
    let t = |en: &'static str| tr(lang, en);
    serde_json::json!({
        "time": t("time"),
        "percentile": t("percentile"),
        "latency": t("latency"),
        "from": t("latency from"),
        "rate": t("offered rate"),
        "cores": if lang == Lang::Zh { "核" } else { "cores" },
        "fastest": if lang == Lang::Zh { "最快的一秒" } else { "fastest second" },
        "slowest": if lang == Lang::Zh { "最慢的一秒" } else { "slowest second" },
        "runs": t("runs"),
    })
}

/// A `yace find-max` answer as a page: the conclusion, latency against
/// rate with each SLO's bound, and every trial in a table.
pub fn search_page(s: &crate::findmax::Search, mut w: impl Write, lang: Lang) -> io::Result<()> {
    use crate::findmax::conclusion;
    let t = |en: &'static str| tr(lang, en);
    let title = trf(
        lang,
        "find-max {} — SLOs: {}",
        &[&s.url, &s.slos.join(" & ")],
    );
    head(
        &mut w,
        lang,
        s.yace_version
            .as_deref()
            .unwrap_or(env!("CARGO_PKG_VERSION")),
        &format!("{title} — {}", t("yace load test report")),
    )?;
    writeln!(
        w,
        "<header>\n<p class=\"kicker\">{}</p>\n<h1>{}</h1>\n</header>",
        t("yace load test report"),
        esc(&title)
    )?;
    let class = match s.answer.end.as_str() {
        "converged" => "ok",
        "client_bound" | "below_min_rate" => "bad",
        _ => "warn",
    };
    writeln!(w, "<section class=\"verdict {class}\" role=\"status\">")?;
    let lines = conclusion(s, lang);
    for (i, l) in lines.iter().enumerate() {
        if i == 0 {
            writeln!(w, "<p class=\"head\">{}</p>", esc(l))?;
        } else {
            writeln!(w, "<p>{}</p>", esc(l))?;
        }
    }
    writeln!(w, "</section>")?;
    // Latency against the offered rate: each trial a point, passed or
    // failed, and each latency SLO's bound as a line.
    let mut xs: Vec<f64> = s.answer.trials.iter().map(|t| t.rate).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let at = |pass: bool| -> Vec<Option<f64>> {
        xs.iter()
            .map(|&x| {
                s.answer
                    .trials
                    .iter()
                    .zip(&s.figures)
                    .filter(|(tr, _)| {
                        tr.rate == x
                            && tr
                                .verdict
                                .as_ref()
                                .is_some_and(|v| (v.verdict == "pass") == pass)
                    })
                    .filter_map(|(_, f)| f.p99_ms)
                    .next_back()
                    .map(|ms| ms * 1000.0)
            })
            .collect()
    };
    let mut lines = vec![
        data::Line {
            points: true,
            ..data::line(t("p99, trial passed"), data::Unit::Us, "#2b8a3e")
        },
        data::Line {
            points: true,
            ..data::line(t("p99, trial failed"), data::Unit::Us, "#c92a2a")
        },
    ];
    lines[0].values = at(true);
    lines[1].values = at(false);
    for b in s.slo_bounds.iter().filter(|b| b.latency) {
        let mut l = data::line(b.expr.clone(), data::Unit::Us, "#495057");
        l.dash = true;
        l.values = xs.iter().map(|_| Some(b.bound * 1000.0)).collect();
        lines.push(l);
    }
    let chart = Chart {
        id: "search".into(),
        title: t("Latency against the offered rate").into(),
        kind: Kind::Search,
        note: t("Each trial's p99 at the rate it offered (log scales); the dashed line is the latency SLO. The answer is the highest rate that passed below the lowest that failed.").into(),
        x: xs.clone(),
        lines,
        log: true,
        axis: Axis::default(),
    };
    writeln!(w, "<section class=\"charts\">")?;
    chart_figure(&mut w, &chart, &chart, lang)?;
    writeln!(w, "</section>")?;
    writeln!(
        w,
        "<section class=\"details\">\n<h2>{}</h2>\n<table class=\"wide\"><thead><tr><th>#</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>p50</th><th>p99</th><th>{}</th><th>{}</th></tr></thead><tbody>",
        t("Trials"),
        t("stage"),
        t("rate/s"),
        t("for"),
        t("responses/s"),
        t("errors"),
        t("verdict")
    )?;
    for row in crate::findmax::rows(s, lang) {
        write!(w, "<tr>")?;
        for (i, c) in row.cells.iter().enumerate() {
            match i {
                1 => write!(w, "<td class=\"text\">{}</td>", esc(c))?,
                8 => write!(
                    w,
                    "<td class=\"text {}\">{}</td>",
                    if row.passed { "pass" } else { "fail" },
                    esc(c)
                )?,
                _ => write!(w, "<td>{}</td>", esc(c))?,
            }
        }
        writeln!(w, "</tr>")?;
    }
    writeln!(w, "</tbody></table>\n</section>")?;
    writeln!(
        w,
        "<footer><p>{}</p></footer>\n</main>",
        t("Charts drawn with uPlot 1.6.32 (MIT licence, © Leon Sorokin), inlined: this page makes no network request.")
    )?;
    chart_data(&mut w, [&chart], lang)?;
    scripts(&mut w)
}

/// English plurals in a template written with `word(s)`.
fn plural(lang: Lang, text: String, n: usize, word: &str) -> String {
    if lang != Lang::En {
        return text;
    }
    let with = if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    };
    text.replace(&format!("{word}(s)"), &with)
}

/// The machine the client ran on, in a few words.
fn machine(r: &RunResult) -> String {
    let e = &r.environment;
    format!(
        "{} — {}, {} CPU{} ({} allowed), {}",
        e.hostname,
        e.cpu_model,
        e.cpus,
        if e.cpus == 1 { "" } else { "s" },
        e.cpus_allowed,
        e.os
    )
}

fn header(w: &mut impl Write, r: &RunResult, lang: Lang) -> io::Result<()> {
    let s = &r.summary;
    let t = |en: &'static str| tr(lang, en);
    let (what, at) = crate::request_line(r, lang);
    writeln!(
        w,
        "<header>\n<p class=\"kicker\">{}</p>\n<h1><span class=\"method\">{}</span> {}</h1>",
        t("yace load test report"),
        esc(&what),
        esc(&at)
    )?;
    writeln!(w, "<dl class=\"facts\">")?;
    let mut fact = |k: &str, v: String| writeln!(w, "<div><dt>{k}</dt><dd>{v}</dd></div>");
    fact(t("load"), esc(&model_in(r, lang)))?;
    fact(
        t("when"),
        format!(
            "{} · {:.2} s · {}",
            esc(&r.started_at),
            s.duration_s,
            esc(end_in(r, lang))
        ),
    )?;
    fact(t("client machine"), esc(&machine(r)))?;
    if let Some(sw) = &r.server_software {
        fact(t("server says"), format!("<code>{}</code>", esc(sw)))?;
    }
    if r.tls.as_ref().is_some_and(|t| t.version.is_none()) {
        fact("TLS", t("no handshake completed").to_string())?;
    } else if let Some(tls) = &r.tls {
        fact(
            "TLS",
            format!(
                "{} {} · {} {} · {}",
                esc(tls.version.as_deref().unwrap_or(t("(no handshake)"))),
                esc(tls.cipher.as_deref().unwrap_or("")),
                t("certificate"),
                if tls.verified {
                    t("verified")
                } else {
                    t("<strong>NOT verified</strong> (--insecure)")
                },
                trf(
                    lang,
                    "{} full and {} resumed handshakes",
                    &[&count(tls.full_handshakes), &count(tls.resumed_handshakes)]
                )
            ),
        )?;
    }
    if let Some(h) = &r.http2 {
        fact(
            "HTTP/2",
            format!(
                "{}{} · {} GOAWAY",
                trf(lang, "{} streams per connection", &[&h.streams]),
                h.server_max_streams
                    .map(|m| trf(lang, " (server allows {})", &[&m]))
                    .unwrap_or_default(),
                count(h.goaways)
            ),
        )?;
    }
    fact("yace", esc(&r.yace_version))?;
    writeln!(w, "</dl>\n</header>")?;
    verdict(w, r, lang)?;
    headline(w, r, lang)?;
    if let Some(m) = &r.monitor {
        server::head(w, m, lang, 2)?;
    }
    Ok(())
}

/// What a reader must know first: did it pass, is it whole, can the
/// figures be trusted.
fn verdict(w: &mut impl Write, r: &RunResult, lang: Lang) -> io::Result<()> {
    let t = |en: &'static str| tr(lang, en);
    let breached = r.thresholds.iter().filter(|t| !t.passed).count();
    let failed_checks = r.checks.iter().filter(|c| c.failed > 0).count();
    let mut issues: Vec<String> = Vec::new();
    if r.end.partial {
        issues.push(trf(
            lang,
            "<strong>Partial result</strong>: {}. The figures cover what was done.",
            &[&esc(end_in(r, lang))],
        ));
    }
    if let Some(sf) = &r.shortfall {
        issues.push(trf(
            lang,
            "<strong>Shortfall</strong>: {}",
            &[&esc(&crate::lang::shortfall(lang, sf))],
        ));
    }
    if let Some(b) = &r.behind {
        issues.push(trf(
            lang,
            "<strong>The server fell behind</strong>: {}",
            // The label says it; the paragraph goes on from its colon.
            &[&esc(crate::lang::behind(lang, b)
                .split_once([':', '：'])
                .map_or("", |(_, rest)| rest.trim_start()))],
        ));
    }
    let s = &r.summary;
    if s.errors > 0 {
        issues.push(trf(
            lang,
            "<strong>{} of {} requests failed</strong> ({}%): see Errors below.",
            &[
                &count(s.errors),
                &count(s.requests),
                &format!("{:.2}", s.errors as f64 * 100.0 / s.requests.max(1) as f64),
            ],
        ));
    }
    if s.non_2xx > 0 {
        issues.push(trf(
            lang,
            "<strong>{} of {} responses were not 2xx</strong> ({}%): see the status codes below.",
            &[
                &count(s.non_2xx),
                &count(s.responses),
                &format!(
                    "{:.2}",
                    s.non_2xx as f64 * 100.0 / s.responses.max(1) as f64
                ),
            ],
        ));
    }
    if failed_checks > 0 {
        issues.push(plural(
            lang,
            trf(
                lang,
                "<strong>{} check(s) failed</strong>: see Checks below.",
                &[&failed_checks],
            ),
            failed_checks,
            "check",
        ));
    }
    for x in &r.warnings {
        // The shortfall and the fell-behind verdict are among them, said above.
        if r.shortfall.as_ref().is_some_and(|sf| *x == sf.message)
            || r.behind.as_ref().is_some_and(|b| *x == b.message)
        {
            continue;
        }
        issues.push(esc(&crate::lang::warning(lang, x)));
    }
    // What the server's samples show to be the likely limit (--monitor).
    let server = r
        .monitor
        .as_ref()
        .map(|m| server::verdict_issues(m, lang))
        .unwrap_or_default();
    let server_problem = !server.is_empty();
    issues.extend(server);
    let n = r.thresholds.len();
    let (class, head) = if breached > 0 {
        (
            "bad",
            plural(
                lang,
                trf(lang, "{} of {} threshold(s) breached", &[&breached, &n]),
                n,
                "threshold",
            ),
        )
    } else if r.end.partial || failed_checks > 0 || s.errors > 0 || s.non_2xx > 0 || server_problem
    {
        (
            "warn",
            if n == 0 {
                t("Completed with problems").to_string()
            } else {
                trf(lang, "All {} thresholds passed, with problems", &[&n])
            },
        )
    } else if n > 0 {
        (
            "ok",
            plural(
                lang,
                trf(lang, "All {} threshold(s) passed", &[&n]),
                n,
                "threshold",
            ),
        )
    } else {
        ("ok", t("Completed").to_string())
    };
    let head = if r.end.partial {
        trf(lang, "{} · partial result", &[&head])
    } else {
        head
    };
    writeln!(
        w,
        "<section class=\"verdict {class}\" role=\"status\">\n<p class=\"head\">{}</p>",
        esc(&head)
    )?;
    if issues.is_empty() {
        writeln!(w, "<p>{}</p>", t("No validity warning."))?;
    } else {
        writeln!(w, "<ul>")?;
        for i in issues {
            writeln!(w, "<li>{i}</li>")?;
        }
        writeln!(w, "</ul>")?;
    }
    writeln!(w, "</section>")
}

fn headline(w: &mut impl Write, r: &RunResult, lang: Lang) -> io::Result<()> {
    let t = |en: &'static str| tr(lang, en);
    let s = &r.summary;
    let l = &s.latency;
    let at = |p: f64| {
        if l.count == 0 {
            "—".to_string()
        } else {
            duration_us(l.at(p).unwrap_or(0.0))
        }
    };
    let cards = [
        (t("responses/s"), format!("{:.1}", s.rps)),
        (t("responses"), count(s.responses)),
        (
            t("errors"),
            format!(
                "{} ({:.2}%)",
                count(s.errors),
                s.errors as f64 * 100.0 / s.requests.max(1) as f64
            ),
        ),
        (
            t("non-2xx"),
            format!(
                "{} ({:.2}%)",
                count(s.non_2xx),
                s.non_2xx as f64 * 100.0 / s.responses.max(1) as f64
            ),
        ),
        ("p50", at(50.0)),
        ("p90", at(90.0)),
        ("p99", at(99.0)),
        ("p99.9", at(99.9)),
        (
            t("max"),
            if l.count == 0 {
                "—".into()
            } else {
                duration_us(l.max_us)
            },
        ),
        (t("transfer in"), format!("{}/s", bytes(s.bytes_in_per_s))),
    ];
    writeln!(w, "<section class=\"headline\">")?;
    for (k, v) in cards {
        writeln!(
            w,
            "<div class=\"card\"><div class=\"v\">{}</div><div class=\"k\">{k}</div></div>",
            esc(&v)
        )?;
    }
    writeln!(w, "</section>")?;
    writeln!(
        w,
        "<p class=\"hint\">{}</p>",
        t(if s.service.is_some() {
            "Latency counts from when each request was due (coordinated omission corrected)."
        } else {
            "Closed model: latency is service time; a server stall shows as fewer responses, not as latency (run an open model with --rate to see it)."
        })
    )
}

fn compare_header(w: &mut impl Write, runs: &[(String, RunResult)], lang: Lang) -> io::Result<()> {
    writeln!(
        w,
        "<header>\n<p class=\"kicker\">{}</p>\n<h1>{}</h1>\n<ol class=\"runs\">",
        tr(lang, "yace load test report"),
        trf(lang, "Comparing {} runs", &[&runs.len()])
    )?;
    for (i, (name, r)) in runs.iter().enumerate() {
        writeln!(
            w,
            "<li><span class=\"swatch\" style=\"background:{}\"></span><strong>[{}] {}</strong>: \
             {} {}<br><small>{} · {} · {:.2} s · {}</small></li>",
            data::RUN_COLORS[i % data::RUN_COLORS.len()],
            i + 1,
            esc(name),
            esc(&crate::request_line(r, lang).0),
            esc(&crate::request_line(r, lang).1),
            esc(&model_in(r, lang)),
            esc(&r.started_at),
            r.summary.duration_s,
            esc(end_in(r, lang))
        )?;
    }
    writeln!(w, "</ol>\n</header>")?;
    let table = compare::table_in(runs, lang);
    writeln!(w, "<section class=\"compare\"><table><thead><tr><th></th>")?;
    for i in 0..runs.len() {
        write!(w, "<th>[{}]</th>", i + 1)?;
        if i > 0 {
            write!(w, "<th>{}</th>", tr(lang, "vs [1]"))?;
        }
    }
    writeln!(w, "</tr></thead><tbody>")?;
    for row in &table.rows {
        write!(w, "<tr><th>{}</th>", esc(row.label))?;
        for (i, cell) in row.cells.iter().enumerate() {
            write!(w, "<td>{}</td>", esc(&cell.0))?;
            if i > 0 {
                write!(w, "<td class=\"change\">{}</td>", esc(&cell.1))?;
            }
        }
        writeln!(w, "</tr>")?;
    }
    writeln!(w, "</tbody></table>\n<ul class=\"notes\">")?;
    for c in &table.notes {
        writeln!(w, "<li>{}</li>", esc(c))?;
    }
    writeln!(w, "</ul></section>")
}

/// A chart's figure: its title, the plot the script draws in, its note,
/// and its figures as a table (`t`: the same chart with fewer points) for
/// reading without scripts.
pub fn chart_figure(w: &mut impl Write, c: &Chart, t: &Chart, lang: Lang) -> io::Result<()> {
    figure_head(w, c, lang)?;
    writeln!(
        w,
        "<details><summary>{}</summary><div class=\"tablewrap\"><table><thead><tr><th>{}</th>",
        tr(lang, "show data"),
        match t.kind {
            Kind::Sweep | Kind::Groups => esc(&t.axis.name),
            k => tr(
                lang,
                match k {
                    Kind::Time => "time",
                    Kind::Spectrum => "percentile",
                    Kind::Histogram => "latency from",
                    _ => "offered rate",
                }
            )
            .to_string(),
        }
    )?;
    table_rows(w, t, lang)?;
    writeln!(w, "</details>\n</figure>")
}

/// A chart's figure up to its table: the title (and log toggle), the plot
/// the script draws in, and the note.
fn figure_head(w: &mut impl Write, c: &Chart, lang: Lang) -> io::Result<()> {
    writeln!(
        w,
        "<figure class=\"chart\" id=\"chart-{id}\">\n<figcaption><h3>{}</h3>{}</figcaption>\n\
         <div class=\"plot\" data-chart=\"{id}\"></div>\n<p class=\"note\">{}</p>",
        esc(&c.title),
        if c.log {
            format!(
                "<label class=\"logtoggle\"><input type=\"checkbox\" data-log=\"{}\"{}> {}</label>",
                c.id,
                if c.kind == Kind::Spectrum || c.axis.log_first {
                    " checked"
                } else {
                    ""
                },
                tr(lang, "log scale")
            )
        } else {
            String::new()
        },
        esc(&c.note),
        id = c.id
    )?;
    Ok(())
}

/// A chart's table: its head's other columns and its rows, closing the
/// table (the caller wrote the first column's head).
fn table_rows(w: &mut impl Write, t: &Chart, lang: Lang) -> io::Result<()> {
    for l in &t.lines {
        write!(w, "<th>{}</th>", esc(&l.label))?;
    }
    writeln!(w, "</tr></thead><tbody>")?;
    for (i, &x) in t.x.iter().enumerate() {
        let xs = match t.kind {
            Kind::Time => clock(x),
            Kind::Spectrum => {
                let p = data::TABLE_PERCENTILES
                    .get(i)
                    .copied()
                    .unwrap_or(100.0 * (1.0 - 10f64.powf(-x)));
                if p == 0.0 {
                    tr(lang, "min").to_string()
                } else {
                    format!("p{p}")
                }
            }
            Kind::Histogram => duration_us(x),
            Kind::Search => format!("{}/s", crate::findmax::rate(x)),
            Kind::Sweep => crate::findmax::rate(x),
            Kind::Groups => esc(t.axis.ticks.get(i).map_or("", String::as_str)),
        };
        write!(w, "<tr><th>{xs}</th>")?;
        for l in &t.lines {
            let err = |e: &Option<Band>| {
                let (lo, hi) = e.as_ref()?;
                Some((lo.get(i).copied()??, hi.get(i).copied()??))
            };
            match (l.values.get(i).copied().flatten(), err(&l.err)) {
                (Some(v), Some((lo, hi))) => write!(
                    w,
                    "<td>{} [{}–{}]</td>",
                    esc(&l.unit.show(v)),
                    esc(&l.unit.show(lo)),
                    esc(&l.unit.show(hi))
                )?,
                (Some(v), None) => write!(w, "<td>{}</td>", esc(&l.unit.show(v)))?,
                (None, _) => write!(w, "<td>—</td>")?,
            }
        }
        writeln!(w, "</tr>")?;
    }
    writeln!(w, "</tbody></table></div>")?;
    if t.kind == Kind::Time && t.x.len() > 1 {
        let step = t.x[1] - t.x[0];
        if step > 1.0 {
            writeln!(
                w,
                "<p class=\"note\">{}</p>",
                trf(
                    lang,
                    "Each row covers {} s. Every second is in <code>yace report FILE -F csv</code>.",
                    &[&step]
                )
            )?;
        }
    }
    Ok(())
}

/// Seconds since the start as `m:ss` or `h:mm:ss`, with tenths when not
/// on a whole second (a server sample's time: `0:02.5`).
fn clock(s: f64) -> String {
    let tenths = (s.max(0.0) * 10.0).round() as u64;
    let s = tenths / 10;
    let tenth = match tenths % 10 {
        0 => String::new(),
        d => format!(".{d}"),
    };
    if s >= 3600 {
        format!("{}:{:02}:{:02}{tenth}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}{tenth}", s / 60, s % 60)
    }
}

fn dist_row(w: &mut impl Write, name: &str, d: &Distribution) -> io::Result<()> {
    if d.count == 0 {
        return Ok(());
    }
    let at = |p: f64| duration_us(d.at(p).unwrap_or(0.0));
    writeln!(
        w,
        "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        esc(name),
        duration_us(d.min_us),
        duration_us(d.mean_us),
        at(50.0),
        at(90.0),
        at(99.0),
        duration_us(d.max_us)
    )
}

/// The tables under the charts.
fn details(w: &mut impl Write, r: &RunResult, lang: Lang) -> io::Result<()> {
    let s = &r.summary;
    let t = |en: &'static str| tr(lang, en);
    let head = |cols: &[&str]| {
        let cells: String = cols.iter().map(|c| format!("<th>{c}</th>")).collect();
        format!("<thead><tr>{cells}</tr></thead>")
    };
    writeln!(w, "<section class=\"details\">\n<h2>{}</h2>", t("Figures"))?;
    writeln!(
        w,
        "<table class=\"wide\">{}<tbody><tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td></tr></tbody></table>",
        head(&[
            t("requests"),
            t("responses"),
            t("errors"),
            t("non-2xx"),
            t("cancelled"),
            t("dropped"),
            t("retried"),
            t("responses/s")
        ]),
        count(s.requests),
        count(s.responses),
        count(s.errors),
        count(s.non_2xx),
        count(s.cancelled),
        count(s.dropped),
        count(s.retries),
        s.rps
    )?;
    writeln!(
        w,
        "<p>{}</p>",
        trf(
            lang,
            "Transfer: in {} ({}/s), out {}, bodies {}; {} connections opened; client {} thread(s), {} CPU-s, busiest thread {}% busy{}.",
            &[
                &bytes(s.bytes_in as f64),
                &bytes(s.bytes_in_per_s),
                &bytes(s.bytes_out as f64),
                &bytes(s.body_bytes as f64),
                &count(s.connections_opened),
                &r.client.threads,
                &format!("{:.2}", r.client.cpu_s),
                &format!("{:.0}", r.client.busiest_thread * 100.0),
                &if r.client.saturated {
                    t(" — <strong>saturated</strong>")
                } else {
                    ""
                }
            ]
        )
    )?;
    if s.latency.count > 0 {
        let mut cols = vec![t("min").to_string(), t("mean").into(), t("stdev").into()];
        cols.extend(SHOWN.iter().map(|p| format!("p{p}")));
        cols.push(t("max").into());
        let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
        writeln!(
            w,
            "<h3>{}</h3><table class=\"wide\">{}<tbody><tr>",
            t("Latency"),
            head(&cols)
        )?;
        let l = &s.latency;
        write!(
            w,
            "<td>{}</td><td>{}</td><td>{}</td>",
            duration_us(l.min_us),
            duration_us(l.mean_us),
            duration_us(l.stdev_us)
        )?;
        for p in SHOWN {
            write!(w, "<td>{}</td>", duration_us(l.at(p).unwrap_or(0.0)))?;
        }
        writeln!(w, "<td>{}</td></tr></tbody></table>", duration_us(l.max_us))?;
        writeln!(
            w,
            "<h3>{}</h3><table>{}<tbody>",
            t("Phases"),
            head(&[
                t("phase"),
                t("min"),
                t("mean"),
                "p50",
                "p90",
                "p99",
                t("max")
            ])
        )?;
        dist_row(w, t("latency"), &s.latency)?;
        if let Some(d) = &s.service {
            dist_row(w, t("service time"), d)?;
        }
        if let Some(d) = &s.lag {
            dist_row(w, t("schedule lag"), d)?;
        }
        dist_row(w, t("connect (per request)"), &s.connect)?;
        if let Some(d) = &s.tls {
            dist_row(w, "TLS", d)?;
        }
        dist_row(w, t("wait (to first byte)"), &s.wait)?;
        dist_row(w, t("processing"), &s.processing)?;
        dist_row(w, t("TCP handshake (per connection)"), &s.handshake)?;
        writeln!(w, "</tbody></table>")?;
    }
    writeln!(w, "<h3>{}</h3>", t("Responses and errors"))?;
    if !r.statuses.is_empty() {
        writeln!(w, "<table>{}<tbody>", head(&[t("status"), t("responses")]))?;
        for (code, n) in &r.statuses {
            writeln!(w, "<tr><th>{code}</th><td>{}</td></tr>", count(*n))?;
        }
        writeln!(w, "</tbody></table>")?;
    }
    let mut failures: Vec<_> = r
        .outcomes
        .iter()
        .filter(|(o, n)| o.is_error() && **n > 0)
        .collect();
    if failures.is_empty() {
        writeln!(w, "<p>{}</p>", t("No errors."))?;
    } else {
        failures.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
        writeln!(
            w,
            "<table>{}<tbody>",
            head(&[t("error"), t("requests"), t("likely cause")])
        )?;
        for (o, n) in failures {
            writeln!(
                w,
                "<tr><th><code>{}</code></th><td>{}</td><td class=\"text\">{}</td></tr>",
                o.name(),
                count(*n),
                esc(crate::lang::explain(lang, *o))
            )?;
        }
        writeln!(w, "</tbody></table>")?;
    }
    if !r.steps.is_empty() {
        writeln!(
            w,
            "<h3>{}</h3><table>{}<tbody>",
            t("Steps"),
            head(&[
                t("step"),
                t("requests"),
                t("errors"),
                t("non-2xx"),
                "p50",
                "p99",
                t("max")
            ])
        )?;
        for st in &r.steps {
            // A step that never completed a request has no latency: a dash,
            // not 0µs.
            let us = |v: Option<f64>| match (st.latency.count, v) {
                (0, _) | (_, None) => "—".to_string(),
                (_, Some(v)) => duration_us(v),
            };
            writeln!(
                w,
                "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&st.name),
                count(st.requests),
                count(st.errors),
                count(st.non_2xx),
                us(st.latency.at(50.0)),
                us(st.latency.at(99.0)),
                us(Some(st.latency.max_us))
            )?;
        }
        writeln!(w, "</tbody></table>")?;
    }
    if !r.checks.is_empty() {
        writeln!(
            w,
            "<h3>{}</h3><table>{}<tbody>",
            t("Checks"),
            head(&["", t("step"), t("check"), t("passed"), t("failed")])
        )?;
        for c in &r.checks {
            let (class, word) = match (c.passed, c.failed) {
                (0, 0) => ("", t("not run")),
                (_, 0) => ("pass", t("ok     ").trim()),
                _ => ("fail", t("FAIL")),
            };
            writeln!(
                w,
                "<tr><td class=\"{class}\">{word}</td><td class=\"text\">{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td></tr>",
                esc(&c.step),
                esc(&c.name),
                count(c.passed),
                count(c.failed)
            )?;
        }
        writeln!(w, "</tbody></table>")?;
    }
    if !r.thresholds.is_empty() {
        writeln!(
            w,
            "<h3>{}</h3><table>{}<tbody>",
            t("Thresholds"),
            head(&["", t("threshold"), t("actual")])
        )?;
        for th in &r.thresholds {
            let scope = th
                .step
                .as_ref()
                .map(|s| trf(lang, " (step {})", &[&esc(s)]))
                .unwrap_or_default();
            writeln!(
                w,
                "<tr><td class=\"{}\">{}</td><td class=\"text\"><code>{}</code>{scope}</td><td>{}</td></tr>",
                if th.passed { "pass" } else { "fail" },
                t(if th.passed { "pass" } else { "FAIL" }),
                esc(&th.expr),
                esc(&crate::actual(th.actual, stats::threshold::actual_unit(th)))
            )?;
        }
        writeln!(w, "</tbody></table>")?;
    }
    writeln!(w, "</section>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_round_trips() {
        let s = "a<b>&\"c\" 'd' &amp;";
        assert_eq!(unescape(&esc(s)), s);
        assert!(!esc(s).contains('<'));
    }

    #[test]
    fn json_in_a_script_cannot_close_it() {
        let v = serde_json::json!({"label": "</script><script>alert(1)</script>"});
        assert!(!script_json(&v).contains("</script"));
        let back: serde_json::Value = serde_json::from_str(&script_json(&v)).expect("still JSON");
        assert_eq!(back, v);
    }

    #[test]
    fn clock_reads_as_minutes_or_hours() {
        assert_eq!(clock(59.0), "0:59");
        assert_eq!(clock(61.0), "1:01");
        assert_eq!(clock(3723.0), "1:02:03");
        // Server samples fall between whole seconds.
        assert_eq!(clock(2.501), "0:02.5");
        assert_eq!(clock(4.001), "0:04");
        assert_eq!(clock(3600.5), "1:00:00.5");
    }
}
