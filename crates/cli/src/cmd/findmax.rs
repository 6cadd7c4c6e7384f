//! `yace find-max`: the highest arrival rate at which every SLO holds. The
//! search (bracket, bisect, repeat, confirm) is `yace-findmax`; each trial
//! is an ordinary open-model run through the one run pipeline, judged by
//! the SLOs as thresholds, and kept as a result file when `--out` is given.

use super::driver;
use super::lab::Front;
use crate::args::FindMaxArgs;
use crate::flags::{self, RunFlags};
use crate::{exit, Failure};
use ::run::{Job, Script, StopHandle, TargetChoice};
use findmax::{Answer, Config, End, Next, Search, Stage, Trial, Verdict};
use report::lang::{tr, trf, Lang};
use report::{count, duration_us};
use stats::RunResult;
use std::io::Write as _;
use std::time::{Duration, Instant};

/// A figure within this share of its SLO's bound makes a pass marginal.
const MARGIN: f64 = 0.10;

fn usage(msg: impl Into<String>) -> Failure {
    Failure::usage(msg.into())
}

/// The flags `yace run` has that a search sets itself, or has no use for.
fn refuse_run_flags(a: &FindMaxArgs) -> Result<(), Failure> {
    let r = &a.run;
    let mut bad = Vec::new();
    let mut no = |set: bool, flag: &str, why: &str| {
        if set {
            bad.push(format!("{flag}: {why}"));
        }
    };
    let load = "find-max searches the open model's rate itself (use --start-rate, --max-rate)";
    no(r.connections.is_some(), "-c/--connections", load);
    no(r.rate.is_some(), "--rate", load);
    no(r.stages.is_some(), "--stages", load);
    no(r.users.is_some(), "-u/--users", load);
    no(r.user_stages.is_some(), "--user-stages", load);
    no(
        r.ramp_up.is_some() || r.ramp_down.is_some(),
        "--ramp-up/--ramp-down",
        load,
    );
    no(
        r.pacing.is_some() || r.think.is_some(),
        "--pacing/--think",
        load,
    );
    no(
        r.requests.is_some(),
        "-n/--requests",
        "each trial runs for its time (use --trial, --long-trial, --confirm)",
    );
    no(r.duration.is_some(), "-d/--duration", "each trial runs for its time (use --trial, --long-trial, --confirm; --max-time bounds the search)");
    no(
        !r.thresholds.is_empty(),
        "--threshold",
        "find-max judges each trial by --slo",
    );
    no(
        r.html.is_some() || r.junit.is_some(),
        "--html/--junit",
        "find-max keeps each trial's result with --out DIR (yace report renders them)",
    );
    no(r.dry_run, "--dry-run", "not for find-max");
    if bad.is_empty() {
        Ok(())
    } else {
        Err(usage(bad.join("\n")))
    }
}

fn rate_flag(flag: &str, s: &str) -> Result<f64, String> {
    let v = plan::parse_amount(s)
        .ok_or_else(|| format!("{flag} {s}: not a rate (e.g. 100, 2.5, 10k)"))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!(
            "{flag} {s}: must be a rate above 0 (e.g. 100, 2.5, 10k)"
        ))
    }
}

fn time_flag(flag: &str, s: &str) -> Result<f64, String> {
    let d = plan::parse_duration(flag, s).map_err(|e| e.to_string())?;
    if d >= Duration::from_millis(500) {
        Ok(d.as_secs_f64())
    } else {
        Err(format!(
            "{flag} {s}: a trial needs at least 500ms (e.g. 5s)"
        ))
    }
}

fn config(a: &FindMaxArgs) -> Result<(Config, f64, Duration), Failure> {
    let mut errs = Vec::new();
    let mut ok = |r: Result<f64, String>| r.map_err(|e| errs.push(e)).unwrap_or(1.0);
    let start = ok(rate_flag("--start-rate", &a.start_rate));
    let max = ok(rate_flag("--max-rate", &a.max_rate));
    let min = ok(rate_flag("--min-rate", &a.min_rate));
    let short = ok(time_flag("--trial", &a.trial));
    let long = ok(time_flag("--long-trial", &a.long_trial));
    let confirm = ok(time_flag("--confirm", &a.confirm));
    let budget = ok(time_flag("--max-time", &a.max_time));
    let cool = plan::parse_duration("--cool-down", &a.cool_down)
        .map_err(|e| errs.push(e.to_string()))
        .unwrap_or_default();
    if errs.is_empty() && min > max {
        errs.push(format!(
            "--min-rate {} is above --max-rate {}",
            a.min_rate, a.max_rate
        ));
    }
    if !errs.is_empty() {
        return Err(usage(errs.join("\n")));
    }
    Ok((
        Config {
            start_rate: start,
            max_rate: max,
            min_rate: min,
            short_s: short,
            long_s: long.max(short),
            confirm_s: confirm.max(long),
            ..Config::default()
        },
        budget,
        cool,
    ))
}

