//! The lab's sentences in the reader's language. English is the
//! statistics' own (`Comparison::words`, `Usl::describe`); Chinese is
//! built from their typed fields — the change, its interval, p, the runs,
//! the verdict — never by translating the English, its phrases kept in
//! `report::lang`'s one table.

use crate::analysis;
use crate::stats::{self, Bound, Comparison, Usl, Verdict};
use report::lang::{tr, trf, Lang};

/// A metric's name as the reports show it (`throughput`, `p99`…).
pub fn metric(lang: Lang, m: &str) -> String {
    if lang == Lang::En {
        return m.to_string();
    }
    match m {
        "throughput" => tr(lang, "throughput"),
        "p50" => tr(lang, "latency p50"),
        "p99" => tr(lang, "latency p99"),
        "errors" => tr(lang, "errors"),
        "server CPU per request" => tr(lang, "server CPU per request"),
        other => other,
    }
    .to_string()
}

/// A verdict in a word or two, and its class on the HTML page.
pub fn verdict(lang: Lang, v: &str) -> (&'static str, &'static str) {
    match v {
        "better" => (tr(lang, "better"), "better"),
        "worse" => (tr(lang, "worse"), "worse"),
        "too_few_runs" => (tr(lang, "too few runs"), "few"),
        _ => (tr(lang, "no difference"), "same"),
    }
}

/// An experiment's comparison as the statistics made it (for its
/// sentence): the options are those `analysis` compares with.
pub fn typed(c: &analysis::Comparison, practical: f64) -> Comparison {
    let opts = analysis::compare_groups(&[], &[], &c.metric, practical, 0).opts;
    let verdict = match c.verdict.as_str() {
        "better" => Verdict::Better,
        "worse" => Verdict::Worse,
        "too_few_runs" => Verdict::TooFewRuns {
            // Under 2 a side Welch's test is what is missing; from 2, a
            // zero figure left only the rank test.
            needed: if c.n_baseline.min(c.n_target) < stats::MIN_RUNS_WELCH {
                stats::MIN_RUNS_WELCH
            } else {
                stats::min_per_side_for(opts.alpha)
            },
        },
        _ => Verdict::NoDifference,
    };
    Comparison {
        change: c.change,
        ci: c.ci,
        p: c.p,
        // Comparisons with too few runs are left out of Holm's family.
        p_adjusted: (!matches!(verdict, Verdict::TooFewRuns { .. })).then_some(c.p_adjusted),
        exact: false,
        n_a: c.n_baseline,
        n_b: c.n_target,
        verdict,
        opts,
        small: c.small.clone(),
    }
}

/// An experiment's comparison in one sentence.
pub fn experiment_comparison(lang: Lang, c: &analysis::Comparison, practical: f64) -> String {
    match lang {
        Lang::En => c.words.clone(),
        _ => comparison(lang, &typed(c, practical), &c.metric),
    }
}

/// A comparison in one sentence: the statistics' English, or Chinese
/// built from the same fields.
pub fn comparison(lang: Lang, c: &Comparison, metric_key: &str) -> String {
    if lang == Lang::En {
        return c.words(metric_key);
    }
    // Chinese needs no space before a word, but one after a Latin one.
    let mut name = metric(lang, metric_key);
    if name.ends_with(|ch: char| ch.is_ascii_alphanumeric()) {
        name.push(' ');
    }
    let runs = if c.n_a == c.n_b {
        trf(lang, "{} runs each", &[&c.n_a])
    } else {
        trf(lang, "{} and {} runs", &[&c.n_a, &c.n_b])
    };
    let p = match c.p_adjusted {
        Some(adj) => trf(lang, "adjusted {}", &[&p_value(adj)]),
        None => p_value(c.p),
    };
    if let Verdict::TooFewRuns { needed } = c.verdict {
        return trf(
            lang,
            "too few runs to tell: the test needs ≥ {} runs per side ({})",
            &[&needed, &runs],
        );
    }
    let sized = |(lo, hi): (f64, f64)| {
        trf(
            lang,
            if c.change >= 0.0 {
                "{} higher by {}% ({}% CI {} to {}, {}, {})"
            } else {
                "{} lower by {}% ({}% CI {} to {}, {}, {})"
            },
            &[
                &name,
                &format!("{:.1}", 100.0 * c.change.abs()),
                &format!("{:.0}", 100.0 * c.opts.level),
                &format!("{:+.1}%", 100.0 * lo),
                &format!("{:+.1}%", 100.0 * hi),
                &p,
                &runs,
            ],
        )
    };
    match (c.verdict, c.ci) {
        (Verdict::Better | Verdict::Worse, Some(ci)) => sized(ci),
        (_, Some(ci)) if c.p_used() < c.opts.alpha => trf(
            lang,
            "no meaningful difference: {}, not clearly beyond ±{}%",
            &[&sized(ci), &format!("{:.0}", 100.0 * c.opts.practical)],
        ),
        _ => trf(
            lang,
            "no significant difference in {} ({}, {})",
            &[&name, &p, &runs],
        ),
    }
}

