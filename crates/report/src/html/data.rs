//! What the HTML report's charts draw, built from results alone: the
//! per-second series on the run's time axis (several runs aligned on time
//! since their start), the latency percentile spectrum and histogram from
//! the HDR histograms, and the phases.
//!
//! Long runs are bucketed so a chart never carries more than
//! [`MAX_POINTS`] points: a bucket's rate is its mean, with the slowest and
//! fastest second drawn as an envelope, and its latencies are the highest
//! of its seconds, so a one-second stall stays visible in a 24-hour run.
//! The tables behind each chart use the same code with coarser buckets.
//!
//! The chart types are public: the lab's experiment page (`yace-lab`) draws
//! its charts against a swept parameter with the same page script.

use crate::lang::{tr, trf, Lang};
use hdrhistogram::Histogram;
use plan::Load;
use serde_json::{json, Value};
use stats::{RunResult, SecondRow};
use std::collections::BTreeMap;

/// Most points a time chart draws per line.
pub(crate) const MAX_POINTS: usize = 1500;
/// Most rows of a time chart's table.
pub(crate) const TABLE_ROWS: usize = 120;
/// Bars of the latency histogram.
const HIST_BUCKETS: usize = 60;
/// The spectrum's x axis: −log10(1 − q) from 0 (q = 0) to 5 (99.999 %).
const SPECTRUM_MAX: f64 = 5.0;
const SPECTRUM_STEP: f64 = 0.02;
/// Percentiles of the spectrum's table.
pub(crate) const TABLE_PERCENTILES: [f64; 9] =
    [0.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999];

/// One colour per run when runs are overlaid (colour-blind-safe order).
pub const RUN_COLORS: [&str; 8] = [
    "#1f6fb4", "#d9480f", "#2b8a3e", "#862e9c", "#e67700", "#0b7285", "#c2255c", "#495057",
];

/// How a line's values read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Microseconds.
    Us,
    PerSecond,
    /// CPU-seconds per second (1 = one core busy).
    Cores,
    Count,
    Percent,
    /// A share of CPU, to a tenth of a percent.
    Cpu,
    Bytes,
    /// A plain figure to two decimals (load per CPU).
    Ratio,
}

