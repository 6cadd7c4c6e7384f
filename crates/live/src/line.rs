//! The progress as text lines, for where the dashboard is not: one line
//! redrawn in place on a terminal (`--no-tui`), or a plain line every few
//! seconds for a log (a pipe, CI, `TERM=dumb`: no `\r`, no escape codes).

use crate::view::clock;
use crate::watch::per_s;
use stats::SecondRow;
use std::io::Write;

/// Running totals of the rows summed so far: each row is added once, so
/// a day-long run costs no more per second than a minute-long one.
#[derive(Debug, Default)]
struct Totals {
    rows: usize,
    responses: u64,
    errors: u64,
}

impl Totals {
    fn update(&mut self, rows: &[SecondRow]) {
        for r in &rows[self.rows.min(rows.len())..] {
            self.responses += r.responses;
            self.errors += r.errors;
        }
        self.rows = rows.len();
    }
}

/// How many rows are whole seconds before the planned end (the run's
/// tail, a few milliseconds past it, comes last and only then).
fn whole(rows: &[SecondRow], limit_s: f64) -> usize {
    let ok = |r: &&SecondRow| (r.second as f64) < limit_s && r.length_s >= 0.5;
    rows.len() - rows.iter().rev().take_while(|r| !ok(r)).count()
}

/// The line redrawn in place (`\r`, erase to the end of the line).
#[derive(Debug)]
pub struct InPlace {
    shown: usize,
    limit_s: f64,
    totals: Totals,
}

impl InPlace {
    /// For a run planned to last `limit_s` seconds (None: until `-n`).
    pub fn new(limit_s: Option<f64>) -> InPlace {
        InPlace {
            shown: 0,
            limit_s: limit_s.unwrap_or(f64::INFINITY),
            totals: Totals::default(),
        }
    }

    /// Redraws the line for each newly finished second.
    pub fn observe(&mut self, rows: &[SecondRow], mut w: impl Write) {
        if rows.len() == self.shown {
            return;
        }
        self.shown = rows.len();
        self.totals.update(rows);
        let (total, errors) = (self.totals.responses, self.totals.errors);
        // The newest row, but not the few milliseconds past the planned
        // end (the run's tail): its rate would read as a collapse.
        if let Some(r) = rows.iter().rev().find(|r| (r.second as f64) < self.limit_s) {
            let _ = write!(
                w,
                "\r\x1b[K  {:>4.0}s  {:>10} req/s  p50 {}  p99 {}  responses {}  errors {}",
                // The end of the row's span, never past the planned duration:
                // the short tail second of a 3 s run ends at 3 s, not "4s".
                (r.second as f64 + r.length_s).min(self.limit_s),
                report::count(r.responses),
                report::duration_us(r.latency_p50_us),
                report::duration_us(r.latency_p99_us),
                report::count(total),
                report::count(errors),
            );
            let _ = w.flush();
        }
    }

    /// Erases the line, before the summary.
    pub fn clear(&self, mut w: impl Write) {
        if self.shown > 0 {
            let _ = write!(w, "\r\x1b[K");
            let _ = w.flush();
        }
    }
}

/// A plain line every few seconds: every 2 s for the first 10 s (a short
/// run shows some), then every 10 s (an hour writes 360 lines).
#[derive(Debug)]
pub struct Log {
    /// The next line is due when a row ends at or after this second.
    next_s: f64,
    /// Rows seen at the last call.
    seen: usize,
    /// Rows already summed into a line.
    shown: usize,
    totals: Totals,
    limit_s: f64,
    duration_s: Option<f64>,
    requests: Option<u64>,
}

/// When the line after one at `s` seconds is due.
fn next_mark(s: f64) -> f64 {
    if s < 10.0 {
        s + 2.0
    } else {
        s + 10.0
    }
}

impl Log {
    pub fn new(duration_s: Option<f64>, requests: Option<u64>) -> Log {
        Log {
            next_s: next_mark(0.0),
            seen: 0,
            shown: 0,
            totals: Totals::default(),
            limit_s: duration_s.unwrap_or(f64::INFINITY),
            duration_s,
            requests,
        }
    }

