//! `yace compare A… -- B…`: groups of saved results (each a repetition),
//! benchstat-like — per URL and metric the two medians with their
//! intervals, the change with its bootstrap interval, Mann-Whitney U's p
//! (Holm-adjusted over the table) and a verdict in words; a geometric-mean
//! row when there are several URLs.

use crate::analysis::{compare_groups, Figure, RunFigures};
use crate::stats;
use crate::words;
use report::lang::{tr, trf, Lang};
use report::pad;
use std::fmt::Write as _;

/// One row: a metric of one URL.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub url: String,
    pub metric: &'static str,
    pub before: Option<Figure>,
    pub after: Option<Figure>,
    pub comparison: Option<stats::Comparison>,
    /// One run a side: throughput's batch-means intervals within each run.
    pub within: Option<Within>,
}

/// Throughput compared within one run a side: the mean and 95% interval of
/// each run's batch means (10 batches of its seconds). It says how steady
/// each run was, not whether the difference would hold on another day.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Within {
    pub before: (f64, f64, f64),
    pub after: (f64, f64, f64),
    /// p99 (a block bootstrap over the runs' 5-second latency intervals),
    /// not throughput (batch means of their seconds).
    pub p99: bool,
}

impl Within {
    pub fn words(&self) -> String {
        self.words_in(Lang::En)
    }

    /// [`Within::words`] in `lang`.
    pub fn words_in(&self, lang: Lang) -> String {
        let (a, alo, ahi) = self.before;
        let (b, blo, bhi) = self.after;
        let overlap = alo <= bhi && blo <= ahi;
        let n = |x: f64| {
            if self.p99 {
                format!("{x:.1} ms")
            } else {
                format!("{x:.0}")
            }
        };
        trf(
            lang,
            if self.p99 {
                "{}% within one run only: p99 by 5-second blocks {} [{}–{}] and {} [{}–{}] {}; one run a side cannot say whether it would hold again — repeat the runs"
            } else {
                "{}% within one run only: batch means {} [{}–{}] and {} [{}–{}] {}; one run a side cannot say whether it would hold again — repeat the runs"
            },
            &[
                &format!("{:+.1}", (b / a - 1.0) * 100.0),
                &n(a),
                &n(alo),
                &n(ahi),
                &n(b),
                &n(blo),
                &n(bhi),
                &tr(lang, if overlap { "overlap" } else { "do not overlap" }),
            ],
        )
    }
}

/// The table, and the geometric mean of each metric's ratio over URLs.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub rows: Vec<Row>,
    pub geomean: Vec<(&'static str, f64)>,
    pub practical: f64,
}

const METRICS: [&str; 5] = [
    "throughput",
    "p50",
    "p99",
    "errors",
    "server CPU per request",
];

fn value(r: &RunFigures, metric: &str) -> Option<f64> {
    match metric {
        "throughput" => Some(r.rps),
        "p50" => r.p50_ms,
        "p99" => r.p99_ms,
        "errors" => Some(r.errors_pct),
        "server CPU per request" => r.server_cpu_ms,
        _ => None,
    }
}