impl Unit {
    fn key(self) -> &'static str {
        match self {
            Unit::Us => "us",
            Unit::PerSecond => "per_s",
            Unit::Cores => "cores",
            Unit::Count => "count",
            Unit::Percent => "pct",
            Unit::Cpu => "cpu",
            Unit::Bytes => "bytes",
            Unit::Ratio => "ratio",
        }
    }

    /// The value as a table shows it.
    pub fn show(self, v: f64) -> String {
        match self {
            Unit::Us => crate::fmt::duration_us(v),
            Unit::PerSecond => format!("{v:.1}/s"),
            Unit::Cores => format!("{v:.3}"),
            Unit::Count => format!("{v:.1}"),
            Unit::Percent => format!("{v:.3}%"),
            Unit::Cpu => format!("{v:.1}%"),
            Unit::Bytes => crate::fmt::bytes(v),
            Unit::Ratio => format!("{v:.2}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// x: seconds since the start.
    Time,
    /// x: −log10(1 − q).
    Spectrum,
    /// x: latency in µs (log), drawn as bars.
    Histogram,
    /// x: an offered rate (log), one point per trial.
    Search,
    /// x: a swept parameter's values (a lab experiment's concurrency);
    /// the log toggle switches the x axis. Lines with `dots` are joined
    /// across the x values they have no figure at (a fitted curve's).
    Sweep,
    /// x: 0, 1, 2… naming `axis.ticks` (targets of a before/after): a dot
    /// plot, each line's figures unjoined.
    Groups,
}

/// A line's values, None where there is nothing to draw.
pub type Values = Vec<Option<f64>>;
/// Each point's lowest and highest second.
pub type Band = (Values, Values);

#[derive(Debug, Clone)]
pub struct Line {
    pub label: String,
    pub unit: Unit,
    /// 0: the left axis, 1: the right one.
    pub axis: u8,
    pub color: &'static str,
    pub dash: bool,
    pub values: Vec<Option<f64>>,
    /// Each point's lowest and highest second (bucketed rates only).
    pub band: Option<Band>,
    /// Drawn as points, not joined.
    pub points: bool,
    /// Joined across its gaps, each value a dot: a figure read at fewer
    /// samples than the rest of its source (a server's per-port counts).
    pub sparse: bool,
    /// Each point's confidence interval, drawn as an error bar.
    pub err: Option<Band>,
    /// Each point's individual figures (repetitions), drawn as dots.
    pub dots: Vec<Vec<f64>>,
}

#[derive(Debug, Clone)]
pub struct Chart {
    pub id: String,
    pub title: String,
    pub kind: Kind,
    /// What a reader should know to read it (shown under the chart).
    pub note: String,
    pub x: Vec<f64>,
    pub lines: Vec<Line>,
    /// The left axis may be switched to a log scale (a `Sweep`'s x axis).
    pub log: bool,
    /// The x axis of a `Sweep` or `Groups` chart.
    pub axis: Axis,
}

/// What the x axis of a `Sweep` or `Groups` chart shows.
#[derive(Debug, Clone, Default)]
pub struct Axis {
    /// Its name (the swept parameter).
    pub name: String,
    /// The names of x = 0, 1, 2… (`Groups`).
    pub ticks: Vec<String>,
    /// Vertical lines (a knee).
    pub marks: Vec<Mark>,
    /// The log toggle starts on.
    pub log_first: bool,
}

/// A vertical line across a chart at `x`, labelled.
#[derive(Debug, Clone)]
pub struct Mark {
    pub x: f64,
    pub label: String,
    pub color: &'static str,
}

impl Chart {
    /// The chart for the page's script.
    pub fn to_json(&self) -> Value {
        let round = |v: &Option<f64>| match v {
            Some(x) if x.is_finite() => json!(tidy(*x)),
            _ => Value::Null,
        };
        let arr = |vs: &[Option<f64>]| Value::Array(vs.iter().map(round).collect());
        let mut out = json!({
            "id": self.id,
            "title": self.title,
            "kind": match self.kind {
                Kind::Time => "time",
                Kind::Spectrum => "spectrum",
                Kind::Histogram => "hist",
                Kind::Search => "search",
                Kind::Sweep => "sweep",
                Kind::Groups => "groups",
            },
            "log": self.log,
            "x": self.x.iter().map(|&x| tidy(x)).collect::<Vec<_>>(),
            "series": self.lines.iter().map(|l| {
                let mut s = json!({
                    "label": l.label,
                    "unit": l.unit.key(),
                    "axis": l.axis,
                    "color": l.color,
                    "dash": l.dash,
                    "values": arr(&l.values),
                    "points": l.points,
                });
                if l.sparse {
                    s["sparse"] = json!(true);
                }
                if let Some((lo, hi)) = &l.band {
                    s["lo"] = arr(lo);
                    s["hi"] = arr(hi);
                }
                if let Some((lo, hi)) = &l.err {
                    s["err_lo"] = arr(lo);
                    s["err_hi"] = arr(hi);
                }
                if !l.dots.is_empty() {
                    s["dots"] = json!(l.dots.iter().map(|d| d.iter().map(|&v| tidy(v)).collect::<Vec<_>>()).collect::<Vec<_>>());
                }
                s
            }).collect::<Vec<_>>(),
        });
        let a = &self.axis;
        if !a.name.is_empty() {
            out["axis"] = json!(a.name);
        }
        if !a.ticks.is_empty() {
            out["ticks"] = json!(a.ticks);
        }
        if !a.marks.is_empty() {
            out["marks"] = json!(a
                .marks
                .iter()
                .map(|m| json!({"x": tidy(m.x), "label": m.label, "color": m.color}))
                .collect::<Vec<_>>());
        }
        out
    }
}

/// Four significant digits at most: the page carries no noise digits.
fn tidy(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return 0.0;
    }
    let mag = x.abs().log10().floor() as i32;
    let scale = 10f64.powi(3 - mag);
    (x * scale).round() / scale
}

/// Seconds per bucket so that `seconds` fit in `most` points.
pub(crate) fn bucket_width(seconds: usize, most: usize) -> usize {
    seconds.div_ceil(most.max(1)).max(1)
}

/// One bucket of one run's seconds.
#[derive(Debug, Default, Clone)]
struct Agg {
    rows: usize,
    length_s: f64,
    responses: u64,
    errors: u64,
    dropped: u64,
    classes: [u64; 5],
    failures: BTreeMap<sample::Outcome, u64>,
    connects: u64,
    in_flight_s: f64,
    /// Users × seconds, and the seconds that had a users figure.
    users_s: f64,
    users_len: f64,
    cpu_s: f64,
    /// Highest of the seconds' latency figures (None: no response).
    p50: Option<f64>,
    p90: Option<f64>,
    p99: Option<f64>,
    max: Option<f64>,
    lag_p99: Option<f64>,
    /// Slowest and fastest whole second's responses/s.
    rate_lo: Option<f64>,
    rate_hi: Option<f64>,
}

fn hi(a: Option<f64>, b: f64) -> Option<f64> {
    Some(a.map_or(b, |a| a.max(b)))
}

fn lo(a: Option<f64>, b: f64) -> Option<f64> {
    Some(a.map_or(b, |a| a.min(b)))
}

impl Agg {
    fn add(&mut self, r: &SecondRow) {
        self.rows += 1;
        self.length_s += r.length_s;
        self.responses += r.responses;
        self.errors += r.errors;
        self.dropped += r.dropped;
        for (a, b) in self.classes.iter_mut().zip([
            r.status_1xx,
            r.status_2xx,
            r.status_3xx,
            r.status_4xx,
            r.status_5xx,
        ]) {
            *a += b;
        }
        for (o, n) in &r.failures {
            *self.failures.entry(*o).or_default() += n;
        }
        self.connects += r.connects;
        self.in_flight_s += r.in_flight * r.length_s;
        if let Some(u) = r.users {
            self.users_s += u * r.length_s;
            self.users_len += r.length_s;
        }
        self.cpu_s += r.client_cpu_s;
        if r.responses > 0 {
            self.p50 = hi(self.p50, r.latency_p50_us);
            self.p90 = hi(self.p90, r.latency_p90_us);
            self.p99 = hi(self.p99, r.latency_p99_us);
            self.max = hi(self.max, r.latency_max_us);
        }
        if let Some(l) = r.lag_p99_us {
            self.lag_p99 = hi(self.lag_p99, l);
        }
        if r.length_s >= 0.999 {
            let rate = r.responses as f64 / r.length_s;
            self.rate_lo = lo(self.rate_lo, rate);
            self.rate_hi = hi(self.rate_hi, rate);
        }
    }

    /// `n` per second over the bucket; none for a sliver of a second (the
    /// run's last, cut short) whose rate would be noise.
    fn per_s(&self, n: u64) -> Option<f64> {
        (self.length_s >= 0.2).then(|| n as f64 / self.length_s)
    }
}

/// A run's seconds in buckets of `width` seconds, `points` of them (runs
/// shorter than the longest have no buckets at their end).
fn buckets(series: &[SecondRow], width: usize, points: usize) -> Vec<Option<Agg>> {
    let mut out: Vec<Option<Agg>> = vec![None; points];
    for row in series {
        let b = row.second as usize / width;
        if let Some(slot) = out.get_mut(b) {
            slot.get_or_insert_with(Agg::default).add(row);
        }
    }
    out
}

/// The planned level at `t` seconds of piecewise-linear stages
/// (duration_s, from, to); None after the last.
fn staged(stages: &[(f64, f64, f64)], t: f64) -> Option<f64> {
    let mut t0 = 0.0;
    for &(d, from, to) in stages {
        if t < t0 + d {
            return Some(from + (to - from) * (t - t0) / d.max(1e-9));
        }
        t0 += d;
    }
    None
}

fn get(aggs: &[Option<Agg>], f: impl Fn(&Agg) -> Option<f64>) -> Vec<Option<f64>> {
    aggs.iter().map(|a| a.as_ref().and_then(&f)).collect()
}

pub fn line(label: impl Into<String>, unit: Unit, color: &'static str) -> Line {
    Line {
        label: label.into(),
        unit,
        axis: 0,
        color,
        dash: false,
        values: Vec::new(),
        band: None,
        points: false,
        sparse: false,
        err: None,
        dots: Vec::new(),
    }
}

pub(crate) fn with(mut l: Line, values: Vec<Option<f64>>) -> Line {
    l.values = values;
    l
}

pub(crate) fn dashed(mut l: Line) -> Line {
    l.dash = true;
    l
}

pub(crate) fn right(mut l: Line) -> Line {
    l.axis = 1;
    l
}

/// One run's seconds as the time charts draw them, with the few facts
/// of the run their planned lines and notes need. A finished result gives
/// them ([`Seconds::of`]); so does a run still going (the live page, from
/// its plan and the rows finished so far).
#[derive(Debug, Clone, Copy)]
pub struct Seconds<'a> {
    pub series: &'a [SecondRow],
    pub load: &'a Load,
    /// Requests were dropped (the dropped/s line is drawn).
    pub dropped: bool,
    /// Latency counts from when each request was due (every model but the
    /// closed one).
    pub scheduled: bool,
    /// The client's worker threads, and the CPUs it may use.
    pub threads: usize,
    pub cpus_allowed: usize,
    /// The open model's rate as steered while it ran (the live view's keys).
    pub steering: Option<&'a stats::Steered>,
    /// The part of the plan this run was (a shard's planned lines are its
    /// share).
    pub part: plan::Shard,
}

