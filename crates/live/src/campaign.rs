//! The view of a campaign of runs — `yace lab run|resume`'s experiments and
//! `yace find-max`'s searches — on the terminal: which run of how many,
//! the time left, the current run's live figures and charts (the
//! dashboard's own, from the same per-second rows), and a table of the
//! finished points with their verdicts.
//!
//! ```text
//!  Experiment "sweep": 8 runs · results in lab-sweep/
//!  run 3 of 8 · big-pool · connections=4 · repetition 1 of 2 · 2s of 5s
//!  now 1,234 responses/s · errors 0 · p99 3.1ms
//!  [#####.....] 14s elapsed · 26s left (planned runs and cool-downs)
//! ┌ Responses/s ─────────────────┐┌ Now ────────────┐
//! ├ Latency ─────────────────────┤│ …               │
//! └──────────────────────────────┘└─────────────────┘
//! ┌ Finished points ─────────────────────────────────┐
//! │ target   point   runs  responses/s  p99  verdict  │
//! └───────────────────────────────────────────────────┘
//!  q stop (the experiment stays resumable)
//! ```
//!
//! [`Board`] is the pure part (what the view knows, and the lines it
//! says); [`Campaign`] runs it on a thread of its own, off the load
//! threads: the caller hands over events (a run begins, its new rows, a
//! finished point) and the thread folds them, reads keys and draws at most
//! every [`FRAME`](crate::FRAME). The terminal is put back by
//! [`Campaign::finish`] (before the caller prints its summary), on drop,
//! and on a panic.

use crate::keys::Keys;
use crate::screen::{self, Term};
use crate::setup::Setup;
use crate::view::{self, bar_text, clock, Look, Screen};
use crate::watch::{per_s, Watch};
use crossterm::event::{self, Event as Key, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Gauge, Paragraph};
use ratatui::Frame;
use report::lang::Lang;
use stats::SecondRow;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the campaign is, said once when the view starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Intro {
    /// `Experiment "sweep": 8 runs · results in lab-sweep/`.
    pub title: String,
    /// The finished table's title (`Finished points`).
    pub table: String,
    /// Its columns' headings; the last one takes the room left.
    pub columns: Vec<String>,
    /// What `q` does, for the footer (`the experiment stays resumable`).
    pub stop: String,
    /// The language of the view's own words.
    pub lang: Lang,
}

/// The time the campaign has left, as seen when a run begins.
#[derive(Debug, Clone, PartialEq)]
pub struct Left {
    /// Seconds, from the run's start (its own time included).
    pub s: f64,
    /// A guess (find-max's trials left in its bracket), not a plan (the
    /// lab's planned run times and cool-downs).
    pub estimate: bool,
    /// What it counts, in a few words.
    pub basis: String,
}

/// A run begins.
#[derive(Debug, Clone, PartialEq)]
pub struct Begin {
    /// The run as planned (the charts' range, the offered rate).
    pub setup: Setup,
    /// `run 3 of 8 · big-pool · connections=4 · repetition 1 of 2`.
    pub what: String,
    /// A second line about where the campaign stands (find-max's bracket).
    pub context: Option<String>,
    pub left: Option<Left>,
}

/// How a finished row reads at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Good,
    Bad,
    /// Worth a look (client-bound runs, a pass close to an SLO).
    Warn,
    Plain,
}

/// A finished point (lab: one per target and point, updated as its
/// repetitions finish) or trial (find-max).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Rows with the same key replace each other.
    pub key: String,
    pub cells: Vec<String>,
    pub mark: Mark,
}

/// The run being watched.
#[derive(Debug, Clone)]
pub struct Current {
    pub begin: Begin,
    pub watch: Watch,
    /// When it began, seconds on the board's clock.
    pub at_s: f64,
    /// When it ended, if it has.
    pub ended_s: Option<f64>,
}

/// Everything the view knows; pure (the clock is passed in).
#[derive(Debug, Clone)]
pub struct Board {
    pub intro: Intro,
    pub current: Option<Current>,
    pub rows: Vec<Row>,
    /// Between runs: what is going on (cooling down).
    pub note: Option<String>,
    /// `q` was pressed.
    pub stopping: bool,
}

