//! What a key does, as a pure state machine: a key (and the time it was
//! pressed) in, an [`Action`] out. The terminal side carries the actions
//! out. Steering the open model's rate: `+`/`-` (10% up or down), `p`
//! (pause, and again to resume) and `r` then a rate and Enter; the same
//! keys steer the number of virtual users (or closed-model connections),
//! `r` then a number of users.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use stats::Marker;

/// Longest note kept on a marker, in characters.
pub const NOTE_MAX: usize = 120;

/// What a key asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Nothing (an unbound key).
    None,
    /// The screen changed (a note being typed): draw it.
    Redraw,
    /// End the run and write the result (`q`, Ctrl-C).
    Stop,
    /// Record this marker.
    Mark(Marker),
    /// Steer the open model's rate.
    Steer(Steer),
}

/// A steering key's request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Steer {
    /// 10% more (`+`).
    Faster,
    /// 10% less (`-`).
    Slower,
    /// Pause new requests, or resume them (`p`).
    Pause,
    /// This many requests per second, or this many users (`r`, a number,
    /// Enter).
    Rate(f64),
}

/// A marker whose note is being typed.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    /// When `m` was pressed: the moment marked.
    pub at_s: f64,
    pub note: String,
}

/// The keys' state: typing a note, a rate, or neither.
#[derive(Debug, Clone, Default)]
pub struct Keys {
    draft: Option<Draft>,
    /// A rate being typed after `r`.
    rate: Option<String>,
    /// The steering keys do something (the open model).
    pub steerable: bool,
    /// They steer the number of users, not the rate.
    pub users: bool,
}

impl Keys {
    /// The note being typed, if any.
    pub fn draft(&self) -> Option<&Draft> {
        self.draft.as_ref()
    }

    /// Keys with the steering keys bound, or not.
    pub fn steering(steerable: bool) -> Keys {
        Keys {
            steerable,
            ..Keys::default()
        }
    }

    /// The keys steer the number of users (`users`), not the rate.
    pub fn in_users(self, users: bool) -> Keys {
        Keys { users, ..self }
    }

    /// The rate being typed, if any.
    pub fn rate(&self) -> Option<&str> {
        self.rate.as_deref()
    }