impl<'a> Seconds<'a> {
    /// A finished run's.
    pub fn of(r: &'a RunResult) -> Seconds<'a> {
        Seconds {
            series: &r.series,
            load: &r.plan.load,
            dropped: r.summary.dropped > 0,
            scheduled: r.summary.service.is_some(),
            threads: r.client.threads,
            cpus_allowed: r.environment.cpus_allowed,
            steering: r.steering.as_ref(),
            part: r.plan.part(),
        }
    }
}

/// The steering factor in force at `t` seconds (1 when not steered).
fn steered(st: Option<&stats::Steered>, t: f64) -> f64 {
    st.and_then(|s| s.segments.iter().rev().find(|g| g.at_s <= t))
        .map_or(1.0, |g| g.factor)
}

/// The users steering added at `t` seconds (0 when not steered).
fn users_added(st: Option<&stats::Steered>, t: f64) -> f64 {
    st.and_then(|s| s.users.iter().rev().find(|g| g.at_s <= t))
        .map_or(0.0, |g| g.delta as f64)
}

/// The time charts, bucketed to at most `most` points.
pub(crate) fn time_charts(runs: &[(String, RunResult)], most: usize, lang: Lang) -> Vec<Chart> {
    let seconds: Vec<Seconds> = runs.iter().map(|(_, r)| Seconds::of(r)).collect();
    time_charts_of(&seconds, most, lang)
}

/// [`time_charts`] of runs' seconds (one run: the full set of charts).
pub(crate) fn time_charts_of(runs: &[Seconds], most: usize, lang: Lang) -> Vec<Chart> {
    let seconds = runs.iter().map(|r| r.series.len()).max().unwrap_or(0);
    if seconds == 0 {
        return Vec::new();
    }
    let width = bucket_width(seconds, most);
    let points = seconds.div_ceil(width);
    let x: Vec<f64> = (0..points).map(|b| (b * width) as f64).collect();
    let all: Vec<Vec<Option<Agg>>> = runs
        .iter()
        .map(|r| buckets(r.series, width, points))
        .collect();
    let per = if width > 1 {
        trf(lang, " Each point covers {} s: rates are the mean, with the slowest and fastest second as a band; latencies are the highest of those seconds.", &[&width])
    } else {
        String::new()
    };
    let chart = |id: &str, title: &str, note: String, log, lines| Chart {
        id: id.to_string(),
        title: title.to_string(),
        kind: Kind::Time,
        note: format!("{note}{per}"),
        x: x.clone(),
        lines,
        log,
        axis: Axis::default(),
    };
    let mut charts = Vec::new();
    let band = |aggs: &[Option<Agg>]| {
        (width > 1).then(|| (get(aggs, |a| a.rate_lo), get(aggs, |a| a.rate_hi)))
    };
    if let [r] = runs {
        let a = &all[0];
        let mut thr = vec![Line {
            band: band(a),
            ..with(
                line(tr(lang, "responses/s"), Unit::PerSecond, RUN_COLORS[0]),
                get(a, |g| g.per_s(g.responses)),
            )
        }];
        thr.push(with(
            line(tr(lang, "errors/s"), Unit::PerSecond, "#c92a2a"),
            get(a, |g| g.per_s(g.errors)),
        ));
        if r.dropped {
            thr.push(with(
                line(
                    tr(lang, "dropped/s (not sent in time)"),
                    Unit::PerSecond,
                    "#e67700",
                ),
                get(a, |g| g.per_s(g.dropped)),
            ));
        }
        let mut note = tr(
            lang,
            "Complete responses (any status) and failed requests per second.",
        )
        .to_string();
        match r.load {
            Load::Open { stages, .. } => {
                let st: Vec<_> = stages
                    .iter()
                    .map(|s| (s.duration.as_secs_f64(), s.from, s.to))
                    .collect();
                // Steered: the plan's rate times the factor then in force.
                let steering = r.steering;
                thr.push(dashed(with(
                    line(
                        tr(
                            lang,
                            if steering.is_some() {
                                "offered rate (as steered)"
                            } else {
                                "offered rate (planned)"
                            },
                        ),
                        Unit::PerSecond,
                        "#495057",
                    ),
                    x.iter()
                        .map(|&t| {
                            let mid = t + width as f64 / 2.0;
                            staged(&st, mid).map(|v| r.part.rate_share(v) * steered(steering, mid))
                        })
                        .collect(),
                )));
                note.push_str(tr(
                    lang,
                    if steering.is_some() {
                        " The dashed line is the rate offered: the plan's, as it was steered during the run."
                    } else {
                        " The dashed line is the rate the plan offered."
                    },
                ));
            }
            Load::Users { stages, .. } => {
                let st: Vec<_> = stages
                    .iter()
                    .map(|s| (s.duration.as_secs_f64(), s.from, s.to))
                    .collect();
                if r.series.iter().any(|row| row.users.is_some()) {
                    thr.push(right(with(
                        line(tr(lang, "users (active)"), Unit::Count, "#868e96"),
                        get(a, |g| (g.users_len >= 0.2).then(|| g.users_s / g.users_len)),
                    )));
                }
                // Steered: the plan's users plus those added then.
                let steering = r.steering.filter(|s| !s.users.is_empty());
                thr.push(right(dashed(with(
                    line(
                        tr(
                            lang,
                            if steering.is_some() {
                                "users (as steered)"
                            } else {
                                "users (planned)"
                            },
                        ),
                        Unit::Count,
                        "#495057",
                    ),
                    x.iter()
                        .map(|&t| {
                            let mid = t + width as f64 / 2.0;
                            staged(&st, mid).map(|v| {
                                (r.part.level_share(v) + users_added(steering, mid)).max(0.0)
                            })
                        })
                        .collect(),
                ))));
                note.push_str(tr(
                    lang,
                    if steering.is_some() {
                        " The dashed line (right axis) is the number of virtual users the plan ran, as it was steered during the run."
                    } else {
                        " The dashed line (right axis) is the number of virtual users the plan ran."
                    },
                ));
                if r.series.iter().any(|row| row.users.is_some()) {
                    note.push_str(tr(
                        lang,
                        " The grey line (right axis) is the users that were active, measured.",
                    ));
                }
            }
            Load::Closed { .. } => {}
        }
        charts.push(chart(
            "throughput",
            tr(lang, "Responses per second"),
            note,
            false,
            thr,
        ));
        charts.push(chart(
            "latency",
            tr(lang, "Latency over time"),
            latency_note(r.scheduled, lang),
            true,
            vec![
                with(
                    line(tr(lang, "p50"), Unit::Us, "#2b8a3e"),
                    get(a, |g| g.p50),
                ),
                with(
                    line(tr(lang, "p90"), Unit::Us, "#1f6fb4"),
                    get(a, |g| g.p90),
                ),
                with(
                    line(tr(lang, "p99"), Unit::Us, "#d9480f"),
                    get(a, |g| g.p99),
                ),
                dashed(with(
                    line(tr(lang, "max"), Unit::Us, "#868e96"),
                    get(a, |g| g.max),
                )),
            ],
        ));
        let mut st = Vec::new();
        for (i, (name, color)) in [
            ("1xx/other", "#868e96"),
            ("2xx", "#2b8a3e"),
            ("3xx", "#1f6fb4"),
            ("4xx", "#e67700"),
            ("5xx", "#c92a2a"),
        ]
        .into_iter()
        .enumerate()
        {
            if i == 1 || a.iter().flatten().any(|g| g.classes[i] > 0) {
                st.push(with(
                    line(format!("{name}/s"), Unit::PerSecond, color),
                    get(a, |g| g.per_s(g.classes[i])),
                ));
            }
        }
        let outcomes: std::collections::BTreeSet<_> = a
            .iter()
            .flatten()
            .flat_map(|g| g.failures.keys().copied())
            .collect();
        for (k, o) in outcomes.into_iter().enumerate() {
            st.push(dashed(with(
                line(
                    format!("{}/s", o.name()),
                    Unit::PerSecond,
                    RUN_COLORS[(k + 3) % RUN_COLORS.len()],
                ),
                get(a, |g| g.per_s(g.failures.get(&o).copied().unwrap_or(0))),
            )));
        }
        charts.push(chart("statuses", tr(lang, "Status classes and errors per second"),
            tr(lang, "Responses by status class (solid) and failed requests by cause (dashed), per second.").into(),
            false,
            st,
        ));
        charts.push(chart("inflight", tr(lang, "Requests in flight and new connections"),
            tr(lang, "Requests in flight (mean over each second, sampled every 100 ms) and connections opened per second (right axis).").into(),
            false,
            vec![
                with(
                    line(tr(lang, "in flight"), Unit::Count, RUN_COLORS[0]),
                    get(a, |g| (g.length_s >= 0.2).then(|| g.in_flight_s / g.length_s)),
                ),
                right(with(
                    line(tr(lang, "connections opened/s"), Unit::PerSecond, "#e67700"),
                    get(a, |g| g.per_s(g.connects)),
                )),
            ],
        ));
        let mut client = vec![with(
            line(tr(lang, "client CPU (cores)"), Unit::Cores, RUN_COLORS[3]),
            get(a, |g| (g.length_s >= 0.2).then(|| g.cpu_s / g.length_s)),
        )];
        let scheduled = r.series.iter().any(|s| s.lag_p99_us.is_some());
        if scheduled {
            client.push(right(with(
                line(tr(lang, "schedule lag p99"), Unit::Us, "#d9480f"),
                get(a, |g| g.lag_p99),
            )));
        }
        charts.push(chart("client", tr(lang, "The client itself"),
            trf(
                lang,
                "CPU used by yace's {} worker thread(s), in cores ({} allowed){}. A client near its limit measures itself, not the server.",
                &[
                    &r.threads,
                    &r.cpus_allowed,
                    &if scheduled { tr(lang, "; and how late requests were sent (schedule lag p99, right axis)") } else { "" },
                ],
            ),
            false,
            client,
        ));
    } else {
        let color = |i: usize| RUN_COLORS[i % RUN_COLORS.len()];
        let tag = |i: usize, what: &'static str| format!("[{}] {}", i + 1, tr(lang, what));
        // One line per run of the same figure.
        let per_run = |what: &'static str, unit: Unit, f: &dyn Fn(&Agg) -> Option<f64>| {
            all.iter()
                .enumerate()
                .map(|(i, a)| with(line(tag(i, what), unit, color(i)), get(a, f)))
                .collect::<Vec<_>>()
        };
        charts.push(chart(
            "throughput",
            tr(lang, "Responses per second"),
            tr(lang, "Each run on its own time since start.").into(),
            false,
            all.iter()
                .enumerate()
                .map(|(i, a)| Line {
                    band: band(a),
                    ..with(
                        line(tag(i, "responses/s"), Unit::PerSecond, color(i)),
                        get(a, |g| g.per_s(g.responses)),
                    )
                })
                .collect(),
        ));
        let mut lat = Vec::new();
        for (i, a) in all.iter().enumerate() {
            lat.push(with(
                line(tag(i, "p99"), Unit::Us, color(i)),
                get(a, |g| g.p99),
            ));
            lat.push(dashed(with(
                line(tag(i, "p50"), Unit::Us, color(i)),
                get(a, |g| g.p50),
            )));
        }
        charts.push(chart(
            "latency",
            tr(lang, "Latency over time"),
            "p99 (solid) and p50 (dashed) of each run.".into(),
            true,
            lat,
        ));
        charts.push(chart(
            "errors",
            tr(lang, "Errors per second"),
            tr(
                lang,
                "Failed requests per second (non-2xx responses are not errors).",
            )
            .into(),
            false,
            per_run("errors/s", Unit::PerSecond, &|g| g.per_s(g.errors)),
        ));
        charts.push(chart(
            "client",
            tr(lang, "Client CPU"),
            tr(
                lang,
                "CPU used by yace's worker threads in each run, in cores.",
            )
            .into(),
            false,
            per_run("client CPU", Unit::Cores, &|g| {
                (g.length_s >= 0.2).then(|| g.cpu_s / g.length_s)
            }),
        ));
    }
    charts
}