    /// Writes a line when the rows have reached the next mark.
    pub fn observe(&mut self, rows: &[SecondRow], mut w: impl Write) {
        if rows.len() == self.seen {
            return;
        }
        self.seen = rows.len();
        // Whole seconds before the planned end only (not the run's tail).
        let whole = whole(rows, self.limit_s);
        let Some(last) = rows[..whole].last() else {
            return;
        };
        let end = last.second as f64 + last.length_s;
        if end + 1e-9 < self.next_s {
            return;
        }
        while self.next_s <= end + 1e-9 {
            self.next_s = next_mark(self.next_s);
        }
        // The rate over the seconds since the last line.
        let since = &rows[self.shown.min(whole)..whole];
        self.shown = whole;
        let (n, len) = since
            .iter()
            .fold((0, 0.0), |(n, l), r| (n + r.responses, l + r.length_s));
        let rate = if len > 0.0 { n as f64 / len } else { 0.0 };
        self.totals.update(&rows[..whole]);
        let (total, errors) = (self.totals.responses, self.totals.errors);
        let at = match (self.duration_s, self.requests) {
            (Some(d), _) => format!("{}/{}", clock(end), clock(d)),
            (None, Some(n)) => format!(
                "{} ({} of {} requests)",
                clock(end),
                report::count(total + errors),
                report::count(n)
            ),
            (None, None) => clock(end),
        };
        let _ = writeln!(
            w,
            "progress {at}: {} responses/s, p50 {}, p99 {} (last second); {} responses, {} errors{}",
            report::count(rate.round() as u64),
            report::duration_us(last.latency_p50_us),
            report::duration_us(last.latency_p99_us),
            report::count(total),
            report::count(errors),
            if last.dropped > 0 {
                format!(", {}/s dropped", report::count(per_s(last.dropped, last).round() as u64))
            } else {
                String::new()
            }
        );
        let _ = w.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::tests::row;

    #[test]
    fn log_lines_come_every_two_seconds_then_every_ten_without_escapes() {
        let mut log = Log::new(Some(30.0), None);
        let mut out = Vec::new();
        let mut rows = Vec::new();
        for s in 0..30 {
            rows.push(row(s, 100 + s, 0));
            log.observe(&rows, &mut out);
        }
        // The tail past the end adds nothing.
        let mut tail = row(30, 1, 0);
        tail.length_s = 0.003;
        rows.push(tail);
        log.observe(&rows, &mut out);
        let text = String::from_utf8(out).unwrap();
        let at: Vec<&str> = text.lines().map(|l| l.split(':').next().unwrap()).collect();
        assert_eq!(
            at,
            [
                "progress 2s/30s",
                "progress 4s/30s",
                "progress 6s/30s",
                "progress 8s/30s",
                "progress 10s/30s",
                "progress 20s/30s",
                "progress 30s/30s"
            ],
            "{text}"
        );
        assert!(!text.contains('\r') && !text.contains('\x1b'), "{text:?}");
        // Seconds 2 and 3 (102 and 103 responses): the rate since the last line.
        let second = text.lines().nth(1).unwrap();
        assert!(second.contains(": 103 responses/s"), "{second}");
        assert!(text.lines().last().unwrap().contains("responses, 0 errors"));
    }

    #[test]
    fn a_run_by_count_says_how_many_of_its_requests() {
        let mut log = Log::new(None, Some(1000));
        let mut out = Vec::new();
        log.observe(&[row(0, 100, 0), row(1, 100, 2)], &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("progress 2s (202 of 1,000 requests):"),
            "{text}"
        );
    }

    #[test]
    fn the_line_in_place_never_runs_past_the_planned_end() {
        let mut line = InPlace::new(Some(2.0));
        let mut out = Vec::new();
        let mut tail = row(2, 1, 0);
        tail.length_s = 0.004;
        line.observe(&[row(0, 100, 0), row(1, 100, 0), tail], &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("\r\x1b[K     2s         100 req/s"),
            "{text:?}"
        );
    }
}
