//! Taking the terminal over for a full-screen view, and giving it back:
//! one home for the run's dashboard and the lab's and find-max's view.
//! The terminal goes back — main screen, cooked mode, cursor shown — when
//! the view ends, when it is dropped (an error on the way out), and on a
//! panic (a hook set once).

use crossterm::{cursor, execute, terminal};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use std::io::{self, BufWriter, Stderr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

/// The full-screen terminal a view draws on (stderr, buffered).
pub(crate) type Term = Terminal<CrosstermBackend<BufWriter<Stderr>>>;

/// The terminal is in a view's state (raw, alternate screen): what the
/// panic hook and `Drop` undo, once.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// Puts the terminal back, if a view had it.
pub(crate) fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let mut e = io::stderr();
        let _ = execute!(e, terminal::LeaveAlternateScreen, cursor::Show);
        let _ = terminal::disable_raw_mode();
    }
}

/// Takes the terminal (stderr) over: raw mode, the alternate screen,
/// cleared. Fails, leaving the terminal as it was, when it has no size or
/// cannot be put in raw mode.
pub(crate) fn enter() -> io::Result<Term> {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
    // A pseudo-terminal nobody sized (0×0) would show nothing.
    let (width, height) = terminal::size()?;
    if width == 0 || height == 0 {
        return Err(io::Error::other("the terminal has no size (0×0)"));
    }
    terminal::enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let started = (|| {
        let mut w = BufWriter::with_capacity(64 * 1024, io::stderr());
        // Cleared here: ratatui's own clear asks the terminal where its
        // cursor is, and a terminal that does not answer costs seconds.
        execute!(
            w,
            terminal::EnterAlternateScreen,
            cursor::Hide,
            terminal::Clear(terminal::ClearType::All)
        )?;
        Terminal::new(CrosstermBackend::new(w))
    })();
    started.inspect_err(|_| restore())
}