/// The trial's verdict: invalid when the client was the limit, failed when
/// an SLO broke or the offered rate was not achieved, marginal when a
/// figure came within 10% of its bound.
fn verdict(r: &RunResult, slos: &[stats::threshold::Threshold]) -> Verdict {
    let resource: u64 = r
        .outcomes
        .iter()
        .filter(|(o, _)| o.name() == "client_resource")
        .map(|(_, n)| *n)
        .sum();
    if r.client.saturated {
        return Verdict::Invalid {
            why: format!(
                "the client was saturated (busiest thread {:.0}% busy): add threads (-t) or client machines",
                r.client.busiest_thread * 100.0
            ),
        };
    }
    if resource > 0 {
        return Verdict::Invalid {
            why: format!(
                "{} requests failed for lack of client resources (ports or files): run `yace doctor`",
                count(resource)
            ),
        };
    }
    // Late sends that explain the latency: the client could not keep its
    // schedule (starved of CPU, or too slow), while the server answered
    // quickly. A server that is too slow shows in service time instead (an
    // open model sends on time over more connections), unless the
    // in-flight cap or failing connections held the sends back.
    let held_back = r.shortfall.as_ref().is_some_and(|sf| {
        matches!(
            sf.cause,
            stats::shortfall::Cause::InflightCap | stats::shortfall::Cause::Connections
        )
    });
    let failing = r.thresholds.iter().any(|t| !t.passed) || r.shortfall.is_some();
    if let (Some(lag), Some(service)) = (&r.summary.lag, &r.summary.service) {
        let (lag99, lat99) = (
            lag.at(99.0).unwrap_or(0.0),
            r.summary.latency.at(99.0).unwrap_or(0.0),
        );
        if failing && !held_back && lag99 > 2_000.0 && lag99 >= 0.5 * lat99 {
            return Verdict::Invalid {
                why: format!(
                    "the client could not keep its schedule: requests were sent up to {} late (p99), their responses came {} after sending (p99); free the client's CPUs (another process on them?) or add threads (-t)",
                    duration_us(lag99),
                    duration_us(service.at(99.0).unwrap_or(0.0))
                ),
            };
        }
    }
    // Requests still unanswered when the trial ended were cut off (the
    // server fell behind, or an earlier trial's queue was still being
    // worked off): their latencies are unknown and certainly long, so the
    // SLOs cannot be said to hold.
    // Requests sent in a trial's last moments are naturally still in
    // flight: more than half of them, or more than a second's worth,
    // is a server behind.
    if let Some(b) = &r.behind {
        return Verdict::Fail {
            why: format!(
                "the server fell behind: it answered {:.1}/s of the {:.1}/s offered, {} still waiting at the end",
                b.answered_per_s,
                b.offered_per_s,
                count(b.waiting_at_end)
            ),
        };
    }
    let finished = r.summary.responses + r.summary.errors;
    let unanswered = r.summary.requests.saturating_sub(finished) as f64;
    let per_second = r.summary.requests as f64 / r.summary.duration_s.max(1e-3);
    if r.summary.requests > 0
        && (unanswered > 0.5 * r.summary.requests as f64 || unanswered > per_second.max(10.0))
    {
        return Verdict::Fail {
            why: format!(
                "only {} of {} requests were answered before the trial ended: the server fell behind",
                count(finished),
                count(r.summary.requests)
            ),
        };
    }
    let broken: Vec<String> = r
        .thresholds
        .iter()
        .filter(|t| !t.passed)
        .map(|t| format!("{} (actual {})", t.expr, report::actual(t.actual, &t.unit)))
        .collect();
    if !broken.is_empty() {
        return Verdict::Fail {
            why: broken.join(", "),
        };
    }
    if let Some(sf) = &r.shortfall {
        let mut why = format!(
            "the rate was not achieved: {} of {} requests due were sent",
            count(sf.sent),
            count(sf.due)
        );
        if sf.dropped > 0 {
            why.push_str(&format!(", {} dropped", count(sf.dropped)));
        }
        if sf.late > 0 {
            why.push_str(&format!(", {} more than 10 ms late", count(sf.late)));
        }
        return Verdict::Fail { why };
    }
    if r.summary.dropped > 0 {
        return Verdict::Fail {
            why: format!(
                "{} requests could not be sent on time",
                count(r.summary.dropped)
            ),
        };
    }
    let marginal = r.thresholds.iter().zip(slos).any(|(t, slo)| {
        let bound = slo.bound_shown();
        bound > 0.0 && ((bound - t.actual) / bound).abs() < MARGIN
    });
    Verdict::Pass { marginal }
}

/// Why a trial is run, in words.
fn stage_word(lang: Lang, stage: Stage) -> &'static str {
    tr(
        lang,
        match stage {
            Stage::Bracket => "bracket",
            Stage::Bisect => "bisect",
            Stage::Repeat => "repeat",
            Stage::Recheck => "recheck",
            Stage::Confirm => "confirm",
        },
    )
}

/// A trial's verdict in words.
fn verdict_words(lang: Lang, t: &Trial, v: &Verdict) -> String {
    match v {
        Verdict::Pass { marginal: false } => tr(lang, "pass").to_string(),
        Verdict::Pass { marginal: true } if t.stage == Stage::Repeat => {
            tr(lang, "pass (close to an SLO)").to_string()
        }
        Verdict::Pass { marginal: true } => {
            tr(lang, "pass, close to an SLO: tried again").to_string()
        }
        Verdict::Fail { why } => format!("{}: {why}", tr(lang, "FAIL")),
        Verdict::Invalid { why } => format!("{}: {why}", tr(lang, "NOT VALID")),
    }
}

