//! Drawing one frame of the dashboard: pure, from the setup, the rows seen
//! so far and the clock, into any ratatui frame (a terminal, or a test's
//! buffer). It never panics on a small area: below a size it drops the
//! charts, then the panels, down to one line.
//!
//! ```text
//!  GET http://127.0.0.1:8080/ · open model: up to 200/s … · 4 threads
//!  ██████████████░░░░░░░░░░ 12s of 30s · 18s left
//! ┌ Responses/s ───────────────────────┐┌ Now ───────────────┐
//! │ chart (last 2 minutes)             ││ responses/s  1,234 │
//! ├ Latency ───────────────────────────┤│ in flight …        │
//! │ p50 p90 p99 max (log scale)        ││ client CPU …       │
//! └────────────────────────────────────┘└────────────────────┘
//! ┌ Status codes and errors ─────────────────────────────────┐
//!  WARNING lines (saturation, lag)
//!  q stop · m marker
//! ```

use crate::keys::Keys;
use crate::setup::{Setup, Shape};
use crate::watch::{per_s, Watch, WINDOW_S};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker as Dot;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Chart, Dataset, Gauge, GraphType, Paragraph};
use ratatui::Frame;
use report::{count, duration_us};
use stats::shortfall::LATE_MS;
use stats::{Marker, SATURATED};

/// How the screen may look: with colours or without (`NO_COLOR`, or a
/// terminal that has none). Without them, lines differ by their dots and
/// emphasis is bold or reversed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    pub color: bool,
}

impl Look {
    /// Colours unless `NO_COLOR` is set (to anything non-empty, as
    /// no-color.org asks) or `TERM` names a monochrome terminal.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Look {
        let no_color = get("NO_COLOR").is_some_and(|v| !v.is_empty());
        let term = get("TERM").unwrap_or_default();
        let mono = term.ends_with("-m")
            || term.ends_with("-mono")
            || term.ends_with("-bw")
            || matches!(
                term.as_str(),
                "vt52" | "vt100" | "vt102" | "vt220" | "vt320" | "dumb"
            );
        Look {
            color: !no_color && !mono,
        }
    }

    fn fg(self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    /// A line's dots: all Braille with colours; without, each its own.
    fn dots(self, k: usize) -> Dot {
        if self.color {
            Dot::Braille
        } else {
            [Dot::Braille, Dot::Dot, Dot::Bar, Dot::Block][k % 4]
        }
    }

    /// A chart's title naming its lines, each in its colour and dots
    /// (the legend, where it hides no data).
    fn title(self, what: &str, lines: &[(&str, Color, usize)]) -> Line<'static> {
        let mut spans = vec![Span::raw(format!(" {what}: "))];
        for &(name, color, k) in lines {
            let dots = if self.color {
                String::new()
            } else {
                format!("{} ", symbol(self.dots(k)))
            };
            spans.push(Span::styled(format!("{dots}{name}"), self.fg(color)));
            spans.push(Span::raw(" "));
        }
        Line::from(spans)
    }

    fn warn(self) -> Style {
        if self.color {
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
        }
    }
}

/// The character a line is drawn with.
fn symbol(d: Dot) -> &'static str {
    match d {
        Dot::Dot => "•",
        Dot::Block => "█",
        Dot::Bar => "▄",
        _ => "⣿",
    }
}

/// Everything a frame shows.
#[derive(Debug)]
pub struct Screen<'a> {
    pub setup: &'a Setup,
    pub watch: &'a Watch,
    /// Seconds since the run started, by the view's clock.
    pub elapsed_s: f64,
    pub markers: &'a [Marker],
    pub keys: &'a Keys,
    /// The run was asked to stop and is ending.
    pub stopping: bool,
    pub look: Look,
    /// What the last steering key did.
    pub steered: Option<&'a str>,
    /// The server now (monitored runs): (label, value) lines.
    pub server: &'a [(String, String)],
}

/// Below these the charts are left out.
const CHARTS_MIN: (u16, u16) = (60, 18);
/// Width of the "Now" panel beside the charts.
const NOW_WIDTH: u16 = 34;

