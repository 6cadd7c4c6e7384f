//! `yace capacity`: the capacity arithmetic of the `capacity` crate, its
//! inputs checked in one round and every step printed with its assumption.

use crate::args::CapacityArgs;
use crate::{exit, Failure};
use capacity::{num, Peak, Step, Traffic};
use report::lang::{tr, trf, Lang};

/// A percentage: `40%` or `40` → 0.4, within (0, 100].
fn percent(flag: &str, s: &str, bad: &mut Vec<String>, zero_ok: bool) -> f64 {
    match s.trim().trim_end_matches('%').trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (v > 0.0 || zero_ok && v == 0.0) && v <= 100.0 => v / 100.0,
        _ => {
            bad.push(format!(
                "{flag}: '{s}' is not a percentage from 0 to 100 (e.g. {flag} 40%)"
            ));
            1.0
        }
    }
}

/// A positive number.
fn positive(flag: &str, s: &str, bad: &mut Vec<String>) -> f64 {
    match plan::parse_amount(s) {
        Some(v) if v > 0.0 => v,
        _ => {
            bad.push(format!("{flag}: '{s}' is not a positive number"));
            1.0
        }
    }
}

/// A ratio as a reader wants it: 21, 4.4, 0.11.
fn times(r: f64) -> String {
    if r >= 10.0 {
        num(r.round())
    } else if r >= 1.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.2}")
    }
}

fn print_steps(steps: &[Step], first: usize, lang: Lang) {
    for (i, s) in steps.iter().enumerate() {
        println!(
            "  {:>2}. {} {:>12} {} {}",
            first + i,
            pad(tr(lang, s.what), 34),
            num(s.value),
            pad(tr(lang, s.unit), 9),
            report::lang::formula(lang, &s.formula)
        );
        println!(
            "      {} {}{}",
            pad("", 34),
            tr(lang, "assumes: "),
            tr(lang, s.assumption)
        );
    }
}

/// `s` padded to `w` terminal columns (a CJK character takes two).
fn pad(s: &str, w: usize) -> String {
    let cols: usize = s
        .chars()
        .map(|c| if (c as u32) >= 0x2E80 { 2 } else { 1 })
        .sum();
    format!("{s}{}", " ".repeat(w.saturating_sub(cols)))
}

