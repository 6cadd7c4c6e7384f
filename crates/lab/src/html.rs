//! An experiment as one HTML page: the plan, charts against the swept
//! parameter (each run a dot, the medians joined, their 95% intervals as
//! error bars, the Universal Scalability Law and the knee), or a dot plot
//! per target when nothing is swept; the verdicts; the notes; and each
//! point's runs linked to their own reports.
//!
//! Built from the report crate's parts — the page shell, its styles and
//! script, uPlot, the chart figures and the one escaper — so it opens
//! offline under the same Content-Security-Policy, reads with scripts off
//! (every chart has its table) and prints. Pure: the caller says where
//! each run's own page is.

use crate::analysis::{Analysis, Figure, PointStats, RunFigures};
use crate::experiment::point_label;
use crate::render::{fig, flags, knee, latency_knee, method, num, order};
use crate::state::{Run, State, Status};
use crate::words;
use report::html::{
    chart_data, chart_figure, head, line, scripts, Axis, Band, Chart, Kind, Line, Mark, Unit,
    Values, RUN_COLORS,
};
use report::lang::{tr, trf, Lang};
use report::markup as esc;
use std::io::{self, Write};
use std::path::{Component, Path};

/// Points of a fitted curve drawn between the measured values.
const CURVE_POINTS: usize = 48;

/// Where a run's own page goes: beside its result, `rep-N.html` (in
/// Chinese `rep-N.zh.html`).
pub fn run_page(result: &str, lang: Lang) -> String {
    let stem = result.strip_suffix(".json").unwrap_or(result);
    match lang {
        Lang::En => format!("{stem}.html"),
        _ => format!(
            "{stem}.{}.html",
            lang.html().split('-').next().unwrap_or("zh")
        ),
    }
}

/// What to put before a path relative to the experiment's directory for a
/// link from a page in `page_dir` (both absolute, or both relative to the
/// same place): `""` when the page is in the experiment's directory.
pub fn link_prefix(page_dir: &Path, experiment_dir: &Path) -> String {
    let parts = |p: &Path| -> Vec<String> {
        p.components()
            .filter(|c| !matches!(c, Component::CurDir))
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect()
    };
    let (from, to) = (parts(page_dir), parts(experiment_dir));
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = "../".repeat(from.len() - common);
    for p in &to[common..] {
        out.push_str(p);
        out.push('/');
    }
    out
}

/// The page. `link` gives the address of a run's own page, if it has one.
pub fn page(
    w: &mut impl Write,
    state: &State,
    a: &Analysis,
    link: &dyn Fn(&Run) -> Option<String>,
    lang: Lang,
) -> io::Result<()> {
    let t = |en: &'static str| tr(lang, en);
    head(
        w,
        lang,
        env!("CARGO_PKG_VERSION"),
        &format!("{} — {}", state.name, t("yace lab experiment")),
    )?;
    plan(w, state, lang)?;
    status(w, state, a, lang)?;

    let charts = charts(state, a, lang);
    writeln!(w, "<section class=\"charts\">\n<h2>{}</h2>", t("Charts"))?;
    writeln!(
        w,
        "<p class=\"hint\">{}</p>",
        esc(t("Each dot is one run. Hover a chart for the figures; click a legend entry to hide a target. \"show data\" opens the figures drawn."))
    )?;
    for (c, tc) in &charts.drawn {
        chart_figure(w, c, tc, lang)?;
    }
    for n in &charts.missing {
        writeln!(w, "<p class=\"note\">{}</p>", esc(n))?;
    }
    writeln!(w, "</section>")?;

    verdicts(w, state, a, lang)?;
    scalability(w, state, a, lang)?;
    points(w, state, a, link, lang)?;
    notes(w, state, a, lang)?;

    writeln!(
        w,
        "<footer><p>{}</p><p>{}</p></footer>\n</main>",
        trf(
            lang,
            "Made by yace {} from <code>experiment.json</code> and the runs' results: <code>yace lab report DIR -F html</code> makes it again; each run's own report is linked from the table of points.",
            &[&esc(env!("CARGO_PKG_VERSION"))]
        ),
        t("Charts drawn with uPlot 1.6.32 (MIT licence, © Leon Sorokin), inlined: this page makes no network request.")
    )?;
    chart_data(w, charts.drawn.iter().map(|(c, _)| c), lang)?;
    scripts(w)
}

