//! An experiment's analysis as text, Markdown and CSV.

use crate::analysis::{Analysis, Figure, PointStats};
use crate::experiment::point_label;
use crate::state::{State, Status};
use std::fmt::Write as _;

fn num(x: f64) -> String {
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
fn fig(f: &Option<Figure>, unit: &str) -> String {
    match f {
        None => "not enough samples".into(),
        Some(f) => match (f.lo, f.hi) {
            (Some(lo), Some(hi)) => format!("{}{unit} [{}–{}]", num(f.median), num(lo), num(hi)),
            _ => format!("{}{unit}", num(f.median)),
        },
    }
}

fn header(state: &State) -> String {
    let done = state.count(Status::Done);
    let mut s = format!(
        "Experiment {} — {done} of {} runs done ({} repetitions, {} order, seed {})\n",
        state.name,
        state.runs.len(),
        state.repetitions,
        if state.order == "randomized" {
            "randomized-block"
        } else {
            "sequential"
        },
        state.seed
    );
    let skipped = state.count(Status::Skipped);
    let failed = state.count(Status::Failed);
    if skipped + failed > 0 {
        let _ = writeln!(s, "  {skipped} skipped by a stop rule, {failed} failed");
    }
    s
}

fn flags(state: &State, p: &PointStats) -> Vec<String> {
    let mut out = Vec::new();
    let name = format!(
        "{} {}",
        state.targets[p.target],
        point_label(&state.points[p.point])
    );
    for r in &p.outliers {
        out.push(format!(
            "{name}: repetition {r} lies far from the median (an outlier, kept)"
        ));
    }
    for r in p.runs.iter().filter(|r| p.left_out.contains(&r.rep)) {
        let why = if r.saturated {
            "the client was the limit"
        } else {
            "its throughput drifted during the run"
        };
        out.push(format!("{name}: repetition {} left out: {why}", r.rep));
    }
    out
}

/// The whole analysis, for a terminal.
pub fn text(state: &State, a: &Analysis) -> String {
    let mut s = header(state);
    let monitored = a.points.iter().any(|p| p.server_cpu_ms.is_some());
    let few = a
        .points
        .iter()
        .any(|p| p.rps.as_ref().is_some_and(|f| f.lo.is_none()));
    let _ = writeln!(
        s,
        "\nPer point: median [95% confidence interval] over repetitions"
    );
    let tw = state
        .targets
        .iter()
        .map(|t| t.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let pw = state
        .points
        .iter()
        .map(|p| point_label(p).len())
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = writeln!(
        s,
        "  {:<tw$}  {:<pw$}  {:>4}  {:<26} {:<22} {:<24} {:<10}{}",
        "target",
        "point",
        "runs",
        "responses/s",
        "p50",
        "p99",
        "errors",
        if monitored { " server CPU/request" } else { "" }
    );
    let mut notes = Vec::new();
    for p in &a.points {
        let _ = writeln!(
            s,
            "  {:<tw$}  {:<pw$}  {:>4}  {:<26} {:<22} {:<24} {:<10}{}",
            state.targets[p.target],
            point_label(&state.points[p.point]),
            p.runs.len(),
            fig(&p.rps, ""),
            fig(&p.p50_ms, " ms"),
            fig(&p.p99_ms, " ms"),
            p.errors_pct
                .as_ref()
                .map_or("—".into(), |f| format!("{:.2}%", f.median)),
            if monitored {
                format!(" {}", fig(&p.server_cpu_ms, " ms"))
            } else {
                String::new()
            }
        );
        notes.extend(flags(state, p));
    }
    if few {
        let _ = writeln!(
            s,
            "  (no interval where fewer than 6 runs count: an exact 95% interval of a median needs 6)"
        );
    }
    for n in notes {
        let _ = writeln!(s, "  note: {n}");
    }
    if !a.comparisons.is_empty() {
        let _ = writeln!(
            s,
            "\nCompared with {} (Mann-Whitney U, Holm-adjusted over {} comparison{}; a change under {:.0}% counts as none)",
            state.targets[state.baseline],
            a.comparisons.len(),
            if a.comparisons.len() == 1 { "" } else { "s" },
            state.practical * 100.0
        );
        for c in &a.comparisons {
            let _ = writeln!(
                s,
                "  {:<tw$}  {:<pw$}  {:<12} {}",
                state.targets[c.target],
                point_label(&state.points[c.point]),
                c.metric,
                c.words
            );
        }
    }
    for f in &a.sweeps {
        let _ = writeln!(
            s,
            "\nScalability of {} (throughput against {}, Universal Scalability Law)",
            state.targets[f.target], f.param
        );
        match &f.usl {
            Some(u) => {
                let _ = writeln!(s, "  {}", u.describe());
            }
            None => {
                let _ = writeln!(
                    s,
                    "  no fit (too few points, or the points do not follow the law)"
                );
            }
        }
        if let Some(k) = f.knee {
            let _ = writeln!(
                s,
                "  knee at {} = {}: beyond it throughput grows much more slowly",
                f.param,
                num(k)
            );
        }
        if !f.excluded.is_empty() {
            let _ = writeln!(
                s,
                "  left out (the client was the limit): {}",
                f.excluded.join(", ")
            );
        }
    }
    for p in &a.problems {
        let _ = writeln!(s, "  problem: {p}");
    }
    s
}

/// The same as Markdown tables.
pub fn markdown(state: &State, a: &Analysis) -> String {
    let mut s = format!("# {}\n\n", state.name);
    let _ = writeln!(s, "{}", header(state).trim_end());
    let _ = writeln!(
        s,
        "\n## Per point\n\nMedian [95% confidence interval] over repetitions.\n"
    );
    let _ = writeln!(
        s,
        "| target | point | runs | responses/s | p50 | p99 | p99.9 | errors | server CPU/request |"
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
            fig(&p.rps, ""),
            fig(&p.p50_ms, " ms"),
            fig(&p.p99_ms, " ms"),
            fig(&p.p999_ms, " ms"),
            p.errors_pct
                .as_ref()
                .map_or("—".into(), |f| format!("{:.2}%", f.median)),
            p.server_cpu_ms
                .as_ref()
                .map_or("—".into(), |_| fig(&p.server_cpu_ms, " ms")),
        );
        notes.extend(flags(state, p));
    }
    for n in notes {
        let _ = writeln!(s, "\n- {n}");
    }
    if !a.comparisons.is_empty() {
        let _ = writeln!(
            s,
            "\n## Compared with {}\n\nMann-Whitney U, Holm-adjusted over {} comparisons; a change under {:.0}% counts as none.\n",
            state.targets[state.baseline],
            a.comparisons.len(),
            state.practical * 100.0
        );
        let _ = writeln!(s, "| target | point | metric | verdict |");
        let _ = writeln!(s, "| --- | --- | --- | --- |");
        for c in &a.comparisons {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                state.targets[c.target],
                point_label(&state.points[c.point]),
                c.metric,
                c.words
            );
        }
    }
    for f in &a.sweeps {
        let _ = writeln!(s, "\n## Scalability of {}\n", state.targets[f.target]);
        if let Some(u) = &f.usl {
            let _ = writeln!(s, "- {}", u.describe());
        }
        if let Some(k) = f.knee {
            let _ = writeln!(s, "- knee at {} = {}", f.param, num(k));
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
