//! An experiment's analysis as text, Markdown and CSV (text and Markdown
//! in English or Chinese; CSV is for machines).

use crate::analysis::{Analysis, Figure, PointStats, SweepFit};
use crate::experiment::point_label;
use crate::state::{State, Status};
use crate::words;
use report::lang::{tr, trf, Lang};
use report::{pad, width};
use std::fmt::Write as _;

/// A figure as the reports print it: `87.0`, `1,375`, `0.57`.
pub(crate) fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        let s = format!("{}", x as i64);
        if x.abs() < 1000.0 {
            return s;
        }
    }
    if x >= 100.0 {
        let s = format!("{:.0}", x);
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// `1,234 [1,200–1,250]`, or the median alone with too few runs.
pub(crate) fn fig(f: &Option<Figure>, unit: &str, lang: Lang) -> String {
    match f {
        None => tr(lang, "not enough samples").into(),
        Some(f) => match (f.lo, f.hi) {
            (Some(lo), Some(hi)) => format!("{}{unit} [{}–{}]", num(f.median), num(lo), num(hi)),
            _ => format!("{}{unit}", num(f.median)),
        },
    }
}

/// A pooled tail: `212 ms [180–260]`, open above with few responses
/// (`212 ms [≥ 180]`); the runs' median p99 when there is no histogram.
pub(crate) fn tail_fig(t: &Option<crate::stats::Tail>, f: &Option<Figure>, lang: Lang) -> String {
    match t {
        None => fig(f, " ms", lang),
        Some(t) => match (t.lo, t.hi) {
            (Some(lo), Some(hi)) => format!("{} ms [{}–{}]", num(t.value), num(lo), num(hi)),
            (Some(lo), None) => format!("{} ms [≥ {}]", num(t.value), num(lo)),
            _ => format!("{} ms", num(t.value)),
        },
    }
}

/// `randomized-block` or `sequential`.
pub(crate) fn order(state: &State, lang: Lang) -> &'static str {
    tr(
        lang,
        if state.order == "randomized" {
            "randomized-block"
        } else {
            "sequential"
        },
    )
}

fn header(state: &State, lang: Lang) -> String {
    let done = state.count(Status::Done);
    let mut s = trf(
        lang,
        "Experiment {} — {} of {} runs done ({} repetitions, {} order, seed {})",
        &[
            &state.name,
            &done,
            &state.runs.len(),
            &state.repetitions,
            &order(state, lang),
            &state.seed,
        ],
    );
    s.push('\n');
    let skipped = state.count(Status::Skipped);
    let failed = state.count(Status::Failed);
    if skipped + failed > 0 {
        let _ = writeln!(
            s,
            "{}",
            trf(
                lang,
                "  {} skipped by a stop rule, {} failed",
                &[&skipped, &failed]
            )
        );
    }
    s
}

/// What a reader should know of a point's repetitions: outliers, and runs
/// left out of its intervals.
pub(crate) fn flags(state: &State, p: &PointStats, lang: Lang) -> Vec<String> {
    let mut out = Vec::new();
    let name = format!(
        "{} {}",
        state.targets[p.target],
        point_label(&state.points[p.point])
    );
    for r in &p.outliers {
        out.push(trf(
            lang,
            "{}: repetition {} lies far from the median (an outlier, kept)",
            &[&name, r],
        ));
    }
    for r in p.runs.iter().filter(|r| r.behind) {
        out.push(trf(
            lang,
            "{}: repetition {}: the server fell behind the rate offered; its throughput is its capacity, its latency grew with the run's length",
            &[&name, &r.rep],
        ));
    }
    for r in p.runs.iter().filter(|r| p.left_out.contains(&r.rep)) {
        let why = if r.saturated {
            "the client was the limit"
        } else {
            "its throughput drifted during the run"
        };
        out.push(trf(
            lang,
            "{}: repetition {} left out: {}",
            &[&name, &r.rep, &tr(lang, why)],
        ));
    }
    out
}