/// The name and the plan.
fn plan(w: &mut impl Write, state: &State, lang: Lang) -> io::Result<()> {
    let t = |en: &'static str| tr(lang, en);
    writeln!(
        w,
        "<header>\n<p class=\"kicker\">{}</p>\n<h1>{}</h1>\n<dl class=\"facts\">",
        t("yace lab experiment"),
        esc(&state.name)
    )?;
    let mut fact = |k: &str, v: String| writeln!(w, "<div><dt>{k}</dt><dd>{v}</dd></div>");
    let targets: Vec<String> = state
        .targets
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if i == state.baseline && state.baseline_by_target && state.targets.len() > 1 {
                trf(lang, "{} (baseline)", &[&esc(n)])
            } else {
                esc(n)
            }
        })
        .collect();
    fact(t("targets"), targets.join(", "))?;
    fact(t("points"), esc(&sweep(state, lang)))?;
    fact(
        t("repetitions"),
        trf(
            lang,
            "{} each, {} order, seed {}",
            &[&state.repetitions, &order(state, lang), &state.seed],
        ),
    )?;
    let n = |s: Status| state.count(s);
    let mut runs = trf(
        lang,
        "{} of {} done · {} skipped · {} failed",
        &[
            &n(Status::Done),
            &state.runs.len(),
            &n(Status::Skipped),
            &n(Status::Failed),
        ],
    );
    if n(Status::Pending) > 0 {
        runs.push_str(&trf(lang, " · {} to go", &[&n(Status::Pending)]));
    }
    fact(t("runs"), runs)?;
    if state.targets.len() > 1 {
        fact(
            t("practical threshold"),
            trf(
                lang,
                "a change under {}% counts as none",
                &[&format!("{:.0}", state.practical * 100.0)],
            ),
        )?;
    }
    fact(t("file"), format!("<code>{}</code>", esc(&state.file)))?;
    writeln!(w, "</dl>\n</header>")
}

/// The swept values, by parameter: `connections: 1, 2, 4`.
fn sweep(state: &State, lang: Lang) -> String {
    let mut params: Vec<(String, Vec<String>)> = Vec::new();
    for p in &state.points {
        for (k, v) in p {
            let k = k.strip_prefix("var.").unwrap_or(k).to_string();
            match params.iter_mut().find(|(name, _)| *name == k) {
                Some((_, vs)) if !vs.contains(v) => vs.push(v.clone()),
                Some(_) => {}
                None => params.push((k, vec![v.clone()])),
            }
        }
    }
    if params.is_empty() {
        return tr(lang, "one (nothing swept)").into();
    }
    let each = params
        .iter()
        .map(|(k, vs)| format!("{k}: {}", vs.join(", ")))
        .collect::<Vec<_>>()
        .join("; ");
    trf(lang, "{} ({} points)", &[&each, &state.points.len()])
}

/// Whether the experiment is whole, and what went wrong.
fn status(w: &mut impl Write, state: &State, a: &Analysis, lang: Lang) -> io::Result<()> {
    let (done, total) = (state.count(Status::Done), state.runs.len());
    let failed = state.count(Status::Failed);
    let pending = state.count(Status::Pending);
    let (class, head) = if failed > 0 || !a.problems.is_empty() {
        (
            "bad",
            trf(lang, "{} of {} runs done, with problems", &[&done, &total]),
        )
    } else if pending > 0 {
        (
            "warn",
            trf(
                lang,
                "{} of {} runs done: the experiment is not finished",
                &[&done, &total],
            ),
        )
    } else if done < total {
        (
            "warn",
            trf(
                lang,
                "{} of {} runs done, the others skipped by a stop rule",
                &[&done, &total],
            ),
        )
    } else {
        ("ok", trf(lang, "All {} runs done", &[&total]))
    };
    writeln!(
        w,
        "<section class=\"verdict {class}\" role=\"status\">\n<p class=\"head\">{}</p>",
        esc(&head)
    )?;
    let mut issues: Vec<String> = a.problems.clone();
    for r in &state.runs {
        let why = r.note.as_deref().unwrap_or("");
        let (target, point) = (
            &state.targets[r.target],
            point_label(&state.points[r.point]),
        );
        let said = match r.status {
            Status::Failed => trf(
                lang,
                "{} {}, repetition {}: failed: {}",
                &[target, &point, &(r.block + 1), &why],
            ),
            // Once per point: the stop rule skipped the rest of its sweep.
            Status::Skipped => trf(lang, "{} {}: skipped ({})", &[target, &point, &why]),
            _ => continue,
        };
        if !issues.contains(&said) {
            issues.push(said);
        }
    }
    if pending > 0 {
        issues.push(
            tr(
                lang,
                "`yace lab resume DIR` does the rest without redoing finished runs.",
            )
            .into(),
        );
    }
    if !issues.is_empty() {
        writeln!(w, "<ul>")?;
        for i in &issues {
            writeln!(w, "<li>{}</li>", esc(i))?;
        }
        writeln!(w, "</ul>")?;
    }
    writeln!(w, "</section>")
}