/// The view's own words in the reader's language (English is the key).
fn w(lang: Lang, en: &'static str) -> &'static str {
    if lang == Lang::En {
        return en;
    }
    match en {
        "elapsed" => "已用",
        "left" => "剩余",
        "about" => "约",
        "an estimate" => "估计",
        "now" => "当前",
        "responses/s" => "响应/秒",
        "errors" => "错误",
        "starting…" => "正在开始…",
        "stopping: the current run is cut short" => "正在停止：当前这次运行被截断",
        "stop" => "停止",
        "nothing finished yet" => "尚无完成的结果",
        "more above" => "条在上方",
        _ => en,
    }
}

impl Board {
    pub fn new(intro: Intro) -> Board {
        Board {
            intro,
            current: None,
            rows: Vec::new(),
            note: None,
            stopping: false,
        }
    }

    /// A run begins at `now_s`.
    pub fn begin(&mut self, begin: Begin, now_s: f64) {
        self.note = None;
        self.current = Some(Current {
            begin,
            watch: Watch::default(),
            at_s: now_s,
            ended_s: None,
        });
    }

    /// The current run's new rows.
    pub fn rows(&mut self, rows: Vec<SecondRow>) {
        if let Some(c) = &mut self.current {
            rows.into_iter().for_each(|r| c.watch.push(r));
        }
    }

    /// The current run ended at `now_s`.
    pub fn end(&mut self, now_s: f64) {
        if let Some(c) = &mut self.current {
            c.ended_s.get_or_insert(now_s);
        }
    }

    /// A finished row, replacing the one with its key.
    pub fn finished(&mut self, row: Row) {
        match self.rows.iter_mut().find(|r| r.key == row.key) {
            Some(r) => *r = row,
            None => self.rows.push(row),
        }
    }

    /// Seconds into the current run (stopped at its end).
    pub fn run_s(&self, now_s: f64) -> f64 {
        self.current
            .as_ref()
            .map_or(0.0, |c| (c.ended_s.unwrap_or(now_s) - c.at_s).max(0.0))
    }

    /// The campaign's progress: how far (0–1, when the time left is
    /// known) and in words.
    pub fn progress(&self, now_s: f64) -> (Option<f64>, String) {
        let lang = self.intro.lang;
        let elapsed = format!("{} {}", clock(now_s), w(lang, "elapsed"));
        let left = self.current.as_ref().and_then(|c| {
            let l = c.begin.left.as_ref()?;
            Some((l, (l.s - (now_s - c.at_s)).max(0.0)))
        });
        match left {
            None => (None, elapsed),
            Some((l, s)) => {
                let ratio = now_s / (now_s + s).max(1e-9);
                let text = if l.estimate {
                    format!(
                        "{elapsed} · {} {} {}, {} ({})",
                        w(lang, "about"),
                        clock(s),
                        w(lang, "left"),
                        w(lang, "an estimate"),
                        l.basis
                    )
                } else {
                    format!("{elapsed} · {} {} ({})", clock(s), w(lang, "left"), l.basis)
                };
                (Some(ratio), text)
            }
        }
    }

    /// The lines above the charts: title, the run (with its own clock),
    /// the context, the live figures, the progress in words.
    pub fn head(&self, now_s: f64) -> Vec<String> {
        let lang = self.intro.lang;
        let mut out = vec![self.intro.title.clone()];
        match &self.current {
            None => out.push(w(lang, "starting…").to_string()),
            Some(c) => {
                let run_s = self.run_s(now_s);
                let of = c.begin.setup.duration_s.map_or(clock(run_s), |d| {
                    format!("{} / {}", clock(run_s.min(d)), clock(d))
                });
                out.push(format!("{} · {of}", c.begin.what));
                if let Some(ctx) = &c.begin.context {
                    out.push(ctx.clone());
                }
                out.push(self.figures());
            }
        }
        out.push(self.progress(now_s).1);
        out
    }

    /// The current run's figures in its newest whole second.
    pub fn figures(&self) -> String {
        let lang = self.intro.lang;
        let Some(c) = &self.current else {
            return String::new();
        };
        let row = c.watch.current(c.begin.setup.duration_s);
        let fig = |f: &dyn Fn(&SecondRow) -> String| row.map_or("-".to_string(), f);
        format!(
            "{}: {} {} · {} {} · p99 {}",
            w(lang, "now"),
            fig(&|r| report::count(per_s(r.responses, r).round() as u64)),
            w(lang, "responses/s"),
            w(lang, "errors"),
            report::count(c.watch.errors),
            fig(&|r| if r.responses > 0 {
                report::duration_us(r.latency_p99_us)
            } else {
                "-".into()
            }),
        )
    }

    /// The finished table as lines at most `width` columns: its
    /// headings, then the rows, columns aligned (the last takes the rest).
    pub fn table(&self, width: usize) -> Vec<String> {
        let cols = &self.intro.columns;
        let n = cols.len();
        if n == 0 {
            return Vec::new();
        }
        let mut widths: Vec<usize> = cols.iter().map(|c| report::width(c)).collect();
        for r in &self.rows {
            for (wd, c) in widths.iter_mut().zip(&r.cells) {
                *wd = (*wd).max(report::width(c));
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (i, wd) in widths.iter().enumerate() {
                let c = cells.get(i).map_or("", String::as_str);
                if i + 1 == n {
                    s.push_str(c);
                } else {
                    s.push_str(&report::pad(c, *wd));
                    s.push_str("  ");
                }
            }
            cut(s.trim_end(), width)
        };
        let mut out = vec![line(cols)];
        out.extend(self.rows.iter().map(|r| line(&r.cells)));
        out
    }

    /// The footer: the key, and what stopping keeps.
    pub fn footer(&self) -> String {
        let lang = self.intro.lang;
        if self.stopping {
            return format!(
                "{} ({})",
                w(lang, "stopping: the current run is cut short"),
                self.intro.stop
            );
        }
        format!("q {} ({})", w(lang, "stop"), self.intro.stop)
    }
}

/// `s` cut to `width` columns (a Chinese character takes two).
fn cut(s: &str, width: usize) -> String {
    if report::width(s) <= width {
        return s.to_string();
    }
    let mut t = String::new();
    for c in s.chars() {
        if report::width(&t) + report::width(c.encode_utf8(&mut [0; 4])) + 1 > width {
            break;
        }
        t.push(c);
    }
    if width > 0 {
        t.push('…');
    }
    t
}

/// Below this the charts are left out.
const CHARTS_MIN: (u16, u16) = (60, 22);
/// Width of the "Now" panel beside the charts.
const NOW_WIDTH: u16 = 34;

fn mark_style(look: Look, m: Mark) -> Style {
    let c = match m {
        Mark::Good => Color::Green,
        Mark::Bad => Color::Red,
        Mark::Warn => Color::Yellow,
        Mark::Plain => return Style::default(),
    };
    if look.color {
        Style::default().fg(c)
    } else if m == Mark::Bad {
        Style::default().add_modifier(Modifier::BOLD)
    } else {
        Style::default()
    }
}

/// Draws one frame of the board at `now_s`.
pub fn draw(f: &mut Frame, b: &Board, now_s: f64, look: Look) {
    let area = f.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    let head = b.head(now_s);
    let width = area.width as usize;
    let table = b.table(width.saturating_sub(2));
    if area.width < CHARTS_MIN.0 || area.height < CHARTS_MIN.1 || b.current.is_none() {
        return compact(f, area, b, look, &head, &table);
    }
    // The progress is drawn as a bar; the rest of the head as lines.
    let text_head = head.len() as u16 - 1;
    let note_h = u16::from(b.note.is_some());
    let table_h = (table.len().max(2) as u16 + 2).min(area.height * 2 / 5);
    let [top, bar, middle, rows, note, foot] = Layout::vertical([
        Constraint::Length(text_head),
        Constraint::Length(1),
        Constraint::Min(8),
        Constraint::Length(table_h),
        Constraint::Length(note_h),
        Constraint::Length(1),
    ])
    .areas(area);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut lines: Vec<Line> = head[..head.len() - 1]
        .iter()
        .map(|l| Line::from(cut(l, width)))
        .collect();
    if let Some(first) = lines.first_mut() {
        *first = first.clone().style(bold);
    }
    f.render_widget(Paragraph::new(lines), top);
    progress_bar(f, bar, b, now_s, look);
    let c = b.current.as_ref().expect("a run");
    let keys = Keys::default();
    let screen = Screen {
        setup: &c.begin.setup,
        watch: &c.watch,
        elapsed_s: b.run_s(now_s),
        markers: &[],
        keys: &keys,
        stopping: b.stopping,
        look,
        steered: None,
        server: &[],
    };
    let [charts, now] =
        Layout::horizontal([Constraint::Min(30), Constraint::Length(NOW_WIDTH)]).areas(middle);
    let [up, down] =
        Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(charts);
    view::throughput_chart(f, up, &screen);
    view::latency_chart(f, down, &screen);
    f.render_widget(
        Paragraph::new(view::now_lines(&screen)).block(Block::bordered().title(" Now ")),
        now,
    );
    table_block(f, rows, b, &table, look);
    if let Some(n) = &b.note {
        f.render_widget(Paragraph::new(cut(n, width)), note);
    }
    f.render_widget(
        Paragraph::new(Line::styled(cut(&b.footer(), width), bold)),
        foot,
    );
}

/// The finished table in a box; the newest rows when not all fit.
fn table_block(f: &mut Frame, area: Rect, b: &Board, table: &[String], look: Look) {
    let room = area.height.saturating_sub(2) as usize;
    let lines = table_lines(b, table, room, look);
    f.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(format!(" {} ", b.intro.table))),
        area,
    );
}

