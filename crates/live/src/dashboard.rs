//! The dashboard on the terminal: the alternate screen in raw mode, drawn
//! on a thread of its own from the rows the run's observer hands over.
//!
//! The observer (on the thread that waits for the run, never a load
//! thread) only clones the rows it has not handed over yet, one per second
//! of the run, into a channel. Everything else happens here: reading keys,
//! folding the rows, drawing at most [`FRAME`] apart. The terminal is put
//! back — main screen, cooked mode, cursor shown — when the run ends
//! ([`Dashboard::finish`], before the summary is printed), when the
//! dashboard is dropped (an error on the way out), and on a panic.

use crate::keys::{Action, Keys, Steer};
use crate::screen::{self, Term};
use crate::setup::Setup;
use crate::view::{self, Look, Screen};
use crate::watch::Watch;
use crossterm::event::{self, Event};
use stats::{Marker, SecondRow};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Shortest time between two frames: at most four a second.
pub const FRAME: Duration = Duration::from_millis(250);
/// How often the drawing thread looks for the end of the run between frames.
const TICK: Duration = Duration::from_millis(50);

/// The server now, as (label, value) lines for the Now panel (from the
/// run's monitors; `run::Prepared::server_now`).
pub type ServerNow = Box<dyn Fn() -> Vec<(String, String)> + Send>;

/// Carries out a steering key; returns what it did, for the footer.
/// Shared: the live page's buttons (`--dashboard-control`) call the same.
pub type OnSteer = Arc<dyn Fn(Steer) -> String + Send + Sync>;

/// The dashboard of a running run.
#[derive(Debug)]
pub struct Dashboard {
    rows: Sender<Vec<SecondRow>>,
    /// Rows handed over so far.
    sent: usize,
    done: Arc<AtomicBool>,
    /// The drawing thread: the markers made, and its own CPU seconds.
    thread: Option<JoinHandle<(Vec<Marker>, f64)>>,
    /// CPU seconds the observer spent handing rows over.
    observe_cpu_s: f64,
}

impl Dashboard {
    /// Takes over the terminal (stderr) and starts drawing; `on_stop` is
    /// called when `q` or Ctrl-C asks the run to stop. The run's clock is
    /// taken to start now. Fails, leaving the terminal as it was, when the
    /// terminal cannot be put in raw mode.
    pub fn start(
        setup: Setup,
        look: Look,
        on_stop: impl Fn() + Send + 'static,
    ) -> io::Result<Dashboard> {
        Self::start_steering(setup, look, on_stop, None, None)
    }

    /// [`Dashboard::start`], with the steering keys (`+`, `-`, `p`, `r`)
    /// handed to `on_steer`, which says what it did in a line the footer
    /// shows.
    pub fn start_steering(
        setup: Setup,
        look: Look,
        on_stop: impl Fn() + Send + 'static,
        on_steer: Option<OnSteer>,
        server: Option<ServerNow>,
    ) -> io::Result<Dashboard> {
        let term = screen::enter()?;
        let (tx, rx) = mpsc::channel();
        let done = Arc::new(AtomicBool::new(false));
        // Virtual users and connections are steered in users, not a rate.
        let users = !matches!(setup.shape, crate::setup::Shape::Open { .. });
        let state = Drawing {
            setup,
            look,
            watch: Watch::default(),
            keys: Keys::steering(on_steer.is_some()).in_users(users),
            markers: Vec::new(),
            stopping: false,
            start: Instant::now(),
            on_steer,
            steered: None,
            server,
            server_lines: Vec::new(),
            server_read: None,
        };
        let finished = done.clone();
        let thread = std::thread::Builder::new()
            .name("yace-live".into())
            .spawn(move || {
                let markers = state.run(term, rx, &finished, on_stop);
                (markers, host::thread_cpu_s())
            })?;
        Ok(Dashboard {
            rows: tx,
            sent: 0,
            done,
            thread: Some(thread),
            observe_cpu_s: 0.0,
        })
    }