fn latency_note(scheduled: bool, lang: Lang) -> String {
    if scheduled {
        tr(lang, "Latency of each second's responses, from when each request was due (coordinated omission corrected).").into()
    } else {
        tr(lang, "Latency of each second's responses. Closed model: this is service time; a stall shows as fewer responses, not as latency.").into()
    }
}

fn decode(s: &str) -> Option<Histogram<u64>> {
    stats::hist::decode(s).ok().filter(|h| !h.is_empty())
}

/// The value at percentile position x = −log10(1 − q), where the
/// histogram holds enough values to say it.
fn at_x(h: &Histogram<u64>, x: f64) -> Option<f64> {
    let tail = 10f64.powf(-x);
    if x > 0.0 && tail * (h.len() as f64) < 1.0 {
        return None;
    }
    Some(h.value_at_quantile((1.0 - tail).clamp(0.0, 1.0)) as f64)
}

/// x positions of the spectrum: evenly spaced for drawing, or the table's
/// percentiles.
pub(crate) fn spectrum_xs(table: bool) -> Vec<f64> {
    if table {
        TABLE_PERCENTILES
            .iter()
            .map(|p| -(1.0 - p / 100.0f64).log10())
            .collect()
    } else {
        let n = (SPECTRUM_MAX / SPECTRUM_STEP).round() as usize;
        (0..=n).map(|i| i as f64 * SPECTRUM_STEP).collect()
    }
}