/// Draws one frame.
pub fn draw(f: &mut Frame, s: &Screen) {
    let area = f.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    let warnings = warnings(s);
    let problems = problems(s);
    if area.width < CHARTS_MIN.0 || area.height < CHARTS_MIN.1 {
        return compact(f, area, s, &warnings, &problems);
    }
    let shown_warnings = warnings.len().min(2) as u16;
    let status_h = (problems.len() as u16 + 2).min(8);
    let [head, bar, middle, status, warn, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(8),
        Constraint::Length(status_h),
        Constraint::Length(shown_warnings),
        Constraint::Length(1),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(header(s)), head);
    progress_bar(f, bar, s);
    let [charts, now] =
        Layout::horizontal([Constraint::Min(30), Constraint::Length(NOW_WIDTH)]).areas(middle);
    let [top, bottom] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(charts);
    throughput_chart(f, top, s);
    latency_chart(f, bottom, s);
    f.render_widget(
        Paragraph::new(now_lines(s)).block(Block::bordered().title(" Now ")),
        now,
    );
    f.render_widget(
        Paragraph::new(problems).block(Block::bordered().title(" Status codes and errors ")),
        status,
    );
    f.render_widget(
        Paragraph::new(
            warnings
                .into_iter()
                .take(shown_warnings as usize)
                .map(|w| Line::styled(w, s.look.warn()))
                .collect::<Vec<_>>(),
        ),
        warn,
    );
    f.render_widget(Paragraph::new(footer(s)), foot);
}

/// A small window: the figures as lines, as many as fit, the keys last.
fn compact(f: &mut Frame, area: Rect, s: &Screen, warnings: &[String], problems: &[Line]) {
    let (ratio, label) = progress(s);
    let mut lines = vec![Line::from(format!(
        "{} {label}",
        bar_text(ratio, (area.width / 4).clamp(4, 20) as usize)
    ))];
    lines.extend(
        warnings
            .iter()
            .map(|w| Line::styled(w.clone(), s.look.warn())),
    );
    lines.extend(now_lines(s));
    lines.extend(problems.iter().cloned());
    lines.push(Line::from(s.setup.target.clone()));
    let keep = (area.height as usize).saturating_sub(1);
    lines.truncate(keep);
    lines.push(footer(s));
    f.render_widget(Paragraph::new(lines), area);
}

pub(crate) fn bar_text(ratio: f64, width: usize) -> String {
    let full = ((ratio.clamp(0.0, 1.0) * width as f64).round() as usize).min(width);
    format!("[{}{}]", "#".repeat(full), ".".repeat(width - full))
}

fn header(s: &Screen) -> Line<'static> {
    Line::from(vec![
        Span::styled("yace ", Style::default().add_modifier(Modifier::BOLD)),
        Span::raw(format!("{} · {}", s.setup.target, s.setup.model)),
    ])
}

/// A duration as people read it: `45s`, `2m05s`, `1h02m`.
pub fn clock(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// How far the run is, 0–1, and in words.
fn progress(s: &Screen) -> (f64, String) {
    if s.stopping {
        return (
            1.0,
            format!("{} · stopping, writing the result", clock(s.elapsed_s)),
        );
    }
    let st = s.setup;
    let by_time = st.duration_s.map(|d| {
        let r = (s.elapsed_s / d.max(1e-9)).min(1.0);
        (
            r,
            format!(
                "{} of {} · {} left",
                clock(s.elapsed_s.min(d)),
                clock(d),
                clock(d - s.elapsed_s.min(d))
            ),
        )
    });
    let by_count = st.requests.map(|n| {
        let done = s.watch.finished();
        let r = (done as f64 / n.max(1) as f64).min(1.0);
        let rate = s
            .watch
            .current(st.duration_s)
            .map(|row| per_s(row.responses + row.errors, row))
            .unwrap_or(0.0);
        let left = if rate > 0.0 {
            format!(
                " · about {} left",
                clock(n.saturating_sub(done) as f64 / rate)
            )
        } else {
            String::new()
        };
        (
            r,
            format!(
                "{} of {} requests{left} · {}",
                count(done),
                count(n),
                clock(s.elapsed_s)
            ),
        )
    });
    match (by_time, by_count) {
        (Some(t), Some(c)) => {
            if c.0 > t.0 {
                c
            } else {
                t
            }
        }
        (Some(t), None) => t,
        (None, Some(c)) => c,
        (None, None) => (0.0, format!("{} · no planned end", clock(s.elapsed_s))),
    }
}

fn progress_bar(f: &mut Frame, area: Rect, s: &Screen) {
    let (ratio, label) = progress(s);
    let style = if s.look.color {
        Style::default().fg(Color::Cyan).bg(Color::Black)
    } else {
        Style::default()
    };
    let g = Gauge::default()
        .ratio(ratio.clamp(0.0, 1.0))
        .label(label)
        .gauge_style(style);
    if s.look.color {
        f.render_widget(g, area);
    } else {
        // A gauge without colour is a blank bar: text it is.
        let width = (area.width / 3).clamp(4, 30) as usize;
        f.render_widget(
            Paragraph::new(format!("{} {}", bar_text(ratio, width), progress(s).1)),
            area,
        );
    }
}

/// The x range the charts span: the whole planned run when it fits in
/// the window, else the last [`WINDOW_S`] seconds.
fn x_bounds(s: &Screen) -> [f64; 2] {
    let now = s.elapsed_s.max(1.0);
    match s.setup.duration_s {
        Some(d) if d <= WINDOW_S => [0.0, d.max(1.0)],
        _ if now <= WINDOW_S => [0.0, WINDOW_S.min(s.setup.duration_s.unwrap_or(WINDOW_S))],
        _ => [now - WINDOW_S, now],
    }
}

fn x_axis(s: &Screen, b: [f64; 2]) -> Axis<'static> {
    Axis::default()
        .bounds(b)
        .labels([clock(b[0]), clock((b[0] + b[1]) / 2.0), clock(b[1])])
        .style(s.look.fg(Color::Gray))
}