/// The charts and, where one has nothing to draw, why.
struct Charts {
    /// Each chart, and the same with fewer points for its table.
    drawn: Vec<(Chart, Chart)>,
    missing: Vec<String>,
}

/// A line of the charts: a target, or a target at one value of the other
/// swept parameters.
struct Group {
    label: String,
    target: usize,
    /// The points it is drawn through, by x.
    points: Vec<(usize, usize)>,
    color: &'static str,
}

/// One metric: its chart's id, title, unit, note, and how to read it of
/// a point and of a run.
struct Metric {
    key: &'static str,
    title: &'static str,
    note: &'static str,
    unit: Unit,
    scale: f64,
    of: fn(&PointStats) -> &Option<Figure>,
    run: fn(&RunFigures) -> Option<f64>,
}

const METRICS: [Metric; 8] = [
    Metric {
        key: "throughput",
        title: "Throughput",
        note: "Responses per second over each run's steady window (its first and last second left out).",
        unit: Unit::PerSecond,
        scale: 1.0,
        of: |p| &p.rps,
        run: |r| Some(r.rps),
    },
    Metric {
        key: "p50",
        title: "Latency p50",
        note: "Each run's median latency.",
        unit: Unit::Us,
        scale: 1000.0,
        of: |p| &p.p50_ms,
        run: |r| r.p50_ms,
    },
    Metric {
        key: "p99",
        title: "Latency p99",
        note: "Each run's 99th percentile latency, however few its responses; the table's interval is the pooled runs' (order statistics of their merged histograms).",
        unit: Unit::Us,
        scale: 1000.0,
        of: |p| &p.p99_ms,
        run: |r| r.p99_ms,
    },
    Metric {
        key: "errors",
        title: "Errors",
        note: "Failed requests as a share of each run's finished requests.",
        unit: Unit::Percent,
        scale: 1.0,
        of: |p| &p.errors_pct,
        run: |r| Some(r.errors_pct),
    },
    Metric {
        key: "cpu",
        title: "Server CPU per request",
        note: "The server's CPU time per response, from the monitors (--monitor).",
        unit: Unit::Us,
        scale: 1000.0,
        of: |p| &p.server_cpu_ms,
        run: |r| r.server_cpu_ms,
    },
    Metric {
        key: "server-cpu",
        title: "Server CPU busy",
        note: "The server's mean CPU busy over each run, as a share of all its CPUs (--monitor system, node: or ssh:).",
        unit: Unit::Cpu,
        scale: 1.0,
        of: |p| &p.server_cpu_pct,
        run: |r| r.server_cpu_pct,
    },
    Metric {
        key: "load",
        title: "Server load per CPU",
        note: "The highest 1-minute load average per CPU during each run (seed 002's `uptime`); above 1 work waits for a CPU.",
        unit: Unit::Ratio,
        scale: 1.0,
        of: |p| &p.load_per_cpu,
        run: |r| r.load_per_cpu,
    },
    Metric {
        key: "workers",
        title: "Busy workers",
        note: "The most workers busy at once during each run, from the status page (php-fpm active processes, Apache busy workers).",
        unit: Unit::Count,
        scale: 1.0,
        of: |p| &p.workers_busy,
        run: |r| r.workers_busy,
    },
];

/// The x axis: the first swept parameter's values when they are numbers,
/// else names (the parameter's values, or the targets when nothing is
/// swept).
struct XAxis {
    name: String,
    /// Numeric values (a `Sweep`), or the names of 0, 1, 2… (`Groups`).
    values: Vec<f64>,
    ticks: Vec<String>,
    /// Each point's x index (by point); none when nothing is swept.
    of_point: Vec<Option<usize>>,
}