/// A trial's p99, or a dash when nothing was answered.
fn p99_of(r: &RunResult) -> String {
    r.summary
        .latency
        .at(99.0)
        .filter(|_| r.summary.latency.count > 0)
        .map_or("—".into(), duration_us)
}

/// A trial's row in the view's table.
fn trial_row(
    n: usize,
    t: &Trial,
    v: &Verdict,
    r: &RunResult,
    reused: bool,
    lang: Lang,
) -> live::campaign::Row {
    use live::campaign::Mark;
    let mark = match v {
        Verdict::Pass { marginal: false } => Mark::Good,
        Verdict::Pass { marginal: true } | Verdict::Invalid { .. } => Mark::Warn,
        Verdict::Fail { .. } => Mark::Bad,
    };
    let mut verdict = verdict_words(lang, t, v);
    if reused {
        verdict.push(' ');
        verdict.push_str(words(lang, "(an earlier trial, judged again)"));
    }
    live::campaign::Row {
        key: n.to_string(),
        cells: vec![
            n.to_string(),
            stage_word(lang, t.stage).to_string(),
            format!("{}/s", fmt_rate(t.rate)),
            format!("{:.1}", r.summary.rps),
            p99_of(r),
            verdict,
        ],
        mark,
    }
}

/// One line per trial, as it ends.
fn line(n: usize, t: &Trial, v: &Verdict, r: &RunResult, lang: Lang) -> String {
    let stage = stage_word(lang, t.stage);
    let p99 = p99_of(r);
    let what = verdict_words(lang, t, v);
    // What the monitors saw go wrong on the server, by code.
    let server: Vec<&str> = r
        .monitor
        .iter()
        .flat_map(|m| &m.diagnoses)
        .filter(|d| d.severity == "problem")
        .map(|d| d.code.as_str())
        .collect();
    let server = if server.is_empty() {
        String::new()
    } else {
        format!("   [server: {}]", server.join(", "))
    };
    trf(
        lang,
        "  {}  {} {}/s for {} s   {} responses/s  p99 {}  errors {}%   {}{}",
        &[
            &format!("{n:>2}"),
            &report::pad(stage, 8),
            &format!("{:>10}", fmt_rate(t.rate)),
            &format!("{:>4}", t.seconds),
            &format!("{:>9.1}", r.summary.rps),
            &format!("{p99:>9}"),
            &format!(
                "{:.2}",
                r.summary.errors as f64 * 100.0 / r.summary.requests.max(1) as f64
            ),
            &what,
            &server,
        ],
    )
}

