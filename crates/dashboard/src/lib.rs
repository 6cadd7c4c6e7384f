//! The live browser page of a run (`yace run --dashboard [ADDR]`, issue
//! #18): the HTML report's time charts, drawn by the report's own script
//! and kept current by one stream of server-sent events; at the end, the
//! report itself, made from the final result, to save or to turn into.
//!
//! ```text
//! run's observer (every ~50 ms) ──new rows──▶ bounded channel ──▶ server thread
//!                                  (try_send: never waits)          │ Feed: report::html::live
//!                                                                   │ charts → full / tail events
//!           browser ◀── GET / (the page) ─── GET /events (the stream) ┘
//! ```
//!
//! Serving it never slows the load: the observer (on the thread that waits
//! for the run, never a load thread) copies one row per second of the run
//! into a bounded channel and never waits; rendering, the sockets and the
//! readers are the server thread's (`yace-dashboard`), non-blocking, with
//! at most one event being written per reader and a stuck reader dropped
//! (see `server.rs`).
//!
//! Who may read: by default it listens on 127.0.0.1 (a free port) and
//! answers only requests that name it by address (a DNS name rebound to
//! 127.0.0.1 gets 403). Any other address needs a token (given, or made for
//! the run), compared in constant time; the page's address carries it and
//! nothing else does (not the result, not the reports). Read-only, unless
//! `--dashboard-control`: then `POST /control` steers the run through the
//! same callback as the terminal's keys, with the token always (made for
//! the run when none was given), in a header, from the page's own origin
//! and by its own address (see `control.rs`).
//!
//! It is its own crate, beside `live` (the terminal's view), because it is
//! a network server: its sockets and its access rules stay out of the
//! terminal code, and its tests build without a terminal library.

#![forbid(unsafe_code)]

pub mod access;
pub mod control;
mod feed;
pub mod http;
mod server;

pub use control::{Action, Control};
pub use feed::Run;
pub use server::{Limits, LIMITS};

use report::lang::Lang;
use server::{Msg, Server};
use stats::{RunResult, SecondRow};
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::thread::JoinHandle;

/// Batches of rows the channel holds; more wait in the run's own series
/// until the server takes them (a row a second: it never gets near).
const QUEUE: usize = 16;

/// Where and how the page is served.
#[derive(Debug, Clone)]
pub struct Options {
    pub addr: SocketAddr,
    /// Needed by every request when set.
    pub token: Option<String>,
    /// The token was made for this run (so its address is printed whole).
    pub made: bool,
    pub lang: Lang,
    /// `--dashboard-control`: the page steers (or says why it cannot).
    pub control: Option<Control>,
}

impl Options {
    /// From `--dashboard [ADDR]` (`addr`: its value, empty for none) and
    /// `--dashboard-token`: the address, and a token made where one is
    /// needed and none was given. Errors say which flag and how to fix it.
    pub fn from_flags(addr: &str, token: Option<&str>, lang: Lang) -> Result<Options, String> {
        let checked = token.map_or(Ok(()), access::check_token);
        let addr = match (access::parse_addr(addr), checked) {
            (Ok(a), Ok(())) => a,
            // Every problem at once.
            (Err(a), Err(t)) => return Err(format!("{a}\n{t}")),
            (Err(e), _) | (_, Err(e)) => return Err(e),
        };
        let (token, made) = match token {
            Some(t) => (Some(t.to_string()), false),
            None if access::needs_token(&addr) => (
                Some(access::make_token().map_err(|e| {
                    format!("--dashboard {addr}: cannot make a token ({e}); give one with --dashboard-token")
                })?),
                true,
            ),
            None => (None, false),
        };
        Ok(Options {
            addr,
            token,
            made,
            lang,
            control: None,
        })
    }

    /// With `--dashboard-control`: the page's buttons, and a token made
    /// for the run when none was given, whatever the address (control
    /// always needs one).
    pub fn with_control(mut self, control: Control) -> Result<Options, String> {
        if self.token.is_none() {
            self.token = Some(access::make_token().map_err(|e| {
                format!(
                    "--dashboard-control: cannot make a token ({e}); give one with \
                     --dashboard-token"
                )
            })?);
            self.made = true;
        }
        self.control = Some(control);
        Ok(self)
    }
}