/// The rows within the x range, as (middle of the second, row).
fn shown<'a>(s: &'a Screen, b: [f64; 2]) -> impl Iterator<Item = (f64, &'a stats::SecondRow)> {
    s.watch
        .recent
        .iter()
        .filter(move |r| r.length_s >= 0.5 && (r.second as f64) >= b[0] && (r.second as f64) < b[1])
        .map(|r| (r.second as f64 + r.length_s / 2.0, r))
}

/// A vertical line per marker in range, from 0 to `top`.
fn marker_lines(s: &Screen, b: [f64; 2], top: f64, lo: f64) -> Vec<Vec<(f64, f64)>> {
    s.markers
        .iter()
        .filter(|m| m.at_s >= b[0] && m.at_s <= b[1])
        .map(|m| vec![(m.at_s, lo), (m.at_s, top)])
        .collect()
}

pub(crate) fn throughput_chart(f: &mut Frame, area: Rect, s: &Screen) {
    let b = x_bounds(s);
    let responses: Vec<(f64, f64)> = shown(s, b)
        .map(|(x, r)| (x, per_s(r.responses, r)))
        .collect();
    let errors: Vec<(f64, f64)> = shown(s, b).map(|(x, r)| (x, per_s(r.errors, r))).collect();
    let planned: Vec<(f64, f64)> = match s.setup.shape {
        Shape::Open { .. } => {
            let (from, to) = (b[0].floor() as i64, b[1].ceil() as i64);
            (from..=to)
                .filter_map(|t| s.setup.planned_at(t as f64).map(|v| (t as f64, v)))
                .collect()
        }
        _ => Vec::new(),
    };
    let top = responses
        .iter()
        .chain(&errors)
        .chain(&planned)
        .map(|p| p.1)
        .fold(0.0, f64::max)
        .max(1.0)
        * 1.1;
    let marks = marker_lines(s, b, top, 0.0);
    // The plan first, under what was measured (they meet when it was offered).
    let mut named = vec![("responses/s", Color::Cyan, 0), ("errors/s", Color::Red, 2)];
    let mut drawn = vec![&responses, &errors];
    if !planned.is_empty() {
        named.insert(0, ("offered (planned)", Color::DarkGray, 1));
        drawn.insert(0, &planned);
    }
    let mut sets: Vec<Dataset> = drawn
        .into_iter()
        .zip(&named)
        .map(|(data, &(name, color, k))| {
            Dataset::default()
                .name(name)
                .marker(s.look.dots(k))
                .graph_type(GraphType::Line)
                .style(s.look.fg(color))
                .data(data)
        })
        .collect();
    for m in &marks {
        sets.push(
            Dataset::default()
                .marker(Dot::Dot)
                .graph_type(GraphType::Line)
                .style(s.look.fg(Color::Yellow))
                .data(m),
        );
    }
    let chart = Chart::new(sets)
        .legend_position(None)
        .block(Block::bordered().title(s.look.title("Responses/s", &named)))
        .x_axis(x_axis(s, b))
        .y_axis(
            Axis::default()
                .bounds([0.0, top])
                .labels([
                    "0".to_string(),
                    count((top / 2.0).round() as u64),
                    count(top.round() as u64),
                ])
                .style(s.look.fg(Color::Gray)),
        );
    f.render_widget(chart, area);
}