    /// Handles a key pressed at `now_s` seconds into the run.
    pub fn press(&mut self, key: KeyEvent, now_s: f64) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        // In raw mode Ctrl-C is a key, not SIGINT: it stops, whatever else
        // is going on (a note being typed is dropped).
        if ctrl && matches!(key.code, KeyCode::Char('c' | 'C')) {
            self.draft = None;
            self.rate = None;
            return Action::Stop;
        }
        if let Some(r) = &mut self.rate {
            return match key.code {
                KeyCode::Enter => {
                    let text = self.rate.take().unwrap_or_default();
                    match text.trim().parse::<f64>() {
                        Ok(v) if v.is_finite() && v >= 0.0 => Action::Steer(Steer::Rate(v)),
                        _ => Action::Redraw,
                    }
                }
                KeyCode::Esc => {
                    self.rate = None;
                    Action::Redraw
                }
                KeyCode::Backspace => {
                    r.pop();
                    Action::Redraw
                }
                KeyCode::Char(c) if c.is_ascii_digit() || c == '.' => {
                    if r.len() < 12 {
                        r.push(c);
                    }
                    Action::Redraw
                }
                _ => Action::None,
            };
        }
        if let Some(d) = &mut self.draft {
            return match key.code {
                KeyCode::Enter => {
                    let d = self.draft.take().expect("a draft");
                    Action::Mark(Marker {
                        at_s: (d.at_s * 1000.0).round() / 1000.0,
                        note: d.note.trim().to_string(),
                    })
                }
                KeyCode::Esc => {
                    self.draft = None;
                    Action::Redraw
                }
                KeyCode::Backspace => {
                    d.note.pop();
                    Action::Redraw
                }
                KeyCode::Char(c) if !ctrl && !c.is_control() => {
                    if d.note.chars().count() < NOTE_MAX {
                        d.note.push(c);
                    }
                    Action::Redraw
                }
                _ => Action::None,
            };
        }
        if ctrl {
            return Action::None;
        }
        match key.code {
            KeyCode::Char('q' | 'Q') => Action::Stop,
            KeyCode::Char('+' | '=') if self.steerable => Action::Steer(Steer::Faster),
            KeyCode::Char('-' | '_') if self.steerable => Action::Steer(Steer::Slower),
            KeyCode::Char('p' | 'P') if self.steerable => Action::Steer(Steer::Pause),
            KeyCode::Char('r' | 'R') if self.steerable => {
                self.rate = Some(String::new());
                Action::Redraw
            }
            KeyCode::Char('m' | 'M') => {
                self.draft = Some(Draft {
                    at_s: now_s.max(0.0),
                    note: String::new(),
                });
                Action::Redraw
            }
            _ => Action::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    fn typed(k: &mut Keys, text: &str, at: f64) -> Vec<Action> {
        text.chars()
            .map(|c| k.press(key(KeyCode::Char(c)), at))
            .collect()
    }

    #[test]
    fn steering_keys_only_where_the_rate_can_be_steered() {
        let mut k = Keys::default();
        assert_eq!(k.press(key(KeyCode::Char('+')), 1.0), Action::None);
        k.steerable = true;
        assert_eq!(
            k.press(key(KeyCode::Char('+')), 1.0),
            Action::Steer(Steer::Faster)
        );
        assert_eq!(
            k.press(key(KeyCode::Char('-')), 1.0),
            Action::Steer(Steer::Slower)
        );
        assert_eq!(
            k.press(key(KeyCode::Char('p')), 1.0),
            Action::Steer(Steer::Pause)
        );
        assert_eq!(k.press(key(KeyCode::Char('r')), 1.0), Action::Redraw);
        typed(&mut k, "2x5", 1.0);
        assert_eq!(k.rate(), Some("25"));
        assert_eq!(
            k.press(key(KeyCode::Enter), 1.0),
            Action::Steer(Steer::Rate(25.0))
        );
        assert_eq!(k.rate(), None);
        // Esc drops a typed rate.
        k.press(key(KeyCode::Char('r')), 1.0);
        typed(&mut k, "9", 1.0);
        assert_eq!(k.press(key(KeyCode::Esc), 1.0), Action::Redraw);
        assert_eq!(k.rate(), None);
    }

    #[test]
    fn q_and_ctrl_c_stop() {
        let mut k = Keys::default();
        assert_eq!(k.press(key(KeyCode::Char('q')), 1.0), Action::Stop);
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(k.press(ctrl_c, 1.0), Action::Stop);
        // Even while a note is typed; the note is dropped.
        k.press(key(KeyCode::Char('m')), 1.0);
        assert_eq!(k.press(ctrl_c, 2.0), Action::Stop);
        assert!(k.draft().is_none());
        assert_eq!(k.press(key(KeyCode::Char('x')), 1.0), Action::None);
    }

    #[test]
    fn m_then_a_note_then_enter_marks_the_moment_m_was_pressed() {
        let mut k = Keys::default();
        assert_eq!(k.press(key(KeyCode::Char('m')), 2.5004), Action::Redraw);
        // q is text while typing, not a stop.
        typed(&mut k, "php-fpm restartedq", 3.0);
        k.press(key(KeyCode::Backspace), 3.1);
        assert_eq!(k.draft().unwrap().note, "php-fpm restarted");
        assert_eq!(
            k.press(key(KeyCode::Enter), 4.0),
            Action::Mark(Marker {
                at_s: 2.5,
                note: "php-fpm restarted".into()
            })
        );
        assert!(k.draft().is_none());
        // Enter at once: a marker without a note.
        k.press(key(KeyCode::Char('m')), 5.0);
        assert_eq!(
            k.press(key(KeyCode::Enter), 5.0),
            Action::Mark(Marker {
                at_s: 5.0,
                note: String::new()
            })
        );
    }

    #[test]
    fn esc_cancels_and_notes_stay_one_bounded_line() {
        let mut k = Keys::default();
        k.press(key(KeyCode::Char('m')), 1.0);
        typed(&mut k, "nothing", 1.0);
        assert_eq!(k.press(key(KeyCode::Esc), 1.0), Action::Redraw);
        assert!(k.draft().is_none());
        k.press(key(KeyCode::Char('m')), 1.0);
        typed(&mut k, &"x".repeat(NOTE_MAX + 10), 1.0);
        k.press(key(KeyCode::Char('\t')), 1.0);
        assert_eq!(k.draft().unwrap().note.chars().count(), NOTE_MAX);
    }
}