/// The page of a running run.
#[derive(Debug)]
pub struct Page {
    tx: Option<SyncSender<Msg>>,
    /// Rows handed over so far.
    sent: usize,
    addr: SocketAddr,
    token: Option<String>,
    made: bool,
    /// Whether the page steers (`--dashboard-control`).
    steers: bool,
    thread: Option<JoinHandle<()>>,
    /// CPU seconds the observer spent handing rows over.
    observe_cpu_s: f64,
}

impl Page {
    /// Listens and starts serving.
    pub fn start(options: Options, run: Run) -> io::Result<Page> {
        Page::start_with(options, run, LIMITS)
    }

    /// [`Page::start`] with other bounds (tests).
    pub fn start_with(options: Options, run: Run, limits: Limits) -> io::Result<Page> {
        let listener = TcpListener::bind(options.addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        // Control without a token is never served: make sure of one.
        let options = match options.control.clone() {
            Some(c) => options.with_control(c).map_err(io::Error::other)?,
            None => options,
        };
        let server = Server {
            listener,
            addr,
            token: options.token.clone(),
            feed: feed::Feed::new(run, options.lang),
            limits,
            control: options.control.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("yace-dashboard".into())
            .spawn(move || server.run(rx))?;
        Ok(Page {
            tx: Some(tx),
            sent: 0,
            addr,
            token: options.token,
            made: options.made,
            steers: matches!(options.control, Some(Control::On { .. })),
            thread: Some(thread),
            observe_cpu_s: 0.0,
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The page's address, with its token when `with_token`.
    pub fn url(&self, with_token: bool) -> String {
        match &self.token {
            Some(t) if with_token => format!("http://{}/?token={t}", self.addr),
            _ => format!("http://{}/", self.addr),
        }
    }

    /// The line that says where the page is: a token made for the run is
    /// in it (said once, here); a token of the user's own is not.
    pub fn announcement(&self) -> String {
        let everywhere = if self.addr.ip().is_unspecified() {
            " (every interface of this machine)"
        } else {
            ""
        };
        let (mode, can) = if self.steers {
            ("steers the run", "watch and steer")
        } else {
            ("read-only", "watch")
        };
        match (&self.token, self.made) {
            (None, _) => format!(
                "live page at {}{everywhere} while the run lasts ({mode}; this machine only)",
                self.url(false)
            ),
            (Some(_), true) => format!(
                "live page at {}{everywhere} while the run lasts ({mode}; the token was made \
                 for this run: whoever has this address can {can}; --dashboard-token sets your \
                 own)",
                self.url(true)
            ),
            (Some(_), false) => format!(
                "live page at {}?token=<your --dashboard-token>{everywhere} while the run lasts \
                 ({mode})",
                self.url(false)
            ),
        }
    }

    /// Hands the rows not handed over yet to the server (the run's
    /// observer calls this). Never waits: when the channel is full, they
    /// go with the next call.
    pub fn observe(&mut self, rows: &[SecondRow]) {
        let Some(tx) = &self.tx else { return };
        if rows.len() <= self.sent {
            return;
        }
        let t0 = host::thread_cpu_s();
        match tx.try_send(Msg::Rows(rows[self.sent..].to_vec())) {
            Ok(()) => self.sent = rows.len(),
            Err(TrySendError::Full(_)) => {}
            // The server is gone (it panicked): the run goes on without it.
            Err(TrySendError::Disconnected(_)) => self.tx = None,
        }
        self.observe_cpu_s += host::thread_cpu_s() - t0;
    }

    /// What serving the page has cost so far: the CPU seconds of its
    /// server thread and of handing it the rows.
    pub fn cpu_s(&self) -> f64 {
        let server = self.thread.as_ref().and_then(host::thread_cpu_s_of);
        server.unwrap_or(0.0) + self.observe_cpu_s
    }

    /// The run has ended: the page shows its result and hands its readers
    /// the report; returns once they have it (at most
    /// [`Limits::end_grace`], less when no one is reading).
    pub fn finish(mut self, result: &RunResult) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Msg::End(Box::new(result.clone())));
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Page {
    /// Without an end (an error): the server closes its connections.
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