/// The view's words that the reports' dictionary does not have.
fn words(lang: Lang, en: &'static str) -> &'static str {
    if lang == Lang::En {
        return en;
    }
    match en {
        "Finished trials" => "已完成的试验",
        "stage" => "阶段",
        "rate" => "速率",
        "achieved" => "实际响应/秒",
        "verdict" => "结论",
        "the search writes what it has" => "搜索会写下已有的结果",
        "trial {} · {} · {}/s for {} s" => "第 {} 次试验 · {} · {}/秒，{} 秒",
        "bracket: {}/s passed, {}/s failed" => "区间：{}/秒 通过，{}/秒 未通过",
        "bracket: not closed yet, {}/s passed" => "区间：尚未闭合，{}/秒 通过",
        "bracket: not closed yet, {}/s failed" => "区间：尚未闭合，{}/秒 未通过",
        "bracket: no trial yet" => "区间：尚无试验",
        "about {} trials left in the bracket" => "区间内约剩 {} 次试验",
        "if the next trial closes the bracket" => "假设下一次试验闭合区间",
        "at most, by --max-time {}" => "最多，受 --max-time {} 所限",
        "(an earlier trial, judged again)" => "（之前的试验，重新判定）",
        _ => en,
    }
}

/// `words`, then its `{}` filled in order.
fn wordsf(lang: Lang, en: &'static str, args: &[&dyn std::fmt::Display]) -> String {
    report::lang::fill(words(lang, en), args)
}

/// The bracket as the trials so far make it: the highest rate that
/// passed below the lowest that failed.
fn bracket(trials: &[Trial]) -> (Option<f64>, Option<f64>) {
    let hi = trials
        .iter()
        .filter(|t| matches!(t.verdict, Some(Verdict::Fail { .. })))
        .map(|t| t.rate)
        .reduce(f64::min);
    let lo = trials
        .iter()
        .filter(|t| matches!(t.verdict, Some(Verdict::Pass { .. })))
        .map(|t| t.rate)
        .filter(|r| hi.is_none_or(|h| *r < h))
        .reduce(f64::max);
    (lo, hi)
}

/// A guess at the search's time left once the bracket is [lo, hi]: the
/// bisections that narrow it to the precision (short trials while it is
/// wider than 10%, long ones after), the recheck and the confirming hold,
/// and a cool-down after every other trial. Seconds, and trials.
fn time_left(cfg: &Config, lo: f64, hi: f64, cool_s: f64) -> (f64, usize) {
    let (wide, narrow) = (1.1f64.ln(), (1.0 + cfg.precision).ln());
    let mut r = (hi / lo.max(1e-9)).ln();
    let (mut s, mut n) = (0.0, 0usize);
    while r > narrow + 1e-9 && n < cfg.max_trials {
        s += if r > wide { cfg.short_s } else { cfg.long_s };
        r /= 2.0;
        n += 1;
    }
    s += cfg.long_s + cfg.confirm_s;
    n += 2;
    (s + cool_s * (n / 2) as f64, n)
}

fn fmt_rate(r: f64) -> String {
    if r >= 100.0 {
        count(r.round() as u64)
    } else {
        format!("{r}")
    }
}

/// Runs the command; returns the exit code.
/// A search's SLOs, monitors and configuration, every flag checked in one
/// round before anything starts.
#[allow(clippy::type_complexity)]
fn checked(
    a: &FindMaxArgs,
) -> Result<
    (
        Vec<stats::threshold::Threshold>,
        Vec<stats::threshold::Threshold>,
        monitor::Config,
        (Config, f64, Duration),
    ),
    Failure,
> {
    refuse_run_flags(a)?;
    let ((slos, frontier), monitors) = crate::failure::both(
        crate::failure::both(
            flags::thresholds_of("--slo", &a.slo, None),
            flags::thresholds_of("--frontier", &a.frontier, None),
        ),
        flags::monitors(&a.run.monitor.monitor, &a.run.monitor.interval),
    )?;
    flags::monitored("--slo", &slos, &monitors)?;
    flags::monitored("--frontier", &frontier, &monitors)?;
    let cfg = config(a)?;
    // The request flags, as the first trial will use them.
    let mut probe_args = a.run.clone();
    probe_args.rate = Some(format!("{}", cfg.0.start_rate));
    probe_args.duration = Some(format!("{}ms", (cfg.0.short_s * 1000.0) as u64));
    let check_url = a
        .run
        .url
        .clone()
        .unwrap_or_else(|| "http://127.0.0.1/".into());
    match scenario_of(a, Some(&check_url))? {
        // A scenario's search: visitors arrive at the trial's rate, each
        // walking one journey.
        Some(sc) => {
            let url = sc.base().map_or(check_url, |b| b.url.clone());
            flags::scenario_plan(&probe_args, &sc, &url).map_err(|e| usage(e.render(&RunFlags)))?;
        }
        None => {
            flags::run_plan(&probe_args, &check_url).map_err(|e| usage(e.render(&RunFlags)))?;
        }
    }
    Ok((slos, frontier, monitors, cfg))
}

/// `-f FILE`: the scenario, against the URL given (or `base`, its own
/// base, else this one).
fn scenario_of(a: &FindMaxArgs, base: Option<&str>) -> Result<Option<scenario::Scenario>, Failure> {
    let Some(file) = &a.run.file else {
        return Ok(None);
    };
    let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
    let mut sc = scenario::load_with_base(file, &env, a.run.url.as_deref())
        .map_err(|d| usage(d.to_string()))?;
    if sc.base().is_none() {
        if let Some(b) = base {
            sc = scenario::load_with_base(file, &env, Some(b)).map_err(|d| usage(d.to_string()))?;
        }
    }
    Ok(Some(sc))
}

/// Checks a search's arguments as [`run()`] would, starting nothing (the lab
/// checks its find-max experiments with it).
pub fn check(a: &FindMaxArgs) -> Result<(), Failure> {
    checked(a).map(|_| ())
}

pub fn run(a: FindMaxArgs) -> Result<u8, Failure> {
    let (slos, frontier, monitors, (cfg, budget_s, cool_down)) = checked(&a)?;
    let out_dir = a.out.clone();
    if let Some(dir) = &out_dir {
        std::fs::create_dir_all(dir).map_err(|e| {
            usage(format!(
                "--out {}: cannot create the folder: {e}",
                dir.display()
            ))
        })?;
    }
    let json_out = driver::create_output("--json", a.run.json.as_deref())?;
    // A scenario with its own base needs no URL.
    let own = scenario_of(&a, None)?.filter(|sc| sc.base().is_some());
    // The embedded target lives for the whole search.
    let embedded = match (&a.run.url, &own) {
        (None, None) => Some(driver::embedded()?),
        _ => None,
    };
    let url = match (&a.run.url, &own, &embedded) {
        (Some(u), _, _) => u.clone(),
        (None, Some(sc), _) => sc.base().map(|b| b.url.clone()).unwrap_or_default(),
        (None, None, Some(e)) => e.url(),
        (None, None, None) => unreachable!("one of the three"),
    };
    let scenario = scenario_of(&a, Some(&url))?;
    if embedded.is_some() {
        eprintln!(
            "yace: no URL given, so searching the embedded target started at {url} (`yace serve`); \
             it shares this machine's CPUs with the client"
        );
    }
    // The levels: the SLOs together, or one search per frontier level
    // (each with the SLOs too).
    let levels: Vec<(Vec<String>, Vec<stats::threshold::Threshold>)> = if a.frontier.is_empty() {
        vec![(a.slo.clone(), slos.clone())]
    } else {
        a.frontier
            .iter()
            .zip(frontier)
            .map(|(f, t)| {
                let mut exprs = a.slo.clone();
                exprs.push(f.clone());
                let mut ts = slos.clone();
                ts.push(t);
                (exprs, ts)
            })
            .collect()
    };
    let lang = driver::language(a.run.lang);
    println!(
        "{}",
        trf(
            lang,
            "  from {}/s, at most {}/s; trials of {} s, {} s near the answer, {} s to confirm; at most {}",
            &[
                &fmt_rate(cfg.start_rate),
                &fmt_rate(cfg.max_rate),
                &cfg.short_s,
                &cfg.long_s,
                &cfg.confirm_s,
                &a.max_time
            ]
        )
    );
    let stop = StopHandle::new();
    // The first level's exprs, for the view's title.
    let title = searching(&levels[0].0, &url, lang);
    let mut ctx = Trials {
        // The view starts with the first trial, once its notes are shown.
        tui: !a.run.quiet && !a.run.no_tui,
        intro: Some(live::campaign::Intro {
            title,
            table: words(lang, "Finished trials").into(),
            columns: vec![
                "#".into(),
                words(lang, "stage").into(),
                words(lang, "rate").into(),
                words(lang, "achieved").into(),
                "p99".into(),
                words(lang, "verdict").into(),
            ],
            stop: words(lang, "the search writes what it has").into(),
            lang,
        }),
        front: Front::lines(),
        stop,
        level_name: None,
        args: &a,
        url: &url,
        scenario: scenario.as_ref(),
        out_dir: out_dir.as_deref(),
        started: Instant::now(),
        budget_s,
        cool_down,
        cache: Vec::new(),
        level: 0,
        first: true,
        n: 0,
        started_at: None,
        monitors,
        lang,
    };
    let mut found: Vec<Level> = Vec::new();
    let mut start = cfg.start_rate;
    let mut searched = || -> Result<(), Failure> {
        for (exprs, level_slos) in &levels {
            ctx.front.say(String::new());
            ctx.front.say(searching(exprs, &url, lang));
            if levels.len() > 1 {
                ctx.level_name = Some(exprs.join(tr(lang, " and ")));
            }
            let level = ctx.search(
                Config {
                    start_rate: start,
                    ..cfg
                },
                level_slos,
            )?;
            ctx.level += 1;
            let stop = level.interrupted;
            if let Some(m) = level.answer.max_rate {
                start = m;
            }
            found.push(level);
            if stop {
                break;
            }
        }
        Ok(())
    };
    let searched = searched();
    // The screen is back, with the trials' lines printed, before anything
    // else (an error too).
    ctx.front.finish();
    searched?;
    println!();
    let mut code = exit::OK;
    for (level, (exprs, _)) in found.iter().zip(&levels) {
        if levels.len() > 1 {
            println!("{}:", exprs.join(tr(lang, " and ")));
        }
        let c = conclude(&a, level, lang);
        if c != exit::OK && code == exit::OK || c == exit::RUNTIME {
            code = c;
        }
    }
    if levels.len() > 1 {
        println!();
        println!(
            "{}",
            tr(
                lang,
                "Frontier (the highest rate at which each level holds):"
            )
        );
        for (level, (exprs, _)) in found.iter().zip(&levels) {
            println!(
                "  {:<28} {:>12}",
                exprs.last().map_or("", String::as_str),
                level
                    .answer
                    .max_rate
                    .map_or("—".to_string(), |m| format!("{}/s", fmt_rate(m)))
            );
        }
    }
    if let Some(out) = json_out {
        let path = out.path().to_owned();
        let level_doc = |level: &Level, ts: &[stats::threshold::Threshold], exprs: &[String]| {
            serde_json::json!({
                "slos": exprs,
                "answer": level.answer,
                "recommended": level.answer.max_rate.map(|m| [m * 0.7, m * 0.8]),
                "ran_out": level.ran_out,
                "figures": level.figures,
                "slo_bounds": ts.iter().map(|t| serde_json::json!({
                    "expr": t.expr, "bound": t.bound_shown(), "latency": t.is_latency(),
                })).collect::<Vec<_>>(),
            })
        };
        let mut doc = level_doc(&found[0], &levels[0].1, &levels[0].0);
        doc["schema"] = "yace.find-max.v1".into();
        doc["url"] = url.clone().into();
        doc["started_at"] = ctx.started_at.clone().into();
        doc["yace_version"] = env!("CARGO_PKG_VERSION").into();
        if levels.len() > 1 {
            doc["frontier"] = found
                .iter()
                .zip(&levels)
                .map(|(l, (exprs, ts))| level_doc(l, ts, exprs))
                .collect::<Vec<_>>()
                .into();
        }
        out.write_with(|w| {
            serde_json::to_writer_pretty(&mut *w, &doc).map_err(std::io::Error::from)?;
            w.write_all(b"\n")
        })
        .map_err(|e| driver::output_failure("--json", &path, e))?;
    }
    drop(embedded);
    let interrupted = found.iter().any(|l| l.interrupted);
    Ok(if interrupted { exit::SIGINT } else { code })
}

/// One level's search: its answer, each trial's figures, the p99 of the
/// last pass at each rate.
struct Level {
    answer: Answer,
    figures: Vec<serde_json::Value>,
    p99_at: Vec<(f64, String)>,
    interrupted: bool,
    /// What the monitors saw run out at the lowest failing rate.
    ran_out: Vec<stats::monitor::Diagnosis>,
}

/// What the searches share: the target, the budget, and every trial run
/// so far (a frontier's levels reuse each other's trials).
struct Trials<'a> {
    /// The full-screen view is wanted (where the terminal allows).
    tui: bool,
    /// What the view says of the search, until it starts.
    intro: Option<live::campaign::Intro>,
    /// Where the trials' lines go (kept while the view is up).
    front: Front,
    /// `q` on the view, and SIGINT/SIGTERM, stop the trial running.
    stop: StopHandle,
    /// The frontier's level being searched, when there are several.
    level_name: Option<String>,
    args: &'a FindMaxArgs,
    url: &'a str,
    /// `-f`: each trial's visitors walk its journeys.
    scenario: Option<&'a scenario::Scenario>,
    out_dir: Option<&'a std::path::Path>,
    started: Instant,
    budget_s: f64,
    cool_down: Duration,
    /// (rate, seconds) → the trial's result, with the level that ran it.
    cache: Vec<((f64, f64), usize, RunResult)>,
    /// The level being searched.
    level: usize,
    first: bool,
    /// Trials run (for the files' names).
    n: usize,
    /// When the search started: its first trial's start.
    started_at: Option<String>,
    /// `--monitor`: read during every trial.
    monitors: monitor::Config,
    /// The lines' language.
    lang: Lang,
}