fn x_axis(state: &State, lang: Lang) -> XAxis {
    let first = |p: &Vec<(String, String)>| p.first().map(|(k, v)| (k.clone(), v.clone()));
    let Some((key, _)) = state.points.first().and_then(first) else {
        return XAxis {
            name: tr(lang, "target").into(),
            values: (0..state.targets.len()).map(|i| i as f64).collect(),
            ticks: state.targets.clone(),
            of_point: vec![None; state.points.len()],
        };
    };
    let name = key.strip_prefix("var.").unwrap_or(&key).to_string();
    let raw: Vec<String> = state
        .points
        .iter()
        .map(|p| first(p).map(|(_, v)| v).unwrap_or_default())
        .collect();
    let numeric: Option<Vec<f64>> = raw.iter().map(|v| v.parse::<f64>().ok()).collect();
    match numeric {
        Some(ns) => {
            let mut values = ns.clone();
            values.sort_by(f64::total_cmp);
            values.dedup();
            let of_point = ns
                .iter()
                .map(|n| values.iter().position(|v| v == n))
                .collect();
            XAxis {
                name,
                values,
                ticks: Vec::new(),
                of_point,
            }
        }
        None => {
            let mut ticks: Vec<String> = Vec::new();
            for v in &raw {
                if !ticks.contains(v) {
                    ticks.push(v.clone());
                }
            }
            let of_point = raw
                .iter()
                .map(|v| ticks.iter().position(|t| t == v))
                .collect();
            XAxis {
                name,
                values: (0..ticks.len()).map(|i| i as f64).collect(),
                ticks,
                of_point,
            }
        }
    }
}

/// The lines: per target, and per value of the other swept parameters.
fn groups(state: &State, x: &XAxis) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    let rests: Vec<String> = state
        .points
        .iter()
        .map(|p| point_label(&p.get(1..).unwrap_or_default().to_vec()))
        .collect();
    let several = rests.iter().any(|r| *r != rests[0]);
    for target in 0..state.targets.len() {
        if x.of_point.iter().all(Option::is_none) {
            // Nothing swept: the target is its own column.
            out.push(Group {
                label: state.targets[target].clone(),
                target,
                points: vec![(target, 0)],
                color: RUN_COLORS[out.len() % RUN_COLORS.len()],
            });
            continue;
        }
        let mut seen: Vec<&String> = Vec::new();
        for rest in &rests {
            if seen.contains(&rest) {
                continue;
            }
            seen.push(rest);
            let points = (0..state.points.len())
                .filter(|&p| rests[p] == *rest)
                .filter_map(|p| Some((x.of_point[p]?, p)))
                .collect();
            out.push(Group {
                label: if several {
                    format!("{} · {rest}", state.targets[target])
                } else {
                    state.targets[target].clone()
                },
                target,
                points,
                color: RUN_COLORS[out.len() % RUN_COLORS.len()],
            });
        }
    }
    out
}

/// `n` values from `lo` to `hi`, evenly on a log scale when `log`.
fn spread(lo: f64, hi: f64, n: usize, log: bool) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let f = i as f64 / (n - 1) as f64;
            if log {
                (lo.ln() + f * (hi.ln() - lo.ln())).exp()
            } else {
                lo + f * (hi - lo)
            }
        })
        .collect()
}