/// The headings and as many of the newest rows as fit in `room` lines.
fn table_lines(b: &Board, table: &[String], room: usize, look: Look) -> Vec<Line<'static>> {
    let lang = b.intro.lang;
    if room == 0 || table.is_empty() {
        return Vec::new();
    }
    let heading = Line::styled(
        table[0].clone(),
        Style::default().add_modifier(Modifier::BOLD),
    );
    if b.rows.is_empty() {
        return vec![heading, Line::from(w(lang, "nothing finished yet"))]
            .into_iter()
            .take(room)
            .collect();
    }
    let rows = &table[1..];
    let fit = room.saturating_sub(1);
    let mut out = vec![heading];
    let skip = rows.len().saturating_sub(fit);
    let (skip, fit) = if skip > 0 && fit > 1 {
        out.push(Line::from(format!(
            "… {skip_more} {}",
            w(lang, "more above"),
            skip_more = skip + 1
        )));
        (skip + 1, fit - 1)
    } else {
        (skip, fit)
    };
    for (text, r) in rows.iter().zip(&b.rows).skip(skip).take(fit) {
        out.push(Line::styled(text.clone(), mark_style(look, r.mark)));
    }
    out.truncate(room);
    out
}

fn progress_bar(f: &mut Frame, area: Rect, b: &Board, now_s: f64, look: Look) {
    let (ratio, label) = b.progress(now_s);
    match ratio {
        Some(r) if look.color => f.render_widget(
            Gauge::default()
                .ratio(r.clamp(0.0, 1.0))
                .label(label)
                .gauge_style(Style::default().fg(Color::Cyan).bg(Color::Black)),
            area,
        ),
        Some(r) => {
            let width = (area.width / 4).clamp(4, 24) as usize;
            f.render_widget(
                Paragraph::new(format!("{} {label}", bar_text(r, width))),
                area,
            )
        }
        None => f.render_widget(Paragraph::new(label), area),
    }
}