pub(crate) fn latency_chart(f: &mut Frame, area: Rect, s: &Screen) {
    let b = x_bounds(s);
    // Log scale: latencies span decades, and a max far above the p99 is
    // the point of drawing it.
    let log = |us: f64| us.max(1.0).log10();
    let line = |pick: fn(&stats::SecondRow) -> f64| -> Vec<(f64, f64)> {
        shown(s, b)
            .filter(|(_, r)| r.responses > 0)
            .map(|(x, r)| (x, log(pick(r))))
            .collect()
    };
    let p50 = line(|r| r.latency_p50_us);
    let p90 = line(|r| r.latency_p90_us);
    let p99 = line(|r| r.latency_p99_us);
    let max = line(|r| r.latency_max_us);
    let lo = p50.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let hi = max.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if lo.is_finite() && hi.is_finite() {
        (lo.floor(), hi.ceil().max(lo.floor() + 1.0))
    } else {
        (2.0, 4.0)
    };
    let marks = marker_lines(s, b, hi, lo);
    let named = [
        ("p50", Color::Green, 0),
        ("p90", Color::Blue, 1),
        ("p99", Color::LightRed, 2),
        ("max", Color::DarkGray, 3),
    ];
    let mut sets: Vec<Dataset> = [&p50, &p90, &p99, &max]
        .into_iter()
        .zip(named)
        .map(|(data, (name, color, k))| {
            Dataset::default()
                .name(name)
                .marker(s.look.dots(k))
                .graph_type(GraphType::Line)
                .style(s.look.fg(color))
                .data(data)
        })
        .collect();
    for m in &marks {
        sets.push(
            Dataset::default()
                .marker(Dot::Dot)
                .graph_type(GraphType::Line)
                .style(s.look.fg(Color::Yellow))
                .data(m),
        );
    }
    let label = |v: f64| duration_us(10f64.powf(v));
    let chart = Chart::new(sets)
        .legend_position(None)
        .block(Block::bordered().title(s.look.title("Latency (log scale)", &named)))
        .x_axis(x_axis(s, b))
        .y_axis(
            Axis::default()
                .bounds([lo, hi])
                .labels([label(lo), label((lo + hi) / 2.0), label(hi)])
                .style(s.look.fg(Color::Gray)),
        );
    f.render_widget(chart, area);
}

/// The current figures, one per line: label, value.
pub(crate) fn now_lines(s: &Screen) -> Vec<Line<'static>> {
    let st = s.setup;
    let w = s.watch;
    let row = w.current(st.duration_s);
    let mut out = Vec::new();
    let mut put = |label: &str, value: String| {
        out.push(Line::from(vec![
            Span::raw(format!("{label:<14}")),
            Span::styled(value, Style::default().add_modifier(Modifier::BOLD)),
        ]));
    };
    let rate = |f: fn(&stats::SecondRow) -> u64| {
        row.map_or("-".to_string(), |r| count(per_s(f(r), r).round() as u64))
    };
    put("responses/s", rate(|r| r.responses));
    put("errors/s", rate(|r| r.errors));
    put(
        "in flight",
        row.map_or("-".into(), |r| {
            if r.in_flight < 10.0 {
                format!("{:.2}", r.in_flight)
            } else {
                format!("{:.0}", r.in_flight)
            }
        }),
    );
    match &st.shape {
        Shape::Closed { connections } => put("connections", count(*connections)),
        Shape::Open { max_inflight, .. } => {
            let offered = st
                .planned_at(s.elapsed_s)
                .map_or("-".into(), |v| format!("{}/s", count(v.round() as u64)));
            put("offered", offered);
            put("dropped/s", rate(|r| r.dropped));
            put("in-flight cap", count(*max_inflight));
        }
        Shape::Users { .. } => {
            let active = row
                .and_then(|r| r.users)
                .map_or("-".into(), |u| format!("{u:.1}"));
            let planned = st.planned_at(s.elapsed_s).map_or(String::new(), |v| {
                format!(" of {}", count(v.round() as u64))
            });
            put("users", format!("{active}{planned}"));
        }
    }
    put("new conns/s", rate(|r| r.connects));
    put(
        "client CPU",
        row.map_or("-".into(), |r| {
            format!(
                "{:.2} cores, {:.0}%",
                r.client_cpu_s / r.length_s,
                busy(r, st.threads) * 100.0
            )
        }),
    );
    if let Some(lag) = row.and_then(|r| r.lag_p99_us) {
        put("lag p99", duration_us(lag));
    }
    put("responses", count(w.responses));
    put("errors", count(w.errors));
    if w.dropped > 0 {
        put("dropped", count(w.dropped));
    }
    for (label, value) in s.server {
        put(label, value.clone());
    }
    if st.monitors > 0 && s.server.is_empty() {
        put("server", "reading…".to_string());
    }
    out
}