fn charts(state: &State, a: &Analysis, lang: Lang) -> Charts {
    let t = |en: &'static str| tr(lang, en);
    let x = x_axis(state, lang);
    let sweep = x.of_point.iter().any(Option::is_some);
    let numeric = x.ticks.is_empty() && sweep;
    let groups = groups(state, &x);
    let at = |target: usize, point: usize| {
        a.points
            .iter()
            .find(|p| p.target == target && p.point == point)
    };
    let (lo, hi) = (
        x.values.first().copied().unwrap_or(0.0),
        x.values.last().copied().unwrap_or(0.0),
    );
    let wide = numeric && lo > 0.0 && hi / lo > 10.0;
    // A geometric sweep (1, 2, 4…) reads best on a log axis.
    let geometric = wide && crate::analysis::geometric(&x.values);
    let fits: Vec<_> = a
        .sweeps
        .iter()
        .filter(|f| numeric && f.usl.is_some())
        .collect();
    // The knees: where throughput stops growing (on the throughput chart)
    // and where p99 departs (on the latency charts).
    let knee_marks = |latency: bool| -> Vec<Mark> {
        if !numeric {
            return Vec::new();
        }
        a.sweeps
            .iter()
            .filter_map(|f| {
                let k = if latency { f.latency_knee? } else { f.knee? };
                let g = groups.iter().find(|g| g.target == f.target)?;
                let label = if latency {
                    trf(
                        lang,
                        "{} of {} departs: {}",
                        &[&f.latency_metric, &state.targets[f.target], &num(k)],
                    )
                } else {
                    trf(lang, "knee of {}: {}", &[&state.targets[f.target], &num(k)])
                };
                Some(Mark {
                    x: k,
                    label,
                    color: g.color,
                })
            })
            .collect()
    };
    let (throughput_marks, latency_marks) = (knee_marks(false), knee_marks(true));
    let mut out = Charts {
        drawn: Vec::new(),
        missing: Vec::new(),
    };
    for m in &METRICS {
        let marks = match m.key {
            "throughput" => throughput_marks.clone(),
            "p50" | "p99" => latency_marks.clone(),
            _ => Vec::new(),
        };
        let build = |curve: bool| -> Chart {
            // The x values: the measured ones, and between them a fitted
            // curve's.
            let mut xs = x.values.clone();
            if curve && m.key == "throughput" && !fits.is_empty() && xs.len() > 1 {
                xs.extend(spread(lo, hi, CURVE_POINTS, wide));
                xs.sort_by(f64::total_cmp);
                xs.dedup_by(|a, b| (*a - *b).abs() <= 1e-9 * b.abs().max(1.0));
            }
            let index = |v: f64| {
                xs.iter()
                    .position(|x| (x - v).abs() <= 1e-9 * v.abs().max(1.0))
            };
            let mut lines: Vec<Line> = Vec::new();
            for g in &groups {
                let mut l = line(g.label.clone(), m.unit, g.color);
                l.values = vec![None; xs.len()];
                let mut lo = vec![None; xs.len()];
                let mut hi = vec![None; xs.len()];
                l.dots = vec![Vec::new(); xs.len()];
                for &(xi, point) in &g.points {
                    let (Some(i), Some(p)) = (index(x.values[xi]), at(g.target, point)) else {
                        continue;
                    };
                    if let Some(f) = (m.of)(p) {
                        l.values[i] = Some(f.median * m.scale);
                        lo[i] = f.lo.map(|v| v * m.scale);
                        hi[i] = f.hi.map(|v| v * m.scale);
                    }
                    l.dots[i] = p
                        .runs
                        .iter()
                        .filter_map(|r| (m.run)(r).map(|v| v * m.scale))
                        .collect();
                }
                if lo.iter().any(Option::is_some) {
                    l.err = Some((lo, hi));
                }
                lines.push(l);
            }
            if m.key == "throughput" {
                for f in &fits {
                    let (Some(u), Some(g)) = (&f.usl, groups.iter().find(|g| g.target == f.target))
                    else {
                        continue;
                    };
                    let mut l = line(
                        trf(lang, "{} — USL fit", &[&state.targets[f.target]]),
                        m.unit,
                        g.color,
                    );
                    l.dash = true;
                    l.values = xs.iter().map(|&n| Some(u.predict(n))).collect();
                    lines.push(l);
                }
            }
            // Chinese sentences follow each other without a space.
            let sep = if lang == Lang::En { " " } else { "" };
            let mut note = t(m.note).to_string();
            note.push_str(sep);
            note.push_str(t(if numeric {
                "The line joins the medians; the bars are their 95% confidence intervals (a point needs 6 runs for one)."
            } else {
                "The bar across is the median; the whiskers are its 95% confidence interval (a point needs 6 runs for one)."
            }));
            if m.key == "throughput" && !fits.is_empty() {
                note.push_str(sep);
                note.push_str(t(
                    "The dashed curve is the Universal Scalability Law fitted to the medians.",
                ));
            }
            if !marks.is_empty() {
                note.push_str(sep);
                note.push_str(t(if m.key == "throughput" {
                    "The vertical line marks the knee: beyond it throughput grows much more slowly."
                } else {
                    "The vertical line marks where latency departs: beyond it latency climbs steeply."
                }));
            }
            Chart {
                id: format!("lab-{}", m.key),
                title: t(m.title).into(),
                kind: if numeric { Kind::Sweep } else { Kind::Groups },
                note,
                x: xs,
                lines,
                log: wide,
                axis: Axis {
                    name: x.name.clone(),
                    ticks: x.ticks.clone(),
                    marks: marks.clone(),
                    log_first: geometric,
                },
            }
        };
        let c = build(true);
        let any = c.lines.iter().any(|l| l.dots.iter().any(|d| !d.is_empty()));
        let errors = m.key == "errors"
            && c.lines
                .iter()
                .all(|l| l.dots.iter().flatten().all(|v| *v == 0.0));
        if !any || errors {
            match m.key {
                "p99" => out.missing.push(trf(
                    lang,
                    "No p99: a run needs 10,000 responses for one, and these had at most {}.",
                    &[&report::count(
                        a.points
                            .iter()
                            .flat_map(|p| &p.runs)
                            .map(|r| r.responses)
                            .max()
                            .unwrap_or(0),
                    )],
                )),
                "errors" if any => out.missing.push(t("No errors in any run.").into()),
                _ => {}
            }
            continue;
        }
        let table = if numeric {
            build(false)
        } else if !sweep {
            // One column per target: the table says it in one line.
            let mut l = line(t("median"), m.unit, RUN_COLORS[0]);
            l.values = c
                .lines
                .iter()
                .enumerate()
                .map(|(i, g)| g.values.get(i).copied().flatten())
                .collect();
            let err = |k: fn(&Band) -> &Values| {
                c.lines
                    .iter()
                    .enumerate()
                    .map(|(i, g)| g.err.as_ref().and_then(|e| k(e).get(i).copied().flatten()))
                    .collect::<Vec<_>>()
            };
            l.err = Some((err(|e| &e.0), err(|e| &e.1)));
            Chart {
                lines: vec![l],
                ..c.clone()
            }
        } else {
            c.clone()
        };
        out.drawn.push((c, table));
    }
    out
}