impl Trials<'_> {
    /// Runs one trial at `trial.rate` for `trial.seconds`, or finds it run.
    fn run(
        &mut self,
        trial: &Trial,
        slos: &[stats::threshold::Threshold],
        shown: (String, Option<String>, Option<live::campaign::Left>),
    ) -> Result<(RunResult, bool), Failure> {
        // An earlier level's bracket or bisect trial is judged again by this
        // level's SLOs; a repeat, a recheck or a confirmation is a new
        // sample by design, and so is every trial within one level.
        let reusable = matches!(trial.stage, Stage::Bracket | Stage::Bisect);
        if let Some((_, _, r)) = self.cache.iter().find(|((rate, secs), level, _)| {
            // A trial at least as long is at least as good evidence.
            reusable && *level < self.level && *rate == trial.rate && *secs >= trial.seconds
        }) {
            let mut r = r.clone();
            r.thresholds = slos.iter().map(|t| t.evaluate(&r)).collect();
            return Ok((r, true));
        }
        let mut args = self.args.run.clone();
        args.rate = Some(format!("{}", trial.rate));
        args.duration = Some(format!("{}ms", (trial.seconds * 1000.0) as u64));
        let (plan, script) = match self.scenario {
            Some(sc) => (
                flags::scenario_plan(&args, sc, self.url),
                Script::Scenario(Box::new(sc.clone())),
            ),
            None => (flags::run_plan(&args, self.url), Script::Request),
        };
        let plan = plan.map_err(|e| usage(e.render(&RunFlags)))?;
        let job = Job {
            plan,
            target: TargetChoice::Url(self.url.to_string()),
            script,
            thresholds: slos.to_vec(),
            spelling: &RunFlags,
            // After the first trial every monitor has answered once: one
            // that does not answer now (a status page served by a pool still
            // working off the last trial's queue) is a gap, not the end of
            // the search.
            monitors: monitor::Config {
                answered_before: !self.first,
                ..self.monitors.clone()
            },
        };
        let prepared = if self.first {
            driver::prepare(job)?
        } else {
            ::run::prepare(job).map_err(Failure::from)?
        };
        self.first = false;
        // The view takes the screen once the first trial's notes are shown.
        if let (true, Some(intro)) = (self.tui, self.intro.take()) {
            self.front = Front::choose(false, false, &self.stop, || intro);
        }
        let mut view = self.front.view.as_mut();
        if let Some(c) = &mut view {
            let (what, context, left) = shown;
            c.begin(live::campaign::Begin {
                setup: live::Setup::of(
                    &prepared.plan,
                    engine::effective_threads(&prepared.plan),
                    self.monitors.specs.len(),
                    &RunFlags,
                ),
                what,
                context,
                left,
            });
        }
        let done = driver::execute_with(
            prepared,
            |_| (),
            |rows| {
                if let Some(c) = &mut view {
                    c.observe(rows);
                }
            },
            &self.stop,
        );
        if let Some(c) = view {
            c.end();
        }
        let r = done?.result;
        if !r.end.partial {
            self.n += 1;
            self.started_at.get_or_insert_with(|| r.started_at.clone());
            if let Some(dir) = self.out_dir {
                let name = format!(
                    "trial-{:02}-{}-per-s.json",
                    self.n,
                    fmt_rate(trial.rate).replace(',', "")
                );
                let out = driver::create_output("--out", Some(&dir.join(name)))?;
                driver::write_json(&r, out)?;
            }
            self.cache
                .push(((trial.rate, trial.seconds), self.level, r.clone()));
        }
        Ok((r, false))
    }

    /// What the view says of trial `n` before it runs: which trial, the
    /// bracket so far, and a guess at the time left (at most the
    /// `budget_left` seconds of --max-time).
    fn shown(
        &self,
        n: usize,
        trial: &Trial,
        done: &[Trial],
        cfg: &Config,
        budget_left: f64,
    ) -> (String, Option<String>, Option<live::campaign::Left>) {
        let lang = self.lang;
        let mut what = wordsf(
            lang,
            "trial {} · {} · {}/s for {} s",
            &[
                &n,
                &stage_word(lang, trial.stage),
                &fmt_rate(trial.rate),
                &trial.seconds,
            ],
        );
        if let Some(level) = &self.level_name {
            what = format!("{level} · {what}");
        }
        let (lo, hi) = bracket(done);
        let context = match (lo, hi) {
            (Some(lo), Some(hi)) => wordsf(
                lang,
                "bracket: {}/s passed, {}/s failed",
                &[&fmt_rate(lo), &fmt_rate(hi)],
            ),
            (Some(lo), None) => wordsf(
                lang,
                "bracket: not closed yet, {}/s passed",
                &[&fmt_rate(lo)],
            ),
            (None, Some(hi)) => wordsf(
                lang,
                "bracket: not closed yet, {}/s failed",
                &[&fmt_rate(hi)],
            ),
            (None, None) => words(lang, "bracket: no trial yet").to_string(),
        };
        let cool = self.cool_down.as_secs_f64();
        let (s, basis) = match (lo, hi) {
            (Some(lo), Some(hi)) => {
                let (s, k) = time_left(cfg, lo, hi, cool);
                (
                    s,
                    wordsf(lang, "about {} trials left in the bracket", &[&k]),
                )
            }
            _ => (
                trial.seconds + time_left(cfg, 1.0, 2.0, cool).0,
                words(lang, "if the next trial closes the bracket").to_string(),
            ),
        };
        let left = if s > budget_left {
            live::campaign::Left {
                s: budget_left.max(0.0),
                estimate: false,
                basis: wordsf(lang, "at most, by --max-time {}", &[&self.args.max_time]),
            }
        } else {
            live::campaign::Left {
                s,
                estimate: true,
                basis,
            }
        };
        (what, Some(context), Some(left))
    }

    /// The problems the monitors diagnosed in the last trial run at `rate`.
    fn ran_out_at(&self, rate: f64) -> Vec<stats::monitor::Diagnosis> {
        self.cache
            .iter()
            .rev()
            .find(|((r, _), _, _)| *r == rate)
            .and_then(|(_, _, res)| res.monitor.as_ref())
            .map(|m| {
                m.diagnoses
                    .iter()
                    .filter(|d| d.severity == "problem")
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// One search to its end.
    fn search(
        &mut self,
        cfg: Config,
        slos: &[stats::threshold::Threshold],
    ) -> Result<Level, Failure> {
        let mut search = Search::new(cfg);
        let mut p99_at: Vec<(f64, String)> = Vec::new();
        let mut figures: Vec<serde_json::Value> = Vec::new();
        let answer = loop {
            let trial = match search.next() {
                Next::Done(answer) => break answer,
                Next::Run(t) => t,
            };
            let left = self.budget_s - self.started.elapsed().as_secs_f64();
            if trial.seconds + 1.0 > left {
                self.front.say(trf(
                    self.lang,
                    "  the next trial ({} s) would pass --max-time {}: stopping",
                    &[&trial.seconds, &self.args.max_time],
                ));
                break search.give_up();
            }
            let n = search.trials().len() + 1;
            let shown = self.shown(n, &trial, search.trials(), &cfg, left);
            let (r, reused) = self.run(&trial, slos, shown)?;
            if r.end.partial {
                self.front.say(trf(
                    self.lang,
                    "  interrupted: the trial at {}/s did not finish",
                    &[&fmt_rate(trial.rate)],
                ));
                let answer = search.interrupt();
                return Ok(Level {
                    answer,
                    figures,
                    p99_at,
                    interrupted: true,
                    ran_out: Vec::new(),
                });
            }
            let v = verdict(&r, slos);
            let mut shown = line(n, &trial, &v, &r, self.lang);
            if reused {
                shown.push_str(tr(self.lang, "  (an earlier trial, judged again)"));
            }
            self.front.say(shown);
            if let Some(c) = &mut self.front.view {
                c.finished(trial_row(n, &trial, &v, &r, reused, self.lang));
            }
            figures.push(serde_json::json!({
                "rate": trial.rate,
                "responses_per_s": r.summary.rps,
                "p50_ms": r.summary.latency.at(50.0).map(|v| v / 1000.0),
                "p99_ms": r.summary.latency.at(99.0).map(|v| v / 1000.0),
                "errors_pct": r.summary.errors as f64 * 100.0 / r.summary.requests.max(1) as f64,
                "slos": r.thresholds.iter().map(|t| serde_json::json!({
                    "expr": t.expr, "actual": t.actual, "unit": t.unit, "passed": t.passed,
                })).collect::<Vec<_>>(),
            }));
            if matches!(v, Verdict::Pass { .. }) {
                if let Some(p) = r.summary.latency.at(99.0) {
                    p99_at.retain(|(rate, _)| *rate != trial.rate);
                    p99_at.push((trial.rate, duration_us(p)));
                }
            }
            // An overloaded server still works off its queue after the
            // client has gone: the next trial must not inherit it.
            let overloaded = !matches!(v, Verdict::Pass { marginal: false });
            search.record(trial, v);
            if overloaded && !reused && !self.cool_down.is_zero() {
                let rest = Instant::now();
                if let Some(c) = &mut self.front.view {
                    c.note(Some(format!(
                        "cooling down {} (--cool-down)",
                        humantime::format_duration(self.cool_down)
                    )));
                }
                while rest.elapsed() < self.cool_down
                    && self.stop.cause().is_none()
                    && host::signals::received().is_none()
                {
                    std::thread::sleep(
                        (self.cool_down - rest.elapsed()).min(Duration::from_millis(100)),
                    );
                }
            }
        };
        let ran_out = answer
            .failed_at
            .map_or_else(Vec::new, |hi| self.ran_out_at(hi));
        Ok(Level {
            answer,
            figures,
            p99_at,
            interrupted: false,
            ran_out,
        })
    }
}

/// Prints a level's answer; returns its exit code.
fn conclude(a: &FindMaxArgs, level: &Level, lang: Lang) -> u8 {
    let answer = &level.answer;
    match answer.end {
        End::Converged | End::MaxRate | End::OutOfTrials | End::Interrupted => {
            match answer.max_rate {
                Some(max) => {
                    let bracket = match answer.failed_at {
                        Some(hi) => trf(
                            lang,
                            ", between {} and {} (which failed)",
                            &[&fmt_rate(max), &fmt_rate(hi)],
                        ),
                        None => String::new(),
                    };
                    let at = level
                        .p99_at
                        .iter()
                        .find(|(rate, _)| *rate == max)
                        .map(|(_, p)| trf(lang, "; p99 there {}", &[p]))
                        .unwrap_or_default();
                    let qualifier = match answer.end {
                        End::MaxRate => trf(
                            lang,
                            " — at least: the SLOs still held at --max-rate {}; raise it to search higher",
                            &[&a.max_rate],
                        ),
                        End::OutOfTrials => tr(
                            lang,
                            " — not confirmed: the search ran out of time or trials; the true maximum may be higher or lower",
                        )
                        .into(),
                        End::Interrupted => tr(
                            lang,
                            " — interrupted before the search ended: not confirmed",
                        )
                        .into(),
                        _ => String::new(),
                    };
                    println!(
                        "{}{bracket}{at}{qualifier}.",
                        trf(lang, "Max rate under the SLOs: {}/s", &[&fmt_rate(max)])
                    );
                    println!(
                        "{}",
                        trf(
                            lang,
                            "Recommended operating rate: {}–{}/s (70–80% of it), headroom for bursts and for what the search cannot see.",
                            &[&fmt_rate(max * 0.7), &fmt_rate(max * 0.8)]
                        )
                    );
                    if let (Some(hi), false) = (answer.failed_at, level.ran_out.is_empty()) {
                        println!(
                            "{}",
                            trf(
                                lang,
                                "What ran out at {}/s (the monitors):",
                                &[&fmt_rate(hi)]
                            )
                        );
                        for d in &level.ran_out {
                            let (message, fix) = report::monitor::diagnosis(d, lang);
                            println!("  - {message}\n    {}: {fix}", tr(lang, "fix"));
                        }
                    }
                    if answer.end == End::Converged {
                        exit::OK
                    } else {
                        exit::THRESHOLD
                    }
                }
                None => {
                    println!(
                        "{}",
                        tr(lang, "No rate held the SLOs before the search stopped.")
                    );
                    exit::THRESHOLD
                }
            }
        }
        End::BelowMinRate => {
            println!(
                "{}",
                trf(
                    lang,
                    "The SLOs failed even at --min-rate {}/s: the server cannot meet them at any rate searched.",
                    &[&a.min_rate]
                )
            );
            exit::THRESHOLD
        }
        End::ClientBound => {
            let why = answer
                .trials
                .last()
                .and_then(|t| match &t.verdict {
                    Some(Verdict::Invalid { why }) => Some(why.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            println!(
                "{}",
                trf(
                    lang,
                    "Stopped: the client, not the server, was the limit at {}/s — {}. The answer would be the client's capacity, not the server's.",
                    &[
                        &answer.trials.last().map_or("?".into(), |t| fmt_rate(t.rate)),
                        &why
                    ]
                )
            );
            exit::RUNTIME
        }
    }
}

/// "Searching the highest rate at which p99<100ms holds — URL" (`hold`
/// for several SLOs).
fn searching(exprs: &[String], url: &str, lang: Lang) -> String {
    let template = if exprs.len() == 1 {
        "Searching the highest rate at which {} holds — {}"
    } else {
        "Searching the highest rate at which {} hold — {}"
    };
    trf(lang, template, &[&exprs.join(tr(lang, " and ")), &url])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_slo_holds_and_several_hold() {
        let one = searching(&["p99<100ms".into()], "http://h/", Lang::En);
        assert_eq!(
            one,
            "Searching the highest rate at which p99<100ms holds — http://h/"
        );
        let two = searching(&["p99<100ms".into(), "errors<1%".into()], "u", Lang::En);
        assert!(two.contains("p99<100ms and errors<1% hold — u"), "{two}");
        assert!(searching(&["p99<1s".into()], "u", Lang::Zh).starts_with("搜索满足 p99<1s"));
    }
}