/// Builds the table; results are paired by `METHOD URL`.
pub fn table(
    before: &[(String, RunFigures)],
    after: &[(String, RunFigures)],
    practical: f64,
) -> Table {
    // One URL a side: they are the one thing compared, whatever their
    // URLs (a page before and after a change of address, two servers).
    let one = |g: &[(String, RunFigures)]| {
        let first = g.first().map(|(u, _)| u.clone());
        first.filter(|f| g.iter().all(|(u, _)| u == f))
    };
    if let (Some(a), Some(b)) = (one(before), one(after)) {
        if a != b {
            let key = format!("{a}  vs  {b}");
            let relabel = |g: &[(String, RunFigures)]| -> Vec<(String, RunFigures)> {
                g.iter().map(|(_, r)| (key.clone(), r.clone())).collect()
            };
            return table(&relabel(before), &relabel(after), practical);
        }
    }
    let mut urls: Vec<String> = Vec::new();
    for (u, _) in before.iter().chain(after) {
        if !urls.contains(u) {
            urls.push(u.clone());
        }
    }
    let mut rows = Vec::new();
    let mut typed = Vec::new();
    for url in &urls {
        for metric in METRICS {
            let side = |g: &[(String, RunFigures)]| -> Vec<f64> {
                g.iter()
                    .filter(|(u, r)| u == url && !r.saturated)
                    .filter_map(|(_, r)| value(r, metric))
                    .collect()
            };
            let (a, b) = (side(before), side(after));
            if a.is_empty() && b.is_empty() {
                continue;
            }
            // Errors: a difference between no errors and no errors is none.
            let no_errors = metric == "errors" && a.iter().chain(&b).all(|x| *x == 0.0);
            let comparable = !(a.is_empty() || b.is_empty() || no_errors);
            let c = comparable
                .then(|| compare_groups(&a, &b, metric, practical, 0x5eed ^ rows.len() as u64));
            if let Some(c) = &c {
                typed.push((rows.len(), c.clone()));
            }
            let single = |g: &[(String, RunFigures)]| -> Option<(f64, f64, f64)> {
                let runs: Vec<&RunFigures> =
                    g.iter().filter(|(u, _)| u == url).map(|(_, r)| r).collect();
                match runs.as_slice() {
                    [one] => stats::batch_means_ci(&one.per_second, 10, crate::analysis::LEVEL),
                    _ => None,
                }
            };
            let single_p99 = |g: &[(String, RunFigures)]| -> Option<(f64, f64, f64)> {
                let runs: Vec<&RunFigures> =
                    g.iter().filter(|(u, _)| u == url).map(|(_, r)| r).collect();
                match runs.as_slice() {
                    [one] => one.p99_within,
                    _ => None,
                }
            };
            let within = match metric {
                "throughput" => single(before)
                    .zip(single(after))
                    .map(|(before, after)| Within {
                        before,
                        after,
                        p99: false,
                    }),
                "p99" => single_p99(before)
                    .zip(single_p99(after))
                    .map(|(before, after)| Within {
                        before,
                        after,
                        p99: true,
                    }),
                _ => None,
            };
            rows.push(Row {
                url: url.clone(),
                metric,
                before: Figure::of(&a),
                after: Figure::of(&b),
                comparison: c,
                within,
            });
        }
    }
    let mut cs: Vec<stats::Comparison> = typed.iter().map(|(_, c)| c.clone()).collect();
    stats::apply_holm(&mut cs);
    for ((i, _), c) in typed.iter().zip(cs) {
        rows[*i].comparison = Some(c);
    }
    let geomean = if urls.len() > 1 {
        METRICS
            .iter()
            .filter_map(|m| {
                let ratios: Vec<f64> = rows
                    .iter()
                    .filter(|r| r.metric == *m)
                    .filter_map(|r| Some(r.after.as_ref()?.median / r.before.as_ref()?.median))
                    .filter(|x| x.is_finite() && *x > 0.0)
                    .collect();
                (ratios.len() == urls.len()).then(|| {
                    let g =
                        (ratios.iter().map(|x| x.ln()).sum::<f64>() / ratios.len() as f64).exp();
                    (*m, g - 1.0)
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    Table {
        rows,
        geomean,
        practical,
    }
}

fn unit(metric: &str) -> &'static str {
    match metric {
        "throughput" => "/s",
        "errors" => "%",
        _ => " ms",
    }
}

fn shown(f: &Option<Figure>, metric: &str) -> String {
    match f {
        None => "—".into(),
        Some(f) => {
            let u = unit(metric);
            let n = |x: f64| {
                if x >= 100.0 {
                    format!("{x:.0}")
                } else if x >= 10.0 {
                    format!("{x:.1}")
                } else {
                    format!("{x:.3}")
                }
            };
            match (f.lo, f.hi) {
                (Some(lo), Some(hi)) => format!("{}{u} [{}–{}]", n(f.median), n(lo), n(hi)),
                _ => format!("{}{u} (n={})", n(f.median), f.n),
            }
        }
    }
}

fn verdict(r: &Row, lang: Lang) -> String {
    match (&r.comparison, &r.within) {
        (_, Some(w)) => w.words_in(lang),
        (Some(c), None) if c.n_a == 1 && c.n_b == 1 && r.metric == "throughput" => tr(
            lang,
            "one run a side cannot say whether a difference is real: repeat the runs \
             (runs of 12 s or more also get a within-run interval)",
        )
        .into(),
        (Some(c), None) => words::comparison(lang, c, r.metric),
        (None, None) => "—".into(),
    }
}

/// For a terminal.
pub fn text(t: &Table, n_before: usize, n_after: usize) -> String {
    text_in(t, n_before, n_after, Lang::En)
}

/// [`text`] in `lang`.
pub fn text_in(t: &Table, n_before: usize, n_after: usize, lang: Lang) -> String {
    let mut s = trf(
        lang,
        "{} results -- {} results: medians [95% CI] over results; Welch's t on logs, Holm-adjusted over the table; a change under {}% counts as none",
        &[&n_before, &n_after, &format!("{:.0}", t.practical * 100.0)],
    );
    s.push('\n');
    let mut url = "";
    for r in &t.rows {
        if r.url != url {
            url = &r.url;
            let _ = writeln!(s, "\n{url}");
        }
        let _ = writeln!(
            s,
            "  {} {} {} {}",
            pad(&words::metric(lang, r.metric), 24),
            pad(&shown(&r.before, r.metric), 28),
            pad(&shown(&r.after, r.metric), 28),
            verdict(r, lang)
        );
    }
    if !t.geomean.is_empty() {
        let _ = writeln!(
            s,
            "\n{}",
            trf(
                lang,
                "geometric mean of the change over {} URLs",
                &[&t.rows
                    .iter()
                    .map(|r| &r.url)
                    .collect::<std::collections::BTreeSet<_>>()
                    .len()]
            )
        );
        for (m, g) in &t.geomean {
            let _ = writeln!(
                s,
                "  {} {:+.1}%",
                pad(&words::metric(lang, m), 24),
                g * 100.0
            );
        }
    }
    if t.rows
        .iter()
        .any(|r| r.before.as_ref().is_some_and(|f| f.lo.is_none()))
    {
        let _ = writeln!(
            s,
            "\n{}",
            tr(
                lang,
                "(no interval with fewer than 6 results a side: an exact 95% interval of a median needs 6)"
            )
        );
    }
    s
}

/// As a Markdown table.
pub fn markdown(t: &Table, n_before: usize, n_after: usize) -> String {
    markdown_in(t, n_before, n_after, Lang::En)
}

/// [`markdown`] in `lang`.
pub fn markdown_in(t: &Table, n_before: usize, n_after: usize, lang: Lang) -> String {
    let mut s = trf(
        lang,
        "{} results against {}: medians [95% CI]; Welch's t on logs, Holm-adjusted; a change under {}% counts as none.",
        &[&n_before, &n_after, &format!("{:.0}", t.practical * 100.0)],
    );
    let _ = write!(
        s,
        "\n\n| URL | {} | {} | {} | {} |\n| --- | --- | ---: | ---: | --- |\n",
        tr(lang, "metric"),
        tr(lang, "before"),
        tr(lang, "after"),
        tr(lang, "verdict")
    );
    for r in &t.rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            r.url,
            words::metric(lang, r.metric),
            shown(&r.before, r.metric),
            shown(&r.after, r.metric),
            verdict(r, lang)
        );
    }
    for (m, g) in &t.geomean {
        let _ = writeln!(
            s,
            "| {} | {} | | | {:+.1}% |",
            tr(lang, "geomean"),
            words::metric(lang, m),
            g * 100.0
        );
    }
    s
}