/// Prints the calculation; returns the exit code.
pub fn run(a: CapacityArgs) -> Result<u8, Failure> {
    let mut bad = Vec::new();
    let share = percent("--share", &a.share, &mut bad, false);
    let headroom = percent("--headroom", &a.headroom, &mut bad, true).min(0.99);
    let requests_per_view = positive("--requests-per-view", &a.requests_per_view, &mut bad);
    let views_per_visit = positive("--views-per-visit", &a.views_per_visit, &mut bad);
    let peak = match (&a.peak, &a.peak_factor) {
        (Some(p), _) if p.trim() == "80/20" => Peak::EightyTwenty,
        (Some(p), _) => {
            bad.push(format!(
                "--peak: '{p}' is not a known rule (use --peak 80/20)"
            ));
            Peak::Factor(1.0)
        }
        (None, Some(f)) => Peak::Factor(positive("--peak-factor", f, &mut bad)),
        // Seed 003's rule of thumb, printed as an assumption.
        (None, None) => Peak::Factor(3.0),
    };
    let seconds = |flag: &str, s: &Option<String>, bad: &mut Vec<String>| {
        s.as_deref()
            .and_then(|s| match plan::parse_duration(plan::Field::Duration, s) {
                Ok(d) if !d.is_zero() => Some(d.as_secs_f64()),
                _ => {
                    bad.push(format!("{flag}: '{s}' is not a duration (e.g. {flag} 5m)"));
                    None
                }
            })
    };
    let visit_s = seconds("--visit", &a.visit, &mut bad);
    let mut service_s = seconds("--service-time", &a.service_time, &mut bad);
    let views = a.pageviews.as_deref().and_then(|s| {
        let n = s.trim().trim_end_matches("/day");
        match plan::parse_count(plan::Field::Requests, n) {
            Ok(v) if v > 0 => Some(v as f64),
            _ => {
                bad.push(format!(
                    "--pageviews: '{s}' is not a count of views a day (e.g. 1M)"
                ));
                None
            }
        }
    });
    let size = |flag: &str, v: &Option<String>, bad: &mut Vec<String>| {
        v.as_deref().and_then(|t| {
            capacity::parse_size(t).or_else(|| {
                bad.push(format!("{flag}: '{t}' is not a size (e.g. 42MB, 8GB)"));
                None
            })
        })
    };
    let mut worker_rss = size("--worker-rss", &a.worker_rss, &mut bad);
    let mut memory = size("--memory", &a.memory, &mut bad);
    let mut measured = a
        .supports
        .as_deref()
        .map(|s| positive("--supports", s, &mut bad));
    if let Some(path) = &a.result {
        match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| report::json::read(&t).map_err(|e| e.to_string()))
        {
            Ok(r) => {
                measured = Some(r.summary.rps);
                if service_s.is_none() && r.summary.latency.count > 0 {
                    service_s = Some(r.summary.latency.mean_us / 1e6);
                }
                // Monitored: a worker's memory and the machine's.
                if let Some(m) = &r.monitor {
                    let (rss, mem) = monitored_memory(m);
                    worker_rss = worker_rss.or(rss);
                    memory = memory.or(mem);
                }
            }
            Err(e) => bad.push(format!("--result {}: {e}", path.display())),
        }
    }
    // A find-max answer: the highest rate that held the SLOs.
    let mut searched: Option<(f64, String)> = None;
    if let Some(path) = &a.find_max {
        let doc = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).map_err(|e| e.to_string()));
        match doc {
            Ok(d) if d["schema"] == "yace.find-max.v1" => match d["answer"]["max_rate"].as_f64() {
                Some(m) => {
                    let slos: Vec<&str> = d["slos"]
                        .as_array()
                        .map(|a| a.iter().filter_map(|s| s.as_str()).collect())
                        .unwrap_or_default();
                    searched = Some((m, slos.join(" and ")));
                }
                None => bad.push(format!(
                    "--find-max {}: the search found no rate that held its SLOs",
                    path.display()
                )),
            },
            Ok(_) => bad.push(format!(
                "--find-max {}: not a `yace find-max --json` answer (yace.find-max.v1)",
                path.display()
            )),
            Err(e) => bad.push(format!("--find-max {}: {e}", path.display())),
        }
        if views.is_none() {
            measured = searched.as_ref().map(|(m, _)| *m);
        }
    }
    // A lab experiment: its best point's median throughput.
    let mut lab_best: Option<(f64, String, usize)> = None;
    if let Some(dir) = &a.lab {
        match super::lab::best_point(dir, a.lab_target.as_deref()) {
            Ok(best) => {
                if views.is_none() {
                    measured = Some(best.0);
                }
                lab_best = Some(best);
            }
            Err(e) => bad.push(format!("--lab {}: {e}", dir.display())),
        }
    }
    if views.is_none() && measured.is_none() && bad.is_empty() {
        bad.push(
            "give the traffic (--pageviews N) or a measured rate (--supports RATE, --result FILE)"
                .into(),
        );
    }
    if !bad.is_empty() {
        return Err(Failure::usage(bad.join("\n")));
    }
    let traffic = Traffic {
        views_per_day: views.unwrap_or(0.0),
        share,
        requests_per_view,
        peak,
        visit_s,
        views_per_visit,
    };
    let lang = super::driver::language(a.lang);
    if let Some(rate) = measured {
        println!("{}", trf(lang, "What {} req/s supports", &[&num(rate)]));
        let steps = capacity::supported(rate, &traffic, headroom);
        print_steps(&steps, 1, lang);
        let views = steps.last().map_or(0.0, |s| s.value);
        println!();
        println!(
            "{}",
            trf(
                lang,
                "  {} req/s supports about {} views a day of the tested page (at its share of the site) with {}% in reserve.",
                &[&num(rate), &num(views.round()), &num(headroom * 100.0)]
            )
        );
        if let Some(t) = service_s {
            let p = capacity::pool(rate, t, 1.25);
            print_steps(std::slice::from_ref(&p), steps.len() + 1, lang);
            capped(&p, worker_rss, memory, steps.len() + 2, lang);
        }
        return Ok(exit::OK);
    }
    println!(
        "{}",
        trf(
            lang,
            "The rate to hold for {} views a day of the tested page (the site's rate = the page's ÷ its share)",
            &[&num(traffic.views_per_day)]
        )
    );
    let steps = capacity::required(&traffic);
    print_steps(&steps, 1, lang);
    let peak = steps
        .iter()
        .rev()
        .find(|s| s.what.starts_with("peak"))
        .map_or(0.0, |s| s.value);
    let burst = steps
        .iter()
        .find(|s| s.what == "with burst headroom")
        .map_or(0.0, |s| s.value);
    if let Some(t) = service_s {
        let p = capacity::pool(burst, t, 1.25);
        print_steps(std::slice::from_ref(&p), steps.len() + 1, lang);
        capped(&p, worker_rss, memory, steps.len() + 2, lang);
    }
    println!();
    let best = match (&searched, &lab_best) {
        (Some((max, slos)), _) => Some((
            *max,
            trf(
                lang,
                "  The measured maximum under {} is {} req/s: {}× the {} req/s required at the peak, {}× with burst headroom.",
                &[
                    slos,
                    &num(*max),
                    &times(max / peak.max(1e-9)),
                    &num(peak),
                    &times(max / burst.max(1e-9)),
                ],
            ),
        )),
        (None, Some((max, point, n))) => Some((
            *max,
            trf(
                lang,
                "  The lab's best point ({}) held {} req/s: {}× the {} req/s required at the peak, {}× with burst headroom.",
                &[
                    &trf(lang, "{}, median of {} runs", &[point, n]),
                    &num(*max),
                    &times(max / peak.max(1e-9)),
                    &num(peak),
                    &times(max / burst.max(1e-9)),
                ],
            ),
        )),
        (None, None) => None,
    };
    if let Some((max, sentence)) = &best {
        let usable = max * (1.0 - headroom);
        println!("{sentence}");
        let servers = (burst / usable.max(1e-9)).ceil().max(1.0);
        println!(
            "{}",
            trf(
                lang,
                "  Servers like it for this load: {} (the {} req/s with burst headroom ÷ {} req/s usable each, keeping {}% in reserve); assumes the servers share the load evenly and nothing else is the bottleneck.",
                &[&num(servers), &num(burst), &num(usable), &num(headroom * 100.0)]
            )
        );
        return Ok(exit::OK);
    }
    println!(
        "{}",
        trf(
            lang,
            "  The server must hold {} req/s at the peak ({} req/s with burst headroom):",
            &[&num(peak), &num(burst)]
        )
    );
    println!(
        "{}",
        trf(
            lang,
            "  run `yace run URL --rate {} -d 60s` and check the latency there.",
            &[&burst.ceil()]
        )
    );
    Ok(exit::OK)
}