/// A right-aligned cell of `w` terminal columns.
fn rpad(s: &str, w: usize) -> String {
    format!("{}{s}", " ".repeat(w.saturating_sub(width(s))))
}

/// The comparisons' heading: what they are and the threshold.
pub(crate) fn compared_with(state: &State, a: &Analysis, lang: Lang) -> String {
    trf(
        lang,
        if a.comparisons.len() == 1 {
            "Compared with {} (Welch's t on logs, Holm-adjusted over {} comparison; a change under {}% counts as none)"
        } else {
            "Compared with {} (Welch's t on logs, Holm-adjusted over {} comparisons; a change under {}% counts as none)"
        },
        &[
            &state.baseline_name(),
            &a.comparisons.len(),
            &format!("{:.0}", state.practical * 100.0),
        ],
    )
}

/// How the comparisons were made, in a sentence.
pub(crate) fn method(state: &State, a: &Analysis, lang: Lang) -> String {
    trf(
        lang,
        if a.comparisons.len() == 1 {
            "Welch's t on logs, Holm-adjusted over {} comparison; a change under {}% counts as none."
        } else {
            "Welch's t on logs, Holm-adjusted over {} comparisons; a change under {}% counts as none."
        },
        &[
            &a.comparisons.len(),
            &format!("{:.0}", state.practical * 100.0),
        ],
    )
}

/// The knee of a sweep, in a sentence.
pub(crate) fn knee(param: &str, k: f64, lang: Lang) -> String {
    trf(
        lang,
        "knee at {} = {}: beyond it throughput grows much more slowly",
        &[&param, &num(k)],
    )
}

/// Where a sweep's latency departs, in a sentence.
pub(crate) fn latency_knee(f: &SweepFit, k: f64, lang: Lang) -> String {
    trf(
        lang,
        "{} departs at {} = {}: beyond it latency climbs steeply",
        &[&f.latency_metric, &f.param, &num(k)],
    )
}

/// The whole analysis, for a terminal.
pub fn text(state: &State, a: &Analysis) -> String {
    text_in(state, a, Lang::En)
}