/// A small window (or before the first run): the lines, as many as fit,
/// the table's newest rows, the footer last.
fn compact(f: &mut Frame, area: Rect, b: &Board, look: Look, head: &[String], table: &[String]) {
    let width = area.width as usize;
    let height = area.height as usize;
    let mut lines: Vec<Line> = head.iter().map(|l| Line::from(cut(l, width))).collect();
    if let Some(n) = &b.note {
        lines.push(Line::from(cut(n, width)));
    }
    lines.truncate(height.saturating_sub(1));
    let room = height.saturating_sub(1 + lines.len());
    lines.extend(table_lines(b, table, room, look));
    lines.push(Line::styled(
        cut(&b.footer(), width),
        Style::default().add_modifier(Modifier::BOLD),
    ));
    let keep = lines.len().saturating_sub(height);
    f.render_widget(Paragraph::new(lines.split_off(keep)), area);
}

enum Event {
    Begin(Box<Begin>, Instant),
    Rows(Vec<SecondRow>),
    End(Instant),
    Row(Row),
    Note(Option<String>),
}

/// The view of a running campaign, drawn on a thread of its own.
#[derive(Debug)]
pub struct Campaign {
    tx: Sender<Event>,
    /// The current run's rows handed over so far.
    sent: usize,
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Event")
    }
}