/// The comparisons with the baseline, each verdict in a word and a
/// sentence.
fn verdicts(w: &mut impl Write, state: &State, a: &Analysis, lang: Lang) -> io::Result<()> {
    if a.comparisons.is_empty() {
        return Ok(());
    }
    let t = |en: &'static str| tr(lang, en);
    writeln!(
        w,
        "<section class=\"compare\">\n<h2>{}</h2>\n<p class=\"hint\">{}</p>",
        esc(&trf(lang, "Compared with {}", &[&state.baseline_name()])),
        esc(&method(state, a, lang))
    )?;
    writeln!(
        w,
        "<table class=\"verdicts\"><thead><tr><th class=\"text\">{}</th><th class=\"text\">{}</th><th class=\"text\">{}</th><th class=\"text\">{}</th><th class=\"text\">{}</th></tr></thead><tbody>",
        t("target"),
        t("point"),
        t("metric"),
        t("verdict"),
        t("in words")
    )?;
    for c in &a.comparisons {
        let (word, class) = words::verdict(lang, &c.verdict);
        writeln!(
            w,
            "<tr class=\"{class}\"><td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text\"><span class=\"verdict-word {class}\">{}</span></td><td class=\"text\">{}</td></tr>",
            esc(&state.targets[c.target]),
            esc(&point_label(&state.points[c.point])),
            esc(&words::metric(lang, &c.metric)),
            esc(word),
            esc(&words::experiment_comparison(lang, c, state.practical))
        )?;
    }
    writeln!(w, "</tbody></table>\n</section>")
}

/// The Universal Scalability Law and the knee, per target.
fn scalability(w: &mut impl Write, state: &State, a: &Analysis, lang: Lang) -> io::Result<()> {
    if a.sweeps.is_empty() {
        return Ok(());
    }
    writeln!(
        w,
        "<section class=\"scalability\">\n<h2>{}</h2>",
        tr(lang, "Scalability")
    )?;
    for f in &a.sweeps {
        writeln!(
            w,
            "<h3>{}</h3>\n<ul>",
            esc(&trf(
                lang,
                "Scalability of {} (throughput against {}, Universal Scalability Law)",
                &[&state.targets[f.target], &f.param]
            ))
        )?;
        let usl = f.usl.as_ref().map_or_else(
            || {
                tr(
                    lang,
                    "no fit (too few points, or the points do not follow the law)",
                )
                .to_string()
            },
            |u| words::usl(lang, u),
        );
        writeln!(w, "<li>{}</li>", esc(&usl))?;
        if let Some(k) = f.knee {
            writeln!(w, "<li>{}</li>", esc(&knee(&f.param, k, lang)))?;
        }
        if let Some(k) = f.latency_knee {
            writeln!(w, "<li>{}</li>", esc(&latency_knee(f, k, lang)))?;
        }
        if !f.excluded.is_empty() {
            writeln!(
                w,
                "<li>{}</li>",
                esc(&trf(
                    lang,
                    "left out (the client was the limit): {}",
                    &[&f.excluded.join(", ")]
                ))
            )?;
        }
        writeln!(w, "</ul>")?;
    }
    writeln!(w, "</section>")
}