/// [`text`] in `lang`.
pub fn text_in(state: &State, a: &Analysis, lang: Lang) -> String {
    let t = |en: &'static str| tr(lang, en);
    let mut s = header(state, lang);
    let monitored = a.points.iter().any(|p| p.server_cpu_ms.is_some());
    let few = a
        .points
        .iter()
        .any(|p| p.rps.as_ref().is_some_and(|f| f.lo.is_none()));
    let _ = writeln!(
        s,
        "\n{}",
        t("Per point: median [95% confidence interval] over repetitions")
    );
    let tw = state
        .targets
        .iter()
        .map(|n| width(n))
        .chain([width(t("target"))])
        .max()
        .unwrap_or(6)
        .max(6);
    let pw = state
        .points
        .iter()
        .map(|p| width(&point_label(p)))
        .chain([width(t("point"))])
        .max()
        .unwrap_or(5)
        .max(5);
    let row = |cells: [&str; 7], cpu: Option<&str>| {
        format!(
            "  {}  {}  {}  {} {} {} {}{}",
            pad(cells[0], tw),
            pad(cells[1], pw),
            rpad(cells[2], 4),
            pad(cells[3], 26),
            pad(cells[4], 22),
            pad(cells[5], 24),
            pad(cells[6], 10),
            cpu.map_or(String::new(), |c| format!(" {c}"))
        )
    };
    let _ = writeln!(
        s,
        "{}",
        row(
            [
                t("target"),
                t("point"),
                t("runs"),
                t("responses/s"),
                "p50",
                "p99",
                t("errors")
            ],
            monitored.then(|| t("server CPU/request"))
        )
    );
    let mut notes = Vec::new();
    for p in &a.points {
        let errors = p
            .errors_pct
            .as_ref()
            .map_or("—".into(), |f| format!("{:.2}%", f.median));
        let cpu = fig(&p.server_cpu_ms, " ms", lang);
        let _ = writeln!(
            s,
            "{}",
            row(
                [
                    &state.targets[p.target],
                    &point_label(&state.points[p.point]),
                    &p.runs.len().to_string(),
                    &fig(&p.rps, "", lang),
                    &fig(&p.p50_ms, " ms", lang),
                    &tail_fig(&p.p99_tail, &p.p99_ms, lang),
                    &errors,
                ],
                monitored.then_some(cpu.as_str())
            )
        );
        notes.extend(flags(state, p, lang));
    }
    if a.points.iter().any(|p| p.p99_tail.is_some()) {
        let _ = writeln!(
            s,
            "{}",
            trf(
                lang,
                "  (p99: every run's responses merged, with its exact 95% order-statistic interval; ≥ where too few lie beyond it for an upper bound; about {} responses a point put it within p98.5–p99.5)",
                &[&num(crate::stats::samples_for(0.99, crate::analysis::LEVEL) as f64)]
            )
        );
    }
    if few {
        let _ = writeln!(
            s,
            "{}",
            t("  (no interval where fewer than 6 runs count: an exact 95% interval of a median needs 6)")
        );
    }
    for n in notes {
        let _ = writeln!(s, "  {}{n}", t("note: "));
    }
    if !a.comparisons.is_empty() {
        let _ = writeln!(s, "\n{}", compared_with(state, a, lang));
        let mw = a
            .comparisons
            .iter()
            .map(|c| width(&words::metric(lang, &c.metric)))
            .max()
            .unwrap_or(0)
            .max(12);
        for c in &a.comparisons {
            let _ = writeln!(
                s,
                "  {}  {}  {} {}",
                pad(&state.targets[c.target], tw),
                pad(&point_label(&state.points[c.point]), pw),
                pad(&words::metric(lang, &c.metric), mw),
                words::experiment_comparison(lang, c, state.practical)
            );
        }
    }
    for f in &a.sweeps {
        let _ = writeln!(
            s,
            "\n{}",
            trf(
                lang,
                "Scalability of {} (throughput against {}, Universal Scalability Law)",
                &[&state.targets[f.target], &f.param]
            )
        );
        match &f.usl {
            Some(u) => {
                let _ = writeln!(s, "  {}", words::usl(lang, u));
            }
            None => {
                let _ = writeln!(
                    s,
                    "  {}",
                    t("no fit (too few points, or the points do not follow the law)")
                );
            }
        }
        if let Some(k) = f.knee {
            let _ = writeln!(s, "  {}", knee(&f.param, k, lang));
        }
        if let Some(k) = f.latency_knee {
            let _ = writeln!(s, "  {}", latency_knee(f, k, lang));
        }
        if !f.excluded.is_empty() {
            let _ = writeln!(
                s,
                "  {}",
                trf(
                    lang,
                    "left out (the client was the limit): {}",
                    &[&f.excluded.join(", ")]
                )
            );
        }
    }
    for p in &a.problems {
        let _ = writeln!(s, "  {}", trf(lang, "problem: {}", &[p]));
    }
    s
}

/// The same as Markdown tables.
pub fn markdown(state: &State, a: &Analysis) -> String {
    markdown_in(state, a, Lang::En)
}