impl Campaign {
    /// Takes over the terminal (stderr) and starts drawing; `on_stop` is
    /// called once when `q` or Ctrl-C asks the campaign to stop. Fails,
    /// leaving the terminal as it was, when it cannot be put in raw mode.
    pub fn start(
        intro: Intro,
        look: Look,
        on_stop: impl Fn() + Send + 'static,
    ) -> io::Result<Campaign> {
        let term = screen::enter()?;
        let (tx, rx) = mpsc::channel();
        let done = Arc::new(AtomicBool::new(false));
        let finished = done.clone();
        let board = Board::new(intro);
        let thread = std::thread::Builder::new()
            .name("yace-campaign".into())
            .spawn(move || drawing(board, look, term, rx, &finished, on_stop))?;
        Ok(Campaign {
            tx,
            sent: 0,
            done,
            thread: Some(thread),
        })
    }

    /// A run begins (its rows are counted from here).
    pub fn begin(&mut self, b: Begin) {
        self.sent = 0;
        let _ = self.tx.send(Event::Begin(Box::new(b), Instant::now()));
    }

    /// Hands the current run's rows not seen yet to the drawing thread
    /// (the run's observer calls this).
    pub fn observe(&mut self, rows: &[SecondRow]) {
        if rows.len() > self.sent {
            let _ = self.tx.send(Event::Rows(rows[self.sent..].to_vec()));
            self.sent = rows.len();
        }
    }

    /// The current run ended.
    pub fn end(&mut self) {
        let _ = self.tx.send(Event::End(Instant::now()));
    }

    /// A finished point or trial (replacing the row with its key).
    pub fn finished(&mut self, row: Row) {
        let _ = self.tx.send(Event::Row(row));
    }

    /// What goes on between runs (None: nothing to say).
    pub fn note(&mut self, note: Option<String>) {
        let _ = self.tx.send(Event::Note(note));
    }

    /// Stops drawing and puts the terminal back.
    pub fn finish(mut self) {
        self.stop_thread();
    }

    fn stop_thread(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        screen::restore();
    }
}