/// Every point's figures, and its runs linked to their own pages.
fn points(
    w: &mut impl Write,
    state: &State,
    a: &Analysis,
    link: &dyn Fn(&Run) -> Option<String>,
    lang: Lang,
) -> io::Result<()> {
    let t = |en: &'static str| tr(lang, en);
    let monitored = a.points.iter().any(|p| p.server_cpu_ms.is_some());
    writeln!(
        w,
        "<section class=\"details\">\n<h2>{}</h2>\n<p class=\"hint\">{}</p>",
        t("Per point"),
        t("Median [95% confidence interval] over repetitions. Each run's number opens its own report.")
    )?;
    write!(
        w,
        "<table class=\"wide points\"><thead><tr><th class=\"text\">{}</th><th class=\"text\">{}</th><th class=\"text\">{}</th><th>{}</th><th>p50</th><th>p99</th><th>p99.9</th><th>{}</th>",
        t("target"),
        t("point"),
        t("runs"),
        t("responses/s"),
        t("errors")
    )?;
    if monitored {
        write!(w, "<th>{}</th>", t("server CPU/request"))?;
    }
    writeln!(w, "</tr></thead><tbody>")?;
    for p in &a.points {
        let mut runs: Vec<&Run> = state
            .runs
            .iter()
            .filter(|r| r.target == p.target && r.point == p.point)
            .collect();
        runs.sort_by_key(|r| r.block);
        let cells: Vec<String> = runs
            .iter()
            .map(|r| {
                let rep = r.block + 1;
                let title = |what: &str| esc(&trf(lang, "repetition {}: {}", &[&rep, &what]));
                match (r.status, link(r)) {
                    (Status::Done, Some(href)) => {
                        let flag = if p.left_out.contains(&rep) {
                            " class=\"left-out\""
                        } else if p.outliers.contains(&rep) {
                            " class=\"outlier\""
                        } else {
                            ""
                        };
                        format!(
                            "<a href=\"{}\"{flag} title=\"{}\">{rep}</a>",
                            esc(&href),
                            esc(&trf(lang, "repetition {}", &[&rep]))
                        )
                    }
                    (Status::Done, None) => format!("<span>{rep}</span>"),
                    (Status::Failed, _) => format!(
                        "<span class=\"fail\" title=\"{}\">✗{rep}</span>",
                        title(r.note.as_deref().unwrap_or(t("failed")))
                    ),
                    (Status::Skipped, _) => format!(
                        "<span class=\"skipped\" title=\"{}\">–</span>",
                        title(r.note.as_deref().unwrap_or(t("skipped")))
                    ),
                    (Status::Pending, _) => format!(
                        "<span class=\"skipped\" title=\"{}\">·</span>",
                        title(t("to go"))
                    ),
                }
            })
            .collect();
        write!(
            w,
            "<tr><td class=\"text\">{}</td><td class=\"text\">{}</td><td class=\"text runlinks\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            esc(&state.targets[p.target]),
            esc(&point_label(&state.points[p.point])),
            cells.join(" "),
            esc(&fig(&p.rps, "", lang)),
            esc(&fig(&p.p50_ms, " ms", lang)),
            esc(&crate::render::tail_fig(&p.p99_tail, &p.p99_ms, lang)),
            esc(&fig(&p.p999_ms, " ms", lang)),
            p.errors_pct
                .as_ref()
                .map_or("—".into(), |f| format!("{:.2}%", f.median)),
        )?;
        if monitored {
            write!(w, "<td>{}</td>", esc(&fig(&p.server_cpu_ms, " ms", lang)))?;
        }
        writeln!(w, "</tr>")?;
    }
    writeln!(w, "</tbody></table>\n</section>")
}