/// [`markdown`] in `lang`.
pub fn markdown_in(state: &State, a: &Analysis, lang: Lang) -> String {
    let t = |en: &'static str| tr(lang, en);
    let mut s = format!("# {}\n\n", state.name);
    let _ = writeln!(s, "{}", header(state, lang).trim_end());
    let _ = writeln!(
        s,
        "\n## {}\n\n{}\n",
        t("Per point"),
        t("Median [95% confidence interval] over repetitions.")
    );
    let _ = writeln!(
        s,
        "| {} | {} | {} | {} | p50 | p99 | p99.9 | {} | {} |",
        t("target"),
        t("point"),
        t("runs"),
        t("responses/s"),
        t("errors"),
        t("server CPU/request")
    );
    let _ = writeln!(
        s,
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    let mut notes = Vec::new();
    for p in &a.points {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            state.targets[p.target],
            point_label(&state.points[p.point]),
            p.runs.len(),
            fig(&p.rps, "", lang),
            fig(&p.p50_ms, " ms", lang),
            tail_fig(&p.p99_tail, &p.p99_ms, lang),
            fig(&p.p999_ms, " ms", lang),
            p.errors_pct
                .as_ref()
                .map_or("—".into(), |f| format!("{:.2}%", f.median)),
            p.server_cpu_ms
                .as_ref()
                .map_or("—".into(), |_| fig(&p.server_cpu_ms, " ms", lang)),
        );
        notes.extend(flags(state, p, lang));
    }
    for n in notes {
        let _ = writeln!(s, "\n- {n}");
    }
    if !a.comparisons.is_empty() {
        let _ = writeln!(
            s,
            "\n## {}\n\n{}\n",
            trf(lang, "Compared with {}", &[&state.baseline_name()]),
            method(state, a, lang)
        );
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            t("target"),
            t("point"),
            t("metric"),
            t("verdict")
        );
        let _ = writeln!(s, "| --- | --- | --- | --- |");
        for c in &a.comparisons {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                state.targets[c.target],
                point_label(&state.points[c.point]),
                words::metric(lang, &c.metric),
                words::experiment_comparison(lang, c, state.practical)
            );
        }
    }
    for f in &a.sweeps {
        let _ = writeln!(
            s,
            "\n## {}\n",
            trf(lang, "Scalability of {}", &[&state.targets[f.target]])
        );
        if let Some(u) = &f.usl {
            let _ = writeln!(s, "- {}", words::usl(lang, u));
        }
        if let Some(k) = f.knee {
            let _ = writeln!(
                s,
                "- {}",
                trf(lang, "knee at {} = {}", &[&f.param, &num(k)])
            );
        }
        if let Some(k) = f.latency_knee {
            let _ = writeln!(
                s,
                "- {}",
                trf(
                    lang,
                    "{} departs at {} = {}",
                    &[&f.latency_metric, &f.param, &num(k)]
                )
            );
        }
    }
    s
}

/// One row per target and point.
pub fn csv(state: &State, a: &Analysis) -> String {
    let mut s = String::from(
        "target,point,runs,rps_median,rps_lo,rps_hi,rps_mean,rps_sd,p50_ms,p99_ms,p99_lo,p99_hi,p999_ms,errors_pct,server_cpu_ms,outliers,left_out\n",
    );
    let o = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
    let q = |t: &str| {
        if t.contains([',', '"']) {
            format!("\"{}\"", t.replace('"', "\"\""))
        } else {
            t.to_string()
        }
    };
    for p in &a.points {
        let f = |x: &Option<Figure>| x.as_ref().map(|f| f.median);
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            q(&state.targets[p.target]),
            q(&point_label(&state.points[p.point])),
            p.runs.len(),
            o(f(&p.rps)),
            o(p.rps.as_ref().and_then(|f| f.lo)),
            o(p.rps.as_ref().and_then(|f| f.hi)),
            o(p.rps.as_ref().map(|f| f.mean)),
            o(p.rps.as_ref().map(|f| f.sd)),
            o(f(&p.p50_ms)),
            o(f(&p.p99_ms)),
            o(p.p99_ms.as_ref().and_then(|f| f.lo)),
            o(p.p99_ms.as_ref().and_then(|f| f.hi)),
            o(f(&p.p999_ms)),
            o(f(&p.errors_pct)),
            o(f(&p.server_cpu_ms)),
            p.outliers
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" "),
            p.left_out
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    s
}