/// `p = 0.004`, `p < 0.001`.
fn p_value(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

/// A fitted Universal Scalability Law in one sentence.
pub fn usl(lang: Lang, u: &Usl) -> String {
    if lang == Lang::En {
        return u.describe();
    }
    let what = match (u.bound, u.peak_n) {
        (Bound::Coherency, Some(peak)) => trf(
            lang,
            "coherency-bound: throughput peaks near N = {}",
            &[&format!("{peak:.0}")],
        ),
        (Bound::Linear, _) => tr(lang, "scales nearly linearly over the measured range").into(),
        _ => trf(
            lang,
            "contention-bound: throughput levels off towards λ/σ = {}",
            &[&coefficient(u.lambda / u.sigma)],
        ),
    };
    trf(
        lang,
        "{} (λ = {} per client, σ = {} contention, κ = {} coherency, R² = {})",
        &[
            &what,
            &coefficient(u.lambda),
            &coefficient(u.sigma),
            &coefficient(u.kappa),
            &format!("{:.3}", u.r2),
        ],
    )
}

/// A fit's coefficient: `106.1`, `0.0357`, `9.94e-4`.
fn coefficient(x: f64) -> String {
    if !x.is_finite() {
        "∞".into()
    } else if x == 0.0 {
        "0".into()
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else if x.abs() >= 0.001 {
        format!("{x:.4}")
    } else {
        format!("{x:.2e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Comparison {
        Comparison {
            change: 0.12,
            ci: Some((0.091, 0.152)),
            p: 0.004,
            p_adjusted: None,
            exact: true,
            n_a: 6,
            n_b: 6,
            verdict: Verdict::Better,
            opts: stats::Compare::default(),
            small: None,
        }
    }

    #[test]
    fn english_is_the_statistics_own() {
        let c = base();
        assert_eq!(
            comparison(Lang::En, &c, "throughput"),
            c.words("throughput")
        );
        assert_eq!(metric(Lang::En, "p99"), "p99");
    }

    #[test]
    fn chinese_is_built_from_the_fields() {
        let zh = |c: &Comparison, m: &str| comparison(Lang::Zh, c, m);
        assert_eq!(
            zh(&base(), "throughput"),
            "吞吐量高 12.0%（95% 置信区间 +9.1% 至 +15.2%，p = 0.004，各 6 次运行）"
        );
        let lower = Comparison {
            change: -0.08,
            ci: Some((-0.11, -0.05)),
            n_b: 5,
            p_adjusted: Some(0.0004),
            ..base()
        };
        assert_eq!(
            zh(&lower, "p99"),
            "延迟 p99 低 8.0%（95% 置信区间 -11.0% 至 -5.0%，校正后 p < 0.001，分别 6 次和 5 次运行）"
        );
        let none = Comparison {
            change: 0.01,
            ci: Some((-0.02, 0.04)),
            p: 0.41,
            verdict: Verdict::NoDifference,
            ..base()
        };
        assert_eq!(
            zh(&none, "throughput"),
            "吞吐量没有显著差异（p = 0.410，各 6 次运行）"
        );
        let small = Comparison {
            change: 0.012,
            ci: Some((0.005, 0.019)),
            p: 0.01,
            verdict: Verdict::NoDifference,
            ..base()
        };
        assert!(zh(&small, "throughput").starts_with("没有实际意义的差异：吞吐量高 1.2%"));
        assert!(zh(&small, "throughput").ends_with("未明显超出 ±2%"));
        let few = Comparison {
            verdict: Verdict::TooFewRuns { needed: 4 },
            n_a: 3,
            n_b: 3,
            ci: None,
            ..base()
        };
        assert_eq!(
            zh(&few, "server CPU per request"),
            "运行次数太少，无法判断：检验每边至少需要 4 次运行（各 3 次运行）"
        );
    }

    #[test]
    fn an_experiment_comparison_reads_back_as_typed() {
        let a = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1002.0];
        let b: Vec<f64> = a.iter().map(|x| x * 1.2).collect();
        let mut c = analysis::compare_groups(&a, &b, "throughput", 0.02, 3);
        stats::apply_holm(std::slice::from_mut(&mut c));
        let row = analysis::Comparison {
            target: 1,
            baseline: 0,
            baseline_point: 0,
            point: 0,
            metric: "throughput".into(),
            change: c.change,
            ci: c.ci,
            p: c.p,
            p_adjusted: c.p_adjusted.unwrap(),
            verdict: "better".into(),
            words: c.words("throughput"),
            n_target: 6,
            n_baseline: 6,
            small: c.small.clone(),
        };
        let back = typed(&row, 0.02);
        assert_eq!(back.words("throughput"), row.words);
        // The same options but the bootstrap's seed.
        assert_eq!(back.opts, stats::Compare { seed: 0, ..c.opts });
        assert!(experiment_comparison(Lang::Zh, &row, 0.02).starts_with("吞吐量高 20.0%"));
    }

    #[test]
    fn within_one_run_in_both_languages() {
        let w = crate::compare::Within {
            before: (500.0, 495.0, 505.0),
            after: (600.0, 590.0, 610.0),
            p99: false,
        };
        assert_eq!(
            w.words(),
            "+20.0% within one run only: batch means 500 [495–505] and 600 [590–610] do not \
             overlap; one run a side cannot say whether it would hold again — repeat the runs"
        );
        assert_eq!(
            w.words_in(Lang::Zh),
            "+20.0%，仅为单次运行内的比较：批均值 500 [495–505] 与 600 [590–610] 没有重叠；\
             每边只有一次运行，无法判断它能否重现——请重复运行"
        );
    }

    #[test]
    fn usl_in_chinese() {
        let u = Usl {
            lambda: 106.1,
            sigma: 0.0357,
            kappa: 0.0029,
            peak_n: Some(18.2),
            r2: 0.969,
            residuals: Vec::new(),
            bound: Bound::Coherency,
        };
        assert_eq!(
            usl(Lang::Zh, &u),
            "受相干性限制：吞吐量在 N = 18 附近达到峰值（λ = 106.1 每客户端，σ = 0.0357 争用，κ = 0.0029 相干，R² = 0.969）"
        );
        assert_eq!(usl(Lang::En, &u), u.describe());
        assert_eq!(coefficient(0.000994), "9.94e-4");
    }
}