/// What a reader should know: runs flagged or left out, intervals not
/// given.
fn notes(w: &mut impl Write, state: &State, a: &Analysis, lang: Lang) -> io::Result<()> {
    let mut notes: Vec<String> = a
        .points
        .iter()
        .flat_map(|p| flags(state, p, lang))
        .collect();
    if a.points
        .iter()
        .any(|p| p.rps.as_ref().is_some_and(|f| f.lo.is_none()))
    {
        notes.push(
            tr(lang, "No interval where fewer than 6 runs count: an exact 95% interval of a median needs 6.").into(),
        );
    }
    if notes.is_empty() {
        return Ok(());
    }
    writeln!(
        w,
        "<section class=\"notes-section\">\n<h2>{}</h2>\n<ul class=\"notes\">",
        tr(lang, "Notes")
    )?;
    for n in notes {
        writeln!(w, "<li>{}</li>", esc(&n))?;
    }
    writeln!(w, "</ul>\n</section>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_pages_sit_beside_their_results() {
        assert_eq!(
            run_page("runs/a/connections=8/rep-2.json", Lang::En),
            "runs/a/connections=8/rep-2.html"
        );
        assert_eq!(
            run_page("runs/a/-/rep-2.json", Lang::Zh),
            "runs/a/-/rep-2.zh.html"
        );
    }

    #[test]
    fn links_from_another_folder() {
        let p = |s: &str| Path::new(s).to_path_buf();
        assert_eq!(link_prefix(&p("/x/exp"), &p("/x/exp")), "");
        assert_eq!(link_prefix(&p("/x"), &p("/x/exp")), "exp/");
        assert_eq!(link_prefix(&p("/x/pages"), &p("/x/exp")), "../exp/");
        assert_eq!(link_prefix(&p("/x/a/b"), &p("/y")), "../../../y/");
        assert_eq!(link_prefix(&p("."), &p("./exp")), "exp/");
    }

    fn state(points: serde_json::Value, targets: &[&str], runs: serde_json::Value) -> State {
        serde_json::from_value(serde_json::json!({
            "schema": "yace.experiment.v1", "name": "t <&>", "file": "t.toml",
            "fingerprint": "0", "seed": 1, "order": "randomized", "repetitions": 1,
            "targets": targets, "points": points, "baseline": 0, "practical": 0.02,
            "runs": runs,
        }))
        .unwrap()
    }

    #[test]
    fn the_x_axis_is_the_first_swept_parameter() {
        use serde_json::json;
        let s = state(
            json!([
                [["connections", "8"], ["var.children", "4"]],
                [["connections", "2"], ["var.children", "4"]],
                [["connections", "8"], ["var.children", "8"]]
            ]),
            &["a"],
            json!([]),
        );
        let x = x_axis(&s, Lang::En);
        assert_eq!(
            (x.name.as_str(), &x.values[..]),
            ("connections", &[2.0, 8.0][..])
        );
        assert_eq!(x.of_point, [Some(1), Some(0), Some(1)]);
        // A line per value of the other parameters.
        let g = groups(&s, &x);
        let lines: Vec<(&str, &[(usize, usize)])> = g
            .iter()
            .map(|g| (g.label.as_str(), &g.points[..]))
            .collect();
        assert_eq!(
            lines,
            [
                ("a · children=4", &[(1, 0), (0, 1)][..]),
                ("a · children=8", &[(1, 2)][..])
            ]
        );
        // Values that are not numbers are named.
        let s = state(
            json!([[["keepalive", "true"]], [["keepalive", "false"]]]),
            &["a", "b"],
            json!([]),
        );
        let x = x_axis(&s, Lang::En);
        assert_eq!(x.ticks, ["true", "false"]);
        assert_eq!(x.values, [0.0, 1.0]);
        // Nothing swept: each target is a column.
        let s = state(json!([[]]), &["before", "after"], json!([]));
        let x = x_axis(&s, Lang::Zh);
        assert_eq!(x.name, "目标");
        assert_eq!(x.ticks, ["before", "after"]);
        let g = groups(&s, &x);
        assert_eq!(g[1].points, [(1, 0)]);
    }

    #[test]
    fn an_experiment_not_yet_run_still_has_a_page() {
        let s = state(
            serde_json::json!([[["connections", "1"]], [["connections", "4"]]]),
            &["a"],
            serde_json::json!([
                {"id": 0, "block": 0, "target": 0, "point": 1, "status": "failed",
                 "result": null, "started_at": null, "note": "refused <b>"},
                {"id": 1, "block": 0, "target": 0, "point": 0, "status": "pending",
                 "result": null, "started_at": null, "note": null}
            ]),
        );
        let a = crate::analysis::analyze(&s, |_| Err("unused".into()));
        let mut out = Vec::new();
        page(&mut out, &s, &a, &|_| None, Lang::En).unwrap();
        let p = String::from_utf8(out).unwrap();
        assert!(p.contains("<h1>t &lt;&amp;&gt;</h1>"), "escaped");
        assert!(p.contains("0 of 2 runs done, with problems"));
        assert!(p.contains("a connections=4, repetition 1: failed: refused &lt;b&gt;"));
        assert!(p.contains("`yace lab resume DIR` does the rest"));
        // Nothing measured: no chart, and no link.
        assert!(!p.contains("<div class=\"plot\"") && !p.contains("<a href"));
        assert!(p.contains("title=\"repetition 1: refused &lt;b&gt;\">✗1</span>"));
    }

    #[test]
    fn a_curve_spreads_evenly() {
        let xs = spread(1.0, 100.0, 3, true);
        assert!((xs[1] - 10.0).abs() < 1e-9, "{xs:?}");
        assert_eq!(spread(0.0, 10.0, 3, false), vec![0.0, 5.0, 10.0]);
    }
}