impl Drop for Campaign {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// How often the drawing thread looks for events between frames.
const TICK: Duration = Duration::from_millis(50);

fn drawing(
    mut board: Board,
    look: Look,
    mut term: Term,
    rx: Receiver<Event>,
    done: &AtomicBool,
    on_stop: impl Fn(),
) {
    let start = Instant::now();
    let at = |i: Instant| i.saturating_duration_since(start).as_secs_f64();
    let mut last: Option<Instant> = None;
    let mut broken = false;
    while !done.load(Ordering::SeqCst) {
        let due = last.map_or(Instant::now(), |l| l + crate::FRAME);
        let wait = due.saturating_duration_since(Instant::now()).min(TICK);
        if event::poll(wait).unwrap_or(false) {
            if let Ok(Key::Key(k)) = event::read() {
                let ctrl_c = k.modifiers.contains(KeyModifiers::CONTROL)
                    && matches!(k.code, KeyCode::Char('c' | 'C'));
                let q = matches!(k.code, KeyCode::Char('q' | 'Q'));
                if k.kind != KeyEventKind::Release && (q || ctrl_c) && !board.stopping {
                    board.stopping = true;
                    on_stop();
                    last = None;
                }
            }
            continue;
        }
        while let Ok(e) = rx.try_recv() {
            match e {
                Event::Begin(b, when) => board.begin(*b, at(when)),
                Event::Rows(rows) => board.rows(rows),
                Event::End(when) => board.end(at(when)),
                Event::Row(r) => board.finished(r),
                Event::Note(n) => board.note = n,
            }
        }
        if !broken && Instant::now() >= due {
            let now_s = start.elapsed().as_secs_f64();
            broken = term.draw(|f| draw(f, &board, now_s, look)).is_err();
            last = Some(Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::Shape;
    use crate::watch::tests::row;
    use ratatui::backend::TestBackend;

    fn intro(lang: Lang) -> Intro {
        Intro {
            title: "Experiment \"sweep\": 4 runs".into(),
            table: "Finished points".into(),
            columns: vec![
                "target".into(),
                "point".into(),
                "responses/s".into(),
                "verdict".into(),
            ],
            stop: "the experiment stays resumable".into(),
            lang,
        }
    }

    fn begin(left: Option<Left>) -> Begin {
        Begin {
            setup: Setup {
                target: "GET http://127.0.0.1:8080/".into(),
                model: "closed model: 4 connections, 1 thread".into(),
                threads: 1,
                duration_s: Some(5.0),
                requests: None,
                shape: Shape::Closed { connections: 4 },
                monitors: 0,
                threads_flag: "-t",
                part: plan::Shard::WHOLE,
            },
            what: "run 2 of 4 · small · connections=4 · repetition 1 of 1".into(),
            context: None,
            left,
        }
    }

    fn planned(s: f64) -> Option<Left> {
        Some(Left {
            s,
            estimate: false,
            basis: "planned runs and cool-downs".into(),
        })
    }

    #[test]
    fn the_head_says_which_run_its_clock_the_figures_and_the_time_left() {
        let mut b = Board::new(intro(Lang::En));
        b.begin(begin(planned(20.0)), 10.0);
        b.rows(vec![row(0, 1200, 0), row(1, 1300, 2)]);
        let head = b.head(12.0);
        assert_eq!(head[0], "Experiment \"sweep\": 4 runs");
        assert_eq!(
            head[1],
            "run 2 of 4 · small · connections=4 · repetition 1 of 1 · 2s / 5s"
        );
        assert_eq!(head[2], "now: 1,300 responses/s · errors 2 · p99 4.00ms");
        // 12 s in, 20 s left as the run began 2 s ago: 18 s left.
        assert_eq!(
            head[3],
            "12s elapsed · 18s left (planned runs and cool-downs)"
        );
        assert_eq!(b.progress(12.0).0, Some(12.0 / 30.0));
        // The run's clock stops at its end; the time left goes on down, not below 0.
        b.end(14.0);
        assert_eq!(b.run_s(100.0), 4.0);
        assert!(
            b.progress(100.0).1.contains(" 0s left"),
            "{:?}",
            b.progress(100.0)
        );
    }

    #[test]
    fn an_estimate_is_said_as_one_and_chinese_has_its_words() {
        let mut b = Board::new(intro(Lang::Zh));
        b.begin(
            begin(Some(Left {
                s: 65.0,
                estimate: true,
                basis: "3 trials".into(),
            })),
            0.0,
        );
        let (_, text) = b.progress(5.0);
        assert_eq!(text, "5s 已用 · 约 1m00s 剩余, 估计 (3 trials)");
        assert!(b.footer().starts_with("q 停止"));
        let mut b = Board::new(intro(Lang::En));
        b.begin(
            begin(Some(Left {
                s: 65.0,
                estimate: true,
                basis: "3 trials in the bracket".into(),
            })),
            0.0,
        );
        assert_eq!(
            b.progress(5.0).1,
            "5s elapsed · about 1m00s left, an estimate (3 trials in the bracket)"
        );
        // No time left known: no bar, the time elapsed only.
        let mut b = Board::new(intro(Lang::En));
        b.begin(begin(None), 0.0);
        assert_eq!(b.progress(3.0), (None, "3s elapsed".to_string()));
    }

    #[test]
    fn the_table_aligns_its_columns_replaces_rows_by_key_and_fits_the_width() {
        let mut b = Board::new(intro(Lang::En));
        let r = |key: &str, cells: [&str; 4], mark| Row {
            key: key.into(),
            cells: cells.iter().map(|c| c.to_string()).collect(),
            mark,
        };
        b.finished(r("a", ["small", "c=4", "1,000", "1 run"], Mark::Plain));
        b.finished(r(
            "b",
            ["big-pool", "c=8", "900", "client-bound"],
            Mark::Warn,
        ));
        b.finished(r("a", ["small", "c=4", "1,050", "2 runs"], Mark::Plain));
        let t = b.table(80);
        assert_eq!(
            t,
            [
                "target    point  responses/s  verdict",
                "small     c=4    1,050        2 runs",
                "big-pool  c=8    900          client-bound",
            ]
        );
        let narrow = b.table(20);
        assert!(narrow.iter().all(|l| report::width(l) <= 20), "{narrow:?}");
        assert!(narrow[2].ends_with('…'));
        // Chinese takes two columns a character: the columns still line up.
        let mut zh = Board::new(Intro {
            columns: vec!["阶段".into(), "速率".into(), "结论".into()],
            ..intro(Lang::Zh)
        });
        zh.finished(r("1", ["定界", "20/s", "通过", ""], Mark::Good));
        zh.finished(r("2", ["bisect", "40/s", "pass", ""], Mark::Good));
        assert_eq!(
            zh.table(80),
            [
                "阶段    速率  结论",
                "定界    20/s  通过",
                "bisect  40/s  pass"
            ]
        );
        assert_eq!(cut("已完成的试验", 7), "已完成…");
    }

    fn render(b: &Board, now_s: f64, w: u16, h: u16) -> String {
        let mut t = ratatui::Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| draw(f, b, now_s, Look { color: false }))
            .unwrap();
        let buf = t.backend().buffer();
        let mut out = String::new();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                out.push_str(buf[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }

    #[test]
    fn a_frame_shows_the_run_charts_table_and_key_at_every_size() {
        let mut b = Board::new(intro(Lang::En));
        // Before the first run: the title and the key.
        let empty = render(&b, 0.0, 100, 30);
        assert!(
            empty.contains("starting…") && empty.contains("q stop"),
            "{empty}"
        );
        b.begin(begin(planned(20.0)), 0.0);
        b.rows((0..3).map(|s| row(s, 500, 0)).collect());
        for i in 0..30 {
            b.finished(Row {
                key: i.to_string(),
                cells: vec!["small".into(), format!("c={i}"), "500".into(), "ok".into()],
                mark: Mark::Good,
            });
        }
        let full = render(&b, 3.5, 110, 34);
        for want in [
            "run 2 of 4",
            "now: 500 responses/s",
            "left (planned runs and cool-downs)",
            "Responses/s",
            "Latency (log scale)",
            "Now",
            "Finished points",
            "c=29",
            "more above",
            "q stop (the experiment stays resumable)",
        ] {
            assert!(full.contains(want), "{want:?} not in\n{full}");
        }
        // The newest rows are shown, the oldest left out.
        assert!(!full.contains("c=0 "), "{full}");
        for (w, h) in [(40, 10), (20, 3), (1, 1), (59, 40), (200, 22)] {
            let s = render(&b, 3.5, w, h);
            assert!(s.contains('q') || w < 4, "{w}×{h}:\n{s}");
        }
        b.stopping = true;
        assert!(render(&b, 4.0, 100, 30).contains("stopping: the current run is cut short"));
    }
}