fn spectrum(
    id: &'static str,
    title: &str,
    note: &str,
    xs: &[f64],
    hs: Vec<(Line, Histogram<u64>)>,
) -> Chart {
    Chart {
        id: id.to_string(),
        title: title.into(),
        kind: Kind::Spectrum,
        note: note.into(),
        x: xs.to_vec(),
        lines: hs
            .into_iter()
            .map(|(l, h)| with(l, xs.iter().map(|&x| at_x(&h, x)).collect()))
            .collect(),
        log: true,
        axis: Axis::default(),
    }
}

/// The latency percentile spectrum (with service time for open models),
/// one line per run when several.
pub(crate) fn spectrum_chart(
    runs: &[(String, RunResult)],
    xs: &[f64],
    lang: Lang,
) -> Option<Chart> {
    let mut hs = Vec::new();
    if let [(_, r)] = runs {
        hs.extend(
            decode(&r.histograms.latency)
                .map(|h| (line(tr(lang, "latency"), Unit::Us, RUN_COLORS[0]), h)),
        );
        if let Some(h) = r.histograms.service.as_deref().and_then(decode) {
            hs.push((
                dashed(line(
                    tr(lang, "service time (from actual send)"),
                    Unit::Us,
                    RUN_COLORS[1],
                )),
                h,
            ));
        }
    } else {
        for (i, (_, r)) in runs.iter().enumerate() {
            if let Some(h) = decode(&r.histograms.latency) {
                hs.push((
                    line(
                        format!("[{}] {}", i + 1, tr(lang, "latency")),
                        Unit::Us,
                        RUN_COLORS[i % RUN_COLORS.len()],
                    ),
                    h,
                ));
            }
        }
    }
    (!hs.is_empty()).then(|| {
        spectrum(
            "spectrum",
            tr(lang, "Latency by percentile"),
            tr(lang, "Every percentile from the run's full-resolution histogram: the x axis stretches the tail (90 %, 99 %, 99.9 % … are equally spaced), where users wait longest."),
            xs,
            hs,
        )
    })
}