/// The worker threads' mean share of CPU in a second (0–1). The busiest
/// thread was at least this busy.
fn busy(r: &stats::SecondRow, threads: usize) -> f64 {
    r.client_cpu_s / r.length_s.max(1e-9) / threads.max(1) as f64
}

/// Status classes so far, then each kind of failure with its hint.
fn problems(s: &Screen) -> Vec<Line<'static>> {
    let w = s.watch;
    let names = ["1xx/other", "2xx", "3xx", "4xx", "5xx"];
    let classes: Vec<String> = names
        .iter()
        .zip(w.classes)
        .enumerate()
        .filter(|&(i, (_, n))| i == 1 || n > 0)
        .map(|(_, (name, n))| format!("{name} {}", count(n)))
        .collect();
    let mut out = vec![Line::from(format!("status   {}", classes.join("   ")))];
    if w.failures.is_empty() {
        out.push(Line::from("errors   none"));
    }
    let mut failures: Vec<_> = w.failures.iter().map(|(o, n)| (*o, *n)).collect();
    failures.sort_by_key(|f| std::cmp::Reverse(f.1));
    for (o, n) in failures {
        out.push(Line::from(vec![
            Span::styled(
                format!("{:<22} {:>9}  ", o.name(), count(n)),
                s.look.fg(Color::Red),
            ),
            Span::raw(report::lang::explain(report::lang::Lang::En, o)),
        ]));
    }
    out
}

/// What says the numbers may measure the client, as soon as it applies:
/// the workers' CPU at the saturation mark the summary uses, requests
/// sent late (the shortfall's mark), requests dropped.
fn warnings(s: &Screen) -> Vec<String> {
    let st = s.setup;
    let Some(r) = s.watch.current(st.duration_s) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let b = busy(r, st.threads);
    if b >= SATURATED {
        out.push(format!(
            "CLIENT SATURATED: the worker threads were {:.0}% on CPU in the last second: the \
             client may be limiting the rate; add threads ({}) or client machines",
            b * 100.0,
            st.threads_flag
        ));
    }
    if let Some(lag) = r.lag_p99_us.filter(|&l| l > (LATE_MS * 1000) as f64) {
        out.push(format!(
            "SENDING LATE: p99 schedule lag {} (over {LATE_MS} ms): the load asked for is not \
             being offered on time",
            duration_us(lag)
        ));
    }
    if r.dropped > 0 {
        out.push(format!(
            "DROPPED {} requests in the last second: no connection was free in time",
            count(r.dropped)
        ));
    }
    out
}

fn footer(s: &Screen) -> Line<'static> {
    if let Some(d) = s.keys.draft() {
        return Line::from(vec![
            Span::styled(format!("marker at {}: ", clock(d.at_s)), s.look.warn()),
            Span::raw(format!("{}_", d.note)),
            Span::raw("   Enter keeps it, Esc cancels"),
        ]);
    }
    if let Some(r) = s.keys.rate() {
        let (what, unit) = if s.keys.users {
            ("users: ", "")
        } else {
            ("rate: ", " /s")
        };
        return Line::from(vec![
            Span::styled(what, s.look.warn()),
            Span::raw(format!("{r}_{unit}")),
            Span::raw("   Enter sets it, Esc cancels"),
        ]);
    }
    let bold = || Style::default().add_modifier(Modifier::BOLD);
    let mut spans = vec![
        Span::styled("q", bold()),
        Span::raw(" stop and write the result   "),
        Span::styled("m", bold()),
        Span::raw(" mark this moment"),
    ];
    if let Some(last) = s.markers.last() {
        spans.push(Span::raw(format!(
            "   {} marker(s), last at {}{}",
            s.markers.len(),
            clock(last.at_s),
            if last.note.is_empty() {
                String::new()
            } else {
                format!(": {}", last.note)
            }
        )));
    }
    if s.keys.steerable {
        spans.extend([
            Span::raw("   "),
            Span::styled("+/-", bold()),
            Span::raw(if s.keys.users {
                " users ±10%  "
            } else {
                " rate ±10%  "
            }),
            Span::styled("p", bold()),
            Span::raw(" pause  "),
            Span::styled("r", bold()),
            Span::raw(if s.keys.users {
                " set users"
            } else {
                " set rate"
            }),
        ]);
    }
    if let Some(what) = s.steered {
        spans.push(Span::styled(format!("   {what}"), s.look.warn()));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests;