    /// Hands the rows not seen yet to the drawing thread (the run's
    /// observer calls this; it copies one row per second of the run).
    pub fn observe(&mut self, rows: &[SecondRow]) {
        if rows.len() > self.sent {
            let t0 = host::thread_cpu_s();
            let _ = self.rows.send(rows[self.sent..].to_vec());
            self.sent = rows.len();
            self.observe_cpu_s += host::thread_cpu_s() - t0;
        }
    }

    /// Stops drawing and puts the terminal back; returns the markers made.
    pub fn finish(self) -> Vec<Marker> {
        self.finish_costed().0
    }

    /// [`Dashboard::finish`], with what the view cost: the CPU seconds of
    /// its drawing thread and of handing it the rows.
    pub fn finish_costed(mut self) -> (Vec<Marker>, f64) {
        self.done.store(true, Ordering::SeqCst);
        let (markers, cpu_s) = self
            .thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        screen::restore();
        (markers, cpu_s + self.observe_cpu_s)
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        screen::restore();
    }
}

/// The drawing thread's state.
struct Drawing {
    setup: Setup,
    look: Look,
    watch: Watch,
    keys: Keys,
    markers: Vec<Marker>,
    stopping: bool,
    start: Instant,
    on_steer: Option<OnSteer>,
    /// What the last steering key did.
    steered: Option<String>,
    /// The server's figures (monitored runs), read about once a second.
    server: Option<ServerNow>,
    server_lines: Vec<(String, String)>,
    server_read: Option<Instant>,
}

impl Drawing {
    fn run(
        mut self,
        mut term: Term,
        rows: Receiver<Vec<SecondRow>>,
        done: &AtomicBool,
        on_stop: impl Fn(),
    ) -> Vec<Marker> {
        let mut last: Option<Instant> = None;
        // A terminal that cannot be written to any more (hung up) is not
        // drawn on again; the run goes on.
        let mut broken = false;
        while !done.load(Ordering::SeqCst) {
            let due = last.map_or(Instant::now(), |l| l + FRAME);
            let wait = due.saturating_duration_since(Instant::now()).min(TICK);
            if event::poll(wait).unwrap_or(false) {
                if let Ok(ev) = event::read() {
                    self.event(ev, &on_stop);
                }
                continue;
            }
            while let Ok(batch) = rows.try_recv() {
                batch.into_iter().for_each(|r| self.watch.push(r));
            }
            if !broken && Instant::now() >= due {
                broken = self.draw(&mut term).is_err();
                last = Some(Instant::now());
            }
        }
        self.markers
    }

    fn elapsed_s(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn event(&mut self, ev: Event, on_stop: &impl Fn()) {
        // A resize is drawn at the next frame, at the new size.
        if let Event::Key(key) = ev {
            match self.keys.press(key, self.elapsed_s()) {
                Action::Stop => {
                    if !self.stopping {
                        self.stopping = true;
                        on_stop();
                    }
                }
                Action::Mark(m) => self.markers.push(m),
                Action::Steer(k) => {
                    if let Some(f) = &self.on_steer {
                        self.steered = Some(f(k));
                    }
                }
                Action::Redraw | Action::None => {}
            }
        }
    }

    fn draw(&mut self, term: &mut Term) -> io::Result<()> {
        if let Some(now) = &self.server {
            if self
                .server_read
                .is_none_or(|t| t.elapsed() >= Duration::from_millis(900))
            {
                self.server_lines = now();
                self.server_read = Some(Instant::now());
            }
        }
        let screen = Screen {
            setup: &self.setup,
            watch: &self.watch,
            elapsed_s: self.elapsed_s(),
            markers: &self.markers,
            keys: &self.keys,
            stopping: self.stopping,
            look: self.look,
            steered: self.steered.as_deref(),
            server: &self.server_lines,
        };
        term.draw(|f| view::draw(f, &screen)).map(|_| ())
    }
}