/// A worker's resident memory (a php-fpm or apache2 process source: the
/// most RSS ÷ the most processes) and the server's memory (a machine
/// source's total), from a monitored result.
fn monitored_memory(m: &stats::monitor::Monitoring) -> (Option<f64>, Option<f64>) {
    use stats::monitor::Monitoring;
    let rss = m
        .sources
        .iter()
        .filter(|s| s.kind == "process")
        .filter(|s| {
            s.label.starts_with("php-fpm")
                || s.label.starts_with("apache2")
                || s.label.starts_with("httpd")
        })
        .find_map(|s| {
            let rss = Monitoring::metric(s, "rss_bytes")?.max()?;
            let n = Monitoring::metric(s, "processes")?.max()?;
            Some(rss / n.max(1.0))
        });
    let mem = m
        .sources
        .iter()
        .find_map(|s| Monitoring::metric(s, "mem_total_bytes")?.max());
    (rss, mem)
}

/// The pool capped by memory, when both sizes are known: the step, and
/// which of the two limits the pool.
fn capped(pool: &capacity::Step, rss: Option<f64>, memory: Option<f64>, n: usize, lang: Lang) {
    let (Some(rss), Some(memory)) = (rss, memory) else {
        return;
    };
    let cap = capacity::memory_cap(rss, memory, 0.2);
    print_steps(std::slice::from_ref(&cap), n, lang);
    if cap.value < pool.value {
        println!(
            "{}",
            trf(
                lang,
                "  Memory, not the rate, limits the pool: {} workers fit, {} are needed — more memory, lighter workers, or more servers.",
                &[&num(cap.value), &num(pool.value)]
            )
        );
    } else {
        println!(
            "{}",
            trf(
                lang,
                "  Set the pool to {} workers: the rate needs them and memory holds up to {}.",
                &[&num(pool.value), &num(cap.value)]
            )
        );
    }
}