/// Where a request's time went (single run).
pub(crate) fn phases_chart(r: &RunResult, xs: &[f64], lang: Lang) -> Option<Chart> {
    let h = &r.histograms;
    let mut hs = Vec::new();
    for (label, s, color) in [
        (
            "TCP connect (per connection)",
            Some(&h.handshake),
            "#e67700",
        ),
        ("TLS handshake", h.tls.as_ref(), "#862e9c"),
        ("wait (sent → first byte)", Some(&h.wait), "#1f6fb4"),
        (
            "processing (sent → last byte)",
            Some(&h.processing),
            "#2b8a3e",
        ),
    ] {
        if let Some(h) = s.and_then(|s| decode(s)) {
            hs.push((line(tr(lang, label), Unit::Us, color), h));
        }
    }
    (!hs.is_empty()).then(|| {
        spectrum(
            "phases",
            tr(lang, "Phases"),
            tr(lang, "Where a request's time went, by percentile: connecting (once per connection), the TLS handshake, waiting for the first byte, and the whole exchange after sending."),
            xs,
            hs,
        )
    })
}

/// The latency histogram: share of responses per log-spaced bucket.
pub(crate) fn histogram_chart(runs: &[(String, RunResult)], lang: Lang) -> Option<Chart> {
    let hs: Vec<(usize, Histogram<u64>)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, (_, r))| decode(&r.histograms.latency).map(|h| (i, h)))
        .collect();
    if hs.is_empty() {
        return None;
    }
    // One set of buckets for every run, so their bars line up.
    let lo = hs.iter().map(|(_, h)| h.min()).min().unwrap_or(1) as f64;
    let hi = hs.iter().map(|(_, h)| h.max()).max().unwrap_or(1) as f64;
    let edges = crate::graphs::log_edges(lo, hi, HIST_BUCKETS);
    let lines = hs
        .iter()
        .map(|(i, h)| {
            let counts = crate::graphs::bucket_counts(h, &edges);
            let total = counts.iter().sum::<u64>().max(1) as f64;
            let label = if runs.len() == 1 {
                tr(lang, "share of responses").to_string()
            } else {
                format!("[{}] {}", i + 1, tr(lang, "share of responses"))
            };
            with(
                line(label, Unit::Percent, RUN_COLORS[i % RUN_COLORS.len()]),
                counts
                    .iter()
                    .map(|&n| Some(n as f64 * 100.0 / total))
                    .collect(),
            )
        })
        .collect();
    Some(Chart {
        id: "histogram".into(),
        title: tr(lang, "Latency histogram").into(),
        kind: Kind::Histogram,
        note: tr(lang, "Share of responses by latency, in buckets of equal width on a log scale (each bar from its latency to the next).").into(),
        x: edges[..HIST_BUCKETS].to_vec(),
        lines,
        log: false,
        axis: Axis::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_runs_are_bucketed_to_fit() {
        assert_eq!(bucket_width(60, MAX_POINTS), 1);
        assert_eq!(bucket_width(3600, MAX_POINTS), 3);
        assert_eq!(bucket_width(86_400, MAX_POINTS), 58);
        assert!(86_400usize.div_ceil(58) <= MAX_POINTS);
    }

    #[test]
    fn staged_levels_interpolate_and_end() {
        let st = [(10.0, 0.0, 100.0), (5.0, 100.0, 100.0)];
        assert_eq!(staged(&st, 5.0), Some(50.0));
        assert_eq!(staged(&st, 12.0), Some(100.0));
        assert_eq!(staged(&st, 15.0), None);
    }

    #[test]
    fn values_keep_four_significant_digits() {
        assert_eq!(tidy(1234.5678), 1235.0);
        assert_eq!(tidy(0.000123456), 0.0001235);
        assert_eq!(tidy(0.0), 0.0);
    }

    #[test]
    fn the_spectrum_stops_where_the_histogram_has_too_few_values() {
        let mut h = stats::hist::new_hist();
        for v in 1..=1000u64 {
            h.record(v).unwrap();
        }
        assert!(at_x(&h, 2.0).is_some()); // p99 of 1000 values
        assert!(at_x(&h, 3.0).is_some()); // p99.9: the last one
        assert!(at_x(&h, 3.5).is_none());
        let p99 = at_x(&h, 2.0).unwrap();
        assert!((985.0..=1000.0).contains(&p99), "{p99}");
    }
}
